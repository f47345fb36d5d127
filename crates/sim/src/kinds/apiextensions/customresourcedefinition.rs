//! CustomResourceDefinitions (apiextensions.k8s.io/v1): the row and the strategy.
//!
//! Establishing them and serving their types is `server/crd.rs`; their custom resources' strategy
//! is `customresource.rs`.

use crate::kinds::{ALL_VERBS, Kind, Scope, Strategy};

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
    strategy: &CustomResourceDefinitionStrategy,
};

/// The CustomResourceDefinition strategy.
#[derive(Debug)]
pub struct CustomResourceDefinitionStrategy;

impl Strategy for CustomResourceDefinitionStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }
}
