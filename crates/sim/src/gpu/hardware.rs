//! GPU hardware: the models a simulated node can carry, their MIG profile tables, and the named
//! mig-parted configs with the geometry each gives per model (`docs/gpu.md`).

use std::collections::BTreeMap;

/// Errors naming hardware or MIG configs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The topology names a model this simulator does not know.
    #[error("unknown GPU model {0:?} (known: A100-40GB, A100-80GB, H100-80GB, H200-141GB)")]
    UnknownModel(String),
    /// `nvidia.com/mig.config` names a config that is not in the mig-parted config file.
    #[error("config {0:?} not found in the mig-parted config file")]
    UnknownMigConfig(String),
    /// The config exists but no entry of it applies to this GPU model (its device filters miss).
    #[error("config {config:?} has no entry for {product}")]
    NotForModel {
        /// The config name.
        config: String,
        /// The GPU product it was applied to.
        product: &'static str,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A GPU model, named in topology files as `A100-40GB`, `A100-80GB`, `H100-80GB`, `H200-141GB`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GpuModel {
    /// A100 SXM4 40GB (Ampere, compute 8.0).
    A100_40GB,
    /// A100 SXM4 80GB (Ampere, compute 8.0).
    A100_80GB,
    /// H100 SXM5 80GB HBM3 (Hopper, compute 9.0).
    H100_80GB,
    /// H200 SXM 141GB (Hopper, compute 9.0).
    H200_141GB,
}

/// One MIG profile of a model: name, how many fit on one GPU, and what GFD reports for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MigProfile {
    /// Profile name as mig-parted and the resource names use it, e.g. `1g.10gb`.
    pub name: &'static str,
    /// Maximum instances per GPU (the `all-<profile>` count in the operator's default config).
    pub max_per_gpu: u32,
    /// MIG device memory in MiB (GFD `mig-<p>.memory`).
    pub memory_mib: u64,
    /// Streaming multiprocessors (GFD `mig-<p>.multiprocessors`).
    pub multiprocessors: u32,
    /// GPU-instance slices (also the compute-instance slices for the full-size CI).
    pub slices: u32,
    /// Engines: copy, decoder, encoder, jpeg, ofa.
    pub engines: [u32; 5],
}

const fn profile(
    name: &'static str,
    max_per_gpu: u32,
    memory_mib: u64,
    multiprocessors: u32,
    slices: u32,
    engines: [u32; 5],
) -> MigProfile {
    MigProfile { name, max_per_gpu, memory_mib, multiprocessors, slices, engines }
}

// Max instances: NVIDIA's MIG user guide and the GPU Operator's default-mig-parted-config.
// Memory/SM/engine values from NVIDIA's published label dumps (H100 1g.10gb 9984/16, 2g.20gb
// 20096/32, 3g.40gb 40320/60) and a captured A100-40GB node (1g.5gb 4864/14, 7g.40gb 40192/98 with
// engines 7/5/0/1/1); the others follow `nvidia-smi mig -lgip` sizes, unconfirmed. `+me` profiles
// are left out: their resource names are unconfirmed (`docs/gpu.md`).
const A100_40GB_PROFILES: &[MigProfile] = &[
    profile("1g.5gb", 7, 4864, 14, 1, [1, 0, 0, 0, 0]),
    profile("1g.10gb", 4, 9856, 14, 1, [1, 1, 0, 1, 0]),
    profile("2g.10gb", 3, 9984, 28, 2, [2, 1, 0, 0, 0]),
    profile("3g.20gb", 2, 20096, 42, 3, [3, 2, 0, 0, 0]),
    profile("4g.20gb", 1, 20096, 56, 4, [4, 2, 0, 0, 0]),
    profile("7g.40gb", 1, 40192, 98, 7, [7, 5, 0, 1, 1]),
];
const A100_80GB_PROFILES: &[MigProfile] = &[
    profile("1g.10gb", 7, 9728, 14, 1, [1, 0, 0, 0, 0]),
    profile("1g.20gb", 4, 19968, 14, 1, [1, 1, 0, 1, 0]),
    profile("2g.20gb", 3, 19968, 28, 2, [2, 1, 0, 0, 0]),
    profile("3g.40gb", 2, 40192, 42, 3, [3, 2, 0, 0, 0]),
    profile("4g.40gb", 1, 40192, 56, 4, [4, 2, 0, 0, 0]),
    profile("7g.80gb", 1, 80896, 98, 7, [7, 5, 0, 1, 1]),
];
const H100_80GB_PROFILES: &[MigProfile] = &[
    profile("1g.10gb", 7, 9984, 16, 1, [1, 1, 0, 1, 0]),
    profile("1g.20gb", 4, 20096, 26, 1, [1, 1, 0, 1, 0]),
    profile("2g.20gb", 3, 20096, 32, 2, [2, 2, 0, 2, 0]),
    profile("3g.40gb", 2, 40320, 60, 3, [3, 3, 0, 3, 0]),
    profile("4g.40gb", 1, 40320, 64, 4, [4, 4, 0, 4, 0]),
    profile("7g.80gb", 1, 80896, 132, 7, [7, 7, 0, 7, 1]),
];
const H200_141GB_PROFILES: &[MigProfile] = &[
    profile("1g.18gb", 7, 16384, 16, 1, [1, 1, 0, 1, 0]),
    profile("1g.35gb", 4, 32768, 26, 1, [1, 1, 0, 1, 0]),
    profile("2g.35gb", 3, 32768, 32, 2, [2, 2, 0, 2, 0]),
    profile("3g.71gb", 2, 69632, 60, 3, [3, 3, 0, 3, 0]),
    profile("4g.71gb", 1, 69632, 64, 4, [4, 4, 0, 4, 0]),
    profile("7g.141gb", 1, 143360, 132, 7, [7, 7, 0, 7, 1]),
];

impl GpuModel {
    /// Every model, in topology-name order.
    pub const ALL: [GpuModel; 4] =
        [GpuModel::A100_40GB, GpuModel::A100_80GB, GpuModel::H100_80GB, GpuModel::H200_141GB];

    /// Parses a topology model name (`A100-40GB`, …).
    pub fn parse(name: &str) -> Result<GpuModel> {
        GpuModel::ALL
            .into_iter()
            .find(|model| model.topology_name() == name)
            .ok_or_else(|| Error::UnknownModel(name.to_string()))
    }

    /// The name topology files use.
    pub fn topology_name(self) -> &'static str {
        match self {
            GpuModel::A100_40GB => "A100-40GB",
            GpuModel::A100_80GB => "A100-80GB",
            GpuModel::H100_80GB => "H100-80GB",
            GpuModel::H200_141GB => "H200-141GB",
        }
    }

    /// `nvidia.com/gpu.product` as GFD prints it: the NVML name sanitised (k8s-device-plugin
    /// `internal/lm/resource.go`).
    pub fn product(self) -> &'static str {
        match self {
            GpuModel::A100_40GB => "NVIDIA-A100-SXM4-40GB",
            GpuModel::A100_80GB => "NVIDIA-A100-SXM4-80GB",
            GpuModel::H100_80GB => "NVIDIA-H100-80GB-HBM3",
            // Unconfirmed (no GFD dump of an H200 seen): from the nvidia-smi name `NVIDIA H200`.
            GpuModel::H200_141GB => "NVIDIA-H200",
        }
    }

    /// `nvidia.com/gpu.memory`: MiB of the full GPU (`docs/gpu.md`).
    pub fn memory_mib(self) -> u64 {
        match self {
            GpuModel::A100_40GB => 40960,
            GpuModel::A100_80GB => 81920,
            GpuModel::H100_80GB => 81559,
            GpuModel::H200_141GB => 143771,
        }
    }

    /// `nvidia.com/gpu.family`.
    pub fn family(self) -> &'static str {
        match self {
            GpuModel::A100_40GB | GpuModel::A100_80GB => "ampere",
            GpuModel::H100_80GB | GpuModel::H200_141GB => "hopper",
        }
    }

    /// CUDA compute capability (major, minor).
    pub fn compute_capability(self) -> (u32, u32) {
        match self {
            GpuModel::A100_40GB | GpuModel::A100_80GB => (8, 0),
            GpuModel::H100_80GB | GpuModel::H200_141GB => (9, 0),
        }
    }

    /// The MIG profiles this model supports (all four models are MIG-capable).
    pub fn mig_profiles(self) -> &'static [MigProfile] {
        match self {
            GpuModel::A100_40GB => A100_40GB_PROFILES,
            GpuModel::A100_80GB => A100_80GB_PROFILES,
            GpuModel::H100_80GB => H100_80GB_PROFILES,
            GpuModel::H200_141GB => H200_141GB_PROFILES,
        }
    }

    /// One profile by name.
    pub fn mig_profile(self, name: &str) -> Option<&'static MigProfile> {
        self.mig_profiles().iter().find(|p| p.name == name)
    }

    /// The `all-balanced` mix per GPU (the GPU Operator's default-mig-parted-config).
    fn balanced(self) -> [(&'static str, u32); 3] {
        match self {
            GpuModel::A100_40GB => [("1g.5gb", 2), ("2g.10gb", 1), ("3g.20gb", 1)],
            GpuModel::A100_80GB | GpuModel::H100_80GB => [("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1)],
            GpuModel::H200_141GB => [("1g.18gb", 2), ("2g.35gb", 1), ("3g.71gb", 1)],
        }
    }
}

/// Whether a node's GPUs can be partitioned at all.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigCapability {
    /// MIG can be enabled (GFD `nvidia.com/mig.capable=true`).
    #[default]
    Capable,
    /// MIG is not available (e.g. a vGPU or passthrough setup hiding it).
    Unsupported,
}

/// The GPU hardware of one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeGpus {
    /// The model (all GPUs of a node are one model).
    pub model: GpuModel,
    /// Physical GPUs.
    pub count: u32,
    /// Full-GPU memory in MiB (defaults to the model's).
    pub memory_mib: u64,
    /// MIG capability.
    pub mig: MigCapability,
}

impl NodeGpus {
    /// `count` GPUs of `model` with the model's memory, MIG-capable.
    pub fn new(model: GpuModel, count: u32) -> NodeGpus {
        NodeGpus { model, count, memory_mib: model.memory_mib(), mig: MigCapability::Capable }
    }
}

/// The MIG partitioning of every GPU on a node (mig-parted applies `devices: all`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum MigGeometry {
    /// MIG mode off: whole GPUs.
    #[default]
    Disabled,
    /// MIG mode on with these instances per GPU (profile name → count); may be empty.
    Enabled(BTreeMap<&'static str, u32>),
}

impl MigGeometry {
    /// MIG devices per GPU.
    pub fn devices_per_gpu(&self) -> u32 {
        match self {
            MigGeometry::Disabled => 0,
            MigGeometry::Enabled(profiles) => profiles.values().sum(),
        }
    }
}

/// The named configs of the GPU Operator's `default-mig-parted-config` (v25.3.4), as offered on
/// `model`: `all-disabled`, `all-enabled`, `all-<profile>` per profile of any model, `all-balanced`.
pub fn mig_config_names() -> Vec<String> {
    let mut names = vec!["all-disabled".to_string(), "all-enabled".to_string()];
    for model in GpuModel::ALL {
        for p in model.mig_profiles() {
            let name = format!("all-{}", p.name);
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    names.push("all-balanced".to_string());
    names
}

/// The geometry the named mig-parted config gives on `model` (`docs/gpu.md`): e.g.
/// `all-1g.10gb` is 7 × `1g.10gb` on an A100-80GB/H100-80GB and 4 on an A100-40GB.
pub fn mig_geometry(model: GpuModel, config: &str) -> Result<MigGeometry> {
    match config {
        "all-disabled" => return Ok(MigGeometry::Disabled),
        "all-enabled" => return Ok(MigGeometry::Enabled(BTreeMap::new())),
        "all-balanced" => return Ok(MigGeometry::Enabled(model.balanced().into_iter().collect())),
        _ => {}
    }
    if !mig_config_names().iter().any(|name| name == config) {
        return Err(Error::UnknownMigConfig(config.to_string()));
    }
    let profile = config
        .strip_prefix("all-")
        .and_then(|name| model.mig_profile(name))
        .ok_or(Error::NotForModel { config: config.to_string(), product: model.product() })?;
    Ok(MigGeometry::Enabled(BTreeMap::from([(profile.name, profile.max_per_gpu)])))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_has_seven_one_slice_instances() {
        for model in GpuModel::ALL {
            let one_g = model.mig_profiles().iter().filter(|p| p.slices == 1).map(|p| p.max_per_gpu).max();
            assert_eq!(one_g, Some(7), "{model:?}");
            assert_eq!(GpuModel::parse(model.topology_name()), Ok(model));
        }
        assert!(GpuModel::parse("T4").is_err());
    }

    #[test]
    fn named_configs_per_model() {
        let one = |model, config| mig_geometry(model, config).unwrap().devices_per_gpu();
        assert_eq!(one(GpuModel::H100_80GB, "all-1g.10gb"), 7);
        assert_eq!(one(GpuModel::A100_80GB, "all-1g.10gb"), 7);
        assert_eq!(one(GpuModel::A100_40GB, "all-1g.10gb"), 4);
        assert_eq!(one(GpuModel::H100_80GB, "all-3g.40gb"), 2);
        assert_eq!(one(GpuModel::A100_40GB, "all-balanced"), 4);
        assert_eq!(mig_geometry(GpuModel::H100_80GB, "all-disabled"), Ok(MigGeometry::Disabled));
        assert_eq!(
            mig_geometry(GpuModel::H100_80GB, "all-1g.5gb").unwrap_err().to_string(),
            "config \"all-1g.5gb\" has no entry for NVIDIA-H100-80GB-HBM3"
        );
        assert_eq!(
            mig_geometry(GpuModel::H100_80GB, "all-2g").unwrap_err(),
            Error::UnknownMigConfig("all-2g".to_string())
        );
    }
}
