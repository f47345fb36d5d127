//! Resource handlers: get, list, create, update, patch, delete and deletecollection for every
//! served type, under `/api/v1/…` and `/apis/{group}/{version}/…` (watch is in `watch.rs`).

use std::sync::Arc;

use axum::{
    body::{Body, Bytes},
    extract::{Request, State},
    http::{HeaderMap, Method, StatusCode, header},
    response::{IntoResponse, Response},
};
use base64::Engine;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{
    AppState, authz, crd, fieldvalidation,
    patch::{self, ApplyOptions, PatchKind},
    request::{self, Query, ResourcePath},
    status::{ApiError, Result},
    table, typecheck,
    versions::Conversion,
    watch,
};
use crate::{
    k8s::selector::{FieldSelector, LabelSelector},
    {
        kinds::{self, apiextensions::customresource::CustomResource},
        resources::{self, ResourceType},
        store::{Deletion, DryRun, Outcome, Stored, Subresource},
    },
};

/// The fallback handler every resource request reaches.
pub async fn handle(State(state): State<AppState>, request: Request) -> Response {
    match dispatch(state, request).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

/// The verb a request maps to, as RBAC and discovery name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verb {
    Get,
    List,
    Watch,
    Create,
    Update,
    Patch,
    Delete,
    DeleteCollection,
}

impl Verb {
    fn name(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

/// The resolved target of a request.
struct Target {
    rt: ResourceType,
    namespace: Option<String>,
    name: Option<String>,
    subresource: Subresource,
    /// Set when the request is in another served version than the stored `rt`
    /// (autoscaling/v1 HPAs).
    conversion: Option<Conversion>,
}

impl Target {
    /// The type the request names: `rt`, or the served version `rt` is converted from.
    fn served(&self) -> &ResourceType {
        self.conversion.as_ref().map_or(&self.rt, Conversion::served)
    }

    /// A stored object as the request's version shows it.
    fn to_served(&self, stored: Value) -> Value {
        match &self.conversion {
            Some(conversion) => conversion.to_served(&stored),
            None => stored,
        }
    }

    /// An object of the request's version as the store keeps it.
    fn to_stored(&self, served: Value) -> Value {
        match &self.conversion {
            Some(conversion) => conversion.to_stored(&served),
            None => served,
        }
    }

    fn namespace(&self) -> &str {
        self.namespace.as_deref().unwrap_or("")
    }

    fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }

    /// Changes the object this request names in one store transaction under `dry_run`; `change`
    /// gets the stored object (`None` when it does not exist yet) and returns the next one.
    fn modify(
        &self,
        state: &AppState,
        dry_run: DryRun,
        change: impl FnOnce(Option<Value>) -> Result<Value>,
    ) -> Result<(Value, Outcome)> {
        state.store.modify(&self.rt, self.namespace(), self.name(), self.subresource, dry_run, change)
    }

    /// The stored object, or 404 for writes that cannot create it (update, non-apply patch).
    fn existing(&self, current: Option<Value>) -> Result<Value> {
        current.ok_or_else(|| ApiError::not_found(&self.rt.group_resource(), self.name()))
    }
}

async fn dispatch(state: AppState, request: Request) -> Result<Response> {
    let (parts, body) = request.into_parts();
    let path = ResourcePath::parse(parts.uri.path()).ok_or_else(ApiError::no_such_resource)?;
    let query = Query::from_uri(&parts.uri)?;
    let scale = path.subresource.as_deref() == Some("scale");
    // `eviction` and `binding` are served for the kinds whose row lists them (pods): their
    // handlers create an object of another kind and act on the named one.
    let listed = |name: &str| {
        kinds::find(&path.group, &path.plural).is_some_and(|kind| kind.subresources.contains(&name))
    };
    let acting = path.subresource.as_deref().filter(|name| matches!(*name, "eviction" | "binding"));
    if let Some(subresource) = acting.filter(|name| listed(name)) {
        let (Some(namespace), Some(name)) = (path.namespace.as_deref(), path.name.as_deref()) else {
            return Err(ApiError::no_such_resource());
        };
        if parts.method != Method::POST {
            return Err(ApiError::method_not_allowed());
        }
        let headers = &parts.headers;
        return match subresource {
            "eviction" => super::eviction::serve(&state, namespace, name, &query, headers, body).await,
            _ => super::binding::serve(&state, namespace, name, &query, headers, body).await,
        };
    }
    let target = resolve(&state, path)?;
    if scale {
        let (namespace, name) = (target.namespace(), target.name());
        let (method, headers) = (&parts.method, &parts.headers);
        return super::scale::serve(&state, &target.rt, namespace, name, method, &query, headers, body).await;
    }
    let verb = match (&parts.method, target.name.is_some()) {
        (&Method::GET, true) => Verb::Get,
        (&Method::GET, false) if query.flag("watch") => Verb::Watch,
        (&Method::GET, false) => Verb::List,
        (&Method::POST, false) => Verb::Create,
        (&Method::PUT, true) => Verb::Update,
        (&Method::PATCH, true) => Verb::Patch,
        (&Method::DELETE, true) => Verb::Delete,
        (&Method::DELETE, false) => Verb::DeleteCollection,
        _ => return Err(ApiError::method_not_allowed()),
    };
    let allowed = match target.subresource {
        Subresource::Main => target.rt.verbs.iter().any(|v| v == verb.name()),
        Subresource::Status => matches!(verb, Verb::Get | Verb::Update | Verb::Patch),
    };
    if !allowed {
        return Err(ApiError::method_not_allowed());
    }
    let headers = parts.headers;
    if let Some(computed) =
        crate::kinds::by_group_resource(&target.rt.group_resource()).and_then(|kind| kind.strategy.computed())
    {
        return computed_response(&state, &target, computed, verb, &query, &headers);
    }
    if let (Verb::Create, Some(review)) = (verb, authz::review_of(&target.rt)) {
        let identity = parts.extensions.get::<crate::auth::Identity>();
        return authz::create(review, &target.rt, identity, state.clock.now(), &headers, body).await;
    }
    // A second served version (autoscaling/v1 HPAs): run against the stored version, a create or
    // update body converted whole, a patch inside its transaction, a watch per event.
    let (target, headers, body) = match Conversion::of(&state, &target.rt) {
        Some(conversion) => {
            let (headers, body) = match verb {
                Verb::Create | Verb::Update => conversion.request(headers, body).await?,
                _ => (headers, body),
            };
            let rt = conversion.stored().clone();
            (Target { rt, conversion: Some(conversion), ..target }, headers, body)
        }
        None => (target, headers, body),
    };
    let defines_types =
        crd::defines_types(&target.rt) && !matches!(verb, Verb::Get | Verb::List | Verb::Watch);
    let response = match verb {
        Verb::Get => get(&state, &target, &headers),
        Verb::List => list(&state, &target, &query, &headers),
        Verb::Watch => {
            let (rt, namespace, conversion) =
                (target.rt.clone(), target.namespace.clone(), target.conversion.clone());
            watch::serve(state.clone(), rt, namespace, conversion, &query, &headers)
        }
        Verb::Create => create(&state, &target, &query, &headers, body).await,
        Verb::Update => update(&state, &target, &query, &headers, body).await,
        Verb::Patch => patch(&state, &target, &query, &headers, body).await,
        Verb::Delete => delete(&state, &target, &query, &headers, body).await,
        Verb::DeleteCollection => delete_collection(&state, &target, &query, &headers, body).await,
    }?;
    if defines_types {
        crd::reconcile(&state)?;
    }
    match (&target.conversion, verb) {
        (Some(conversion), verb) if verb != Verb::Watch => conversion.response(response).await,
        _ => Ok(response),
    }
}

fn resolve(state: &AppState, path: ResourcePath) -> Result<Target> {
    let rt = {
        let types = state.types.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        resources::find(&types, &path.group, &path.version, &path.plural).cloned()
    }
    .ok_or_else(ApiError::no_such_resource)?;
    // A namespaced path for a cluster-scoped type (or an object path without a namespace for a
    // namespaced type) names nothing.
    if path.namespace.is_some() && !rt.namespaced()
        || path.name.is_some() && path.namespace.is_none() && rt.namespaced()
    {
        return Err(ApiError::no_such_resource());
    }
    let subresource = match path.subresource.as_deref() {
        None => Subresource::Main,
        Some("status") if rt.subresources.iter().any(|s| s == "status") => Subresource::Status,
        // Served by `scale.rs`, which writes the object itself.
        Some("scale") if path.name.is_some() && rt.subresources.iter().any(|s| s == "scale") => {
            Subresource::Main
        }
        Some(_) => return Err(ApiError::no_such_resource()),
    };
    Ok(Target { rt, namespace: path.namespace, name: path.name, subresource, conversion: None })
}

fn json_response(code: StatusCode, body: String) -> Response {
    (code, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn object_response(
    state: &AppState,
    rt: &ResourceType,
    headers: &HeaderMap,
    code: StatusCode,
    object: &Value,
) -> Response {
    if request::wants_table(headers) {
        let rv = object["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string();
        let table = crd::render_table(state, rt, std::slice::from_ref(object), &rv, state.clock.now());
        return json_response(code, table.to_string());
    }
    json_response(code, object.to_string())
}

fn get(state: &AppState, target: &Target, headers: &HeaderMap) -> Result<Response> {
    let object = state.store.get_value(&target.rt, target.namespace(), target.name())?;
    Ok(object_response(state, &target.rt, headers, StatusCode::OK, &object))
}

/// A get or list of a kind computed at each request ([`crate::kinds::Computed`]): its objects
/// filtered by the request's selectors, as JSON or a Table, with the kind's `Warning`.
fn computed_response(
    state: &AppState,
    target: &Target,
    computed: &crate::kinds::Computed,
    verb: Verb,
    query: &Query,
    headers: &HeaderMap,
) -> Result<Response> {
    let response = match (verb, target.name.as_deref()) {
        (Verb::Get, Some(name)) => match (computed.get)(name) {
            Ok(object) => object_response(state, &target.rt, headers, StatusCode::OK, &object),
            Err(message) => ApiError::unknown(message).into_response(),
        },
        _ => {
            let selection = Selection::from_query(query, &target.rt)?;
            let items: Vec<Value> = (computed.list)()
                .into_iter()
                .filter(|object| {
                    selection.labels.matches(&crate::k8s::selector::labels_of(object))
                        && selection
                            .fields
                            .matches(&crate::kinds::selectable_fields(&target.rt.group_resource(), object))
                })
                .collect();
            if request::wants_table(headers) {
                let table = crd::render_table(state, &target.rt, &items, "", state.clock.now());
                json_response(StatusCode::OK, table.to_string())
            } else {
                let list = json!({"kind": format!("{}List", target.rt.kind), "apiVersion": target.rt.api_version(),
                                  "metadata": {}, "items": items});
                json_response(StatusCode::OK, list.to_string())
            }
        }
    };
    let warnings: Vec<String> = computed.warning.iter().map(|w| w.to_string()).collect();
    Ok(with_warnings(response, &warnings))
}

/// The selectors of a list, watch or deletecollection request, as one predicate.
pub struct Selection {
    labels: LabelSelector,
    fields: FieldSelector,
}

impl Selection {
    /// From the request's `labelSelector` and `fieldSelector` (400 when malformed or on a
    /// field the type cannot be selected on).
    pub fn from_query(query: &Query, rt: &ResourceType) -> Result<Selection> {
        Ok(Selection { labels: query.label_selector()?, fields: query.field_selector(&rt.group_resource())? })
    }

    /// True when `stored` matches both selectors.
    pub fn matches(&self, stored: &Stored) -> bool {
        self.labels.matches(&stored.labels) && self.fields.matches(&stored.fields)
    }

    fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.is_empty()
    }
}

/// Upstream's continue token: base64url of `{"v":"meta.k8s.io/v1","rv":N,"start":"key\0"}`.
fn encode_continue(revision: u64, after: &(String, String)) -> String {
    let token =
        json!({"v": "meta.k8s.io/v1", "rv": revision, "start": format!("{}/{}\u{0}", after.0, after.1)});
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(token.to_string())
}

fn decode_continue(token: &str) -> Result<(String, String)> {
    let invalid = || {
        ApiError::bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
        )
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token.trim_end_matches('='))
        .map_err(|_| invalid())?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
    let start = value["start"].as_str().ok_or_else(invalid)?.trim_end_matches('\u{0}');
    let (namespace, name) = start.split_once('/').ok_or_else(invalid)?;
    Ok((namespace.to_string(), name.to_string()))
}

fn list(state: &AppState, target: &Target, query: &Query, headers: &HeaderMap) -> Result<Response> {
    let selection = Selection::from_query(query, &target.rt)?;
    let after = query.get("continue").filter(|c| !c.is_empty()).map(decode_continue).transpose()?;
    let limit = query.integer("limit")?.filter(|limit| *limit > 0).map(|limit| limit as usize);
    let page = state.store.list(
        &target.rt.group_resource(),
        target.namespace.as_deref(),
        &|stored| selection.matches(stored),
        after.as_ref(),
        limit,
    );
    let mut metadata = json!({"resourceVersion": page.revision.to_string()});
    if let Some(after) = &page.continue_after {
        metadata["continue"] = json!(encode_continue(page.revision, after));
        // Upstream counts the rest only when nothing is filtered out.
        if selection.is_everything() {
            metadata["remainingItemCount"] = json!(page.remaining);
        }
    }
    if request::wants_table(headers) {
        if crd::is_custom(state, &target.rt) {
            let objects = page.items.iter().map(|stored| stored.value()).collect::<Result<Vec<_>, _>>()?;
            let mut table =
                crd::render_table(state, &target.rt, &objects, &page.revision.to_string(), state.clock.now());
            if let Some(continue_token) = metadata.get("continue") {
                table["metadata"]["continue"] = continue_token.clone();
            }
            return Ok(json_response(StatusCode::OK, table.to_string()));
        }
        let continue_token = metadata["continue"].as_str();
        let include = table::IncludeObject::parse(query.get("includeObject")).ok_or_else(|| {
            ApiError::bad_request(format!(
                "includeObject: Unsupported value: {:?}: supported values: \"Metadata\", \"None\", \"Object\"",
                query.get("includeObject").unwrap_or_default()
            ))
        })?;
        let table = if include == table::IncludeObject::Metadata {
            render_table(
                &target.rt,
                &page.items,
                &page.revision.to_string(),
                continue_token,
                state.clock.now(),
            )?
        } else {
            let rows = page
                .items
                .iter()
                .map(|stored| Ok(table::row_template_with(&target.rt, &stored.value()?, include)))
                .collect::<Result<Vec<String>>>()?;
            let rows = rows.iter().map(String::as_str);
            table::render_rows(
                &target.rt,
                rows,
                &page.revision.to_string(),
                continue_token,
                true,
                state.clock.now(),
            )
        };
        return Ok(json_response(StatusCode::OK, table));
    }
    let body = list_body(&target.rt, &metadata, page.items);
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// Rows not yet cached beyond this many are rendered on two threads.
const PARALLEL_TABLE_ROWS: usize = 2_000;

/// A `Table` of `items` as JSON text, from the rows cached per object revision
/// ([`Stored::table_row`]); rows not cached yet are rendered first, a long run of them in two
/// halves on two threads (the machine the simulator targets has two cores).
fn render_table(
    rt: &ResourceType,
    items: &[Arc<Stored>],
    revision: &str,
    continue_token: Option<&str>,
    now: Timestamp,
) -> Result<String> {
    let fill = |part: &[Arc<Stored>]| -> Result<()> {
        for stored in part {
            stored.table_row(|object| table::row_template(rt, object))?;
        }
        Ok(())
    };
    let uncached: Vec<Arc<Stored>> = items.iter().filter(|stored| !stored.has_table_row()).cloned().collect();
    if uncached.len() < PARALLEL_TABLE_ROWS {
        fill(&uncached)?;
    } else {
        let (first, second) = uncached.split_at(uncached.len() / 2);
        let (first, second) = std::thread::scope(|scope| {
            let second = scope.spawn(|| fill(second));
            (fill(first), second.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        });
        first?;
        second?;
    }
    let rows = items
        .iter()
        .map(|stored| stored.table_row(|object| table::row_template(rt, object)))
        .collect::<Result<Vec<&str>, _>>()?;
    Ok(table::render_rows(rt, rows.into_iter(), revision, continue_token, true, now))
}

/// Objects of a list response are gathered into chunks of about this many bytes; a larger
/// object is sent as its own chunk, sharing its stored text.
const LIST_CHUNK_BYTES: usize = 64 * 1024;

/// A `<Kind>List` from the stored JSON texts, without reparsing them, written as the client
/// reads it: chunks of about [`LIST_CHUNK_BYTES`] built one at a time, and an object larger
/// than that sent as its stored text itself. A client that reads slowly (or not at all) holds
/// the page's object references and one chunk, not a copy of the list; upstream streams list
/// encoding likewise (`StreamingCollectionEncodingToJSON`, on by default in 1.33).
fn list_body(rt: &ResourceType, metadata: &Value, items: Vec<Arc<Stored>>) -> Body {
    let head = format!(
        "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{metadata},\"items\":[",
        json!(rt.list_kind()),
        json!(rt.api_version())
    );
    let chunks =
        ListChunks { head: Some(head), items: items.into_iter().enumerate(), large: None, finished: false };
    Body::from_stream(futures::stream::iter(chunks.map(Ok::<_, std::convert::Infallible>)))
}

/// The chunks of [`list_body`], made as they are asked for.
struct ListChunks {
    head: Option<String>,
    items: std::iter::Enumerate<std::vec::IntoIter<Arc<Stored>>>,
    /// A large object's text, next after the chunk just returned.
    large: Option<Bytes>,
    finished: bool,
}

impl Iterator for ListChunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if let Some(large) = self.large.take() {
            return Some(large);
        }
        if self.finished {
            return None;
        }
        let mut chunk = self.head.take().unwrap_or_default();
        loop {
            let Some((index, stored)) = self.items.next() else {
                chunk.push_str("]}");
                self.finished = true;
                return Some(Bytes::from(chunk));
            };
            if index > 0 {
                chunk.push(',');
            }
            if stored.json.len() >= LIST_CHUNK_BYTES {
                self.large = Some(stored.json_bytes());
                return Some(Bytes::from(chunk));
            }
            chunk.push_str(&stored.json);
            if chunk.len() >= LIST_CHUNK_BYTES {
                return Some(Bytes::from(chunk));
            }
        }
    }
}

/// How a write is checked and recorded: `fieldValidation`, the field manager, `dryRun`.
struct WriteParams {
    mode: fieldvalidation::Mode,
    manager: String,
    dry_run: DryRun,
}

impl WriteParams {
    fn of(query: &Query, headers: &HeaderMap) -> Result<WriteParams> {
        let mode = fieldvalidation::Mode::from_query(query.get("fieldValidation"))?;
        let manager = match query.get("fieldManager").filter(|m| !m.is_empty()) {
            Some(manager) => manager.to_string(),
            None => {
                patch::manager_from_user_agent(headers.get(header::USER_AGENT).and_then(|v| v.to_str().ok()))
            }
        };
        Ok(WriteParams { mode, manager, dry_run: query.dry_run()? })
    }
}

/// The response with the `Warning` headers of the field-validation warnings
/// (`fieldValidation=Warn`), de-duplicated and capped as upstream's recorder does.
fn with_warnings(mut response: Response, warnings: &[String]) -> Response {
    for warning in fieldvalidation::warning_headers(warnings) {
        if let Ok(value) = warning.parse() {
            response.headers_mut().append(header::WARNING, value);
        }
    }
    response
}

/// The body as an object of the target's type, with the URL's namespace, checked for unknown
/// and duplicate fields under `mode` (unknown fields are dropped, as decoding into the typed
/// struct drops them); returns the warnings to send.
async fn object_body(
    target: &Target,
    headers: &HeaderMap,
    body: Body,
    mode: fieldvalidation::Mode,
) -> Result<(Value, Vec<String>)> {
    let bytes = request::read_body(headers, body).await?;
    let mut object = request::decode_object(headers, &bytes, &target.rt.kind)?;
    // Type errors come first: upstream's typed decode fails before strict checking reports.
    typecheck::check_body(&target.rt, &object)?;
    let mut warnings = if request::content_type(headers) == "application/json" {
        // Re-read JSON for duplicate keys, which a parsed value no longer shows.
        fieldvalidation::decode_tracking_duplicates(&bytes)?.1
    } else {
        Vec::new()
    };
    warnings.extend(fieldvalidation::unknown_fields(&target.rt, &object));
    if mode == fieldvalidation::Mode::Strict && !warnings.is_empty() {
        // Upstream `transformDecodeError`: `Deployment in version "v1" cannot be handled as a
        // Deployment: strict decoding error: unknown field "spec.replica"`.
        let kind = &target.rt.kind;
        return Err(ApiError::bad_request(format!(
            "{kind} in version \"{}\" cannot be handled as a {kind}: {}",
            target.rt.version,
            fieldvalidation::Error::Strict(warnings)
        )));
    }
    if mode == fieldvalidation::Mode::Ignore {
        warnings.clear();
    }
    fieldvalidation::strip_unknown(&target.rt, &mut object);
    request::check_type(&object, &target.rt.api_version(), &target.rt.kind)?;
    if !object["metadata"].is_object() {
        object["metadata"] = json!({});
    }
    if let Some(namespace) = &target.namespace {
        match object["metadata"]["namespace"].as_str() {
            Some(given) if !given.is_empty() && given != namespace => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            _ => object["metadata"]["namespace"] = json!(namespace),
        }
    }
    Ok((object, warnings))
}

fn subresource_name(subresource: Subresource) -> Option<&'static str> {
    match subresource {
        Subresource::Main => None,
        Subresource::Status => Some("status"),
    }
}

async fn create(
    state: &AppState,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let params = WriteParams::of(query, headers)?;
    let (mut object, warnings) = object_body(target, headers, body, params.mode).await?;
    crd::admit(state, &target.rt, &mut object, query.get("fieldValidation"))?;
    patch::record_update(&target.rt, &params.manager, None, None, &mut object, state.clock.now())?;
    let created = state.store.create_with(&target.rt, object, params.dry_run)?;
    let mut response = object_response(state, &target.rt, headers, StatusCode::CREATED, &created);
    if let Some(name) = created["metadata"]["name"].as_str() {
        response.extensions_mut().insert(crate::audit::CreatedName(name.to_string()));
    }
    Ok(with_warnings(response, &warnings))
}

/// The strategy of `rt`'s custom resources when their CRD version has a schema, read before a
/// write's transaction (the store lock is not re-entrant).
fn custom_resource(state: &AppState, rt: &ResourceType) -> Option<CustomResource> {
    crd::custom_resource(state, rt).filter(CustomResource::has_schema)
}

/// Admits the next state of an object written by an update, patch or apply (`current`: the
/// stored object): a custom resource as its CRD version says (`custom`, read before the
/// transaction; [`crd::admit_custom`]), a CRD's rules compiled; nothing for the other kinds.
fn admit_next(
    state: &AppState,
    rt: &ResourceType,
    custom: Option<&CustomResource>,
    object: &mut Value,
    current: Option<&Value>,
    query: &Query,
) -> Result<()> {
    match custom {
        Some(custom) => crd::admit_custom(custom, object, current, query.get("fieldValidation"))?,
        None if crd::defines_types(rt) => crd::admit(state, rt, object, None)?,
        None => {}
    }
    Ok(())
}

async fn update(
    state: &AppState,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let params = WriteParams::of(query, headers)?;
    let (mut object, warnings) = object_body(target, headers, body, params.mode).await?;
    match object["metadata"]["name"].as_str() {
        Some(name) if !name.is_empty() && name != target.name() => {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                target.name()
            )));
        }
        _ => object["metadata"]["name"] = json!(target.name()),
    }
    let rt = &target.rt;
    let now = state.clock.now();
    // A custom resource is validated against the stored object it replaces (transition rules).
    let custom = custom_resource(state, rt);
    if custom.is_none() {
        crd::admit(state, rt, &mut object, query.get("fieldValidation"))?;
    }
    let (updated, _) = target.modify(state, params.dry_run, |current| {
        let current = target.existing(current)?;
        if let Some(custom) = &custom {
            crd::admit_custom(custom, &mut object, Some(&current), query.get("fieldValidation"))?;
        }
        let sub = subresource_name(target.subresource);
        patch::record_update(rt, &params.manager, sub, Some(&current), &mut object, now)?;
        Ok(object)
    })?;
    Ok(with_warnings(object_response(state, rt, headers, StatusCode::OK, &updated), &warnings))
}

async fn patch(
    state: &AppState,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let params = WriteParams::of(query, headers)?;
    let kind = PatchKind::from_content_type(&request::content_type(headers))?;
    let bytes = request::read_body(headers, body).await?;
    // The stored type `rt` is written; the patch is applied to the object in the request's
    // version `served` (the same type unless converted: `versions`).
    let (rt, served) = (&target.rt, target.served());
    let now = state.clock.now();
    let mut warnings = Vec::new();
    let (object, outcome) = if kind == PatchKind::Apply {
        if query.get("fieldManager").is_none_or(str::is_empty) {
            return Err(ApiError::invalid(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                json!({"group": "meta.k8s.io", "kind": "PatchOptions", "causes": [{"reason": "FieldValueRequired",
                    "message": "Required value: is required for apply patch", "field": "fieldManager"}]}),
            ));
        }
        let mut applied = patch::decode_apply_body(&bytes)?;
        check_apply_type(served, &applied)?;
        // The configuration is converted to the typed schema before anything is merged: first
        // by structured-merge-diff (its own words), then into the Go struct (Go's words, for what
        // the type converter lets through, such as an int32 out of range).
        fieldvalidation::check_apply(served, &applied)?;
        typecheck::check_body(served, &applied)?;
        // A configuration without a name takes the live object's (or the URL's).
        if applied["metadata"]["name"].as_str().is_some_and(|name| !name.is_empty()) {
            check_name(target, &applied)?;
        }
        if let Some(namespace) = &target.namespace {
            applied["metadata"]["namespace"] = json!(namespace);
        }
        applied["metadata"]["name"] = json!(target.name());
        let options = ApplyOptions { field_manager: params.manager.clone(), force: query.flag("force") };
        let custom = custom_resource(state, rt);
        target.modify(state, params.dry_run, |current| {
            // Merged in the request's version, as upstream's field manager merges (its managed
            // fields entry names that version).
            let shown = current.clone().map(|current| target.to_served(current));
            let next = patch::server_side_apply_at(served, shown.as_ref(), &applied, &options, now)?;
            let mut next = target.to_stored(next);
            if current.is_none() {
                next["metadata"]["namespace"] = applied["metadata"]["namespace"].clone();
            }
            admit_next(state, rt, custom.as_ref(), &mut next, current.as_ref(), query)?;
            Ok(next)
        })?
    } else {
        let custom = custom_resource(state, rt);
        target.modify(state, params.dry_run, |current| {
            let current = target.existing(current)?;
            let shown = target.to_served(current.clone());
            let mut patched = patch::apply_patch(served, kind, &shown, &bytes)?;
            if kind != PatchKind::StrategicMerge
                && custom.is_none()
                && !kinds::is_custom(&rt.group_resource())
            {
                typecheck::check_patched_kind(served, &patched)?;
            }
            typecheck::check_patched(served, &patched)?;
            warnings = fieldvalidation::check(served, &patched, params.mode)?;
            check_name(target, &patched)?;
            fieldvalidation::strip_unknown(served, &mut patched);
            let mut patched = target.to_stored(patched);
            admit_next(state, rt, custom.as_ref(), &mut patched, Some(&current), query)?;
            let sub = subresource_name(target.subresource);
            patch::record_update(rt, &params.manager, sub, Some(&current), &mut patched, now)?;
            Ok(patched)
        })?
    };
    let code = if outcome == Outcome::Created { StatusCode::CREATED } else { StatusCode::OK };
    Ok(with_warnings(object_response(state, rt, headers, code, &object), &warnings))
}

/// An apply configuration of another type than the URL's: 400 `invalid object type: /v1,
/// Kind=Bogus`, from the field manager's first step (apimachinery `util/managedfields/
/// internal/versioncheck.go` `versionCheckManager.Apply`, which compares the configuration's
/// group, version and kind, as written, with the resource's; one left out is empty there).
fn check_apply_type(rt: &ResourceType, applied: &Value) -> Result<()> {
    let api_version = applied["apiVersion"].as_str().unwrap_or_default();
    let kind = applied["kind"].as_str().unwrap_or_default();
    if api_version == rt.api_version() && kind == rt.kind {
        return Ok(());
    }
    // `schema.GroupVersionKind.String()`: `group/version, Kind=kind`, the core group empty.
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    Err(ApiError::bad_request(format!("invalid object type: {group}/{version}, Kind={kind}")))
}

/// `checkName` (apiserver `endpoints/handlers/rest.go`), run on every patched object: a patch
/// may not rename the object or move it to another namespace (a namespace left empty is the
/// URL's).
fn check_name(target: &Target, patched: &Value) -> Result<()> {
    let name = patched["metadata"]["name"].as_str().unwrap_or_default();
    if name != target.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            target.name()
        )));
    }
    let namespace = patched["metadata"]["namespace"].as_str().unwrap_or_default();
    if let Some(expected) = target.namespace.as_deref().filter(|ns| !ns.is_empty())
        && !namespace.is_empty()
        && namespace != expected
    {
        return Err(ApiError::bad_request(format!(
            "the namespace of the object ({namespace}) does not match the namespace on the request ({expected})"
        )));
    }
    Ok(())
}

async fn delete(
    state: &AppState,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let bytes = request::read_body(headers, body).await?;
    let options = request::delete_options(query, headers, &bytes)?;
    let deletion = state.store.delete(&target.rt, target.namespace(), target.name(), &options)?;
    match deletion {
        Deletion::Removed(object) if !target.rt.strategy().returns_deleted_object() => {
            Ok(json_response(StatusCode::OK, deleted_status(&target.rt, &object).to_string()))
        }
        deletion => Ok(object_response(state, &target.rt, headers, StatusCode::OK, deletion.object())),
    }
}

/// `Store.finalizeDelete`'s answer for a kind that does not return the deleted object: a
/// `Status` whose details name the object, its API group (left out for the core group) and,
/// as `kind`, its resource.
fn deleted_status(rt: &ResourceType, object: &Value) -> Value {
    let mut details = json!({"name": object["metadata"]["name"]});
    if !rt.group.is_empty() {
        details["group"] = json!(rt.group);
    }
    details["kind"] = json!(rt.plural);
    details["uid"] = object["metadata"]["uid"].clone();
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

async fn delete_collection(
    state: &AppState,
    target: &Target,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let selection = Selection::from_query(query, &target.rt)?;
    let bytes = request::read_body(headers, body).await?;
    let options = request::delete_options(query, headers, &bytes)?;
    let done = state.store.delete_collection(
        &target.rt,
        target.namespace.as_deref(),
        &|stored| selection.matches(stored),
        &options,
    )?;
    let items: Vec<&Value> = done.iter().map(Deletion::object).collect();
    let list = json!({"kind": target.rt.list_kind(), "apiVersion": target.rt.api_version(),
                      "metadata": {"resourceVersion": state.store.revision().to_string()}, "items": items});
    Ok(json_response(StatusCode::OK, list.to_string()))
}
