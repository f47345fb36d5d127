//! PriorityClasses (scheduling.k8s.io/v1): the strategy, the row and the system classes.
//!
//! Upstream: pkg/registry/scheduling/priorityclass/strategy.go, `ValidatePriorityClass`. Pods
//! resolve them through the Priority admission plugin (`registry/admission.rs`).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, int, text},
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
    strategy: &PriorityClassStrategy,
};

/// The PriorityClass strategy.
#[derive(Debug)]
pub struct PriorityClassStrategy;

impl Strategy for PriorityClassStrategy {
    /// scheduling/v1 `SetDefaults_PriorityClass`.
    fn defaults(&self, object: &mut Value) {
        if object["preemptionPolicy"].is_null() {
            object["preemptionPolicy"] = json!("PreemptLowerPriority");
        }
    }

    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_priority_class(object, old, &mut causes);
        causes
    }

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

/// `ValidatePriorityClass` / `ValidatePriorityClassUpdate` (pkg/apis/scheduling/validation):
/// user classes stay at or below 1000000000 and outside the `system-` prefix; value and
/// preemptionPolicy are immutable.
fn validate_priority_class(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let value = object["value"].as_i64().unwrap_or(0);
    // `IsKnownSystemPriorityClass` (pkg/apis/scheduling/helpers.go) and its error texts.
    let known = match SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _, _)| *n == name) {
        Some((_, v, _)) if *v != value => Err(format!("value of {name} PriorityClass must be {v}")),
        Some(_) if object["globalDefault"] == true => {
            Err(format!("globalDefault of {name} PriorityClass must be false"))
        }
        Some(_) => Ok(()),
        None => Err(format!("{name} is not a known system priority class")),
    };
    let system = known.is_ok();
    if let (true, Err(error)) = (name.starts_with("system-"), &known) {
        causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: format!(
                "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: {error}"
            ),
            field: "metadata.name".into(),
        });
    } else if !system && value > 1_000_000_000 {
        causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: maximum allowed value of a user defined priority is 1000000000".into(),
            field: "value".into(),
        });
    }
    if let Some(old) = old {
        for field in ["value", "preemptionPolicy"] {
            if object[field] != old[field] {
                causes.push(Cause {
                    reason: "FieldValueForbidden".into(),
                    message: "Forbidden: may not be changed in an update.".into(),
                    field: field.into(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn user_priority_classes_stay_below_the_system_range() {
        let texts = |object: Value| -> Vec<String> {
            PriorityClassStrategy.validate(&object, None).iter().map(Cause::to_string).collect()
        };
        assert_eq!(
            texts(json!({"metadata": {"name": "system-mine"}, "value": 10})),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
            ]
        );
        assert_eq!(
            texts(json!({"metadata": {"name": "huge"}, "value": 2_000_000_000})),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        assert!(
            texts(json!({"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000})).is_empty()
        );
    }
}
