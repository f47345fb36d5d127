//! ResourceQuota scopes: which pods a quota's `spec.scopes` and `spec.scopeSelector` take in, as
//! kube-apiserver's quota evaluator decides (pkg/quota/v1/evaluator/core/pods.go), for the
//! simulator's quota admission and for grading, which names a scope that exempts a team's pods.

use serde_json::{Value, json};

/// `getScopeSelectorsFromQuota`: `spec.scopes` as `Exists`, then `spec.scopeSelector`.
pub fn scope_selectors(quota: &Value) -> Vec<Value> {
    let mut selectors: Vec<Value> = quota["spec"]["scopes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|scope| json!({"scopeName": scope, "operator": "Exists"}))
        .collect();
    if let Some(expressions) = quota["spec"]["scopeSelector"]["matchExpressions"].as_array() {
        selectors.extend(expressions.iter().cloned());
    }
    selectors
}

/// pods.go `podMatchesScopeFunc`.
pub fn pod_matches_scope(selector: &Value, pod: &Value) -> bool {
    let spec = &pod["spec"];
    let terminating = spec["activeDeadlineSeconds"].as_i64().is_some_and(|seconds| seconds >= 0);
    let best_effort = pod["status"]["qosClass"].as_str() == Some("BestEffort");
    match selector["scopeName"].as_str().unwrap_or_default() {
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "PriorityClass" => {
            let class = spec["priorityClassName"].as_str().unwrap_or_default();
            let values: Vec<&str> =
                selector["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            // `ScopedResourceSelectorRequirementsAsSelector` over `{PriorityClass: <class>}`
            // (an empty map when the pod names none).
            match selector["operator"].as_str().unwrap_or_default() {
                "Exists" => !class.is_empty(),
                "DoesNotExist" => class.is_empty(),
                "In" => !class.is_empty() && values.contains(&class),
                "NotIn" => class.is_empty() || !values.contains(&class),
                _ => false,
            }
        }
        "CrossNamespacePodAffinity" => uses_cross_namespace_affinity(spec),
        _ => false,
    }
}

/// pods.go `usesCrossNamespacePodAffinity`.
fn uses_cross_namespace_affinity(spec: &Value) -> bool {
    let cross = |term: &Value| {
        term["namespaces"].as_array().is_some_and(|n| !n.is_empty()) || !term["namespaceSelector"].is_null()
    };
    ["podAffinity", "podAntiAffinity"].iter().any(|kind| {
        let affinity = &spec["affinity"][kind];
        affinity["requiredDuringSchedulingIgnoredDuringExecution"].as_array().into_iter().flatten().any(cross)
            || affinity["preferredDuringSchedulingIgnoredDuringExecution"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|weighted| cross(&weighted["podAffinityTerm"]))
    })
}
