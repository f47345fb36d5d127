//! Real kubectl (1.32, 1.33, 1.37) against `lab-runner sim up` through its kubeconfig: TLS with
//! the simulator's CA, the bearer tokens, discovery, reads and writes, output snapshotted.
//!
//! Clients are found by path. Outside CI a missing one is skipped with a printed reason; under
//! `CI=true` a missing client fails the test (DESIGN §7.3).

use std::{path::PathBuf, process::Output};

use crate::util::{lab_runner, stderr, stdout};

/// One kubectl binary.
pub struct Kubectl {
    /// `1.32`, `1.33`, `1.37`.
    pub version: &'static str,
    /// Its path.
    pub path: PathBuf,
}

/// The kubectl clients to test with; fails under CI when one is missing, skips otherwise.
pub fn clients() -> Vec<Kubectl> {
    let python_scripts = PathBuf::from("/root/.pyenv/versions/3.11.7/bin/kubectl");
    let candidates = [
        ("1.32", Some(PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.32"))),
        ("1.33", Some(PathBuf::from("/usr/lib/google-cloud-sdk/bin/kubectl.1.33"))),
        ("1.37", std::env::var_os("KUBECTL_1_37").map(PathBuf::from).or(Some(python_scripts))),
    ];
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    let mut found = Vec::new();
    for (version, path) in candidates {
        match path.filter(|p| p.is_file()) {
            Some(path) => found.push(Kubectl { version, path }),
            None if ci => panic!("kubectl {version} is missing (CI=true: a missing client fails)"),
            None => eprintln!("skip: kubectl {version} not found"),
        }
    }
    found
}

/// A simulator started through the built binary in a temporary state dir, stopped on drop.
pub struct Sim {
    dir: tempfile::TempDir,
    /// Its kubeconfig.
    pub kubeconfig: PathBuf,
}

impl Sim {
    /// `lab-runner sim up --state-dir <tmp> <args>`.
    pub fn up(args: &[&str]) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let output = lab_runner()
            .args(["sim", "up", "--state-dir"])
            .arg(dir.path().join("sim"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "sim up failed: {}", stderr(&output));
        let kubeconfig = dir.path().join("sim").join("kubeconfig");
        Sim { dir, kubeconfig }
    }

    /// Runs `kubectl --kubeconfig <ours> <args>` with a private HOME and discovery cache.
    pub fn kubectl(&self, client: &Kubectl, args: &[&str]) -> Output {
        let home = self.dir.path().join(format!("home-{}", client.version));
        std::fs::create_dir_all(&home).unwrap();
        std::process::Command::new(&client.path)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .env("HOME", &home)
            .env("KUBECACHEDIR", home.join("cache"))
            .output()
            .unwrap()
    }

    /// The state directory.
    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("sim")
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = lab_runner().args(["sim", "down", "--state-dir"]).arg(self.state_dir()).output();
    }
}

fn ok(output: &Output, what: &str) -> String {
    assert!(output.status.success(), "{what} failed: {}{}", stdout(output), stderr(output));
    stdout(output)
}

fn assert_same_for_every_client(outputs: &[(&'static str, String)], snapshot: &str) {
    let Some((_, first)) = outputs.first() else { return };
    for (version, output) in outputs {
        assert_eq!(output, first, "kubectl {version} printed something else for {snapshot}");
    }
    insta::assert_snapshot!(snapshot, first);
}

#[test]
fn version_and_discovery() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&[]);
    let mut resources = Vec::new();
    for client in &clients {
        let version = ok(&sim.kubectl(client, &["version", "-o", "json"]), "kubectl version");
        let version: serde_json::Value = serde_json::from_str(&version).unwrap();
        assert_eq!(version["serverVersion"]["gitVersion"], "v1.33.4", "kubectl {}", client.version);
        resources.push((client.version, ok(&sim.kubectl(client, &["api-resources"]), "api-resources")));
    }
    assert_same_for_every_client(&resources, "api_resources");
}

#[test]
fn credentials_are_required_and_the_viewer_only_reads() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "1"]);
    for client in &clients {
        let anonymous = sim.kubectl(client, &["--token", "not-a-token", "get", "namespaces"]);
        assert_eq!(anonymous.status.code(), Some(1), "kubectl {}", client.version);
        // With a cold discovery cache kubectl fails on discovery first, as against a real server.
        assert_eq!(
            stderr(&anonymous).lines().last(),
            Some(
                "error: You must be logged in to the server (the server has asked for the client to provide credentials)"
            )
        );

        let viewer =
            sim.kubectl(client, &["--context", "lab-runner-sim-viewer", "create", "namespace", "team-a"]);
        assert_eq!(viewer.status.code(), Some(1), "kubectl {}", client.version);
        assert_eq!(
            stderr(&viewer),
            "Error from server (Forbidden): namespaces is forbidden: User \"lab-runner-viewer\" cannot create resource \"namespaces\" in API group \"\" at the cluster scope\n"
        );
    }
}
