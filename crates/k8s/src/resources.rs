//! Resource requests and node fit: a pod's effective requests, node allocatable, what a node's pods use, and NodeResourcesFit.
//!
//! Sources (Kubernetes v1.33): `staging/src/k8s.io/component-helpers/resource/helpers.go`
//! (`PodRequests`, `AggregateContainerRequests`: containers summed, init containers maxed, with
//! restartable "sidecar" init containers accumulated per KEP-753, plus `spec.overhead`),
//! `pkg/scheduler/framework/types.go` (`Resource.Add`: cpu in milli-units, the rest in units,
//! rounded up), `pkg/scheduler/framework/plugins/noderesources/fit.go` (`fitsRequest`) and
//! `pkg/apis/core/v1/helper/helpers.go` (`IsExtendedResourceName`, `IsScalarResourceName`).

use std::{collections::BTreeMap, fmt};

use k8s_openapi::api::core::v1::{Container, Node, Pod, PodSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as ApiQuantity;

use super::quantity::{self, Quantity};

/// Errors of this module.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A quantity in a resource list does not parse.
    #[error("{place}: resource {resource}: {source}")]
    Quantity {
        /// Where the list is (`container "cuda" requests`, `node gpu-1 allocatable`, …).
        place: String,
        /// The resource name.
        resource: String,
        /// The parse error.
        source: quantity::Error,
    },
    /// A sum does not fit the exact representation.
    #[error("{place}: resource {resource}: sum overflows")]
    Overflow {
        /// Where the sum was taken.
        place: String,
        /// The resource name.
        resource: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// An exact resource list (`v1.ResourceList`), keyed by resource name.
pub type ResourceList = BTreeMap<String, Quantity>;

/// `cpu`.
pub const CPU: &str = "cpu";
/// `memory`.
pub const MEMORY: &str = "memory";
/// `ephemeral-storage`.
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
/// `pods` (a node's pod capacity).
pub const PODS: &str = "pods";

/// Parses an API resource list.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
/// use lab_runner_k8s::resources::parse_resource_list;
/// let list = BTreeMap::from([("nvidia.com/gpu".to_string(), Quantity("2".into()))]);
/// assert_eq!(parse_resource_list(&list, "example").unwrap()["nvidia.com/gpu"].units_ceil(), 2);
/// ```
pub fn parse_resource_list(list: &BTreeMap<String, ApiQuantity>, place: &str) -> Result<ResourceList> {
    parse_list_at(list, || place.to_string())
}

/// [`parse_resource_list`] with the place written only for an error: the scheduler parses every
/// pod's requests, and formatting their places cost more than the parsing (issue #17).
fn parse_list_at(list: &BTreeMap<String, ApiQuantity>, place: impl Fn() -> String) -> Result<ResourceList> {
    list.iter()
        .map(|(name, value)| {
            let parsed = value.0.parse::<Quantity>().map_err(|source| Error::Quantity {
                place: place(),
                resource: name.clone(),
                source,
            })?;
            Ok((name.clone(), parsed))
        })
        .collect()
}

fn add_into(target: &mut ResourceList, other: &ResourceList, place: &str) -> Result<()> {
    for (name, value) in other {
        let slot = target.entry(name.clone()).or_insert(Quantity::ZERO);
        *slot = slot
            .checked_add(*value)
            .ok_or_else(|| Error::Overflow { place: place.to_string(), resource: name.clone() })?;
    }
    Ok(())
}

fn max_into(target: &mut ResourceList, other: &ResourceList) {
    for (name, value) in other {
        let slot = target.entry(name.clone()).or_insert(*value);
        if *value > *slot {
            *slot = *value;
        }
    }
}

/// A container's requests after API defaulting: a resource with a limit but no request gets
/// the limit as its request (`pkg/apis/core/v1/defaults.go` `SetDefaults_Pod`). Pods read from
/// a server are already defaulted; a spec not yet created (the engine's schedulability check)
/// is not, so this is applied here for both.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::api::core::v1::{Container, ResourceRequirements};
/// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
/// use lab_runner_k8s::resources::container_requests;
/// let c = Container { name: "cuda".into(), resources: Some(ResourceRequirements {
///     limits: Some(BTreeMap::from([("nvidia.com/gpu".into(), Quantity("1".into()))])),
///     ..Default::default() }), ..Default::default() };
/// assert_eq!(container_requests(&c).unwrap()["nvidia.com/gpu"].units_ceil(), 1);
/// ```
pub fn container_requests(container: &Container) -> Result<ResourceList> {
    let Some(resources) = &container.resources else { return Ok(ResourceList::new()) };
    let mut requests = match &resources.requests {
        Some(requests) => parse_list_at(requests, || format!("container {:?} requests", container.name))?,
        None => ResourceList::new(),
    };
    if let Some(limits) = &resources.limits {
        for (name, value) in parse_list_at(limits, || format!("container {:?} limits", container.name))? {
            requests.entry(name).or_insert(value);
        }
    }
    Ok(requests)
}

fn is_restartable(container: &Container) -> bool {
    container.restart_policy.as_deref() == Some("Always")
}

/// A pod's effective requests (`resourcehelper.PodRequests` with default options): the sum over
/// `containers`; then, walking `initContainers` in order, a restartable (sidecar,
/// `restartPolicy: Always`) init container is added to that sum and to a running sidecar total,
/// while a regular init container needs its own request plus the sidecars started before it;
/// the result is the per-resource max of the sum and every init step; then `spec.overhead` is
/// added. Pod-level `spec.resources` (alpha, off by default in 1.33) is not considered.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};
/// use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
/// use lab_runner_k8s::resources::pod_requests;
/// let gpu = |n: &str| Container { name: "c".into(), resources: Some(ResourceRequirements {
///     limits: Some(BTreeMap::from([("nvidia.com/gpu".into(), Quantity(n.into()))])),
///     ..Default::default() }), ..Default::default() };
/// let spec = PodSpec { containers: vec![gpu("1"), gpu("1")], init_containers: Some(vec![gpu("3")]),
///                      ..Default::default() };
/// assert_eq!(pod_requests(&spec).unwrap()["nvidia.com/gpu"].units_ceil(), 3);
/// ```
pub fn pod_requests(spec: &PodSpec) -> Result<ResourceList> {
    let place = "pod requests";
    let mut requests = ResourceList::new();
    for container in &spec.containers {
        add_into(&mut requests, &container_requests(container)?, place)?;
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for container in spec.init_containers.iter().flatten() {
        let own = container_requests(container)?;
        let step = if is_restartable(container) {
            add_into(&mut requests, &own, place)?;
            add_into(&mut sidecars, &own, place)?;
            sidecars.clone()
        } else {
            let mut step = own;
            add_into(&mut step, &sidecars, place)?;
            step
        };
        max_into(&mut init_max, &step);
    }
    max_into(&mut requests, &init_max);
    if let Some(overhead) = &spec.overhead {
        add_into(&mut requests, &parse_resource_list(overhead, "pod overhead")?, place)?;
    }
    Ok(requests)
}

/// `v1helper.IsNativeResource`: no `/`, or in the `kubernetes.io/` namespace.
fn is_native_resource(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `v1helper.IsExtendedResourceName`: not native, not a quota `requests.` name, and
/// `requests.<name>` is a qualified name. `nvidia.com/gpu`, `nvidia.com/mig-1g.10gb` and
/// `nvidia.com/gpu.shared` are extended resources.
///
/// ```
/// use lab_runner_k8s::resources::is_extended_resource_name;
/// assert!(is_extended_resource_name("nvidia.com/mig-1g.10gb"));
/// assert!(!is_extended_resource_name("cpu"));
/// ```
pub fn is_extended_resource_name(name: &str) -> bool {
    if is_native_resource(name) || name.starts_with("requests.") {
        return false;
    }
    super::affinity::is_qualified_name(&format!("requests.{name}"))
}

/// `schedutil.IsScalarResourceName`: extended resources, `hugepages-*`, other
/// `kubernetes.io/`-prefixed resources and `attachable-volumes-*`. Only these, besides cpu,
/// memory, ephemeral-storage and pods, take part in the fit check.
///
/// ```
/// use lab_runner_k8s::resources::is_scalar_resource_name;
/// assert!(is_scalar_resource_name("nvidia.com/gpu.shared") && is_scalar_resource_name("hugepages-2Mi"));
/// ```
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || name.starts_with("hugepages-")
        || (name.contains('/') && name.contains("kubernetes.io/"))
        || name.starts_with("attachable-volumes-")
}

/// Resources as the scheduler holds them (`framework.Resource`): cpu in milli-units, memory,
/// ephemeral storage, pod count and scalar resources in whole units, each rounded up from the
/// exact quantity (`MilliValue()` / `Value()`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SchedulerResources {
    /// CPU in millicores.
    pub milli_cpu: i128,
    /// Memory in bytes.
    pub memory: i128,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i128,
    /// Pod capacity (meaningful for a node's allocatable only).
    pub allowed_pods: i128,
    /// Scalar (extended, hugepages, …) resources in units.
    pub scalar: BTreeMap<String, i128>,
}

impl SchedulerResources {
    /// `framework.Resource.Add` of a resource list.
    ///
    /// ```
    /// use std::collections::BTreeMap;
    /// use lab_runner_k8s::resources::SchedulerResources;
    /// let mut r = SchedulerResources::default();
    /// r.add(&BTreeMap::from([("cpu".to_string(), "1500m".parse().unwrap())]));
    /// assert_eq!(r.milli_cpu, 1500);
    /// ```
    pub fn add(&mut self, list: &ResourceList) {
        for (name, value) in list {
            match name.as_str() {
                CPU => self.milli_cpu += value.millis_ceil(),
                MEMORY => self.memory += value.units_ceil(),
                PODS => self.allowed_pods += value.units_ceil(),
                EPHEMERAL_STORAGE => self.ephemeral_storage += value.units_ceil(),
                other if is_scalar_resource_name(other) => {
                    *self.scalar.entry(other.to_string()).or_insert(0) += value.units_ceil();
                }
                _ => {}
            }
        }
    }

    /// Adds another resource total (used to sum the pods on a node).
    pub fn add_resources(&mut self, other: &SchedulerResources) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.allowed_pods += other.allowed_pods;
        for (name, value) in &other.scalar {
            *self.scalar.entry(name.clone()).or_insert(0) += value;
        }
    }

    /// The amount of a named resource (cpu in millicores); 0 when absent, as upstream reads a
    /// scalar the node does not advertise.
    pub fn get(&self, name: &str) -> i128 {
        match name {
            CPU => self.milli_cpu,
            MEMORY => self.memory,
            PODS => self.allowed_pods,
            EPHEMERAL_STORAGE => self.ephemeral_storage,
            other => self.scalar.get(other).copied().unwrap_or(0),
        }
    }
}

/// A pod's requests in the scheduler's representation.
///
/// ```
/// use k8s_openapi::api::core::v1::PodSpec;
/// use lab_runner_k8s::resources::pod_scheduler_requests;
/// assert_eq!(pod_scheduler_requests(&PodSpec::default()).unwrap().milli_cpu, 0);
/// ```
pub fn pod_scheduler_requests(spec: &PodSpec) -> Result<SchedulerResources> {
    let mut resources = SchedulerResources::default();
    resources.add(&pod_requests(spec)?);
    Ok(resources)
}

/// A node's `status.allocatable` in the scheduler's representation; a resource the node does
/// not advertise is 0.
///
/// ```
/// use k8s_openapi::api::core::v1::Node;
/// use lab_runner_k8s::resources::node_allocatable;
/// assert_eq!(node_allocatable(&Node::default()).unwrap().get("nvidia.com/gpu"), 0);
/// ```
pub fn node_allocatable(node: &Node) -> Result<SchedulerResources> {
    let mut resources = SchedulerResources::default();
    if let Some(allocatable) = node.status.as_ref().and_then(|status| status.allocatable.as_ref()) {
        let place = || format!("node {} allocatable", node.metadata.name.as_deref().unwrap_or(""));
        resources.add(&parse_list_at(allocatable, place)?);
    }
    Ok(resources)
}

/// The lifecycle phase of a pod as far as resource accounting cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PodPhaseClass {
    /// Pending, Running or Unknown (or no phase yet): holds its resources.
    Active,
    /// Succeeded or Failed: holds nothing.
    Terminal,
}

/// Classifies a pod by `status.phase`. The scheduler's pod informer lists with
/// `status.phase!=Succeeded,status.phase!=Failed` (`pkg/scheduler/scheduler.go`), so terminal
/// pods never count on a node; terminating (deletionTimestamp set) pods still do.
///
/// ```
/// use k8s_openapi::api::core::v1::{Pod, PodStatus};
/// use lab_runner_k8s::resources::{pod_phase_class, PodPhaseClass};
/// let done = Pod { status: Some(PodStatus { phase: Some("Succeeded".into()), ..Default::default() }),
///                  ..Default::default() };
/// assert_eq!(pod_phase_class(&done), PodPhaseClass::Terminal);
/// ```
pub fn pod_phase_class(pod: &Pod) -> PodPhaseClass {
    match pod.status.as_ref().and_then(|status| status.phase.as_deref()) {
        Some("Succeeded" | "Failed") => PodPhaseClass::Terminal,
        _ => PodPhaseClass::Active,
    }
}

/// What the pods already on a node hold (`NodeInfo.Requested` and `len(NodeInfo.Pods)`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeUsage {
    /// Sum of the counted pods' requests.
    pub requested: SchedulerResources,
    /// How many pods are counted.
    pub pod_count: i128,
}

/// Sums the non-terminal pods among `pods` (the caller passes the pods bound to — or assumed
/// on — one node).
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use lab_runner_k8s::resources::node_usage;
/// let usage = node_usage([&Pod::default()]).unwrap();
/// assert_eq!(usage.pod_count, 1);
/// ```
pub fn node_usage<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> Result<NodeUsage> {
    let mut usage = NodeUsage::default();
    for pod in pods {
        if pod_phase_class(pod) == PodPhaseClass::Terminal {
            continue;
        }
        if let Some(spec) = &pod.spec {
            usage.requested.add_resources(&pod_scheduler_requests(spec)?);
        }
        usage.pod_count += 1;
    }
    Ok(usage)
}

/// One reason NodeResourcesFit rejects a node; `Display` is upstream's reason text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Insufficiency {
    /// `Too many pods`: the node's pod capacity is used up.
    TooManyPods,
    /// `Insufficient <resource>`.
    Insufficient(String),
}

impl fmt::Display for Insufficiency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Insufficiency::TooManyPods => f.write_str("Too many pods"),
            Insufficiency::Insufficient(resource) => write!(f, "Insufficient {resource}"),
        }
    }
}

/// NodeResourcesFit's `fitsRequest`: every insufficiency, in upstream's order — pods, cpu,
/// memory, ephemeral-storage, then scalar resources (upstream iterates a Go map, so the order
/// among scalars is random there; here it is by name). A resource is short when the request is
/// non-zero and exceeds `allocatable - requested`; a node that does not advertise an extended
/// resource has 0 of it. A pod requesting nothing is only checked for the pod count.
///
/// ```
/// use lab_runner_k8s::resources::{fits_request, Insufficiency, NodeUsage, SchedulerResources};
/// let mut want = SchedulerResources::default();
/// want.scalar.insert("nvidia.com/gpu".into(), 1);
/// let node = SchedulerResources { allowed_pods: 110, ..Default::default() };
/// let reasons = fits_request(&want, &node, &NodeUsage::default());
/// assert_eq!(reasons, vec![Insufficiency::Insufficient("nvidia.com/gpu".into())]);
/// assert_eq!(reasons[0].to_string(), "Insufficient nvidia.com/gpu");
/// ```
pub fn fits_request(
    request: &SchedulerResources,
    allocatable: &SchedulerResources,
    usage: &NodeUsage,
) -> Vec<Insufficiency> {
    let mut reasons = Vec::new();
    if usage.pod_count + 1 > allocatable.allowed_pods {
        reasons.push(Insufficiency::TooManyPods);
    }
    if request.milli_cpu == 0
        && request.memory == 0
        && request.ephemeral_storage == 0
        && request.scalar.is_empty()
    {
        return reasons;
    }
    let short =
        |name: &str, wanted: i128| wanted > 0 && wanted > allocatable.get(name) - usage.requested.get(name);
    for name in [CPU, MEMORY, EPHEMERAL_STORAGE] {
        if short(name, request.get(name)) {
            reasons.push(Insufficiency::Insufficient(name.to_string()));
        }
    }
    for (name, wanted) in &request.scalar {
        if short(name, *wanted) {
            reasons.push(Insufficiency::Insufficient(name.clone()));
        }
    }
    reasons
}

/// Whether `node` advertises and can hold what `pod` asks for beside `others` (the other pods
/// bound to it; `pod` itself must not be among them): every insufficiency, empty when it fits.
/// This is the resource part of the kubelet's admission of a pod bound to its node
/// (`pkg/kubelet/lifecycle/predicate.go` `PredicateAdmitHandler.Admit` → `noderesources.Fits`),
/// which a pod bound by hand past the scheduler meets too.
///
/// ```
/// use k8s_openapi::api::core::v1::{Node, Pod};
/// use lab_runner_k8s::resources::node_holds;
/// let pod: Pod = serde_json::from_value(serde_json::json!({"spec": {"containers": [
///     {"name": "c", "resources": {"limits": {"nvidia.com/mig-1g.5gb": "1"}}}]}})).unwrap();
/// let node: Node = serde_json::from_value(serde_json::json!({"status": {"allocatable": {"pods": "110"}}})).unwrap();
/// let reasons = node_holds(&pod, &node, []).unwrap();
/// assert_eq!(reasons[0].to_string(), "Insufficient nvidia.com/mig-1g.5gb");
/// ```
pub fn node_holds<'a>(
    pod: &Pod,
    node: &Node,
    others: impl IntoIterator<Item = &'a Pod>,
) -> Result<Vec<Insufficiency>> {
    let request = match &pod.spec {
        Some(spec) => pod_scheduler_requests(spec)?,
        None => SchedulerResources::default(),
    };
    Ok(fits_request(&request, &node_allocatable(node)?, &node_usage(others)?))
}

/// `ComputePodQOS` (`pkg/apis/core/helper/qos/qos.go`) over a pod spec as JSON: only cpu and
/// memory count, and only positive quantities, summed over containers and init containers;
/// BestEffort when none is set, Guaranteed when every container limits both and the summed
/// requests equal the summed limits, Burstable otherwise. A request left out defaults to its
/// limit first (`SetDefaults_Pod` runs before the QoS class is computed).
pub fn qos_class(spec: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    fn positive(list: &Value) -> BTreeMap<&str, Quantity> {
        list.as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| matches!(name.as_str(), "cpu" | "memory"))
            .filter_map(|(name, value)| Some((name.as_str(), Quantity::from_json(value).ok()?)))
            .filter(|(_, quantity)| *quantity > Quantity::ZERO)
            .collect()
    }
    fn add<'a>(total: &mut BTreeMap<&'a str, Quantity>, name: &'a str, quantity: Quantity) {
        let sum = total.get(name).map_or(Some(quantity), |t| t.checked_add(quantity));
        total.insert(name, sum.unwrap_or(quantity));
    }
    let (mut requests, mut limits) = (BTreeMap::new(), BTreeMap::new());
    let mut guaranteed = true;
    let containers =
        ["containers", "initContainers"].into_iter().filter_map(|list| spec[list].as_array()).flatten();
    for container in containers {
        let resources = &container["resources"];
        let limited = positive(&resources["limits"]);
        let mut requested = positive(&resources["requests"]);
        for (name, limit) in &limited {
            if resources["requests"].get(*name).is_none() {
                requested.insert(name, *limit);
            }
        }
        if !(limited.contains_key("cpu") && limited.contains_key("memory")) {
            guaranteed = false;
        }
        for (name, quantity) in requested {
            add(&mut requests, name, quantity);
        }
        for (name, quantity) in limited {
            add(&mut limits, name, quantity);
        }
    }
    if requests.is_empty() && limits.is_empty() {
        "BestEffort"
    } else if guaranteed
        && requests.len() == limits.len()
        && requests.iter().all(|(n, r)| limits.get(n) == Some(r))
    {
        "Guaranteed"
    } else {
        "Burstable"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{node, pod};
    use k8s_openapi::api::core::v1::ResourceRequirements;

    #[test]
    fn qos_classes_are_compute_pod_qos() {
        use serde_json::json;
        let cases = [
            (json!({"containers": [{"name": "a"}]}), "BestEffort"),
            (json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}]}), "Guaranteed"),
            (json!({"containers": [{"resources": {"requests": {"cpu": "1"}}}]}), "Burstable"),
            // Quantities compare by value, not spelling; zeros and other resources do not count.
            (
                json!({"containers": [{"resources": {"requests": {"cpu": "1000m", "memory": "1Gi"},
                    "limits": {"cpu": 1, "memory": "1024Mi", "nvidia.com/gpu": "1"}}}]}),
                "Guaranteed",
            ),
            (
                json!({"containers": [{"resources": {"requests": {"cpu": "0"}, "limits": {"nvidia.com/gpu": "1"}}}]}),
                "BestEffort",
            ),
            (
                json!({"containers": [{"resources": {"limits": {"cpu": "1", "memory": "1Gi"}}}],
                    "initContainers": [{"resources": {"requests": {"cpu": "1"}}}]}),
                "Burstable",
            ),
        ];
        for (spec, expected) in cases {
            assert_eq!(qos_class(&spec), expected, "{spec}");
        }
    }

    fn list(pairs: &[(&str, &str)]) -> BTreeMap<String, ApiQuantity> {
        pairs.iter().map(|(k, v)| (k.to_string(), ApiQuantity(v.to_string()))).collect()
    }

    fn container(name: &str, requests: &[(&str, &str)], limits: &[(&str, &str)]) -> Container {
        Container {
            name: name.into(),
            resources: Some(ResourceRequirements {
                requests: if requests.is_empty() { None } else { Some(list(requests)) },
                limits: if limits.is_empty() { None } else { Some(list(limits)) },
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    fn sidecar(name: &str, requests: &[(&str, &str)]) -> Container {
        Container { restart_policy: Some("Always".into()), ..container(name, requests, &[]) }
    }

    fn q(text: &str) -> Quantity {
        text.parse().unwrap()
    }

    #[test]
    fn containers_are_summed_and_limits_default_requests() {
        let spec = PodSpec {
            containers: vec![
                container("a", &[("cpu", "500m")], &[("nvidia.com/gpu", "1")]),
                container("b", &[("cpu", "250m"), ("memory", "1Gi")], &[("memory", "2Gi")]),
            ],
            ..Default::default()
        };
        let requests = pod_requests(&spec).unwrap();
        assert_eq!(requests["cpu"], q("750m"));
        assert_eq!(requests["memory"], q("1Gi"));
        assert_eq!(requests["nvidia.com/gpu"], q("1"));
    }

    #[test]
    fn init_containers_take_the_max() {
        let spec = PodSpec {
            containers: vec![container("main", &[("cpu", "1")], &[])],
            init_containers: Some(vec![
                container("init-big", &[("cpu", "2"), ("memory", "64Mi")], &[]),
                container("init-small", &[("cpu", "100m")], &[]),
            ]),
            ..Default::default()
        };
        let requests = pod_requests(&spec).unwrap();
        assert_eq!(requests["cpu"], q("2"));
        assert_eq!(requests["memory"], q("64Mi"));
    }

    #[test]
    fn sidecars_add_to_the_sum_and_to_later_init_steps() {
        // KEP-753 example shape: sidecar 1 cpu, then a regular init 2 cpu, main 3 cpu.
        // Init step 2 needs 2 + 1 = 3; the pod needs max(3 + 1, 3) = 4.
        let spec = PodSpec {
            containers: vec![container("main", &[("cpu", "3")], &[])],
            init_containers: Some(vec![
                sidecar("proxy", &[("cpu", "1")]),
                container("migrate", &[("cpu", "2")], &[]),
            ]),
            ..Default::default()
        };
        assert_eq!(pod_requests(&spec).unwrap()["cpu"], q("4"));
        // A regular init container before the sidecar does not carry the sidecar's request.
        let spec = PodSpec {
            containers: vec![container("main", &[("cpu", "1")], &[])],
            init_containers: Some(vec![
                container("first", &[("cpu", "5")], &[]),
                sidecar("proxy", &[("cpu", "1")]),
            ]),
            ..Default::default()
        };
        assert_eq!(pod_requests(&spec).unwrap()["cpu"], q("5"));
        // An init container after the sidecar needs its own request plus the sidecar's.
        let spec = PodSpec {
            containers: vec![container("main", &[("cpu", "1")], &[])],
            init_containers: Some(vec![
                sidecar("proxy", &[("cpu", "1")]),
                container("last", &[("cpu", "5")], &[]),
            ]),
            ..Default::default()
        };
        assert_eq!(pod_requests(&spec).unwrap()["cpu"], q("6"));
    }

    #[test]
    fn overhead_is_added() {
        let spec = PodSpec {
            containers: vec![container("main", &[("cpu", "1")], &[])],
            overhead: Some(list(&[("cpu", "250m"), ("memory", "120Mi")])),
            ..Default::default()
        };
        let requests = pod_requests(&spec).unwrap();
        assert_eq!(requests["cpu"], q("1250m"));
        assert_eq!(requests["memory"], q("120Mi"));
    }

    #[test]
    fn bad_quantity_is_an_error_naming_the_place() {
        let spec =
            PodSpec { containers: vec![container("cuda", &[("cpu", "lots")], &[])], ..Default::default() };
        let error = pod_requests(&spec).unwrap_err();
        assert!(
            error.to_string().starts_with("container \"cuda\" requests: resource cpu: quantities must match")
        );
    }

    #[test]
    fn scheduler_units_round_up() {
        let mut r = SchedulerResources::default();
        r.add(&BTreeMap::from([
            ("cpu".to_string(), q("0.0001")),
            ("memory".to_string(), q("1.5")),
            ("nvidia.com/gpu".to_string(), q("2")),
            ("hugepages-2Mi".to_string(), q("4Mi")),
            ("example.com/foo".to_string(), q("1")),
            ("unknown".to_string(), q("7")),
        ]));
        assert_eq!(r.milli_cpu, 1);
        assert_eq!(r.memory, 2);
        assert_eq!(r.get("nvidia.com/gpu"), 2);
        assert_eq!(r.get("hugepages-2Mi"), 4 * 1024 * 1024);
        assert_eq!(r.get("example.com/foo"), 1);
        assert!(!r.scalar.contains_key("unknown"));
    }

    #[test]
    fn resource_name_classes() {
        for extended in
            ["nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb"]
        {
            assert!(is_extended_resource_name(extended), "{extended}");
            assert!(is_scalar_resource_name(extended), "{extended}");
        }
        for not_extended in ["cpu", "memory", "kubernetes.io/foo", "requests.nvidia.com/gpu"] {
            assert!(!is_extended_resource_name(not_extended), "{not_extended}");
        }
        assert!(is_scalar_resource_name("hugepages-1Gi"));
        assert!(is_scalar_resource_name("attachable-volumes-csi-x"));
        assert!(!is_scalar_resource_name("cpu"));
    }

    #[test]
    fn usage_counts_non_terminal_pods_only() {
        let gpu = || vec![container("c", &[], &[("nvidia.com/gpu", "1")])];
        let pods = [
            pod("p").phase("Running").containers(gpu()).build(),
            pod("p").phase("Pending").containers(gpu()).build(),
            pod("p").phase(None).containers(gpu()).build(),
            pod("p").phase("Succeeded").containers(gpu()).build(),
            pod("p").phase("Failed").containers(gpu()).build(),
        ];
        let usage = node_usage(&pods).unwrap();
        assert_eq!(usage.pod_count, 3);
        assert_eq!(usage.requested.get("nvidia.com/gpu"), 3);
    }

    #[test]
    fn fit_reasons_in_upstream_order() {
        let node = node_allocatable(
            &node("n")
                .allocatable("cpu", "2")
                .allocatable("memory", "4Gi")
                .allocatable("ephemeral-storage", "10Gi")
                .allocatable("pods", "2")
                .allocatable("nvidia.com/gpu", "1")
                .build(),
        )
        .unwrap();
        let usage = node_usage(&[
            pod("p")
                .phase("Running")
                .containers(vec![container(
                    "a",
                    &[("cpu", "1500m"), ("memory", "3Gi")],
                    &[("nvidia.com/gpu", "1")],
                )])
                .build(),
            pod("p").phase("Running").containers(vec![container("b", &[], &[])]).build(),
        ])
        .unwrap();
        let want = pod_scheduler_requests(&PodSpec {
            containers: vec![container(
                "x",
                &[("cpu", "1"), ("memory", "2Gi"), ("ephemeral-storage", "11Gi")],
                &[("nvidia.com/gpu", "1"), ("nvidia.com/mig-1g.10gb", "1")],
            )],
            ..Default::default()
        })
        .unwrap();
        let reasons: Vec<String> =
            fits_request(&want, &node, &usage).iter().map(ToString::to_string).collect();
        assert_eq!(
            reasons,
            [
                "Too many pods",
                "Insufficient cpu",
                "Insufficient memory",
                "Insufficient ephemeral-storage",
                "Insufficient nvidia.com/gpu",
                "Insufficient nvidia.com/mig-1g.10gb",
            ]
        );
    }

    #[test]
    fn exact_fit_passes_and_zero_request_skips_resources() {
        let node = node_allocatable(
            &node("n")
                .allocatable("cpu", "1")
                .allocatable("pods", "110")
                .allocatable("nvidia.com/gpu", "2")
                .build(),
        )
        .unwrap();
        let usage = node_usage(&[pod("p")
            .phase("Running")
            .containers(vec![container("a", &[("cpu", "1")], &[("nvidia.com/gpu", "1")])])
            .build()])
        .unwrap();
        let one_gpu = pod_scheduler_requests(&PodSpec {
            containers: vec![container("x", &[], &[("nvidia.com/gpu", "1")])],
            ..Default::default()
        })
        .unwrap();
        assert!(fits_request(&one_gpu, &node, &usage).is_empty());
        // The node's CPU is fully requested, but a pod requesting nothing still fits.
        let nothing = SchedulerResources::default();
        assert!(fits_request(&nothing, &node, &usage).is_empty());
        // …and a zero request of an extended resource is skipped.
        let mut zero_gpu = SchedulerResources::default();
        zero_gpu.scalar.insert("nvidia.com/gpu".into(), 0);
        zero_gpu.scalar.insert("nvidia.com/mig-1g.10gb".into(), 0);
        assert!(fits_request(&zero_gpu, &node, &usage).is_empty());
    }

    #[test]
    fn literal_reason_texts_from_upstream() {
        // noderesources/fit.go `fitsRequest`'s reasons, copied as literals.
        assert_eq!(Insufficiency::TooManyPods.to_string(), "Too many pods");
        assert_eq!(Insufficiency::Insufficient("cpu".into()).to_string(), "Insufficient cpu");
        assert_eq!(
            Insufficiency::Insufficient("nvidia.com/gpu".into()).to_string(),
            "Insufficient nvidia.com/gpu"
        );
    }
}
