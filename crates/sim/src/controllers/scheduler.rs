//! kube-scheduler: binds Pending pods with no node, or marks them Unschedulable with the v1.33
//! FailedScheduling message (filters in `k8s::schedule`).
//!
//! Upstream: `pkg/scheduler/schedule_one.go` — success writes the binding and the Normal event
//! `Scheduled` ("Successfully assigned <ns>/<pod> to <node>"); failure sets
//! `PodScheduled=False/Unschedulable` with the full FitError and emits the Warning
//! `FailedScheduling` with the message truncated to 1024 bytes (`truncateMessage`). A pod that
//! failed is retried on cluster events that may make it fit (node added or changed, a pod
//! deleted or finished), as the scheduling queue's `MoveAllToActiveOrBackoffQueue` does.

use std::{
    collections::{BTreeMap, BTreeSet, HashMap, HashSet},
    sync::Arc,
};

use k8s_openapi::{
    api::core::v1::{Container, Node, Pod, PodCondition, PodSpec, PodStatus},
    apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time},
};
use serde_json::Value;
use tokio::sync::broadcast::{self, error::TryRecvError};

use super::{
    Env, Error, Key, Result,
    events::{EventType, Involved, Source},
    undecodable::decode_or_skip,
};
use crate::{
    k8s::{
        resources::{self, NodeUsage, PodPhaseClass, SchedulerResources, pod_phase_class},
        schedule::{
            self, DEFAULT_SCHEDULER, FitError, NodeSnapshot, Preemption, PreemptionCandidate,
            ScheduleDecision, ScheduleFailure,
        },
    },
    store::{self, DryRun, EventType as StoreEventType, Store, Stored, Subresource, WatchFrom},
};

/// Pods that failed to schedule, by uid, waiting for a retry trigger; and the scheduler cache.
#[derive(Debug, Default)]
pub(crate) struct Scheduler {
    unschedulable: HashSet<String>,
    cache: Cache,
}

/// The scheduler cache (upstream's `internal/cache`): the non-terminal pods bound to each node
/// with their summed requests, kept current from the store's change feed, so scheduling a pod
/// reads its node's entry instead of decoding every bound pod of the cluster (issue #17).
#[derive(Debug, Default)]
struct Cache {
    /// Pod changes not applied yet; `None` until the first run (or after falling behind).
    feed: Option<broadcast::Receiver<Arc<store::Event>>>,
    bound: HashMap<String, NodePods>,
    node_of: HashMap<Key, String>,
    /// Each node's parsed allocatable, with the node's resourceVersion it was parsed at.
    allocatable: HashMap<String, (Option<String>, SchedulerResources)>,
}

/// The bound pods of one node and what they request (an error when a request does not parse:
/// scheduling onto the node reports it, as building the node's snapshot did).
#[derive(Debug)]
struct NodePods {
    pods: BTreeMap<Key, Pod>,
    usage: Result<NodeUsage, resources::Error>,
}

impl Default for NodePods {
    fn default() -> Self {
        NodePods { pods: BTreeMap::new(), usage: Ok(NodeUsage::default()) }
    }
}

impl Cache {
    /// Applies every pod change written since the last call (all of them, from the store's
    /// current state, the first time or after the feed fell behind).
    fn catch_up(&mut self, store: &Store) -> Result<()> {
        let mut touched: BTreeSet<String> = BTreeSet::new();
        let feed = match &mut self.feed {
            Some(feed) => feed,
            None => {
                let start = store.watch("pods", WatchFrom::InitialState).map_err(Error::Store)?;
                self.bound.clear();
                self.node_of.clear();
                for stored in &start.initial {
                    self.put(stored, &mut touched);
                }
                self.feed.insert(start.live)
            }
        };
        let mut changes = Vec::new();
        loop {
            match feed.try_recv() {
                Ok(event) if event.object.group_resource == "pods" => changes.push(event),
                Ok(_) => {}
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
                Err(TryRecvError::Lagged(_)) => {
                    self.feed = None;
                    return self.catch_up(store);
                }
            }
        }
        for event in changes {
            if event.event_type == StoreEventType::Deleted {
                self.remove(&(event.object.namespace.clone(), event.object.name.clone()), &mut touched);
            } else if event.previous.as_deref().is_some_and(|previous| counts_alike(previous, &event.object))
            {
                // A status write of the kubelet: nothing the cache holds changed, nothing to parse.
            } else {
                self.put(&event.object, &mut touched);
            }
        }
        for node in touched {
            if let Some(on_node) = self.bound.get_mut(&node) {
                on_node.usage = resources::node_usage(on_node.pods.values());
            }
        }
        Ok(())
    }

    /// The pod as stored now: counted on its node when bound and not finished.
    fn put(&mut self, stored: &Stored, touched: &mut BTreeSet<String>) {
        let key = (stored.namespace.clone(), stored.name.clone());
        self.remove(&key, touched);
        let Some(pod) = decode_or_skip::<Pod>(stored) else { return };
        self.assume(key, pod, touched);
    }

    fn assume(&mut self, key: Key, pod: Pod, touched: &mut BTreeSet<String>) {
        if let Some(node) = bound_node(&pod) {
            touched.insert(node.clone());
            self.node_of.insert(key.clone(), node.clone());
            self.bound.entry(node).or_default().pods.insert(key, slim(pod));
        }
    }

    fn remove(&mut self, key: &Key, touched: &mut BTreeSet<String>) {
        if let Some(node) = self.node_of.remove(key) {
            if let Some(on_node) = self.bound.get_mut(&node) {
                on_node.pods.remove(key);
            }
            touched.insert(node);
        }
    }

    /// Parses the allocatable resources of the nodes that changed since the last call.
    fn refresh_allocatable(&mut self, nodes: &[Node]) {
        if nodes.len() != self.allocatable.len() {
            self.allocatable.clear();
        }
        for node in nodes {
            let name = node.metadata.name.as_deref().unwrap_or("");
            if self
                .allocatable
                .get(name)
                .is_some_and(|(version, _)| *version == node.metadata.resource_version)
            {
                continue;
            }
            // A node whose allocatable does not parse stays out: `snapshot` parses it again and
            // reports the error as before.
            if let Ok(allocatable) = resources::node_allocatable(node) {
                self.allocatable
                    .insert(name.to_string(), (node.metadata.resource_version.clone(), allocatable));
            }
        }
    }

    /// The snapshot of `node`: its bound pods (never the incoming pod, which is unbound) and
    /// their usage.
    fn snapshot<'a>(&'a self, node: &'a Node) -> schedule::Result<NodeSnapshot<'a>> {
        let name = node.metadata.name.as_deref().unwrap_or("");
        let allocatable = match self.allocatable.get(name) {
            Some((version, allocatable)) if *version == node.metadata.resource_version => allocatable.clone(),
            _ => resources::node_allocatable(node)?,
        };
        Ok(match self.bound.get(name) {
            Some(on_node) => NodeSnapshot {
                node,
                allocatable,
                pods: on_node.pods.values().collect(),
                usage: on_node.usage.clone()?,
            },
            None => NodeSnapshot { node, allocatable, pods: Vec::new(), usage: NodeUsage::default() },
        })
    }
}

/// Whether two states of a pod count alike on its node: the same node, phase and deletion state.
/// The rest of what the cache keeps (containers and their requests, priority, overhead) cannot
/// change on a pod (the `resize` subresource is not served).
fn counts_alike(previous: &Stored, current: &Stored) -> bool {
    let deleting = |stored: &Stored| stored.json.contains("\"deletionTimestamp\"");
    previous.fields.get("spec.nodeName") == current.fields.get("spec.nodeName")
        && previous.fields.get("status.phase") == current.fields.get("status.phase")
        && deleting(previous) == deleting(current)
}

/// Whether a stored pod can need scheduling, read from its selectable fields without parsing
/// it: unbound and Pending ([`wants_scheduling`] decides the rest).
fn may_want_scheduling(stored: &Stored) -> bool {
    stored.fields.get("spec.nodeName").is_none_or(str::is_empty)
        && stored.fields.get("status.phase").is_none_or(|phase| phase.is_empty() || phase == "Pending")
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
            if let Some(stored) =
                store.get("pods", namespace, name).filter(|stored| may_want_scheduling(stored))
            {
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
        // Once built, the cache follows every change, so its feed never falls behind; it is
        // built when the first pod needs scheduling.
        if candidates.is_empty() {
            if self.cache.feed.is_some() {
                self.cache.catch_up(store)?;
            }
            return Ok(());
        }
        self.cache.catch_up(store)?;
        self.cache.refresh_allocatable(env.nodes);
        candidates.sort_by(|a, b| {
            let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
            created(a).cmp(&created(b)).then_with(|| a.metadata.name.cmp(&b.metadata.name))
        });
        for pod in candidates {
            self.schedule_one(env, pod)?;
        }
        Ok(())
    }

    fn schedule_one(&mut self, env: &mut Env<'_>, pod: Pod) -> Result<()> {
        let involved = Involved::of_pod(&pod);
        let decision = match claim_rejection(env.ctx.store, &pod) {
            Some(message) => {
                ScheduleDecision::Unschedulable(schedule::pre_filter_failure(env.nodes.len(), message))
            }
            None => self.decide(env, &pod)?,
        };
        self.apply(env, pod, involved, decision)
    }

    /// The filter pass: a pod pinned to one node (a daemon pod) can only bind there, so that node
    /// alone is tried first, and the full pass (whose FitError counts every node) runs only when it
    /// fails.
    fn decide(&self, env: &Env<'_>, pod: &Pod) -> Result<ScheduleDecision> {
        let pinned = crate::k8s::daemon::target_node_name(pod).ok();
        let snapshot = |node| self.cache.snapshot(node);
        Ok(match pinned.as_deref().and_then(|name| env.node(name)) {
            Some(node) if pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_none() => {
                match schedule::schedule_pod_by(pod, std::slice::from_ref(node), &snapshot)? {
                    bind @ ScheduleDecision::Bind { .. } => bind,
                    ScheduleDecision::Unschedulable(_) => {
                        schedule::schedule_pod_by(pod, env.nodes, &snapshot)?
                    }
                }
            }
            _ => schedule::schedule_pod_by(pod, env.nodes, &snapshot)?,
        })
    }

    fn apply(
        &mut self,
        env: &mut Env<'_>,
        pod: Pod,
        involved: Involved,
        decision: ScheduleDecision,
    ) -> Result<()> {
        let (store, types, now) = (env.ctx.store, env.ctx.types, env.ctx.now);
        let namespace = involved.namespace.clone();
        let name = involved.name.clone();
        let uid = involved.uid.clone();
        let source = Source::component(DEFAULT_SCHEDULER);
        match decision {
            ScheduleDecision::Bind { node } => {
                self.unschedulable.remove(&uid);
                // The binding (`pods/binding`): nodeName and PodScheduled=True in one write. A pod
                // deleted, replaced or bound by someone else since it was read is left alone.
                let binding =
                    store::Binding { node: node.clone(), uid: Some(uid.clone()), ..Default::default() };
                let written = match store.bind(&types.pods, &namespace, &name, &binding) {
                    Ok(written) => written,
                    Err(store::Error::NotFound { .. } | store::Error::Conflict { .. }) => return Ok(()),
                    Err(error) => return Err(Error::Store(error)),
                };
                env.recorder.record(
                    &env.ctx,
                    &involved,
                    EventType::Normal,
                    "Scheduled",
                    &schedule::scheduled_event_message(&pod, &node),
                    &source,
                );
                // Assumed on its node for the next pods of this run, as upstream's `assume`; the
                // binding's own change event replaces it with the stored pod.
                let bound: Pod = serde_json::from_value(written).map_err(Error::Encode)?;
                let mut touched = BTreeSet::new();
                self.cache.assume((namespace.clone(), name.clone()), bound, &mut touched);
                if let Some(on_node) = self.cache.bound.get_mut(&node) {
                    on_node.usage = resources::node_usage(on_node.pods.values());
                }
            }
            ScheduleDecision::Unschedulable(failure) => {
                self.unschedulable.insert(uid);
                let nominated = match &failure {
                    ScheduleFailure::Unfit(FitError {
                        preemption: Preemption::Candidates(candidates),
                        ..
                    }) => candidates.first(),
                    _ => None,
                };
                if let Some(candidate) = nominated {
                    preempt_victims(env, &pod, candidate)?;
                }
                let condition: PodCondition = failure.pod_scheduled_condition(Time(now));
                let mut condition = serde_json::to_value(condition).map_err(Error::Encode)?;
                condition["lastProbeTime"] = Value::Null;
                let mut value = store.get_value(&types.pods, &namespace, &name).map_err(Error::Store)?;
                let mut changed = false;
                if let Some(candidate) = nominated
                    && value["status"]["nominatedNodeName"] != candidate.node.as_str()
                {
                    value["status"]["nominatedNodeName"] = Value::from(candidate.node.as_str());
                    changed = true;
                }
                if schedule::set_pod_condition(&mut value, condition) || changed {
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

/// VolumeBinding's PreFilter (pkg/scheduler/framework/plugins/volumebinding/volume_binding.go):
/// a claim the pod names that does not exist (`persistentvolumeclaim "x" not found`, the lister's
/// error), is being deleted, or is not bound. The simulator has no StorageClass and no volume
/// provisioner, so every unbound claim counts as an immediate one.
fn claim_rejection(store: &Store, pod: &Pod) -> Option<String> {
    let namespace = pod.metadata.namespace.as_deref().unwrap_or_default();
    let volumes = pod.spec.as_ref().and_then(|spec| spec.volumes.as_ref())?;
    let names: Vec<&str> = volumes
        .iter()
        .filter_map(|v| v.persistent_volume_claim.as_ref())
        .map(|c| c.claim_name.as_str())
        .collect();
    let mut unbound = false;
    for name in names {
        let Some(claim) = store.get("persistentvolumeclaims", namespace, name).and_then(|s| s.value().ok())
        else {
            return Some(format!("persistentvolumeclaim \"{name}\" not found"));
        };
        if claim["metadata"]["deletionTimestamp"].is_string() {
            return Some(format!("persistentvolumeclaim \"{name}\" is being deleted"));
        }
        unbound |= claim["status"]["phase"] != "Bound";
    }
    unbound.then(|| schedule::REASON_UNBOUND_IMMEDIATE_CLAIMS.to_string())
}

/// DefaultPreemption's `prepareCandidate` (pkg/scheduler/framework/preemption/preemption.go) on
/// the nominated node: each victim gets the `DisruptionTarget` condition (reason
/// `PreemptionByScheduler`), is deleted with its grace period, and gets the Normal event
/// `Preempted` `Preempted by pod <uid> on node <node>`. The preemptor is retried when they are
/// gone (a deleted pod is a retry trigger). The first candidate is nominated (upstream's
/// `pickOneNodeForPreemption` ranks several; with one node that fits they agree).
fn preempt_victims(env: &mut Env<'_>, preemptor: &Pod, candidate: &PreemptionCandidate) -> Result<()> {
    let (store, types, now) = (env.ctx.store, env.ctx.types, env.ctx.now);
    let scheduler = preemptor.spec.as_ref().and_then(|s| s.scheduler_name.clone());
    let scheduler = scheduler.unwrap_or_else(|| DEFAULT_SCHEDULER.to_string());
    let preemptor_uid = preemptor.metadata.uid.clone().unwrap_or_default();
    for victim in &candidate.victims {
        let Some((namespace, name)) = victim.split_once('/') else { continue };
        let Ok(mut value) = store.get_value(&types.pods, namespace, name) else { continue };
        let condition = serde_json::json!({
            "type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
            "lastTransitionTime": super::timestamp(now), "reason": "PreemptionByScheduler",
            "message": format!("{scheduler}: preempting to accommodate a higher priority pod"),
        });
        if schedule::set_pod_condition(&mut value, condition) {
            match store.update(&types.pods, value.clone(), Subresource::Status, DryRun::Off) {
                Ok(_) => {}
                Err(store::Error::NotFound { .. } | store::Error::Conflict { .. }) => continue,
                Err(error) => return Err(Error::Store(error)),
            }
        }
        match store.delete(&types.pods, namespace, name, &store::DeleteOptions::default()) {
            Ok(_) | Err(store::Error::NotFound { .. }) => {}
            Err(error) => return Err(Error::Store(error)),
        }
        let involved = Involved {
            kind: "Pod".into(),
            api_version: "v1".into(),
            namespace: namespace.to_string(),
            name: name.to_string(),
            uid: value["metadata"]["uid"].as_str().unwrap_or_default().to_string(),
            field_path: None,
        };
        env.recorder.record(
            &env.ctx,
            &involved,
            EventType::Normal,
            "Preempted",
            &format!("Preempted by pod {preemptor_uid} on node {}", candidate.node),
            &Source::component(DEFAULT_SCHEDULER),
        );
    }
    Ok(())
}

/// The node a non-terminal pod is bound to (`None` when unbound or finished): the pods the
/// scheduler counts on a node (its informer skips terminal pods, `scheduler.go`, field selector
/// `status.phase!=Succeeded,status.phase!=Failed`).
fn bound_node(pod: &Pod) -> Option<String> {
    let node = pod.spec.as_ref()?.node_name.as_deref().filter(|name| !name.is_empty())?;
    (pod_phase_class(pod) != PodPhaseClass::Terminal).then(|| node.to_string())
}

/// What the filters and the preemption dry run read of a bound pod (its identity, priority,
/// requests and phase); the rest is dropped so the cache of every bound pod stays small.
fn slim(pod: Pod) -> Pod {
    let containers = |list: Vec<Container>| -> Vec<Container> {
        list.into_iter()
            .map(|c| Container {
                name: c.name,
                resources: c.resources,
                restart_policy: c.restart_policy,
                ..Container::default()
            })
            .collect()
    };
    let spec = pod.spec.map(|spec| PodSpec {
        node_name: spec.node_name,
        priority: spec.priority,
        overhead: spec.overhead,
        containers: containers(spec.containers),
        init_containers: spec.init_containers.map(containers),
        ..PodSpec::default()
    });
    Pod {
        metadata: ObjectMeta {
            name: pod.metadata.name,
            namespace: pod.metadata.namespace,
            uid: pod.metadata.uid,
            deletion_timestamp: pod.metadata.deletion_timestamp,
            ..ObjectMeta::default()
        },
        spec,
        status: pod.status.map(|status| PodStatus { phase: status.phase, ..PodStatus::default() }),
    }
}
