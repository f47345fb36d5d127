//! `reset`: delete what the lab owns (by its inventory and labels) and, per the lab's policy, the
//! learner's objects in the lab's namespaces; restore the recorded pre-images; re-apply the first
//! stage (or, with `--to-stage S`, every stage up to and including S). Never touches objects the
//! lab does not own.

use std::{collections::BTreeSet, time::Duration};

use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::{
    api::{Api, DeleteParams, DynamicObject, Patch, PatchParams},
    discovery::{Discovery, Scope, verbs},
};
use serde_json::{Value, json};

use super::{
    Error, LAB_LABEL, Result, apply,
    cluster::{Cluster, list_all, with_retries},
    inventory::{self, Inventory},
    start,
};
use crate::lab::{
    loader::Bundle,
    model::{Lab, LearnerObjects, Stage},
};

/// One step of the reset plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Delete every object of these kinds in a lab-owned namespace, then the namespace.
    DeleteNamespace(String),
    /// Delete one lab-applied object (it still carries the lab label).
    DeleteObject {
        /// apiVersion.
        api_version: String,
        /// Kind.
        kind: String,
        /// Namespace.
        namespace: Option<String>,
        /// Name.
        name: String,
    },
    /// Restore a node label to its recorded value (`None`: remove it).
    RestoreNodeLabel {
        /// Node.
        node: String,
        /// Label key.
        key: String,
        /// Recorded value.
        value: Option<String>,
    },
    /// Restore a ConfigMap's recorded data (`None`: it did not exist, delete it).
    RestoreConfigMap {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
        /// Recorded data.
        data: Option<std::collections::BTreeMap<String, String>>,
    },
    /// Re-apply one stage (the first, or each up to `--to-stage`, in order).
    ApplyStage(String),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::DeleteNamespace(ns) => write!(f, "delete namespace {ns} and everything in it"),
            Step::DeleteObject { kind, namespace: Some(ns), name, .. } => {
                write!(f, "delete {kind} {ns}/{name}")
            }
            Step::DeleteObject { kind, name, .. } => write!(f, "delete {kind} {name}"),
            Step::RestoreNodeLabel { node, key, value: Some(v) } => {
                write!(f, "set label {key}={v} on node {node}")
            }
            Step::RestoreNodeLabel { node, key, value: None } => {
                write!(f, "remove label {key} from node {node}")
            }
            Step::RestoreConfigMap { namespace, name, data: Some(_) } => {
                write!(f, "restore ConfigMap {namespace}/{name} to its recorded data")
            }
            Step::RestoreConfigMap { namespace, name, data: None } => {
                write!(f, "delete ConfigMap {namespace}/{name} (it did not exist before the lab)")
            }
            Step::ApplyStage(stage) => write!(f, "apply stage {stage} again"),
        }
    }
}

/// The stages `reset --to-stage` re-applies: every stage up to and including `stage`, in order
/// (`None`: the first stage alone). An unknown stage is bad input naming the lab's stages.
pub fn stages_up_to<'a>(lab: &'a Lab, stage: Option<&str>) -> Result<Vec<&'a Stage>> {
    let Some(wanted) = stage else {
        return Ok(lab.stages.iter().take(1).collect());
    };
    match lab.stages.iter().position(|s| s.id.value == wanted) {
        Some(index) => Ok(lab.stages[..=index].iter().collect()),
        None => {
            let known: Vec<&str> = lab.stages.iter().map(|s| s.id.value.as_str()).collect();
            Err(Error::BadInput(format!(
                "lab {} has no stage {wanted:?} (stages, in order: {})",
                lab.id.value,
                known.join(", ")
            )))
        }
    }
}

/// The reset plan for `bundle` from its inventory (or only its declared namespaces when there is
/// none, e.g. after a crash before the first save), re-applying the first stage.
pub fn plan(bundle: &Bundle, inventory: Option<&Inventory>) -> Vec<Step> {
    plan_to(bundle, inventory, &bundle.lab.stages.iter().take(1).collect::<Vec<_>>())
}

/// As [`plan`], re-applying `stages` (from [`stages_up_to`]) instead of the first stage alone.
pub fn plan_to(bundle: &Bundle, inventory: Option<&Inventory>, stages: &[&Stage]) -> Vec<Step> {
    let lab = &bundle.lab;
    let owned: BTreeSet<&str> = lab.reset.namespaces.iter().map(String::as_str).collect();
    let mut steps = Vec::new();
    if let Some(inventory) = inventory {
        for object in inventory.applied.iter().rev() {
            let in_owned_namespace = object.namespace.as_deref().is_some_and(|ns| owned.contains(ns));
            let is_owned_namespace = object.kind == "Namespace" && owned.contains(object.name.as_str());
            let deleted_with_namespace = lab.reset.learner_objects == LearnerObjects::Delete
                && (in_owned_namespace || is_owned_namespace);
            let restored = object.kind == "ConfigMap"
                && inventory
                    .pre_images
                    .config_maps
                    .iter()
                    .any(|c| Some(&c.namespace) == object.namespace.as_ref() && c.name == object.name);
            if !deleted_with_namespace && !restored {
                steps.push(Step::DeleteObject {
                    api_version: object.api_version.clone(),
                    kind: object.kind.clone(),
                    namespace: object.namespace.clone(),
                    name: object.name.clone(),
                });
            }
        }
    }
    if lab.reset.learner_objects == LearnerObjects::Delete {
        steps.extend(lab.reset.namespaces.iter().map(|ns| Step::DeleteNamespace(ns.clone())));
    }
    if let Some(inventory) = inventory {
        for (node, labels) in &inventory.pre_images.node_labels {
            for (key, value) in labels {
                steps.push(Step::RestoreNodeLabel {
                    node: node.clone(),
                    key: key.clone(),
                    value: value.clone(),
                });
            }
        }
        for config_map in &inventory.pre_images.config_maps {
            steps.push(Step::RestoreConfigMap {
                namespace: config_map.namespace.clone(),
                name: config_map.name.clone(),
                data: config_map.data.clone(),
            });
        }
    }
    steps.extend(stages.iter().map(|stage| Step::ApplyStage(stage.id.value.clone())));
    steps
}

/// Loads the inventory and computes the plan, leaving out node labels that already hold their
/// recorded value.
pub async fn load_plan(cluster: &Cluster, bundle: &Bundle) -> Result<(Option<Inventory>, Vec<Step>)> {
    load_plan_to(cluster, bundle, None).await
}

/// As [`load_plan`], re-applying every stage up to and including `to_stage` (`None`: the first).
/// A stage with variants needs the variant recorded by a previous `start`.
pub async fn load_plan_to(
    cluster: &Cluster,
    bundle: &Bundle,
    to_stage: Option<&str>,
) -> Result<(Option<Inventory>, Vec<Step>)> {
    let stages = stages_up_to(&bundle.lab, to_stage)?;
    let inventory = inventory::load(&cluster.client, &bundle.lab.id.value).await?;
    let variant = inventory.as_ref().and_then(|i| i.variant.as_deref());
    if let Some(stage) = stages.iter().find(|s| !s.variants.is_empty())
        && variant.is_none()
    {
        let lab = &bundle.lab.id.value;
        return Err(Error::BadInput(format!(
            "stage {} of lab {lab} differs per variant and no variant is recorded on this cluster: \
             run `lab-runner start {lab} --variant V` once first",
            stage.id.value
        )));
    }
    let mut steps = plan_to(bundle, inventory.as_ref(), &stages);
    if steps.iter().any(|s| matches!(s, Step::RestoreNodeLabel { .. })) {
        let nodes: Api<Node> = Api::all(cluster.client.clone());
        let nodes = list_all(&nodes).await.map_err(|e| Error::api("listing nodes", &e))?.items;
        steps.retain(|step| match step {
            Step::RestoreNodeLabel { node, key, value } => {
                let current = nodes
                    .iter()
                    .find(|n| n.metadata.name.as_deref() == Some(node.as_str()))
                    .map(|n| n.metadata.labels.as_ref().and_then(|l| l.get(key)).cloned());
                // A node that is gone has nothing to restore; one whose label holds the
                // recorded value needs nothing.
                current.is_some_and(|current| &current != value)
            }
            _ => true,
        });
    }
    Ok((inventory, steps))
}

/// Carries out `steps`; returns a line per step done.
pub async fn execute(
    cluster: &Cluster,
    bundle: &Bundle,
    inventory: Option<Inventory>,
    steps: &[Step],
) -> Result<Vec<String>> {
    let lab = &bundle.lab.id.value;
    let mut done = Vec::new();
    let mut inventory = inventory.unwrap_or_else(|| Inventory::new(lab));
    let mut first_stage = true;
    for step in steps {
        match step {
            Step::DeleteObject { api_version, kind, namespace, name } => {
                let (api, _) =
                    apply::api_for(&cluster.client, api_version, kind, namespace.as_deref()).await?;
                // Only while it still carries this lab's label: a learner may have taken it over.
                let Some(object) = with_retries(|| api.get_opt(name))
                    .await
                    .map_err(|e| Error::api(format!("reading {kind} {name}"), &e))?
                else {
                    continue;
                };
                if object.metadata.labels.as_ref().and_then(|l| l.get(LAB_LABEL)) != Some(lab) {
                    done.push(format!("kept {kind} {name}: it no longer carries {LAB_LABEL}={lab}"));
                    continue;
                }
                delete(&api, name, &format!("{kind} {name}")).await?;
            }
            Step::DeleteNamespace(namespace) => delete_namespace(cluster, namespace).await?,
            Step::RestoreNodeLabel { node, key, value } => {
                let nodes: Api<Node> = Api::all(cluster.client.clone());
                let patch = json!({"metadata": {"labels": {key: value}}});
                match nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await {
                    Err(kube::Error::Api(status)) if status.code == 404 => continue,
                    other => {
                        other.map_err(|e| Error::api(format!("restoring label {key} on node {node}"), &e))?
                    }
                };
            }
            Step::RestoreConfigMap { namespace, name, data } => {
                let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), namespace);
                match data {
                    None => delete(&api, name, &format!("ConfigMap {namespace}/{name}")).await?,
                    Some(data) => {
                        // A JSON merge patch cannot drop keys the lab added: replace `data` whole.
                        let replace = json!([{"op": "add", "path": "/data", "value": data}]);
                        let replace: json_patch::Patch =
                            serde_json::from_value(replace).expect("a valid JSON patch");
                        match api.patch(name, &PatchParams::default(), &Patch::<Value>::Json(replace)).await {
                            Err(kube::Error::Api(status)) if status.code == 404 => {
                                let recreated: ConfigMap = serde_json::from_value(json!({
                                    "metadata": {"name": name, "namespace": namespace},
                                    "data": data,
                                }))
                                .expect("a valid ConfigMap");
                                api.create(&Default::default(), &recreated).await.map(|_| ())
                            }
                            other => other.map(|_| ()),
                        }
                        .map_err(|e| Error::api(format!("restoring ConfigMap {namespace}/{name}"), &e))?;
                    }
                }
            }
            Step::ApplyStage(stage_id) => {
                if first_stage {
                    // What the record held was deleted above; it starts again from these stages.
                    inventory.applied.clear();
                    inventory.facts.clear();
                    inventory.answers.clear();
                    inventory.attempts.clear();
                    inventory.stages.clear();
                    first_stage = false;
                }
                let stage =
                    bundle.lab.stages.iter().find(|s| &s.id.value == stage_id).expect("planned from the lab");
                let variant = inventory.variant.clone();
                let mut applied = 0;
                start::apply_stage(cluster, bundle, stage, variant.as_deref(), &mut inventory, &mut applied)
                    .await?;
            }
        }
        done.push(step.to_string());
    }
    Ok(done)
}

async fn delete<K>(api: &Api<K>, name: &str, shown: &str) -> Result<()>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.delete(name, &DeleteParams::background()).await {
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(Error::api(format!("deleting {shown}"), &e)),
        Ok(_) => Ok(()),
    }
}

/// Deletes every listable, deletable namespaced object in `namespace` (found through discovery),
/// then the namespace, and waits up to a minute for it to go (finalizers are reported).
async fn delete_namespace(cluster: &Cluster, namespace: &str) -> Result<()> {
    let discovery = Discovery::new(cluster.client.clone())
        .run()
        .await
        .map_err(|e| Error::api("discovering the served kinds", &e))?;
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            if capabilities.scope != Scope::Namespaced
                || !capabilities.supports_operation(verbs::LIST)
                || !capabilities.supports_operation(verbs::DELETE)
                || resource.kind == "Event"
            {
                continue;
            }
            let api: Api<DynamicObject> = Api::namespaced_with(cluster.client.clone(), namespace, &resource);
            let objects = match list_all(&api).await {
                Ok(list) => list.items,
                Err(kube::Error::Api(status)) if status.code == 404 || status.code == 405 => continue,
                Err(e) => return Err(Error::api(format!("listing {} in {namespace}", resource.plural), &e)),
            };
            for object in objects {
                let name = object.metadata.name.clone().unwrap_or_default();
                delete(&api, &name, &format!("{} {namespace}/{name}", resource.kind)).await?;
            }
        }
    }
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(cluster.client.clone());
    delete(&namespaces, namespace, &format!("namespace {namespace}")).await?;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let found = with_retries(|| namespaces.get_opt(namespace))
            .await
            .map_err(|e| Error::api(format!("reading namespace {namespace}"), &e))?;
        let Some(found) = found else { return Ok(()) };
        if std::time::Instant::now() >= deadline {
            let finalizers = found.spec.and_then(|s| s.finalizers).unwrap_or_default().join(", ");
            return Err(Error::TimedOut {
                what: format!("namespace {namespace} to be deleted"),
                seconds: 60,
                last_seen: format!("still there, finalizers [{finalizers}]"),
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
