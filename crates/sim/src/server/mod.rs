//! The simulator's HTTP surface: an axum router that is also a tower service for `kube::Client`.
//!
//! Discovery has its own routes; every resource path (`/api/v1/…`, `/apis/{group}/{version}/…`)
//! reaches [`api::handle`] as the router's fallback. The router does no authentication: the
//! serving layer wraps it.

pub mod api;
pub mod authz;
pub mod binding;
pub mod checkpoint;
pub mod crd;
pub mod discovery;
pub mod eviction;
pub mod fieldvalidation;
pub mod filters;
pub mod health;
pub mod managedfields;
pub mod openapi;
pub mod patch;
pub mod podlog;
pub mod protobuf;
pub mod request;
pub mod scale;
pub mod schema;
pub mod status;
pub mod table;
pub mod transport;
pub mod typecheck;
pub mod versions;
pub mod watch;
use std::{
    sync::{Arc, RwLock},
    time::Duration,
};

use axum::Router;
use serde_json::json;

use super::{
    clock::Clock,
    resources::{self, ResourceType},
    store::{self, Store},
};

/// Everything request handlers share.
#[derive(Debug)]
pub struct SimState {
    /// The object store.
    pub store: Store,
    /// Served resource types: the built-in ones, plus CRDs as they are established.
    pub types: RwLock<Vec<ResourceType>>,
    /// The simulator's clock.
    pub clock: Clock,
    /// How often a watch with `allowWatchBookmarks=true` gets a BOOKMARK (upstream: about a
    /// minute).
    pub bookmark_interval: Duration,
    /// What the emulated containers logged (`pods/log`).
    pub container_logs: podlog::ContainerLogs,
    /// Saved states of the store by name ([`checkpoint`]).
    pub checkpoints: std::sync::Mutex<std::collections::HashMap<String, store::Checkpoint>>,
    /// What one watcher may hold back before it is closed ([`watch`]).
    pub watch_budget: watch::WatchBudget,
    /// Requests in flight and their bounds ([`filters`]).
    pub in_flight: Arc<filters::InFlight>,
    /// The metrics `/metrics` serves.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// What the health checks look at ([`health`]).
    pub health: health::Health,
}
impl SimState {
    /// State serving the built-in types from `store`, stamped by `clock` (the store is given
    /// the same clock).
    pub fn new(store: Store, clock: Clock) -> SimState {
        let metrics = Arc::new(crate::metrics::Metrics::new());
        SimState {
            store: store.with_clock(clock.clone()).with_metrics(metrics.clone()),
            types: RwLock::new(resources::built_in()),
            clock,
            bookmark_interval: Duration::from_secs(60),
            container_logs: podlog::ContainerLogs::default(),
            checkpoints: Default::default(),
            watch_budget: watch::WatchBudget::default(),
            in_flight: Arc::new(filters::InFlight::default()),
            metrics,
            health: health::Health::default(),
        }
    }

    /// The served `v1` type `plural` of `group` (a subresource handler's own kind, e.g. pods or
    /// poddisruptionbudgets); 404 when it is not served.
    pub fn served_v1(&self, group: &str, plural: &str) -> status::Result<ResourceType> {
        let types = self.types.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        resources::find(&types, group, "v1", plural).cloned().ok_or_else(status::ApiError::no_such_resource)
    }
}
/// Shared handle to the state, as axum hands it to handlers.
pub type AppState = Arc<SimState>;
/// The namespaces every cluster starts with.
pub const SYSTEM_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];
/// Creates the [`SYSTEM_NAMESPACES`] that do not exist yet (idempotent; call at every start).
pub fn ensure_system_namespaces(state: &SimState) -> store::Result<()> {
    let namespaces =
        resources::built_in().into_iter().find(|t| t.plural == "namespaces").expect("namespaces type");
    for name in SYSTEM_NAMESPACES {
        if state.store.get("namespaces", "", name).is_none() {
            state.store.create(
                &namespaces,
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
            )?;
        }
    }
    Ok(())
}
/// Creates the system PriorityClasses that do not exist yet, as kube-apiserver's
/// `scheduling/bootstrap-system-priority-classes` post-start hook does at every start.
pub fn ensure_system_priority_classes(state: &SimState) -> store::Result<()> {
    let types = state.types.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
    let Some(classes) = types.iter().find(|t| t.plural == "priorityclasses") else { return Ok(()) };
    for (name, value, description) in crate::kinds::scheduling::priorityclass::SYSTEM_PRIORITY_CLASSES {
        if state.store.get(&classes.group_resource(), "", name).is_none() {
            state.store.create(
                classes,
                json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                       "value": value, "description": description}),
            )?;
        }
    }
    state.health.priority_classes_bootstrapped.store(true, std::sync::atomic::Ordering::Release);
    Ok(())
}

/// The whole API surface as one router behind the handler chain's [`filters`], handled on the
/// caller's runtime (in-process clients and tests).
pub fn router(state: AppState) -> Router {
    let routes = api_router(state.clone()).merge(health::routes().with_state(state.clone()));
    with_filters(routes, state)
}

/// The router `sim serve` serves: request handlers run on `handlers`
/// ([`transport::handler_runtime`]), so that no request can keep the serving runtime from
/// answering others; the health endpoints and `/metrics` stay on the serving runtime.
pub fn served_router(state: AppState, handlers: tokio::runtime::Handle) -> Router {
    let handled = transport::Offload::new(api_router(state.clone()), handlers);
    with_filters(health::routes().with_state(state.clone()).fallback_service(handled), state)
}

fn with_filters(router: Router, state: AppState) -> Router {
    router.layer(axum::middleware::from_fn_with_state(state, filters::filter))
}

fn api_router(state: AppState) -> Router {
    Router::new()
        .merge(discovery::routes())
        .merge(openapi::routes())
        .merge(checkpoint::routes())
        .route("/api/v1/namespaces/{namespace}/pods/{name}/log", axum::routing::get(podlog::logs))
        .route(
            "/api/v1/namespaces/{namespace}/pods/{name}/exec",
            axum::routing::get(podlog::exec).post(podlog::exec),
        )
        .route(
            "/api/v1/namespaces/{namespace}/pods/{name}/attach",
            axum::routing::get(podlog::attach).post(podlog::attach),
        )
        .route(
            "/api/v1/namespaces/{namespace}/pods/{name}/portforward",
            axum::routing::get(podlog::port_forward).post(podlog::port_forward),
        )
        .route(
            "/api/v1/namespaces/{namespace}/pods/{name}/ephemeralcontainers",
            axum::routing::get(podlog::ephemeral_containers)
                .patch(podlog::ephemeral_containers)
                .put(podlog::ephemeral_containers),
        )
        .fallback(api::handle)
        .with_state(state)
}
