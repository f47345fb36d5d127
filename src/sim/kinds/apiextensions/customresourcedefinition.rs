//! CustomResourceDefinitions (apiextensions.k8s.io/v1 `customresourcedefinitions`): the row of the table and the registry strategy.

use crate::sim::kinds::{ALL_VERBS, Kind, Plain, Scope, schema_of};

/// apiextensions.k8s.io/v1 `customresourcedefinitions`.
pub static KIND: Kind = Kind {
    group: "apiextensions.k8s.io",
    version: "v1",
    kind: "CustomResourceDefinition",
    plural: "customresourcedefinitions",
    scope: Scope::Cluster,
    short_names: &["crd", "crds"],
    categories: &["api-extensions"],
    verbs: ALL_VERBS,
    subresources: &["status"],
    schema: schema_of::<
        k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    >,
    strategy: &Plain,
};
