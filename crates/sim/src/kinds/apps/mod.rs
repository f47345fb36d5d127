//! apps/v1: one file per kind, and the validation the workloads share (apps/validation
//! `ValidateDeploymentSpec`, `ValidateReplicaSetSpec`, `ValidateDaemonSetSpec`,
//! `ValidateStatefulSetSpec`: the selector, the template and its labels, int-or-percent
//! bounds).

pub mod controllerrevision;
pub mod daemonset;
pub mod deployment;
pub mod replicaset;
pub mod statefulset;

use serde_json::{Map, Value};

use crate::{
    k8s::selector::json_selector_matches,
    kinds::{
        core::podspec::{validate_pod_spec, validate_template_ranges, validate_template_restart_policy},
        field::{
            Cause, IMMUTABLE, go_int_or_string, go_label_selector, go_string_map, invalid, required,
            spec_non_negative,
        },
    },
};

/// The workload whose spec is validated: upstream's four spec validators word and order their
/// selector rules differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Workload {
    /// `ValidateDeploymentSpec`.
    Deployment,
    /// `ValidateReplicaSetSpec` (its empty-selector text says `deployment`, as upstream's does).
    ReplicaSet,
    /// `ValidateDaemonSetSpec`: no `Required` for a missing selector, the template check first.
    DaemonSet,
    /// `ValidateStatefulSetSpec`.
    StatefulSet,
}

/// A workload's selector against its template's labels, in its validator's order: a missing
/// selector is required (except for a DaemonSet), an empty one is invalid, and a selector that
/// does not select the template's labels is refused on the labels
/// (`ValidatePodTemplateSpecForReplicaSet`, `ValidatePodTemplateSpecForStatefulSet`,
/// `ValidateDaemonSetSpec`). A missing selector converts to `labels.Nothing()`, which matches no
/// labels at all, so it fails the template check too.
pub(crate) fn validate_selector(object: &Value, workload: Workload, causes: &mut Vec<Cause>) {
    let selector = object.pointer("/spec/selector").filter(|s| !s.is_null());
    let labels = object.pointer("/spec/template/metadata/labels").and_then(Value::as_object);
    let empty = selector.map(|selector| {
        let match_labels = selector.get("matchLabels").and_then(Value::as_object);
        let expressions = selector.get("matchExpressions").and_then(Value::as_array);
        match_labels.is_none_or(Map::is_empty) && expressions.is_none_or(Vec::is_empty)
    });
    let word = match workload {
        Workload::Deployment | Workload::ReplicaSet => "deployment",
        Workload::DaemonSet => "daemonset",
        Workload::StatefulSet => "statefulset",
    };
    let empty_selector = |selector: &Value| {
        invalid(
            "spec.selector",
            &go_label_selector(selector),
            &format!("empty selector is invalid for {word}"),
        )
    };
    // An empty selector is `labels.Everything()`: the template check is skipped (`selector.Empty()`).
    let mismatch = match selector {
        None => true,
        Some(selector) => empty != Some(true) && !json_selector_matches(selector, labels),
    };
    let mismatch_cause = || {
        invalid(
            "spec.template.metadata.labels",
            &go_string_map(labels),
            "`selector` does not match template `labels`",
        )
    };
    if workload == Workload::DaemonSet {
        if mismatch {
            causes.push(mismatch_cause());
        }
        if let Some(selector) = selector.filter(|_| empty == Some(true)) {
            causes.push(empty_selector(selector));
        }
        return;
    }
    match selector {
        None => causes.push(required("spec.selector", "")),
        Some(selector) if empty == Some(true) => causes.push(empty_selector(selector)),
        Some(_) => {}
    }
    if mismatch {
        causes.push(mismatch_cause());
    }
}

/// The selector ([`validate_selector`]), its immutability (apps/v1 `ValidateImmutableField` on
/// `spec.selector`) and the template's pod spec of a Deployment, ReplicaSet or DaemonSet
/// (`old`: the stored one on update).
pub(crate) fn validate_workload(
    object: &Value,
    old: Option<&Value>,
    workload: Workload,
    causes: &mut Vec<Cause>,
) {
    validate_selector(object, workload, causes);
    if let Some(selector) = object.pointer("/spec/selector").filter(|s| !s.is_null())
        && let Some(old_selector) = old.and_then(|o| o.pointer("/spec/selector"))
        && old_selector != selector
    {
        causes.push(invalid("spec.selector", &go_label_selector(selector), IMMUTABLE));
    }
    match object.pointer("/spec/template/spec") {
        Some(spec) => validate_pod_spec(spec, "spec.template.spec", causes),
        None => causes.push(required("spec.template.spec.containers", "")),
    }
}

/// `ValidateDeploymentSpec`, `ValidateReplicaSetSpec` and `ValidateDaemonSetSpec` in upstream's
/// order: the non-negative `counts` of the spec, the selector and template
/// ([`validate_workload`]), the kind's own rules (`own`), the template's restart policy (only
/// `Always`) and its ranges.
pub(crate) fn validate_workload_spec(
    object: &Value,
    old: Option<&Value>,
    workload: Workload,
    counts: &[&str],
    own: impl FnOnce(&mut Vec<Cause>),
) -> Vec<Cause> {
    let mut causes = Vec::new();
    spec_non_negative(object, counts, &mut causes);
    validate_workload(object, old, workload, &mut causes);
    own(&mut causes);
    validate_template_restart_policy(object, &["Always"], &mut causes);
    validate_template_ranges(object, &mut causes);
    causes
}

/// Int-or-percent value: the integer, or the percentage number for `"N%"`.
pub(crate) fn int_or_percent(value: &Value) -> Option<(i64, bool)> {
    match value {
        Value::Number(n) => n.as_i64().map(|v| (v, false)),
        Value::String(s) => s.strip_suffix('%').and_then(|p| p.parse().ok()).map(|v| (v, true)),
        _ => None,
    }
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` for one field.
pub(crate) fn validate_int_or_percent(value: &Value, path: &str, causes: &mut Vec<Cause>) {
    match value {
        Value::String(s) => match int_or_percent(value) {
            Some((v, true)) if v < 0 => causes.push(invalid(path, &format!("{s:?}"), "must be greater than or equal to 0")),
            Some((v, true)) if v > 100 => causes.push(invalid(path, &go_int_or_string(value), "must not be greater than 100%")),
            Some(_) => {}
            None => causes.push(invalid(path, &format!("{s:?}"), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")),
        },
        Value::Number(n) if n.as_i64().is_some_and(|v| v < 0) => {
            causes.push(invalid(path, &n.to_string(), "must be greater than or equal to 0"));
        }
        _ => {}
    }
}
