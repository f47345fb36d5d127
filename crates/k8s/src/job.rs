//! Job semantics both the registry and the Job controller need: the selector and pod labels the apiserver generates.
//!
//! Upstream (v1.33): `pkg/registry/batch/job/strategy.go` (`generateSelector`, run by the
//! registry's `PrepareForCreate`) and `staging/src/k8s.io/api/batch/v1/types.go` (the label
//! names). The registry writes them; the controller stamps them on the pods it creates.

use serde_json::{Value, json};

/// Label with the Job's name on its pods (and the legacy `job-name`).
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// Label with the Job's uid on its pods and in its generated selector (and the legacy
/// `controller-uid`).
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";

/// What the apiserver adds to a new Job unless `spec.manualSelector` is true (`generateSelector`,
/// `pkg/registry/batch/job/strategy.go`): the template gets `batch.kubernetes.io/job-name`,
/// `job-name`, `batch.kubernetes.io/controller-uid` and `controller-uid` (a label the user set is
/// kept), and the selector matches `batch.kubernetes.io/controller-uid`. Runs after the uid is
/// assigned.
///
/// ```
/// use lab_runner_k8s::job::generate_selector;
/// let mut job = serde_json::json!({"metadata": {"name": "train", "uid": "u1"}, "spec": {"template": {}}});
/// generate_selector(&mut job);
/// assert_eq!(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], "u1");
/// assert_eq!(job["spec"]["template"]["metadata"]["labels"]["job-name"], "train");
/// ```
pub fn generate_selector(job: &mut Value) {
    if job["spec"]["manualSelector"] == json!(true) || !job["spec"].is_object() {
        return;
    }
    let name = job["metadata"]["name"].clone();
    let uid = job["metadata"]["uid"].clone();
    if !job["spec"]["template"].is_object() {
        job["spec"]["template"] = json!({});
    }
    if !job["spec"]["template"]["metadata"].is_object() {
        job["spec"]["template"]["metadata"] = json!({});
    }
    if !job["spec"]["template"]["metadata"]["labels"].is_object() {
        job["spec"]["template"]["metadata"]["labels"] = json!({});
    }
    if let Some(labels) = job["spec"]["template"]["metadata"]["labels"].as_object_mut() {
        for (key, value) in [
            ("job-name", &name),
            (JOB_NAME_LABEL, &name),
            ("controller-uid", &uid),
            (CONTROLLER_UID_LABEL, &uid),
        ] {
            labels.entry(key).or_insert_with(|| value.clone());
        }
    }
    if !job["spec"]["selector"].is_object() {
        job["spec"]["selector"] = json!({});
    }
    if !job["spec"]["selector"]["matchLabels"].is_object() {
        job["spec"]["selector"]["matchLabels"] = json!({});
    }
    if let Some(match_labels) = job["spec"]["selector"]["matchLabels"].as_object_mut() {
        match_labels.entry(CONTROLLER_UID_LABEL).or_insert(uid);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_selector_keeps_user_labels_and_honours_manual_selector() {
        let mut job = json!({"metadata": {"name": "train", "uid": "u1"},
                             "spec": {"template": {"metadata": {"labels": {"job-name": "mine"}}}}});
        generate_selector(&mut job);
        let labels = &job["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "mine");
        assert_eq!(labels[JOB_NAME_LABEL], "train");
        assert_eq!(labels["controller-uid"], "u1");
        assert_eq!(labels[CONTROLLER_UID_LABEL], "u1");
        assert_eq!(job["spec"]["selector"], json!({"matchLabels": {CONTROLLER_UID_LABEL: "u1"}}));
        let mut manual =
            json!({"metadata": {"name": "m", "uid": "u2"}, "spec": {"manualSelector": true, "template": {}}});
        generate_selector(&mut manual);
        assert!(manual["spec"]["selector"].is_null());
    }
}
