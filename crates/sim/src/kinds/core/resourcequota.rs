//! ResourceQuotas (v1): the ResourceQuota strategy and its row.
//!
//! Upstream: pkg/registry/core/resourcequota/strategy.go, `ValidateResourceQuota`. The quota
//! admission plugin is the registry's (`registry/quota.rs`), the status controller
//! `controllers/quota.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    core::podspec::{normalize_map, resource_quantity},
    field::{IMMUTABLE, go_string_slice, invalid},
    objectmeta::qualified_name_errors,
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
    /// Also counted under its legacy quota name (`pkg/quota/v1/evaluator/core/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::ObjectCount { legacy_name: true }
    }

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_map(object.pointer_mut("/spec/hard"));
        normalize_map(object.pointer_mut("/status/hard"));
        normalize_map(object.pointer_mut("/status/used"));
    }

    /// `ValidateResourceQuotaSpec` (each hard resource's name and quantity, the scopes) and
    /// `ValidateResourceQuotaUpdate` (the scopes are fixed).
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        // `fldPath.Key(name)`: `spec.hard[cpu]`.
        for (name, quantity) in object["spec"]["hard"].as_object().into_iter().flatten() {
            let path = format!("spec.hard[{name}]");
            validate_quota_resource_name(name, &path, &mut causes);
            resource_quantity(name, quantity, &path, &mut causes);
        }
        validate_scopes(&object["spec"], &mut causes);
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
    causes.push(invalid("spec.scopes", &go_scopes(&object["spec"]), IMMUTABLE));
}

/// `%#v` of the spec's `[]core.ResourceQuotaScope`.
fn go_scopes(spec: &Value) -> String {
    go_string_slice("core.ResourceQuotaScope", spec["scopes"].as_array())
}

/// `helper.standardQuotaResources`: the names quota tracks without a prefix.
#[rustfmt::skip]
const STANDARD_QUOTA_RESOURCES: &[&str] = &[
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.storage",
    "requests.ephemeral-storage", "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods",
    "services", "replicationcontrollers", "resourcequotas", "secrets", "persistentvolumeclaims",
    "configmaps", "services.nodeports", "services.loadbalancers",
];

/// `helper.IsStandardQuotaResourceName`: a standard quota resource or a huge-page one.
fn is_standard_quota_resource(name: &str) -> bool {
    STANDARD_QUOTA_RESOURCES.contains(&name)
        || ["hugepages-", "requests.hugepages-"].iter().any(|prefix| name.starts_with(prefix))
}

/// `helper.IsStandardResourceName`: `standardResources` is the quota set and `storage`.
fn is_standard_resource(name: &str) -> bool {
    name == "storage" || is_standard_quota_resource(name)
}

/// `ValidateResourceQuotaResourceName`: `validateResourceName` (a qualified name, then a
/// standard resource unless it has a prefix; it stops at the first failing step) and, without
/// a prefix, a standard resource for quota.
fn validate_quota_resource_name(name: &str, path: &str, causes: &mut Vec<Cause>) {
    let shown = format!("{name:?}");
    let unprefixed = !name.contains('/');
    let errors = qualified_name_errors(name);
    if !errors.is_empty() {
        causes.extend(errors.iter().map(|error| invalid(path, &shown, error)));
    } else if unprefixed && !is_standard_resource(name) {
        causes.push(invalid(path, &shown, "must be a standard resource type or fully qualified"));
    }
    if unprefixed && !is_standard_quota_resource(name) {
        causes.push(invalid(path, &shown, "must be a standard resource for quota"));
    }
}

/// `validateResourceQuotaScopes`: each scope a standard one, applicable to each standard hard
/// resource (`IsResourceQuotaScopeValidForResource`), and no conflicting pair.
fn validate_scopes(spec: &Value, causes: &mut Vec<Cause>) {
    let scopes: Vec<&str> =
        spec["scopes"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    if scopes.is_empty() {
        return;
    }
    let mut hard: Vec<&String> = spec["hard"].as_object().map(|m| m.keys().collect()).unwrap_or_default();
    hard.sort();
    let shown = go_scopes(spec);
    for scope in &scopes {
        if !STANDARD_SCOPES.contains(scope) {
            causes.push(invalid("spec.scopes", &shown, "unsupported scope"));
        }
        for resource in &hard {
            if is_standard_quota_resource(resource) && !scope_applies(scope, resource) {
                causes.push(invalid("spec.scopes", &shown, "unsupported scope applied to resource"));
            }
        }
    }
    for (a, b) in [("BestEffort", "NotBestEffort"), ("Terminating", "NotTerminating")] {
        if scopes.contains(&a) && scopes.contains(&b) {
            causes.push(invalid("spec.scopes", &shown, "conflicting scopes"));
        }
    }
}

/// `helper.IsStandardResourceQuotaScope`.
const STANDARD_SCOPES: &[&str] = &[
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

/// `helper.IsResourceQuotaScopeValidForResource`: pod scopes apply to `pods` and the pod compute
/// resources, BestEffort to `pods` alone, VolumeAttributesClass to claims and their storage.
fn scope_applies(scope: &str, resource: &str) -> bool {
    const POD_COMPUTE: &[&str] =
        &["cpu", "memory", "limits.cpu", "limits.memory", "requests.cpu", "requests.memory"];
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || POD_COMPUTE.contains(&resource),
        "BestEffort" => resource == "pods",
        "VolumeAttributesClass" => ["persistentvolumeclaims", "requests.storage"].contains(&resource),
        _ => true,
    }
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
