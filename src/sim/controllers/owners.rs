//! Claiming dependents by selector and controller reference (`ControllerRefManager`), shared by
//! the DaemonSet, ReplicaSet and Deployment controllers.
//!
//! Upstream `pkg/controller/controller_ref_manager.go`: an object controlled by the owner and
//! still selected is kept; one controlled but no longer selected is released (its reference
//! removed); an orphan that matches is adopted (a controller reference added) unless it is being
//! deleted.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::{Value, json};

use super::{Env, Error, Result, controller_of};
use crate::k8s::selector::api_selector_matches;
use crate::sim::{
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
/// (adopting matching orphans, releasing controlled ones that no longer match).
pub(crate) fn claim(
    env: &mut Env<'_>,
    rt: &ResourceType,
    owner: &Owner<'_>,
    selector: &LabelSelector,
) -> Result<Vec<Value>> {
    let store = env.ctx.store;
    // What the loop below can keep, adopt or release: the objects this owner controls and the
    // ones its selector matches (an object another owner controls is left alone either way).
    let relevant = |stored: &Stored| {
        stored.controller.as_ref().is_some_and(|c| &*c.uid == owner.uid)
            || api_selector_matches(selector, &stored.labels)
    };
    let mut claimed = Vec::new();
    let group_resource = rt.group_resource();
    for stored in store.list(&group_resource, Some(owner.namespace), &relevant, None, None).items {
        let mut value: Value = stored.value().map_err(Error::Store)?;
        let matches = api_selector_matches(selector, &stored.labels);
        match controller_of(&value) {
            Some(controller) if controller.uid == owner.uid => {
                if matches {
                    claimed.push(value);
                } else if let Some(refs) = value["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"] != json!(owner.uid));
                    store.update(rt, value, Subresource::Main, DryRun::Off).map_err(Error::Store)?;
                }
            }
            None if matches && value["metadata"]["deletionTimestamp"].is_null() => {
                let reference = owner.reference();
                match value["metadata"]["ownerReferences"].as_array_mut() {
                    Some(refs) => refs.push(reference),
                    None => value["metadata"]["ownerReferences"] = json!([reference]),
                }
                claimed.push(store.update(rt, value, Subresource::Main, DryRun::Off).map_err(Error::Store)?);
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
