//! Decoding against the schema: the JSON types Go's typed decoder refuses, in its words.
//!
//! kube-apiserver decodes every body, and every patched object, into the kind's Go struct
//! (`sigs.k8s.io/json`, a fork of `encoding/json`); a value of the wrong JSON type fails there,
//! before admission, with `json: cannot unmarshal number into Go struct field ConfigMap.data of
//! type string` — the innermost struct whose field was being decoded, the path of JSON field
//! names from the root (map keys and list indexes are not part of it), and the Go type expected
//! (encoding/json `decode.go` `UnmarshalTypeError`, `addErrorContext`). Only the first error is
//! reported, in document order, as Go's decoder keeps the first (`saveError`). `null` decodes
//! to the zero value anywhere. The schemas are the k8s-openapi ones the server publishes
//! ([`super::schema`]); custom resources are checked against their structural schema in
//! [`super::crd`].

use serde_json::{Number, Value};

use super::schema::{Node, Shape, catalog};
use super::status::ApiError;
use crate::resources::ResourceType;

/// The first JSON type error found in an object.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A value of the wrong JSON type (encoding/json `UnmarshalTypeError`).
    #[error("json: cannot unmarshal {value} into Go struct field {go_struct}.{field} of type {go_type}")]
    WrongType {
        /// `number`, `number 1e30`, `string`, `bool`, `array` or `object`.
        value: String,
        /// The Go struct whose field was being decoded, e.g. `ConfigMap`.
        go_struct: String,
        /// The JSON field path from the root, e.g. `spec.replicas`.
        field: String,
        /// The Go type expected, e.g. `int32`, `map[string]string`, `v1.ObjectMeta`.
        go_type: String,
    },
    /// A quantity that is neither a string nor a number (`resource.Quantity.UnmarshalJSON`,
    /// apimachinery `pkg/api/resource/quantity.go` `ErrFormatWrong`).
    #[error("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")]
    Quantity,
    /// A `[]byte` field (`format: byte`, e.g. `ConfigMap.binaryData`, `Secret.data`) that is
    /// not standard base64: Go's `base64.CorruptInputError`, returned bare by the decoder.
    #[error("illegal base64 data at input byte {0}")]
    Base64(usize),
}

/// Checks `object` against the schema of the built-in kind `rt`; `Ok` for kinds without one.
pub fn check(rt: &ResourceType, object: &Value) -> Result<(), Error> {
    let Some(node) = catalog().for_type(rt) else { return Ok(()) };
    let mut walk = Walk { go_struct: rt.kind.clone(), path: Vec::new(), depth: 0 };
    walk.value(node, object)
}

/// A custom resource's `metadata` decoded alone into `metav1.ObjectMeta`, as apiextensions'
/// `schema/objectmeta/coerce.go` `GetObjectMetaWithOptions` decodes it (so the path starts at
/// the struct: `ObjectMeta.labels`).
pub fn check_object_meta(metadata: &Value) -> Result<(), Error> {
    let Some(node) = catalog().named("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta") else {
        return Ok(());
    };
    let mut walk = Walk { go_struct: "ObjectMeta".into(), path: Vec::new(), depth: 0 };
    walk.value(node, metadata)
}

/// A create or update body of the wrong type: 400 as apiserver's `transformDecodeError`
/// (`endpoints/handlers/rest.go`) words it.
pub fn check_body(rt: &ResourceType, object: &Value) -> Result<(), ApiError> {
    check(rt, object).map_err(|error| {
        let kind = &rt.kind;
        ApiError::bad_request(format!(
            "{kind} in version \"{}\" cannot be handled as a {kind}: {error}",
            rt.version
        ))
    })
}

/// A patched object of the wrong type: 422 ([`ApiError::patch_undecodable`]).
pub fn check_patched(rt: &ResourceType, patched: &Value) -> Result<(), ApiError> {
    check(rt, patched).map_err(|error| ApiError::patch_undecodable(&patched.to_string(), error))
}

/// The legacy scheme's name as apimachinery's `runtime.NewScheme` records it (the call site in
/// `pkg/api/legacyscheme/scheme.go`), which its `notRegisteredErr` quotes.
const LEGACY_SCHEME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// A merge or JSON patch that changes the object's `apiVersion` or `kind`: 422
/// ([`ApiError::patch_undecodable`]). Upstream decodes the patched JSON into the URL's type
/// (`jsonPatcher.applyPatchToCurrentObject`, `runtime.DecodeInto`): the JSON serializer takes
/// the type the document names (`runtime.UseOrCreateObject`), which for a kind the scheme does
/// not know fails with `no kind "Bogus" is registered for version "v1" in scheme
/// "pkg/api/legacyscheme/scheme.go:30"` (`runtime.notRegisteredErr`), and for another kind it
/// knows decodes that kind and then fails converting it to the URL's internal type (`converting
/// (v1.Secret) to (core.ConfigMap): unknown conversion`, `conversion.Converter.Convert`). A
/// field left empty is filled from the URL's type, so removing `kind` is not a change. A
/// strategic merge patch is not checked: upstream converts its result with
/// `FromUnstructured`, which ignores the type fields, so such a patch keeps the URL's kind.
pub fn check_patched_kind(rt: &ResourceType, patched: &Value) -> Result<(), ApiError> {
    let api_version = patched["apiVersion"]
        .as_str()
        .filter(|v| !v.is_empty())
        .map_or_else(|| rt.api_version(), str::to_string);
    let kind = patched["kind"].as_str().filter(|k| !k.is_empty()).unwrap_or(&rt.kind);
    if api_version == rt.api_version() && kind == rt.kind {
        return Ok(());
    }
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", &api_version));
    let registered =
        crate::kinds::BUILT_IN.iter().any(|k| k.group == group && k.version == version && k.kind == kind);
    let error = if registered {
        format!(
            "converting ({version}.{kind}) to ({}.{}): unknown conversion",
            internal_package(&rt.group),
            rt.kind
        )
    } else {
        format!("no kind {kind:?} is registered for version {api_version:?} in scheme {LEGACY_SCHEME:?}")
    };
    Err(ApiError::patch_undecodable(
        &crate::gojson::to_string(&crate::gojson::sorted(patched.clone())),
        error,
    ))
}

/// The Go package of a group's internal types in kube-apiserver (`k8s.io/kubernetes/pkg/apis/
/// <package>`), as `reflect.Type` names it: the group's first label, `core` for the core group
/// and for `events.k8s.io`, whose internal type is `core.Event`.
fn internal_package(group: &str) -> &str {
    match group {
        "" | "events.k8s.io" => "core",
        group => group.split('.').next().unwrap_or(group),
    }
}

/// Go's decoder has its own depth limit (10,000); past this depth the value is accepted
/// unchecked rather than risking the stack (bodies are at most 3 MiB).
const MAX_DEPTH: usize = 512;

struct Walk {
    go_struct: String,
    path: Vec<String>,
    depth: usize,
}

impl Walk {
    fn wrong(&self, value: String, go_type: String) -> Error {
        Error::WrongType { value, go_struct: self.go_struct.clone(), field: self.path.join("."), go_type }
    }

    fn value(&mut self, node: Node<'_>, value: &Value) -> Result<(), Error> {
        if value.is_null() || self.depth > MAX_DEPTH {
            return Ok(());
        }
        let node = node.resolve();
        match node.definition {
            Some("io.k8s.apimachinery.pkg.api.resource.Quantity") => {
                return if matches!(value, Value::String(_) | Value::Number(_)) {
                    Ok(())
                } else {
                    Err(Error::Quantity)
                };
            }
            Some("io.k8s.apimachinery.pkg.util.intstr.IntOrString") => {
                return match value {
                    Value::String(_) => Ok(()),
                    Value::Number(n) if int_fits(n, i32::MIN as i64, i32::MAX as i64) => Ok(()),
                    other => Err(self.wrong(json_type(other, true), "int32".into())),
                };
            }
            _ => {}
        }
        match node.shape() {
            Shape::Opaque => Ok(()),
            Shape::Scalar => self.scalar(node, value),
            Shape::List(items) => match value {
                Value::Array(elements) => {
                    self.depth += 1;
                    let result = elements.iter().try_for_each(|element| self.value(items, element));
                    self.depth -= 1;
                    result
                }
                other => Err(self.wrong(json_type(other, false), go_type(node))),
            },
            Shape::Map(values) => match value {
                Value::Object(entries) => {
                    self.depth += 1;
                    let result = entries.values().try_for_each(|entry| self.value(values, entry));
                    self.depth -= 1;
                    result
                }
                other => Err(self.wrong(json_type(other, false), go_type(node))),
            },
            Shape::Struct => match value {
                Value::Object(fields) => {
                    let outer = std::mem::replace(&mut self.go_struct, struct_name(node));
                    self.depth += 1;
                    for (name, field_value) in fields {
                        // Unknown fields are fieldValidation's business, not a type error.
                        let Some(field) = node.field(name) else { continue };
                        self.path.push(name.clone());
                        let result = self.value(field.node, field_value);
                        self.path.pop();
                        if result.is_err() {
                            self.depth -= 1;
                            self.go_struct = outer;
                            return result;
                        }
                    }
                    self.depth -= 1;
                    self.go_struct = outer;
                    Ok(())
                }
                other => Err(self.wrong(json_type(other, false), go_type(node))),
            },
        }
    }

    fn scalar(&self, node: Node<'_>, value: &Value) -> Result<(), Error> {
        let schema = node.schema;
        let format = schema.get("format").and_then(Value::as_str).unwrap_or_default();
        let json_kind = schema.get("type").and_then(Value::as_str).unwrap_or_default();
        let ok = match json_kind {
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "number" => value.is_number(),
            "integer" => match value {
                Value::Number(n) if format == "int64" => int_fits(n, i64::MIN, i64::MAX),
                Value::Number(n) => int_fits(n, i32::MIN as i64, i32::MAX as i64),
                _ => false,
            },
            _ => true,
        };
        // Go names the literal only when a number failed to fit a numeric type.
        let numeric = matches!(json_kind, "integer" | "number");
        if !ok {
            return Err(self.wrong(json_type(value, numeric), go_type(node)));
        }
        match value {
            Value::String(text) if format == "byte" => {
                base64_error(text).map_or(Ok(()), |at| Err(Error::Base64(at)))
            }
            _ => Ok(()),
        }
    }
}

/// Where Go's `base64.StdEncoding.Decode` reports `text` corrupt, if it does (`encoding/base64`
/// `decodeQuantum`: the offending byte, or the start of an incomplete last quantum; `\r` and
/// `\n` are skipped, which this count ignores).
fn base64_error(text: &str) -> Option<usize> {
    use base64::Engine as _;
    let clean: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    match base64::engine::general_purpose::STANDARD.decode(&clean) {
        Ok(_) => None,
        Err(base64::DecodeError::InvalidByte(at, _) | base64::DecodeError::InvalidLastSymbol(at, _)) => {
            Some(at)
        }
        Err(base64::DecodeError::InvalidLength(length)) => Some(length / 4 * 4),
        Err(base64::DecodeError::InvalidPadding) => Some(clean.len()),
    }
}

/// True when `number` is an integer literal within `[min, max]` (Go parses `3.0` or `1e3` into
/// an int as errors).
fn int_fits(number: &Number, min: i64, max: i64) -> bool {
    number.as_i64().is_some_and(|n| (min..=max).contains(&n))
}

/// Go's name of the JSON value in an `UnmarshalTypeError`: a number that is a number but does
/// not fit the integer type carries its literal (`number 1e30`).
fn json_type(value: &Value, with_literal: bool) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(_) => "bool".into(),
        Value::Number(n) if with_literal => format!("number {}", number_literal(n)),
        Value::Number(_) => "number".into(),
        Value::String(_) => "string".into(),
        Value::Array(_) => "array".into(),
        Value::Object(_) => "object".into(),
    }
}

/// The number as a JSON literal would most likely have spelled it (the parsed value keeps no
/// spelling): integers as they are, large floats in exponent form (`1e30`).
fn number_literal(number: &Number) -> String {
    match number.as_f64() {
        Some(f) if number.is_f64() && f.fract() == 0.0 && f.abs() >= 1e21 => format!("{f:e}"),
        _ => number.to_string(),
    }
}

/// `ConfigMap` for `io.k8s.api.core.v1.ConfigMap`.
fn struct_name(node: Node<'_>) -> String {
    node.definition.and_then(|d| d.rsplit('.').next()).unwrap_or("Object").to_string()
}

/// Go's spelling of the type a schema node decodes into: `v1.PodSpec`, `[]v1.Container`,
/// `map[string]string`, `int32`.
fn go_type(node: Node<'_>) -> String {
    let node = node.resolve();
    match node.definition {
        Some("io.k8s.apimachinery.pkg.api.resource.Quantity") => return "resource.Quantity".into(),
        Some("io.k8s.apimachinery.pkg.util.intstr.IntOrString") => return "intstr.IntOrString".into(),
        Some("io.k8s.apimachinery.pkg.apis.meta.v1.Time") => return "v1.Time".into(),
        _ => {}
    }
    match node.shape() {
        Shape::Struct => {
            let mut parts = node.definition.unwrap_or_default().rsplit('.');
            let name = parts.next().unwrap_or_default();
            format!("{}.{name}", parts.next().unwrap_or("v1"))
        }
        Shape::List(items) => format!("[]{}", go_type(items)),
        Shape::Map(values) => {
            if values.resolve().definition == Some("io.k8s.apimachinery.pkg.api.resource.Quantity") {
                "v1.ResourceList".into()
            } else {
                format!("map[string]{}", go_type(values))
            }
        }
        Shape::Opaque => "interface {}".into(),
        Shape::Scalar => {
            let format = node.schema.get("format").and_then(Value::as_str).unwrap_or_default();
            match (node.schema.get("type").and_then(Value::as_str).unwrap_or_default(), format) {
                ("integer", "int64") => "int64".into(),
                ("integer", _) => "int32".into(),
                ("number", _) => "float64".into(),
                ("boolean", _) => "bool".into(),
                ("string", "byte") => "[]uint8".into(),
                _ => "string".into(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::harness::rt;

    fn message(resource: &str, object: Value) -> String {
        check(&rt(resource), &object).unwrap_err().to_string()
    }

    #[test]
    fn wrong_types_are_reported_as_go_reports_them() {
        assert_eq!(
            message("configmaps", json!({"metadata": {"name": "a"}, "data": {"a": 1}})),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"
        );
        assert_eq!(
            message("configmaps", json!({"metadata": {"name": "a", "labels": ["x"]}})),
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type map[string]string"
        );
        assert_eq!(
            message("deployments.apps", json!({"spec": {"replicas": "3"}})),
            "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        assert_eq!(
            message("deployments.apps", json!({"spec": {"replicas": 1e30}})),
            "json: cannot unmarshal number 1e30 into Go struct field DeploymentSpec.spec.replicas of type int32"
        );
        assert_eq!(
            message("nodes", json!({"spec": {"podCIDR": 5}})),
            "json: cannot unmarshal number into Go struct field NodeSpec.spec.podCIDR of type string"
        );
        assert_eq!(
            message("pods", json!({"spec": {"containers": [{"name": "a", "image": 5}]}})),
            "json: cannot unmarshal number into Go struct field Container.spec.containers.image of type string"
        );
        assert_eq!(
            message("pods", json!({"spec": {"containers": "a"}})),
            "json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container"
        );
        assert_eq!(
            message("configmaps", json!({"metadata": "a"})),
            "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta"
        );
        assert_eq!(
            message(
                "pods",
                json!({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": true}}}]}})
            ),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
        );
    }

    #[test]
    fn what_go_accepts_passes() {
        let pod = json!({
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "labels": null, "creationTimestamp": null},
            "spec": {"containers": [{"name": "a", "image": "i", "ports": [{"containerPort": 80}],
                "resources": {"limits": {"nvidia.com/gpu": 1, "cpu": "500m"}}}],
                "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 30}]},
            "unknownField": 1,
        });
        assert_eq!(check(&rt("pods"), &pod), Ok(()));
        let ds = json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": "50%"}}}});
        assert_eq!(check(&rt("daemonsets.apps"), &ds), Ok(()));
        let ds = json!({"spec": {"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}});
        assert_eq!(check(&rt("daemonsets.apps"), &ds), Ok(()));
    }
}
