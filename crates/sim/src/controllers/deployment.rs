//! The Deployment controller: ReplicaSets per template, RollingUpdate and Recreate, revisions,
//! status and the Available/Progressing conditions `kubectl rollout status` reads.
//!
//! Upstream `pkg/controller/deployment/` (v1.33): `sync.go` (`getNewReplicaSet`,
//! `calculateStatus`, `scaleReplicaSetAndRecordEvent`: "Scaled up replica set %s from %d to %d",
//! `cleanupDeployment`), `rolling.go` (`reconcileNewReplicaSet`, `reconcileOldReplicaSets`,
//! `cleanupUnhealthyReplicas`, `scaleDownOldReplicaSetsForRollingUpdate`), `recreate.go`,
//! `progress.go` (`syncRolloutStatus`) and `util/deployment_util.go` (`NewRSNewReplicas`,
//! `MaxUnavailable`, `ResolveFenceposts`, condition reasons and messages, the
//! `deployment.kubernetes.io/revision` annotation).

use k8s_openapi::{
    api::{apps::v1::Deployment, core::v1::PodTemplateSpec},
    apimachinery::pkg::util::intstr::IntOrString,
    jiff::{SignedDuration, Timestamp},
};
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake,
    events::{EventType, Involved, Source},
    owners::{self, Owner, selector_is_empty},
    timestamp,
};
use crate::{
    k8s::daemon::{Rounding, compute_hash, scaled_value},
    store::{self, DeleteOptions, DryRun, Subresource},
};

const COMPONENT: &str = "deployment-controller";
const REVISION: &str = "deployment.kubernetes.io/revision";
const HASH_LABEL: &str = "pod-template-hash";

/// The Deployment controller (stateless between syncs).
#[derive(Debug, Default)]
pub(crate) struct Deployments;

fn replicas_of(rs: &Value) -> i64 {
    rs["spec"]["replicas"].as_i64().unwrap_or(1)
}

fn status_of(rs: &Value, field: &str) -> i64 {
    rs["status"][field].as_i64().unwrap_or(0)
}

fn revision_of(rs: &Value) -> i64 {
    rs["metadata"]["annotations"][REVISION].as_str().and_then(|r| r.parse().ok()).unwrap_or(0)
}

/// The template without the `pod-template-hash` label (`EqualIgnoreHash`).
fn without_hash(template: &Value) -> Value {
    let mut template = template.clone();
    if let Some(labels) = template["metadata"]["labels"].as_object_mut() {
        labels.remove(HASH_LABEL);
        if labels.is_empty() {
            template["metadata"].as_object_mut().map(|m| m.remove("labels"));
        }
    }
    template
}

struct Budget {
    max_surge: i64,
    max_unavailable: i64,
}

/// `ResolveFenceposts`: surge rounds up, unavailable down; both 0 makes unavailable 1.
fn budget(deployment: &Deployment, replicas: i64) -> Result<Budget> {
    let rolling =
        deployment.spec.as_ref().and_then(|s| s.strategy.as_ref()).and_then(|s| s.rolling_update.as_ref());
    let quarter = IntOrString::String("25%".into());
    let surge = rolling.and_then(|r| r.max_surge.clone()).unwrap_or_else(|| quarter.clone());
    let unavailable = rolling.and_then(|r| r.max_unavailable.clone()).unwrap_or(quarter);
    let max_surge = scaled_value(&surge, replicas, Rounding::Up, "MaxSurge")?;
    let mut max_unavailable = scaled_value(&unavailable, replicas, Rounding::Down, "MaxUnavailable")?;
    if max_surge == 0 && max_unavailable == 0 {
        max_unavailable = 1;
    }
    Ok(Budget { max_surge, max_unavailable: max_unavailable.min(replicas) })
}

struct Sync<'a> {
    key: &'a Key,
    value: Value,
    deployment: Deployment,
    involved: Involved,
    replicas: i64,
}

impl Deployments {
    /// `syncDeployment` for one Deployment.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let Some(stored) = env.ctx.store.get("deployments.apps", &key.0, &key.1) else { return Ok(()) };
        let value: Value = stored.value().map_err(Error::Store)?;
        let deployment: Deployment = super::decode(&stored)?;
        if deployment.metadata.deletion_timestamp.is_some() {
            return Ok(());
        }
        let selector = deployment.spec.as_ref().map(|s| s.selector.clone()).unwrap_or_default();
        if selector_is_empty(&selector) {
            return Ok(());
        }
        let sync = Sync {
            key,
            involved: Involved::of(&value),
            replicas: deployment.spec.as_ref().and_then(|s| s.replicas).map(i64::from).unwrap_or(1),
            deployment,
            value,
        };
        let uid = sync.deployment.metadata.uid.clone().unwrap_or_default();
        let owner =
            Owner { api_version: "apps/v1", kind: "Deployment", namespace: &key.0, name: &key.1, uid: &uid };
        let rs_type = env.ctx.types.replicasets.clone();
        let mut all = owners::claim(env, &rs_type, &owner, &selector)?;
        let template = sync.value["spec"]["template"].clone();
        let new_index =
            all.iter().position(|rs| without_hash(&rs["spec"]["template"]) == without_hash(&template));
        let recreate =
            sync.deployment.spec.as_ref().and_then(|s| s.strategy.as_ref()).and_then(|s| s.type_.as_deref())
                == Some("Recreate");
        let paused = sync.deployment.spec.as_ref().and_then(|s| s.paused).unwrap_or(false);
        let mut progressed = None;
        if !paused {
            let new_rs = match new_index {
                Some(index) => Some(self.sync_revision(env, &mut all, index)?),
                None if recreate
                    && all.iter().any(|rs| replicas_of(rs) > 0 || status_of(rs, "replicas") > 0) =>
                {
                    None
                }
                None => {
                    let created = self.create_new(env, &sync, &all, &template, recreate)?;
                    progressed = Some(format!(
                        "Created new replica set \"{}\"",
                        created["metadata"]["name"].as_str().unwrap_or_default()
                    ));
                    all.push(created);
                    Some(all.len() - 1)
                }
            };
            if progressed.is_none() {
                self.roll(env, &sync, &mut all, new_rs, recreate)?;
            }
            self.cleanup(env, &sync, &all, new_rs)?;
        }
        let new_index =
            all.iter().position(|rs| without_hash(&rs["spec"]["template"]) == without_hash(&template));
        let sync = self.sync_deployment_revision(env, sync, new_index.map(|i| revision_of(&all[i])))?;
        self.update_status(env, &sync, &all, new_index, progressed)
    }

    /// `SetDeploymentRevision` in `getNewReplicaSet`: the Deployment carries its new ReplicaSet's
    /// revision as `deployment.kubernetes.io/revision` (kubectl's `rollout undo` reads and
    /// replaces the annotations). Upstream writes it with UpdateStatus, whose strategy keeps
    /// annotations (`pkg/registry/apps/deployment/strategy.go` `PrepareForUpdate` of the status
    /// strategy resets only spec and labels); the simulator's status writes keep none of the
    /// metadata, so the annotation is written through the object itself, which leaves the
    /// generation as it is.
    fn sync_deployment_revision<'k>(
        &self,
        env: &mut Env<'_>,
        sync: Sync<'k>,
        revision: Option<i64>,
    ) -> Result<Sync<'k>> {
        let Some(revision) = revision.map(|r| r.to_string()) else { return Ok(sync) };
        if sync.value["metadata"]["annotations"][REVISION].as_str() == Some(revision.as_str()) {
            return Ok(sync);
        }
        let mut value = sync.value.clone();
        value["metadata"]["annotations"][REVISION] = json!(revision);
        match env.ctx.store.update(&env.ctx.types.deployments, value, Subresource::Main, DryRun::Off) {
            Ok(written) => Ok(Sync { value: written, ..sync }),
            Err(store::Error::NotFound { .. }) => Ok(sync),
            Err(error) => Err(Error::Store(error)),
        }
    }

    /// The new ReplicaSet's revision becomes the highest (an undo renumbers, as upstream).
    fn sync_revision(&self, env: &mut Env<'_>, all: &mut [Value], index: usize) -> Result<usize> {
        let max_old = all
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != index)
            .map(|(_, rs)| revision_of(rs))
            .max()
            .unwrap_or(0);
        if revision_of(&all[index]) <= max_old {
            all[index]["metadata"]["annotations"][REVISION] = json!((max_old + 1).to_string());
            all[index] = self.write_rs(env, all[index].clone())?;
        }
        Ok(index)
    }

    fn write_rs(&self, env: &mut Env<'_>, rs: Value) -> Result<Value> {
        env.ctx
            .store
            .update(&env.ctx.types.replicasets, rs, Subresource::Main, DryRun::Off)
            .map_err(Error::Store)
    }

    fn create_new(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        all: &[Value],
        template: &Value,
        recreate: bool,
    ) -> Result<Value> {
        let typed: PodTemplateSpec = serde_json::from_value(template.clone()).map_err(Error::Encode)?;
        let collision = sync.deployment.status.as_ref().and_then(|s| s.collision_count);
        let hash = compute_hash(&typed, collision)?;
        let mut template = template.clone();
        template["metadata"]["labels"][HASH_LABEL] = json!(hash);
        let mut selector = sync.value["spec"]["selector"].clone();
        selector["matchLabels"][HASH_LABEL] = json!(hash);
        let budget = budget(&sync.deployment, sync.replicas)?;
        let replicas = if recreate || all.is_empty() {
            sync.replicas
        } else {
            // `NewRSNewReplicas`: up to replicas + maxSurge pods in total.
            let total: i64 = all.iter().map(replicas_of).sum();
            (sync.replicas + budget.max_surge - total).clamp(0, sync.replicas)
        };
        let revision = all.iter().map(revision_of).max().unwrap_or(0) + 1;
        let name = format!("{}-{hash}", sync.key.1);
        let rs = json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "name": name, "namespace": sync.key.0,
                "labels": template["metadata"]["labels"].clone(),
                "annotations": {
                    REVISION: revision.to_string(),
                    "deployment.kubernetes.io/desired-replicas": sync.replicas.to_string(),
                    "deployment.kubernetes.io/max-replicas": (sync.replicas + budget.max_surge).to_string(),
                },
                "ownerReferences": [{
                    "apiVersion": "apps/v1", "kind": "Deployment", "name": sync.key.1,
                    "uid": sync.deployment.metadata.uid, "controller": true, "blockOwnerDeletion": true,
                }],
            },
            "spec": {
                "replicas": replicas,
                "minReadySeconds": sync.value["spec"]["minReadySeconds"].as_i64().unwrap_or(0),
                "selector": selector,
                "template": template,
            },
        });
        let created = env.ctx.store.create(&env.ctx.types.replicasets, rs).map_err(Error::Store)?;
        if replicas > 0 {
            let message = format!("Scaled up replica set {name} from 0 to {replicas}");
            let source = Source::component(COMPONENT);
            env.recorder.record(
                &env.ctx,
                &sync.involved,
                EventType::Normal,
                "ScalingReplicaSet",
                &message,
                &source,
            );
        }
        Ok(created)
    }

    fn scale(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        rs: &mut Value,
        to: i64,
        max_surge: i64,
    ) -> Result<()> {
        let from = replicas_of(rs);
        if from == to {
            return Ok(());
        }
        rs["spec"]["replicas"] = json!(to);
        rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] =
            json!(sync.replicas.to_string());
        rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] =
            json!((sync.replicas + max_surge).to_string());
        *rs = self.write_rs(env, rs.clone())?;
        let name = rs["metadata"]["name"].as_str().unwrap_or_default();
        let direction = if to > from { "up" } else { "down" };
        let message = format!("Scaled {direction} replica set {name} from {from} to {to}");
        let source = Source::component(COMPONENT);
        env.recorder.record(
            &env.ctx,
            &sync.involved,
            EventType::Normal,
            "ScalingReplicaSet",
            &message,
            &source,
        );
        Ok(())
    }

    /// One step of the rollout: scale the new ReplicaSet up or the old ones down.
    fn roll(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        all: &mut [Value],
        new_rs: Option<usize>,
        recreate: bool,
    ) -> Result<()> {
        let budget = budget(&sync.deployment, sync.replicas)?;
        let old: Vec<usize> = (0..all.len()).filter(|i| Some(*i) != new_rs).collect();
        if recreate {
            let mut scaled = false;
            for &i in &old {
                if replicas_of(&all[i]) > 0 {
                    self.scale(env, sync, &mut all[i], 0, 0)?;
                    scaled = true;
                }
            }
            if let Some(new) = new_rs
                && !scaled
                && old.iter().all(|&i| status_of(&all[i], "replicas") == 0)
            {
                self.scale(env, sync, &mut all[new], sync.replicas, 0)?;
            }
            return Ok(());
        }
        let Some(new) = new_rs else { return Ok(()) };
        // reconcileNewReplicaSet.
        let new_replicas = replicas_of(&all[new]);
        if new_replicas > sync.replicas {
            return self.scale(env, sync, &mut all[new], sync.replicas, budget.max_surge);
        }
        if new_replicas < sync.replicas {
            let total: i64 = all.iter().map(replicas_of).sum();
            let up = (sync.replicas + budget.max_surge - total).min(sync.replicas - new_replicas);
            if up > 0 {
                return self.scale(env, sync, &mut all[new], new_replicas + up, budget.max_surge);
            }
        }
        // reconcileOldReplicaSets.
        let old_total: i64 = old.iter().map(|&i| replicas_of(&all[i])).sum();
        if old_total == 0 {
            return Ok(());
        }
        let all_total: i64 = all.iter().map(replicas_of).sum();
        let min_available = sync.replicas - budget.max_unavailable;
        let new_unavailable = replicas_of(&all[new]) - status_of(&all[new], "availableReplicas");
        let mut max_scaled_down = all_total - min_available - new_unavailable;
        if max_scaled_down <= 0 {
            return Ok(());
        }
        let mut by_age = old.clone();
        by_age.sort_by_key(|&i| (revision_of(&all[i]), all[i]["metadata"]["creationTimestamp"].to_string()));
        // cleanupUnhealthyReplicas: unavailable old pods go first.
        let mut cleaned = 0;
        for &i in &by_age {
            if max_scaled_down <= 0 {
                break;
            }
            let unhealthy = replicas_of(&all[i]) - status_of(&all[i], "availableReplicas");
            if unhealthy <= 0 {
                continue;
            }
            let down = unhealthy.min(max_scaled_down);
            let to = replicas_of(&all[i]) - down;
            self.scale(env, sync, &mut all[i], to, budget.max_surge)?;
            max_scaled_down -= down;
            cleaned += down;
        }
        // scaleDownOldReplicaSetsForRollingUpdate.
        let available: i64 = all.iter().map(|rs| status_of(rs, "availableReplicas")).sum();
        let mut remaining = (available - min_available).min(max_scaled_down);
        if cleaned > 0 || remaining <= 0 {
            return Ok(());
        }
        for &i in &by_age {
            if remaining <= 0 {
                break;
            }
            let down = replicas_of(&all[i]).min(remaining);
            if down > 0 {
                let to = replicas_of(&all[i]) - down;
                self.scale(env, sync, &mut all[i], to, budget.max_surge)?;
                remaining -= down;
            }
        }
        Ok(())
    }

    /// `cleanupDeployment`: old ReplicaSets with no pods beyond `revisionHistoryLimit` go.
    fn cleanup(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        all: &[Value],
        new_rs: Option<usize>,
    ) -> Result<()> {
        let limit = sync.value["spec"]["revisionHistoryLimit"].as_i64().unwrap_or(10).max(0) as usize;
        let mut idle: Vec<&Value> = all
            .iter()
            .enumerate()
            .filter(|(i, rs)| Some(*i) != new_rs && replicas_of(rs) == 0 && status_of(rs, "replicas") == 0)
            .map(|(_, rs)| rs)
            .collect();
        if idle.len() <= limit {
            return Ok(());
        }
        idle.sort_by_key(|rs| revision_of(rs));
        for rs in idle.iter().take(idle.len() - limit) {
            let name = rs["metadata"]["name"].as_str().unwrap_or_default();
            let rt = env.ctx.types.replicasets.clone();
            match env.ctx.store.delete(&rt, &sync.key.0, name, &DeleteOptions::default()) {
                Ok(_) | Err(store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::Store(error)),
            }
        }
        Ok(())
    }

    /// `calculateStatus` + `syncRolloutStatus`: counters, Available, Progressing and the
    /// ReplicaSets' ReplicaFailure.
    fn update_status(
        &self,
        env: &mut Env<'_>,
        sync: &Sync<'_>,
        all: &[Value],
        new_rs: Option<usize>,
        created: Option<String>,
    ) -> Result<()> {
        let now = env.ctx.now;
        let sum = |field: &str| all.iter().map(|rs| status_of(rs, field)).sum::<i64>();
        let total_spec: i64 = all.iter().map(replicas_of).sum();
        let available = sum("availableReplicas");
        let updated = new_rs.map(|i| status_of(&all[i], "replicas")).unwrap_or(0);
        let actual = sum("replicas");
        let current = sync.value.get("status").cloned().unwrap_or_else(|| json!({}));
        let mut status = json!({});
        let generation = sync.value["metadata"]["generation"].as_i64().unwrap_or(0);
        for (field, count) in [
            ("observedGeneration", generation),
            ("replicas", actual),
            ("updatedReplicas", updated),
            ("readyReplicas", sum("readyReplicas")),
            ("availableReplicas", available),
            ("unavailableReplicas", (total_spec - available).max(0)),
        ] {
            if count != 0 {
                status[field] = json!(count);
            }
        }
        if let Some(collisions) = current.get("collisionCount") {
            status["collisionCount"] = collisions.clone();
        }
        let budget = budget(&sync.deployment, sync.replicas)?;
        let existing = |type_: &str| -> Option<Value> {
            crate::k8s::condition::find(&current["conditions"], type_).cloned()
        };
        let condition = |type_: &str, ok: bool, reason: &str, message: String, update: bool| {
            let previous = existing(type_);
            let same_status =
                previous.as_ref().is_some_and(|p| p["status"] == json!(if ok { "True" } else { "False" }));
            let same = previous.as_ref().is_some_and(|p| {
                same_status && p["reason"] == json!(reason) && p["message"] == json!(message)
            });
            let stamp = timestamp(now);
            let last_update = match (&previous, same && !update) {
                (Some(p), true) => p["lastUpdateTime"].clone(),
                _ => json!(stamp),
            };
            let last_transition = match (&previous, same_status) {
                (Some(p), true) => p["lastTransitionTime"].clone(),
                _ => json!(stamp),
            };
            json!({
                "type": type_, "status": if ok { "True" } else { "False" },
                "lastUpdateTime": last_update, "lastTransitionTime": last_transition,
                "reason": reason, "message": message,
            })
        };
        let available_condition = if available >= sync.replicas - budget.max_unavailable {
            condition(
                "Available",
                true,
                "MinimumReplicasAvailable",
                "Deployment has minimum availability.".into(),
                false,
            )
        } else {
            condition(
                "Available",
                false,
                "MinimumReplicasUnavailable",
                "Deployment does not have minimum availability.".into(),
                false,
            )
        };
        let rs_name =
            new_rs.and_then(|i| all[i]["metadata"]["name"].as_str()).unwrap_or_default().to_string();
        let complete = updated == sync.replicas
            && available == sync.replicas
            && actual == sync.replicas
            && new_rs.is_some();
        let deadline = sync.value["spec"]["progressDeadlineSeconds"].as_i64().unwrap_or(600);
        let previous_progress = existing("Progressing");
        let progressed = ["replicas", "updatedReplicas", "readyReplicas", "availableReplicas"]
            .iter()
            .any(|field| status[*field] != current[*field]);
        let progressing = if let Some(message) = created {
            Some(condition("Progressing", true, "NewReplicaSetCreated", message, true))
        } else if complete {
            Some(condition(
                "Progressing",
                true,
                "NewReplicaSetAvailable",
                format!("ReplicaSet \"{rs_name}\" has successfully progressed."),
                false,
            ))
        } else if progressed || previous_progress.is_none() {
            Some(condition(
                "Progressing",
                true,
                "ReplicaSetUpdated",
                format!("ReplicaSet \"{rs_name}\" is progressing."),
                true,
            ))
        } else {
            let since = previous_progress
                .as_ref()
                .and_then(|p| p["lastUpdateTime"].as_str())
                .and_then(|t| t.parse::<Timestamp>().ok())
                .unwrap_or(now);
            let expires = since.checked_add(SignedDuration::from_secs(deadline)).unwrap_or(since);
            if now > expires {
                Some(condition(
                    "Progressing",
                    false,
                    "ProgressDeadlineExceeded",
                    format!("ReplicaSet \"{rs_name}\" has timed out progressing."),
                    false,
                ))
            } else {
                env.timers.at(
                    expires.checked_add(SignedDuration::from_secs(1)).unwrap_or(expires),
                    Wake::Deployment(sync.key.clone()),
                );
                previous_progress
            }
        };
        let mut conditions = vec![available_condition];
        conditions.extend(progressing);
        conditions.extend(replica_failure(all, new_rs));
        status["conditions"] = json!(conditions);
        if status != current {
            let mut value = sync.value.clone();
            value["status"] = status;
            match env.ctx.store.update(&env.ctx.types.deployments, value, Subresource::Status, DryRun::Off) {
                Ok(_) | Err(store::Error::NotFound { .. }) => {}
                Err(error) => return Err(Error::Store(error)),
            }
        }
        Ok(())
    }
}

/// The ReplicaFailure condition `syncRolloutStatus` moves into the Deployment's status: the new
/// ReplicaSet's, else any other's (`getReplicaFailures`, `pkg/controller/deployment/progress.go`),
/// converted as `util.ReplicaSetToDeploymentCondition` converts it (its transition time is also
/// its update time).
fn replica_failure(all: &[Value], new_rs: Option<usize>) -> Option<Value> {
    let failure_of = |rs: &Value| {
        crate::k8s::condition::find(&rs["status"]["conditions"], "ReplicaFailure").map(|c| {
            json!({
                "type": "ReplicaFailure", "status": c["status"],
                "lastUpdateTime": c["lastTransitionTime"], "lastTransitionTime": c["lastTransitionTime"],
                "reason": c["reason"], "message": c["message"],
            })
        })
    };
    new_rs.and_then(|i| failure_of(&all[i])).or_else(|| all.iter().find_map(failure_of))
}
