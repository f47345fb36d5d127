//! ResourceQuotas (v1): the ResourceQuota strategy and its row.
//!
//! Upstream: pkg/registry/core/resourcequota/strategy.go, `ValidateResourceQuota`. The quota
//! admission plugin is the registry's (`registry/quota.rs`), the status controller
//! `controllers/quota.rs`.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    core::podspec::{normalize_map, resource_quantity},
    field::{IMMUTABLE, go_value, invalid},
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
};

/// v1 `resourcequotas`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "ResourceQuota",
    plural: "resourcequotas",
    scope: Scope::Namespaced,
    short_names: &["quota"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &["status"],
    strategy: &ResourceQuotaStrategy,
};

/// The ResourceQuota strategy.
#[derive(Debug)]
pub struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_map(object.pointer_mut("/spec/hard"));
        normalize_map(object.pointer_mut("/status/hard"));
        normalize_map(object.pointer_mut("/status/used"));
    }

    /// `ValidateResourceQuotaSpec` (each hard quantity) and `ValidateResourceQuotaUpdate` (the
    /// scopes are fixed).
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        // `fldPath.Key(name)`: `spec.hard[cpu]`.
        for (name, quantity) in object["spec"]["hard"].as_object().into_iter().flatten() {
            resource_quantity(name, quantity, &format!("spec.hard[{name}]"), &mut causes);
        }
        if let Some(old) = old {
            validate_scopes_update(object, old, &mut causes);
        }
        causes
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: resourcequota_row, columns: &[
    NAME,
    AGE,
    Column("Request", "string", 0, "Request represents a minimum amount of cpu/memory that a container may consume."),
    Column("Limit", "string", 0, "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
] };

/// printers.go `printResourceQuota`: `resource: used/hard` from status, `limits.*` in LIMIT.
fn resourcequota_row(quota: &Value, now: Ages) -> Vec<Value> {
    let status = &quota["status"];
    let mut resources: Vec<&String> =
        status["hard"].as_object().map(|m| m.keys().collect()).unwrap_or_default();
    resources.sort();
    let mut requests = Vec::new();
    let mut limits = Vec::new();
    for resource in resources {
        let used = status["used"][resource.as_str()].as_str().unwrap_or("0");
        let hard = text(&status["hard"][resource.as_str()]);
        let entry = format!("{resource}: {used}/{hard}");
        let pieces: Vec<&str> = resource.split('.').collect();
        if pieces.len() > 1 && pieces[0] == "limits" { limits.push(entry) } else { requests.push(entry) }
    }
    vec![
        quota["metadata"]["name"].clone(),
        age(quota, now),
        json!(requests.join(", ")),
        json!(limits.join(", ")),
    ]
}

/// `ValidateResourceQuotaUpdate`: the set of scopes may not change.
fn validate_scopes_update(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let scopes = |quota: &Value| -> std::collections::BTreeSet<String> {
        quota["spec"]["scopes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect()
    };
    if scopes(object) == scopes(old) {
        return;
    }
    // `%#v` of a `[]core.ResourceQuotaScope`.
    let shown = match object["spec"]["scopes"].as_array() {
        Some(list) => {
            let items: Vec<String> = list.iter().map(go_value).collect();
            format!("[]core.ResourceQuotaScope{{{}}}", items.join(", "))
        }
        None => "[]core.ResourceQuotaScope(nil)".to_string(),
    };
    causes.push(invalid("spec.scopes", &shown, IMMUTABLE));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The causes of updating `old` to `object`, two ResourceQuotas.
    fn messages(_kind: &str, object: &Value, old: &Value) -> Vec<String> {
        ResourceQuotaStrategy.validate(object, Some(old)).iter().map(Cause::to_string).collect()
    }

    #[test]
    fn quota_scopes_are_fixed() {
        let old = json!({"spec": {"scopes": ["BestEffort"]}});
        assert!(messages("ResourceQuota", &json!({"spec": {"scopes": ["BestEffort"]}}), &old).is_empty());
        assert_eq!(
            messages("ResourceQuota", &json!({"spec": {}}), &old),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope(nil): field is immutable"]
        );
        assert_eq!(
            messages("ResourceQuota", &json!({"spec": {"scopes": ["NotBestEffort"]}}), &old),
            ["spec.scopes: Invalid value: []core.ResourceQuotaScope{\"NotBestEffort\"}: field is immutable"]
        );
    }
}
