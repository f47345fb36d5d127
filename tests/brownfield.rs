//! Labs on a cluster they did not create (issue #14): the brownfield fixture
//! (`manifests/clusters/brownfield/`) applied first, then `start`, `reset` and `reset --remove`
//! on the in-process simulator with its controllers on the manual clock; every pre-existing
//! object (uid and normalized content) must come out exactly as it went in.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Path, PathBuf},
};

use kube::{
    api::{Api, DynamicObject, Patch, PatchParams},
    discovery::{Discovery, verbs},
};
use lab_runner::{
    engine::{self, cluster::Cluster, inventory, start::StartOptions},
    exit::HasExitCode,
    k8s::normalize::normalize,
    lab::loader::{self, Bundle},
    session::{LabSource, Lang},
    sim::{harness::Harness, lifecycle, topology::Topology},
};
use serde_json::Value;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn lab(id: &str) -> Bundle {
    loader::find(&LabSource::Dir(repo().join("labs")), id).expect("the course lab loads")
}

/// A simulator with the default lab topology, its controllers running on the manual clock
/// (jumping from one wake-up to the next, so simulated minutes pass at once).
fn simulator() -> (Harness, Cluster, tokio::task::JoinHandle<()>) {
    use lab_runner::sim::controllers::{Controllers, config::Config};
    let sim = Harness::start();
    let types = sim.state.types.read().expect("types lock").clone();
    lifecycle::seed(&sim.state.store, &types, &Topology::default_lab(), sim.state.clock.now())
        .expect("the topology seeds");
    let cluster = Cluster::from_client(sim.client.clone(), "in-process", "harness");
    let mut control = Controllers::new(sim.state.clone(), Config::defaults()).expect("controllers start");
    let driver = tokio::spawn(async move {
        loop {
            control.settle().expect("controllers settle");
            control.advance_to_next_event().expect("the clock advances");
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    });
    (sim, cluster, driver)
}

/// The fixture's documents, in file order (as `kubectl apply -f DIR` reads them).
fn fixture_documents() -> Vec<Value> {
    let dir = repo().join("manifests/clusters/brownfield");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).expect("the fixture exists").map(|e| e.expect("an entry").path()).collect();
    files.sort();
    files
        .iter()
        .flat_map(|file| {
            let text = std::fs::read_to_string(file).expect("a readable manifest");
            serde_saphyr::from_multiple::<Value>(&text).expect("the fixture parses")
        })
        .filter(|doc| !doc.is_null())
        .collect()
}

/// Applies the brownfield fixture as its owners would (server-side apply, their own manager),
/// as `selftest --fixture` does.
async fn apply_brownfield(client: &kube::Client) {
    engine::apply::apply_documents(client, &fixture_documents(), "platform-team")
        .await
        .expect("the fixture applies");
}

/// Every object of the cluster by uid: its `Kind namespace/name` and its normalized content
/// (status left out of Nodes, whose heartbeats and allocatable move with the kubelet).
async fn snapshot(client: &kube::Client) -> BTreeMap<String, (String, Value)> {
    let discovery = Discovery::new(client.clone()).run().await.expect("discovery");
    let mut objects = BTreeMap::new();
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            if !capabilities.supports_operation(verbs::LIST) || resource.kind == "Event" {
                continue;
            }
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            let Ok(list) = api.list(&Default::default()).await else { continue };
            for object in list.items {
                let uid = object.metadata.uid.clone().unwrap_or_default();
                let place = object.metadata.namespace.clone().map(|n| format!("{n}/")).unwrap_or_default();
                let shown =
                    format!("{} {place}{}", resource.kind, object.metadata.name.clone().unwrap_or_default());
                let mut value = serde_json::to_value(&object).expect("an object serializes");
                normalize(&mut value);
                if resource.kind == "Node" {
                    value.as_object_mut().expect("an object").remove("status");
                }
                objects.insert(uid, (shown, value));
            }
        }
    }
    objects
}

/// The pre-existing objects that changed or went missing since `before`.
fn changed(
    before: &BTreeMap<String, (String, Value)>,
    after: &BTreeMap<String, (String, Value)>,
) -> Vec<String> {
    before
        .iter()
        .filter_map(|(uid, (shown, content))| match after.get(uid) {
            None => Some(format!("{shown} is gone")),
            Some((_, now)) if now != content => Some(format!(
                "{shown} changed:\n  before {}\n  after  {}",
                serde_json::to_string(content).unwrap(),
                serde_json::to_string(now).unwrap()
            )),
            Some(_) => None,
        })
        .collect()
}

/// What exists now that did not before (Events aside), polled until the garbage collector and
/// the kubelet finished with what `reset --remove` deleted (graceful pod termination runs on the
/// simulated clock).
async fn left_over(client: &kube::Client, before: &BTreeMap<String, (String, Value)>) -> Vec<String> {
    let mut left = Vec::new();
    for _ in 0..200 {
        let after = snapshot(client).await;
        left = after
            .iter()
            .filter(|(uid, _)| !before.contains_key(*uid))
            .map(|(_, (shown, _))| shown.clone())
            .collect();
        if left.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    left
}

async fn reset(cluster: &Cluster, bundle: &Bundle) -> Vec<String> {
    let planned = engine::reset::load_plan(cluster, bundle).await.expect("a reset plan");
    let plan = planned.actions.iter().map(ToString::to_string).collect();
    engine::reset::execute(cluster, bundle, planned, Lang::En).await.expect("reset runs");
    plan
}

async fn remove(cluster: &Cluster, bundle: &Bundle) -> Vec<String> {
    let planned = engine::reset::load_remove_plan(cluster, bundle).await.expect("a remove plan");
    let plan = planned.actions.iter().map(ToString::to_string).collect();
    engine::reset::execute(cluster, bundle, planned, Lang::En).await.expect("reset --remove runs");
    plan
}

fn variant(id: &str) -> StartOptions {
    StartOptions { variant: Some(id.into()), ..StartOptions::default() }
}

fn assert_kept(
    before: &BTreeMap<String, (String, Value)>,
    after: &BTreeMap<String, (String, Value)>,
    when: &str,
) {
    let changed = changed(before, after);
    assert!(changed.is_empty(), "pre-existing objects changed {when}:\n{}", changed.join("\n"));
}

/// The labels gpu-sharing's first stage sets on purpose on the node it adopts (gpu-3: the MIG
/// manager's default config, and the lab's own labels); its `reset --remove` takes them off.
const ADOPTED_NODE_LABELS: [&str; 3] = ["nvidia.com/mig.config", "lab-runner.io/lab", "lab-runner.io/stage"];

/// As [`assert_kept`] while gpu-sharing runs: its adopted node's labels aside.
fn assert_kept_but_adopted(
    before: &BTreeMap<String, (String, Value)>,
    after: &BTreeMap<String, (String, Value)>,
    when: &str,
) {
    let strip = |snapshot: &BTreeMap<String, (String, Value)>| {
        let mut snapshot = snapshot.clone();
        for (shown, value) in snapshot.values_mut() {
            if shown.starts_with("Node ")
                && let Some(labels) = value.pointer_mut("/metadata/labels").and_then(Value::as_object_mut)
            {
                labels.retain(|key, _| !ADOPTED_NODE_LABELS.contains(&key.as_str()));
            }
        }
        snapshot
    };
    assert_kept(&strip(before), &strip(after), when);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_rollout_leaves_the_brownfield_cluster_exactly_as_it_found_it() {
    let (sim, cluster, driver) = simulator();
    apply_brownfield(&sim.client).await;
    let before = snapshot(&sim.client).await;
    let bundle = lab("stuck-rollout");

    engine::start::start(&cluster, &bundle, Lang::En, &variant("image")).await.expect("start on brownfield");
    let started = snapshot(&sim.client).await;
    assert_kept(&before, &started, "by start (a pre-existing Namespace or CRD is used as it is)");
    let recorded = inventory::load(&sim.client, "stuck-rollout").await.unwrap().expect("an inventory");
    assert_eq!(recorded.progress, inventory::Progress::Complete);

    // In gpu-operator, which existed before the lab: the learner's alert rule (a task asks for
    // a PrometheusRule there) and, made after start too, the operator's own ConfigMap.
    let rules = kube::api::ApiResource::from_gvk(&kube::api::GroupVersionKind::gvk(
        "monitoring.coreos.com",
        "v1",
        "PrometheusRule",
    ));
    let learner: Api<kube::api::DynamicObject> =
        Api::namespaced_with(sim.client.clone(), "gpu-operator", &rules);
    let rule: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
        "metadata": {"name": "learner-alert"}, "spec": {"groups": []},
    }))
    .unwrap();
    learner.create(&Default::default(), &rule).await.unwrap();
    let operator: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(sim.client.clone(), "gpu-operator");
    let operators: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(
        serde_json::json!({"metadata": {"name": "operator-made-later"}, "data": {"k": "v"}}),
    )
    .unwrap();
    operator.create(&Default::default(), &operators).await.unwrap();

    let plan = reset(&cluster, &bundle).await;
    insta::assert_snapshot!("brownfield_stuck_rollout_reset_plan", plan.join("\n"));
    assert_kept(&before, &snapshot(&sim.client).await, "by reset");
    assert!(learner.get_opt("learner-alert").await.unwrap().is_none(), "the learner's rule is deleted");
    assert!(
        operator.get_opt("operator-made-later").await.unwrap().is_some(),
        "what another made in a namespace that existed before is theirs"
    );
    operator.delete("operator-made-later", &Default::default()).await.unwrap();

    // What `reset --remove --dry-run` prints, in Japanese (`--lang ja`).
    let dry = engine::reset::load_remove_plan(&cluster, &bundle).await.unwrap();
    let ja: Vec<String> = dry.actions.iter().map(|a| a.render(Lang::Ja)).collect();
    insta::assert_snapshot!("brownfield_stuck_rollout_remove_plan_ja", ja.join("\n"));
    let plan = remove(&cluster, &bundle).await;
    insta::assert_snapshot!("brownfield_stuck_rollout_remove_plan", plan.join("\n"));
    assert_kept(&before, &snapshot(&sim.client).await, "by reset --remove");
    let left = left_over(&sim.client, &before).await;
    assert!(left.is_empty(), "left of the lab after reset --remove: {left:?}");
    assert!(inventory::load(&sim.client, "stuck-rollout").await.unwrap().is_none());
    driver.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_object_of_the_same_name_stops_start_before_anything_changes() {
    let (sim, cluster, driver) = simulator();
    apply_brownfield(&sim.client).await;
    // Someone else's DaemonSet under the name the lab applies.
    let toolkit = &lab("stuck-rollout").manifests["manifests/container-toolkit/daemonset.yaml"][0];
    let (api, _) =
        engine::apply::api_for(&sim.client, "apps/v1", "DaemonSet", Some("gpu-operator")).await.unwrap();
    api.patch(
        "nvidia-container-toolkit-daemonset",
        &PatchParams::apply("platform-team"),
        &Patch::Apply(toolkit),
    )
    .await
    .unwrap();
    let before = snapshot(&sim.client).await;
    let error = engine::start::start(&cluster, &lab("stuck-rollout"), Lang::En, &variant("image"))
        .await
        .expect_err("a collision refuses start");
    assert_eq!(error.exit_code(), lab_runner::exit::BAD_INPUT);
    assert_eq!(
        error.to_string(),
        "start stuck-rollout refused before changing anything: DaemonSet gpu-operator/nvidia-container-toolkit-daemonset \
         already exists and this lab did not create it; delete or rename it, use another cluster, or declare it under \
         `adopt:` in the lab's stage if taking it over is intended"
    );
    assert!(inventory::load(&sim.client, "stuck-rollout").await.unwrap().is_none(), "no inventory written");
    // The controllers keep rolling the platform's DaemonSet out meanwhile, so compare what start
    // could have written: labels anywhere, and no object of its own.
    let after = snapshot(&sim.client).await;
    let labelled: Vec<&String> = after
        .values()
        .filter(|(_, v)| v.pointer("/metadata/labels/lab-runner.io~1lab").is_some())
        .map(|(shown, _)| shown)
        .collect();
    assert!(labelled.is_empty(), "a refused start labelled {labelled:?}");
    let labels = |s: &BTreeMap<String, (String, Value)>| -> BTreeMap<String, Value> {
        s.values()
            .map(|(shown, v)| (shown.clone(), v.pointer("/metadata/labels").cloned().unwrap_or_default()))
            .collect()
    };
    let before_labels = labels(&before);
    let after_labels = labels(&after);
    assert!(before_labels.iter().all(|(shown, l)| after_labels.get(shown) == Some(l)), "labels changed");
    assert!(!after.values().any(|(shown, _)| shown == "Namespace lab-runner"), "no namespace of its own");
    driver.abort();
}

/// The fixture's own files exist and are what the tests apply (instructors apply the same).
#[test]
fn the_fixture_names_what_the_issue_asks_for() {
    let shown: BTreeSet<String> = fixture_documents()
        .iter()
        .map(|d| {
            let text = |p: &str| d.pointer(p).and_then(Value::as_str).unwrap_or("").to_string();
            let ns = text("/metadata/namespace");
            let place = if ns.is_empty() { String::new() } else { format!("{ns}/") };
            format!("{} {place}{}", text("/kind"), text("/metadata/name"))
        })
        .collect();
    for wanted in [
        "CustomResourceDefinition prometheusrules.monitoring.coreos.com",
        "PrometheusRule monitoring/platform-alerts",
        "Namespace gpu-operator",
        "Namespace team-ml",
        "Node gpu-1",
    ] {
        assert!(shown.contains(wanted), "{wanted} missing from {shown:?}");
    }
    assert!(Path::new(&repo().join("manifests/clusters/brownfield/10-prometheusrules-crd.yaml")).exists());
}

/// Starts both course labs one after the other and takes them off in `order`; in between and at
/// the end, every pre-existing object is as it was, and after the last `--remove` nothing of
/// either lab is left. With `brownfield` false the labs create gpu-operator themselves, so the
/// first to leave hands it to the other (the namespace survives until the last one leaves).
async fn two_labs(brownfield: bool, order: [&str; 2]) {
    let (sim, cluster, driver) = simulator();
    if brownfield {
        apply_brownfield(&sim.client).await;
    }
    let before = snapshot(&sim.client).await;
    let stuck = lab("stuck-rollout");
    let sharing = lab("gpu-sharing");
    engine::start::start(&cluster, &stuck, Lang::En, &variant("image")).await.expect("stuck-rollout starts");
    engine::start::start(&cluster, &sharing, Lang::En, &StartOptions::default())
        .await
        .expect("gpu-sharing starts");
    assert_kept_but_adopted(&before, &snapshot(&sim.client).await, "by starting both labs");
    for bundle in [&stuck, &sharing] {
        reset(&cluster, bundle).await;
        let when = format!("by reset {}", bundle.lab.id.value);
        assert_kept_but_adopted(&before, &snapshot(&sim.client).await, &when);
    }
    let [first, second] = order.map(lab);
    let plan = remove(&cluster, &first).await;
    let namespace =
        plan.iter().find(|line| line.contains("Namespace gpu-operator")).cloned().unwrap_or_default();
    if brownfield {
        assert_eq!(namespace, "keep Namespace gpu-operator (existed before start)");
    } else if order[0] == "stuck-rollout" {
        assert!(
            namespace
                .starts_with("keep Namespace gpu-operator (it still holds objects that are not the lab's:"),
            "{plan:?}"
        );
        assert!(
            plan.contains(
                &"hand Namespace gpu-operator over to lab gpu-sharing (it still uses it)".to_string()
            ),
            "{plan:?}"
        );
    }
    assert!(
        inventory::load(&sim.client, &second.lab.id.value).await.unwrap().is_some(),
        "the other lab stays started"
    );
    assert_kept_but_adopted(
        &before,
        &snapshot(&sim.client).await,
        &format!("by reset --remove {}", order[0]),
    );
    remove(&cluster, &second).await;
    assert_kept(&before, &snapshot(&sim.client).await, &format!("by reset --remove {}", order[1]));
    let left = left_over(&sim.client, &before).await;
    assert!(left.is_empty(), "left after both labs were removed: {left:?}");
    driver.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_labs_on_brownfield_leave_in_either_order_stuck_rollout_first() {
    two_labs(true, ["stuck-rollout", "gpu-sharing"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_labs_on_brownfield_leave_in_either_order_gpu_sharing_first() {
    two_labs(true, ["gpu-sharing", "stuck-rollout"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_namespace_both_labs_created_survives_until_the_last_one_leaves() {
    two_labs(false, ["stuck-rollout", "gpu-sharing"]).await;
}

/// Runs `start` until its inventory shows `stages_done` stages done, then drops it there, as a
/// killed process would stop (what was applied stays; the inventory says how far it got).
async fn interrupted_start(cluster: &Cluster, bundle: &Bundle, stages_done: usize) {
    let client = cluster.client.clone();
    let lab = bundle.lab.id.value.clone();
    let reached = async move {
        loop {
            if let Ok(Some(recorded)) = inventory::load(&client, &lab).await
                && recorded.stages.len() >= stages_done
            {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
        }
    };
    let options = variant("image");
    tokio::select! {
        finished = engine::start::start(cluster, bundle, Lang::En, &options) => {
            panic!("start finished before it could be interrupted: {finished:?}")
        }
        () = reached => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupted_start_says_so_resumes_and_is_cleaned_up_by_reset() {
    let bundle = lab("stuck-rollout");
    let labs = LabSource::Dir(repo().join("labs"));
    for stages_done in 0..bundle.lab.stages.len() {
        // Interrupted, then resumed by `start` again.
        let (sim, cluster, driver) = simulator();
        apply_brownfield(&sim.client).await;
        let before = snapshot(&sim.client).await;
        interrupted_start(&cluster, &bundle, stages_done).await;
        let recorded = inventory::load(&sim.client, "stuck-rollout").await.unwrap().expect("an inventory");
        assert_eq!(recorded.progress, inventory::Progress::Incomplete);
        let line = recorded.incomplete_start(Lang::En).expect("an incomplete start is told");
        let report = engine::check::check(&cluster, &bundle, Lang::En, Default::default()).await.unwrap();
        assert!(!report.passed);
        for task in &report.tasks {
            assert_eq!((task.status.as_str(), &task.evidence), ("ERROR", &vec![line.clone()]), "{}", task.id);
        }
        assert!(line.contains("run `lab-runner start stuck-rollout` again to resume it"), "{line}");
        let options = lab_runner::commands::answer::Options {
            lab: "stuck-rollout".into(),
            task: "cause".into(),
            value: "image".into(),
        };
        let refused = lab_runner::commands::answer::on(cluster.clone(), &labs, Lang::En, &options)
            .await
            .expect_err("answer refuses");
        assert_eq!(refused.exit_code(), lab_runner::exit::BAD_INPUT);
        assert_eq!(refused.to_string(), format!("{line}; the answer is not recorded"));
        assert!(inventory::load(&sim.client, "stuck-rollout").await.unwrap().unwrap().answers.is_empty());

        engine::start::start(&cluster, &bundle, Lang::En, &variant("image")).await.expect("start resumes");
        let resumed = inventory::load(&sim.client, "stuck-rollout").await.unwrap().unwrap();
        assert_eq!(resumed.progress, inventory::Progress::Complete);
        assert_eq!(resumed.stages, ["healthy", "break"]);
        assert_kept(&before, &snapshot(&sim.client).await, "by an interrupted and resumed start");
        driver.abort();

        // Interrupted, then taken off by `reset --remove`.
        let (sim, cluster, driver) = simulator();
        apply_brownfield(&sim.client).await;
        let before = snapshot(&sim.client).await;
        interrupted_start(&cluster, &bundle, stages_done).await;
        remove(&cluster, &bundle).await;
        assert_kept(&before, &snapshot(&sim.client).await, "by reset --remove of an interrupted start");
        let left = left_over(&sim.client, &before).await;
        assert!(left.is_empty(), "left of an interrupted start after reset --remove: {left:?}");
        driver.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_variant_over_an_applied_one_needs_yes_and_not_after_reset() {
    let (_sim, cluster, driver) = simulator();
    let bundle = lab("stuck-rollout");
    engine::start::start(&cluster, &bundle, Lang::En, &variant("image")).await.unwrap();
    let error = engine::start::start(&cluster, &bundle, Lang::En, &variant("resources")).await.unwrap_err();
    assert_eq!(error.exit_code(), lab_runner::exit::BAD_INPUT);
    let message = error.to_string();
    assert!(message.contains("pass --yes to proceed"), "{message}");
    assert!(!message.contains("image") && !message.contains("resources"), "names no variant: {message}");
    // The same variant again needs no confirmation. A reset brings back the state start left,
    // the same variant's breakage included: another one still needs --yes, or a reset to it.
    engine::start::start(&cluster, &bundle, Lang::En, &variant("image")).await.expect("the same variant");
    reset(&cluster, &bundle).await;
    let again = engine::start::start(&cluster, &bundle, Lang::En, &variant("resources")).await;
    assert_eq!(again.unwrap_err().exit_code(), lab_runner::exit::BAD_INPUT);
    let to_resources =
        engine::reset::ResetOptions { variant: Some("resources".into()), ..Default::default() };
    let planned = engine::reset::load_plan_to(&cluster, &bundle, &to_resources).await.unwrap();
    engine::reset::execute(&cluster, &bundle, planned, Lang::En).await.expect("reset --variant resources");
    engine::start::start(&cluster, &bundle, Lang::En, &variant("resources")).await.expect("after reset");
    // --yes over another variant's breakage starts over from a clean state (a reset to it), so
    // the learner's changes cannot keep the new breakage from reproducing.
    let yes = StartOptions { variant: Some("toleration".into()), yes: true, ..StartOptions::default() };
    engine::start::start(&cluster, &bundle, Lang::En, &yes).await.expect("--yes proceeds");
    let recorded = engine::inventory::load(&cluster.client, "stuck-rollout").await.unwrap().unwrap();
    assert!(recorded.variant_is("toleration") && recorded.answers.is_empty());
    driver.abort();
}

/// Through the built binary against `lab-runner sim up`: `start`, `status` and `check` name the
/// variant only with `--reveal`; another variant without a terminal exits 2 naming `--yes` without waiting;
/// `reset --remove --dry-run --lang ja` prints the plan in Japanese; `reset --remove --yes`
/// leaves the lab not started.
#[test]
fn the_binary_hides_the_variant_asks_for_yes_and_removes_the_lab() {
    use crate::support::binary::{lab_runner, stderr, stdout};
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("sim");
    let up = lab_runner().args(["sim", "up", "--speed", "10", "--state-dir"]).arg(&state).output().unwrap();
    assert!(up.status.success(), "sim up failed: {}", stderr(&up));
    struct Down(PathBuf);
    impl Drop for Down {
        fn drop(&mut self) {
            let _ = crate::support::binary::lab_runner()
                .args(["sim", "down", "--state-dir"])
                .arg(&self.0)
                .output();
        }
    }
    let _down = Down(state.clone());
    let kubeconfig = state.join("kubeconfig");
    let run = |args: &[&str]| {
        lab_runner().arg("--kubeconfig").arg(&kubeconfig).args(args).write_stdin("").output().unwrap()
    };

    let started = run(&["start", "stuck-rollout", "--variant", "image"]);
    assert_eq!(started.status.code(), Some(0), "{}", stderr(&started));
    let first_line = stdout(&started).lines().next().unwrap_or_default().to_string();
    assert_eq!(first_line, "started stuck-rollout: 5 objects applied");
    let revealed = run(&["start", "stuck-rollout", "--variant", "image", "--reveal"]);
    assert!(
        stdout(&revealed).starts_with("started stuck-rollout (variant image): "),
        "{}",
        stdout(&revealed)
    );

    // `status` and `check` name the variant (which answers `cause`) only to an instructor.
    let status = run(&["status", "stuck-rollout"]);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    assert!(!stdout(&status).contains("variant"), "{}", stdout(&status));
    let status = run(&["status", "stuck-rollout", "--reveal"]);
    assert!(stdout(&status).starts_with("lab stuck-rollout: variant image, "), "{}", stdout(&status));
    let variant_in_report = |extra: &[&str]| {
        let checked = run(&[&["check", "stuck-rollout", "--format", "json"], extra].concat());
        let report: serde_json::Value = serde_json::from_str(&stdout(&checked)).expect("a JSON report");
        report["variant"].clone()
    };
    assert_eq!(variant_in_report(&[]), serde_json::Value::Null);
    assert_eq!(variant_in_report(&["--reveal"]), "image");

    let other = run(&["start", "stuck-rollout", "--variant", "resources"]);
    assert_eq!(other.status.code(), Some(2));
    let message = stderr(&other);
    assert!(message.contains("pass --yes to proceed") && !message.contains("image"), "{message}");

    let dry = run(&["--lang", "ja", "reset", "stuck-rollout", "--remove", "--dry-run"]);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    insta::assert_snapshot!("brownfield_binary_remove_dry_run_ja", stdout(&dry));
    let removed = run(&["reset", "stuck-rollout", "--remove", "--yes"]);
    assert_eq!(removed.status.code(), Some(0), "{}", stderr(&removed));
    let answer = run(&["answer", "stuck-rollout", "cause", "image"]);
    assert_eq!(answer.status.code(), Some(2));
    assert!(stderr(&answer).contains("is not started on this cluster"), "{}", stderr(&answer));
}
