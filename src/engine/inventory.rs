//! The in-cluster inventory of a started lab: a ConfigMap `lab-runner-inventory-<lab>` in the
//! `lab-runner` namespace recording per object who made it (uid, pre-image), the uids present at
//! start, the start's progress, the variant and facts (keyed) and the quiz answers, so
//! `reset` and `check` work from any machine.
//!
//! Every record is sealed: the Secret `lab-runner-key-<lab>` beside it holds a random key, each
//! data key of the ConfigMap carries an HMAC under it (`seals`), and the facts are HMACs of their
//! values. A record changed or removed by anything but lab-runner is named when the inventory is
//! read ([`Integrity::Tampered`]), and grading then gives ERROR, never a fallback.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Error, FIELD_MANAGER, LAB_LABEL, Result, cluster::with_retries};
pub use crate::grade::evidence::{HashedFact, RecordKey, StartNode};
use crate::{grade::evidence::Started, msg};

/// The namespace holding every lab's inventory.
pub const NAMESPACE: &str = "lab-runner";

/// The inventory ConfigMap's name for `lab`.
pub fn name_for(lab: &str) -> String {
    format!("lab-runner-inventory-{lab}")
}

/// The name of the Secret holding `lab`'s record key.
pub fn key_name_for(lab: &str) -> String {
    format!("lab-runner-key-{lab}")
}

/// Whether the records are as lab-runner wrote them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Integrity {
    /// Every record carries its seal (or the inventory is new and not written yet).
    #[default]
    Intact,
    /// The key cannot be read with these credentials (a learner's in a hosted class, who cannot
    /// write the records either): they are read as they are, and keyed facts cannot be judged.
    Unverifiable,
    /// Records that were changed or removed outside lab-runner, or the key itself gone: by name.
    Tampered(Vec<String>),
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
    /// Every node as the first start found it: its labels and what it advertised. `reset` gives
    /// each back exactly this (GPU Feature Discovery's labels, the MIG manager's state label and
    /// the device plugin's resources, zero-valued ones included, are the lab's doing).
    #[serde(default)]
    pub nodes: BTreeMap<String, NodeState>,
}

/// A node's labels and advertised resources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    /// `metadata.labels`.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// `status.capacity`.
    #[serde(default)]
    pub capacity: BTreeMap<String, String>,
    /// `status.allocatable`.
    #[serde(default)]
    pub allocatable: BTreeMap<String, String>,
}

impl NodeState {
    /// The state of `node`, quantities as their canonical text.
    pub fn of(node: &k8s_openapi::api::core::v1::Node) -> NodeState {
        let resources =
            |list: Option<&BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
                list.into_iter().flatten().map(|(k, v)| (k.clone(), v.0.clone())).collect()
            };
        let status = node.status.as_ref();
        NodeState {
            labels: node.metadata.labels.clone().unwrap_or_default(),
            capacity: resources(status.and_then(|s| s.capacity.as_ref())),
            allocatable: resources(status.and_then(|s| s.allocatable.as_ref())),
        }
    }
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
    /// The nodes the lab's `rollout` checks cover, captured at the first start.
    pub start_nodes: Vec<StartNode>,
    /// The record key, when these credentials could read it (not stored in the ConfigMap).
    pub key: Option<RecordKey>,
    /// Whether the records were as lab-runner wrote them when read (not stored).
    pub integrity: Integrity,
    /// A hosted class: learners, whose credentials cannot write these records, answer through
    /// entries of their own ([`record_answer_entry`]), which count after the answers here.
    pub answer_log: bool,
    /// The highest hint level `check --hint` showed, by task, sealed like the answers; in a
    /// hosted class the learners' hint entries ([`record_hint_entry`]) count on top of it.
    pub hints: BTreeMap<String, u8>,
}

/// The ConfigMap data keys the records are stored under (the seals cover each).
const RECORD_KEYS: [&str; 13] = [
    "lab",
    "variant",
    "progress",
    "stages",
    "applied",
    "presentAtStart",
    "preImages",
    "facts",
    "answers",
    "attempts",
    "startNodes",
    "answerLog",
    "hints",
];

/// The ConfigMap data key holding the seals.
const SEALS: &str = "seals";

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
            present_at_start: &self.present_at_start,
            start_nodes: &self.start_nodes,
            key: self.key.as_ref(),
        }
    }

    /// For records changed or removed outside lab-runner, one line naming them and the remedy.
    pub fn tampered(&self) -> Option<crate::i18n::Message> {
        match &self.integrity {
            Integrity::Tampered(records) => {
                Some(msg!("records-tampered", lab = &self.lab, records = records.join(", ")))
            }
            _ => None,
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

    /// For a lab whose stages are not all applied (a `reset --to-stage` stopped before some), one
    /// line naming the first one missing and how to bring it back.
    pub fn missing_stage(&self, lab: &crate::lab::model::Lab, lang: crate::session::Lang) -> Option<String> {
        if self.progress != Progress::Complete {
            return None;
        }
        let missing = lab.stages.iter().find(|stage| !self.stages.contains(&stage.id.value))?;
        Some(crate::tr!(lang, "check-stage-missing", lab = &self.lab, stage = &missing.id.value))
    }

    /// Whether the recorded variant is `id` (never, without the key).
    pub fn variant_is(&self, id: &str) -> bool {
        self.started().variant_is(id)
    }

    /// The recorded variant, found among `lab`'s variants by its digest.
    pub fn variant_in(&self, lab: &crate::lab::model::Lab) -> Option<String> {
        lab.variants.iter().map(|v| &v.id.value).find(|id| self.variant_is(id)).cloned()
    }

    /// Records `variant` keyed (`None`: the lab has no variants). Needs the key.
    pub fn set_variant(&mut self, variant: Option<&str>) -> Result<()> {
        self.variant = match variant {
            Some(variant) => Some(HashedFact::new(self.key()?, variant)),
            None => None,
        };
        Ok(())
    }

    /// The record key, or the error of credentials that cannot write the records.
    pub fn key(&self) -> Result<&RecordKey> {
        self.key.as_ref().ok_or_else(|| {
            let secret = format!("{NAMESPACE}/{}", key_name_for(&self.lab));
            Error::BadInput(msg!("records-need-key", secret = secret))
        })
    }

    /// Keys `value` as a fact with the record key.
    pub fn fact(&self, value: &str) -> Result<HashedFact> {
        Ok(HashedFact::new(self.key()?, value))
    }

    /// The data written: every record and their seals under the key.
    fn to_data(&self) -> Result<BTreeMap<String, String>> {
        let key = self.key()?;
        let mut data = self.records();
        let seals: BTreeMap<&String, String> =
            data.iter().map(|(name, value)| (name, key.mac(&["record", name, value]))).collect();
        let seals = serde_json::to_string(&seals).expect("seals serialize");
        data.insert(SEALS.to_string(), seals);
        Ok(data)
    }

    fn records(&self) -> BTreeMap<String, String> {
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
            ("startNodes".to_string(), json(json!(self.start_nodes))),
            ("answerLog".to_string(), json(json!(self.answer_log))),
            ("hints".to_string(), json(json!(self.hints))),
        ])
    }

    /// Reads an inventory from its ConfigMap's `data` (as `check --watch` receives it), checking
    /// every record's seal with the key (see [`KeyState`]).
    pub fn from_data(data: &BTreeMap<String, String>, key: KeyState) -> Result<Inventory> {
        let mut inventory = Inventory::read_records(data)?;
        inventory.integrity = match &key {
            KeyState::Read(key) => seal_problems(data, key),
            KeyState::Forbidden | KeyState::NotRead => Integrity::Unverifiable,
            KeyState::Missing => Integrity::Tampered(vec![format!(
                "Secret {NAMESPACE}/{} (the record key)",
                key_name_for(&inventory.lab)
            )]),
        };
        if let KeyState::Read(key) = key {
            inventory.key = Some(key);
        }
        Ok(inventory)
    }

    fn read_records(data: &BTreeMap<String, String>) -> Result<Inventory> {
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
            start_nodes: field(data, "startNodes")?,
            answer_log: field(data, "answerLog")?,
            hints: field(data, "hints")?,
            key: None,
            integrity: Integrity::Intact,
        })
    }
}

/// The label of an answer entry: the task it answers.
pub const ANSWER_LABEL: &str = "lab-runner.io/answer-to";
/// The label of a hint entry: the task whose hint was shown.
pub const HINT_LABEL: &str = "lab-runner.io/hint-for";

/// One answer a hosted class's learner recorded as an entry of its own: a ConfigMap in the
/// records' namespace, immutable, which the learner's credentials may create but neither change
/// nor delete, so its count of attempts cannot be reset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerEntry {
    /// The quiz task.
    pub task: String,
    /// The answer.
    pub value: String,
    /// The entry's uid.
    pub uid: String,
    /// Creation order: the store's revision at creation (the resourceVersion of an object never
    /// changed since), then its name.
    pub order: (u64, String),
    /// Whether it is immutable (an entry that could have been changed does not count).
    pub immutable: bool,
}

/// One hint level a hosted class's learner was shown, recorded as an entry of its own (as an
/// answer is): immutable and not the learner's to delete, so hint use cannot be taken back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintEntry {
    /// The task.
    pub task: String,
    /// The level shown (every level up to it was shown with it).
    pub level: u8,
    /// Whether it is immutable (an entry that could have been changed does not count).
    pub immutable: bool,
}

impl Inventory {
    /// Counts `entries` after the answers in the records, in the order they were made: each quiz
    /// takes answers until its limit (`limits`, by task), and the last answer taken stands. An entry
    /// beyond the limit (sent at the same moment as the one that took the last attempt) or one
    /// that could have been changed is not counted.
    pub fn count_answer_entries(&mut self, entries: &[AnswerEntry], limits: &BTreeMap<String, u32>) {
        let mut ordered: Vec<&AnswerEntry> = entries.iter().filter(|e| e.immutable).collect();
        ordered.sort_by(|a, b| a.order.cmp(&b.order));
        for entry in ordered {
            let used = self.attempts.get(&entry.task).copied().unwrap_or(0);
            if limits.get(&entry.task).is_some_and(|limit| used >= *limit) {
                continue;
            }
            self.attempts.insert(entry.task.clone(), used + 1);
            self.answers.insert(entry.task.clone(), entry.value.clone());
        }
    }

    /// Counts hint `entries` on top of the levels in the records: each task's highest level
    /// stands. An entry that could have been changed, or names a task or a level the lab does
    /// not have (`available`, by task), is not counted.
    pub fn count_hint_entries(&mut self, entries: &[HintEntry], available: &BTreeMap<String, u8>) {
        for entry in entries.iter().filter(|e| e.immutable) {
            if !available.get(&entry.task).is_some_and(|most| (1..=*most).contains(&entry.level)) {
                continue;
            }
            let kept = self.hints.entry(entry.task.clone()).or_default();
            *kept = (*kept).max(entry.level);
        }
    }
}

/// In a hosted class, counts the learners' answer and hint entries into `inventory` (one LIST);
/// nothing otherwise. What is counted is only ever held in memory: the records keep their own.
pub async fn count_learner_entries(
    client: &kube::Client,
    lab: &crate::lab::model::Lab,
    inventory: &mut Inventory,
) -> Result<()> {
    if !inventory.answer_log {
        return Ok(());
    }
    let limits: BTreeMap<String, u32> =
        lab.tasks.iter().filter_map(|t| Some((t.id.value.clone(), t.attempt_limit()?))).collect();
    let available: BTreeMap<String, u8> = lab
        .tasks
        .iter()
        .map(|t| (t.id.value.clone(), u8::try_from(t.hints.len()).unwrap_or(u8::MAX)))
        .collect();
    let entries = learner_entries(client, &lab.id.value).await?;
    let answers: Vec<AnswerEntry> = entries.iter().filter_map(answer_entry).collect();
    let hints: Vec<HintEntry> = entries.iter().filter_map(hint_entry).collect();
    inventory.count_answer_entries(&answers, &limits);
    inventory.count_hint_entries(&hints, &available);
    Ok(())
}

/// Every entry a learner made for `lab` (answers and hints; one LIST by the lab's label).
async fn learner_entries(client: &kube::Client, lab: &str) -> Result<Vec<ConfigMap>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let params = kube::api::ListParams::default().labels(&format!("{LAB_LABEL}={lab}"));
    let listed = with_retries(|| api.list(&params))
        .await
        .map_err(|e| Error::api(msg!("action-list-in", plural = "ConfigMaps", namespace = NAMESPACE), &e))?;
    Ok(listed.items.into_iter().filter(is_learner_entry).collect())
}

/// Whether `config_map` is a learner's entry (an answer or a hint), whichever lab's.
pub fn is_learner_entry(config_map: &ConfigMap) -> bool {
    let labels = config_map.metadata.labels.as_ref();
    labels.is_some_and(|l| l.contains_key(ANSWER_LABEL) || l.contains_key(HINT_LABEL))
}

/// The answer entries of `lab` (one LIST).
pub async fn answer_entries(client: &kube::Client, lab: &str) -> Result<Vec<AnswerEntry>> {
    Ok(learner_entries(client, lab).await?.iter().filter_map(answer_entry).collect())
}

/// An answer entry as listed (`None`: not one).
pub fn answer_entry(config_map: &ConfigMap) -> Option<AnswerEntry> {
    config_map.metadata.labels.as_ref()?.get(ANSWER_LABEL)?;
    let data = config_map.data.as_ref()?;
    let meta = &config_map.metadata;
    Some(AnswerEntry {
        task: data.get("task")?.clone(),
        value: data.get("value")?.clone(),
        uid: meta.uid.clone().unwrap_or_default(),
        order: (
            meta.resource_version.as_deref().and_then(|v| v.parse().ok()).unwrap_or(u64::MAX),
            meta.name.clone().unwrap_or_default(),
        ),
        immutable: config_map.immutable == Some(true),
    })
}

/// A hint entry as listed (`None`: not one).
pub fn hint_entry(config_map: &ConfigMap) -> Option<HintEntry> {
    config_map.metadata.labels.as_ref()?.get(HINT_LABEL)?;
    let data = config_map.data.as_ref()?;
    Some(HintEntry {
        task: data.get("task")?.clone(),
        level: data.get("level")?.parse().ok()?,
        immutable: config_map.immutable == Some(true),
    })
}

/// What a learner's entry records.
#[derive(Debug, Clone, Copy)]
enum EntryOf<'a> {
    /// An answer: its value.
    Answer(&'a str),
    /// A hint level shown.
    Hint(u8),
}

/// Creates a learner's entry for `task` of `lab`: an immutable ConfigMap of its own; its uid.
async fn create_entry(client: &kube::Client, lab: &str, task: &str, entry: EntryOf<'_>) -> Result<String> {
    let (prefix, label, data, action) = match entry {
        EntryOf::Answer(value) => (
            "answer",
            ANSWER_LABEL,
            json!({"task": task, "value": value}),
            msg!("action-record-answer", task = task),
        ),
        EntryOf::Hint(level) => (
            "hint",
            HINT_LABEL,
            json!({"task": task, "level": level.to_string()}),
            msg!("action-record-hint", task = task),
        ),
    };
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let entry: ConfigMap = serde_json::from_value(json!({
        "metadata": {
            "generateName": format!("lab-runner-{prefix}-{lab}-"),
            "namespace": NAMESPACE,
            "labels": {LAB_LABEL: lab, label: task},
        },
        "immutable": true,
        "data": data,
    }))
    .expect("a valid ConfigMap");
    let created = api.create(&Default::default(), &entry).await.map_err(|e| Error::api(action, &e))?;
    Ok(created.metadata.uid.unwrap_or_default())
}

/// Records an answer as an entry of its own (a hosted class's learner); its uid.
pub async fn record_answer_entry(
    client: &kube::Client,
    lab: &str,
    task: &str,
    value: &str,
) -> Result<String> {
    create_entry(client, lab, task, EntryOf::Answer(value)).await
}

/// Records a hint level shown as an entry of its own (a hosted class's learner).
pub async fn record_hint_entry(client: &kube::Client, lab: &str, task: &str, level: u8) -> Result<()> {
    create_entry(client, lab, task, EntryOf::Hint(level)).await.map(|_| ())
}

/// Deletes `lab`'s learner entries, answers and hints (a reset or another variant: nothing
/// carries over).
pub async fn delete_learner_entries(client: &kube::Client, lab: &str) -> Result<()> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    for entry in learner_entries(client, lab).await? {
        let name = entry.metadata.name.unwrap_or_default();
        match api.delete(&name, &Default::default()).await {
            Ok(_) => {}
            Err(kube::Error::Api(status)) if status.code == 404 => {}
            Err(e) => {
                let object = format!("ConfigMap {NAMESPACE}/{name}");
                return Err(Error::api(msg!("action-delete", object = object), &e));
            }
        }
    }
    Ok(())
}

/// What became of reading the record key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeyState {
    /// Read.
    Read(RecordKey),
    /// These credentials may not read it (403): a learner's in a hosted class.
    Forbidden,
    /// It does not exist although the records do: removed (or it is not a key).
    Missing,
    /// Not asked for (another lab's inventory, read only for its ownership records).
    NotRead,
}

/// The records whose seal is missing or does not match, by name.
fn seal_problems(data: &BTreeMap<String, String>, key: &RecordKey) -> Integrity {
    let seals: BTreeMap<String, String> =
        match data.get(SEALS).and_then(|text| serde_json::from_str(text).ok()) {
            Some(seals) => seals,
            None => return Integrity::Tampered(vec![SEALS.to_string()]),
        };
    let mut problems = Vec::new();
    for name in RECORD_KEYS {
        match (data.get(name), seals.get(name)) {
            (Some(value), Some(seal)) if key.mac(&["record", name, value]) == *seal => {}
            (None, None) => {}
            _ => problems.push(name.to_string()),
        }
    }
    problems.extend(data.keys().filter(|k| *k != SEALS && !RECORD_KEYS.contains(&k.as_str())).cloned());
    if problems.is_empty() { Integrity::Intact } else { Integrity::Tampered(problems) }
}

/// Reads the inventory of `lab`; `None` when the lab was never started on this cluster.
pub async fn load(client: &kube::Client, lab: &str) -> Result<Option<Inventory>> {
    Ok(load_versioned(client, lab).await?.map(|(inventory, _)| inventory))
}

/// Reads the inventory of `lab` with the `resourceVersion` it was read at, for a
/// [`save_if_unchanged`] that must not overwrite a write made in between.
pub async fn load_versioned(client: &kube::Client, lab: &str) -> Result<Option<(Inventory, String)>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(lab);
    let found = with_retries(|| api.get_opt(&name))
        .await
        .map_err(|e| Error::api(msg!("action-read-inventory", object = format!("{NAMESPACE}/{name}")), &e))?;
    match found {
        None => Ok(None),
        Some(config_map) => {
            let version = config_map.metadata.resource_version.clone().unwrap_or_default();
            let key = read_key(client, lab).await?;
            Ok(Some((Inventory::from_data(&config_map.data.unwrap_or_default(), key)?, version)))
        }
    }
}

/// Reads `lab`'s record key: [`KeyState::Forbidden`] when these credentials may not.
pub async fn read_key(client: &kube::Client, lab: &str) -> Result<KeyState> {
    let api: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let name = key_name_for(lab);
    match with_retries(|| api.get_opt(&name)).await {
        Ok(None) => Ok(KeyState::Missing),
        Ok(Some(secret)) => {
            let bytes = secret.data.and_then(|d| d.get("key").map(|b| b.0.clone())).unwrap_or_default();
            // A key that is not one is a changed record, as a missing one is.
            Ok(RecordKey::from_bytes(bytes).map_or(KeyState::Missing, KeyState::Read))
        }
        Err(kube::Error::Api(status)) if status.code == 403 => Ok(KeyState::Forbidden),
        Err(e) => Err(Error::api(msg!("action-read-key", object = format!("{NAMESPACE}/{name}")), &e)),
    }
}

/// The record key of `lab`, made and stored (a Secret beside the inventory) when there is none.
pub async fn ensure_key(client: &kube::Client, lab: &str) -> Result<RecordKey> {
    use base64::Engine as _;
    match read_key(client, lab).await? {
        KeyState::Read(key) => return Ok(key),
        KeyState::Forbidden => {
            let secret = format!("{NAMESPACE}/{}", key_name_for(lab));
            return Err(Error::BadInput(msg!("records-need-key", secret = secret)));
        }
        KeyState::Missing | KeyState::NotRead => {}
    }
    ensure_namespace(client).await?;
    let key = RecordKey::generate();
    let api: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let name = key_name_for(lab);
    let secret = json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LAB_LABEL: lab}},
        "type": "Opaque",
        "data": {"key": base64::engine::general_purpose::STANDARD.encode(key.bytes())},
    });
    let params = PatchParams::apply(FIELD_MANAGER).force();
    api.patch(&name, &params, &Patch::Apply(&secret))
        .await
        .map_err(|e| Error::api(msg!("action-write-key", object = format!("{NAMESPACE}/{name}")), &e))?;
    Ok(key)
}

/// Deletes `lab`'s record key (`reset --remove`).
pub async fn delete_key(client: &kube::Client, lab: &str) -> Result<()> {
    let api: Api<Secret> = Api::namespaced(client.clone(), NAMESPACE);
    let name = key_name_for(lab);
    match api.delete(&name, &Default::default()).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(Error::api(msg!("action-delete", object = format!("Secret {NAMESPACE}/{name}")), &e)),
    }
}

async fn ensure_namespace(client: &kube::Client) -> Result<()> {
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}});
    namespaces
        .patch(NAMESPACE, &params, &Patch::Apply(&namespace))
        .await
        .map_err(|e| Error::api(msg!("action-create-namespace", namespace = NAMESPACE), &e))?;
    Ok(())
}

/// Whether a conditional write went through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The inventory was written.
    Saved,
    /// Someone wrote it since it was read at that `resourceVersion` (409 Conflict): read it again.
    Conflict,
}

/// Writes the inventory only if it is still at `resource_version` (an update with that
/// precondition, as `kubectl replace` sends it: the API server answers 409 Conflict otherwise),
/// so two `answer`s at once cannot both count as the same attempt.
pub async fn save_if_unchanged(
    client: &kube::Client,
    inventory: &Inventory,
    resource_version: &str,
) -> Result<Written> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(&inventory.lab);
    let mut config_map: ConfigMap =
        serde_json::from_value(config_map_of(inventory)?).expect("a valid ConfigMap");
    config_map.metadata.resource_version = Some(resource_version.to_string());
    match api.replace(&name, &Default::default(), &config_map).await {
        Ok(_) => Ok(Written::Saved),
        Err(kube::Error::Api(status)) if status.code == 409 => Ok(Written::Conflict),
        Err(e) => Err(Error::api(msg!("action-write-inventory", object = format!("{NAMESPACE}/{name}")), &e)),
    }
}

/// The inventory ConfigMap as `save` applies it.
fn config_map_of(inventory: &Inventory) -> Result<serde_json::Value> {
    let name = name_for(&inventory.lab);
    Ok(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LAB_LABEL: inventory.lab}},
        "data": inventory.to_data()?,
    }))
}

/// Writes the inventory (server-side apply), sealed with its key, creating its namespace when
/// needed.
pub async fn save(client: &kube::Client, inventory: &Inventory) -> Result<()> {
    let config_map = config_map_of(inventory)?;
    ensure_namespace(client).await?;
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(&inventory.lab);
    api.patch(&name, &params, &Patch::Apply(&config_map)).await.map_err(|e| {
        Error::api(msg!("action-write-inventory", object = format!("{NAMESPACE}/{name}")), &e)
    })?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn facts_match_only_their_value_and_only_with_the_key() {
        let key = RecordKey::generate();
        let fact = HashedFact::new(&key, "gpu-2");
        assert!(fact.matches(&key, " GPU-2 ", true));
        assert!(!fact.matches(&key, "GPU-2", false));
        assert!(fact.matches(&key, "gpu-2", false));
        assert!(!fact.matches(&key, "gpu-1", true));
        assert!(!fact.exact.contains("gpu"), "the value is not readable from the digest");
        // Offline, from the stored record alone, a guess cannot be tested.
        assert!(!fact.matches(&RecordKey::generate(), "gpu-2", false));
    }

    fn sealed() -> Inventory {
        let mut inventory = Inventory::new("lab");
        inventory.key = Some(RecordKey::generate());
        inventory.set_variant(Some("image")).unwrap();
        inventory.facts.insert("affectedNode".into(), inventory.fact("gpu-1").unwrap());
        inventory.attempts.insert("cause".into(), 1);
        inventory
    }

    #[test]
    fn a_record_changed_or_removed_outside_lab_runner_is_named() {
        let inventory = sealed();
        let key = inventory.key.clone().unwrap();
        let data = inventory.to_data().unwrap();
        let read = |data: &BTreeMap<String, String>, key: KeyState| Inventory::from_data(data, key).unwrap();
        assert_eq!(read(&data, KeyState::Read(key.clone())).integrity, Integrity::Intact);
        let mut reset_attempts = data.clone();
        reset_attempts.insert("attempts".into(), "{}".into());
        let mut no_facts = data.clone();
        no_facts.remove("facts");
        let mut unsealed = data.clone();
        unsealed.remove("seals");
        let tampered = |data: &BTreeMap<String, String>| read(data, KeyState::Read(key.clone())).integrity;
        assert_eq!(tampered(&reset_attempts), Integrity::Tampered(vec!["attempts".into()]));
        assert_eq!(tampered(&no_facts), Integrity::Tampered(vec!["facts".into()]));
        assert_eq!(tampered(&unsealed), Integrity::Tampered(vec!["seals".into()]));
        assert_eq!(
            read(&data, KeyState::Missing).integrity,
            Integrity::Tampered(vec!["Secret lab-runner/lab-runner-key-lab (the record key)".into()])
        );
        let learner = read(&data, KeyState::Forbidden);
        assert_eq!(learner.integrity, Integrity::Unverifiable);
        assert!(!learner.variant_is("image"), "without the key the variant is not known");
        assert!(learner.to_data().is_err(), "without the key nothing can be written");
    }

    #[test]
    fn hint_levels_are_sealed_and_a_learners_entries_count_only_as_made() {
        let mut inventory = sealed();
        inventory.hints.insert("fix".into(), 2);
        let key = inventory.key.clone().unwrap();
        let data = inventory.to_data().unwrap();
        let read = Inventory::from_data(&data, KeyState::Read(key.clone())).unwrap();
        assert_eq!((read.hints.get("fix"), &read.integrity), (Some(&2), &Integrity::Intact));
        // Hint use taken back outside lab-runner is named, as a reset attempt count is.
        let mut hidden = data.clone();
        hidden.insert("hints".into(), "{}".into());
        let hidden = Inventory::from_data(&hidden, KeyState::Read(key)).unwrap();
        assert_eq!(hidden.integrity, Integrity::Tampered(vec!["hints".into()]));
        // A hosted learner's entries raise the levels; a changeable entry, an unknown task or a
        // level the task does not have counts for nothing, and a level never goes down.
        let entry =
            |task: &str, level: u8, immutable: bool| HintEntry { task: task.into(), level, immutable };
        let available = BTreeMap::from([("fix".to_string(), 3), ("quiz".to_string(), 2)]);
        inventory.count_hint_entries(
            &[
                entry("quiz", 1, true),
                entry("quiz", 2, false),
                entry("fix", 1, true),
                entry("fix", 9, true),
                entry("nope", 1, true),
            ],
            &available,
        );
        assert_eq!(inventory.hints, BTreeMap::from([("fix".into(), 2), ("quiz".into(), 1)]));
    }

    #[test]
    fn the_inventory_round_trips_through_configmap_data() {
        let mut inventory = sealed();
        inventory.start_nodes.push(StartNode { name: "gpu-1".into(), uid: "n1".into() });
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
        let data = inventory.to_data().unwrap();
        assert!(!data["variant"].contains("image"), "the variant is stored keyed: {}", data["variant"]);
        let read = Inventory::from_data(&data, KeyState::Read(inventory.key.clone().unwrap())).unwrap();
        assert!(read.variant_is("image") && !read.variant_is("resources"));
        assert_eq!(read, inventory);
    }
}
