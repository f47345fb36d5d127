//! What a kind's `Table` printer is made of: columns, the row printer, ages and the cell
//! formatting the printers share.
//!
//! Column sets and cell values follow kube-apiserver's printers
//! (pkg/printers/internalversion/printers.go, v1.33: `AddHandlers` and the `print<Kind>`
//! functions); each kind's printer is in its own file, `server::table` renders the `Table`.
//! Kinds without a printer get the default convertor's `Name, Created At`
//! (apiserver/pkg/registry/rest/table.go). Ages are `duration.HumanDuration` of now − timestamp.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

/// `metadata.name`'s description, the NAME column's.
pub const NAME_DOC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
/// `metadata.creationTimestamp`'s description, the AGE column's.
pub const AGE_DOC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// One column: name, type, priority (0 always shown, 1 only with `-o wide`), description.
#[derive(Debug)]
pub struct Column(pub &'static str, pub &'static str, pub u8, pub &'static str);

/// The NAME column.
pub const NAME: Column = Column("Name", "string", 0, NAME_DOC);
/// The AGE column.
pub const AGE: Column = Column("Age", "string", 0, AGE_DOC);
/// The CONTAINERS column of the workloads (`-o wide`).
pub const CONTAINERS: Column = Column("Containers", "string", 1, "Names of each container in the template.");
/// The IMAGES column of the workloads (`-o wide`).
pub const IMAGES: Column =
    Column("Images", "string", 1, "Images referenced by each container in the template.");

/// Prints one object's cells.
pub type RowPrinter = fn(&Value, Ages) -> Vec<Value>;

/// One kind's table: kubectl's columns and the row printer, as data: one column per line
/// (descriptions are upstream's, from the printers' `TableColumnDefinition`s), so a printer
/// reads like the upstream column list.
#[derive(Debug)]
pub struct Printer {
    /// The columns, in order.
    pub columns: &'static [Column],
    /// The row printer.
    pub row: RowPrinter,
}

/// Kinds without a printer: the default convertor's columns (apiserver/pkg/registry/rest/table.go).
pub static DEFAULT: Printer =
    Printer { columns: &[NAME, Column("Created At", "date", 0, AGE_DOC)], row: generic_row };

/// The default convertor: name and the creation time in RFC 3339 (UTC).
fn generic_row(object: &Value, _now: Ages) -> Vec<Value> {
    let created = object["metadata"]["creationTimestamp"]
        .as_str()
        .and_then(|t| t.parse::<Timestamp>().ok())
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_default();
    vec![object["metadata"]["name"].clone(), json!(created)]
}

/// When the age cells of a row are computed.
#[derive(Debug, Clone, Copy)]
pub enum Ages {
    /// Now: the row is complete.
    At(Timestamp),
    /// Per response: the row is a template that keeps each timestamp in a marker, and
    /// `server::table::fill_ages` writes the ages when the row is sent. Rows are cached per
    /// object revision this way, while their ages still count from the moment of each request.
    Deferred,
}

impl Ages {
    /// `duration.HumanDuration(now - then)`, or the marker that stands for it.
    pub fn since(self, then: Timestamp) -> String {
        match self {
            Ages::At(now) => human_duration(now.duration_since(then).as_secs()),
            Ages::Deferred => format!("{}{}{AGE_MARK_END}", age_mark(), then.as_nanosecond()),
        }
    }
}

/// The start of an age marker: a control character and a per-process random tag, so no text
/// taken from an object can be mistaken for one.
pub fn age_mark() -> &'static str {
    static MARK: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    MARK.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let tag = std::collections::hash_map::RandomState::new().build_hasher().finish();
        format!("\u{1}{tag:016x}:")
    })
}

/// The end of an age marker.
pub const AGE_MARK_END: char = '\u{2}';

/// apimachinery/pkg/util/duration `HumanDuration`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    } else if seconds < 0 {
        return "0s".to_string();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 { format!("{minutes}m") } else { format!("{minutes}m{s}s") };
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 { format!("{hours}h") } else { format!("{hours}h{m}m") };
    } else if hours < 48 {
        return format!("{hours}h");
    } else if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 { format!("{}d", hours / 24) } else { format!("{}d{h}h", hours / 24) };
    } else if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    } else if hours < 24 * 365 * 8 {
        let days = (hours / 24) % 365;
        return if days == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{days}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// printers.go `translateTimestampSince`: `<unknown>` for a missing time.
pub fn since(timestamp: &Value, now: Ages) -> String {
    match timestamp.as_str().and_then(|t| t.parse::<Timestamp>().ok()) {
        Some(then) => now.since(then),
        None => "<unknown>".to_string(),
    }
}

/// A string field, `""` when absent.
pub fn text(value: &Value) -> &str {
    value.as_str().unwrap_or("")
}

/// An integer field, 0 when absent.
pub fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

/// `<none>` for an empty cell.
pub fn or_none(value: &str) -> String {
    if value.is_empty() { "<none>".to_string() } else { value.to_string() }
}

/// The AGE cell.
pub fn age(object: &Value, now: Ages) -> Value {
    json!(since(&object["metadata"]["creationTimestamp"], now))
}

/// How many entries a map field has.
pub fn map_len(value: &Value) -> usize {
    value.as_object().map_or(0, |m| m.len())
}

/// `labels.FormatLabels`: sorted `k=v` joined by `,`, or `<none>`.
pub fn format_labels(map: &Value) -> String {
    match map.as_object() {
        Some(map) if !map.is_empty() => {
            let mut pairs: Vec<String> = map.iter().map(|(k, v)| format!("{k}={}", text(v))).collect();
            pairs.sort();
            pairs.join(",")
        }
        _ => "<none>".to_string(),
    }
}

/// `metav1.FormatLabelSelector`: like [`crate::k8s::selector::selector_string`] but `<none>`
/// when empty.
pub fn format_selector(selector: &Value) -> String {
    or_none(&crate::k8s::selector::selector_string(selector))
}

/// printers.go `layoutContainerCells`: names and images joined by `,`.
pub fn containers_and_images(template: &Value) -> (Value, Value) {
    let containers = template["spec"]["containers"].as_array().cloned().unwrap_or_default();
    let names: Vec<&str> = containers.iter().map(|c| text(&c["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| text(&c["image"])).collect();
    (json!(names.join(",")), json!(images.join(",")))
}
