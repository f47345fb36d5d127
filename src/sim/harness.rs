//! An in-process simulator for tests: state on an in-memory (or file) store, a manual clock,
//! and a `kube::Client` speaking to the router directly, no socket.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! let sim = lab_runner::sim::harness::Harness::start();
//! let api: kube::Api<ConfigMap> = kube::Api::default_namespaced(sim.client.clone());
//! assert!(api.list(&Default::default()).await?.items.is_empty());
//! # Ok(()) }
//! ```

use std::{path::Path, sync::Arc};

use axum::{Router, body::Body, response::Response};
use k8s_openapi::jiff::Timestamp;
use tower::ServiceExt;

use super::{
    clock::Clock,
    server::{self, AppState, SimState},
    store::{self, Store},
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
}
