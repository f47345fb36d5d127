//! Claiming dependents by selector and controller reference (`ControllerRefManager`), shared by
//! the DaemonSet, ReplicaSet and Deployment controllers.
//!
//! Upstream `pkg/controller/controller_ref_manager.go`: an object controlled by the owner and
//! still selected is kept; one controlled but no longer selected is released (its reference
//! removed); an orphan that matches is adopted (a controller reference added) unless it is being
//! deleted.

use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::{Env, Error, Result};
use crate::k8s::selector::api_selector_matches;
use crate::{
    resources::ResourceType,
    store::{DryRun, Stored, Subresource},
};

/// Whether a selector selects nothing in particular (`{}`).
pub(crate) fn selector_is_empty(selector: &LabelSelector) -> bool {
    selector.match_labels.as_ref().is_none_or(|m| m.is_empty())
        && selector.match_expressions.as_ref().is_none_or(|e| e.is_empty())
}

/// The owner claiming dependents.
pub(crate) struct Owner<'a> {
    /// `apps/v1`.
    pub(crate) api_version: &'a str,
    /// `DaemonSet`, `ReplicaSet`, `Deployment`.
    pub(crate) kind: &'a str,
    /// Namespace.
    pub(crate) namespace: &'a str,
    /// Name.
    pub(crate) name: &'a str,
    /// UID.
    pub(crate) uid: &'a str,
}

impl Owner<'_> {
    /// The controller reference dependents carry.
    pub(crate) fn reference(&self) -> Value {
        json!({
            "apiVersion": self.api_version,
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": true,
            "blockOwnerDeletion": true,
        })
    }
}

/// Claims the objects of `rt` in the owner's namespace: returns those it controls and selects
/// (adopting matching orphans, releasing controlled ones that no longer match), as JSON.
pub(crate) fn claim(
    env: &mut Env<'_>,
    rt: &ResourceType,
    owner: &Owner<'_>,
    selector: &LabelSelector,
) -> Result<Vec<Value>> {
    claim_stored(env, rt, owner, selector)?
        .iter()
        .map(|stored| stored.value().map_err(Error::Store))
        .collect()
}

/// [`claim`] returning the stored objects: one the owner already controls and still selects is
/// decided from what the store keeps beside the JSON (its labels and controller reference), so
/// it is not parsed here; only an object adopted or released is (issue #17: a DaemonSet on
/// 1,000 nodes claims 1,000 pods at every sync).
pub(crate) fn claim_stored(
    env: &mut Env<'_>,
    rt: &ResourceType,
    owner: &Owner<'_>,
    selector: &LabelSelector,
) -> Result<Vec<Arc<Stored>>> {
    let store = env.ctx.store;
    // What the loop below can keep, adopt or release: the objects this owner controls and the
    // ones its selector matches (an object another owner controls is left alone either way).
    let relevant = |stored: &Stored| {
        stored.controller.as_ref().is_some_and(|c| &*c.uid == owner.uid)
            || api_selector_matches(selector, &stored.labels)
    };
    let mut claimed = Vec::new();
    let group_resource = rt.group_resource();
    let candidates = match store.claimable(&group_resource, owner.namespace, owner.uid) {
        Some(candidates) => candidates.into_iter().filter(|stored| relevant(stored)).collect(),
        None => store.list(&group_resource, Some(owner.namespace), &relevant, None, None).items,
    };
    for stored in candidates {
        let matches = api_selector_matches(selector, &stored.labels);
        match stored.controller.as_ref() {
            Some(controller) if &*controller.uid == owner.uid => {
                if matches {
                    claimed.push(stored);
                    continue;
                }
                let mut value: Value = stored.value().map_err(Error::Store)?;
                if let Some(refs) = value["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"] != json!(owner.uid));
                    store.update(rt, value, Subresource::Main, DryRun::Off).map_err(Error::Store)?;
                }
            }
            None if matches => {
                let mut value: Value = stored.value().map_err(Error::Store)?;
                if !value["metadata"]["deletionTimestamp"].is_null() {
                    continue;
                }
                let reference = owner.reference();
                match value["metadata"]["ownerReferences"].as_array_mut() {
                    Some(refs) => refs.push(reference),
                    None => value["metadata"]["ownerReferences"] = json!([reference]),
                }
                store.update(rt, value, Subresource::Main, DryRun::Off).map_err(Error::Store)?;
                if let Some(adopted) = store.get(&group_resource, &stored.namespace, &stored.name) {
                    claimed.push(adopted);
                }
            }
            _ => {}
        }
    }
    Ok(claimed)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelectorRequirement;

    #[test]
    fn selectors_match_labels_and_expressions() {
        let labels: BTreeMap<String, String> = [("app".to_string(), "gpu".to_string())].into();
        let selector = LabelSelector {
            match_labels: Some([("app".to_string(), "gpu".to_string())].into()),
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "tier".into(),
                operator: "DoesNotExist".into(),
                values: None,
            }]),
        };
        assert!(api_selector_matches(&selector, &labels));
        let other: BTreeMap<String, String> = [("app".to_string(), "web".to_string())].into();
        assert!(!api_selector_matches(&selector, &other));
        assert!(selector_is_empty(&LabelSelector::default()));
    }
}
