//! Fields an update may not change (Job, ConfigMap, Secret, ResourceQuota), 422 causes.
//!
//! Upstream v1.33: `pkg/apis/batch/validation/validation.go` `ValidateJobSpecUpdate`
//! (`selector`, `completionMode` and the pod template immutable, `validateCompletions` for
//! elastic Indexed Jobs, `validatePodTemplateUpdate` letting a suspended Job that never started
//! change its template's labels, annotations, node selector, tolerations, scheduling gates and
//! node affinity), `pkg/apis/core/validation/validation.go` `ValidateConfigMapUpdate`,
//! `ValidateSecretUpdate` and `ValidateResourceQuotaUpdate`; texts from
//! `apimachinery/pkg/api/validation` (`FieldImmutableErrorMsg`: `field is immutable`).
//! The selectors of Deployments, ReplicaSets, DaemonSets and StatefulSets are checked with the
//! rest of their validation (`validation::validate_workload`).

use serde_json::{Value, json};

use super::{
    Cause,
    validation::{go_label_selector, go_value, invalid},
};
use crate::sim::resources::ResourceType;

/// `apivalidation.FieldImmutableErrorMsg`.
const IMMUTABLE: &str = "field is immutable";
/// The `field.Forbidden` detail of a ConfigMap's or Secret's content once `immutable` is set.
const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

fn forbidden(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field: field.into(),
    }
}

/// The causes of changing what `old` (the stored object) fixed; none on create.
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let Some(old) = old else { return Vec::new() };
    let mut causes = Vec::new();
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("batch", "Job") => job(object, old, &mut causes),
        ("", "ConfigMap") => content(object, old, &["data", "binaryData"], &mut causes),
        ("", "Secret") => {
            if object["type"] != old["type"] {
                causes.push(invalid("type", &go_value(&object["type"]), IMMUTABLE));
            }
            // `stringData` is folded into `data` before validation.
            content(object, old, &["data"], &mut causes);
        }
        ("", "ResourceQuota") => quota_scopes(object, old, &mut causes),
        _ => {}
    }
    causes
}

/// `ValidateConfigMapUpdate` / `ValidateSecretUpdate`: once `immutable: true` is stored, it
/// stays set and the content stays as it is.
fn content(object: &Value, old: &Value, fields: &[&str], causes: &mut Vec<Cause>) {
    if old["immutable"] != json!(true) {
        return;
    }
    if object["immutable"] != json!(true) {
        causes.push(forbidden("immutable", IMMUTABLE_WHEN_SET));
    }
    for field in fields {
        if object[*field] != old[*field] {
            causes.push(forbidden(field, IMMUTABLE_WHEN_SET));
        }
    }
}

/// `ValidateJobSpecUpdate` in upstream's order: completions, selector, template, completionMode.
fn job(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let (spec, old_spec) = (&object["spec"], &old["spec"]);
    // `validateCompletions`: an Indexed Job may change completions together with parallelism.
    if spec["completions"] != old_spec["completions"] {
        let indexed = spec["completionMode"] == json!("Indexed");
        if !indexed {
            causes.push(invalid("spec.completions", &go_value(&spec["completions"]), IMMUTABLE));
        } else if !spec["completions"].is_null() && spec["completions"] != spec["parallelism"] {
            causes.push(invalid(
                "spec.completions",
                &go_value(&spec["completions"]),
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    if spec["selector"] != old_spec["selector"] {
        let shown = if spec["selector"].is_null() {
            "null".to_string()
        } else {
            go_label_selector(&spec["selector"])
        };
        causes.push(invalid("spec.selector", &shown, IMMUTABLE));
    }
    if !same_template(spec, old_spec, old) {
        // Upstream prints the whole internal `core.PodTemplateSpec` with Go's `%#v` here;
        // the simulator names the type and elides the dump.
        causes.push(invalid("spec.template", "core.PodTemplateSpec{…}", IMMUTABLE));
    }
    if spec["completionMode"] != old_spec["completionMode"] {
        causes.push(invalid("spec.completionMode", &go_value(&spec["completionMode"]), IMMUTABLE));
    }
}

/// `validatePodTemplateUpdate`: with `AllowMutableSchedulingDirectives` (a suspended Job that
/// has not started: `spec.suspend` and no `status.startTime`), the scheduling directives may
/// change; everything else in the template may not.
fn same_template(spec: &Value, old_spec: &Value, old: &Value) -> bool {
    let template = &spec["template"];
    let mut old_template = old_spec["template"].clone();
    let mutable_directives = old_spec["suspend"] == json!(true) && old["status"]["startTime"].is_null();
    if mutable_directives && old_template.is_object() {
        for (section, field) in [
            ("metadata", "labels"),
            ("metadata", "annotations"),
            ("spec", "nodeSelector"),
            ("spec", "tolerations"),
            ("spec", "schedulingGates"),
        ] {
            set_or_remove(&mut old_template, section, field, &template[section][field]);
        }
        // Only node affinity is mutable; pod (anti-)affinity stays as it was.
        let mut affinity = old_template["spec"]["affinity"].clone();
        if affinity.is_object() || !template["spec"]["affinity"]["nodeAffinity"].is_null() {
            if !affinity.is_object() {
                affinity = json!({});
            }
            match &template["spec"]["affinity"]["nodeAffinity"] {
                Value::Null => {
                    affinity.as_object_mut().map(|a| a.remove("nodeAffinity"));
                }
                node_affinity => affinity["nodeAffinity"] = node_affinity.clone(),
            }
            let empty = affinity.as_object().is_some_and(serde_json::Map::is_empty);
            let wanted = if empty && template["spec"]["affinity"].is_null() { Value::Null } else { affinity };
            set_or_remove(&mut old_template, "spec", "affinity", &wanted);
        }
    }
    *template == old_template
}

/// Sets `value[section][field]` to `new`, or removes it when `new` is null.
fn set_or_remove(value: &mut Value, section: &str, field: &str, new: &Value) {
    if new.is_null() {
        if let Some(map) = value.get_mut(section).and_then(Value::as_object_mut) {
            map.remove(field);
        }
    } else {
        if !value[section].is_object() {
            value[section] = json!({});
        }
        value[section][field] = new.clone();
    }
}

/// `ValidateResourceQuotaUpdate`: the set of scopes may not change.
fn quota_scopes(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let scopes = |quota: &Value| -> std::collections::BTreeSet<String> {
        quota["spec"]["scopes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    if scopes(object) == scopes(old) {
        return;
    }
    // `%#v` of a `[]core.ResourceQuotaScope`.
    let shown = match object["spec"]["scopes"].as_array() {
        Some(list) => {
            let items: Vec<String> = list.iter().map(go_value).collect();
            format!("[]core.ResourceQuotaScope{{{}}}", items.join(", "))
        }
        None => "[]core.ResourceQuotaScope(nil)".to_string(),
    };
    causes.push(invalid("spec.scopes", &shown, IMMUTABLE));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources;

    fn messages(kind: &str, object: &Value, old: &Value) -> Vec<String> {
        let types = resources::built_in();
        let rt = types.iter().find(|rt| rt.kind == kind).expect("a built-in kind");
        validate(rt, object, Some(old)).iter().map(Cause::to_string).collect()
    }

    fn job() -> Value {
        json!({"spec": {"completions": 2, "parallelism": 1, "completionMode": "NonIndexed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
            "template": {"metadata": {"labels": {"app": "train"}},
                "spec": {"containers": [{"name": "main", "image": "cuda:12"}], "restartPolicy": "Never"}}}})
    }

    #[test]
    fn a_jobs_template_selector_mode_and_completions_are_fixed() {
        let old = job();
        assert!(messages("Job", &old, &old).is_empty());
        assert!(validate(&resources::built_in()[0], &old, None).is_empty());
        let mut changed = old.clone();
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("cuda:13");
        changed["spec"]["completions"] = json!(3);
        changed["spec"]["selector"]["matchLabels"]["x"] = json!("y");
        changed["spec"]["completionMode"] = json!("Indexed");
        assert_eq!(
            messages("Job", &changed, &old),
            [
                "spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism",
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"batch.kubernetes.io/controller-uid\":\"u1\", \"x\":\"y\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
                "spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable",
                "spec.completionMode: Invalid value: \"Indexed\": field is immutable",
            ]
        );
        let mut more = old.clone();
        more["spec"]["completions"] = json!(4);
        assert_eq!(messages("Job", &more, &old), ["spec.completions: Invalid value: 4: field is immutable"]);
        // Parallelism and suspend are not part of the template: free to change.
        let mut scaled = old.clone();
        scaled["spec"]["parallelism"] = json!(2);
        scaled["spec"]["suspend"] = json!(true);
        assert!(messages("Job", &scaled, &old).is_empty());
    }

    #[test]
    fn a_suspended_job_that_never_started_may_change_its_scheduling_directives_only() {
        let mut old = job();
        old["spec"]["suspend"] = json!(true);
        let mut moved = old.clone();
        moved["spec"]["template"]["metadata"]["labels"]["queue"] = json!("gpu");
        moved["spec"]["template"]["spec"]["nodeSelector"] = json!({"nvidia.com/gpu.present": "true"});
        moved["spec"]["template"]["spec"]["tolerations"] =
            json!([{"key": "nvidia.com/gpu", "operator": "Exists"}]);
        moved["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {"x": 1}});
        assert!(messages("Job", &moved, &old).is_empty());
        let mut imaged = moved.clone();
        imaged["spec"]["template"]["spec"]["containers"][0]["image"] = json!("cuda:13");
        assert_eq!(
            messages("Job", &imaged, &old),
            ["spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable"]
        );
        let mut pod_affinity = old.clone();
        pod_affinity["spec"]["template"]["spec"]["affinity"] = json!({"podAffinity": {"x": 1}});
        assert_eq!(messages("Job", &pod_affinity, &old).len(), 1);
        // Once it started, the directives are fixed too.
        old["status"]["startTime"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(messages("Job", &moved, &old).len(), 1);
    }

    #[test]
    fn immutable_config_maps_and_secrets_keep_their_content() {
        let old = json!({"immutable": true, "data": {"k": "v"}});
        assert!(messages("ConfigMap", &old, &old).is_empty());
        let changed = json!({"data": {"k": "w"}});
        let expected = [
            "immutable: Forbidden: field is immutable when `immutable` is set",
            "data: Forbidden: field is immutable when `immutable` is set",
        ];
        assert_eq!(messages("ConfigMap", &changed, &old), expected);
        assert!(messages("ConfigMap", &changed, &json!({"data": {"k": "v"}})).is_empty());
        let secret = json!({"type": "Opaque", "immutable": true, "data": {"k": "dg=="}});
        let retyped = json!({"type": "kubernetes.io/tls", "immutable": true, "data": {"k": "dg=="}});
        assert_eq!(
            messages("Secret", &retyped, &secret),
            ["type: Invalid value: \"kubernetes.io/tls\": field is immutable"]
        );
    }

    #[test]
    fn quota_scopes_are_fixed() {
        let old = json!({"spec": {"scopes": ["BestEffort"]}});
        assert!(messages("ResourceQuota", &json!({"spec": {"scopes": ["BestEffort"]}}), &old).is_empty());
        assert_eq!(
            messages("ResourceQuota", &json!({"spec": {}}), &old),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope(nil): field is immutable"]
        );
        assert_eq!(
            messages("ResourceQuota", &json!({"spec": {"scopes": ["NotBestEffort"]}}), &old),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"NotBestEffort\"}: field is immutable"]
        );
    }
}
