//! The Job controller: pods up to parallelism until completions succeed or backoffLimit fails the Job, with finalizer-based pod tracking and v1.33 status and conditions.
//!
//! Upstream (v1.33): `pkg/controller/job/job_controller.go` (`syncJob`, `manageJob`,
//! `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`, `enactJobFinished`,
//! `exceedsBackoffLimit`, `pastBackoffLimitOnFailure`, `isPodFailed`), `job_controller.go`'s
//! `newSuccessCondition`/`newFailureCondition` with `delayTerminalCondition()` true (the
//! JobPodReplacementPolicy and JobManagedBy gates are on in 1.33: SuccessCriteriaMet /
//! FailureTarget come first, Complete / Failed once no pod is terminating),
//! `pkg/controller/job/backoff_utils.go` (`DefaultJobPodFailureBackOff` 10s doubling to
//! `MaxJobPodFailureBackOff` 10m) and `pkg/registry/batch/job/strategy.go` (`generateSelector`).
//! Pods carry the `batch.kubernetes.io/job-tracking` finalizer until their outcome is counted:
//! first recorded under `status.uncountedTerminatedPods`, then the finalizer is removed, then
//! moved into `succeeded`/`failed`.
//!
//! Not modelled: Indexed completion mode, podFailurePolicy, successPolicy, suspend,
//! activeDeadlineSeconds, ttlSecondsAfterFinished, backoffLimitPerIndex.

use std::collections::BTreeSet;

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake, controller_of,
    events::{EventType, Involved, Source},
    later,
    owners::{self, Owner, selector_is_empty},
    timestamp,
};
use crate::sim::store::{self, DeleteOptions, DryRun, Stored, Subresource};

/// The finalizer a Job's pods carry until the controller counted them.
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// Label with the Job's name on its pods (and the legacy `job-name`).
pub const JOB_NAME_LABEL: &str = "batch.kubernetes.io/job-name";
/// Label with the Job's uid on its pods and in its generated selector (and the legacy
/// `controller-uid`).
pub const CONTROLLER_UID_LABEL: &str = "batch.kubernetes.io/controller-uid";
/// `JobReasonBackoffLimitExceeded` and its message.
pub const BACKOFF_LIMIT_EXCEEDED: (&str, &str) =
    ("BackoffLimitExceeded", "Job has reached the specified backoff limit");
/// `JobReasonCompletionsReached` and its message (`newSuccessCondition` with JobSuccessPolicy on).
pub const COMPLETIONS_REACHED: (&str, &str) =
    ("CompletionsReached", "Reached expected number of succeeded pods");

/// `BurstReplicas` of the Job controller (`maxPodCreateDeletePerSync`).
const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// Pod failure back-off: 10s, doubling, at most 10 minutes.
const POD_FAILURE_BACK_OFF_SECONDS: f64 = 10.0;
const MAX_POD_FAILURE_BACK_OFF_SECONDS: f64 = 600.0;

const COMPONENT: &str = "job-controller";

/// What the apiserver adds to a new Job unless `spec.manualSelector` is true (`generateSelector`,
/// `pkg/registry/batch/job/strategy.go`): the template gets `batch.kubernetes.io/job-name`,
/// `job-name`, `batch.kubernetes.io/controller-uid` and `controller-uid` (a label the user set is
/// kept), and the selector matches `batch.kubernetes.io/controller-uid`. Runs after the uid is
/// assigned.
///
/// ```
/// use lab_runner::sim::controllers::job::generate_selector;
/// let mut job = serde_json::json!({"metadata": {"name": "train", "uid": "u1"}, "spec": {"template": {}}});
/// generate_selector(&mut job);
/// assert_eq!(job["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"], "u1");
/// assert_eq!(job["spec"]["template"]["metadata"]["labels"]["job-name"], "train");
/// ```
pub fn generate_selector(job: &mut Value) {
    if job["spec"]["manualSelector"] == json!(true) || !job["spec"].is_object() {
        return;
    }
    let name = job["metadata"]["name"].clone();
    let uid = job["metadata"]["uid"].clone();
    if !job["spec"]["template"].is_object() {
        job["spec"]["template"] = json!({});
    }
    if !job["spec"]["template"]["metadata"].is_object() {
        job["spec"]["template"]["metadata"] = json!({});
    }
    if !job["spec"]["template"]["metadata"]["labels"].is_object() {
        job["spec"]["template"]["metadata"]["labels"] = json!({});
    }
    if let Some(labels) = job["spec"]["template"]["metadata"]["labels"].as_object_mut() {
        for (key, value) in [
            ("job-name", &name),
            (JOB_NAME_LABEL, &name),
            ("controller-uid", &uid),
            (CONTROLLER_UID_LABEL, &uid),
        ] {
            labels.entry(key).or_insert_with(|| value.clone());
        }
    }
    if !job["spec"]["selector"].is_object() {
        job["spec"]["selector"] = json!({});
    }
    if !job["spec"]["selector"]["matchLabels"].is_object() {
        job["spec"]["selector"]["matchLabels"] = json!({});
    }
    if let Some(match_labels) = job["spec"]["selector"]["matchLabels"].as_object_mut() {
        match_labels.entry(CONTROLLER_UID_LABEL).or_insert(uid);
    }
}

/// The Job controller (stateless between syncs: the counts live in the Job's status).
#[derive(Debug, Default)]
pub(crate) struct Jobs;

/// How a Job has ended, once it has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finish {
    /// Enough pods succeeded: SuccessCriteriaMet, then Complete.
    Succeeded,
    /// Too many failures: FailureTarget, then Failed.
    Failed,
}

impl Finish {
    fn interim(self) -> &'static str {
        match self {
            Finish::Succeeded => "SuccessCriteriaMet",
            Finish::Failed => "FailureTarget",
        }
    }

    fn terminal(self) -> &'static str {
        match self {
            Finish::Succeeded => "Complete",
            Finish::Failed => "Failed",
        }
    }

    fn reason_and_message(self) -> (&'static str, &'static str) {
        match self {
            Finish::Succeeded => COMPLETIONS_REACHED,
            Finish::Failed => BACKOFF_LIMIT_EXCEEDED,
        }
    }
}

/// Where one pod of the Job is, for counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PodState {
    /// Not terminal and not being deleted.
    Active,
    /// Being deleted, not terminal.
    Terminating,
    /// Phase Succeeded.
    Succeeded,
    /// Phase Failed.
    Failed,
}

fn pod_state(pod: &Value) -> PodState {
    match pod["status"]["phase"].as_str() {
        Some("Succeeded") => PodState::Succeeded,
        Some("Failed") => PodState::Failed,
        _ if !pod["metadata"]["deletionTimestamp"].is_null() => PodState::Terminating,
        _ => PodState::Active,
    }
}

fn has_tracking_finalizer(pod: &Value) -> bool {
    pod["metadata"]["finalizers"]
        .as_array()
        .is_some_and(|list| list.iter().any(|f| f == JOB_TRACKING_FINALIZER))
}

fn condition_true(job: &Value, type_: &str) -> bool {
    job["status"]["conditions"]
        .as_array()
        .is_some_and(|list| list.iter().any(|c| c["type"] == type_ && c["status"] == "True"))
}

fn is_pod_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|list| list.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

/// When a failed pod stopped: its last container's finish, else its deletion, else its creation.
fn failed_at(pod: &Value) -> Option<Timestamp> {
    let parse = |v: &Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
    pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|status| parse(&status["state"]["terminated"]["finishedAt"]))
        .max()
        .or_else(|| parse(&pod["metadata"]["deletionTimestamp"]))
        .or_else(|| parse(&pod["metadata"]["creationTimestamp"]))
}

impl Jobs {
    /// `syncJob` for one Job.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let Some(stored) = env.ctx.store.get("jobs.batch", &key.0, &key.1) else {
            // The Job is gone: its pods must not keep the tracking finalizer (orphan pods).
            return self.release_orphans(env, key);
        };
        let job: Value = stored.value().map_err(Error::Store)?;
        let uid = job["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        let selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
            serde_json::from_value(job["spec"]["selector"].clone()).unwrap_or_default();
        if selector_is_empty(&selector) {
            return Ok(());
        }
        let owner =
            Owner { api_version: "batch/v1", kind: "Job", namespace: &key.0, name: &key.1, uid: &uid };
        let pods_rt = env.ctx.types.pods.clone();
        let pods = owners::claim(env, &pods_rt, &owner, &selector)?;
        let finished = condition_true(&job, "Complete") || condition_true(&job, "Failed");
        if finished || !job["metadata"]["deletionTimestamp"].is_null() {
            // Nothing is created any more; pods still tracked are released once they stop.
            for pod in pods.iter().filter(|p| has_tracking_finalizer(p) && pod_state(p) != PodState::Active) {
                self.remove_finalizer(env, pod)?;
            }
            return Ok(());
        }
        let now = env.ctx.now;
        let involved = Involved::of(&job);
        let source = Source::component(COMPONENT);
        let spec = &job["spec"];
        let parallelism = int(&spec["parallelism"]).max(0);
        let completions = spec["completions"].as_i64();
        let backoff_limit = spec["backoffLimit"].as_i64().unwrap_or(6);
        let on_failure = spec["template"]["spec"]["restartPolicy"] == "OnFailure";

        // Pods whose outcome is not counted yet: terminal (or deleted) pods still carrying the
        // finalizer (`getNewFinishedPods`; with podReplacementPolicy TerminatingOrFailed a
        // deleted pod that did not succeed counts as failed, `isPodFailed`).
        let mut new_succeeded: Vec<&Value> = Vec::new();
        let mut new_failed: Vec<&Value> = Vec::new();
        for pod in pods.iter().filter(|p| has_tracking_finalizer(p)) {
            match pod_state(pod) {
                PodState::Succeeded => new_succeeded.push(pod),
                PodState::Failed => new_failed.push(pod),
                PodState::Terminating => new_failed.push(pod),
                PodState::Active => {}
            }
        }
        let succeeded = int(&job["status"]["succeeded"]) + new_succeeded.len() as i64;
        let failed = int(&job["status"]["failed"]) + new_failed.len() as i64;
        let active_pods: Vec<&Value> = pods.iter().filter(|p| pod_state(p) == PodState::Active).collect();

        // `syncJob`: the end is decided before managing pods.
        let restarts: i64 = active_pods
            .iter()
            .flat_map(|p| {
                p["status"]["initContainerStatuses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .chain(p["status"]["containerStatuses"].as_array().into_iter().flatten())
            })
            .map(|status| int(&status["restartCount"]))
            .sum();
        let past_on_failure =
            on_failure && if backoff_limit == 0 { restarts > 0 } else { restarts >= backoff_limit };
        let mut finish = if condition_true(&job, "FailureTarget") {
            Some(Finish::Failed)
        } else if condition_true(&job, "SuccessCriteriaMet") {
            Some(Finish::Succeeded)
        } else if failed > backoff_limit || past_on_failure {
            Some(Finish::Failed)
        } else {
            None
        };

        let mut active = active_pods.len() as i64;
        let mut created_or_deleted = false;
        match finish {
            Some(Finish::Failed) => {
                // `deleteActivePods`: stop everything still running.
                for pod in &active_pods {
                    self.delete_pod(env, &involved, &source, pod)?;
                    created_or_deleted = true;
                }
            }
            Some(Finish::Succeeded) => {}
            None => {
                // `manageJob` for NonIndexed jobs.
                let want_active = match completions {
                    Some(completions) => parallelism.min((completions - succeeded).max(0)),
                    // A work queue: after one success whatever runs keeps running, nothing new
                    // starts.
                    None if succeeded > 0 => active,
                    None => parallelism,
                };
                if active > want_active {
                    let mut extra: Vec<&Value> = active_pods.clone();
                    // Not-ready and newer pods go first (`controller.ActivePods` order).
                    extra.sort_by(|a, b| {
                        is_pod_ready(a).cmp(&is_pod_ready(b)).then_with(|| {
                            b["metadata"]["creationTimestamp"]
                                .as_str()
                                .cmp(&a["metadata"]["creationTimestamp"].as_str())
                        })
                    });
                    let surplus = ((active - want_active) as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
                    for pod in extra.into_iter().take(surplus) {
                        self.delete_pod(env, &involved, &source, pod)?;
                        created_or_deleted = true;
                        active -= 1;
                    }
                } else if active < want_active {
                    // The pod failure back-off: 10s × 2^(failures-1), from the latest failure.
                    let latest_failure =
                        pods.iter().filter(|p| pod_state(p) == PodState::Failed).filter_map(failed_at).max();
                    let wait_until = match (failed, latest_failure) {
                        (f, Some(at)) if f > 0 => {
                            let exponent = (f - 1).min(16) as i32;
                            let delay = (POD_FAILURE_BACK_OFF_SECONDS * 2f64.powi(exponent))
                                .min(MAX_POD_FAILURE_BACK_OFF_SECONDS);
                            Some(later(at, delay))
                        }
                        _ => None,
                    };
                    match wait_until {
                        Some(at) if at > now => env.timers.at(at, Wake::Job(key.clone())),
                        _ => {
                            let missing =
                                ((want_active - active) as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
                            for _ in 0..missing {
                                if !self.create_pod(env, key, &job, &owner, &involved, &source)? {
                                    break;
                                }
                                created_or_deleted = true;
                                active += 1;
                            }
                        }
                    }
                }
                let complete = match completions {
                    None => succeeded > 0 && active == 0,
                    Some(completions) => succeeded >= completions && active == 0,
                };
                if complete {
                    finish = Some(Finish::Succeeded);
                }
            }
        }

        // Re-read the pods for ready/terminating after this sync's creates and deletes.
        let pods_now: Vec<Value> = if created_or_deleted {
            let owned = |stored: &Stored| stored.json.contains(uid.as_str());
            env.ctx
                .store
                .list("pods", Some(&key.0), &owned, None, None)
                .items
                .iter()
                .filter_map(|stored| stored.value().ok())
                .filter(|pod| controller_of(pod).is_some_and(|o| o.uid == uid))
                .collect()
        } else {
            pods.clone()
        };
        let ready = pods_now.iter().filter(|p| pod_state(p) == PodState::Active && is_pod_ready(p)).count();
        let terminating = pods_now.iter().filter(|p| pod_state(p) == PodState::Terminating).count();
        let active_now = pods_now.iter().filter(|p| pod_state(p) == PodState::Active).count();

        // `trackJobStatusAndRemoveFinalizers` → `flushUncountedAndRemoveFinalizers`: record the
        // uids, drop the finalizers, then move them into the counters.
        let mut status = job["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        if status["startTime"].is_null() {
            status["startTime"] = json!(timestamp(now));
        }
        status["uncountedTerminatedPods"] = json!({});
        let uids =
            |pods: &[&Value]| -> Vec<Value> { pods.iter().map(|p| p["metadata"]["uid"].clone()).collect() };
        if !new_succeeded.is_empty() || !new_failed.is_empty() {
            let mut uncounted = json!({});
            if !new_succeeded.is_empty() {
                uncounted["succeeded"] = json!(uids(&new_succeeded));
            }
            if !new_failed.is_empty() {
                uncounted["failed"] = json!(uids(&new_failed));
            }
            let mut first = status.clone();
            first["uncountedTerminatedPods"] = uncounted;
            self.write_status(env, &job, first)?;
            for pod in new_succeeded.iter().chain(new_failed.iter()) {
                self.remove_finalizer(env, pod)?;
            }
        }
        for (field, count) in [("active", active_now as i64), ("succeeded", succeeded), ("failed", failed)] {
            if count > 0 {
                status[field] = json!(count);
            } else if let Some(map) = status.as_object_mut() {
                map.remove(field);
            }
        }
        status["ready"] = json!(ready);
        status["terminating"] = json!(terminating);
        if let Some(finish) = finish {
            let (reason, message) = finish.reason_and_message();
            let condition = |type_: &str| {
                json!({"type": type_, "status": "True", "lastProbeTime": timestamp(now),
                       "lastTransitionTime": timestamp(now), "reason": reason, "message": message})
            };
            if !condition_true(&json!({"status": status.clone()}), finish.interim()) {
                push_condition(&mut status, condition(finish.interim()));
            }
            // `enactJobFinished`: the terminal condition waits until no pod is terminating.
            if terminating == 0 && active_now == 0 {
                push_condition(&mut status, condition(finish.terminal()));
                match finish {
                    Finish::Succeeded => {
                        status["completionTime"] = json!(timestamp(now));
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Normal,
                            "Completed",
                            "Job completed",
                            &source,
                        );
                    }
                    Finish::Failed => {
                        env.recorder.record(
                            &env.ctx,
                            &involved,
                            EventType::Warning,
                            reason,
                            message,
                            &source,
                        );
                    }
                }
            }
        }
        if status != job["status"] {
            self.write_status(env, &job, status)?;
        }
        Ok(())
    }

    fn write_status(&self, env: &mut Env<'_>, job: &Value, status: Value) -> Result<()> {
        let store = env.ctx.store;
        let namespace = job["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = job["metadata"]["name"].as_str().unwrap_or_default();
        let Ok(mut current) = store.get_value(&env.ctx.types.jobs, namespace, name) else { return Ok(()) };
        current["status"] = status;
        match store.update(&env.ctx.types.jobs, current, Subresource::Status, DryRun::Off) {
            Ok(_) | Err(store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }

    /// One pod from the template (`podControl.CreatePodsWithGenerateName`). Returns false when
    /// the create failed (the rest of the batch is skipped, as upstream's slow start does).
    fn create_pod(
        &self,
        env: &mut Env<'_>,
        key: &Key,
        job: &Value,
        owner: &Owner<'_>,
        involved: &Involved,
        source: &Source,
    ) -> Result<bool> {
        let template = &job["spec"]["template"];
        let mut metadata = json!({
            "generateName": format!("{}-", key.1),
            "namespace": key.0,
            "labels": template["metadata"]["labels"].clone(),
            "finalizers": [JOB_TRACKING_FINALIZER],
            "ownerReferences": [owner.reference()],
        });
        if template["metadata"]["annotations"].is_object() {
            metadata["annotations"] = template["metadata"]["annotations"].clone();
        }
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": template["spec"]});
        match env.ctx.store.create(&env.ctx.types.pods, pod) {
            Ok(created) => {
                let message =
                    format!("Created pod: {}", created["metadata"]["name"].as_str().unwrap_or_default());
                env.recorder.record(
                    &env.ctx,
                    involved,
                    EventType::Normal,
                    "SuccessfulCreate",
                    &message,
                    source,
                );
                Ok(true)
            }
            Err(error) => {
                let message = format!("Error creating: {error}");
                env.recorder.record(&env.ctx, involved, EventType::Warning, "FailedCreate", &message, source);
                Ok(false)
            }
        }
    }

    fn delete_pod(&self, env: &mut Env<'_>, involved: &Involved, source: &Source, pod: &Value) -> Result<()> {
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        match env.ctx.store.delete(&env.ctx.types.pods, namespace, name, &DeleteOptions::default()) {
            Ok(_) => {
                let message = format!("Deleted pod: {name}");
                env.recorder.record(
                    &env.ctx,
                    involved,
                    EventType::Normal,
                    "SuccessfulDelete",
                    &message,
                    source,
                );
                Ok(())
            }
            Err(store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }

    fn remove_finalizer(&self, env: &mut Env<'_>, pod: &Value) -> Result<()> {
        let store = env.ctx.store;
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let Ok(mut current) = store.get_value(&env.ctx.types.pods, namespace, name) else { return Ok(()) };
        if current["metadata"]["uid"] != pod["metadata"]["uid"] {
            return Ok(());
        }
        if let Some(list) = current["metadata"]["finalizers"].as_array_mut() {
            list.retain(|f| f != JOB_TRACKING_FINALIZER);
            // `finalizers` is `omitempty`: an emptied list disappears.
            if list.is_empty()
                && let Some(metadata) = current["metadata"].as_object_mut()
            {
                metadata.remove("finalizers");
            }
        }
        match store.update(&env.ctx.types.pods, current, Subresource::Main, DryRun::Off) {
            Ok(_) | Err(store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }

    /// Pods whose Job is gone, or that lost their controller reference (an orphaning delete),
    /// lose the tracking finalizer (`job_controller.go` `handleOrphanPod`). `key.1` is empty for
    /// a sweep triggered by a pod without controller.
    fn release_orphans(&self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let tracked = |stored: &Stored| stored.json.contains(JOB_TRACKING_FINALIZER);
        let pods: Vec<Value> = env
            .ctx
            .store
            .list("pods", Some(&key.0), &tracked, None, None)
            .items
            .iter()
            .filter_map(|stored| stored.value().ok())
            .collect();
        let live_jobs: BTreeSet<String> = {
            let all = |_: &Stored| true;
            env.ctx
                .store
                .list("jobs.batch", Some(&key.0), &all, None, None)
                .items
                .iter()
                .filter_map(|stored| stored.value().ok())
                .filter_map(|job| job["metadata"]["uid"].as_str().map(str::to_string))
                .collect()
        };
        for pod in pods {
            let orphan = match controller_of(&pod) {
                Some(owner) => owner.kind == "Job" && !live_jobs.contains(&owner.uid),
                None => true,
            };
            if orphan {
                self.remove_finalizer(env, &pod)?;
            }
        }
        Ok(())
    }
}

fn push_condition(status: &mut Value, condition: Value) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(list) = status["conditions"].as_array_mut() {
        list.retain(|c| c["type"] != condition["type"]);
        list.push(condition);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_selector_keeps_user_labels_and_honours_manual_selector() {
        let mut job = json!({"metadata": {"name": "train", "uid": "u1"},
                             "spec": {"template": {"metadata": {"labels": {"job-name": "mine"}}}}});
        generate_selector(&mut job);
        let labels = &job["spec"]["template"]["metadata"]["labels"];
        assert_eq!(labels["job-name"], "mine");
        assert_eq!(labels[JOB_NAME_LABEL], "train");
        assert_eq!(labels["controller-uid"], "u1");
        assert_eq!(labels[CONTROLLER_UID_LABEL], "u1");
        assert_eq!(job["spec"]["selector"], json!({"matchLabels": {CONTROLLER_UID_LABEL: "u1"}}));
        let mut manual =
            json!({"metadata": {"name": "m", "uid": "u2"}, "spec": {"manualSelector": true, "template": {}}});
        generate_selector(&mut manual);
        assert!(manual["spec"]["selector"].is_null());
    }

    #[test]
    fn pod_states_follow_phase_then_deletion() {
        assert_eq!(pod_state(&json!({"status": {"phase": "Running"}})), PodState::Active);
        assert_eq!(
            pod_state(
                &json!({"metadata": {"deletionTimestamp": "2026-01-01T00:00:00Z"}, "status": {"phase": "Running"}})
            ),
            PodState::Terminating
        );
        assert_eq!(pod_state(&json!({"status": {"phase": "Succeeded"}})), PodState::Succeeded);
        assert_eq!(pod_state(&json!({"status": {"phase": "Failed"}})), PodState::Failed);
    }
}
