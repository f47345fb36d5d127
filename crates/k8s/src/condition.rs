//! Reading the `status.conditions` of any object (`Ready`, `Available`, `Complete`, `Established`).
//!
//! Upstream reads conditions per type with small helpers (`podutil.IsPodReady`,
//! `k8s.io/kubernetes/pkg/controller/job/utils.go` `IsJobFinished`,
//! `apiextensions-apiserver/pkg/apihelpers` `IsCRDConditionTrue`); all of them mean the same
//! thing: a condition of that type whose `status` is exactly `"True"`.

use serde_json::Value;

/// The condition of type `type_` in a `conditions` list, if any.
pub fn find<'a>(conditions: &'a Value, type_: &str) -> Option<&'a Value> {
    conditions.as_array()?.iter().find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// True when the `conditions` list holds a condition of type `type_` with status `"True"`.
pub fn is_true(conditions: &Value, type_: &str) -> bool {
    conditions.as_array().is_some_and(|list| {
        list.iter().any(|c| {
            c.get("type").and_then(Value::as_str) == Some(type_)
                && c.get("status").and_then(Value::as_str) == Some("True")
        })
    })
}

/// True when `object.status.conditions` holds a condition of type `type_` with status `"True"`.
///
/// ```
/// use lab_runner_k8s::condition::object_condition_true;
/// let pod = serde_json::json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
/// assert!(object_condition_true(&pod, "Ready"));
/// assert!(!object_condition_true(&pod, "Initialized"));
/// ```
pub fn object_condition_true(object: &Value, type_: &str) -> bool {
    object.pointer("/status/conditions").is_some_and(|conditions| is_true(conditions, type_))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_an_exact_true_status_counts() {
        let object = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "Available", "status": "True"},
            {"type": "Complete", "status": "Unknown"},
            {"type": "Progressing", "status": true},
        ]}});
        assert!(object_condition_true(&object, "Available"));
        for type_ in ["Ready", "Complete", "Progressing", "Missing"] {
            assert!(!object_condition_true(&object, type_), "{type_}");
        }
        assert!(!object_condition_true(&json!({}), "Ready"));
        assert!(!object_condition_true(&json!({"status": {"conditions": "Ready"}}), "Ready"));
        assert_eq!(
            find(&object["status"]["conditions"], "Ready").map(|c| &c["status"]),
            Some(&json!("False"))
        );
        assert!(find(&object["status"]["conditions"], "Missing").is_none());
    }
}
