//! Controller benchmark: a DaemonSet rollout with `maxUnavailable: 10%` on the manual clock.
//!
//! Run with `cargo bench -p lab-runner-sim --bench controllers`. For 100 and 1,000 nodes, and for 1,000 nodes
//! already running 10,000 pods in the DaemonSet's namespace (issue #17), it reports the wall time
//! of scheduling and starting those pods, of the initial rollout and of the image update rollout
//! (to `updated == available == desired`), the store change events the controllers consumed,
//! and the wall time per event.

use std::{sync::Arc, time::Instant};

use k8s_openapi::jiff::Timestamp;
use lab_runner_sim::{
    clock::Clock,
    controllers::{Config, Controllers},
    resources,
    server::{self, SimState},
    store::{DryRun, Store, Subresource},
};
use serde_json::{Value, json};

struct Figures {
    nodes: usize,
    filler: usize,
    fill_wall: f64,
    create_wall: f64,
    rollout_wall: f64,
    rollout_events: u64,
    rollout_steps: u64,
}

fn status(state: &SimState) -> Value {
    let types = resources::built_in();
    let ds = resources::find(&types, "apps", "v1", "daemonsets").unwrap();
    state.store.get_value(ds, "default", "agent").unwrap()["status"].clone()
}

fn done(state: &SimState, nodes: usize, generation: i64) -> bool {
    let status = status(state);
    let n = |field: &str| status[field].as_i64().unwrap_or(0) as usize;
    status["observedGeneration"].as_i64() == Some(generation)
        && n("desiredNumberScheduled") == nodes
        && n("updatedNumberScheduled") == nodes
        && n("numberAvailable") == nodes
}

fn run_until_done(control: &mut Controllers, state: &SimState, nodes: usize, generation: i64) {
    control.settle().unwrap();
    while !done(state, nodes, generation) {
        control.advance_to_next_event().unwrap().expect("the rollout has work scheduled");
    }
}

fn running_pods(state: &SimState) -> usize {
    let running = |stored: &lab_runner_sim::store::Stored| stored.json.contains("\"phase\":\"Running\"");
    state.store.list("pods", Some("default"), &running, None, None).items.len()
}

fn measure(nodes: usize, filler: usize) -> Figures {
    let clock = Clock::manual("2026-01-01T00:00:00Z".parse::<Timestamp>().unwrap());
    let state = Arc::new(SimState::new(Store::in_memory().unwrap(), clock));
    server::ensure_system_namespaces(&state).unwrap();
    let types = resources::built_in();
    let node_type = resources::find(&types, "", "v1", "nodes").unwrap();
    let ds_type = resources::find(&types, "apps", "v1", "daemonsets").unwrap();
    for i in 0..nodes {
        let allocatable = json!({"cpu": "8", "memory": "32Gi", "pods": "110"});
        state
            .store
            .create(
                node_type,
                json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": format!("node-{i:04}")},
                       "status": {"capacity": allocatable, "allocatable": allocatable,
                                  "addresses": [{"type": "InternalIP", "address": format!("10.1.{}.{}", i / 250, i % 250)}]}}),
            )
            .unwrap();
    }
    let mut control = Controllers::new(state.clone(), Config::defaults()).unwrap();
    control.settle().unwrap();
    // Pods the scheduler places and the kubelets start, in the DaemonSet's namespace.
    let pod_type = resources::find(&types, "", "v1", "pods").unwrap();
    let started = Instant::now();
    for i in 0..filler {
        let pod = json!({"apiVersion": "v1", "kind": "Pod",
                         "metadata": {"name": format!("filler-{i:05}"), "namespace": "default", "labels": {"app": "filler"}},
                         "spec": {"containers": [{"name": "main", "image": "nginx:1.27",
                                                  "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}}}]}});
        state.store.create(pod_type, pod).unwrap();
    }
    control.settle().unwrap();
    while running_pods(&state) < filler {
        control.advance_to_next_event().unwrap().expect("the pods have work scheduled");
    }
    let fill_wall = started.elapsed().as_secs_f64();
    let ds = json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "agent", "namespace": "default"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "10%", "maxSurge": 0}},
            "template": {"metadata": {"labels": {"app": "agent"}},
                         "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]}},
        },
    });
    let started = Instant::now();
    state.store.create(ds_type, ds).unwrap();
    run_until_done(&mut control, &state, nodes, 1);
    let create_wall = started.elapsed().as_secs_f64();

    let before = control.stats();
    let started = Instant::now();
    let mut ds = state.store.get_value(ds_type, "default", "agent").unwrap();
    ds["spec"]["template"]["spec"]["containers"][0]["image"] = json!("busybox:1.37");
    state.store.update(ds_type, ds, Subresource::Main, DryRun::Off).unwrap();
    run_until_done(&mut control, &state, nodes, 2);
    let rollout_wall = started.elapsed().as_secs_f64();
    let after = control.stats();
    Figures {
        nodes,
        filler,
        fill_wall,
        create_wall,
        rollout_wall,
        rollout_events: after.events_seen - before.events_seen,
        rollout_steps: after.steps - before.steps,
    }
}

fn main() {
    println!("DaemonSet rollout, maxUnavailable 10%, manual clock");
    println!(
        "{:>6} {:>7} {:>9} {:>12} {:>13} {:>8} {:>7} {:>15}",
        "nodes", "pods", "fill (s)", "create (s)", "rollout (s)", "events", "steps", "per event (µs)"
    );
    for (nodes, filler) in [(100, 0), (1000, 0), (1000, 10_000)] {
        let f = measure(nodes, filler);
        println!(
            "{:>6} {:>7} {:>9.3} {:>12.3} {:>13.3} {:>8} {:>7} {:>15.1}",
            f.nodes,
            f.filler,
            f.fill_wall,
            f.create_wall,
            f.rollout_wall,
            f.rollout_events,
            f.rollout_steps,
            f.rollout_wall * 1e6 / f.rollout_events.max(1) as f64
        );
    }
}
