//! HorizontalPodAutoscalers (autoscaling/v2): the HPA strategy and its row.
//!
//! Upstream: pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go,
//! `SetDefaults_HorizontalPodAutoscaler`, `ValidateHorizontalPodAutoscaler`. The controller is
//! `controllers/hpa.rs`.

use serde_json::{Value, json};

use crate::kinds::{
    ALL_VERBS, Cause, Kind, Scope, Strategy,
    field::{invalid, required},
    printer::{AGE, Ages, Column, NAME, Printer, age, int, text},
};

/// autoscaling/v2 `horizontalpodautoscalers`.
///
/// Stored as v2 and also served as autoscaling/v1 (`kinds::ALSO_SERVED`, the conversion in
/// [`super::conversion`]), as kube-apiserver serves both (kubectl 1.32's `autoscale` posts v1).
/// No metrics API is served, so the controller never has metrics.
pub static KIND: Kind = Kind {
    group: "autoscaling",
    version: "v2",
    kind: "HorizontalPodAutoscaler",
    plural: "horizontalpodautoscalers",
    scope: Scope::Namespaced,
    short_names: &["hpa"],
    categories: &["all"],
    verbs: ALL_VERBS,
    subresources: &["status"],
    strategy: &HorizontalPodAutoscalerStrategy,
};

/// The HorizontalPodAutoscaler strategy.
#[derive(Debug)]
pub struct HorizontalPodAutoscalerStrategy;

impl Strategy for HorizontalPodAutoscalerStrategy {
    fn defaults(&self, object: &mut Value) {
        default_horizontal_pod_autoscaler(object);
    }

    fn validate(&self, object: &Value, _old: Option<&Value>) -> Vec<Cause> {
        let mut causes = Vec::new();
        validate_horizontal_pod_autoscaler(&object["spec"], &mut causes);
        causes
    }

    fn printer(&self) -> &'static Printer {
        &PRINTER
    }
}

#[rustfmt::skip]
static PRINTER: Printer = Printer { row: horizontalpodautoscaler_row, columns: &[
    NAME,
    Column("Reference", "string", 0, "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count."),
    Column("Targets", "string", 0, "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond. If not set, the default metric will be set to 80% average CPU utilization."),
    Column("MinPods", "string", 0, "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available."),
    Column("MaxPods", "string", 0, "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas."),
    Column("Replicas", "string", 0, "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler."),
    AGE,
] };

/// printers.go `printHorizontalPodAutoscaler`: REFERENCE `Kind/name`, TARGETS from
/// `formatHPAMetrics` (at most two, then `+ N more...`; `<unknown>` for a metric without a
/// current value), MINPODS `<unset>` without a minimum.
fn horizontalpodautoscaler_row(hpa: &Value, now: Ages) -> Vec<Value> {
    let spec = &hpa["spec"];
    let reference =
        format!("{}/{}", text(&spec["scaleTargetRef"]["kind"]), text(&spec["scaleTargetRef"]["name"]));
    let min_pods = spec["minReplicas"].as_i64().map_or_else(|| "<unset>".to_string(), |min| min.to_string());
    vec![
        hpa["metadata"]["name"].clone(),
        json!(reference),
        json!(hpa_metrics(spec, &hpa["status"])),
        json!(min_pods),
        json!(int(&spec["maxReplicas"])),
        json!(int(&hpa["status"]["currentReplicas"])),
        age(hpa, now),
    ]
}

/// printers.go `formatHPAMetrics`.
fn hpa_metrics(spec: &Value, status: &Value) -> String {
    let specs = spec["metrics"].as_array().map(Vec::as_slice).unwrap_or_default();
    if specs.is_empty() {
        return "<none>".to_string();
    }
    let statuses = status["currentMetrics"].as_array().map(Vec::as_slice).unwrap_or_default();
    let unknown = || "<unknown>".to_string();
    let percent = |value: &Value| value.as_i64().map(|v| format!("{v}%"));
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, metric)| {
            let current = statuses.get(i);
            let source = |key: &str| current.map(|c| &c[key]).filter(|s| s.is_object());
            match text(&metric["type"]) {
                kind @ ("External" | "Object") => {
                    let key = if kind == "External" { "external" } else { "object" };
                    let target = &metric[key]["target"];
                    if target["averageValue"].is_null() {
                        let now =
                            source(key).map_or_else(unknown, |s| text(&s["current"]["value"]).to_string());
                        format!("{now}/{}", text(&target["value"]))
                    } else {
                        let now = source(key)
                            .and_then(|s| s["current"]["averageValue"].as_str().map(str::to_string))
                            .unwrap_or_else(unknown);
                        format!("{now}/{} (avg)", text(&target["averageValue"]))
                    }
                }
                "Pods" => {
                    let now = source("pods")
                        .map_or_else(unknown, |s| text(&s["current"]["averageValue"]).to_string());
                    format!("{now}/{}", text(&metric["pods"]["target"]["averageValue"]))
                }
                kind @ ("Resource" | "ContainerResource") => {
                    let key = if kind == "Resource" { "resource" } else { "containerResource" };
                    let target = &metric[key]["target"];
                    let name = text(&metric[key]["name"]);
                    if target["averageValue"].is_null() {
                        let now = source(key)
                            .and_then(|s| percent(&s["current"]["averageUtilization"]))
                            .unwrap_or_else(unknown);
                        let wanted =
                            percent(&target["averageUtilization"]).unwrap_or_else(|| "<auto>".to_string());
                        format!("{name}: {now}/{wanted}")
                    } else {
                        let now = source(key)
                            .map_or_else(unknown, |s| text(&s["current"]["averageValue"]).to_string());
                        format!("{name}: {now}/{}", text(&target["averageValue"]))
                    }
                }
                _ => "<unknown type>".to_string(),
            }
        })
        .collect();
    if list.len() > 2 {
        format!("{} + {} more...", list[..2].join(", "), list.len() - 2)
    } else {
        list.join(", ")
    }
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
            causes.push(required(format!("{path}.type"), "must specify a metric source type"));
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
                format!("{path}.{source}"),
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
                    causes.push(required(format!("{target_path}.type"), "must specify a metric target type"))
                }
                "Utilization" | "Value" | "AverageValue" => {}
                other => causes.push(invalid(
                    format!("{target_path}.type"),
                    &format!("{other:?}"),
                    "must be either Utilization, Value, or AverageValue",
                )),
            }
            if let Some(utilization) = target["averageUtilization"].as_i64().filter(|u| *u < 1) {
                causes.push(invalid(
                    format!("{target_path}.averageUtilization"),
                    &utilization.to_string(),
                    "must be greater than 0",
                ));
            }
        }
    }
}
