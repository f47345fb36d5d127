//! `answer`: a quiz answer checked against its domain (a node of the cluster, one of the quiz's choices) and its attempts left, then recorded in the inventory.
//!
//! An answer outside the domain is refused in one line in the learner's language and nothing is
//! recorded (exit 2), so a typo costs no attempt; a quiz with `attempts: N` is locked once N
//! answers are recorded, so an enumerated quiz cannot be brute-forced by answering each value.

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;

use super::{
    Error, Result,
    cluster::{Cluster, list_all},
    inventory,
};
use crate::{
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

/// Checks `value` for quiz `task` of `bundle` and records it: bad input (exit 2) for a task that
/// is not a quiz, a lab not started, a value outside the quiz's domain or a locked quiz.
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
    let mut inventory = inventory::load(&cluster.client, lab)
        .await?
        .ok_or_else(|| bad(msg!("answer-not-started", lab = lab)))?;
    if let Some(line) = inventory.incomplete_start(lang) {
        return Err(bad(msg!("answer-not-recorded", reason = line)));
    }
    let value = value.trim();
    if value.is_empty() || value.contains('\n') {
        return Err(bad(msg!("answer-not-one-line", task = task)));
    }
    let folded = quizzes(quiz_task).any(|q| q.matching == AnswerMatching::CaseInsensitive);
    let same = |a: &str, b: &str| if folded { a.eq_ignore_ascii_case(b) } else { a == b };
    if quizzes(quiz_task).any(|q| q.fact == Some(Fact::AffectedNode)) {
        let api: Api<Node> = Api::all(cluster.client.clone());
        let nodes = list_all(&api).await.map_err(|e| Error::api(msg!("action-list-nodes"), &e))?.items;
        if !nodes.iter().any(|n| n.metadata.name.as_deref().is_some_and(|name| same(name, value))) {
            return Err(bad(msg!("answer-not-a-node", value = format!("{value:?}"))));
        }
    }
    let choices: Vec<&str> = quizzes(quiz_task).flat_map(|q| q.choices.iter().map(String::as_str)).collect();
    if !choices.is_empty() && !choices.iter().any(|c| same(c, value)) {
        let list = crate::i18n::list(&choices);
        return Err(bad(msg!(
            "answer-not-a-choice",
            value = format!("{value:?}"),
            task = task,
            choices = list
        )));
    }
    let limit = quizzes(quiz_task).filter_map(|q| q.attempts).min();
    let used = inventory.attempts.get(task).copied().unwrap_or(0);
    if let Some(limit) = limit
        && used >= limit
    {
        return Err(bad(msg!("answer-locked", task = task, limit = limit)));
    }
    inventory.answers.insert(task.to_string(), value.to_string());
    inventory.attempts.insert(task.to_string(), used + 1);
    inventory::save(&cluster.client, &inventory).await?;
    Ok(Recorded { attempt: used + 1, limit })
}
