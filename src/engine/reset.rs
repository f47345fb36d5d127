//! `reset`: observe what the lab's inventory names, plan with [`reset_plan`](super::reset_plan)
//! and carry the plan out: delete what the lab and its learners created, restore pre-images,
//! then re-apply the first stage (or every stage up to `--to-stage`) or, with `--remove`, delete
//! the inventory. Never touches objects the lab does not own.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node};
use kube::{
    api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, Preconditions},
    discovery::{Discovery, Scope, verbs},
};
use serde_json::{Value, json};

use super::{
    Error, Result, apply,
    cluster::{Cluster, list_all, with_retries},
    inventory::{self, Inventory, Origin, PreImage, Progress},
    reset_plan::{self, Action, Mode, ObjectId, Observed, ObservedObject},
    start,
};
use crate::{
    lab::{
        loader::Bundle,
        model::{Lab, Stage},
    },
    msg,
    session::Lang,
    tr,
};

/// One line of what [`execute`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    /// The action was carried out.
    Carried(Action),
    /// The object to delete has another uid than when planned: left alone.
    KeptChangedHands(ObjectId),
}

impl Done {
    /// The line in `lang`.
    pub fn render(&self, lang: Lang) -> String {
        match self {
            Done::Carried(action) => action.render(lang),
            Done::KeptChangedHands(object) => {
                tr!(lang, "reset-kept-changed-hands", object = object.to_string())
            }
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
            Err(Error::BadInput(msg!(
                "error-unknown-stage",
                lab = &lab.id.value,
                stage = format!("{wanted:?}"),
                known = crate::i18n::list(&known)
            )))
        }
    }
}

/// Loads the inventory, observes the cluster and plans a reset to the first stage.
pub async fn load_plan(cluster: &Cluster, bundle: &Bundle) -> Result<(Option<Inventory>, Vec<Action>)> {
    load_plan_to(cluster, bundle, None).await
}

/// As [`load_plan`], re-applying every stage up to and including `to_stage` (`None`: the first).
/// A stage with variants needs the variant recorded by a previous `start`.
pub async fn load_plan_to(
    cluster: &Cluster,
    bundle: &Bundle,
    to_stage: Option<&str>,
) -> Result<(Option<Inventory>, Vec<Action>)> {
    let stages = stages_up_to(&bundle.lab, to_stage)?;
    let inventory = inventory::load(&cluster.client, &bundle.lab.id.value).await?;
    let variant = inventory.as_ref().and_then(|i| i.variant_in(&bundle.lab));
    if let Some(stage) = stages.iter().find(|s| !s.variants.is_empty())
        && variant.is_none()
    {
        let lab = &bundle.lab.id.value;
        return Err(Error::BadInput(msg!("reset-needs-variant", stage = &stage.id.value, lab = lab)));
    }
    let mode = Mode::Stages(stages.iter().map(|s| s.id.value.clone()).collect());
    let observed = observe(cluster, &bundle.lab, inventory.as_ref()).await?;
    let actions = reset_plan::plan(&bundle.lab, inventory.as_ref(), &observed, &mode);
    Ok((inventory, actions))
}

/// Loads the inventory, observes the cluster and plans `reset --remove`.
pub async fn load_remove_plan(
    cluster: &Cluster,
    bundle: &Bundle,
) -> Result<(Option<Inventory>, Vec<Action>)> {
    let inventory = inventory::load(&cluster.client, &bundle.lab.id.value).await?;
    let observed = observe(cluster, &bundle.lab, inventory.as_ref()).await?;
    let mut actions = reset_plan::plan(&bundle.lab, inventory.as_ref(), &observed, &Mode::Remove);
    if inventory.is_none() {
        // Never started here: there is no inventory to delete.
        actions.retain(|a| !matches!(a, Action::DeleteInventory { .. }));
    }
    Ok((inventory, actions))
}

/// Observes what the planner needs: the recorded objects, everything in the working
/// namespaces, the custom resources of the CRDs the lab created, node labels and the other labs'
/// inventories.
pub async fn observe(cluster: &Cluster, lab: &Lab, inventory: Option<&Inventory>) -> Result<Observed> {
    let client = &cluster.client;
    let mut observed = Observed::default();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), inventory::NAMESPACE);
    let own_name = inventory::name_for(&lab.id.value);
    let held = list_all(&config_maps)
        .await
        .map_err(|e| {
            Error::api(msg!("action-list-in", plural = "ConfigMaps", namespace = inventory::NAMESPACE), &e)
        })?
        .items;
    for config_map in held {
        let name = config_map.metadata.name.clone().unwrap_or_default();
        if name == own_name || name == "kube-root-ca.crt" {
            continue;
        }
        observed.inventory_namespace_shared = true;
        if name.starts_with("lab-runner-inventory-") {
            observed.other_labs.push(Inventory::from_data(&config_map.data.unwrap_or_default())?);
        }
    }
    let nodes: Api<Node> = Api::all(client.clone());
    for node in list_all(&nodes).await.map_err(|e| Error::api(msg!("action-list-nodes"), &e))?.items {
        observed
            .nodes
            .insert(node.metadata.name.unwrap_or_default(), node.metadata.labels.unwrap_or_default());
    }
    let Some(inventory) = inventory else { return Ok(observed) };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut push = |observed: &mut Observed, object: ObservedObject| {
        if seen.insert(object.uid.clone()) {
            observed.objects.push(object);
        }
    };
    for record in &inventory.applied {
        // A kind no longer served (its CRD is gone) has no objects left.
        let Ok((api, resource)) =
            apply::api_for(client, &record.api_version, &record.kind, record.namespace.as_deref()).await
        else {
            continue;
        };
        let found = with_retries(|| api.get_opt(&record.name))
            .await
            .map_err(|e| Error::api(msg!("action-read", object = record.shown()), &e))?;
        if let Some(found) = found {
            push(&mut observed, observed_object(found, &resource));
        }
    }
    let discovery =
        Discovery::new(client.clone()).run().await.map_err(|e| Error::api(msg!("action-discover"), &e))?;
    let namespaces = reset_plan::working_namespaces(lab, inventory);
    let created_crds: Vec<(String, String)> = observed
        .objects
        .iter()
        .filter(|o| o.kind == "CustomResourceDefinition")
        .filter(|o| inventory.applied.iter().any(|r| r.uid == o.uid && r.origin == Origin::Created))
        .filter_map(|o| reset_plan::crd_group_kind(&o.object))
        .collect();
    for group in discovery.groups() {
        for (resource, capabilities) in group.recommended_resources() {
            if capabilities.scope != Scope::Namespaced
                || !capabilities.supports_operation(verbs::LIST)
                || resource.kind == "Event"
            {
                continue;
            }
            let custom = created_crds.iter().any(|(g, k)| *g == resource.group && *k == resource.kind);
            let apis: Vec<(String, Api<DynamicObject>)> = if custom {
                vec![("every namespace".into(), Api::all_with(client.clone(), &resource))]
            } else {
                namespaces
                    .iter()
                    .map(|ns| (ns.clone(), Api::namespaced_with(client.clone(), ns, &resource)))
                    .collect()
            };
            for (place, api) in apis {
                let objects = match list_all(&api).await {
                    Ok(list) => list.items,
                    Err(kube::Error::Api(status)) if status.code == 404 || status.code == 405 => continue,
                    Err(e) => {
                        return Err(Error::api(
                            msg!("action-list-in", plural = &resource.plural, namespace = place.to_string()),
                            &e,
                        ));
                    }
                };
                for object in objects {
                    push(&mut observed, observed_object(object, &resource));
                }
            }
        }
    }
    Ok(observed)
}

/// A served object as the planner sees it (list items carry no apiVersion/kind of their own).
fn observed_object(object: DynamicObject, resource: &kube::api::ApiResource) -> ObservedObject {
    let mut value = serde_json::to_value(&object).unwrap_or(Value::Null);
    value["apiVersion"] = json!(resource.api_version);
    value["kind"] = json!(resource.kind);
    ObservedObject::from_value(value)
}

/// Carries out `actions`; returns what was done, action by action.
pub async fn execute(
    cluster: &Cluster,
    bundle: &Bundle,
    inventory: Option<Inventory>,
    actions: &[Action],
    lang: Lang,
) -> Result<Vec<Done>> {
    let lab = &bundle.lab.id.value;
    let mut done = Vec::new();
    let mut inventory = inventory.unwrap_or_else(|| Inventory::new(lab));
    let deleted: BTreeSet<&str> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Delete { object, .. } => Some(object.uid.as_str()),
            _ => None,
        })
        .collect();
    let mut first_stage = true;
    for action in actions {
        match action {
            Action::Delete { object, .. } => {
                if !delete_object(cluster, object).await? {
                    done.push(Done::KeptChangedHands(object.clone()));
                    continue;
                }
            }
            Action::Restore { object, pre_image } => restore(cluster, object, pre_image).await?,
            Action::Keep { .. } => continue,
            Action::HandOver { object, lab: heir } => hand_over(cluster, object, heir).await?,
            Action::RestoreNodeLabels { node, labels } => {
                let nodes: Api<Node> = Api::all(cluster.client.clone());
                let patch = json!({"metadata": {"labels": labels}});
                match nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await {
                    Err(kube::Error::Api(status)) if status.code == 404 => continue,
                    other => other.map_err(|e| {
                        Error::api(msg!("action-restore-node-labels", node = node.as_str()), &e)
                    })?,
                };
            }
            Action::RestoreConfigMap { namespace, name, data } => {
                restore_config_map(cluster, namespace, name, data.as_ref()).await?
            }
            Action::ApplyStage(stage_id) => {
                if first_stage {
                    // What the lab created was deleted above; the stages record it anew. The
                    // pre-existing objects' records (and pre-images) stay.
                    inventory
                        .applied
                        .retain(|o| !(o.origin == Origin::Created && deleted.contains(o.uid.as_str())));
                    inventory.facts.clear();
                    inventory.answers.clear();
                    inventory.attempts.clear();
                    inventory.hints.clear();
                    inventory.stages.clear();
                    inventory.progress = Progress::Incomplete;
                    first_stage = false;
                }
                let stage =
                    bundle.lab.stages.iter().find(|s| &s.id.value == stage_id).expect("planned from the lab");
                let variant = inventory.variant_in(&bundle.lab);
                let mut applied = 0;
                start::apply_stage(
                    cluster,
                    bundle,
                    stage,
                    variant.as_deref(),
                    &mut inventory,
                    &mut applied,
                    lang,
                )
                .await?;
            }
            Action::DeleteInventory { lab, with_namespace } => {
                let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), inventory::NAMESPACE);
                let name = inventory::name_for(lab);
                delete(&api, &name, &format!("ConfigMap {}/{name}", inventory::NAMESPACE), None).await?;
                if *with_namespace {
                    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
                    delete(&namespaces, inventory::NAMESPACE, "namespace lab-runner", None).await?;
                    wait_gone(&namespaces, inventory::NAMESPACE, "namespace lab-runner").await?;
                }
            }
        }
        done.push(Done::Carried(action.clone()));
    }
    if !first_stage {
        // The stages asked for are applied and their waits passed: that state is complete.
        inventory.progress = Progress::Complete;
        inventory::save(&cluster.client, &inventory).await?;
    }
    Ok(done)
}

/// Deletes `object` if it still has the uid it was planned with; `false` when it changed hands.
/// Namespaces and CRDs are awaited until gone, so what follows sees them gone.
async fn delete_object(cluster: &Cluster, object: &ObjectId) -> Result<bool> {
    let Ok((api, _)) =
        apply::api_for(&cluster.client, &object.api_version, &object.kind, object.namespace.as_deref()).await
    else {
        // Its kind is no longer served: it went with its CRD.
        return Ok(true);
    };
    let Some(found) = with_retries(|| api.get_opt(&object.name))
        .await
        .map_err(|e| Error::api(msg!("action-read", object = object.to_string()), &e))?
    else {
        return Ok(true);
    };
    if found.metadata.uid.as_deref() != Some(object.uid.as_str()) {
        return Ok(false);
    }
    delete(&api, &object.name, &object.to_string(), Some(&object.uid)).await?;
    if matches!(object.kind.as_str(), "Namespace" | "CustomResourceDefinition") {
        wait_gone(&api, &object.name, &object.to_string()).await?;
    }
    Ok(true)
}

/// Puts back the labels, annotations and top-level fields of an adopted object.
async fn restore(cluster: &Cluster, object: &ObjectId, pre_image: &PreImage) -> Result<()> {
    let (api, _) =
        apply::api_for(&cluster.client, &object.api_version, &object.kind, object.namespace.as_deref())
            .await?;
    let shown = msg!("action-restore", object = object.to_string());
    let metadata = json!({"metadata": {"labels": pre_image.labels, "annotations": pre_image.annotations}});
    api.patch(&object.name, &PatchParams::default(), &Patch::Merge(&metadata))
        .await
        .map_err(|e| Error::api(shown.clone(), &e))?;
    if pre_image.fields.is_empty() {
        return Ok(());
    }
    // A merge patch merges into maps: each recorded field goes back whole through a JSON patch.
    let current = api.get(&object.name).await.map_err(|e| Error::api(shown.clone(), &e))?;
    let current = serde_json::to_value(&current).unwrap_or(Value::Null);
    let operations: Vec<Value> = pre_image
        .fields
        .iter()
        .filter_map(|(field, value)| match value {
            Some(value) => Some(json!({"op": "add", "path": format!("/{field}"), "value": value})),
            None if current.get(field).is_some() => {
                Some(json!({"op": "remove", "path": format!("/{field}")}))
            }
            None => None,
        })
        .collect();
    if operations.is_empty() {
        return Ok(());
    }
    let patch: json_patch::Patch =
        serde_json::from_value(Value::Array(operations)).expect("a valid JSON patch");
    api.patch(&object.name, &PatchParams::default(), &Patch::<Value>::Json(patch))
        .await
        .map_err(|e| Error::api(shown.clone(), &e))?;
    Ok(())
}

/// Records in `heir`'s inventory that it created `object`, so the last lab to leave deletes it.
async fn hand_over(cluster: &Cluster, object: &ObjectId, heir: &str) -> Result<()> {
    let Some(mut other) = inventory::load(&cluster.client, heir).await? else { return Ok(()) };
    match other.applied.iter_mut().find(|o| {
        o.api_version == object.api_version
            && o.kind == object.kind
            && o.namespace == object.namespace
            && o.name == object.name
    }) {
        Some(record) => {
            record.uid = object.uid.clone();
            record.origin = Origin::Created;
        }
        None => other.applied.insert(
            0,
            inventory::AppliedObject {
                api_version: object.api_version.clone(),
                kind: object.kind.clone(),
                namespace: object.namespace.clone(),
                name: object.name.clone(),
                stage: String::new(),
                uid: object.uid.clone(),
                origin: Origin::Created,
            },
        ),
    }
    inventory::save(&cluster.client, &other).await
}

async fn restore_config_map(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
    data: Option<&BTreeMap<String, String>>,
) -> Result<()> {
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), namespace);
    let Some(data) = data else {
        return delete(&api, name, &format!("ConfigMap {namespace}/{name}"), None).await;
    };
    // A JSON merge patch cannot drop keys the lab added: replace `data` whole.
    let replace = json!([{"op": "add", "path": "/data", "value": data}]);
    let replace: json_patch::Patch = serde_json::from_value(replace).expect("a valid JSON patch");
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
    .map_err(|e| Error::api(msg!("action-restore-configmap", object = format!("{namespace}/{name}")), &e))
}

async fn delete<K>(api: &Api<K>, name: &str, shown: &str, uid: Option<&str>) -> Result<()>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let mut params = DeleteParams::background();
    if let Some(uid) = uid {
        params.preconditions = Some(Preconditions { uid: Some(uid.to_string()), resource_version: None });
    }
    match api.delete(name, &params).await {
        Err(kube::Error::Api(status)) if status.code == 404 => Ok(()),
        Err(e) => Err(Error::api(msg!("action-delete", object = shown), &e)),
        Ok(_) => Ok(()),
    }
}

/// Waits up to a minute for `name` to be gone (a Namespace's content goes first; finalizers are
/// reported).
async fn wait_gone<K>(api: &Api<K>, name: &str, shown: &str) -> Result<()>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug + serde::Serialize,
{
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let found = with_retries(|| api.get_opt(name))
            .await
            .map_err(|e| Error::api(msg!("action-read", object = shown), &e))?;
        let Some(found) = found else { return Ok(()) };
        if std::time::Instant::now() >= deadline {
            let value = serde_json::to_value(&found).unwrap_or(Value::Null);
            let finalizers: Vec<String> = ["/metadata/finalizers", "/spec/finalizers"]
                .iter()
                .filter_map(|p| value.pointer(p).and_then(Value::as_array))
                .flatten()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect();
            return Err(Error::TimedOut {
                what: msg!("reset-wait-deleted", object = shown),
                seconds: 60,
                last_seen: msg!("reset-still-there", finalizers = crate::i18n::list(&finalizers)),
            });
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
