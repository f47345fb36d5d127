//! Unit tests of the DaemonSet logic.

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
use k8s_openapi::api::core::v1::{
    Container, PodCondition, PodStatus, PreferredSchedulingTerm, ResourceRequirements, Toleration,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};

use super::*;
use crate::testing::node;

fn ds() -> DaemonSet {
    DaemonSet {
        metadata: ObjectMeta {
            name: Some("gpu-ds".into()),
            namespace: Some("kube-system".into()),
            annotations: Some(BTreeMap::from([(
                TEMPLATE_GENERATION_ANNOTATION.to_string(),
                "2".to_string(),
            )])),
            ..Default::default()
        },
        spec: Some(DaemonSetSpec {
            selector: LabelSelector {
                match_labels: Some(BTreeMap::from([("app".to_string(), "gpu-ds".to_string())])),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(BTreeMap::from([("app".to_string(), "gpu-ds".to_string())])),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "toolkit".into(),
                        image: Some("toolkit:v2".into()),
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

fn with_template(mut ds: DaemonSet, edit: impl FnOnce(&mut PodSpec)) -> DaemonSet {
    edit(ds.spec.as_mut().unwrap().template.spec.as_mut().unwrap());
    ds
}

fn toleration(key: &str, effect: &str) -> Toleration {
    Toleration {
        key: Some(key.into()),
        operator: Some("Exists".into()),
        effect: Some(effect.into()),
        ..Default::default()
    }
}

#[test]
fn placement_cases_from_upstream_tests() {
    let gpu_selector = |spec: &mut PodSpec| {
        spec.node_selector =
            Some(BTreeMap::from([("nvidia.com/gpu.present".to_string(), "true".to_string())]))
    };
    let cases: Vec<(&str, DaemonSet, Node, NodePlacement)> = vec![
        ("plain node", ds(), node("n").build(), NodePlacement::Run),
        (
            "insufficient resources are not checked",
            with_template(ds(), |spec| {
                spec.containers[0].resources = Some(ResourceRequirements {
                    limits: Some(BTreeMap::from([("nvidia.com/gpu".to_string(), Quantity("1".into()))])),
                    ..Default::default()
                })
            }),
            node("cpu-only").build(),
            NodePlacement::Run,
        ),
        (
            "selector mismatch",
            with_template(ds(), gpu_selector),
            node("n").build(),
            NodePlacement::DoNotRun(NotRunReason::NodeAffinity),
        ),
        (
            "selector match",
            with_template(ds(), gpu_selector),
            node("n").label("nvidia.com/gpu.present", "true").build(),
            NodePlacement::Run,
        ),
        (
            "template nodeName elsewhere",
            with_template(ds(), |spec| spec.node_name = Some("other".into())),
            node("n").build(),
            NodePlacement::DoNotRun(NotRunReason::NodeName),
        ),
        (
            "template nodeName here",
            with_template(ds(), |spec| spec.node_name = Some("n".into())),
            node("n").build(),
            NodePlacement::Run,
        ),
        (
            "untolerated NoSchedule keeps existing pods",
            ds(),
            node("cp").taint("node-role.kubernetes.io/control-plane", None, "NoSchedule").build(),
            NodePlacement::KeepExisting {
                taint: Taint {
                    key: "node-role.kubernetes.io/control-plane".into(),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                },
            },
        ),
        (
            "tolerated NoSchedule",
            with_template(ds(), |spec| {
                spec.tolerations =
                    Some(vec![toleration("node-role.kubernetes.io/control-plane", "NoSchedule")])
            }),
            node("cp").taint("node-role.kubernetes.io/control-plane", None, "NoSchedule").build(),
            NodePlacement::Run,
        ),
        (
            "untolerated NoExecute removes pods",
            ds(),
            node("n").taint("maintenance", Some("now"), "NoExecute").build(),
            NodePlacement::DoNotRun(NotRunReason::NoExecuteTaint(Taint {
                key: "maintenance".into(),
                value: Some("now".into()),
                effect: "NoExecute".into(),
                ..Default::default()
            })),
        ),
        (
            "NoSchedule and NoExecute: NoExecute decides",
            ds(),
            node("n").taint("a", None, "NoSchedule").taint("b", None, "NoExecute").build(),
            NodePlacement::DoNotRun(NotRunReason::NoExecuteTaint(Taint {
                key: "b".into(),
                effect: "NoExecute".into(),
                ..Default::default()
            })),
        ),
        (
            "PreferNoSchedule is ignored",
            ds(),
            node("n").taint("soft", None, "PreferNoSchedule").build(),
            NodePlacement::Run,
        ),
        (
            "cordoned node: the unschedulable taint is tolerated",
            ds(),
            node("n").taint("node.kubernetes.io/unschedulable", None, "NoSchedule").build(),
            NodePlacement::Run,
        ),
        (
            "not-ready node is tolerated",
            ds(),
            node("n").taint("node.kubernetes.io/not-ready", None, "NoExecute").build(),
            NodePlacement::Run,
        ),
        (
            "unreachable node is tolerated",
            ds(),
            node("n").taint("node.kubernetes.io/unreachable", None, "NoExecute").build(),
            NodePlacement::Run,
        ),
        (
            "memory pressure is tolerated",
            ds(),
            node("n").taint("node.kubernetes.io/memory-pressure", None, "NoSchedule").build(),
            NodePlacement::Run,
        ),
        (
            "network-unavailable only tolerated with hostNetwork",
            ds(),
            node("n").taint("node.kubernetes.io/network-unavailable", None, "NoSchedule").build(),
            NodePlacement::KeepExisting {
                taint: Taint {
                    key: "node.kubernetes.io/network-unavailable".into(),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                },
            },
        ),
        (
            "network-unavailable with hostNetwork",
            with_template(ds(), |spec| spec.host_network = Some(true)),
            node("n").taint("node.kubernetes.io/network-unavailable", None, "NoSchedule").build(),
            NodePlacement::Run,
        ),
    ];
    for (name, ds, node, expected) in cases {
        assert_eq!(node_should_run_daemon_pod(&ds, &node), expected, "{name}");
    }
}

#[test]
fn placement_flags_match_upstream_pairs() {
    assert_eq!((NodePlacement::Run.should_run(), NodePlacement::Run.should_continue_running()), (true, true));
    let keep = NodePlacement::KeepExisting { taint: Taint::default() };
    assert_eq!((keep.should_run(), keep.should_continue_running()), (false, true));
    let no = NodePlacement::DoNotRun(NotRunReason::NodeAffinity);
    assert_eq!((no.should_run(), no.should_continue_running()), (false, false));
}

#[test]
fn required_affinity_of_the_template_is_checked() {
    let ds = with_template(ds(), |spec| {
        spec.affinity = Some(Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: "nvidia.com/gpu.count".into(),
                            operator: "Gt".into(),
                            values: Some(vec!["3".into()]),
                        }]),
                        match_fields: None,
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        })
    });
    assert_eq!(
        node_should_run_daemon_pod(&ds, &node("big").label("nvidia.com/gpu.count", "8").build()),
        NodePlacement::Run
    );
    assert_eq!(
        node_should_run_daemon_pod(&ds, &node("small").label("nvidia.com/gpu.count", "2").build()),
        NodePlacement::DoNotRun(NotRunReason::NodeAffinity)
    );
}

fn daemon_pod(name: &str, node: &str, hash: &str) -> Pod {
    Pod {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("kube-system".into()),
            labels: Some(BTreeMap::from([
                ("app".to_string(), "gpu-ds".to_string()),
                (CONTROLLER_REVISION_HASH_LABEL.to_string(), hash.to_string()),
            ])),
            creation_timestamp: Some(Time(Timestamp::UNIX_EPOCH)),
            ..Default::default()
        },
        spec: Some(PodSpec { node_name: Some(node.into()), ..Default::default() }),
        status: Some(PodStatus { phase: Some("Running".into()), ..Default::default() }),
    }
}

fn ready(mut pod: Pod, since_secs: i64) -> Pod {
    pod.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "Ready".into(),
        status: "True".into(),
        last_transition_time: Some(Time(Timestamp::from_second(since_secs).unwrap())),
        ..Default::default()
    }]);
    pod
}

fn waiting(mut pod: Pod) -> Pod {
    pod.status.as_mut().unwrap().phase = Some("Pending".into());
    pod.status.as_mut().unwrap().conditions = Some(vec![PodCondition {
        type_: "Ready".into(),
        status: "False".into(),
        reason: Some("ContainersNotReady".into()),
        ..Default::default()
    }]);
    pod
}

fn created(mut pod: Pod, secs: i64) -> Pod {
    pod.metadata.creation_timestamp = Some(Time(Timestamp::from_second(secs).unwrap()));
    pod
}

fn now() -> Timestamp {
    Timestamp::from_second(10_000).unwrap()
}

#[test]
fn stuck_rollout_shows_3_3_2_1_2() {
    // The course's stuck rollout (issue 5): maxUnavailable 1, the new image cannot be pulled on
    // one node.
    let nodes = vec![node("gpu-1").build(), node("gpu-2").build(), node("gpu-3").build()];
    let pods = vec![
        waiting(daemon_pod("gpu-ds-new", "gpu-1", "new")),
        ready(daemon_pod("gpu-ds-a", "gpu-2", "old"), 0),
        ready(daemon_pod("gpu-ds-b", "gpu-3", "old"), 0),
    ];
    let counters = daemonset_status(&ds(), &nodes, &pods, "new", now());
    let columns = (
        counters.desired_number_scheduled,
        counters.current_number_scheduled,
        counters.number_ready,
        counters.updated_number_scheduled,
        counters.number_available,
    );
    assert_eq!(columns, (3, 3, 2, 1, 2));
    assert_eq!(counters.number_unavailable, 1);
    assert_eq!(counters.number_misscheduled, 0);
}

#[test]
fn toleration_drift_drops_desired_and_counts_the_old_pod_misscheduled() {
    let nodes = vec![
        node("gpu-1").build(),
        node("gpu-2").build(),
        node("gpu-3").taint("nvidia.com/gpu", Some("present"), "NoSchedule").build(),
    ];
    let pods = vec![
        ready(daemon_pod("a", "gpu-1", "new"), 0),
        ready(daemon_pod("b", "gpu-2", "new"), 0),
        ready(daemon_pod("c", "gpu-3", "old"), 0),
    ];
    let counters = daemonset_status(&ds(), &nodes, &pods, "new", now());
    assert_eq!(counters.desired_number_scheduled, 2);
    assert_eq!(counters.current_number_scheduled, 2);
    assert_eq!(counters.updated_number_scheduled, 2);
    assert_eq!(counters.number_misscheduled, 1);
    // Once the old pod is deleted it is not recreated: nothing counts for gpu-3 any more.
    let counters = daemonset_status(&ds(), &nodes, &pods[..2], "new", now());
    assert_eq!(
        (counters.desired_number_scheduled, counters.number_misscheduled, counters.number_unavailable),
        (2, 0, 0)
    );
}

#[test]
fn unscheduled_pinned_pod_counts_as_current() {
    let mut pending = waiting(daemon_pod("p", "", "new"));
    pending.spec = Some(daemon_pod_spec(&ds(), "gpu-1"));
    let counters = daemonset_status(&ds(), &[node("gpu-1").build()], &[pending], "new", now());
    assert_eq!(counters.current_number_scheduled, 1);
    assert_eq!(counters.updated_number_scheduled, 1);
    assert_eq!(counters.number_ready, 0);
}

#[test]
fn only_the_oldest_pod_per_node_is_looked_at() {
    // During a surge the node counts as updated only once the old pod is gone.
    let old = created(ready(daemon_pod("old", "gpu-1", "old"), 0), 10);
    let new = created(ready(daemon_pod("new", "gpu-1", "new"), 0), 20);
    let counters = daemonset_status(&ds(), &[node("gpu-1").build()], &[new.clone(), old], "new", now());
    assert_eq!((counters.current_number_scheduled, counters.updated_number_scheduled), (1, 0));
    let counters = daemonset_status(&ds(), &[node("gpu-1").build()], &[new], "new", now());
    assert_eq!(counters.updated_number_scheduled, 1);
}

#[test]
fn bound_pods_sort_before_unbound_then_by_age_then_name() {
    let mut unbound = created(daemon_pod("a-unbound", "", "x"), 1);
    unbound.spec = Some(daemon_pod_spec(&ds(), "n"));
    let older = created(daemon_pod("z-older", "n", "x"), 5);
    let newer_b = created(daemon_pod("b-newer", "n", "x"), 9);
    let newer_a = created(daemon_pod("a-newer", "n", "x"), 9);
    let pods = [newer_b, unbound, newer_a, older];
    let map = nodes_to_daemon_pods(&pods, DeletedTerminalPods::Skip);
    let names: Vec<_> = map["n"].iter().map(|p| p.metadata.name.clone().unwrap()).collect();
    assert_eq!(names, ["z-older", "a-newer", "b-newer", "a-unbound"]);
}

#[test]
fn deleted_terminal_pods_are_skipped_but_terminating_ones_count() {
    let mut done = daemon_pod("done", "gpu-1", "new");
    done.status.as_mut().unwrap().phase = Some("Failed".into());
    done.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let mut terminating = ready(daemon_pod("going", "gpu-2", "old"), 0);
    terminating.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let pods = vec![done, terminating];
    let skip = nodes_to_daemon_pods(&pods, DeletedTerminalPods::Skip);
    assert!(!skip.contains_key("gpu-1"));
    assert!(skip.contains_key("gpu-2"));
    let include = nodes_to_daemon_pods(&pods, DeletedTerminalPods::Include);
    assert!(include.contains_key("gpu-1"));
    let counters =
        daemonset_status(&ds(), &[node("gpu-1").build(), node("gpu-2").build()], &pods, "new", now());
    assert_eq!((counters.desired_number_scheduled, counters.current_number_scheduled), (2, 1));
}

#[test]
fn pods_on_unknown_nodes_are_ignored() {
    let pods = vec![ready(daemon_pod("ghost", "gone", "new"), 0)];
    let counters = daemonset_status(&ds(), &[node("gpu-1").build()], &pods, "new", now());
    assert_eq!(
        counters,
        DaemonSetCounters { desired_number_scheduled: 1, number_unavailable: 1, ..Default::default() }
    );
}

#[test]
fn min_ready_seconds_delays_availability_strictly() {
    let mut ds = ds();
    ds.spec.as_mut().unwrap().min_ready_seconds = Some(30);
    let pod = ready(daemon_pod("p", "gpu-1", "new"), 100);
    assert!(!is_pod_available(&pod, 30, Timestamp::from_second(130).unwrap()));
    assert!(is_pod_available(&pod, 30, Timestamp::from_second(131).unwrap()));
    assert!(is_pod_available(&pod, 0, Timestamp::from_second(0).unwrap()));
    let counters =
        daemonset_status(&ds, &[node("gpu-1").build()], &[pod], "new", Timestamp::from_second(120).unwrap());
    assert_eq!((counters.number_ready, counters.number_available, counters.number_unavailable), (1, 0, 1));
}

#[test]
fn updated_by_hash_or_template_generation() {
    let pod = daemon_pod("p", "n", "abc");
    assert!(is_pod_updated(&pod, "abc", None));
    assert!(!is_pod_updated(&pod, "def", None));
    assert!(!is_pod_updated(&pod, "", None));
    let mut by_generation = daemon_pod("p", "n", "old");
    by_generation.metadata.labels.as_mut().unwrap().insert(POD_TEMPLATE_GENERATION_LABEL.into(), "2".into());
    assert!(is_pod_updated(&by_generation, "new", Some(2)));
    assert!(!is_pod_updated(&by_generation, "new", Some(3)));
    assert_eq!(template_generation(&ds()).unwrap(), Some(2));
    let mut bad = ds();
    bad.metadata.annotations.as_mut().unwrap().insert(TEMPLATE_GENERATION_ANNOTATION.into(), "x".into());
    assert_eq!(template_generation(&bad).unwrap_err(), Error::TemplateGeneration("x".into()));
}

#[test]
fn target_node_name_rules_and_messages() {
    let mut pod = daemon_pod("p", "", "h");
    pod.metadata.name = Some("p".into());
    assert_eq!(
        target_node_name(&pod).unwrap_err().to_string(),
        "no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod kube-system/p"
    );
    pod.spec.as_mut().unwrap().affinity = Some(Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![],
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    assert_eq!(
        target_node_name(&pod).unwrap_err().to_string(),
        "no nodeSelectorTerms in requiredDuringSchedulingIgnoredDuringExecution of pod kube-system/p"
    );
    let two = NodeSelectorTerm {
        match_fields: Some(vec![NodeSelectorRequirement {
            key: "metadata.name".into(),
            operator: "In".into(),
            values: Some(vec!["a".into(), "b".into()]),
        }]),
        match_expressions: None,
    };
    pod.spec
        .as_mut()
        .unwrap()
        .affinity
        .as_mut()
        .unwrap()
        .node_affinity
        .as_mut()
        .unwrap()
        .required_during_scheduling_ignored_during_execution =
        Some(NodeSelector { node_selector_terms: vec![two] });
    assert_eq!(
        target_node_name(&pod).unwrap_err().to_string(),
        "the matchFields value of 'metadata.name' is not unique for pod kube-system/p"
    );
    pod.spec.as_mut().unwrap().affinity = Some(pin_to_node(None, "gpu-3"));
    assert_eq!(target_node_name(&pod).unwrap(), "gpu-3");
}

#[test]
fn pinning_replaces_required_terms_and_keeps_preferred_ones() {
    let preferred = vec![PreferredSchedulingTerm {
        weight: 5,
        preference: NodeSelectorTerm {
            match_expressions: Some(vec![NodeSelectorRequirement {
                key: "zone".into(),
                operator: "Exists".into(),
                values: None,
            }]),
            match_fields: None,
        },
    }];
    let user = Affinity {
        node_affinity: Some(NodeAffinity {
            required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_expressions: Some(vec![NodeSelectorRequirement {
                        key: "gpu".into(),
                        operator: "Exists".into(),
                        values: None,
                    }]),
                    match_fields: None,
                }],
            }),
            preferred_during_scheduling_ignored_during_execution: Some(preferred.clone()),
        }),
        ..Default::default()
    };
    let pinned = pin_to_node(Some(user), "gpu-1");
    let node_affinity = pinned.node_affinity.unwrap();
    assert_eq!(node_affinity.preferred_during_scheduling_ignored_during_execution, Some(preferred));
    let terms =
        node_affinity.required_during_scheduling_ignored_during_execution.unwrap().node_selector_terms;
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0].match_expressions, None);
    assert_eq!(terms[0].match_fields.as_ref().unwrap()[0].values, Some(vec!["gpu-1".to_string()]));
}

#[test]
fn new_daemon_pod_spec_and_labels() {
    let ds = with_template(ds(), |spec| {
        spec.node_selector = Some(BTreeMap::from([("gpu".to_string(), "true".to_string())]))
    });
    let spec = daemon_pod_spec(&ds, "gpu-1");
    assert_eq!(spec.node_name, None);
    assert_eq!(spec.node_selector.as_ref().unwrap()["gpu"], "true");
    assert_eq!(spec.tolerations.as_ref().unwrap().len(), 6);
    let labels = daemon_pod_labels(&ds, "5c9f7b8d4").unwrap();
    assert_eq!(labels["app"], "gpu-ds");
    assert_eq!(labels["controller-revision-hash"], "5c9f7b8d4");
    assert_eq!(labels["pod-template-generation"], "2");
}

#[test]
fn scaled_values_round_like_upstream() {
    let percent = |p: &str| IntOrString::String(p.into());
    assert_eq!(scaled_value(&percent("10%"), 3, Rounding::Up, "MaxUnavailable").unwrap(), 1);
    assert_eq!(scaled_value(&percent("10%"), 3, Rounding::Down, "MaxUnavailable").unwrap(), 0);
    assert_eq!(scaled_value(&percent("50%"), 5, Rounding::Up, "MaxUnavailable").unwrap(), 3);
    assert_eq!(scaled_value(&percent("100%"), 7, Rounding::Up, "MaxSurge").unwrap(), 7);
    assert_eq!(scaled_value(&percent("0%"), 7, Rounding::Up, "MaxSurge").unwrap(), 0);
    assert_eq!(scaled_value(&IntOrString::Int(2), 7, Rounding::Up, "MaxSurge").unwrap(), 2);
    assert_eq!(
        scaled_value(&percent("2"), 7, Rounding::Up, "MaxSurge").unwrap_err().to_string(),
        "invalid value for MaxSurge: invalid type: string is not a percentage"
    );
    assert!(scaled_value(&percent("x%"), 7, Rounding::Up, "MaxSurge").is_err());
}

fn rolling(ds: &mut DaemonSet, unavailable: Option<IntOrString>, surge: Option<IntOrString>) {
    ds.spec.as_mut().unwrap().update_strategy = Some(DaemonSetUpdateStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDaemonSet { max_unavailable: unavailable, max_surge: surge }),
    });
}

#[test]
fn update_budgets() {
    let mut d = ds();
    rolling(&mut d, Some(IntOrString::Int(1)), None);
    assert_eq!(update_budget(&d, 3).unwrap(), UpdateBudget { max_unavailable: 1, max_surge: 0 });
    rolling(&mut d, Some(IntOrString::String("10%".into())), Some(IntOrString::Int(0)));
    assert_eq!(update_budget(&d, 1000).unwrap(), UpdateBudget { max_unavailable: 100, max_surge: 0 });
    assert_eq!(update_budget(&d, 11).unwrap(), UpdateBudget { max_unavailable: 2, max_surge: 0 });
    rolling(&mut d, Some(IntOrString::Int(0)), Some(IntOrString::String("25%".into())));
    assert_eq!(update_budget(&d, 4).unwrap(), UpdateBudget { max_unavailable: 0, max_surge: 1 });
    // Both zero (an impossible config) falls back to maxUnavailable 1 when anything is desired.
    rolling(&mut d, Some(IntOrString::String("0%".into())), Some(IntOrString::Int(0)));
    assert_eq!(update_budget(&d, 4).unwrap(), UpdateBudget { max_unavailable: 1, max_surge: 0 });
    assert_eq!(update_budget(&d, 0).unwrap(), UpdateBudget { max_unavailable: 0, max_surge: 0 });
    rolling(&mut d, None, None);
    assert!(update_budget(&d, 3).is_err());
    d.spec.as_mut().unwrap().update_strategy =
        Some(DaemonSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    assert_eq!(update_strategy(&d), UpdateStrategy::OnDelete);
    assert_eq!(update_budget(&d, 3).unwrap(), UpdateBudget { max_unavailable: 1, max_surge: 0 });
}

#[test]
fn fnv32a_known_vectors() {
    assert_eq!(fnv32a(0x811c_9dc5, b""), 0x811c_9dc5);
    assert_eq!(fnv32a(0x811c_9dc5, b"a"), 0xe40c_292c);
    assert_eq!(fnv32a(0x811c_9dc5, b"foobar"), 0xbf9c_f968);
}

#[test]
fn safe_encode_maps_digits_onto_the_safe_alphabet() {
    // apimachinery/pkg/util/rand `SafeEncodeString`'s alphabet:
    // '0'→'4' '1'→'5' '2'→'6' '3'→'7' '4'→'8' '5'→'9' '6'→'b' '7'→'c' '8'→'d' '9'→'f'
    assert_eq!(safe_encode("0123456789"), "456789bcdf");
}

#[test]
fn hash_is_deterministic_and_tracks_the_template() {
    let template = ds().spec.unwrap().template;
    let first = compute_hash(&template, None).unwrap();
    assert_eq!(first, compute_hash(&template.clone(), None).unwrap());
    assert!((1..=10).contains(&first.len()));
    assert!(first.chars().all(|c| "456789bcdf".contains(c)));
    let mut changed = template.clone();
    changed.spec.as_mut().unwrap().containers[0].image = Some("toolkit:v3".into());
    assert_ne!(compute_hash(&changed, None).unwrap(), first);
    assert_ne!(compute_hash(&template, Some(1)).unwrap(), first);
    assert_ne!(compute_hash(&template, Some(1)).unwrap(), compute_hash(&template, Some(2)).unwrap());
}

fn with_budget(unavailable: IntOrString, surge: IntOrString) -> DaemonSet {
    let mut d = ds();
    rolling(&mut d, Some(unavailable), Some(surge));
    d
}

fn plan(ds: &DaemonSet, nodes: &[Node], pods: &[Pod], hash: &str) -> RollingUpdatePlan {
    rolling_update_plan(ds, nodes, pods, hash, now()).unwrap()
}

fn three_nodes() -> Vec<Node> {
    vec![node("gpu-1").build(), node("gpu-2").build(), node("gpu-3").build()]
}

#[test]
fn rolling_update_without_surge_deletes_within_max_unavailable() {
    let ds = with_budget(IntOrString::Int(1), IntOrString::Int(0));
    let old = |name: &str, node: &str| ready(daemon_pod(name, node, "old"), 0);
    // Template changed: one old pod goes (node order is by name here).
    let pods = vec![old("a", "gpu-1"), old("b", "gpu-2"), old("c", "gpu-3")];
    assert_eq!(
        plan(&ds, &three_nodes(), &pods, "new"),
        RollingUpdatePlan { delete_pods: vec!["a".into()], create_on_nodes: vec![] }
    );
    // The old pod is terminating: its node counts as unavailable, nothing else is deleted.
    let mut terminating = old("a", "gpu-1");
    terminating.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    let pods = vec![terminating, old("b", "gpu-2"), old("c", "gpu-3")];
    assert_eq!(plan(&ds, &three_nodes(), &pods, "new"), RollingUpdatePlan::default());
    // Gone, replacement not yet created: still unavailable.
    assert_eq!(plan(&ds, &three_nodes(), &pods[1..], "new"), RollingUpdatePlan::default());
    // The replacement never becomes available (bad image): the rollout stalls forever.
    let pods = vec![waiting(daemon_pod("n", "gpu-1", "new")), old("b", "gpu-2"), old("c", "gpu-3")];
    assert_eq!(plan(&ds, &three_nodes(), &pods, "new"), RollingUpdatePlan::default());
    // Once it is available the next node goes.
    let pods = vec![ready(daemon_pod("n", "gpu-1", "new"), 0), old("b", "gpu-2"), old("c", "gpu-3")];
    assert_eq!(plan(&ds, &three_nodes(), &pods, "new").delete_pods, vec!["b".to_string()]);
}

#[test]
fn rollback_replaces_the_broken_pods_at_once() {
    let ds = with_budget(IntOrString::Int(1), IntOrString::Int(0));
    // After `rollout undo` the current hash is "old" again; the broken new pod is now an old,
    // unavailable pod: deleted outside the budget, and (v1.31+) counted as unavailable.
    let pods = vec![
        waiting(daemon_pod("broken", "gpu-1", "new")),
        ready(daemon_pod("b", "gpu-2", "old"), 0),
        ready(daemon_pod("c", "gpu-3", "old"), 0),
    ];
    assert_eq!(
        plan(&ds, &three_nodes(), &pods, "old"),
        RollingUpdatePlan { delete_pods: vec!["broken".into()], create_on_nodes: vec![] }
    );
    // Two unavailable old pods: both go, and no available one joins them.
    let pods = vec![
        waiting(daemon_pod("x", "gpu-1", "v2")),
        waiting(daemon_pod("y", "gpu-2", "v2")),
        ready(daemon_pod("c", "gpu-3", "v2"), 0),
    ];
    assert_eq!(plan(&ds, &three_nodes(), &pods, "v3").delete_pods, vec!["x".to_string(), "y".to_string()]);
}

#[test]
fn misscheduled_old_pod_is_an_ordinary_candidate() {
    let ds = with_budget(IntOrString::Int(1), IntOrString::Int(0));
    let nodes = vec![
        node("gpu-1").build(),
        node("gpu-2").build(),
        node("gpu-3").taint("nvidia.com/gpu", Some("present"), "NoSchedule").build(),
    ];
    let pods = vec![
        ready(daemon_pod("a", "gpu-1", "new"), 0),
        ready(daemon_pod("b", "gpu-2", "new"), 0),
        ready(daemon_pod("c", "gpu-3", "old"), 0),
    ];
    assert_eq!(plan(&ds, &nodes, &pods, "new").delete_pods, vec!["c".to_string()]);
    // …and nothing is planned once it is gone (manage does not recreate it: shouldRun is false).
    assert_eq!(plan(&ds, &nodes, &pods[..2], "new"), RollingUpdatePlan::default());
}

#[test]
fn percentage_budget_over_many_nodes() {
    let ds = with_budget(IntOrString::String("10%".into()), IntOrString::Int(0));
    let nodes: Vec<Node> = (0..11).map(|i| node(&format!("n{i:02}")).build()).collect();
    let pods: Vec<Pod> =
        (0..11).map(|i| ready(daemon_pod(&format!("p{i:02}"), &format!("n{i:02}"), "old"), 0)).collect();
    // ceil(10% of 11) = 2.
    assert_eq!(plan(&ds, &nodes, &pods, "new").delete_pods, vec!["p00".to_string(), "p01".to_string()]);
}

#[test]
fn excess_pods_on_a_node_count_as_unavailable() {
    let ds = with_budget(IntOrString::Int(1), IntOrString::Int(0));
    let pods = vec![
        ready(daemon_pod("a1", "gpu-1", "old"), 0),
        ready(daemon_pod("a2", "gpu-1", "old"), 0),
        ready(daemon_pod("b", "gpu-2", "old"), 0),
        ready(daemon_pod("c", "gpu-3", "old"), 0),
    ];
    assert_eq!(plan(&ds, &three_nodes(), &pods, "new"), RollingUpdatePlan::default());
}

#[test]
fn rolling_update_with_surge_creates_first() {
    let ds = with_budget(IntOrString::Int(0), IntOrString::Int(1));
    let nodes = vec![node("a").build(), node("b").build()];
    let old = |name: &str, node: &str| ready(daemon_pod(name, node, "old"), 0);
    assert_eq!(
        plan(&ds, &nodes, &[old("pa", "a"), old("pb", "b")], "new"),
        RollingUpdatePlan { delete_pods: vec![], create_on_nodes: vec!["a".into()] }
    );
    // The surge pod is not yet available: it uses the budget.
    let pods = vec![old("pa", "a"), waiting(daemon_pod("na", "a", "new")), old("pb", "b")];
    assert_eq!(plan(&ds, &nodes, &pods, "new"), RollingUpdatePlan::default());
    // Available: the old pod on a goes and b gets its surge pod.
    let pods = vec![old("pa", "a"), ready(daemon_pod("na", "a", "new"), 0), old("pb", "b")];
    assert_eq!(
        plan(&ds, &nodes, &pods, "new"),
        RollingUpdatePlan { delete_pods: vec!["pa".into()], create_on_nodes: vec!["b".into()] }
    );
    // An unavailable old pod gets its new pod at once, outside the budget.
    let pods = vec![waiting(daemon_pod("pa", "a", "old")), old("pb", "b")];
    assert_eq!(plan(&ds, &nodes, &pods, "new").create_on_nodes, vec!["a".to_string(), "b".to_string()]);
}

#[test]
fn surge_keeps_availability_when_a_node_leaves_the_selection() {
    let ds = with_budget(IntOrString::Int(0), IntOrString::Int(1));
    let nodes = vec![node("a").build(), node("gone").taint("x", None, "NoSchedule").build()];
    // desired 1; pods available: old on "gone" + new on "a" = 2 > 1, so the sunset pod goes.
    let pods = vec![ready(daemon_pod("na", "a", "new"), 0), ready(daemon_pod("old", "gone", "old"), 0)];
    assert_eq!(plan(&ds, &nodes, &pods, "new").delete_pods, vec!["old".to_string()]);
    // While the new pod is not available, the sunset pod stays.
    let pods = vec![waiting(daemon_pod("na", "a", "new")), ready(daemon_pod("old", "gone", "old"), 0)];
    assert_eq!(plan(&ds, &nodes, &pods, "new"), RollingUpdatePlan::default());
    // An unavailable old pod on such a node is deleted at once.
    let pods = vec![waiting(daemon_pod("old", "gone", "old"))];
    assert_eq!(plan(&ds, &nodes, &pods, "new").delete_pods, vec!["old".to_string()]);
}

#[test]
fn surge_needs_the_nodes_of_old_pods() {
    let ds = with_budget(IntOrString::Int(0), IntOrString::Int(1));
    let pods = vec![ready(daemon_pod("p", "missing", "old"), 0)];
    assert_eq!(
        rolling_update_plan(&ds, &[node("a").build()], &pods, "new", now()).unwrap_err(),
        Error::NodeNotFound("missing".into())
    );
}

fn with_status(generation: i64, observed: i64, updated: i32, desired: i32, available: i32) -> DaemonSet {
    let mut d = ds();
    d.metadata.name = Some("foo".into());
    d.metadata.generation = Some(generation);
    d.status = Some(k8s_openapi::api::apps::v1::DaemonSetStatus {
        observed_generation: Some(observed),
        updated_number_scheduled: Some(updated),
        desired_number_scheduled: desired,
        number_available: Some(available),
        ..Default::default()
    });
    d
}

#[test]
fn rollout_status_truth_table_from_kubectl() {
    // kubectl's pkg/polymorphichelpers/rollout_status_test.go table, messages copied as literals.
    let waiting = |text: &str| RolloutStatus::Waiting(format!("{text}\n"));
    assert_eq!(
        rollout_status(&with_status(0, 1, 0, 1, 0)),
        waiting("Waiting for daemon set \"foo\" rollout to finish: 0 out of 1 new pods have been updated...")
    );
    assert_eq!(
        rollout_status(&with_status(1, 1, 2, 2, 1)),
        waiting("Waiting for daemon set \"foo\" rollout to finish: 1 of 2 updated pods are available...")
    );
    assert_eq!(
        rollout_status(&with_status(1, 1, 2, 2, 2)),
        RolloutStatus::Done("daemon set \"foo\" successfully rolled out\n".into())
    );
    assert_eq!(
        rollout_status(&with_status(2, 1, 2, 2, 2)),
        waiting("Waiting for daemon set spec update to be observed...")
    );
    // The stuck rollout stops at this line (docs/daemonset.md, with the lab's DaemonSet name).
    let mut stuck = with_status(2, 2, 1, 3, 2);
    stuck.metadata.name = Some("gpu-ds".into());
    assert_eq!(
        rollout_status(&stuck),
        waiting(
            "Waiting for daemon set \"gpu-ds\" rollout to finish: 1 out of 3 new pods have been updated..."
        )
    );
    // desired 0 once observed: done.
    assert!(matches!(rollout_status(&with_status(1, 1, 0, 0, 0)), RolloutStatus::Done(_)));
    let mut on_delete = with_status(1, 1, 0, 1, 0);
    on_delete.spec.as_mut().unwrap().update_strategy =
        Some(DaemonSetUpdateStrategy { type_: Some("OnDelete".into()), rolling_update: None });
    assert_eq!(rollout_status(&on_delete), RolloutStatus::NotRollingUpdate);
    assert_eq!(
        RolloutStatus::NOT_ROLLING_UPDATE,
        "rollout status is only available for RollingUpdate strategy type"
    );
}

#[test]
fn rollout_view_of_the_stuck_rollout() {
    let nodes = vec![
        node("gpu-1").build(),
        node("gpu-2").build(),
        node("gpu-3").taint("x", None, "NoSchedule").build(),
    ];
    let pods = vec![
        waiting(daemon_pod("new", "gpu-1", "new")),
        ready(daemon_pod("b", "gpu-2", "old"), 0),
        ready(daemon_pod("c", "gpu-3", "old"), 0),
        ready(daemon_pod("ghost", "deleted-node", "new"), 0),
    ];
    let view = rollout_view(&ds(), &nodes, &pods, "new", now());
    let names: Vec<_> = view.iter().map(|n| n.node.as_str()).collect();
    assert_eq!(names, ["deleted-node", "gpu-1", "gpu-2", "gpu-3"]);
    assert_eq!(
        view[1].pods,
        vec![RolloutPod {
            name: "new".into(),
            revision: PodRevision::Current,
            readiness: PodReadiness::NotReady,
            terminating: false
        }]
    );
    assert_eq!(view[2].pods[0].revision, PodRevision::Old);
    assert_eq!(view[2].pods[0].readiness, PodReadiness::Available);
    assert!(matches!(view[3].placement, NodePlacement::KeepExisting { .. }));
    assert!(view.iter().all(|n| !n.is_settled()));
    // Settled: one current available pod where wanted, nothing elsewhere.
    let pods = vec![ready(daemon_pod("a", "gpu-1", "new"), 0), ready(daemon_pod("b", "gpu-2", "new"), 0)];
    let view = rollout_view(&ds(), &nodes, &pods, "new", now());
    assert!(view.iter().all(RolloutNode::is_settled));
    // Ready but inside minReadySeconds is not settled.
    let mut slow = ds();
    slow.spec.as_mut().unwrap().min_ready_seconds = Some(60);
    let pods = vec![ready(daemon_pod("a", "gpu-1", "new"), 9_990)];
    let view = rollout_view(&slow, &nodes[..1], &pods, "new", now());
    assert_eq!(view[0].pods[0].readiness, PodReadiness::Ready);
    assert!(!view[0].is_settled());
}

fn manage(ds: &DaemonSet, nodes: &[Node], pods: &[Pod]) -> ManagePlan {
    manage_plan(ds, nodes, pods, "new", now())
}

fn phase(mut pod: Pod, phase: &str) -> Pod {
    pod.status.as_mut().unwrap().phase = Some(phase.into());
    pod
}

fn deleting(mut pod: Pod) -> Pod {
    pod.metadata.deletion_timestamp = Some(Time(Timestamp::UNIX_EPOCH));
    pod
}

#[test]
fn manage_creates_where_missing_and_respects_termination() {
    let nodes = vec![node("gpu-1").build(), node("gpu-2").build()];
    let pods = vec![ready(daemon_pod("a", "gpu-1", "new"), 0)];
    assert_eq!(
        manage(&ds(), &nodes, &pods),
        ManagePlan { create_on_nodes: vec!["gpu-2".into()], ..Default::default() }
    );
    // TestDaemonSetRespectsTermination: the only pod is terminating → 0 creates, 0 deletes.
    let pods =
        vec![deleting(ready(daemon_pod("a", "gpu-1", "old"), 0)), ready(daemon_pod("b", "gpu-2", "new"), 0)];
    assert_eq!(manage(&ds(), &nodes, &pods), ManagePlan::default());
}

#[test]
fn manage_reports_failed_and_deletes_succeeded_pods() {
    let nodes = vec![node("gpu-1").build(), node("gpu-2").build()];
    let pods = vec![
        phase(daemon_pod("x", "gpu-1", "new"), "Failed"),
        phase(daemon_pod("y", "gpu-2", "new"), "Succeeded"),
    ];
    let plan = manage(&ds(), &nodes, &pods);
    // The replacement comes in a later pass, once the pod object is gone.
    assert!(plan.create_on_nodes.is_empty());
    assert_eq!(plan.delete_pods, vec!["y".to_string()]);
    assert_eq!(plan.failed_pods.len(), 1);
    assert_eq!(plan.failed_pods[0].pod, "x");
    // daemon_controller.go `podsShouldBeOnNode`'s event texts, copied as literals.
    assert_eq!(plan.failed_pods[0].event.reason, "FailedDaemonPod");
    assert_eq!(plan.failed_pods[0].event.type_, DaemonSetEventType::Warning);
    assert_eq!(
        plan.failed_pods[0].event.message,
        "Found failed daemon pod kube-system/x on node gpu-1, will try to kill it"
    );
    assert_eq!(
        plan.events,
        vec![DaemonSetEvent {
            type_: DaemonSetEventType::Normal,
            reason: "SucceededDaemonPod",
            message: "Found succeeded daemon pod kube-system/y on node gpu-2, will try to delete it".into(),
        }]
    );
}

#[test]
fn manage_prunes_extra_pods_keeping_the_oldest() {
    let pods = vec![
        created(ready(daemon_pod("young", "gpu-1", "new"), 0), 50),
        created(ready(daemon_pod("elder", "gpu-1", "old"), 0), 10),
        created(ready(daemon_pod("middle", "gpu-1", "new"), 0), 30),
    ];
    let plan = manage(&ds(), &[node("gpu-1").build()], &pods);
    assert_eq!(plan.delete_pods, vec!["middle".to_string(), "young".to_string()]);
}

#[test]
fn manage_follows_placement() {
    // NoSchedule drift: the existing pod stays, nothing is created on an empty such node.
    let cp = node("cp").taint("node-role.kubernetes.io/control-plane", None, "NoSchedule").build();
    let pods = vec![ready(daemon_pod("a", "cp", "old"), 0)];
    assert_eq!(manage(&ds(), std::slice::from_ref(&cp), &pods), ManagePlan::default());
    assert_eq!(manage(&ds(), &[cp], &[]), ManagePlan::default());
    // Selector no longer matches: every non-terminating pod goes.
    let selective = with_template(ds(), |spec| {
        spec.node_selector = Some(BTreeMap::from([("gpu".to_string(), "true".to_string())]))
    });
    let pods = vec![ready(daemon_pod("a", "n", "old"), 0), deleting(ready(daemon_pod("b", "n", "old"), 0))];
    assert_eq!(manage(&selective, &[node("n").build()], &pods).delete_pods, vec!["a".to_string()]);
    // NoExecute: likewise.
    let evicting = node("n").taint("maintenance", None, "NoExecute").build();
    assert_eq!(manage(&ds(), &[evicting], &pods).delete_pods, vec!["a".to_string()]);
}

#[test]
fn manage_with_surge_keeps_one_new_and_one_old() {
    let ds = with_budget(IntOrString::Int(0), IntOrString::Int(1));
    let nodes = [node("n").build()];
    let old = created(ready(daemon_pod("old", "n", "old"), 0), 10);
    // New pod not yet available, old ready: keep both.
    let new = created(waiting(daemon_pod("new", "n", "new")), 20);
    assert_eq!(manage(&ds, &nodes, &[old.clone(), new]), ManagePlan::default());
    // New pod available: the old one goes.
    let new = created(ready(daemon_pod("new", "n", "new"), 0), 20);
    assert_eq!(manage(&ds, &nodes, &[old.clone(), new.clone()]).delete_pods, vec!["old".to_string()]);
    // Old pod not ready: it goes even though the new one is not available.
    let sick_old = created(waiting(daemon_pod("old", "n", "old")), 10);
    let slow_new = created(waiting(daemon_pod("new", "n", "new")), 20);
    assert_eq!(manage(&ds, &nodes, &[sick_old, slow_new]).delete_pods, vec!["old".to_string()]);
    // A third pod is always pruned.
    let extra = created(ready(daemon_pod("extra", "n", "old"), 0), 30);
    assert_eq!(
        manage(&ds, &nodes, &[old, new, extra]).delete_pods,
        vec!["extra".to_string(), "old".to_string()]
    );
    // Only a failed pod left: surge creates a new one at once.
    let plan = manage(&ds, &nodes, &[phase(daemon_pod("dead", "n", "old"), "Failed")]);
    assert_eq!(plan.create_on_nodes, vec!["n".to_string()]);
    assert_eq!(plan.failed_pods.len(), 1);
}

#[test]
fn manage_deletes_unscheduled_pods_of_vanished_nodes() {
    let mut orphan = waiting(daemon_pod("orphan", "", "new"));
    orphan.spec = Some(daemon_pod_spec(&ds(), "vanished"));
    let bound = ready(daemon_pod("bound", "vanished", "new"), 0);
    let plan = manage(&ds(), &[node("n").build()], &[orphan, bound, ready(daemon_pod("ok", "n", "new"), 0)]);
    assert_eq!(plan.delete_pods, vec!["orphan".to_string()]);
    assert!(plan.create_on_nodes.is_empty());
}

#[test]
fn labels_without_hash_or_generation() {
    let mut bare = ds();
    bare.metadata.annotations = None;
    let labels = daemon_pod_labels(&bare, "").unwrap();
    assert_eq!(labels, BTreeMap::from([("app".to_string(), "gpu-ds".to_string())]));
    let view = rollout_view(&ds(), &[], &[ready(daemon_pod("ghost", "gone", "new"), 0)], "new", now());
    assert_eq!(view[0].placement, NodePlacement::DoNotRun(NotRunReason::NodeNotFound));
}
