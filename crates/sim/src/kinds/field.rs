//! Validation failures as upstream reports them: `field.Error` and its constructors.
//!
//! Texts are those of `apimachinery/pkg/util/validation/field/errors.go` (`ErrorBody`): each
//! cause renders as `<field>: <reason text>: <bad value>: <detail>`, the bad value as Go's `%#v`
//! prints it (the `go_*` helpers).

use serde_json::{Map, Value};

/// One validation failure, as a `Status` cause (`field`, `reason`, `message`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    /// `FieldValueInvalid`, `FieldValueRequired`, …
    pub reason: String,
    /// The upstream message text.
    pub message: String,
    /// The field path, e.g. `spec.updateStrategy.rollingUpdate.maxUnavailable`.
    pub field: String,
}

impl std::fmt::Display for Cause {
    /// `field.Error.Error()`: `<field>: <body>`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// `apivalidation.FieldImmutableErrorMsg`.
pub const IMMUTABLE: &str = "field is immutable";
/// `validation.IsNegativeErrorMsg`.
pub const IS_NEGATIVE: &str = "must be greater than or equal to 0";

/// `ValidateNonnegativeField` on each of `fields` of the object's `spec` (the counts of the
/// workload kinds: apps `ValidateDeploymentSpec`/`ValidateReplicaSetSpec`/
/// `ValidateDaemonSetSpec`, batch `validateJobSpec`).
pub fn spec_non_negative(object: &Value, fields: &[&str], causes: &mut Vec<Cause>) {
    for field in fields {
        if let Some(value) = object.pointer(&format!("/spec/{field}")).and_then(Value::as_i64)
            && value < 0
        {
            causes.push(invalid(format!("spec.{field}"), &value.to_string(), IS_NEGATIVE));
        }
    }
}

/// The `Status.message` of a 422 Invalid: `DaemonSet.apps "x" is invalid: <errors>`
/// (apimachinery/pkg/api/errors `NewInvalid`, the errors as [`aggregate`] joins them).
pub fn invalid_message(group: &str, kind: &str, name: &str, causes: &[Cause]) -> String {
    let kind = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
    match causes {
        [] => format!("{kind} {name:?} is invalid"),
        causes => format!("{kind} {name:?} is invalid: {}", aggregate(causes)),
    }
}

/// `field.ErrorList.ToAggregate().Error()`: each error once (a message already listed is
/// dropped), one bare, several as `[e1, e2]`; an error without a field shows its message alone.
pub fn aggregate(causes: &[Cause]) -> String {
    let mut parts: Vec<String> = Vec::new();
    for cause in causes {
        let part = if cause.field.is_empty() { cause.message.clone() } else { cause.to_string() };
        if !parts.contains(&part) {
            parts.push(part);
        }
    }
    if let [only] = parts.as_slice() { only.clone() } else { format!("[{}]", parts.join(", ")) }
}

/// `field.Required`: `Required value`, with the detail after a colon when there is one.
pub fn required(field: impl Into<String>, detail: &str) -> Cause {
    let message =
        if detail.is_empty() { "Required value".to_string() } else { format!("Required value: {detail}") };
    Cause { reason: "FieldValueRequired".into(), message, field: field.into() }
}

/// `field.Invalid`, the bad value already printed (see [`go_value`]).
pub fn invalid(field: impl Into<String>, bad_value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {bad_value}: {detail}"),
        field: field.into(),
    }
}

/// `field.NotSupported`: the bad value and the supported ones, each quoted.
pub fn not_supported(field: impl Into<String>, bad_value: &Value, supported: &[&str]) -> Cause {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    Cause {
        reason: "FieldValueNotSupported".into(),
        message: format!("Unsupported value: {}: supported values: {}", go_value(bad_value), list.join(", ")),
        field: field.into(),
    }
}

/// `field.Forbidden`.
pub fn forbidden(field: impl Into<String>, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field: field.into(),
    }
}

/// `field.TooMany` (errors.go): `Too many: <actual>: must have at most <max> items`.
pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Cause {
    Cause {
        reason: "FieldValueTooMany".into(),
        message: format!("Too many: {actual}: must have at most {max} items"),
        field: field.into(),
    }
}

/// `field.Duplicate`, the value already printed (see [`go_value`]).
pub fn duplicate(field: impl Into<String>, value: &str) -> Cause {
    Cause {
        reason: "FieldValueDuplicate".into(),
        message: format!("Duplicate value: {value}"),
        field: field.into(),
    }
}

/// `field.TooLong` (errors.go, 1.33 wording): the value is not shown.
pub fn too_long(field: impl Into<String>, max_bytes: usize) -> Cause {
    let unit = if max_bytes == 1 { "byte" } else { "bytes" };
    Cause {
        reason: "FieldValueTooLong".into(),
        message: format!("Too long: may not be more than {max_bytes} {unit}"),
        field: field.into(),
    }
}

/// `%#v` of a slice of a named string type, e.g. `[]core.ResourceQuotaScope{"Bogus"}`.
pub fn go_string_slice(go_type: &str, items: Option<&Vec<Value>>) -> String {
    match items {
        Some(items) => {
            let shown: Vec<String> = items.iter().map(go_value).collect();
            format!("[]{go_type}{{{}}}", shown.join(", "))
        }
        None => format!("[]{go_type}(nil)"),
    }
}

/// A bad value as `ErrorBody` prints simple types: strings quoted, numbers and bools bare.
pub fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".into(),
        other => other.to_string(),
    }
}

/// `%#v` of an `intstr.IntOrString` (its `String()` has a pointer receiver, so a value prints
/// as a struct — the v1.28-v1.33 text, `apimachinery/pkg/util/validation/field/errors.go`
/// `ErrorBody` falling back to `%#v`).
pub fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(s) => format!("intstr.IntOrString{{Type:1, IntVal:0, StrVal:{s:?}}}"),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or_default()
        ),
    }
}

/// `%#v` of a `map[string]string` (Go prints maps with sorted keys).
pub fn go_string_map(map: Option<&Map<String, Value>>) -> String {
    let Some(map) = map.filter(|m| !m.is_empty()) else { return "map[string]string(nil)".into() };
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> =
        entries.iter().map(|(k, v)| format!("{k:?}:{:?}", v.as_str().unwrap_or_default())).collect();
    format!("map[string]string{{{}}}", parts.join(", "))
}

/// `%#v` of a `*metav1.LabelSelector` as `field.Invalid` prints it.
pub fn go_label_selector(selector: &Value) -> String {
    let labels = selector.get("matchLabels").and_then(Value::as_object);
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        Some(items) if !items.is_empty() => {
            let parts: Vec<String> = items
                .iter()
                .map(|e| {
                    let values: Vec<String> = e
                        .get("values")
                        .and_then(Value::as_array)
                        .map(|v| v.iter().map(|s| format!("{:?}", s.as_str().unwrap_or_default())).collect())
                        .unwrap_or_default();
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:[]string{{{}}}}}",
                        e.get("key").and_then(Value::as_str).unwrap_or_default(),
                        e.get("operator").and_then(Value::as_str).unwrap_or_default(),
                        values.join(", ")
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", parts.join(", "))
        }
        _ => "[]v1.LabelSelectorRequirement(nil)".into(),
    };
    format!("v1.LabelSelector{{MatchLabels:{}, MatchExpressions:{expressions}}}", go_string_map(labels))
}
