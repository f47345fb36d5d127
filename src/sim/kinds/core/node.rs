//! Nodes (v1 `nodes`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::{
    k8s::selector::field_text,
    sim::kinds::{
        ALL_VERBS, Kind, Scope, Strategy,
        printer::{AGE, Ages, Column, NAME, Printer, age, text},
        schema_of,
    },
};

/// v1 `nodes`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Node",
    plural: "nodes",
    scope: Scope::Cluster,
    short_names: &["no"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &["status"],
    schema: schema_of::<k8s_openapi::api::core::v1::Node>,
    strategy: &NodeStrategy,
};

/// The Node strategy.
#[derive(Debug)]
pub struct NodeStrategy;

impl Strategy for NodeStrategy {
    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "spec.unschedulable"]
    }

    fn selectable_value(&self, node: &Value, name: &str) -> String {
        match field_text(node, name) {
            // `spec.unschedulable` defaults to false when absent (`NodeToSelectableFields`).
            absent if absent.is_empty() && name == "spec.unschedulable" => "false".to_string(),
            value => value,
        }
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: node_row, columns: &[
    NAME,
    Column("Status", "string", 0, "The status of the node"),
    Column("Roles", "string", 0, "The roles of the node"),
    AGE,
    Column("Version", "string", 0, "Kubelet Version reported by the node."),
    Column("Internal-IP", "string", 1, "List of addresses reachable to the node."),
    Column("External-IP", "string", 1, "List of addresses reachable to the node."),
    Column("OS-Image", "string", 1, "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."),
    Column("Kernel-Version", "string", 1, "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."),
    Column("Container-Runtime", "string", 1, "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."),
] };

/// printers.go `printNode`: Ready/NotReady/Unknown (+SchedulingDisabled), roles from
/// `node-role.kubernetes.io/<role>` and `kubernetes.io/role` labels.
fn node_row(node: &Value, now: Ages) -> Vec<Value> {
    let status = &node["status"];
    let mut state =
        match status["conditions"].as_array().and_then(|cs| cs.iter().rev().find(|c| c["type"] == "Ready")) {
            Some(ready) if ready["status"] == "True" => "Ready".to_string(),
            Some(_) => "NotReady".to_string(),
            None => "Unknown".to_string(),
        };
    if node["spec"]["unschedulable"] == true {
        state.push_str(",SchedulingDisabled");
    }
    let mut roles = std::collections::BTreeSet::new();
    if let Some(labels) = node["metadata"]["labels"].as_object() {
        for (key, value) in labels {
            if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
                if !role.is_empty() {
                    roles.insert(role.to_string());
                }
            } else if key == "kubernetes.io/role" && !text(value).is_empty() {
                roles.insert(text(value).to_string());
            }
        }
    }
    let roles =
        if roles.is_empty() { "<none>".to_string() } else { roles.into_iter().collect::<Vec<_>>().join(",") };
    let address = |kind: &str| {
        status["addresses"]
            .as_array()
            .and_then(|a| a.iter().find(|a| a["type"] == kind))
            .map(|a| text(&a["address"]).to_string())
            .unwrap_or_else(|| "<none>".to_string())
    };
    let info = &status["nodeInfo"];
    let unknown = |v: &Value| if text(v).is_empty() { "<unknown>".to_string() } else { text(v).to_string() };
    vec![
        node["metadata"]["name"].clone(),
        json!(state),
        json!(roles),
        age(node, now),
        json!(text(&info["kubeletVersion"])),
        json!(address("InternalIP")),
        json!(address("ExternalIP")),
        json!(unknown(&info["osImage"])),
        json!(unknown(&info["kernelVersion"])),
        json!(unknown(&info["containerRuntimeVersion"])),
    ]
}
