//! PodDisruptionBudgets (policy/v1): the PDB strategy and its row.
//!
//! Upstream: pkg/registry/policy/poddisruptionbudget/strategy.go,
//! `ValidatePodDisruptionBudgetSpec`. The disruption controller is `controllers/disruption.rs`,
//! eviction `server/eviction.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    field::invalid,
    printer::{AGE, Ages, Column, NAME, Printer, age, int},
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
    strategy: &PodDisruptionBudgetStrategy,
};

/// The PodDisruptionBudget strategy.
#[derive(Debug)]
pub struct PodDisruptionBudgetStrategy;

impl Strategy for PodDisruptionBudgetStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// policy/v1: the create strategy resets the status; Go writes its four counters.
    fn defaults(&self, object: &mut Value) {
        if !object["status"].is_object() {
            object["status"] = json!({});
        }
        for key in ["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"] {
            if object["status"][key].is_null() {
                object["status"][key] = json!(0);
            }
        }
    }

    fn validate(&self, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_disruption_budget(&object["spec"], &mut causes);
        causes
    }

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

/// `ValidatePodDisruptionBudgetSpec` (pkg/apis/policy/validation/validation.go): at most one of
/// the two bounds, each a non-negative integer or a percentage of at most 100%, and a supported
/// eviction policy.
fn validate_disruption_budget(spec: &Value, causes: &mut Vec<Cause>) {
    if !spec["minAvailable"].is_null() && !spec["maxUnavailable"].is_null() {
        // Upstream prints the internal spec with `%#v`, its pointer fields as addresses that
        // differ on every request; the simulator names the type and elides the dump.
        causes.push(invalid(
            "spec",
            "policy.PodDisruptionBudgetSpec{…}",
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for field in ["minAvailable", "maxUnavailable"] {
        let path = format!("spec.{field}");
        match &spec[field] {
            Value::Number(number) if number.as_i64().is_some_and(|n| n < 0) => {
                causes.push(invalid(&path, &number.to_string(), "must be greater than or equal to 0"));
            }
            Value::String(text) => match text.strip_suffix('%').map(str::parse::<i64>) {
                Some(Ok(percent)) if percent > 100 => {
                    causes.push(invalid(&path, &format!("{text:?}"), "must not be greater than 100%"));
                }
                Some(Ok(percent)) if percent < 0 => {
                    causes.push(invalid(&path, &format!("{text:?}"), "must be greater than or equal to 0"));
                }
                Some(Ok(_)) => {}
                _ => causes.push(invalid(
                    &path,
                    &format!("{text:?}"),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )),
            },
            _ => {}
        }
    }
    if let Some(policy) = spec["unhealthyPodEvictionPolicy"].as_str()
        && !["AlwaysAllow", "IfHealthyBudget"].contains(&policy)
    {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {policy:?}: supported values: \"AlwaysAllow\", \"IfHealthyBudget\""
            ),
            field: "spec.unhealthyPodEvictionPolicy".into(),
        });
    }
}
