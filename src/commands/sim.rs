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
        lifecycle::{self, Error, Result, ServeOptions},
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
}

fn note_stale(pid: Option<u32>, dir: &Path, lang: Lang) {
    if let Some(pid) = pid {
        eprintln!("{}", tr!(lang, "sim-stale-pid", dir = dir.display().to_string(), pid = pid.to_string()));
    }
}

/// How long `sim serve` waits for its tasks once it stops serving.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs one `lab-runner sim …` command, printing its output; returns the exit code.
pub fn run(session: &Session, options: Options) -> Result<u8> {
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
        Options::Status { state_dir } => {
            let status = runtime.block_on(lifecycle::status(&state_dir))?;
            print!("{}", lifecycle::render_status(&status, lang));
            Ok(exit::OK)
        }
    }
}
