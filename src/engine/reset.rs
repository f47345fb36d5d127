//! `reset`: observe what the lab's inventory names, plan with [`reset_plan`](super::reset_plan)
//! and carry the plan out: delete what the lab and its learners created and wait until it is gone
//! (grace periods honoured, dependents collected), restore pre-images and nodes, then re-apply
//! every stage `start` applies — the variant's breakage included, fresh facts, no answers — (or
//! the stages up to `--to-stage`) or, with `--remove`, delete the inventory. Never touches objects
//! the lab does not own.

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
    inventory::{self, Inventory, NodeState, Origin, PreImage, Progress},
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

/// What `reset` was asked.
#[derive(Debug, Clone, Default)]
pub struct ResetOptions {
    /// `--to-stage`: stop after this stage (`None`: every stage, as `start`).
    pub to_stage: Option<String>,
    /// `--variant`: start again with this variant instead of the one recorded.
    pub variant: Option<String>,
    /// `--seed`: pick the variant from this seed, as `start --seed`.
    pub seed: Option<u64>,
}

/// How long `reset` waits for what it deleted to be gone before it applies anything again
/// (pods' grace periods, dependents the garbage collector deletes).
const DELETION_TIMEOUT: Duration = Duration::from_secs(300);

/// The stages `reset` re-applies: every stage up to and including `stage`, in order (`None`:
/// every stage, the state `start` leaves). An unknown stage is bad input naming the lab's stages.
pub fn stages_up_to<'a>(lab: &'a Lab, stage: Option<&str>) -> Result<Vec<&'a Stage>> {
    let Some(wanted) = stage else {
        return Ok(lab.stages.iter().collect());
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

/// A planned reset: the inventory it starts from, its actions, and the variant it starts again.
#[derive(Debug)]
pub struct Planned {
    /// The lab's inventory (`None`: never started here).
    pub inventory: Option<Inventory>,
    /// The steps, in order.
    pub actions: Vec<Action>,
    /// The variant the re-applied stages use: the one recorded unless `--variant`/`--seed` says
    /// otherwise (`None`: the lab has no variants).
    pub variant: Option<String>,
    /// What the garbage collector deletes with what the actions delete: waited for too.
    pub dependents: Vec<ObjectId>,
}

/// Loads the inventory, observes the cluster and plans a reset to the state `start` leaves, or
/// to the stages up to `--to-stage`.
pub async fn load_plan(cluster: &Cluster, bundle: &Bundle) -> Result<Planned> {
    load_plan_to(cluster, bundle, &ResetOptions::default()).await
}

/// As [`load_plan`], with what `reset` was asked.
pub async fn load_plan_to(cluster: &Cluster, bundle: &Bundle, options: &ResetOptions) -> Result<Planned> {
    let lab = &bundle.lab;
    let stages = stages_up_to(lab, options.to_stage.as_deref())?;
    let inventory = inventory::load(&cluster.client, &lab.id.value).await?;
    let recorded = inventory.as_ref().and_then(|i| i.variant_in(lab));
    let asked = start::StartOptions {
        variant: options.variant.clone(),
        seed: options.seed,
        yes: true,
        ..start::StartOptions::default()
    };
    let variant = match (&recorded, &options.variant, options.seed) {
        // The same variant unless told otherwise.
        (Some(recorded), None, None) => Some(recorded.clone()),
        _ => start::choose_variant(lab, &asked, None)?,
    };
    let mode = Mode::Stages(stages.iter().map(|s| s.id.value.clone()).collect());
    let observed = observe(cluster, lab, inventory.as_ref()).await?;
    let actions = reset_plan::plan(lab, inventory.as_ref(), &observed, &mode);
    let dependents = reset_plan::dependents(&observed, &actions);
    Ok(Planned { inventory, actions, variant, dependents })
}

/// Loads the inventory, observes the cluster and plans `reset --remove`.
pub async fn load_remove_plan(cluster: &Cluster, bundle: &Bundle) -> Result<Planned> {
    let inventory = inventory::load(&cluster.client, &bundle.lab.id.value).await?;
    let observed = observe(cluster, &bundle.lab, inventory.as_ref()).await?;
    let mut actions = reset_plan::plan(&bundle.lab, inventory.as_ref(), &observed, &Mode::Remove);
    if inventory.is_none() {
        // Never started here: there is no inventory to delete.
        actions.retain(|a| !matches!(a, Action::DeleteInventory { .. }));
    }
    let dependents = reset_plan::dependents(&observed, &actions);
    Ok(Planned { inventory, actions, variant: None, dependents })
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
        let own_entry = inventory::is_learner_entry(&config_map)
            && config_map.metadata.labels.as_ref().and_then(|l| l.get(super::LAB_LABEL))
                == Some(&lab.id.value);
        if name == own_name || name == "kube-root-ca.crt" || own_entry {
            continue;
        }
        observed.inventory_namespace_shared = true;
        if name.starts_with("lab-runner-inventory-") {
            let data = config_map.data.unwrap_or_default();
            observed.other_labs.push(Inventory::from_data(&data, inventory::KeyState::NotRead)?);
        }
    }
    let nodes: Api<Node> = Api::all(client.clone());
    for node in list_all(&nodes).await.map_err(|e| Error::api(msg!("action-list-nodes"), &e))?.items {
        observed.nodes.insert(node.metadata.name.clone().unwrap_or_default(), NodeState::of(&node));
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

/// Carries out `planned`; returns what was done, action by action. What it deletes is gone
/// (grace periods honoured, dependents collected) before anything is restored or applied again.
pub async fn execute(cluster: &Cluster, bundle: &Bundle, planned: Planned, lang: Lang) -> Result<Vec<Done>> {
    let lab = &bundle.lab.id.value;
    let Planned { inventory, actions, variant, dependents } = planned;
    let mut done = Vec::new();
    let mut inventory = inventory.unwrap_or_else(|| Inventory::new(lab));
    let deleted: BTreeSet<&str> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Delete { object, .. } => Some(object.uid.as_str()),
            _ => None,
        })
        .collect();
    let mut pending: Vec<ObjectId> = Vec::new();
    let mut dependents = Some(dependents);
    let mut first_stage = true;
    for action in &actions {
        if !matches!(action, Action::Delete { .. } | Action::Keep { .. }) && !pending.is_empty() {
            // A quota still charging a terminating pod, or a pod of the lab's name not gone yet,
            // would refuse what comes next.
            let dependents = dependents.take().unwrap_or_default();
            wait_deleted(cluster, std::mem::take(&mut pending), dependents).await?;
        }
        match action {
            Action::Delete { object, .. } => {
                if !delete_object(cluster, object).await? {
                    done.push(Done::KeptChangedHands(object.clone()));
                    continue;
                }
                pending.push(object.clone());
            }
            Action::Restore { object, pre_image } => restore(cluster, object, pre_image).await?,
            Action::Keep { .. } => continue,
            Action::HandOver { object, lab: heir } => hand_over(cluster, object, heir).await?,
            Action::RestoreNodeLabels { node, labels } => restore_node(cluster, node, labels, None).await?,
            Action::RestoreNode { node, labels, resources } => {
                restore_node(cluster, node, labels, Some(resources)).await?
            }
            Action::RestoreConfigMap { namespace, name, data } => {
                restore_config_map(cluster, namespace, name, data.as_ref()).await?
            }
            Action::ApplyStage(stage_id) => {
                if first_stage {
                    begin_again(cluster, bundle, &mut inventory, &deleted, variant.as_deref()).await?;
                    first_stage = false;
                }
                let stage =
                    bundle.lab.stages.iter().find(|s| &s.id.value == stage_id).expect("planned from the lab");
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
                inventory::delete_key(&cluster.client, lab).await?;
                inventory::delete_learner_entries(&cluster.client, lab).await?;
                if *with_namespace {
                    let namespaces: Api<Namespace> = Api::all(cluster.client.clone());
                    delete(&namespaces, inventory::NAMESPACE, "namespace lab-runner", None).await?;
                    wait_gone(&namespaces, inventory::NAMESPACE, "namespace lab-runner").await?;
                }
            }
        }
        done.push(Done::Carried(action.clone()));
    }
    if !pending.is_empty() {
        wait_deleted(cluster, pending, dependents.take().unwrap_or_default()).await?;
    }
    if !first_stage {
        // The stages asked for are applied and their waits passed: that state is complete.
        inventory.progress = Progress::Complete;
        inventory::save(&cluster.client, &inventory).await?;
    }
    Ok(done)
}

/// Before the first stage is applied again: what the lab created was deleted, and the stages
/// record it anew (the pre-existing objects' records and pre-images stay); no answers, no facts
/// (the waits capture them again, and the nodes a rollout covers are captured again), the
/// variant asked for.
async fn begin_again(
    cluster: &Cluster,
    bundle: &Bundle,
    inventory: &mut Inventory,
    deleted: &BTreeSet<&str>,
    variant: Option<&str>,
) -> Result<()> {
    let lab = &bundle.lab;
    inventory.applied.retain(|o| !(o.origin == Origin::Created && deleted.contains(o.uid.as_str())));
    inventory.facts.clear();
    inventory.answers.clear();
    inventory.attempts.clear();
    inventory.hints.clear();
    inventory::delete_learner_entries(&cluster.client, &lab.id.value).await?;
    inventory.start_nodes.clear();
    if inventory.key.is_none() {
        inventory.key = Some(inventory::ensure_key(&cluster.client, &lab.id.value).await?);
    }
    inventory.set_variant(variant)?;
    inventory.stages.clear();
    inventory.progress = Progress::Incomplete;
    // A reset of a lab never started here starts it: what `start` records first, it records.
    start::record_present_at_start(cluster, bundle, inventory).await?;
    start::record_pre_images(cluster, lab, inventory).await?;
    super::captured::capture(cluster, lab, inventory).await?;
    inventory::save(&cluster.client, inventory).await
}

/// Waits until every object of `deleted` is gone (or replaced by another of its name), and every
/// one of `dependents` unless one of its owners is still there (an owner that changed hands was
/// not deleted), at most [`DELETION_TIMEOUT`]: a pod is gone once its grace period ended, a
/// dependent once the garbage collector deleted it.
async fn wait_deleted(cluster: &Cluster, deleted: Vec<ObjectId>, dependents: Vec<ObjectId>) -> Result<()> {
    let deadline = std::time::Instant::now() + DELETION_TIMEOUT;
    let all = deleted.into_iter().map(|o| (o, false)).chain(dependents.into_iter().map(|o| (o, true)));
    for (object, dependent) in all {
        let Ok((api, _)) =
            apply::api_for(&cluster.client, &object.api_version, &object.kind, object.namespace.as_deref())
                .await
        else {
            continue;
        };
        loop {
            let found = with_retries(|| api.get_opt(&object.name))
                .await
                .map_err(|e| Error::api(msg!("action-read", object = object.to_string()), &e))?;
            let Some(found) = found.filter(|f| f.metadata.uid.as_deref() == Some(object.uid.as_str())) else {
                break;
            };
            if dependent && owner_remains(cluster, &found).await? {
                break;
            }
            if std::time::Instant::now() >= deadline {
                let finalizers = found.metadata.finalizers.unwrap_or_default().join(", ");
                return Err(Error::TimedOut {
                    what: msg!("reset-wait-deleted", object = object.to_string()),
                    seconds: DELETION_TIMEOUT.as_secs(),
                    last_seen: msg!("reset-still-there", finalizers = finalizers),
                });
            }
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    Ok(())
}

/// Whether one of `dependent`'s owners still exists (the same uid): the garbage collector
/// leaves it then (pkg/controller/garbagecollector/garbagecollector.go `attemptToDeleteItem`).
async fn owner_remains(cluster: &Cluster, dependent: &kube::api::DynamicObject) -> Result<bool> {
    let namespace = dependent.metadata.namespace.as_deref();
    for owner in dependent.metadata.owner_references.iter().flatten() {
        let Ok((api, _)) = apply::api_for(&cluster.client, &owner.api_version, &owner.kind, namespace).await
        else {
            continue;
        };
        let shown = format!("{} {}", owner.kind, owner.name);
        let found = with_retries(|| api.get_opt(&owner.name))
            .await
            .map_err(|e| Error::api(msg!("action-read", object = shown), &e))?;
        if found.is_some_and(|f| f.metadata.uid.as_deref() == Some(owner.uid.as_str())) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Puts a node's labels (and, for a full record, its advertised resources through the status
/// subresource) back: a merge patch, `null` removing what was not there.
async fn restore_node(
    cluster: &Cluster,
    node: &str,
    labels: &BTreeMap<String, Option<String>>,
    resources: Option<&BTreeMap<String, BTreeMap<String, Option<String>>>>,
) -> Result<()> {
    let nodes: Api<Node> = Api::all(cluster.client.clone());
    let failed = |e| Error::api(msg!("action-restore-node-labels", node = node), &e);
    if !labels.is_empty() {
        let patch = json!({"metadata": {"labels": labels}});
        match nodes.patch(node, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            other => other.map_err(failed)?,
        };
    }
    if let Some(resources) = resources.filter(|r| !r.is_empty()) {
        let patch = json!({"status": resources});
        match nodes.patch_status(node, &PatchParams::default(), &Patch::Merge(&patch)).await {
            Err(kube::Error::Api(status)) if status.code == 404 => return Ok(()),
            other => other.map_err(failed)?,
        };
    }
    Ok(())
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
    let container = matches!(object.kind.as_str(), "Namespace" | "CustomResourceDefinition");
    delete(&api, &object.name, &object.to_string(), Some(&object.uid)).await?;
    if container {
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
