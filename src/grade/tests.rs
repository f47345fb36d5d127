//! Grading tests: every matcher, every outcome, quantities, unobserved kinds, built-ins through the one entry point.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::*;
use crate::k8s::testing::node;

fn expectation(yaml: &str) -> Expectation {
    serde_saphyr::from_str(yaml).unwrap_or_else(|e| panic!("{e}"))
}

fn cluster() -> Observed {
    let mut observed = Observed::new();
    observed.insert(
        "v1",
        "Node",
        vec![
            node("gpu-1").allocatable("memory", "64Gi").gpus("8").label("gpu", "true").json(),
            node("gpu-2").allocatable("memory", "64Gi").gpus("4").label("gpu", "true").json(),
            node("cpu-1").allocatable("memory", "64Gi").gpus("0").json(),
        ],
    );
    observed.insert(
        "apps/v1",
        "DaemonSet",
        vec![json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"namespace": "lab", "name": "toolkit"},
                    "spec": {"template": {"spec": {"containers": [{"name": "toolkit", "image": "toolkit:bad"}]}}},
                    "status": {"desiredNumberScheduled": 3, "numberReady": 2}})],
    );
    observed
}

/// The evidence of `observation` and `files`, with no stages and the lab not started.
fn evidence<'a>(
    observation: &'a Observation,
    files: &'a ExpectedFiles,
    manifests: &'a BTreeMap<String, Vec<Value>>,
) -> Evidence<'a> {
    Evidence { observation, started: None, files, manifests, stages: &[], variant: None, details: false }
}

/// Grades with `observation` and nothing else: no files, no stages, the lab not started.
fn grade_over(observation: &Observation, f: impl FnOnce(&Evidence) -> Outcome) -> Outcome {
    let (files, manifests) = (ExpectedFiles::new(), BTreeMap::new());
    f(&evidence(observation, &files, &manifests))
}

fn run(yaml: &str) -> Outcome {
    let observation = Observation { observed: cluster(), ..Observation::default() };
    grade_over(&observation, |evidence| evaluate(&expectation(yaml), "t", evidence))
}

#[test]
fn match_reports_the_path_observed_and_expected_value() {
    let outcome = run(r#"
match:
  target: {apiVersion: v1, kind: Node, labelSelector: {matchLabels: {gpu: "true"}}}
  expected: {status: {allocatable: {nvidia.com/gpu: 8, memory: 65536Mi}}}
"#);
    assert_eq!(
        outcome.english(),
        (Status::Fail, vec!["node gpu-2: status.allocatable.nvidia.com/gpu is 4, expected 8".into()])
    );
    let any = run(r#"
match:
  target: {apiVersion: v1, kind: Node, labelSelector: {matchLabels: {gpu: "true"}}}
  expected: {status: {allocatable: {nvidia.com/gpu: 8}}}
  objects: any
"#);
    assert_eq!(any.english(), (Status::Pass, vec!["node gpu-1: matches".into()]));
}

#[test]
fn match_with_declared_list_semantics() {
    let contains = r#"
match:
  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab, name: toolkit}
  expected: {spec: {template: {spec: {containers: [{name: toolkit, image: "toolkit:1.0"}]}}}}
  lists: {spec.template.spec.containers: contains}
"#;
    assert_eq!(
        run(contains).english().1,
        [
            r#"daemonset lab/toolkit: spec.template.spec.containers has no element matching {"name":"toolkit","image":"toolkit:1.0"} (closest: spec.template.spec.containers[0].image is toolkit:bad, expected toolkit:1.0)"#
        ]
    );
    let none = r#"
match:
  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab, name: toolkit}
  expected: {spec: {template: {spec: {containers: [{image: "toolkit:bad"}]}}}}
  lists: {spec.template.spec.containers: none}
"#;
    assert_eq!(run(none).status(), Status::Fail);
    let undeclared = r#"
match:
  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab, name: toolkit}
  expected: {spec: {template: {spec: {containers: [{image: "toolkit:bad"}]}}}}
"#;
    assert_eq!(
        run(undeclared).english(),
        (Status::Error, vec![
            "list at spec.template.spec.containers has no declared semantics: add it under `lists` as contains, exactly, each or none".into()
        ])
    );
}

#[test]
fn match_from_an_expected_file() {
    let files: ExpectedFiles =
        [("expected/ds.yaml".to_string(), json!({"status": {"numberReady": 3}}))].into();
    let m = expectation(
        "match:\n  target: {apiVersion: apps/v1, kind: DaemonSet, name: toolkit}\n  expectedFile: expected/ds.yaml\n",
    );
    let observation = Observation { observed: cluster(), ..Observation::default() };
    let manifests = BTreeMap::new();
    let evidence = evidence(&observation, &files, &manifests);
    assert_eq!(
        evaluate(&m, "t", &evidence).english(),
        (Status::Fail, vec!["daemonset lab/toolkit: status.numberReady is 2, expected 3".into()])
    );
    assert_eq!(grade_over(&observation, |evidence| evaluate(&m, "t", evidence)).status(), Status::Error);
}

#[test]
fn match_on_nothing_selected_fails() {
    let outcome =
        run("match:\n  target: {apiVersion: apps/v1, kind: DaemonSet, name: other}\n  expected: {}\n");
    assert_eq!(outcome.english(), (Status::Fail, vec!["no DaemonSet other exists".into()]));
}

#[test]
fn absence() {
    assert_eq!(
        run("absent:\n  target: {apiVersion: v1, kind: Node, name: gpu-9}\n").english(),
        (Status::Pass, vec!["no Node gpu-9 exists".into()])
    );
    assert_eq!(
        run("absent:\n  target: {apiVersion: v1, kind: Node, name: gpu-2}\n").english(),
        (Status::Fail, vec!["node gpu-2 exists, expected none".into()])
    );
}

#[test]
fn counts() {
    let count = |op: &str, value: u64| {
        run(&format!(
            "count:\n  target: {{apiVersion: v1, kind: Node, labelSelector: {{matchLabels: {{gpu: \"true\"}}}}}}\n  op: \"{op}\"\n  value: {value}\n"
        ))
    };
    assert_eq!(
        count(">=", 2).english(),
        (Status::Pass, vec!["2 × Node with labels gpu=true observed, expected >= 2".into()])
    );
    assert_eq!(count("==", 3).status(), Status::Fail);
    assert_eq!(count("<", 3).status(), Status::Pass);
    assert_eq!(count("!=", 2).status(), Status::Fail);
    assert_eq!(count(">", 2).status(), Status::Fail);
    assert_eq!(count("<=", 1).status(), Status::Fail);
}

#[test]
fn quantities_compare_exactly() {
    let gpus = |op: &str, value: &str| {
        run(&format!(
            "quantity:\n  target: {{apiVersion: v1, kind: Node, name: gpu-2}}\n  path: 'status.allocatable[\"nvidia.com/gpu\"]'\n  op: \"{op}\"\n  value: {value}\n"
        ))
    };
    assert_eq!(
        gpus(">=", "8").english(),
        (Status::Fail, vec!["node gpu-2: status.allocatable.nvidia.com/gpu is 4, expected >= 8".into()])
    );
    assert_eq!(gpus("==", "4").status(), Status::Pass);
    assert_eq!(gpus("==", "\"4\"").status(), Status::Pass);
    assert_eq!(gpus("<", "4500m").status(), Status::Pass);
    let memory = |value: &str| {
        run(&format!(
            "quantity:\n  target: {{apiVersion: v1, kind: Node, name: gpu-1}}\n  path: status.allocatable.memory\n  op: \"==\"\n  value: {value}\n"
        ))
    };
    assert_eq!(memory("65536Mi").status(), Status::Pass);
    assert_eq!(memory("64G").status(), Status::Fail, "64G is not 64Gi");
    let absent = run(
        "quantity:\n  target: {apiVersion: v1, kind: Node, name: gpu-1}\n  path: status.allocatable.ephemeral-storage\n  op: \">=\"\n  value: 1\n",
    );
    assert_eq!(
        absent.english(),
        (
            Status::Fail,
            vec!["node gpu-1: status.allocatable.ephemeral-storage is absent, expected >= 1".into()]
        )
    );
    let bad = run(
        "quantity:\n  target: {apiVersion: v1, kind: Node}\n  path: status.allocatable.memory\n  op: \"==\"\n  value: lots\n",
    );
    assert_eq!(bad.english(), (Status::Error, vec!["value lots is not a Kubernetes quantity".into()]));
}

#[test]
fn an_unobserved_kind_is_an_error_for_every_matcher() {
    for yaml in [
        "match:\n  target: {apiVersion: v1, kind: Pod}\n  expected: {}\n",
        "absent:\n  target: {apiVersion: v1, kind: Pod}\n",
        "count:\n  target: {apiVersion: v1, kind: Pod}\n  op: \"==\"\n  value: 0\n",
        "quantity:\n  target: {apiVersion: v1, kind: Pod}\n  path: a\n  op: \"==\"\n  value: 0\n",
    ] {
        assert_eq!(
            run(yaml).english(),
            (Status::Error, vec!["v1 Pod was not observed: cannot judge Pod".into()]),
            "{yaml}"
        );
    }
}

#[test]
fn builtins_are_graded_here_and_error_on_what_was_not_observed() {
    let rollout = "rollout:\n  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab, name: toolkit}\n  state: converged\n";
    assert_eq!(run(rollout).english(), (Status::Error, vec!["v1 Pod was not observed".into()]));
    assert_eq!(
        run("quiz:\n  fact: affectedNode\n").english(),
        (Status::Error, vec!["the lab has not been started on this cluster (no inventory)".into()])
    );
    // A kind that could not be listed says why, for built-ins as for matchers.
    let mut observation = Observation { observed: cluster(), ..Observation::default() };
    observation.failures.insert(KindKey::new("v1", "Pod"), "forbidden (403)".into());
    let outcome = grade_over(&observation, |evidence| evaluate(&expectation(rollout), "t", evidence));
    assert_eq!(
        outcome.english(),
        (Status::Error, vec!["v1 Pod was not observed".into(), "listing v1 Pod: forbidden (403)".into()])
    );
}

#[test]
fn an_object_a_builtin_reads_that_does_not_decode_is_an_error_not_left_out() {
    let rollout = "rollout:\n  target: {apiVersion: apps/v1, kind: DaemonSet, namespace: lab, name: toolkit}\n  state: converged\n";
    let pod = |namespace: &str| {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": namespace, "name": "toolkit-x"},
               "spec": {"containers": "toolkit"}})
    };
    let mut observation = Observation { observed: cluster(), ..Observation::default() };
    // In another namespace, not the DaemonSet's: not one of its pods, whatever it holds.
    observation.observed.insert("v1", "Pod", vec![pod("elsewhere")]);
    let outcome = grade_over(&observation, |evidence| evaluate(&expectation(rollout), "t", evidence));
    assert_eq!(outcome.status(), Status::Fail, "{outcome:?}");
    observation.observed.insert("v1", "Pod", vec![pod("lab")]);
    let outcome = grade_over(&observation, |evidence| evaluate(&expectation(rollout), "t", evidence));
    let (status, lines) = outcome.english();
    assert_eq!(status, Status::Error);
    assert!(
        lines[0]
            .starts_with("pod lab/toolkit-x was listed but cannot be read (invalid type: string \"toolkit\""),
        "{lines:?}"
    );
}

#[test]
fn a_task_fails_before_it_errors_and_passes_only_when_all_pass() {
    let task = |expect: &str| -> Task {
        serde_saphyr::from_str(&format!(
            "id: t\ntitle: {{en: T, ja: T}}\ndescription: {{en: D, ja: D}}\npoints: 1\nexpect:\n{expect}"
        ))
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let pass = "  - absent: {target: {apiVersion: v1, kind: Node, name: x}}\n";
    let fail = "  - absent: {target: {apiVersion: v1, kind: Node, name: gpu-1}}\n";
    let error = "  - absent: {target: {apiVersion: v1, kind: Pod, name: x}}\n";
    let observation = Observation { observed: cluster(), ..Observation::default() };
    let (files, manifests) = (ExpectedFiles::new(), BTreeMap::new());
    let evidence = evidence(&observation, &files, &manifests);
    let grade = |expect: String| evaluate_task(&task(&expect), &evidence);
    assert_eq!(grade(format!("{pass}{pass}")).outcome.status(), Status::Pass);
    assert_eq!(grade(format!("{pass}{error}")).outcome.status(), Status::Error);
    let mixed = grade(format!("{error}{fail}{pass}"));
    assert_eq!(mixed.outcome.english(), (Status::Fail, vec!["node gpu-1 exists, expected none".into()]));
    assert_eq!(mixed.expectations.len(), 3);
    assert_eq!(grade("  []\n".into()).outcome.status(), Status::Pass, "vacuous: lint's job to reject");
}

#[test]
fn an_each_list_needs_one_expected_element() {
    let outcome = run(r#"
match:
  target: {apiVersion: apps/v1, kind: DaemonSet, name: toolkit}
  expected: {spec: {template: {spec: {containers: [{name: a}, {name: b}]}}}}
  lists: {spec.template.spec.containers: each}
"#);
    assert_eq!(
        outcome.english(),
        (Status::Error, vec![
            "list at spec.template.spec.containers is declared `each`: give exactly one expected element, which every observed element must match".into()
        ])
    );
}

#[test]
fn kinds_for_cover_matcher_targets_and_builtins() {
    let task: Task = serde_saphyr::from_str(
        "id: t\ntitle: {en: T}\ndescription: {en: D}\npoints: 1\nexpect:\n\
         - absent: {target: {apiVersion: v1, kind: Pod}}\n\
         - count: {target: {apiVersion: v1, kind: Pod, namespace: x}, op: \">=\", value: 1}\n\
         - rollout: {target: {apiVersion: apps/v1, kind: DaemonSet, name: d}, state: converged}\n",
    )
    .unwrap();
    assert_eq!(
        kinds_for([&task]).into_iter().collect::<Vec<_>>(),
        [KindKey::new("apps/v1", "DaemonSet"), KindKey::new("v1", "Node"), KindKey::new("v1", "Pod")]
    );
}

/// Issue #17: an observation listed with the [`Plan`]'s scopes grades every expectation exactly
/// as one listing every object of each kind does, whatever the learner left where — an object
/// in another namespace, without the label or under another name is either outside every
/// expectation's target or listed.
mod scoped_lists_grade_as_whole_ones {
    use proptest::prelude::*;

    use super::*;

    fn namespace() -> impl Strategy<Value = Option<String>> {
        prop::sample::select(vec![None, Some("a"), Some("b")]).prop_map(|n| n.map(str::to_string))
    }

    fn name() -> impl Strategy<Value = Option<String>> {
        prop::sample::select(vec![None, Some("p"), Some("q")]).prop_map(|n| n.map(str::to_string))
    }

    fn selector() -> impl Strategy<Value = Option<&'static str>> {
        prop::sample::select(vec![
            None,
            Some("matchLabels: {app: x}"),
            Some("matchExpressions: [{key: app, operator: In, values: [x, y]}]"),
            Some("matchExpressions: [{key: app, operator: NotIn, values: [x]}]"),
            Some("matchExpressions: [{key: tier, operator: Exists}]"),
            Some("matchExpressions: [{key: tier, operator: DoesNotExist}]"),
            Some("matchLabels: {app: x, tier: gpu}"),
        ])
    }

    fn target_yaml(namespace: &Option<String>, name: &Option<String>, selector: Option<&str>) -> String {
        let mut yaml = "{apiVersion: v1, kind: Pod".to_string();
        if let Some(namespace) = namespace {
            yaml += &format!(", namespace: {namespace}");
        }
        if let Some(name) = name {
            yaml += &format!(", name: {name}");
        }
        if let Some(selector) = selector {
            yaml += &format!(", labelSelector: {{{}}}", selector);
        }
        yaml + "}"
    }

    fn expectation_yaml() -> impl Strategy<Value = String> {
        (namespace(), name(), selector(), 0..4u8, 0..3u64).prop_map(
            |(namespace, name, selector, which, n)| {
                let target = target_yaml(&namespace, &name, selector);
                match which {
                    0 => format!("absent: {{target: {target}}}"),
                    1 => format!("count: {{target: {target}, op: \"==\", value: {n}}}"),
                    2 => format!(
                        "match: {{target: {target}, expected: {{metadata: {{labels: {{tier: gpu}}}}}}}}"
                    ),
                    _ => format!(
                        "quotaInForce: {{namespace: {}, resource: requests.nvidia.com/gpu, hard: 4}}",
                        namespace.unwrap_or_else(|| "a".into())
                    ),
                }
            },
        )
    }

    fn object() -> impl Strategy<Value = (Value, Value)> {
        let app = prop::sample::select(vec![None, Some("x"), Some("y"), Some("z")]);
        let tier = prop::sample::select(vec![None, Some("gpu"), Some("cpu")]);
        (
            prop::sample::select(vec!["a", "b", "c"]),
            prop::sample::select(vec!["p", "q", "r"]),
            app,
            tier,
            2..6u8,
        )
            .prop_map(|(namespace, name, app, tier, hard)| {
                let mut labels = serde_json::Map::new();
                if let Some(app) = app {
                    labels.insert("app".into(), json!(app));
                }
                if let Some(tier) = tier {
                    labels.insert("tier".into(), json!(tier));
                }
                let metadata = json!({"namespace": namespace, "name": name, "labels": labels});
                let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata});
                let quota = json!({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": metadata,
                    "spec": {"hard": {"requests.nvidia.com/gpu": hard.to_string()}}});
                (pod, quota)
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn for_every_expectation(
            yamls in prop::collection::vec(expectation_yaml(), 1..4),
            objects in prop::collection::vec(object(), 0..10),
        ) {
            let expectations: Vec<Expectation> = yamls.iter().map(|y| expectation(y)).collect();
            let plan = Plan::from_scopes(expectations.iter().flat_map(scopes_of));
            let mut whole = Observation::default();
            let mut scoped = Observation::default();
            for (kind, pick) in [("Pod", 0), ("ResourceQuota", 1)] {
                let all: Vec<Value> = objects.iter().map(|(p, q)| if pick == 0 { p.clone() } else { q.clone() }).collect();
                whole.observed.insert("v1", kind, all.clone());
                // What the server returns for the kind's scope (readable objects: exactly the scope).
                if let Some(scope) = plan.scope(&KindKey::new("v1", kind)) {
                    let listed = all.into_iter().filter(|o| scope.may_admit(o)).collect();
                    scoped.observed.insert("v1", kind, listed);
                }
            }
            for expectation in &expectations {
                let over = |observation: &Observation| grade_over(observation, |e| evaluate(expectation, "t", e));
                prop_assert_eq!(over(&whole), over(&scoped), "{:?} with {:?}", expectation, plan);
            }
        }
    }
}
