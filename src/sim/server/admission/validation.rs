//! Validation as upstream's per-kind validators, 422 Invalid causes with upstream's field paths.
//!
//! Messages and field paths are those of `pkg/apis/core/validation/validation.go`,
//! `pkg/apis/apps/validation/validation.go` and `pkg/apis/batch/validation/validation.go`,
//! rendered by `apimachinery/pkg/util/validation/field/errors.go` `ErrorBody`.

use serde_json::{Map, Value, json};

use super::Cause;
use crate::{
    k8s::{quantity::Quantity, selector::json_selector_matches},
    sim::resources::ResourceType,
};

pub(super) fn required(field: impl Into<String>, detail: &str) -> Cause {
    let message =
        if detail.is_empty() { "Required value".to_string() } else { format!("Required value: {detail}") };
    Cause { reason: "FieldValueRequired".into(), message, field: field.into() }
}

pub(super) fn invalid(field: impl Into<String>, bad_value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {bad_value}: {detail}"),
        field: field.into(),
    }
}

fn not_supported(field: impl Into<String>, bad_value: &Value, supported: &[&str]) -> Cause {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!("Unsupported value: {}: supported values: {}", go_value(bad_value), list.join(", ")),
        field: field.into(),
    }
}

/// A bad value as `ErrorBody` prints simple types: strings quoted, numbers and bools bare.
pub(super) fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// `%#v` of an `intstr.IntOrString` (its `String()` has a pointer receiver, so a value prints
/// as a struct — the v1.28-v1.33 text, `apimachinery/pkg/util/validation/field/errors.go`
/// `ErrorBody` falling back to `%#v`).
fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}"),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or_default()
        ),
    }
}

/// `%#v` of a `map[string]string` (Go prints maps with sorted keys).
fn go_string_map(map: Option<&Map<String, Value>>) -> String {
    let Some(map) = map.filter(|m| !m.is_empty()) else { return "map[string]string(nil)".into() };
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> =
        entries.iter().map(|(k, v)| format!("{k:?}:{:?}", v.as_str().unwrap_or_default())).collect();
    format!("map[string]string{{{}}}", parts.join(", "))
}

/// Validates an object about to be stored (`old` is the stored one on update); an empty list
/// means valid.
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_metadata(rt, object, &mut causes);
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => {
            if let Some(spec) = object.get("spec") {
                validate_pod_spec(spec, "spec", &mut causes);
            } else {
                causes.push(required("spec.containers", ""));
            }
            if let Some(old) = old {
                super::pod_update::validate(object, old, &mut causes);
            }
        }
        ("apps", "DaemonSet") => {
            validate_workload(object, old, &mut causes);
            let strategy = object.pointer("/spec/updateStrategy");
            if let Some(strategy) = strategy {
                validate_daemon_set_strategy(strategy, &mut causes);
            }
            validate_template_restart_policy(object, &["Always"], &mut causes);
        }
        ("apps", "Deployment") => {
            validate_workload(object, old, &mut causes);
            if let Some(rolling) = object.pointer("/spec/strategy/rollingUpdate") {
                validate_rolling_update_deployment(rolling, &mut causes);
            }
            validate_template_restart_policy(object, &["Always"], &mut causes);
        }
        ("apps", "ReplicaSet") => {
            validate_workload(object, old, &mut causes);
            validate_template_restart_policy(object, &["Always"], &mut causes);
        }
        ("batch", "Job") => {
            if let Some(spec) = object.pointer("/spec/template/spec") {
                validate_pod_spec(spec, "spec.template.spec", &mut causes);
            } else {
                causes.push(required("spec.template.spec.containers", ""));
            }
            validate_template_restart_policy(object, &["OnFailure", "Never"], &mut causes);
        }
        _ => {}
    }
    causes
}

/// `validateOnlyDeletedSchedulingGates` (pkg/apis/core/validation/validation.go, from
/// `ValidatePodUpdate`): an update may remove scheduling gates, never add one.
pub(super) fn validate_only_deleted_scheduling_gates(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let names = |pod: &Value| -> Vec<String> {
        pod.pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|gate| gate["name"].as_str().map(str::to_string))
            .collect()
    };
    let before = names(old);
    for (index, gate) in names(object).iter().enumerate() {
        if !before.contains(gate) {
            causes.push(Cause {
                reason: "FieldValueForbidden".into(),
                message: format!(
                    "Forbidden: only deletion is allowed, but found new scheduling gate '{gate}'"
                ),
                field: format!("spec.schedulingGates[{index}].name"),
            });
        }
    }
}

fn validate_metadata(rt: &ResourceType, object: &Value, causes: &mut Vec<Cause>) {
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let generate = object.pointer("/metadata/generateName").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() && generate.is_empty() {
        causes.push(required("metadata.name", "name or generateName is required"));
    }
    if rt.namespaced()
        && object.pointer("/metadata/namespace").is_some_and(|n| n.as_str().is_none_or(str::is_empty))
    {
        causes.push(required("metadata.namespace", ""));
    }
    causes.extend(super::super::objectmeta::validate(rt, object));
    validate_ranges(rt, object, causes);
}

/// `ValidateNonnegativeField` on the counts of the course's workload kinds (apps
/// `ValidateDeploymentSpec`/`ValidateReplicaSetSpec`/`ValidateDaemonSetSpec`, batch
/// `validateJobSpec`).
fn validate_ranges(rt: &ResourceType, object: &Value, causes: &mut Vec<Cause>) {
    let fields: &[&str] = match (rt.group.as_str(), rt.kind.as_str()) {
        ("apps", "Deployment" | "ReplicaSet") => &["replicas", "minReadySeconds", "revisionHistoryLimit"],
        ("apps", "DaemonSet") => &["minReadySeconds", "revisionHistoryLimit"],
        ("batch", "Job") => &["parallelism", "completions", "backoffLimit"],
        _ => &[],
    };
    for field in fields {
        if let Some(value) = object.pointer(&format!("/spec/{field}")).and_then(Value::as_i64)
            && value < 0
        {
            causes.push(invalid(
                format!("spec.{field}"),
                &value.to_string(),
                "must be greater than or equal to 0",
            ));
        }
    }
}

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
                causes.push(invalid("spec.selector", &go_label_selector(selector), "field is immutable"));
            }
        }
    }
    match object.pointer("/spec/template/spec") {
        Some(spec) => validate_pod_spec(spec, "spec.template.spec", causes),
        None => causes.push(required("spec.template.spec.containers", "")),
    }
}

/// `%#v` of a `*metav1.LabelSelector` as `field.Invalid` prints it.
pub(super) fn go_label_selector(selector: &Value) -> String {
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => {
            let parts: Vec<String> = items
                .iter()
                .map(|e| {
                    let values: Vec<String> = e
                        .get("values")
                        .and_then(Value::as_array)
                        .map(|v| v.iter().map(|s| format!("{:?}", s.as_str().unwrap_or_default())).collect())
                        .unwrap_or_default();
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:[]string{{{}}}}}",
                        e.get("key").and_then(Value::as_str).unwrap_or_default(),
                        e.get("operator").and_then(Value::as_str).unwrap_or_default(),
                        values.join(", ")
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", parts.join(", "))
        }
        _ => "[]v1.LabelSelectorRequirement(nil)".into(),
    };
    format!("v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}", go_string_map(labels))
}

pub(crate) fn validate_template_restart_policy(object: &Value, allowed: &[&str], causes: &mut Vec<Cause>) {
    let Some(policy) = object.pointer("/spec/template/spec/restartPolicy") else { return };
    if !allowed.iter().any(|a| policy.as_str() == Some(*a)) {
        causes.push(not_supported("spec.template.spec.restartPolicy", policy, allowed));
    }
}

fn validate_pod_spec(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    match spec.get("containers").and_then(Value::as_array) {
        Some(containers) if !containers.is_empty() => {
            for (i, container) in containers.iter().enumerate() {
                validate_container(container, &format!("{path}.containers[{i}]"), causes);
            }
        }
        _ => causes.push(required(format!("{path}.containers"), "")),
    }
    if let Some(Value::Array(containers)) = spec.get("initContainers") {
        for (i, container) in containers.iter().enumerate() {
            validate_container(container, &format!("{path}.initContainers[{i}]"), causes);
        }
    }
}

fn validate_container(container: &Value, path: &str, causes: &mut Vec<Cause>) {
    if container.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
        causes.push(required(format!("{path}.name"), ""));
    }
    if container.get("image").and_then(Value::as_str).is_none_or(|i| i.trim().is_empty()) {
        causes.push(required(format!("{path}.image"), ""));
    }
    validate_resources(container.get("resources"), &format!("{path}.resources"), causes);
}

/// `IsExtendedResourceName`-style check: a name outside the `kubernetes.io` namespace (and not a
/// quota `requests.` name) is extended, so integer-only and not overcommittable.
fn is_extended(resource: &str) -> bool {
    let Some((domain, _)) = resource.split_once('/') else { return false };
    !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io") || resource.starts_with("requests."))
}

fn is_hugepages(resource: &str) -> bool {
    resource.starts_with("hugepages-")
}

fn quantity_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => crate::k8s::quantity::json_number_text(n),
        other => other.to_string(),
    }
}

/// `ValidateResourceRequirements` for the extended-resource rules labs hit.
fn validate_resources(resources: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    let Some(resources) = resources else { return };
    let limits = resources.get("limits").and_then(Value::as_object);
    let requests = resources.get("requests").and_then(Value::as_object);
    if let Some(limits) = limits {
        for (name, quantity) in limits {
            validate_quantity(name, quantity, &format!("{path}.limits[{name}]"), causes);
        }
    }
    let Some(requests) = requests else { return };
    for (name, quantity) in requests {
        validate_quantity(name, quantity, &format!("{path}.requests[{name}]"), causes);
        let overcommit_allowed = !is_extended(name) && !is_hugepages(name);
        let request_text = quantity_text(quantity);
        match limits.and_then(|l| l.get(name)) {
            Some(limit) => {
                let limit_text = quantity_text(limit);
                // validation.go `ValidateResourceRequirements` compares with `Quantity.Cmp`.
                let (request, limit) =
                    (request_text.parse::<Quantity>().ok(), limit_text.parse::<Quantity>().ok());
                if request != limit && !overcommit_allowed {
                    causes.push(invalid(
                        format!("{path}.requests"),
                        &format!("{request_text:?}"),
                        &format!("must be equal to {name} limit of {limit_text}"),
                    ));
                } else if let (Some(r), Some(l)) = (request, limit)
                    && r > l
                {
                    causes.push(invalid(
                        format!("{path}.requests"),
                        &format!("{request_text:?}"),
                        &format!("must be less than or equal to {name} limit of {limit_text}"),
                    ));
                }
            }
            None if !overcommit_allowed => {
                causes.push(required(
                    format!("{path}.limits"),
                    "Limit must be set for non overcommitable resources",
                ));
            }
            None => {}
        }
    }
}

pub(super) fn validate_quantity(name: &str, quantity: &Value, path: &str, causes: &mut Vec<Cause>) {
    let text = quantity_text(quantity);
    let Ok(quantity) = text.parse::<Quantity>() else {
        causes.push(invalid(
            path,
            &format!("{text:?}"),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ));
        return;
    };
    if quantity < Quantity::ZERO {
        causes.push(invalid(path, &format!("{text:?}"), "must be greater than or equal to 0"));
    }
    // validation.go `validateResourceQuantityValue`: `value.MilliValue()%int64(1000) != 0`.
    if is_extended(name) && quantity.millis_ceil() % 1000 != 0 {
        causes.push(invalid(path, &format!("{text:?}"), "must be an integer"));
    }
}

/// Int-or-percent value: the integer, or the percentage number for `"N%"`.
fn int_or_percent(value: &Value) -> Option<(i64, bool)> {
    match value {
        Value::Number(n) => n.as_i64().map(|v| (v, false)),
        Value::String(s) => s.strip_suffix('%').and_then(|p| p.parse().ok()).map(|v| (v, true)),
        _ => None,
    }
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` for one field.
fn validate_int_or_percent(value: &Value, path: &str, causes: &mut Vec<Cause>) {
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

/// apps/validation `ValidateDaemonSetUpdateStrategy` + `ValidateRollingUpdateDaemonSet`.
fn validate_daemon_set_strategy(strategy: &Value, causes: &mut Vec<Cause>) {
    let path = "spec.updateStrategy";
    match strategy.get("type").and_then(Value::as_str) {
        Some("OnDelete") => {}
        Some("RollingUpdate") => {
            let Some(rolling) = strategy.get("rollingUpdate").filter(|r| !r.is_null()) else {
                causes.push(required(
                    format!("{path}.rollingUpdate"),
                    "this should be defaulted and never be nil",
                ));
                return;
            };
            let path = format!("{path}.rollingUpdate");
            let zero = json!(0);
            let unavailable = rolling.get("maxUnavailable").unwrap_or(&zero);
            let surge = rolling.get("maxSurge").unwrap_or(&zero);
            validate_int_or_percent(unavailable, &format!("{path}.maxUnavailable"), causes);
            validate_int_or_percent(surge, &format!("{path}.maxSurge"), causes);
            let non_zero = |v: &Value| int_or_percent(v).is_some_and(|(n, _)| n != 0);
            match (non_zero(unavailable), non_zero(surge)) {
                (true, true) => causes.push(invalid(
                    format!("{path}.maxSurge"),
                    &go_int_or_string(surge),
                    "may not be set when maxUnavailable is non-zero",
                )),
                (false, false) => {
                    causes.push(required(format!("{path}.maxUnavailable"), "cannot be 0 when maxSurge is 0"))
                }
                _ => {}
            }
        }
        other => {
            let value = other.map(|s| json!(s)).unwrap_or(Value::Null);
            causes.push(not_supported(format!("{path}.type"), &value, &["OnDelete", "RollingUpdate"]));
        }
    }
}

/// apps/validation `ValidateRollingUpdateDeployment`.
fn validate_rolling_update_deployment(rolling: &Value, causes: &mut Vec<Cause>) {
    let path = "spec.strategy.rollingUpdate";
    let zero = json!(0);
    let unavailable = rolling.get("maxUnavailable").unwrap_or(&zero);
    let surge = rolling.get("maxSurge").unwrap_or(&zero);
    validate_int_or_percent(unavailable, &format!("{path}.maxUnavailable"), causes);
    validate_int_or_percent(surge, &format!("{path}.maxSurge"), causes);
    let is_zero = |v: &Value| int_or_percent(v).is_none_or(|(n, _)| n == 0);
    if is_zero(unavailable) && is_zero(surge) {
        causes.push(invalid(
            format!("{path}.maxUnavailable"),
            &go_int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn quantities_are_validated_with_the_shared_parser() {
        let messages = |name: &str, quantity: Value| {
            let mut causes = Vec::new();
            validate_quantity(name, &quantity, "q", &mut causes);
            causes.into_iter().map(|c| c.message).collect::<Vec<_>>()
        };
        for fine in [json!("1"), json!("500m"), json!("0.5"), json!("1Gi"), json!("1e3"), json!(2)] {
            assert_eq!(messages("cpu", fine.clone()), Vec::<String>::new(), "{fine}");
        }
        assert_eq!(messages("nvidia.com/gpu", json!("0.5")), ["Invalid value: \"0.5\": must be an integer"]);
        assert_eq!(
            messages("cpu", json!("-1")),
            ["Invalid value: \"-1\": must be greater than or equal to 0"]
        );
        for bad in ["bogus", "", "999999999999999999999999999999999999999"] {
            assert_eq!(messages("cpu", json!(bad)).len(), 1, "{bad}");
        }
    }
}
