//! The simulator as a process: its options, state directory, run record and errors.
//!
//! Three seams, one submodule each: [`serving`] is `sim serve` in the foreground (state directory
//! prepared, port bound, HTTPS until SIGTERM or Ctrl-C); [`process`] manages a server from outside
//! (`up` re-executes the binary as `sim serve` detached and waits until it answers, `down`,
//! `status`, pid files, the kubeconfig for another address); the CLI maps its arguments onto
//! [`ServeOptions`] (`crate::cli`, run by `crate::commands::sim`), so nothing here knows clap.
//!
//! State directory layout (docs/simulator.md): `store.db` (+ SQLite WAL files), `ca.crt`,
//! `ca.key`, `server.crt`, `server.key`, `admin.token`, `viewer.token`, `kubeconfig`,
//! `sim.pid`, `sim.json` (endpoint and start time), `serve.log` (output of a detached server).

mod process;
mod serving;

use std::{
    net::{IpAddr, Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    time::Duration,
};

use serde::{Deserialize, Serialize};

use crate::{
    english_display,
    i18n::{Localized, Message, outside},
    msg,
};

pub use self::{
    process::{
        PidState, Started, Status, answers_version, down, kubeconfig_for, pid_state, process_alive,
        remove_run_files, render_status, run_record, status, up,
    },
    serving::{Prepared, REQUEST_LOG_ENV, seed, serve},
};
use super::{
    auth, kubeconfig, tls,
    topology::{self, Topology},
};

/// The pid file.
pub const PID_FILE: &str = "sim.pid";
/// The run record: pid, endpoint, start time.
pub const RUN_FILE: &str = "sim.json";
/// Output of a server started by `sim up`.
pub const LOG_FILE: &str = "serve.log";
/// The SQLite store.
pub const STORE_FILE: &str = "store.db";

/// How long `up` waits for the server to answer (seeding a 1,000-node topology on a slow disk
/// takes seconds: every seeded object is a durable write), and `down` for it to exit.
const START_TIMEOUT: Duration = Duration::from_secs(120);
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(50);

/// Errors of the simulator's lifecycle; each maps to one documented exit code (`src/exit.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No state directory was given and neither XDG_STATE_HOME nor HOME is set. Exit 2.
    NoStateDir,
    /// The state directory cannot be created or written. Exit 2.
    StateDirUnwritable {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The port is taken by another process. Exit 2.
    PortInUse {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// Binding failed for another reason (e.g. a privileged port, an address this host does
    /// not have). Exit 2.
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// A simulator already runs with this state directory. Exit 2.
    AlreadyRunning {
        /// The state directory.
        dir: PathBuf,
        /// Its pid.
        pid: u32,
        /// Its endpoint, when its run record says.
        endpoint: Option<String>,
    },
    /// The state directory holds no simulator's CA and tokens (none ever started there). Exit 3.
    NoState {
        /// The state directory.
        dir: PathBuf,
    },
    /// No simulator runs with this state directory. Exit 3.
    NotRunning {
        /// The state directory.
        dir: PathBuf,
    },
    /// The pid file names a process that is gone; the file was removed. Exit 3.
    StalePidFile {
        /// The state directory.
        dir: PathBuf,
        /// The pid the file held.
        pid: u32,
    },
    /// The topology file is unreadable or invalid. Exit 2.
    Topology(#[from] topology::Error),
    /// The CA or server certificate could not be made or stored. Exit 2.
    Tls(#[from] tls::Error),
    /// The tokens could not be made or stored. Exit 2.
    Tokens(#[from] auth::Error),
    /// The kubeconfig could not be written. Exit 2.
    Kubeconfig(#[from] kubeconfig::Error),
    /// The topology's `images:` or `timings:` do not fit the controllers' configuration. Exit 2.
    ControllerConfig(#[from] crate::sim::controllers::config::Error),
    /// The controllers could not start. Exit 3.
    Controllers(#[from] crate::sim::controllers::Error),
    /// The store could not be opened, read or seeded. Exit 3.
    Store {
        /// The store file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A state file could not be read or written. Exit 2.
    StateFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The background server could not be started. Exit 3.
    Spawn {
        /// The executable.
        program: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The background server exited during start. Exit: the server's own code, else 3.
    ServerExited {
        /// The server's last error line (its log is in English), when it printed one.
        message: Option<String>,
        /// How it exited.
        status: String,
        /// Its log file.
        log: PathBuf,
        /// Its exit code, when it exited with one other than 0 (a lab-runner code, passed on).
        code: Option<u8>,
    },
    /// The background server did not answer in time (it was stopped). Exit 4.
    StartTimedOut {
        /// Its log file.
        log: PathBuf,
    },
    /// The server did not exit in time after SIGTERM. Exit 4.
    StopTimedOut {
        /// Its pid.
        pid: u32,
    },
    /// Signalling the server failed (e.g. it belongs to another user). Exit 3.
    Signal {
        /// Its pid.
        pid: u32,
        /// The cause.
        source: std::io::Error,
    },
    /// The server's process runs but its API does not answer. Exit 3.
    Unreachable {
        /// Its pid.
        pid: u32,
        /// Its endpoint.
        endpoint: String,
        /// What failed.
        reason: Message,
    },
    /// The server failed while running. Exit 3.
    Serve(std::io::Error),
}

impl Localized for Error {
    fn message(&self) -> Message {
        let shown = |path: &Path| path.display().to_string();
        match self {
            Error::NoStateDir => msg!("sim-error-no-state-dir"),
            Error::StateDirUnwritable { path, source } => {
                msg!("sim-error-state-dir-unwritable", dir = shown(path), reason = outside::cause(source))
            }
            Error::PortInUse { addr } => {
                msg!("sim-error-port-in-use", port = addr.port().to_string(), ip = addr.ip().to_string())
            }
            Error::Bind { addr, source } => {
                msg!("sim-error-bind", addr = addr.to_string(), reason = outside::cause(source))
            }
            Error::AlreadyRunning { dir, pid, endpoint: Some(endpoint) } => msg!(
                "sim-error-already-running",
                dir = shown(dir),
                pid = pid.to_string(),
                endpoint = endpoint
            ),
            Error::AlreadyRunning { dir, pid, endpoint: None } => {
                msg!("sim-error-already-running-unknown", dir = shown(dir), pid = pid.to_string())
            }
            Error::NoState { dir } => msg!("sim-error-no-state", dir = shown(dir)),
            Error::NotRunning { dir } => msg!("sim-error-not-running", dir = shown(dir)),
            Error::StalePidFile { dir, pid } => {
                msg!("sim-error-stale-pid-file", dir = shown(dir), pid = pid.to_string())
            }
            Error::Topology(topology::Error::Read { path, source }) => {
                msg!("error-file", path = path, reason = outside::cause(source))
            }
            Error::Topology(topology::Error::Parse { location: at, message })
            | Error::Topology(topology::Error::Invalid { file: at, message }) => {
                msg!("sim-error-topology", at = at, reason = outside::quoted(message))
            }
            Error::Tls(tls::Error::Io { path, source })
            | Error::Tokens(auth::Error::Io { path, source })
            | Error::Kubeconfig(kubeconfig::Error::Write { path, source }) => {
                msg!("error-file", path = shown(path), reason = outside::cause(source))
            }
            Error::Tls(tls::Error::Certificate { what, source }) => msg!(
                "sim-error-certificate",
                what = outside::quoted(what),
                reason = outside::quoted(source.to_string())
            ),
            Error::Tls(tls::Error::Rustls(error)) => {
                msg!("sim-error-tls", reason = outside::quoted(error.to_string()))
            }
            Error::Tokens(auth::Error::Random) => msg!("sim-error-random"),
            Error::ControllerConfig(error) => {
                msg!("sim-error-topology-config", reason = outside::quoted(error.to_string()))
            }
            Error::Controllers(error) => {
                msg!("sim-error-controllers", reason = outside::quoted(error.to_string()))
            }
            Error::Store { path, message } => {
                msg!("sim-error-store", path = shown(path), reason = outside::quoted(message))
            }
            Error::StateFile { path, source } => {
                msg!("error-file", path = shown(path), reason = outside::cause(source))
            }
            Error::Spawn { program, source } => {
                msg!("sim-error-spawn", program = shown(program), reason = outside::cause(source))
            }
            Error::ServerExited { message: Some(line), .. } => {
                msg!("sim-error-server-exited", reason = outside::quoted(line))
            }
            Error::ServerExited { message: None, status, log, .. } => {
                msg!("sim-error-server-exited-silently", status = status, log = shown(log))
            }
            Error::StartTimedOut { log } => {
                msg!("sim-error-start-timed-out", seconds = START_TIMEOUT.as_secs(), log = shown(log))
            }
            Error::StopTimedOut { pid } => {
                msg!("sim-error-stop-timed-out", pid = pid.to_string(), seconds = STOP_TIMEOUT.as_secs())
            }
            Error::Signal { pid, source } => {
                msg!("sim-error-signal", pid = pid.to_string(), reason = outside::cause(source))
            }
            Error::Unreachable { pid, endpoint, reason } => {
                msg!("sim-error-unreachable", pid = pid.to_string(), endpoint = endpoint, reason = reason)
            }
            Error::Serve(source) => msg!("sim-error-serve", reason = outside::cause(source)),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Where the cluster's nodes come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TopologySource {
    /// manifests/clusters/default.yaml, built in.
    BuiltIn,
    /// A topology file.
    File(PathBuf),
    /// One control-plane node and this many workers.
    Generated(u32),
}

impl TopologySource {
    /// Loads the topology.
    pub fn load(&self) -> Result<Topology> {
        Ok(match self {
            TopologySource::BuiltIn => Topology::default_lab(),
            TopologySource::File(path) => Topology::load(path)?,
            TopologySource::Generated(n) => Topology::generated(*n),
        })
    }
}

/// What `serve` and `up` are asked to run.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The state directory.
    pub state_dir: PathBuf,
    /// Nodes to seed on first start.
    pub topology: TopologySource,
    /// The address to listen on: [`DEFAULT_LISTEN`] (127.0.0.1, any free port) unless a
    /// container publishes it (`0.0.0.0:6443`).
    pub listen: SocketAddr,
    /// Names the server certificate carries besides 127.0.0.1 and localhost (DNS names or IP
    /// addresses), for clients that reach it by another name.
    pub tls_sans: Vec<String>,
    /// Speed factor of the real clock.
    pub speed: f64,
    /// Whether the scheduler, kubelets and controllers run beside the API.
    pub control_plane: ControlPlane,
    /// `-v` count: a detached server (`up`) is started with as many, so its log lines (the
    /// controllers' warnings among them) reach `serve.log`.
    pub verbosity: u8,
    /// Whether writes are kept in the state directory's audit log ([`crate::sim::audit`]).
    pub audit: Audit,
}

/// Whether a simulator keeps an audit log of the writes to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Audit {
    /// `audit.log` in the state directory (the default: a learner's own timeline).
    #[default]
    Log,
    /// None (`--no-audit-log`; a class recording less than `all`).
    Off,
}

/// 127.0.0.1 with a port the kernel picks: a simulator nobody else on the network reaches.
pub const DEFAULT_LISTEN: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 0);

impl ServeOptions {
    /// The server's URL as clients on this host use it: an unspecified listen address
    /// (`0.0.0.0`, `::`) is reached through 127.0.0.1, which the certificate always names.
    pub fn endpoint(&self, bound_port: u16) -> String {
        let ip = self.listen.ip();
        let host = if ip.is_unspecified() { IpAddr::V4(Ipv4Addr::LOCALHOST) } else { ip };
        format!("https://{}", SocketAddr::new(host, bound_port))
    }

    /// Every name the server certificate carries: 127.0.0.1, localhost, a specific listen
    /// address, then the `--tls-san` names (duplicates dropped, order kept).
    pub fn certificate_names(&self) -> Vec<String> {
        let mut names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
        if !self.listen.ip().is_unspecified() {
            names.push(self.listen.ip().to_string());
        }
        for name in &self.tls_sans {
            if !names.contains(name) {
                names.push(name.clone());
            }
        }
        names
    }
}

/// Whether a served simulator reconciles what is written to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlPlane {
    /// Scheduler, kubelets and controllers run: a whole cluster.
    Running,
    /// The API only, like a kube-apiserver without kube-controller-manager, scheduler or
    /// kubelets: what is written stays exactly as written (API-surface tests).
    ApiOnly,
}

/// The run record a serving process writes next to its pid file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunRecord {
    /// The server's pid.
    pub pid: u32,
    /// `https://127.0.0.1:PORT` (the listen address when it is a specific one).
    pub endpoint: String,
    /// When it started (RFC 3339).
    pub started: String,
    /// The kubeconfig it wrote.
    pub kubeconfig: PathBuf,
}

/// The state directory: `explicit` (from `--state-dir` or `$LAB_RUNNER_SIM_DIR`), else
/// `$XDG_STATE_HOME/lab-runner/sim`, else `~/.local/state/lab-runner/sim`.
pub fn state_dir(explicit: Option<PathBuf>) -> Result<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = explicit {
        return Ok(dir);
    }
    if let Some(state) = non_empty("XDG_STATE_HOME") {
        return Ok(state.join("lab-runner").join("sim"));
    }
    non_empty("HOME").map(|home| home.join(".local/state/lab-runner/sim")).ok_or(Error::NoStateDir)
}

/// Creates the state directory and proves it writable.
pub fn ensure_writable(dir: &Path) -> Result<()> {
    let unwritable = |source| Error::StateDirUnwritable { path: dir.to_path_buf(), source };
    crate::sim::owner_only::create_dir(dir).map_err(unwritable)?;
    let probe = dir.join(".write-test");
    std::fs::write(&probe, b"ok").map_err(unwritable)?;
    std::fs::remove_file(&probe).map_err(unwritable)
}

fn write_state_file(path: &Path, contents: &[u8]) -> Result<()> {
    tls::write_private_file(path, contents)
        .map_err(|source| Error::StateFile { path: path.to_path_buf(), source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_state_dir_wins() {
        assert_eq!(state_dir(Some(PathBuf::from("/x/y"))).unwrap(), PathBuf::from("/x/y"));
    }

    fn listening_on(listen: &str, sans: &[&str]) -> ServeOptions {
        ServeOptions {
            state_dir: PathBuf::from("/state"),
            topology: TopologySource::BuiltIn,
            listen: listen.parse().unwrap(),
            tls_sans: sans.iter().map(|s| s.to_string()).collect(),
            speed: 1.0,
            control_plane: ControlPlane::Running,
            verbosity: 0,
            audit: Audit::Log,
        }
    }

    #[test]
    fn an_unspecified_listen_address_is_reached_through_127_0_0_1() {
        let container = listening_on("0.0.0.0:6443", &["sim.example", "localhost"]);
        assert_eq!(container.endpoint(6443), "https://127.0.0.1:6443");
        assert_eq!(container.certificate_names(), ["127.0.0.1", "localhost", "sim.example"]);
        let specific = listening_on("10.1.2.3:0", &[]);
        assert_eq!(specific.endpoint(40000), "https://10.1.2.3:40000");
        assert_eq!(specific.certificate_names(), ["127.0.0.1", "localhost", "10.1.2.3"]);
        assert_eq!(listening_on("[::]:6443", &[]).endpoint(6443), "https://127.0.0.1:6443");
    }
}
