//! Pods (v1 `pods`): the pod strategy (pkg/registry/core/pod/strategy.go) and its row.
//!
//! Defaults as `SetDefaults_Pod` and the pod admission plugins' (Priority: `priority: 0`/
//! `preemptionPolicy`; ServiceAccount: `serviceAccountName`; DefaultTolerationSeconds: the
//! `not-ready`/`unreachable` tolerations), validation as `ValidatePodCreate`/`ValidatePodUpdate`
//! (the update rules in [`update`]), the status a create starts with, the scheduling-gated
//! condition, graceful deletion, kubectl's columns and the selectable fields.

mod update;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value, json};

use crate::{
    k8s::selector::field_text,
    kinds::{
        ALL_VERBS, Cause, Kind, Scope, Strategy,
        core::podspec::{
            default_pod_spec, drop_pod_spec_zero_values, normalize_pod_spec, validate_pod_spec,
            validate_ranges,
        },
        default_key,
        field::required,
        object_mut,
        printer::{AGE, Ages, Column, NAME, Printer, age, int, or_none, text},
    },
};

/// v1 `pods`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Pod",
    plural: "pods",
    scope: Scope::Namespaced,
    short_names: &["po"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &[
        "status",
        "log",
        "exec",
        "attach",
        "portforward",
        "ephemeralcontainers",
        "binding",
        "eviction",
    ],
    strategy: &PodStrategy,
};

/// `PodToSelectableFields` (pkg/registry/core/pod/strategy.go).
const FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

/// The Pod strategy.
#[derive(Debug)]
pub struct PodStrategy;

impl Strategy for PodStrategy {
    fn claimed_by_selector(&self) -> bool {
        true
    }

    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::Pods
    }

    /// `ReturnDeletedObject: true` in the kind's `NewREST` (pkg/registry/core/pod/storage).
    fn returns_deleted_object(&self) -> bool {
        true
    }

    /// `podStrategy.PrepareForCreate`: `Pending` with the pod's QoS class, whatever was sent.
    fn reset_status_for_create(&self, object: &mut Value, _has_status: bool) {
        let Some(map) = object.as_object_mut() else { return };
        let qos = crate::k8s::resources::qos_class(map.get("spec").unwrap_or(&Value::Null));
        map.insert("status".into(), json!({"phase": "Pending", "qosClass": qos}));
    }

    /// A pod created with scheduling gates starts `PodScheduled=False` `SchedulingGated`.
    fn prepare_for_create(&self, object: &mut Value, now: Timestamp) {
        crate::k8s::schedule::apply_scheduling_gated_condition(object, now);
    }

    fn defaults(&self, object: &mut Value) {
        if let Some(spec) = object_mut(object, "spec") {
            drop_pod_spec_zero_values(spec);
        }
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

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_pod_spec(object.get_mut("spec"));
    }

    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        if let Some(spec) = object.get("spec") {
            validate_pod_spec(spec, "spec", &mut causes);
        } else {
            causes.push(required("spec.containers", ""));
        }
        if let Some(old) = old {
            update::validate(object, old, &mut causes);
        }
        validate_ranges(&object["spec"], "spec", &mut causes);
        causes
    }

    /// `podStrategy.CheckGracefulDelete`: the pod's `terminationGracePeriodSeconds` unless the
    /// request says otherwise; an unbound or terminal pod goes at once.
    fn grace_period(&self, pod: &Value, requested: Option<i64>) -> Option<i64> {
        let requested =
            requested.unwrap_or_else(|| pod["spec"]["terminationGracePeriodSeconds"].as_i64().unwrap_or(30));
        let unbound = pod["spec"]["nodeName"].as_str().is_none_or(str::is_empty);
        let terminal = matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed"));
        Some(if unbound || terminal { 0 } else { requested.max(0) })
    }

    fn selectable_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn selectable_value(&self, pod: &Value, name: &str) -> String {
        match name {
            // `spec.hostNetwork` defaults to false when absent.
            "spec.hostNetwork" => match field_text(pod, name) {
                absent if absent.is_empty() => "false".to_string(),
                value => value,
            },
            "status.podIP" => match field_text(pod, name) {
                ip if ip.is_empty() => pod["status"]["podIPs"][0]["ip"].as_str().unwrap_or("").to_string(),
                ip => ip,
            },
            _ => field_text(pod, name),
        }
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: pod_row, columns: &[
    NAME,
    Column("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "string", 0, "The aggregate status of the containers in this pod."),
    Column("Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
    AGE,
    Column("IP", "string", 1, "podIP address allocated to the pod. Routable at least within the cluster."),
    Column("Node", "string", 1, "NodeName indicates in which node this pod is scheduled."),
    Column("Nominated Node", "string", 1, "nominatedNodeName is set only when this pod preempts other pods on the node."),
    Column("Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated for pod readiness."),
] };

/// printers.go `printPod` (v1.33): READY, STATUS (phase, then reasons from init containers and
/// containers walked last to first, `Terminating` on deletion), RESTARTS with the last restart's age.
fn pod_row(pod: &Value, now: Ages) -> Vec<Value> {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let mut walk = StatusWalk::new(status);
    let initializing = walk.init_containers(spec, status);
    if !initializing || crate::k8s::condition::is_true(&status["conditions"], "Initialized") {
        walk.containers(status);
    }
    let phase = text(&status["phase"]);
    let deleting = !pod["metadata"]["deletionTimestamp"].is_null();
    if deleting && text(&status["reason"]) == "NodeLost" {
        walk.reason = "Unknown".to_string();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        walk.reason = "Terminating".to_string();
    }
    let total = spec["containers"].as_array().map_or(0, Vec::len)
        + spec["initContainers"].as_array().map_or(0, |init| init.iter().filter(|c| is_sidecar(c)).count());
    let [ip, node, nominated, gates] = wide_cells(spec, status);
    vec![
        pod["metadata"]["name"].clone(),
        json!(format!("{}/{total}", walk.ready)),
        json!(walk.reason),
        json!(walk.restarts.cell(now)),
        age(pod, now),
        json!(ip),
        json!(node),
        json!(nominated),
        json!(gates),
    ]
}

/// An init container with `restartPolicy: Always`: a sidecar, counted among the containers.
fn is_sidecar(container: &Value) -> bool {
    container["restartPolicy"] == "Always"
}

/// Restarts as `printPod` counts them: the sum of `restartCount` and the latest
/// `lastState.terminated.finishedAt`.
#[derive(Debug, Clone, Copy, Default)]
struct Restarts {
    count: i64,
    last: Option<Timestamp>,
}

impl Restarts {
    fn add(&mut self, container: &Value) {
        self.count += int(&container["restartCount"]);
        let last_terminated = &container["lastState"]["terminated"];
        if last_terminated.is_object() {
            let finished = last_terminated["finishedAt"].as_str().and_then(|t| t.parse::<Timestamp>().ok());
            self.last = match (self.last, finished) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
        }
    }

    /// The RESTARTS cell: `3 (5m ago)`, or the bare count when nothing restarted.
    fn cell(self, now: Ages) -> String {
        match self.last {
            Some(at) if self.count != 0 => format!("{} ({} ago)", self.count, now.since(at)),
            _ => self.count.to_string(),
        }
    }
}

/// What `printPod` accumulates while it walks the container statuses.
struct StatusWalk {
    /// The STATUS cell so far.
    reason: String,
    /// Ready containers (sidecars included).
    ready: usize,
    /// Restarts of every container walked.
    restarts: Restarts,
    /// Restarts of the sidecars alone: the count that stays once the pod is initialized.
    sidecar_restarts: Restarts,
}

impl StatusWalk {
    /// The walk's start: the phase, or `status.reason`, or `SchedulingGated`.
    fn new(status: &Value) -> StatusWalk {
        let mut reason = if text(&status["reason"]).is_empty() {
            text(&status["phase"]).to_string()
        } else {
            text(&status["reason"]).to_string()
        };
        if status["conditions"].as_array().is_some_and(|cs| {
            cs.iter().any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
        }) {
            reason = "SchedulingGated".to_string();
        }
        StatusWalk { reason, ready: 0, restarts: Restarts::default(), sidecar_restarts: Restarts::default() }
    }

    /// The init containers in order; `Init:…` for the first one not done. True while initializing.
    fn init_containers(&mut self, spec: &Value, status: &Value) -> bool {
        let empty = Vec::new();
        let init_specs = spec["initContainers"].as_array().unwrap_or(&empty);
        let sidecar = |name: &str| init_specs.iter().any(|c| c["name"] == name && is_sidecar(c));
        for (i, container) in status["initContainerStatuses"].as_array().unwrap_or(&empty).iter().enumerate()
        {
            let name = text(&container["name"]);
            self.restarts.add(container);
            if sidecar(name) {
                self.sidecar_restarts.add(container);
            }
            let terminated = &container["state"]["terminated"];
            let waiting = &container["state"]["waiting"];
            if terminated.is_object() && int(&terminated["exitCode"]) == 0 {
                continue;
            }
            if sidecar(name) && container["started"] == true {
                if container["ready"] == true {
                    self.ready += 1;
                }
                continue;
            }
            self.reason = if terminated.is_object() {
                if !text(&terminated["reason"]).is_empty() {
                    format!("Init:{}", text(&terminated["reason"]))
                } else if int(&terminated["signal"]) != 0 {
                    format!("Init:Signal:{}", int(&terminated["signal"]))
                } else {
                    format!("Init:ExitCode:{}", int(&terminated["exitCode"]))
                }
            } else if !text(&waiting["reason"]).is_empty() && text(&waiting["reason"]) != "PodInitializing" {
                format!("Init:{}", text(&waiting["reason"]))
            } else {
                format!("Init:{i}/{}", init_specs.len())
            };
            return true;
        }
        false
    }

    /// The containers last to first: the waiting or terminated reason, ready and running ones,
    /// and `Completed` turned back to `Running`, the error, or `NotReady`.
    fn containers(&mut self, status: &Value) {
        self.restarts = self.sidecar_restarts;
        let mut has_running = false;
        let mut error_reason = String::new();
        let empty = Vec::new();
        for container in status["containerStatuses"].as_array().unwrap_or(&empty).iter().rev() {
            self.restarts.add(container);
            let waiting = &container["state"]["waiting"];
            let terminated = &container["state"]["terminated"];
            if !text(&waiting["reason"]).is_empty() {
                self.reason = text(&waiting["reason"]).to_string();
            } else if terminated.is_object() {
                self.reason = if !text(&terminated["reason"]).is_empty() {
                    text(&terminated["reason"]).to_string()
                } else if int(&terminated["signal"]) != 0 {
                    format!("Signal:{}", int(&terminated["signal"]))
                } else {
                    format!("ExitCode:{}", int(&terminated["exitCode"]))
                };
                if int(&terminated["exitCode"]) != 0 {
                    error_reason = self.reason.clone();
                }
            } else if container["ready"] == true && container["state"]["running"].is_object() {
                has_running = true;
                self.ready += 1;
            }
        }
        // "change pod status back to Running if there is at least one container still running"
        if self.reason == "Completed" {
            if has_running && crate::k8s::condition::is_true(&status["conditions"], "Ready") {
                self.reason = "Running".to_string();
            } else if !error_reason.is_empty() {
                self.reason = error_reason;
            } else if has_running {
                self.reason = "NotReady".to_string();
            }
        }
    }
}

/// The `-o wide` cells: IP (the first of `podIPs`, else `podIP`), NODE, NOMINATED NODE and
/// READINESS GATES (`true/all`).
fn wide_cells(spec: &Value, status: &Value) -> [String; 4] {
    let ip = status["podIPs"]
        .as_array()
        .and_then(|ips| ips.first())
        .map(|ip| text(&ip["ip"]).to_string())
        .filter(|ip| !ip.is_empty())
        .unwrap_or_else(|| or_none(text(&status["podIP"])));
    let gates = match spec["readinessGates"].as_array() {
        Some(gates) if !gates.is_empty() => {
            let true_gates = gates
                .iter()
                .filter(|gate| {
                    crate::k8s::condition::is_true(&status["conditions"], text(&gate["conditionType"]))
                })
                .count();
            format!("{true_gates}/{}", gates.len())
        }
        _ => "<none>".to_string(),
    };
    [ip, or_none(text(&spec["nodeName"])), or_none(text(&status["nominatedNodeName"])), gates]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources::ResourceType;

    /// The registry's defaulting of `object`, an object of `rt`.
    fn apply_defaults(rt: &ResourceType, object: &mut Value) {
        crate::kinds::apply_defaults(rt.strategy(), object);
    }

    fn defaulted_pod(init_containers: Value, containers: Value) -> Value {
        let rt = crate::resources::built_in()
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
}
