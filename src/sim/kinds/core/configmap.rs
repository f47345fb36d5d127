//! ConfigMaps (v1 `configmaps`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, map_len},
    schema_of,
};

/// v1 `configmaps`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    scope: Scope::Namespaced,
    short_names: &["cm"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    schema: schema_of::<k8s_openapi::api::core::v1::ConfigMap>,
    strategy: &ConfigMapStrategy,
};

/// The ConfigMap strategy.
#[derive(Debug)]
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: configmap_row, columns: &[
    NAME,
    Column("Data", "string", 0, "Data contains the configuration data."),
    AGE,
] };

fn configmap_row(cm: &Value, now: Ages) -> Vec<Value> {
    let data = map_len(&cm["data"]) + map_len(&cm["binaryData"]);
    vec![cm["metadata"]["name"].clone(), json!(data), age(cm, now)]
}
