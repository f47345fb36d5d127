//! autoscaling/v1 HorizontalPodAutoscalers as views of the stored autoscaling/v2 objects (pkg/apis/autoscaling/v1/conversion.go).
//!
//! kube-apiserver stores HPAs once and serves them as v1 and v2. v1 has one metric, the
//! average CPU utilization (`targetCPUUtilizationPercentage`, `currentCPUUtilizationPercentage`);
//! what v2 says beyond it travels in annotations: the other metrics
//! (`autoscaling.alpha.kubernetes.io/metrics`), the behavior (`…/behavior`), the status
//! conditions (`…/conditions`) and the other current metrics (`…/current-metrics`), each as
//! JSON. [`to_v2`] is `Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler`
//! for the simulator's v2 store, [`to_v1`] its reverse. The annotations' JSON is written from
//! the v2 shape (upstream marshals its internal types, whose metrics differ from v2's in
//! naming: an annotation of other metrics is a simulator approximation).

use serde_json::{Map, Value, json};

/// `autoscaling.MetricSpecsAnnotation`.
const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// `autoscaling.BehaviorSpecsAnnotation`.
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// `autoscaling.HorizontalPodAutoscalerConditionsAnnotation`.
const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// `autoscaling.MetricStatusesAnnotation`.
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";

/// True for the CPU utilization metric v1 carries in its own field.
fn is_cpu_utilization(metric: &Value) -> bool {
    metric["type"] == "Resource"
        && metric["resource"]["name"] == "cpu"
        && metric["resource"]["target"]["type"] == "Utilization"
        && metric["resource"]["target"]["averageUtilization"].is_i64()
}

/// Takes the JSON list in annotation `key` out of `annotations`.
fn take_json(annotations: &mut Map<String, Value>, key: &str) -> Option<Value> {
    let text = annotations.remove(key)?;
    serde_json::from_str(text.as_str()?).ok()
}

/// A v1 object (or the body of a v1 write) as the v2 object the store keeps.
pub fn to_v2(v1: &Value) -> Value {
    let mut object = v1.clone();
    let (mut annotations, spec, mut v2_spec) = split(&mut object, "autoscaling/v2");
    let mut metrics: Vec<Value> = Vec::new();
    if let Some(percent) = spec.get("targetCPUUtilizationPercentage").filter(|p| p.is_i64()) {
        metrics.push(json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": percent}}}));
    }
    if let Some(Value::Array(others)) = take_json(&mut annotations, METRICS) {
        metrics.extend(others);
    }
    if !metrics.is_empty() {
        v2_spec.insert("metrics".into(), Value::Array(metrics));
    }
    if let Some(behavior) = take_json(&mut annotations, BEHAVIOR) {
        v2_spec.insert("behavior".into(), behavior);
    }
    object["spec"] = Value::Object(v2_spec);
    if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut) {
        let cpu = status.remove("currentCPUUtilizationPercentage");
        let mut current: Vec<Value> = Vec::new();
        if let Some(percent) = cpu.filter(Value::is_i64) {
            current.push(json!({"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": percent}}}));
        }
        if let Some(Value::Array(others)) = take_json(&mut annotations, CURRENT_METRICS) {
            current.extend(others);
        }
        if !current.is_empty() {
            status.insert("currentMetrics".into(), Value::Array(current));
        }
        if let Some(conditions) = take_json(&mut annotations, CONDITIONS) {
            status.insert("conditions".into(), conditions);
        }
    }
    set_annotations(&mut object, annotations);
    object
}

/// A stored v2 object as v1 serves it.
pub fn to_v1(v2: &Value) -> Value {
    let mut object = v2.clone();
    let (mut annotations, spec, mut v1_spec) = split(&mut object, "autoscaling/v1");
    let mut others = Vec::new();
    for metric in spec.get("metrics").and_then(Value::as_array).into_iter().flatten() {
        if is_cpu_utilization(metric) && !v1_spec.contains_key("targetCPUUtilizationPercentage") {
            v1_spec.insert(
                "targetCPUUtilizationPercentage".into(),
                metric["resource"]["target"]["averageUtilization"].clone(),
            );
        } else {
            others.push(metric.clone());
        }
    }
    if !others.is_empty() {
        annotations.insert(METRICS.into(), json!(Value::Array(others).to_string()));
    }
    if let Some(behavior) = spec.get("behavior").filter(|b| !b.is_null()) {
        annotations.insert(BEHAVIOR.into(), json!(behavior.to_string()));
    }
    object["spec"] = Value::Object(v1_spec);
    if let Some(status) = object.get_mut("status").and_then(Value::as_object_mut) {
        let mut others = Vec::new();
        for metric in status.remove("currentMetrics").and_then(|m| m.as_array().cloned()).unwrap_or_default()
        {
            let cpu = metric["type"] == "Resource"
                && metric["resource"]["name"] == "cpu"
                && metric["resource"]["current"]["averageUtilization"].is_i64();
            if cpu && !status.contains_key("currentCPUUtilizationPercentage") {
                status.insert(
                    "currentCPUUtilizationPercentage".into(),
                    metric["resource"]["current"]["averageUtilization"].clone(),
                );
            } else {
                others.push(metric);
            }
        }
        if !others.is_empty() {
            annotations.insert(CURRENT_METRICS.into(), json!(Value::Array(others).to_string()));
        }
        if let Some(conditions) =
            status.remove("conditions").filter(|c| c.as_array().is_some_and(|l| !l.is_empty()))
        {
            annotations.insert(CONDITIONS.into(), json!(conditions.to_string()));
        }
        // v1's status always has `currentReplicas` and `desiredReplicas` (no omitempty).
        for key in ["currentReplicas", "desiredReplicas"] {
            status.entry(key).or_insert(json!(0));
        }
    }
    set_annotations(&mut object, annotations);
    object
}

/// Sets `object`'s apiVersion and takes out what both directions start from: its annotations,
/// its spec, and a new spec with the fields both versions share (`scaleTargetRef`,
/// `minReplicas`, `maxReplicas`).
fn split(
    object: &mut Value,
    api_version: &str,
) -> (Map<String, Value>, Map<String, Value>, Map<String, Value>) {
    object["apiVersion"] = json!(api_version);
    let annotations = object["metadata"]["annotations"].as_object().cloned().unwrap_or_default();
    let spec = object["spec"].as_object_mut().map(std::mem::take).unwrap_or_default();
    let shared = ["scaleTargetRef", "minReplicas", "maxReplicas"]
        .into_iter()
        .filter_map(|key| spec.get(key).map(|value| (key.to_string(), value.clone())))
        .collect();
    (annotations, spec, shared)
}

/// Writes `annotations` back, or drops the key when none are left (`omitempty`).
fn set_annotations(object: &mut Value, annotations: Map<String, Value>) {
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else { return };
    if annotations.is_empty() {
        metadata.remove("annotations");
    } else {
        metadata.insert("annotations".into(), Value::Object(annotations));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_target_is_v1s_own_field_and_the_rest_travels_in_annotations() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 5, "targetCPUUtilizationPercentage": 50}});
        let v2 = to_v2(&v1);
        assert_eq!(v2["apiVersion"], "autoscaling/v2");
        assert_eq!(
            v2["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}])
        );
        assert!(v2["spec"].get("targetCPUUtilizationPercentage").is_none());
        assert_eq!(to_v1(&v2), v1, "round trip");

        let mut stored = v2.clone();
        stored["spec"]["metrics"].as_array_mut().unwrap().push(json!({"type": "Resource",
            "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 70}}}));
        stored["status"] = json!({"currentReplicas": 2, "desiredReplicas": 2,
            "conditions": [{"type": "AbleToScale", "status": "True", "reason": "SucceededGetScale"}]});
        let shown = to_v1(&stored);
        assert_eq!(shown["spec"]["targetCPUUtilizationPercentage"], 50);
        let annotations = &shown["metadata"]["annotations"];
        assert!(annotations[METRICS].as_str().unwrap().contains("memory"));
        assert!(annotations[CONDITIONS].as_str().unwrap().contains("SucceededGetScale"));
        assert!(shown["status"].get("conditions").is_none());
        let back = to_v2(&shown);
        assert_eq!(back["spec"], stored["spec"]);
        assert_eq!(back["status"]["conditions"], stored["status"]["conditions"]);
        assert!(back["metadata"].get("annotations").is_none());
    }
}
