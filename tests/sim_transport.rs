//! The simulator against a hostile client (issue #30): input nested to Go's depth limit and one
//! level past it on every decode and patch path, client-given durations at their extremes,
//! watches that read nothing, connection hygiene on a socket, health and metrics.

use std::time::Duration;

use axum::body::Body;
use futures::{FutureExt, StreamExt};
use lab_runner::sim::{
    THREAD_STACK_BYTES,
    clock::Clock,
    gojson::MAX_NESTING_DEPTH,
    harness::Harness,
    server::{
        SimState,
        filters::{InFlight, InFlightLimits},
        watch::WatchBudget,
    },
    store::Store,
};
use serde_json::{Value, json};

use crate::support::http::call;

/// Runs `test` as the simulator runs its handlers: on a thread with [`THREAD_STACK_BYTES`] of
/// stack (here a quarter of it, the margin the constant promises), with its own runtime.
fn on_handler_stack<F, Fut>(test: F)
where
    F: FnOnce() -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let stack = std::env::var("LAB_RUNNER_TEST_STACK")
        .ok()
        .and_then(|mb| mb.parse::<usize>().ok())
        .map_or(THREAD_STACK_BYTES / 4, |mb| mb << 20);
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(test());
        })
        .unwrap()
        .join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
}

/// `{"a":{"a":…1…}}`: `levels` nested objects.
fn nested_objects(levels: usize) -> String {
    format!("{}1{}", r#"{"a":"#.repeat(levels), "}".repeat(levels))
}

/// `[[…1…]]`: `levels` nested arrays.
fn nested_arrays(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const THINGS: &str = "/apis/lab.example.com/v1/namespaces/default/deepthings";
const CM: &str = "/api/v1/namespaces/default/configmaps";

/// A custom type whose `spec` keeps whatever it is given, as `x-kubernetes-preserve-unknown-fields`
/// does: the one place a client can store nesting as deep as the decoder reads.
async fn with_deep_things() -> Harness {
    let sim = Harness::start();
    let crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "deepthings.lab.example.com"},
        "spec": {"group": "lab.example.com", "scope": "Namespaced",
            "names": {"kind": "DeepThing", "listKind": "DeepThingList", "plural": "deepthings", "singular": "deepthing"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    });
    let (code, body) = call(&sim, "POST", CRD, "application/json", crd.to_string()).await;
    assert_eq!(code, 201, "{body}");
    sim
}

/// A DeepThing `name` whose `spec.deep` holds `inner` (JSON text): the object nests two levels
/// more than `inner` (itself and `spec`).
fn deep_thing(name: &str, inner: &str) -> String {
    format!(
        r#"{{"apiVersion":"lab.example.com/v1","kind":"DeepThing","metadata":{{"name":"{name}"}},"spec":{{"deep":{inner}}}}}"#
    )
}

/// The JSON patch of the issue: `copies` copies of `/spec/v` into its own deepest object, each
/// doubling its depth for a few bytes of patch per level (13 make 8,192 levels from 17 KB).
fn doubling_patch(copies: u32) -> String {
    let mut operations = vec![json!({"op": "add", "path": "/spec/v", "value": {}})];
    for copy in 0..copies {
        let deepest = "/a".repeat((1usize << copy) - 1);
        operations.push(json!({"op": "copy", "from": "/spec/v", "path": format!("/spec/v{deepest}/a")}));
    }
    Value::Array(operations).to_string()
}

#[test]
fn deep_inputs_fit_the_handler_stack() {
    on_handler_stack(|| async {
        let sim = with_deep_things().await;
        let inner = MAX_NESTING_DEPTH - 2;
        // Created at the limit (JSON and YAML), read back, listed as kubectl lists it.
        let (code, body) =
            call(&sim, "POST", THINGS, "application/json", deep_thing("objects", &nested_objects(inner)))
                .await;
        assert_eq!(code, 201, "{}", shown(&body));
        let (code, body) =
            call(&sim, "POST", THINGS, "application/yaml", deep_thing("arrays", &nested_arrays(inner))).await;
        assert_eq!(code, 201, "{}", shown(&body));
        let (code, got) = call(&sim, "GET", &format!("{THINGS}/objects"), "", "").await;
        assert_eq!((code, depth(&got["spec"]) + 1), (200, MAX_NESTING_DEPTH));
        let (code, body) = call(&sim, "GET", THINGS, "", "").await;
        assert_eq!((code, body["items"].as_array().map(Vec::len)), (200, Some(2)), "{}", shown(&body));
        // A merge patch that replaces the deep value with another as deep.
        let merge = format!(r#"{{"spec":{{"deep":{}}}}}"#, nested_arrays(inner));
        let (code, body) =
            call(&sim, "PATCH", &format!("{THINGS}/objects"), "application/merge-patch+json", merge).await;
        assert_eq!(code, 200, "{}", shown(&body));
        // Server-side apply of a deep configuration, creating the object and then changing it.
        for leaf in ["1", "2"] {
            let applied = deep_thing("applied", &nested_objects(inner).replace('1', leaf));
            let uri = format!("{THINGS}/applied?fieldManager=deep");
            let (code, body) = call(&sim, "PATCH", &uri, "application/apply-patch+yaml", applied).await;
            assert!(code == 200 || code == 201, "{code} {}", shown(&body));
        }
        // The issue's patch: 13 doublings stay within the limit, a 14th goes past it.
        let uri = format!("{THINGS}/objects");
        let (code, body) = call(&sim, "PATCH", &uri, "application/json-patch+json", doubling_patch(13)).await;
        assert_eq!(code, 200, "{}", shown(&body));
        let (code, body) = call(&sim, "PATCH", &uri, "application/json-patch+json", doubling_patch(14)).await;
        let message = body["message"].as_str().unwrap_or_default();
        assert_eq!((code, body["reason"].as_str()), (422, Some("Invalid")), "{}", shown(&body));
        assert!(
            message.starts_with(r#" "" is invalid: patch: Invalid value: "{\"apiVersion\":"#),
            "{}",
            shown(&body)
        );
        assert!(
            message.ends_with(
                ": couldn't get version/kind; json parse error: invalid character '{' exceeded max depth"
            ),
            "{}",
            shown(&body)
        );
        // Deep values are also read by the other handlers: a table list and a watch's initial state.
        let table = axum::http::Request::builder()
            .uri(THINGS)
            .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
            .body(Body::empty())
            .unwrap();
        assert_eq!(sim.request(table).await.status(), 200);
        let (code, _) = call(&sim, "DELETE", &format!("{THINGS}/objects"), "", "").await;
        assert_eq!(code, 200);
    });
}

/// Deep input through the router `sim serve` serves, from a test thread with the default stack
/// (2 MiB): only the handler runtime's big stacks fit it, so this fails if the handlers ran on
/// the caller's runtime or on threads of the default size.
#[tokio::test]
async fn the_served_router_handles_deep_input_on_its_own_stacks() {
    let sim = with_deep_things().await;
    let handlers = lab_runner::sim::server::transport::handler_runtime().unwrap();
    let router = lab_runner::sim::server::served_router(sim.state.clone(), handlers);
    let send = |method: &str, uri: &str, content_type: &str, body: String| {
        let request = axum::http::Request::builder()
            .method(method)
            .uri(uri)
            .header("content-type", content_type)
            .body(Body::from(body))
            .unwrap();
        let router = router.clone();
        async move {
            use tower::ServiceExt;
            let response = router.oneshot(request).await.unwrap();
            // The bodies are not parsed here: this thread has no stack for them.
            let code = response.status().as_u16();
            let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
            (code, String::from_utf8_lossy(&bytes[..bytes.len().min(300)]).into_owned())
        }
    };
    let inner = nested_objects(MAX_NESTING_DEPTH - 2);
    let (code, body) = send("POST", THINGS, "application/json", deep_thing("served", &inner)).await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = send("POST", THINGS, "application/yaml", deep_thing("yaml", &inner)).await;
    assert_eq!(code, 201, "{body}");
    let uri = format!("{THINGS}/served");
    let (code, body) = send("PATCH", &uri, "application/json-patch+json", doubling_patch(14)).await;
    assert_eq!(code, 422, "{body}");
    let (code, body) = send("GET", &uri, "", String::new()).await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = send("DELETE", &uri, "", String::new()).await;
    assert_eq!(code, 200, "{body}");
}

/// Protobuf bodies nest only as deep as their messages, but unknown fields may be groups
/// nested at will: prost refuses past its recursion limit (100) where Go's generated
/// `skipGenerated` skips them in a loop; either way the stack is safe.
#[tokio::test]
async fn protobuf_groups_nested_without_end_are_refused() {
    let sim = Harness::start();
    // runtime.Unknown{typeMeta{apiVersion: v1, kind: ConfigMap}, raw}: raw is a ConfigMap whose
    // unknown field 99 is a group nested 100,000 times.
    let levels = 100_000;
    let mut raw = [0x9b, 0x06].repeat(levels); // field 99, start group
    raw.extend([0x9c, 0x06].repeat(levels)); // field 99, end group
    let type_meta = b"\x0a\x02v1\x12\x09ConfigMap";
    let mut body = b"k8s\0".to_vec();
    body.push(0x0a);
    body.push(u8::try_from(type_meta.len()).unwrap());
    body.extend_from_slice(type_meta);
    body.push(0x12);
    let mut length = raw.len();
    while length >= 0x80 {
        body.push(u8::try_from(length & 0x7f).unwrap() | 0x80);
        length >>= 7;
    }
    body.push(u8::try_from(length).unwrap());
    body.extend(raw);
    let (code, status) = call(&sim, "POST", CM, "application/vnd.kubernetes.protobuf", body).await;
    assert_eq!((code, status["reason"].as_str()), (400, Some("BadRequest")), "{}", shown(&status));
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.contains("recursion limit reached"), "{message}");
}

/// A response body cut for a failure message (deep bodies are tens of kilobytes).
fn shown(body: &Value) -> String {
    let text = body.to_string();
    text.chars().take(300).collect()
}

fn depth(value: &Value) -> usize {
    lab_runner::sim::gojson::depth(value)
}

#[test]
fn one_level_past_the_limit_is_refused_in_upstreams_words_on_every_decode_path() {
    on_handler_stack(|| async {
        let sim = with_deep_things().await;
        let (code, body) =
            call(&sim, "POST", CM, "application/json", r#"{"metadata":{"name":"target"}}"#).await;
        assert_eq!(code, 201, "{body}");
        let past = MAX_NESTING_DEPTH - 1; // inside `spec.deep`: two levels more
        let deep_json = deep_thing("past", &nested_objects(past));
        let deep_merge = format!(r#"{{"spec":{{"deep":{}}}}}"#, nested_arrays(past));
        let deep_ops =
            format!(r#"[{{"op":"add","path":"/data/x","value":{}}}]"#, nested_arrays(MAX_NESTING_DEPTH - 1));
        let target = format!("{CM}/target");
        let cases: Vec<(&str, String, &str, String, &str)> = vec![
            (
                "POST",
                THINGS.into(),
                "application/json",
                deep_json.clone(),
                r#"the object provided is unrecognized (must be of type DeepThing): couldn't get version/kind; json parse error: invalid character '{' exceeded max depth ({"apiVersion":"lab.example.com ...)"#,
            ),
            (
                "POST",
                THINGS.into(),
                "application/yaml",
                deep_json.clone(),
                r#"the object provided is unrecognized (must be of type DeepThing): yaml: exceeded max depth of 10000 ({"apiVersion":"lab.example.com ...)"#,
            ),
            (
                "PATCH",
                format!("{THINGS}/past?fieldManager=m"),
                "application/apply-patch+yaml",
                deep_json,
                "error decoding YAML: error converting YAML to JSON: yaml: exceeded max depth of 10000",
            ),
            (
                "PATCH",
                target.clone(),
                "application/merge-patch+json",
                deep_merge.clone(),
                "error decoding patch: invalid character '[' exceeded max depth",
            ),
            (
                "PATCH",
                target.clone(),
                "application/strategic-merge-patch+json",
                deep_merge,
                "invalid character '[' exceeded max depth",
            ),
            (
                "PATCH",
                target,
                "application/json-patch+json",
                deep_ops,
                "error decoding patch: invalid character '[' exceeded max depth",
            ),
        ];
        for (method, uri, content_type, body, message) in cases {
            let (code, status) = call(&sim, method, &uri, content_type, body).await;
            assert_eq!(
                (code, status["reason"].as_str()),
                (400, Some("BadRequest")),
                "{method} {uri} {content_type}: {}",
                shown(&status)
            );
            assert_eq!(status["message"], message, "{method} {uri} {content_type}");
        }
        // Nothing was created or changed.
        let (_, list) = call(&sim, "GET", THINGS, "", "").await;
        assert_eq!(list["items"], json!([]));
        let (_, target) = call(&sim, "GET", &format!("{CM}/target"), "", "").await;
        assert_eq!(target.get("data"), None);
    });
}

/// A simulator whose watchers may hold back `pending_bytes` and wait `unresponsive_after` for
/// room, with `count` ConfigMaps of `size` bytes of data each.
async fn with_budget(
    pending_bytes: usize,
    unresponsive_after: Duration,
    count: usize,
    size: usize,
) -> Harness {
    let mut state = SimState::new(
        Store::in_memory().unwrap(),
        Clock::manual(lab_runner::sim::harness::START.parse().unwrap()),
    );
    state.watch_budget = WatchBudget { pending_bytes, unresponsive_after };
    let sim = Harness::with_state(state);
    for n in 0..count {
        let body = json!({"metadata": {"name": format!("big-{n}")}, "data": {"k": "x".repeat(size)}});
        let (code, body) = call(&sim, "POST", CM, "application/json", body.to_string()).await;
        assert_eq!(code, 201, "{}", shown(&body));
    }
    sim
}

/// Opens a watch and returns its body's chunks.
async fn open_watch(sim: &Harness, query: &str) -> axum::body::BodyDataStream {
    let request =
        axum::http::Request::builder().uri(format!("{CM}?watch=true&{query}")).body(Body::empty()).unwrap();
    let response = sim.request(request).await;
    assert_eq!(response.status(), 200);
    response.into_body().into_data_stream()
}

/// The bytes the server has already handed to the body (what it holds for this watcher).
async fn queued_bytes(chunks: &mut axum::body::BodyDataStream) -> usize {
    let mut queued = 0;
    while let Some(Some(chunk)) = chunks.next().now_or_never() {
        queued += chunk.unwrap().len();
    }
    queued
}

#[tokio::test]
async fn a_watch_that_reads_nothing_holds_its_budget_and_no_more() {
    // Ten objects of 40 KB against a 64 KiB budget: the stream stops after what fits.
    let sim = with_budget(64 << 10, Duration::from_secs(10), 10, 40_000).await;
    let mut chunks = open_watch(&sim, "").await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let first = queued_bytes(&mut chunks).await;
    assert!(
        (40_000..=(64 << 10) + 41_000).contains(&first),
        "{first} bytes queued for a reader that read nothing"
    );
    // Reading on releases the rest, one budget at a time, and every object arrives.
    let mut total = first;
    while total < 10 * 40_000 {
        let chunk =
            tokio::time::timeout(Duration::from_secs(10), chunks.next()).await.unwrap().unwrap().unwrap();
        total += chunk.len();
    }
    assert!(total < 10 * 41_000, "{total}");
}

#[tokio::test]
async fn a_watcher_that_does_not_keep_up_is_closed_and_one_that_does_is_not() {
    let sim = with_budget(4 << 10, Duration::from_millis(50), 1, 10).await;
    let (_, list) = call(&sim, "GET", CM, "", "").await;
    let revision = list["metadata"]["resourceVersion"].as_str().unwrap().to_string();
    let mut slow = open_watch(&sim, &format!("resourceVersion={revision}")).await;
    let mut fast = open_watch(&sim, &format!("resourceVersion={revision}")).await;
    let reader = tokio::spawn(async move {
        let mut events = 0;
        let mut pending = Vec::new();
        while let Some(Ok(chunk)) = fast.next().await {
            pending.extend_from_slice(&chunk);
            events = pending.iter().filter(|b| **b == b'\n').count();
            if events == 8 {
                break;
            }
        }
        events
    });
    for n in 0..8 {
        let body = json!({"metadata": {"name": format!("live-{n}")}, "data": {"k": "y".repeat(3000)}});
        let (code, _) = call(&sim, "POST", CM, "application/json", body.to_string()).await;
        assert_eq!(code, 201);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(tokio::time::timeout(Duration::from_secs(10), reader).await.unwrap().unwrap(), 8);
    // The slow one got what fit, then its stream ended: no error event, just the end.
    let mut received = Vec::new();
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(chunk) = slow.next().await {
            received.extend_from_slice(&chunk.unwrap());
        }
    })
    .await;
    assert!(ended.is_ok(), "the unresponsive watcher's stream was not closed");
    let text = String::from_utf8(received).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(!lines.is_empty() && lines.len() < 8, "{} events reached the slow watcher", lines.len());
    assert!(lines.iter().all(|line| line.starts_with(r#"{"type":"ADDED""#)), "{text:.200}");
}

#[tokio::test]
async fn a_timeout_no_clock_can_add_saturates() {
    let sim = with_budget(1 << 20, Duration::from_millis(100), 1, 10).await;
    // The issue's panic: i64::MAX seconds opens a stream that sends the current state and stays.
    let mut chunks = open_watch(&sim, "timeoutSeconds=9223372036854775807").await;
    let mut received = Vec::new();
    while !received.ends_with(b"\n") {
        let chunk = tokio::time::timeout(Duration::from_secs(10), chunks.next()).await.unwrap().unwrap();
        received.extend_from_slice(&chunk.unwrap());
    }
    assert!(received.starts_with(br#"{"type":"ADDED""#));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), chunks.next()).await.is_err(),
        "the stream stays open"
    );
    // Past i64 it is not an integer parameter at all: 400, as upstream's parameter decoding.
    let (code, body) =
        call(&sim, "GET", &format!("{CM}?watch=true&timeoutSeconds=18446744073709551616"), "", "").await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")), "{body}");
}

/// A raw request through the token layer and router `sim serve` serves (`token`: the bearer
/// token, if any); returns the status, the headers and the body text.
async fn raw(
    router: &axum::Router,
    method: &str,
    uri: &str,
    token: Option<&str>,
) -> (u16, axum::http::HeaderMap, String) {
    use tower::ServiceExt;
    let mut request = axum::http::Request::builder().method(method).uri(uri);
    if let Some(token) = token {
        request = request.header("authorization", format!("Bearer {token}"));
    }
    let response = router.clone().oneshot(request.body(Body::empty()).unwrap()).await.unwrap();
    let (parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    (parts.status.as_u16(), parts.headers, String::from_utf8_lossy(&bytes).into_owned())
}

const ADMIN: &str = "admin-token";
const VIEWER: &str = "viewer-token";

fn served(sim: &Harness) -> axum::Router {
    let tokens = lab_runner::sim::auth::Tokens {
        admin: ADMIN.into(),
        viewer: VIEWER.into(),
        learner: "learner-token".into(),
    };
    lab_runner::sim::auth::layer(sim.router(), std::sync::Arc::new(tokens))
}

#[tokio::test]
async fn health_endpoints_answer_as_upstreams_and_anyone_may_read_them() {
    let sim = Harness::start();
    let router = served(&sim);
    let (code, headers, body) = raw(&router, "GET", "/readyz?verbose", None).await;
    assert_eq!(code, 200);
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert_eq!(
        body,
        "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n[+]shutdown ok\nreadyz check passed\n"
    );
    assert_eq!(raw(&router, "GET", "/livez", None).await.2, "ok");
    assert_eq!(raw(&router, "GET", "/healthz", None).await.2, "ok");
    let (_, _, body) =
        raw(&router, "GET", "/livez?verbose=1&exclude=etcd&exclude=nope&exclude=other", None).await;
    assert_eq!(
        body,
        "[+]ping ok\n[+]etcd excluded: ok\n[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\nwarn: some health checks cannot be excluded: no matches for \"nope\",\"other\"\nlivez check passed\n"
    );
    // One check at its own path; those need a token (the public paths are the three roots).
    assert_eq!(raw(&router, "GET", "/readyz/etcd", Some(VIEWER)).await.2, "ok");
    assert_eq!(
        raw(
            &router,
            "GET",
            "/healthz/poststarthook/scheduling/bootstrap-system-priority-classes",
            Some(VIEWER)
        )
        .await
        .2,
        "ok"
    );
    assert_eq!(raw(&router, "GET", "/readyz/nothing", Some(VIEWER)).await.0, 404);
    assert_eq!(raw(&router, "GET", "/readyz/etcd", None).await.0, 401);
    assert_eq!(raw(&router, "GET", "/version", None).await.0, 401);
    assert_eq!(raw(&router, "POST", "/readyz", None).await.0, 401);
    // Once the server begins to stop, readiness fails and liveness does not.
    sim.state.health.shutting_down.store(true, std::sync::atomic::Ordering::Release);
    let (code, _, body) = raw(&router, "GET", "/readyz", None).await;
    assert_eq!(code, 500);
    assert_eq!(
        body,
        "[+]ping ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n"
    );
    let (code, _, body) = raw(&router, "GET", "/readyz/shutdown", Some(ADMIN)).await;
    assert_eq!((code, body.as_str()), (500, "internal server error: process is shutting down\n"));
    assert_eq!(raw(&router, "GET", "/livez", None).await.0, 200);
}

/// The value of the sample `name{labels}` in a metrics text (labels as printed, in order).
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    text.lines().filter(|line| !line.starts_with('#')).find_map(|line| {
        let (series, value) = line.rsplit_once(' ')?;
        let (metric, rest) = series.split_once('{').unwrap_or((series, "}"));
        if metric != name {
            return None;
        }
        let all = labels.iter().all(|(key, want)| rest.contains(&format!("{key}=\"{want}\"")));
        all.then(|| value.parse().ok()).flatten()
    })
}

#[tokio::test]
async fn metrics_carry_upstreams_names_and_only_the_admin_reads_them() {
    let sim = Harness::start();
    let router = served(&sim);
    let created = json!({"metadata": {"name": "a"}, "data": {"k": "v"}}).to_string();
    let (code, _) = call(&sim, "POST", CM, "application/json", created).await;
    assert_eq!(code, 201);
    assert_eq!(call(&sim, "GET", CM, "", "").await.0, 200);
    assert_eq!(call(&sim, "GET", &format!("{CM}/missing"), "", "").await.0, 404);
    assert_eq!(raw(&router, "GET", "/readyz", None).await.0, 200);
    let mut watch = open_watch(&sim, "").await;
    assert!(watch.next().await.is_some());

    let (code, headers, text) = raw(&router, "GET", "/metrics", Some(ADMIN)).await;
    assert_eq!(code, 200);
    assert_eq!(headers["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    let list = [
        ("verb", "LIST"),
        ("resource", "configmaps"),
        ("scope", "namespace"),
        ("code", "200"),
        ("component", "apiserver"),
    ];
    assert_eq!(sample(&text, "apiserver_request_total", &list), Some(1.0), "{text}");
    let post = [
        ("verb", "POST"),
        ("resource", "configmaps"),
        ("scope", "resource"),
        ("code", "201"),
        ("version", "v1"),
    ];
    assert_eq!(sample(&text, "apiserver_request_total", &post), Some(1.0));
    let missing = [("verb", "GET"), ("resource", "configmaps"), ("code", "404")];
    assert_eq!(sample(&text, "apiserver_request_total", &missing), Some(1.0));
    let probe = [("verb", "GET"), ("subresource", "/readyz"), ("code", "200")];
    assert_eq!(sample(&text, "apiserver_request_total", &probe), Some(1.0));
    let histogram = [("verb", "POST"), ("resource", "configmaps"), ("le", "+Inf")];
    assert_eq!(sample(&text, "apiserver_request_duration_seconds_bucket", &histogram), Some(1.0));
    let watching = [("verb", "WATCH"), ("resource", "configmaps"), ("scope", "namespace")];
    assert_eq!(sample(&text, "apiserver_longrunning_requests", &watching), Some(1.0));
    assert!(sample(&text, "apiserver_current_inflight_requests", &[("request_kind", "readOnly")]).is_some());
    let stored = [("operation", "create"), ("type", "configmaps"), ("le", "+Inf")];
    assert_eq!(sample(&text, "etcd_request_duration_seconds_bucket", &stored), Some(1.0));
    assert_eq!(sample(&text, "apiserver_storage_objects", &[("resource", "configmaps")]), Some(1.0));
    assert!(sample(&text, "process_resident_memory_bytes", &[]).is_some_and(|bytes| bytes > 0.0));
    assert!(text.contains("# HELP apiserver_request_total [STABLE] Counter of apiserver requests"));
    // The watch ends: it is no longer running, and its request is counted.
    drop(watch);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let (_, _, text) = raw(&router, "GET", "/metrics", Some(ADMIN)).await;
    assert_eq!(sample(&text, "apiserver_longrunning_requests", &watching), Some(0.0));
    assert_eq!(sample(&text, "apiserver_request_total", &[("verb", "WATCH"), ("code", "200")]), Some(1.0));

    let (code, _, body) = raw(&router, "GET", "/metrics", Some(VIEWER)).await;
    assert_eq!(code, 403);
    let status: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(status["message"], "forbidden: User \"lab-runner-viewer\" cannot get path \"/metrics\"");
    assert_eq!(raw(&router, "GET", "/metrics", None).await.0, 401);
}

/// A simulator that lets one read and one mutation be in flight, and requests take 300 ms.
fn with_small_limits() -> Harness {
    let mut state = SimState::new(
        Store::in_memory().unwrap(),
        Clock::manual(lab_runner::sim::harness::START.parse().unwrap()),
    );
    let limits = InFlightLimits { read_only: 1, mutating: 1, request_timeout: Duration::from_millis(300) };
    state.in_flight = std::sync::Arc::new(InFlight::new(limits));
    Harness::with_state(state)
}

/// Starts a request whose body never ends: it holds its place in flight until timed out.
fn stalled(sim: &Harness, method: &str, uri: &str) -> tokio::task::JoinHandle<(u16, Value)> {
    let (_keep, receiver) = tokio::sync::mpsc::channel::<Result<axum::body::Bytes, std::io::Error>>(1);
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/merge-patch+json")
        .body(body)
        .unwrap();
    let sim = sim.clone();
    tokio::spawn(async move {
        let _keep = _keep;
        let response = sim.request(request).await;
        let code = response.status().as_u16();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (code, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    })
}

#[tokio::test]
async fn requests_past_the_in_flight_limits_get_429_and_slow_ones_504() {
    let sim = with_small_limits();
    let router = served(&sim);
    let (code, _) = call(&sim, "POST", CM, "application/json", r#"{"metadata":{"name":"a"}}"#).await;
    assert_eq!(code, 201);
    let held = stalled(&sim, "PATCH", &format!("{CM}/a"));
    tokio::time::sleep(Duration::from_millis(50)).await;
    // The one mutation allowed is in flight: another is refused as maxinflight.go refuses it.
    let (code, headers, body) = raw(&router, "DELETE", &format!("{CM}/a"), Some(ADMIN)).await;
    assert_eq!(code, 429);
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(headers["content-type"], "text/plain; charset=utf-8");
    assert_eq!(body, "Too many requests, please try again later.\n");
    // Reads have their own budget, probes and watches none.
    assert_eq!(raw(&router, "GET", &format!("{CM}/a"), Some(ADMIN)).await.0, 200);
    assert_eq!(raw(&router, "GET", "/readyz", None).await.0, 200);
    let mut watch = open_watch(&sim, "").await;
    assert!(watch.next().await.is_some());
    // The stalled one times out as upstream's request timeout answers.
    let (code, status) = held.await.unwrap();
    assert_eq!(code, 504, "{status}");
    assert_eq!(status["reason"], "Timeout");
    assert_eq!(status["message"], "Timeout: request did not complete within the allotted timeout");
    assert_eq!(status["details"], json!({}));
    // Its place is free again.
    assert_eq!(raw(&router, "DELETE", &format!("{CM}/a"), Some(ADMIN)).await.0, 200);
    let (_, _, text) = raw(&router, "GET", "/metrics", Some(ADMIN)).await;
    let refused = [("verb", "DELETE"), ("resource", "configmaps"), ("code", "429")];
    assert_eq!(sample(&text, "apiserver_request_total", &refused), Some(1.0), "{text}");
    assert_eq!(
        sample(&text, "apiserver_current_inflight_requests", &[("request_kind", "mutating")]),
        Some(1.0)
    );
}

mod socket {
    //! Connection hygiene on a real TLS socket, with small limits.

    use std::{net::SocketAddr, sync::Arc, time::Duration};

    use lab_runner::sim::{harness::Harness, server::transport, tls::TlsMaterial};
    use rustls::pki_types::{CertificateDer, ServerName, pem::PemObject};
    use tokio::{
        io::{AsyncReadExt, AsyncWriteExt},
        net::TcpStream,
    };

    use super::{ADMIN, served};

    const LIMITS: transport::Limits = transport::Limits {
        read_header: Duration::from_millis(300),
        idle: Duration::from_millis(500),
        max_connections: 3,
    };

    struct Server {
        addr: SocketAddr,
        client: tokio_rustls::TlsConnector,
        _stop: tokio::sync::oneshot::Sender<()>,
        _dir: tempfile::TempDir,
    }

    async fn start() -> Server {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let dir = tempfile::tempdir().unwrap();
        let tls = TlsMaterial::load_or_create(dir.path(), &["127.0.0.1".to_string()]).unwrap();
        let listener = transport::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = served(&Harness::start());
        let config = tls.server_config().unwrap();
        tokio::spawn(transport::serve_tls(listener, config, app, LIMITS, async move {
            let _ = stopped.await;
        }));
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from_pem_slice(tls.ca_pem.as_bytes()).unwrap()).unwrap();
        let config = rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth();
        Server { addr, client: tokio_rustls::TlsConnector::from(Arc::new(config)), _stop: stop, _dir: dir }
    }

    type Tls = tokio_rustls::client::TlsStream<TcpStream>;

    impl Server {
        async fn connect(&self) -> Tls {
            let tcp = TcpStream::connect(self.addr).await.unwrap();
            let name = ServerName::try_from("127.0.0.1").unwrap();
            self.client.connect(name, tcp).await.unwrap()
        }
    }

    /// Sends `GET path` on `stream` and reads the answer's status line and body (by length).
    async fn get(stream: &mut Tls, path: &str, token: Option<&str>) -> (u16, String) {
        let authorization =
            token.map(|token| format!("Authorization: Bearer {token}\r\n")).unwrap_or_default();
        let request = format!("GET {path} HTTP/1.1\r\nHost: sim\r\n{authorization}\r\n");
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            let mut byte = [0u8; 1];
            stream.read_exact(&mut byte).await.unwrap();
            head.push(byte[0]);
        }
        let head = String::from_utf8(head).unwrap();
        let code = head[9..12].parse().unwrap();
        let length = head
            .lines()
            .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_string))
            .map_or(0, |n| n.trim().parse().unwrap());
        let mut body = vec![0u8; length];
        stream.read_exact(&mut body).await.unwrap();
        (code, String::from_utf8(body).unwrap())
    }

    /// True when the server closes `stream` within `within` (end of stream or a reset).
    async fn closed_within(stream: &mut (impl AsyncReadExt + Unpin), within: Duration) -> bool {
        let mut buffer = [0u8; 64];
        matches!(tokio::time::timeout(within, stream.read(&mut buffer)).await, Ok(Ok(0) | Err(_)))
    }

    #[tokio::test]
    async fn silent_and_idle_connections_are_closed_in_time() {
        let server = start().await;
        // A TCP connection that never starts TLS, and a TLS one that never sends a request.
        let mut raw = TcpStream::connect(server.addr).await.unwrap();
        let mut silent = server.connect().await;
        assert!(closed_within(&mut raw, Duration::from_secs(3)).await, "the handshake did not time out");
        assert!(
            closed_within(&mut silent, Duration::from_secs(3)).await,
            "the request header did not time out"
        );
        // A keep-alive connection serves a second request, then is closed once idle too long.
        let mut kept = server.connect().await;
        assert_eq!(get(&mut kept, "/readyz", None).await, (200, "ok".to_string()));
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(get(&mut kept, "/livez", None).await, (200, "ok".to_string()));
        assert!(closed_within(&mut kept, Duration::from_secs(3)).await, "the idle connection stayed open");
    }

    #[tokio::test]
    async fn at_the_bound_the_longest_waiting_idle_connection_makes_room() {
        let server = start().await;
        let mut oldest = server.connect().await;
        tokio::time::sleep(Duration::from_millis(20)).await;
        let _second = server.connect().await;
        let _third = server.connect().await;
        let mut fourth = server.connect().await;
        assert_eq!(get(&mut fourth, "/readyz", None).await.0, 200);
        assert!(
            closed_within(&mut oldest, Duration::from_millis(200)).await,
            "the oldest idle connection stayed"
        );
    }

    #[tokio::test]
    async fn when_every_connection_has_a_request_in_flight_a_new_one_is_refused() {
        let server = start().await;
        let mut watches = Vec::new();
        for _ in 0..3 {
            let mut stream = server.connect().await;
            let request = format!(
                "GET /api/v1/namespaces/default/configmaps?watch=true HTTP/1.1\r\nHost: sim\r\nAuthorization: Bearer {ADMIN}\r\n\r\n"
            );
            stream.write_all(request.as_bytes()).await.unwrap();
            let mut head = [0u8; 12];
            stream.read_exact(&mut head).await.unwrap();
            assert_eq!(&head, b"HTTP/1.1 200");
            watches.push(stream);
        }
        let tcp = TcpStream::connect(server.addr).await.unwrap();
        let name = ServerName::try_from("127.0.0.1").unwrap();
        let refused =
            tokio::time::timeout(Duration::from_secs(3), server.client.connect(name, tcp)).await.unwrap();
        assert!(refused.is_err(), "a fourth connection was served while three watches ran");
        // A watch ends: there is room again.
        drop(watches.pop());
        tokio::time::sleep(Duration::from_millis(100)).await;
        let mut next = server.connect().await;
        assert_eq!(get(&mut next, "/readyz", None).await.0, 200);
    }

    #[test]
    fn the_soft_file_limit_is_raised_to_the_hard_one() {
        let raised = transport::raise_file_limit();
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(raised, limit.current);
        assert_eq!(limit.current, limit.maximum);
        assert_eq!(transport::connection_bound(&LIMITS, Some(100)), 3);
        assert_eq!(transport::connection_bound(&transport::Limits::default(), Some(1024)), 960);
    }

    /// A burst of connections past tokio's default backlog (128, the standard library's) is queued, not dropped: each
    /// completes its handshake with the kernel at once, where a dropped SYN waits a second for
    /// its retransmission (the listener never accepts here, so the queue holds them all).
    #[tokio::test]
    async fn a_burst_past_tokios_backlog_is_queued_not_dropped() {
        const BURST: usize = 1_100;
        let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
            .ok()
            .and_then(|text| text.trim().parse().ok())
            .unwrap_or(0);
        let files = transport::raise_file_limit().unwrap_or(u64::MAX);
        if somaxconn <= BURST || files < 2 * BURST as u64 {
            println!(
                "skipped: net.core.somaxconn is {somaxconn} and the file limit {files}; the test needs a backlog over {BURST}"
            );
            return;
        }
        let listener = transport::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let connects =
            (0..BURST).map(|_| tokio::time::timeout(Duration::from_millis(700), TcpStream::connect(addr)));
        let connected = futures::future::join_all(connects).await;
        let queued = connected.iter().filter(|c| matches!(c, Ok(Ok(_)))).count();
        assert_eq!(queued, BURST, "connections past the backlog were dropped");
    }

    /// An accepted connection's send buffer is bounded (Linux reports twice what is set), not
    /// left to autotuning, which grows it to megabytes for a client that reads nothing.
    #[tokio::test]
    async fn an_accepted_connection_has_a_bounded_send_buffer() {
        let listener = transport::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let _client = TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        transport::bound_send_buffer(&accepted);
        let bounded = rustix::net::sockopt::socket_send_buffer_size(&accepted).unwrap();
        assert_eq!(bounded, 2 * transport::SEND_BUFFER_BYTES, "the send buffer was left to the kernel");
    }
}
