//! `SimCluster`: the project's image running `sim serve` in Docker, reached from the host like a kind cluster.
//!
//! The image is `$LAB_RUNNER_TEST_IMAGE` when set (`.ci/run` builds it once with
//! `scripts/build-image.sh` and sets it), else this test run builds `lab-runner:test` once with
//! that script. The container's state directory is a host directory bind-mounted at
//! /var/lib/lab-runner/sim, so the fixture writes the kubeconfig for the published port with the
//! host's own `lab-runner sim kubeconfig --server …` (the documented way out), and a second
//! container on the same directory finds the cluster the first one left.
//!
//! Without a Docker daemon the tests using it skip with a printed reason; under `CI=true` they
//! fail. Docker 20.10 (Debian bookworm's `docker.io`) speaks Engine API 1.41 and refuses newer
//! clients ("client version 1.52 is too new"), while testcontainers 0.27's bollard asks for 1.52
//! and never negotiates: for such a daemon the fixture puts a small in-process proxy in front of
//! it that rewrites the version in each request path (see [`api_version_proxy`]).

use std::{
    path::{Path, PathBuf},
    process::Command,
    sync::OnceLock,
    time::{Duration, Instant},
};

use testcontainers::{
    ContainerAsync, GenericImage, ImageExt,
    core::{IntoContainerPort, Mount, WaitFor},
    runners::AsyncRunner,
};

/// The environment variable naming a prebuilt image (`name:tag`).
pub const IMAGE_ENV: &str = "LAB_RUNNER_TEST_IMAGE";
/// The tag a test run builds when [`IMAGE_ENV`] is unset.
const BUILT_IMAGE: &str = "lab-runner:test";
/// The port `sim serve` listens on inside the container.
const API_PORT: u16 = 6443;
/// The state directory inside the container (the image's `LAB_RUNNER_SIM_DIR`).
const STATE_IN_CONTAINER: &str = "/var/lib/lab-runner/sim";
/// Engine API version bollard 0.20 (testcontainers 0.27) asks for.
const CLIENT_API_VERSION: (u32, u32) = (1, 52);

/// A simulator in a container; the container is removed when this is dropped.
pub struct SimCluster {
    container: ContainerAsync<GenericImage>,
    /// The admin kubeconfig for the published port.
    pub kubeconfig: PathBuf,
}

/// Why a container test cannot run here: `Some(reason)` skips it (printing the reason), and
/// under `CI=true` the test fails instead.
pub fn unavailable() -> Option<String> {
    let reason = match docker() {
        Ok(_) => match image() {
            Ok(_) => return None,
            Err(reason) => reason.clone(),
        },
        Err(reason) => reason.clone(),
    };
    assert!(std::env::var("CI").as_deref() != Ok("true"), "container tests cannot run under CI: {reason}");
    eprintln!("skipped: {reason}");
    Some(reason)
}

impl SimCluster {
    /// Starts `lab-runner sim serve --listen 0.0.0.0:6443 ARGS…` in a new container on a new
    /// state directory under `dir`, and waits until the API answers through the published port.
    pub async fn start(dir: &Path, args: &[&str]) -> SimCluster {
        let state_dir = dir.join(format!("sim-{}", unique()));
        std::fs::create_dir_all(&state_dir).unwrap();
        SimCluster::start_on(&state_dir, args).await
    }

    /// The same on an existing state directory (a restart with the volume kept).
    pub async fn start_on(state_dir: &Path, args: &[&str]) -> SimCluster {
        let image = image().as_ref().expect("unavailable() was checked first");
        let (name, tag) = image.rsplit_once(':').unwrap_or((image.as_str(), "latest"));
        let began = Instant::now();
        let mut command = vec!["sim", "serve", "--listen", "0.0.0.0:6443"];
        command.extend_from_slice(args);
        let request = GenericImage::new(name, tag)
            .with_exposed_port(API_PORT.tcp())
            .with_wait_for(WaitFor::message_on_stdout("Press Ctrl-C to stop."))
            .with_cmd(command)
            .with_mount(Mount::bind_mount(state_dir.display().to_string(), STATE_IN_CONTAINER))
            // The host's user, so the state files (mode 0600) stay readable by the test.
            .with_user(format!(
                "{}:{}",
                rustix::process::getuid().as_raw(),
                rustix::process::getgid().as_raw()
            ))
            .with_startup_timeout(Duration::from_secs(120));
        let container = request.start().await.unwrap_or_else(|e| panic!("starting {image}: {e}"));
        let port = container.get_host_port_ipv4(API_PORT).await.unwrap();
        let endpoint = format!("https://127.0.0.1:{port}");
        let exported = crate::support::binary::lab_runner()
            .args(["sim", "kubeconfig", "--server", &endpoint, "--state-dir"])
            .arg(state_dir)
            .output()
            .unwrap();
        assert!(exported.status.success(), "{}", crate::support::binary::stderr(&exported));
        let kubeconfig = state_dir.join(format!("kubeconfig-{port}"));
        std::fs::write(&kubeconfig, &exported.stdout).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !lab_runner::sim::lifecycle::answers_version(&kubeconfig).await {
            assert!(
                Instant::now() < deadline,
                "{endpoint} did not answer /version through the published port"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        // Reported, never asserted: tests assert orderings and end states, not timings.
        println!("container start to first API answer: {:.2} s", began.elapsed().as_secs_f64());
        SimCluster { container, kubeconfig }
    }

    /// Stops the container (SIGTERM, as `docker stop`), then removes it.
    pub async fn stop(self) {
        self.container.stop().await.unwrap();
        self.container.rm().await.unwrap();
    }
}

fn unique() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    format!("{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The Docker daemon: its Engine API version, once per run. A daemon older than bollard's API
/// gets the version proxy, and `DOCKER_HOST` points testcontainers at it.
fn docker() -> &'static Result<String, String> {
    static DOCKER: OnceLock<Result<String, String>> = OnceLock::new();
    DOCKER.get_or_init(|| {
        let socket = match std::env::var("DOCKER_HOST") {
            Ok(host) if !host.is_empty() => match host.strip_prefix("unix://") {
                Some(path) => PathBuf::from(path),
                None => return Err(format!("DOCKER_HOST={host}: only unix sockets are supported here")),
            },
            _ => PathBuf::from("/var/run/docker.sock"),
        };
        let version = daemon_api_version(&socket)
            .map_err(|e| format!("no Docker daemon answers on {}: {e}", socket.display()))?;
        let parsed = version
            .split_once('.')
            .and_then(|(major, minor)| Some((major.parse::<u32>().ok()?, minor.parse::<u32>().ok()?)))
            .ok_or_else(|| format!("the Docker daemon reports API version {version:?}"))?;
        if parsed < CLIENT_API_VERSION {
            let proxy = api_version_proxy(socket, version.clone())?;
            // SAFETY: set once, before the first container request (this OnceLock runs before
            // any testcontainers call); Rust's own environment readers take the same lock.
            unsafe { std::env::set_var("DOCKER_HOST", format!("unix://{}", proxy.display())) };
        }
        Ok(version)
    })
}

/// `GET /version` on the daemon's socket (unversioned: every daemon answers it), its ApiVersion.
fn daemon_api_version(socket: &Path) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::os::unix::net::UnixStream::connect(socket)?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(b"GET /version HTTP/1.0\r\nHost: docker\r\n\r\n")?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let body = response.split_once("\r\n\r\n").map_or("", |(_, body)| body);
    let json: serde_json::Value = serde_json::from_str(body).map_err(std::io::Error::other)?;
    json["ApiVersion"].as_str().map(str::to_string).ok_or_else(|| std::io::Error::other(body.to_string()))
}

/// A unix socket that forwards every request to `daemon`, its path's `/v1.NN/` prefix rewritten
/// to the daemon's `version`; bodies (including streamed logs) pass through untouched. Runs on
/// its own thread for the rest of the test run. Upgraded connections (attach, interactive exec)
/// are not forwarded: the fixture uses neither.
fn api_version_proxy(daemon: PathBuf, version: String) -> Result<PathBuf, String> {
    let dir = std::env::temp_dir().join(format!("lab-runner-docker-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let path = dir.join("docker.sock");
    let _ = std::fs::remove_file(&path);
    let std_listener = std::os::unix::net::UnixListener::bind(&path).map_err(|e| e.to_string())?;
    std_listener.set_nonblocking(true).map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::UnixListener::from_std(std_listener).unwrap();
            loop {
                let Ok((stream, _)) = listener.accept().await else { continue };
                let (daemon, version) = (daemon.clone(), version.clone());
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |request| {
                        forward(request, daemon.clone(), version.clone())
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    });
    Ok(path)
}

async fn forward(
    mut request: hyper::Request<hyper::body::Incoming>,
    daemon: PathBuf,
    version: String,
) -> Result<hyper::Response<hyper::body::Incoming>, std::io::Error> {
    let target = request.uri().path_and_query().map_or("/", |p| p.as_str()).to_string();
    let rewritten = match target.strip_prefix("/v").and_then(|rest| rest.split_once('/')) {
        Some((asked, rest)) if asked.split('.').all(|n| n.parse::<u32>().is_ok()) => {
            format!("/v{version}/{rest}")
        }
        _ => target,
    };
    *request.uri_mut() = rewritten.parse().map_err(std::io::Error::other)?;
    let stream = tokio::net::UnixStream::connect(&daemon).await?;
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .map_err(std::io::Error::other)?;
    tokio::spawn(connection);
    sender.send_request(request).await.map_err(std::io::Error::other)
}

/// The image to run: `$LAB_RUNNER_TEST_IMAGE`, or `lab-runner:test` built once by
/// `scripts/build-image.sh` (a release build of the binary: minutes on a cold cache).
fn image() -> &'static Result<String, String> {
    static IMAGE: OnceLock<Result<String, String>> = OnceLock::new();
    IMAGE.get_or_init(|| {
        if let Ok(image) = std::env::var(IMAGE_ENV)
            && !image.is_empty()
        {
            let inspected =
                Command::new("docker").args(["image", "inspect", "--format", "{{.Id}}", &image]).output();
            return match inspected {
                Ok(out) if out.status.success() => Ok(image),
                Ok(out) => {
                    Err(format!("{IMAGE_ENV}={image}: {}", String::from_utf8_lossy(&out.stderr).trim()))
                }
                Err(e) => Err(format!("{IMAGE_ENV}={image}: cannot run docker: {e}")),
            };
        }
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/build-image.sh");
        eprintln!("building {BUILT_IMAGE} with {} (set {IMAGE_ENV} to use a built image)", script.display());
        let began = Instant::now();
        let built = Command::new("bash")
            .arg(&script)
            .arg(BUILT_IMAGE)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
        if !built.status.success() {
            return Err(format!(
                "{} failed: {}",
                script.display(),
                String::from_utf8_lossy(&built.stderr).lines().rev().take(5).collect::<Vec<_>>().join(" | ")
            ));
        }
        println!("image {BUILT_IMAGE} built in {:.0} s", began.elapsed().as_secs_f64());
        Ok(BUILT_IMAGE.to_string())
    })
}

/// Set to `1` to run the real-k3s test (testcontainers-modules' k3s; the image comes from a
/// registry, so it never runs on the development machines, where it is untested).
pub const K3S_ENV: &str = "LAB_RUNNER_K3S";
/// The k3s release matching the simulator's Kubernetes 1.33 (the module's default is 1.28).
const K3S_TAG: &str = "v1.33.4-k3s1";

/// Why the real-k3s test does not run here, printed; `None` when opted in and Docker answers.
/// Opt-in even under CI: a registry is needed.
pub fn k3s_unavailable() -> Option<String> {
    let reason = if std::env::var(K3S_ENV).as_deref() != Ok("1") {
        format!("real k3s is opt-in: set {K3S_ENV}=1 where rancher/k3s:{K3S_TAG} can be pulled")
    } else {
        match docker() {
            Ok(_) => return None,
            Err(reason) => reason.clone(),
        }
    };
    eprintln!("skipped: {reason}");
    Some(reason)
}

/// A real k3s server in a container whose node carries fake GPU capacity.
pub struct K3sCluster {
    _container: ContainerAsync<testcontainers_modules::k3s::K3s>,
    /// The admin kubeconfig for the published port.
    pub kubeconfig: PathBuf,
}

impl K3sCluster {
    /// Starts k3s (privileged, as the module requires), writes its kubeconfig for the published
    /// port, and makes its node look like a GPU node the way fake-gpu-operator does: the node
    /// status gets `nvidia.com/gpu` capacity and allocatable (the API's way to advertise an
    /// extended resource: a PATCH of the status subresource), and the node the GFD labels.
    pub async fn start(dir: &Path) -> K3sCluster {
        use testcontainers_modules::k3s::{K3s, KUBE_SECURE_PORT};
        let _ = rustls::crypto::ring::default_provider().install_default();
        let container = K3s::default()
            .with_conf_mount(dir)
            .with_privileged(true)
            .with_userns_mode("host")
            .with_tag(K3S_TAG)
            .start()
            .await
            .unwrap_or_else(|e| panic!("starting rancher/k3s:{K3S_TAG}: {e}"));
        let port = container.get_host_port_ipv4(KUBE_SECURE_PORT).await.unwrap();
        let mut config =
            kube::config::Kubeconfig::from_yaml(&container.image().read_kube_config().unwrap()).unwrap();
        for cluster in config.clusters.iter_mut().filter_map(|c| c.cluster.as_mut()) {
            cluster.server = Some(format!("https://127.0.0.1:{port}"));
        }
        let kubeconfig = dir.join("k3s-kubeconfig");
        std::fs::write(&kubeconfig, serde_json::to_string(&config).unwrap()).unwrap();

        let client = kube::Client::try_from(
            kube::Config::from_custom_kubeconfig(config, &Default::default()).await.unwrap(),
        )
        .unwrap();
        let nodes: kube::Api<k8s_openapi::api::core::v1::Node> = kube::Api::all(client);
        let params = kube::api::PatchParams::default();
        for node in nodes.list(&Default::default()).await.unwrap() {
            let name = node.metadata.name.unwrap();
            let labels = serde_json::json!({"metadata": {"labels": {
                "nvidia.com/gpu.present": "true",
                "nvidia.com/gpu.count": "1",
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
            }}});
            nodes.patch(&name, &params, &kube::api::Patch::Merge(labels)).await.unwrap();
            let capacity = serde_json::json!({"status": {
                "capacity": {"nvidia.com/gpu": "1"},
                "allocatable": {"nvidia.com/gpu": "1"},
            }});
            nodes.patch_status(&name, &params, &kube::api::Patch::Merge(capacity)).await.unwrap();
        }
        K3sCluster { _container: container, kubeconfig }
    }
}
