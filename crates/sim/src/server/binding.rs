//! The `binding` subresource of pods: assigns a pending pod to a node, as a scheduler posts it.
//!
//! Upstream (v1.33) `pkg/registry/core/pod/storage/storage.go` (`BindingREST.Create`,
//! `assignPod`, `setPodNodeAndMetadata`): the Binding's name must be the pod's; its target is
//! checked by `ValidatePodBinding`, whose aggregate error is not a `StatusError` and so reaches
//! the client as a 500 with an empty reason (`ErrorToAPIStatus`); the Binding's uid and
//! resourceVersion, when set, are preconditions on the pod; a pod being deleted, already
//! assigned or gated is a 409 Conflict on `pods/binding`. On success the pod gets `nodeName`, the
//! Binding's annotations and `PodScheduled=True` in one write, and the answer is a 201 `Status`
//! of `Success`.

use axum::{body::Body, http::HeaderMap, response::Response};
use serde_json::Value;

use super::{
    AppState,
    request::{self, Query},
    status::{ApiError, Result},
};
use crate::store;

/// Serves `POST …/pods/{name}/binding`.
pub async fn serve(
    state: &AppState,
    namespace: &str,
    name: &str,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let binding = request::named_body(headers, body, "v1", "Binding", name).await?;
    let node = validate(&binding)?;
    let text = |field: &str| binding["metadata"][field].as_str().filter(|v| !v.is_empty()).map(String::from);
    let request = store::Binding {
        node,
        uid: text("uid"),
        resource_version: text("resourceVersion"),
        annotations: binding["metadata"]["annotations"]
            .as_object()
            .map(|annotations| {
                annotations
                    .iter()
                    .filter(|(_, v)| v.is_string())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default(),
        dry_run: query.dry_run()?,
    };
    state.store.bind(&state.served_v1("", "pods")?, namespace, name, &request)?;
    Ok(super::status::created())
}

/// `ValidatePodBinding`: the target node's name, or the aggregate of what is wrong with it
/// (one error alone, several as `[a, b]`: apimachinery's `aggregate.Error()`).
fn validate(binding: &Value) -> Result<String> {
    let target = &binding["target"];
    let mut errors = Vec::new();
    let kind = target["kind"].as_str().unwrap_or_default();
    if !kind.is_empty() && kind != "Node" {
        errors.push(format!(
            "target.kind: Unsupported value: \"{kind}\": supported values: \"Node\", \"<empty>\""
        ));
    }
    let node = target["name"].as_str().unwrap_or_default();
    if node.is_empty() {
        errors.push("target.name: Required value".to_string());
    }
    match errors.as_slice() {
        [] => Ok(node.to_string()),
        [one] => Err(ApiError::unknown(one.clone())),
        several => Err(ApiError::unknown(format!("[{}]", several.join(", ")))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn target_errors_are_aggregated_as_upstream_prints_them() {
        assert_eq!(validate(&json!({"target": {"name": "gpu-1"}})).unwrap(), "gpu-1");
        assert_eq!(validate(&json!({"target": {"kind": "Node", "name": "gpu-1"}})).unwrap(), "gpu-1");
        let one = validate(&json!({"target": {}})).unwrap_err();
        assert_eq!((one.code, one.reason, one.message.as_str()), (500, "", "target.name: Required value"));
        let two = validate(&json!({"target": {"kind": "Pod"}})).unwrap_err();
        assert_eq!(
            two.message,
            "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]"
        );
    }
}
