//! Whole-store checkpoints, a simulator extension `selftest` uses to replay shortcuts cheaply.
//!
//! `POST /lab-runner.io/v1/checkpoints/{name}` saves the state of every object under `name`;
//! `POST /lab-runner.io/v1/checkpoints/{name}/restore` writes it back ([`Store::restore`]: new
//! revisions with their watch events, uids kept), so a state that took a start, a stalled rollout
//! and several solutions to reach comes back in one request. No Kubernetes API server has this;
//! only the admin token may call it (a POST to a non-resource path, which the viewer may not make).
//!
//! [`Store::restore`]: crate::store::Store::restore

use axum::{
    Json, Router,
    extract::{Path, State},
    routing::post,
};
use serde_json::{Value, json};

use super::{
    AppState,
    status::{ApiError, Result},
};

/// Where the checkpoints are served.
pub const PREFIX: &str = "/lab-runner.io/v1/checkpoints";

/// The checkpoint routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route(&format!("{PREFIX}/{{name}}"), post(save))
        .route(&format!("{PREFIX}/{{name}}/restore"), post(restore))
}

async fn save(State(state): State<AppState>, Path(name): Path<String>) -> Result<Json<Value>> {
    let checkpoint = state.store.checkpoint();
    let revision = state.store.revision();
    state
        .checkpoints
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .insert(name.clone(), checkpoint);
    Ok(Json(json!({"name": name, "revision": revision})))
}

async fn restore(State(state): State<AppState>, Path(name): Path<String>) -> Result<Json<Value>> {
    let checkpoint =
        state.checkpoints.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).get(&name).cloned();
    let checkpoint = checkpoint.ok_or_else(|| ApiError::not_found("checkpoints", &name))?;
    let written = state.store.restore(&checkpoint)?;
    Ok(Json(json!({"name": name, "written": written})))
}
