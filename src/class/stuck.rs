//! Where the class gets stuck: per task, the time to first PASS across learners, who has not passed, common wrong answers and failing evidence, hints — from the class's timeline.
//!
//! A learner's time to first PASS of a task counts from its first start of the lab recorded in
//! the timeline (else from its first recorded event) to the first PASS verdict recorded for the
//! task. A learner who has not passed is one whose last recorded verdict of the task is not PASS,
//! or who has none. Wrong answers are counted by value; the values are shown only with
//! `--reveal` (a report may be projected).

use std::{
    collections::{BTreeMap, HashMap},
    fmt::Write as _,
};

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;
use unicode_width::UnicodeWidthStr as _;

use super::timeline::{Event, EventKind, Lifecycle};
use crate::{report::TaskStatus, session::Lang, tr};

/// How many of the most common wrong answers and failing evidence are shown per task.
const MOST_COMMON: usize = 3;

/// A value and how often it was seen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counted {
    /// The value (a wrong answer, or failing evidence).
    pub value: String,
    /// How many times.
    pub count: usize,
}

/// One learner's time to first PASS of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeToPass {
    /// The learner.
    pub learner: String,
    /// Seconds from its start to its first PASS.
    pub seconds: u64,
}

/// One task of the class view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskView {
    /// The task id.
    pub id: String,
    /// Each learner who passed it once, with how long it took, fastest first.
    pub time_to_pass: Vec<TimeToPass>,
    /// The median of those times (seconds).
    pub median_seconds: Option<u64>,
    /// The slowest of them.
    pub slowest: Option<TimeToPass>,
    /// The learners whose last verdict is not PASS.
    pub not_passing: Vec<String>,
    /// How many wrong answers were given.
    pub wrong_answers: usize,
    /// The most common wrong answers (only with `--reveal`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub common_wrong_answers: Vec<Counted>,
    /// The most common evidence of a FAIL.
    pub common_failing_evidence: Vec<Counted>,
    /// How many hint levels were shown.
    pub hints_shown: usize,
    /// How many learners asked for a hint.
    pub hinted_learners: usize,
}

impl TaskView {
    /// What the class spent on the task: the sum of the times to first PASS.
    fn spent(&self) -> u64 {
        self.time_to_pass.iter().map(|t| t.seconds).sum()
    }
}

/// The class view of one lab, tasks with the most time spent first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassView {
    /// The lab.
    pub lab: String,
    /// The learners.
    pub learners: Vec<String>,
    /// The tasks, the one the class spent most time on first (ties: the lab's order).
    pub tasks: Vec<TaskView>,
}

/// The class view of `lab` from its `events`, for `learners` and the lab's `tasks` (in order).
pub fn class_view(
    lab: &str,
    learners: &[String],
    tasks: &[String],
    events: &[Event],
    reveal: bool,
) -> ClassView {
    // From the learner's first start, else from its first recorded event.
    let mut origin: HashMap<&str, Timestamp> = HashMap::new();
    for event in events.iter().filter(|e| matches!(e.kind, EventKind::Lifecycle { what: Lifecycle::Start })) {
        origin.entry(&event.learner).or_insert(event.at);
    }
    for event in events {
        origin.entry(&event.learner).or_insert(event.at);
    }
    let mut views: Vec<TaskView> =
        tasks.iter().map(|task| task_view(task, learners, events, &origin, reveal)).collect();
    // Stable: equal time spent keeps the lab's order.
    views.sort_by_key(|v| std::cmp::Reverse(v.spent() + v.not_passing.len() as u64));
    ClassView { lab: lab.to_string(), learners: learners.to_vec(), tasks: views }
}

fn task_view(
    task: &str,
    learners: &[String],
    events: &[Event],
    origin: &HashMap<&str, Timestamp>,
    reveal: bool,
) -> TaskView {
    let mut first_pass: BTreeMap<&str, Timestamp> = BTreeMap::new();
    let mut last: HashMap<&str, TaskStatus> = HashMap::new();
    let mut wrong: BTreeMap<&str, usize> = BTreeMap::new();
    let mut wrong_answers = 0;
    let mut evidence: BTreeMap<String, usize> = BTreeMap::new();
    let mut hints_shown = 0;
    let mut hinted: Vec<&str> = Vec::new();
    for event in events.iter().filter(|e| e.kind.task() == Some(task)) {
        let learner = event.learner.as_str();
        match &event.kind {
            EventKind::Verdict { status, evidence: lines, .. } => {
                last.insert(learner, *status);
                if *status == TaskStatus::Pass {
                    first_pass.entry(learner).or_insert(event.at);
                } else if *status == TaskStatus::Fail && !lines.is_empty() {
                    *evidence.entry(lines.join("; ")).or_default() += 1;
                }
            }
            EventKind::Answer { value, right: false, .. } => {
                wrong_answers += 1;
                *wrong.entry(value).or_default() += 1;
            }
            EventKind::Hint { .. } => {
                hints_shown += 1;
                if !hinted.contains(&learner) {
                    hinted.push(learner);
                }
            }
            _ => {}
        }
    }
    let mut time_to_pass: Vec<TimeToPass> = first_pass
        .iter()
        .map(|(learner, at)| {
            let from = origin.get(learner).copied().unwrap_or(*at);
            let seconds = u64::try_from(at.duration_since(from).as_secs()).unwrap_or(0);
            TimeToPass { learner: learner.to_string(), seconds }
        })
        .collect();
    time_to_pass.sort_by_key(|t| t.seconds);
    let median_seconds = median(&time_to_pass.iter().map(|t| t.seconds).collect::<Vec<_>>());
    let most_common = |counts: BTreeMap<String, usize>| {
        let mut counted: Vec<Counted> =
            counts.into_iter().map(|(value, count)| Counted { value, count }).collect();
        counted.sort_by_key(|c| std::cmp::Reverse(c.count));
        counted.truncate(MOST_COMMON);
        counted
    };
    TaskView {
        id: task.to_string(),
        median_seconds,
        slowest: time_to_pass.last().cloned(),
        time_to_pass,
        not_passing: learners
            .iter()
            .filter(|l| last.get(l.as_str()) != Some(&TaskStatus::Pass))
            .cloned()
            .collect(),
        wrong_answers,
        common_wrong_answers: if reveal {
            most_common(wrong.into_iter().map(|(v, c)| (v.to_string(), c)).collect())
        } else {
            Vec::new()
        },
        common_failing_evidence: most_common(evidence),
        hints_shown,
        hinted_learners: hinted.len(),
    }
}

/// The median of sorted `values` (the lower middle of an even count: a time some learner took).
fn median(sorted: &[u64]) -> Option<u64> {
    if sorted.is_empty() { None } else { Some(sorted[(sorted.len() - 1) / 2]) }
}

/// `4m10s`, `1h02m`, `35s`.
pub fn human_seconds(seconds: u64) -> String {
    match seconds {
        s if s < 60 => format!("{s}s"),
        s if s < 3600 => format!("{}m{:02}s", s / 60, s % 60),
        s => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
    }
}

fn table(rows: &[Vec<String>]) -> String {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| rows.iter().filter_map(|r| r.get(c)).map(|s| s.width()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (cell, width) in row.iter().zip(&widths) {
            let _ = write!(line, "{cell}{}  ", " ".repeat(width.saturating_sub(cell.width())));
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

/// The class view for a terminal: one line per task, then the most common failing evidence and
/// wrong answers.
pub fn render(view: &ClassView, lang: Lang) -> String {
    let mut out = tr!(lang, "stuck-heading", lab = view.lab.as_str(), learners = view.learners.len()) + "\n";
    let mut rows = vec![vec![
        tr!(lang, "stuck-task"),
        tr!(lang, "stuck-passed"),
        tr!(lang, "stuck-median"),
        tr!(lang, "stuck-slowest"),
        tr!(lang, "stuck-wrong-answers"),
        tr!(lang, "stuck-hints"),
    ]];
    for task in &view.tasks {
        rows.push(vec![
            task.id.clone(),
            format!("{}/{}", view.learners.len() - task.not_passing.len(), view.learners.len()),
            task.median_seconds.map(human_seconds).unwrap_or_else(|| "-".into()),
            task.slowest
                .as_ref()
                .map(|s| format!("{} ({})", human_seconds(s.seconds), s.learner))
                .unwrap_or_else(|| "-".into()),
            task.wrong_answers.to_string(),
            tr!(lang, "stuck-hints-cell", shown = task.hints_shown, learners = task.hinted_learners),
        ]);
    }
    out += &table(&rows);
    for task in &view.tasks {
        if !task.not_passing.is_empty() && task.not_passing.len() < view.learners.len() {
            out += &tr!(
                lang,
                "stuck-not-passing",
                task = task.id.as_str(),
                learners = task.not_passing.join(", ")
            );
            out.push('\n');
        }
        let evidence = task.common_failing_evidence.iter().map(|c| (false, c));
        for (wrong, counted) in evidence.chain(task.common_wrong_answers.iter().map(|c| (true, c))) {
            let (task, count, value) = (task.id.as_str(), counted.count, counted.value.as_str());
            out += &if wrong {
                tr!(lang, "stuck-wrong", task = task, count = count, value = value)
            } else {
                tr!(lang, "stuck-evidence", task = task, count = count, value = value)
            };
            out.push('\n');
        }
    }
    out
}

/// One learner's timeline for a terminal: each event with the time since the first.
pub fn render_timeline(learner: &str, lab: &str, events: &[Event], reveal: bool, lang: Lang) -> String {
    let heading = tr!(lang, "timeline-heading", learner = learner, lab = lab, events = events.len());
    heading + "\n" + &timeline_table(events, reveal, lang)
}

/// A timeline's events as a table: when, the time since the first, the task, what happened.
pub fn timeline_table(events: &[Event], reveal: bool, lang: Lang) -> String {
    let first = events.first().map(|e| e.at);
    let rows: Vec<Vec<String>> = events
        .iter()
        .map(|event| {
            let since = first.map(|f| event.at.duration_since(f).as_secs().max(0) as u64).unwrap_or(0);
            let at = event.at.round(k8s_openapi::jiff::Unit::Second).unwrap_or(event.at).to_string();
            vec![
                at,
                format!("+{}", human_seconds(since)),
                event.kind.task().unwrap_or("-").to_string(),
                describe(&event.kind, reveal, lang),
            ]
        })
        .collect();
    table(&rows)
}

/// What an event says, in `lang` (an answer's value only with `reveal`).
pub fn describe(kind: &EventKind, reveal: bool, lang: Lang) -> String {
    match kind {
        EventKind::Verdict { status, evidence, .. } => {
            let evidence = evidence.join("; ");
            if evidence.is_empty() {
                status.as_str().to_string()
            } else {
                format!("{}: {evidence}", status.as_str())
            }
        }
        EventKind::Answer { value, right, attempt, .. } => {
            let value = if reveal { format!("{value:?}") } else { tr!(lang, "timeline-value-concealed") };
            if *right {
                tr!(lang, "timeline-answer-right", value = value, attempt = *attempt)
            } else {
                tr!(lang, "timeline-answer-wrong", value = value, attempt = *attempt)
            }
        }
        EventKind::Hint { level, .. } => tr!(lang, "timeline-hint", level = *level),
        EventKind::Lifecycle { what: Lifecycle::Start } => tr!(lang, "timeline-start"),
        EventKind::Lifecycle { what: Lifecycle::Reset } => tr!(lang, "timeline-reset"),
        EventKind::Lifecycle { what: Lifecycle::Restart } => tr!(lang, "timeline-restart"),
        EventKind::Write { verb, code, .. } => {
            tr!(lang, "timeline-write", verb = verb, object = written_object(kind), code = code.to_string())
        }
    }
}

/// What a write event wrote: `resource namespace/name` (`resource name`, or the resource alone
/// for a collection).
fn written_object(kind: &EventKind) -> String {
    let EventKind::Write { resource, namespace, name, .. } = kind else { return String::new() };
    match (namespace, name.is_empty()) {
        (Some(namespace), false) => format!("{resource} {namespace}/{name}"),
        (Some(namespace), true) => format!("{resource} -n {namespace}"),
        (None, false) => format!("{resource} {name}"),
        (None, true) => resource.clone(),
    }
}

/// A CSV field, quoted as RFC 4180 says when it holds a comma, a quote or a line break.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_string()
    }
}

/// Rows as CSV (RFC 4180: CRLF line ends).
pub fn csv(rows: &[Vec<String>]) -> String {
    rows.iter().map(|row| row.iter().map(|f| csv_field(f)).collect::<Vec<_>>().join(",") + "\r\n").collect()
}

/// The class view as CSV: one row per task (times in seconds).
pub fn view_csv(view: &ClassView) -> String {
    let mut rows = vec![
        [
            "task",
            "learners",
            "passed",
            "median_seconds",
            "slowest_seconds",
            "slowest_learner",
            "not_passing",
            "wrong_answers",
            "hints_shown",
            "hinted_learners",
            "common_failing_evidence",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for task in &view.tasks {
        let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_default();
        rows.push(vec![
            task.id.clone(),
            view.learners.len().to_string(),
            (view.learners.len() - task.not_passing.len()).to_string(),
            opt(task.median_seconds),
            opt(task.slowest.as_ref().map(|s| s.seconds)),
            task.slowest.as_ref().map(|s| s.learner.clone()).unwrap_or_default(),
            task.not_passing.join(" "),
            task.wrong_answers.to_string(),
            task.hints_shown.to_string(),
            task.hinted_learners.to_string(),
            task.common_failing_evidence.first().map(|c| c.value.clone()).unwrap_or_default(),
        ]);
    }
    csv(&rows)
}

/// A learner's timeline as CSV: one row per event.
pub fn timeline_csv(events: &[Event], reveal: bool) -> String {
    let mut rows = vec![
        ["at", "learner", "event", "task", "status", "value", "right", "attempt", "level", "evidence"]
            .map(String::from)
            .to_vec(),
    ];
    for event in events {
        let mut row = vec![event.at.to_string(), event.learner.clone()];
        let blank = String::new;
        let (kind, status, value, right, attempt, level, evidence) = match &event.kind {
            EventKind::Verdict { status, evidence, .. } => (
                "verdict",
                status.as_str().to_string(),
                blank(),
                blank(),
                blank(),
                blank(),
                evidence.join("; "),
            ),
            EventKind::Answer { value, right, attempt, .. } => (
                "answer",
                blank(),
                if reveal { value.clone() } else { blank() },
                right.to_string(),
                attempt.to_string(),
                blank(),
                blank(),
            ),
            EventKind::Hint { level, .. } => {
                ("hint", blank(), blank(), blank(), blank(), level.to_string(), blank())
            }
            EventKind::Lifecycle { what } => {
                let what = match what {
                    Lifecycle::Start => "start",
                    Lifecycle::Reset => "reset",
                    Lifecycle::Restart => "restart",
                };
                (what, blank(), blank(), blank(), blank(), blank(), blank())
            }
            EventKind::Write { verb, code, .. } => (
                "write",
                code.to_string(),
                blank(),
                blank(),
                blank(),
                blank(),
                format!("{verb} {}", written_object(&event.kind)),
            ),
        };
        row.extend([
            kind.to_string(),
            event.kind.task().unwrap_or_default().to_string(),
            status,
            value,
            right,
            attempt,
            level,
            evidence,
        ]);
        rows.push(row);
    }
    csv(&rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    /// Three learners: 01 passes `fix` after 4 minutes, 02 after 9 with a hint, 03 never (and
    /// answers the quiz wrongly twice, the same value), 02 answers it right after one wrong.
    pub(crate) fn a_class() -> (Vec<String>, Vec<String>, Vec<Event>) {
        let learners: Vec<String> = (1..=3).map(|n| format!("learner-0{n}")).collect();
        let tasks = vec!["fix".to_string(), "quiz".to_string()];
        let event = |n: usize, s: i64, kind: EventKind| Event {
            learner: format!("learner-0{n}"),
            lab: "lab".into(),
            at: at(s),
            kind,
        };
        let verdict = |task: &str, status: TaskStatus, evidence: &str| EventKind::Verdict {
            task: task.into(),
            status,
            evidence: if evidence.is_empty() { vec![] } else { vec![evidence.into()] },
        };
        let answer = |value: &str, right: bool, attempt: u32| EventKind::Answer {
            task: "quiz".into(),
            value: value.into(),
            right,
            attempt,
        };
        let start = EventKind::Lifecycle { what: Lifecycle::Start };
        use TaskStatus::*;
        let events = vec![
            event(1, 0, start.clone()),
            event(2, 0, start.clone()),
            event(3, 0, start),
            event(1, 1, verdict("fix", Fail, "pod gpu-demo is Pending: 0/2 nodes have nvidia.com/gpu")),
            event(2, 1, verdict("fix", Fail, "pod gpu-demo is Pending: 0/2 nodes have nvidia.com/gpu")),
            event(3, 1, verdict("fix", Fail, "pod gpu-demo is Pending: 0/2 nodes have nvidia.com/gpu")),
            event(1, 1, verdict("quiz", Fail, "not answered yet")),
            event(2, 1, verdict("quiz", Fail, "not answered yet")),
            event(3, 1, verdict("quiz", Fail, "not answered yet")),
            event(1, 240, verdict("fix", Pass, "")),
            event(2, 300, EventKind::Hint { task: "fix".into(), level: 1 }),
            event(2, 320, answer("gpu-node-1", false, 1)),
            event(2, 400, answer("gpu-node-2", true, 2)),
            event(2, 400, verdict("quiz", Pass, "")),
            event(3, 500, answer("gpu-node-1", false, 1)),
            event(3, 510, answer("gpu-node-1", false, 2)),
            event(2, 540, verdict("fix", Pass, "")),
            event(3, 600, EventKind::Lifecycle { what: Lifecycle::Reset }),
        ];
        (learners, tasks, events)
    }

    #[test]
    fn times_to_first_pass_who_has_not_passed_and_what_is_common() {
        let (learners, tasks, events) = a_class();
        let view = class_view("lab", &learners, &tasks, &events, false);
        let fix = view.tasks.iter().find(|t| t.id == "fix").unwrap();
        assert_eq!(fix.time_to_pass.iter().map(|t| t.seconds).collect::<Vec<_>>(), [240, 540]);
        assert_eq!(fix.median_seconds, Some(240));
        assert_eq!(fix.slowest, Some(TimeToPass { learner: "learner-02".into(), seconds: 540 }));
        assert_eq!(fix.not_passing, ["learner-03"]);
        assert_eq!(fix.common_failing_evidence[0].count, 3);
        assert_eq!((fix.hints_shown, fix.hinted_learners), (1, 1));
        let quiz = view.tasks.iter().find(|t| t.id == "quiz").unwrap();
        assert_eq!(quiz.wrong_answers, 3);
        assert!(quiz.common_wrong_answers.is_empty(), "no value without --reveal");
        assert_eq!(quiz.not_passing, ["learner-01", "learner-03"]);
        // The task the class spent most on comes first.
        assert_eq!(view.tasks[0].id, "fix");
        let revealed = class_view("lab", &learners, &tasks, &events, true);
        let quiz = revealed.tasks.iter().find(|t| t.id == "quiz").unwrap();
        assert_eq!(quiz.common_wrong_answers, [Counted { value: "gpu-node-1".into(), count: 3 }]);
    }

    #[test]
    fn the_class_view_reads_in_english_and_japanese() {
        let (learners, tasks, events) = a_class();
        let view = class_view("lab", &learners, &tasks, &events, false);
        insta::assert_snapshot!("class_view_en", render(&view, Lang::En));
        insta::assert_snapshot!("class_view_ja", render(&view, Lang::Ja));
        insta::assert_snapshot!("class_view_csv", view_csv(&view));
    }

    #[test]
    fn a_learners_timeline_conceals_answers_unless_revealed() {
        let (_, _, events) = a_class();
        let mine: Vec<Event> = events.into_iter().filter(|e| e.learner == "learner-02").collect();
        let shown = render_timeline("learner-02", "lab", &mine, false, Lang::En);
        assert!(!shown.contains("gpu-node-1"), "{shown}");
        insta::assert_snapshot!("timeline_en", shown);
        insta::assert_snapshot!("timeline_ja", render_timeline("learner-02", "lab", &mine, false, Lang::Ja));
        assert!(render_timeline("learner-02", "lab", &mine, true, Lang::En).contains("\"gpu-node-1\""));
        let csv = timeline_csv(&mine, false);
        assert!(!csv.contains("gpu-node"), "{csv}");
        insta::assert_snapshot!("timeline_csv", csv);
    }

    #[test]
    fn csv_fields_are_quoted_as_rfc_4180_says() {
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(csv_field("say \"x\""), "\"say \"\"x\"\"\"");
        assert_eq!(csv_field("plain"), "plain");
    }
}
