//! The DaemonSet controller: pods per node, RollingUpdate/OnDelete, ControllerRevision history
//! and status, as kube-controller-manager v1.33 does it.
//!
//! Upstream: `pkg/controller/daemon/daemon_controller.go` (`syncDaemonSet`, `manage`,
//! `podsShouldBeOnNode`, `syncNodes`, `updateDaemonSetStatus`, `storeDaemonSetStatus`) and
//! `pkg/controller/daemon/update.go` (`rollingUpdate`, `constructHistory`, `cleanupHistory`,
//! `getPatch`); the behaviour is described in `docs/daemonset.md`. What to create and delete —
//! placement, pod identity, budgets, the `manage` and `rollingUpdate` plans, hash and counters —
//! is decided by the pure functions of `k8s::daemon`; this controller reads the store, carries
//! the plans out and writes revisions and status.
//!
//! Expectations: upstream never creates/deletes in `manage` and deletes in `rollingUpdate` in
//! one sync (the second waits for the first's expectations). Writes here are synchronous, so
//! the same rule is kept by running `rollingUpdate` only when `manage` changed nothing; the
//! store change events of `manage` wake the next sync.

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use k8s_openapi::{
    api::{
        apps::v1::DaemonSet,
        core::v1::{Node, Pod},
    },
    apimachinery::pkg::apis::meta::v1::LabelSelector,
    jiff::{SignedDuration, Timestamp},
};
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake, controller_of, decode,
    events::{EventType, Involved, Source},
    history,
    owners::{self, Owner, selector_is_empty},
};
use crate::{
    k8s::daemon::{
        self as logic, CONTROLLER_REVISION_HASH_LABEL, DaemonPlacement, DaemonSetEventType,
        DeletedTerminalPods, NodePlacement, UpdateStrategy, is_pod_available, is_pod_ready,
        nodes_to_daemon_pods,
    },
    store::{self, DeleteOptions, DryRun, Stored, Subresource},
};

/// `BurstReplicas` of kube-controller-manager: creates (and deletes) per sync.
const BURST_REPLICAS: usize = 250;

/// The `source.component` of the controller's events.
const COMPONENT: &str = "daemonset-controller";

/// The DaemonSet controller. Everything it decides on is read from the store at each sync; it
/// keeps only the pods it decoded, by store revision, so a pod that did not change is not
/// parsed again (issue #17: at 1,000 nodes, re-parsing every daemon pod at every sync was most
/// of a rollout's CPU time).
#[derive(Debug, Default)]
pub(crate) struct DaemonSets {
    decoded: HashMap<Key, DecodedPods>,
    /// The revision of each DaemonSet's last status write by this controller: that write comes
    /// back as a change, and a sync of it would find nothing to do (the write's resourceVersion
    /// precondition guarantees nothing else changed the object in between).
    status_written: HashMap<Key, u64>,
}

/// A DaemonSet's claimed pods as last decoded: name → (store revision, pod).
type DecodedPods = HashMap<String, (u64, Arc<Pod>)>;

fn pod_hash(pod: &Pod) -> Option<&str> {
    pod.metadata.labels.as_ref()?.get(CONTROLLER_REVISION_HASH_LABEL).map(String::as_str)
}

/// One DaemonSet being synced.
struct Sync<'a> {
    ds: DaemonSet,
    value: Value,
    key: &'a Key,
    uid: String,
    involved: Involved,
    /// `nodeShouldRunDaemonPod` for each of `Env::nodes`, in order, worked out once per sync.
    placements: Vec<NodePlacement>,
}

impl Sync<'_> {
    /// Each node with the DaemonSet's placement on it.
    fn placed<'n>(&self, nodes: &'n [Node]) -> impl Iterator<Item = (&'n Node, &NodePlacement)> {
        nodes.iter().zip(&self.placements)
    }
}

/// The current revision found or made by `constructHistory`.
struct History {
    hash: String,
    old: Vec<Value>,
}

impl DaemonSets {
    /// `syncDaemonSet` for one DaemonSet.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let Some(stored) = env.ctx.store.get("daemonsets.apps", &key.0, &key.1) else {
            self.decoded.remove(key);
            self.status_written.remove(key);
            return Ok(());
        };
        let value: Value = stored.value().map_err(Error::Store)?;
        let ds: DaemonSet = decode(&stored)?;
        if ds.metadata.deletion_timestamp.is_some() {
            self.decoded.remove(key);
            return Ok(());
        }
        let placement = DaemonPlacement::new(&ds);
        let sync = Sync {
            uid: ds.metadata.uid.clone().unwrap_or_default(),
            involved: Involved::of(&value),
            placements: env.nodes.iter().map(|node| placement.check(node)).collect(),
            ds,
            value,
            key,
        };
        let selector = sync.ds.spec.as_ref().map(|s| s.selector.clone()).unwrap_or_default();
        if selector_is_empty(&selector) {
            env.recorder.record(
                &env.ctx,
                &sync.involved,
                EventType::Warning,
                "SelectingAll",
                "This daemon set is selecting all pods. A non-empty selector is required.",
                &Source::component(COMPONENT),
            );
            return Ok(());
        }
        let Some(history) = self.construct_history(env, &sync)? else { return Ok(()) };
        let mut pods = self.claim_pods(env, &sync, &selector)?;
        let by_node = pods_by_node(&pods);
        let changed = self.manage(env, &sync, &by_node, &history.hash)?;
        let mut changed_by_update = false;
        if !changed && logic::update_strategy(&sync.ds) == UpdateStrategy::RollingUpdate {
            changed_by_update = self.rolling_update(env, &sync, &by_node, &history.hash)?;
        }
        drop(by_node);
        if changed || changed_by_update {
            pods = self.claim_pods(env, &sync, &selector)?;
        }
        self.cleanup_history(env, &sync, &history, &pods)?;
        self.update_status(env, &sync, &pods, &pods_by_node(&pods), &history.hash)
    }

    /// Pods the DS controls and still selects (`ControllerRefManager.ClaimPods`), decoded once
    /// per store revision.
    fn claim_pods(
        &mut self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        selector: &LabelSelector,
    ) -> Result<Vec<Arc<Pod>>> {
        let owner = Owner {
            api_version: "apps/v1",
            kind: "DaemonSet",
            namespace: &sync.key.0,
            name: &sync.key.1,
            uid: &sync.uid,
        };
        let pods = env.ctx.types.pods.clone();
        let claimed = owners::claim_stored(env, &pods, &owner, selector)?;
        let mut previous = self.decoded.remove(sync.key).unwrap_or_default();
        let mut decoded = DecodedPods::with_capacity(claimed.len());
        let mut out = Vec::with_capacity(claimed.len());
        for stored in claimed {
            let pod = match previous.remove(&stored.name) {
                Some((revision, pod)) if revision == stored.revision => pod,
                _ => Arc::new(decode::<Pod>(&stored)?),
            };
            decoded.insert(stored.name.clone(), (stored.revision, pod.clone()));
            out.push(pod);
        }
        self.decoded.insert(sync.key.clone(), decoded);
        Ok(out)
    }

    /// `constructHistory` (update.go): find or create the revision matching the template; a
    /// matching older revision is renumbered to the highest number (that is what makes
    /// `rollout history` renumber after an undo). `None` when a hash collision was recorded
    /// and the sync must run again.
    fn construct_history(&self, env: &mut Env<'_>, sync: &Sync<'_>) -> Result<Option<History>> {
        let (store, types) = (env.ctx.store, env.ctx.types);
        let owned = |stored: &Stored| stored.json.contains(&sync.uid);
        let revisions: Vec<Value> = store
            .list("controllerrevisions.apps", Some(&sync.key.0), &owned, None, None)
            .items
            .iter()
            .map(|stored| stored.value().map_err(Error::Store))
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .filter(|value| controller_of(value).is_some_and(|owner| owner.uid == sync.uid))
            .collect();
        let patch = history::template_patch(&sync.value);
        let (current, old): (Vec<Value>, Vec<Value>) =
            revisions.into_iter().partition(|rev| history::normalized_patch(&rev["data"]) == patch);
        let next_revision = old.iter().filter_map(|rev| rev["revision"].as_i64()).max().unwrap_or(0) + 1;
        let template = sync.ds.spec.as_ref().map(|s| s.template.clone()).unwrap_or_default();
        let collision_count = sync.ds.status.as_ref().and_then(|s| s.collision_count);
        let hash = logic::compute_hash(&template, collision_count)?;
        let current = current.into_iter().max_by_key(|rev| rev["revision"].as_i64().unwrap_or(0));
        let hash = match current {
            Some(mut current) => {
                if current["revision"].as_i64().unwrap_or(0) < next_revision {
                    current["revision"] = json!(next_revision);
                    store
                        .update(&types.controllerrevisions, current.clone(), Subresource::Main, DryRun::Off)
                        .map_err(Error::Store)?;
                }
                current["metadata"]["labels"][CONTROLLER_REVISION_HASH_LABEL]
                    .as_str()
                    .unwrap_or(&hash)
                    .to_string()
            }
            None => {
                let name = format!("{}-{hash}", sync.key.1);
                let mut labels = sync.value["spec"]["template"]["metadata"]["labels"].clone();
                if !labels.is_object() {
                    labels = json!({});
                }
                labels[CONTROLLER_REVISION_HASH_LABEL] = json!(hash);
                let mut metadata = json!({
                    "name": name,
                    "namespace": sync.key.0,
                    "labels": labels,
                    "ownerReferences": [controller_ref(sync)],
                });
                if let Some(annotations) = sync.value["metadata"].get("annotations") {
                    metadata["annotations"] = annotations.clone();
                }
                let revision = json!({
                    "apiVersion": "apps/v1",
                    "kind": "ControllerRevision",
                    "metadata": metadata,
                    "data": patch,
                    "revision": next_revision,
                });
                match store.create(&types.controllerrevisions, revision) {
                    Ok(_) => {}
                    Err(store::Error::AlreadyExists { .. }) => {
                        // Same name, different template: bump collisionCount and retry
                        // (update.go `dedupCurHistories`/`controller.ComputeHash` collision path).
                        let mut value = sync.value.clone();
                        let count = value["status"]["collisionCount"].as_i64().unwrap_or(0) + 1;
                        value["status"]["collisionCount"] = json!(count);
                        store
                            .update(&types.daemonsets, value, Subresource::Status, DryRun::Off)
                            .map_err(Error::Store)?;
                        return Ok(None);
                    }
                    Err(error) => return Err(Error::Store(error)),
                }
                hash
            }
        };
        Ok(Some(History { hash, old }))
    }

    /// `manage` + `podsShouldBeOnNode` ([`logic::manage_plan_placed`]), carried out by
    /// `syncNodes`. Returns whether it created or deleted.
    fn manage(&self, env: &mut Env<'_>, sync: &Sync<'_>, by_node: &ByNode<'_>, hash: &str) -> Result<bool> {
        let plan = logic::manage_plan_placed(&sync.ds, sync.placed(env.nodes), by_node, hash, env.ctx.now);
        let source = Source::component(COMPONENT);
        let failed = plan.failed_pods.iter().map(|failed| &failed.event);
        for event in failed.chain(&plan.events) {
            let type_ = match event.type_ {
                DaemonSetEventType::Normal => EventType::Normal,
                DaemonSetEventType::Warning => EventType::Warning,
            };
            env.recorder.record(&env.ctx, &sync.involved, type_, event.reason, &event.message, &source);
        }
        // Upstream backs off per node (1 s doubling to 15 min) before deleting a failed pod again;
        // the simulator deletes it at once.
        let mut delete = plan.delete_pods;
        delete.extend(plan.failed_pods.into_iter().map(|failed| failed.pod));
        self.sync_nodes(env, sync, &delete, &plan.create_on_nodes, hash)
    }

    /// `rollingUpdate` (update.go, [`logic::rolling_update_plan_placed`]): deletes old pods
    /// within maxUnavailable, or with maxSurge creates new pods beside old ones. Returns whether
    /// it changed anything.
    fn rolling_update(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        by_node: &ByNode<'_>,
        hash: &str,
    ) -> Result<bool> {
        let plan =
            logic::rolling_update_plan_placed(&sync.ds, sync.placed(env.nodes), by_node, hash, env.ctx.now)?;
        self.sync_nodes(env, sync, &plan.delete_pods, &plan.create_on_nodes, hash)
    }

    /// `syncNodes`: deletes, then creates (at most [`BURST_REPLICAS`] each), with the
    /// `SuccessfulDelete`/`SuccessfulCreate` events (`controller_utils.go` RealPodControl).
    fn sync_nodes(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        delete: &[String],
        create_on: &[String],
        hash: &str,
    ) -> Result<bool> {
        let (store, types) = (env.ctx.store, env.ctx.types);
        let source = Source::component(COMPONENT);
        let mut changed = false;
        for name in delete.iter().take(BURST_REPLICAS) {
            match store.delete(&types.pods, &sync.key.0, name, &DeleteOptions::default()) {
                Ok(_) => {
                    changed = true;
                    let message = format!("Deleted pod: {name}");
                    env.recorder.record(
                        &env.ctx,
                        &sync.involved,
                        EventType::Normal,
                        "SuccessfulDelete",
                        &message,
                        &source,
                    );
                }
                Err(store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::Store(error)),
            }
        }
        if create_on.is_empty() {
            return Ok(changed);
        }
        let labels = logic::daemon_pod_labels(&sync.ds, hash)?;
        let template_annotations = sync.value["spec"]["template"]["metadata"]["annotations"].clone();
        for node in create_on.iter().take(BURST_REPLICAS) {
            let spec = serde_json::to_value(logic::daemon_pod_spec(&sync.ds, node)).map_err(Error::Encode)?;
            let mut metadata = json!({
                "generateName": format!("{}-", sync.key.1),
                "namespace": sync.key.0,
                "labels": labels,
                "ownerReferences": [controller_ref(sync)],
            });
            if template_annotations.is_object() {
                metadata["annotations"] = template_annotations.clone();
            }
            let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
            match store.create(&types.pods, pod) {
                Ok(created) => {
                    changed = true;
                    let name = created["metadata"]["name"].as_str().unwrap_or_default();
                    let message = format!("Created pod: {name}");
                    env.recorder.record(
                        &env.ctx,
                        &sync.involved,
                        EventType::Normal,
                        "SuccessfulCreate",
                        &message,
                        &source,
                    );
                }
                Err(error) => {
                    // Upstream stops the slow-start batch and records FailedCreate.
                    let message = format!("Error creating: {error}");
                    env.recorder.record(
                        &env.ctx,
                        &sync.involved,
                        EventType::Warning,
                        "FailedCreate",
                        &message,
                        &source,
                    );
                    break;
                }
            }
        }
        Ok(changed)
    }

    /// `cleanupHistory`: keeps `revisionHistoryLimit` old revisions, oldest removed first,
    /// never one whose hash a pod still carries.
    fn cleanup_history(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        history: &History,
        pods: &[Arc<Pod>],
    ) -> Result<()> {
        let limit =
            sync.ds.spec.as_ref().and_then(|s| s.revision_history_limit).unwrap_or(10).max(0) as usize;
        if history.old.len() <= limit {
            return Ok(());
        }
        let live: BTreeSet<&str> = pods.iter().filter_map(|pod| pod_hash(pod)).collect();
        let mut old: Vec<&Value> = history.old.iter().collect();
        old.sort_by_key(|rev| rev["revision"].as_i64().unwrap_or(0));
        let mut to_kill = history.old.len() - limit;
        for rev in old {
            if to_kill == 0 {
                break;
            }
            let hash = rev["metadata"]["labels"][CONTROLLER_REVISION_HASH_LABEL].as_str().unwrap_or_default();
            if live.contains(hash) {
                continue;
            }
            let name = rev["metadata"]["name"].as_str().unwrap_or_default();
            match env.ctx.store.delete(
                &env.ctx.types.controllerrevisions,
                &sync.key.0,
                name,
                &DeleteOptions::default(),
            ) {
                Ok(_) | Err(store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::Store(error)),
            }
            to_kill -= 1;
        }
        Ok(())
    }

    /// Whether the DaemonSet's change at `revision` is this controller's own status write.
    pub(crate) fn wrote_status(&self, key: &Key, revision: u64) -> bool {
        self.status_written.get(key) == Some(&revision)
    }

    /// `updateDaemonSetStatus` + `storeDaemonSetStatus`: written only when a counter changed or
    /// observedGeneration is behind; with minReadySeconds, a wake-up when the next ready pod
    /// becomes available.
    fn update_status(
        &mut self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        pods: &[Arc<Pod>],
        by_node: &ByNode<'_>,
        hash: &str,
    ) -> Result<()> {
        let now = env.ctx.now;
        let counters = logic::daemonset_status_placed(&sync.ds, sync.placed(env.nodes), by_node, hash, now);
        let current = sync.value.get("status").cloned().unwrap_or_else(|| json!({}));
        let mut status = json!({
            "currentNumberScheduled": counters.current_number_scheduled,
            "numberMisscheduled": counters.number_misscheduled,
            "desiredNumberScheduled": counters.desired_number_scheduled,
            "numberReady": counters.number_ready,
        });
        let generation = sync.value["metadata"]["generation"].as_i64().unwrap_or(0);
        // omitempty fields (apps/v1 DaemonSetStatus).
        for (field, value) in [
            ("observedGeneration", generation),
            ("updatedNumberScheduled", i64::from(counters.updated_number_scheduled)),
            ("numberAvailable", i64::from(counters.number_available)),
            ("numberUnavailable", i64::from(counters.number_unavailable)),
        ] {
            if value != 0 {
                status[field] = json!(value);
            }
        }
        for kept in ["collisionCount", "conditions"] {
            if let Some(value) = current.get(kept) {
                status[kept] = value.clone();
            }
        }
        if status != current {
            let mut value = sync.value.clone();
            value["status"] = status;
            match env.ctx.store.update(&env.ctx.types.daemonsets, value, Subresource::Status, DryRun::Off) {
                Ok(written) => {
                    if let Some(revision) = store::revision_of(&written) {
                        self.status_written.insert(sync.key.clone(), revision);
                    }
                }
                Err(store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::Store(error)),
            }
        }
        let min_ready = sync.ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
        if min_ready > 0
            && counters.number_ready != counters.number_available
            && let Some(at) = next_available(pods, min_ready, now)
        {
            env.timers.at(at, Wake::DaemonSet(sync.key.clone()));
        }
        Ok(())
    }
}

/// A DaemonSet's pods by target node, oldest first (`getNodesToDaemonPods`).
type ByNode<'p> = std::collections::BTreeMap<String, Vec<&'p Pod>>;

/// [`ByNode`] of the claimed pods, terminal deleted pods left out.
fn pods_by_node(pods: &[Arc<Pod>]) -> ByNode<'_> {
    nodes_to_daemon_pods(pods.iter().map(|pod| &**pod), DeletedTerminalPods::Skip)
}

/// When the earliest ready-but-not-yet-available pod becomes available (strictly after
/// `lastTransitionTime + minReadySeconds`).
fn next_available(pods: &[Arc<Pod>], min_ready: i32, now: Timestamp) -> Option<Timestamp> {
    pods.iter()
        .filter(|pod| is_pod_ready(pod) && !is_pod_available(pod, min_ready, now))
        .filter_map(|pod| {
            let conditions = pod.status.as_ref()?.conditions.as_ref()?;
            let ready = conditions.iter().find(|c| c.type_ == "Ready")?;
            let since = ready.last_transition_time.as_ref()?.0;
            since.checked_add(SignedDuration::from_secs(i64::from(min_ready) + 1)).ok()
        })
        .filter(|at| *at > now)
        .min()
}

fn controller_ref(sync: &Sync<'_>) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "name": sync.key.1,
        "uid": sync.uid,
        "controller": true,
        "blockOwnerDeletion": true,
    })
}
