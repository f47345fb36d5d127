//! What a node advertises in `status.capacity`/`allocatable` for the device plugin's state: the
//! resource-name matrix of `docs/gpu.md` (k8s-device-plugin `internal/rm/rm.go`), with stale
//! resources kept at 0.

use std::collections::BTreeMap;

use super::{
    config::{EffectiveConfig, MigStrategy, Renaming, SharingStrategy},
    hardware::{MigGeometry, NodeGpus},
};

/// Why a plugin with a valid config still advertises nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `migStrategy: single` needs every GPU partitioned into one profile.
    #[error(
        "Invalid configuration detected for mig-strategy=single: at least one device with migEnabled=true was not configured correctly"
    )]
    InvalidMigSingle,
    /// MPS cannot share MIG devices (internal/plugin/mps.go).
    #[error("sharing using MPS is not supported for MIG devices")]
    MpsOnMig,
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The prefix of every resource the NVIDIA plugin advertises.
pub const RESOURCE_PREFIX: &str = "nvidia.com/";

/// Whether a device plugin serves on the node, and with what.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PluginState<'a> {
    /// No plugin registered with the kubelet: no GPU resources.
    NotRunning,
    /// The plugin serves this effective config.
    Serving(&'a EffectiveConfig),
}

/// The device resources before sharing: name → devices (mig-strategy.go in v0.17.4).
fn base_resources(
    gpus: &NodeGpus,
    geometry: &MigGeometry,
    strategy: MigStrategy,
) -> Result<Vec<(String, u64)>> {
    let count = u64::from(gpus.count);
    Ok(match (strategy, geometry) {
        (MigStrategy::None, _) | (_, MigGeometry::Disabled) => vec![("nvidia.com/gpu".to_string(), count)],
        (MigStrategy::Single, MigGeometry::Enabled(profiles)) => {
            let used: Vec<_> = profiles.iter().filter(|(_, n)| **n > 0).collect();
            match used.as_slice() {
                [(_, per_gpu)] => vec![("nvidia.com/gpu".to_string(), u64::from(**per_gpu) * count)],
                _ => return Err(Error::InvalidMigSingle),
            }
        }
        (MigStrategy::Mixed, MigGeometry::Enabled(profiles)) => profiles
            .iter()
            .filter(|(_, n)| **n > 0)
            .map(|(name, per_gpu)| (format!("nvidia.com/mig-{name}"), u64::from(*per_gpu) * count))
            .collect(),
    })
}

/// The resources a running plugin advertises: name → count, after replication and renaming.
pub fn advertised(
    gpus: &NodeGpus,
    geometry: &MigGeometry,
    state: PluginState<'_>,
) -> Result<BTreeMap<String, u64>> {
    let PluginState::Serving(config) = state else { return Ok(BTreeMap::new()) };
    if config.sharing.strategy == SharingStrategy::Mps
        && config.mig_strategy != MigStrategy::None
        && *geometry != MigGeometry::Disabled
    {
        return Err(Error::MpsOnMig);
    }
    let mut out = BTreeMap::new();
    for (name, devices) in base_resources(gpus, geometry, config.mig_strategy)? {
        let replicas = config.sharing.replicas_of(&name);
        let name = if replicas > 1 && config.sharing.renaming == Renaming::Shared {
            format!("{name}.shared")
        } else {
            name
        };
        *out.entry(name).or_insert(0) += devices * u64::from(replicas);
    }
    Ok(out)
}

/// The node's extended resources after an update: `advertised`, plus every `nvidia.com/*` key the
/// node had before at `"0"` (the kubelet keeps registered extended resources; `docs/gpu.md`).
/// `previous` is the node's current capacity map (other keys are ignored).
pub fn node_resources(
    previous: &BTreeMap<String, String>,
    advertised: &BTreeMap<String, u64>,
) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, String> = previous
        .keys()
        .filter(|key| key.starts_with(RESOURCE_PREFIX))
        .map(|key| (key.clone(), "0".to_string()))
        .collect();
    out.extend(advertised.iter().map(|(key, n)| (key.clone(), n.to_string())));
    out
}
