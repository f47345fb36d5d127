//! `lab-runner class up|status|down`: a class of learner simulators on one host, one process each.
//!
//! Each learner is a `sim up` of its own (`DIR/learner-01` …: its own store, CA, tokens and
//! clock), so isolation is the operating system's: a learner's token is only known to that
//! learner's server, and a crashed learner takes no other down. `DIR/class.json` records the
//! learners as they start, so `class down` finds them even after an interrupted `class up`.
//! `DIR/kubeconfig` holds one context per learner (the instructor's); `DIR/learner-NN/kubeconfig`
//! holds that learner's context only (to hand out).

pub mod board;
pub mod kubeconfig;
pub mod report;

use std::{
    io::Write as _,
    net::SocketAddr,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::{
    engine, lab,
    session::{ClusterTarget, LabSource, Lang},
    sim::{
        auth::ADMIN_TOKEN_FILE,
        kubeconfig::KUBECONFIG_FILE,
        lifecycle::{self, ControlPlane, PidState, ServeOptions, TopologySource},
        tls::{self, CA_CERT_FILE},
    },
};

/// The most learners one `class up` starts (docs/classroom.md): a started learner takes about
/// 28 MB, so 100 fit a modest host; more belong on Kubernetes (deploy/kubernetes).
pub const MAX_LEARNERS: u32 = 100;
/// The class record inside the class directory.
pub const CLASS_FILE: &str = "class.json";

/// Errors of the class commands; each maps to one documented exit code (`src/exit.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--learners` is 0 or above [`MAX_LEARNERS`]. Exit 2.
    #[error("--learners {0}: a class has 1 to {MAX_LEARNERS} learners")]
    LearnerCount(u32),
    /// `--listen` names a port too close to 65535 for every learner to get the next one. Exit 2.
    #[error("--listen {addr}: {learners} learners need ports {} to {}, beyond 65535", .addr.port(), u32::from(.addr.port()) + .learners - 1)]
    PortRange {
        /// The address asked for.
        addr: SocketAddr,
        /// How many learners.
        learners: u32,
    },
    /// `--listen` names an address other hosts reach, without a name for the certificates. Exit 2.
    #[error(
        "--listen {0}: a non-loopback address needs --tls-san NAME (the host name or IP learners reach this host by; their kubeconfigs and certificates use it)"
    )]
    NeedsTlsSan(std::net::IpAddr),
    /// A learner's port is taken. Exit 2.
    #[error("--listen: port {port} (learner {learner}) is in use: {source}")]
    PortInUse {
        /// The port.
        port: u16,
        /// The learner who would get it.
        learner: String,
        /// Why it cannot be bound.
        source: std::io::Error,
    },
    /// `--variant` names no variant of the lab. Exit 2.
    #[error("lab {lab} has no variant {variant:?} (variants: {known})")]
    UnknownVariant {
        /// The lab.
        lab: String,
        /// What was asked.
        variant: String,
        /// The lab's variants.
        known: String,
    },
    /// A class already runs from this directory. Exit 2.
    #[error("a class is already running from {0}: stop it with `lab-runner class down --state-dir {0}`")]
    AlreadyRunning(PathBuf),
    /// No class was ever started from this directory. Exit 3.
    #[error("no class in {0}: start one with `lab-runner class up --state-dir {0}`")]
    NoClass(PathBuf),
    /// The lab could not be found or is invalid. Exit 2.
    #[error(transparent)]
    Lab(#[from] lab::loader::Error),
    /// A learner's simulator could not be started or stopped. Exit: the simulator's code.
    #[error("{learner}: {source}")]
    Sim {
        /// The learner.
        learner: String,
        /// The cause (boxed: it is large, and rare).
        source: Box<lifecycle::Error>,
    },
    /// The lab could not be started on a learner's cluster. Exit: the engine's code.
    #[error("{learner}: {source}")]
    Engine {
        /// The learner.
        learner: String,
        /// The cause (boxed: it is large, and rare).
        source: Box<engine::Error>,
    },
    /// A class file could not be read or written. Exit 2.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// Ctrl-C during `class up`; the learners already started were stopped. Exit 2.
    #[error("class up interrupted: stopped {stopped} learner(s) already started; nothing keeps running")]
    Interrupted {
        /// How many were stopped.
        stopped: usize,
    },
    /// The board could not be served. Exit: the board's code.
    #[error(transparent)]
    Board(#[from] board::Error),
    /// `class report` failed. Exit: the report's code.
    #[error(transparent)]
    Report(#[from] report::Error),
    /// The class has no lab to grade and none was named. Exit 2.
    #[error("the class in {0} was started without a lab: name one with --lab")]
    NoLab(PathBuf),
    /// The async runtime could not start. Exit 3.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What `class up` is asked.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// The class directory.
    pub dir: PathBuf,
    /// How many learners.
    pub learners: u32,
    /// The lab to start in each, if any.
    pub lab: Option<String>,
    /// The variant every learner gets.
    pub variant: Option<String>,
    /// The seed the learners' variants are derived from.
    pub seed: Option<u64>,
    /// Where the learners listen: the IP, and the first learner's port (0: any free port each).
    pub listen: SocketAddr,
    /// Extra certificate names.
    pub tls_sans: Vec<String>,
    /// Labs' source.
    pub labs: LabSource,
    /// Language of the briefings (not printed; the start records it).
    pub lang: Lang,
    /// One process per learner, or one for all.
    pub processes: ProcessModel,
}

/// How a class's simulators are hosted (docs/classroom.md has the measurements behind the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProcessModel {
    /// One `sim serve` process per learner: the operating system isolates them (a crash or a
    /// runaway learner takes no other down) at a measured cost of a few MB each.
    #[default]
    PerLearner,
    /// Every learner in one background process (`class serve-shared`), each still with its own
    /// store, CA, tokens, clock and port.
    Shared,
}

/// The class record: what `class up` started, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClassRecord {
    /// The lab started in each learner, if any.
    pub lab: Option<String>,
    /// The learners, in order (names; each one's state directory is `DIR/NAME`).
    pub learners: Vec<String>,
    /// The process hosting every learner, with `--processes shared` (recorded as soon as it is
    /// spawned, so `class down` stops it even before its learners wrote their pid files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_pid: Option<u32>,
}

/// A learner's name: `learner-01` … (two digits at least, so names sort in order).
pub fn learner_name(index: u32) -> String {
    format!("learner-{index:02}")
}

/// The variant learner `index` (0-based) gets from `seed`: the first learner the one
/// `start --seed S` would pick, every next learner the next variant, so neighbours differ
/// whenever the lab has two variants or more.
pub fn variant_for_learner(lab: &lab::model::Lab, seed: u64, index: u32) -> Option<String> {
    let first = lab.variant_for_seed(seed)?;
    let at = lab.variants.iter().position(|v| v.id.value == first.id.value)?;
    let picked = &lab.variants[(at + index as usize) % lab.variants.len()];
    Some(picked.id.value.clone())
}

fn read_record(dir: &Path) -> Result<ClassRecord> {
    let path = dir.join(CLASS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Error::NoClass(dir.to_path_buf())),
        Err(e) => return Err(Error::File { path, message: e.to_string() }),
    };
    serde_json::from_str(&text).map_err(|e| Error::File { path, message: e.to_string() })
}

fn write_record(dir: &Path, record: &ClassRecord) -> Result<()> {
    let path = dir.join(CLASS_FILE);
    let text = serde_json::to_string_pretty(record).expect("a class record serializes");
    std::fs::write(&path, text + "\n").map_err(|e| Error::File { path, message: e.to_string() })
}

/// One learner's access: endpoint, CA and admin token, read from its state directory.
#[derive(Clone)]
struct Access {
    name: String,
    server: String,
    ca_pem: String,
    token: String,
}

fn read_access(dir: &Path, name: &str, server: String) -> Result<Access> {
    let read = |file: &str| {
        let path = dir.join(file);
        std::fs::read_to_string(&path).map_err(|e| Error::File { path, message: e.to_string() })
    };
    Ok(Access {
        name: name.to_string(),
        server,
        ca_pem: read(CA_CERT_FILE)?,
        token: read(ADMIN_TOKEN_FILE)?.trim().to_string(),
    })
}

/// A kubeconfig with one cluster, user and context per learner, named after the learner, the
/// first one current. Nothing else: no viewer contexts (`check --contexts all` grades every
/// context of the class kubeconfig).
fn render_kubeconfig(learners: &[Access]) -> String {
    use base64::Engine as _;
    let mut clusters = String::new();
    let mut users = String::new();
    let mut contexts = String::new();
    for Access { name, server, ca_pem, token } in learners {
        let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
        clusters += &format!(
            "- name: {name}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\n"
        );
        users += &format!("- name: {name}\n  user:\n    token: {token}\n");
        contexts += &format!(
            "- name: {name}\n  context:\n    cluster: {name}\n    user: {name}\n    namespace: default\n"
        );
    }
    let current = learners.first().map(|a| a.name.as_str()).unwrap_or_default();
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n{clusters}users:\n{users}contexts:\n{contexts}current-context: {current}\npreferences: {{}}\n"
    )
}

fn write_kubeconfig(path: &Path, learners: &[Access]) -> Result<()> {
    tls::write_private_file(path, render_kubeconfig(learners).as_bytes())
        .map_err(|e| Error::File { path: path.to_path_buf(), message: e.to_string() })
}

/// Validates `class up`'s input before anything starts.
fn validate(options: &UpOptions) -> Result<Option<lab::loader::Bundle>> {
    if options.learners == 0 || options.learners > MAX_LEARNERS {
        return Err(Error::LearnerCount(options.learners));
    }
    let port = u32::from(options.listen.port());
    if port != 0 && port + options.learners - 1 > u32::from(u16::MAX) {
        return Err(Error::PortRange { addr: options.listen, learners: options.learners });
    }
    // The default stays 127.0.0.1: any other address is an explicit choice (issue #20), and the
    // names learners reach it by must be in their certificates and kubeconfigs.
    if !options.listen.ip().is_loopback() && options.tls_sans.is_empty() {
        return Err(Error::NeedsTlsSan(options.listen.ip()));
    }
    if port != 0 {
        // Every learner's port is tried before any learner starts, so a taken one is bad input
        // reported in one line, not a half-started class.
        for index in 0..options.learners {
            let port = (port + index) as u16;
            if let Err(source) = std::net::TcpListener::bind(SocketAddr::new(options.listen.ip(), port)) {
                return Err(Error::PortInUse { port, learner: learner_name(index + 1), source });
            }
        }
    }
    let Some(lab) = &options.lab else { return Ok(None) };
    let bundle = lab::loader::find(&options.labs, lab)?;
    if let Some(variant) = &options.variant
        && bundle.lab.variant(variant).is_none()
    {
        let known: Vec<&str> = bundle.lab.variants.iter().map(|v| v.id.value.as_str()).collect();
        return Err(Error::UnknownVariant {
            lab: lab.clone(),
            variant: variant.clone(),
            known: if known.is_empty() { "none".into() } else { known.join(", ") },
        });
    }
    Ok(Some(bundle))
}

/// What `class up` did.
#[derive(Debug)]
pub struct Started {
    /// Learner, and the server their own kubeconfig names.
    pub learners: Vec<(String, String)>,
    /// The instructor's kubeconfig.
    pub kubeconfig: PathBuf,
}

/// `class up`: starts every learner's simulator in turn (recorded in `class.json` before it
/// starts), writes the kubeconfigs, then starts the lab in each. Ctrl-C stops the learners
/// already started.
pub fn up(options: &UpOptions) -> Result<Started> {
    let bundle = validate(options)?;
    let dir = &options.dir;
    lifecycle::ensure_writable(dir)
        .map_err(|source| Error::Sim { learner: "class".into(), source: Box::new(source) })?;
    if let Ok(previous) = read_record(dir)
        && previous
            .learners
            .iter()
            .any(|name| matches!(lifecycle::pid_state(&dir.join(name)), Ok(PidState::Running(_))))
    {
        return Err(Error::AlreadyRunning(dir.clone()));
    }
    let runtime = runtime()?;
    let (interrupt, interrupted) = tokio::sync::watch::channel(false);
    let started = runtime.block_on(async {
        let listener = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = interrupt.send(true);
            }
        });
        let started = up_all(options, bundle.as_ref(), interrupted).await;
        listener.abort();
        started
    });
    match started {
        Ok(started) => Ok(started),
        Err(Error::Interrupted { .. }) => {
            // The learner being started when Ctrl-C came finished starting first (a simulator
            // half-way through its start would be missed), so every recorded one is stopped.
            let stopped =
                runtime.block_on(down_all(dir)).map(|s| s.iter().filter(|(_, was)| was.is_some()).count());
            Err(Error::Interrupted { stopped: stopped.unwrap_or(0) })
        }
        Err(error) => {
            // A half-started class is stopped, not left running: the error names the learner.
            let _ = runtime.block_on(down_all(dir));
            Err(error)
        }
    }
}

/// What `sim serve` options learner `index` (0-based) of a class gets.
fn learner_serve_options(dir: &Path, index: u32, listen: SocketAddr, tls_sans: &[String]) -> ServeOptions {
    let port = match listen.port() {
        0 => 0,
        first => first + index as u16,
    };
    ServeOptions {
        state_dir: dir.join(learner_name(index + 1)),
        topology: TopologySource::BuiltIn,
        listen: SocketAddr::new(listen.ip(), port),
        tls_sans: tls_sans.to_vec(),
        speed: 1.0,
        control_plane: ControlPlane::Running,
        // A class's servers log warnings only (to each learner's serve.log).
        verbosity: 0,
    }
}

/// Starts the learners one by one, then the labs concurrently; `interrupted` turning true (Ctrl-C)
/// ends it with [`Error::Interrupted`] between two learners, or during the labs' start.
async fn up_all(
    options: &UpOptions,
    bundle: Option<&lab::loader::Bundle>,
    mut interrupted: tokio::sync::watch::Receiver<bool>,
) -> Result<Started> {
    let stop = |interrupted: &tokio::sync::watch::Receiver<bool>| {
        if *interrupted.borrow() { Err(Error::Interrupted { stopped: 0 }) } else { Ok(()) }
    };
    let dir = &options.dir;
    let names: Vec<String> = (1..=options.learners).map(learner_name).collect();
    let mut accesses = Vec::new();
    match options.processes {
        ProcessModel::PerLearner => {
            let mut record = ClassRecord { lab: options.lab.clone(), learners: Vec::new(), shared_pid: None };
            for (index, name) in names.iter().enumerate() {
                stop(&interrupted)?;
                // Recorded before it starts: an interrupted `class up` leaves nothing unrecorded.
                record.learners.push(name.clone());
                write_record(dir, &record)?;
                let serve = learner_serve_options(dir, index as u32, options.listen, &options.tls_sans);
                let started = lifecycle::up(&serve)
                    .await
                    .map_err(|source| Error::Sim { learner: name.clone(), source: Box::new(source) })?;
                accesses.push(read_access(&serve.state_dir, name, started.record.endpoint)?);
            }
        }
        ProcessModel::Shared => {
            let mut record =
                ClassRecord { lab: options.lab.clone(), learners: names.clone(), shared_pid: None };
            write_record(dir, &record)?;
            record.shared_pid = Some(spawn_shared(options)?);
            write_record(dir, &record)?;
            for (index, name) in names.iter().enumerate() {
                stop(&interrupted)?;
                let serve = learner_serve_options(dir, index as u32, options.listen, &options.tls_sans);
                let record = wait_until_served(&serve.state_dir, name).await?;
                accesses.push(read_access(&serve.state_dir, name, record.endpoint)?);
            }
        }
    }
    let mut handed_out = Vec::new();
    for access in &accesses {
        // The learner's own kubeconfig replaces the simulator's (admin and viewer contexts):
        // one context, named after the learner, with the server learners reach.
        let learner = Access {
            server: learner_server(&access.server, options.listen, &options.tls_sans),
            ..access.clone()
        };
        write_kubeconfig(&dir.join(&access.name).join(KUBECONFIG_FILE), std::slice::from_ref(&learner))?;
        handed_out.push((learner.name, learner.server));
    }
    let kubeconfig = dir.join(KUBECONFIG_FILE);
    write_kubeconfig(&kubeconfig, &accesses)?;
    if let Some(bundle) = bundle {
        // The labs start concurrently: each start mostly waits for its own cluster's rollout.
        let starts = accesses.iter().enumerate().map(|(index, access)| {
            let variant = options.variant.clone().or_else(|| {
                options.seed.and_then(|seed| variant_for_learner(&bundle.lab, seed, index as u32))
            });
            let target = ClusterTarget {
                kubeconfig: Some(dir.join(&access.name).join(KUBECONFIG_FILE)),
                context: Some(access.name.clone()),
            };
            let start = engine::start::StartOptions { variant, seed: None, yes: true };
            async move {
                let engine_error =
                    |source| Error::Engine { learner: access.name.clone(), source: Box::new(source) };
                let cluster = engine::cluster::connect(&target).await.map_err(|e| engine_error(e.into()))?;
                engine::start::start(&cluster, bundle, options.lang, &start).await.map_err(engine_error)?;
                Ok::<_, Error>(())
            }
        });
        stop(&interrupted)?;
        tokio::select! {
            outcomes = futures::future::join_all(starts) => {
                for outcome in outcomes {
                    outcome?;
                }
            }
            _ = interrupted.wait_for(|stop| *stop) => return Err(Error::Interrupted { stopped: 0 }),
        }
    }
    Ok(Started { learners: handed_out, kubeconfig })
}

/// The server a learner's own kubeconfig names. On a non-loopback listen address it is the first
/// `--tls-san` (learners sit at other hosts, where 127.0.0.1 is their own machine, and the
/// certificate carries that name); on loopback it is the endpoint itself. The instructor's
/// `DIR/kubeconfig` keeps the endpoint (127.0.0.1 for 0.0.0.0), which works on this host.
fn learner_server(endpoint: &str, listen: SocketAddr, tls_sans: &[String]) -> String {
    match tls_sans.first() {
        Some(name) if !listen.ip().is_loopback() => {
            let port = endpoint.rsplit_once(':').map(|(_, port)| port).unwrap_or_default();
            let host =
                if name.parse::<std::net::Ipv6Addr>().is_ok() { format!("[{name}]") } else { name.clone() };
            format!("https://{host}:{port}")
        }
        _ => endpoint.to_string(),
    }
}

/// Starts `class serve-shared` in the background (its own process group, output to
/// `DIR/serve.log`): every learner in one process. Returns its pid.
fn spawn_shared(options: &UpOptions) -> Result<u32> {
    let file_error =
        |path: &Path, e: std::io::Error| Error::File { path: path.to_path_buf(), message: e.to_string() };
    let log_path = options.dir.join("serve.log");
    let log = std::fs::File::create(&log_path).map_err(|e| file_error(&log_path, e))?;
    let log_err = log.try_clone().map_err(|e| file_error(&log_path, e))?;
    let program = std::env::current_exe().map_err(|e| file_error(Path::new("lab-runner"), e))?;
    let mut command = std::process::Command::new(program);
    command.args(["class", "serve-shared", "--state-dir"]).arg(&options.dir).args([
        "--learners",
        &options.learners.to_string(),
        "--listen",
        &options.listen.to_string(),
    ]);
    for name in &options.tls_sans {
        command.args(["--tls-san", name]);
    }
    command.stdin(std::process::Stdio::null()).stdout(log).stderr(log_err);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn().map_err(|e| file_error(&log_path, e))?;
    Ok(child.id())
}

/// Waits until the learner in `learner_dir` answers with its admin kubeconfig.
async fn wait_until_served(learner_dir: &Path, name: &str) -> Result<lifecycle::RunRecord> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        if let Some(record) = lifecycle::run_record(learner_dir)
            && lifecycle::answers_version(&record.kubeconfig).await
        {
            return Ok(record);
        }
        if tokio::time::Instant::now() >= deadline {
            let log = learner_dir.with_file_name("serve.log");
            return Err(Error::Sim {
                learner: name.to_string(),
                source: Box::new(lifecycle::Error::StartTimedOut { log }),
            });
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// `class serve-shared` (what `class up --processes shared` runs in the background): every
/// learner's simulator in this one process, each with its own store, CA, tokens, clock and port,
/// until SIGTERM or Ctrl-C.
pub fn serve_shared(dir: &Path, learners: u32, listen: SocketAddr, tls_sans: &[String]) -> Result<()> {
    let runtime = runtime()?;
    runtime.block_on(async {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let serving = (0..learners).map(|index| {
            let options = learner_serve_options(dir, index, listen, tls_sans);
            let mut stopped = stopped.clone();
            let shutdown: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> =
                Box::pin(async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                });
            async move {
                lifecycle::serve(&options, Some(shutdown), |_| {}).await.map_err(|source| Error::Sim {
                    learner: learner_name(index + 1),
                    source: Box::new(source),
                })
            }
        });
        let all = futures::future::try_join_all(serving);
        tokio::pin!(all);
        #[cfg(unix)]
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(Error::Runtime)?;
        #[cfg(unix)]
        let terminated = term.recv();
        #[cfg(not(unix))]
        let terminated = std::future::pending::<Option<()>>();
        tokio::select! {
            served = &mut all => return served.map(|_| ()),
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated => {}
        }
        // Every learner stops and removes its run files before the process exits.
        let _ = stop.send(true);
        all.await.map(|_| ())
    })
}

/// How long a learner's process may take to stop after SIGTERM.
const STOP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Whether `pid` is a live `class serve-shared` process (a recorded pid may since have been
/// reused by an unrelated process, which must not be signalled).
fn is_shared_server(pid: u32) -> bool {
    lifecycle::process_alive(pid)
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmdline| cmdline.windows(b"serve-shared".len()).any(|w| w == b"serve-shared"))
}

/// Sends SIGTERM to `pid` and waits until it has exited.
async fn stop_process(pid: u32, learner: &str) -> Result<()> {
    let sim_error = |source| Error::Sim { learner: learner.to_string(), source: Box::new(source) };
    let raw =
        i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw).expect("a live pid is positive");
    if let Err(e) = rustix::process::kill_process(raw, rustix::process::Signal::TERM) {
        if e == rustix::io::Errno::SRCH {
            return Ok(());
        }
        return Err(sim_error(lifecycle::Error::Signal { pid, source: e.into() }));
    }
    let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
    while lifecycle::process_alive(pid) {
        if tokio::time::Instant::now() >= deadline {
            return Err(sim_error(lifecycle::Error::StopTimedOut { pid }));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    Ok(())
}

/// Stops every recorded learner; returns each learner with the pid of the process that was
/// serving it (None: was not running). Learners hosted by one shared process name the same pid:
/// that process is stopped once and every learner it served counts as stopped.
async fn down_all(dir: &Path) -> Result<Vec<(String, Option<u32>)>> {
    let record = read_record(dir)?;
    let mut serving = Vec::new();
    for name in &record.learners {
        let learner_dir = dir.join(name);
        let state = lifecycle::pid_state(&learner_dir)
            .map_err(|source| Error::Sim { learner: name.clone(), source: Box::new(source) })?;
        serving.push((name.clone(), state));
    }
    let mut stopped: Vec<u32> = Vec::new();
    for (name, state) in &serving {
        if let PidState::Running(pid) = state
            && !stopped.contains(pid)
        {
            stop_process(*pid, name).await?;
            stopped.push(*pid);
        }
    }
    // A shared process that had not yet written its learners' pid files (an interrupted
    // `class up --processes shared`) is found by the pid the record keeps.
    if let Some(pid) = record.shared_pid
        && !stopped.contains(&pid)
        && is_shared_server(pid)
    {
        stop_process(pid, "class").await?;
    }
    Ok(serving
        .into_iter()
        .map(|(name, state)| {
            // A stopped server removes its run files itself; a killed one's are stale.
            lifecycle::remove_run_files(&dir.join(&name));
            let pid = match state {
                PidState::Running(pid) => Some(pid),
                PidState::Absent | PidState::Stale(_) => None,
            };
            (name, pid)
        })
        .collect())
}

/// `class down`: stops every learner; `purge` also deletes the class directory's contents.
pub fn down(dir: &Path, purge: bool) -> Result<Vec<(String, Option<u32>)>> {
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(Error::Runtime)?;
    let record = read_record(dir)?;
    let stopped = runtime.block_on(down_all(dir))?;
    if purge {
        let remove = |path: PathBuf, result: std::io::Result<()>| match result {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::File { path, message: e.to_string() })
            }
            _ => Ok(()),
        };
        for name in &record.learners {
            let path = dir.join(name);
            remove(path.clone(), std::fs::remove_dir_all(&path))?;
        }
        for file in [KUBECONFIG_FILE, CLASS_FILE] {
            let path = dir.join(file);
            remove(path.clone(), std::fs::remove_file(&path))?;
        }
        // The directory itself goes when nothing else is in it.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(stopped)
}

/// What `class board` grades: a class directory, or contexts of a kubeconfig.
#[derive(Debug, Clone)]
pub enum BoardSource {
    /// Every learner of the class in `DIR` (`DIR/kubeconfig`), in its lab unless one is named.
    Class {
        /// The class directory.
        dir: PathBuf,
        /// The lab, when not the class's.
        lab: Option<String>,
    },
    /// These contexts (`all`: every one) of a kubeconfig, in this lab.
    Contexts {
        /// The kubeconfig (`None`: `$KUBECONFIG`, then ~/.kube/config).
        kubeconfig: Option<PathBuf>,
        /// The contexts.
        contexts: Vec<String>,
        /// The lab.
        lab: String,
    },
}

/// `class board`: binds the page's address, prints its URL on stdout, then grades and serves
/// until Ctrl-C. `options.kubeconfig` and `options.contexts` are filled in from `source`.
pub fn board(source: BoardSource, mut options: board::BoardOptions, labs: &LabSource) -> Result<()> {
    let lab = match source {
        BoardSource::Class { dir, lab } => {
            let record = read_record(&dir)?;
            options.kubeconfig = Some(dir.join(KUBECONFIG_FILE));
            options.contexts = record.learners;
            lab.or(record.lab).ok_or(Error::NoLab(dir))?
        }
        BoardSource::Contexts { kubeconfig, contexts, lab } => {
            options.contexts = board::board_contexts(kubeconfig.as_ref(), &contexts)?;
            options.kubeconfig = kubeconfig;
            lab
        }
    };
    let bundle = lab::loader::find(labs, &lab)?;
    let runtime = runtime()?;
    runtime.block_on(async {
        let listener = board::bind(options.listen).await?;
        let bound = listener.local_addr().map_err(board::Error::Serve)?;
        // The URL is the first line on stdout, so a script (or a test) can wait for it.
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "class board for {lab}: {}", board::url(bound));
        let _ = out.flush();
        drop(out);
        let contexts = options.contexts.clone();
        tokio::select! {
            served = board::serve(listener, options, bundle, contexts) => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok(())
    })
}

/// One learner's line of `class status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnerStatus {
    /// The learner.
    pub name: String,
    /// Whether its simulator runs.
    pub up: bool,
    /// Its endpoint, when up.
    pub endpoint: Option<String>,
    /// `SCORE/TOTAL` of the class's lab, or why there is none.
    pub score: String,
}

/// `class status`: every learner's state and, when up, its score in the class's lab.
pub fn status(dir: &Path, labs: &LabSource, lang: Lang) -> Result<(ClassRecord, Vec<LearnerStatus>)> {
    let record = read_record(dir)?;
    let bundle = record.lab.as_deref().map(|lab| lab::loader::find(labs, lab)).transpose()?;
    let runtime = runtime()?;
    let lines = runtime.block_on(futures::future::join_all(record.learners.iter().map(|name| {
        let learner_dir = dir.join(name);
        let bundle = bundle.as_ref();
        async move {
            let up = matches!(lifecycle::pid_state(&learner_dir), Ok(PidState::Running(_)));
            let endpoint = up.then(|| lifecycle::run_record(&learner_dir).map(|r| r.endpoint)).flatten();
            let score = match (up, bundle) {
                (false, _) => "-".to_string(),
                (true, None) => "no lab".to_string(),
                (true, Some(bundle)) => {
                    let target = ClusterTarget {
                        kubeconfig: Some(learner_dir.join(KUBECONFIG_FILE)),
                        context: Some(name.clone()),
                    };
                    let graded = async {
                        let cluster = engine::cluster::connect(&target).await?;
                        engine::check::check_with(
                            &cluster,
                            bundle,
                            lang,
                            engine::check::Help::default(),
                            engine::check::Observations::Once,
                        )
                        .await
                    };
                    match graded.await {
                        Ok(report) => format!("{}/{}", report.score, report.total),
                        Err(error) => format!("error: {error}"),
                    }
                }
            };
            LearnerStatus { name: name.clone(), up, endpoint, score }
        }
    })));
    Ok((record, lines))
}

/// `class status` as a table.
pub fn render_status(record: &ClassRecord, lines: &[LearnerStatus]) -> String {
    let lab = record.lab.as_deref().unwrap_or("-");
    let mut rows =
        vec![["LEARNER".to_string(), "STATE".into(), "ENDPOINT".into(), "LAB".into(), "SCORE".into()]];
    for line in lines {
        rows.push([
            line.name.clone(),
            if line.up { "up" } else { "down" }.into(),
            line.endpoint.clone().unwrap_or_else(|| "-".into()),
            lab.to_string(),
            line.score.clone(),
        ]);
    }
    let widths: Vec<usize> =
        (0..5).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(cell, w)| format!("{cell:<w$}")).collect();
            cells.join("  ").trim_end().to_string() + "\n"
        })
        .collect()
}

/// The runtime every class command runs on: two workers are enough for the learners' I/O.
fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().map_err(Error::Runtime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::HasExitCode;

    #[test]
    fn learner_names_sort_in_order() {
        assert_eq!(learner_name(1), "learner-01");
        assert_eq!(learner_name(100), "learner-100");
    }

    #[test]
    fn the_class_kubeconfig_has_one_context_per_learner_and_nothing_else() {
        let access = |n: u32| Access {
            name: learner_name(n),
            server: format!("https://127.0.0.1:{}", 40000 + n),
            ca_pem: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".into(),
            token: format!("token{n}"),
        };
        let config =
            kube::config::Kubeconfig::from_yaml(&render_kubeconfig(&[access(1), access(2)])).unwrap();
        let contexts: Vec<_> = config.contexts.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(contexts, ["learner-01", "learner-02"]);
        assert_eq!(config.current_context.as_deref(), Some("learner-01"));
        let second = config.contexts[1].context.as_ref().unwrap();
        assert_eq!((second.cluster.as_str(), second.user.as_deref()), ("learner-02", Some("learner-02")));
        assert_eq!(
            config.clusters[1].cluster.as_ref().unwrap().server.as_deref(),
            Some("https://127.0.0.1:40002")
        );
    }

    #[test]
    fn class_status_is_a_table() {
        let record = ClassRecord { lab: Some("gpu-sharing".into()), learners: vec![], shared_pid: None };
        let line = |n: u32, up: bool, score: &str| LearnerStatus {
            name: learner_name(n),
            up,
            endpoint: up.then(|| format!("https://127.0.0.1:{}", 40000 + n)),
            score: score.into(),
        };
        let lines = [line(1, true, "7/16"), line(2, true, "error: cluster unreachable"), line(3, false, "-")];
        insta::assert_snapshot!(render_status(&record, &lines));
    }

    #[test]
    fn learners_reach_a_non_loopback_class_by_the_first_tls_san() {
        let any: SocketAddr = "0.0.0.0:0".parse().unwrap();
        let sans = ["class.example".to_string(), "10.0.0.5".to_string()];
        assert_eq!(learner_server("https://127.0.0.1:40001", any, &sans), "https://class.example:40001");
        let v6 = ["fd00::5".to_string()];
        assert_eq!(learner_server("https://127.0.0.1:40001", any, &v6), "https://[fd00::5]:40001");
        // On loopback the endpoint stays (a tunnel, say, brings learners to 127.0.0.1).
        let local: SocketAddr = "127.0.0.1:0".parse().unwrap();
        assert_eq!(learner_server("https://127.0.0.1:40001", local, &sans), "https://127.0.0.1:40001");
    }

    #[test]
    fn class_records_from_before_shared_pids_still_read() {
        let record: ClassRecord =
            serde_json::from_str(r#"{"lab": null, "learners": ["learner-01"]}"#).unwrap();
        assert_eq!(record.shared_pid, None);
        let text = serde_json::to_string(&record).unwrap();
        assert!(!text.contains("shared_pid"), "{text}");
    }

    #[test]
    fn bad_counts_and_port_ranges_are_bad_input() {
        let options = |learners, listen: &str| UpOptions {
            dir: PathBuf::from("/unused"),
            learners,
            lab: None,
            variant: None,
            seed: None,
            listen: listen.parse().unwrap(),
            tls_sans: vec![],
            labs: LabSource::BuiltIn,
            lang: Lang::En,
            processes: ProcessModel::PerLearner,
        };
        for (learners, listen) in
            [(0, "127.0.0.1:0"), (MAX_LEARNERS + 1, "127.0.0.1:0"), (3, "127.0.0.1:65534")]
        {
            let error = validate(&options(learners, listen)).unwrap_err();
            assert_eq!(error.exit_code(), crate::exit::BAD_INPUT, "{error}");
        }
        assert!(validate(&options(3, "127.0.0.1:0")).is_ok());
        let error = validate(&options(1, "0.0.0.0:0")).unwrap_err();
        assert!(matches!(error, Error::NeedsTlsSan(_)), "{error}");
        assert_eq!(error.exit_code(), crate::exit::BAD_INPUT);
        let named = UpOptions { tls_sans: vec!["class.example".into()], ..options(1, "0.0.0.0:0") };
        assert!(validate(&named).is_ok());
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = validate(&options(1, &format!("127.0.0.1:{port}"))).unwrap_err();
        assert!(matches!(error, Error::PortInUse { .. }), "{error}");
        assert_eq!(error.exit_code(), crate::exit::BAD_INPUT);
    }
}
