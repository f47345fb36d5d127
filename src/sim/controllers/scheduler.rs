//! kube-scheduler: binds Pending pods with no node, or marks them Unschedulable with the v1.33
//! FailedScheduling message (filters in `k8s::schedule`).
//!
//! Upstream: `pkg/scheduler/schedule_one.go` — success writes the binding and the Normal event
//! `Scheduled` ("Successfully assigned <ns>/<pod> to <node>"); failure sets
//! `PodScheduled=False/Unschedulable` with the full FitError and emits the Warning
//! `FailedScheduling` with the message truncated to 1024 bytes (k8s-fidelity.md §5). A pod that
//! failed is retried on cluster events that may make it fit (node added or changed, a pod
//! deleted or finished), as the scheduling queue's `MoveAllToActiveOrBackoffQueue` does.

use std::collections::{BTreeSet, HashSet};

use k8s_openapi::{
    api::core::v1::{Pod, PodCondition},
    apimachinery::pkg::apis::meta::v1::Time,
};
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result,
    events::{EventType, Involved, Source},
    undecodable::{decode_all, decode_or_skip},
};
use crate::{
    k8s::{
        resources::{PodPhaseClass, pod_phase_class},
        schedule::{self, DEFAULT_SCHEDULER, ScheduleDecision},
    },
    sim::store::{DryRun, Stored, Subresource},
};

/// Pods that failed to schedule, by uid, waiting for a retry trigger.
#[derive(Debug, Default)]
pub(crate) struct Scheduler {
    unschedulable: HashSet<String>,
}

fn wants_scheduling(pod: &Pod) -> bool {
    let spec = pod.spec.as_ref();
    let unbound = spec.and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty);
    let ours = spec.and_then(|s| s.scheduler_name.as_deref()).is_none_or(|n| n == DEFAULT_SCHEDULER);
    let pending = pod.status.as_ref().and_then(|s| s.phase.as_deref()).is_none_or(|p| p == "Pending");
    // A gated pod never enters the scheduling queue (the `SchedulingGates` PreEnqueue plugin);
    // the update that removes its last gate is a pod change, which brings it back here.
    let gated = schedule::is_scheduling_gated(pod);
    unbound && ours && pending && !gated && pod.metadata.deletion_timestamp.is_none()
}

impl Scheduler {
    /// Schedules the changed pods that need it, and every unschedulable pod when `retry`.
    pub(crate) fn run(&mut self, env: &mut Env<'_>, changed: &BTreeSet<Key>, retry: bool) -> Result<()> {
        let store = env.ctx.store;
        let mut candidates: Vec<Pod> = Vec::new();
        for (namespace, name) in changed {
            if let Some(stored) = store.get("pods", namespace, name) {
                let Some(pod) = decode_or_skip::<Pod>(&stored) else { continue };
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                if wants_scheduling(&pod) && !self.unschedulable.contains(&uid) {
                    candidates.push(pod);
                }
            }
        }
        if retry && !self.unschedulable.is_empty() {
            let waiting = |stored: &Stored| !stored.json.contains("\"nodeName\"");
            for stored in store.list("pods", None, &waiting, None, None).items {
                let Some(pod) = decode_or_skip::<Pod>(&stored) else { continue };
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                if self.unschedulable.contains(&uid) && wants_scheduling(&pod) {
                    candidates.push(pod);
                }
            }
        }
        if candidates.is_empty() {
            return Ok(());
        }
        // The scheduler's pod informer skips terminal pods (`scheduler.go`, field selector
        // `status.phase!=Succeeded,status.phase!=Failed`).
        let assigned = |stored: &Stored| stored.json.contains("\"nodeName\"");
        let page = store.list("pods", None, &assigned, None, None);
        let mut pods: Vec<Pod> = decode_all::<Pod>(page.items.iter().map(|stored| &**stored))
            .into_iter()
            .filter(|pod| pod_phase_class(pod) != PodPhaseClass::Terminal)
            .collect();
        candidates.sort_by(|a, b| {
            let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(a).cmp(&created(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        for pod in candidates {
            self.schedule_one(env, pod, &mut pods)?;
        }
        Ok(())
    }

    fn schedule_one(&mut self, env: &mut Env<'_>, pod: Pod, assigned: &mut Vec<Pod>) -> Result<()> {
        let (store, types, now) = (env.ctx.store, env.ctx.types, env.ctx.now);
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let involved = Involved {
            kind: "Pod".into(),
            api_version: "v1".into(),
            namespace: namespace.clone(),
            name: name.clone(),
            uid: uid.clone(),
            field_path: None,
        };
        let source = Source::component(DEFAULT_SCHEDULER);
        // A pod pinned to one node (a daemon pod) can only bind there: try that node alone
        // first, and run the full pass (whose FitError counts every node) only when it fails.
        let pinned = crate::k8s::daemon::target_node_name(&pod).ok();
        let decision = match pinned.as_deref().and_then(|name| {
            env.nodes.iter().find(|n| n.metadata.name.as_deref() == Some(name)).map(|node| (name, node))
        }) {
            Some((name, node)) if pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_none() => {
                let on_node: Vec<Pod> = assigned
                    .iter()
                    .filter(|p| p.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(name))
                    .cloned()
                    .collect();
                match schedule::schedule_pod(&pod, std::slice::from_ref(node), &on_node)? {
                    bind @ ScheduleDecision::Bind { .. } => bind,
                    ScheduleDecision::Unschedulable(_) => schedule::schedule_pod(&pod, env.nodes, assigned)?,
                }
            }
            _ => schedule::schedule_pod(&pod, env.nodes, assigned)?,
        };
        match decision {
            ScheduleDecision::Bind { node } => {
                self.unschedulable.remove(&uid);
                // The binding (`pods/binding`): nodeName, then PodScheduled=True.
                let mut value = store.get_value(&types.pods, &namespace, &name).map_err(Error::Store)?;
                if value["metadata"]["uid"] != json!(uid) {
                    return Ok(());
                }
                value["spec"]["nodeName"] = json!(node);
                let bound =
                    store.update(&types.pods, value, Subresource::Main, DryRun::Off).map_err(Error::Store)?;
                let mut status_object = bound.clone();
                set_condition(
                    &mut status_object,
                    json!({"type": "PodScheduled", "status": "True", "lastProbeTime": null,
                           "lastTransitionTime": super::timestamp(now)}),
                );
                let written = store
                    .update(&types.pods, status_object, Subresource::Status, DryRun::Off)
                    .map_err(Error::Store)?;
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Normal,
                    "Scheduled",
                    &schedule::scheduled_event_message(&pod, &node),
                    &source,
                );
                assigned.push(serde_json::from_value(written).map_err(Error::Encode)?);
            }
            ScheduleDecision::Unschedulable(failure) => {
                self.unschedulable.insert(uid);
                let condition: PodCondition = failure.pod_scheduled_condition(Time(now));
                let mut condition = serde_json::to_value(condition).map_err(Error::Encode)?;
                condition["lastProbeTime"] = Value::Null;
                let mut value = store.get_value(&types.pods, &namespace, &name).map_err(Error::Store)?;
                if set_condition(&mut value, condition) {
                    store
                        .update(&types.pods, value, Subresource::Status, DryRun::Off)
                        .map_err(Error::Store)?;
                }
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Warning,
                    "FailedScheduling",
                    &failure.event_message(),
                    &source,
                );
            }
        }
        Ok(())
    }
}

/// Sets a pod condition as `podutil.UpdatePodCondition` does: `lastTransitionTime` moves only
/// when the status changes. Returns whether anything changed.
pub(crate) fn set_condition(pod: &mut Value, mut condition: Value) -> bool {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let conditions = pod["status"]["conditions"].as_array_mut().expect("conditions is an array");
    match conditions.iter_mut().find(|c| c["type"] == condition["type"]) {
        Some(existing) => {
            if existing["status"] == condition["status"] {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            if *existing == condition {
                return false;
            }
            *existing = condition;
            true
        }
        None => {
            conditions.push(condition);
            true
        }
    }
}
