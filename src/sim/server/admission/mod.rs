//! Admission before an object is stored: `defaults` (API defaults), then `validation`, `ranges` and `immutable` (422 causes).
//!
//! The registry runs [`apply_defaults`] then [`validate`] inside its write, in upstream's order
//! (`k8s.io/apiserver/pkg/registry/rest/create.go` `BeforeCreate`: defaulting happens at decode,
//! then `PrepareForCreate`, then `Validate`).

use crate::sim::resources::ResourceType;

mod defaults;
pub mod immutable;
mod pod_update;
pub mod ranges;
mod validation;

pub(crate) use defaults::default_template;
pub use defaults::{apply_defaults, normalize_quantities, pull_policy_for};
pub use validation::validate;
pub(crate) use validation::{validate_template_restart_policy, validate_workload};

pub use crate::sim::kinds::Cause;

/// The `Status.message` of a 422 Invalid: `DaemonSet.apps "x" is invalid: <errors>`, with
/// several errors aggregated as `[e1, e2]` (apimachinery/pkg/api/errors `NewInvalid`).
pub fn invalid_message(rt: &ResourceType, name: &str, causes: &[Cause]) -> String {
    let kind = if rt.group.is_empty() { rt.kind.clone() } else { format!("{}.{}", rt.kind, rt.group) };
    match causes {
        [] => format!("{kind} {name:?} is invalid"),
        [only] => format!("{kind} {name:?} is invalid: {only}"),
        many => {
            let parts: Vec<String> = many.iter().map(Cause::to_string).collect();
            format!("{kind} {name:?} is invalid: [{}]", parts.join(", "))
        }
    }
}
