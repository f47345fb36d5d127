//! The simulated control plane on the manual clock: scheduler, kubelet, DaemonSet controller,
//! garbage collector and events, one scenario per rule (docs/daemonset.md, the scheduler's
//! and the kubelet's upstream sources), and the course's stuck-rollout case. Literal texts are
//! copied from upstream's sources and tests.

use std::collections::BTreeMap;

use lab_runner::k8s::testing::{node, pod};
use lab_runner::sim::{
    controllers::{
        Config, Controllers,
        config::{CatalogImage, ImageRun},
    },
    harness::{Cluster, rt},
    store::{DryRun, Propagation, Subresource},
};
use serde_json::{Value, json};

/// The scenario-specific views of the shared fixture.
trait Scenario {
    /// Three plain workers, `node-a` to `node-c`.
    fn three_workers() -> Cluster;
    /// The pods in `default`.
    fn pods(&self) -> Vec<Value>;
    /// Pods by the node they target (nodeName, else the DS pin), sorted by name.
    fn pods_by_node(&self) -> BTreeMap<String, Vec<Value>>;
    /// DESIRED, CURRENT, READY, UP-TO-DATE, AVAILABLE as `kubectl get ds` shows them.
    fn ds_columns(&self, name: &str) -> [i64; 5];
    /// The Events about `name`, oldest first.
    fn events_for(&self, name: &str) -> Vec<Value>;
}

impl Scenario for Cluster {
    fn three_workers() -> Cluster {
        Cluster::new(["node-a", "node-b", "node-c"].iter().map(|n| node(n).json()).collect())
    }

    fn pods(&self) -> Vec<Value> {
        self.list("pods", Some("default"))
    }

    fn pods_by_node(&self) -> BTreeMap<String, Vec<Value>> {
        let mut map: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for pod in self.pods() {
            let node = pod["spec"]["nodeName"].as_str().map(str::to_string).unwrap_or_else(|| {
                pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                    ["nodeSelectorTerms"][0]["matchFields"][0]["values"][0]
                    .as_str()
                    .unwrap_or("?")
                    .to_string()
            });
            map.entry(node).or_default().push(pod);
        }
        map
    }

    fn ds_columns(&self, name: &str) -> [i64; 5] {
        let status = &self.find("daemonsets", "default", name).unwrap()["status"];
        let n = |field: &str| status[field].as_i64().unwrap_or(0);
        [
            n("desiredNumberScheduled"),
            n("currentNumberScheduled"),
            n("numberReady"),
            n("updatedNumberScheduled"),
            n("numberAvailable"),
        ]
    }

    fn events_for(&self, name: &str) -> Vec<Value> {
        let mut events: Vec<Value> = self
            .list("events", Some("default"))
            .into_iter()
            .filter(|e| e["involvedObject"]["name"] == json!(name))
            .collect();
        events.sort_by_key(|e| e["metadata"]["resourceVersion"].as_str().unwrap().parse::<u64>().unwrap());
        events
    }
}

fn daemonset(name: &str, image: &str, strategy: Value) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "updateStrategy": strategy,
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    })
}

fn rolling(max_unavailable: Value, max_surge: Value) -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": max_unavailable, "maxSurge": max_surge}})
}

fn set_image(ds: &mut Value, image: &str) {
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image);
}

fn waiting_reason(pod: &Value) -> Option<&str> {
    pod["status"]["containerStatuses"][0]["state"]["waiting"]["reason"].as_str()
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|c| c.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn hash_of(pod: &Value) -> String {
    pod["metadata"]["labels"]["controller-revision-hash"].as_str().unwrap().to_string()
}

/// Revision number by ControllerRevision name.
fn revisions(cluster: &Cluster) -> BTreeMap<String, i64> {
    cluster
        .list("controllerrevisions.apps", Some("default"))
        .iter()
        .map(|r| (r["metadata"]["name"].as_str().unwrap().to_string(), r["revision"].as_i64().unwrap()))
        .collect()
}

#[tokio::test]
async fn the_course_case_a_bad_image_stalls_the_rollout_and_undo_restores_it() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("gpu-ds", "nginx:1.27", rolling(json!(1), json!(0))));
    cluster.run_for(60);
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 3, 3, 3]);
    let before = cluster.pods_by_node();
    let first_hash = hash_of(&before["node-a"][0]);
    assert_eq!(revisions(&cluster), BTreeMap::from([(format!("gpu-ds-{first_hash}"), 1)]));

    cluster.change("daemonsets", "default", "gpu-ds", |ds| set_image(ds, "nginx:1.27-does-not-exist"));
    cluster.run_for(3600);
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 2, 1, 2], "desired current ready up-to-date available");
    let status = cluster.find("daemonsets", "default", "gpu-ds").unwrap()["status"].clone();
    assert_eq!(status["numberUnavailable"], json!(1));
    assert_eq!(status["observedGeneration"], json!(2));
    let stuck = cluster.pods_by_node();
    let replaced: Vec<&String> =
        stuck.iter().filter(|(_, pods)| hash_of(&pods[0]) != first_hash).map(|(node, _)| node).collect();
    assert_eq!(replaced.len(), 1, "exactly one node is being replaced");
    let on_replaced = &stuck[replaced[0]];
    assert_eq!(on_replaced.len(), 1, "the old pod is gone; only the new one is there");
    assert!(matches!(waiting_reason(&on_replaced[0]), Some("ImagePullBackOff" | "ErrImagePull")));
    assert_eq!(on_replaced[0]["status"]["phase"], json!("Pending"));

    // It stays so: no progress deadline, and no status write while nothing changes.
    let resource_version =
        cluster.find("daemonsets", "default", "gpu-ds").unwrap()["metadata"]["resourceVersion"].clone();
    cluster.run_for(6 * 3600);
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 2, 1, 2]);
    let after = cluster.find("daemonsets", "default", "gpu-ds").unwrap();
    assert_eq!(after["metadata"]["resourceVersion"], resource_version, "status written only when it changes");
    let bad_revisions = revisions(&cluster);
    assert_eq!(bad_revisions.len(), 2);
    assert_eq!(bad_revisions[&format!("gpu-ds-{first_hash}")], 1);

    // Undo: the template goes back; the first revision becomes the newest (renumbered to 3),
    // the untouched old pods count as updated without a restart, the broken pod is replaced.
    cluster.change("daemonsets", "default", "gpu-ds", |ds| set_image(ds, "nginx:1.27"));
    cluster.run_for(120);
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 3, 3, 3]);
    let restored = cluster.pods_by_node();
    for (node, pods) in &restored {
        assert_eq!(pods.len(), 1, "{node}");
        assert_eq!(hash_of(&pods[0]), first_hash, "{node} runs the restored generation");
        assert!(is_ready(&pods[0]));
        if node != replaced[0] {
            assert_eq!(
                pods[0]["metadata"]["uid"], before[node][0]["metadata"]["uid"],
                "{node} not restarted"
            );
        }
    }
    let renumbered = revisions(&cluster);
    assert_eq!(renumbered[&format!("gpu-ds-{first_hash}")], 3);
    assert_eq!(renumbered.values().copied().collect::<std::collections::BTreeSet<_>>(), [2, 3].into());
}

#[tokio::test]
async fn dropping_a_toleration_shrinks_desired_and_the_rollout_completes_without_that_node() {
    let tainted = node("node-c").taint("dedicated", Some("gpu"), "NoSchedule").json();
    let mut cluster = Cluster::new(vec![node("node-a").json(), node("node-b").json(), tainted]);
    let mut ds = daemonset("agent", "busybox:1.36", rolling(json!(1), json!(0)));
    ds["spec"]["template"]["spec"]["tolerations"] = json!([{"key": "dedicated", "operator": "Exists"}]);
    cluster.create("daemonsets", ds);
    cluster.run_for(60);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 3, 3]);

    cluster.change("daemonsets", "default", "agent", |ds| {
        ds["spec"]["template"]["spec"].as_object_mut().unwrap().remove("tolerations");
    });
    cluster.run_for(600);
    assert_eq!(cluster.ds_columns("agent"), [2, 2, 2, 2, 2]);
    let status = cluster.find("daemonsets", "default", "agent").unwrap()["status"].clone();
    assert_eq!(status["numberMisscheduled"], json!(0));
    let by_node = cluster.pods_by_node();
    assert!(!by_node.contains_key("node-c"), "node-c's old pod was deleted and not recreated");
    assert_eq!(by_node.len(), 2);
    let deletions = cluster
        .events_for("agent")
        .iter()
        .filter(|e| e["reason"] == "SuccessfulDelete")
        .map(|e| e["count"].as_i64().unwrap())
        .sum::<i64>();
    assert_eq!(deletions, 3, "every old pod, node-c's included, went as an update candidate");
}

#[tokio::test]
async fn a_pod_asking_for_more_gpus_than_any_node_has_stays_pending_with_the_upstream_text() {
    let control_plane =
        node("control-plane").taint("node-role.kubernetes.io/control-plane", None, "NoSchedule").json();
    let mut cluster =
        Cluster::new(vec![control_plane, node("gpu-1").gpus("1").json(), node("gpu-2").gpus("1").json()]);
    cluster.create(
        "pods",
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "trainer", "namespace": "default"},
            "spec": {"containers": [{"name": "cuda", "image": "nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04",
                "resources": {"limits": {"nvidia.com/gpu": "2"}, "requests": {"nvidia.com/gpu": "2"}}}]},
        }),
    );
    cluster.run_for(600);
    // 3 nodes, control plane tainted, GPU workers too small, with one final period: v1.33's
    // `FitError.Error` (pkg/scheduler/framework/types.go) appends the PostFilter message with
    // `" %v"`; the doubled period older releases print came from `SeparatorFormat = " %v."`.
    let expected = "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.";
    let pod = cluster.find("pods", "default", "trainer").unwrap();
    assert_eq!(pod["status"]["phase"], json!("Pending"));
    assert!(pod["spec"]["nodeName"].is_null());
    let condition = &pod["status"]["conditions"][0];
    assert_eq!(
        (&condition["type"], &condition["status"], &condition["reason"]),
        (&json!("PodScheduled"), &json!("False"), &json!("Unschedulable"))
    );
    assert_eq!(condition["message"], json!(expected));
    let events = cluster.events_for("trainer");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["type"], json!("Warning"));
    assert_eq!(events[0]["reason"], json!("FailedScheduling"));
    assert_eq!(events[0]["source"]["component"], json!("default-scheduler"));
    assert_eq!(events[0]["message"], json!(expected));

    // A node change retries it; the same failure is aggregated into the same Event.
    cluster.change("nodes", "default", "gpu-1", |n| n["metadata"]["labels"]["team"] = json!("a"));
    cluster.run_for(10);
    let events = cluster.events_for("trainer");
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["count"], json!(2));
    // A different message is a different Event (client-go `EventCorrelator` keys on it).
    cluster.create("nodes", node("gpu-3").gpus("1").json());
    cluster.run_for(10);
    let events = cluster.events_for("trainer");
    assert_eq!(events.len(), 2);
    assert!(events[1]["message"].as_str().unwrap().starts_with("0/4 nodes are available"));

    // A node that fits: bound, with the Scheduled event.
    cluster.create("nodes", node("gpu-big").gpus("4").json());
    cluster.run_for(10);
    let pod = cluster.find("pods", "default", "trainer").unwrap();
    assert_eq!(pod["spec"]["nodeName"], json!("gpu-big"));
    let scheduled: Vec<Value> =
        cluster.events_for("trainer").into_iter().filter(|e| e["reason"] == "Scheduled").collect();
    assert_eq!(scheduled[0]["message"], json!("Successfully assigned default/trainer to gpu-big"));
}

#[tokio::test]
async fn a_stored_node_that_no_longer_decodes_is_skipped_and_pods_still_schedule() {
    // `metadata.labels` as a list: what an older store (before the server checked types) may
    // hold. The store below the HTTP layer takes it, as that older server did.
    let mut broken = node("cpu-1").json();
    broken["metadata"]["labels"] = json!(["x"]);
    let mut cluster = Cluster::new(vec![broken, node("node-a").json()]);
    cluster.create("pods", pod("web").image("nginx:1.27").json());
    cluster.run_for(30);
    let web = cluster.find("pods", "default", "web").unwrap();
    assert_eq!(web["spec"]["nodeName"], json!("node-a"), "{web:#}");
    assert_eq!(web["status"]["phase"], json!("Running"));
    // A pod that does not decode either is skipped; the next one is still scheduled.
    cluster.create(
        "pods",
        json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "odd", "namespace": "default", "labels": ["y"]},
            "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
        }),
    );
    cluster.create("pods", pod("api").image("nginx:1.27").json());
    cluster.run_for(30);
    assert_eq!(cluster.find("pods", "default", "api").unwrap()["spec"]["nodeName"], json!("node-a"));
    assert!(cluster.find("pods", "default", "odd").unwrap()["spec"]["nodeName"].is_null());
}

#[tokio::test]
async fn a_known_image_pulls_starts_and_becomes_ready() {
    let mut cluster = Cluster::three_workers();
    cluster.create("pods", pod("web").image("nginx:1.27").json());
    cluster.control.settle().unwrap();
    let pod = cluster.find("pods", "default", "web").unwrap();
    assert_eq!(waiting_reason(&pod), Some("ContainerCreating"));
    assert!(pod["status"]["podIP"].is_string());
    cluster.run_for(5);
    let pod = cluster.find("pods", "default", "web").unwrap();
    assert_eq!(pod["status"]["phase"], json!("Running"));
    assert!(is_ready(&pod));
    let status = &pod["status"]["containerStatuses"][0];
    assert_eq!(status["image"], json!("docker.io/library/nginx:1.27"));
    assert!(status["imageID"].as_str().unwrap().starts_with("docker.io/library/nginx@sha256:"));
    assert_eq!(
        (&status["ready"], &status["started"], &status["restartCount"]),
        (&json!(true), &json!(true), &json!(0))
    );
    let types: Vec<&str> =
        pod["status"]["conditions"].as_array().unwrap().iter().map(|c| c["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"]
    );
    let reasons: Vec<String> = cluster
        .events_for("web")
        .iter()
        .map(|e| {
            format!(
                "{} {}: {}",
                e["type"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
                e["message"].as_str().unwrap()
            )
        })
        .collect();
    let node = pod["spec"]["nodeName"].as_str().unwrap();
    assert_eq!(
        reasons,
        [
            format!("Normal Scheduled: Successfully assigned default/web to {node}"),
            "Normal Pulling: Pulling image \"nginx:1.27\"".to_string(),
            "Normal Pulled: Successfully pulled image \"nginx:1.27\" in 2s (2s including waiting). Image size: 72195292 bytes."
                .to_string(),
            "Normal Created: Created container: main".to_string(),
            "Normal Started: Started container main".to_string(),
        ]
    );
}

#[tokio::test]
async fn an_unknown_image_backs_off_doubling_to_five_minutes_and_starts_once_the_catalog_has_it() {
    let mut cluster = Cluster::three_workers();
    cluster.create("pods", pod("broken").image("busybox:nope").json());
    // Record when the container enters ErrImagePull.
    let mut failures = Vec::new();
    let mut last = None;
    while failures.len() < 9 {
        let at = cluster.control.advance_to_next_event().unwrap().expect("a wake-up is scheduled");
        let pod = cluster.find("pods", "default", "broken").unwrap();
        let reason = waiting_reason(&pod).map(str::to_string);
        // A retry pull shows the last failure (the kubelet's reasonCache), never ContainerCreating.
        assert!(
            failures.is_empty() || reason.as_deref() != Some("ContainerCreating"),
            "at {at}: a retry after a failed pull shows ContainerCreating"
        );
        if reason.as_deref() == Some("ErrImagePull") && last.as_deref() != Some("ErrImagePull") {
            failures.push(at);
        }
        last = reason;
    }
    let gaps: Vec<i64> = failures.windows(2).map(|w| w[1].duration_since(w[0]).as_secs()).collect();
    // Back-off 10s, 20s, … capped at 300s, plus the 1s a failing pull takes.
    assert_eq!(gaps, [11, 21, 41, 81, 161, 301, 301, 301]);
    let pod = cluster.find("pods", "default", "broken").unwrap();
    let state = &pod["status"]["containerStatuses"][0]["state"]["waiting"];
    let cri = "rpc error: code = NotFound desc = failed to pull and unpack image \"docker.io/library/busybox:nope\": failed to resolve reference \"docker.io/library/busybox:nope\": docker.io/library/busybox:nope: not found";
    assert_eq!(state["message"], json!(cri));
    cluster.run_for(2);
    let pod = cluster.find("pods", "default", "broken").unwrap();
    assert_eq!(waiting_reason(&pod), Some("ImagePullBackOff"));
    let message =
        pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"].as_str().unwrap().to_string();
    assert_eq!(message, format!("Back-off pulling image \"busybox:nope\": ErrImagePull: {cri}"));
    let ready = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Ready")
        .unwrap()
        .clone();
    assert_eq!(ready["reason"], json!("ContainersNotReady"));
    assert_eq!(ready["message"], json!("containers with unready status: [main]"));

    let events: Vec<Value> = cluster
        .events_for("broken")
        .iter()
        .map(|e| json!({"type": e["type"], "reason": e["reason"], "message": e["message"], "count": e["count"]}))
        .collect();
    insta::assert_yaml_snapshot!("image_pull_back_off_events", events, {"[0].message" => "[scheduled]"});

    // The image appears in the catalog: the same pod starts at its next attempt.
    let uid = pod["metadata"]["uid"].clone();
    cluster
        .control
        .config()
        .write()
        .unwrap()
        .catalog
        .add("busybox:nope", CatalogImage { pull_seconds: None, size_bytes: 1, run: Default::default() });
    cluster.run_for(310);
    let pod = cluster.find("pods", "default", "broken").unwrap();
    assert_eq!(pod["metadata"]["uid"], uid);
    assert!(is_ready(&pod));
    assert_eq!(pod["status"]["phase"], json!("Running"));
}

#[tokio::test]
async fn a_deleted_pod_is_killed_and_removed_after_its_containers_stop() {
    let mut cluster = Cluster::three_workers();
    cluster.create("pods", pod("web").image("nginx:1.27").json());
    cluster.run_for(5);
    cluster.delete("pods", "default", "web", None);
    let pod = cluster.find("pods", "default", "web").expect("graceful: still there");
    assert!(pod["metadata"]["deletionTimestamp"].is_string());
    cluster.control.settle().unwrap();
    assert!(cluster.find("pods", "default", "web").is_some());
    let killing: Vec<Value> =
        cluster.events_for("web").into_iter().filter(|e| e["reason"] == "Killing").collect();
    assert_eq!(killing[0]["message"], json!("Stopping container main"));
    cluster.run_for(2);
    assert!(cluster.find("pods", "default", "web").is_none());
}

#[tokio::test]
async fn deleting_a_daemonset_collects_its_pods_and_revisions() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "busybox:1.36", rolling(json!(1), json!(0))));
    cluster.run_for(30);
    assert_eq!(cluster.pods().len(), 3);
    cluster.delete("daemonsets", "default", "agent", Some(Propagation::Background));
    cluster.control.settle().unwrap();
    assert!(cluster.pods().iter().all(|p| p["metadata"]["deletionTimestamp"].is_string()));
    cluster.run_for(30);
    assert!(cluster.pods().is_empty());
    assert!(cluster.list("controllerrevisions.apps", Some("default")).is_empty());
}

#[tokio::test]
async fn foreground_deletion_keeps_the_owner_until_its_pods_are_gone() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "busybox:1.36", rolling(json!(1), json!(0))));
    cluster.run_for(30);
    cluster.delete("daemonsets", "default", "agent", Some(Propagation::Foreground));
    cluster.control.settle().unwrap();
    let owner = cluster.find("daemonsets", "default", "agent").expect("waits for its dependents");
    assert_eq!(owner["metadata"]["finalizers"], json!(["foregroundDeletion"]));
    cluster.run_for(30);
    assert!(cluster.pods().is_empty());
    assert!(cluster.find("daemonsets", "default", "agent").is_none());
}

#[tokio::test]
async fn orphan_deletion_leaves_the_pods_without_owner() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "busybox:1.36", rolling(json!(1), json!(0))));
    cluster.run_for(30);
    cluster.delete("daemonsets", "default", "agent", Some(Propagation::Orphan));
    cluster.run_for(30);
    assert!(cluster.find("daemonsets", "default", "agent").is_none());
    let pods = cluster.pods();
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| p["metadata"]["ownerReferences"].as_array().is_none_or(|r| r.is_empty())));
    assert!(pods.iter().all(|p| p["metadata"]["deletionTimestamp"].is_null()));
}

#[tokio::test]
async fn on_delete_replaces_a_pod_only_when_the_user_deletes_it() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "busybox:1.36", json!({"type": "OnDelete"})));
    cluster.run_for(30);
    cluster.change("daemonsets", "default", "agent", |ds| set_image(ds, "busybox:1.37"));
    cluster.run_for(600);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 0, 3]);
    assert_eq!(revisions(&cluster).len(), 2);
    let victim = cluster.pods_by_node()["node-b"][0]["metadata"]["name"].as_str().unwrap().to_string();
    cluster.delete("pods", "default", &victim, None);
    cluster.run_for(60);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 1, 3]);
    let images: BTreeMap<String, String> = cluster
        .pods_by_node()
        .into_iter()
        .map(|(node, pods)| (node, pods[0]["spec"]["containers"][0]["image"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(images["node-b"], "busybox:1.37");
    assert_eq!(images["node-a"], "busybox:1.36");
}

#[tokio::test]
async fn max_surge_starts_the_new_pod_before_the_old_one_goes() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "busybox:1.36", rolling(json!(0), json!(1))));
    cluster.run_for(30);
    cluster.change("daemonsets", "default", "agent", |ds| set_image(ds, "busybox:1.37"));
    cluster.control.settle().unwrap();
    let during = cluster.pods_by_node();
    assert_eq!(during.values().filter(|pods| pods.len() == 2).count(), 1, "one node surged");
    assert_eq!(cluster.pods().iter().filter(|p| p["metadata"]["deletionTimestamp"].is_string()).count(), 0);
    cluster.run_for(300);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 3, 3]);
    assert!(cluster.pods_by_node().values().all(|pods| pods.len() == 1));
}

#[tokio::test]
async fn min_ready_seconds_delays_availability() {
    let mut cluster = Cluster::three_workers();
    let mut ds = daemonset("agent", "busybox:1.36", rolling(json!(1), json!(0)));
    ds["spec"]["minReadySeconds"] = json!(30);
    cluster.create("daemonsets", ds);
    cluster.run_for(5);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 3, 0]);
    cluster.run_for(40);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 3, 3]);
}

#[tokio::test]
async fn revision_history_is_trimmed_to_the_limit() {
    let mut cluster = Cluster::three_workers();
    let mut ds = daemonset("agent", "busybox:1.36", rolling(json!(3), json!(0)));
    ds["spec"]["revisionHistoryLimit"] = json!(1);
    cluster.create("daemonsets", ds);
    cluster.run_for(30);
    for image in ["busybox:1.37", "busybox:latest", "busybox:stable"] {
        cluster.change("daemonsets", "default", "agent", |ds| set_image(ds, image));
        cluster.run_for(120);
    }
    let kept = revisions(&cluster);
    assert_eq!(kept.values().copied().collect::<Vec<_>>().len(), 2, "{kept:?}");
    assert_eq!(kept.values().max(), Some(&4));
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 3, 3]);
}

#[tokio::test]
async fn a_no_execute_taint_removes_the_daemon_pod_and_no_schedule_keeps_it() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "busybox:1.36", rolling(json!(1), json!(0))));
    cluster.run_for(30);
    cluster.change("nodes", "default", "node-a", |n| {
        n["spec"]["taints"] = json!([{"key": "x", "effect": "NoSchedule"}])
    });
    cluster.run_for(30);
    assert_eq!(cluster.ds_columns("agent"), [2, 2, 2, 2, 2]);
    assert_eq!(
        cluster.find("daemonsets", "default", "agent").unwrap()["status"]["numberMisscheduled"],
        json!(1)
    );
    assert!(cluster.pods_by_node().contains_key("node-a"));
    cluster.change("nodes", "default", "node-b", |n| {
        n["spec"]["taints"] = json!([{"key": "y", "effect": "NoExecute"}])
    });
    cluster.run_for(30);
    assert!(!cluster.pods_by_node().contains_key("node-b"));
    assert_eq!(cluster.ds_columns("agent"), [1, 1, 1, 1, 1]);
}

fn deployment(name: &str, image: &str, replicas: i64) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    })
}

/// What `kubectl rollout status deployment/<name>` prints for the current status
/// (kubectl `pkg/polymorphichelpers/rollout_status.go`, DeploymentStatusViewer).
fn deployment_rollout_line(d: &Value) -> String {
    let name = d["metadata"]["name"].as_str().unwrap();
    let status = &d["status"];
    let n = |field: &str| status[field].as_i64().unwrap_or(0);
    let replicas = d["spec"]["replicas"].as_i64().unwrap();
    let condition = status["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == "Progressing"))
        .cloned()
        .unwrap_or(Value::Null);
    if condition["reason"] == "ProgressDeadlineExceeded" {
        return format!("error: deployment {name:?} exceeded its progress deadline");
    }
    if n("updatedReplicas") < replicas {
        return format!(
            "Waiting for deployment {name:?} rollout to finish: {} out of {replicas} new replicas have been updated...",
            n("updatedReplicas")
        );
    }
    if n("replicas") > n("updatedReplicas") {
        return format!(
            "Waiting for deployment {name:?} rollout to finish: {} old replicas are pending termination...",
            n("replicas") - n("updatedReplicas")
        );
    }
    if n("availableReplicas") < n("updatedReplicas") {
        return format!(
            "Waiting for deployment {name:?} rollout to finish: {} of {} updated replicas are available...",
            n("availableReplicas"),
            n("updatedReplicas")
        );
    }
    format!("deployment {name:?} successfully rolled out")
}

#[tokio::test]
async fn a_deployment_rolls_out_through_replica_sets_and_a_bad_image_hits_the_progress_deadline() {
    let mut cluster = Cluster::three_workers();
    cluster.create("deployments", deployment("web", "nginx:1.27", 4));
    cluster.run_for(60);
    let d = cluster.find("deployments", "default", "web").unwrap();
    assert_eq!(deployment_rollout_line(&d), "deployment \"web\" successfully rolled out");
    let status = &d["status"];
    assert_eq!(
        [
            &status["replicas"],
            &status["updatedReplicas"],
            &status["readyReplicas"],
            &status["availableReplicas"]
        ],
        [&json!(4), &json!(4), &json!(4), &json!(4)]
    );
    let conditions: Vec<(String, String)> = status["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["type"].as_str().unwrap().to_string(), c["reason"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(
        conditions,
        [
            ("Available".to_string(), "MinimumReplicasAvailable".to_string()),
            ("Progressing".to_string(), "NewReplicaSetAvailable".to_string())
        ]
    );
    let replica_sets = cluster.list("replicasets.apps", Some("default"));
    assert_eq!(replica_sets.len(), 1);
    let first = replica_sets[0]["metadata"]["name"].as_str().unwrap().to_string();
    let hash = replica_sets[0]["metadata"]["labels"]["pod-template-hash"].as_str().unwrap();
    assert_eq!(first, format!("web-{hash}"));
    assert_eq!(cluster.pods().len(), 4);
    let scaled: Vec<String> = cluster
        .events_for("web")
        .iter()
        .filter(|e| e["reason"] == "ScalingReplicaSet")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(scaled, [format!("Scaled up replica set {first} from 0 to 4")]);

    // A bad image: maxSurge 25% (1) and maxUnavailable 25% (1) let one old pod go and two new
    // ones start; they never become available and the rollout stops there.
    cluster.change("deployments", "default", "web", |d| set_image(d, "nginx:0.0-missing"));
    cluster.run_for(300);
    let d = cluster.find("deployments", "default", "web").unwrap();
    assert_eq!(
        deployment_rollout_line(&d),
        "Waiting for deployment \"web\" rollout to finish: 2 out of 4 new replicas have been updated..."
    );
    assert_eq!(d["status"]["availableReplicas"], json!(3));
    assert_eq!(cluster.pods().iter().filter(|p| p["metadata"]["deletionTimestamp"].is_null()).count(), 5);
    cluster.run_for(600);
    let d = cluster.find("deployments", "default", "web").unwrap();
    assert_eq!(deployment_rollout_line(&d), "error: deployment \"web\" exceeded its progress deadline");
    let progressing = d["status"]["conditions"][1].clone();
    assert_eq!(progressing["status"], json!("False"));
    assert!(progressing["message"].as_str().unwrap().ends_with("has timed out progressing."));

    // Undo: the first ReplicaSet is the new one again, renumbered to revision 3.
    cluster.change("deployments", "default", "web", |d| set_image(d, "nginx:1.27"));
    cluster.run_for(120);
    let d = cluster.find("deployments", "default", "web").unwrap();
    assert_eq!(deployment_rollout_line(&d), "deployment \"web\" successfully rolled out");
    let first_rs = cluster.find("replicasets", "default", &first).unwrap();
    assert_eq!(first_rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], json!("3"));
    assert_eq!(first_rs["spec"]["replicas"], json!(4));
    assert_eq!(cluster.pods().len(), 4);
}

#[tokio::test]
async fn a_replica_set_replaces_a_deleted_pod_and_scales_down_newest_first() {
    let mut cluster = Cluster::three_workers();
    cluster.create("deployments", deployment("web", "nginx:1.27", 3));
    cluster.run_for(30);
    let victim = cluster.pods()[0]["metadata"]["name"].as_str().unwrap().to_string();
    cluster.delete("pods", "default", &victim, None);
    cluster.run_for(30);
    let names: Vec<String> =
        cluster.pods().iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(names.len(), 3);
    assert!(!names.contains(&victim));
    cluster.change("deployments", "default", "web", |d| d["spec"]["replicas"] = json!(1));
    cluster.run_for(30);
    assert_eq!(cluster.pods().len(), 1);
    let d = cluster.find("deployments", "default", "web").unwrap();
    assert_eq!(d["status"]["replicas"], json!(1));
    assert_eq!(d["status"]["availableReplicas"], json!(1));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spawned_controllers_run_on_a_sped_up_real_clock() {
    use lab_runner::sim::{clock::Clock, server::SimState, store::Store};
    let state = std::sync::Arc::new(SimState::new(Store::in_memory().unwrap(), Clock::real_with_speed(50.0)));
    lab_runner::sim::server::ensure_system_namespaces(&state).unwrap();
    state.store.create(&rt("nodes"), node("node-a").json()).unwrap();
    let handle = lab_runner::sim::controllers::spawn(state.clone(), Config::defaults()).unwrap();
    state.store.create(&rt("pods"), pod("web").image("nginx:1.27").json()).unwrap();
    // A 2 s pull at 50x is 40 ms of wall time; poll (bounded) instead of asserting a duration.
    let mut phase = Value::Null;
    for _ in 0..200 {
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        phase = state.store.get_value(&rt("pods"), "default", "web").unwrap()["status"]["phase"].clone();
        if phase == json!("Running") {
            break;
        }
    }
    handle.abort();
    assert_eq!(phase, json!("Running"));
}

#[tokio::test]
async fn a_no_execute_taint_evicts_pods_that_do_not_tolerate_it() {
    let mut cluster = Cluster::three_workers();
    let mut patient = pod("patient").image("nginx:1.27").json();
    patient["spec"]["nodeName"] = json!("node-a");
    patient["spec"]["tolerations"] =
        json!([{"key": "maintenance", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]);
    let mut plain = pod("plain").image("nginx:1.27").json();
    plain["spec"]["nodeName"] = json!("node-a");
    cluster.create("pods", patient);
    cluster.create("pods", plain);
    cluster.run_for(10);
    cluster.change("nodes", "default", "node-a", |n| {
        n["spec"]["taints"] = json!([{"key": "maintenance", "effect": "NoExecute"}]);
    });
    cluster.control.settle().unwrap();
    let plain = cluster.find("pods", "default", "plain").unwrap();
    assert!(plain["metadata"]["deletionTimestamp"].is_string());
    let events = cluster.events_for("plain");
    let eviction = events.iter().find(|e| e["reason"] == "TaintManagerEviction").unwrap();
    assert_eq!(eviction["message"], json!("Marking for deletion Pod default/plain"));
    assert!(cluster.find("pods", "default", "patient").unwrap()["metadata"]["deletionTimestamp"].is_null());
    cluster.run_for(30);
    assert!(cluster.find("pods", "default", "plain").is_none());
    assert!(cluster.find("pods", "default", "patient").is_some(), "tolerated for 60s");
    cluster.run_for(40);
    assert!(cluster.find("pods", "default", "patient").is_none());
}

#[tokio::test]
async fn the_template_generation_annotation_moves_with_the_template_and_labels_the_pods() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("agent", "nginx:1.27", rolling(json!(1), json!(0))));
    cluster.run_for(60);
    let annotation = |cluster: &Cluster| {
        let ds = cluster.find("daemonsets", "default", "agent").unwrap();
        (
            ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone(),
            ds["metadata"]["generation"].clone(),
        )
    };
    assert_eq!(annotation(&cluster), (json!("1"), json!(1)));
    for pod in cluster.pods() {
        assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], json!("1"));
    }
    // A client cannot move it: its value is ignored on update (strategy.go PrepareForUpdate).
    cluster.change("daemonsets", "default", "agent", |ds| {
        ds["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = json!("7");
    });
    assert_eq!(annotation(&cluster), (json!("1"), json!(1)));
    // Fields written as their Go zero value are the same as absent ones: no bump of either, and
    // they are not stored (upstream decodes into structs with `omitempty` plain fields).
    cluster.change("daemonsets", "default", "agent", |ds| {
        ds["spec"]["minReadySeconds"] = json!(0);
        ds["spec"]["template"]["spec"]["hostNetwork"] = json!(false);
    });
    assert_eq!(annotation(&cluster), (json!("1"), json!(1)));
    let stored = cluster.find("daemonsets", "default", "agent").unwrap();
    assert_eq!(stored["spec"].get("minReadySeconds"), None);
    assert_eq!(stored["spec"]["template"]["spec"].get("hostNetwork"), None);
    // A non-template spec change bumps generation only.
    cluster.change("daemonsets", "default", "agent", |ds| ds["spec"]["revisionHistoryLimit"] = json!(5));
    assert_eq!(annotation(&cluster), (json!("1"), json!(2)));
    // A template change bumps both; the new pods carry the new template generation.
    cluster.change("daemonsets", "default", "agent", |ds| set_image(ds, "nginx:1.26"));
    assert_eq!(annotation(&cluster), (json!("2"), json!(3)));
    cluster.run_for(300);
    assert_eq!(cluster.ds_columns("agent"), [3, 3, 3, 3, 3]);
    for pod in cluster.pods() {
        assert_eq!(pod["metadata"]["labels"]["pod-template-generation"], json!("2"));
    }
    // The revision snapshots the DaemonSet's annotations, the template generation included.
    let newest = cluster
        .list("controllerrevisions.apps", Some("default"))
        .into_iter()
        .max_by_key(|r| r["revision"].as_i64())
        .unwrap();
    assert_eq!(newest["metadata"]["annotations"]["deprecated.daemonset.template.generation"], json!("2"));
}

#[tokio::test]
async fn a_gated_pod_waits_with_scheduling_gated_until_its_gates_are_removed() {
    let mut cluster = Cluster::three_workers();
    let mut pod = pod("gated").image("nginx:1.27").json();
    pod["spec"]["schedulingGates"] = json!([{"name": "example.com/quota"}, {"name": "example.com/review"}]);
    let created = cluster.create("pods", pod);
    // The apiserver adds the condition on create (pod strategy `applySchedulingGatedCondition`).
    let condition = &created["status"]["conditions"][0];
    assert_eq!(condition["type"], json!("PodScheduled"));
    assert_eq!(condition["status"], json!("False"));
    assert_eq!(condition["reason"], json!("SchedulingGated"));
    assert_eq!(condition["message"], json!("Scheduling is blocked due to non-empty scheduling gates"));
    cluster.run_for(600);
    let pod = cluster.find("pods", "default", "gated").unwrap();
    assert!(pod["spec"]["nodeName"].is_null(), "a gated pod is never scheduled");
    assert!(cluster.events_for("gated").is_empty(), "no FailedScheduling for a gated pod");
    // Gates can only be removed (`validateOnlyDeletedSchedulingGates`).
    let mut added = cluster.find("pods", "default", "gated").unwrap();
    added["spec"]["schedulingGates"] = json!([{"name": "example.com/quota"}, {"name": "example.com/new"}]);
    let refused =
        cluster.sim.state.store.update(&rt("pods"), added, Subresource::Main, DryRun::Off).unwrap_err();
    assert_eq!(
        refused.to_string(),
        "Pod \"gated\" is invalid: spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'example.com/new'"
    );
    cluster.change("pods", "default", "gated", |p| {
        p["spec"]["schedulingGates"] = json!([{"name": "example.com/review"}])
    });
    cluster.run_for(60);
    assert!(cluster.find("pods", "default", "gated").unwrap()["spec"]["nodeName"].is_null(), "one gate left");
    cluster.change("pods", "default", "gated", |p| {
        p["spec"].as_object_mut().unwrap().remove("schedulingGates");
    });
    cluster.run_for(60);
    let pod = cluster.find("pods", "default", "gated").unwrap();
    assert!(pod["spec"]["nodeName"].is_string());
    assert_eq!(pod["status"]["phase"], json!("Running"));
    let scheduled = pod["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "PodScheduled")
        .unwrap()
        .clone();
    assert_eq!(scheduled["status"], json!("True"));
    assert!(scheduled.get("reason").is_none());
}

fn batch_image(cluster: &Cluster, name: &str, seconds: f64, exit_code: i32) {
    let config = cluster.control.config();
    let run = ImageRun::Exits { seconds, exit_code };
    config
        .write()
        .unwrap()
        .catalog
        .add(name, CatalogImage { pull_seconds: Some(1.0), size_bytes: 1000, run });
}

fn job(name: &str, image: &str, spec: Value) -> Value {
    let mut job = json!({
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "work", "image": image}]}}},
    });
    for (key, value) in spec.as_object().unwrap() {
        job["spec"][key] = value.clone();
    }
    job
}

fn conditions(job: &Value) -> Vec<(String, String, String)> {
    job["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
            (text(&c["type"]), text(&c["reason"]), text(&c["message"]))
        })
        .collect()
}

#[tokio::test]
async fn a_job_runs_pods_up_to_parallelism_until_its_completions_succeed() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/train:v1", 30.0, 0);
    let created = cluster
        .create("jobs", job("train", "example.com/train:v1", json!({"completions": 3, "parallelism": 2})));
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    // Generated selector and template labels (job strategy `generateSelector`).
    assert_eq!(
        created["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    cluster.control.settle().unwrap();
    let pods = cluster.pods();
    assert_eq!(pods.len(), 2, "parallelism 2");
    for pod in &pods {
        let labels = &pod["metadata"]["labels"];
        assert_eq!(labels["batch.kubernetes.io/job-name"], json!("train"));
        assert_eq!(labels["job-name"], json!("train"));
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], json!(uid));
        assert_eq!(labels["controller-uid"], json!(uid));
        assert_eq!(pod["metadata"]["finalizers"], json!(["batch.kubernetes.io/job-tracking"]));
        assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], json!("Job"));
    }
    let running = cluster.find("jobs", "default", "train").unwrap();
    assert_eq!(running["status"]["active"], json!(2));
    assert!(running["status"]["startTime"].is_string());
    assert_eq!(running["status"]["uncountedTerminatedPods"], json!({}));
    cluster.run_for(5);
    assert_eq!(cluster.find("jobs", "default", "train").unwrap()["status"]["ready"], json!(2));

    cluster.run_for(600);
    let done = cluster.find("jobs", "default", "train").unwrap();
    let status = &done["status"];
    assert_eq!(status["succeeded"], json!(3));
    assert!(status.get("active").is_none() && status.get("failed").is_none());
    assert_eq!((&status["ready"], &status["terminating"]), (&json!(0), &json!(0)));
    assert_eq!(status["uncountedTerminatedPods"], json!({}));
    assert!(status["completionTime"].is_string());
    let reached = ("CompletionsReached".to_string(), "Reached expected number of succeeded pods".to_string());
    assert_eq!(
        conditions(&done),
        vec![
            ("SuccessCriteriaMet".to_string(), reached.0.clone(), reached.1.clone()),
            ("Complete".to_string(), reached.0, reached.1)
        ]
    );
    let pods = cluster.pods();
    assert_eq!(pods.len(), 3);
    for pod in &pods {
        assert_eq!(pod["status"]["phase"], json!("Succeeded"));
        assert_eq!(pod["metadata"]["finalizers"], Value::Null, "counted pods lose the tracking finalizer");
        let terminated = &pod["status"]["containerStatuses"][0]["state"]["terminated"];
        assert_eq!((&terminated["exitCode"], &terminated["reason"]), (&json!(0), &json!("Completed")));
    }
    let events: Vec<(String, String)> = cluster
        .events_for("train")
        .iter()
        .map(|e| (e["reason"].as_str().unwrap().to_string(), e["message"].as_str().unwrap().to_string()))
        .collect();
    assert_eq!(events.iter().filter(|(reason, _)| reason == "SuccessfulCreate").count(), 3);
    assert!(
        events
            .iter()
            .all(|(reason, message)| reason != "SuccessfulCreate"
                || message.starts_with("Created pod: train-"))
    );
    assert_eq!(events.last().unwrap(), &("Completed".to_string(), "Job completed".to_string()));

    // Deleting the Job collects its finished pods (no finalizer holds them).
    cluster.delete("jobs", "default", "train", Some(Propagation::Background));
    cluster.run_for(60);
    assert!(cluster.pods().is_empty());
}

#[tokio::test]
async fn an_indexed_job_gives_each_pod_its_index_and_records_completed_indexes() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/shard:v1", 30.0, 0);
    let spec = json!({"completions": 3, "parallelism": 2, "completionMode": "Indexed"});
    cluster.create("jobs", job("shard", "example.com/shard:v1", spec));
    cluster.control.settle().unwrap();
    let mut pods = cluster.pods();
    pods.sort_by_key(|p| p["metadata"]["name"].as_str().unwrap().to_string());
    assert_eq!(pods.len(), 2, "parallelism 2: the two lowest indexes");
    for (index, pod) in pods.iter().enumerate() {
        let index = index.to_string();
        let name = pod["metadata"]["name"].as_str().unwrap();
        assert!(name.starts_with(&format!("shard-{index}-")), "podGenerateNameWithIndex: {name}");
        assert_eq!(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"], json!(index));
        assert_eq!(pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"], json!(index));
        assert_eq!(pod["spec"]["hostname"], json!(format!("shard-{index}")));
        assert_eq!(
            pod["spec"]["containers"][0]["env"],
            json!([{"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {"apiVersion": "v1",
                "fieldPath": "metadata.labels['batch.kubernetes.io/job-completion-index']"}}}])
        );
    }
    // The template itself is unchanged: only the pods carry the index.
    let template = &cluster.find("jobs", "default", "shard").unwrap()["spec"]["template"];
    assert!(template["spec"]["containers"][0].get("env").is_none());

    // Index 0 and 1 finish; index 2 starts and finishes; the Job completes with all three.
    cluster.run_for(40);
    let midway = cluster.find("jobs", "default", "shard").unwrap();
    assert_eq!(midway["status"]["completedIndexes"], json!("0,1"), "two adjacent indexes print as 0,1");
    assert_eq!(midway["status"]["succeeded"], json!(2));
    assert_eq!(midway["status"]["uncountedTerminatedPods"], json!({}), "indexes, not uids, count successes");
    cluster.run_for(600);
    let done = cluster.find("jobs", "default", "shard").unwrap();
    assert_eq!(done["status"]["completedIndexes"], json!("0-2"));
    assert_eq!(done["status"]["succeeded"], json!(3));
    assert_eq!(conditions(&done).last().unwrap().0, "Complete");
    let mut indexes: Vec<String> = cluster
        .pods()
        .iter()
        .map(|p| {
            p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    indexes.sort();
    assert_eq!(indexes, ["0", "1", "2"], "one pod per index");
}

#[tokio::test]
async fn an_indexed_job_replaces_a_deleted_pod_with_the_same_index() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/shard:v1", 3600.0, 0);
    let spec = json!({"completions": 4, "parallelism": 2, "completionMode": "Indexed"});
    cluster.create("jobs", job("shard", "example.com/shard:v1", spec));
    cluster.run_for(10);
    let index_of =
        |pod: &Value| pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"].clone();
    let first = cluster.pods().into_iter().find(|p| index_of(p) == json!("1")).unwrap();
    cluster.delete("pods", "default", first["metadata"]["name"].as_str().unwrap(), None);
    cluster.run_for(60);
    let running: Vec<Value> =
        cluster.pods().into_iter().filter(|p| p["metadata"]["deletionTimestamp"].is_null()).collect();
    let mut indexes: Vec<Value> = running.iter().map(index_of).collect();
    indexes.sort_by_key(|v| v.as_str().unwrap().to_string());
    assert_eq!(indexes, [json!("0"), json!("1")], "the lowest pending index is the deleted one");
    assert_ne!(
        running.iter().find(|p| index_of(p) == json!("1")).unwrap()["metadata"]["uid"],
        first["metadata"]["uid"]
    );
    assert_eq!(
        cluster.find("jobs", "default", "shard").unwrap()["status"]["failed"],
        json!(1),
        "a deleted pod counts as failed"
    );
}

fn stateful_set(name: &str, image: &str, replicas: i64, policy: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"serviceName": name, "replicas": replicas, "podManagementPolicy": policy,
                 "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "server", "image": image}]}}},
    })
}

/// Names of the set's pods not being deleted, sorted.
fn live_pod_names(cluster: &Cluster) -> Vec<String> {
    let mut names: Vec<String> = cluster
        .pods()
        .iter()
        .filter(|p| p["metadata"]["deletionTimestamp"].is_null())
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn an_ordered_stateful_set_creates_each_pod_after_the_previous_is_ready() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/db:v1", 36_000.0, 0);
    batch_image(&cluster, "example.com/db:v2", 36_000.0, 0);
    cluster.create("statefulsets", stateful_set("db", "example.com/db:v1", 3, "OrderedReady"));
    cluster.control.settle().unwrap();
    assert_eq!(live_pod_names(&cluster), ["db-0"], "db-1 waits for db-0 to be Running and Ready");
    let pod = cluster.find("pods", "default", "db-0").unwrap();
    let labels = &pod["metadata"]["labels"];
    assert_eq!(labels["statefulset.kubernetes.io/pod-name"], json!("db-0"));
    assert_eq!(labels["apps.kubernetes.io/pod-index"], json!("0"));
    let revision = labels["controller-revision-hash"].as_str().unwrap().to_string();
    assert!(revision.starts_with("db-"), "{revision}");
    assert_eq!((&pod["spec"]["hostname"], &pod["spec"]["subdomain"]), (&json!("db-0"), &json!("db")));
    assert_eq!(pod["metadata"]["ownerReferences"][0]["kind"], json!("StatefulSet"));
    let history = cluster.list("controllerrevisions.apps", Some("default"));
    assert_eq!(history.len(), 1);
    assert_eq!(history[0]["metadata"]["name"], json!(revision));
    assert_eq!(history[0]["data"]["spec"]["template"]["$patch"], json!("replace"));

    cluster.run_for(60);
    assert_eq!(live_pod_names(&cluster), ["db-0", "db-1", "db-2"]);
    let status = cluster.find("statefulsets", "default", "db").unwrap()["status"].clone();
    assert_eq!(
        status,
        json!({"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "currentReplicas": 3,
               "updatedReplicas": 3, "availableReplicas": 3, "currentRevision": revision,
               "updateRevision": revision, "collisionCount": 0})
    );
    let created: Vec<String> = cluster
        .events_for("db")
        .iter()
        .filter(|e| e["reason"] == "SuccessfulCreate")
        .map(|e| e["message"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        created,
        [
            "create Pod db-0 in StatefulSet db successful",
            "create Pod db-1 in StatefulSet db successful",
            "create Pod db-2 in StatefulSet db successful"
        ]
    );

    // A new template rolls from the highest ordinal down, one pod at a time.
    cluster.change("statefulsets", "default", "db", |sts| {
        sts["spec"]["template"]["spec"]["containers"][0]["image"] = json!("example.com/db:v2")
    });
    cluster.control.settle().unwrap();
    assert_eq!(live_pod_names(&cluster), ["db-0", "db-1"], "db-2 goes first");
    cluster.run_for(120);
    let status = cluster.find("statefulsets", "default", "db").unwrap()["status"].clone();
    let update = status["updateRevision"].as_str().unwrap().to_string();
    assert_ne!(update, revision);
    assert_eq!((&status["currentRevision"], &status["updatedReplicas"]), (&json!(update), &json!(3)));
    assert_eq!(cluster.list("controllerrevisions.apps", Some("default")).len(), 2);
    for pod in cluster.pods() {
        assert_eq!(pod["spec"]["containers"][0]["image"], json!("example.com/db:v2"));
    }

    // Scaling down removes the highest ordinal first, one at a time.
    cluster.change("statefulsets", "default", "db", |sts| sts["spec"]["replicas"] = json!(1));
    cluster.control.settle().unwrap();
    assert_eq!(live_pod_names(&cluster), ["db-0", "db-1"]);
    cluster.run_for(60);
    assert_eq!(live_pod_names(&cluster), ["db-0"]);
}

#[tokio::test]
async fn a_parallel_stateful_set_creates_and_removes_every_pod_at_once() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/db:v1", 36_000.0, 0);
    cluster.create("statefulsets", stateful_set("cache", "example.com/db:v1", 3, "Parallel"));
    cluster.control.settle().unwrap();
    assert_eq!(live_pod_names(&cluster), ["cache-0", "cache-1", "cache-2"]);
    cluster.run_for(30);
    cluster.change("statefulsets", "default", "cache", |sts| sts["spec"]["replicas"] = json!(0));
    cluster.control.settle().unwrap();
    assert!(live_pod_names(&cluster).is_empty());
    // A deleted pod comes back under its own name.
    cluster.change("statefulsets", "default", "cache", |sts| sts["spec"]["replicas"] = json!(2));
    cluster.run_for(60);
    assert_eq!(live_pod_names(&cluster), ["cache-0", "cache-1"]);
}

/// `getStatefulSetRevisions` (pkg/controller/statefulset/stateful_set_control.go): a template
/// that matches an older revision takes it back with the next number; the data is `getPatch`'s
/// bytes (stateful_set_utils.go), which kubectl's `statefulsetMatch` compares.
#[tokio::test]
async fn a_stateful_set_back_at_an_old_template_renumbers_that_revision() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/db:v1", 36_000.0, 0);
    batch_image(&cluster, "example.com/db:v2", 36_000.0, 0);
    cluster.create("statefulsets", stateful_set("store", "example.com/db:v1", 1, "Parallel"));
    cluster.run_for(30);
    let set_image = |cluster: &Cluster, image: &str| {
        let image = image.to_string();
        cluster.change("statefulsets", "default", "store", move |sts| {
            sts["spec"]["template"]["spec"]["containers"][0]["image"] = json!(image)
        });
    };
    set_image(&cluster, "example.com/db:v2");
    cluster.run_for(60);
    set_image(&cluster, "example.com/db:v1");
    cluster.run_for(60);
    let mut revisions: Vec<(i64, String)> = cluster
        .list("controllerrevisions.apps", Some("default"))
        .iter()
        .map(|rev| {
            let image = rev["data"]["spec"]["template"]["spec"]["containers"][0]["image"].as_str().unwrap();
            (rev["revision"].as_i64().unwrap(), image.to_string())
        })
        .collect();
    revisions.sort();
    assert_eq!(revisions, [(2, "example.com/db:v2".to_string()), (3, "example.com/db:v1".to_string())]);
    let current = cluster
        .list("controllerrevisions.apps", Some("default"))
        .into_iter()
        .find(|rev| rev["revision"] == json!(3))
        .unwrap();
    // Go's bytes: keys sorted, `$patch` first, the typed zero fields written.
    let data = lab_runner::sim::gojson::to_string(&current["data"]);
    assert!(
        data.starts_with(r#"{"spec":{"template":{"$patch":"replace","metadata":{"creationTimestamp":null,"labels":{"app":"store"}},"spec":{"containers":[{"image":"example.com/db:v1","#),
        "{data}"
    );
    assert!(data.contains(r#""name":"server","resources":{},"#), "{data}");
    let sts = cluster.get("statefulsets", "default", "store");
    assert_eq!(sts["status"]["updateRevision"], current["metadata"]["name"]);
}

#[tokio::test]
async fn pods_of_a_deleted_job_do_not_keep_the_tracking_finalizer() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/long:v1", 3600.0, 0);
    cluster
        .create("jobs", job("orphaned", "example.com/long:v1", json!({"parallelism": 2, "completions": 4})));
    cluster.create("jobs", job("collected", "example.com/long:v1", json!({})));
    cluster.run_for(30);
    assert_eq!(cluster.pods().len(), 3);
    // Orphaning: the pods stay and keep running, without owner and without finalizer.
    cluster.delete("jobs", "default", "orphaned", Some(Propagation::Orphan));
    // Background: the pods are deleted; the finalizer must not hold them.
    cluster.delete("jobs", "default", "collected", Some(Propagation::Background));
    cluster.run_for(120);
    let pods = cluster.pods();
    assert_eq!(pods.len(), 2, "{pods:?}");
    for pod in &pods {
        assert!(pod["metadata"]["name"].as_str().unwrap().starts_with("orphaned-"));
        assert!(pod["metadata"]["ownerReferences"].as_array().is_none_or(|refs| refs.is_empty()));
        assert_eq!(pod["metadata"]["finalizers"], Value::Null);
        assert_eq!(pod["status"]["phase"], json!("Running"));
    }
}

#[tokio::test]
async fn a_failing_job_backs_off_and_fails_past_its_backoff_limit() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/broken:v1", 5.0, 1);
    cluster.create("jobs", job("broken", "example.com/broken:v1", json!({"backoffLimit": 2})));
    cluster.run_for(3600);
    let failed = cluster.find("jobs", "default", "broken").unwrap();
    let status = &failed["status"];
    assert_eq!(status["failed"], json!(3), "backoffLimit 2: the third failure ends it");
    assert!(status.get("succeeded").is_none() && status.get("active").is_none());
    assert!(status.get("completionTime").is_none(), "a failed Job has no completionTime");
    let exceeded =
        ("BackoffLimitExceeded".to_string(), "Job has reached the specified backoff limit".to_string());
    assert_eq!(
        conditions(&failed),
        vec![
            ("FailureTarget".to_string(), exceeded.0.clone(), exceeded.1.clone()),
            ("Failed".to_string(), exceeded.0.clone(), exceeded.1.clone())
        ]
    );
    let pods = cluster.pods();
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| p["status"]["phase"] == json!("Failed")));
    let terminated = &pods[0]["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!((&terminated["exitCode"], &terminated["reason"]), (&json!(1), &json!("Error")));
    // The replacements waited out the pod failure back-off: 10s after the first failure, 20s
    // after the second.
    let mut created: Vec<k8s_openapi::jiff::Timestamp> =
        pods.iter().map(|p| p["metadata"]["creationTimestamp"].as_str().unwrap().parse().unwrap()).collect();
    created.sort();
    let gaps: Vec<i64> = created.windows(2).map(|w| w[1].duration_since(w[0]).as_secs()).collect();
    assert!(gaps[0] >= 10 && gaps[1] >= 20 && gaps[1] > gaps[0], "back-off gaps {gaps:?}");
    let last = cluster.events_for("broken").last().unwrap().clone();
    assert_eq!((&last["type"], &last["reason"]), (&json!("Warning"), &json!("BackoffLimitExceeded")));
    assert_eq!(last["message"], json!("Job has reached the specified backoff limit"));
}

#[tokio::test]
async fn a_fail_job_rule_on_an_exit_code_fails_the_job_with_the_pod_failure_policy_reason() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/train:v1", 5.0, 42);
    let policy = json!({"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
        {"action": "Count", "onExitCodes": {"operator": "In", "values": [1, 2]}},
        {"action": "FailJob", "onExitCodes": {"containerName": "work", "operator": "NotIn", "values": [1, 2]}},
    ]});
    let created = cluster.create(
        "jobs",
        job("train", "example.com/train:v1", json!({"backoffLimit": 6, "podFailurePolicy": policy})),
    );
    // `SetDefaults_Job`: with a policy only failed pods are replaced.
    assert_eq!(created["spec"]["podReplacementPolicy"], json!("Failed"));
    cluster.run_for(600);
    let pods = cluster.pods();
    assert_eq!(pods.len(), 1, "a FailJob match is not retried, whatever the backoffLimit");
    let pod = pods[0]["metadata"]["name"].as_str().unwrap();
    // pod_failure_policy.go `matchPodFailurePolicy`'s message, rule index 2.
    let message = format!(
        "Container work for pod default/{pod} failed with exit code 42 matching FailJob rule at index 2"
    );
    let failed = cluster.get("jobs", "default", "train");
    let by_policy = ("PodFailurePolicy".to_string(), message.clone());
    assert_eq!(
        conditions(&failed),
        vec![
            ("FailureTarget".to_string(), by_policy.0.clone(), by_policy.1.clone()),
            ("Failed".to_string(), by_policy.0, by_policy.1)
        ]
    );
    assert_eq!(failed["status"]["failed"], json!(1));
    assert_eq!(pods[0]["metadata"]["finalizers"], Value::Null, "the failure was counted and released");
    let last = cluster.events_for("train").last().unwrap().clone();
    assert_eq!((&last["type"], &last["reason"]), (&json!("Warning"), &json!("PodFailurePolicy")));
    assert_eq!(last["message"], json!(message));
}

/// The pods of `job`'s `index`, oldest first.
fn pods_of_index(cluster: &Cluster, index: &str) -> Vec<Value> {
    let mut pods: Vec<Value> = cluster
        .pods()
        .into_iter()
        .filter(|p| p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] == json!(index))
        .collect();
    pods.sort_by_key(|p| p["metadata"]["creationTimestamp"].as_str().unwrap().to_string());
    pods
}

fn index_failure_count(pod: &Value) -> &str {
    pod["metadata"]["annotations"]["batch.kubernetes.io/job-index-failure-count"].as_str().unwrap_or("-")
}

#[tokio::test]
async fn an_index_past_its_backoff_limit_per_index_is_not_retried_and_the_job_fails_with_failed_indexes() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/shard:v1", 20.0, 1);
    let spec =
        json!({"completions": 2, "parallelism": 2, "completionMode": "Indexed", "backoffLimitPerIndex": 1});
    let created = cluster.create("jobs", job("shard", "example.com/shard:v1", spec));
    // `SetDefaults_Job`: with a per-index limit the Job-wide one is int32's maximum.
    assert_eq!(created["spec"]["backoffLimit"], json!(i32::MAX));
    cluster.run_for(5);
    assert_eq!(cluster.get("jobs", "default", "shard")["status"]["failedIndexes"], json!(""));
    for index in ["0", "1"] {
        assert_eq!(pods_of_index(&cluster, index).iter().map(index_failure_count).collect::<Vec<_>>(), ["0"]);
    }
    // Both pods fail at about 21 s. Within the 10 s back-off each waits for its replacement:
    // finalizer kept, not counted yet (`canRemoveFinalizer`).
    cluster.run_for(20);
    let waiting = cluster.get("jobs", "default", "shard");
    assert_eq!((waiting["status"].get("failed"), &waiting["status"]["failedIndexes"]), (None, &json!("")));
    for index in ["0", "1"] {
        let pods = pods_of_index(&cluster, index);
        assert_eq!(pods.len(), 1, "index {index} waits for its back-off");
        assert_eq!(pods[0]["status"]["phase"], "Failed");
        assert_eq!(pods[0]["metadata"]["finalizers"], json!(["batch.kubernetes.io/job-tracking"]));
    }
    cluster.run_for(15);
    for index in ["0", "1"] {
        let pods = pods_of_index(&cluster, index);
        assert_eq!(pods.iter().map(index_failure_count).collect::<Vec<_>>(), ["0", "1"], "index {index}");
        assert_eq!(pods[0]["metadata"]["finalizers"], Value::Null, "counted once replaced");
        let created = |pod: &Value| {
            pod["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap()
                .parse::<k8s_openapi::jiff::Timestamp>()
                .unwrap()
        };
        assert!(
            created(&pods[1]).duration_since(created(&pods[0])).as_secs() >= 30,
            "20 s run, 10 s back-off"
        );
    }
    assert_eq!(cluster.get("jobs", "default", "shard")["status"]["failed"], json!(2));
    // The replacements fail too: their count is at the limit, so both indexes fail for good
    // and, every index finished, so does the Job.
    cluster.run_for(600);
    let failed = cluster.get("jobs", "default", "shard");
    assert_eq!(cluster.pods().len(), 4, "no third pod for a failed index");
    assert_eq!((&failed["status"]["failedIndexes"], &failed["status"]["failed"]), (&json!("0,1"), &json!(4)));
    let reason = ("FailedIndexes".to_string(), "Job has failed indexes".to_string());
    assert_eq!(
        conditions(&failed),
        vec![
            ("FailureTarget".to_string(), reason.0.clone(), reason.1.clone()),
            ("Failed".to_string(), reason.0.clone(), reason.1.clone())
        ]
    );
    let last = cluster.events_for("shard").last().unwrap().clone();
    assert_eq!(
        (&last["type"], &last["reason"], &last["message"]),
        (&json!("Warning"), &json!(reason.0), &json!(reason.1))
    );
}

#[tokio::test]
async fn more_failed_indexes_than_max_failed_indexes_fail_the_job_before_the_other_indexes_run() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/shard:v1", 5.0, 1);
    let spec = json!({"completions": 4, "parallelism": 1, "completionMode": "Indexed",
                      "backoffLimitPerIndex": 0, "maxFailedIndexes": 1});
    cluster.create("jobs", job("shard", "example.com/shard:v1", spec));
    cluster.run_for(600);
    let failed = cluster.get("jobs", "default", "shard");
    // Index 0 fails (one failed index is allowed), index 1 fails: two is over the maximum.
    assert_eq!(cluster.pods().len(), 2, "indexes 2 and 3 never run");
    assert_eq!(failed["status"]["failedIndexes"], json!("0,1"));
    let reason = "MaxFailedIndexesExceeded".to_string();
    let message = "Job has exceeded the specified maximal number of failed indexes".to_string();
    assert_eq!(conditions(&failed).last().unwrap(), &("Failed".to_string(), reason, message));
}

#[tokio::test]
async fn a_fail_index_rule_fails_the_index_at_once_whatever_its_backoff_limit_per_index() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/train:v1", 5.0, 42);
    let policy =
        json!({"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}}]});
    let spec = json!({"completions": 2, "parallelism": 2, "completionMode": "Indexed",
                      "backoffLimitPerIndex": 3, "podFailurePolicy": policy});
    cluster.create("jobs", job("train", "example.com/train:v1", spec));
    cluster.run_for(600);
    let failed = cluster.get("jobs", "default", "train");
    assert_eq!(cluster.pods().len(), 2, "a FailIndex match is not retried");
    assert_eq!((&failed["status"]["failedIndexes"], &failed["status"]["failed"]), (&json!("0,1"), &json!(2)));
    let reason = ("FailedIndexes".to_string(), "Job has failed indexes".to_string());
    assert_eq!(conditions(&failed).last().unwrap(), &("Failed".to_string(), reason.0, reason.1));
}

#[tokio::test]
async fn an_ignore_rule_on_disruption_target_keeps_an_evicted_pod_out_of_the_failures() {
    use k8s_openapi::api::core::v1::Pod;
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/train:v1", 120.0, 0);
    let ignore = json!({"rules": [
        {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]});
    cluster.create(
        "jobs",
        job("tolerant", "example.com/train:v1", json!({"backoffLimit": 0, "podFailurePolicy": ignore})),
    );
    cluster.create("jobs", job("strict", "example.com/train:v1", json!({"backoffLimit": 0})));
    cluster.run_for(10);
    let api: kube::Api<Pod> = kube::Api::default_namespaced(cluster.sim.client.clone());
    let evicted: Vec<String> =
        cluster.pods().iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_string()).collect();
    assert_eq!(evicted.len(), 2);
    for name in &evicted {
        api.evict(name, &Default::default()).await.unwrap();
    }
    // eviction.go `addConditionAndDeletePod`: the condition comes before the delete.
    for pod in cluster.pods() {
        assert!(pod["metadata"]["deletionTimestamp"].is_string());
        let target = pod["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["type"] == "DisruptionTarget")
            .unwrap()
            .clone();
        assert_eq!(
            (&target["reason"], &target["message"]),
            (&json!("EvictionByEvictionAPI"), &json!("Eviction API: evicting"))
        );
    }
    // The kubelet moves the tracked pod to Failed before its final delete, so the policy sees
    // a failed pod (without that the tolerant Job's replacement would wait for ever).
    cluster.run_for(600);
    let tolerant = cluster.get("jobs", "default", "tolerant");
    assert_eq!(conditions(&tolerant).last().unwrap().0, "Complete", "{:?}", conditions(&tolerant));
    assert!(tolerant["status"].get("failed").is_none(), "an ignored failure is not counted");
    let strict = cluster.get("jobs", "default", "strict");
    assert_eq!(conditions(&strict).last().unwrap().1, "BackoffLimitExceeded", "without the policy it counts");
}

#[tokio::test]
async fn an_on_failure_job_counts_container_restarts_against_its_backoff_limit() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/flaky:v1", 5.0, 2);
    let mut spec = job("flaky", "example.com/flaky:v1", json!({"backoffLimit": 2}));
    spec["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
    cluster.create("jobs", spec);
    cluster.run_for(3600);
    let failed = cluster.find("jobs", "default", "flaky").unwrap();
    assert_eq!(conditions(&failed).last().unwrap().0, "Failed");
    let pods = cluster.pods();
    assert!(pods.is_empty(), "the restarting pod was deleted once the limit was reached: {pods:?}");
}

#[tokio::test]
async fn the_gpu_sharing_team_job_completes_with_the_built_in_vectoradd_image() {
    let mut cluster = Cluster::new(vec![node("gpu-1").gpus("1").json()]);
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/workloads/team-jobs.yaml"))
            .unwrap();
    let team_job: Value = serde_saphyr::from_str(&manifest).unwrap();
    let state = cluster.sim.state.clone();
    let store = &state.store;
    store
        .create(
            &rt("namespaces"),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}),
        )
        .unwrap();
    store.create(&rt("jobs"), team_job).unwrap();
    cluster.run_for(300);
    let done = store.get_value(&rt("jobs"), "team-a", "vectoradd").unwrap();
    assert_eq!(done["status"]["succeeded"], json!(1));
    assert_eq!(conditions(&done).last().unwrap().0, "Complete");
}

#[tokio::test]
async fn a_crashing_container_restarts_at_once_then_backs_off_in_crash_loop() {
    let mut cluster = Cluster::three_workers();
    batch_image(&cluster, "example.com/crash:v1", 5.0, 1);
    let created = cluster.create("pods", pod("crash").image("example.com/crash:v1").json());
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    cluster.control.settle().unwrap();
    // Pull (1s) + run (5s): the first exit restarts at once (`doBackOff` has no entry yet).
    cluster.run_for(7);
    let pod = cluster.find("pods", "default", "crash").unwrap();
    let status = &pod["status"]["containerStatuses"][0];
    assert_eq!(status["restartCount"], json!(1));
    assert!(status["state"]["running"].is_object());
    let last = &status["lastState"]["terminated"];
    assert_eq!((&last["exitCode"], &last["reason"]), (&json!(1), &json!("Error")));
    assert_eq!(pod["status"]["phase"], json!("Running"));
    // The second exit waits 10s in CrashLoopBackOff.
    cluster.run_for(5);
    let pod = cluster.find("pods", "default", "crash").unwrap();
    let status = &pod["status"]["containerStatuses"][0];
    assert_eq!(status["restartCount"], json!(1));
    assert_eq!(status["state"]["waiting"]["reason"], json!("CrashLoopBackOff"));
    assert_eq!(
        status["state"]["waiting"]["message"],
        json!(format!("back-off 10s restarting failed container=main pod=crash_default({uid})"))
    );
    assert_eq!(pod["status"]["phase"], json!("Running"));
    let back_off = cluster.events_for("crash").into_iter().find(|e| e["reason"] == "BackOff").unwrap();
    assert_eq!(back_off["type"], json!("Warning"));
    assert_eq!(
        back_off["message"],
        json!(format!("Back-off restarting failed container main in pod crash_default({uid})"))
    );
    cluster.run_for(10);
    let status = cluster.find("pods", "default", "crash").unwrap()["status"]["containerStatuses"][0].clone();
    assert_eq!(status["restartCount"], json!(2));
    assert!(status["state"]["running"].is_object());
}

/// A learner's write to `/status` does not stick: the owning controller (or kubelet) recomputes
/// the status from what it observes on its next sync, as kube-controller-manager's DaemonSet and
/// Deployment controllers (`updateDaemonSetStatus`, `syncRolloutStatus`) and the kubelet's status
/// manager (`syncPod` writes the pod status it computed) do on a real cluster.
#[tokio::test]
async fn status_written_by_a_learner_is_overwritten_by_the_controllers() {
    let mut cluster = Cluster::three_workers();
    cluster.create("daemonsets", daemonset("gpu-ds", "nginx:1.27", rolling(json!(1), json!(0))));
    cluster.create("deployments", deployment("web", "nginx:1.27-does-not-exist", 2));
    cluster.run_for(60);
    cluster.change("daemonsets", "default", "gpu-ds", |ds| set_image(ds, "nginx:1.27-does-not-exist"));
    cluster.run_for(3600);
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 2, 1, 2]);
    let deployment_status = cluster.find("deployments", "default", "web").unwrap()["status"].clone();
    assert_eq!(deployment_status["availableReplicas"], Value::Null, "{deployment_status}");

    fn write_status(cluster: &Cluster, plural: &str, name: &str, edit: &dyn Fn(&mut Value)) {
        let mut value = cluster.find(plural, "default", name).unwrap();
        edit(&mut value);
        cluster.sim.state.store.update(&rt(plural), value, Subresource::Status, DryRun::Off).unwrap();
    }
    write_status(&cluster, "daemonsets", "gpu-ds", &|ds| {
        for field in ["numberReady", "updatedNumberScheduled", "numberAvailable"] {
            ds["status"][field] = json!(3);
        }
        ds["status"]["numberUnavailable"] = json!(0);
    });
    write_status(&cluster, "deployments", "web", &|d| {
        d["status"]["availableReplicas"] = json!(2);
        d["status"]["readyReplicas"] = json!(2);
    });
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 3, 3, 3], "the write itself is accepted");

    cluster.run_for(1);
    assert_eq!(cluster.ds_columns("gpu-ds"), [3, 3, 2, 1, 2], "the DaemonSet controller recomputed it");
    let deployment = cluster.find("deployments", "default", "web").unwrap();
    assert_eq!(deployment["status"]["availableReplicas"], Value::Null, "{}", deployment["status"]);

    // A pod's status: the kubelet writes back what it observes. (The DaemonSet controller may act
    // on the fake readiness in between, as it would on a real cluster.)
    let stuck = cluster
        .pods()
        .into_iter()
        .find(|p| p["metadata"]["name"].as_str().unwrap().starts_with("gpu-ds") && !is_ready(p))
        .unwrap();
    let stuck_name = stuck["metadata"]["name"].as_str().unwrap().to_string();
    write_status(&cluster, "pods", &stuck_name, &|p| {
        p["status"]["phase"] = json!("Running");
        p["status"]["conditions"] = json!([{"type": "Ready", "status": "True"}]);
        p["status"]["containerStatuses"][0]["ready"] = json!(true);
        p["status"]["containerStatuses"][0]["state"] =
            json!({"running": {"startedAt": "2026-01-01T00:00:00Z"}});
    });
    cluster.run_for(1);
    let pod = cluster.find("pods", "default", &stuck_name).unwrap();
    assert!(!is_ready(&pod), "the kubelet recomputed the pod's status: {}", pod["status"]);
    assert_eq!(pod["status"]["phase"], json!("Pending"));
    assert!(matches!(waiting_reason(&pod), Some("ImagePullBackOff" | "ErrImagePull")), "{}", pod["status"]);
}

#[tokio::test]
async fn events_expire_an_hour_after_their_last_write() {
    let mut cluster = Cluster::three_workers();
    cluster.create("pods", pod("web").image("nginx:1.27").json());
    cluster.run_for(5);
    assert_eq!(cluster.events_for("web").len(), 5);
    // kube-apiserver's default --event-ttl is one hour from the last write.
    cluster.run_for(3600 - 10);
    assert_eq!(cluster.events_for("web").len(), 5);
    cluster.run_for(10);
    assert!(cluster.events_for("web").is_empty(), "{:?}", cluster.events_for("web"));
    // A pod that keeps failing renews its BackOff event, which outlives its first siblings.
    cluster.create("pods", pod("broken").image("example.com/missing:v1").json());
    cluster.run_for(3600 + 600);
    let reasons: Vec<String> =
        cluster.events_for("broken").iter().map(|e| e["reason"].as_str().unwrap().to_string()).collect();
    assert!(reasons.contains(&"BackOff".to_string()), "{reasons:?}");
    assert!(!reasons.contains(&"Scheduled".to_string()), "{reasons:?}");
}

#[tokio::test]
async fn restarted_controllers_find_running_pods_where_the_store_left_them() {
    let mut cluster = Cluster::three_workers();
    cluster.create("deployments", deployment("web", "nginx:1.27", 3));
    cluster.create("pods", pod("single").image("busybox:1.36").json());
    cluster.run_for(60);
    let pods_before: BTreeMap<String, Value> = cluster
        .pods()
        .into_iter()
        .map(|p| (p["metadata"]["name"].as_str().unwrap().to_string(), p))
        .collect();
    let events_before = cluster.list("events", Some("default"));
    assert_eq!(pods_before.len(), 4);
    for pod in pods_before.values() {
        assert_eq!(pod["status"]["phase"], json!("Running"));
    }

    // A new control plane and kubelets over the same store, as after `sim down` / `sim up`.
    let config = cluster.control.config().read().unwrap().clone();
    cluster.control = Controllers::new(cluster.sim.state.clone(), config).unwrap();
    cluster.control.settle().unwrap();
    cluster.run_for(3);
    let pods_after: BTreeMap<String, Value> = cluster
        .pods()
        .into_iter()
        .map(|p| (p["metadata"]["name"].as_str().unwrap().to_string(), p))
        .collect();
    for (name, before) in &pods_before {
        // Not pulled, created or started again: the object is not even rewritten.
        assert_eq!(pods_after[name], *before, "{name}");
    }
    assert_eq!(cluster.list("events", Some("default")), events_before);
}

fn autoscaler(name: &str, target: &str) -> Value {
    json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
            "minReplicas": 2, "maxReplicas": 4,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 60}}}]},
        "status": {"desiredReplicas": 0}})
}

fn condition<'a>(hpa: &'a Value, kind: &str) -> &'a Value {
    hpa["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

/// The HPA controller in a cluster without metrics-server (upstream's `reconcileAutoscaler`):
/// once per 15 s resync it keeps the target within its bounds, and fails every metric with the
/// texts a real cluster without a metrics API shows.
#[tokio::test]
async fn an_autoscaler_keeps_its_bounds_and_reports_the_missing_metrics_api() {
    let mut cluster = Cluster::three_workers();
    let hpa_type = rt("horizontalpodautoscalers.autoscaling");
    let hpa = |cluster: &Cluster, name: &str| {
        cluster.sim.state.store.get_value(&hpa_type, "default", name).unwrap()
    };
    cluster.create("deployments", deployment("web", "nginx:1.27", 1));
    cluster.sim.state.store.create(&hpa_type, autoscaler("web", "web")).unwrap();
    cluster.sim.state.store.create(&hpa_type, autoscaler("lost", "nope")).unwrap();

    // Queued one resync period ahead: nothing yet.
    cluster.run_for(14);
    assert_eq!(cluster.find("deployments", "default", "web").unwrap()["spec"]["replicas"], json!(1));
    assert_eq!(hpa(&cluster, "web")["status"], json!({"desiredReplicas": 0}));

    // Below the minimum: rescaled to it, before any metric is read.
    cluster.run_for(2);
    assert_eq!(cluster.find("deployments", "default", "web").unwrap()["spec"]["replicas"], json!(2));
    let web = hpa(&cluster, "web");
    assert_eq!(
        (&web["status"]["currentReplicas"], &web["status"]["desiredReplicas"]),
        (&json!(1), &json!(2))
    );
    assert!(web["status"]["lastScaleTime"].is_string());
    assert_eq!(condition(&web, "AbleToScale")["reason"], "SucceededRescale");
    assert_eq!(
        condition(&web, "AbleToScale")["message"],
        "the HPA controller was able to update the target scale to 2"
    );
    let messages = |cluster: &Cluster, name: &str| -> Vec<String> {
        cluster
            .events_for(name)
            .iter()
            .filter(|e| e["involvedObject"]["kind"] == "HorizontalPodAutoscaler")
            .map(|e| {
                format!(
                    "{} {}: {} (x{})",
                    e["type"].as_str().unwrap(),
                    e["reason"].as_str().unwrap(),
                    e["message"].as_str().unwrap(),
                    e["count"]
                )
            })
            .collect()
    };
    assert_eq!(
        messages(&cluster, "web"),
        [
            "Normal SuccessfulRescale: New size: 2; reason: Current number of replicas below Spec.MinReplicas (x1)"
        ]
    );
    let lost = hpa(&cluster, "lost");
    assert_eq!(condition(&lost, "AbleToScale")["status"], "False");
    assert_eq!(
        condition(&lost, "AbleToScale")["message"],
        "the HPA controller was unable to get the target's current scale: deployments/scale.apps \"nope\" not found"
    );

    // Within the bounds: the metrics decide, and there is no metrics API.
    cluster.run_for(15);
    let web = hpa(&cluster, "web");
    assert_eq!(condition(&web, "AbleToScale")["reason"], "SucceededGetScale");
    assert_eq!(condition(&web, "ScalingActive")["status"], "False");
    assert_eq!(condition(&web, "ScalingActive")["reason"], "FailedGetResourceMetric");
    assert_eq!(web["status"]["currentMetrics"], json!([{"type": ""}]));
    assert_eq!(
        (&web["status"]["currentReplicas"], &web["status"]["desiredReplicas"]),
        (&json!(2), &json!(2))
    );
    cluster.run_for(15);
    assert_eq!(
        messages(&cluster, "web")[1..],
        [
            "Warning FailedGetResourceMetric: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io) (x2)",
            "Warning FailedComputeMetricsReplicas: invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io) (x2)",
        ]
    );

    // A learner scales past the maximum by hand: back within 15 s.
    cluster.change("deployments", "default", "web", |d| d["spec"]["replicas"] = json!(9));
    cluster.run_for(15);
    assert_eq!(cluster.find("deployments", "default", "web").unwrap()["spec"]["replicas"], json!(4));
    assert!(
        messages(&cluster, "web").contains(
            &"Normal SuccessfulRescale: New size: 4; reason: Current number of replicas above Spec.MaxReplicas (x1)".to_string()
        )
    );

    // Scaled to zero: autoscaling is off until the target has replicas again.
    cluster.change("deployments", "default", "web", |d| d["spec"]["replicas"] = json!(0));
    cluster.run_for(15);
    assert_eq!(cluster.find("deployments", "default", "web").unwrap()["spec"]["replicas"], json!(0));
    assert_eq!(condition(&hpa(&cluster, "web"), "ScalingActive")["reason"], "ScalingDisabled");
}

/// Kubelet admission (`predicateAdmitHandler.Admit`, pkg/kubelet/lifecycle/predicate.go, and the
/// device manager's `Allocate` before it): pods bound past the scheduler fail on the node with
/// `OutOf<resource>` against what the kubelet already admitted there, or `UnexpectedAdmissionError`
/// when the GPUs are taken; a GPU resource the node does not advertise at all is dropped from the
/// check (`removeMissingExtendedResources`) and the pod runs, as upstream's caveat says.
#[tokio::test]
async fn the_kubelet_rejects_pods_bound_past_the_scheduler_that_exceed_its_node() {
    let mut cluster = Cluster::new(vec![node("small").gpus("1").json(), node("plain").json()]);
    cluster.create(
        "pods",
        pod("first")
            .image("nginx:1.27")
            .node_name("small")
            .request("cpu", "6")
            .limit("nvidia.com/gpu", "1")
            .json(),
    );
    cluster.run_for(5);
    cluster.create("pods", pod("cpu").image("nginx:1.27").node_name("small").request("cpu", "4").json());
    cluster.create(
        "pods",
        pod("memory").image("nginx:1.27").node_name("small").request("memory", "64Gi").json(),
    );
    cluster.create(
        "pods",
        pod("gpu").image("nginx:1.27").node_name("small").limit("nvidia.com/gpu", "1").json(),
    );
    cluster.create(
        "pods",
        pod("no-gpu-node").image("nginx:1.27").node_name("plain").limit("nvidia.com/gpu", "1").json(),
    );
    cluster.run_for(10);
    let status = |name: &str| {
        let pod = cluster.find("pods", "default", name).unwrap();
        let field = |f: &str| pod["status"][f].as_str().unwrap_or_default().to_string();
        (field("phase"), field("reason"), field("message"))
    };
    assert_eq!(status("first").0, "Running");
    assert_eq!(
        status("cpu"),
        (
            "Failed".into(),
            "OutOfcpu".into(),
            "Pod was rejected: Node didn't have enough resource: cpu, requested: 4000, used: 6000, capacity: 8000".into()
        )
    );
    assert_eq!(
        status("memory"),
        (
            "Failed".into(),
            "OutOfmemory".into(),
            "Pod was rejected: Node didn't have enough resource: memory, requested: 68719476736, used: 0, capacity: 34359738368".into()
        )
    );
    assert_eq!(
        status("gpu"),
        (
            "Failed".into(),
            "UnexpectedAdmissionError".into(),
            "Pod was rejected: Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 1, Available: 0, which is unexpected".into()
        )
    );
    assert_eq!(status("no-gpu-node").0, "Running");
    let event = cluster.events_for("cpu").into_iter().find(|e| e["reason"] == json!("OutOfcpu")).unwrap();
    assert_eq!(event["type"], json!("Warning"));
    assert_eq!(
        event["message"],
        json!("Node didn't have enough resource: cpu, requested: 4000, used: 6000, capacity: 8000")
    );
}

/// DefaultPreemption (pkg/scheduler/framework/plugins/defaultpreemption, framework/preemption
/// `prepareCandidate`): a higher-priority pod that fits once a lower-priority one goes nominates
/// the node, the victim gets `DisruptionTarget` (`PreemptionByScheduler`), a `Preempted` event
/// and a graceful delete; a second low pod the preemptor fits beside is reprieved; once the
/// victim is gone the preemptor is bound there.
#[tokio::test]
async fn a_higher_priority_pod_preempts_a_lower_priority_one_on_the_node_it_fits() {
    let mut cluster = Cluster::new(vec![node("only").json()]);
    let classes = rt("priorityclasses.scheduling.k8s.io");
    for (name, value) in [("low", 100), ("high", 1000)] {
        let class = json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name}, "value": value});
        cluster.sim.state.store.create(&classes, class).unwrap();
    }
    let with_priority = |name: &str, class: &str, cpu: &str| {
        let mut pod = pod(name).image("nginx:1.27").json();
        pod["spec"]["priorityClassName"] = json!(class);
        pod["spec"]["containers"][0]["resources"] = json!({"requests": {"cpu": cpu}});
        pod
    };
    cluster.create("pods", with_priority("big-low", "low", "6"));
    cluster.create("pods", with_priority("small-low", "low", "1"));
    cluster.run_for(10);
    cluster.create("pods", with_priority("urgent", "high", "4"));
    cluster.control.settle().unwrap();
    let victim = cluster.find("pods", "default", "big-low").unwrap();
    assert!(victim["metadata"]["deletionTimestamp"].is_string(), "{victim}");
    let disruption = victim["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == json!("DisruptionTarget"))
        .unwrap()
        .clone();
    assert_eq!(
        (&disruption["status"], &disruption["reason"], &disruption["message"]),
        (
            &json!("True"),
            &json!("PreemptionByScheduler"),
            &json!("default-scheduler: preempting to accommodate a higher priority pod")
        )
    );
    let urgent = cluster.find("pods", "default", "urgent").unwrap();
    assert_eq!(urgent["status"]["nominatedNodeName"], json!("only"));
    let preempted =
        cluster.events_for("big-low").into_iter().find(|e| e["reason"] == json!("Preempted")).unwrap();
    assert_eq!(
        preempted["message"],
        json!(format!("Preempted by pod {} on node only", urgent["metadata"]["uid"].as_str().unwrap()))
    );
    assert!(cluster.find("pods", "default", "small-low").unwrap()["metadata"]["deletionTimestamp"].is_null());
    cluster.run_for(60);
    assert!(cluster.find("pods", "default", "big-low").is_none());
    let urgent = cluster.find("pods", "default", "urgent").unwrap();
    assert_eq!(
        (&urgent["spec"]["nodeName"], &urgent["status"]["phase"]),
        (&json!("only"), &json!("Running"))
    );
}

/// VolumeBinding's PreFilter (pkg/scheduler/framework/plugins/volumebinding): a pod naming a
/// claim that does not exist, or one not bound (the simulator provisions no volumes), stays
/// Pending with the scheduler's FitError.
#[tokio::test]
async fn a_pod_with_a_missing_or_unbound_claim_stays_pending_with_the_schedulers_message() {
    let mut cluster = Cluster::three_workers();
    let claims = rt("persistentvolumeclaims");
    let claim = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "default"},
                       "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    cluster.sim.state.store.create(&claims, claim).unwrap();
    for (name, claim) in [("unbound", "data"), ("missing", "nope")] {
        let mut pod = pod(name).image("nginx:1.27").json();
        pod["spec"]["volumes"] = json!([{"name": "v", "persistentVolumeClaim": {"claimName": claim}}]);
        cluster.create("pods", pod);
    }
    cluster.run_for(10);
    let condition = |name: &str| {
        let pod = cluster.find("pods", "default", name).unwrap();
        assert!(pod["spec"]["nodeName"].is_null(), "{pod}");
        pod["status"]["conditions"][0]["message"].as_str().unwrap().to_string()
    };
    assert_eq!(
        condition("unbound"),
        "0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        condition("missing"),
        "0/3 nodes are available: persistentvolumeclaim \"nope\" not found. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
}
