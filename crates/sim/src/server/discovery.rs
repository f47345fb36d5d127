//! Discovery: `/version`, `/api`, `/apis` (legacy and aggregated v2) and group-version documents.
//!
//! Everything is computed from `state.types`, so CRDs appear once they are added there. The
//! aggregated form is chosen by the `Accept` header and answered with the exact `Content-Type`
//! kubectl requires (client-go `discovery/discovery_client.go` reads the aggregated form only under
//! that media type, else kubectl says `the server doesn't have a resource type`); shapes follow
//! staging/src/k8s.io/api/apidiscovery/v2/types.go and apimachinery's `APIResourceList`.

use axum::{
    Router,
    extract::{Path, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde_json::{Value, json};

use super::AppState;
use crate::resources::{ResourceType, Scope};

/// The Kubernetes version the simulator reports (the simulator is Kubernetes 1.33, `docs/simulator.md`).
pub const GIT_VERSION: &str = "v1.33.4";

/// The response `Content-Type` of aggregated discovery; without it kubectl reads the body as
/// legacy discovery and finds no resource types.
pub const AGGREGATED_CONTENT_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// Discovery routes. Paths no route serves go to the router's fallback (the resource handler,
/// which answers a 404 `Status` for unknown paths); discovery sets no fallback of its own, as
/// axum refuses to merge two routers that both have one.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/version", get(version))
        // What the official Python client requests; upstream's mux serves both.
        .route("/version/", get(version))
        .route("/api", get(core_groups))
        .route("/apis", get(named_groups))
        .route("/api/{version}", get(core_resources))
        .route("/apis/{group}", get(group))
        .route("/apis/{group}/{version}", get(group_resources))
}

fn json_response(content_type: &'static str, body: &Value) -> Response {
    let mut response = (StatusCode::OK, body.to_string()).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

/// The 404 `Status` kube-apiserver answers for a path it does not serve.
pub fn not_found_status() -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "the server could not find the requested resource",
        "reason": "NotFound",
        "details": {},
        "code": 404,
    })
}

async fn not_found() -> Response {
    let mut response = (StatusCode::NOT_FOUND, not_found_status().to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

async fn version() -> Response {
    // Field set and order of apimachinery/pkg/version/types.go `Info` (1.33 adds the emulation
    // and minimum-compatibility versions: the binary's own minor, and one minor below it); the
    // commit and build date are the simulator's own, not a real release's. `routes.Version`
    // writes it with `responsewriters.WriteRawJSON`: `json.MarshalIndent(.., "", "  ")`, no
    // trailing newline, Content-Type only.
    let info = json!({
        "major": "1",
        "minor": "33",
        "emulationMajor": "1",
        "emulationMinor": "33",
        "minCompatibilityMajor": "1",
        "minCompatibilityMinor": "32",
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2025-08-12T00:00:00Z",
        "goVersion": "go1.24.5",
        "compiler": "gc",
        "platform": "linux/amd64",
    });
    let body = serde_json::to_string_pretty(&info).unwrap_or_default();
    ([(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Whether the `Accept` header asks for aggregated discovery v2 (v2beta1 alone is not served).
pub fn wants_aggregated(headers: &HeaderMap) -> bool {
    headers.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(',')).any(
        |media| {
            let params: Vec<&str> = media.split(';').map(str::trim).collect();
            params.contains(&"g=apidiscovery.k8s.io")
                && params.contains(&"v=v2")
                && params.contains(&"as=APIGroupDiscoveryList")
        },
    )
}

fn types(state: &AppState) -> Vec<ResourceType> {
    state.types.read().map(|t| t.clone()).unwrap_or_else(|poisoned| poisoned.into_inner().clone())
}

/// The groups of `types` in first-seen order, each with its versions in first-seen order
/// (the first is the preferred one).
fn groups(types: &[ResourceType]) -> Vec<(String, Vec<String>)> {
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for rt in types {
        match groups.iter_mut().find(|(g, _)| *g == rt.group) {
            Some((_, versions)) if !versions.contains(&rt.version) => versions.push(rt.version.clone()),
            Some(_) => {}
            None => groups.push((rt.group.clone(), vec![rt.version.clone()])),
        }
    }
    groups
}

fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() { version.to_string() } else { format!("{group}/{version}") }
}

/// What a subresource answers with and which verbs it takes, as upstream registers it
/// (pkg/registry/core/pod/storage/storage.go, apps/deployment/storage, core/namespace/storage).
fn subresource_shape(rt: &ResourceType, sub: &str) -> (String, String, String, &'static [&'static str]) {
    let same = (rt.group.clone(), rt.version.clone(), rt.kind.clone());
    let (group, version, kind) = match sub {
        "scale" => ("autoscaling".into(), "v1".into(), "Scale".into()),
        "eviction" => ("policy".into(), "v1".into(), "Eviction".into()),
        "binding" => (String::new(), "v1".into(), "Binding".into()),
        "exec" => (String::new(), "v1".into(), "PodExecOptions".into()),
        "attach" => (String::new(), "v1".into(), "PodAttachOptions".into()),
        "portforward" => (String::new(), "v1".into(), "PodPortForwardOptions".into()),
        "proxy" => (String::new(), "v1".into(), "PodProxyOptions".into()),
        _ => same,
    };
    let verbs: &'static [&'static str] = match sub {
        "status" | "scale" | "ephemeralcontainers" | "resize" => &["get", "patch", "update"],
        "exec" | "attach" | "portforward" => &["create", "get"],
        "binding" | "eviction" => &["create"],
        "finalize" => &["update"],
        "proxy" => &["create", "delete", "get", "patch", "update"],
        _ => &["get"],
    };
    (group, version, kind, verbs)
}

fn scope_name(scope: Scope) -> &'static str {
    match scope {
        Scope::Namespaced => "Namespaced",
        Scope::Cluster => "Cluster",
    }
}

fn aggregated_resource(rt: &ResourceType) -> Value {
    let mut resource = json!({
        "resource": rt.plural,
        "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
        "scope": scope_name(rt.scope),
        "singularResource": rt.singular,
        "verbs": rt.verbs,
    });
    if !rt.short_names.is_empty() {
        resource["shortNames"] = json!(rt.short_names);
    }
    if !rt.categories.is_empty() {
        resource["categories"] = json!(rt.categories);
    }
    if !rt.subresources.is_empty() {
        let subs: Vec<Value> = rt
            .subresources
            .iter()
            .map(|sub| {
                let (group, version, kind, verbs) = subresource_shape(rt, sub);
                json!({
                    "subresource": sub,
                    "responseKind": {"group": group, "version": version, "kind": kind},
                    "verbs": verbs,
                })
            })
            .collect();
        resource["subresources"] = json!(subs);
    }
    resource
}

/// The aggregated `APIGroupDiscoveryList` for the core group (`core == true`) or all others.
pub fn aggregated(types: &[ResourceType], core: bool) -> Value {
    let items: Vec<Value> = groups(types)
        .into_iter()
        .filter(|(group, _)| group.is_empty() == core)
        .map(|(group, versions)| {
            let versions: Vec<Value> = versions
                .iter()
                .map(|version| {
                    let resources: Vec<Value> = types
                        .iter()
                        .filter(|rt| rt.group == group && &rt.version == version)
                        .map(aggregated_resource)
                        .collect();
                    json!({"version": version, "resources": resources, "freshness": "Current"})
                })
                .collect();
            let metadata = if group.is_empty() { json!({}) } else { json!({"name": group}) };
            json!({"metadata": metadata, "versions": versions})
        })
        .collect();
    json!({
        "kind": "APIGroupDiscoveryList",
        "apiVersion": "apidiscovery.k8s.io/v2",
        "metadata": {},
        "items": items,
    })
}

fn api_group(group: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> =
        versions.iter().map(|v| json!({"groupVersion": group_version(group, v), "version": v})).collect();
    json!({"name": group, "versions": entries, "preferredVersion": entries[0]})
}

/// The legacy `APIResourceList` of one group-version, or `None` when nothing is served there.
pub fn resource_list(types: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    let served: Vec<&ResourceType> =
        types.iter().filter(|rt| rt.group == group && rt.version == version).collect();
    if served.is_empty() {
        return None;
    }
    let mut resources = Vec::new();
    for rt in served {
        let mut entry = json!({
            "name": rt.plural,
            "singularName": rt.singular,
            "namespaced": rt.namespaced(),
            "kind": rt.kind,
            "verbs": rt.verbs,
        });
        if !rt.short_names.is_empty() {
            entry["shortNames"] = json!(rt.short_names);
        }
        if !rt.categories.is_empty() {
            entry["categories"] = json!(rt.categories);
        }
        resources.push(entry);
        for sub in &rt.subresources {
            let (sub_group, sub_version, kind, verbs) = subresource_shape(rt, sub);
            let mut entry = json!({
                "name": format!("{}/{sub}", rt.plural),
                "singularName": "",
                "namespaced": rt.namespaced(),
                "kind": kind,
                "verbs": verbs,
            });
            if sub_group != rt.group || sub_version != rt.version {
                entry["group"] = json!(sub_group);
                entry["version"] = json!(sub_version);
            }
            resources.push(entry);
        }
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version(group, version),
        "resources": resources,
    }))
}

async fn core_groups(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let types = types(&state);
    if wants_aggregated(&headers) {
        return json_response(AGGREGATED_CONTENT_TYPE, &aggregated(&types, true));
    }
    let versions: Vec<String> =
        groups(&types).into_iter().filter(|(g, _)| g.is_empty()).flat_map(|(_, v)| v).collect();
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("127.0.0.1");
    json_response(
        "application/json",
        &json!({
            "kind": "APIVersions",
            "versions": versions,
            "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
        }),
    )
}

async fn named_groups(State(state): State<AppState>, headers: HeaderMap) -> Response {
    let types = types(&state);
    if wants_aggregated(&headers) {
        return json_response(AGGREGATED_CONTENT_TYPE, &aggregated(&types, false));
    }
    let groups: Vec<Value> = groups(&types)
        .into_iter()
        .filter(|(g, _)| !g.is_empty())
        .map(|(group, versions)| api_group(&group, &versions))
        .collect();
    json_response("application/json", &json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
}

async fn group(State(state): State<AppState>, Path(name): Path<String>) -> Response {
    let types = types(&state);
    match groups(&types).into_iter().find(|(g, _)| !g.is_empty() && *g == name) {
        Some((group, versions)) => {
            let mut body = api_group(&group, &versions);
            body["kind"] = json!("APIGroup");
            body["apiVersion"] = json!("v1");
            json_response("application/json", &body)
        }
        None => not_found().await,
    }
}

async fn core_resources(State(state): State<AppState>, Path(version): Path<String>) -> Response {
    match resource_list(&types(&state), "", &version) {
        Some(list) => json_response("application/json", &list),
        None => not_found().await,
    }
}

async fn group_resources(
    State(state): State<AppState>,
    Path((group, version)): Path<(String, String)>,
) -> Response {
    match resource_list(&types(&state), &group, &version) {
        Some(list) => json_response("application/json", &list),
        None => not_found().await,
    }
}

#[cfg(test)]
mod tests {
    use axum::{body::Body, http::Request};
    use tower::ServiceExt;

    use super::*;
    use crate::{clock::Clock, server};

    fn app() -> Router {
        let store = crate::store::Store::in_memory().unwrap();
        let state = std::sync::Arc::new(server::SimState::new(store, Clock::real()));
        server::router(state)
    }

    async fn get(path: &str, accept: &str) -> (StatusCode, String, Value) {
        let request = Request::get(path).header(header::ACCEPT, accept).body(Body::empty()).unwrap();
        let response = app().oneshot(request).await.unwrap();
        let status = response.status();
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, content_type, serde_json::from_slice(&bytes).unwrap())
    }

    const KUBECTL_ACCEPT: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

    #[tokio::test]
    async fn aggregated_discovery_has_the_content_type_kubectl_needs() {
        let (status, content_type, body) = get("/apis", KUBECTL_ACCEPT).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(content_type, AGGREGATED_CONTENT_TYPE);
        let apps =
            body["items"].as_array().unwrap().iter().find(|i| i["metadata"]["name"] == "apps").unwrap();
        let ds = apps["versions"][0]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["resource"] == "daemonsets")
            .unwrap();
        insta::assert_json_snapshot!(ds);
        let (_, content_type, core) = get("/api", KUBECTL_ACCEPT).await;
        assert_eq!(content_type, AGGREGATED_CONTENT_TYPE);
        assert_eq!(core["items"].as_array().unwrap().len(), 1);
        assert!(core["items"][0]["metadata"].get("name").is_none());
    }

    #[tokio::test]
    async fn legacy_discovery_when_not_asked_for_v2() {
        let (_, content_type, api) = get("/api", "application/json, */*").await;
        assert_eq!(content_type, "application/json");
        assert_eq!(api["kind"], "APIVersions");
        assert_eq!(api["versions"], json!(["v1"]));
        let (_, _, apis) = get("/apis", "application/json").await;
        assert_eq!(apis["kind"], "APIGroupList");
        let names: Vec<&str> =
            apis["groups"].as_array().unwrap().iter().map(|g| g["name"].as_str().unwrap()).collect();
        assert!(names.contains(&"apps") && names.contains(&"batch") && !names.contains(&""), "{names:?}");
        let (_, _, v1) = get("/api/v1", "application/json").await;
        let names: Vec<&str> =
            v1["resources"].as_array().unwrap().iter().map(|r| r["name"].as_str().unwrap()).collect();
        assert!(
            names.contains(&"pods/status") && names.contains(&"pods/log") && names.contains(&"pods/eviction")
        );
        let eviction =
            v1["resources"].as_array().unwrap().iter().find(|r| r["name"] == "pods/eviction").unwrap();
        assert_eq!(
            (eviction["group"].as_str(), eviction["kind"].as_str()),
            (Some("policy"), Some("Eviction"))
        );
        let quota =
            v1["resources"].as_array().unwrap().iter().find(|r| r["name"] == "resourcequotas").unwrap();
        assert_eq!(quota["shortNames"], json!(["quota"]));
        assert_eq!(quota["singularName"], "resourcequota");
    }

    #[tokio::test]
    async fn version_and_unknown_paths() {
        let (status, _, version) = get("/version", "application/json").await;
        assert_eq!(status, StatusCode::OK);
        let request = Request::get("/version").body(Body::empty()).unwrap();
        let response = app().oneshot(request).await.unwrap();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap();
        let text = String::from_utf8(bytes.to_vec()).unwrap();
        assert!(
            text.starts_with("{\n  \"major\": \"1\",\n  \"minor\": \"33\",\n  \"emulationMajor\": \"1\",\n  \"emulationMinor\": \"33\",\n  \"minCompatibilityMajor\": \"1\",\n  \"minCompatibilityMinor\": \"32\",\n  \"gitVersion\""),
            "{text}"
        );
        assert!(text.ends_with('}'), "{text}");
        assert_eq!(version["gitVersion"], GIT_VERSION);
        assert_eq!(version["platform"], "linux/amd64");
        let (status, _, body) = get("/apis/nope.example.com/v1", "application/json").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["reason"], "NotFound");
        let (status, _, body) = get("/api/v2", "application/json").await;
        assert_eq!((status, body["code"].as_i64()), (StatusCode::NOT_FOUND, Some(404)));
    }
}
