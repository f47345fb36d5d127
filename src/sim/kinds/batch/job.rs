//! Jobs (batch/v1 `jobs`): the row of the table and the registry strategy.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::{
    k8s::selector::field_text,
    sim::kinds::{
        ALL_VERBS, Kind, Scope, Strategy,
        printer::{
            AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images,
            format_selector, human_duration, int,
        },
        schema_of,
    },
};

/// batch/v1 `jobs`.
pub static KIND: Kind = Kind {
    group: "batch",
    version: "v1",
    kind: "Job",
    plural: "jobs",
    scope: Scope::Namespaced,
    short_names: &[],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status"],
    schema: schema_of::<k8s_openapi::api::batch::v1::Job>,
    strategy: &JobStrategy,
};

/// The Job strategy.
#[derive(Debug)]
pub struct JobStrategy;

impl Strategy for JobStrategy {
    fn selectable_fields(&self) -> &'static [&'static str] {
        &["metadata.name", "metadata.namespace", "status.successful"]
    }

    fn selectable_value(&self, object: &Value, name: &str) -> String {
        match field_text(object, name) {
            // An absent count is 0.
            absent if absent.is_empty() && name == "status.successful" => "0".to_string(),
            value => value,
        }
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: job_row, columns: &[
    NAME,
    Column("Status", "string", 0, "Status of the job."),
    Column("Completions", "string", 0, "The completion status of the job."),
    Column("Duration", "string", 0, "Time required to complete the job."),
    AGE,
    CONTAINERS,
    IMAGES,
    Column("Selector", "string", 1, "A label query over pods that should match the pod count."),
] };

/// printers.go `printJob` (v1.33): STATUS from conditions, COMPLETIONS, DURATION.
fn job_row(job: &Value, now: Ages) -> Vec<Value> {
    let spec = &job["spec"];
    let status = &job["status"];
    let succeeded = int(&status["succeeded"]);
    let completions = match spec["completions"].as_i64() {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match spec["parallelism"].as_i64().unwrap_or(0) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let parse = |v: &Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
    let duration = match (parse(&status["startTime"]), parse(&status["completionTime"])) {
        (None, _) => String::new(),
        (Some(start), None) => now.since(start),
        (Some(start), Some(end)) => human_duration(end.duration_since(start).as_secs()),
    };
    let conditions = &status["conditions"];
    let state = if crate::k8s::condition::is_true(conditions, "Complete") {
        "Complete"
    } else if crate::k8s::condition::is_true(conditions, "Failed") {
        "Failed"
    } else if !job["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if crate::k8s::condition::is_true(conditions, "Suspended") {
        "Suspended"
    } else if crate::k8s::condition::is_true(conditions, "FailureTarget") {
        "FailureTarget"
    } else if crate::k8s::condition::is_true(conditions, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (names, images) = containers_and_images(&spec["template"]);
    vec![
        job["metadata"]["name"].clone(),
        json!(state),
        json!(completions),
        json!(duration),
        age(job, now),
        names,
        images,
        json!(format_selector(&spec["selector"])),
    ]
}
