//! `lab-runner sim …`: maps clap's arguments onto the simulator's options and prints its outcomes.

use std::{net::SocketAddr, path::Path, time::Duration};

use crate::{
    cli::{SimCommand, SimUpArgs},
    exit,
    session::Lang,
    sim::{
        kubeconfig,
        lifecycle::{
            self, ControlPlane, DEFAULT_LISTEN, Error, Result, ServeOptions, TopologySource, state_dir,
        },
    },
    tr,
};

/// Maps `sim up`/`sim serve`'s arguments onto the simulator's own options.
fn options(args: SimUpArgs, verbosity: u8) -> Result<ServeOptions> {
    let topology = match (args.topology, args.nodes) {
        (Some(path), _) => TopologySource::File(path),
        (None, Some(n)) => TopologySource::Generated(n),
        (None, None) => TopologySource::BuiltIn,
    };
    Ok(ServeOptions {
        state_dir: state_dir(args.state.state_dir)?,
        topology,
        listen: match (args.listen, args.port) {
            (Some(listen), _) => listen,
            (None, Some(port)) => SocketAddr::new(DEFAULT_LISTEN.ip(), port),
            (None, None) => DEFAULT_LISTEN,
        },
        tls_sans: args.tls_sans,
        speed: args.speed,
        control_plane: if args.api_only { ControlPlane::ApiOnly } else { ControlPlane::Running },
        verbosity,
    })
}

fn note_stale(pid: Option<u32>, dir: &Path, lang: Lang) {
    if let Some(pid) = pid {
        eprintln!("{}", tr!(lang, "sim-stale-pid", dir = dir.display().to_string(), pid = pid.to_string()));
    }
}

/// How long `sim serve` waits for its tasks once it stops serving.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// Runs one `lab-runner sim …` command, printing its output; returns the exit code. `verbosity`
/// is the global `-v` count, handed on to a server `sim up` starts.
pub fn run_command(command: SimCommand, verbosity: u8, lang: Lang) -> Result<u8> {
    // One rustls provider for the whole process (kube's client and the server both use ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(Error::Serve)?;
    match command {
        SimCommand::Up(args) => {
            let options = options(args, verbosity)?;
            let started = runtime.block_on(lifecycle::up(&options))?;
            note_stale(started.removed_stale_pid, &options.state_dir, lang);
            let record = started.record;
            let (endpoint, pid) = (&record.endpoint, record.pid.to_string());
            println!("{}", tr!(lang, "sim-running", endpoint = endpoint, pid = pid));
            println!("kubeconfig: {}", record.kubeconfig.display());
            println!("export KUBECONFIG={}", record.kubeconfig.display());
            Ok(exit::OK)
        }
        SimCommand::Serve(args) => {
            let options = options(args, verbosity)?;
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
        SimCommand::Down(args) => {
            let dir = state_dir(args.state_dir)?;
            let pid = runtime.block_on(lifecycle::down(&dir))?;
            println!("{}", tr!(lang, "sim-stopped-pid", pid = pid.to_string()));
            Ok(exit::OK)
        }
        SimCommand::Kubeconfig(args) => {
            let dir = state_dir(args.state.state_dir)?;
            print!("{}", lifecycle::kubeconfig_for(&dir, args.server.as_deref())?);
            Ok(exit::OK)
        }
        SimCommand::Status(args) => {
            let dir = state_dir(args.state_dir)?;
            let status = runtime.block_on(lifecycle::status(&dir))?;
            print!("{}", lifecycle::render_status(&status, &tr!(lang, "sim-status-running")));
            Ok(exit::OK)
        }
    }
}
