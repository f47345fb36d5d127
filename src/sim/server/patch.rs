//! PATCH bodies: strategic merge, JSON merge (RFC 7386), JSON patch (RFC 6902), server-side apply.
//!
//! (Skeleton: JSON merge and JSON patch only; strategic merge and apply are filled in by the
//! simulated cluster B work.)

use serde_json::Value;

use crate::sim::resources::ResourceType;

/// Errors from applying a patch.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body is not valid for its content type (400 BadRequest).
    #[error("{0}")]
    BadRequest(String),
    /// The content type is not a patch type the simulator serves (415).
    #[error(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json"
    )]
    UnsupportedMediaType,
    /// The patched object is not valid (422).
    #[error("{0}")]
    Invalid(String),
    /// Server-side apply found fields owned by another manager (409).
    #[error("Apply failed with {count} conflict(s): {details}")]
    Conflict {
        /// Number of conflicting fields.
        count: usize,
        /// `conflict with "kubectl" using apps/v1: .spec.replicas`-style lines.
        details: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The four patch kinds, from the request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchKind {
    /// The kind a `Content-Type` header names (parameters like `; charset=utf-8` ignored).
    pub fn from_content_type(content_type: &str) -> Result<PatchKind> {
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        match essence {
            "application/strategic-merge-patch+json" => Ok(PatchKind::StrategicMerge),
            "application/merge-patch+json" => Ok(PatchKind::Merge),
            "application/json-patch+json" => Ok(PatchKind::Json),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchKind::Apply),
            _ => Err(Error::UnsupportedMediaType),
        }
    }
}

/// Options of a server-side apply request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    /// `fieldManager`.
    pub field_manager: String,
    /// `force=true` takes over conflicting fields.
    pub force: bool,
}

/// Applies a strategic-merge, JSON merge or JSON patch `body` to the `current` object of type
/// `rt` and returns the patched object. Server-side apply goes through [`server_side_apply`].
pub fn apply_patch(rt: &ResourceType, kind: PatchKind, current: &Value, body: &[u8]) -> Result<Value> {
    let _ = rt;
    match kind {
        PatchKind::Merge => {
            let patch: Value = serde_json::from_slice(body).map_err(|e| Error::BadRequest(e.to_string()))?;
            let mut patched = current.clone();
            json_patch::merge(&mut patched, &patch);
            Ok(patched)
        }
        PatchKind::Json => {
            let patch: json_patch::Patch =
                serde_json::from_slice(body).map_err(|e| Error::BadRequest(e.to_string()))?;
            let mut patched = current.clone();
            json_patch::patch(&mut patched, &patch).map_err(|e| Error::Invalid(e.to_string()))?;
            Ok(patched)
        }
        PatchKind::StrategicMerge | PatchKind::Apply => Err(Error::UnsupportedMediaType),
    }
}

/// Server-side apply of `applied` (the parsed request body) onto `current` (`None`: the object
/// does not exist yet and is created), tracking field ownership in `metadata.managedFields`.
pub fn server_side_apply(
    rt: &ResourceType,
    current: Option<&Value>,
    applied: &Value,
    options: &ApplyOptions,
) -> Result<Value> {
    let _ = (rt, current, applied, options);
    Err(Error::UnsupportedMediaType)
}
