//! Events (v1): the row, the printer and the selectable fields.
//!
//! Upstream: pkg/registry/core/event/strategy.go (`ToSelectableFields`), printers.go `printEvent`.

use serde_json::{Value, json};

use crate::{
    k8s::selector::field_text,
    kinds::{
        ALL_VERBS, Kind, Scope, Strategy,
        printer::{Ages, Column, Printer, int, since, text},
    },
};

/// v1 `events`.
pub static KIND: Kind = Kind {
    group: "",
    version: "v1",
    kind: "Event",
    plural: "events",
    scope: Scope::Namespaced,
    short_names: &["ev"],
    categories: &[],
    verbs: ALL_VERBS,
    subresources: &[],
    strategy: &EventStrategy,
};

/// `ToSelectableFields` (pkg/registry/core/event/strategy.go).
pub(crate) const FIELDS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// The Event strategy.
#[derive(Debug)]
pub struct EventStrategy;

impl Strategy for EventStrategy {
    /// Quota ignores events (`ignoredResources`, `pkg/quota/v1/install/registry.go`).
    fn quota(&self) -> crate::kinds::QuotaCharge {
        crate::kinds::QuotaCharge::Ignored
    }

    fn selectable_fields(&self) -> &'static [&'static str] {
        FIELDS
    }

    fn selectable_value(&self, event: &Value, name: &str) -> String {
        match name {
            "source" => field_text(event, "source.component"),
            _ => field_text(event, name),
        }
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
pub(crate) static PRINTER: Printer = Printer { row: event_row, columns: &[
    Column("Last Seen", "string", 0, "deprecatedLastTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type."),
    Column("Type", "string", 0, "type is the type of this event (Normal, Warning), new types could be added in the future."),
    Column("Reason", "string", 0, "reason is why the action was taken. It is human-readable."),
    Column("Object", "string", 0, "regarding contains the object this Event is about."),
    Column("Subobject", "string", 1, "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement."),
    Column("Source", "string", 1, "reportingController is the name of the controller that emitted this Event."),
    Column("Message", "string", 0, "note is a human-readable description of the status of this operation."),
    Column("First Seen", "string", 1, "deprecatedFirstTimestamp is the deprecated field assuring backward compatibility with core.v1 Event type."),
    Column("Count", "string", 1, "deprecatedCount is the deprecated field assuring backward compatibility with core.v1 Event type."),
    Column("Name", "string", 1, crate::kinds::printer::NAME_DOC),
] };

/// printers.go `printEvent`, for core/v1 and events.k8s.io/v1 field names.
pub(crate) fn event_row(event: &Value, now: Ages) -> Vec<Value> {
    // events.k8s.io/v1 renames: regarding, note, deprecated{First,Last}Timestamp, deprecatedCount.
    let pick = |core: &str, events: &str| {
        if event[core].is_null() { event[events].clone() } else { event[core].clone() }
    };
    let first = pick("firstTimestamp", "deprecatedFirstTimestamp");
    let first = if first.as_str().is_some_and(|s| !s.is_empty()) {
        since(&first, now)
    } else {
        since(&event["eventTime"], now)
    };
    let last = pick("lastTimestamp", "deprecatedLastTimestamp");
    let mut last =
        if last.as_str().is_some_and(|s| !s.is_empty()) { since(&last, now) } else { first.clone() };
    let mut count = pick("count", "deprecatedCount").as_i64().unwrap_or(0);
    if event["series"].is_object() {
        last = since(&event["series"]["lastObservedTime"], now);
        count = int(&event["series"]["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = pick("involvedObject", "regarding");
    let kind = text(&involved["kind"]).to_lowercase();
    let target =
        if text(&involved["name"]).is_empty() { kind } else { format!("{kind}/{}", text(&involved["name"])) };
    let source = &event["source"];
    let first_non_empty = |a: &str, b: &str| if a.is_empty() { b.to_string() } else { a.to_string() };
    let component = first_non_empty(
        text(&source["component"]),
        &first_non_empty(text(&event["reportingController"]), text(&event["deprecatedSource"]["component"])),
    );
    let host = first_non_empty(text(&source["host"]), text(&event["reportingInstance"]));
    let source = match (component.is_empty(), host.is_empty()) {
        (true, _) => "<unknown>".to_string(),
        (false, true) => component,
        (false, false) => format!("{component}, {host}"),
    };
    let message = pick("message", "note");
    vec![
        json!(last),
        json!(text(&event["type"])),
        json!(text(&event["reason"])),
        json!(target),
        json!(text(&involved["fieldPath"])),
        json!(source),
        json!(text(&message).trim()),
        json!(first),
        json!(count),
        event["metadata"]["name"].clone(),
    ]
}
