//! The CronJob controller: a Job per scheduled time on the simulated clock, the active list, concurrency policy and history limits.
//!
//! Upstream (v1.33) `pkg/controller/cronjob/cronjob_controllerv2.go` (`syncCronJob`: reconcile
//! the active list with the owned Jobs — `SawCompletedJob`, `MissingJob` — then, unless
//! suspended or being deleted, the most recent missed time (`mostRecentScheduleTime`, bounded
//! by `startingDeadlineSeconds`: `MissSchedule`), `Forbid` (`JobAlreadyActive`) and `Replace`,
//! the Job `<cronjob>-<minutes since epoch>` from the template with the
//! `batch.kubernetes.io/cronjob-scheduled-timestamp` annotation (`getJobFromTemplate2`),
//! `SuccessfulCreate`, and `cleanupFinishedJobs` (`SuccessfulDelete`); the next sync is queued at
//! the next scheduled time) and `utils.go`.

use k8s_openapi::jiff::{Timestamp, tz::TimeZone};
use serde_json::{Map, Value, json};

use super::{
    Env, Error, Key, Result, Wake, controller_of,
    events::{EventType, Involved, Source},
    timestamp,
};
use crate::{
    cron,
    store::{self, DeleteOptions, DryRun, Propagation, Stored, Subresource},
};

const COMPONENT: &str = "cronjob-controller";

/// `batch.kubernetes.io/cronjob-scheduled-timestamp`.
pub const SCHEDULED_TIMESTAMP_ANNOTATION: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";

/// Missed times beyond which upstream warns (`TooManyMissedTimes`).
const TOO_MANY_MISSED: usize = 100;

/// The CronJob controller (stateless between syncs).
#[derive(Debug, Default)]
pub(crate) struct CronJobs;

/// How a finished Job ended (`jobutil.FinishedCondition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Finished {
    /// Not finished.
    No,
    /// `Complete`.
    Complete,
    /// `Failed`.
    Failed,
}

fn finished(job: &Value) -> Finished {
    let conditions = job["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let holds = |kind: &str| conditions.iter().any(|c| c["type"] == kind && c["status"] == "True");
    if holds("Complete") {
        Finished::Complete
    } else if holds("Failed") {
        Finished::Failed
    } else {
        Finished::No
    }
}

impl CronJobs {
    /// `syncCronJob` for one CronJob.
    pub(crate) fn sync(&mut self, env: &mut Env<'_>, key: &Key) -> Result<()> {
        let Some(stored) = env.ctx.store.get("cronjobs.batch", &key.0, &key.1) else { return Ok(()) };
        let mut cj: Value = stored.value().map_err(Error::Store)?;
        let before = cj["status"].clone();
        let uid = cj["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        let involved = Involved::of(&cj);
        let source = Source::component(COMPONENT);
        let owned = |stored: &Stored| stored.json.contains(&uid);
        let jobs: Vec<Value> = env
            .ctx
            .store
            .list("jobs.batch", Some(&key.0), &owned, None, None)
            .items
            .iter()
            .filter_map(|stored| stored.value().ok())
            .filter(|job| controller_of(job).is_some_and(|owner| owner.uid == uid))
            .collect();
        self.reconcile_active(env, &involved, &source, &mut cj, &jobs);
        let mut next_wake = None;
        if cj["metadata"]["deletionTimestamp"].is_null() && cj["spec"]["suspend"] != json!(true) {
            next_wake = self.schedule(env, &involved, &source, &mut cj, key)?;
        }
        if cj["status"] != before {
            let written = match env.ctx.store.update(
                &env.ctx.types.cronjobs,
                cj.clone(),
                Subresource::Status,
                DryRun::Off,
            ) {
                Ok(written) => written,
                Err(store::Error::Conflict { .. } | store::Error::NotFound { .. }) => return Ok(()),
                Err(error) => return Err(Error::Store(error)),
            };
            cj = written;
        }
        self.cleanup_finished(env, &involved, &source, &cj, &jobs);
        if let Some(at) = next_wake {
            env.timers.at(at, Wake::CronJob(key.clone()));
        }
        Ok(())
    }

    /// The active list against the owned Jobs; the last successful time.
    fn reconcile_active(
        &self,
        env: &mut Env<'_>,
        involved: &Involved,
        source: &Source,
        cj: &mut Value,
        jobs: &[Value],
    ) {
        let mut active: Vec<Value> = cj["status"]["active"].as_array().cloned().unwrap_or_default();
        let in_active = |active: &[Value], uid: &Value| active.iter().any(|r| &r["uid"] == uid);
        let mut last_successful =
            cj["status"]["lastSuccessfulTime"].as_str().and_then(|t| t.parse::<Timestamp>().ok());
        for job in jobs {
            let uid = &job["metadata"]["uid"];
            let name = job["metadata"]["name"].as_str().unwrap_or_default();
            let state = finished(job);
            let found = in_active(&active, uid);
            if !found && state == Finished::No {
                let text = format!("Saw a job that the controller did not create or forgot: {name}");
                env.recorder.record(&env.ctx, involved, EventType::Warning, "UnexpectedJob", &text, source);
            } else if found && state != Finished::No {
                active.retain(|r| &r["uid"] != uid);
                let condition = if state == Finished::Complete { "Complete" } else { "Failed" };
                let text = format!("Saw completed job: {name}, condition: {condition}");
                env.recorder.record(&env.ctx, involved, EventType::Normal, "SawCompletedJob", &text, source);
            }
            if state == Finished::Complete
                && let Some(done) =
                    job["status"]["completionTime"].as_str().and_then(|t| t.parse::<Timestamp>().ok())
                && last_successful.is_none_or(|last| done > last)
            {
                last_successful = Some(done);
            }
        }
        let present: Vec<&Value> = jobs.iter().map(|job| &job["metadata"]["uid"]).collect();
        active.retain(|reference| {
            if present.contains(&&reference["uid"]) {
                return true;
            }
            let name = reference["name"].as_str().unwrap_or_default();
            let text = format!("Active job went missing: {name}");
            env.recorder.record(&env.ctx, involved, EventType::Normal, "MissingJob", &text, source);
            false
        });
        set_status(cj, "active", if active.is_empty() { Value::Null } else { Value::Array(active) });
        if let Some(at) = last_successful {
            set_status(cj, "lastSuccessfulTime", json!(timestamp(at)));
        }
    }

    /// The scheduling half of `syncCronJob`; returns when to look again.
    fn schedule(
        &self,
        env: &mut Env<'_>,
        involved: &Involved,
        source: &Source,
        cj: &mut Value,
        key: &Key,
    ) -> Result<Option<Timestamp>> {
        let now = env.ctx.now;
        let spec = cj["spec"].clone();
        let zone = match spec["timeZone"].as_str() {
            None => TimeZone::UTC,
            Some(name) => match cron::time_zone(name) {
                Some(zone) => zone,
                None => {
                    let text = format!("invalid timeZone: {name:?}: unknown time zone {name}");
                    env.recorder.record(
                        &env.ctx,
                        involved,
                        EventType::Warning,
                        "UnknownTimeZone",
                        &text,
                        source,
                    );
                    return Ok(None);
                }
            },
        };
        let text = spec["schedule"].as_str().unwrap_or_default();
        let schedule = match cron::parse(text) {
            Ok(schedule) => schedule,
            Err(error) => {
                let message = format!("unparseable schedule: {text:?} : {error}");
                env.recorder.record(
                    &env.ctx,
                    involved,
                    EventType::Warning,
                    "UnparseableSchedule",
                    &message,
                    source,
                );
                return Ok(None);
            }
        };
        let parse = |v: &Value| v.as_str().and_then(|t| t.parse::<Timestamp>().ok());
        let created = parse(&cj["metadata"]["creationTimestamp"]).unwrap_or(now);
        let deadline = spec["startingDeadlineSeconds"].as_i64();
        // `mostRecentScheduleTime`: from the last scheduled time (else creation), no further back
        // than the starting deadline.
        let mut earliest = parse(&cj["status"]["lastScheduleTime"]).unwrap_or(created);
        if let Some(deadline) = deadline {
            let window_start = now.checked_sub(k8s_openapi::jiff::SignedDuration::from_secs(deadline));
            if let Ok(window_start) = window_start
                && window_start > earliest
            {
                earliest = window_start;
            }
        }
        let next_after_now = schedule.next(now, &zone);
        let (most_recent, missed) = most_recent_schedule_time(&schedule, &zone, earliest, now);
        if missed > TOO_MANY_MISSED {
            let text = "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew";
            env.recorder.record(&env.ctx, involved, EventType::Warning, "TooManyMissedTimes", text, source);
        }
        let Some(scheduled) = most_recent else { return Ok(next_after_now) };
        if let Some(deadline) = deadline
            && super::later(scheduled, deadline as f64) < now
        {
            let text = format!("Missed scheduled time to start a job: {}", rfc1123z(scheduled, &zone));
            env.recorder.record(&env.ctx, involved, EventType::Warning, "MissSchedule", &text, source);
            return Ok(next_after_now);
        }
        let job_name = format!("{}-{}", key.1, scheduled.as_second() / 60);
        let active: Vec<Value> = cj["status"]["active"].as_array().cloned().unwrap_or_default();
        if active.iter().any(|r| r["name"] == json!(job_name))
            || parse(&cj["status"]["lastScheduleTime"]) == Some(scheduled)
        {
            return Ok(next_after_now);
        }
        match spec["concurrencyPolicy"].as_str() {
            Some("Forbid") if !active.is_empty() => {
                let text =
                    "Not starting job because prior execution is running and concurrency policy is Forbid";
                env.recorder.record(&env.ctx, involved, EventType::Normal, "JobAlreadyActive", text, source);
                return Ok(next_after_now);
            }
            Some("Replace") => {
                for reference in &active {
                    let name = reference["name"].as_str().unwrap_or_default();
                    delete_job(env, involved, source, &key.0, name).map_err(Error::Store)?;
                }
                set_status(cj, "active", Value::Null);
            }
            _ => {}
        }
        let job = job_from_template(cj, &job_name, scheduled, &zone);
        let created = match env.ctx.store.create(&env.ctx.types.jobs, job) {
            Ok(created) => {
                let text = format!("Created job {job_name}");
                env.recorder.record(&env.ctx, involved, EventType::Normal, "SuccessfulCreate", &text, source);
                created
            }
            Err(store::Error::AlreadyExists { .. }) => {
                // Created before but not recorded: the existing Job counts if it is ours.
                match env.ctx.store.get_value(&env.ctx.types.jobs, &key.0, &job_name) {
                    Ok(existing) if controller_of(&existing).is_some_and(|o| o.uid == involved.uid) => {
                        existing
                    }
                    _ => return Ok(next_after_now),
                }
            }
            Err(error) => return Err(Error::Store(error)),
        };
        let mut active: Vec<Value> = cj["status"]["active"].as_array().cloned().unwrap_or_default();
        active.push(json!({
            "kind": "Job",
            "namespace": key.0,
            "name": job_name,
            "uid": created["metadata"]["uid"],
            "apiVersion": "batch/v1",
            "resourceVersion": created["metadata"]["resourceVersion"],
        }));
        set_status(cj, "active", Value::Array(active));
        set_status(cj, "lastScheduleTime", json!(timestamp(scheduled)));
        Ok(next_after_now)
    }

    /// `cleanupFinishedJobs`: the oldest finished Jobs beyond the history limits are deleted.
    fn cleanup_finished(
        &self,
        env: &mut Env<'_>,
        involved: &Involved,
        source: &Source,
        cj: &Value,
        jobs: &[Value],
    ) {
        let active: Vec<&Value> =
            cj["status"]["active"].as_array().map(|a| a.iter().collect()).unwrap_or_default();
        for (state, limit_field) in
            [(Finished::Complete, "successfulJobsHistoryLimit"), (Finished::Failed, "failedJobsHistoryLimit")]
        {
            let Some(limit) = cj["spec"][limit_field].as_i64() else { continue };
            let mut done: Vec<&Value> = jobs
                .iter()
                .filter(|job| finished(job) == state)
                .filter(|job| !active.iter().any(|r| r["uid"] == job["metadata"]["uid"]))
                .filter(|job| job["metadata"]["deletionTimestamp"].is_null())
                .collect();
            if done.len() as i64 <= limit {
                continue;
            }
            // `byJobStartTime`: oldest first, jobs without a start time last, then by name.
            done.sort_by(|a, b| {
                let start = |job: &Value| job["status"]["startTime"].as_str().map(str::to_string);
                match (start(a), start(b)) {
                    (Some(x), Some(y)) if x != y => x.cmp(&y),
                    (Some(_), None) => std::cmp::Ordering::Less,
                    (None, Some(_)) => std::cmp::Ordering::Greater,
                    _ => a["metadata"]["name"].as_str().cmp(&b["metadata"]["name"].as_str()),
                }
            });
            let excess = done.len() - limit.max(0) as usize;
            for job in done.into_iter().take(excess) {
                let name = job["metadata"]["name"].as_str().unwrap_or_default();
                if let Err(error) = delete_job(env, involved, source, &involved.namespace, name) {
                    tracing::debug!(%error, name, "cronjob history cleanup");
                }
            }
        }
    }
}

/// `deleteJob` (pkg/controller/cronjob/cronjob_controllerv2.go): a Job already gone counts as
/// deleted; either way the CronJob gets a `SuccessfulDelete` event. Used for a Replace policy's
/// active Jobs and for the finished ones beyond the history limits.
fn delete_job(
    env: &mut Env<'_>,
    involved: &Involved,
    source: &Source,
    namespace: &str,
    name: &str,
) -> std::result::Result<(), store::Error> {
    let options = DeleteOptions { propagation: Some(Propagation::Background), ..Default::default() };
    match env.ctx.store.delete(&env.ctx.types.jobs, namespace, name, &options) {
        Ok(_) | Err(store::Error::NotFound { .. }) => {
            let text = format!("Deleted job {name}");
            env.recorder.record(&env.ctx, involved, EventType::Normal, "SuccessfulDelete", &text, source);
            Ok(())
        }
        Err(error) => Err(error),
    }
}

/// `mostRecentScheduleTime` (pkg/controller/cronjob/utils.go): the latest scheduled time in
/// `(earliest, now]` and upstream's estimate of how many were missed — the gap between the
/// first two times counted across the window, then the last few walked exactly (so a long
/// downtime costs a few steps, not one per missed minute).
fn most_recent_schedule_time(
    schedule: &cron::Schedule,
    zone: &TimeZone,
    earliest: Timestamp,
    now: Timestamp,
) -> (Option<Timestamp>, usize) {
    let Some(t1) = schedule.next(earliest, zone).filter(|t1| *t1 <= now) else { return (None, 0) };
    let Some(t2) = schedule.next(t1, zone).filter(|t2| *t2 <= now) else { return (Some(t1), 1) };
    let between = (t2.as_second() - t1.as_second()).max(1);
    let missed = (now.as_second() - t1.as_second()) / between + 1;
    let potential_earliest = Timestamp::from_second(t1.as_second() + (missed - 2) * between).unwrap_or(t1);
    let mut most_recent = None;
    let mut t = schedule.next(potential_earliest, zone);
    while let Some(at) = t.filter(|at| *at <= now) {
        most_recent = Some(at);
        t = schedule.next(at, zone);
    }
    (most_recent, missed as usize)
}

/// Sets (or, for `Null`, removes) one status field.
fn set_status(cj: &mut Value, key: &str, value: Value) {
    if !cj["status"].is_object() {
        cj["status"] = json!({});
    }
    let Some(status) = cj["status"].as_object_mut() else { return };
    if value.is_null() {
        status.remove(key);
    } else {
        status.insert(key.to_string(), value);
    }
}

/// `getJobFromTemplate2`: the template's labels, annotations (plus the scheduled time in the
/// CronJob's zone) and spec, controlled by the CronJob.
fn job_from_template(cj: &Value, name: &str, scheduled: Timestamp, zone: &TimeZone) -> Value {
    let template = &cj["spec"]["jobTemplate"];
    let mut annotations: Map<String, Value> =
        template["metadata"]["annotations"].as_object().cloned().unwrap_or_default();
    let local = scheduled.to_zoned(zone.clone());
    annotations.insert(
        SCHEDULED_TIMESTAMP_ANNOTATION.into(),
        json!(local.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string().replace("+00:00", "Z")),
    );
    let mut metadata = json!({
        "name": name,
        "namespace": cj["metadata"]["namespace"],
        "annotations": annotations,
        "ownerReferences": [{
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "name": cj["metadata"]["name"],
            "uid": cj["metadata"]["uid"],
            "controller": true,
            "blockOwnerDeletion": true,
        }],
    });
    if let Some(labels) = template["metadata"]["labels"].as_object().filter(|l| !l.is_empty()) {
        metadata["labels"] = Value::Object(labels.clone());
    }
    let spec = if template["spec"].is_object() { template["spec"].clone() } else { json!({}) };
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata, "spec": spec})
}

/// Go's `time.RFC1123Z` in the CronJob's zone: `Mon, 02 Jan 2006 15:04:05 -0700`.
fn rfc1123z(at: Timestamp, zone: &TimeZone) -> String {
    at.to_zoned(zone.clone()).strftime("%a, %d %b %Y %H:%M:%S %z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_a_long_downtime_only_the_most_recent_time_counts() {
        let schedule = cron::parse("*/5 * * * *").unwrap();
        let earliest: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let now: Timestamp = "2026-01-03T10:07:00Z".parse().unwrap();
        let (most_recent, missed) = most_recent_schedule_time(&schedule, &TimeZone::UTC, earliest, now);
        assert_eq!(most_recent.unwrap().to_string(), "2026-01-03T10:05:00Z");
        assert!(missed > TOO_MANY_MISSED);
        let (none, zero) = most_recent_schedule_time(&schedule, &TimeZone::UTC, now, now);
        assert_eq!((none, zero), (None, 0));
    }

    #[test]
    fn the_job_is_named_after_the_minutes_since_the_epoch_and_annotated_with_its_time() {
        let cj = json!({"metadata": {"name": "nightly", "namespace": "default", "uid": "u1"},
                        "spec": {"jobTemplate": {"metadata": {"labels": {"team": "ml"}},
                                 "spec": {"template": {"spec": {"restartPolicy": "OnFailure"}}}}}});
        let at: Timestamp = "2026-01-01T03:00:00Z".parse().unwrap();
        let name = format!("nightly-{}", at.as_second() / 60);
        assert_eq!(name, "nightly-29453940");
        let job = job_from_template(&cj, &name, at, &TimeZone::UTC);
        assert_eq!(
            job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION],
            json!("2026-01-01T03:00:00Z")
        );
        assert_eq!(job["metadata"]["labels"], json!({"team": "ml"}));
        assert_eq!(job["metadata"]["ownerReferences"][0]["kind"], json!("CronJob"));
        assert_eq!(rfc1123z(at, &TimeZone::UTC), "Thu, 01 Jan 2026 03:00:00 +0000");
    }
}
