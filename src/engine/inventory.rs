//! The in-cluster inventory of a started lab: a ConfigMap `lab-runner-inventory-<lab>` in the
//! `lab-runner` namespace recording what was applied, pre-images, the variant, the captured facts
//! (salted and hashed) and the quiz answers, so `reset` and `check` work from any machine.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::{Error, FIELD_MANAGER, LAB_LABEL, Result, cluster::with_retries};
pub use crate::grade::evidence::HashedFact;
use crate::grade::evidence::Started;

/// The namespace holding every lab's inventory.
pub const NAMESPACE: &str = "lab-runner";

/// The inventory ConfigMap's name for `lab`.
pub fn name_for(lab: &str) -> String {
    format!("lab-runner-inventory-{lab}")
}

/// One object the lab applied.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
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
    /// The variant started, if the lab has variants.
    pub variant: Option<String>,
    /// The stages completed, in order.
    pub stages: Vec<String>,
    /// Every object applied.
    pub applied: Vec<AppliedObject>,
    /// Recorded pre-images.
    pub pre_images: PreImages,
    /// Facts captured when the breakage was confirmed, by fact name (`affectedNode`).
    pub facts: BTreeMap<String, HashedFact>,
    /// Quiz answers by task id.
    pub answers: BTreeMap<String, String>,
    /// How many answers `answer` recorded, by task id.
    pub attempts: BTreeMap<String, u32>,
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
            variant: self.variant.as_deref(),
            answers: &self.answers,
            facts: &self.facts,
            attempts: &self.attempts,
        }
    }

    /// Records an applied object once.
    pub fn record(&mut self, object: AppliedObject) {
        if !self.applied.iter().any(|o| {
            o.api_version == object.api_version
                && o.kind == object.kind
                && o.namespace == object.namespace
                && o.name == object.name
        }) {
            self.applied.push(object);
        }
    }

    fn to_data(&self) -> BTreeMap<String, String> {
        let json = |v: serde_json::Value| v.to_string();
        BTreeMap::from([
            ("lab".to_string(), self.lab.clone()),
            ("variant".to_string(), self.variant.clone().unwrap_or_default()),
            ("stages".to_string(), json(json!(self.stages))),
            ("applied".to_string(), json(json!(self.applied))),
            ("preImages".to_string(), json(json!(self.pre_images))),
            ("facts".to_string(), json(json!(self.facts))),
            ("answers".to_string(), json(json!(self.answers))),
            ("attempts".to_string(), json(json!(self.attempts))),
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
                Some(text) => serde_json::from_str(text).map_err(|e| Error::Inventory(format!("{key}: {e}"))),
            }
        }
        Ok(Inventory {
            lab: data.get("lab").cloned().unwrap_or_default(),
            variant: data.get("variant").filter(|v| !v.is_empty()).cloned(),
            stages: field(data, "stages")?,
            applied: field(data, "applied")?,
            pre_images: field(data, "preImages")?,
            facts: field(data, "facts")?,
            answers: field(data, "answers")?,
            attempts: field(data, "attempts")?,
        })
    }
}

/// Reads the inventory of `lab`; `None` when the lab was never started on this cluster.
pub async fn load(client: &kube::Client, lab: &str) -> Result<Option<Inventory>> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(lab);
    let found = with_retries(|| api.get_opt(&name))
        .await
        .map_err(|e| Error::api(format!("reading the inventory {NAMESPACE}/{name}"), &e))?;
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
        .map_err(|e| Error::api(format!("creating namespace {NAMESPACE}"), &e))?;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), NAMESPACE);
    let name = name_for(&inventory.lab);
    let config_map = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {LAB_LABEL: inventory.lab}},
        "data": inventory.to_data(),
    });
    api.patch(&name, &params, &Patch::Apply(&config_map))
        .await
        .map_err(|e| Error::api(format!("writing the inventory {NAMESPACE}/{name}"), &e))?;
    Ok(())
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
        inventory.variant = Some("image".into());
        inventory.facts.insert("affectedNode".into(), HashedFact::new("gpu-1"));
        inventory.answers.insert("find-node".into(), "gpu-1".into());
        inventory.attempts.insert("find-node".into(), 2);
        inventory.record(AppliedObject {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: None,
            name: "lab".into(),
            stage: "s".into(),
        });
        assert_eq!(Inventory::from_data(&inventory.to_data()).unwrap(), inventory);
    }
}
