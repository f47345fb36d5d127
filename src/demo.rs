//! `demo`: a lab end to end on a fresh embedded simulator — start, status, solution, check.
//!
//! The CLI starts the simulator (DESIGN §2.1: the engine never imports it) and hands the engine
//! the simulator's kubeconfig, exactly as it would any other cluster's.

use std::{
    io::Write,
    path::{Path, PathBuf},
    process::Command as Process,
};

use crate::{
    cli::{CheckArgs, ClusterTarget, DemoArgs, Format, LabSource, Lang, StartArgs, StatusArgs},
    lab, run,
    sim::{
        kubeconfig::KUBECONFIG_FILE,
        lifecycle::{self, ControlPlane, ServeOptions, TopologySource},
    },
};

/// Simulated delays (image pulls, readiness) pass this many times faster in a demo.
const DEMO_SPEED: f64 = 10.0;

/// Runs `demo <lab>`: returns the exit code of the final `check` (0 when the reference solution
/// passes every task).
pub fn demo(labs: &LabSource, lang: Lang, args: &DemoArgs) -> Result<u8, run::Error> {
    let bundle = lab::loader::find(labs, &args.lab)?;
    let state_dir = std::env::temp_dir().join(format!("lab-runner-demo-{}", std::process::id()));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let options = ServeOptions {
        state_dir: state_dir.clone(),
        topology: TopologySource::BuiltIn,
        port: None,
        speed: DEMO_SPEED,
        control_plane: ControlPlane::Running,
    };
    let started = runtime.block_on(lifecycle::up(&options))?;
    stop_on_signal(&runtime, &state_dir);
    say(&format!("== simulator at {} ({}x speed)\n", started.record.endpoint, DEMO_SPEED))?;
    let outcome = run_lab(&runtime, labs, lang, args, &bundle, &state_dir);
    // Stop the simulator whatever happened; a failure to stop must not hide the lab's outcome.
    if let Err(error) = runtime.block_on(lifecycle::down(&state_dir)) {
        eprintln!("warning: could not stop the demo simulator: {error}");
    }
    let _ = std::fs::remove_dir_all(&state_dir);
    outcome
}

/// A Ctrl-C or SIGTERM during the demo stops its simulator before the process exits, so an
/// interrupted demo leaves no background server behind.
fn stop_on_signal(runtime: &tokio::runtime::Runtime, state_dir: &Path) {
    use tokio::signal::unix::{SignalKind, signal};
    let state_dir = state_dir.to_path_buf();
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
        let _ = lifecycle::down(&state_dir).await;
        let _ = std::fs::remove_dir_all(&state_dir);
        eprintln!("demo interrupted: its simulator was stopped");
        std::process::exit(130);
    });
}

fn run_lab(
    runtime: &tokio::runtime::Runtime,
    labs: &LabSource,
    lang: Lang,
    args: &DemoArgs,
    bundle: &lab::loader::Bundle,
    state_dir: &Path,
) -> Result<u8, run::Error> {
    let kubeconfig = state_dir.join(KUBECONFIG_FILE);
    let target = ClusterTarget { kubeconfig: Some(kubeconfig.clone()), context: None };
    let id = bundle.lab.id.value.clone();
    let connect = || async {
        crate::engine::cluster::connect(&target)
            .await
            .map_err(crate::engine::Error::from)
            .map_err(run::Error::from)
    };

    say(&format!("== lab-runner start {id}\n"))?;
    let start_args = StartArgs { lab: id.clone(), variant: args.variant.clone(), seed: None };
    runtime.block_on(async { run::start(connect().await?, labs, lang, &start_args).await })?;

    say(&format!("== lab-runner status {id}\n"))?;
    let status_args = StatusArgs { lab: Some(id.clone()), daemonset: None, instructor: false };
    runtime.block_on(async { run::status(connect().await?, labs, &status_args).await })?;

    say("== the reference solution, task by task\n")?;
    for task in bundle.lab.tasks_in_needs_order() {
        say(&format!("-- {}: {}\n", task.id.value, task.title.get(lang)))?;
        for command in &task.solution {
            run_solution_command(command, &kubeconfig)?;
        }
    }

    say(&format!("== lab-runner check {id}\n"))?;
    let check_args = CheckArgs {
        lab: id,
        format: Format::Human,
        hint: None,
        reveal: false,
        confirm: None,
        watch: false,
        timeout: None,
        contexts: Vec::new(),
    };
    runtime.block_on(async { run::check(connect().await?, labs, lang, &check_args).await })
}

/// Echoes and runs one solution command with `sh -c`, against the demo's kubeconfig, with this
/// binary first on the PATH (solutions call `lab-runner answer …`).
fn run_solution_command(command: &str, kubeconfig: &Path) -> Result<(), run::Error> {
    say(&format!("$ {command}\n"))?;
    let status = Process::new("sh")
        .arg("-c")
        .arg(command)
        .env("KUBECONFIG", kubeconfig)
        .env("PATH", path_with_this_binary())
        .status()?;
    if !status.success() {
        say(&format!("[exit {}]\n", status.code().map_or("signal".to_string(), |c| c.to_string())))?;
    }
    Ok(())
}

fn path_with_this_binary() -> std::ffi::OsString {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        dirs.push(dir);
    }
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap_or_default()
}

fn say(text: &str) -> Result<(), run::Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}
