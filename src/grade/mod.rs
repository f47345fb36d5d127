//! Grading: every kind of expectation, judged over the observed evidence.
//!
//! Pure functions over an [`Evidence`] (the objects observed, the probes sent, what `start`
//! recorded, the bundle's files): partial-object match, absence, counts and quantity comparisons
//! here, the built-in domain checks in [`builtin`] and [`alert`]. Each returns an [`Outcome`] —
//! PASS, FAIL or ERROR — with evidence a learner can read: catalog [`Message`]s, so grading never
//! chooses a language (the report renders them in the session's). A kind that was not observed
//! makes an expectation ERROR, never PASS or FAIL (`docs/report-format.md`). The engine observes,
//! [`evaluate_task`] grades, the report renders; lint grades the same way against an empty
//! cluster.

pub mod alert;
pub mod builtin;
pub mod captured;
pub mod cel;
pub mod evidence;
mod gradable;
pub mod observed;
pub mod partial;
pub mod path;
pub mod scope;

use std::collections::BTreeSet;

use serde_json::Value;

pub use self::{
    evidence::{Evidence, Observation, Probe, Started, Unreadable},
    observed::{KindKey, Observed},
    scope::{Plan, Scope, scopes_of},
};
use self::{
    observed::{describe, describe_target},
    partial::{Rules, show},
    path::FieldPath,
};
pub use crate::lab::loader::ExpectedFiles;
use crate::{
    english_display,
    i18n::{Localized, Message},
    k8s::quantity::Quantity,
    lab::model::{
        AbsentExpectation, CountExpectation, Expectation, MatchExpectation, Quantifier, QuantityExpectation,
        RolloutCheck, Target, Task,
    },
    msg,
};

/// Errors from preparing a matcher (the expectation itself is unusable).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `expectedFile` names a file the bundle did not load.
    MissingExpectedFile(String),
    /// Neither or both of `expected` and `expectedFile` are given.
    ExpectedSource,
    /// A list in the expected object has no declared semantics.
    UndeclaredList(String),
    /// A list declared `each` does not hold exactly one expected element.
    EachNeedsOneElement(String),
    /// A label, annotation or node-selector value in the expected object is not a string.
    NonStringLabel(String),
    /// A path or list declaration is invalid.
    Rules(#[from] partial::Error),
    /// A path is invalid.
    Path(#[from] path::Error),
    /// The value compared with is not a quantity.
    NotAQuantity(String),
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::MissingExpectedFile(file) => msg!("grade-error-missing-expected-file", file = file),
            Error::ExpectedSource => msg!("grade-error-expected-source"),
            Error::UndeclaredList(path) => msg!("grade-error-undeclared-list", path = path),
            Error::EachNeedsOneElement(path) => msg!("grade-error-each-needs-one", path = path),
            Error::NonStringLabel(path) => msg!("grade-error-non-string-label", path = path),
            Error::Rules(error) => error.message(),
            Error::Path(error) => error.message(),
            Error::NotAQuantity(value) => msg!("grade-error-not-a-quantity", value = value),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The result of evaluating one expectation (or one task), with its evidence lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// It holds; the evidence says what was seen.
    Pass(Vec<Message>),
    /// It does not hold; the evidence says what was observed where, against what was expected.
    Fail(Vec<Message>),
    /// It could not be judged (not observed, not started, not sent); never a pass or a fail.
    Error(Vec<Message>),
}

/// The verdict of an [`Outcome`] without its evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    /// Holds.
    Pass,
    /// Does not hold.
    Fail,
    /// Could not be judged.
    Error,
}

impl Outcome {
    /// The verdict.
    pub fn status(&self) -> Status {
        match self {
            Outcome::Pass(_) => Status::Pass,
            Outcome::Fail(_) => Status::Fail,
            Outcome::Error(_) => Status::Error,
        }
    }

    /// The evidence lines.
    pub fn evidence(&self) -> &[Message] {
        match self {
            Outcome::Pass(lines) | Outcome::Fail(lines) | Outcome::Error(lines) => lines,
        }
    }

    /// The evidence lines in `lang`.
    pub fn evidence_in(&self, lang: crate::session::Lang) -> Vec<String> {
        self.evidence().iter().map(|line| line.render(lang)).collect()
    }

    fn error(line: Message) -> Outcome {
        Outcome::Error(vec![line])
    }

    /// The verdict and the evidence in English, for tests to compare with.
    #[cfg(test)]
    pub(crate) fn english(&self) -> (Status, Vec<String>) {
        (self.status(), self.evidence_in(crate::session::Lang::En))
    }
}

/// A task's outcome: the combined verdict and each expectation's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskOutcome {
    /// FAIL if any expectation fails; else ERROR if any could not be judged; else PASS. A task
    /// with no expectations passes — lint rejects such a task as vacuous.
    pub outcome: Outcome,
    /// One outcome per expectation, in order.
    pub expectations: Vec<Outcome>,
}

/// The target of a matcher expectation; `None` for built-in checks.
pub fn target_of(expectation: &Expectation) -> Option<&Target> {
    match expectation {
        Expectation::Match(m) => Some(&m.target),
        Expectation::Absent(a) => Some(&a.target),
        Expectation::Count(c) => Some(&c.target),
        Expectation::Quantity(q) => Some(&q.target),
        _ => None,
    }
}

/// The kinds one expectation looks at: its target's, or the kinds a built-in check reads
/// ([`scopes_of`] says which of their objects).
pub fn kinds_of(expectation: &Expectation) -> Vec<KindKey> {
    scopes_of(expectation).into_iter().map(|(key, _)| key).collect()
}

/// Every kind the expectations of `tasks` look at: what the engine lists (once each) before
/// grading them, and what lint observes empty to find vacuous tasks.
pub fn kinds_for<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> BTreeSet<KindKey> {
    tasks.into_iter().flat_map(|t| &t.expect).flat_map(kinds_of).collect()
}

/// Grades every expectation of `task` and combines them: FAIL if any fails; else ERROR if any
/// could not be judged; else PASS. The evidence is that of the expectations with the verdict.
pub fn evaluate_task(task: &Task, evidence: &Evidence) -> TaskOutcome {
    let expectations: Vec<Outcome> =
        task.expect.iter().map(|e| evaluate(e, &task.id.value, evidence)).collect();
    let worst = expectations.iter().map(Outcome::status).max_by_key(|s| match s {
        Status::Pass => 0,
        Status::Error => 1,
        Status::Fail => 2,
    });
    let lines = |wanted: Status| -> Vec<Message> {
        expectations
            .iter()
            .filter(|o| o.status() == wanted)
            .flat_map(|o| o.evidence().iter().cloned())
            .collect()
    };
    let outcome = match worst {
        None => Outcome::Pass(vec![msg!("grade-no-expectations")]),
        Some(Status::Pass) => Outcome::Pass(lines(Status::Pass)),
        Some(Status::Error) => Outcome::Error(lines(Status::Error)),
        Some(Status::Fail) => Outcome::Fail(lines(Status::Fail)),
    };
    TaskOutcome { outcome, expectations }
}

/// Grades one expectation of the task with id `task` over `evidence`. An ERROR names why any
/// kind it looks at could not be listed, instead of only "not observed".
pub fn evaluate(expectation: &Expectation, task: &str, evidence: &Evidence) -> Outcome {
    let observed = evidence.observed();
    let outcome = match expectation {
        Expectation::Match(m) => evaluate_match(m, evidence.files, observed),
        Expectation::Absent(a) => evaluate_absent(a, observed),
        Expectation::Count(c) => evaluate_count(c, observed),
        Expectation::Quantity(q) => evaluate_quantity(q, observed),
        Expectation::Cel(check) => cel::evaluate_cel(check, evidence),
        Expectation::Rollout(check) => {
            let broken = check
                .broken_stage
                .as_deref()
                .map(|stage| broken_pod_specs(evidence, stage, check))
                .unwrap_or_default();
            builtin::rollout(check, observed, &broken, evidence.started.map(|s| s.start_nodes))
        }
        Expectation::Quiz(check) => builtin::quiz(check, task, evidence.started),
        Expectation::QuotaInForce(check) => {
            let probe = check.probe_file.as_ref().map(|f| evidence.observation.probes.get(&f.value));
            let probe_pod = check.probe_file.as_ref().and_then(|f| evidence.files.get(&f.value));
            builtin::quota_in_force(check, observed, probe, probe_pod)
        }
        Expectation::Schedulable(check) => builtin::schedulable(check, evidence.files, observed),
        Expectation::DevicePluginConfig(check) => builtin::device_plugin_config(check, observed),
        Expectation::AlertRule(check) => {
            let before_start = check
                .rules
                .namespace
                .as_ref()
                .and_then(|namespace| evidence.started.and_then(|s| s.present_at_start.get(namespace)));
            alert::alert_rule(check, observed, before_start, evidence.details)
        }
    };
    // An object listed but unreadable that this expectation might be about: the verdict could
    // hang on it, so it is ERROR with the object named, whatever the readable objects say.
    let unreadable: Vec<Message> = scopes_of(expectation)
        .iter()
        .flat_map(|(kind, scope)| {
            evidence
                .observation
                .unreadable
                .get(kind)
                .into_iter()
                .flatten()
                .filter(|u| scope.may_admit(&u.object))
        })
        .map(|u| msg!("grade-unreadable", object = describe(&u.object), reason = &u.reason))
        .collect();
    if !unreadable.is_empty() {
        return Outcome::Error(unreadable.into_iter().chain(outcome.evidence().iter().cloned()).collect());
    }
    match outcome {
        Outcome::Error(mut lines) => {
            for kind in kinds_of(expectation) {
                if let Some(reason) = evidence.observation.failures.get(&kind) {
                    let kind = format!("{} {}", kind.api_version, kind.kind);
                    lines.push(msg!("grade-listing-failed", kind = kind, reason = reason));
                }
            }
            Outcome::Error(lines)
        }
        other => other,
    }
}

/// The pod specs of the rollout target's template as the lab's broken stage applies it, in
/// every variant (the variant started need not be known: no variant's breakage counts as a fix).
fn broken_pod_specs(evidence: &Evidence, stage: &str, check: &RolloutCheck) -> Vec<Value> {
    let Some(stage) = evidence.stages.iter().find(|s| s.id.value == stage) else { return Vec::new() };
    let variants: Vec<Option<&str>> = if stage.variants.is_empty() {
        vec![None]
    } else {
        stage.variants.keys().map(|v| Some(v.as_str())).collect()
    };
    variants
        .into_iter()
        .flat_map(|variant| stage.manifests_for(variant))
        .filter_map(|file| evidence.manifests.get(file))
        .flatten()
        .filter(|doc| {
            doc.get("kind").and_then(Value::as_str) == Some(check.target.kind.as_str())
                && doc.pointer("/metadata/name").and_then(Value::as_str) == Some(check.target.name.as_str())
        })
        .filter_map(|doc| doc.pointer("/spec/template/spec").cloned())
        .collect()
}

/// The expected object and rules of a `match`, validated: the source exists, every list has a
/// declared semantics, every path parses.
pub fn prepare_match<'a>(m: &'a MatchExpectation, files: &'a ExpectedFiles) -> Result<(&'a Value, Rules)> {
    let expected = match (&m.expected, &m.expected_file) {
        (Some(inline), None) => inline,
        (None, Some(file)) => {
            files.get(&file.value).ok_or_else(|| Error::MissingExpectedFile(file.value.clone()))?
        }
        _ => return Err(Error::ExpectedSource),
    };
    let rules = Rules::new(&m.lists, &m.quantities)?;
    if let Some(undeclared) = partial::undeclared_lists(expected, &rules).first() {
        return Err(Error::UndeclaredList(undeclared.to_string()));
    }
    if let Some(each) = partial::each_lists_without_one_element(expected, &rules).first() {
        return Err(Error::EachNeedsOneElement(each.to_string()));
    }
    if let Some(label) = partial::non_string_label_values(expected).first() {
        return Err(Error::NonStringLabel(label.to_string()));
    }
    Ok((expected, rules))
}

fn select<'a>(target: &Target, observed: &'a Observed) -> std::result::Result<Vec<&'a Value>, Outcome> {
    observed.select(target).map_err(|e| {
        Outcome::error(msg!("grade-cannot-judge", reason = e.message(), target = describe_target(target)))
    })
}

fn none_found(target: &Target) -> Outcome {
    Outcome::Fail(vec![msg!("grade-none-exists", target = describe_target(target))])
}

fn evaluate_match(m: &MatchExpectation, files: &ExpectedFiles, observed: &Observed) -> Outcome {
    let (expected, rules) = match prepare_match(m, files) {
        Ok(prepared) => prepared,
        Err(e) => return Outcome::error(e.message()),
    };
    let objects = match select(&m.target, observed) {
        Ok(objects) => objects,
        Err(outcome) => return outcome,
    };
    if objects.is_empty() {
        return none_found(&m.target);
    }
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for object in objects {
        let mismatches = partial::matches(expected, object, &rules);
        if mismatches.is_empty() {
            passed.push(msg!("grade-object-matches", object = describe(object)));
        } else {
            failed.extend(
                mismatches
                    .iter()
                    .map(|m| msg!("grade-object-detail", object = describe(object), detail = m.message())),
            );
        }
    }
    decide(m.objects, passed, failed)
}

fn decide(quantifier: Quantifier, passed: Vec<Message>, failed: Vec<Message>) -> Outcome {
    match quantifier {
        Quantifier::All if failed.is_empty() => Outcome::Pass(passed),
        Quantifier::Any if !passed.is_empty() => Outcome::Pass(passed),
        _ => Outcome::Fail(failed),
    }
}

fn evaluate_absent(a: &AbsentExpectation, observed: &Observed) -> Outcome {
    match select(&a.target, observed) {
        Err(outcome) => outcome,
        Ok(objects) if objects.is_empty() => {
            Outcome::Pass(vec![msg!("grade-none-exists", target = describe_target(&a.target))])
        }
        Ok(objects) => Outcome::Fail(
            objects.iter().map(|o| msg!("grade-exists-expected-none", object = describe(o))).collect(),
        ),
    }
}

fn evaluate_count(c: &CountExpectation, observed: &Observed) -> Outcome {
    let objects = match select(&c.target, observed) {
        Ok(objects) => objects,
        Err(outcome) => return outcome,
    };
    let count = objects.len() as u64;
    let line = msg!(
        "grade-count",
        count = count,
        target = describe_target(&c.target),
        op = c.op.symbol(),
        value = c.value.to_string()
    );
    if c.op.holds(count.cmp(&c.value)) { Outcome::Pass(vec![line]) } else { Outcome::Fail(vec![line]) }
}

/// Parses a quantity expectation's path and value.
pub fn prepare_quantity(q: &QuantityExpectation) -> Result<(FieldPath, Quantity)> {
    let path: FieldPath = q.path.parse()?;
    let value = Quantity::from_json(&q.value).map_err(|_| Error::NotAQuantity(show(&q.value)))?;
    Ok((path, value))
}

fn evaluate_quantity(q: &QuantityExpectation, observed: &Observed) -> Outcome {
    let (path, wanted) = match prepare_quantity(q) {
        Ok(prepared) => prepared,
        Err(e) => return Outcome::error(e.message()),
    };
    let objects = match select(&q.target, observed) {
        Ok(objects) => objects,
        Err(outcome) => return outcome,
    };
    if objects.is_empty() {
        return none_found(&q.target);
    }
    let (op, value) = (q.op.symbol(), show(&q.value));
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for object in objects {
        let (who, at) = (describe(object), path.to_string());
        match path.get(object) {
            None | Some(Value::Null) => {
                failed.push(msg!("grade-quantity-absent", object = who, path = at, op = op, value = &value))
            }
            Some(found) => {
                let line = msg!(
                    "grade-quantity-is",
                    object = &who,
                    path = &at,
                    found = show(found),
                    op = op,
                    value = &value
                );
                match Quantity::from_json(found) {
                    Err(_) => failed.push(msg!(
                        "grade-quantity-not-a-quantity",
                        object = who,
                        path = at,
                        found = show(found),
                        op = op,
                        value = &value
                    )),
                    Ok(have) if q.op.holds(have.cmp(&wanted)) => passed.push(line),
                    Ok(_) => failed.push(line),
                }
            }
        }
    }
    decide(q.objects, passed, failed)
}

#[cfg(test)]
mod tests;
