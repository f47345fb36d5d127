//! The in-cluster inventory of a started lab: a ConfigMap `lab-runner-inventory-<lab>` in the
//! `lab-runner` namespace recording per object who made it (uid, pre-image), the uids present at
//! start, the start's progress, the variant and facts (salted and hashed) and the quiz answers, so
//! `reset` and `check` work from any machine.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Error, FIELD_MANAGER, LAB_LABEL, Result, cluster::with_retries};
pub use crate::grade::evidence::HashedFact;
use crate::{grade::evidence::Started, msg};

/// The namespace holding every lab's inventory.
pub const NAMESPACE: &str = "lab-runner";

/// The inventory ConfigMap's name for `lab`.
pub fn name_for(lab: &str) -> String {
    format!("lab-runner-inventory-{lab}")
}

/// The fields of a pre-existing object that the lab changes, as they were before it did.
/// `None` values say the label, annotation or field was absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreImage {
    /// Labels the lab sets (its own `lab-runner.io/*` ones and the manifest's).
    #[serde(default)]
    pub labels: BTreeMap<String, Option<String>>,
    /// Annotations the manifest sets.
    #[serde(default)]
    pub annotations: BTreeMap<String, Option<String>>,
    /// Top-level fields the manifest sets (`spec`, `data`, …), whole.
    #[serde(default)]
    pub fields: BTreeMap<String, Option<serde_json::Value>>,
}

/// Who made an object the lab's stages name: the state `reset` decides from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "origin", rename_all = "camelCase")]
pub enum Origin {
    /// The lab created it: `reset` deletes it.
    Created,
    /// It existed and the lab declares `adopt`: applied over, its pre-image restored on reset.
    Adopted {
        /// The fields the lab changes, as they were.
        #[serde(rename = "preImage")]
        pre_image: PreImage,
    },
    /// A Namespace or CRD that existed: used as it is, never changed nor deleted.
    Used,
}

/// One object a stage of the lab names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AppliedObject {
    /// apiVersion.
    pub api_version: String,
    /// Kind.
    pub kind: String,
    /// Namespace, for namespaced kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
    /// The stage that applied it.
    pub stage: String,
    /// Its uid when the lab created or first saw it.
    #[serde(default)]
    pub uid: String,
    /// Who made it.
    #[serde(flatten)]
    pub origin: Origin,
}

impl AppliedObject {
    /// Whether this record names the same object as `other` (apiVersion, kind, namespace, name).
    pub fn same_object(&self, other: &AppliedObject) -> bool {
        self.api_version == other.api_version
            && self.kind == other.kind
            && self.namespace == other.namespace
            && self.name == other.name
    }

    /// `Kind namespace/name` or `Kind name`.
    pub fn shown(&self) -> String {
        match &self.namespace {
            Some(namespace) => format!("{} {namespace}/{}", self.kind, self.name),
            None => format!("{} {}", self.kind, self.name),
        }
    }
}

/// How far `start` got: complete only once the last stage's waits passed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Progress {
    /// A start is under way or was interrupted: `start` again resumes it.
    #[default]
    Incomplete,
    /// Every stage applied and every wait passed.
    Complete,
}

/// A ConfigMap's content before the lab changed it (`data: None`: it did not exist).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConfigMapPreImage {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// Its data, or `None` when it did not exist.
    pub data: Option<BTreeMap<String, String>>,
}

/// Pre-existing state recorded before the lab first changed it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreImages {
    /// Per node, the recorded label keys and their values (`None`: absent).
    #[serde(default)]
    pub node_labels: BTreeMap<String, BTreeMap<String, Option<String>>>,
    /// Recorded ConfigMaps.
    #[serde(default)]
    pub config_maps: Vec<ConfigMapPreImage>,
}

/// What the inventory holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inventory {
    /// The lab id.
    pub lab: String,
    /// The variant started, salted and hashed like the facts (it answers the `cause` quiz).
    pub variant: Option<HashedFact>,
    /// Whether the start finished.
    pub progress: Progress,
    /// The stages completed, in order.
    pub stages: Vec<String>,
    /// Every object the stages named, with who made it.
    pub applied: Vec<AppliedObject>,
    /// Per working namespace, the uids of the objects in it when the lab was first started
    /// (an empty set: the namespace did not exist). A namespace not listed was not recorded, so
    /// no object in it is taken for a learner's.
    pub present_at_start: BTreeMap<String, BTreeSet<String>>,
    /// Recorded pre-images.
    pub pre_images: PreImages,
    /// Facts captured when the breakage was confirmed, by fact name (`affectedNode`).
    pub facts: BTreeMap<String, HashedFact>,
    /// Quiz answers by task id.
    pub answers: BTreeMap<String, String>,
    /// How many answers `answer` recorded, by task id.
    pub attempts: BTreeMap<String, u32>,
    /// The highest hint level `check --hint` showed, by task (what the class's timeline
    /// records; `reset` takes it back with the answers).
    pub hints: BTreeMap<String, u8>,
}

impl Inventory {
    /// An empty inventory for `lab`.
    pub fn new(lab: &str) -> Inventory {
        Inventory { lab: lab.to_string(), ..Inventory::default() }
    }

    /// What a grading needs of this record: the variant, the answers and the facts.
    pub fn started(&self) -> Started<'_> {
        Started {
            lab: &self.lab,
            variant: self.variant.as_ref(),
            answers: &self.answers,
            facts: &self.facts,
            attempts: &self.attempts,
        }
    }

    /// Records an object once: the first record keeps its origin and pre-image (a re-applied
    /// stage must not take the lab's own state for the pre-image); a created object recreated
    /// since gets its new uid.
    pub fn record(&mut self, object: AppliedObject) {
        match self.applied.iter_mut().find(|o| o.same_object(&object)) {
            Some(known) if known.origin == Origin::Created && !object.uid.is_empty() => {
                known.uid = object.uid
            }
            Some(_) => {}
            None => self.applied.push(object),
        }
    }

    /// The record of the object `api_version`/`kind` `namespace`/`name`, if any.
    pub fn find(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<&AppliedObject> {
        self.applied.iter().find(|o| {
            o.api_version == api_version
                && o.kind == kind
                && o.namespace.as_deref() == namespace
                && o.name == name
        })
    }

    /// The uids of the objects this lab created or adopted.
    pub fn owned_uids(&self) -> BTreeSet<&str> {
        self.applied
            .iter()
            .filter(|o| !matches!(o.origin, Origin::Used) && !o.uid.is_empty())
            .map(|o| o.uid.as_str())
            .collect()
    }

    /// For a start that did not finish, one line saying so with the remedy.
    pub fn incomplete_start(&self, lang: crate::session::Lang) -> Option<String> {
        if self.progress == Progress::Complete {
            return None;
        }
        Some(if self.stages.is_empty() {
            crate::tr!(lang, "start-incomplete-before", lab = &self.lab)
        } else {
            crate::tr!(
                lang,
                "start-incomplete-after",
                lab = &self.lab,
                stages = crate::i18n::list(&self.stages)
            )
        })
    }

    /// Whether the recorded variant is `id`.
    pub fn variant_is(&self, id: &str) -> bool {
        self.variant.as_ref().is_some_and(|v| v.matches(id, false))
    }

    /// The recorded variant, found among `lab`'s variants by its digest.
    pub fn variant_in(&self, lab: &crate::lab::model::Lab) -> Option<String> {
        lab.variants.iter().map(|v| &v.id.value).find(|id| self.variant_is(id)).cloned()
    }

    /// Records `variant` hashed (`None`: the lab has no variants).
    pub fn set_variant(&mut self, variant: Option<&str>) {
        self.variant = variant.map(HashedFact::new);
    }

    fn to_data(&self) -> BTreeMap<String, String> {
        let json = |v: serde_json::Value| v.to_string();
        BTreeMap::from([
            ("lab".to_string(), self.lab.clone()),
            ("variant".to_string(), self.variant.as_ref().map(|v| json(json!(v))).unwrap_or_default()),
            ("progress".to_string(), json(json!(self.progress))),
            ("stages".to_string(), json(json!(self.stages))),
            ("applied".to_string(), json(json!(self.applied))),
            ("presentAtStart".to_string(), json(json!(self.present_at_start))),
            ("preImages".to_string(), json(json!(self.pre_images))),
            ("facts".to_string(), json(json!(self.facts))),
            ("answers".to_string(), json(json!(self.answers))),
            ("attempts".to_string(), json(json!(self.attempts))),
            ("hints".to_string(), json(json!(self.hints))),
        ])
    }

    /// Reads an inventory from its ConfigMap's `data` (as `check --watch` receives it).
    pub fn from_data(data: &BTreeMap<String, String>) -> Result<Inventory> {
        fn field<T: for<'de> Deserialize<'de> + Default>(
            data: &BTreeMap<String, String>,
            key: &str,
        ) -> Result<T> {
            match data.get(key) {
                None => Ok(T::default()),
                Some(text) if text.is_empty() => Ok(T::default()),
                Some(text) => serde_json::from_str(text).map_err(|e| {
                    Error::Inventory(msg!("inventory-field-unreadable", key = key, reason = e.to_string()))
                }),
            }
        }
        Ok(Inventory {
            lab: data.get("lab").cloned().unwrap_or_default(),
            variant: field(data, "variant")?,
            progress: field(data, "progress")?,
            stages: field(data, "stages")?,
            applied: field(data, "applied")?,
            present_at_start: field(data, "presentAtStart")?,
            pre_images: field(data, "preImages")?,
            facts: field(data, "facts")?,
            answers: field(data, "answers")?,
            attempts: field(data, "attempts")?,
            hints: field(data, "hints")?,
        })
    }
}

/// Reads the inventory of `lab`; `None` when the lab was never started on this cluster.
pub async fn load(client: &kube::Client, lab: &str) -> Result<Option<Inventory>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(lab);
    let found = with_retries(|| api.get_opt(&name))
        .await
        .map_err(|e| Error::api(msg!("action-read-inventory", object = format!("{NAMESPACE}/{name}")), &e))?;
    match found {
        None => Ok(None),
        Some(config_map) => Inventory::from_data(&config_map.data.unwrap_or_default()).map(Some),
    }
}

/// Writes the inventory (server-side apply), creating its namespace when needed.
pub async fn save(client: &kube::Client, inventory: &Inventory) -> Result<()> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    namespaces
        .patch(NAMESPACE, &params, &Patch::Apply(&namespace))
        .await
        .map_err(|e| Error::api(msg!("action-create-namespace", namespace = NAMESPACE), &e))?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(&inventory.lab);
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LAB_LABEL: inventory.lab}},
        "data": inventory.to_data(),
    });
    api.patch(&name, &params, &Patch::Apply(&config_map)).await.map_err(|e| {
        Error::api(msg!("action-write-inventory", object = format!("{NAMESPACE}/{name}")), &e)
    })?;
    Ok(())
}

/// Records that `check --hint` showed these hint levels (by task), keeping the highest level
/// of each, so the class's board can put them on the learner's timeline. Nothing when the lab
/// was never started (there is no inventory to keep them in) or nothing is higher than recorded.
pub async fn record_hints(client: &kube::Client, lab: &str, shown: &BTreeMap<String, u8>) -> Result<()> {
    let Some(mut inventory) = load(client, lab).await? else { return Ok(()) };
    let mut changed = false;
    for (task, level) in shown {
        let kept = inventory.hints.entry(task.clone()).or_default();
        if level > kept {
            *kept = *level;
            changed = true;
        }
    }
    if changed { save(client, &inventory).await } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_match_only_their_value() {
        let fact = HashedFact::new("gpu-2");
        assert!(fact.matches(" GPU-2 ", true));
        assert!(!fact.matches("GPU-2", false));
        assert!(fact.matches("gpu-2", false));
        assert!(!fact.matches("gpu-1", true));
        assert!(!fact.exact.contains("gpu"), "the value is not readable from the digest");
    }

    #[test]
    fn the_inventory_round_trips_through_configmap_data() {
        let mut inventory = Inventory::new("lab");
        inventory.set_variant(Some("image"));
        inventory.facts.insert("affectedNode".into(), HashedFact::new("gpu-1"));
        inventory.answers.insert("find-node".into(), "gpu-1".into());
        inventory.attempts.insert("find-node".into(), 2);
        inventory.record(AppliedObject {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: None,
            name: "lab".into(),
            stage: "s".into(),
            uid: "u1".into(),
            origin: Origin::Created,
        });
        let mut pre_image = PreImage::default();
        pre_image.labels.insert("team".into(), None);
        pre_image.fields.insert("data".into(), Some(json!({"k": "v"})));
        inventory.record(AppliedObject {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("lab".into()),
            name: "c".into(),
            stage: "s".into(),
            uid: "u2".into(),
            origin: Origin::Adopted { pre_image },
        });
        inventory.present_at_start.insert("lab".into(), ["u0".to_string()].into());
        inventory.progress = Progress::Complete;
        let data = inventory.to_data();
        assert!(!data["variant"].contains("image"), "the variant is stored hashed: {}", data["variant"]);
        let read = Inventory::from_data(&data).unwrap();
        assert!(read.variant_is("image") && !read.variant_is("resources"));
        assert_eq!(read, inventory);
    }
}
