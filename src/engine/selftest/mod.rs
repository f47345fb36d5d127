//! `selftest`: prove a lab's checks fail before and pass after its reference solution, task by task, that no declared shortcut passes, and that `reset` brings the start back.
//!
//! Against whatever cluster it is given (the CLI hands it a fresh simulator by default): reset →
//! start → every task FAILs or is BLOCKED → for each task, in `needs` order, every shortcut it
//! declares is run from the state before its solution and must leave it not passing (that state
//! is saved once and restored after each shortcut: a [`Checkpoints`] when the cluster offers one,
//! otherwise reached again by reset, start and the earlier solutions) → its reference solution
//! runs with real kubectl through [`Shell`], after which that task PASSes and every task whose
//! solution has not run still does not → reset → every task is back to FAIL/BLOCKED and what the
//! lab owns is as the first reset left it. The first offence ends the run and is named with its
//! step and task.

use std::{
    collections::{BTreeMap, BTreeSet},
    ffi::OsString,
    fmt::Write as _,
    path::{Path, PathBuf},
    process::Stdio,
    time::{Duration, Instant},
};

use futures::future::BoxFuture;

mod state;

use self::state::LabState;
use super::{
    Error, Result,
    check::{self, Help},
    cluster::Cluster,
    reset,
    start::{self, StartOptions},
};
use crate::{
    english_display,
    i18n::{Arg, Localized, Message},
    lab::{
        loader::Bundle,
        model::{Lab, Shortcut, Task},
    },
    msg,
    report::{Report, TaskStatus},
    session::Lang,
    tr,
};

/// Simulated delays pass this many times faster in a selftest (`--speed`'s default). Waits and
/// back-offs keep their order as on a real cluster; only their length shrinks. Measured on a
/// loaded 2-core machine, three selftests at once: every stuck-rollout variant passed at 100x,
/// 200x and 500x alike (twice each); 200x keeps a margin below the highest factor seen to work.
/// Beyond ~50x the wall time hardly changes: what is left is real time in the solutions
/// (`kubectl rollout status --timeout=20s`, which waits the full 20 s on a stalled rollout).
pub const SELFTEST_SPEED: f64 = 200.0;

/// How long a solved task may take to show as PASS (a device plugin restarting, pods starting)
/// before the selftest calls it an offence.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(120);

/// How long one solution command may run before it is killed (solutions wait with their own,
/// shorter `--timeout`s; this only guards against a command that never returns).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(300);

/// Lines of a failed command's stderr that an offence quotes.
const STDERR_TAIL_LINES: usize = 8;

/// How long after a shortcut's commands the task is checked a second time on a real cluster: a
/// controller still reacting to the shortcut (a pod recreated, a label republished, a status
/// written back) must not pass unseen. A simulator says its own ([`Checkpoints::second_look`]).
pub const SHORTCUT_SECOND_LOOK: Duration = Duration::from_secs(2);

/// A cluster's way to save its whole state and bring it back cheaply. The CLI provides one for
/// the simulator it starts; `selftest` uses it to run each shortcut from the same state.
pub trait Checkpoints: Sync {
    /// Saves the cluster's current state as `name` (replacing an earlier one of that name).
    fn save<'a>(&'a self, cluster: &'a Cluster, name: &'a str) -> BoxFuture<'a, Result<()>>;
    /// Brings back the state saved as `name`.
    fn restore<'a>(&'a self, cluster: &'a Cluster, name: &'a str) -> BoxFuture<'a, Result<()>>;
    /// How long after a shortcut to look at the task again: long enough for the cluster's
    /// controllers to react (a simulator running faster than real time needs less).
    fn second_look(&self) -> Duration {
        SHORTCUT_SECOND_LOOK
    }
}

/// What happens to a solution command's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellOutput {
    /// Echo the command (`$ …`) and let its output through to this process's (`demo`).
    Echo,
    /// Capture it; a failure quotes the tail of its stderr (`selftest`).
    Capture,
}

/// Runs reference-solution commands as a learner would: `sh -c`, the lab's kubeconfig in
/// `KUBECONFIG`, and this binary first on the `PATH` (solutions call `lab-runner answer …`).
#[derive(Debug, Clone)]
pub struct Shell {
    env: Vec<(String, OsString)>,
    output: ShellOutput,
    timeout: Duration,
}

/// How a solution command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandExit {
    /// Exit status 0.
    Success,
    /// A non-zero exit status.
    Code(i32),
    /// Killed by a signal.
    Signal,
    /// Still running after the timeout; it was killed.
    TimedOut(Duration),
    /// `sh` could not be started.
    NotStarted(String),
}

impl Localized for CommandExit {
    /// How the command ended, as a predicate (`exited 3`).
    fn message(&self) -> Message {
        match self {
            CommandExit::Success => msg!("command-succeeded"),
            CommandExit::Code(code) => msg!("command-exited", code = *code),
            CommandExit::Signal => msg!("command-killed"),
            CommandExit::TimedOut(after) => msg!("command-timed-out", seconds = after.as_secs()),
            CommandExit::NotStarted(reason) => msg!("command-not-started", reason = reason),
        }
    }
}
english_display!(CommandExit);

/// One command's run.
#[derive(Debug, Clone)]
pub struct CommandRun {
    /// How it ended.
    pub exit: CommandExit,
    /// Its stderr (empty with [`ShellOutput::Echo`]).
    pub stderr: String,
}

impl Shell {
    /// A shell against `kubeconfig` (`None`: the caller's environment decides), with this
    /// binary's directory first on the `PATH`.
    pub fn new(kubeconfig: Option<&Path>, output: ShellOutput) -> Shell {
        let mut env = vec![("PATH".to_string(), path_with_this_binary())];
        if let Some(kubeconfig) = kubeconfig {
            env.push(("KUBECONFIG".to_string(), kubeconfig.as_os_str().to_owned()));
        }
        Shell { env, output, timeout: COMMAND_TIMEOUT }
    }

    /// Also sets `key` in the commands' environment.
    pub fn with_env(mut self, key: &str, value: impl Into<OsString>) -> Shell {
        self.env.push((key.to_string(), value.into()));
        self
    }

    /// Runs one command with `sh -c` and waits for it (at most [`COMMAND_TIMEOUT`]).
    pub async fn run(&self, command: &str) -> CommandRun {
        let mut process = tokio::process::Command::new("sh");
        process.arg("-c").arg(command).stdin(Stdio::null()).kill_on_drop(true);
        for (key, value) in &self.env {
            process.env(key, value);
        }
        if self.output == ShellOutput::Capture {
            process.stdout(Stdio::null()).stderr(Stdio::piped());
        }
        let child = match process.spawn() {
            Ok(child) => child,
            Err(e) => {
                return CommandRun { exit: CommandExit::NotStarted(e.to_string()), stderr: String::new() };
            }
        };
        match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Err(_) => CommandRun { exit: CommandExit::TimedOut(self.timeout), stderr: String::new() },
            Ok(Err(e)) => CommandRun { exit: CommandExit::NotStarted(e.to_string()), stderr: String::new() },
            Ok(Ok(output)) => CommandRun {
                exit: match output.status.code() {
                    Some(0) => CommandExit::Success,
                    Some(code) => CommandExit::Code(code),
                    None => CommandExit::Signal,
                },
                stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            },
        }
    }
}

/// The `PATH` with the directory of the running binary first, so `lab-runner` in a solution is
/// this very build.
fn path_with_this_binary() -> OsString {
    let mut dirs: Vec<PathBuf> = Vec::new();
    if let Some(dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) {
        dirs.push(dir);
    }
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap_or_default()
}

/// The last `lines` non-empty lines of `text`, each indented for a transcript.
fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = kept.len().saturating_sub(lines);
    kept[start..].iter().map(|l| format!("\n      | {l}")).collect()
}

/// How one step of a selftest went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepResult {
    /// As it should be; what was seen.
    Ok(String),
    /// The lab misbehaved here: the offending task (when one is to blame) and what happened.
    Offence {
        /// The task to blame.
        task: Option<String>,
        /// What happened.
        message: String,
    },
}

/// One line of the transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// The step (`reset`, `start`, `solution cause`, …).
    pub name: String,
    /// How it went.
    pub result: StepResult,
}

/// How a selftest run ended.
#[derive(Debug)]
pub enum End {
    /// Every step was as it should be.
    Passed,
    /// A step was an offence (the last step of the transcript).
    Offence,
    /// The cluster or the engine failed (unreachable, a wait timed out, the breakage did not
    /// reproduce); the transcript stops at the step that was running.
    Failed {
        /// The step that was running.
        step: String,
        /// What failed.
        error: Error,
    },
}

/// A selftest of one lab variant: its transcript and how it ended.
#[derive(Debug)]
pub struct Run {
    /// Lab id.
    pub lab: String,
    /// The variant tested.
    pub variant: Option<String>,
    /// The steps done, in order.
    pub steps: Vec<Step>,
    /// How it ended.
    pub end: End,
}

impl Run {
    /// `stuck-rollout` or `stuck-rollout, variant image`, in `lang`.
    pub fn name(&self, lang: Lang) -> String {
        match &self.variant {
            Some(variant) => tr!(lang, "selftest-name-variant", lab = &self.lab, variant = variant),
            None => self.lab.clone(),
        }
    }

    /// The offending step, when the run ended on one.
    pub fn offence(&self) -> Option<&Step> {
        match self.end {
            End::Offence => self.steps.last(),
            _ => None,
        }
    }

    /// The compact per-step transcript in `lang` (the steps are already in it), with a closing
    /// verdict line. Step names are padded to their display width, so Japanese ones align too.
    pub fn render(&self, lang: Lang) -> String {
        use unicode_width::UnicodeWidthStr;
        let name = self.name(lang);
        let mut out = tr!(lang, "selftest-header", name = &name) + "\n";
        let width = self.steps.iter().map(|s| s.name.width()).max().unwrap_or(0).max(26);
        let padded = |step: &str| format!("{step}{}", " ".repeat(width.saturating_sub(step.width())));
        for step in &self.steps {
            let text = match &step.result {
                StepResult::Ok(seen) => tr!(lang, "selftest-ok", seen = seen),
                StepResult::Offence { message, .. } => tr!(lang, "selftest-failed", message = message),
            };
            let _ = writeln!(out, "  {}  {text}", padded(&step.name));
        }
        if let End::Failed { step, error } = &self.end {
            let error = error.message();
            let _ = writeln!(out, "  {}  {}", padded(step), tr!(lang, "selftest-error", error = error));
        }
        let verdict = match (&self.end, self.offence()) {
            (End::Passed, _) => tr!(lang, "selftest-verdict-passed", name = &name),
            (
                End::Offence,
                Some(Step { name: step, result: StepResult::Offence { task: Some(task), .. } }),
            ) => {
                tr!(lang, "selftest-verdict-failed-task", name = &name, step = step, task = task)
            }
            (End::Offence, Some(step)) => {
                tr!(lang, "selftest-verdict-failed-step", name = &name, step = &step.name)
            }
            (End::Offence, None) => tr!(lang, "selftest-verdict-failed", name = &name),
            (End::Failed { step, .. }, _) => tr!(lang, "selftest-verdict-error", name = &name, step = step),
        };
        let _ = writeln!(out, "{verdict}");
        out
    }
}

/// Runs the selftest of `bundle` (one variant, or the lab without variants) on `cluster`, running
/// solutions and shortcuts through `shell`; `checkpoints` (when the cluster has them) restores the
/// state between shortcuts; `progress` receives a line as each step starts. The transcript (and
/// the evidence it quotes) is in `lang`.
pub async fn selftest(
    cluster: &Cluster,
    bundle: &Bundle,
    variant: Option<&str>,
    shell: &Shell,
    checkpoints: Option<&dyn Checkpoints>,
    progress: &(dyn Fn(&str) + Sync),
    lang: Lang,
) -> Run {
    let mut run = Run {
        lab: bundle.lab.id.value.clone(),
        variant: variant.map(str::to_string),
        steps: Vec::new(),
        end: End::Passed,
    };
    let mut current = String::new();
    let how = Replay { cluster, bundle, variant, shell, checkpoints, lang };
    match steps(&how, progress, &mut run.steps, &mut current).await {
        Ok(()) if run.steps.iter().any(|s| matches!(s.result, StepResult::Offence { .. })) => {
            run.end = End::Offence;
        }
        Ok(()) => {}
        Err(error) => run.end = End::Failed { step: current, error },
    }
    run
}

/// Appends a step; returns whether it was an offence (the run stops there).
fn record(steps: &mut Vec<Step>, name: &str, result: StepResult) -> bool {
    let offence = matches!(result, StepResult::Offence { .. });
    steps.push(Step { name: name.to_string(), result });
    offence
}

fn offence(task: Option<&str>, message: String) -> StepResult {
    StepResult::Offence { task: task.map(str::to_string), message }
}

/// What a selftest runs against and with.
struct Replay<'a> {
    cluster: &'a Cluster,
    bundle: &'a Bundle,
    variant: Option<&'a str>,
    shell: &'a Shell,
    checkpoints: Option<&'a dyn Checkpoints>,
    /// The transcript's language.
    lang: Lang,
}

async fn steps(
    how: &Replay<'_>,
    progress: &(dyn Fn(&str) + Sync),
    steps: &mut Vec<Step>,
    current: &mut String,
) -> Result<()> {
    let mut run = Steps { how, progress, steps, current };
    let Some((start_state, before)) = start_state(&mut run).await? else { return Ok(()) };
    if !solve_in_needs_order(&mut run).await? {
        return Ok(());
    }
    if !reset_brings_back_the_start(&mut run, &start_state, &before).await? {
        return Ok(());
    }
    if !solve_in_another_order(&mut run).await? {
        return Ok(());
    }
    let lang = how.lang;
    let name = tr!(lang, "selftest-step-reset-end");
    run.begin(&name);
    let done = reset_lab(how.cluster, how.bundle, how.variant, lang).await?;
    run.record(&name, StepResult::Ok(tr!(lang, "selftest-reset-done", count = done)));
    Ok(())
}

/// A selftest under way: what it runs against, where its steps go.
struct Steps<'r, 'a> {
    how: &'r Replay<'a>,
    progress: &'r (dyn Fn(&str) + Sync),
    steps: &'r mut Vec<Step>,
    current: &'r mut String,
}

impl Steps<'_, '_> {
    /// Starts a step: the progress line, and the step an engine error is reported in.
    fn begin(&mut self, name: &str) {
        *self.current = name.to_string();
        (self.progress)(name);
    }

    /// Records a step; whether it was an offence (the run stops there).
    fn record(&mut self, name: &str, result: StepResult) -> bool {
        record(self.steps, name, result)
    }
}

/// reset → start → every task FAIL or BLOCKED: the state every later step compares with (what
/// the lab owns, and the report), or `None` after an offence.
async fn start_state(run: &mut Steps<'_, '_>) -> Result<Option<(LabState, Report)>> {
    let Replay { cluster, bundle, variant, lang, .. } = *run.how;
    let name = tr!(lang, "selftest-step-reset");
    run.begin(&name);
    let done = reset_lab(cluster, bundle, variant, lang).await?;
    run.record(&name, StepResult::Ok(tr!(lang, "selftest-reset-done", count = done)));
    let start_state = LabState::observe(cluster, bundle).await?;

    let name = tr!(lang, "selftest-step-start");
    run.begin(&name);
    let options = StartOptions { variant: variant.map(str::to_string), yes: true, ..StartOptions::default() };
    let started = start::start(cluster, bundle, lang, &options).await?;
    let applied = match started.variant {
        Some(v) => tr!(lang, "selftest-started-variant", variant = v, count = started.applied),
        None => tr!(lang, "selftest-started", count = started.applied),
    };
    run.record(&name, StepResult::Ok(applied));

    let name = tr!(lang, "selftest-step-check-before");
    run.begin(&name);
    let report = grade(cluster, bundle, lang).await?;
    let result =
        match report.tasks.iter().find(|t| !matches!(t.status, TaskStatus::Fail | TaskStatus::Blocked)) {
            Some(task) => {
                offence(Some(&task.id), before_solution(&task.id, task.status, &task.evidence, None, lang))
            }
            None => StepResult::Ok(summary(&report, lang)),
        };
    Ok((!run.record(&name, result)).then_some((start_state, report)))
}

/// Every task in `needs` order: its shortcuts (none may pass) and its alternative solutions (each
/// must pass), each from the state before its solution, then its solution (it passes, the tasks
/// solved before still do, the others do not). `false` after an offence.
async fn solve_in_needs_order(run: &mut Steps<'_, '_>) -> Result<bool> {
    let how = run.how;
    let Replay { bundle, lang, .. } = *how;
    let mut solved: BTreeSet<String> = BTreeSet::new();
    for task in bundle.lab.tasks_in_needs_order() {
        let id = task.id.value.as_str();
        if !replay_attempts(run, task).await? {
            return Ok(false);
        }
        let name = tr!(lang, "selftest-step-solution", task = id);
        run.begin(&name);
        if task.solution.is_empty() {
            run.record(&name, offence(Some(id), tr!(lang, "selftest-no-solution", task = id)));
            return Ok(false);
        }
        if !solve(run, &name, id, &task.solution, &mut solved).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// The step `name`: runs `commands` for task `id`, then requires it to pass, the tasks in
/// `solved` still to pass and no other task to pass yet. `false` after an offence.
async fn solve(
    run: &mut Steps<'_, '_>,
    name: &str,
    id: &str,
    commands: &[String],
    solved: &mut BTreeSet<String>,
) -> Result<bool> {
    let Replay { cluster, bundle, shell, lang, .. } = *run.how;
    if let Err(message) = run_commands(shell, commands, lang).await {
        let failed = tr!(lang, "selftest-solution-failed", task = id, reason = message);
        run.record(name, offence(Some(id), failed));
        return Ok(false);
    }
    solved.insert(id.to_string());
    let report = settle(cluster, bundle, solved, lang).await?;
    Ok(!run.record(name, after_solution(&report, id, solved, lang)))
}

/// A task's shortcuts and alternative solutions, each run from the state before its solution
/// (saved once, restored between them and after the last). Only a cluster that can bring its
/// whole state back (a lab-runner simulator) is put through them: shortcuts delete and cordon
/// nodes. `false` after an offence.
async fn replay_attempts(run: &mut Steps<'_, '_>, task: &Task) -> Result<bool> {
    let how = run.how;
    let Replay { cluster, lang, .. } = *how;
    let id = task.id.value.as_str();
    let count = task.shortcuts.len() + task.solutions.len();
    if count == 0 {
        return Ok(true);
    }
    let Some(checkpoints) = how.checkpoints else {
        let name = tr!(lang, "selftest-step-shortcuts", task = id);
        run.begin(&name);
        run.record(&name, StepResult::Ok(tr!(lang, "selftest-shortcuts-skipped", count = count)));
        return Ok(true);
    };
    let saved = format!("before-{id}");
    checkpoints.save(cluster, &saved).await?;
    let attempts = task.shortcuts.iter().map(|a| (a, false)).chain(task.solutions.iter().map(|a| (a, true)));
    for (n, (attempt, is_solution)) in attempts.enumerate() {
        let name = if is_solution {
            tr!(lang, "selftest-step-alternative", task = id, solution = &attempt.id.value)
        } else {
            tr!(lang, "selftest-step-shortcut", task = id, shortcut = &attempt.id.value)
        };
        run.begin(&name);
        if n > 0 {
            checkpoints.restore(cluster, &saved).await?;
        }
        let result = if is_solution {
            try_alternative(how, task, attempt).await?
        } else {
            try_shortcut(how, task, attempt).await?
        };
        if run.record(&name, result) {
            return Ok(false);
        }
    }
    let name = tr!(lang, "selftest-step-back", task = id);
    run.begin(&name);
    checkpoints.restore(cluster, &saved).await?;
    run.record(&name, StepResult::Ok(tr!(lang, "selftest-restored")));
    Ok(true)
}

/// reset → the report of the start again, task by task; every quiz whose answer is a fact
/// captured at start passes with its solution (the facts are fresh); what the lab owns, every
/// node, and every object of the stages are as the start left them. `false` after an offence.
async fn reset_brings_back_the_start(
    run: &mut Steps<'_, '_>,
    start_state: &LabState,
    before: &Report,
) -> Result<bool> {
    let Replay { cluster, bundle, variant, shell, lang, .. } = *run.how;
    let name = tr!(lang, "selftest-step-reset-after");
    run.begin(&name);
    let done = reset_lab(cluster, bundle, variant, lang).await?;
    run.record(&name, StepResult::Ok(tr!(lang, "selftest-reset-done", count = done)));

    let name = tr!(lang, "selftest-step-check-after");
    run.begin(&name);
    let report = grade(cluster, bundle, lang).await?;
    let differing = report
        .tasks
        .iter()
        .find(|t| before.tasks.iter().find(|b| b.id == t.id).map(|b| b.status) != Some(t.status));
    let result = match differing {
        Some(task) => {
            let at_start = before.tasks.iter().find(|b| b.id == task.id).map_or("-", |b| b.status.as_str());
            offence(
                Some(&task.id),
                tr!(
                    lang,
                    "selftest-after-reset-not-as-started",
                    task = &task.id,
                    status = task.status.as_str(),
                    start = at_start,
                    evidence = evidence_suffix(task.evidence.first())
                ),
            )
        }
        None => StepResult::Ok(summary(&report, lang)),
    };
    if run.record(&name, result) {
        return Ok(false);
    }

    // The facts: each quiz graded against what the start captured is answered by its solution,
    // which reads the cluster, and must be right.
    let quizzes: Vec<&Task> = bundle.lab.tasks.iter().filter(|t| captured_fact_quiz(t)).collect();
    if !quizzes.is_empty() {
        let name = tr!(lang, "selftest-step-facts");
        run.begin(&name);
        let mut result = StepResult::Ok(tr!(lang, "selftest-facts-fresh", count = quizzes.len()));
        for quiz in &quizzes {
            let id = quiz.id.value.as_str();
            if let Err(message) = run_commands(shell, &quiz.solution, lang).await {
                result =
                    offence(Some(id), tr!(lang, "selftest-solution-failed", task = id, reason = message));
                break;
            }
            let report = grade(cluster, bundle, lang).await?;
            if let Some(task) = report.tasks.iter().find(|t| t.id == id && t.status != TaskStatus::Pass) {
                let evidence = evidence_suffix(task.evidence.first());
                result = offence(
                    Some(id),
                    tr!(
                        lang,
                        "selftest-fact-stale",
                        task = id,
                        status = task.status.as_str(),
                        evidence = evidence
                    ),
                );
                break;
            }
        }
        if run.record(&name, result) {
            return Ok(false);
        }
    }

    let name = tr!(lang, "selftest-step-owned");
    run.begin(&name);
    let after = LabState::settle_to(cluster, bundle, start_state).await?;
    let mut problems = start_state.differences(&after);
    problems.extend(state::stages_restored(cluster, bundle, variant).await?);
    let result = if problems.is_empty() {
        StepResult::Ok(tr!(lang, "selftest-owned-same", count = after.len()))
    } else {
        offence(None, tr!(lang, "selftest-owned-differ", problems = problems))
    };
    Ok(!run.record(&name, result))
}

/// Whether a quiz is graded against something `start` captured (a fact, or the variant).
fn captured_fact_quiz(task: &Task) -> bool {
    task.kind == crate::lab::model::TaskKind::Quiz
        && task.expect.iter().any(|e| {
            matches!(e, crate::lab::model::Expectation::Quiz(q) if q.fact.is_some() || !q.accept_by_variant.is_empty())
        })
}

/// The tasks in an order `needs` allows other than the lab's: at each step, the last ready task
/// in the lab's order.
fn another_order(lab: &Lab) -> Vec<&Task> {
    let mut done: BTreeSet<&str> = BTreeSet::new();
    let mut order = Vec::new();
    while order.len() < lab.tasks.len() {
        let ready = lab.tasks.iter().rev().find(|t| {
            !done.contains(t.id.value.as_str()) && t.needs.iter().all(|n| done.contains(n.value.as_str()))
        });
        let Some(task) = ready else { break };
        done.insert(&task.id.value);
        order.push(task);
    }
    order
}

/// reset → every task again, in [`another_order`], each with its first alternative solution
/// (written in the order its description names the steps) or else its solution: a lab whose
/// tasks only pass in its own order (a step done early makes a later task impossible) is caught
/// here. `false` after an offence.
async fn solve_in_another_order(run: &mut Steps<'_, '_>) -> Result<bool> {
    let Replay { cluster, bundle, variant, lang, .. } = *run.how;
    let name = tr!(lang, "selftest-step-reset-other-order");
    run.begin(&name);
    let done = reset_lab(cluster, bundle, variant, lang).await?;
    run.record(&name, StepResult::Ok(tr!(lang, "selftest-reset-done", count = done)));
    let mut solved: BTreeSet<String> = BTreeSet::new();
    for task in another_order(&bundle.lab) {
        let id = task.id.value.as_str();
        let (label, commands) = match task.solutions.first() {
            Some(alternative) => (alternative.id.value.as_str(), &alternative.commands),
            None => ("solution", &task.solution),
        };
        let name = tr!(lang, "selftest-step-other-order", task = id, solution = label);
        run.begin(&name);
        if !solve(run, &name, id, commands, &mut solved).await? {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Runs `commands` in order; the first that fails is described in `lang` (command, exit, stderr
/// tail).
async fn run_commands(shell: &Shell, commands: &[String], lang: Lang) -> std::result::Result<(), String> {
    for command in commands {
        let ran = shell.run(command).await;
        if ran.exit != CommandExit::Success {
            return Err(tr!(
                lang,
                "selftest-command-failed",
                command = one_line_command(command),
                exit = ran.exit.message(),
                stderr = tail(&ran.stderr, STDERR_TAIL_LINES)
            ));
        }
    }
    Ok(())
}

/// Runs one shortcut of `task` and grades the task twice (a second look apart): it must
/// not pass either time. A shortcut whose commands fail proves nothing and is an offence too.
async fn try_shortcut(how: &Replay<'_>, task: &Task, shortcut: &Shortcut) -> Result<StepResult> {
    let lang = how.lang;
    let (id, shortcut_id) = (task.id.value.as_str(), shortcut.id.value.as_str());
    if let Err(message) = run_commands(how.shell, &shortcut.commands, lang).await {
        return Ok(offence(
            Some(id),
            tr!(lang, "selftest-shortcut-failed", shortcut = shortcut_id, task = id, reason = message),
        ));
    }
    let mut seen = None;
    for look in 0..2 {
        if look > 0 {
            tokio::time::sleep(how.checkpoints.map_or(SHORTCUT_SECOND_LOOK, |c| c.second_look())).await;
        }
        // The task's own checks, its `needs` taken as met: a shortcut that also breaks a task
        // this one needs would otherwise only show BLOCKED, and prove nothing.
        let report = grade_alone(how.cluster, how.bundle, lang).await?;
        let Some(graded) = report.tasks.iter().find(|t| t.id == id) else { continue };
        if graded.status == TaskStatus::Pass {
            return Ok(offence(
                Some(id),
                tr!(
                    lang,
                    "selftest-shortcut-passes",
                    task = id,
                    shortcut = shortcut_id,
                    description = shortcut.description.get(lang).trim(),
                    evidence = evidence_suffix(graded.evidence.first())
                ),
            ));
        }
        // The last line says why (a rollout's first line is only its counters).
        seen = Some(tr!(
            lang,
            "selftest-task-status",
            task = id,
            status = graded.status.as_str(),
            evidence = evidence_suffix(graded.evidence.last())
        ));
    }
    Ok(StepResult::Ok(seen.unwrap_or_else(|| tr!(lang, "selftest-task-missing", task = id))))
}

/// Runs one alternative solution of `task` and re-checks the task (its own checks, its `needs`
/// taken as met) until it passes or [`SETTLE_TIMEOUT`]: it must pass, as the solution does.
async fn try_alternative(how: &Replay<'_>, task: &Task, alternative: &Shortcut) -> Result<StepResult> {
    let lang = how.lang;
    let (id, alternative_id) = (task.id.value.as_str(), alternative.id.value.as_str());
    if let Err(message) = run_commands(how.shell, &alternative.commands, lang).await {
        return Ok(offence(
            Some(id),
            tr!(lang, "selftest-alternative-failed", solution = alternative_id, task = id, reason = message),
        ));
    }
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    loop {
        let report = grade_alone(how.cluster, how.bundle, lang).await?;
        let Some(graded) = report.tasks.iter().find(|t| t.id == id) else {
            return Ok(StepResult::Ok(tr!(lang, "selftest-task-missing", task = id)));
        };
        if graded.status == TaskStatus::Pass {
            return Ok(StepResult::Ok(tr!(
                lang,
                "selftest-task-status",
                task = id,
                status = graded.status.as_str(),
                evidence = evidence_suffix(graded.evidence.last())
            )));
        }
        if Instant::now() >= deadline {
            return Ok(offence(
                Some(id),
                tr!(
                    lang,
                    "selftest-alternative-not-passing",
                    task = id,
                    solution = alternative_id,
                    status = graded.status.as_str(),
                    evidence = evidence_suffix(graded.evidence.last())
                ),
            ));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// `reset` as `lab-runner reset --variant V --yes` does it; returns how many plan steps ran.
async fn reset_lab(cluster: &Cluster, bundle: &Bundle, variant: Option<&str>, lang: Lang) -> Result<usize> {
    let options = reset::ResetOptions { variant: variant.map(str::to_string), ..Default::default() };
    let planned = reset::load_plan_to(cluster, bundle, &options).await?;
    let steps = planned.actions.len();
    reset::execute(cluster, bundle, planned, lang).await?;
    Ok(steps)
}

async fn grade(cluster: &Cluster, bundle: &Bundle, lang: Lang) -> Result<Report> {
    check::check(cluster, bundle, lang, Help::default()).await
}

/// Every task graded on its own checks, `needs` taken as met (never BLOCKED).
async fn grade_alone(cluster: &Cluster, bundle: &Bundle, lang: Lang) -> Result<Report> {
    check::check(cluster, bundle, lang, Help { alone: true, ..Help::default() }).await
}

/// Re-checks until every solved task passes (or [`SETTLE_TIMEOUT`]): a solution may leave work
/// to controllers (pods starting, a device plugin re-advertising) that a learner would wait for.
async fn settle(cluster: &Cluster, bundle: &Bundle, solved: &BTreeSet<String>, lang: Lang) -> Result<Report> {
    let deadline = Instant::now() + SETTLE_TIMEOUT;
    loop {
        let report = grade(cluster, bundle, lang).await?;
        let settled =
            report.tasks.iter().filter(|t| solved.contains(&t.id)).all(|t| t.status == TaskStatus::Pass);
        if settled || Instant::now() >= deadline {
            return Ok(report);
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// The verdict after the solution of `id`: it passes, earlier solved tasks still pass, and no
/// task whose solution has not run passes.
fn after_solution(report: &Report, id: &str, solved: &BTreeSet<String>, lang: Lang) -> StepResult {
    for task in &report.tasks {
        let is_solved = solved.contains(&task.id);
        let evidence = evidence_suffix(task.evidence.first());
        if task.id == id && task.status != TaskStatus::Pass {
            return offence(
                Some(id),
                tr!(
                    lang,
                    "selftest-not-passing-after-solution",
                    task = id,
                    status = task.status.as_str(),
                    evidence = evidence
                ),
            );
        }
        if is_solved && task.id != id && task.status != TaskStatus::Pass {
            return offence(
                Some(&task.id),
                tr!(
                    lang,
                    "selftest-regressed",
                    task = &task.id,
                    status = task.status.as_str(),
                    after = id,
                    evidence = evidence
                ),
            );
        }
        if !is_solved && !matches!(task.status, TaskStatus::Fail | TaskStatus::Blocked) {
            return offence(
                Some(&task.id),
                before_solution(&task.id, task.status, &task.evidence, Some(id), lang),
            );
        }
    }
    let unsolved: Vec<_> = report.tasks.iter().filter(|t| !solved.contains(&t.id)).collect();
    if unsolved.is_empty() {
        StepResult::Ok(tr!(lang, "selftest-all-pass", task = id, score = report.score, total = report.total))
    } else {
        let counts = counts(unsolved.iter().map(|t| t.status), lang);
        StepResult::Ok(tr!(lang, "selftest-pass-rest", task = id, counts = counts))
    }
}

/// The offence of a task that is not FAIL or BLOCKED before its own solution ran.
fn before_solution(
    task: &str,
    status: TaskStatus,
    evidence: &[String],
    after: Option<&str>,
    lang: Lang,
) -> String {
    let evidence = evidence_suffix(evidence.first());
    match (status, after) {
        (TaskStatus::Pass, None) => tr!(lang, "selftest-passes-before", task = task, evidence = evidence),
        (TaskStatus::Pass, Some(after)) => {
            tr!(lang, "selftest-passes-before-after", task = task, after = after, evidence = evidence)
        }
        (other, None) => {
            tr!(lang, "selftest-status-before", task = task, status = other.as_str(), evidence = evidence)
        }
        (other, Some(after)) => tr!(
            lang,
            "selftest-status-before-after",
            task = task,
            status = other.as_str(),
            after = after,
            evidence = evidence
        ),
    }
}

/// ` (the evidence line)` after an offence or a verdict, or nothing without one.
fn evidence_suffix(line: Option<&String>) -> Arg {
    match line {
        Some(line) => msg!("selftest-evidence", line = line).into(),
        None => Arg::from(""),
    }
}

/// `3 FAIL, 2 BLOCKED` for a report.
fn summary(report: &Report, lang: Lang) -> String {
    counts(report.tasks.iter().map(|t| t.status), lang)
}

fn counts(statuses: impl Iterator<Item = TaskStatus>, lang: Lang) -> String {
    let mut by: BTreeMap<u8, (&str, usize)> = BTreeMap::new();
    for status in statuses {
        let order = match status {
            TaskStatus::Pass => 0,
            TaskStatus::Fail => 1,
            TaskStatus::Blocked => 2,
            TaskStatus::Error => 3,
        };
        by.entry(order).or_insert((status.as_str(), 0)).1 += 1;
    }
    by.values().map(|(name, n)| format!("{n} {name}")).collect::<Vec<_>>().join(&tr!(lang, "list-separator"))
}

/// A multi-line solution command shown as its first line, with `…` when there is more.
fn one_line_command(command: &str) -> String {
    let mut lines = command.trim().lines();
    let first = lines.next().unwrap_or_default().trim();
    if lines.next().is_some() { format!("{first} …") } else { first.to_string() }
}

/// Which variants `selftest` runs: the one asked for, or every variant for `None` and `all`
/// (`[None]` for a lab without variants). An unknown variant is bad input naming the known ones.
pub fn variants_to_test(lab: &Lab, asked: Option<&str>) -> Result<Vec<Option<String>>> {
    match asked {
        None | Some("all") if lab.variants.is_empty() => Ok(vec![None]),
        None | Some("all") => Ok(lab.variants.iter().map(|v| Some(v.id.value.clone())).collect()),
        Some(wanted) if lab.variant(wanted).is_some() => Ok(vec![Some(wanted.to_string())]),
        Some(wanted) => {
            let known: Vec<&str> = lab.variants.iter().map(|v| v.id.value.as_str()).collect();
            Err(Error::BadInput(msg!(
                "error-unknown-variant",
                lab = &lab.id.value,
                variant = format!("{wanted:?}"),
                known = crate::i18n::list(known.iter().map(ToString::to_string).chain(["all".to_string()]))
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_in_verdict_order() {
        let statuses = [TaskStatus::Blocked, TaskStatus::Fail, TaskStatus::Blocked, TaskStatus::Pass];
        assert_eq!(counts(statuses.into_iter(), Lang::En), "1 PASS, 1 FAIL, 2 BLOCKED");
        assert_eq!(counts(statuses.into_iter(), Lang::Ja), "1 PASS、1 FAIL、2 BLOCKED");
    }

    #[test]
    fn commands_show_their_first_line_and_stderr_its_tail() {
        assert_eq!(one_line_command("kubectl get pods"), "kubectl get pods");
        assert_eq!(one_line_command("\nfor x in a; do\n  echo $x\ndone\n"), "for x in a; do …");
        assert_eq!(tail("a\n\nb\nc\n", 2), "\n      | b\n      | c");
    }

    #[tokio::test]
    async fn the_shell_reports_exit_codes_and_stderr() {
        let shell = Shell::new(None, ShellOutput::Capture);
        assert_eq!(shell.run("true").await.exit, CommandExit::Success);
        let failed = shell.run("echo first >&2; echo 'no such thing' >&2; exit 3").await;
        assert_eq!(failed.exit, CommandExit::Code(3));
        assert_eq!(tail(&failed.stderr, 1), "\n      | no such thing");
    }
}
