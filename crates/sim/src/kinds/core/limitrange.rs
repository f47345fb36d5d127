//! LimitRanges (v1): the row; stored with their quantities canonical.
//!
//! No admission plugin enforces them.

use crate::kinds::{ALL_VERBS, Kind, Scope, Strategy, core::podspec::normalize_map};
use serde_json::Value;

/// v1 `limitranges`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "LimitRange",
    plural: "limitranges",
    scope: Scope::Namespaced,
    short_names: &["limits"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &LimitRangeStrategy,
};

/// The LimitRange strategy.
#[derive(Debug)]
pub struct LimitRangeStrategy;

impl Strategy for LimitRangeStrategy {
    fn canonicalize_quantities(&self, object: &mut Value) {
        if let Some(Value::Array(limits)) = object.pointer_mut("/spec/limits") {
            for limit in limits {
                for key in ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"] {
                    normalize_map(limit.get_mut(key));
                }
            }
        }
    }
}
