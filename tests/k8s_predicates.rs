//! Table-driven checks of the `k8s` predicates through the public API: DaemonSet placement and
//! the scheduler together, on the course's cluster shape (control plane, CPU worker, GPU and MIG
//! workers).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec};
use k8s_openapi::api::core::v1::{
    Container, Node, Pod, PodSpec, PodStatus, PodTemplateSpec, ResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use lab_runner::k8s::testing::node;
use lab_runner::k8s::{daemon, schedule};

/// The lab topology shape from issue 6: a tainted control plane, a CPU-only worker, two GPU
/// workers and a MIG (mixed) worker.
fn cluster() -> Vec<Node> {
    // Workers of 16 CPUs and 64Gi, larger than the builder's default.
    let worker = |name: &str| node(name).allocatable("cpu", "16").allocatable("memory", "64Gi");
    vec![
        worker("control-plane").taint("node-role.kubernetes.io/control-plane", None, "NoSchedule").build(),
        worker("cpu-1").build(),
        worker("gpu-1").label("nvidia.com/gpu.present", "true").gpus("4").build(),
        worker("gpu-2").label("nvidia.com/gpu.present", "true").gpus("4").build(),
        worker("mig-1")
            .label("nvidia.com/gpu.present", "true")
            .label("nvidia.com/mig.strategy", "mixed")
            .allocatable("nvidia.com/mig-1g.10gb", "7")
            .build(),
    ]
}

fn gpu_ds(node_selector: &[(&str, &str)], gpus: &str) -> DaemonSet {
    let limits = if gpus.is_empty() {
        None
    } else {
        Some(BTreeMap::from([("nvidia.com/gpu".to_string(), Quantity(gpus.into()))]))
    };
    DaemonSet {
        metadata: ObjectMeta {
            name: Some("gpu-ds".into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(DaemonSetSpec {
            selector: LabelSelector::default(),
            template: PodTemplateSpec {
                metadata: None,
                spec: Some(PodSpec {
                    node_selector: if node_selector.is_empty() {
                        None
                    } else {
                        Some(node_selector.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect())
                    },
                    containers: vec![Container {
                        name: "cuda".into(),
                        resources: Some(ResourceRequirements { limits, ..Default::default() }),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        status: None,
    }
}

/// The pod the DaemonSet controller would create for `node`.
fn daemon_pod_for(ds: &DaemonSet, node: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(format!("gpu-ds-{node}")),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: Some(daemon::daemon_pod_spec(ds, node)),
        status: Some(PodStatus { phase: Some("Pending".into()), ..Default::default() }),
    }
}

#[test]
fn daemonset_targets_by_selector_and_taints() {
    let nodes = cluster();
    // (case, DaemonSet, nodes it should run on, nodes where only existing pods may stay)
    let cases = [
        ("no selector", gpu_ds(&[], ""), vec!["cpu-1", "gpu-1", "gpu-2", "mig-1"], vec!["control-plane"]),
        (
            "gpu.present selector",
            gpu_ds(&[("nvidia.com/gpu.present", "true")], "1"),
            vec!["gpu-1", "gpu-2", "mig-1"],
            vec![],
        ),
    ];
    for (name, ds, run, keep) in cases {
        let mut should_run = Vec::new();
        let mut keep_only = Vec::new();
        for node in &nodes {
            let placement = daemon::node_should_run_daemon_pod(&ds, node);
            let node_name = node.metadata.name.clone().unwrap();
            if placement.should_run() {
                should_run.push(node_name);
            } else if placement.should_continue_running() {
                keep_only.push(node_name);
            }
        }
        assert_eq!(should_run, run, "{name}");
        assert_eq!(keep_only, keep, "{name}");
    }
}

#[test]
fn gpu_daemonset_without_selector_leaves_a_pending_pod_on_non_gpu_nodes() {
    // `NodeShouldRunDaemonPod` does not check resources (docs/daemonset.md), so the CPU worker gets a
    // pod too; the scheduler (evaluating only the pinned node) leaves it Pending.
    let nodes = cluster();
    let ds = gpu_ds(&[], "1");
    assert!(daemon::node_should_run_daemon_pod(&ds, &nodes[1]).should_run());
    let pod = daemon_pod_for(&ds, "cpu-1");
    let outcome = schedule::find_feasible_nodes(&pod, &nodes, &[]).unwrap();
    assert_eq!(
        outcome.to_string_if_unschedulable().unwrap(),
        "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling."
    );
    // The same pod pinned to a GPU worker binds there.
    let pod = daemon_pod_for(&ds, "gpu-2");
    assert_eq!(
        schedule::schedule_pod(&pod, &nodes, &[]).unwrap(),
        schedule::ScheduleDecision::Bind { node: "gpu-2".into() }
    );
}

#[test]
fn resources_variant_new_pod_cannot_fit_beside_the_old_one() {
    // The stuck-rollout "resources" variant: every GPU worker has 4 GPUs; the old daemon pod
    // holds 3 of them, the new template asks for 2 on the node being replaced while that node
    // still has another workload holding 3.
    let nodes = cluster();
    let ds = gpu_ds(&[("nvidia.com/gpu.present", "true")], "2");
    let mut busy = daemon_pod_for(&gpu_ds(&[], "3"), "gpu-1");
    busy.metadata.name = Some("training".into());
    busy.spec.as_mut().unwrap().node_name = Some("gpu-1".into());
    busy.status.as_mut().unwrap().phase = Some("Running".into());
    let new_pod = daemon_pod_for(&ds, "gpu-1");
    let failure = match schedule::find_feasible_nodes(&new_pod, &nodes, &[busy]).unwrap() {
        schedule::FilterOutcome::Unschedulable(failure) => failure,
        schedule::FilterOutcome::Feasible(nodes) => panic!("expected Pending, got {nodes:?}"),
    };
    assert_eq!(
        failure.to_string(),
        "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 4 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling."
    );
    let condition = failure.pod_scheduled_condition(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
    ));
    assert_eq!((condition.status.as_str(), condition.reason.as_deref()), ("False", Some("Unschedulable")));
}

#[test]
fn plain_gpu_pod_table() {
    let nodes = cluster();
    let pod = |resource: &str, count: &str, selector: Option<(&str, &str)>| Pod {
        metadata: ObjectMeta {
            name: Some("p".into()),
            namespace: Some("team-a".into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            node_selector: selector.map(|(k, v)| BTreeMap::from([(k.to_string(), v.to_string())])),
            containers: vec![Container {
                name: "c".into(),
                resources: Some(ResourceRequirements {
                    limits: Some(BTreeMap::from([(resource.to_string(), Quantity(count.into()))])),
                    ..Default::default()
                }),
                ..Default::default()
            }],
            ..Default::default()
        }),
        status: None,
    };
    // (case, pod, expected node or FailedScheduling text)
    let cases = [
        ("one gpu", pod("nvidia.com/gpu", "1", None), "gpu-1"),
        ("one mig slice", pod("nvidia.com/mig-1g.10gb", "1", None), "mig-1"),
        (
            "more gpus than any node has",
            pod("nvidia.com/gpu", "8", None),
            "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 4 Insufficient nvidia.com/gpu. preemption: 0/5 nodes are available: 1 Preemption is not helpful for scheduling, 4 No preemption victims found for incoming pod.",
        ),
        (
            "old manifest on the MIG node",
            pod("nvidia.com/gpu", "1", Some(("nvidia.com/mig.strategy", "mixed"))),
            "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling.",
        ),
    ];
    for (name, pod, expected) in cases {
        let got = match schedule::schedule_pod(&pod, &nodes, &[]).unwrap() {
            schedule::ScheduleDecision::Bind { node } => node,
            schedule::ScheduleDecision::Unschedulable(failure) => failure.to_string(),
        };
        assert_eq!(got, expected, "{name}");
    }
}
