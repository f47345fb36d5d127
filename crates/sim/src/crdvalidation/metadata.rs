//! The parts of `ValidateObjectMeta` a custom resource needs beyond names, labels and annotations: ownerReferences and finalizers.
//!
//! apimachinery `pkg/api/validation/objectmeta.go` `ValidateOwnerReferences`,
//! `validateOwnerReference` and `ValidateFinalizers`, run on every custom resource by
//! apiextensions' `customResourceValidator.Validate` (`ValidateObjectMetaAccessor`). Names,
//! generateName, label and annotation keys are checked by the generic admission every kind goes
//! through; a metadata field of the wrong JSON type is refused when the body is decoded, before
//! any of this runs.

use serde_json::Value;

use super::{FieldError, Reason, gofmt};

/// `metav1.FinalizerOrphanDependents` and `FinalizerDeleteDependents`.
const ORPHAN: &str = "orphan";
const FOREGROUND: &str = "foregroundDeletion";

/// Errors in `object`'s ownerReferences and finalizers.
pub fn validate(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let metadata = &object["metadata"];
    if let Some(references) = metadata["ownerReferences"].as_array() {
        owner_references(references, &mut errors);
    }
    if let Some(finalizers) = metadata["finalizers"].as_array() {
        let names: Vec<&str> = finalizers.iter().filter_map(Value::as_str).collect();
        for name in &names {
            for message in qualified_name_errors(name) {
                errors.push(FieldError::new(
                    Reason::Invalid,
                    "metadata.finalizers",
                    Some(gofmt::quote(name)),
                    message,
                ));
            }
        }
        if names.contains(&ORPHAN) && names.contains(&FOREGROUND) {
            let detail = format!("finalizer {FOREGROUND} and {ORPHAN} cannot be both set");
            errors.push(FieldError::new(
                Reason::Invalid,
                "metadata.finalizers",
                Some(go_string_slice(&names)),
                detail,
            ));
        }
    }
    errors
}

fn owner_references(references: &[Value], errors: &mut Vec<FieldError>) {
    let mut controllers = Vec::new();
    for (index, reference) in references.iter().enumerate() {
        let path = format!("metadata.ownerReferences[{index}]");
        let text = |key: &str| reference[key].as_str().unwrap_or_default();
        let version = text("apiVersion").rsplit('/').next().unwrap_or_default();
        let checks = [
            ("apiVersion", version.is_empty(), "version must not be empty"),
            ("kind", text("kind").is_empty(), "kind must not be empty"),
            ("name", text("name").is_empty(), "name must not be empty"),
            ("uid", text("uid").is_empty(), "uid must not be empty"),
        ];
        for (key, empty, detail) in checks {
            if empty {
                errors.push(FieldError::new(
                    Reason::Invalid,
                    format!("{path}.{key}"),
                    Some(gofmt::quote(text(key))),
                    detail,
                ));
            }
        }
        if reference["controller"] == true {
            controllers.push(format!("{}/{}, uid: {}", text("kind"), text("name"), text("uid")));
        }
    }
    if controllers.len() > 1 {
        let detail = format!(
            "Only one reference can have Controller set to true. Found \"true\" in references for {}",
            controllers.join(" and ")
        );
        let value = gofmt::sharp_v(&Value::Array(references.to_vec()));
        errors.push(FieldError::new(Reason::Invalid, "metadata.ownerReferences", Some(value), detail));
    }
}

/// `%#v` of a `[]string`.
fn go_string_slice(items: &[&str]) -> String {
    format!("[]string{{{}}}", items.iter().map(|s| gofmt::quote(s)).collect::<Vec<_>>().join(", "))
}

/// apimachinery `IsQualifiedName`'s messages for `value`.
fn qualified_name_errors(value: &str) -> Vec<String> {
    const NAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const PREFIX: &str = "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    let parts: Vec<&str> = value.split('/').collect();
    let (prefix, name) = match parts.as_slice() {
        [name] => (None, *name),
        [prefix, name] => (Some(*prefix), *name),
        _ => {
            return vec![format!(
                "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    let mut errors = Vec::new();
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            errors.push("prefix part must be non-empty".to_string());
        } else if !is_subdomain(prefix) {
            errors.push(PREFIX.to_string());
        }
    }
    if name.is_empty() {
        errors.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 characters".to_string());
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let well_formed = alnum(name.chars().next())
        && alnum(name.chars().last())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !name.is_empty() && !well_formed {
        errors.push(NAME.to_string());
    }
    errors
}

fn is_subdomain(value: &str) -> bool {
    value.len() <= 253
        && value.split('.').all(|label| {
            !label.is_empty()
                && label.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(metadata: Value) -> Vec<String> {
        validate(&json!({"metadata": metadata})).iter().map(ToString::to_string).collect()
    }

    #[test]
    fn owner_references_and_finalizers_as_upstream() {
        // objectmeta_test.go TestValidateObjectMetaOwnerReferences, TestValidateFinalizersErrorMsg
        assert_eq!(
            messages(json!({"ownerReferences": [{"foo": 1}]})),
            [
                "metadata.ownerReferences[0].apiVersion: Invalid value: \"\": version must not be empty",
                "metadata.ownerReferences[0].kind: Invalid value: \"\": kind must not be empty",
                "metadata.ownerReferences[0].name: Invalid value: \"\": name must not be empty",
                "metadata.ownerReferences[0].uid: Invalid value: \"\": uid must not be empty",
            ]
        );
        let valid = json!({"apiVersion": "v1", "kind": "ConfigMap", "name": "a", "uid": "1"});
        assert!(messages(json!({"ownerReferences": [valid]})).is_empty());
        assert_eq!(
            messages(json!({"finalizers": ["a/b/c"]}))[0].split(": ").take(2).collect::<Vec<_>>(),
            ["metadata.finalizers", "Invalid value"]
        );
        assert_eq!(
            messages(json!({"finalizers": ["orphan", "foregroundDeletion"]})),
            [
                "metadata.finalizers: Invalid value: []string{\"orphan\", \"foregroundDeletion\"}: finalizer foregroundDeletion and orphan cannot be both set"
            ]
        );
        assert!(messages(json!({"finalizers": ["example.com/cleanup"]})).is_empty());
    }
}
