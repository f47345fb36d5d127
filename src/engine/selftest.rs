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
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::{
    api::{Api, DynamicObject, ListParams},
    discovery::{Discovery, Scope, verbs},
};
use serde_json::Value;

use super::{
    Error, LAB_LABEL, Result, apply,
    check::{self, Help},
    cluster::{Cluster, list_all, with_retries},
    inventory, reset,
    start::{self, StartOptions},
};
use crate::{
    english_display,
    i18n::{Arg, Localized, Message},
    lab::{
        loader::Bundle,
        model::{Lab, LearnerObjects, Shortcut, Task},
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
    let Replay { cluster, bundle, variant, shell, lang, .. } = *how;
    let lab = &bundle.lab;
    let mut begin = |name: &str| {
        *current = name.to_string();
        progress(name);
    };

    let name = tr!(lang, "selftest-step-reset");
    begin(&name);
    let done = reset_lab(cluster, bundle, lang).await?;
    record(steps, &name, StepResult::Ok(tr!(lang, "selftest-reset-done", count = done)));
    let start_state = LabState::observe(cluster, bundle).await?;

    let name = tr!(lang, "selftest-step-start");
    begin(&name);
    let options = StartOptions { variant: variant.map(str::to_string), seed: None, yes: true };
    let started = start::start(cluster, bundle, lang, &options).await?;
    let applied = match started.variant {
        Some(v) => tr!(lang, "selftest-started-variant", variant = v, count = started.applied),
        None => tr!(lang, "selftest-started", count = started.applied),
    };
    record(steps, &name, StepResult::Ok(applied));

    let name = tr!(lang, "selftest-step-check-before");
    begin(&name);
    let report = grade(cluster, bundle, lang).await?;
    let result =
        match report.tasks.iter().find(|t| !matches!(t.status, TaskStatus::Fail | TaskStatus::Blocked)) {
            Some(task) => {
                offence(Some(&task.id), before_solution(&task.id, task.status, &task.evidence, None, lang))
            }
            None => StepResult::Ok(summary(&report, lang)),
        };
    if record(steps, &name, result) {
        return Ok(());
    }

    let mut solved: BTreeSet<String> = BTreeSet::new();
    for task in lab.tasks_in_needs_order() {
        let id = task.id.value.as_str();
        match (task.shortcuts.is_empty(), how.checkpoints) {
            (true, _) => {}
            // Shortcuts delete and cordon nodes: only a cluster that can bring its whole state
            // back (a lab-runner simulator) may be put through them.
            (false, None) => {
                let name = tr!(lang, "selftest-step-shortcuts", task = id);
                begin(&name);
                let skipped = tr!(lang, "selftest-shortcuts-skipped", count = task.shortcuts.len());
                record(steps, &name, StepResult::Ok(skipped));
            }
            (false, Some(checkpoints)) => {
                let saved = format!("before-{id}");
                checkpoints.save(cluster, &saved).await?;
                for (n, shortcut) in task.shortcuts.iter().enumerate() {
                    let name = tr!(lang, "selftest-step-shortcut", task = id, shortcut = &shortcut.id.value);
                    begin(&name);
                    if n > 0 {
                        checkpoints.restore(cluster, &saved).await?;
                    }
                    if record(steps, &name, try_shortcut(how, task, shortcut).await?) {
                        return Ok(());
                    }
                }
                let name = tr!(lang, "selftest-step-back", task = id);
                begin(&name);
                checkpoints.restore(cluster, &saved).await?;
                record(steps, &name, StepResult::Ok(tr!(lang, "selftest-restored")));
            }
        }
        let name = tr!(lang, "selftest-step-solution", task = id);
        begin(&name);
        if task.solution.is_empty() {
            record(steps, &name, offence(Some(id), tr!(lang, "selftest-no-solution", task = id)));
            return Ok(());
        }
        if let Err(message) = run_commands(shell, &task.solution, lang).await {
            let failed = tr!(lang, "selftest-solution-failed", task = id, reason = message);
            record(steps, &name, offence(Some(id), failed));
            return Ok(());
        }
        solved.insert(id.to_string());
        let report = settle(cluster, bundle, &solved, lang).await?;
        if record(steps, &name, after_solution(&report, id, &solved, lang)) {
            return Ok(());
        }
    }

    let applied_before_reset =
        inventory::load(&cluster.client, &lab.id.value).await?.map(|i| i.applied).unwrap_or_default();
    let name = tr!(lang, "selftest-step-reset-after");
    begin(&name);
    let done = reset_lab(cluster, bundle, lang).await?;
    record(steps, &name, StepResult::Ok(tr!(lang, "selftest-reset-done", count = done)));

    let name = tr!(lang, "selftest-step-check-after");
    begin(&name);
    let report = grade(cluster, bundle, lang).await?;
    let result =
        match report.tasks.iter().find(|t| !matches!(t.status, TaskStatus::Fail | TaskStatus::Blocked)) {
            Some(task) => offence(
                Some(&task.id),
                tr!(
                    lang,
                    "selftest-after-reset-not-failing",
                    task = &task.id,
                    status = task.status.as_str(),
                    evidence = evidence_suffix(task.evidence.first())
                ),
            ),
            None => StepResult::Ok(summary(&report, lang)),
        };
    if record(steps, &name, result) {
        return Ok(());
    }

    let name = tr!(lang, "selftest-step-owned");
    begin(&name);
    let after = LabState::observe(cluster, bundle).await?;
    let mut problems = start_state.differences(&after);
    problems.extend(later_stage_leftovers(cluster, bundle, &applied_before_reset).await?);
    problems.extend(first_stage_restored(cluster, bundle, variant).await?);
    let result = if problems.is_empty() {
        StepResult::Ok(tr!(lang, "selftest-owned-same", count = after.facts.len()))
    } else {
        offence(None, tr!(lang, "selftest-owned-differ", problems = problems))
    };
    record(steps, &name, result);
    Ok(())
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
        let report = grade(how.cluster, how.bundle, lang).await?;
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

/// `reset` as `lab-runner reset --yes` does it; returns how many plan steps ran.
async fn reset_lab(cluster: &Cluster, bundle: &Bundle, lang: Lang) -> Result<usize> {
    let (inventory, plan) = reset::load_plan(cluster, bundle).await?;
    reset::execute(cluster, bundle, inventory, &plan, lang).await?;
    Ok(plan.len())
}

async fn grade(cluster: &Cluster, bundle: &Bundle, lang: Lang) -> Result<Report> {
    check::check(cluster, bundle, lang, Help::default()).await
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

/// What the lab owns, as lines to compare between the first reset and the last: the owned
/// namespaces and the top-level objects in them (learner objects, later stages' objects), the
/// cluster-scoped objects carrying the lab label, the node labels and ConfigMaps the lab restores.
/// Objects a controller owns (pods, revisions) and events are left out: their names vary.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LabState {
    /// Each fact by its English text (what is compared), with its message (what is shown).
    facts: BTreeMap<String, Message>,
}

impl LabState {
    fn insert(&mut self, fact: Message) {
        self.facts.insert(fact.render(Lang::En), fact);
    }
}

/// Objects every namespace gets from Kubernetes itself, whenever it is created.
const NAMESPACE_DEFAULTS: [(&str, &str); 2] =
    [("ConfigMap", "kube-root-ca.crt"), ("ServiceAccount", "default")];

impl LabState {
    async fn observe(cluster: &Cluster, bundle: &Bundle) -> Result<LabState> {
        let lab = &bundle.lab;
        let mut facts = LabState { facts: BTreeMap::new() };
        let discovery = Discovery::new(cluster.client.clone())
            .run()
            .await
            .map_err(|e| Error::api(msg!("action-discover"), &e))?;
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(cluster.client.clone());
        let mut present = Vec::new();
        for namespace in &lab.reset.namespaces {
            let found = with_retries(|| namespaces.get_opt(namespace)).await.map_err(|e| {
                Error::api(msg!("action-read", object = format!("namespace {namespace}")), &e)
            })?;
            facts.insert(match found {
                Some(_) => msg!("selftest-fact-namespace", namespace = namespace),
                None => msg!("selftest-fact-namespace-absent", namespace = namespace),
            });
            if found.is_some() {
                present.push(namespace.as_str());
            }
        }
        let lab_selector = ListParams::default().labels(&format!("{LAB_LABEL}={}", lab.id.value));
        for group in discovery.groups() {
            for (resource, capabilities) in group.recommended_resources() {
                if !capabilities.supports_operation(verbs::LIST) || matches!(resource.kind.as_str(), "Event")
                {
                    continue;
                }
                if capabilities.scope == Scope::Cluster {
                    let api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &resource);
                    for object in listed(&api, &lab_selector, &resource.plural).await? {
                        let object = format!("{} {}", resource.kind, name_of(&object));
                        facts.insert(msg!("target-named", target = object));
                    }
                    continue;
                }
                for namespace in &present {
                    let api: Api<DynamicObject> =
                        Api::namespaced_with(cluster.client.clone(), namespace, &resource);
                    for object in listed(&api, &ListParams::default(), &resource.plural).await? {
                        let name = name_of(&object);
                        let owned = object.metadata.owner_references.as_ref().is_some_and(|o| !o.is_empty());
                        let lab_applied = object.metadata.labels.as_ref().and_then(|l| l.get(LAB_LABEL))
                            == Some(&lab.id.value);
                        // With `learnerObjects: keep` the learner's objects are not the lab's.
                        let learners_kept = lab.reset.learner_objects == LearnerObjects::Keep && !lab_applied;
                        if owned
                            || learners_kept
                            || NAMESPACE_DEFAULTS.contains(&(resource.kind.as_str(), name.as_str()))
                        {
                            continue;
                        }
                        facts.insert(msg!(
                            "target-named",
                            target = format!("{} {namespace}/{name}", resource.kind)
                        ));
                    }
                }
            }
        }
        if !lab.reset.restore.node_labels.is_empty() {
            let nodes: Api<Node> = Api::all(cluster.client.clone());
            let nodes = list_all(&nodes).await.map_err(|e| Error::api(msg!("action-list-nodes"), &e))?.items;
            for node in nodes {
                let labels = node.metadata.labels.unwrap_or_default();
                let name = node.metadata.name.unwrap_or_default();
                for key in &lab.reset.restore.node_labels {
                    facts.insert(match labels.get(key) {
                        Some(value) => {
                            msg!("selftest-fact-node-label", node = &name, key = key, value = value)
                        }
                        None => msg!("selftest-fact-node-label-absent", node = &name, key = key),
                    });
                }
            }
        }
        for wanted in &lab.reset.restore.config_maps {
            let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), &wanted.namespace);
            let found = with_retries(|| api.get_opt(&wanted.name)).await.map_err(|e| {
                Error::api(
                    msg!("action-read", object = format!("ConfigMap {}/{}", wanted.namespace, wanted.name)),
                    &e,
                )
            })?;
            let data = found.map(|c| serde_json::to_string(&c.data.unwrap_or_default()).unwrap_or_default());
            let object = format!("{}/{}", wanted.namespace, wanted.name);
            facts.insert(match data {
                Some(data) => msg!("selftest-fact-configmap", object = object, data = data),
                None => msg!("selftest-fact-configmap-absent", object = object),
            });
        }
        Ok(facts)
    }

    /// What differs from `self` in `after`, as `left after reset: …` / `missing after reset: …`.
    fn differences(&self, after: &LabState) -> Vec<Message> {
        let left = after
            .facts
            .iter()
            .filter(|(key, _)| !self.facts.contains_key(*key))
            .map(|(_, fact)| msg!("selftest-left-after-reset", fact = fact));
        let missing = self
            .facts
            .iter()
            .filter(|(key, _)| !after.facts.contains_key(*key))
            .map(|(_, fact)| msg!("selftest-missing-after-reset", fact = fact));
        left.chain(missing).collect()
    }
}

async fn listed(api: &Api<DynamicObject>, params: &ListParams, plural: &str) -> Result<Vec<DynamicObject>> {
    match with_retries(|| api.list(params)).await {
        Ok(list) => Ok(list.items),
        // A kind the server lists in discovery but cannot list here is not the lab's.
        Err(kube::Error::Api(status)) if (403..=405).contains(&status.code) => Ok(Vec::new()),
        Err(e) => Err(Error::api(msg!("action-list", plural = plural), &e)),
    }
}

fn name_of(object: &DynamicObject) -> String {
    object.metadata.name.clone().unwrap_or_default()
}

/// Objects the later stages applied (recorded in the inventory before the reset) that still
/// exist although the re-applied first stage does not hold them.
async fn later_stage_leftovers(
    cluster: &Cluster,
    bundle: &Bundle,
    applied: &[inventory::AppliedObject],
) -> Result<Vec<Message>> {
    let first = bundle.lab.stages.first().map(|s| s.id.value.as_str());
    let mut left = Vec::new();
    for object in applied.iter().filter(|o| Some(o.stage.as_str()) != first) {
        let (api, _) =
            apply::api_for(&cluster.client, &object.api_version, &object.kind, object.namespace.as_deref())
                .await?;
        let found = with_retries(|| api.get_opt(&object.name)).await.map_err(|e| {
            Error::api(msg!("action-read", object = format!("{} {}", object.kind, object.name)), &e)
        })?;
        let still_first_stage = found.as_ref().is_some_and(|o| {
            o.metadata.labels.as_ref().and_then(|l| l.get(super::STAGE_LABEL)).map(String::as_str) == first
        });
        if found.is_some() && !still_first_stage {
            let place = object.namespace.as_ref().map(|n| format!("{n}/")).unwrap_or_default();
            let shown = format!("{} {place}{}", object.kind, object.name);
            left.push(msg!("selftest-left-of-stage", object = shown, stage = &object.stage));
        }
    }
    Ok(left)
}

/// Every object of the first stage exists again with the fields its manifest sets.
async fn first_stage_restored(
    cluster: &Cluster,
    bundle: &Bundle,
    variant: Option<&str>,
) -> Result<Vec<Message>> {
    let Some(stage) = bundle.lab.stages.first() else { return Ok(Vec::new()) };
    let mut problems = Vec::new();
    let documents =
        stage.manifests_for(variant).into_iter().filter_map(|f| bundle.manifests.get(f)).flatten();
    for document in documents {
        let text = |pointer: &str| document.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
        let (kind, name, namespace) =
            (text("/kind"), text("/metadata/name"), document.pointer("/metadata/namespace"));
        let namespace = namespace.and_then(Value::as_str);
        let (api, _) = apply::api_for(&cluster.client, text("/apiVersion"), kind, namespace).await?;
        let place = namespace.map(|n| format!("{n}/")).unwrap_or_default();
        let found = with_retries(|| api.get_opt(name))
            .await
            .map_err(|e| Error::api(msg!("action-read", object = format!("{kind} {place}{name}")), &e))?;
        let shown = format!("{kind} {place}{name}");
        let Some(found) = found else {
            problems.push(msg!("selftest-stage-object-missing", object = shown, stage = &stage.id.value));
            continue;
        };
        let live = serde_json::to_value(&found).unwrap_or(Value::Null);
        if let Some(path) = first_difference(document, &live, String::new()) {
            let path: Arg = if path.is_empty() { msg!("selftest-top-level").into() } else { path.into() };
            problems.push(msg!(
                "selftest-stage-object-differs",
                object = shown,
                stage = &stage.id.value,
                path = path
            ));
        }
    }
    Ok(problems)
}

/// The first path where `live` does not hold what `manifest` sets (maps: a subset; lists: the
/// same length, element by element; scalars: equal, quantities by value).
fn first_difference(manifest: &Value, live: &Value, path: String) -> Option<String> {
    match (manifest, live) {
        (Value::Object(wanted), Value::Object(found)) => wanted.iter().find_map(|(key, value)| {
            let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            match found.get(key) {
                Some(found) => first_difference(value, found, at),
                None if value.is_null() => None,
                None => Some(at),
            }
        }),
        (Value::Array(wanted), Value::Array(found)) if wanted.len() == found.len() => wanted
            .iter()
            .zip(found)
            .enumerate()
            .find_map(|(i, (w, f))| first_difference(w, f, format!("{path}[{i}]"))),
        (wanted, found) if crate::grade::partial::scalars_equal(wanted, found, true) => None,
        // The empty path is the whole document (the caller names it).
        _ => Some(path),
    }
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
    use serde_json::json;

    #[test]
    fn first_difference_reads_the_manifest_as_a_subset() {
        let manifest = json!({"spec": {"containers": [{"name": "a", "image": "x:1"}], "n": 1}});
        let live = json!({"spec": {"containers": [{"name": "a", "image": "x:1", "imagePullPolicy": "IfNotPresent"}], "n": 1, "extra": true}});
        assert_eq!(first_difference(&manifest, &live, String::new()), None);
        let changed = json!({"spec": {"containers": [{"name": "a", "image": "x:2"}], "n": 1}});
        assert_eq!(
            first_difference(&manifest, &changed, String::new()).as_deref(),
            Some("spec.containers[0].image")
        );
        let longer = json!({"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b"}], "n": 1}});
        assert_eq!(first_difference(&manifest, &longer, String::new()).as_deref(), Some("spec.containers"));
        let quantity = json!({"memory": "1024Mi"});
        assert_eq!(first_difference(&quantity, &json!({"memory": "1Gi"}), String::new()), None);
    }

    #[test]
    fn differences_name_what_was_left_and_what_went_missing() {
        let state = |facts: Vec<Message>| {
            let mut state = LabState { facts: BTreeMap::new() };
            facts.into_iter().for_each(|f| state.insert(f));
            state
        };
        let object = |text: &str| msg!("target-named", target = text);
        let start = state(vec![
            msg!("selftest-fact-namespace", namespace = "lab"),
            object("DaemonSet lab/toolkit"),
            msg!("selftest-fact-node-label-absent", node = "a", key = "k"),
        ]);
        let after = state(vec![
            msg!("selftest-fact-namespace", namespace = "lab"),
            object("PrometheusRule lab/mine"),
            msg!("selftest-fact-node-label", node = "a", key = "k", value = "v"),
        ]);
        let english: Vec<String> = start.differences(&after).iter().map(|m| m.render(Lang::En)).collect();
        assert_eq!(
            english,
            [
                "left after reset: PrometheusRule lab/mine",
                "left after reset: node a label k=v",
                "missing after reset: DaemonSet lab/toolkit",
                "missing after reset: node a label k=(absent)",
            ]
        );
        assert!(start.differences(&start.clone()).is_empty());
    }

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
