//! Discovery: `/version`, `/api`, `/apis` (legacy and aggregated v2) and group-version documents.
//!
//! (Skeleton: filled in by the simulated cluster A work.)

use axum::Router;

use super::AppState;

/// Discovery routes.
pub fn routes() -> Router<AppState> {
    Router::new()
}
