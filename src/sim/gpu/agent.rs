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
    config::PluginEnv,
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
            let has_manager = pods.iter().any(|(c, _, _)| *c == Component::MigManager);
            if has_manager {
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
                written.extend(wanted.into_keys());
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

    /// The log lines of a recognised pod's containers (`init`, `sidecar`, `plugin`), by pod uid.
    pub fn logs(&self, pod_uid: &str) -> Option<&BTreeMap<&'static str, Vec<String>>> {
        self.agents.get(pod_uid).map(|agent| &agent.pod.logs)
    }
}
