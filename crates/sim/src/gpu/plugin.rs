//! The device-plugin pod: config-manager selection (init + sidecar) and the plugin's reloads,
//! as an explicit state machine fed label changes (cmd/config-manager/main.go, v0.17.4).

use std::collections::BTreeMap;

use serde_json::json;

use super::config::{Binary, EffectiveConfig, MigStrategy, PluginEnv, Renaming, SharingStrategy};

/// Why the config-manager could not pick a config (`updateConfigName`); it then exits 1.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The label (or `DEFAULT_CONFIG`) names a key the ConfigMap lacks. Upstream prints the label
    /// value even for a missing default (so it is empty then): kept as upstream.
    #[error("specified config {0} does not exist")]
    DoesNotExist(String),
    /// The mounted ConfigMap has no keys.
    #[error("no configuration files available")]
    NoFiles,
    /// No label, no default, and every fallback failed.
    #[error("no config was set, no default was provided, and all fallbacks failed")]
    FallbacksFailed,
    /// `FALLBACK_STRATEGIES` names something else than named/single/empty.
    #[error("unknown fallback strategy: {0}")]
    UnknownFallback(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The node label the config-manager reads (`NODE_LABEL`).
pub const CONFIG_LABEL: &str = "nvidia.com/device-plugin.config";

/// The config-manager's settings from its env (`DEFAULT_CONFIG`, `FALLBACK_STRATEGIES`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConfigManagerEnv {
    /// `DEFAULT_CONFIG` (empty = unset).
    pub default_config: String,
    /// `FALLBACK_STRATEGIES`, comma-separated in the env (the chart: `named,single`; the
    /// operator: `empty`).
    pub fallback_strategies: Vec<String>,
}

impl ConfigManagerEnv {
    /// From the env values as written.
    pub fn from_env(default_config: Option<&str>, fallback_strategies: Option<&str>) -> ConfigManagerEnv {
        ConfigManagerEnv {
            default_config: default_config.unwrap_or_default().to_string(),
            fallback_strategies: fallback_strategies
                .unwrap_or_default()
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }
}

/// The config the config-manager links to `/config/config.yaml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// A key of the mounted ConfigMap.
    Named(String),
    /// The `empty` fallback: a link to `/dev/null`, i.e. the default config.
    Empty,
}

/// Picks the config for `label` among the ConfigMap's `keys` (`updateConfigName`); appends the
/// config-manager's log lines to `log`.
pub fn select_config(
    label: &str,
    keys: &[String],
    env: &ConfigManagerEnv,
    log: &mut Vec<String>,
) -> Result<Selection> {
    // ConfigMap volumes hold `..data`-style entries upstream skips; keys never start with `..`.
    if keys.is_empty() {
        return Err(Error::NoFiles);
    }
    let has = |name: &str| keys.iter().any(|k| k == name);
    if !label.is_empty() {
        return if has(label) {
            Ok(Selection::Named(label.to_string()))
        } else {
            Err(Error::DoesNotExist(label.to_string()))
        };
    }
    if !env.default_config.is_empty() {
        log.push(format!("No value set. Selecting default name: {}", env.default_config));
        return if has(&env.default_config) {
            Ok(Selection::Named(env.default_config.clone()))
        } else {
            Err(Error::DoesNotExist(label.to_string()))
        };
    }
    log.push(format!(
        "No value set and no default set. Attempting fallback strategies: [{}]",
        env.fallback_strategies.join(" ")
    ));
    for fallback in &env.fallback_strategies {
        match fallback.as_str() {
            "named" => {
                log.push("Attempting to find config named: default".to_string());
                if has("default") {
                    return Ok(Selection::Named("default".to_string()));
                }
                log.push("No configuration named 'default' was found".to_string());
            }
            "single" => {
                log.push("Attempting to see if only a single config is available...".to_string());
                if let [only] = keys {
                    return Ok(Selection::Named(only.clone()));
                }
                log.push(format!("More than one configuration was found: [{}]", keys.join(" ")));
            }
            "empty" => {
                log.push("Falling back to an empty configuration".to_string());
                return Ok(Selection::Empty);
            }
            other => return Err(Error::UnknownFallback(other.to_string())),
        }
    }
    Err(Error::FallbacksFailed)
}

/// A container's state as the kubelet would report it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContainerState {
    /// Running.
    Running,
    /// Exited 1 and restarting with back-off (`CrashLoopBackOff` / `Init:CrashLoopBackOff`).
    CrashLoop {
        /// The error it logged last.
        error: String,
        /// Restarts so far.
        restarts: u32,
    },
}

/// The main plugin container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PluginPhase {
    /// The init container has not succeeded: the plugin never started.
    NotStarted,
    /// Serving this config.
    Serving(EffectiveConfig),
    /// It failed to load its config and crash-loops; nothing is advertised.
    Failed(String),
}

/// One device-plugin pod on one node (Helm chart or operator layout with config-manager, or the
/// static manifest without it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DevicePluginPod {
    /// The config-manager's settings; `None` for a pod without config-manager (static manifest).
    pub config_manager: Option<ConfigManagerEnv>,
    /// The plugin's env overrides.
    pub plugin_env: PluginEnv,
    /// The init container (`nvidia-device-plugin-init` / `config-manager-init`).
    pub init: ContainerState,
    /// The sidecar (`nvidia-device-plugin-sidecar` / `config-manager`).
    pub sidecar: ContainerState,
    /// What `/config/config.yaml` links to.
    pub applied: Option<Selection>,
    /// The plugin container.
    pub plugin: PluginPhase,
    /// Log lines per container name role: `init`, `sidecar`, `plugin`.
    pub logs: BTreeMap<&'static str, Vec<String>>,
}

/// The klog prefix-free "Running with config:" JSON (main.go logs the effective config).
fn running_with(config: &EffectiveConfig, env: &PluginEnv) -> String {
    let replicated = |strategy| {
        (config.sharing.strategy == strategy).then(|| {
            json!({
                "renameByDefault": config.sharing.renaming == Renaming::Shared,
                "failRequestsGreaterThanOne": config.sharing.fail_requests_greater_than_one,
                "resources": config.sharing.resources.iter()
                    .map(|r| json!({"name": r.name, "devices": "all", "replicas": r.replicas}))
                    .collect::<Vec<_>>(),
            })
        })
    };
    let mut sharing = json!({"timeSlicing": replicated(SharingStrategy::TimeSlicing).unwrap_or(json!({}))});
    if let Some(mps) = replicated(SharingStrategy::Mps) {
        sharing["mps"] = mps;
    }
    let body = json!({
        "version": "v1",
        "flags": {
            "migStrategy": config.mig_strategy.as_str(),
            "failOnInitError": true,
            "mpsRoot": env.mps_root.clone().unwrap_or_default(),
            "nvidiaDriverRoot": "/",
            "plugin": {"passDeviceSpecs": false, "deviceListStrategy": ["envvar"], "deviceIDStrategy": "uuid"},
        },
        "resources": {"gpus": [{"pattern": "*", "name": "nvidia.com/gpu"}]},
        "sharing": sharing,
    });
    format!("\nRunning with config:\n{}", serde_json::to_string_pretty(&body).expect("json"))
}

impl DevicePluginPod {
    /// Starts a pod: the init container selects a config from `label` and the ConfigMap
    /// `configs` (key → file), then the plugin loads it. A pod without config-manager reads
    /// `static_config` (its `CONFIG_FILE`, or none).
    pub fn start(
        config_manager: Option<ConfigManagerEnv>,
        plugin_env: PluginEnv,
        label: &str,
        configs: &BTreeMap<String, String>,
    ) -> DevicePluginPod {
        let mut pod = DevicePluginPod {
            config_manager,
            plugin_env,
            init: ContainerState::Running,
            sidecar: ContainerState::Running,
            applied: None,
            plugin: PluginPhase::NotStarted,
            logs: BTreeMap::new(),
        };
        let Some(env) = pod.config_manager.clone() else {
            let file = configs.values().next().cloned().unwrap_or_default();
            pod.load(&file);
            return pod;
        };
        match pod.run_config_manager("init", label, configs, &env) {
            Ok(selection) => {
                pod.applied = Some(selection.clone());
                pod.load(&file_of(&selection, configs));
                // The sidecar starts on the link the init container made (main.go `start`).
                if pod.run_config_manager("sidecar", label, configs, &env).is_ok() {
                    pod.logs
                        .entry("sidecar")
                        .or_default()
                        .push("Already configured. Skipping update...".into());
                }
            }
            Err(error) => pod.init = ContainerState::CrashLoop { error: error.to_string(), restarts: 0 },
        }
        pod
    }

    fn run_config_manager(
        &mut self,
        container: &'static str,
        label: &str,
        configs: &BTreeMap<String, String>,
        env: &ConfigManagerEnv,
    ) -> Result<Selection> {
        let log = self.logs.entry(container).or_default();
        log.push(format!("Waiting for change to '{CONFIG_LABEL}' label"));
        log.push(format!("Label change detected: {CONFIG_LABEL}={label}"));
        let keys: Vec<String> = configs.keys().cloned().collect();
        let result = select_config(label, &keys, env, log);
        if let Err(error) = &result {
            log.push(error.to_string());
        }
        result
    }

    fn load(&mut self, file: &str) {
        let log = self.logs.entry("plugin").or_default();
        match EffectiveConfig::load(file, &self.plugin_env) {
            Ok((config, warnings)) => {
                log.extend(warnings);
                match self.plugin_env.binary {
                    Binary::DevicePlugin => {
                        log.push(running_with(&config, &self.plugin_env));
                        log.push("Retrieving plugins.".to_string());
                    }
                    // cmd/gpu-feature-discovery/main.go `start` and `run`.
                    Binary::FeatureDiscovery => {
                        log.push("Loading configuration.".to_string());
                        log.push(running_with(&config, &self.plugin_env));
                        log.extend(
                            ["Start running", "Creating Labels", "Sleeping for 60s"].map(String::from),
                        );
                    }
                }
                self.plugin = PluginPhase::Serving(config);
            }
            Err(error) => {
                log.push(error.to_string());
                self.plugin = PluginPhase::Failed(error.to_string());
            }
        }
    }

    /// The node label changed (the sidecar's informer fires): re-select, and on a new selection
    /// re-link and SIGHUP the plugin, which re-reads the file as the volume holds it now. An
    /// unknown name makes the sidecar exit (CrashLoop) and leaves the plugin as it was. A
    /// crash-looping container runs no informer: it reads the label when the kubelet restarts it
    /// ([`DevicePluginPod::restart_config_manager`]).
    pub fn on_label_change(&mut self, label: &str, configs: &BTreeMap<String, String>) {
        let Some(env) = self.config_manager.clone() else { return };
        if self.crashing().is_some() {
            return;
        }
        self.run_sidecar(label, configs, &env, 0);
    }

    /// The config-manager container that is crash-looping, if one is: `init` or `sidecar`.
    pub fn crashing(&self) -> Option<&'static str> {
        match (&self.init, &self.sidecar) {
            (ContainerState::CrashLoop { .. }, _) => Some("init"),
            (_, ContainerState::CrashLoop { .. }) => Some("sidecar"),
            _ => None,
        }
    }

    /// The kubelet restarts the crash-looping config-manager container (its back-off ran out):
    /// it reads the node label and the mounted configs afresh. Returns whether it failed again.
    pub fn restart_config_manager(&mut self, label: &str, configs: &BTreeMap<String, String>) -> bool {
        let Some(env) = self.config_manager.clone() else { return false };
        match (&self.init, &self.sidecar) {
            (ContainerState::CrashLoop { restarts, .. }, _) => {
                let restarts = *restarts + 1;
                match self.run_config_manager("init", label, configs, &env) {
                    Ok(selection) => {
                        self.init = ContainerState::Running;
                        self.applied = Some(selection.clone());
                        self.load(&file_of(&selection, configs));
                        // The sidecar then starts on the link the init container made.
                        self.run_sidecar(label, configs, &env, 0);
                        false
                    }
                    Err(error) => {
                        self.init = ContainerState::CrashLoop { error: error.to_string(), restarts };
                        true
                    }
                }
            }
            (_, ContainerState::CrashLoop { restarts, .. }) => {
                let restarts = *restarts + 1;
                self.run_sidecar(label, configs, &env, restarts)
            }
            _ => false,
        }
    }

    /// The sidecar selects for `label`; returns whether it exited (CrashLoop).
    fn run_sidecar(
        &mut self,
        label: &str,
        configs: &BTreeMap<String, String>,
        env: &ConfigManagerEnv,
        restarts: u32,
    ) -> bool {
        match self.run_config_manager("sidecar", label, configs, env) {
            Err(error) => {
                self.sidecar = ContainerState::CrashLoop { error: error.to_string(), restarts };
                true
            }
            Ok(selection) => {
                self.sidecar = ContainerState::Running;
                let log = self.logs.entry("sidecar").or_default();
                let name = match &selection {
                    Selection::Named(name) => name.clone(),
                    Selection::Empty => String::new(),
                };
                if self.applied.as_ref() == Some(&selection) {
                    log.push("Already configured. Skipping update...".to_string());
                    return false;
                }
                if name.is_empty() {
                    log.push("Updating to empty config".to_string());
                    log.push("Successfully updated to empty config".to_string());
                } else {
                    log.push(format!("Updating to config: {name}"));
                    log.push(format!("Successfully updated to config: {name}"));
                }
                log.push("Sending signal 'hangup' to 'nvidia-device-plugin'".to_string());
                log.push("Successfully sent signal".to_string());
                self.applied = Some(selection.clone());
                self.logs.entry("plugin").or_default().push("Received SIGHUP, restarting.".to_string());
                self.load(&file_of(&selection, configs));
                false
            }
        }
    }

    /// The config the plugin serves, if it serves.
    pub fn serving(&self) -> Option<&EffectiveConfig> {
        match &self.plugin {
            PluginPhase::Serving(config) => Some(config),
            PluginPhase::NotStarted | PluginPhase::Failed(_) => None,
        }
    }

    /// The MIG strategy GFD and the plugin use (for labels when serving).
    pub fn mig_strategy(&self) -> Option<MigStrategy> {
        self.serving().map(|c| c.mig_strategy)
    }
}

fn file_of(selection: &Selection, configs: &BTreeMap<String, String>) -> String {
    match selection {
        Selection::Named(name) => configs.get(name).cloned().unwrap_or_default(),
        Selection::Empty => String::new(),
    }
}
