//! Namespaces (v1 `namespaces`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
    schema_of,
};

/// v1 `namespaces` (no `deletecollection` upstream).
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    scope: Scope::Cluster,
    short_names: &["ns"],
    categories: &[],
    verbs: &["create", "delete", "get", "list", "patch", "update", "watch"],
    subresources: &["status", "finalize"],
    schema: schema_of::<k8s_openapi::api::core::v1::Namespace>,
    strategy: &NamespaceStrategy,
};

/// The Namespace strategy.
#[derive(Debug)]
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "status.phase"]
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: namespace_row, columns: &[
    NAME,
    Column("Status", "string", 0, "The status of the namespace"),
    AGE,
] };

fn namespace_row(ns: &Value, now: Ages) -> Vec<Value> {
    vec![ns["metadata"]["name"].clone(), json!(text(&ns["status"]["phase"])), age(ns, now)]
}
