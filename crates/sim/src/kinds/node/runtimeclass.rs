//! RuntimeClasses (node.k8s.io/v1): the RuntimeClass strategy and its row.
//!
//! Pods resolve them through the RuntimeClass admission plugin (`registry/admission.rs`).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    field::required,
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
};

/// node.k8s.io/v1 `runtimeclasses`.
///
/// Looked up by the RuntimeClass admission plugin (`sim::registry::admission`).
pub static KIND: Kind = Kind {
    group: "node.k8s.io",
    version: "v1",
    kind: "RuntimeClass",
    plural: "runtimeclasses",
    scope: Scope::Cluster,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &RuntimeClassStrategy,
};

/// The RuntimeClass strategy.
#[derive(Debug)]
pub struct RuntimeClassStrategy;

impl Strategy for RuntimeClassStrategy {
    /// `ValidateRuntimeClass`: a handler is required.
    fn validate(&self, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        if object["handler"].as_str().is_none_or(str::is_empty) {
            causes.push(required("handler", ""));
        }
        causes
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: runtimeclass_row, columns: &[
    NAME,
    Column("Handler", "string", 0, "Handler is the name of the underlying runtime and configuration."),
    AGE,
] };

/// printers.go `printRuntimeClass`.
fn runtimeclass_row(rc: &Value, now: Ages) -> Vec<Value> {
    vec![rc["metadata"]["name"].clone(), json!(text(&rc["handler"])), age(rc, now)]
}
