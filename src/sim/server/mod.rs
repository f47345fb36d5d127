//! The simulator's HTTP surface: an axum router that is also a tower service for `kube::Client`.

use std::sync::{Arc, RwLock};

use axum::Router;

use super::{clock::Clock, resources::ResourceType, store::Store};

pub mod admission;
pub mod discovery;
pub mod fieldvalidation;
pub mod managedfields;
pub mod openapi;
pub mod patch;
pub mod schema;
pub mod table;

/// Everything request handlers share.
#[derive(Debug)]
pub struct SimState {
    /// The object store.
    pub store: Store,
    /// Served resource types: the built-in ones, plus CRDs as they are established.
    pub types: RwLock<Vec<ResourceType>>,
    /// The simulator's clock.
    pub clock: Clock,
}

/// Shared handle to the state, as axum hands it to handlers.
pub type AppState = Arc<SimState>;

/// The whole API surface as one router.
pub fn router(state: AppState) -> Router {
    Router::new().merge(discovery::routes()).merge(openapi::routes()).with_state(state)
}
