//! Unit tests of the store: revisions, metadata rules, concurrency, deletion, durability.

use serde_json::json;

use super::*;
use crate::harness::rt;
use crate::k8s::testing::pod;

fn store() -> Store {
    let store =
        Store::in_memory().unwrap().with_clock(Clock::manual("2026-01-01T00:00:00Z".parse().unwrap()));
    store.create(&rt("namespaces"), json!({"metadata": {"name": "default"}})).unwrap();
    store
}

#[test]
fn create_assigns_metadata_and_revisions() {
    let store = store();
    let created = store.create(&rt("pods"), pod("web").json()).unwrap();
    assert_eq!(created["metadata"]["resourceVersion"], "2");
    assert_eq!(created["metadata"]["creationTimestamp"], "2026-01-01T00:00:00Z");
    assert_eq!(created["metadata"]["uid"].as_str().unwrap().len(), 36);
    assert_eq!(created["status"]["phase"], "Pending");
    assert!(created["metadata"].get("generation").is_none(), "pods carry no generation in 1.33");
    assert_eq!(store.revision(), 2);
    let again = store.create(&rt("pods"), pod("web").json()).unwrap_err();
    assert_eq!(again.to_string(), "pods \"web\" already exists");
    let mut missing_ns = pod("x").json();
    missing_ns["metadata"]["namespace"] = json!("nope");
    assert_eq!(
        store.create(&rt("pods"), missing_ns).unwrap_err().to_string(),
        "namespaces \"nope\" not found"
    );
    assert_eq!(store.count_by_type().unwrap(), vec![("namespaces".into(), 1), ("pods".into(), 1)]);
}

#[test]
fn generation_moves_with_spec_only_and_status_writes_touch_only_status() {
    let store = store();
    let ds_type = rt("daemonsets");
    let ds = json!({"metadata": {"name": "agent", "namespace": "default"},
                    "spec": {"selector": {"matchLabels": {"app": "agent"}},
                             "template": {"metadata": {"labels": {"app": "agent"}},
                                          "spec": {"containers": [{"name": "a", "image": "v1"}]}}},
                    "status": {"numberReady": 9}});
    let created = store.create(&ds_type, ds).unwrap();
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(created.get("status").is_none(), "status is reset on create");

    let mut labelled = created.clone();
    labelled["metadata"]["labels"] = json!({"a": "b"});
    let labelled = store.update(&ds_type, labelled, Subresource::Main, DryRun::Off).unwrap();
    assert_eq!(labelled["metadata"]["generation"], 1, "metadata change keeps generation");

    let mut respec = labelled.clone();
    respec["spec"]["template"]["spec"]["containers"][0]["image"] = json!("v2");
    respec["status"] = json!({"numberReady": 5});
    let respec = store.update(&ds_type, respec, Subresource::Main, DryRun::Off).unwrap();
    assert_eq!(respec["metadata"]["generation"], 2);
    assert!(respec.get("status").is_none(), "main-resource writes keep the stored status");

    let mut status = respec.clone();
    status["status"] = json!({"observedGeneration": 2});
    status["spec"]["template"]["spec"]["containers"][0]["image"] = json!("ignored");
    status["metadata"]["labels"] = json!({"ignored": "yes"});
    let status = store.update(&ds_type, status, Subresource::Status, DryRun::Off).unwrap();
    assert_eq!(status["status"]["observedGeneration"], 2);
    assert_eq!(status["spec"]["template"]["spec"]["containers"][0]["image"], "v2");
    assert_eq!(status["metadata"]["labels"], json!({"a": "b"}));
    assert_eq!(status["metadata"]["generation"], 2);
}

#[test]
fn stale_resource_version_is_a_conflict_and_no_op_updates_write_nothing() {
    let store = store();
    let ds_type = rt("daemonsets");
    let created = store
        .create(&ds_type, json!({"metadata": {"name": "x", "namespace": "default"}, "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "x", "image": "x:1"}]}}}}))
        .unwrap();
    let mut first = created.clone();
    first["spec"]["minReadySeconds"] = json!(1);
    store.update(&ds_type, first, Subresource::Main, DryRun::Off).unwrap();
    let mut stale = created.clone();
    stale["spec"]["minReadySeconds"] = json!(2);
    let error = store.update(&ds_type, stale, Subresource::Main, DryRun::Off).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Operation cannot be fulfilled on daemonsets.apps \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
    let revision = store.revision();
    let current = store.get_value(&ds_type, "default", "x").unwrap();
    store.update(&ds_type, current, Subresource::Main, DryRun::Off).unwrap();
    assert_eq!(store.revision(), revision, "an unchanged object is not rewritten");
}

#[test]
fn dry_run_stores_nothing() {
    let store = store();
    let revision = store.revision();
    let would = store.create_with(&rt("pods"), pod("dry").json(), DryRun::All).unwrap();
    assert_eq!(would["metadata"]["name"], "dry");
    assert!(store.get("pods", "default", "dry").is_none());
    assert_eq!(store.revision(), revision);
}

#[test]
fn bound_pods_delete_gracefully_unbound_ones_at_once() {
    let store = store();
    let pods = rt("pods");
    store.create(&pods, pod("unbound").json()).unwrap();
    store.create(&pods, pod("bound").node_name("node-a").json()).unwrap();
    let gone = store.delete(&pods, "default", "unbound", &DeleteOptions::default()).unwrap();
    assert!(matches!(gone, Deletion::Removed(_)));
    assert!(store.get("pods", "default", "unbound").is_none());

    let pending = store.delete(&pods, "default", "bound", &DeleteOptions::default()).unwrap();
    let Deletion::Pending(object) = pending else { panic!("bound pod must stay") };
    assert_eq!(object["metadata"]["deletionTimestamp"], "2026-01-01T00:00:30Z");
    assert_eq!(object["metadata"]["deletionGracePeriodSeconds"], 30);
    // The kubelet finishes with grace 0.
    let now = DeleteOptions { grace_period_seconds: Some(0), ..DeleteOptions::default() };
    assert!(matches!(store.delete(&pods, "default", "bound", &now).unwrap(), Deletion::Removed(_)));
}

#[test]
fn finalizers_hold_deletion_until_removed() {
    let store = store();
    let cms = rt("configmaps");
    store
        .create(&cms, json!({"metadata": {"name": "c", "namespace": "default", "finalizers": ["x/y"]}}))
        .unwrap();
    let Deletion::Pending(held) = store.delete(&cms, "default", "c", &DeleteOptions::default()).unwrap()
    else {
        panic!("finalizer must hold the object")
    };
    let mut released = held.clone();
    released["metadata"]["finalizers"] = json!([]);
    store.update(&cms, released, Subresource::Main, DryRun::Off).unwrap();
    assert!(store.get("configmaps", "default", "c").is_none());
}

#[test]
fn namespace_deletion_removes_its_contents() {
    let store = store();
    let ns = rt("namespaces");
    store.create(&ns, json!({"metadata": {"name": "team"}})).unwrap();
    let mut p = pod("p").json();
    p["metadata"]["namespace"] = json!("team");
    store.create(&rt("pods"), p).unwrap();
    store.create(&rt("configmaps"), json!({"metadata": {"name": "c", "namespace": "team"}})).unwrap();
    let deleted = store.delete(&ns, "", "team", &DeleteOptions::default()).unwrap();
    assert!(matches!(deleted, Deletion::Removed(_)));
    assert!(store.get("namespaces", "", "team").is_none());
    assert!(store.get("configmaps", "team", "c").is_none());
    assert!(store.get("pods", "team", "p").is_none());
    assert!(store.get("namespaces", "", "default").is_some());
}

#[test]
fn watch_replays_after_a_revision_and_expires_past_the_window() {
    let store = store().with_history_window(3);
    for i in 0..5 {
        store
            .create(&rt("configmaps"), json!({"metadata": {"name": format!("c{i}"), "namespace": "default"}}))
            .unwrap();
    }
    // Revisions: 1 = namespace, 2..=6 = configmaps; the window holds 4, 5, 6.
    let start = store.watch("configmaps", WatchFrom::Revision(4)).unwrap();
    let replayed: Vec<u64> = start.replay.iter().map(|e| e.revision).collect();
    assert_eq!(replayed, vec![5, 6]);
    assert!(store.watch("configmaps", WatchFrom::Revision(3)).is_ok(), "oldest - 1 is still servable");
    let expired = store.watch("configmaps", WatchFrom::Revision(2)).unwrap_err();
    assert_eq!(expired.to_string(), "too old resource version: 2 (3)");
}

#[test]
fn state_survives_reopen_without_clean_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let store = Store::open(&path).unwrap();
        store.create(&rt("namespaces"), json!({"metadata": {"name": "default"}})).unwrap();
        store.create(&rt("pods"), pod("a").json()).unwrap();
        store.create(&rt("pods"), pod("b").json()).unwrap();
        store.delete(&rt("pods"), "default", "a", &DeleteOptions::default()).unwrap();
        // Leak the store: no destructor, no checkpoint, like a killed process.
        std::mem::forget(store);
    }
    let reopened = Store::open(&path).unwrap();
    assert_eq!(reopened.revision(), 4);
    assert!(reopened.get("pods", "default", "a").is_none());
    assert_eq!(reopened.get("pods", "default", "b").unwrap().revision, 3);
    let next = reopened.create(&rt("pods"), pod("c").json()).unwrap();
    assert_eq!(next["metadata"]["resourceVersion"], "5", "revisions continue after restart");
}

#[test]
fn restore_brings_back_a_checkpoint_as_new_revisions() {
    let store = store();
    let (pods, config_maps) = (rt("pods"), rt("configmaps"));
    let cm = |name: &str, value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"},
               "data": {"k": value}})
    };
    let kept = store.create(&config_maps, cm("kept", "a")).unwrap();
    let changed = store.create(&config_maps, cm("changed", "a")).unwrap();
    let deleted = store.create(&pods, pod("deleted").json()).unwrap();
    let checkpoint = store.checkpoint();
    let saved_at = store.revision();

    let mut edit = changed.clone();
    edit["data"]["k"] = json!("b");
    store.update(&config_maps, edit, Subresource::Main, DryRun::Off).unwrap();
    store.delete(&pods, "default", "deleted", &DeleteOptions::default()).unwrap();
    store.create(&config_maps, cm("created", "x")).unwrap();
    let mut watch = store.watch("configmaps", WatchFrom::Revision(store.revision())).unwrap().live;

    assert_eq!(store.restore(&checkpoint).unwrap(), 3, "changed, deleted and created; kept untouched");
    assert!(store.revision() > saved_at, "revisions only move forward");
    let value = |rt: &ResourceType, name: &str| store.get_value(rt, "default", name).unwrap();
    assert_eq!(value(&config_maps, "changed")["data"]["k"], "a");
    assert_eq!(
        value(&config_maps, "kept")["metadata"]["resourceVersion"],
        kept["metadata"]["resourceVersion"]
    );
    assert_eq!(
        value(&pods, "deleted")["metadata"]["uid"],
        deleted["metadata"]["uid"],
        "the same object again"
    );
    assert!(store.get("configmaps", "default", "created").is_none());
    let mut seen = Vec::new();
    while let Ok(event) = watch.try_recv() {
        seen.push((event.event_type, event.object.name.clone()));
    }
    seen.sort_by_key(|(_, name)| name.clone());
    assert_eq!(
        seen,
        [
            (EventType::Modified, "changed".to_string()),
            (EventType::Deleted, "created".to_string()),
            (EventType::Added, "deleted".to_string()),
        ]
    );
    assert_eq!(store.restore(&checkpoint).unwrap(), 0, "restoring twice changes nothing");
}

#[test]
fn claimable_lists_a_controllers_objects_and_the_orphans_and_follows_every_write() {
    let store = store();
    let pods = rt("pods");
    let owned = |name: &str, uid: &str| {
        let mut pod = pod(name).json();
        pod["metadata"]["ownerReferences"] = json!([{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "ds", "uid": uid, "controller": true}]);
        pod
    };
    store.create(&pods, owned("b-mine", "uid-1")).unwrap();
    store.create(&pods, owned("c-theirs", "uid-2")).unwrap();
    store.create(&pods, pod("a-orphan").json()).unwrap();
    let names = |uid: &str| -> Vec<String> {
        store.claimable("pods", "default", uid).unwrap().iter().map(|s| s.name.clone()).collect()
    };
    assert_eq!(names("uid-1"), ["a-orphan", "b-mine"]);
    assert_eq!(names("uid-2"), ["a-orphan", "c-theirs"]);
    // Adopting the orphan moves it; deleting a pod drops it; other namespaces stay out.
    store.update(&pods, owned("a-orphan", "uid-2"), Subresource::Main, DryRun::Off).unwrap();
    store.delete(&pods, "default", "b-mine", &DeleteOptions::default()).unwrap();
    assert_eq!(names("uid-1"), Vec::<String>::new());
    assert_eq!(names("uid-2"), ["a-orphan", "c-theirs"]);
    assert!(store.claimable("pods", "kube-system", "uid-2").unwrap().is_empty());
    // A type whose orphans are not indexed is listed by the caller instead.
    assert!(store.claimable("configmaps", "default", "uid-1").is_none());
    // The index is rebuilt from what a reopened store loads.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    {
        let durable = Store::open(&path).unwrap();
        durable.create(&rt("namespaces"), json!({"metadata": {"name": "default"}})).unwrap();
        durable.create(&pods, owned("kept", "uid-3")).unwrap();
    }
    let reopened = Store::open(&path).unwrap();
    let kept: Vec<String> =
        reopened.claimable("pods", "default", "uid-3").unwrap().iter().map(|s| s.name.clone()).collect();
    assert_eq!(kept, ["kept"]);
}

#[test]
fn binding_sets_the_node_and_the_scheduled_condition_in_one_write() {
    let store = store();
    let pods = rt("pods");
    let created = store.create(&pods, pod("web").json()).unwrap();
    let uid = created["metadata"]["uid"].as_str().unwrap().to_string();
    let before = store.revision();
    let to = |node: &str| Binding { node: node.into(), uid: Some(uid.clone()), ..Default::default() };
    let bound = store.bind(&pods, "default", "web", &to("node-a")).unwrap();
    assert_eq!(store.revision(), before + 1, "one write, one watch event");
    assert_eq!(bound["spec"]["nodeName"], "node-a");
    let scheduled =
        bound["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "PodScheduled");
    assert_eq!(scheduled.unwrap()["status"], "True");
    // upstream's refusals (pkg/registry/core/pod/storage/storage.go setPodNodeAndMetadata)
    let again = store.bind(&pods, "default", "web", &to("node-b")).unwrap_err().to_string();
    assert_eq!(
        again,
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-a\""
    );
    store.create(&pods, pod("other").json()).unwrap();
    let wrong_uid = store.bind(&pods, "default", "other", &to("node-a")).unwrap_err().to_string();
    assert!(wrong_uid.contains("Precondition failed: UID in precondition"), "{wrong_uid}");
    assert!(matches!(store.bind(&pods, "default", "gone", &to("n")), Err(Error::NotFound { .. })));
    // A binding without uid or resourceVersion binds whatever pod has the name; a stale
    // resourceVersion is a conflict on the pod, and a dry run writes nothing.
    let stale = Binding { node: "n".into(), resource_version: Some("1".into()), ..Default::default() };
    let stale = store.bind(&pods, "default", "other", &stale).unwrap_err().to_string();
    assert!(
        stale.starts_with("Operation cannot be fulfilled on pods \"other\": the object has been modified"),
        "{stale}"
    );
    let revision = store.revision();
    let dry = Binding { node: "n".into(), dry_run: DryRun::All, ..Default::default() };
    assert_eq!(store.bind(&pods, "default", "other", &dry).unwrap()["spec"]["nodeName"], "n");
    assert_eq!(store.revision(), revision);
    let mut annotated = Binding { node: "node-b".into(), ..Default::default() };
    annotated.annotations.insert("scheduler.example/decision".into(), json!("spread"));
    let bound = store.bind(&pods, "default", "other", &annotated).unwrap();
    assert_eq!(bound["metadata"]["annotations"]["scheduler.example/decision"], "spread");
}

#[test]
fn compaction_removes_the_superseded_rows_and_tombstones_it_tracked_and_keeps_the_current_ones() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let configmaps = rt("configmaps");
    let rows = |store: &Store| {
        let mut names = Vec::new();
        store.lock().db.rows(|row| names.push(row.name)).unwrap();
        names
    };
    {
        let store = Store::open(&path).unwrap().with_history_window(5);
        store.create(&rt("namespaces"), json!({"metadata": {"name": "default"}})).unwrap();
        let cm = |data: usize| json!({"metadata": {"name": "c", "namespace": "default"}, "data": {"n": data.to_string()}});
        store.create(&configmaps, cm(0)).unwrap();
        store.create(&configmaps, json!({"metadata": {"name": "gone", "namespace": "default"}})).unwrap();
        store.delete(&configmaps, "default", "gone", &DeleteOptions::default()).unwrap();
        for n in 1..=COMPACT_EVERY {
            store.update(&configmaps, cm(n), Subresource::Main, DryRun::Off).unwrap();
        }
        // The compaction ran at the 10,000th row: the revision a watch could still start from
        // then and the 5 after it, and the 4 updates written since, stay, besides the
        // namespace's current row; everything older went, `gone`'s row and tombstone included.
        let left = rows(&store);
        assert_eq!(left.len(), 1 + 6 + 4, "{left:?}");
        assert!(!left.iter().any(|name| name == "gone"));
    }
    let reopened = Store::open(&path).unwrap();
    let current = reopened.get_value(&configmaps, "default", "c").unwrap();
    assert_eq!(current["data"]["n"], COMPACT_EVERY.to_string());
    assert!(reopened.get("configmaps", "default", "gone").is_none());
    assert_eq!(reopened.revision(), 4 + COMPACT_EVERY as u64);
}

#[test]
fn a_batch_commits_its_good_writes_and_undoes_a_failed_one_alone() {
    let store = store();
    let maps = rt("configmaps");
    let map = |name: &str, value: &str| json!({"metadata": {"name": name, "namespace": "default"}, "data": {"k": value}});
    let mut modified = map("a", "2");
    modified["metadata"]["resourceVersion"] = json!("2"); // a's revision once the batch wrote it
    let stale = {
        let mut stale = map("a", "stale");
        stale["metadata"]["resourceVersion"] = json!("1");
        stale
    };
    let before = store.revision();
    let outcomes = store
        .write_each(
            &maps,
            vec![
                BatchWrite::Create(map("a", "1")),
                BatchWrite::Create(map("a", "again")), // AlreadyExists: sees the earlier write
                BatchWrite::Update(modified),
                BatchWrite::Update(stale), // Conflict: undone alone
                BatchWrite::Create(map("b", "1")),
                BatchWrite::Update(map("missing", "1")),
            ],
        )
        .unwrap();
    let failed: Vec<bool> = outcomes.iter().map(Result::is_err).collect();
    assert_eq!(failed, [false, true, false, true, false, true], "{outcomes:?}");
    assert_eq!(store.revision(), before + 3, "three writes, three revisions, none skipped");
    let a = store.get_value(&maps, "default", "a").unwrap();
    assert_eq!((a["data"]["k"].as_str(), a["metadata"]["resourceVersion"].as_str()), (Some("2"), Some("3")));
    assert_eq!(store.get_value(&maps, "default", "b").unwrap()["metadata"]["resourceVersion"], "4");
    let events = store.watch("configmaps", WatchFrom::Revision(before)).unwrap().replay;
    let seen: Vec<(u64, &str)> = events.iter().map(|e| (e.revision, e.event_type.as_str())).collect();
    assert_eq!(seen, [(2, "ADDED"), (3, "MODIFIED"), (4, "ADDED")]);
}

/// The health checks' ping answers from the database while a write holds the store (a long
/// patch): it reads on its own connection. Were it to wait for the store, the ping thread would
/// still be blocked when the writer gives up after a minute.
#[test]
fn a_ping_does_not_wait_for_a_write_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(Store::open(&dir.path().join("store.db")).unwrap());
    store.create(&rt("namespaces"), json!({"metadata": {"name": "default"}})).unwrap();
    let (holding, held) = std::sync::mpsc::channel();
    let (pinged, ping_answer) = std::sync::mpsc::channel();
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            store.write(DryRun::Off, |_txn| -> Result<()> {
                holding.send(()).unwrap();
                // Released as soon as the ping answered; a minute at most otherwise.
                let answered = ping_answer.recv_timeout(std::time::Duration::from_secs(60)).is_ok();
                assert!(answered, "the ping waited for the write");
                Ok(())
            })
        })
    };
    held.recv().unwrap();
    store.ping().unwrap();
    pinged.send(()).unwrap();
    writer.join().unwrap().unwrap();
    // A store in memory has one connection: its ping is answered between writes.
    self::store().ping().unwrap();
}
