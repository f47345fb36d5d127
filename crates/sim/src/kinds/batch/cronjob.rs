//! CronJobs (batch/v1): the CronJob strategy and its row.
//!
//! Upstream: pkg/registry/batch/cronjob/strategy.go, `SetDefaults_CronJob`, `ValidateCronJobSpec`.
//! Schedules parse with `sim::cron`; the controller is `controllers/cronjob.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    core::podspec::default_template,
    field::{IS_NEGATIVE, invalid},
    printer::{
        AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images, format_selector,
        since,
    },
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
    strategy: &CronJobStrategy,
};

/// The CronJob strategy.
#[derive(Debug)]
pub struct CronJobStrategy;

impl Strategy for CronJobStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// batch/v1 `SetDefaults_CronJob`; the job template's pod spec gets the pod defaults (the
    /// generated defaulter), not the Job's own.
    fn defaults(&self, object: &mut Value) {
        let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
        for (key, value) in [
            ("concurrencyPolicy", json!("Allow")),
            ("suspend", json!(false)),
            ("successfulJobsHistoryLimit", json!(3)),
            ("failedJobsHistoryLimit", json!(1)),
        ] {
            if spec.get(key).is_none_or(Value::is_null) {
                spec.insert(key.into(), value);
            }
        }
        if let Some(job_spec) =
            spec.get_mut("jobTemplate").and_then(|t| t.get_mut("spec")).and_then(Value::as_object_mut)
        {
            default_template(job_spec);
        }
    }

    /// `ValidateCronJobCreate`/`ValidateCronJobUpdate`: the spec, then (on create) the name,
    /// which leaves room for the 11-character suffix of the Jobs it makes
    /// (`DNS1035LabelMaxLength - 11`).
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_cron_job(&object["spec"], &mut causes);
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        if old.is_none() && name.len() > MAX_NAME_LENGTH {
            causes.push(invalid("metadata.name", &format!("{name:?}"), "must be no more than 52 characters"));
        }
        causes
    }

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

/// The longest CronJob name: a Job name (63) less the controller's `-<timestamp>` suffix.
const MAX_NAME_LENGTH: usize = 63 - 11;

/// `ValidateNonnegativeField` on the optional counters of `validateCronJobSpec`, in its order.
fn non_negative(spec: &Value, field: &str, causes: &mut Vec<Cause>) {
    if let Some(value) = spec[field].as_i64()
        && value < 0
    {
        causes.push(invalid(format!("spec.{field}"), &value.to_string(), IS_NEGATIVE));
    }
}

/// `ValidateCronJobSpec` (pkg/apis/batch/validation/validation.go): the schedule parses
/// (`validateScheduleFormat`), the time zone is known, the policy is supported, and the job
/// template's pods restart `OnFailure` or `Never`.
fn validate_cron_job(spec: &Value, causes: &mut Vec<Cause>) {
    match spec["schedule"].as_str().filter(|s| !s.is_empty()) {
        None => causes.push(Cause {
            reason: "FieldValueRequired".into(),
            message: "Required value".into(),
            field: "spec.schedule".into(),
        }),
        Some(schedule) => {
            if let Err(error) = crate::cron::parse(schedule) {
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!("Invalid value: {schedule:?}: {error}"),
                    field: "spec.schedule".into(),
                });
            }
            if schedule.contains("TZ") {
                // `allowTZInSchedule` is false unless the stored object already had TZ in its
                // schedule (`validateScheduleFormat`); the simulator's objects never do.
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {schedule:?}: cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
                    ),
                    field: "spec.schedule".into(),
                });
            }
        }
    }
    non_negative(spec, "startingDeadlineSeconds", causes);
    if let Some(zone) = spec["timeZone"].as_str()
        && crate::cron::time_zone(zone).is_none()
    {
        causes.push(Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {zone:?}: unknown time zone {zone}"),
            field: "spec.timeZone".into(),
        });
    }
    if let Some(policy) = spec["concurrencyPolicy"].as_str()
        && !["Allow", "Forbid", "Replace"].contains(&policy)
    {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {policy:?}: supported values: \"Allow\", \"Forbid\", \"Replace\""
            ),
            field: "spec.concurrencyPolicy".into(),
        });
    }
    let restart = &spec["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"];
    if let Some(policy) = restart.as_str()
        && !["OnFailure", "Never"].contains(&policy)
    {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!("Unsupported value: {policy:?}: supported values: \"OnFailure\", \"Never\""),
            field: "spec.jobTemplate.spec.template.spec.restartPolicy".into(),
        });
    }
    non_negative(spec, "successfulJobsHistoryLimit", causes);
    non_negative(spec, "failedJobsHistoryLimit", causes);
}
