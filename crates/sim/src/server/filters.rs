//! The handler chain's filters between authentication and the router, as kube-apiserver's
//! `DefaultBuildHandlerChain` has them: the in-flight limit, the request timeout, long-running
//! requests, and the request metrics.
//!
//! * In flight (apiserver `pkg/server/filters/maxinflight.go` `WithMaxInFlightLimit`): reads
//!   (`get`, `list`, `watch`) and mutations are bounded separately ([`InFlightLimits`], upstream's
//!   `--max-requests-inflight` 400 and `--max-mutating-requests-inflight` 200); past the bound a
//!   request gets `429` with `Retry-After: 1` and `Too many requests, please try again later.`
//!   (`tooManyRequests`). Long-running requests are not counted (kube-apiserver's
//!   `LongRunningFunc`: the verbs `watch` and `proxy`, the subresources `attach`, `exec`,
//!   `proxy`, `log` and `portforward`; `pkg/controlplane/apiserver/config.go`
//!   `BuildGenericConfig`), nor the health probes (the `probes` flow schema of API priority and
//!   fairness puts them at the `exempt` level, `apis/flowcontrol/bootstrap/default.go`).
//! * Timeout (`filters/timeout.go` `WithTimeoutForNonLongRunningRequests`, `--request-timeout`
//!   1 minute): a request that is not long-running and has not answered by then gets `504`
//!   `Timeout: request did not complete within the allotted timeout`.
//! * Metrics ([`crate::metrics`]): every resource request and health check is counted with
//!   upstream's labels (`endpoints/metrics/metrics.go` `CleanVerb`, `CanonicalVerb`,
//!   `CleanScope`) when its response ends, a watch's when its stream ends; long-running requests
//!   are in `apiserver_longrunning_requests` while they run.

use std::{
    pin::Pin,
    sync::{
        Arc,
        atomic::{AtomicUsize, Ordering},
    },
    task::{Context, Poll},
    time::{Duration, Instant},
};

use axum::{
    body::Body,
    extract::{Request, State},
    http::{HeaderValue, Method, StatusCode, header},
    middleware::Next,
    response::{IntoResponse, Response},
};

use super::{AppState, status::ApiError};
use crate::{
    auth::{self, RequestInfo},
    metrics::{Metrics, RequestKind, RequestLabels},
};

/// The bounds of requests in flight, per simulator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlightLimits {
    /// Reads (`get`, `list`, `watch`) in flight at most.
    pub read_only: usize,
    /// Mutations in flight at most.
    pub mutating: usize,
    /// How long a request that is not long-running may take.
    pub request_timeout: Duration,
}

impl Default for InFlightLimits {
    fn default() -> Self {
        InFlightLimits { read_only: 400, mutating: 200, request_timeout: Duration::from_secs(60) }
    }
}

/// Requests in flight now, per kind.
#[derive(Debug, Default)]
pub struct InFlight {
    /// The bounds.
    pub limits: InFlightLimits,
    read_only: AtomicUsize,
    mutating: AtomicUsize,
}

impl InFlight {
    /// No request in flight yet, within `limits`.
    pub fn new(limits: InFlightLimits) -> InFlight {
        InFlight { limits, ..InFlight::default() }
    }

    fn counter(&self, kind: RequestKind) -> (&AtomicUsize, usize) {
        match kind {
            RequestKind::ReadOnly => (&self.read_only, self.limits.read_only),
            RequestKind::Mutating => (&self.mutating, self.limits.mutating),
        }
    }

    /// A slot for a request of `kind`, if one is free.
    fn take(self: &Arc<Self>, kind: RequestKind, metrics: &Arc<Metrics>) -> Option<Slot> {
        let (counter, limit) = self.counter(kind);
        let taken = counter
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| (used < limit).then_some(used + 1));
        let in_use = taken.ok()? + 1;
        metrics.inflight(kind, in_use);
        Some(Slot { in_flight: self.clone(), kind, metrics: metrics.clone() })
    }
}

/// One request's place in flight, given back when it is dropped.
struct Slot {
    in_flight: Arc<InFlight>,
    kind: RequestKind,
    metrics: Arc<Metrics>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let (counter, _) = self.in_flight.counter(self.kind);
        let in_use = counter.fetch_sub(1, Ordering::AcqRel).saturating_sub(1);
        self.metrics.inflight(self.kind, in_use);
    }
}

/// How the chain treats a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Treatment {
    /// A health probe: neither limited nor timed out.
    Probe,
    /// Long-running: not limited, no timeout, tracked while it runs.
    LongRunning,
    /// Limited and timed out, as a read or a mutation.
    Limited(RequestKind),
}

/// Health probes as API priority and fairness's `probes` flow schema matches them.
const PROBES: &[&str] = &["/healthz", "/readyz", "/livez"];

fn treatment(method: &Method, info: &RequestInfo) -> Treatment {
    match info {
        RequestInfo::NonResource { verb, path } if verb == "get" && PROBES.contains(&path.as_str()) => {
            Treatment::Probe
        }
        RequestInfo::NonResource { verb, .. } if verb == "get" || *method == Method::HEAD => {
            Treatment::Limited(RequestKind::ReadOnly)
        }
        RequestInfo::NonResource { .. } => Treatment::Limited(RequestKind::Mutating),
        RequestInfo::Resource { verb, subresource, .. } => {
            if matches!(*verb, "watch" | "proxy")
                || matches!(subresource.as_str(), "attach" | "exec" | "proxy" | "log" | "portforward")
            {
                Treatment::LongRunning
            } else if matches!(*verb, "get" | "list") {
                Treatment::Limited(RequestKind::ReadOnly)
            } else {
                Treatment::Limited(RequestKind::Mutating)
            }
        }
    }
}

/// The metric labels of a request (`None`: not counted, as upstream counts neither discovery
/// nor `/version`).
fn labels(request: &Request, info: &RequestInfo) -> Option<RequestLabels> {
    match info {
        RequestInfo::NonResource { path, .. } if health_path(path) => Some(RequestLabels {
            verb: request.method().as_str().to_string(),
            subresource: path.clone(),
            ..RequestLabels::default()
        }),
        RequestInfo::NonResource { .. } => None,
        RequestInfo::Resource { verb, group, resource, subresource, namespace, name } => {
            // CleanScope.
            let scope = if !name.is_empty() || *verb == "create" {
                "resource"
            } else if !namespace.is_empty() {
                "namespace"
            } else {
                "cluster"
            };
            let method = request.method().as_str().to_ascii_uppercase();
            let apply = request
                .headers()
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v == "application/apply-patch+yaml");
            // CanonicalVerb, then CleanVerb.
            let reported = match method.as_str() {
                _ if *verb == "watch" => "WATCH".to_string(),
                _ if matches!(subresource.as_str(), "attach" | "exec" | "portforward" | "proxy") => {
                    "CONNECT".into()
                }
                "GET" | "HEAD" if scope != "resource" => "LIST".into(),
                "GET" | "HEAD" => "GET".into(),
                "PATCH" if apply => "APPLY".into(),
                other => other.to_string(),
            };
            let dry_run =
                request.uri().query().unwrap_or_default().split('&').any(|pair| pair == "dryRun=All");
            Some(RequestLabels {
                verb: reported,
                dry_run: if dry_run { "All".into() } else { String::new() },
                group: group.clone(),
                version: version_of(request.uri().path()),
                resource: resource.clone(),
                subresource: subresource.clone(),
                scope: scope.to_string(),
            })
        }
    }
}

/// `/healthz`, `/livez`, `/readyz` and their per-check paths.
fn health_path(path: &str) -> bool {
    PROBES
        .iter()
        .any(|probe| path == *probe || path.strip_prefix(probe).is_some_and(|rest| rest.starts_with('/')))
}

/// The API version of a resource path (`/api/v1/…`, `/apis/apps/v1/…`).
pub(crate) fn version_of(path: &str) -> String {
    let mut segments = path.trim_start_matches('/').split('/');
    match (segments.next(), segments.next(), segments.next()) {
        (Some("api"), Some(version), _) => version.to_string(),
        (Some("apis"), Some(_), Some(version)) => version.to_string(),
        _ => String::new(),
    }
}

/// maxinflight.go `tooManyRequests`, written as Go's `http.Error` writes it.
fn too_many_requests() -> Response {
    let mut response =
        (StatusCode::TOO_MANY_REQUESTS, "Too many requests, please try again later.\n").into_response();
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The filters, as a middleware around the router (state: the simulator's).
pub async fn filter(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let info = auth::classify(request.method().as_str(), request.uri().path(), request.uri().query());
    let treatment = treatment(request.method(), &info);
    let labels = labels(&request, &info);
    let started = Instant::now();
    let metrics = state.metrics.clone();
    let (response, slot) = match treatment {
        Treatment::Probe => (next.run(request).await, None),
        Treatment::LongRunning => {
            if let Some(labels) = &labels {
                metrics.longrunning(labels, 1);
            }
            let response = next.run(request).await;
            (response, None)
        }
        Treatment::Limited(kind) => {
            let Some(slot) = state.in_flight.take(kind, &metrics) else {
                if let Some(labels) = &labels {
                    metrics.request_dropped(labels, StatusCode::TOO_MANY_REQUESTS.as_u16());
                }
                return too_many_requests();
            };
            let timeout = state.in_flight.limits.request_timeout;
            let mut response = match tokio::time::timeout(timeout, next.run(request)).await {
                Ok(response) => response,
                Err(_) => {
                    ApiError::timeout("request did not complete within the allotted timeout").into_response()
                }
            };
            // The body must be written by then too: upstream aborts the connection of a
            // handler still writing when its timeout fires (`timeout.go`, `http.ErrAbortHandler`).
            response.extensions_mut().insert(RespondBy(tokio::time::Instant::from_std(started) + timeout));
            (response, Some(slot))
        }
    };
    let Some(labels) = labels else { return response };
    let code = response.status().as_u16();
    let long_running = treatment == Treatment::LongRunning;
    response.map(|body| {
        Body::new(OnEnd::new(body, Done { metrics, labels, code, started, long_running, _slot: slot }))
    })
}

/// When a response must have been written in full; a connection still writing it then is
/// closed ([`super::transport`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RespondBy(pub tokio::time::Instant);

/// What to record when a response body ends.
struct Done {
    metrics: Arc<Metrics>,
    labels: RequestLabels,
    code: u16,
    started: Instant,
    long_running: bool,
    /// The in-flight slot is held until the response is written, as upstream's handler holds
    /// it until it returns.
    _slot: Option<Slot>,
}

impl Drop for Done {
    fn drop(&mut self) {
        self.metrics.request_done(&self.labels, self.code, self.started.elapsed());
        if self.long_running {
            self.metrics.longrunning(&self.labels, -1);
        }
    }
}

/// A response body that drops `guard` when it ends (sent in full, or dropped): what records
/// its request ([`Done`]) or frees its connection ([`super::transport`]) runs in the guard's
/// `Drop`.
pub(crate) struct OnEnd<G> {
    body: Body,
    guard: Option<G>,
}

impl<G> OnEnd<G> {
    pub(crate) fn new(body: Body, guard: G) -> OnEnd<G> {
        OnEnd { body, guard: Some(guard) }
    }
}

impl<G: Unpin> hyper::body::Body for OnEnd<G> {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(polled, Poll::Ready(None)) {
            self.guard.take();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}
