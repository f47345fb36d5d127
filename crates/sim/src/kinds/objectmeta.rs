//! `ValidateObjectMeta` as upstream runs it on every write: names, generateName, labels, annotations.
//!
//! Texts from apimachinery `pkg/util/validation/validation.go` (`IsDNS1123Subdomain`,
//! `IsDNS1123Label`, `IsDNS1035Label`, `IsQualifiedName`, `IsValidLabelValue`) and
//! `pkg/api/validation/objectmeta.go` (`ValidateObjectMetaAccessor`, `ValidateAnnotations`);
//! which name rule a kind uses is its registry's `ValidateXName` (core `ValidatePodName` …
//! `NameIsDNSSubdomain`, `ValidateNamespaceName`/`ValidateNodeName`, `ValidateServiceName`
//! = DNS-1035 label, rbac `ValidateRBACName` = a path segment).

use serde_json::{Map, Value};

use super::field::{Cause, too_long};

/// `TotalAnnotationSizeLimitB` (objectmeta.go): 256 KiB of keys and values together.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

const DNS1123_SUBDOMAIN_ERROR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1123_LABEL_ERROR: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_LABEL_ERROR: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_NAME_ERROR: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_ERROR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// Which rule a kind's names follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain` (most kinds).
    Subdomain,
    /// `NameIsDNSLabel` (Namespace).
    Label,
    /// `NameIsDNS1035Label` (Service).
    Dns1035,
    /// `path.ValidatePathSegmentName` (RBAC kinds).
    PathSegment,
}

fn max_len(max: usize) -> String {
    format!("must be no more than {max} characters")
}

fn is_alnum_lower(c: char) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn dns1123_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len(63));
    }
    let ok = !value.is_empty()
        && value.chars().all(|c| is_alnum_lower(c) || c == '-')
        && value.starts_with(is_alnum_lower)
        && value.ends_with(is_alnum_lower);
    if !ok {
        errors.push(DNS1123_LABEL_ERROR.to_string());
    }
    errors
}

fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push(max_len(253));
    }
    let ok = !value.is_empty()
        && value.split('.').all(|part| {
            !part.is_empty()
                && part.chars().all(|c| is_alnum_lower(c) || c == '-')
                && part.starts_with(is_alnum_lower)
                && part.ends_with(is_alnum_lower)
        });
    if !ok {
        errors.push(DNS1123_SUBDOMAIN_ERROR.to_string());
    }
    errors
}

fn dns1035_label(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len(63));
    }
    let ok = !value.is_empty()
        && value.chars().all(|c| is_alnum_lower(c) || c == '-')
        && value.starts_with(|c: char| c.is_ascii_lowercase())
        && value.ends_with(is_alnum_lower);
    if !ok {
        errors.push(DNS1035_LABEL_ERROR.to_string());
    }
    errors
}

/// apimachinery `pkg/api/validation/path/name.go` `IsValidPathSegmentName`.
fn path_segment(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    let mut errors = Vec::new();
    for illegal in ["/", "%"] {
        if value.contains(illegal) {
            errors.push(format!("may not contain '{illegal}'"));
        }
    }
    errors
}

/// The name rule's errors; a `generateName` prefix is validated as upstream's
/// `maskTrailingDash` (objectmeta.go) has it: a trailing `-` and the character before it
/// replaced by `a`, so `web-` passes.
fn name_errors(rule: NameRule, name: &str, prefix: bool) -> Vec<String> {
    let masked;
    let name = if prefix && name.len() > 1 && name.ends_with('-') && name.is_char_boundary(name.len() - 2) {
        masked = format!("{}a", &name[..name.len() - 2]);
        masked.as_str()
    } else {
        name
    };
    match rule {
        NameRule::Subdomain => dns1123_subdomain(name),
        NameRule::Label => dns1123_label(name),
        NameRule::Dns1035 => dns1035_label(name),
        NameRule::PathSegment => path_segment(name),
    }
}

/// `validation.IsQualifiedName`: an optional DNS-subdomain prefix and `/`, then a name part of at
/// most 63 characters.
pub(crate) fn qualified_name_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            errors.push("prefix part must be non-empty".to_string());
        } else {
            errors.extend(dns1123_subdomain(prefix).into_iter().map(|e| format!("prefix part {e}")));
        }
    }
    if name.contains('/') {
        return vec![
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".into(),
        ];
    }
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push(format!("name part {}", max_len(63)));
    }
    // The regular expression is checked whatever the length, so an empty name part gets both.
    if !label_value_shape(name) {
        errors.push(QUALIFIED_NAME_ERROR.to_string());
    }
    errors
}

fn label_value_shape(value: &str) -> bool {
    let alnum = |c: char| c.is_ascii_alphanumeric();
    value.chars().all(|c| alnum(c) || matches!(c, '-' | '_' | '.'))
        && value.starts_with(alnum)
        && value.ends_with(alnum)
}

/// `validation.IsValidLabelValue`: empty, or at most 63 characters of the label-value shape.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push(max_len(63));
    }
    if !value.is_empty() && !label_value_shape(value) {
        errors.push(LABEL_VALUE_ERROR.to_string());
    }
    errors
}

fn invalid(field: &str, value: &str, detail: String) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {value:?}: {detail}"),
        field: field.into(),
    }
}

/// The causes `ValidateObjectMeta` finds in `object`'s metadata, its names following `rule` (names, generateName, labels,
/// annotations); the empty-name and namespace checks are the registry's.
pub fn validate(rule: NameRule, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let metadata = object.get("metadata");
    let text = |key: &str| metadata.and_then(|m| m.get(key)).and_then(Value::as_str).unwrap_or_default();
    let generate_name = text("generateName");
    if !generate_name.is_empty() {
        for error in name_errors(rule, generate_name, true) {
            causes.push(invalid("metadata.generateName", generate_name, error));
        }
    }
    let name = text("name");
    if !name.is_empty() {
        for error in name_errors(rule, name, false) {
            causes.push(invalid("metadata.name", name, error));
        }
    }
    if let Some(labels) = metadata.and_then(|m| m.get("labels")).and_then(Value::as_object) {
        validate_labels(labels, "metadata.labels", &mut causes);
    }
    if let Some(annotations) = metadata.and_then(|m| m.get("annotations")).and_then(Value::as_object) {
        validate_annotations(annotations, &mut causes);
    }
    causes
}

/// `ValidateLabels` (apimachinery `pkg/apis/meta/v1/validation/validation.go`): each key a
/// qualified name, each value a label value, both reported under the map's path.
pub fn validate_labels(labels: &Map<String, Value>, path: &str, causes: &mut Vec<Cause>) {
    for (key, value) in labels {
        for error in qualified_name_errors(key) {
            causes.push(invalid(path, key, error));
        }
        let value = value.as_str().unwrap_or_default();
        for error in label_value_errors(value) {
            causes.push(invalid(path, value, error));
        }
    }
}

/// `ValidateAnnotations`: keys are qualified names (lower-cased first), and keys and values
/// together stay within [`TOTAL_ANNOTATION_SIZE_LIMIT`].
fn validate_annotations(annotations: &Map<String, Value>, causes: &mut Vec<Cause>) {
    let mut total = 0usize;
    for (key, value) in annotations {
        for error in qualified_name_errors(&key.to_lowercase()) {
            causes.push(invalid("metadata.annotations", key, error));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        causes.push(too_long("metadata.annotations", TOTAL_ANNOTATION_SIZE_LIMIT));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::harness::rt;

    fn fields(resource: &str, metadata: Value) -> Vec<String> {
        validate(rt(resource).strategy().name_rule(), &json!({"metadata": metadata}))
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn names_follow_their_kind_rule() {
        for bad in ["a/b", "UPPER", "with space", "..", "-a", "a."] {
            assert!(!fields("configmaps", json!({"name": bad})).is_empty(), "{bad}");
        }
        assert_eq!(
            fields("configmaps", json!({"name": "UPPER"})),
            [format!("metadata.name: Invalid value: \"UPPER\": {DNS1123_SUBDOMAIN_ERROR}")]
        );
        assert!(fields("configmaps", json!({"name": "a.b-c"})).is_empty());
        assert!(!fields("namespaces", json!({"name": "a.b"})).is_empty(), "a namespace is a label");
        assert!(!fields("services", json!({"name": "1abc"})).is_empty(), "a service is DNS-1035");
        assert!(fields("clusterroles.rbac.authorization.k8s.io", json!({"name": "system:x"})).is_empty());
        assert_eq!(
            fields("clusterroles.rbac.authorization.k8s.io", json!({"name": "a/b"})),
            ["metadata.name: Invalid value: \"a/b\": may not contain '/'"]
        );
        assert!(fields("pods", json!({"generateName": "web-"})).is_empty());
        assert!(!fields("pods", json!({"generateName": "Web-"})).is_empty());
        assert_eq!(fields("configmaps", json!({"name": "a".repeat(254)})).len(), 1);
    }

    #[test]
    fn label_keys_and_values_and_annotation_size() {
        assert_eq!(
            fields("configmaps", json!({"name": "a", "labels": {"bad key!": "v"}})),
            [format!("metadata.labels: Invalid value: \"bad key!\": {QUALIFIED_NAME_ERROR}")]
        );
        assert!(
            fields(
                "configmaps",
                json!({"name": "a", "labels": {"nvidia.com/device-plugin.config": "a_b.c", "x": ""}})
            )
            .is_empty()
        );
        assert_eq!(
            fields("configmaps", json!({"name": "a", "labels": {"k": "v".repeat(64)}})),
            [format!(
                "metadata.labels: Invalid value: \"{}\": must be no more than 63 characters",
                "v".repeat(64)
            )]
        );
        assert_eq!(
            fields("configmaps", json!({"name": "a", "annotations": {"a": "x".repeat(300 * 1024)}})),
            ["metadata.annotations: Too long: may not be more than 262144 bytes"]
        );
    }
}
