//! Custom resources: the strategy of every type a CRD serves (apiextensions-apiserver
//! `pkg/registry/customresource/strategy.go`).

use serde_json::Value;

use crate::sim::kinds::Strategy;

/// What every custom resource shares: a generation that follows everything but `metadata` and
/// `status`, and no quantity normalisation (its schema, not a Go type, says what a field is).
#[derive(Debug)]
pub struct CustomResources;

/// The strategy of custom resources (`kinds::strategy` hands it out for any resource outside
/// the built-in API groups).
pub static CUSTOM_RESOURCES: CustomResources = CustomResources;

impl Strategy for CustomResources {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// `customResourceStrategy.PrepareForUpdate`: a change outside `metadata` and `status` bumps
    /// the generation.
    fn generation_relevant(&self, object: &Value) -> Value {
        let mut rest = object.as_object().cloned().unwrap_or_default();
        rest.remove("metadata");
        rest.remove("status");
        Value::Object(rest)
    }

    fn typed_quantities(&self) -> bool {
        false
    }
}
