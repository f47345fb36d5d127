//! A simulator's Prometheus metrics, named, labelled and bucketed as kube-apiserver's.
//!
//! Requests: `apiserver_request_total`, `apiserver_request_duration_seconds`,
//! `apiserver_longrunning_requests` (apiserver `pkg/endpoints/metrics/metrics.go`),
//! `apiserver_current_inflight_requests` (the same file; set by the in-flight limit as
//! `pkg/server/filters/maxinflight.go` sets it: the most in use during the last second).
//! Storage: `etcd_request_duration_seconds{operation,type}` and `apiserver_storage_objects`
//! (`pkg/storage/etcd3/metrics/metrics.go`), here the simulator's SQLite store. Process:
//! `process_resident_memory_bytes` and the rest of the collector every Go program exports.
//! Help texts carry component-base's stability prefix (`[STABLE] …`). The text is Prometheus'
//! format 0.0.4, what kube-apiserver's `/metrics` serves.

use std::{
    sync::Mutex,
    time::{Duration, Instant},
};

use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder,
};

/// The buckets of `apiserver_request_duration_seconds` and `etcd_request_duration_seconds`.
const LATENCY_BUCKETS: &[f64] = &[
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0, 15.0,
    20.0, 30.0, 45.0, 60.0,
];

/// The labels upstream gives a request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestLabels {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`, `CONNECT`.
    pub verb: String,
    /// `All` under `dryRun=All`, else empty.
    pub dry_run: String,
    /// API group (`""` for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource (plural).
    pub resource: String,
    /// Subresource; for a non-resource request, its path (as upstream labels health checks).
    pub subresource: String,
    /// `resource`, `namespace`, `cluster`, or empty.
    pub scope: String,
}

/// One simulator's metrics.
pub struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    longrunning: IntGaugeVec,
    inflight: IntGaugeVec,
    storage: HistogramVec,
    objects: IntGaugeVec,
    /// The most requests of each kind in flight lately.
    watermarks: Mutex<Watermarks>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Metrics")
    }
}

/// The most requests of each kind in flight during the current period and the one before.
#[derive(Debug, Clone, Copy)]
struct Watermarks {
    started: Instant,
    current: [i64; 2],
    last: [i64; 2],
}

impl Watermarks {
    /// Starts a new period when the current one is over (`last` then holds its maximum).
    fn roll(&mut self) {
        let elapsed = self.started.elapsed();
        if elapsed >= WATERMARK_PERIOD {
            self.last = if elapsed >= 2 * WATERMARK_PERIOD { [0; 2] } else { self.current };
            self.current = [0; 2];
            self.started = Instant::now();
        }
    }
}

/// Whether a request reads or changes state (maxinflight.go's two kinds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestKind {
    /// get, list, watch.
    ReadOnly,
    /// Everything else.
    Mutating,
}

impl RequestKind {
    fn label(self) -> &'static str {
        match self {
            RequestKind::ReadOnly => "readOnly",
            RequestKind::Mutating => "mutating",
        }
    }

    fn index(self) -> usize {
        match self {
            RequestKind::ReadOnly => 0,
            RequestKind::Mutating => 1,
        }
    }
}

/// How often the in-flight watermark is published (maxinflight.go
/// `inflightUsageMetricUpdatePeriod`).
const WATERMARK_PERIOD: Duration = Duration::from_secs(1);

fn stable(help: &str) -> String {
    format!("[STABLE] {help}")
}

fn alpha(help: &str) -> String {
    format!("[ALPHA] {help}")
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// The metrics, registered and at zero.
    pub fn new() -> Metrics {
        let request_labels =
            ["verb", "dry_run", "group", "version", "resource", "subresource", "scope", "component"];
        let requests = IntCounterVec::new(
            Opts::new(
                "apiserver_request_total",
                stable("Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code."),
            ),
            &[&request_labels[..], &["code"]].concat(),
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new(
                "apiserver_request_duration_seconds",
                stable("Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component."),
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &request_labels,
        )
        .expect("valid metric");
        let longrunning = IntGaugeVec::new(
            Opts::new(
                "apiserver_longrunning_requests",
                stable("Gauge of all active long-running apiserver requests broken out by verb, group, version, resource, scope and component. Not all requests are tracked this way."),
            ),
            &["verb", "group", "version", "resource", "subresource", "scope", "component"],
        )
        .expect("valid metric");
        let inflight = IntGaugeVec::new(
            Opts::new(
                "apiserver_current_inflight_requests",
                stable("Maximal number of currently used inflight request limit of this apiserver per request kind in last second."),
            ),
            &["request_kind"],
        )
        .expect("valid metric");
        let storage = HistogramVec::new(
            HistogramOpts::new(
                "etcd_request_duration_seconds",
                alpha("Etcd request latency in seconds for each operation and object type."),
            )
            .buckets(LATENCY_BUCKETS.to_vec()),
            &["operation", "type"],
        )
        .expect("valid metric");
        let objects = IntGaugeVec::new(
            Opts::new(
                "apiserver_storage_objects",
                stable("Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1."),
            ),
            &["resource"],
        )
        .expect("valid metric");
        let registry = Registry::new();
        for collector in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(latency.clone()),
            Box::new(longrunning.clone()),
            Box::new(inflight.clone()),
            Box::new(storage.clone()),
            Box::new(objects.clone()),
            Box::new(prometheus::process_collector::ProcessCollector::for_self()),
        ] {
            registry.register(collector).expect("metric names are distinct");
        }
        for kind in [RequestKind::ReadOnly, RequestKind::Mutating] {
            inflight.with_label_values(&[kind.label()]).set(0);
        }
        let watermarks = Mutex::new(Watermarks { started: Instant::now(), current: [0; 2], last: [0; 2] });
        Metrics { registry, requests, latency, longrunning, inflight, storage, objects, watermarks }
    }

    fn values(labels: &RequestLabels) -> [&str; 8] {
        [
            &labels.verb,
            &labels.dry_run,
            &labels.group,
            &labels.version,
            &labels.resource,
            &labels.subresource,
            &labels.scope,
            "apiserver",
        ]
    }

    /// One request answered with `code` after `elapsed`.
    pub fn request_done(&self, labels: &RequestLabels, code: u16, elapsed: Duration) {
        let values = Metrics::values(labels);
        let code = code.to_string();
        self.requests.with_label_values(&[&values[..], &[code.as_str()]].concat()).inc();
        self.latency.with_label_values(&values).observe(elapsed.as_secs_f64());
    }

    /// One request refused before it was handled (a 429 of the in-flight limit): counted, as
    /// maxinflight.go's `RecordDroppedRequest` counts it, without a latency.
    pub fn request_dropped(&self, labels: &RequestLabels, code: u16) {
        let values = Metrics::values(labels);
        let code = code.to_string();
        self.requests.with_label_values(&[&values[..], &[code.as_str()]].concat()).inc();
    }

    /// A long-running request started (`+1`) or ended (`-1`).
    pub fn longrunning(&self, labels: &RequestLabels, delta: i64) {
        let values = [
            labels.verb.as_str(),
            &labels.group,
            &labels.version,
            &labels.resource,
            &labels.subresource,
            &labels.scope,
            "apiserver",
        ];
        self.longrunning.with_label_values(&values).add(delta);
    }

    /// `in_use` requests of `kind` are now in flight: the gauge shows the most of the last
    /// second or so.
    pub fn inflight(&self, kind: RequestKind, in_use: usize) {
        let in_use = i64::try_from(in_use).unwrap_or(i64::MAX);
        let mut marks = self.watermarks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        marks.roll();
        let mark = &mut marks.current[kind.index()];
        *mark = (*mark).max(in_use);
    }

    /// One store operation (`get`, `list`, `create`, `update`, `delete`, `watch`) on
    /// `group_resource` took `elapsed`.
    pub fn storage(&self, operation: &str, group_resource: &str, elapsed: Duration) {
        self.storage.with_label_values(&[operation, group_resource]).observe(elapsed.as_secs_f64());
    }

    /// The text `/metrics` serves, with `objects` (stored objects per resource) as of now.
    pub fn render(&self, objects: &[(String, u64)]) -> String {
        let marks = {
            let mut marks = self.watermarks.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            marks.roll();
            *marks
        };
        for kind in [RequestKind::ReadOnly, RequestKind::Mutating] {
            let most = marks.current[kind.index()].max(marks.last[kind.index()]);
            self.inflight.with_label_values(&[kind.label()]).set(most);
        }
        self.objects.reset();
        for (resource, count) in objects {
            self.objects
                .with_label_values(&[resource.as_str()])
                .set(i64::try_from(*count).unwrap_or(i64::MAX));
        }
        let mut text = Vec::new();
        // Encoding gathered families into a Vec cannot fail.
        let _ = TextEncoder::new().encode(&self.registry.gather(), &mut text);
        String::from_utf8(text).unwrap_or_default()
    }

    /// The content type of [`Metrics::render`]'s text.
    pub const CONTENT_TYPE: &'static str = "text/plain; version=0.0.4; charset=utf-8";
}
