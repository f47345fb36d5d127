//! The cluster fixture: nodes with roles, labels, taints, capacity and GPU hardware, loaded from a
//! topology YAML file (or generated), and turned into the objects a fresh cluster holds.
//!
//! Seeded Node objects look as a v1.33 kubelet registers them (pkg/kubelet/kubelet_node_status.go
//! `initialNode`, nodestatus/setters.go for conditions, addresses and nodeInfo); namespaces and
//! their `default` ServiceAccounts as kube-apiserver and kube-controller-manager create them.

use std::{collections::BTreeMap, path::Path};

use k8s_openapi::jiff::Timestamp;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::k8s::quantity::Quantity;

/// The built-in lab topology (manifests/clusters/default.yaml).
pub const DEFAULT_TOPOLOGY: &str = include_str!("../../../manifests/clusters/default.yaml");
/// What the built-in topology is called in messages.
pub const DEFAULT_TOPOLOGY_NAME: &str = "manifests/clusters/default.yaml";
/// The kubelet version every simulated node reports (the simulator is Kubernetes 1.33, `docs/simulator.md`).
pub const KUBELET_VERSION: &str = "v1.33.4";

/// Errors loading a topology.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The YAML is malformed or does not fit the schema; `location` is `file:line:col`.
    #[error("{location}: {message}")]
    Parse {
        /// `file:line:col` (or just the file when the parser gives no position).
        location: String,
        /// What is wrong.
        message: String,
    },
    /// The topology parsed but is not usable.
    #[error("{file}: {message}")]
    Invalid {
        /// The file.
        file: String,
        /// What is wrong.
        message: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A cluster topology.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Topology {
    /// A name for messages (`gpu-lab`).
    #[serde(default)]
    pub name: Option<String>,
    /// The nodes, in the order they register.
    pub nodes: Vec<NodeSpec>,
    /// Image catalog for the simulated kubelet (issue #5): carried verbatim until it is read.
    #[serde(default)]
    pub images: Option<Value>,
    /// Timings of the simulated kubelet and controllers (issue #5): carried verbatim.
    #[serde(default)]
    pub timings: Option<Value>,
}

/// A node's role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// kubeadm's control-plane node: role label and NoSchedule taint.
    ControlPlane,
    /// An ordinary worker.
    #[default]
    Worker,
}

/// One node.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NodeSpec {
    /// Node name (also its hostname).
    pub name: String,
    /// Role.
    #[serde(default)]
    pub role: Role,
    /// Extra labels, on top of the kubelet's standard ones.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Extra taints (a control-plane node gets its NoSchedule taint without listing it).
    #[serde(default)]
    pub taints: Vec<TaintSpec>,
    /// What the node has.
    pub capacity: Resources,
    /// What pods may use (default: capacity minus the kubelet's default eviction thresholds).
    #[serde(default)]
    pub allocatable: Option<Resources>,
    /// The node's InternalIP (default: 10.0.0.<10 + index>).
    #[serde(default)]
    pub internal_ip: Option<String>,
    /// GPU hardware (issue #6 gives it behaviour; here it is data).
    #[serde(default)]
    pub gpu: Option<GpuSpec>,
}

/// A taint.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaintSpec {
    /// Key.
    pub key: String,
    /// Value (optional, as upstream).
    #[serde(default)]
    pub value: Option<String>,
    /// NoSchedule, PreferNoSchedule or NoExecute.
    pub effect: TaintEffect,
}

/// A taint effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum TaintEffect {
    /// Do not schedule new pods.
    NoSchedule,
    /// Avoid scheduling new pods.
    PreferNoSchedule,
    /// Evict running pods too.
    NoExecute,
}

impl TaintEffect {
    fn as_str(self) -> &'static str {
        match self {
            TaintEffect::NoSchedule => "NoSchedule",
            TaintEffect::PreferNoSchedule => "PreferNoSchedule",
            TaintEffect::NoExecute => "NoExecute",
        }
    }
}

/// cpu, memory, pods and ephemeral storage, as quantities.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Resources {
    /// CPU cores, e.g. `16` or `3500m`.
    pub cpu: QuantityText,
    /// Memory, e.g. `64Gi`.
    pub memory: QuantityText,
    /// Pod slots (default 110, the kubelet's `maxPods`).
    #[serde(default = "default_pods")]
    pub pods: u32,
    /// Node-local disk (default `100Gi`).
    #[serde(rename = "ephemeral-storage", default = "default_storage")]
    pub ephemeral_storage: QuantityText,
}

fn default_pods() -> u32 {
    110
}

fn default_storage() -> QuantityText {
    QuantityText("100Gi".to_string())
}

/// A quantity as written (a YAML number or string), checked when the topology is validated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuantityText(pub String);

impl<'de> Deserialize<'de> for QuantityText {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Text(String),
            Int(u64),
            Float(f64),
        }
        Ok(QuantityText(match Raw::deserialize(deserializer)? {
            Raw::Text(text) => text,
            Raw::Int(n) => n.to_string(),
            Raw::Float(x) => x.to_string(),
        }))
    }
}

impl QuantityText {
    fn parse(&self) -> std::result::Result<Quantity, String> {
        self.0.parse::<Quantity>().map_err(|e| e.to_string())
    }
}

/// GPU hardware on a node (behaviour in `sim::gpu`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    /// Model, e.g. `A100-40GB`, `A100-80GB`, `H100-80GB`, `H200-141GB` (`docs/gpu.md`).
    pub model: String,
    /// Physical GPUs on the node.
    pub count: u32,
    /// Full-GPU memory in MiB as GFD's `nvidia.com/gpu.memory` (default: the model's).
    #[serde(default, rename = "memoryMiB")]
    pub memory_mib: Option<u64>,
    /// `capable` (default: every supported model can run MIG) or `unsupported`.
    #[serde(default)]
    pub mig: GpuMig,
    /// The mig-parted config the GPUs boot with (default `all-disabled`).
    #[serde(default, rename = "migConfig")]
    pub mig_config: Option<String>,
}

/// Whether a node's GPUs can be partitioned with MIG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum GpuMig {
    /// MIG can be enabled.
    #[default]
    Capable,
    /// MIG is hidden (e.g. a vGPU); GFD reports `nvidia.com/mig.capable=false`.
    Unsupported,
}

impl GpuSpec {
    /// The hardware and the MIG geometry it boots with.
    pub fn hardware(
        &self,
    ) -> std::result::Result<(crate::gpu::hardware::NodeGpus, crate::gpu::hardware::MigGeometry), String>
    {
        use crate::gpu::hardware::{self, MigCapability, MigGeometry, NodeGpus};
        let model = hardware::GpuModel::parse(&self.model).map_err(|e| e.to_string())?;
        let mut gpus = NodeGpus::new(model, self.count);
        if let Some(memory) = self.memory_mib {
            gpus.memory_mib = memory;
        }
        let geometry = match (self.mig, self.mig_config.as_deref()) {
            (GpuMig::Unsupported, None | Some("all-disabled")) => MigGeometry::Disabled,
            (GpuMig::Unsupported, Some(config)) => {
                return Err(format!("migConfig {config:?} needs mig: capable"));
            }
            (GpuMig::Capable, config) => {
                hardware::mig_geometry(model, config.unwrap_or("all-disabled")).map_err(|e| e.to_string())?
            }
        };
        gpus.mig = match self.mig {
            GpuMig::Capable => MigCapability::Capable,
            GpuMig::Unsupported => MigCapability::Unsupported,
        };
        Ok((gpus, geometry))
    }
}

impl Topology {
    /// Parses topology YAML; errors point at `name:line:col`.
    pub fn parse(yaml: &str, name: &str) -> Result<Topology> {
        let options = serde_saphyr::options! { with_snippet: false };
        let topology: Topology = serde_saphyr::from_str_with_options(yaml, options).map_err(|error| {
            let location = match error.location() {
                Some(at) => format!("{name}:{}:{}", at.line(), at.column()),
                None => name.to_string(),
            };
            Error::Parse { location, message: first_line(&error.to_string()) }
        })?;
        topology.validate(name)?;
        Ok(topology)
    }

    /// Reads and parses a topology file.
    pub fn load(path: &Path) -> Result<Topology> {
        let name = path.display().to_string();
        let yaml =
            std::fs::read_to_string(path).map_err(|source| Error::Read { path: name.clone(), source })?;
        Topology::parse(&yaml, &name)
    }

    /// The built-in lab topology.
    pub fn default_lab() -> Topology {
        Topology::parse(DEFAULT_TOPOLOGY, DEFAULT_TOPOLOGY_NAME).expect("the built-in topology is valid")
    }

    /// One control-plane node and `workers` CPU workers named `worker-1` … `worker-N`.
    pub fn generated(workers: u32) -> Topology {
        let node = |name: String, role: Role, cpu: &str, memory: &str| NodeSpec {
            name,
            role,
            labels: BTreeMap::new(),
            taints: Vec::new(),
            capacity: Resources {
                cpu: QuantityText(cpu.to_string()),
                memory: QuantityText(memory.to_string()),
                pods: default_pods(),
                ephemeral_storage: default_storage(),
            },
            allocatable: None,
            internal_ip: None,
            gpu: None,
        };
        let mut nodes = vec![node("control-plane".to_string(), Role::ControlPlane, "4", "16Gi")];
        nodes.extend((1..=workers).map(|i| node(format!("worker-{i}"), Role::Worker, "8", "32Gi")));
        Topology { name: Some(format!("generated-{workers}")), nodes, images: None, timings: None }
    }

    /// A large GPU cluster for benchmarks: one control-plane node, one CPU worker and
    /// `gpu_nodes` GPU workers `gpu-1` … `gpu-N` cycling through the four models with 1, 2, 4 or
    /// 8 GPUs, every fourth one with a MIG geometry (`all-balanced`).
    pub fn generated_gpu(gpu_nodes: u32) -> Topology {
        use crate::gpu::hardware::GpuModel;
        let mut topology = Topology::generated(1);
        topology.name = Some(format!("generated-gpu-{gpu_nodes}"));
        let template = topology.nodes[1].clone();
        topology.nodes[1].name = "cpu-1".to_string();
        for i in 0..gpu_nodes {
            let model = GpuModel::ALL[i as usize % GpuModel::ALL.len()];
            let count = [1, 2, 4, 8][(i as usize / GpuModel::ALL.len()) % 4];
            let mut node = template.clone();
            node.name = format!("gpu-{}", i + 1);
            node.labels = BTreeMap::from([
                ("feature.node.kubernetes.io/pci-10de.present".to_string(), "true".to_string()),
                ("nvidia.com/gpu.present".to_string(), "true".to_string()),
            ]);
            node.capacity.cpu = QuantityText((12 * count).to_string());
            node.capacity.memory = QuantityText(format!("{}Gi", 85 * count));
            node.gpu = Some(GpuSpec {
                model: model.topology_name().to_string(),
                count,
                memory_mib: None,
                mig: GpuMig::Capable,
                mig_config: (i % 4 == 3).then(|| "all-balanced".to_string()),
            });
            topology.nodes.push(node);
        }
        topology
    }

    fn validate(&self, file: &str) -> Result<()> {
        let invalid = |message: String| Error::Invalid { file: file.to_string(), message };
        if self.nodes.is_empty() {
            return Err(invalid("a topology needs at least one node".to_string()));
        }
        if self.nodes.len() > MAX_NODES {
            return Err(invalid(format!(
                "a topology has at most {MAX_NODES} nodes (each gets its own /24 pod range); this one has {}",
                self.nodes.len()
            )));
        }
        let mut seen = std::collections::BTreeSet::new();
        for node in &self.nodes {
            if !is_dns_subdomain(&node.name) {
                return Err(invalid(format!(
                    "node name {:?} is not a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.')",
                    node.name
                )));
            }
            if !seen.insert(node.name.as_str()) {
                return Err(invalid(format!("node {:?} is listed twice", node.name)));
            }
            for resources in std::iter::once(&node.capacity).chain(node.allocatable.as_ref()) {
                for (field, text) in [
                    ("cpu", &resources.cpu),
                    ("memory", &resources.memory),
                    ("ephemeral-storage", &resources.ephemeral_storage),
                ] {
                    text.parse().map_err(|e| invalid(format!("node {}: {field}: {e}", node.name)))?;
                }
            }
            if let Some(gpu) = &node.gpu {
                if gpu.count == 0 {
                    return Err(invalid(format!("node {}: gpu.count must be at least 1", node.name)));
                }
                gpu.hardware().map_err(|e| invalid(format!("node {}: gpu: {e}", node.name)))?;
            }
        }
        Ok(())
    }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or(text).trim().to_string()
}

fn is_dns_subdomain(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        })
}

/// One object to store at first start: its type (group, plural) and body.
#[derive(Debug, Clone, PartialEq)]
pub struct SeedObject {
    /// API group (`""` for core, `coordination.k8s.io` for leases).
    pub group: &'static str,
    /// Plural resource name.
    pub plural: &'static str,
    /// The object (no uid/resourceVersion: the store assigns them).
    pub object: Value,
}

/// The namespaces kube-apiserver creates at start (pkg/controlplane/controller/systemnamespaces).
pub const SYSTEM_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// Memory the kubelet keeps back by default (`--eviction-hard memory.available<100Mi`).
const EVICTION_MEMORY_MIB: i128 = 100;

fn kibibytes(q: Quantity) -> String {
    format!("{}Ki", q.units_ceil() / 1024)
}

/// A stable pseudo-random hex id for a node (machineID, systemUUID, bootID are per-machine ids
/// on a real node; here they only need to be stable and distinct).
fn node_id(name: &str, salt: &str, len: usize) -> String {
    let mut out = String::new();
    let mut state: u64 = 0xcbf2_9ce4_8422_2325;
    while out.len() < len {
        for b in salt.bytes().chain(name.bytes()).chain(out.len().to_le_bytes()) {
            state ^= u64::from(b);
            state = state.wrapping_mul(0x0100_0000_01b3);
        }
        out.push_str(&format!("{state:016x}"));
    }
    out.truncate(len);
    out
}

fn uuid_form(hex: &str) -> String {
    format!("{}-{}-{}-{}-{}", &hex[0..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..32])
}

/// The most nodes a topology holds: the pod ranges of [`pod_cidr`] stay distinct.
pub const MAX_NODES: usize = 3_072;

/// The `index`-th node's InternalIP when the topology names none: `10.0.0.10`, `10.0.0.11` …
/// counted on through `10.0.1.0` and beyond, so a cluster of any size up to 65,000 nodes has
/// distinct, valid addresses (issue #17: `10.0.0.<10 + index>` overflowed past 245 nodes).
pub fn default_internal_ip(index: usize) -> String {
    let host = 10 + index;
    format!("10.0.{}.{}", (host >> 8) & 0xff, host & 0xff)
}

/// The `index`-th node's pod range, one /24 each as kube-controller-manager's range allocator
/// hands them out of the cluster CIDR (`--node-cidr-mask-size=24`, kubeadm's and kind's
/// default): `10.244.<index>.0/24` for the first 256 nodes (kind's `10.244.0.0/16`), then on
/// into `10.245.0.0/24` … as a cluster CIDR sized for the topology would (`10.244.0.0/14`
/// holds 1,024 nodes). Distinct for up to [`MAX_NODES`] (up to `10.255.255.0/24`).
pub fn pod_cidr(index: usize) -> String {
    let block = (244 << 8) + index;
    format!("10.{}.{}.0/24", (block >> 8) & 0xff, block & 0xff)
}

/// The Node object a v1.33 kubelet registers for `spec` (the `index`-th node), at time `now`.
pub fn node_object(spec: &NodeSpec, index: usize, now: Timestamp) -> Value {
    let time = now.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let mut labels = BTreeMap::new();
    // kubelet_node_status.go initialNode + nodeutil well-known labels.
    for (key, value) in [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/hostname", spec.name.as_str()),
        ("kubernetes.io/os", "linux"),
    ] {
        labels.insert(key.to_string(), value.to_string());
    }
    let mut taints: Vec<Value> = Vec::new();
    if spec.role == Role::ControlPlane {
        // kubeadm: cmd/kubeadm/app/constants LabelNodeRoleControlPlane and its taint; plus the
        // exclude-from-external-load-balancers label kubeadm sets on control-plane nodes.
        labels.insert("node-role.kubernetes.io/control-plane".to_string(), String::new());
        labels.insert("node.kubernetes.io/exclude-from-external-load-balancers".to_string(), String::new());
        taints.push(json!({"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}));
    }
    labels.extend(spec.labels.clone());
    for taint in &spec.taints {
        if taints.iter().any(|t| t["key"] == taint.key.as_str() && t["effect"] == taint.effect.as_str()) {
            continue;
        }
        let mut t = json!({"key": taint.key, "effect": taint.effect.as_str()});
        if let Some(value) = &taint.value {
            t["value"] = json!(value);
        }
        taints.push(t);
    }

    let quantity = |text: &QuantityText| text.parse().unwrap_or(Quantity::ZERO);
    let capacity = &spec.capacity;
    let capacity_json = json!({
        "cpu": capacity.cpu.0,
        "ephemeral-storage": kibibytes(quantity(&capacity.ephemeral_storage)),
        "hugepages-1Gi": "0",
        "hugepages-2Mi": "0",
        "memory": kibibytes(quantity(&capacity.memory)),
        "pods": capacity.pods.to_string(),
    });
    let allocatable_json = match &spec.allocatable {
        Some(a) => json!({
            "cpu": a.cpu.0,
            "ephemeral-storage": kibibytes(quantity(&a.ephemeral_storage)),
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": kibibytes(quantity(&a.memory)),
            "pods": a.pods.to_string(),
        }),
        None => {
            // Default eviction thresholds (pkg/kubelet/eviction/defaults_linux.go):
            // memory.available<100Mi, nodefs.available<10%; the storage figure is exact bytes.
            let memory = quantity(&capacity.memory)
                .checked_sub(Quantity::from_units((EVICTION_MEMORY_MIB * 1024 * 1024) as i64))
                .unwrap_or(Quantity::ZERO);
            let storage_bytes = quantity(&capacity.ephemeral_storage).units_ceil() * 9 / 10;
            json!({
                "cpu": capacity.cpu.0,
                "ephemeral-storage": storage_bytes.to_string(),
                "hugepages-1Gi": "0",
                "hugepages-2Mi": "0",
                "memory": kibibytes(memory),
                "pods": capacity.pods.to_string(),
            })
        }
    };
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({
            "type": kind,
            "status": status,
            "lastHeartbeatTime": time,
            "lastTransitionTime": time,
            "reason": reason,
            "message": message,
        })
    };
    let ip = spec.internal_ip.clone().unwrap_or_else(|| default_internal_ip(index));
    let pod_cidr = pod_cidr(index);
    let machine = node_id(&spec.name, "machine", 32);
    let mut node = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": spec.name,
            "labels": labels,
            "annotations": {
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": {
            "podCIDR": pod_cidr,
            "podCIDRs": [pod_cidr],
        },
        "status": {
            "capacity": capacity_json,
            "allocatable": allocatable_json,
            // Order and texts as nodestatus/setters.go writes them.
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [
                {"type": "InternalIP", "address": ip},
                {"type": "Hostname", "address": spec.name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": machine,
                "systemUUID": uuid_form(&node_id(&spec.name, "system", 32)),
                "bootID": uuid_form(&node_id(&spec.name, "boot", 32)),
                "kernelVersion": "6.8.0-1024-gcp",
                "osImage": "Ubuntu 24.04.2 LTS",
                "containerRuntimeVersion": "containerd://2.0.5",
                "kubeletVersion": KUBELET_VERSION,
                // Deprecated; a 1.33 kubelet leaves it empty (DisableNodeKubeProxyVersion).
                "kubeProxyVersion": "",
                "operatingSystem": "linux",
                "architecture": "amd64",
            },
        },
    });
    if !taints.is_empty() {
        node["spec"]["taints"] = json!(taints);
    }
    node
}

/// Everything a fresh simulated cluster holds: the system namespaces, their `default`
/// ServiceAccounts, the nodes and their heartbeat Leases.
pub fn seed_objects(topology: &Topology, now: Timestamp) -> Vec<SeedObject> {
    let micro_time = now.strftime("%Y-%m-%dT%H:%M:%S.000000Z").to_string();
    let mut objects = Vec::new();
    for ns in SYSTEM_NAMESPACES {
        objects.push(SeedObject {
            group: "",
            plural: "namespaces",
            object: json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {"name": ns, "labels": {"kubernetes.io/metadata.name": ns}},
                "spec": {"finalizers": ["kubernetes"]},
                "status": {"phase": "Active"},
            }),
        });
    }
    for ns in SYSTEM_NAMESPACES {
        // The serviceaccounts controller makes `default` in every namespace.
        objects.push(SeedObject {
            group: "",
            plural: "serviceaccounts",
            object: json!({
                "apiVersion": "v1",
                "kind": "ServiceAccount",
                "metadata": {"name": "default", "namespace": ns},
            }),
        });
    }
    for (index, spec) in topology.nodes.iter().enumerate() {
        objects.push(SeedObject { group: "", plural: "nodes", object: node_object(spec, index, now) });
        objects.push(SeedObject {
            group: "coordination.k8s.io",
            plural: "leases",
            object: json!({
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {
                    "name": spec.name,
                    "namespace": "kube-node-lease",
                    "ownerReferences": [],
                },
                "spec": {
                    "holderIdentity": spec.name,
                    "leaseDurationSeconds": 40,
                    "renewTime": micro_time,
                },
            }),
        });
    }
    objects
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_topology_has_the_lab_shape() {
        let topology = Topology::default_lab();
        let roles: Vec<_> =
            topology.nodes.iter().map(|n| (n.name.as_str(), n.role, n.gpu.is_some())).collect();
        assert_eq!(roles.iter().filter(|(_, role, _)| *role == Role::ControlPlane).count(), 1);
        assert_eq!(roles.iter().filter(|(_, _, gpu)| *gpu).count(), 3);
        assert_eq!(roles.iter().filter(|(_, role, gpu)| *role == Role::Worker && !gpu).count(), 1);
    }

    #[test]
    fn errors_point_at_file_line_column() {
        let yaml = "nodes:\n  - name: a\n    capacity: {cpu: 1, memory: 1Gi}\n    colour: blue\n";
        let error = Topology::parse(yaml, "t.yaml").unwrap_err().to_string();
        assert!(error.starts_with("t.yaml:4:"), "{error}");
        assert!(error.contains("colour"), "{error}");
        let error = Topology::parse("nodes:\n  - name: A_b\n    capacity: {cpu: 1, memory: 1Gi}\n", "t.yaml")
            .unwrap_err()
            .to_string();
        insta::assert_snapshot!(error, @r#"t.yaml: node name "A_b" is not a lowercase RFC 1123 subdomain (a-z, 0-9, '-', '.')"#);
        let error =
            Topology::parse("nodes:\n  - name: a\n    capacity: {cpu: lots, memory: 1Gi}\n", "t.yaml")
                .unwrap_err()
                .to_string();
        assert!(error.starts_with("t.yaml: node a: cpu: quantities must match"), "{error}");
    }

    #[test]
    fn generated_topologies_have_n_workers() {
        let topology = Topology::generated(3);
        let names: Vec<_> = topology.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["control-plane", "worker-1", "worker-2", "worker-3"]);
    }

    /// Past 255 nodes every node still gets a distinct, valid InternalIP and /24 pod range; the
    /// first nodes keep the addresses they always had.
    #[test]
    fn addresses_stay_distinct_and_valid_for_a_thousand_nodes() {
        let topology = Topology::generated(1_000);
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut ips = std::collections::BTreeSet::new();
        let mut cidrs = std::collections::BTreeSet::new();
        for (index, spec) in topology.nodes.iter().enumerate() {
            let node = node_object(spec, index, now);
            let ip = node["status"]["addresses"][0]["address"].as_str().unwrap().to_string();
            let cidr = node["spec"]["podCIDR"].as_str().unwrap().to_string();
            assert!(ip.parse::<std::net::Ipv4Addr>().is_ok(), "{ip}");
            let network = cidr.strip_suffix(".0/24").expect("a /24");
            assert!(format!("{network}.0").parse::<std::net::Ipv4Addr>().is_ok(), "{cidr}");
            assert_eq!(node["spec"]["podCIDRs"], json!([cidr]));
            assert!(ips.insert(ip), "duplicate InternalIP at node {index}");
            assert!(cidrs.insert(cidr), "duplicate podCIDR at node {index}");
        }
        assert_eq!(
            (default_internal_ip(0), pod_cidr(0)),
            ("10.0.0.10".to_string(), "10.244.0.0/24".to_string())
        );
        assert_eq!(
            (default_internal_ip(245), pod_cidr(255)),
            ("10.0.0.255".to_string(), "10.244.255.0/24".to_string())
        );
        assert_eq!(
            (default_internal_ip(246), pod_cidr(256)),
            ("10.0.1.0".to_string(), "10.245.0.0/24".to_string())
        );
        assert_eq!(pod_cidr(MAX_NODES - 1), "10.255.255.0/24");
        let mut too_many = Topology::generated(MAX_NODES as u32);
        assert!(too_many.validate("t.yaml").unwrap_err().to_string().contains("at most 3072 nodes"));
        too_many.nodes.pop();
        too_many.validate("t.yaml").unwrap();
    }

    #[test]
    fn generated_gpu_topologies_cycle_models_and_validate() {
        let topology = Topology::generated_gpu(16);
        assert_eq!(topology.nodes.len(), 18);
        let gpu: Vec<_> = topology.nodes.iter().filter_map(|n| n.gpu.as_ref()).collect();
        assert_eq!((gpu[0].model.as_str(), gpu[0].count), ("A100-40GB", 1));
        assert_eq!((gpu[15].model.as_str(), gpu[15].count), ("H200-141GB", 8));
        for spec in gpu {
            spec.hardware().unwrap();
        }
        let bad =
            "nodes:\n  - name: g\n    capacity: {cpu: 1, memory: 1Gi}\n    gpu: {model: T4, count: 1}\n";
        let error = Topology::parse(bad, "t.yaml").unwrap_err().to_string();
        insta::assert_snapshot!(error, @r#"t.yaml: node g: gpu: unknown GPU model "T4" (known: A100-40GB, A100-80GB, H100-80GB, H200-141GB)"#);
        let bad = "nodes:\n  - name: g\n    capacity: {cpu: 1, memory: 1Gi}\n    gpu: {model: H100-80GB, count: 1, migConfig: all-1g.5gb}\n";
        let error = Topology::parse(bad, "t.yaml").unwrap_err().to_string();
        insta::assert_snapshot!(error, @r#"t.yaml: node g: gpu: config "all-1g.5gb" has no entry for NVIDIA-H100-80GB-HBM3"#);
    }

    #[test]
    fn a_gpu_node_as_a_kubelet_registers_it() {
        let topology = Topology::default_lab();
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let gpu = topology.nodes.iter().position(|n| n.name == "gpu-1").unwrap();
        insta::assert_json_snapshot!(node_object(&topology.nodes[gpu], gpu, now));
        let control = topology.nodes.iter().position(|n| n.role == Role::ControlPlane).unwrap();
        let node = node_object(&topology.nodes[control], control, now);
        assert_eq!(node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"], "");
        assert_eq!(
            node["spec"]["taints"],
            json!([{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}])
        );
    }

    #[test]
    fn seeding_makes_namespaces_accounts_nodes_and_leases() {
        let topology = Topology::generated(2);
        let objects = seed_objects(&topology, "2026-01-01T00:00:00Z".parse().unwrap());
        let count = |plural: &str| objects.iter().filter(|o| o.plural == plural).count();
        assert_eq!(
            (count("namespaces"), count("serviceaccounts"), count("nodes"), count("leases")),
            (4, 4, 3, 3)
        );
    }
}
