//! The horizontal pod autoscaler controller, in a cluster without a metrics API.
//!
//! Upstream (v1.33) `pkg/controller/podautoscaler/horizontal.go`: `reconcileAutoscaler` reads the
//! target's scale, keeps it within `[minReplicas, maxReplicas]` (`SuccessfulRescale`, "Current
//! number of replicas below Spec.MinReplicas"), and otherwise computes the replica count from the
//! metrics. The simulator serves no `metrics.k8s.io`, `custom.metrics.k8s.io` or
//! `external.metrics.k8s.io`, exactly like a fresh cluster without metrics-server, so every
//! metric fails as it fails there: `ScalingActive` False, `FailedGetResourceMetric` and
//! `FailedComputeMetricsReplicas` Warnings, `currentMetrics` of empty statuses (TARGETS
//! `cpu: <unknown>/80%`), and no rescale. HPAs are processed once per resync period (15 s,
//! `--horizontal-pod-autoscaler-sync-period`): `enqueueHPA` adds every change rate-limited by
//! that interval, and a processed HPA is queued again.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake,
    events::{EventType, Involved, Source},
    later, timestamp,
};
use crate::{
    resources::ResourceType,
    store::{self, DryRun, Subresource},
};

/// `--horizontal-pod-autoscaler-sync-period` default.
pub(crate) const SYNC_PERIOD_SECONDS: f64 = 15.0;

/// The event source of the controller (`horizontal-pod-autoscaler`).
const COMPONENT: &str = "horizontal-pod-autoscaler";

/// What the resource metrics client answers when `metrics.k8s.io` is not served
/// (`rest_metrics_client.go` `GetResourceMetric`, wrapping the discovery-less 404 of
/// `PodMetricses(namespace).List`).
const NO_RESOURCE_METRICS: &str = "unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)";

/// The autoscalers queued for their next sync (`a.queue`: one pending request per HPA).
#[derive(Debug, Default)]
pub(crate) struct Autoscalers {
    queued: BTreeSet<Key>,
}

/// Why the scale of the target could not be read: the event and condition text.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ScaleError(String);

/// The target's scale (`autoscaling/v1` Scale: `spec.replicas`, `status.selector`).
#[derive(Debug)]
struct Target {
    rt: ResourceType,
    namespace: String,
    name: String,
    replicas: i64,
}

/// What one reconcile decided (`reconcileAutoscaler`'s branches).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decision {
    /// `spec.replicas` of the target is 0: autoscaling is disabled.
    Disabled,
    /// Out of the bounds: set the target to `desired`.
    Rescale { desired: i64, reason: &'static str },
    /// Within the bounds: the metrics decide, and none can be read here.
    Metrics,
}

impl Autoscalers {
    /// A change of the HPA `key` (or the controller's start): queued one resync period ahead
    /// unless a request is already queued.
    pub(crate) fn enqueue(
        &mut self,
        timers: &mut super::Timers,
        now: k8s_openapi::jiff::Timestamp,
        key: Key,
    ) {
        if self.queued.insert(key.clone()) {
            timers.at(later(now, SYNC_PERIOD_SECONDS), Wake::Autoscaler(key));
        }
    }

    /// The queued request for `key` is due: reconcile it, and queue it again while it exists.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        self.queued.remove(key);
        let types = env.ctx.types;
        let hpa = match env.ctx.store.get_value(&types.horizontalpodautoscalers, &key.0, &key.1) {
            Ok(hpa) => hpa,
            Err(store::Error::NotFound { .. }) => return Ok(()),
            Err(error) => return Err(Error::Store(error)),
        };
        self.enqueue(env.timers, env.ctx.now, key.clone());
        if !hpa["metadata"]["deletionTimestamp"].is_null() {
            return Ok(());
        }
        reconcile(env, hpa)
    }
}

/// `reconcileAutoscaler`.
fn reconcile(env: &mut Env<'_>, hpa: Value) -> Result<()> {
    let now = env.ctx.now;
    let original = hpa["status"].clone();
    let mut status = original.clone();
    if !status.is_object() {
        status = json!({"desiredReplicas": 0});
    }
    let involved = Involved::of(&hpa);
    let source = Source::component(COMPONENT);
    let namespace = hpa["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
    let target = match scale_of(env, &namespace, &hpa["spec"]["scaleTargetRef"]) {
        Ok(target) => target,
        Err(ScaleError(message)) => {
            env.recorder.record(&env.ctx, &involved, EventType::Warning, "FailedGetScale", &message, &source);
            set_condition(
                &mut status,
                "AbleToScale",
                "False",
                "FailedGetScale",
                &format!("the HPA controller was unable to get the target's current scale: {message}"),
                now,
            );
            return write_status(env, hpa, original, status);
        }
    };
    set_condition(
        &mut status,
        "AbleToScale",
        "True",
        "SucceededGetScale",
        "the HPA controller was able to get the target's current scale",
        now,
    );
    let current = target.replicas;
    match decide(&hpa["spec"], current) {
        Decision::Disabled => {
            set_condition(
                &mut status,
                "ScalingActive",
                "False",
                "ScalingDisabled",
                "scaling is disabled since the replica count of the target is zero",
                now,
            );
            set_replicas(&mut status, current, current);
        }
        Decision::Rescale { desired, reason } => match rescale(env, &target, desired) {
            Ok(()) => {
                set_condition(
                    &mut status,
                    "AbleToScale",
                    "True",
                    "SucceededRescale",
                    &format!("the HPA controller was able to update the target scale to {desired}"),
                    now,
                );
                let message = format!("New size: {desired}; reason: {reason}");
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Normal,
                    "SuccessfulRescale",
                    &message,
                    &source,
                );
                set_replicas(&mut status, current, desired);
                status["lastScaleTime"] = json!(timestamp(now));
            }
            Err(error) => {
                let message = format!("New size: {desired}; reason: {reason}; error: {error}");
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Warning,
                    "FailedRescale",
                    &message,
                    &source,
                );
                set_condition(
                    &mut status,
                    "AbleToScale",
                    "False",
                    "FailedUpdateScale",
                    &format!("the HPA controller was unable to update the target scale: {error}"),
                    now,
                );
                status["currentReplicas"] = json!(current);
            }
        },
        Decision::Metrics => {
            // `computeReplicasForMetrics`: every metric fails, the first one's condition is set,
            // the statuses stay empty (`setCurrentReplicasAndMetricsInStatus`).
            let metrics = hpa["spec"]["metrics"].as_array().cloned().unwrap_or_default();
            let failures: Vec<MetricFailure> =
                metrics.iter().map(|m| metric_failure(m, &namespace)).collect();
            for failure in &failures {
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Warning,
                    failure.reason,
                    &failure.detail,
                    &source,
                );
            }
            if let Some(first) = failures.first() {
                let message = format!("the HPA was unable to compute the replica count: {}", first.detail);
                set_condition(&mut status, "ScalingActive", "False", first.reason, &message, now);
                let text = format!(
                    "invalid metrics ({n} invalid out of {n}), first error is: {}",
                    first.wrapped,
                    n = failures.len()
                );
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Warning,
                    "FailedComputeMetricsReplicas",
                    &text,
                    &source,
                );
            }
            status["currentReplicas"] = json!(current);
            status["currentMetrics"] = Value::Array(metrics.iter().map(|_| json!({"type": ""})).collect());
        }
    }
    write_status(env, hpa, original, status)
}

/// The branch `reconcileAutoscaler` takes for a target at `current` replicas.
fn decide(spec: &Value, current: i64) -> Decision {
    let min = spec["minReplicas"].as_i64().unwrap_or(1);
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if current == 0 && min != 0 {
        Decision::Disabled
    } else if current > max {
        Decision::Rescale { desired: max, reason: "Current number of replicas above Spec.MaxReplicas" }
    } else if current < min {
        Decision::Rescale { desired: min, reason: "Current number of replicas below Spec.MinReplicas" }
    } else {
        Decision::Metrics
    }
}

/// How reading one metric fails without a metrics API: the event reason, the event and
/// condition detail, and the error `computeReplicasForMetric` returns (the first one is
/// quoted by `FailedComputeMetricsReplicas`).
struct MetricFailure {
    reason: &'static str,
    detail: String,
    wrapped: String,
}

/// `computeReplicasForMetric` for one metric. The resource metric texts are upstream's
/// (`computeStatusForResourceMetricGeneric`, `replica_calculator.go` `GetResourceReplicas`); the
/// custom and external metric clients' texts follow `custom_metrics` and `external_metrics`
/// clients' "no … API registered" errors.
fn metric_failure(metric: &Value, namespace: &str) -> MetricFailure {
    let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
    match metric["type"].as_str().unwrap_or_default() {
        "Resource" => {
            let name = text(&metric["resource"]["name"]);
            let detail = format!(
                "failed to get {name} utilization: unable to get metrics for resource {name}: {NO_RESOURCE_METRICS}"
            );
            MetricFailure {
                reason: "FailedGetResourceMetric",
                wrapped: format!("failed to get {name} resource metric value: {detail}"),
                detail,
            }
        }
        "ContainerResource" => {
            let name = text(&metric["containerResource"]["name"]);
            let container = text(&metric["containerResource"]["container"]);
            let detail = format!(
                "failed to get {name} utilization: unable to get metrics for resource {name}: {NO_RESOURCE_METRICS}"
            );
            MetricFailure {
                reason: "FailedGetContainerResourceMetric",
                wrapped: format!("failed to get {container} container metric value: {detail}"),
                detail,
            }
        }
        "Pods" => {
            let name = text(&metric["pods"]["metric"]["name"]);
            let detail = format!(
                "unable to get metric {name}: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered"
            );
            MetricFailure {
                reason: "FailedGetPodsMetric",
                wrapped: format!("failed to get pods metric value: {detail}"),
                detail,
            }
        }
        "Object" => {
            let name = text(&metric["object"]["metric"]["name"]);
            let described = &metric["object"]["describedObject"];
            let detail = format!(
                "unable to get metric {name}: {} on {namespace} {}/unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered",
                text(&described["kind"]),
                text(&described["name"])
            );
            MetricFailure {
                reason: "FailedGetObjectMetric",
                wrapped: format!("failed to get object metric value: {detail}"),
                detail,
            }
        }
        "External" => {
            let name = text(&metric["external"]["metric"]["name"]);
            let detail = format!(
                "unable to get external metric {namespace}/{name}/nil: unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered"
            );
            MetricFailure {
                reason: "FailedGetExternalMetric",
                wrapped: format!("failed to get {name} external metric value: {detail}"),
                detail,
            }
        }
        other => {
            let detail = format!("unknown metric source type {other:?}");
            MetricFailure { reason: "InvalidMetricSourceType", wrapped: detail.clone(), detail }
        }
    }
}

/// The scale of the target (`scaleForResourceMappings`): a built-in kind with a `scale`
/// subresource is read; another built-in kind answers 404; an unknown kind has no REST mapping
/// (its group is all the mapper is asked for).
fn scale_of(env: &Env<'_>, namespace: &str, reference: &Value) -> Result<Target, ScaleError> {
    let kind = reference["kind"].as_str().unwrap_or_default();
    let name = reference["name"].as_str().unwrap_or_default();
    let group = reference["apiVersion"].as_str().unwrap_or_default().rsplit_once('/').map_or("", |(g, _)| g);
    let types = crate::resources::built_in();
    let Some(rt) = types.iter().find(|rt| rt.group == group && rt.kind == kind) else {
        // meta `NoKindMatchError` with no versions searched.
        return Err(ScaleError(format!("no matches for kind {kind:?} in group {group:?}")));
    };
    if !rt.subresources.iter().any(|s| s == "scale") {
        return Err(ScaleError("the server could not find the requested resource".into()));
    }
    match env.ctx.store.get_value(rt, namespace, name) {
        Ok(object) => Ok(Target {
            rt: rt.clone(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            replicas: object["spec"]["replicas"].as_i64().unwrap_or(1),
        }),
        // `ScaleREST.Get`: `errors.NewNotFound(apps.Resource("deployments/scale"), name)`.
        Err(_) => Err(ScaleError(format!("{} {name:?} not found", rt.scale_group_resource()))),
    }
}

/// Sets `spec.replicas` of the target, as the scale client's update does.
fn rescale(env: &Env<'_>, target: &Target, desired: i64) -> Result<(), String> {
    let store = env.ctx.store;
    store
        .modify(&target.rt, &target.namespace, &target.name, Subresource::Main, DryRun::Off, |current| {
            let mut next = current.ok_or_else(|| store::Error::NotFound {
                resource: target.rt.scale_group_resource(),
                name: target.name.clone(),
            })?;
            next["spec"]["replicas"] = json!(desired);
            Ok::<Value, store::Error>(next)
        })
        .map(|_| ())
        .map_err(|error| error.to_string())
}

/// `setStatus` without a rescale: the replicas the HPA saw and decided.
fn set_replicas(status: &mut Value, current: i64, desired: i64) {
    status["currentReplicas"] = json!(current);
    status["desiredReplicas"] = json!(desired);
}

/// `setConditionInList`: an existing condition of the type keeps its place and its transition
/// time unless the status changes; a new one is appended.
fn set_condition(
    status: &mut Value,
    kind: &str,
    value: &str,
    reason: &str,
    message: &str,
    now: k8s_openapi::jiff::Timestamp,
) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    let conditions = status["conditions"].as_array_mut().expect("conditions is an array");
    let index = match conditions.iter().position(|c| c["type"] == kind) {
        Some(index) => index,
        None => {
            conditions.push(json!({"type": kind, "status": "", "lastTransitionTime": null}));
            conditions.len() - 1
        }
    };
    let condition = &mut conditions[index];
    if condition["status"] != value {
        condition["lastTransitionTime"] = json!(timestamp(now));
    }
    condition["status"] = json!(value);
    condition["reason"] = json!(reason);
    condition["message"] = json!(message);
}

/// `updateStatusIfNeeded`: writes the status when it changed.
fn write_status(env: &Env<'_>, mut hpa: Value, original: Value, status: Value) -> Result<()> {
    if status == original {
        return Ok(());
    }
    hpa["status"] = status;
    match env.ctx.store.update(&env.ctx.types.horizontalpodautoscalers, hpa, Subresource::Status, DryRun::Off)
    {
        Ok(_) | Err(store::Error::Conflict { .. } | store::Error::NotFound { .. }) => Ok(()),
        Err(error) => Err(Error::Store(error)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_come_before_metrics() {
        let spec = json!({"minReplicas": 2, "maxReplicas": 5});
        assert_eq!(decide(&spec, 0), Decision::Disabled);
        assert_eq!(
            decide(&spec, 1),
            Decision::Rescale { desired: 2, reason: "Current number of replicas below Spec.MinReplicas" }
        );
        assert_eq!(
            decide(&spec, 7),
            Decision::Rescale { desired: 5, reason: "Current number of replicas above Spec.MaxReplicas" }
        );
        assert_eq!(decide(&spec, 3), Decision::Metrics);
        // No minimum: 1.
        assert_eq!(
            decide(&json!({"maxReplicas": 3}), 4),
            Decision::Rescale { desired: 3, reason: "Current number of replicas above Spec.MaxReplicas" }
        );
    }

    #[test]
    fn a_condition_keeps_its_transition_time_while_its_status_holds() {
        let t0 = k8s_openapi::jiff::Timestamp::from_second(1_000).unwrap();
        let t1 = k8s_openapi::jiff::Timestamp::from_second(2_000).unwrap();
        let mut status = json!({});
        set_condition(&mut status, "AbleToScale", "True", "SucceededGetScale", "a", t0);
        set_condition(&mut status, "ScalingActive", "False", "FailedGetResourceMetric", "b", t0);
        set_condition(&mut status, "AbleToScale", "True", "SucceededRescale", "c", t1);
        assert_eq!(status["conditions"][0]["lastTransitionTime"], timestamp(t0));
        assert_eq!(status["conditions"][0]["reason"], "SucceededRescale");
        set_condition(&mut status, "AbleToScale", "False", "FailedGetScale", "d", t1);
        assert_eq!(status["conditions"][0]["lastTransitionTime"], timestamp(t1));
        assert_eq!(status["conditions"][1]["type"], "ScalingActive");
    }

    #[test]
    fn the_resource_metric_fails_as_without_metrics_server() {
        let metric = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}});
        let failure = metric_failure(&metric, "default");
        assert_eq!(failure.reason, "FailedGetResourceMetric");
        assert_eq!(
            failure.wrapped,
            "failed to get cpu resource metric value: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)"
        );
    }
}
