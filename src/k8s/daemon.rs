//! DaemonSet logic shared by the simulator's controller and the engine's rollout analysis: placement, pod identity, budgets, hash, status counters.
//!
//! Sources (Kubernetes v1.33): `pkg/controller/daemon/daemon_controller.go`
//! (`NodeShouldRunDaemonPod`, `predicates`, `NewPod`, `getNodesToDaemonPods`,
//! `updateDaemonSetStatus`, `podByCreationTimestampAndPhase`), `pkg/controller/daemon/update.go`
//! (`updatedDesiredNodeCounts`), `pkg/controller/daemon/util/daemonset_util.go`
//! (`GetTargetNodeName`, `ReplaceDaemonSetPodNodeNameNodeAffinity`, `IsPodUpdated`,
//! `GetTemplateGeneration`, `UnavailableCount`, `SurgeCount`), `pkg/controller/controller_utils.go`
//! (`ComputeHash`), `pkg/api/v1/pod/util.go` (`IsPodReady`, `IsPodAvailable`) and
//! `apimachinery/pkg/util/intstr` (`GetScaledValueFromIntOrPercent`). Behaviour spec:
//! k8s-fidelity.md §1.2-§1.4, §1.7, §1.8.

use std::{cmp::Ordering, collections::BTreeMap};

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Affinity, Node, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod, PodSpec,
    PodTemplateSpec, Taint,
};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::{
    affinity::{OBJECT_NAME_FIELD, RequiredNodeAffinity},
    taints::{self, TaintEffect},
};

/// Errors of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// An int-or-percent budget that upstream cannot read (`invalid value for IntOrString`).
    #[error("invalid value for {field}: {message}")]
    InvalidIntOrPercent {
        /// `MaxUnavailable` or `MaxSurge`.
        field: &'static str,
        /// Upstream's explanation.
        message: String,
    },
    /// A daemon pod whose target node cannot be determined (`GetTargetNodeName`).
    #[error("{0}")]
    NoTargetNode(String),
    /// The `deprecated.daemonset.template.generation` annotation is not an integer.
    #[error("invalid {TEMPLATE_GENERATION_ANNOTATION} annotation {0:?}")]
    TemplateGeneration(String),
    /// The template could not be serialized for hashing.
    #[error("cannot serialize the pod template: {0}")]
    Serialize(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Label carrying the ControllerRevision hash on daemon pods and revisions.
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";
/// Label carrying the template generation on daemon pods.
pub const POD_TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// Annotation the apps/v1 API exposes the template generation in.
pub const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// Why a DaemonSet does not (or no longer) want a pod on a node.
#[derive(Debug, Clone, PartialEq)]
pub enum NotRunReason {
    /// `spec.template.spec.nodeName` names another node.
    NodeName,
    /// `spec.nodeSelector` or required node affinity does not match the node.
    NodeAffinity,
    /// An untolerated `NoExecute` taint: existing pods must go too.
    NoExecuteTaint(Taint),
}

/// `NodeShouldRunDaemonPod` as an explicit state (k8s-fidelity.md §1.2).
#[derive(Debug, Clone, PartialEq)]
pub enum NodePlacement {
    /// `(true, true)`: a daemon pod should run here.
    Run,
    /// `(false, true)`: an untolerated `NoSchedule` taint: no new pod, an existing one keeps
    /// running and counts as misscheduled.
    KeepExisting {
        /// The first untolerated NoSchedule/NoExecute taint (a NoSchedule one here).
        taint: Taint,
    },
    /// `(false, false)`: no pod here; existing ones are deleted.
    DoNotRun(NotRunReason),
}

impl NodePlacement {
    /// Upstream's `shouldRun`.
    pub fn should_run(&self) -> bool {
        matches!(self, NodePlacement::Run)
    }

    /// Upstream's `shouldContinueRunning`.
    pub fn should_continue_running(&self) -> bool {
        matches!(self, NodePlacement::Run | NodePlacement::KeepExisting { .. })
    }
}

/// The pod spec the controller simulates for a node (`NewPod`): the template's spec with
/// `nodeName` set and the default daemon tolerations added.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner::k8s::daemon::simulated_pod_spec;
/// let spec = simulated_pod_spec(&DaemonSet::default(), "gpu-1");
/// assert_eq!(spec.node_name.as_deref(), Some("gpu-1"));
/// assert_eq!(spec.tolerations.unwrap().len(), 6);
/// ```
pub fn simulated_pod_spec(ds: &DaemonSet, node_name: &str) -> PodSpec {
    let mut spec = template_spec(ds);
    spec.node_name = Some(node_name.to_string());
    taints::add_daemon_pod_tolerations(&mut spec);
    spec
}

fn template_spec(ds: &DaemonSet) -> PodSpec {
    ds.spec.as_ref().and_then(|spec| spec.template.spec.clone()).unwrap_or_default()
}

/// `NodeShouldRunDaemonPod(node, ds)`: name and affinity (nodeSelector + required affinity)
/// must fit, else [`NodePlacement::DoNotRun`]; then no untolerated NoSchedule/NoExecute taint
/// (with the default daemon tolerations) may remain, else [`NodePlacement::KeepExisting`] when
/// none of the untolerated taints is NoExecute, [`NodePlacement::DoNotRun`] otherwise.
/// Resources, host ports, cordon and node readiness are not checked.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use k8s_openapi::api::core::v1::{Node, NodeSpec, Taint};
/// use lab_runner::k8s::daemon::{node_should_run_daemon_pod, NodePlacement};
/// let tainted = Node { spec: Some(NodeSpec { taints: Some(vec![Taint {
///     key: "node-role.kubernetes.io/control-plane".into(), effect: "NoSchedule".into(),
///     ..Default::default() }]), ..Default::default() }), ..Default::default() };
/// let placement = node_should_run_daemon_pod(&DaemonSet::default(), &tainted);
/// assert!(!placement.should_run() && placement.should_continue_running());
/// ```
pub fn node_should_run_daemon_pod(ds: &DaemonSet, node: &Node) -> NodePlacement {
    let node_name = node.metadata.name.as_deref().unwrap_or("");
    let spec = simulated_pod_spec(ds, node_name);
    if let Some(wanted) = template_spec(ds).node_name.filter(|wanted| !wanted.is_empty())
        && wanted != node_name
    {
        return NodePlacement::DoNotRun(NotRunReason::NodeName);
    }
    if !RequiredNodeAffinity::of_pod_spec(&spec).matches(node) {
        return NodePlacement::DoNotRun(NotRunReason::NodeAffinity);
    }
    let node_taints = node.spec.as_ref().and_then(|s| s.taints.as_deref()).unwrap_or_default();
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let Some(blocking) =
        taints::find_untolerated_taint(node_taints, tolerations, TaintEffect::DO_NOT_SCHEDULE)
    else {
        return NodePlacement::Run;
    };
    match taints::find_untolerated_taint(node_taints, tolerations, &[TaintEffect::NoExecute]) {
        Some(no_execute) => NodePlacement::DoNotRun(NotRunReason::NoExecuteTaint(no_execute.clone())),
        None => NodePlacement::KeepExisting { taint: blocking.clone() },
    }
}

/// The node a daemon pod belongs to (`GetTargetNodeName`): `spec.nodeName`, or for a pod not
/// yet bound the single value of a `matchFields metadata.name In [...]` requirement of its
/// required node affinity. So an unscheduled Pending daemon pod already counts on its node.
///
/// ```
/// use k8s_openapi::api::core::v1::{Pod, PodSpec};
/// use lab_runner::k8s::daemon::target_node_name;
/// let pod = Pod { spec: Some(PodSpec { node_name: Some("gpu-1".into()), ..Default::default() }),
///                 ..Default::default() };
/// assert_eq!(target_node_name(&pod).unwrap(), "gpu-1");
/// ```
pub fn target_node_name(pod: &Pod) -> Result<String> {
    let name = format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    );
    let spec = pod.spec.as_ref();
    if let Some(node_name) = spec.and_then(|s| s.node_name.as_deref()).filter(|n| !n.is_empty()) {
        return Ok(node_name.to_string());
    }
    let Some(required) = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| n.required_during_scheduling_ignored_during_execution.as_ref())
    else {
        return Err(Error::NoTargetNode(format!(
            "no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod {name}"
        )));
    };
    if required.node_selector_terms.is_empty() {
        return Err(Error::NoTargetNode(format!(
            "no nodeSelectorTerms in requiredDuringSchedulingIgnoredDuringExecution of pod {name}"
        )));
    }
    for term in &required.node_selector_terms {
        for requirement in term.match_fields.iter().flatten() {
            if requirement.key == OBJECT_NAME_FIELD && requirement.operator == "In" {
                return match requirement.values.as_deref().unwrap_or_default() {
                    [value] => Ok(value.clone()),
                    _ => Err(Error::NoTargetNode(format!(
                        "the matchFields value of '{OBJECT_NAME_FIELD}' is not unique for pod {name}"
                    ))),
                };
            }
        }
    }
    Err(Error::NoTargetNode(format!("no node name found for pod {name}")))
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: pins a daemon pod to a node by replacing the
/// required node-affinity terms with `matchFields metadata.name In [node]`; preferred terms and
/// pod (anti-)affinity are kept. `spec.nodeSelector` is left alone (the scheduler re-checks it).
///
/// ```
/// use lab_runner::k8s::daemon::{pin_to_node, target_node_name};
/// use k8s_openapi::api::core::v1::{Pod, PodSpec};
/// let affinity = pin_to_node(None, "gpu-2");
/// let pod = Pod { spec: Some(PodSpec { affinity: Some(affinity), ..Default::default() }),
///                 ..Default::default() };
/// assert_eq!(target_node_name(&pod).unwrap(), "gpu-2");
/// ```
pub fn pin_to_node(affinity: Option<Affinity>, node_name: &str) -> Affinity {
    let pinned = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_fields: Some(vec![NodeSelectorRequirement {
                key: OBJECT_NAME_FIELD.to_string(),
                operator: "In".to_string(),
                values: Some(vec![node_name.to_string()]),
            }]),
            match_expressions: None,
        }],
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity.node_affinity.get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(pinned);
    affinity
}

/// The spec of a daemon pod the controller creates for a node (`CreatePodTemplate` + the
/// affinity replacement in `syncNodes`): the template's spec, the default tolerations, and the
/// node pinned through affinity — `nodeName` stays unset; the scheduler binds it.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner::k8s::daemon::daemon_pod_spec;
/// let spec = daemon_pod_spec(&DaemonSet::default(), "gpu-1");
/// assert!(spec.node_name.is_none() && spec.affinity.is_some());
/// ```
pub fn daemon_pod_spec(ds: &DaemonSet, node_name: &str) -> PodSpec {
    let mut spec = template_spec(ds);
    taints::add_daemon_pod_tolerations(&mut spec);
    spec.affinity = Some(pin_to_node(spec.affinity.take(), node_name));
    spec
}

/// The labels of a new daemon pod: the template's labels plus `controller-revision-hash` and
/// (when the DS has one) `pod-template-generation`.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner::k8s::daemon::daemon_pod_labels;
/// let labels = daemon_pod_labels(&DaemonSet::default(), "6d4f8b5c9").unwrap();
/// assert_eq!(labels["controller-revision-hash"], "6d4f8b5c9");
/// ```
pub fn daemon_pod_labels(ds: &DaemonSet, hash: &str) -> Result<BTreeMap<String, String>> {
    let mut labels = ds
        .spec
        .as_ref()
        .and_then(|spec| spec.template.metadata.as_ref())
        .and_then(|meta| meta.labels.clone())
        .unwrap_or_default();
    if let Some(generation) = template_generation(ds)? {
        labels.insert(POD_TEMPLATE_GENERATION_LABEL.to_string(), generation.to_string());
    }
    labels.insert(CONTROLLER_REVISION_HASH_LABEL.to_string(), hash.to_string());
    Ok(labels)
}

/// `GetTemplateGeneration`: the `deprecated.daemonset.template.generation` annotation.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner::k8s::daemon::template_generation;
/// assert_eq!(template_generation(&DaemonSet::default()).unwrap(), None);
/// ```
pub fn template_generation(ds: &DaemonSet) -> Result<Option<i64>> {
    match ds.metadata.annotations.as_ref().and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION)) {
        None => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|_| Error::TemplateGeneration(text.clone())),
    }
}

fn pod_label<'a>(pod: &'a Pod, key: &str) -> Option<&'a str> {
    pod.metadata.labels.as_ref().and_then(|labels| labels.get(key)).map(String::as_str)
}

/// `IsPodUpdated`: the pod's `controller-revision-hash` equals the current hash, or its
/// `pod-template-generation` equals the DS template generation.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use lab_runner::k8s::daemon::is_pod_updated;
/// assert!(!is_pod_updated(&Pod::default(), "abc", Some(2)));
/// ```
pub fn is_pod_updated(pod: &Pod, hash: &str, template_generation: Option<i64>) -> bool {
    let template_matches = template_generation.is_some_and(|generation| {
        pod_label(pod, POD_TEMPLATE_GENERATION_LABEL) == Some(&generation.to_string())
    });
    let hash_matches = !hash.is_empty() && pod_label(pod, CONTROLLER_REVISION_HASH_LABEL) == Some(hash);
    hash_matches || template_matches
}

fn ready_condition(pod: &Pod) -> Option<&k8s_openapi::api::core::v1::PodCondition> {
    pod.status.as_ref()?.conditions.as_ref()?.iter().find(|condition| condition.type_ == "Ready")
}

/// `IsPodReady`: the `Ready` condition is `True`.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use lab_runner::k8s::daemon::is_pod_ready;
/// assert!(!is_pod_ready(&Pod::default()));
/// ```
pub fn is_pod_ready(pod: &Pod) -> bool {
    ready_condition(pod).is_some_and(|condition| condition.status == "True")
}

/// `IsPodAvailable`: ready, and either `minReadySeconds == 0` or the Ready condition's
/// `lastTransitionTime + minReadySeconds` is strictly before `now`.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use k8s_openapi::jiff::Timestamp;
/// use lab_runner::k8s::daemon::is_pod_available;
/// assert!(!is_pod_available(&Pod::default(), 0, Timestamp::UNIX_EPOCH));
/// ```
pub fn is_pod_available(pod: &Pod, min_ready_seconds: i32, now: Timestamp) -> bool {
    if !is_pod_ready(pod) {
        return false;
    }
    if min_ready_seconds == 0 {
        return true;
    }
    let Some(since) = ready_condition(pod).and_then(|c| c.last_transition_time.as_ref()) else {
        return false;
    };
    since
        .0
        .checked_add(SignedDuration::from_secs(i64::from(min_ready_seconds)))
        .is_ok_and(|ready_at| ready_at < now)
}

/// Rounding for [`scaled_value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rounding {
    /// `math.Ceil`.
    Up,
    /// `math.Floor`.
    Down,
}

/// `intstr.GetScaledValueFromIntOrPercent`: an int as is, or `"<n>%"` of `total` rounded as
/// asked. A string without `%` or with a non-integer number is an error, as upstream.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
/// use lab_runner::k8s::daemon::{scaled_value, Rounding};
/// assert_eq!(scaled_value(&IntOrString::String("10%".into()), 11, Rounding::Up, "MaxUnavailable").unwrap(), 2);
/// assert_eq!(scaled_value(&IntOrString::Int(1), 11, Rounding::Up, "MaxUnavailable").unwrap(), 1);
/// ```
pub fn scaled_value(value: &IntOrString, total: i64, rounding: Rounding, field: &'static str) -> Result<i64> {
    match value {
        IntOrString::Int(int) => Ok(i64::from(*int)),
        IntOrString::String(text) => {
            let invalid = |message: String| Error::InvalidIntOrPercent { field, message };
            let Some(number) = text.strip_suffix('%') else {
                return Err(invalid("invalid type: string is not a percentage".to_string()));
            };
            let percent: i64 =
                number.parse().map_err(|error| invalid(format!("invalid value {text:?}: {error}")))?;
            let product = percent * total;
            Ok(match rounding {
                Rounding::Up => product.div_euclid(100) + i64::from(product.rem_euclid(100) != 0),
                Rounding::Down => product.div_euclid(100),
            })
        }
    }
}

/// The rolling-update budget of a DaemonSet over `desired` nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateBudget {
    /// Old pods that may be unavailable at once.
    pub max_unavailable: i64,
    /// Extra new pods that may run beside old ones.
    pub max_surge: i64,
}

/// The strategy of a DaemonSet, read from `spec.updateStrategy.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateStrategy {
    /// `RollingUpdate` (the default).
    RollingUpdate,
    /// `OnDelete`: pods are replaced only when deleted.
    OnDelete,
}

/// The DaemonSet's update strategy (`RollingUpdate` when unset, as defaulted).
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner::k8s::daemon::{update_strategy, UpdateStrategy};
/// assert_eq!(update_strategy(&DaemonSet::default()), UpdateStrategy::RollingUpdate);
/// ```
pub fn update_strategy(ds: &DaemonSet) -> UpdateStrategy {
    match ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref()).and_then(|u| u.type_.as_deref()) {
        Some("OnDelete") => UpdateStrategy::OnDelete,
        _ => UpdateStrategy::RollingUpdate,
    }
}

/// `updatedDesiredNodeCounts`' budgets: `UnavailableCount` and `SurgeCount` (percentages
/// rounded up over `desired`; 0 under OnDelete or without a `rollingUpdate` block; an absent
/// `maxSurge` is 0), and when `desired > 0` and both are 0, `maxUnavailable = 1`.
///
/// ```
/// use k8s_openapi::api::apps::v1::{DaemonSet, DaemonSetSpec, DaemonSetUpdateStrategy, RollingUpdateDaemonSet};
/// use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
/// use lab_runner::k8s::daemon::update_budget;
/// let ds = DaemonSet { spec: Some(DaemonSetSpec { update_strategy: Some(DaemonSetUpdateStrategy {
///     type_: Some("RollingUpdate".into()), rolling_update: Some(RollingUpdateDaemonSet {
///         max_unavailable: Some(IntOrString::String("10%".into())), max_surge: None }) }),
///     ..Default::default() }), ..Default::default() };
/// assert_eq!(update_budget(&ds, 1000).unwrap().max_unavailable, 100);
/// ```
pub fn update_budget(ds: &DaemonSet, desired: i64) -> Result<UpdateBudget> {
    let rolling =
        ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref()).and_then(|u| u.rolling_update.as_ref());
    let (mut max_unavailable, max_surge) = match (update_strategy(ds), rolling) {
        (UpdateStrategy::OnDelete, _) | (UpdateStrategy::RollingUpdate, None) => (0, 0),
        (UpdateStrategy::RollingUpdate, Some(rolling)) => {
            let unavailable = match &rolling.max_unavailable {
                Some(value) => scaled_value(value, desired, Rounding::Up, "MaxUnavailable")?,
                None => {
                    return Err(Error::InvalidIntOrPercent {
                        field: "MaxUnavailable",
                        message: "nil value for IntOrString".to_string(),
                    });
                }
            };
            let surge = match &rolling.max_surge {
                Some(value) => scaled_value(value, desired, Rounding::Up, "MaxSurge")?,
                None => 0,
            };
            (unavailable, surge)
        }
    };
    if desired > 0 && max_unavailable == 0 && max_surge == 0 {
        max_unavailable = 1;
    }
    Ok(UpdateBudget { max_unavailable, max_surge })
}

/// The `controller-revision-hash` of a template (`controller.ComputeHash`): FNV-32a over the
/// template, then the collision count as 8 little-endian bytes when set, then the decimal value
/// mapped through `rand.SafeEncodeString` — 1 to 10 characters of `[4-9bcdf]`.
///
/// Upstream hashes a `spew` deep dump of the Go struct, which cannot be reproduced byte for
/// byte; this hashes the template's JSON (k8s-openapi serializes fields in a fixed order and maps
/// sorted), which gives what the notes require: deterministic, equal templates give equal
/// hashes, the same alphabet and length (k8s-fidelity.md §1.8).
///
/// ```
/// use k8s_openapi::api::core::v1::PodTemplateSpec;
/// use lab_runner::k8s::daemon::compute_hash;
/// let hash = compute_hash(&PodTemplateSpec::default(), None).unwrap();
/// assert!(hash.chars().all(|c| "456789bcdf".contains(c)) && (1..=10).contains(&hash.len()));
/// ```
pub fn compute_hash(template: &PodTemplateSpec, collision_count: Option<i32>) -> Result<String> {
    let bytes = serde_json::to_vec(template).map_err(|error| Error::Serialize(error.to_string()))?;
    let mut hash = fnv32a(0x811c_9dc5, &bytes);
    if let Some(count) = collision_count {
        let mut extra = [0u8; 8];
        extra[..4].copy_from_slice(&(count as u32).to_le_bytes());
        hash = fnv32a(hash, &extra);
    }
    Ok(safe_encode(&hash.to_string()))
}

/// FNV-1a, 32 bit (`hash/fnv`), continuing from `state`.
fn fnv32a(mut state: u32, bytes: &[u8]) -> u32 {
    for byte in bytes {
        state ^= u32::from(*byte);
        state = state.wrapping_mul(0x0100_0193);
    }
    state
}

/// `rand.SafeEncodeString`: each byte mapped into an alphabet without vowels or confusables.
fn safe_encode(text: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    text.bytes().map(|b| ALPHANUMS[usize::from(b) % ALPHANUMS.len()] as char).collect()
}

/// Whether pods marked for deletion that already reached a terminal phase are kept when
/// grouping (`getNodesToDaemonPods`' `includeDeletedTerminal`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeletedTerminalPods {
    /// Skip them (status, manage, rolling update).
    Skip,
    /// Keep them (history cleanup: their hash is still "live").
    Include,
}

/// `podByCreationTimestampAndPhase`: bound pods first, then older `creationTimestamp`, then name.
pub fn compare_daemon_pods(a: &Pod, b: &Pod) -> Ordering {
    let bound =
        |pod: &Pod| pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_some_and(|n| !n.is_empty());
    let created = |pod: &Pod| pod.metadata.creation_timestamp.as_ref().map(|t| t.0);
    bound(b)
        .cmp(&bound(a))
        .then_with(|| created(a).cmp(&created(b)))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Groups a DaemonSet's claimed pods by target node (`getNodesToDaemonPods`), each group sorted
/// oldest first by [`compare_daemon_pods`]. Pods whose target node cannot be determined are
/// left out (upstream logs and skips them). Terminating non-terminal pods stay in.
///
/// ```
/// use k8s_openapi::api::core::v1::{Pod, PodSpec};
/// use lab_runner::k8s::daemon::{nodes_to_daemon_pods, DeletedTerminalPods};
/// let pod = Pod { spec: Some(PodSpec { node_name: Some("gpu-1".into()), ..Default::default() }),
///                 ..Default::default() };
/// let map = nodes_to_daemon_pods([&pod], DeletedTerminalPods::Skip);
/// assert_eq!(map["gpu-1"].len(), 1);
/// ```
pub fn nodes_to_daemon_pods<'a>(
    pods: impl IntoIterator<Item = &'a Pod>,
    deleted_terminal: DeletedTerminalPods,
) -> BTreeMap<String, Vec<&'a Pod>> {
    let mut map: BTreeMap<String, Vec<&'a Pod>> = BTreeMap::new();
    for pod in pods {
        let terminal = super::resources::pod_phase_class(pod) == super::resources::PodPhaseClass::Terminal;
        if deleted_terminal == DeletedTerminalPods::Skip
            && terminal
            && pod.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        if let Ok(node) = target_node_name(pod) {
            map.entry(node).or_default().push(pod);
        }
    }
    for group in map.values_mut() {
        group.sort_by(|a, b| compare_daemon_pods(a, b));
    }
    map
}

/// The status counters `updateDaemonSetStatus` writes (`kubectl get ds` shows DESIRED,
/// CURRENT, READY, UP-TO-DATE, AVAILABLE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DaemonSetCounters {
    /// `desiredNumberScheduled`.
    pub desired_number_scheduled: i32,
    /// `currentNumberScheduled`.
    pub current_number_scheduled: i32,
    /// `numberReady`.
    pub number_ready: i32,
    /// `updatedNumberScheduled`.
    pub updated_number_scheduled: i32,
    /// `numberAvailable`.
    pub number_available: i32,
    /// `numberMisscheduled`.
    pub number_misscheduled: i32,
    /// `numberUnavailable` = desired - available.
    pub number_unavailable: i32,
}

/// `updateDaemonSetStatus`'s counting (k8s-fidelity.md §1.4): for each node, `shouldRun` adds
/// to DESIRED and, with a pod, to CURRENT; only the oldest pod on the node is looked at for
/// READY, AVAILABLE (`minReadySeconds` against `now`) and UP-TO-DATE (`hash` or template
/// generation); pods on nodes that should not run one are misscheduled; pods on nodes not in
/// `nodes` are ignored. `pods` are the pods the DS has claimed.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use k8s_openapi::api::core::v1::{Node, Pod};
/// use k8s_openapi::jiff::Timestamp;
/// use lab_runner::k8s::daemon::daemonset_status;
/// let counters = daemonset_status(&DaemonSet::default(), &[Node::default()], &[], "h", Timestamp::UNIX_EPOCH);
/// assert_eq!((counters.desired_number_scheduled, counters.number_unavailable), (1, 1));
/// ```
pub fn daemonset_status(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &[Pod],
    hash: &str,
    now: Timestamp,
) -> DaemonSetCounters {
    let by_node = nodes_to_daemon_pods(pods, DeletedTerminalPods::Skip);
    // A template generation that does not parse is treated as absent, as upstream does here.
    let generation = template_generation(ds).ok().flatten();
    let min_ready_seconds = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let mut counters = DaemonSetCounters::default();
    for node in nodes {
        let name = node.metadata.name.as_deref().unwrap_or("");
        let oldest = by_node.get(name).and_then(|group| group.first().copied());
        if node_should_run_daemon_pod(ds, node).should_run() {
            counters.desired_number_scheduled += 1;
            let Some(pod) = oldest else { continue };
            counters.current_number_scheduled += 1;
            if is_pod_ready(pod) {
                counters.number_ready += 1;
                if is_pod_available(pod, min_ready_seconds, now) {
                    counters.number_available += 1;
                }
            }
            if is_pod_updated(pod, hash, generation) {
                counters.updated_number_scheduled += 1;
            }
        } else if oldest.is_some() {
            counters.number_misscheduled += 1;
        }
    }
    counters.number_unavailable = counters.desired_number_scheduled - counters.number_available;
    counters
}

#[cfg(test)]
mod tests;
