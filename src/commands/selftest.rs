//! `selftest`: every check fails before and passes after the reference solution, every shortcut fails, on a fresh simulator or a named cluster.

use std::{
    io::Write,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use super::{Error, Result, runtime, say, temp_sim::TempSimulator};
use crate::{
    engine::{
        self,
        selftest::{End, Shell, ShellOutput},
    },
    exit::{self, HasExitCode},
    lab, msg,
    session::{ClusterTarget, LabSource, Lang, Session},
    sim::server::checkpoint,
    tr,
};

/// What `selftest` is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The lab id.
    pub lab: String,
    /// The variant to test, or `all` (default: every variant).
    pub variant: Option<String>,
    /// Where it runs.
    pub cluster: Where,
    /// The fresh simulator's delays pass this many times faster (finite and above 0).
    pub speed: f64,
    /// Manifests applied before the selftest, as a platform team would have (`--fixture DIR`).
    pub fixture: Option<PathBuf>,
}

/// The cluster a selftest runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// A fresh embedded simulator, stopped afterwards (the default).
    FreshSimulator,
    /// The session's cluster, named with `--context` or a `--kubeconfig` other than
    /// `$KUBECONFIG` (a variable left set from daily work must not send a selftest, which resets
    /// the lab, to that cluster).
    Named,
}

/// The simulator's whole-store checkpoints (`sim::server::checkpoint`), reached through the
/// cluster's own client: `selftest` restores the state before a task's solution after each
/// shortcut in one request instead of a fresh start.
struct SimCheckpoints {
    /// How long a shortcut is given before the second look.
    second_look: Duration,
}

/// Simulated time a shortcut is given before the second look: past the kubelet's and the
/// controllers' reactions (a status written back on the next sync, a pod recreated, an image
/// pull backing off), which take seconds on a real cluster.
const SIMULATED_SECOND_LOOK: Duration = Duration::from_secs(120);

/// The shortest real wait for the second look, whatever the speed (requests and kubectl take
/// real time).
const LEAST_SECOND_LOOK: Duration = Duration::from_millis(250);

impl SimCheckpoints {
    async fn post(cluster: &engine::cluster::Cluster, path: String) -> Result<(), engine::Error> {
        let request =
            hyper::Request::post(&path).header("Content-Type", "application/json").body(Vec::new()).map_err(
                |e| engine::Error::BadInput(msg!("demo-post-invalid", path = &path, reason = e.to_string())),
            )?;
        cluster
            .client
            .request_text(request)
            .await
            .map_err(|e| engine::Error::api(msg!("action-post", path = &path), &e))?;
        Ok(())
    }
}

impl engine::selftest::Checkpoints for SimCheckpoints {
    fn save<'a>(
        &'a self,
        cluster: &'a engine::cluster::Cluster,
        name: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), engine::Error>> {
        Box::pin(SimCheckpoints::post(cluster, format!("{}/{name}", checkpoint::PREFIX)))
    }

    fn restore<'a>(
        &'a self,
        cluster: &'a engine::cluster::Cluster,
        name: &'a str,
    ) -> futures::future::BoxFuture<'a, Result<(), engine::Error>> {
        Box::pin(SimCheckpoints::post(cluster, format!("{}/{name}/restore", checkpoint::PREFIX)))
    }

    fn second_look(&self) -> Duration {
        self.second_look
    }
}

/// The solution runner for `kubeconfig` (`demo`'s too); bundles read from a directory are passed on
/// (`LAB_RUNNER_LABS`) so `lab-runner answer` in a solution finds the same lab, and so is the
/// language (`LAB_RUNNER_LANG`), so that what it prints reads as the rest of the transcript.
pub(crate) fn solution_shell(
    kubeconfig: Option<&Path>,
    labs: &LabSource,
    output: ShellOutput,
    lang: Lang,
) -> Shell {
    let code = match lang {
        Lang::En => "en",
        Lang::Ja => "ja",
    };
    let shell = Shell::new(kubeconfig, output).with_env("LAB_RUNNER_LANG", code);
    match labs {
        LabSource::Dir(dir) => {
            let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.clone());
            shell.with_env("LAB_RUNNER_LABS", dir)
        }
        LabSource::BuiltIn => shell,
    }
}

/// Runs `selftest <lab>` for each variant asked: the transcript on stdout, progress on stderr.
/// Exit 0 when every variant passed, 1 naming the offending task and step otherwise, or the
/// engine's code when the cluster failed.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    let (labs, cluster, lang) = (&session.labs, &session.cluster, session.lang);
    let bundle = lab::loader::find(labs, &options.lab)?;
    let variants = engine::selftest::variants_to_test(&bundle.lab, options.variant.as_deref())?;
    let runtime = runtime()?;
    let began = Instant::now();
    let progress = move |step: &str| eprintln!("selftest [{:>6.1}s] {step}", began.elapsed().as_secs_f64());
    let speed = options.speed.to_string();
    let (simulator, target, scratch) = if options.cluster == Where::Named {
        let (target, scratch) = kubeconfig_for_solutions(cluster)?;
        (None, target, scratch)
    } else {
        let simulator = TempSimulator::start(&runtime, "selftest", options.speed, lang)?;
        progress(&tr!(lang, "demo-simulator-at", endpoint = simulator.endpoint(), speed = &speed));
        let target = simulator.target();
        (Some(simulator), target, None)
    };
    if let Some(dir) = &options.fixture {
        let documents = fixture_documents(dir)?;
        runtime.block_on(async {
            let cluster = engine::cluster::connect(&target).await.map_err(engine::Error::from)?;
            engine::apply::apply_documents(&cluster.client, &documents, "fixture").await?;
            Ok::<_, Error>(())
        })?;
        progress(&tr!(
            lang,
            "selftest-fixture-applied",
            count = documents.len(),
            dir = dir.display().to_string()
        ));
    }
    let kubeconfig = scratch.as_ref().map(|s| s.0.clone()).or(target.kubeconfig.clone());
    let shell = solution_shell(kubeconfig.as_deref(), labs, ShellOutput::Capture, lang);
    // The selftest's own simulator serves checkpoints, and its second look is 120 simulated
    // seconds (0.6 s at 200x) rather than 2 real ones. A named cluster is asked: a lab-runner
    // simulator (a container, `sim up`) answers a checkpoint save, at whatever speed it runs, so it
    // gets the real-time second look; any other cluster refuses, and its shortcuts are skipped.
    let sim_checkpoints = if simulator.is_some() {
        Some(SimCheckpoints {
            second_look: SIMULATED_SECOND_LOOK.div_f64(options.speed).max(LEAST_SECOND_LOOK),
        })
    } else {
        runtime.block_on(async {
            let cluster = engine::cluster::connect(&target).await.ok()?;
            let probe = format!("{}/selftest-probe", checkpoint::PREFIX);
            SimCheckpoints::post(&cluster, probe).await.ok()?;
            Some(SimCheckpoints { second_look: engine::selftest::SHORTCUT_SECOND_LOOK })
        })
    };
    let checkpoints = sim_checkpoints.as_ref().map(|c| c as &dyn engine::selftest::Checkpoints);
    let outcome = (|| {
        let mut failed: Option<u8> = None;
        let mut passed = 0;
        for variant in &variants {
            let run = runtime.block_on(async {
                let cluster = engine::cluster::connect(&target).await.map_err(engine::Error::from)?;
                let run = engine::selftest::selftest(
                    &cluster,
                    &bundle,
                    variant.as_deref(),
                    &shell,
                    checkpoints,
                    &progress,
                    lang,
                )
                .await;
                Ok::<_, Error>(run)
            })?;
            say(&run.render(lang))?;
            match run.end {
                End::Passed => passed += 1,
                End::Offence => failed = failed.or(Some(exit::CHECKS_FAILED)),
                End::Failed { error, .. } => failed = failed.or(Some(error.exit_code())),
            }
        }
        if variants.len() > 1 {
            let summary = tr!(
                lang,
                "selftest-variants-passed",
                lab = &bundle.lab.id.value,
                passed = passed,
                count = variants.len()
            );
            say(&format!("{summary}\n"))?;
        }
        Ok::<_, Error>(failed.unwrap_or(exit::OK))
    })();
    if let Some(simulator) = simulator {
        simulator.stop(&runtime, lang);
    }
    outcome
}

/// The documents of every `.yaml` file in `dir`, files in name order (as `kubectl apply -f DIR`).
fn fixture_documents(dir: &std::path::Path) -> Result<Vec<serde_json::Value>> {
    let bad = |path: &std::path::Path, reason: String| {
        let path = path.display().to_string();
        Error::Engine(engine::Error::BadInput(msg!(
            "selftest-fixture-unreadable",
            path = path,
            reason = reason
        )))
    };
    let entries = std::fs::read_dir(dir).map_err(|e| bad(dir, e.to_string()))?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
        .collect();
    files.sort();
    let mut documents = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).map_err(|e| bad(&file, e.to_string()))?;
        let parsed =
            serde_saphyr::from_multiple::<serde_json::Value>(&text).map_err(|e| bad(&file, e.to_string()))?;
        documents.extend(parsed.into_iter().filter(|d| !d.is_null()));
    }
    Ok(documents)
}

/// A kubeconfig written for the solutions of one selftest, removed when dropped.
#[derive(Debug)]
struct ScratchKubeconfig(PathBuf);

impl Drop for ScratchKubeconfig {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The target for a named cluster and, with `--context`, a private kubeconfig whose current
/// context is that one: solutions run plain `kubectl`, which reads only the current context.
fn kubeconfig_for_solutions(cluster: &ClusterTarget) -> Result<(ClusterTarget, Option<ScratchKubeconfig>)> {
    use std::os::unix::fs::OpenOptionsExt;
    let Some(context) = &cluster.context else { return Ok((cluster.clone(), None)) };
    let unreadable = |reason: crate::i18n::Message| {
        Error::Engine(engine::Error::from(engine::cluster::Error::Kubeconfig {
            path: cluster.kubeconfig.as_ref().map(|p| p.display().to_string()),
            reason,
        }))
    };
    // The same checks and errors as connecting: the file named, the known contexts listed.
    let mut config = engine::cluster::read_kubeconfig(cluster).map_err(engine::Error::from)?;
    engine::cluster::require_contexts(cluster, &config, [context]).map_err(engine::Error::from)?;
    config.current_context = Some(context.clone());
    // JSON is YAML, and kubectl reads either; the file is private (0600) as kubeconfigs are.
    let path = std::env::temp_dir().join(format!("lab-runner-selftest-{}.kubeconfig", std::process::id()));
    let scratch = ScratchKubeconfig(path.clone());
    let mut file =
        std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&path)?;
    serde_json::to_writer(&mut file, &config).map_err(|e| unreadable(crate::i18n::outside::cause(&e)))?;
    file.flush()?;
    let target = ClusterTarget { kubeconfig: Some(path), context: Some(context.clone()) };
    Ok((target, Some(scratch)))
}
