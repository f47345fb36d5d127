//! The simulated control plane and kubelets: level-triggered reconcilers over the store.
//!
//! Controllers act only through the store, writing what a real cluster would show (objects,
//! status, Events). They are woken by store changes (the store's watch fan-out) and by the
//! clock (a timer queue of simulated instants: "image pull done at t+2s", "back-off retry at
//! t+10s"). With a manual clock, tests call [`Controllers::settle`] (run until nothing is left
//! to do now) and [`Controllers::advance_to_next_event`] (jump to the next wake-up); `sim serve`
//! runs the same loop in the background with [`spawn`].
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use lab_runner_sim::{controllers::{self, config::Config}, harness::Harness};
//! let sim = Harness::start();
//! let mut control = controllers::Controllers::new(sim.state.clone(), Config::defaults())?;
//! control.settle()?;
//! control.advance_to_next_event()?;
//! # Ok(()) }
//! ```

use std::{
    collections::{BTreeMap, BTreeSet, HashMap},
    sync::{Arc, RwLock},
};

use k8s_openapi::{
    api::core::v1::Node,
    jiff::{SignedDuration, Timestamp},
};
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio::sync::broadcast::{self, error::TryRecvError};

use super::{
    resources::{self, ResourceType},
    server::AppState,
    store::{self, EventType as StoreEventType, Store, Stored, WatchFrom},
};

mod admission;
pub mod config;
mod cronjob;
mod daemonset;
mod deployment;
mod disruption;
pub mod events;
mod gc;
mod history;
mod hpa;
pub mod job;
mod kubelet;
mod owners;
mod quota;
mod replicaset;
mod scheduler;
mod statefulset;
mod taint_eviction;
mod undecodable;

pub use config::Config;

/// Errors of the controllers.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A store operation failed.
    #[error(transparent)]
    Store(store::Error),
    /// A stored object does not decode into its API type.
    #[error("decoding {what}: {source}")]
    Decode {
        /// `pods default/x`.
        what: String,
        /// The serde error.
        source: serde_json::Error,
    },
    /// Encoding an object built by a controller failed.
    #[error("encoding an object: {0}")]
    Encode(serde_json::Error),
    /// The shared DaemonSet logic rejected a DaemonSet (e.g. a bad maxUnavailable).
    #[error(transparent)]
    Daemon(#[from] crate::k8s::daemon::Error),
    /// The scheduler's filters could not read a pod or node.
    #[error(transparent)]
    Schedule(#[from] crate::k8s::schedule::Error),
    /// A built-in resource type the controllers need is not served.
    #[error("resource type {0} is not served")]
    MissingType(&'static str),
    /// The controllers' thread or its runtime could not be started.
    #[error("starting the controllers' thread: {0}")]
    Thread(std::io::Error),
    /// [`Controllers::settle`] kept finding work (a controller fighting another).
    #[error("controllers did not settle after {rounds} rounds")]
    NotQuiescent {
        /// Rounds run.
        rounds: usize,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Rounds [`Controllers::settle`] runs before giving up.
const MAX_ROUNDS: usize = 100_000;

/// The resource types the controllers write.
#[derive(Debug, Clone)]
pub struct Types {
    /// core/v1 pods.
    pub pods: ResourceType,
    /// core/v1 nodes.
    pub nodes: ResourceType,
    /// core/v1 events.
    pub events: ResourceType,
    /// apps/v1 daemonsets.
    pub daemonsets: ResourceType,
    /// apps/v1 controllerrevisions.
    pub controllerrevisions: ResourceType,
    /// apps/v1 replicasets.
    pub replicasets: ResourceType,
    /// apps/v1 deployments.
    pub deployments: ResourceType,
    /// batch/v1 jobs.
    pub jobs: ResourceType,
    /// apps/v1 statefulsets.
    pub statefulsets: ResourceType,
    /// policy/v1 poddisruptionbudgets.
    pub poddisruptionbudgets: ResourceType,
    /// batch/v1 cronjobs.
    pub cronjobs: ResourceType,
    /// autoscaling/v2 horizontalpodautoscalers.
    pub horizontalpodautoscalers: ResourceType,
}

impl Types {
    fn resolve(all: &[ResourceType]) -> Result<Types> {
        let find = |group: &str, plural: &'static str| {
            resources::find(all, group, "v1", plural).cloned().ok_or(Error::MissingType(plural))
        };
        Ok(Types {
            pods: find("", "pods")?,
            nodes: find("", "nodes")?,
            events: find("", "events")?,
            daemonsets: find("apps", "daemonsets")?,
            controllerrevisions: find("apps", "controllerrevisions")?,
            replicasets: find("apps", "replicasets")?,
            deployments: find("apps", "deployments")?,
            statefulsets: find("apps", "statefulsets")?,
            poddisruptionbudgets: find("policy", "poddisruptionbudgets")?,
            jobs: resources::find(all, "batch", "v1", "jobs").cloned().ok_or(Error::MissingType("jobs"))?,
            cronjobs: find("batch", "cronjobs")?,
            horizontalpodautoscalers: resources::find(all, "autoscaling", "v2", "horizontalpodautoscalers")
                .cloned()
                .ok_or(Error::MissingType("horizontalpodautoscalers"))?,
        })
    }
}

/// What every reconcile step reads: the store, the types, and "now".
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The store.
    pub store: &'a Store,
    /// The types written.
    pub types: &'a Types,
    /// The simulated time of this step.
    pub now: Timestamp,
}

/// RFC 3339 at second precision, as `metav1.Time` serializes.
pub fn timestamp(at: Timestamp) -> String {
    Timestamp::from_second(at.as_second()).unwrap_or(at).to_string()
}

/// `at + seconds` (fractions kept), saturating.
pub(crate) fn later(at: Timestamp, seconds: f64) -> Timestamp {
    let delay = SignedDuration::try_from_secs_f64(seconds.max(0.0)).unwrap_or(SignedDuration::ZERO);
    at.checked_add(delay).unwrap_or(at)
}

/// Parses a stored object into its API type.
pub(crate) fn decode<T: DeserializeOwned>(stored: &Stored) -> Result<T> {
    serde_json::from_str(&stored.json).map_err(|source| Error::Decode {
        what: format!("{} {}/{}", stored.group_resource, stored.namespace, stored.name),
        source,
    })
}

/// A (namespace, name) key.
pub(crate) type Key = (String, String);

/// Why a timer fires.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Wake {
    /// The kubelet looks at a pod again (pull done, back-off over, ready, grace period over).
    Pod(Key),
    /// A DaemonSet is synced again (minReadySeconds).
    DaemonSet(Key),
    /// A ReplicaSet is synced again (minReadySeconds).
    ReplicaSet(Key),
    /// A Deployment is synced again (progress deadline).
    Deployment(Key),
    /// A Job is synced again (pod failure back-off).
    Job(Key),
    /// The NVIDIA components run again (a MIG reconfiguration finishes).
    Gpu,
    /// Events reach their TTL.
    EventTtl,
    /// A CronJob is synced again (its next scheduled time).
    CronJob(Key),
    /// The budgets of a namespace are synced again (an eviction's two-minute timeout).
    Disruption(String),
    /// A HorizontalPodAutoscaler's queued request is due (every resync period).
    Autoscaler(Key),
}

/// The timer queue.
#[derive(Debug, Default)]
pub(crate) struct Timers(BTreeMap<Timestamp, BTreeSet<Wake>>);

impl Timers {
    /// Wakes `wake` at `at`.
    pub(crate) fn at(&mut self, at: Timestamp, wake: Wake) {
        self.0.entry(at).or_default().insert(wake);
    }

    fn next(&self) -> Option<Timestamp> {
        self.0.keys().next().copied()
    }

    fn take_due(&mut self, now: Timestamp) -> Vec<Wake> {
        let later = self.0.split_off(&now.checked_add(SignedDuration::from_nanos(1)).unwrap_or(now));
        let due = std::mem::replace(&mut self.0, later);
        due.into_values().flatten().collect()
    }
}

/// What changed since the last step.
#[derive(Debug, Default)]
struct Dirty {
    pods: BTreeSet<Key>,
    /// Pods named by a timer, a node change or a resync rather than by their own change.
    woken_pods: BTreeSet<Key>,
    daemonsets: BTreeSet<Key>,
    all_daemonsets: bool,
    replicasets: BTreeSet<Key>,
    deployments: BTreeSet<Key>,
    jobs: BTreeSet<Key>,
    statefulsets: BTreeSet<Key>,
    cronjobs: BTreeSet<Key>,
    /// HorizontalPodAutoscalers whose queued request is due.
    autoscalers: BTreeSet<Key>,
    /// Namespaces whose PodDisruptionBudgets are synced.
    budgets: BTreeSet<String>,
    retry_unschedulable: bool,
    nodes_changed: bool,
    deleted_owners: BTreeSet<String>,
    finalizing: BTreeSet<(String, Key)>,
    dependents_changed: bool,
    gpu: bool,
}

impl Dirty {
    fn is_empty(&self) -> bool {
        self.pods.is_empty()
            && self.daemonsets.is_empty()
            && !self.all_daemonsets
            && self.replicasets.is_empty()
            && self.deployments.is_empty()
            && self.jobs.is_empty()
            && self.statefulsets.is_empty()
            && self.budgets.is_empty()
            && self.cronjobs.is_empty()
            && self.autoscalers.is_empty()
            && !self.retry_unschedulable
            && !self.nodes_changed
            && self.deleted_owners.is_empty()
            && self.finalizing.is_empty()
            && !self.dependents_changed
            && !self.gpu
    }
}

/// Counters for benchmarks and diagnostics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Store change events the controllers consumed.
    pub events_seen: u64,
    /// Steps that had work.
    pub steps: u64,
    /// Timer wake-ups fired.
    pub wakes: u64,
}

/// The shared parts a controller works with during one step.
pub(crate) struct Env<'a> {
    pub(crate) ctx: Ctx<'a>,
    pub(crate) recorder: &'a mut events::Recorder,
    pub(crate) timers: &'a mut Timers,
    pub(crate) config: &'a Config,
    pub(crate) nodes: &'a [Node],
    /// Each node's position in `nodes`, by name.
    pub(crate) node_index: &'a HashMap<String, usize>,
}

impl<'a> Env<'a> {
    /// The node named `name`.
    pub(crate) fn node(&self, name: &str) -> Option<&'a Node> {
        self.node_index.get(name).map(|index| &self.nodes[*index])
    }
}

/// The controllers of one simulated cluster.
pub struct Controllers {
    state: AppState,
    types: Types,
    config: Arc<RwLock<Config>>,
    feed: broadcast::Receiver<Arc<store::Event>>,
    timers: Timers,
    dirty: Dirty,
    recorder: events::Recorder,
    event_expiry: events::Expiry,
    scheduler: scheduler::Scheduler,
    kubelet: kubelet::Kubelet,
    gpu: crate::gpu::agent::GpuAgents,
    taint_eviction: taint_eviction::TaintEviction,
    daemonsets: daemonset::DaemonSets,
    replicasets: replicaset::ReplicaSets,
    deployments: deployment::Deployments,
    jobs: job::Jobs,
    statefulsets: statefulset::StatefulSets,
    disruption: disruption::Disruption,
    cronjobs: cronjob::CronJobs,
    autoscalers: hpa::Autoscalers,
    gc: gc::Collector,
    quotas: quota::QuotaStatus,
    nodes: Option<NodeCache>,
    stats: Stats,
}

/// The decoded nodes and each one's position by name, until a node changes.
type NodeCache = (Arc<Vec<Node>>, Arc<HashMap<String, usize>>);

impl std::fmt::Debug for Controllers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controllers").field("stats", &self.stats).finish_non_exhaustive()
    }
}

impl Controllers {
    /// Controllers over `state`, subscribed to its store; everything present counts as changed,
    /// so the first [`Controllers::settle`] reconciles the whole cluster.
    pub fn new(state: AppState, config: Config) -> Result<Controllers> {
        let types = Types::resolve(&state.types.read().unwrap_or_else(|p| p.into_inner()))?;
        let revision = state.store.revision();
        let feed = state.store.watch("pods", WatchFrom::Revision(revision)).map_err(Error::Store)?.live;
        let mut controllers = Controllers {
            state,
            types,
            config: Arc::new(RwLock::new(config)),
            feed,
            timers: Timers::default(),
            dirty: Dirty::default(),
            recorder: events::Recorder::default(),
            event_expiry: events::Expiry::default(),
            scheduler: scheduler::Scheduler::default(),
            kubelet: kubelet::Kubelet::default(),
            gpu: Default::default(),
            taint_eviction: taint_eviction::TaintEviction::default(),
            daemonsets: daemonset::DaemonSets::default(),
            replicasets: replicaset::ReplicaSets::default(),
            deployments: deployment::Deployments,
            jobs: job::Jobs,
            statefulsets: statefulset::StatefulSets,
            disruption: disruption::Disruption,
            cronjobs: cronjob::CronJobs,
            autoscalers: hpa::Autoscalers::default(),
            gc: gc::Collector::default(),
            quotas: quota::QuotaStatus::default(),
            nodes: None,
            stats: Stats::default(),
        };
        controllers.resync_all();
        // The Events already stored expire an hour after their last write, as their leases would.
        let now = controllers.state.clock.now();
        let all = |_: &Stored| true;
        for stored in controllers.state.store.list("events", None, &all, None, None).items {
            if let Ok(event) = serde_json::from_str::<Value>(&stored.json) {
                let at = controllers.event_expiry.stored(&event, now.as_second());
                controllers.timers.at(at, Wake::EventTtl);
            }
        }
        Ok(controllers)
    }

    /// The catalog and timings, shared: adding an image lets pods waiting for it start at
    /// their next pull attempt.
    pub fn config(&self) -> Arc<RwLock<Config>> {
        self.config.clone()
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The next scheduled wake-up, if any.
    pub fn next_wake(&self) -> Option<Timestamp> {
        self.timers.next()
    }

    /// Runs the controllers until nothing is left to do at the current time.
    pub fn settle(&mut self) -> Result<()> {
        for _ in 0..MAX_ROUNDS {
            if !self.step()? {
                return Ok(());
            }
        }
        Err(Error::NotQuiescent { rounds: MAX_ROUNDS })
    }

    /// Settles, moves a manual clock to the next wake-up and settles again; returns that time,
    /// or `None` when nothing is scheduled.
    pub fn advance_to_next_event(&mut self) -> Result<Option<Timestamp>> {
        self.settle()?;
        let Some(next) = self.timers.next() else { return Ok(None) };
        self.state.clock.advance_to(next);
        self.settle()?;
        Ok(Some(next))
    }

    /// Moves a manual clock forward by `by`, firing every wake-up on the way in order.
    pub fn advance(&mut self, by: SignedDuration) -> Result<()> {
        self.settle()?;
        let target = self.state.clock.now().checked_add(by).unwrap_or_else(|_| self.state.clock.now());
        while let Some(next) = self.timers.next().filter(|next| *next <= target) {
            self.state.clock.advance_to(next);
            self.settle()?;
        }
        self.state.clock.advance_to(target);
        self.settle()
    }

    /// Every object counts as changed (start, or a watch feed that fell behind).
    fn resync_all(&mut self) {
        let store = &self.state.store;
        let all = |_: &Stored| true;
        for stored in store.list("pods", None, &all, None, None).items {
            let key = (stored.namespace.clone(), stored.name.clone());
            self.dirty.pods.insert(key.clone());
            self.dirty.woken_pods.insert(key);
        }
        self.dirty.all_daemonsets = true;
        self.dirty.retry_unschedulable = true;
        self.dirty.nodes_changed = true;
        self.dirty.dependents_changed = true;
        self.dirty.gpu = true;
        self.quotas.resync();
        for (group_resource, into) in [
            ("replicasets.apps", &mut self.dirty.replicasets),
            ("deployments.apps", &mut self.dirty.deployments),
            ("jobs.batch", &mut self.dirty.jobs),
            ("statefulsets.apps", &mut self.dirty.statefulsets),
            ("cronjobs.batch", &mut self.dirty.cronjobs),
        ] {
            for stored in store.list(group_resource, None, &all, None, None).items {
                into.insert((stored.namespace.clone(), stored.name.clone()));
            }
        }
        for stored in store.list("poddisruptionbudgets.policy", None, &all, None, None).items {
            self.dirty.budgets.insert(stored.namespace.clone());
        }
        let now = self.state.clock.now();
        for stored in store.list("horizontalpodautoscalers.autoscaling", None, &all, None, None).items {
            let key = (stored.namespace.clone(), stored.name.clone());
            self.autoscalers.enqueue(&mut self.timers, now, key);
        }
        if let Ok(counts) = store.count_by_type() {
            for (group_resource, _) in counts {
                let deleting = |stored: &Stored| stored.json.contains("\"deletionTimestamp\"");
                for stored in store.list(&group_resource, None, &deleting, None, None).items {
                    self.dirty
                        .finalizing
                        .insert((group_resource.clone(), (stored.namespace.clone(), stored.name.clone())));
                }
            }
        }
        self.nodes = None;
    }

    /// Takes every change event available now.
    fn drain_feed(&mut self) {
        loop {
            match self.feed.try_recv() {
                Ok(event) => self.route(&event),
                Err(TryRecvError::Empty) | Err(TryRecvError::Closed) => return,
                Err(TryRecvError::Lagged(_)) => self.resync_all(),
            }
        }
    }

    /// Marks what a change makes dirty (the informers' event handlers): which controllers an
    /// event wakes. Per kind, outside `kinds::BUILT_IN` on purpose: the
    /// controllers sit above the store and the kinds, and a kind's row must not point up at its
    /// controller (docs/simulator.md, "Adding a kind").
    fn route(&mut self, event: &store::Event) {
        self.stats.events_seen += 1;
        self.quotas.observe(event);
        let object = &event.object;
        let key = (object.namespace.clone(), object.name.clone());
        let deleted = event.event_type == StoreEventType::Deleted;
        match object.group_resource.as_str() {
            "events" => {
                if !deleted {
                    let at = self.event_expiry.written(key, self.state.clock.now().as_second());
                    self.timers.at(at, Wake::EventTtl);
                }
                return;
            }
            "leases.coordination.k8s.io" => return,
            "pods" => {
                self.dirty.pods.insert(key.clone());
                self.dirty.budgets.insert(key.0.clone());
                self.dirty.gpu |= object.json.contains("nvcr.io/nvidia/");
                // Read from what the store keeps beside the JSON: a pod change is not parsed here.
                let terminal = matches!(object.fields.get("status.phase"), Some("Succeeded" | "Failed"));
                if deleted || terminal {
                    // Freed capacity: the scheduler retries unschedulable pods.
                    self.dirty.retry_unschedulable = true;
                }
                match object.controller.as_ref() {
                    Some(owner) => self.owner_changed(&key.0, OwnerRef::from(owner)),
                    None => {
                        if object.json.contains(job::JOB_TRACKING_FINALIZER) {
                            // A tracked pod that lost its Job: the Job controller releases it.
                            self.dirty.jobs.insert((key.0.clone(), String::new()));
                        }
                        self.orphan_changed(&key.0)
                    }
                }
                if let Some(owner) = event.previous.as_ref().and_then(|previous| previous.controller.as_ref())
                {
                    self.owner_changed(&key.0, OwnerRef::from(owner));
                }
                if deleted || object.json.contains("\"ownerReferences\"") {
                    self.dirty.dependents_changed = true;
                }
                return;
            }
            "configmaps" => self.dirty.gpu = true,
            "nodes" => {
                self.nodes = None;
                self.dirty.gpu = true;
                // The NVIDIA config-manager containers on the node read its labels (sim::gpu).
                let on_node = format!("\"nodeName\":\"{}\"", key.1);
                let nvidia = |stored: &Stored| {
                    stored.json.contains("nvcr.io/nvidia/") && stored.json.contains(&on_node)
                };
                for stored in self.state.store.list("pods", None, &nvidia, None, None).items {
                    let key = (stored.namespace.clone(), stored.name.clone());
                    self.dirty.pods.insert(key.clone());
                    self.dirty.woken_pods.insert(key);
                }
                self.dirty.nodes_changed = true;
                self.dirty.all_daemonsets = true;
                self.dirty.retry_unschedulable = true;
            }
            // Its own status write needs no sync (upstream's would find nothing to do).
            "daemonsets.apps" if deleted || !self.daemonsets.wrote_status(&key, event.revision) => {
                self.dirty.daemonsets.insert(key.clone());
            }
            "daemonsets.apps" => {}
            "deployments.apps" => {
                self.dirty.deployments.insert(key.clone());
                self.dirty.budgets.insert(key.0.clone());
            }
            "poddisruptionbudgets.policy" => {
                self.dirty.budgets.insert(key.0.clone());
            }
            "jobs.batch" => {
                self.dirty.jobs.insert(key.clone());
                if let Ok(value) = serde_json::from_str::<Value>(&object.json)
                    && let Some(owner) = controller_of(&value)
                {
                    self.owner_changed(&key.0, owner);
                }
            }
            "cronjobs.batch" => {
                self.dirty.cronjobs.insert(key.clone());
            }
            "horizontalpodautoscalers.autoscaling" if !deleted => {
                self.autoscalers.enqueue(&mut self.timers, self.state.clock.now(), key.clone());
            }
            "statefulsets.apps" => {
                self.dirty.statefulsets.insert(key.clone());
                self.dirty.budgets.insert(key.0.clone());
            }
            "replicasets.apps" => {
                self.dirty.replicasets.insert(key.clone());
                self.dirty.budgets.insert(key.0.clone());
                match serde_json::from_str::<Value>(&object.json).ok().as_ref().and_then(controller_of) {
                    Some(owner) => self.owner_changed(&key.0, owner),
                    None => self.orphan_changed(&key.0),
                }
                self.dirty.dependents_changed = true;
            }
            "controllerrevisions.apps" => {
                if let Ok(value) = serde_json::from_str::<Value>(&object.json)
                    && let Some(owner) = controller_of(&value)
                {
                    match owner.kind.as_str() {
                        "DaemonSet" => self.dirty.daemonsets.insert((key.0.clone(), owner.name)),
                        "StatefulSet" => self.dirty.statefulsets.insert((key.0.clone(), owner.name)),
                        _ => false,
                    };
                }
                self.dirty.dependents_changed = true;
            }
            _ => {}
        }
        if deleted {
            if let Ok(value) = serde_json::from_str::<Value>(&object.json)
                && let Some(uid) = value["metadata"]["uid"].as_str()
            {
                self.dirty.deleted_owners.insert(uid.to_string());
            }
        } else if object.json.contains("\"deletionTimestamp\"") {
            self.dirty.finalizing.insert((object.group_resource.clone(), key));
        }
    }

    /// A dependent changed: its controller syncs.
    fn owner_changed(&mut self, namespace: &str, owner: OwnerRef) {
        let key = (namespace.to_string(), owner.name);
        match owner.kind.as_str() {
            "DaemonSet" => self.dirty.daemonsets.insert(key),
            "ReplicaSet" => self.dirty.replicasets.insert(key),
            "Deployment" => self.dirty.deployments.insert(key),
            "Job" => self.dirty.jobs.insert(key),
            "StatefulSet" => self.dirty.statefulsets.insert(key),
            "CronJob" => self.dirty.cronjobs.insert(key),
            _ => false,
        };
    }

    /// An object without controller changed: any controller in its namespace may adopt it.
    fn orphan_changed(&mut self, namespace: &str) {
        self.dirty.all_daemonsets = true;
        let all = |_: &Stored| true;
        for group_resource in ["replicasets.apps", "deployments.apps"] {
            for stored in self.state.store.list(group_resource, Some(namespace), &all, None, None).items {
                let key = (stored.namespace.clone(), stored.name.clone());
                if group_resource == "replicasets.apps" {
                    self.dirty.replicasets.insert(key);
                } else {
                    self.dirty.deployments.insert(key);
                }
            }
        }
    }

    fn cached_nodes(&mut self) -> Result<NodeCache> {
        if let Some(nodes) = &self.nodes {
            return Ok(nodes.clone());
        }
        let all = |_: &Stored| true;
        let page = self.state.store.list("nodes", None, &all, None, None);
        // A node that does not decode is left out (and reported), never a reason to stop.
        let nodes: Vec<Node> = undecodable::decode_all(page.items.iter().map(|stored| &**stored));
        let index = nodes
            .iter()
            .enumerate()
            .map(|(index, node)| (node.metadata.name.clone().unwrap_or_default(), index))
            .collect();
        let nodes = (Arc::new(nodes), Arc::new(index));
        self.nodes = Some(nodes.clone());
        Ok(nodes)
    }

    /// One round: take changes and due timers, run each controller on what they touch.
    /// Returns whether there was anything to do.
    fn step(&mut self) -> Result<bool> {
        self.drain_feed();
        let now = self.state.clock.now();
        let mut expire_events = false;
        for wake in self.timers.take_due(now) {
            self.stats.wakes += 1;
            match wake {
                Wake::EventTtl => {
                    expire_events = true;
                    false
                }
                Wake::Pod(key) => {
                    self.dirty.woken_pods.insert(key.clone());
                    self.dirty.pods.insert(key)
                }
                Wake::DaemonSet(key) => self.dirty.daemonsets.insert(key),
                Wake::ReplicaSet(key) => self.dirty.replicasets.insert(key),
                Wake::Deployment(key) => self.dirty.deployments.insert(key),
                Wake::Job(key) => self.dirty.jobs.insert(key),
                Wake::Disruption(namespace) => self.dirty.budgets.insert(namespace),
                Wake::CronJob(key) => self.dirty.cronjobs.insert(key),
                Wake::Autoscaler(key) => self.dirty.autoscalers.insert(key),
                Wake::Gpu => {
                    self.dirty.gpu = true;
                    true
                }
            };
        }
        if expire_events {
            let ctx = Ctx { store: &self.state.store, types: &self.types, now };
            if let Some(at) = self.event_expiry.sweep(&ctx, &mut self.recorder) {
                self.timers.at(at, Wake::EventTtl);
            }
        }
        if self.dirty.is_empty() && !self.quotas.has_work() {
            return Ok(expire_events);
        }
        self.stats.steps += 1;
        let dirty = std::mem::take(&mut self.dirty);
        let (nodes, node_index) = self.cached_nodes()?;
        let state = self.state.clone();
        let config = self.config.read().unwrap_or_else(|p| p.into_inner()).clone();
        let mut env = Env {
            ctx: Ctx { store: &state.store, types: &self.types, now },
            recorder: &mut self.recorder,
            timers: &mut self.timers,
            config: &config,
            nodes: &nodes,
            node_index: &node_index,
        };
        let all_types = state.types.read().unwrap_or_else(|p| p.into_inner()).clone();
        // One object a controller cannot handle (a malformed spec) must not stop the others:
        // upstream logs the error and requeues; here the next change retries it.
        report(self.gc.run(
            &mut env,
            &all_types,
            &dirty.deleted_owners,
            &dirty.finalizing,
            dirty.dependents_changed,
        ));
        let daemonsets: Vec<Key> = if dirty.all_daemonsets {
            let all = |_: &Stored| true;
            state
                .store
                .list("daemonsets.apps", None, &all, None, None)
                .items
                .iter()
                .map(|stored| (stored.namespace.clone(), stored.name.clone()))
                .collect()
        } else {
            dirty.daemonsets.iter().cloned().collect()
        };
        for key in &daemonsets {
            report(self.daemonsets.sync(&mut env, key));
        }
        for key in &dirty.deployments {
            report(self.deployments.sync(&mut env, key));
        }
        for key in &dirty.replicasets {
            report(self.replicasets.sync(&mut env, key));
        }
        for key in &dirty.jobs {
            report(self.jobs.sync(&mut env, key));
        }
        for key in &dirty.statefulsets {
            report(self.statefulsets.sync(&mut env, key));
        }
        for key in &dirty.cronjobs {
            report(self.cronjobs.sync(&mut env, key));
        }
        for key in &dirty.autoscalers {
            report(self.autoscalers.sync(&mut env, key));
        }
        report(self.scheduler.run(&mut env, &dirty.pods, dirty.retry_unschedulable));
        report(self.taint_eviction.run(&mut env, &dirty.pods, dirty.nodes_changed));
        report(self.kubelet.run(&mut env, &dirty.pods, &dirty.woken_pods, &mut self.gpu));
        report(self.quotas.run(&env.ctx, &all_types));
        // After the kubelet, so a pod's readiness counts in the same step.
        for namespace in &dirty.budgets {
            report(self.disruption.sync_namespace(&mut env, namespace));
        }
        // The NVIDIA containers the kubelet runs publish node capacity and labels (sim::gpu).
        if dirty.gpu {
            match self.gpu.sync(&state.store, &self.types.nodes, &config.gpus, now) {
                Ok(Some(at)) => self.timers.at(at, Wake::Gpu),
                Ok(None) => {}
                Err(error) => tracing::warn!(%error, "gpu components"),
            }
            state.container_logs.publish(self.gpu.container_logs());
        }
        self.recorder.flush(&Ctx { store: &state.store, types: &self.types, now });
        Ok(true)
    }

    /// The background loop of a served simulator: settle, then wait for a store change or the
    /// next wake-up (on the wall, scaled by the clock's speed).
    pub async fn run(mut self) {
        loop {
            if let Err(error) = self.settle() {
                tracing::warn!(%error, "controllers");
            }
            let wait = self.timers.next().and_then(|next| self.state.clock.wall_time_until(next));
            let sleep = async {
                match wait {
                    Some(wait) => tokio::time::sleep(wait).await,
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                received = self.feed.recv() => match received {
                    Ok(event) => self.route(&event),
                    Err(broadcast::error::RecvError::Lagged(_)) => self.resync_all(),
                    Err(broadcast::error::RecvError::Closed) => return,
                },
                () = sleep => {}
            }
        }
    }
}

/// Starts the controllers of a served simulator on a thread of their own (after the topology is
/// seeded); abort the handle to stop them. Their reconcile work is CPU-bound at cluster scale
/// (issue #17): on the server's runtime it held a worker thread that requests and watches were
/// waiting for, so it runs on a single-threaded runtime of its own instead.
///
/// ```no_run
/// # fn demo(state: lab_runner_sim::server::AppState) -> Result<(), lab_runner_sim::controllers::Error> {
/// use lab_runner_sim::controllers::{self, Config};
/// let handle = controllers::spawn(state, Config::defaults())?;
/// handle.abort();
/// # Ok(()) }
/// ```
pub fn spawn(state: AppState, config: Config) -> Result<tokio::task::JoinHandle<()>> {
    let controllers = Controllers::new(state, config)?;
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_time().build().map_err(Error::Thread)?;
    // The thread runs the runtime until the task ends or is aborted (which drops `running`).
    let (running, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = runtime.spawn(async move {
        let _running = running;
        controllers.run().await;
    });
    std::thread::Builder::new()
        .name("sim-controllers".into())
        .spawn(move || {
            runtime.block_on(async {
                let _ = stopped.await;
            })
        })
        .map_err(Error::Thread)?;
    Ok(task)
}

fn report(result: Result<()>) {
    if let Err(error) = result {
        tracing::warn!(%error, "controller sync failed");
    }
}

/// An owner reference that is the controller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct OwnerRef {
    pub(crate) kind: String,
    pub(crate) name: String,
    pub(crate) uid: String,
}

impl From<&store::ControllerRef> for OwnerRef {
    fn from(reference: &store::ControllerRef) -> OwnerRef {
        OwnerRef {
            kind: reference.kind.to_string(),
            name: reference.name.to_string(),
            uid: reference.uid.to_string(),
        }
    }
}

/// The controller owner reference of an object (`metav1.GetControllerOf`).
pub(crate) fn controller_of(object: &Value) -> Option<OwnerRef> {
    object["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == Value::Bool(true))
        .map(|r| OwnerRef {
            kind: r["kind"].as_str().unwrap_or_default().to_string(),
            name: r["name"].as_str().unwrap_or_default().to_string(),
            uid: r["uid"].as_str().unwrap_or_default().to_string(),
        })
}
