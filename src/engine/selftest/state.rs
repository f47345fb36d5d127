//! What a selftest compares between the start and a reset: what the lab owns (namespaces and the
//! objects in them, its cluster-scoped objects, every node's labels and advertised resources, the
//! ConfigMaps it restores), and every object of the stages as their manifests set it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use kube::{
    api::{Api, DynamicObject, ListParams},
    discovery::{Discovery, Scope, verbs},
};
use serde_json::Value;

use crate::{
    engine::{
        Error, LAB_LABEL, Result, apply,
        cluster::{Cluster, list_all, with_retries},
    },
    i18n::{Arg, Message},
    lab::{loader::Bundle, model::LearnerObjects},
    msg,
    session::Lang,
};

/// What the lab owns, as lines to compare between the start and a reset: the owned namespaces and
/// the top-level objects in them (learner objects, later stages' objects), the cluster-scoped
/// objects carrying the lab label, every node's labels and advertised resources, the ConfigMaps
/// the lab restores. Objects a controller owns (pods, revisions), events and GFD's timestamp label
/// are left out: their names and values vary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LabState {
    /// Each fact by its English text (what is compared), with its message (what is shown).
    facts: BTreeMap<String, Message>,
}

/// A node label whose value is the time it was written: it says nothing about the state.
const TIMESTAMP_LABEL: &str = "nvidia.com/gfd.timestamp";

/// How long a reset's state may take to settle as the start left it (labels and resources the
/// GPU components publish once their pods run).
const SETTLE: std::time::Duration = std::time::Duration::from_secs(60);

impl LabState {
    fn insert(&mut self, fact: Message) {
        self.facts.insert(fact.render(Lang::En), fact);
    }

    /// How many facts it holds.
    pub(super) fn len(&self) -> usize {
        self.facts.len()
    }

    /// Observes the cluster until its state is `wanted` (at most [`SETTLE`]); the last one seen.
    pub(super) async fn settle_to(cluster: &Cluster, bundle: &Bundle, wanted: &LabState) -> Result<LabState> {
        let deadline = std::time::Instant::now() + SETTLE;
        loop {
            let seen = LabState::observe(cluster, bundle).await?;
            if seen == *wanted || std::time::Instant::now() >= deadline {
                return Ok(seen);
            }
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        }
    }
}

/// Objects every namespace gets from Kubernetes itself, whenever it is created.
const NAMESPACE_DEFAULTS: [(&str, &str); 2] =
    [("ConfigMap", "kube-root-ca.crt"), ("ServiceAccount", "default")];

impl LabState {
    pub(super) async fn observe(cluster: &Cluster, bundle: &Bundle) -> Result<LabState> {
        let lab = &bundle.lab;
        let mut facts = LabState { facts: BTreeMap::new() };
        let discovery = Discovery::new(cluster.client.clone())
            .run()
            .await
            .map_err(|e| Error::api(msg!("action-discover"), &e))?;
        let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(cluster.client.clone());
        let mut present = Vec::new();
        for namespace in &lab.reset.namespaces {
            let found = with_retries(|| namespaces.get_opt(namespace)).await.map_err(|e| {
                Error::api(msg!("action-read", object = format!("namespace {namespace}")), &e)
            })?;
            facts.insert(match found {
                Some(_) => msg!("selftest-fact-namespace", namespace = namespace),
                None => msg!("selftest-fact-namespace-absent", namespace = namespace),
            });
            if found.is_some() {
                present.push(namespace.as_str());
            }
        }
        let lab_selector = ListParams::default().labels(&format!("{LAB_LABEL}={}", lab.id.value));
        for group in discovery.groups() {
            for (resource, capabilities) in group.recommended_resources() {
                if !capabilities.supports_operation(verbs::LIST) || matches!(resource.kind.as_str(), "Event")
                {
                    continue;
                }
                if capabilities.scope == Scope::Cluster {
                    let api: Api<DynamicObject> = Api::all_with(cluster.client.clone(), &resource);
                    for object in listed(&api, &lab_selector, &resource.plural).await? {
                        let object = format!("{} {}", resource.kind, name_of(&object));
                        facts.insert(msg!("target-named", target = object));
                    }
                    continue;
                }
                for namespace in &present {
                    let api: Api<DynamicObject> =
                        Api::namespaced_with(cluster.client.clone(), namespace, &resource);
                    for object in listed(&api, &ListParams::default(), &resource.plural).await? {
                        let name = name_of(&object);
                        let owned = object.metadata.owner_references.as_ref().is_some_and(|o| !o.is_empty());
                        let lab_applied = object.metadata.labels.as_ref().and_then(|l| l.get(LAB_LABEL))
                            == Some(&lab.id.value);
                        // With `learnerObjects: keep` the learner's objects are not the lab's.
                        let learners_kept = lab.reset.learner_objects == LearnerObjects::Keep && !lab_applied;
                        if owned
                            || learners_kept
                            || NAMESPACE_DEFAULTS.contains(&(resource.kind.as_str(), name.as_str()))
                        {
                            continue;
                        }
                        facts.insert(msg!(
                            "target-named",
                            target = format!("{} {namespace}/{name}", resource.kind)
                        ));
                    }
                }
            }
        }
        let nodes: Api<Node> = Api::all(cluster.client.clone());
        let nodes = list_all(&nodes).await.map_err(|e| Error::api(msg!("action-list-nodes"), &e))?.items;
        for node in nodes {
            let state = crate::engine::inventory::NodeState::of(&node);
            let name = node.metadata.name.unwrap_or_default();
            for (key, value) in state.labels.iter().filter(|(key, _)| *key != TIMESTAMP_LABEL) {
                facts.insert(msg!("selftest-fact-node-label", node = &name, key = key, value = value));
            }
            for (field, resources) in [("capacity", &state.capacity), ("allocatable", &state.allocatable)] {
                for (resource, quantity) in resources {
                    let key = format!("{field}.{resource}");
                    facts.insert(msg!(
                        "selftest-fact-node-resource",
                        node = &name,
                        key = key,
                        value = quantity
                    ));
                }
            }
        }
        for wanted in &lab.reset.restore.config_maps {
            let found =
                crate::engine::start::read_config_map(cluster, &wanted.namespace, &wanted.name).await?;
            let data = found.map(|c| serde_json::to_string(&c.data.unwrap_or_default()).unwrap_or_default());
            let object = format!("{}/{}", wanted.namespace, wanted.name);
            facts.insert(match data {
                Some(data) => msg!("selftest-fact-configmap", object = object, data = data),
                None => msg!("selftest-fact-configmap-absent", object = object),
            });
        }
        Ok(facts)
    }

    /// What differs from `self` in `after`, as `left after reset: …` / `missing after reset: …`.
    pub(super) fn differences(&self, after: &LabState) -> Vec<Message> {
        let left = after
            .facts
            .iter()
            .filter(|(key, _)| !self.facts.contains_key(*key))
            .map(|(_, fact)| msg!("selftest-left-after-reset", fact = fact));
        let missing = self
            .facts
            .iter()
            .filter(|(key, _)| !after.facts.contains_key(*key))
            .map(|(_, fact)| msg!("selftest-missing-after-reset", fact = fact));
        left.chain(missing).collect()
    }
}

async fn listed(api: &Api<DynamicObject>, params: &ListParams, plural: &str) -> Result<Vec<DynamicObject>> {
    match with_retries(|| api.list(params)).await {
        Ok(list) => Ok(list.items),
        // A kind the server lists in discovery but cannot list here is not the lab's.
        Err(kube::Error::Api(status)) if (403..=405).contains(&status.code) => Ok(Vec::new()),
        Err(e) => Err(Error::api(msg!("action-list", plural = plural), &e)),
    }
}

fn name_of(object: &DynamicObject) -> String {
    object.metadata.name.clone().unwrap_or_default()
}

/// Every object the lab's stages apply (for `variant`) exists with the fields its manifest sets;
/// an object several stages apply is compared with the last of them (a broken update over the
/// healthy one).
pub(super) async fn stages_restored(
    cluster: &Cluster,
    bundle: &Bundle,
    variant: Option<&str>,
) -> Result<Vec<Message>> {
    let mut last: BTreeMap<(String, String, String), (&Value, &str)> = BTreeMap::new();
    for stage in &bundle.lab.stages {
        for document in
            stage.manifests_for(variant).into_iter().filter_map(|f| bundle.manifests.get(f)).flatten()
        {
            let text = |pointer: &str| document.pointer(pointer).and_then(Value::as_str).unwrap_or_default();
            let identity = (
                text("/kind").to_string(),
                text("/metadata/namespace").to_string(),
                text("/metadata/name").to_string(),
            );
            last.insert(identity, (document, stage.id.value.as_str()));
        }
    }
    let mut problems = Vec::new();
    for ((kind, namespace, name), (document, stage)) in last {
        let api_version = document.pointer("/apiVersion").and_then(Value::as_str).unwrap_or_default();
        let namespace = (!namespace.is_empty()).then_some(namespace);
        let (api, _) = apply::api_for(&cluster.client, api_version, &kind, namespace.as_deref()).await?;
        let place = namespace.as_ref().map(|n| format!("{n}/")).unwrap_or_default();
        let shown = format!("{kind} {place}{name}");
        let found = with_retries(|| api.get_opt(&name))
            .await
            .map_err(|e| Error::api(msg!("action-read", object = shown.clone()), &e))?;
        let Some(found) = found else {
            problems.push(msg!("selftest-stage-object-missing", object = shown, stage = stage));
            continue;
        };
        let live = serde_json::to_value(&found).unwrap_or(Value::Null);
        if let Some(path) = first_difference(document, &live, String::new()) {
            let path: Arg = if path.is_empty() { msg!("selftest-top-level").into() } else { path.into() };
            problems.push(msg!("selftest-stage-object-differs", object = shown, stage = stage, path = path));
        }
    }
    Ok(problems)
}

/// The first path where `live` does not hold what `manifest` sets (maps: a subset; lists: the
/// manifest's elements first, element by element; scalars: equal, quantities by value).
fn first_difference(manifest: &Value, live: &Value, path: String) -> Option<String> {
    match (manifest, live) {
        (Value::Object(wanted), Value::Object(found)) => wanted.iter().find_map(|(key, value)| {
            let at = if path.is_empty() { key.clone() } else { format!("{path}.{key}") };
            match found.get(key) {
                Some(found) => first_difference(value, found, at),
                None if value.is_null() => None,
                None => Some(at),
            }
        }),
        // Admission may append to a list (a pod's default tolerations): the manifest's elements
        // come first, element by element.
        (Value::Array(wanted), Value::Array(found)) if wanted.len() <= found.len() => wanted
            .iter()
            .zip(found)
            .enumerate()
            .find_map(|(i, (w, f))| first_difference(w, f, format!("{path}[{i}]"))),
        (wanted, found) if crate::grade::partial::scalars_equal(wanted, found, true) => None,
        // The empty path is the whole document (the caller names it).
        _ => Some(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn first_difference_reads_the_manifest_as_a_subset() {
        let manifest = json!({"spec": {"containers": [{"name": "a", "image": "x:1"}], "n": 1}});
        let live = json!({"spec": {"containers": [{"name": "a", "image": "x:1", "imagePullPolicy": "IfNotPresent"}], "n": 1, "extra": true}});
        assert_eq!(first_difference(&manifest, &live, String::new()), None);
        let changed = json!({"spec": {"containers": [{"name": "a", "image": "x:2"}], "n": 1}});
        assert_eq!(
            first_difference(&manifest, &changed, String::new()).as_deref(),
            Some("spec.containers[0].image")
        );
        let longer = json!({"spec": {"containers": [{"name": "a", "image": "x:1"}, {"name": "b"}], "n": 1}});
        assert_eq!(first_difference(&manifest, &longer, String::new()), None, "admission may append");
        let shorter = json!({"spec": {"containers": [], "n": 1}});
        assert_eq!(first_difference(&manifest, &shorter, String::new()).as_deref(), Some("spec.containers"));
        let quantity = json!({"memory": "1024Mi"});
        assert_eq!(first_difference(&quantity, &json!({"memory": "1Gi"}), String::new()), None);
    }

    #[test]
    fn differences_name_what_was_left_and_what_went_missing() {
        let state = |facts: Vec<Message>| {
            let mut state = LabState { facts: BTreeMap::new() };
            facts.into_iter().for_each(|f| state.insert(f));
            state
        };
        let object = |text: &str| msg!("target-named", target = text);
        let start = state(vec![
            msg!("selftest-fact-namespace", namespace = "lab"),
            object("DaemonSet lab/toolkit"),
            msg!("selftest-fact-node-resource", node = "a", key = "capacity.nvidia.com/gpu", value = "1"),
        ]);
        let after = state(vec![
            msg!("selftest-fact-namespace", namespace = "lab"),
            object("PrometheusRule lab/mine"),
            msg!("selftest-fact-node-label", node = "a", key = "k", value = "v"),
        ]);
        let english: Vec<String> = start.differences(&after).iter().map(|m| m.render(Lang::En)).collect();
        assert_eq!(
            english,
            [
                "left after reset: PrometheusRule lab/mine",
                "left after reset: node a label k=v",
                "missing after reset: DaemonSet lab/toolkit",
                "missing after reset: node a capacity.nvidia.com/gpu=1",
            ]
        );
        assert!(start.differences(&start.clone()).is_empty());
    }
}
