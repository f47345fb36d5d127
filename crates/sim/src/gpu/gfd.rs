//! GPU Feature Discovery's node labels as a pure function of hardware, MIG geometry and the
//! effective config (`docs/gpu.md`; internal/lm/resource.go and mig-strategy.go in v0.17.4).

use std::collections::BTreeMap;

use super::{
    config::{EffectiveConfig, MigStrategy, Renaming, Sharing, SharingStrategy},
    hardware::{MigCapability, MigGeometry, MigProfile, NodeGpus},
};

/// The driver every simulated node reports (`nvidia.com/cuda.driver-version.*`).
pub const DRIVER_VERSION: (u32, u32, u32) = (550, 90, 7);
/// The CUDA version that driver supports (`nvidia.com/cuda.runtime-version.*`).
pub const CUDA_VERSION: (u32, u32) = (12, 4);
/// `nvidia.com/gpu.machine` (the DMI product name; the default topology is GCE-shaped).
pub const MACHINE: &str = "Google-Compute-Engine";

type Labels = BTreeMap<String, String>;

fn put(labels: &mut Labels, key: &str, value: impl ToString) {
    labels.insert(format!("nvidia.com/{key}"), value.to_string());
}

/// Product, replicas and strategy of one resource labeler (resource.go `newResourceLabeler`):
/// `-SHARED` only when replicated and not renamed.
fn sharing_labels(labels: &mut Labels, prefix: &str, product: String, sharing: &Sharing, resource: &str) {
    let replicas = sharing.replicas_of(resource);
    let shared = replicas > 1;
    let product =
        if shared && sharing.renaming == Renaming::Keep { format!("{product}-SHARED") } else { product };
    let strategy = if shared { sharing.strategy } else { SharingStrategy::None };
    put(labels, &format!("{prefix}.product"), product);
    put(labels, &format!("{prefix}.replicas"), replicas);
    put(labels, &format!("{prefix}.sharing-strategy"), strategy.as_str());
}

fn mig_device_labels(labels: &mut Labels, prefix: &str, profile: &MigProfile) {
    put(labels, &format!("{prefix}.memory"), profile.memory_mib);
    put(labels, &format!("{prefix}.multiprocessors"), profile.multiprocessors);
    put(labels, &format!("{prefix}.slices.gi"), profile.slices);
    put(labels, &format!("{prefix}.slices.ci"), profile.slices);
    for (engine, n) in ["copy", "decoder", "encoder", "jpeg", "ofa"].iter().zip(profile.engines) {
        put(labels, &format!("{prefix}.engines.{engine}"), n);
    }
}

/// The labels GFD writes for this node; `timestamp` is `nvidia.com/gfd.timestamp` (Unix seconds).
pub fn gfd_labels(
    gpus: &NodeGpus,
    geometry: &MigGeometry,
    config: &EffectiveConfig,
    timestamp: i64,
) -> Labels {
    let mut labels = Labels::new();
    let model = gpus.model;
    let (major, minor) = model.compute_capability();
    put(&mut labels, "gpu.family", model.family());
    put(&mut labels, "gpu.compute.major", major);
    put(&mut labels, "gpu.compute.minor", minor);
    put(&mut labels, "gpu.machine", MACHINE);
    put(&mut labels, "gpu.mode", "compute");
    let (d_major, d_minor, d_rev) = DRIVER_VERSION;
    put(&mut labels, "cuda.driver-version.major", d_major);
    put(&mut labels, "cuda.driver-version.minor", d_minor);
    put(&mut labels, "cuda.driver-version.revision", format!("{d_rev:02}"));
    put(&mut labels, "cuda.driver-version.full", format!("{d_major}.{d_minor}.{d_rev:02}"));
    let (c_major, c_minor) = CUDA_VERSION;
    put(&mut labels, "cuda.runtime-version.major", c_major);
    put(&mut labels, "cuda.runtime-version.minor", c_minor);
    put(&mut labels, "cuda.runtime-version.full", format!("{c_major}.{c_minor}"));
    put(&mut labels, "gfd.timestamp", timestamp);
    put(&mut labels, "mig.capable", gpus.mig == MigCapability::Capable);
    put(&mut labels, "mps.capable", config.sharing.strategy == SharingStrategy::Mps);
    if config.mig_strategy != MigStrategy::None {
        put(&mut labels, "mig.strategy", config.mig_strategy.as_str());
    }

    let full_gpu = |labels: &mut Labels| {
        put(labels, "gpu.count", gpus.count);
        put(labels, "gpu.memory", gpus.memory_mib);
        sharing_labels(labels, "gpu", model.product().to_string(), &config.sharing, "nvidia.com/gpu");
    };
    match (config.mig_strategy, geometry) {
        (MigStrategy::None, _) | (_, MigGeometry::Disabled) => full_gpu(&mut labels),
        (MigStrategy::Single, MigGeometry::Enabled(profiles)) => {
            let used: Vec<_> = profiles.iter().filter(|(_, n)| **n > 0).collect();
            match used.as_slice() {
                [(name, per_gpu)] if model.mig_profile(name).is_some() => {
                    let profile = model.mig_profile(name).expect("checked");
                    put(&mut labels, "gpu.count", **per_gpu * gpus.count);
                    let product = format!("{}-MIG-{name}", model.product());
                    sharing_labels(&mut labels, "gpu", product, &config.sharing, "nvidia.com/gpu");
                    mig_device_labels(&mut labels, "gpu", profile);
                }
                // mig-strategy.go: "Invalid configuration detected for mig-strategy=single".
                _ => {
                    put(&mut labels, "gpu.product", format!("{}-MIG-INVALID", model.product()));
                    put(&mut labels, "gpu.count", 0);
                    put(&mut labels, "gpu.replicas", 0);
                    put(&mut labels, "gpu.sharing-strategy", "");
                    put(&mut labels, "gpu.memory", 0);
                }
            }
        }
        (MigStrategy::Mixed, MigGeometry::Enabled(profiles)) => {
            // The full-GPU labeler of MIG-enabled GPUs: replicas 0, strategy none (§4.2).
            put(&mut labels, "gpu.count", gpus.count);
            put(&mut labels, "gpu.memory", gpus.memory_mib);
            put(&mut labels, "gpu.product", model.product());
            put(&mut labels, "gpu.replicas", 0);
            put(&mut labels, "gpu.sharing-strategy", "none");
            for (name, per_gpu) in profiles.iter().filter(|(_, n)| **n > 0) {
                let Some(profile) = model.mig_profile(name) else { continue };
                let prefix = format!("mig-{name}");
                put(&mut labels, &format!("{prefix}.count"), per_gpu * gpus.count);
                let product = format!("{}-MIG-{name}", model.product());
                sharing_labels(
                    &mut labels,
                    &prefix,
                    product,
                    &config.sharing,
                    &format!("nvidia.com/{prefix}"),
                );
                mig_device_labels(&mut labels, &prefix, profile);
            }
        }
    }
    labels
}

/// The labels the GPU Operator writes on a node NFD reports an NVIDIA PCI device on
/// (controllers/state_manager.go `gpuNodeLabels`): `gpu.present` and the operand deploy labels.
pub fn operator_labels() -> Labels {
    let mut labels = Labels::new();
    put(&mut labels, "gpu.present", "true");
    for operand in [
        "driver",
        "gpu-feature-discovery",
        "container-toolkit",
        "device-plugin",
        "dcgm",
        "dcgm-exporter",
        "node-status-exporter",
        "operator-validator",
        "mig-manager",
    ] {
        put(&mut labels, &format!("gpu.deploy.{operand}"), "true");
    }
    labels
}
