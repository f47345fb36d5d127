//! Real kubectl (1.32, 1.33, 1.37) against `lab-runner sim up` through its kubeconfig: TLS with
//! the simulator's CA, the bearer tokens, discovery, reads and writes, output snapshotted.
//!
//! The clients, the simulator and the transcripts are the fixtures of `crate::support`: outside
//! CI a missing client is skipped with a printed reason; under `CI=true` it fails the test.

use std::process::Output;

use crate::support::{
    binary::{stderr, stdout},
    kubectl::{Kubectl, clients, expect_line, lines_of},
    sim::Sim,
    transcript::{Transcript, redacted},
};

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

        let reads =
            sim.kubectl(client, &["--context", "lab-runner-sim-viewer", "get", "nodes", "-o", "name"]);
        assert_eq!(stdout(&reads), "node/control-plane\nnode/worker-1\n", "kubectl {}", client.version);

        let viewer =
            sim.kubectl(client, &["--context", "lab-runner-sim-viewer", "create", "namespace", "team-a"]);
        assert_eq!(viewer.status.code(), Some(1), "kubectl {}", client.version);
        assert_eq!(
            stderr(&viewer),
            "Error from server (Forbidden): namespaces is forbidden: User \"lab-runner-viewer\" cannot create resource \"namespaces\" in API group \"\" at the cluster scope\n"
        );
    }
}

impl Sim {
    /// Runs kubectl with `args` split on spaces, records it, and returns the output.
    fn run(&self, client: &Kubectl, transcript: &mut Transcript, command: &str) -> Output {
        let args: Vec<&str> = command.split(' ').collect();
        let output = self.kubectl(client, &args);
        transcript.record(command, &output);
        output
    }

    /// Writes `yaml` to a file in the state dir and creates it with `kubectl create -f` (default
    /// validation: kubectl reads the simulator's /openapi/v3 and sends fieldValidation=Strict).
    fn create(&self, client: &Kubectl, transcript: &mut Transcript, file: &str, yaml: &str) -> Output {
        let path = self.scratch_dir().join(file);
        std::fs::write(&path, yaml).unwrap();
        let output = self.kubectl(client, &["create", "-f", path.to_str().unwrap()]);
        transcript.record(&format!("create -f {file}"), &output);
        output
    }
}

#[test]
fn reads_of_the_seeded_cluster() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&[]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut t = Transcript(String::new());
        for command in [
            "get nodes",
            "get nodes --show-labels",
            "get nodes -o wide",
            "get namespaces",
            "get serviceaccounts -A",
            "get leases -n kube-node-lease",
            "get node gpu-3 -o jsonpath={.status.nodeInfo.kubeletVersion}/{.status.allocatable.cpu}/{.spec.taints}",
            "get node control-plane -o jsonpath={.spec.taints}",
            "get namespace kube-system -o yaml",
        ] {
            let output = sim.run(client, &mut t, command);
            assert!(output.status.success(), "kubectl {} {command}: {}", client.version, stderr(&output));
        }
        transcripts.push((client.version, redacted(&t.0)));
    }
    assert_same_for_every_client(&transcripts, "reads_of_the_seeded_cluster");
}

const NAMESPACE: &str = "apiVersion: v1
kind: Namespace
metadata:
  name: NS
";

// The test's pods name a scheduler that does not exist: the default scheduler leaves them alone
// (as upstream's does) and no kubelet runs them, so what kubectl shows depends only on the
// test's own writes, not on controller timing.
const POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: NS
  labels: {app: web}
spec:
  schedulerName: lab-runner-test-hold
  containers:
  - name: web
    image: nginx:1.27
    resources:
      requests: {nvidia.com/gpu: 1}
      limits: {nvidia.com/gpu: 1}
";

const UNBOUND_POD: &str = "apiVersion: v1
kind: Pod
metadata:
  name: job-1
  namespace: NS
spec:
  schedulerName: lab-runner-test-hold
  containers:
  - name: main
    image: busybox:1.37
";

const EVENT: &str = "apiVersion: v1
kind: Event
metadata:
  name: web.1
  namespace: NS
involvedObject: {apiVersion: v1, kind: Pod, name: web, namespace: NS, uid: UID}
reason: Held
message: Held by the test
type: Normal
source: {component: lab-runner-test-hold}
firstTimestamp: \"2026-01-01T00:00:00Z\"
lastTimestamp: \"2026-01-01T00:00:00Z\"
count: 1
";

#[test]
fn writes_waits_and_watches() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&[]);
    for client in &clients {
        let ns = format!("v{}", client.version.replace('.', ""));
        let fill = |text: &str| text.replace("NS", &ns);
        let mut t = Transcript(String::new());
        assert!(sim.create(client, &mut t, "namespace.yaml", &fill(NAMESPACE)).status.success());
        assert!(sim.create(client, &mut t, "pod.yaml", &fill(POD)).status.success());
        sim.run(client, &mut t, &format!("get pods -n {ns} -o wide"));
        sim.run(client, &mut t, &format!("get pods -A -o wide --field-selector metadata.namespace={ns}"));
        sim.run(
            client,
            &mut t,
            &format!(
                "get pods -n {ns} -o custom-columns=NODE:.spec.nodeName,IMAGE:.spec.containers[0].image"
            ),
        );
        sim.run(client, &mut t, &format!("get pod web -n {ns} -o yaml"));
        let json = sim.kubectl(client, &["get", "pod", "web", "-n", &ns, "-o", "json"]);
        let pod: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"], "1");
        let uid = pod["metadata"]["uid"].as_str().unwrap().to_string();

        sim.run(client, &mut t, &format!("label pod web -n {ns} app=api"));
        sim.run(client, &mut t, &format!("label pod web -n {ns} app=api --overwrite"));
        assert!(sim.create(client, &mut t, "event.yaml", &fill(EVENT).replace("UID", &uid)).status.success());
        sim.run(client, &mut t, &format!("describe pod web -n {ns}"));

        // `wait` sees a condition set through the API (status subresource).
        let wait = std::process::Command::new(&client.path)
            .args(["--kubeconfig", sim.kubeconfig.to_str().unwrap(), "wait", "--for=condition=Ready"])
            .args(["pod/web", "-n", &ns, "--timeout=60s"])
            .env("KUBECACHEDIR", sim.scratch_dir().join(format!("home-{}/cache", client.version)))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let ready = r#"{"status":{"conditions":[{"type":"Ready","status":"True"}]}}"#;
        let patch = sim.kubectl(
            client,
            &["patch", "pod", "web", "-n", &ns, "--subresource=status", "--type=merge", "-p", ready],
        );
        assert!(patch.status.success(), "{}", stderr(&patch));
        let waited = wait.wait_with_output().unwrap();
        transcript_line(&mut t, "wait --for=condition=Ready pod/web (after the status patch)", &waited);
        assert!(waited.status.success());

        // `get -w` sees a later change.
        let mut watch = std::process::Command::new(&client.path)
            .args(["--kubeconfig", sim.kubeconfig.to_str().unwrap(), "get", "pod", "web", "-n", &ns])
            .args(["-w", "--output-watch-events"])
            .env("KUBECACHEDIR", sim.scratch_dir().join(format!("home-{}/cache", client.version)))
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let lines = lines_of(&mut watch);
        let added = expect_line(&lines, "ADDED");
        let relabel = sim.kubectl(client, &["label", "pod", "web", "-n", &ns, "stage=2"]);
        assert!(relabel.status.success());
        let modified = expect_line(&lines, "MODIFIED");
        let _ = watch.kill();
        let _ = watch.wait();
        t.0.push_str(&format!(
            "$ kubectl get pod web -w --output-watch-events (then a label change)\n{added}\n{modified}\n\n"
        ));

        assert!(sim.create(client, &mut t, "unbound.yaml", &fill(UNBOUND_POD)).status.success());
        sim.run(client, &mut t, &format!("delete pod job-1 -n {ns} --wait"));
        sim.run(client, &mut t, &format!("get pods -n {ns}"));
        sim.run(client, &mut t, &format!("get events -n {ns}"));

        let node = sim.kubectl(client, &["describe", "node", "gpu-1"]);
        let node = stdout(&node);
        for expected in
            ["Name:               gpu-1", "Kubelet Version:            v1.33.4", "Non-terminated Pods:"]
        {
            assert!(
                node.contains(expected),
                "kubectl {}: describe node lacks {expected:?}:\n{node}",
                client.version
            );
        }
        insta::assert_snapshot!(format!("writes_waits_and_watches_{}", client.version), redacted(&t.0));
    }
}

fn transcript_line(t: &mut Transcript, command: &str, output: &Output) {
    t.record(command, output);
}
