//! Defaults and validation of the kinds and modes served since issue #17, apart from `admission.rs`.
//!
//! Texts and field paths are upstream's (`pkg/apis/batch/validation/validation.go` and the other
//! files each function cites), rendered as `admission::Cause`s.

use serde_json::{Value, json};

use super::admission::{self, Cause};
use crate::sim::resources::ResourceType;

/// `maxParallelismForIndexedJob` (pkg/apis/batch/validation/validation.go).
const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;

/// API defaults of these kinds, after `admission::apply_defaults`.
pub fn apply_defaults(rt: &ResourceType, object: &mut Value) {
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("apps", "StatefulSet") => default_stateful_set(object),
        // core/v1 `SetDefaults_PersistentVolumeClaim` and `SetDefaults_PersistentVolumeClaimSpec`.
        ("", "PersistentVolumeClaim") => {
            if object["status"]["phase"].as_str().is_none_or(str::is_empty) {
                object["status"]["phase"] = json!("Pending");
            }
            if object["spec"].is_object() && object["spec"]["volumeMode"].is_null() {
                object["spec"]["volumeMode"] = json!("Filesystem");
            }
        }
        // batch/v1 `SetDefaults_CronJob`; the job template's pod spec gets the pod defaults
        // (the generated defaulter), not the Job's own.
        ("batch", "CronJob") => {
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
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
                    admission::default_template(job_spec);
                }
            }
        }
        // policy/v1: the create strategy resets the status; Go writes its four counters.
        ("policy", "PodDisruptionBudget") => {
            if !object["status"].is_object() {
                object["status"] = json!({});
            }
            for key in ["disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods"] {
                if object["status"][key].is_null() {
                    object["status"][key] = json!(0);
                }
            }
        }
        ("autoscaling", "HorizontalPodAutoscaler") => default_horizontal_pod_autoscaler(object),
        // scheduling/v1 `SetDefaults_PriorityClass`.
        ("scheduling.k8s.io", "PriorityClass") if object["preemptionPolicy"].is_null() => {
            object["preemptionPolicy"] = json!("PreemptLowerPriority");
        }
        _ => {}
    }
}

/// apps/v1/defaults.go `SetDefaults_StatefulSet` (v1.33: StatefulSetAutoDeletePVC on, the
/// MaxUnavailableStatefulSet gate off, so no `maxUnavailable`).
fn default_stateful_set(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    let mut default = |key: &str, value: Value| {
        if spec.get(key).is_none_or(Value::is_null) {
            spec.insert(key.to_string(), value);
        }
    };
    default("replicas", json!(1));
    default("podManagementPolicy", json!("OrderedReady"));
    default("updateStrategy", json!({"type": "RollingUpdate"}));
    default("revisionHistoryLimit", json!(10));
    default("persistentVolumeClaimRetentionPolicy", json!({"whenDeleted": "Retain", "whenScaled": "Retain"}));
    if let Some(strategy) = spec.get_mut("updateStrategy").and_then(Value::as_object_mut) {
        if strategy.get("type").is_none_or(Value::is_null) {
            strategy.insert("type".into(), json!("RollingUpdate"));
        }
        if strategy.get("type") == Some(&json!("RollingUpdate")) {
            let rolling = strategy.entry("rollingUpdate").or_insert_with(|| json!({}));
            if rolling.is_null() {
                *rolling = json!({});
            }
            if let Some(rolling) = rolling.as_object_mut() {
                rolling.entry("partition").or_insert(json!(0));
            }
        }
    }
    if let Some(policy) = spec.get_mut("persistentVolumeClaimRetentionPolicy").and_then(Value::as_object_mut)
    {
        policy.entry("whenDeleted").or_insert(json!("Retain"));
        policy.entry("whenScaled").or_insert(json!("Retain"));
    }
    admission::default_template(spec);
}

/// autoscaling/v2 `SetDefaults_HorizontalPodAutoscaler` (pkg/apis/autoscaling/v2/defaults.go):
/// `minReplicas` 1, no metrics → 80 % average CPU utilization, a `behavior` given in part filled
/// with the default rules (`GenerateHPAScaleUpRules`/`GenerateHPAScaleDownRules`; the scale-down
/// window stays unset, the controller's flag decides it). The create strategy resets the status,
/// whose `desiredReplicas` Go always writes.
fn default_horizontal_pod_autoscaler(object: &mut Value) {
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else { return };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec.insert("minReplicas".into(), json!(1));
    }
    if spec.get("metrics").and_then(Value::as_array).is_none_or(Vec::is_empty) {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    if let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) {
        let scale_up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let scale_down = json!({"selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (key, defaults) in [("scaleUp", scale_up), ("scaleDown", scale_down)] {
            let rules = behavior.entry(key).or_insert(Value::Null);
            let mut filled = defaults;
            if let Some(given) = rules.as_object() {
                for (field, value) in given.iter().filter(|(_, v)| !v.is_null()) {
                    filled[field] = value.clone();
                }
            }
            *rules = filled;
        }
    }
    if !object["status"].is_object() {
        object["status"] = json!({});
    }
    if object["status"]["desiredReplicas"].is_null() {
        object["status"]["desiredReplicas"] = json!(0);
    }
}

/// `validateHorizontalPodAutoscalerSpec` (pkg/apis/autoscaling/validation/validation.go, v1.33,
/// `minReplicasLowerBound` 1 without the HPAScaleToZero gate): the replica bounds, the scale
/// target reference (`ValidateCrossVersionObjectReference`: kind and name required, valid path
/// segments) and each metric's source type and target (`validateMetricSpec`,
/// `validateMetricTarget`).
fn validate_horizontal_pod_autoscaler(spec: &Value, causes: &mut Vec<Cause>) {
    let min = spec["minReplicas"].as_i64();
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if let Some(min) = min.filter(|min| *min < 1) {
        causes.push(invalid("spec.minReplicas", &min.to_string(), "must be greater than or equal to 1"));
    }
    if max < 1 {
        causes.push(invalid("spec.maxReplicas", &max.to_string(), "must be greater than 0"));
    }
    if min.is_some_and(|min| max < min) {
        causes.push(invalid(
            "spec.maxReplicas",
            &max.to_string(),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    for key in ["kind", "name"] {
        let field = format!("spec.scaleTargetRef.{key}");
        match spec["scaleTargetRef"][key].as_str().filter(|v| !v.is_empty()) {
            None => causes.push(Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field,
            }),
            Some(value) => {
                // apimachinery `path.IsValidPathSegmentName`.
                let problem = match value {
                    "." => Some("may not be '.'"),
                    ".." => Some("may not be '..'"),
                    v if v.contains('/') => Some("may not contain '/'"),
                    v if v.contains('%') => Some("may not contain '%'"),
                    _ => None,
                };
                if let Some(problem) = problem {
                    causes.push(invalid(&field, &format!("{value:?}"), problem));
                }
            }
        }
    }
    const SOURCES: [(&str, &str); 5] = [
        ("ContainerResource", "containerResource"),
        ("External", "external"),
        ("Object", "object"),
        ("Pods", "pods"),
        ("Resource", "resource"),
    ];
    for (index, metric) in
        spec["metrics"].as_array().map(Vec::as_slice).unwrap_or_default().iter().enumerate()
    {
        let path = format!("spec.metrics[{index}]");
        let kind = metric["type"].as_str().unwrap_or_default();
        if kind.is_empty() {
            causes.push(required(&format!("{path}.type"), "must specify a metric source type"));
        }
        let Some((_, source)) = SOURCES.iter().find(|(name, _)| *name == kind) else {
            let supported: Vec<String> = SOURCES.iter().map(|(name, _)| format!("{name:?}")).collect();
            causes.push(Cause {
                reason: "FieldValueNotSupported".into(),
                message: format!("Unsupported value: {kind:?}: supported values: {}", supported.join(", ")),
                field: format!("{path}.type"),
            });
            continue;
        };
        let given: Vec<&str> = SOURCES.iter().map(|(_, s)| *s).filter(|s| !metric[*s].is_null()).collect();
        if !given.contains(source) {
            causes.push(required(
                &format!("{path}.{source}"),
                "must populate information for the given metric source",
            ));
        }
        for other in given.iter().filter(|s| *s != source) {
            causes.push(Cause {
                reason: "FieldValueForbidden".into(),
                message: "Forbidden: must populate the given metric source only".into(),
                field: format!("{path}.{other}"),
            });
        }
        let target = &metric[*source]["target"];
        if target.is_object() {
            let target_path = format!("{path}.{source}.target");
            match target["type"].as_str().unwrap_or_default() {
                "" => {
                    causes.push(required(&format!("{target_path}.type"), "must specify a metric target type"))
                }
                "Utilization" | "Value" | "AverageValue" => {}
                other => causes.push(invalid(
                    &format!("{target_path}.type"),
                    &format!("{other:?}"),
                    "must be either Utilization, Value, or AverageValue",
                )),
            }
            if let Some(utilization) = target["averageUtilization"].as_i64().filter(|u| *u < 1) {
                causes.push(invalid(
                    &format!("{target_path}.averageUtilization"),
                    &utilization.to_string(),
                    "must be greater than 0",
                ));
            }
        }
    }
}

/// Validation of these kinds, after `admission::validate` (`old`: the stored object on update).
pub fn validate(rt: &ResourceType, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("batch", "Job") => validate_completion_mode(&object["spec"], &mut causes),
        ("scheduling.k8s.io", "PriorityClass") => validate_priority_class(object, old, &mut causes),
        ("batch", "CronJob") => validate_cron_job(&object["spec"], &mut causes),
        ("policy", "PodDisruptionBudget") => validate_disruption_budget(&object["spec"], &mut causes),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            validate_horizontal_pod_autoscaler(&object["spec"], &mut causes)
        }
        ("", "PersistentVolumeClaim") => {
            // `ValidatePersistentVolumeClaimSpec` (pkg/apis/core/validation/validation.go).
            let spec = &object["spec"];
            if spec["accessModes"].as_array().is_none_or(Vec::is_empty) {
                causes.push(required("spec.accessModes", "at least 1 access mode is required"));
            }
            if spec["resources"]["requests"]["storage"].is_null() {
                causes.push(Cause {
                    reason: "FieldValueRequired".into(),
                    message: "Required value".into(),
                    field: "spec.resources[storage]".into(),
                });
            }
        }
        ("node.k8s.io", "RuntimeClass") if object["handler"].as_str().is_none_or(str::is_empty) => {
            causes.push(Cause {
                reason: "FieldValueRequired".into(),
                message: "Required value".into(),
                field: "handler".into(),
            });
        }
        ("apps", "StatefulSet") => {
            // `ValidateStatefulSetSpec`: the selector, template labels and restart policy as
            // for the other workloads, and the two policies' values.
            admission::validate_workload(object, old, &mut causes);
            admission::validate_template_restart_policy(object, &["Always"], &mut causes);
            let spec = &object["spec"];
            for (field, value, supported) in [
                ("spec.podManagementPolicy", &spec["podManagementPolicy"], &["OrderedReady", "Parallel"][..]),
                (
                    "spec.updateStrategy.type",
                    &spec["updateStrategy"]["type"],
                    &["RollingUpdate", "OnDelete"][..],
                ),
            ] {
                if let Some(text) = value.as_str().filter(|t| !supported.contains(t)) {
                    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
                    causes.push(Cause {
                        reason: "FieldValueNotSupported".into(),
                        message: format!(
                            "Unsupported value: {text:?}: supported values: {}",
                            list.join(", ")
                        ),
                        field: field.into(),
                    });
                }
            }
        }
        _ => {}
    }
    causes
}

/// `ValidatePriorityClass` / `ValidatePriorityClassUpdate` (pkg/apis/scheduling/validation):
/// user classes stay at or below 1000000000 and outside the `system-` prefix; value and
/// preemptionPolicy are immutable.
fn validate_priority_class(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let name = object["metadata"]["name"].as_str().unwrap_or_default();
    let value = object["value"].as_i64().unwrap_or(0);
    // `IsKnownSystemPriorityClass` (pkg/apis/scheduling/helpers.go) and its error texts.
    let known = match crate::sim::kinds::scheduling::priorityclass::SYSTEM_PRIORITY_CLASSES
        .iter()
        .find(|(n, _, _)| *n == name)
    {
        Some((_, v, _)) if *v != value => Err(format!("value of {name} PriorityClass must be {v}")),
        Some(_) if object["globalDefault"] == true => {
            Err(format!("globalDefault of {name} PriorityClass must be false"))
        }
        Some(_) => Ok(()),
        None => Err(format!("{name} is not a known system priority class")),
    };
    let system = known.is_ok();
    if let (true, Err(error)) = (name.starts_with("system-"), &known) {
        causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: format!(
                "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: {error}"
            ),
            field: "metadata.name".into(),
        });
    } else if !system && value > 1_000_000_000 {
        causes.push(Cause {
            reason: "FieldValueForbidden".into(),
            message: "Forbidden: maximum allowed value of a user defined priority is 1000000000".into(),
            field: "value".into(),
        });
    }
    if let Some(old) = old {
        for field in ["value", "preemptionPolicy"] {
            if object[field] != old[field] {
                causes.push(Cause {
                    reason: "FieldValueForbidden".into(),
                    message: "Forbidden: may not be changed in an update.".into(),
                    field: field.into(),
                });
            }
        }
    }
}

/// `validateJobSpec`: the completion mode is one of two, and an Indexed Job states its
/// completions and at most 100000 parallel pods.
fn validate_completion_mode(spec: &Value, causes: &mut Vec<Cause>) {
    match spec["completionMode"].as_str() {
        None | Some("NonIndexed") => {}
        Some("Indexed") => {
            if spec["completions"].is_null() {
                causes.push(required("spec.completions", "when completion mode is Indexed"));
            }
            if let Some(parallelism) =
                spec["parallelism"].as_i64().filter(|p| *p > MAX_PARALLELISM_FOR_INDEXED_JOB)
            {
                causes.push(invalid(
                    "spec.parallelism",
                    &parallelism.to_string(),
                    &format!("must be less than or equal to {MAX_PARALLELISM_FOR_INDEXED_JOB} when completion mode is Indexed"),
                ));
            }
        }
        Some(other) => causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!("Unsupported value: {other:?}: supported values: \"NonIndexed\", \"Indexed\""),
            field: "spec.completionMode".into(),
        }),
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
            if let Err(error) = crate::sim::cron::parse(schedule) {
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!("Invalid value: {schedule:?}: {error}"),
                    field: "spec.schedule".into(),
                });
            } else if schedule.contains("TZ") && spec["timeZone"].is_string() {
                causes.push(Cause {
                    reason: "FieldValueInvalid".into(),
                    message: format!(
                        "Invalid value: {schedule:?}: cannot use both timeZone field and TZ or CRON_TZ in schedule"
                    ),
                    field: "spec.schedule".into(),
                });
            }
        }
    }
    if let Some(zone) = spec["timeZone"].as_str()
        && k8s_openapi::jiff::tz::TimeZone::get(zone).is_err()
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
}

/// `ValidatePodDisruptionBudgetSpec` (pkg/apis/policy/validation/validation.go): at most one of
/// the two bounds, each a non-negative integer or a percentage of at most 100%, and a supported
/// eviction policy.
fn validate_disruption_budget(spec: &Value, causes: &mut Vec<Cause>) {
    if !spec["minAvailable"].is_null() && !spec["maxUnavailable"].is_null() {
        // Upstream prints the internal spec with `%#v`, its pointer fields as addresses that
        // differ on every request; the simulator names the type and elides the dump.
        causes.push(invalid(
            "spec",
            "policy.PodDisruptionBudgetSpec{…}",
            "minAvailable and maxUnavailable cannot be both set",
        ));
    }
    for field in ["minAvailable", "maxUnavailable"] {
        let path = format!("spec.{field}");
        match &spec[field] {
            Value::Number(number) if number.as_i64().is_some_and(|n| n < 0) => {
                causes.push(invalid(&path, &number.to_string(), "must be greater than or equal to 0"));
            }
            Value::String(text) => match text.strip_suffix('%').map(str::parse::<i64>) {
                Some(Ok(percent)) if percent > 100 => {
                    causes.push(invalid(&path, &format!("{text:?}"), "must not be greater than 100%"));
                }
                Some(Ok(percent)) if percent < 0 => {
                    causes.push(invalid(&path, &format!("{text:?}"), "must be greater than or equal to 0"));
                }
                Some(Ok(_)) => {}
                _ => causes.push(invalid(
                    &path,
                    &format!("{text:?}"),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                )),
            },
            _ => {}
        }
    }
    if let Some(policy) = spec["unhealthyPodEvictionPolicy"].as_str()
        && !["AlwaysAllow", "IfHealthyBudget"].contains(&policy)
    {
        causes.push(Cause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {policy:?}: supported values: \"AlwaysAllow\", \"IfHealthyBudget\""
            ),
            field: "spec.unhealthyPodEvictionPolicy".into(),
        });
    }
}

/// `field.Required`.
fn required(field: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueRequired".into(),
        message: format!("Required value: {detail}"),
        field: field.into(),
    }
}

/// `field.Invalid` with a bad value printed bare (numbers).
fn invalid(field: &str, bad_value: &str, detail: &str) -> Cause {
    Cause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {bad_value}: {detail}"),
        field: field.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::resources;

    fn jobs() -> ResourceType {
        resources::built_in().into_iter().find(|t| t.plural == "jobs").unwrap()
    }

    #[test]
    fn user_priority_classes_stay_below_the_system_range() {
        let classes = resources::built_in().into_iter().find(|t| t.plural == "priorityclasses").unwrap();
        let texts = |object: Value| -> Vec<String> {
            validate(&classes, &object, None).iter().map(Cause::to_string).collect()
        };
        assert_eq!(
            texts(json!({"metadata": {"name": "system-mine"}, "value": 10})),
            [
                "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
            ]
        );
        assert_eq!(
            texts(json!({"metadata": {"name": "huge"}, "value": 2_000_000_000})),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        assert!(
            texts(json!({"metadata": {"name": "system-node-critical"}, "value": 2_000_001_000})).is_empty()
        );
    }

    #[test]
    fn an_indexed_job_needs_completions_and_bounded_parallelism() {
        let causes =
            validate(&jobs(), &json!({"spec": {"completionMode": "Indexed", "parallelism": 200000}}), None);
        let texts: Vec<String> = causes.iter().map(Cause::to_string).collect();
        assert_eq!(
            texts,
            [
                "spec.completions: Required value: when completion mode is Indexed",
                "spec.parallelism: Invalid value: 200000: must be less than or equal to 100000 when completion mode is Indexed"
            ]
        );
        let odd = validate(&jobs(), &json!({"spec": {"completionMode": "Sharded", "completions": 2}}), None);
        assert_eq!(
            odd[0].to_string(),
            "spec.completionMode: Unsupported value: \"Sharded\": supported values: \"NonIndexed\", \"Indexed\""
        );
        assert!(
            validate(&jobs(), &json!({"spec": {"completionMode": "Indexed", "completions": 2}}), None)
                .is_empty()
        );
    }
}
