//! GPU emulation as pure functions: one test per row of docs/gpu.md's resource-name table (what a
//! node advertises) and per label example NVIDIA publishes (GFD labels), plus the config-manager
//! cases.

use std::collections::BTreeMap;

use lab_runner::sim::gpu::{
    advertise::{PluginState, advertised, node_resources},
    config::{EffectiveConfig, PluginEnv},
    gfd::gfd_labels,
    hardware::{GpuModel, MigGeometry, NodeGpus, mig_geometry},
    plugin::{ConfigManagerEnv, ContainerState, DevicePluginPod, PluginPhase, select_config},
};

fn config(yaml: &str) -> EffectiveConfig {
    let env =
        PluginEnv { mig_strategy: None, mps_root: Some("/run/nvidia/mps".to_string()), ..Default::default() };
    EffectiveConfig::load(yaml, &env).expect("valid config").0
}

fn resources(gpus: &NodeGpus, geometry: &MigGeometry, yaml: &str) -> Vec<(String, u64)> {
    advertised(gpus, geometry, PluginState::Serving(&config(yaml))).unwrap().into_iter().collect()
}

fn pairs(items: &[(&str, u64)]) -> Vec<(String, u64)> {
    items.iter().map(|(k, v)| (k.to_string(), *v)).collect()
}

const TIME_SLICING_4: &str =
    "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n";

// §3.1 row 1: no sharing, migStrategy none → physical GPUs.
#[test]
fn row_no_sharing() {
    let gpus = NodeGpus::new(GpuModel::A100_80GB, 8);
    assert_eq!(resources(&gpus, &MigGeometry::Disabled, "version: v1\n"), pairs(&[("nvidia.com/gpu", 8)]));
    // MIG geometry is ignored under migStrategy none.
    let geometry = mig_geometry(GpuModel::A100_80GB, "all-1g.10gb").unwrap();
    assert_eq!(resources(&gpus, &geometry, "flags: {migStrategy: none}\n"), pairs(&[("nvidia.com/gpu", 8)]));
}

// §3.1 row 2: time-slicing replicas R → GPUs × R (1 × 4 = 4; 4 × 4 = 16; 8 × 10 = 80).
#[test]
fn row_time_slicing() {
    for (count, replicas, expected) in [(1, 4, 4), (4, 4, 16), (8, 10, 80)] {
        let yaml = format!(
            "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: {replicas}\n"
        );
        let gpus = NodeGpus::new(GpuModel::H100_80GB, count);
        assert_eq!(resources(&gpus, &MigGeometry::Disabled, &yaml), pairs(&[("nvidia.com/gpu", expected)]));
    }
}

// §3.1 row 3: renameByDefault → nvidia.com/gpu.shared, and the old key stays at 0.
#[test]
fn row_time_slicing_renamed() {
    let gpus = NodeGpus::new(GpuModel::A100_40GB, 4);
    let yaml = "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n";
    let now = advertised(&gpus, &MigGeometry::Disabled, PluginState::Serving(&config(yaml))).unwrap();
    assert_eq!(now.clone().into_iter().collect::<Vec<_>>(), pairs(&[("nvidia.com/gpu.shared", 16)]));
    let before = BTreeMap::from([
        ("cpu".to_string(), "12".to_string()),
        ("nvidia.com/gpu".to_string(), "4".to_string()),
    ]);
    // The GPU Operator docs' `kubectl describe node` after the change.
    let after = node_resources(&before, &now);
    assert_eq!(
        after,
        BTreeMap::from([
            ("nvidia.com/gpu".to_string(), "0".to_string()),
            ("nvidia.com/gpu.shared".to_string(), "16".to_string()),
        ])
    );
}

// §3.1 row 4: MPS replicas R → GPUs × R; renamed too.
#[test]
fn row_mps() {
    let gpus = NodeGpus::new(GpuModel::H200_141GB, 2);
    let yaml =
        "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 10\n";
    assert_eq!(resources(&gpus, &MigGeometry::Disabled, yaml), pairs(&[("nvidia.com/gpu", 20)]));
    let renamed = yaml.replace("  mps:\n", "  mps:\n    renameByDefault: true\n");
    assert_eq!(resources(&gpus, &MigGeometry::Disabled, &renamed), pairs(&[("nvidia.com/gpu.shared", 20)]));
    // MPS needs MPS_ROOT (the static manifest does not set it).
    let error = EffectiveConfig::load(yaml, &PluginEnv::default()).unwrap_err().to_string();
    assert_eq!(error, "unable to validate flags: using MPS requires --mps-root to be specified");
}

// §3.1 row 5: MIG single → nvidia.com/gpu counts MIG devices (H100 all-1g.10gb → 7; all-3g.40gb → 2).
#[test]
fn row_mig_single() {
    let gpus = NodeGpus::new(GpuModel::H100_80GB, 1);
    let single = "version: v1\nflags:\n  migStrategy: single\n";
    for (name, expected) in [("all-1g.10gb", 7), ("all-3g.40gb", 2)] {
        let geometry = mig_geometry(GpuModel::H100_80GB, name).unwrap();
        assert_eq!(resources(&gpus, &geometry, single), pairs(&[("nvidia.com/gpu", expected)]), "{name}");
    }
    // Mixed profiles are invalid under single: nothing is advertised.
    let balanced = mig_geometry(GpuModel::H100_80GB, "all-balanced").unwrap();
    assert!(advertised(&gpus, &balanced, PluginState::Serving(&config(single))).is_err());
}

// §3.1 row 6: MIG mixed → nvidia.com/mig-<profile> per profile; nvidia.com/gpu drops to 0
// (the captured GCE A100-40GB node reconfigured to 7g.40gb).
#[test]
fn row_mig_mixed() {
    let gpus = NodeGpus::new(GpuModel::A100_40GB, 1);
    let mixed = "version: v1\nflags:\n  migStrategy: mixed\n";
    let balanced = mig_geometry(GpuModel::A100_40GB, "all-balanced").unwrap();
    let before = advertised(&gpus, &balanced, PluginState::Serving(&config(mixed))).unwrap();
    assert_eq!(
        before.clone().into_iter().collect::<Vec<_>>(),
        pairs(&[("nvidia.com/mig-1g.5gb", 2), ("nvidia.com/mig-2g.10gb", 1), ("nvidia.com/mig-3g.20gb", 1)])
    );
    let seven = mig_geometry(GpuModel::A100_40GB, "all-7g.40gb").unwrap();
    let now = advertised(&gpus, &seven, PluginState::Serving(&config(mixed))).unwrap();
    let mut node = BTreeMap::from([("nvidia.com/gpu".to_string(), "0".to_string())]);
    node.extend(before.iter().map(|(k, v)| (k.clone(), v.to_string())));
    let expected: BTreeMap<String, String> = [
        ("nvidia.com/gpu", "0"),
        ("nvidia.com/mig-1g.5gb", "0"),
        ("nvidia.com/mig-2g.10gb", "0"),
        ("nvidia.com/mig-3g.20gb", "0"),
        ("nvidia.com/mig-7g.40gb", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(node_resources(&node, &now), expected);
    // Non-MIG GPUs under mixed advertise nvidia.com/gpu.
    assert_eq!(resources(&gpus, &MigGeometry::Disabled, mixed), pairs(&[("nvidia.com/gpu", 1)]));
}

// §3.1 row 7: MIG mixed + time-slicing → MIG count × R for that profile (time-slicing-config-fine).
#[test]
fn row_mig_mixed_time_sliced() {
    let gpus = NodeGpus::new(GpuModel::A100_40GB, 2);
    let yaml = "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 8\n    - name: nvidia.com/mig-1g.5gb\n      replicas: 2\n    - name: nvidia.com/mig-2g.10gb\n      replicas: 2\n    - name: nvidia.com/mig-3g.20gb\n      replicas: 3\n    - name: nvidia.com/mig-7g.40gb\n      replicas: 7\n";
    let balanced = mig_geometry(GpuModel::A100_40GB, "all-balanced").unwrap();
    assert_eq!(
        resources(&gpus, &balanced, yaml),
        pairs(&[("nvidia.com/mig-1g.5gb", 8), ("nvidia.com/mig-2g.10gb", 4), ("nvidia.com/mig-3g.20gb", 6)])
    );
}

#[test]
fn no_plugin_no_gpus() {
    let gpus = NodeGpus::new(GpuModel::H100_80GB, 4);
    assert!(advertised(&gpus, &MigGeometry::Disabled, PluginState::NotRunning).unwrap().is_empty());
    let before = BTreeMap::from([("nvidia.com/gpu".to_string(), "4".to_string())]);
    assert_eq!(node_resources(&before, &BTreeMap::new())["nvidia.com/gpu"], "0");
}

fn labels_of(gpus: &NodeGpus, geometry: &MigGeometry, yaml: &str) -> BTreeMap<String, String> {
    gfd_labels(gpus, geometry, &config(yaml), 1_767_225_600)
}

fn assert_labels(labels: &BTreeMap<String, String>, expected: &[(&str, &str)]) {
    for (key, value) in expected {
        assert_eq!(labels.get(*key).map(String::as_str), Some(*value), "{key} in {labels:#?}");
    }
}

// §4.2 "No sharing": the H100 docs dump (strategy single, config all-disabled).
#[test]
fn gfd_no_sharing_h100() {
    let labels = labels_of(
        &NodeGpus::new(GpuModel::H100_80GB, 1),
        &MigGeometry::Disabled,
        "flags: {migStrategy: single}\n",
    );
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.count", "1"),
            ("nvidia.com/gpu.family", "hopper"),
            ("nvidia.com/gpu.memory", "81559"),
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
            ("nvidia.com/gpu.replicas", "1"),
            ("nvidia.com/gpu.sharing-strategy", "none"),
            ("nvidia.com/mig.capable", "true"),
            ("nvidia.com/mig.strategy", "single"),
            ("nvidia.com/mps.capable", "false"),
        ],
    );
    // GFD does not write gpu.present (the GPU Operator does).
    assert!(!labels.contains_key("nvidia.com/gpu.present"));
}

// §4.2 time-slicing R=4 without rename: product -SHARED, count physical, replicas per GPU.
#[test]
fn gfd_time_slicing() {
    let labels = labels_of(&NodeGpus::new(GpuModel::A100_40GB, 4), &MigGeometry::Disabled, TIME_SLICING_4);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.count", "4"),
            ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-SHARED"),
            ("nvidia.com/gpu.replicas", "4"),
            ("nvidia.com/gpu.sharing-strategy", "time-slicing"),
        ],
    );
    assert!(!labels.contains_key("nvidia.com/mig.strategy"));
}

// §4.2 time-slicing with renameByDefault: no suffix.
#[test]
fn gfd_time_slicing_renamed() {
    let yaml = TIME_SLICING_4.replace("  timeSlicing:\n", "  timeSlicing:\n    renameByDefault: true\n");
    let labels = labels_of(&NodeGpus::new(GpuModel::A100_40GB, 4), &MigGeometry::Disabled, &yaml);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.count", "4"),
            ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB"),
            ("nvidia.com/gpu.replicas", "4"),
        ],
    );
}

// §4.2 MIG single + time-slicing: `<product>-MIG-1g.5gb-SHARED`.
#[test]
fn gfd_mig_single_time_sliced() {
    let yaml = "flags: {migStrategy: single}\nsharing:\n  timeSlicing:\n    resources: [{name: nvidia.com/gpu, replicas: 8}]\n";
    let geometry = mig_geometry(GpuModel::A100_40GB, "all-1g.5gb").unwrap();
    let labels = labels_of(&NodeGpus::new(GpuModel::A100_40GB, 1), &geometry, yaml);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb-SHARED"),
            ("nvidia.com/gpu.replicas", "8"),
            ("nvidia.com/gpu.count", "7"),
        ],
    );
}

// §4.2 MPS R=10.
#[test]
fn gfd_mps() {
    let yaml = "sharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 10}]\n";
    let labels = labels_of(&NodeGpus::new(GpuModel::H100_80GB, 1), &MigGeometry::Disabled, yaml);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.sharing-strategy", "mps"),
            ("nvidia.com/gpu.replicas", "10"),
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-SHARED"),
            ("nvidia.com/mps.capable", "true"),
        ],
    );
}

// §4.2 MIG single, H100 all-1g.10gb and all-3g.40gb.
#[test]
fn gfd_mig_single_h100() {
    let gpus = NodeGpus::new(GpuModel::H100_80GB, 1);
    let single = "flags: {migStrategy: single}\n";
    let labels = labels_of(&gpus, &mig_geometry(GpuModel::H100_80GB, "all-1g.10gb").unwrap(), single);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.count", "7"),
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"),
            ("nvidia.com/gpu.slices.ci", "1"),
            ("nvidia.com/gpu.slices.gi", "1"),
            ("nvidia.com/mig.capable", "true"),
            ("nvidia.com/mig.strategy", "single"),
        ],
    );
    let labels = labels_of(&gpus, &mig_geometry(GpuModel::H100_80GB, "all-3g.40gb").unwrap(), single);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.count", "2"),
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-3g.40gb"),
            ("nvidia.com/gpu.replicas", "1"),
            ("nvidia.com/gpu.sharing-strategy", "none"),
            ("nvidia.com/gpu.slices.ci", "3"),
            ("nvidia.com/gpu.slices.gi", "3"),
        ],
    );
}

// §4.2 MIG mixed, H100 all-balanced (the docs dump), snapshotted whole.
#[test]
fn gfd_mig_mixed_h100_balanced() {
    let gpus = NodeGpus::new(GpuModel::H100_80GB, 1);
    let labels = labels_of(
        &gpus,
        &mig_geometry(GpuModel::H100_80GB, "all-balanced").unwrap(),
        "flags: {migStrategy: mixed}\n",
    );
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.count", "1"),
            ("nvidia.com/gpu.memory", "81559"),
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3"),
            ("nvidia.com/gpu.replicas", "0"),
            ("nvidia.com/gpu.sharing-strategy", "none"),
            ("nvidia.com/mig-1g.10gb.count", "2"),
            ("nvidia.com/mig-1g.10gb.memory", "9984"),
            ("nvidia.com/mig-1g.10gb.multiprocessors", "16"),
            ("nvidia.com/mig-1g.10gb.product", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"),
            ("nvidia.com/mig-1g.10gb.replicas", "1"),
            ("nvidia.com/mig-1g.10gb.sharing-strategy", "none"),
            ("nvidia.com/mig-1g.10gb.slices.ci", "1"),
            ("nvidia.com/mig-1g.10gb.slices.gi", "1"),
            ("nvidia.com/mig-1g.10gb.engines.copy", "1"),
            ("nvidia.com/mig-1g.10gb.engines.decoder", "1"),
            ("nvidia.com/mig-1g.10gb.engines.encoder", "0"),
            ("nvidia.com/mig-1g.10gb.engines.jpeg", "1"),
            ("nvidia.com/mig-1g.10gb.engines.ofa", "0"),
            ("nvidia.com/mig-2g.20gb.count", "1"),
            ("nvidia.com/mig-2g.20gb.memory", "20096"),
            ("nvidia.com/mig-2g.20gb.multiprocessors", "32"),
            ("nvidia.com/mig-2g.20gb.engines.jpeg", "2"),
            ("nvidia.com/mig-3g.40gb.count", "1"),
            ("nvidia.com/mig-3g.40gb.memory", "40320"),
            ("nvidia.com/mig-3g.40gb.multiprocessors", "60"),
            ("nvidia.com/mig-3g.40gb.engines.decoder", "3"),
            ("nvidia.com/mig.capable", "true"),
            ("nvidia.com/mig.strategy", "mixed"),
            ("nvidia.com/mps.capable", "false"),
        ],
    );
    insta::assert_json_snapshot!(labels);
}

// §4.2 A100-40GB mixed values from the captured GCE node.
#[test]
fn gfd_mig_mixed_a100_40gb() {
    let gpus = NodeGpus::new(GpuModel::A100_40GB, 1);
    let mixed = "flags: {migStrategy: mixed}\n";
    let labels = labels_of(&gpus, &mig_geometry(GpuModel::A100_40GB, "all-1g.5gb").unwrap(), mixed);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/mig-1g.5gb.memory", "4864"),
            ("nvidia.com/mig-1g.5gb.multiprocessors", "14"),
            ("nvidia.com/mig-1g.5gb.engines.copy", "1"),
            ("nvidia.com/mig-1g.5gb.engines.decoder", "0"),
            ("nvidia.com/mig-1g.5gb.engines.encoder", "0"),
            ("nvidia.com/mig-1g.5gb.engines.jpeg", "0"),
            ("nvidia.com/mig-1g.5gb.engines.ofa", "0"),
            ("nvidia.com/gpu.memory", "40960"),
            ("nvidia.com/gpu.replicas", "0"),
        ],
    );
    let labels = labels_of(&gpus, &mig_geometry(GpuModel::A100_40GB, "all-7g.40gb").unwrap(), mixed);
    assert_labels(
        &labels,
        &[
            ("nvidia.com/mig-7g.40gb.memory", "40192"),
            ("nvidia.com/mig-7g.40gb.multiprocessors", "98"),
            ("nvidia.com/mig-7g.40gb.engines.copy", "7"),
            ("nvidia.com/mig-7g.40gb.engines.decoder", "5"),
            ("nvidia.com/mig-7g.40gb.engines.jpeg", "1"),
            ("nvidia.com/mig-7g.40gb.engines.ofa", "1"),
            ("nvidia.com/mig-7g.40gb.slices.gi", "7"),
            ("nvidia.com/mig-7g.40gb.slices.ci", "7"),
        ],
    );
}

// §4.2 invalid MIG single (mixed profiles under single).
#[test]
fn gfd_mig_single_invalid() {
    let gpus = NodeGpus::new(GpuModel::H100_80GB, 1);
    let geometry = mig_geometry(GpuModel::H100_80GB, "all-balanced").unwrap();
    let labels = labels_of(&gpus, &geometry, "flags: {migStrategy: single}\n");
    assert_labels(
        &labels,
        &[
            ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3-MIG-INVALID"),
            ("nvidia.com/gpu.count", "0"),
            ("nvidia.com/gpu.replicas", "0"),
            ("nvidia.com/gpu.sharing-strategy", ""),
            ("nvidia.com/gpu.memory", "0"),
        ],
    );
}

fn configmap() -> BTreeMap<String, String> {
    BTreeMap::from([
        ("default".to_string(), "version: v1\n".to_string()),
        ("ts-4".to_string(), TIME_SLICING_4.to_string()),
        (
            "mps-2".to_string(),
            "version: v1\nsharing:\n  mps:\n    resources: [{name: nvidia.com/gpu, replicas: 2}]\n"
                .to_string(),
        ),
    ])
}

fn chart_env() -> ConfigManagerEnv {
    ConfigManagerEnv::from_env(Some(""), Some("named,single"))
}

fn plugin_env() -> PluginEnv {
    PluginEnv { mig_strategy: None, mps_root: Some("/run/nvidia/mps".to_string()), ..Default::default() }
}

#[test]
fn selection_rules() {
    let keys: Vec<String> = configmap().keys().cloned().collect();
    let mut log = Vec::new();
    let pick = |label: &str, env: &ConfigManagerEnv, keys: &[String]| {
        select_config(label, keys, env, &mut Vec::new()).map_err(|e| e.to_string())
    };
    use lab_runner::sim::gpu::plugin::Selection::{Empty, Named};
    assert_eq!(pick("ts-4", &chart_env(), &keys), Ok(Named("ts-4".into())));
    assert_eq!(pick("", &chart_env(), &keys), Ok(Named("default".into())));
    assert_eq!(pick("ts4", &chart_env(), &keys), Err("specified config ts4 does not exist".into()));
    let two = vec!["a".to_string(), "b".to_string()];
    assert_eq!(
        pick("", &chart_env(), &two),
        Err("no config was set, no default was provided, and all fallbacks failed".into())
    );
    assert_eq!(pick("", &chart_env(), &two[..1]), Ok(Named("a".into())));
    let operator = ConfigManagerEnv::from_env(None, Some("empty"));
    assert_eq!(pick("", &operator, &two), Ok(Empty));
    let with_default = ConfigManagerEnv::from_env(Some("missing"), Some("empty"));
    // Upstream prints the (empty) label value for a missing default.
    assert_eq!(pick("", &with_default, &two), Err("specified config  does not exist".into()));
    assert_eq!(pick("a", &chart_env(), &[]), Err("no configuration files available".into()));
    select_config("", &two, &chart_env(), &mut log).unwrap_err();
    insta::assert_snapshot!(log.join("\n"), @r"
    No value set and no default set. Attempting fallback strategies: [named single]
    Attempting to find config named: default
    No configuration named 'default' was found
    Attempting to see if only a single config is available...
    More than one configuration was found: [a b]
    ");
}

fn gpus_advertised(pod: &DevicePluginPod) -> BTreeMap<String, u64> {
    let state = match pod.serving() {
        Some(config) => PluginState::Serving(config),
        None => PluginState::NotRunning,
    };
    advertised(&NodeGpus::new(GpuModel::H100_80GB, 1), &MigGeometry::Disabled, state).unwrap()
}

#[test]
fn unknown_label_crash_loops_the_sidecar_and_keeps_the_config() {
    let configs = configmap();
    let mut pod = DevicePluginPod::start(Some(chart_env()), plugin_env(), "ts-4", &configs);
    assert_eq!(gpus_advertised(&pod)["nvidia.com/gpu"], 4);
    pod.on_label_change("ts4", &configs);
    assert!(
        matches!(&pod.sidecar, ContainerState::CrashLoop { error, .. } if error == "specified config ts4 does not exist")
    );
    assert_eq!(gpus_advertised(&pod)["nvidia.com/gpu"], 4);
    // Not running, the sidecar sees no label change; the kubelet's restart reads the label.
    pod.on_label_change("mps-2", &configs);
    assert!(matches!(pod.sidecar, ContainerState::CrashLoop { .. }));
    assert!(pod.restart_config_manager("ts4", &configs));
    assert!(!pod.restart_config_manager("mps-2", &configs));
    assert_eq!(pod.sidecar, ContainerState::Running);
    assert_eq!(gpus_advertised(&pod)["nvidia.com/gpu"], 2);
    insta::assert_snapshot!(pod.logs["sidecar"].join("\n"), @r"
    Waiting for change to 'nvidia.com/device-plugin.config' label
    Label change detected: nvidia.com/device-plugin.config=ts-4
    Already configured. Skipping update...
    Waiting for change to 'nvidia.com/device-plugin.config' label
    Label change detected: nvidia.com/device-plugin.config=ts4
    specified config ts4 does not exist
    Waiting for change to 'nvidia.com/device-plugin.config' label
    Label change detected: nvidia.com/device-plugin.config=ts4
    specified config ts4 does not exist
    Waiting for change to 'nvidia.com/device-plugin.config' label
    Label change detected: nvidia.com/device-plugin.config=mps-2
    Updating to config: mps-2
    Successfully updated to config: mps-2
    Sending signal 'hangup' to 'nvidia-device-plugin'
    Successfully sent signal
    ");
}

#[test]
fn a_pod_started_with_a_bad_label_sits_in_init_and_advertises_nothing() {
    let configs = configmap();
    let pod = DevicePluginPod::start(Some(chart_env()), plugin_env(), "ts4", &configs);
    assert!(matches!(pod.init, ContainerState::CrashLoop { .. }));
    assert_eq!(pod.plugin, PluginPhase::NotStarted);
    assert!(gpus_advertised(&pod).is_empty());
}

#[test]
fn editing_the_configmap_changes_nothing_until_the_label_changes() {
    let mut configs = configmap();
    let mut pod = DevicePluginPod::start(Some(chart_env()), plugin_env(), "ts-4", &configs);
    configs.insert("ts-4".to_string(), TIME_SLICING_4.replace("replicas: 4", "replicas: 8"));
    pod.on_label_change("ts-4", &configs);
    assert_eq!(gpus_advertised(&pod)["nvidia.com/gpu"], 4);
    assert_eq!(pod.logs["sidecar"].last().unwrap(), "Already configured. Skipping update...");
    pod.on_label_change("default", &configs);
    pod.on_label_change("ts-4", &configs);
    assert_eq!(gpus_advertised(&pod)["nvidia.com/gpu"], 8);
    // A restarted pod reads the edit too.
    let restarted = DevicePluginPod::start(Some(chart_env()), plugin_env(), "ts-4", &configs);
    assert_eq!(gpus_advertised(&restarted)["nvidia.com/gpu"], 8);
}

#[test]
fn replicas_one_fails_the_plugin() {
    let mut configs = configmap();
    configs.insert("ts-1".to_string(), TIME_SLICING_4.replace("replicas: 4", "replicas: 1"));
    let pod = DevicePluginPod::start(Some(chart_env()), plugin_env(), "ts-1", &configs);
    assert!(matches!(pod.plugin, PluginPhase::Failed(_)));
    assert!(gpus_advertised(&pod).is_empty());
    insta::assert_snapshot!(pod.logs["plugin"].join("\n"), @"unable to load config: unable to finalize config: unable to parse config file: error parsing config file: unmarshal error: error unmarshaling JSON: while decoding JSON: number of replicas must be >= 2");
}

#[test]
fn the_plugin_logs_its_config() {
    let pod = DevicePluginPod::start(Some(chart_env()), plugin_env(), "ts-4", &configmap());
    insta::assert_snapshot!(pod.logs["plugin"].join("\n"));
}

// ---------------------------------------------------------------------------------------------
// Through the store and the controllers: the kubelet runs the NVIDIA pods and they publish.

mod cluster {
    use lab_runner::sim::{harness::Cluster, topology::Topology};
    use serde_json::{Value, json};

    /// The shared fixture on the default lab topology, with the plugin's ConfigMap.
    pub struct Gpu(Cluster);

    impl std::ops::Deref for Gpu {
        type Target = Cluster;
        fn deref(&self) -> &Cluster {
            &self.0
        }
    }

    impl std::ops::DerefMut for Gpu {
        fn deref_mut(&mut self) -> &mut Cluster {
            &mut self.0
        }
    }

    pub const NS: &str = "kube-system";
    pub const CONFIGMAP: &str = "nvdp-nvidia-device-plugin-configs";

    impl Gpu {
        /// The default lab topology, seeded, with its controllers and the plugin ConfigMap.
        pub fn new() -> Gpu {
            let gpu = Gpu(Cluster::from_topology(&Topology::default_lab()));
            gpu.create(
                "configmaps",
                json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": CONFIGMAP, "namespace": NS},
                    "data": super::lab_configs(),
                }),
            );
            gpu
        }

        pub fn label(&mut self, node: &str, key: &str, value: &str) {
            self.change("nodes", "", node, |n| n["metadata"]["labels"][key] = json!(value));
            self.run_for(5);
        }

        /// `kubectl get node -o jsonpath={.status.allocatable}` restricted to nvidia.com/*.
        pub fn gpus(&self, node: &str) -> Vec<(String, String)> {
            let node = self.get("nodes", "", node);
            let allocatable = node["status"]["allocatable"].as_object().unwrap().clone();
            assert_eq!(
                node["status"]["capacity"]
                    .as_object()
                    .unwrap()
                    .iter()
                    .filter(|(k, _)| k.starts_with("nvidia.com/"))
                    .count(),
                allocatable.iter().filter(|(k, _)| k.starts_with("nvidia.com/")).count()
            );
            allocatable
                .into_iter()
                .filter(|(k, _)| k.starts_with("nvidia.com/"))
                .map(|(k, v)| (k, v.as_str().unwrap().to_string()))
                .collect()
        }

        /// Runs the controllers until `at` (Unix seconds of the simulated clock).
        pub fn run_until(&mut self, at: i64) {
            let now = self.sim.state.clock.now().as_second();
            assert!(at >= now, "{at} is before now ({now})");
            self.run_for(at - now);
        }

        /// The Events about `pod` as `<type> <reason> <message>`.
        pub fn events_of(&self, pod: &Value) -> Vec<String> {
            let all = |_: &lab_runner::sim::store::Stored| true;
            let page = self.sim.state.store.list("events", Some(NS), &all, None, None);
            page.items
                .iter()
                .map(|s| s.value().unwrap())
                .filter(|e| e["involvedObject"]["uid"] == pod["metadata"]["uid"])
                .map(|e| {
                    format!(
                        "{} {} {}",
                        e["type"].as_str().unwrap(),
                        e["reason"].as_str().unwrap(),
                        e["message"].as_str().unwrap()
                    )
                })
                .collect()
        }

        /// Unix seconds of the simulated clock.
        pub fn now(&self) -> i64 {
            self.sim.state.clock.now().as_second()
        }

        pub fn node_label(&self, node: &str, key: &str) -> Option<String> {
            self.get("nodes", "", node)["metadata"]["labels"][key].as_str().map(str::to_string)
        }

        /// The device-plugin pod bound to `node`.
        pub fn plugin_pod(&self, node: &str) -> Value {
            let all = |_: &lab_runner::sim::store::Stored| true;
            let page = self.sim.state.store.list("pods", Some(NS), &all, None, None);
            page.items
                .iter()
                .map(|s| s.value().unwrap())
                .find(|p| {
                    p["spec"]["nodeName"] == json!(node)
                        && p["metadata"]["name"].as_str().unwrap().starts_with("nvdp-nvidia-device-plugin-")
                })
                .unwrap()
        }

        /// The device plugin as the Helm chart renders it (config-manager init + sidecar).
        pub fn install_plugin(&mut self) {
            self.create("daemonsets", super::helm_device_plugin());
            self.run_for(30);
        }
    }

    pub fn text_pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }
}

use cluster::{CONFIGMAP, Gpu, NS, text_pairs};
use lab_runner::k8s::testing::pod;
use serde_json::{Value, json};

/// The lab's named configs (k8s-device-plugin's README examples).
fn lab_configs() -> Value {
    json!({
        "default": "version: v1\nflags:\n  migStrategy: none\n",
        "ts-4": TIME_SLICING_4,
        "ts-4-rename": "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n",
        "mps-2": "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n",
        "mig-single": "version: v1\nflags:\n  migStrategy: single\n",
        "mig-mixed": "version: v1\nflags:\n  migStrategy: mixed\n",
        "mig-mixed-ts": "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/mig-1g.10gb\n      replicas: 2\n",
    })
}

fn config_manager(name: &str, oneshot: &str) -> Value {
    json!({
        "name": name,
        "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4",
        "command": ["config-manager"],
        "env": [
            {"name": "ONESHOT", "value": oneshot},
            {"name": "NODE_LABEL", "value": "nvidia.com/device-plugin.config"},
            {"name": "CONFIG_FILE_SRCDIR", "value": "/available-configs"},
            {"name": "CONFIG_FILE_DST", "value": "/config/config.yaml"},
            {"name": "DEFAULT_CONFIG", "value": ""},
            {"name": "FALLBACK_STRATEGIES", "value": "named,single"},
        ],
        "volumeMounts": [
            {"name": "available-configs", "mountPath": "/available-configs"},
            {"name": "config", "mountPath": "/config"},
        ],
    })
}

/// templates/daemonset-device-plugin.yml (v0.17.4) as rendered with `config.name` (§2.1, §7.2).
fn helm_device_plugin() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "nvdp-nvidia-device-plugin", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app.kubernetes.io/name": "nvidia-device-plugin"}},
            "template": {
                "metadata": {"labels": {"app.kubernetes.io/name": "nvidia-device-plugin"}},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.present": "true"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                    "shareProcessNamespace": true,
                    "initContainers": [config_manager("nvidia-device-plugin-init", "true")],
                    "containers": [
                        config_manager("nvidia-device-plugin-sidecar", "false"),
                        {
                            "name": "nvidia-device-plugin-ctr",
                            "image": "nvcr.io/nvidia/k8s-device-plugin:v0.17.4",
                            "command": ["nvidia-device-plugin"],
                            "env": [
                                {"name": "MPS_ROOT", "value": "/run/nvidia/mps"},
                                {"name": "CONFIG_FILE", "value": "/config/config.yaml"},
                                {"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                            ],
                            "volumeMounts": [{"name": "config", "mountPath": "/config"}],
                        },
                    ],
                    "volumes": [
                        {"name": "available-configs", "configMap": {"name": CONFIGMAP}},
                        {"name": "config", "emptyDir": {}},
                    ],
                },
            },
        },
    })
}

/// The GFD DaemonSet of the same chart (`gpu-feature-discovery-*` containers).
fn helm_gfd() -> Value {
    let mut ds = helm_device_plugin();
    ds["metadata"]["name"] = json!("nvdp-nvidia-device-plugin-gpu-feature-discovery");
    let labels = json!({"app.kubernetes.io/name": "gpu-feature-discovery"});
    ds["spec"]["selector"]["matchLabels"] = labels.clone();
    let spec = &mut ds["spec"]["template"];
    spec["metadata"]["labels"] = labels;
    spec["spec"]["initContainers"] = json!([config_manager("gpu-feature-discovery-init", "true")]);
    spec["spec"]["containers"][0] = config_manager("gpu-feature-discovery-sidecar", "false");
    spec["spec"]["containers"][1]["name"] = json!("gpu-feature-discovery-ctr");
    spec["spec"]["containers"][1]["command"] = json!(["gpu-feature-discovery"]);
    ds
}

/// The GPU Operator's MIG manager DaemonSet (image per operator v25.3.4).
fn mig_manager() -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "DaemonSet",
        "metadata": {"name": "nvidia-mig-manager", "namespace": NS},
        "spec": {
            "selector": {"matchLabels": {"app": "nvidia-mig-manager"}},
            "template": {
                "metadata": {"labels": {"app": "nvidia-mig-manager"}},
                "spec": {
                    "nodeSelector": {"nvidia.com/gpu.present": "true"},
                    "containers": [{
                        "name": "nvidia-mig-manager",
                        "image": "nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.3-ubuntu20.04",
                        "env": [{"name": "CONFIG_FILE", "value": "/mig-parted-config/config.yaml"}],
                    }],
                },
            },
        },
    })
}

#[tokio::test]
async fn no_plugin_pod_no_gpus_and_the_plugin_advertises_physical_gpus() {
    let mut gpu = Gpu::new();
    gpu.run_for(10);
    assert!(gpu.gpus("gpu-1").is_empty());
    gpu.install_plugin();
    for node in ["gpu-1", "gpu-2", "gpu-3"] {
        assert_eq!(gpu.gpus(node), text_pairs(&[("nvidia.com/gpu", "1")]), "{node}");
    }
    assert!(gpu.gpus("cpu-1").is_empty());
}

#[tokio::test]
async fn api_row_time_slicing() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4");
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "4")]));
    assert_eq!(gpu.gpus("gpu-1"), text_pairs(&[("nvidia.com/gpu", "1")]));
}

#[tokio::test]
async fn api_row_time_slicing_renamed() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4-rename");
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "0"), ("nvidia.com/gpu.shared", "4")]));
}

#[tokio::test]
async fn api_row_mps() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-1", "nvidia.com/device-plugin.config", "mps-2");
    assert_eq!(gpu.gpus("gpu-1"), text_pairs(&[("nvidia.com/gpu", "2")]));
}

/// A MIG node: the MIG manager applies `mig` on gpu-3 (A100-40GB), the plugin serves `config`.
fn mig_node(mig: &str, config: &str) -> Gpu {
    let mut gpu = Gpu::new();
    gpu.create("daemonsets", mig_manager());
    gpu.install_plugin();
    gpu.label("gpu-3", "nvidia.com/device-plugin.config", config);
    gpu.change("nodes", "", "gpu-3", |n| n["metadata"]["labels"]["nvidia.com/mig.config"] = json!(mig));
    gpu.control.settle().unwrap();
    assert_eq!(gpu.node_label("gpu-3", "nvidia.com/mig.config.state").as_deref(), Some("pending"));
    gpu.run_for(30);
    assert_eq!(gpu.node_label("gpu-3", "nvidia.com/mig.config.state").as_deref(), Some("success"));
    gpu
}

#[tokio::test]
async fn api_row_mig_single() {
    let gpu = mig_node("all-1g.5gb", "mig-single");
    assert_eq!(gpu.gpus("gpu-3"), text_pairs(&[("nvidia.com/gpu", "7")]));
}

#[tokio::test]
async fn api_row_mig_mixed() {
    let gpu = mig_node("all-balanced", "mig-mixed");
    assert_eq!(
        gpu.gpus("gpu-3"),
        text_pairs(&[
            ("nvidia.com/gpu", "0"),
            ("nvidia.com/mig-1g.5gb", "2"),
            ("nvidia.com/mig-2g.10gb", "1"),
            ("nvidia.com/mig-3g.20gb", "1"),
        ])
    );
}

#[tokio::test]
async fn api_row_mig_mixed_time_sliced() {
    let gpu = mig_node("all-1g.10gb", "mig-mixed-ts");
    assert_eq!(gpu.gpus("gpu-3"), text_pairs(&[("nvidia.com/gpu", "0"), ("nvidia.com/mig-1g.10gb", "8")]));
}

#[tokio::test]
async fn an_unknown_mig_config_fails() {
    let mut gpu = Gpu::new();
    gpu.create("daemonsets", mig_manager());
    gpu.install_plugin();
    gpu.label("gpu-3", "nvidia.com/mig.config", "all-9g.99gb");
    assert_eq!(gpu.node_label("gpu-3", "nvidia.com/mig.config.state").as_deref(), Some("failed"));
    assert_eq!(gpu.gpus("gpu-3"), text_pairs(&[("nvidia.com/gpu", "1")]));
}

#[tokio::test]
async fn an_unknown_label_keeps_the_previous_capacity() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4");
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts4");
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "4")]));
    // The sidecar crash-loops; the pod stays Running and unready.
    gpu.run_for(60);
    let pod = gpu.plugin_pod("gpu-2");
    assert_eq!(pod["status"]["phase"], json!("Running"));
    let sidecar = &pod["status"]["containerStatuses"][0];
    assert_eq!(sidecar["name"], json!("nvidia-device-plugin-sidecar"));
    assert_eq!(sidecar["state"]["waiting"]["reason"], json!("CrashLoopBackOff"));
    assert_eq!(sidecar["lastState"]["terminated"]["message"], json!("specified config ts4 does not exist"));
    assert!(sidecar["restartCount"].as_u64().unwrap() >= 1);
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "4")]));
}

/// The device plugin's config-manager sidecar of `pod`: (restartCount, waiting back-off or
/// `running`, lastState message).
fn sidecar_state(pod: &Value) -> (u64, String, String) {
    let sidecar = &pod["status"]["containerStatuses"][0];
    assert_eq!(sidecar["name"], json!("nvidia-device-plugin-sidecar"));
    let state = match sidecar["state"]["waiting"]["message"].as_str() {
        Some(message) => {
            assert_eq!(sidecar["state"]["waiting"]["reason"], json!("CrashLoopBackOff"));
            message.split(' ').nth(1).unwrap().to_string()
        }
        None if sidecar["state"]["running"].is_object() => "running".to_string(),
        None => panic!("unexpected sidecar state {sidecar}"),
    };
    let last = sidecar["lastState"]["terminated"]["message"].as_str().unwrap_or_default().to_string();
    (sidecar["restartCount"].as_u64().unwrap(), state, last)
}

/// The latest container start of `pod` (Unix seconds): its kubelet syncs run every minute from there.
fn containers_started(pod: &Value) -> i64 {
    pod["status"]["containerStatuses"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["state"]["running"]["startedAt"].as_str())
        .map(|t| t.parse::<k8s_openapi::jiff::Timestamp>().unwrap().as_second())
        .max()
        .unwrap()
}

#[tokio::test]
async fn a_crash_looping_sidecar_backs_off_to_five_minutes() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-8");
    let pod = gpu.plugin_pod("gpu-2");
    let uid = pod["metadata"]["uid"].as_str().unwrap().to_string();
    let name = pod["metadata"]["name"].as_str().unwrap().to_string();
    // `doBackOff`: the first exit restarts at once, then 10s doubling to 300s.
    assert_eq!(
        pod["status"]["containerStatuses"][0]["state"]["waiting"]["message"],
        json!(format!(
            "back-off 10s restarting failed container=nvidia-device-plugin-sidecar pod={name}_{NS}({uid})"
        ))
    );
    let mut seen = vec![sidecar_state(&pod)];
    for _ in 0..8 {
        gpu.run_for(310);
        let state = sidecar_state(&gpu.plugin_pod("gpu-2"));
        assert_eq!(state.2, "specified config ts-8 does not exist");
        seen.push(state);
    }
    let seen: Vec<(u64, String)> = seen.into_iter().map(|(count, state, _)| (count, state)).collect();
    // Restarts at t, t+10, t+30, t+70, t+150, t+310, then every 300s; seen at t+5 + 310k.
    let expected = [
        (1, "10s"),
        (6, "5m0s"),
        (7, "5m0s"),
        (8, "5m0s"),
        (9, "5m0s"),
        (10, "5m0s"),
        (11, "5m0s"),
        (12, "5m0s"),
        (13, "5m0s"),
    ];
    assert_eq!(seen, expected.map(|(count, state)| (count, state.to_string())));
    // The pod keeps running with the previous config; the kubelet recorded each back-off.
    assert_eq!(gpu.plugin_pod("gpu-2")["status"]["phase"], json!("Running"));
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "1")]));
}

#[tokio::test]
async fn an_added_key_is_picked_up_after_the_next_volume_sync_and_restart() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    let started = containers_started(&gpu.plugin_pod("gpu-2"));
    // Just after the pod's first periodic sync, the learner labels the node with a name the
    // ConfigMap lacks, then adds it: the sidecar exits and restarts at once (restartCount 1).
    gpu.run_until(started + 61);
    let labelled = gpu.now();
    gpu.change("nodes", "", "gpu-2", |n| {
        n["metadata"]["labels"]["nvidia.com/device-plugin.config"] = json!("ts-8")
    });
    gpu.control.settle().unwrap();
    gpu.change("configmaps", NS, CONFIGMAP, |cm| {
        cm["data"]["ts-8"] = json!(TIME_SLICING_4.replace("replicas: 4", "replicas: 8"));
    });
    gpu.control.settle().unwrap();
    let failed = |count: u64, back_off: &str| {
        (count, back_off.to_string(), "specified config ts-8 does not exist".to_string())
    };
    assert_eq!(sidecar_state(&gpu.plugin_pod("gpu-2")), failed(1, "10s"));
    // Restarts before the next sync read the volume as synced before the edit: they fail.
    gpu.run_until(labelled + 10);
    assert_eq!(sidecar_state(&gpu.plugin_pod("gpu-2")), failed(2, "20s"));
    gpu.run_until(labelled + 30);
    assert_eq!(sidecar_state(&gpu.plugin_pod("gpu-2")), failed(3, "40s"));
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "1")]));
    // The sync at started+120 brings the key into the volume; nothing restarts until labelled+70.
    gpu.run_until(started + 121);
    assert_eq!(sidecar_state(&gpu.plugin_pod("gpu-2")), failed(3, "40s"));
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "1")]));
    gpu.run_until(labelled + 70);
    let pod = gpu.plugin_pod("gpu-2");
    assert_eq!(
        sidecar_state(&pod),
        (4, "running".to_string(), "specified config ts-8 does not exist".to_string())
    );
    assert_eq!(
        pod["status"]["conditions"].as_array().unwrap().iter().find(|c| c["type"] == "Ready").unwrap()["status"],
        json!("True")
    );
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "8")]));
}

#[tokio::test]
async fn an_init_container_crash_loops_until_the_key_reaches_its_volume() {
    let mut gpu = Gpu::new();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-8");
    gpu.install_plugin();
    gpu.run_for(120);
    let pod = gpu.plugin_pod("gpu-2");
    assert_eq!(pod["status"]["phase"], json!("Pending"));
    let init = &pod["status"]["initContainerStatuses"][0];
    assert_eq!(init["state"]["waiting"]["reason"], json!("CrashLoopBackOff"));
    let restarts = init["restartCount"].as_u64().unwrap();
    assert!(restarts >= 3, "{init}");
    assert!(gpu.gpus("gpu-2").is_empty());
    gpu.change("configmaps", NS, CONFIGMAP, |cm| {
        cm["data"]["ts-8"] = json!(TIME_SLICING_4.replace("replicas: 4", "replicas: 8"));
    });
    gpu.control.settle().unwrap();
    assert_eq!(gpu.plugin_pod("gpu-2")["status"]["phase"], json!("Pending"));
    // Within a sync period plus the longest back-off the init container succeeds.
    gpu.run_for(60 + 300);
    let pod = gpu.plugin_pod("gpu-2");
    assert_eq!(pod["status"]["phase"], json!("Running"));
    let init = &pod["status"]["initContainerStatuses"][0];
    assert_eq!(init["state"]["terminated"]["reason"], json!("Completed"));
    assert!(init["restartCount"].as_u64().unwrap() > restarts);
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "8")]));
    let events = gpu.events_of(&pod);
    assert!(
        events.iter().any(|e| e.starts_with(
            "Warning BackOff Back-off restarting failed container nvidia-device-plugin-init in pod "
        )),
        "{events:?}"
    );
}

#[tokio::test]
async fn a_plugin_started_while_the_label_is_bad_advertises_nothing() {
    let mut gpu = Gpu::new();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts4");
    gpu.install_plugin();
    assert!(gpu.gpus("gpu-2").is_empty());
    assert_eq!(gpu.gpus("gpu-1"), text_pairs(&[("nvidia.com/gpu", "1")]));
    let pod = gpu.plugin_pod("gpu-2");
    assert_eq!(pod["status"]["phase"], json!("Pending"));
    let init = &pod["status"]["initContainerStatuses"][0];
    assert_eq!(init["name"], json!("nvidia-device-plugin-init"));
    assert_eq!(init["state"]["waiting"]["reason"], json!("CrashLoopBackOff"));
    assert_eq!(pod["status"]["containerStatuses"][1]["state"]["waiting"]["reason"], json!("PodInitializing"));
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4");
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "4")]));
    let pod = gpu.plugin_pod("gpu-2");
    assert_eq!(pod["status"]["phase"], json!("Running"));
    assert_eq!(
        pod["status"]["initContainerStatuses"][0]["state"]["terminated"]["reason"],
        json!("Completed")
    );
}

#[tokio::test]
async fn editing_the_configmap_needs_a_label_change_or_a_restart() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4");
    gpu.change("configmaps", NS, CONFIGMAP, |cm| {
        cm["data"]["ts-4"] = json!(TIME_SLICING_4.replace("replicas: 4", "replicas: 8"));
    });
    gpu.run_for(60);
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "4")]));
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "default");
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4");
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "8")]));
}

#[tokio::test]
async fn deleting_the_plugin_drops_its_resources_to_zero() {
    let mut gpu = Gpu::new();
    gpu.install_plugin();
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4-rename");
    gpu.delete("daemonsets", NS, "nvdp-nvidia-device-plugin", None);
    gpu.run_for(60);
    assert_eq!(gpu.gpus("gpu-2"), text_pairs(&[("nvidia.com/gpu", "0"), ("nvidia.com/gpu.shared", "0")]));
    assert_eq!(gpu.gpus("gpu-1"), text_pairs(&[("nvidia.com/gpu", "0")]));
}

#[tokio::test]
async fn gfd_labels_follow_the_config() {
    let mut gpu = Gpu::new();
    gpu.create("daemonsets", helm_gfd());
    gpu.install_plugin();
    assert_eq!(gpu.node_label("gpu-2", "nvidia.com/gpu.product").as_deref(), Some("NVIDIA-H100-80GB-HBM3"));
    assert_eq!(gpu.node_label("gpu-2", "nvidia.com/gpu.memory").as_deref(), Some("81559"));
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "ts-4");
    assert_eq!(
        gpu.node_label("gpu-2", "nvidia.com/gpu.product").as_deref(),
        Some("NVIDIA-H100-80GB-HBM3-SHARED")
    );
    assert_eq!(gpu.node_label("gpu-2", "nvidia.com/gpu.replicas").as_deref(), Some("4"));
    assert_eq!(gpu.node_label("gpu-2", "nvidia.com/gpu.count").as_deref(), Some("1"));
    assert_eq!(gpu.node_label("gpu-2", "nvidia.com/gpu.sharing-strategy").as_deref(), Some("time-slicing"));
}

/// A CUDA pod on `gpu-3` asking for one `resource`.
fn cuda_pod(name: &str, resource: &str) -> Value {
    pod(name).image(CUDA_IMAGE).selector("kubernetes.io/hostname", "gpu-3").limit(resource, "1").json()
}

#[tokio::test]
async fn a_gpu_pod_stays_pending_on_a_mig_mixed_node_and_the_mig_pod_runs() {
    let mut gpu = mig_node("all-1g.10gb", "mig-mixed");
    gpu.create("pods", cuda_pod("old", "nvidia.com/gpu"));
    gpu.create("pods", cuda_pod("fixed", "nvidia.com/mig-1g.10gb"));
    gpu.run_for(30);
    let old = gpu.get("pods", "default", "old");
    assert_eq!(old["status"]["phase"], json!("Pending"));
    let condition = &old["status"]["conditions"][0];
    assert_eq!(condition["reason"], json!("Unschedulable"));
    insta::assert_snapshot!(condition["message"].as_str().unwrap());
    let fixed = gpu.get("pods", "default", "fixed");
    assert_eq!((&fixed["spec"]["nodeName"], &fixed["status"]["phase"]), (&json!("gpu-3"), &json!("Running")));
}

/// A pod asking for `count` shared GPUs on `node`.
fn shared_gpu_pod(name: &str, node: &str, count: &str) -> Value {
    pod(name)
        .image(CUDA_IMAGE)
        .selector("kubernetes.io/hostname", node)
        .tolerate("nvidia.com/gpu", "Exists", Some("NoSchedule"))
        .gpus(count)
        .json()
}

/// The CUDA base image the GPU pods run.
const CUDA_IMAGE: &str = "nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04";

/// `failRequestsGreaterThanOne` (and MPS, which always enforces it): the kubelet rejects a pod
/// asking for 2 shared GPUs at admission (rm.go `ValidateRequest` → kubelet `rejectPod`); a pod
/// asking for 1 runs, and without the flag time-slicing lets 2 through.
#[tokio::test]
async fn fail_requests_greater_than_one_rejects_the_pod_on_the_node() {
    let mut gpu = Gpu::new();
    gpu.change("configmaps", NS, CONFIGMAP, |cm| {
        cm["data"]["ts-4-strict"] = json!(
            "version: v1\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n"
        );
    });
    gpu.install_plugin();
    gpu.label("gpu-1", "nvidia.com/device-plugin.config", "ts-4-strict");
    gpu.label("gpu-2", "nvidia.com/device-plugin.config", "mps-2");
    gpu.label("gpu-3", "nvidia.com/device-plugin.config", "ts-4");
    gpu.create("pods", shared_gpu_pod("two", "gpu-1", "2"));
    gpu.create("pods", shared_gpu_pod("one", "gpu-1", "1"));
    gpu.create("pods", shared_gpu_pod("two-mps", "gpu-2", "2"));
    gpu.create("pods", shared_gpu_pod("two-lenient", "gpu-3", "2"));
    gpu.run_for(30);
    let two = gpu.get("pods", "default", "two");
    assert_eq!(two["spec"]["nodeName"], json!("gpu-1"));
    assert_eq!(two["status"]["phase"], json!("Failed"));
    assert_eq!(two["status"]["reason"], json!("UnexpectedAdmissionError"));
    assert_eq!(
        two["status"]["message"],
        json!(
            "Pod was rejected: Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for \"nvidia.com/gpu\": invalid request: maximum request size for shared resources is 1; found 2, which is unexpected"
        )
    );
    let mps = gpu.get("pods", "default", "two-mps");
    assert_eq!(
        (&mps["status"]["phase"], &mps["status"]["reason"]),
        (&json!("Failed"), &json!("UnexpectedAdmissionError"))
    );
    for running in ["one", "two-lenient"] {
        assert_eq!(gpu.get("pods", "default", running)["status"]["phase"], json!("Running"), "{running}");
    }
}

/// `demo gpu-sharing` through the binary: a fresh simulator, `start`, the reference solution with
/// real kubectl, `check`, to the full score: time-slicing (gpu-1), MPS on the tainted gpu-2 (GFD
/// labels an MPS config although its container sets no MPS_ROOT), MIG mixed on gpu-3 (the lab's
/// mig-manager DaemonSet acts on nvidia.com/mig.config), the Pending old pod, the MIG pod, quotas.
#[test]
fn demo_runs_the_gpu_sharing_lab_to_a_full_score() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = crate::support::binary::lab_runner().args(["demo", "gpu-sharing"]).output().unwrap();
    let out = crate::support::binary::stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", crate::support::binary::stderr(&output));
    for task in ["time-slicing", "mps", "mig-mixed", "old-manifest", "mig-pod", "quotas"] {
        let passed = out.lines().any(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            words.len() >= 3 && words[0] == "PASS" && words[1] == task
        });
        assert!(passed, "task {task} did not pass:\n{out}");
    }
    assert!(out.contains("score 18/18"), "{out}");
    assert!(!out.contains("timed out waiting"), "{out}");
}

/// Real kubectl against `lab-runner sim up` with the lab's NVIDIA manifests applied.
mod through_kubectl {
    use std::process::Output;

    use crate::support::{
        binary::{stderr, stdout},
        kubectl::{Kubectl, clients},
        sim::Sim,
    };

    const LAB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/labs/gpu-sharing/manifests");

    /// A simulator at 10× speed with the device plugin, GFD and the MIG manager running, and the
    /// plugin ConfigMap holding `configs` (key → config file).
    fn gpu_sim(client: &Kubectl, configs: &[(&str, &str)]) -> Sim {
        let sim = Sim::up(&["--speed", "10"]);
        for file in [
            "gpu-operator/namespace.yaml",
            "device-plugin/serviceaccount.yaml",
            "device-plugin/configmap-start.yaml",
            "device-plugin/daemonset.yaml",
            "device-plugin/gfd-daemonset.yaml",
            "gpu-operator/mig-manager.yaml",
        ] {
            ok(&sim.kubectl(client, &["apply", "-f", &format!("{LAB}/{file}")]), file);
        }
        let mut create = vec!["-n", "gpu-operator", "create", "configmap", "nvidia-device-plugin-configs"];
        let files: Vec<String> = configs.iter().map(|(k, v)| format!("--from-literal={k}={v}")).collect();
        create.extend(files.iter().map(String::as_str));
        create.extend(["--dry-run=client", "-o", "yaml"]);
        let yaml = ok(&sim.kubectl(client, &create), "render configmap");
        let path = sim.state_dir().join("configs.yaml");
        std::fs::write(&path, yaml).unwrap();
        ok(&sim.kubectl(client, &["replace", "-f", path.to_str().unwrap()]), "replace configmap");
        wait(&sim, client, &["-n", "gpu-operator", "pods", "--all"], "condition=Ready");
        sim
    }

    fn ok(output: &Output, what: &str) -> String {
        assert!(output.status.success(), "{what}: {}{}", stdout(output), stderr(output));
        stdout(output)
    }

    fn wait(sim: &Sim, client: &Kubectl, what: &[&str], condition: &str) {
        let mut args = vec!["wait"];
        args.extend(what);
        let condition = format!("--for={condition}");
        args.extend([condition.as_str(), "--timeout=60s"]);
        ok(&sim.kubectl(client, &args), &args.join(" "));
    }

    fn jsonpath(sim: &Sim, client: &Kubectl, node: &str, path: &str) -> String {
        ok(&sim.kubectl(client, &["get", "node", node, "-o", &format!("jsonpath={path}")]), path)
    }

    fn label(sim: &Sim, client: &Kubectl, node: &str, labels: &[&str]) {
        let mut args = vec!["label", "node", node, "--overwrite"];
        args.extend(labels);
        ok(&sim.kubectl(client, &args), "label");
    }

    /// The 1.33 client (the simulator's version); the others are covered by the API tests.
    fn client() -> Option<Kubectl> {
        clients().into_iter().find(|c| c.version == "1.33")
    }

    const TS_4: &str = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n";
    const TS_4_RENAMED: &str = "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n";
    const MPS_2: &str =
        "version: v1\nsharing:\n  mps:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 2\n";
    const TS_4_STRICT: &str = "version: v1\nsharing:\n  timeSlicing:\n    failRequestsGreaterThanOne: true\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 4\n";
    const MIG_SINGLE: &str = "version: v1\nflags:\n  migStrategy: single\n";
    const MIG_MIXED: &str = "version: v1\nflags:\n  migStrategy: mixed\n";

    const CONFIGS: &[(&str, &str)] = &[
        ("default", "version: v1\n"),
        ("ts-4", TS_4),
        ("ts-4-rename", TS_4_RENAMED),
        ("mps-2", MPS_2),
        ("mig-single", MIG_SINGLE),
        ("mig-mixed", MIG_MIXED),
        ("ts-4-strict", TS_4_STRICT),
    ];

    /// One row of docs/gpu.md's resource-name table / one published label example: node labels
    /// to set, then what `kubectl get node -o jsonpath` reads back.
    struct Row {
        what: &'static str,
        node: &'static str,
        set: &'static [&'static str],
        expect: &'static [(&'static str, &'static str)],
    }

    const ROWS: &[Row] = &[
        Row {
            what: "§3.1 time-slicing R=4 / §4.2 time-slicing (A100-80GB)",
            node: "gpu-1",
            set: &["nvidia.com/device-plugin.config=ts-4"],
            expect: &[
                ("{.status.allocatable.nvidia\\.com/gpu}", "4"),
                ("{.status.capacity.nvidia\\.com/gpu}", "4"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.product}", "NVIDIA-A100-SXM4-80GB-SHARED"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.count}", "1"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.replicas}", "4"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.sharing-strategy}", "time-slicing"),
            ],
        },
        Row {
            what: "§3.1 MPS R=2 / §4.2 MPS (H100, tainted)",
            node: "gpu-2",
            set: &["nvidia.com/device-plugin.config=mps-2"],
            expect: &[
                ("{.status.allocatable.nvidia\\.com/gpu}", "2"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.product}", "NVIDIA-H100-80GB-HBM3-SHARED"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.replicas}", "2"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.sharing-strategy}", "mps"),
                ("{.metadata.labels.nvidia\\.com/mps\\.capable}", "true"),
            ],
        },
        Row {
            what: "§3.1 MIG single all-1g.5gb (A100-40GB)",
            node: "gpu-3",
            set: &["nvidia.com/mig.config=all-1g.5gb", "nvidia.com/device-plugin.config=mig-single"],
            expect: &[
                ("{.status.allocatable.nvidia\\.com/gpu}", "7"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.product}", "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.count}", "7"),
                ("{.metadata.labels.nvidia\\.com/mig\\.strategy}", "single"),
                ("{.metadata.labels.nvidia\\.com/mig\\.config\\.state}", "success"),
            ],
        },
    ];

    const ROWS_2: &[Row] = &[
        Row {
            what: "§3.1 time-slicing renamed / §4.2 renameByDefault (A100-80GB)",
            node: "gpu-1",
            set: &["nvidia.com/device-plugin.config=ts-4-rename"],
            expect: &[
                ("{.status.allocatable.nvidia\\.com/gpu\\.shared}", "4"),
                ("{.status.allocatable.nvidia\\.com/gpu}", "0"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.product}", "NVIDIA-A100-SXM4-80GB"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.replicas}", "4"),
            ],
        },
        Row {
            what: "§4.2 no sharing (H100)",
            node: "gpu-2",
            set: &[],
            expect: &[
                ("{.status.allocatable.nvidia\\.com/gpu}", "1"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.product}", "NVIDIA-H100-80GB-HBM3"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.memory}", "81559"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.replicas}", "1"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.sharing-strategy}", "none"),
                ("{.metadata.labels.nvidia\\.com/mig\\.capable}", "true"),
            ],
        },
        Row {
            what: "§3.1 MIG mixed all-1g.5gb / §4.2 MIG mixed (A100-40GB)",
            node: "gpu-3",
            set: &["nvidia.com/mig.config=all-1g.5gb", "nvidia.com/device-plugin.config=mig-mixed"],
            expect: &[
                ("{.status.allocatable.nvidia\\.com/mig-1g\\.5gb}", "7"),
                ("{.status.allocatable.nvidia\\.com/gpu}", "0"),
                ("{.metadata.labels.nvidia\\.com/mig\\.strategy}", "mixed"),
                ("{.metadata.labels.nvidia\\.com/mig-1g\\.5gb\\.count}", "7"),
                ("{.metadata.labels.nvidia\\.com/mig-1g\\.5gb\\.memory}", "4864"),
                ("{.metadata.labels.nvidia\\.com/gpu\\.replicas}", "0"),
            ],
        },
    ];

    /// §4.2's H100 MIG examples, on gpu-2 once the operator's deploy label brings a MIG manager there.
    const H100_MIG_SINGLE: &[Row] = &[Row {
        what: "§4.2 MIG single H100 all-1g.10gb",
        node: "gpu-2",
        set: &[
            "nvidia.com/gpu.deploy.mig-manager=true",
            "nvidia.com/mig.config=all-1g.10gb",
            "nvidia.com/device-plugin.config=mig-single",
        ],
        expect: &[
            ("{.status.allocatable.nvidia\\.com/gpu}", "7"),
            ("{.metadata.labels.nvidia\\.com/gpu\\.count}", "7"),
            ("{.metadata.labels.nvidia\\.com/gpu\\.product}", "NVIDIA-H100-80GB-HBM3-MIG-1g.10gb"),
            ("{.metadata.labels.nvidia\\.com/gpu\\.slices\\.ci}", "1"),
            ("{.metadata.labels.nvidia\\.com/gpu\\.slices\\.gi}", "1"),
            ("{.metadata.labels.nvidia\\.com/mig\\.config\\.state}", "success"),
            ("{.metadata.labels.nvidia\\.com/mig\\.strategy}", "single"),
        ],
    }];

    const H100_MIG_MIXED: &[Row] = &[Row {
        what: "§4.2 MIG mixed H100 all-balanced",
        node: "gpu-2",
        set: &[
            "nvidia.com/gpu.deploy.mig-manager=true",
            "nvidia.com/mig.config=all-balanced",
            "nvidia.com/device-plugin.config=mig-mixed",
        ],
        expect: &[
            ("{.status.allocatable.nvidia\\.com/mig-1g\\.10gb}", "2"),
            ("{.status.allocatable.nvidia\\.com/mig-2g\\.20gb}", "1"),
            ("{.status.allocatable.nvidia\\.com/mig-3g\\.40gb}", "1"),
            ("{.metadata.labels.nvidia\\.com/gpu\\.count}", "1"),
            ("{.metadata.labels.nvidia\\.com/gpu\\.replicas}", "0"),
            ("{.metadata.labels.nvidia\\.com/mig-1g\\.10gb\\.count}", "2"),
            ("{.metadata.labels.nvidia\\.com/mig-1g\\.10gb\\.memory}", "9984"),
            ("{.metadata.labels.nvidia\\.com/mig-1g\\.10gb\\.multiprocessors}", "16"),
            ("{.metadata.labels.nvidia\\.com/mig-2g\\.20gb\\.memory}", "20096"),
            ("{.metadata.labels.nvidia\\.com/mig-3g\\.40gb\\.multiprocessors}", "60"),
            ("{.metadata.labels.nvidia\\.com/mig\\.strategy}", "mixed"),
        ],
    }];

    fn run_rows(client: &Kubectl, sim: &Sim, rows: &[Row]) {
        for row in rows {
            if !row.set.is_empty() {
                label(sim, client, row.node, row.set);
            }
        }
        for row in rows {
            for (path, want) in row.expect {
                let condition = format!("jsonpath={path}={want}");
                let args =
                    ["wait", &format!("node/{}", row.node), &format!("--for={condition}"), "--timeout=60s"];
                let output = sim.kubectl(client, &args);
                let got = jsonpath(sim, client, row.node, path);
                assert!(output.status.success(), "{}: {path} is {got:?}, expected {want:?}", row.what);
            }
        }
    }

    #[test]
    fn advertised_resources_and_gfd_labels_per_mode() {
        let Some(client) = client() else { return };
        let sim = gpu_sim(&client, CONFIGS);
        run_rows(&client, &sim, ROWS);
        run_rows(&client, &sim, H100_MIG_SINGLE);
    }

    /// The second half of the table, and on the MIG-mixed node a pod asking for nvidia.com/gpu
    /// stays Pending with the v1.33 FailedScheduling text while the MIG pod runs.
    #[test]
    fn renamed_no_sharing_and_mig_mixed_with_pods() {
        let Some(client) = client() else { return };
        let sim = gpu_sim(&client, CONFIGS);
        run_rows(&client, &sim, ROWS_2);
        run_rows(&client, &sim, H100_MIG_MIXED);
        for (name, resource) in [("whole-gpu", "nvidia.com/gpu"), ("mig-slice", "nvidia.com/mig-1g.5gb")] {
            let pod = format!(
                "apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec:\n  nodeSelector: {{nvidia.com/mig.strategy: mixed}}\n  containers:\n  - name: cuda\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n    command: [sleep, infinity]\n    resources: {{limits: {{{resource}: 1}}}}\n"
            );
            let path = sim.state_dir().join(format!("{name}.yaml"));
            std::fs::write(&path, pod).unwrap();
            ok(&sim.kubectl(&client, &["apply", "-f", path.to_str().unwrap()]), name);
        }
        wait(&sim, &client, &["pod/mig-slice"], "condition=Ready");
        wait(&sim, &client, &["pod/whole-gpu"], "condition=PodScheduled=False");
        let message = ok(
            &sim.kubectl(
                &client,
                &[
                    "get",
                    "pod",
                    "whole-gpu",
                    "-o",
                    "jsonpath={.status.conditions[?(@.type==\"PodScheduled\")].message}",
                ],
            ),
            "message",
        );
        assert_eq!(
            message,
            "0/5 nodes are available: 1 Insufficient nvidia.com/gpu, 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/5 nodes are available: 1 No preemption victims found for incoming pod, 4 Preemption is not helpful for scheduling."
        );
        let node = ok(
            &sim.kubectl(&client, &["get", "pod", "mig-slice", "-o", "jsonpath={.spec.nodeName}"]),
            "node",
        );
        assert_eq!(node, "gpu-3");
    }

    /// `kubectl logs` serves what the emulated NVIDIA containers logged, the kubelet's 400 for a
    /// waiting container, empty output for other running containers; `kubectl exec` fails in one
    /// line instead of hanging.
    #[test]
    fn logs_and_exec() {
        let Some(client) = client() else { return };
        let sim = gpu_sim(&client, CONFIGS);
        let pods = ok(
            &sim.kubectl(
                &client,
                &["-n", "gpu-operator", "get", "pods", "--field-selector=spec.nodeName=gpu-1", "-o", "name"],
            ),
            "pods",
        );
        let plugin = pods.lines().find(|p| !p.contains("feature-discovery")).unwrap().to_string();
        let logs = |container: &str| {
            ok(&sim.kubectl(&client, &["-n", "gpu-operator", "logs", &plugin, "-c", container]), container)
        };
        let plugin_log = logs("nvidia-device-plugin-ctr");
        assert!(plugin_log.starts_with("\nRunning with config:\n{"), "{plugin_log}");
        assert!(plugin_log.contains("\"migStrategy\": \"none\""), "{plugin_log}");
        let init = logs("nvidia-device-plugin-init");
        assert!(init.contains("Label change detected: nvidia.com/device-plugin.config=\n"), "{init}");
        assert!(init.contains("No value set. Selecting default name: default\n"), "{init}");
        assert!(logs("nvidia-device-plugin-sidecar").ends_with("Already configured. Skipping update...\n"));
        let gfd = pods.lines().find(|p| p.contains("feature-discovery")).unwrap();
        let gfd_log = ok(
            &sim.kubectl(&client, &["-n", "gpu-operator", "logs", gfd, "-c", "gpu-feature-discovery-ctr"]),
            "gfd",
        );
        assert!(gfd_log.starts_with("Loading configuration.\n\nRunning with config:\n"), "{gfd_log}");
        assert!(gfd_log.ends_with("Creating Labels\nSleeping for 60s\n"), "{gfd_log}");

        ok(
            &sim.kubectl(&client, &["run", "plain", "--image=nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"]),
            "run",
        );
        ok(&sim.kubectl(&client, &["run", "missing", "--image=registry.invalid/none:1"]), "run");
        wait(&sim, &client, &["pod/plain"], "condition=Ready");
        // Bound, with the kubelet's first status written (a pod without a node gets
        // `pod missing does not have a host assigned`).
        wait(&sim, &client, &["pod/missing"], "jsonpath={.status.containerStatuses[0].ready}=false");
        assert_eq!(ok(&sim.kubectl(&client, &["logs", "plain"]), "logs plain"), "");
        let waiting = sim.kubectl(&client, &["logs", "missing"]);
        assert!(!waiting.status.success());
        let text = stderr(&waiting);
        assert!(
            text.starts_with(
                "Error from server (BadRequest): container \"missing\" in pod \"missing\" is waiting to start: "
            ),
            "{text}"
        );

        let exec = sim.kubectl(&client, &["exec", "plain", "--", "nvidia-smi"]);
        assert_eq!(exec.status.code(), Some(1));
        assert_eq!(
            stderr(&exec),
            "Error from server (BadRequest): cannot exec into container \"plain\" in pod \"plain\": the lab-runner simulator runs no processes\n"
        );
        // failRequestsGreaterThanOne: the kubelet rejects a pod asking for 2 shared GPUs.
        label(&sim, &client, "gpu-1", &["nvidia.com/device-plugin.config=ts-4-strict"]);
        wait(&sim, &client, &["node/gpu-1"], "jsonpath={.status.allocatable.nvidia\\.com/gpu}=4");
        let pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: two-gpus}\nspec:\n  nodeSelector: {kubernetes.io/hostname: gpu-1}\n  containers:\n  - name: cuda\n    image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04\n    resources: {limits: {nvidia.com/gpu: 2}}\n";
        let path = sim.state_dir().join("two-gpus.yaml");
        std::fs::write(&path, pod).unwrap();
        ok(&sim.kubectl(&client, &["apply", "-f", path.to_str().unwrap()]), "two-gpus");
        wait(&sim, &client, &["pod/two-gpus"], "jsonpath={.status.phase}=Failed");
        let describe = ok(&sim.kubectl(&client, &["describe", "pod", "two-gpus"]), "describe");
        let message = "Allocate failed due to rpc error: code = Unknown desc = invalid allocation request for \"nvidia.com/gpu\": invalid request: maximum request size for shared resources is 1; found 2, which is unexpected";
        assert!(describe.contains("Reason:           UnexpectedAdmissionError"), "{describe}");
        assert!(describe.contains(&format!("Message:          Pod was rejected: {message}")), "{describe}");
        assert!(describe.contains(&format!("kubelet            {message}")), "{describe}");

        // Newer clients try WebSockets first, then SPDY: the refusal still arrives as one line.
        for newer in clients().into_iter().filter(|c| c.version == "1.37") {
            let exec = sim.kubectl(&newer, &["exec", "plain", "--", "nvidia-smi"]);
            assert_eq!(exec.status.code(), Some(1));
            assert_eq!(
                stderr(&exec),
                "error: unable to upgrade connection: cannot exec into container \"plain\" in pod \"plain\": the lab-runner simulator runs no processes\n"
            );
        }
    }
}

/// Labels GFD stopped writing are forgotten once removed: before, a MIG label dropped after a
/// switch back to `default` kept GFD "changed" forever, so every sync rewrote
/// `nvidia.com/gfd.timestamp`, each write woke the controllers again, and a served simulator span
/// a core and would not stop on SIGTERM.
#[tokio::test]
async fn gfd_settles_after_labels_it_no_longer_writes_are_removed() {
    let mut gpu = Gpu::new();
    gpu.create("daemonsets", helm_gfd());
    gpu.create("daemonsets", mig_manager());
    gpu.install_plugin();
    gpu.label("gpu-3", "nvidia.com/device-plugin.config", "mig-mixed");
    gpu.label("gpu-3", "nvidia.com/mig.config", "all-1g.5gb");
    gpu.run_for(30);
    assert_eq!(gpu.node_label("gpu-3", "nvidia.com/mig-1g.5gb.count").as_deref(), Some("7"));
    gpu.label("gpu-3", "nvidia.com/device-plugin.config", "default");
    gpu.run_for(30);
    assert_eq!(gpu.node_label("gpu-3", "nvidia.com/mig-1g.5gb.count"), None);
    let settled = gpu.node_label("gpu-3", "nvidia.com/gfd.timestamp");
    assert!(settled.is_some());
    // Unrelated node changes make GFD look again; nothing it writes has changed.
    for round in 0..3 {
        gpu.label("gpu-3", "example.com/touched", &round.to_string());
        gpu.run_for(60);
    }
    assert_eq!(gpu.node_label("gpu-3", "nvidia.com/gfd.timestamp"), settled);
}
