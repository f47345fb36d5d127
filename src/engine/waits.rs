//! The waits that work on any kind: a condition of `status.conditions`, an Event recorded about the target (or an object it owns), a CEL expression over the target.
//!
//! `start` polls them (`engine::start::run_wait`) after applying a stage, so a Deployment, a Job
//! or a custom resource can be confirmed "stalled as intended" as a DaemonSet is: a Deployment
//! held back by a quota shows `ReplicaFailure` (reason `FailedCreate`) and its ReplicaSet records
//! `FailedCreate` Events (`pkg/controller/replicaset/replica_set.go` `manageReplicas`,
//! `pkg/controller/deployment/progress.go` `syncRolloutStatus`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Event;
use kube::api::Api;
use serde_json::Value;

use super::{
    Error, Result, apply,
    cluster::{Cluster, list_all, with_retries},
};
use crate::{
    i18n::Message,
    k8s::cel,
    lab::model::{ConditionWanted, EventType, EventWanted, ObjectRef},
    msg,
};

/// How deep an Event's object may sit below the target in ownership (a Deployment's ReplicaSet's
/// Pod is two levels down).
const OWNER_DEPTH: usize = 4;

/// `Ok` when `object` holds the wanted condition at its current generation; otherwise what it
/// shows instead.
pub fn condition_holds(object: &Value, wanted: &ConditionWanted) -> std::result::Result<(), Message> {
    let number = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64);
    if let (Some(observed), Some(generation)) =
        (number("/status/observedGeneration"), number("/metadata/generation"))
        && observed < generation
    {
        return Err(msg!("start-seen-stale", observed = observed, generation = generation));
    }
    let conditions: &[Value] =
        object.pointer("/status/conditions").and_then(Value::as_array).map_or(&[], Vec::as_slice);
    let text = |c: &Value, key: &str| c.get(key).and_then(Value::as_str).unwrap_or_default().to_string();
    let holds = conditions.iter().any(|c| {
        text(c, "type") == wanted.type_
            && text(c, "status") == wanted.status.as_str()
            && wanted.reason.as_ref().is_none_or(|reason| text(c, "reason") == *reason)
    });
    if holds {
        return Ok(());
    }
    if conditions.is_empty() {
        return Err(msg!("start-seen-no-conditions"));
    }
    let seen: Vec<String> = conditions
        .iter()
        .map(|c| match text(c, "reason") {
            reason if reason.is_empty() => format!("{}={}", text(c, "type"), text(c, "status")),
            reason => format!("{}={} ({reason})", text(c, "type"), text(c, "status")),
        })
        .collect();
    Err(msg!("start-seen-conditions", conditions = crate::i18n::list(seen)))
}

/// `Ok` when the CEL `expression` is true of `object` (bound as `object`); otherwise what it
/// gave instead, or why it could not be evaluated (a field the object does not have yet is the
/// usual reason while a controller catches up).
pub fn expression_holds(object: &Value, expression: &str) -> std::result::Result<(), Message> {
    let failed = |error: String| msg!("start-seen-cel-error", expression = expression, error = error);
    let compiled = cel::Expression::compile(expression, &["object"]).map_err(|e| failed(e.to_string()))?;
    match compiled.evaluate(&cel::Bindings::new().json("object", object)) {
        Ok(Value::Bool(true)) => Ok(()),
        Ok(other) => Err(msg!("start-seen-cel", expression = expression, result = other.to_string())),
        Err(error) => Err(failed(error.to_string())),
    }
}

/// The condition as a wait names it: `ReplicaFailure=True (FailedCreate)`.
pub fn describe_condition(wanted: &ConditionWanted) -> String {
    match &wanted.reason {
        Some(reason) => format!("{}={} ({reason})", wanted.type_, wanted.status.as_str()),
        None => format!("{}={}", wanted.type_, wanted.status.as_str()),
    }
}

/// `Ok` when an Event with the wanted reason (and type) was recorded about `target` (whose uid
/// is `uid`) or about an object it owns; otherwise what was seen.
pub async fn event_recorded(
    cluster: &Cluster,
    target: &ObjectRef,
    uid: &str,
    wanted: &EventWanted,
) -> Result<std::result::Result<(), Message>> {
    // Events live in their object's namespace; a cluster-scoped object's in `default`.
    let namespace = target.namespace.as_deref().unwrap_or("default");
    let api: Api<Event> = Api::namespaced(cluster.client.clone(), namespace);
    let events = list_all(&api)
        .await
        .map_err(|e| Error::api(msg!("action-list-in", plural = "events", namespace = namespace), &e))?
        .items;
    let type_wanted = wanted.type_.map(|t| match t {
        EventType::Normal => "Normal",
        EventType::Warning => "Warning",
    });
    let mut owners = Owners::default();
    for event in events.iter().filter(|e| e.reason.as_deref() == Some(wanted.reason.as_str())) {
        if type_wanted.is_some_and(|t| event.type_.as_deref() != Some(t)) {
            continue;
        }
        if owners.leads_to(cluster, &event.involved_object, uid).await? {
            return Ok(Ok(()));
        }
    }
    let mut reasons: Vec<&str> = events
        .iter()
        .filter(|e| e.involved_object.uid.as_deref() == Some(uid))
        .filter_map(|e| e.reason.as_deref())
        .collect();
    reasons.sort_unstable();
    reasons.dedup();
    Ok(Err(if reasons.is_empty() {
        msg!("start-seen-no-events", reason = &wanted.reason)
    } else {
        msg!("start-seen-events", reason = &wanted.reason, reasons = crate::i18n::list(reasons))
    }))
}

/// The owner references of the objects Events are about, read once each.
#[derive(Default)]
struct Owners {
    read: BTreeMap<String, Vec<OwnerLink>>,
}

/// One owner reference: enough to read the owner in turn.
#[derive(Clone)]
struct OwnerLink {
    api_version: String,
    kind: String,
    name: String,
    uid: String,
}

impl Owners {
    /// True when `object` is the object of uid `target`, or is owned by it through at most
    /// [`OWNER_DEPTH`] ownerReferences.
    async fn leads_to(
        &mut self,
        cluster: &Cluster,
        object: &k8s_openapi::api::core::v1::ObjectReference,
        target: &str,
    ) -> Result<bool> {
        let Some(uid) = object.uid.clone() else { return Ok(false) };
        let namespace = object.namespace.clone();
        let mut level = vec![OwnerLink {
            api_version: object.api_version.clone().unwrap_or_default(),
            kind: object.kind.clone().unwrap_or_default(),
            name: object.name.clone().unwrap_or_default(),
            uid,
        }];
        for _ in 0..=OWNER_DEPTH {
            if level.iter().any(|link| link.uid == target) {
                return Ok(true);
            }
            let mut next = Vec::new();
            for link in &level {
                next.extend(self.owners_of(cluster, link, namespace.as_deref()).await?);
            }
            if next.is_empty() {
                return Ok(false);
            }
            level = next;
        }
        Ok(false)
    }

    async fn owners_of(
        &mut self,
        cluster: &Cluster,
        link: &OwnerLink,
        namespace: Option<&str>,
    ) -> Result<Vec<OwnerLink>> {
        if let Some(known) = self.read.get(&link.uid) {
            return Ok(known.clone());
        }
        if link.api_version.is_empty() || link.kind.is_empty() {
            return Ok(Vec::new());
        }
        let Ok((api, _)) = apply::api_for(&cluster.client, &link.api_version, &link.kind, namespace).await
        else {
            // A kind the server does not serve any more owns nothing we can follow.
            return Ok(Vec::new());
        };
        let found = with_retries(|| api.get_opt(&link.name)).await.map_err(|e| {
            Error::api(msg!("action-read", object = format!("{} {}", link.kind, link.name)), &e)
        })?;
        let owners: Vec<OwnerLink> = found
            .filter(|o| o.metadata.uid.as_deref() == Some(link.uid.as_str()))
            .and_then(|o| o.metadata.owner_references)
            .unwrap_or_default()
            .into_iter()
            .map(|o| OwnerLink { api_version: o.api_version, kind: o.kind, name: o.name, uid: o.uid })
            .collect();
        self.read.insert(link.uid.clone(), owners.clone());
        Ok(owners)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::{lab::model::ConditionStatus, session::Lang};

    fn wanted(type_: &str, status: ConditionStatus, reason: Option<&str>) -> ConditionWanted {
        ConditionWanted { type_: type_.into(), status, reason: reason.map(str::to_string) }
    }

    #[test]
    fn a_condition_holds_with_its_status_and_reason_at_the_current_generation() {
        let deployment = json!({
            "metadata": {"generation": 2},
            "status": {"observedGeneration": 2, "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                {"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate"},
            ]}
        });
        assert!(condition_holds(&deployment, &wanted("ReplicaFailure", ConditionStatus::True, None)).is_ok());
        assert!(
            condition_holds(
                &deployment,
                &wanted("ReplicaFailure", ConditionStatus::True, Some("FailedCreate"))
            )
            .is_ok()
        );
        let seen = condition_holds(&deployment, &wanted("ReplicaFailure", ConditionStatus::False, None))
            .unwrap_err()
            .render(Lang::En);
        assert_eq!(
            seen,
            "conditions: Available=True (MinimumReplicasAvailable), ReplicaFailure=True (FailedCreate)"
        );
        assert!(condition_holds(&deployment, &wanted("Progressing", ConditionStatus::True, None)).is_err());

        let mut stale = deployment.clone();
        stale["metadata"]["generation"] = json!(3);
        let seen = condition_holds(&stale, &wanted("ReplicaFailure", ConditionStatus::True, None))
            .unwrap_err()
            .render(Lang::En);
        assert_eq!(seen, "status observed at generation 2, the object is at generation 3");
        let seen = condition_holds(&json!({}), &wanted("Complete", ConditionStatus::True, None))
            .unwrap_err()
            .render(Lang::En);
        assert_eq!(seen, "no conditions yet");
    }
}
