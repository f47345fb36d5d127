//! The garbage collector: dependents follow their owners by `ownerReferences`.
//!
//! Upstream `pkg/controller/garbagecollector/garbagecollector.go`: when an owner is gone
//! (background deletion), each dependent whose owners are all gone is deleted, and a dependent
//! with other live owners only loses the reference; an owner being deleted with the
//! `foregroundDeletion` finalizer waits until its dependents are gone, then the finalizer is
//! removed (and the store removes the object); with the `orphan` finalizer the dependents'
//! references to it are removed first.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{Env, Error, Key, Result};
use crate::{
    resources::ResourceType,
    store::{self, DeleteOptions, DryRun, Propagation, Stored, Subresource},
};

/// Types whose objects can be dependents (owners are found by uid in them).
const DEPENDENT_TYPES: &[&str] = &["pods", "controllerrevisions.apps", "replicasets.apps", "jobs.batch"];

/// The collector's memory: owners in foreground deletion still waiting for dependents.
#[derive(Debug, Default)]
pub(crate) struct Collector {
    waiting: BTreeSet<(String, Key)>,
}

fn owner_uids(object: &Value) -> Vec<String> {
    object["metadata"]["ownerReferences"]
        .as_array()
        .map(|refs| refs.iter().filter_map(|r| r["uid"].as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

fn finalizers(object: &Value) -> Vec<String> {
    object["metadata"]["finalizers"]
        .as_array()
        .map(|f| f.iter().filter_map(|v| v.as_str().map(str::to_string)).collect())
        .unwrap_or_default()
}

impl Collector {
    /// Handles deleted owners, owners being deleted with a propagation finalizer, and (when
    /// dependents changed) the foreground owners still waiting.
    pub(crate) fn run(
        &mut self,
        env: &mut Env<'_>,
        all_types: &[ResourceType],
        deleted_owners: &BTreeSet<String>,
        finalizing: &BTreeSet<(String, Key)>,
        dependents_changed: bool,
    ) -> Result<()> {
        for uid in deleted_owners {
            for (rt, dependent) in dependents(env, all_types, uid)? {
                self.release_or_delete(env, all_types, &rt, dependent, uid)?;
            }
        }
        self.waiting.extend(finalizing.iter().cloned());
        if finalizing.is_empty() && !dependents_changed {
            return Ok(());
        }
        let waiting: Vec<(String, Key)> = self.waiting.iter().cloned().collect();
        for (group_resource, key) in waiting {
            if !self.finish(env, all_types, &group_resource, &key)? {
                self.waiting.remove(&(group_resource, key));
            }
        }
        Ok(())
    }

    /// A dependent whose owner `uid` is gone: deleted when no other owner exists, else the
    /// reference is removed.
    fn release_or_delete(
        &self,
        env: &mut Env<'_>,
        all_types: &[ResourceType],
        rt: &ResourceType,
        mut dependent: Value,
        uid: &str,
    ) -> Result<()> {
        let store = env.ctx.store;
        let others: Vec<String> = owner_uids(&dependent).into_iter().filter(|u| u != uid).collect();
        let namespace = dependent["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
        let name = dependent["metadata"]["name"].as_str().unwrap_or_default().to_string();
        let any_alive = others.iter().any(|other| owner_exists(env, all_types, &namespace, other));
        if any_alive {
            if let Some(refs) = dependent["metadata"]["ownerReferences"].as_array_mut() {
                refs.retain(|r| r["uid"] != json!(uid));
            }
            ignore_gone(store.update(rt, dependent, Subresource::Main, DryRun::Off).map(|_| ()))
        } else if dependent["metadata"]["deletionTimestamp"].is_null() {
            let options = DeleteOptions { propagation: Some(Propagation::Background), ..Default::default() };
            ignore_gone(store.delete(rt, &namespace, &name, &options).map(|_| ()))
        } else {
            Ok(())
        }
    }

    /// Advances one owner in foreground or orphan deletion; returns whether it still waits.
    fn finish(
        &self,
        env: &mut Env<'_>,
        all_types: &[ResourceType],
        group_resource: &str,
        key: &Key,
    ) -> Result<bool> {
        let store = env.ctx.store;
        let Some(rt) = all_types.iter().find(|rt| rt.group_resource() == group_resource) else {
            return Ok(false);
        };
        let Some(stored) = store.get(group_resource, &key.0, &key.1) else { return Ok(false) };
        let owner: Value = stored.value().map_err(Error::Store)?;
        if owner["metadata"]["deletionTimestamp"].is_null() {
            return Ok(false);
        }
        let finalizers = finalizers(&owner);
        let uid = owner["metadata"]["uid"].as_str().unwrap_or_default().to_string();
        let (finalizer, orphan) = if finalizers.iter().any(|f| f == "orphan") {
            ("orphan", true)
        } else if finalizers.iter().any(|f| f == "foregroundDeletion") {
            ("foregroundDeletion", false)
        } else {
            return Ok(false);
        };
        let dependents = dependents(env, all_types, &uid)?;
        if orphan {
            for (dep_rt, mut dependent) in dependents {
                if let Some(refs) = dependent["metadata"]["ownerReferences"].as_array_mut() {
                    refs.retain(|r| r["uid"] != json!(uid));
                }
                ignore_gone(store.update(&dep_rt, dependent, Subresource::Main, DryRun::Off).map(|_| ()))?;
            }
        } else if !dependents.is_empty() {
            for (dep_rt, dependent) in dependents {
                if dependent["metadata"]["deletionTimestamp"].is_null() {
                    let namespace =
                        dependent["metadata"]["namespace"].as_str().unwrap_or_default().to_string();
                    let name = dependent["metadata"]["name"].as_str().unwrap_or_default().to_string();
                    let options =
                        DeleteOptions { propagation: Some(Propagation::Background), ..Default::default() };
                    ignore_gone(store.delete(&dep_rt, &namespace, &name, &options).map(|_| ()))?;
                }
            }
            return Ok(true);
        }
        let mut owner = owner;
        let kept: Vec<String> = finalizers.into_iter().filter(|f| f != finalizer).collect();
        owner["metadata"]["finalizers"] = json!(kept);
        ignore_gone(store.update(rt, owner, Subresource::Main, DryRun::Off).map(|_| ()))?;
        Ok(false)
    }
}

fn ignore_gone(result: store::Result<()>) -> Result<()> {
    match result {
        Ok(()) | Err(store::Error::NotFound { .. } | store::Error::Conflict { .. }) => Ok(()),
        Err(error) => Err(Error::Store(error)),
    }
}

/// Objects whose ownerReferences name `uid`.
fn dependents(env: &Env<'_>, all_types: &[ResourceType], uid: &str) -> Result<Vec<(ResourceType, Value)>> {
    let mut found = Vec::new();
    let mentions = |stored: &Stored| stored.json.contains(uid);
    for group_resource in DEPENDENT_TYPES {
        let Some(rt) = all_types.iter().find(|rt| rt.group_resource() == *group_resource) else { continue };
        for stored in env.ctx.store.list(group_resource, None, &mentions, None, None).items {
            let value = stored.value().map_err(Error::Store)?;
            if owner_uids(&value).iter().any(|owner| owner == uid) {
                found.push((rt.clone(), value));
            }
        }
    }
    Ok(found)
}

/// Whether an owner with `uid` still exists (owners are in the dependent's namespace or
/// cluster-scoped).
fn owner_exists(env: &Env<'_>, all_types: &[ResourceType], namespace: &str, uid: &str) -> bool {
    let needle = format!("\"uid\":\"{uid}\"");
    // Owner references carry the same text: only the object's own `metadata.uid` counts.
    let has_uid = |stored: &Stored| {
        stored.json.contains(&needle)
            && stored.value().is_ok_and(|value| value["metadata"]["uid"].as_str() == Some(uid))
    };
    all_types.iter().map(|rt| rt.group_resource()).collect::<BTreeSet<_>>().iter().any(|group_resource| {
        let page = env.ctx.store.list(group_resource, None, &has_uid, None, Some(1));
        page.items.iter().any(|stored| stored.namespace == namespace || stored.namespace.is_empty())
    })
}
