//! Grading against the nodes captured at `start`: a `rollout` check's `nodes` are the nodes its selector matched then (names and uids, hashed), not the ones carrying the label now.
//!
//! A check that counted "the nodes carrying the GPU label now" passed after the learner removed
//! the label from the affected node and put it on a CPU node (issue #15). `start` records the
//! nodes the selector matches, two facts each (the hashed name, the hashed `name uid`;
//! `engine::captured`). Grading finds each recorded node by name among the observed nodes, and
//! every node the selector matches now must be one of them.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{evidence::HashedFact, observed::selector_matches};
use crate::{i18n::Message, lab::model::LabelSelector, msg};

/// The fact keys of the `index`-th node captured: its name, and its name with its uid.
pub fn keys(index: usize) -> (String, String) {
    (format!("startNode.{index}.name"), format!("startNode.{index}.uid"))
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
) -> Option<(usize, Vec<Message>)> {
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
            problems.push(msg!("grade-captured-recreated", node = node_name));
        } else if !selector_matches(selector, node) {
            problems.push(msg!("grade-captured-no-longer-matches", node = node_name, selector = &wanted));
        } else if node.pointer("/spec/unschedulable").and_then(Value::as_bool) == Some(true) {
            problems.push(msg!("grade-captured-cordoned", node = node_name));
        }
    }
    if gone > 0 {
        problems.push(msg!("grade-captured-gone", count = gone, selector = &wanted));
    }
    for node in nodes.iter().filter(|n| selector_matches(selector, n) && !known.contains(&name_of(n))) {
        problems.push(msg!("grade-captured-new", node = name_of(node), selector = &wanted));
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
        let english: Vec<String> = judge(&selector, &facts, &changed)
            .unwrap()
            .1
            .iter()
            .map(|m| m.render(crate::session::Lang::En))
            .collect();
        assert_eq!(
            english,
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
