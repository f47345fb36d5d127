//! `demo` and `selftest`: a lab end to end, by default on a fresh embedded simulator that is stopped afterwards.
//!
//! The CLI starts the simulator (DESIGN §2.1: the engine never imports it) and hands the engine
//! the simulator's kubeconfig, exactly as it would any other cluster's. Both commands share the
//! temporary simulator ([`TempSimulator`]) and the solution runner ([`Shell`]).

use std::{
    io::Write,
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use crate::{
    cli::{self, CheckArgs, DemoArgs, Format, SelftestArgs, StartArgs, StatusArgs},
    engine::{
        self,
        selftest::{End, Shell, ShellOutput},
    },
    exit,
    i18n::{Localized, Message},
    lab, msg, run,
    session::{ClusterTarget, LabSource, Lang},
    sim::{
        kubeconfig::KUBECONFIG_FILE,
        lifecycle::{self, ControlPlane, ServeOptions, TopologySource},
        server::checkpoint,
    },
    tr,
};

/// Simulated delays (image pulls, readiness) pass this many times faster in a demo, slow enough
/// to watch.
const DEMO_SPEED: f64 = 10.0;

/// A simulator in a temporary state directory, stopped by [`TempSimulator::stop`] or by a
/// Ctrl-C/SIGTERM (the process then exits 130), so no background server outlives the command.
#[derive(Debug)]
pub struct TempSimulator {
    state_dir: PathBuf,
    endpoint: String,
}

impl TempSimulator {
    /// Starts one (`purpose` names its state directory) with delays `speed` times faster; an
    /// interruption is reported in `lang`.
    pub fn start(
        runtime: &tokio::runtime::Runtime,
        purpose: &str,
        speed: f64,
        lang: Lang,
    ) -> Result<TempSimulator, run::Error> {
        let state_dir = std::env::temp_dir().join(format!("lab-runner-{purpose}-{}", std::process::id()));
        let options = ServeOptions {
            state_dir: state_dir.clone(),
            topology: TopologySource::BuiltIn,
            listen: lifecycle::DEFAULT_LISTEN,
            tls_sans: Vec::new(),
            speed,
            control_plane: ControlPlane::Running,
            verbosity: 0,
        };
        let started = runtime.block_on(lifecycle::up(&options))?;
        stop_on_signal(runtime, &state_dir, purpose, lang);
        Ok(TempSimulator { state_dir, endpoint: started.record.endpoint })
    }

    /// `https://127.0.0.1:PORT`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Its admin kubeconfig.
    pub fn kubeconfig(&self) -> PathBuf {
        self.state_dir.join(KUBECONFIG_FILE)
    }

    /// The cluster target engine commands connect to.
    pub fn target(&self) -> ClusterTarget {
        ClusterTarget { kubeconfig: Some(self.kubeconfig()), context: None }
    }

    /// Stops it and removes its state; a failure to stop is a warning (in `lang`), so it cannot
    /// hide the outcome of the command that used it.
    pub fn stop(self, runtime: &tokio::runtime::Runtime, lang: Lang) {
        if let Some(warning) = runtime.block_on(stop_simulator(&self.state_dir)) {
            eprintln!("{}", tr!(lang, "warning-line", message = warning));
        }
    }
}

/// `sim down` for a temporary simulator, then its state removed. A server still alive after
/// `down` gave up on it (SIGTERM not honoured in time) is killed: a temporary simulator must not
/// outlive its command. Returns a warning to print, if any.
async fn stop_simulator(state_dir: &Path) -> Option<Message> {
    let pid = match lifecycle::pid_state(state_dir) {
        Ok(lifecycle::PidState::Running(pid)) => Some(pid),
        _ => None,
    };
    let warning = match lifecycle::down(state_dir).await {
        Ok(_) => None,
        Err(error) => match pid.filter(|pid| lifecycle::process_alive(*pid)) {
            Some(pid) => {
                let killed = i32::try_from(pid)
                    .ok()
                    .and_then(rustix::process::Pid::from_raw)
                    .map(|raw| rustix::process::kill_process(raw, rustix::process::Signal::KILL));
                match killed {
                    Some(Ok(())) => Some(msg!("demo-simulator-killed", reason = error.to_string())),
                    _ => Some(msg!("demo-simulator-not-stopped-pid", pid = pid, reason = error.to_string())),
                }
            }
            None => Some(msg!("demo-simulator-not-stopped", reason = error.to_string())),
        },
    };
    let _ = std::fs::remove_dir_all(state_dir);
    warning
}

/// A Ctrl-C or SIGTERM stops the simulator before the process exits, so an interrupted command
/// leaves no background server behind.
fn stop_on_signal(runtime: &tokio::runtime::Runtime, state_dir: &Path, purpose: &str, lang: Lang) {
    use tokio::signal::unix::{SignalKind, signal};
    let state_dir = state_dir.to_path_buf();
    let purpose = purpose.to_string();
    runtime.spawn(async move {
        let (Ok(mut interrupt), Ok(mut terminate)) =
            (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
        else {
            return;
        };
        tokio::select! {
            _ = interrupt.recv() => {}
            _ = terminate.recv() => {}
        }
        if let Some(warning) = stop_simulator(&state_dir).await {
            eprintln!("{}", tr!(lang, "warning-line", message = warning));
        }
        eprintln!("{}", tr!(lang, "demo-interrupted", command = &purpose));
        std::process::exit(130);
    });
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

fn runtime() -> Result<tokio::runtime::Runtime, run::Error> {
    Ok(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?)
}

/// Runs `demo <lab>`: returns the exit code of the final `check` (0 when the reference solution
/// passes every task).
pub fn demo(labs: &LabSource, lang: Lang, args: &DemoArgs) -> Result<u8, run::Error> {
    let bundle = lab::loader::find(labs, &args.lab)?;
    let runtime = runtime()?;
    let simulator = TempSimulator::start(&runtime, "demo", DEMO_SPEED, lang)?;
    let at = tr!(lang, "demo-simulator-at", endpoint = simulator.endpoint(), speed = DEMO_SPEED.to_string());
    say(&format!("== {at}\n"))?;
    let outcome = run_lab(&runtime, labs, lang, args, &bundle, &simulator);
    simulator.stop(&runtime, lang);
    outcome
}

fn run_lab(
    runtime: &tokio::runtime::Runtime,
    labs: &LabSource,
    lang: Lang,
    args: &DemoArgs,
    bundle: &lab::loader::Bundle,
    simulator: &TempSimulator,
) -> Result<u8, run::Error> {
    let target = simulator.target();
    let id = bundle.lab.id.value.clone();
    let connect = || async {
        crate::engine::cluster::connect(&target)
            .await
            .map_err(crate::engine::Error::from)
            .map_err(run::Error::from)
    };

    say(&format!("== lab-runner start {id}\n"))?;
    let start_args =
        StartArgs { lab: id.clone(), variant: args.variant.clone(), seed: None, reveal: true, yes: true };
    runtime.block_on(async { run::start(connect().await?, labs, lang, &start_args).await })?;

    say(&format!("== lab-runner status {id}\n"))?;
    let status_args = StatusArgs { lab: Some(id.clone()), daemonset: None, instructor: false };
    runtime.block_on(async { run::status(connect().await?, labs, lang, &status_args).await })?;

    say(&format!("== {}\n", tr!(lang, "demo-reference-solution")))?;
    let shell = shell_for(Some(&simulator.kubeconfig()), labs, ShellOutput::Echo, lang);
    for task in bundle.lab.tasks_in_needs_order() {
        say(&format!("-- {}: {}\n", task.id.value, task.title.get(lang)))?;
        for command in &task.solution {
            say(&format!("$ {command}\n"))?;
            let on_stderr = |line: String| eprintln!("{line}");
            let ran = runtime.block_on(run_showing_elapsed(&shell, command, lang, ELAPSED_EVERY, &on_stderr));
            if ran.exit != engine::selftest::CommandExit::Success {
                say(&format!("[{}]\n", ran.exit.message().render(lang)))?;
            }
        }
    }

    say(&format!("== lab-runner check {id}\n"))?;
    let check_args = CheckArgs {
        lab: id,
        format: Format::Human,
        hint: None,
        reveal: false,
        details: false,
        confirm: None,
        watch: false,
        timeout: None,
        contexts: Vec::new(),
    };
    runtime.block_on(async {
        run::check(connect().await?, labs, lang, &check_args, cli::CheckDurations::default()).await
    })
}

/// How often a solution command that is still running says how long it has run.
const ELAPSED_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs one solution command; one that takes long (the ci-wait step waits for a rollout that
/// never finishes) says through `say`, every `every`, how long it has run, so the demo is not
/// silent, and when it ends after that, how long it took.
async fn run_showing_elapsed(
    shell: &Shell,
    command: &str,
    lang: Lang,
    every: std::time::Duration,
    say: &dyn Fn(String),
) -> engine::selftest::CommandRun {
    let began = tokio::time::Instant::now();
    let run = shell.run(command);
    tokio::pin!(run);
    let mut ticks = tokio::time::interval_at(began + every, every);
    loop {
        tokio::select! {
            ran = &mut run => {
                if began.elapsed() >= every {
                    say(tr!(lang, "demo-command-took", seconds = began.elapsed().as_secs()));
                }
                return ran;
            }
            _ = ticks.tick() => {
                say(tr!(lang, "demo-command-running", seconds = began.elapsed().as_secs()));
            }
        }
    }
}

/// The solution runner for `kubeconfig`; bundles read from a directory are passed on
/// (`LAB_RUNNER_LABS`) so `lab-runner answer` in a solution finds the same lab, and so is the
/// language (`LAB_RUNNER_LANG`), so that what it prints reads as the rest of the transcript.
fn shell_for(kubeconfig: Option<&Path>, labs: &LabSource, output: ShellOutput, lang: Lang) -> Shell {
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

/// Whether the user named a cluster for `selftest`: `--context`, or a `--kubeconfig` other than
/// `$KUBECONFIG` (clap fills the flag from the variable, and a variable left set from daily work
/// must not send a selftest, which resets the lab, to that cluster).
fn names_a_cluster(cluster: &ClusterTarget) -> bool {
    let from_env = std::env::var_os("KUBECONFIG");
    cluster.context.is_some()
        || cluster.kubeconfig.as_ref().is_some_and(|path| Some(path.as_os_str()) != from_env.as_deref())
}

/// Runs `selftest <lab>` for each variant asked: the transcript on stdout, progress on stderr.
/// Exit 0 when every variant passed, 1 naming the offending task and step otherwise, or the
/// engine's code when the cluster failed.
pub fn selftest(
    labs: &LabSource,
    cluster: &ClusterTarget,
    lang: Lang,
    args: &SelftestArgs,
) -> Result<u8, run::Error> {
    let bundle = lab::loader::find(labs, &args.lab)?;
    let variants = engine::selftest::variants_to_test(&bundle.lab, args.variant.as_deref())?;
    if !(args.speed.is_finite() && args.speed > 0.0) {
        let text = msg!("selftest-bad-speed", speed = args.speed.to_string());
        return Err(run::Error::Engine(engine::Error::BadInput(text)));
    }
    let runtime = runtime()?;
    let began = Instant::now();
    let progress = move |step: &str| eprintln!("selftest [{:>6.1}s] {step}", began.elapsed().as_secs_f64());
    let speed = args.speed.to_string();
    let (simulator, target, scratch) = if names_a_cluster(cluster) {
        let (target, scratch) = kubeconfig_for_solutions(cluster)?;
        (None, target, scratch)
    } else {
        let simulator = TempSimulator::start(&runtime, "selftest", args.speed, lang)?;
        progress(&tr!(lang, "demo-simulator-at", endpoint = simulator.endpoint(), speed = &speed));
        let target = simulator.target();
        (Some(simulator), target, None)
    };
    if let Some(dir) = &args.fixture {
        let documents = fixture_documents(dir)?;
        runtime.block_on(async {
            let cluster = engine::cluster::connect(&target).await.map_err(engine::Error::from)?;
            engine::apply::apply_documents(&cluster.client, &documents, "fixture").await?;
            Ok::<_, run::Error>(())
        })?;
        progress(&tr!(
            lang,
            "selftest-fixture-applied",
            count = documents.len(),
            dir = dir.display().to_string()
        ));
    }
    let kubeconfig = scratch.as_ref().map(|s| s.0.clone()).or(target.kubeconfig.clone());
    let shell = shell_for(kubeconfig.as_deref(), labs, ShellOutput::Capture, lang);
    // The selftest's own simulator serves checkpoints, and its second look is 120 simulated
    // seconds (0.6 s at 200x) rather than 2 real ones. A named cluster is asked: a lab-runner
    // simulator (a container, `sim up`) answers a checkpoint save, at whatever speed it runs, so it
    // gets the real-time second look; any other cluster refuses, and its shortcuts are skipped.
    let sim_checkpoints = if simulator.is_some() {
        Some(SimCheckpoints { second_look: SIMULATED_SECOND_LOOK.div_f64(args.speed).max(LEAST_SECOND_LOOK) })
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
                Ok::<_, run::Error>(run)
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
        Ok::<_, run::Error>(failed.unwrap_or(exit::OK))
    })();
    if let Some(simulator) = simulator {
        simulator.stop(&runtime, lang);
    }
    outcome
}

/// The documents of every `.yaml` file in `dir`, files in name order (as `kubectl apply -f DIR`).
fn fixture_documents(dir: &std::path::Path) -> Result<Vec<serde_json::Value>, run::Error> {
    let bad = |path: &std::path::Path, reason: String| {
        let path = path.display().to_string();
        run::Error::Engine(engine::Error::BadInput(msg!(
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
fn kubeconfig_for_solutions(
    cluster: &ClusterTarget,
) -> Result<(ClusterTarget, Option<ScratchKubeconfig>), run::Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let Some(context) = &cluster.context else { return Ok((cluster.clone(), None)) };
    let unreadable = |reason: String| {
        run::Error::Engine(engine::Error::from(engine::cluster::Error::Kubeconfig {
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
    serde_json::to_writer(&mut file, &config).map_err(|e| unreadable(e.to_string()))?;
    file.flush()?;
    let target = ClusterTarget { kubeconfig: Some(path), context: Some(context.clone()) };
    Ok((target, Some(scratch)))
}

fn say(text: &str) -> Result<(), run::Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::{sync::Mutex, time::Duration};

    use super::*;

    /// A command that outlasts the interval is reported while it runs and when it ends; a quick
    /// one says nothing.
    #[tokio::test]
    async fn a_long_solution_command_says_how_long_it_has_run() {
        let shell = Shell::new(None, ShellOutput::Capture);
        let said = Mutex::new(Vec::new());
        let say = |line: String| said.lock().unwrap().push(line);
        let every = Duration::from_millis(100);
        let ran = run_showing_elapsed(&shell, "sleep 0.35", Lang::En, every, &say).await;
        assert_eq!(ran.exit, engine::selftest::CommandExit::Success);
        let lines = said.lock().unwrap().clone();
        let running = lines.iter().filter(|l| l.starts_with("… still running after")).count();
        assert!(running >= 2, "{lines:?}");
        assert_eq!(lines.last().map(String::as_str), Some("… it took 0s"), "{lines:?}");
        said.lock().unwrap().clear();
        run_showing_elapsed(&shell, "true", Lang::Ja, every, &say).await;
        assert!(said.lock().unwrap().is_empty());
    }
}
