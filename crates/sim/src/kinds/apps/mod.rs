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

/// The selector (required, non-empty, matching the template's labels, immutable) and the
/// template's pod spec of a workload (`old`: the stored one on update).
pub(crate) fn validate_workload(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let selector = object.pointer("/spec/selector").filter(|s| !s.is_null());
    let labels = object.pointer("/spec/template/metadata/labels").and_then(Value::as_object);
    match selector {
        None => causes.push(required("spec.selector", "")),
        Some(selector) => {
            let match_labels = selector.get("matchLabels").and_then(Value::as_object);
            let expressions = selector.get("matchExpressions").and_then(Value::as_array);
            if match_labels.is_none_or(Map::is_empty) && expressions.is_none_or(Vec::is_empty) {
                causes.push(invalid(
                    "spec.selector",
                    &go_label_selector(selector),
                    "empty selector is invalid for deployment",
                ));
            } else if !json_selector_matches(selector, labels) {
                causes.push(invalid(
                    "spec.template.metadata.labels",
                    &go_string_map(labels),
                    "`selector` does not match template `labels`",
                ));
            }
            if let Some(old_selector) = old.and_then(|o| o.pointer("/spec/selector"))
                && old_selector != selector
            {
                causes.push(invalid("spec.selector", &go_label_selector(selector), IMMUTABLE));
            }
        }
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
    counts: &[&str],
    own: impl FnOnce(&mut Vec<Cause>),
) -> Vec<Cause> {
    let mut causes = Vec::new();
    spec_non_negative(object, counts, &mut causes);
    validate_workload(object, old, &mut causes);
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
