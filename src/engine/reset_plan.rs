//! The reset planner: a pure function from a lab's inventory and the observed cluster to the ordered actions of `reset` and `reset --remove`, and their text in en and ja.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::inventory::{AppliedObject, Inventory, Origin, PreImage};
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
    /// Node labels by node name.
    pub nodes: BTreeMap<String, BTreeMap<String, String>>,
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
                let changes: Vec<String> = labels
                    .iter()
                    .map(|(key, value)| match value {
                        Some(value) => format!("{key}={value}"),
                        None => tr!(lang, "reset-label-removed", key = key),
                    })
                    .collect();
                let changes = changes.join(&tr!(lang, "list-separator"));
                tr!(lang, "reset-restore-node-labels", node = node, changes = changes)
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
    let own = inventory.owned_uids();
    let restored_config_maps: BTreeSet<(&str, &str)> =
        lab.reset.restore.config_maps.iter().map(|c| (c.namespace.as_str(), c.name.as_str())).collect();
    let mut actions = Vec::new();
    let mut deleted: BTreeSet<String> = BTreeSet::new();

    // Learner objects: made after start in a working namespace, by uid against the snapshot.
    for namespace in working_namespaces(lab, inventory) {
        let Some(present) = inventory.present_at_start.get(&namespace) else { continue };
        for object in observed.in_namespace(&namespace) {
            let recorded =
                inventory.find(&object.api_version, &object.kind, object.namespace.as_deref(), &object.name);
            if present.contains(&object.uid)
                || own.contains(object.uid.as_str())
                || other_owned.contains_key(object.uid.as_str())
                || recorded.is_some()
                || !object.owners.is_empty()
                || object.kind == "Event"
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

    // Node labels and ConfigMaps the lab's reset policy names.
    for (node, recorded) in &inventory.pre_images.node_labels {
        let Some(current) = observed.nodes.get(node) else { continue };
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

    // CRDs, then Namespaces: deleted only when the lab created them and nothing foreign remains.
    let mut containers_of_lab = containers_of_lab;
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
        let held: Vec<&ObservedObject> = if record.kind == "Namespace" {
            observed
                .in_namespace(&record.name)
                .filter(|o| {
                    let goes_with_owner =
                        !o.owners.is_empty() && o.owners.iter().all(|owner| deleted.contains(owner));
                    !deleted.contains(&o.uid) && o.kind != "Event" && !goes_with_owner
                })
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

    match mode {
        Mode::Stages(stages) => actions.extend(stages.iter().cloned().map(Action::ApplyStage)),
        Mode::Remove => actions.push(Action::DeleteInventory {
            lab: lab.id.value.clone(),
            with_namespace: !observed.inventory_namespace_shared,
        }),
    }
    actions
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
                [
                    ("nvidia.com/device-plugin.config".to_string(), "ts-4".to_string()),
                    ("team".to_string(), "x".to_string()),
                ]
                .into(),
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
