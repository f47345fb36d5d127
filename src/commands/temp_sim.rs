//! A simulator in a temporary state directory for `demo` and `selftest`, stopped when they end or are interrupted.
//!
//! The commands start it (the engine never imports the simulator) and hand the engine its
//! kubeconfig, exactly as they would any other cluster's.

use std::path::{Path, PathBuf};

use super::Result;
use crate::{
    i18n::Message,
    msg,
    session::{ClusterTarget, Lang},
    sim::{
        kubeconfig::KUBECONFIG_FILE,
        lifecycle::{self, ControlPlane, ServeOptions, TopologySource},
    },
    tr,
};

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
    ) -> Result<TempSimulator> {
        let state_dir = std::env::temp_dir().join(format!("lab-runner-{purpose}-{}", std::process::id()));
        let options = ServeOptions {
            state_dir: state_dir.clone(),
            topology: TopologySource::BuiltIn,
            listen: lifecycle::DEFAULT_LISTEN,
            tls_sans: Vec::new(),
            speed,
            control_plane: ControlPlane::Running,
            verbosity: 0,
            audit: lifecycle::Audit::Off,
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
