//! Each learner's "unchanged for" clock, measured on verdicts and kept in `board.json` across board restarts, and who is stalled.
//!
//! A learner's clock restarts only when a task's verdict changes (PASS/FAIL/BLOCKED/ERROR), not
//! when evidence text does: a pod flipping between `ErrImagePull` and `ImagePullBackOff` is the
//! same FAIL. A learner is stalled when graded now, not finished (some task not PASS), and
//! unchanged for longer than the board's `--stalled-after`; a learner who cannot be graded is
//! shown as down with why, not as stalled, and keeps its clock.

use std::{collections::BTreeMap, path::Path, time::Duration};

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};

use crate::report::{Report, TaskStatus};

/// The board's memory inside a class directory.
pub const MEMORY_FILE: &str = "board.json";

/// A learner's verdicts: each task's status, by task id.
pub type Verdicts = BTreeMap<String, TaskStatus>;

/// The verdicts of `report`.
pub fn verdicts_of(report: &Report) -> Verdicts {
    report.tasks.iter().map(|task| (task.id.clone(), task.status)).collect()
}

/// What the board remembers across restarts (`board.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Memory {
    /// The lab graded (another lab's memory is not used).
    pub lab: String,
    /// Each learner's last verdicts and when they last changed, by context.
    pub learners: BTreeMap<String, Remembered>,
}

/// One learner in the board's memory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Remembered {
    /// The verdicts last seen.
    pub verdicts: Verdicts,
    /// When they last changed.
    pub changed_at: Timestamp,
}

/// Reads the memory at `path` for `lab`: none when absent, unreadable or of another lab (the
/// clocks then start now; a board never fails for its memory).
pub fn read_memory(path: &Path, lab: &str) -> Option<Memory> {
    let text = std::fs::read_to_string(path).ok()?;
    serde_json::from_str::<Memory>(&text).ok().filter(|memory| memory.lab == lab)
}

/// One learner's progress beside its report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// The kubeconfig context (the learner).
    pub context: String,
    /// When this learner's verdicts last changed (RFC 3339): the page's clock counts from it.
    pub verdicts_changed_at: String,
    /// Seconds since then, when this snapshot was made.
    pub unchanged_seconds: u64,
    /// Every task passed.
    pub finished: bool,
    /// Graded now, not finished, and unchanged for longer than the board's `stalled_after`.
    pub stalled: bool,
}

/// Where one learner stands.
#[derive(Debug, Clone)]
struct Standing {
    /// The verdicts last seen (from the memory, before this board graded it).
    verdicts: Option<Verdicts>,
    /// When they last changed.
    changed_at: Timestamp,
    /// Whether its latest grading gave a report (else: it is down).
    graded: bool,
    /// Whether every task passed at its latest grading.
    finished: bool,
}

/// Every learner's clock.
#[derive(Debug, Clone)]
pub struct Clocks {
    lab: String,
    contexts: Vec<String>,
    standings: Vec<Standing>,
}

impl Clocks {
    /// The clocks of `contexts`, from `memory` where it knows a learner, else from `now`.
    pub fn new(lab: &str, contexts: &[String], memory: Option<Memory>, now: Timestamp) -> Clocks {
        let standings = contexts
            .iter()
            .map(|context| {
                let remembered = memory.as_ref().and_then(|m| m.learners.get(context));
                Standing {
                    verdicts: remembered.map(|r| r.verdicts.clone()),
                    changed_at: remembered.map_or(now, |r| r.changed_at),
                    graded: false,
                    finished: false,
                }
            })
            .collect();
        Clocks { lab: lab.to_string(), contexts: contexts.to_vec(), standings }
    }

    /// Records learner `index`'s grading at `now`: its verdicts, or `None` when it could not be
    /// graded. Whether its verdicts changed (its clock restarted).
    pub fn record(&mut self, index: usize, verdicts: Option<Verdicts>, now: Timestamp) -> bool {
        let standing = &mut self.standings[index];
        let Some(verdicts) = verdicts else {
            standing.graded = false;
            return false;
        };
        standing.graded = true;
        standing.finished = !verdicts.is_empty() && verdicts.values().all(|s| *s == TaskStatus::Pass);
        if standing.verdicts.as_ref() == Some(&verdicts) {
            return false;
        }
        standing.verdicts = Some(verdicts);
        standing.changed_at = now;
        true
    }

    /// Every learner's progress at `now`.
    pub fn progress(&self, now: Timestamp, stalled_after: Duration) -> Vec<Progress> {
        self.contexts
            .iter()
            .zip(&self.standings)
            .map(|(context, standing)| {
                let unchanged = unchanged(standing, now);
                Progress {
                    context: context.clone(),
                    verdicts_changed_at: standing
                        .changed_at
                        .round(k8s_openapi::jiff::Unit::Second)
                        .unwrap_or(standing.changed_at)
                        .to_string(),
                    unchanged_seconds: unchanged.as_secs(),
                    finished: standing.finished,
                    stalled: standing.graded && !standing.finished && unchanged >= stalled_after,
                }
            })
            .collect()
    }

    /// How long until the next learner turns stalled, when one can.
    pub fn next_stall(&self, now: Timestamp, stalled_after: Duration) -> Option<Duration> {
        self.standings
            .iter()
            .filter(|s| s.graded && !s.finished)
            .map(|s| unchanged(s, now))
            .filter(|unchanged| *unchanged < stalled_after)
            .map(|unchanged| stalled_after - unchanged)
            .min()
    }

    /// What to remember across a restart.
    pub fn memory(&self) -> Memory {
        let learners = self
            .contexts
            .iter()
            .zip(&self.standings)
            .filter_map(|(context, standing)| {
                let verdicts = standing.verdicts.clone()?;
                Some((context.clone(), Remembered { verdicts, changed_at: standing.changed_at }))
            })
            .collect();
        Memory { lab: self.lab.clone(), learners }
    }
}

fn unchanged(standing: &Standing, now: Timestamp) -> Duration {
    let elapsed: SignedDuration = now.duration_since(standing.changed_at);
    Duration::try_from(elapsed).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdicts(statuses: &[(&str, TaskStatus)]) -> Verdicts {
        statuses.iter().map(|(id, s)| (id.to_string(), *s)).collect()
    }

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_800_000_000 + seconds).unwrap()
    }

    const TEN_MINUTES: Duration = Duration::from_secs(600);

    #[test]
    fn the_clock_counts_from_the_last_verdict_change_not_from_evidence() {
        use TaskStatus::*;
        let contexts = vec!["learner-01".to_string()];
        let mut clocks = Clocks::new("lab", &contexts, None, at(0));
        assert!(clocks.record(0, Some(verdicts(&[("a", Fail), ("b", Blocked)])), at(1)));
        // The same verdicts again (evidence flipping ErrImagePull / ImagePullBackOff): no change.
        assert!(!clocks.record(0, Some(verdicts(&[("a", Fail), ("b", Blocked)])), at(300)));
        assert_eq!(clocks.progress(at(601), TEN_MINUTES)[0].unchanged_seconds, 600);
        assert!(clocks.progress(at(601), TEN_MINUTES)[0].stalled);
        assert_eq!(clocks.next_stall(at(301), TEN_MINUTES), Some(Duration::from_secs(300)));
        // Down for a while: not stalled, the clock kept.
        clocks.record(0, None, at(602));
        let down = &clocks.progress(at(700), TEN_MINUTES)[0];
        assert!(!down.stalled);
        assert_eq!(down.unchanged_seconds, 699);
        assert_eq!(clocks.next_stall(at(700), TEN_MINUTES), None);
        // A verdict changes: the clock restarts.
        assert!(clocks.record(0, Some(verdicts(&[("a", Pass), ("b", Fail)])), at(800)));
        assert_eq!(clocks.progress(at(810), TEN_MINUTES)[0].unchanged_seconds, 10);
    }

    #[test]
    fn a_finished_learner_is_never_stalled() {
        use TaskStatus::*;
        let contexts = vec!["learner-01".to_string()];
        let mut clocks = Clocks::new("lab", &contexts, None, at(0));
        clocks.record(0, Some(verdicts(&[("a", Pass), ("b", Pass)])), at(0));
        let progress = &clocks.progress(at(100_000), TEN_MINUTES)[0];
        assert!(progress.finished && !progress.stalled);
        assert_eq!(clocks.next_stall(at(1), TEN_MINUTES), None);
    }

    #[test]
    fn the_clock_survives_a_board_restart_through_its_memory() {
        use TaskStatus::*;
        let contexts = vec!["learner-01".to_string(), "learner-02".to_string()];
        let mut first = Clocks::new("lab", &contexts, None, at(0));
        first.record(0, Some(verdicts(&[("a", Fail)])), at(10));
        first.record(1, Some(verdicts(&[("a", Fail)])), at(10));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MEMORY_FILE);
        std::fs::write(&path, serde_json::to_string(&first.memory()).unwrap()).unwrap();

        // Restarted an hour later: learner-01 did nothing, learner-02 passed meanwhile.
        let memory = read_memory(&path, "lab");
        assert!(read_memory(&path, "other-lab").is_none());
        let mut second = Clocks::new("lab", &contexts, memory, at(3600));
        assert!(!second.record(0, Some(verdicts(&[("a", Fail)])), at(3601)));
        assert!(second.record(1, Some(verdicts(&[("a", Pass)])), at(3601)));
        let progress = second.progress(at(3610), TEN_MINUTES);
        assert_eq!(progress[0].unchanged_seconds, 3600);
        assert_eq!(progress[0].verdicts_changed_at, at(10).to_string());
        assert!(progress[0].stalled);
        assert_eq!(progress[1].unchanged_seconds, 9);
    }
}
