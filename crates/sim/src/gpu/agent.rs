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
    config::{Binary, EffectiveConfig, PluginEnv, Renaming, SharingStrategy},
    gfd,
    hardware::{MigGeometry, NodeGpus},
    mig::{LabelPatch, MIG_CONFIG_LABEL, MigManager, MigManagerPhase},
    plugin::{CONFIG_LABEL, ConfigManagerEnv, ContainerState, DevicePluginPod},
};
use crate::{
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

/// The device-plugin / GFD image (GFD ships in the same image: `docs/gpu.md`).
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

/// The kubelet's periodic pod sync (`syncFrequency`, default 1m: pkg/kubelet/apis/config/
/// v1beta1/defaults.go, v1.33): a mounted ConfigMap volume is refreshed at the pod's syncs, so a
/// running pod's files show the ConfigMap as of its last sync, not its live value. The simulator
/// syncs each pod every period from its start.
pub const VOLUME_SYNC_SECONDS: i64 = 60;

/// The kubelet's crash back-off: 10s, doubling, at most 300s (pkg/kubelet/kubelet.go
/// `backOffPeriod`, `MaxContainerBackOff`; the `KubeletCrashLoopBackOffMax` gate is off in v1.33).
const BACK_OFF_INITIAL_SECONDS: i64 = 10;
/// See [`BACK_OFF_INITIAL_SECONDS`].
const BACK_OFF_MAX_SECONDS: i64 = 300;

/// One config-manager container's restarts and crash back-off as the kubelet keeps them
/// (`doBackOff`, pkg/kubelet/kuberuntime/kuberuntime_manager.go, over `flowcontrol.Backoff`).
#[derive(Debug, Clone, Default)]
struct Restarts {
    /// `restartCount`.
    count: u32,
    /// The back-off period and when it was last stepped (`Backoff.Next`).
    period: Option<(i64, Timestamp)>,
    /// While exited: when it exited (the back-off runs from there).
    exited_at: Option<Timestamp>,
    /// The error of its last exit (`lastState.terminated.message`).
    last_error: Option<String>,
    /// When its current run started, once restarted successfully.
    running_since: Option<Timestamp>,
}

/// What the kubelet did to a config-manager container, for its Events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerEvent {
    /// Restarted after its back-off (`Pulled` already present, `Created`, `Started`).
    Restarted(String),
    /// Exited again and waits out its back-off (`BackOff`).
    BackOff(String),
}

#[derive(Debug, Clone)]
struct Agent {
    node: String,
    component: Component,
    label: String,
    pod: DevicePluginPod,
    /// Container names by the role their log is kept under (`init`, `sidecar`, `plugin`).
    containers: BTreeMap<&'static str, String>,
    /// When the pod started here (its syncs run every [`VOLUME_SYNC_SECONDS`] from then).
    started: Timestamp,
    /// The config-manager's ConfigMap (namespace, name), if it mounts one.
    configmap: Option<(String, String)>,
    /// That ConfigMap's files as the kubelet last synced them into the volume.
    volume: BTreeMap<String, String>,
    /// When the volume was last synced.
    volume_synced_at: Timestamp,
    /// Config-manager restarts by role (`init`, `sidecar`).
    restarts: BTreeMap<&'static str, Restarts>,
}

impl Agent {
    /// The pod's last periodic sync at or before `now`.
    fn last_sync(&self, now: Timestamp) -> Timestamp {
        let elapsed = (now.as_second() - self.started.as_second()).max(0);
        let at = self.started.as_second() + elapsed / VOLUME_SYNC_SECONDS * VOLUME_SYNC_SECONDS;
        Timestamp::from_second(at).unwrap_or(now)
    }

    /// Refreshes the volume when a periodic sync passed since the last refresh; returns the next
    /// sync when the volume is behind `live` (the caller wakes then, so the refresh reads the
    /// ConfigMap as it is at that sync).
    fn sync_volume(&mut self, live: &BTreeMap<String, String>, now: Timestamp) -> Option<Timestamp> {
        let last = self.last_sync(now);
        if last > self.volume_synced_at {
            self.volume = live.clone();
            self.volume_synced_at = last;
        }
        (self.volume != *live)
            .then(|| Timestamp::from_second(last.as_second() + VOLUME_SYNC_SECONDS).unwrap_or(now))
    }

    /// Runs the kubelet's back-off over a crash-looping config-manager container: a container
    /// that just exited restarts at once the first time, later only once its back-off ran out,
    /// reading the label and the synced volume afresh. Returns when it is next due.
    fn advance(
        &mut self,
        label: &str,
        now: Timestamp,
        events: &mut Vec<ContainerEvent>,
    ) -> Option<Timestamp> {
        loop {
            let role = self.pod.crashing()?;
            let error = match role {
                "init" => &self.pod.init,
                _ => &self.pod.sidecar,
            };
            let error = match error {
                ContainerState::CrashLoop { error, .. } => error.clone(),
                ContainerState::Running => return None,
            };
            let name = self.containers.get(role).cloned().unwrap_or_default();
            let restarts = self.restarts.entry(role).or_default();
            let fresh = restarts.exited_at.is_none();
            let exited = *restarts.exited_at.get_or_insert(now);
            restarts.last_error = Some(error);
            restarts.running_since = None;
            if let Some((period, _)) = restarts.period
                && now.as_second() - exited.as_second() < period
            {
                // `IsInBackOffSince(key, finishedAt)`.
                if fresh {
                    events.push(ContainerEvent::BackOff(name));
                }
                return Timestamp::from_second(exited.as_second() + period).ok();
            }
            // `Backoff.Next`: the period doubles, or starts over once an entry is older than twice
            // the maximum (`hasExpired`, k8s.io/client-go/util/flowcontrol/backoff.go).
            restarts.period = Some(match restarts.period {
                Some((period, updated))
                    if now.as_second() - updated.as_second() <= 2 * BACK_OFF_MAX_SECONDS =>
                {
                    ((period * 2).min(BACK_OFF_MAX_SECONDS), now)
                }
                _ => (BACK_OFF_INITIAL_SECONDS, now),
            });
            restarts.count += 1;
            restarts.exited_at = None;
            restarts.running_since = Some(now);
            events.push(ContainerEvent::Restarted(name));
            self.label = label.to_string();
            self.pod.restart_config_manager(label, &self.volume);
        }
    }
}

/// Go's `time.Duration.String()` of whole seconds (`10s`, `2m40s`, `5m0s`).
fn go_seconds(seconds: i64) -> String {
    if seconds < 60 { format!("{seconds}s") } else { format!("{}m{}s", seconds / 60, seconds % 60) }
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

/// The NVIDIA pods on the GPU nodes.
struct NvidiaPods {
    /// The Running ones by node, with what each is.
    running: BTreeMap<String, Vec<(Component, Pod, Container)>>,
    /// The uids of every pod not finished nor being deleted: agents outlive a pod's Running
    /// phase while its init container crash-loops (Pending).
    live: BTreeSet<String>,
}

fn nvidia_pods(store: &Store, hardware: &GpuHardware) -> NvidiaPods {
    let candidates = |stored: &Stored| stored.json.contains("nvcr.io/nvidia/");
    let mut found = NvidiaPods { running: BTreeMap::new(), live: BTreeSet::new() };
    for stored in store.list("pods", None, &candidates, None, None).items {
        let Ok(pod) = serde_json::from_str::<Pod>(&stored.json) else { continue };
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
        let phase = pod.status.as_ref().and_then(|s| s.phase.as_deref());
        if !hardware.contains_key(&node)
            || matches!(phase, Some("Succeeded" | "Failed"))
            || pod.metadata.deletion_timestamp.is_some()
        {
            continue;
        }
        if let Some(uid) = &pod.metadata.uid {
            found.live.insert(uid.clone());
        }
        if phase != Some("Running") {
            continue;
        }
        if let Some((component, container)) = classify(&pod) {
            found.running.entry(node).or_default().push((component, pod, container));
        }
    }
    found
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
        let NvidiaPods { mut running, live } = nvidia_pods(store, hardware);
        self.agents.retain(|uid, _| live.contains(uid));
        // The kubelet starts the agents and feeds them label changes and restarts
        // (`kubelet_sync`); here their volumes follow the periodic syncs.
        let mut volumes = ConfigMapReader::new(store);
        let mut next_wake = None;
        let mut wake_at = |at: Timestamp| next_wake = Some(next_wake.map_or(at, |t: Timestamp| t.min(at)));
        for agent in self.agents.values_mut() {
            if let Some(at) = agent.sync_volume(&volumes.read(agent.configmap.as_ref()), now) {
                wake_at(at);
            }
        }
        for (node_name, (gpus, boot_geometry)) in hardware {
            let Ok(mut node) = store.get_value(nodes, "", node_name) else { continue };
            let labels: BTreeMap<String, String> =
                serde_json::from_value(node["metadata"]["labels"].clone()).unwrap_or_default();
            let pods = running.remove(node_name).unwrap_or_default();

            // MIG manager first: the plugin advertises the geometry it leaves.
            let manager_pod = pods.iter().find(|(c, _, _)| *c == Component::MigManager);
            let (mut label_patch, done_at) =
                self.sync_mig_manager(node_name, gpus, boot_geometry, &labels, manager_pod, now);
            if let Some(at) = done_at {
                wake_at(at);
            }
            let geometry = self.mig.get(node_name).map_or(boot_geometry.clone(), |m| m.geometry.clone());

            // Device plugin → capacity and allocatable.
            let state = self
                .serving(node_name, Component::DevicePlugin)
                .map_or(PluginState::NotRunning, PluginState::Serving);
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
            if let Some(config) = self.serving(node_name, Component::FeatureDiscovery).cloned() {
                let wanted = gfd::gfd_labels(gpus, &geometry, &config, now.as_second());
                label_patch.extend(self.gfd_label_patch(node_name, &labels, wanted));
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

    /// The config a running `component` of `node` serves, if one does.
    fn serving(&self, node: &str, component: Component) -> Option<&EffectiveConfig> {
        self.agents
            .values()
            .filter(|a| a.node == node && a.component == component)
            .find_map(|a| a.pod.serving())
    }

    /// The node's MIG manager, when its pod runs: the label patch it makes, and when the
    /// reconfiguration it is applying finishes.
    fn sync_mig_manager(
        &mut self,
        node_name: &str,
        gpus: &NodeGpus,
        boot_geometry: &MigGeometry,
        labels: &BTreeMap<String, String>,
        manager_pod: Option<&(Component, Pod, Container)>,
        now: Timestamp,
    ) -> (LabelPatch, Option<Timestamp>) {
        let mut label_patch = LabelPatch::new();
        let Some((_, pod, container)) = manager_pod else {
            self.mig_pods.remove(node_name);
            self.mig_seen.remove(node_name);
            return (label_patch, None);
        };
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        self.mig_pods.insert(node_name.to_string(), (uid, container.name.clone()));
        let manager = self
            .mig
            .entry(node_name.to_string())
            .or_insert_with(|| MigManager::new(gpus.model, "all-disabled", boot_geometry.clone()));
        let desired = labels.get(MIG_CONFIG_LABEL).cloned();
        if self.mig_seen.get(node_name) != Some(&desired) {
            self.mig_seen.insert(node_name.to_string(), desired);
            label_patch.extend(manager.on_labels(labels, now));
        }
        label_patch.extend(manager.tick(now));
        let done_at = match &manager.phase {
            MigManagerPhase::Applying { done_at, .. } => Some(*done_at),
            _ => None,
        };
        (label_patch, done_at)
    }

    /// The label patch that brings the node to the GFD labels `wanted`, removing the ones GFD
    /// wrote before and no longer writes; the timestamp label is rewritten only with a change.
    fn gfd_label_patch(
        &mut self,
        node_name: &str,
        labels: &BTreeMap<String, String>,
        mut wanted: BTreeMap<String, String>,
    ) -> LabelPatch {
        let mut label_patch = LabelPatch::new();
        let written = self.gfd_written.entry(node_name.to_string()).or_default();
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
        label_patch
    }

    /// The kubelet's side of an NVIDIA pod it is about to write the status of: once its
    /// containers started (`containers_started`), the agent runs them — the config-manager reads
    /// the node label and its volume, a crash-looping one restarts with the kubelet's back-off.
    /// Returns when the kubelet must look at the pod again (a back-off running out) and what it
    /// did, for its Events.
    pub fn kubelet_sync(
        &mut self,
        store: &Store,
        pod: &Pod,
        hardware: &GpuHardware,
        containers_started: bool,
        now: Timestamp,
    ) -> (Option<Timestamp>, Vec<ContainerEvent>) {
        let mut events = Vec::new();
        let Some((component, container)) = classify(pod) else { return (None, events) };
        let node = pod.spec.as_ref().and_then(|s| s.node_name.clone()).unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        if component == Component::MigManager
            || !hardware.contains_key(&node)
            || pod.metadata.deletion_timestamp.is_some()
        {
            return (None, events);
        }
        if !containers_started && !self.agents.contains_key(&uid) {
            return (None, events);
        }
        let label = store
            .get("nodes", "", &node)
            .and_then(|stored| serde_json::from_str::<Value>(&stored.json).ok())
            .and_then(|node| node["metadata"]["labels"][CONFIG_LABEL].as_str().map(str::to_string))
            .unwrap_or_default();
        let mut volumes = ConfigMapReader::new(store);
        let agent = self.agents.entry(uid).or_insert_with(|| {
            Agent::start(store, &mut volumes, pod, component, &container, &node, &label, now)
        });
        agent.sync_volume(&volumes.read(agent.configmap.as_ref()), now);
        if agent.label != label {
            agent.label = label.clone();
            agent.pod.on_label_change(&label, &agent.volume);
        }
        (agent.advance(&label, now, &mut events), events)
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

/// A stable 64-hex container id for run `run` (0 = the first) of a config-manager container.
fn container_id(pod_uid: &str, container: &str, run: u32) -> String {
    let digest =
        ring::digest::digest(&ring::digest::SHA256, format!("{pod_uid}/{container}/{run}").as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// The ConfigMaps mounted by NVIDIA pods, each read at most once per pass.
struct ConfigMapReader<'a> {
    store: &'a Store,
    read: HashMap<(String, String), BTreeMap<String, String>>,
}

impl<'a> ConfigMapReader<'a> {
    fn new(store: &'a Store) -> ConfigMapReader<'a> {
        ConfigMapReader { store, read: HashMap::new() }
    }

    /// The live data of `configmap` (namespace, name); empty without one.
    fn read(&mut self, configmap: Option<&(String, String)>) -> BTreeMap<String, String> {
        let Some(key) = configmap else { return BTreeMap::new() };
        self.read.entry(key.clone()).or_insert_with(|| configmap_data(self.store, &key.0, &key.1)).clone()
    }
}

impl Agent {
    /// The pod's containers start: the volume is set up from the ConfigMap as it is now, then
    /// the config-manager (or the plugin alone) runs.
    #[allow(clippy::too_many_arguments)]
    fn start(
        store: &Store,
        volumes: &mut ConfigMapReader<'_>,
        pod: &Pod,
        component: Component,
        container: &Container,
        node: &str,
        label: &str,
        now: Timestamp,
    ) -> Agent {
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let manager = config_manager(pod);
        let configmap = match &manager {
            Some((_, Some(name))) => Some((namespace.clone(), name.clone())),
            _ => None,
        };
        let volume = volumes.read(configmap.as_ref());
        let configs = match &manager {
            Some(_) => volume.clone(),
            None => static_config(pod, container, store, &namespace),
        };
        let env = PluginEnv {
            mig_strategy: env_of(container, "MIG_STRATEGY"),
            mps_root: env_of(container, "MPS_ROOT"),
            binary: match component {
                Component::FeatureDiscovery => Binary::FeatureDiscovery,
                Component::DevicePlugin | Component::MigManager => Binary::DevicePlugin,
            },
        };
        Agent {
            node: node.to_string(),
            component,
            label: label.to_string(),
            pod: DevicePluginPod::start(manager.map(|(env, _)| env), env, label, &configs),
            containers: container_roles(pod, container),
            started: now,
            configmap,
            volume,
            volume_synced_at: now,
            restarts: BTreeMap::new(),
        }
    }
}

impl GpuAgents {
    /// The kubelet's status of an NVIDIA pod with config-manager containers, as its agent runs
    /// them: an init container that cannot select a config crash-loops (`Init:CrashLoopBackOff`,
    /// the pod stays Pending), a sidecar that cannot crash-loops while the pod keeps running
    /// (cmd/config-manager/main.go exits 1; `docs/gpu.md`); restart counts and back-off are the
    /// kubelet's. `status` is the status the kubelet is about to write.
    pub fn overlay_pod_status(&self, pod: &Pod, status: &mut Value) {
        let Some(agent) = pod.metadata.uid.as_ref().and_then(|uid| self.agents.get(uid)) else { return };
        if agent.pod.config_manager.is_none() {
            return;
        }
        let Some(spec) = pod.spec.as_ref() else { return };
        let init = spec.init_containers.iter().flatten().find(|c| is_config_manager(c));
        let sidecar = spec.containers.iter().find(|c| is_config_manager(c)).map(|c| c.name.clone());
        let name = pod.metadata.name.clone().unwrap_or_default();
        let namespace = pod.metadata.namespace.clone().unwrap_or_default();
        let uid = pod.metadata.uid.clone().unwrap_or_default();
        let crashing = agent.pod.crashing();
        let restarts = |role: &str| agent.restarts.get(role).cloned().unwrap_or_default();
        // The exited run `run` of `container` (`lastState`; its logs stay readable with
        // `kubectl logs --previous`, as the runtime keeps the exited container).
        let exited = |container: &str, restarts: &Restarts, run: u32| match &restarts.last_error {
            Some(error) => json!({"terminated": {
                "exitCode": 1, "reason": "Error", "message": error,
                "containerID": format!("containerd://{}", container_id(&uid, container, run)),
            }}),
            None => json!({}),
        };
        // `doBackOff`'s message (kuberuntime_manager.go, `format.Pod`: name_namespace(uid)).
        let waiting = |container: &str, restarts: &Restarts| {
            let period = restarts.period.map_or(BACK_OFF_INITIAL_SECONDS, |(period, _)| period);
            json!({"waiting": {
                "reason": "CrashLoopBackOff",
                "message": format!(
                    "back-off {} restarting failed container={container} pod={name}_{namespace}({uid})",
                    go_seconds(period)
                ),
            }})
        };
        if let Some(init) = init {
            let image = init.image.clone().unwrap_or_default();
            let init_restarts = restarts("init");
            if crashing == Some("init") {
                status["initContainerStatuses"] = json!([{
                    "name": init.name, "image": image, "imageID": "", "ready": false,
                    "restartCount": init_restarts.count, "started": false,
                    "state": waiting(&init.name, &init_restarts),
                    "lastState": exited(&init.name, &init_restarts, init_restarts.count),
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
            let last_state = match init_restarts.count {
                0 => json!({}),
                count => exited(&init.name, &init_restarts, count - 1),
            };
            status["initContainerStatuses"] = json!([{
                "name": init.name, "image": image, "imageID": "", "ready": true,
                "restartCount": init_restarts.count, "started": false,
                "state": {"terminated": {
                    "exitCode": 0, "reason": "Completed",
                    "containerID": format!("containerd://{}", container_id(&uid, &init.name, init_restarts.count)),
                }},
                "lastState": last_state,
            }]);
        }
        let Some(sidecar) = sidecar else { return };
        let sidecar_restarts = restarts("sidecar");
        if sidecar_restarts.count == 0 && crashing != Some("sidecar") {
            return;
        }
        for container in status["containerStatuses"].as_array_mut().into_iter().flatten() {
            if container["name"] != sidecar.as_str() {
                continue;
            }
            container["restartCount"] = json!(sidecar_restarts.count);
            if crashing == Some("sidecar") {
                container["state"] = waiting(&sidecar, &sidecar_restarts);
                container["lastState"] = exited(&sidecar, &sidecar_restarts, sidecar_restarts.count);
                container["ready"] = json!(false);
                container["started"] = json!(false);
            } else {
                let count = sidecar_restarts.count;
                container["lastState"] = exited(&sidecar, &sidecar_restarts, count - 1);
                if let Some(since) = sidecar_restarts.running_since {
                    container["state"] = json!({"running": {"startedAt": since.to_string()}});
                }
                container["containerID"] =
                    json!(format!("containerd://{}", container_id(&uid, &sidecar, count)));
            }
        }
        if crashing == Some("sidecar") {
            let message = format!("containers with unready status: [{sidecar}]");
            set_condition(status, "Ready", "ContainersNotReady", &message);
            set_condition(status, "ContainersReady", "ContainersNotReady", &message);
        }
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
    fn back_off_periods_print_as_go_durations() {
        assert_eq!(go_seconds(10), "10s");
        assert_eq!(go_seconds(160), "2m40s");
        assert_eq!(go_seconds(300), "5m0s");
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
