//! Namespaces (v1): the namespace strategy and its row.
//!
//! Upstream: pkg/registry/core/namespace/strategy.go and `SetDefaults_Namespace`. Their deletion
//! cascade is the registry's (`registry/write.rs`).

use serde_json::{Map, Value, json};

use crate::kinds::{
    Kind, NameRule, Scope, Strategy, default_key, object_mut,
    printer::{AGE, Ages, Column, NAME, Printer, age, text},
};

/// v1 `namespaces` (no `deletecollection` upstream).
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Namespace",
    plural: "namespaces",
    scope: Scope::Cluster,
    short_names: &["ns"],
    categories: &[],
    verbs: &["create", "delete", "get", "list", "patch", "update", "watch"],
    subresources: &["status", "finalize"],
    strategy: &NamespaceStrategy,
};

/// The Namespace strategy.
#[derive(Debug)]
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn deletion(&self) -> crate::kinds::DeletionRule {
        crate::kinds::DeletionRule::EmptiesNamespace
    }

    /// `ReturnDeletedObject: true` in the kind's `NewREST` (pkg/registry/core/namespace/storage).
    fn returns_deleted_object(&self) -> bool {
        true
    }

    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    /// Every namespace carries `kubernetes.io/metadata.name: <name>` (upstream
    /// `SetDefaults_Namespace`, on create and update).
    fn decode_defaults(&self, object: &mut Value) {
        let Some(namespace) = object.as_object_mut() else { return };
        let Some(metadata) = namespace.get_mut("metadata").and_then(Value::as_object_mut) else { return };
        let name = metadata.get("name").cloned().unwrap_or(Value::Null);
        if !metadata.get("labels").is_some_and(Value::is_object) {
            metadata.insert("labels".into(), Value::Object(Map::new()));
        }
        if let Some(labels) = metadata.get_mut("labels").and_then(Value::as_object_mut) {
            labels.insert("kubernetes.io/metadata.name".into(), name);
        }
    }

    /// `namespaceStrategy.PrepareForCreate`: `Active`, with the `kubernetes` finalizer.
    fn reset_status_for_create(&self, object: &mut Value, _has_status: bool) {
        let Some(map) = object.as_object_mut() else { return };
        map.insert("status".into(), json!({"phase": "Active"}));
        let spec = map.entry("spec").or_insert_with(|| Value::Object(Map::new()));
        if let Some(spec) = spec.as_object_mut() {
            spec.insert("finalizers".into(), json!(["kubernetes"]));
        }
    }

    /// The namespace strategy's defaults: the name label and the `kubernetes` finalizer; phase
    /// `Active`.
    fn defaults(&self, object: &mut Value) {
        let name = object.pointer("/metadata/name").cloned();
        if let (Some(name), Some(metadata)) = (name, object_mut(object, "metadata")) {
            let labels = metadata.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                labels.insert("kubernetes.io/metadata.name".into(), name);
            }
        }
        if let Some(spec) = object_mut(object, "spec") {
            default_key(spec, "finalizers", json!(["kubernetes"]));
        }
        if let Some(status) = object_mut(object, "status") {
            default_key(status, "phase", json!("Active"));
        }
    }

    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "status.phase"]
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: namespace_row, columns: &[
    NAME,
    Column("Status", "string", 0, "The status of the namespace"),
    AGE,
] };

fn namespace_row(ns: &Value, now: Ages) -> Vec<Value> {
    vec![ns["metadata"]["name"].clone(), json!(text(&ns["status"]["phase"])), age(ns, now)]
}
