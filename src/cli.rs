//! The command line: clap's definitions, and their resolution into a [`Session`] and each command's options before any work.
//!
//! As in ripgrep's low/high args: [`Cli`] is what the user typed; [`resolve`] validates it into
//! an [`Invocation`]: the [`Session`] (language, cluster target, lab source) and the command's
//! options from `commands/`. Nothing outside this module sees clap's types. The clap `Command`
//! is built in one place, [`command`], in the learner's language: the language is read from the
//! arguments and the environment before parsing ([`lang_before_parsing`]), [`help`] sets every
//! text of the tree from the catalog, and [`usage_error`] renders clap's errors through it.
//! The doc comments below say what each flag is for the code's readers; what `--help` prints is
//! the catalog's (`help-<command>--<flag>` in `src/i18n/*.ftl`).

pub mod help;
pub mod usage_error;

use std::{ffi::OsString, path::PathBuf, time::Duration};

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand, ValueEnum};

use crate::{
    commands::{self, Error, Invocation, Result},
    english_display,
    i18n::{Localized, Message},
    msg,
    session::{ClusterTarget, LabSource, Lang, Session},
};

/// Runs and grades the hands-on labs of a Kubernetes GPU-sharing course.
///
/// The texts of every page are the catalog's ([`command`]).
#[derive(Debug, Parser)]
#[command(name = "lab-runner", version, about, long_about = None, max_term_width = 100)]
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

/// Output format of a report, as `--format` spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum FormatArg {
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
    #[arg(long, value_parser = whole::<u64>)]
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
    pub format: FormatArg,
    /// Show hints up to this tier (1 = nudge, 2 = pointer, 3 = command).
    #[arg(long, value_name = "N", value_parser = whole::<u8>)]
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
    #[arg(long = "reveal", alias = "instructor")]
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
    #[arg(long, default_value_t = crate::engine::selftest::SELFTEST_SPEED, value_parser = factor)]
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
        /// Instructors: also the quiz answers (of every variant, for a lab with variants) and
        /// the shortcuts the selftest proves do not pass (never shown otherwise).
        #[arg(long = "reveal", alias = "instructor")]
        reveal: bool,
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
    /// Print the learner's own timeline kept in the state directory: the writes to the cluster
    /// (its audit log) and what each `check` saw (verdict changes, answers, hints).
    Timeline(SimTimelineArgs),
}

/// `sim timeline`.
#[derive(Debug, Args)]
pub struct SimTimelineArgs {
    /// State directory.
    #[command(flatten)]
    pub state: SimStateArgs,
    /// Output format.
    #[arg(long, value_enum, default_value_t)]
    pub format: TimelineFormatArg,
}

/// `sim timeline --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum TimelineFormatArg {
    /// A table for a terminal.
    #[default]
    Human,
    /// The events as JSON.
    Json,
    /// CSV for spreadsheets.
    Csv,
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
    #[arg(long, value_name = "N", value_parser = whole::<u32>)]
    pub nodes: Option<u32>,
    /// Port on 127.0.0.1 (default: any free port).
    #[arg(long, conflicts_with = "listen", value_parser = whole::<u16>)]
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
    #[arg(long, default_value_t = 1.0, value_parser = factor)]
    pub speed: f64,
    /// Serve the API only: no scheduler, kubelets or controllers reconcile what is written
    /// (like a kube-apiserver alone).
    #[arg(long)]
    pub api_only: bool,
    /// Keep no audit log of the writes to the cluster (default: `audit.log` in the state
    /// directory, which `sim timeline` reads).
    #[arg(long)]
    pub no_audit_log: bool,
}

/// `class`.
#[derive(Debug, Subcommand)]
pub enum ClassCommand {
    /// Create a class of N learner simulators (one process each), or bring the recorded class
    /// back: start what is down on the same ports, and the lab in every learner that has not
    /// started it (never again in one who has). Writes DIR/kubeconfig (one context per learner)
    /// and DIR/learner-NN/kubeconfig.
    Up(ClassUpArgs),
    /// Start LAB in every learner that has not started it, and make it the class's lab (a class
    /// made without --lab, or the course's next lab).
    Start(ClassStartArgs),
    /// Stop and start these learners' simulators again, on their ports, keeping their work.
    Restart(ClassLearnersArgs),
    /// Put the class's lab in these learners' clusters back to what its start left.
    Reset(ClassLearnersArgs),
    /// Show every learner: up or down, endpoint, lab, score.
    Status(ClassStateArgs),
    /// Stop every learner at once (state kept unless --purge).
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

/// `class serve-shared`: every learner of the class record in DIR, on its recorded port.
#[derive(Debug, Args)]
pub struct ClassServeSharedArgs {
    /// Class directory.
    #[arg(long, value_name = "DIR")]
    pub state_dir: PathBuf,
}

/// `class start`.
#[derive(Debug, Args)]
pub struct ClassStartArgs {
    /// Class directory.
    #[command(flatten)]
    pub state: ClassStateArgs,
    /// The lab.
    pub lab: String,
    /// The variant every learner gets.
    #[arg(long, conflicts_with = "seed")]
    pub variant: Option<String>,
    /// Seed the learners' variants come from (default: the class's).
    #[arg(long, value_parser = whole::<u64>)]
    pub seed: Option<u64>,
}

/// `class restart` and `class reset`.
#[derive(Debug, Args)]
pub struct ClassLearnersArgs {
    /// Class directory.
    #[command(flatten)]
    pub state: ClassStateArgs,
    /// The learners (learner-03 …), or `all`.
    #[arg(value_name = "LEARNER", required = true)]
    pub learners: Vec<String>,
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
    /// How many learners (1 to 100): needed to create a class; more than it has adds learners.
    #[arg(long, value_name = "N", value_parser = whole::<u32>)]
    pub learners: Option<u32>,
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
    /// One simulator process per learner (default for a new class), or one process for all.
    #[arg(long, value_enum)]
    pub processes: Option<ProcessesArg>,
    /// What the class's timeline (CLASS/timeline.db) records from now on: nothing, verdict
    /// changes with their evidence and starts/resets/restarts, or also answers and hints
    /// (default for a new class: all).
    #[arg(long, value_enum, value_name = "WHAT")]
    pub record: Option<RecordArg>,
}

/// What a class's timeline records (`class up --record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecordArg {
    /// Nothing.
    None,
    /// Verdict changes with their evidence, starts, resets and restarts.
    Verdicts,
    /// Also every answer (value, right or wrong, attempt) and each hint level shown.
    All,
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
    /// A grading run of deploy/kubernetes (`NAMESPACE/NAME`, a Job made from the grade CronJob):
    /// its results ConfigMaps (also once the Job is gone), read with
    /// --kubeconfig/--context.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub job: Option<String>,
    /// The lab (default: the class's, or the reports').
    #[arg(long)]
    pub lab: Option<String>,
    /// Output format (csv: the class view per task, or the learner's timeline, for spreadsheets).
    #[arg(long, value_enum, default_value_t)]
    pub format: ClassReportFormatArg,
    /// Print this learner's timeline (kept in the class directory) instead of the class report.
    #[arg(long, value_name = "NAME", conflicts_with_all = ["files", "job"])]
    pub learner: Option<String>,
    /// Show the answers' values in the timeline and the most common wrong answers (for the
    /// instructor's own screen).
    #[arg(long)]
    pub reveal: bool,
}

/// `class report --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum ClassReportFormatArg {
    /// A table for a terminal, with where the class is stuck.
    #[default]
    Human,
    /// Versioned JSON (docs/report-format.md), with `classView`.
    Json,
    /// JUnit XML for CI systems.
    Junit,
    /// CSV for spreadsheets.
    Csv,
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
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8420", value_parser = socket_address)]
    pub listen: std::net::SocketAddr,
    /// How soon a learner whose cluster cannot be reached is tried again (learners that are
    /// reached are re-graded on every change, by their watches).
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_board_duration)]
    pub retry: Duration,
    /// Mark a learner who has not finished and whose verdicts have not changed for this long.
    #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_board_duration)]
    pub stalled_after: Duration,
    /// The token every request must carry (`generate`: a random one, printed in the URL at
    /// start); required on any address other than loopback.
    #[arg(long, env = "LAB_RUNNER_BOARD_TOKEN", value_name = "TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Show quiz answers, variants and solutions on the board (never project it then).
    #[arg(long = "reveal", alias = "instructor")]
    pub reveal: bool,
    /// Where each learner's "unchanged for" clock is kept across board restarts (default: the
    /// class directory's board.json; none with --contexts).
    #[arg(long, value_name = "FILE")]
    pub memory: Option<PathBuf>,
}

/// A value of a flag that cannot be read: clap reports it as a usage error (exit 2), with these
/// words in the learner's language ([`usage_error`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    /// Not a whole number from 0 to `max`.
    NotAWholeNumber {
        /// The largest value the flag takes.
        max: u64,
    },
    /// Not a number (a speed factor).
    NotANumber,
    /// Not a duration (`30s`, `2m`, `1h`, a number of seconds).
    NotADuration,
    /// Not `IP:PORT` or `IP`.
    NotAListenAddress,
    /// Not `IP:PORT`.
    NotASocketAddress,
}

impl Localized for ValueError {
    fn message(&self) -> Message {
        match self {
            ValueError::NotAWholeNumber { max } => msg!("value-not-a-whole-number", max = max.to_string()),
            ValueError::NotANumber => msg!("value-not-a-number"),
            ValueError::NotADuration => msg!("value-not-a-duration"),
            ValueError::NotAListenAddress => msg!("value-not-a-listen-address"),
            ValueError::NotASocketAddress => msg!("value-not-a-socket-address"),
        }
    }
}
english_display!(ValueError);

/// An unsigned integer type a flag takes, with its largest value.
pub trait Whole: TryFrom<u64> {
    /// The largest value.
    const MAX: u64;
}
impl Whole for u8 {
    const MAX: u64 = u8::MAX as u64;
}
impl Whole for u16 {
    const MAX: u64 = u16::MAX as u64;
}
impl Whole for u32 {
    const MAX: u64 = u32::MAX as u64;
}
impl Whole for u64 {
    const MAX: u64 = u64::MAX;
}

/// A whole number from 0 to `T::MAX`.
fn whole<T: Whole>(text: &str) -> std::result::Result<T, ValueError> {
    let bad = ValueError::NotAWholeNumber { max: T::MAX };
    text.parse::<u64>().ok().and_then(|n| T::try_from(n).ok()).ok_or(bad)
}

/// A speed factor: a number (whether it is above 0 is the command's to say).
fn factor(text: &str) -> std::result::Result<f64, ValueError> {
    text.parse::<f64>().map_err(|_| ValueError::NotANumber)
}

/// `IP:PORT`.
fn socket_address(text: &str) -> std::result::Result<std::net::SocketAddr, ValueError> {
    text.parse().map_err(|_| ValueError::NotASocketAddress)
}

/// A board duration: what [`parse_duration`] reads, or milliseconds (`500ms`) for quick tests.
fn parse_board_duration(text: &str) -> std::result::Result<Duration, ValueError> {
    match text.strip_suffix("ms").map(str::parse::<u64>) {
        Some(Ok(millis)) => Ok(Duration::from_millis(millis)),
        _ => parse_duration(text),
    }
}

/// `--listen`: `IP:PORT`, or a bare IP for any free port on it.
fn parse_listen(text: &str) -> std::result::Result<std::net::SocketAddr, ValueError> {
    text.parse::<std::net::SocketAddr>()
        .or_else(|_| text.parse::<std::net::IpAddr>().map(|ip| std::net::SocketAddr::new(ip, 0)))
        .map_err(|_| ValueError::NotAListenAddress)
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

/// The language of the help and of a usage error, read before parsing (which may fail, or print
/// the help): `--lang` among `args` (the program's name first) before any `--`, else
/// `$LAB_RUNNER_LANG`, else `locale`, as the parsed `--lang` would resolve. A value that is not a
/// language is left for clap to refuse.
pub fn lang_before_parsing(args: &[OsString], locale: Option<&str>) -> Lang {
    let named = |value: &str| LangArg::from_str(value, false).ok().map(Lang::from);
    let mut rest = args.iter().skip(1).map(|arg| arg.to_string_lossy());
    while let Some(arg) = rest.next() {
        if arg == "--" {
            break;
        }
        let value = match arg.strip_prefix("--lang") {
            Some("") => rest.next().map(|value| value.into_owned()),
            Some(inline) => inline.strip_prefix('=').map(str::to_string),
            None => None,
        };
        if let Some(lang) = value.as_deref().and_then(named) {
            return lang;
        }
    }
    std::env::var("LAB_RUNNER_LANG")
        .ok()
        .as_deref()
        .and_then(named)
        .unwrap_or_else(|| Lang::from_locale(locale))
}

/// The clap command `lab-runner` parses, with every text in `lang` ([`help`]). Parsing and
/// completions both start here.
pub fn command(lang: Lang) -> clap::Command {
    help::localize(Cli::command(), lang)
}

/// Parses `args` (the program's name first) with the help in `lang`: the help and the version
/// are printed and exit 0 as clap does; a usage error is printed in `lang` and exits 2, the
/// documented code for bad input.
pub fn parse(args: Vec<OsString>, lang: Lang) -> Cli {
    match try_parse_in(args, lang) {
        Ok(cli) => cli,
        Err(error) if is_usage_error(&error) => {
            eprint!("{}", usage_error::render(&error, lang));
            std::process::exit(crate::exit::BAD_INPUT.into())
        }
        Err(error) => error.exit(),
    }
}

/// Whether clap's `error` is the user's mistake, not the help or the version they asked for.
fn is_usage_error(error: &clap::Error) -> bool {
    use clap::error::ErrorKind;
    !matches!(
        error.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            | ErrorKind::Io
            | ErrorKind::Format
    )
}

/// Parses `args` (the program's name first) with the help in `lang`.
pub fn try_parse_in<I, T>(args: I, lang: Lang) -> std::result::Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    Cli::from_arg_matches(&command(lang).try_get_matches_from(args)?)
}

/// Parses `args` (the program's name first), with the help in English.
pub fn try_parse_from<I, T>(args: I) -> std::result::Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    try_parse_in(args, Lang::En)
}

/// Resolves the parsed command line, reading `LANG`/`LC_ALL` for the default language.
pub fn resolve(cli: Cli) -> Result<Invocation> {
    resolve_with_locale(cli, locale().as_deref())
}

/// As [`resolve`], with the locale given (for tests).
pub fn resolve_with_locale(cli: Cli, locale: Option<&str>) -> Result<Invocation> {
    let GlobalArgs { kubeconfig, context, verbose, lang, labs } = cli.global;
    let labs = match labs {
        Some(dir) if dir.is_dir() => LabSource::Dir(dir),
        Some(dir) => return Err(Error::LabsDirMissing(dir)),
        None => LabSource::BuiltIn,
    };
    let session = Session {
        lang: lang.map(Lang::from).unwrap_or_else(|| Lang::from_locale(locale)),
        verbosity: verbose,
        cluster: ClusterTarget { kubeconfig, context },
        labs,
    };
    let command = resolve_command(cli.command, &session)?;
    Ok(Invocation { session, command })
}

/// One command's flags, validated into its options.
fn resolve_command(command: Command, session: &Session) -> Result<commands::Command> {
    use commands::{Command as Run, answer, demo, labs, lint, reset, start};
    Ok(match command {
        Command::Start(StartArgs { lab, variant, seed, reveal, yes }) => {
            Run::Start(start::Options { lab, variant, seed, reveal, yes })
        }
        Command::Check(args) => Run::Check(check_options(args)?),
        Command::Answer(AnswerArgs { lab, task, value }) => Run::Answer(answer::Options { lab, task, value }),
        Command::Reset(ResetArgs { lab, to_stage, variant, seed, remove, dry_run, yes }) => {
            let goal =
                if remove { reset::Goal::Remove } else { reset::Goal::Start { to_stage, variant, seed } };
            Run::Reset(reset::Options { lab, goal, dry_run, yes })
        }
        Command::Status(args) => Run::Status(status_options(args)?),
        Command::Selftest(args) => Run::Selftest(selftest_options(args, &session.cluster)?),
        Command::Demo(DemoArgs { lab, variant }) => Run::Demo(demo::Options { lab, variant }),
        Command::Lint(LintArgs { paths }) => Run::Lint(lint::Options { paths }),
        Command::Labs(LabsCommand::List) => Run::Labs(labs::Options::List),
        Command::Labs(LabsCommand::Show { lab, variant, reveal }) => {
            Run::Labs(labs::Options::Show { lab, variant, reveal })
        }
        Command::Sim(command) => Run::Sim(sim_options(command, session.verbosity)?),
        Command::Class(command) => Run::Class(class_options(command, session)?),
        Command::Completions(CompletionsArgs { shell }) => {
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut self::command(session.lang), "lab-runner", &mut script);
            let script = String::from_utf8_lossy(&script).into_owned();
            Run::Completions(commands::completions::Options { script })
        }
    })
}

impl From<FormatArg> for commands::Format {
    fn from(format: FormatArg) -> commands::Format {
        match format {
            FormatArg::Human => commands::Format::Human,
            FormatArg::Json => commands::Format::Json,
            FormatArg::Junit => commands::Format::Junit,
        }
    }
}

/// `check`'s flags: its durations parsed once, its mode chosen.
fn check_options(args: CheckArgs) -> Result<commands::check::Options> {
    use crate::engine::check::{Help, Observations};
    use commands::check::{Contexts, Mode, Options, WatchTimeout};
    let CheckArgs { lab, format, hint, reveal, details, confirm, watch, timeout, contexts } = args;
    let duration = |flag: &'static str, value: &str| {
        parse_duration(value).map_err(|_| Error::BadDuration { flag, value: value.to_string() })
    };
    let observations = match confirm.as_deref().map(|v| duration("--confirm", v)).transpose()? {
        Some(apart) => Observations::Confirmed(apart),
        None => Observations::Once,
    };
    let mode = if watch {
        let timeout = match timeout {
            Some(typed) => Some(WatchTimeout { after: duration("--timeout", &typed)?, typed }),
            None => None,
        };
        Mode::Watch { timeout }
    } else if !contexts.is_empty() {
        let contexts = if contexts == ["all"] { Contexts::All } else { Contexts::Named(contexts) };
        Mode::Class { contexts, observations }
    } else {
        Mode::Report(observations)
    };
    Ok(Options { lab, format: format.into(), help: Help { hint, reveal, details, ..Help::default() }, mode })
}

/// `status`'s flags: a DaemonSet (`NAMESPACE/NAME`) or a lab, one of which is needed.
fn status_options(args: StatusArgs) -> Result<commands::status::Options> {
    use crate::engine;
    use commands::status::Options;
    let StatusArgs { lab, daemonset, instructor } = args;
    match (daemonset, lab) {
        (Some(text), lab) => {
            Ok(Options::DaemonSet { daemon_set: engine::status::parse_daemonset(&text)?, lab })
        }
        (None, Some(lab)) => Ok(Options::Lab { lab, instructor }),
        (None, None) => Err(Error::Engine(engine::Error::BadInput(crate::msg!("status-needs-target")))),
    }
}

/// `selftest`'s flags: the speed checked, and whether the user named a cluster.
fn selftest_options(args: SelftestArgs, cluster: &ClusterTarget) -> Result<commands::selftest::Options> {
    use commands::selftest::{Options, Where};
    let SelftestArgs { lab, variant, speed, fixture } = args;
    if !(speed.is_finite() && speed > 0.0) {
        let text = crate::msg!("selftest-bad-speed", speed = speed.to_string());
        return Err(Error::Engine(crate::engine::Error::BadInput(text)));
    }
    let cluster = if names_a_cluster(cluster) { Where::Named } else { Where::FreshSimulator };
    Ok(Options { lab, variant, cluster, speed, fixture })
}

/// Whether the user named a cluster for `selftest`: `--context`, or a `--kubeconfig` other than
/// `$KUBECONFIG` (clap fills the flag from the variable, and a variable left set from daily work
/// must not send a selftest, which resets the lab, to that cluster).
fn names_a_cluster(cluster: &ClusterTarget) -> bool {
    let from_env = std::env::var_os("KUBECONFIG");
    cluster.context.is_some()
        || cluster.kubeconfig.as_ref().is_some_and(|path| Some(path.as_os_str()) != from_env.as_deref())
}

/// `sim`'s flags: the state directory chosen, `up`/`serve`'s topology and address.
fn sim_options(command: SimCommand, verbosity: u8) -> Result<commands::sim::Options> {
    use crate::sim::lifecycle::state_dir;
    use commands::sim::Options;
    Ok(match command {
        SimCommand::Up(args) => Options::Up(serve_options(args, verbosity)?),
        SimCommand::Serve(args) => Options::Serve(serve_options(args, verbosity)?),
        SimCommand::Down(args) => Options::Down { state_dir: state_dir(args.state_dir)? },
        SimCommand::Status(args) => Options::Status { state_dir: state_dir(args.state_dir)? },
        SimCommand::Kubeconfig(args) => {
            Options::Kubeconfig { state_dir: state_dir(args.state.state_dir)?, server: args.server }
        }
        SimCommand::Timeline(args) => Options::Timeline {
            state_dir: state_dir(args.state.state_dir)?,
            format: match args.format {
                TimelineFormatArg::Human => commands::sim::TimelineFormat::Human,
                TimelineFormatArg::Json => commands::sim::TimelineFormat::Json,
                TimelineFormatArg::Csv => commands::sim::TimelineFormat::Csv,
            },
        },
    })
}

/// Maps `sim up`/`sim serve`'s arguments onto the simulator's own options.
fn serve_options(args: SimUpArgs, verbosity: u8) -> Result<crate::sim::lifecycle::ServeOptions> {
    use crate::sim::lifecycle::{
        Audit, ControlPlane, DEFAULT_LISTEN, ServeOptions, TopologySource, state_dir,
    };
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
            (None, Some(port)) => std::net::SocketAddr::new(DEFAULT_LISTEN.ip(), port),
            (None, None) => DEFAULT_LISTEN,
        },
        tls_sans: args.tls_sans,
        speed: args.speed,
        control_plane: if args.api_only { ControlPlane::ApiOnly } else { ControlPlane::Running },
        verbosity,
        audit: if args.no_audit_log { Audit::Off } else { Audit::Log },
    })
}

/// The class directory: `--state-dir` (or `$LAB_RUNNER_CLASS_DIR`), else the default one.
fn class_dir(explicit: Option<PathBuf>) -> Result<PathBuf> {
    match explicit {
        Some(dir) => Ok(dir),
        None => Ok(commands::class::default_dir()?),
    }
}

/// `class`'s flags: the class directory chosen, the report's source, the board's learners.
fn class_options(command: ClassCommand, session: &Session) -> Result<commands::class::Options> {
    use crate::class::{
        BoardSource, ProcessModel, UpOptions, board, lifecycle::StartLabOptions, timeline::RecordMode,
    };
    use commands::class::{Options, ReportFormat, ReportSource};
    let processes = |p: ProcessesArg| match p {
        ProcessesArg::PerLearner => ProcessModel::PerLearner,
        ProcessesArg::Shared => ProcessModel::Shared,
    };
    Ok(match command {
        ClassCommand::Kubeconfig(ClassKubeconfigArgs { inputs, names, output }) => {
            Options::Kubeconfig { inputs, names, output }
        }
        ClassCommand::Up(args) => Options::Up(UpOptions {
            dir: class_dir(args.state.state_dir)?,
            learners: args.learners,
            lab: args.lab,
            variant: args.variant,
            seed: args.seed,
            listen: args.listen,
            tls_sans: args.tls_sans,
            labs: session.labs.clone(),
            lang: session.lang,
            processes: args.processes.map(processes),
            record: args.record.map(|r| match r {
                RecordArg::None => RecordMode::None,
                RecordArg::Verdicts => RecordMode::Verdicts,
                RecordArg::All => RecordMode::All,
            }),
        }),
        ClassCommand::Start(args) => Options::Start(StartLabOptions {
            dir: class_dir(args.state.state_dir)?,
            lab: args.lab,
            variant: args.variant,
            seed: args.seed,
            labs: session.labs.clone(),
            lang: session.lang,
        }),
        ClassCommand::Restart(args) => {
            Options::Restart { dir: class_dir(args.state.state_dir)?, learners: args.learners }
        }
        ClassCommand::Reset(args) => {
            Options::Reset { dir: class_dir(args.state.state_dir)?, learners: args.learners }
        }
        ClassCommand::Status(args) => Options::Status { dir: class_dir(args.state_dir)? },
        ClassCommand::Down(args) => {
            Options::Down { dir: class_dir(args.state.state_dir)?, purge: args.purge }
        }
        ClassCommand::Report(args) => {
            let source = if let Some(job) = &args.job {
                let (namespace, name) =
                    crate::class::report::parse_job(job).map_err(crate::class::Error::from)?;
                ReportSource::Job { namespace, name }
            } else if !args.files.is_empty() {
                ReportSource::Files(args.files)
            } else {
                ReportSource::Class(class_dir(args.state.state_dir)?)
            };
            let format = match args.format {
                ClassReportFormatArg::Human => ReportFormat::Report(commands::Format::Human),
                ClassReportFormatArg::Json => ReportFormat::Report(commands::Format::Json),
                ClassReportFormatArg::Junit => ReportFormat::Report(commands::Format::Junit),
                ClassReportFormatArg::Csv => ReportFormat::Csv,
            };
            Options::Report { source, lab: args.lab, format, learner: args.learner, reveal: args.reveal }
        }
        ClassCommand::ServeShared(ClassServeSharedArgs { state_dir }) => {
            Options::ServeShared { dir: state_dir }
        }
        ClassCommand::Board(args) => {
            let source = if args.contexts.is_empty() {
                BoardSource::Class { dir: class_dir(args.state.state_dir)?, lab: args.lab }
            } else {
                BoardSource::Contexts {
                    kubeconfig: session.cluster.kubeconfig.clone(),
                    contexts: args.contexts,
                    lab: args.lab.expect("clap requires --lab with --contexts"),
                }
            };
            let token = board::access::TokenChoice::parse(args.token)
                .resolve()
                .map_err(|e| crate::class::Error::Board(board::Error::Token(e)))?;
            let options = board::BoardOptions {
                kubeconfig: None,
                contexts: Vec::new(),
                listen: args.listen,
                retry: args.retry,
                stalled_after: args.stalled_after,
                lang: session.lang,
                token,
                reveal: args.reveal,
                memory: args.memory,
                class: None,
            };
            Options::Board { source, options: Box::new(options) }
        }
    })
}

/// Parses `30s`, `2m`, `1h` or a bare number of seconds.
pub fn parse_duration(value: &str) -> std::result::Result<Duration, ValueError> {
    let (number, unit) = value.split_at(value.find(|c: char| !c.is_ascii_digit()).unwrap_or(value.len()));
    let number: u64 = number.parse().map_err(|_| ValueError::NotADuration)?;
    let seconds = match unit {
        "" | "s" => Some(number),
        "m" => number.checked_mul(60),
        "h" => number.checked_mul(3600),
        _ => None,
    };
    seconds.map(Duration::from_secs).ok_or(ValueError::NotADuration)
}

#[cfg(test)]
mod tests {
    use super::*;
    use commands::{Command as Run, check};

    fn invocation(args: &[&str], locale: Option<&str>) -> Invocation {
        let cli = try_parse_from(std::iter::once("lab-runner").chain(args.iter().copied())).unwrap();
        resolve_with_locale(cli, locale).unwrap()
    }

    fn refused(args: &[&str]) -> Error {
        let cli = try_parse_from(std::iter::once("lab-runner").chain(args.iter().copied())).unwrap();
        resolve_with_locale(cli, None).expect_err("refused")
    }

    #[test]
    fn language_comes_from_flag_then_locale() {
        let lang = |args: &[&str], locale| invocation(args, locale).session.lang;
        assert_eq!(lang(&["labs", "list"], Some("ja_JP.UTF-8")), Lang::Ja);
        assert_eq!(lang(&["labs", "list"], Some("C.UTF-8")), Lang::En);
        assert_eq!(lang(&["--lang", "en", "labs", "list"], Some("ja_JP.UTF-8")), Lang::En);
        assert_eq!(lang(&["labs", "list", "--lang", "ja"], None), Lang::Ja);
    }

    #[test]
    fn the_language_of_the_help_is_read_before_parsing() {
        let before = |args: &[&str], locale| {
            let args: Vec<OsString> =
                std::iter::once("lab-runner").chain(args.iter().copied()).map(Into::into).collect();
            lang_before_parsing(&args, locale)
        };
        assert_eq!(before(&["--lang", "ja", "check", "--bogus"], None), Lang::Ja);
        assert_eq!(before(&["check", "--lang=ja"], None), Lang::Ja);
        assert_eq!(before(&["--lang", "en", "--help"], Some("ja_JP.UTF-8")), Lang::En);
        // After `--` an argument is a value, and a value that is no language is clap's to refuse.
        let unnamed = before(&[], Some("ja_JP.UTF-8"));
        assert_eq!(before(&["answer", "lab", "task", "--", "--lang", "en"], Some("ja_JP.UTF-8")), unnamed);
        assert_eq!(before(&["check", "--lang", "fr", "--help"], Some("ja_JP.UTF-8")), unnamed);
        if std::env::var_os("LAB_RUNNER_LANG").is_none() {
            assert_eq!(unnamed, Lang::Ja);
            assert_eq!(before(&["--help"], None), Lang::En);
        }
    }

    #[test]
    fn globals_resolve_into_the_cluster_target() {
        let s =
            invocation(&["check", "x", "--context", "kind-a", "--kubeconfig", "/tmp/k", "-vv"], None).session;
        assert_eq!(s.cluster.kubeconfig.as_deref(), Some(std::path::Path::new("/tmp/k")));
        assert_eq!(s.cluster.context.as_deref(), Some("kind-a"));
        assert_eq!(s.verbosity, 2);
        assert_eq!(s.labs, LabSource::BuiltIn);
    }

    #[test]
    fn bad_values_are_rejected_before_work() {
        assert!(matches!(refused(&["--labs", "/nonexistent/dir", "labs", "list"]), Error::LabsDirMissing(_)));
        assert!(matches!(refused(&["check", "x", "--confirm", "soon"]), Error::BadDuration { .. }));
        assert!(matches!(
            refused(&["check", "x", "--watch", "--timeout", "2x"]),
            Error::BadDuration { flag: "--timeout", .. }
        ));
        assert!(matches!(refused(&["selftest", "x", "--speed", "0"]), Error::Engine(_)));
        assert!(matches!(refused(&["status"]), Error::Engine(_)));
        assert!(matches!(refused(&["status", "--daemonset", "no-slash"]), Error::Engine(_)));
        assert!(matches!(refused(&["class", "report", "--job", "a/b/c"]), Error::Class(_)));
    }

    fn check_options(args: &[&str]) -> check::Options {
        match invocation(args, None).command {
            Run::Check(options) => options,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn check_flags_resolve_into_one_mode_with_its_durations() {
        use crate::engine::check::Observations;
        let apart = Observations::Confirmed(Duration::from_secs(120));
        assert_eq!(check_options(&["check", "x", "--confirm", "2m"]).mode, check::Mode::Report(apart));
        assert_eq!(check_options(&["check", "x"]).mode, check::Mode::Report(Observations::Once));
        let timeout = check::WatchTimeout { after: Duration::from_secs(90), typed: "90".into() };
        assert_eq!(
            check_options(&["check", "x", "--watch", "--timeout", "90"]).mode,
            check::Mode::Watch { timeout: Some(timeout) }
        );
        assert_eq!(
            check_options(&["check", "x", "--contexts", "all"]).mode,
            check::Mode::Class { contexts: check::Contexts::All, observations: Observations::Once }
        );
        let named = check_options(&["check", "x", "--contexts", "a,b", "--format", "json", "--hint", "2"]);
        assert_eq!(
            named.mode,
            check::Mode::Class {
                contexts: check::Contexts::Named(vec!["a".into(), "b".into()]),
                observations: Observations::Once
            }
        );
        assert_eq!((named.format, named.help.hint), (commands::Format::Json, Some(2)));
    }

    #[test]
    fn status_and_reset_resolve_into_what_they_act_on() {
        let Run::Status(status) = invocation(&["status", "--daemonset", "ns/ds", "lab"], None).command else {
            panic!("status")
        };
        assert!(matches!(status, commands::status::Options::DaemonSet { lab: Some(_), .. }), "{status:?}");
        let Run::Reset(reset) = invocation(&["reset", "lab", "--remove"], None).command else {
            panic!("reset")
        };
        assert_eq!(reset.goal, commands::reset::Goal::Remove);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse_duration("45").unwrap(), Duration::from_secs(45));
        assert_eq!(parse_duration("1d"), Err(ValueError::NotADuration));
        assert_eq!(parse_duration("99999999999999999h"), Err(ValueError::NotADuration));
    }
}
