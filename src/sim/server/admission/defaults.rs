//! API defaults as upstream applies them before validation (`SetDefaults_*`, admission plugins).
//!
//! Defaults follow `pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go` and
//! `pkg/apis/batch/v1/defaults.go` (v1.33), plus what the default admission plugins add to pods
//! (Priority: `priority: 0`/`preemptionPolicy`; ServiceAccount: `serviceAccountName`;
//! DefaultTolerationSeconds: the `not-ready`/`unreachable` tolerations).

use serde_json::{Map, Value, json};

use crate::{k8s::quantity::json_number_text, sim::resources::ResourceType};

fn object_mut<'a>(parent: &'a mut Value, key: &str) -> Option<&'a mut Map<String, Value>> {
    let map = parent.as_object_mut()?;
    if !map.get(key).is_some_and(Value::is_object) {
        map.insert(key.to_string(), json!({}));
    }
    map.get_mut(key)?.as_object_mut()
}

fn default_key(map: &mut Map<String, Value>, key: &str, value: Value) {
    if map.get(key).is_none_or(Value::is_null) {
        map.insert(key.to_string(), value);
    }
}

/// Sets the API defaults upstream sets on create and update.
pub fn apply_defaults(rt: &ResourceType, object: &mut Value) {
    if !object.is_object() {
        return;
    }
    drop_zero_values(rt, object);
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => {
            if let Some(spec) = object_mut(object, "spec") {
                default_pod_spec(spec);
                default_requests_from_limits(spec);
                default_pod_admission(spec);
            }
            let qos = crate::k8s::resources::qos_class(&object["spec"]);
            if let Some(status) = object_mut(object, "status") {
                default_key(status, "phase", json!("Pending"));
                default_key(status, "qosClass", json!(qos));
            }
        }
        ("apps", "DaemonSet") => {
            if let Some(spec) = object_mut(object, "spec") {
                // apps/v1/defaults.go SetDefaults_DaemonSet
                let strategy = spec.entry("updateStrategy").or_insert_with(|| json!({}));
                if let Some(strategy) = strategy.as_object_mut() {
                    default_key(strategy, "type", json!("RollingUpdate"));
                    if strategy.get("type") == Some(&json!("RollingUpdate")) {
                        let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
                        if let Some(rolling) = rolling.as_object_mut() {
                            default_key(rolling, "maxUnavailable", json!(1));
                            default_key(rolling, "maxSurge", json!(0));
                        }
                    }
                }
                default_key(spec, "revisionHistoryLimit", json!(10));
                default_template(spec);
            }
        }
        ("apps", "Deployment") => {
            if let Some(spec) = object_mut(object, "spec") {
                // apps/v1/defaults.go SetDefaults_Deployment
                default_key(spec, "replicas", json!(1));
                let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
                if let Some(strategy) = strategy.as_object_mut() {
                    default_key(strategy, "type", json!("RollingUpdate"));
                    if strategy.get("type") == Some(&json!("RollingUpdate")) {
                        let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
                        if let Some(rolling) = rolling.as_object_mut() {
                            default_key(rolling, "maxUnavailable", json!("25%"));
                            default_key(rolling, "maxSurge", json!("25%"));
                        }
                    }
                }
                default_key(spec, "revisionHistoryLimit", json!(10));
                default_key(spec, "progressDeadlineSeconds", json!(600));
                default_template(spec);
            }
        }
        ("apps", "ReplicaSet") => {
            if let Some(spec) = object_mut(object, "spec") {
                default_key(spec, "replicas", json!(1));
                default_template(spec);
            }
        }
        ("batch", "Job") => {
            if let Some(spec) = object_mut(object, "spec") {
                // batch/v1/defaults.go SetDefaults_Job
                if spec.get("completions").is_none_or(Value::is_null)
                    && spec.get("parallelism").is_none_or(Value::is_null)
                {
                    spec.insert("completions".into(), json!(1));
                    spec.insert("parallelism".into(), json!(1));
                }
                default_key(spec, "parallelism", json!(1));
                if spec.get("backoffLimitPerIndex").is_some_and(|v| !v.is_null()) {
                    default_key(spec, "backoffLimit", json!(i32::MAX));
                } else {
                    default_key(spec, "backoffLimit", json!(6));
                }
                default_key(spec, "completionMode", json!("NonIndexed"));
                default_key(spec, "suspend", json!(false));
                let replacement = if spec.get("podFailurePolicy").is_some_and(|v| !v.is_null()) {
                    "Failed"
                } else {
                    "TerminatingOrFailed"
                };
                default_key(spec, "podReplacementPolicy", json!(replacement));
                default_template(spec);
            }
        }
        ("", "Service") => {
            if let Some(spec) = object_mut(object, "spec") {
                // core/v1/defaults.go SetDefaults_Service
                default_key(spec, "type", json!("ClusterIP"));
                default_key(spec, "sessionAffinity", json!("None"));
                if let Some(Value::Array(ports)) = spec.get_mut("ports") {
                    for port in ports.iter_mut().filter_map(Value::as_object_mut) {
                        default_key(port, "protocol", json!("TCP"));
                        if let Some(number) = port.get("port").cloned() {
                            default_key(port, "targetPort", number);
                        }
                    }
                }
                if spec.get("type") != Some(&json!("ExternalName")) {
                    default_key(spec, "internalTrafficPolicy", json!("Cluster"));
                    default_key(spec, "ipFamilyPolicy", json!("SingleStack"));
                    default_key(spec, "ipFamilies", json!(["IPv4"]));
                }
            }
        }
        ("", "Namespace") => {
            // namespace strategy: the name label and the `kubernetes` finalizer; phase Active.
            let name = object.pointer("/metadata/name").cloned();
            if let (Some(name), Some(metadata)) = (name, object_mut(object, "metadata")) {
                let labels = metadata.entry("labels").or_insert_with(|| json!({}));
                if let Some(labels) = labels.as_object_mut() {
                    labels.insert("kubernetes.io/metadata.name".into(), name);
                }
            }
            if let Some(spec) = object_mut(object, "spec") {
                default_key(spec, "finalizers", json!(["kubernetes"]));
            }
            if let Some(status) = object_mut(object, "status") {
                default_key(status, "phase", json!("Active"));
            }
        }
        ("", "Secret") => {
            if let Some(map) = object.as_object_mut() {
                default_key(map, "type", json!("Opaque"));
            }
        }
        _ => {}
    }
    normalize_quantities(rt, object);
}

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

fn drop_pod_spec_zero_values(spec: &mut Map<String, Value>) {
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
/// default in a manifest would bump `metadata.generation` on every apply.
fn drop_zero_values(rt: &ResourceType, object: &mut Value) {
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => {
            if let Some(spec) = object_mut(object, "spec") {
                drop_pod_spec_zero_values(spec);
            }
        }
        ("apps", "DaemonSet" | "Deployment" | "ReplicaSet" | "StatefulSet") | ("batch", "Job") => {
            let Some(spec) = object_mut(object, "spec") else { return };
            remove_zero(spec, SPEC_ZERO_OMITTED);
            if let Some(pod_spec) = spec.get_mut("template").and_then(|t| object_mut(t, "spec")) {
                drop_pod_spec_zero_values(pod_spec);
            }
        }
        _ => {}
    }
}

pub(crate) fn default_template(spec: &mut Map<String, Value>) {
    let Some(template) = spec.get_mut("template") else { return };
    if let Some(pod_spec) = object_mut(template, "spec") {
        default_pod_spec(pod_spec);
    }
}

/// core/v1/defaults.go `SetDefaults_PodSpec` and the container, probe and volume defaults.
fn default_pod_spec(spec: &mut Map<String, Value>) {
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

/// `SetDefaults_Pod` (kubernetes/kubernetes pkg/apis/core/v1/defaults.go:164-193 at 023f88a): for
/// every container and init container with limits, each limited resource without a request is
/// requested at its limit — every resource name, extended ones such as `nvidia.com/gpu` included.
/// Pods only: upstream keeps this out of `SetDefaults_PodSpec` so that templates (Deployment,
/// DaemonSet, …) are stored as written and only the pods made from them carry the requests.
fn default_requests_from_limits(spec: &mut Map<String, Value>) {
    for list in ["initContainers", "containers"] {
        let Some(Value::Array(containers)) = spec.get_mut(list) else { continue };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let Some(Value::Object(resources)) = container.get_mut("resources") else { continue };
            let Some(Value::Object(limits)) = resources.get("limits").cloned() else { continue };
            let requests = resources.entry("requests").or_insert_with(|| json!({}));
            if requests.is_null() {
                *requests = json!({});
            }
            let Value::Object(requests) = requests else { continue };
            for (name, limit) in limits {
                requests.entry(name).or_insert(limit);
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

/// What the Priority, ServiceAccount and DefaultTolerationSeconds admission plugins add to pods.
fn default_pod_admission(spec: &mut Map<String, Value>) {
    default_key(spec, "priority", json!(0));
    default_key(spec, "preemptionPolicy", json!("PreemptLowerPriority"));
    default_key(spec, "serviceAccountName", json!("default"));
    if let Some(name) = spec.get("serviceAccountName").cloned() {
        default_key(spec, "serviceAccount", name);
    }
    let tolerations = spec.entry("tolerations").or_insert_with(|| json!([]));
    if let Value::Array(tolerations) = tolerations {
        for key in ["node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"] {
            let present = tolerations.iter().any(|t| {
                (t.get("key").and_then(Value::as_str) == Some(key) || t.get("key").is_none_or(|k| k == ""))
                    && t.get("effect").is_none_or(|e| e == "NoExecute" || e == "")
            });
            if !present {
                tolerations.push(json!({"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": 300}));
            }
        }
    }
}

/// Every quantity in a `map` (requests, limits, hard, …) in the spelling the API server stores:
/// numbers become strings and strings their canonical form (`cpu: "0.5"` is stored as `500m`,
/// so, as upstream, re-applying such a manifest says `configured`). Malformed strings stay as
/// sent for validation to report.
fn normalize_map(map: Option<&mut Value>) {
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

fn normalize_pod_spec(spec: Option<&mut Value>) {
    let Some(spec) = spec else { return };
    for list in ["initContainers", "containers", "ephemeralContainers"] {
        if let Some(Value::Array(containers)) = spec.get_mut(list) {
            containers.iter_mut().for_each(normalize_resources);
        }
    }
    normalize_map(spec.get_mut("overhead"));
}

/// Turns quantities sent as JSON numbers into strings in the places the served kinds hold them.
pub fn normalize_quantities(rt: &ResourceType, object: &mut Value) {
    match rt.kind.as_str() {
        "Pod" => normalize_pod_spec(object.get_mut("spec")),
        "DaemonSet" | "Deployment" | "ReplicaSet" | "StatefulSet" | "Job" => {
            normalize_pod_spec(object.pointer_mut("/spec/template/spec"));
        }
        "ResourceQuota" => {
            normalize_map(object.pointer_mut("/spec/hard"));
            normalize_map(object.pointer_mut("/status/hard"));
            normalize_map(object.pointer_mut("/status/used"));
        }
        "Node" => {
            normalize_map(object.pointer_mut("/status/capacity"));
            normalize_map(object.pointer_mut("/status/allocatable"));
        }
        "LimitRange" => {
            if let Some(Value::Array(limits)) = object.pointer_mut("/spec/limits") {
                for limit in limits {
                    for key in ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"] {
                        normalize_map(limit.get_mut(key));
                    }
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policy_follows_the_tag() {
        assert_eq!(pull_policy_for("busybox"), "Always");
        assert_eq!(pull_policy_for("busybox:latest"), "Always");
        assert_eq!(pull_policy_for("busybox:1.37"), "IfNotPresent");
        assert_eq!(pull_policy_for("localhost:5000/agent"), "Always");
        assert_eq!(pull_policy_for("nvcr.io/nvidia/k8s-device-plugin:v0.17.0"), "IfNotPresent");
        assert_eq!(pull_policy_for("busybox@sha256:abc"), "IfNotPresent");
    }

    fn defaulted_pod(init_containers: Value, containers: Value) -> Value {
        let rt = crate::sim::resources::built_in()
            .into_iter()
            .find(|rt| rt.group.is_empty() && rt.kind == "Pod")
            .expect("pods are built in");
        let mut pod = json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": init_containers, "containers": containers}});
        apply_defaults(&rt, &mut pod);
        pod
    }

    #[test]
    fn pod_requests_default_to_limits_for_every_resource() {
        let init = json!([{"name": "init", "image": "busybox:1.37", "resources": {"limits": {"cpu": "1"}}}]);
        let pod = defaulted_pod(
            init,
            json!([
                {"name": "cuda", "image": "cuda:12", "resources": {"limits": {"nvidia.com/gpu": 1, "memory": "1Gi"}}},
                {"name": "mixed", "image": "cuda:12",
                 "resources": {"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "500m"}}},
                {"name": "plain", "image": "cuda:12"},
            ]),
        );
        let resources = |path: &str| pod.pointer(path).cloned().unwrap_or(Value::Null);
        assert_eq!(
            resources("/spec/containers/0/resources/requests"),
            json!({"nvidia.com/gpu": "1", "memory": "1Gi"})
        );
        assert_eq!(
            resources("/spec/containers/1/resources/requests"),
            json!({"cpu": "500m", "memory": "1Gi"})
        );
        assert_eq!(resources("/spec/containers/2/resources"), json!({}));
        assert_eq!(resources("/spec/initContainers/0/resources/requests"), json!({"cpu": "1"}));
        assert_eq!(pod["status"]["qosClass"], "Burstable");
    }

    #[test]
    fn limits_only_pod_is_guaranteed() {
        let pod = defaulted_pod(
            json!([]),
            json!([
                {"name": "c", "image": "cuda:12", "resources": {"limits": {"cpu": "1", "memory": "1Gi"}}},
            ]),
        );
        assert_eq!(pod["status"]["qosClass"], "Guaranteed");
    }

    #[test]
    fn templates_keep_their_limits_only() {
        let rt = crate::sim::resources::built_in()
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
        let rt = crate::sim::resources::built_in()
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
}
