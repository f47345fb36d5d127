//! Each learner's timeline, kept in `CLASS/timeline.db` (SQLite): verdict changes with their evidence, answers, hints, starts, resets and restarts.
//!
//! Who writes what: the board's grading loop sees every verdict change and, through the lab's
//! inventory ConfigMap it already watches, every recorded answer (value, attempt) and every hint
//! level `check --hint` recorded there; it compares them with the last state the timeline holds
//! ([`Timeline::last_states`]), so a restarted board records no change twice. The class's own
//! commands (`class up`, `start`, `reset`, `restart`) record what they did to each learner.
//! What is recorded is the instructor's choice ([`RecordMode`], `class up --record`), kept in
//! the database itself so every writer follows it. Answer values are stored (with `all`) and
//! shown only with `--reveal`.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
};

use k8s_openapi::jiff::Timestamp;
use rusqlite::{Connection, OptionalExtension as _, params};
use serde::{Deserialize, Serialize};

use crate::report::{Report, TaskStatus};

/// The timeline inside a class directory.
pub const TIMELINE_FILE: &str = "timeline.db";

/// Errors of the timeline; each maps to one documented exit code (`src/exit.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The database could not be opened, read or written. Exit 3.
    #[error("{path}: {source}")]
    Db {
        /// The database.
        path: PathBuf,
        /// What SQLite said.
        source: rusqlite::Error,
    },
    /// A simulator's audit log could not be read. Exit 3.
    #[error("{path}: {source}")]
    Audit {
        /// The simulator's state directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A stored event is not one this version reads. Exit 3.
    #[error("{path}: an event cannot be read: {reason}")]
    Corrupt {
        /// The database.
        path: PathBuf,
        /// Why.
        reason: String,
    },
}

/// What the class records (`class up --record`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RecordMode {
    /// Nothing.
    None,
    /// Verdict changes (with their evidence), starts, resets and restarts; no answers, no hints.
    Verdicts,
    /// Also every answer (its value, right or wrong, its attempt) and every hint level shown.
    #[default]
    All,
}

impl RecordMode {
    fn as_str(self) -> &'static str {
        match self {
            RecordMode::None => "none",
            RecordMode::Verdicts => "verdicts",
            RecordMode::All => "all",
        }
    }

    fn parse(text: &str) -> Option<RecordMode> {
        [RecordMode::None, RecordMode::Verdicts, RecordMode::All].into_iter().find(|m| m.as_str() == text)
    }

    /// Whether an event of this kind is recorded.
    pub fn keeps(self, kind: &EventKind) -> bool {
        !matches!(
            (self, kind),
            (RecordMode::None, _)
                | (
                    RecordMode::Verdicts,
                    EventKind::Answer { .. } | EventKind::Hint { .. } | EventKind::Write { .. }
                )
        )
    }
}

/// What the class did to a learner.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Lifecycle {
    /// The lab started in its cluster.
    Start,
    /// The lab put back to its start (`class reset`).
    Reset,
    /// Its simulator restarted (`class restart`).
    Restart,
}

/// One thing that happened to a learner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "camelCase")]
pub enum EventKind {
    /// A task's verdict changed; the evidence at that moment (quiz values concealed).
    Verdict {
        /// The task.
        task: String,
        /// Its new verdict.
        status: TaskStatus,
        /// The grader's evidence, line by line.
        evidence: Vec<String>,
    },
    /// An answer was recorded.
    Answer {
        /// The quiz.
        task: String,
        /// The value given (shown only with `--reveal`).
        value: String,
        /// Whether the quiz passed with it.
        right: bool,
        /// Its attempt, from 1.
        attempt: u32,
    },
    /// A hint level was shown (`check --hint N`).
    Hint {
        /// The task.
        task: String,
        /// The level.
        level: u8,
    },
    /// The class started, reset or restarted the learner.
    Lifecycle {
        /// What it did.
        what: Lifecycle,
    },
    /// A write to the learner's cluster, from their simulator's audit log.
    Write {
        /// The Kubernetes verb (create, update, patch, delete, deletecollection).
        verb: String,
        /// The resource (plural), with its subresource (`deployments/scale`).
        resource: String,
        /// The object's namespace, if any.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        namespace: Option<String>,
        /// The object's name (empty for a collection).
        name: String,
        /// The response's HTTP status code.
        code: u16,
    },
}

impl EventKind {
    /// The task the event is about, if any.
    pub fn task(&self) -> Option<&str> {
        match self {
            EventKind::Verdict { task, .. }
            | EventKind::Answer { task, .. }
            | EventKind::Hint { task, .. } => Some(task),
            EventKind::Lifecycle { .. } | EventKind::Write { .. } => None,
        }
    }
}

/// One event of a learner's timeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The learner (its context).
    pub learner: String,
    /// The lab.
    pub lab: String,
    /// When.
    pub at: Timestamp,
    /// What.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// What the timeline last holds of one learner: each task's verdict, attempts and hint level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LearnerState {
    /// The last verdict recorded, by task.
    pub verdicts: BTreeMap<String, TaskStatus>,
    /// The last attempt recorded, by quiz.
    pub attempts: BTreeMap<String, u32>,
    /// The highest hint level recorded, by task.
    pub hints: BTreeMap<String, u8>,
}

/// What one grading observed of a learner: the report and the inventory's answers, attempts and
/// hint levels.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// Each task's verdict and evidence.
    pub tasks: Vec<(String, TaskStatus, Vec<String>)>,
    /// The recorded answers, by quiz.
    pub answers: BTreeMap<String, String>,
    /// How many answers were recorded, by quiz.
    pub attempts: BTreeMap<String, u32>,
    /// The highest hint level shown, by task.
    pub hints: BTreeMap<String, u8>,
}

impl Observed {
    /// What `report` (graded from `inventory`) shows.
    pub fn of(report: &Report, inventory: Option<&crate::engine::inventory::Inventory>) -> Observed {
        let tasks = report.tasks.iter().map(|t| (t.id.clone(), t.status, t.evidence.clone())).collect();
        match inventory {
            None => Observed { tasks, ..Observed::default() },
            Some(inventory) => Observed {
                tasks,
                answers: inventory.answers.clone(),
                attempts: inventory.attempts.clone(),
                hints: inventory.hints.clone(),
            },
        }
    }
}

/// The events that lead from `state` to `observed`, and the state after them. An attempt count
/// that went down (the lab was reset) or a hint level that went down is no event.
pub fn changes(state: &LearnerState, observed: &Observed) -> (Vec<EventKind>, LearnerState) {
    let mut events = Vec::new();
    let mut next = state.clone();
    for (task, status, evidence) in &observed.tasks {
        if state.verdicts.get(task) != Some(status) {
            events.push(EventKind::Verdict {
                task: task.clone(),
                status: *status,
                evidence: evidence.clone(),
            });
            next.verdicts.insert(task.clone(), *status);
        }
    }
    for (task, attempt) in &observed.attempts {
        let before = state.attempts.get(task).copied().unwrap_or(0);
        if *attempt > before {
            let right =
                observed.tasks.iter().any(|(id, status, _)| id == task && *status == TaskStatus::Pass);
            let value = observed.answers.get(task).cloned().unwrap_or_default();
            events.push(EventKind::Answer { task: task.clone(), value, right, attempt: *attempt });
        }
        next.attempts.insert(task.clone(), *attempt);
    }
    // After a reset the inventory has no attempts: the next answer is attempt 1 again.
    next.attempts.retain(|task, _| observed.attempts.contains_key(task));
    for (task, level) in &observed.hints {
        let before = state.hints.get(task).copied().unwrap_or(0);
        for shown in before + 1..=*level {
            events.push(EventKind::Hint { task: task.clone(), level: shown });
        }
        next.hints.insert(task.clone(), (*level).max(before));
    }
    (events, next)
}

/// The timeline of a class: one SQLite database.
pub struct Timeline {
    path: PathBuf,
    conn: Connection,
}

impl std::fmt::Debug for Timeline {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Timeline").field("path", &self.path).finish()
    }
}

impl Timeline {
    /// Opens (creating when absent) the timeline of the class in `dir`.
    pub fn open(dir: &Path) -> Result<Timeline, Error> {
        let path = dir.join(TIMELINE_FILE);
        let db = |source| Error::Db { path: path.clone(), source };
        let conn = Connection::open(&path).map_err(db)?;
        // Several writers (the board, the class's commands) share the file: WAL lets a reader
        // go on while one writes, and a writer waits for the other instead of failing.
        conn.busy_timeout(std::time::Duration::from_secs(5)).map_err(db)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(db)?;
        // As the simulator's store: a commit is not synced; what the OS has survives a crash of
        // the process, and a power loss costs at most the last events.
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(db)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL);
             CREATE TABLE IF NOT EXISTS events (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 learner TEXT NOT NULL,
                 lab TEXT NOT NULL,
                 at TEXT NOT NULL,
                 kind TEXT NOT NULL,
                 task TEXT,
                 data TEXT NOT NULL);
             CREATE INDEX IF NOT EXISTS events_by_learner ON events (lab, learner, id);",
        )
        .map_err(db)?;
        Ok(Timeline { path, conn })
    }

    fn db(&self, source: rusqlite::Error) -> Error {
        Error::Db { path: self.path.clone(), source }
    }

    /// What the class records (`all` until the instructor chose).
    pub fn mode(&self) -> Result<RecordMode, Error> {
        let value: Option<String> = self
            .conn
            .query_row("SELECT value FROM settings WHERE key = 'record'", [], |row| row.get(0))
            .optional()
            .map_err(|e| self.db(e))?;
        Ok(value.as_deref().and_then(RecordMode::parse).unwrap_or_default())
    }

    /// Sets what the class records from now on.
    pub fn set_mode(&self, mode: RecordMode) -> Result<(), Error> {
        self.conn
            .execute(
                "INSERT INTO settings (key, value) VALUES ('record', ?1)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![mode.as_str()],
            )
            .map_err(|e| self.db(e))?;
        Ok(())
    }

    /// Appends `events` in one transaction, those the record mode keeps.
    pub fn append(&mut self, events: &[Event]) -> Result<(), Error> {
        let mode = self.mode()?;
        let path = self.path.clone();
        let db = |source| Error::Db { path: path.clone(), source };
        let tx = self.conn.transaction().map_err(db)?;
        for event in events.iter().filter(|e| mode.keeps(&e.kind)) {
            let data = serde_json::to_string(&event.kind).expect("an event serializes");
            let kind = match &event.kind {
                EventKind::Verdict { .. } => "verdict",
                EventKind::Answer { .. } => "answer",
                EventKind::Hint { .. } => "hint",
                EventKind::Lifecycle { .. } => "lifecycle",
                EventKind::Write { .. } => "write",
            };
            tx.execute(
                "INSERT INTO events (learner, lab, at, kind, task, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![event.learner, event.lab, event.at.to_string(), kind, event.kind.task(), data],
            )
            .map_err(db)?;
        }
        tx.commit().map_err(db)
    }

    /// Every event of `lab`, of `learner` only when given, in the order they were recorded.
    pub fn events(&self, lab: &str, learner: Option<&str>) -> Result<Vec<Event>, Error> {
        self.select(Some(lab), learner)
    }

    /// Every event of every lab, in the order they were recorded (a learner's own timeline).
    pub fn every_event(&self) -> Result<Vec<Event>, Error> {
        self.select(None, None)
    }

    fn select(&self, lab: Option<&str>, learner: Option<&str>) -> Result<Vec<Event>, Error> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT learner, lab, at, data FROM events
                 WHERE (?1 IS NULL OR lab = ?1) AND (?2 IS NULL OR learner = ?2) ORDER BY id",
            )
            .map_err(|e| self.db(e))?;
        let rows = statement
            .query_map(params![lab, learner], |row| {
                Ok((
                    row.get::<_, String>(0)?,
                    row.get::<_, String>(1)?,
                    row.get::<_, String>(2)?,
                    row.get::<_, String>(3)?,
                ))
            })
            .map_err(|e| self.db(e))?;
        let corrupt = |reason: String| Error::Corrupt { path: self.path.clone(), reason };
        let mut events = Vec::new();
        for row in rows {
            let (learner, lab, at, data) = row.map_err(|e| self.db(e))?;
            let at: Timestamp = at.parse().map_err(|e: k8s_openapi::jiff::Error| corrupt(e.to_string()))?;
            let kind: EventKind = serde_json::from_str(&data).map_err(|e| corrupt(e.to_string()))?;
            events.push(Event { learner, lab, at, kind });
        }
        Ok(events)
    }

    /// Each learner's last state in `lab`, as the events recorded so far leave it.
    pub fn last_states(&self, lab: &str) -> Result<BTreeMap<String, LearnerState>, Error> {
        let mut states: BTreeMap<String, LearnerState> = BTreeMap::new();
        for event in self.events(lab, None)? {
            let state = states.entry(event.learner).or_default();
            match event.kind {
                EventKind::Verdict { task, status, .. } => {
                    state.verdicts.insert(task, status);
                }
                EventKind::Answer { task, attempt, .. } => {
                    state.attempts.insert(task, attempt);
                }
                EventKind::Hint { task, level } => {
                    let kept = state.hints.entry(task).or_default();
                    *kept = (*kept).max(level);
                }
                // A reset takes the answers and hints back; verdicts are observed again.
                EventKind::Lifecycle { what: Lifecycle::Reset } => {
                    state.attempts.clear();
                    state.hints.clear();
                }
                EventKind::Lifecycle { .. } | EventKind::Write { .. } => {}
            }
        }
        Ok(states)
    }
}

/// What the board's grading loop records: each learner's changes, against the last state the
/// timeline holds (read at the board's start, so a restarted board records nothing twice).
#[derive(Debug)]
pub struct Recorder {
    timeline: Timeline,
    lab: String,
    contexts: Vec<String>,
    states: Vec<LearnerState>,
}

impl Recorder {
    /// The recorder of `lab` for `contexts`, in the class's timeline in `dir`.
    pub fn open(dir: &Path, lab: &str, contexts: &[String]) -> Result<Recorder, Error> {
        let timeline = Timeline::open(dir)?;
        let mut last = timeline.last_states(lab)?;
        let states = contexts.iter().map(|c| last.remove(c).unwrap_or_default()).collect();
        Ok(Recorder { timeline, lab: lab.to_string(), contexts: contexts.to_vec(), states })
    }

    /// Records what changed for learner `index` in `observed`, at `now`.
    pub fn observe(&mut self, index: usize, observed: &Observed, now: Timestamp) -> Result<(), Error> {
        let (kinds, next) = changes(&self.states[index], observed);
        if kinds.is_empty() {
            return Ok(());
        }
        let learner = &self.contexts[index];
        let events: Vec<Event> = kinds
            .into_iter()
            .map(|kind| Event { learner: learner.clone(), lab: self.lab.clone(), at: now, kind })
            .collect();
        self.timeline.append(&events)?;
        self.states[index] = next;
        Ok(())
    }
}

/// Whose writes a timeline shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writers {
    /// A hosted learner's: those made with the learner token (the instructor's `class start`
    /// and the board's reads are not the learner's).
    Learner,
    /// Every user's: a learner alone on `sim up` holds the admin token.
    Everyone,
}

/// The writes of the simulator in `sim_dir` (its audit log) as `learner`'s events in `lab`.
pub fn writes(sim_dir: &Path, learner: &str, lab: &str, writers: Writers) -> Result<Vec<Event>, Error> {
    let audit = crate::sim::audit::read(sim_dir)
        .map_err(|source| Error::Audit { path: sim_dir.to_path_buf(), source })?;
    let corrupt =
        |reason: String| Error::Corrupt { path: sim_dir.join(crate::sim::audit::AUDIT_LOG_FILE), reason };
    let mut events = Vec::new();
    for event in audit {
        if writers == Writers::Learner && event.user.username != crate::sim::auth::LEARNER_USER {
            continue;
        }
        let at: Timestamp = event
            .request_received_timestamp
            .parse()
            .map_err(|e: k8s_openapi::jiff::Error| corrupt(e.to_string()))?;
        let object = event.object_ref.unwrap_or_default();
        let resource = match object.subresource.as_str() {
            "" => object.resource,
            sub => format!("{}/{sub}", object.resource),
        };
        let namespace = Some(object.namespace).filter(|n| !n.is_empty());
        let kind = EventKind::Write {
            verb: event.verb,
            resource,
            namespace,
            name: object.name,
            code: event.response_status.code,
        };
        events.push(Event { learner: learner.to_string(), lab: lab.to_string(), at, kind });
    }
    Ok(events)
}

/// `events` with `writes` merged in, in time order (an event recorded at the same moment as a
/// write stays after it).
pub fn merged(events: Vec<Event>, writes: Vec<Event>) -> Vec<Event> {
    let mut all: Vec<Event> = writes.into_iter().chain(events).collect();
    all.sort_by_key(|e| e.at);
    all
}

impl Timeline {
    /// `learner`'s events in `lab` with their writes from the audit log in `sim_dir` when the
    /// record mode keeps writes (`all`).
    pub fn learner_events(
        &self,
        lab: &str,
        learner: &str,
        sim_dir: &Path,
        writers: Writers,
    ) -> Result<Vec<Event>, Error> {
        let events = self.events(lab, Some(learner))?;
        if self.mode()? != RecordMode::All {
            return Ok(events);
        }
        Ok(merged(events, writes(sim_dir, learner, lab, writers)?))
    }
}

/// Records what a class command did to its learners in the class's timeline in `dir`.
pub fn record_lifecycle(
    dir: &Path,
    lab: &str,
    done: &[(String, Lifecycle)],
    now: Timestamp,
) -> Result<(), Error> {
    if done.is_empty() {
        return Ok(());
    }
    let events: Vec<Event> = done
        .iter()
        .map(|(learner, what)| Event {
            learner: learner.clone(),
            lab: lab.to_string(),
            at: now,
            kind: EventKind::Lifecycle { what: *what },
        })
        .collect();
    Timeline::open(dir)?.append(&events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    fn observed(tasks: &[(&str, TaskStatus)], attempts: &[(&str, u32)], answer: Option<&str>) -> Observed {
        Observed {
            tasks: tasks
                .iter()
                .map(|(t, s)| (t.to_string(), *s, vec![format!("{t} is {}", s.as_str())]))
                .collect(),
            answers: answer
                .map(|a| BTreeMap::from([("quiz".to_string(), a.to_string())]))
                .unwrap_or_default(),
            attempts: attempts.iter().map(|(t, n)| (t.to_string(), *n)).collect(),
            hints: BTreeMap::new(),
        }
    }

    #[test]
    fn verdict_changes_answers_and_hints_are_events_once() {
        use TaskStatus::*;
        let start = LearnerState::default();
        let (events, state) = changes(&start, &observed(&[("fix", Fail), ("quiz", Fail)], &[], None));
        assert_eq!(events.len(), 2, "the first grading records every verdict");
        // A wrong answer: the quiz stays FAIL, one answer event.
        let (events, state) =
            changes(&state, &observed(&[("fix", Fail), ("quiz", Fail)], &[("quiz", 1)], Some("n1")));
        assert_eq!(
            events,
            [EventKind::Answer { task: "quiz".into(), value: "n1".into(), right: false, attempt: 1 }]
        );
        // The same grading again: nothing.
        let same = observed(&[("fix", Fail), ("quiz", Fail)], &[("quiz", 1)], Some("n1"));
        assert!(changes(&state, &same).0.is_empty());
        // The right answer: the verdict changes and the answer is right; hints 1 and 2 at once.
        let mut right = observed(&[("fix", Fail), ("quiz", Pass)], &[("quiz", 2)], Some("n2"));
        right.hints.insert("fix".into(), 2);
        let (events, state) = changes(&state, &right);
        assert!(matches!(&events[0], EventKind::Verdict { task, status: Pass, .. } if task == "quiz"));
        assert!(matches!(&events[1], EventKind::Answer { right: true, attempt: 2, .. }));
        assert_eq!(
            events[2..],
            [
                EventKind::Hint { task: "fix".into(), level: 1 },
                EventKind::Hint { task: "fix".into(), level: 2 }
            ]
        );
        // Reset: no attempts in the inventory; the next answer is attempt 1 again, an event.
        let (_, state) = changes(&state, &observed(&[("fix", Fail), ("quiz", Fail)], &[], None));
        let (events, _) =
            changes(&state, &observed(&[("fix", Fail), ("quiz", Fail)], &[("quiz", 1)], Some("n3")));
        assert!(matches!(&events[0], EventKind::Answer { attempt: 1, .. }));
    }

    #[test]
    fn the_timeline_survives_reopening_and_gives_back_the_last_state() {
        use TaskStatus::*;
        let dir = tempfile::tempdir().unwrap();
        let event = |learner: &str, s: i64, kind: EventKind| Event {
            learner: learner.into(),
            lab: "lab".into(),
            at: at(s),
            kind,
        };
        {
            let mut timeline = Timeline::open(dir.path()).unwrap();
            timeline
                .append(&[
                    event("learner-01", 0, EventKind::Lifecycle { what: Lifecycle::Start }),
                    event(
                        "learner-01",
                        5,
                        EventKind::Verdict { task: "fix".into(), status: Fail, evidence: vec![] },
                    ),
                    event(
                        "learner-01",
                        9,
                        EventKind::Answer {
                            task: "quiz".into(),
                            value: "n1".into(),
                            right: false,
                            attempt: 1,
                        },
                    ),
                    event("learner-02", 9, EventKind::Hint { task: "fix".into(), level: 1 }),
                ])
                .unwrap();
        }
        let timeline = Timeline::open(dir.path()).unwrap();
        assert_eq!(timeline.events("lab", Some("learner-01")).unwrap().len(), 3);
        assert_eq!(timeline.events("other", None).unwrap().len(), 0);
        let states = timeline.last_states("lab").unwrap();
        assert_eq!(states["learner-01"].verdicts["fix"], Fail);
        assert_eq!(states["learner-01"].attempts["quiz"], 1);
        assert_eq!(states["learner-02"].hints["fix"], 1);
    }

    #[test]
    fn the_record_mode_decides_what_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut timeline = Timeline::open(dir.path()).unwrap();
        assert_eq!(timeline.mode().unwrap(), RecordMode::All);
        let answer = EventKind::Answer { task: "q".into(), value: "v".into(), right: true, attempt: 1 };
        let verdict = EventKind::Verdict { task: "q".into(), status: TaskStatus::Pass, evidence: vec![] };
        let events: Vec<Event> = [answer, verdict]
            .into_iter()
            .map(|kind| Event { learner: "l".into(), lab: "lab".into(), at: at(0), kind })
            .collect();
        timeline.set_mode(RecordMode::Verdicts).unwrap();
        timeline.append(&events).unwrap();
        assert_eq!(timeline.events("lab", None).unwrap().len(), 1, "verdicts only: no answer kept");
        timeline.set_mode(RecordMode::None).unwrap();
        timeline.append(&events).unwrap();
        assert_eq!(Timeline::open(dir.path()).unwrap().events("lab", None).unwrap().len(), 1);
        assert_eq!(Timeline::open(dir.path()).unwrap().mode().unwrap(), RecordMode::None);
    }
}
