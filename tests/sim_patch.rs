//! Write semantics of the simulator: strategic merge patch, server-side apply with managedFields,
//! admission defaults and validation, field validation, and the OpenAPI v3 documents.

use k8s_openapi::jiff::Timestamp;
use lab_runner::sim::harness::rt;
use lab_runner::sim::resources::{ResourceType, built_in};
use lab_runner::sim::server::fieldvalidation::{self, Mode};
use lab_runner::sim::server::openapi;
use lab_runner::sim::server::patch::{self, ApplyOptions, Error, PatchKind};
use lab_runner::sim::{kinds::Cause, registry::admission};
use serde_json::{Value, json};

fn smp(resource: &str, current: Value, body: Value) -> Value {
    let rt = rt(resource);
    patch::apply_patch(&rt, PatchKind::StrategicMerge, &current, body.to_string().as_bytes()).unwrap()
}

fn ds(containers: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": containers}},
        },
    })
}

const DS: &str = "daemonsets.apps";
const POD: &str = "pods";

// --- strategic merge patch -------------------------------------------------------------------

#[test]
fn smp_merges_containers_by_name_and_replaces_tolerations() {
    let mut current = ds(json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]));
    current["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "x", "operator": "Exists"}]);
    let out = smp(
        DS,
        current,
        json!({"spec": {"template": {"spec": {
            "containers": [{"name": "b", "image": "b:2"}],
            "tolerations": [{"key": "y", "operator": "Exists"}],
        }}}}),
    );
    assert_eq!(
        out["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}])
    );
    assert_eq!(out["spec"]["template"]["spec"]["tolerations"], json!([{"key": "y", "operator": "Exists"}]));
}

#[test]
fn smp_directives_table() {
    struct Case {
        name: &'static str,
        current: Value,
        patch: Value,
        want: Value,
    }
    let pod = |spec: Value| json!({"metadata": {"name": "p"}, "spec": spec});
    let cases = [
        Case {
            name: "null deletes a key",
            current: pod(json!({"nodeName": "n1", "hostname": "h"})),
            patch: json!({"spec": {"nodeName": null}}),
            want: pod(json!({"hostname": "h"})),
        },
        Case {
            name: "$patch: delete removes a list element by merge key",
            current: pod(json!({"containers": [{"name": "a"}, {"name": "b"}]})),
            patch: json!({"spec": {"containers": [{"$patch": "delete", "name": "a"}]}}),
            want: pod(json!({"containers": [{"name": "b"}]})),
        },
        Case {
            name: "$patch: replace on a list replaces it",
            current: pod(json!({"containers": [{"name": "a"}, {"name": "b"}]})),
            patch: json!({"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}}),
            want: pod(json!({"containers": [{"name": "c"}]})),
        },
        Case {
            name: "$patch: replace on a map replaces it",
            current: pod(json!({"securityContext": {"runAsUser": 1, "runAsGroup": 2}})),
            patch: json!({"spec": {"securityContext": {"$patch": "replace", "fsGroup": 3}}}),
            want: pod(json!({"securityContext": {"fsGroup": 3}})),
        },
        Case {
            name: "$patch: delete on a map empties it",
            current: pod(json!({"securityContext": {"runAsUser": 1}})),
            patch: json!({"spec": {"securityContext": {"$patch": "delete"}}}),
            want: pod(json!({"securityContext": {}})),
        },
        Case {
            name: "env merges by name, volumeMounts by mountPath, ports by containerPort",
            current: pod(json!({"containers": [{"name": "a",
                "env": [{"name": "A", "value": "1"}],
                "volumeMounts": [{"name": "v", "mountPath": "/x"}],
                "ports": [{"containerPort": 80, "name": "http"}]}]})),
            patch: json!({"spec": {"containers": [{"name": "a",
                "env": [{"name": "B", "value": "2"}],
                "volumeMounts": [{"name": "w", "mountPath": "/x"}],
                "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}),
            want: pod(json!({"containers": [{"name": "a",
                // New items go before the server-only ones (mergeSortedSlice).
                "env": [{"name": "B", "value": "2"}, {"name": "A", "value": "1"}],
                "volumeMounts": [{"name": "w", "mountPath": "/x"}],
                "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}]}]})),
        },
        Case {
            name: "$setElementOrder orders the merged list",
            current: pod(json!({"containers": [{"name": "a"}, {"name": "b"}]})),
            patch: json!({"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "a", "image": "i"}]}}),
            want: pod(json!({"containers": [{"name": "b"}, {"name": "a", "image": "i"}]})),
        },
        Case {
            name: "$retainKeys drops keys not listed",
            current: pod(json!({"volumes": [{"name": "v", "hostPath": {"path": "/h"}}]})),
            patch: json!({"spec": {"volumes": [{"$retainKeys": ["emptyDir", "name"], "emptyDir": {}, "hostPath": null, "name": "v"}]}}),
            want: pod(json!({"volumes": [{"name": "v", "emptyDir": {}}]})),
        },
        Case {
            name: "finalizers merge, $deleteFromPrimitiveList removes",
            current: json!({"metadata": {"name": "p", "finalizers": ["a", "b"]}}),
            patch: json!({"metadata": {"finalizers": ["c"], "$deleteFromPrimitiveList/finalizers": ["a"]}}),
            // New items go first (mergeSortedSlice), whichever order Go's map iteration takes.
            want: json!({"metadata": {"name": "p", "finalizers": ["c", "b"]}}),
        },
        Case {
            name: "ownerReferences merge by uid",
            current: json!({"metadata": {"name": "p", "ownerReferences": [{"uid": "1", "name": "x"}]}}),
            patch: json!({"metadata": {"ownerReferences": [{"uid": "2", "name": "y"}]}}),
            want: json!({"metadata": {"name": "p", "ownerReferences": [{"uid": "2", "name": "y"}, {"uid": "1", "name": "x"}]}}),
        },
        Case {
            name: "status conditions merge by type",
            current: json!({"metadata": {"name": "p"}, "status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "PodScheduled", "status": "True"}]}}),
            patch: json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}),
            want: json!({"metadata": {"name": "p"}, "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]}}),
        },
        Case {
            name: "args are replaced, not merged",
            current: pod(json!({"containers": [{"name": "a", "args": ["1", "2"]}]})),
            patch: json!({"spec": {"containers": [{"name": "a", "args": ["3"]}]}}),
            want: pod(json!({"containers": [{"name": "a", "args": ["3"]}]})),
        },
    ];
    for case in cases {
        let got = smp(POD, case.current, case.patch);
        assert_eq!(got, case.want, "{}", case.name);
    }
}

#[test]
fn rollout_undo_replaces_the_template_wholesale() {
    let mut current =
        ds(json!([{"name": "agent", "image": "agent:2", "env": [{"name": "NEW", "value": "1"}]}]));
    current["spec"]["template"]["metadata"]["annotations"] =
        json!({"kubectl.kubernetes.io/restartedAt": "now"});
    // A ControllerRevision's data, verbatim (kubectl rollback.go PATCHes it as is; docs/daemonset.md).
    let undo = json!({"spec": {"template": {"$patch": "replace", "metadata": {"labels": {"app": "agent"}},
        "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}}}});
    let out = smp(DS, current, undo);
    assert_eq!(
        out["spec"]["template"],
        json!({"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "agent", "image": "agent:1"}]}})
    );
    assert_eq!(out["spec"]["selector"], json!({"matchLabels": {"app": "agent"}}));
}

#[test]
fn client_side_apply_patch_from_kubectl_removes_list_elements() {
    // The three-way patch kubectl sent when a container, an env var and the tolerations were
    // dropped from the manifest (kubectl pkg/cmd/apply/patcher.go, a three-way strategic merge).
    let mut current = ds(json!([
        {"name": "agent", "image": "busybox:1.36", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]},
        {"name": "sidecar", "image": "busybox:1.36"},
    ]));
    current["spec"]["template"]["spec"]["tolerations"] = json!([{"operator": "Exists"}]);
    current["spec"]["template"]["spec"]["volumes"] = json!([{"name": "dev", "hostPath": {"path": "/dev"}}]);
    current["spec"]["updateStrategy"] =
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}});
    let body = json!({"metadata": {"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}\n"}},
     "spec": {"template": {"spec": {
       "$setElementOrder/containers": [{"name": "agent"}],
       "$setElementOrder/volumes": [{"name": "dev"}],
       "containers": [{"$setElementOrder/env": [{"name": "B"}], "env": [{"$patch": "delete", "name": "A"}],
                      "image": "busybox:1.37", "name": "agent"},
                     {"$patch": "delete", "name": "sidecar"}],
       "tolerations": null,
       "volumes": [{"$retainKeys": ["emptyDir", "name"], "emptyDir": {}, "hostPath": null, "name": "dev"}]}},
      "updateStrategy": {"rollingUpdate": null, "type": "OnDelete"}}});
    let out = smp(DS, current, body);
    let spec = &out["spec"]["template"]["spec"];
    assert_eq!(
        spec["containers"],
        json!([{"name": "agent", "image": "busybox:1.37", "env": [{"name": "B", "value": "2"}]}])
    );
    assert!(spec.get("tolerations").is_none());
    assert_eq!(spec["volumes"], json!([{"name": "dev", "emptyDir": {}}]));
    assert_eq!(out["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
    assert_eq!(out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"], "{}\n");
}

#[test]
fn smp_errors_are_bad_requests_with_upstream_text() {
    let rt = rt("pods");
    let current = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]}});
    let cases = [
        (json!({"spec": {"containers": [{"image": "x"}]}}), "does not contain declared merge key: name"),
        (json!({"spec": {"$patch": "merge"}}), "unknown patch type: merge in map"),
        (
            json!({"spec": {"containers": [{"$patch": "merge", "name": "a"}]}}),
            "merging lists cannot yet be specified in the patch",
        ),
        (json!({"spec": {"$retainKeys": "x"}}), "invalid patch format of retainKeys"),
        (json!([1]), "invalid JSON document"),
    ];
    for (body, text) in cases {
        let error = patch::apply_patch(&rt, PatchKind::StrategicMerge, &current, body.to_string().as_bytes())
            .unwrap_err();
        assert!(matches!(error, Error::BadRequest(_)), "{body}: {error:?}");
        assert!(error.to_string().contains(text), "{body}: {error}");
    }
}

#[test]
fn strategic_merge_is_refused_for_custom_resources() {
    let mut crd = rt("pods");
    crd.group = "monitoring.coreos.com".into();
    crd.kind = "PrometheusRule".into();
    let error = patch::apply_patch(&crd, PatchKind::StrategicMerge, &json!({}), b"{}").unwrap_err();
    assert!(matches!(error, Error::UnsupportedMediaType));
    let merged = patch::apply_patch(&crd, PatchKind::Merge, &json!({"a": 1}), br#"{"b":2}"#).unwrap();
    assert_eq!(merged, json!({"a": 1, "b": 2}));
}

// --- server-side apply -----------------------------------------------------------------------

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

fn apply(
    rt: &ResourceType,
    current: Option<&Value>,
    body: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> patch::Result<Value> {
    let options = ApplyOptions { field_manager: manager.into(), force };
    patch::server_side_apply_at(rt, current, body, &options, at(now))
}

fn config_map(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": "default"}, "data": data})
}

#[test]
fn ssa_creates_with_apply_managed_fields() {
    let cm = rt("configmaps");
    let created =
        apply(&cm, None, &config_map(json!({"a": "1"})), "kubectl", false, "2026-01-01T00:00:00Z").unwrap();
    assert_eq!(created["data"], json!({"a": "1"}));
    insta::assert_yaml_snapshot!("ssa_create_managed_fields", created["metadata"]["managedFields"]);
}

#[test]
fn ssa_metadata_only_apply_keeps_the_spec() {
    let deploy = rt("deployments.apps");
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}});
    let first = apply(&deploy, None, &manifest, "kubectl", false, "2026-01-01T00:00:00Z").unwrap();
    // kubectl's follow-up apply under another manager holds only metadata (kubectl
    // pkg/cmd/apply/apply.go, field manager `kubectl-last-applied`).
    // kubectl's server-side apply rewrote the client-side annotation to the applied config.
    let last_applied = &first["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"];
    assert!(
        last_applied
            .as_str()
            .unwrap()
            .starts_with(r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web""#)
    );
    let metadata_only = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last_applied}}});
    let second =
        apply(&deploy, Some(&first), &metadata_only, "kubectl-last-applied", false, "2026-01-01T00:01:00Z")
            .unwrap();
    assert_eq!(second["spec"], first["spec"]);
    // The same manager re-applying only metadata does give up (and remove) the spec it owned alone.
    let third =
        apply(&deploy, Some(&second), &metadata_only, "kubectl", false, "2026-01-01T00:02:00Z").unwrap();
    assert!(third.get("spec").is_none_or(|s| s.get("replicas").is_none()), "{third}");
    let managers: Vec<&str> = second["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(managers, vec!["kubectl", "kubectl-last-applied"]);
}

#[test]
fn ssa_removes_a_field_the_manager_stopped_applying_but_keeps_shared_ones() {
    let cm = rt("configmaps");
    let v1 = apply(&cm, None, &config_map(json!({"a": "1", "b": "2"})), "one", false, "2026-01-01T00:00:00Z")
        .unwrap();
    let v2 =
        apply(&cm, Some(&v1), &config_map(json!({"b": "2"})), "two", false, "2026-01-01T00:00:01Z").unwrap();
    let v3 = apply(&cm, Some(&v2), &config_map(json!({})), "one", false, "2026-01-01T00:00:02Z").unwrap();
    assert_eq!(v3["data"], json!({"b": "2"}), "a was only one's; b is still two's");
    let v4 = apply(&cm, Some(&v3), &config_map(json!({})), "two", false, "2026-01-01T00:00:03Z").unwrap();
    assert!(v4.get("data").is_none(), "an emptied map is dropped, as Go's omitempty does: {v4}");
}

#[test]
fn ssa_conflicts_with_another_manager_unless_forced() {
    let cm = rt("configmaps");
    let v1 = apply(&cm, None, &config_map(json!({"a": "1"})), "lab-runner", false, "2026-01-01T00:00:00Z")
        .unwrap();
    let error =
        apply(&cm, Some(&v1), &config_map(json!({"a": "2"})), "kubectl", false, "2026-01-01T00:00:01Z")
            .unwrap_err();
    assert_eq!(error.to_string(), r#"Apply failed with 1 conflict: conflict with "lab-runner": .data.a"#);
    assert_eq!(
        error.causes(),
        vec![Cause {
            reason: "FieldManagerConflict".into(),
            message: r#"conflict with "lab-runner""#.into(),
            field: ".data.a".into()
        }]
    );
    let forced =
        apply(&cm, Some(&v1), &config_map(json!({"a": "2"})), "kubectl", true, "2026-01-01T00:00:01Z")
            .unwrap();
    assert_eq!(forced["data"]["a"], "2");
    let owners: Vec<(&str, bool)> = forced["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["manager"].as_str().unwrap(), e["fieldsV1"].pointer("/f:data/f:a").is_some()))
        .collect();
    assert_eq!(
        owners,
        vec![("kubectl", true)],
        "the forced field moved to kubectl; lab-runner owns nothing left"
    );
    // Same value: shared ownership, no conflict.
    let shared =
        apply(&cm, Some(&v1), &config_map(json!({"a": "1"})), "kubectl", false, "2026-01-01T00:00:01Z")
            .unwrap();
    assert_eq!(shared["metadata"]["managedFields"].as_array().unwrap().len(), 2);
}

#[test]
fn ssa_conflicts_with_update_managers_name_the_api_version_and_time() {
    let deploy = rt("deployments.apps");
    let manifest = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}});
    let created = apply(&deploy, None, &manifest, "lab-runner", false, "2026-01-01T00:00:00Z").unwrap();
    // kubectl scale / edit: an Update by another manager.
    let mut scaled = created.clone();
    scaled["spec"]["replicas"] = json!(3);
    scaled["spec"]["template"]["spec"]["containers"][0]["image"] = json!("nginx:2");
    patch::record_update(
        &deploy,
        "kubectl-edit",
        None,
        Some(&created),
        &mut scaled,
        at("2026-01-01T00:05:00Z"),
    )
    .unwrap();
    let error =
        apply(&deploy, Some(&scaled), &manifest, "lab-runner", false, "2026-01-01T00:06:00Z").unwrap_err();
    insta::assert_snapshot!("ssa_conflict_two_fields", error.to_string());
    assert_eq!(error.causes().len(), 2);
}

#[test]
fn record_update_tracks_created_fields_and_takes_modified_ones() {
    let cm = rt("configmaps");
    let mut created = config_map(json!({"a": "1"}));
    patch::record_update(&cm, "kubectl-create", None, None, &mut created, at("2026-01-01T00:00:00Z"))
        .unwrap();
    insta::assert_yaml_snapshot!("update_create_managed_fields", created["metadata"]["managedFields"]);
    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"team": "a"});
    patch::record_update(
        &cm,
        "kubectl-label",
        None,
        Some(&created),
        &mut labelled,
        at("2026-01-01T00:01:00Z"),
    )
    .unwrap();
    let entries = labelled["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert_eq!(entries[1]["manager"], "kubectl-label");
    assert_eq!(entries[1]["fieldsV1"], json!({"f:metadata": {"f:labels": {".": {}, "f:team": {}}}}));
    // An unchanged object records nothing new.
    let mut same = labelled.clone();
    patch::record_update(&cm, "other", None, Some(&labelled), &mut same, at("2026-01-01T00:02:00Z")).unwrap();
    assert_eq!(same["metadata"]["managedFields"], labelled["metadata"]["managedFields"]);
}

#[test]
fn ssa_merges_containers_by_name_between_managers() {
    let pod = rt("pods");
    let base = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "a", "image": "a:1"}]}});
    let first = apply(&pod, None, &base, "one", false, "2026-01-01T00:00:00Z").unwrap();
    let second_config = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"},
        "spec": {"containers": [{"name": "b", "image": "b:1", "ports": [{"containerPort": 80}]}]}});
    let second = apply(&pod, Some(&first), &second_config, "two", false, "2026-01-01T00:00:01Z").unwrap();
    let names: Vec<&str> = second["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["a", "b"]);
    let two = second["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "two")
        .unwrap();
    assert!(two["fieldsV1"].pointer("/f:spec/f:containers/k:{\"name\":\"b\"}/f:ports/k:{\"containerPort\":80,\"protocol\":\"TCP\"}").is_some(), "{two}");
}

#[test]
fn apply_bodies_decode_from_yaml_and_json() {
    let yaml = patch::decode_apply_body(
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: \"1\"\n",
    )
    .unwrap();
    assert_eq!(yaml["data"]["a"], "1");
    let json = patch::decode_apply_body(br#"{"apiVersion":"v1","kind":"ConfigMap"}"#).unwrap();
    assert_eq!(json["kind"], "ConfigMap");
    assert!(patch::decode_apply_body(b"- a\n- b\n").is_err());
    assert!(patch::decode_apply_body(b"\xff\xfe").is_err());
}

// --- admission -------------------------------------------------------------------------------

fn defaulted(resource: &str, mut object: Value) -> Value {
    admission::apply_defaults(&rt(resource), &mut object);
    object
}

#[test]
fn defaults_snapshots() {
    let template = json!({"metadata": {"labels": {"app": "x"}},
        "spec": {"containers": [{"name": "x", "image": "nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04",
                                 "ports": [{"containerPort": 8080}],
                                 "resources": {"limits": {"nvidia.com/gpu": 1}}}]}});
    let meta = json!({"name": "x", "namespace": "default"});
    insta::assert_yaml_snapshot!(
        "defaults_daemonset",
        defaulted(
            "daemonsets.apps",
            json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}})
        )
    );
    insta::assert_yaml_snapshot!(
        "defaults_deployment",
        defaulted(
            "deployments.apps",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta,
            "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": template}})
        )
    );
    let mut job_template = template.clone();
    job_template["spec"]["restartPolicy"] = json!("Never");
    insta::assert_yaml_snapshot!(
        "defaults_job",
        defaulted(
            "jobs.batch",
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": job_template}})
        )
    );
    insta::assert_yaml_snapshot!(
        "defaults_pod",
        defaulted(
            "pods",
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": {"containers": [{"name": "x", "image": "busybox"}]}})
        )
    );
}

#[test]
fn daemonset_on_delete_gets_no_rolling_update_block() {
    let out = defaulted("daemonsets.apps", json!({"spec": {"updateStrategy": {"type": "OnDelete"}}}));
    assert_eq!(out["spec"]["updateStrategy"], json!({"type": "OnDelete"}));
    assert_eq!(out["spec"]["revisionHistoryLimit"], 10);
}

fn messages(resource: &str, object: Value) -> Vec<String> {
    let rt = rt(resource);
    let object = defaulted(resource, object);
    admission::validate(&rt, &object, None).iter().map(Cause::to_string).collect()
}

fn ds_with(strategy: Value, resources: Value, labels: Value) -> Value {
    json!({"metadata": {"name": "x", "namespace": "default"}, "spec": {
        "selector": {"matchLabels": {"app": "x"}}, "updateStrategy": strategy,
        "template": {"metadata": {"labels": labels},
                     "spec": {"containers": [{"name": "x", "image": "i:1", "resources": resources}]}}}})
}

#[test]
fn validation_messages_are_upstreams() {
    let ok_labels = json!({"app": "x"});
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            ds_with(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}}),
                json!({}),
                ok_labels.clone(),
            ),
            vec![
                "spec.updateStrategy.rollingUpdate.maxUnavailable: Required value: cannot be 0 when maxSurge is 0",
            ],
        ),
        // Defaulting runs first: only maxSurge set means maxUnavailable defaults to 1 and both are non-zero.
        (
            ds_with(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}),
                json!({}),
                ok_labels.clone(),
            ),
            vec![
                r#"spec.updateStrategy.rollingUpdate.maxSurge: Invalid value: intstr.IntOrString{Type:0, IntVal:1, StrVal:""}: may not be set when maxUnavailable is non-zero"#,
            ],
        ),
        (
            ds_with(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}}),
                json!({}),
                ok_labels.clone(),
            ),
            vec![],
        ),
        (
            ds_with(
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "0%", "maxSurge": "20%"}}),
                json!({}),
                ok_labels.clone(),
            ),
            vec![],
        ),
        (
            ds_with(json!({"type": "RollingUpdate"}), json!({}), json!({"app": "y"})),
            vec![
                r#"spec.template.metadata.labels: Invalid value: map[string]string{"app":"y"}: `selector` does not match template `labels`"#,
            ],
        ),
        (
            ds_with(
                json!({"type": "RollingUpdate"}),
                json!({"requests": {"nvidia.com/gpu": 2}, "limits": {"nvidia.com/gpu": 1}}),
                ok_labels.clone(),
            ),
            vec![
                r#"spec.template.spec.containers[0].resources.requests: Invalid value: "2": must be equal to nvidia.com/gpu limit of 1"#,
            ],
        ),
        (
            ds_with(
                json!({"type": "RollingUpdate"}),
                json!({"requests": {"nvidia.com/gpu": "500m"}, "limits": {"nvidia.com/gpu": "500m"}}),
                ok_labels.clone(),
            ),
            vec![
                r#"spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]: Invalid value: "500m": must be an integer"#,
                r#"spec.template.spec.containers[0].resources.requests[nvidia.com/gpu]: Invalid value: "500m": must be an integer"#,
            ],
        ),
        (
            ds_with(
                json!({"type": "RollingUpdate"}),
                json!({"requests": {"nvidia.com/gpu": 1}}),
                ok_labels.clone(),
            ),
            vec![
                "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources",
            ],
        ),
        (
            ds_with(
                json!({"type": "RollingUpdate"}),
                json!({"requests": {"cpu": "500m"}}),
                ok_labels.clone(),
            ),
            vec![],
        ),
    ];
    for (object, want) in cases {
        assert_eq!(messages("daemonsets.apps", object.clone()), want, "{object}");
    }
    assert_eq!(
        messages(
            "pods",
            json!({"metadata": {"namespace": "default"}, "spec": {"containers": [{"name": "x"}]}})
        ),
        vec![
            "metadata.name: Required value: name or generateName is required",
            "spec.containers[0].image: Required value"
        ]
    );
    assert_eq!(
        messages("pods", json!({"metadata": {"name": "p"}, "spec": {}})),
        vec!["spec.containers: Required value"]
    );
    assert_eq!(
        messages(
            "deployments.apps",
            json!({"metadata": {"name": "d"}, "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "x", "image": "i"}]}}}})
        ),
        vec![
            r#"spec.strategy.rollingUpdate.maxUnavailable: Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: may not be 0 when `maxSurge` is 0"#
        ]
    );
    assert_eq!(
        messages(
            "jobs.batch",
            json!({"metadata": {"name": "j"}, "spec": {"template": {"spec": {"containers": [{"name": "x", "image": "i"}]}}}})
        ),
        vec![
            // `validateJobSpec`: a defaulted `Always` is refused as Required (#36).
            r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#
        ]
    );
}

#[test]
fn invalid_status_message_aggregates_like_upstream() {
    let rt = rt("daemonsets.apps");
    let object = defaulted(
        "daemonsets.apps",
        ds_with(
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0}}),
            json!({}),
            json!({"app": "y"}),
        ),
    );
    let causes = admission::validate(&rt, &object, None);
    insta::assert_snapshot!("invalid_message_daemonset", admission::invalid_message(&rt, "x", &causes));
}

#[test]
fn selector_change_on_update_is_immutable() {
    let rt = rt("daemonsets.apps");
    let old = defaulted(
        "daemonsets.apps",
        ds_with(json!({"type": "RollingUpdate"}), json!({}), json!({"app": "x", "v": "2"})),
    );
    let mut new = old.clone();
    new["spec"]["selector"] = json!({"matchLabels": {"app": "x", "v": "2"}});
    let causes: Vec<String> =
        admission::validate(&rt, &new, Some(&old)).iter().map(Cause::to_string).collect();
    assert_eq!(
        causes,
        vec![
            r#"spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"x", "v":"2"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"#
        ]
    );
}

// --- field validation ------------------------------------------------------------------------

#[test]
fn field_validation_modes() {
    let pod = rt("pods");
    let body = br#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"a","image":"i","imagePullPolicyy":"Always"}],"nodeName":"a","nodeName":"b"}}"#;
    let error = fieldvalidation::decode_body(&pod, body, Mode::Strict).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"strict decoding error: duplicate field "spec.nodeName", unknown field "spec.containers[0].imagePullPolicyy""#
    );
    let (object, warnings) = fieldvalidation::decode_body(&pod, body, Mode::Warn).unwrap();
    assert_eq!(warnings.len(), 2);
    assert_eq!(object["spec"]["nodeName"], "b");
    assert_eq!(Mode::from_query(None).unwrap(), Mode::Warn);
    assert_eq!(Mode::from_query(Some("Strict")).unwrap(), Mode::Strict);
    assert!(Mode::from_query(Some("strict")).is_err());
    let patched = json!({"metadata": {"name": "p"}, "spec": {"bogus": 1}});
    assert!(fieldvalidation::check(&pod, &patched, Mode::Strict).is_err());
    assert!(fieldvalidation::check(&pod, &patched, Mode::Ignore).unwrap().is_empty());
}

// --- OpenAPI ---------------------------------------------------------------------------------

#[test]
fn openapi_core_document_shape() {
    let document = openapi::group_version_document(&built_in(), "", "v1").unwrap();
    let paths = document["paths"].as_object().unwrap();
    let mut keys: Vec<&String> =
        paths.keys().filter(|k| k.contains("/pods") || k.contains("/nodes")).collect();
    keys.sort();
    insta::assert_yaml_snapshot!("openapi_core_pod_and_node_paths", keys);
    let patch = &paths["/api/v1/nodes/{name}"]["patch"];
    assert_eq!(patch["operationId"], "patchCoreV1Node");
    assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "Node");
}

// --- real kubectl against the OpenAPI documents ----------------------------------------------

fn kubectl_binaries() -> Vec<std::path::PathBuf> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let mut candidates: Vec<std::path::PathBuf> = ["kubectl.1.32", "kubectl.1.33"]
        .iter()
        .map(|name| std::path::Path::new("/usr/lib/google-cloud-sdk/bin").join(name))
        .collect();
    candidates.push(
        std::env::var_os("KUBECTL_1_37")
            .map(Into::into)
            .unwrap_or_else(|| "/root/.pyenv/versions/3.11.7/bin/kubectl".into()),
    );
    let (present, missing): (Vec<_>, Vec<_>) = candidates.into_iter().partition(|p| p.exists());
    for path in &missing {
        assert!(!ci, "CI=true and kubectl is missing: {}", path.display());
        eprintln!("skipping {}: not installed", path.display());
    }
    present
}

/// Serves the simulator's router on a socket (plain HTTP: kubectl then sends no token, and the
/// router itself has no authentication layer).
fn serve_router() -> u16 {
    use lab_runner::sim::{clock::Clock, server, store::Store};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let state = std::sync::Arc::new(server::SimState::new(Store::in_memory().unwrap(), Clock::real()));
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, server::router(state)).await.unwrap();
        });
    });
    port
}

#[test]
fn real_kubectl_validates_and_explains_from_the_openapi_documents() {
    let binaries = kubectl_binaries();
    if binaries.is_empty() {
        return;
    }
    let port = serve_router();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("config");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: sim\n  cluster:\n    server: http://127.0.0.1:{port}\n\
             contexts:\n- name: sim\n  context:\n    cluster: sim\n    user: sim\n    namespace: default\n\
             current-context: sim\nusers:\n- name: sim\n  user: {{}}\n"
        ),
    )
    .unwrap();
    let manifest = dir.path().join("ds.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n    matchLabels: {app: agent}\n  \
         template:\n    metadata:\n      labels: {app: agent}\n    spec:\n      containers:\n      - name: agent\n        image: busybox:1.37\n",
    )
    .unwrap();
    for kubectl in binaries {
        let cache = tempfile::tempdir().unwrap();
        let run = |args: &[&str]| {
            let output = std::process::Command::new(&kubectl)
                .args([
                    "--kubeconfig",
                    kubeconfig.to_str().unwrap(),
                    "--cache-dir",
                    cache.path().to_str().unwrap(),
                ])
                .args(args)
                .output()
                .unwrap();
            (
                output.status.success(),
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
            )
        };
        // Default (strict) validation needs /openapi/v3 with fieldValidation on the PATCH op;
        // without it kubectl fails with "failed to download openapi".
        let (ok, stdout, stderr) = run(&["apply", "-f", manifest.to_str().unwrap(), "--dry-run=client"]);
        assert!(ok, "{}: apply failed: {stderr}", kubectl.display());
        assert_eq!(stdout.trim(), "daemonset.apps/agent created (dry run)", "{}", kubectl.display());
        // explain walks the component schemas through their $refs.
        let (ok, stdout, stderr) = run(&["explain", "daemonset.spec.updateStrategy.rollingUpdate.maxSurge"]);
        assert!(ok, "{}: explain failed: {stderr}", kubectl.display());
        assert!(stdout.contains("KIND:") && stdout.contains("DaemonSet"), "{stdout}");
        assert!(stdout.contains("FIELD: maxSurge"), "{stdout}");
    }
}

#[test]
fn apply_configurations_name_undeclared_fields_like_structured_merge_diff() {
    let deploy = rt("deployments.apps");
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
        "spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx", "imagePullPolicyy": "Always"}]}}}});
    let error = fieldvalidation::check_apply(&deploy, &config).unwrap_err();
    assert_eq!(
        error.to_string(),
        r#"failed to create typed patch object (default/web; apps/v1, Kind=Deployment): .spec.template.spec.containers[name="web"].imagePullPolicyy: field not declared in schema"#
    );
}

#[test]
fn ssa_tracks_set_items_and_status_writes_separately() {
    let pod = rt("pods");
    let config = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "namespace": "default", "finalizers": ["example.com/a"]},
        "spec": {"containers": [{"name": "a", "image": "a:1"}]}});
    let mut created = apply(&pod, None, &config, "one", false, "2026-01-01T00:00:00Z").unwrap();
    admission::apply_defaults(&pod, &mut created);
    let fields = &created["metadata"]["managedFields"][0]["fieldsV1"];
    assert!(fields.pointer("/f:metadata/f:finalizers/v:\"example.com~1a\"").is_some(), "{fields}");
    // A kubelet-style status write is recorded against the status subresource only.
    let mut running = created.clone();
    running["status"] = json!({"phase": "Running"});
    running["spec"]["nodeName"] = json!("ignored-by-status-tracking");
    patch::record_update(
        &pod,
        "kubelet",
        Some("status"),
        Some(&created),
        &mut running,
        at("2026-01-01T00:00:05Z"),
    )
    .unwrap();
    let kubelet = running["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kubelet")
        .unwrap();
    assert_eq!(kubelet["subresource"], "status");
    assert_eq!(kubelet["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
}

#[test]
fn smp_set_element_order_must_agree_with_the_patch_list() {
    let rt = rt("pods");
    let current = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}});
    let body = json!({"spec": {"$setElementOrder/containers": [{"name": "a"}], "containers": [{"name": "b", "image": "x"}]}});
    let error = patch::apply_patch(&rt, PatchKind::StrategicMerge, &current, body.to_string().as_bytes())
        .unwrap_err();
    assert!(error.to_string().starts_with("The order in patch list:"), "{error}");
}
