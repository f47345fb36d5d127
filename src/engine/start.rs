//! `start`: preflight, ownership (who made each object, collisions refused), stage-by-stage server-side apply, waits (including the confirmation that the variant's breakage reproduced), the inventory and the briefing.

use std::{
    collections::BTreeSet,
    time::{Duration, Instant},
};

use k8s_openapi::api::{
    apps::v1::DaemonSet,
    core::v1::{ConfigMap, Node, Pod},
};
use kube::{
    api::{Api, DynamicObject},
    discovery::{Discovery, Scope, verbs},
};
use serde_json::Value;

use super::{
    Error, Result, apply,
    cluster::{Cluster, list_all, with_retries},
    inventory::{self, AppliedObject, ConfigMapPreImage, Inventory, NodeState, Origin, PreImage, Progress},
    waits,
};
use crate::{
    grade::builtin::pod_state,
    i18n::{Arg, Message},
    k8s::{
        condition::object_condition_true,
        daemon,
        quantity::Quantity,
        selector::{LabelSelector, labels_of},
    },
    lab::{
        loader::Bundle,
        model::{Lab, ObjectRef, Stage, Symptom, Wait, WaitFor},
    },
    msg,
    session::Lang,
    tr,
};

/// What `start` was asked.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// `--variant`.
    pub variant: Option<String>,
    /// `--seed`: picks the variant reproducibly when none is given.
    pub seed: Option<u64>,
    /// `--yes`: replace another variant's applied stage without asking.
    pub yes: bool,
    /// A hosted class: the learners' credentials cannot write the lab's records, so their quiz
    /// answers are kept as entries of their own (see `inventory`).
    pub hosted: bool,
}

/// What `start` did.
#[derive(Debug, Clone)]
pub struct Started {
    /// The variant started.
    pub variant: Option<String>,
    /// Objects applied.
    pub applied: usize,
    /// Names of the facts captured.
    pub facts: Vec<String>,
    /// The briefing in the session language.
    pub briefing: String,
}

/// Picks the variant: `--variant`, else the one a previous start recorded, else from the seed.
pub fn choose_variant(lab: &Lab, options: &StartOptions, recorded: Option<&str>) -> Result<Option<String>> {
    if let Some(wanted) = &options.variant {
        if lab.variant(wanted).is_none() {
            let known: Vec<&str> = lab.variants.iter().map(|v| v.id.value.as_str()).collect();
            return Err(Error::BadInput(msg!(
                "error-unknown-variant",
                lab = &lab.id.value,
                variant = format!("{wanted:?}"),
                known = crate::i18n::list(&known)
            )));
        }
        return Ok(Some(wanted.clone()));
    }
    if options.seed.is_none()
        && let Some(recorded) = recorded
    {
        return Ok(Some(recorded.to_string()));
    }
    let seed = options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
    });
    Ok(lab.variant_for_seed(seed).map(|v| v.id.value.clone()))
}

/// Checks that the cluster has the nodes the lab needs, before anything is changed.
pub async fn preflight(cluster: &Cluster, lab: &Lab) -> Result<()> {
    if lab.requires.nodes.is_empty() {
        return Ok(());
    }
    // Through the observer's tolerant LIST: a malformed foreign node is skipped, not fatal.
    let nodes = super::observe::list_nodes(&cluster.client)
        .await
        .map_err(|e| Error::api(msg!("action-list-nodes-preflight"), &e))?;
    for requirement in &lab.requires.nodes {
        let selector = requirement.selector.to_k8s();
        let matching: Vec<&Node> = nodes
            .iter()
            .filter(|n| selector.matches(&labels_of(&serde_json::to_value(n).unwrap_or(Value::Null))))
            .collect();
        let advertising = matching
            .iter()
            .filter(|node| {
                requirement.advertise.iter().all(|resource| {
                    node.status
                        .as_ref()
                        .and_then(|s| s.allocatable.as_ref())
                        .and_then(|a| a.get(resource))
                        .and_then(|q| Quantity::from_json(&Value::String(q.0.clone())).ok())
                        .is_some_and(|q| q > Quantity::from_json(&Value::from(0)).expect("0 is a quantity"))
                })
            })
            .count();
        if advertising < requirement.min as usize {
            let wanted = serde_json::to_string(&requirement.selector).unwrap_or_default();
            let description = Arg::EachLanguage {
                en: requirement.description.en.trim().to_string(),
                ja: requirement.description.get(Lang::Ja).trim().to_string(),
            };
            let (min, total) = (requirement.min, nodes.len());
            let reason = if requirement.advertise.is_empty() {
                msg!(
                    "preflight-nodes",
                    min = min,
                    selector = wanted,
                    description = description,
                    found = advertising,
                    total = total
                )
            } else {
                msg!(
                    "preflight-nodes-advertising",
                    min = min,
                    selector = wanted,
                    resources = crate::i18n::list(&requirement.advertise),
                    description = description,
                    found = advertising,
                    total = total
                )
            };
            return Err(Error::Preflight { lab: lab.id.value.clone(), reason });
        }
    }
    Ok(())
}

/// Asks the server (`SelfSubjectAccessReview`) whether the caller may server-side apply every
/// kind the lab's stages hold, before anything is changed; skipped when the server does not
/// serve the review API. Kinds that discovery does not know yet (a CRD the lab installs) are
/// left to the apply itself.
pub async fn can_apply(cluster: &Cluster, bundle: &Bundle) -> Result<()> {
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
    };
    let mut wanted: Vec<(String, String, Option<String>)> = Vec::new();
    for documents in bundle.manifests.values() {
        for document in documents {
            let text = |pointer: &str| document.pointer(pointer).and_then(Value::as_str).map(str::to_string);
            let key = (
                text("/apiVersion").unwrap_or_default(),
                text("/kind").unwrap_or_default(),
                text("/metadata/namespace"),
            );
            if !wanted.contains(&key) {
                wanted.push(key);
            }
        }
    }
    let reviews: Api<SelfSubjectAccessReview> = Api::all(cluster.client.clone());
    let mut denied = Vec::new();
    for (api_version, kind, namespace) in wanted {
        let Ok((_, resource)) =
            apply::api_for(&cluster.client, &api_version, &kind, namespace.as_deref()).await
        else {
            continue;
        };
        let review = SelfSubjectAccessReview {
            spec: SelfSubjectAccessReviewSpec {
                resource_attributes: Some(ResourceAttributes {
                    group: Some(resource.group.clone()),
                    resource: Some(resource.plural.clone()),
                    verb: Some("patch".into()),
                    namespace: namespace.clone(),
                    ..Default::default()
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        match reviews.create(&Default::default(), &review).await {
            Err(kube::Error::Api(status)) if status.code == 404 || status.code == 405 => return Ok(()),
            Err(e) => {
                return Err(Error::api(msg!("action-access-review"), &e));
            }
            Ok(answer) if answer.status.as_ref().is_some_and(|s| s.allowed) => {}
            Ok(_) => {
                let group =
                    if resource.group.is_empty() { String::new() } else { format!(".{}", resource.group) };
                let resource = format!("{}{group}", resource.plural);
                denied.push(match namespace {
                    Some(namespace) => {
                        msg!("preflight-denied-in", resource = resource, namespace = namespace)
                    }
                    None => msg!("preflight-denied-cluster", resource = resource),
                });
            }
        }
    }
    if denied.is_empty() {
        return Ok(());
    }
    Err(Error::Preflight {
        lab: bundle.lab.id.value.clone(),
        reason: msg!("preflight-denied", denied = Arg::joined(denied, msg!("list-separator"))),
    })
}

/// Records the pre-images the lab's reset policy names, and every node as it is (its labels and
/// advertised resources), unless a previous start already did.
pub(super) async fn record_pre_images(cluster: &Cluster, lab: &Lab, inventory: &mut Inventory) -> Result<()> {
    if inventory.pre_images.nodes.is_empty() {
        let nodes = super::observe::list_nodes(&cluster.client)
            .await
            .map_err(|e| Error::api(msg!("action-list-nodes-labels"), &e))?;
        for node in nodes {
            inventory
                .pre_images
                .nodes
                .insert(node.metadata.name.clone().unwrap_or_default(), NodeState::of(&node));
        }
    }
    let restore = &lab.reset.restore;
    if !restore.node_labels.is_empty() && inventory.pre_images.node_labels.is_empty() {
        let nodes = super::observe::list_nodes(&cluster.client)
            .await
            .map_err(|e| Error::api(msg!("action-list-nodes-labels"), &e))?;
        for node in nodes {
            let labels = node.metadata.labels.unwrap_or_default();
            let recorded =
                restore.node_labels.iter().map(|key| (key.clone(), labels.get(key).cloned())).collect();
            inventory.pre_images.node_labels.insert(node.metadata.name.unwrap_or_default(), recorded);
        }
    }
    for wanted in &restore.config_maps {
        let known = inventory
            .pre_images
            .config_maps
            .iter()
            .any(|c| c.namespace == wanted.namespace && c.name == wanted.name);
        if known {
            continue;
        }
        let found = read_config_map(cluster, &wanted.namespace, &wanted.name).await?;
        inventory.pre_images.config_maps.push(ConfigMapPreImage {
            namespace: wanted.namespace.clone(),
            name: wanted.name.clone(),
            data: found.map(|c| c.data.unwrap_or_default()),
        });
    }
    Ok(())
}

/// Runs `start` for `bundle`: see the module docs. Applying the same lab twice gives the same
/// state; a start that was interrupted resumes (what it applied is in the inventory).
pub async fn start(
    cluster: &Cluster,
    bundle: &Bundle,
    lang: Lang,
    options: &StartOptions,
) -> Result<Started> {
    let lab = &bundle.lab;
    let id = &lab.id.value;
    preflight(cluster, lab).await?;
    can_apply(cluster, bundle).await?;
    let previous = inventory::load(&cluster.client, id).await?;
    // Starting again over changed records would seal them as they are now: a reset starts over.
    if let Some(line) = previous.as_ref().and_then(Inventory::tampered) {
        return Err(Error::BadInput(line));
    }
    let recorded = previous.as_ref().and_then(|i| i.variant_in(lab));
    let variant = choose_variant(lab, options, recorded.as_deref())?;
    let mut inventory = previous.unwrap_or_else(|| Inventory::new(id));
    // A variant's stage applied (not only the shared first stage a reset leaves) is replaced
    // only when confirmed.
    let variant_applied = inventory
        .stages
        .iter()
        .any(|done| lab.stages.iter().any(|s| &s.id.value == done && !s.variants.is_empty()));
    if let (Some(running), Some(wanted)) = (&recorded, &variant)
        && running != wanted
        && variant_applied
    {
        if !options.yes {
            return Err(Error::VariantChange {
                lab: id.clone(),
                running: running.clone(),
                wanted: wanted.clone(),
            });
        }
        // The cluster may hold the learner's changes, over which another breakage would not
        // reproduce (a wait would time out): start again from the state `start` leaves.
        return start_over(cluster, bundle, wanted, lang).await;
    }
    // Every object of every stage, before anything is changed: a collision stops here.
    let mut collisions = Vec::new();
    for stage in &lab.stages {
        for document in stage_documents(bundle, stage, variant.as_deref()) {
            if let Ownership::Collision(identity) =
                ownership(cluster, bundle, stage, &inventory, document).await?
                && !collisions.contains(&identity.to_string())
            {
                collisions.push(identity.to_string());
            }
        }
    }
    if !collisions.is_empty() {
        return Err(Error::BadInput(msg!(
            "start-collision",
            lab = id,
            count = collisions.len(),
            objects = crate::i18n::list(&collisions)
        )));
    }
    // Nothing is written before here: a refused start changes nothing, the key included.
    inventory.key = Some(inventory::ensure_key(&cluster.client, id).await?);
    inventory.answer_log |= options.hosted;
    if recorded != variant {
        // Another variant's facts and answers do not carry over.
        inventory.facts.clear();
        inventory.answers.clear();
        inventory.attempts.clear();
        inventory.hints.clear();
        inventory::delete_learner_entries(&cluster.client, id).await?;
        inventory.set_variant(variant.as_deref())?;
    }
    inventory.progress = Progress::Incomplete;
    inventory.stages.clear();
    record_present_at_start(cluster, bundle, &mut inventory).await?;
    record_pre_images(cluster, lab, &mut inventory).await?;
    super::captured::capture(cluster, lab, &mut inventory).await?;
    inventory::save(&cluster.client, &inventory).await?;
    let mut applied = 0;
    let again = !inventory.applied.is_empty();
    for stage in &lab.stages {
        let applying =
            apply_stage(cluster, bundle, stage, variant.as_deref(), &mut inventory, &mut applied, lang);
        match applying.await {
            // Applied over an earlier start, a breakage may not reproduce over the learner's
            // changes: say how to start from a clean state instead of only that time ran out.
            Err(Error::TimedOut { what, seconds, last_seen }) if again => {
                let last_seen = msg!("start-timed-out-reset", seen = last_seen, lab = id);
                return Err(Error::TimedOut { what, seconds, last_seen });
            }
            other => other?,
        }
    }
    inventory.progress = Progress::Complete;
    inventory::save(&cluster.client, &inventory).await?;
    Ok(Started {
        variant,
        applied,
        facts: inventory.facts.keys().cloned().collect(),
        briefing: lab.briefing.get(lang).trim_end().to_string(),
    })
}

/// The ConfigMap `namespace/name` (`None`: it does not exist), as `reset.restore` names it.
pub(super) async fn read_config_map(
    cluster: &Cluster,
    namespace: &str,
    name: &str,
) -> Result<Option<ConfigMap>> {
    let api: Api<ConfigMap> = Api::namespaced(cluster.client.clone(), namespace);
    with_retries(|| api.get_opt(name))
        .await
        .map_err(|e| Error::api(msg!("action-read", object = format!("ConfigMap {namespace}/{name}")), &e))
}

/// `start --variant V --yes` over another variant's breakage: a reset to `V` (everything the lab
/// and its learners made deleted, every stage applied again with `V`, fresh facts, no answers).
async fn start_over(cluster: &Cluster, bundle: &Bundle, variant: &str, lang: Lang) -> Result<Started> {
    let options = super::reset::ResetOptions { variant: Some(variant.to_string()), ..Default::default() };
    let planned = super::reset::load_plan_to(cluster, bundle, &options).await?;
    super::reset::execute(cluster, bundle, planned, lang).await?;
    let inventory = inventory::load(&cluster.client, &bundle.lab.id.value).await?.unwrap_or_default();
    let applied = inventory.applied.iter().filter(|o| o.origin != Origin::Used).count();
    Ok(Started {
        variant: Some(variant.to_string()),
        applied,
        facts: inventory.facts.keys().cloned().collect(),
        briefing: bundle.lab.briefing.get(lang).trim_end().to_string(),
    })
}

/// The namespaces whose objects at start are recorded: those the lab declares and those its
/// manifests hold a Namespace for (whatever the variant).
fn namespaces_of(bundle: &Bundle) -> BTreeSet<String> {
    let manifests = bundle
        .manifests
        .values()
        .flatten()
        .filter(|d| d.get("kind").and_then(Value::as_str) == Some("Namespace"));
    let declared =
        manifests.filter_map(|d| d.pointer("/metadata/name").and_then(Value::as_str).map(str::to_string));
    bundle.lab.reset.namespaces.iter().cloned().chain(declared).collect()
}

/// Records, once per namespace, the uids of the objects in the lab's working namespaces before
/// the lab changes anything: those are never a learner's.
pub(super) async fn record_present_at_start(
    cluster: &Cluster,
    bundle: &Bundle,
    inventory: &mut Inventory,
) -> Result<()> {
    let wanted: Vec<String> =
        namespaces_of(bundle).into_iter().filter(|ns| !inventory.present_at_start.contains_key(ns)).collect();
    if wanted.is_empty() {
        return Ok(());
    }
    let discovery = Discovery::new(cluster.client.clone())
        .run()
        .await
        .map_err(|e| Error::api(msg!("action-discover"), &e))?;
    for namespace in wanted {
        let mut uids = BTreeSet::new();
        for group in discovery.groups() {
            for (resource, capabilities) in group.recommended_resources() {
                if capabilities.scope != Scope::Namespaced || !capabilities.supports_operation(verbs::LIST) {
                    continue;
                }
                let api: Api<DynamicObject> =
                    Api::namespaced_with(cluster.client.clone(), &namespace, &resource);
                match list_all(&api).await {
                    Ok(list) => uids.extend(list.items.into_iter().filter_map(|o| o.metadata.uid)),
                    Err(kube::Error::Api(status)) if status.code == 404 || status.code == 405 => {}
                    Err(e) => {
                        return Err(Error::api(
                            msg!("action-list-in", plural = &resource.plural, namespace = namespace.as_str()),
                            &e,
                        ));
                    }
                }
            }
        }
        inventory.present_at_start.insert(namespace, uids);
    }
    Ok(())
}

fn stage_documents<'a>(bundle: &'a Bundle, stage: &'a Stage, variant: Option<&str>) -> Vec<&'a Value> {
    stage.manifests_for(variant).into_iter().filter_map(|file| bundle.manifests.get(file)).flatten().collect()
}

/// Who an object a stage applies belongs to, before the stage applies it.
enum Ownership {
    /// The inventory has it already (created, adopted or used).
    Known,
    /// It does not exist: the lab will create it.
    Absent,
    /// A Namespace or CRD that exists: used as it is.
    Used(String),
    /// It exists and the stage declares `adopt`: its pre-image, with its uid.
    Adopt(String, PreImage),
    /// It exists and the lab did not create it.
    Collision(apply::Identity),
}

async fn ownership(
    cluster: &Cluster,
    bundle: &Bundle,
    stage: &Stage,
    inventory: &Inventory,
    document: &Value,
) -> Result<Ownership> {
    let lab = &bundle.lab;
    let identity = apply::Identity::of(&lab.id.value, document)?;
    if inventory
        .find(&identity.api_version, &identity.kind, identity.namespace.as_deref(), &identity.name)
        .is_some()
    {
        return Ok(Ownership::Known);
    }
    // A kind that is not served yet (its CRD comes with the lab) has no object of that name.
    let Ok((api, _)) =
        apply::api_for(&cluster.client, &identity.api_version, &identity.kind, identity.namespace.as_deref())
            .await
    else {
        return Ok(Ownership::Absent);
    };
    let Some(found) = with_retries(|| api.get_opt(&identity.name))
        .await
        .map_err(|e| Error::api(msg!("action-read", object = identity.to_string()), &e))?
    else {
        return Ok(Ownership::Absent);
    };
    let uid = found.metadata.uid.clone().unwrap_or_default();
    if matches!(identity.kind.as_str(), "Namespace" | "CustomResourceDefinition") {
        return Ok(Ownership::Used(uid));
    }
    let declared = stage.adopt.iter().any(|r| {
        r.api_version == identity.api_version
            && r.kind == identity.kind
            && r.namespace == identity.namespace
            && r.name == identity.name
    }) || (identity.kind == "ConfigMap"
        && lab
            .reset
            .restore
            .config_maps
            .iter()
            .any(|c| Some(&c.namespace) == identity.namespace.as_ref() && c.name == identity.name));
    if !declared {
        return Ok(Ownership::Collision(identity));
    }
    let current = serde_json::to_value(&found).unwrap_or(Value::Null);
    Ok(Ownership::Adopt(uid, pre_image(&apply::labelled(&lab.id.value, &stage.id.value, document), &current)))
}

/// The labels, annotations and top-level fields `document` sets, as `current` has them.
fn pre_image(document: &Value, current: &Value) -> PreImage {
    let keys = |value: &Value, pointer: &str| -> Vec<String> {
        value
            .pointer(pointer)
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    let text = |pointer: String| current.pointer(&pointer).and_then(Value::as_str).map(str::to_string);
    let escape = |key: &str| key.replace('~', "~0").replace('/', "~1");
    let mut image = PreImage::default();
    for key in keys(document, "/metadata/labels") {
        image.labels.insert(key.clone(), text(format!("/metadata/labels/{}", escape(&key))));
    }
    for key in keys(document, "/metadata/annotations") {
        image.annotations.insert(key.clone(), text(format!("/metadata/annotations/{}", escape(&key))));
    }
    for field in keys(document, "")
        .into_iter()
        .filter(|f| !matches!(f.as_str(), "apiVersion" | "kind" | "metadata" | "status"))
    {
        image.fields.insert(field.clone(), current.get(&field).cloned());
    }
    image
}

/// Applies one stage (Namespaces and CRDs first) and runs its waits. Who made each object is
/// recorded and saved before anything is applied, the uids after, and the stage once its waits
/// passed, so an interrupted start leaves a record `reset` can clean up from and `start` resumes.
pub async fn apply_stage(
    cluster: &Cluster,
    bundle: &Bundle,
    stage: &Stage,
    variant: Option<&str>,
    inventory: &mut Inventory,
    applied: &mut usize,
    lang: Lang,
) -> Result<()> {
    let lab = &bundle.lab.id.value;
    let ordered = apply::apply_order(&stage_documents(bundle, stage, variant));
    // The nodes the lab targets: a dropped DESIRED only counts on one of these.
    let targeted: Vec<LabelSelector> =
        bundle.lab.requires.nodes.iter().map(|n| n.selector.to_k8s()).collect();
    for document in &ordered {
        let identity = apply::Identity::of(lab, document)?;
        let origin = match ownership(cluster, bundle, stage, inventory, document).await? {
            Ownership::Known => continue,
            Ownership::Absent => (String::new(), Origin::Created),
            Ownership::Used(uid) => (uid, Origin::Used),
            Ownership::Adopt(uid, pre_image) => (uid, Origin::Adopted { pre_image }),
            Ownership::Collision(identity) => {
                return Err(Error::BadInput(msg!(
                    "start-created-meanwhile",
                    lab = lab,
                    stage = &stage.id.value,
                    object = identity.to_string()
                )));
            }
        };
        inventory.record(AppliedObject {
            api_version: identity.api_version,
            kind: identity.kind,
            namespace: identity.namespace,
            name: identity.name,
            stage: stage.id.value.clone(),
            uid: origin.0,
            origin: origin.1,
        });
    }
    inventory::save(&cluster.client, inventory).await?;
    let mut crds = Vec::new();
    for document in &ordered {
        let identity = apply::Identity::of(lab, document)?;
        let record = inventory
            .find(&identity.api_version, &identity.kind, identity.namespace.as_deref(), &identity.name)
            .cloned();
        if record.as_ref().is_some_and(|r| r.origin == Origin::Used) {
            // Used as it is: not even the lab's labels.
            continue;
        }
        let uid = apply::apply(&cluster.client, lab, &stage.id.value, document).await?;
        if identity.kind == "CustomResourceDefinition" {
            crds.push(identity.name.clone());
        }
        if let Some(mut record) = record {
            record.uid = uid;
            inventory.record(record);
        }
        *applied += 1;
    }
    inventory::save(&cluster.client, inventory).await?;
    for crd in crds {
        let target = ObjectRef {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
            namespace: None,
            name: crd,
        };
        let wait = Wait {
            wait_for: WaitFor::Established,
            target,
            timeout: crate::lab::model::Timeout(Duration::from_secs(60)),
            symptom: None,
            condition: None,
            event: None,
            expression: None,
        };
        run_wait(cluster, &wait, &[], lang).await?;
    }
    for wait in stage.waits_for(variant) {
        if let Some((fact, value)) = run_wait(cluster, wait, &targeted, lang).await? {
            let fact_value = inventory.fact(&value)?;
            inventory.facts.insert(fact.to_string(), fact_value);
        }
    }
    super::facts::capture(cluster, stage, inventory).await?;
    inventory.stages.push(stage.id.value.clone());
    inventory::save(&cluster.client, inventory).await
}

/// The inventory error for a DaemonSet the server returned in a shape that does not parse.
fn unparsable_daemon_set(name: &str, error: &serde_json::Error) -> Error {
    Error::Inventory(msg!("start-daemonset-unparsable", name = name, reason = error.to_string()))
}

/// The outcome of polling a wait once.
enum Poll {
    /// Done; a fact to capture, if the wait confirms a breakage.
    Done(Option<(&'static str, String)>),
    /// Not yet; what was seen.
    Pending(Message),
}

/// Polls `wait` until it holds or its timeout passes (exit 4), with a spinner on a terminal
/// that shows how long it has waited and what it last saw.
pub async fn run_wait(
    cluster: &Cluster,
    wait: &Wait,
    targeted: &[LabelSelector],
    lang: Lang,
) -> Result<Option<(&'static str, String)>> {
    let target = wait.target.namespace.as_ref().map(|n| format!("{n}/{}", wait.target.name));
    let target = target.unwrap_or(wait.target.name.clone());
    let what = msg!(
        "start-waiting-for",
        condition = condition_text(wait),
        kind = &wait.target.kind,
        target = &target
    );
    let shown = tr!(
        lang,
        "start-waiting",
        condition = condition_text(wait),
        kind = &wait.target.kind,
        target = &target
    );
    let spinner = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} [{elapsed}] {msg}") {
        spinner.set_style(style);
    }
    spinner.set_message(shown.clone());
    spinner.enable_steady_tick(Duration::from_millis(120));
    let deadline = Instant::now() + wait.timeout.0;
    let outcome = loop {
        let last = match poll(cluster, wait, targeted).await? {
            Poll::Done(fact) => break Ok(fact),
            Poll::Pending(seen) => seen,
        };
        if Instant::now() >= deadline {
            break Err(Error::TimedOut {
                what: what.clone(),
                seconds: wait.timeout.0.as_secs(),
                last_seen: last,
            });
        }
        spinner.set_message(format!("{shown}: {}", last.render(lang)));
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    spinner.finish_and_clear();
    outcome
}

/// The condition as the spinner and a timeout show it.
fn condition_text(wait: &Wait) -> Message {
    match wait.wait_for {
        WaitFor::RolledOut => msg!("start-condition-rolled-out"),
        WaitFor::Available => msg!("start-condition-available"),
        WaitFor::Established => msg!("start-condition-established"),
        WaitFor::StalledAsIntended => msg!("start-condition-stalled"),
        WaitFor::Condition => msg!(
            "start-condition-condition",
            condition = wait.condition.as_ref().map(waits::describe_condition).unwrap_or_default()
        ),
        WaitFor::Event => msg!(
            "start-condition-event",
            reason = wait.event.as_ref().map(|e| e.reason.as_str()).unwrap_or_default()
        ),
        WaitFor::Cel => msg!(
            "start-condition-cel",
            expression = wait.expression.as_ref().map(|e| e.value.as_str()).unwrap_or_default()
        ),
    }
}

async fn get(cluster: &Cluster, target: &ObjectRef) -> Result<Option<Value>> {
    let (api, _) =
        apply::api_for(&cluster.client, &target.api_version, &target.kind, target.namespace.as_deref())
            .await?;
    let found = with_retries(|| api.get_opt(&target.name)).await.map_err(|e| {
        Error::api(msg!("action-read", object = format!("{} {}", target.kind, target.name)), &e)
    })?;
    Ok(found.map(|o| serde_json::to_value(o).unwrap_or(Value::Null)))
}

async fn poll(cluster: &Cluster, wait: &Wait, targeted: &[LabelSelector]) -> Result<Poll> {
    let Some(object) = get(cluster, &wait.target).await? else {
        let object = format!("{} {}", wait.target.kind, wait.target.name);
        return Ok(Poll::Pending(msg!("grade-does-not-exist", object = object)));
    };
    let number = |pointer: &str| object.pointer(pointer).and_then(Value::as_i64).unwrap_or(0);
    match wait.wait_for {
        WaitFor::Established if object_condition_true(&object, "Established") => Ok(Poll::Done(None)),
        WaitFor::Established => Ok(Poll::Pending(msg!("start-seen-not-yet", condition = "Established"))),
        WaitFor::Available
            if object_condition_true(&object, "Available") || object_condition_true(&object, "Complete") =>
        {
            Ok(Poll::Done(None))
        }
        WaitFor::Available => Ok(Poll::Pending(msg!("start-seen-not-yet", condition = "Available"))),
        WaitFor::RolledOut if wait.target.kind == "DaemonSet" => {
            let ds: DaemonSet = serde_json::from_value(object.clone())
                .map_err(|e| unparsable_daemon_set(&wait.target.name, &e))?;
            match daemon::rollout_status(&ds) {
                daemon::RolloutStatus::Done(_) if number("/status/desiredNumberScheduled") > 0 => {
                    Ok(Poll::Done(None))
                }
                daemon::RolloutStatus::Done(_) => Ok(Poll::Pending(msg!("start-seen-desired-zero"))),
                daemon::RolloutStatus::Waiting(message) => {
                    Ok(Poll::Pending(msg!("start-seen-rollout", message = message.trim())))
                }
                daemon::RolloutStatus::NotRollingUpdate => Ok(Poll::Done(None)),
            }
        }
        WaitFor::RolledOut => {
            let replicas = number("/spec/replicas").max(1);
            let current = number("/status/observedGeneration") >= number("/metadata/generation");
            let done = current
                && number("/status/updatedReplicas") == replicas
                && number("/status/availableReplicas") == replicas
                && number("/status/replicas") == replicas;
            Ok(if done {
                Poll::Done(None)
            } else {
                Poll::Pending(msg!(
                    "start-seen-replicas",
                    available = number("/status/availableReplicas"),
                    replicas = replicas
                ))
            })
        }
        WaitFor::StalledAsIntended => stalled(cluster, wait, &object, targeted).await,
        WaitFor::Condition => {
            let wanted = wait.condition.as_ref().ok_or_else(|| missing_field(wait, "condition"))?;
            Ok(waits::condition_holds(&object, wanted).map_or_else(Poll::Pending, |()| Poll::Done(None)))
        }
        WaitFor::Event => {
            let wanted = wait.event.as_ref().ok_or_else(|| missing_field(wait, "event"))?;
            let uid = object.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default();
            let recorded = waits::event_recorded(cluster, &wait.target, uid, wanted).await?;
            Ok(recorded.map_or_else(Poll::Pending, |()| Poll::Done(None)))
        }
        WaitFor::Cel => {
            let expression = wait.expression.as_ref().ok_or_else(|| missing_field(wait, "expression"))?;
            Ok(waits::expression_holds(&object, &expression.value)
                .map_or_else(Poll::Pending, |()| Poll::Done(None)))
        }
    }
}

/// A wait without the field its kind needs (the loader refuses such a lab; a bundle built
/// another way still gets a clear error).
fn missing_field(wait: &Wait, field: &str) -> Error {
    let wait_for = serde_json::to_value(wait.wait_for).ok().and_then(|v| v.as_str().map(str::to_string));
    Error::BadInput(msg!(
        "loader-wait-needs-field",
        stage = "-",
        wait = wait_for.unwrap_or_default(),
        target = format!("{} {}", wait.target.kind, wait.target.name),
        field = field
    ))
}

/// Confirms the variant's breakage on a DaemonSet and captures the affected node.
async fn stalled(cluster: &Cluster, wait: &Wait, object: &Value, targeted: &[LabelSelector]) -> Result<Poll> {
    let ds: DaemonSet =
        serde_json::from_value(object.clone()).map_err(|e| unparsable_daemon_set(&wait.target.name, &e))?;
    let namespace = wait.target.namespace.clone().unwrap_or_else(|| "default".into());
    let pods: Api<Pod> = Api::namespaced(cluster.client.clone(), &namespace);
    let uid = ds.metadata.uid.clone();
    let pods: Vec<Pod> = list_all(&pods)
        .await
        .map_err(|e| Error::api(msg!("action-list-in", plural = "pods", namespace = &namespace), &e))?
        .items
        .into_iter()
        .filter(|p| p.metadata.owner_references.iter().flatten().any(|o| Some(&o.uid) == uid.as_ref()))
        .collect();
    let symptom = wait
        .symptom
        .ok_or_else(|| Error::BadInput(msg!("start-wait-no-symptom", target = &wait.target.name)))?;
    let node_of = |pod: &Pod| {
        pod.spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .or_else(|| daemon::target_node_name(pod).ok())
            .unwrap_or_default()
    };
    let states: Vec<Message> = pods
        .iter()
        .map(|p| {
            let pod = p.metadata.name.clone().unwrap_or_default();
            msg!("start-seen-pod", pod = pod, node = node_of(p), state = pod_state(p))
        })
        .collect();
    let seen = if states.is_empty() {
        msg!("start-seen-no-pods")
    } else {
        msg!("start-seen-pods", pods = Arg::joined(states, msg!("list-separator")))
    };
    match symptom {
        Symptom::ImagePullBackOff => {
            // The kubelet alternates ErrImagePull (a pull attempt failed) and ImagePullBackOff
            // (waiting for the next attempt): both are the same stuck pull.
            let stuck: Vec<&Pod> = pods
                .iter()
                .filter(|p| matches!(pod_state(p).as_str(), "ImagePullBackOff" | "ErrImagePull"))
                .collect();
            match stuck.as_slice() {
                [one] => Ok(Poll::Done(Some(("affectedNode", node_of(one))))),
                [] => Ok(Poll::Pending(seen)),
                many => {
                    Err(Error::NotReproduced(msg!("start-too-many-pulling", count = many.len(), seen = seen)))
                }
            }
        }
        Symptom::Unschedulable => {
            let stuck: Vec<&Pod> =
                pods.iter().filter(|p| pod_state(p) == "Pending (Unschedulable)").collect();
            match stuck.as_slice() {
                [one] => Ok(Poll::Done(Some(("affectedNode", node_of(one))))),
                [] => Ok(Poll::Pending(seen)),
                many => Err(Error::NotReproduced(msg!(
                    "start-too-many-unschedulable",
                    count = many.len(),
                    seen = seen
                ))),
            }
        }
        Symptom::DesiredDropped => {
            let nodes = super::observe::list_nodes(&cluster.client)
                .await
                .map_err(|e| Error::api(msg!("action-list-nodes"), &e))?;
            // A node the DaemonSet no longer wants that has no daemon pod left; it must be one
            // of the nodes the lab requires (the GPU nodes), so unrelated nodes do not count.
            let dropped: Vec<String> = nodes
                .iter()
                .filter(|n| {
                    let labels = labels_of(&serde_json::to_value(n).unwrap_or(Value::Null));
                    targeted.is_empty() || targeted.iter().any(|s| s.matches(&labels))
                })
                .filter(|n| !daemon::node_should_run_daemon_pod(&ds, n).should_run())
                .filter(|n| !pods.iter().any(|p| node_of(p) == n.metadata.name.clone().unwrap_or_default()))
                .filter_map(|n| n.metadata.name.clone())
                .collect();
            let desired = ds.status.as_ref().map(|s| s.desired_number_scheduled).unwrap_or(0);
            match dropped.as_slice() {
                [one] if desired > 0 => Ok(Poll::Done(Some(("affectedNode", one.clone())))),
                _ => Ok(Poll::Pending(msg!(
                    "start-seen-desired",
                    desired = desired,
                    nodes = crate::i18n::list(&dropped)
                ))),
            }
        }
    }
}
