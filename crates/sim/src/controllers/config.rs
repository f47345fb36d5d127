//! What the simulated kubelet and controllers are configured with: the image catalog and timings.
//!
//! Both come from the topology file (`images:` and `timings:`, carried verbatim by
//! `sim::topology::Topology`) on top of built-in defaults. The timing defaults are the
//! simulator's own (`docs/simulator.md`, "Topology files"); the back-off schedule is upstream's
//! (`pkg/kubelet/kubelet.go`, `backOffPeriod = 10s`, `MaxContainerBackOff = 300s`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::topology::Topology;

/// Errors reading the catalog or timings from a topology.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `images:` is not a list of image references or `{name, pullSeconds, sizeBytes}` maps.
    #[error("topology `images`: {0}")]
    Images(serde_json::Error),
    /// `timings:` has an unknown key or a value that is not a number of seconds.
    #[error("topology `timings`: {0}")]
    Timings(serde_json::Error),
    /// An image's `runs:` is neither a number of seconds nor a duration like `30s` or `1m30s`.
    #[error("topology `images`: {image}: `runs: {text}` is not a duration (e.g. 30s, 1m30s, 45)")]
    RunDuration {
        /// The image.
        image: String,
        /// What was written.
        text: String,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Delays of the simulated cluster, in simulated seconds.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase", default)]
pub struct Timings {
    /// Pulling an image in the catalog (per-image `pullSeconds` overrides it).
    pub pull_seconds: f64,
    /// Until a pull of an image missing from the catalog fails with ErrImagePull.
    pub pull_fail_seconds: f64,
    /// From ErrImagePull to the kubelet's next sync showing ImagePullBackOff.
    pub back_off_sync_seconds: f64,
    /// First image-pull back-off (upstream 10s).
    pub back_off_initial_seconds: f64,
    /// Back-off ceiling (upstream 300s).
    pub back_off_max_seconds: f64,
    /// From container start to Ready.
    pub readiness_seconds: f64,
    /// From the kill of a terminating pod's containers to the pod object's removal; the
    /// removal happens at the latest when the grace period ends.
    pub container_stop_seconds: f64,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            pull_seconds: 2.0,
            pull_fail_seconds: 1.0,
            back_off_sync_seconds: 1.0,
            back_off_initial_seconds: 10.0,
            back_off_max_seconds: 300.0,
            readiness_seconds: 0.0,
            container_stop_seconds: 1.0,
        }
    }
}

/// One image the simulated registries serve.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogImage {
    /// How long a pull takes; `None` uses [`Timings::pull_seconds`].
    pub pull_seconds: Option<f64>,
    /// Reported in the Pulled event.
    pub size_bytes: u64,
    /// How the image's process behaves once started.
    pub run: ImageRun,
}

/// What a container of an image does once started: serve until stopped, or run to completion.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ImageRun {
    /// Runs until the pod is deleted (servers, `sleep infinity`, device plugins).
    #[default]
    Serves,
    /// Exits on its own `seconds` after start with `exit_code` (batch images: a Job's pod
    /// finishes, a restarting container counts a restart).
    Exits {
        /// Run time in simulated seconds.
        seconds: f64,
        /// The process's exit code (0 = success).
        exit_code: i32,
    },
}

/// The images a pull can find, keyed by normalized reference (`docker.io/library/busybox:1.36`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Catalog {
    images: BTreeMap<String, CatalogImage>,
}

/// Images the course's labs use (the NVIDIA ones: the tags of the GPU Operator's releases,
/// `docs/gpu.md`).
const DEFAULT_IMAGES: &[(&str, u64)] = &[
    ("registry.k8s.io/pause:3.10", 320_368),
    ("registry.k8s.io/pause:3.9", 321_520),
    ("busybox:latest", 2_167_089),
    ("busybox:1.36", 2_159_952),
    ("busybox:1.36.1", 2_159_952),
    ("busybox:1.37", 2_167_089),
    ("busybox:1.37.0", 2_167_089),
    ("busybox:stable", 2_167_089),
    ("nginx:latest", 72_195_292),
    ("nginx:stable", 67_711_872),
    ("nginx:alpine", 21_240_000),
    ("nginx:1.25", 70_544_635),
    ("nginx:1.26", 71_074_820),
    ("nginx:1.27", 72_195_292),
    ("nginx:1.27.4", 72_195_292),
    ("ubuntu:22.04", 29_533_422),
    ("ubuntu:24.04", 29_754_290),
    ("nvcr.io/nvidia/k8s-device-plugin:v0.17.0", 176_302_415),
    ("nvcr.io/nvidia/k8s-device-plugin:v0.17.1", 176_410_238),
    ("nvcr.io/nvidia/k8s-device-plugin:v0.17.4", 176_922_644),
    ("nvcr.io/nvidia/k8s-device-plugin:v0.18.1", 181_227_090),
    ("nvcr.io/nvidia/k8s-device-plugin:v0.19.0", 183_004_512),
    ("nvcr.io/nvidia/k8s/container-toolkit:v1.17.4-ubuntu20.04", 139_102_331),
    ("nvcr.io/nvidia/k8s/container-toolkit:v1.17.5-ubuntu20.04", 139_210_004),
    ("nvcr.io/nvidia/k8s/container-toolkit:v1.17.8-ubuntu20.04", 140_118_220),
    ("nvcr.io/nvidia/k8s/container-toolkit:v1.18.1", 142_330_871),
    ("nvcr.io/nvidia/k8s/container-toolkit:v1.19.0", 143_002_118),
    ("nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.10.0-ubuntu20.04", 159_806_417),
    ("nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.1-ubuntu20.04", 160_220_036),
    ("nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.12.3-ubuntu20.04", 160_511_702),
    ("nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.13.1", 161_004_331),
    ("nvcr.io/nvidia/cloud-native/k8s-mig-manager:v0.14.0", 161_500_210),
    ("nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04", 87_605_112),
    ("nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04", 88_102_338),
    ("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", 216_003_441),
    ("nvcr.io/nvidia/k8s/dcgm-exporter:3.3.9-3.6.1-ubuntu22.04", 442_811_020),
];

/// Built-in batch images: the CUDA vectorAdd sample prints `Test PASSED` and exits 0 within
/// seconds (the team Jobs of the gpu-sharing lab run it).
const DEFAULT_BATCH_IMAGES: &[(&str, f64, i32)] =
    &[("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0", 5.0, 0)];

#[derive(Deserialize)]
#[serde(untagged)]
enum ImageEntry {
    Name(String),
    Detailed(DetailedImage),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct DetailedImage {
    name: String,
    #[serde(default)]
    pull_seconds: Option<f64>,
    #[serde(default)]
    size_bytes: Option<u64>,
    /// `30s`, `1m30s` or a number of seconds: the image exits on its own after that long.
    #[serde(default)]
    runs: Option<Value>,
    /// The exit code when it does (default 0).
    #[serde(default)]
    exit_code: Option<i32>,
}

/// A run time: a number of seconds, or Go-style duration text (`30s`, `1m30s`, `500ms`, `1h`).
///
/// ```
/// use lab_runner_sim::controllers::config::parse_run_seconds;
/// assert_eq!(parse_run_seconds(&serde_json::json!("1m30s")), Some(90.0));
/// assert_eq!(parse_run_seconds(&serde_json::json!(12)), Some(12.0));
/// assert_eq!(parse_run_seconds(&serde_json::json!("soon")), None);
/// ```
pub fn parse_run_seconds(value: &Value) -> Option<f64> {
    if let Some(seconds) = value.as_f64() {
        return (seconds >= 0.0).then_some(seconds);
    }
    let text = value.as_str()?.trim();
    if text.is_empty() {
        return None;
    }
    let mut total = 0.0;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let number: f64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return None,
        };
        total += number * scale;
        rest = &rest[unit_len..];
    }
    Some(total)
}

impl Catalog {
    /// The built-in catalog: pause, busybox, nginx, ubuntu and the NVIDIA images of the labs.
    pub fn with_defaults() -> Catalog {
        let mut catalog = Catalog::default();
        for (name, size) in DEFAULT_IMAGES {
            let run = DEFAULT_BATCH_IMAGES
                .iter()
                .find(|(batch, _, _)| batch == name)
                .map(|(_, seconds, exit_code)| ImageRun::Exits { seconds: *seconds, exit_code: *exit_code })
                .unwrap_or_default();
            catalog.add(name, CatalogImage { pull_seconds: None, size_bytes: *size, run });
        }
        catalog
    }

    /// Adds (or replaces) an image; pods waiting for it start at their next pull attempt.
    pub fn add(&mut self, reference: &str, image: CatalogImage) {
        self.images.insert(normalize_image(reference), image);
    }

    /// Removes an image; later pulls of it fail.
    pub fn remove(&mut self, reference: &str) {
        self.images.remove(&normalize_image(reference));
    }

    /// The catalog entry of `reference`, if a pull can find it.
    pub fn find(&self, reference: &str) -> Option<&CatalogImage> {
        self.images.get(&normalize_image(reference))
    }
}

/// The fully qualified reference a runtime resolves (`busybox` →
/// `docker.io/library/busybox:latest`), as containerd's docker reference normalization does.
///
/// ```
/// use lab_runner_sim::controllers::config::normalize_image;
/// assert_eq!(normalize_image("busybox"), "docker.io/library/busybox:latest");
/// assert_eq!(normalize_image("nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04"), "nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04");
/// ```
pub fn normalize_image(reference: &str) -> String {
    let (first, rest) = match reference.split_once('/') {
        Some((first, rest)) => (first, Some(rest)),
        None => (reference, None),
    };
    let qualified = match rest {
        Some(_) if first.contains('.') || first.contains(':') || first == "localhost" => {
            reference.to_string()
        }
        Some(_) => format!("docker.io/{reference}"),
        None => format!("docker.io/library/{reference}"),
    };
    let last = qualified.rsplit('/').next().unwrap_or_default();
    if last.contains(':') || last.contains('@') { qualified } else { format!("{qualified}:latest") }
}

/// The catalog and timings the controllers run with.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// GPU hardware per node, for the NVIDIA components the kubelet emulates (issue #6).
    pub gpus: crate::gpu::agent::GpuHardware,
    /// Images a pull finds.
    pub catalog: Catalog,
    /// Delays.
    pub timings: Timings,
}

impl Config {
    /// The defaults plus what `topology` adds under `images:` and sets under `timings:`.
    pub fn from_topology(topology: &Topology) -> Result<Config> {
        let mut config = from_values(topology.images.as_ref(), topology.timings.as_ref())?;
        config.gpus = crate::gpu::agent::hardware_of(topology);
        Ok(config)
    }

    /// The built-in catalog and default timings.
    pub fn defaults() -> Config {
        Config { gpus: Default::default(), catalog: Catalog::with_defaults(), timings: Timings::default() }
    }
}

/// The defaults plus a topology's raw `images` and `timings` values.
pub fn from_values(images: Option<&Value>, timings: Option<&Value>) -> Result<Config> {
    let mut config = Config::defaults();
    if let Some(images) = images {
        let entries: Vec<ImageEntry> = serde_json::from_value(images.clone()).map_err(Error::Images)?;
        for entry in entries {
            let (name, image) = match entry {
                ImageEntry::Name(name) => {
                    (name, CatalogImage { pull_seconds: None, size_bytes: 10_000_000, run: ImageRun::Serves })
                }
                ImageEntry::Detailed(d) => {
                    let run = match &d.runs {
                        None => ImageRun::Serves,
                        Some(runs) => match parse_run_seconds(runs) {
                            Some(seconds) => ImageRun::Exits { seconds, exit_code: d.exit_code.unwrap_or(0) },
                            None => {
                                let text =
                                    runs.as_str().map(str::to_string).unwrap_or_else(|| runs.to_string());
                                return Err(Error::RunDuration { image: d.name, text });
                            }
                        },
                    };
                    let image = CatalogImage {
                        pull_seconds: d.pull_seconds,
                        size_bytes: d.size_bytes.unwrap_or(10_000_000),
                        run,
                    };
                    (d.name, image)
                }
            };
            config.catalog.add(&name, image);
        }
    }
    if let Some(timings) = timings {
        config.timings = serde_json::from_value(timings.clone()).map_err(Error::Timings)?;
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_names_resolve_as_containerd_does() {
        assert_eq!(normalize_image("nginx:1.27"), "docker.io/library/nginx:1.27");
        assert_eq!(normalize_image("bitnami/nginx"), "docker.io/bitnami/nginx:latest");
        assert_eq!(normalize_image("localhost/x"), "localhost/x:latest");
        assert_eq!(normalize_image("registry.k8s.io/pause:3.10"), "registry.k8s.io/pause:3.10");
    }

    #[test]
    fn topology_adds_images_and_sets_timings() {
        let images = serde_json::json!(["example.com/app:v1", {"name": "busybox:0.1", "pullSeconds": 5}]);
        let timings = serde_json::json!({"pullSeconds": 3, "readinessSeconds": 4});
        let config = from_values(Some(&images), Some(&timings)).unwrap();
        assert!(config.catalog.find("example.com/app:v1").is_some());
        assert_eq!(config.catalog.find("docker.io/library/busybox:0.1").unwrap().pull_seconds, Some(5.0));
        assert!(config.catalog.find("nvcr.io/nvidia/k8s-device-plugin:v0.17.4").is_some());
        assert!(config.catalog.find("nvcr.io/nvidia/k8s-device-plugin:v0.99.0").is_none());
        assert_eq!(config.timings.pull_seconds, 3.0);
        assert_eq!(config.timings.back_off_max_seconds, 300.0);
        let bad = serde_json::json!({"pullSecond": 3});
        assert!(from_values(None, Some(&bad)).is_err());
    }

    #[test]
    fn batch_images_run_for_a_while_and_exit() {
        let images = serde_json::json!([
            {"name": "example.com/train:v1", "runs": "1m30s", "exitCode": 3},
            {"name": "example.com/ok:v1", "runs": 20},
        ]);
        let config = from_values(Some(&images), None).unwrap();
        assert_eq!(
            config.catalog.find("example.com/train:v1").unwrap().run,
            ImageRun::Exits { seconds: 90.0, exit_code: 3 }
        );
        assert_eq!(
            config.catalog.find("example.com/ok:v1").unwrap().run,
            ImageRun::Exits { seconds: 20.0, exit_code: 0 }
        );
        assert_eq!(config.catalog.find("nginx:1.27").unwrap().run, ImageRun::Serves);
        let vectoradd = config.catalog.find("nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0").unwrap();
        assert!(matches!(vectoradd.run, ImageRun::Exits { exit_code: 0, .. }));
        let bad = serde_json::json!([{"name": "x:1", "runs": "soon"}]);
        let error = from_values(Some(&bad), None).unwrap_err();
        assert_eq!(
            error.to_string(),
            "topology `images`: x:1: `runs: soon` is not a duration (e.g. 30s, 1m30s, 45)"
        );
    }
}
