//! The simulator's API in-process: CRUD, selectors, watch semantics, concurrency, deletion,
//! error statuses, and the store's durability across `kill -9`.

use std::{collections::BTreeMap, time::Duration};

use axum::body::Body;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::{
    apps::v1::DaemonSet,
    core::v1::{ConfigMap, Namespace, Node, Pod},
};
use kube::{
    Api,
    api::{DeleteParams, ListParams, PostParams},
    runtime::{reflector, watcher},
};
use lab_runner::k8s::testing::pod;
use lab_runner::sim::{
    clock::Clock,
    harness::Harness,
    server::SimState,
    store::{Store, WatchFrom},
};
use serde_json::{Value, json};

fn config_map(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels.iter().map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>()},
        "data": {"k": "v"},
    }))
    .unwrap()
}

async fn next(events: &mut (impl futures::Stream<Item = Value> + Unpin)) -> Value {
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event arrives")
        .expect("stream open")
}

fn summary(event: &Value) -> String {
    format!(
        "{} {}",
        event["type"].as_str().unwrap(),
        event["object"]["metadata"]["name"].as_str().unwrap_or("-")
    )
}

#[tokio::test]
async fn crud_for_namespaced_cluster_scoped_and_group_types() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let created =
        cms.create(&PostParams::default(), &config_map("settings", &[("app", "web")])).await.unwrap();
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert!(created.metadata.uid.is_some() && created.metadata.creation_timestamp.is_some());
    let mut fetched = cms.get("settings").await.unwrap();
    fetched.data.as_mut().unwrap().insert("k".into(), "changed".into());
    let replaced = cms.replace("settings", &PostParams::default(), &fetched).await.unwrap();
    assert_eq!(replaced.data.unwrap()["k"], "changed");
    assert_ne!(replaced.metadata.resource_version, created.metadata.resource_version);

    let nodes: Api<Node> = Api::all(sim.client.clone());
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "node-a"},
        "status": {"capacity": {"cpu": 8, "nvidia.com/gpu": 4}}}))
    .unwrap();
    let node = nodes.create(&PostParams::default(), &node).await.unwrap();
    assert_eq!(node.metadata.namespace, None);
    let capacity = node.status.unwrap().capacity.unwrap();
    assert_eq!(capacity["nvidia.com/gpu"].0, "4", "numbers in quantity fields are stored as strings");
    assert_eq!(nodes.list(&ListParams::default()).await.unwrap().items.len(), 1);

    let dss: Api<DaemonSet> = Api::namespaced(sim.client.clone(), "kube-system");
    let ds: DaemonSet = serde_json::from_value(json!({"metadata": {"name": "agent"}, "spec": {
        "selector": {"matchLabels": {"app": "agent"}},
        "template": {"metadata": {"labels": {"app": "agent"}}, "spec": {"containers": [{"name": "a", "image": "x:1"}]}}}}))
    .unwrap();
    let ds = dss.create(&PostParams::default(), &ds).await.unwrap();
    assert_eq!(ds.metadata.generation, Some(1));
    let all_ds: Api<DaemonSet> = Api::all(sim.client.clone());
    assert_eq!(all_ds.list(&ListParams::default()).await.unwrap().items.len(), 1);

    cms.delete("settings", &DeleteParams::default()).await.unwrap();
    let error = cms.get("settings").await.unwrap_err();
    assert!(matches!(error, kube::Error::Api(ref status) if status.code == 404), "{error:?}");
}

#[tokio::test]
async fn label_and_field_selectors_filter_lists() {
    let sim = Harness::start();
    let pods: Api<Pod> = Api::default_namespaced(sim.client.clone());
    pods.create(
        &PostParams::default(),
        &pod("a").node_name("node-a").label("app", "web").label("tier", "front").build(),
    )
    .await
    .unwrap();
    pods.create(&PostParams::default(), &pod("b").node_name("node-b").label("app", "web").build())
        .await
        .unwrap();
    pods.create(&PostParams::default(), &pod("c").label("app", "db").build()).await.unwrap();
    let names = |list: kube::core::ObjectList<Pod>| -> Vec<String> {
        list.items.into_iter().map(|p| p.metadata.name.unwrap()).collect()
    };
    let cases = [
        (ListParams::default().labels("app=web"), vec!["a", "b"]),
        (ListParams::default().labels("app!=web"), vec!["c"]),
        (ListParams::default().labels("app in (db,cache)"), vec!["c"]),
        (ListParams::default().labels("app notin (db)"), vec!["a", "b"]),
        (ListParams::default().labels("tier"), vec!["a"]),
        (ListParams::default().labels("!tier"), vec!["b", "c"]),
        (ListParams::default().fields("spec.nodeName=node-b"), vec!["b"]),
        (ListParams::default().fields("spec.nodeName="), vec!["c"]),
        (ListParams::default().fields("metadata.name!=a,status.phase=Pending"), vec!["b", "c"]),
        (ListParams::default().labels("app=web").fields("spec.nodeName=node-a"), vec!["a"]),
    ];
    for (params, expected) in cases {
        assert_eq!(names(pods.list(&params).await.unwrap()), expected, "{params:?}");
    }
    // Pages of one, following `continue`; every page carries a resourceVersion.
    let first = pods.list(&ListParams::default().limit(1)).await.unwrap();
    assert_eq!(names(first.clone()), vec!["a"]);
    assert_eq!(first.metadata.remaining_item_count, Some(2));
    let token = first.metadata.continue_.clone().unwrap();
    let second = pods.list(&ListParams::default().limit(1).continue_token(&token)).await.unwrap();
    assert_eq!(names(second.clone()), vec!["b"]);
    assert!(second.metadata.resource_version.is_some());
}

#[tokio::test]
async fn events_select_on_involved_object() {
    let sim = Harness::start();
    let event = json!({"metadata": {"name": "e1"}, "involvedObject": {"kind": "Node", "name": "node-a", "uid": "node-a"},
                       "reason": "Starting", "type": "Normal", "source": {"component": "kubelet"}});
    let (code, _) = sim
        .call("POST", "/api/v1/namespaces/default/events", Some("application/json"), event.to_string())
        .await;
    assert_eq!(code, 201);
    let uri = "/api/v1/events?fieldSelector=involvedObject.name%3Dnode-a%2CinvolvedObject.namespace%3D%2CinvolvedObject.kind%3DNode%2Csource%3Dkubelet";
    let (code, list) = sim.call("GET", uri, None, Body::empty()).await;
    assert_eq!((code, list["items"].as_array().unwrap().len()), (200, 1));
    let (_, none) =
        sim.call("GET", "/api/v1/events?fieldSelector=reason%3DKilling", None, Body::empty()).await;
    assert_eq!(none["items"], json!([]));
}

#[tokio::test]
async fn table_output_for_lists_and_single_objects() {
    let sim = Harness::start();
    let pods: Api<Pod> = Api::default_namespaced(sim.client.clone());
    pods.create(&PostParams::default(), &pod("web-0").label("app", "web").build()).await.unwrap();
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    for uri in ["/api/v1/pods?limit=500", "/api/v1/namespaces/default/pods/web-0"] {
        let request =
            axum::http::Request::builder().uri(uri).header("accept", accept).body(Body::empty()).unwrap();
        let response = sim.request(request).await;
        assert_eq!(response.status(), 200);
        let table: Value =
            serde_json::from_slice(&axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap())
                .unwrap();
        assert_eq!(table["kind"], "Table", "{uri}");
        assert_eq!(table["rows"].as_array().unwrap().len(), 1);
        assert_eq!(table["rows"][0]["object"]["metadata"]["namespace"], "default");
        assert!(table["metadata"]["resourceVersion"].as_str().is_some());
    }
}

#[tokio::test]
async fn watch_replays_from_a_resource_version_and_filters_by_selector() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let start = sim.state.store.revision();
    cms.create(&PostParams::default(), &config_map("a", &[("app", "web")])).await.unwrap();
    cms.create(&PostParams::default(), &config_map("b", &[("app", "db")])).await.unwrap();
    let uri = format!(
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={start}&labelSelector=app%3Dweb"
    );
    let mut events = sim.watch_lines(&uri).await;
    assert_eq!(summary(&next(&mut events).await), "ADDED a", "replayed; b is filtered out");
    // a stops matching: the selector watch sees it DELETED; b starts matching: ADDED.
    let mut a = cms.get("a").await.unwrap();
    a.metadata.labels = Some(BTreeMap::from([("app".to_string(), "other".to_string())]));
    cms.replace("a", &PostParams::default(), &a).await.unwrap();
    let mut b = cms.get("b").await.unwrap();
    b.metadata.labels = Some(BTreeMap::from([("app".to_string(), "web".to_string())]));
    cms.replace("b", &PostParams::default(), &b).await.unwrap();
    cms.delete("b", &DeleteParams::default()).await.unwrap();
    let seen = vec![
        summary(&next(&mut events).await),
        summary(&next(&mut events).await),
        summary(&next(&mut events).await),
    ];
    assert_eq!(seen, vec!["DELETED a", "ADDED b", "DELETED b"]);
}

#[tokio::test]
async fn watch_too_old_resource_version_gets_410_expired() {
    let store = Store::in_memory().unwrap().with_history_window(2);
    let sim = Harness::with_store(store);
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    for name in ["a", "b", "c", "d"] {
        cms.create(&PostParams::default(), &config_map(name, &[])).await.unwrap();
    }
    let mut events =
        sim.watch_lines("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1").await;
    let error = next(&mut events).await;
    assert_eq!(error["type"], "ERROR");
    insta::assert_json_snapshot!("watch_expired", error);
    assert!(events.next().await.is_none(), "the stream ends after the error");
    assert!(sim.state.store.watch("configmaps", WatchFrom::Revision(sim.state.store.revision() - 1)).is_ok());
}

#[tokio::test]
async fn watch_list_sends_initial_events_then_the_end_bookmark_then_live_events() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    cms.create(&PostParams::default(), &config_map("x", &[])).await.unwrap();
    cms.create(&PostParams::default(), &config_map("y", &[])).await.unwrap();
    let uri = "/api/v1/namespaces/default/configmaps?allowWatchBookmarks=true&fieldSelector=metadata.name%3Dx&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=591&watch=true";
    let mut events = sim.watch_lines(uri).await;
    assert_eq!(summary(&next(&mut events).await), "ADDED x");
    let bookmark = next(&mut events).await;
    assert_eq!(bookmark["type"], "BOOKMARK");
    assert_eq!(bookmark["object"]["kind"], "ConfigMap");
    assert_eq!(bookmark["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
    assert_eq!(bookmark["object"]["metadata"]["resourceVersion"], sim.state.store.revision().to_string());
    cms.delete("y", &DeleteParams::default()).await.unwrap();
    cms.delete("x", &DeleteParams::default()).await.unwrap();
    assert_eq!(summary(&next(&mut events).await), "DELETED x");
    // Without allowWatchBookmarks the request is rejected, never silently half-served.
    let (code, _) = sim
        .call(
            "GET",
            "/api/v1/configmaps?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
            None,
            Body::empty(),
        )
        .await;
    assert_eq!(code, 400);
}

#[tokio::test]
async fn watch_sends_periodic_bookmarks_and_ends_at_timeout() {
    let mut state = SimState::new(Store::in_memory().unwrap(), Clock::real());
    state.bookmark_interval = Duration::from_millis(20);
    let sim = Harness::with_state(state);
    let revision = sim.state.store.revision();
    let uri = format!(
        "/api/v1/nodes?watch=true&allowWatchBookmarks=true&resourceVersion={revision}&timeoutSeconds=1"
    );
    let events: Vec<Value> = sim.watch_lines(&uri).await.collect().await;
    assert!(!events.is_empty(), "at least one bookmark before the timeout");
    for event in &events {
        assert_eq!(event["type"], "BOOKMARK");
        assert_eq!(event["object"]["metadata"]["resourceVersion"], revision.to_string());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watcher_and_reflector_miss_no_event_while_writes_race() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let (reader, writer) = reflector::store();
    let reflected = reflector(writer, watcher(cms.clone(), watcher::Config::default()));
    let reflector_task = tokio::spawn(reflected.try_for_each(|_| async { Ok(()) }));
    let writes = tokio::spawn({
        let cms = cms.clone();
        async move {
            for i in 0..1000u32 {
                let name = format!("cm-{}", i % 120);
                match i % 5 {
                    0 | 1 => {
                        let _ =
                            cms.create(&PostParams::default(), &config_map(&name, &[("round", "1")])).await;
                    }
                    2 | 3 => {
                        if let Ok(mut cm) = cms.get(&name).await {
                            cm.data = Some(BTreeMap::from([("i".to_string(), i.to_string())]));
                            let _ = cms.replace(&name, &PostParams::default(), &cm).await;
                        }
                    }
                    _ => {
                        let _ = cms.delete(&name, &DeleteParams::default()).await;
                    }
                }
            }
        }
    });
    writes.await.unwrap();
    let expected: BTreeMap<String, String> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|cm| (cm.metadata.name.unwrap(), cm.metadata.resource_version.unwrap()))
        .collect();
    let mut cached = BTreeMap::new();
    for _ in 0..200 {
        cached = reader
            .state()
            .iter()
            .map(|cm| (cm.metadata.name.clone().unwrap(), cm.metadata.resource_version.clone().unwrap()))
            .collect();
        if cached == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    reflector_task.abort();
    assert!(!expected.is_empty());
    assert_eq!(cached, expected, "the reflector's cache equals the store");
}

#[tokio::test]
async fn stale_update_is_a_409_conflict() {
    let sim = Harness::start();
    let dss: Api<DaemonSet> = Api::default_namespaced(sim.client.clone());
    let ds: DaemonSet = serde_json::from_value(json!({"metadata": {"name": "x"}, "spec": {
        "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "a", "image": "x:1"}]}}}}))
    .unwrap();
    let created = dss.create(&PostParams::default(), &ds).await.unwrap();
    let mut newer = created.clone();
    newer.spec.as_mut().unwrap().min_ready_seconds = Some(5);
    let newer = dss.replace("x", &PostParams::default(), &newer).await.unwrap();
    assert_eq!(newer.metadata.generation, Some(2));
    let mut stale = created.clone();
    stale.spec.as_mut().unwrap().min_ready_seconds = Some(9);
    let kube::Error::Api(status) = dss.replace("x", &PostParams::default(), &stale).await.unwrap_err() else {
        panic!("expected an API error")
    };
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on daemonsets.apps \"x\": the object has been modified; please apply your changes to the latest version and try again"
    );
}

#[tokio::test]
async fn status_subresource_writes_only_status() {
    let sim = Harness::start();
    let pods: Api<Pod> = Api::default_namespaced(sim.client.clone());
    pods.create(&PostParams::default(), &pod("p").node_name("node-a").build()).await.unwrap();
    let body = json!({"metadata": {"name": "p", "namespace": "default", "labels": {"sneaky": "yes"}},
                      "spec": {"nodeName": "elsewhere", "containers": [{"name": "c", "image": "other"}]},
                      "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
    let (code, written) = sim
        .call("PUT", "/api/v1/namespaces/default/pods/p/status", Some("application/json"), body.to_string())
        .await;
    assert_eq!(code, 200, "{written}");
    assert_eq!(written["status"]["phase"], "Running");
    assert_eq!(written["spec"]["nodeName"], "node-a");
    assert!(written["metadata"]["labels"].get("sneaky").is_none());
    let (code, listed) =
        sim.call("GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning", None, Body::empty()).await;
    assert_eq!((code, listed["items"].as_array().unwrap().len()), (200, 1));
}

#[tokio::test]
async fn graceful_deletion_keeps_bound_pods_until_finished() {
    let sim = Harness::start();
    let pods: Api<Pod> = Api::default_namespaced(sim.client.clone());
    pods.create(&PostParams::default(), &pod("bound").node_name("node-a").build()).await.unwrap();
    pods.create(&PostParams::default(), &pod("unbound").build()).await.unwrap();
    pods.delete("unbound", &DeleteParams::background()).await.unwrap();
    assert!(pods.get_opt("unbound").await.unwrap().is_none());
    pods.delete("bound", &DeleteParams::background()).await.unwrap();
    let terminating = pods.get("bound").await.unwrap();
    assert_eq!(terminating.metadata.deletion_grace_period_seconds, Some(30));
    assert_eq!(terminating.metadata.deletion_timestamp.unwrap().0.to_string(), "2026-01-01T00:00:30Z");
    pods.delete("bound", &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() })
        .await
        .unwrap();
    assert!(pods.get_opt("bound").await.unwrap().is_none());
}

#[tokio::test]
async fn namespace_deletion_cascades_and_deletecollection_honours_selectors() {
    let sim = Harness::start();
    let namespaces: Api<Namespace> = Api::all(sim.client.clone());
    let team: Namespace = serde_json::from_value(json!({"metadata": {"name": "team-a"}})).unwrap();
    let team = namespaces.create(&PostParams::default(), &team).await.unwrap();
    assert_eq!(team.status.unwrap().phase.as_deref(), Some("Active"));
    let cms: Api<ConfigMap> = Api::namespaced(sim.client.clone(), "team-a");
    for name in ["a", "b", "c"] {
        let labels: &[(&str, &str)] = if name == "c" { &[("keep", "yes")] } else { &[] };
        cms.create(&PostParams::default(), &config_map(name, labels)).await.unwrap();
    }
    cms.delete_collection(&DeleteParams::default(), &ListParams::default().labels("!keep")).await.unwrap();
    let left: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.metadata.name.unwrap())
        .collect();
    assert_eq!(left, vec!["c"]);
    namespaces.delete("team-a", &DeleteParams::default()).await.unwrap();
    assert!(namespaces.get_opt("team-a").await.unwrap().is_none());
    assert!(cms.list(&ListParams::default()).await.unwrap().items.is_empty());
    let kube::Error::Api(status) =
        cms.create(&PostParams::default(), &config_map("late", &[])).await.unwrap_err()
    else {
        panic!("expected an API error")
    };
    assert_eq!((status.code, status.message.as_str()), (404, "namespaces \"team-a\" not found"));
}

#[tokio::test]
async fn dry_run_runs_the_write_and_stores_nothing() {
    let sim = Harness::start();
    let revision = sim.state.store.revision();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let would = cms
        .create(&PostParams { dry_run: true, ..PostParams::default() }, &config_map("d", &[]))
        .await
        .unwrap();
    assert_eq!(would.metadata.name.as_deref(), Some("d"));
    assert!(would.metadata.uid.is_some());
    cms.create(&PostParams::default(), &config_map("real", &[])).await.unwrap();
    let revision_after_real = sim.state.store.revision();
    assert_eq!(revision_after_real, revision + 1, "only the real create wrote");
    cms.delete("real", &DeleteParams { dry_run: true, ..DeleteParams::default() }).await.unwrap();
    let (code, _) = sim
        .call(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/real?dryRun=All",
            Some("application/merge-patch+json"),
            r#"{"data":{"k":"dry"}}"#,
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(cms.get("real").await.unwrap().data.unwrap()["k"], "v");
    assert_eq!(sim.state.store.revision(), revision_after_real);
}

#[tokio::test]
async fn merge_patch_and_generate_name() {
    let sim = Harness::start();
    let (code, created) = sim
        .call(
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some("application/yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  generateName: web-\ndata:\n  a: \"1\"\n",
        )
        .await;
    assert_eq!(code, 201);
    let name = created["metadata"]["name"].as_str().unwrap().to_string();
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
    let uri = format!("/api/v1/namespaces/default/configmaps/{name}");
    let (code, patched) = sim
        .call(
            "PATCH",
            &uri,
            Some("application/merge-patch+json"),
            r#"{"metadata":{"labels":{"gpu":"true"}}}"#,
        )
        .await;
    assert_eq!((code, &patched["metadata"]["labels"]["gpu"]), (200, &json!("true")));
    let (code, missing) = sim
        .call(
            "PATCH",
            "/api/v1/namespaces/default/configmaps/nope",
            Some("application/merge-patch+json"),
            "{}",
        )
        .await;
    assert_eq!((code, &missing["reason"]), (404, &json!("NotFound")));
}

/// Every client mistake answers a `Status` with the upstream code, reason and text.
#[tokio::test]
async fn bad_input_gets_upstream_statuses() {
    let sim = Harness::start();
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"taken"}}"#;
    sim.call("POST", "/api/v1/namespaces/default/configmaps", Some("application/json"), cm).await;
    let big = format!(r#"{{"metadata":{{"name":"big"}},"data":{{"a":"{}"}}}}"#, "x".repeat(3 * 1024 * 1024));
    let cases: Vec<(&str, &str, &str, Option<&str>, String)> = vec![
        (
            "malformed JSON",
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some("application/json"),
            "{not json".into(),
        ),
        (
            "wrong content type",
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some("text/plain"),
            cm.into(),
        ),
        ("body over 3 MiB", "POST", "/api/v1/namespaces/default/configmaps", Some("application/json"), big),
        ("kind mismatch", "POST", "/api/v1/namespaces/default/pods", Some("application/json"), cm.into()),
        (
            "apiVersion mismatch",
            "POST",
            "/apis/apps/v1/namespaces/default/daemonsets",
            Some("application/json"),
            r#"{"apiVersion":"apps/v2","kind":"DaemonSet","metadata":{"name":"x"}}"#.into(),
        ),
        (
            "already exists",
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some("application/json"),
            cm.into(),
        ),
        (
            "missing namespace",
            "POST",
            "/api/v1/namespaces/nope/configmaps",
            Some("application/json"),
            cm.into(),
        ),
        (
            "no name",
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some("application/json"),
            r#"{"metadata":{}}"#.into(),
        ),
        (
            "namespace mismatch",
            "POST",
            "/api/v1/namespaces/default/configmaps",
            Some("application/json"),
            r#"{"metadata":{"name":"x","namespace":"other"}}"#.into(),
        ),
        ("not found", "GET", "/api/v1/namespaces/default/pods/nope", None, String::new()),
        ("unknown resource", "GET", "/api/v1/foos", None, String::new()),
        ("verb the type lacks", "DELETE", "/api/v1/namespaces", None, String::new()),
        (
            "unsupported field selector",
            "GET",
            "/api/v1/configmaps?fieldSelector=spec.nodeName%3Dx",
            None,
            String::new(),
        ),
        ("bad label selector", "GET", "/api/v1/pods?labelSelector=app%20not%20in%20(x)", None, String::new()),
        (
            "unknown patch type",
            "PATCH",
            "/api/v1/namespaces/default/configmaps/taken",
            Some("application/json"),
            "{}".into(),
        ),
        (
            "bad dryRun",
            "POST",
            "/api/v1/namespaces/default/configmaps?dryRun=Some",
            Some("application/json"),
            cm.into(),
        ),
    ];
    let mut answers = Vec::new();
    for (case, method, uri, content_type, body) in cases {
        let (code, status) = sim.call(method, uri, content_type, body).await;
        assert_eq!(status["kind"], "Status", "{case}: {status}");
        assert_eq!(status["code"], code, "{case}");
        assert!(code < 500, "{case}: a client mistake is never a 5xx");
        answers.push(json!({"case": case, "request": format!("{method} {uri}"), "status": status}));
    }
    insta::assert_yaml_snapshot!("bad_input_statuses", answers);
}

const CHILD_ENV: &str = "LAB_RUNNER_TEST_STORE_CHILD";

/// Writes configmaps to the store at `$LAB_RUNNER_TEST_STORE_CHILD`, printing `acked N` after
/// each acknowledged write, until killed.
fn child_writer(path: &str) -> ! {
    use std::io::Write;
    let store = Store::open(std::path::Path::new(path)).unwrap();
    let types = lab_runner::sim::resources::built_in();
    let namespaces = lab_runner::sim::resources::find(&types, "", "v1", "namespaces").unwrap();
    let cms = lab_runner::sim::resources::find(&types, "", "v1", "configmaps").unwrap();
    store.create(namespaces, json!({"metadata": {"name": "default"}})).unwrap();
    let mut stdout = std::io::stdout();
    for i in 0.. {
        store.create(cms, json!({"metadata": {"name": format!("cm-{i}"), "namespace": "default"}})).unwrap();
        writeln!(stdout, "acked {i}").unwrap();
        stdout.flush().unwrap();
    }
    unreachable!("the parent kills this process")
}

/// A write acknowledged before `kill -9` is there after reopening. The test binary runs itself
/// as the writer child (same test, selected by an environment variable).
#[test]
fn acknowledged_writes_survive_kill_9() {
    use std::io::BufRead;
    if let Ok(path) = std::env::var(CHILD_ENV) {
        child_writer(&path);
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.db");
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "sim_api::acknowledged_writes_survive_kill_9", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, &path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut acked = None;
    for line in stdout.lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("acked ") {
            acked = Some(n.parse::<u64>().unwrap());
            if acked >= Some(300) {
                break;
            }
        }
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let acked = acked.expect("the child acknowledged writes");
    let store = Store::open(&path).unwrap();
    for i in 0..=acked {
        assert!(
            store.get("configmaps", "default", &format!("cm-{i}")).is_some(),
            "acknowledged cm-{i} survived"
        );
    }
}

#[tokio::test]
async fn table_watch_sends_column_definitions_once() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let revision = sim.state.store.revision();
    cms.create(&PostParams::default(), &config_map("a", &[])).await.unwrap();
    cms.create(&PostParams::default(), &config_map("b", &[])).await.unwrap();
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let uri = format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={revision}");
    let request =
        axum::http::Request::builder().uri(uri).header("accept", accept).body(Body::empty()).unwrap();
    let response = sim.request(request).await;
    let mut events = Box::pin(
        response
            .into_body()
            .into_data_stream()
            .map(|c| serde_json::from_slice::<Value>(&c.unwrap()).unwrap()),
    );
    let first = next(&mut events).await;
    let second = next(&mut events).await;
    assert_eq!((first["type"].as_str(), first["object"]["kind"].as_str()), (Some("ADDED"), Some("Table")));
    assert!(!first["object"]["columnDefinitions"].as_array().unwrap().is_empty());
    assert_eq!(second["object"]["columnDefinitions"], json!([]));
    assert_eq!(second["object"]["rows"][0]["object"]["metadata"]["name"], "b");
}

/// Twenty `kubectl get -w` share one rendering of an event's table (issue #17): after their
/// first table, watchers get the same bytes; the AGE cell is the clock's at sending.
#[tokio::test]
async fn table_watchers_share_each_events_line_and_its_age_follows_the_clock() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let revision = sim.state.store.revision();
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let mut watchers = Vec::new();
    for _ in 0..2 {
        let uri = format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={revision}");
        let request =
            axum::http::Request::builder().uri(uri).header("accept", accept).body(Body::empty()).unwrap();
        watchers
            .push(Box::pin(sim.request(request).await.into_body().into_data_stream().map(|c| c.unwrap())));
    }
    cms.create(&PostParams::default(), &config_map("a", &[])).await.unwrap();
    sim.state.clock.advance(k8s_openapi::jiff::SignedDuration::from_mins(5));
    let mut b = config_map("b", &[]);
    cms.create(&PostParams::default(), &b).await.unwrap();
    b = cms.get("b").await.unwrap();
    b.data = Some([("k".to_string(), "w".to_string())].into());
    sim.state.clock.advance(k8s_openapi::jiff::SignedDuration::from_mins(3));
    cms.replace("b", &PostParams::default(), &b).await.unwrap();
    let mut lines = Vec::new();
    for events in &mut watchers {
        let mut seen = Vec::new();
        for _ in 0..3 {
            let chunk = tokio::time::timeout(Duration::from_secs(10), events.next()).await.unwrap().unwrap();
            seen.push(chunk);
        }
        lines.push(seen);
    }
    assert_eq!(lines[0][1..], lines[1][1..], "after the first table, one rendering for both");
    let modified: Value = serde_json::from_slice(&lines[0][2]).unwrap();
    assert_eq!(modified["type"], "MODIFIED");
    assert_eq!(modified["object"]["columnDefinitions"], json!([]));
    assert_eq!(modified["object"]["rows"][0]["cells"], json!(["b", 1, "3m"]), "AGE at sending");
}

#[tokio::test]
async fn long_table_lists_keep_every_row_in_order() {
    let sim = Harness::start();
    let types = lab_runner::sim::resources::built_in();
    let cms = lab_runner::sim::resources::find(&types, "", "v1", "configmaps").unwrap();
    for i in 0..2_500 {
        sim.state
            .store
            .create(cms, json!({"metadata": {"name": format!("cm-{i:04}"), "namespace": "default"}}))
            .unwrap();
    }
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let request = axum::http::Request::builder()
        .uri("/api/v1/configmaps")
        .header("accept", accept)
        .body(Body::empty())
        .unwrap();
    let response = sim.request(request).await;
    let table: Value =
        serde_json::from_slice(&axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap())
            .unwrap();
    let names: Vec<&str> =
        table["rows"].as_array().unwrap().iter().map(|row| row["cells"][0].as_str().unwrap()).collect();
    let expected: Vec<String> = (0..2_500).map(|i| format!("cm-{i:04}")).collect();
    assert_eq!(names, expected);
}

/// `lab-runner sim up`, writes acknowledged over HTTPS, `kill -9` of the server, `sim up`
/// again: every acknowledged write is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_served_simulator_keeps_acknowledged_writes_across_kill_9() {
    let dir = tempfile::tempdir().unwrap();
    let sim = |args: &[&str]| {
        crate::support::binary::lab_runner()
            .arg("sim")
            .args(args)
            .arg("--state-dir")
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let client = || async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(dir.path().join("kubeconfig")).unwrap(),
            &Default::default(),
        )
        .await
        .unwrap();
        kube::Client::try_from(config).unwrap()
    };
    let up = sim(&["up", "--nodes", "1"]);
    assert!(up.status.success(), "{}", crate::support::binary::stderr(&up));
    let cms: Api<ConfigMap> = Api::default_namespaced(client().await);
    for i in 0..50 {
        cms.create(&PostParams::default(), &config_map(&format!("acked-{i}"), &[])).await.unwrap();
    }
    let pid = std::fs::read_to_string(dir.path().join("sim.pid")).unwrap().trim().to_string();
    let killed = std::process::Command::new("kill").args(["-9", &pid]).status().unwrap();
    assert!(killed.success());
    // The process is gone once its pid no longer answers signal 0 (bounded: an unreaped zombie
    // keeps answering, but holds no socket or file lock any more).
    for _ in 0..100 {
        let mut probe = std::process::Command::new("kill");
        probe.args(["-0", &pid]).stderr(std::process::Stdio::null());
        if !probe.status().unwrap().success() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = sim(&["status"]); // reports and removes the stale pid file
    let again = sim(&["up"]);
    assert!(again.status.success(), "{}", crate::support::binary::stderr(&again));
    let cms: Api<ConfigMap> = Api::default_namespaced(client().await);
    let names: Vec<String> = cms
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.metadata.name.unwrap())
        .collect();
    let _ = sim(&["down"]);
    for i in 0..50 {
        assert!(names.contains(&format!("acked-{i}")), "acked-{i} survived kill -9: {names:?}");
    }
}

#[tokio::test]
async fn field_validation_and_managed_fields_on_writes() {
    let sim = Harness::start();
    let body = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typo"},"data":{"a":"1"},"dataa":{"a":"1"}}"#;
    let (code, status) = sim
        .call(
            "POST",
            "/api/v1/namespaces/default/configmaps?fieldValidation=Strict",
            Some("application/json"),
            body,
        )
        .await;
    assert_eq!(code, 400);
    assert_eq!(
        status["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"dataa\""
    );
    // The default (Warn) stores the object without the unknown field and says so in a header.
    let request =
        axum::http::Request::post("/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create")
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap();
    let response = sim.request(request).await;
    assert_eq!(response.status(), 201);
    assert_eq!(response.headers()["warning"], "299 - \"unknown field \\\"dataa\\\"\"");
    let stored: Value =
        serde_json::from_slice(&axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap())
            .unwrap();
    assert!(stored.get("dataa").is_none());
    assert_eq!(stored["metadata"]["managedFields"][0]["manager"], "kubectl-create");
    assert_eq!(stored["metadata"]["managedFields"][0]["operation"], "Update");
}

/// Table rows are cached per object revision (issue #17): a second list answers from the cache
/// with ages counted from that request, and a changed object gets a fresh row; twenty table
/// watchers sharing the cached rows each see the change.
#[tokio::test]
async fn cached_table_rows_follow_the_revision_and_the_clock() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    cms.create(&PostParams::default(), &config_map("a", &[])).await.unwrap();
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let table = || async {
        let request = axum::http::Request::builder()
            .uri("/api/v1/namespaces/default/configmaps")
            .header("accept", accept)
            .body(Body::empty())
            .unwrap();
        let response = sim.request(request).await;
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        serde_json::from_slice::<Value>(&bytes).unwrap()
    };
    let first = table().await;
    assert_eq!(first["rows"][0]["cells"], json!(["a", 1, "0s"]));
    sim.state.clock.advance(k8s_openapi::jiff::SignedDuration::from_secs(303));
    let later = table().await;
    assert_eq!(later["rows"][0]["cells"], json!(["a", 1, "5m3s"]), "the cached row's age moves on");

    let revision = sim.state.store.revision();
    let uri = format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={revision}");
    let mut watchers = Vec::new();
    for _ in 0..20 {
        let request =
            axum::http::Request::builder().uri(&uri).header("accept", accept).body(Body::empty()).unwrap();
        let response = sim.request(request).await;
        watchers.push(Box::pin(
            response
                .into_body()
                .into_data_stream()
                .map(|c| serde_json::from_slice::<Value>(&c.unwrap()).unwrap()),
        ));
    }
    let mut changed = config_map("a", &[]);
    changed.data = Some([("k".to_string(), "v".to_string()), ("k2".to_string(), "w".to_string())].into());
    cms.replace("a", &PostParams::default(), &changed).await.unwrap();
    for events in &mut watchers {
        let event = next(events).await;
        assert_eq!(event["type"], "MODIFIED");
        assert_eq!(event["object"]["rows"][0]["cells"], json!(["a", 2, "5m3s"]));
    }
    assert_eq!(table().await["rows"][0]["cells"], json!(["a", 2, "5m3s"]), "a new revision, a new row");
}

/// Watchers of one type share each event's encoding and still see their own selector's view:
/// a watcher whose selector the change leaves gets `DELETED`, the others the stored `MODIFIED`.
#[tokio::test]
async fn shared_watch_encoding_keeps_each_watchers_selector_view() {
    let sim = Harness::start();
    let cms: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    cms.create(&PostParams::default(), &config_map("a", &[("tier", "gpu")])).await.unwrap();
    let revision = sim.state.store.revision();
    let base = format!("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={revision}");
    let mut all = sim.watch_lines(&base).await;
    let mut all_again = sim.watch_lines(&base).await;
    let gpu_uri = format!("{base}&labelSelector=tier%3Dgpu");
    let mut gpu = sim.watch_lines(&gpu_uri).await;
    let other_uri =
        format!("/api/v1/namespaces/kube-system/configmaps?watch=true&resourceVersion={revision}");
    let mut other_namespace = sim.watch_lines(&other_uri).await;
    cms.replace("a", &PostParams::default(), &config_map("a", &[("tier", "cpu")])).await.unwrap();
    let (one, two, left) = (next(&mut all).await, next(&mut all_again).await, next(&mut gpu).await);
    assert_eq!(one, two);
    assert_eq!(
        (one["type"].as_str(), one["object"]["metadata"]["labels"]["tier"].as_str()),
        (Some("MODIFIED"), Some("cpu"))
    );
    assert_eq!(left["type"], "DELETED");
    let nothing = tokio::time::timeout(Duration::from_millis(200), other_namespace.next()).await;
    assert!(nothing.is_err(), "another namespace's watcher gets nothing: {nothing:?}");
}

/// POSTs `object` to `uri` and returns what the server created (201 required).
async fn created(sim: &Harness, uri: &str, object: Value) -> Value {
    let (code, created) = sim.call("POST", uri, Some("application/json"), object.to_string()).await;
    assert_eq!(code, 201, "{created}");
    created
}

/// The ConfigMap `default/settings` (`k: v`), created.
async fn create_settings(sim: &Harness) -> Value {
    let settings = json!({"metadata": {"name": "settings"}, "data": {"k": "v"}});
    created(sim, "/api/v1/namespaces/default/configmaps", settings).await
}

/// DELETE answers as `Store.finalizeDelete` does (k8s.io/apiserver/pkg/registry/generic/registry/
/// store.go): a kind without `ReturnDeletedObject` (ConfigMap, StatefulSet) gets a `Status`
/// naming what went; a pod (`ReturnDeletedObject: true`) comes back as itself.
#[tokio::test]
async fn delete_answers_a_status_unless_the_kind_returns_the_deleted_object() {
    let sim = Harness::start();
    let settings = create_settings(&sim).await;
    let (code, body) =
        sim.call("DELETE", "/api/v1/namespaces/default/configmaps/settings", None, Body::empty()).await;
    assert_eq!(code, 200);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
               "details": {"name": "settings", "kind": "configmaps", "uid": settings["metadata"]["uid"]}})
    );
    let sts = json!({"metadata": {"name": "db"}, "spec": {"selector": {"matchLabels": {"app": "db"}},
        "template": {"metadata": {"labels": {"app": "db"}}, "spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}}}});
    let db = created(&sim, "/apis/apps/v1/namespaces/default/statefulsets", sts).await;
    let (_, body) =
        sim.call("DELETE", "/apis/apps/v1/namespaces/default/statefulsets/db", None, Body::empty()).await;
    assert_eq!(
        body["details"],
        json!({"name": "db", "group": "apps", "kind": "statefulsets", "uid": db["metadata"]["uid"]})
    );
    created(&sim, "/api/v1/namespaces/default/pods", serde_json::to_value(pod("lonely").build()).unwrap())
        .await;
    let (_, body) = sim.call("DELETE", "/api/v1/namespaces/default/pods/lonely", None, Body::empty()).await;
    assert_eq!((body["kind"].as_str(), body["metadata"]["name"].as_str()), (Some("Pod"), Some("lonely")));
    // pkg/registry/core/persistentvolumeclaim/storage/storage.go: `ReturnDeletedObject: true`.
    let claim = json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
        "resources": {"requests": {"storage": "1Gi"}}}});
    created(&sim, "/api/v1/namespaces/default/persistentvolumeclaims", claim).await;
    let (_, body) = sim
        .call("DELETE", "/api/v1/namespaces/default/persistentvolumeclaims/data", None, Body::empty())
        .await;
    assert_eq!(
        (body["kind"].as_str(), body["metadata"]["name"].as_str()),
        (Some("PersistentVolumeClaim"), Some("data"))
    );
}

/// `componentstatuses` (pkg/registry/core/componentstatus/rest.go): computed, listed and read
/// by name, each answer with the deprecation warning; another name is a plain 500.
#[tokio::test]
async fn component_statuses_answer_healthy_with_the_deprecation_warning() {
    let sim = Harness::start();
    let get = |uri: &'static str| {
        let sim = sim.clone();
        async move {
            let response = sim.request(axum::http::Request::get(uri).body(Body::empty()).unwrap()).await;
            let warning = response.headers().get("warning").map(|v| v.to_str().unwrap().to_string());
            let code = response.status().as_u16();
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (code, warning, serde_json::from_slice::<Value>(&bytes).unwrap())
        }
    };
    let (code, warning, list) = get("/api/v1/componentstatuses").await;
    assert_eq!(code, 200);
    assert_eq!(warning.as_deref(), Some(r#"299 - "v1 ComponentStatus is deprecated in v1.19+""#));
    assert_eq!(list["kind"], "ComponentStatusList");
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().map(|i| i["metadata"]["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    let (_, warning, etcd) = get("/api/v1/componentstatuses/etcd-0").await;
    assert!(warning.is_some());
    assert_eq!(etcd["conditions"], json!([{"type": "Healthy", "status": "True", "message": "ok"}]));
    // componentstatus/rest.go `List` applies the selectors: no status carries a label.
    let (_, _, labelled) = get("/api/v1/componentstatuses?labelSelector=lab-runner.io%2Flab%3Dx").await;
    assert_eq!(labelled["items"], json!([]));
    let (_, _, named) = get("/api/v1/componentstatuses?fieldSelector=metadata.name%3Dscheduler").await;
    assert_eq!(named["items"].as_array().unwrap().len(), 1);
    let (code, _, missing) = get("/api/v1/componentstatuses/kubelet").await;
    assert_eq!((code, missing["message"].as_str()), (500, Some("Component not found: kubelet")));
}

/// `includeObject` on a Table list (apimachinery `IncludeObjectPolicy`): `Object` puts the whole
/// object in each row — what `kubectl get --sort-by=.lastTimestamp` sorts on — `None` leaves it
/// out, the default carries `PartialObjectMetadata`.
#[tokio::test]
async fn table_rows_carry_the_object_include_object_asks_for() {
    let sim = Harness::start();
    create_settings(&sim).await;
    let table = |include: &'static str| {
        let sim = sim.clone();
        async move {
            let uri = format!("/api/v1/namespaces/default/configmaps{include}");
            let request = axum::http::Request::get(uri)
                .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
                .body(Body::empty())
                .unwrap();
            let response = sim.request(request).await;
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            serde_json::from_slice::<Value>(&bytes).unwrap()
        }
    };
    let whole = table("?includeObject=Object").await;
    let row = &whole["rows"][0];
    assert_eq!(
        (row["object"]["kind"].as_str(), &row["object"]["data"]),
        (Some("ConfigMap"), &json!({"k": "v"}))
    );
    assert_eq!(table("").await["rows"][0]["object"]["kind"], json!("PartialObjectMetadata"));
    assert!(table("?includeObject=None").await["rows"][0].get("object").is_none());
}
