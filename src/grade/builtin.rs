//! The built-in domain checks, graded over the evidence: rollout, quota in force, quiz, schedulable, device-plugin config.
//!
//! Pure functions like the matchers: each returns a graded [`Outcome`] with evidence; what cannot
//! be judged is ERROR, never PASS or FAIL (DESIGN §2.3).

use std::collections::BTreeSet;

use k8s_openapi::{
    api::{
        apps::v1::DaemonSet,
        core::v1::{Node, Pod},
    },
    jiff::Timestamp,
};
use serde_json::Value;

use super::{
    Observed, Outcome,
    evidence::{Probe, Started},
    observed::typed,
};
use crate::{
    k8s::{daemon, quantity::Quantity},
    lab::model::{AnswerMatching, Fact, ObjectRef, QuizCheck, RolloutCheck, RolloutState},
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
pub fn rollout(check: &RolloutCheck, observed: &Observed, broken_pod_spec: Option<&Value>) -> Outcome {
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
        let wanted = nodes.iter().filter(|n| super::observed::selector_matches(selector, n)).count();
        if counters.desired_number_scheduled as usize != wanted {
            problems.push(format!(
                "DESIRED is {} but {wanted} nodes match the lab's node selector",
                counters.desired_number_scheduled
            ));
        }
    }
    if let Some(broken) = broken_pod_spec {
        let daemon_sets = observed.objects("apps/v1", "DaemonSet").unwrap_or(&[]);
        let current = find(daemon_sets, &check.target).and_then(|d| d.pointer("/spec/template/spec"));
        if current.is_some_and(|c| same_breakage_surface(c, broken)) {
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
/// True when two pod specs agree on everything a broken update can change in this course's
/// variants: containers (name, image, requests), tolerations and the node selector. API defaults
/// the server adds elsewhere do not count.
fn same_breakage_surface(a: &Value, b: &Value) -> bool {
    let tolerations = |spec: &Value| -> BTreeSet<String> {
        spec["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| {
                let text = |field: &str| t.get(field).and_then(Value::as_str).unwrap_or("").to_string();
                let operator = t.get("operator").and_then(Value::as_str).unwrap_or("Equal");
                format!("{}|{operator}|{}|{}", text("key"), text("value"), text("effect"))
            })
            .collect()
    };
    same_containers(&a["containers"], &b["containers"])
        && tolerations(a) == tolerations(b)
        && a.get("nodeSelector").filter(|v| !v.is_null()) == b.get("nodeSelector").filter(|v| !v.is_null())
}

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

/// Evaluates a `quotaInForce` check: the `hard` value over the observed ResourceQuotas.
/// With a probe file, the over-quota `dryRun=All` create must also have been rejected.
pub fn quota_in_force(
    check: &crate::lab::model::QuotaInForceCheck,
    observed: &Observed,
    probe: Option<Option<&Probe>>,
) -> Outcome {
    let probed = match probe {
        None => None,
        Some(None) => return Outcome::Error(vec!["the over-quota probe was not sent".into()]),
        Some(Some(Probe::NotSent(why))) => {
            return Outcome::Error(vec![format!("the over-quota probe failed: {why}")]);
        }
        // The namespace is named: a task usually checks one quota per team, and two bare
        // "was admitted" lines in one report do not say which team's quota is not in force.
        Some(Some(Probe::Admitted)) => {
            Some(Err(format!("an over-quota pod in {} (dryRun=All) was admitted", check.namespace)))
        }
        Some(Some(Probe::Rejected(message))) => {
            Some(Ok(format!("an over-quota pod in {} (dryRun=All) was rejected: {message}", check.namespace)))
        }
    };
    let outcome = quota_hard(check, observed);
    match (outcome, probed) {
        (outcome, None) => outcome,
        (Outcome::Pass(mut lines), Some(Ok(line))) => {
            lines.push(line);
            Outcome::Pass(lines)
        }
        (Outcome::Pass(_), Some(Err(line))) => Outcome::Fail(vec![line]),
        (Outcome::Fail(mut lines), Some(Err(line))) => {
            lines.push(line);
            Outcome::Fail(lines)
        }
        (other, _) => other,
    }
}

fn quota_hard(check: &crate::lab::model::QuotaInForceCheck, observed: &Observed) -> Outcome {
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
pub fn quiz(check: &QuizCheck, task: &str, started: Option<Started<'_>>) -> Outcome {
    let Some(inventory) = started else {
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
    let by_variant = check.accept_by_variant.iter().find(|(v, _)| inventory.variant_is(v)).map(|(_, a)| a);
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

/// Evaluates a `schedulable` check: a pod file fitted against the observed nodes and pods with
/// the scheduler predicates of [`crate::k8s::schedule`], or existing pods judged by their
/// `PodScheduled` condition (a dry-run create does not schedule, so it is not used).
pub fn schedulable(
    check: &crate::lab::model::SchedulableCheck,
    files: &super::ExpectedFiles,
    observed: &Observed,
) -> Outcome {
    use crate::{k8s::schedule, lab::model::Schedulability};
    let want = check.want;
    let reason_ok =
        |message: &str| check.reason_contains.as_deref().is_none_or(|needle| message.contains(needle));
    let nodes_all = match kind(observed, "v1", "Node") {
        Ok(nodes) => nodes,
        Err(e) => return Outcome::Error(vec![e.to_string()]),
    };
    if let Some(target) = &check.pods {
        let pods = match observed.select(target) {
            Ok(pods) => pods,
            Err(e) => return Outcome::Error(vec![e.to_string()]),
        };
        if pods.is_empty() {
            return Outcome::Fail(vec![format!(
                "no pod matches {}",
                super::observed::describe_target(target)
            )]);
        }
        let mut passed = Vec::new();
        let mut failed = Vec::new();
        for pod in pods {
            let who = super::observed::describe(pod);
            let scheduled = pod
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("PodScheduled"));
            let status = scheduled.and_then(|c| c.get("status")).and_then(Value::as_str);
            let message = scheduled.and_then(|c| c.get("message")).and_then(Value::as_str).unwrap_or("");
            let node = pod.pointer("/spec/nodeName").and_then(Value::as_str);
            match (want, status, node) {
                (Schedulability::Schedulable, Some("True"), Some(node)) => {
                    passed.push(format!("{who}: scheduled on node {node}"))
                }
                (Schedulability::Schedulable, _, _) => failed.push(format!(
                    "{who}: not scheduled: {}",
                    if message.is_empty() { "no PodScheduled=True condition" } else { message }
                )),
                (Schedulability::Unschedulable, Some("False"), None) if reason_ok(message) => {
                    passed.push(format!("{who}: unschedulable: {message}"))
                }
                (Schedulability::Unschedulable, Some("False"), None) => failed.push(format!(
                    "{who}: unschedulable, but for another reason than {:?}: {message}",
                    check.reason_contains.as_deref().unwrap_or("")
                )),
                (Schedulability::Unschedulable, _, _) => {
                    failed.push(format!("{who}: scheduled on node {}", node.unwrap_or("(not yet)")))
                }
            }
        }
        return if failed.is_empty() { Outcome::Pass(passed) } else { Outcome::Fail(failed) };
    }
    let Some(file) = &check.pod_file else {
        return Outcome::Error(vec!["the schedulable check names neither `pods` nor `podFile`".into()]);
    };
    let Some(document) = files.get(&file.value) else {
        return Outcome::Error(vec![format!("pod file {} is not part of the bundle", file.value)]);
    };
    let Ok(pod) = serde_json::from_value::<Pod>(document.clone()) else {
        return Outcome::Error(vec![format!("pod file {} is not a Pod", file.value)]);
    };
    let nodes: Vec<Node> = typed(nodes_all)
        .into_iter()
        .filter(|n: &Node| {
            check.nodes.as_ref().is_none_or(|selector| {
                super::observed::selector_matches(selector, &serde_json::to_value(n).unwrap_or(Value::Null))
            })
        })
        .collect();
    let pods: Vec<Pod> = match kind(observed, "v1", "Pod") {
        Ok(pods) => typed(pods),
        Err(e) => return Outcome::Error(vec![e.to_string()]),
    };
    let outcome = match schedule::find_feasible_nodes(&pod, &nodes, &pods) {
        Ok(outcome) => outcome,
        Err(e) => return Outcome::Error(vec![format!("cannot fit {}: {e}", file.value)]),
    };
    match (want, &outcome) {
        (Schedulability::Schedulable, schedule::FilterOutcome::Feasible(fits)) => {
            let names: Vec<&str> = fits.iter().map(|f| f.name.as_str()).collect();
            Outcome::Pass(vec![format!("{} fits node(s) {}", file.value, names.join(", "))])
        }
        (Schedulability::Unschedulable, schedule::FilterOutcome::Feasible(fits)) => {
            let names: Vec<&str> = fits.iter().map(|f| f.name.as_str()).collect();
            Outcome::Fail(vec![format!(
                "{} fits node(s) {}, expected it to fit none",
                file.value,
                names.join(", ")
            )])
        }
        (Schedulability::Schedulable, schedule::FilterOutcome::Unschedulable(failure)) => {
            Outcome::Fail(vec![format!("{}: {failure}", file.value)])
        }
        (Schedulability::Unschedulable, schedule::FilterOutcome::Unschedulable(failure)) => {
            let message = failure.to_string();
            if reason_ok(&message) {
                Outcome::Pass(vec![format!("{}: {message}", file.value)])
            } else {
                Outcome::Fail(vec![format!(
                    "{}: unschedulable, but not because of {:?}: {message}",
                    file.value,
                    check.reason_contains.as_deref().unwrap_or("")
                )])
            }
        }
    }
}

/// What a device-plugin config (one key of the plugin ConfigMap) shares, per the v0.17 rules
/// (gpu-domain.md §1: MPS wins over time-slicing when it has a resource with replicas > 1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharingPlan {
    /// `none`, `time-slicing` or `mps`, as GFD labels `nvidia.com/gpu.sharing-strategy`.
    pub strategy: &'static str,
    /// Replicas per GPU (1 when not shared).
    pub replicas: i64,
    /// The advertised resource (`nvidia.com/gpu`, or `nvidia.com/gpu.shared` when renamed).
    pub resource: String,
}

/// Reads the sharing plan from a device-plugin config file's text.
pub fn sharing_plan(config: &str) -> std::result::Result<SharingPlan, String> {
    let value: Value = serde_saphyr::from_str(config).map_err(|e| e.to_string())?;
    let replicated = |strategy: &'static str, section: &str| -> Option<SharingPlan> {
        let section = value.pointer(&format!("/sharing/{section}"))?;
        let rename = section.get("renameByDefault").and_then(Value::as_bool).unwrap_or(false);
        section.get("resources")?.as_array()?.iter().find_map(|r| {
            let name = r.get("name").and_then(Value::as_str)?;
            let name = if name.contains('/') { name.to_string() } else { format!("nvidia.com/{name}") };
            let replicas = r.get("replicas").and_then(Value::as_i64)?;
            (name == "nvidia.com/gpu" && replicas > 1).then(|| SharingPlan {
                strategy,
                replicas,
                resource: if rename { format!("{name}.shared") } else { name },
            })
        })
    };
    Ok(replicated("mps", "mps")
        .or_else(|| replicated("time-slicing", "timeSlicing"))
        .unwrap_or(SharingPlan { strategy: "none", replicas: 1, resource: "nvidia.com/gpu".into() }))
}

/// Under a config with `flags.migStrategy: mixed` on a node whose GFD reports MIG devices: each
/// `nvidia.com/mig-<profile>` resource with the count it should advertise (the profile's
/// `.count` label × its `.replicas` label). Empty otherwise.
fn mixed_mig_profiles(
    config: &str,
    labels: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, i64)> {
    let value: Value = serde_saphyr::from_str(config).unwrap_or(Value::Null);
    let mixed = value.pointer("/flags/migStrategy").and_then(Value::as_str) == Some("mixed")
        && labels.get("nvidia.com/mig.strategy").map(String::as_str) == Some("mixed");
    if !mixed {
        return Vec::new();
    }
    labels
        .iter()
        .filter_map(|(key, value)| {
            let profile = key.strip_prefix("nvidia.com/mig-")?.strip_suffix(".count")?;
            let count = value.parse::<i64>().ok()?;
            let replicas = labels
                .get(&format!("nvidia.com/mig-{profile}.replicas"))
                .and_then(|r| r.parse::<i64>().ok())
                .unwrap_or(1);
            Some((format!("nvidia.com/mig-{profile}"), count * replicas))
        })
        .collect()
}

/// Evaluates a `devicePluginConfig` check: each selected node's config label names a real key of
/// the plugin ConfigMap (the wanted one, if given), and its GFD labels and allocatable agree
/// with that config.
pub fn device_plugin_config(
    check: &crate::lab::model::DevicePluginConfigCheck,
    observed: &Observed,
) -> Outcome {
    let (config_maps, nodes) = match (kind(observed, "v1", "ConfigMap"), kind(observed, "v1", "Node")) {
        (Ok(c), Ok(n)) => (c, n),
        (Err(e), _) | (_, Err(e)) => return Outcome::Error(vec![e.to_string()]),
    };
    let map_name =
        format!("{}/{}", check.config_map.namespace.as_deref().unwrap_or(""), check.config_map.name);
    let Some(config_map) = find(config_maps, &check.config_map) else {
        return Outcome::Fail(vec![format!("ConfigMap {map_name} does not exist")]);
    };
    let data: std::collections::BTreeMap<String, String> =
        config_map.get("data").cloned().and_then(|d| serde_json::from_value(d).ok()).unwrap_or_default();
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    let selected: Vec<&Value> =
        nodes.iter().filter(|n| super::observed::selector_matches(&check.nodes, n)).collect();
    if selected.is_empty() {
        return Outcome::Fail(vec!["no node matches the check's node selector".into()]);
    }
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for node in selected {
        let name = name_of(node);
        let labels = crate::k8s::selector::labels_of(node);
        let Some(chosen) = labels.get(&check.label) else {
            failed.push(format!("node {name}: no {} label", check.label));
            continue;
        };
        let Some(text) = data.get(chosen) else {
            failed.push(format!(
                "node {name}: {}={chosen} is not a key of ConfigMap {} [{}]",
                check.label,
                check.config_map.name,
                keys.join(", ")
            ));
            continue;
        };
        if let Some(wanted) = &check.config
            && wanted != chosen
        {
            failed.push(format!("node {name}: {}={chosen}, expected {wanted}", check.label));
            continue;
        }
        let plan = match sharing_plan(text) {
            Ok(plan) => plan,
            Err(e) => {
                failed.push(format!("node {name}: config {chosen} does not parse: {e}"));
                continue;
            }
        };
        let label = |key: &str| labels.get(key).cloned();
        // MIG mixed: each profile is its own resource; GFD labels its count and replicas
        // (gpu-domain.md §3.1, §4.2), and the full-GPU labels of MIG-enabled GPUs say 0.
        let mig_profiles = mixed_mig_profiles(text, &labels);
        if !mig_profiles.is_empty() {
            let mut problems = Vec::new();
            let mut advertised = Vec::new();
            for (resource, expected) in &mig_profiles {
                let allocatable =
                    node.pointer("/status/allocatable").and_then(|a| a.get(resource)).and_then(Value::as_str);
                if allocatable != Some(expected.to_string().as_str()) {
                    problems.push(format!(
                        "allocatable {resource} is {}, GFD labels give {expected}",
                        allocatable.unwrap_or("absent")
                    ));
                }
                advertised.push(format!("{resource} {expected}"));
            }
            if problems.is_empty() {
                passed.push(format!(
                    "node {name}: config {chosen} in effect (MIG mixed, {})",
                    advertised.join(", ")
                ));
            } else {
                failed.extend(problems.into_iter().map(|p| format!("node {name}: {p}")));
            }
            continue;
        }
        let count = label("nvidia.com/gpu.count").and_then(|c| c.parse::<i64>().ok());
        let Some(count) = count else {
            failed.push(format!(
                "node {name}: no nvidia.com/gpu.count label yet (GFD has not labelled the node)"
            ));
            continue;
        };
        let mut problems = Vec::new();
        let replicas = label("nvidia.com/gpu.replicas");
        if replicas.as_deref() != Some(plan.replicas.to_string().as_str()) {
            problems.push(format!(
                "nvidia.com/gpu.replicas is {}, config {chosen} gives {}",
                replicas.as_deref().unwrap_or("absent"),
                plan.replicas
            ));
        }
        let strategy = label("nvidia.com/gpu.sharing-strategy");
        if strategy.as_deref().is_some_and(|s| s != plan.strategy) {
            problems.push(format!(
                "nvidia.com/gpu.sharing-strategy is {}, config {chosen} gives {}",
                strategy.unwrap_or_default(),
                plan.strategy
            ));
        }
        let expected = count * plan.replicas;
        let allocatable = node
            .pointer("/status/allocatable")
            .and_then(|a| a.get(&plan.resource))
            .and_then(Value::as_str)
            .map(str::to_string);
        if allocatable.as_deref() != Some(expected.to_string().as_str()) {
            problems.push(format!(
                "allocatable {} is {}, config {chosen} gives {count} GPU(s) × {} = {expected}",
                plan.resource,
                allocatable.as_deref().unwrap_or("absent"),
                plan.replicas
            ));
        }
        if problems.is_empty() {
            passed.push(format!(
                "node {name}: config {chosen} in effect ({}, {} {expected})",
                plan.strategy, plan.resource
            ));
        } else {
            failed.extend(problems.into_iter().map(|p| format!("node {name}: {p}")));
        }
    }
    if failed.is_empty() { Outcome::Pass(passed) } else { Outcome::Fail(failed) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixed_mig_configs_are_graded_per_profile() {
        let labels: std::collections::BTreeMap<String, String> = [
            ("nvidia.com/mig.strategy", "mixed"),
            ("nvidia.com/mig-1g.5gb.count", "7"),
            ("nvidia.com/mig-1g.5gb.replicas", "1"),
            ("nvidia.com/gpu.replicas", "0"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mixed = "version: v1\nflags:\n  migStrategy: mixed\n";
        assert_eq!(mixed_mig_profiles(mixed, &labels), vec![("nvidia.com/mig-1g.5gb".to_string(), 7)]);
        assert!(mixed_mig_profiles("version: v1\nflags:\n  migStrategy: none\n", &labels).is_empty());
    }

    #[test]
    fn a_toleration_only_breakage_is_told_apart_from_the_restored_template() {
        let container = serde_json::json!([{"name": "toolkit", "image": "toolkit:v1"}]);
        let healthy = serde_json::json!({"containers": container,
            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]});
        let broken = serde_json::json!({"containers": container,
            "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}]});
        assert!(!same_breakage_surface(&healthy, &broken));
        assert!(same_breakage_surface(&broken, &broken.clone()));
        let mut image = healthy.clone();
        image["containers"][0]["image"] = serde_json::json!("toolkit:v9");
        assert!(!same_breakage_surface(&healthy, &image));
    }

    #[test]
    fn mps_wins_over_time_slicing_and_rename_adds_shared() {
        let config = "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 4}]\n  \
                      mps:\n    renameByDefault: true\n    resources: [{name: gpu, replicas: 2}]\n";
        let plan = sharing_plan(config).unwrap();
        assert_eq!(
            plan,
            SharingPlan { strategy: "mps", replicas: 2, resource: "nvidia.com/gpu.shared".into() }
        );
        let plain = sharing_plan("version: v1\n").unwrap();
        assert_eq!((plain.strategy, plain.replicas), ("none", 1));
    }

    #[test]
    fn a_label_naming_no_key_is_reported_with_the_keys() {
        let mut observed = Observed::new();
        observed.insert(
            "v1",
            "ConfigMap",
            vec![serde_json::json!({"metadata": {"name": "plugin", "namespace": "nvidia"},
                "data": {"default": "version: v1\n", "ts-4": "version: v1\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 4}]\n"}})],
        );
        observed.insert(
            "v1",
            "Node",
            vec![
                serde_json::json!({"metadata": {"name": "gpu-1", "labels": {"nvidia.com/device-plugin.config": "ts-4",
                    "nvidia.com/gpu.count": "1", "nvidia.com/gpu.replicas": "4", "nvidia.com/gpu.sharing-strategy": "time-slicing"}},
                    "status": {"allocatable": {"nvidia.com/gpu": "4"}}}),
                serde_json::json!({"metadata": {"name": "gpu-2", "labels": {"nvidia.com/device-plugin.config": "ts4"}}}),
            ],
        );
        let check: crate::lab::model::DevicePluginConfigCheck = serde_saphyr::from_str(
            "configMap: {apiVersion: v1, kind: ConfigMap, namespace: nvidia, name: plugin}\n",
        )
        .unwrap();
        let outcome = device_plugin_config(&check, &observed);
        assert_eq!(
            outcome,
            Outcome::Fail(vec![
                "node gpu-2: nvidia.com/device-plugin.config=ts4 is not a key of ConfigMap plugin [default, ts-4]".into()
            ])
        );
    }
}
