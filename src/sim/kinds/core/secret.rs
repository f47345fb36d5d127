//! Secrets (v1 `secrets`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, map_len, text},
    schema_of,
};

/// v1 `secrets`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    scope: Scope::Namespaced,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    schema: schema_of::<k8s_openapi::api::core::v1::Secret>,
    strategy: &SecretStrategy,
};

/// The Secret strategy.
#[derive(Debug)]
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "metadata.namespace", "type"]
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: secret_row, columns: &[
    NAME,
    Column("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
    Column("Data", "string", 0, "Data contains the secret data."),
    AGE,
] };

fn secret_row(secret: &Value, now: Ages) -> Vec<Value> {
    let data = map_len(&secret["data"]) + map_len(&secret["stringData"]);
    vec![secret["metadata"]["name"].clone(), json!(text(&secret["type"])), json!(data), age(secret, now)]
}
