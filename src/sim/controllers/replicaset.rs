//! The ReplicaSet controller: keeps `spec.replicas` active pods and reports their counts.
//!
//! Upstream `pkg/controller/replicaset/replica_set.go` (`syncReplicaSet`, `manageReplicas`,
//! `getPodsToDelete`, `calculateStatus` in `replica_set_utils.go`). Events `SuccessfulCreate`
//! ("Created pod: x") and `SuccessfulDelete` ("Deleted pod: x") come from `RealPodControl`.

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
};
use crate::{
    k8s::daemon::{is_pod_available, is_pod_ready},
    sim::store::{self, DeleteOptions, DryRun, Subresource},
};

/// `BurstReplicas` of the ReplicaSet controller.
const BURST_REPLICAS: usize = 500;

const COMPONENT: &str = "replicaset-controller";

/// The ReplicaSet controller (stateless between syncs).
#[derive(Debug, Default)]
pub(crate) struct ReplicaSets;

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
        let mut changed = false;
        if rs.metadata.deletion_timestamp.is_none() {
            changed = self.manage(env, key, &value, &rs, &pods)?;
        }
        let pods = if changed { claimed(env)? } else { pods };
        self.update_status(env, key, &value, &rs, &pods)
    }

    fn manage(
        &self,
        env: &mut Env<'_>,
        key: &Key,
        value: &Value,
        rs: &ReplicaSet,
        pods: &[Pod],
    ) -> Result<bool> {
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
                        return Ok(true);
                    }
                }
            }
            return Ok(true);
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
            return Ok(true);
        }
        Ok(false)
    }

    /// `calculateStatus`: written only when it changes.
    fn update_status(
        &self,
        env: &mut Env<'_>,
        key: &Key,
        value: &Value,
        rs: &ReplicaSet,
        pods: &[Pod],
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
        if let Some(conditions) = current.get("conditions") {
            status["conditions"] = conditions.clone();
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
