//! Object builders for tests: nodes and pods as a kubelet and a user would write them, typed or as JSON.
//!
//! The one definition of each builder, used by the unit tests of every layer and by the
//! integration tests (through the `test-support` feature). A [`node`] starts as a Ready,
//! schedulable worker with 8 CPUs, 32Gi and 110 pods allocatable and the labels the kubelet sets
//! (`pkg/kubelet/kubelet_node_status.go` `initialNode`); a [`pod`] starts as one `main` container
//! in `default`, Pending. Each method changes one thing a test names.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, Node, NodeAddress, NodeAffinity, NodeCondition, NodeSelector,
    NodeSelectorRequirement, NodeSelectorTerm, NodeSpec, NodeStatus, Pod, PodSpec, PodStatus,
    ResourceRequirements, Taint, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

/// The resources a [`node`] starts with, allocatable and capacity alike.
pub const NODE_ALLOCATABLE: [(&str, &str); 3] = [("cpu", "8"), ("memory", "32Gi"), ("pods", "110")];

/// A node under construction; [`NodeBuilder::build`] or [`NodeBuilder::json`] ends it.
#[derive(Debug, Clone)]
pub struct NodeBuilder(Node);

/// A Ready, schedulable worker named `name` (see the module header for what it starts with).
pub fn node(name: &str) -> NodeBuilder {
    let resources: BTreeMap<String, Quantity> =
        NODE_ALLOCATABLE.iter().map(|(k, v)| (k.to_string(), Quantity(v.to_string()))).collect();
    NodeBuilder(Node {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: Some(BTreeMap::from([
                ("kubernetes.io/hostname".to_string(), name.to_string()),
                ("kubernetes.io/os".to_string(), "linux".to_string()),
            ])),
            ..Default::default()
        },
        spec: Some(NodeSpec::default()),
        status: Some(NodeStatus {
            capacity: Some(resources.clone()),
            allocatable: Some(resources),
            addresses: Some(vec![NodeAddress {
                type_: "InternalIP".into(),
                address: format!("10.0.0.{}", name.len()),
            }]),
            conditions: Some(vec![NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                reason: Some("KubeletReady".into()),
                ..Default::default()
            }]),
            ..Default::default()
        }),
    })
}

impl NodeBuilder {
    fn status(&mut self) -> &mut NodeStatus {
        self.0.status.get_or_insert_with(NodeStatus::default)
    }

    /// Adds (or replaces) the label `key`.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0.metadata.labels.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
        self
    }

    /// `metadata.uid` (a node deleted and recreated under the same name gets a new one).
    pub fn uid(mut self, uid: &str) -> Self {
        self.0.metadata.uid = Some(uid.into());
        self
    }

    /// Adds the taint `key[=value]:effect`.
    pub fn taint(mut self, key: &str, value: Option<&str>, effect: &str) -> Self {
        let spec = self.0.spec.get_or_insert_with(NodeSpec::default);
        spec.taints.get_or_insert_with(Vec::new).push(Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            ..Default::default()
        });
        self
    }

    /// `kubectl cordon`: `spec.unschedulable`.
    pub fn cordoned(mut self) -> Self {
        self.0.spec.get_or_insert_with(NodeSpec::default).unschedulable = Some(true);
        self
    }

    /// Sets `resource` in both capacity and allocatable, as a device plugin's advertisement does.
    pub fn allocatable(mut self, resource: &str, value: &str) -> Self {
        let status = self.status();
        for list in [&mut status.capacity, &mut status.allocatable] {
            list.get_or_insert_with(BTreeMap::new).insert(resource.into(), Quantity(value.into()));
        }
        self
    }

    /// `nvidia.com/gpu` advertised `count` times.
    pub fn gpus(self, count: &str) -> Self {
        self.allocatable("nvidia.com/gpu", count)
    }

    /// The node's Ready condition set to `status` (`"False"`, `"Unknown"`).
    pub fn ready(mut self, status: &str) -> Self {
        for condition in self.status().conditions.iter_mut().flatten() {
            if condition.type_ == "Ready" {
                condition.status = status.into();
            }
        }
        self
    }

    /// The typed node.
    pub fn build(self) -> Node {
        self.0
    }

    /// The node as the API serves it (`apiVersion` and `kind` included).
    pub fn json(self) -> Value {
        serde_json::to_value(self.0).expect("a Node serializes")
    }
}

/// A pod under construction; [`PodBuilder::build`] or [`PodBuilder::json`] ends it.
#[derive(Debug, Clone)]
pub struct PodBuilder(Pod);

/// A Pending pod `name` in `default` with one container `main` (image `busybox`).
pub fn pod(name: &str) -> PodBuilder {
    PodBuilder(Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some("busybox".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: Some(PodStatus { phase: Some("Pending".into()), ..Default::default() }),
    })
}

impl PodBuilder {
    fn spec(&mut self) -> &mut PodSpec {
        self.0.spec.get_or_insert_with(PodSpec::default)
    }

    fn resources(&mut self) -> &mut ResourceRequirements {
        self.spec().containers[0].resources.get_or_insert_with(ResourceRequirements::default)
    }

    /// Moves the pod to `namespace`.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.0.metadata.namespace = Some(namespace.into());
        self
    }

    /// Adds (or replaces) the label `key`.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.0.metadata.labels.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
        self
    }

    /// The first container's image.
    pub fn image(mut self, image: &str) -> Self {
        self.spec().containers[0].image = Some(image.into());
        self
    }

    /// Replaces the containers.
    pub fn containers(mut self, containers: Vec<Container>) -> Self {
        self.spec().containers = containers;
        self
    }

    /// A limit on the first container.
    pub fn limit(mut self, resource: &str, value: &str) -> Self {
        let limits = self.resources().limits.get_or_insert_with(BTreeMap::new);
        limits.insert(resource.into(), Quantity(value.into()));
        self
    }

    /// A request on the first container.
    pub fn request(mut self, resource: &str, value: &str) -> Self {
        let requests = self.resources().requests.get_or_insert_with(BTreeMap::new);
        requests.insert(resource.into(), Quantity(value.into()));
        self
    }

    /// `nvidia.com/gpu: count` as a limit (the only way an extended resource is asked for).
    pub fn gpus(self, count: &str) -> Self {
        self.limit("nvidia.com/gpu", count)
    }

    /// Bound to `node` and Running there.
    pub fn on(self, node: &str) -> Self {
        self.node_name(node).phase("Running")
    }

    /// `spec.nodeName` only (bound, phase unchanged).
    pub fn node_name(mut self, node: &str) -> Self {
        self.spec().node_name = Some(node.into());
        self
    }

    /// `status.phase`; `None` removes it (a pod no kubelet has reported on).
    pub fn phase(mut self, phase: impl Into<Option<&'static str>>) -> Self {
        self.0.status.get_or_insert_with(PodStatus::default).phase = phase.into().map(Into::into);
        self
    }

    /// A `nodeSelector` entry.
    pub fn selector(mut self, key: &str, value: &str) -> Self {
        self.spec().node_selector.get_or_insert_with(BTreeMap::new).insert(key.into(), value.into());
        self
    }

    /// A toleration of `key` with `operator` (`Exists`, `Equal`) for `effect` (all effects if `None`).
    pub fn tolerate(mut self, key: &str, operator: &str, effect: Option<&str>) -> Self {
        self.spec().tolerations.get_or_insert_with(Vec::new).push(Toleration {
            key: Some(key.into()),
            operator: Some(operator.into()),
            effect: effect.map(Into::into),
            ..Default::default()
        });
        self
    }

    /// Required node affinity on `metadata.name In [node]`, as the DaemonSet controller pins its pods.
    pub fn pinned_to(mut self, node: &str) -> Self {
        self.spec().affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_fields: Some(vec![NodeSelectorRequirement {
                            key: "metadata.name".into(),
                            operator: "In".into(),
                            values: Some(vec![node.into()]),
                        }]),
                        match_expressions: None,
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        self
    }

    /// `spec.priority` (as the priority admission plugin resolves it).
    pub fn priority(mut self, priority: i32) -> Self {
        self.spec().priority = Some(priority);
        self
    }

    /// `preemptionPolicy: Never`.
    pub fn never_preempt(mut self) -> Self {
        self.spec().preemption_policy = Some("Never".into());
        self
    }

    /// The typed pod.
    pub fn build(self) -> Pod {
        self.0
    }

    /// The pod as a client sends it (`apiVersion` and `kind` included).
    pub fn json(self) -> Value {
        serde_json::to_value(self.0).expect("a Pod serializes")
    }
}
