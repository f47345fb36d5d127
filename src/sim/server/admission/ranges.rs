//! Range checks of Pod specs (pods and every pod template), ResourceQuotas and Nodes, 422 causes.
//!
//! Upstream v1.33, `pkg/apis/core/validation/validation.go`: `ValidatePodSpec`
//! (`activeDeadlineSeconds` in 1..=MaxInt32), `validateContainerPorts` (`containerPort` required,
//! ports in 1..=65535 by `validation.IsValidPortNum`), `validateProbe` (`ValidateNonnegativeField`
//! on its counters), `ValidateResourceQuotaSpec` and `ValidateNodeResources`
//! (`ValidateResourceQuantityValue`: non-negative, whole for integer resources) and `ValidateNode`
//! (`validation.IsValidCIDR` on each `spec.podCIDRs` entry; the v1 `podCIDR` converts to the
//! first one). Texts: `apimachinery/pkg/util/validation` `InclusiveRangeError` and
//! `apimachinery/pkg/api/validation` `IsNegativeErrorMsg`.

use std::net::IpAddr;

use serde_json::Value;

use super::{
    Cause,
    validation::{invalid, required, validate_quantity},
};
use crate::{k8s::quantity::Quantity, sim::resources::ResourceType};

/// `math.MaxInt32`, the upper bound of `activeDeadlineSeconds`.
const MAX_INT32: i64 = i32::MAX as i64;
/// `validation.IsNegativeErrorMsg`.
const IS_NEGATIVE: &str = "must be greater than or equal to 0";
/// `validation.IsValidCIDR`'s message.
const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
/// `integerResources` of `pkg/apis/core/helper` (`IsIntegerResourceName`, besides extended
/// resources, which `validate_quantity` covers).
const INTEGER_RESOURCES: &[&str] = &[
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "services.nodeports",
    "services.loadbalancers",
];

/// `validation.InclusiveRangeError(lo, hi)`.
fn inclusive_range(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// The range causes of `object` (an empty list when it is in range).
pub fn validate(rt: &ResourceType, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => pod_spec(&object["spec"], "spec", &mut causes),
        ("apps", "Deployment" | "DaemonSet" | "ReplicaSet" | "StatefulSet") | ("batch", "Job") => {
            pod_spec(&object["spec"]["template"]["spec"], "spec.template.spec", &mut causes);
        }
        ("", "ResourceQuota") => {
            // `fldPath.Key(name)`: `spec.hard[cpu]`.
            for (name, quantity) in object["spec"]["hard"].as_object().into_iter().flatten() {
                resource_quantity(name, quantity, &format!("spec.hard[{name}]"), &mut causes);
            }
        }
        ("", "Node") => node(object, &mut causes),
        _ => {}
    }
    causes
}

fn pod_spec(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    if let Some(seconds) = spec["activeDeadlineSeconds"].as_i64()
        && !(1..=MAX_INT32).contains(&seconds)
    {
        causes.push(invalid(
            format!("{path}.activeDeadlineSeconds"),
            &seconds.to_string(),
            &inclusive_range(1, MAX_INT32),
        ));
    }
    for list in ["initContainers", "containers"] {
        for (i, container) in spec[list].as_array().into_iter().flatten().enumerate() {
            let path = format!("{path}.{list}[{i}]");
            ports(&container["ports"], &format!("{path}.ports"), causes);
            for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
                probe_counters(&container[probe], &format!("{path}.{probe}"), causes);
            }
        }
    }
}

/// `validateContainerPorts`: a `containerPort` is required and a port number, a `hostPort`
/// when set a port number.
fn ports(ports: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (i, port) in ports.as_array().into_iter().flatten().enumerate() {
        let path = format!("{path}[{i}]");
        match port["containerPort"].as_i64() {
            None | Some(0) => causes.push(required(format!("{path}.containerPort"), "")),
            Some(number) => port_number(number, &format!("{path}.containerPort"), causes),
        }
        if let Some(number) = port["hostPort"].as_i64().filter(|n| *n != 0) {
            port_number(number, &format!("{path}.hostPort"), causes);
        }
    }
}

/// `validation.IsValidPortNum`.
fn port_number(number: i64, path: &str, causes: &mut Vec<Cause>) {
    if !(1..=65535).contains(&number) {
        causes.push(invalid(path, &number.to_string(), &inclusive_range(1, 65535)));
    }
}

/// `validateProbe`'s `ValidateNonnegativeField` calls.
fn probe_counters(probe: &Value, path: &str, causes: &mut Vec<Cause>) {
    for field in
        ["initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold"]
    {
        if let Some(value) = probe[field].as_i64()
            && value < 0
        {
            causes.push(invalid(format!("{path}.{field}"), &value.to_string(), IS_NEGATIVE));
        }
    }
}

/// `ValidateResourceQuantityValue`: a parseable, non-negative quantity, whole for integer
/// resources (extended resources are checked by `validate_quantity` itself).
fn resource_quantity(name: &str, quantity: &Value, path: &str, causes: &mut Vec<Cause>) {
    let before = causes.len();
    validate_quantity(name, quantity, path, causes);
    if causes.len() > before || !INTEGER_RESOURCES.contains(&name) {
        return;
    }
    let text = match quantity {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    if text.parse::<Quantity>().is_ok_and(|q| !q.is_integer()) {
        causes.push(invalid(path, &format!("{text:?}"), "must be an integer"));
    }
}

/// `ValidateNodeResources` (`status.capacity.<name>`, `status.allocatable.<name>`: `Child`, not
/// `Key`) and the `podCIDRs` entries.
fn node(object: &Value, causes: &mut Vec<Cause>) {
    for list in ["capacity", "allocatable"] {
        for (name, quantity) in object["status"][list].as_object().into_iter().flatten() {
            resource_quantity(name, quantity, &format!("status.{list}.{name}"), causes);
        }
    }
    let spec = &object["spec"];
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
    use serde_json::json;

    use super::*;
    use crate::sim::resources;

    fn messages(kind: &str, object: Value) -> Vec<String> {
        let types = resources::built_in();
        let rt = types.iter().find(|rt| rt.kind == kind).expect("a built-in kind");
        validate(rt, &object).iter().map(Cause::to_string).collect()
    }

    #[test]
    fn pod_ranges_are_upstreams() {
        let pod = json!({"spec": {"activeDeadlineSeconds": 0, "containers": [{"name": "a", "image": "i",
            "ports": [{"containerPort": 70000, "hostPort": -1}, {"protocol": "TCP"}, {"containerPort": 80}],
            "livenessProbe": {"periodSeconds": -1, "failureThreshold": 3}}]}});
        assert_eq!(
            messages("Pod", pod),
            [
                "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive",
                "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[0].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[1].containerPort: Required value",
                "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
        let job = json!({"spec": {"template": {"spec": {"activeDeadlineSeconds": 3_000_000_000_i64}}}});
        assert_eq!(
            messages("Job", job),
            [
                "spec.template.spec.activeDeadlineSeconds: Invalid value: 3000000000: must be between 1 and 2147483647, inclusive"
            ]
        );
        let fine = json!({"spec": {"activeDeadlineSeconds": 60, "containers": [{"ports": [{"containerPort": 80, "hostPort": 8080}]}]}});
        assert!(messages("Pod", fine).is_empty());
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
