//! The simulator at cluster scale (issue #17): addresses past 255 nodes.

use std::collections::BTreeSet;

use k8s_openapi::jiff::SignedDuration;
use lab_runner::sim::{
    controllers::{Config, Controllers},
    harness::Harness,
    lifecycle, resources,
    topology::Topology,
};
use serde_json::json;

/// Pods on the 300th node get addresses in that node's own /24 (not the 44th node's, as
/// `index % 256` gave), and every pod IP in the cluster is distinct.
#[tokio::test]
async fn pods_past_the_256th_node_get_distinct_addresses_in_their_nodes_range() {
    let sim = Harness::start();
    let types = resources::built_in();
    let topology = Topology::generated(300);
    lifecycle::seed(&sim.state.store, &types, &topology, sim.state.clock.now()).unwrap();
    let mut control = Controllers::new(sim.state.clone(), Config::defaults()).unwrap();
    let pods = resources::find(&types, "", "v1", "pods").unwrap();
    let nodes = resources::find(&types, "", "v1", "nodes").unwrap();
    let chosen = ["worker-44", "worker-300", "worker-300", "worker-1"];
    for (i, node) in chosen.iter().enumerate() {
        sim.state
            .store
            .create(
                pods,
                json!({"metadata": {"name": format!("p{i}"), "namespace": "default"},
                "spec": {"nodeName": node, "containers": [{"name": "c", "image": "nginx:1.27"}]}}),
            )
            .unwrap();
    }
    control.advance(SignedDuration::from_secs(30)).unwrap();
    let mut seen = BTreeSet::new();
    for (i, node_name) in chosen.iter().enumerate() {
        let pod = sim.state.store.get_value(pods, "default", &format!("p{i}")).unwrap();
        let node = sim.state.store.get_value(nodes, "", node_name).unwrap();
        let ip = pod["status"]["podIP"].as_str().expect("a pod IP").to_string();
        let range = node["spec"]["podCIDR"].as_str().unwrap().trim_end_matches("0/24").to_string();
        assert!(ip.starts_with(&range), "{ip} outside {node_name}'s {range}0/24");
        assert_eq!(pod["status"]["hostIP"], node["status"]["addresses"][0]["address"]);
        assert!(seen.insert(ip), "duplicate pod IP");
    }
    let hosts: BTreeSet<_> = chosen
        .iter()
        .map(|n| {
            sim.state.store.get_value(nodes, "", n).unwrap()["status"]["addresses"][0]["address"].to_string()
        })
        .collect();
    assert_eq!(hosts.len(), 3, "three distinct nodes, three distinct host IPs: {hosts:?}");
}
