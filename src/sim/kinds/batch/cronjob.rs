//! CronJobs (batch/v1 `cronjobs`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{
        AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, format_selector,
        since,
    },
    schema_of,
};

/// batch/v1 `cronjobs`.
pub static KIND: Kind = Kind {
    group: "batch",
    version: "v1",
    kind: "CronJob",
    plural: "cronjobs",
    scope: Scope::Namespaced,
    short_names: &["cj"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status"],
    schema: schema_of::<k8s_openapi::api::batch::v1::CronJob>,
    strategy: &CronJobStrategy,
};

/// The CronJob strategy.
#[derive(Debug)]
pub struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: cronjob_row, columns: &[
    NAME,
    Column("Schedule", "string", 0, "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    Column("Timezone", "string", 0, "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones"),
    Column("Suspend", "boolean", 0, "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false."),
    Column("Active", "integer", 0, "A list of pointers to currently running jobs."),
    Column("Last Schedule", "string", 0, "Information when was the last time the job was successfully scheduled."),
    AGE,
    CONTAINERS,
    IMAGES,
    Column("Selector", "string", 1, "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors"),
] };

/// printers.go `printCronJob`: `<none>` for an unset time zone or a CronJob never scheduled;
/// `printBoolPtr` for `suspend`.
fn cronjob_row(cj: &Value, now: Ages) -> Vec<Value> {
    let spec = &cj["spec"];
    let last_schedule = match &cj["status"]["lastScheduleTime"] {
        Value::Null => "<none>".to_string(),
        at => since(at, now),
    };
    let suspend = match spec["suspend"].as_bool() {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    };
    let job_spec = &spec["jobTemplate"]["spec"];
    let (names, images) = containers_and_images(&job_spec["template"]);
    let selector = if job_spec["selector"].is_null() {
        "<none>".to_string()
    } else {
        format_selector(&job_spec["selector"])
    };
    vec![
        cj["metadata"]["name"].clone(),
        spec["schedule"].clone(),
        json!(spec["timeZone"].as_str().unwrap_or("<none>")),
        json!(suspend),
        json!(cj["status"]["active"].as_array().map_or(0, Vec::len)),
        json!(last_schedule),
        age(cj, now),
        names,
        images,
        json!(selector),
    ]
}
