//! What probes and scrapers read: `/livez`, `/readyz`, `/healthz` and `/metrics`.
//!
//! The health endpoints answer as apiserver's `pkg/server/healthz/healthz.go` does: `ok`, or
//! with `?verbose` one `[+]<check> ok` line per check and `<endpoint> check passed`; a failed
//! check is `[-]<check> failed: reason withheld` and `500 … check failed`; `?exclude=<check>`
//! (repeatable) skips a check (`[+]<check> excluded: ok`, and a `warn:` line for a name no check
//! has); `/<endpoint>/<check>` runs one check (`ok`, or `500 internal server error: <reason>`).
//! The checks are the simulator's counterparts of upstream's: `ping`; `etcd` (and, for
//! readiness, `etcd-readiness`), a read from the store's database within upstream's 2 s
//! (`--etcd-healthcheck-timeout`, `--etcd-readycheck-timeout`); the post-start hook that
//! creates the system PriorityClasses; and, for readiness, `shutdown`, failing once the server
//! has begun to stop. (Upstream's `log` check watches klog's flushing, which the simulator
//! does not have.)

use std::{
    sync::atomic::{AtomicBool, Ordering},
    time::Duration,
};

use axum::{
    Router,
    extract::{Path, State},
    http::{HeaderValue, StatusCode, Uri, header},
    response::{IntoResponse, Response},
    routing::get,
};

use super::AppState;

/// What the checks read besides the store.
#[derive(Debug, Default)]
pub struct Health {
    /// The post-start hook that creates the system PriorityClasses has run.
    pub priority_classes_bootstrapped: AtomicBool,
    /// The server has begun to stop.
    pub shutting_down: AtomicBool,
}

/// How long the store may take to answer a health check.
const STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// One health check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    Ping,
    Etcd,
    EtcdReadiness,
    PriorityClasses,
    Shutdown,
}

impl Check {
    fn name(self) -> &'static str {
        match self {
            Check::Ping => "ping",
            Check::Etcd => "etcd",
            Check::EtcdReadiness => "etcd-readiness",
            Check::PriorityClasses => "poststarthook/scheduling/bootstrap-system-priority-classes",
            Check::Shutdown => "shutdown",
        }
    }

    async fn run(self, state: &AppState) -> Result<(), String> {
        match self {
            Check::Ping => Ok(()),
            Check::Etcd | Check::EtcdReadiness => {
                let state = state.clone();
                let ping = tokio::task::spawn_blocking(move || state.store.ping().map_err(|e| e.to_string()));
                match tokio::time::timeout(STORE_TIMEOUT, ping).await {
                    Ok(Ok(answer)) => answer,
                    Ok(Err(error)) => Err(error.to_string()),
                    Err(_) => Err(format!("the store did not answer within {STORE_TIMEOUT:?}")),
                }
            }
            Check::PriorityClasses => {
                match state.health.priority_classes_bootstrapped.load(Ordering::Acquire) {
                    true => Ok(()),
                    false => Err("not finished".into()),
                }
            }
            Check::Shutdown => match state.health.shutting_down.load(Ordering::Acquire) {
                true => Err("process is shutting down".into()),
                false => Ok(()),
            },
        }
    }
}

/// The three health endpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Endpoint {
    Healthz,
    Livez,
    Readyz,
}

impl Endpoint {
    fn name(self) -> &'static str {
        match self {
            Endpoint::Healthz => "healthz",
            Endpoint::Livez => "livez",
            Endpoint::Readyz => "readyz",
        }
    }

    /// Its checks, in upstream's order.
    fn checks(self) -> &'static [Check] {
        match self {
            Endpoint::Healthz | Endpoint::Livez => &[Check::Ping, Check::Etcd, Check::PriorityClasses],
            Endpoint::Readyz => {
                &[Check::Ping, Check::Etcd, Check::EtcdReadiness, Check::PriorityClasses, Check::Shutdown]
            }
        }
    }
}

/// A text answer with the headers Go's `http.Error` and the healthz handler set.
fn text(code: StatusCode, body: String) -> Response {
    let mut response = (code, body).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// healthz.go `handleRootHealth`.
async fn root(state: AppState, endpoint: Endpoint, uri: Uri) -> Response {
    let pairs =
        axum::extract::Query::<Vec<(String, String)>>::try_from_uri(&uri).map(|q| q.0).unwrap_or_default();
    let verbose = pairs.iter().any(|(key, _)| key == "verbose");
    let mut excluded: std::collections::BTreeSet<String> =
        pairs.into_iter().filter(|(key, _)| key == "exclude").map(|(_, value)| value).collect();
    let mut output = String::new();
    let mut failed = false;
    for check in endpoint.checks() {
        if excluded.remove(check.name()) {
            output.push_str(&format!("[+]{} excluded: ok\n", check.name()));
            continue;
        }
        match check.run(&state).await {
            Ok(()) => output.push_str(&format!("[+]{} ok\n", check.name())),
            Err(_) => {
                // The reason stays out of an endpoint anyone may read.
                output.push_str(&format!("[-]{} failed: reason withheld\n", check.name()));
                failed = true;
            }
        }
    }
    if !excluded.is_empty() {
        let names: Vec<String> = excluded.iter().map(|name| format!("{name:?}")).collect();
        output.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            names.join(",")
        ));
    }
    let name = endpoint.name();
    if failed {
        return text(StatusCode::INTERNAL_SERVER_ERROR, format!("{output}{name} check failed\n"));
    }
    if !verbose {
        return text(StatusCode::OK, "ok".into());
    }
    text(StatusCode::OK, format!("{output}{name} check passed\n"))
}

/// healthz.go `adaptCheckToHandler`: one check at `/<endpoint>/<check>`.
async fn one(state: AppState, endpoint: Endpoint, name: &str) -> Response {
    let Some(check) = endpoint.checks().iter().find(|check| check.name() == name) else {
        return super::status::ApiError::no_such_resource().into_response();
    };
    match check.run(&state).await {
        Ok(()) => text(StatusCode::OK, "ok".into()),
        Err(reason) => text(StatusCode::INTERNAL_SERVER_ERROR, format!("internal server error: {reason}\n")),
    }
}

/// `/metrics`: the simulator's metrics in Prometheus text.
async fn metrics(State(state): State<AppState>) -> Response {
    let rendering = state.clone();
    let rendered = tokio::task::spawn_blocking(move || {
        let objects = rendering.store.count_by_type().unwrap_or_default();
        rendering.metrics.render(&objects)
    })
    .await;
    match rendered {
        Ok(body) => {
            let mut response = (StatusCode::OK, body).into_response();
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(crate::metrics::Metrics::CONTENT_TYPE),
            );
            response
        }
        Err(error) => super::status::ApiError::internal(error.to_string()).into_response(),
    }
}

/// The routes of the health endpoints and `/metrics`.
pub fn routes() -> Router<AppState> {
    let mut router = Router::new().route("/metrics", get(metrics));
    for endpoint in [Endpoint::Healthz, Endpoint::Livez, Endpoint::Readyz] {
        let name = endpoint.name();
        router = router
            .route(
                &format!("/{name}"),
                get(move |State(state): State<AppState>, uri: Uri| root(state, endpoint, uri)),
            )
            .route(
                &format!("/{name}/{{*check}}"),
                get(move |State(state): State<AppState>, Path(check): Path<String>| async move {
                    one(state, endpoint, &check).await
                }),
            );
    }
    router
}
