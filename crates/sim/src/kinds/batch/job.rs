//! Jobs (batch/v1 `jobs`): the Job strategy (pkg/registry/batch/job/strategy.go) and its row.
//!
//! Defaults as `SetDefaults_Job`, the generated selector, validation as
//! `pkg/apis/batch/validation/validation.go` — `validateJobSpec` (counts, completion mode,
//! restart policy) and `ValidateJobSpecUpdate` (`selector`, `completionMode` and the pod
//! template immutable, `validateCompletions` for elastic Indexed Jobs, `validatePodTemplateUpdate`
//! letting a suspended Job that never started change its template's labels, annotations, node
//! selector, tolerations, scheduling gates and node affinity). The controller is
//! `controllers/job.rs`.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use crate::{
    k8s::selector::field_text,
    kinds::{
        ALL_VERBS, Cause, Kind, Scope, Strategy,
        core::podspec::{
            default_template, drop_template_zero_values, normalize_template, validate_pod_spec,
            validate_template_ranges,
        },
        default_key,
        field::{
            IMMUTABLE, IS_NEGATIVE, duplicate, go_label_selector, go_value, invalid, not_supported, required,
            spec_non_negative, too_many,
        },
        object_mut,
        objectmeta::{qualified_name_errors, validate_labels},
        printer::{
            AGE, Ages, CONTAINERS, Column, IMAGES, NAME, Printer, age, containers_and_images,
            format_selector, human_duration, int,
        },
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
    strategy: &JobStrategy,
};

/// The Job strategy.
#[derive(Debug)]
pub struct JobStrategy;

impl Strategy for JobStrategy {
    fn tracks_generation(&self) -> bool {
        true
    }

    /// `jobStrategy.PrepareForCreate`: the generated selector and its labels.
    fn prepare_for_create(&self, object: &mut Value, _now: Timestamp) {
        crate::k8s::job::generate_selector(object);
    }

    /// batch/v1/defaults.go `SetDefaults_Job`.
    fn defaults(&self, object: &mut Value) {
        drop_template_zero_values(object);
        let Some(spec) = object_mut(object, "spec") else { return };
        if spec.get("completions").is_none_or(Value::is_null)
            && spec.get("parallelism").is_none_or(Value::is_null)
        {
            spec.insert("completions".into(), json!(1));
            spec.insert("parallelism".into(), json!(1));
        }
        default_key(spec, "parallelism", json!(1));
        if spec.get("backoffLimitPerIndex").is_some_and(|v| !v.is_null()) {
            default_key(spec, "backoffLimit", json!(i32::MAX));
        } else {
            default_key(spec, "backoffLimit", json!(6));
        }
        default_key(spec, "completionMode", json!("NonIndexed"));
        default_key(spec, "suspend", json!(false));
        let replacement = if spec.get("podFailurePolicy").is_some_and(|v| !v.is_null()) {
            "Failed"
        } else {
            "TerminatingOrFailed"
        };
        default_key(spec, "podReplacementPolicy", json!(replacement));
        default_template(spec);
    }

    fn canonicalize_quantities(&self, object: &mut Value) {
        normalize_template(object);
    }

    /// `ValidateJob` (`validateJobSpec`: counts, `ttlSecondsAfterFinished`, the template) and `ValidateJobUpdate` (`ValidateJobSpecUpdate`).
    fn validate(&self, object: &Value, old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        spec_non_negative(object, &["parallelism", "completions", "backoffLimit"], &mut causes);
        spec_non_negative(object, &["ttlSecondsAfterFinished"], &mut causes);
        // `ValidatePodTemplateSpec`'s labels: the generated `job-name` labels carry the name,
        // so a name over 63 characters is refused here.
        if let Some(labels) = object.pointer("/spec/template/metadata/labels").and_then(Value::as_object) {
            validate_labels(labels, "spec.template.labels", &mut causes);
        }
        if let Some(spec) = object.pointer("/spec/template/spec") {
            validate_pod_spec(spec, "spec.template.spec", &mut causes);
        } else {
            causes.push(required("spec.template.spec.containers", ""));
        }
        validate_completion_mode(&object["spec"], &mut causes);
        validate_backoff_limit_per_index(&object["spec"], &mut causes);
        if !object["spec"]["podFailurePolicy"].is_null() {
            validate_pod_failure_policy(&object["spec"], &mut causes);
        }
        validate_pod_replacement_policy(&object["spec"], &mut causes);
        validate_restart_policy(&object["spec"], &mut causes);
        validate_template_ranges(object, &mut causes);
        if let Some(old) = old {
            validate_spec_update(object, old, &mut causes);
        }
        causes
    }

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

/// `maxParallelismForIndexedJob` (pkg/apis/batch/validation/validation.go).
const MAX_PARALLELISM_FOR_INDEXED_JOB: i64 = 100_000;

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

/// `maxFailedIndexesForIndexedJob`, `completionsSoftLimit`, `parallelismLimitForHighCompletions`
/// and `maxFailedIndexesLimitForHighCompletions` (pkg/apis/batch/validation/validation.go).
const MAX_FAILED_INDEXES_FOR_INDEXED_JOB: i64 = 100_000;
const COMPLETIONS_SOFT_LIMIT: i64 = 100_000;
const LIMIT_FOR_HIGH_COMPLETIONS: i64 = 10_000;

/// `validateJobSpec` on `backoffLimitPerIndex` and `maxFailedIndexes`: not negative,
/// `maxFailedIndexes` only beside `backoffLimitPerIndex` and at most `completions`, both only for
/// an Indexed Job, and the limits of a Job of more than 100000 completions.
fn validate_backoff_limit_per_index(spec: &Value, causes: &mut Vec<Cause>) {
    let per_index = spec["backoffLimitPerIndex"].as_i64();
    let max_failed = spec["maxFailedIndexes"].as_i64();
    if let Some(value) = per_index.filter(|v| *v < 0) {
        causes.push(invalid("spec.backoffLimitPerIndex", &value.to_string(), IS_NEGATIVE));
    }
    if let Some(max) = max_failed {
        if max < 0 {
            causes.push(invalid("spec.maxFailedIndexes", &max.to_string(), IS_NEGATIVE));
        }
        if per_index.is_none() {
            causes.push(required("spec.backoffLimitPerIndex", "when maxFailedIndexes is specified"));
        }
    }
    if spec["completionMode"] == "Indexed" {
        let completions = spec["completions"].as_i64();
        if let Some(max) = max_failed.filter(|max| completions.is_some_and(|c| *max > c)) {
            causes.push(invalid(
                "spec.maxFailedIndexes",
                &max.to_string(),
                "must be less than or equal to completions",
            ));
        }
        if let Some(max) = max_failed.filter(|max| *max > MAX_FAILED_INDEXES_FOR_INDEXED_JOB) {
            let detail = format!("must be less than or equal to {MAX_FAILED_INDEXES_FOR_INDEXED_JOB}");
            causes.push(invalid("spec.maxFailedIndexes", &max.to_string(), &detail));
        }
        if completions.is_some_and(|c| c > COMPLETIONS_SOFT_LIMIT) && per_index.is_some() {
            let high = format!(
                "must be less than or equal to {LIMIT_FOR_HIGH_COMPLETIONS} when completions are above {COMPLETIONS_SOFT_LIMIT} and used with backoff limit per index"
            );
            if max_failed.is_none() {
                let detail = format!("must be specified when completions is above {COMPLETIONS_SOFT_LIMIT}");
                causes.push(required("spec.maxFailedIndexes", &detail));
            }
            if let Some(parallelism) =
                spec["parallelism"].as_i64().filter(|p| *p > LIMIT_FOR_HIGH_COMPLETIONS)
            {
                causes.push(invalid("spec.parallelism", &parallelism.to_string(), &high));
            }
            if let Some(max) = max_failed.filter(|max| *max > LIMIT_FOR_HIGH_COMPLETIONS) {
                causes.push(invalid("spec.maxFailedIndexes", &max.to_string(), &high));
            }
        }
    } else {
        for (field, value) in
            [("spec.backoffLimitPerIndex", per_index), ("spec.maxFailedIndexes", max_failed)]
        {
            if let Some(value) = value {
                causes.push(invalid(field, &value.to_string(), "requires indexed completion mode"));
            }
        }
    }
}

/// `validateJobSpec`'s restart policy: `Always` (or none) is refused as Required, anything but
/// `OnFailure`/`Never` as NotSupported, and a Job with a `podFailurePolicy` takes `Never` only.
fn validate_restart_policy(spec: &Value, causes: &mut Vec<Cause>) {
    const PATH: &str = "spec.template.spec.restartPolicy";
    let policy = &spec["template"]["spec"]["restartPolicy"];
    match policy.as_str() {
        None | Some("" | "Always") => causes.push(required(PATH, r#"valid values: "OnFailure", "Never""#)),
        Some("OnFailure" | "Never") => {
            if !spec["podFailurePolicy"].is_null() && policy != "Never" {
                causes.push(invalid(
                    PATH,
                    &go_value(policy),
                    r#"only "Never" is supported when podFailurePolicy is specified"#,
                ));
            }
        }
        Some(_) => causes.push(not_supported(PATH, policy, &["OnFailure", "Never"])),
    }
}

/// `maxPodFailurePolicyRules`, `maxPodFailurePolicyOnExitCodesValues` and
/// `maxPodFailurePolicyOnPodConditionsPatterns` (pkg/apis/batch/validation/validation.go).
const MAX_POD_FAILURE_POLICY_RULES: usize = 20;
const MAX_ON_EXIT_CODES_VALUES: usize = 255;
const MAX_ON_POD_CONDITIONS_PATTERNS: usize = 20;
/// `supportedPodFailurePolicyActions`, sorted as `sets.List` lists them.
const POD_FAILURE_POLICY_ACTIONS: &[&str] = &["Count", "FailIndex", "FailJob", "Ignore"];

/// `validatePodFailurePolicy` and `validatePodFailurePolicyRule`: at most 20 rules, each with a
/// known action (FailIndex only beside `backoffLimitPerIndex`) and exactly one of `onExitCodes`
/// and `onPodConditions`.
fn validate_pod_failure_policy(spec: &Value, causes: &mut Vec<Cause>) {
    let rules_path = "spec.podFailurePolicy.rules";
    let rules = spec["podFailurePolicy"]["rules"].as_array().map(Vec::as_slice).unwrap_or_default();
    if rules.len() > MAX_POD_FAILURE_POLICY_RULES {
        causes.push(too_many(rules_path, rules.len(), MAX_POD_FAILURE_POLICY_RULES));
    }
    let container_names: Vec<&str> = ["containers", "initContainers"]
        .iter()
        .flat_map(|list| spec["template"]["spec"][list].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        let rule_path = format!("{rules_path}[{i}]");
        let action_path = format!("{rule_path}.action");
        match rule["action"].as_str() {
            None | Some("") => causes
                .push(required(action_path, r#"valid values: ["Count" "FailIndex" "FailJob" "Ignore"]"#)),
            Some("FailIndex") => {
                if spec["backoffLimitPerIndex"].is_null() {
                    causes.push(invalid(
                        action_path,
                        "\"FailIndex\"",
                        "requires the backoffLimitPerIndex to be set",
                    ));
                }
            }
            Some(action) if POD_FAILURE_POLICY_ACTIONS.contains(&action) => {}
            Some(_) => causes.push(not_supported(action_path, &rule["action"], POD_FAILURE_POLICY_ACTIONS)),
        }
        let on_exit_codes = &rule["onExitCodes"];
        let on_conditions = rule["onPodConditions"].as_array().filter(|list| !list.is_empty());
        if !on_exit_codes.is_null() {
            validate_on_exit_codes(
                on_exit_codes,
                &format!("{rule_path}.onExitCodes"),
                &container_names,
                causes,
            );
        }
        if let Some(patterns) = on_conditions {
            validate_on_pod_conditions(patterns, &format!("{rule_path}.onPodConditions"), causes);
        }
        // `field.OmitValueType{}`: the value is left out of the message.
        match (on_exit_codes.is_null(), on_conditions.is_none()) {
            (false, false) => causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: specifying both OnExitCodes and OnPodConditions is not supported"
                    .into(),
                field: rule_path,
            }),
            (true, true) => causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: "Invalid value: specifying one of OnExitCodes and OnPodConditions is required"
                    .into(),
                field: rule_path,
            }),
            _ => {}
        }
    }
}

/// `validatePodFailurePolicyRuleOnExitCodes`: the operator, a container of the template, 1 to
/// 255 distinct values in increasing order, no 0 with `In`.
fn validate_on_exit_codes(
    requirement: &Value,
    path: &str,
    container_names: &[&str],
    causes: &mut Vec<Cause>,
) {
    let operator = &requirement["operator"];
    match operator.as_str() {
        None | Some("") => {
            causes.push(required(format!("{path}.operator"), r#"valid values: ["In" "NotIn"]"#))
        }
        Some("In" | "NotIn") => {}
        Some(_) => causes.push(not_supported(format!("{path}.operator"), operator, &["In", "NotIn"])),
    }
    if let Some(name) = requirement["containerName"].as_str()
        && !container_names.contains(&name)
    {
        causes.push(invalid(
            format!("{path}.containerName"),
            &format!("{name:?}"),
            "must be one of the container or initContainer names in the pod template",
        ));
    }
    let values_path = format!("{path}.values");
    let values: Vec<i64> =
        requirement["values"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    // `%#v` of the `[]int32`.
    let shown = |values: &[i64]| -> String {
        if values.is_empty() && requirement["values"].is_null() {
            return "[]int32(nil)".into();
        }
        let parts: Vec<String> = values.iter().map(i64::to_string).collect();
        format!("[]int32{{{}}}", parts.join(", "))
    };
    if values.is_empty() {
        causes.push(invalid(&values_path, &shown(&values), "at least one value is required"));
    } else if values.len() > MAX_ON_EXIT_CODES_VALUES {
        causes.push(too_many(&values_path, values.len(), MAX_ON_EXIT_CODES_VALUES));
    }
    let mut seen = BTreeSet::new();
    for (j, value) in values.iter().enumerate() {
        let value_path = format!("{values_path}[{j}]");
        if operator == "In" && *value == 0 {
            causes.push(invalid(&value_path, "0", "must not be 0 for the In operator"));
        }
        if !seen.insert(*value) {
            causes.push(duplicate(&value_path, &value.to_string()));
        }
    }
    if values.windows(2).any(|pair| pair[0] > pair[1]) {
        causes.push(invalid(&values_path, &shown(&values), "must be ordered"));
    }
}

/// `validatePodFailurePolicyRuleOnPodConditions`: at most 20 patterns, each a qualified
/// condition type and a status True, False or Unknown.
fn validate_on_pod_conditions(patterns: &[Value], path: &str, causes: &mut Vec<Cause>) {
    if patterns.len() > MAX_ON_POD_CONDITIONS_PATTERNS {
        causes.push(too_many(path, patterns.len(), MAX_ON_POD_CONDITIONS_PATTERNS));
    }
    for (j, pattern) in patterns.iter().enumerate() {
        let type_ = pattern["type"].as_str().unwrap_or_default();
        for error in qualified_name_errors(type_) {
            causes.push(invalid(format!("{path}[{j}].type"), &format!("{type_:?}"), &error));
        }
        let status_path = format!("{path}[{j}].status");
        match pattern["status"].as_str() {
            None | Some("") => {
                causes.push(required(status_path, r#"valid values: ["False" "True" "Unknown"]"#))
            }
            Some("False" | "True" | "Unknown") => {}
            Some(_) => {
                causes.push(not_supported(status_path, &pattern["status"], &["False", "True", "Unknown"]))
            }
        }
    }
}

/// `validatePodReplacementPolicy`: with a `podFailurePolicy` only `Failed`.
fn validate_pod_replacement_policy(spec: &Value, causes: &mut Vec<Cause>) {
    let policy = &spec["podReplacementPolicy"];
    let Some(text) = policy.as_str() else { return };
    let path = "spec.podReplacementPolicy";
    if !spec["podFailurePolicy"].is_null() {
        if text != "Failed" {
            causes.push(not_supported(path, policy, &["Failed"]));
        }
    } else if !["Failed", "TerminatingOrFailed"].contains(&text) {
        causes.push(not_supported(path, policy, &["Failed", "TerminatingOrFailed"]));
    }
}

/// `ValidateJobSpecUpdate` in upstream's order: completions, selector, template, completionMode,
/// podFailurePolicy, backoffLimitPerIndex.
fn validate_spec_update(object: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let (spec, old_spec) = (&object["spec"], &old["spec"]);
    // `validateCompletions`: an Indexed Job may change completions together with parallelism.
    if spec["completions"] != old_spec["completions"] {
        let indexed = spec["completionMode"] == json!("Indexed");
        if !indexed {
            causes.push(invalid("spec.completions", &go_value(&spec["completions"]), IMMUTABLE));
        } else if !spec["completions"].is_null() && spec["completions"] != spec["parallelism"] {
            causes.push(invalid(
                "spec.completions",
                &go_value(&spec["completions"]),
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    }
    if spec["selector"] != old_spec["selector"] {
        let shown = if spec["selector"].is_null() {
            "null".to_string()
        } else {
            go_label_selector(&spec["selector"])
        };
        causes.push(invalid("spec.selector", &shown, IMMUTABLE));
    }
    if !same_template(spec, old_spec, old) {
        // Upstream prints the whole internal `core.PodTemplateSpec` with Go's `%#v` here;
        // the simulator names the type and elides the dump.
        causes.push(invalid("spec.template", "core.PodTemplateSpec{…}", IMMUTABLE));
    }
    if spec["completionMode"] != old_spec["completionMode"] {
        causes.push(invalid("spec.completionMode", &go_value(&spec["completionMode"]), IMMUTABLE));
    }
    if spec["podFailurePolicy"] != old_spec["podFailurePolicy"] {
        // Upstream prints the internal `batch.PodFailurePolicy` with `%#v` (pointers as
        // addresses); the simulator names the type and elides the dump.
        let shown = if spec["podFailurePolicy"].is_null() { "null" } else { "batch.PodFailurePolicy{…}" };
        causes.push(invalid("spec.podFailurePolicy", shown, IMMUTABLE));
    }
    if spec["backoffLimitPerIndex"] != old_spec["backoffLimitPerIndex"] {
        causes.push(invalid(
            "spec.backoffLimitPerIndex",
            &go_value(&spec["backoffLimitPerIndex"]),
            IMMUTABLE,
        ));
    }
}

/// `validatePodTemplateUpdate`: with `AllowMutableSchedulingDirectives` (a suspended Job that
/// has not started: `spec.suspend` and no `status.startTime`), the scheduling directives may
/// change; everything else in the template may not.
fn same_template(spec: &Value, old_spec: &Value, old: &Value) -> bool {
    let template = &spec["template"];
    let mut old_template = old_spec["template"].clone();
    let mutable_directives = old_spec["suspend"] == json!(true) && old["status"]["startTime"].is_null();
    if mutable_directives && old_template.is_object() {
        for (section, field) in [
            ("metadata", "labels"),
            ("metadata", "annotations"),
            ("spec", "nodeSelector"),
            ("spec", "tolerations"),
            ("spec", "schedulingGates"),
        ] {
            set_or_remove(&mut old_template, section, field, &template[section][field]);
        }
        // Only node affinity is mutable; pod (anti-)affinity stays as it was.
        let mut affinity = old_template["spec"]["affinity"].clone();
        if affinity.is_object() || !template["spec"]["affinity"]["nodeAffinity"].is_null() {
            if !affinity.is_object() {
                affinity = json!({});
            }
            match &template["spec"]["affinity"]["nodeAffinity"] {
                Value::Null => {
                    affinity.as_object_mut().map(|a| a.remove("nodeAffinity"));
                }
                node_affinity => affinity["nodeAffinity"] = node_affinity.clone(),
            }
            let empty = affinity.as_object().is_some_and(serde_json::Map::is_empty);
            let wanted = if empty && template["spec"]["affinity"].is_null() { Value::Null } else { affinity };
            set_or_remove(&mut old_template, "spec", "affinity", &wanted);
        }
    }
    *template == old_template
}

/// Sets `value[section][field]` to `new`, or removes it when `new` is null.
fn set_or_remove(value: &mut Value, section: &str, field: &str, new: &Value) {
    if new.is_null() {
        if let Some(map) = value.get_mut(section).and_then(Value::as_object_mut) {
            map.remove(field);
        }
    } else {
        if !value[section].is_object() {
            value[section] = json!({});
        }
        value[section][field] = new.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The causes of updating `old` to `object`, two Jobs, by `ValidateJobSpecUpdate`.
    fn messages(_kind: &str, object: &Value, old: &Value) -> Vec<String> {
        let mut causes = Vec::new();
        validate_spec_update(object, old, &mut causes);
        causes.iter().map(Cause::to_string).collect()
    }

    /// `validateJobSpec`'s completion mode and per-index rules on `object`.
    fn completion_causes(object: &Value) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_completion_mode(&object["spec"], &mut causes);
        validate_backoff_limit_per_index(&object["spec"], &mut causes);
        causes
    }

    fn job() -> Value {
        json!({"spec": {"completions": 2, "parallelism": 1, "completionMode": "NonIndexed",
            "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
            "template": {"metadata": {"labels": {"app": "train"}},
                "spec": {"containers": [{"name": "main", "image": "cuda:12"}], "restartPolicy": "Never"}}}})
    }

    #[test]
    fn a_jobs_template_selector_mode_and_completions_are_fixed() {
        let old = job();
        assert!(messages("Job", &old, &old).is_empty());
        assert!(JobStrategy.validate(&old, None).is_empty());
        let mut changed = old.clone();
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("cuda:13");
        changed["spec"]["completions"] = json!(3);
        changed["spec"]["selector"]["matchLabels"]["x"] = json!("y");
        changed["spec"]["completionMode"] = json!("Indexed");
        assert_eq!(
            messages("Job", &changed, &old),
            [
                "spec.completions: Invalid value: 3: can only be modified in tandem with spec.parallelism",
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"batch.kubernetes.io/controller-uid\":\"u1\", \"x\":\"y\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable",
                "spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable",
                "spec.completionMode: Invalid value: \"Indexed\": field is immutable",
            ]
        );
        let mut more = old.clone();
        more["spec"]["completions"] = json!(4);
        assert_eq!(messages("Job", &more, &old), ["spec.completions: Invalid value: 4: field is immutable"]);
        // Parallelism and suspend are not part of the template: free to change.
        let mut scaled = old.clone();
        scaled["spec"]["parallelism"] = json!(2);
        scaled["spec"]["suspend"] = json!(true);
        assert!(messages("Job", &scaled, &old).is_empty());
    }

    #[test]
    fn a_suspended_job_that_never_started_may_change_its_scheduling_directives_only() {
        let mut old = job();
        old["spec"]["suspend"] = json!(true);
        let mut moved = old.clone();
        moved["spec"]["template"]["metadata"]["labels"]["queue"] = json!("gpu");
        moved["spec"]["template"]["spec"]["nodeSelector"] = json!({"nvidia.com/gpu.present": "true"});
        moved["spec"]["template"]["spec"]["tolerations"] =
            json!([{"key": "nvidia.com/gpu", "operator": "Exists"}]);
        moved["spec"]["template"]["spec"]["affinity"] = json!({"nodeAffinity": {"x": 1}});
        assert!(messages("Job", &moved, &old).is_empty());
        let mut imaged = moved.clone();
        imaged["spec"]["template"]["spec"]["containers"][0]["image"] = json!("cuda:13");
        assert_eq!(
            messages("Job", &imaged, &old),
            ["spec.template: Invalid value: core.PodTemplateSpec{…}: field is immutable"]
        );
        let mut pod_affinity = old.clone();
        pod_affinity["spec"]["template"]["spec"]["affinity"] = json!({"podAffinity": {"x": 1}});
        assert_eq!(messages("Job", &pod_affinity, &old).len(), 1);
        // Once it started, the directives are fixed too.
        old["status"]["startTime"] = json!("2026-01-01T00:00:00Z");
        assert_eq!(messages("Job", &moved, &old).len(), 1);
    }

    /// Cases of `TestValidateJob` (pkg/apis/batch/validation/validation_test.go) on
    /// `podFailurePolicy`, with upstream's field paths and texts.
    #[test]
    fn a_pod_failure_policy_is_validated_as_upstream() {
        let with_policy = |rules: Value, restart: &str| {
            let mut job = job();
            job["spec"]["podFailurePolicy"] = json!({"rules": rules});
            job["spec"]["podReplacementPolicy"] = json!("Failed");
            job["spec"]["template"]["spec"]["restartPolicy"] = json!(restart);
            job
        };
        let texts = |job: &Value| -> Vec<String> {
            JobStrategy.validate(job, None).iter().map(Cause::to_string).collect()
        };
        let good = with_policy(
            json!([{"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [1, 2, 3]}},
                   {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]},
                   {"action": "Count", "onExitCodes": {"operator": "NotIn", "values": [0, 5]}}]),
            "Never",
        );
        assert!(texts(&good).is_empty(), "{:?}", texts(&good));
        let bad = with_policy(
            json!([{"action": "FailJob", "onExitCodes": {"containerName": "other", "operator": "In", "values": [0, 3, 3, 1]}},
                   {"action": "", "onPodConditions": [{"type": "Bad Type", "status": "Maybe"}]},
                   {"action": "UnknownAction", "onExitCodes": {"operator": "Out", "values": []}},
                   {"action": "FailIndex", "onPodConditions": [{"type": "DisruptionTarget"}]},
                   {"action": "Ignore"},
                   {"action": "Count", "onExitCodes": {"operator": "In", "values": [1]},
                    "onPodConditions": [{"type": "DisruptionTarget", "status": "True"}]}]),
            "OnFailure",
        );
        assert_eq!(
            texts(&bad),
            [
                r#"spec.podFailurePolicy.rules[0].onExitCodes.containerName: Invalid value: "other": must be one of the container or initContainer names in the pod template"#,
                "spec.podFailurePolicy.rules[0].onExitCodes.values[0]: Invalid value: 0: must not be 0 for the In operator",
                "spec.podFailurePolicy.rules[0].onExitCodes.values[2]: Duplicate value: 3",
                "spec.podFailurePolicy.rules[0].onExitCodes.values: Invalid value: []int32{0, 3, 3, 1}: must be ordered",
                r#"spec.podFailurePolicy.rules[1].action: Required value: valid values: ["Count" "FailIndex" "FailJob" "Ignore"]"#,
                r#"spec.podFailurePolicy.rules[1].onPodConditions[0].type: Invalid value: "Bad Type": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"#,
                r#"spec.podFailurePolicy.rules[1].onPodConditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown""#,
                r#"spec.podFailurePolicy.rules[2].action: Unsupported value: "UnknownAction": supported values: "Count", "FailIndex", "FailJob", "Ignore""#,
                r#"spec.podFailurePolicy.rules[2].onExitCodes.operator: Unsupported value: "Out": supported values: "In", "NotIn""#,
                "spec.podFailurePolicy.rules[2].onExitCodes.values: Invalid value: []int32{}: at least one value is required",
                r#"spec.podFailurePolicy.rules[3].action: Invalid value: "FailIndex": requires the backoffLimitPerIndex to be set"#,
                r#"spec.podFailurePolicy.rules[3].onPodConditions[0].status: Required value: valid values: ["False" "True" "Unknown"]"#,
                "spec.podFailurePolicy.rules[4]: Invalid value: specifying one of OnExitCodes and OnPodConditions is required",
                "spec.podFailurePolicy.rules[5]: Invalid value: specifying both OnExitCodes and OnPodConditions is not supported",
                r#"spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when podFailurePolicy is specified"#,
            ]
        );
        let mut replaced = good.clone();
        replaced["spec"]["podReplacementPolicy"] = json!("TerminatingOrFailed");
        assert_eq!(
            texts(&replaced),
            [
                r#"spec.podReplacementPolicy: Unsupported value: "TerminatingOrFailed": supported values: "Failed""#
            ]
        );
        let mut always = job();
        always["spec"]["template"]["spec"]["restartPolicy"] = json!("Always");
        assert_eq!(
            texts(&always),
            [r#"spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never""#]
        );
        let mut changed = good.clone();
        changed["spec"]["podFailurePolicy"]["rules"][0]["action"] = json!("Count");
        assert_eq!(
            messages("Job", &changed, &good),
            ["spec.podFailurePolicy: Invalid value: batch.PodFailurePolicy{…}: field is immutable"]
        );
    }

    #[test]
    fn an_indexed_job_needs_completions_and_bounded_parallelism() {
        let causes =
            completion_causes(&json!({"spec": {"completionMode": "Indexed", "parallelism": 200000}}));
        let texts: Vec<String> = causes.iter().map(Cause::to_string).collect();
        assert_eq!(
            texts,
            [
                "spec.completions: Required value: when completion mode is Indexed",
                "spec.parallelism: Invalid value: 200000: must be less than or equal to 100000 when completion mode is Indexed"
            ]
        );
        let odd = completion_causes(&json!({"spec": {"completionMode": "Sharded", "completions": 2}}));
        assert_eq!(
            odd[0].to_string(),
            "spec.completionMode: Unsupported value: \"Sharded\": supported values: \"NonIndexed\", \"Indexed\""
        );
        assert!(
            completion_causes(&json!({"spec": {"completionMode": "Indexed", "completions": 2}})).is_empty()
        );
    }

    /// Cases of `TestValidateJob` (pkg/apis/batch/validation/validation_test.go) on
    /// `backoffLimitPerIndex` and `maxFailedIndexes`.
    #[test]
    fn a_per_index_backoff_limit_is_validated_as_upstream() {
        let texts = |spec: Value| -> Vec<String> {
            completion_causes(&json!({"spec": spec})).iter().map(Cause::to_string).collect()
        };
        let indexed = |extra: Value| {
            let mut spec = json!({"completionMode": "Indexed", "completions": 10});
            spec.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            spec
        };
        assert!(texts(indexed(json!({"backoffLimitPerIndex": 1, "maxFailedIndexes": 10}))).is_empty());
        assert_eq!(
            texts(indexed(json!({"maxFailedIndexes": 1}))),
            ["spec.backoffLimitPerIndex: Required value: when maxFailedIndexes is specified"]
        );
        assert_eq!(
            texts(indexed(json!({"backoffLimitPerIndex": -1, "maxFailedIndexes": 11}))),
            [
                "spec.backoffLimitPerIndex: Invalid value: -1: must be greater than or equal to 0",
                "spec.maxFailedIndexes: Invalid value: 11: must be less than or equal to completions"
            ]
        );
        assert_eq!(
            texts(json!({"completionMode": "NonIndexed", "backoffLimitPerIndex": 1, "maxFailedIndexes": 1})),
            [
                "spec.backoffLimitPerIndex: Invalid value: 1: requires indexed completion mode",
                "spec.maxFailedIndexes: Invalid value: 1: requires indexed completion mode"
            ]
        );
        assert_eq!(
            texts(json!({"completionMode": "Indexed", "completions": 100_001, "parallelism": 10_001,
                         "backoffLimitPerIndex": 1})),
            [
                "spec.maxFailedIndexes: Required value: must be specified when completions is above 100000",
                "spec.parallelism: Invalid value: 10001: must be less than or equal to 10000 when completions are above 100000 and used with backoff limit per index"
            ]
        );
        // `ValidateJobSpecUpdate`: the per-index limit is immutable.
        let old = json!({"spec": indexed(json!({"backoffLimitPerIndex": 1}))});
        let changed = json!({"spec": indexed(json!({"backoffLimitPerIndex": 2}))});
        assert_eq!(
            messages("Job", &changed, &old),
            ["spec.backoffLimitPerIndex: Invalid value: 2: field is immutable"]
        );
    }
}
