//! The StatefulSet controller: pods `<name>-<ordinal>` created in order (or in parallel), removed from the highest ordinal, updated by revision, with v1.33 status counters.
//!
//! Upstream (v1.33) `pkg/controller/statefulset/stateful_set_control.go` (`updateStatefulSet`:
//! create missing ordinals, replace failed pods, delete condemned ones from the highest
//! ordinal; with `OrderedReady` one pod at a time, each waiting for its predecessors to be
//! Running and Ready; `updateStatefulSetAfterInvariantEstablished`: a RollingUpdate deletes the
//! highest ordinal at or above the partition that is not at the update revision, once every
//! pod is Running and Ready; `computeReplicaStatus`, `completeRollingUpdate`),
//! `stateful_set_utils.go` (`newStatefulSetPod`: the `statefulset.kubernetes.io/pod-name`,
//! `apps.kubernetes.io/pod-index` and `controller-revision-hash` labels, hostname and
//! subdomain) and `stateful_pod_control.go` (events `create Pod web-0 in StatefulSet web
//! successful`). History follows `pkg/controller/history`: one ControllerRevision per template,
//! named `<set>-<hash>`, its data the template patch with `$patch: replace` as `getPatch`
//! writes it ([`super::history`]); a template that matches an older revision (a `rollout undo`)
//! takes that revision back and renumbers it after the newest (`getStatefulSetRevisions`).
//!
//! Not modelled: volumeClaimTemplates (no PersistentVolumeClaims), minReadySeconds,
//! maxUnavailable, a new pod below the partition taking the current revision's template.

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, controller_of,
    events::{EventType, Involved, Source},
    history,
    owners::{self, Owner, selector_is_empty},
};
use crate::{
    k8s::daemon::compute_hash,
    store::{self, DeleteOptions, DryRun, Stored, Subresource},
};

/// Pod label with the name of the ControllerRevision the pod was made from.
pub const REVISION_LABEL: &str = "controller-revision-hash";
/// Pod label with the pod's own name.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// Pod label with the ordinal (PodIndexLabel, GA in 1.32).
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
/// ControllerRevision label with the template hash (`history.ControllerRevisionHashLabel`).
const REVISION_HASH_LABEL: &str = "controller.kubernetes.io/hash";

const COMPONENT: &str = "statefulset-controller";

/// The StatefulSet controller (stateless between syncs).
#[derive(Debug, Default)]
pub(crate) struct StatefulSets;

/// How pods are created and removed (`spec.podManagementPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PodManagement {
    /// One at a time, in ordinal order, each waiting for the ones before it.
    OrderedReady,
    /// All at once.
    Parallel,
}

/// Where a pod of the set is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PodState {
    /// Being deleted.
    Terminating,
    /// Phase Failed or Succeeded: replaced.
    Finished,
    /// Running with the Ready condition.
    RunningAndReady,
    /// Anything else (Pending, pulling, not ready).
    Starting,
}

fn pod_state(pod: &Value) -> PodState {
    let ready = crate::k8s::condition::object_condition_true(pod, "Ready");
    if !pod["metadata"]["deletionTimestamp"].is_null() {
        return PodState::Terminating;
    }
    match pod["status"]["phase"].as_str() {
        Some("Failed" | "Succeeded") => PodState::Finished,
        Some("Running") if ready => PodState::RunningAndReady,
        _ => PodState::Starting,
    }
}

/// `getParentNameAndOrdinal`: the ordinal of `<set>-<n>`, when the pod's name has that form.
fn ordinal_of(set_name: &str, pod: &Value) -> Option<i64> {
    let name = pod["metadata"]["name"].as_str()?;
    let ordinal = name.strip_prefix(set_name)?.strip_prefix('-')?;
    if ordinal.is_empty() || !ordinal.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    ordinal.parse().ok()
}

/// The revisions of one sync: the template's (update) and the one the pods are at (current).
struct Revisions {
    update: String,
    current: String,
}

/// One StatefulSet being synced.
struct SetCtx<'a> {
    key: &'a Key,
    set: Value,
    uid: String,
    involved: Involved,
    source: Source,
}

impl StatefulSets {
    /// `sync` → `updateStatefulSet` for one StatefulSet.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let Some(stored) = env.ctx.store.get("statefulsets.apps", &key.0, &key.1) else { return Ok(()) };
        let set: Value = stored.value().map_err(Error::Store)?;
        let selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
            serde_json::from_value(set["spec"]["selector"].clone()).unwrap_or_default();
        if selector_is_empty(&selector) {
            return Ok(());
        }
        let uid = set["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        let ctx =
            SetCtx { key, involved: Involved::of(&set), source: Source::component(COMPONENT), set, uid };
        let owner = Owner {
            api_version: "apps/v1",
            kind: "StatefulSet",
            namespace: &key.0,
            name: &key.1,
            uid: &ctx.uid,
        };
        let pods_rt = env.ctx.types.pods.clone();
        let pods = owners::claim(env, &pods_rt, &owner, &selector)?;
        let Some(revisions) = self.construct_history(env, &ctx)? else { return Ok(()) };
        let changed = ctx.set["metadata"]["deletionTimestamp"].is_null()
            && self.update_stateful_set(env, &ctx, &revisions, &pods)?;
        let pods = if changed { owners::claim(env, &pods_rt, &owner, &selector)? } else { pods };
        self.update_status(env, &ctx, &revisions, &pods)
    }

    /// The update revision (found by its data, else created as `<set>-<hash>` numbered after
    /// the others) and the current one (`status.currentRevision`, else the update revision).
    /// `None` after recording a hash collision (the next sync retries).
    fn construct_history(&self, env: &mut Env<'_>, ctx: &SetCtx<'_>) -> Result<Option<Revisions>> {
        let (store, types) = (env.ctx.store, env.ctx.types);
        let owned = |stored: &Stored| stored.json.contains(&ctx.uid);
        let revisions: Vec<Value> = store
            .list("controllerrevisions.apps", Some(&ctx.key.0), &owned, None, None)
            .items
            .iter()
            .filter_map(|stored| stored.value().ok())
            .filter(|value| controller_of(value).is_some_and(|owner| owner.uid == ctx.uid))
            .collect();
        let data = history::template_patch(&ctx.set);
        let number = revisions.iter().filter_map(|rev| rev["revision"].as_i64()).max().unwrap_or(0) + 1;
        // `getStatefulSetRevisions`: the newest equal revision; unless it is the newest of all, it
        // is taken back with the next number (`UpdateControllerRevision`).
        let equal = revisions
            .iter()
            .filter(|rev| history::normalized_patch(&rev["data"]) == data)
            .max_by_key(|rev| rev["revision"].as_i64().unwrap_or(0));
        let update = match equal {
            Some(found) => {
                if found["revision"].as_i64().unwrap_or(0) < number - 1 {
                    let mut renumbered = found.clone();
                    renumbered["revision"] = json!(number);
                    store
                        .update(&types.controllerrevisions, renumbered, Subresource::Main, DryRun::Off)
                        .map_err(Error::Store)?;
                }
                found["metadata"]["name"].as_str().unwrap_or_default().to_string()
            }
            None => {
                let spec_template: PodTemplateSpec =
                    serde_json::from_value(ctx.set["spec"]["template"].clone()).map_err(Error::Encode)?;
                let collision_count = ctx.set["status"]["collisionCount"].as_i64().map(|c| c as i32);
                let hash = compute_hash(&spec_template, collision_count)?;
                let name = format!("{}-{hash}", ctx.key.1);
                let mut labels = ctx.set["spec"]["template"]["metadata"]["labels"].clone();
                if !labels.is_object() {
                    labels = json!({});
                }
                labels[REVISION_HASH_LABEL] = json!(hash);
                let revision = json!({
                    "apiVersion": "apps/v1", "kind": "ControllerRevision",
                    "metadata": {"name": name, "namespace": ctx.key.0, "labels": labels,
                                 "ownerReferences": [controller_ref(ctx)]},
                    "data": data, "revision": number,
                });
                match store.create(&types.controllerrevisions, revision) {
                    Ok(_) => name,
                    Err(store::Error::AlreadyExists { .. }) => {
                        let mut set = ctx.set.clone();
                        set["status"]["collisionCount"] = json!(collision_count.unwrap_or(0) + 1);
                        match store.update(&types.statefulsets, set, Subresource::Status, DryRun::Off) {
                            Ok(_) | Err(store::Error::NotFound { .. }) => return Ok(None),
                            Err(error) => return Err(Error::Store(error)),
                        }
                    }
                    Err(error) => return Err(Error::Store(error)),
                }
            }
        };
        let current = ctx.set["status"]["currentRevision"]
            .as_str()
            .filter(|name| !name.is_empty())
            .unwrap_or(&update)
            .to_string();
        Ok(Some(Revisions { update, current }))
    }

    /// `updateStatefulSet`: returns whether a pod was created or deleted.
    fn update_stateful_set(
        &self,
        env: &mut Env<'_>,
        ctx: &SetCtx<'_>,
        revisions: &Revisions,
        pods: &[Value],
    ) -> Result<bool> {
        let spec = &ctx.set["spec"];
        let replicas = spec["replicas"].as_i64().unwrap_or(1).max(0);
        let management = match spec["podManagementPolicy"].as_str() {
            Some("Parallel") => PodManagement::Parallel,
            _ => PodManagement::OrderedReady,
        };
        let monotonic = management == PodManagement::OrderedReady;
        let mut replicas_by_ordinal: Vec<Option<&Value>> = vec![None; replicas as usize];
        let mut condemned: Vec<(i64, &Value)> = Vec::new();
        for pod in pods {
            match ordinal_of(&ctx.key.1, pod) {
                Some(ordinal) if ordinal < replicas => replicas_by_ordinal[ordinal as usize] = Some(pod),
                Some(ordinal) => condemned.push((ordinal, pod)),
                None => {}
            }
        }
        // Highest ordinal first.
        condemned.sort_by_key(|(ordinal, _)| std::cmp::Reverse(*ordinal));
        let mut changed = false;

        // Create missing ordinals and replace finished pods, lowest first.
        for (ordinal, slot) in replicas_by_ordinal.iter().enumerate() {
            let state = slot.map(pod_state);
            match state {
                None => {
                    changed |= self.create_pod(env, ctx, revisions, ordinal as i64)?;
                    if monotonic {
                        return Ok(changed);
                    }
                }
                Some(PodState::Finished) => {
                    changed |= self.delete_pod(env, ctx, slot.unwrap_or(&Value::Null))?;
                    if monotonic {
                        return Ok(changed);
                    }
                }
                Some(PodState::Terminating) | Some(PodState::Starting) if monotonic => return Ok(changed),
                _ => {}
            }
        }
        // Condemned pods: the highest ordinal first; OrderedReady waits for one to go before
        // the next.
        for (_, pod) in &condemned {
            if pod_state(pod) == PodState::Terminating {
                if monotonic {
                    return Ok(changed);
                }
                continue;
            }
            changed |= self.delete_pod(env, ctx, pod)?;
            if monotonic {
                return Ok(changed);
            }
        }
        // RollingUpdate: once every pod runs and is ready, the highest ordinal at or above the
        // partition not at the update revision is deleted (and recreated at it next sync).
        if spec["updateStrategy"]["type"] != "RollingUpdate" {
            return Ok(changed);
        }
        let all_ready = replicas_by_ordinal
            .iter()
            .all(|slot| slot.is_some_and(|p| pod_state(p) == PodState::RunningAndReady));
        if !all_ready || changed {
            return Ok(changed);
        }
        let partition = spec["updateStrategy"]["rollingUpdate"]["partition"].as_i64().unwrap_or(0);
        for ordinal in (partition.max(0)..replicas).rev() {
            let Some(pod) = replicas_by_ordinal[ordinal as usize] else { continue };
            if pod["metadata"]["labels"][REVISION_LABEL].as_str() != Some(revisions.update.as_str()) {
                return self.delete_pod(env, ctx, pod);
            }
        }
        Ok(changed)
    }

    /// `newVersionedStatefulSetPod` at the update revision.
    fn create_pod(
        &self,
        env: &mut Env<'_>,
        ctx: &SetCtx<'_>,
        revisions: &Revisions,
        ordinal: i64,
    ) -> Result<bool> {
        let template = &ctx.set["spec"]["template"];
        let name = format!("{}-{ordinal}", ctx.key.1);
        let mut labels = template["metadata"]["labels"].clone();
        if !labels.is_object() {
            labels = json!({});
        }
        labels[POD_NAME_LABEL] = json!(name);
        labels[POD_INDEX_LABEL] = json!(ordinal.to_string());
        labels[REVISION_LABEL] = json!(revisions.update);
        let mut metadata = json!({
            "name": name,
            "namespace": ctx.key.0,
            "labels": labels,
            "ownerReferences": [controller_ref(ctx)],
        });
        if template["metadata"]["annotations"].is_object() {
            metadata["annotations"] = template["metadata"]["annotations"].clone();
        }
        let mut spec = template["spec"].clone();
        // `updateIdentity`: the pod's DNS identity under the governing Service.
        spec["hostname"] = json!(name);
        match ctx.set["spec"]["serviceName"].as_str().filter(|s| !s.is_empty()) {
            Some(service) => spec["subdomain"] = json!(service),
            None => {
                if let Some(map) = spec.as_object_mut() {
                    map.remove("subdomain");
                }
            }
        }
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
        match env.ctx.store.create(&env.ctx.types.pods, pod) {
            Ok(_) => {
                let message = format!("create Pod {name} in StatefulSet {} successful", ctx.key.1);
                env.recorder.record(
                    &env.ctx,
                    &ctx.involved,
                    EventType::Normal,
                    "SuccessfulCreate",
                    &message,
                    &ctx.source,
                );
                Ok(true)
            }
            Err(store::Error::AlreadyExists { .. }) => Ok(false),
            Err(error) => {
                // stateful_pod_control.go `recordPodEvent` on failure.
                let message = format!("create Pod {name} in StatefulSet {} failed error: {error}", ctx.key.1);
                env.recorder.record(
                    &env.ctx,
                    &ctx.involved,
                    EventType::Warning,
                    "FailedCreate",
                    &message,
                    &ctx.source,
                );
                Ok(false)
            }
        }
    }

    fn delete_pod(&self, env: &mut Env<'_>, ctx: &SetCtx<'_>, pod: &Value) -> Result<bool> {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        match env.ctx.store.delete(&env.ctx.types.pods, &ctx.key.0, name, &DeleteOptions::default()) {
            Ok(_) => {
                let message = format!("delete Pod {name} in StatefulSet {} successful", ctx.key.1);
                env.recorder.record(
                    &env.ctx,
                    &ctx.involved,
                    EventType::Normal,
                    "SuccessfulDelete",
                    &message,
                    &ctx.source,
                );
                Ok(true)
            }
            Err(store::Error::NotFound { .. }) => Ok(false),
            Err(error) => Err(Error::Store(error)),
        }
    }

    /// `computeReplicaStatus` and `completeRollingUpdate`; written only when it changes.
    fn update_status(
        &self,
        env: &mut Env<'_>,
        ctx: &SetCtx<'_>,
        revisions: &Revisions,
        pods: &[Value],
    ) -> Result<()> {
        let (mut replicas, mut ready, mut current, mut updated) = (0, 0, 0, 0);
        for pod in pods {
            let created = pod["status"]["phase"].as_str().is_some_and(|p| !p.is_empty());
            let state = pod_state(pod);
            if created {
                replicas += 1;
            }
            if state == PodState::RunningAndReady {
                ready += 1;
            }
            if created && state != PodState::Terminating {
                let revision = pod["metadata"]["labels"][REVISION_LABEL].as_str();
                if revision == Some(revisions.current.as_str()) {
                    current += 1;
                }
                if revision == Some(revisions.update.as_str()) {
                    updated += 1;
                }
            }
        }
        let mut current_revision = revisions.current.clone();
        if ctx.set["spec"]["updateStrategy"]["type"] == "RollingUpdate"
            && updated == replicas
            && ready == replicas
        {
            current = updated;
            current_revision = revisions.update.clone();
        }
        let old = &ctx.set["status"];
        let mut status = json!({
            "observedGeneration": ctx.set["metadata"]["generation"].clone(),
            "replicas": replicas,
            "currentRevision": current_revision,
            "updateRevision": revisions.update,
            "collisionCount": old["collisionCount"].as_i64().unwrap_or(0),
        });
        // `int32 json:",omitempty"` counters.
        for (field, count) in [
            ("readyReplicas", ready),
            ("currentReplicas", current),
            ("updatedReplicas", updated),
            ("availableReplicas", ready),
        ] {
            if count > 0 {
                status[field] = json!(count);
            }
        }
        if let Some(conditions) = old.get("conditions") {
            status["conditions"] = conditions.clone();
        }
        if &status == old {
            return Ok(());
        }
        let mut set = ctx.set.clone();
        set["status"] = status;
        match env.ctx.store.update(&env.ctx.types.statefulsets, set, Subresource::Status, DryRun::Off) {
            Ok(_) | Err(store::Error::NotFound { .. }) | Err(store::Error::Conflict { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }
}

fn controller_ref(ctx: &SetCtx<'_>) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "name": ctx.key.1, "uid": ctx.uid,
           "controller": true, "blockOwnerDeletion": true})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ordinals_come_from_the_set_name_and_a_number() {
        let pod = |name: &str| json!({"metadata": {"name": name}});
        assert_eq!(ordinal_of("web", &pod("web-0")), Some(0));
        assert_eq!(ordinal_of("web", &pod("web-12")), Some(12));
        assert_eq!(ordinal_of("web", &pod("web-x")), None);
        assert_eq!(ordinal_of("web", &pod("webby-1")), None);
        assert_eq!(ordinal_of("web", &pod("web-")), None);
    }

    #[test]
    fn pod_states_follow_deletion_phase_and_readiness() {
        let ready = json!([{"type": "Ready", "status": "True"}]);
        assert_eq!(
            pod_state(&json!({"status": {"phase": "Running", "conditions": ready}})),
            PodState::RunningAndReady
        );
        assert_eq!(pod_state(&json!({"status": {"phase": "Running"}})), PodState::Starting);
        assert_eq!(pod_state(&json!({"status": {"phase": "Failed"}})), PodState::Finished);
        assert_eq!(
            pod_state(
                &json!({"metadata": {"deletionTimestamp": "t"}, "status": {"phase": "Running", "conditions": ready}})
            ),
            PodState::Terminating
        );
    }
}
