//! Admission cost per write (`cargo bench -p lab-runner-sim --bench admission`): prints figures, asserts nothing.
//!
//! With 10,000 pods in the store (ten namespaces, a ResourceQuota synced in the one written to),
//! it times creates, updates (PUT) and merge patches of a Pod and of a StatefulSet, each through
//! the registry's write path as the controllers call it (`Store::create`, `Store::update`,
//! `Store::modify`) and through the router as kubectl sends them (decode, field validation,
//! managed fields, then the same registry write). Each figure is the median of `ROUNDS` rounds
//! of `WRITES` writes, in microseconds per write (wall clock), so one noisy round does not move
//! it. Target (issue #29): the per-kind registry costs no more than 10 % more per write.

use std::{sync::Arc, time::Instant};

use axum::body::Body;
use k8s_openapi::jiff::Timestamp;
use lab_runner_sim::{
    clock::Clock,
    resources::{self, ResourceType},
    server::{self, SimState},
    store::{DryRun, Store, Subresource},
};
use serde_json::{Value, json};
use tower::ServiceExt;

const PODS: usize = 10_000;
const NAMESPACES: usize = 10;
const WRITES: usize = 500;
const ROUNDS: usize = 7;
/// The namespace written to: 1,000 of the pods and a quota every pod create is charged to.
const NAMESPACE: &str = "team-0";

fn pod(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {"app": "worker", "pod-template-hash": "5d8f9c7b6"}},
        "spec": {
            "containers": [{
                "name": "main", "image": "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04",
                "command": ["sleep", "infinity"],
                "ports": [{"containerPort": 8080}],
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 1},
                              "limits": {"memory": "1Gi", "nvidia.com/gpu": 1}},
            }],
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        },
    })
}

fn stateful_set(name: &str, namespace: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": namespace, "labels": {"app": name}},
        "spec": {
            "replicas": 3,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{
                    "name": "main", "image": "nginx:1.27", "ports": [{"containerPort": 80}],
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "readinessProbe": {"httpGet": {"path": "/", "port": 80}, "periodSeconds": 5},
                }]},
            },
        },
    })
}

/// The median of `samples`.
fn median(mut samples: Vec<f64>) -> f64 {
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}

/// Microseconds per write of `WRITES` calls of `write(round, i)`: the median over `ROUNDS`.
fn per_write(mut write: impl FnMut(usize, usize)) -> f64 {
    let rounds = (0..ROUNDS)
        .map(|round| {
            let started = Instant::now();
            for i in 0..WRITES {
                write(round, i);
            }
            started.elapsed().as_secs_f64() * 1e6 / WRITES as f64
        })
        .collect();
    median(rounds)
}

/// The same for writes sent through the router.
async fn per_request(
    router: &axum::Router,
    request: impl Fn(usize, usize) -> axum::http::Request<Body>,
) -> f64 {
    let mut rounds = Vec::new();
    for round in 0..ROUNDS {
        let started = Instant::now();
        for i in 0..WRITES {
            let response = router.clone().oneshot(request(round, i)).await.expect("the router answers");
            let status = response.status();
            let body = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("a body");
            assert!(status.is_success(), "{status}: {}", String::from_utf8_lossy(&body));
        }
        rounds.push(started.elapsed().as_secs_f64() * 1e6 / WRITES as f64);
    }
    median(rounds)
}

fn seed(state: &SimState, types: &[ResourceType]) {
    let find = |group: &str, plural: &str| resources::find(types, group, "v1", plural).expect("served type");
    let namespaces = find("", "namespaces");
    for i in 0..NAMESPACES {
        state
            .store
            .create(namespaces, json!({"metadata": {"name": format!("team-{i}")}}))
            .expect("namespace");
    }
    let quotas = find("", "resourcequotas");
    let hard = json!({"pods": "100000", "requests.cpu": "100000", "requests.memory": "100000Gi",
                      "requests.nvidia.com/gpu": "100000", "count/statefulsets.apps": "100000"});
    let quota = state
        .store
        .create(quotas, json!({"metadata": {"name": "team", "namespace": NAMESPACE}, "spec": {"hard": hard}}))
        .expect("quota");
    let mut synced = quota;
    let used = json!({"pods": "0", "requests.cpu": "0", "requests.memory": "0",
                      "requests.nvidia.com/gpu": "0", "count/statefulsets.apps": "0"});
    synced["status"] = json!({"hard": hard, "used": used});
    state.store.update(quotas, synced, Subresource::Status, DryRun::Off).expect("quota status");
    let pods = find("", "pods");
    for i in 0..PODS {
        let namespace = format!("team-{}", i % NAMESPACES);
        state.store.create(pods, pod(&format!("worker-{i:05}"), &namespace)).expect("pod");
    }
}

fn request(method: &str, uri: &str, content_type: &str, body: &Value) -> axum::http::Request<Body> {
    axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .header("accept", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request")
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
    let state = Arc::new(SimState::new(Store::in_memory().expect("store"), Clock::manual(now)));
    server::ensure_system_namespaces(&state).expect("system namespaces");
    server::ensure_system_priority_classes(&state).expect("priority classes");
    let types = resources::built_in();
    let started = Instant::now();
    seed(&state, &types);
    println!("seeded {PODS} pods in {:.2} s", started.elapsed().as_secs_f64());
    let pods = resources::find(&types, "", "v1", "pods").unwrap();
    let sets = resources::find(&types, "apps", "v1", "statefulsets").unwrap();
    let store = &state.store;
    let router = server::router(state.clone());

    println!("µs per write, median of {ROUNDS} rounds of {WRITES} writes, {PODS} pods stored:");
    for (label, rt, make) in [
        ("Pod", pods, pod as fn(&str, &str) -> Value),
        ("StatefulSet", sets, stateful_set as fn(&str, &str) -> Value),
    ] {
        let kind = label.to_lowercase();
        let name = |round: usize, i: usize| format!("{kind}-{round}-{i:04}");
        let create = per_write(|round, i| {
            store.create(rt, make(&name(round, i), NAMESPACE)).expect("create");
        });
        let update = per_write(|round, i| {
            let mut object = store.get_value(rt, NAMESPACE, &name(round, i)).expect("created");
            object["metadata"]["labels"]["round"] = json!(format!("u{i}"));
            store.update(rt, object, Subresource::Main, DryRun::Off).expect("update");
        });
        let patch = per_write(|round, i| {
            store
                .modify(rt, NAMESPACE, &name(round, i), Subresource::Main, DryRun::Off, |current| {
                    let mut object = current.expect("created");
                    object["metadata"]["annotations"] = json!({"bench/patched": format!("p{i}")});
                    Ok::<_, lab_runner_sim::store::Error>(object)
                })
                .expect("patch");
        });
        println!("  {label:<12} registry   create {create:7.1}  update {update:7.1}  patch {patch:7.1}");

        let collection = format!("{}/namespaces/{NAMESPACE}/{}", rt.group_version_path(), rt.plural);
        let http_name = |round: usize, i: usize| format!("http-{kind}-{round}-{i:04}");
        let create = per_request(&router, |round, i| {
            request("POST", &collection, "application/json", &make(&http_name(round, i), NAMESPACE))
        })
        .await;
        let update = per_request(&router, |round, i| {
            let mut object = store.get_value(rt, NAMESPACE, &http_name(round, i)).expect("created");
            object["metadata"]["labels"]["round"] = json!(format!("u{i}"));
            let uri = format!("{collection}/{}", http_name(round, i));
            request("PUT", &uri, "application/json", &object)
        })
        .await;
        let patch = per_request(&router, |round, i| {
            let uri = format!("{collection}/{}", http_name(round, i));
            let body = json!({"metadata": {"annotations": {"bench/patched": format!("p{i}")}}});
            request("PATCH", &uri, "application/merge-patch+json", &body)
        })
        .await;
        println!("  {label:<12} HTTP       create {create:7.1}  update {update:7.1}  patch {patch:7.1}");
    }
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "machine load average while measuring: {}",
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );
}
