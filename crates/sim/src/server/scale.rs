//! The `scale` subresource of Deployments, ReplicaSets and StatefulSets: an `autoscaling/v1` Scale.
//!
//! Upstream: `pkg/registry/apps/deployment/storage/storage.go` (`ScaleREST`, `scaleFromDeployment`,
//! `scaleUpdatedObjectInfo`), the same for replicasets and statefulsets. A read builds the Scale
//! from the object; a write (PUT or patch of the Scale) changes only `spec.replicas` of the
//! object, under the Scale's `resourceVersion` as precondition when it carries one.

use axum::{
    body::Body,
    http::{HeaderMap, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Value, json};

use super::{
    AppState,
    patch::{self, PatchKind},
    request::{self, Query},
    status::{ApiError, Result},
};
use crate::{resources::ResourceType, store::Subresource};

/// The Scale of `object` (`scaleFromDeployment`): metadata name, namespace, uid,
/// resourceVersion and creationTimestamp; `spec.replicas`; `status.replicas` and the selector
/// as a label-selector string (`metav1.LabelSelectorAsSelector(..).String()`).
pub fn scale_of(object: &Value) -> Value {
    let metadata = &object["metadata"];
    let mut scale_meta = serde_json::Map::new();
    for key in ["name", "namespace", "uid", "resourceVersion", "creationTimestamp"] {
        if let Some(value) = metadata.get(key).filter(|v| !v.is_null()) {
            scale_meta.insert(key.to_string(), value.clone());
        }
    }
    // autoscaling/v1 ScaleSpec.replicas is `omitempty`; ScaleStatus.replicas is not, its
    // selector is.
    let mut spec = json!({});
    let replicas = object["spec"]["replicas"].as_i64().unwrap_or(1);
    if replicas != 0 {
        spec["replicas"] = json!(replicas);
    }
    let mut status = json!({"replicas": object["status"]["replicas"].as_i64().unwrap_or(0)});
    let selector = crate::k8s::selector::selector_string(&object["spec"]["selector"]);
    if !selector.is_empty() {
        status["selector"] = json!(selector);
    }
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": scale_meta, "spec": spec, "status": status})
}

/// Serves GET, PUT and PATCH on `{plural}/{name}/scale`.
#[allow(clippy::too_many_arguments)]
pub async fn serve(
    state: &AppState,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    method: &Method,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    match *method {
        Method::GET => {
            let object = state.store.get_value(rt, namespace, name).map_err(|error| match error {
                crate::store::Error::NotFound { .. } => not_found(rt, name),
                other => other.into(),
            })?;
            Ok(scale_response(&scale_of(&object)))
        }
        Method::PUT => {
            let bytes = request::read_body(headers, body).await?;
            let scale = request::decode_object(headers, &bytes, "Scale")?;
            request::check_type(&scale, "autoscaling/v1", "Scale")?;
            if let Some(given) = scale["metadata"]["name"].as_str().filter(|n| !n.is_empty())
                && given != name
            {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({given}) does not match the name on the URL ({name})"
                )));
            }
            write(state, rt, namespace, name, query, headers, |_| Ok(scale))
        }
        Method::PATCH => {
            let kind = PatchKind::from_content_type(&request::content_type(headers))?;
            let bytes = request::read_body(headers, body).await?;
            write(state, rt, namespace, name, query, headers, |current| match kind {
                // The Scale has no lists, so a strategic merge needs no patch metadata.
                PatchKind::StrategicMerge => {
                    let patch: Value = crate::gojson::from_slice(&bytes)
                        .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
                    Ok(patch::strategic_merge(current, &patch, None)?)
                }
                // Server-side apply of a Scale would need its own field ownership; not served.
                PatchKind::Apply => Err(ApiError::unsupported_media_type(
                    "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json",
                )),
                _ => Ok(patch::apply_patch(rt, kind, current, &bytes)?),
            })
        }
        _ => Err(ApiError::method_not_allowed()),
    }
}

/// `ScaleREST`'s 404 names the subresource: `errors.NewNotFound(apps.Resource("deployments/scale"),
/// name)` → `deployments/scale.apps "x" not found`.
fn not_found(rt: &ResourceType, name: &str) -> ApiError {
    ApiError::not_found(&rt.scale_group_resource(), name)
}

/// Replaces `spec.replicas` of the object with the `spec.replicas` of the Scale that `change`
/// derives from the current one, in one store transaction.
fn write(
    state: &AppState,
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    query: &Query,
    headers: &HeaderMap,
    change: impl FnOnce(&Value) -> Result<Value>,
) -> Result<Response> {
    let dry_run = query.dry_run()?;
    let manager = match query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(manager) => manager.to_string(),
        None => patch::manager_from_user_agent(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok())),
    };
    let now = state.clock.now();
    let (updated, _) =
        state.store.modify(rt, namespace, name, Subresource::Main, dry_run, |current| -> Result<Value> {
            let current = current.ok_or_else(|| not_found(rt, name))?;
            let scale = change(&scale_of(&current))?;
            let replicas = validate(name, &scale)?;
            let mut next = current.clone();
            next["spec"]["replicas"] = json!(replicas);
            // `scaleUpdatedObjectInfo`: the Scale's resourceVersion is the object's precondition.
            match scale["metadata"]["resourceVersion"].as_str().filter(|rv| !rv.is_empty()) {
                Some(rv) => next["metadata"]["resourceVersion"] = json!(rv),
                None => {
                    if let Some(metadata) = next["metadata"].as_object_mut() {
                        metadata.remove("resourceVersion");
                    }
                }
            }
            patch::record_update(rt, &manager, Some("scale"), Some(&current), &mut next, now)?;
            Ok(next)
        })?;
    Ok(scale_response(&scale_of(&updated)))
}

/// `spec.replicas` of a Scale: `ValidateScale` (pkg/apis/autoscaling/validation) requires a
/// non-negative count; an absent one is 0, as the omitempty field decodes.
fn validate(name: &str, scale: &Value) -> Result<i64> {
    let replicas = match &scale["spec"]["replicas"] {
        Value::Null => 0,
        value => value.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {value} into Go struct field ScaleSpec.spec.replicas of type int32"
            ))
        })?,
    };
    if replicas < 0 {
        let message = format!("{replicas}: must be greater than or equal to 0");
        return Err(ApiError::invalid(
            format!("Scale.autoscaling \"{name}\" is invalid: spec.replicas: Invalid value: {message}"),
            json!({"name": name, "group": "autoscaling", "kind": "Scale", "causes": [
                {"reason": "FieldValueInvalid", "message": format!("Invalid value: {message}"), "field": "spec.replicas"}]}),
        ));
    }
    Ok(replicas)
}

fn scale_response(scale: &Value) -> Response {
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], scale.to_string()).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_carries_the_replicas_and_the_selector_string() {
        let deployment = json!({
            "metadata": {"name": "d1", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                         "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"x": "y"}},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "d1"},
                     "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}]}},
            "status": {"replicas": 2}
        });
        assert_eq!(
            scale_of(&deployment),
            json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
                   "metadata": {"name": "d1", "namespace": "default", "uid": "u1", "resourceVersion": "7",
                                "creationTimestamp": "2026-01-01T00:00:00Z"},
                   "spec": {"replicas": 3}, "status": {"replicas": 2, "selector": "app=d1,tier in (a,b)"}})
        );
    }

    #[test]
    fn zero_replicas_are_omitted_from_the_spec_and_negative_ones_are_invalid() {
        let scaled_down = scale_of(&json!({"metadata": {"name": "d"}, "spec": {"replicas": 0}}));
        assert_eq!(scaled_down["spec"], json!({}));
        assert_eq!(scaled_down["status"], json!({"replicas": 0}));
        assert_eq!(validate("d", &scaled_down).unwrap(), 0);
        let error = validate("d", &json!({"spec": {"replicas": -1}})).unwrap_err();
        assert_eq!(error.code, 422);
        assert_eq!(
            error.message,
            "Scale.autoscaling \"d\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
        );
    }
}
