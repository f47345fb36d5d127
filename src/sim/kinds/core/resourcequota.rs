//! ResourceQuotas (v1 `resourcequotas`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
    schema_of,
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
    schema: schema_of::<k8s_openapi::api::core::v1::ResourceQuota>,
    strategy: &ResourceQuotaStrategy,
};

/// The ResourceQuota strategy.
#[derive(Debug)]
pub struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
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
