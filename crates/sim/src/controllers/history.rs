//! ControllerRevision data as the DaemonSet and StatefulSet controllers write it and kubectl compares it (pkg/controller/history).
//!
//! Both controllers record a template as `{"spec":{"template":{"$patch":"replace",…}}}`
//! (pkg/controller/daemon/update.go `getPatch`, pkg/controller/statefulset/stateful_set_utils.go
//! `getPatch`: the same code), and kubectl's rollbackers build the same bytes from the object
//! they GET to skip an undo to the current revision (polymorphichelpers/rollback.go
//! `daemonSetMatch`, `statefulsetMatch`).

use serde_json::{Value, json};

use crate::gojson;

/// The revision `data` of `object`'s `spec.template`, as Go writes it: the template as the typed
/// `PodTemplateSpec` marshals (1.33's apimachinery writes a zero `metadata.creationTimestamp` as
/// `null` and a container's zero `resources` as `{}`; kubectl 1.37's omits both, so it compares
/// unequal here as it does against a real 1.33 cluster), then re-marshalled from a
/// `map[string]interface{}`, so keys are sorted and `$patch` comes first. kubectl 1.32/1.33
/// build the same bytes from the object they GET and compare them with the revision's, so
/// `rollout undo --to-revision=<current>` is skipped.
pub(crate) fn template_patch(object: &Value) -> Value {
    let mut template = object["spec"]["template"].clone();
    if !template.is_object() {
        template = json!({});
    }
    as_typed_template(&mut template);
    template["$patch"] = json!("replace");
    gojson::sorted(json!({"spec": {"template": template}}))
}

/// A stored revision's `data` brought to [`template_patch`]'s form, so a revision written
/// before (or by hand) matches the template it records.
pub(crate) fn normalized_patch(data: &Value) -> Value {
    let mut data = data.clone();
    if let Some(template) = data.pointer_mut("/spec/template").filter(|t| t.is_object()) {
        as_typed_template(template);
    }
    gojson::sorted(data)
}

/// The fields Go's typed marshal of a `PodTemplateSpec` always writes (k8s.io/api/core/v1
/// types.go: `ObjectMeta.CreationTimestamp` and `Container.Resources` are structs under
/// `omitempty`, which never omits a struct).
fn as_typed_template(template: &mut Value) {
    if !template["metadata"].is_object() {
        template["metadata"] = json!({});
    }
    if template["metadata"].get("creationTimestamp").is_none() {
        template["metadata"]["creationTimestamp"] = Value::Null;
    }
    let Some(spec) = template.get_mut("spec").and_then(Value::as_object_mut) else { return };
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else { continue };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            container.entry("resources").or_insert_with(|| json!({}));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_revision_data_is_the_template_as_go_marshals_it() {
        let ds = json!({"spec": {"template": {
            "metadata": {"labels": {"app": "x"}},
            "spec": {"containers": [{"name": "c", "image": "i", "command": ["sh", "-c", "a && b"]}]},
        }}});
        // What kubectl 1.33's getDaemonSetPatch writes for this DaemonSet.
        assert_eq!(
            gojson::to_string(&template_patch(&ds)),
            r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"x"}},"spec":{"containers":[{"command":["sh","-c","a \u0026\u0026 b"],"image":"i","name":"c","resources":{}}]}}}}"#
        );
    }

    #[test]
    fn a_revision_written_without_the_typed_fields_still_matches_its_template() {
        let ds = json!({"spec": {"template": {"metadata": {"labels": {"app": "x"}}}}});
        let old = json!({"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "x"}}}}});
        assert_eq!(normalized_patch(&old), template_patch(&ds));
    }
}
