//! The ReplicaSet controller: keeps `spec.replicas` active pods and reports their counts.
//!
//! Upstream `pkg/controller/replicaset/replica_set.go` (`syncReplicaSet`, `manageReplicas`,
//! `getPodsToDelete`, `calculateStatus` in `replica_set_utils.go`). Events `SuccessfulCreate`
//! ("Created pod: x") and `SuccessfulDelete` ("Deleted pod: x") come from `RealPodControl`. A
//! create the API refuses (a quota) records `FailedCreate` and sets the `ReplicaFailure`
//! condition, which the Deployment controller copies.

use std::cmp::Ordering;

use k8s_openapi::{
    api::{apps::v1::ReplicaSet, core::v1::Pod},
    jiff::SignedDuration,
};
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake, decode,
    events::{EventType, Involved, Source},
    owners::{self, Owner, selector_is_empty},
    timestamp,
};
use crate::{
    k8s::daemon::{is_pod_available, is_pod_ready},
    store::{self, DeleteOptions, DryRun, Subresource},
};

/// `BurstReplicas` of the ReplicaSet controller.
const BURST_REPLICAS: usize = 500;

const COMPONENT: &str = "replicaset-controller";

/// What `manageReplicas` did: whether it created or deleted pods, and the error a create failed
/// with (the quota refused it, say).
#[derive(Debug, Default)]
struct Managed {
    changed: bool,
    failed_create: Option<String>,
}

/// The status conditions after a sync, as `calculateStatus` keeps them: a failed create adds
/// `ReplicaFailure` (reason `FailedCreate`, the error as message) unless one is there already; a
/// sync without an error removes it. `None`: no conditions at all.
fn replica_failure(current: &Value, failed_create: Option<&str>, now: String) -> Option<Value> {
    let mut conditions: Vec<Value> = current["conditions"].as_array().cloned().unwrap_or_default();
    let present = conditions.iter().any(|c| c["type"] == "ReplicaFailure");
    match failed_create {
        Some(message) if !present => conditions.push(json!({
            "type": "ReplicaFailure", "status": "True", "lastTransitionTime": now,
            "reason": "FailedCreate", "message": message,
        })),
        None if present => conditions.retain(|c| c["type"] != "ReplicaFailure"),
        _ => {}
    }
    (!conditions.is_empty()).then_some(Value::Array(conditions))
}

/// The workqueue's retry delays after a failed sync (`workqueue.DefaultControllerRateLimiter`'s
/// `ItemExponentialFailureRateLimiter(5ms, 1000s)`): 5 ms doubled per failure of the same key.
const RETRY_BASE_MILLIS: i64 = 5;
const RETRY_MAX_SECONDS: i64 = 1000;

/// The ReplicaSet controller; it remembers only how often each ReplicaSet's creates failed in a
/// row, for the retry delay.
#[derive(Debug, Default)]
pub(crate) struct ReplicaSets {
    failures: std::collections::HashMap<Key, u32>,
}

fn is_active(pod: &Pod) -> bool {
    let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
    !matches!(phase, Some("Succeeded" | "Failed")) && pod.metadata.deletion_timestamp.is_none()
}

/// `ActivePodsWithRanks` order for deletion: the pods to delete first sort first.
fn deletion_rank(a: &Pod, b: &Pod) -> Ordering {
    let assigned =
        |p: &Pod| p.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
    let phase_rank = |p: &Pod| match p.status.as_ref().and_then(|s| s.phase.as_deref()) {
        Some("Pending") => 0,
        Some("Unknown") => 1,
        Some("Running") => 2,
        _ => 3,
    };
    let created = |p: &Pod| p.metadata.creation_timestamp.as_ref().map(|t| t.0);
    assigned(a)
        .cmp(&assigned(b))
        .then_with(|| phase_rank(a).cmp(&phase_rank(b)))
        .then_with(|| is_pod_ready(a).cmp(&is_pod_ready(b)))
        // Newer pods go first.
        .then_with(|| created(b).cmp(&created(a)))
}

impl ReplicaSets {
    /// `syncReplicaSet` for one ReplicaSet.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let Some(stored) = env.ctx.store.get("replicasets.apps", &key.0, &key.1) else { return Ok(()) };
        let value: Value = stored.value().map_err(Error::Store)?;
        let rs: ReplicaSet = decode(&stored)?;
        let selector = rs.spec.as_ref().map(|s| s.selector.clone()).unwrap_or_default();
        if selector_is_empty(&selector) {
            return Ok(());
        }
        let uid = rs.metadata.uid.clone().unwrap_or_default();
        let owner =
            Owner { api_version: "apps/v1", kind: "ReplicaSet", namespace: &key.0, name: &key.1, uid: &uid };
        let pods_rt = env.ctx.types.pods.clone();
        // Each pod parsed straight into its type: at 10,000 replicas a list of parsed JSON
        // values first was the simulator's peak memory at restart (issue #17).
        let claimed = |env: &mut Env<'_>| -> Result<Vec<Pod>> {
            owners::claim_stored(env, &pods_rt, &owner, &selector)?
                .iter()
                .map(|stored| decode(stored))
                .collect()
        };
        let pods = claimed(env)?;
        let mut managed = Managed::default();
        if rs.metadata.deletion_timestamp.is_none() {
            managed = self.manage(env, key, &value, &rs, &pods)?;
        }
        let pods = if managed.changed { claimed(env)? } else { pods };
        self.retry_after_failure(env, key, managed.failed_create.is_some());
        self.update_status(env, key, &value, &rs, &pods, managed.failed_create.as_deref())
    }

    /// A sync that failed to create pods is retried, as the workqueue retries a key whose sync
    /// returned an error (`processNextWorkItem` → `AddRateLimited`), so a quota raised later
    /// lets the pods be created; a sync without an error forgets the failures.
    fn retry_after_failure(&mut self, env: &mut Env<'_>, key: &Key, failed: bool) {
        if !failed {
            self.failures.remove(key);
            return;
        }
        let failures = self.failures.entry(key.clone()).or_default();
        let max_millis = RETRY_MAX_SECONDS * 1000;
        let delay_millis =
            if *failures < 30 { (RETRY_BASE_MILLIS << *failures).min(max_millis) } else { max_millis };
        *failures = failures.saturating_add(1);
        let now = env.ctx.now;
        let at = now.checked_add(SignedDuration::from_millis(delay_millis)).unwrap_or(now);
        env.timers.at(at, Wake::ReplicaSet(key.clone()));
    }

    fn manage(
        &self,
        env: &mut Env<'_>,
        key: &Key,
        value: &Value,
        rs: &ReplicaSet,
        pods: &[Pod],
    ) -> Result<Managed> {
        let (store, types) = (env.ctx.store, env.ctx.types);
        let wanted = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1).max(0) as usize;
        let mut active: Vec<&Pod> = pods.iter().filter(|p| is_active(p)).collect();
        let involved = Involved::of(value);
        let source = Source::component(COMPONENT);
        if active.len() < wanted {
            let template = &value["spec"]["template"];
            for _ in 0..(wanted - active.len()).min(BURST_REPLICAS) {
                let mut metadata = json!({
                    "generateName": format!("{}-", key.1),
                    "namespace": key.0,
                    "labels": template["metadata"]["labels"].clone(),
                    "ownerReferences": [{
                        "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": key.1,
                        "uid": rs.metadata.uid, "controller": true, "blockOwnerDeletion": true,
                    }],
                });
                if template["metadata"]["annotations"].is_object() {
                    metadata["annotations"] = template["metadata"]["annotations"].clone();
                }
                let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]});
                match store.create(&types.pods, pod) {
                    Ok(created) => {
                        let message = format!(
                            "Created pod: {}",
                            created["metadata"]["name"].as_str().unwrap_or_default()
                        );
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Normal,
                            "SuccessfulCreate",
                            &message,
                            &source,
                        );
                    }
                    Err(error) => {
                        let message = format!("Error creating: {error}");
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Warning,
                            "FailedCreate",
                            &message,
                            &source,
                        );
                        return Ok(Managed { changed: true, failed_create: Some(error.to_string()) });
                    }
                }
            }
            return Ok(Managed { changed: true, failed_create: None });
        }
        if active.len() > wanted {
            active.sort_by(|a, b| deletion_rank(a, b));
            for pod in active.iter().take((active.len() - wanted).min(BURST_REPLICAS)) {
                let name = pod.metadata.name.clone().unwrap_or_default();
                match store.delete(&types.pods, &key.0, &name, &DeleteOptions::default()) {
                    Ok(_) => {
                        let message = format!("Deleted pod: {name}");
                        env.recorder.record(
                            &env.ctx,
                            &involved,
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
            return Ok(Managed { changed: true, failed_create: None });
        }
        Ok(Managed::default())
    }

    /// `calculateStatus`: written only when it changes. `failed_create` is the error a create
    /// failed with in this sync (`manageReplicasErr`).
    fn update_status(
        &self,
        env: &mut Env<'_>,
        key: &Key,
        value: &Value,
        rs: &ReplicaSet,
        pods: &[Pod],
        failed_create: Option<&str>,
    ) -> Result<()> {
        let now = env.ctx.now;
        let min_ready = rs.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
        let template_labels = rs
            .spec
            .as_ref()
            .and_then(|s| s.template.as_ref())
            .and_then(|t| t.metadata.as_ref())
            .and_then(|m| m.labels.clone())
            .unwrap_or_default();
        let active: Vec<&Pod> = pods.iter().filter(|p| is_active(p)).collect();
        let fully_labeled = active
            .iter()
            .filter(|p| {
                let labels = p.metadata.labels.clone().unwrap_or_default();
                template_labels.iter().all(|(k, v)| labels.get(k) == Some(v))
            })
            .count();
        let ready = active.iter().filter(|p| is_pod_ready(p)).count();
        let available = active.iter().filter(|p| is_pod_available(p, min_ready, now)).count();
        let current = value.get("status").cloned().unwrap_or_else(|| json!({}));
        let mut status = json!({"replicas": active.len()});
        let generation = value["metadata"]["generation"].as_i64().unwrap_or(0);
        for (field, count) in [
            ("fullyLabeledReplicas", fully_labeled as i64),
            ("readyReplicas", ready as i64),
            ("availableReplicas", available as i64),
            ("observedGeneration", generation),
        ] {
            if count != 0 {
                status[field] = json!(count);
            }
        }
        if let Some(conditions) = replica_failure(&current, failed_create, timestamp(now)) {
            status["conditions"] = conditions;
        }
        if status != current {
            let mut value = value.clone();
            value["status"] = status;
            match env.ctx.store.update(&env.ctx.types.replicasets, value, Subresource::Status, DryRun::Off) {
                Ok(_) | Err(store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::Store(error)),
            }
        }
        if min_ready > 0 && ready != available {
            // `updatePod` requeues after minReadySeconds (+1s so the pod is strictly past it).
            let at = now.checked_add(SignedDuration::from_secs(i64::from(min_ready) + 1)).unwrap_or(now);
            env.timers.at(at, Wake::ReplicaSet(key.clone()));
        }
        Ok(())
    }
}
