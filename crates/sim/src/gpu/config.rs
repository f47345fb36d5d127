//! The device plugin's `version: v1` config file: parsing with the real plugin's validation
//! errors and warnings, and the effective config once env vars override it (`docs/gpu.md`).

use serde::Deserialize;

/// Errors the plugin reports for a config it cannot run with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The file does not parse or fails a field check; the message is the plugin's full chain.
    #[error(
        "unable to load config: unable to finalize config: unable to parse config file: error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: {0}"
    )]
    Parse(String),
    /// The file parsed but a flag check in `validateFlags` (cmd/nvidia-device-plugin/main.go) failed.
    #[error("unable to validate flags: {0}")]
    Flags(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// `flags.migStrategy` / `MIG_STRATEGY`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MigStrategy {
    /// MIG ignored: whole GPUs.
    #[default]
    None,
    /// Every GPU has the same single profile; MIG devices advertised as `nvidia.com/gpu`.
    Single,
    /// `nvidia.com/mig-<profile>` per profile, `nvidia.com/gpu` for non-MIG GPUs.
    Mixed,
}

impl MigStrategy {
    /// Parses `none|single|mixed`; anything else is the plugin's `unknown MIG strategy: <v>`.
    pub fn parse(value: &str) -> Result<MigStrategy> {
        match value {
            "none" => Ok(MigStrategy::None),
            "single" => Ok(MigStrategy::Single),
            "mixed" => Ok(MigStrategy::Mixed),
            other => Err(Error::Flags(format!("unknown MIG strategy: {other}"))),
        }
    }

    /// The value as written.
    pub fn as_str(self) -> &'static str {
        match self {
            MigStrategy::None => "none",
            MigStrategy::Single => "single",
            MigStrategy::Mixed => "mixed",
        }
    }
}

/// How replicas of a device are shared (`Sharing.SharingStrategy()`, api/config/v1/sharing.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SharingStrategy {
    /// Not shared.
    #[default]
    None,
    /// `sharing.timeSlicing`.
    TimeSlicing,
    /// `sharing.mps`.
    Mps,
}

impl SharingStrategy {
    /// The value GFD writes in `nvidia.com/gpu.sharing-strategy`.
    pub fn as_str(self) -> &'static str {
        match self {
            SharingStrategy::None => "none",
            SharingStrategy::TimeSlicing => "time-slicing",
            SharingStrategy::Mps => "mps",
        }
    }
}

/// Whether a shared resource is renamed to `<name>.shared` (`renameByDefault`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Renaming {
    /// Keep the name (GFD then appends `-SHARED` to the product).
    #[default]
    Keep,
    /// Advertise `<name>.shared`.
    Shared,
}

/// One replicated resource: fully-qualified name and replicas per device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicatedResource {
    /// e.g. `nvidia.com/gpu`, `nvidia.com/mig-1g.5gb`.
    pub name: String,
    /// Replicas per device (>= 2).
    pub replicas: u32,
}

/// The effective sharing settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sharing {
    /// Which strategy is in force.
    pub strategy: SharingStrategy,
    /// `renameByDefault`.
    pub renaming: Renaming,
    /// `failRequestsGreaterThanOne` (MPS always enforces it, rm.go v0.17.4).
    pub fail_requests_greater_than_one: bool,
    /// The replicated resources of the strategy in force.
    pub resources: Vec<ReplicatedResource>,
}

impl Sharing {
    /// Replicas for an advertised resource name (1 when not replicated).
    pub fn replicas_of(&self, resource: &str) -> u32 {
        self.resources.iter().find(|r| r.name == resource).map_or(1, |r| r.replicas)
    }
}

/// A parsed config, before env overrides.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginConfig {
    /// `flags.migStrategy` as written (`None` when absent).
    pub mig_strategy: Option<MigStrategy>,
    /// `sharing`.
    pub sharing: Sharing,
    /// Warnings `DisableResourceNamingInConfig` logs for ignored fields (config.go).
    pub warnings: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawConfig {
    version: Option<String>,
    #[serde(default)]
    flags: RawFlags,
    resources: Option<serde_json::Value>,
    #[serde(default)]
    sharing: RawSharing,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawFlags {
    mig_strategy: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct RawSharing {
    time_slicing: Option<RawReplicated>,
    mps: Option<RawReplicated>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawReplicated {
    #[serde(default)]
    rename_by_default: bool,
    #[serde(default)]
    fail_requests_greater_than_one: bool,
    resources: Option<Vec<serde_json::Value>>,
}

/// The kind of `sharing` block, for the warnings' wording.
fn replicated(
    raw: Option<RawReplicated>,
    block: &str,
    warnings: &mut Vec<String>,
) -> Result<Option<(RawReplicated, Vec<ReplicatedResource>)>> {
    let Some(raw) = raw else { return Ok(None) };
    // replicas.go ReplicatedResources.UnmarshalJSON
    let items = match &raw.resources {
        Some(items) if !items.is_empty() => items.clone(),
        _ => return Err(Error::Parse("no resources specified".to_string())),
    };
    let mut resources = Vec::new();
    for item in items {
        let name = match item.get("name").and_then(|n| n.as_str()) {
            Some(name) if !name.is_empty() => resource_name(name)?,
            _ => return Err(Error::Parse("no resource name specified".to_string())),
        };
        if let Some(devices) = item.get("devices") {
            match devices {
                serde_json::Value::String(s) if s != "all" => {
                    return Err(Error::Parse(format!(
                        "devices set as '{s}' but the only valid string input is 'all'"
                    )));
                }
                serde_json::Value::Number(n) if n.as_i64().is_some_and(|n| n <= 0) => {
                    return Err(Error::Parse(format!(
                        "devices set as '{n}' but a count of devices must be > 0"
                    )));
                }
                serde_json::Value::String(_) => {}
                _ => warnings.push(format!(
                    "Customizing the 'devices' field in sharing.{block}.resources is not yet supported in the config. Ignoring..."
                )),
            }
        }
        if item.get("rename").is_some() {
            warnings.push(format!(
                "Setting the 'rename' field in sharing.{block}.resources is not yet supported in the config. Ignoring..."
            ));
        }
        let replicas = match item.get("replicas") {
            None => return Err(Error::Parse("no replicas specified".to_string())),
            Some(value) => value.as_i64().ok_or_else(|| {
                Error::Parse(format!(
                    "json: cannot unmarshal {} into Go struct field ReplicatedResource.replicas of type int",
                    json_kind(value)
                ))
            })?,
        };
        // replicas.go (v0.17.4): `if s.Replicas < 2`.
        if replicas < 2 {
            return Err(Error::Parse("number of replicas must be >= 2".to_string()));
        }
        resources.push(ReplicatedResource { name, replicas: replicas as u32 });
    }
    Ok(Some((raw, resources)))
}

fn json_kind(value: &serde_json::Value) -> &'static str {
    match value {
        serde_json::Value::String(_) => "string",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Array(_) => "array",
        serde_json::Value::Object(_) => "object",
        serde_json::Value::Null => "null",
    }
}

/// `NewResourceName` (api/config/v1/resources.go): prefixes `nvidia.com/`, checks the length.
fn resource_name(name: &str) -> Result<String> {
    let full = if name.contains('/') { name.to_string() } else { format!("nvidia.com/{name}") };
    if full.len() > 63 {
        return Err(Error::Parse(format!(
            "fully-qualified resource name must be 63 characters or less: {full}"
        )));
    }
    let valid = full.split_once('/').is_some_and(|(prefix, rest)| {
        prefix == "nvidia.com"
            && !rest.is_empty()
            && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    });
    if !valid {
        return Err(Error::Parse(format!("incorrect format for resource name '{full}'")));
    }
    Ok(full)
}

impl PluginConfig {
    /// Parses a config file. An empty file (the config-manager's `empty` fallback, a symlink to
    /// `/dev/null`) is the default config.
    pub fn parse(yaml: &str) -> Result<PluginConfig> {
        if yaml.trim().is_empty() {
            return Ok(PluginConfig::default());
        }
        let raw: RawConfig = serde_saphyr::from_str(yaml)
            .map_err(|e| Error::Parse(e.to_string().lines().next().unwrap_or_default().to_string()))?;
        match raw.version.as_deref() {
            None | Some("") | Some("v1") => {}
            Some(other) => return Err(Error::Parse(format!("unknown version: {other}"))),
        }
        let mut warnings = Vec::new();
        if raw.resources.is_some() {
            warnings.push(
                "Customizing the 'resources' field is not yet supported in the config. Ignoring..."
                    .to_string(),
            );
        }
        let mig_strategy = raw.flags.mig_strategy.as_deref().map(MigStrategy::parse).transpose()?;
        let time_slicing = replicated(raw.sharing.time_slicing, "timeSlicing", &mut warnings)?;
        let mps = replicated(raw.sharing.mps, "mps", &mut warnings)?;
        // sharing.go SharingStrategy(): MPS wins when it replicates anything, then time-slicing.
        let sharing = match (mps, time_slicing) {
            (Some((raw, resources)), _) => Sharing {
                strategy: SharingStrategy::Mps,
                renaming: if raw.rename_by_default { Renaming::Shared } else { Renaming::Keep },
                fail_requests_greater_than_one: true,
                resources,
            },
            (None, Some((raw, resources))) => Sharing {
                strategy: SharingStrategy::TimeSlicing,
                renaming: if raw.rename_by_default { Renaming::Shared } else { Renaming::Keep },
                fail_requests_greater_than_one: raw.fail_requests_greater_than_one,
                resources,
            },
            (None, None) => Sharing::default(),
        };
        Ok(PluginConfig { mig_strategy, sharing, warnings })
    }
}

/// Which binary of the image reads the config: each validates the flags its own way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Binary {
    /// `nvidia-device-plugin` (cmd/nvidia-device-plugin/main.go `validateFlags`: MIG strategy,
    /// MPS root, MPS with mixed).
    #[default]
    DevicePlugin,
    /// `gpu-feature-discovery`, whose `validateFlags` (cmd/gpu-feature-discovery/main.go) checks
    /// only `--device-discovery-strategy`: it labels an MPS config without `MPS_ROOT`.
    FeatureDiscovery,
}

/// The plugin container's env that overrides the file (precedence flag > env > file, §1.1).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PluginEnv {
    /// `MIG_STRATEGY`.
    pub mig_strategy: Option<String>,
    /// `MPS_ROOT` (the Helm chart and the operator set `/run/nvidia/mps`).
    pub mps_root: Option<String>,
    /// The binary that reads the config.
    pub binary: Binary,
}

/// What the plugin runs with: file + env, validated as `validateFlags` does.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EffectiveConfig {
    /// The MIG strategy in force.
    pub mig_strategy: MigStrategy,
    /// Sharing in force.
    pub sharing: Sharing,
}

impl EffectiveConfig {
    /// Applies env overrides to `file` and checks the combination.
    pub fn resolve(file: &PluginConfig, env: &PluginEnv) -> Result<EffectiveConfig> {
        let mig_strategy = match env.mig_strategy.as_deref().filter(|v| !v.is_empty()) {
            Some(value) => MigStrategy::parse(value)?,
            None => file.mig_strategy.unwrap_or_default(),
        };
        if file.sharing.strategy == SharingStrategy::Mps && env.binary == Binary::DevicePlugin {
            if mig_strategy == MigStrategy::Mixed {
                return Err(Error::Flags("using --mig-strategy=mixed is not supported with MPS".to_string()));
            }
            if env.mps_root.as_deref().is_none_or(str::is_empty) {
                return Err(Error::Flags("using MPS requires --mps-root to be specified".to_string()));
            }
        }
        Ok(EffectiveConfig { mig_strategy, sharing: file.sharing.clone() })
    }

    /// Parses `yaml` and resolves it against `env`.
    pub fn load(yaml: &str, env: &PluginEnv) -> Result<(EffectiveConfig, Vec<String>)> {
        let file = PluginConfig::parse(yaml)?;
        Ok((EffectiveConfig::resolve(&file, env)?, file.warnings))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_slicing_with_rename() {
        let yaml = "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: gpu\n      replicas: 10\n";
        let config = PluginConfig::parse(yaml).unwrap();
        assert_eq!(config.sharing.strategy, SharingStrategy::TimeSlicing);
        assert_eq!(config.sharing.renaming, Renaming::Shared);
        assert_eq!(config.sharing.replicas_of("nvidia.com/gpu"), 10);
    }

    #[test]
    fn mps_wins_over_time_slicing() {
        let yaml = "sharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 5}]\n";
        let config = PluginConfig::parse(yaml).unwrap();
        assert_eq!(
            (config.sharing.strategy, config.sharing.replicas_of("nvidia.com/gpu")),
            (SharingStrategy::Mps, 5)
        );
        let env = PluginEnv {
            mig_strategy: Some("mixed".into()),
            mps_root: Some("/run/nvidia/mps".into()),
            ..Default::default()
        };
        assert_eq!(
            EffectiveConfig::resolve(&config, &env).unwrap_err().to_string(),
            "unable to validate flags: using --mig-strategy=mixed is not supported with MPS"
        );
    }

    #[test]
    fn feature_discovery_labels_mps_without_mps_root() {
        // The chart's GFD container sets no MPS_ROOT; only the plugin insists on it.
        let config =
            PluginConfig::parse("sharing:\n  mps:\n    resources: [{name: gpu, replicas: 2}]\n").unwrap();
        let plugin = PluginEnv::default();
        assert_eq!(
            EffectiveConfig::resolve(&config, &plugin).unwrap_err().to_string(),
            "unable to validate flags: using MPS requires --mps-root to be specified"
        );
        let gfd = PluginEnv { binary: Binary::FeatureDiscovery, ..Default::default() };
        let resolved = EffectiveConfig::resolve(&config, &gfd).unwrap();
        assert_eq!(resolved.sharing.strategy, SharingStrategy::Mps);
    }

    #[test]
    fn validation_errors_are_the_plugins() {
        let error = |yaml: &str| PluginConfig::parse(yaml).unwrap_err().to_string();
        insta::assert_snapshot!(
            error("version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 1\n"),
            @"unable to load config: unable to finalize config: unable to parse config file: error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: number of replicas must be >= 2"
        );
        assert!(error("sharing:\n  timeSlicing: {resources: []}\n").ends_with(": no resources specified"));
        assert!(
            error("sharing:\n  mps: {resources: [{replicas: 2}]}\n")
                .ends_with(": no resource name specified")
        );
        assert!(error("sharing:\n  mps: {resources: [{name: gpu}]}\n").ends_with(": no replicas specified"));
        assert!(error("version: v2\n").ends_with(": unknown version: v2"));
        assert_eq!(
            PluginConfig::parse("flags: {migStrategy: weird}\n").unwrap_err().to_string(),
            "unable to validate flags: unknown MIG strategy: weird"
        );
    }

    #[test]
    fn ignored_fields_warn_and_env_overrides_the_file() {
        let yaml = "flags: {migStrategy: none}\nresources: {gpus: []}\nsharing:\n  timeSlicing:\n    resources: [{name: gpu, replicas: 2, rename: foo, devices: [0]}]\n";
        let config = PluginConfig::parse(yaml).unwrap();
        assert_eq!(config.warnings.len(), 3, "{:?}", config.warnings);
        let env = PluginEnv { mig_strategy: Some("single".into()), mps_root: None, ..Default::default() };
        assert_eq!(EffectiveConfig::resolve(&config, &env).unwrap().mig_strategy, MigStrategy::Single);
        assert_eq!(PluginConfig::parse("").unwrap(), PluginConfig::default());
    }
}
