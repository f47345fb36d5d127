//! `lab-runner class …`: a class of learner simulators on one host, kept as a durable record across re-ups, crashes and restarts.
//!
//! Each learner is a simulator of its own (`DIR/learner-01/sim` …: its own store, CA, tokens
//! and clock), one process each by default, so isolation is the operating system's: a learner's
//! token is only known to that learner's server, and a crashed learner takes no other down.
//! `DIR/class.json` ([`record`]) remembers every learner's port and the labs started in it, so
//! `class up` starts only what is down, on the same address, and never applies a lab again to a
//! learner who started it; `class restart` and `class reset` act on named learners. The commands
//! that change the class hold the lock on the directory. `DIR/kubeconfig` holds one context per
//! learner (the instructor's); `DIR/learner-NN/kubeconfig` that learner's context only (to hand
//! out), written by the class alone.

pub mod board;
pub mod hosting;
pub mod kubeconfig;
pub mod lifecycle;
pub mod record;
pub mod report;

use std::{
    io::Write as _,
    net::SocketAddr,
    path::{Path, PathBuf},
};

pub use hosting::serve_shared;
pub use lifecycle::{down, reset, restart, start_lab, up};
pub use record::{ClassRecord, ProcessModel};

use crate::{
    engine, english_display,
    i18n::{Localized, Message, outside},
    lab, msg,
    session::{ClusterTarget, LabSource, Lang},
    sim::{
        auth::{ADMIN_TOKEN_FILE, LEARNER_TOKEN_FILE},
        kubeconfig::KUBECONFIG_FILE,
        lifecycle as sim_lifecycle,
        tls::CA_CERT_FILE,
    },
    tr,
};

/// The most learners one class has (docs/classroom.md): a started learner takes about 23 MiB
/// with a process each, so 100 fit a modest host; more belong on Kubernetes (deploy/kubernetes).
pub const MAX_LEARNERS: u32 = 100;

/// Errors of the class commands; each maps to one documented exit code (`src/exit.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--learners` is 0 or above [`MAX_LEARNERS`]. Exit 2.
    LearnerCount(u32),
    /// A new class needs `--learners`. Exit 2.
    NeedsLearners(PathBuf),
    /// `--learners` asks for fewer learners than the class has. Exit 2.
    FewerLearners {
        /// What the record holds.
        recorded: usize,
        /// What was asked.
        asked: u32,
    },
    /// An option names something else than the class recorded when it was created. Exit 2.
    Differs {
        /// The option.
        option: Recorded,
        /// What was asked.
        asked: String,
        /// What the record holds.
        recorded: String,
    },
    /// `class up --lab` names another lab than the class's. Exit 2.
    OtherLab {
        /// The class's lab.
        running: String,
        /// What was asked.
        asked: String,
    },
    /// `--listen` names a port too close to 65535 for every learner to get the next one. Exit 2.
    PortRange {
        /// The address asked for.
        addr: SocketAddr,
        /// How many learners.
        learners: u32,
    },
    /// `--listen` names an address other hosts reach, without a name for the certificates. Exit 2.
    NeedsTlsSan(std::net::IpAddr),
    /// A learner's port is taken. Exit 2.
    PortInUse {
        /// The port.
        port: u16,
        /// The learner who would get it.
        learner: String,
        /// Why it cannot be bound.
        source: std::io::Error,
    },
    /// `--variant` names no variant of the lab. Exit 2.
    UnknownVariant {
        /// The lab.
        lab: String,
        /// What was asked.
        variant: String,
        /// The lab's variants.
        known: Vec<String>,
    },
    /// A learner named on the command line is not in the class. Exit 2.
    UnknownLearner {
        /// The name given.
        name: String,
        /// The class's learners.
        known: Vec<String>,
    },
    /// A command that acts on learners was given none. Exit 2.
    NoLearnerNamed,
    /// A learner whose simulator does not run cannot have its lab reset. Exit 3.
    LearnerDown(String),
    /// Another command is changing the class. Exit 2.
    Locked {
        /// The class directory.
        dir: PathBuf,
        /// Who holds the lock, when it says.
        holder: Option<Box<record::Holder>>,
    },
    /// A class recorded by an older lab-runner still runs. Exit 2.
    OlderClassRunning(PathBuf),
    /// No class was ever started from this directory. Exit 3.
    NoClass(PathBuf),
    /// The lab could not be found or is invalid. Exit 2.
    Lab(#[from] lab::loader::Error),
    /// A learner's simulator could not be started or stopped. Exit: the simulator's code.
    Sim {
        /// The learner.
        learner: String,
        /// The cause (boxed: it is large, and rare).
        source: Box<sim_lifecycle::Error>,
    },
    /// The lab could not be started or reset on a learner's cluster. Exit: the engine's code.
    Engine {
        /// The learner.
        learner: String,
        /// The cause (boxed: it is large, and rare).
        source: Box<engine::Error>,
    },
    /// A class file could not be read or written. Exit 2.
    File {
        /// The file.
        path: PathBuf,
        /// What went wrong: the operating system's or the parser's words, named by kind.
        reason: Message,
    },
    /// Ctrl-C during `class up`; the learners it had started were stopped. Exit 2.
    Interrupted {
        /// How many were stopped.
        stopped: usize,
    },
    /// The board could not be served. Exit: the board's code.
    Board(#[from] board::Error),
    /// `class report` failed. Exit: the report's code.
    Report(#[from] report::Error),
    /// The class has no lab to grade and none was named. Exit 2.
    NoLab(PathBuf),
    /// The async runtime could not start. Exit 3.
    Runtime(std::io::Error),
}

/// What a class records when it is created and keeps afterwards (`class up` must agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Recorded {
    /// `--listen`.
    Listen,
    /// `--tls-san`.
    TlsSan,
    /// `--processes`.
    Processes,
    /// `--seed`.
    Seed,
    /// `--variant`.
    Variant,
}

impl Recorded {
    /// The flag.
    fn flag(self) -> &'static str {
        match self {
            Recorded::Listen => "--listen",
            Recorded::TlsSan => "--tls-san",
            Recorded::Processes => "--processes",
            Recorded::Seed => "--seed",
            Recorded::Variant => "--variant",
        }
    }

    /// Why the class keeps it.
    fn why_kept(self) -> Message {
        match self {
            Recorded::Listen => msg!("class-kept-listen"),
            Recorded::TlsSan => msg!("class-kept-tls-san"),
            Recorded::Processes => msg!("class-kept-processes"),
            Recorded::Seed | Recorded::Variant => msg!("class-kept-variants"),
        }
    }
}

impl Localized for Error {
    fn message(&self) -> Message {
        let shown = |path: &Path| path.display().to_string();
        match self {
            Error::LearnerCount(asked) => {
                msg!("class-error-learner-count", asked = asked.to_string(), max = MAX_LEARNERS.to_string())
            }
            Error::NeedsLearners(dir) => msg!("class-error-needs-learners", dir = shown(dir)),
            Error::FewerLearners { recorded, asked } => {
                msg!("class-error-fewer-learners", asked = asked.to_string(), recorded = *recorded)
            }
            Error::Differs { option, asked, recorded } => msg!(
                "class-error-differs",
                option = option.flag(),
                asked = asked,
                recorded = recorded,
                why = option.why_kept()
            ),
            Error::OtherLab { running, asked } => {
                msg!("class-error-other-lab", running = running, asked = asked)
            }
            Error::PortRange { addr, learners } => msg!(
                "class-error-port-range",
                addr = addr.to_string(),
                learners = *learners,
                first = addr.port().to_string(),
                last = (u32::from(addr.port()) + learners - 1).to_string()
            ),
            Error::NeedsTlsSan(ip) => msg!("class-error-needs-tls-san", ip = ip.to_string()),
            Error::PortInUse { port, learner, source } => msg!(
                "class-error-port-in-use",
                port = port.to_string(),
                learner = learner,
                reason = outside::cause(source)
            ),
            Error::UnknownVariant { lab, variant, known } => {
                msg!("error-unknown-variant", lab = lab, variant = format!("{variant:?}"), known = known)
            }
            Error::UnknownLearner { name, known } => {
                msg!("class-error-unknown-learner", name = name, known = crate::i18n::list(known))
            }
            Error::NoLearnerNamed => msg!("class-error-no-learner-named"),
            Error::LearnerDown(name) => msg!("class-error-learner-down", learner = name),
            Error::Locked { dir, holder: Some(holder) } => msg!(
                "class-error-locked-by",
                dir = shown(dir),
                command = &holder.command,
                pid = holder.pid.to_string(),
                since = &holder.since
            ),
            Error::Locked { dir, holder: None } => msg!("class-error-locked", dir = shown(dir)),
            Error::OlderClassRunning(dir) => msg!("class-error-older-class-running", dir = shown(dir)),
            Error::NoClass(dir) => msg!("class-error-no-class", dir = shown(dir)),
            Error::Lab(error) => error.message(),
            Error::Sim { learner, source } => {
                msg!("class-error-learner", learner = learner, reason = source.message())
            }
            Error::Engine { learner, source } => {
                msg!("class-error-learner", learner = learner, reason = source.message())
            }
            Error::File { path, reason } => msg!("error-file", path = shown(path), reason = reason),
            Error::Interrupted { stopped } => msg!("class-error-interrupted", count = *stopped),
            Error::Board(error) => error.message(),
            Error::Report(error) => error.message(),
            Error::NoLab(dir) => msg!("class-error-no-lab", dir = shown(dir)),
            Error::Runtime(source) => msg!("class-error-runtime", reason = outside::cause(source)),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What `class up` is asked. Options left `None` (or empty) take the recorded class's values;
/// given ones must agree with them.
#[derive(Debug, Clone)]
pub struct UpOptions {
    /// The class directory.
    pub dir: PathBuf,
    /// How many learners (needed for a new class; more than recorded adds learners).
    pub learners: Option<u32>,
    /// The lab to start in each, if any.
    pub lab: Option<String>,
    /// The variant every learner gets.
    pub variant: Option<String>,
    /// The seed the learners' variants are derived from.
    pub seed: Option<u64>,
    /// Where the learners listen: the IP, and the first learner's port (0: any free port each,
    /// then kept).
    pub listen: Option<SocketAddr>,
    /// Extra certificate names.
    pub tls_sans: Vec<String>,
    /// Labs' source.
    pub labs: LabSource,
    /// Language of the briefings (not printed; the start records it).
    pub lang: Lang,
    /// One process per learner, or one for all.
    pub processes: Option<ProcessModel>,
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

/// Now, to the second, as RFC 3339.
pub fn now_rfc3339() -> String {
    k8s_openapi::jiff::Timestamp::now()
        .round(k8s_openapi::jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// One learner's access: endpoint, CA and admin token, read from its simulator's directory, and
/// the learner token their own kubeconfig carries instead (it cannot write the lab's records: see
/// docs/classroom.md, "Who can write what").
#[derive(Clone)]
struct Access {
    name: String,
    server: String,
    ca_pem: String,
    token: String,
    learner_token: String,
}

/// The access of `name`, whose simulator keeps its state in `sim_dir`; `None` before its first
/// start made a CA and a token.
fn read_access(sim_dir: &Path, name: &str, server: String) -> Option<Access> {
    let read = |file: &str| std::fs::read_to_string(sim_dir.join(file)).ok();
    Some(Access {
        name: name.to_string(),
        server,
        ca_pem: read(CA_CERT_FILE)?,
        token: read(ADMIN_TOKEN_FILE)?.trim().to_string(),
        learner_token: read(LEARNER_TOKEN_FILE)?.trim().to_string(),
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
    for Access { name, server, ca_pem, token, .. } in learners {
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

/// The endpoint learner `name` answers at on this host: its running server's, else the one its
/// recorded port gives; `None` before its first start.
fn host_endpoint(record: &ClassRecord, dir: &Path, name: &str) -> Option<String> {
    let sim_dir = record.sim_dir(dir, name);
    if let hosting::SimState::Up { endpoint: Some(endpoint), .. } = hosting::sim_state(&sim_dir) {
        return Some(endpoint);
    }
    let port = record.learner(name)?.port?;
    Some(hosting::serve_options(record, dir, name).endpoint(port))
}

/// Writes every learner's own kubeconfig (the server learners reach) and the instructor's (one
/// context per learner, the server this host reaches), atomically; learners never started yet
/// are left out. Returns each learner's handed-out server.
fn write_kubeconfigs(record: &ClassRecord, dir: &Path) -> Result<Vec<(String, String)>> {
    let mut accesses = Vec::new();
    let mut handed_out = Vec::new();
    for name in record.names() {
        let Some(endpoint) = host_endpoint(record, dir, &name) else { continue };
        let Some(access) = read_access(&record.sim_dir(dir, &name), &name, endpoint) else { continue };
        let learner = Access {
            server: learner_server(&access.server, record.listen, &record.tls_sans),
            token: access.learner_token.clone(),
            ..access.clone()
        };
        let own = render_kubeconfig(std::slice::from_ref(&learner));
        record::write_file(&dir.join(&name).join(KUBECONFIG_FILE), own.as_bytes())?;
        handed_out.push((name, learner.server));
        accesses.push(access);
    }
    record::write_file(&dir.join(KUBECONFIG_FILE), render_kubeconfig(&accesses).as_bytes())?;
    Ok(handed_out)
}

/// The instructor's way to learner `name`'s cluster: the class kubeconfig, whose servers this
/// host reaches (a network class's learners' own kubeconfigs name a host name that may not
/// resolve here).
fn instructor_target(dir: &Path, name: &str) -> ClusterTarget {
    ClusterTarget { kubeconfig: Some(dir.join(KUBECONFIG_FILE)), context: Some(name.to_string()) }
}

/// What a class command did to one learner's simulator.
#[derive(Debug)]
pub enum SimOutcome {
    /// It was running already: left as it was.
    AlreadyUp,
    /// Started (on its recorded port, when it had one).
    Started,
    /// Stopped and started again (`class restart`).
    Restarted,
    /// Not asked (a command about labs).
    Untouched,
    /// It could not be started.
    Failed(Box<Error>),
}

/// What a class command did to one learner's lab.
#[derive(Debug)]
pub enum LabOutcome {
    /// Started before: not applied again.
    AlreadyStarted,
    /// Started now.
    Started,
    /// Its cluster showed the lab started completely (an earlier `class up` was cut off after
    /// the start): recorded, not applied again.
    FoundStarted,
    /// Put back to what `start` leaves (`class reset`).
    Reset,
    /// Not started: the learner's simulator is down.
    LearnerDown,
    /// The start or reset failed.
    Failed(Box<Error>),
}

/// One learner's line of a class command's summary.
#[derive(Debug)]
pub struct LearnerOutcome {
    /// The learner.
    pub name: String,
    /// The server its own kubeconfig names (none before its first start).
    pub server: Option<String>,
    /// Its simulator.
    pub sim: SimOutcome,
    /// The class's lab in it, when the command concerned it.
    pub lab: Option<LabOutcome>,
}

/// What `class up`, `start`, `restart` or `reset` did, learner by learner.
#[derive(Debug)]
pub struct Summary {
    /// The class directory.
    pub dir: PathBuf,
    /// The class's lab.
    pub lab: Option<String>,
    /// Each learner concerned, in order.
    pub learners: Vec<LearnerOutcome>,
}

impl Summary {
    /// The learners that failed, with why.
    pub fn failures(&self) -> Vec<(&str, &Error)> {
        self.learners
            .iter()
            .flat_map(|l| {
                let sim = match &l.sim {
                    SimOutcome::Failed(error) => Some(error.as_ref()),
                    _ => None,
                };
                let lab = match &l.lab {
                    Some(LabOutcome::Failed(error)) => Some(error.as_ref()),
                    _ => None,
                };
                sim.into_iter().chain(lab).map(|e| (l.name.as_str(), e))
            })
            .collect()
    }

    /// 0 when every learner is where it should be, else the first failure's code.
    pub fn exit_code(&self) -> u8 {
        use crate::exit::HasExitCode as _;
        self.failures().first().map_or(crate::exit::OK, |(_, error)| error.exit_code())
    }

    /// The summary for the terminal: one line per learner, then the totals and the kubeconfigs.
    pub fn render(&self, lang: Lang) -> String {
        let mut out = String::new();
        let width = self.learners.iter().map(|l| l.name.len()).max().unwrap_or(0);
        let server_width =
            self.learners.iter().map(|l| l.server.as_deref().unwrap_or("-").len()).max().unwrap_or(0);
        for learner in &self.learners {
            let sim = match &learner.sim {
                SimOutcome::AlreadyUp => tr!(lang, "class-sim-already-up"),
                SimOutcome::Started => tr!(lang, "class-sim-started"),
                SimOutcome::Restarted => tr!(lang, "class-sim-restarted"),
                SimOutcome::Untouched => tr!(lang, "class-sim-untouched"),
                SimOutcome::Failed(_) => tr!(lang, "class-failed"),
            };
            let lab = self.lab.as_deref().unwrap_or("-");
            let lab = match &learner.lab {
                None => String::new(),
                Some(LabOutcome::AlreadyStarted) => tr!(lang, "class-lab-already-started", lab = lab),
                Some(LabOutcome::Started) => tr!(lang, "class-lab-started", lab = lab),
                Some(LabOutcome::FoundStarted) => tr!(lang, "class-lab-found-started", lab = lab),
                Some(LabOutcome::Reset) => tr!(lang, "class-lab-reset", lab = lab),
                Some(LabOutcome::LearnerDown) => tr!(lang, "class-lab-learner-down", lab = lab),
                Some(LabOutcome::Failed(_)) => tr!(lang, "class-lab-failed", lab = lab),
            };
            let server = learner.server.as_deref().unwrap_or("-");
            let line = format!("{:width$}  {server:server_width$}  {sim}  {lab}", learner.name);
            out += line.trim_end();
            out.push('\n');
        }
        let failed = self.failures().len();
        out += &tr!(lang, "class-summary", learners = self.learners.len(), failed = failed);
        out.push('\n');
        out += &tr!(
            lang,
            "class-kubeconfigs",
            class = self.dir.join(KUBECONFIG_FILE).display().to_string(),
            learner = self.dir.join("learner-NN").join(KUBECONFIG_FILE).display().to_string()
        );
        out.push('\n');
        out
    }
}

/// What `class down` did.
#[derive(Debug)]
pub struct Stopped {
    /// Every learner, with the pid of the process that was serving it (None: was not running).
    pub learners: Vec<(String, Option<u32>)>,
    /// Whether the class's files were deleted.
    pub purged: bool,
}

impl Stopped {
    /// `class down`'s line.
    pub fn render(&self, lang: Lang) -> String {
        let running = self.learners.iter().filter(|(_, pid)| pid.is_some()).count();
        let mut processes: Vec<u32> = self.learners.iter().filter_map(|(_, pid)| *pid).collect();
        processes.sort_unstable();
        processes.dedup();
        let (learners, processes) = (self.learners.len(), processes.len());
        let line = if self.purged {
            tr!(lang, "class-down-purged", running = running, learners = learners, processes = processes)
        } else {
            tr!(lang, "class-down-kept", running = running, learners = learners, processes = processes)
        };
        line + "\n"
    }
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

/// `class board`: binds the page's address, prints its URL (with the token, when there is one)
/// on stdout, then grades and serves until Ctrl-C. `options.kubeconfig`, `options.contexts` and
/// `options.class_dir` are filled in from `source`.
pub fn board(source: BoardSource, mut options: board::BoardOptions, labs: &LabSource) -> Result<()> {
    board::check_access(&options)?;
    let lab = match source {
        BoardSource::Class { dir, lab } => {
            let record = record::read(&dir)?;
            options.kubeconfig = Some(dir.join(KUBECONFIG_FILE));
            options.contexts = record.names();
            options.memory.get_or_insert_with(|| dir.join(board::MEMORY_FILE));
            options.class = Some((dir.clone(), record.clone()));
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
        let url = board::url(bound, options.token.as_deref());
        let _ = writeln!(out, "{}", tr!(options.lang, "class-board-url", lab = &lab, url = url));
        let _ = out.flush();
        drop(out);
        tokio::select! {
            served = board::serve(listener, options, bundle) => served?,
            _ = tokio::signal::ctrl_c() => {}
        }
        Ok(())
    })
}

/// How a learner stands in `class status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LearnerState {
    /// Its simulator runs.
    Up,
    /// Stopped (`class down`), or not started yet.
    Stopped,
    /// Its process is gone without stopping: `class restart` brings it back.
    Gone,
}

/// One learner's line of `class status`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LearnerStatus {
    /// The learner.
    pub name: String,
    /// Whether its simulator runs.
    pub state: LearnerState,
    /// The server its own kubeconfig names (kept while it is down: the same on its next start).
    pub endpoint: Option<String>,
    /// Where the class's lab stands in it.
    pub lab: Option<record::LabStart>,
    /// `SCORE/TOTAL` of the class's lab, or why there is none.
    pub score: String,
}

/// `class status`: every learner's state and, when up, its score in the class's lab.
pub fn status(dir: &Path, labs: &LabSource, lang: Lang) -> Result<(ClassRecord, Vec<LearnerStatus>)> {
    let record = record::read(dir)?;
    let bundle = record.lab.as_deref().map(|lab| lab::loader::find(labs, lab)).transpose()?;
    let runtime = runtime()?;
    let lines = runtime.block_on(futures::future::join_all(record.learners.iter().map(|learner| {
        let name = learner.name.clone();
        let bundle = bundle.as_ref();
        let state = match hosting::sim_state(&record.sim_dir(dir, &name)) {
            hosting::SimState::Up { .. } => LearnerState::Up,
            hosting::SimState::Stopped => LearnerState::Stopped,
            hosting::SimState::Gone { .. } => LearnerState::Gone,
        };
        let endpoint = host_endpoint(&record, dir, &name)
            .map(|endpoint| learner_server(&endpoint, record.listen, &record.tls_sans));
        let lab = record.lab.as_deref().and_then(|lab| learner.lab(lab)).map(|l| l.start.clone());
        async move {
            let score = match (&state, bundle) {
                (LearnerState::Stopped | LearnerState::Gone, _) => "-".to_string(),
                (LearnerState::Up, None) => tr!(lang, "class-status-no-lab"),
                (LearnerState::Up, Some(bundle)) => {
                    let graded = async {
                        let cluster = engine::cluster::connect(&instructor_target(dir, &name)).await?;
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
                        Err(error) => {
                            tr!(
                                lang,
                                "class-status-error",
                                reason = crate::i18n::Localized::message(&error).render(lang)
                            )
                        }
                    }
                }
            };
            LearnerStatus { name, state, endpoint, lab, score }
        }
    })));
    Ok((record, lines))
}

/// `class status` as a table.
pub fn render_status(record: &ClassRecord, lines: &[LearnerStatus], lang: Lang) -> String {
    let lab = record.lab.as_deref().unwrap_or("-");
    let mut rows = vec![[
        tr!(lang, "class-status-learner"),
        tr!(lang, "class-status-state"),
        tr!(lang, "class-status-endpoint"),
        tr!(lang, "class-status-lab"),
        tr!(lang, "class-status-score"),
    ]];
    for line in lines {
        let state = match line.state {
            LearnerState::Up => tr!(lang, "class-state-up"),
            LearnerState::Stopped => tr!(lang, "class-state-down"),
            LearnerState::Gone => tr!(lang, "class-state-gone"),
        };
        let started = match &line.lab {
            None => "-".to_string(),
            Some(record::LabStart::Started { .. }) => lab.to_string(),
            Some(record::LabStart::Pending) => tr!(lang, "class-status-lab-pending", lab = lab),
            Some(record::LabStart::Failed { .. }) => tr!(lang, "class-status-lab-failed", lab = lab),
        };
        rows.push([
            line.name.clone(),
            state,
            line.endpoint.clone().unwrap_or_else(|| "-".into()),
            started,
            line.score.clone(),
        ]);
    }
    use unicode_width::UnicodeWidthStr as _;
    let widths: Vec<usize> = (0..5).map(|c| rows.iter().map(|r| r[c].width()).max().unwrap_or(0)).collect();
    rows.iter()
        .map(|row| {
            let cells: Vec<String> = row
                .iter()
                .zip(&widths)
                .map(|(cell, w)| format!("{cell}{}", " ".repeat(w.saturating_sub(cell.width()))))
                .collect();
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
            learner_token: format!("learner{n}"),
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

    fn status_lines() -> (ClassRecord, Vec<LearnerStatus>) {
        let record: ClassRecord = serde_json::from_str(
            r#"{"version": 2, "lab": "gpu-sharing", "listen": "127.0.0.1:0", "learners": []}"#,
        )
        .unwrap();
        let line = |n: u32, state: LearnerState, lab: Option<record::LabStart>, score: &str| LearnerStatus {
            name: learner_name(n),
            state,
            endpoint: Some(format!("https://127.0.0.1:{}", 40000 + n)),
            lab,
            score: score.into(),
        };
        let started = Some(record::LabStart::Started { at: Some("2026-01-01T00:00:00Z".into()) });
        let failed = Some(record::LabStart::Failed { at: "2026-01-01T00:00:00Z".into(), reason: "x".into() });
        let lines = vec![
            line(1, LearnerState::Up, started.clone(), "7/16"),
            line(2, LearnerState::Up, started, "error: cluster unreachable"),
            line(3, LearnerState::Stopped, Some(record::LabStart::Pending), "-"),
            line(4, LearnerState::Gone, failed, "-"),
        ];
        (record, lines)
    }

    #[test]
    fn class_status_is_a_table() {
        let (record, lines) = status_lines();
        insta::assert_snapshot!(render_status(&record, &lines, Lang::En));
    }

    #[test]
    fn class_status_is_a_table_in_japanese() {
        let (record, lines) = status_lines();
        insta::assert_snapshot!(render_status(&record, &lines, Lang::Ja));
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
}
