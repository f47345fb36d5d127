//! `answer`: a quiz answer checked against its domain (a node of the cluster, one of the quiz's choices) and its attempts left, then recorded in the inventory.
//!
//! An answer outside the domain (its `choices`, or the values it enumerates) is refused in one
//! line in the learner's language and nothing is recorded (exit 2), so a typo costs no attempt; a
//! quiz with `attempts: N` is locked once N answers are recorded, counted atomically, so an
//! enumerated quiz cannot be brute-forced by answering each value, in turn or at once.

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;

use super::{
    Error, Result,
    cluster::{Cluster, list_all},
    inventory::{self, Written},
};
use crate::{
    grade::builtin::enumerated_answers,
    lab::{
        loader::Bundle,
        model::{AnswerMatching, Expectation, Fact, QuizCheck, Task, TaskKind},
    },
    msg,
    session::Lang,
    tr,
};

/// What `answer` recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    /// This answer's attempt number, from 1.
    pub attempt: u32,
    /// The quiz's limit, if it has one.
    pub limit: Option<u32>,
}

impl Recorded {
    /// The line `answer` prints.
    pub fn message(&self, lab: &str, task: &str, lang: Lang) -> String {
        match self.limit {
            Some(limit) => {
                tr!(
                    lang,
                    "answer-recorded-attempt",
                    task = task,
                    lab = lab,
                    attempt = self.attempt,
                    limit = limit
                )
            }
            None => tr!(lang, "answer-recorded", task = task, lab = lab),
        }
    }
}

fn quizzes(task: &Task) -> impl Iterator<Item = &QuizCheck> {
    task.expect.iter().filter_map(|e| match e {
        Expectation::Quiz(quiz) => Some(quiz),
        _ => None,
    })
}

/// Records `value` as an answer entry and finds which attempt it is among the entries made so
/// far (those sent at the same moment included): beyond the limit it does not count, and the
/// learner is told so (exit 2), as when the quiz was locked before.
async fn answer_as_entry(
    cluster: &Cluster,
    lab: &str,
    records: &inventory::Inventory,
    task: &str,
    value: &str,
    limit: Option<u32>,
) -> Result<Recorded> {
    let uid = inventory::record_answer_entry(&cluster.client, lab, task, value).await?;
    let mut entries = inventory::answer_entries(&cluster.client, lab).await?;
    entries.retain(|e| e.task == task && e.immutable);
    entries.sort_by(|a, b| a.order.cmp(&b.order));
    let before = records.attempts.get(task).copied().unwrap_or(0);
    let position = entries.iter().position(|e| e.uid == uid).map_or(u32::MAX, |i| before + i as u32 + 1);
    match limit {
        Some(limit) if position > limit => {
            Err(Error::BadInput(msg!("answer-locked", task = task, limit = limit)))
        }
        _ => Ok(Recorded { attempt: position, limit }),
    }
}

/// How many times `answer` reads the inventory again after another writer got in between.
const CONFLICT_RETRIES: usize = 20;

/// The values a quiz accepts as answers at all: its `choices`, or, without them, the values it
/// enumerates (answers accepted per variant, which `check` already lists to the learner); `None`
/// when any one line is an answer.
fn domain(task: &Task) -> Option<Vec<String>> {
    let mut values: Vec<String> = quizzes(task).flat_map(|q| q.choices.iter().cloned()).collect();
    if values.is_empty() {
        values = quizzes(task).filter_map(enumerated_answers).flatten().collect();
    }
    (!values.is_empty()).then_some(values)
}

/// Checks `value` for quiz `task` of `bundle` and records it: bad input (exit 2) for a task that
/// is not a quiz, a lab not started, a value outside the quiz's domain or a locked quiz. The
/// attempt is counted atomically: the inventory is written only if nobody wrote it since it was
/// read (else read again and judged again), so answers sent at once each take their own attempt
/// and those beyond the limit are refused.
pub async fn answer(
    cluster: &Cluster,
    bundle: &Bundle,
    task: &str,
    value: &str,
    lang: Lang,
) -> Result<Recorded> {
    let lab = &bundle.lab.id.value;
    let bad = Error::BadInput;
    let Some(quiz_task) = bundle.lab.task(task) else {
        return Err(bad(msg!("answer-no-task", lab = lab, task = task)));
    };
    if quiz_task.kind != TaskKind::Quiz {
        return Err(bad(msg!("answer-not-a-quiz", task = task)));
    }
    let value = value.trim();
    if value.is_empty() || value.contains('\n') {
        return Err(bad(msg!("answer-not-one-line", task = task)));
    }
    let folded = quizzes(quiz_task).any(|q| q.matching == AnswerMatching::CaseInsensitive);
    let same = |a: &str, b: &str| if folded { a.eq_ignore_ascii_case(b) } else { a == b };
    if let Some(choices) = domain(quiz_task)
        && !choices.iter().any(|c| same(c, value))
    {
        let list = crate::i18n::list(&choices);
        return Err(bad(msg!(
            "answer-not-a-choice",
            value = format!("{value:?}"),
            task = task,
            choices = list
        )));
    }
    if quizzes(quiz_task).any(|q| q.fact == Some(Fact::AffectedNode)) {
        let api: Api<Node> = Api::all(cluster.client.clone());
        let nodes = list_all(&api).await.map_err(|e| Error::api(msg!("action-list-nodes"), &e))?.items;
        if !nodes.iter().any(|n| n.metadata.name.as_deref().is_some_and(|name| same(name, value))) {
            return Err(bad(msg!("answer-not-a-node", value = format!("{value:?}"))));
        }
    }
    let limit = quiz_task.attempt_limit();
    for _ in 0..CONFLICT_RETRIES {
        let (mut records, version) = inventory::load_versioned(&cluster.client, lab)
            .await?
            .ok_or_else(|| bad(msg!("answer-not-started", lab = lab)))?;
        if let Some(line) = records.incomplete_start(lang) {
            return Err(bad(msg!("answer-not-recorded", reason = line)));
        }
        if let Some(line) = records.tampered() {
            return Err(bad(msg!("answer-not-recorded", reason = line.render(lang))));
        }
        let mut counted = records.clone();
        inventory::count_learner_entries(&cluster.client, &bundle.lab, &mut counted).await?;
        let used = counted.attempts.get(task).copied().unwrap_or(0);
        if let Some(limit) = limit
            && used >= limit
        {
            return Err(bad(msg!("answer-locked", task = task, limit = limit)));
        }
        if records.key.is_none() {
            // A hosted class's learner: the records are not theirs to write; the answer is an
            // entry of its own, counted in the order entries were made.
            if !records.answer_log {
                return Err(records.key().expect_err("the key is absent"));
            }
            return answer_as_entry(cluster, lab, &records, task, value, limit).await;
        }
        let attempt = records.attempts.get(task).copied().unwrap_or(0) + 1;
        records.answers.insert(task.to_string(), value.to_string());
        records.attempts.insert(task.to_string(), attempt);
        if inventory::save_if_unchanged(&cluster.client, &records, &version).await? == Written::Saved {
            return Ok(Recorded { attempt: used + 1, limit });
        }
    }
    Err(bad(msg!("answer-busy", task = task)))
}
