//! The store's index of dependents by controller: what a controller can claim without a scan.

use std::collections::{BTreeSet, HashMap};

use super::Stored;

/// Whether controllers claim objects of `group_resource` by selector (`ControllerRefManager`):
/// the kind's strategy says so (`Strategy::claimed_by_selector`: pods for DaemonSets and
/// StatefulSets, ReplicaSets for Deployments). Their orphans are indexed too; for any other
/// type only the controlled objects are.
pub fn claimed_by_selector(group_resource: &str) -> bool {
    crate::kinds::strategy(group_resource).claimed_by_selector()
}

/// (group-resource, namespace, name).
type Key = (String, String, String);

/// Objects by controller uid, and the orphans of the types [`claimed_by_selector`] (issue #17: a DaemonSet on
/// 1,000 nodes in a namespace of 11,000 pods matched its selector against all of them at every
/// sync; upstream's informers index pods by controller the same way).
#[derive(Debug, Default)]
pub(super) struct OwnerIndex {
    controlled: HashMap<Box<str>, BTreeSet<Key>>,
    orphans: BTreeSet<Key>,
}

fn key(stored: &Stored) -> Key {
    (stored.group_resource.clone(), stored.namespace.clone(), stored.name.clone())
}

impl OwnerIndex {
    /// Counts `stored` (an object now in the store).
    pub(super) fn insert(&mut self, stored: &Stored) {
        match &stored.controller {
            Some(controller) => {
                self.controlled.entry(controller.uid.clone()).or_default().insert(key(stored));
            }
            None if claimed_by_selector(&stored.group_resource) => {
                self.orphans.insert(key(stored));
            }
            None => {}
        }
    }

    /// Forgets `stored` (an object replaced or removed).
    pub(super) fn remove(&mut self, stored: &Stored) {
        match &stored.controller {
            Some(controller) => {
                if let Some(keys) = self.controlled.get_mut(&controller.uid) {
                    keys.remove(&key(stored));
                    if keys.is_empty() {
                        self.controlled.remove(&controller.uid);
                    }
                }
            }
            None => {
                self.orphans.remove(&key(stored));
            }
        }
    }

    /// The names of the objects of `group_resource` in `namespace` controlled by `uid` or (for
    /// [`claimed_by_selector`]) by nothing, sorted; `None` for a type whose orphans are not indexed.
    pub(super) fn claimable(&self, group_resource: &str, namespace: &str, uid: &str) -> Option<Vec<String>> {
        if !claimed_by_selector(group_resource) {
            return None;
        }
        let in_namespace = |(gr, ns, _): &&Key| gr == group_resource && ns == namespace;
        let start = (group_resource.to_string(), namespace.to_string(), String::new());
        let mut names: Vec<String> = self
            .orphans
            .range(start..)
            .take_while(|key| in_namespace(key))
            .map(|(_, _, name)| name.clone())
            .collect();
        if let Some(keys) = self.controlled.get(uid) {
            names.extend(keys.iter().filter(in_namespace).map(|(_, _, name)| name.clone()));
        }
        names.sort();
        names.dedup();
        Some(names)
    }
}
