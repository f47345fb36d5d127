//! PodDisruptionBudgets (policy/v1 `poddisruptionbudgets`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, int},
    schema_of,
};

/// policy/v1 `poddisruptionbudgets`.
pub static KIND: Kind = Kind {
    group: "policy",
    version: "v1",
    kind: "PodDisruptionBudget",
    plural: "poddisruptionbudgets",
    scope: Scope::Namespaced,
    short_names: &["pdb"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &["status"],
    schema: schema_of::<k8s_openapi::api::policy::v1::PodDisruptionBudget>,
    strategy: &PodDisruptionBudgetStrategy,
};

/// The PodDisruptionBudget strategy.
#[derive(Debug)]
pub struct PodDisruptionBudgetStrategy;

impl Strategy for PodDisruptionBudgetStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: poddisruptionbudget_row, columns: &[
    NAME,
    Column("Min Available", "string", 0, "The minimum number of pods that must be available."),
    Column("Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable."),
    Column("Allowed Disruptions", "integer", 0, "Calculated number of pods that may be disrupted at this time."),
    AGE,
] };

/// printers.go `printPodDisruptionBudget`: `N/A` for the bound that is not set.
fn poddisruptionbudget_row(pdb: &Value, now: Ages) -> Vec<Value> {
    let bound = |value: &Value| match value {
        Value::Null => "N/A".to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    vec![
        pdb["metadata"]["name"].clone(),
        json!(bound(&pdb["spec"]["minAvailable"])),
        json!(bound(&pdb["spec"]["maxUnavailable"])),
        json!(int(&pdb["status"]["disruptionsAllowed"])),
        age(pdb, now),
    ]
}
