//! ControllerRevisions (apps/v1): the row and the printer (CONTROLLER, REVISION).

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, int, text},
};

/// apps/v1 `controllerrevisions`.
pub static KIND: Kind = Kind {
    group: "apps",
    version: "v1",
    kind: "ControllerRevision",
    plural: "controllerrevisions",
    scope: Scope::Namespaced,
    short_names: &[],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &ControllerRevisionStrategy,
};

/// The ControllerRevision strategy.
#[derive(Debug)]
pub struct ControllerRevisionStrategy;

impl Strategy for ControllerRevisionStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: controllerrevision_row, columns: &[
    NAME,
    Column("Controller", "string", 0, "Controller of the object"),
    Column("Revision", "string", 0, "Revision indicates the revision of the state represented by Data."),
    AGE,
] };

/// printers.go `printControllerRevision`: CONTROLLER is `<kind>.<group>/<name>` in lower case.
fn controllerrevision_row(revision: &Value, now: Ages) -> Vec<Value> {
    let controller = revision["metadata"]["ownerReferences"]
        .as_array()
        .and_then(|refs| refs.iter().find(|r| r["controller"] == true))
        .map(|owner| {
            let group = text(&owner["apiVersion"]).rsplit_once('/').map(|(g, _)| g).unwrap_or("");
            let kind = if group.is_empty() {
                text(&owner["kind"]).to_string()
            } else {
                format!("{}.{group}", text(&owner["kind"]))
            };
            format!("{}/{}", kind.to_lowercase(), text(&owner["name"]))
        })
        .unwrap_or_else(|| "<none>".to_string());
    vec![
        revision["metadata"]["name"].clone(),
        json!(controller),
        json!(int(&revision["revision"])),
        age(revision, now),
    ]
}
