//! Admission: API defaults and validation as upstream applies them before an object is stored.
//!
//! (Skeleton: no defaults or validation yet; filled in by the simulated cluster B work.)

use serde_json::Value;

use crate::sim::resources::ResourceType;

/// One validation failure, as a `Status` cause (`field`, `reason`, `message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, …
    pub reason: String,
    /// The upstream message text.
    pub message: String,
    /// The field path, e.g. `spec.updateStrategy.rollingUpdate.maxUnavailable`.
    pub field: String,
}

/// Sets the API defaults upstream sets on create and update.
pub fn apply_defaults(rt: &ResourceType, object: &mut Value) {
    let _ = (rt, object);
}

/// Validates an object about to be stored (`old` is the stored one on update); an empty list
/// means valid.
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let _ = (rt, object, old);
    Vec::new()
}
