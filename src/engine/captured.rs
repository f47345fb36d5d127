//! The nodes a `rollout` check must cover, captured at `start` (names and uids, salted and hashed like every fact) so relabelling, deleting or cordoning a node changes nothing that counts.
//!
//! A check that counted "the nodes carrying the GPU label now" passed after the learner removed
//! the label from the affected node and put it on a CPU node (issue #15). The nodes matching a
//! rollout check's `nodes` selector when the lab starts are recorded instead, two facts each:
//! the hashed name and the hashed `name uid`. Grading then finds each recorded node by name among
//! the observed nodes, and every node the selector matches now must be one of them.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use serde_json::Value;

use super::{
    Error, Result,
    cluster::{Cluster, list_all},
    inventory::{HashedFact, Inventory},
};
use crate::{
    grade::observed::selector_matches,
    lab::model::{Expectation, Lab, LabelSelector},
};

/// The fact keys of the `index`-th node captured: its name, and its name with its uid.
fn keys(index: usize) -> (String, String) {
    (format!("startNode.{index}.name"), format!("startNode.{index}.uid"))
}

/// The selectors of the lab's `rollout` checks that name the nodes to cover.
fn selectors(lab: &Lab) -> Vec<&LabelSelector> {
    let mut found: Vec<&LabelSelector> = Vec::new();
    for expectation in lab.tasks.iter().flat_map(|t| &t.expect) {
        if let Expectation::Rollout(check) = expectation
            && let Some(selector) = &check.nodes
            && !found.contains(&selector)
        {
            found.push(selector);
        }
    }
    found
}

/// Captures the nodes any `rollout` check's `nodes` selector matches, unless this inventory
/// already holds them (a second `start` must not recapture a relabelled cluster).
pub async fn capture(cluster: &Cluster, lab: &Lab, inventory: &mut Inventory) -> Result<()> {
    let selectors = selectors(lab);
    if selectors.is_empty() || inventory.facts.contains_key(&keys(0).0) {
        return Ok(());
    }
    let api: Api<Node> = Api::all(cluster.client.clone());
    let nodes = list_all(&api).await.map_err(|e| Error::api("listing nodes to record them", &e))?.items;
    let mut index = 0;
    for node in nodes {
        let value = serde_json::to_value(&node).unwrap_or(Value::Null);
        if !selectors.iter().any(|s| selector_matches(s, &value)) {
            continue;
        }
        let name = node.metadata.name.unwrap_or_default();
        let uid = node.metadata.uid.unwrap_or_default();
        let (name_key, uid_key) = keys(index);
        inventory.facts.insert(name_key, HashedFact::new(&name));
        inventory.facts.insert(uid_key, HashedFact::new(&format!("{name} {uid}")));
        index += 1;
    }
    Ok(())
}

/// The recorded nodes, one pair of hashed facts each; empty when none were captured.
fn recorded(facts: &BTreeMap<String, HashedFact>) -> Vec<(&HashedFact, &HashedFact)> {
    (0..).map(keys).map_while(|(name, uid)| Some((facts.get(&name)?, facts.get(&uid)?))).collect()
}

/// How many nodes were captured at start (`None`: none were, e.g. a lab started by an older
/// build), and what is wrong with them now: each line names a node and what it observably is.
pub fn judge(
    selector: &LabelSelector,
    facts: &BTreeMap<String, HashedFact>,
    nodes: &[Value],
) -> Option<(usize, Vec<String>)> {
    let recorded = recorded(facts);
    if recorded.is_empty() {
        return None;
    }
    let wanted = selector_text(selector);
    let mut problems = Vec::new();
    let mut known: Vec<&str> = Vec::new();
    let mut gone = 0;
    for (name, identity) in &recorded {
        let Some(node) = nodes.iter().find(|n| name.matches(name_of(n), false)) else {
            gone += 1;
            continue;
        };
        let node_name = name_of(node);
        known.push(node_name);
        if !identity.matches(&format!("{node_name} {}", uid_of(node)), false) {
            problems
                .push(format!("node {node_name} is not the node of that name at start (it was recreated)"));
        } else if !selector_matches(selector, node) {
            problems.push(format!("node {node_name} no longer matches {wanted}"));
        } else if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
            problems.push(format!("node {node_name} is cordoned"));
        }
    }
    if gone > 0 {
        let (nodes, exist) = if gone == 1 { ("node", "exists") } else { ("nodes", "exist") };
        problems.push(format!("{gone} {nodes} matching {wanted} at start no longer {exist}"));
    }
    for node in nodes.iter().filter(|n| selector_matches(selector, n) && !known.contains(&name_of(n))) {
        problems.push(format!("node {} did not match {wanted} at start: it does not count", name_of(node)));
    }
    Some((recorded.len(), problems))
}

fn name_of(node: &Value) -> &str {
    node.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()
}

fn uid_of(node: &Value) -> &str {
    node.pointer("/metadata/uid").and_then(Value::as_str).unwrap_or_default()
}

/// `nvidia.com/gpu.present=true` for a selector, as `kubectl get -l` would take it.
fn selector_text(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> = selector.match_labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
    parts.extend(
        selector.match_expressions.iter().map(|e| format!("{} {:?} {:?}", e.key, e.operator, e.values)),
    );
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn node(name: &str, uid: &str, gpu: bool, cordoned: bool) -> Value {
        let labels = if gpu { json!({"nvidia.com/gpu.present": "true"}) } else { json!({}) };
        json!({"kind": "Node", "metadata": {"name": name, "uid": uid, "labels": labels},
               "spec": {"unschedulable": cordoned}})
    }

    fn captured(nodes: &[(&str, &str)]) -> BTreeMap<String, HashedFact> {
        let mut facts = BTreeMap::new();
        for (index, (name, uid)) in nodes.iter().enumerate() {
            let (name_key, uid_key) = keys(index);
            facts.insert(name_key, HashedFact::new(name));
            facts.insert(uid_key, HashedFact::new(&format!("{name} {uid}")));
        }
        facts
    }

    #[test]
    fn relabelling_deleting_recreating_or_cordoning_a_node_is_seen() {
        let selector = LabelSelector {
            match_labels: BTreeMap::from([("nvidia.com/gpu.present".into(), "true".into())]),
            ..LabelSelector::default()
        };
        let facts = captured(&[("gpu-1", "u1"), ("gpu-2", "u2"), ("gpu-3", "u3"), ("gpu-4", "u4")]);
        let same = [
            node("gpu-1", "u1", true, false),
            node("gpu-2", "u2", true, false),
            node("gpu-3", "u3", true, false),
        ];
        let mut all = same.to_vec();
        all.push(node("gpu-4", "u4", true, false));
        assert_eq!(judge(&selector, &facts, &all), Some((4, vec![])));
        assert_eq!(judge(&selector, &BTreeMap::new(), &all), None, "nothing captured: nothing judged");

        let changed = [
            node("gpu-1", "u1", false, false),
            node("gpu-2", "u2-new", true, false),
            node("gpu-3", "u3", true, true),
            node("cpu-1", "c1", true, false),
        ];
        assert_eq!(
            judge(&selector, &facts, &changed).unwrap().1,
            [
                "node gpu-1 no longer matches nvidia.com/gpu.present=true",
                "node gpu-2 is not the node of that name at start (it was recreated)",
                "node gpu-3 is cordoned",
                "1 node matching nvidia.com/gpu.present=true at start no longer exists",
                "node cpu-1 did not match nvidia.com/gpu.present=true at start: it does not count",
            ]
        );
    }
}
