//! HorizontalPodAutoscalers (autoscaling/v2 `horizontalpodautoscalers`): the row of the table and the registry strategy.

use serde_json::{Value, json};

use crate::sim::kinds::{
    ALL_VERBS, Kind, Scope, Strategy,
    printer::{AGE, Ages, Column, NAME, Printer, age, int, text},
    schema_of,
};

/// autoscaling/v2 `horizontalpodautoscalers`.
///
/// autoscaling/v2 only: kube-apiserver also serves autoscaling/v1 (kubectl 1.32's `autoscale`
/// posts v1), which would need a v1 <-> v2 conversion the store does not have
/// (docs/simulator.md). No metrics API is served, so the controller never has metrics.
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
    schema: schema_of::<k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler>,
    strategy: &HorizontalPodAutoscalerStrategy,
};

/// The HorizontalPodAutoscaler strategy.
#[derive(Debug)]
pub struct HorizontalPodAutoscalerStrategy;

impl Strategy for HorizontalPodAutoscalerStrategy {
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
