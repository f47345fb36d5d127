//! Grading against the nodes captured at `start`: a `rollout` check's `nodes` are the nodes its selector matched then (names and uids), not the ones carrying the label now.
//!
//! A check that counted "the nodes carrying the GPU label now" passed after the learner removed
//! the label from the affected node and put it on a CPU node (issue #15). `start` records the
//! nodes the selector matches, name and uid (`engine::captured`), in the sealed records. Grading
//! finds each recorded node by name among the observed nodes, and every node the selector matches
//! now must be one of them.

use serde_json::Value;

use super::{evidence::StartNode, observed::selector_matches};
use crate::{i18n::Message, lab::model::LabelSelector, msg};

/// How many nodes were captured at start, and what is wrong with them now: each line names a
/// node and what it observably is. `recorded` must not be empty (no record is an error the
/// caller reports, never a fallback to the nodes labelled now).
pub fn judge(selector: &LabelSelector, recorded: &[StartNode], nodes: &[Value]) -> (usize, Vec<Message>) {
    let wanted = selector_text(selector);
    let mut problems = Vec::new();
    let mut known: Vec<&str> = Vec::new();
    let mut gone = 0;
    for start_node in recorded {
        let Some(node) = nodes.iter().find(|n| name_of(n) == start_node.name) else {
            gone += 1;
            continue;
        };
        let node_name = name_of(node);
        known.push(node_name);
        if uid_of(node) != start_node.uid {
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
    (recorded.len(), problems)
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
    use std::collections::BTreeMap;

    use super::*;
    use crate::k8s::testing::node;

    fn captured(nodes: &[(&str, &str)]) -> Vec<StartNode> {
        nodes.iter().map(|(name, uid)| StartNode { name: name.to_string(), uid: uid.to_string() }).collect()
    }

    #[test]
    fn relabelling_deleting_recreating_or_cordoning_a_node_is_seen() {
        let selector = LabelSelector {
            match_labels: BTreeMap::from([("nvidia.com/gpu.present".into(), "true".into())]),
            ..LabelSelector::default()
        };
        let facts = captured(&[("gpu-1", "u1"), ("gpu-2", "u2"), ("gpu-3", "u3"), ("gpu-4", "u4")]);
        let same = [
            node("gpu-1").uid("u1").label("nvidia.com/gpu.present", "true").json(),
            node("gpu-2").uid("u2").label("nvidia.com/gpu.present", "true").json(),
            node("gpu-3").uid("u3").label("nvidia.com/gpu.present", "true").json(),
        ];
        let mut all = same.to_vec();
        all.push(node("gpu-4").uid("u4").label("nvidia.com/gpu.present", "true").json());
        assert_eq!(judge(&selector, &facts, &all), (4, vec![]));

        let changed = [
            node("gpu-1").uid("u1").json(),
            node("gpu-2").uid("u2-new").label("nvidia.com/gpu.present", "true").json(),
            node("gpu-3").uid("u3").label("nvidia.com/gpu.present", "true").cordoned().json(),
            node("cpu-1").uid("c1").label("nvidia.com/gpu.present", "true").json(),
        ];
        let english: Vec<String> =
            judge(&selector, &facts, &changed).1.iter().map(|m| m.render(crate::session::Lang::En)).collect();
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
