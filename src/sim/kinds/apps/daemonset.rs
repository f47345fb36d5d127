//! DaemonSets (apps/v1 `daemonsets`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{
        AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, format_labels,
        format_selector, int,
    },
    schema_of,
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
    schema: schema_of::<k8s_openapi::api::apps::v1::DaemonSet>,
    strategy: &DaemonSetStrategy,
};

/// The DaemonSet strategy.
#[derive(Debug)]
pub struct DaemonSetStrategy;

impl Strategy for DaemonSetStrategy {
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
