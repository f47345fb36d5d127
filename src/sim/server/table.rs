//! meta.k8s.io/v1 `Table` responses with kubectl's columns and value formatting.
//!
//! Column sets and cell values follow kube-apiserver's printers
//! (pkg/printers/internalversion/printers.go, v1.33: `AddHandlers` and the `print<Kind>`
//! functions). The server always prints the wide form (`GenerateOptions{Wide: true}` in
//! apiserver's table convertor); kubectl hides `priority: 1` columns unless `-o wide`. Types
//! without a printer get the default convertor's `Name, Created At`
//! (apiserver/pkg/registry/rest/table.go). Ages are `duration.HumanDuration` of now − timestamp.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::{k8s::condition, sim::resources::ResourceType};

const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One column: name, type, priority (0 always shown, 1 only with `-o wide`), description.
struct Column(&'static str, &'static str, u8, &'static str);

fn definitions(columns: &[Column]) -> Vec<Value> {
    columns
        .iter()
        .map(|Column(name, kind, priority, description)| {
            let format = if *name == "Name" { "name" } else { "" };
            json!({"name": name, "type": kind, "format": format, "description": description, "priority": priority})
        })
        .collect()
}

const NAME: Column = Column("Name", "string", 0, NAME_DOC);
const AGE: Column = Column("Age", "string", 0, AGE_DOC);
const CONTAINERS: Column = Column("Containers", "string", 1, "Names of each container in the template.");
const IMAGES: Column = Column("Images", "string", 1, "Images referenced by each container in the template.");

/// Prints one object's cells.
type RowPrinter = fn(&Value, Ages) -> Vec<Value>;

/// One kind's table: the `(group, kind)`s it serves, kubectl's columns and the row printer.
struct Printer {
    kinds: &'static [(&'static str, &'static str)],
    columns: &'static [Column],
    row: RowPrinter,
}

/// Every kind with a printer, as data: one column per line (descriptions are upstream's, from the
/// printers' `TableColumnDefinition`s), so the table reads like the upstream column lists.
#[rustfmt::skip]
static PRINTERS: &[Printer] = &[
    Printer { kinds: &[("", "Pod")], row: pod_row, columns: &[
        NAME,
        Column("Ready", "string", 0, "The aggregate readiness state of this pod for accepting traffic."),
        Column("Status", "string", 0, "The aggregate status of the containers in this pod."),
        Column("Restarts", "string", 0, "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted."),
        AGE,
        Column("IP", "string", 1, "podIP address allocated to the pod. Routable at least within the cluster."),
        Column("Node", "string", 1, "NodeName indicates in which node this pod is scheduled."),
        Column("Nominated Node", "string", 1, "nominatedNodeName is set only when this pod preempts other pods on the node."),
        Column("Readiness Gates", "string", 1, "If specified, all readiness gates will be evaluated for pod readiness."),
    ] },
    Printer { kinds: &[("", "Node")], row: node_row, columns: &[
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
    ] },
    Printer { kinds: &[("apps", "DaemonSet")], row: daemonset_row, columns: &[
        NAME,
        Column("Desired", "integer", 0, "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod)."),
        Column("Current", "integer", 0, "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
        Column("Ready", "integer", 0, "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
        Column("Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"),
        Column("Available", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
        Column("Node Selector", "string", 0, "NodeSelector is a selector which must be true for the pod to fit on a node."),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", "string", 1, "A label query over pods that are managed by the daemon set."),
    ] },
    Printer { kinds: &[("apps", "Deployment")], row: deployment_row, columns: &[
        NAME,
        Column("Ready", "string", 0, "Number of the pod with ready state"),
        Column("Up-to-date", "string", 0, "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
        Column("Available", "string", 0, "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", "string", 1, "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."),
    ] },
    Printer { kinds: &[("apps", "ReplicaSet")], row: replicaset_row, columns: &[
        NAME,
        Column("Desired", "integer", 0, "Replicas is the number of desired pods."),
        Column("Current", "integer", 0, "Replicas is the most recently observed number of non-terminating pods."),
        Column("Ready", "integer", 0, "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", "string", 1, "Selector is a label query over pods that should match the replica count."),
    ] },
    Printer { kinds: &[("apps", "StatefulSet")], row: statefulset_row, columns: &[
        NAME,
        Column("Ready", "string", 0, "Number of the pod with ready state"),
        AGE,
        CONTAINERS,
        IMAGES,
    ] },
    Printer { kinds: &[("", "PersistentVolumeClaim")], row: persistentvolumeclaim_row, columns: &[
        NAME,
        Column("Status", "string", 0, "phase represents the current phase of PersistentVolumeClaim."),
        Column("Volume", "string", 0, "volumeName is the binding reference to the PersistentVolume backing this claim."),
        Column("Capacity", "string", 0, "capacity represents the actual resources of the underlying volume."),
        Column("Access Modes", "string", 0, "accessModes contains the actual access modes the volume backing the PVC has."),
        Column("StorageClass", "string", 0, "StorageClass of the pvc"),
        Column("VolumeAttributesClass", "string", 0, "VolumeAttributesClass of the pvc"),
        AGE,
        Column("VolumeMode", "string", 1, "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec."),
    ] },
    Printer { kinds: &[("autoscaling", "HorizontalPodAutoscaler")], row: horizontalpodautoscaler_row, columns: &[
        NAME,
        Column("Reference", "string", 0, "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."),
        Column("Targets", "string", 0, "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization."),
        Column("MinPods", "string", 0, "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."),
        Column("MaxPods", "string", 0, "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."),
        Column("Replicas", "string", 0, "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."),
        AGE,
    ] },
    Printer { kinds: &[("scheduling.k8s.io", "PriorityClass")], row: priorityclass_row, columns: &[
        NAME,
        Column("Value", "integer", 0, "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec."),
        Column("Global-Default", "boolean", 0, "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority."),
        AGE,
        Column("PreemptionPolicy", "string", 0, "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset."),
    ] },
    Printer { kinds: &[("node.k8s.io", "RuntimeClass")], row: runtimeclass_row, columns: &[
        NAME,
        Column("Handler", "string", 0, "Handler is the name of the underlying runtime and configuration."),
        AGE,
    ] },
    Printer { kinds: &[("apps", "ControllerRevision")], row: controllerrevision_row, columns: &[
        NAME,
        Column("Controller", "string", 0, "Controller of the object"),
        Column("Revision", "string", 0, "Revision indicates the revision of the state represented by Data."),
        AGE,
    ] },
    Printer { kinds: &[("batch", "Job")], row: job_row, columns: &[
        NAME,
        Column("Status", "string", 0, "Status of the job."),
        Column("Completions", "string", 0, "The completion status of the job."),
        Column("Duration", "string", 0, "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", "string", 1, "A label query over pods that should match the pod count."),
    ] },
    Printer { kinds: &[("batch", "CronJob")], row: cronjob_row, columns: &[
        NAME,
        Column("Schedule", "string", 0, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
        Column("Timezone", "string", 0, "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"),
        Column("Suspend", "boolean", 0, "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."),
        Column("Active", "integer", 0, "A list of pointers to currently running jobs."),
        Column("Last Schedule", "string", 0, "Information when was the last time the job was successfully scheduled."),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", "string", 1, "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"),
    ] },
    Printer { kinds: &[("policy", "PodDisruptionBudget")], row: poddisruptionbudget_row, columns: &[
        NAME,
        Column("Min Available", "string", 0, "The minimum number of pods that must be available."),
        Column("Max Unavailable", "string", 0, "The maximum number of pods that may be unavailable."),
        Column("Allowed Disruptions", "integer", 0, "Calculated number of pods that may be disrupted at this time."),
        AGE,
    ] },
    Printer { kinds: &[("", "ConfigMap")], row: configmap_row, columns: &[
        NAME,
        Column("Data", "string", 0, "Data contains the configuration data."),
        AGE,
    ] },
    Printer { kinds: &[("", "Secret")], row: secret_row, columns: &[
        NAME,
        Column("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
        Column("Data", "string", 0, "Data contains the secret data."),
        AGE,
    ] },
    Printer { kinds: &[("", "ServiceAccount")], row: serviceaccount_row, columns: &[
        NAME,
        Column("Secrets", "string", 0, "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."),
        AGE,
    ] },
    Printer { kinds: &[("", "ResourceQuota")], row: resourcequota_row, columns: &[
        NAME,
        AGE,
        Column("Request", "string", 0, "Request represents a minimum amount of cpu/memory that a container may consume."),
        Column("Limit", "string", 0, "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
    ] },
    Printer { kinds: &[("", "Namespace")], row: namespace_row, columns: &[
        NAME,
        Column("Status", "string", 0, "The status of the namespace"),
        AGE,
    ] },
    Printer { kinds: &[("", "Event"), ("events.k8s.io", "Event")], row: event_row, columns: &[
        Column("Last Seen", "string", 0, "deprecatedLastTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type."),
        Column("Type", "string", 0, "type is the type of this event (Normal, Warning), new types could be added in the future."),
        Column("Reason", "string", 0, "reason is why the action was taken. It is human-readable."),
        Column("Object", "string", 0, "regarding contains the object this Event is about."),
        Column("Subobject", "string", 1, "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement."),
        Column("Source", "string", 1, "reportingController is the name of the controller that emitted this Event."),
        Column("Message", "string", 0, "note is a human-readable description of the status of this operation."),
        Column("First Seen", "string", 1, "deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type."),
        Column("Count", "string", 1, "deprecatedCount is the deprecated field assuring backward compatibility with core.v1 Event type."),
        Column("Name", "string", 1, NAME_DOC),
    ] },
    // Role and ClusterRole have no printer upstream: the default convertor's Name, Created At.
    // pkg/printers/internalversion/printers.go roleBindingsColumnDefinitions and
    // clusterRoleBindingsColumnDefinitions, printRoleBinding/printClusterRoleBinding.
    Printer { kinds: &[("rbac.authorization.k8s.io", "RoleBinding")], row: binding_row, columns: &[
        NAME,
        Column("Role", "string", 0, "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable."),
        AGE,
        Column("Users", "string", 1, "Users in the roleBinding"),
        Column("Groups", "string", 1, "Groups in the roleBinding"),
        Column("ServiceAccounts", "string", 1, "ServiceAccounts in the roleBinding"),
    ] },
    Printer { kinds: &[("rbac.authorization.k8s.io", "ClusterRoleBinding")], row: binding_row, columns: &[
        NAME,
        Column("Role", "string", 0, "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error. This field is immutable."),
        AGE,
        Column("Users", "string", 1, "Users in the clusterRoleBinding"),
        Column("Groups", "string", 1, "Groups in the clusterRoleBinding"),
        Column("ServiceAccounts", "string", 1, "ServiceAccounts in the clusterRoleBinding"),
    ] },
    Printer { kinds: &[("coordination.k8s.io", "Lease")], row: lease_row, columns: &[
        NAME,
        Column("Holder", "string", 0, "The holder of the lease"),
        AGE,
    ] },
];

/// Types without a printer: the default convertor's columns (apiserver/pkg/registry/rest/table.go).
static DEFAULT_PRINTER: Printer =
    Printer { kinds: &[], columns: &[NAME, Column("Created At", "date", 0, AGE_DOC)], row: generic_row };

/// The printer for `rt`.
fn printer(rt: &ResourceType) -> &'static Printer {
    let key = (rt.group.as_str(), rt.kind.as_str());
    PRINTERS.iter().find(|printer| printer.kinds.contains(&key)).unwrap_or(&DEFAULT_PRINTER)
}

/// Renders `objects` (full objects of type `rt`) as a `Table` whose rows carry
/// `PartialObjectMetadata` (the server default `includeObject=Metadata`), which kubectl reads
/// for `-A`'s NAMESPACE column and `--show-labels`.
pub fn render(rt: &ResourceType, objects: &[Value], resource_version: &str, now: Timestamp) -> Value {
    let Printer { columns, row, .. } = printer(rt);
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            json!({
                "cells": row(object, Ages::At(now)),
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": "meta.k8s.io/v1",
                    "metadata": object["metadata"],
                },
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": definitions(columns),
        "rows": rows,
    })
}

/// When the age cells of a row are computed.
#[derive(Debug, Clone, Copy)]
pub enum Ages {
    /// Now: the row is complete.
    At(Timestamp),
    /// Per response: the row is a template that keeps each timestamp in a marker, and
    /// [`fill_ages`] writes the ages when the row is sent. Rows are cached per object revision
    /// this way, while their ages still count from the moment of each request.
    Deferred,
}

impl Ages {
    /// `duration.HumanDuration(now - then)`, or the marker that stands for it.
    fn since(self, then: Timestamp) -> String {
        match self {
            Ages::At(now) => human_duration(now.duration_since(then).as_secs()),
            Ages::Deferred => format!("{}{}{AGE_MARK_END}", age_mark(), then.as_nanosecond()),
        }
    }
}

/// The start of an age marker: a control character and a per-process random tag, so no text
/// taken from an object can be mistaken for one.
fn age_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let tag = std::collections::hash_map::RandomState::new().build_hasher().finish();
        format!("\u{1}{tag:016x}:")
    })
}

const AGE_MARK_END: char = '\u{2}';

/// One row as `Table.rows[]` JSON with its ages deferred ([`Ages::Deferred`]): the cells and the
/// `PartialObjectMetadata`. Complete it with [`fill_ages`].
pub fn row_template(rt: &ResourceType, object: &Value) -> String {
    let row = printer(rt).row;
    json!({
        "cells": row(object, Ages::Deferred),
        "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": object["metadata"]},
    })
    .to_string()
}

/// Appends `template` (from [`row_template`]) to `out` with each age marker replaced by the
/// age at `now`.
pub fn fill_ages(template: &str, now: Timestamp, out: &mut String) {
    // serde_json writes the marker's control characters as `\u0001` / `\u0002` escapes.
    let mark = age_mark();
    let start = format!("\\u0001{}", &mark[1..]);
    let end = "\\u0002";
    let mut rest = template;
    while let Some(at) = rest.find(&start) {
        out.push_str(&rest[..at]);
        let after = &rest[at + start.len()..];
        let Some(stop) = after.find(end) else { break };
        match after[..stop].parse::<i128>().ok().and_then(|ns| Timestamp::from_nanosecond(ns).ok()) {
            Some(then) => out.push_str(&human_duration(now.duration_since(then).as_secs())),
            None => out.push_str("<unknown>"),
        }
        rest = &after[stop + end.len()..];
    }
    out.push_str(rest);
}

/// A `Table` of `rows` (templates from [`row_template`]) as JSON text, the same document
/// [`render`] builds: column definitions unless `columns` is false (a watch sends them once),
/// `metadata.continue` when given.
pub fn render_rows<'a>(
    rt: &ResourceType,
    rows: impl ExactSizeIterator<Item = &'a str>,
    resource_version: &str,
    continue_token: Option<&str>,
    columns: bool,
    now: Timestamp,
) -> String {
    let mut metadata = json!({"resourceVersion": resource_version});
    if let Some(token) = continue_token {
        metadata["continue"] = json!(token);
    }
    let definitions = if columns { definitions(printer(rt).columns) } else { Vec::new() };
    let head = json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
                      "columnDefinitions": definitions})
    .to_string();
    let mut out = String::with_capacity(head.len() + rows.len() * 1024);
    // `head` is an object: reopen it to append `rows`.
    out.push_str(&head[..head.len() - 1]);
    out.push_str(",\"rows\":[");
    for (i, row) in rows.enumerate() {
        if i > 0 {
            out.push(',');
        }
        fill_ages(row, now, &mut out);
    }
    out.push_str("]}");
    out
}

/// apimachinery/pkg/util/duration `HumanDuration`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    } else if seconds < 0 {
        return "0s".to_string();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    } else if hours < 48 {
        return format!("{hours}h");
    } else if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    } else if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    } else if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// printers.go `translateTimestampSince`: `<unknown>` for a missing time.
fn since(timestamp: &Value, now: Ages) -> String {
    match timestamp.as_str().and_then(|t| t.parse::<Timestamp>().ok()) {
        Some(then) => now.since(then),
        None => "<unknown>".to_string(),
    }
}

fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn or_none(value: &str) -> String {
    if value.is_empty() { "<none>".to_string() } else { value.to_string() }
}

fn age(object: &Value, now: Ages) -> Value {
    json!(since(&object["metadata"]["creationTimestamp"], now))
}

/// printers.go `printPod` (v1.33): READY, STATUS (phase, then reasons from init containers and
/// containers walked last to first, `Terminating` on deletion), RESTARTS with the last restart's age.
fn pod_row(pod: &Value, now: Ages) -> Vec<Value> {
    let spec = &pod["spec"];
    let status = &pod["status"];
    let empty = Vec::new();
    let init_specs = spec["initContainers"].as_array().unwrap_or(&empty);
    let restartable =
        |name: &str| init_specs.iter().any(|c| c["name"] == name && c["restartPolicy"] == "Always");
    let mut total = spec["containers"].as_array().map_or(0, Vec::len);
    total += init_specs.iter().filter(|c| c["restartPolicy"] == "Always").count();
    let mut ready = 0;
    let mut restarts = 0;
    let mut restartable_restarts = 0;
    let mut last_restart: Option<Timestamp> = None;
    let mut last_restartable_restart: Option<Timestamp> = None;
    let later = |current: Option<Timestamp>, finished: &Value| {
        let finished = finished.as_str().and_then(|t| t.parse::<Timestamp>().ok());
        match (current, finished) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    };

    let phase = text(&status["phase"]);
    let mut reason = if text(&status["reason"]).is_empty() {
        phase.to_string()
    } else {
        text(&status["reason"]).to_string()
    };
    if status["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated"))
    {
        reason = "SchedulingGated".to_string();
    }

    let init_statuses = status["initContainerStatuses"].as_array().unwrap_or(&empty);
    let mut initializing = false;
    for (i, container) in init_statuses.iter().enumerate() {
        let name = text(&container["name"]);
        restarts += int(&container["restartCount"]);
        let last_terminated = &container["lastState"]["terminated"];
        if last_terminated.is_object() {
            last_restart = later(last_restart, &last_terminated["finishedAt"]);
        }
        if restartable(name) {
            restartable_restarts += int(&container["restartCount"]);
            if last_terminated.is_object() {
                last_restartable_restart = later(last_restartable_restart, &last_terminated["finishedAt"]);
            }
        }
        let terminated = &container["state"]["terminated"];
        let waiting = &container["state"]["waiting"];
        if terminated.is_object() && int(&terminated["exitCode"]) == 0 {
            continue;
        }
        if restartable(name) && container["started"] == true {
            if container["ready"] == true {
                ready += 1;
            }
            continue;
        }
        if terminated.is_object() {
            reason = if text(&terminated["reason"]).is_empty() {
                if int(&terminated["signal"]) != 0 {
                    format!("Init:Signal:{}", int(&terminated["signal"]))
                } else {
                    format!("Init:ExitCode:{}", int(&terminated["exitCode"]))
                }
            } else {
                format!("Init:{}", text(&terminated["reason"]))
            };
        } else if !text(&waiting["reason"]).is_empty() && text(&waiting["reason"]) != "PodInitializing" {
            reason = format!("Init:{}", text(&waiting["reason"]));
        } else {
            reason = format!("Init:{i}/{}", init_specs.len());
        }
        initializing = true;
        break;
    }

    if !initializing || condition::is_true(&status["conditions"], "Initialized") {
        restarts = restartable_restarts;
        last_restart = last_restartable_restart;
        let mut has_running = false;
        let mut error_reason = String::new();
        for container in status["containerStatuses"].as_array().unwrap_or(&empty).iter().rev() {
            restarts += int(&container["restartCount"]);
            let last_terminated = &container["lastState"]["terminated"];
            if last_terminated.is_object() {
                last_restart = later(last_restart, &last_terminated["finishedAt"]);
            }
            let waiting = &container["state"]["waiting"];
            let terminated = &container["state"]["terminated"];
            if !text(&waiting["reason"]).is_empty() {
                reason = text(&waiting["reason"]).to_string();
            } else if terminated.is_object() {
                reason = if !text(&terminated["reason"]).is_empty() {
                    text(&terminated["reason"]).to_string()
                } else if int(&terminated["signal"]) != 0 {
                    format!("Signal:{}", int(&terminated["signal"]))
                } else {
                    format!("ExitCode:{}", int(&terminated["exitCode"]))
                };
                if int(&terminated["exitCode"]) != 0 {
                    error_reason = reason.clone();
                }
            } else if container["ready"] == true && container["state"]["running"].is_object() {
                has_running = true;
                ready += 1;
            }
        }
        // "change pod status back to Running if there is at least one container still running"
        if reason == "Completed" {
            if has_running && condition::is_true(&status["conditions"], "Ready") {
                reason = "Running".to_string();
            } else if !error_reason.is_empty() {
                reason = error_reason;
            } else if has_running {
                reason = "NotReady".to_string();
            }
        }
    }

    let deleting = !pod["metadata"]["deletionTimestamp"].is_null();
    if deleting && text(&status["reason"]) == "NodeLost" {
        reason = "Unknown".to_string();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".to_string();
    }

    let restarts_cell = match last_restart {
        Some(at) if restarts != 0 => {
            format!("{restarts} ({} ago)", now.since(at))
        }
        _ => restarts.to_string(),
    };

    let node = or_none(text(&spec["nodeName"]));
    let ip = status["podIPs"]
        .as_array()
        .and_then(|ips| ips.first())
        .map(|ip| text(&ip["ip"]).to_string())
        .filter(|ip| !ip.is_empty())
        .unwrap_or_else(|| or_none(text(&status["podIP"])));
    let nominated = or_none(text(&status["nominatedNodeName"]));
    let gates = match spec["readinessGates"].as_array() {
        Some(gates) if !gates.is_empty() => {
            let true_gates = gates
                .iter()
                .filter(|gate| condition::is_true(&status["conditions"], text(&gate["conditionType"])))
                .count();
            format!("{true_gates}/{}", gates.len())
        }
        _ => "<none>".to_string(),
    };
    vec![
        pod["metadata"]["name"].clone(),
        json!(format!("{ready}/{total}")),
        json!(reason),
        json!(restarts_cell),
        age(pod, now),
        json!(ip),
        json!(node),
        json!(nominated),
        json!(gates),
    ]
}

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
    let mut roles = BTreeSet::new();
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

/// `labels.FormatLabels`: sorted `k=v` joined by `,`, or `<none>`.
fn format_labels(map: &Value) -> String {
    match map.as_object() {
        Some(map) if !map.is_empty() => {
            let mut pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={}", text(v))).collect();
            pairs.sort();
            pairs.join(",")
        }
        _ => "<none>".to_string(),
    }
}

/// `metav1.LabelSelectorAsSelector(..).String()`: requirements sorted by key; `""` when empty.
pub fn selector_string(selector: &Value) -> String {
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector["matchLabels"].as_object() {
        for (key, value) in labels {
            requirements.push((key.clone(), format!("{key}={}", text(value))));
        }
    }
    for expression in selector["matchExpressions"].as_array().into_iter().flatten() {
        let key = text(&expression["key"]).to_string();
        let mut values: Vec<&str> = expression["values"].as_array().into_iter().flatten().map(text).collect();
        values.sort();
        let values = values.join(",");
        let requirement = match text(&expression["operator"]) {
            "In" => format!("{key} in ({values})"),
            "NotIn" => format!("{key} notin ({values})"),
            "Exists" => key.clone(),
            "DoesNotExist" => format!("!{key}"),
            _ => continue,
        };
        requirements.push((key, requirement));
    }
    requirements.sort();
    requirements.into_iter().map(|(_, r)| r).collect::<Vec<_>>().join(",")
}

/// `metav1.FormatLabelSelector`: like [`selector_string`] but `<none>` when empty.
fn format_selector(selector: &Value) -> String {
    or_none(&selector_string(selector))
}

/// printers.go `layoutContainerCells`: names and images joined by `,`.
fn containers_and_images(template: &Value) -> (Value, Value) {
    let containers = template["spec"]["containers"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    (json!(names.join(",")), json!(images.join(",")))
}

fn daemonset_row(ds: &Value, now: Ages) -> Vec<Value> {
    let status = &ds["status"];
    let (names, images) = containers_and_images(&ds["spec"]["template"]);
    vec![
        ds["metadata"]["name"].clone(),
        json!(int(&status["desiredNumberScheduled"])),
        json!(int(&status["currentNumberScheduled"])),
        json!(int(&status["numberReady"])),
        json!(int(&status["updatedNumberScheduled"])),
        json!(int(&status["numberAvailable"])),
        json!(format_labels(&ds["spec"]["template"]["spec"]["nodeSelector"])),
        age(ds, now),
        names,
        images,
        json!(format_selector(&ds["spec"]["selector"])),
    ]
}

fn deployment_row(deploy: &Value, now: Ages) -> Vec<Value> {
    let status = &deploy["status"];
    // spec.replicas defaults to 1 (apps/v1 defaults).
    let desired = deploy["spec"]["replicas"].as_i64().unwrap_or(1);
    let (names, images) = containers_and_images(&deploy["spec"]["template"]);
    vec![
        deploy["metadata"]["name"].clone(),
        json!(format!("{}/{desired}", int(&status["readyReplicas"]))),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        age(deploy, now),
        names,
        images,
        json!(selector_string(&deploy["spec"]["selector"])),
    ]
}

fn replicaset_row(rs: &Value, now: Ages) -> Vec<Value> {
    let status = &rs["status"];
    let (names, images) = containers_and_images(&rs["spec"]["template"]);
    vec![
        rs["metadata"]["name"].clone(),
        json!(rs["spec"]["replicas"].as_i64().unwrap_or(1)),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        age(rs, now),
        names,
        images,
        json!(format_selector(&rs["spec"]["selector"])),
    ]
}

/// printers.go `printStatefulSet`: READY is `readyReplicas/spec.replicas`.
fn statefulset_row(sts: &Value, now: Ages) -> Vec<Value> {
    let (names, images) = containers_and_images(&sts["spec"]["template"]);
    let desired = sts["spec"]["replicas"].as_i64().unwrap_or(1);
    vec![
        sts["metadata"]["name"].clone(),
        json!(format!("{}/{desired}", int(&sts["status"]["readyReplicas"]))),
        age(sts, now),
        names,
        images,
    ]
}

/// printers.go `printPersistentVolumeClaim`: capacity and access modes only once bound to a
/// volume; the class from the beta annotation, else `spec.storageClassName`.
fn persistentvolumeclaim_row(pvc: &Value, now: Ages) -> Vec<Value> {
    let spec = &pvc["spec"];
    let phase = if pvc["metadata"]["deletionTimestamp"].is_null() {
        text(&pvc["status"]["phase"]).to_string()
    } else {
        "Terminating".to_string()
    };
    let volume = text(&spec["volumeName"]);
    let (capacity, access_modes) = if volume.is_empty() {
        (String::new(), String::new())
    } else {
        // `GetAccessModesAsString`: RWO, ROX, RWX, RWOP in that order.
        let modes = pvc["status"]["accessModes"].as_array().cloned().unwrap_or_default();
        let order = [
            ("ReadWriteOnce", "RWO"),
            ("ReadOnlyMany", "ROX"),
            ("ReadWriteMany", "RWX"),
            ("ReadWriteOncePod", "RWOP"),
        ];
        let shown: Vec<&str> = order
            .iter()
            .filter(|(mode, _)| modes.iter().any(|m| m == mode))
            .map(|(_, short)| *short)
            .collect();
        (text(&pvc["status"]["capacity"]["storage"]).to_string(), shown.join(","))
    };
    let class = pvc["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"]
        .as_str()
        .unwrap_or_else(|| text(&spec["storageClassName"]));
    let attributes_class =
        spec["volumeAttributesClassName"].as_str().filter(|c| !c.is_empty()).unwrap_or("<unset>");
    let volume_mode = spec["volumeMode"].as_str().unwrap_or("<unset>");
    vec![
        pvc["metadata"]["name"].clone(),
        json!(phase),
        json!(volume),
        json!(capacity),
        json!(access_modes),
        json!(class),
        json!(attributes_class),
        age(pvc, now),
        json!(volume_mode),
    ]
}

/// printers.go `printPriorityClass`.
fn priorityclass_row(pc: &Value, now: Ages) -> Vec<Value> {
    vec![
        pc["metadata"]["name"].clone(),
        json!(int(&pc["value"])),
        json!(pc["globalDefault"].as_bool().unwrap_or(false)),
        age(pc, now),
        json!(text(&pc["preemptionPolicy"])),
    ]
}

/// printers.go `printRuntimeClass`.
fn runtimeclass_row(rc: &Value, now: Ages) -> Vec<Value> {
    vec![rc["metadata"]["name"].clone(), json!(text(&rc["handler"])), age(rc, now)]
}

/// printers.go `printHorizontalPodAutoscaler`: REFERENCE `Kind/name`, TARGETS from
/// `formatHPAMetrics` (at most two, then `+ N more...`; `<unknown>` for a metric without a
/// current value), MINPODS `<unset>` without a minimum.
fn horizontalpodautoscaler_row(hpa: &Value, now: Ages) -> Vec<Value> {
    let spec = &hpa["spec"];
    let reference =
        format!("{}/{}", text(&spec["scaleTargetRef"]["kind"]), text(&spec["scaleTargetRef"]["name"]));
    let min_pods = spec["minReplicas"].as_i64().map_or_else(|| "<unset>".to_string(), |min| min.to_string());
    vec![
        hpa["metadata"]["name"].clone(),
        json!(reference),
        json!(hpa_metrics(spec, &hpa["status"])),
        json!(min_pods),
        json!(int(&spec["maxReplicas"])),
        json!(int(&hpa["status"]["currentReplicas"])),
        age(hpa, now),
    ]
}

/// printers.go `formatHPAMetrics`.
fn hpa_metrics(spec: &Value, status: &Value) -> String {
    let specs = spec["metrics"].as_array().map(Vec::as_slice).unwrap_or_default();
    if specs.is_empty() {
        return "<none>".to_string();
    }
    let statuses = status["currentMetrics"].as_array().map(Vec::as_slice).unwrap_or_default();
    let unknown = || "<unknown>".to_string();
    let percent = |value: &Value| value.as_i64().map(|v| format!("{v}%"));
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let current = statuses.get(i);
            let source = |key: &str| current.map(|c| &c[key]).filter(|s| s.is_object());
            match text(&metric["type"]) {
                kind @ ("External" | "Object") => {
                    let key = if kind == "External" { "external" } else { "object" };
                    let target = &metric[key]["target"];
                    if target["averageValue"].is_null() {
                        let now =
                            source(key).map_or_else(unknown, |s| text(&s["current"]["value"]).to_string());
                        format!("{now}/{}", text(&target["value"]))
                    } else {
                        let now = source(key)
                            .and_then(|s| s["current"]["averageValue"].as_str().map(str::to_string))
                            .unwrap_or_else(unknown);
                        format!("{now}/{} (avg)", text(&target["averageValue"]))
                    }
                }
                "Pods" => {
                    let now = source("pods")
                        .map_or_else(unknown, |s| text(&s["current"]["averageValue"]).to_string());
                    format!("{now}/{}", text(&metric["pods"]["target"]["averageValue"]))
                }
                kind @ ("Resource" | "ContainerResource") => {
                    let key = if kind == "Resource" { "resource" } else { "containerResource" };
                    let target = &metric[key]["target"];
                    let name = text(&metric[key]["name"]);
                    if target["averageValue"].is_null() {
                        let now = source(key)
                            .and_then(|s| percent(&s["current"]["averageUtilization"]))
                            .unwrap_or_else(unknown);
                        let wanted =
                            percent(&target["averageUtilization"]).unwrap_or_else(|| "<auto>".to_string());
                        format!("{name}: {now}/{wanted}")
                    } else {
                        let now = source(key)
                            .map_or_else(unknown, |s| text(&s["current"]["averageValue"]).to_string());
                        format!("{name}: {now}/{}", text(&target["averageValue"]))
                    }
                }
                _ => "<unknown type>".to_string(),
            }
        })
        .collect();
    if list.len() > 2 {
        format!("{} + {} more...", list[..2].join(", "), list.len() - 2)
    } else {
        list.join(", ")
    }
}

/// printers.go `printControllerRevision`: CONTROLLER is `<kind>.<group>/<name>` in lower case.
fn controllerrevision_row(revision: &Value, now: Ages) -> Vec<Value> {
    let controller = revision["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map(|owner| {
            let group = text(&owner["apiVersion"]).rsplit_once('/').map(|(g, _)| g).unwrap_or("");
            let kind = if group.is_empty() {
                text(&owner["kind"]).to_string()
            } else {
                format!("{}.{group}", text(&owner["kind"]))
            };
            format!("{}/{}", kind.to_lowercase(), text(&owner["name"]))
        })
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        revision["metadata"]["name"].clone(),
        json!(controller),
        json!(int(&revision["revision"])),
        age(revision, now),
    ]
}

/// printers.go `printJob` (v1.33): STATUS from conditions, COMPLETIONS, DURATION.
fn job_row(job: &Value, now: Ages) -> Vec<Value> {
    let spec = &job["spec"];
    let status = &job["status"];
    let succeeded = int(&status["succeeded"]);
    let completions = match spec["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match spec["parallelism"].as_i64().unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let parse = |v: &Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
    let duration = match (parse(&status["startTime"]), parse(&status["completionTime"])) {
        (None, _) => String::new(),
        (Some(start), None) => now.since(start),
        (Some(start), Some(end)) => human_duration(end.duration_since(start).as_secs()),
    };
    let conditions = &status["conditions"];
    let state = if condition::is_true(conditions, "Complete") {
        "Complete"
    } else if condition::is_true(conditions, "Failed") {
        "Failed"
    } else if !job["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if condition::is_true(conditions, "Suspended") {
        "Suspended"
    } else if condition::is_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else if condition::is_true(conditions, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (names, images) = containers_and_images(&spec["template"]);
    vec![
        job["metadata"]["name"].clone(),
        json!(state),
        json!(completions),
        json!(duration),
        age(job, now),
        names,
        images,
        json!(format_selector(&spec["selector"])),
    ]
}

/// printers.go `printCronJob`: `<none>` for an unset time zone or a CronJob never scheduled;
/// `printBoolPtr` for `suspend`.
fn cronjob_row(cj: &Value, now: Ages) -> Vec<Value> {
    let spec = &cj["spec"];
    let last_schedule = match &cj["status"]["lastScheduleTime"] {
        Value::Null => "<none>".to_string(),
        at => since(at, now),
    };
    let suspend = match spec["suspend"].as_bool() {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let job_spec = &spec["jobTemplate"]["spec"];
    let (names, images) = containers_and_images(&job_spec["template"]);
    let selector = if job_spec["selector"].is_null() {
        "<none>".to_string()
    } else {
        format_selector(&job_spec["selector"])
    };
    vec![
        cj["metadata"]["name"].clone(),
        spec["schedule"].clone(),
        json!(spec["timeZone"].as_str().unwrap_or("<none>")),
        json!(suspend),
        json!(cj["status"]["active"].as_array().map_or(0, Vec::len)),
        json!(last_schedule),
        age(cj, now),
        names,
        images,
        json!(selector),
    ]
}

/// printers.go `printPodDisruptionBudget`: `N/A` for the bound that is not set.
fn poddisruptionbudget_row(pdb: &Value, now: Ages) -> Vec<Value> {
    let bound = |value: &Value| match value {
        Value::Null => "N/A".to_string(),
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    vec![
        pdb["metadata"]["name"].clone(),
        json!(bound(&pdb["spec"]["minAvailable"])),
        json!(bound(&pdb["spec"]["maxUnavailable"])),
        json!(int(&pdb["status"]["disruptionsAllowed"])),
        age(pdb, now),
    ]
}

fn map_len(value: &Value) -> usize {
    value.as_object().map_or(0, |m| m.len())
}

fn configmap_row(cm: &Value, now: Ages) -> Vec<Value> {
    let data = map_len(&cm["data"]) + map_len(&cm["binaryData"]);
    vec![cm["metadata"]["name"].clone(), json!(data), age(cm, now)]
}

fn secret_row(secret: &Value, now: Ages) -> Vec<Value> {
    let data = map_len(&secret["data"]) + map_len(&secret["stringData"]);
    vec![secret["metadata"]["name"].clone(), json!(text(&secret["type"])), json!(data), age(secret, now)]
}

fn serviceaccount_row(sa: &Value, now: Ages) -> Vec<Value> {
    let secrets = sa["secrets"].as_array().map_or(0, Vec::len);
    vec![sa["metadata"]["name"].clone(), json!(secrets), age(sa, now)]
}

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

fn namespace_row(ns: &Value, now: Ages) -> Vec<Value> {
    vec![ns["metadata"]["name"].clone(), json!(text(&ns["status"]["phase"])), age(ns, now)]
}

/// printers.go `printEvent`, for core/v1 and events.k8s.io/v1 field names.
fn event_row(event: &Value, now: Ages) -> Vec<Value> {
    // events.k8s.io/v1 renames: regarding, note, deprecated{First,Last}Timestamp, deprecatedCount.
    let pick = |core: &str, events: &str| {
        if event[core].is_null() { event[events].clone() } else { event[core].clone() }
    };
    let first = pick("firstTimestamp", "deprecatedFirstTimestamp");
    let first = if first.as_str().is_some_and(|s| !s.is_empty()) {
        since(&first, now)
    } else {
        since(&event["eventTime"], now)
    };
    let last = pick("lastTimestamp", "deprecatedLastTimestamp");
    let mut last =
        if last.as_str().is_some_and(|s| !s.is_empty()) { since(&last, now) } else { first.clone() };
    let mut count = pick("count", "deprecatedCount").as_i64().unwrap_or(0);
    if event["series"].is_object() {
        last = since(&event["series"]["lastObservedTime"], now);
        count = int(&event["series"]["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = pick("involvedObject", "regarding");
    let kind = text(&involved["kind"]).to_lowercase();
    let target =
        if text(&involved["name"]).is_empty() { kind } else { format!("{kind}/{}", text(&involved["name"])) };
    let source = &event["source"];
    let first_non_empty = |a: &str, b: &str| if a.is_empty() { b.to_string() } else { a.to_string() };
    let component = first_non_empty(
        text(&source["component"]),
        &first_non_empty(text(&event["reportingController"]), text(&event["deprecatedSource"]["component"])),
    );
    let host = first_non_empty(text(&source["host"]), text(&event["reportingInstance"]));
    let source = match (component.is_empty(), host.is_empty()) {
        (true, _) => "<unknown>".to_string(),
        (false, true) => component,
        (false, false) => format!("{component}, {host}"),
    };
    let message = pick("message", "note");
    vec![
        json!(last),
        json!(text(&event["type"])),
        json!(text(&event["reason"])),
        json!(target),
        json!(text(&involved["fieldPath"])),
        json!(source),
        json!(text(&message).trim()),
        json!(first),
        json!(count),
        event["metadata"]["name"].clone(),
    ]
}

fn lease_row(lease: &Value, now: Ages) -> Vec<Value> {
    vec![
        lease["metadata"]["name"].clone(),
        json!(or_none(text(&lease["spec"]["holderIdentity"]))),
        age(lease, now),
    ]
}

/// `printRoleBinding`/`printClusterRoleBinding`: the role as `Kind/name`, then (wide) the subjects
/// split by `rbac.SubjectsStrings` (pkg/apis/rbac/helpers.go): users, groups, and service
/// accounts as `namespace/name`, each list joined with `, `.
fn binding_row(binding: &Value, now: Ages) -> Vec<Value> {
    let role = format!("{}/{}", text(&binding["roleRef"]["kind"]), text(&binding["roleRef"]["name"]));
    let (mut users, mut groups, mut accounts) = (Vec::new(), Vec::new(), Vec::new());
    for subject in binding["subjects"].as_array().into_iter().flatten() {
        let name = text(&subject["name"]);
        match text(&subject["kind"]) {
            "User" => users.push(name.to_string()),
            "Group" => groups.push(name.to_string()),
            "ServiceAccount" => accounts.push(format!("{}/{name}", text(&subject["namespace"]))),
            _ => {}
        }
    }
    vec![
        binding["metadata"]["name"].clone(),
        json!(role),
        age(binding, now),
        json!(users.join(", ")),
        json!(groups.join(", ")),
        json!(accounts.join(", ")),
    ]
}

/// The default convertor: name and the creation time in RFC 3339 (UTC).
fn generic_row(object: &Value, _now: Ages) -> Vec<Value> {
    let created = object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    vec![object["metadata"]["name"].clone(), json!(created)]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources;

    const NOW: &str = "2026-01-01T12:00:00Z";

    /// A misspelt kind in the printer table would silently get the default columns.
    #[test]
    fn every_printer_serves_a_served_kind_once() {
        let types = resources::built_in();
        let mut seen = BTreeSet::new();
        for printer in PRINTERS {
            for (group, kind) in printer.kinds {
                assert!(
                    types.iter().any(|rt| rt.group == *group && rt.kind == *kind),
                    "{group}/{kind} is not served"
                );
                assert!(seen.insert((group, kind)), "{group}/{kind} has two printers");
            }
        }
        let pods = resources::find(&types, "", "v1", "pods").unwrap();
        assert_eq!(printer(pods).columns.len(), 9);
    }

    fn table(plural: &str, group: &str, objects: &[Value]) -> Value {
        let types = resources::built_in();
        let rt = resources::find(&types, group, "v1", plural).unwrap();
        render(rt, objects, "42", NOW.parse().unwrap())
    }

    /// The table as kubectl prints it: header of priority-0 columns (or all with `wide`), rows.
    fn printed(table: &Value, wide: bool) -> String {
        let columns = table["columnDefinitions"].as_array().unwrap();
        let shown: Vec<usize> = (0..columns.len()).filter(|i| wide || columns[*i]["priority"] == 0).collect();
        let cell = |v: &Value| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let mut lines = vec![
            shown.iter().map(|i| columns[*i]["name"].as_str().unwrap().to_uppercase()).collect::<Vec<_>>(),
        ];
        for row in table["rows"].as_array().unwrap() {
            lines.push(shown.iter().map(|i| cell(&row["cells"][*i])).collect());
        }
        lines.iter().map(|l| l.join(" | ")).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn human_durations_follow_apimachinery() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (119, "119s"),
            (120, "2m"),
            (303, "5m3s"),
            (600, "10m"),
            (10_799, "179m"),
            (3 * 3600, "3h"),
            (3 * 3600 + 60 * 7, "3h7m"),
            (8 * 3600, "8h"),
            (47 * 3600, "47h"),
            (2 * 86_400, "2d"),
            (2 * 86_400 + 5 * 3600, "2d5h"),
            (8 * 86_400, "8d"),
            (729 * 86_400, "729d"),
            (730 * 86_400, "2y"),
            (731 * 86_400, "2y1d"),
            (8 * 365 * 86_400, "8y"),
        ];
        for (seconds, expected) in cases {
            assert_eq!(human_duration(seconds), expected, "{seconds}s");
        }
    }

    #[test]
    fn nodes() {
        let topology = crate::sim::topology::Topology::default_lab();
        let created: Timestamp = "2026-01-01T11:54:57Z".parse().unwrap();
        let mut nodes: Vec<Value> = topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut node = crate::sim::topology::node_object(spec, i, created);
                node["metadata"]["creationTimestamp"] = json!("2026-01-01T11:54:57Z");
                node
            })
            .collect();
        nodes[1]["spec"]["unschedulable"] = json!(true);
        nodes[2]["status"]["conditions"][3]["status"] = json!("Unknown");
        insta::assert_snapshot!(printed(&table("nodes", "", &nodes), true));
    }

    fn pod(name: &str, status: Value) -> Value {
        json!({
            "metadata": {"name": name, "namespace": "default", "creationTimestamp": "2026-01-01T11:00:00Z"},
            "spec": {"nodeName": "gpu-1", "containers": [{"name": "agent", "image": "busybox:1.37"}]},
            "status": status,
        })
    }

    #[test]
    fn pods() {
        let running = pod(
            "running",
            json!({
                "phase": "Running", "podIP": "10.244.2.7", "podIPs": [{"ip": "10.244.2.7"}],
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [{"name": "agent", "ready": true, "restartCount": 2,
                    "state": {"running": {"startedAt": "2026-01-01T11:50:00Z"}},
                    "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T11:49:30Z"}}}],
            }),
        );
        let pull = pod(
            "pull-backoff",
            json!({
                "phase": "Pending",
                "containerStatuses": [{"name": "agent", "ready": false, "restartCount": 0,
                    "state": {"waiting": {"reason": "ImagePullBackOff", "message": "Back-off pulling image"}}}],
            }),
        );
        let mut init = pod(
            "init-crash",
            json!({
                "phase": "Pending",
                "initContainerStatuses": [{"name": "config-manager-init", "ready": false, "restartCount": 4,
                    "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                    "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T11:58:00Z"}}}],
                "containerStatuses": [{"name": "agent", "ready": false, "restartCount": 0,
                    "state": {"waiting": {"reason": "PodInitializing"}}}],
            }),
        );
        init["spec"]["initContainers"] =
            json!([{"name": "config-manager-init", "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4"}]);
        let mut pending = pod("unscheduled", json!({"phase": "Pending"}));
        pending["spec"].as_object_mut().unwrap().remove("nodeName");
        pending["spec"]["readinessGates"] = json!([{"conditionType": "example.com/ready"}]);
        let mut terminating = running.clone();
        terminating["metadata"]["name"] = json!("terminating");
        terminating["metadata"]["deletionTimestamp"] = json!("2026-01-01T11:59:50Z");
        let completed = pod(
            "completed",
            json!({
                "phase": "Succeeded",
                "containerStatuses": [{"name": "agent", "ready": false, "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}],
            }),
        );
        let objects = [running, pull, init, pending, terminating, completed];
        insta::assert_snapshot!(printed(&table("pods", "", &objects), true));
    }

    #[test]
    fn daemonsets_show_the_split_generation_counters() {
        let ds = json!({
            "metadata": {"name": "gpu-agent", "namespace": "gpu-operator", "creationTimestamp": "2026-01-01T11:55:00Z"},
            "spec": {
                "selector": {"matchLabels": {"app": "gpu-agent"}},
                "template": {"spec": {
                    "nodeSelector": {"nvidia.com/gpu.present": "true"},
                    "containers": [{"name": "toolkit", "image": "nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04"},
                                   {"name": "sidecar", "image": "busybox:1.37"}],
                }},
            },
            "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2,
                       "updatedNumberScheduled": 1, "numberAvailable": 2},
        });
        let mut plain = ds.clone();
        plain["metadata"]["name"] = json!("plain");
        plain["spec"]["template"]["spec"].as_object_mut().unwrap().remove("nodeSelector");
        plain["spec"]["selector"] = json!({"matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}, {"key": "app", "operator": "Exists"}]});
        insta::assert_snapshot!(printed(&table("daemonsets", "apps", &[ds, plain]), true));
    }

    #[test]
    fn workloads() {
        let template = json!({"spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}});
        let deploy = json!({
            "metadata": {"name": "web", "creationTimestamp": "2026-01-01T09:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
        });
        let rs = json!({
            "metadata": {"name": "web-5d9c7b", "creationTimestamp": "2026-01-01T09:00:00Z"},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web", "pod-template-hash": "5d9c7b"}}, "template": template},
            "status": {"replicas": 3, "readyReplicas": 2},
        });
        let job = json!({
            "metadata": {"name": "train", "creationTimestamp": "2026-01-01T10:00:00Z"},
            "spec": {"completions": 4, "parallelism": 2, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}}, "template": template},
            "status": {"succeeded": 4, "startTime": "2026-01-01T10:00:05Z", "completionTime": "2026-01-01T10:07:08Z",
                       "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]},
        });
        let running_job = json!({
            "metadata": {"name": "sweep", "creationTimestamp": "2026-01-01T11:30:00Z"},
            "spec": {"parallelism": 3, "template": template},
            "status": {"startTime": "2026-01-01T11:30:00Z"},
        });
        let revision = json!({
            "metadata": {"name": "gpu-agent-6f7b9c8d4", "creationTimestamp": "2026-01-01T11:00:00Z",
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "gpu-agent", "uid": "u", "controller": true}]},
            "revision": 2,
        });
        let out = [
            printed(&table("deployments", "apps", &[deploy]), true),
            printed(&table("replicasets", "apps", &[rs]), true),
            printed(&table("jobs", "batch", &[job, running_job]), true),
            printed(&table("controllerrevisions", "apps", &[revision]), true),
        ];
        insta::assert_snapshot!(out.join("\n\n"));
    }

    #[test]
    fn config_quota_namespace_event_and_generic() {
        let cm = json!({"metadata": {"name": "plugin-configs", "creationTimestamp": "2026-01-01T11:59:00Z"},
                        "data": {"default": "x", "ts-4": "y"}, "binaryData": {"blob": "AA=="}});
        let quota = json!({
            "metadata": {"name": "team-a-gpus", "creationTimestamp": "2026-01-01T11:00:00Z"},
            "spec": {"hard": {"requests.nvidia.com/gpu": "4", "limits.cpu": "8", "pods": "10"}},
            "status": {"hard": {"requests.nvidia.com/gpu": "4", "limits.cpu": "8", "pods": "10"},
                       "used": {"requests.nvidia.com/gpu": "1", "pods": "1"}},
        });
        let ns = json!({"metadata": {"name": "team-a", "creationTimestamp": "2025-12-30T12:00:00Z"}, "status": {"phase": "Active"}});
        let event = json!({
            "metadata": {"name": "web-0.18a1", "namespace": "default", "creationTimestamp": "2026-01-01T11:59:00Z"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-0", "fieldPath": "spec.containers{web}"},
            "reason": "BackOff", "message": "Back-off pulling image \"nginx:nope\"\n", "type": "Normal",
            "source": {"component": "kubelet", "host": "gpu-1"},
            "firstTimestamp": "2026-01-01T11:55:00Z", "lastTimestamp": "2026-01-01T11:59:30Z", "count": 12,
        });
        let scheduler_event = json!({
            "metadata": {"name": "web-1.18a2", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "web-1"},
            "reason": "FailedScheduling", "type": "Warning",
            "message": "0/5 nodes are available: 5 Insufficient nvidia.com/gpu. preemption: 0/5 nodes are available: 5 No preemption victims found for incoming pod.",
            "eventTime": "2026-01-01T11:58:00.000000Z", "reportingController": "default-scheduler", "reportingInstance": "default-scheduler-control-plane",
        });
        let lease = json!({"metadata": {"name": "gpu-1", "creationTimestamp": "2026-01-01T11:00:00Z"}, "spec": {"holderIdentity": "gpu-1"}});
        let crd = json!({"metadata": {"name": "prometheusrules.monitoring.coreos.com", "creationTimestamp": "2026-01-01T11:00:00Z"}});
        let out = [
            printed(&table("configmaps", "", &[cm]), true),
            printed(&table("resourcequotas", "", &[quota]), true),
            printed(&table("namespaces", "", &[ns]), true),
            printed(&table("events", "", &[event, scheduler_event]), true),
            printed(&table("leases", "coordination.k8s.io", &[lease]), true),
            printed(&table("customresourcedefinitions", "apiextensions.k8s.io", &[crd]), true),
        ];
        insta::assert_snapshot!(out.join("\n\n"));
    }

    #[test]
    fn bindings_print_the_role_and_split_subjects() {
        let binding = json!({
            "metadata": {"name": "gpu-readers", "namespace": "team-a", "creationTimestamp": "2026-01-01T11:00:00Z"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
            "subjects": [
                {"kind": "User", "name": "alice"}, {"kind": "User", "name": "bob"},
                {"kind": "Group", "name": "team-a"},
                {"kind": "ServiceAccount", "name": "agent", "namespace": "gpu-operator"},
            ],
        });
        let role = json!({"metadata": {"name": "reader", "namespace": "team-a", "creationTimestamp": "2026-01-01T11:00:00Z"}});
        let cluster_binding = json!({
            "metadata": {"name": "plugin", "creationTimestamp": "2026-01-01T11:59:00Z"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "plugin-role"},
        });
        let out = [
            printed(
                &table("rolebindings", "rbac.authorization.k8s.io", std::slice::from_ref(&binding)),
                false,
            ),
            printed(&table("rolebindings", "rbac.authorization.k8s.io", &[binding]), true),
            printed(&table("roles", "rbac.authorization.k8s.io", &[role]), true),
            printed(&table("clusterrolebindings", "rbac.authorization.k8s.io", &[cluster_binding]), true),
        ];
        insta::assert_snapshot!(out.join("\n\n"));
    }

    #[test]
    fn rows_carry_partial_object_metadata() {
        let ns =
            json!({"metadata": {"name": "team-a", "labels": {"team": "a"}}, "status": {"phase": "Active"}});
        let t = table("namespaces", "", &[ns]);
        assert_eq!(t["kind"], "Table");
        assert_eq!(t["metadata"]["resourceVersion"], "42");
        assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
        assert_eq!(t["rows"][0]["object"]["metadata"]["labels"]["team"], "a");
        assert_eq!(t["rows"][0]["cells"][2], "<unknown>");
    }

    /// A row cached with deferred ages, completed at any moment, is the row rendered then:
    /// the ages (AGE, RESTARTS' "ago", an event's LAST SEEN, a running Job's DURATION) count
    /// from each request, not from when the row was cached.
    #[test]
    fn cached_rows_render_as_fresh_rows_at_every_moment() {
        let types = resources::built_in();
        let mut restarted = pod(
            "restarted",
            json!({
                "phase": "Running",
                "containerStatuses": [{"name": "agent", "ready": true, "restartCount": 3,
                    "state": {"running": {"startedAt": "2026-01-01T11:50:00Z"}},
                    "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2026-01-01T11:49:30.250Z"}}}],
            }),
        );
        // Text that looks like a marker must stay text.
        restarted["metadata"]["annotations"] = json!({"note": "\u{1}0000:12\u{2} \\u0001"});
        let event = json!({
            "metadata": {"name": "e.1", "namespace": "default", "creationTimestamp": "2026-01-01T11:59:00Z"},
            "involvedObject": {"kind": "Pod", "name": "web-0"}, "reason": "BackOff", "type": "Normal",
            "series": {"count": 4, "lastObservedTime": "2026-01-01T11:59:59.999999Z"},
            "eventTime": "2026-01-01T11:58:00.000000Z", "reportingController": "kubelet",
        });
        let job = json!({
            "metadata": {"name": "train", "namespace": "default", "creationTimestamp": "2026-01-01T11:00:00Z"},
            "spec": {"completions": 2, "template": {"spec": {"containers": [{"name": "t", "image": "cuda"}]}}},
            "status": {"startTime": "2026-01-01T11:00:05Z", "succeeded": 1},
        });
        let undated = json!({"metadata": {"name": "undated", "namespace": "default"}});
        let cases = [
            ("pods", "", "v1", vec![restarted, undated.clone()]),
            ("events", "", "v1", vec![event]),
            ("jobs", "batch", "v1", vec![job]),
            ("configmaps", "", "v1", vec![undated]),
        ];
        for (plural, group, version, objects) in cases {
            let rt = resources::find(&types, group, version, plural).unwrap();
            let templates: Vec<String> = objects.iter().map(|object| row_template(rt, object)).collect();
            for now in ["2026-01-01T12:00:00Z", "2026-01-01T12:07:31Z", "2026-01-09T00:00:00Z"] {
                let now: Timestamp = now.parse().unwrap();
                let fresh = render(rt, &objects, "42", now);
                let cached =
                    render_rows(rt, templates.iter().map(String::as_str), "42", Some("tok"), true, now);
                let mut cached: Value = serde_json::from_str(&cached).unwrap();
                assert_eq!(cached["metadata"]["continue"], "tok");
                cached["metadata"].as_object_mut().unwrap().remove("continue");
                assert_eq!(cached, fresh, "{plural} at {now}");
            }
        }
        let rt = resources::find(&types, "", "v1", "pods").unwrap();
        let later = render_rows(rt, std::iter::empty(), "7", None, false, NOW.parse().unwrap());
        assert_eq!(
            later,
            r#"{"kind":"Table","apiVersion":"meta.k8s.io/v1","metadata":{"resourceVersion":"7"},"columnDefinitions":[],"rows":[]}"#
        );
    }
}
