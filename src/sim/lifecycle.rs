//! `sim up`, `sim down`, `sim status` and `sim serve`: the simulator as a process on 127.0.0.1.
//!
//! `serve` runs in the foreground: it prepares the state directory (CA, tokens, store, seeded
//! topology), binds the port, writes the kubeconfig, the pid file and a run record, and serves
//! HTTPS until SIGTERM or Ctrl-C. `up` re-executes the binary as `sim serve` detached from the
//! terminal, waits until it answers `/version` over TLS with the admin token, and returns. `down`
//! sends SIGTERM and waits for the process to go. A pid file whose process is gone is stale: it is
//! reported and removed.
//!
//! State directory layout (docs/simulator.md): `store.db` (+ SQLite WAL files), `ca.crt`,
//! `ca.key`, `server.crt`, `server.key`, `admin.token`, `viewer.token`, `kubeconfig`,
//! `sim.pid`, `sim.json` (endpoint and start time), `serve.log` (output of a detached server).

use std::{
    future::Future,
    net::{Ipv4Addr, SocketAddr},
    path::{Path, PathBuf},
    sync::Arc,
    time::Duration,
};

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use tokio::{net::TcpListener, sync::watch, task::JoinSet};

use super::{
    auth::{self, Tokens},
    clock::Clock,
    kubeconfig::{self, Access, KUBECONFIG_FILE},
    resources,
    server::{self, SimState},
    store::Store,
    tls::{self, TlsMaterial},
    topology::{self, Topology},
};
use crate::exit;

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

/// Errors of the simulator's lifecycle; each maps to one documented exit code
/// ([`Error::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No state directory was given and neither XDG_STATE_HOME nor HOME is set. Exit 2.
    #[error("cannot choose a state directory: set LAB_RUNNER_SIM_DIR or pass --state-dir")]
    NoStateDir,
    /// The state directory cannot be created or written. Exit 2.
    #[error("state directory {path} is not writable: {source}")]
    StateDirUnwritable {
        /// The directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The port is taken by another process. Exit 2.
    #[error(
        "port {port} on 127.0.0.1 is already in use: choose another with --port, or omit --port for a free one"
    )]
    PortInUse {
        /// The port.
        port: u16,
    },
    /// Binding failed for another reason (e.g. a privileged port). Exit 2.
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port.
        port: u16,
        /// The cause.
        source: std::io::Error,
    },
    /// A simulator already runs with this state directory. Exit 2.
    #[error(
        "a simulator is already running from {dir} (pid {pid}, {endpoint}); stop it with `lab-runner sim down`"
    )]
    AlreadyRunning {
        /// The state directory.
        dir: PathBuf,
        /// Its pid.
        pid: u32,
        /// Its endpoint.
        endpoint: String,
    },
    /// No simulator runs with this state directory. Exit 3.
    #[error("no simulator is running from {dir} (no pid file)")]
    NotRunning {
        /// The state directory.
        dir: PathBuf,
    },
    /// The pid file names a process that is gone; the file was removed. Exit 3.
    #[error(
        "no simulator is running from {dir}: process {pid} in its pid file is gone (stale pid file removed)"
    )]
    StalePidFile {
        /// The state directory.
        dir: PathBuf,
        /// The pid the file held.
        pid: u32,
    },
    /// The topology file is unreadable or invalid. Exit 2.
    #[error(transparent)]
    Topology(#[from] topology::Error),
    /// The CA or server certificate could not be made or stored. Exit 2.
    #[error(transparent)]
    Tls(#[from] tls::Error),
    /// The tokens could not be made or stored. Exit 2.
    #[error(transparent)]
    Tokens(#[from] auth::Error),
    /// The kubeconfig could not be written. Exit 2.
    #[error(transparent)]
    Kubeconfig(#[from] kubeconfig::Error),
    /// The topology's `images:` or `timings:` do not fit the controllers' configuration. Exit 2.
    #[error("topology: {0}")]
    ControllerConfig(#[from] super::controllers::config::Error),
    /// The controllers could not start. Exit 3.
    #[error("controllers: {0}")]
    Controllers(#[from] super::controllers::Error),
    /// The store could not be opened, read or seeded. Exit 3.
    #[error("store {path}: {message}")]
    Store {
        /// The store file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A state file could not be read or written. Exit 2.
    #[error("{path}: {source}")]
    StateFile {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The background server could not be started. Exit 3.
    #[error("cannot start `{program} sim serve`: {source}")]
    Spawn {
        /// The executable.
        program: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The background server exited during start; `message` is its error line. Exit: the
    /// server's own code.
    #[error("{message}")]
    ServerExited {
        /// The server's last error line (or a description).
        message: String,
        /// Its exit code.
        code: u8,
    },
    /// The background server did not answer in time (it was stopped). Exit 4.
    #[error("the simulator did not answer within {}s (see {log})", START_TIMEOUT.as_secs())]
    StartTimedOut {
        /// Its log file.
        log: PathBuf,
    },
    /// The server did not exit in time after SIGTERM. Exit 4.
    #[error("simulator process {pid} did not exit within {}s of SIGTERM", STOP_TIMEOUT.as_secs())]
    StopTimedOut {
        /// Its pid.
        pid: u32,
    },
    /// Signalling the server failed (e.g. it belongs to another user). Exit 3.
    #[error("cannot signal simulator process {pid}: {source}")]
    Signal {
        /// Its pid.
        pid: u32,
        /// The cause.
        source: std::io::Error,
    },
    /// The server's process runs but its API does not answer. Exit 3.
    #[error("simulator process {pid} runs but {endpoint} does not answer: {message}")]
    Unreachable {
        /// Its pid.
        pid: u32,
        /// Its endpoint.
        endpoint: String,
        /// What failed.
        message: String,
    },
    /// The server failed while running. Exit 3.
    #[error("serving failed: {0}")]
    Serve(std::io::Error),
}

impl Error {
    /// The documented exit code (DESIGN §6; docs/simulator.md lists them).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::NoStateDir
            | Error::StateDirUnwritable { .. }
            | Error::PortInUse { .. }
            | Error::Bind { .. }
            | Error::AlreadyRunning { .. }
            | Error::Topology(_)
            | Error::Tls(_)
            | Error::Tokens(_)
            | Error::Kubeconfig(_)
            | Error::ControllerConfig(_)
            | Error::StateFile { .. } => exit::BAD_INPUT,
            Error::NotRunning { .. }
            | Error::StalePidFile { .. }
            | Error::Store { .. }
            | Error::Controllers(_)
            | Error::Spawn { .. }
            | Error::Signal { .. }
            | Error::Unreachable { .. }
            | Error::Serve(_) => exit::CLUSTER_ERROR,
            Error::StartTimedOut { .. } | Error::StopTimedOut { .. } => exit::TIMED_OUT,
            Error::ServerExited { code, .. } => *code,
        }
    }
}

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
    /// Port on 127.0.0.1; `None` for any free port.
    pub port: Option<u16>,
    /// Speed factor of the real clock.
    pub speed: f64,
    /// Whether the scheduler, kubelets and controllers run beside the API.
    pub control_plane: ControlPlane,
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
    /// `https://127.0.0.1:PORT`.
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
    std::fs::create_dir_all(dir).map_err(unwritable)?;
    let probe = dir.join(".write-test");
    std::fs::write(&probe, b"ok").map_err(unwritable)?;
    std::fs::remove_file(&probe).map_err(unwritable)
}

/// What the pid file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PidState {
    /// No pid file.
    Absent,
    /// The process lives.
    Running(u32),
    /// The process is gone.
    Stale(u32),
}

/// Whether process `pid` exists (and is not a zombie waiting to be reaped).
pub fn process_alive(pid: u32) -> bool {
    let Some(raw) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(raw) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::PERM => {}
        Err(_) => return false,
    }
    // A zombie still answers kill(0); /proc/<pid>/stat's third field says `Z`.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => true,
    }
}

/// Reads the pid file of `dir`.
pub fn pid_state(dir: &Path) -> Result<PidState> {
    let path = dir.join(PID_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PidState::Absent),
        Err(source) => return Err(Error::StateFile { path, source }),
    };
    // An unreadable pid file names no live process: treat it as stale (pid 0).
    let pid: u32 = text.trim().parse().unwrap_or(0);
    Ok(if pid != 0 && process_alive(pid) { PidState::Running(pid) } else { PidState::Stale(pid) })
}

/// Removes the pid file and run record (missing files are fine).
pub fn remove_run_files(dir: &Path) {
    for file in [PID_FILE, RUN_FILE] {
        let _ = std::fs::remove_file(dir.join(file));
    }
}

/// Reads the run record of `dir`, if any.
pub fn run_record(dir: &Path) -> Option<RunRecord> {
    let text = std::fs::read_to_string(dir.join(RUN_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_state_file(path: &Path, contents: &[u8]) -> Result<()> {
    tls::write_private_file(path, contents)
        .map_err(|source| Error::StateFile { path: path.to_path_buf(), source })
}

/// The seeding step of a first start: every topology object not yet stored is created (objects
/// that exist, e.g. system namespaces made by the server, are kept). A store that already holds
/// nodes is left as it is (a restart keeps the cluster as it was).
pub fn seed(
    store: &Store,
    types: &[resources::ResourceType],
    topology: &Topology,
    now: Timestamp,
) -> Result<usize> {
    let store_error = |message: String| Error::Store { path: PathBuf::from(STORE_FILE), message };
    let counts = store.count_by_type().map_err(|e| store_error(e.to_string()))?;
    if counts.iter().any(|(kind, n)| kind == "nodes" && *n > 0) {
        return Ok(0);
    }
    let mut created = 0;
    for seed in topology::seed_objects(topology, now) {
        let rt = resources::find(types, seed.group, "v1", seed.plural)
            .ok_or_else(|| store_error(format!("no served type for {}", seed.plural)))?;
        let namespace = seed.object["metadata"]["namespace"].as_str().unwrap_or("");
        let name = seed.object["metadata"]["name"].as_str().unwrap_or("");
        if store.get(&rt.group_resource(), namespace, name).is_some() {
            continue;
        }
        store.create(rt, seed.object).map_err(|e| store_error(e.to_string()))?;
        created += 1;
    }
    Ok(created)
}

/// Everything `serve` prepared before it accepts connections.
#[derive(Debug)]
pub struct Prepared {
    /// The run record (also written to `sim.json`).
    pub record: RunRecord,
    /// Objects created by seeding (0 on a restart).
    pub seeded: usize,
    /// A stale pid file that was removed, if any.
    pub removed_stale_pid: Option<u32>,
}

/// Runs the simulator in the foreground until `shutdown` resolves (or SIGTERM/Ctrl-C when
/// `shutdown` is `None`); `on_ready` is called once it accepts connections.
pub async fn serve(
    options: &ServeOptions,
    shutdown: Option<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>>,
    on_ready: impl FnOnce(&Prepared),
) -> Result<()> {
    let dir = &options.state_dir;
    ensure_writable(dir)?;
    let removed_stale_pid = match pid_state(dir)? {
        PidState::Running(pid) if pid != std::process::id() => {
            let endpoint =
                run_record(dir).map(|r| r.endpoint).unwrap_or_else(|| "endpoint unknown".to_string());
            return Err(Error::AlreadyRunning { dir: dir.clone(), pid, endpoint });
        }
        PidState::Stale(pid) => {
            remove_run_files(dir);
            Some(pid)
        }
        _ => None,
    };
    let topology = options.topology.load()?;
    let controller_config = super::controllers::config::Config::from_topology(&topology)?;
    let tls = TlsMaterial::load_or_create(dir)?;
    let server_config = tls.server_config()?;
    let tokens = Tokens::load_or_create(dir)?;

    let port = options.port.unwrap_or(0);
    let listener =
        TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await.map_err(|source| {
            if source.kind() == std::io::ErrorKind::AddrInUse {
                Error::PortInUse { port }
            } else {
                Error::Bind { port, source }
            }
        })?;
    let bound = listener.local_addr().map_err(Error::Serve)?.port();

    let clock = Clock::Real { speed: options.speed };
    let store_path = dir.join(STORE_FILE);
    let store_error =
        |e: super::store::Error| Error::Store { path: store_path.clone(), message: e.to_string() };
    let store = Store::open(&store_path).map_err(store_error)?.with_clock(clock.clone());
    let types = resources::built_in();
    let seeded = seed(&store, &types, &topology, clock.now())?;
    let state = Arc::new(SimState::new(store, clock));
    // Custom types are served again after a restart (their CRDs are in the store).
    super::crd::reconcile(&state)
        .map_err(|e| Error::Store { path: store_path.clone(), message: e.to_string() })?;
    super::server::ensure_system_priority_classes(&state)
        .map_err(|e| Error::Store { path: store_path.clone(), message: e.to_string() })?;
    // The control plane and kubelets run beside the API, on the store (DESIGN §4).
    let controllers = match options.control_plane {
        ControlPlane::Running => Some(super::controllers::spawn(state.clone(), controller_config)?),
        ControlPlane::ApiOnly => None,
    };
    let app = auth::layer(server::router(state), Arc::new(tokens.clone()));
    let app = match std::env::var(REQUEST_LOG_ENV) {
        Ok(value) if value == "1" => {
            app.layer(axum::middleware::from_fn_with_state(Arc::new(tokens.clone()), log_request))
        }
        _ => app,
    };

    let endpoint = format!("https://127.0.0.1:{bound}");
    let kubeconfig_path = dir.join(KUBECONFIG_FILE);
    kubeconfig::write(
        &kubeconfig_path,
        &Access {
            server: &endpoint,
            ca_pem: &tls.ca_pem,
            admin_token: &tokens.admin,
            viewer_token: &tokens.viewer,
        },
    )?;
    let record = RunRecord {
        pid: std::process::id(),
        endpoint,
        started: Timestamp::now().to_string(),
        kubeconfig: kubeconfig_path,
    };
    write_state_file(&dir.join(PID_FILE), format!("{}\n", record.pid).as_bytes())?;
    let json = serde_json::to_vec_pretty(&record).expect("a run record serializes");
    if let Err(error) = write_state_file(&dir.join(RUN_FILE), &json) {
        remove_run_files(dir);
        return Err(error);
    }
    let shutdown = match shutdown {
        Some(shutdown) => shutdown,
        None => match termination_signal() {
            Ok(signals) => signals,
            Err(error) => {
                remove_run_files(dir);
                return Err(Error::Serve(error));
            }
        },
    };
    on_ready(&Prepared { record, seeded, removed_stale_pid });

    let served = serve_tls(listener, server_config, app, shutdown).await;
    if let Some(controllers) = controllers {
        controllers.abort();
    }
    remove_run_files(dir);
    served.map_err(Error::Serve)
}

/// With this variable set to `1` in the environment of `sim up`/`sim serve`, every request is
/// logged on stderr (`serve.log` under `sim up`) as `request <user> <METHOD> <path?query>
/// <status>`: how `scripts/bench-check.sh` and the binary tests count a check's requests.
pub const REQUEST_LOG_ENV: &str = "LAB_RUNNER_SIM_REQUEST_LOG";

/// The request log middleware (outermost, so rejected requests are logged too).
async fn log_request(
    axum::extract::State(tokens): axum::extract::State<Arc<Tokens>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let user = request
        .headers()
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
        .and_then(|token| tokens.identify(token.trim()))
        .map_or("anonymous", |identity| identity.user);
    let method = request.method().clone();
    let target =
        request.uri().path_and_query().map_or_else(|| request.uri().path().to_string(), |p| p.to_string());
    let response = next.run(request).await;
    eprintln!("request {user} {method} {target} {}", response.status().as_u16());
    response
}

/// A future resolving on SIGTERM or SIGINT (Ctrl-C). The handlers are installed by this call,
/// not when the future is first polled, so a signal sent right after the server says it is
/// ready is not lost (or fatal).
fn termination_signal() -> std::io::Result<std::pin::Pin<Box<dyn Future<Output = ()> + Send>>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate())?;
        let mut interrupt = signal(SignalKind::interrupt())?;
        Ok(Box::pin(async move {
            tokio::select! {
                _ = term.recv() => {}
                _ = interrupt.recv() => {}
            }
        }))
    }
    #[cfg(not(unix))]
    {
        Ok(Box::pin(async {
            let _ = tokio::signal::ctrl_c().await;
        }))
    }
}

/// The TLS accept loop: one task per connection, HTTP/1.1 (what ALPN offers), until `shutdown`;
/// then open connections get a graceful close and a short grace period (watches are long-lived).
pub async fn serve_tls(
    listener: TcpListener,
    config: Arc<rustls::ServerConfig>,
    app: axum::Router,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut connections = JoinSet::new();
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                let (tcp, _) = match accepted {
                    Ok(pair) => pair,
                    // Too many open files and the like: keep serving the others.
                    Err(_) => { tokio::time::sleep(POLL).await; continue; }
                };
                let acceptor = acceptor.clone();
                let app = app.clone();
                let mut stop = stop_rx.clone();
                connections.spawn(async move {
                    let Ok(Ok(tls)) = tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await else {
                        return;
                    };
                    let service = hyper_util::service::TowerToHyperService::new(app);
                    let connection = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(tls), service);
                    tokio::pin!(connection);
                    tokio::select! {
                        _ = connection.as_mut() => {}
                        _ = async { let _ = stop.wait_for(|stopping| *stopping).await; } => {
                            connection.as_mut().graceful_shutdown();
                            let _ = tokio::time::timeout(Duration::from_secs(2), connection).await;
                        }
                    }
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(3), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
    Ok(())
}

/// What `up` reports.
#[derive(Debug)]
pub struct Started {
    /// The server's run record.
    pub record: RunRecord,
    /// A stale pid file that was removed first, if any.
    pub removed_stale_pid: Option<u32>,
}

/// Starts `sim serve` in the background (its own process group, output to `serve.log`) and
/// waits until it answers `/version` over TLS with the admin token.
pub async fn up(options: &ServeOptions) -> Result<Started> {
    let dir = &options.state_dir;
    ensure_writable(dir)?;
    let removed_stale_pid = match pid_state(dir)? {
        PidState::Running(pid) => {
            let endpoint =
                run_record(dir).map(|r| r.endpoint).unwrap_or_else(|| "endpoint unknown".to_string());
            return Err(Error::AlreadyRunning { dir: dir.clone(), pid, endpoint });
        }
        PidState::Stale(pid) => {
            remove_run_files(dir);
            Some(pid)
        }
        PidState::Absent => None,
    };
    // Bad topology input is reported here, before a process is started.
    super::controllers::config::Config::from_topology(&options.topology.load()?)?;

    let program =
        std::env::current_exe().map_err(|source| Error::Spawn { program: "lab-runner".into(), source })?;
    let log_path = dir.join(LOG_FILE);
    let log = std::fs::File::create(&log_path)
        .map_err(|source| Error::StateFile { path: log_path.clone(), source })?;
    let log_err = log.try_clone().map_err(|source| Error::StateFile { path: log_path.clone(), source })?;
    let mut command = std::process::Command::new(&program);
    command.args(["sim", "serve", "--state-dir"]).arg(dir);
    match &options.topology {
        TopologySource::BuiltIn => {}
        TopologySource::File(path) => {
            command.arg("--topology").arg(path);
        }
        TopologySource::Generated(n) => {
            command.args(["--nodes", &n.to_string()]);
        }
    }
    if let Some(port) = options.port {
        command.args(["--port", &port.to_string()]);
    }
    command.args(["--speed", &options.speed.to_string()]);
    if options.control_plane == ControlPlane::ApiOnly {
        command.arg("--api-only");
    }
    command.stdin(std::process::Stdio::null()).stdout(log).stderr(log_err);
    #[cfg(unix)]
    {
        // Its own process group: a Ctrl-C in the shell that ran `sim up` does not reach it.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let mut child = command.spawn().map_err(|source| Error::Spawn { program: program.clone(), source })?;

    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) =
            child.try_wait().map_err(|source| Error::Spawn { program: program.clone(), source })?
        {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let message = log
                .lines()
                .rev()
                .find_map(|line| line.strip_prefix("error: "))
                .map(str::to_string)
                .unwrap_or_else(|| {
                    format!("the simulator exited during start ({status}); see {}", log_path.display())
                });
            let code = status
                .code()
                .and_then(|c| u8::try_from(c).ok())
                .filter(|c| *c != 0)
                .unwrap_or(exit::CLUSTER_ERROR);
            return Err(Error::ServerExited { message, code });
        }
        if let Some(record) = run_record(dir).filter(|r| r.pid == child.id())
            && answers_version(&record.kubeconfig).await
        {
            return Ok(Started { record, removed_stale_pid });
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            remove_run_files(dir);
            return Err(Error::StartTimedOut { log: log_path });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether the server behind `kubeconfig` answers `GET /version` (TLS verified with its CA,
/// the admin token sent).
pub async fn answers_version(kubeconfig: &Path) -> bool {
    let Ok(config) = kube::config::Kubeconfig::read_from(kubeconfig) else { return false };
    let Ok(config) = kube::Config::from_custom_kubeconfig(config, &Default::default()).await else {
        return false;
    };
    let Ok(client) = kube::Client::try_from(config) else { return false };
    tokio::time::timeout(Duration::from_secs(2), client.apiserver_version()).await.is_ok_and(|r| r.is_ok())
}

/// Stops the simulator of `dir`: SIGTERM, then waits for the process to exit.
pub async fn down(dir: &Path) -> Result<u32> {
    let pid = match pid_state(dir)? {
        PidState::Absent => return Err(Error::NotRunning { dir: dir.to_path_buf() }),
        PidState::Stale(pid) => {
            remove_run_files(dir);
            return Err(Error::StalePidFile { dir: dir.to_path_buf(), pid });
        }
        PidState::Running(pid) => pid,
    };
    let raw =
        i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw).expect("a live pid is positive");
    rustix::process::kill_process(raw, rustix::process::Signal::TERM)
        .map_err(|e| Error::Signal { pid, source: e.into() })?;
    let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
    while process_alive(pid) {
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::StopTimedOut { pid });
        }
        tokio::time::sleep(POLL).await;
    }
    remove_run_files(dir);
    Ok(pid)
}

/// What `sim status` shows.
#[derive(Debug, Clone)]
pub struct Status {
    /// The run record.
    pub record: RunRecord,
    /// How long it has run.
    pub uptime: SignedDuration,
    /// Objects per type (`nodes`, `daemonsets.apps`, …).
    pub counts: Vec<(String, u64)>,
    /// The store's revision.
    pub revision: u64,
}

/// The status of the simulator of `dir`. Counts come from the running server through its API
/// (one list per served type, with the admin token), not from the database file: opening the
/// store from a second process would compete with the server's writes.
pub async fn status(dir: &Path) -> Result<Status> {
    let pid = match pid_state(dir)? {
        PidState::Absent => return Err(Error::NotRunning { dir: dir.to_path_buf() }),
        PidState::Stale(pid) => {
            remove_run_files(dir);
            return Err(Error::StalePidFile { dir: dir.to_path_buf(), pid });
        }
        PidState::Running(pid) => pid,
    };
    let record = run_record(dir).ok_or_else(|| Error::StateFile {
        path: dir.join(RUN_FILE),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("missing, although process {pid} runs"),
        ),
    })?;
    let started: Timestamp = record.started.parse().unwrap_or_else(|_| Timestamp::now());
    let uptime = Timestamp::now().duration_since(started);
    let (counts, revision) = object_counts(&record).await?;
    Ok(Status { record, uptime, counts, revision })
}

/// Lists every listable built-in type through the API: objects per group-resource (types with
/// none left out, sorted) and the newest list resourceVersion.
async fn object_counts(record: &RunRecord) -> Result<(Vec<(String, u64)>, u64)> {
    let unreachable =
        |message: String| Error::Unreachable { pid: record.pid, endpoint: record.endpoint.clone(), message };
    let kubeconfig =
        kube::config::Kubeconfig::read_from(&record.kubeconfig).map_err(|e| unreachable(e.to_string()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| unreachable(e.to_string()))?;
    let client = kube::Client::try_from(config).map_err(|e| unreachable(e.to_string()))?;
    let mut counts = Vec::new();
    let mut revision = 0;
    for rt in resources::built_in().iter().filter(|rt| rt.verbs.iter().any(|v| v == "list")) {
        let request = axum::http::Request::get(format!("{}/{}", rt.group_version_path(), rt.plural))
            .body(Vec::new())
            .expect("a list request builds");
        let list: serde_json::Value = tokio::time::timeout(Duration::from_secs(10), client.request(request))
            .await
            .map_err(|_| unreachable("no answer within 10s".to_string()))?
            .map_err(|e| unreachable(e.to_string()))?;
        let items = list["items"].as_array().map_or(0, Vec::len) as u64;
        if items > 0 {
            counts.push((rt.group_resource(), items));
        }
        let list_revision =
            list["metadata"]["resourceVersion"].as_str().and_then(|v| v.parse().ok()).unwrap_or(0);
        revision = revision.max(list_revision);
    }
    counts.sort();
    Ok((counts, revision))
}

fn options(args: crate::cli::SimUpArgs) -> Result<ServeOptions> {
    let topology = match (args.topology, args.nodes) {
        (Some(path), _) => TopologySource::File(path),
        (None, Some(n)) => TopologySource::Generated(n),
        (None, None) => TopologySource::BuiltIn,
    };
    Ok(ServeOptions {
        state_dir: state_dir(args.state.state_dir)?,
        topology,
        port: args.port,
        speed: args.speed,
        control_plane: if args.api_only { ControlPlane::ApiOnly } else { ControlPlane::Running },
    })
}

fn note_stale(pid: Option<u32>, dir: &Path) {
    if let Some(pid) = pid {
        eprintln!("note: removed the stale pid file in {} (process {pid} is gone)", dir.display());
    }
}

/// Runs one `lab-runner sim …` command, printing its output; returns the exit code.
/// How long `sim serve` waits for its tasks once it stops serving.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

pub fn run_command(command: crate::cli::SimCommand) -> Result<u8> {
    use crate::cli::SimCommand;
    // One rustls provider for the whole process (kube's client and the server both use ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(Error::Serve)?;
    match command {
        SimCommand::Up(args) => {
            let options = options(args)?;
            let started = runtime.block_on(up(&options))?;
            note_stale(started.removed_stale_pid, &options.state_dir);
            let record = started.record;
            println!("simulator running at {} (pid {})", record.endpoint, record.pid);
            println!("kubeconfig: {}", record.kubeconfig.display());
            println!("export KUBECONFIG={}", record.kubeconfig.display());
            Ok(exit::OK)
        }
        SimCommand::Serve(args) => {
            let options = options(args)?;
            runtime.block_on(serve(&options, None, |prepared| {
                note_stale(prepared.removed_stale_pid, &options.state_dir);
                let record = &prepared.record;
                let store = match prepared.seeded {
                    0 => "kept the existing store".to_string(),
                    n => format!("seeded {n} objects"),
                };
                println!("simulator serving {} (pid {}; {store})", record.endpoint, record.pid);
                println!("kubeconfig: {}", record.kubeconfig.display());
                println!(
                    "contexts: {} (admin), {} (read-only)",
                    kubeconfig::ADMIN_CONTEXT,
                    kubeconfig::VIEWER_CONTEXT
                );
                println!("export KUBECONFIG={}", record.kubeconfig.display());
                println!("Press Ctrl-C to stop.");
            }))?;
            // Controllers run synchronous reconcile rounds inside a task: a round that is still
            // going must not keep the process alive after SIGTERM (dropping the runtime waits).
            runtime.shutdown_timeout(SHUTDOWN_GRACE);
            println!("simulator stopped");
            Ok(exit::OK)
        }
        SimCommand::Down(args) => {
            let dir = state_dir(args.state_dir)?;
            let pid = runtime.block_on(down(&dir))?;
            println!("simulator stopped (pid {pid})");
            Ok(exit::OK)
        }
        SimCommand::Status(args) => {
            let dir = state_dir(args.state_dir)?;
            let status = runtime.block_on(status(&dir))?;
            print!("{}", render_status(&status));
            Ok(exit::OK)
        }
    }
}

/// `sim status`'s text.
pub fn render_status(status: &Status) -> String {
    let record = &status.record;
    let uptime = server::table::human_duration(status.uptime.as_secs());
    let mut out = format!(
        "simulator running\n  pid         {}\n  endpoint    {}\n  uptime      {uptime}\n  kubeconfig  {}\n  revision    {}\nobjects\n",
        record.pid,
        record.endpoint,
        record.kubeconfig.display(),
        status.revision
    );
    let width = status.counts.iter().map(|(kind, _)| kind.len()).max().unwrap_or(0);
    for (kind, count) in &status.counts {
        out.push_str(&format!("  {kind:width$}  {count}\n"));
    }
    if status.counts.is_empty() {
        out.push_str("  (none)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn seeding_happens_once_and_keeps_what_exists() {
        let store = Store::in_memory().unwrap();
        let types = resources::built_in();
        let namespaces = resources::find(&types, "", "v1", "namespaces").unwrap();
        store
            .create(
                namespaces,
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}}),
            )
            .unwrap();
        let topology = Topology::generated(2);
        let now = Timestamp::now();
        assert_eq!(seed(&store, &types, &topology, now).unwrap(), 13);
        let counts = store.count_by_type().unwrap();
        assert!(counts.contains(&("nodes".to_string(), 3)), "{counts:?}");
        assert!(counts.contains(&("namespaces".to_string(), 4)), "{counts:?}");
        assert_eq!(seed(&store, &types, &Topology::generated(5), now).unwrap(), 0);
    }

    #[test]
    fn pid_files_are_absent_running_or_stale() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Absent);
        std::fs::write(dir.path().join(PID_FILE), format!("{}\n", std::process::id())).unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Running(std::process::id()));
        std::fs::write(dir.path().join(PID_FILE), "99999999\n").unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Stale(99_999_999));
        std::fs::write(dir.path().join(PID_FILE), "garbage").unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Stale(0));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert!(matches!(runtime.block_on(status(dir.path())), Err(Error::StalePidFile { pid: 0, .. })));
        assert!(!dir.path().join(PID_FILE).exists());
    }

    #[test]
    fn an_explicit_state_dir_wins() {
        assert_eq!(state_dir(Some(PathBuf::from("/x/y"))).unwrap(), PathBuf::from("/x/y"));
    }

    #[test]
    fn exit_codes_are_documented_ones() {
        assert_eq!(Error::PortInUse { port: 1 }.exit_code(), exit::BAD_INPUT);
        assert_eq!(Error::NotRunning { dir: "/d".into() }.exit_code(), exit::CLUSTER_ERROR);
        assert_eq!(Error::StopTimedOut { pid: 1 }.exit_code(), exit::TIMED_OUT);
        assert_eq!(Error::ServerExited { message: String::new(), code: 2 }.exit_code(), 2);
    }

    #[test]
    fn status_text() {
        let status = Status {
            record: RunRecord {
                pid: 4242,
                endpoint: "https://127.0.0.1:6443".to_string(),
                started: "2026-01-01T00:00:00Z".to_string(),
                kubeconfig: PathBuf::from("/state/kubeconfig"),
            },
            uptime: SignedDuration::from_secs(303),
            counts: vec![("daemonsets.apps".to_string(), 2), ("nodes".to_string(), 5)],
            revision: 57,
        };
        insta::assert_snapshot!(render_status(&status), @r"
        simulator running
          pid         4242
          endpoint    https://127.0.0.1:6443
          uptime      5m3s
          kubeconfig  /state/kubeconfig
          revision    57
        objects
          daemonsets.apps  2
          nodes            5
        ");
    }
}
