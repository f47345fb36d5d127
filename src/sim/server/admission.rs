//! Admission: API defaults and validation as upstream applies them before an object is stored.
//!
//! Defaults follow `pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go` and
//! `pkg/apis/batch/v1/defaults.go` (v1.33), plus what the default admission plugins add to pods
//! (Priority: `priority: 0`/`preemptionPolicy`; ServiceAccount: `serviceAccountName`;
//! DefaultTolerationSeconds: the `not-ready`/`unreachable` tolerations). Validation messages and
//! field paths are those of `pkg/apis/core/validation/validation.go`,
//! `pkg/apis/apps/validation/validation.go` and `pkg/apis/batch/validation/validation.go`,
//! rendered by `apimachinery/pkg/util/validation/field/errors.go` `ErrorBody`.

use serde_json::{Map, Value, json};

use crate::sim::resources::ResourceType;

/// One validation failure, as a `Status` cause (`field`, `reason`, `message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, …
    pub reason: String,
    /// The upstream message text.
    pub message: String,
    /// The field path, e.g. `spec.updateStrategy.rollingUpdate.maxUnavailable`.
    pub field: String,
}

impl std::fmt::Display for Cause {
    /// `field.Error.Error()`: `<field>: <body>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// The `Status.message` of a 422 Invalid: `DaemonSet.apps "x" is invalid: <errors>`, with
/// several errors aggregated as `[e1, e2]` (apimachinery/pkg/api/errors `NewInvalid`).
pub fn invalid_message(rt: &ResourceType, name: &str, causes: &[Cause]) -> String {
    let kind = if rt.group.is_empty() { rt.kind.clone() } else { format!("{}.{}", rt.kind, rt.group) };
    match causes {
        [] => format!("{kind} {name:?} is invalid"),
        [only] => format!("{kind} {name:?} is invalid: {only}"),
        many => {
            let parts: Vec<String> = many.iter().map(Cause::to_string).collect();
            format!("{kind} {name:?} is invalid: [{}]", parts.join(", "))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Defaults.

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
            let qos = qos_class(object);
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

/// `GetPodQOS`: Guaranteed when every container's cpu and memory requests equal limits,
/// BestEffort when nothing is requested or limited, Burstable otherwise.
fn qos_class(pod: &Value) -> &'static str {
    let containers: Vec<&Value> = ["initContainers", "containers"]
        .iter()
        .filter_map(|list| pod.pointer(&format!("/spec/{list}")).and_then(Value::as_array))
        .flatten()
        .collect();
    let mut any = false;
    let mut guaranteed = true;
    for container in &containers {
        let requests = container.pointer("/resources/requests").and_then(Value::as_object);
        let limits = container.pointer("/resources/limits").and_then(Value::as_object);
        for resource in ["cpu", "memory"] {
            let request = requests.and_then(|r| r.get(resource));
            let limit = limits.and_then(|l| l.get(resource));
            if request.is_some() || limit.is_some() {
                any = true;
            }
            if limit.is_none() || request.is_some_and(|r| Some(r) != limit) {
                guaranteed = false;
            }
        }
    }
    if !any {
        "BestEffort"
    } else if guaranteed && !containers.is_empty() {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

/// Quantities sent as JSON numbers (`"nvidia.com/gpu": 1` from YAML) become strings, as the
/// real server's `resource.Quantity` serialises them: in canonical form (`1000` → `1k`,
/// `0.5` → `500m`).
pub fn quantity_string(number: &serde_json::Number) -> String {
    let text = number.to_string();
    crate::k8s::quantity::canonical(&text).unwrap_or(text)
}

/// Every quantity in a `map` (requests, limits, hard, …) in the spelling the API server stores:
/// numbers become strings and strings their canonical form (`cpu: "0.5"` is stored as `500m`,
/// so, as upstream, re-applying such a manifest says `configured`). Malformed strings stay as
/// sent for validation to report.
fn normalize_map(map: Option<&mut Value>) {
    if let Some(Value::Object(map)) = map {
        for value in map.values_mut() {
            match value {
                Value::Number(n) => *value = Value::String(quantity_string(n)),
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

// ---------------------------------------------------------------------------------------------
// Validation.

fn required(field: impl Into<String>, detail: &str) -> Cause {
    let message =
        if detail.is_empty() { "Required value".to_string() } else { format!("Required value: {detail}") };
    Cause { reason: "FieldValueRequired".into(), message, field: field.into() }
}

fn invalid(field: impl Into<String>, bad_value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {bad_value}: {detail}"),
        field: field.into(),
    }
}

fn not_supported(field: impl Into<String>, bad_value: &Value, supported: &[&str]) -> Cause {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!("Unsupported value: {}: supported values: {}", go_value(bad_value), list.join(", ")),
        field: field.into(),
    }
}

/// A bad value as `ErrorBody` prints simple types: strings quoted, numbers and bools bare.
fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// `%#v` of an `intstr.IntOrString` (its `String()` has a pointer receiver, so a value prints
/// as a struct — the v1.28-v1.33 text the reference notes quote).
fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}"),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or_default()
        ),
    }
}

/// `%#v` of a `map[string]string` (Go prints maps with sorted keys).
fn go_string_map(map: Option<&Map<String, Value>>) -> String {
    let Some(map) = map.filter(|m| !m.is_empty()) else { return "map[string]string(nil)".into() };
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> =
        entries.iter().map(|(k, v)| format!("{k:?}:{:?}", v.as_str().unwrap_or_default())).collect();
    format!("map[string]string{{{}}}", parts.join(", "))
}

/// Validates an object about to be stored (`old` is the stored one on update); an empty list
/// means valid.
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    validate_metadata(rt, object, &mut causes);
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => {
            if let Some(spec) = object.get("spec") {
                validate_pod_spec(spec, "spec", &mut causes);
            } else {
                causes.push(required("spec.containers", ""));
            }
            if let Some(old) = old {
                validate_only_deleted_scheduling_gates(object, old, &mut causes);
            }
        }
        ("apps", "DaemonSet") => {
            validate_workload(object, old, &mut causes);
            let strategy = object.pointer("/spec/updateStrategy");
            if let Some(strategy) = strategy {
                validate_daemon_set_strategy(strategy, &mut causes);
            }
            validate_template_restart_policy(object, &["Always"], &mut causes);
        }
        ("apps", "Deployment") => {
            validate_workload(object, old, &mut causes);
            if let Some(rolling) = object.pointer("/spec/strategy/rollingUpdate") {
                validate_rolling_update_deployment(rolling, &mut causes);
            }
            validate_template_restart_policy(object, &["Always"], &mut causes);
        }
        ("apps", "ReplicaSet") => {
            validate_workload(object, old, &mut causes);
            validate_template_restart_policy(object, &["Always"], &mut causes);
        }
        ("batch", "Job") => {
            if let Some(spec) = object.pointer("/spec/template/spec") {
                validate_pod_spec(spec, "spec.template.spec", &mut causes);
            } else {
                causes.push(required("spec.template.spec.containers", ""));
            }
            validate_template_restart_policy(object, &["OnFailure", "Never"], &mut causes);
        }
        _ => {}
    }
    causes
}

/// `validateOnlyDeletedSchedulingGates` (pkg/apis/core/validation/validation.go, from
/// `ValidatePodUpdate`): an update may remove scheduling gates, never add one.
fn validate_only_deleted_scheduling_gates(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let names = |pod: &Value| -> Vec<String> {
        pod.pointer("/spec/schedulingGates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|gate| gate["name"].as_str().map(str::to_string))
            .collect()
    };
    let before = names(old);
    for (index, gate) in names(object).iter().enumerate() {
        if !before.contains(gate) {
            causes.push(Cause {
                reason: "FieldValueForbidden".into(),
                message: format!(
                    "Forbidden: only deletion is allowed, but found new scheduling gate '{gate}'"
                ),
                field: format!("spec.schedulingGates[{index}].name"),
            });
        }
    }
}

fn validate_metadata(rt: &ResourceType, object: &Value, causes: &mut Vec<Cause>) {
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let generate = object.pointer("/metadata/generateName").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() && generate.is_empty() {
        causes.push(required("metadata.name", "name or generateName is required"));
    }
    if rt.namespaced()
        && object.pointer("/metadata/namespace").is_some_and(|n| n.as_str().is_none_or(str::is_empty))
    {
        causes.push(required("metadata.namespace", ""));
    }
    causes.extend(super::objectmeta::validate(rt, object));
    validate_ranges(rt, object, causes);
}

/// `ValidateNonnegativeField` on the counts of the course's workload kinds (apps
/// `ValidateDeploymentSpec`/`ValidateReplicaSetSpec`/`ValidateDaemonSetSpec`, batch
/// `validateJobSpec`).
fn validate_ranges(rt: &ResourceType, object: &Value, causes: &mut Vec<Cause>) {
    let fields: &[&str] = match (rt.group.as_str(), rt.kind.as_str()) {
        ("apps", "Deployment" | "ReplicaSet") => &["replicas", "minReadySeconds", "revisionHistoryLimit"],
        ("apps", "DaemonSet") => &["minReadySeconds", "revisionHistoryLimit"],
        ("batch", "Job") => &["parallelism", "completions", "backoffLimit"],
        _ => &[],
    };
    for field in fields {
        if let Some(value) = object.pointer(&format!("/spec/{field}")).and_then(Value::as_i64)
            && value < 0
        {
            causes.push(invalid(
                format!("spec.{field}"),
                &value.to_string(),
                "must be greater than or equal to 0",
            ));
        }
    }
}

pub(crate) fn validate_workload(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let selector = object.pointer("/spec/selector").filter(|s| !s.is_null());
    let labels = object.pointer("/spec/template/metadata/labels").and_then(Value::as_object);
    match selector {
        None => causes.push(required("spec.selector", "")),
        Some(selector) => {
            let match_labels = selector.get("matchLabels").and_then(Value::as_object);
            let expressions = selector.get("matchExpressions").and_then(Value::as_array);
            if match_labels.is_none_or(Map::is_empty) && expressions.is_none_or(Vec::is_empty) {
                causes.push(invalid(
                    "spec.selector",
                    &go_label_selector(selector),
                    "empty selector is invalid for deployment",
                ));
            } else if !selector_matches(selector, labels) {
                causes.push(invalid(
                    "spec.template.metadata.labels",
                    &go_string_map(labels),
                    "`selector` does not match template `labels`",
                ));
            }
            if let Some(old_selector) = old.and_then(|o| o.pointer("/spec/selector"))
                && old_selector != selector
            {
                causes.push(invalid("spec.selector", &go_label_selector(selector), "field is immutable"));
            }
        }
    }
    match object.pointer("/spec/template/spec") {
        Some(spec) => validate_pod_spec(spec, "spec.template.spec", causes),
        None => causes.push(required("spec.template.spec.containers", "")),
    }
}

/// `%#v` of a `*metav1.LabelSelector` as `field.Invalid` prints it.
fn go_label_selector(selector: &Value) -> String {
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => {
            let parts: Vec<String> = items
                .iter()
                .map(|e| {
                    let values: Vec<String> = e
                        .get("values")
                        .and_then(Value::as_array)
                        .map(|v| v.iter().map(|s| format!("{:?}", s.as_str().unwrap_or_default())).collect())
                        .unwrap_or_default();
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:[]string{{{}}}}}",
                        e.get("key").and_then(Value::as_str).unwrap_or_default(),
                        e.get("operator").and_then(Value::as_str).unwrap_or_default(),
                        values.join(", ")
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", parts.join(", "))
        }
        _ => "[]v1.LabelSelectorRequirement(nil)".into(),
    };
    format!("v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}", go_string_map(labels))
}

/// `LabelSelectorAsSelector(selector).Matches(labels)`.
pub fn selector_matches(selector: &Value, labels: Option<&Map<String, Value>>) -> bool {
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    if let Some(Value::Object(match_labels)) = selector.get("matchLabels") {
        for (key, value) in match_labels {
            if label(key) != value.as_str() {
                return false;
            }
        }
    }
    if let Some(Value::Array(expressions)) = selector.get("matchExpressions") {
        for expression in expressions {
            let key = expression.get("key").and_then(Value::as_str).unwrap_or_default();
            let values: Vec<&str> = expression
                .get("values")
                .and_then(Value::as_array)
                .map(|v| v.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let ok = match expression.get("operator").and_then(Value::as_str).unwrap_or_default() {
                "In" => label(key).is_some_and(|v| values.contains(&v)),
                "NotIn" => label(key).is_none_or(|v| !values.contains(&v)),
                "Exists" => label(key).is_some(),
                "DoesNotExist" => label(key).is_none(),
                _ => false,
            };
            if !ok {
                return false;
            }
        }
    }
    true
}

pub(crate) fn validate_template_restart_policy(object: &Value, allowed: &[&str], causes: &mut Vec<Cause>) {
    let Some(policy) = object.pointer("/spec/template/spec/restartPolicy") else { return };
    if !allowed.iter().any(|a| policy.as_str() == Some(*a)) {
        causes.push(not_supported("spec.template.spec.restartPolicy", policy, allowed));
    }
}

fn validate_pod_spec(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
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

/// Parses a quantity into milli-units (enough for the equality and integer checks).
pub fn quantity_millis(text: &str) -> Option<i128> {
    let text = text.trim();
    let split =
        text.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let negative = whole.starts_with('-');
    let digits = whole.trim_start_matches(['+', '-']);
    if (digits.is_empty() && fraction.is_empty()) || whole.len() - digits.len() > 1 {
        return None;
    }
    let whole: i128 = if digits.is_empty() { 0 } else { digits.parse().ok()? };
    let mut fraction_milli: i128 = 0;
    for (i, digit) in fraction.chars().take(3).enumerate() {
        fraction_milli += i128::from(digit.to_digit(10)?) * 10_i128.pow(2 - i as u32);
    }
    let rounds_up = fraction.chars().skip(3).any(|c| c != '0');
    let base = whole.checked_mul(1000)?.checked_add(fraction_milli + i128::from(rounds_up))?;
    let factor: i128 = match suffix {
        "" => 1,
        "m" => {
            let milli = whole.checked_add(i128::from(fraction.chars().any(|c| c != '0')))?;
            return Some(if negative { -milli } else { milli });
        }
        "k" => 1_000,
        "M" => 1_000_000,
        "G" => 1_000_000_000,
        "T" => 1_000_000_000_000,
        "P" => 1_000_000_000_000_000,
        "E" => 1_000_000_000_000_000_000,
        "Ki" => 1 << 10,
        "Mi" => 1 << 20,
        "Gi" => 1 << 30,
        "Ti" => 1 << 40,
        "Pi" => 1 << 50,
        "Ei" => 1 << 60,
        _ => return None,
    };
    let value = base.checked_mul(factor)?;
    Some(if negative { -value } else { value })
}

fn quantity_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => quantity_string(n),
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
                let (request_milli, limit_milli) =
                    (quantity_millis(&request_text), quantity_millis(&limit_text));
                if request_milli != limit_milli && !overcommit_allowed {
                    causes.push(invalid(
                        format!("{path}.requests"),
                        &format!("{request_text:?}"),
                        &format!("must be equal to {name} limit of {limit_text}"),
                    ));
                } else if let (Some(r), Some(l)) = (request_milli, limit_milli)
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

fn validate_quantity(name: &str, quantity: &Value, path: &str, causes: &mut Vec<Cause>) {
    let text = quantity_text(quantity);
    let Some(milli) = quantity_millis(&text) else {
        causes.push(invalid(
            path,
            &format!("{text:?}"),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ));
        return;
    };
    if milli < 0 {
        causes.push(invalid(path, &format!("{text:?}"), "must be greater than or equal to 0"));
    }
    if is_extended(name) && milli % 1000 != 0 {
        causes.push(invalid(path, &format!("{text:?}"), "must be an integer"));
    }
}

/// Int-or-percent value: the integer, or the percentage number for `"N%"`.
fn int_or_percent(value: &Value) -> Option<(i64, bool)> {
    match value {
        Value::Number(n) => n.as_i64().map(|v| (v, false)),
        Value::String(s) => s.strip_suffix('%').and_then(|p| p.parse().ok()).map(|v| (v, true)),
        _ => None,
    }
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` for one field.
fn validate_int_or_percent(value: &Value, path: &str, causes: &mut Vec<Cause>) {
    match value {
        Value::String(s) => match int_or_percent(value) {
            Some((v, true)) if v < 0 => causes.push(invalid(path, &format!("{s:?}"), "must be greater than or equal to 0")),
            Some((v, true)) if v > 100 => causes.push(invalid(path, &go_int_or_string(value), "must not be greater than 100%")),
            Some(_) => {}
            None => causes.push(invalid(path, &format!("{s:?}"), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")),
        },
        Value::Number(n) if n.as_i64().is_some_and(|v| v < 0) => {
            causes.push(invalid(path, &n.to_string(), "must be greater than or equal to 0"));
        }
        _ => {}
    }
}

/// apps/validation `ValidateDaemonSetUpdateStrategy` + `ValidateRollingUpdateDaemonSet`.
fn validate_daemon_set_strategy(strategy: &Value, causes: &mut Vec<Cause>) {
    let path = "spec.updateStrategy";
    match strategy.get("type").and_then(Value::as_str) {
        Some("OnDelete") => {}
        Some("RollingUpdate") => {
            let Some(rolling) = strategy.get("rollingUpdate").filter(|r| !r.is_null()) else {
                causes.push(required(
                    format!("{path}.rollingUpdate"),
                    "this should be defaulted and never be nil",
                ));
                return;
            };
            let path = format!("{path}.rollingUpdate");
            let zero = json!(0);
            let unavailable = rolling.get("maxUnavailable").unwrap_or(&zero);
            let surge = rolling.get("maxSurge").unwrap_or(&zero);
            validate_int_or_percent(unavailable, &format!("{path}.maxUnavailable"), causes);
            validate_int_or_percent(surge, &format!("{path}.maxSurge"), causes);
            let non_zero = |v: &Value| int_or_percent(v).is_some_and(|(n, _)| n != 0);
            match (non_zero(unavailable), non_zero(surge)) {
                (true, true) => causes.push(invalid(
                    format!("{path}.maxSurge"),
                    &go_int_or_string(surge),
                    "may not be set when maxUnavailable is non-zero",
                )),
                (false, false) => {
                    causes.push(required(format!("{path}.maxUnavailable"), "cannot be 0 when maxSurge is 0"))
                }
                _ => {}
            }
        }
        other => {
            let value = other.map(|s| json!(s)).unwrap_or(Value::Null);
            causes.push(not_supported(format!("{path}.type"), &value, &["OnDelete", "RollingUpdate"]));
        }
    }
}

/// apps/validation `ValidateRollingUpdateDeployment`.
fn validate_rolling_update_deployment(rolling: &Value, causes: &mut Vec<Cause>) {
    let path = "spec.strategy.rollingUpdate";
    let zero = json!(0);
    let unavailable = rolling.get("maxUnavailable").unwrap_or(&zero);
    let surge = rolling.get("maxSurge").unwrap_or(&zero);
    validate_int_or_percent(unavailable, &format!("{path}.maxUnavailable"), causes);
    validate_int_or_percent(surge, &format!("{path}.maxSurge"), causes);
    let is_zero = |v: &Value| int_or_percent(v).is_none_or(|(n, _)| n == 0);
    if is_zero(unavailable) && is_zero(surge) {
        causes.push(invalid(
            format!("{path}.maxUnavailable"),
            &go_int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
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

    #[test]
    fn quantities_parse_to_millis() {
        assert_eq!(quantity_millis("1"), Some(1000));
        assert_eq!(quantity_millis("500m"), Some(500));
        assert_eq!(quantity_millis("0.5"), Some(500));
        assert_eq!(quantity_millis("1Gi"), Some(1000 * (1 << 30)));
        assert_eq!(quantity_millis("bogus"), None);
        assert_eq!(quantity_millis("999999999999999999999999999999999999999"), None);
        assert_eq!(quantity_millis(""), None);
        assert_eq!(quantity_string(&serde_json::Number::from_f64(0.5).unwrap()), "500m");
        assert_eq!(quantity_string(&serde_json::Number::from(2)), "2");
    }
}
