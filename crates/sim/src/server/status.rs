//! API errors as `Status` objects (apimachinery `pkg/api/errors`), with upstream's codes and texts.

use axum::{
    http::{StatusCode, header},
    response::{IntoResponse, Response},
};
use serde_json::{Map, Value, json};

use super::{fieldvalidation, patch};
use crate::{k8s::selector, store};

/// Upstream's 413 body limit for a request (`apiserver/pkg/server/config.go`,
/// `MaxRequestBodyBytes` = 3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// An API error ready to be sent as a `Status`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`, `BadRequest`, …
    pub reason: &'static str,
    /// Human-readable message, upstream's text.
    pub message: String,
    /// `details` (name, group, kind, causes), when upstream sends them.
    pub details: Option<Value>,
}

/// `Result` with an [`ApiError`].
pub type Result<T, E = ApiError> = std::result::Result<T, E>;

/// `details` for a group-resource like `daemonsets.apps`: `{name, group, kind: "daemonsets"}`.
fn resource_details(group_resource: &str, name: &str) -> Value {
    let (kind, group) = group_resource.split_once('.').unwrap_or((group_resource, ""));
    let mut details = Map::new();
    details.insert("name".into(), json!(name));
    if !group.is_empty() {
        details.insert("group".into(), json!(group));
    }
    details.insert("kind".into(), json!(kind));
    Value::Object(details)
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError { code, reason, message: message.into(), details: None }
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(400, "BadRequest", message)
    }

    /// 422 Invalid with `details` (name, kind, causes).
    pub fn invalid(message: impl Into<String>, details: Value) -> ApiError {
        ApiError { details: Some(details), ..ApiError::new(422, "Invalid", message) }
    }

    /// 404 for a path no served resource matches (upstream's text).
    pub fn no_such_resource() -> ApiError {
        // `apierrors.NewNotFound(schema.GroupResource{}, "")`: empty details, written as `{}`
        // (kubectl debug reads `Details.Name` of such a 404 without a nil check).
        ApiError {
            details: Some(json!({})),
            ..ApiError::new(404, "NotFound", "the server could not find the requested resource")
        }
    }

    /// 404 NotFound for an object: `pods "x" not found`.
    pub fn not_found(group_resource: &str, name: &str) -> ApiError {
        ApiError {
            details: Some(resource_details(group_resource, name)),
            ..ApiError::new(404, "NotFound", format!("{group_resource} \"{name}\" not found"))
        }
    }

    /// 405 for a verb the type does not serve.
    pub fn method_not_allowed() -> ApiError {
        ApiError::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
    }

    /// 413 for a body over [`MAX_BODY_BYTES`].
    pub fn too_large() -> ApiError {
        ApiError::entity_too_large(format!("limit is {MAX_BODY_BYTES}"))
    }

    /// 413 RequestEntityTooLarge as apimachinery's `NewRequestEntityTooLargeError` words it.
    pub fn entity_too_large(message: impl std::fmt::Display) -> ApiError {
        ApiError::new(413, "RequestEntityTooLarge", format!("Request entity too large: {message}"))
    }

    /// 415 for a body media type the endpoint does not read.
    pub fn unsupported_media_type(message: impl Into<String>) -> ApiError {
        ApiError::new(415, "UnsupportedMediaType", message)
    }

    /// 504 Timeout as apimachinery's `NewTimeoutError` words it (no retry-after: empty details).
    pub fn timeout(message: impl std::fmt::Display) -> ApiError {
        ApiError { details: Some(json!({})), ..ApiError::new(504, "Timeout", format!("Timeout: {message}")) }
    }

    /// 500 for the server's own failures (never a client's mistake).
    pub fn internal(message: impl Into<String>) -> ApiError {
        ApiError::new(500, "InternalError", format!("Internal error occurred: {}", message.into()))
    }

    /// 500 with an empty reason: what upstream's `ErrorToAPIStatus` makes of an error that is
    /// not a `StatusError` (its text as the message, no `Internal error occurred:` prefix).
    pub fn unknown(message: impl Into<String>) -> ApiError {
        ApiError { code: 500, reason: "", message: message.into(), details: None }
    }

    /// 422 for a patched object that does not decode into its type: upstream decodes the
    /// patched JSON into the typed object and answers `field.Invalid(field.NewPath("patch"),
    /// <patched JSON>, err)` with an empty kind and name (`endpoints/handlers/patch.go`
    /// `jsonPatcher.applyPatchToCurrentObject`, `applyPatchToObject` for strategic merge).
    pub fn patch_undecodable(patched: &str, error: impl std::fmt::Display) -> ApiError {
        let detail = format!("Invalid value: {patched:?}: {error}");
        ApiError::invalid(
            format!(" \"\" is invalid: patch: {detail}"),
            json!({"name": "", "kind": "", "causes": [
                {"reason": "FieldValueInvalid", "message": detail, "field": "patch"}]}),
        )
    }

    /// The `Status` object.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
        });
        if self.reason.is_empty()
            && let Some(map) = status.as_object_mut()
        {
            map.remove("reason"); // `StatusReasonUnknown` is "" and `omitempty`
        }
        if let Some(details) = &self.details {
            status["details"] = details.clone();
        }
        status["code"] = json!(self.code);
        status
    }
}

/// 201 with a `Status` of `Success`: what a subresource create answers that returns no object
/// (`pods/eviction`, `pods/binding`).
pub fn created() -> Response {
    let status =
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201});
    (StatusCode::CREATED, [(header::CONTENT_TYPE, "application/json")], status.to_string()).into_response()
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let code = StatusCode::from_u16(self.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self.to_status()).unwrap_or_default();
        (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
    }
}

impl From<store::Error> for ApiError {
    fn from(error: store::Error) -> ApiError {
        let message = error.to_string();
        match error {
            store::Error::NotFound { resource, name } => ApiError::not_found(&resource, &name),
            store::Error::AlreadyExists { resource, name } => ApiError {
                details: Some(resource_details(&resource, &name)),
                ..ApiError::new(409, "AlreadyExists", message)
            },
            store::Error::Conflict { resource, name, .. } => ApiError {
                details: Some(resource_details(&resource, &name)),
                ..ApiError::new(409, "Conflict", message)
            },
            store::Error::NamespaceTerminating { resource, name, .. }
            | store::Error::Forbidden { resource, name, .. } => ApiError {
                details: Some(resource_details(&resource, &name)),
                ..ApiError::new(403, "Forbidden", message)
            },
            store::Error::Invalid { kind, group, name, causes, .. } => {
                let causes: Vec<Value> = causes
                    .iter()
                    .map(|c| json!({"reason": c.reason, "message": c.message, "field": c.field}))
                    .collect();
                let mut details = Map::new();
                details.insert("name".into(), json!(name));
                if !group.is_empty() {
                    details.insert("group".into(), json!(group));
                }
                details.insert("kind".into(), json!(kind));
                details.insert("causes".into(), json!(causes));
                ApiError { details: Some(Value::Object(details)), ..ApiError::new(422, "Invalid", message) }
            }
            store::Error::BadRequest(_) => ApiError::bad_request(message),
            store::Error::Expired { .. } => ApiError::new(410, "Expired", message),
            store::Error::TooLargeResourceVersion { .. } => ApiError {
                details: Some(
                    json!({"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}], "retryAfterSeconds": 1}),
                ),
                ..ApiError::new(504, "Timeout", message)
            },
            store::Error::Database(_) | store::Error::Corrupt(_) => ApiError::internal(message),
            store::Error::RequestTooLarge => ApiError::unknown(message),
        }
    }
}

impl From<patch::Error> for ApiError {
    fn from(error: patch::Error) -> ApiError {
        let message = error.to_string();
        match error {
            patch::Error::BadRequest(_) => ApiError::bad_request(message),
            patch::Error::UnsupportedMediaType => ApiError::unsupported_media_type(message),
            patch::Error::Invalid(_) => ApiError::new(422, "Invalid", message),
            patch::Error::TooManyOperations(_) => ApiError::entity_too_large(message),
            patch::Error::Conflict { .. } => ApiError::new(409, "Conflict", message),
            patch::Error::TooDeep { patched, .. } => ApiError::patch_undecodable(&patched, message),
        }
    }
}

impl From<fieldvalidation::Error> for ApiError {
    fn from(error: fieldvalidation::Error) -> ApiError {
        match error {
            // Not a `StatusError` upstream: `ErrorToAPIStatus` makes it a 500 with an empty
            // reason (kubernetes/kubernetes#122480).
            fieldvalidation::Error::TypedPatch(message) => ApiError::unknown(message),
            other => ApiError::bad_request(other.to_string()),
        }
    }
}

impl From<selector::Error> for ApiError {
    fn from(error: selector::Error) -> ApiError {
        ApiError::bad_request(error.to_string())
    }
}
