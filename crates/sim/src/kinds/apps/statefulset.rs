//! StatefulSets (apps/v1): the StatefulSet strategy and its row.
//!
//! Upstream: pkg/registry/apps/statefulset/strategy.go, `SetDefaults_StatefulSet`,
//! `ValidateStatefulSetSpec`: defaults, validation, generation, kubectl's columns. Its `scale`
//! subresource is served from the row's subresources (`server/scale.rs`); the controller is
//! `controllers/statefulset.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    apps::validate_workload,
    core::podspec::{
        default_template, drop_template_zero_values, normalize_template, validate_template_ranges,
        validate_template_restart_policy,
    },
    field::{IS_NEGATIVE, invalid, not_supported, spec_non_negative},
    printer::{AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, int},
};

/// apps/v1 `statefulsets`.
pub static KIND: Kind = Kind {
    group: "apps",
    version: "v1",
    kind: "StatefulSet",
    plural: "statefulsets",
    scope: Scope::Namespaced,
    short_names: &["sts"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status", "scale"],
    strategy: &StatefulSetStrategy,
};

/// The StatefulSet strategy.
#[derive(Debug)]
pub struct StatefulSetStrategy;

impl Strategy for StatefulSetStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    fn defaults(&self, object: &mut Value) {
        drop_template_zero_values(object);
        default_stateful_set(object);
    }

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_template(object);
    }

    /// `ValidateStatefulSetSpec`: the selector, template labels and restart policy as for the
    /// other workloads, the two policies' values, the partition, replicas and minReadySeconds.
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_template_ranges(object, &mut causes);
        validate_workload(object, old, &mut causes);
        validate_template_restart_policy(object, &["Always"], &mut causes);
        let spec = &object["spec"];
        for (field, value, supported) in [
            ("spec.podManagementPolicy", &spec["podManagementPolicy"], &["OrderedReady", "Parallel"][..]),
            ("spec.updateStrategy.type", &spec["updateStrategy"]["type"], &["RollingUpdate", "OnDelete"][..]),
        ] {
            if value.as_str().is_some_and(|text| !supported.contains(&text)) {
                causes.push(not_supported(field, value, supported));
            }
        }
        // `validateRollingUpdateStatefulSet` (a RollingUpdate strategy's partition), then the
        // spec's counts. Upstream validates no `revisionHistoryLimit` of a StatefulSet.
        if spec["updateStrategy"]["type"] == "RollingUpdate"
            && let Some(partition) = spec["updateStrategy"]["rollingUpdate"]["partition"].as_i64()
            && partition < 0
        {
            causes.push(invalid(
                "spec.updateStrategy.rollingUpdate.partition",
                &partition.to_string(),
                IS_NEGATIVE,
            ));
        }
        spec_non_negative(object, &["replicas", "minReadySeconds"], &mut causes);
        causes
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: statefulset_row, columns: &[
    NAME,
    Column("Ready", "string", 0, "Number of the pod with ready state"),
    AGE,
    CONTAINERS,
    IMAGES,
] };

/// printers.go `printStatefulSet`: READY is `readyReplicas/spec.replicas`.
fn statefulset_row(sts: &Value, now: Ages) -> Vec<Value> {
    let (names, images) = containers_and_images(&sts["spec"]["template"]);
    let desired = sts["spec"]["replicas"].as_i64().unwrap_or(1);
    vec![
        sts["metadata"]["name"].clone(),
        json!(format!("{}/{desired}", int(&sts["status"]["readyReplicas"]))),
        age(sts, now),
        names,
        images,
    ]
}

/// apps/v1/defaults.go `SetDefaults_StatefulSet` (v1.33: StatefulSetAutoDeletePVC on, the
/// MaxUnavailableStatefulSet gate off, so no `maxUnavailable`).
fn default_stateful_set(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    let mut default = |key: &str, value: Value| {
        if spec.get(key).is_none_or(Value::is_null) {
            spec.insert(key.to_string(), value);
        }
    };
    default("replicas", json!(1));
    default("podManagementPolicy", json!("OrderedReady"));
    default("updateStrategy", json!({"type": "RollingUpdate"}));
    default("revisionHistoryLimit", json!(10));
    default("persistentVolumeClaimRetentionPolicy", json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
    if let Some(strategy) = spec.get_mut("updateStrategy").and_then(Value::as_object_mut) {
        if strategy.get("type").is_none_or(Value::is_null) {
            strategy.insert("type".into(), json!("RollingUpdate"));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate")) {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if rolling.is_null() {
                *rolling = json!({});
            }
            if let Some(rolling) = rolling.as_object_mut() {
                rolling.entry("partition").or_insert(json!(0));
            }
        }
    }
    if let Some(policy) = spec.get_mut("persistentVolumeClaimRetentionPolicy").and_then(Value::as_object_mut)
    {
        policy.entry("whenDeleted").or_insert(json!("Retain"));
        policy.entry("whenScaled").or_insert(json!("Retain"));
    }
    default_template(spec);
}
