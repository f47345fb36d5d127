//! Defaults and validation of the kinds and modes served since issue #17, apart from `admission.rs`.
//!
//! Texts and field paths are upstream's (`pkg/apis/batch/validation/validation.go` and the other
//! files each function cites), rendered as `admission::Cause`s.

use serde_json::{Value, json};

use super::admission::{self, Cause};
use crate::sim::resources::ResourceType;

/// `maxParallelismForIndexedJob` (pkg/apis/batch/validation/validation.go).
const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;

/// API defaults of these kinds, after `admission::apply_defaults`.
pub fn apply_defaults(rt: &ResourceType, object: &mut Value) {
    if let ("apps", "StatefulSet") = (rt.group.as_str(), rt.kind.as_str()) {
        default_stateful_set(object);
    }
}

/// apps/v1/defaults.go `SetDefaults_StatefulSet` (v1.33: StatefulSetAutoDeletePVC on, the
/// MaxUnavailableStatefulSet gate off, so no `maxUnavailable`).
fn default_stateful_set(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    let mut default = |key: &str, value: Value| {
        if spec.get(key).is_none_or(Value::is_null) {
            spec.insert(key.to_string(), value);
        }
    };
    default("replicas", json!(1));
    default("podManagementPolicy", json!("OrderedReady"));
    default("updateStrategy", json!({"type": "RollingUpdate"}));
    default("revisionHistoryLimit", json!(10));
    default("persistentVolumeClaimRetentionPolicy", json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
    if let Some(strategy) = spec.get_mut("updateStrategy").and_then(Value::as_object_mut) {
        if strategy.get("type").is_none_or(Value::is_null) {
            strategy.insert("type".into(), json!("RollingUpdate"));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate")) {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if rolling.is_null() {
                *rolling = json!({});
            }
            if let Some(rolling) = rolling.as_object_mut() {
                rolling.entry("partition").or_insert(json!(0));
            }
        }
    }
    if let Some(policy) = spec.get_mut("persistentVolumeClaimRetentionPolicy").and_then(Value::as_object_mut)
    {
        policy.entry("whenDeleted").or_insert(json!("Retain"));
        policy.entry("whenScaled").or_insert(json!("Retain"));
    }
    admission::default_template(spec);
}

/// Validation of these kinds, after `admission::validate` (`old`: the stored object on update).
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("batch", "Job") => validate_completion_mode(&object["spec"], &mut causes),
        ("apps", "StatefulSet") => {
            // `ValidateStatefulSetSpec`: the selector, template labels and restart policy as
            // for the other workloads, and the two policies' values.
            admission::validate_workload(object, old, &mut causes);
            admission::validate_template_restart_policy(object, &["Always"], &mut causes);
            let spec = &object["spec"];
            for (field, value, supported) in [
                ("spec.podManagementPolicy", &spec["podManagementPolicy"], &["OrderedReady", "Parallel"][..]),
                (
                    "spec.updateStrategy.type",
                    &spec["updateStrategy"]["type"],
                    &["RollingUpdate", "OnDelete"][..],
                ),
            ] {
                if let Some(text) = value.as_str().filter(|t| !supported.contains(t)) {
                    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
                    causes.push(Cause {
                        reason: "FieldValueNotSupported".into(),
                        message: format!(
                            "Unsupported value: {text:?}: supported values: {}",
                            list.join(", ")
                        ),
                        field: field.into(),
                    });
                }
            }
        }
        _ => {}
    }
    causes
}

/// `validateJobSpec`: the completion mode is one of two, and an Indexed Job states its
/// completions and at most 100000 parallel pods.
fn validate_completion_mode(spec: &Value, causes: &mut Vec<Cause>) {
    match spec["completionMode"].as_str() {
        None | Some("NonIndexed") => {}
        Some("Indexed") => {
            if spec["completions"].is_null() {
                causes.push(required("spec.completions", "when completion mode is Indexed"));
            }
            if let Some(parallelism) =
                spec["parallelism"].as_i64().filter(|p| *p > MAX_PARALLELISM_FOR_INDEXED_JOB)
            {
                causes.push(invalid(
                    "spec.parallelism",
                    &parallelism.to_string(),
                    &format!("must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"),
                ));
            }
        }
        Some(other) => causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!("Unsupported value: {other:?}: supported values: \"NonIndexed\", \"Indexed\""),
            field: "spec.completionMode".into(),
        }),
    }
}

/// `field.Required`.
fn required(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: format!("Required value: {detail}"),
        field: field.into(),
    }
}

/// `field.Invalid` with a bad value printed bare (numbers).
fn invalid(field: &str, bad_value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {bad_value}: {detail}"),
        field: field.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources;

    fn jobs() -> ResourceType {
        resources::built_in().into_iter().find(|t| t.plural == "jobs").unwrap()
    }

    #[test]
    fn an_indexed_job_needs_completions_and_bounded_parallelism() {
        let causes =
            validate(&jobs(), &json!({"spec": {"completionMode": "Indexed", "parallelism": 200000}}), None);
        let texts: Vec<String> = causes.iter().map(Cause::to_string).collect();
        assert_eq!(
            texts,
            [
                "spec.completions: Required value: when completion mode is Indexed",
                "spec.parallelism: Invalid value: 200000: must be less than or equal to 100000 when completion mode is Indexed"
            ]
        );
        let odd = validate(&jobs(), &json!({"spec": {"completionMode": "Sharded", "completions": 2}}), None);
        assert_eq!(
            odd[0].to_string(),
            "spec.completionMode: Unsupported value: \"Sharded\": supported values: \"NonIndexed\", \"Indexed\""
        );
        assert!(
            validate(&jobs(), &json!({"spec": {"completionMode": "Indexed", "completions": 2}}), None)
                .is_empty()
        );
    }
}
