//! The default scheduler's filter pass over a set of nodes, its v1.33 `FailedScheduling` text, and a deterministic node choice.
//!
//! Sources (Kubernetes v1.33):
//! - filter order: `pkg/scheduler/apis/config/v1/default_plugins.go` (NodeUnschedulable,
//!   NodeName, TaintToleration, NodeAffinity, NodePorts, NodeResourcesFit, …); a node gets the
//!   reasons of its first failing filter only (`framework/runtime/framework.go` `RunFilterPlugins`);
//! - reasons and status codes: `plugins/nodeunschedulable/node_unschedulable.go`,
//!   `plugins/nodename/node_name.go`, `plugins/tainttoleration/taint_toleration.go`,
//!   `plugins/nodeaffinity/node_affinity.go` (Filter and PreFilter), `plugins/noderesources/fit.go`;
//! - the message: `pkg/scheduler/framework/types.go` `FitError.Error` — `"0/%v nodes are
//!   available: "`, the histogram `"<count> <reason>"` sorted with `sort.Strings` and joined by
//!   `", "`, a `.`, then `" " + postFilterMsg` (a single space and no further period: since 1.30
//!   the whole message ends in one `.`, not the `..` older releases printed);
//! - preemption: `plugins/defaultpreemption/default_preemption.go` (`PostFilter` prefixes
//!   `"preemption: "`, `PodEligibleToPreemptOthers`, `SelectVictimsOnNode`) and
//!   `framework/preemption/preemption.go` (`Preempt`, `findCandidates`: only nodes whose status
//!   is `Unschedulable` are tried; every other node is `Preemption is not helpful for
//!   scheduling`). In v1.33 a resource shortfall is always `Unschedulable` (the
//!   request-exceeds-allocatable → `UnschedulableAndUnresolvable` change, PR #131345, is 1.34);
//! - on failure `pkg/scheduler/schedule_one.go` `handleSchedulingFailure` writes the
//!   PodScheduled=False/Unschedulable condition and a `FailedScheduling` event truncated to 1024
//!   bytes with a ` ...` suffix.
//!
//! Not modelled: NodePorts, volume plugins, PodTopologySpread, InterPodAffinity, extenders,
//! nominated pods and `percentageOfNodesToScore` (every node is evaluated).

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
};

use k8s_openapi::api::core::v1::{Node, Pod, PodCondition, PodSpec, Taint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{
    affinity::{self, NodeNameRestriction, RequiredNodeAffinity},
    resources::{self, NodeUsage, SchedulerResources},
    taints::{self, TaintEffect},
};

/// Errors of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The pod has no spec.
    #[error("pod {0} has no spec")]
    NoSpec(String),
    /// A resource list of the pod, a node or a bound pod does not parse.
    #[error(transparent)]
    Resources(#[from] resources::Error),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `NodeUnschedulable` reason (`ErrReasonUnschedulable`).
pub const REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// `NodeName` reason (`ErrReason`).
pub const REASON_NODE_NAME: &str = "node(s) didn't match the requested node name";
/// `NodeAffinity` reason (`ErrReasonPod`).
pub const REASON_NODE_AFFINITY: &str = "node(s) didn't match Pod's node affinity/selector";
/// `NodeAffinity` PreFilter rejection when pinned names conflict (`errReasonConflict`).
pub const REASON_AFFINITY_CONFLICT: &str = "pod affinity terms conflict";
/// Preemption: a node where evicting pods cannot help.
pub const REASON_PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
/// Preemption: a node without lower-priority pods.
pub const REASON_NO_VICTIMS: &str = "No preemption victims found for incoming pod";
/// Preemption is not attempted for `preemptionPolicy: Never`.
pub const PREEMPTION_NEVER: &str = "not eligible due to preemptionPolicy=Never.";
/// `ErrNoNodesAvailable`.
pub const NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
/// The scheduler's name in events and `reportingController`.
pub const DEFAULT_SCHEDULER: &str = "default-scheduler";
/// Event notes are truncated to this many bytes (`validation.NoteLengthLimit`).
pub const EVENT_NOTE_LIMIT: usize = 1024;

/// A filter plugin of the default profile, in upstream's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Plugin {
    /// Cordoned nodes.
    NodeUnschedulable,
    /// `spec.nodeName`.
    NodeName,
    /// Taints with effect NoSchedule/NoExecute.
    TaintToleration,
    /// `spec.nodeSelector` and required node affinity.
    NodeAffinity,
    /// cpu, memory, ephemeral-storage, pods and extended resources.
    NodeResourcesFit,
}

impl Plugin {
    /// The upstream plugin name.
    ///
    /// ```
    /// use lab_runner_k8s::schedule::Plugin;
    /// assert_eq!(Plugin::NodeResourcesFit.name(), "NodeResourcesFit");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Plugin::NodeUnschedulable => "NodeUnschedulable",
            Plugin::NodeName => "NodeName",
            Plugin::TaintToleration => "TaintToleration",
            Plugin::NodeAffinity => "NodeAffinity",
            Plugin::NodeResourcesFit => "NodeResourcesFit",
        }
    }
}

/// A filter status code (`framework.Code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusCode {
    /// Might fit if pods were removed: preemption tries such nodes.
    Unschedulable,
    /// Cannot fit whatever is removed: preemption skips such nodes.
    UnschedulableAndUnresolvable,
}

/// Why one node was rejected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterStatus {
    /// The status code.
    pub code: StatusCode,
    /// The plugin that rejected the node (`None` for a PreFilter-wide rejection).
    pub plugin: Option<Plugin>,
    /// The reason strings, each counted in the message histogram.
    pub reasons: Vec<String>,
}

impl FilterStatus {
    fn unresolvable(plugin: Option<Plugin>, reason: impl Into<String>) -> Self {
        FilterStatus { code: StatusCode::UnschedulableAndUnresolvable, plugin, reasons: vec![reason.into()] }
    }
}

/// A node with the pods bound to it, prepared for filtering.
#[derive(Debug, Clone)]
pub struct NodeSnapshot<'a> {
    /// The node.
    pub node: &'a Node,
    /// Its allocatable resources.
    pub allocatable: SchedulerResources,
    /// The non-terminal pods bound to it (the incoming pod excluded).
    pub pods: Vec<&'a Pod>,
    /// What those pods request.
    pub usage: NodeUsage,
}

impl<'a> NodeSnapshot<'a> {
    /// Builds the snapshot of every node: each node's pods are the non-terminal pods of `pods`
    /// whose `spec.nodeName` names it, except `incoming` itself (matched by namespace/name).
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::{Node, Pod};
    /// use lab_runner_k8s::schedule::NodeSnapshot;
    /// let nodes = vec![Node::default()];
    /// let snapshots = NodeSnapshot::build_all(&nodes, &[], None).unwrap();
    /// assert_eq!(snapshots[0].usage.pod_count, 0);
    /// ```
    pub fn build_all(
        nodes: &'a [Node],
        pods: &'a [Pod],
        incoming: Option<&Pod>,
    ) -> Result<Vec<NodeSnapshot<'a>>> {
        let by_node = pods_by_node(pods, incoming);
        nodes.iter().map(|node| NodeSnapshot::build(node, &by_node)).collect()
    }

    fn build(node: &'a Node, by_node: &BTreeMap<&str, Vec<&'a Pod>>) -> Result<NodeSnapshot<'a>> {
        let name = node.metadata.name.as_deref().unwrap_or("");
        let pods = by_node.get(name).cloned().unwrap_or_default();
        let usage = resources::node_usage(pods.iter().copied())?;
        Ok(NodeSnapshot { node, allocatable: resources::node_allocatable(node)?, pods, usage })
    }

    fn name(&self) -> &str {
        self.node.metadata.name.as_deref().unwrap_or("")
    }
}

/// The non-terminal pods bound to each node, `incoming` (matched by namespace/name) excluded.
fn pods_by_node<'a>(pods: &'a [Pod], incoming: Option<&Pod>) -> BTreeMap<&'a str, Vec<&'a Pod>> {
    fn key(pod: &Pod) -> (Option<&str>, Option<&str>) {
        (pod.metadata.namespace.as_deref(), pod.metadata.name.as_deref())
    }
    let incoming_key = incoming.map(key);
    let mut by_node: BTreeMap<&str, Vec<&'a Pod>> = BTreeMap::new();
    for pod in pods {
        let Some(node_name) = pod.spec.as_ref().and_then(|spec| spec.node_name.as_deref()) else { continue };
        if node_name.is_empty()
            || resources::pod_phase_class(pod) == resources::PodPhaseClass::Terminal
            || incoming_key.as_ref() == Some(&key(pod))
        {
            continue;
        }
        by_node.entry(node_name).or_default().push(pod);
    }
    by_node
}

fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

/// `corev1helpers.PodPriority`: `spec.priority`, 0 when unset.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use lab_runner_k8s::schedule::pod_priority;
/// assert_eq!(pod_priority(&Pod::default()), 0);
/// ```
pub fn pod_priority(pod: &Pod) -> i32 {
    pod.spec.as_ref().and_then(|spec| spec.priority).unwrap_or(0)
}

/// Runs the filter plugins, in order, for one pod on one node; `None` when the node fits.
///
/// ```
/// use k8s_openapi::api::core::v1::{Node, NodeSpec, PodSpec};
/// use lab_runner_k8s::resources::{NodeUsage, SchedulerResources};
/// use lab_runner_k8s::schedule::filter_node;
/// let cordoned = Node { spec: Some(NodeSpec { unschedulable: Some(true), ..Default::default() }),
///                       ..Default::default() };
/// let status = filter_node(&PodSpec::default(), &SchedulerResources::default(), &cordoned,
///     &SchedulerResources { allowed_pods: 110, ..Default::default() }, &NodeUsage::default()).unwrap();
/// assert_eq!(status.reasons, vec!["node(s) were unschedulable"]);
/// ```
pub fn filter_node(
    spec: &PodSpec,
    request: &SchedulerResources,
    node: &Node,
    allocatable: &SchedulerResources,
    usage: &NodeUsage,
) -> Option<FilterStatus> {
    filter_prepared(spec, &RequiredNodeAffinity::of_pod_spec(spec), request, node, allocatable, usage)
}

/// [`filter_node`] with the pod's required affinity parsed once for all nodes.
fn filter_prepared(
    spec: &PodSpec,
    required: &RequiredNodeAffinity,
    request: &SchedulerResources,
    node: &Node,
    allocatable: &SchedulerResources,
    usage: &NodeUsage,
) -> Option<FilterStatus> {
    let tolerations = spec.tolerations.as_deref().unwrap_or_default();
    let node_spec = node.spec.as_ref();
    // NodeUnschedulable: a cordoned node admits pods tolerating the unschedulable taint.
    if node_spec.and_then(|s| s.unschedulable).unwrap_or(false) {
        let cordon = Taint {
            key: taints::TAINT_NODE_UNSCHEDULABLE.to_string(),
            effect: TaintEffect::NoSchedule.as_str().to_string(),
            ..Default::default()
        };
        if !taints::tolerations_tolerate_taint(tolerations, &cordon) {
            return Some(FilterStatus::unresolvable(Some(Plugin::NodeUnschedulable), REASON_UNSCHEDULABLE));
        }
    }
    // NodeName.
    let node_name = node.metadata.name.as_deref().unwrap_or("");
    if let Some(wanted) = spec.node_name.as_deref().filter(|wanted| !wanted.is_empty())
        && wanted != node_name
    {
        return Some(FilterStatus::unresolvable(Some(Plugin::NodeName), REASON_NODE_NAME));
    }
    // TaintToleration: the first untolerated NoSchedule/NoExecute taint, value printed as is.
    let node_taints = node_spec.and_then(|s| s.taints.as_deref()).unwrap_or_default();
    if let Some(taint) =
        taints::find_untolerated_taint(node_taints, tolerations, TaintEffect::DO_NOT_SCHEDULE)
    {
        let reason = format!(
            "node(s) had untolerated taint {{{}: {}}}",
            taint.key,
            taint.value.as_deref().unwrap_or("")
        );
        return Some(FilterStatus::unresolvable(Some(Plugin::TaintToleration), reason));
    }
    // NodeAffinity.
    if !required.matches(node) {
        return Some(FilterStatus::unresolvable(Some(Plugin::NodeAffinity), REASON_NODE_AFFINITY));
    }
    // NodeResourcesFit: every insufficiency is a reason, code Unschedulable.
    let insufficient = resources::fits_request(request, allocatable, usage);
    if !insufficient.is_empty() {
        return Some(FilterStatus {
            code: StatusCode::Unschedulable,
            plugin: Some(Plugin::NodeResourcesFit),
            reasons: insufficient.iter().map(ToString::to_string).collect(),
        });
    }
    None
}

/// What the DefaultPreemption PostFilter concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Preemption {
    /// `preemptionPolicy: Never`: preemption is not attempted.
    NotEligible,
    /// No node can be freed up; the inner diagnosis prints as a FitError.
    NoCandidates(Diagnosis),
    /// Evicting these lower-priority pods would make room (upstream would nominate one node and
    /// evict its victims; the FailedScheduling message then has no preemption part).
    Candidates(Vec<PreemptionCandidate>),
}

impl Preemption {
    /// The PostFilter message appended to the FitError (empty for candidates).
    ///
    /// ```
    /// use lab_runner_k8s::schedule::Preemption;
    /// assert_eq!(Preemption::NotEligible.message(), "preemption: not eligible due to preemptionPolicy=Never.");
    /// ```
    pub fn message(&self) -> String {
        match self {
            Preemption::NotEligible => format!("preemption: {PREEMPTION_NEVER}"),
            Preemption::NoCandidates(diagnosis) => format!("preemption: {diagnosis}"),
            Preemption::Candidates(_) => String::new(),
        }
    }
}

/// A node where preemption would help, with the pods it would evict (`namespace/name`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreemptionCandidate {
    /// The node.
    pub node: String,
    /// The lower-priority pods to evict there, after reprieving every one the incoming pod fits
    /// beside (PodDisruptionBudgets are not weighed).
    pub victims: Vec<String>,
}

/// Per-node statuses over a node count: the body of a FitError (`framework.Diagnosis` with
/// `NodeToStatus`). Nodes without an explicit status take `absent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnosis {
    /// `NumAllNodes`.
    pub num_all_nodes: usize,
    /// A PreFilter rejection message, which replaces the per-node histogram.
    pub pre_filter_msg: Option<String>,
    /// Nodes that were evaluated and rejected, by name.
    pub node_statuses: BTreeMap<String, FilterStatus>,
    /// The status of every node not in `node_statuses`.
    pub absent: Option<FilterStatus>,
}

impl Diagnosis {
    /// The histogram entries `"<count> <reason>"`, sorted as Go's `sort.Strings` (bytewise).
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use lab_runner_k8s::schedule::{Diagnosis, FilterStatus, StatusCode};
    /// let absent = FilterStatus { code: StatusCode::UnschedulableAndUnresolvable, plugin: None,
    ///                             reasons: vec!["Preemption is not helpful for scheduling".into()] };
    /// let d = Diagnosis { num_all_nodes: 3, pre_filter_msg: None, node_statuses: BTreeMap::new(),
    ///                     absent: Some(absent) };
    /// assert_eq!(d.to_string(), "0/3 nodes are available: 3 Preemption is not helpful for scheduling.");
    /// ```
    pub fn histogram(&self) -> Vec<String> {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for status in self.node_statuses.values() {
            for reason in &status.reasons {
                *counts.entry(reason).or_default() += 1;
            }
        }
        let absent_nodes = self.num_all_nodes.saturating_sub(self.node_statuses.len());
        if absent_nodes > 0
            && let Some(absent) = &self.absent
        {
            for reason in &absent.reasons {
                *counts.entry(reason).or_default() += absent_nodes;
            }
        }
        let mut entries: Vec<String> =
            counts.iter().map(|(reason, count)| format!("{count} {reason}")).collect();
        entries.sort();
        entries
    }
}

impl fmt::Display for Diagnosis {
    /// `FitError.Error` without the PostFilter part.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0/{} nodes are available:", self.num_all_nodes)?;
        if let Some(message) = &self.pre_filter_msg {
            return write!(f, " {message}.");
        }
        let entries = self.histogram();
        if !entries.is_empty() {
            write!(f, " {}.", entries.join(", "))?;
        }
        Ok(())
    }
}

/// Why a pod fits no node; `Display` is the exact v1.33 FailedScheduling message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitError {
    /// The filter diagnosis.
    pub diagnosis: Diagnosis,
    /// The PostFilter (DefaultPreemption) outcome.
    pub preemption: Preemption,
}

impl fmt::Display for FitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.diagnosis)?;
        let post_filter = self.preemption.message();
        if !post_filter.is_empty() {
            write!(f, " {post_filter}")?;
        }
        Ok(())
    }
}

impl std::error::Error for FitError {}

/// The outcome of scheduling one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleFailure {
    /// The cluster has no nodes (`ErrNoNodesAvailable`).
    NoNodesAvailable,
    /// No node fits.
    Unfit(FitError),
}

impl fmt::Display for ScheduleFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ScheduleFailure::NoNodesAvailable => f.write_str(NO_NODES_AVAILABLE),
            ScheduleFailure::Unfit(fit_error) => fit_error.fmt(f),
        }
    }
}

impl ScheduleFailure {
    /// The `PodScheduled` condition the scheduler writes: status False, reason `Unschedulable`,
    /// message the full text (not truncated), `lastProbeTime` null.
    ///
    /// ```
    /// use lab_runner_k8s::schedule::ScheduleFailure;
    /// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    /// let now = Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH);
    /// let condition = ScheduleFailure::NoNodesAvailable.pod_scheduled_condition(now);
    /// assert_eq!(condition.reason.as_deref(), Some("Unschedulable"));
    /// ```
    pub fn pod_scheduled_condition(&self, last_transition_time: Time) -> PodCondition {
        PodCondition {
            type_: "PodScheduled".to_string(),
            status: "False".to_string(),
            reason: Some("Unschedulable".to_string()),
            message: Some(self.to_string()),
            last_probe_time: None,
            last_transition_time: Some(last_transition_time),
            ..Default::default()
        }
    }

    /// The `FailedScheduling` event note: the message truncated to 1024 bytes with a ` ...`
    /// suffix (`schedule_one.go` `truncateMessage`).
    ///
    /// ```
    /// use lab_runner_k8s::schedule::ScheduleFailure;
    /// assert_eq!(ScheduleFailure::NoNodesAvailable.event_message(), "no nodes available to schedule pods");
    /// ```
    pub fn event_message(&self) -> String {
        truncate_note(&self.to_string())
    }
}

fn truncate_note(message: &str) -> String {
    if message.len() <= EVENT_NOTE_LIMIT {
        return message.to_string();
    }
    const SUFFIX: &str = " ...";
    let mut end = EVENT_NOTE_LIMIT - SUFFIX.len();
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}{SUFFIX}", &message[..end])
}

/// VolumeBinding's PreFilter reason for a claim that is not bound yet and does not wait for its
/// first consumer (`ErrReasonUnboundImmediatePVC`-style text of
/// pkg/scheduler/framework/plugins/volumebinding/volume_binding.go `PreFilter`).
pub const REASON_UNBOUND_IMMEDIATE_CLAIMS: &str = "pod has unbound immediate PersistentVolumeClaims";

/// A PreFilter rejection (`UnschedulableAndUnresolvable` for the whole cycle) over `num_nodes`
/// nodes: the FitError prints the PreFilter's message instead of a histogram, and preemption,
/// finding every node unresolvable, adds `Preemption is not helpful for scheduling` for each.
///
/// ```
/// use lab_runner_k8s::schedule::{pre_filter_failure, REASON_UNBOUND_IMMEDIATE_CLAIMS};
/// assert_eq!(
///     pre_filter_failure(2, REASON_UNBOUND_IMMEDIATE_CLAIMS).to_string(),
///     "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
/// );
/// ```
pub fn pre_filter_failure(num_nodes: usize, message: impl Into<String>) -> ScheduleFailure {
    let message = message.into();
    ScheduleFailure::Unfit(FitError {
        diagnosis: Diagnosis {
            num_all_nodes: num_nodes,
            pre_filter_msg: Some(message.clone()),
            node_statuses: BTreeMap::new(),
            absent: Some(FilterStatus::unresolvable(None, message)),
        },
        preemption: Preemption::NoCandidates(Diagnosis {
            num_all_nodes: num_nodes,
            pre_filter_msg: None,
            node_statuses: BTreeMap::new(),
            absent: Some(FilterStatus::unresolvable(None, REASON_PREEMPTION_NOT_HELPFUL)),
        }),
    })
}

/// The event message on success: `Successfully assigned <ns>/<pod> to <node>`.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use lab_runner_k8s::schedule::scheduled_event_message;
/// let mut pod = Pod::default();
/// pod.metadata.namespace = Some("team-a".into());
/// pod.metadata.name = Some("train".into());
/// assert_eq!(scheduled_event_message(&pod, "gpu-1"), "Successfully assigned team-a/train to gpu-1");
/// ```
pub fn scheduled_event_message(pod: &Pod, node: &str) -> String {
    format!("Successfully assigned {} to {node}", pod_key(pod))
}

/// A node that passed every filter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeasibleNode {
    /// The node name.
    pub name: String,
    /// LeastAllocated score, 0-100 (higher is emptier after placing the pod).
    pub score: i64,
}

/// The result of the filter pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterOutcome {
    /// Nodes that fit, best first (see [`least_allocated_score`]).
    Feasible(Vec<FeasibleNode>),
    /// No node fits.
    Unschedulable(ScheduleFailure),
}

/// Filters one pod against every node (`findNodesThatFitPod`) and, when none fits, runs the
/// DefaultPreemption dry run to produce the full FitError. `pods` are all pods of the cluster;
/// those bound to a node (non-terminal) count there.
///
/// ```
/// use k8s_openapi::api::core::v1::{Node, Pod, PodSpec};
/// use lab_runner_k8s::schedule::{find_feasible_nodes, FilterOutcome};
/// let pod = Pod { spec: Some(PodSpec::default()), ..Default::default() };
/// let outcome = find_feasible_nodes(&pod, &[], &[]).unwrap();
/// assert_eq!(outcome.to_string_if_unschedulable().as_deref(), Some("no nodes available to schedule pods"));
/// ```
pub fn find_feasible_nodes(pod: &Pod, nodes: &[Node], pods: &[Pod]) -> Result<FilterOutcome> {
    let by_node = pods_by_node(pods, Some(pod));
    find_feasible_nodes_by(pod, nodes, &|node| NodeSnapshot::build(node, &by_node))
}

/// [`find_feasible_nodes`] for a caller that keeps each node's pods and usage itself (upstream's
/// scheduler cache of `NodeInfo`s): `snapshot` gives the snapshot of one node, without the
/// incoming pod; it is called only for the nodes the NodeAffinity PreFilter lets through.
pub fn find_feasible_nodes_by<'a>(
    pod: &Pod,
    nodes: &'a [Node],
    snapshot: &dyn Fn(&'a Node) -> Result<NodeSnapshot<'a>>,
) -> Result<FilterOutcome> {
    let spec = pod.spec.as_ref().ok_or_else(|| Error::NoSpec(pod_key(pod)))?;
    if nodes.is_empty() {
        return Ok(FilterOutcome::Unschedulable(ScheduleFailure::NoNodesAvailable));
    }
    let request = resources::pod_scheduler_requests(spec)?;
    let required = RequiredNodeAffinity::of_pod_spec(spec);
    let mut diagnosis = Diagnosis {
        num_all_nodes: nodes.len(),
        pre_filter_msg: None,
        node_statuses: BTreeMap::new(),
        absent: None,
    };

    // NodeAffinity PreFilter: only the nodes it lets through are snapshotted and filtered.
    let evaluated: Vec<&Node> = match affinity::node_name_restriction(spec) {
        NodeNameRestriction::AllNodes => nodes.iter().collect(),
        NodeNameRestriction::Conflict => {
            let status = FilterStatus::unresolvable(Some(Plugin::NodeAffinity), REASON_AFFINITY_CONFLICT);
            diagnosis.pre_filter_msg = Some(REASON_AFFINITY_CONFLICT.to_string());
            diagnosis.absent = Some(status);
            return Ok(FilterOutcome::Unschedulable(ScheduleFailure::Unfit(FitError {
                preemption: preempt(pod, &request, &[], &diagnosis),
                diagnosis,
            })));
        }
        NodeNameRestriction::Only(names) => {
            diagnosis.absent = Some(FilterStatus::unresolvable(
                Some(Plugin::NodeAffinity),
                format!("node(s) didn't satisfy plugin(s) [{}]", Plugin::NodeAffinity.name()),
            ));
            nodes.iter().filter(|node| names.contains(node.metadata.name.as_deref().unwrap_or(""))).collect()
        }
    };
    let snapshots = evaluated.into_iter().map(snapshot).collect::<Result<Vec<_>>>()?;

    let mut feasible = Vec::new();
    for snapshot in &snapshots {
        match filter_prepared(
            spec,
            &required,
            &request,
            snapshot.node,
            &snapshot.allocatable,
            &snapshot.usage,
        ) {
            None => feasible.push(FeasibleNode {
                name: snapshot.name().to_string(),
                score: least_allocated_score(&request, &snapshot.allocatable, &snapshot.usage),
            }),
            Some(status) => {
                diagnosis.node_statuses.insert(snapshot.name().to_string(), status);
            }
        }
    }
    if feasible.is_empty() {
        let preemption = preempt(pod, &request, &snapshots, &diagnosis);
        return Ok(FilterOutcome::Unschedulable(ScheduleFailure::Unfit(FitError { diagnosis, preemption })));
    }
    feasible.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.name.cmp(&b.name)));
    Ok(FilterOutcome::Feasible(feasible))
}

impl FilterOutcome {
    /// The failure message, or `None` when some node fits.
    pub fn to_string_if_unschedulable(&self) -> Option<String> {
        match self {
            FilterOutcome::Feasible(_) => None,
            FilterOutcome::Unschedulable(failure) => Some(failure.to_string()),
        }
    }
}

/// DefaultPreemption's dry run (`Preempt` → `findCandidates` → `DryRunPreemption` →
/// `SelectVictimsOnNode`): only nodes whose filter status is `Unschedulable` are tried; on
/// each, every pod of lower priority than the incoming pod is a potential victim — none gives
/// `No preemption victims found for incoming pod`; otherwise the node is re-filtered without
/// them and either becomes a candidate or keeps its new reasons. All other nodes are
/// `Preemption is not helpful for scheduling`.
fn preempt(
    pod: &Pod,
    request: &SchedulerResources,
    snapshots: &[NodeSnapshot],
    filtered: &Diagnosis,
) -> Preemption {
    let spec = pod.spec.as_ref();
    if spec.and_then(|s| s.preemption_policy.as_deref()) == Some("Never") {
        return Preemption::NotEligible;
    }
    let priority = pod_priority(pod);
    let default_spec = PodSpec::default();
    let required = RequiredNodeAffinity::of_pod_spec(spec.unwrap_or(&default_spec));
    let potential: BTreeSet<&str> = filtered
        .node_statuses
        .iter()
        .filter(|(_, status)| status.code == StatusCode::Unschedulable)
        .map(|(name, _)| name.as_str())
        .collect();
    let mut statuses = BTreeMap::new();
    let mut candidates = Vec::new();
    for snapshot in snapshots.iter().filter(|s| potential.contains(s.name())) {
        let (victims, survivors): (Vec<&Pod>, Vec<&Pod>) =
            snapshot.pods.iter().partition(|existing| pod_priority(existing) < priority);
        if victims.is_empty() {
            statuses.insert(
                snapshot.name().to_string(),
                FilterStatus::unresolvable(Some(Plugin::NodeResourcesFit), REASON_NO_VICTIMS),
            );
            continue;
        }
        let usage = resources::node_usage(survivors.iter().copied()).unwrap_or_default();
        match filter_prepared(
            spec.unwrap_or(&default_spec),
            &required,
            request,
            snapshot.node,
            &snapshot.allocatable,
            &usage,
        ) {
            None => {
                // `SelectVictimsOnNode`: reprieve as many victims as possible, the most important
                // first (`MoreImportantPod`: higher priority, then the earlier start), each kept
                // when the incoming pod still fits with it back on the node.
                let mut victims = victims;
                victims.sort_by(|a, b| {
                    let started =
                        |pod: &Pod| pod.status.as_ref().and_then(|s| s.start_time.as_ref()).map(|t| t.0);
                    pod_priority(b).cmp(&pod_priority(a)).then_with(|| started(a).cmp(&started(b)))
                });
                let mut kept = survivors;
                let mut evicted = Vec::new();
                for victim in victims {
                    kept.push(victim);
                    let usage = resources::node_usage(kept.iter().copied()).unwrap_or_default();
                    let spec = spec.unwrap_or(&default_spec);
                    if filter_prepared(spec, &required, request, snapshot.node, &snapshot.allocatable, &usage)
                        .is_some()
                    {
                        kept.pop();
                        evicted.push(pod_key(victim));
                    }
                }
                candidates.push(PreemptionCandidate { node: snapshot.name().to_string(), victims: evicted });
            }
            Some(status) => {
                statuses.insert(snapshot.name().to_string(), status);
            }
        }
    }
    if !candidates.is_empty() {
        return Preemption::Candidates(candidates);
    }
    Preemption::NoCandidates(Diagnosis {
        num_all_nodes: filtered.num_all_nodes,
        pre_filter_msg: None,
        node_statuses: statuses,
        absent: Some(FilterStatus::unresolvable(None, REASON_PREEMPTION_NOT_HELPFUL)),
    })
}

/// Score of a feasible node: upstream's LeastAllocated strategy over cpu and memory (weight 1
/// each), `(allocatable - requested) * 100 / allocatable` with the incoming pod counted.
///
/// **Simplification:** upstream sums several weighted scorers (LeastAllocated with non-zero
/// default requests, BalancedAllocation, TaintToleration, NodeAffinity, PodTopologySpread,
/// InterPodAffinity, ImageLocality) and breaks ties at random; the simulator uses this one
/// score and then the node name, so its choice is deterministic.
///
/// ```
/// use lab_runner_k8s::resources::{NodeUsage, SchedulerResources};
/// use lab_runner_k8s::schedule::least_allocated_score;
/// let node = SchedulerResources { milli_cpu: 4000, memory: 8 << 30, allowed_pods: 110, ..Default::default() };
/// let want = SchedulerResources { milli_cpu: 2000, memory: 4 << 30, ..Default::default() };
/// assert_eq!(least_allocated_score(&want, &node, &NodeUsage::default()), 50);
/// ```
pub fn least_allocated_score(
    request: &SchedulerResources,
    allocatable: &SchedulerResources,
    usage: &NodeUsage,
) -> i64 {
    let one = |name: &str| -> i128 {
        let capacity = allocatable.get(name);
        let requested = usage.requested.get(name) + request.get(name);
        if capacity == 0 || requested > capacity { 0 } else { (capacity - requested) * 100 / capacity }
    };
    ((one(resources::CPU) + one(resources::MEMORY)) / 2) as i64
}

/// What the scheduler does with one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleDecision {
    /// Bind it to this node (the best [`FeasibleNode`]).
    Bind {
        /// The node name.
        node: String,
    },
    /// Leave it Pending: write PodScheduled=False and a FailedScheduling event.
    Unschedulable(ScheduleFailure),
}

/// The scheduler's decision for one pod: [`find_feasible_nodes`], then the best node.
///
/// ```
/// use k8s_openapi::api::core::v1::{Pod, PodSpec};
/// use lab_runner_k8s::schedule::{schedule_pod, ScheduleDecision, ScheduleFailure};
/// let pod = Pod { spec: Some(PodSpec::default()), ..Default::default() };
/// assert_eq!(schedule_pod(&pod, &[], &[]).unwrap(),
///            ScheduleDecision::Unschedulable(ScheduleFailure::NoNodesAvailable));
/// ```
pub fn schedule_pod(pod: &Pod, nodes: &[Node], pods: &[Pod]) -> Result<ScheduleDecision> {
    Ok(decide(find_feasible_nodes(pod, nodes, pods)?))
}

/// [`schedule_pod`] with the node snapshots from the caller's cache ([`find_feasible_nodes_by`]).
pub fn schedule_pod_by<'a>(
    pod: &Pod,
    nodes: &'a [Node],
    snapshot: &dyn Fn(&'a Node) -> Result<NodeSnapshot<'a>>,
) -> Result<ScheduleDecision> {
    Ok(decide(find_feasible_nodes_by(pod, nodes, snapshot)?))
}

fn decide(outcome: FilterOutcome) -> ScheduleDecision {
    match outcome {
        FilterOutcome::Feasible(feasible) => ScheduleDecision::Bind { node: feasible[0].name.clone() },
        FilterOutcome::Unschedulable(failure) => ScheduleDecision::Unschedulable(failure),
    }
}

/// The `PodScheduled` reason of a pod the scheduler may not consider yet (`v1.PodReasonSchedulingGated`).
pub const REASON_SCHEDULING_GATED: &str = "SchedulingGated";

/// The message of that condition (`pkg/registry/core/pod/strategy.go` `applySchedulingGatedCondition`).
pub const SCHEDULING_GATED_MESSAGE: &str = "Scheduling is blocked due to non-empty scheduling gates";

/// Whether a pod still has `spec.schedulingGates`: the scheduler's `SchedulingGates` PreEnqueue
/// plugin (`pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go`) keeps such a
/// pod out of the active queue until the last gate is removed.
///
/// ```
/// use lab_runner_k8s::schedule::is_scheduling_gated;
/// let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!(
///     {"spec": {"containers": [], "schedulingGates": [{"name": "example.com/wait"}]}})).unwrap();
/// assert!(is_scheduling_gated(&pod));
/// ```
pub fn is_scheduling_gated(pod: &Pod) -> bool {
    pod.spec.as_ref().and_then(|spec| spec.scheduling_gates.as_ref()).is_some_and(|gates| !gates.is_empty())
}

/// Sets a pod condition as `podutil.UpdatePodCondition` does: `lastTransitionTime` moves only
/// when the status changes. Returns whether anything changed.
///
/// ```
/// use lab_runner_k8s::schedule::set_pod_condition;
/// let mut pod = serde_json::json!({});
/// let ready = |time: &str| serde_json::json!({"type": "Ready", "status": "True", "lastTransitionTime": time});
/// assert!(set_pod_condition(&mut pod, ready("2026-01-01T00:00:00Z")));
/// assert!(!set_pod_condition(&mut pod, ready("2026-01-01T00:05:00Z")));
/// assert_eq!(pod["status"]["conditions"][0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
/// ```
pub fn set_pod_condition(pod: &mut serde_json::Value, mut condition: serde_json::Value) -> bool {
    use serde_json::json;
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let conditions = pod["status"]["conditions"].as_array_mut().expect("conditions is an array");
    match conditions.iter_mut().find(|c| c["type"] == condition["type"]) {
        Some(existing) => {
            if existing["status"] == condition["status"] {
                condition["lastTransitionTime"] = existing["lastTransitionTime"].clone();
            }
            if *existing == condition {
                return false;
            }
            *existing = condition;
            true
        }
        None => {
            conditions.push(condition);
            true
        }
    }
}

/// What the apiserver adds to a new pod with scheduling gates (`pkg/registry/core/pod/strategy.go`,
/// `PrepareForCreate` → `applySchedulingGatedCondition`): `PodScheduled=False` with reason
/// `SchedulingGated`, unless the pod already carries a `PodScheduled` condition.
/// `podutil.UpdatePodCondition` stamps `lastTransitionTime` with the current time.
///
/// ```
/// use lab_runner_k8s::schedule::apply_scheduling_gated_condition;
/// let mut pod = serde_json::json!({"spec": {"schedulingGates": [{"name": "x"}]}, "status": {"phase": "Pending"}});
/// apply_scheduling_gated_condition(&mut pod, "2026-01-01T00:00:00Z".parse().unwrap());
/// assert_eq!(pod["status"]["conditions"][0]["reason"], "SchedulingGated");
/// ```
pub fn apply_scheduling_gated_condition(pod: &mut serde_json::Value, now: k8s_openapi::jiff::Timestamp) {
    let gated = pod["spec"]["schedulingGates"].as_array().is_some_and(|gates| !gates.is_empty());
    if !gated {
        return;
    }
    let conditions = &pod["status"]["conditions"];
    if super::condition::find(conditions, "PodScheduled").is_some() {
        return;
    }
    if !pod["status"].is_object() {
        pod["status"] = serde_json::json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = serde_json::json!([]);
    }
    let at = k8s_openapi::jiff::Timestamp::from_second(now.as_second()).unwrap_or(now).to_string();
    if let Some(list) = pod["status"]["conditions"].as_array_mut() {
        list.push(serde_json::json!({
            "type": "PodScheduled",
            "status": "False",
            "lastProbeTime": null,
            "lastTransitionTime": at,
            "reason": REASON_SCHEDULING_GATED,
            "message": SCHEDULING_GATED_MESSAGE,
        }));
    }
}

#[cfg(test)]
mod tests;
