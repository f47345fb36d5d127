//! `check --watch` on the in-process simulator: the inventory's answers and the listed kinds
//! come through watches, a task that passed and fails again is flagged as regressed, a kind that
//! cannot be listed is an ERROR row (the watch does not hang on it), and the three endings.

use std::{path::PathBuf, time::Duration};

use lab_runner::{
    engine::{
        self,
        check::Help,
        cluster::Cluster,
        inventory,
        start::StartOptions,
        watch::{Ending, Finish, WatchOptions},
    },
    lab::loader::{self, Bundle},
    report::{TaskStatus, live::History},
    session::{LabSource, Lang},
    sim::{harness::Harness, lifecycle, topology::Topology},
};
use tokio::sync::{mpsc, oneshot};

const LAB: &str = "broken-daemonset";

fn bundle() -> Bundle {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/engine");
    loader::find(&LabSource::Dir(dir), LAB).expect("the engine fixture lab loads")
}

async fn started(bundle: &Bundle) -> (Harness, Cluster) {
    let sim = Harness::start();
    let types = sim.state.types.read().expect("types lock").clone();
    lifecycle::seed(&sim.state.store, &types, &Topology::default_lab(), sim.state.clock.now())
        .expect("the topology seeds");
    let cluster = Cluster::from_client(sim.client.clone(), "in-process", "harness");
    let options = StartOptions { variant: Some("image".into()), seed: None, yes: false, hosted: false };
    engine::start::start(&cluster, bundle, Lang::En, &options).await.unwrap();
    (sim, cluster)
}

/// Records the affected node as `start` would, and the learner's answer to `find-node`.
async fn set_answer(client: &kube::Client, fact: Option<&str>, answer: &str) {
    let mut inventory = inventory::load(client, LAB).await.unwrap().unwrap();
    if let Some(node) = fact {
        let fact = inventory.fact(node).unwrap();
        inventory.facts.insert("affectedNode".into(), fact);
    }
    inventory.answers.insert("find-node".into(), answer.into());
    inventory::save(client, &inventory).await.unwrap();
}

/// The next evaluation's view, within 20 s.
async fn next(updates: &mut mpsc::UnboundedReceiver<Seen>) -> Seen {
    let wait = tokio::time::timeout(Duration::from_secs(20), updates.recv());
    wait.await.expect("an evaluation within 20s").expect("the watch is running")
}

/// One update as the test sees it: each task's status and history, and the changed task ids.
type Seen = (Vec<(String, TaskStatus, History)>, Vec<String>);

fn quick() -> WatchOptions {
    WatchOptions {
        debounce: Duration::from_millis(50),
        max_delay: Duration::from_millis(200),
        timeout: None,
        finish: Finish::WhenAllPass,
    }
}

#[tokio::test]
async fn answers_flow_in_through_the_watch_and_a_regression_is_flagged() {
    let bundle = bundle();
    let (sim, cluster) = started(&bundle).await;
    let (updates_tx, mut updates) = mpsc::unbounded_channel::<Seen>();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let watching = {
        let bundle = bundle.clone();
        tokio::spawn(async move {
            let stop = async {
                let _ = stop_rx.await;
            };
            engine::watch::watch(&cluster, &bundle, Lang::En, Help::default(), quick(), stop, |update| {
                let rows =
                    update.checklist.rows().iter().map(|r| (r.id.clone(), r.status, r.history)).collect();
                let changed = update.changes.iter().map(|c| c.id.clone()).collect();
                let _ = updates_tx.send((rows, changed));
            })
            .await
        })
    };
    let row = |seen: &Seen, id: &str| seen.0.iter().find(|r| r.0 == id).map(|r| (r.1, r.2)).unwrap();

    let first = next(&mut updates).await;
    assert_eq!(row(&first, "find-node"), (TaskStatus::Fail, History::NotYetPassed));
    assert_eq!(row(&first, "restore"), (TaskStatus::Blocked, History::NotYetPassed));
    assert_eq!(first.1.len(), first.0.len(), "every task is reported at the first evaluation");

    // The right answer lands in the inventory ConfigMap: find-node passes without a new check.
    set_answer(&sim.client, Some("gpu-2"), "gpu-2").await;
    let mut seen = next(&mut updates).await;
    while row(&seen, "find-node").0 != TaskStatus::Pass {
        seen = next(&mut updates).await;
    }
    assert_eq!(row(&seen, "find-node").1, History::Passing);
    assert!(seen.1.contains(&"find-node".to_string()));

    // A wrong answer afterwards: it failed again after passing, so it is regressed.
    set_answer(&sim.client, None, "gpu-1").await;
    let mut seen = next(&mut updates).await;
    while row(&seen, "find-node").0 == TaskStatus::Pass {
        seen = next(&mut updates).await;
    }
    assert_eq!(row(&seen, "find-node"), (TaskStatus::Fail, History::Regressed));
    assert_eq!(row(&seen, "restore").0, TaskStatus::Blocked);

    stop_tx.send(()).unwrap();
    let watched = watching.await.unwrap().unwrap();
    assert_eq!(watched.ending, Ending::Interrupted);
    assert_eq!(watched.checklist.regressed(), ["find-node"]);
    assert_eq!(watched.report.tasks[0].status, TaskStatus::Fail);
    assert!(!watched.report.passed);
}

#[tokio::test]
async fn a_kind_that_cannot_be_listed_is_an_error_row_and_the_timeout_ends_the_watch() {
    let mut bundle = bundle();
    // The restore task counts objects of a kind this cluster does not serve, and needs nothing.
    let restore = bundle.lab.tasks.iter_mut().find(|t| t.id.value == "restore").unwrap();
    restore.needs.clear();
    restore.expect = vec![
        serde_saphyr::from_str(
            "count:\n  target: {apiVersion: example.com/v1, kind: Widget, namespace: lab-ds}\n  op: \">=\"\n  value: 1\n",
        )
        .unwrap(),
    ];
    let (_sim, cluster) = started(&bundle).await;
    let mut first = None;
    let options = WatchOptions { timeout: Some(Duration::from_millis(1500)), ..quick() };
    let watched = engine::watch::watch(
        &cluster,
        &bundle,
        Lang::En,
        Help::default(),
        options,
        std::future::pending(),
        |u| {
            first.get_or_insert_with(|| u.report.clone());
        },
    )
    .await
    .unwrap();
    assert_eq!(watched.ending, Ending::TimedOut);
    let first = first.expect("an evaluation before the timeout");
    let restore = first.tasks.iter().find(|t| t.id == "restore").unwrap();
    assert_eq!(restore.status, TaskStatus::Error, "{:?}", restore.evidence);
    assert!(
        restore
            .evidence
            .iter()
            .any(|l| l.starts_with("listing example.com/v1 Widget: ") && l.ends_with("(404)")),
        "{:?}",
        restore.evidence
    );
}

#[tokio::test]
async fn a_lab_that_already_passes_ends_the_watch_at_once() {
    let mut bundle = bundle();
    // Only the quiz, answered before the watch starts.
    bundle.lab.tasks.retain(|t| t.id.value == "find-node");
    let (sim, cluster) = started(&bundle).await;
    set_answer(&sim.client, Some("gpu-3"), "gpu-3").await;
    let mut evaluations = 0;
    let watched = engine::watch::watch(
        &cluster,
        &bundle,
        Lang::En,
        Help::default(),
        WatchOptions { timeout: Some(Duration::from_secs(30)), ..quick() },
        std::future::pending(),
        |_| evaluations += 1,
    )
    .await
    .unwrap();
    assert_eq!((watched.ending, evaluations, watched.report.passed), (Ending::AllPassed, 1, true));
}

#[tokio::test]
async fn a_watch_until_stopped_keeps_grading_after_every_task_passed() {
    let mut bundle = bundle();
    bundle.lab.tasks.retain(|t| t.id.value == "find-node");
    let (sim, cluster) = started(&bundle).await;
    set_answer(&sim.client, Some("gpu-3"), "gpu-3").await;
    let (updates_tx, mut updates) = mpsc::unbounded_channel::<bool>();
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let watching = {
        let bundle = bundle.clone();
        tokio::spawn(async move {
            let stop = async {
                let _ = stop_rx.await;
            };
            let options = WatchOptions { finish: Finish::WhenStopped, ..quick() };
            engine::watch::watch(&cluster, &bundle, Lang::En, Help::default(), options, stop, |update| {
                let _ = updates_tx.send(update.report.passed);
            })
            .await
        })
    };
    async fn within(updates: &mut mpsc::UnboundedReceiver<bool>) -> bool {
        let wait = tokio::time::timeout(Duration::from_secs(20), updates.recv());
        wait.await.expect("an evaluation within 20s").expect("the watch is running")
    }
    assert!(within(&mut updates).await, "the recorded answer passes at the first evaluation");
    // Passing does not end it: a wrong answer afterwards is graded.
    set_answer(&sim.client, None, "gpu-1").await;
    while within(&mut updates).await {}
    stop_tx.send(()).unwrap();
    let watched = watching.await.unwrap().unwrap();
    assert_eq!(watched.ending, Ending::Interrupted);
    assert!(!watched.report.passed);
    assert_eq!(watched.checklist.regressed(), ["find-node"]);
}
