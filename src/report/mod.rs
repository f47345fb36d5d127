//! Check reports: the model, and renderers for humans (colour), versioned JSON and JUnit XML.
//!
//! The JSON form is documented in `docs/report-format.md`; [`REPORT_VERSION`] changes when a
//! field changes meaning or disappears.

pub mod live;

use std::fmt::Write as _;

use owo_colors::OwoColorize;
use serde::{Deserialize, Serialize};

use crate::{session::Lang, tr};

/// The version of the JSON report format.
pub const REPORT_VERSION: u32 = 1;

/// Errors from rendering a report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The JUnit XML could not be written.
    #[error("cannot render JUnit XML: {0}")]
    Junit(#[from] quick_junit::SerializeError),
    /// The JSON could not be written.
    #[error("cannot render JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A task's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum TaskStatus {
    /// It holds.
    Pass,
    /// It does not hold.
    Fail,
    /// A task it needs has not passed; not graded.
    Blocked,
    /// It could not be observed or judged; neither pass nor fail.
    Error,
}

impl TaskStatus {
    /// `PASS`, `FAIL`, `BLOCKED`, `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pass => "PASS",
            TaskStatus::Fail => "FAIL",
            TaskStatus::Blocked => "BLOCKED",
            TaskStatus::Error => "ERROR",
        }
    }
}

/// One graded task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskResult {
    /// Task id.
    pub id: String,
    /// Title in the session language.
    pub title: String,
    /// What the task asks, in the session language: for a task that failed, or every task with
    /// `check --details`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Verdict.
    pub status: TaskStatus,
    /// Points the task is worth.
    pub points: i64,
    /// Points awarded (all or nothing).
    pub awarded: i64,
    /// What was observed, line by line.
    pub evidence: Vec<String>,
    /// Hints asked for with `--hint N` (tiers 1..=N), for tasks that did not pass.
    pub hints: Vec<String>,
    /// How many hint tiers the task has.
    pub hints_available: usize,
    /// The reference solution, only with `--reveal`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub solution: Option<Vec<String>>,
}

/// A check report for one lab on one cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// [`REPORT_VERSION`].
    pub report_version: u32,
    /// Lab id.
    pub lab: String,
    /// Lab title in the session language.
    pub title: String,
    /// The variant started, only with `--reveal` (it would answer a quiz).
    pub variant: Option<String>,
    /// Tasks in `needs` order.
    pub tasks: Vec<TaskResult>,
    /// Points awarded.
    pub score: i64,
    /// Points available.
    pub total: i64,
    /// Every task passed.
    pub passed: bool,
}

impl Report {
    /// A report from graded tasks; score, total and `passed` are computed.
    pub fn new(lab: &str, title: &str, variant: Option<String>, tasks: Vec<TaskResult>) -> Report {
        Report {
            report_version: REPORT_VERSION,
            lab: lab.to_string(),
            title: title.to_string(),
            variant,
            score: tasks.iter().map(|t| t.awarded).sum(),
            total: tasks.iter().map(|t| t.points).sum(),
            passed: tasks.iter().all(|t| t.status == TaskStatus::Pass),
            tasks,
        }
    }
}

/// The report for a terminal, its own words in English; see [`human_in`].
pub fn human(report: &Report, styled: bool) -> String {
    human_in(report, styled, Lang::En)
}

/// The report for a terminal, in `lang` (the lab's texts are already in it; this sets the
/// report's own words from the catalog). Verdicts (PASS, FAIL, …) stay as they are in every
/// language: they are codes, also in JSON and JUnit. With `styled`, verdicts carry ANSI colours
/// (print it through `anstream`, which strips them when stdout is not a terminal or `NO_COLOR`
/// is set).
pub fn human_in(report: &Report, styled: bool, lang: Lang) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}", report.lab, report.title);
    // Only `check --reveal` fills it (the variant answers a quiz); JSON carries it as `variant`.
    if let Some(variant) = &report.variant {
        let _ = writeln!(out, "{}", tr!(lang, "report-variant", variant = variant));
    }
    let width = report.tasks.iter().map(|t| t.id.len()).max().unwrap_or(0);
    for task in &report.tasks {
        let verdict = format!("{:<7}", task.status.as_str());
        let verdict = if styled {
            match task.status {
                TaskStatus::Pass => verdict.green().bold().to_string(),
                TaskStatus::Fail => verdict.red().bold().to_string(),
                TaskStatus::Blocked => verdict.yellow().to_string(),
                TaskStatus::Error => verdict.magenta().bold().to_string(),
            }
        } else {
            verdict
        };
        let _ = writeln!(
            out,
            "  {verdict} {:<width$}  {}/{}  {}",
            task.id, task.awarded, task.points, task.title
        );
        if let Some(description) = &task.description {
            for line in description.lines() {
                let _ = writeln!(out, "            {}", line.trim_end());
            }
        }
        for line in &task.evidence {
            let _ = writeln!(out, "            · {line}");
        }
        for (tier, hint) in task.hints.iter().enumerate() {
            let text = hint.replace('\n', " ");
            let _ = writeln!(out, "            {}", tr!(lang, "report-hint", tier = tier + 1, text = text));
        }
        if let Some(solution) = &task.solution {
            // A multi-line command (a script, a heredoc) stays one block under its `$`.
            for command in solution {
                let mut lines = command.trim_end().lines();
                let _ = writeln!(out, "            $ {}", lines.next().unwrap_or_default());
                for line in lines {
                    let _ = writeln!(out, "              {line}");
                }
            }
        }
    }
    let _ = writeln!(out, "{}", tr!(lang, "report-score", score = report.score, total = report.total));
    // A hint helps with a task that fails or waits on another; a task that could not be graded
    // (ERROR) needs the cluster or the lab fixed, which no hint does.
    let stuck = report.tasks.iter().any(|t| {
        matches!(t.status, TaskStatus::Fail | TaskStatus::Blocked)
            && t.hints.is_empty()
            && t.hints_available > 0
    });
    if stuck {
        let _ = writeln!(out, "{}", tr!(lang, "report-stuck", lab = &report.lab));
    }
    out
}

/// The versioned JSON report (docs/report-format.md), pretty-printed with a final newline.
pub fn json(report: &Report) -> Result<String> {
    Ok(serde_json::to_string_pretty(report)? + "\n")
}

/// JUnit XML: one test suite per lab, one test case per task; FAIL is a failure, ERROR an
/// error, BLOCKED a skipped case.
pub fn junit(report: &Report) -> Result<String> {
    Ok(junit_report(report, &report.lab).to_string()?)
}

fn junit_report(report: &Report, suite_name: &str) -> quick_junit::Report {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut suite = TestSuite::new(suite_name.to_string());
    for task in &report.tasks {
        let evidence = task.evidence.join("\n");
        let status = match task.status {
            TaskStatus::Pass => TestCaseStatus::success(),
            TaskStatus::Blocked => {
                let mut status = TestCaseStatus::skipped();
                status.set_message(evidence.clone());
                status
            }
            TaskStatus::Fail | TaskStatus::Error => {
                let kind = if task.status == TaskStatus::Fail {
                    NonSuccessKind::Failure
                } else {
                    NonSuccessKind::Error
                };
                let mut status = TestCaseStatus::non_success(kind);
                status.set_message(task.evidence.first().cloned().unwrap_or_default());
                status.set_description(evidence.clone());
                status
            }
        };
        let mut case = TestCase::new(task.id.clone(), status);
        case.set_classname(report.lab.clone());
        if task.status == TaskStatus::Pass {
            case.set_system_out(evidence);
        }
        suite.add_test_case(case);
    }
    let mut junit = quick_junit::Report::new("lab-runner check");
    junit.add_test_suite(suite);
    junit
}

/// One learner's row in a class report: their report, or why their cluster could not be graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearnerResult {
    /// The kubeconfig context graded.
    pub context: String,
    /// `ERROR` when the cluster could not be graded; otherwise PASS or FAIL for the whole lab.
    pub status: TaskStatus,
    /// Why the cluster could not be graded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The learner's report.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report: Option<Report>,
}

/// Many learners' clusters graded for one lab (`check --contexts`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassReport {
    /// [`REPORT_VERSION`].
    pub report_version: u32,
    /// Lab id.
    pub lab: String,
    /// One row per learner, in the order the contexts were given.
    pub learners: Vec<LearnerResult>,
    /// Every learner's cluster was graded and passed.
    pub passed: bool,
}

impl ClassReport {
    /// A class report from per-context outcomes.
    pub fn new(lab: &str, outcomes: Vec<(String, std::result::Result<Report, String>)>) -> ClassReport {
        let learners: Vec<LearnerResult> = outcomes
            .into_iter()
            .map(|(context, outcome)| match outcome {
                Ok(report) => LearnerResult {
                    context,
                    status: if report.passed { TaskStatus::Pass } else { TaskStatus::Fail },
                    error: None,
                    report: Some(report),
                },
                Err(error) => {
                    LearnerResult { context, status: TaskStatus::Error, error: Some(error), report: None }
                }
            })
            .collect();
        ClassReport {
            report_version: REPORT_VERSION,
            lab: lab.to_string(),
            passed: learners.iter().all(|l| l.status == TaskStatus::Pass),
            learners,
        }
    }
}

/// The class report for a terminal: a summary row per learner, then each learner's report in `lang`.
pub fn class_human(class: &ClassReport, styled: bool, lang: Lang) -> String {
    let mut out = String::new();
    let width = class.learners.iter().map(|l| l.context.len()).max().unwrap_or(0);
    for learner in &class.learners {
        let summary = match (&learner.report, &learner.error) {
            (Some(report), _) => format!("{}/{}", report.score, report.total),
            (None, Some(error)) => error.clone(),
            (None, None) => String::new(),
        };
        let _ = writeln!(out, "{:<7} {:<width$}  {summary}", learner.status.as_str(), learner.context);
    }
    for learner in &class.learners {
        if let Some(report) = &learner.report {
            let _ = writeln!(out, "\n[{}]", learner.context);
            out.push_str(&human_in(report, styled, lang));
        }
    }
    out
}

/// The class report as JUnit: one test suite per learner; an unreachable learner is a suite
/// with one `cluster` case in error.
pub fn class_junit(class: &ClassReport) -> Result<String> {
    use quick_junit::{NonSuccessKind, TestCase, TestCaseStatus, TestSuite};
    let mut junit = quick_junit::Report::new("lab-runner check");
    for learner in &class.learners {
        match (&learner.report, &learner.error) {
            (Some(report), _) => {
                let single = junit_report(report, &format!("{}/{}", learner.context, report.lab));
                junit.add_test_suites(single.test_suites);
            }
            (None, error) => {
                let mut suite = TestSuite::new(format!("{}/{}", learner.context, class.lab));
                let mut status = TestCaseStatus::non_success(NonSuccessKind::Error);
                status.set_message(error.clone().unwrap_or_default());
                suite.add_test_case(TestCase::new("cluster", status));
                junit.add_test_suite(suite);
            }
        }
    }
    Ok(junit.to_string()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: TaskStatus) -> TaskResult {
        TaskResult {
            id: id.into(),
            title: id.into(),
            description: None,
            status,
            points: 1,
            awarded: 0,
            evidence: vec!["seen".into()],
            hints: Vec::new(),
            hints_available: 2,
            solution: None,
        }
    }

    #[test]
    fn the_hint_nudge_is_for_failing_or_blocked_tasks_and_the_variant_is_named_when_revealed() {
        let errors =
            Report::new("lab", "t", None, vec![task("a", TaskStatus::Error), task("b", TaskStatus::Error)]);
        let text = human_in(&errors, false, Lang::En);
        assert!(!text.contains("--hint"), "no hint mends a task that could not be graded:\n{text}");
        assert!(!text.contains("variant"), "{text}");
        let failing = Report::new(
            "lab",
            "t",
            Some("image".into()),
            vec![task("a", TaskStatus::Error), task("b", TaskStatus::Blocked)],
        );
        let text = human_in(&failing, false, Lang::En);
        assert!(text.contains("stuck? lab-runner check lab --hint 1"), "{text}");
        assert_eq!(text.lines().nth(1), Some("variant image"));
    }
}
