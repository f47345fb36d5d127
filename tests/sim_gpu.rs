//! GPU emulation as pure functions: one test per row of gpu-domain.md §3.1 (what a node
//! advertises) and per worked example of §4.2 (GFD labels), plus the config-manager cases.

use std::collections::BTreeMap;

use lab_runner::sim::gpu::{
    advertise::{PluginState, advertised, node_resources},
    config::{EffectiveConfig, PluginEnv},
    gfd::gfd_labels,
    hardware::{GpuModel, MigGeometry, NodeGpus, mig_geometry},
    plugin::{ConfigManagerEnv, ContainerState, DevicePluginPod, PluginPhase, select_config},
};

fn config(yaml: &str) -> EffectiveConfig {
    let env = PluginEnv { mig_strategy: None, mps_root: Some("/run/nvidia/mps".to_string()) };
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
    PluginEnv { mig_strategy: None, mps_root: Some("/run/nvidia/mps".to_string()) }
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
    pod.on_label_change("mps-2", &configs);
    assert_eq!(pod.sidecar, ContainerState::Running);
    assert_eq!(gpus_advertised(&pod)["nvidia.com/gpu"], 2);
    insta::assert_snapshot!(pod.logs["sidecar"].join("\n"), @r"
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
