//! A pod's spec is immutable but for a few fields, as upstream's `ValidatePodUpdate` (422 causes).
//!
//! Upstream v1.33: `pkg/apis/core/validation/validation.go` `ValidatePodUpdate`,
//! `ValidateContainerUpdates` and `validateOnlyAddedTolerations`. The update may change the
//! containers' and init containers' images, lower (or set) `activeDeadlineSeconds`, add
//! tolerations (or change an existing one's `tolerationSeconds`), remove scheduling gates, and set a negative `terminationGracePeriodSeconds`
//! to 1; any other change to the spec is one `spec: Forbidden` cause.
//!
//! Left out: the QoS-class check (`Pod QOS is immutable`, only reachable together with the
//! Forbidden cause here, as resources are not mutable through this path in v1.33) and the
//! additions a gated pod may make to `nodeSelector` and node affinity.

use serde_json::{Map, Value};

use crate::kinds::field::{Cause, forbidden, go_value, invalid, required};

/// `updatablePodSpecFields`, joined with `,` as upstream joins them.
const UPDATABLE_POD_SPEC_FIELDS: &[&str] = &[
    "`spec.containers[*].image`",
    "`spec.initContainers[*].image`",
    "`spec.activeDeadlineSeconds`",
    "`spec.tolerations` (only additions to existing tolerations)",
    "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/// The causes of updating the pod `old` (as stored) to `object`.
pub fn validate(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let (spec, old_spec) = (&object["spec"], &old["spec"]);
    for list in ["containers", "initContainers"] {
        if !container_updates(spec, old_spec, list, causes) {
            // Upstream returns at once: the spec comparison below pairs containers by index.
            return;
        }
    }
    if !active_deadline(spec, old_spec, causes) {
        return;
    }
    only_added_tolerations(spec, old_spec, causes);
    validate_only_deleted_scheduling_gates(object, old, causes);
    if spec == old_spec {
        return;
    }
    let munged = munge(spec, old_spec);
    if &munged != old_spec {
        causes.push(forbidden(
            "spec",
            &format!(
                "pod updates may not change fields other than {}\n{}",
                UPDATABLE_POD_SPEC_FIELDS.join(","),
                spec_diff(old_spec, &munged)
            ),
        ));
    }
}

fn list<'a>(spec: &'a Value, field: &str) -> &'a [Value] {
    spec[field].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// `ValidateContainerUpdates`: the same number of containers, each with an image without
/// surrounding spaces. False when upstream stops validating the update.
fn container_updates(spec: &Value, old_spec: &Value, field: &str, causes: &mut Vec<Cause>) -> bool {
    let (containers, old_containers) = (list(spec, field), list(old_spec, field));
    if containers.len() != old_containers.len() {
        causes.push(forbidden(format!("spec.{field}"), "pod updates may not add or remove containers"));
        return false;
    }
    for (index, container) in containers.iter().enumerate() {
        let image = container["image"].as_str().unwrap_or_default();
        let path = format!("spec.{field}[{index}].image");
        if image.is_empty() {
            causes.push(required(path.clone(), ""));
        }
        if image.trim() != image {
            causes.push(invalid(
                path,
                &go_value(&container["image"]),
                "must not have leading or trailing whitespace",
            ));
        }
    }
    true
}

/// `activeDeadlineSeconds` may be set, or lowered, never removed or raised. False when upstream
/// stops validating the update (a raised deadline).
fn active_deadline(spec: &Value, old_spec: &Value, causes: &mut Vec<Cause>) -> bool {
    let Some(old_deadline) = old_spec["activeDeadlineSeconds"].as_i64() else { return true };
    let path = "spec.activeDeadlineSeconds";
    match spec["activeDeadlineSeconds"].as_i64() {
        // `ErrorBody` prints a nil pointer as the quoted string "null".
        None => {
            causes.push(invalid(path, "\"null\"", "must not update from a positive integer to nil value"))
        }
        Some(deadline) if deadline > old_deadline => {
            causes.push(invalid(path, &deadline.to_string(), "must be less than or equal to previous value"));
            return false;
        }
        Some(_) => {}
    }
    true
}

/// `validateOnlyAddedTolerations`: every stored toleration is still there, up to its
/// `tolerationSeconds`.
fn only_added_tolerations(spec: &Value, old_spec: &Value, causes: &mut Vec<Cause>) {
    let without_seconds = |toleration: &Value| {
        let mut toleration = toleration.clone();
        if let Some(map) = toleration.as_object_mut() {
            map.remove("tolerationSeconds");
        }
        toleration
    };
    let tolerations: Vec<Value> = list(spec, "tolerations").iter().map(without_seconds).collect();
    if list(old_spec, "tolerations").iter().any(|old| !tolerations.contains(&without_seconds(old))) {
        causes.push(forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    }
}

/// The new spec with every field an update may change set back to the stored value.
fn munge(spec: &Value, old_spec: &Value) -> Value {
    let mut munged = spec.clone();
    let Some(map) = munged.as_object_mut() else { return munged };
    for field in ["containers", "initContainers"] {
        if let Some(Value::Array(containers)) = map.get_mut(field) {
            for (container, old) in containers.iter_mut().zip(list(old_spec, field)) {
                set_or_remove(container, "image", &old["image"]);
            }
        }
    }
    let mut restore = vec!["activeDeadlineSeconds", "schedulingGates", "tolerations"];
    let old_grace = old_spec["terminationGracePeriodSeconds"].as_i64();
    if old_grace.is_some_and(|grace| grace < 0)
        && map.get("terminationGracePeriodSeconds").and_then(Value::as_i64) == Some(1)
    {
        restore.push("terminationGracePeriodSeconds");
    }
    for field in restore {
        set_or_remove(&mut munged, field, &old_spec[field]);
    }
    munged
}

fn set_or_remove(object: &mut Value, field: &str, value: &Value) {
    if let Some(map) = object.as_object_mut() {
        if value.is_null() {
            map.remove(field);
        } else {
            map.insert(field.into(), value.clone());
        }
    }
}

/// Upstream appends `cmp.Diff(oldPod.Spec, mungedPodSpec)` (go-cmp's report on the internal
/// `core.PodSpec`: Go syntax, Go field names, unchanged fields elided as `... // N identical
/// fields`, nested structs descended into). This is an approximation in the same frame: one
/// `-`/`+` pair per changed top-level field, Go field name, values as JSON, the unchanged fields
/// counted.
fn spec_diff(old_spec: &Value, munged: &Value) -> String {
    let empty = Map::new();
    let (old, new) = (old_spec.as_object().unwrap_or(&empty), munged.as_object().unwrap_or(&empty));
    let mut names: Vec<&String> = old.keys().collect();
    names.extend(new.keys().filter(|name| !old.contains_key(*name)));
    let mut lines = vec!["  core.PodSpec{".to_string()];
    let mut identical = 0;
    let flush = |identical: &mut usize, lines: &mut Vec<String>| {
        if *identical > 0 {
            lines.push(format!("  \t... // {identical} identical fields"));
            *identical = 0;
        }
    };
    for name in names {
        let (before, after) = (old.get(name), new.get(name));
        if before == after {
            identical += 1;
            continue;
        }
        flush(&mut identical, &mut lines);
        let go_name = go_field_name(name);
        let show = |value: Option<&Value>| value.map_or("nil".to_string(), Value::to_string);
        lines.push(format!("- \t{go_name}: {},", show(before)));
        lines.push(format!("+ \t{go_name}: {},", show(after)));
    }
    flush(&mut identical, &mut lines);
    lines.push("  }".into());
    lines.join("\n")
}

/// The Go field name of a JSON field: its first letter upper-cased (`nodeName` → `NodeName`).
fn go_field_name(json_name: &str) -> String {
    let mut chars = json_name.chars();
    chars.next().map(|first| first.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// `validateOnlyDeletedSchedulingGates` (pkg/apis/core/validation/validation.go, from
/// `ValidatePodUpdate`): an update may remove scheduling gates, never add one.
fn validate_only_deleted_scheduling_gates(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
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
            causes.push(forbidden(
                format!("spec.schedulingGates[{index}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{gate}'"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::k8s::testing;

    /// The shared test pod with `spec` in place of its own.
    fn pod(spec: Value) -> Value {
        let mut pod = testing::pod("p").json();
        pod["spec"] = spec;
        pod
    }

    fn messages(object: &Value, old: &Value) -> Vec<String> {
        let mut causes = Vec::new();
        validate(object, old, &mut causes);
        causes.iter().map(Cause::to_string).collect()
    }

    fn base() -> Value {
        json!({"containers": [{"name": "c", "image": "a:1", "ports": [{"containerPort": 80}]}],
               "nodeName": "gpu-1", "terminationGracePeriodSeconds": 30,
               "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]})
    }

    #[test]
    fn the_mutable_fields_may_change() {
        let old = pod(base());
        let mut spec = base();
        spec["containers"][0]["image"] = json!("a:2");
        spec["activeDeadlineSeconds"] = json!(60);
        spec["tolerations"][0]["tolerationSeconds"] = json!(10);
        spec["tolerations"].as_array_mut().unwrap().push(json!({"key": "more", "operator": "Exists"}));
        assert_eq!(messages(&pod(spec), &old), Vec::<String>::new());
        let mut negative = base();
        negative["terminationGracePeriodSeconds"] = json!(-1);
        let mut one = base();
        one["terminationGracePeriodSeconds"] = json!(1);
        assert_eq!(messages(&pod(one), &pod(negative)), Vec::<String>::new());
    }

    #[test]
    fn other_changes_are_forbidden_with_upstreams_sentence() {
        let old = pod(base());
        let mut spec = base();
        spec["containers"][0]["ports"][0]["containerPort"] = json!(81);
        spec["nodeName"] = json!("gpu-2");
        assert_eq!(
            messages(&pod(spec), &old),
            [
                "spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n  core.PodSpec{\n- \tContainers: [{\"name\":\"c\",\"image\":\"a:1\",\"ports\":[{\"containerPort\":80}]}],\n+ \tContainers: [{\"name\":\"c\",\"image\":\"a:1\",\"ports\":[{\"containerPort\":81}]}],\n- \tNodeName: \"gpu-1\",\n+ \tNodeName: \"gpu-2\",\n  \t... // 2 identical fields\n  }"
            ]
        );
    }

    #[test]
    fn containers_deadlines_and_tolerations_are_checked_as_upstream() {
        let old = pod(base());
        let mut more = base();
        more["containers"].as_array_mut().unwrap().push(json!({"name": "d", "image": "b"}));
        assert_eq!(
            messages(&pod(more), &old),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        let mut blank = base();
        blank["containers"][0]["image"] = json!(" a:2");
        assert_eq!(
            messages(&pod(blank), &old),
            [
                "spec.containers[0].image: Invalid value: \" a:2\": must not have leading or trailing whitespace"
            ]
        );
        let mut deadline = base();
        deadline["activeDeadlineSeconds"] = json!(60);
        let mut longer = base();
        longer["activeDeadlineSeconds"] = json!(61);
        assert_eq!(
            messages(&pod(longer), &pod(deadline.clone())),
            ["spec.activeDeadlineSeconds: Invalid value: 61: must be less than or equal to previous value"]
        );
        assert_eq!(
            messages(&pod(base()), &pod(deadline)),
            [
                "spec.activeDeadlineSeconds: Invalid value: \"null\": must not update from a positive integer to nil value"
            ]
        );
        let mut removed = base();
        removed["tolerations"] = json!([]);
        assert_eq!(
            messages(&pod(removed), &old),
            [
                "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"
            ]
        );
    }

    #[test]
    fn an_update_may_not_bind_an_unbound_pod() {
        // Only `pods/binding` (the store's `bind`, which the scheduler uses) sets the node.
        let mut unbound = base();
        unbound.as_object_mut().unwrap().remove("nodeName");
        let refused = messages(&pod(base()), &pod(unbound));
        assert_eq!(refused.len(), 1);
        assert!(refused[0].starts_with("spec: Forbidden: pod updates may not change fields other than"));
        assert!(refused[0].contains("+ \tNodeName: \"gpu-1\","), "{}", refused[0]);
    }
}
