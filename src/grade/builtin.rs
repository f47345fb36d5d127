//! The built-in domain checks, graded over the evidence: rollout, quota in force, quiz, schedulable, device-plugin config.
//!
//! Pure functions like the matchers: each returns a graded [`Outcome`] with evidence; what cannot
//! be judged is ERROR, never PASS or FAIL (`docs/report-format.md`).

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
    evidence::{Probe, StartNode, Started},
};
use crate::{
    english_display,
    i18n::{Arg, Localized, Message},
    k8s::{daemon, quantity::Quantity},
    lab::model::{AnswerMatching, ObjectRef, QuizCheck, RolloutCheck, RolloutState},
    msg,
};

/// Errors from the built-in checks' own inputs.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A kind the check needs was not observed.
    NotObserved(String),
    /// The object the check looks at does not exist.
    Missing(Message),
    /// The DaemonSet's template cannot be hashed.
    Hash(Message),
    /// An observed object the check reads does not decode as its kind (the object, why).
    Unreadable(Message, String),
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::NotObserved(kind) => msg!("grade-not-observed", kind = kind),
            Error::Missing(what) => msg!("grade-does-not-exist", object = what),
            Error::Hash(what) => msg!("grade-error-hash", object = what),
            Error::Unreadable(object, reason) => msg!("grade-unreadable", object = object, reason = reason),
        }
    }
}
english_display!(Error);

/// A value observed, or `absent` (in the reader's language) when there is none.
fn or_absent(value: Option<&str>) -> Arg {
    match value {
        Some(value) => value.into(),
        None => msg!("value-absent").into(),
    }
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

fn kind<'a>(observed: &'a Observed, api_version: &str, kind: &str) -> Result<&'a [Value]> {
    observed.objects(api_version, kind).ok_or_else(|| Error::NotObserved(format!("{api_version} {kind}")))
}

/// Every object of `objects` as the typed `T`: an object the check would read but that does not
/// decode (an ill-typed field another client stored) is an error naming it, never left out, so
/// the check cannot pass because a node or pod went missing from its view.
fn typed_all<'a, T: serde::de::DeserializeOwned>(
    objects: impl IntoIterator<Item = &'a Value>,
) -> Result<Vec<T>> {
    objects
        .into_iter()
        .map(|object| {
            T::deserialize(object)
                .map_err(|e| Error::Unreadable(super::observed::describe(object), e.to_string()))
        })
        .collect()
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
    /// The DaemonSet, as evidence names it (`daemonset lab/toolkit`, `DaemonSet lab/toolkit`).
    pub daemon_set: Message,
    /// The current template's revision hash.
    pub current_hash: String,
    /// The status counters as the server reports them.
    pub counters: daemon::DaemonSetCounters,
    /// One row per node (and per extra pod on a node).
    pub rows: Vec<RolloutRow>,
    /// The DaemonSet as observed.
    pub daemon_set_object: DaemonSet,
    /// Its pods (those whose owner is the DaemonSet), in its namespace.
    pub pods: Vec<Pod>,
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
    let who = super::observed::describe_named(
        "DaemonSet",
        Some(format!("{}/{}", target.namespace.as_deref().unwrap_or(""), target.name)),
    );
    let daemon_sets = kind(observed, "apps/v1", "DaemonSet")?;
    let ds_value = find(daemon_sets, target).ok_or_else(|| Error::Missing(who.clone()))?;
    let ds: DaemonSet = serde_json::from_value(ds_value.clone()).map_err(|_| Error::Hash(who.clone()))?;
    let nodes: Vec<Node> = typed_all(kind(observed, "v1", "Node")?)?;
    let uid = ds.metadata.uid.clone();
    let in_namespace = kind(observed, "v1", "Pod")?.iter().filter(|pod| {
        pod.pointer("/metadata/namespace").and_then(Value::as_str) == ds.metadata.namespace.as_deref()
    });
    let pods: Vec<Pod> = typed_all::<Pod>(in_namespace)?
        .into_iter()
        .filter(|pod| pod.metadata.owner_references.iter().flatten().any(|o| Some(&o.uid) == uid.as_ref()))
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
    Ok(RolloutAnalysis { daemon_set: who, current_hash: hash, counters, rows, daemon_set_object: ds, pods })
}

/// What is wrong with the cause of a rollout, not only its look: on every `targeted` node, the
/// DaemonSet's current template must be one that works there — it targets the node (node
/// selector, affinity, and tolerations for its taints, as the controller decides), and it asks for
/// no more than the node has (its allocatable; the other pods on the node are not counted, so the
/// check reads only the DaemonSet's own namespace) — and the pod that counts there is the
/// controller's own at that revision running the template as it is: a pod whose images were
/// changed in place (`kubectl set image pod/…`, a revision label edited) does not count, even
/// Ready. A Ready pod running the template's images also shows that those images can be pulled.
fn cause_problems(analysis: &RolloutAnalysis, targeted: &[Node]) -> Vec<Message> {
    use crate::k8s::resources::{NodeUsage, fits_request, node_allocatable, pod_scheduler_requests};
    let ds = &analysis.daemon_set_object;
    let placement = daemon::DaemonPlacement::new(ds);
    let template = ds.spec.as_ref().and_then(|s| s.template.spec.clone()).unwrap_or_default();
    let mut problems = Vec::new();
    for node in targeted {
        let node_name = node.metadata.name.clone().unwrap_or_default();
        match placement.check(node) {
            daemon::NodePlacement::Run => {}
            daemon::NodePlacement::KeepExisting { taint }
            | daemon::NodePlacement::DoNotRun(daemon::NotRunReason::NoExecuteTaint(taint)) => {
                let taint = format!("{}={}:{}", taint.key, taint.value.unwrap_or_default(), taint.effect);
                problems.push(msg!("grade-rollout-template-untolerated", node = &node_name, taint = taint));
            }
            daemon::NodePlacement::DoNotRun(_) => {
                problems.push(msg!("grade-rollout-template-not-selecting", node = &node_name));
            }
        }
        let fits = pod_scheduler_requests(&template)
            .and_then(|request| Ok(fits_request(&request, &node_allocatable(node)?, &NodeUsage::default())));
        match fits {
            Ok(short) if short.is_empty() => {}
            Ok(short) => {
                let reasons = short.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                problems.push(msg!("grade-rollout-template-too-big", node = &node_name, reasons = reasons));
            }
            Err(e) => problems.push(msg!("grade-rollout-template-unreadable", reason = e.to_string())),
        }
    }
    let images = |spec: &k8s_openapi::api::core::v1::PodSpec| -> Vec<(String, String)> {
        spec.containers.iter().map(|c| (c.name.clone(), c.image.clone().unwrap_or_default())).collect()
    };
    let wanted = images(&template);
    for row in analysis.rows.iter().filter(|r| r.current) {
        let Some(pod) = analysis.pods.iter().find(|p| p.metadata.name.as_deref() == Some(row.pod.as_str()))
        else {
            continue;
        };
        let running = pod.spec.as_ref().map(images).unwrap_or_default();
        if running != wanted {
            let shown = |list: &[(String, String)]| {
                list.iter().map(|(name, image)| format!("{name}={image}")).collect::<Vec<_>>().join(", ")
            };
            problems.push(msg!(
                "grade-rollout-pod-not-template",
                node = &row.node,
                pod = &row.pod,
                found = shown(&running),
                expected = shown(&wanted)
            ));
        }
    }
    problems
}

/// Evaluates a `rollout` check. `broken_pod_specs`: the target's pod template as the stage
/// named `brokenStage` applies it, in every variant; none of them counts as converged.
/// `start_nodes`: the nodes captured at start ([`super::captured`]); `None` when the lab's records
/// do not hold them (not started, or removed), which makes a check with `nodes` ERROR: the nodes
/// labelled now are no stand-in for them.
pub fn rollout(
    check: &RolloutCheck,
    observed: &Observed,
    broken_pod_specs: &[Value],
    start_nodes: Option<&[StartNode]>,
) -> Outcome {
    let analysis = match analyse_rollout(observed, &check.target) {
        Ok(analysis) => analysis,
        Err(e @ Error::Missing(_)) => return Outcome::Fail(vec![e.message()]),
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    let mut evidence: Vec<Message> = analysis
        .rows
        .iter()
        .filter(|r| r.wanted || r.pod != "-")
        .map(|r| {
            if r.pod == "-" {
                return msg!("grade-rollout-no-pod", node = &r.node);
            }
            // The revision as `status` shows it: `7bf4ffbdcf (current)`.
            let hash = &r.revision;
            let revision = if r.current {
                msg!("status-revision-current", hash = hash)
            } else {
                msg!("status-revision-old", hash = hash)
            };
            msg!(
                "grade-rollout-pod",
                node = &r.node,
                pod = &r.pod,
                revision = revision,
                image = &r.image,
                state = &r.state
            )
        })
        .collect();
    let unsettled: Vec<&RolloutRow> = analysis.rows.iter().filter(|r| !r.settled).collect();
    let counters = analysis.counters;
    let mut problems: Vec<Message> = Vec::new();
    for row in &unsettled {
        let (node, pod) = (&row.node, &row.pod);
        let why = if !row.wanted {
            msg!("grade-rollout-unwanted-pod", node = node, pod = pod)
        } else if row.pod == "-" {
            msg!("grade-rollout-no-pod", node = node)
        } else if !row.current {
            msg!("grade-rollout-old-revision", node = node, revision = &row.revision, state = &row.state)
        } else {
            msg!("grade-rollout-new-pod", node = node, pod = pod, state = &row.state)
        };
        problems.push(why);
    }
    if counters.number_unavailable != 0 {
        problems.push(msg!("grade-rollout-unavailable", unavailable = counters.number_unavailable));
    }
    if let Some(selector) = &check.nodes {
        let nodes = observed.objects("v1", "Node").unwrap_or(&[]);
        let Some(recorded) = start_nodes.filter(|recorded| !recorded.is_empty()) else {
            return Outcome::Error(vec![msg!("grade-rollout-no-start-nodes")]);
        };
        let (at_start, node_problems) = super::captured::judge(selector, recorded, nodes);
        problems.extend(node_problems);
        if counters.desired_number_scheduled as usize != at_start {
            problems.push(msg!(
                "grade-rollout-desired-at-start",
                desired = counters.desired_number_scheduled,
                nodes = at_start
            ));
        }
    }
    let daemon_sets = observed.objects("apps/v1", "DaemonSet").unwrap_or(&[]);
    let current = find(daemon_sets, &check.target).and_then(|d| d.pointer("/spec/template/spec"));
    if current.is_some_and(|c| broken_pod_specs.iter().any(|broken| same_breakage_surface(c, broken))) {
        problems.push(msg!("grade-rollout-still-broken"));
    }
    if check.state == RolloutState::Converged {
        let nodes = observed.objects("v1", "Node").unwrap_or(&[]);
        let targeted: Vec<&Value> = match &check.nodes {
            Some(selector) => {
                nodes.iter().filter(|n| super::observed::selector_matches(selector, n)).collect()
            }
            None => nodes.iter().collect(),
        };
        match typed_all::<Node>(targeted) {
            Ok(targeted) => problems.extend(cause_problems(&analysis, &targeted)),
            Err(e) => return Outcome::Error(vec![e.message()]),
        }
    }
    evidence.insert(
        0,
        msg!(
            "grade-rollout-counters",
            daemonset = &analysis.daemon_set,
            desired = counters.desired_number_scheduled,
            current = counters.current_number_scheduled,
            ready = counters.number_ready,
            updated = counters.updated_number_scheduled,
            available = counters.number_available
        ),
    );
    match check.state {
        RolloutState::Converged if problems.is_empty() => {
            evidence.push(msg!("grade-rollout-converged"));
            Outcome::Pass(evidence)
        }
        RolloutState::Converged => {
            evidence.extend(problems.into_iter().map(|p| msg!("grade-rollout-not-converged", problem = p)));
            Outcome::Fail(evidence)
        }
        RolloutState::Stalled if unsettled.is_empty() => {
            evidence.push(msg!("grade-rollout-not-stalled"));
            Outcome::Fail(evidence)
        }
        RolloutState::Stalled => {
            evidence.extend(problems.into_iter().map(|p| msg!("grade-rollout-stalled", problem = p)));
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
/// `probe_pod`: the probe file's pod, a pod like the team's workloads: a quota whose scopes leave
/// it out does not count, and the evidence names the scope.
pub fn quota_in_force(
    check: &crate::lab::model::QuotaInForceCheck,
    observed: &Observed,
    probe: Option<Option<&Probe>>,
    probe_pod: Option<&Value>,
) -> Outcome {
    let namespace = &check.namespace;
    let probed = match probe {
        None => None,
        Some(None) => return Outcome::Error(vec![msg!("grade-probe-not-sent")]),
        Some(Some(Probe::NotSent(why))) => {
            return Outcome::Error(vec![msg!("grade-probe-failed", reason = why)]);
        }
        // The namespace is named: a task usually checks one quota per team, and two bare
        // "was admitted" lines in one report do not say which team's quota is not in force.
        Some(Some(Probe::Admitted)) => Some(Err(msg!("grade-probe-admitted", namespace = namespace))),
        Some(Some(Probe::Rejected(message))) => {
            Some(Ok(msg!("grade-probe-rejected", namespace = namespace, message = message)))
        }
    };
    let outcome = quota_hard(check, observed, probe_pod);
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

/// The scope selectors of `quota` that leave `pod` out, as text (`BestEffort`,
/// `PriorityClass In [gold]`); empty when the quota takes it in.
fn exempting_scopes(quota: &Value, pod: &Value) -> Vec<String> {
    use crate::k8s::quota_scope::{pod_matches_scope, scope_selectors};
    let mut pod = pod.clone();
    // Admission reads the QoS class the server sets; the probe file has no status.
    pod["status"]["qosClass"] = Value::from(crate::k8s::resources::qos_class(&pod["spec"]));
    scope_selectors(quota)
        .into_iter()
        .filter(|selector| !pod_matches_scope(selector, &pod))
        .map(|selector| {
            let name = selector["scopeName"].as_str().unwrap_or_default().to_string();
            let operator = selector["operator"].as_str().unwrap_or("Exists");
            let values: Vec<&str> =
                selector["values"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            match operator {
                "Exists" => name,
                _ => format!("{name} {operator} [{}]", values.join(", ")),
            }
        })
        .collect()
}

fn quota_hard(
    check: &crate::lab::model::QuotaInForceCheck,
    observed: &Observed,
    probe_pod: Option<&Value>,
) -> Outcome {
    let quotas = match kind(observed, "v1", "ResourceQuota") {
        Ok(quotas) => quotas,
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    let Ok(wanted) = Quantity::from_json(&check.hard) else {
        return Outcome::Error(vec![msg!("grade-quota-hard-not-a-quantity", value = check.hard.to_string())]);
    };
    let in_namespace: Vec<&Value> = quotas
        .iter()
        .filter(|q| {
            q.pointer("/metadata/namespace").and_then(Value::as_str) == Some(check.namespace.as_str())
        })
        .collect();
    let mut evidence = Vec::new();
    let (resource, expected) = (&check.resource, check.hard.to_string());
    for quota in &in_namespace {
        let name = format!("{}/{}", check.namespace, name_of(quota));
        let hard = quota.get("spec").and_then(|s| s.get("hard")).and_then(|h| h.get(resource));
        let exempting = probe_pod.map(|pod| exempting_scopes(quota, pod)).unwrap_or_default();
        match hard.map(Quantity::from_json) {
            Some(Ok(have)) if have == wanted && !exempting.is_empty() => {
                let qos =
                    probe_pod.map(|pod| crate::k8s::resources::qos_class(&pod["spec"])).unwrap_or_default();
                evidence.push(msg!(
                    "grade-quota-scope-exempts",
                    quota = name,
                    scopes = exempting.join(", "),
                    qos = qos
                ));
            }
            Some(Ok(have)) if have == wanted => {
                return Outcome::Pass(vec![msg!(
                    "grade-quota-hard-is",
                    quota = name,
                    resource = resource,
                    hard = expected
                )]);
            }
            Some(_) => evidence.push(msg!(
                "grade-quota-hard-differs",
                quota = name,
                resource = resource,
                found = hard.map(Value::to_string).unwrap_or_default(),
                expected = &expected
            )),
            None => evidence.push(msg!(
                "grade-quota-hard-missing",
                quota = name,
                resource = resource,
                keys = quota
                    .pointer("/spec/hard")
                    .and_then(Value::as_object)
                    .map(|m| crate::i18n::list(m.keys()))
                    .unwrap_or_else(|| crate::i18n::list(Vec::<String>::new()))
            )),
        }
    }
    if in_namespace.is_empty() {
        evidence.push(msg!("grade-quota-none", namespace = &check.namespace));
    }
    Outcome::Fail(evidence)
}

/// Evaluates a `quiz` check: the stored answer against the captured (hashed) fact or the
/// accepted answers, never against a hard-coded value in the engine; the attempts used are part
/// of the evidence (`attempt 1 of 1: the answer is locked`). A quiz nobody answered yet says how to
/// answer it, with the values to choose from when they are an enumeration
/// ([`enumerated_answers`]). The verdict on an answer says right or not right only: which fact or
/// accepted value it matched is not the learner's business.
pub fn quiz(check: &QuizCheck, task: &str, started: Option<Started<'_>>) -> Outcome {
    let outcome = quiz_verdict(check, task, started);
    let used = started.and_then(|s| s.attempts.get(task)).copied().unwrap_or(0);
    if used == 0 {
        return outcome;
    }
    let line = match check.attempts {
        Some(limit) if used >= limit => msg!("check-attempts-locked", limit = limit),
        Some(limit) => msg!("check-attempts-of", used = used, limit = limit),
        None => msg!("check-answered", count = used),
    };
    match outcome {
        Outcome::Pass(mut evidence) => {
            evidence.push(line);
            Outcome::Pass(evidence)
        }
        Outcome::Fail(mut evidence) => {
            evidence.push(line);
            Outcome::Fail(evidence)
        }
        other => other,
    }
}

fn quiz_verdict(check: &QuizCheck, task: &str, started: Option<Started<'_>>) -> Outcome {
    let Some(inventory) = started else {
        return Outcome::Error(vec![msg!("grade-not-started")]);
    };
    let Some(answer) = inventory.answers.get(task) else {
        // The word the task's description uses for the answer (`NODE` / `ノード名`).
        let word = match &check.placeholder {
            Some(text) => crate::i18n::Arg::EachLanguage {
                en: text.get(crate::session::Lang::En).to_string(),
                ja: text.get(crate::session::Lang::Ja).to_string(),
            },
            None => msg!("check-answer-placeholder").into(),
        };
        let how = match enumerated_answers(check) {
            Some(values) => {
                let values = crate::i18n::list(values.iter().map(|v| format!("`{v}`")));
                msg!(
                    "check-no-answer-choices",
                    lab = inventory.lab,
                    task = task,
                    word = word,
                    values = values
                )
            }
            None => msg!("check-no-answer", lab = inventory.lab, task = task, word = word),
        };
        return Outcome::Fail(vec![how]);
    };
    let folded = check.matching == AnswerMatching::CaseInsensitive;
    let same = |a: &str, b: &str| {
        if folded { a.trim().eq_ignore_ascii_case(b.trim()) } else { a.trim() == b.trim() }
    };
    let right = || Outcome::Pass(vec![msg!("check-answer-right", answer = answer)]);
    let mut judged = false;
    // A keyed fact (the variant included) can be tested only with the lab's key: credentials that
    // cannot read it (a learner's in a hosted class) leave the verdict to the instructor's.
    let keyed = check.fact.is_some() || !check.accept_by_variant.is_empty();
    if keyed && inventory.key.is_none() {
        return Outcome::Error(vec![msg!("grade-quiz-needs-key")]);
    }
    if let (Some(fact), Some(key)) = (&check.fact, inventory.key) {
        let name = fact.key();
        match inventory.facts.get(name) {
            None => return Outcome::Error(vec![msg!("grade-fact-not-captured", fact = name)]),
            Some(hashed) if hashed.matches(key, answer, folded) => return right(),
            Some(_) => judged = true,
        }
    }
    let by_variant = check.accept_by_variant.iter().find(|(v, _)| inventory.variant_is(v)).map(|(_, a)| a);
    let accepted: Vec<&String> = check.accept.iter().chain(by_variant.into_iter().flatten()).collect();
    if accepted.iter().any(|a| same(a, answer)) {
        return right();
    }
    if judged || !accepted.is_empty() {
        Outcome::Fail(vec![msg!("check-answer-wrong", answer = answer)])
    } else {
        Outcome::Error(vec![msg!("grade-quiz-unjudgeable")])
    }
}

/// The values a quiz chooses from, when it is an enumeration whose listing gives nothing away:
/// answers accepted per variant only (no fact, no answer accepted whatever the variant), at least
/// two distinct ones. A learner then has to tell which one their cluster shows, as `labs show`
/// already says; a quiz graded against a fact (a node name) or one fixed answer lists nothing.
pub fn enumerated_answers(quiz: &QuizCheck) -> Option<Vec<String>> {
    if quiz.fact.is_some() || !quiz.accept.is_empty() {
        return None;
    }
    let values: BTreeSet<&String> = quiz.accept_by_variant.values().flatten().collect();
    (values.len() >= 2).then(|| values.into_iter().cloned().collect())
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
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    let other_reason = check.reason_contains.as_deref().map(|r| format!("{r:?}")).unwrap_or_default();
    if want == Schedulability::Running {
        return running(check, observed, nodes_all);
    }
    if let Some(target) = &check.pods {
        let pods = match observed.select(target) {
            Ok(pods) => pods,
            Err(e) => return Outcome::Error(vec![e.message()]),
        };
        if pods.is_empty() {
            return Outcome::Fail(vec![msg!(
                "grade-no-pod-matches",
                target = super::observed::describe_target(target)
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
                    passed.push(msg!("grade-pod-scheduled", object = who, node = node))
                }
                (Schedulability::Schedulable, _, _) if message.is_empty() => {
                    failed.push(msg!("grade-pod-not-scheduled-no-condition", object = who))
                }
                (Schedulability::Schedulable, _, _) => {
                    failed.push(msg!("grade-pod-not-scheduled", object = who, message = message))
                }
                (Schedulability::Unschedulable, Some("False"), None) if reason_ok(message) => {
                    passed.push(msg!("grade-unschedulable", object = who, message = message))
                }
                (Schedulability::Unschedulable, Some("False"), None) => failed.push(msg!(
                    "grade-unschedulable-other-reason",
                    object = who,
                    reason = &other_reason,
                    message = message
                )),
                (Schedulability::Unschedulable, _, Some(node)) => {
                    failed.push(msg!("grade-pod-scheduled", object = who, node = node))
                }
                (Schedulability::Unschedulable, _, None) => {
                    failed.push(msg!("grade-pod-not-unschedulable-yet", object = who))
                }
                (Schedulability::Running, _, _) => unreachable!("judged by `running`"),
            }
        }
        return if failed.is_empty() { Outcome::Pass(passed) } else { Outcome::Fail(failed) };
    }
    let Some(file) = &check.pod_file else {
        return Outcome::Error(vec![msg!("grade-schedulable-no-pods")]);
    };
    let Some(document) = files.get(&file.value) else {
        return Outcome::Error(vec![msg!("grade-pod-file-missing", file = &file.value)]);
    };
    let Ok(pod) = serde_json::from_value::<Pod>(document.clone()) else {
        return Outcome::Error(vec![msg!("grade-pod-file-not-a-pod", file = &file.value)]);
    };
    let selected = nodes_all.iter().filter(|n| {
        check.nodes.as_ref().is_none_or(|selector| super::observed::selector_matches(selector, n))
    });
    let typed_objects = typed_all::<Node>(selected)
        .and_then(|nodes| Ok((nodes, typed_all::<Pod>(kind(observed, "v1", "Pod")?)?)));
    let (nodes, pods) = match typed_objects {
        Ok(both) => both,
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    let outcome = match schedule::find_feasible_nodes(&pod, &nodes, &pods) {
        Ok(outcome) => outcome,
        Err(e) => {
            return Outcome::Error(vec![msg!(
                "grade-cannot-fit",
                file = &file.value,
                reason = e.to_string()
            )]);
        }
    };
    let fits = |fits: &[schedule::FeasibleNode]| crate::i18n::list(fits.iter().map(|f| f.name.as_str()));
    match (want, &outcome) {
        (Schedulability::Running, _) => unreachable!("judged by `running`"),
        (Schedulability::Schedulable, schedule::FilterOutcome::Feasible(feasible)) => {
            Outcome::Pass(vec![msg!("grade-pod-file-fits", file = &file.value, nodes = fits(feasible))])
        }
        (Schedulability::Unschedulable, schedule::FilterOutcome::Feasible(feasible)) => {
            Outcome::Fail(vec![msg!(
                "grade-pod-file-fits-expected-none",
                file = &file.value,
                nodes = fits(feasible)
            )])
        }
        (Schedulability::Schedulable, schedule::FilterOutcome::Unschedulable(failure)) => Outcome::Fail(
            vec![msg!("grade-unschedulable", object = &file.value, message = failure.to_string())],
        ),
        (Schedulability::Unschedulable, schedule::FilterOutcome::Unschedulable(failure)) => {
            let message = failure.to_string();
            if reason_ok(&message) {
                Outcome::Pass(vec![msg!("grade-unschedulable", object = &file.value, message = message)])
            } else {
                Outcome::Fail(vec![msg!(
                    "grade-unschedulable-other-reason",
                    object = &file.value,
                    reason = &other_reason,
                    message = message
                )])
            }
        }
    }
}

/// `schedulable` with `want: running`: each selected pod runs, Ready, on a node that exists, is
/// one of `nodes`, and advertises and can hold what the pod asks for beside the other pods bound
/// to it ([`crate::k8s::resources::node_holds`]). A pod bound by hand past the scheduler, or
/// pinned with `nodeName` to a node without the resource, shows Running all the same when nothing
/// admits it on the node; this is what counts instead.
fn running(check: &crate::lab::model::SchedulableCheck, observed: &Observed, nodes: &[Value]) -> Outcome {
    let Some(target) = &check.pods else {
        return Outcome::Error(vec![msg!("grade-schedulable-no-pods")]);
    };
    let selected = match observed.select(target) {
        Ok(pods) => pods,
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    if selected.is_empty() {
        return Outcome::Fail(vec![msg!(
            "grade-no-pod-matches",
            target = super::observed::describe_target(target)
        )]);
    }
    let every_pod = match kind(observed, "v1", "Pod").and_then(typed_all::<Pod>) {
        Ok(pods) => pods,
        Err(e) => return Outcome::Error(vec![e.message()]),
    };
    let (mut passed, mut failed) = (Vec::new(), Vec::new());
    for value in selected {
        let who = super::observed::describe(value);
        let pod: Pod = match typed_all(std::iter::once(value)) {
            Ok(mut pods) => pods.remove(0),
            Err(e) => return Outcome::Error(vec![e.message()]),
        };
        let phase = pod.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_else(|| "Pending".into());
        let Some(node_name) = pod.spec.as_ref().and_then(|s| s.node_name.clone()) else {
            failed.push(msg!("grade-pod-not-running", object = who, phase = phase));
            continue;
        };
        if phase != "Running" || !daemon::is_pod_ready(&pod) {
            failed.push(msg!("grade-pod-not-running", object = who, phase = phase));
            continue;
        }
        let Some(node_value) = nodes.iter().find(|n| name_of(n) == node_name) else {
            failed.push(msg!("grade-pod-node-missing", object = who, node = &node_name));
            continue;
        };
        if check
            .nodes
            .as_ref()
            .is_some_and(|selector| !super::observed::selector_matches(selector, node_value))
        {
            failed.push(msg!("grade-pod-on-other-node", object = who, node = &node_name));
            continue;
        }
        let node: Node = match typed_all(std::iter::once(node_value)) {
            Ok(mut nodes) => nodes.remove(0),
            Err(e) => return Outcome::Error(vec![e.message()]),
        };
        let same = |other: &Pod| {
            other.metadata.namespace == pod.metadata.namespace && other.metadata.name == pod.metadata.name
        };
        let others = every_pod.iter().filter(|other| {
            !same(other)
                && other.spec.as_ref().and_then(|s| s.node_name.as_deref()) == Some(node_name.as_str())
        });
        match crate::k8s::resources::node_holds(&pod, &node, others) {
            Ok(short) if short.is_empty() => {
                passed.push(msg!("grade-pod-runs-held", object = who, node = &node_name))
            }
            Ok(short) => {
                let reasons = short.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
                failed.push(msg!(
                    "grade-pod-node-cannot-hold",
                    object = who,
                    node = &node_name,
                    reasons = reasons
                ));
            }
            Err(e) => failed.push(msg!("grade-cannot-fit", file = who, reason = e.to_string())),
        }
    }
    if failed.is_empty() { Outcome::Pass(passed) } else { Outcome::Fail(failed) }
}

/// What a device-plugin config (one key of the plugin ConfigMap) shares, per the v0.17 rules
/// (k8s-device-plugin `api/config/v1/sharing.go`: MPS wins over time-slicing when it has a
/// resource with replicas > 1).
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
        (Err(e), _) | (_, Err(e)) => return Outcome::Error(vec![e.message()]),
    };
    let map_name =
        format!("{}/{}", check.config_map.namespace.as_deref().unwrap_or(""), check.config_map.name);
    let Some(config_map) = find(config_maps, &check.config_map) else {
        return Outcome::Fail(vec![msg!("grade-does-not-exist", object = format!("ConfigMap {map_name}"))]);
    };
    let data: std::collections::BTreeMap<String, String> =
        config_map.get("data").cloned().and_then(|d| serde_json::from_value(d).ok()).unwrap_or_default();
    let keys: Vec<&str> = data.keys().map(String::as_str).collect();
    let selected: Vec<&Value> =
        nodes.iter().filter(|n| super::observed::selector_matches(&check.nodes, n)).collect();
    if selected.is_empty() {
        return Outcome::Fail(vec![msg!("grade-plugin-no-node")]);
    }
    let mut passed = Vec::new();
    let mut failed = Vec::new();
    for node in selected {
        match node_plugin_config(check, node, &data, &keys) {
            Ok(evidence) => passed.push(evidence),
            Err(problems) => failed.extend(problems),
        }
    }
    if failed.is_empty() { Outcome::Pass(passed) } else { Outcome::Fail(failed) }
}

/// One node of a `devicePluginConfig` check: its config label names a key of the ConfigMap's
/// `data` (the wanted one, if given) that parses, and the node advertises what that key says.
fn node_plugin_config(
    check: &crate::lab::model::DevicePluginConfigCheck,
    node: &Value,
    data: &std::collections::BTreeMap<String, String>,
    keys: &[&str],
) -> std::result::Result<Message, Vec<Message>> {
    let name = name_of(node);
    let labels = crate::k8s::selector::labels_of(node);
    let Some(chosen) = labels.get(&check.label) else {
        return Err(vec![msg!("grade-plugin-no-label", node = name, label = &check.label)]);
    };
    let Some(text) = data.get(chosen) else {
        return Err(vec![msg!(
            "grade-plugin-not-a-key",
            node = name,
            label = &check.label,
            config = chosen,
            configmap = &check.config_map.name,
            keys = crate::i18n::list(keys)
        )]);
    };
    if let Some(wanted) = &check.config
        && wanted != chosen
    {
        return Err(vec![msg!(
            "grade-plugin-other-config",
            node = name,
            label = &check.label,
            config = chosen,
            expected = wanted
        )]);
    }
    let plan = sharing_plan(text)
        .map_err(|e| vec![msg!("grade-plugin-unparsable", node = name, config = chosen, reason = e)])?;
    // MIG mixed: each profile is its own resource; GFD labels its count and replicas
    // (`docs/gpu.md`), and the full-GPU labels of MIG-enabled GPUs say 0.
    let mig_profiles = mixed_mig_profiles(text, &labels);
    if mig_profiles.is_empty() {
        shared_gpus_in_effect(node, &labels, chosen, &plan)
    } else {
        mig_profiles_in_effect(node, chosen, &mig_profiles)
    }
}

/// A mixed-MIG node advertises each profile's count times its replicas.
fn mig_profiles_in_effect(
    node: &Value,
    chosen: &str,
    mig_profiles: &[(String, i64)],
) -> std::result::Result<Message, Vec<Message>> {
    let name = name_of(node);
    let mut problems = Vec::new();
    let mut advertised = Vec::new();
    for (resource, expected) in mig_profiles {
        let allocatable =
            node.pointer("/status/allocatable").and_then(|a| a.get(resource)).and_then(Value::as_str);
        if allocatable != Some(expected.to_string().as_str()) {
            problems.push(msg!(
                "grade-plugin-mig-allocatable",
                node = name,
                resource = resource,
                found = or_absent(allocatable),
                expected = *expected
            ));
        }
        advertised.push(format!("{resource} {expected}"));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(msg!(
        "grade-plugin-mig-in-effect",
        node = name,
        config = chosen,
        advertised = crate::i18n::list(&advertised)
    ))
}

/// A whole-GPU node: GFD's replicas and sharing-strategy labels match the config, and the node
/// advertises `gpu.count × replicas` of the config's resource.
fn shared_gpus_in_effect(
    node: &Value,
    labels: &std::collections::BTreeMap<String, String>,
    chosen: &str,
    plan: &SharingPlan,
) -> std::result::Result<Message, Vec<Message>> {
    let name = name_of(node);
    let label = |key: &str| labels.get(key).cloned();
    let count = label("nvidia.com/gpu.count").and_then(|c| c.parse::<i64>().ok());
    let Some(count) = count else {
        return Err(vec![msg!("grade-plugin-no-gpu-count", node = name)]);
    };
    let mut problems = Vec::new();
    let replicas = label("nvidia.com/gpu.replicas");
    if replicas.as_deref() != Some(plan.replicas.to_string().as_str()) {
        problems.push(msg!(
            "grade-plugin-replicas",
            node = name,
            found = or_absent(replicas.as_deref()),
            config = chosen,
            expected = plan.replicas
        ));
    }
    let strategy = label("nvidia.com/gpu.sharing-strategy");
    if let Some(strategy) = strategy.as_deref().filter(|s| *s != plan.strategy) {
        problems.push(msg!(
            "grade-plugin-strategy",
            node = name,
            found = strategy,
            config = chosen,
            expected = plan.strategy
        ));
    }
    let expected = count * plan.replicas;
    let allocatable = node
        .pointer("/status/allocatable")
        .and_then(|a| a.get(&plan.resource))
        .and_then(Value::as_str)
        .map(str::to_string);
    if allocatable.as_deref() != Some(expected.to_string().as_str()) {
        problems.push(msg!(
            "grade-plugin-allocatable",
            node = name,
            resource = &plan.resource,
            found = or_absent(allocatable.as_deref()),
            config = chosen,
            gpus = count,
            replicas = plan.replicas,
            expected = expected
        ));
    }
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(msg!(
        "grade-plugin-in-effect",
        node = name,
        config = chosen,
        strategy = plan.strategy,
        resource = &plan.resource,
        advertised = expected
    ))
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
            outcome.english(),
            (
                super::super::Status::Fail,
                vec![
                    "node gpu-2: nvidia.com/device-plugin.config=ts4 is not a key of ConfigMap plugin [default, ts-4]"
                        .into()
                ]
            )
        );
    }

    #[test]
    fn a_quota_scoped_to_leave_out_pods_like_the_teams_is_named_and_does_not_count() {
        let check: crate::lab::model::QuotaInForceCheck =
            serde_saphyr::from_str("namespace: team-a\nresource: requests.nvidia.com/gpu\nhard: 4\n")
                .unwrap();
        let quota = |scopes: serde_json::Value| {
            serde_json::json!({"metadata": {"name": "gpu-quota", "namespace": "team-a"},
                "spec": {"hard": {"requests.nvidia.com/gpu": "4"}, "scopes": scopes}})
        };
        let probe = serde_json::json!({"spec": {"containers": [{"name": "p", "resources": {
            "requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"nvidia.com/gpu": 5}}}]}});
        let grade = |quota: serde_json::Value, probe: &Value| {
            let mut observed = Observed::new();
            observed.insert("v1", "ResourceQuota", vec![quota]);
            quota_in_force(&check, &observed, None, Some(probe))
        };
        assert_eq!(
            grade(quota(serde_json::json!(["BestEffort"])), &probe).english(),
            (
                super::super::Status::Fail,
                vec!["resourcequota team-a/gpu-quota takes in only pods in scope BestEffort: pods like the team's workloads (QoS class Burstable, as the probe) are exempt from it".into()]
            )
        );
        assert_eq!(
            grade(quota(serde_json::json!(["NotTerminating"])), &probe).status(),
            super::super::Status::Pass
        );
        assert_eq!(grade(quota(serde_json::json!(null)), &probe).status(), super::super::Status::Pass);
        // A GPU-only pod is BestEffort: CPU and memory alone decide the QoS class.
        let gpu_only = serde_json::json!({"spec": {"containers": [{"name": "p", "resources": {"limits": {"nvidia.com/gpu": 5}}}]}});
        assert_eq!(
            grade(quota(serde_json::json!(["BestEffort"])), &gpu_only).status(),
            super::super::Status::Pass
        );
    }

    /// One GPU node, a DaemonSet whose template is `template`, and its pod on the node at the
    /// current revision running `pod_image`, Ready; `taint` on the node.
    fn one_node_rollout(template: Value, pod_image: &str, taint: bool) -> Observed {
        use serde_json::json;
        let template_spec: k8s_openapi::api::core::v1::PodTemplateSpec =
            serde_json::from_value(json!({"metadata": {"labels": {"app": "t"}}, "spec": template})).unwrap();
        let hash = daemon::compute_hash(&template_spec, None).unwrap();
        let taints =
            if taint { json!([{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]) } else { json!([]) };
        let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-1", "uid": "n1",
            "labels": {"nvidia.com/gpu.present": "true"}}, "spec": {"taints": taints},
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}});
        let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "t", "namespace": "ns", "uid": "ds-uid", "generation": 2},
            "spec": {"selector": {"matchLabels": {"app": "t"}}, "template": template_spec},
            "status": {"desiredNumberScheduled": 1, "currentNumberScheduled": 1, "numberReady": 1,
                "updatedNumberScheduled": 1, "numberAvailable": 1, "numberMisscheduled": 0, "observedGeneration": 2}});
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t-x", "namespace": "ns",
            "labels": {"app": "t", "controller-revision-hash": hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "t", "uid": "ds-uid", "controller": true}]},
            "spec": {"nodeName": "gpu-1", "containers": [{"name": "c", "image": pod_image}]},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}});
        let mut observed = Observed::new();
        observed.insert("v1", "Node", vec![node]);
        observed.insert("apps/v1", "DaemonSet", vec![ds]);
        observed.insert("v1", "Pod", vec![pod]);
        observed
    }

    #[test]
    fn a_rollout_is_graded_on_its_template_and_the_controllers_pods_not_their_look() {
        use serde_json::json;
        let check: RolloutCheck = serde_saphyr::from_str(
            "target: {apiVersion: apps/v1, kind: DaemonSet, namespace: ns, name: t}\nstate: converged\n\
             nodes: {matchLabels: {nvidia.com/gpu.present: \"true\"}}\n",
        )
        .unwrap();
        let template = |image: &str, memory: &str, tolerations: Value| {
            json!({"nodeSelector": {"nvidia.com/gpu.present": "true"}, "tolerations": tolerations,
                "containers": [{"name": "c", "image": image, "resources": {"requests": {"memory": memory}}}]})
        };
        let tolerate = json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]);
        let start_nodes = [StartNode { name: "gpu-1".into(), uid: "n1".into() }];
        assert_eq!(
            rollout(
                &check,
                &one_node_rollout(template("good:1", "1Gi", tolerate.clone()), "good:1", true),
                &[],
                None
            )
            .status(),
            super::super::Status::Error,
            "without the nodes captured at start there is no honest verdict"
        );
        let grade = |observed: Observed| {
            let (status, evidence) = rollout(&check, &observed, &[], Some(&start_nodes)).english();
            (status, evidence.last().cloned().unwrap_or_default())
        };
        let fixed = one_node_rollout(template("good:1", "1Gi", tolerate.clone()), "good:1", true);
        assert_eq!(grade(fixed).0, super::super::Status::Pass);
        // A catch-all toleration is as good a fix as the exact one.
        let catch_all =
            one_node_rollout(template("good:1", "1Gi", json!([{"operator": "Exists"}])), "good:1", true);
        assert_eq!(grade(catch_all).0, super::super::Status::Pass);
        // The pod had its image set in place; the template still names the image that cannot be pulled.
        let patched = one_node_rollout(template("bad:9", "1Gi", tolerate.clone()), "good:1", true);
        assert_eq!(
            grade(patched),
            (super::super::Status::Fail, "not converged: node gpu-1: pod t-x runs c=good:1, not the template's c=bad:9: changed in place, it does not count".into())
        );
        // The pod was bound by hand to a node too small for the template.
        let bound = one_node_rollout(template("good:1", "256Gi", tolerate), "good:1", true);
        assert_eq!(
            grade(bound),
            (
                super::super::Status::Fail,
                "not converged: the template asks for more than node gpu-1 has (Insufficient memory)".into()
            )
        );
        // A pod made by hand where the template no longer tolerates the node's taint.
        let by_hand = one_node_rollout(template("good:1", "1Gi", json!([])), "good:1", true);
        assert_eq!(
            grade(by_hand),
            (super::super::Status::Fail, "not converged: the template does not tolerate node gpu-1's taint nvidia.com/gpu=:NoSchedule, so the DaemonSet does not run there".into())
        );
    }

    #[test]
    fn a_running_pod_counts_only_on_a_node_that_advertises_and_holds_what_it_asks() {
        use serde_json::json;
        let check: crate::lab::model::SchedulableCheck = serde_saphyr::from_str(
            "pods: {apiVersion: v1, kind: Pod, namespace: team-b, name: mine}\nwant: running\n\
             nodes: {matchLabels: {kubernetes.io/hostname: gpu-3}}\n",
        )
        .unwrap();
        let node = |slices: &str| {
            json!({"metadata": {"name": "gpu-3", "labels": {"kubernetes.io/hostname": "gpu-3"}},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110", "nvidia.com/mig-1g.5gb": slices}}})
        };
        let pod = |namespace: &str, name: &str| {
            json!({"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": "gpu-3",
                "containers": [{"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}}]},
                "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}})
        };
        let grade = |node: Value, pods: Vec<Value>| {
            let mut observed = Observed::new();
            observed.insert("v1", "Node", vec![node.clone()]);
            observed.insert("v1", "Pod", pods);
            schedulable(&check, &std::collections::BTreeMap::new(), &observed).english()
        };
        assert_eq!(grade(node("7"), vec![pod("team-b", "mine")]).0, super::super::Status::Pass);
        let (status, evidence) = grade(node("0"), vec![pod("team-b", "mine")]);
        assert_eq!(status, super::super::Status::Fail);
        assert!(evidence[0].contains("(Insufficient nvidia.com/mig-1g.5gb)"), "{evidence:?}");
        let full = vec![pod("team-b", "mine"), pod("team-a", "one"), pod("team-a", "two")];
        assert_eq!(grade(node("2"), full).0, super::super::Status::Fail, "the slices are taken by others");
    }

    #[test]
    fn only_an_enumeration_of_variants_lists_its_values() {
        let quiz = |yaml: &str| serde_saphyr::from_str::<QuizCheck>(yaml).unwrap();
        assert_eq!(
            enumerated_answers(&quiz(
                "acceptByVariant: {image: [image], resources: [resources], toleration: [toleration]}"
            )),
            Some(vec!["image".to_string(), "resources".into(), "toleration".into()])
        );
        assert_eq!(
            enumerated_answers(&quiz(
                "acceptByVariant: {image: [\"1\"], resources: [\"1\"], toleration: [\"0\"]}"
            )),
            Some(vec!["0".to_string(), "1".into()])
        );
        // A fact (the affected node) or an answer accepted whatever the variant is the answer itself.
        assert_eq!(enumerated_answers(&quiz("fact: affectedNode")), None);
        assert_eq!(enumerated_answers(&quiz("accept: [nvidia.com/gpu]")), None);
        assert_eq!(enumerated_answers(&quiz("accept: [a]\nacceptByVariant: {x: [b], y: [c]}")), None);
        // One value for every variant would name the answer.
        assert_eq!(enumerated_answers(&quiz("acceptByVariant: {x: [same], y: [same]}")), None);
    }
}
