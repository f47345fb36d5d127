//! `sim up|serve|down|status|kubeconfig`: the embedded simulator's lifecycle, and what it prints.

use std::{
    path::{Path, PathBuf},
    time::Duration,
};

use crate::{
    exit,
    session::{Lang, Session},
    sim::{
        kubeconfig,
        lifecycle::{self, Error, ServeOptions},
    },
    tr,
};

/// What `sim` is asked; every state directory is resolved (`--state-dir`,
/// `$LAB_RUNNER_SIM_DIR`, else the default one).
#[derive(Debug, Clone)]
pub enum Options {
    /// `sim up`: start in the background.
    Up(ServeOptions),
    /// `sim serve`: run in the foreground.
    Serve(ServeOptions),
    /// `sim down`.
    Down {
        /// The state directory.
        state_dir: PathBuf,
    },
    /// `sim status`.
    Status {
        /// The state directory.
        state_dir: PathBuf,
    },
    /// `sim kubeconfig`.
    Kubeconfig {
        /// The state directory.
        state_dir: PathBuf,
        /// The server URL to write (default: the running simulator's endpoint).
        server: Option<String>,
    },
    /// `sim timeline`.
    Timeline {
        /// The state directory.
        state_dir: PathBuf,
        /// How it is printed.
        format: TimelineFormat,
    },
}

/// `sim timeline --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimelineFormat {
    /// A table.
    Human,
    /// The events as JSON.
    Json,
    /// CSV.
    Csv,
}

/// `sim timeline`: the learner's own timeline in `state_dir` — what each `check` recorded in
/// `timeline.db` and every write of the audit log, in time order. The learner's own screen:
/// their answers' values are shown.
pub fn timeline(state_dir: &Path, format: TimelineFormat, lang: Lang) -> super::Result<u8> {
    use crate::class::{stuck, timeline};
    let read = || -> std::result::Result<Vec<timeline::Event>, timeline::Error> {
        let recorded = match state_dir.join(timeline::TIMELINE_FILE).exists() {
            true => timeline::Timeline::open(state_dir)?.every_event()?,
            false => Vec::new(),
        };
        let writes = timeline::writes(state_dir, kubeconfig::ADMIN_CONTEXT, "", timeline::Writers::Everyone)?;
        Ok(timeline::merged(recorded, writes))
    };
    let events = read().map_err(crate::class::Error::from)?;
    let text = match format {
        TimelineFormat::Csv => stuck::timeline_csv(&events, true),
        TimelineFormat::Json => {
            serde_json::to_string_pretty(&events).map_err(crate::report::Error::from)? + "\n"
        }
        TimelineFormat::Human => {
            let dir = state_dir.display().to_string();
            let heading = tr!(lang, "sim-timeline-heading", dir = dir, events = events.len());
            heading + "\n" + &stuck::timeline_table(&events, true, lang)
        }
    };
    super::print(&text)?;
    Ok(exit::OK)
}

fn note_stale(pid: Option<u32>, dir: &Path, lang: Lang) {
    if let Some(pid) = pid {
        eprintln!("{}", tr!(lang, "sim-stale-pid", dir = dir.display().to_string(), pid = pid.to_string()));
    }
}

/// How long `sim serve` waits for its tasks once it stops serving.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs one `lab-runner sim …` command, printing its output; returns the exit code.
pub fn run(session: &Session, options: Options) -> super::Result<u8> {
    let lang = session.lang;
    // One rustls provider for the whole process (kube's client and the server both use ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(Error::Serve)?;
    match options {
        Options::Up(options) => {
            let started = runtime.block_on(lifecycle::up(&options))?;
            note_stale(started.removed_stale_pid, &options.state_dir, lang);
            let record = started.record;
            let (endpoint, pid) = (&record.endpoint, record.pid.to_string());
            println!("{}", tr!(lang, "sim-running", endpoint = endpoint, pid = pid));
            println!("kubeconfig: {}", record.kubeconfig.display());
            println!("export KUBECONFIG={}", record.kubeconfig.display());
            Ok(exit::OK)
        }
        Options::Serve(options) => {
            runtime.block_on(lifecycle::serve(&options, None, |prepared| {
                note_stale(prepared.removed_stale_pid, &options.state_dir, lang);
                let record = &prepared.record;
                let store = match prepared.seeded {
                    0 => tr!(lang, "sim-store-kept"),
                    n => tr!(lang, "sim-store-seeded", count = n),
                };
                let (endpoint, pid) = (&record.endpoint, record.pid.to_string());
                println!("{}", tr!(lang, "sim-serving", endpoint = endpoint, pid = pid, store = store));
                println!("kubeconfig: {}", record.kubeconfig.display());
                println!(
                    "{}",
                    tr!(
                        lang,
                        "sim-contexts",
                        admin = kubeconfig::ADMIN_CONTEXT,
                        viewer = kubeconfig::VIEWER_CONTEXT
                    )
                );
                println!("export KUBECONFIG={}", record.kubeconfig.display());
                println!("{}", tr!(lang, "sim-press-ctrl-c"));
            }))?;
            // Controllers run synchronous reconcile rounds inside a task: a round that is still
            // going must not keep the process alive after SIGTERM (dropping the runtime waits).
            runtime.shutdown_timeout(SHUTDOWN_GRACE);
            println!("{}", tr!(lang, "sim-stopped"));
            Ok(exit::OK)
        }
        Options::Down { state_dir } => {
            let pid = runtime.block_on(lifecycle::down(&state_dir))?;
            println!("{}", tr!(lang, "sim-stopped-pid", pid = pid.to_string()));
            Ok(exit::OK)
        }
        Options::Kubeconfig { state_dir, server } => {
            print!("{}", lifecycle::kubeconfig_for(&state_dir, server.as_deref())?);
            Ok(exit::OK)
        }
        Options::Timeline { state_dir, format } => timeline(&state_dir, format, lang),
        Options::Status { state_dir } => {
            let status = runtime.block_on(lifecycle::status(&state_dir))?;
            print!("{}", lifecycle::render_status(&status, lang));
            Ok(exit::OK)
        }
    }
}
