//! The simulator under hostile input (issue #16): upstream's request limits (body size, JSON
//! patch operations, the bytes `copy` may add, YAML aliases), each with its status and text,
//! and the amplifying patch refused by a real server whose memory stays small.

use axum::body::Body;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::{
    Api,
    api::{Patch, PatchParams, PostParams},
};
use lab_runner::sim::{
    auth::{self, Tokens},
    harness::Harness,
};
use serde_json::{Value, json};

use crate::support::http::call;

/// The patch of the issue: a 1 KB annotation map, then `copies` copies of the map into itself,
/// each doubling the object.
fn amplifying_patch(copies: usize) -> Value {
    let mut operations =
        vec![json!({"op": "add", "path": "/metadata/annotations", "value": {"a": "x".repeat(1000)}})];
    operations.extend((0..copies).map(|n| {
        json!({"op": "copy", "from": "/metadata/annotations", "path": format!("/metadata/annotations/a{n}")})
    }));
    Value::Array(operations)
}

/// Nested YAML anchors, each level ten aliases of the one below: 10^9 strings once expanded.
fn billion_laughs(prefix: &str) -> String {
    let mut text = format!("{prefix}l0: &l0 \"lol\"\n");
    for level in 1..=9 {
        let aliases = vec![format!("*l{}", level - 1); 10].join(", ");
        text.push_str(&format!("  l{level}: &l{level} [{aliases}]\n"));
    }
    text
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const TARGET: &str = "/api/v1/namespaces/default/configmaps/target";

async fn with_target() -> Harness {
    let sim = Harness::start();
    let (code, body) = call(
        &sim,
        "POST",
        CM,
        "application/json",
        json!({"metadata": {"name": "target"}, "data": {"k": "v"}}).to_string(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    sim
}

#[tokio::test]
async fn upstream_limits_table() {
    let sim = with_target().await;
    let too_many: Vec<Value> =
        (0..10_001).map(|_| json!({"op": "test", "path": "/metadata/name", "value": "target"})).collect();
    let just_enough: Vec<Value> =
        (0..10_000).map(|_| json!({"op": "test", "path": "/metadata/name", "value": "target"})).collect();
    // 3 MiB + 1 byte of data: one byte over the limit.
    let huge_create = json!({"metadata": {"name": "huge"}, "data": {"k": "x".repeat(3 * 1024 * 1024)}});
    struct Case {
        name: &'static str,
        method: &'static str,
        uri: String,
        content_type: &'static str,
        body: String,
        code: u16,
        reason: &'static str,
        message: String,
    }
    let cases = [
        Case {
            name: "a JSON patch of 10,001 operations",
            method: "PATCH",
            uri: TARGET.into(),
            content_type: "application/json-patch+json",
            body: Value::Array(too_many).to_string(),
            code: 413,
            reason: "RequestEntityTooLarge",
            message:
                "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
                    .into(),
        },
        Case {
            name: "a JSON patch of 20,000 operations (the issue's)",
            method: "PATCH",
            uri: TARGET.into(),
            content_type: "application/json-patch+json",
            body: json!(
                (0..20_000)
                    .map(|_| json!({"op": "test", "path": "/data/k", "value": "v"}))
                    .collect::<Vec<_>>()
            )
            .to_string(),
            code: 413,
            reason: "RequestEntityTooLarge",
            message:
                "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 20000"
                    .into(),
        },
        Case {
            // Twelve doublings copy 4 MiB in all, past the 3 MiB budget. (The issue's 40 run only
            // in a child process with a bounded address space, below: should the budget ever
            // regress, this in-process case grows to 4 MiB, not to the machine's memory.)
            name: "the amplifying patch: 12 self-copies of a 1 KB map",
            method: "PATCH",
            uri: TARGET.into(),
            content_type: "application/json-patch+json",
            body: amplifying_patch(12).to_string(),
            code: 422,
            reason: "Invalid",
            message: "the server rejected our request due to an error in our request".into(),
        },
        Case {
            name: "a create body one byte over 3 MiB",
            method: "POST",
            uri: CM.into(),
            content_type: "application/json",
            body: huge_create.to_string(),
            code: 413,
            reason: "RequestEntityTooLarge",
            message: "Request entity too large: limit is 3145728".into(),
        },
        Case {
            name: "a merge patch over 3 MiB",
            method: "PATCH",
            uri: TARGET.into(),
            content_type: "application/merge-patch+json",
            body: json!({"data": {"big": "x".repeat(3 * 1024 * 1024)}}).to_string(),
            code: 413,
            reason: "RequestEntityTooLarge",
            message: "Request entity too large: limit is 3145728".into(),
        },
        Case {
            name: "a YAML create whose aliases expand to 10^9 strings",
            method: "POST",
            uri: CM.into(),
            content_type: "application/yaml",
            body: billion_laughs("metadata:\n  name: laughs\ndata:\n  k: v\nx:\n  "),
            code: 400,
            reason: "BadRequest",
            message: String::new(),
        },
        Case {
            name: "a server-side apply whose aliases expand to 10^9 strings",
            method: "PATCH",
            uri: format!("{TARGET}?fieldManager=m"),
            content_type: "application/apply-patch+yaml",
            body: billion_laughs(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\ndata:\n  k: v\nx:\n  ",
            ),
            code: 400,
            reason: "BadRequest",
            message: String::new(),
        },
    ];
    for case in cases {
        let (code, status) = call(&sim, case.method, &case.uri, case.content_type, case.body).await;
        assert_eq!(code, case.code, "{}: {status}", case.name);
        assert_eq!(status["reason"], case.reason, "{}: {status}", case.name);
        assert_eq!(status["code"], case.code, "{}: {status}", case.name);
        if !case.message.is_empty() {
            assert_eq!(status["message"], case.message.as_str(), "{}", case.name);
        }
    }
    // None of them changed the target or created anything.
    let api: Api<ConfigMap> = Api::default_namespaced(sim.client.clone());
    let target = api.get("target").await.unwrap();
    assert_eq!(target.metadata.annotations, None);
    assert_eq!(target.data.unwrap().len(), 1);
    let names: Vec<String> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(names, ["target"]);

    // Exactly 10,000 operations is within the limit.
    let (code, body) =
        call(&sim, "PATCH", TARGET, "application/json-patch+json", Value::Array(just_enough).to_string())
            .await;
    assert_eq!(code, 200, "{body}");
}

#[tokio::test]
async fn copies_within_the_copy_budget_are_applied() {
    // Seven copies of a 1 KB annotation copy 7 KB in all, well under upstream's 3 MiB.
    let sim = with_target().await;
    let mut operations =
        vec![json!({"op": "add", "path": "/metadata/annotations", "value": {"a": "x".repeat(1000)}})];
    operations.extend(
        (0..7).map(|n| json!({"op": "copy", "from": "/metadata/annotations/a", "path": format!("/metadata/annotations/a{n}")})),
    );
    let (code, body) =
        call(&sim, "PATCH", TARGET, "application/json-patch+json", Value::Array(operations).to_string())
            .await;
    assert_eq!(code, 200, "{}", body["message"]);
    let annotations = body["metadata"]["annotations"].as_object().unwrap();
    assert_eq!(annotations.len(), 8);
}

/// `VmHWM` (peak resident set) of process `pid` in bytes, from the kernel's own accounting.
fn peak_rss_bytes(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).expect("VmHWM in /proc/PID/status");
    let kib: u64 = line.trim_start_matches("VmHWM:").trim().trim_end_matches("kB").trim().parse().unwrap();
    kib * 1024
}

/// A child process killed when the test ends, whatever happened.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_amplifying_patch_is_refused_by_a_real_server_that_stays_small() {
    const LIMIT: u64 = 300 * 1024 * 1024;
    let dir = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("lab-runner");
    let serve = std::process::Command::new(binary)
        .args(["sim", "serve", "--nodes", "1", "--state-dir"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = KillOnDrop(serve);
    let pid = serve.0.id();
    // Should the limit ever regress, the child fails to allocate past 4 GiB of address space
    // (and the test fails) instead of taking the shared machine down as the issue's run did.
    let address_space = rustix::process::Rlimit { current: Some(4 << 30), maximum: Some(4 << 30) };
    rustix::process::prlimit(
        Some(rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap()),
        rustix::process::Resource::As,
        address_space,
    )
    .unwrap();
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(serve.0.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("simulator serving https://127.0.0.1:"), "{first}");

    let _ = rustls::crypto::ring::default_provider().install_default();
    let kubeconfig = kube::config::Kubeconfig::read_from(dir.path().join("kubeconfig")).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
    let api: Api<ConfigMap> = Api::default_namespaced(kube::Client::try_from(config).unwrap());
    let target = serde_json::from_value(json!({"metadata": {"name": "target"}, "data": {"k": "v"}})).unwrap();
    api.create(&PostParams::default(), &target).await.unwrap();

    for copies in [40, 60] {
        let patch: json_patch::Patch = serde_json::from_value(amplifying_patch(copies)).unwrap();
        match api.patch("target", &PatchParams::default(), &Patch::Json::<()>(patch)).await {
            Err(kube::Error::Api(status)) => {
                assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"), "{status:?}")
            }
            other => panic!("the amplifying patch with {copies} copies was not refused: {other:?}"),
        }
    }
    assert_eq!(api.get("target").await.unwrap().metadata.annotations, None);
    let peak = peak_rss_bytes(pid);
    println!("simulator peak RSS after the amplifying patches: {} MiB", peak >> 20);
    assert!(peak < LIMIT, "the server's peak RSS reached {} MiB", peak >> 20);
}

/// kube-apiserver's health paths, read as a kubelet's probe reads them: no token needed
/// (system:public-info-viewer), `ok` as text, the checks with `?verbose`; a wrong token is still
/// a 401, and no other path opens without a token.
#[tokio::test]
async fn the_health_paths_answer_without_a_token_as_kube_apiserver_does() {
    let sim = Harness::start();
    let tokens = Tokens {
        admin: "admin-token".into(),
        viewer: "viewer-token".into(),
        learner: "learner-token".into(),
    };
    let router = auth::layer(sim.router(), std::sync::Arc::new(tokens));
    let get = |uri: &str, authorization: Option<&str>| {
        let mut request = axum::http::Request::builder().uri(uri);
        if let Some(authorization) = authorization {
            request = request.header("authorization", authorization);
        }
        let request = request.body(Body::empty()).unwrap();
        let router = router.clone();
        async move {
            let response = tower::ServiceExt::oneshot(router, request).await.unwrap();
            let status = response.status().as_u16();
            let content_type = response
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_string())
                .unwrap_or_default();
            let body = axum::body::to_bytes(response.into_body(), 1 << 20).await.unwrap();
            (status, content_type, String::from_utf8(body.to_vec()).unwrap())
        }
    };
    for path in ["/healthz", "/livez", "/readyz"] {
        assert_eq!(get(path, None).await, (200, "text/plain; charset=utf-8".into(), "ok".into()), "{path}");
    }
    assert_eq!(
        get("/livez?verbose", None).await.2,
        "[+]ping ok\n[+]etcd ok\n[+]poststarthook/scheduling/bootstrap-system-priority-classes ok\nlivez check passed\n"
    );
    // One check's own path is not among system:public-info-viewer's nonResourceURLs (the three
    // roots and /version): it needs a token.
    assert_eq!(get("/readyz/ping", None).await.0, 401);
    assert_eq!(get("/readyz/ping", Some("Bearer viewer-token")).await.2, "ok");
    assert_eq!(get("/readyz/nothing", Some("Bearer viewer-token")).await.0, 404);
    assert_eq!(get("/readyz", Some("Bearer wrong-token")).await.0, 401);
    assert_eq!(get("/readyz", Some("Bearer viewer-token")).await.0, 200);
    assert_ne!(get("/api/v1/namespaces", None).await.0, 200, "a resource needs a token");
}

#[tokio::test]
async fn the_bearer_scheme_is_matched_case_insensitively() {
    let sim = Harness::start();
    let tokens = Tokens {
        admin: "admin-token".into(),
        viewer: "viewer-token".into(),
        learner: "learner-token".into(),
    };
    let router = auth::layer(sim.router(), std::sync::Arc::new(tokens));
    for (authorization, code) in [
        ("Bearer admin-token", 200),
        ("bearer admin-token", 200),
        ("BEARER admin-token", 200),
        ("bearer wrong-token", 401),
        ("Basic admin-token", 401),
    ] {
        let request = axum::http::Request::builder()
            .uri("/api/v1/namespaces")
            .header("authorization", authorization)
            .body(Body::empty())
            .unwrap();
        let response = tower::ServiceExt::oneshot(router.clone(), request).await.unwrap();
        assert_eq!(response.status().as_u16(), code, "{authorization}");
    }
}

#[cfg(unix)]
#[test]
fn the_state_directory_is_private_from_the_start() {
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let root = tempfile::tempdir().unwrap();
    // A directory `sim up` creates itself (a temp dir would already be 0700).
    let dir = root.path().join("state").join("sim");
    let sim = |command: &str| {
        crate::support::binary::lab_runner()
            .args(["sim", command, "--state-dir"])
            .arg(&dir)
            .args(if command == "up" { &["--nodes", "1"][..] } else { &[][..] })
            .output()
            .unwrap()
    };
    let up = sim("up");
    assert!(up.status.success(), "{}", crate::support::binary::stderr(&up));
    let modes: Vec<(String, u32)> = ["", "store.db", "store.db-wal", "store.db-shm", "serve.log"]
        .iter()
        .map(|name| (name.to_string(), mode(&dir.join(name))))
        .collect();
    let down = sim("down");
    assert!(down.status.success(), "{}", crate::support::binary::stderr(&down));
    assert_eq!(
        modes,
        [
            ("", 0o700),
            ("store.db", 0o600),
            ("store.db-wal", 0o600),
            ("store.db-shm", 0o600),
            ("serve.log", 0o600)
        ]
        .map(|(name, mode)| (name.to_string(), mode))
    );
}

#[tokio::test]
async fn ill_typed_objects_are_refused_on_every_write_path() {
    let sim = with_target().await;
    let (code, body) = call(
        &sim,
        "POST",
        "/api/v1/nodes",
        "application/json",
        json!({"metadata": {"name": "cpu-1"}}).to_string(),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    let go = |text: &str| text.to_string();
    let cannot_handle =
        |kind: &str, error: &str| format!("{kind} in version \"v1\" cannot be handled as a {kind}: {error}");
    let data_error = go("json: cannot unmarshal number into Go struct field ConfigMap.data of type string");
    let labels_error = go(
        "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string",
    );
    // (method, uri, content type, body, code, message; an empty message is not compared)
    let cases: Vec<(&str, String, &str, String, u16, String)> = vec![
        (
            "POST",
            CM.into(),
            "application/json",
            json!({"metadata": {"name": "a"}, "data": {"a": 1}}).to_string(),
            400,
            cannot_handle("ConfigMap", &data_error),
        ),
        (
            "POST",
            CM.into(),
            "application/yaml",
            "metadata:\n  name: a\n  labels: [x]\n".into(),
            400,
            cannot_handle("ConfigMap", &labels_error),
        ),
        (
            "PUT",
            TARGET.into(),
            "application/json",
            json!({"metadata": {"name": "target"}, "data": {"a": 1}}).to_string(),
            400,
            cannot_handle("ConfigMap", &data_error),
        ),
        (
            "POST",
            "/apis/apps/v1/namespaces/default/deployments".into(),
            "application/json",
            json!({"metadata": {"name": "d"}, "spec": {"replicas": "3"}}).to_string(),
            400,
            cannot_handle(
                "Deployment",
                "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
        ),
        (
            "POST",
            "/apis/apps/v1/namespaces/default/deployments".into(),
            "application/json",
            r#"{"metadata": {"name": "d"}, "spec": {"replicas": 1e30}}"#.into(),
            400,
            cannot_handle(
                "Deployment",
                "json: cannot unmarshal number 1e30 into Go struct field DeploymentSpec.spec.replicas of type int32",
            ),
        ),
        (
            "POST",
            "/api/v1/nodes".into(),
            "application/json",
            json!({"metadata": {"name": "n"}, "spec": {"podCIDR": 5}}).to_string(),
            400,
            cannot_handle(
                "Node",
                "json: cannot unmarshal number into Go struct field NodeSpec.spec.podCIDR of type string",
            ),
        ),
        (
            "PATCH",
            "/api/v1/nodes/cpu-1".into(),
            "application/json-patch+json",
            json!([{"op": "add", "path": "/metadata/labels", "value": ["x"]}]).to_string(),
            422,
            String::new(),
        ),
        (
            "PATCH",
            TARGET.into(),
            "application/merge-patch+json",
            json!({"data": {"a": 1}}).to_string(),
            422,
            String::new(),
        ),
        (
            "PATCH",
            TARGET.into(),
            "application/strategic-merge-patch+json",
            json!({"metadata": {"labels": ["x"]}}).to_string(),
            422,
            String::new(),
        ),
        (
            "PATCH",
            format!("{TARGET}?fieldManager=m"),
            "application/apply-patch+yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: target\ndata:\n  a: 1\n".into(),
            // Server-side apply converts the configuration with structured-merge-diff, whose
            // error upstream does not turn into a Status: 500, no reason (kubernetes#122480).
            500,
            "failed to create typed patch object (/target; /v1, Kind=ConfigMap): .data.a: expected string, got &value.valueUnstructured{Value:1}".into(),
        ),
    ];
    for (method, uri, content_type, body, code, message) in cases {
        let (got, status) = call(&sim, method, &uri, content_type, body.clone()).await;
        assert_eq!(got, code, "{method} {uri} {body}: {status}");
        if !message.is_empty() {
            assert_eq!(status["message"], message.as_str(), "{method} {uri} {body}");
        }
        if code == 422 {
            // Upstream: field.Invalid(field.NewPath("patch"), <patched JSON>, <decode error>).
            assert_eq!(status["details"]["causes"][0]["field"], "patch", "{status}");
            let cause = status["details"]["causes"][0]["message"].as_str().unwrap();
            assert!(cause.contains("json: cannot unmarshal "), "{cause}");
        }
    }
    // Nothing ill-typed was stored: the node and the target are as they were.
    let (_, node) = call(&sim, "GET", "/api/v1/nodes/cpu-1", "application/json", "").await;
    assert_eq!(node["metadata"].get("labels"), None);
    let (_, target) = call(&sim, "GET", TARGET, "application/json", "").await;
    assert_eq!(target["data"], json!({"k": "v"}));
}

#[tokio::test]
async fn objects_are_validated_as_validate_object_meta_and_the_kind_validators_do() {
    let sim = with_target().await;
    let deployment = |replicas: i64| {
        json!({"metadata": {"name": "d"}, "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    };
    // (uri, body, the field of the first cause)
    let cases: Vec<(&str, Value, &str)> = vec![
        (CM, json!({"metadata": {"name": "a/b"}}), "metadata.name"),
        (CM, json!({"metadata": {"name": "UPPER"}}), "metadata.name"),
        (CM, json!({"metadata": {"name": "with space"}}), "metadata.name"),
        (CM, json!({"metadata": {"name": ".."}}), "metadata.name"),
        (CM, json!({"metadata": {"generateName": "Bad-"}}), "metadata.generateName"),
        (CM, json!({"metadata": {"name": "a", "labels": {"bad key!": "v"}}}), "metadata.labels"),
        (CM, json!({"metadata": {"name": "a", "labels": {"k": "x".repeat(64)}}}), "metadata.labels"),
        (
            CM,
            json!({"metadata": {"name": "a", "annotations": {"a": "x".repeat(300 * 1024)}}}),
            "metadata.annotations",
        ),
        ("/api/v1/namespaces", json!({"metadata": {"name": "a.b"}}), "metadata.name"),
        ("/apis/apps/v1/namespaces/default/deployments", deployment(-1), "spec.replicas"),
    ];
    for (uri, body, field) in cases {
        let (code, status) = call(&sim, "POST", uri, "application/json", body.to_string()).await;
        assert_eq!(code, 422, "{uri} {body}: {status}");
        assert_eq!(status["reason"], "Invalid");
        assert_eq!(status["details"]["causes"][0]["field"], field, "{status}");
    }
    let (_, status) =
        call(&sim, "POST", CM, "application/json", json!({"metadata": {"name": "UPPER"}}).to_string()).await;
    assert_eq!(
        status["message"],
        "ConfigMap \"UPPER\" is invalid: metadata.name: Invalid value: \"UPPER\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    );
    // The same rules hold for patches: a label key added by a merge patch is refused.
    let (code, status) = call(
        &sim,
        "PATCH",
        TARGET,
        "application/merge-patch+json",
        json!({"metadata": {"labels": {"bad key!": "v"}}}).to_string(),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    // What upstream accepts still passes.
    let (code, status) = call(
        &sim,
        "POST",
        CM,
        "application/json",
        json!({"metadata": {"name": "ok.name-1", "labels": {"nvidia.com/device-plugin.config": "a100_mig-1g"}}}).to_string(),
    )
    .await;
    assert_eq!(code, 201, "{status}");
}

#[tokio::test]
async fn the_engine_lists_around_a_malformed_object_an_older_store_kept() {
    let sim = Harness::start();
    let nodes = lab_runner::sim::resources::built_in().into_iter().find(|t| t.plural == "nodes").unwrap();
    // Written straight into the store, as a store from before the schema checks may hold it.
    for node in [
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1", "labels": ["x"]}}),
        json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "labels": {"gpu": "yes"}}}),
    ] {
        sim.state.store.create(&nodes, node).unwrap();
    }
    let key = lab_runner::grade::KindKey::new("v1", "Node");
    let listed = lab_runner::engine::observe::list_kind(&sim.client, &key).await.unwrap();
    let names: Vec<&str> = listed.iter().filter_map(|n| n.pointer("/metadata/name")?.as_str()).collect();
    assert_eq!(names, ["gpu-1"]);
    let typed = lab_runner::engine::observe::list_nodes(&sim.client).await.unwrap();
    assert_eq!(typed.len(), 1);
}

// --- property tests over the router ------------------------------------------------------------

mod router_properties {
    use proptest::prelude::*;

    use super::*;

    fn method() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])
    }

    fn path() -> impl Strategy<Value = String> {
        let prefix = prop::sample::select(vec![
            "/api/v1",
            "/apis/apps/v1",
            "/apis/batch/v1",
            "/apis/rbac.authorization.k8s.io/v1",
            "/api/v1/namespaces/default",
            "/apis/apps/v1/namespaces/default",
            "/api",
            "/apis",
            "/openapi/v3",
            "",
        ]);
        let segment = prop_oneof![
            prop::sample::select(vec![
                "pods",
                "configmaps",
                "nodes",
                "namespaces",
                "daemonsets",
                "deployments",
                "jobs",
                "status",
                "log",
                "exec",
                "target",
                "default",
                "..",
                ".",
                "scale",
                "binding",
                "finalize",
                "clusterroles",
            ])
            .prop_map(str::to_string),
            "[a-zA-Z0-9._~%-]{0,12}",
        ];
        (prefix, prop::collection::vec(segment, 0..5))
            .prop_map(|(prefix, segments)| format!("{prefix}/{}", segments.join("/")))
    }

    fn query() -> impl Strategy<Value = String> {
        let key = prop::sample::select(vec![
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
        ]);
        let value = prop_oneof![
            "[a-z0-9=!,()/. -]{0,24}",
            prop::sample::select(vec![
                "true",
                "0",
                "-1",
                "99999999999999999999",
                "app in (a,b)",
                "x!=",
                "All"
            ])
            .prop_map(str::to_string),
        ];
        prop::collection::vec((key, value), 0..4).prop_map(|pairs| {
            pairs
                .into_iter()
                .map(|(k, v)| {
                    let v: String = v
                        .bytes()
                        .map(|b| {
                            if b.is_ascii_alphanumeric() {
                                (b as char).to_string()
                            } else {
                                format!("%{b:02X}")
                            }
                        })
                        .collect();
                    format!("{k}={v}")
                })
                .collect::<Vec<_>>()
                .join("&")
        })
    }

    fn content_type() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "application/json",
            "application/yaml",
            "application/json-patch+json",
            "application/merge-patch+json",
            "application/strategic-merge-patch+json",
            "application/apply-patch+yaml",
            "application/vnd.kubernetes.protobuf",
            "text/plain",
            "",
        ])
    }

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>().prop_filter("finite", |f| f.is_finite()).prop_map(|f| json!(f)),
            "[a-zA-Z0-9/._ -]{0,12}".prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(
                    prop::sample::select(vec![
                        "metadata",
                        "name",
                        "labels",
                        "annotations",
                        "spec",
                        "data",
                        "replicas",
                        "op",
                        "path",
                        "value",
                        "from",
                        "apiVersion",
                        "kind",
                        "containers",
                        "selector",
                        "$patch",
                        "items",
                    ])
                    .prop_map(str::to_string),
                    inner,
                    0..4,
                )
                .prop_map(|map| Value::Object(map.into_iter().collect())),
            ]
        })
    }

    fn body() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..64),
            json_value().prop_map(|v| v.to_string().into_bytes()),
            json_value().prop_map(|v| {
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, "data": v})
                    .to_string()
                    .into_bytes()
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 1024, failure_persistence: None, ..ProptestConfig::default() })]

        /// Whatever arrives, the router answers (no panic), in time, and never with a 500 but
        /// where kube-apiserver gives one: a client's mistake is a 4xx.
        #[test]
        fn arbitrary_requests_never_panic_hang_or_500(
            method in method(), path in path(), query in query(), content_type in content_type(), body in body(),
        ) {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async {
                let sim = with_target().await;
                let uri = if query.is_empty() { path.clone() } else { format!("{path}?{query}") };
                let Ok(request) = axum::http::Request::builder()
                    .method(method)
                    .uri(&uri)
                    .header("content-type", content_type)
                    .body(Body::from(body.clone()))
                else {
                    return Ok(()); // not a request a client could send
                };
                let response = tokio::time::timeout(std::time::Duration::from_secs(20), sim.request(request))
                    .await
                    .map_err(|_| TestCaseError::fail(format!("{method} {uri} hung")))?;
                if response.status().as_u16() == 500 {
                    // The two 500s kube-apiserver 1.33 gives a client's mistake: a server-side
                    // apply configuration its type converter refuses (kubernetes#122480), and a
                    // pod Binding without a valid target (`ValidatePodBinding`'s aggregate).
                    let answer = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
                    let status: Value = serde_json::from_slice(&answer).unwrap_or_default();
                    let message = status["message"].as_str().unwrap_or_default();
                    let typed_patch = content_type == "application/apply-patch+yaml"
                        && message.starts_with("failed to create typed patch object (");
                    let binding = path.ends_with("/binding")
                        && (message.starts_with("target.") || message.starts_with("[target."));
                    prop_assert!(
                        typed_patch || binding,
                        "{method} {uri} [{content_type}] {:?} -> 500 {message}",
                        String::from_utf8_lossy(&body)
                    );
                }
                Ok(())
            })?;
        }
    }
}

#[tokio::test]
async fn out_of_range_values_and_changes_to_immutable_fields_are_refused_through_the_router() {
    let sim = with_target().await;
    let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i",
        "ports": [{"containerPort": 70000}]}]}});
    let quota = json!({"metadata": {"name": "q"}, "spec": {"hard": {"cpu": "-1"}}});
    let node = json!({"metadata": {"name": "n"}, "spec": {"podCIDR": "10.0.0.0/40"}});
    // (uri, body, the field of the first cause)
    let cases: Vec<(&str, Value, &str)> = vec![
        ("/api/v1/namespaces/default/pods", pod, "spec.containers[0].ports[0].containerPort"),
        ("/api/v1/namespaces/default/resourcequotas", quota, "spec.hard[cpu]"),
        ("/api/v1/nodes", node, "spec.podCIDRs[0]"),
    ];
    for (uri, body, field) in cases {
        let (code, status) = call(&sim, "POST", uri, "application/json", body.to_string()).await;
        assert_eq!(code, 422, "{uri} {body}: {status}");
        assert_eq!(status["details"]["causes"][0]["field"], field, "{status}");
    }

    const JOBS: &str = "/apis/batch/v1/namespaces/default/jobs";
    let job = json!({"metadata": {"name": "train"}, "spec": {"template": {"spec": {
        "containers": [{"name": "main", "image": "cuda:12"}], "restartPolicy": "Never"}}}});
    let (code, status) = call(&sim, "POST", JOBS, "application/json", job.to_string()).await;
    assert_eq!(code, 201, "{status}");
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "cuda:13"}]}}}});
    let (code, status) = call(
        &sim,
        "PATCH",
        &format!("{JOBS}/train"),
        "application/strategic-merge-patch+json",
        patch.to_string(),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "Job.batch \"train\" is invalid: spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable"
    );

    let frozen = json!({"metadata": {"name": "frozen"}, "immutable": true, "data": {"k": "v"}});
    let (code, _) = call(&sim, "POST", CM, "application/json", frozen.to_string()).await;
    assert_eq!(code, 201);
    let (code, status) = call(
        &sim,
        "PATCH",
        &format!("{CM}/frozen"),
        "application/merge-patch+json",
        json!({"data": {"k": "w"}}).to_string(),
    )
    .await;
    assert_eq!(code, 422, "{status}");
    assert_eq!(
        status["message"],
        "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
}

#[tokio::test]
async fn a_pod_update_may_change_only_upstreams_mutable_fields() {
    const PODS: &str = "/api/v1/namespaces/default/pods";
    let sim = Harness::start();
    let manifest = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "cuda:12", "ports": [{"containerPort": 80}]}],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}});
    let (code, status) = call(&sim, "POST", PODS, "application/json", manifest.to_string()).await;
    assert_eq!(code, 201, "{status}");
    let pod = format!("{PODS}/p");
    let forbidden = "Pod \"p\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n  core.PodSpec{\n";
    // (method, content type, body, code, the start of the message; empty: not compared)
    let cases: Vec<(&str, &str, Value, u16, &str)> = vec![
        // The manifest again (kubectl replace): its defaults are filled in as they were at create.
        ("PUT", "application/json", manifest.clone(), 200, ""),
        (
            "PATCH",
            "application/strategic-merge-patch+json",
            json!({"spec": {"containers": [{"name": "c", "image": "cuda:13"}], "activeDeadlineSeconds": 600}}),
            200,
            "",
        ),
        (
            "PATCH",
            "application/strategic-merge-patch+json",
            json!({"spec": {"containers": [{"name": "c", "ports": [{"containerPort": 81}]}]}}),
            422,
            forbidden,
        ),
        (
            "PATCH",
            "application/json-patch+json",
            json!([{"op": "replace", "path": "/spec/restartPolicy", "value": "Never"}]),
            422,
            forbidden,
        ),
        (
            "PATCH",
            "application/merge-patch+json",
            json!({"spec": {"activeDeadlineSeconds": 601}}),
            422,
            "Pod \"p\" is invalid: spec.activeDeadlineSeconds: Invalid value: 601: must be less than or equal to previous value",
        ),
        (
            "PATCH",
            "application/json-patch+json",
            json!([{"op": "add", "path": "/spec/containers/-", "value": {"name": "d", "image": "x"}}]),
            422,
            "Pod \"p\" is invalid: spec.containers: Forbidden: pod updates may not add or remove containers",
        ),
        (
            "PATCH",
            "application/json-patch+json",
            json!([{"op": "remove", "path": "/spec/tolerations/0"}]),
            422,
            "Pod \"p\" is invalid: spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds",
        ),
    ];
    for (method, content_type, body, code, message) in cases {
        let (got, status) = call(&sim, method, &pod, content_type, body.to_string()).await;
        assert_eq!(got, code, "{method} {body}: {status}");
        assert!(
            status["message"].as_str().unwrap_or_default().starts_with(message),
            "{method} {body}: {}",
            status["message"]
        );
        if code == 422 {
            assert_eq!(status["reason"], "Invalid", "{status}");
        }
    }
    let (_, stored) = call(&sim, "GET", &pod, "application/json", Body::empty()).await;
    assert_eq!(stored["spec"]["containers"][0]["image"], "cuda:13");
    assert_eq!(stored["spec"]["containers"][0]["ports"][0]["containerPort"], 80);
    assert_eq!(stored["spec"]["restartPolicy"], "Always");
}

#[tokio::test]
async fn server_side_apply_refuses_ill_typed_configurations_as_structured_merge_diff_does() {
    let sim = Harness::start();
    const DEPLOY: &str = "/apis/apps/v1/namespaces/default/deployments/d?fieldManager=m";
    let deployment = |spec: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n  namespace: default\nspec:\n{spec}"
        )
    };
    let typed = |errors: &str| {
        format!("failed to create typed patch object (default/d; apps/v1, Kind=Deployment): {errors}")
    };
    // (uri, body, message)
    let cases: Vec<(&str, String, String)> = vec![
        (
            DEPLOY,
            deployment("  replicas: \"3\"\n"),
            typed(".spec.replicas: expected numeric (int or float), got string"),
        ),
        (
            DEPLOY,
            deployment("  template:\n    spec:\n      containers: {name: c}\n"),
            typed(".spec.template.spec.containers: expected list, got &{map[name:c]}"),
        ),
        (
            DEPLOY,
            deployment("  template:\n    spec:\n      hostNetwork: \"yes\"\n"),
            typed(".spec.template.spec.hostNetwork: expected boolean, got &{yes}"),
        ),
        (
            DEPLOY,
            deployment("  selector: {matchLabels: [a]}\n  paused: 1e7\n  minReadySeconds: true\n"),
            typed(
                "errors:\n  .spec.selector.matchLabels: expected map, got &{[a]}\n  .spec.paused: expected boolean, got &{1e+07}\n  .spec.minReadySeconds: expected numeric (int or float), got bool",
            ),
        ),
        (
            DEPLOY,
            deployment("  template:\n    spec:\n      containers:\n      - name: c\n        image: [i]\n        imagePullPolicyy: Always\n"),
            typed(
                "errors:\n  .spec.template.spec.containers[name=\"c\"].image: expected string, got &value.valueUnstructured{Value:[]interface {}{\"i\"}}\n  .spec.template.spec.containers[name=\"c\"].imagePullPolicyy: field not declared in schema",
            ),
        ),
        (
            "/api/v1/nodes/node-a?fieldManager=m",
            "apiVersion: v1\nkind: Node\nmetadata:\n  name: node-a\nspec:\n  podCIDR: 5\n".into(),
            "failed to create typed patch object (/node-a; /v1, Kind=Node): .spec.podCIDR: expected string, got &value.valueUnstructured{Value:5}".into(),
        ),
    ];
    for (uri, body, message) in cases {
        let (code, status) = call(&sim, "PATCH", uri, "application/apply-patch+yaml", body.clone()).await;
        assert_eq!(code, 500, "{body}: {status}");
        assert_eq!(status["message"], message.as_str(), "{body}");
        assert_eq!(status.get("reason"), None, "{status}");
    }
    // Nothing was created.
    let (code, _) = call(&sim, "GET", "/apis/apps/v1/namespaces/default/deployments/d", "", "").await;
    assert_eq!(code, 404);
    // A well-typed configuration is applied; an int32 out of range is still Go's decode error.
    let (code, status) = call(&sim, "PATCH", DEPLOY, "application/apply-patch+yaml", deployment(
        "  replicas: 1\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec:\n      containers: [{name: c, image: i}]\n",
    )).await;
    assert_eq!(code, 201, "{status}");
    let (code, status) =
        call(&sim, "PATCH", DEPLOY, "application/apply-patch+yaml", deployment("  replicas: 1e30\n")).await;
    assert_eq!(code, 400, "{status}");
}

#[tokio::test]
async fn more_kinds_content_types_and_deep_bodies_table() {
    let sim = with_target().await;
    const PDBS: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
    const DAEMONSETS: &str = "/apis/apps/v1/namespaces/default/daemonsets";
    let budget = |spec: Value| json!({"metadata": {"name": "b"}, "spec": spec}).to_string();
    let daemon_set = |labels: Value| {
        json!({"metadata": {"name": "ds"}, "spec": {"selector": {"matchLabels": {"app": "ds"}},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
        .to_string()
    };
    let deep = |levels: usize| {
        format!(r#"{{"metadata":{{"name":"deep"}},"x":{}{}}}"#, "[".repeat(levels), "]".repeat(levels))
    };
    // (method, uri, content type, body, code, reason, the field of the first cause or the
    // message; empty: not compared)
    type Case = (&'static str, &'static str, &'static str, Vec<u8>, u16, &'static str, &'static str);
    let cases: Vec<Case> = vec![
        (
            "POST",
            PDBS,
            "application/json",
            budget(
                json!({"minAvailable": 1, "maxUnavailable": "50%", "selector": {"matchLabels": {"a": "b"}}}),
            )
            .into(),
            422,
            "Invalid",
            "PodDisruptionBudget.policy \"b\" is invalid: spec: Invalid value: policy.PodDisruptionBudgetSpec{…}: minAvailable and maxUnavailable cannot be both set",
        ),
        (
            "POST",
            PDBS,
            "application/json",
            budget(json!({"minAvailable": "150%", "selector": {"matchLabels": {"a": "b"}}})).into(),
            422,
            "Invalid",
            "spec.minAvailable",
        ),
        (
            "POST",
            DAEMONSETS,
            "application/json",
            daemon_set(json!({"app": "other"})).into(),
            422,
            "Invalid",
            "spec.template.metadata.labels",
        ),
        (
            "POST",
            CM,
            "text/plain",
            br#"{"metadata":{"name":"plain"}}"#.to_vec(),
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor",
        ),
        (
            "PATCH",
            TARGET,
            "application/json",
            br#"{"data":{"k":"w"}}"#.to_vec(),
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json",
        ),
        // A protobuf body that is not a protobuf-encoded object.
        (
            "POST",
            CM,
            "application/vnd.kubernetes.protobuf",
            b"k8s\0\xff\xff\xff".to_vec(),
            400,
            "BadRequest",
            "",
        ),
        // Nesting far past any decoder's depth limit: refused, the server's stack intact.
        ("POST", CM, "application/json", deep(100_000).into(), 400, "BadRequest", ""),
        ("POST", CM, "application/yaml", deep(100_000).into(), 400, "BadRequest", ""),
    ];
    for (method, uri, content_type, body, code, reason, expected) in cases {
        let (got, status) = call(&sim, method, uri, content_type, body.clone()).await;
        let shown = String::from_utf8_lossy(&body[..body.len().min(120)]).to_string();
        assert_eq!(got, code, "{method} {uri} [{content_type}] {shown}: {status}");
        assert_eq!(status["reason"], reason, "{shown}: {status}");
        if expected.contains(' ') {
            assert_eq!(status["message"], expected, "{shown}");
        } else if !expected.is_empty() {
            assert_eq!(status["details"]["causes"][0]["field"], expected, "{shown}: {status}");
        }
    }
    let (_, list) = call(&sim, "GET", CM, "application/json", "").await;
    let names: Vec<&str> =
        list["items"].as_array().unwrap().iter().filter_map(|c| c["metadata"]["name"].as_str()).collect();
    assert_eq!(names, ["target"]);
}
