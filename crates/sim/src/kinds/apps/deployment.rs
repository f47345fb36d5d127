//! Deployments (apps/v1): the Deployment strategy and its row.
//!
//! Upstream: pkg/registry/apps/deployment/strategy.go, `SetDefaults_Deployment`,
//! `ValidateDeployment`. The controller is `controllers/deployment.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    apps::{Workload, int_or_percent, validate_int_or_percent, validate_workload_spec},
    core::podspec::{default_template, drop_template_zero_values, normalize_template},
    default_key,
    field::{IS_NEGATIVE, forbidden, go_int_or_string, invalid, required},
    object_mut,
    printer::{AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, int},
};

/// apps/v1 `deployments`.
pub static KIND: Kind = Kind {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    scope: Scope::Namespaced,
    short_names: &["deploy"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status", "scale"],
    strategy: &DeploymentStrategy,
};

/// The Deployment strategy.
#[derive(Debug)]
pub struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// apps/v1/defaults.go `SetDefaults_Deployment`.
    fn defaults(&self, object: &mut Value) {
        drop_template_zero_values(object);
        let Some(spec) = object_mut(object, "spec") else { return };
        default_key(spec, "replicas", json!(1));
        let strategy = spec.entry("strategy").or_insert_with(|| json!({}));
        if let Some(strategy) = strategy.as_object_mut() {
            default_key(strategy, "type", json!("RollingUpdate"));
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
                if let Some(rolling) = rolling.as_object_mut() {
                    default_key(rolling, "maxUnavailable", json!("25%"));
                    default_key(rolling, "maxSurge", json!("25%"));
                }
            }
        }
        default_key(spec, "revisionHistoryLimit", json!(10));
        default_key(spec, "progressDeadlineSeconds", json!(600));
        default_template(spec);
    }

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_template(object);
    }

    /// `ValidateDeployment`/`ValidateDeploymentUpdate`.
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        validate_workload_spec(
            object,
            old,
            Workload::Deployment,
            &["replicas", "minReadySeconds", "revisionHistoryLimit"],
            |causes| {
                validate_strategy(&object["spec"]["strategy"], causes);
                validate_progress_deadline(&object["spec"], causes);
            },
        )
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: deployment_row, columns: &[
    NAME,
    Column("Ready", "string", 0, "Number of the pod with ready state"),
    Column("Up-to-date", "string", 0, "Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
    Column("Available", "string", 0, "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
    AGE,
    CONTAINERS,
    IMAGES,
    Column("Selector", "string", 1, "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment."),
] };

fn deployment_row(deploy: &Value, now: Ages) -> Vec<Value> {
    let status = &deploy["status"];
    // spec.replicas defaults to 1 (apps/v1 defaults).
    let desired = deploy["spec"]["replicas"].as_i64().unwrap_or(1);
    let (names, images) = containers_and_images(&deploy["spec"]["template"]);
    vec![
        deploy["metadata"]["name"].clone(),
        json!(format!("{}/{desired}", int(&status["readyReplicas"]))),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        age(deploy, now),
        names,
        images,
        json!(crate::k8s::selector::selector_string(&deploy["spec"]["selector"])),
    ]
}

/// apps/validation `ValidateDeploymentStrategy`: a Recreate strategy has no rolling update, a
/// RollingUpdate one has its bounds checked, any other type is refused with the whole strategy
/// shown (`field.NotSupported(fldPath, strategy, …)`, printed `%#v`).
fn validate_strategy(strategy: &Value, causes: &mut Vec<Cause>) {
    let rolling = strategy.get("rollingUpdate").filter(|r| !r.is_null());
    match strategy["type"].as_str() {
        Some("Recreate") => {
            if rolling.is_some() {
                causes.push(forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                ));
            }
        }
        Some("RollingUpdate") => match rolling {
            Some(rolling) => validate_rolling_update_deployment(rolling, causes),
            None => causes
                .push(required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil")),
        },
        _ => {
            // The pointer's address is the Go runtime's; a fixed one stands in for it.
            let rolling = if rolling.is_some() { "0xc000000000" } else { "nil" };
            let shown = format!(
                "apps.DeploymentStrategy{{Type:{:?}, RollingUpdate:(*apps.RollingUpdateDeployment)({rolling})}}",
                strategy["type"].as_str().unwrap_or_default()
            );
            causes.push(Cause {
                reason: "FieldValueNotSupported".into(),
                message: format!(
                    "Unsupported value: {shown}: supported values: \"Recreate\", \"RollingUpdate\""
                ),
                field: "spec.strategy".into(),
            });
        }
    }
}

/// `ValidateDeploymentSpec`'s last rule: a progress deadline is non-negative and longer than
/// `minReadySeconds`.
fn validate_progress_deadline(spec: &Value, causes: &mut Vec<Cause>) {
    let Some(deadline) = spec["progressDeadlineSeconds"].as_i64() else { return };
    if deadline < 0 {
        causes.push(invalid("spec.progressDeadlineSeconds", &deadline.to_string(), IS_NEGATIVE));
    }
    if deadline <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
        causes.push(invalid(
            "spec.progressDeadlineSeconds",
            &deadline.to_string(),
            "must be greater than minReadySeconds",
        ));
    }
}

/// apps/validation `ValidateRollingUpdateDeployment`.
fn validate_rolling_update_deployment(rolling: &Value, causes: &mut Vec<Cause>) {
    let path = "spec.strategy.rollingUpdate";
    let zero = json!(0);
    let unavailable = rolling.get("maxUnavailable").unwrap_or(&zero);
    let surge = rolling.get("maxSurge").unwrap_or(&zero);
    validate_int_or_percent(unavailable, &format!("{path}.maxUnavailable"), causes);
    validate_int_or_percent(surge, &format!("{path}.maxSurge"), causes);
    let is_zero = |v: &Value| int_or_percent(v).is_none_or(|(n, _)| n == 0);
    if is_zero(unavailable) && is_zero(surge) {
        causes.push(invalid(
            format!("{path}.maxUnavailable"),
            &go_int_or_string(unavailable),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
}
