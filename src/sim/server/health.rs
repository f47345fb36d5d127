//! `/healthz`, `/livez` and `/readyz`: the health paths a kubelet's probe or a load balancer asks, answered as kube-apiserver answers them.
//!
//! Upstream (`staging/src/k8s.io/apiserver/pkg/server/healthz/healthz.go`, `handleRootHealth`)
//! answers `ok` as `text/plain; charset=utf-8`, or with `?verbose` one `[+]NAME ok` line per
//! check and `NAME check passed`; each check also has its own path (`/livez/ping`). The
//! simulator has one check, `ping`: its server answers. These paths need no token
//! (`system:public-info-viewer` grants them to `system:unauthenticated`; see [`is_public`]).

use axum::{
    Router,
    extract::{Path, RawQuery},
    http::{HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};

use super::AppState;

/// The health endpoints: `healthz` (deprecated upstream since 1.16, still served), `livez`,
/// `readyz`.
const ENDPOINTS: [&str; 3] = ["healthz", "livez", "readyz"];

/// The health routes.
pub fn routes() -> Router<AppState> {
    let mut router = Router::new();
    for endpoint in ENDPOINTS {
        router = router
            .route(&format!("/{endpoint}"), get(move |query: RawQuery| root(endpoint, query)))
            .route(&format!("/{endpoint}/{{check}}"), get(check));
    }
    router
}

/// Whether `path` is a health path, which anonymous requests may read.
pub fn is_public(path: &str) -> bool {
    let path = path.trim_start_matches('/');
    let endpoint = path.split_once('/').map_or(path, |(endpoint, _)| endpoint);
    ENDPOINTS.contains(&endpoint)
}

fn text(status: StatusCode, body: String) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    response
}

/// `/livez`: `ok`, or with `?verbose` the checks and `livez check passed`.
async fn root(endpoint: &'static str, RawQuery(query): RawQuery) -> Response {
    let verbose = query.unwrap_or_default().split('&').any(|pair| pair.split('=').next() == Some("verbose"));
    match verbose {
        true => text(StatusCode::OK, format!("[+]ping ok\n{endpoint} check passed\n")),
        false => text(StatusCode::OK, "ok".into()),
    }
}

/// `/livez/ping`: `ok`; another check's path is a 404, as upstream's mux has no such path.
async fn check(Path(check): Path<String>) -> Response {
    match check.as_str() {
        "ping" => text(StatusCode::OK, "ok".into()),
        _ => text(StatusCode::NOT_FOUND, "404 page not found\n".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_health_paths_are_public_and_nothing_else_is() {
        for path in ["/healthz", "/livez", "/readyz", "/readyz/ping", "/livez?verbose"] {
            assert!(is_public(path.split('?').next().unwrap()), "{path}");
        }
        for path in ["/version", "/api/v1/namespaces", "/healthzz", "/", "/apis/livez"] {
            assert!(!is_public(path), "{path}");
        }
    }
}
