//! DaemonSet logic shared by the simulator's controller and the engine's rollout analysis: placement, pod identity, budgets, hash, status counters.
//!
//! Sources (Kubernetes v1.33): `pkg/controller/daemon/daemon_controller.go`
//! (`NodeShouldRunDaemonPod`, `predicates`, `NewPod`, `getNodesToDaemonPods`,
//! `updateDaemonSetStatus`, `podByCreationTimestampAndPhase`), `pkg/controller/daemon/update.go`
//! (`updatedDesiredNodeCounts`), `pkg/controller/daemon/util/daemonset_util.go`
//! (`GetTargetNodeName`, `ReplaceDaemonSetPodNodeNameNodeAffinity`, `IsPodUpdated`,
//! `GetTemplateGeneration`, `UnavailableCount`, `SurgeCount`), `pkg/controller/controller_utils.go`
//! (`ComputeHash`), `pkg/api/v1/pod/util.go` (`IsPodReady`, `IsPodAvailable`) and
//! `apimachinery/pkg/util/intstr` (`GetScaledValueFromIntOrPercent`). The behaviour is
//! described in `docs/daemonset.md`.

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
    /// A surge update needs a node that is not in the node list (`update.go`: upstream fails
    /// the sync the same way and retries).
    #[error("couldn't get node for nodeName {0:?}")]
    NodeNotFound(String),
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
    /// The node no longer exists (only in [`rollout_view`], for pods still targeting it).
    NodeNotFound,
}

/// `NodeShouldRunDaemonPod` (`daemon_controller.go`) as an explicit state.
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
/// use lab_runner_k8s::daemon::simulated_pod_spec;
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
/// use lab_runner_k8s::daemon::{node_should_run_daemon_pod, NodePlacement};
/// let tainted = Node { spec: Some(NodeSpec { taints: Some(vec![Taint {
///     key: "node-role.kubernetes.io/control-plane".into(), effect: "NoSchedule".into(),
///     ..Default::default() }]), ..Default::default() }), ..Default::default() };
/// let placement = node_should_run_daemon_pod(&DaemonSet::default(), &tainted);
/// assert!(!placement.should_run() && placement.should_continue_running());
/// ```
pub fn node_should_run_daemon_pod(ds: &DaemonSet, node: &Node) -> NodePlacement {
    DaemonPlacement::new(ds).check(node)
}

/// [`node_should_run_daemon_pod`] with the DaemonSet side prepared once (the template's
/// nodeName, its parsed required affinity and its tolerations plus the defaults), for checking
/// many nodes: the per-node work is then label, name and taint comparisons only.
#[derive(Debug, Clone)]
pub struct DaemonPlacement {
    template_node_name: Option<String>,
    affinity: RequiredNodeAffinity,
    tolerations: Vec<k8s_openapi::api::core::v1::Toleration>,
}

impl DaemonPlacement {
    /// Prepares the checks of a DaemonSet (`NewPod` without the node name, which none of the
    /// predicates below depends on).
    ///
    /// ```
    /// use k8s_openapi::api::apps::v1::DaemonSet;
    /// use k8s_openapi::api::core::v1::Node;
    /// use lab_runner_k8s::daemon::{DaemonPlacement, NodePlacement};
    /// let placement = DaemonPlacement::new(&DaemonSet::default());
    /// assert_eq!(placement.check(&Node::default()), NodePlacement::Run);
    /// ```
    pub fn new(ds: &DaemonSet) -> Self {
        let spec = simulated_pod_spec(ds, "");
        DaemonPlacement {
            template_node_name: template_spec(ds).node_name.filter(|wanted| !wanted.is_empty()),
            affinity: RequiredNodeAffinity::of_pod_spec(&spec),
            tolerations: spec.tolerations.unwrap_or_default(),
        }
    }

    /// The placement on one node.
    pub fn check(&self, node: &Node) -> NodePlacement {
        let node_name = node.metadata.name.as_deref().unwrap_or("");
        if self.template_node_name.as_deref().is_some_and(|wanted| wanted != node_name) {
            return NodePlacement::DoNotRun(NotRunReason::NodeName);
        }
        if !self.affinity.matches(node) {
            return NodePlacement::DoNotRun(NotRunReason::NodeAffinity);
        }
        let node_taints = node.spec.as_ref().and_then(|s| s.taints.as_deref()).unwrap_or_default();
        let Some(blocking) =
            taints::find_untolerated_taint(node_taints, &self.tolerations, TaintEffect::DO_NOT_SCHEDULE)
        else {
            return NodePlacement::Run;
        };
        match taints::find_untolerated_taint(node_taints, &self.tolerations, &[TaintEffect::NoExecute]) {
            Some(no_execute) => NodePlacement::DoNotRun(NotRunReason::NoExecuteTaint(no_execute.clone())),
            None => NodePlacement::KeepExisting { taint: blocking.clone() },
        }
    }
}

/// The node a daemon pod belongs to (`GetTargetNodeName`): `spec.nodeName`, or for a pod not
/// yet bound the single value of a `matchFields metadata.name In [...]` requirement of its
/// required node affinity. So an unscheduled Pending daemon pod already counts on its node.
///
/// ```
/// use k8s_openapi::api::core::v1::{Pod, PodSpec};
/// use lab_runner_k8s::daemon::target_node_name;
/// let pod = Pod { spec: Some(PodSpec { node_name: Some("gpu-1".into()), ..Default::default() }),
///                 ..Default::default() };
/// assert_eq!(target_node_name(&pod).unwrap(), "gpu-1");
/// ```
pub fn target_node_name(pod: &Pod) -> Result<String> {
    // Only an error names the pod: the controller asks this for every daemon pod at each sync.
    let name = || {
        format!(
            "{}/{}",
            pod.metadata.namespace.as_deref().unwrap_or(""),
            pod.metadata.name.as_deref().unwrap_or("")
        )
    };
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
            "no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod {}",
            name()
        )));
    };
    if required.node_selector_terms.is_empty() {
        return Err(Error::NoTargetNode(format!(
            "no nodeSelectorTerms in requiredDuringSchedulingIgnoredDuringExecution of pod {}",
            name()
        )));
    }
    for term in &required.node_selector_terms {
        for requirement in term.match_fields.iter().flatten() {
            if requirement.key == OBJECT_NAME_FIELD && requirement.operator == "In" {
                return match requirement.values.as_deref().unwrap_or_default() {
                    [value] => Ok(value.clone()),
                    _ => Err(Error::NoTargetNode(format!(
                        "the matchFields value of '{OBJECT_NAME_FIELD}' is not unique for pod {}",
                        name()
                    ))),
                };
            }
        }
    }
    Err(Error::NoTargetNode(format!("no node name found for pod {}", name())))
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: pins a daemon pod to a node by replacing the
/// required node-affinity terms with `matchFields metadata.name In [node]`; preferred terms and
/// pod (anti-)affinity are kept. `spec.nodeSelector` is left alone (the scheduler re-checks it).
///
/// ```
/// use lab_runner_k8s::daemon::{pin_to_node, target_node_name};
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
/// use lab_runner_k8s::daemon::daemon_pod_spec;
/// let spec = daemon_pod_spec(&DaemonSet::default(), "gpu-1");
/// assert!(spec.node_name.is_none() && spec.affinity.is_some());
/// ```
pub fn daemon_pod_spec(ds: &DaemonSet, node_name: &str) -> PodSpec {
    let mut spec = template_spec(ds);
    taints::add_daemon_pod_tolerations(&mut spec);
    spec.affinity = Some(pin_to_node(spec.affinity.take(), node_name));
    spec
}

/// The labels of a new daemon pod (`util.CreatePodTemplate`): the template's labels plus
/// `pod-template-generation` (when the DS has one) and `controller-revision-hash` (when the hash
/// is not empty).
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner_k8s::daemon::daemon_pod_labels;
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
    if !hash.is_empty() {
        labels.insert(CONTROLLER_REVISION_HASH_LABEL.to_string(), hash.to_string());
    }
    Ok(labels)
}

/// What the apiserver does to a DaemonSet's template generation on a write, in the apps/v1 JSON
/// form: the internal `spec.templateGeneration` surfaces as the
/// `deprecated.daemonset.template.generation` annotation on every read.
///
/// Upstream (v1.33): `pkg/registry/apps/daemonset/strategy.go` `PrepareForCreate` (L70-80 at
/// 152b09ac: a template generation below 1 becomes 1) and `PrepareForUpdate` (L83-114: the old
/// template generation is kept, plus one when `spec.template` changed), with
/// `pkg/apis/apps/v1/conversion.go` (`Convert_v1_DaemonSet_To_apps_DaemonSet` reads the annotation
/// into the internal field, `Convert_apps_DaemonSet_To_v1_DaemonSet` writes it back). So a
/// client's value is honoured on create only, and ignored on update.
///
/// ```
/// use lab_runner_k8s::daemon::prepare_template_generation;
/// let old = serde_json::json!({"metadata": {"annotations": {"deprecated.daemonset.template.generation": "1"}},
///                              "spec": {"template": {"spec": {"containers": [{"image": "a"}]}}}});
/// let mut new = serde_json::json!({"metadata": {}, "spec": {"template": {"spec": {"containers": [{"image": "b"}]}}}});
/// prepare_template_generation(&mut new, Some(&old));
/// assert_eq!(new["metadata"]["annotations"]["deprecated.daemonset.template.generation"], "2");
/// ```
pub fn prepare_template_generation(object: &mut serde_json::Value, old: Option<&serde_json::Value>) {
    let read = |value: &serde_json::Value| {
        value["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION]
            .as_str()
            .and_then(|text| text.parse::<i64>().ok())
    };
    let generation = match old {
        None => read(object).filter(|generation| *generation >= 1).unwrap_or(1),
        Some(old) => {
            let kept = read(old).unwrap_or(1);
            if old["spec"]["template"] != object["spec"]["template"] { kept + 1 } else { kept }
        }
    };
    if !object["metadata"].is_object() {
        object["metadata"] = serde_json::json!({});
    }
    if !object["metadata"]["annotations"].is_object() {
        object["metadata"]["annotations"] = serde_json::json!({});
    }
    object["metadata"]["annotations"][TEMPLATE_GENERATION_ANNOTATION] =
        serde_json::Value::String(generation.to_string());
}

/// `GetTemplateGeneration`: the `deprecated.daemonset.template.generation` annotation.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner_k8s::daemon::template_generation;
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
/// use lab_runner_k8s::daemon::is_pod_updated;
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
/// use lab_runner_k8s::daemon::is_pod_ready;
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
/// use lab_runner_k8s::daemon::is_pod_available;
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
/// use lab_runner_k8s::daemon::{scaled_value, Rounding};
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
/// use lab_runner_k8s::daemon::{update_strategy, UpdateStrategy};
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
/// use lab_runner_k8s::daemon::update_budget;
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
/// sorted), which gives what the simulator needs (`docs/daemonset.md`): deterministic, equal
/// templates give equal hashes, the same alphabet and length (`apimachinery/pkg/util/rand`
/// `SafeEncodeString`).
///
/// ```
/// use k8s_openapi::api::core::v1::PodTemplateSpec;
/// use lab_runner_k8s::daemon::compute_hash;
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
///
/// ```
/// use std::cmp::Ordering;
/// use k8s_openapi::api::core::v1::{Pod, PodSpec};
/// use lab_runner_k8s::daemon::compare_daemon_pods;
/// let bound = Pod { spec: Some(PodSpec { node_name: Some("n".into()), ..Default::default() }),
///                   ..Default::default() };
/// assert_eq!(compare_daemon_pods(&bound, &Pod::default()), Ordering::Less);
/// ```
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
/// use lab_runner_k8s::daemon::{nodes_to_daemon_pods, DeletedTerminalPods};
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

/// `updateDaemonSetStatus`'s counting (`daemon_controller.go`): for each node, `shouldRun` adds
/// to DESIRED and, with a pod, to CURRENT; only the oldest pod on the node is looked at for
/// READY, AVAILABLE (`minReadySeconds` against `now`) and UP-TO-DATE (`hash` or template
/// generation); pods on nodes that should not run one are misscheduled; pods on nodes not in
/// `nodes` are ignored. `pods` are the pods the DS has claimed.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use k8s_openapi::api::core::v1::{Node, Pod};
/// use k8s_openapi::jiff::Timestamp;
/// use lab_runner_k8s::daemon::daemonset_status;
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
    let (placements, by_node) = place(ds, nodes, pods);
    daemonset_status_placed(ds, nodes.iter().zip(&placements), &by_node, hash, now)
}

/// What the `_placed` functions take: each node's placement, in `nodes` order, and the claimed
/// pods by node ([`nodes_to_daemon_pods`], terminal deleted pods skipped).
fn place<'p>(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &'p [Pod],
) -> (Vec<NodePlacement>, BTreeMap<String, Vec<&'p Pod>>) {
    let placement = DaemonPlacement::new(ds);
    let placements = nodes.iter().map(|node| placement.check(node)).collect();
    (placements, nodes_to_daemon_pods(pods, DeletedTerminalPods::Skip))
}

/// [`daemonset_status`] with each node's placement and the pods by node
/// ([`nodes_to_daemon_pods`], terminal deleted pods skipped) already worked out: the
/// simulator's controller works both out once per sync and counts with the same answers.
pub fn daemonset_status_placed<'n>(
    ds: &DaemonSet,
    placed: impl IntoIterator<Item = (&'n Node, &'n NodePlacement)>,
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    now: Timestamp,
) -> DaemonSetCounters {
    // A template generation that does not parse is treated as absent, as upstream does here.
    let generation = template_generation(ds).ok().flatten();
    let min_ready_seconds = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let mut counters = DaemonSetCounters::default();
    for (node, placement) in placed {
        let name = node.metadata.name.as_deref().unwrap_or("");
        let oldest = by_node.get(name).and_then(|group| group.first().copied());
        if placement.should_run() {
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

/// What one `rollingUpdate` pass decides (`update.go` `rollingUpdate`): old pods to delete and
/// nodes to create a new pod on (creations happen only with `maxSurge > 0`; without surge the
/// replacement is created by a later `manage` pass once the old pod object is gone).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RollingUpdatePlan {
    /// Names of the pods to delete, replacements first.
    pub delete_pods: Vec<String>,
    /// Nodes that get a new pod now.
    pub create_on_nodes: Vec<String>,
}

/// `findUpdatedPodsOnNode`: the new and the old pod among a node's non-terminating pods, or
/// `None` when there is more than one of either (the manage loop prunes those first).
pub fn updated_pods_on_node<'a>(
    pods: &[&'a Pod],
    hash: &str,
    generation: Option<i64>,
) -> Option<(Option<&'a Pod>, Option<&'a Pod>)> {
    let (mut new, mut old) = (None, None);
    for pod in pods.iter().copied().filter(|pod| pod.metadata.deletion_timestamp.is_none()) {
        let slot = if is_pod_updated(pod, hash, generation) { &mut new } else { &mut old };
        if slot.replace(pod).is_some() {
            return None;
        }
    }
    Some((new, old))
}

fn pod_name(pod: &Pod) -> String {
    pod.metadata.name.clone().unwrap_or_default()
}

/// One pass of the RollingUpdate strategy (`update.go` `rollingUpdate` in v1.33; described in
/// `docs/daemonset.md`). Nodes are visited in name order (upstream iterates a Go map: the order,
/// and so which node is updated first, is unspecified there).
///
/// Without surge: a node with excess pods, no pod, or both an old and a new pod counts as
/// unavailable, as does an unavailable new pod; an unavailable old pod is replaced at once (and,
/// since v1.31, PR #123233, also counts as unavailable); an available old pod is a candidate
/// while fewer than `maxUnavailable` are unavailable; the candidates are cut to the remaining
/// budget. Misscheduled nodes (pods but `shouldRun` false) take part like any other.
///
/// With surge: an old pod without a new one gets a new pod at once when unavailable (or is
/// deleted if the node should no longer run one), else becomes a surge candidate within
/// `maxSurge`; old pods on nodes that should no longer run one are deleted only while more pods
/// are available than desired; once a new pod is available its old pod is deleted.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use k8s_openapi::jiff::Timestamp;
/// use lab_runner_k8s::daemon::rolling_update_plan;
/// let plan = rolling_update_plan(&DaemonSet::default(), &[], &[], "h", Timestamp::UNIX_EPOCH).unwrap();
/// assert!(plan.delete_pods.is_empty() && plan.create_on_nodes.is_empty());
/// ```
pub fn rolling_update_plan(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &[Pod],
    hash: &str,
    now: Timestamp,
) -> Result<RollingUpdatePlan> {
    let (placements, by_node) = place(ds, nodes, pods);
    rolling_update_plan_placed(ds, nodes.iter().zip(&placements), &by_node, hash, now)
}

/// [`rolling_update_plan`] with each node's placement and the pods by node
/// ([`nodes_to_daemon_pods`], terminal deleted pods skipped) already worked out, as the
/// simulator's controller has them once per sync.
pub fn rolling_update_plan_placed<'n>(
    ds: &DaemonSet,
    placed: impl IntoIterator<Item = (&'n Node, &'n NodePlacement)>,
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    now: Timestamp,
) -> Result<RollingUpdatePlan> {
    let placement_of: BTreeMap<&str, &NodePlacement> = placed
        .into_iter()
        .map(|(node, placement)| (node.metadata.name.as_deref().unwrap_or(""), placement))
        .collect();
    // `updatedDesiredNodeCounts`: the claimed pods by node, plus every node that should run one.
    let mut groups: BTreeMap<&str, &[&Pod]> =
        by_node.iter().map(|(node, pods)| (node.as_str(), pods.as_slice())).collect();
    let mut desired = 0;
    for (name, placement) in &placement_of {
        if placement.should_run() {
            desired += 1;
            groups.entry(name).or_default();
        }
    }
    let budget = update_budget(ds, desired)?;
    let rolling = RollingPass {
        generation: template_generation(ds).ok().flatten(),
        min_ready_seconds: ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0),
        hash,
        now,
    };
    if budget.max_surge == 0 {
        return Ok(rolling.without_surge(&groups, budget.max_unavailable));
    }
    let should_run_on = |name: &str| -> Result<bool> {
        let placement = placement_of.get(name).ok_or_else(|| Error::NodeNotFound(name.to_string()))?;
        Ok(placement.should_run())
    };
    rolling.with_surge(&groups, budget.max_surge, desired, should_run_on)
}

/// What one `rollingUpdate` pass reads besides the pods: the current template and the clock.
struct RollingPass<'h> {
    generation: Option<i64>,
    min_ready_seconds: i32,
    hash: &'h str,
    now: Timestamp,
}

impl RollingPass<'_> {
    fn available(&self, pod: &Pod) -> bool {
        is_pod_available(pod, self.min_ready_seconds, self.now)
    }

    /// `maxSurge == 0`: delete old pods within `maxUnavailable`; the replacements come from a
    /// later `manage` pass.
    fn without_surge(&self, groups: &BTreeMap<&str, &[&Pod]>, max_unavailable: i64) -> RollingUpdatePlan {
        let mut plan = RollingUpdatePlan::default();
        let mut unavailable = 0;
        let mut candidates = Vec::new();
        for group in groups.values() {
            match updated_pods_on_node(group, self.hash, self.generation) {
                None | Some((None, None)) | Some((Some(_), Some(_))) => unavailable += 1,
                Some((Some(new), None)) => {
                    if !self.available(new) {
                        unavailable += 1;
                    }
                }
                Some((None, Some(old))) => {
                    if !self.available(old) {
                        plan.delete_pods.push(pod_name(old));
                        unavailable += 1;
                    } else if unavailable < max_unavailable {
                        candidates.push(pod_name(old));
                    }
                }
            }
        }
        let room = (max_unavailable - unavailable).clamp(0, candidates.len() as i64) as usize;
        plan.delete_pods.extend(candidates.into_iter().take(room));
        plan
    }

    /// `maxSurge > 0`: create new pods beside old ones within `maxSurge`, delete an old pod once
    /// its new one is available.
    fn with_surge(
        &self,
        groups: &BTreeMap<&str, &[&Pod]>,
        max_surge: i64,
        desired: i64,
        should_run_on: impl Fn(&str) -> Result<bool>,
    ) -> Result<RollingUpdatePlan> {
        let mut plan = RollingUpdatePlan::default();
        let (mut surge, mut available_count) = (0i64, 0i64);
        let (mut allowed_new, mut candidates, mut sunset) = (Vec::new(), Vec::new(), Vec::new());
        for (name, group) in groups {
            let Some((new, old)) = updated_pods_on_node(group, self.hash, self.generation) else {
                surge += 1;
                continue;
            };
            if let Some(counted) = old.or(new)
                && self.available(counted)
            {
                available_count += 1;
            }
            match (new, old) {
                (_, None) => {}
                (None, Some(old)) if !self.available(old) => {
                    if should_run_on(name)? {
                        allowed_new.push(name.to_string());
                    } else {
                        plan.delete_pods.push(pod_name(old));
                    }
                }
                (None, Some(old)) => {
                    if !should_run_on(name)? {
                        sunset.push(pod_name(old));
                    } else if surge < max_surge {
                        candidates.push(name.to_string());
                    }
                }
                (Some(new), Some(old)) => {
                    if self.available(new) {
                        plan.delete_pods.push(pod_name(old));
                    } else {
                        surge += 1;
                    }
                }
            }
        }
        // Keep 100% availability when the scheduling constraints move: pods on nodes that should
        // no longer run one go only while more pods are available than desired.
        let deletable = (available_count - desired).clamp(0, sunset.len() as i64) as usize;
        plan.delete_pods.extend(sunset.into_iter().take(deletable));
        let room = (max_surge - surge).clamp(0, candidates.len() as i64) as usize;
        plan.create_on_nodes = allowed_new;
        plan.create_on_nodes.extend(candidates.into_iter().take(room));
        Ok(plan)
    }
}

/// Event reason for a failed daemon pod the controller deletes (`FailedDaemonPodReason`).
pub const FAILED_DAEMON_POD_REASON: &str = "FailedDaemonPod";
/// Event reason for a succeeded daemon pod the controller deletes (`SucceededDaemonPodReason`).
pub const SUCCEEDED_DAEMON_POD_REASON: &str = "SucceededDaemonPod";

/// The type of a [`DaemonSetEvent`] (an Event's `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DaemonSetEventType {
    /// `Normal`: an expected step.
    Normal,
    /// `Warning`: something a user should look at.
    Warning,
}

/// An event the controller records on the DaemonSet while managing its pods.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DaemonSetEvent {
    /// `Normal` or `Warning`.
    pub type_: DaemonSetEventType,
    /// The reason.
    pub reason: &'static str,
    /// The message.
    pub message: String,
}

/// A failed daemon pod: upstream deletes it, with a Warning `FailedDaemonPod` event, unless the
/// per-(DaemonSet, node) back-off (1 s doubling to 15 min) is running — that state belongs to the
/// controller, so the plan only names the pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedDaemonPod {
    /// The node (the back-off key is DaemonSet + observed generation + node).
    pub node: String,
    /// The pod name.
    pub pod: String,
    /// The Warning event to record when it is deleted.
    pub event: DaemonSetEvent,
}

/// What one `manage` pass decides (`daemon_controller.go` `manage` and `podsShouldBeOnNode`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ManagePlan {
    /// Nodes that get a new daemon pod.
    pub create_on_nodes: Vec<String>,
    /// Pods to delete now.
    pub delete_pods: Vec<String>,
    /// Failed pods to delete unless their back-off is running.
    pub failed_pods: Vec<FailedDaemonPod>,
    /// Events to record (`SucceededDaemonPod`).
    pub events: Vec<DaemonSetEvent>,
}

/// `util.AllowsSurge`: `maxSurge` scaled over one node is positive.
fn allows_surge(ds: &DaemonSet) -> bool {
    let rolling =
        ds.spec.as_ref().and_then(|s| s.update_strategy.as_ref()).and_then(|u| u.rolling_update.as_ref());
    update_strategy(ds) == UpdateStrategy::RollingUpdate
        && rolling
            .and_then(|r| r.max_surge.as_ref())
            .is_some_and(|surge| scaled_value(surge, 1, Rounding::Up, "MaxSurge").is_ok_and(|v| v > 0))
}

/// One `manage` pass over every node (`daemon_controller.go` `manage`, `podsShouldBeOnNode`),
/// in node order:
/// - should run and has no pod → create one;
/// - should continue running → terminating pods are left alone (so a node whose only pod is
///   terminating gets no new pod until that object is gone); `Failed` pods are reported in
///   [`ManagePlan::failed_pods`]; `Succeeded` pods are deleted with a `SucceededDaemonPod` event;
///   without surge, all running pods but the oldest are deleted; with surge, a node left with no
///   running pod that should run one gets a new pod, and of several pods the oldest current-hash
///   pod and the oldest other pod are kept — the old one is deleted when it is not ready or when
///   the new one is available;
/// - should not continue running → every non-terminating pod is deleted;
///
/// then unscheduled pods whose target node no longer exists are deleted.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use k8s_openapi::api::core::v1::Node;
/// use k8s_openapi::jiff::Timestamp;
/// use lab_runner_k8s::daemon::manage_plan;
/// let mut node = Node::default();
/// node.metadata.name = Some("gpu-1".into());
/// let plan = manage_plan(&DaemonSet::default(), &[node], &[], "h", Timestamp::UNIX_EPOCH);
/// assert_eq!(plan.create_on_nodes, vec!["gpu-1".to_string()]);
/// ```
pub fn manage_plan(ds: &DaemonSet, nodes: &[Node], pods: &[Pod], hash: &str, now: Timestamp) -> ManagePlan {
    let (placements, by_node) = place(ds, nodes, pods);
    manage_plan_placed(ds, nodes.iter().zip(&placements), &by_node, hash, now)
}

/// [`manage_plan`] with each node's placement and the pods by node ([`nodes_to_daemon_pods`],
/// terminal deleted pods skipped) already worked out, as the simulator's controller has them
/// once per sync.
pub fn manage_plan_placed<'n>(
    ds: &DaemonSet,
    placed: impl IntoIterator<Item = (&'n Node, &'n NodePlacement)>,
    by_node: &BTreeMap<String, Vec<&Pod>>,
    hash: &str,
    now: Timestamp,
) -> ManagePlan {
    let pass = ManagePass {
        surge: allows_surge(ds),
        min_ready_seconds: ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0),
        namespace: ds.metadata.namespace.as_deref().unwrap_or(""),
        hash,
        now,
    };
    let mut plan = ManagePlan::default();
    let mut known = std::collections::BTreeSet::new();
    for (node, placement) in placed {
        let node_name = node.metadata.name.as_deref().unwrap_or("");
        known.insert(node_name);
        let daemon_pods = by_node.get(node_name).map(Vec::as_slice).unwrap_or_default();
        if placement.should_run() && daemon_pods.is_empty() {
            plan.create_on_nodes.push(node_name.to_string());
        } else if placement.should_continue_running() {
            pass.pods_should_be_on_node(&mut plan, node_name, placement, daemon_pods);
        } else {
            plan.delete_pods.extend(
                daemon_pods
                    .iter()
                    .filter(|pod| pod.metadata.deletion_timestamp.is_none())
                    .map(|pod| pod_name(pod)),
            );
        }
    }
    // `getUnscheduledPodsWithoutNode`. A pod already being deleted is not deleted again (an
    // unbound pod goes at once upstream, so none is ever seen terminating there).
    for (node_name, group) in by_node {
        if known.contains(node_name.as_str()) {
            continue;
        }
        for pod in group {
            if pod.spec.as_ref().and_then(|s| s.node_name.as_deref()).is_none_or(str::is_empty)
                && pod.metadata.deletion_timestamp.is_none()
            {
                plan.delete_pods.push(pod_name(pod));
            }
        }
    }
    plan
}

/// What one `manage` pass reads besides the nodes and pods.
struct ManagePass<'a> {
    surge: bool,
    min_ready_seconds: i32,
    namespace: &'a str,
    hash: &'a str,
    now: Timestamp,
}

impl ManagePass<'_> {
    /// `podsShouldBeOnNode` for a node where the daemon pods may continue running.
    fn pods_should_be_on_node(
        &self,
        plan: &mut ManagePlan,
        node_name: &str,
        placement: &NodePlacement,
        daemon_pods: &[&Pod],
    ) {
        let namespace = self.namespace;
        let mut running: Vec<&Pod> = Vec::new();
        for pod in daemon_pods.iter().copied().filter(|pod| pod.metadata.deletion_timestamp.is_none()) {
            let name = pod_name(pod);
            match super::resources::pod_phase_class(pod) {
                super::resources::PodPhaseClass::Terminal
                    if pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Failed") =>
                {
                    plan.failed_pods.push(FailedDaemonPod {
                        node: node_name.to_string(),
                        pod: name.clone(),
                        event: DaemonSetEvent {
                            type_: DaemonSetEventType::Warning,
                            reason: FAILED_DAEMON_POD_REASON,
                            message: format!(
                                "Found failed daemon pod {namespace}/{name} on node {node_name}, will try to kill it"
                            ),
                        },
                    });
                }
                super::resources::PodPhaseClass::Terminal => {
                    plan.events.push(DaemonSetEvent {
                        type_: DaemonSetEventType::Normal,
                        reason: SUCCEEDED_DAEMON_POD_REASON,
                        message: format!(
                            "Found succeeded daemon pod {namespace}/{name} on node {node_name}, will try to delete it"
                        ),
                    });
                    plan.delete_pods.push(name);
                }
                super::resources::PodPhaseClass::Active => running.push(pod),
            }
        }
        running.sort_by(|a, b| compare_daemon_pods(a, b));
        if !self.surge {
            plan.delete_pods.extend(running.iter().skip(1).map(|pod| pod_name(pod)));
            return;
        }
        if running.len() <= 1 {
            if running.is_empty() && placement.should_run() {
                plan.create_on_nodes.push(node_name.to_string());
            }
            return;
        }
        // Surge: keep the oldest pod of the current hash and the oldest other one.
        let (mut oldest_new, mut oldest_old): (Option<&Pod>, Option<&Pod>) = (None, None);
        for pod in running {
            let slot = if pod_label(pod, CONTROLLER_REVISION_HASH_LABEL) == Some(self.hash) {
                &mut oldest_new
            } else {
                &mut oldest_old
            };
            if slot.is_none() {
                *slot = Some(pod);
            } else {
                plan.delete_pods.push(pod_name(pod));
            }
        }
        if let (Some(new), Some(old)) = (oldest_new, oldest_old)
            && (!is_pod_ready(old) || is_pod_available(new, self.min_ready_seconds, self.now))
        {
            plan.delete_pods.push(pod_name(old));
        }
    }
}

/// Which template generation a daemon pod runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodRevision {
    /// [`is_pod_updated`] with the current hash.
    Current,
    /// Any older template.
    Old,
}

/// A daemon pod's readiness as the controller counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodReadiness {
    /// Ready for at least `minReadySeconds`.
    Available,
    /// Ready, but not yet for `minReadySeconds`.
    Ready,
    /// Not ready (Pending, ImagePullBackOff, CrashLoop, failing probes…).
    NotReady,
}

/// One daemon pod in the per-node rollout view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RolloutPod {
    /// `metadata.name`.
    pub name: String,
    /// Current or old template.
    pub revision: PodRevision,
    /// Ready / available.
    pub readiness: PodReadiness,
    /// `deletionTimestamp` is set.
    pub terminating: bool,
}

/// One node in the per-node rollout view.
#[derive(Debug, Clone, PartialEq)]
pub struct RolloutNode {
    /// Node name.
    pub node: String,
    /// Whether the DaemonSet wants a pod there.
    pub placement: NodePlacement,
    /// Its daemon pods, oldest first (the first one is what the status counters look at).
    pub pods: Vec<RolloutPod>,
}

impl RolloutNode {
    /// Whether the node is where the DaemonSet wants it to be: a pod that should run has one
    /// current, available, non-terminating pod and nothing else; a node that should not run one
    /// has no pod.
    pub fn is_settled(&self) -> bool {
        if self.placement.should_run() {
            matches!(
                self.pods.as_slice(),
                [RolloutPod {
                    revision: PodRevision::Current,
                    readiness: PodReadiness::Available,
                    terminating: false,
                    ..
                }]
            )
        } else {
            self.pods.is_empty()
        }
    }
}

/// The per-node view behind the engine's rollout analysis and `status` (node × pod × revision ×
/// readiness), for every node in `nodes` plus nodes that only appear as a pod's target (a
/// deleted node), in node-name order.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use k8s_openapi::api::core::v1::Node;
/// use k8s_openapi::jiff::Timestamp;
/// use lab_runner_k8s::daemon::rollout_view;
/// let view = rollout_view(&DaemonSet::default(), &[Node::default()], &[], "h", Timestamp::UNIX_EPOCH);
/// assert!(!view[0].is_settled());
/// ```
pub fn rollout_view(
    ds: &DaemonSet,
    nodes: &[Node],
    pods: &[Pod],
    hash: &str,
    now: Timestamp,
) -> Vec<RolloutNode> {
    let by_node = nodes_to_daemon_pods(pods, DeletedTerminalPods::Skip);
    let generation = template_generation(ds).ok().flatten();
    let min_ready_seconds = ds.spec.as_ref().and_then(|s| s.min_ready_seconds).unwrap_or(0);
    let describe = |pod: &Pod| RolloutPod {
        name: pod_name(pod),
        revision: if is_pod_updated(pod, hash, generation) { PodRevision::Current } else { PodRevision::Old },
        readiness: if is_pod_available(pod, min_ready_seconds, now) {
            PodReadiness::Available
        } else if is_pod_ready(pod) {
            PodReadiness::Ready
        } else {
            PodReadiness::NotReady
        },
        terminating: pod.metadata.deletion_timestamp.is_some(),
    };
    let placement = DaemonPlacement::new(ds);
    let mut view: BTreeMap<String, RolloutNode> = BTreeMap::new();
    for node in nodes {
        let name = node.metadata.name.clone().unwrap_or_default();
        let pods = by_node
            .get(&name)
            .map(|group| group.iter().map(|pod| describe(pod)).collect())
            .unwrap_or_default();
        view.insert(name.clone(), RolloutNode { node: name, placement: placement.check(node), pods });
    }
    for (name, group) in &by_node {
        view.entry(name.clone()).or_insert_with(|| RolloutNode {
            node: name.clone(),
            // The node is gone: nothing should run there (upstream deletes such pods).
            placement: NodePlacement::DoNotRun(NotRunReason::NodeNotFound),
            pods: group.iter().map(|pod| describe(pod)).collect(),
        });
    }
    view.into_values().collect()
}

/// What `kubectl rollout status daemonset/<name>` prints for a DaemonSet, and whether it is done
/// (`kubectl:pkg/polymorphichelpers/rollout_status.go` `DaemonSetStatusViewer`).
/// Each message ends with a newline, as kubectl writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RolloutStatus {
    /// Still rolling: print the message and keep watching.
    Waiting(String),
    /// `daemon set "<name>" successfully rolled out`.
    Done(String),
    /// Not a RollingUpdate DaemonSet: kubectl fails with this error.
    NotRollingUpdate,
}

impl RolloutStatus {
    /// The error text of [`RolloutStatus::NotRollingUpdate`].
    pub const NOT_ROLLING_UPDATE: &'static str =
        "rollout status is only available for RollingUpdate strategy type";
}

/// Computes [`RolloutStatus`] from the DaemonSet object as kubectl sees it.
///
/// ```
/// use k8s_openapi::api::apps::v1::DaemonSet;
/// use lab_runner_k8s::daemon::{rollout_status, RolloutStatus};
/// let mut ds = DaemonSet::default();
/// ds.metadata.name = Some("gpu-ds".into());
/// assert_eq!(rollout_status(&ds), RolloutStatus::Done("daemon set \"gpu-ds\" successfully rolled out\n".into()));
/// ```
pub fn rollout_status(ds: &DaemonSet) -> RolloutStatus {
    if update_strategy(ds) != UpdateStrategy::RollingUpdate {
        return RolloutStatus::NotRollingUpdate;
    }
    let name = ds.metadata.name.as_deref().unwrap_or("");
    let status = ds.status.clone().unwrap_or_default();
    let generation = ds.metadata.generation.unwrap_or(0);
    if generation > status.observed_generation.unwrap_or(0) {
        return RolloutStatus::Waiting("Waiting for daemon set spec update to be observed...\n".to_string());
    }
    let desired = status.desired_number_scheduled;
    let updated = status.updated_number_scheduled.unwrap_or(0);
    let available = status.number_available.unwrap_or(0);
    if updated < desired {
        RolloutStatus::Waiting(format!(
            "Waiting for daemon set {name:?} rollout to finish: {updated} out of {desired} new pods have been updated...\n"
        ))
    } else if available < desired {
        RolloutStatus::Waiting(format!(
            "Waiting for daemon set {name:?} rollout to finish: {available} of {desired} updated pods are available...\n"
        ))
    } else {
        RolloutStatus::Done(format!("daemon set {name:?} successfully rolled out\n"))
    }
}

#[cfg(test)]
mod tests;
