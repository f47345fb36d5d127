//! Services (v1 `services`): the row of the table and the registry strategy.

use crate::sim::kinds::{Kind, Scope, Strategy, schema_of};

/// v1 `services`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Service",
    plural: "services",
    scope: Scope::Namespaced,
    short_names: &["svc"],
    categories: &["all"],
    verbs: &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    subresources: &["status"],
    schema: schema_of::<k8s_openapi::api::core::v1::Service>,
    strategy: &ServiceStrategy,
};

/// The Service strategy.
#[derive(Debug)]
pub struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "metadata.namespace", "spec.clusterIP", "spec.type"]
    }
}
