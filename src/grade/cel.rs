//! `cel` expectations: a CEL expression over the observed objects, the quiz answers and the captured facts, evaluated with the project's one CEL evaluator ([`crate::k8s::cel`]).
//!
//! With `target`, the expression is evaluated once per selected object, bound as `object`; each
//! of `targets` is bound by its name: the object itself when the target names one object, else the
//! list of the objects it selects. `answers` maps each quiz task to its recorded answer, and
//! `fact(name, value)` says whether `value` is the fact `start` captured (hashed: the expression
//! never sees the fact). The evidence shows the expression, the values it read (each field path
//! from a bound variable, evaluated alone) and the result.

use std::sync::Arc;

use serde_json::Value;

use super::{
    Evidence, Outcome, Started, decide,
    observed::{describe, describe_target},
    select,
};
use crate::{
    i18n::{Arg, Message},
    k8s::cel::{self, Bindings, Expression, StringPredicate},
    lab::model::{CelExpectation, Target},
    msg,
};

/// The variable the one `target`'s object is bound to.
const OBJECT: &str = CelExpectation::OBJECT;
/// The variable the quiz answers are bound to.
const ANSWERS: &str = CelExpectation::ANSWERS;
/// The function comparing a value with a captured fact.
const FACT: &str = CelExpectation::FACT;

/// Values longer than this are shown shortened in the evidence.
const SHOWN: usize = 80;

/// Evaluates a `cel` expectation over `evidence`.
pub fn evaluate_cel(check: &CelExpectation, evidence: &Evidence) -> Outcome {
    let source = check.expression.value.as_str();
    let expression = match Expression::compile(source, &check.variables()) {
        Ok(expression) => expression,
        Err(errors) => {
            return Outcome::Error(vec![msg!(
                "grade-cel-compile",
                expression = source,
                error = errors.to_string()
            )]);
        }
    };
    let mut bindings = Bindings::new();
    for (name, target) in &check.targets {
        match bind_target(target, evidence) {
            Ok(value) => bindings = bindings.json(name, &value),
            Err(outcome) => return outcome,
        }
    }
    let needs_start = expression.uses(ANSWERS) || expression.calls(FACT);
    match (evidence.started, needs_start) {
        // A fact is keyed with the lab's key: credentials that cannot read it (a learner's in a
        // hosted class) cannot test it, and a false `fact()` would be a lie.
        (Some(started), _) if started.key.is_none() && expression.calls(FACT) => {
            return Outcome::Error(vec![msg!("grade-quiz-needs-key")]);
        }
        (Some(started), _) => bindings = bind_started(bindings, started),
        (None, true) => return Outcome::Error(vec![msg!("grade-not-started")]),
        (None, false) => bindings = bindings.json(ANSWERS, &Value::Object(Default::default())),
    }
    let Some(target) = &check.target else {
        return match judge(&expression, &bindings) {
            Verdict::True(line) => Outcome::Pass(vec![line]),
            Verdict::False(line) => Outcome::Fail(vec![line]),
            Verdict::Unjudged(line) => Outcome::Error(vec![line]),
        };
    };
    let objects = match select(target, evidence.observed()) {
        Ok(objects) => objects,
        Err(outcome) => return outcome,
    };
    if objects.is_empty() {
        return Outcome::Fail(vec![msg!("grade-none-exists", target = describe_target(target))]);
    }
    let (mut passed, mut failed, mut unjudged) = (Vec::new(), Vec::new(), Vec::new());
    for object in objects {
        let on = |line: Message| msg!("grade-object-detail", object = describe(object), detail = line);
        match judge(&expression, &bindings.clone().json(OBJECT, object)) {
            Verdict::True(line) => passed.push(on(line)),
            Verdict::False(line) => failed.push(on(line)),
            Verdict::Unjudged(line) => unjudged.push(on(line)),
        }
    }
    if !unjudged.is_empty() {
        return Outcome::Error(unjudged);
    }
    decide(check.objects, passed, failed)
}

/// A named target's value: the one object it names (none: FAIL, as for `match`), or the list
/// of the objects it selects.
fn bind_target(target: &Target, evidence: &Evidence) -> Result<Value, Outcome> {
    let objects = select(target, evidence.observed())?;
    if target.name.is_none() {
        return Ok(Value::Array(objects.into_iter().cloned().collect()));
    }
    match objects.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(Outcome::Fail(vec![msg!("grade-none-exists", target = describe_target(target))])),
        // Several namespaces hold an object of that name: the target is ambiguous.
        many => Err(Outcome::Error(vec![msg!(
            "grade-cel-ambiguous",
            target = describe_target(target),
            count = many.len()
        )])),
    }
}

/// `answers` and `fact(name, value)` from what `start` recorded.
fn bind_started(bindings: Bindings, started: Started<'_>) -> Bindings {
    let answers: serde_json::Map<String, Value> =
        started.answers.iter().map(|(task, answer)| (task.clone(), Value::String(answer.clone()))).collect();
    let facts = Arc::new(started.facts.clone());
    let key = started.key.cloned();
    let fact = StringPredicate(Arc::new(move |name: &str, value: &str| {
        key.as_ref()
            .is_some_and(|key| facts.get(name).is_some_and(|hashed| hashed.matches(key, value, false)))
    }));
    bindings.json(ANSWERS, &Value::Object(answers)).predicate(FACT, fact)
}

/// One evaluation's verdict and its evidence line.
enum Verdict {
    True(Message),
    False(Message),
    Unjudged(Message),
}

/// Evaluates once: true, false (a field the object does not have counts as false: Kubernetes
/// omits zero counters and empty lists), or not judged (a type mismatch, the cost limit).
fn judge(expression: &Expression, bindings: &Bindings) -> Verdict {
    let source = one_line(expression.source());
    let source = source.as_str();
    let read = values_read(expression, bindings);
    let result = |result: &str| match &read {
        None => msg!("grade-cel-result", expression = source, result = result),
        Some(values) => {
            msg!("grade-cel-result-read", expression = source, result = result, values = values.clone())
        }
    };
    match expression.evaluate(bindings) {
        Ok(Value::Bool(true)) => Verdict::True(result("true")),
        Ok(Value::Bool(false)) => Verdict::False(result("false")),
        Ok(other) => {
            Verdict::Unjudged(msg!("grade-cel-not-bool", expression = source, result = shown(&other)))
        }
        Err(cel::Error::Evaluation(error)) if missing_field(&error) => {
            Verdict::False(msg!("grade-cel-failed", expression = source, error = error))
        }
        Err(error) => {
            Verdict::Unjudged(msg!("grade-cel-failed", expression = source, error = error.to_string()))
        }
    }
}

/// The runtime errors that mean "the object has no such field".
fn missing_field(error: &str) -> bool {
    error.starts_with("no such key") || error.starts_with("no such attribute")
}

/// Every field path from a bound variable the expression reads, with its value, as one
/// evidence argument; `None` when it reads none.
fn values_read(expression: &Expression, bindings: &Bindings) -> Option<Arg> {
    let mut texts: Vec<String> = Vec::new();
    for text in expression.selections().iter().filter_map(cel::Selection::text) {
        if !texts.contains(&text) {
            texts.push(text);
        }
    }
    let variables: Vec<&str> = vec![OBJECT, ANSWERS];
    let lines: Vec<Message> = texts
        .iter()
        .map(|text| {
            let root = text.split(['.', '[']).next().unwrap_or_default();
            let mut names = variables.clone();
            names.push(root);
            let value = Expression::compile(text, &names)
                .map_err(|e| e.to_string())
                .and_then(|read| read.evaluate(bindings).map_err(|e| e.to_string()));
            match value {
                Ok(Value::Array(items))
                    if Value::Array(items.clone()).to_string().chars().count() > SHOWN =>
                {
                    msg!("grade-cel-value-list", selection = text, count = items.len())
                }
                Ok(value) => msg!("grade-cel-value", selection = text, value = shown(&value)),
                Err(error) => msg!("grade-cel-value-error", selection = text, error = error),
            }
        })
        .collect();
    (!lines.is_empty()).then(|| Arg::joined(lines, msg!("list-separator")))
}

/// An expression as one line of evidence: a YAML block or folded scalar keeps the author's line
/// breaks and indentation, which the evidence shows as single spaces.
fn one_line(source: &str) -> String {
    source.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// A value as compact JSON, shortened past [`SHOWN`] characters.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() <= SHOWN {
        return text;
    }
    let mut short: String = text.chars().take(SHOWN - 1).collect();
    short.push('…');
    short
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;
    use crate::{
        grade::{Observation, Observed, evidence::Evidence},
        lab::model::Stage,
        session::Lang,
    };

    fn facts_of(
        key: &crate::grade::evidence::RecordKey,
        pairs: &[(&str, &str)],
    ) -> BTreeMap<String, crate::grade::evidence::HashedFact> {
        pairs.iter().map(|(k, v)| (k.to_string(), crate::grade::evidence::HashedFact::new(key, v))).collect()
    }

    fn check(yaml: &str) -> CelExpectation {
        serde_saphyr::from_str(yaml).unwrap()
    }

    /// Deployments, pods and quotas observed: these objects, and no others.
    fn observation(objects: Vec<Value>) -> Observation {
        let mut observed = Observed::default();
        for (api_version, kind) in [("apps/v1", "Deployment"), ("v1", "Pod"), ("v1", "ResourceQuota")] {
            let of_kind = objects.iter().filter(|o| o["kind"] == kind).cloned().collect();
            observed.insert(api_version, kind, of_kind);
        }
        Observation { observed, ..Observation::default() }
    }

    fn evidence<'a>(observation: &'a Observation, started: Option<Started<'a>>) -> Evidence<'a> {
        static FILES: std::sync::LazyLock<super::super::ExpectedFiles> =
            std::sync::LazyLock::new(Default::default);
        static MANIFESTS: std::sync::LazyLock<BTreeMap<String, Vec<Value>>> =
            std::sync::LazyLock::new(Default::default);
        let stages: &'static [Stage] = &[];
        Evidence {
            observation,
            started,
            files: &FILES,
            manifests: &MANIFESTS,
            stages,
            variant: None,
            details: false,
        }
    }

    fn english(outcome: &Outcome) -> (super::super::Status, Vec<String>) {
        (outcome.status(), outcome.evidence_in(Lang::En))
    }

    fn deployment(updated: i64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "shop", "generation": 2},
               "spec": {"replicas": 3}, "status": {"updatedReplicas": updated, "observedGeneration": 2}})
    }

    #[test]
    fn a_field_compared_with_another_shows_both_values() {
        let check = check(
            "target: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\n\
             expression: object.status.updatedReplicas == object.spec.replicas\n",
        );
        let observed = observation(vec![deployment(2)]);
        let (status, lines) = english(&evaluate_cel(&check, &evidence(&observed, None)));
        assert_eq!(status, super::super::Status::Fail);
        assert_eq!(
            lines,
            ["deployment shop/web: `object.status.updatedReplicas == object.spec.replicas` is false: \
              object.status.updatedReplicas = 2, object.spec.replicas = 3"]
        );
        let observed = observation(vec![deployment(3)]);
        assert_eq!(english(&evaluate_cel(&check, &evidence(&observed, None))).0, super::super::Status::Pass);
        let observed = observation(vec![]);
        let (status, lines) = english(&evaluate_cel(&check, &evidence(&observed, None)));
        assert_eq!(
            (status, lines),
            (super::super::Status::Fail, vec!["no Deployment shop/web exists".to_string()])
        );
    }

    #[test]
    fn a_missing_field_is_false_and_a_type_mismatch_is_not_judged() {
        let observed = observation(vec![json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop"}, "spec": {"replicas": 3}, "status": {}})]);
        let missing = check(
            "target: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\n\
             expression: object.status.readyReplicas >= 3\n",
        );
        let (status, lines) = english(&evaluate_cel(&missing, &evidence(&observed, None)));
        assert_eq!(status, super::super::Status::Fail);
        assert_eq!(
            lines,
            [
                "deployment shop/web: `object.status.readyReplicas >= 3` could not be evaluated: no such key: readyReplicas"
            ]
        );
        let mismatch = check(
            "target: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\n\
             expression: object.spec.replicas > 'three'\n",
        );
        assert_eq!(
            english(&evaluate_cel(&mismatch, &evidence(&observed, None))).0,
            super::super::Status::Error
        );
    }

    #[test]
    fn named_targets_bind_one_object_or_a_list_and_facts_are_compared_hashed() {
        let pod = |name: &str, node: &str| {
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop", "labels": {"app": "web"}},
                   "spec": {"nodeName": node}})
        };
        let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute", "namespace": "shop"},
                           "spec": {"hard": {"pods": "3"}}});
        let observed = observation(vec![pod("a", "gpu-1"), pod("b", "gpu-2"), quota]);
        let check = check(
            "targets:\n  pods: {apiVersion: v1, kind: Pod, namespace: shop, labelSelector: {matchLabels: {app: web}}}\n\
             \x20 quota: {apiVersion: v1, kind: ResourceQuota, namespace: shop, name: compute}\n\
             expression: size(pods) < int(quota.spec.hard.pods) && pods.exists(p, fact('affectedNode', p.spec.nodeName))\n",
        );
        let (status, lines) = english(&evaluate_cel(&check, &evidence(&observed, None)));
        assert_eq!(
            (status, lines),
            (
                super::super::Status::Error,
                vec!["the lab has not been started on this cluster (no inventory)".to_string()]
            )
        );
        let key = crate::grade::evidence::RecordKey::generate();
        let facts = facts_of(&key, &[("affectedNode", "gpu-2")]);
        let (answers, attempts, present) = (BTreeMap::new(), BTreeMap::new(), BTreeMap::new());
        let started = Started {
            lab: "shop",
            variant: None,
            answers: &answers,
            facts: &facts,
            start_nodes: &[],
            key: Some(&key),
            attempts: &attempts,
            present_at_start: &present,
        };
        let (status, lines) = english(&evaluate_cel(&check, &evidence(&observed, Some(started))));
        assert_eq!(status, super::super::Status::Pass, "{lines:?}");
        assert!(lines[0].ends_with("is true: pods: 2 elements, quota.spec.hard.pods = \"3\""), "{lines:?}");
        let other = facts_of(&key, &[("affectedNode", "gpu-3")]);
        let started = Started { facts: &other, ..started };
        assert_eq!(
            english(&evaluate_cel(&check, &evidence(&observed, Some(started)))).0,
            super::super::Status::Fail
        );
        let keyless = Started { key: None, ..started };
        assert_eq!(
            english(&evaluate_cel(&check, &evidence(&observed, Some(keyless)))).0,
            super::super::Status::Error,
            "without the key a fact cannot be tested: no verdict"
        );
    }
}
