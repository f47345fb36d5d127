//! The live checklist of `check --watch`: each task's latest verdict and whether it regressed,
//! drawn in place on a terminal, or as one line per change where output is not a terminal.

use std::{collections::BTreeMap, fmt::Write as _, time::Duration};

use owo_colors::OwoColorize;

use super::{Report, TaskStatus};
use crate::{session::Lang, tr};

/// Where a task stands over the whole watch, beyond its latest verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum History {
    /// It has not passed at any evaluation of this watch.
    NotYetPassed,
    /// It passes now.
    Passing,
    /// It passed at an earlier evaluation and does not pass now.
    Regressed,
}

/// One task's row in the checklist.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Task id.
    pub id: String,
    /// Title in the session language.
    pub title: String,
    /// Latest verdict.
    pub status: TaskStatus,
    /// Its history over the watch.
    pub history: History,
    /// Points awarded now.
    pub awarded: i64,
    /// Points the task is worth.
    pub points: i64,
    /// The first evidence line of the latest verdict, if any.
    pub evidence: Option<String>,
}

/// A task whose verdict changed at an evaluation (or was first seen).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Task id.
    pub id: String,
    /// The verdict before; `None` at the first evaluation.
    pub from: Option<TaskStatus>,
    /// The verdict now.
    pub to: TaskStatus,
    /// The task's history after this change.
    pub history: History,
    /// The first evidence line of the new verdict, if any.
    pub evidence: Option<String>,
}

/// Every task's latest verdict and history, updated from each evaluation's report.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Checklist {
    rows: Vec<Row>,
    score: i64,
    total: i64,
    evaluations: u32,
}

impl Checklist {
    /// An empty checklist (no evaluation yet).
    pub fn new() -> Checklist {
        Checklist::default()
    }

    /// Records the report of a new evaluation and returns what changed: every task at the first
    /// evaluation, then the tasks whose verdict differs from the previous one. A task that
    /// passed at any earlier evaluation and does not pass now is [`History::Regressed`].
    pub fn update(&mut self, report: &Report) -> Vec<Change> {
        let before: BTreeMap<&str, &Row> = self.rows.iter().map(|r| (r.id.as_str(), r)).collect();
        let mut rows = Vec::with_capacity(report.tasks.len());
        let mut changes = Vec::new();
        for task in &report.tasks {
            let previous = before.get(task.id.as_str());
            let passed_before = previous.is_some_and(|r| r.history != History::NotYetPassed);
            let history = match (task.status, passed_before) {
                (TaskStatus::Pass, _) => History::Passing,
                (_, true) => History::Regressed,
                (_, false) => History::NotYetPassed,
            };
            let evidence = task.evidence.first().cloned();
            let from = previous.map(|r| r.status);
            if from != Some(task.status) {
                changes.push(Change {
                    id: task.id.clone(),
                    from,
                    to: task.status,
                    history,
                    evidence: evidence.clone(),
                });
            }
            rows.push(Row {
                id: task.id.clone(),
                title: task.title.clone(),
                status: task.status,
                history,
                awarded: task.awarded,
                points: task.points,
                evidence,
            });
        }
        self.rows = rows;
        self.score = report.score;
        self.total = report.total;
        self.evaluations += 1;
        changes
    }

    /// The rows, in `needs` order.
    pub fn rows(&self) -> &[Row] {
        &self.rows
    }

    /// How many evaluations have been recorded.
    pub fn evaluations(&self) -> u32 {
        self.evaluations
    }

    /// The ids of tasks that passed earlier and do not pass now.
    pub fn regressed(&self) -> Vec<&str> {
        self.rows.iter().filter(|r| r.history == History::Regressed).map(|r| r.id.as_str()).collect()
    }

    /// `score S/T`, with what the watch is waiting for, in `lang`.
    pub fn summary(&self, lang: Lang) -> String {
        let open = self.rows.iter().filter(|r| r.status != TaskStatus::Pass).count();
        tr!(lang, "watch-summary", open = open, score = self.score, total = self.total)
    }
}

fn verdict(status: TaskStatus, styled: bool) -> String {
    let text = format!("{:<7}", status.as_str());
    if !styled {
        return text;
    }
    match status {
        TaskStatus::Pass => text.green().bold().to_string(),
        TaskStatus::Fail => text.red().bold().to_string(),
        TaskStatus::Blocked => text.yellow().to_string(),
        TaskStatus::Error => text.magenta().bold().to_string(),
    }
}

const REGRESSED: &str = "REGRESSED";

/// The checklist's rows as drawn on a terminal, one line per task (the caller fits them to the
/// terminal's width): verdict, id, points, a regression marker, and the title or, for a task that
/// does not pass, its first evidence line.
pub fn rows(checklist: &Checklist, styled: bool) -> Vec<String> {
    let width = checklist.rows.iter().map(|r| r.id.len()).max().unwrap_or(0);
    checklist
        .rows
        .iter()
        .map(|row| {
            let marker = match (row.history, styled) {
                (History::Regressed, true) => format!("{} ", REGRESSED.red().bold()),
                (History::Regressed, false) => format!("{REGRESSED} "),
                _ => String::new(),
            };
            let detail = match (&row.evidence, row.status) {
                (Some(evidence), status) if status != TaskStatus::Pass => format!(" · {evidence}"),
                _ => String::new(),
            };
            format!(
                "{} {:<width$}  {}/{}  {marker}{}{detail}",
                verdict(row.status, styled),
                row.id,
                row.awarded,
                row.points,
                row.title
            )
        })
        .collect()
}

/// `[+12s]`: time since the watch started, in whole seconds.
fn stamp(elapsed: Duration) -> String {
    format!("[+{}s]", elapsed.as_secs())
}

/// The lines printed where output is not a terminal: one per changed task, then the score when
/// anything changed (nothing when nothing did), in `lang`.
pub fn change_lines(changes: &[Change], checklist: &Checklist, elapsed: Duration, lang: Lang) -> String {
    if changes.is_empty() {
        return String::new();
    }
    let stamp = stamp(elapsed);
    let width = checklist.rows.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for change in changes {
        let verdict = match change.from {
            None => change.to.as_str().to_string(),
            Some(from) => format!("{} → {}", from.as_str(), change.to.as_str()),
        };
        let marker =
            if change.history == History::Regressed { format!(" {REGRESSED}") } else { String::new() };
        let evidence = match (&change.evidence, change.to) {
            (Some(evidence), status) if status != TaskStatus::Pass => format!(" · {evidence}"),
            _ => String::new(),
        };
        let _ = writeln!(out, "{stamp} {:<width$}  {verdict}{marker}{evidence}", change.id);
    }
    let _ = writeln!(out, "{stamp} {}", checklist.summary(lang));
    out
}

/// The checklist drawn in place on a terminal (stderr): a row per task, and a footer with a
/// spinner, the score and what the watch waits for. Rows fit the terminal's width.
pub struct Terminal {
    multi: indicatif::MultiProgress,
    rows: Vec<indicatif::ProgressBar>,
    footer: indicatif::ProgressBar,
    watching: String,
    lang: Lang,
}

impl Terminal {
    /// Starts drawing on stderr, in `lang`: only the footer until the first evaluation.
    pub fn new(lab: &str, context: &str, lang: Lang) -> Terminal {
        use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let footer = multi.add(ProgressBar::new_spinner());
        footer.set_style(ProgressStyle::with_template("{spinner} {wide_msg}").expect("a valid template"));
        footer.enable_steady_tick(Duration::from_millis(120));
        let watching = tr!(lang, "watch-watching", lab = lab, context = context);
        footer.set_message(tr!(lang, "watch-listing", watching = &watching));
        Terminal { multi, rows: Vec::new(), footer, watching, lang }
    }

    /// Redraws the rows from `checklist`; `reconnecting` names watches being re-established.
    pub fn draw(&mut self, checklist: &Checklist, reconnecting: &[(String, String)], styled: bool) {
        use indicatif::{ProgressBar, ProgressStyle};
        let lines = rows(checklist, styled);
        while self.rows.len() < lines.len() {
            let row = self.multi.insert_before(&self.footer, ProgressBar::new(0));
            row.set_style(ProgressStyle::with_template("{wide_msg}").expect("a valid template"));
            self.rows.push(row);
        }
        for (row, line) in self.rows.iter().zip(lines) {
            row.set_message(line);
        }
        let mut footer = format!("{} · {}", checklist.summary(self.lang), self.watching);
        for (feed, reason) in reconnecting {
            footer.push_str(" · ");
            footer.push_str(&tr!(self.lang, "watch-reconnecting", feed = feed, reason = reason));
        }
        self.footer.set_message(footer);
    }

    /// Clears the checklist from the terminal (the final report follows on stdout).
    pub fn finish(self) {
        for row in &self.rows {
            row.finish_and_clear();
        }
        self.footer.finish_and_clear();
        let _ = self.multi.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::TaskResult;

    fn report(statuses: &[(&str, TaskStatus)]) -> Report {
        let tasks = statuses
            .iter()
            .map(|(id, status)| TaskResult {
                id: id.to_string(),
                description: None,
                title: format!("Title of {id}"),
                status: *status,
                points: 2,
                awarded: if *status == TaskStatus::Pass { 2 } else { 0 },
                evidence: vec![format!("{id} seen {}", status.as_str().to_lowercase())],
                hints: Vec::new(),
                hints_available: 0,
                solution: None,
            })
            .collect();
        Report::new("lab", "Lab", None, tasks)
    }

    use TaskStatus::{Blocked, Fail, Pass};

    #[test]
    fn changes_are_reported_and_a_task_that_passed_and_now_fails_is_regressed() {
        let mut checklist = Checklist::new();
        let first = checklist.update(&report(&[("node", Fail), ("restore", Blocked)]));
        assert_eq!(first.len(), 2, "every task is new at the first evaluation");
        assert!(first.iter().all(|c| c.from.is_none()));

        let nothing = checklist.update(&report(&[("node", Fail), ("restore", Blocked)]));
        assert!(nothing.is_empty());

        let fixed = checklist.update(&report(&[("node", Pass), ("restore", Pass)]));
        assert_eq!(
            fixed.iter().map(|c| (c.id.as_str(), c.from, c.to, c.history)).collect::<Vec<_>>(),
            [
                ("node", Some(Fail), Pass, History::Passing),
                ("restore", Some(Blocked), Pass, History::Passing)
            ]
        );

        let broken = checklist.update(&report(&[("node", Pass), ("restore", Fail)]));
        assert_eq!(broken.len(), 1);
        assert_eq!(broken[0].history, History::Regressed);
        assert_eq!(checklist.regressed(), ["restore"]);

        // Still failing: still regressed, and no new change line.
        assert!(checklist.update(&report(&[("node", Pass), ("restore", Fail)])).is_empty());
        assert_eq!(checklist.regressed(), ["restore"]);
        // Passing again clears the marker.
        checklist.update(&report(&[("node", Pass), ("restore", Pass)]));
        assert!(checklist.regressed().is_empty());
        assert_eq!(checklist.evaluations(), 6);
    }

    #[test]
    fn the_terminal_checklist_draws_and_clears() {
        let mut checklist = Checklist::new();
        checklist.update(&report(&[("node", Fail), ("restore", Blocked)]));
        let mut terminal = Terminal::new("lab", "ctx", Lang::En);
        terminal.draw(&checklist, &[("v1 Pod".into(), "connection reset".into())], true);
        assert_eq!(terminal.rows.len(), 2);
        checklist.update(&report(&[("node", Pass), ("restore", Fail)]));
        terminal.draw(&checklist, &[], true);
        assert_eq!(terminal.rows.len(), 2, "rows are redrawn, not added");
        assert_eq!(terminal.rows[1].message(), rows(&checklist, true)[1]);
        assert!(terminal.footer.message().starts_with("score 2/4 — 1 task to go · watching lab on ctx"));
        terminal.finish();
    }

    #[test]
    fn lines_for_a_terminal_and_for_a_log() {
        let mut checklist = Checklist::new();
        let mut text = change_lines(
            &checklist.update(&report(&[("node", Fail), ("restore", Blocked)])),
            &checklist,
            Duration::ZERO,
            Lang::En,
        );
        checklist.update(&report(&[("node", Pass), ("restore", Pass)]));
        let changes = checklist.update(&report(&[("node", Pass), ("restore", Fail)]));
        text.push_str(&change_lines(&changes, &checklist, Duration::from_millis(12_400), Lang::En));
        text.push_str("-- terminal rows --\n");
        for row in rows(&checklist, false) {
            text.push_str(&row);
            text.push('\n');
        }
        insta::assert_snapshot!(text);
        let japanese = change_lines(&changes, &checklist, Duration::from_millis(12_400), Lang::Ja);
        insta::assert_snapshot!("lines_for_a_log_ja", japanese);
    }
}
