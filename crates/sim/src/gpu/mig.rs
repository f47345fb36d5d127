//! The MIG manager (k8s-mig-manager): `nvidia.com/mig.config` drives the node's MIG geometry
//! and `nvidia.com/mig.config.state`, as a state machine stepped by label changes and the clock
//! (mig-parted pkg/mig/reconfigure/reconfigure.go; `docs/gpu.md`).

use std::collections::BTreeMap;

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::hardware::{self, GpuModel, MigGeometry};

/// The desired-config label.
pub const MIG_CONFIG_LABEL: &str = "nvidia.com/mig.config";
/// The state label.
pub const MIG_STATE_LABEL: &str = "nvidia.com/mig.config.state";
/// What the operator sets on MIG-capable nodes without the label (`migManager.config.default`).
pub const DEFAULT_MIG_CONFIG: &str = "all-disabled";
/// The value deploy labels take while GPU clients are shut down.
pub const PAUSED: &str = "paused-for-mig-change";
/// How long applying a new geometry takes on the simulated clock.
pub const APPLY_DURATION: SignedDuration = SignedDuration::from_secs(10);

/// Deploy labels the manager pauses while it reconfigures (reconfigure.go).
pub const PAUSED_DEPLOY_LABELS: [&str; 6] = [
    "nvidia.com/gpu.deploy.device-plugin",
    "nvidia.com/gpu.deploy.gpu-feature-discovery",
    "nvidia.com/gpu.deploy.dcgm-exporter",
    "nvidia.com/gpu.deploy.dcgm",
    "nvidia.com/gpu.deploy.nvsm",
    "nvidia.com/gpu.deploy.client",
];

/// `nvidia.com/mig.config.state` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MigConfigState {
    /// Reconfiguring.
    Pending,
    /// The desired config is applied.
    Success,
    /// Unknown config or an apply error.
    Failed,
}

impl MigConfigState {
    /// The label value.
    pub fn as_str(self) -> &'static str {
        match self {
            MigConfigState::Pending => "pending",
            MigConfigState::Success => "success",
            MigConfigState::Failed => "failed",
        }
    }
}

/// Where the manager is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MigManagerPhase {
    /// Nothing to do: the applied config is the desired one (or the desired one failed).
    Idle,
    /// Applying `config`; done at `done_at`. `paused` are the deploy labels it set to paused.
    Applying {
        /// The config being applied.
        config: String,
        /// Its geometry.
        geometry: MigGeometry,
        /// When the apply finishes.
        done_at: Timestamp,
        /// Deploy labels paused (restored to `true` afterwards).
        paused: Vec<String>,
    },
}

/// A node label patch: key → new value (`None` removes).
pub type LabelPatch = BTreeMap<String, Option<String>>;

/// The MIG manager of one node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MigManager {
    /// The node's GPU model.
    pub model: GpuModel,
    /// The config whose geometry is on the GPUs.
    pub applied: String,
    /// The geometry on the GPUs.
    pub geometry: MigGeometry,
    /// The phase.
    pub phase: MigManagerPhase,
    /// The manager container's log.
    pub log: Vec<String>,
}

impl MigManager {
    /// A manager on GPUs currently in `geometry` (named `applied`).
    pub fn new(model: GpuModel, applied: &str, geometry: MigGeometry) -> MigManager {
        MigManager {
            model,
            applied: applied.to_string(),
            geometry,
            phase: MigManagerPhase::Idle,
            log: Vec::new(),
        }
    }

    /// The node's labels changed (or the manager started): react to `nvidia.com/mig.config`.
    pub fn on_labels(&mut self, labels: &BTreeMap<String, String>, now: Timestamp) -> LabelPatch {
        let mut patch = LabelPatch::new();
        let Some(desired) = labels.get(MIG_CONFIG_LABEL).cloned() else { return patch };
        if let MigManagerPhase::Applying { config, .. } = &self.phase
            && *config == desired
        {
            return patch;
        }
        let state = |patch: &mut LabelPatch, log: &mut Vec<String>, state: MigConfigState| {
            log.push(format!("Changing the '{MIG_STATE_LABEL}' node label to '{}'", state.as_str()));
            patch.insert(MIG_STATE_LABEL.to_string(), Some(state.as_str().to_string()));
        };
        self.log.push(format!("Updating to MIG config: {desired}"));
        match hardware::mig_geometry(self.model, &desired) {
            Err(error) => {
                self.log.push(format!("Error validating MIG config: {error}"));
                self.phase = MigManagerPhase::Idle;
                state(&mut patch, &mut self.log, MigConfigState::Failed);
            }
            Ok(geometry) if geometry == self.geometry => {
                self.log.push("Selected MIG configuration currently applied".to_string());
                self.applied = desired;
                self.phase = MigManagerPhase::Idle;
                if labels.get(MIG_STATE_LABEL).map(String::as_str) != Some("success") {
                    state(&mut patch, &mut self.log, MigConfigState::Success);
                }
            }
            Ok(geometry) => {
                state(&mut patch, &mut self.log, MigConfigState::Pending);
                self.log.push(
                    "Shutting down all GPU clients in Kubernetes by disabling their component-specific nodeSelector labels"
                        .to_string(),
                );
                let mut paused = Vec::new();
                for key in PAUSED_DEPLOY_LABELS {
                    if labels.get(key).is_some_and(|v| v != "false") {
                        patch.insert(key.to_string(), Some(PAUSED.to_string()));
                        paused.push(key.to_string());
                    }
                }
                self.log.push("Applying the selected MIG config to the node".to_string());
                self.phase = MigManagerPhase::Applying {
                    config: desired,
                    geometry,
                    done_at: now + APPLY_DURATION,
                    paused,
                };
            }
        }
        patch
    }

    /// The clock moved: finish an apply that is due. Returns the label patch (state `success`,
    /// deploy labels restored) and whether the geometry changed.
    pub fn tick(&mut self, now: Timestamp) -> LabelPatch {
        let mut patch = LabelPatch::new();
        let MigManagerPhase::Applying { done_at, .. } = &self.phase else { return patch };
        if now < *done_at {
            return patch;
        }
        let MigManagerPhase::Applying { config, geometry, paused, .. } =
            std::mem::replace(&mut self.phase, MigManagerPhase::Idle)
        else {
            unreachable!("matched above")
        };
        self.applied = config;
        self.geometry = geometry;
        self.log.push("MIG configuration applied successfully".to_string());
        self.log.push(
            "Restarting all GPU clients previously shutdown in Kubernetes by reenabling their component-specific nodeSelector labels"
                .to_string(),
        );
        for key in paused {
            patch.insert(key, Some("true".to_string()));
        }
        self.log.push(format!("Changing the '{MIG_STATE_LABEL}' node label to 'success'"));
        patch.insert(MIG_STATE_LABEL.to_string(), Some(MigConfigState::Success.as_str().to_string()));
        patch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn pending_then_success_with_paused_clients() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut manager = MigManager::new(GpuModel::H100_80GB, "all-disabled", MigGeometry::Disabled);
        let node = labels(&[
            (MIG_CONFIG_LABEL, "all-1g.10gb"),
            ("nvidia.com/gpu.deploy.device-plugin", "true"),
            ("nvidia.com/gpu.deploy.dcgm", "false"),
        ]);
        let patch = manager.on_labels(&node, now);
        assert_eq!(patch[MIG_STATE_LABEL].as_deref(), Some("pending"));
        assert_eq!(patch["nvidia.com/gpu.deploy.device-plugin"].as_deref(), Some(PAUSED));
        assert!(!patch.contains_key("nvidia.com/gpu.deploy.dcgm"));
        assert!(manager.tick(now + SignedDuration::from_secs(1)).is_empty());
        let patch = manager.tick(now + APPLY_DURATION);
        assert_eq!(patch[MIG_STATE_LABEL].as_deref(), Some("success"));
        assert_eq!(patch["nvidia.com/gpu.deploy.device-plugin"].as_deref(), Some("true"));
        assert_eq!(manager.geometry.devices_per_gpu(), 7);
        assert_eq!(manager.phase, MigManagerPhase::Idle);
    }

    #[test]
    fn unknown_config_fails_and_keeps_the_geometry() {
        let now: Timestamp = "2026-01-01T00:00:00Z".parse().unwrap();
        let mut manager = MigManager::new(GpuModel::A100_40GB, "all-disabled", MigGeometry::Disabled);
        let patch = manager.on_labels(&labels(&[(MIG_CONFIG_LABEL, "all-9g.99gb")]), now);
        assert_eq!(patch[MIG_STATE_LABEL].as_deref(), Some("failed"));
        assert_eq!(manager.geometry, MigGeometry::Disabled);
        let patch = manager.on_labels(&labels(&[(MIG_CONFIG_LABEL, "all-disabled")]), now);
        assert_eq!(patch[MIG_STATE_LABEL].as_deref(), Some("success"));
    }
}
