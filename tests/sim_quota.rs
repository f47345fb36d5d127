//! ResourceQuota (apiserver `pkg/admission/plugin/resourcequota/controller.go`): admission and
//! the status controller in-process on the manual clock, and through real kubectl against
//! `sim up`. The quota texts asserted are literals copied from upstream's format, not produced
//! by the simulator's formatter.

use std::process::Output;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use lab_runner::k8s::testing::{self, node};
use lab_runner::sim::{
    harness::{Cluster, Harness, rt},
    store::{DryRun, Stored, Subresource},
};
use serde_json::{Value, json};

use crate::support::{
    binary::{stderr, stdout},
    kubectl::{Kubectl, clients},
    sim::Sim,
    transcript::redacted,
};

/// What kubectl prints for a create the quota refuses (`exceeded quota: …` inside kubectl's
/// `error when creating` wrapping), copied verbatim.
const APPLY_REJECTED: &str = r#"Error from server (Forbidden): error when creating "f.yaml": pods "gpu-pod-3" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2"#;

/// One GPU worker `gpu-1` (one GPU) and the namespaces `team-a` and `team-b`.
fn quota_cluster() -> Cluster {
    let cluster = Cluster::new(vec![node("gpu-1").gpus("1").json()]);
    for namespace in ["team-a", "team-b"] {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}});
        cluster.create("namespaces", ns);
    }
    cluster
}

/// The quota views of the shared fixture.
trait Quotas {
    fn quota(&mut self, namespace: &str, name: &str, hard: Value);
    fn status(&self, namespace: &str, name: &str) -> Value;
    fn pods(&self, namespace: &str) -> Api<Pod>;
    async fn create_pod(
        &self,
        namespace: &str,
        pod: Value,
        dry_run: bool,
    ) -> Result<(), (u16, String, String)>;
    fn set_phase(&self, namespace: &str, name: &str, phase: &str);
}

impl Quotas for Cluster {
    fn quota(&mut self, namespace: &str, name: &str, hard: Value) {
        let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota",
                           "metadata": {"name": name, "namespace": namespace}, "spec": {"hard": hard}});
        self.sim.state.store.create(&rt("resourcequotas"), quota).unwrap();
    }

    fn status(&self, namespace: &str, name: &str) -> Value {
        self.sim.state.store.get_value(&rt("resourcequotas"), namespace, name).unwrap()["status"].clone()
    }

    fn pods(&self, namespace: &str) -> Api<Pod> {
        Api::namespaced(self.sim.client.clone(), namespace)
    }

    async fn create_pod(
        &self,
        namespace: &str,
        pod: Value,
        dry_run: bool,
    ) -> Result<(), (u16, String, String)> {
        let pod: Pod = serde_json::from_value(pod).unwrap();
        let params = PostParams { dry_run, ..PostParams::default() };
        match self.pods(namespace).create(&params, &pod).await {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(status)) => {
                Err((status.code, status.reason.clone(), status.message.clone()))
            }
            Err(other) => panic!("unexpected error: {other}"),
        }
    }

    fn set_phase(&self, namespace: &str, name: &str, phase: &str) {
        let mut pod = self.sim.state.store.get_value(&rt("pods"), namespace, name).unwrap();
        pod["status"]["phase"] = json!(phase);
        self.sim.state.store.update(&rt("pods"), pod, Subresource::Status, DryRun::Off).unwrap();
    }
}

/// The shared test pod with one CUDA container asking for `resources`; its namespace comes
/// from the request, as kubectl leaves it.
fn pod(name: &str, resources: Value) -> Value {
    let mut pod = testing::pod(name).json();
    pod["metadata"].as_object_mut().unwrap().remove("namespace");
    pod["spec"]["containers"] = json!([{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                                         "resources": resources}]);
    pod
}

fn gpus(count: u32) -> Value {
    json!({"limits": {"nvidia.com/gpu": count.to_string()}})
}

#[tokio::test]
async fn requests_keys_are_charged_and_enforced_and_pending_pods_count() {
    let mut c = quota_cluster();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "2", "pods": "10"}));
    c.settle();
    assert_eq!(
        c.status("team-a", "gpu-quota"),
        json!({"hard": {"pods": "10", "requests.nvidia.com/gpu": "2"},
               "used": {"pods": "0", "requests.nvidia.com/gpu": "0"}})
    );
    // The node has one GPU: the second pod stays Pending, and still takes quota.
    c.create_pod("team-a", pod("gpu-pod-1", gpus(1)), false).await.unwrap();
    c.create_pod("team-a", pod("gpu-pod-2", gpus(1)), false).await.unwrap();
    c.settle();
    let pending = c.sim.state.store.get_value(&rt("pods"), "team-a", "gpu-pod-2").unwrap();
    assert_eq!(pending["status"]["phase"], "Pending");
    // `SetDefaults_Pod` copied the limit into requests, as the real API server stores it.
    assert_eq!(
        pending["spec"]["containers"][0]["resources"],
        json!({"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}})
    );
    assert_eq!(c.status("team-a", "gpu-quota")["used"], json!({"pods": "2", "requests.nvidia.com/gpu": "2"}));
    let (code, reason, message) = c.create_pod("team-a", pod("gpu-pod-3", gpus(1)), false).await.unwrap_err();
    assert_eq!((code, reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        message,
        r#"pods "gpu-pod-3" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=2, limited: requests.nvidia.com/gpu=2"#
    );
    // A pod without GPUs still fits (only exceeded resources are checked).
    c.create_pod("team-a", pod("cpu-only", json!({})), false).await.unwrap();
    assert_eq!(c.status("team-a", "gpu-quota")["used"]["pods"], "3");
}

/// A Deployment held back by a quota: its ReplicaSet records `FailedCreate` and sets
/// `ReplicaFailure` (`replica_set_utils.go` `calculateStatus`), which the Deployment copies
/// (`progress.go` `syncRolloutStatus`); once the quota allows the pods, both conditions go.
#[tokio::test]
async fn a_deployment_held_back_by_a_quota_shows_replica_failure_until_it_fits() {
    let mut c = quota_cluster();
    c.quota("team-a", "compute", json!({"pods": "2"}));
    c.settle();
    let deployment = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "team-a"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"}]}}}
    });
    let deployments = rt("deployments.apps");
    c.sim.state.store.create(&deployments, deployment).unwrap();
    c.settle();
    let failure = |value: &Value| {
        value["status"]["conditions"]
            .as_array()
            .and_then(|conditions| conditions.iter().find(|c| c["type"] == "ReplicaFailure"))
            .cloned()
    };
    let web = c.sim.state.store.get_value(&deployments, "team-a", "web").unwrap();
    let condition = failure(&web).expect("the Deployment shows ReplicaFailure");
    assert_eq!(
        (condition["status"].as_str(), condition["reason"].as_str()),
        (Some("True"), Some("FailedCreate"))
    );
    let message = condition["message"].as_str().unwrap();
    assert!(
        message.starts_with("pods \"web-")
            && message.ends_with(
                "is forbidden: exceeded quota: compute, requested: pods=1, used: pods=2, limited: pods=2"
            ),
        "{message}"
    );
    assert_eq!(condition["lastUpdateTime"], condition["lastTransitionTime"]);
    let replicasets = rt("replicasets.apps");
    let page = c.sim.state.store.list(&replicasets.group_resource(), Some("team-a"), &|_| true, None, None);
    let rs: Value = page.items[0].value().unwrap();
    assert_eq!(failure(&rs).unwrap()["message"], condition["message"]);
    assert_eq!(
        web["status"]["readyReplicas"].as_i64().unwrap_or(0)
            + web["status"]["unavailableReplicas"].as_i64().unwrap_or(0),
        3
    );

    let mut quota = c.sim.state.store.get_value(&rt("resourcequotas"), "team-a", "compute").unwrap();
    quota["spec"]["hard"]["pods"] = json!("3");
    c.sim.state.store.update(&rt("resourcequotas"), quota, Subresource::Main, DryRun::Off).unwrap();
    // The ReplicaSet retries its failed create with the workqueue's back-off.
    c.control.advance(k8s_openapi::jiff::SignedDuration::from_secs(60)).unwrap();
    let web = c.sim.state.store.get_value(&deployments, "team-a", "web").unwrap();
    assert_eq!(failure(&web), None, "{web}");
    assert_eq!(web["status"]["replicas"], 3);
}

#[tokio::test]
async fn status_follows_spec_changes_and_is_written_only_when_it_changes() {
    let mut c = quota_cluster();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "1"}));
    c.settle();
    c.create_pod("team-a", pod("one", gpus(1)), false).await.unwrap();
    c.create_pod("team-a", pod("cpu", json!({"requests": {"cpu": "100m"}})), false).await.unwrap();
    c.settle();
    let revision = |c: &Cluster| {
        let quota = c.sim.state.store.get_value(&rt("resourcequotas"), "team-a", "gpu-quota").unwrap();
        quota["metadata"]["resourceVersion"].as_str().unwrap().to_string()
    };
    let before = revision(&c);
    // A change that moves no tracked resource writes nothing.
    c.set_phase("team-a", "cpu", "Running");
    c.settle();
    assert_eq!(revision(&c), before);
    assert!(c.create_pod("team-a", pod("two", gpus(1)), false).await.is_err());
    let mut quota = c.sim.state.store.get_value(&rt("resourcequotas"), "team-a", "gpu-quota").unwrap();
    quota["spec"]["hard"] = json!({"requests.nvidia.com/gpu": "2", "requests.cpu": "1"});
    c.sim.state.store.update(&rt("resourcequotas"), quota, Subresource::Main, DryRun::Off).unwrap();
    c.settle();
    assert_eq!(
        c.status("team-a", "gpu-quota"),
        json!({"hard": {"requests.cpu": "1", "requests.nvidia.com/gpu": "2"},
               "used": {"requests.cpu": "100m", "requests.nvidia.com/gpu": "1"}})
    );
}

/// The wire form of a refusal: 403, reason Forbidden, details naming the pod.
#[tokio::test]
async fn the_refusal_is_a_forbidden_status() {
    let mut c = quota_cluster();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "0"}));
    c.settle();
    let request = axum::http::Request::post("/api/v1/namespaces/team-a/pods")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(pod("gpu-pod", gpus(1)).to_string()))
        .unwrap();
    let response = c.sim.request(request).await;
    assert_eq!(response.status(), 403);
    let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let status: Value = serde_json::from_slice(&body).unwrap();
    insta::assert_snapshot!("quota_forbidden_status", serde_json::to_string_pretty(&status).unwrap());
}

#[tokio::test]
async fn terminal_pods_release_their_quota() {
    let mut c = quota_cluster();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "1"}));
    c.settle();
    c.create_pod("team-a", pod("train", gpus(1)), false).await.unwrap();
    assert!(c.create_pod("team-a", pod("train-2", gpus(1)), false).await.is_err());
    c.set_phase("team-a", "train", "Succeeded");
    c.settle();
    assert_eq!(c.status("team-a", "gpu-quota")["used"], json!({"requests.nvidia.com/gpu": "0"}));
    c.create_pod("team-a", pod("train-2", gpus(1)), false).await.unwrap();
    c.set_phase("team-a", "train-2", "Failed");
    c.settle();
    assert_eq!(c.status("team-a", "gpu-quota")["used"], json!({"requests.nvidia.com/gpu": "0"}));
}

#[tokio::test]
async fn mig_and_cpu_memory_keys_are_charged() {
    let mut c = quota_cluster();
    c.quota(
        "team-b",
        "mixed",
        json!({"requests.nvidia.com/mig-1g.5gb": "4", "requests.cpu": "2", "requests.memory": "4Gi",
               "limits.cpu": "4", "limits.memory": "8Gi"}),
    );
    c.settle();
    let resources = json!({"requests": {"cpu": "500m", "memory": "1Gi"},
                           "limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/mig-1g.5gb": "3"}});
    c.create_pod("team-b", pod("infer", resources.clone()), false).await.unwrap();
    let expected = json!({"limits.cpu": "1", "limits.memory": "2Gi", "requests.cpu": "500m",
                          "requests.memory": "1Gi", "requests.nvidia.com/mig-1g.5gb": "3"});
    // Charged by admission, then the controller agrees.
    assert_eq!(c.status("team-b", "mixed")["used"], expected);
    c.settle();
    assert_eq!(c.status("team-b", "mixed")["used"], expected);
    let (_, _, message) = c.create_pod("team-b", pod("infer-2", resources), false).await.unwrap_err();
    assert_eq!(
        message,
        r#"pods "infer-2" is forbidden: exceeded quota: mixed, requested: requests.nvidia.com/mig-1g.5gb=3, used: requests.nvidia.com/mig-1g.5gb=3, limited: requests.nvidia.com/mig-1g.5gb=4"#
    );
    // cpu/memory quota: a container without a cpu/memory amount is refused (pods.go Constraints).
    let (code, _, message) = c.create_pod("team-b", pod("bare", json!({})), false).await.unwrap_err();
    assert_eq!(code, 403);
    assert_eq!(
        message,
        r#"pods "bare" is forbidden: failed quota: mixed: must specify limits.cpu for: cuda; limits.memory for: cuda; requests.cpu for: cuda; requests.memory for: cuda"#
    );
}

#[tokio::test]
async fn the_limits_key_mistake_is_accepted_and_limits_nothing() {
    let mut c = quota_cluster();
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> =
        Api::namespaced(c.sim.client.clone(), "team-b");
    let mistake = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu-quota"},
                         "spec": {"hard": {"limits.nvidia.com/gpu": "1", "nvidia.com/gpu": "1"}}});
    quotas.create(&PostParams::default(), &serde_json::from_value(mistake).unwrap()).await.unwrap();
    c.settle();
    assert_eq!(
        c.status("team-b", "gpu-quota"),
        json!({"hard": {"limits.nvidia.com/gpu": "1", "nvidia.com/gpu": "1"}})
    );
    for name in ["a", "b", "c"] {
        c.create_pod("team-b", pod(name, gpus(2)), false).await.unwrap();
    }
    c.settle();
    assert_eq!(c.status("team-b", "gpu-quota")["used"], Value::Null, "used is never filled");
}

#[tokio::test]
async fn status_unknown_until_used_is_filled() {
    // No controllers: the quota's status is written by hand, as a stalled quota controller
    // would leave it.
    let sim = Harness::start();
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}});
    sim.state.store.create(&rt("namespaces"), ns).unwrap();
    let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "gpu", "namespace": "team-a"},
                       "spec": {"hard": {"requests.nvidia.com/gpu": "1"}}});
    let created = sim.state.store.create(&rt("resourcequotas"), quota).unwrap();
    assert!(created.get("status").is_none(), "status is cleared on create");
    let pods: Api<Pod> = Api::namespaced(sim.client.clone(), "team-a");
    let create = |name: &str| {
        let pods = pods.clone();
        let pod: Pod = serde_json::from_value(pod(name, gpus(1))).unwrap();
        async move { pods.create(&PostParams::default(), &pod).await }
    };
    // Before any status, nothing matches (generic.Matches reads status.hard): admitted.
    create("early").await.unwrap();
    let mut with_hard = sim.state.store.get_value(&rt("resourcequotas"), "team-a", "gpu").unwrap();
    with_hard["status"] = json!({"hard": {"requests.nvidia.com/gpu": "1"}});
    sim.state.store.update(&rt("resourcequotas"), with_hard, Subresource::Status, DryRun::Off).unwrap();
    match create("late").await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert_eq!(
                status.message,
                r#"pods "late" is forbidden: status unknown for quota: gpu, resources: requests.nvidia.com/gpu"#
            );
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn dry_run_creates_are_checked_and_charge_nothing() {
    let mut c = quota_cluster();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "4"}));
    c.settle();
    let before = c.sim.state.store.revision();
    // The engine's probe: an over-quota pod created with dryRun=All is refused.
    let (code, _, message) = c.create_pod("team-a", pod("quota-probe", gpus(5)), true).await.unwrap_err();
    assert_eq!(code, 403);
    assert!(
        message.starts_with(r#"pods "quota-probe" is forbidden: exceeded quota: gpu-quota"#),
        "{message}"
    );
    c.create_pod("team-a", pod("fits", gpus(4)), true).await.unwrap();
    assert_eq!(c.sim.state.store.revision(), before, "a dry run writes nothing");
    assert_eq!(c.status("team-a", "gpu-quota")["used"], json!({"requests.nvidia.com/gpu": "0"}));
}

#[tokio::test]
async fn a_daemonset_over_quota_records_failed_create_with_the_generated_name() {
    let mut c = quota_cluster();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "0"}));
    c.settle();
    let ds = json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "gpu-ds", "namespace": "team-a"},
        "spec": {"selector": {"matchLabels": {"app": "gpu-ds"}},
                 "template": {"metadata": {"labels": {"app": "gpu-ds"}},
                              "spec": {"containers": [{"name": "c", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                                                       "resources": gpus(1)}]}}},
    });
    c.sim.state.store.create(&rt("daemonsets"), ds).unwrap();
    c.settle();
    let all = |_: &Stored| true;
    let events: Vec<Value> = c
        .sim
        .state
        .store
        .list("events", Some("team-a"), &all, None, None)
        .items
        .iter()
        .map(|s| s.value().unwrap())
        .filter(|e| e["reason"] == "FailedCreate")
        .collect();
    let message = events[0]["message"].as_str().unwrap();
    let (head, tail) = message.split_once(r#"" is forbidden: "#).unwrap();
    assert!(
        head.starts_with(r#"Error creating: pods "gpu-ds-"#)
            && head.len() == r#"Error creating: pods "gpu-ds-"#.len() + 5,
        "{message}"
    );
    assert_eq!(
        tail,
        "exceeded quota: gpu-quota, requested: requests.nvidia.com/gpu=1, used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=0"
    );
    let ds = c.sim.state.store.get_value(&rt("daemonsets"), "team-a", "gpu-ds").unwrap();
    assert_eq!(ds["status"]["desiredNumberScheduled"], 1);
    assert_eq!(ds["status"]["currentNumberScheduled"], 0);
}

#[tokio::test]
async fn object_counts_are_tracked() {
    let mut c = quota_cluster();
    c.quota("team-a", "counts", json!({"configmaps": "1", "count/configmaps": "1", "count/pods": "5"}));
    c.settle();
    let cm =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one", "namespace": "team-a"}});
    c.sim.state.store.create(&rt("configmaps"), cm).unwrap();
    c.settle();
    // The namespace's own kube-root-ca.crt does not exist in the simulator; one configmap.
    assert_eq!(
        c.status("team-a", "counts")["used"],
        json!({"configmaps": "1", "count/configmaps": "1", "count/pods": "0"})
    );
    let two =
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "two", "namespace": "team-a"}});
    let error = c.sim.state.store.create(&rt("configmaps"), two).unwrap_err().to_string();
    assert_eq!(
        error,
        r#"configmaps "two" is forbidden: exceeded quota: counts, requested: configmaps=1,count/configmaps=1, used: configmaps=1,count/configmaps=1, limited: configmaps=1,count/configmaps=1"#
    );
}

/// The gpu-sharing lab's `quotas` task graded by the engine against this admission: the
/// colleague's `limits.` quota lets the dryRun probe in (FAIL), the reference quotas refuse it.
#[tokio::test]
async fn the_gpu_sharing_quota_task_is_graded_against_the_admission() {
    use lab_runner::{
        engine::{self, check::Help, cluster::Cluster as EngineCluster},
        lab::loader,
        session::{LabSource, Lang},
    };
    let mut c = quota_cluster();
    let labs = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("labs");
    let bundle = loader::find(&LabSource::Dir(labs), "gpu-sharing").expect("the gpu-sharing lab loads");
    let cluster = EngineCluster::from_client(c.sim.client.clone(), "in-process", "harness");
    let mistake = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("labs/gpu-sharing/manifests/teams/quota-limits-mistake.yaml"),
    )
    .unwrap();
    let mistake: Value = serde_saphyr::from_str(&mistake).unwrap();
    c.sim.state.store.create(&rt("resourcequotas"), mistake).unwrap();
    c.settle();
    let quotas_task = |report: &lab_runner::report::Report| {
        let task = report.tasks.iter().find(|t| t.id == "quotas").expect("a quotas task").clone();
        (task.status.as_str(), task.evidence)
    };
    let report = engine::check::check(&cluster, &bundle, Lang::En, Help::default()).await.unwrap();
    let (status, evidence) = quotas_task(&report);
    assert_eq!(status, "FAIL");
    assert!(
        evidence.contains(&"an over-quota pod in team-b (dryRun=All) was admitted".to_string()),
        "{evidence:?}"
    );
    let store = &c.sim.state.store;
    store.delete(&rt("resourcequotas"), "team-b", "gpu-quota", &Default::default()).unwrap();
    c.quota("team-a", "gpu-quota", json!({"requests.nvidia.com/gpu": "4"}));
    c.quota("team-b", "gpu-quota", json!({"requests.nvidia.com/mig-1g.5gb": "4"}));
    c.settle();
    let report = engine::check::check(&cluster, &bundle, Lang::En, Help::default()).await.unwrap();
    let (status, evidence) = quotas_task(&report);
    assert_eq!(status, "PASS", "{evidence:?}");
    assert!(evidence.contains(
        &r#"an over-quota pod in team-b (dryRun=All) was rejected: `pods "quota-probe" is forbidden: exceeded quota: gpu-quota, requested: requests.nvidia.com/mig-1g.5gb=5, used: requests.nvidia.com/mig-1g.5gb=0, limited: requests.nvidia.com/mig-1g.5gb=4`"#.to_string()
    ), "{evidence:?}");
}

// ---------------------------------------------------------------------------------------------
// Real kubectl.

/// Runs kubectl in `dir` (so `-f f.yaml` is the file name kubectl prints).
fn kubectl_in(sim: &Sim, client: &Kubectl, dir: &std::path::Path, args: &[&str]) -> Output {
    sim.kubectl_command(client).current_dir(dir).args(args).output().unwrap()
}

fn gpu_pod_yaml(name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: {name}\n  namespace: team-a\nspec:\n  containers:\n  \
         - name: cuda\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources:\n      limits:\n        \
         nvidia.com/gpu: 1\n"
    )
}

#[test]
fn kubectl_create_get_describe_and_the_forbidden_text() {
    let clients = clients();
    let mut first: Option<(&str, String)> = None;
    for client in &clients {
        let sim = Sim::up(&["--nodes", "1"]);
        let dir = tempfile::tempdir().unwrap();
        let mut transcript = String::new();
        let mut run = |args: &[&str]| -> Output {
            let output = kubectl_in(&sim, client, dir.path(), args);
            transcript.push_str(&format!(
                "$ kubectl {}\n{}{}",
                args.join(" "),
                stdout(&output),
                stderr(&output)
            ));
            if !output.status.success() {
                transcript.push_str(&format!("[exit {}]\n", output.status.code().unwrap_or(-1)));
            }
            transcript.push('\n');
            output
        };
        for args in [
            &["create", "namespace", "team-a"][..],
            &["create", "namespace", "team-b"],
            // Protobuf bodies (kubectl's typed client).
            &["create", "quota", "gpu-quota", "--hard=requests.nvidia.com/gpu=2", "-n", "team-a"],
            &[
                "create",
                "quota",
                "gpu",
                "--hard=requests.nvidia.com/mig-1g.5gb=4,limits.nvidia.com/gpu=1,nvidia.com/gpu=1",
                "-n",
                "team-b",
            ],
        ] {
            assert!(run(args).status.success(), "kubectl {args:?}");
        }
        // The controller runs in the background: wait until both statuses are filled.
        for (namespace, name) in [("team-a", "gpu-quota"), ("team-b", "gpu")] {
            let filled = (0..200).any(|_| {
                let output = kubectl_in(
                    &sim,
                    client,
                    dir.path(),
                    &["get", "quota", name, "-n", namespace, "-o", "jsonpath={.status.hard}"],
                );
                let done = !stdout(&output).trim().is_empty();
                if !done {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                done
            });
            assert!(filled, "quota {namespace}/{name} never got a status");
        }
        for name in ["gpu-pod-1", "gpu-pod-2"] {
            std::fs::write(dir.path().join(format!("{name}.yaml")), gpu_pod_yaml(name)).unwrap();
            assert!(run(&["apply", "-f", &format!("{name}.yaml")]).status.success());
        }
        std::fs::write(dir.path().join("f.yaml"), gpu_pod_yaml("gpu-pod-3")).unwrap();
        let applied = run(&["apply", "-f", "f.yaml"]);
        assert_eq!(applied.status.code(), Some(1));
        assert_eq!(stderr(&applied).trim_end(), APPLY_REJECTED);
        let overrides = r#"{"spec":{"containers":[{"name":"gpu-pod-3","image":"nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}"#;
        let ran = run(&[
            "run",
            "gpu-pod-3",
            "-n",
            "team-a",
            "--image=nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
            "--overrides",
            overrides,
        ]);
        assert_eq!(ran.status.code(), Some(1));
        // `kubectl run` prints the same without the `error when creating "…": ` part.
        assert_eq!(stderr(&ran).trim_end(), APPLY_REJECTED.replace(r#"error when creating "f.yaml": "#, ""));
        // The mistake keys in team-b limit nothing.
        let mistake = gpu_pod_yaml("greedy").replace("team-a", "team-b").replace("gpu: 1", "gpu: 3");
        std::fs::write(dir.path().join("greedy.yaml"), mistake).unwrap();
        assert!(run(&["apply", "-f", "greedy.yaml"]).status.success(), "3 GPUs pass limits./bare keys of 1");
        assert!(run(&["get", "quota", "-A"]).status.success());
        assert!(run(&["describe", "quota", "-n", "team-a"]).status.success());
        assert!(run(&["describe", "quota", "gpu", "-n", "team-b"]).status.success());
        let transcript = redacted(&transcript);
        match &first {
            None => first = Some((client.version, transcript)),
            Some((version, expected)) => {
                assert_eq!(
                    &transcript, expected,
                    "kubectl {} printed otherwise than {version}",
                    client.version
                )
            }
        }
    }
    if let Some((_, transcript)) = first {
        insta::assert_snapshot!("kubectl_quota_transcript", transcript);
    }
}
