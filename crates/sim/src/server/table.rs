//! meta.k8s.io/v1 `Table` responses: each kind's printer (`Strategy::printer`, in its file under
//! `sim/kinds/`) renders the rows, this module the document around them.
//!
//! The server always prints the wide form (`GenerateOptions{Wide: true}` in apiserver's table
//! convertor); kubectl hides `priority: 1` columns unless `-o wide`. Rows carry
//! `PartialObjectMetadata` (the server default `includeObject=Metadata`), which kubectl reads
//! for `-A`'s NAMESPACE column and `--show-labels`.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::{
    kinds::printer::{Ages, Column, Printer, age_mark, human_duration},
    resources::ResourceType,
};

fn definitions(columns: &[Column]) -> Vec<Value> {
    columns
        .iter()
        .map(|Column(name, kind, priority, description)| {
            let format = if *name == "Name" { "name" } else { "" };
            json!({"name": name, "type": kind, "format": format, "description": description, "priority": priority})
        })
        .collect()
}

/// The printer for `rt`.
fn printer(rt: &ResourceType) -> &'static Printer {
    rt.strategy().printer()
}

/// Renders `objects` (full objects of type `rt`) as a `Table` whose rows carry
/// `PartialObjectMetadata` (the server default `includeObject=Metadata`), which kubectl reads
/// for `-A`'s NAMESPACE column and `--show-labels`.
pub fn render(rt: &ResourceType, objects: &[Value], resource_version: &str, now: Timestamp) -> Value {
    let Printer { columns, row } = printer(rt);
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

/// What a Table row carries as its `object` (the `includeObject` query parameter,
/// apimachinery/pkg/apis/meta/v1 `IncludeObjectPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncludeObject {
    /// `None`: no object.
    Nothing,
    /// `Metadata` (the default): `PartialObjectMetadata`.
    Metadata,
    /// `Object`: the whole object, which kubectl asks for to sort rows by a field outside the
    /// metadata (`kubectl get --sort-by=.lastTimestamp`).
    Object,
}

impl IncludeObject {
    /// The policy `value` names; `None` for a value upstream refuses.
    pub fn parse(value: Option<&str>) -> Option<IncludeObject> {
        match value {
            None | Some("" | "Metadata") => Some(IncludeObject::Metadata),
            Some("Object") => Some(IncludeObject::Object),
            Some("None") => Some(IncludeObject::Nothing),
            Some(_) => None,
        }
    }
}

/// One row as [`row_template`] renders it, carrying the whole object or none, per `include`
/// (`IncludeObject::Metadata` is [`row_template`]'s, which the store caches).
pub fn row_template_with(rt: &ResourceType, object: &Value, include: IncludeObject) -> String {
    let row = printer(rt).row;
    match include {
        IncludeObject::Metadata => row_template(rt, object),
        IncludeObject::Object => json!({"cells": row(object, Ages::Deferred), "object": object}).to_string(),
        IncludeObject::Nothing => json!({"cells": row(object, Ages::Deferred)}).to_string(),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resources;

    const NOW: &str = "2026-01-01T12:00:00Z";

    /// Every kind's printer prints one cell per column, even of an object with nothing set.
    #[test]
    fn every_printer_prints_a_cell_per_column() {
        for kind in crate::kinds::BUILT_IN {
            let printer = kind.strategy.printer();
            let cells = (printer.row)(&json!({"metadata": {"name": "x"}}), Ages::At(NOW.parse().unwrap()));
            assert_eq!(cells.len(), printer.columns.len(), "{}", kind.kind);
        }
        let types = resources::built_in();
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
        let topology = crate::topology::Topology::default_lab();
        let created: Timestamp = "2026-01-01T11:54:57Z".parse().unwrap();
        let mut nodes: Vec<Value> = topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut node = crate::topology::node_object(spec, i, created);
                node["metadata"]["creationTimestamp"] = json!("2026-01-01T11:54:57Z");
                node
            })
            .collect();
        nodes[1]["spec"]["unschedulable"] = json!(true);
        nodes[2]["status"]["conditions"][3]["status"] = json!("Unknown");
        insta::assert_snapshot!(printed(&table("nodes", "", &nodes), true));
    }

    /// The shared test pod bound to `gpu-1`, created an hour before the table's clock, with `status`.
    fn pod(name: &str, status: Value) -> Value {
        let mut pod = crate::k8s::testing::pod(name).node_name("gpu-1").json();
        pod["metadata"]["creationTimestamp"] = json!("2026-01-01T11:00:00Z");
        pod["status"] = status;
        pod
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
