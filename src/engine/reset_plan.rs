//! The reset planner: a pure function from a lab's inventory and the observed cluster to the ordered actions of `reset` and `reset --remove`, and their text in en and ja.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::inventory::{AppliedObject, Inventory, NodeState, Origin, PreImage};
use crate::{
    lab::model::{Lab, LearnerObjects},
    session::Lang,
    tr,
};

/// What the reset is for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Back to the state after these stages (the first one, or up to `--to-stage`).
    Stages(Vec<String>),
    /// The lab off the cluster: everything it or its learners created gone, every pre-image
    /// restored, the inventory deleted.
    Remove,
}

/// An object as `reset` sees it now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObservedObject {
    /// apiVersion.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, for namespaced kinds.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// uid.
    pub uid: String,
    /// The uids its ownerReferences name.
    pub owners: Vec<String>,
    /// The whole object (labels, annotations and fields a pre-image restores).
    pub object: Value,
}

impl ObservedObject {
    /// Reads the identifying parts of a served object.
    pub fn from_value(object: Value) -> ObservedObject {
        let text = |pointer: &str| object.pointer(pointer).and_then(Value::as_str).map(str::to_string);
        let owners = object
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| o.get("uid").and_then(Value::as_str).map(str::to_string))
            .collect();
        ObservedObject {
            api_version: text("/apiVersion").unwrap_or_default(),
            kind: text("/kind").unwrap_or_default(),
            namespace: text("/metadata/namespace"),
            name: text("/metadata/name").unwrap_or_default(),
            uid: text("/metadata/uid").unwrap_or_default(),
            owners,
            object,
        }
    }

    fn id(&self) -> ObjectId {
        ObjectId {
            api_version: self.api_version.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            uid: self.uid.clone(),
        }
    }
}

/// The cluster as the planner needs it.
#[derive(Debug, Clone, Default)]
pub struct Observed {
    /// The lab's recorded objects that exist now, every object in its working namespaces, and
    /// the custom resources of every CRD it created (in any namespace).
    pub objects: Vec<ObservedObject>,
    /// The other labs' inventories on this cluster.
    pub other_labs: Vec<Inventory>,
    /// Nodes by name: labels and advertised resources.
    pub nodes: BTreeMap<String, NodeState>,
    /// Whether the `lab-runner` namespace holds anything but this lab's inventory (another
    /// lab's, or objects lab-runner did not put there).
    pub inventory_namespace_shared: bool,
}

impl Observed {
    fn find(&self, record: &AppliedObject) -> Option<&ObservedObject> {
        self.objects.iter().find(|o| {
            o.api_version == record.api_version
                && o.kind == record.kind
                && o.namespace == record.namespace
                && o.name == record.name
        })
    }

    fn in_namespace<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a ObservedObject> + 'a {
        self.objects.iter().filter(move |o| o.namespace.as_deref() == Some(namespace))
    }
}

/// One object an action names, with the uid it had when planned (the executor acts only on
/// that uid, so an object that changed hands since is left alone).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectId {
    /// apiVersion.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// uid when planned.
    pub uid: String,
}

impl std::fmt::Display for ObjectId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(namespace) => write!(f, "{} {namespace}/{}", self.kind, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// Why an object is deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeleteReason {
    /// The lab created it.
    CreatedByLab,
    /// A learner created it after start in one of the lab's working namespaces.
    CreatedByLearner,
}

/// Why an object is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeepReason {
    /// It existed before start (a Namespace or CRD the lab uses as it is).
    ExistedBeforeStart,
    /// The lab created it, but it still holds objects that are not the lab's: the first few,
    /// and how many more.
    HoldsForeign(Vec<String>, usize),
    /// Another lab's inventory owns it.
    OwnedByLab(String),
    /// A learner created it and the lab keeps learner objects (`learnerObjects: keep`).
    LearnerObjectKept,
}

/// One step of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Delete one object.
    Delete {
        /// The object.
        object: ObjectId,
        /// Why.
        reason: DeleteReason,
    },
    /// Put back the labels, annotations and fields the lab changed on an adopted object.
    Restore {
        /// The object.
        object: ObjectId,
        /// What they were.
        pre_image: PreImage,
    },
    /// Leave an object as it is (listed so the plan accounts for every object).
    Keep {
        /// The object.
        object: ObjectId,
        /// Why.
        reason: KeepReason,
    },
    /// Record in another lab's inventory that it now owns an object this lab created and can
    /// not delete because that lab still uses it (so the last lab to leave deletes it).
    HandOver {
        /// The object.
        object: ObjectId,
        /// The lab taking it.
        lab: String,
    },
    /// Put a node back as the first start found it: labels and advertised resources (by field,
    /// `capacity` and `allocatable`), each key to its value then (`None`: it was absent).
    RestoreNode {
        /// Node.
        node: String,
        /// Label key → value then.
        labels: BTreeMap<String, Option<String>>,
        /// Status field → resource → value then.
        resources: BTreeMap<String, BTreeMap<String, Option<String>>>,
    },
    /// Put node labels back to their recorded values (`None`: remove).
    RestoreNodeLabels {
        /// Node.
        node: String,
        /// Label key → recorded value.
        labels: BTreeMap<String, Option<String>>,
    },
    /// Restore a ConfigMap's recorded data (`None`: it did not exist, delete it).
    RestoreConfigMap {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Recorded data.
        data: Option<BTreeMap<String, String>>,
    },
    /// Re-apply one stage.
    ApplyStage(String),
    /// Delete the lab's inventory (the lab is no longer started), and the `lab-runner`
    /// namespace with it when nothing else is in it.
    DeleteInventory {
        /// The lab.
        lab: String,
        /// Whether the `lab-runner` namespace goes too.
        with_namespace: bool,
    },
}

impl Action {
    /// The action as one line in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Action::Delete { object, reason: DeleteReason::CreatedByLab } => {
                tr!(lang, "reset-delete-created-by-lab", object = object.to_string())
            }
            Action::Delete { object, reason: DeleteReason::CreatedByLearner } => {
                tr!(lang, "reset-delete-created-by-learner", object = object.to_string())
            }
            Action::Restore { object, pre_image } => {
                let mut parts: Vec<String> = Vec::new();
                if !pre_image.labels.is_empty() {
                    parts.push(tr!(lang, "reset-part-labels"));
                }
                if !pre_image.annotations.is_empty() {
                    parts.push(tr!(lang, "reset-part-annotations"));
                }
                parts.extend(pre_image.fields.keys().cloned());
                tr!(lang, "reset-restore", object = object.to_string(), parts = list(lang, &parts))
            }
            Action::Keep { object, reason } => {
                let object = object.to_string();
                match reason {
                    KeepReason::ExistedBeforeStart => tr!(lang, "reset-keep-existed", object = object),
                    KeepReason::HoldsForeign(shown, more) => {
                        let mut held = shown.clone();
                        if *more > 0 {
                            held.push(tr!(lang, "reset-more", count = *more));
                        }
                        tr!(
                            lang,
                            "reset-keep-holds-foreign",
                            object = object,
                            held = crate::i18n::list(&held)
                        )
                    }
                    KeepReason::OwnedByLab(lab) => tr!(lang, "reset-keep-owned", object = object, lab = lab),
                    KeepReason::LearnerObjectKept => tr!(lang, "reset-keep-learner-object", object = object),
                }
            }
            Action::HandOver { object, lab } => {
                tr!(lang, "reset-hand-over", object = object.to_string(), lab = lab)
            }
            Action::RestoreNodeLabels { node, labels } => {
                let changes = changes_text(lang, labels);
                tr!(lang, "reset-restore-node-labels", node = node, changes = changes)
            }
            Action::RestoreNode { node, labels, resources } => {
                let mut parts = Vec::new();
                if !labels.is_empty() {
                    parts.push(tr!(lang, "reset-node-labels", changes = changes_text(lang, labels)));
                }
                let mut advertised = BTreeMap::new();
                for changed in resources.values() {
                    advertised.extend(changed.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
                if !advertised.is_empty() {
                    parts.push(tr!(lang, "reset-node-resources", changes = changes_text(lang, &advertised)));
                }
                tr!(lang, "reset-restore-node", node = node, parts = parts.join(&tr!(lang, "list-separator")))
            }
            Action::RestoreConfigMap { namespace, name, data: Some(_) } => {
                tr!(lang, "reset-restore-configmap", namespace = namespace, name = name)
            }
            Action::RestoreConfigMap { namespace, name, data: None } => {
                tr!(lang, "reset-delete-configmap-new", namespace = namespace, name = name)
            }
            Action::ApplyStage(stage) => tr!(lang, "reset-apply-stage", stage = stage),
            Action::DeleteInventory { lab, with_namespace } => {
                let name = super::inventory::name_for(lab);
                let namespace = super::inventory::NAMESPACE;
                if *with_namespace {
                    tr!(lang, "reset-delete-inventory-and-namespace", namespace = namespace, name = name)
                } else {
                    tr!(lang, "reset-delete-inventory", namespace = namespace, name = name)
                }
            }
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

/// `k=v, k2 removed`: label or resource changes as a reset makes them.
fn changes_text(lang: Lang, changes: &BTreeMap<String, Option<String>>) -> String {
    let changes: Vec<String> = changes
        .iter()
        .map(|(key, value)| match value {
            Some(value) => format!("{key}={value}"),
            None => tr!(lang, "reset-label-removed", key = key),
        })
        .collect();
    changes.join(&tr!(lang, "list-separator"))
}

/// `a, b and c` in English, `a・b・c` in Japanese.
fn list(lang: Lang, parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => {
            let separator = tr!(lang, "list-separator-and");
            tr!(lang, "list-and", init = init.join(&separator), last = last)
        }
    }
}

/// The namespaces whose learner objects `reset` deletes: those the lab declares and those it
/// created.
pub fn working_namespaces(lab: &Lab, inventory: &Inventory) -> BTreeSet<String> {
    let created = inventory
        .applied
        .iter()
        .filter(|o| o.kind == "Namespace" && o.origin == Origin::Created)
        .map(|o| o.name.clone());
    lab.reset.namespaces.iter().cloned().chain(created).collect()
}

/// How many foreign objects a kept Namespace or CRD names before "…".
const SHOWN_FOREIGN: usize = 3;

/// The ordered actions of `mode` for `lab` from its inventory (`None`: never started, or
/// crashed before the first record) and the observed cluster.
///
/// Learner objects first, then what the lab created (custom resources before their CRD, and
/// Namespaces and CRDs last, each only when nothing that is not the lab's remains in it), the
/// pre-images, then the stages to re-apply or the inventory to delete.
pub fn plan(lab: &Lab, inventory: Option<&Inventory>, observed: &Observed, mode: &Mode) -> Vec<Action> {
    let empty = Inventory::new(&lab.id.value);
    let inventory = inventory.unwrap_or(&empty);
    let other_owned: BTreeMap<&str, &str> = observed
        .other_labs
        .iter()
        .flat_map(|other| other.owned_uids().into_iter().map(move |uid| (uid, other.lab.as_str())))
        .collect();
    let restored_config_maps: BTreeSet<(&str, &str)> =
        lab.reset.restore.config_maps.iter().map(|c| (c.namespace.as_str(), c.name.as_str())).collect();
    let mut actions = Vec::new();
    let mut deleted: BTreeSet<String> = BTreeSet::new();

    learner_objects(lab, inventory, observed, &other_owned, &mut deleted, &mut actions);

    // What the lab applied, last applied first; Namespaces and CRDs after everything else.
    let containers = |o: &&AppliedObject| matches!(o.kind.as_str(), "Namespace" | "CustomResourceDefinition");
    let records: Vec<&AppliedObject> = inventory.applied.iter().rev().collect();
    let (containers_of_lab, objects): (Vec<&AppliedObject>, Vec<&AppliedObject>) =
        records.into_iter().partition(containers);
    for record in objects {
        let Some(now) = observed.find(record) else { continue };
        match &record.origin {
            Origin::Created if now.uid == record.uid || record.uid.is_empty() => {
                deleted.insert(now.uid.clone());
                actions.push(Action::Delete { object: now.id(), reason: DeleteReason::CreatedByLab });
            }
            Origin::Created => match other_owned.get(now.uid.as_str()) {
                Some(other) => actions.push(Action::Keep {
                    object: now.id(),
                    reason: KeepReason::OwnedByLab(other.to_string()),
                }),
                // Deleted and made again under the lab's name after start: the learner's.
                None => {
                    deleted.insert(now.uid.clone());
                    actions.push(Action::Delete { object: now.id(), reason: DeleteReason::CreatedByLearner });
                }
            },
            Origin::Adopted { .. }
                if record.kind == "ConfigMap"
                    && restored_config_maps.contains(&(
                        record.namespace.as_deref().unwrap_or_default(),
                        record.name.as_str(),
                    )) => {}
            Origin::Adopted { pre_image } => {
                actions.push(Action::Restore { object: now.id(), pre_image: pre_image.clone() })
            }
            Origin::Used => {
                actions.push(Action::Keep { object: now.id(), reason: KeepReason::ExistedBeforeStart })
            }
        }
    }

    // Nodes as the first start found them (older records: the label keys the reset policy names),
    // and the ConfigMaps the policy names.
    for (node, recorded) in &inventory.pre_images.nodes {
        let Some(current) = observed.nodes.get(node) else { continue };
        if let Some(action) = restore_node(node, recorded, current) {
            actions.push(action);
        }
    }
    let per_key = inventory.pre_images.node_labels.iter().filter(|_| inventory.pre_images.nodes.is_empty());
    for (node, recorded) in per_key {
        let Some(current) = observed.nodes.get(node).map(|n| &n.labels) else { continue };
        let changed: BTreeMap<String, Option<String>> = recorded
            .iter()
            .filter(|(key, value)| current.get(*key) != value.as_ref())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if !changed.is_empty() {
            actions.push(Action::RestoreNodeLabels { node: node.clone(), labels: changed });
        }
    }
    for config_map in &inventory.pre_images.config_maps {
        actions.push(Action::RestoreConfigMap {
            namespace: config_map.namespace.clone(),
            name: config_map.name.clone(),
            data: config_map.data.clone(),
        });
    }

    containers_to_delete(containers_of_lab, observed, &other_owned, mode, &mut deleted, &mut actions);

    match mode {
        Mode::Stages(stages) => actions.extend(stages.iter().cloned().map(Action::ApplyStage)),
        Mode::Remove => actions.push(Action::DeleteInventory {
            lab: lab.id.value.clone(),
            with_namespace: !observed.inventory_namespace_shared,
        }),
    }
    actions
}

/// Whether `namespace` existed before the lab first started: a Namespace the lab uses as it is
/// or, not one it applies, one that held objects then.
fn existed_before(inventory: &Inventory, namespace: &str) -> bool {
    match inventory.find("v1", "Namespace", None, namespace) {
        Some(record) => record.origin == Origin::Used,
        None => inventory.present_at_start.get(namespace).is_some_and(|uids| !uids.is_empty()),
    }
}

/// Whether `object` is one the lab's tasks ask a learner to create (their `creates`).
fn declared_by_a_task(lab: &Lab, object: &ObservedObject) -> bool {
    lab.tasks.iter().flat_map(|t| &t.creates).any(|target| {
        target.api_version == object.api_version
            && target.kind == object.kind
            && target.namespace.as_ref().is_none_or(|namespace| object.namespace.as_ref() == Some(namespace))
            && target.name.as_ref().is_none_or(|name| *name == object.name)
            && target
                .label_selector
                .as_ref()
                .is_none_or(|selector| crate::grade::observed::selector_matches(selector, &object.object))
    })
}

/// Learner objects: made after start in a working namespace, by uid against the snapshot; in a
/// namespace that existed before the lab (shared with a platform or an operator), only those
/// the lab's tasks ask a learner to create.
fn learner_objects(
    lab: &Lab,
    inventory: &Inventory,
    observed: &Observed,
    other_owned: &BTreeMap<&str, &str>,
    deleted: &mut BTreeSet<String>,
    actions: &mut Vec<Action>,
) {
    let own = inventory.owned_uids();
    for namespace in working_namespaces(lab, inventory) {
        let Some(present) = inventory.present_at_start.get(&namespace) else { continue };
        let shared = existed_before(inventory, &namespace);
        for object in observed.in_namespace(&namespace) {
            let recorded =
                inventory.find(&object.api_version, &object.kind, object.namespace.as_deref(), &object.name);
            if present.contains(&object.uid)
                || own.contains(object.uid.as_str())
                || other_owned.contains_key(object.uid.as_str())
                || recorded.is_some()
                || !object.owners.is_empty()
                || object.kind == "Event"
                || (shared && !declared_by_a_task(lab, object))
            {
                continue;
            }
            if lab.reset.learner_objects == LearnerObjects::Delete {
                deleted.insert(object.uid.clone());
                actions.push(Action::Delete { object: object.id(), reason: DeleteReason::CreatedByLearner });
            } else {
                actions.push(Action::Keep { object: object.id(), reason: KeepReason::LearnerObjectKept });
            }
        }
    }
}

/// What the garbage collector deletes after `actions` delete what they name, at any depth (a
/// Deployment's ReplicaSets and their pods): `reset` waits for these to be gone too.
pub fn dependents(observed: &Observed, actions: &[Action]) -> Vec<ObjectId> {
    let deleted: BTreeSet<String> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Delete { object, .. } => Some(object.uid.clone()),
            _ => None,
        })
        .collect();
    let going = going_with(observed, &deleted);
    observed
        .objects
        .iter()
        .filter(|o| going.contains(&o.uid) && !deleted.contains(&o.uid) && o.kind != "Event")
        .map(ObservedObject::id)
        .collect()
}

/// The uids of what goes with `deleted` through garbage collection, at any depth: an object
/// every owner of which is deleted or goes itself (a Deployment's ReplicaSet's pods).
fn going_with(observed: &Observed, deleted: &BTreeSet<String>) -> BTreeSet<String> {
    let mut going = deleted.clone();
    loop {
        let before = going.len();
        for object in &observed.objects {
            if !object.owners.is_empty() && object.owners.iter().all(|owner| going.contains(owner)) {
                going.insert(object.uid.clone());
            }
        }
        if going.len() == before {
            return going;
        }
    }
}

/// CRDs, then Namespaces: deleted only when the lab created them and nothing foreign remains.
fn containers_to_delete(
    mut containers_of_lab: Vec<&AppliedObject>,
    observed: &Observed,
    other_owned: &BTreeMap<&str, &str>,
    mode: &Mode,
    deleted: &mut BTreeSet<String>,
    actions: &mut Vec<Action>,
) {
    containers_of_lab.sort_by_key(|o| o.kind == "Namespace");
    for record in containers_of_lab {
        let Some(now) = observed.find(record) else { continue };
        if record.origin == Origin::Used || (!record.uid.is_empty() && now.uid != record.uid) {
            let reason = match other_owned.get(now.uid.as_str()) {
                Some(other) => KeepReason::OwnedByLab(other.to_string()),
                None => KeepReason::ExistedBeforeStart,
            };
            actions.push(Action::Keep { object: now.id(), reason });
            continue;
        }
        let going = going_with(observed, deleted);
        let held: Vec<&ObservedObject> = if record.kind == "Namespace" {
            observed
                .in_namespace(&record.name)
                .filter(|o| !going.contains(&o.uid) && o.kind != "Event")
                .collect()
        } else {
            let group_kind = crd_group_kind(&now.object);
            observed
                .objects
                .iter()
                .filter(|o| {
                    group_kind
                        .as_ref()
                        .is_some_and(|(group, kind)| &o.kind == kind && group_of(&o.api_version) == group)
                })
                .filter(|o| !deleted.contains(&o.uid))
                .collect()
        };
        if held.is_empty() {
            deleted.insert(now.uid.clone());
            actions.push(Action::Delete { object: now.id(), reason: DeleteReason::CreatedByLab });
            continue;
        }
        // Objects nobody owns first (a pod goes with its DaemonSet, and its name is random), then
        // by kind and name, so the plan reads the same on every run.
        let mut listed: Vec<_> = held.iter().map(|o| (!o.owners.is_empty(), o.id().to_string())).collect();
        listed.sort();
        let shown: Vec<String> = listed.into_iter().take(SHOWN_FOREIGN).map(|(_, id)| id).collect();
        let more = held.len().saturating_sub(SHOWN_FOREIGN);
        actions.push(Action::Keep { object: now.id(), reason: KeepReason::HoldsForeign(shown, more) });
        let heirs: BTreeSet<&str> =
            held.iter().filter_map(|o| other_owned.get(o.uid.as_str()).copied()).collect();
        // Leaving for good, this lab hands what another lab still uses to that lab.
        if let (Mode::Remove, Some(heir)) = (mode, heirs.into_iter().next()) {
            actions.push(Action::HandOver { object: now.id(), lab: heir.to_string() });
        }
    }
}

/// What differs between a node now and as it was recorded: the action that puts it back.
fn restore_node(node: &str, recorded: &NodeState, current: &NodeState) -> Option<Action> {
    fn differences(
        recorded: &BTreeMap<String, String>,
        current: &BTreeMap<String, String>,
    ) -> BTreeMap<String, Option<String>> {
        let mut changes: BTreeMap<String, Option<String>> = current
            .keys()
            .filter(|key| !recorded.contains_key(*key))
            .map(|key| (key.clone(), None))
            .collect();
        changes.extend(
            recorded
                .iter()
                .filter(|(key, value)| current.get(*key) != Some(*value))
                .map(|(key, value)| (key.clone(), Some(value.clone()))),
        );
        changes
    }
    let labels = differences(&recorded.labels, &current.labels);
    let resources: BTreeMap<String, BTreeMap<String, Option<String>>> = [
        ("capacity", differences(&recorded.capacity, &current.capacity)),
        ("allocatable", differences(&recorded.allocatable, &current.allocatable)),
    ]
    .into_iter()
    .filter(|(_, changes)| !changes.is_empty())
    .map(|(field, changes)| (field.to_string(), changes))
    .collect();
    (!labels.is_empty() || !resources.is_empty()).then(|| Action::RestoreNode {
        node: node.to_string(),
        labels,
        resources,
    })
}

/// The API group of an `apiVersion` (`""` for the core group).
fn group_of(api_version: &str) -> &str {
    api_version.split_once('/').map(|(group, _)| group).unwrap_or("")
}

/// A CRD's group and kind.
pub fn crd_group_kind(crd: &Value) -> Option<(String, String)> {
    let group = crd.pointer("/spec/group")?.as_str()?;
    let kind = crd.pointer("/spec/names/kind")?.as_str()?;
    Some((group.to_string(), kind.to_string()))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::engine::inventory::PreImage;

    fn lab(learner_objects: &str) -> Lab {
        serde_saphyr::from_str(&format!(
            "apiVersion: lab-runner.io/v1\nid: lab-a\ntitle: {{en: t}}\nbriefing: {{en: b}}\nstages: []\ntasks: []\n\
             reset: {{namespaces: [work], learnerObjects: {learner_objects}}}\n"
        ))
        .expect("a lab")
    }

    fn object(
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        uid: &str,
    ) -> ObservedObject {
        let mut value =
            json!({"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "uid": uid}});
        if let Some(namespace) = namespace {
            value["metadata"]["namespace"] = json!(namespace);
        }
        ObservedObject::from_value(value)
    }

    fn record(kind: &str, namespace: Option<&str>, name: &str, uid: &str, origin: Origin) -> AppliedObject {
        let api_version = match kind {
            "Namespace" | "ConfigMap" | "Pod" => "v1",
            "CustomResourceDefinition" => "apiextensions.k8s.io/v1",
            "PrometheusRule" => "monitoring.coreos.com/v1",
            _ => "apps/v1",
        };
        AppliedObject {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: namespace.map(str::to_string),
            name: name.into(),
            stage: "s1".into(),
            uid: uid.into(),
            origin,
        }
    }

    fn observed_of(records: &[&AppliedObject]) -> Vec<ObservedObject> {
        records
            .iter()
            .map(|r| object(&r.api_version, &r.kind, r.namespace.as_deref(), &r.name, &r.uid))
            .collect()
    }

    fn lines(actions: &[Action]) -> Vec<String> {
        actions.iter().map(ToString::to_string).collect()
    }

    fn remove() -> Mode {
        Mode::Remove
    }

    #[test]
    fn created_objects_go_last_applied_first_and_the_namespace_after_them() {
        let mut inventory = Inventory::new("lab-a");
        let ns = record("Namespace", None, "work", "n1", Origin::Created);
        let ds = record("DaemonSet", Some("work"), "toolkit", "d1", Origin::Created);
        let sa = record("ServiceAccount", Some("work"), "toolkit", "s1", Origin::Created);
        for r in [&ns, &sa, &ds] {
            inventory.applied.push(r.clone());
        }
        inventory.present_at_start.insert("work".into(), BTreeSet::new());
        let mut objects = observed_of(&[&ns, &ds, &sa]);
        // The DaemonSet's pod goes with it (garbage collection), not as a learner object.
        let mut pod = object("v1", "Pod", Some("work"), "toolkit-x", "p1");
        pod.owners = vec!["d1".into()];
        objects.push(pod);
        let observed = Observed { objects, ..Observed::default() };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec!["s1".into()]));
        assert_eq!(
            lines(&actions),
            [
                "delete DaemonSet work/toolkit (created by the lab)",
                "delete ServiceAccount work/toolkit (created by the lab)",
                "delete Namespace work (created by the lab)",
                "apply stage s1 again",
            ]
        );
    }

    #[test]
    fn pre_existing_objects_are_kept_or_restored_never_deleted() {
        let mut inventory = Inventory::new("lab-a");
        let ns = record("Namespace", None, "gpu-operator", "n0", Origin::Used);
        let crd = record(
            "CustomResourceDefinition",
            None,
            "prometheusrules.monitoring.coreos.com",
            "c0",
            Origin::Used,
        );
        let mut pre_image = PreImage::default();
        pre_image.labels.insert("lab-runner.io/lab".into(), None);
        pre_image.fields.insert("data".into(), Some(json!({"a": "1"})));
        let adopted = record(
            "ConfigMap",
            Some("gpu-operator"),
            "plugin",
            "m0",
            Origin::Adopted { pre_image: pre_image.clone() },
        );
        for r in [&ns, &crd, &adopted] {
            inventory.applied.push(r.clone());
        }
        inventory.present_at_start.insert("gpu-operator".into(), ["m0".to_string(), "o0".to_string()].into());
        let mut objects = observed_of(&[&ns, &crd, &adopted]);
        objects.push(object("apps/v1", "DaemonSet", Some("gpu-operator"), "operator", "o0"));
        let observed = Observed { objects, ..Observed::default() };
        let mut lab = lab("delete");
        lab.reset.namespaces = vec!["gpu-operator".into()];
        let actions = plan(&lab, Some(&inventory), &observed, &remove());
        assert_eq!(
            lines(&actions),
            [
                "restore labels and data of ConfigMap gpu-operator/plugin (existed before start)",
                "keep CustomResourceDefinition prometheusrules.monitoring.coreos.com (existed before start)",
                "keep Namespace gpu-operator (existed before start)",
                "delete ConfigMap lab-runner/lab-runner-inventory-lab-a (the inventory: the lab is no longer started) and Namespace lab-runner (nothing else is in it)",
            ]
        );
        assert!(matches!(&actions[0], Action::Restore { pre_image: p, .. } if *p == pre_image));
    }

    #[test]
    fn learner_objects_made_after_start_go_unless_the_lab_keeps_them() {
        let mut inventory = Inventory::new("lab-a");
        // The lab made the namespace (after it recorded what was there): what else is made in it
        // after start is the learner's.
        inventory.applied.push(record("Namespace", None, "work", "n1", Origin::Created));
        inventory.present_at_start.insert("work".into(), ["before".to_string()].into());
        let objects = vec![
            object("v1", "Pod", Some("work"), "theirs-before", "before"),
            object("v1", "Pod", Some("work"), "x", "after"),
            object("v1", "Event", Some("work"), "x.1", "event"),
            object("v1", "Pod", Some("elsewhere"), "y", "other"),
        ];
        let observed = Observed { objects, ..Observed::default() };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(lines(&actions), ["delete Pod work/x (created by the learner after start)"]);
        let actions = plan(&lab("keep"), Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(
            lines(&actions),
            ["keep Pod work/x (created by the learner; the lab keeps learner objects)"]
        );
        // Without a snapshot of the namespace nothing in it is taken for a learner's.
        inventory.present_at_start.clear();
        assert!(plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec![])).is_empty());
    }

    #[test]
    fn a_shared_namespace_survives_until_the_last_lab_leaves() {
        let mut a = Inventory::new("lab-a");
        let ns = record("Namespace", None, "gpu-operator", "n1", Origin::Created);
        let ds_a = record("DaemonSet", Some("gpu-operator"), "toolkit", "a1", Origin::Created);
        a.applied = vec![ns.clone(), ds_a.clone()];
        a.present_at_start.insert("gpu-operator".into(), BTreeSet::new());
        let mut b = Inventory::new("lab-b");
        let ds_b = record("DaemonSet", Some("gpu-operator"), "plugin", "b1", Origin::Created);
        b.applied = vec![record("Namespace", None, "gpu-operator", "n1", Origin::Used), ds_b.clone()];
        let objects = observed_of(&[&ns, &ds_a, &ds_b]);
        let observed = Observed {
            objects,
            other_labs: vec![b],
            inventory_namespace_shared: true,
            ..Observed::default()
        };
        let actions = plan(&lab("delete"), Some(&a), &observed, &remove());
        assert_eq!(
            lines(&actions),
            [
                "delete DaemonSet gpu-operator/toolkit (created by the lab)",
                "keep Namespace gpu-operator (it still holds objects that are not the lab's: DaemonSet gpu-operator/plugin)",
                "hand Namespace gpu-operator over to lab lab-b (it still uses it)",
                "delete ConfigMap lab-runner/lab-runner-inventory-lab-a (the inventory: the lab is no longer started)",
            ]
        );
    }

    #[test]
    fn a_crd_with_foreign_custom_resources_stays() {
        let mut inventory = Inventory::new("lab-a");
        let crd = record(
            "CustomResourceDefinition",
            None,
            "prometheusrules.monitoring.coreos.com",
            "c1",
            Origin::Created,
        );
        let rule = record("PrometheusRule", Some("work"), "lab-rule", "r1", Origin::Created);
        inventory.applied = vec![crd.clone(), rule.clone()];
        inventory.present_at_start.insert("work".into(), BTreeSet::new());
        let mut crd_object = object(&crd.api_version, &crd.kind, None, &crd.name, "c1");
        crd_object.object["spec"] =
            json!({"group": "monitoring.coreos.com", "names": {"kind": "PrometheusRule"}});
        let learner_rule = object("monitoring.coreos.com/v1", "PrometheusRule", Some("work"), "mine", "r2");
        let platform_rule =
            object("monitoring.coreos.com/v1", "PrometheusRule", Some("monitoring"), "platform-alerts", "r3");
        let observed = Observed {
            objects: vec![
                crd_object.clone(),
                observed_of(&[&rule]).remove(0),
                learner_rule.clone(),
                platform_rule,
            ],
            ..Observed::default()
        };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(
            lines(&actions),
            [
                "delete PrometheusRule work/mine (created by the learner after start)",
                "delete PrometheusRule work/lab-rule (created by the lab)",
                "keep CustomResourceDefinition prometheusrules.monitoring.coreos.com (it still holds objects that are not the lab's: PrometheusRule monitoring/platform-alerts)",
            ]
        );
        // Without the platform's rule the CRD is the lab's alone and goes.
        let observed = Observed {
            objects: vec![crd_object, observed_of(&[&rule]).remove(0), learner_rule],
            ..Observed::default()
        };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(
            lines(&actions).last().map(String::as_str),
            Some(
                "delete CustomResourceDefinition prometheusrules.monitoring.coreos.com (created by the lab)"
            )
        );
    }

    #[test]
    fn another_labs_objects_are_never_learner_objects_and_node_labels_come_back() {
        let mut a = Inventory::new("lab-a");
        a.present_at_start.insert("work".into(), BTreeSet::new());
        a.pre_images.node_labels.insert(
            "gpu-1".into(),
            [
                ("nvidia.com/device-plugin.config".to_string(), None),
                ("team".to_string(), Some("x".to_string())),
            ]
            .into(),
        );
        let mut b = Inventory::new("lab-b");
        b.applied = vec![record("ConfigMap", Some("work"), "b-config", "b1", Origin::Created)];
        let observed = Observed {
            objects: vec![object("v1", "ConfigMap", Some("work"), "b-config", "b1")],
            other_labs: vec![b],
            nodes: [(
                "gpu-1".to_string(),
                NodeState {
                    labels: [
                        ("nvidia.com/device-plugin.config".to_string(), "ts-4".to_string()),
                        ("team".to_string(), "x".to_string()),
                    ]
                    .into(),
                    ..NodeState::default()
                },
            )]
            .into(),
            inventory_namespace_shared: true,
        };
        let actions = plan(&lab("delete"), Some(&a), &observed, &remove());
        assert_eq!(
            lines(&actions),
            [
                "restore labels of Node gpu-1 (nvidia.com/device-plugin.config removed)",
                "delete ConfigMap lab-runner/lab-runner-inventory-lab-a (the inventory: the lab is no longer started)",
            ]
        );
    }

    #[test]
    fn a_lab_object_recreated_by_the_learner_is_the_learners() {
        let mut inventory = Inventory::new("lab-a");
        let ds = record("DaemonSet", Some("elsewhere"), "toolkit", "d1", Origin::Created);
        inventory.applied = vec![ds.clone()];
        let observed = Observed {
            objects: vec![object("apps/v1", "DaemonSet", Some("elsewhere"), "toolkit", "d2")],
            ..Observed::default()
        };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(
            lines(&actions),
            ["delete DaemonSet elsewhere/toolkit (created by the learner after start)"]
        );
    }

    #[test]
    fn a_namespace_goes_when_what_holds_it_goes_with_the_lab_at_any_depth() {
        let mut inventory = Inventory::new("lab-a");
        let ns = record("Namespace", None, "work", "n1", Origin::Created);
        let deployment = record("Deployment", Some("work"), "web", "d1", Origin::Created);
        inventory.applied = vec![ns.clone(), deployment.clone()];
        inventory.present_at_start.insert("work".into(), BTreeSet::new());
        let mut objects = observed_of(&[&ns, &deployment]);
        let mut replica_set = object("apps/v1", "ReplicaSet", Some("work"), "web-1", "r1");
        replica_set.owners = vec!["d1".into()];
        let mut pod = object("v1", "Pod", Some("work"), "web-1-x", "p1");
        pod.owners = vec!["r1".into()];
        objects.extend([replica_set, pod]);
        let observed = Observed { objects, ..Observed::default() };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &remove());
        assert!(
            lines(&actions).contains(&"delete Namespace work (created by the lab)".to_string()),
            "{:?}",
            lines(&actions)
        );
    }

    #[test]
    fn in_a_namespace_that_existed_only_what_a_task_asks_for_is_the_learners() {
        let mut lab = lab("delete");
        lab.reset.namespaces = vec!["gpu-operator".into()];
        lab.tasks = serde_saphyr::from_str(
            "- {id: alert, title: {en: a}, description: {en: a}, points: 1, expect: [], \
               creates: [{apiVersion: monitoring.coreos.com/v1, kind: PrometheusRule, namespace: gpu-operator}]}\n",
        )
        .unwrap();
        let mut inventory = Inventory::new("lab-a");
        inventory.applied = vec![record("Namespace", None, "gpu-operator", "n0", Origin::Used)];
        inventory.present_at_start.insert("gpu-operator".into(), ["old".to_string()].into());
        let observed = Observed {
            objects: vec![
                object("monitoring.coreos.com/v1", "PrometheusRule", Some("gpu-operator"), "mine", "r1"),
                object("v1", "ConfigMap", Some("gpu-operator"), "operator-made-later", "c1"),
            ],
            ..Observed::default()
        };
        let actions = plan(&lab, Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(
            lines(&actions),
            ["delete PrometheusRule gpu-operator/mine (created by the learner after start)"]
        );
    }

    #[test]
    fn nodes_get_back_exactly_their_labels_and_advertised_resources() {
        let mut inventory = Inventory::new("lab-a");
        let before = NodeState {
            labels: [("kubernetes.io/hostname".to_string(), "gpu-3".to_string())].into(),
            capacity: [("cpu".to_string(), "8".to_string())].into(),
            allocatable: [("cpu".to_string(), "8".to_string())].into(),
        };
        inventory.pre_images.nodes.insert("gpu-3".into(), before.clone());
        let mut after = before.clone();
        after.labels.insert("nvidia.com/mig.config.state".into(), "success".into());
        after.capacity.insert("nvidia.com/mig-1g.5gb".into(), "0".into());
        after.allocatable.insert("nvidia.com/mig-1g.5gb".into(), "0".into());
        let observed = Observed { nodes: [("gpu-3".to_string(), after)].into(), ..Observed::default() };
        let actions = plan(&lab("delete"), Some(&inventory), &observed, &Mode::Stages(vec![]));
        assert_eq!(
            lines(&actions),
            [
                "restore Node gpu-3 as the first start found it: labels (nvidia.com/mig.config.state removed), advertised resources (nvidia.com/mig-1g.5gb removed)"
            ]
        );
        let unchanged = Observed { nodes: [("gpu-3".to_string(), before)].into(), ..Observed::default() };
        assert!(plan(&lab("delete"), Some(&inventory), &unchanged, &Mode::Stages(vec![])).is_empty());
    }

    #[test]
    fn plans_read_in_japanese() {
        let object = ObjectId {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: Some("team-b".into()),
            name: "x".into(),
            uid: "u".into(),
        };
        let actions = [
            Action::Delete { object: object.clone(), reason: DeleteReason::CreatedByLearner },
            Action::Keep { object, reason: KeepReason::ExistedBeforeStart },
            Action::RestoreNodeLabels { node: "gpu-1".into(), labels: [("k".to_string(), None)].into() },
        ];
        let ja: Vec<String> = actions.iter().map(|a| a.render(Lang::Ja)).collect();
        assert_eq!(
            ja,
            [
                "Pod team-b/x を削除（開始後に受講者が作成）",
                "Pod team-b/x を保持（開始前から存在）",
                "ノード gpu-1 のラベルを復元（k を削除）"
            ]
        );
    }
}
