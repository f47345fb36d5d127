//! Raw HTTP requests to an in-process simulator (`sim::harness::Harness`): a status code, the
//! response headers and the JSON body, for tests that check upstream's exact answers.

use axum::{body::Body, http::HeaderMap};
use lab_runner::sim::harness::Harness;
use serde_json::{Value, json};

/// One raw request; returns the status code, the headers and the JSON body (a string when the
/// body is not JSON). Parsed without serde_json's 128-level limit, so an answer nested as deep as
/// the simulator accepts reads back whole.
pub async fn send(
    sim: &Harness,
    method: &str,
    uri: &str,
    content_type: &str,
    body: impl Into<Body>,
) -> (u16, HeaderMap, Value) {
    let request = axum::http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(body.into())
        .unwrap();
    let response = sim.request(request).await;
    let code = response.status().as_u16();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
    let body = lab_runner::sim::gojson::from_checked(&bytes)
        .unwrap_or_else(|_| json!(String::from_utf8_lossy(&bytes)));
    (code, headers, body)
}

/// One raw request; returns the status code and the JSON body.
pub async fn call(
    sim: &Harness,
    method: &str,
    uri: &str,
    content_type: &str,
    body: impl Into<Body>,
) -> (u16, Value) {
    let (code, _, body) = send(sim, method, uri, content_type, body).await;
    (code, body)
}
