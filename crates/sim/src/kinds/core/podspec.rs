//! The PodSpec of pods and of every pod template: its defaults, validation and ranges, and the
//! resource quantities it and other core kinds hold.
//!
//! Upstream v1.33: `pkg/apis/core/v1/defaults.go` (`SetDefaults_PodSpec`, `SetDefaults_Container`
//! and the probe and volume defaults) and `pkg/apis/core/validation/validation.go`
//! (`ValidatePodSpec`: containers, `ValidateResourceRequirements`, `activeDeadlineSeconds` in
//! 1..=MaxInt32, `validateContainerPorts` with ports in 1..=65535 by `validation.IsValidPortNum`,
//! `validateProbe`'s non-negative counters; `ValidateResourceQuantityValue`). Texts:
//! `apimachinery/pkg/util/validation` `InclusiveRangeError` and `apimachinery/pkg/api/validation`
//! `IsNegativeErrorMsg`.

use serde_json::{Map, Value, json};

use crate::{
    k8s::quantity::{Quantity, json_number_text},
    kinds::{
        default_key,
        field::{Cause, IS_NEGATIVE, invalid, not_supported, required},
        object_mut,
    },
};

/// `math.MaxInt32`, the upper bound of `activeDeadlineSeconds`.
const MAX_INT32: i64 = i32::MAX as i64;
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

/// Workload spec fields that are plain (non-pointer) `omitempty` Go fields upstream
/// (k8s.io/api apps/v1 types.go: `MinReadySeconds int32 json:"minReadySeconds,omitempty"`,
/// `Paused bool json:"paused,omitempty"`).
const SPEC_ZERO_OMITTED: &[&str] = &["minReadySeconds", "paused"];
/// The same in a PodSpec (core/v1 types.go `NodeName string`, `HostNetwork bool`, …).
const POD_SPEC_ZERO_OMITTED: &[&str] =
    &["nodeName", "hostNetwork", "hostPID", "hostIPC", "hostname", "subdomain", "priorityClassName"];
/// The same in a Container (`Stdin bool`, `StdinOnce bool`, `TTY bool`, `WorkingDir string`).
const CONTAINER_ZERO_OMITTED: &[&str] = &["stdin", "stdinOnce", "tty", "workingDir"];

fn remove_zero(map: &mut Map<String, Value>, keys: &[&str]) {
    for key in keys {
        let zero = match map.get(*key) {
            Some(Value::Number(n)) => n.as_f64() == Some(0.0),
            Some(Value::Bool(b)) => !b,
            Some(Value::String(text)) => text.is_empty(),
            Some(Value::Null) => true,
            _ => false,
        };
        if zero {
            map.remove(*key);
        }
    }
}

pub(crate) fn drop_pod_spec_zero_values(spec: &mut Map<String, Value>) {
    remove_zero(spec, POD_SPEC_ZERO_OMITTED);
    for list in ["initContainers", "containers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                remove_zero(container, CONTAINER_ZERO_OMITTED);
            }
        }
    }
}

/// A field set to its Go zero value is the same as an absent one upstream: the request is
/// decoded into a Go struct, so `minReadySeconds: 0` is neither stored nor seen by the
/// strategies' `apiequality.Semantic.DeepEqual(new.Spec, old.Spec)` generation check
/// (pkg/registry/apps/daemonset/strategy.go `PrepareForUpdate`). Without this, an explicit
/// default in a manifest would bump `metadata.generation` on every apply. For the kinds with a
/// pod template (the workloads and Jobs): their spec's and their template's.
pub(crate) fn drop_template_zero_values(object: &mut Value) {
    let Some(spec) = object_mut(object, "spec") else { return };
    remove_zero(spec, SPEC_ZERO_OMITTED);
    if let Some(pod_spec) = spec.get_mut("template").and_then(|t| object_mut(t, "spec")) {
        drop_pod_spec_zero_values(pod_spec);
    }
}

/// The pod defaults of a template's pod spec (`spec.template.spec` of `spec`).
pub(crate) fn default_template(spec: &mut Map<String, Value>) {
    let Some(template) = spec.get_mut("template") else { return };
    if let Some(pod_spec) = object_mut(template, "spec") {
        default_pod_spec(pod_spec);
    }
}

/// core/v1/defaults.go `SetDefaults_PodSpec` and the container, probe and volume defaults.
pub(crate) fn default_pod_spec(spec: &mut Map<String, Value>) {
    default_key(spec, "dnsPolicy", json!("ClusterFirst"));
    default_key(spec, "restartPolicy", json!("Always"));
    default_key(spec, "terminationGracePeriodSeconds", json!(30));
    default_key(spec, "securityContext", json!({}));
    default_key(spec, "schedulerName", json!("default-scheduler"));
    default_key(spec, "enableServiceLinks", json!(true));
    for list in ["initContainers", "containers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            for container in containers.iter_mut().filter_map(Value::as_object_mut) {
                default_container(container);
            }
        }
    }
    if let Some(Value::Array(volumes)) = spec.get_mut("volumes") {
        for volume in volumes.iter_mut().filter_map(Value::as_object_mut) {
            for source in ["configMap", "secret"] {
                if let Some(Value::Object(source)) = volume.get_mut(source) {
                    default_key(source, "defaultMode", json!(420));
                }
            }
            if let Some(Value::Object(host_path)) = volume.get_mut("hostPath") {
                default_key(host_path, "type", json!(""));
            }
        }
    }
}

fn default_container(container: &mut Map<String, Value>) {
    // SetDefaults_Container: `:latest` or no tag → Always, else IfNotPresent (a digest counts as a tag).
    let image = container.get("image").and_then(Value::as_str).unwrap_or_default().to_string();
    default_key(container, "imagePullPolicy", json!(pull_policy_for(&image)));
    default_key(container, "terminationMessagePath", json!("/dev/termination-log"));
    default_key(container, "terminationMessagePolicy", json!("File"));
    default_key(container, "resources", json!({}));
    if let Some(Value::Array(ports)) = container.get_mut("ports") {
        for port in ports.iter_mut().filter_map(Value::as_object_mut) {
            default_key(port, "protocol", json!("TCP"));
        }
    }
    if let Some(Value::Array(env)) = container.get_mut("env") {
        for var in env.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(Value::Object(field_ref)) =
                var.get_mut("valueFrom").and_then(|v| v.get_mut("fieldRef"))
            {
                default_key(field_ref, "apiVersion", json!("v1"));
            }
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(Value::Object(probe)) = container.get_mut(probe) {
            default_key(probe, "timeoutSeconds", json!(1));
            default_key(probe, "periodSeconds", json!(10));
            default_key(probe, "successThreshold", json!(1));
            default_key(probe, "failureThreshold", json!(3));
            if let Some(Value::Object(http)) = probe.get_mut("httpGet") {
                default_key(http, "scheme", json!("HTTP"));
            }
        }
    }
}

/// The `imagePullPolicy` default for `image` (core/v1/defaults.go `SetDefaults_Container`,
/// using the reference parser's tag: the part after the last `:` that follows the last `/`).
pub fn pull_policy_for(image: &str) -> &'static str {
    let name = image.split('@').next().unwrap_or_default();
    let last_segment = name.rsplit('/').next().unwrap_or_default();
    let tag = last_segment.split_once(':').map(|(_, tag)| tag);
    if image.contains('@') {
        return "IfNotPresent";
    }
    match tag {
        None | Some("latest") => "Always",
        Some(_) => "IfNotPresent",
    }
}

/// Every quantity in a `map` (requests, limits, hard, …) in the spelling the API server stores:
/// numbers become strings and strings their canonical form (`cpu: "0.5"` is stored as `500m`,
/// so, as upstream, re-applying such a manifest says `configured`). Malformed strings stay as
/// sent for validation to report.
pub(crate) fn normalize_map(map: Option<&mut Value>) {
    if let Some(Value::Object(map)) = map {
        for value in map.values_mut() {
            match value {
                Value::Number(n) => *value = Value::String(json_number_text(n)),
                Value::String(text) => {
                    if let Ok(canonical) = crate::k8s::quantity::canonical(text) {
                        *text = canonical;
                    }
                }
                _ => {}
            }
        }
    }
}

fn normalize_resources(container: &mut Value) {
    if let Some(resources) = container.get_mut("resources") {
        normalize_map(resources.get_mut("requests"));
        normalize_map(resources.get_mut("limits"));
    }
}

pub(crate) fn normalize_pod_spec(spec: Option<&mut Value>) {
    let Some(spec) = spec else { return };
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            containers.iter_mut().for_each(normalize_resources);
        }
    }
    normalize_map(spec.get_mut("overhead"));
}

/// The quantities of a template's pod spec in canonical spelling.
pub(crate) fn normalize_template(object: &mut Value) {
    normalize_pod_spec(object.pointer_mut("/spec/template/spec"));
}

pub(crate) fn validate_template_restart_policy(object: &Value, allowed: &[&str], causes: &mut Vec<Cause>) {
    let Some(policy) = object.pointer("/spec/template/spec/restartPolicy") else { return };
    if !allowed.iter().any(|a| policy.as_str() == Some(*a)) {
        causes.push(not_supported("spec.template.spec.restartPolicy", policy, allowed));
    }
}

pub(crate) fn validate_pod_spec(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    match spec.get("containers").and_then(Value::as_array) {
        Some(containers) if !containers.is_empty() => {
            for (i, container) in containers.iter().enumerate() {
                validate_container(container, &format!("{path}.containers[{i}]"), causes);
            }
        }
        _ => causes.push(required(format!("{path}.containers"), "")),
    }
    if let Some(Value::Array(containers)) = spec.get("initContainers") {
        for (i, container) in containers.iter().enumerate() {
            validate_container(container, &format!("{path}.initContainers[{i}]"), causes);
        }
    }
    super::taint::validate_tolerations(spec, path, causes);
}

fn validate_container(container: &Value, path: &str, causes: &mut Vec<Cause>) {
    if container.get("name").and_then(Value::as_str).is_none_or(str::is_empty) {
        causes.push(required(format!("{path}.name"), ""));
    }
    if container.get("image").and_then(Value::as_str).is_none_or(|i| i.trim().is_empty()) {
        causes.push(required(format!("{path}.image"), ""));
    }
    validate_resources(container.get("resources"), &format!("{path}.resources"), causes);
}

/// `IsExtendedResourceName`-style check: a name outside the `kubernetes.io` namespace (and not a
/// quota `requests.` name) is extended, so integer-only and not overcommittable.
fn is_extended(resource: &str) -> bool {
    let Some((domain, _)) = resource.split_once('/') else { return false };
    !(domain == "kubernetes.io" || domain.ends_with(".kubernetes.io") || resource.starts_with("requests."))
}

fn is_hugepages(resource: &str) -> bool {
    resource.starts_with("hugepages-")
}

fn quantity_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => crate::k8s::quantity::json_number_text(n),
        other => other.to_string(),
    }
}

/// `ValidateResourceRequirements` for the extended-resource rules labs hit.
fn validate_resources(resources: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    let Some(resources) = resources else { return };
    let limits = resources.get("limits").and_then(Value::as_object);
    let requests = resources.get("requests").and_then(Value::as_object);
    if let Some(limits) = limits {
        for (name, quantity) in limits {
            validate_quantity(name, quantity, &format!("{path}.limits[{name}]"), causes);
        }
    }
    let Some(requests) = requests else { return };
    for (name, quantity) in requests {
        validate_quantity(name, quantity, &format!("{path}.requests[{name}]"), causes);
        let overcommit_allowed = !is_extended(name) && !is_hugepages(name);
        let request_text = quantity_text(quantity);
        match limits.and_then(|l| l.get(name)) {
            Some(limit) => {
                let limit_text = quantity_text(limit);
                // validation.go `ValidateResourceRequirements` compares with `Quantity.Cmp`.
                let (request, limit) =
                    (request_text.parse::<Quantity>().ok(), limit_text.parse::<Quantity>().ok());
                if request != limit && !overcommit_allowed {
                    causes.push(invalid(
                        format!("{path}.requests"),
                        &format!("{request_text:?}"),
                        &format!("must be equal to {name} limit of {limit_text}"),
                    ));
                } else if let (Some(r), Some(l)) = (request, limit)
                    && r > l
                {
                    causes.push(invalid(
                        format!("{path}.requests"),
                        &format!("{request_text:?}"),
                        &format!("must be less than or equal to {name} limit of {limit_text}"),
                    ));
                }
            }
            None if !overcommit_allowed => {
                causes.push(required(
                    format!("{path}.limits"),
                    "Limit must be set for non overcommitable resources",
                ));
            }
            None => {}
        }
    }
}

pub(crate) fn validate_quantity(name: &str, quantity: &Value, path: &str, causes: &mut Vec<Cause>) {
    let text = quantity_text(quantity);
    let Ok(quantity) = text.parse::<Quantity>() else {
        causes.push(invalid(
            path,
            &format!("{text:?}"),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ));
        return;
    };
    if quantity < Quantity::ZERO {
        causes.push(invalid(path, &format!("{text:?}"), "must be greater than or equal to 0"));
    }
    // validation.go `validateResourceQuantityValue`: `value.MilliValue()%int64(1000) != 0`.
    if is_extended(name) && quantity.millis_ceil() % 1000 != 0 {
        causes.push(invalid(path, &format!("{text:?}"), "must be an integer"));
    }
}

/// `validation.InclusiveRangeError(lo, hi)`.
fn inclusive_range(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// The range causes of a pod spec at `path` (`spec`, `spec.template.spec`).
pub(crate) fn validate_ranges(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
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

/// The range causes of a template's pod spec (`spec.template.spec`).
pub(crate) fn validate_template_ranges(object: &Value, causes: &mut Vec<Cause>) {
    validate_ranges(&object["spec"]["template"]["spec"], "spec.template.spec", causes);
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
pub(crate) fn resource_quantity(name: &str, quantity: &Value, path: &str, causes: &mut Vec<Cause>) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceType;

    /// The registry's defaulting of `object`, an object of `rt`.
    fn apply_defaults(rt: &ResourceType, object: &mut Value) {
        crate::kinds::apply_defaults(rt.strategy(), object);
    }

    /// The range causes of a pod's spec or of a Job's template.
    fn messages(kind: &str, object: Value) -> Vec<String> {
        let mut causes = Vec::new();
        match kind {
            "Pod" => validate_ranges(&object["spec"], "spec", &mut causes),
            _ => validate_template_ranges(&object, &mut causes),
        }
        causes.iter().map(Cause::to_string).collect()
    }

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(pull_policy_for("busybox"), "Always");
        assert_eq!(pull_policy_for("busybox:latest"), "Always");
        assert_eq!(pull_policy_for("busybox:1.37"), "IfNotPresent");
        assert_eq!(pull_policy_for("localhost:5000/agent"), "Always");
        assert_eq!(pull_policy_for("nvcr.io/nvidia/k8s-device-plugin:v0.17.0"), "IfNotPresent");
        assert_eq!(pull_policy_for("busybox@sha256:abc"), "IfNotPresent");
    }

    #[test]
    fn templates_keep_their_limits_only() {
        let rt = crate::resources::built_in()
            .into_iter()
            .find(|rt| rt.group == "apps" && rt.kind == "Deployment")
            .expect("deployments are built in");
        let mut deployment = json!({"metadata": {"name": "d"}, "spec": {"template": {"spec": {
            "containers": [{"name": "c", "image": "cuda:12", "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}}});
        apply_defaults(&rt, &mut deployment);
        assert_eq!(deployment.pointer("/spec/template/spec/containers/0/resources/requests"), None);
    }

    #[test]
    fn go_zero_values_of_plain_fields_are_dropped_and_pointers_kept() {
        let rt = crate::resources::built_in()
            .into_iter()
            .find(|rt| rt.group == "apps" && rt.kind == "DaemonSet")
            .expect("daemonsets are built in");
        let mut ds = json!({"metadata": {"name": "a"}, "spec": {
            "minReadySeconds": 0, "revisionHistoryLimit": 0,
            "template": {"spec": {"hostNetwork": false, "nodeName": "",
                "containers": [{"name": "c", "image": "busybox:1.37", "tty": false, "stdin": true}]}}}});
        apply_defaults(&rt, &mut ds);
        let spec = &ds["spec"];
        assert_eq!(spec.get("minReadySeconds"), None);
        // A pointer field (`RevisionHistoryLimit *int32`): 0 is a value, not absence.
        assert_eq!(spec["revisionHistoryLimit"], 0);
        assert_eq!(spec["template"]["spec"].get("hostNetwork"), None);
        assert_eq!(spec["template"]["spec"].get("nodeName"), None);
        assert_eq!(spec["template"]["spec"]["containers"][0].get("tty"), None);
        assert_eq!(spec["template"]["spec"]["containers"][0]["stdin"], true);
    }

    #[test]
    fn quantities_are_validated_with_the_shared_parser() {
        let messages = |name: &str, quantity: Value| {
            let mut causes = Vec::new();
            validate_quantity(name, &quantity, "q", &mut causes);
            causes.into_iter().map(|c| c.message).collect::<Vec<_>>()
        };
        for fine in [json!("1"), json!("500m"), json!("0.5"), json!("1Gi"), json!("1e3"), json!(2)] {
            assert_eq!(messages("cpu", fine.clone()), Vec::<String>::new(), "{fine}");
        }
        assert_eq!(messages("nvidia.com/gpu", json!("0.5")), ["Invalid value: \"0.5\": must be an integer"]);
        assert_eq!(
            messages("cpu", json!("-1")),
            ["Invalid value: \"-1\": must be greater than or equal to 0"]
        );
        for bad in ["bogus", "", "999999999999999999999999999999999999999"] {
            assert_eq!(messages("cpu", json!(bad)).len(), 1, "{bad}");
        }
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
}
