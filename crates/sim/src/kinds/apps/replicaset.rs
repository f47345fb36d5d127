//! ReplicaSets (apps/v1): the ReplicaSet strategy and its row.
//!
//! Upstream: pkg/registry/apps/replicaset/strategy.go, `SetDefaults_ReplicaSet`,
//! `ValidateReplicaSet`. The controller is `controllers/replicaset.rs`.

use serde_json::{Value, json};

use crate::{
    k8s::selector::field_text,
    kinds::{
        ALL_VERBS, Cause, Kind, Scope, Strategy,
        apps::{Workload, validate_workload_spec},
        core::podspec::{default_template, drop_template_zero_values, normalize_template},
        default_key, object_mut,
        printer::{
            AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images,
            format_selector, int,
        },
    },
};

/// apps/v1 `replicasets`.
pub static KIND: Kind = Kind {
    group: "apps",
    version: "v1",
    kind: "ReplicaSet",
    plural: "replicasets",
    scope: Scope::Namespaced,
    short_names: &["rs"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status", "scale"],
    strategy: &ReplicaSetStrategy,
};

/// The ReplicaSet strategy.
#[derive(Debug)]
pub struct ReplicaSetStrategy;

impl Strategy for ReplicaSetStrategy {
    fn claimed_by_selector(&self) -> bool {
        true
    }

    fn tracks_generation(&self) -> bool {
        true
    }

    /// apps/v1/defaults.go `SetDefaults_ReplicaSet`.
    fn defaults(&self, object: &mut Value) {
        drop_template_zero_values(object);
        if let Some(spec) = object_mut(object, "spec") {
            default_key(spec, "replicas", json!(1));
            default_template(spec);
        }
    }

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_template(object);
    }

    /// `ValidateReplicaSet`/`ValidateReplicaSetUpdate`.
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validate_workload_spec(
            object,
            old,
            Workload::ReplicaSet,
            &["replicas", "minReadySeconds", "revisionHistoryLimit"],
            |_| {},
        )
    }

    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "metadata.namespace", "status.replicas"]
    }

    fn selectable_value(&self, object: &Value, name: &str) -> String {
        match field_text(object, name) {
            // An absent count is 0.
            absent if absent.is_empty() && name == "status.replicas" => "0".to_string(),
            value => value,
        }
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: replicaset_row, columns: &[
    NAME,
    Column("Desired", "integer", 0, "Replicas is the number of desired pods."),
    Column("Current", "integer", 0, "Replicas is the most recently observed number of non-terminating pods."),
    Column("Ready", "integer", 0, "The number of non-terminating pods targeted by this ReplicaSet with a Ready Condition."),
    AGE,
    CONTAINERS,
    IMAGES,
    Column("Selector", "string", 1, "Selector is a label query over pods that should match the replica count."),
] };

fn replicaset_row(rs: &Value, now: Ages) -> Vec<Value> {
    let status = &rs["status"];
    let (names, images) = containers_and_images(&rs["spec"]["template"]);
    vec![
        rs["metadata"]["name"].clone(),
        json!(rs["spec"]["replicas"].as_i64().unwrap_or(1)),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        age(rs, now),
        names,
        images,
        json!(format_selector(&rs["spec"]["selector"])),
    ]
}
