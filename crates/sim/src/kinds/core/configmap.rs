//! ConfigMaps (v1): the ConfigMap strategy and its row.
//!
//! Upstream: pkg/registry/core/configmap/strategy.go; pkg/apis/core/validation/validation.go
//! `ValidateConfigMap` (keys, a key in both maps, 1 MiB in all) and `ValidateConfigMapUpdate`
//! (an immutable one stays as it is).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    field::{forbidden, invalid, too_long},
    printer::{AGE, Ages, Column, NAME, Printer, age, map_len},
};

/// v1 `configmaps`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "ConfigMap",
    plural: "configmaps",
    scope: Scope::Namespaced,
    short_names: &["cm"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &ConfigMapStrategy,
};

/// The ConfigMap strategy.
#[derive(Debug)]
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    /// Also counted under its legacy quota name (`pkg/quota/v1/evaluator/core/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::ObjectCount { legacy_name: true }
    }

    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_config_map(object, &mut causes);
        if let Some(old) = old {
            validate_immutable_content(object, old, &["data", "binaryData"], &mut causes);
        }
        causes
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: configmap_row, columns: &[
    NAME,
    Column("Data", "string", 0, "Data contains the configuration data."),
    AGE,
] };

fn configmap_row(cm: &Value, now: Ages) -> Vec<Value> {
    let data = map_len(&cm["data"]) + map_len(&cm["binaryData"]);
    vec![cm["metadata"]["name"].clone(), json!(data), age(cm, now)]
}

/// `core.MaxSecretSize`: the data of a ConfigMap or a Secret, 1 MiB in all.
pub(crate) const MAX_DATA_SIZE: usize = 1024 * 1024;

const CONFIG_KEY_ERROR: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// apimachinery `validation.IsConfigMapKey`: the key of a ConfigMap's or a Secret's data.
pub(crate) fn config_key_errors(key: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push("must be no more than 253 characters".to_string());
    }
    if key.is_empty() || !key.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.')) {
        errors.push(CONFIG_KEY_ERROR.to_string());
    }
    // `hasChDirPrefix`.
    match key {
        "." => errors.push("must not be '.'".to_string()),
        ".." => errors.push("must not be '..'".to_string()),
        _ if key.starts_with("..") => errors.push("must not start with '..'".to_string()),
        _ => {}
    }
    errors
}

/// The `field.Invalid` causes of each bad key of the map at `field` (`fldPath.Key(key)`).
pub(crate) fn validate_config_keys(map: &Value, field: &str, causes: &mut Vec<Cause>) {
    for key in map.as_object().into_iter().flat_map(|m| m.keys()) {
        for error in config_key_errors(key) {
            causes.push(invalid(format!("{field}[{key}]"), &format!("{key:?}"), &error));
        }
    }
}

/// The length of the bytes a base64 value (`[]byte` in JSON) decodes to.
pub(crate) fn decoded_len(value: &Value) -> usize {
    let text = value.as_str().unwrap_or_default();
    let padding = text.bytes().rev().take_while(|b| *b == b'=').count();
    (text.len() / 4 * 3).saturating_sub(padding)
}

/// `ValidateConfigMap`: keys as `IsConfigMapKey` has them, no key in both `data` and
/// `binaryData`, and the values within `MaxSecretSize` together (`field.TooLong` on the root
/// path `field.NewPath("")`, which prints as `[]`).
fn validate_config_map(object: &Value, causes: &mut Vec<Cause>) {
    let data = &object["data"];
    let binary = &object["binaryData"];
    validate_config_keys(data, "data", causes);
    for key in data.as_object().into_iter().flat_map(|m| m.keys()) {
        if binary.get(key).is_some() {
            let detail = "duplicate of key present in binaryData";
            causes.push(invalid(format!("data[{key}]"), &format!("{key:?}"), detail));
        }
    }
    validate_config_keys(binary, "binaryData", causes);
    let text_size: usize =
        data.as_object().into_iter().flatten().map(|(_, v)| v.as_str().map_or(0, str::len)).sum();
    let binary_size: usize = binary.as_object().into_iter().flatten().map(|(_, v)| decoded_len(v)).sum();
    if text_size + binary_size > MAX_DATA_SIZE {
        causes.push(too_long("[]", MAX_DATA_SIZE));
    }
}

/// The `field.Forbidden` detail of a ConfigMap's or Secret's content once `immutable` is set.
const IMMUTABLE_WHEN_SET: &str = "field is immutable when `immutable` is set";

/// `ValidateConfigMapUpdate` / `ValidateSecretUpdate`: once `immutable: true` is stored, it
/// stays set and the content stays as it is.
pub(crate) fn validate_immutable_content(
    object: &Value,
    old: &Value,
    fields: &[&str],
    causes: &mut Vec<Cause>,
) {
    if old["immutable"] != json!(true) {
        return;
    }
    if object["immutable"] != json!(true) {
        causes.push(forbidden("immutable", IMMUTABLE_WHEN_SET));
    }
    for field in fields {
        if object[*field] != old[*field] {
            causes.push(forbidden(*field, IMMUTABLE_WHEN_SET));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::BUILT_IN;

    /// The causes of updating `old` to `object`, objects of `kind`.
    fn messages(kind: &str, object: &Value, old: &Value) -> Vec<String> {
        let kind = BUILT_IN.iter().find(|k| k.kind == kind).expect("a built-in kind");
        kind.strategy.validate(object, Some(old)).iter().map(Cause::to_string).collect()
    }

    #[test]
    fn immutable_config_maps_and_secrets_keep_their_content() {
        let old = json!({"immutable": true, "data": {"k": "v"}});
        assert!(messages("ConfigMap", &old, &old).is_empty());
        let changed = json!({"data": {"k": "w"}});
        let expected = [
            "immutable: Forbidden: field is immutable when `immutable` is set",
            "data: Forbidden: field is immutable when `immutable` is set",
        ];
        assert_eq!(messages("ConfigMap", &changed, &old), expected);
        assert!(messages("ConfigMap", &changed, &json!({"data": {"k": "v"}})).is_empty());
        let secret = json!({"type": "Opaque", "immutable": true, "data": {"k": "dg=="}});
        let retyped = json!({"type": "kubernetes.io/tls", "immutable": true, "data": {"k": "dg=="}});
        assert_eq!(
            messages("Secret", &retyped, &secret),
            ["type: Invalid value: \"kubernetes.io/tls\": field is immutable"]
        );
    }
}
