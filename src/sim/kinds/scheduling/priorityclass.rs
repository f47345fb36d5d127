//! PriorityClasses (scheduling.k8s.io/v1 `priorityclasses`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, int, text},
    schema_of,
};

/// The classes kube-apiserver creates at start (`SystemPriorityClasses`,
/// pkg/apis/scheduling/types.go and helpers.go): name, value, description.
pub const SYSTEM_PRIORITY_CLASSES: &[(&str, i64, &str)] = &[
    (
        "system-node-critical",
        2_000_001_000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2_000_000_000,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

/// scheduling.k8s.io/v1 `priorityclasses`.
///
/// Resolved into pods' `spec.priority` by the Priority admission plugin (`sim::registry::admission`).
pub static KIND: Kind = Kind {
    group: "scheduling.k8s.io",
    version: "v1",
    kind: "PriorityClass",
    plural: "priorityclasses",
    scope: Scope::Cluster,
    short_names: &["pc"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    schema: schema_of::<k8s_openapi::api::scheduling::v1::PriorityClass>,
    strategy: &PriorityClassStrategy,
};

/// The PriorityClass strategy.
#[derive(Debug)]
pub struct PriorityClassStrategy;

impl Strategy for PriorityClassStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: priorityclass_row, columns: &[
    NAME,
    Column("Value", "integer", 0, "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."),
    Column("Global-Default", "boolean", 0, "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."),
    AGE,
    Column("PreemptionPolicy", "string", 0, "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
] };

/// printers.go `printPriorityClass`.
fn priorityclass_row(pc: &Value, now: Ages) -> Vec<Value> {
    vec![
        pc["metadata"]["name"].clone(),
        json!(int(&pc["value"])),
        json!(pc["globalDefault"].as_bool().unwrap_or(false)),
        age(pc, now),
        json!(text(&pc["preemptionPolicy"])),
    ]
}
