//! Secrets (v1): the Secret strategy and its row.
//!
//! Upstream: pkg/registry/core/secret/strategy.go, `ValidateSecretUpdate`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    core::configmap::{MAX_DATA_SIZE, decoded_len, validate_config_keys, validate_immutable_content},
    default_key,
    field::{IMMUTABLE, go_value, invalid, too_long},
    printer::{AGE, Ages, Column, NAME, Printer, age, map_len, text},
};

/// v1 `secrets`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Secret",
    plural: "secrets",
    scope: Scope::Namespaced,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &SecretStrategy,
};

/// The Secret strategy.
#[derive(Debug)]
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    /// Also counted under its legacy quota name (`pkg/quota/v1/evaluator/core/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::ObjectCount { legacy_name: true }
    }

    fn defaults(&self, object: &mut Value) {
        if let Some(map) = object.as_object_mut() {
            default_key(map, "type", json!("Opaque"));
        }
    }

    /// `ValidateSecret` (keys as `IsConfigMapKey` has them, 1 MiB of data, `field.TooLong` on
    /// `data`) and `ValidateSecretUpdate`: the type is fixed, and an immutable secret's data too.
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_config_keys(&object["data"], "data", &mut causes);
        let size: usize = object["data"].as_object().into_iter().flatten().map(|(_, v)| decoded_len(v)).sum();
        if size > MAX_DATA_SIZE {
            causes.push(too_long("data", MAX_DATA_SIZE));
        }
        if let Some(old) = old {
            if object["type"] != old["type"] {
                causes.push(invalid("type", &go_value(&object["type"]), IMMUTABLE));
            }
            // `stringData` is folded into `data` before validation.
            validate_immutable_content(object, old, &["data"], &mut causes);
        }
        causes
    }

    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "metadata.namespace", "type"]
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: secret_row, columns: &[
    NAME,
    Column("Type", "string", 0, "Used to facilitate programmatic handling of secret data."),
    Column("Data", "string", 0, "Data contains the secret data."),
    AGE,
] };

fn secret_row(secret: &Value, now: Ages) -> Vec<Value> {
    let data = map_len(&secret["data"]) + map_len(&secret["stringData"]);
    vec![secret["metadata"]["name"].clone(), json!(text(&secret["type"])), json!(data), age(secret, now)]
}
