//! Unit tests of the filter pass and the FailedScheduling text.

use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;
use crate::testing::{node, pod};

fn message(incoming: &Pod, nodes: &[Node], pods: &[Pod]) -> String {
    find_feasible_nodes(incoming, nodes, pods)
        .unwrap()
        .to_string_if_unschedulable()
        .expect("expected unschedulable")
}

fn control_plane() -> Node {
    node("control-plane").taint("node-role.kubernetes.io/control-plane", None, "NoSchedule").build()
}

#[test]
fn five_node_example_from_the_brief() {
    // 1 tainted control plane, 1 CPU node outside the selector... and 3 full GPU nodes.
    let nodes = vec![
        control_plane(),
        node("cpu-1").build(),
        node("gpu-1").label("gpu", "true").gpus("1").build(),
        node("gpu-2").label("gpu", "true").gpus("1").build(),
        node("gpu-3").label("gpu", "true").gpus("1").build(),
    ];
    let pods = vec![
        pod("a").gpus("1").on("gpu-1").build(),
        pod("b").gpus("1").on("gpu-2").build(),
        pod("c").gpus("1").on("gpu-3").build(),
    ];
    let incoming = pod("train").gpus("1").selector("gpu", "true").build();
    let ours = message(&incoming, &nodes, &pods);
    // The brief's line lists "had untolerated taint" before "didn't match"; upstream sorts the
    // histogram with sort.Strings (types.go FitError.Error), and "1 node(s) d…" < "1 node(s) h…",
    // so v1.33 prints the affinity entry first. Same entries, upstream order:
    let brief = "0/5 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) didn't match Pod's node affinity/selector, 3 Insufficient nvidia.com/gpu. preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.";
    assert_eq!(
        ours,
        "0/5 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 3 Insufficient nvidia.com/gpu. preemption: 0/5 nodes are available: 2 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
    );
    let entries = |text: &str| {
        let head =
            text.split(". preemption: ").next().unwrap().trim_start_matches("0/5 nodes are available: ");
        let mut entries: Vec<String> = head.split(", ").map(str::to_string).collect();
        entries.sort();
        entries
    };
    assert_eq!(entries(&ours), entries(brief));
    assert_eq!(ours.split(". preemption: ").nth(1), brief.split(". preemption: ").nth(1));
}

#[test]
fn gpu_domain_worked_example_selector() {
    // docs/gpu.md's case: 1 full GPU node, 2 CPU-only nodes, a nodeSelector (framework/types.go
    // `FitError.Error`, the NodeAffinity and NodeResourcesFit reasons).
    let nodes = vec![
        node("gpu-1").label("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB").gpus("1").build(),
        node("cpu-1").build(),
        node("cpu-2").build(),
    ];
    let pods = vec![pod("busy").gpus("1").on("gpu-1").build()];
    let incoming = pod("train").gpus("1").selector("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB").build();
    assert_eq!(
        message(&incoming, &nodes, &pods),
        "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."
    );
}

#[test]
fn gpu_domain_worked_example_tainted_gpu_node_v133_tail() {
    // A tainted GPU node and two CPU-only nodes: v1.33 predates kubernetes/kubernetes#131345,
    // so a node with no GPU allocatable is still Unschedulable ("No preemption victims found").
    let nodes = vec![
        node("gpu-1").taint("nvidia.com/gpu", Some("present"), "NoSchedule").gpus("4").build(),
        node("cpu-1").build(),
        node("cpu-2").build(),
    ];
    let incoming = pod("train").gpus("1").build();
    assert_eq!(
        message(&incoming, &nodes, &[]),
        "0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    );
}

#[test]
fn captured_mixed_example() {
    // A message seen on a cluster: a taint with a value, and two nodes short of CPU.
    let nodes = vec![
        node("n1").taint("machine-check-exception", Some("memory"), "NoExecute").build(),
        node("n2").build(),
        node("n3").build(),
    ];
    let pods =
        vec![pod("x").request("cpu", "7").on("n2").build(), pod("y").request("cpu", "7").on("n3").build()];
    let incoming = pod("big").request("cpu", "2").build();
    assert_eq!(
        message(&incoming, &nodes, &pods),
        "0/3 nodes are available: 1 node(s) had untolerated taint {machine-check-exception: memory}, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod."
    );
}

#[test]
fn fidelity_example_differs_from_v128_only_by_the_final_period() {
    // The v1.28 text ends in `..` (`SeparatorFormat = " %v."`); v1.33's FitError.Error
    // appends the PostFilter message with " %v" (no extra period), so ours is that text minus
    // one final period.
    let v128 = "0/3 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..";
    let nodes = vec![control_plane(), node("gpu-1").gpus("1").build(), node("gpu-2").gpus("1").build()];
    let pods = vec![pod("a").gpus("1").on("gpu-1").build(), pod("b").gpus("1").on("gpu-2").build()];
    let ours = message(&pod("train").gpus("1").build(), &nodes, &pods);
    assert_eq!(format!("{ours}."), v128);
    assert!(ours.ends_with("incoming pod.") && !ours.ends_with(".."));
}

#[test]
fn daemonset_pod_pinned_by_match_fields_only_evaluates_its_node() {
    // The ≥v1.31 form (NodeToStatus' absent nodes), again minus the v1.28-era `..`.
    let newer = "0/3 nodes are available: 1 Insufficient nvidia.com/gpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..";
    let nodes = vec![node("cpu-1").build(), node("gpu-1").gpus("1").build(), node("gpu-2").gpus("1").build()];
    let incoming = pod("ds-x").gpus("1").pinned_to("cpu-1").build();
    let ours = message(&incoming, &nodes, &[]);
    assert_eq!(format!("{ours}."), newer);
}

#[test]
fn pinned_to_a_missing_node_reports_every_node_absent() {
    let nodes = vec![node("a").build(), node("b").build()];
    let incoming = pod("ds-x").pinned_to("gone").build();
    assert_eq!(
        message(&incoming, &nodes, &[]),
        "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

#[test]
fn conflicting_pins_are_a_prefilter_rejection() {
    let nodes = vec![node("a").build(), node("b").build()];
    let mut incoming = pod("x").build();
    let term = NodeSelectorTerm {
        match_fields: Some(vec![
            NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: Some(vec!["a".into()]),
            },
            NodeSelectorRequirement {
                key: "metadata.name".into(),
                operator: "In".into(),
                values: Some(vec!["b".into()]),
            },
        ]),
        match_expressions: None,
    };
    incoming.spec.as_mut().unwrap().affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![term],
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        message(&incoming, &nodes, &[]),
        "0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

#[test]
fn preemption_policy_never() {
    let nodes = vec![node("gpu-1").gpus("1").build()];
    let pods = vec![pod("a").gpus("1").on("gpu-1").build()];
    let incoming = pod("x").gpus("1").never_preempt().build();
    let text = message(&incoming, &nodes, &pods);
    assert_eq!(
        text,
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: not eligible due to preemptionPolicy=Never."
    );
    // The literal postfix of default_preemption.go `PostFilter`.
    assert!(text.ends_with("preemption: not eligible due to preemptionPolicy=Never."));
}

#[test]
fn lower_priority_pods_make_a_candidate_and_the_message_has_no_preemption_part() {
    let nodes = vec![node("gpu-1").gpus("1").build()];
    let pods = vec![pod("low").gpus("1").on("gpu-1").priority(-10).build()];
    let incoming = pod("high").gpus("1").build();
    let FilterOutcome::Unschedulable(ScheduleFailure::Unfit(fit_error)) =
        find_feasible_nodes(&incoming, &nodes, &pods).unwrap()
    else {
        panic!("expected a fit error")
    };
    assert_eq!(
        fit_error.preemption,
        Preemption::Candidates(vec![PreemptionCandidate {
            node: "gpu-1".into(),
            victims: vec!["default/low".into()]
        }])
    );
    assert_eq!(fit_error.to_string(), "0/1 nodes are available: 1 Insufficient nvidia.com/gpu.");
}

#[test]
fn victims_that_do_not_free_enough_keep_the_resource_reason() {
    let nodes = vec![node("gpu-1").gpus("2").build()];
    let pods = vec![
        pod("low").gpus("1").on("gpu-1").priority(-10).build(),
        pod("same").gpus("1").on("gpu-1").build(),
    ];
    let incoming = pod("x").gpus("2").build();
    assert_eq!(
        message(&incoming, &nodes, &pods),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 Insufficient nvidia.com/gpu."
    );
}

#[test]
fn first_failing_filter_wins_in_plugin_order() {
    // Cordoned AND tainted AND wrong labels AND no GPU: only "were unschedulable" is reported.
    let everything_wrong = node("n").cordoned().taint("t", None, "NoSchedule").gpus("0").build();
    let incoming = pod("x").gpus("1").selector("gpu", "true").build();
    let status = filter_node(
        incoming.spec.as_ref().unwrap(),
        &resources::pod_scheduler_requests(incoming.spec.as_ref().unwrap()).unwrap(),
        &everything_wrong,
        &resources::node_allocatable(&everything_wrong).unwrap(),
        &NodeUsage::default(),
    )
    .unwrap();
    assert_eq!(status.plugin, Some(Plugin::NodeUnschedulable));
    assert_eq!(status.reasons, vec!["node(s) were unschedulable"]);
    // Tolerating the cordon moves on to NodeName, then taints, then affinity, then resources.
    let steps = [
        (pod("x").gpus("1").selector("gpu", "true").build(), Plugin::NodeUnschedulable),
        (
            pod("x")
                .gpus("1")
                .selector("gpu", "true")
                .tolerate("node.kubernetes.io/unschedulable", "Exists", None)
                .node_name("other")
                .build(),
            Plugin::NodeName,
        ),
        (
            pod("x")
                .gpus("1")
                .selector("gpu", "true")
                .tolerate("node.kubernetes.io/unschedulable", "Exists", None)
                .build(),
            Plugin::TaintToleration,
        ),
        (
            pod("x")
                .gpus("1")
                .selector("gpu", "true")
                .tolerate("node.kubernetes.io/unschedulable", "Exists", None)
                .tolerate("t", "Exists", Some("NoSchedule"))
                .build(),
            Plugin::NodeAffinity,
        ),
        (
            pod("x")
                .gpus("1")
                .tolerate("node.kubernetes.io/unschedulable", "Exists", None)
                .tolerate("t", "Exists", Some("NoSchedule"))
                .build(),
            Plugin::NodeResourcesFit,
        ),
    ];
    for (incoming, plugin) in steps {
        let spec = incoming.spec.as_ref().unwrap();
        let status = filter_node(
            spec,
            &resources::pod_scheduler_requests(spec).unwrap(),
            &everything_wrong,
            &resources::node_allocatable(&everything_wrong).unwrap(),
            &NodeUsage::default(),
        )
        .unwrap();
        assert_eq!(status.plugin, Some(plugin), "{status:?}");
    }
}

#[test]
fn literal_reason_strings_from_upstream() {
    // The filter plugins' reasons (node_unschedulable.go, node_name.go, node_affinity.go), copied
    // as literals.
    assert_eq!(REASON_UNSCHEDULABLE, "node(s) were unschedulable");
    assert_eq!(REASON_NODE_NAME, "node(s) didn't match the requested node name");
    assert_eq!(REASON_NODE_AFFINITY, "node(s) didn't match Pod's node affinity/selector");
    let nodes = vec![node("n1").cordoned().build(), node("n2").build()];
    let incoming = pod("x").node_name("n3").build();
    assert_eq!(
        message(&incoming, &nodes, &[]),
        "0/2 nodes are available: 1 node(s) didn't match the requested node name, 1 node(s) were unschedulable. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
}

#[test]
fn prefer_no_schedule_and_tolerated_taints_do_not_block() {
    let nodes = vec![
        node("soft").taint("x", None, "PreferNoSchedule").build(),
        node("gpu").taint("nvidia.com/gpu", Some("present"), "NoSchedule").build(),
    ];
    let incoming = pod("x").tolerate("nvidia.com/gpu", "Exists", Some("NoSchedule")).build();
    let FilterOutcome::Feasible(feasible) = find_feasible_nodes(&incoming, &nodes, &[]).unwrap() else {
        panic!("expected feasible nodes")
    };
    let names: Vec<_> = feasible.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["gpu", "soft"]);
}

#[test]
fn terminal_pods_and_the_pod_itself_do_not_use_resources() {
    let nodes = vec![node("gpu-1").gpus("1").build()];
    let pods = vec![
        pod("done").gpus("1").on("gpu-1").phase("Succeeded").build(),
        pod("failed").gpus("1").on("gpu-1").phase("Failed").build(),
        // The incoming pod already bound (re-evaluation) does not count against itself.
        pod("x").gpus("1").on("gpu-1").build(),
    ];
    let incoming = pod("x").gpus("1").build();
    assert_eq!(
        schedule_pod(&incoming, &nodes, &pods).unwrap(),
        ScheduleDecision::Bind { node: "gpu-1".into() }
    );
    // A terminating (deletionTimestamp) but non-terminal pod still holds its GPU.
    let mut terminating = pod("old").gpus("1").on("gpu-1").build();
    terminating.metadata.deletion_timestamp = Some(Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH));
    assert!(matches!(
        schedule_pod(&incoming, &nodes, &[terminating]).unwrap(),
        ScheduleDecision::Unschedulable(_)
    ));
}

#[test]
fn mig_node_without_plain_gpus_rejects_a_gpu_pod() {
    let nodes = vec![node("mig-1").allocatable("nvidia.com/mig-1g.10gb", "7").build()];
    let gpu_pod = pod("old-manifest").gpus("1").build();
    assert_eq!(
        message(&gpu_pod, &nodes, &[]),
        "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
    let mig_pod = pod("fixed").limit("nvidia.com/mig-1g.10gb", "1").build();
    assert_eq!(schedule_pod(&mig_pod, &nodes, &[]).unwrap(), ScheduleDecision::Bind { node: "mig-1".into() });
}

#[test]
fn too_many_pods() {
    let nodes = vec![node("small").allocatable("pods", "1").build()];
    let pods = vec![pod("a").on("small").build()];
    assert_eq!(
        message(&pod("x").build(), &nodes, &pods),
        "0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    );
}

#[test]
fn histogram_sorts_as_strings() {
    // sort.Strings is lexicographic: "10 …" sorts before "2 …".
    let mut nodes: Vec<Node> =
        (0..10).map(|i| node(&format!("t{i}")).taint("a", None, "NoSchedule").build()).collect();
    nodes.push(node("c1").cordoned().build());
    nodes.push(node("c2").cordoned().build());
    let text = message(&pod("x").build(), &nodes, &[]);
    assert!(
        text.starts_with(
            "0/12 nodes are available: 10 node(s) had untolerated taint {a: }, 2 node(s) were unschedulable."
        ),
        "{text}"
    );
}

#[test]
fn least_allocated_then_name_chooses_the_node() {
    let nodes = vec![node("b").build(), node("a").build(), node("busy").build()];
    let pods = vec![pod("load").request("cpu", "4").request("memory", "16Gi").on("busy").build()];
    let incoming = pod("x").request("cpu", "1").build();
    let FilterOutcome::Feasible(feasible) = find_feasible_nodes(&incoming, &nodes, &pods).unwrap() else {
        panic!("expected feasible nodes")
    };
    let names: Vec<_> = feasible.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "busy"]);
    assert_eq!(schedule_pod(&incoming, &nodes, &pods).unwrap(), ScheduleDecision::Bind { node: "a".into() });
}

#[test]
fn condition_and_event_values() {
    let nodes = vec![node("gpu-1").build()];
    let failure = match find_feasible_nodes(&pod("x").gpus("1").build(), &nodes, &[]).unwrap() {
        FilterOutcome::Unschedulable(failure) => failure,
        FilterOutcome::Feasible(_) => panic!("expected failure"),
    };
    let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
    let condition = failure.pod_scheduled_condition(now.clone());
    assert_eq!(condition.type_, "PodScheduled");
    assert_eq!(condition.status, "False");
    assert_eq!(condition.reason.as_deref(), Some("Unschedulable"));
    assert_eq!(condition.message.as_deref(), Some(failure.to_string().as_str()));
    assert_eq!(condition.last_probe_time, None);
    assert_eq!(condition.last_transition_time, Some(now));
    assert_eq!(failure.event_message(), failure.to_string());
}

#[test]
fn event_note_is_truncated_to_1024_bytes() {
    let long = "x".repeat(2000);
    let note = truncate_note(&long);
    assert_eq!(note.len(), 1024);
    assert!(note.ends_with("x ..."));
    assert_eq!(truncate_note("short"), "short");
    let multibyte = "é".repeat(700);
    assert!(truncate_note(&multibyte).len() <= 1024);
}

#[test]
fn missing_spec_is_an_error() {
    let error = find_feasible_nodes(&Pod::default(), &[], &[]).unwrap_err();
    assert_eq!(error.to_string(), "pod default/ has no spec");
}

#[test]
fn messages_snapshot() {
    let nodes = vec![
        control_plane(),
        node("cpu-1").build(),
        node("gpu-1").label("gpu", "true").gpus("1").build(),
        node("mig-1").label("gpu", "true").allocatable("nvidia.com/mig-1g.10gb", "7").build(),
    ];
    let pods = vec![pod("a").gpus("1").on("gpu-1").build()];
    let cases = [
        ("gpu pod with selector", pod("x").gpus("1").selector("gpu", "true").build()),
        ("two gpus, no selector", pod("x").gpus("2").build()),
        ("mig pod", pod("x").limit("nvidia.com/mig-1g.10gb", "8").build()),
        ("never preempt", pod("x").gpus("1").never_preempt().build()),
        ("daemon pod pinned to cpu-1", pod("x").gpus("1").pinned_to("cpu-1").build()),
    ];
    let rendered: Vec<String> = cases
        .iter()
        .map(|(name, incoming)| {
            let outcome = find_feasible_nodes(incoming, &nodes, &pods).unwrap();
            format!(
                "{name}: {}",
                outcome.to_string_if_unschedulable().unwrap_or_else(|| "schedulable".into())
            )
        })
        .collect();
    insta::assert_snapshot!(rendered.join("\n"));
}
