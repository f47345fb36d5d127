//! Nodes (v1 `nodes`): the node strategy (pkg/registry/core/node/strategy.go) and its row.
//!
//! Validation as `ValidateNodeResources` (non-negative quantities, whole for integer resources)
//! and `ValidateNode` (`validation.IsValidCIDR` on each `spec.podCIDRs` entry; the v1 `podCIDR`
//! converts to the first one).

use serde_json::{Value, json};
use std::net::IpAddr;

use crate::{
    k8s::selector::field_text,
    kinds::{
        ALL_VERBS, Cause, Kind, Scope, Strategy,
        core::podspec::{normalize_map, resource_quantity},
        field::invalid,
        printer::{AGE, Ages, Column, NAME, Printer, age, text},
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
    strategy: &NodeStrategy,
};

/// The Node strategy.
#[derive(Debug)]
pub struct NodeStrategy;

impl Strategy for NodeStrategy {
    /// Nodes register with their status (`nodeStrategy.PrepareForCreate` keeps it).
    fn reset_status_for_create(&self, _object: &mut Value, _has_status: bool) {}

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_map(object.pointer_mut("/status/capacity"));
        normalize_map(object.pointer_mut("/status/allocatable"));
    }

    fn validate(&self, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_node(object, &mut causes);
        causes
    }

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

/// `validation.IsValidCIDR`'s message.
const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// `ValidateNodeResources` (`status.capacity.<name>`, `status.allocatable.<name>`: `Child`, not
/// `Key`) and the `podCIDRs` entries.
fn validate_node(object: &Value, causes: &mut Vec<Cause>) {
    for list in ["capacity", "allocatable"] {
        for (name, quantity) in object["status"][list].as_object().into_iter().flatten() {
            resource_quantity(name, quantity, &format!("status.{list}.{name}"), causes);
        }
    }
    let spec = &object["spec"];
    super::taint::validate_taints(&spec["taints"], causes);
    let cidrs: Vec<&str> = match spec["podCIDRs"].as_array() {
        Some(list) if !list.is_empty() => list.iter().filter_map(Value::as_str).collect(),
        _ => spec["podCIDR"].as_str().filter(|c| !c.is_empty()).into_iter().collect(),
    };
    for (i, cidr) in cidrs.iter().enumerate() {
        if !is_cidr(cidr) {
            causes.push(invalid(format!("spec.podCIDRs[{i}]"), &format!("{cidr:?}"), INVALID_CIDR));
        }
    }
}

/// `netutils.ParseCIDRSloppy` accepts it: an address, `/`, decimal digits for a prefix length
/// its family allows (leading zeros allowed there, as in `net.ParseCIDR`'s `dtoi`). Sloppy
/// parsing also takes IPv4 octets with leading zeros, which `IpAddr` refuses; no lab writes one.
fn is_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else { return false };
    let Ok(address) = address.parse::<IpAddr>() else { return false };
    if prefix.is_empty() || !prefix.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let bits = if address.is_ipv4() { 32 } else { 128 };
    prefix.parse::<u32>().is_ok_and(|prefix| prefix <= bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::BUILT_IN;

    /// The causes of `object` as a new object of `kind`.
    fn messages(kind: &str, object: Value) -> Vec<String> {
        let kind = BUILT_IN.iter().find(|k| k.kind == kind).expect("a built-in kind");
        kind.strategy.validate(&object, None).iter().map(Cause::to_string).collect()
    }

    #[test]
    fn quota_and_node_quantities_are_non_negative_and_whole_where_counted() {
        let quota = json!({"spec": {"hard": {"cpu": "-1", "pods": "1.5", "requests.nvidia.com/gpu": "2", "memory": "1Gi"}}});
        assert_eq!(
            messages("ResourceQuota", quota),
            [
                "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.hard[pods]: Invalid value: \"1.5\": must be an integer",
            ]
        );
        let node = json!({"spec": {"podCIDR": "5"},
            "status": {"capacity": {"nvidia.com/gpu": "0.5", "cpu": "8"}, "allocatable": {"memory": "-1Gi"}}});
        assert_eq!(
            messages("Node", node),
            [
                "status.capacity.nvidia.com/gpu: Invalid value: \"0.5\": must be an integer",
                "status.allocatable.memory: Invalid value: \"-1Gi\": must be greater than or equal to 0",
                "spec.podCIDRs[0]: Invalid value: \"5\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ]
        );
        let fine = json!({"spec": {"podCIDRs": ["10.244.1.0/24", "fd00::/64"]}, "status": {"capacity": {"pods": "110"}}});
        assert!(messages("Node", fine).is_empty());
        assert!(is_cidr("10.0.0.0/08"));
        for bad in ["10.0.0.0", "10.0.0.0/33", "10.0.0.0/+8", "10.0.0.0/", "x/8", "::/129"] {
            assert!(!is_cidr(bad), "{bad}");
        }
    }
}
