//! `fieldValidation=Strict|Warn|Ignore`: unknown and duplicate fields checked against the schema.
//!
//! Upstream decodes with `sigs.k8s.io/json` strict mode (apimachinery
//! `pkg/runtime/serializer/json/json.go`) and reports `strict decoding error: unknown field "…",
//! duplicate field "…"` (apimachinery `pkg/runtime/error.go` `NewStrictDecodingError`); under
//! `Warn` each problem becomes a `Warning: 299 - "unknown field \"…\""` header. Unknown fields are
//! always dropped from the stored object, as decoding into the typed struct drops them.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

use super::schema::{ListType, Node, Shape, catalog};
use crate::{crdvalidation::gofmt::float as go_float, gojson, resources::ResourceType};

/// Errors of field validation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Strict mode found unknown or duplicate fields (400 BadRequest).
    #[error("strict decoding error: {}", .0.join(", "))]
    Strict(Vec<String>),
    /// The body is not valid JSON (400 BadRequest).
    #[error("{0}")]
    Malformed(String),
    /// A server-side apply configuration the type converter refuses (undeclared fields, wrong
    /// types): a plain error upstream, so 500 with no reason.
    #[error("{0}")]
    TypedPatch(String),
    /// The `fieldValidation` query parameter has an unknown value (400 BadRequest).
    #[error("fieldValidation parameter unsupported: {0}")]
    UnknownDirective(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The `fieldValidation` directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Reject unknown and duplicate fields with 400.
    Strict,
    /// Accept, with one warning per problem (the server default).
    Warn,
    /// Accept silently.
    Ignore,
}

impl Mode {
    /// Parses the query parameter; absent or empty means `Warn`, as on a 1.33 server.
    pub fn from_query(value: Option<&str>) -> Result<Mode> {
        match value.unwrap_or_default() {
            "Strict" => Ok(Mode::Strict),
            "" | "Warn" => Ok(Mode::Warn),
            "Ignore" => Ok(Mode::Ignore),
            other => Err(Error::UnknownDirective(other.to_string())),
        }
    }
}

/// The unknown-field problems of `object` as upstream words them (`unknown field "a.b[0].c"`),
/// in document order. Objects of kinds without a built-in schema (custom resources) report none.
pub fn unknown_fields(rt: &ResourceType, object: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some(node) = catalog().for_type(rt) {
        walk(object, node, &mut String::new(), &mut problems);
    }
    problems
}

/// One step down a path as upstream prints it.
enum Step<'a> {
    /// `a.b`: a field name, after a `.` unless it is the first step.
    Field(&'a str),
    /// `.a.b`: a field name, always after a `.` (structured-merge-diff's paths).
    Dotted(&'a str),
    /// `[0]`, `[name="a"]`: appended as it is.
    Suffix(&'a str),
}

/// Appends `step` to `path`.
fn push_step(path: &mut String, step: Step<'_>) {
    match step {
        Step::Field(name) if path.is_empty() => path.push_str(name),
        Step::Field(name) | Step::Dotted(name) => {
            path.push('.');
            path.push_str(name);
        }
        Step::Suffix(text) => path.push_str(text),
    }
}

/// Appends `step` to `path`, runs `then`, and cuts the step off again: one path buffer for a
/// whole walk, so a deep object costs its depth in memory, not its depth squared.
fn with_step<T>(path: &mut String, step: Step<'_>, then: impl FnOnce(&mut String) -> T) -> T {
    let length = path.len();
    push_step(path, step);
    let result = then(path);
    path.truncate(length);
    result
}

fn walk(value: &Value, node: Node<'_>, path: &mut String, problems: &mut Vec<String>) {
    match (node.shape(), value) {
        (Shape::Struct, Value::Object(map)) => {
            for (key, child) in map {
                with_step(path, Step::Field(key), |path| match node.field(key) {
                    Some(field) => walk(child, field.node, path, problems),
                    None => problems.push(format!("unknown field \"{path}\"")),
                });
            }
        }
        (Shape::Map(elem), Value::Object(map)) => {
            for (key, child) in map {
                with_step(path, Step::Field(key), |path| walk(child, elem, path, problems));
            }
        }
        (Shape::List(elem), Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                with_step(path, Step::Suffix(&format!("[{i}]")), |path| walk(item, elem, path, problems));
            }
        }
        _ => {}
    }
}

/// Converts a server-side apply configuration to the schema's typed form as upstream's
/// structured-merge-diff type converter does, in every `fieldValidation` mode: a field the schema
/// does not declare (`.spec.containers[name="a"].imagePullPolicyy: field not declared in schema`)
/// or a value of the wrong type (`.data.a: expected string, got
/// &value.valueUnstructured{Value:1}`) fails the whole apply with upstream's `failed to create
/// typed patch object (<ns>/<name>; <group>/<version>, Kind=<kind>): …`
/// (apimachinery `pkg/util/managedfields/internal/structuredmerge.go` `Apply`; the texts from
/// sigs.k8s.io/structured-merge-diff/v4 `typed/validate.go`, `typed/helpers.go` and
/// `ValidationErrors.Error`, several errors as `errors:` then one indented line each).
pub fn check_apply(rt: &ResourceType, config: &Value) -> Result<()> {
    let mut problems = Vec::new();
    if let Some(node) = catalog().for_type(rt) {
        walk_apply(config, node, None, &mut String::new(), &mut problems);
    }
    let errors = match problems.as_slice() {
        [] => return Ok(()),
        [only] => only.clone(),
        many => format!("errors:\n  {}", many.join("\n  ")),
    };
    let namespace = config.pointer("/metadata/namespace").and_then(Value::as_str).unwrap_or_default();
    let name = config.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    // `schema.GroupVersionKind.String()`: the core group is the empty string before the slash.
    let gvk = format!("{}/{}, Kind={}", rt.group, rt.version, rt.kind);
    Err(Error::TypedPatch(format!(
        "failed to create typed patch object ({namespace}/{name}; {gvk}): {errors}"
    )))
}

fn walk_apply(
    value: &Value,
    node: Node<'_>,
    list: Option<ListType>,
    path: &mut String,
    problems: &mut Vec<String>,
) {
    if value.is_null() {
        return; // null is a valid value of every type
    }
    let node = node.resolve();
    if matches!(
        node.definition,
        Some(
            "io.k8s.apimachinery.pkg.api.resource.Quantity"
                | "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
        )
    ) {
        // Untyped scalars to structured-merge-diff.
        if value.is_array() || value.is_object() {
            problems.push(format!("{path}: expected any scalar, got {}", go_value_pointer(value)));
        }
        return;
    }
    match (node.shape(), value) {
        (Shape::Struct, Value::Object(map)) => {
            for (key, child) in map {
                with_step(path, Step::Dotted(key), |path| match node.field(key) {
                    Some(field) => walk_apply(child, field.node, Some(field.list), path, problems),
                    None => problems.push(format!("{path}: field not declared in schema")),
                });
            }
        }
        (Shape::Map(elem), Value::Object(map)) => {
            for (key, child) in map {
                with_step(path, Step::Dotted(key), |path| walk_apply(child, elem, None, path, problems));
            }
        }
        (Shape::List(elem), Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let element = match list {
                    Some(ListType::Map(keys)) => {
                        let parts: Vec<String> =
                            keys.iter().filter_map(|k| item.get(*k).map(|v| format!("{k}={v}"))).collect();
                        format!("[{}]", parts.join(","))
                    }
                    Some(ListType::Set) => format!("[={item}]"),
                    _ => format!("[{i}]"),
                };
                with_step(path, Step::Suffix(&element), |path| walk_apply(item, elem, None, path, problems));
            }
        }
        (Shape::Struct | Shape::Map(_), other) => {
            problems.push(format!("{path}: expected map, got {}", go_value_pointer(other)))
        }
        (Shape::List(_), other) => {
            problems.push(format!("{path}: expected list, got {}", go_value_pointer(other)))
        }
        (Shape::Scalar, other) => {
            let problem = match node.schema.get("type").and_then(Value::as_str).unwrap_or_default() {
                "string" if !other.is_string() => Some(format!(
                    "expected string, got &value.valueUnstructured{{Value:{}}}",
                    go_sharp_v(other)
                )),
                "integer" | "number" if !other.is_number() => {
                    Some(format!("expected numeric (int or float), got {}", go_type_name(other)))
                }
                "boolean" if !other.is_boolean() => {
                    Some(format!("expected boolean, got {}", go_value_pointer(other)))
                }
                _ => None,
            };
            if let Some(problem) = problem {
                problems.push(format!("{path}: {problem}"));
            }
        }
        (Shape::Opaque, _) => {}
    }
}

/// Go's `%v` of a value decoded from JSON into `interface{}` (numbers are float64).
fn go_v(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => go_float(n.as_f64().unwrap_or_default()),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!("[{}]", items.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0)); // Go prints maps sorted by key
            let parts: Vec<String> = entries.iter().map(|(k, v)| format!("{k}:{}", go_v(v))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// Go's `%#v` of the same.
fn go_sharp_v(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".into(),
        Value::String(s) => format!("{s:?}"),
        Value::Array(items) => {
            format!("[]interface {{}}{{{}}}", items.iter().map(go_sharp_v).collect::<Vec<_>>().join(", "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> =
                entries.iter().map(|(k, v)| format!("{k:?}:{}", go_sharp_v(v))).collect();
            format!("map[string]interface {{}}{{{}}}", parts.join(", "))
        }
        other => go_v(other),
    }
}

/// `%v` of structured-merge-diff's `value.Value` (a pointer to a one-field struct).
fn go_value_pointer(value: &Value) -> String {
    format!("&{{{}}}", go_v(value))
}

/// Go's `%T` of the same.
fn go_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Removes fields the schema does not declare (what the typed decode does in every mode).
pub fn strip_unknown(rt: &ResourceType, object: &mut Value) {
    if let Some(node) = catalog().for_type(rt) {
        strip(object, node);
    }
}

fn strip(value: &mut Value, node: Node<'_>) {
    match (node.shape(), value) {
        (Shape::Struct, Value::Object(map)) => {
            map.retain(|key, _| node.field(key).is_some());
            for (key, child) in map.iter_mut() {
                if let Some(field) = node.field(key) {
                    strip(child, field.node);
                }
            }
        }
        (Shape::Map(elem), Value::Object(map)) => map.values_mut().for_each(|v| strip(v, elem)),
        (Shape::List(elem), Value::Array(items)) => items.iter_mut().for_each(|v| strip(v, elem)),
        _ => {}
    }
}

/// Applies `mode` to an already decoded object: `Err` under Strict when there are unknown
/// fields, the warnings under Warn, nothing under Ignore. The object is not changed; call
/// [`strip_unknown`] before storing it.
pub fn check(rt: &ResourceType, object: &Value, mode: Mode) -> Result<Vec<String>> {
    finish(unknown_fields(rt, object), mode)
}

fn finish(problems: Vec<String>, mode: Mode) -> Result<Vec<String>> {
    match mode {
        Mode::Strict if !problems.is_empty() => Err(Error::Strict(problems)),
        Mode::Strict | Mode::Ignore => Ok(Vec::new()),
        Mode::Warn => Ok(problems),
    }
}

/// Decodes a JSON request body (POST/PUT), finds duplicate and unknown fields, applies `mode`,
/// and returns the object with unknown fields removed plus the warnings to send.
pub fn decode_body(rt: &ResourceType, body: &[u8], mode: Mode) -> Result<(Value, Vec<String>)> {
    let (mut object, mut problems) = decode_tracking_duplicates(body)?;
    problems.extend(unknown_fields(rt, &object));
    let warnings = finish(problems, mode)?;
    strip_unknown(rt, &mut object);
    Ok((object, warnings))
}

/// The value of a `Warning` response header for one warning text (RFC 7234 code 299).
pub fn warning_header(text: &str) -> String {
    format!("299 - {}", serde_json::to_string(text).unwrap_or_default())
}

/// The recorder's total: past this many characters of warning text, warnings are truncated.
const WARNING_TOTAL_RUNES: usize = 4 * 1024;
/// Each warning's length once the recorder truncates.
const WARNING_ITEM_RUNES: usize = 256;

/// The `Warning` header values a response carries for `warnings`, as apiserver's warning
/// recorder writes them (`endpoints/filters/warning.go` `recorder.AddWarning`): each text once;
/// while the texts stay within [`WARNING_TOTAL_RUNES`] characters they go out whole; the first
/// one past it switches to truncation, which rewrites the ones already sent cut to
/// [`WARNING_ITEM_RUNES`] and keeps adding cut ones until the total is reached again.
pub fn warning_headers(warnings: &[String]) -> Vec<String> {
    let cut = |text: &str| -> (String, usize) {
        let runes = text.chars().count();
        if runes > WARNING_ITEM_RUNES {
            (text.chars().take(WARNING_ITEM_RUNES).collect(), WARNING_ITEM_RUNES)
        } else {
            (text.to_string(), runes)
        }
    };
    let mut recorded: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut ordered: Vec<&str> = Vec::new();
    let mut headers = Vec::new();
    let (mut written, mut truncating) = (0usize, false);
    for text in warnings.iter().map(String::as_str) {
        if text.is_empty() || (truncating && written >= WARNING_TOTAL_RUNES) || !recorded.insert(text) {
            continue;
        }
        ordered.push(text);
        let (shown, runes) = if truncating { cut(text) } else { (text.to_string(), text.chars().count()) };
        if truncating || written + runes <= WARNING_TOTAL_RUNES {
            written += runes;
            headers.push(warning_header(&shown));
            continue;
        }
        truncating = true;
        headers.clear();
        written = 0;
        for earlier in &ordered {
            let (shown, runes) = cut(earlier);
            written += runes;
            headers.push(warning_header(&shown));
        }
    }
    headers
}

/// Parses JSON, reporting keys that occur twice in one object as `duplicate field "path"`
/// (the last value wins, as in Go's decoder). Nesting is bounded as Go's decoder bounds it
/// ([`gojson::MAX_NESTING_DEPTH`]).
pub fn decode_tracking_duplicates(body: &[u8]) -> Result<(Value, Vec<String>)> {
    if let Some(overflow) = gojson::nesting_overflow(body) {
        return Err(Error::Malformed(gojson::DecodeError::TooDeep(overflow).to_string()));
    }
    let path = RefCell::new(String::new());
    let duplicates = RefCell::new(Vec::new());
    let mut deserializer = serde_json::Deserializer::from_slice(body);
    deserializer.disable_recursion_limit();
    let value = Tracking { path: &path, duplicates: &duplicates }
        .deserialize(&mut deserializer)
        .map_err(|e| Error::Malformed(e.to_string()))?;
    deserializer.end().map_err(|e| Error::Malformed(e.to_string()))?;
    Ok((value, duplicates.into_inner()))
}

/// A value being read, and where: the path is one buffer shared by every level.
#[derive(Clone, Copy)]
struct Tracking<'a> {
    path: &'a RefCell<String>,
    duplicates: &'a RefCell<Vec<String>>,
}

impl Tracking<'_> {
    /// Reads the next value with `step` appended to the path.
    fn read<T, E>(self, step: Step<'_>, next: impl FnOnce(Self) -> Result<T, E>) -> Result<T, E> {
        let length = self.path.borrow().len();
        push_step(&mut self.path.borrow_mut(), step);
        let result = next(self);
        self.path.borrow_mut().truncate(length);
        result
    }
}

impl<'de> DeserializeSeed<'de> for Tracking<'_> {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tracking<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map(Value::Number).unwrap_or(Value::Null))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) =
            self.read(Step::Suffix(&format!("[{}]", items.len())), |seed| seq.next_element_seed(seed))?
        {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Map::new();
        while let Some(key) = access.next_key::<String>()? {
            let repeated = map.contains_key(&key);
            let value = self.read(Step::Field(&key), |seed| {
                let duplicate = repeated.then(|| format!("duplicate field \"{}\"", seed.path.borrow()));
                let value = access.next_value_seed(seed)?;
                // After the value's own problems, as Go's decoder reports them.
                seed.duplicates.borrow_mut().extend(duplicate);
                Ok(value)
            })?;
            map.insert(key, value);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_as_go_prints_them_with_v() {
        let cases = [
            (1.0, "1"),
            (1.5, "1.5"),
            (123456.0, "123456"),
            (1e6, "1e+06"),
            (1.234567e6, "1.234567e+06"),
            (1e30, "1e+30"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (0.0, "0"),
        ];
        for (number, go) in cases {
            assert_eq!(go_float(number), go, "{number}");
        }
    }
    use crate::resources::{built_in, find};

    #[test]
    fn duplicates_are_reported_with_their_path() {
        let (value, duplicates) =
            decode_tracking_duplicates(br#"{"spec":{"replicas":1,"replicas":2},"a":[{"b":1,"b":2}]}"#)
                .unwrap();
        assert_eq!(value["spec"]["replicas"], 2);
        assert_eq!(duplicates, vec![r#"duplicate field "spec.replicas""#, r#"duplicate field "a[0].b""#]);
    }

    #[test]
    fn unknown_container_field_is_named_by_path() {
        let types = built_in();
        let rt = find(&types, "apps", "v1", "deployments").unwrap();
        let body = br#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x","labels":{"any":"ok"}},
            "spec":{"template":{"spec":{"containers":[{"name":"a","image":"i","imagePullPolicyy":"Always"}]}}}}"#;
        let error = decode_body(rt, body, Mode::Strict).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"strict decoding error: unknown field "spec.template.spec.containers[0].imagePullPolicyy""#
        );
        let (object, warnings) = decode_body(rt, body, Mode::Warn).unwrap();
        assert_eq!(warnings, vec![r#"unknown field "spec.template.spec.containers[0].imagePullPolicyy""#]);
        assert!(object["spec"]["template"]["spec"]["containers"][0].get("imagePullPolicyy").is_none());
        assert_eq!(object["metadata"]["labels"]["any"], "ok");
        let (_, warnings) = decode_body(rt, body, Mode::Ignore).unwrap();
        assert!(warnings.is_empty());
        assert_eq!(warning_header(&error_text()), r#"299 - "unknown field \"spec.x\"""#);
    }

    fn error_text() -> String {
        r#"unknown field "spec.x""#.to_string()
    }
}
