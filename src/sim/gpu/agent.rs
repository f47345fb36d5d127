//! The NVIDIA components as the simulated kubelet runs them: it recognises their pods by image
//! and container names, reads their spec (ConfigMap volume, env) and writes what the real
//! containers write — node capacity/allocatable (device plugin), node labels (GFD, MIG manager).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::{
    api::core::v1::{Container, Pod},
    jiff::Timestamp,
};
use serde_json::{Value, json};

use super::{
    advertise::{self, PluginState},
    config::{Binary, PluginEnv, Renaming, SharingStrategy},
    gfd,
    hardware::{MigGeometry, NodeGpus},
    mig::{MIG_CONFIG_LABEL, MigManager, MigManagerPhase},
    plugin::{CONFIG_LABEL, ConfigManagerEnv, DevicePluginPod},
};
use crate::sim::{
    resources::ResourceType,
    store::{self, DryRun, Store, Stored, Subresource},
    topology::Topology,
};

/// Errors writing what the components publish.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A node write failed.
    #[error("writing node {node}: {source}")]
    Store {
        /// The node.
        node: String,
        /// The store error.
        source: Box<store::Error>,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The device-plugin / GFD image (gpu-domain.md §7: GFD ships in the same image).
pub const DEVICE_PLUGIN_IMAGE: &str = "nvcr.io/nvidia/k8s-device-plugin";
/// The MIG manager image.
pub const MIG_MANAGER_IMAGE: &str = "nvcr.io/nvidia/cloud-native/k8s-mig-manager";
/// The container toolkit image (recognised; it publishes nothing through the API).
pub const TOOLKIT_IMAGE: &str = "nvcr.io/nvidia/k8s/container-toolkit";

/// Each GPU node's hardware and the MIG geometry it boots with, by node name.
pub type GpuHardware = BTreeMap<String, (NodeGpus, MigGeometry)>;

/// The GPU hardware of a topology's nodes (nodes whose `gpu:` block does not validate are skipped;
/// `Topology::parse` already rejects them).
pub fn hardware_of(topology: &Topology) -> GpuHardware {
    topology
        .nodes
        .iter()
        .filter_map(|node| Some((node.name.clone(), node.gpu.as_ref()?.hardware().ok()?)))
        .collect()
}

/// What an NVIDIA container is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Component {
    DevicePlugin,
    FeatureDiscovery,
    MigManager,
}

fn repository(image: &str) -> &str {
    let image = image.split('@').next().unwrap_or(image);
    match image.rfind(':') {
        Some(colon) if !image[colon..].contains('/') => &image[..colon],
        _ => image,
    }
}

fn is_config_manager(container: &Container) -> bool {
    let name = container.name.as_str();
    name.ends_with("-init") || name.ends_with("-sidecar") || name.starts_with("config-manager")
}

/// The pod's NVIDIA component and its main container.
fn classify(pod: &Pod) -> Option<(Component, Container)> {
    let spec = pod.spec.as_ref()?;
    for container in &spec.containers {
        let repo = repository(container.image.as_deref().unwrap_or_default());
        if repo == MIG_MANAGER_IMAGE {
            return Some((Component::MigManager, container.clone()));
        }
        if repo == DEVICE_PLUGIN_IMAGE && !is_config_manager(container) {
            // GFD runs the same image with the `gpu-feature-discovery` command (chart and operator).
            let words = container.command.iter().chain(container.args.iter()).flatten();
            let gfd = container.name.contains("gpu-feature-discovery")
                || words.clone().any(|w| w.contains("gpu-feature-discovery"));
            let component = if gfd { Component::FeatureDiscovery } else { Component::DevicePlugin };
            return Some((component, container.clone()));
        }
    }
    None
}

fn env_of(container: &Container, name: &str) -> Option<String> {
    container.env.as_ref()?.iter().find(|e| e.name == name).and_then(|e| e.value.clone())
}

/// The config-manager settings and the ConfigMap it reads, from its init or sidecar container.
fn config_manager(pod: &Pod) -> Option<(ConfigManagerEnv, Option<String>)> {
    let spec = pod.spec.as_ref()?;
    let manager = spec.init_containers.iter().flatten().chain(spec.containers.iter()).find(|c| {
        is_config_manager(c) && repository(c.image.as_deref().unwrap_or_default()) == DEVICE_PLUGIN_IMAGE
    })?;
    let env = ConfigManagerEnv::from_env(
        env_of(manager, "DEFAULT_CONFIG").as_deref(),
        env_of(manager, "FALLBACK_STRATEGIES").as_deref(),
    );
    let srcdir = env_of(manager, "CONFIG_FILE_SRCDIR").unwrap_or_else(|| "/available-configs".to_string());
    let mounted = manager
        .volume_mounts
        .iter()
        .flatten()
        .find(|m| m.mount_path.trim_end_matches('/') == srcdir.trim_end_matches('/'))
        .map(|m| m.name.clone());
    let configmap = mounted.and_then(|volume| {
        spec.volumes.iter().flatten().find(|v| v.name == volume)?.config_map.as_ref().map(|c| c.name.clone())
    });
    Some((env, configmap))
}

/// Without config-manager: the ConfigMap file `CONFIG_FILE` points into, if any (key → file).
fn static_config(
    pod: &Pod,
    container: &Container,
    store: &Store,
    namespace: &str,
) -> BTreeMap<String, String> {
    let Some(file) = env_of(container, "CONFIG_FILE") else { return BTreeMap::new() };
    let spec = pod.spec.as_ref();
    for mount in container.volume_mounts.iter().flatten() {
        let Some(key) = file.strip_prefix(&format!("{}/", mount.mount_path.trim_end_matches('/'))) else {
            continue;
        };
        let volume = spec.and_then(|s| s.volumes.iter().flatten().find(|v| v.name == mount.name));
        if let Some(name) = volume.and_then(|v| v.config_map.as_ref()).map(|c| c.name.clone())
            && let Some(text) = configmap_data(store, namespace, &name).remove(key)
        {
            return BTreeMap::from([(key.to_string(), text)]);
        }
    }
    BTreeMap::new()
}

fn configmap_data(store: &Store, namespace: &str, name: &str) -> BTreeMap<String, String> {
    store
        .get("configmaps", namespace, name)
        .and_then(|stored| serde_json::from_str::<Value>(&stored.json).ok())
        .and_then(|value| serde_json::from_value(value["data"].clone()).ok())
        .unwrap_or_default()
}

#[derive(Debug, Clone)]
struct Agent {
    node: String,
    component: Component,
    label: String,
    pod: DevicePluginPod,
    /// Container names by the role their log is kept under (`init`, `sidecar`, `plugin`).
    containers: BTreeMap<&'static str, String>,
}

/// The pod's container names by log role: config-manager init and sidecar, and the main one.
fn container_roles(pod: &Pod, main: &Container) -> BTreeMap<&'static str, String> {
    let mut roles = BTreeMap::from([("plugin", main.name.clone())]);
    if let Some(spec) = pod.spec.as_ref() {
        if let Some(init) = spec.init_containers.iter().flatten().find(|c| is_config_manager(c)) {
            roles.insert("init", init.name.clone());
        }
        if let Some(sidecar) = spec.containers.iter().find(|c| is_config_manager(c)) {
            roles.insert("sidecar", sidecar.name.clone());
        }
    }
    roles
}

/// The running NVIDIA components of every node.
#[derive(Debug, Default)]
pub struct GpuAgents {
    /// Device plugin and GFD pods by pod uid.
    agents: HashMap<String, Agent>,
    /// MIG managers (and the geometry they left) by node.
    mig: BTreeMap<String, MigManager>,
    /// The `nvidia.com/mig.config` value each node's manager last reacted to.
    mig_seen: BTreeMap<String, Option<String>>,
    /// Label keys GFD wrote per node (removed when GFD stops writing them).
    gfd_written: BTreeMap<String, BTreeSet<String>>,
    /// The running MIG manager pod of each node: its uid and container name.
    mig_pods: BTreeMap<String, (String, String)>,
}

impl GpuAgents {
    /// Reconciles every GPU node with the NVIDIA pods running on it; returns when it next needs
    /// to run (a MIG reconfiguration finishing).
    pub fn sync(
        &mut self,
        store: &Store,
        nodes: &ResourceType,
        hardware: &GpuHardware,
        now: Timestamp,
    ) -> Result<Option<Timestamp>> {
        if hardware.is_empty() {
            return Ok(None);
        }
        let candidates = |stored: &Stored| stored.json.contains("nvcr.io/nvidia/");
        let mut running: BTreeMap<String, Vec<(Component, Pod, Container)>> = BTreeMap::new();
        for stored in store.list("pods", None, &candidates, None, None).items {
            let Ok(pod) = serde_json::from_str::<Pod>(&stored.json) else { continue };
            let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
            let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
            if !hardware.contains_key(&node)
                || phase != Some("Running")
                || pod.metadata.deletion_timestamp.is_some()
            {
                continue;
            }
            if let Some((component, container)) = classify(&pod) {
                running.entry(node).or_default().push((component, pod, container));
            }
        }
        let live: BTreeSet<String> =
            running.values().flatten().filter_map(|(_, pod, _)| pod.metadata.uid.clone()).collect();
        self.agents.retain(|uid, _| live.contains(uid));

        let mut next_wake = None;
        for (node_name, (gpus, boot_geometry)) in hardware {
            let Ok(mut node) = store.get_value(nodes, "", node_name) else { continue };
            let labels: BTreeMap<String, String> =
                serde_json::from_value(node["metadata"]["labels"].clone()).unwrap_or_default();
            let label = labels.get(CONFIG_LABEL).cloned().unwrap_or_default();
            let pods = running.remove(node_name).unwrap_or_default();

            // MIG manager first: the plugin advertises the geometry it leaves.
            let mut label_patch: BTreeMap<String, Option<String>> = BTreeMap::new();
            let manager_pod = pods.iter().find(|(c, _, _)| *c == Component::MigManager);
            match manager_pod {
                Some((_, pod, container)) => {
                    let uid = pod.metadata.uid.clone().unwrap_or_default();
                    self.mig_pods.insert(node_name.clone(), (uid, container.name.clone()));
                }
                None => {
                    self.mig_pods.remove(node_name);
                }
            }
            if manager_pod.is_some() {
                let manager = self
                    .mig
                    .entry(node_name.clone())
                    .or_insert_with(|| MigManager::new(gpus.model, "all-disabled", boot_geometry.clone()));
                let desired = labels.get(MIG_CONFIG_LABEL).cloned();
                if self.mig_seen.get(node_name) != Some(&desired) {
                    self.mig_seen.insert(node_name.clone(), desired);
                    label_patch.extend(manager.on_labels(&labels, now));
                }
                label_patch.extend(manager.tick(now));
                if let MigManagerPhase::Applying { done_at, .. } = &manager.phase {
                    next_wake = Some(next_wake.map_or(*done_at, |t: Timestamp| t.min(*done_at)));
                }
            } else {
                self.mig_seen.remove(node_name);
            }
            let geometry = self.mig.get(node_name).map_or(boot_geometry.clone(), |m| m.geometry.clone());

            for (component, pod, container) in &pods {
                if *component == Component::MigManager {
                    continue;
                }
                let uid = pod.metadata.uid.clone().unwrap_or_default();
                let namespace = pod.metadata.namespace.clone().unwrap_or_default();
                let manager = config_manager(pod);
                let configs = match &manager {
                    Some((_, Some(configmap))) => configmap_data(store, &namespace, configmap),
                    Some((_, None)) => BTreeMap::new(),
                    None => static_config(pod, container, store, &namespace),
                };
                match self.agents.get_mut(&uid) {
                    Some(agent) if agent.label != label => {
                        agent.label = label.clone();
                        agent.pod.on_label_change(&label, &configs);
                    }
                    Some(_) => {}
                    None => {
                        let env = PluginEnv {
                            mig_strategy: env_of(container, "MIG_STRATEGY"),
                            mps_root: env_of(container, "MPS_ROOT"),
                            binary: match component {
                                Component::FeatureDiscovery => Binary::FeatureDiscovery,
                                Component::DevicePlugin | Component::MigManager => Binary::DevicePlugin,
                            },
                        };
                        let plugin =
                            DevicePluginPod::start(manager.map(|(env, _)| env), env, &label, &configs);
                        self.agents.insert(
                            uid,
                            Agent {
                                node: node_name.clone(),
                                component: *component,
                                label: label.clone(),
                                pod: plugin,
                                containers: container_roles(pod, container),
                            },
                        );
                    }
                }
            }
            let serving = |component: Component| {
                self.agents
                    .values()
                    .filter(|a| a.node == *node_name && a.component == component)
                    .find_map(|a| a.pod.serving())
            };

            // Device plugin → capacity and allocatable.
            let state =
                serving(Component::DevicePlugin).map_or(PluginState::NotRunning, PluginState::Serving);
            let advertised = advertise::advertised(gpus, &geometry, state).unwrap_or_default();
            let mut status_changed = false;
            for field in ["capacity", "allocatable"] {
                let previous: BTreeMap<String, String> =
                    serde_json::from_value(node["status"][field].clone()).unwrap_or_default();
                let wanted = advertise::node_resources(&previous, &advertised);
                for (key, value) in wanted {
                    if previous.get(&key) != Some(&value) {
                        node["status"][field][key] = json!(value);
                        status_changed = true;
                    }
                }
            }
            if status_changed {
                node = store
                    .update(nodes, node, Subresource::Status, DryRun::Off)
                    .map_err(|source| Error::Store { node: node_name.clone(), source: Box::new(source) })?;
            }

            // GFD → labels (kept as they are when GFD is not running, as NFD keeps them).
            if let Some(config) = serving(Component::FeatureDiscovery) {
                let mut wanted = gfd::gfd_labels(gpus, &geometry, config, now.as_second());
                let written = self.gfd_written.entry(node_name.clone()).or_default();
                let timestamp = "nvidia.com/gfd.timestamp";
                let same = wanted.iter().all(|(k, v)| k == timestamp || labels.get(k) == Some(v))
                    && written.iter().all(|k| wanted.contains_key(k));
                if same && labels.contains_key(timestamp) {
                    wanted.remove(timestamp);
                }
                for key in written.iter().filter(|k| !wanted.contains_key(*k) && *k != timestamp) {
                    label_patch.insert(key.clone(), None);
                }
                for (key, value) in &wanted {
                    if labels.get(key) != Some(value) {
                        label_patch.insert(key.clone(), Some(value.clone()));
                    }
                }
                // What GFD writes now is what it owns from here on: a key it removed above is
                // no longer its own, or `same` stays false and every sync rewrites the timestamp.
                let owns_timestamp = written.contains(timestamp) || wanted.contains_key(timestamp);
                *written = wanted.into_keys().collect();
                if owns_timestamp {
                    written.insert(timestamp.to_string());
                }
            }
            label_patch.retain(|key, value| labels.get(key) != value.as_ref());
            if !label_patch.is_empty() {
                for (key, value) in label_patch {
                    match value {
                        Some(value) => node["metadata"]["labels"][key] = json!(value),
                        None => {
                            if let Some(map) = node["metadata"]["labels"].as_object_mut() {
                                map.remove(&key);
                            }
                        }
                    }
                }
                store
                    .update(nodes, node, Subresource::Main, DryRun::Off)
                    .map_err(|source| Error::Store { node: node_name.clone(), source: Box::new(source) })?;
            }
        }
        Ok(next_wake)
    }

    /// The kubelet's device-manager admission of `pod` on `node` against the device plugin serving
    /// there: the message of the `UnexpectedAdmissionError` that rejects it, if any.
    ///
    /// The plugin refuses an Allocate of more than one replica of a shared resource under MPS, and
    /// under time-slicing with `failRequestsGreaterThanOne` (internal/rm/rm.go `ValidateRequest`,
    /// wrapped by internal/plugin/server.go `Allocate` as `invalid allocation request for %q: %w`,
    /// v0.17.4); gRPC carries it as `rpc error: code = Unknown desc = …` and the kubelet wraps it
    /// (pkg/kubelet/cm/admission/errors.go `unexpectedAdmissionError`, v1.33).
    pub fn admission_error(&self, node: &str, pod: &Pod) -> Option<String> {
        let config = self
            .agents
            .values()
            .filter(|a| a.node == node && a.component == Component::DevicePlugin)
            .find_map(|a| a.pod.serving())?;
        let sharing = &config.sharing;
        let enforced = match sharing.strategy {
            SharingStrategy::Mps => true,
            SharingStrategy::TimeSlicing => sharing.fail_requests_greater_than_one,
            SharingStrategy::None => false,
        };
        if !enforced {
            return None;
        }
        let spec = pod.spec.as_ref()?;
        let containers = spec.init_containers.iter().flatten().chain(spec.containers.iter());
        for container in containers {
            let limits = container.resources.as_ref().and_then(|r| r.limits.as_ref());
            for (resource, quantity) in limits.into_iter().flatten() {
                let base = match sharing.renaming {
                    Renaming::Shared => resource.strip_suffix(".shared").unwrap_or(resource),
                    Renaming::Keep => resource.as_str(),
                };
                let requested: u64 = quantity.0.parse().unwrap_or(0);
                if sharing.replicas_of(base) > 1 && requested > 1 {
                    return Some(format!(
                        "Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for \"{resource}\": invalid request: maximum request size for shared resources is 1; found {requested}, which is unexpected"
                    ));
                }
            }
        }
        None
    }

    /// What every running NVIDIA container logged: pod uid → container name → lines.
    pub fn container_logs(&self) -> HashMap<String, BTreeMap<String, Vec<String>>> {
        let mut logs: HashMap<String, BTreeMap<String, Vec<String>>> = HashMap::new();
        for (uid, agent) in &self.agents {
            let containers = logs.entry(uid.clone()).or_default();
            for (role, lines) in &agent.pod.logs {
                if let Some(name) = agent.containers.get(role) {
                    containers.insert(name.clone(), lines.clone());
                }
            }
        }
        for (node, (uid, container)) in &self.mig_pods {
            if let Some(manager) = self.mig.get(node) {
                logs.entry(uid.clone()).or_default().insert(container.clone(), manager.log.clone());
            }
        }
        logs
    }

    /// The log lines of a recognised pod's containers (`init`, `sidecar`, `plugin`), by pod uid.
    pub fn logs(&self, pod_uid: &str) -> Option<&BTreeMap<&'static str, Vec<String>>> {
        self.agents.get(pod_uid).map(|agent| &agent.pod.logs)
    }
}

/// The config-manager's outcome for a pod's init or sidecar container, from the store: the node's
/// label and the mounted ConfigMap's keys (the same `select_config` the agents run).
fn config_manager_error(store: &Store, pod: &Pod) -> Option<Option<String>> {
    let (env, configmap) = config_manager(pod)?;
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let node = pod.spec.as_ref()?.node_name.clone()?;
    let label = store
        .get("nodes", "", &node)
        .and_then(|stored| serde_json::from_str::<Value>(&stored.json).ok())
        .and_then(|node| node["metadata"]["labels"][CONFIG_LABEL].as_str().map(str::to_string))
        .unwrap_or_default();
    let keys: Vec<String> = match configmap {
        Some(name) => configmap_data(store, &namespace, &name).into_keys().collect(),
        None => Vec::new(),
    };
    Some(super::plugin::select_config(&label, &keys, &env, &mut Vec::new()).err().map(|e| e.to_string()))
}

/// A stable 64-hex container id for a restarted config-manager container.
fn container_id(pod_uid: &str, container: &str, restarts: u32) -> String {
    let digest =
        ring::digest::digest(&ring::digest::SHA256, format!("{pod_uid}/{container}/{restarts}").as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Restarts after `elapsed` seconds of crash-looping with the kubelet's back-off (10s doubling
/// to 300s, pkg/kubelet/kubelet.go) and the current back-off delay.
fn crash_loop(elapsed: i64) -> (u32, i64) {
    let (mut restarts, mut at, mut delay) = (0u32, 0i64, 10i64);
    while at + delay <= elapsed {
        at += delay;
        restarts += 1;
        delay = (delay * 2).min(300);
    }
    (restarts, delay)
}

/// The kubelet's hook for NVIDIA pods with config-manager containers: an init container that
/// cannot select a config fails (`Init:CrashLoopBackOff`, the pod stays Pending), a sidecar that
/// cannot crash-loops while the pod keeps running (gpu-domain.md §2.3). `status` is the status
/// the kubelet is about to write, `before` the stored one.
pub fn overlay_pod_status(store: &Store, pod: &Pod, before: &Value, status: &mut Value, now: Timestamp) {
    let Some(outcome) = config_manager_error(store, pod) else { return };
    let Some(spec) = pod.spec.as_ref() else { return };
    let init = spec.init_containers.iter().flatten().find(|c| is_config_manager(c));
    let sidecar = spec.containers.iter().find(|c| is_config_manager(c)).map(|c| c.name.clone());
    let name = pod.metadata.name.clone().unwrap_or_default();
    let namespace = pod.metadata.namespace.clone().unwrap_or_default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    let started = status["startTime"].as_str().and_then(|t| t.parse::<Timestamp>().ok()).unwrap_or(now);
    let (restarts, delay) = crash_loop(now.as_second() - started.as_second());
    let crashing = |container: &str, error: &str| {
        json!({
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": format!("back-off {delay}s restarting failed container={container} pod={name}_{namespace}({uid})"),
            },
            "lastState": {"terminated": {
                "exitCode": 1, "reason": "Error", "message": error,
                // Its logs stay readable (`kubectl logs`), as the runtime keeps the exited container.
                "containerID": format!("containerd://{}", container_id(&uid, container, restarts)),
            }},
        })
    };
    let init_done = before["initContainerStatuses"]
        .as_array()
        .is_some_and(|s| s.iter().any(|c| c["state"]["terminated"]["reason"] == "Completed"));
    if let Some(init) = init {
        let image = init.image.clone().unwrap_or_default();
        match (&outcome, init_done) {
            (Some(error), false) => {
                let crash = crashing(&init.name, error);
                status["initContainerStatuses"] = json!([{
                    "name": init.name, "image": image, "imageID": "", "ready": false,
                    "restartCount": restarts, "started": false,
                    "state": {"waiting": crash["waiting"]}, "lastState": crash["lastState"],
                }]);
                let mut unready = Vec::new();
                for container in status["containerStatuses"].as_array_mut().into_iter().flatten() {
                    unready.push(container["name"].as_str().unwrap_or_default().to_string());
                    container["state"] = json!({"waiting": {"reason": "PodInitializing"}});
                    container["ready"] = json!(false);
                    container["started"] = json!(false);
                    container["imageID"] = json!("");
                    if let Some(map) = container.as_object_mut() {
                        map.remove("containerID");
                    }
                }
                status["phase"] = json!("Pending");
                set_condition(
                    status,
                    "Initialized",
                    "ContainersNotInitialized",
                    &format!("containers with incomplete status: [{}]", init.name),
                );
                let message = format!("containers with unready status: [{}]", unready.join(" "));
                set_condition(status, "Ready", "ContainersNotReady", &message);
                set_condition(status, "ContainersReady", "ContainersNotReady", &message);
                return;
            }
            _ => {
                status["initContainerStatuses"] = json!([{
                    "name": init.name, "image": image, "imageID": "", "ready": true,
                    "restartCount": 0, "started": false,
                    "state": {"terminated": {
                        "exitCode": 0, "reason": "Completed",
                        "containerID": format!("containerd://{}", container_id(&uid, &init.name, 0)),
                    }},
                }]);
            }
        }
    }
    if let (Some(error), Some(sidecar)) = (&outcome, sidecar) {
        let crash = crashing(&sidecar, error);
        for container in status["containerStatuses"].as_array_mut().into_iter().flatten() {
            if container["name"] == sidecar.as_str() {
                container["state"] = json!({"waiting": crash["waiting"]});
                container["lastState"] = crash["lastState"].clone();
                container["restartCount"] = json!(restarts);
                container["ready"] = json!(false);
                container["started"] = json!(false);
            }
        }
        let message = format!("containers with unready status: [{sidecar}]");
        set_condition(status, "Ready", "ContainersNotReady", &message);
        set_condition(status, "ContainersReady", "ContainersNotReady", &message);
    }
}

fn set_condition(status: &mut Value, kind: &str, reason: &str, message: &str) {
    for condition in status["conditions"].as_array_mut().into_iter().flatten() {
        if condition["type"] == kind {
            condition["status"] = json!("False");
            condition["reason"] = json!(reason);
            condition["message"] = json!(message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crash_loop_back_off_doubles_to_five_minutes() {
        assert_eq!(crash_loop(0), (0, 10));
        assert_eq!(crash_loop(10), (1, 20));
        assert_eq!(crash_loop(30), (2, 40));
        assert_eq!(crash_loop(10 + 20 + 40 + 80 + 160 + 300), (6, 300));
    }

    #[test]
    fn operator_and_chart_layouts_are_recognised() {
        let pod = |containers: Value, init: Value| -> Pod {
            serde_json::from_value(json!({"spec": {"containers": containers, "initContainers": init}}))
                .unwrap()
        };
        let image = "nvcr.io/nvidia/k8s-device-plugin:v0.17.4";
        // GPU Operator v25.3.4 (assets/state-device-plugin/0500_daemonset.yaml).
        let operator = pod(
            json!([{"name": "nvidia-device-plugin", "image": image, "command": ["/bin/sh", "-c", "/bin/entrypoint.sh"]},
                   {"name": "config-manager", "image": image}]),
            json!([{"name": "toolkit-validation", "image": "nvcr.io/nvidia/cloud-native/gpu-operator-validator:v25.3.4"},
                   {"name": "config-manager-init", "image": image,
                    "env": [{"name": "DEFAULT_CONFIG", "value": "any"}, {"name": "FALLBACK_STRATEGIES", "value": "empty"}]}]),
        );
        let (component, container) = classify(&operator).unwrap();
        assert_eq!((component, container.name.as_str()), (Component::DevicePlugin, "nvidia-device-plugin"));
        let (env, _) = config_manager(&operator).unwrap();
        assert_eq!(env, ConfigManagerEnv::from_env(Some("any"), Some("empty")));
        let gfd = pod(json!([{"name": "gpu-feature-discovery", "image": image}]), json!([]));
        assert_eq!(classify(&gfd).unwrap().0, Component::FeatureDiscovery);
        let mig = pod(
            json!([{"name": "nvidia-mig-manager", "image": format!("{MIG_MANAGER_IMAGE}:v0.12.3-ubuntu20.04")}]),
            json!([]),
        );
        assert_eq!(classify(&mig).unwrap().0, Component::MigManager);
        let toolkit = pod(
            json!([{"name": "nvidia-container-toolkit-ctr", "image": format!("{TOOLKIT_IMAGE}:v1.17.8-ubuntu20.04")}]),
            json!([]),
        );
        assert!(classify(&toolkit).is_none());
    }
}
