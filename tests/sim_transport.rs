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
    server::{SimState, watch::WatchBudget},
    store::Store,
};
use serde_json::{Value, json};

/// One raw request through the router; returns the status code and the body (JSON when it
/// parses, else the text as a JSON string).
async fn call(
    sim: &Harness,
    method: &str,
    uri: &str,
    content_type: &str,
    body: impl Into<Body>,
) -> (u16, Value) {
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(body.into())
        .unwrap();
    let response = sim.request(request).await;
    let code = response.status().as_u16();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let value = lab_runner::sim::gojson::from_checked(&bytes)
        .unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
    (code, value)
}

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
async fn with_budget(pending_bytes: usize, unresponsive_after: Duration, count: usize, size: usize) -> Harness {
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
    let request = axum::http::Request::builder().uri(format!("{CM}?watch=true&{query}")).body(Body::empty()).unwrap();
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
    assert!((40_000..=(64 << 10) + 41_000).contains(&first), "{first} bytes queued for a reader that read nothing");
    // Reading on releases the rest, one budget at a time, and every object arrives.
    let mut total = first;
    while total < 10 * 40_000 {
        let chunk = tokio::time::timeout(Duration::from_secs(10), chunks.next()).await.unwrap().unwrap().unwrap();
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
    assert!(tokio::time::timeout(Duration::from_millis(200), chunks.next()).await.is_err(), "the stream stays open");
    // Past i64 it is not an integer parameter at all: 400, as upstream's parameter decoding.
    let (code, body) = call(&sim, "GET", &format!("{CM}?watch=true&timeoutSeconds=18446744073709551616"), "", "").await;
    assert_eq!((code, body["reason"].as_str()), (400, Some("BadRequest")), "{body}");
}
