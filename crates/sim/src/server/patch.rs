//! PATCH bodies: strategic merge, JSON merge (RFC 7386), JSON patch (RFC 6902), server-side apply.
//!
//! Strategic merge follows k8s.io/apimachinery `pkg/util/strategicpatch/patch.go` with the patch
//! metadata of [`super::schema`]; server-side apply and managedFields follow structured-merge-diff
//! (see [`super::managedfields`]). Callers run admission ([`super::admission`]) on the result.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Map, Value};

use super::managedfields::{self, Target};
use super::request;
use super::schema::{Field, Node, Shape, catalog};
use crate::kinds::Cause;
use crate::{gojson, resources::ResourceType};

/// Errors from applying a patch.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body is not valid for its content type (400 BadRequest).
    #[error("{0}")]
    BadRequest(String),
    /// The content type is not a patch type the simulator serves (415).
    #[error(
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml, application/strategic-merge-patch+json"
    )]
    UnsupportedMediaType,
    /// A JSON patch operation failed (422 Invalid). Upstream answers with
    /// `errors.NewGenericServerResponse(422, …)` (apiserver `endpoints/handlers/patch.go`
    /// `applyJSPatch`), whose message is the generic text and drops the patch library's reason
    /// (kept here for diagnostics), so kubectl prints `The request is invalid: the server
    /// rejected our request due to an error in our request`.
    #[error("the server rejected our request due to an error in our request")]
    Invalid(String),
    /// A JSON patch of more than [`MAX_JSON_PATCH_OPERATIONS`] operations (413), upstream's
    /// text (apiserver `endpoints/handlers/patch.go` `applyJSPatch`).
    #[error("The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {0}")]
    TooManyOperations(usize),
    /// The patched object nests deeper than Go's decoder reads (422): upstream decodes the
    /// patched JSON into the typed object, which fails in the JSON scanner, and answers
    /// `field.Invalid(field.NewPath("patch"), <patched JSON>, err)` (`endpoints/handlers/
    /// patch.go` `jsonPatcher.applyPatchToCurrentObject`; `applyPatchToObject` for strategic
    /// merge). `patched` is the patched JSON as Go marshals it.
    #[error("couldn't get version/kind; json parse error: invalid character '{}' exceeded max depth", char::from(*bracket))]
    TooDeep {
        /// The patched object's JSON.
        patched: String,
        /// The bracket that opens the level past the limit.
        bracket: u8,
    },
    /// Server-side apply found fields owned by another manager (409). `details` is upstream's
    /// text after the count, e.g. `conflict with "kubectl" using apps/v1: .spec.replicas`.
    #[error("Apply failed with {count} {}: {details}", if *count == 1 { "conflict" } else { "conflicts" })]
    Conflict {
        /// Number of conflicting fields.
        count: usize,
        /// `conflict with "kubectl" using apps/v1: .spec.replicas`-style lines.
        details: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<managedfields::Error> for Error {
    fn from(error: managedfields::Error) -> Self {
        match error {
            managedfields::Error::BadRequest(message) => Error::BadRequest(message),
            managedfields::Error::Conflicts(conflicts) => Error::Conflict {
                count: conflicts.len(),
                details: managedfields::conflict_details(&conflicts),
            },
        }
    }
}

impl Error {
    /// The `Status.details.causes` of a conflict (`type: FieldManagerConflict`, one per field,
    /// as fieldmanager/internal/conflict.go `NewConflictError` builds them); empty otherwise.
    pub fn causes(&self) -> Vec<Cause> {
        let Error::Conflict { details, .. } = self else { return Vec::new() };
        let cause = |manager: &str, field: &str| Cause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {manager}"),
            field: field.to_string(),
        };
        if let Some(single) = details.strip_prefix("conflict with ") {
            // `"m" using v1: .a.b` — the path is after the last ": ".
            return match single.rsplit_once(": ") {
                Some((manager, field)) => vec![cause(manager, field)],
                None => Vec::new(),
            };
        }
        let mut causes = Vec::new();
        let mut manager = "";
        for line in details.lines() {
            if let Some(m) = line.strip_prefix("conflicts with ") {
                manager = m;
            } else if let Some(field) = line.strip_prefix("- ") {
                causes.push(cause(manager, field));
            }
        }
        causes
    }
}

/// The four patch kinds, from the request's `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchKind {
    /// `application/strategic-merge-patch+json`.
    StrategicMerge,
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/apply-patch+yaml` (server-side apply).
    Apply,
}

impl PatchKind {
    /// The kind a `Content-Type` header names (parameters like `; charset=utf-8` ignored).
    pub fn from_content_type(content_type: &str) -> Result<PatchKind> {
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        match essence {
            "application/strategic-merge-patch+json" => Ok(PatchKind::StrategicMerge),
            "application/merge-patch+json" => Ok(PatchKind::Merge),
            "application/json-patch+json" => Ok(PatchKind::Json),
            "application/apply-patch+yaml" | "application/apply-patch+cbor" => Ok(PatchKind::Apply),
            _ => Err(Error::UnsupportedMediaType),
        }
    }
}

/// The most operations one JSON patch may carry: apiserver `endpoints/handlers/patch.go`
/// `maxJSONPatchOperations` (added for CVE-2019-11253).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The most bytes the `copy` operations of one JSON patch may add to the object: apiserver
/// `pkg/server/config.go` `JSONPatchMaxCopyBytes` (3 MiB, the body limit), which
/// `NewConfig`/`New` arm as json-patch's `AccumulatedCopySizeLimit` (CVE-2019-1002100). An `add`
/// carries its value in the body, which the body limit already bounds; only `copy` amplifies.
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Options of a server-side apply request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApplyOptions {
    /// `fieldManager`.
    pub field_manager: String,
    /// `force=true` takes over conflicting fields.
    pub force: bool,
}

/// Decodes a JSON patch body. Past Go's nesting limit the text is upstream's for the default
/// field validation (`Warn`, or `Strict`): JSON and merge patches are first decoded strictly,
/// whose error reads `error decoding patch: …` (`endpoints/handlers/patch.go` `applyJSPatch`);
/// a strategic merge patch's decode error is bare (`strategicPatchObject`). (Under `Ignore`
/// upstream's patch libraries word it: `Invalid JSON Patch` for a merge patch.)
fn decode_json<T: serde::de::DeserializeOwned>(body: &[u8], kind: PatchKind) -> Result<T> {
    gojson::from_slice(body).map_err(|error| match (error, kind) {
        (error @ gojson::DecodeError::TooDeep(_), PatchKind::Json | PatchKind::Merge) => {
            Error::BadRequest(format!("error decoding patch: {error}"))
        }
        (error, _) => Error::BadRequest(error.to_string()),
    })
}

/// Decodes a server-side apply body: YAML (which JSON is a subset of), one document, an object.
/// Upstream reads it with sigs.k8s.io/yaml `Unmarshal` (`endpoints/handlers/patch.go`
/// `applyPatcher`), so JSON nested past the limit fails in go-yaml's scanner, in its words.
pub fn decode_apply_body(body: &[u8]) -> Result<Value> {
    let text =
        std::str::from_utf8(body).map_err(|e| Error::BadRequest(format!("error decoding YAML: {e}")))?;
    let yaml_error =
        |error: request::YamlError| Error::BadRequest(format!("error decoding YAML: {}", error.converting()));
    let value: Value = match gojson::from_slice(body) {
        Ok(value) => value,
        Err(gojson::DecodeError::TooDeep(overflow)) => {
            return Err(yaml_error(request::YamlError::TooDeep { line: overflow.line(body) }));
        }
        Err(gojson::DecodeError::Syntax(_)) => request::decode_yaml(text).map_err(yaml_error)?,
    };
    if !value.is_object() {
        return Err(Error::BadRequest(
            "error decoding YAML: the applied configuration is not an object".into(),
        ));
    }
    Ok(value)
}

/// Applies a strategic-merge, JSON merge or JSON patch `body` to the `current` object of type
/// `rt` and returns the patched object. Server-side apply goes through [`server_side_apply`].
pub fn apply_patch(rt: &ResourceType, kind: PatchKind, current: &Value, body: &[u8]) -> Result<Value> {
    let mut patched = patched_value(rt, kind, current, body)?;
    omit_empty_metadata_maps(&mut patched);
    Ok(patched)
}

/// Drops `metadata.labels` and `metadata.annotations` left empty (the last key removed by a
/// patch or an apply): upstream decodes into ObjectMeta, whose maps are `omitempty`, so
/// `kubectl annotate x key-` leaves no `annotations: {}` behind.
fn omit_empty_metadata_maps(object: &mut Value) {
    if let Some(Value::Object(metadata)) = object.get_mut("metadata") {
        for key in ["labels", "annotations"] {
            if metadata.get(key).is_some_and(|m| m.as_object().is_some_and(Map::is_empty)) {
                metadata.remove(key);
            }
        }
    }
}

fn patched_value(rt: &ResourceType, kind: PatchKind, current: &Value, body: &[u8]) -> Result<Value> {
    let mut patched = match kind {
        PatchKind::Merge => {
            let patch: Value = decode_json(body, kind)?;
            if !patch.is_object() {
                return Err(Error::BadRequest("invalid JSON merge patch: the patch is not an object".into()));
            }
            let mut patched = current.clone();
            json_patch::merge(&mut patched, &patch);
            patched
        }
        PatchKind::Json => json_patch_bounded(current, body)?,
        PatchKind::StrategicMerge => {
            // Custom resources have no patch metadata: upstream answers 415 (its text then omits
            // strategic merge from the accepted types; this enum's one 415 variant lists it).
            let Some(node) = catalog().for_type(rt) else { return Err(Error::UnsupportedMediaType) };
            let patch: Value = decode_json(body, kind)?;
            strategic_merge(current, &patch, Some(node))?
        }
        PatchKind::Apply => return Err(Error::UnsupportedMediaType),
    };
    // Only the operations of a JSON patch can add depth: the other patches nest no deeper than
    // the object and the patch, each read within the limit.
    match fields_overflow(&mut patched) {
        Some(bracket) => Err(too_deep(patched, bracket)),
        None => Ok(patched),
    }
}

/// [`gojson::value_overflow`] of `object` without its `metadata.managedFields`, whose field
/// sets mirror the object's nesting a few levels further down: the depth a client gave is what
/// is bounded, not the bookkeeping of it.
fn fields_overflow(object: &mut Value) -> Option<u8> {
    let managed = object.pointer_mut("/metadata/managedFields").map(Value::take);
    let overflow = gojson::value_overflow(object);
    if let Some(managed) = managed {
        object["metadata"]["managedFields"] = managed;
    }
    overflow
}

/// [`Error::TooDeep`] for `patched`, which is marshalled and then taken apart without recursion
/// (a JSON patch may have taken it to twice the depth the stack is sized for).
fn too_deep(patched: Value, bracket: u8) -> Error {
    let text = gojson::marshal_deep(&patched);
    gojson::dismantle(patched);
    Error::TooDeep { patched: text, bracket }
}

/// Applies an RFC 6902 JSON patch as upstream's `applyJSPatch` does: at most
/// [`MAX_JSON_PATCH_OPERATIONS`] operations (413 past it), and `copy` operations adding at most
/// [`MAX_JSON_PATCH_COPY_BYTES`] in all, measured before each copy is made (json-patch v4
/// `Patch.copy`: the JSON size of the copied value), so a patch that copies a map into itself
/// is refused after a few doublings instead of growing the object without end.
///
/// Copies and moves can also nest the object deeper with every operation (a few bytes of patch
/// per level). Upstream applies them all and then fails to decode the result past Go's limit
/// ([`Error::TooDeep`]); here the operation that takes the object past the limit is the last
/// one applied, so the object never nests deeper than twice the limit and the answer is the
/// same 422 (its value the object as that operation left it).
fn json_patch_bounded(current: &Value, body: &[u8]) -> Result<Value> {
    // Count first, as upstream does after `DecodePatch` and before looking at any operation.
    let operations: Vec<serde::de::IgnoredAny> = decode_json(body, PatchKind::Json)?;
    if operations.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(Error::TooManyOperations(operations.len()));
    }
    let json_patch::Patch(operations) = decode_json(body, PatchKind::Json)?;
    // Works on a copy, so a failing operation leaves `current` as it was (the patch is atomic).
    let mut patched = current.clone();
    let mut copied_bytes = 0usize;
    for operation in &operations {
        if let json_patch::PatchOperation::Copy(copy) = operation
            && let Some(source) = patched.pointer(copy.from.as_str())
        {
            copied_bytes = copied_bytes.saturating_add(json_size(source));
            if copied_bytes > MAX_JSON_PATCH_COPY_BYTES {
                // gopkg.in/evanphx/json-patch.v4 errors.go `AccumulatedCopySizeError`.
                return Err(Error::Invalid(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied_bytes}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}"
                )));
            }
        }
        let deepens =
            nesting_after(&patched, operation).is_some_and(|depth| depth > gojson::MAX_NESTING_DEPTH);
        json_patch::patch_unsafe(&mut patched, std::slice::from_ref(operation))
            .map_err(|e| Error::Invalid(e.to_string()))?;
        if deepens && let Some(bracket) = fields_overflow(&mut patched) {
            return Err(too_deep(patched, bracket));
        }
    }
    Ok(patched)
}

/// How deeply `operation` nests the value it places: the containers on its target path plus
/// the value's own (the object then nests at least that deep, and no deeper elsewhere than
/// before). `None` for operations that place nothing (`remove`, `test`) or a source that does
/// not exist (the operation fails).
fn nesting_after(object: &Value, operation: &json_patch::PatchOperation) -> Option<usize> {
    use json_patch::PatchOperation as Op;
    let (path, placed) = match operation {
        Op::Add(add) => (&add.path, &add.value),
        Op::Replace(replace) => (&replace.path, &replace.value),
        Op::Copy(copy) => (&copy.path, object.pointer(copy.from.as_str())?),
        Op::Move(moved) => (&moved.path, object.pointer(moved.from.as_str())?),
        Op::Remove(_) | Op::Test(_) => return None,
    };
    let containers = path.as_str().matches('/').count();
    Some(containers + gojson::depth(placed))
}

/// The length of `value`'s compact JSON, counted without building it.
fn json_size(value: &Value) -> usize {
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    // Writing a `Value` to an infallible sink cannot fail.
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Server-side apply of `applied` (the parsed request body) onto `current` (`None`: the object
/// does not exist yet and is created), tracking field ownership in `metadata.managedFields`.
/// The entry's time is the wall clock; [`server_side_apply_at`] takes the simulator's.
pub fn server_side_apply(
    rt: &ResourceType,
    current: Option<&Value>,
    applied: &Value,
    options: &ApplyOptions,
) -> Result<Value> {
    server_side_apply_at(rt, current, applied, options, Timestamp::now())
}

fn target_of(rt: &ResourceType) -> Target<'static> {
    Target::Main { has_status: rt.subresources.iter().any(|s| s == "status") }
}

/// [`server_side_apply`] with the time recorded in managedFields given by the caller.
///
/// Fields are merged per manager: a field the manager applied before and omits now is removed
/// only if no other manager owns it, so a second apply holding only metadata (kubectl's
/// `kubectl-last-applied` follow-up) keeps the spec. Changing a field another manager owns
/// fails with [`Error::Conflict`] unless `force`.
pub fn server_side_apply_at(
    rt: &ResourceType,
    current: Option<&Value>,
    applied: &Value,
    options: &ApplyOptions,
    now: Timestamp,
) -> Result<Value> {
    if !applied.is_object() {
        return Err(Error::BadRequest("the applied configuration is not an object".into()));
    }
    let node = catalog().for_type(rt);
    // Quantities as the stored object holds them, so `cpu: 1` re-applied is no change.
    let mut applied = applied.clone();
    rt.strategy().canonicalize_quantities(&mut applied);
    let mut next = managedfields::apply(
        current,
        &applied,
        node,
        &options.field_manager,
        &rt.api_version(),
        target_of(rt),
        options.force,
        now,
    )?;
    omit_empty_metadata_maps(&mut next);
    Ok(next)
}

/// Records in `new.metadata.managedFields` that `manager` made the change `old → new` with an
/// Update operation (create: `old` is `None`; PUT, JSON/merge/strategic patch), so later
/// server-side applies conflict with it. `subresource` is `Some("status")` for status writes.
pub fn record_update(
    rt: &ResourceType,
    manager: &str,
    subresource: Option<&str>,
    old: Option<&Value>,
    new: &mut Value,
    now: Timestamp,
) -> Result<()> {
    let node = catalog().for_type(rt);
    let target = match subresource {
        Some(name) => Target::Subresource(name),
        None => target_of(rt),
    };
    Ok(managedfields::update(old, new, node, manager, &rt.api_version(), target, now)?)
}

/// The manager name upstream derives when a request has no `fieldManager`: the user agent up
/// to its first `/` (`kubectl/v1.33.0 (linux/amd64) …` → `kubectl`), else `unknown`.
pub fn manager_from_user_agent(user_agent: Option<&str>) -> String {
    match user_agent.map(|ua| ua.split('/').next().unwrap_or_default().trim()) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => "unknown".to_string(),
    }
}
// ---------------------------------------------------------------------------------------------
// Strategic merge patch, as k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (commit
// 03db535f) applies it server-side: `StrategicMergeMapPatch` with `MergeParallelList: true,
// IgnoreUnmatchedNulls: true`. Function names below match upstream's.

const DIRECTIVE_MARKER: &str = "$patch";
const RETAIN_KEYS_DIRECTIVE: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE_LIST_PREFIX: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER_PREFIX: &str = "$setElementOrder";

/// Applies a strategic merge `patch` to `original` following `node`'s patch metadata.
pub fn strategic_merge(original: &Value, patch: &Value, node: Option<Node<'_>>) -> Result<Value> {
    let Value::Object(patch) = patch else {
        return Err(Error::BadRequest("invalid JSON document".into()));
    };
    let original = match original {
        Value::Object(map) => map.clone(),
        _ => Map::new(),
    };
    merge_map(original, patch.clone(), node).map(Value::Object)
}

fn bad_patch_type(directive: &Value, patch: &Map<String, Value>) -> Error {
    Error::BadRequest(format!(
        "unknown patch type: {} in map: {}",
        go_print(directive),
        Value::Object(patch.clone())
    ))
}

fn go_print(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `mergeMap`: merges `patch` into `original`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    node: Option<Node<'_>>,
) -> Result<Map<String, Value>> {
    if let Some(directive) = patch.get(DIRECTIVE_MARKER).cloned() {
        // handleDirectiveInMergeMap
        return match directive.as_str() {
            Some("replace") => {
                patch.remove(DIRECTIVE_MARKER);
                // Upstream returns the patch verbatim; nested directives would then be dropped by
                // the typed decode. Processing them against an empty map gives that result.
                merge_map(Map::new(), patch, node)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(&directive, &patch)),
        };
    }
    apply_retain_keys_directive(&mut original, &mut patch)?;
    merge_patch_into_original(&mut original, &mut patch, node)?;
    for (key, patch_value) in patch {
        let (key, is_delete_list) = match key.strip_prefix(DELETE_FROM_PRIMITIVE_LIST_PREFIX) {
            Some(rest) => match rest.strip_prefix('/') {
                Some(field) if !field.is_empty() => (field.to_string(), true),
                _ => return Err(Error::BadRequest("invalid patch format of primitive list".into())),
            },
            None => (key, false),
        };
        if key.starts_with('$') {
            // An unknown directive: upstream keeps it and the typed decode drops it.
            continue;
        }
        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }
        let field = node.and_then(|n| n.field(&key));
        let child = field.map(|f| f.node);
        let Some(current) = original.remove(&key) else {
            if is_delete_list {
                // Nothing to delete from.
                continue;
            }
            original.insert(key, fresh_value(patch_value, field)?);
            continue;
        };
        let merged = match (current, patch_value) {
            (Value::Object(current), Value::Object(patch_value)) => {
                if field.is_some_and(|f| f.patch.replaces()) {
                    Value::Object(merge_map(Map::new(), patch_value, child)?)
                } else {
                    Value::Object(merge_map(current, patch_value, child)?)
                }
            }
            (Value::Array(current), Value::Array(patch_value)) => {
                merge_slice_handler(current, patch_value, field, is_delete_list)?
            }
            (_, patch_value) => fresh_value(patch_value, field)?,
        };
        original.insert(key, merged);
    }
    Ok(original)
}

/// A patch value stored where the original has nothing (or something of another type):
/// directives inside it are processed against an empty original.
fn fresh_value(value: Value, field: Option<Field<'_>>) -> Result<Value> {
    match value {
        Value::Object(map) => Ok(Value::Object(merge_map(Map::new(), map, field.map(|f| f.node))?)),
        Value::Array(items) if field.is_some_and(|f| f.patch.merges_lists()) => {
            merge_slice_handler(Vec::new(), items, field, false)
        }
        Value::Array(items) => {
            let element = field.and_then(|f| match f.node.shape() {
                Shape::List(element) => Some(element),
                _ => None,
            });
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(match item {
                    Value::Object(map) => Value::Object(merge_map(Map::new(), map, element)?),
                    other => other,
                });
            }
            Ok(Value::Array(out))
        }
        other => Ok(other),
    }
}

/// `applyRetainKeysDirective`: drops keys of `original` not listed in `$retainKeys`.
fn apply_retain_keys_directive(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<()> {
    let Some(retain) = patch.remove(RETAIN_KEYS_DIRECTIVE) else { return Ok(()) };
    let bad = || Error::BadRequest("invalid patch format of retainKeys".into());
    let Value::Array(retain) = retain else { return Err(bad()) };
    let listed = |key: &str| retain.iter().any(|v| v.as_str() == Some(key));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST_PREFIX)
            || key.starts_with(SET_ELEMENT_ORDER_PREFIX)
        {
            continue;
        }
        if !listed(key) {
            return Err(bad());
        }
    }
    original.retain(|key, _| listed(key));
    Ok(())
}

/// `mergePatchIntoOriginal`: handles `$setElementOrder/<list>` together with its list.
fn merge_patch_into_original(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    node: Option<Node<'_>>,
) -> Result<()> {
    let order_keys: Vec<String> =
        patch.keys().filter(|k| k.starts_with(SET_ELEMENT_ORDER_PREFIX)).cloned().collect();
    let bad = || Error::BadRequest("invalid patch format of setElementOrder list".into());
    for order_key in order_keys {
        let Some(Value::Array(order)) = patch.remove(&order_key) else { return Err(bad()) };
        let Some(list_key) = order_key
            .strip_prefix(SET_ELEMENT_ORDER_PREFIX)
            .and_then(|rest| rest.strip_prefix('/'))
            .filter(|k| !k.is_empty())
            .map(str::to_string)
        else {
            return Err(bad());
        };
        let original_list = match original.get(&list_key) {
            Some(Value::Array(items)) => Some(items.clone()),
            Some(_) => return Err(Error::BadRequest(format!("expected a list for {list_key}"))),
            None => None,
        };
        let patch_list = match patch.remove(&list_key) {
            Some(Value::Array(items)) => Some(items),
            Some(Value::Null) | None => None,
            Some(_) => return Err(Error::BadRequest(format!("expected a list for {list_key}"))),
        };
        let field = node.and_then(|n| n.field(&list_key));
        let merge_key = field.and_then(|f| f.patch.merge_key);
        validate_patch_with_set_order_list(patch_list.as_deref().unwrap_or_default(), &order, merge_key)?;
        let merged = match (original_list.clone(), patch_list.clone()) {
            (Some(current), None) => current,
            (None, Some(patch_list)) => match fresh_value(Value::Array(patch_list), field)? {
                Value::Array(items) => items,
                _ => Vec::new(),
            },
            (Some(current), Some(patch_list)) => {
                match merge_slice_handler(current, patch_list, field, false)? {
                    Value::Array(items) => items,
                    _ => Vec::new(),
                }
            }
            (None, None) => continue,
        };
        let (patch_items, server_only) = partition_by_present_in_list(merged, &order, merge_key)?;
        let both = normalize_element_order(
            patch_items,
            server_only,
            &order,
            original_list.as_deref().unwrap_or_default(),
            merge_key,
        )?;
        original.insert(list_key, Value::Array(both));
    }
    Ok(())
}

/// `validatePatchWithSetOrderList`: the patch list's order must agree with `$setElementOrder`.
fn validate_patch_with_set_order_list(
    patch_list: &[Value],
    order: &[Value],
    merge_key: Option<&str>,
) -> Result<()> {
    if order.is_empty() || patch_list.is_empty() {
        return Ok(());
    }
    let non_delete: Vec<&Value> = match merge_key {
        Some(_) => patch_list
            .iter()
            .filter(|v| v.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some("delete"))
            .collect(),
        None => patch_list.iter().collect(),
    };
    let (mut patch_index, mut order_index) = (0, 0);
    while patch_index < non_delete.len() && order_index < order.len() {
        if non_delete[patch_index].get(DIRECTIVE_MARKER).is_some() {
            patch_index += 1;
            continue;
        }
        if merge_key_value_equal(non_delete[patch_index], &order[order_index], merge_key)? {
            patch_index += 1;
        }
        order_index += 1;
    }
    if patch_index < non_delete.len() && order_index >= order.len() {
        return Err(Error::BadRequest(format!(
            "The order in patch list:\n{}\n doesn't match $setElementOrder list:\n{}\n",
            Value::Array(patch_list.to_vec()),
            Value::Array(order.to_vec())
        )));
    }
    Ok(())
}

fn no_merge_key(item: &Value, key: &str) -> Error {
    Error::BadRequest(format!("map: {item} does not contain declared merge key: {key}"))
}

fn merge_key_value_equal(left: &Value, right: &Value, merge_key: Option<&str>) -> Result<bool> {
    let Some(key) = merge_key else { return Ok(left == right) };
    let l = left.get(key).ok_or_else(|| no_merge_key(left, key))?;
    let r = right.get(key).ok_or_else(|| no_merge_key(right, key))?;
    Ok(l == r)
}

/// `mergeSliceHandler`: merge lists with a merge strategy, replace the others.
fn merge_slice_handler(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: Option<Field<'_>>,
    is_delete_list: bool,
) -> Result<Value> {
    match field.filter(|f| f.patch.merges_lists()) {
        Some(field) => merge_slice(original, patch, field, is_delete_list).map(Value::Array),
        None if is_delete_list => Ok(Value::Array(delete_from_slice(original, &patch))),
        None => fresh_value(Value::Array(patch), field),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ElementKind {
    Map,
    Scalar,
}

/// `sliceElementType`: all elements must be of one kind, and not lists.
fn element_kind(lists: &[&[Value]]) -> Result<Option<ElementKind>> {
    let mut kind = None;
    for item in lists.iter().flat_map(|l| l.iter()) {
        let this = match item {
            Value::Object(_) => ElementKind::Map,
            Value::Array(_) => return Err(Error::BadRequest("lists of lists are not supported".into())),
            _ => ElementKind::Scalar,
        };
        match kind {
            None => kind = Some(this),
            Some(previous) if previous != this => {
                return Err(Error::BadRequest("list element types are not identical".into()));
            }
            Some(_) => {}
        }
    }
    Ok(kind)
}

/// `mergeSlice`.
fn merge_slice(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: Field<'_>,
    is_delete_list: bool,
) -> Result<Vec<Value>> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let Some(kind) = element_kind(&[&original, &patch])? else { return Ok(original) };
    let merge_key = field.patch.merge_key;
    let element = match field.node.shape() {
        Shape::List(element) => Some(element),
        _ => None,
    };
    let (merged, patch, original) = if kind == ElementKind::Scalar {
        if is_delete_list {
            return Ok(delete_from_slice(original, &patch));
        }
        let mut both = original.clone();
        both.extend(patch.iter().cloned());
        (deduplicate_scalars(both), patch, original)
    } else {
        let Some(key) = merge_key else {
            return Err(Error::BadRequest("cannot merge lists without merge key for type map".into()));
        };
        let (original, patch) = merge_slice_with_special_elements(original, patch, key)?;
        let merged = merge_slice_without_special_elements(original.clone(), &patch, key, element)?;
        (merged, patch, original)
    };
    let key = if kind == ElementKind::Map { merge_key } else { None };
    let (patch_items, server_only) = partition_by_present_in_list(merged, &patch, key)?;
    normalize_element_order(patch_items, server_only, &patch, &original, key)
}

/// `mergeSliceWithSpecialElements`: `$patch: delete` removes by key, `$patch: replace` replaces.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    key: &str,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(DIRECTIVE_MARKER).cloned() else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let value = item.get(key).ok_or_else(|| no_merge_key(&item, key))?;
                original.retain(|o| o.get(key) != Some(value));
            }
            Some("replace") => replace = true,
            Some("merge") => {
                return Err(Error::BadRequest("merging lists cannot yet be specified in the patch".into()));
            }
            _ => {
                let map = item.as_object().cloned().unwrap_or_default();
                return Err(bad_patch_type(&directive, &map));
            }
        }
    }
    if replace { Ok((plain, Vec::new())) } else { Ok((original, plain)) }
}

/// `mergeSliceWithoutSpecialElements`: merge items by key, append new ones.
fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    key: &str,
    element: Option<Node<'_>>,
) -> Result<Vec<Value>> {
    for item in patch {
        let Value::Object(item_map) = item else {
            return Err(Error::BadRequest(format!("value for key {key} is not a map")));
        };
        let value = item_map.get(key).ok_or_else(|| no_merge_key(item, key))?;
        match original.iter().position(|o| o.get(key) == Some(value)) {
            Some(at) => {
                let current = match std::mem::take(&mut original[at]) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                original[at] = Value::Object(merge_map(current, item_map.clone(), element)?);
            }
            None => original.push(Value::Object(merge_map(Map::new(), item_map.clone(), element)?)),
        }
    }
    Ok(original)
}

/// `deleteFromSlice`.
fn delete_from_slice(current: Vec<Value>, to_delete: &[Value]) -> Vec<Value> {
    current.into_iter().filter(|v| !to_delete.contains(v)).collect()
}

/// `deduplicateScalars`, including its order (a duplicate is overwritten by the last element).
fn deduplicate_scalars(mut items: Vec<Value>) -> Vec<Value> {
    let mut length = items.len();
    let mut i = 0;
    while i + 1 < length {
        let mut j = i + 1;
        while j < length {
            if items[i] == items[j] {
                items[j] = items[length - 1].clone();
                length -= 1;
                items.truncate(length);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    items
}

/// `partitionMapsByPresentInList` / `partitionPrimitivesByPresentInList`.
fn partition_by_present_in_list(
    items: Vec<Value>,
    partition_by: &[Value],
    merge_key: Option<&str>,
) -> Result<(Vec<Value>, Vec<Value>)> {
    let mut present = Vec::new();
    let mut server_only = Vec::new();
    for item in items {
        let found = match merge_key {
            Some(key) => {
                let value = item.get(key).ok_or_else(|| no_merge_key(&item, key))?;
                partition_by.iter().any(|p| p.get(key) == Some(value))
            }
            None => partition_by.contains(&item),
        };
        if found { present.push(item) } else { server_only.push(item) }
    }
    Ok((present, server_only))
}

fn index_in(list: &[Value], item: &Value, merge_key: Option<&str>) -> Option<usize> {
    let value = |v: &'_ Value| -> Option<Value> {
        match merge_key {
            Some(key) => v.get(key).cloned(),
            None => Some(v.clone()),
        }
    };
    let wanted = value(item);
    list.iter().position(|v| value(v) == wanted)
}

/// `normalizeElementOrder`: patch items in the patch's order, server-only items in the live
/// order, then the two interleaved by `mergeSortedSlice`.
fn normalize_element_order(
    patch: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: Option<&str>,
) -> Result<Vec<Value>> {
    let patch = normalize_slice_order(patch, patch_order, merge_key)?;
    let server_only = normalize_slice_order(server_only, server_order, merge_key)?;
    Ok(merge_sorted_slice(server_only, patch, server_order, merge_key))
}

/// `normalizeSliceOrder`: a stable sort by position in `order` (items not in it go last; upstream's
/// comparator is not a strict order there, so this is the deterministic reading of it).
fn normalize_slice_order(items: Vec<Value>, order: &[Value], merge_key: Option<&str>) -> Result<Vec<Value>> {
    if let Some(key) = merge_key {
        for item in items.iter().chain(order.iter()) {
            if item.get(key).is_none() {
                return Err(no_merge_key(item, key));
            }
        }
    }
    let (mut keep, deletes): (Vec<Value>, Vec<Value>) = items.into_iter().partition(|v| {
        merge_key.is_none() || v.get(DIRECTIVE_MARKER).and_then(Value::as_str) != Some("delete")
    });
    keep.sort_by_key(|item| index_in(order, item, merge_key).unwrap_or(usize::MAX));
    keep.extend(deletes);
    Ok(keep)
}

/// `mergeSortedSlice`: inserts each `left` (server-only) item before the first `right` (patch)
/// item that comes after it in `server_order`.
fn merge_sorted_slice(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &[Value],
    merge_key: Option<&str>,
) -> Vec<Value> {
    let size = left.len() + right.len();
    let mut out = Vec::with_capacity(size);
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    while out.len() < size {
        match (left.peek(), right.peek()) {
            (Some(_), None) => out.extend(left.next()),
            (None, Some(_)) => out.extend(right.next()),
            (Some(l), Some(r)) => {
                let less = match (index_in(server_order, l, merge_key), index_in(server_order, r, merge_key))
                {
                    (Some(li), Some(ri)) => li < ri,
                    _ => false,
                };
                if less { out.extend(left.next()) } else { out.extend(right.next()) }
            }
            (None, None) => break,
        }
    }
    out
}
