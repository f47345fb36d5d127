//! `check`: grade a lab once (or twice apart), live with `--watch`, or over a class's contexts.

use std::{io::Write, time::Duration};

use super::{Error, Format, Result, on_cluster, print, runtime};
use crate::{
    engine::{
        self,
        check::{Help, Observations},
        cluster::Cluster,
    },
    exit, lab, report,
    session::{ClusterTarget, LabSource, Lang, Session},
    tr,
};

/// What `check` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The lab id.
    pub lab: String,
    /// The report's format.
    pub format: Format,
    /// Hints, solutions and descriptions to show.
    pub help: Help,
    /// Once, live, or a class.
    pub mode: Mode,
}

/// How `check` observes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// The session's cluster, once or twice apart (`--confirm`).
    Report(Observations),
    /// The session's cluster, re-graded on every change (`--watch`).
    Watch {
        /// `--timeout`, if given.
        timeout: Option<WatchTimeout>,
    },
    /// Every learner's context of the kubeconfig (`--contexts`).
    Class {
        /// Which contexts.
        contexts: Contexts,
        /// Once or twice apart, in each.
        observations: Observations,
    },
}

/// `check --watch --timeout`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchTimeout {
    /// How long.
    pub after: Duration,
    /// As the user typed it (`10m`), for the line that says it ran out.
    pub typed: String,
}

/// The contexts `check --contexts` grades.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Contexts {
    /// `all`: every context but the read-only viewers'.
    All,
    /// These, each of which the kubeconfig must have.
    Named(Vec<String>),
}

/// `check` as asked.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    let Session { labs, lang, cluster, .. } = session;
    match &options.mode {
        Mode::Report(observations) => {
            let solo = solo_state_dir(cluster);
            on_cluster(cluster, |connected| {
                on(connected, labs, *lang, options, *observations, solo.as_deref())
            })
        }
        Mode::Watch { timeout } => {
            on_cluster(cluster, |connected| watch(connected, labs, *lang, options, timeout.as_ref()))
        }
        Mode::Class { contexts, observations } => {
            class(cluster, labs, *lang, options, contexts, *observations)
        }
    }
}

/// `check` against `cluster`: grade the lab and print the report; exit 1 unless every task passed.
pub async fn on(
    cluster: Cluster,
    labs: &LabSource,
    lang: Lang,
    options: &Options,
    observations: Observations,
    solo: Option<&std::path::Path>,
) -> Result<u8> {
    let bundle = lab::loader::find(labs, &options.lab)?;
    let graded = engine::check::check_graded(&cluster, &bundle, lang, options.help, observations).await?;
    let report = &graded.report;
    engine::hints::record(&cluster, &bundle.lab, &engine::hints::shown(report)).await?;
    record_alone(solo, &cluster.context, &bundle.lab.id.value, &graded);
    print_report(report, options.format, lang)?;
    Ok(if report.passed { exit::OK } else { exit::CHECKS_FAILED })
}

/// The state directory of the `sim up` simulator `target` reaches when its kubeconfig is the
/// one `sim up` wrote there (`--kubeconfig` or `KUBECONFIG`): a learner working alone, whose
/// timeline is kept there (docs/classroom.md, "Alone").
pub fn solo_state_dir(target: &ClusterTarget) -> Option<std::path::PathBuf> {
    let path = target.kubeconfig.clone().or_else(|| {
        let env = std::env::var_os("KUBECONFIG")?;
        std::env::split_paths(&env).next()
    })?;
    let dir = path.parent()?;
    (path.file_name()? == crate::sim::kubeconfig::KUBECONFIG_FILE
        && dir.join(crate::sim::lifecycle::RUN_FILE).exists())
    .then(|| dir.to_path_buf())
}

/// Records what this check saw in the learner's own timeline (`STATE/timeline.db`) as the
/// class's board records a learner's: verdict changes, answers and hint levels new since the
/// last check. Never changes the check: a timeline that cannot be written is said on stderr.
fn record_alone(solo: Option<&std::path::Path>, context: &str, lab: &str, graded: &engine::check::Graded) {
    use crate::class::timeline::{Observed, Recorder};
    let Some(dir) = solo else { return };
    let observed = Observed::of(&graded.report, graded.inventory.as_ref());
    let learner = [context.to_string()];
    let recorded = Recorder::open(dir, lab, &learner)
        .and_then(|mut recorder| recorder.observe(0, &observed, k8s_openapi::jiff::Timestamp::now()));
    if let Err(error) = recorded {
        eprintln!("timeline: {error}");
    }
}

/// A check report on stdout in the chosen format.
fn print_report(report: &report::Report, format: Format, lang: Lang) -> Result<()> {
    match format {
        Format::Human => {
            let mut out = anstream::stdout();
            out.write_all(report::human_in(report, true, lang).as_bytes())?;
            out.flush()?;
        }
        Format::Json => {
            print(&report::json(report)?)?;
        }
        Format::Junit => {
            print(&report::junit(report)?)?;
        }
    }
    Ok(())
}

/// `check --watch`: the live checklist on stderr (redrawn in place on a terminal, a line per
/// change otherwise), then the final report on stdout. Exit 0 when every task passed, 4 at
/// `--timeout`, and on Ctrl-C the final report's code.
async fn watch(
    cluster: Cluster,
    labs: &LabSource,
    lang: Lang,
    options: &Options,
    timeout: Option<&WatchTimeout>,
) -> Result<u8> {
    use std::io::IsTerminal;
    let bundle = lab::loader::find(labs, &options.lab)?;
    let watch_options =
        engine::watch::WatchOptions { timeout: timeout.map(|t| t.after), ..Default::default() };
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminal = std::io::stderr().is_terminal();
    let styled = terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut live =
        terminal.then(|| report::live::Terminal::new(&bundle.lab.id.value, &cluster.context, lang));
    if live.is_none() {
        eprintln!("{}", tr!(lang, "watch-watching", lab = &bundle.lab.id.value, context = &cluster.context));
    }
    let watched =
        engine::watch::watch(&cluster, &bundle, lang, options.help, watch_options, stop, |update| {
            match &mut live {
                Some(terminal) => terminal.draw(update.checklist, &update.reconnecting, styled),
                None => {
                    eprint!(
                        "{}",
                        report::live::change_lines(update.changes, update.checklist, update.elapsed, lang)
                    );
                    for (feed, reason) in &update.reconnecting {
                        eprintln!("{}", tr!(lang, "watch-reconnecting-note", feed = feed, reason = reason));
                    }
                }
            }
        })
        .await;
    if let Some(terminal) = live {
        terminal.finish();
    }
    let watched = watched?;
    let evaluations = crate::msg!("watch-evaluations", count = watched.checklist.evaluations());
    let took = crate::i18n::duration(watched.elapsed);
    let ended = match (&watched.ending, timeout) {
        (engine::watch::Ending::AllPassed, _) => {
            tr!(lang, "watch-ended-all-pass", duration = took, evaluations = evaluations)
        }
        (engine::watch::Ending::TimedOut, Some(timeout)) => tr!(
            lang,
            "watch-ended-timed-out",
            timeout = crate::i18n::duration(timeout.after),
            evaluations = evaluations
        ),
        _ => tr!(lang, "watch-ended-stopped", duration = took, evaluations = evaluations),
    };
    let regressed = watched.checklist.regressed();
    let ended = match regressed.is_empty() {
        true => ended,
        false => tr!(
            lang,
            "watch-ended-regressed",
            ended = ended,
            tasks = regressed.join(&tr!(lang, "list-separator"))
        ),
    };
    eprintln!("{ended}");
    engine::hints::record(&cluster, &bundle.lab, &engine::hints::shown(&watched.report)).await?;
    print_report(&watched.report, options.format, lang)?;
    Ok(match watched.ending {
        engine::watch::Ending::TimedOut => exit::TIMED_OUT,
        _ if watched.report.passed => exit::OK,
        _ => exit::CHECKS_FAILED,
    })
}

/// `check --contexts`: every learner's cluster graded concurrently into one report; a learner
/// whose cluster cannot be reached is an ERROR row, not an abort.
fn class(
    cluster: &ClusterTarget,
    labs: &LabSource,
    lang: Lang,
    options: &Options,
    contexts: &Contexts,
    observations: Observations,
) -> Result<u8> {
    let bundle = lab::loader::find(labs, &options.lab)?;
    // A class is its learners: `all` leaves out the read-only viewer contexts, and a context
    // the kubeconfig does not have is bad input before any cluster is contacted.
    let kubeconfig = engine::cluster::read_kubeconfig(cluster).map_err(engine::Error::from)?;
    let contexts: Vec<String> = match contexts {
        Contexts::All => kubeconfig
            .contexts
            .iter()
            .map(|c| c.name.clone())
            .filter(|name| !crate::class::kubeconfig::is_viewer_context(name))
            .collect(),
        Contexts::Named(named) => {
            engine::cluster::require_contexts(cluster, &kubeconfig, named).map_err(engine::Error::from)?;
            named.clone()
        }
    };
    let help = options.help;
    let outcomes = runtime()?.block_on(futures::future::join_all(contexts.iter().map(|context| {
        let target = ClusterTarget { kubeconfig: cluster.kubeconfig.clone(), context: Some(context.clone()) };
        let bundle = &bundle;
        async move {
            let graded = async {
                let cluster = engine::cluster::connect(&target).await?;
                engine::check::check_with(&cluster, bundle, lang, help, observations).await
            };
            (context.clone(), graded.await.map_err(|e| Error::from(e).message(lang)))
        }
    })));
    let class = report::ClassReport::new(&options.lab, outcomes);
    match options.format {
        Format::Human => {
            let mut out = anstream::stdout();
            out.write_all(report::class_human(&class, true, lang).as_bytes())?;
            out.flush()?;
        }
        Format::Json => {
            print(&(serde_json::to_string_pretty(&class).map_err(report::Error::from)? + "\n"))?;
        }
        Format::Junit => {
            print(&report::class_junit(&class)?)?;
        }
    }
    Ok(if class.passed { exit::OK } else { exit::CHECKS_FAILED })
}
