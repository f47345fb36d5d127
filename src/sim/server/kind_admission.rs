//! Defaults and validation of the kinds and modes served since issue #17, apart from `admission.rs`.
//!
//! Texts and field paths are upstream's (`pkg/apis/batch/validation/validation.go` and the other
//! files each function cites), rendered as `admission::Cause`s.

use serde_json::Value;

use super::admission::Cause;
use crate::sim::resources::ResourceType;

/// `maxParallelismForIndexedJob` (pkg/apis/batch/validation/validation.go).
const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;

/// API defaults of these kinds, after `admission::apply_defaults`.
pub fn apply_defaults(_rt: &ResourceType, _object: &mut Value) {}

/// Validation of these kinds, after `admission::validate` (`old`: the stored object on update).
pub fn validate(rt: &ResourceType, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    if let ("batch", "Job") = (rt.group.as_str(), rt.kind.as_str()) {
        validate_completion_mode(&object["spec"], &mut causes);
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
    use serde_json::json;

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
