//! The disruption controller: each PodDisruptionBudget's status (expected, desired and current healthy pods, disruptions allowed).
//!
//! Upstream (v1.33) `pkg/controller/disruption/disruption.go`: `trySync` (pods by the budget's
//! selector — `{}` selects every pod of the namespace, no selector none — `getExpectedPodCount`,
//! `buildDisruptedPodMap`, `countHealthyPods`, `updatePdbStatus`), `failSafe` on an error, and
//! `pkg/apis/policy/helper` `UpdateDisruptionAllowedCondition`. The scale of a percentage or a
//! `maxUnavailable` comes from the pods' controllers (`getExpectedScale`: ReplicaSet, the
//! Deployment of a ReplicaSet, StatefulSet; any other controller has no scale subresource here).
//! The eviction subresource (`sim/server/eviction.rs`) decrements `disruptionsAllowed` and records
//! the pod in `disruptedPods`; this controller forgets such a pod two minutes later
//! (`DeletionTimeout`) if it was not deleted.

use std::collections::BTreeSet;

use k8s_openapi::{apimachinery::pkg::apis::meta::v1::LabelSelector, jiff::Timestamp};
use serde_json::{Map, Value, json};

use super::{
    Env, Error, Result, Wake, controller_of,
    events::{EventType, Involved, Source},
    later, timestamp,
};
use crate::store::{self, DryRun, Stored, Subresource};

/// `DeletionTimeout`: how long a pod the eviction handler recorded stays out of the healthy
/// count while it is not deleted.
pub(crate) const DELETION_TIMEOUT_SECONDS: i64 = 120;

const COMPONENT: &str = "controllermanager";

/// The disruption controller (stateless between syncs).
#[derive(Debug, Default)]
pub(crate) struct Disruption;

/// What a budget's counts come out as, or why they cannot be computed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Counts {
    /// `expectedPods`, `desiredHealthy`.
    Known { expected: i64, desired: i64 },
    /// `getExpectedPodCount` failed: the message of the `SyncFailed` condition.
    Failed(String),
}

impl Disruption {
    /// Syncs every budget of `namespace`.
    pub(crate) fn sync_namespace(&mut self, env: &mut Env<'_>, namespace: &str) -> Result<()> {
        let all = |_: &Stored| true;
        let budgets =
            env.ctx.store.list("poddisruptionbudgets.policy", Some(namespace), &all, None, None).items;
        for stored in budgets {
            let pdb = stored.value().map_err(Error::Store)?;
            self.sync(env, pdb)?;
        }
        Ok(())
    }

    /// `trySync` for one budget.
    fn sync(&mut self, env: &mut Env<'_>, pdb: Value) -> Result<()> {
        if !pdb["metadata"]["deletionTimestamp"].is_null() {
            return Ok(());
        }
        let namespace = pdb["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        let involved = Involved::of(&pdb);
        let source = Source::component(COMPONENT);
        let pods = pods_for(env, &namespace, &pdb["spec"]["selector"])?;
        if pods.is_empty() {
            env.recorder.record(
                &env.ctx,
                &involved,
                EventType::Normal,
                "NoPods",
                "No matching pods found",
                &source,
            );
        }
        let (counts, unmanaged) = expected_pod_count(env, &pdb, &pods);
        if let Counts::Failed(message) = &counts {
            let text = format!("Failed to calculate the number of expected pods: {message}");
            env.recorder.record(
                &env.ctx,
                &involved,
                EventType::Warning,
                "CalculateExpectedPodCountFailed",
                &text,
                &source,
            );
        }
        if !unmanaged.is_empty() {
            let selector = crate::k8s::selector::selector_string(&pdb["spec"]["selector"]);
            let text = format!(
                "Pods selected by this PodDisruptionBudget (selector: &LabelSelector{{{selector}}}) were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB to an integer value."
            );
            env.recorder.record(&env.ctx, &involved, EventType::Warning, "UnmanagedPods", &text, &source);
        }
        let now = env.ctx.now;
        let (disrupted, recheck) = disrupted_pod_map(env, &source, &pdb, &pods, now);
        if let Some(at) = recheck {
            env.timers.at(at, Wake::Disruption(namespace.clone()));
        }
        let status = match counts {
            Counts::Known { expected, desired } => {
                let healthy = count_healthy_pods(&pods, &disrupted, now);
                status_of(&pdb, healthy, desired, expected, disrupted, now)
            }
            Counts::Failed(message) => fail_safe(&pdb, &message, now),
        };
        if status == pdb["status"] {
            return Ok(());
        }
        let mut next = pdb;
        next["status"] = status;
        match env.ctx.store.update(
            &env.ctx.types.poddisruptionbudgets,
            next,
            Subresource::Status,
            DryRun::Off,
        ) {
            Ok(_) | Err(store::Error::Conflict { .. } | store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(Error::Store(error)),
        }
    }
}

/// `getPodsForPdb`: the namespace's pods the selector matches (`{}` all of them, none without a
/// selector: `metav1.LabelSelectorAsSelector`).
fn pods_for(env: &Env<'_>, namespace: &str, selector: &Value) -> Result<Vec<Value>> {
    if selector.is_null() {
        return Ok(Vec::new());
    }
    let selector: LabelSelector = serde_json::from_value(selector.clone()).unwrap_or_default();
    let matches = |stored: &Stored| crate::k8s::selector::api_selector_matches(&selector, &stored.labels);
    env.ctx
        .store
        .list("pods", Some(namespace), &matches, None, None)
        .items
        .iter()
        .map(|stored| stored.value().map_err(Error::Store))
        .collect()
}

/// `intstr.GetScaledValueFromIntOrPercent(value, total, roundUp)`; `None` for a malformed value.
fn scaled(value: &Value, total: i64, round_up: bool) -> Option<i64> {
    match value {
        Value::Number(number) => number.as_i64(),
        Value::String(text) => {
            let percent: i64 = text.strip_suffix('%')?.parse().ok()?;
            let product = percent * total;
            Some(if round_up { (product + 99).div_euclid(100) } else { product.div_euclid(100) })
        }
        _ => None,
    }
}

/// `getExpectedPodCount`: an integer `minAvailable` counts the matching pods; a percentage or
/// `maxUnavailable` counts the replicas their controllers want. Also the unmanaged pods' names.
fn expected_pod_count(env: &Env<'_>, pdb: &Value, pods: &[Value]) -> (Counts, Vec<String>) {
    let spec = &pdb["spec"];
    let invalid = |value: &Value| Counts::Failed(format!("invalid value for IntOrString: {value}"));
    if !spec["maxUnavailable"].is_null() {
        let (expected, unmanaged) = match expected_scale(env, pods) {
            Ok(found) => found,
            Err(message) => return (Counts::Failed(message), Vec::new()),
        };
        let Some(max_unavailable) = scaled(&spec["maxUnavailable"], expected, true) else {
            return (invalid(&spec["maxUnavailable"]), unmanaged);
        };
        return (Counts::Known { expected, desired: (expected - max_unavailable).max(0) }, unmanaged);
    }
    match &spec["minAvailable"] {
        Value::Number(number) => {
            let desired = number.as_i64().unwrap_or(0);
            (Counts::Known { expected: pods.len() as i64, desired }, Vec::new())
        }
        text @ Value::String(_) => {
            let (expected, unmanaged) = match expected_scale(env, pods) {
                Ok(found) => found,
                Err(message) => return (Counts::Failed(message), Vec::new()),
            };
            match scaled(text, expected, true) {
                Some(desired) => (Counts::Known { expected, desired }, unmanaged),
                None => (invalid(text), unmanaged),
            }
        }
        _ => (Counts::Known { expected: 0, desired: 0 }, Vec::new()),
    }
}

/// `getExpectedScale`: the sum of `spec.replicas` over the pods' distinct controllers (a
/// ReplicaSet owned by a Deployment counts as that Deployment); pods without a controller are
/// returned as unmanaged; a controller without a scale is an error.
fn expected_scale(env: &Env<'_>, pods: &[Value]) -> std::result::Result<(i64, Vec<String>), String> {
    let store = env.ctx.store;
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut expected = 0;
    let mut unmanaged = Vec::new();
    for pod in pods {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
        let Some(owner) = controller_of(pod) else {
            unmanaged.push(name.to_string());
            continue;
        };
        let object = |group_resource: &str, owner_name: &str, uid: &str| {
            store
                .get(group_resource, namespace, owner_name)
                .and_then(|stored| stored.value().ok())
                .filter(|value| value["metadata"]["uid"] == json!(uid))
        };
        // (the uid of the controller whose scale counts, its replicas)
        let scale = match owner.kind.as_str() {
            "ReplicaSet" => object("replicasets.apps", &owner.name, &owner.uid).and_then(|rs| {
                // `getPodDeployment`: a ReplicaSet a Deployment controls counts as the Deployment.
                match controller_of(&rs).filter(|c| c.kind == "Deployment") {
                    Some(deployment) => object("deployments.apps", &deployment.name, &deployment.uid)
                        .map(|d| (deployment.uid.clone(), d["spec"]["replicas"].as_i64().unwrap_or(1))),
                    None => Some((owner.uid.clone(), rs["spec"]["replicas"].as_i64().unwrap_or(1))),
                }
            }),
            "StatefulSet" => object("statefulsets.apps", &owner.name, &owner.uid)
                .map(|set| (owner.uid.clone(), set["spec"]["replicas"].as_i64().unwrap_or(1))),
            _ => None,
        };
        let Some((uid, replicas)) = scale else {
            return Err(format!("found no controllers for pod {name:?}"));
        };
        if seen.insert(uid) {
            expected += replicas;
        }
    }
    Ok((expected, unmanaged))
}

/// `buildDisruptedPodMap`: the recorded evictions still pending (pod present, not being
/// deleted, recorded less than two minutes ago) and when the earliest of them expires.
fn disrupted_pod_map(
    env: &mut Env<'_>,
    source: &Source,
    pdb: &Value,
    pods: &[Value],
    now: Timestamp,
) -> (Map<String, Value>, Option<Timestamp>) {
    let recorded = pdb["status"]["disruptedPods"].as_object().cloned().unwrap_or_default();
    let mut kept = Map::new();
    let mut recheck: Option<Timestamp> = None;
    for pod in pods.iter().filter(|pod| pod["metadata"]["deletionTimestamp"].is_null()) {
        let name = pod["metadata"]["name"].as_str().unwrap_or_default();
        let Some(at) = recorded.get(name) else { continue };
        let Some(since) = at.as_str().and_then(|t| t.parse::<Timestamp>().ok()) else { continue };
        let expected_deletion = later(since, DELETION_TIMEOUT_SECONDS as f64);
        if expected_deletion < now {
            let namespace = pdb["metadata"]["namespace"].as_str().unwrap_or_default();
            let pdb_name = pdb["metadata"]["name"].as_str().unwrap_or_default();
            let text = format!("Pod was expected by PDB {namespace}/{pdb_name} to be deleted but it wasn't");
            let pod_involved = Involved::of(pod);
            env.recorder.record(&env.ctx, &pod_involved, EventType::Warning, "NotDeleted", &text, source);
        } else {
            recheck = Some(recheck.map_or(expected_deletion, |r| r.min(expected_deletion)));
            kept.insert(name.to_string(), at.clone());
        }
    }
    (kept, recheck)
}

/// `podutil.IsPodReady`.
pub(crate) fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| conditions.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// `countHealthyPods`: Ready pods neither being deleted nor recently evicted.
fn count_healthy_pods(pods: &[Value], disrupted: &Map<String, Value>, now: Timestamp) -> i64 {
    pods.iter()
        .filter(|pod| pod["metadata"]["deletionTimestamp"].is_null())
        .filter(|pod| {
            let name = pod["metadata"]["name"].as_str().unwrap_or_default();
            disrupted
                .get(name)
                .and_then(Value::as_str)
                .and_then(|t| t.parse::<Timestamp>().ok())
                .is_none_or(|since| later(since, DELETION_TIMEOUT_SECONDS as f64) <= now)
        })
        .filter(|pod| is_ready(pod))
        .count() as i64
}

/// `updatePdbStatus`: the status in `PodDisruptionBudgetStatus` field order, with the
/// `DisruptionAllowed` condition.
fn status_of(
    pdb: &Value,
    healthy: i64,
    desired: i64,
    expected: i64,
    disrupted: Map<String, Value>,
    now: Timestamp,
) -> Value {
    let mut allowed = healthy - desired;
    if expected <= 0 || allowed <= 0 {
        allowed = 0;
    }
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
    let mut status = Map::new();
    if generation != 0 {
        status.insert("observedGeneration".into(), json!(generation));
    }
    if !disrupted.is_empty() {
        status.insert("disruptedPods".into(), Value::Object(disrupted));
    }
    status.insert("disruptionsAllowed".into(), json!(allowed));
    status.insert("currentHealthy".into(), json!(healthy));
    status.insert("desiredHealthy".into(), json!(desired));
    status.insert("expectedPods".into(), json!(expected));
    let (value, reason) =
        if allowed > 0 { ("True", "SufficientPods") } else { ("False", "InsufficientPods") };
    status.insert("conditions".into(), disruption_allowed(pdb, value, reason, "", generation, now));
    Value::Object(status)
}

/// `failSafe`: no disruption allowed, the `SyncFailed` condition with the error.
fn fail_safe(pdb: &Value, message: &str, now: Timestamp) -> Value {
    let mut status = pdb["status"].as_object().cloned().unwrap_or_default();
    let generation = pdb["metadata"]["generation"].as_i64().unwrap_or(0);
    status.insert("disruptionsAllowed".into(), json!(0));
    for key in ["currentHealthy", "desiredHealthy", "expectedPods"] {
        status.entry(key).or_insert(json!(0));
    }
    status.insert(
        "conditions".into(),
        disruption_allowed(pdb, "False", "SyncFailed", message, generation, now),
    );
    Value::Object(status)
}

/// The conditions with `DisruptionAllowed` set as `apimeta.SetStatusCondition` does: the
/// transition time changes only with the status.
fn disruption_allowed(
    pdb: &Value,
    value: &str,
    reason: &str,
    message: &str,
    generation: i64,
    now: Timestamp,
) -> Value {
    let mut conditions: Vec<Value> = pdb["status"]["conditions"].as_array().cloned().unwrap_or_default();
    let previous = conditions.iter().position(|c| c["type"] == "DisruptionAllowed");
    let transition = match previous.map(|i| &conditions[i]) {
        Some(old) if old["status"] == json!(value) => old["lastTransitionTime"].clone(),
        _ => json!(timestamp(now)),
    };
    let mut condition = Map::new();
    condition.insert("type".into(), json!("DisruptionAllowed"));
    condition.insert("status".into(), json!(value));
    if generation != 0 {
        condition.insert("observedGeneration".into(), json!(generation));
    }
    condition.insert("lastTransitionTime".into(), transition);
    condition.insert("reason".into(), json!(reason));
    condition.insert("message".into(), json!(message));
    match previous {
        Some(i) => conditions[i] = Value::Object(condition),
        None => conditions.push(Value::Object(condition)),
    }
    Value::Array(conditions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentages_round_up_as_get_scaled_value_from_int_or_percent_does() {
        assert_eq!(scaled(&json!("50%"), 3, true), Some(2));
        assert_eq!(scaled(&json!("25%"), 4, true), Some(1));
        assert_eq!(scaled(&json!(2), 10, true), Some(2));
        assert_eq!(scaled(&json!("x"), 3, true), None);
    }

    #[test]
    fn disruptions_allowed_are_healthy_minus_desired_and_never_negative() {
        let pdb = json!({"metadata": {"generation": 2}, "status": {}});
        let now = Timestamp::from_second(1_800_000_000).unwrap();
        let status = status_of(&pdb, 3, 2, 3, Map::new(), now);
        assert_eq!(status["disruptionsAllowed"], json!(1));
        assert_eq!(status["observedGeneration"], json!(2));
        assert_eq!(status["conditions"][0]["reason"], json!("SufficientPods"));
        let status = status_of(&pdb, 1, 2, 3, Map::new(), now);
        assert_eq!(status["disruptionsAllowed"], json!(0));
        assert_eq!(status["conditions"][0]["status"], json!("False"));
        // No expected pods: nothing may be disrupted even with a zero requirement.
        assert_eq!(status_of(&pdb, 0, 0, 0, Map::new(), now)["disruptionsAllowed"], json!(0));
    }
}
