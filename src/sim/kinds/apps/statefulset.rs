//! StatefulSets (apps/v1 `statefulsets`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, int},
    schema_of,
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
    schema: schema_of::<k8s_openapi::api::apps::v1::StatefulSet>,
    strategy: &StatefulSetStrategy,
};

/// The StatefulSet strategy.
#[derive(Debug)]
pub struct StatefulSetStrategy;

impl Strategy for StatefulSetStrategy {
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
