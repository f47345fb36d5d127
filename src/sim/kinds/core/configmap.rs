//! ConfigMaps (v1): the ConfigMap strategy and its row.
//!
//! Upstream: pkg/registry/core/configmap/strategy.go; `ValidateConfigMapUpdate` keeps an immutable
//! one as it is.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    field::forbidden,
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
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
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
    use crate::sim::kinds::BUILT_IN;

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
