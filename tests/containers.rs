//! Container tests: the project's image runs the simulator and the harness reaches it from the host like a kind cluster (fixture: tests/support/container.rs).
//!
//! Few and quick on purpose: one variant per lab here (every variant runs on the plain simulator
//! in `selftest`; stuck-rollout's on the brownfield fixture), the course case with kubectl 1.33 on the host, and class grading over two
//! containers. Without Docker they skip with a printed reason; under `CI=true` they fail.

use std::{path::Path, process::Output, time::Instant};

use serde_json::Value;

use crate::{
    course_case::{DAEMONSET, TOPOLOGY},
    support::binary::{lab_runner, stderr, stdout},
    support::container::{SimCluster, unavailable},
    support::kubectl::{clients, kubectl_on_path},
};

/// `lab-runner --kubeconfig K ARGS…`, its wall time printed (reported, never asserted).
fn lab_runner_on(kubeconfig: &Path, args: &[&str]) -> Output {
    let began = Instant::now();
    let output = lab_runner().arg("--kubeconfig").arg(kubeconfig).args(args).output().unwrap();
    println!("wall time of `lab-runner {}`: {:.1} s", args.join(" "), began.elapsed().as_secs_f64());
    output
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_selftest_per_lab_passes_against_a_container() {
    if unavailable().is_some() || !kubectl_on_path() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    // Simulated delays as fast as `selftest` makes its own simulator's (SELFTEST_SPEED).
    let speed = lab_runner::engine::selftest::SELFTEST_SPEED.to_string();
    let args = ["--speed", speed.as_str()];
    let (rollout, sharing) =
        tokio::join!(SimCluster::start(dir.path(), &args), SimCluster::start(dir.path(), &args));
    // stuck-rollout on a container that already runs things (the platform's PrometheusRule CRD and
    // rules, the GPU Operator's namespace, another team): the brownfield fixture is applied first,
    // and selftest's resets must leave all of it as it was.
    let brownfield = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/clusters/brownfield");
    let runs = [
        (&rollout, vec!["selftest", "stuck-rollout", "--variant", "image", "--fixture", brownfield]),
        (&sharing, vec!["selftest", "gpu-sharing"]),
    ];
    let outputs: Vec<Output> = std::thread::scope(|scope| {
        let running: Vec<_> = runs
            .iter()
            .map(|(cluster, args)| scope.spawn(|| lab_runner_on(&cluster.kubeconfig, args)))
            .collect();
        running.into_iter().map(|run| run.join().unwrap()).collect()
    });
    for ((_, args), output) in runs.iter().zip(&outputs) {
        let out = stdout(output);
        assert_eq!(output.status.code(), Some(0), "{args:?}: {out}{}", stderr(output));
        assert!(!stderr(output).contains("simulator at"), "no simulator of its own was started");
        let last = out.lines().last().unwrap_or_default();
        assert!(last.starts_with(&format!("selftest {}", args[1])) && last.ends_with(": passed"), "{out}");
    }
    rollout.stop().await;
    sharing.stop().await;
}

/// kubectl 1.33 on the host against a container, with a private HOME (discovery cache).
struct HostKubectl<'a> {
    path: std::path::PathBuf,
    cluster: &'a SimCluster,
    home: std::path::PathBuf,
}

impl HostKubectl<'_> {
    fn run(&self, args: &[&str]) -> Output {
        std::process::Command::new(&self.path)
            .arg("--kubeconfig")
            .arg(&self.cluster.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .env("HOME", &self.home)
            .output()
            .unwrap()
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "kubectl {args:?}: {}{}", stdout(&output), stderr(&output));
        stdout(&output)
    }

    /// DESIRED CURRENT READY UP-TO-DATE AVAILABLE of `kubectl get ds gpu-ds`.
    fn counters(&self) -> Vec<String> {
        let table = self.ok(&["get", "ds", "gpu-ds", "--no-headers"]);
        table.split_whitespace().skip(1).take(5).map(str::to_string).collect()
    }

    /// Polls the counters until they are `wanted` (a generous wall-clock bound, never a timing
    /// assertion: the simulator runs 20× faster than real time).
    fn wait_for(&self, wanted: [&str; 5]) {
        let deadline = Instant::now() + std::time::Duration::from_secs(90);
        loop {
            let counters = self.counters();
            if counters == wanted {
                return;
            }
            assert!(Instant::now() < deadline, "timed out waiting for {wanted:?}; last {counters:?}");
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_course_case_with_host_kubectl_and_a_restart_on_the_same_volume() {
    if unavailable().is_some() {
        return;
    }
    let Some(client) = clients().into_iter().find(|c| c.version == "1.33") else { return };
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    std::fs::create_dir_all(&state).unwrap();
    // The state directory is the container's volume: the topology goes in through it too.
    std::fs::write(state.join("topology.yaml"), TOPOLOGY).unwrap();
    let cluster = SimCluster::start_on(
        &state,
        &["--topology", "/var/lib/lab-runner/sim/topology.yaml", "--speed", "20"],
    )
    .await;
    let kubectl = HostKubectl { path: client.path.clone(), cluster: &cluster, home: dir.path().join("home") };
    std::fs::write(dir.path().join("ds.yaml"), DAEMONSET).unwrap();
    kubectl.ok(&["apply", "-f", dir.path().join("ds.yaml").to_str().unwrap()]);
    kubectl.wait_for(["3"; 5]);

    // The course's split: one node replaced by an image that cannot be pulled, stalled there.
    kubectl.ok(&["set", "image", "ds/gpu-ds", "main=nginx:1.27-does-not-exist"]);
    kubectl.wait_for(["3", "3", "2", "1", "2"]);
    // `rollout status` waits, then gives up (kubectl rollout_status.go: literal lines).
    let waited = kubectl.run(&["rollout", "status", "ds/gpu-ds", "--timeout=5s"]);
    assert_eq!(waited.status.code(), Some(1));
    assert_eq!(stderr(&waited), "error: timed out waiting for the condition\n");
    assert!(
        stdout(&waited).lines().all(|line| line
            == "Waiting for daemon set \"gpu-ds\" rollout to finish: 1 out of 3 new pods have been updated..."),
        "{}",
        stdout(&waited)
    );
    assert_eq!(kubectl.ok(&["rollout", "undo", "ds/gpu-ds"]), "daemonset.apps/gpu-ds rolled back\n");
    kubectl.wait_for(["3"; 5]);
    let done = kubectl.run(&["rollout", "status", "ds/gpu-ds", "--timeout=60s"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));

    // A new container on the same volume finds the cluster as it was, with the same CA and tokens.
    cluster.stop().await;
    let restarted = SimCluster::start_on(&state, &["--speed", "20"]).await;
    let kubectl = HostKubectl { path: client.path, cluster: &restarted, home: dir.path().join("home") };
    kubectl.wait_for(["3"; 5]);
    let images =
        kubectl.ok(&["get", "ds", "gpu-ds", "-o", "jsonpath={.spec.template.spec.containers[0].image}"]);
    assert_eq!(images, "nginx:1.27");
    restarted.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_grades_two_containers_as_a_class() {
    if unavailable().is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = tokio::join!(
        SimCluster::start(dir.path(), &["--speed", "200"]),
        SimCluster::start(dir.path(), &["--speed", "200"])
    );
    // One kubeconfig with a context per learner, as an instructor's class kubeconfig.
    let mut class: Option<kube::config::Kubeconfig> = None;
    for (learner, cluster) in [("alice", &first), ("bob", &second)] {
        let text = std::fs::read_to_string(&cluster.kubeconfig)
            .unwrap()
            .replace("lab-runner-sim", learner)
            .replace("lab-runner-admin", &format!("{learner}-admin"))
            .replace("lab-runner-viewer", &format!("{learner}-viewer"));
        let config = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        class = Some(match class {
            None => config,
            Some(merged) => merged.merge(config).unwrap(),
        });
    }
    let kubeconfig = dir.path().join("class-kubeconfig");
    std::fs::write(&kubeconfig, serde_json::to_string(&class.unwrap()).unwrap()).unwrap();
    for learner in ["alice", "bob"] {
        let started = lab_runner_on(
            &kubeconfig,
            &["--context", learner, "start", "stuck-rollout", "--variant", "image"],
        );
        assert_eq!(started.status.code(), Some(0), "{}{}", stdout(&started), stderr(&started));
    }
    let graded = lab_runner_on(
        &kubeconfig,
        &["check", "stuck-rollout", "--contexts", "alice,bob", "--format", "json"],
    );
    // Nothing solved yet: both graded (not ERROR), both failing.
    assert_eq!(graded.status.code(), Some(1), "{}", stderr(&graded));
    let report: Value = serde_json::from_slice(&graded.stdout).unwrap();
    let rows: Vec<(&str, &str)> = report["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["context"].as_str().unwrap(), l["status"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [("alice", "FAIL"), ("bob", "FAIL")], "{report}");
    first.stop().await;
    second.stop().await;
}

/// Opt-in (`LAB_RUNNER_K3S=1`) and untested on the development machines, which cannot pull
/// rancher/k3s: the stuck-rollout lab's selftest on a real k3s node with fake GPU capacity.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stuck_rollout_selftest_on_real_k3s() {
    if crate::support::container::k3s_unavailable().is_some() || !kubectl_on_path() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let k3s = crate::support::container::K3sCluster::start(dir.path()).await;
    let output = lab_runner_on(&k3s.kubeconfig, &["selftest", "stuck-rollout", "--variant", "image"]);
    assert_eq!(output.status.code(), Some(0), "{}{}", stdout(&output), stderr(&output));
}
