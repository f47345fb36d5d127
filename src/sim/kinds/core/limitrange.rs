//! LimitRanges (v1 `limitranges`): the row of the table and the registry strategy.

use crate::sim::kinds::{ALL_VERBS, Kind, Plain, Scope, schema_of};

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
    schema: schema_of::<k8s_openapi::api::core::v1::LimitRange>,
    strategy: &Plain,
};
