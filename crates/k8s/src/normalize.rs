//! `normalize()`: strips what changes between runs (uids, resource versions, timestamps) from an object.
//!
//! One function serves `check` (comparing live objects) and the tests' snapshots,
//! so what a snapshot shows is exactly what grading compares.

use serde_json::Value;

/// `metadata` fields the API server assigns on every write or creation.
const SERVER_METADATA: [&str; 6] =
    ["uid", "resourceVersion", "managedFields", "creationTimestamp", "generation", "selfLink"];

/// Removes server-assigned, run-dependent fields in place: `metadata.uid`, `resourceVersion`,
/// `managedFields`, `creationTimestamp`, `generation`, `selfLink`, and every timestamp anywhere
/// in the object — string (or null) values of keys ending in `Timestamp`, `Time` or `At`
/// (`deletionTimestamp`, `lastTransitionTime`, `startTime`, `startedAt`, `finishedAt`,
/// `eventTime` …). Works on a single object or on a `List`.
///
/// ```
/// use lab_runner_k8s::normalize::normalize;
/// let mut pod = serde_json::json!({
///     "metadata": {"name": "p", "uid": "1f…", "resourceVersion": "42", "creationTimestamp": "2026-01-01T00:00:00Z"},
///     "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
/// });
/// normalize(&mut pod);
/// assert_eq!(pod, serde_json::json!({
///     "metadata": {"name": "p"},
///     "status": {"conditions": [{"type": "Ready", "status": "True"}]}
/// }));
/// ```
pub fn normalize(object: &mut Value) {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        for key in SERVER_METADATA {
            metadata.remove(key);
        }
    }
    if let Some(items) = object.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(normalize);
    }
    strip_timestamps(object);
}

fn is_timestamp_key(key: &str) -> bool {
    ["Timestamp", "Time", "At"].iter().any(|suffix| {
        key.strip_suffix(suffix)
            .is_some_and(|head| !head.is_empty() && head.chars().all(char::is_alphanumeric))
    })
}

fn strip_timestamps(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|key, v| !(is_timestamp_key(key) && (v.is_string() || v.is_null())));
            map.values_mut().for_each(strip_timestamps);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_timestamps),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn drops_server_fields_and_timestamps_everywhere() {
        let mut list = json!({"kind": "PodList", "metadata": {"resourceVersion": "9"}, "items": [{
            "metadata": {"name": "p", "namespace": "n", "uid": "u", "generation": 3, "selfLink": "/x",
                         "managedFields": [{"manager": "kubectl"}], "deletionTimestamp": "2026-01-01T00:00:00Z",
                         "labels": {"a": "b"}},
            "spec": {"nodeName": "gpu-1", "tolerations": [{"key": "k", "tolerationSeconds": 300}]},
            "status": {"startTime": "t", "containerStatuses": [{"name": "c", "restartCount": 0,
                       "state": {"running": {"startedAt": "t"}}, "lastState": {"terminated": {"finishedAt": null, "exitCode": 1}}}],
                       "observedGeneration": 3}
        }]});
        normalize(&mut list);
        assert_eq!(
            list,
            json!({"kind": "PodList", "metadata": {}, "items": [{
                "metadata": {"name": "p", "namespace": "n", "labels": {"a": "b"}},
                "spec": {"nodeName": "gpu-1", "tolerations": [{"key": "k", "tolerationSeconds": 300}]},
                "status": {"containerStatuses": [{"name": "c", "restartCount": 0, "state": {"running": {}},
                           "lastState": {"terminated": {"exitCode": 1}}}], "observedGeneration": 3}
            }]})
        );
    }

    #[test]
    fn keeps_keys_that_only_look_like_timestamps() {
        let mut object = json!({"spec": {"At": "x", "format": "y", "maxTime": 5, "image-At": "z"}});
        let before = object.clone();
        normalize(&mut object);
        assert_eq!(object, before);
    }
}
