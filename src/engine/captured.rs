//! Capturing at `start` the nodes a `rollout` check must cover (names and uids, in the sealed records); `grade::captured` grades against them.

use k8s_openapi::api::core::v1::Node;
use kube::api::Api;
use serde_json::Value;

use super::{
    Error, Result,
    cluster::{Cluster, list_all},
    inventory::{Inventory, StartNode},
};
use crate::{
    grade::observed::selector_matches,
    lab::model::{Expectation, Lab, LabelSelector},
    msg,
};

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
    if selectors.is_empty() || !inventory.start_nodes.is_empty() {
        return Ok(());
    }
    let api: Api<Node> = Api::all(cluster.client.clone());
    let nodes = list_all(&api).await.map_err(|e| Error::api(msg!("action-list-nodes-to-record"), &e))?.items;
    for node in nodes {
        let value = serde_json::to_value(&node).unwrap_or(Value::Null);
        if !selectors.iter().any(|s| selector_matches(s, &value)) {
            continue;
        }
        let name = node.metadata.name.unwrap_or_default();
        let uid = node.metadata.uid.unwrap_or_default();
        inventory.start_nodes.push(StartNode { name, uid });
    }
    Ok(())
}
