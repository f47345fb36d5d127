//! DaemonSets (apps/v1): the DaemonSet strategy and its row.
//!
//! Upstream: pkg/registry/apps/daemonset/strategy.go, `SetDefaults_DaemonSet`, `ValidateDaemonSet`.
//! The controller is `controllers/daemonset.rs`.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    apps::{Workload, int_or_percent, validate_int_or_percent, validate_workload_spec},
    core::podspec::{default_template, drop_template_zero_values, normalize_template},
    default_key,
    field::{go_int_or_string, invalid, not_supported, required},
    object_mut,
    printer::{
        AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, format_labels,
        format_selector, int,
    },
};

/// apps/v1 `daemonsets`.
pub static KIND: Kind = Kind {
    group: "apps",
    version: "v1",
    kind: "DaemonSet",
    plural: "daemonsets",
    scope: Scope::Namespaced,
    short_names: &["ds"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status"],
    strategy: &DaemonSetStrategy,
};

/// The DaemonSet strategy.
#[derive(Debug)]
pub struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// `daemonSetStrategy.PrepareForCreate`: template generation 1 (or the one given).
    fn prepare_for_create(&self, object: &mut Value, _now: Timestamp) {
        crate::k8s::daemon::prepare_template_generation(object, None);
    }

    /// `daemonSetStrategy.PrepareForUpdate`: a changed template bumps the template generation.
    fn prepare_for_update(&self, object: &mut Value, old: &Value) {
        crate::k8s::daemon::prepare_template_generation(object, Some(old));
    }

    /// apps/v1/defaults.go `SetDefaults_DaemonSet`.
    fn defaults(&self, object: &mut Value) {
        drop_template_zero_values(object);
        let Some(spec) = object_mut(object, "spec") else { return };
        let strategy = spec.entry("updateStrategy").or_insert_with(|| json!({}));
        if let Some(strategy) = strategy.as_object_mut() {
            default_key(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
                if let Some(rolling) = rolling.as_object_mut() {
                    default_key(rolling, "maxUnavailable", json!(1));
                    default_key(rolling, "maxSurge", json!(0));
                }
            }
        }
        default_key(spec, "revisionHistoryLimit", json!(10));
        default_template(spec);
    }

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_template(object);
    }

    /// `ValidateDaemonSet`/`ValidateDaemonSetUpdate`.
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validate_workload_spec(
            object,
            old,
            Workload::DaemonSet,
            &["minReadySeconds", "revisionHistoryLimit"],
            |causes| {
                if let Some(strategy) = object.pointer("/spec/updateStrategy") {
                    validate_daemon_set_strategy(strategy, causes);
                }
            },
        )
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: daemonset_row, columns: &[
    NAME,
    Column("Desired", "integer", 0, "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod)."),
    Column("Current", "integer", 0, "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
    Column("Ready", "integer", 0, "numberReady is the number of nodes that should be running the daemon pod and have one or more of the daemon pod running with a Ready Condition."),
    Column("Up-to-date", "integer", 0, "The total number of nodes that are running updated daemon pod"),
    Column("Available", "integer", 0, "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
    Column("Node Selector", "string", 0, "NodeSelector is a selector which must be true for the pod to fit on a node."),
    AGE,
    CONTAINERS,
    IMAGES,
    Column("Selector", "string", 1, "A label query over pods that are managed by the daemon set."),
] };

fn daemonset_row(ds: &Value, now: Ages) -> Vec<Value> {
    let status = &ds["status"];
    let (names, images) = containers_and_images(&ds["spec"]["template"]);
    vec![
        ds["metadata"]["name"].clone(),
        json!(int(&status["desiredNumberScheduled"])),
        json!(int(&status["currentNumberScheduled"])),
        json!(int(&status["numberReady"])),
        json!(int(&status["updatedNumberScheduled"])),
        json!(int(&status["numberAvailable"])),
        json!(format_labels(&ds["spec"]["template"]["spec"]["nodeSelector"])),
        age(ds, now),
        names,
        images,
        json!(format_selector(&ds["spec"]["selector"])),
    ]
}

/// apps/validation `ValidateDaemonSetUpdateStrategy` + `ValidateRollingUpdateDaemonSet`.
fn validate_daemon_set_strategy(strategy: &Value, causes: &mut Vec<Cause>) {
    let path = "spec.updateStrategy";
    match strategy.get("type").and_then(Value::as_str) {
        Some("OnDelete") => {}
        Some("RollingUpdate") => {
            let Some(rolling) = strategy.get("rollingUpdate").filter(|r| !r.is_null()) else {
                causes.push(required(
                    format!("{path}.rollingUpdate"),
                    "this should be defaulted and never be nil",
                ));
                return;
            };
            let path = format!("{path}.rollingUpdate");
            let zero = json!(0);
            let unavailable = rolling.get("maxUnavailable").unwrap_or(&zero);
            let surge = rolling.get("maxSurge").unwrap_or(&zero);
            validate_int_or_percent(unavailable, &format!("{path}.maxUnavailable"), causes);
            validate_int_or_percent(surge, &format!("{path}.maxSurge"), causes);
            let non_zero = |v: &Value| int_or_percent(v).is_some_and(|(n, _)| n != 0);
            match (non_zero(unavailable), non_zero(surge)) {
                (true, true) => causes.push(invalid(
                    format!("{path}.maxSurge"),
                    &go_int_or_string(surge),
                    "may not be set when maxUnavailable is non-zero",
                )),
                (false, false) => {
                    causes.push(required(format!("{path}.maxUnavailable"), "cannot be 0 when maxSurge is 0"))
                }
                _ => {}
            }
        }
        other => {
            let value = other.map(|s| json!(s)).unwrap_or(Value::Null);
            causes.push(not_supported(format!("{path}.type"), &value, &["OnDelete", "RollingUpdate"]));
        }
    }
}
