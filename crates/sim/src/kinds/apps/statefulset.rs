//! StatefulSets (apps/v1): the StatefulSet strategy and its row.
//!
//! Upstream: pkg/registry/apps/statefulset/strategy.go, `SetDefaults_StatefulSet`,
//! `ValidateStatefulSetSpec`: defaults, validation, generation, kubectl's columns. Its `scale`
//! subresource is served from the row's subresources (`server/scale.rs`); the controller is
//! `controllers/statefulset.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, NameRule, Scope, Strategy,
    apps::{Workload, validate_selector},
    core::podspec::{
        default_template, drop_template_zero_values, normalize_template, validate_pod_spec,
        validate_template_ranges, validate_template_restart_policy,
    },
    field::{IS_NEGATIVE, forbidden, invalid, not_supported, required, spec_non_negative},
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

    /// StatefulSet names are DNS labels (apps/validation `ValidateStatefulSetName`, since
    /// kubernetes/kubernetes#114172: the name becomes each pod's `hostname`).
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    /// `ValidateStatefulSet` (`old` is `None`) and `ValidateStatefulSetUpdate`: the spec as
    /// `ValidateStatefulSetSpec` checks it, and on update only the fields upstream lets change.
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_template_ranges(object, &mut causes);
        validate_spec(object, &mut causes);
        match object.pointer("/spec/template/spec") {
            Some(spec) => validate_pod_spec(spec, "spec.template.spec", &mut causes),
            None => causes.push(required("spec.template.spec.containers", "")),
        }
        if let Some(old) = old {
            validate_update(object, old, &mut causes);
        }
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

/// apps/validation `ValidateStatefulSetSpec` (v1.33), in its order: the pod management policy
/// and update strategy (`Invalid`, not `Unsupported`: upstream spells its own sentence), the
/// PVC retention policy, the counts (`revisionHistoryLimit` since v1.33,
/// kubernetes/kubernetes#129017), the selector and template labels, the restart policy and
/// `activeDeadlineSeconds`.
fn validate_spec(object: &Value, causes: &mut Vec<Cause>) {
    let spec = &object["spec"];
    match spec["podManagementPolicy"].as_str() {
        Some("OrderedReady" | "Parallel") | None => {}
        Some("") => causes.push(required("spec.podManagementPolicy", "")),
        Some(other) => causes.push(invalid(
            "spec.podManagementPolicy",
            &format!("{other:?}"),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy = &spec["updateStrategy"];
    // `%#v` of the `*RollingUpdateStatefulSetStrategy`: the pointer's address is the Go runtime's;
    // a fixed one stands in for it, as for a Deployment's strategy.
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    let pointer = format!(
        "(*apps.RollingUpdateStatefulSetStrategy)({})",
        if rolling.is_some() { "0xc000000000" } else { "nil" }
    );
    match strategy["type"].as_str() {
        Some("OnDelete") if rolling.is_some() => causes.push(invalid(
            "spec.updateStrategy.rollingUpdate",
            &pointer,
            "only allowed for updateStrategy 'RollingUpdate'",
        )),
        Some("RollingUpdate") => {
            // `validateRollingUpdateStatefulSet` (maxUnavailable is behind a gate that 1.33 leaves off).
            if let Some(partition) = rolling.and_then(|r| r["partition"].as_i64())
                && partition < 0
            {
                causes.push(invalid(
                    "spec.updateStrategy.rollingUpdate.partition",
                    &partition.to_string(),
                    IS_NEGATIVE,
                ));
            }
        }
        Some("OnDelete") | None => {}
        Some("") => causes.push(required("spec.updateStrategy", "")),
        Some(other) => causes.push(invalid(
            "spec.updateStrategy",
            &format!("apps.StatefulSetUpdateStrategy{{Type:{other:?}, RollingUpdate:{pointer}}}"),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    let retention = &spec["persistentVolumeClaimRetentionPolicy"];
    for key in ["whenDeleted", "whenScaled"] {
        let value = &retention[key];
        if value.as_str().is_some_and(|v| !matches!(v, "Retain" | "Delete")) {
            causes.push(not_supported(
                format!("spec.persistentVolumeClaimRetentionPolicy.{key}"),
                value,
                &["Retain", "Delete"],
            ));
        }
    }
    spec_non_negative(object, &["replicas", "minReadySeconds", "revisionHistoryLimit"], causes);
    if let Some(start) = spec["ordinals"]["start"].as_i64()
        && start < 0
    {
        causes.push(invalid("spec.ordinals.start", &start.to_string(), IS_NEGATIVE));
    }
    validate_selector(object, Workload::StatefulSet, causes);
    validate_template_restart_policy(object, &["Always"], causes);
    if spec["template"]["spec"].get("activeDeadlineSeconds").is_some_and(|v| !v.is_null()) {
        causes.push(forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            "activeDeadlineSeconds in StatefulSet is not Supported",
        ));
    }
}

/// `ValidateStatefulSetUpdate`: beside the fields it names, the spec may not change (the
/// selector, the service name, the claim templates, the revision history limit, …).
fn validate_update(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    const MUTABLE: [&str; 6] = [
        "replicas",
        "template",
        "updateStrategy",
        "minReadySeconds",
        "ordinals",
        "persistentVolumeClaimRetentionPolicy",
    ];
    let without_mutable = |spec: &Value| -> Value {
        let mut spec = spec.clone();
        if let Some(map) = spec.as_object_mut() {
            for key in MUTABLE {
                map.remove(key);
            }
        }
        spec
    };
    if without_mutable(&object["spec"]) != without_mutable(&old["spec"]) {
        causes.push(forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
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
