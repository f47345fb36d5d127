//! Fuzzes the simulator's HTTP request path in process: up to four requests (method, path, query, content type, accept, authorization, body) through the token layer and router `sim serve` serves, each answered without a panic, without an unexplained 5xx, in time, and with a bounded body.
//!
//! Every input starts from a fresh in-memory simulator holding a ConfigMap `target`, so a
//! finding replays on its own. Paths, query keys, content types and bodies are drawn either from
//! lists of what kubectl sends (so the fuzzer reaches deep into the handlers) or as raw bytes.

#![no_main]

use std::{sync::Arc, time::Duration};

use axum::body::Body;
use k8s_openapi::jiff::Timestamp;
use lab_runner_sim::{
    auth::{self, Tokens},
    clock::Clock,
    harness,
    server::{self, SimState},
    store::Store,
};
use libfuzzer_sys::{
    arbitrary::{self, Arbitrary},
    fuzz_target,
};
use tower::ServiceExt;

/// The largest response body accepted (a list of everything a fresh simulator plus four
/// requests can hold is far smaller).
const MAX_RESPONSE_BYTES: usize = 16 << 20;
/// How long a response's head or a non-streaming body may take: a hang past this is a finding.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);
const ADMIN: &str = "fuzz-admin";
const VIEWER: &str = "fuzz-viewer";
const LEARNER: &str = "fuzz-learner";

const PREFIXES: &[&str] = &[
    "/api/v1",
    "/api/v1/namespaces/default",
    "/api/v1/namespaces/default/configmaps/target",
    "/apis/apps/v1/namespaces/default",
    "/apis/batch/v1/namespaces/default",
    "/apis/policy/v1/namespaces/default",
    "/apis/rbac.authorization.k8s.io/v1",
    "/apis/apiextensions.k8s.io/v1",
    "/apis/scheduling.k8s.io/v1",
    "/apis/authorization.k8s.io/v1",
    "/api/v1/watch/namespaces/default",
    "/api",
    "/apis",
    "/openapi/v2",
    "/openapi/v3",
    "/version",
    "/lab-runner.io/v1/checkpoints",
    "",
];
const SEGMENTS: &[&str] = &[
    "pods",
    "configmaps",
    "nodes",
    "namespaces",
    "default",
    "daemonsets",
    "deployments",
    "replicasets",
    "jobs",
    "cronjobs",
    "resourcequotas",
    "poddisruptionbudgets",
    "clusterroles",
    "rolebindings",
    "customresourcedefinitions",
    "priorityclasses",
    "selfsubjectaccessreviews",
    "events",
    "status",
    "scale",
    "eviction",
    "binding",
    "log",
    "exec",
    "finalize",
    "restore",
    "target",
    "p",
    "d",
    "..",
    ".",
    "%2F",
];
const QUERY_KEYS: &[&str] = &[
    "labelSelector",
    "fieldSelector",
    "watch",
    "limit",
    "continue",
    "resourceVersion",
    "resourceVersionMatch",
    "dryRun",
    "fieldManager",
    "fieldValidation",
    "timeoutSeconds",
    "propagationPolicy",
    "force",
    "allowWatchBookmarks",
    "sendInitialEvents",
    "gracePeriodSeconds",
    "container",
    "follow",
    "tailLines",
    "command",
    "stdout",
];
const CONTENT_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
    "application/apply-patch+cbor",
    "application/vnd.kubernetes.protobuf",
    "application/cbor",
    "application/json;charset=utf-8",
    "text/plain",
];
const ACCEPTS: &[&str] = &[
    "application/json",
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json",
    "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io",
    "application/vnd.kubernetes.protobuf",
    "application/vnd.kubernetes.protobuf;stream=watch",
    "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
    "application/yaml",
    "*/*",
];
/// Bodies kubectl sends, for the fuzzer to splice into.
const TEMPLATES: &[&str] = &[
    r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","labels":{"a":"b"}},"data":{"k":"v"}}"#,
    r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"i:1","resources":{"limits":{"nvidia.com/gpu":"1"}}}]}}}}"#,
    r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"i","ports":[{"containerPort":80}]}],"tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}]}}"#,
    r#"{"apiVersion":"apps/v1","kind":"DaemonSet","metadata":{"name":"ds"},"spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}"#,
    r#"{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j"},"spec":{"completions":2,"parallelism":1,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}}"#,
    r#"{"apiVersion":"v1","kind":"Node","metadata":{"name":"n","labels":{"nvidia.com/gpu.present":"true"}},"spec":{"podCIDR":"10.244.0.0/24"}}"#,
    r#"{"apiVersion":"v1","kind":"ResourceQuota","metadata":{"name":"q"},"spec":{"hard":{"requests.nvidia.com/gpu":"2"}}}"#,
    r#"{"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"b"},"spec":{"minAvailable":1,"selector":{"matchLabels":{"a":"b"}}}}"#,
    r#"{"apiVersion":"rbac.authorization.k8s.io/v1","kind":"ClusterRole","metadata":{"name":"r"},"rules":[{"apiGroups":[""],"resources":["pods"],"verbs":["get"]}]}"#,
    r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"widgets.example.com"},"spec":{"group":"example.com","names":{"plural":"widgets","singular":"widget","kind":"Widget"},"scope":"Namespaced","versions":[{"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x-kubernetes-preserve-unknown-fields":true}}}]}}"#,
    r#"[{"op":"add","path":"/metadata/annotations","value":{"a":"x"}},{"op":"copy","from":"/metadata/annotations","path":"/metadata/annotations/b"},{"op":"replace","path":"/data/k","value":"w"},{"op":"test","path":"/metadata/name","value":"target"}]"#,
    r#"{"metadata":{"labels":{"x":null}},"data":{"k":null,"n":"v"},"spec":{"template":{"$patch":"replace"},"containers":[{"name":"c","$patch":"delete"}]}}"#,
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\n  labels: &l {a: b}\n  annotations: *l\ndata:\n  k: v\n",
    r#"{"apiVersion":"v1","kind":"Eviction","metadata":{"name":"p"},"deleteOptions":{"gracePeriodSeconds":0}}"#,
    r#"{"apiVersion":"v1","kind":"Binding","metadata":{"name":"p"},"target":{"kind":"Node","name":"n"}}"#,
    r#"{"kind":"DeleteOptions","apiVersion":"v1","propagationPolicy":"Foreground","preconditions":{"uid":"x"}}"#,
];

#[derive(Debug, Arbitrary)]
enum Pick {
    Known(u8),
    Raw(String),
}

impl Pick {
    fn resolve(&self, known: &[&str]) -> String {
        match self {
            Pick::Known(index) => known[usize::from(*index) % known.len()].to_string(),
            Pick::Raw(text) => text.clone(),
        }
    }
}

#[derive(Debug, Arbitrary)]
enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
    Head,
    Options,
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum Authorization {
    Admin,
    AdminLowerCase,
    Viewer,
    /// A hosted class's learner token (its own namespaces, not the lab's records).
    Learner,
    Missing,
    Raw(String),
}

#[derive(Debug, Arbitrary)]
enum RequestBody {
    Empty,
    Raw(Vec<u8>),
    /// A template with `splice` written over it from `at` on (both taken modulo its length).
    Template { index: u8, at: u16, splice: Vec<u8> },
}

#[derive(Debug, Arbitrary)]
struct FuzzRequest {
    method: Method,
    prefix: u8,
    segments: Vec<Pick>,
    query: Vec<(Pick, String)>,
    content_type: Option<Pick>,
    accept: Option<Pick>,
    authorization: Authorization,
    body: RequestBody,
}

impl FuzzRequest {
    fn method(&self) -> String {
        match &self.method {
            Method::Get => "GET".into(),
            Method::Post => "POST".into(),
            Method::Put => "PUT".into(),
            Method::Patch => "PATCH".into(),
            Method::Delete => "DELETE".into(),
            Method::Head => "HEAD".into(),
            Method::Options => "OPTIONS".into(),
            Method::Raw(raw) => raw.clone(),
        }
    }

    fn uri(&self) -> String {
        let mut uri = PREFIXES[usize::from(self.prefix) % PREFIXES.len()].to_string();
        for segment in self.segments.iter().take(6) {
            uri.push('/');
            uri.push_str(&segment.resolve(SEGMENTS));
        }
        if uri.is_empty() {
            uri.push('/');
        }
        let pairs: Vec<String> = self
            .query
            .iter()
            .take(6)
            .map(|(key, value)| format!("{}={}", key.resolve(QUERY_KEYS), percent_encode(value)))
            .collect();
        if !pairs.is_empty() {
            uri.push('?');
            uri.push_str(&pairs.join("&"));
        }
        uri
    }

    fn body(&self) -> Vec<u8> {
        match &self.body {
            RequestBody::Empty => Vec::new(),
            RequestBody::Raw(bytes) => bytes.clone(),
            RequestBody::Template { index, at, splice } => {
                let mut bytes = TEMPLATES[usize::from(*index) % TEMPLATES.len()].as_bytes().to_vec();
                let at = usize::from(*at) % (bytes.len() + 1);
                let end = (at + splice.len()).min(bytes.len());
                bytes.splice(at..end, splice.iter().copied());
                bytes
            }
        }
    }

    /// Whether the answer may legitimately stream without end (watches, followed logs, exec).
    fn may_stream(uri: &str) -> bool {
        uri.contains("watch") || uri.contains("follow") || uri.contains("/exec")
    }

    fn build(&self) -> Option<axum::http::Request<Body>> {
        let mut builder = axum::http::Request::builder().method(self.method().as_str()).uri(self.uri());
        let authorization = match &self.authorization {
            Authorization::Admin => Some(format!("Bearer {ADMIN}")),
            Authorization::AdminLowerCase => Some(format!("bearer {ADMIN}")),
            Authorization::Viewer => Some(format!("Bearer {VIEWER}")),
            Authorization::Learner => Some(format!("Bearer {LEARNER}")),
            Authorization::Missing => None,
            Authorization::Raw(raw) => Some(raw.clone()),
        };
        if let Some(value) = authorization {
            builder = builder.header("authorization", value);
        }
        if let Some(content_type) = &self.content_type {
            builder = builder.header("content-type", content_type.resolve(CONTENT_TYPES));
        }
        if let Some(accept) = &self.accept {
            builder = builder.header("accept", accept.resolve(ACCEPTS));
        }
        // A method, URI or header value no client could send is no request at all.
        builder.body(Body::from(self.body())).ok()
    }
}

fn percent_encode(value: &str) -> String {
    value
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

/// The 5xx answers kube-apiserver gives too: a too-new resourceVersion (504 Timeout), an
/// eviction of a pod under two PodDisruptionBudgets (500), a server-side apply configuration
/// the type converter refuses (500, kubernetes/kubernetes#122480) and a pod Binding without a
/// valid target (500, `ValidatePodBinding`'s aggregate error).
fn upstream_5xx(code: u16, body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    (code == 504 && text.contains("ResourceVersionTooLarge"))
        || (code == 500 && text.contains("more than one PodDisruptionBudget"))
        || (code == 500 && text.contains("\"failed to create typed patch object ("))
        || (code == 500 && (text.contains("\"message\":\"target.") || text.contains("\"message\":\"[target.")))
}

fuzz_target!(|requests: Vec<FuzzRequest>| {
    static RUNTIME: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    let runtime = RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime")
    });
    runtime.block_on(async {
        // The harness's state without its kube::Client: the client's buffer task would outlive
        // the input on this runtime (it only runs while block_on polls), keeping every input's
        // store alive (the first campaign ran out of memory on exactly that).
        let clock = Clock::manual(harness::START.parse::<Timestamp>().expect("valid start time"));
        let state = SimState::new(Store::in_memory().expect("in-memory SQLite opens"), clock);
        server::ensure_system_namespaces(&state).expect("system namespaces are created");
        server::ensure_system_priority_classes(&state).expect("system priority classes are created");
        let tokens = Arc::new(Tokens { admin: ADMIN.into(), viewer: VIEWER.into(), learner: LEARNER.into() });
        let app = auth::layer(server::router(Arc::new(state)), tokens);
        let target = axum::http::Request::builder()
            .method("POST")
            .uri("/api/v1/namespaces/default/configmaps")
            .header("authorization", format!("Bearer {ADMIN}"))
            .header("content-type", "application/json")
            .body(Body::from(r#"{"metadata":{"name":"target"},"data":{"k":"v"}}"#))
            .expect("a valid request");
        let created = app.clone().oneshot(target).await.expect("infallible");
        assert_eq!(created.status().as_u16(), 201);
        for request in requests.iter().take(4) {
            let uri = request.uri();
            let Some(http) = request.build() else { continue };
            let response = tokio::time::timeout(ANSWER_WITHIN, app.clone().oneshot(http))
                .await
                .unwrap_or_else(|_| panic!("{request:?} hung"))
                .expect("infallible");
            let code = response.status().as_u16();
            let body = if FuzzRequest::may_stream(&uri) {
                // A stream's first frame, if it comes soon; the rest may never end.
                let mut body = response.into_body().into_data_stream();
                match tokio::time::timeout(Duration::from_millis(20), futures::StreamExt::next(&mut body)).await {
                    Ok(Some(Ok(bytes))) => bytes,
                    _ => Default::default(),
                }
            } else {
                tokio::time::timeout(ANSWER_WITHIN, axum::body::to_bytes(response.into_body(), MAX_RESPONSE_BYTES))
                    .await
                    .unwrap_or_else(|_| panic!("{request:?}: the body never ended"))
                    .unwrap_or_else(|error| panic!("{request:?}: unbounded body: {error}"))
            };
            assert!(
                code < 500 || upstream_5xx(code, &body),
                "{} {uri} -> {code}: {}",
                request.method(),
                String::from_utf8_lossy(&body)
            );
        }
    });
});
