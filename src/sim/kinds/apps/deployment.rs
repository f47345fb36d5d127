//! Deployments (apps/v1 `deployments`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, int},
    schema_of,
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
    schema: schema_of::<k8s_openapi::api::apps::v1::Deployment>,
    strategy: &DeploymentStrategy,
};

/// The Deployment strategy.
#[derive(Debug)]
pub struct DeploymentStrategy;

impl Strategy for DeploymentStrategy {
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
