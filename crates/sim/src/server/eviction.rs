//! The `eviction` subresource of pods: a delete that respects the pod's PodDisruptionBudget, as `kubectl drain` sends it.
//!
//! Upstream (v1.33) `pkg/registry/core/pod/storage/eviction.go` (`EvictionREST.Create`): a pod
//! that is Pending, Succeeded, Failed or already being deleted is deleted without looking at
//! budgets (`canIgnorePDB`); otherwise the budgets whose selector matches the pod are found
//! (an empty selector matches nothing here); more than one is a 500; with one, an unready pod
//! goes when the budget is met (or `unhealthyPodEvictionPolicy: AlwaysAllow`), else
//! `checkAndDecrement` refuses with 429 TooManyRequests "Cannot evict pod as it would violate
//! the pod's disruption budget." or takes one disruption (recording the pod in
//! `status.disruptedPods`) before the pod is deleted with the eviction's delete options.

use axum::{
    body::Body,
    http::{HeaderMap, header},
    response::Response,
};
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{
    AppState,
    request::{self, Query},
    status::{ApiError, Result},
};
use crate::{
    k8s::selector::{LabelSelector, labels_of},
    store::{self, DryRun, Stored, Subresource},
};

/// `policyv1.DisruptionBudgetCause`.
const DISRUPTION_BUDGET_CAUSE: &str = "DisruptionBudget";

/// `MaxDisruptedPodSize`: evictions a budget records before the controller confirms them.
const MAX_DISRUPTED_POD_SIZE: usize = 2000;

/// What the PodDisruptionBudget lets happen to the pod.
#[derive(Debug, Clone, PartialEq)]
enum Verdict {
    /// Delete the pod as asked.
    Delete,
    /// Delete it only if it is still the version that was judged (an unready pod: it must not
    /// have become ready meanwhile).
    DeleteIfUnchanged {
        /// The pod's `resourceVersion` when judged.
        resource_version: String,
        /// The budget that let it go.
        budget: String,
    },
}

/// Serves `POST …/pods/{name}/eviction`.
pub async fn serve(
    state: &AppState,
    namespace: &str,
    name: &str,
    query: &Query,
    headers: &HeaderMap,
    body: Body,
) -> Result<Response> {
    let eviction = request::named_body(headers, body, "policy/v1", "Eviction", name).await?;
    let options_body = serde_json::to_vec(&eviction["deleteOptions"]).unwrap_or_default();
    let json_headers = {
        let mut json_headers = HeaderMap::new();
        json_headers.insert(header::CONTENT_TYPE, "application/json".parse().expect("a valid header value"));
        json_headers
    };
    let body_options = if eviction["deleteOptions"].is_object() { options_body.as_slice() } else { b"" };
    let mut options = request::delete_options(query, &json_headers, body_options)?;
    let pods = state.served_v1("", "pods")?;
    let pod = state.store.get_value(&pods, namespace, name)?;
    let verdict =
        if can_ignore_budget(&pod) { Verdict::Delete } else { judge(state, &pod, options.dry_run)? };
    let mut guarded_by = None;
    if let Verdict::DeleteIfUnchanged { resource_version, budget } = verdict
        && options.precondition_resource_version.is_none()
    {
        options.precondition_resource_version = Some(resource_version);
        guarded_by = Some(budget);
    }
    add_disruption_target(state, &pods, namespace, name, &mut options)?;
    match state.store.delete(&pods, namespace, name, &options) {
        Ok(_) => {}
        // The unready pod changed (became ready?) since it was judged: the client retries.
        Err(store::Error::Conflict { .. }) if guarded_by.is_some() => {
            let budget = guarded_by.unwrap_or_default();
            return Err(too_many_requests(
                10,
                format!("The disruption budget {budget} is still being processed by the server."),
            ));
        }
        Err(error) => return Err(error.into()),
    }
    Ok(super::status::created())
}

/// `addConditionAndDeletePod`: before the delete (not in a dry run) the latest pod gets the
/// `DisruptionTarget` condition (`EvictionByEvictionAPI`, `Eviction API: evicting`) through its
/// status, and a resourceVersion precondition moves to the revision that write made. A pod that
/// no longer meets the preconditions is left as it is: the delete reports the conflict.
fn add_disruption_target(
    state: &AppState,
    pods: &crate::resources::ResourceType,
    namespace: &str,
    name: &str,
    options: &mut store::DeleteOptions,
) -> Result<()> {
    if options.dry_run != DryRun::Off {
        return Ok(());
    }
    let mut latest = state.store.get_value(pods, namespace, name)?;
    let differs = |wanted: &Option<String>, actual: &Value| {
        wanted.as_deref().is_some_and(|w| actual.as_str() != Some(w))
    };
    if differs(&options.precondition_uid, &latest["metadata"]["uid"])
        || differs(&options.precondition_resource_version, &latest["metadata"]["resourceVersion"])
    {
        return Ok(());
    }
    let now = state.clock.now().strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let condition = json!({"type": "DisruptionTarget", "status": "True", "lastProbeTime": null,
        "lastTransitionTime": now, "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"});
    if !crate::k8s::schedule::set_pod_condition(&mut latest, condition) {
        return Ok(());
    }
    let written = state.store.update(pods, latest, Subresource::Status, DryRun::Off)?;
    if options.precondition_resource_version.is_some() {
        options.precondition_resource_version =
            written["metadata"]["resourceVersion"].as_str().map(str::to_string);
    }
    Ok(())
}

/// `canIgnorePDB`.
fn can_ignore_budget(pod: &Value) -> bool {
    matches!(pod["status"]["phase"].as_str(), Some("Succeeded" | "Failed" | "Pending"))
        || !pod["metadata"]["deletionTimestamp"].is_null()
}

/// `podutil.IsPodReady`.
fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| conditions.iter().any(|c| c["type"] == "Ready" && c["status"] == "True"))
}

/// The budget check of `EvictionREST.Create` for a running pod; takes one disruption from the
/// budget when the eviction goes ahead (not under dry run).
fn judge(state: &AppState, pod: &Value, dry_run: DryRun) -> Result<Verdict> {
    let namespace = pod["metadata"]["namespace"].as_str().unwrap_or_default();
    let labels = labels_of(pod);
    let matching = |stored: &Stored| {
        let Ok(value) = stored.value() else { return false };
        // An invalid selector matches nothing; "if a PDB with a nil or empty selector creeps
        // in, it should match nothing, not everything."
        match LabelSelector::parse(&crate::k8s::selector::selector_string(&value["spec"]["selector"])) {
            Ok(selector) => !selector.is_empty() && selector.matches(&labels),
            Err(_) => false,
        }
    };
    let budgets =
        state.store.list("poddisruptionbudgets.policy", Some(namespace), &matching, None, None).items;
    let budget = match budgets.as_slice() {
        [] => return Ok(Verdict::Delete),
        [one] => one.value()?,
        _ => {
            return Err(ApiError {
                code: 500,
                reason: "",
                message: "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.".into(),
                details: None,
            });
        }
    };
    let pdb_name = budget["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let status = &budget["status"];
    let current_healthy = status["currentHealthy"].as_i64().unwrap_or(0);
    let desired_healthy = status["desiredHealthy"].as_i64().unwrap_or(0);
    let resource_version = pod["metadata"]["resourceVersion"].as_str().unwrap_or_default().to_string();
    if !is_ready(pod) {
        let always = budget["spec"]["unhealthyPodEvictionPolicy"] == json!("AlwaysAllow");
        if always || current_healthy >= desired_healthy && desired_healthy > 0 {
            return Ok(Verdict::DeleteIfUnchanged { resource_version, budget: pdb_name });
        }
    }
    let pdbs = state.served_v1("policy", "poddisruptionbudgets")?;
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or_default().to_string();
    // metav1.Time: RFC 3339 at second precision.
    let now = state.clock.now();
    let now = Timestamp::from_second(now.as_second()).unwrap_or(now).to_string();
    state.store.modify(
        &pdbs,
        namespace,
        &pdb_name,
        Subresource::Status,
        dry_run,
        |current| -> Result<Value> {
            let mut budget =
                current.ok_or_else(|| ApiError::not_found("poddisruptionbudgets.policy", &pdb_name))?;
            check_and_decrement(&mut budget, &pod_name, &now)?;
            Ok(budget)
        },
    )?;
    Ok(Verdict::Delete)
}

/// `checkAndDecrement`: refuses while the controller has not seen the budget's generation or
/// when no disruption is allowed; otherwise one disruption fewer and the pod recorded.
fn check_and_decrement(budget: &mut Value, pod_name: &str, now: &str) -> Result<()> {
    let name = budget["metadata"]["name"].as_str().unwrap_or_default().to_string();
    let status = &budget["status"];
    let generation = budget["metadata"]["generation"].as_i64().unwrap_or(0);
    if status["observedGeneration"].as_i64().unwrap_or(0) < generation {
        return Err(too_many_requests(
            10,
            format!("The disruption budget {name} is still being processed by the server."),
        ));
    }
    let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
    let forbidden = |reason: &str| ApiError {
        code: 403,
        reason: "Forbidden",
        message: format!("poddisruptionbudget.policy \"{name}\" is forbidden: {reason}"),
        details: Some(json!({"name": name, "group": "policy", "kind": "poddisruptionbudget"})),
    };
    if allowed < 0 {
        return Err(forbidden("pdb disruptions allowed is negative"));
    }
    if status["disruptedPods"].as_object().is_some_and(|pods| pods.len() > MAX_DISRUPTED_POD_SIZE) {
        return Err(forbidden(
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
        let current = status["currentHealthy"].as_i64().unwrap_or(0);
        return Err(too_many_requests(
            0,
            format!("The disruption budget {name} needs {desired} healthy pods and has {current} currently"),
        ));
    }
    budget["status"]["disruptionsAllowed"] = json!(allowed - 1);
    if allowed - 1 == 0
        && let Some(conditions) = budget["status"]["conditions"].as_array_mut()
    {
        // `UpdateDisruptionAllowedCondition` once the last disruption is taken.
        for condition in conditions.iter_mut().filter(|c| c["type"] == "DisruptionAllowed") {
            if condition["status"] != "False" {
                condition["lastTransitionTime"] = json!(now);
            }
            condition["status"] = json!("False");
            condition["reason"] = json!("InsufficientPods");
        }
    }
    if !budget["status"]["disruptedPods"].is_object() {
        budget["status"]["disruptedPods"] = json!({});
    }
    budget["status"]["disruptedPods"][pod_name] = json!(now);
    Ok(())
}

/// `errors.NewTooManyRequests` with a `DisruptionBudget` cause.
fn too_many_requests(retry_after: i64, cause: String) -> ApiError {
    let mut details = json!({"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]});
    if retry_after > 0 {
        details["retryAfterSeconds"] = json!(retry_after);
    }
    ApiError {
        code: 429,
        reason: "TooManyRequests",
        message: "Cannot evict pod as it would violate the pod's disruption budget.".into(),
        details: Some(details),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn budget(allowed: i64) -> Value {
        json!({"metadata": {"name": "web", "generation": 1},
               "status": {"observedGeneration": 1, "disruptionsAllowed": allowed, "currentHealthy": 2,
                          "desiredHealthy": 2, "expectedPods": 2,
                          "conditions": [{"type": "DisruptionAllowed", "status": "True", "reason": "SufficientPods"}]}})
    }

    #[test]
    fn no_disruption_left_is_429_with_upstreams_text_and_cause() {
        let error = check_and_decrement(&mut budget(0), "web-1", "2026-01-01T00:00:00Z").unwrap_err();
        assert_eq!(error.code, 429);
        assert_eq!(error.message, "Cannot evict pod as it would violate the pod's disruption budget.");
        assert_eq!(
            error.details.unwrap()["causes"][0],
            json!({"reason": "DisruptionBudget", "message": "The disruption budget web needs 2 healthy pods and has 2 currently"})
        );
    }

    #[test]
    fn an_allowed_eviction_takes_one_disruption_and_records_the_pod() {
        let mut pdb = budget(1);
        check_and_decrement(&mut pdb, "web-1", "2026-01-01T00:00:00Z").unwrap();
        assert_eq!(pdb["status"]["disruptionsAllowed"], json!(0));
        assert_eq!(pdb["status"]["disruptedPods"], json!({"web-1": "2026-01-01T00:00:00Z"}));
        assert_eq!(pdb["status"]["conditions"][0]["reason"], json!("InsufficientPods"));
    }

    #[test]
    fn a_budget_the_controller_has_not_seen_yet_asks_to_retry() {
        let mut pdb = budget(1);
        pdb["metadata"]["generation"] = json!(2);
        let error = check_and_decrement(&mut pdb, "web-1", "now").unwrap_err();
        assert_eq!(error.code, 429);
        assert_eq!(error.details.unwrap()["retryAfterSeconds"], json!(10));
    }
}
