//! `/openapi/v3`: the root index and per group-version documents generated from k8s-openapi's schemas.
//!
//! kubectl needs, per kind, a PATCH operation carrying `x-kubernetes-group-version-kind`, a
//! `fieldValidation` query parameter (kubectl `resource/query_param_verifier_v3.go`
//! `supportsQueryParamV3`) and a request body accepting `application/strategic-merge-patch+json`
//! (kubectl `cmd/apply/patcher.go` `gvkSupportsPatchOpenAPIV3`), and a component schema with
//! `x-kubernetes-group-version-kind` whose properties carry the patch metadata
//! (`buildStrategicMergePatchFromOpenAPIV3`). `/openapi/v2` answers 404: kubectl asks for it in
//! protobuf and copes with its absence.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

use axum::{
    Router,
    extract::{Path, State},
    http::{StatusCode, header},
    response::{IntoResponse, Response},
    routing::get,
};
use serde_json::{Map, Value, json};

use super::AppState;
use super::discovery::GIT_VERSION;
use super::schema::{Catalog, KindSchema, REF_PREFIX, catalog, reachable_definitions};
use crate::resources::ResourceType;

/// OpenAPI routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/openapi/v3", get(root))
        .route("/openapi/v3/api/{version}", get(core_document))
        .route("/openapi/v3/apis/{group}/{version}", get(group_document))
        .route("/openapi/v2", get(|| async { not_found("the server could not find the requested resource") }))
}

fn not_found(message: &str) -> Response {
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": "NotFound", "details": {}, "code": 404,
    });
    (StatusCode::NOT_FOUND, [(header::CONTENT_TYPE, "application/json")], status.to_string()).into_response()
}

fn json_response(value: &Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

fn served_types(state: &AppState) -> Vec<ResourceType> {
    state.types.read().map(|types| types.clone()).unwrap_or_default()
}

/// The custom types served from CRDs with their schemas (none when the store cannot be read:
/// the built-in documents are still served).
fn custom_schemas(state: &AppState) -> Vec<(ResourceType, Value)> {
    super::crd::served_schemas(state).unwrap_or_default()
}

async fn root(State(state): State<AppState>) -> Response {
    let mut root = root_document(&served_types(&state));
    let custom = custom_schemas(&state);
    let mut group_versions: Vec<(&str, &str)> =
        custom.iter().map(|(rt, _)| (rt.group.as_str(), rt.version.as_str())).collect();
    group_versions.sort_unstable();
    group_versions.dedup();
    for (group, version) in group_versions {
        let Some(document) = custom_group_version_document(&custom, group, version) else { continue };
        let key = group_version_key(group, version);
        let url = format!("/openapi/v3/{key}?hash={}", digest(&document.to_string()));
        root["paths"][key] = json!({"serverRelativeURL": url});
    }
    if let Some(paths) = root["paths"].as_object_mut() {
        paths.sort_keys();
    }
    json_response(&root)
}

async fn core_document(State(state): State<AppState>, Path(version): Path<String>) -> Response {
    document_response(&served_types(&state), "", &version)
}

async fn group_document(
    State(state): State<AppState>,
    Path((group, version)): Path<(String, String)>,
) -> Response {
    if let Some(document) = custom_group_version_document(&custom_schemas(&state), &group, &version) {
        return json_response(&document);
    }
    document_response(&served_types(&state), &group, &version)
}

fn document_response(types: &[ResourceType], group: &str, version: &str) -> Response {
    match cached_document(types, group, version) {
        Some(document) => {
            ([(header::CONTENT_TYPE, "application/json")], document.text.clone()).into_response()
        }
        None => not_found("the server could not find the requested resource"),
    }
}

/// A generated document, serialised, with its digest.
struct Cached {
    text: String,
    digest: String,
}

/// Documents depend only on which built-in kinds a group-version serves, so they are built once
/// per kind set: kubectl fetches the root (which needs every digest) on each apply and create.
/// Only served group-versions are cached: a client's made-up path must not grow the cache.
fn cached_document(types: &[ResourceType], group: &str, version: &str) -> Option<Arc<Cached>> {
    let mut kinds: Vec<&str> =
        types.iter().filter(|t| t.group == group && t.version == version).map(|t| t.kind.as_str()).collect();
    if kinds.is_empty() {
        return None;
    }
    kinds.sort_unstable();
    let key = format!("{group}/{version}:{}", kinds.join(","));
    let cache = document_cache();
    if let Some(found) = cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
        return found;
    }
    let built = group_version_document(types, group, version).map(|document| {
        let text = document.to_string();
        Arc::new(Cached { digest: digest(&text), text })
    });
    if let Ok(mut cache) = cache.lock() {
        cache.insert(key, built.clone());
    }
    built
}

fn document_cache() -> &'static Mutex<HashMap<String, Option<Arc<Cached>>>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Option<Arc<Cached>>>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// `api/v1` or `apis/apps/v1`: the key of a group-version in the root index.
fn group_version_key(group: &str, version: &str) -> String {
    if group.is_empty() { format!("api/{version}") } else { format!("apis/{group}/{version}") }
}

/// The root index: every group-version with a built-in schema and its document's URL, whose
/// `hash` changes when the document does (upstream uses the document's SHA-512; any stable
/// digest serves kubectl, which only compares it).
pub fn root_document(types: &[ResourceType]) -> Value {
    let mut group_versions: BTreeMap<String, (String, String)> = BTreeMap::new();
    for rt in types {
        if catalog().for_type(rt).is_some() {
            group_versions
                .insert(group_version_key(&rt.group, &rt.version), (rt.group.clone(), rt.version.clone()));
        }
    }
    let mut paths = Map::new();
    for (key, (group, version)) in group_versions {
        let Some(document) = cached_document(types, &group, &version) else { continue };
        let url = format!("/openapi/v3/{key}?hash={}", document.digest);
        paths.insert(key, json!({"serverRelativeURL": url}));
    }
    json!({"paths": paths})
}

/// Two FNV-1a passes rendered as 32 upper-case hex digits.
fn digest(text: &str) -> String {
    let fnv = |seed: u64| {
        text.bytes().fold(seed, |hash, byte| (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3))
    };
    format!("{:016X}{:016X}", fnv(0xcbf2_9ce4_8422_2325), fnv(0x8422_2325_cbf2_9ce4))
}

fn identifier(text: &str) -> String {
    let base = text.split('.').next().unwrap_or_default();
    let mut chars = base.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn query_parameter(name: &str, description: &str, kind: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": kind, "uniqueItems": true}})
}

fn write_parameters(with_force: bool) -> Vec<Value> {
    let mut parameters = vec![
        query_parameter(
            "dryRun",
            "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed",
            "string",
        ),
        query_parameter(
            "fieldManager",
            "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint.",
            "string",
        ),
        query_parameter(
            "fieldValidation",
            "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: This will ignore any unknown fields that are silently dropped from the object, and will ignore all but the last duplicate field that the decoder encounters. This is the default behavior prior to v1.23. - Warn: This will send a warning via the standard warning response header for each unknown field that is dropped from the object, and for each duplicate field that is encountered. The request will still succeed if there are no other errors, and will only persist the last of any duplicate fields. This is the default in v1.23+ - Strict: This will fail the request with a BadRequest error if any unknown fields would be dropped from the object, or if any duplicate fields are present. The error returned from the server will contain all unknown and duplicate fields encountered.",
            "string",
        ),
    ];
    if with_force {
        parameters.push(query_parameter("force", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests.", "boolean"));
    }
    parameters
}

fn path_parameter(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "path", "description": description, "required": true, "schema": {"type": "string", "uniqueItems": true}})
}

fn reference(definition: &str) -> Value {
    json!({"$ref": format!("{REF_PREFIX}{definition}")})
}

fn json_content(definition: &str) -> Value {
    json!({"application/json": {"schema": reference(definition)}})
}

/// The kind an operation or component schema describes: built in (from [`KindSchema`]) or
/// custom (from a CustomResourceDefinition).
struct Described<'a> {
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    /// Component schema name, e.g. `io.k8s.api.apps.v1.DaemonSet`.
    definition: &'a str,
    /// Which patch types the PATCH operations accept: custom resources take no strategic merge
    /// patch, and kubectl (`cmd/apply/patcher.go` `gvkSupportsPatchOpenAPIV3`) falls back to a
    /// JSON merge patch when the document says so.
    patches: PatchTypes,
}

/// The patch content types a kind's PATCH operations list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PatchTypes {
    /// All four (built-in kinds).
    WithStrategicMerge,
    /// Apply, JSON patch and JSON merge patch (custom resources; apiextensions-apiserver
    /// `pkg/controller/openapi/builder/builder.go` lists no strategic merge patch).
    WithoutStrategicMerge,
}

impl<'a> Described<'a> {
    fn built_in(kind: &'a KindSchema) -> Self {
        Described {
            group: kind.group,
            version: kind.version,
            kind: kind.kind,
            definition: &kind.definition,
            patches: PatchTypes::WithStrategicMerge,
        }
    }
}

fn gvk(kind: &Described<'_>) -> Value {
    json!({"group": kind.group, "version": kind.version, "kind": kind.kind})
}

#[allow(clippy::too_many_arguments)]
fn operation(
    action: &str,
    verb_id: &str,
    description: &str,
    tag: &str,
    kind: &Described<'_>,
    parameters: Vec<Value>,
    request: Option<Value>,
    responses: Value,
) -> Value {
    let mut op = Map::new();
    op.insert("tags".into(), json!([tag]));
    op.insert("description".into(), json!(description));
    op.insert("operationId".into(), json!(verb_id));
    if !parameters.is_empty() {
        op.insert("parameters".into(), Value::Array(parameters));
    }
    if let Some(request) = request {
        op.insert("requestBody".into(), request);
    }
    op.insert("responses".into(), responses);
    op.insert("x-kubernetes-action".into(), json!(action));
    op.insert("x-kubernetes-group-version-kind".into(), gvk(kind));
    Value::Object(op)
}

fn patch_request(patches: PatchTypes) -> Value {
    let patch = json!({"schema": reference("io.k8s.apimachinery.pkg.apis.meta.v1.Patch")});
    let mut content = json!({
        "application/apply-patch+yaml": patch,
        "application/json-patch+json": patch,
        "application/merge-patch+json": patch,
    });
    if patches == PatchTypes::WithStrategicMerge {
        content["application/strategic-merge-patch+json"] = patch;
    }
    json!({"content": content, "required": true})
}

/// The document of one group-version, or `None` when no built-in kind is served there.
pub fn group_version_document(types: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    let catalog = catalog();
    let served: Vec<(&ResourceType, &KindSchema)> = types
        .iter()
        .filter(|rt| rt.group == group && rt.version == version)
        .filter_map(|rt| {
            catalog.kinds_of(group, version).into_iter().find(|k| k.kind == rt.kind).map(|k| (rt, k))
        })
        .collect();
    if served.is_empty() {
        return None;
    }
    let (tag, prefix) = tag_and_prefix(group, version, identifier);
    let mut paths = Map::new();
    let mut roots: Vec<String> = vec![
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status".into(),
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions".into(),
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta".into(),
    ];
    let mut lists = Map::new();
    for (rt, kind) in &served {
        roots.push(kind.definition.clone());
        add_paths(&mut paths, &mut lists, rt, &Described::built_in(kind), &tag, &prefix);
    }
    let root_refs: Vec<&str> = roots.iter().map(String::as_str).collect();
    let mut schemas: Map<String, Value> = reachable_definitions(catalog, &root_refs).into_iter().collect();
    schemas.extend(lists);
    Some(document(json!({"title": "Kubernetes", "version": GIT_VERSION}), paths, schemas))
}

/// A group-version document around its `paths` and component `schemas` (the PATCH body's
/// `Patch` schema is added; keys are sorted so the document and its digest are stable).
fn document(info: Value, paths: Map<String, Value>, mut schemas: Map<String, Value>) -> Value {
    schemas.insert(
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch".into(),
        json!({"description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.", "type": "object"}),
    );
    schemas.sort_keys();
    json!({
        "openapi": "3.0.0",
        "info": info,
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": {"BearerToken": {"type": "apiKey", "description": "Bearer Token authentication", "name": "authorization", "in": "header"}}},
    })
}

/// The operations' tag (`apps_v1`) and operationId prefix (`AppsV1`); `name` turns the group
/// into its identifier (built-in groups use their first label, custom ones every label).
fn tag_and_prefix(group: &str, version: &str, name: fn(&str) -> String) -> (String, String) {
    let tag = if group.is_empty() {
        format!("core_{version}")
    } else {
        let id = name(group);
        let mut chars = id.chars();
        let lower: String = chars.next().map(|c| c.to_lowercase().chain(chars).collect()).unwrap_or_default();
        format!("{lower}_{version}")
    };
    let prefix =
        format!("{}{}", if group.is_empty() { "Core".to_string() } else { name(group) }, identifier(version));
    (tag, prefix)
}

/// `monitoring.coreos.com` → `MonitoringCoreosCom`, as upstream names custom groups' operations.
fn custom_identifier(group: &str) -> String {
    group.split(['.', '-']).map(identifier).collect()
}

/// The component schema name of a custom kind, as apiextensions-apiserver
/// `pkg/controller/openapi/builder/builder.go` names it (`util.ToRESTFriendlyName`): the group's
/// labels reversed, then version and kind — `com.coreos.monitoring.v1.PrometheusRule`.
pub fn custom_definition_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// The component schema of a custom kind: its CRD's `openAPIV3Schema` with `metadata` pointing at
/// ObjectMeta and the `x-kubernetes-group-version-kind` kubectl looks kinds up by (upstream
/// builder.go `buildKubeNative`).
fn custom_kind_schema(rt: &ResourceType, structural: &Value) -> Value {
    let mut schema = if structural.is_object() { structural.clone() } else { json!({"type": "object"}) };
    if !schema["properties"].is_object() {
        schema["properties"] = json!({});
    }
    let properties = &mut schema["properties"];
    properties["apiVersion"] = json!({"description": "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources", "type": "string"});
    properties["kind"] = json!({"description": "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds", "type": "string"});
    properties["metadata"] = json!({"description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata", "allOf": [reference("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")]});
    schema["x-kubernetes-group-version-kind"] =
        json!([{"group": rt.group, "kind": rt.kind, "version": rt.version}]);
    schema
}

/// The document of a group-version served from CustomResourceDefinitions: `served` pairs each
/// custom type with its version's `openAPIV3Schema`. `None` when nothing is served there.
pub fn custom_group_version_document(
    served: &[(ResourceType, Value)],
    group: &str,
    version: &str,
) -> Option<Value> {
    let served: Vec<&(ResourceType, Value)> =
        served.iter().filter(|(rt, _)| rt.group == group && rt.version == version).collect();
    if served.is_empty() {
        return None;
    }
    let (tag, prefix) = tag_and_prefix(group, version, custom_identifier);
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for (rt, structural) in &served {
        let definition = custom_definition_name(&rt.group, &rt.version, &rt.kind);
        let described = Described {
            group: &rt.group,
            version: &rt.version,
            kind: &rt.kind,
            definition: &definition,
            patches: PatchTypes::WithoutStrategicMerge,
        };
        add_paths(&mut paths, &mut schemas, rt, &described, &tag, &prefix);
        schemas.insert(definition.clone(), custom_kind_schema(rt, structural));
    }
    let roots = [
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    ];
    schemas.extend(reachable_definitions(catalog(), &roots));
    // Upstream's CRD documents carry this title (apiextensions-apiserver builder.go).
    Some(document(json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"}), paths, schemas))
}

fn list_schema(rt: &ResourceType, kind: &Described<'_>) -> (String, Value) {
    let name = format!("{}List", kind.definition);
    let schema = json!({
        "description": format!("{} is a list of {} objects.", rt.list_kind(), kind.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string"},
            "items": {"type": "array", "items": reference(kind.definition)},
            "kind": {"type": "string"},
            "metadata": {"allOf": [reference("io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta")], "default": {}},
        },
        "x-kubernetes-group-version-kind": [{"group": kind.group, "kind": rt.list_kind(), "version": kind.version}],
    });
    (name, schema)
}

fn add_paths(
    paths: &mut Map<String, Value>,
    lists: &mut Map<String, Value>,
    rt: &ResourceType,
    kind: &Described<'_>,
    tag: &str,
    prefix: &str,
) {
    let base = rt.group_version_path();
    let (collection, scope_id) = if rt.namespaced() {
        (format!("{base}/namespaces/{{namespace}}/{}", rt.plural), "Namespaced")
    } else {
        (format!("{base}/{}", rt.plural), "")
    };
    let definition = kind.definition;
    let create_only = rt.verbs.iter().all(|v| v == "create");
    let mut scope_parameters = Vec::new();
    if rt.namespaced() {
        scope_parameters
            .push(path_parameter("namespace", "object name and auth scope, such as for teams and projects"));
    }
    let ok_and_created = json!({
        "200": {"description": "OK", "content": json_content(definition)},
        "201": {"description": "Created", "content": json_content(definition)},
        "401": {"description": "Unauthorized"},
    });
    let mut collection_ops = Map::new();
    collection_ops.insert(
        "post".into(),
        operation(
            "post",
            &format!("create{prefix}{scope_id}{}", kind.kind),
            &format!("create a {}", kind.kind),
            tag,
            kind,
            write_parameters(false),
            Some(json!({"content": json_content(definition), "required": true})),
            json!({
                "200": {"description": "OK", "content": json_content(definition)},
                "201": {"description": "Created", "content": json_content(definition)},
                "202": {"description": "Accepted", "content": json_content(definition)},
                "401": {"description": "Unauthorized"},
            }),
        ),
    );
    if create_only {
        collection_ops.insert("parameters".into(), Value::Array(scope_parameters));
        paths.insert(collection, Value::Object(collection_ops));
        return;
    }
    let (list_name, list) = list_schema(rt, kind);
    lists.insert(list_name.clone(), list);
    collection_ops.insert(
        "get".into(),
        operation(
            "list",
            &format!("list{prefix}{scope_id}{}", kind.kind),
            &format!("list or watch objects of kind {}", kind.kind),
            tag,
            kind,
            Vec::new(),
            None,
            json!({"200": {"description": "OK", "content": json_content(&list_name)}, "401": {"description": "Unauthorized"}}),
        ),
    );
    collection_ops.insert("parameters".into(), Value::Array(scope_parameters.clone()));
    paths.insert(collection.clone(), Value::Object(collection_ops));

    let mut object_parameters = vec![path_parameter("name", &format!("name of the {}", kind.kind))];
    object_parameters.extend(scope_parameters);
    let mut item_paths = vec![(format!("{collection}/{{name}}"), String::new(), kind.kind.to_string())];
    for subresource in rt.subresources.iter().filter(|s| s.as_str() == "status") {
        item_paths.push((
            format!("{collection}/{{name}}/{subresource}"),
            subresource.clone(),
            format!("{}Status", kind.kind),
        ));
    }
    for (path, subresource, id_kind) in item_paths {
        let what = if subresource.is_empty() {
            format!("the specified {}", kind.kind)
        } else {
            format!("{subresource} of the specified {}", kind.kind)
        };
        let mut ops = Map::new();
        ops.insert(
            "get".into(),
            operation("get", &format!("read{prefix}{scope_id}{id_kind}"), &format!("read {what}"), tag, kind, Vec::new(), None,
                json!({"200": {"description": "OK", "content": json_content(definition)}, "401": {"description": "Unauthorized"}})),
        );
        ops.insert(
            "put".into(),
            operation(
                "put",
                &format!("replace{prefix}{scope_id}{id_kind}"),
                &format!("replace {what}"),
                tag,
                kind,
                write_parameters(false),
                Some(json!({"content": json_content(definition), "required": true})),
                ok_and_created.clone(),
            ),
        );
        ops.insert(
            "patch".into(),
            operation(
                "patch",
                &format!("patch{prefix}{scope_id}{id_kind}"),
                &format!("partially update {what}"),
                tag,
                kind,
                write_parameters(true),
                Some(patch_request(kind.patches)),
                ok_and_created.clone(),
            ),
        );
        if subresource.is_empty() {
            ops.insert(
                "delete".into(),
                operation("delete", &format!("delete{prefix}{scope_id}{id_kind}"), &format!("delete a {}", kind.kind), tag, kind,
                    vec![query_parameter("dryRun", "When present, indicates that modifications should not be persisted.", "string")],
                    Some(json!({"content": json_content("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")})),
                    json!({"200": {"description": "OK", "content": json_content("io.k8s.apimachinery.pkg.apis.meta.v1.Status")},
                           "202": {"description": "Accepted", "content": json_content("io.k8s.apimachinery.pkg.apis.meta.v1.Status")},
                           "401": {"description": "Unauthorized"}})),
            );
        }
        ops.insert("parameters".into(), Value::Array(object_parameters.clone()));
        paths.insert(path, Value::Object(ops));
    }
}

/// The catalog the documents are generated from (for tests and diagnostics).
pub fn schemas() -> &'static Catalog {
    catalog()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn made_up_group_versions_leave_the_document_cache_as_it_was() {
        let types = crate::resources::built_in();
        for n in 0..100 {
            assert!(cached_document(&types, &format!("made-up-{n}.example"), "v1").is_none());
        }
        let cache = document_cache().lock().unwrap();
        assert!(!cache.keys().any(|key| key.starts_with("made-up-")), "{:?}", cache.keys());
    }
    use crate::resources::built_in;

    #[test]
    fn root_lists_built_in_group_versions_with_hashed_urls() {
        let root = root_document(&built_in());
        let paths = root["paths"].as_object().unwrap();
        assert!(paths.contains_key("api/v1"));
        assert!(paths.contains_key("apis/apps/v1"));
        let url = paths["apis/apps/v1"]["serverRelativeURL"].as_str().unwrap();
        assert!(url.starts_with("/openapi/v3/apis/apps/v1?hash="), "{url}");
    }

    #[test]
    fn patch_operation_carries_gvk_field_validation_and_smp() {
        let document = group_version_document(&built_in(), "apps", "v1").unwrap();
        let patch = &document["paths"]["/apis/apps/v1/namespaces/{namespace}/daemonsets/{name}"]["patch"];
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({"group": "apps", "version": "v1", "kind": "DaemonSet"})
        );
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
        );
        assert!(patch["requestBody"]["content"].get("application/strategic-merge-patch+json").is_some());
        let schemas = &document["components"]["schemas"];
        assert_eq!(
            schemas["io.k8s.api.apps.v1.DaemonSet"]["x-kubernetes-group-version-kind"][0]["kind"],
            "DaemonSet"
        );
        assert_eq!(
            schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]["x-kubernetes-patch-merge-key"],
            "name"
        );
        // Every $ref resolves inside the document.
        let text = document.to_string();
        for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let name = piece.split('"').next().unwrap();
            assert!(schemas.get(name).is_some(), "dangling $ref {name}");
        }
    }

    #[test]
    fn custom_documents_describe_crd_kinds_without_strategic_merge() {
        let rule = ResourceType {
            group: "monitoring.coreos.com".into(),
            version: "v1".into(),
            kind: "PrometheusRule".into(),
            plural: "prometheusrules".into(),
            singular: "prometheusrule".into(),
            scope: crate::resources::Scope::Namespaced,
            short_names: vec!["promrule".into()],
            categories: Vec::new(),
            verbs: vec!["get".into(), "list".into(), "patch".into(), "create".into()],
            subresources: Vec::new(),
        };
        let structural = json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"groups": {"type": "array", "items": {"type": "object"}}}}}});
        let served = vec![(rule, structural)];
        assert!(custom_group_version_document(&served, "monitoring.coreos.com", "v2").is_none());
        let document = custom_group_version_document(&served, "monitoring.coreos.com", "v1").unwrap();
        let name = custom_definition_name("monitoring.coreos.com", "v1", "PrometheusRule");
        assert_eq!(name, "com.coreos.monitoring.v1.PrometheusRule");
        let schema = &document["components"]["schemas"][&name];
        assert_eq!(
            schema["x-kubernetes-group-version-kind"],
            json!([{"group": "monitoring.coreos.com", "kind": "PrometheusRule", "version": "v1"}])
        );
        assert_eq!(schema["properties"]["spec"]["properties"]["groups"]["type"], "array");
        let patch = &document["paths"]["/apis/monitoring.coreos.com/v1/namespaces/{namespace}/prometheusrules/{name}"]
            ["patch"];
        assert_eq!(patch["operationId"], "patchMonitoringCoreosComV1NamespacedPrometheusRule");
        assert!(patch["parameters"].as_array().unwrap().iter().any(|p| p["name"] == "fieldValidation"));
        let content = patch["requestBody"]["content"].as_object().unwrap();
        assert!(content.contains_key("application/merge-patch+json"));
        assert!(!content.contains_key("application/strategic-merge-patch+json"));
        let text = document.to_string();
        for piece in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
            let referenced = piece.split('"').next().unwrap();
            assert!(
                document["components"]["schemas"].get(referenced).is_some(),
                "dangling $ref {referenced}"
            );
        }
    }

    #[test]
    fn unknown_group_versions_have_no_document() {
        assert!(group_version_document(&built_in(), "example.com", "v1").is_none());
    }
}
