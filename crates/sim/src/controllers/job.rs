//! The Job controller: pods up to parallelism until completions succeed or backoffLimit fails the Job, with finalizer-based pod tracking and v1.33 status and conditions.
//!
//! Upstream (v1.33): `pkg/controller/job/job_controller.go` (`syncJob`, `manageJob`,
//! `trackJobStatusAndRemoveFinalizers`, `flushUncountedAndRemoveFinalizers`, `enactJobFinished`,
//! `exceedsBackoffLimit`, `pastBackoffLimitOnFailure`, `isPodFailed`), `job_controller.go`'s
//! `newSuccessCondition`/`newFailureCondition` with `delayTerminalCondition()` true (the
//! JobPodReplacementPolicy and JobManagedBy gates are on in 1.33: SuccessCriteriaMet /
//! FailureTarget come first, Complete / Failed once no pod is terminating),
//! `pkg/controller/job/backoff_utils.go` (`DefaultJobPodFailureBackOff` 10s doubling to
//! `MaxJobPodFailureBackOff` 10m); the registry's `generateSelector` is [`crate::k8s::job`].
//! Pods carry the `batch.kubernetes.io/job-tracking` finalizer until their outcome is counted:
//! first recorded under `status.uncountedTerminatedPods`, then the finalizer is removed, then
//! moved into `succeeded`/`failed`.
//!
//! Indexed Jobs (`pkg/controller/job/indexed_job_utils.go`): each pod gets its completion index
//! as annotation, label, `JOB_COMPLETION_INDEX` and hostname; successes are recorded as
//! `status.completedIndexes`.
//!
//! `podFailurePolicy` (`pkg/controller/job/pod_failure_policy.go` `matchPodFailurePolicy`,
//! `job_controller.go` `getFailJobMessage`): a failed pod matching a FailJob rule fails the Job
//! (FailureTarget, then Failed, reason `PodFailurePolicy`), one matching an Ignore rule is not
//! counted against `backoffLimit`, Count counts it; with a policy (or `podReplacementPolicy:
//! Failed`) only pods in phase Failed are failures and a replacement waits for a terminating pod.
//!
//! `backoffLimitPerIndex` (`indexed_job_utils.go` `calculateFailedIndexes`, `isIndexFailed`,
//! `getPodsWithDelayedDeletionPerIndex`, `addIndexFailureCountAnnotation`; `job_controller.go`
//! `canRemoveFinalizer`, `getPodCreationInfoForIndependentIndexes`; `backoff_utils.go`
//! `getRemainingTimePerIndex`): each index counts its failures in the pods'
//! `batch.kubernetes.io/job-index-failure-count` annotation, a failed pod's finalizer waits for
//! its replacement, each index has its own back-off, an index past its limit (or matching a
//! FailIndex rule) is recorded in `status.failedIndexes` and not retried, and the Job fails with
//! `MaxFailedIndexesExceeded` past `maxFailedIndexes` or `FailedIndexes` once every index ended.
//!
//! Not modelled: successPolicy, suspend, activeDeadlineSeconds, ttlSecondsAfterFinished.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{
    Env, Error, Key, Result, Wake, controller_of,
    events::{EventType, Involved, Source},
    later,
    owners::{self, Owner, selector_is_empty},
    timestamp,
};
use crate::{
    k8s::condition,
    store::{self, DeleteOptions, DryRun, Stored, Subresource},
};

/// The finalizer a Job's pods carry until the controller counted them.
pub const JOB_TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
pub use crate::k8s::job::{CONTROLLER_UID_LABEL, JOB_NAME_LABEL};
/// `JobReasonBackoffLimitExceeded` and its message.
pub const BACKOFF_LIMIT_EXCEEDED: (&str, &str) =
    ("BackoffLimitExceeded", "Job has reached the specified backoff limit");
/// `JobReasonCompletionsReached` and its message (`newSuccessCondition` with JobSuccessPolicy on).
pub const COMPLETIONS_REACHED: (&str, &str) =
    ("CompletionsReached", "Reached expected number of succeeded pods");

/// Annotation and label with an Indexed Job pod's completion index
/// (`batch.JobCompletionIndexAnnotation`).
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The environment variable an Indexed Job's containers read their index from.
const COMPLETION_INDEX_ENV: &str = "JOB_COMPLETION_INDEX";
/// `names.MaxGeneratedNameLength` (apiserver/pkg/storage/names): 63 minus the 5 random chars.
const MAX_GENERATED_NAME_LENGTH: usize = 58;

/// `BurstReplicas` of the Job controller (`maxPodCreateDeletePerSync`).
const MAX_POD_CREATE_DELETE_PER_SYNC: usize = 500;
/// Pod failure back-off: 10s, doubling, at most 10 minutes.
const POD_FAILURE_BACK_OFF_SECONDS: f64 = 10.0;
const MAX_POD_FAILURE_BACK_OFF_SECONDS: f64 = 600.0;

const COMPONENT: &str = "job-controller";

/// The Job controller (stateless between syncs: the counts live in the Job's status).
#[derive(Debug, Default)]
pub(crate) struct Jobs;

/// `JobReasonPodFailurePolicy`.
pub const POD_FAILURE_POLICY: &str = "PodFailurePolicy";
/// `JobReasonFailedIndexes` and `syncJob`'s message: every index finished, some failed.
pub const FAILED_INDEXES: (&str, &str) = ("FailedIndexes", "Job has failed indexes");
/// `JobReasonMaxFailedIndexesExceeded` and `syncJob`'s message: more failed indexes than
/// `maxFailedIndexes`.
pub const MAX_FAILED_INDEXES_EXCEEDED: (&str, &str) =
    ("MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes");
/// Annotation with the failures counted against an index's `backoffLimitPerIndex`, carried
/// from a failed pod to its replacement (`batch.JobIndexFailureCountAnnotation`).
pub const INDEX_FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-failure-count";
/// Annotation with the index's failures an Ignore rule matched
/// (`batch.JobIndexIgnoredFailureCountAnnotation`).
pub const INDEX_IGNORED_FAILURE_COUNT: &str = "batch.kubernetes.io/job-index-ignored-failure-count";

/// How a Job has ended, once it has.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Finish {
    /// Enough pods succeeded: SuccessCriteriaMet, then Complete.
    Succeeded,
    /// Failed: FailureTarget, then Failed.
    Failed(Failure),
}

/// Why a Job failed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Failure {
    /// More failed pods than `backoffLimit` (or restarts, for OnFailure).
    BackoffLimitExceeded,
    /// A failed pod matched a FailJob rule; the message names the pod and the rule.
    PodFailurePolicy(String),
    /// With `backoffLimitPerIndex`: every index finished and some failed.
    FailedIndexes,
    /// With `backoffLimitPerIndex`: more failed indexes than `maxFailedIndexes`.
    MaxFailedIndexesExceeded,
}

impl Failure {
    /// The failure an earlier sync recorded as the FailureTarget condition `target`.
    fn of_target(target: &Value) -> Failure {
        match target["reason"].as_str() {
            Some(POD_FAILURE_POLICY) => {
                Failure::PodFailurePolicy(target["message"].as_str().unwrap_or_default().to_string())
            }
            Some(reason) if reason == FAILED_INDEXES.0 => Failure::FailedIndexes,
            Some(reason) if reason == MAX_FAILED_INDEXES_EXCEEDED.0 => Failure::MaxFailedIndexesExceeded,
            _ => Failure::BackoffLimitExceeded,
        }
    }
}

/// What `matchPodFailurePolicy` decided for one failed pod.
#[derive(Debug, Clone, PartialEq, Eq)]
enum PolicyMatch {
    /// No rule matched (or no policy): counted against `backoffLimit`.
    Unmatched,
    /// A Count rule matched: counted.
    Count,
    /// An Ignore rule matched: not counted.
    Ignore,
    /// A FailIndex rule matched (only with `backoffLimitPerIndex`): counted, and the pod's
    /// index fails at once (`isIndexFailed`).
    FailIndex,
    /// A FailJob rule matched: the Job fails with this message.
    FailJob(String),
}

impl PolicyMatch {
    /// The second result of `matchPodFailurePolicy`: whether the failure counts.
    fn counts(&self) -> bool {
        !matches!(self, PolicyMatch::Ignore)
    }
}

impl Finish {
    fn interim(&self) -> &'static str {
        match self {
            Finish::Succeeded => "SuccessCriteriaMet",
            Finish::Failed(_) => "FailureTarget",
        }
    }

    fn terminal(&self) -> &'static str {
        match self {
            Finish::Succeeded => "Complete",
            Finish::Failed(_) => "Failed",
        }
    }

    fn reason_and_message(&self) -> (&str, &str) {
        match self {
            Finish::Succeeded => COMPLETIONS_REACHED,
            Finish::Failed(Failure::BackoffLimitExceeded) => BACKOFF_LIMIT_EXCEEDED,
            Finish::Failed(Failure::PodFailurePolicy(message)) => (POD_FAILURE_POLICY, message),
            Finish::Failed(Failure::FailedIndexes) => FAILED_INDEXES,
            Finish::Failed(Failure::MaxFailedIndexesExceeded) => MAX_FAILED_INDEXES_EXCEEDED,
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

/// `onlyReplaceFailedPods`: `podReplacementPolicy: Failed`, or any `podFailurePolicy`.
fn only_replace_failed_pods(job: &Value) -> bool {
    job["spec"]["podReplacementPolicy"] == "Failed" || !job["spec"]["podFailurePolicy"].is_null()
}

/// `isPodFailed`: phase Failed, or — unless only failed pods are replaced — being deleted
/// without having succeeded.
fn is_pod_failed(pod: &Value, job: &Value) -> bool {
    match pod_state(pod) {
        PodState::Failed => true,
        PodState::Terminating => !only_replace_failed_pods(job),
        PodState::Succeeded | PodState::Active => false,
    }
}

/// `matchPodFailurePolicy` (pkg/controller/job/pod_failure_policy.go): the first rule, in order,
/// whose `onExitCodes` matches a terminated container (containers first, then init containers;
/// exit code 0 never matches) or whose `onPodConditions` matches a condition of the pod.
fn match_pod_failure_policy(policy: &Value, pod: &Value) -> PolicyMatch {
    let Some(rules) = policy["rules"].as_array() else { return PolicyMatch::Unmatched };
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    for (index, rule) in rules.iter().enumerate() {
        let action = rule["action"].as_str().unwrap_or_default();
        let matched = if !rule["onExitCodes"].is_null() {
            match_on_exit_codes(&pod["status"], &rule["onExitCodes"]).map(|(container, code)| {
                format!(
                    "Container {container} for pod {namespace}/{name} failed with exit code {code} matching {action} rule at index {index}"
                )
            })
        } else if let Some(patterns) = rule["onPodConditions"].as_array() {
            match_on_pod_conditions(&pod["status"], patterns).map(|condition| {
                format!(
                    "Pod {namespace}/{name} has condition {condition} matching {action} rule at index {index}"
                )
            })
        } else {
            None
        };
        let Some(message) = matched else { continue };
        match action {
            "Ignore" => return PolicyMatch::Ignore,
            "Count" => return PolicyMatch::Count,
            "FailIndex" => return PolicyMatch::FailIndex,
            "FailJob" => return PolicyMatch::FailJob(message),
            _ => {}
        }
    }
    PolicyMatch::Unmatched
}

/// `matchOnExitCodes`: the first terminated container (of `containerName`, when set) whose
/// non-zero exit code the operator matches; its name and code.
fn match_on_exit_codes(status: &Value, requirement: &Value) -> Option<(String, i64)> {
    let values: Vec<i64> =
        requirement["values"].as_array().into_iter().flatten().filter_map(Value::as_i64).collect();
    let wanted_name = requirement["containerName"].as_str();
    ["containerStatuses", "initContainerStatuses"]
        .iter()
        .flat_map(|list| status[list].as_array().into_iter().flatten())
        .find_map(|container| {
            let code = container["state"]["terminated"]["exitCode"].as_i64()?;
            let name = container["name"].as_str().unwrap_or_default();
            if wanted_name.is_some_and(|wanted| wanted != name) || code == 0 {
                return None;
            }
            let operator_matches = match requirement["operator"].as_str() {
                Some("In") => values.contains(&code),
                Some("NotIn") => !values.contains(&code),
                _ => false,
            };
            operator_matches.then(|| (name.to_string(), code))
        })
}

/// `matchOnPodConditions`: the type of the first pod condition some pattern names with its status.
fn match_on_pod_conditions(status: &Value, patterns: &[Value]) -> Option<String> {
    status["conditions"].as_array().into_iter().flatten().find_map(|condition| {
        patterns
            .iter()
            .any(|p| p["type"] == condition["type"] && p["status"] == condition["status"])
            .then(|| condition["type"].as_str().unwrap_or_default().to_string())
    })
}

/// `getFailJobMessage`: the message of the first failed pod that matches a FailJob rule.
fn fail_job_message(job: &Value, pods: &[Value]) -> Option<String> {
    let policy = &job["spec"]["podFailurePolicy"];
    if policy.is_null() {
        return None;
    }
    pods.iter().filter(|pod| is_pod_failed(pod, job)).find_map(|pod| {
        match match_pod_failure_policy(policy, pod) {
            PolicyMatch::FailJob(message) => Some(message),
            _ => None,
        }
    })
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

/// `podutil.IsPodReady`.
fn is_pod_ready(pod: &Value) -> bool {
    condition::object_condition_true(pod, "Ready")
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

/// `syncJobCtx`: what one sync knows about a Job and its pods.
struct SyncJobCtx {
    key: Key,
    job: Value,
    uid: String,
    /// The pods the Job owns (claimed this sync).
    pods: Vec<Value>,
    /// `completionMode: Indexed`.
    indexed: bool,
    /// `spec.completions` (`None`: a work queue).
    completions: Option<i64>,
    /// Terminal pods still carrying the finalizer (`getNewFinishedPods`).
    new_succeeded: Vec<Value>,
    /// New failures counted against `backoffLimit`.
    new_failed: Vec<Value>,
    /// New failures an Ignore rule of the `podFailurePolicy` matched: released, not counted.
    new_ignored: Vec<Value>,
    /// Succeeded and failed counts including this sync's new ones.
    succeeded: i64,
    failed: i64,
    /// Indexed only: the completed indexes from `status.completedIndexes`, and with the new ones.
    prev_succeeded_indexes: Intervals,
    succeeded_indexes: Intervals,
    /// An Indexed Job's `spec.backoffLimitPerIndex` (`hasBackoffLimitPerIndex`).
    backoff_limit_per_index: Option<i64>,
    /// With it: `status.failedIndexes` with the indexes failed since (`calculateFailedIndexes`).
    failed_indexes: Intervals,
    /// With it: per pending index, its last failed pod, whose finalizer stays until the
    /// replacement carries the index's failure count (`getPodsWithDelayedDeletionPerIndex`).
    delayed_deletion: BTreeMap<i64, Value>,
    /// How the Job ends, once decided.
    finish: Option<Finish>,
}

impl SyncJobCtx {
    fn active_pods(&self) -> Vec<&Value> {
        self.pods.iter().filter(|p| pod_state(p) == PodState::Active).collect()
    }

    /// `canRemoveFinalizer`: while the Job runs, a failed pod awaiting its replacement keeps its
    /// finalizer and is not counted yet.
    fn hold_delayed_deletions(&mut self) {
        let uid = |pod: &Value| pod["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        let held: BTreeSet<String> = self.delayed_deletion.values().map(uid).collect();
        if held.is_empty() {
            return;
        }
        let waits = |pod: &Value| held.contains(&uid(pod));
        self.new_failed.retain(|pod| !waits(pod));
        self.new_ignored.retain(|pod| !waits(pod));
    }

    /// `getValidPodsWithFilter`'s index check: an Indexed Job counts only pods with an index
    /// below `completions`.
    fn valid_index(&self, pod: &Value) -> bool {
        !self.indexed || completion_index(pod).is_some_and(|ix| ix < self.completions.unwrap_or(0))
    }
}

/// What `manageJob` did.
struct Managed {
    /// Active pods after this sync's creates and deletes.
    active: i64,
    /// Whether any pod was created or deleted (the pods are re-read for the status).
    created_or_deleted: bool,
}

impl Jobs {
    /// `syncJob` for one Job: claim its pods, count what finished, decide whether it ended,
    /// `manageJob` while it runs, then `trackJobStatusAndRemoveFinalizers`.
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
        let finished = condition::object_condition_true(&job, "Complete")
            || condition::object_condition_true(&job, "Failed");
        if finished || !job["metadata"]["deletionTimestamp"].is_null() {
            // Nothing is created any more; pods still tracked are released once they stop.
            for pod in pods.iter().filter(|p| has_tracking_finalizer(p) && pod_state(p) != PodState::Active) {
                self.remove_finalizer(env, pod)?;
            }
            return Ok(());
        }
        let mut ctx = new_sync_ctx(key, job, uid.clone(), pods);

        // `syncJob`: the end is decided before managing pods.
        // `syncJob`: an earlier FailureTarget keeps its reason; then a FailJob rule's match;
        // then the back-off limit.
        // Then, with backoffLimitPerIndex, the failed indexes.
        ctx.finish = if let Some(target) = condition::find(&ctx.job["status"]["conditions"], "FailureTarget")
            .filter(|c| c["status"] == "True")
        {
            Some(Finish::Failed(Failure::of_target(target)))
        } else if condition::object_condition_true(&ctx.job, "SuccessCriteriaMet") {
            Some(Finish::Succeeded)
        } else if let Some(message) = fail_job_message(&ctx.job, &ctx.pods) {
            Some(Finish::Failed(Failure::PodFailurePolicy(message)))
        } else if exceeds_backoff_limit(&ctx) || past_backoff_limit_on_failure(&ctx) {
            Some(Finish::Failed(Failure::BackoffLimitExceeded))
        } else {
            failed_indexes_failure(&ctx).map(Finish::Failed)
        };
        let involved = Involved::of(&ctx.job);
        let source = Source::component(COMPONENT);
        let mut created_or_deleted = false;
        match ctx.finish {
            Some(Finish::Failed(_)) => {
                // `deleteActivePods`: stop everything still running.
                for pod in ctx.active_pods() {
                    self.delete_pod(env, &involved, &source, pod)?;
                    created_or_deleted = true;
                }
            }
            Some(Finish::Succeeded) => {}
            None => {
                let managed = self.manage_job(env, &ctx, &owner, &involved, &source)?;
                created_or_deleted = managed.created_or_deleted;
                let complete = match ctx.completions {
                    None => ctx.succeeded > 0 && managed.active == 0,
                    Some(completions) => ctx.succeeded >= completions && managed.active == 0,
                };
                if complete {
                    ctx.finish = Some(Finish::Succeeded);
                }
            }
        }
        if ctx.finish.is_none() {
            ctx.hold_delayed_deletions();
        }
        self.track_job_status_and_remove_finalizers(env, &ctx, created_or_deleted, &involved, &source)
    }

    /// `manageJob`: deletes surplus pods (for an Indexed Job first those with a duplicate or
    /// invalid index) or creates missing ones (an Indexed Job's lowest pending indexes), after
    /// the pod failure back-off. Deletion takes precedence: one or the other per sync.
    fn manage_job(
        &mut self,
        env: &mut Env<'_>,
        ctx: &SyncJobCtx,
        owner: &Owner<'_>,
        involved: &Involved,
        source: &Source,
    ) -> Result<Managed> {
        let spec = &ctx.job["spec"];
        let parallelism = int(&spec["parallelism"]).max(0);
        let active_pods = ctx.active_pods();
        let mut active = active_pods.len() as i64;
        let want_active = match ctx.completions {
            Some(completions) => parallelism.min((completions - ctx.succeeded).max(0)),
            // A work queue: after one success whatever runs keeps running, nothing new starts.
            None if ctx.succeeded > 0 => active,
            None => parallelism,
        };
        let mut created_or_deleted = false;
        // `manageJob`: when only failed pods are replaced, a terminating pod still holds its
        // place.
        let terminating = if only_replace_failed_pods(&ctx.job) {
            ctx.pods.iter().filter(|p| pod_state(p) == PodState::Terminating).count() as i64
        } else {
            0
        };
        let surplus = (active - want_active).max(0) as usize;
        let to_delete = active_pods_for_removal(ctx, &active_pods, surplus);
        if !to_delete.is_empty() {
            for pod in to_delete.into_iter().take(MAX_POD_CREATE_DELETE_PER_SYNC) {
                self.delete_pod(env, involved, source, pod)?;
                created_or_deleted = true;
                active -= 1;
            }
            return Ok(Managed { active, created_or_deleted });
        }
        if active + terminating < want_active {
            let missing = ((want_active - active - terminating) as usize).min(MAX_POD_CREATE_DELETE_PER_SYNC);
            match plan_creation(ctx, &active_pods, missing, env.ctx.now) {
                Creation::Wait(at) => env.timers.at(at, Wake::Job(ctx.key.clone())),
                Creation::Create(indexes) => {
                    for index in indexes {
                        if !self.create_pod(env, ctx, index, owner, involved, source)? {
                            break;
                        }
                        created_or_deleted = true;
                        active += 1;
                    }
                }
            }
        }
        Ok(Managed { active, created_or_deleted })
    }

    /// `trackJobStatusAndRemoveFinalizers` → `flushUncountedAndRemoveFinalizers`: record the
    /// new outcomes (uids under `uncountedTerminatedPods`; an Indexed Job's successes as
    /// `completedIndexes`), drop the finalizers, then move them into the counters; last
    /// `enactJobFinished`.
    fn track_job_status_and_remove_finalizers(
        &mut self,
        env: &mut Env<'_>,
        ctx: &SyncJobCtx,
        created_or_deleted: bool,
        involved: &Involved,
        source: &Source,
    ) -> Result<()> {
        let now = env.ctx.now;
        let job = &ctx.job;
        // Re-read the pods for ready/terminating after this sync's creates and deletes.
        let pods_now: Vec<Value> = if created_or_deleted {
            let owned = |stored: &Stored| stored.controller.as_ref().is_some_and(|c| *c.uid == *ctx.uid);
            env.ctx
                .store
                .list("pods", Some(&ctx.key.0), &owned, None, None)
                .items
                .iter()
                .filter_map(|stored| stored.value().ok())
                .filter(|pod| controller_of(pod).is_some_and(|o| o.uid == ctx.uid))
                .collect()
        } else {
            ctx.pods.clone()
        };
        let ready = pods_now.iter().filter(|p| pod_state(p) == PodState::Active && is_pod_ready(p)).count();
        let terminating = pods_now.iter().filter(|p| pod_state(p) == PodState::Terminating).count();
        let active_now = pods_now.iter().filter(|p| pod_state(p) == PodState::Active).count();

        let mut status = job["status"].clone();
        if !status.is_object() {
            status = json!({});
        }
        if status["startTime"].is_null() {
            status["startTime"] = json!(timestamp(now));
        }
        status["uncountedTerminatedPods"] = json!({});
        if ctx.indexed {
            // `completedIndexes` is `omitempty`.
            let completed = ctx.succeeded_indexes.to_string();
            if completed.is_empty() {
                if let Some(map) = status.as_object_mut() {
                    map.remove("completedIndexes");
                }
            } else {
                status["completedIndexes"] = json!(completed);
            }
            set_count(&mut status, "succeeded", ctx.succeeded);
            // A pointer without `omitempty` upstream: `""` until an index fails.
            if ctx.backoff_limit_per_index.is_some() {
                status["failedIndexes"] = json!(ctx.failed_indexes.to_string());
            }
        }
        let uids =
            |pods: &[Value]| -> Vec<Value> { pods.iter().map(|p| p["metadata"]["uid"].clone()).collect() };
        if !ctx.new_succeeded.is_empty() || !ctx.new_failed.is_empty() || !ctx.new_ignored.is_empty() {
            let mut uncounted = json!({});
            // An Indexed Job's completion index is enough not to count a success twice.
            if !ctx.new_succeeded.is_empty() && !ctx.indexed {
                uncounted["succeeded"] = json!(uids(&ctx.new_succeeded));
            }
            if !ctx.new_failed.is_empty() {
                uncounted["failed"] = json!(uids(&ctx.new_failed));
            }
            let mut first = status.clone();
            first["uncountedTerminatedPods"] = uncounted;
            self.write_status(env, job, first)?;
            for pod in ctx.new_succeeded.iter().chain(ctx.new_failed.iter()).chain(ctx.new_ignored.iter()) {
                self.remove_finalizer(env, pod)?;
            }
        }
        set_count(&mut status, "active", active_now as i64);
        set_count(&mut status, "succeeded", ctx.succeeded);
        // Counted once their finalizer is gone: a failure whose pod awaits its replacement is not.
        set_count(&mut status, "failed", int(&job["status"]["failed"]) + ctx.new_failed.len() as i64);
        status["ready"] = json!(ready);
        status["terminating"] = json!(terminating);
        if let Some(finish) = &ctx.finish {
            let (reason, message) = finish.reason_and_message();
            let (reason, message) = (reason.to_string(), message.to_string());
            let condition = |type_: &str| {
                json!({"type": type_, "status": "True", "lastProbeTime": timestamp(now),
                       "lastTransitionTime": timestamp(now), "reason": reason, "message": message})
            };
            if !crate::k8s::condition::is_true(&status["conditions"], finish.interim()) {
                push_condition(&mut status, condition(finish.interim()));
            }
            if terminating == 0 && active_now == 0 {
                self.enact_job_finished(
                    env,
                    finish,
                    &mut status,
                    condition(finish.terminal()),
                    involved,
                    source,
                );
            }
        }
        if status != job["status"] {
            self.write_status(env, job, status)?;
        }
        Ok(())
    }

    /// `enactJobFinished` (with `delayTerminalCondition()`: only once no pod is terminating)
    /// and `recordJobFinished`'s event.
    fn enact_job_finished(
        &self,
        env: &mut Env<'_>,
        finish: &Finish,
        status: &mut Value,
        terminal: Value,
        involved: &Involved,
        source: &Source,
    ) {
        push_condition(status, terminal);
        match finish {
            Finish::Succeeded => {
                status["completionTime"] = json!(timestamp(env.ctx.now));
                env.recorder.record(
                    &env.ctx,
                    involved,
                    EventType::Normal,
                    "Completed",
                    "Job completed",
                    source,
                );
            }
            Finish::Failed(_) => {
                let (reason, message) = finish.reason_and_message();
                env.recorder.record(&env.ctx, involved, EventType::Warning, reason, message, source);
            }
        }
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
        ctx: &SyncJobCtx,
        index: Option<i64>,
        owner: &Owner<'_>,
        involved: &Involved,
        source: &Source,
    ) -> Result<bool> {
        let mut template = ctx.job["spec"]["template"].clone();
        let mut generate_name = format!("{}-", ctx.key.1);
        if ctx.indexed {
            add_completion_index_env_variables(&mut template);
        }
        if let Some(index) = index {
            // `manageJob`: the index as annotation and (PodIndexLabel, GA) label, the hostname
            // `<job>-<index>`, and `podGenerateNameWithIndex`.
            for key in ["annotations", "labels"] {
                if !template["metadata"][key].is_object() {
                    template["metadata"][key] = json!({});
                }
                template["metadata"][key][COMPLETION_INDEX] = json!(index.to_string());
            }
            template["spec"]["hostname"] = json!(format!("{}-{index}", ctx.key.1));
            generate_name = pod_generate_name_with_index(&ctx.key.1, index);
            if ctx.backoff_limit_per_index.is_some() {
                // `addIndexFailureCountAnnotation`: the count carried from the pod replaced.
                let (failures, ignored) =
                    new_index_failure_counts(&ctx.job, ctx.delayed_deletion.get(&index));
                let annotations = &mut template["metadata"]["annotations"];
                annotations[INDEX_FAILURE_COUNT] = json!(failures.to_string());
                if ignored > 0 {
                    annotations[INDEX_IGNORED_FAILURE_COUNT] = json!(ignored.to_string());
                }
            }
        }
        let mut metadata = json!({
            "generateName": generate_name,
            "namespace": ctx.key.0,
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

/// Builds the sync context: the new outcomes of tracked pods (`getNewFinishedPods`; with
/// podReplacementPolicy TerminatingOrFailed a deleted pod that did not succeed counts as
/// failed, `isPodFailed`) and, for an Indexed Job, the completed indexes
/// (`calculateSucceededIndexes`, whose total is the succeeded count).
fn new_sync_ctx(key: &Key, job: Value, uid: String, pods: Vec<Value>) -> SyncJobCtx {
    let indexed = job["spec"]["completionMode"] == "Indexed";
    let completions = job["spec"]["completions"].as_i64();
    let prev_succeeded_indexes = if indexed {
        Intervals::parse(
            job["status"]["completedIndexes"].as_str().unwrap_or_default(),
            completions.unwrap_or(0),
        )
    } else {
        Intervals::default()
    };
    let mut ctx = SyncJobCtx {
        key: key.clone(),
        job,
        uid,
        pods: Vec::new(),
        indexed,
        completions,
        new_succeeded: Vec::new(),
        new_failed: Vec::new(),
        new_ignored: Vec::new(),
        succeeded: 0,
        failed: 0,
        succeeded_indexes: prev_succeeded_indexes.clone(),
        prev_succeeded_indexes,
        backoff_limit_per_index: None,
        failed_indexes: Intervals::default(),
        delayed_deletion: BTreeMap::new(),
        finish: None,
    };
    let (mut new_succeeded, mut new_failed, mut new_ignored) = (Vec::new(), Vec::new(), Vec::new());
    let policy = &ctx.job["spec"]["podFailurePolicy"];
    for pod in pods.iter().filter(|p| has_tracking_finalizer(p) && ctx.valid_index(p)) {
        if pod_state(pod) == PodState::Succeeded {
            new_succeeded.push(pod.clone());
        } else if is_pod_failed(pod, &ctx.job) {
            // `trackJobStatusAndRemoveFinalizers`: a failure an Ignore rule matches is not
            // counted; its finalizer goes all the same.
            if policy.is_null() || match_pod_failure_policy(policy, pod).counts() {
                new_failed.push(pod.clone());
            } else {
                new_ignored.push(pod.clone());
            }
        }
    }
    (ctx.new_succeeded, ctx.new_failed, ctx.new_ignored) = (new_succeeded, new_failed, new_ignored);
    ctx.pods = pods;
    ctx.succeeded = if indexed {
        let mut new_indexes: Vec<i64> = ctx.new_succeeded.iter().filter_map(completion_index).collect();
        new_indexes.sort_unstable();
        new_indexes.dedup();
        ctx.succeeded_indexes = ctx.prev_succeeded_indexes.with_ordered_indexes(&new_indexes);
        ctx.succeeded_indexes.total()
    } else {
        int(&ctx.job["status"]["succeeded"]) + ctx.new_succeeded.len() as i64
    };
    ctx.failed = int(&ctx.job["status"]["failed"]) + ctx.new_failed.len() as i64;
    ctx.backoff_limit_per_index = ctx.job["spec"]["backoffLimitPerIndex"].as_i64().filter(|_| indexed);
    if let Some(limit) = ctx.backoff_limit_per_index {
        let previous = ctx.job["status"]["failedIndexes"].as_str().unwrap_or_default();
        let previous = Intervals::parse(previous, completions.unwrap_or(0));
        let mut new_indexes: Vec<i64> = ctx
            .pods
            .iter()
            .filter(|p| {
                has_tracking_finalizer(p) && ctx.valid_index(p) && is_index_failed(&ctx.job, p, limit)
            })
            .filter_map(completion_index)
            .collect();
        new_indexes.sort_unstable();
        new_indexes.dedup();
        ctx.failed_indexes = previous.with_ordered_indexes(&new_indexes);
        ctx.delayed_deletion = pods_with_delayed_deletion_per_index(&ctx);
    }
    ctx
}

/// `isIndexFailed` (indexed_job_utils.go): a failed pod that matched a FailIndex rule, or whose
/// counted failure finds its index's count at `backoffLimitPerIndex` already.
fn is_index_failed(job: &Value, pod: &Value, backoff_limit_per_index: i64) -> bool {
    if !is_pod_failed(pod, job) {
        return false;
    }
    let policy = &job["spec"]["podFailurePolicy"];
    let counted = policy.is_null()
        || match match_pod_failure_policy(policy, pod) {
            PolicyMatch::FailIndex => return true,
            matched => matched.counts(),
        };
    counted && annotation_count(pod, INDEX_FAILURE_COUNT) >= backoff_limit_per_index
}

/// `parseIndexFailureCountAnnotation` / `parseIndexFailureIgnoreCountAnnotation`: the count in
/// annotation `key`, 0 when absent, unparsable, negative or past int32.
fn annotation_count(pod: &Value, key: &str) -> i64 {
    pod["metadata"]["annotations"][key]
        .as_str()
        .and_then(|text| text.parse::<i64>().ok())
        .filter(|count| (0..=i64::from(i32::MAX)).contains(count))
        .unwrap_or(0)
}

/// `getIndexAbsoluteFailureCount`: counted and ignored failures of the index before `pod`.
fn absolute_failure_count(pod: &Value) -> i64 {
    annotation_count(pod, INDEX_FAILURE_COUNT) + annotation_count(pod, INDEX_IGNORED_FAILURE_COUNT)
}

/// `getNewIndexFailureCounts`: the counts a replacement of `replaced` carries (its own plus its
/// failure, counted or ignored as the `podFailurePolicy` says); `(0, 0)` for an index's first pod.
fn new_index_failure_counts(job: &Value, replaced: Option<&Value>) -> (i64, i64) {
    let Some(pod) = replaced else { return (0, 0) };
    let (failures, ignored) =
        (annotation_count(pod, INDEX_FAILURE_COUNT), annotation_count(pod, INDEX_IGNORED_FAILURE_COUNT));
    let policy = &job["spec"]["podFailurePolicy"];
    if policy.is_null() || match_pod_failure_policy(policy, pod).counts() {
        (failures + 1, ignored)
    } else {
        (failures, ignored + 1)
    }
}

/// `getPodsWithDelayedDeletionPerIndex`: per index neither succeeded, failed nor running, its
/// last failed pod (the highest failure count, the latest finish).
fn pods_with_delayed_deletion_per_index(ctx: &SyncJobCtx) -> BTreeMap<i64, Value> {
    let active: BTreeSet<i64> = ctx.active_pods().into_iter().filter_map(completion_index).collect();
    let mut delayed: BTreeMap<i64, Value> = BTreeMap::new();
    let failed = ctx.pods.iter().filter(|p| has_tracking_finalizer(p) && ctx.valid_index(p));
    for pod in failed.filter(|p| is_pod_failed(p, &ctx.job)) {
        let Some(ix) = completion_index(pod) else { continue };
        if ctx.succeeded_indexes.has(ix) || ctx.failed_indexes.has(ix) || active.contains(&ix) {
            continue;
        }
        let later = |last: &Value| {
            absolute_failure_count(last) <= absolute_failure_count(pod) && failed_at(pod) >= failed_at(last)
        };
        if delayed.get(&ix).is_none_or(later) {
            delayed.insert(ix, pod.clone());
        }
    }
    delayed
}

/// With `backoffLimitPerIndex`, `syncJob`'s verdict on the failed indexes: more than
/// `maxFailedIndexes`, or some failed once every index has finished.
fn failed_indexes_failure(ctx: &SyncJobCtx) -> Option<Failure> {
    ctx.backoff_limit_per_index?;
    let failed = ctx.failed_indexes.total();
    if ctx.job["spec"]["maxFailedIndexes"].as_i64().is_some_and(|max| failed > max) {
        return Some(Failure::MaxFailedIndexesExceeded);
    }
    let finished = failed + ctx.succeeded_indexes.total() >= ctx.completions.unwrap_or(0);
    (failed > 0 && finished).then_some(Failure::FailedIndexes)
}

/// What `manageJob` does about missing pods: create these (an Indexed Job's indexes), or wait
/// for a back-off until then.
enum Creation {
    Create(Vec<Option<i64>>),
    Wait(Timestamp),
}

/// `manageJob`'s creation step: the Job's pod failure back-off (without `backoffLimitPerIndex`:
/// `newBackoffRecord.getRemainingTime`), the lowest pending indexes, and with
/// `backoffLimitPerIndex` each index's own back-off (`getPodCreationInfoForIndependentIndexes`):
/// the indexes past theirs, or a wait until the first one is.
fn plan_creation(ctx: &SyncJobCtx, active_pods: &[&Value], missing: usize, now: Timestamp) -> Creation {
    if ctx.backoff_limit_per_index.is_none() {
        let latest_failure =
            ctx.pods.iter().filter(|p| pod_state(p) == PodState::Failed).filter_map(failed_at).max();
        if let Some(at) = latest_failure.map(|at| back_off_until(ctx.failed, at)).filter(|at| *at > now) {
            return Creation::Wait(at);
        }
    }
    if !ctx.indexed {
        return Creation::Create(vec![None; missing]);
    }
    let pending = first_pending_indexes(ctx, active_pods, missing);
    if ctx.backoff_limit_per_index.is_none() {
        return Creation::Create(pending.into_iter().map(Some).collect());
    }
    let (mut ready, mut earliest) = (Vec::new(), None::<Timestamp>);
    for ix in pending {
        let last_failed = ctx.delayed_deletion.get(&ix);
        // `getRemainingTimePerIndex`: the failures before the last pod, plus its own.
        let until = last_failed
            .and_then(|pod| Some(back_off_until(absolute_failure_count(pod) + 1, failed_at(pod)?)));
        match until.filter(|at| *at > now) {
            None => ready.push(Some(ix)),
            Some(at) => earliest = Some(earliest.map_or(at, |first| first.min(at))),
        }
    }
    match earliest {
        Some(at) if ready.is_empty() => Creation::Wait(at),
        _ => Creation::Create(ready),
    }
}

/// `getRemainingTimeForFailuresCount` (backoff_utils.go): after `failures` failures, the last
/// at `at`, no pod before 10s × 2^(failures-1), at most 10 minutes, past `at`; none without a
/// failure.
fn back_off_until(failures: i64, at: Timestamp) -> Timestamp {
    if failures <= 0 {
        return at;
    }
    let exponent = (failures - 1).min(16) as i32;
    let delay = (POD_FAILURE_BACK_OFF_SECONDS * 2f64.powi(exponent)).min(MAX_POD_FAILURE_BACK_OFF_SECONDS);
    later(at, delay)
}

/// `exceedsBackoffLimit`: more failed pods than `spec.backoffLimit` (default 6).
fn exceeds_backoff_limit(ctx: &SyncJobCtx) -> bool {
    ctx.failed > ctx.job["spec"]["backoffLimit"].as_i64().unwrap_or(6)
}

/// `pastBackoffLimitOnFailure`: with restartPolicy OnFailure, the active pods' container
/// restarts reach the limit (any restart when the limit is 0).
fn past_backoff_limit_on_failure(ctx: &SyncJobCtx) -> bool {
    if ctx.job["spec"]["template"]["spec"]["restartPolicy"] != "OnFailure" {
        return false;
    }
    let backoff_limit = ctx.job["spec"]["backoffLimit"].as_i64().unwrap_or(6);
    let restarts: i64 = ctx
        .active_pods()
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
    if backoff_limit == 0 { restarts > 0 } else { restarts >= backoff_limit }
}

/// `activePodsForRemoval`: for an Indexed Job every pod without a valid index and all but one
/// pod of a repeated index (`appendDuplicatedIndexPodsForRemoval`); then, up to `rm_at_least`,
/// not-ready and newer pods first.
fn active_pods_for_removal<'a>(
    ctx: &SyncJobCtx,
    active_pods: &[&'a Value],
    rm_at_least: usize,
) -> Vec<&'a Value> {
    let removal_order = |a: &&Value, b: &&Value| {
        is_pod_ready(a).cmp(&is_pod_ready(b)).then_with(|| {
            b["metadata"]["creationTimestamp"].as_str().cmp(&a["metadata"]["creationTimestamp"].as_str())
        })
    };
    let (mut rm, mut left): (Vec<&Value>, Vec<&Value>) = (Vec::new(), Vec::new());
    if ctx.indexed {
        let completions = ctx.completions.unwrap_or(0);
        let mut by_index: std::collections::BTreeMap<i64, Vec<&Value>> = Default::default();
        for pod in active_pods {
            match completion_index(pod).filter(|ix| *ix < completions) {
                Some(ix) => by_index.entry(ix).or_default().push(pod),
                None => rm.push(pod),
            }
        }
        for (_, mut same) in by_index {
            same.sort_by(removal_order);
            let keep = same.pop();
            rm.extend(same);
            left.extend(keep);
        }
    } else {
        left = active_pods.to_vec();
    }
    if rm.len() < rm_at_least {
        left.sort_by(removal_order);
        let more = (rm_at_least - rm.len()).min(left.len());
        rm.extend(left.into_iter().take(more));
    }
    rm
}

/// `firstPendingIndexes`: the lowest `count` indexes below `completions` that neither run,
/// succeeded nor failed (nor, when only failed pods are replaced, have a terminating pod).
fn first_pending_indexes(ctx: &SyncJobCtx, active_pods: &[&Value], count: usize) -> Vec<i64> {
    let mut taken: Vec<i64> = active_pods.iter().filter_map(|p| completion_index(p)).collect();
    if only_replace_failed_pods(&ctx.job) {
        let terminating = ctx.pods.iter().filter(|p| pod_state(p) == PodState::Terminating);
        taken.extend(terminating.filter_map(completion_index));
    }
    let non_pending = ctx.succeeded_indexes.with_intervals(&ctx.failed_indexes);
    (0..ctx.completions.unwrap_or(0))
        .filter(|ix| !taken.contains(ix) && !non_pending.has(*ix))
        .take(count)
        .collect()
}

/// `getCompletionIndex`: the pod's `batch.kubernetes.io/job-completion-index` annotation as a
/// non-negative number.
fn completion_index(pod: &Value) -> Option<i64> {
    pod["metadata"]["annotations"][COMPLETION_INDEX].as_str()?.parse::<i64>().ok().filter(|ix| *ix >= 0)
}

/// `addCompletionIndexEnvVariables`: `JOB_COMPLETION_INDEX` from the index label (PodIndexLabel
/// is GA), in every container and init container that does not set it already.
fn add_completion_index_env_variables(template: &mut Value) {
    for list in ["initContainers", "containers"] {
        let Some(containers) = template["spec"][list].as_array_mut() else { continue };
        for container in containers {
            let has = container["env"]
                .as_array()
                .is_some_and(|env| env.iter().any(|v| v["name"] == COMPLETION_INDEX_ENV));
            if has {
                continue;
            }
            if !container["env"].is_array() {
                container["env"] = json!([]);
            }
            if let Some(env) = container["env"].as_array_mut() {
                env.push(json!({"name": COMPLETION_INDEX_ENV, "valueFrom": {"fieldRef": {
                    "fieldPath": format!("metadata.labels['{COMPLETION_INDEX}']")}}}));
            }
        }
    }
}

/// `podGenerateNameWithIndex`: `<job>-<index>-`, the job name cut so the prefix fits
/// `names.MaxGeneratedNameLength` (58).
fn pod_generate_name_with_index(job_name: &str, index: i64) -> String {
    let suffix = format!("-{index}-");
    let prefix = format!("{job_name}{suffix}");
    if prefix.len() > MAX_GENERATED_NAME_LENGTH {
        let cut = MAX_GENERATED_NAME_LENGTH - suffix.len();
        format!("{}{suffix}", &job_name[..cut.min(job_name.len())])
    } else {
        prefix
    }
}

/// Sets a `omitempty` counter of the Job status, or removes it at zero.
fn set_count(status: &mut Value, field: &str, count: i64) {
    if count > 0 {
        status[field] = json!(count);
    } else if let Some(map) = status.as_object_mut() {
        map.remove(field);
    }
}

/// `orderedIntervals` (indexed_job_utils.go): sorted, non-overlapping, non-adjacent inclusive
/// ranges of completion indexes; printed as `status.completedIndexes` (`1,3-5,7`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Intervals(Vec<(i64, i64)>);

impl Intervals {
    /// `succeededIndexesFromString`: corrupt parts skipped, cut at `completions`.
    fn parse(text: &str, completions: i64) -> Intervals {
        let mut result: Vec<(i64, i64)> = Vec::new();
        if text.is_empty() {
            return Intervals(result);
        }
        for part in text.split(',') {
            let mut limits = part.split('-');
            let Some(Ok(first)) = limits.next().map(str::parse::<i64>) else { continue };
            if first >= completions {
                break;
            }
            let last = match limits.next() {
                Some(last) => match last.parse::<i64>() {
                    Ok(last) => last.min(completions - 1),
                    Err(_) => continue,
                },
                None => first,
            };
            match result.last_mut() {
                Some(previous) if previous.1 == first - 1 => previous.1 = last,
                _ => result.push((first, last)),
            }
        }
        Intervals(result)
    }

    /// `withOrderedIndexes`: these intervals plus `indexes` (increasing), merged.
    fn with_ordered_indexes(&self, indexes: &[i64]) -> Intervals {
        self.with_intervals(&Intervals(indexes.iter().map(|ix| (*ix, *ix)).collect()))
    }

    /// `orderedIntervals.merge`: these intervals and `other`'s, merged.
    fn with_intervals(&self, other: &Intervals) -> Intervals {
        let mut all: Vec<(i64, i64)> = self.0.iter().chain(other.0.iter()).copied().collect();
        all.sort_unstable();
        let mut result: Vec<(i64, i64)> = Vec::new();
        for interval in all {
            match result.last_mut() {
                Some(last) if interval.0 <= last.1 + 1 => last.1 = last.1.max(interval.1),
                _ => result.push(interval),
            }
        }
        Intervals(result)
    }

    fn total(&self) -> i64 {
        self.0.iter().map(|(first, last)| last - first + 1).sum()
    }

    fn has(&self, ix: i64) -> bool {
        self.0.iter().any(|(first, last)| *first <= ix && ix <= *last)
    }
}

impl std::fmt::Display for Intervals {
    /// Two adjacent indexes print as `3,4`, longer runs as `3-5`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, (first, last)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{first}")?;
            if last > first {
                let separator = if *last == first + 1 { "," } else { "-" };
                write!(f, "{separator}{last}")?;
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
    fn completed_indexes_parse_merge_and_print_as_upstream() {
        let parsed = Intervals::parse("0,2-4,x,6,9-12", 11);
        assert_eq!(
            parsed,
            Intervals(vec![(0, 0), (2, 4), (6, 6), (9, 10)]),
            "corrupt parts skipped, cut at 11"
        );
        assert_eq!(parsed.total(), 1 + 3 + 1 + 2);
        let merged = parsed.with_ordered_indexes(&[1, 5, 8]);
        assert_eq!(merged.to_string(), "0-6,8-10");
        assert_eq!(Intervals::default().with_ordered_indexes(&[3, 4]).to_string(), "3,4");
        assert_eq!(Intervals::default().with_ordered_indexes(&[3, 5]).to_string(), "3,5");
        assert!(merged.has(8) && !merged.has(7));
    }

    #[test]
    fn pending_indexes_skip_running_completed_and_failed_ones() {
        let running = [json!({"metadata": {"annotations": {COMPLETION_INDEX: "1"}}})];
        let running: Vec<&Value> = running.iter().collect();
        let ctx = |completions: i64, failed: &str| {
            let job = json!({"spec": {"completionMode": "Indexed", "completions": completions, "backoffLimitPerIndex": 1},
                             "status": {"completedIndexes": "0,3", "failedIndexes": failed}});
            new_sync_ctx(&("ns".into(), "j".into()), job, "u".into(), Vec::new())
        };
        assert_eq!(first_pending_indexes(&ctx(6, ""), &running, 2), [2, 4]);
        assert_eq!(first_pending_indexes(&ctx(5, ""), &running, 9), [2, 4]);
        assert_eq!(first_pending_indexes(&ctx(6, "2,4"), &running, 9), [5], "failed indexes are not retried");
        // When only failed pods are replaced, a terminating pod holds its index.
        let terminating = json!({"metadata": {"annotations": {COMPLETION_INDEX: "2"},
                                              "deletionTimestamp": "2026-01-01T00:00:00Z"}});
        let job = |policy: &str| json!({"spec": {"completionMode": "Indexed", "completions": 4, "podReplacementPolicy": policy}});
        let pending = |policy: &str| {
            let ctx =
                new_sync_ctx(&("ns".into(), "j".into()), job(policy), "u".into(), vec![terminating.clone()]);
            first_pending_indexes(&ctx, &[], 9)
        };
        assert_eq!(pending("Failed"), [0, 1, 3]);
        assert_eq!(pending("TerminatingOrFailed"), [0, 1, 2, 3]);
    }

    #[test]
    fn an_index_fails_at_its_limit_or_on_a_fail_index_rule_and_its_count_travels_to_the_replacement() {
        let pod = |failures: &str, exit_code: i64| {
            json!({"metadata": {"annotations": {COMPLETION_INDEX: "0", INDEX_FAILURE_COUNT: failures}},
                   "status": {"phase": "Failed", "containerStatuses": [{"name": "work",
                       "state": {"terminated": {"exitCode": exit_code}}}]}})
        };
        let job = json!({"spec": {"backoffLimitPerIndex": 1}});
        assert!(!is_index_failed(&job, &pod("0", 1), 1), "the first failure leaves one retry");
        assert!(is_index_failed(&job, &pod("1", 1), 1));
        assert_eq!(new_index_failure_counts(&job, Some(&pod("0", 1))), (1, 0));
        assert_eq!(new_index_failure_counts(&job, None), (0, 0));
        let policy = json!({"rules": [{"action": "FailIndex", "onExitCodes": {"operator": "In", "values": [42]}},
                                      {"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]});
        let job = json!({"spec": {"backoffLimitPerIndex": 5, "podFailurePolicy": policy}});
        assert!(is_index_failed(&job, &pod("0", 42), 5), "FailIndex fails the index at once");
        assert!(!is_index_failed(&job, &pod("9", 3), 5), "an ignored failure never fails the index");
        assert_eq!(new_index_failure_counts(&job, Some(&pod("2", 3))), (2, 1), "ignored: counted apart");
        // `parseInt32`: garbage, negative or past int32 reads as 0.
        for garbage in ["x", "-1", "2147483648"] {
            assert_eq!(annotation_count(&pod(garbage, 1), INDEX_FAILURE_COUNT), 0, "{garbage}");
        }
    }

    #[test]
    fn a_retry_waits_for_its_index_back_off() {
        let at: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(back_off_until(1, at), later(at, 10.0));
        assert_eq!(back_off_until(3, at), later(at, 40.0));
        assert_eq!(back_off_until(12, at), later(at, 600.0), "at most 10 minutes");
    }

    #[test]
    fn indexed_pods_are_named_after_their_index_within_the_generated_name_limit() {
        assert_eq!(pod_generate_name_with_index("shard", 12), "shard-12-");
        let long = "j".repeat(70);
        let name = pod_generate_name_with_index(&long, 3);
        assert_eq!(name.len(), MAX_GENERATED_NAME_LENGTH);
        assert!(name.ends_with("j-3-"));
    }

    #[test]
    fn duplicated_and_invalid_indexes_are_removed_first() {
        let pod = |name: &str, index: Option<&str>, ready: bool| {
            let mut pod = json!({"metadata": {"name": name, "creationTimestamp": format!("2026-01-01T00:00:0{}Z", name.len())},
                                 "status": {"conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}});
            if let Some(index) = index {
                pod["metadata"]["annotations"] = json!({COMPLETION_INDEX: index});
            }
            pod
        };
        let pods = [
            pod("a", Some("0"), true),
            pod("bb", Some("0"), false),
            pod("c", None, true),
            pod("d", Some("7"), true),
        ];
        let active: Vec<&Value> = pods.iter().collect();
        let job = json!({"spec": {"completionMode": "Indexed", "completions": 3}});
        let ctx = new_sync_ctx(&("ns".into(), "j".into()), job, "u".into(), Vec::new());
        let names = |pods: Vec<&Value>| -> Vec<String> {
            let mut names: Vec<String> =
                pods.iter().map(|p| p["metadata"]["name"].as_str().unwrap().to_string()).collect();
            names.sort();
            names
        };
        // The not-ready duplicate of index 0 goes, with the pods without a valid index.
        assert_eq!(names(active_pods_for_removal(&ctx, &active, 0)), ["bb", "c", "d"]);
        assert_eq!(names(active_pods_for_removal(&ctx, &active, 4)), ["a", "bb", "c", "d"]);
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
