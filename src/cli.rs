//! Command-line definitions (clap derive) and their resolution into a [`Session`] before any work.
//!
//! As in ripgrep's low/high args: [`Cli`] is what the user typed; [`Session`] is the validated,
//! resolved form (language, cluster target, lab source) every command runs with.

use std::{path::PathBuf, time::Duration};

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::session::{ClusterTarget, LabSource, Lang};

/// Errors from resolving the command line.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `--labs DIR` does not name a directory.
    #[error("--labs {0}: not a directory")]
    LabsDirMissing(PathBuf),
    /// A duration flag could not be read.
    #[error("invalid duration {value:?} for {flag}: use a number with s, m or h, like 30s or 2m")]
    BadDuration {
        /// The flag.
        flag: &'static str,
        /// What was given.
        value: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Runs and grades the hands-on labs of a Kubernetes GPU-sharing course.
///
/// Exit codes: 0 all passed / done, 1 checks failed, 2 bad input, 3 cluster unreachable or API
/// error, 4 timed out waiting.
#[derive(Debug, Parser)]
#[command(name = "lab-runner", version, about, long_about = None, max_term_width = 100, after_help = crate::exit::HELP)]
pub struct Cli {
    /// Global options shared by every command.
    #[command(flatten)]
    pub global: GlobalArgs,
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Options every command accepts, named as kubectl names them.
#[derive(Debug, Args)]
pub struct GlobalArgs {
    /// Path to the kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
    #[arg(long, global = true, env = "KUBECONFIG", value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// More output; repeat for more (-vv).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Language of everything printed (default: from LANG; ja when it starts with "ja").
    // The variable also carries it to the `lab-runner` commands of `demo`'s and `selftest`'s
    // solutions.
    #[arg(long, global = true, value_enum, env = "LAB_RUNNER_LANG")]
    pub lang: Option<LangArg>,
    /// Read lab bundles from this directory instead of the ones built into the binary.
    #[arg(long, global = true, env = "LAB_RUNNER_LABS", value_name = "DIR")]
    pub labs: Option<PathBuf>,
}

/// A language lab texts exist in, as `--lang` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LangArg {
    /// English.
    En,
    /// Japanese.
    Ja,
}

impl From<LangArg> for Lang {
    fn from(lang: LangArg) -> Lang {
        match lang {
            LangArg::En => Lang::En,
            LangArg::Ja => Lang::Ja,
        }
    }
}

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// Coloured text for a terminal.
    #[default]
    Human,
    /// Versioned JSON (documented in docs/report-format.md).
    Json,
    /// JUnit XML for CI systems.
    Junit,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Apply a lab's stages and wait until the cluster is in the lab's starting state.
    Start(StartArgs),
    /// Grade the learner's work: PASS/FAIL/BLOCKED/ERROR per task, with evidence and hints.
    Check(CheckArgs),
    /// Record the answer to a quiz task in the cluster.
    Answer(AnswerArgs),
    /// Reset the cluster to the lab's starting state (instructors).
    Reset(ResetArgs),
    /// Show what a learner of the lab looks at: rollouts, GPU node configs, team quotas.
    Status(StatusArgs),
    /// Prove every check fails before and passes after the reference solution.
    Selftest(SelftestArgs),
    /// Run a lab end to end on a fresh embedded simulator: start, status, solution, check.
    Demo(DemoArgs),
    /// Validate lab bundles: schema, references, hints, texts, no vacuous tasks.
    Lint(LintArgs),
    /// List or show the available labs.
    #[command(subcommand)]
    Labs(LabsCommand),
    /// The embedded simulated GPU cluster.
    #[command(subcommand)]
    Sim(SimCommand),
    /// A class: many learner simulators on this host, one context each in one kubeconfig; or
    /// learners' own kubeconfigs merged into one.
    #[command(subcommand)]
    Class(ClassCommand),
    /// Print a shell completion script.
    Completions(CompletionsArgs),
}

/// `start`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// Lab id (see `lab-runner labs list`).
    pub lab: String,
    /// Which variant of the lab to start (default: chosen from --seed).
    #[arg(long)]
    pub variant: Option<String>,
    /// Seed that picks the default variant reproducibly.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Name the variant started (instructors; it answers a quiz, so learners do not see it).
    #[arg(long)]
    pub reveal: bool,
    /// Replace another variant whose breakage is applied without asking.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Lab id.
    pub lab: String,
    /// Report format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
    /// Show hints up to this tier (1 = nudge, 2 = pointer, 3 = command).
    #[arg(long, value_name = "N")]
    pub hint: Option<u8>,
    /// Instructors: also show the reference solution of failing tasks and the variant started.
    #[arg(long)]
    pub reveal: bool,
    /// Show every task's description (a failing task's is always shown).
    #[arg(long)]
    pub details: bool,
    /// Observe twice, this far apart, and pass only what held both times (e.g. 30s).
    #[arg(long, value_name = "DURATION")]
    pub confirm: Option<String>,
    /// Re-evaluate on every change and show a live checklist; ends when every task passes (or on
    /// Ctrl-C, or at --timeout).
    #[arg(long, conflicts_with_all = ["confirm", "contexts"])]
    pub watch: bool,
    /// With --watch: stop after this long (e.g. 10m) with exit 4 unless every task passed.
    #[arg(long, value_name = "DURATION", requires = "watch")]
    pub timeout: Option<String>,
    /// Grade these kubeconfig contexts (a class); `all` grades every context.
    #[arg(long, value_delimiter = ',', value_name = "CTX,…")]
    pub contexts: Vec<String>,
}

/// `answer`.
#[derive(Debug, Args)]
pub struct AnswerArgs {
    /// Lab id.
    pub lab: String,
    /// Quiz task id.
    pub task: String,
    /// The answer.
    pub value: String,
}

/// `reset`.
#[derive(Debug, Args)]
pub struct ResetArgs {
    /// Lab id.
    pub lab: String,
    /// Reset to the state after this stage instead of the state `start` leaves (every stage).
    #[arg(long, value_name = "STAGE")]
    pub to_stage: Option<String>,
    /// Start the lab again with this variant instead of the one it runs (instructors).
    #[arg(long, conflicts_with_all = ["remove", "seed"])]
    pub variant: Option<String>,
    /// Pick the variant to start again with from this seed, as `start --seed` does.
    #[arg(long, conflicts_with = "remove")]
    pub seed: Option<u64>,
    /// Take the lab off the cluster: what it and its learners created deleted, every pre-image
    /// restored, its inventory deleted (the cluster as before the first `start`).
    #[arg(long, conflicts_with = "to_stage")]
    pub remove: bool,
    /// Print the plan and change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Do not ask before deleting.
    #[arg(long, short = 'y')]
    pub yes: bool,
}

/// `status`.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Lab id (omit with --daemonset).
    pub lab: Option<String>,
    /// Show any DaemonSet as NAMESPACE/NAME.
    #[arg(long, value_name = "NS/NAME")]
    pub daemonset: Option<String>,
    /// Instructors: also show the variant and the facts captured at start (never shown otherwise).
    #[arg(long = "reveal", visible_alias = "instructor")]
    pub instructor: bool,
}

/// `selftest`.
///
/// Runs on a fresh embedded simulator unless `--kubeconfig` or `--context` names a cluster
/// (`$KUBECONFIG` alone does not: the selftest resets the lab, deleting its namespaces).
#[derive(Debug, Args)]
pub struct SelftestArgs {
    /// Lab id.
    pub lab: String,
    /// Variant to test, or `all` (default: every variant).
    #[arg(long)]
    pub variant: Option<String>,
    /// Make the fresh simulator's delays pass this many times faster.
    #[arg(long, default_value_t = crate::engine::selftest::SELFTEST_SPEED)]
    pub speed: f64,
    /// Apply the manifests in this directory (e.g. manifests/clusters/brownfield, a cluster that
    /// already runs things) before the selftest, as a platform team would have.
    #[arg(long, value_name = "DIR")]
    pub fixture: Option<PathBuf>,
}

/// `demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Lab id.
    pub lab: String,
    /// Variant to run.
    #[arg(long)]
    pub variant: Option<String>,
}

/// `lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Lab bundle directories or lab.yaml files (default: every built-in lab).
    pub paths: Vec<PathBuf>,
}

/// `class kubeconfig`.
#[derive(Debug, Args)]
pub struct ClassKubeconfigArgs {
    /// Learners' kubeconfig files or `sim up` state directories.
    #[arg(required = true, value_name = "FILE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// The learners' names, once per input in order (default: from the file or directory names).
    #[arg(long = "name", value_name = "NAME")]
    pub names: Vec<String>,
    /// Write the merged kubeconfig here (mode 0600) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// `labs`.
#[derive(Debug, Subcommand)]
pub enum LabsCommand {
    /// List labs: id, title, tasks and points.
    List,
    /// Show one lab: briefing, stages, tasks.
    Show {
        /// Lab id.
        lab: String,
        /// Instructors: also what this variant breaks, the quiz answers it accepts and the
        /// shortcuts the selftest proves do not pass (never shown otherwise).
        #[arg(long, value_name = "VARIANT")]
        variant: Option<String>,
    },
}

/// `sim`.
#[derive(Debug, Subcommand)]
pub enum SimCommand {
    /// Start the simulator in the background and write its kubeconfig.
    Up(SimUpArgs),
    /// Stop the background simulator.
    Down(SimStateArgs),
    /// Show the background simulator: pid, endpoint, uptime, object counts.
    Status(SimStateArgs),
    /// Run the simulator in the foreground.
    Serve(SimUpArgs),
    /// Print the simulator's admin kubeconfig (e.g. `docker exec CONTAINER lab-runner sim
    /// kubeconfig --server https://127.0.0.1:PORT` for a published container port).
    Kubeconfig(SimKubeconfigArgs),
}

/// `sim kubeconfig`.
#[derive(Debug, Args)]
pub struct SimKubeconfigArgs {
    /// State directory.
    #[command(flatten)]
    pub state: SimStateArgs,
    /// The server URL to write (default: the running simulator's endpoint).
    #[arg(long, value_name = "URL")]
    pub server: Option<String>,
}

/// Where the simulator keeps its state.
#[derive(Debug, Args)]
pub struct SimStateArgs {
    /// State directory: store, certificates, kubeconfig, pid file.
    #[arg(long, env = "LAB_RUNNER_SIM_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// `sim up` / `sim serve`.
#[derive(Debug, Args)]
pub struct SimUpArgs {
    /// State directory.
    #[command(flatten)]
    pub state: SimStateArgs,
    /// Cluster topology file (default: the built-in lab topology).
    #[arg(long, value_name = "FILE", conflicts_with = "nodes")]
    pub topology: Option<PathBuf>,
    /// Generate a topology with this many worker nodes instead.
    #[arg(long, value_name = "N")]
    pub nodes: Option<u32>,
    /// Port on 127.0.0.1 (default: any free port).
    #[arg(long, conflicts_with = "listen")]
    pub port: Option<u16>,
    /// Address to listen on, `IP:PORT` or `IP` (any free port), e.g. `0.0.0.0:6443` in a
    /// container (default: 127.0.0.1). TLS and tokens stay on.
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    pub listen: Option<std::net::SocketAddr>,
    /// Another name the server certificate carries (DNS name or IP address), besides
    /// 127.0.0.1 and localhost; repeatable.
    #[arg(long = "tls-san", value_name = "NAME")]
    pub tls_sans: Vec<String>,
    /// Make simulated delays pass this many times faster.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// Serve the API only: no scheduler, kubelets or controllers reconcile what is written
    /// (like a kube-apiserver alone).
    #[arg(long)]
    pub api_only: bool,
}

/// `class`.
#[derive(Debug, Subcommand)]
pub enum ClassCommand {
    /// Start N learner simulators (one process each), write DIR/kubeconfig (one context per
    /// learner) and DIR/learner-NN/kubeconfig, and start the lab in each.
    Up(ClassUpArgs),
    /// Show every learner: up or down, endpoint, lab, score.
    Status(ClassStateArgs),
    /// Stop every learner (state kept unless --purge).
    Down(ClassDownArgs),
    /// Serve the instructor's live page: learners × tasks, updated as learners work.
    Board(ClassBoardArgs),
    /// One class report (the shape of `check --contexts all --format json`): the learners of a
    /// class graded now, report files, or the grade Job's results in the cluster.
    Report(ClassReportArgs),
    /// Merge learners' kubeconfigs (files or simulators' state directories) into one with a
    /// context per learner (named after the file or directory), leaving viewer contexts out.
    Kubeconfig(ClassKubeconfigArgs),
    /// Serve every learner of a class in this process (what `class up --processes shared` runs).
    #[command(hide = true)]
    ServeShared(ClassServeSharedArgs),
}

/// How `class up` hosts the learners' simulators.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ProcessesArg {
    /// One process per learner (isolated by the operating system).
    #[default]
    PerLearner,
    /// One process for every learner.
    Shared,
}

/// `class serve-shared`.
#[derive(Debug, Args)]
pub struct ClassServeSharedArgs {
    /// Class directory.
    #[arg(long, value_name = "DIR")]
    pub state_dir: PathBuf,
    /// How many learners.
    #[arg(long, value_name = "N")]
    pub learners: u32,
    /// Address of learner 1 (port 0: any free port each).
    #[arg(long, value_name = "ADDR")]
    pub listen: std::net::SocketAddr,
    /// Another name the learners' certificates carry; repeatable.
    #[arg(long = "tls-san", value_name = "NAME")]
    pub tls_sans: Vec<String>,
}

/// Where a class keeps its learners.
#[derive(Debug, Args)]
pub struct ClassStateArgs {
    /// Class directory: class.json, kubeconfig, learner-01/ … (default:
    /// $XDG_STATE_HOME/lab-runner/class).
    #[arg(long, env = "LAB_RUNNER_CLASS_DIR", value_name = "DIR")]
    pub state_dir: Option<PathBuf>,
}

/// `class up`.
#[derive(Debug, Args)]
pub struct ClassUpArgs {
    /// Class directory.
    #[command(flatten)]
    pub state: ClassStateArgs,
    /// How many learners (1 to 100).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32))]
    pub learners: u32,
    /// Lab to start in every learner's cluster.
    #[arg(long)]
    pub lab: Option<String>,
    /// The variant every learner gets.
    #[arg(long, requires = "lab", conflicts_with = "seed")]
    pub variant: Option<String>,
    /// Seed the learners' variants come from: learner 1 gets what `start --seed S` picks, each
    /// next learner the next variant.
    #[arg(long, requires = "lab")]
    pub seed: Option<u64>,
    /// Address the learners listen on, `IP` (any free port each) or `IP:PORT` (learner N on
    /// PORT+N-1) (default: 127.0.0.1).
    #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
    pub listen: Option<std::net::SocketAddr>,
    /// Another name the learners' certificates carry; repeatable.
    #[arg(long = "tls-san", value_name = "NAME")]
    pub tls_sans: Vec<String>,
    /// One simulator process per learner (default), or one process for all.
    #[arg(long, value_enum, default_value_t)]
    pub processes: ProcessesArg,
}

/// `class down`.
#[derive(Debug, Args)]
pub struct ClassDownArgs {
    /// Class directory.
    #[command(flatten)]
    pub state: ClassStateArgs,
    /// Also delete the learners' state, the kubeconfigs and the class record.
    #[arg(long)]
    pub purge: bool,
}

/// `class report`.
#[derive(Debug, Args)]
pub struct ClassReportArgs {
    /// Class directory: grades every learner of the class now (the default when neither report
    /// files nor --job are given).
    #[command(flatten)]
    pub state: ClassStateArgs,
    /// Report files: a learner's `check --format json` each (named after the file, or its
    /// directory for `report.json`), or class reports.
    #[arg(value_name = "FILE", conflicts_with = "job")]
    pub files: Vec<PathBuf>,
    /// The grade Job of deploy/kubernetes (`NAMESPACE/NAME`): its results ConfigMaps, read with
    /// --kubeconfig/--context.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub job: Option<String>,
    /// The lab (default: the class's, or the reports').
    #[arg(long)]
    pub lab: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// `class board`.
#[derive(Debug, Args)]
pub struct ClassBoardArgs {
    /// Class directory: grades every learner of the class in its lab (default:
    /// $XDG_STATE_HOME/lab-runner/class, unless --contexts is given).
    #[command(flatten)]
    pub state: ClassStateArgs,
    /// Grade these contexts of --kubeconfig instead of a class directory; `all`: every context.
    #[arg(long, value_delimiter = ',', value_name = "CTX", requires = "lab")]
    pub contexts: Vec<String>,
    /// The lab to grade (default: the class's lab).
    #[arg(long)]
    pub lab: Option<String>,
    /// Address the page is served on (default: 127.0.0.1:8420).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8420")]
    pub listen: std::net::SocketAddr,
    /// How soon a learner whose cluster cannot be reached is tried again (learners that are
    /// reached are re-graded on every change, by their watches).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_board_duration)]
    pub retry: Duration,
    /// Mark a learner whose report has not changed for this long.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_board_duration)]
    pub stalled_after: Duration,
}

/// A board duration: what [`parse_duration`] reads, or milliseconds (`500ms`) for quick tests.
fn parse_board_duration(text: &str) -> Result<Duration, String> {
    match text.strip_suffix("ms").map(str::parse::<u64>) {
        Some(Ok(millis)) => Ok(Duration::from_millis(millis)),
        _ => parse_duration("duration", text).map_err(|e| e.to_string()),
    }
}

/// `--listen`: `IP:PORT`, or a bare IP for any free port on it.
fn parse_listen(text: &str) -> Result<std::net::SocketAddr, String> {
    text.parse::<std::net::SocketAddr>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(|ip| std::net::SocketAddr::new(ip, 0)))
        .map_err(|_| format!("`{text}` is not an address: expected IP:PORT (e.g. 0.0.0.0:6443) or IP"))
}

/// `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}

/// The locale the environment asks for: `LC_ALL`, else `LANG`.
pub fn locale() -> Option<String> {
    std::env::var("LC_ALL").ok().filter(|v| !v.is_empty()).or_else(|| std::env::var("LANG").ok())
}

/// The language `--lang` asks for, else the one of `locale`.
pub fn lang_of(cli: &Cli, locale: Option<&str>) -> Lang {
    cli.global.lang.map(Lang::from).unwrap_or_else(|| Lang::from_locale(locale))
}

/// The resolved command line: everything a command needs, validated, before any work starts.
#[derive(Debug)]
pub struct Session {
    /// Language for texts.
    pub lang: Lang,
    /// Verbosity (0 = normal).
    pub verbosity: u8,
    /// The cluster to talk to.
    pub cluster: ClusterTarget,
    /// Where labs come from.
    pub labs: LabSource,
    /// `check`'s durations, parsed once here.
    pub check_durations: CheckDurations,
    /// The command, as typed.
    pub command: Command,
}

/// The durations `check` was given, parsed (none for other commands).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckDurations {
    /// `--confirm`: observe twice, this far apart.
    pub confirm: Option<Duration>,
    /// `--timeout` of `--watch`.
    pub timeout: Option<Duration>,
}

impl Session {
    /// Resolves the parsed command line, reading `LANG`/`LC_ALL` for the default language.
    pub fn resolve(cli: Cli) -> Result<Session> {
        Self::resolve_with_locale(cli, locale().as_deref())
    }

    /// As [`Session::resolve`], with the locale given (for tests).
    pub fn resolve_with_locale(cli: Cli, locale: Option<&str>) -> Result<Session> {
        let GlobalArgs { kubeconfig, context, verbose, lang, labs } = cli.global;
        let labs = match labs {
            Some(dir) if dir.is_dir() => LabSource::Dir(dir),
            Some(dir) => return Err(Error::LabsDirMissing(dir)),
            None => LabSource::BuiltIn,
        };
        let mut check_durations = CheckDurations::default();
        if let Command::Check(CheckArgs { confirm, timeout, .. }) = &cli.command {
            let parse =
                |flag, value: &Option<String>| value.as_deref().map(|v| parse_duration(flag, v)).transpose();
            check_durations = CheckDurations {
                confirm: parse("--confirm", confirm)?,
                timeout: parse("--timeout", timeout)?,
            };
        }
        Ok(Session {
            lang: lang.map(Lang::from).unwrap_or_else(|| Lang::from_locale(locale)),
            verbosity: verbose,
            cluster: ClusterTarget { kubeconfig, context },
            labs,
            check_durations,
            command: cli.command,
        })
    }
}

/// Parses `30s`, `2m`, `1h` or a bare number of seconds.
pub fn parse_duration(flag: &'static str, value: &str) -> Result<Duration> {
    let bad = || Error::BadDuration { flag, value: value.to_string() };
    let (number, unit) = value.split_at(value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len()));
    let number: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "" | "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        _ => return Err(bad()),
    };
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(args: &[&str], locale: Option<&str>) -> Session {
        let cli = Cli::try_parse_from(std::iter::once("lab-runner").chain(args.iter().copied())).unwrap();
        Session::resolve_with_locale(cli, locale).unwrap()
    }

    #[test]
    fn language_comes_from_flag_then_locale() {
        assert_eq!(session(&["labs", "list"], Some("ja_JP.UTF-8")).lang, Lang::Ja);
        assert_eq!(session(&["labs", "list"], Some("C.UTF-8")).lang, Lang::En);
        assert_eq!(session(&["--lang", "en", "labs", "list"], Some("ja_JP.UTF-8")).lang, Lang::En);
        assert_eq!(session(&["labs", "list", "--lang", "ja"], None).lang, Lang::Ja);
    }

    #[test]
    fn globals_resolve_into_the_cluster_target() {
        let s = session(&["check", "x", "--context", "kind-a", "--kubeconfig", "/tmp/k", "-vv"], None);
        assert_eq!(s.cluster.kubeconfig.as_deref(), Some(std::path::Path::new("/tmp/k")));
        assert_eq!(s.cluster.context.as_deref(), Some("kind-a"));
        assert_eq!(s.verbosity, 2);
        assert_eq!(s.labs, LabSource::BuiltIn);
    }

    #[test]
    fn bad_values_are_rejected_before_work() {
        let cli = Cli::try_parse_from(["lab-runner", "--labs", "/nonexistent/dir", "labs", "list"]).unwrap();
        assert!(matches!(Session::resolve_with_locale(cli, None), Err(Error::LabsDirMissing(_))));
        let cli = Cli::try_parse_from(["lab-runner", "check", "x", "--confirm", "soon"]).unwrap();
        assert!(matches!(Session::resolve_with_locale(cli, None), Err(Error::BadDuration { .. })));
        let cli = Cli::try_parse_from(["lab-runner", "check", "x", "--watch", "--timeout", "2x"]).unwrap();
        assert!(matches!(
            Session::resolve_with_locale(cli, None),
            Err(Error::BadDuration { flag: "--timeout", .. })
        ));
    }

    #[test]
    fn check_durations_are_parsed_once_into_the_session() {
        let s = session(&["check", "x", "--confirm", "2m"], None);
        assert_eq!(
            s.check_durations,
            CheckDurations { confirm: Some(Duration::from_secs(120)), timeout: None }
        );
        let s = session(&["check", "x", "--watch", "--timeout", "90"], None);
        assert_eq!(s.check_durations.timeout, Some(Duration::from_secs(90)));
        assert_eq!(session(&["labs", "list"], None).check_durations, CheckDurations::default());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("f", "30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("f", "2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("f", "45").unwrap(), Duration::from_secs(45));
        assert!(parse_duration("f", "1d").is_err());
    }
}
