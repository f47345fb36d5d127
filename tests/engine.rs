//! The lab engine on the in-process simulator: start, check, answer, reset and status on the
//! engine's copy of the fixture lab; and the built binary against an unreachable cluster.
//!
//! Most tests write the DaemonSet controller's and kubelet's part through the API themselves
//! (`play_controller`): each pins one exact split-generation state for the grader, which the
//! controllers (tested in `sim_controllers`) would only pass through. Where the engine must
//! wait for the cluster to move, the simulator's own controllers run on the manual clock
//! (`drive_controllers`).

use std::path::PathBuf;

use k8s_openapi::api::{
    apps::v1::DaemonSet,
    core::v1::{ConfigMap, Node, Pod},
};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use lab_runner::{
    engine::{self, check::Help, cluster::Cluster, inventory, start::StartOptions},
    exit::HasExitCode,
    lab::loader::{self, Bundle},
    report,
    session::{LabSource, Lang},
    sim::{harness::Harness, lifecycle, topology::Topology},
};
use serde_json::{Value, json};

use crate::support::binary::{lab_runner, stderr};

const LAB: &str = "broken-daemonset";
const GPU_NODES: [&str; 3] = ["gpu-1", "gpu-2", "gpu-3"];

fn bundle() -> Bundle {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine");
    loader::find(&LabSource::Dir(dir), LAB).expect("the engine fixture lab loads")
}

/// A simulator seeded with the default lab topology (control plane, cpu-1, gpu-1..3).
fn seeded() -> (Harness, Cluster) {
    let sim = Harness::start();
    let types = sim.state.types.read().expect("types lock").clone();
    lifecycle::seed(&sim.state.store, &types, &Topology::default_lab(), sim.state.clock.now())
        .expect("the topology seeds");
    let cluster = Cluster::from_client(sim.client.clone(), "in-process", "harness");
    (sim, cluster)
}

/// The learner's roll-back: the released toolkit template applied again.
async fn apply_released_toolkit(client: &kube::Client) {
    let ds: Api<DaemonSet> = Api::namespaced(client.clone(), "lab-ds");
    let good = bundle().manifests["manifests/toolkit.yaml"][0].clone();
    ds.patch("toolkit", &PatchParams::apply("kubectl-client-side-apply").force(), &Patch::Apply(&good))
        .await
        .unwrap();
}

/// The learner's clean-up: the debug pod deleted at once.
async fn delete_debug_pod(client: &kube::Client) {
    Api::<Pod>::namespaced(client.clone(), "lab-ds")
        .delete("toolkit-debug", &DeleteParams::default().grace_period(0))
        .await
        .unwrap();
}

fn image_variant() -> StartOptions {
    StartOptions { variant: Some("image".into()), seed: None, yes: false, hosted: false }
}

/// Plays the DaemonSet controller and kubelet: one pod per GPU node, `revision(node)` says
/// whether it runs the current template (`true`) or an older one, `state(node)` its container
/// state; then the DaemonSet's status counters as `updateDaemonSetStatus` would write them.
async fn play_controller(client: &kube::Client, current: &[bool; 3], pulling: Option<usize>) {
    let daemon_sets: Api<DaemonSet> = Api::namespaced(client.clone(), "lab-ds");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "lab-ds");
    let ds = daemon_sets.get("toolkit").await.unwrap();
    let spec = ds.spec.clone().unwrap();
    let hash = lab_runner::k8s::daemon::compute_hash(&spec.template, None).unwrap();
    let image = spec.template.spec.as_ref().unwrap().containers[0].image.clone().unwrap();
    for (i, node) in GPU_NODES.iter().enumerate() {
        let name = format!("toolkit-{node}");
        let _ = pods.delete(&name, &DeleteParams::default().grace_period(0)).await;
        let (revision, pod_image) = if current[i] {
            (hash.clone(), image.clone())
        } else {
            ("5d8f7c6b9".to_string(), "nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04".to_string())
        };
        let pod: Pod = serde_json::from_value(json!({
            "metadata": {
                "name": name,
                "namespace": "lab-ds",
                "labels": {"app": "toolkit", "controller-revision-hash": revision},
                "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "DaemonSet", "name": "toolkit",
                    "uid": ds.metadata.uid.clone().unwrap(), "controller": true
                }],
            },
            "spec": {"nodeName": node, "containers": [{"name": "toolkit", "image": pod_image}]},
        }))
        .unwrap();
        pods.create(&PostParams::default(), &pod).await.unwrap();
        let stuck = pulling == Some(i);
        let status = if stuck {
            json!({"status": {"phase": "Pending",
                "conditions": [{"type": "Ready", "status": "False"}],
                "containerStatuses": [{"name": "toolkit", "image": pod_image, "imageID": "", "ready": false,
                    "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}})
        } else {
            json!({"status": {"phase": "Running",
                "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}],
                "containerStatuses": [{"name": "toolkit", "image": pod_image, "imageID": "", "ready": true,
                    "restartCount": 0, "state": {"running": {"startedAt": "2026-01-01T00:00:00Z"}}}]}})
        };
        pods.patch_status(&name, &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
    }
    let ready = 3 - i32::from(pulling.is_some());
    let updated = current.iter().filter(|c| **c).count() as i32;
    let mut status = json!({"status": {
        "observedGeneration": ds.metadata.generation,
        "desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": ready,
        "updatedNumberScheduled": updated, "numberAvailable": ready, "numberMisscheduled": 0,
    }});
    // A merge patch removes the counter with null, as the controller omits a zero.
    status["status"]["numberUnavailable"] = if ready < 3 { json!(3 - ready) } else { Value::Null };
    daemon_sets.patch_status("toolkit", &PatchParams::default(), &Patch::Merge(&status)).await.unwrap();
}

/// The fact a `stalledAsIntended` wait captures, recorded as start would (the fixture has no
/// waits because nothing reconciles the in-process DaemonSet).
async fn capture_affected_node(client: &kube::Client, node: &str) {
    let mut inventory = inventory::load(client, LAB).await.unwrap().unwrap();
    let fact = inventory.fact(node).unwrap();
    inventory.facts.insert("affectedNode".into(), fact);
    inventory::save(client, &inventory).await.unwrap();
}

async fn answer(client: &kube::Client, task: &str, value: &str) {
    let mut inventory = inventory::load(client, LAB).await.unwrap().unwrap();
    inventory.answers.insert(task.into(), value.into());
    inventory::save(client, &inventory).await.unwrap();
}

async fn grade(cluster: &Cluster, help: Help) -> report::Report {
    engine::check::check(cluster, &bundle(), Lang::En, help).await.unwrap()
}

fn statuses(report: &report::Report) -> Vec<(String, &'static str)> {
    report.tasks.iter().map(|t| (t.id.clone(), t.status.as_str())).collect()
}

#[tokio::test]
async fn start_applies_labelled_objects_records_an_inventory_and_is_idempotent() {
    let (sim, cluster) = seeded();
    let started = engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    assert_eq!(started.variant.as_deref(), Some("image"));
    assert_eq!(started.applied, 4, "namespace, DaemonSet, debug pod, the variant's DaemonSet");
    assert!(started.briefing.starts_with("The container-toolkit DaemonSet"), "{}", started.briefing);

    let ds: Api<DaemonSet> = Api::namespaced(sim.client.clone(), "lab-ds");
    let toolkit = ds.get("toolkit").await.unwrap();
    let labels = toolkit.metadata.labels.clone().unwrap();
    assert_eq!(labels["lab-runner.io/lab"], LAB);
    assert_eq!(labels["lab-runner.io/stage"], "break", "the last stage that applied it");
    let image = &toolkit.spec.as_ref().unwrap().template.spec.as_ref().unwrap().containers[0].image;
    assert_eq!(image.as_deref(), Some("nvcr.io/nvidia/k8s/container-toolkit:v1.17.99-ubuntu20.04"));
    let managers: Vec<String> =
        toolkit.metadata.managed_fields.iter().flatten().filter_map(|m| m.manager.clone()).collect();
    assert_eq!(managers, ["lab-runner"]);

    let recorded = inventory::load(&sim.client, LAB).await.unwrap().expect("an inventory");
    assert!(recorded.variant_is("image"), "the variant is recorded (hashed)");
    assert_eq!(recorded.stages, ["baseline", "break"]);
    assert_eq!(recorded.applied.len(), 3, "the DaemonSet is recorded once");

    let generation = toolkit.metadata.generation;
    let again = engine::start::start(&cluster, &bundle(), Lang::En, &StartOptions::default()).await.unwrap();
    assert_eq!(again.variant.as_deref(), Some("image"), "a second start keeps the recorded variant");
    let toolkit = ds.get("toolkit").await.unwrap();
    assert_eq!(
        toolkit.spec.unwrap().template.spec.unwrap().containers[0].image.as_deref(),
        Some("nvcr.io/nvidia/k8s/container-toolkit:v1.17.99-ubuntu20.04")
    );
    // Re-applying baseline then break puts the same template back: the same state, though the
    // generation moves through the baseline template on the way.
    assert!(toolkit.metadata.generation >= generation);
    assert_eq!(inventory::load(&sim.client, LAB).await.unwrap().unwrap().applied, recorded.applied);
}

#[tokio::test]
async fn an_unknown_variant_is_refused_before_anything_is_applied() {
    let (sim, cluster) = seeded();
    let options = StartOptions { variant: Some("toleration".into()), seed: None, yes: false, hosted: false };
    let error = engine::start::start(&cluster, &bundle(), Lang::En, &options).await.unwrap_err();
    assert_eq!(
        error.to_string(),
        "lab broken-daemonset has no variant \"toleration\" (variants: image, resources)"
    );
    assert_eq!(error.exit_code(), lab_runner::exit::BAD_INPUT);
    assert!(inventory::load(&sim.client, LAB).await.unwrap().is_none());
}

#[tokio::test]
async fn preflight_names_the_missing_nodes() {
    let sim = Harness::start();
    let cluster = Cluster::from_client(sim.client.clone(), "in-process", "harness");
    let error = engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap_err();
    insta::assert_snapshot!(error.to_string());
    assert_eq!(error.exit_code(), lab_runner::exit::CLUSTER_ERROR);
}

#[tokio::test]
async fn check_grades_in_needs_order_and_is_read_only() {
    let (sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    play_controller(&sim.client, &[false, false, true], Some(2)).await;
    capture_affected_node(&sim.client, "gpu-3").await;

    let revision = sim.state.store.revision();
    let at_start = grade(&cluster, Help { hint: Some(1), ..Help::default() }).await;
    assert_eq!(sim.state.store.revision(), revision, "check writes nothing");
    assert_eq!(
        statuses(&at_start),
        [("find-node".into(), "FAIL"), ("restore".into(), "BLOCKED"), ("clean-up".into(), "BLOCKED")]
    );
    insta::assert_snapshot!("check_at_start_human", report::human(&at_start, false));

    answer(&sim.client, "find-node", "gpu-2").await;
    let wrong = grade(&cluster, Help::default()).await;
    assert_eq!(wrong.tasks[0].evidence, ["answer \"gpu-2\" is not right"]);

    answer(&sim.client, "find-node", " GPU-3 ").await;
    let stalled = grade(&cluster, Help::default()).await;
    assert_eq!(statuses(&stalled)[..2], [("find-node".into(), "PASS"), ("restore".into(), "FAIL")]);
    insta::assert_snapshot!("check_stalled_human", report::human(&stalled, false));

    // The learner rolls back and deletes the debug pod; the controller converges.
    apply_released_toolkit(&sim.client).await;
    delete_debug_pod(&sim.client).await;
    play_controller(&sim.client, &[true, true, true], None).await;
    let solved = grade(&cluster, Help { hint: Some(3), reveal: true, ..Help::default() }).await;
    assert!(solved.passed, "{}", report::human(&solved, false));
    assert_eq!((solved.score, solved.total), (8, 8));
    insta::assert_snapshot!("check_solved_human", report::human(&solved, false));
    insta::assert_snapshot!("check_solved_json", report::json(&solved).unwrap());
}

#[tokio::test]
async fn a_rollout_still_on_the_broken_template_is_not_converged() {
    let (sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    // Every node "runs" the broken template and reports Ready: still the breakage.
    play_controller(&sim.client, &[true, true, true], None).await;
    capture_affected_node(&sim.client, "gpu-3").await;
    answer(&sim.client, "find-node", "gpu-3").await;
    let report = grade(&cluster, Help::default()).await;
    let restore = &report.tasks[1];
    assert_eq!(restore.status.as_str(), "FAIL");
    assert!(
        restore.evidence.iter().any(|l| l == "not converged: the template is still the broken one"),
        "{:?}",
        restore.evidence
    );
}

#[tokio::test]
async fn junit_and_json_reports_parse_back() {
    let (sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    play_controller(&sim.client, &[false, false, true], Some(2)).await;
    capture_affected_node(&sim.client, "gpu-3").await;
    answer(&sim.client, "find-node", "gpu-3").await;
    let report = grade(&cluster, Help::default()).await;

    let json: Value = serde_json::from_str(&report::json(&report).unwrap()).unwrap();
    assert_eq!(json["reportVersion"], 1);
    assert_eq!(json["tasks"][1]["status"], "FAIL");

    let xml = report::junit(&report).unwrap();
    let mut reader = quick_xml::Reader::from_str(&xml);
    let mut cases = Vec::new();
    let mut current = String::new();
    loop {
        match reader.read_event().unwrap() {
            quick_xml::events::Event::Start(e) | quick_xml::events::Event::Empty(e) => {
                let name = String::from_utf8_lossy(e.name().as_ref()).into_owned();
                let attr = |key: &str| {
                    e.attributes()
                        .flatten()
                        .find(|a| a.key.as_ref() == key.as_bytes())
                        .map(|a| String::from_utf8_lossy(&a.value).into_owned())
                };
                match name.as_str() {
                    "testcase" => {
                        current = attr("name").unwrap();
                        cases.push((current.clone(), "pass".to_string()));
                    }
                    "failure" | "error" | "skipped" => {
                        let last = cases.iter_mut().rfind(|(n, _)| *n == current).unwrap();
                        last.1 = name;
                    }
                    _ => {}
                }
            }
            quick_xml::events::Event::Eof => break,
            _ => {}
        }
    }
    let expected: Vec<(String, String)> =
        [("find-node", "pass"), ("restore", "failure"), ("clean-up", "skipped")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
    assert_eq!(cases, expected);
}

#[tokio::test]
async fn a_kind_that_cannot_be_listed_is_error_not_fail() {
    let (_sim, cluster) = seeded();
    let mut lab = bundle();
    // A task on a kind the server does not serve: it cannot be observed, so it is ERROR.
    let yaml =
        "- count:\n    target: {apiVersion: example.com/v1, kind: Widget}\n    op: \"==\"\n    value: 0\n";
    lab.lab.tasks[2].expect = serde_saphyr::from_str(yaml).unwrap();
    lab.lab.tasks[2].needs.clear();
    let report = engine::check::check(&cluster, &lab, Lang::En, Help::default()).await.unwrap();
    let task = &report.tasks[2];
    assert_eq!(task.status.as_str(), "ERROR");
    assert_eq!(task.evidence[0], "example.com/v1 Widget was not observed: cannot judge Widget");
    assert!(task.evidence[1].starts_with("listing example.com/v1 Widget: "), "{:?}", task.evidence);
}

#[tokio::test]
async fn reset_restores_pre_images_and_spares_what_the_lab_does_not_own() {
    let (sim, cluster) = seeded();
    let client = &sim.client;
    let plugin_config = |data: Value| -> ConfigMap {
        serde_json::from_value(
            json!({"metadata": {"name": "lab-plugin-config", "namespace": "kube-system"}, "data": data}),
        )
        .unwrap()
    };
    let kube_system: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    kube_system.create(&PostParams::default(), &plugin_config(json!({"default": "v1"}))).await.unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    let label = |key: &str, value: &str| json!({"metadata": {"labels": {key: value}}});
    // A label on a node before the lab: the node gets back exactly the labels it had then.
    nodes.patch("gpu-2", &PatchParams::default(), &Patch::Merge(&label("team", "foreign"))).await.unwrap();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();

    // Foreign objects: in kube-system, in another namespace, a label on a node.
    let foreign = |namespace: &str| -> ConfigMap {
        serde_json::from_value(
            json!({"metadata": {"name": "foreign", "namespace": namespace}, "data": {"k": "v"}}),
        )
        .unwrap()
    };
    kube_system.create(&PostParams::default(), &foreign("kube-system")).await.unwrap();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "other"}})).unwrap(),
        )
        .await
        .unwrap();
    Api::<ConfigMap>::namespaced(client.clone(), "other")
        .create(&PostParams::default(), &foreign("other"))
        .await
        .unwrap();
    nodes.patch("gpu-2", &PatchParams::default(), &Patch::Merge(&label("added", "later"))).await.unwrap();
    // What the learner did inside the lab: a pod in lab-ds, a config label, an edited ConfigMap.
    Api::<ConfigMap>::namespaced(client.clone(), "lab-ds")
        .create(&PostParams::default(), &foreign("lab-ds"))
        .await
        .unwrap();
    nodes
        .patch(
            "gpu-1",
            &PatchParams::default(),
            &Patch::Merge(&label("nvidia.com/device-plugin.config", "ts-4")),
        )
        .await
        .unwrap();
    kube_system
        .patch(
            "lab-plugin-config",
            &PatchParams::default(),
            &Patch::Merge(&json!({"data": {"default": "v2", "ts-4": "x"}})),
        )
        .await
        .unwrap();

    let to_baseline = engine::reset::ResetOptions { to_stage: Some("baseline".into()), ..Default::default() };
    let planned = engine::reset::load_plan_to(&cluster, &bundle(), &to_baseline).await.unwrap();
    let plan: Vec<String> = planned.actions.iter().map(ToString::to_string).collect();
    insta::assert_snapshot!("reset_plan", plan.join("\n"));
    engine::reset::execute(&cluster, &bundle(), planned, Lang::En).await.unwrap();

    assert!(kube_system.get_opt("foreign").await.unwrap().is_some(), "kube-system/foreign survives");
    assert!(
        Api::<ConfigMap>::namespaced(client.clone(), "other").get_opt("foreign").await.unwrap().is_some()
    );
    let gpu2 = nodes.get("gpu-2").await.unwrap().metadata.labels.unwrap();
    assert_eq!(gpu2.get("team").map(String::as_str), Some("foreign"), "a label from before start survives");
    assert!(!gpu2.contains_key("added"), "a node gets back exactly the labels it had before start");
    let gpu1 = nodes.get("gpu-1").await.unwrap().metadata.labels.unwrap();
    assert!(
        !gpu1.contains_key("nvidia.com/device-plugin.config"),
        "the lab's node label is restored to absent"
    );
    let restored = kube_system.get("lab-plugin-config").await.unwrap().data.unwrap();
    assert_eq!(restored, [("default".to_string(), "v1".to_string())].into());
    let lab_ds: Api<ConfigMap> = Api::namespaced(client.clone(), "lab-ds");
    assert!(lab_ds.get_opt("foreign").await.unwrap().is_none(), "learner objects in lab-ds are deleted");
    assert!(
        Api::<Pod>::namespaced(client.clone(), "lab-ds").get_opt("toolkit-debug").await.unwrap().is_none()
    );
    let toolkit = Api::<DaemonSet>::namespaced(client.clone(), "lab-ds").get("toolkit").await.unwrap();
    let image = toolkit.spec.unwrap().template.spec.unwrap().containers[0].image.clone();
    assert_eq!(
        image.as_deref(),
        Some("nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04"),
        "the first stage again"
    );
    let after = inventory::load(client, LAB).await.unwrap().unwrap();
    assert_eq!(after.stages, ["baseline"]);
    assert!(after.answers.is_empty() && after.facts.is_empty());
}

#[tokio::test]
async fn status_shows_the_split_generation() {
    let (sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    play_controller(&sim.client, &[false, false, true], Some(2)).await;
    let view = engine::status::view_of(&bundle().lab);
    let text = engine::status::status(&cluster, &view, Lang::En).await.unwrap();
    insta::assert_snapshot!(text);
    let japanese = engine::status::status(&cluster, &view, Lang::Ja).await.unwrap();
    insta::assert_snapshot!("status_shows_the_split_generation_ja", japanese);
}

#[test]
fn an_unreachable_cluster_fails_with_one_line_and_exit_3() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: kind-x\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\n\
         contexts:\n- name: kind-x\n  context: {cluster: x, user: u}\nusers:\n- name: u\n  user: {token: t}\n",
    )
    .unwrap();
    let labs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine");
    let output = lab_runner()
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--labs")
        .arg(&labs)
        .args(["check", LAB])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(3));
    assert_eq!(
        stderr(&output),
        format!(
            "error: cannot reach the cluster at https://127.0.0.1:1 (context kind-x): connection refused; {}\n",
            UNREACHABLE_NEXT
        )
    );
}

/// What an unreachable cluster's error suggests next (the English catalog's `error-unreachable`).
const UNREACHABLE_NEXT: &str = "is it running? (`lab-runner sim up` starts the simulated one)";

#[test]
fn class_grading_gives_one_error_row_per_unreachable_learner() {
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1\nkind: Config\ncurrent-context: alice\nclusters:\n- name: x\n  cluster:\n    server: https://127.0.0.1:1\n\
         contexts:\n- name: alice\n  context: {cluster: x, user: u}\n- name: bob\n  context: {cluster: x, user: u}\n\
         - name: lab-runner-sim-viewer\n  context: {cluster: x, user: u}\n\
         users:\n- name: u\n  user: {token: t}\n",
    )
    .unwrap();
    let labs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine");
    let output = lab_runner()
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .arg("--labs")
        .arg(&labs)
        .args(["check", LAB, "--contexts", "all", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let class: Value = serde_json::from_slice(&output.stdout).unwrap();
    let rows: Vec<(String, String, String)> = class["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                l["context"].as_str().unwrap().to_string(),
                l["status"].as_str().unwrap().to_string(),
                l["error"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let row = |who: &str| {
        (
            who.to_string(),
            "ERROR".to_string(),
            format!(
                "cannot reach the cluster at https://127.0.0.1:1 (context {who}): connection refused; {}",
                UNREACHABLE_NEXT
            ),
        )
    };
    assert_eq!(rows, [row("alice"), row("bob")], "`all` grades learners, not the viewer context");
}

#[test]
fn watch_takes_no_confirm_and_timeout_needs_watch() {
    for args in [
        &[LAB, "--watch", "--confirm", "1s"][..],
        &[LAB, "--timeout", "1m"],
        &[LAB, "--watch", "--timeout", "soon"],
    ] {
        let output = lab_runner().arg("check").args(args).output().unwrap();
        assert_eq!(output.status.code(), Some(2), "check {args:?}: {}", stderr(&output));
    }
}

#[tokio::test]
async fn schedulability_and_quota_are_judged_from_the_listed_objects() {
    let (sim, cluster) = seeded();
    let mut lab = bundle();
    lab.expected.insert(
        "expected/huge-pod.yaml".into(),
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge", "namespace": "team-a"},
               "spec": {"containers": [{"name": "c", "image": "busybox",
                        "resources": {"requests": {"memory": "512Gi"}}}]}}),
    );
    let yaml = "- schedulable:\n    podFile: expected/huge-pod.yaml\n    want: unschedulable\n    reasonContains: Insufficient memory\n\
                - quotaInForce:\n    namespace: team-a\n    resource: requests.nvidia.com/gpu\n    hard: 2\n";
    lab.lab.tasks[2].expect = serde_saphyr::from_str(yaml).unwrap();
    lab.lab.tasks[2].needs.clear();
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(sim.client.clone());
    namespaces
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "team-a"}})).unwrap(),
        )
        .await
        .unwrap();
    let quotas: Api<k8s_openapi::api::core::v1::ResourceQuota> =
        Api::namespaced(sim.client.clone(), "team-a");
    let quota = |hard: Value| {
        serde_json::from_value(
            json!({"metadata": {"name": "gpus", "namespace": "team-a"}, "spec": {"hard": hard}}),
        )
        .unwrap()
    };
    quotas.create(&PostParams::default(), &quota(json!({"limits.nvidia.com/gpu": "2"}))).await.unwrap();
    let report = engine::check::check(&cluster, &lab, Lang::En, Help::default()).await.unwrap();
    let task = &report.tasks[2];
    assert_eq!(task.status.as_str(), "FAIL");
    assert_eq!(
        task.evidence,
        ["resourcequota team-a/gpus sets no hard requests.nvidia.com/gpu (keys: limits.nvidia.com/gpu)"]
    );
    quotas.delete("gpus", &DeleteParams::default()).await.unwrap();
    quotas.create(&PostParams::default(), &quota(json!({"requests.nvidia.com/gpu": "2"}))).await.unwrap();
    let report = engine::check::check(&cluster, &lab, Lang::En, Help::default()).await.unwrap();
    let task = &report.tasks[2];
    assert_eq!(task.status.as_str(), "PASS", "{:?}", task.evidence);
    assert!(
        // The scheduler's own message, quoted.
        task.evidence[0].starts_with("expected/huge-pod.yaml: unschedulable: `0/5 nodes are available: "),
        "{:?}",
        task.evidence
    );
    assert!(task.evidence[0].contains("Insufficient memory"), "{:?}", task.evidence);
}

/// Runs the simulator's controllers in the background, jumping the manual clock from one
/// wake-up to the next, so waits that take simulated minutes finish at once.
fn drive_controllers(sim: &Harness) -> tokio::task::JoinHandle<()> {
    use lab_runner::sim::controllers::{Controllers, config::Config};
    let mut control = Controllers::new(sim.state.clone(), Config::defaults()).expect("controllers start");
    tokio::spawn(async move {
        loop {
            control.settle().expect("controllers settle");
            control.advance_to_next_event().expect("the clock advances");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
}

#[tokio::test]
async fn start_confirms_the_breakage_and_a_fix_through_the_api_passes() {
    let (sim, cluster) = seeded();
    let driver = drive_controllers(&sim);
    let mut lab = bundle();
    let waits = |yaml: &str| serde_saphyr::from_str(yaml).expect("waits parse");
    lab.lab.stages[0].waits = waits(
        "- for: rolledOut\n  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab-ds, name: toolkit}\n  timeout: 60s\n",
    );
    lab.lab.stages[1].variants.get_mut("image").unwrap().waits = waits(
        "- for: stalledAsIntended\n  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab-ds, name: toolkit}\n  \
         symptom: imagePullBackOff\n  timeout: 60s\n",
    );
    let started = engine::start::start(&cluster, &lab, Lang::En, &image_variant()).await.unwrap();
    // The affected node; and the three GPU nodes the rollout check must cover, in the records.
    assert_eq!(started.facts, ["affectedNode"]);
    let recorded = inventory::load(&sim.client, LAB).await.unwrap().unwrap();
    let covered: Vec<&str> = recorded.start_nodes.iter().map(|n| n.name.as_str()).collect();
    assert_eq!(covered.len(), 3, "{covered:?}");

    // The learner finds the node the way the reference solution does: the toolkit pod that is
    // not Running (its waiting reason alternates between ErrImagePull and ImagePullBackOff).
    let pods: Api<Pod> = Api::namespaced(sim.client.clone(), "lab-ds");
    let stuck: Vec<String> = pods
        .list(&kube::api::ListParams::default().labels("app=toolkit"))
        .await
        .unwrap()
        .items
        .iter()
        .filter(|p| p.status.as_ref().and_then(|s| s.phase.as_deref()) != Some("Running"))
        .filter_map(|p| p.spec.as_ref().and_then(|s| s.node_name.clone()))
        .collect();
    assert_eq!(stuck.len(), 1, "the rollout stops at exactly one node");
    answer(&sim.client, "find-node", &stuck[0]).await;
    let stalled = engine::check::check(&cluster, &lab, Lang::En, Help::default()).await.unwrap();
    assert_eq!(statuses(&stalled)[..2], [("find-node".into(), "PASS"), ("restore".into(), "FAIL")]);

    // The fix, through the API: the released template back, the debug pod deleted.
    let ds: Api<DaemonSet> = Api::namespaced(sim.client.clone(), "lab-ds");
    let good = lab.manifests["manifests/toolkit.yaml"][0].clone();
    ds.patch("toolkit", &PatchParams::apply("kubectl").force(), &Patch::Apply(&good)).await.unwrap();
    pods.delete("toolkit-debug", &DeleteParams::default()).await.unwrap();
    let rolled_out = lab.lab.stages[0].waits[0].clone();
    engine::start::run_wait(&cluster, &rolled_out, &[], Lang::En).await.unwrap();
    let mut solved = engine::check::check(&cluster, &lab, Lang::En, Help::default()).await.unwrap();
    for _ in 0..100 {
        if solved.passed {
            break;
        }
        // The debug pod's graceful deletion finishes on the kubelet's schedule.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        solved = engine::check::check(&cluster, &lab, Lang::En, Help::default()).await.unwrap();
    }
    assert!(solved.passed, "{}", report::human(&solved, false));
    driver.abort();
}

#[tokio::test]
async fn a_wait_that_never_holds_times_out_with_exit_4() {
    let (_sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    // Nothing reconciles this DaemonSet (no controllers run here), so it never rolls out.
    let wait: lab_runner::lab::model::Wait = serde_saphyr::from_str(
        "for: rolledOut\ntarget: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab-ds, name: toolkit}\ntimeout: 1s\n",
    )
    .unwrap();
    let error = engine::start::run_wait(&cluster, &wait, &[], Lang::En).await.unwrap_err();
    assert_eq!(error.exit_code(), lab_runner::exit::TIMED_OUT);
    assert_eq!(
        error.to_string(),
        "timed out after 1s waiting for rolled out DaemonSet lab-ds/toolkit: Waiting for daemon set spec update to be observed..."
    );
}

/// A client on the harness's router that records `METHOD path?query` of every request.
fn recording_client(sim: &Harness) -> (kube::Client, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let record = log.clone();
    let service = tower::ServiceBuilder::new()
        .map_request(move |request: axum::http::Request<kube::client::Body>| {
            record.lock().unwrap().push(format!("{} {}", request.method(), request.uri()));
            request
        })
        .service(sim.router());
    (kube::Client::new(service, "default"), log)
}

/// Objects a learner might leave where no task looks: the same names and labels in another
/// namespace, a DaemonSet of the same name there.
async fn decoys(client: &kube::Client) {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let namespace = serde_json::from_value(json!({"metadata": {"name": "elsewhere"}})).unwrap();
    namespaces.create(&PostParams::default(), &namespace).await.unwrap();
    let pods: Api<Pod> = Api::namespaced(client.clone(), "elsewhere");
    for name in ["toolkit-debug", "toolkit-x1"] {
        let pod = json!({"metadata": {"name": name, "labels": {"app": "toolkit"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}});
        pods.create(&PostParams::default(), &serde_json::from_value(pod).unwrap()).await.unwrap();
    }
    let mut other = bundle().manifests["manifests/toolkit.yaml"][0].clone();
    other["metadata"]["namespace"] = json!("elsewhere");
    Api::<DaemonSet>::namespaced(client.clone(), "elsewhere")
        .create(&PostParams::default(), &serde_json::from_value(other).unwrap())
        .await
        .unwrap();
}

/// The fixture lab graded from one observation listing every kind its tasks read whole (the
/// LISTs before issue #17), for comparison with the scoped check.
async fn grade_unscoped(cluster: &Cluster) -> report::Report {
    let lab = bundle();
    let whole = lab_runner::grade::Plan::from_scopes(
        lab_runner::grade::kinds_for(&lab.lab.tasks)
            .into_iter()
            .map(|k| (k, lab_runner::grade::Scope::whole())),
    );
    let observation = engine::observe::observe(&cluster.client, &whole).await;
    let inventory = inventory::load(&cluster.client, LAB).await.unwrap();
    engine::check::grade_observation(&lab, inventory.as_ref(), &observation, Lang::En, Help::default())
}

#[tokio::test]
async fn check_lists_only_what_the_tasks_can_match_one_request_per_kind() {
    let (sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    play_controller(&sim.client, &[false, false, true], Some(2)).await;
    let (client, log) = recording_client(&sim);
    let recorded = Cluster::from_client(client, "in-process", "harness");
    grade(&recorded, Help::default()).await;
    let mut requests = log.lock().unwrap().clone();
    requests.sort();
    // The rollout reads the DaemonSet's own pods (its namespace) and every node; the DaemonSet
    // is named by every task that reads it; the debug pod's absence is in the same namespace.
    assert_eq!(
        requests,
        [
            "GET /api/v1/namespaces/lab-ds/pods?",
            "GET /api/v1/namespaces/lab-runner/configmaps/lab-runner-inventory-broken-daemonset",
            "GET /api/v1/namespaces/lab-runner/secrets/lab-runner-key-broken-daemonset",
            "GET /api/v1/nodes?",
            "GET /apis/apps/v1/namespaces/lab-ds/daemonsets?&fieldSelector=metadata.name%3Dtoolkit",
        ]
    );
    // status reads what its view shows, scoped the same way.
    log.lock().unwrap().clear();
    engine::status::status(&recorded, &engine::status::view_of(&bundle().lab), Lang::En).await.unwrap();
    let mut requests = log.lock().unwrap().clone();
    requests.sort();
    assert_eq!(
        requests,
        [
            "GET /api/v1/namespaces/lab-ds/pods?",
            "GET /api/v1/nodes?",
            "GET /apis/apps/v1/namespaces/lab-ds/daemonsets?&fieldSelector=metadata.name%3Dtoolkit",
        ]
    );
}

#[tokio::test]
async fn scoped_lists_grade_as_the_whole_cluster_does_with_decoys_elsewhere() {
    let (sim, cluster) = seeded();
    engine::start::start(&cluster, &bundle(), Lang::En, &image_variant()).await.unwrap();
    decoys(&sim.client).await;
    play_controller(&sim.client, &[false, false, true], Some(2)).await;
    capture_affected_node(&sim.client, "gpu-3").await;
    answer(&sim.client, "find-node", "gpu-3").await;
    let human = |r: &report::Report| report::human(r, false);
    let stalled = grade(&cluster, Help::default()).await;
    assert_eq!(human(&stalled), human(&grade_unscoped(&cluster).await));
    assert_eq!(statuses(&stalled)[1], ("restore".into(), "FAIL"));

    // Solved, with the debug pod gone from lab-ds but its namesake left in `elsewhere`: the
    // absence is about lab-ds, in both views.
    apply_released_toolkit(&sim.client).await;
    play_controller(&sim.client, &[true, true, true], None).await;
    let before_cleanup = grade(&cluster, Help::default()).await;
    assert_eq!(human(&before_cleanup), human(&grade_unscoped(&cluster).await));
    assert_eq!(statuses(&before_cleanup)[2], ("clean-up".into(), "FAIL"), "the debug pod is still in lab-ds");
    delete_debug_pod(&sim.client).await;
    let solved = grade(&cluster, Help::default()).await;
    assert!(solved.passed, "{}", human(&solved));
    assert_eq!(human(&solved), human(&grade_unscoped(&cluster).await));
}

#[tokio::test]
async fn a_malformed_object_a_task_may_be_about_makes_it_error_not_pass() {
    let (sim, cluster) = seeded();
    let mut lab = bundle();
    lab.lab.tasks[2].needs.clear(); // clean-up graded on its own
    engine::start::start(&cluster, &lab, Lang::En, &image_variant()).await.unwrap();
    apply_released_toolkit(&sim.client).await;
    delete_debug_pod(&sim.client).await;
    play_controller(&sim.client, &[true, true, true], None).await;
    capture_affected_node(&sim.client, "gpu-3").await;
    answer(&sim.client, "find-node", "gpu-3").await;
    let check = || engine::check::check(&cluster, &lab, Lang::En, Help::default());
    assert!(check().await.unwrap().passed);

    // Written straight into the store, as a store from before the schema checks may hold it.
    let pods = lab_runner::sim::resources::built_in().into_iter().find(|t| t.plural == "pods").unwrap();
    let malformed = |namespace: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "toolkit-debug", "namespace": namespace, "labels": ["app"]},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}})
    };
    // Where no task looks: not listed, nothing changes.
    let namespace = serde_json::from_value(json!({"metadata": {"name": "elsewhere"}})).unwrap();
    Api::<k8s_openapi::api::core::v1::Namespace>::all(sim.client.clone())
        .create(&PostParams::default(), &namespace)
        .await
        .unwrap();
    sim.state.store.create(&pods, malformed("elsewhere")).unwrap();
    assert!(check().await.unwrap().passed);
    // The debug pod's name in lab-ds, unreadable: the absence cannot be judged, and the
    // rollout (which reads every pod of lab-ds) cannot either.
    sim.state.store.create(&pods, malformed("lab-ds")).unwrap();
    let report = check().await.unwrap();
    assert_eq!(
        statuses(&report),
        [("find-node".into(), "PASS"), ("restore".into(), "ERROR"), ("clean-up".into(), "ERROR")]
    );
    let line = "pod lab-ds/toolkit-debug was listed but cannot be read (invalid type: sequence, expected a map): \
                it may be one of the objects this check is about, so it cannot be judged";
    assert_eq!(report.tasks[2].evidence[0], line, "{:?}", report.tasks[2].evidence);
    assert_eq!(report.tasks[1].evidence[0], line, "{:?}", report.tasks[1].evidence);
}

/// The waits that work on any kind, on a Deployment a quota holds back: its `ReplicaFailure`
/// condition, the `FailedCreate` Event its ReplicaSet records (found through ownerReferences),
/// and an expression over it; a wait for an Event that never comes times out (exit 4).
#[tokio::test]
async fn waits_on_a_condition_an_event_and_an_expression_hold_on_a_deployment_held_back_by_a_quota() {
    let (sim, cluster) = seeded();
    let driver = drive_controllers(&sim);
    let create = |api_version: &str, kind: &str, object: Value| {
        let client = sim.client.clone();
        let (api_version, kind) = (api_version.to_string(), kind.to_string());
        async move {
            let (api, _) = engine::apply::api_for(
                &client,
                &api_version,
                &kind,
                object["metadata"]["namespace"].as_str(),
            )
            .await
            .unwrap();
            let object: kube::api::DynamicObject = serde_json::from_value(object).unwrap();
            api.create(&PostParams::default(), &object).await.unwrap();
        }
    };
    create("v1", "Namespace", json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
        .await;
    create(
        "v1",
        "ResourceQuota",
        json!({"apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": "compute", "namespace": "shop"}, "spec": {"hard": {"requests.cpu": "1"}}}),
    )
    .await;
    create(
        "apps/v1",
        "Deployment",
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                                       "resources": {"requests": {"cpu": "500m"}}}]}}}}),
    )
    .await;
    let wait = |yaml: &str| -> lab_runner::lab::model::Wait {
        let target = "target: {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web}\n";
        serde_saphyr::from_str(&format!("{yaml}{target}")).unwrap()
    };
    for holds in [
        "for: condition\ncondition: {type: ReplicaFailure, reason: FailedCreate}\ntimeout: 60s\n",
        "for: event\nevent: {reason: FailedCreate, type: Warning}\ntimeout: 60s\n",
        "for: cel\nexpression: object.status.replicas < object.spec.replicas\ntimeout: 60s\n",
    ] {
        engine::start::run_wait(&cluster, &wait(holds), &[], Lang::En)
            .await
            .unwrap_or_else(|e| panic!("{holds}: {e}"));
    }
    let never = wait("for: event\nevent: {reason: BackOff}\ntimeout: 1s\n");
    let error = engine::start::run_wait(&cluster, &never, &[], Lang::En).await.unwrap_err();
    assert_eq!(error.exit_code(), lab_runner::exit::TIMED_OUT);
    // The Deployment's own Events (ScalingReplicaSet) may have expired by then: the driver
    // jumps the clock through the ReplicaSet's retries, hours of cluster time.
    assert!(
        error.to_string().starts_with(
            "timed out after 1s waiting for an Event BackOff about Deployment shop/web: \
             no Event BackOff about it or what it owns yet"
        ),
        "{error}"
    );
    driver.abort();
}
