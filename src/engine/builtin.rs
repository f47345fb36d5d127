//! The built-in checks the engine evaluates over an observation: rollout analysis, quota in
//! force and quiz answers. Each returns a graded [`Outcome`] with evidence; what cannot be
//! judged is ERROR, never PASS or FAIL (DESIGN §2.3).

use std::collections::BTreeSet;

use k8s_openapi::{
    api::{
        apps::v1::DaemonSet,
        core::v1::{Node, Pod},
    },
    jiff::Timestamp,
};
use serde_json::Value;

use super::{inventory::Inventory, observe::typed};
use crate::{
    grade::{KindKey, Observed, Outcome},
    k8s::{daemon, quantity::Quantity},
    lab::model::{AnswerMatching, Expectation, Fact, ObjectRef, QuizCheck, RolloutCheck, RolloutState},
};

/// Errors from the built-in checks' own inputs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A kind the check needs was not observed.
    #[error("{0} was not observed")]
    NotObserved(String),
    /// The object the check looks at does not exist.
    #[error("{0} does not exist")]
    Missing(String),
    /// The DaemonSet's template cannot be hashed.
    #[error("cannot compute the revision hash of {0}")]
    Hash(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The kinds a built-in expectation lists.
pub fn kinds_of(expectation: &Expectation) -> Vec<KindKey> {
    let key = KindKey::new;
    match expectation {
        Expectation::Rollout(_) => vec![key("apps/v1", "DaemonSet"), key("v1", "Node"), key("v1", "Pod")],
        Expectation::QuotaInForce(_) => vec![key("v1", "ResourceQuota")],
        Expectation::DevicePluginConfig(_) => vec![key("v1", "ConfigMap"), key("v1", "Node")],
        Expectation::Schedulable(_) => vec![key("v1", "Node"), key("v1", "Pod")],
        Expectation::AlertRule(check) => {
            vec![KindKey::new(&check.rules.api_version, &check.rules.kind), key("apps/v1", "DaemonSet")]
        }
        _ => Vec::new(),
    }
}

fn kind<'a>(observed: &'a Observed, api_version: &str, kind: &str) -> Result<&'a [Value]> {
    observed.objects(api_version, kind).ok_or_else(|| Error::NotObserved(format!("{api_version} {kind}")))
}

fn name_of(object: &Value) -> &str {
    object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

fn find<'a>(objects: &'a [Value], target: &ObjectRef) -> Option<&'a Value> {
    objects.iter().find(|o| {
        name_of(o) == target.name
            && o.pointer("/metadata/namespace").and_then(Value::as_str) == target.namespace.as_deref()
    })
}

/// One row of the split-generation view: a node, its daemon pod (if any) and what it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutRow {
    /// Node name.
    pub node: String,
    /// Whether the DaemonSet wants a pod there.
    pub wanted: bool,
    /// The pod, or `-`.
    pub pod: String,
    /// `controller-revision-hash` of the pod, or `-`.
    pub revision: String,
    /// Whether that revision is the DaemonSet's current template.
    pub current: bool,
    /// First container image.
    pub image: String,
    /// Waiting reason, or phase (`Running`, `Pending`); `no pod` when none.
    pub state: String,
    /// Whether the node is where the DaemonSet wants it.
    pub settled: bool,
}

/// The per-node rollout analysis of one DaemonSet.
#[derive(Debug, Clone)]
pub struct RolloutAnalysis {
    /// `namespace/name`.
    pub daemon_set: String,
    /// The current template's revision hash.
    pub current_hash: String,
    /// The status counters as the server reports them.
    pub counters: daemon::DaemonSetCounters,
    /// One row per node (and per extra pod on a node).
    pub rows: Vec<RolloutRow>,
}

/// What a pod is doing, in the words `kubectl get pods` uses.
pub fn pod_state(pod: &Pod) -> String {
    let status = pod.status.as_ref();
    let waiting = status
        .and_then(|s| s.container_statuses.as_ref())
        .into_iter()
        .flatten()
        .find_map(|c| c.state.as_ref().and_then(|s| s.waiting.as_ref()).and_then(|w| w.reason.clone()));
    if let Some(reason) = waiting {
        return reason;
    }
    let unschedulable = status.and_then(|s| s.conditions.as_ref()).into_iter().flatten().any(|c| {
        c.type_ == "PodScheduled" && c.status == "False" && c.reason.as_deref() == Some("Unschedulable")
    });
    if unschedulable {
        return "Pending (Unschedulable)".to_string();
    }
    status.and_then(|s| s.phase.clone()).unwrap_or_else(|| "Pending".to_string())
}

/// Analyses the DaemonSet `target` over the observed nodes and pods.
pub fn analyse_rollout(observed: &Observed, target: &ObjectRef) -> Result<RolloutAnalysis> {
    let who = format!("daemonset {}/{}", target.namespace.as_deref().unwrap_or(""), target.name);
    let daemon_sets = kind(observed, "apps/v1", "DaemonSet")?;
    let ds_value = find(daemon_sets, target).ok_or_else(|| Error::Missing(who.clone()))?;
    let ds: DaemonSet = serde_json::from_value(ds_value.clone()).map_err(|_| Error::Hash(who.clone()))?;
    let nodes: Vec<Node> = typed(kind(observed, "v1", "Node")?);
    let uid = ds.metadata.uid.clone();
    let pods: Vec<Pod> = typed::<Pod>(kind(observed, "v1", "Pod")?)
        .into_iter()
        .filter(|pod| {
            pod.metadata.namespace == ds.metadata.namespace
                && pod.metadata.owner_references.iter().flatten().any(|o| Some(&o.uid) == uid.as_ref())
        })
        .collect();
    let spec = ds.spec.clone().unwrap_or_default();
    let collision = ds.status.as_ref().and_then(|s| s.collision_count);
    let hash = daemon::compute_hash(&spec.template, collision).map_err(|_| Error::Hash(who.clone()))?;
    // The counters as the last status update wrote them; `now` only matters for minReadySeconds.
    let now = Timestamp::now();
    let view = daemon::rollout_view(&ds, &nodes, &pods, &hash, now);
    let mut rows = Vec::new();
    for node in &view {
        let settled = node.is_settled();
        let wanted = node.placement.should_run();
        if node.pods.is_empty() {
            rows.push(RolloutRow {
                node: node.node.clone(),
                wanted,
                pod: "-".into(),
                revision: "-".into(),
                current: false,
                image: "-".into(),
                state: "no pod".into(),
                settled,
            });
        }
        for rollout_pod in &node.pods {
            let pod = pods.iter().find(|p| p.metadata.name.as_deref() == Some(rollout_pod.name.as_str()));
            let label =
                |key: &str| pod.and_then(|p| p.metadata.labels.as_ref()).and_then(|l| l.get(key)).cloned();
            rows.push(RolloutRow {
                node: node.node.clone(),
                wanted,
                pod: rollout_pod.name.clone(),
                revision: label("controller-revision-hash").unwrap_or_else(|| "-".into()),
                current: rollout_pod.revision == daemon::PodRevision::Current,
                image: pod
                    .and_then(|p| p.spec.as_ref())
                    .and_then(|s| s.containers.first())
                    .and_then(|c| c.image.clone())
                    .unwrap_or_else(|| "-".into()),
                state: pod.map(pod_state).unwrap_or_else(|| "-".into()),
                settled,
            });
        }
    }
    let status = ds.status.clone().unwrap_or_default();
    let counters = daemon::DaemonSetCounters {
        desired_number_scheduled: status.desired_number_scheduled,
        current_number_scheduled: status.current_number_scheduled,
        number_ready: status.number_ready,
        updated_number_scheduled: status.updated_number_scheduled.unwrap_or(0),
        number_available: status.number_available.unwrap_or(0),
        number_misscheduled: status.number_misscheduled,
        number_unavailable: status.number_unavailable.unwrap_or(0),
    };
    Ok(RolloutAnalysis { daemon_set: who, current_hash: hash, counters, rows })
}

/// Evaluates a `rollout` check. `broken_template`: the containers of the stage named
/// `brokenStage`, which do not count as converged.
pub fn rollout(check: &RolloutCheck, observed: &Observed, broken_containers: Option<&Value>) -> Outcome {
    let analysis = match analyse_rollout(observed, &check.target) {
        Ok(analysis) => analysis,
        Err(Error::Missing(what)) => return Outcome::Fail(vec![format!("{what} does not exist")]),
        Err(e) => return Outcome::Error(vec![e.to_string()]),
    };
    let mut evidence: Vec<String> = analysis
        .rows
        .iter()
        .filter(|r| r.wanted || r.pod != "-")
        .map(|r| {
            let generation = if r.current { "current" } else { "old" };
            if r.pod == "-" {
                format!("node {}: no pod", r.node)
            } else {
                format!(
                    "node {}: pod {} revision {} ({generation}) image {} {}",
                    r.node, r.pod, r.revision, r.image, r.state
                )
            }
        })
        .collect();
    let unsettled: Vec<&RolloutRow> = analysis.rows.iter().filter(|r| !r.settled).collect();
    let counters = analysis.counters;
    let mut problems: Vec<String> = Vec::new();
    for row in &unsettled {
        let why = if !row.wanted {
            format!("node {}: pod {} runs where the DaemonSet no longer wants one", row.node, row.pod)
        } else if row.pod == "-" {
            format!("node {}: no pod", row.node)
        } else if !row.current {
            format!("node {}: still on the old revision {} ({})", row.node, row.revision, row.state)
        } else {
            format!("node {}: new pod {} is {}", row.node, row.pod, row.state)
        };
        problems.push(why);
    }
    if counters.number_unavailable != 0 {
        problems.push(format!("numberUnavailable is {}", counters.number_unavailable));
    }
    if let Some(selector) = &check.nodes {
        let nodes = observed.objects("v1", "Node").unwrap_or(&[]);
        let wanted = nodes.iter().filter(|n| crate::grade::observed::selector_matches(selector, n)).count();
        if counters.desired_number_scheduled as usize != wanted {
            problems.push(format!(
                "DESIRED is {} but {wanted} nodes match the lab's node selector",
                counters.desired_number_scheduled
            ));
        }
    }
    if let Some(broken) = broken_containers {
        let daemon_sets = observed.objects("apps/v1", "DaemonSet").unwrap_or(&[]);
        let current =
            find(daemon_sets, &check.target).and_then(|d| d.pointer("/spec/template/spec/containers"));
        if current.is_some_and(|c| same_containers(c, broken)) {
            problems.push("the template is still the broken one".to_string());
        }
    }
    evidence.insert(
        0,
        format!(
            "{}: desired {} current {} ready {} up-to-date {} available {}",
            analysis.daemon_set,
            counters.desired_number_scheduled,
            counters.current_number_scheduled,
            counters.number_ready,
            counters.updated_number_scheduled,
            counters.number_available
        ),
    );
    match check.state {
        RolloutState::Converged if problems.is_empty() => {
            evidence.push("converged: one revision everywhere, nothing unavailable".into());
            Outcome::Pass(evidence)
        }
        RolloutState::Converged => {
            evidence.extend(problems.into_iter().map(|p| format!("not converged: {p}")));
            Outcome::Fail(evidence)
        }
        RolloutState::Stalled if unsettled.is_empty() => {
            evidence.push("not stalled: every node is settled".into());
            Outcome::Fail(evidence)
        }
        RolloutState::Stalled => {
            evidence.extend(problems.into_iter().map(|p| format!("stalled: {p}")));
            Outcome::Pass(evidence)
        }
    }
}

/// Whether two container lists run the same images with the same resources (the parts a
/// breakage changes).
fn same_containers(a: &Value, b: &Value) -> bool {
    let essence = |v: &Value| -> BTreeSet<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                format!(
                    "{}|{}|{}",
                    c.get("name").and_then(Value::as_str).unwrap_or(""),
                    c.get("image").and_then(Value::as_str).unwrap_or(""),
                    quantities(c.pointer("/resources/requests"))
                )
            })
            .collect()
    };
    essence(a) == essence(b)
}

fn quantities(map: Option<&Value>) -> String {
    map.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let q =
                        Quantity::from_json(v).map(|q| format!("{q:?}")).unwrap_or_else(|_| v.to_string());
                    format!("{k}={q}")
                })
                .collect::<Vec<_>>()
                .join(",")
        })
        .unwrap_or_default()
}

/// Evaluates a `quotaInForce` check's `hard` value over the observed ResourceQuotas.
pub fn quota_in_force(check: &crate::lab::model::QuotaInForceCheck, observed: &Observed) -> Outcome {
    let quotas = match kind(observed, "v1", "ResourceQuota") {
        Ok(quotas) => quotas,
        Err(e) => return Outcome::Error(vec![e.to_string()]),
    };
    let Ok(wanted) = Quantity::from_json(&check.hard) else {
        return Outcome::Error(vec![format!("hard value {} is not a quantity", check.hard)]);
    };
    let in_namespace: Vec<&Value> = quotas
        .iter()
        .filter(|q| {
            q.pointer("/metadata/namespace").and_then(Value::as_str) == Some(check.namespace.as_str())
        })
        .collect();
    let mut evidence = Vec::new();
    for quota in &in_namespace {
        let name = name_of(quota);
        let hard = quota.get("spec").and_then(|s| s.get("hard")).and_then(|h| h.get(&check.resource));
        match hard.map(Quantity::from_json) {
            Some(Ok(have)) if have == wanted => {
                return Outcome::Pass(vec![format!(
                    "resourcequota {}/{name}: hard {} = {}",
                    check.namespace, check.resource, check.hard
                )]);
            }
            Some(_) => evidence.push(format!(
                "resourcequota {}/{name}: hard {} is {}, expected {}",
                check.namespace,
                check.resource,
                hard.map(Value::to_string).unwrap_or_default(),
                check.hard
            )),
            None => evidence.push(format!(
                "resourcequota {}/{name} sets no hard {} (keys: {})",
                check.namespace,
                check.resource,
                quota
                    .pointer("/spec/hard")
                    .and_then(Value::as_object)
                    .map(|m| m.keys().cloned().collect::<Vec<_>>().join(", "))
                    .unwrap_or_default()
            )),
        }
    }
    if in_namespace.is_empty() {
        evidence.push(format!("no ResourceQuota exists in namespace {}", check.namespace));
    }
    Outcome::Fail(evidence)
}

/// Evaluates a `quiz` check: the stored answer against the captured (hashed) fact or the
/// accepted answers, never against a hard-coded value in the engine.
pub fn quiz(check: &QuizCheck, task: &str, inventory: Option<&Inventory>) -> Outcome {
    let Some(inventory) = inventory else {
        return Outcome::Error(vec!["the lab has not been started on this cluster (no inventory)".into()]);
    };
    let Some(answer) = inventory.answers.get(task) else {
        return Outcome::Fail(vec![format!(
            "no answer yet: lab-runner answer {} {task} VALUE",
            inventory.lab
        )]);
    };
    let folded = check.matching == AnswerMatching::CaseInsensitive;
    let same = |a: &str, b: &str| {
        if folded { a.trim().eq_ignore_ascii_case(b.trim()) } else { a.trim() == b.trim() }
    };
    let mut judged = false;
    if let Some(fact) = check.fact {
        let name = fact_name(fact);
        match inventory.facts.get(name) {
            None => {
                return Outcome::Error(vec![format!(
                    "start did not capture the fact {name}; run start again"
                )]);
            }
            Some(hashed) if hashed.matches(answer, folded) => {
                return Outcome::Pass(vec![format!("answer {answer:?} matches the fact captured at start")]);
            }
            Some(_) => judged = true,
        }
    }
    let by_variant = inventory.variant.as_ref().and_then(|v| check.accept_by_variant.get(v));
    let accepted: Vec<&String> = check.accept.iter().chain(by_variant.into_iter().flatten()).collect();
    if accepted.iter().any(|a| same(a, answer)) {
        return Outcome::Pass(vec![format!("answer {answer:?} is accepted")]);
    }
    if judged || !accepted.is_empty() {
        Outcome::Fail(vec![format!("answer {answer:?} is not right")])
    } else {
        Outcome::Error(vec!["the quiz names neither a fact nor accepted answers".into()])
    }
}

/// A fact's key in the inventory.
pub fn fact_name(fact: Fact) -> &'static str {
    match fact {
        Fact::Variant => "variant",
        Fact::AffectedNode => "affectedNode",
    }
}
