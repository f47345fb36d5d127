//! Kubelet admission on a simulated node: the device manager's allocation, then the resource fit
//! of `PredicateAdmitHandler`, each with upstream's reason and message.
//!
//! Upstream (v1.33): the kubelet runs the container manager's resource allocator before the
//! predicate handler (`NewMainKubelet`, pkg/kubelet/kubelet.go). The allocator asks the device
//! manager for every container's devices (`devicesToAllocate`, pkg/kubelet/cm/devicemanager/
//! manager.go) and wraps a failure as `UnexpectedAdmissionError` (`GetPodAdmitResult`,
//! pkg/kubelet/cm/admission/errors.go). `predicateAdmitHandler.Admit` (pkg/kubelet/lifecycle/
//! predicate.go) drops the requests of extended resources the node does not advertise
//! (`removeMissingExtendedResources`), runs `generalFilter` (`noderesources.Fits` first) and
//! reports the first failure as `OutOf<resource>` with `InsufficientResourceError.Error()`.

use k8s_openapi::api::core::v1::{Container, Pod};

use crate::k8s::resources::{
    self, Insufficiency, NodeUsage, SchedulerResources, container_requests, fits_request,
    is_extended_resource_name, pod_scheduler_requests,
};

/// Why the kubelet refuses a pod: the pod's `status.reason` and the text after `Pod was rejected: `.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Rejection {
    /// `UnexpectedAdmissionError`, `OutOfcpu`, `OutOfmemory`, `OutOfpods`, `OutOf<resource>`.
    pub reason: String,
    /// Upstream's message.
    pub message: String,
}

/// The device plugin resources of the simulated node: the only device plugin a simulated node
/// runs is NVIDIA's, so a `nvidia.com/` resource the node advertises is one its device manager
/// registered (`isDevicePluginResource`); any other extended resource is only checked by the fit.
fn is_device_plugin_resource(name: &str, allocatable: &SchedulerResources) -> bool {
    name.starts_with("nvidia.com/") && allocatable.scalar.contains_key(name)
}

/// The device manager's `Allocate` for each container, init containers first: a container asking
/// for more devices of a registered resource than are free fails the pod with `requested number of
/// devices unavailable for <resource>. Requested: <n>, Available: <m>`. Init containers run one at
/// a time before the app containers, so their devices are free again for the next one.
pub(super) fn allocate_devices(
    pod: &Pod,
    allocatable: &SchedulerResources,
    in_use: &SchedulerResources,
) -> Option<Rejection> {
    let spec = pod.spec.as_ref()?;
    let mut taken = in_use.clone();
    let init = spec.init_containers.iter().flatten().map(|c| (c, false));
    for (container, keeps) in init.chain(spec.containers.iter().map(|c| (c, true))) {
        let wanted = device_requests(container, allocatable);
        for (name, needed) in &wanted {
            let available = (allocatable.get(name) - taken.get(name)).max(0);
            if *needed > available {
                let error = format!(
                    "requested number of devices unavailable for {name}. Requested: {needed}, Available: {available}"
                );
                return Some(Rejection {
                    reason: "UnexpectedAdmissionError".into(),
                    message: format!("Allocate failed due to {error}, which is unexpected"),
                });
            }
        }
        if keeps {
            for (name, needed) in wanted {
                *taken.scalar.entry(name).or_insert(0) += needed;
            }
        }
    }
    None
}

fn device_requests(container: &Container, allocatable: &SchedulerResources) -> Vec<(String, i128)> {
    let Ok(requests) = container_requests(container) else { return Vec::new() };
    requests
        .into_iter()
        .filter(|(name, _)| is_device_plugin_resource(name, allocatable))
        .map(|(name, quantity)| (name, quantity.units_ceil()))
        .filter(|(_, needed)| *needed > 0)
        .collect()
}

/// `predicateAdmitHandler.Admit`'s resource fit: the first insufficiency among pods, cpu, memory,
/// ephemeral-storage and the extended resources the node advertises, as
/// `OutOf<resource>` / `Node didn't have enough resource: <resource>, requested: <r>, used: <u>,
/// capacity: <allocatable>` (cpu in millicores, memory in bytes).
pub(super) fn fit(pod: &Pod, allocatable: &SchedulerResources, usage: &NodeUsage) -> Option<Rejection> {
    let spec = pod.spec.as_ref()?;
    let mut request = pod_scheduler_requests(spec).ok()?;
    // removeMissingExtendedResources: cluster-level extended resources unknown to the node.
    request
        .scalar
        .retain(|name, _| !is_extended_resource_name(name) || allocatable.scalar.contains_key(name));
    let first = fits_request(&request, allocatable, usage).into_iter().next()?;
    let (name, requested, used) = match &first {
        Insufficiency::TooManyPods => (resources::PODS.to_string(), 1, usage.pod_count),
        Insufficiency::Insufficient(name) => (name.clone(), request.get(name), usage.requested.get(name)),
    };
    let capacity = allocatable.get(&name);
    Some(Rejection {
        reason: format!("OutOf{name}"),
        message: format!(
            "Node didn't have enough resource: {name}, requested: {requested}, used: {used}, capacity: {capacity}"
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::k8s::testing::pod;

    fn capacity(cpu: i128, memory: i128, pods: i128) -> SchedulerResources {
        SchedulerResources { milli_cpu: cpu, memory, allowed_pods: pods, ..Default::default() }
    }

    #[test]
    fn the_first_short_resource_names_the_reason_with_upstreams_figures() {
        let big = pod("p").request("cpu", "3").request("memory", "1Gi").build();
        let usage = NodeUsage { requested: capacity(1500, 0, 0), pod_count: 1 };
        let rejection = fit(&big, &capacity(4000, 8 << 30, 110), &usage).unwrap();
        assert_eq!(rejection.reason, "OutOfcpu");
        assert_eq!(
            rejection.message,
            "Node didn't have enough resource: cpu, requested: 3000, used: 1500, capacity: 4000"
        );
        let memory = pod("p").request("memory", "2Gi").build();
        let rejection = fit(&memory, &capacity(4000, 1 << 30, 110), &NodeUsage::default()).unwrap();
        assert_eq!(rejection.reason, "OutOfmemory");
        assert_eq!(
            rejection.message,
            "Node didn't have enough resource: memory, requested: 2147483648, used: 0, capacity: 1073741824"
        );
        let full = NodeUsage { requested: SchedulerResources::default(), pod_count: 2 };
        let rejection = fit(&pod("p").build(), &capacity(4000, 1 << 30, 2), &full).unwrap();
        assert_eq!(rejection.reason, "OutOfpods");
        assert_eq!(
            rejection.message,
            "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2"
        );
        assert_eq!(fit(&memory, &capacity(4000, 4 << 30, 110), &NodeUsage::default()), None);
    }

    #[test]
    fn an_extended_resource_the_node_does_not_advertise_is_left_to_the_cluster() {
        let dongle = pod("p").limit("example.com/dongle", "1").build();
        assert_eq!(fit(&dongle, &capacity(4000, 1 << 30, 110), &NodeUsage::default()), None);
        let mut advertised = capacity(4000, 1 << 30, 110);
        advertised.scalar.insert("example.com/dongle".into(), 0);
        let rejection = fit(&dongle, &advertised, &NodeUsage::default()).unwrap();
        assert_eq!(rejection.reason, "OutOfexample.com/dongle");
    }

    #[test]
    fn the_device_manager_refuses_more_gpus_than_are_free() {
        let mut gpus = capacity(4000, 1 << 30, 110);
        gpus.scalar.insert("nvidia.com/gpu".into(), 2);
        let mut in_use = SchedulerResources::default();
        in_use.scalar.insert("nvidia.com/gpu".into(), 1);
        let two = pod("p").gpus("2").build();
        let rejection = allocate_devices(&two, &gpus, &in_use).unwrap();
        assert_eq!(rejection.reason, "UnexpectedAdmissionError");
        assert_eq!(
            rejection.message,
            "Allocate failed due to requested number of devices unavailable for nvidia.com/gpu. Requested: 2, Available: 1, which is unexpected"
        );
        assert_eq!(allocate_devices(&two, &gpus, &SchedulerResources::default()), None);
    }
}
