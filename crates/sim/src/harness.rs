//! An in-process simulator for tests: state on an in-memory (or file) store, a manual clock, a `kube::Client` speaking to the router directly, no socket.
//!
//! The simulator's test fixtures live here once, for its unit tests and the integration tests
//! alike (the `test-support` feature): [`rt`] names a built-in resource type, [`Cluster`] runs
//! the controllers on the manual clock; object builders are in `k8s::testing`.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! let sim = lab_runner_sim::harness::Harness::start();
//! let api: kube::Api<ConfigMap> = kube::Api::default_namespaced(sim.client.clone());
//! assert!(api.list(&Default::default()).await?.items.is_empty());
//! # Ok(()) }
//! ```

use std::{path::Path, sync::Arc};

use axum::{Router, body::Body, response::Response};
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::Value;
use tower::ServiceExt;

use super::{
    clock::Clock,
    controllers::{Config, Controllers},
    resources::{self, ResourceType},
    server::{self, AppState, SimState},
    store::{self, DeleteOptions, DryRun, Propagation, Store, Stored, Subresource},
    topology::{Topology, seed_objects},
};

/// Where the manual clock of a harness starts.
pub const START: &str = "2026-01-01T00:00:00Z";

/// A running in-process simulator.
#[derive(Clone)]
pub struct Harness {
    /// The shared state (store, types, clock) for direct inspection.
    pub state: AppState,
    /// A client whose requests go straight into the router.
    pub client: kube::Client,
}

impl Harness {
    /// A simulator on an in-memory store with a manual clock at [`START`] and the system
    /// namespaces. Must be called inside a tokio runtime (the client spawns its buffer task).
    pub fn start() -> Harness {
        Harness::with_store(Store::in_memory().expect("in-memory SQLite opens"))
    }

    /// A simulator whose store lives in the file `path` (created or reopened).
    pub fn on_file(path: &Path) -> store::Result<Harness> {
        Ok(Harness::with_store(Store::open(path)?))
    }

    /// A simulator on `store`, with a manual clock at [`START`].
    pub fn with_store(store: Store) -> Harness {
        let clock = Clock::manual(START.parse::<Timestamp>().expect("valid start time"));
        Harness::with_state(SimState::new(store, clock))
    }

    /// A simulator on prepared state (e.g. a short bookmark interval).
    pub fn with_state(state: SimState) -> Harness {
        server::ensure_system_namespaces(&state).expect("system namespaces are created");
        server::ensure_system_priority_classes(&state).expect("system priority classes are created");
        let state = Arc::new(state);
        let client = kube::Client::new(server::router(state.clone()), "default");
        Harness { state, client }
    }

    /// The router, for raw requests.
    pub fn router(&self) -> Router {
        server::router(self.state.clone())
    }

    /// Sends one raw request through the router (exact wire checks).
    pub async fn request(&self, request: axum::http::Request<Body>) -> Response {
        match self.router().oneshot(request).await {
            Ok(response) => response,
            Err(never) => match never {},
        }
    }

    /// One raw request; returns the status code and the JSON body (a body that is not JSON as
    /// a JSON string).
    pub async fn call(
        &self,
        method: &str,
        uri: &str,
        content_type: Option<&str>,
        body: impl Into<Body>,
    ) -> (u16, Value) {
        let mut request = axum::http::Request::builder().method(method).uri(uri);
        if let Some(content_type) = content_type {
            request = request.header("content-type", content_type);
        }
        let response = self.request(request.body(body.into()).expect("a valid request")).await;
        let code = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.expect("the body is read");
        (
            code,
            serde_json::from_slice(&bytes).unwrap_or_else(|_| Value::from(String::from_utf8_lossy(&bytes))),
        )
    }

    /// Opens a watch (`uri` with `watch=true`) and returns its events as they arrive, one
    /// parsed line each; panics unless the answer is a 200 JSON stream.
    pub async fn watch_lines(&self, uri: &str) -> impl futures::Stream<Item = Value> + Unpin + use<> {
        use futures::StreamExt;
        let request = axum::http::Request::builder().uri(uri).body(Body::empty()).expect("a valid request");
        let response = self.request(request).await;
        assert_eq!(response.status(), 200, "{uri}");
        assert_eq!(response.headers()["content-type"], "application/json");
        let chunks = response.into_body().into_data_stream();
        // Events are newline-delimited; one may arrive in several chunks (an initial object is
        // sent as its stored text between a head and a tail), but a flush's last chunk ends a line.
        let lines = futures::stream::unfold((chunks, Vec::new()), |(mut chunks, mut pending)| async move {
            loop {
                if let Some(end) = pending.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    let event = serde_json::from_slice::<Value>(&line).expect("a watch line is JSON");
                    return Some((event, (chunks, pending)));
                }
                let chunk = chunks.next().await?.expect("the stream reads");
                pending.extend_from_slice(&chunk);
            }
        });
        Box::pin(lines)
    }
}

/// The built-in resource type `resource` names: `plural.group` as kubectl spells it
/// (`daemonsets.apps`, `events.events.k8s.io`), or a bare plural for the core group's type, else
/// the one built-in type with that plural (`daemonsets`, `jobs`). Panics on an unknown name.
pub fn rt(resource: &str) -> ResourceType {
    let types = resources::built_in();
    let exact = types.iter().find(|t| t.group_resource() == resource);
    let by_plural = || {
        let mut named = types.iter().filter(|t| t.plural == resource);
        match (named.next(), named.next()) {
            (Some(only), None) => Some(only),
            _ => None,
        }
    };
    exact.or_else(by_plural).unwrap_or_else(|| panic!("no single built-in resource type {resource}")).clone()
}

/// A simulator with its controllers on the manual clock: the fixture of the controller tests.
/// Reads and writes go straight to the store (no admission), as the controllers' own do.
pub struct Cluster {
    /// The simulator, for API requests and direct inspection.
    pub sim: Harness,
    /// The controllers, advanced by [`Cluster::run_for`] and [`Cluster::settle`].
    pub control: Controllers,
}

impl Cluster {
    /// A fresh simulator holding `nodes` (e.g. `k8s::testing::node(..).json()`), with the
    /// controllers' default configuration.
    pub fn new(nodes: Vec<Value>) -> Cluster {
        let sim = Harness::start();
        for node in nodes {
            sim.state.store.create(&rt("nodes"), node).expect("the node is stored");
        }
        let control = Controllers::new(sim.state.clone(), Config::defaults()).expect("controllers start");
        Cluster { sim, control }
    }

    /// A fresh simulator seeded with `topology`'s nodes and add-ons, configured from it.
    pub fn from_topology(topology: &Topology) -> Cluster {
        let sim = Harness::start();
        let types = resources::built_in();
        for seed in seed_objects(topology, sim.state.clock.now()) {
            let rt =
                resources::find(&types, seed.group, "v1", seed.plural).expect("seeds are built-in types");
            let metadata = &seed.object["metadata"];
            let (namespace, name) =
                (metadata["namespace"].as_str().unwrap_or(""), metadata["name"].as_str().unwrap_or(""));
            if sim.state.store.get(&rt.group_resource(), namespace, name).is_none() {
                sim.state.store.create(rt, seed.object).expect("the seed object is stored");
            }
        }
        let config = Config::from_topology(topology).expect("the topology configures the controllers");
        let control = Controllers::new(sim.state.clone(), config).expect("controllers start");
        Cluster { sim, control }
    }

    /// Advances the manual clock by `seconds`, running every controller due on the way.
    pub fn run_for(&mut self, seconds: i64) {
        self.control.advance(SignedDuration::from_secs(seconds)).expect("the controllers run");
    }

    /// Runs the controllers until nothing changes, without moving the clock.
    pub fn settle(&mut self) {
        self.control.settle().expect("the controllers settle");
    }

    /// Stores `object` as a `resource`; the stored object.
    pub fn create(&self, resource: &str, object: Value) -> Value {
        self.sim.state.store.create(&rt(resource), object).expect("the object is stored")
    }

    /// The stored `resource` `namespace/name` (`""` for cluster-scoped), if any.
    pub fn find(&self, resource: &str, namespace: &str, name: &str) -> Option<Value> {
        self.sim.state.store.get_value(&rt(resource), namespace, name).ok()
    }

    /// The stored `resource` `namespace/name`; panics when it is missing.
    pub fn get(&self, resource: &str, namespace: &str, name: &str) -> Value {
        self.find(resource, namespace, name).unwrap_or_else(|| panic!("{resource} {namespace}/{name} exists"))
    }

    /// Rewrites `resource` `namespace/name` with `edit` (the whole object, status included).
    pub fn change(&self, resource: &str, namespace: &str, name: &str, edit: impl FnOnce(&mut Value)) {
        let mut value = self.get(resource, namespace, name);
        edit(&mut value);
        let store = &self.sim.state.store;
        store.update(&rt(resource), value, Subresource::Main, DryRun::Off).expect("the object is updated");
    }

    /// Deletes `resource` `namespace/name` with `propagation` (the kind's default if `None`).
    pub fn delete(&self, resource: &str, namespace: &str, name: &str, propagation: Option<Propagation>) {
        let options = DeleteOptions { propagation, ..Default::default() };
        self.sim.state.store.delete(&rt(resource), namespace, name, &options).expect("the object is deleted");
    }

    /// Every stored `group_resource` (`pods`, `jobs.batch`) in `namespace` (all if `None`).
    pub fn list(&self, group_resource: &str, namespace: Option<&str>) -> Vec<Value> {
        let all = |_: &Stored| true;
        let page = self.sim.state.store.list(group_resource, namespace, &all, None, None);
        page.items.iter().map(|stored| stored.value().expect("stored JSON parses")).collect()
    }
}
