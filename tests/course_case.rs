//! The course's own case through the built binary and real kubectl 1.33: a stalled DaemonSet
//! rollout, its undo and history, a dropped toleration, an unschedulable GPU pod, a gated pod and
//! a Job, on `lab-runner sim up` at a fast speed. Literal lines are copied from
//! kubectl's and the scheduler's sources (cited beside each), with the DaemonSet named `gpu-ds`
//! as in the lab; waits poll with
//! a deadline and assert end states only.

use std::{
    process::Output,
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::support::{
    binary::{stderr, stdout},
    kubectl::{Kubectl, clients},
    sim::Sim,
};

/// Three workers; node-c carries a NoSchedule taint the DaemonSet first tolerates. No node has
/// GPUs advertised (no device plugin runs). One batch image runs 20 simulated seconds.
pub const TOPOLOGY: &str = r#"name: course-case
nodes:
  - name: node-a
    capacity: {cpu: 8, memory: 32Gi, pods: 110}
  - name: node-b
    capacity: {cpu: 8, memory: 32Gi, pods: 110}
  - name: node-c
    taints:
      - {key: dedicated, value: gpu, effect: NoSchedule}
    capacity: {cpu: 8, memory: 32Gi, pods: 110}
images:
  - {name: example.com/batch:v1, runs: 20s, exitCode: 0}
timings:
  pullSeconds: 1
"#;

pub const DAEMONSET: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: gpu-ds
  namespace: default
spec:
  selector:
    matchLabels: {app: gpu-ds}
  updateStrategy:
    type: RollingUpdate
    rollingUpdate: {maxUnavailable: 1}
  template:
    metadata:
      labels: {app: gpu-ds}
    spec:
      tolerations:
        - {key: dedicated, operator: Exists, effect: NoSchedule}
      containers:
        - name: main
          image: nginx:1.27
"#;

const GPU_POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: default
spec:
  containers:
    - name: cuda
      image: nvcr.io/nvidia/cuda:12.2.0-base-ubuntu22.04
      resources:
        limits: {nvidia.com/gpu: 2}
"#;

const GATED_POD: &str = r#"apiVersion: v1
kind: Pod
metadata:
  name: gated
  namespace: default
spec:
  schedulingGates:
    - name: example.com/review
  containers:
    - name: main
      image: nginx:1.27
"#;

/// Wall-clock bound of every wait (the simulator runs 20× faster than real time).
const DEADLINE: Duration = Duration::from_secs(90);

struct Case {
    sim: Sim,
    client: Kubectl,
    dir: tempfile::TempDir,
}

impl Case {
    fn run(&self, args: &[&str]) -> Output {
        self.sim.kubectl(&self.client, args)
    }

    fn ok(&self, args: &[&str]) -> String {
        let output = self.run(args);
        assert!(output.status.success(), "kubectl {args:?}: {}{}", stdout(&output), stderr(&output));
        stdout(&output)
    }

    fn apply(&self, name: &str, manifest: &str) {
        let path = self.dir.path().join(name);
        std::fs::write(&path, manifest).unwrap();
        self.ok(&["apply", "-f", path.to_str().unwrap()]);
    }

    /// Polls `probe` until it returns `Some`, failing with `what` and the last observation after
    /// [`DEADLINE`].
    fn wait<T>(&self, what: &str, mut probe: impl FnMut(&Case) -> Result<T, String>) -> T {
        let start = Instant::now();
        loop {
            match probe(self) {
                Ok(value) => return value,
                Err(last) if start.elapsed() > DEADLINE => {
                    panic!("timed out waiting for {what}; last: {last}")
                }
                Err(_) => std::thread::sleep(Duration::from_millis(250)),
            }
        }
    }

    /// `kubectl get ds gpu-ds` as its printed row.
    fn ds_row(&self) -> String {
        let table = self.ok(&["get", "ds", "gpu-ds"]);
        table.lines().nth(1).unwrap_or_default().to_string()
    }

    fn pods(&self) -> Vec<Value> {
        let json: Value =
            serde_json::from_str(&self.ok(&["get", "pods", "-l", "app=gpu-ds", "-o", "json"])).unwrap();
        json["items"].as_array().unwrap().clone()
    }
}

/// DESIRED CURRENT READY UP-TO-DATE AVAILABLE of a `kubectl get ds` row.
fn counters(row: &str) -> Vec<String> {
    row.split_whitespace().skip(1).take(5).map(str::to_string).collect()
}

fn expect_counters(row: &str, wanted: [&str; 5]) -> Result<(), String> {
    if counters(row) == wanted { Ok(()) } else { Err(row.to_string()) }
}

fn node_of(pod: &Value) -> String {
    pod["spec"]["nodeName"].as_str().unwrap_or("<unscheduled>").to_string()
}

fn label<'a>(pod: &'a Value, key: &str) -> &'a str {
    pod["metadata"]["labels"][key].as_str().unwrap_or_default()
}

#[test]
fn the_course_case_through_real_kubectl() {
    let Some(client) = clients().into_iter().find(|c| c.version == "1.33") else { return };
    let dir = tempfile::tempdir().unwrap();
    let topology = dir.path().join("topology.yaml");
    std::fs::write(&topology, TOPOLOGY).unwrap();
    let sim = Sim::up(&["--topology", topology.to_str().unwrap(), "--speed", "20"]);
    let case = Case { sim, client, dir };

    // A healthy DaemonSet on all three nodes, template generation 1.
    case.apply("ds.yaml", DAEMONSET);
    case.wait("the DaemonSet to be available everywhere", |c| expect_counters(&c.ds_row(), ["3"; 5]));
    let annotation = case.ok(&[
        "get",
        "ds",
        "gpu-ds",
        "-o",
        "jsonpath={.metadata.annotations.deprecated\\.daemonset\\.template\\.generation}",
    ]);
    assert_eq!(annotation, "1");
    let labelled = case.ok(&[
        "get",
        "pods",
        "-l",
        "app=gpu-ds",
        "-L",
        "pod-template-generation,controller-revision-hash",
    ]);
    let header: Vec<&str> = labelled.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "POD-TEMPLATE-GENERATION", "CONTROLLER-REVISION-HASH"]
    );
    let first_hash = label(&case.pods()[0], "controller-revision-hash").to_string();
    for row in labelled.lines().skip(1) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[5..], ["1", first_hash.as_str()], "{row}");
    }

    // An image that does not exist: one node replaced, stalled there for good.
    case.ok(&["set", "image", "ds/gpu-ds", "main=nginx:1.27-does-not-exist"]);
    case.wait("the stalled rollout", |c| expect_counters(&c.ds_row(), ["3", "3", "2", "1", "2"]));
    let pods = case.wait("the new pod to fail its pull", |c| {
        let pods = c.pods();
        let new: Vec<&Value> = pods.iter().filter(|p| label(p, "pod-template-generation") == "2").collect();
        let waiting = new
            .first()
            .and_then(|p| p["status"]["containerStatuses"][0]["state"]["waiting"]["reason"].as_str())
            .unwrap_or_default();
        let pulled_and_failed = matches!(waiting, "ErrImagePull" | "ImagePullBackOff");
        if pods.len() == 3 && new.len() == 1 && pulled_and_failed {
            Ok(pods.clone())
        } else {
            Err(format!("{pods:?}"))
        }
    });
    let replaced = pods.iter().find(|p| label(p, "pod-template-generation") == "2").unwrap();
    let on_replaced: Vec<&Value> = pods.iter().filter(|p| node_of(p) == node_of(replaced)).collect();
    assert_eq!(on_replaced.len(), 1, "the node being replaced has no old pod, only the new one");
    let table = case.ok(&["get", "pod", replaced["metadata"]["name"].as_str().unwrap(), "--no-headers"]);
    let status = table.split_whitespace().nth(2).unwrap();
    assert!(matches!(status, "ErrImagePull" | "ImagePullBackOff"), "{table}");

    // `rollout status` waits, then gives up (kubectl rollout_status.go: literal lines).
    let waited = case.run(&["rollout", "status", "ds/gpu-ds", "--timeout=10s"]);
    assert_eq!(waited.status.code(), Some(1));
    assert_eq!(stderr(&waited), "error: timed out waiting for the condition\n");
    let lines: Vec<String> = stdout(&waited).lines().map(str::to_string).collect();
    assert!(!lines.is_empty());
    for line in &lines {
        assert_eq!(
            line,
            "Waiting for daemon set \"gpu-ds\" rollout to finish: 1 out of 3 new pods have been updated..."
        );
    }
    // …and it stays so (200 simulated seconds later, several back-offs on).
    assert_eq!(counters(&case.ds_row()), ["3", "3", "2", "1", "2"]);

    // Undo: one generation everywhere again; history renumbered (§3.3: 1 becomes 3).
    assert_eq!(case.ok(&["rollout", "undo", "ds/gpu-ds"]), "daemonset.apps/gpu-ds rolled back\n");
    case.wait("the restored rollout", |c| expect_counters(&c.ds_row(), ["3"; 5]));
    let restored = case.wait("one generation on every node", |c| {
        let pods = c.pods();
        let one = pods.len() == 3
            && pods.iter().all(|p| {
                label(p, "controller-revision-hash") == first_hash
                    && p["metadata"]["deletionTimestamp"].is_null()
            });
        if one { Ok(pods) } else { Err(format!("{pods:?}")) }
    });
    let generations: std::collections::BTreeSet<&str> =
        restored.iter().map(|p| label(p, "pod-template-generation")).collect();
    // The untouched old pods keep label 1 (updated by hash, not restarted); the replaced one is 3.
    assert_eq!(generations, ["1", "3"].into());
    assert_eq!(
        case.ok(&["rollout", "history", "ds/gpu-ds"]),
        "daemonset.apps/gpu-ds \nREVISION  CHANGE-CAUSE\n2         <none>\n3         <none>\n\n"
    );
    let done = case.run(&["rollout", "status", "ds/gpu-ds", "--timeout=60s"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(stdout(&done).lines().last(), Some("daemon set \"gpu-ds\" successfully rolled out"));

    // Dropping the toleration for node-c's NoSchedule taint: DESIRED 2, node-c's pod deleted as an
    // update candidate and not recreated, and the rollout "succeeds".
    case.ok(&[
        "patch",
        "ds",
        "gpu-ds",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/template/spec/tolerations"}]"#,
    ]);
    case.wait("DESIRED to drop to 2", |c| expect_counters(&c.ds_row(), ["2"; 5]));
    let done = case.run(&["rollout", "status", "ds/gpu-ds", "--timeout=60s"]);
    assert_eq!(done.status.code(), Some(0), "{}", stderr(&done));
    assert_eq!(stdout(&done).lines().last(), Some("daemon set \"gpu-ds\" successfully rolled out"));
    let pods = case.wait("node-c's pod to be gone", |c| {
        let pods = c.pods();
        if pods.len() == 2 { Ok(pods) } else { Err(format!("{pods:?}")) }
    });
    assert!(pods.iter().all(|p| node_of(p) != "node-c"), "{pods:?}");

    // A pod asking for more GPUs than any node has: Pending with v1.33's FailedScheduling text.
    // One final period: v1.33 `FitError.Error` (pkg/scheduler/framework/types.go) appends the
    // PostFilter message with `" %v"`; older releases' `..` came from `SeparatorFormat = " %v."`.
    case.apply("gpu-pod.yaml", GPU_POD);
    let expected = "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 2 Insufficient nvidia.com/gpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.";
    let described = case.wait("the FailedScheduling event", |c| {
        let described = c.ok(&["describe", "pod", "trainer"]);
        if described.contains("FailedScheduling") { Ok(described) } else { Err(described) }
    });
    let event = described.lines().find(|l| l.contains("FailedScheduling")).unwrap();
    let cells: Vec<&str> = event.split_whitespace().collect();
    assert_eq!(
        (cells[0], cells[1], cells[3]),
        ("Warning", "FailedScheduling", "default-scheduler"),
        "{event}"
    );
    assert!(event.ends_with(expected), "{event}");
    let row = case.ok(&["get", "pod", "trainer", "--no-headers"]);
    assert_eq!(row.split_whitespace().take(3).collect::<Vec<_>>(), ["trainer", "0/1", "Pending"]);

    // A gated pod: STATUS SchedulingGated until its gate is removed.
    case.apply("gated.yaml", GATED_POD);
    let row = case.ok(&["get", "pod", "gated", "--no-headers"]);
    assert_eq!(row.split_whitespace().nth(2), Some("SchedulingGated"));
    let added = case.run(&[
        "patch",
        "pod",
        "gated",
        "--type=json",
        "-p",
        r#"[{"op":"add","path":"/spec/schedulingGates/-","value":{"name":"example.com/another"}}]"#,
    ]);
    assert_eq!(added.status.code(), Some(1));
    assert_eq!(
        stderr(&added),
        "The Pod \"gated\" is invalid: spec.schedulingGates[1].name: Forbidden: only deletion is allowed, but found new scheduling gate 'example.com/another'\n"
    );
    case.ok(&[
        "patch",
        "pod",
        "gated",
        "--type=json",
        "-p",
        r#"[{"op":"remove","path":"/spec/schedulingGates"}]"#,
    ]);
    case.wait("the ungated pod to run", |c| {
        let row = c.ok(&["get", "pod", "gated", "--no-headers"]);
        if row.split_whitespace().nth(2) == Some("Running") { Ok(()) } else { Err(row) }
    });

    // A Job of the topology's batch image completes; `kubectl get jobs` as 1.33 prints it.
    case.ok(&["create", "job", "once", "--image=example.com/batch:v1"]);
    let jobs = case.wait("the Job to complete", |c| {
        let table = c.ok(&["get", "jobs"]);
        let done = table.lines().nth(1).is_some_and(|row| row.split_whitespace().nth(1) == Some("Complete"));
        if done { Ok(table) } else { Err(table) }
    });
    let header: Vec<&str> = jobs.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header, ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]);
    let row: Vec<&str> = jobs.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(&row[..3], ["once", "Complete", "1/1"]);
    let job: Value = serde_json::from_str(&case.ok(&["get", "job", "once", "-o", "json"])).unwrap();
    assert_eq!(job["status"]["succeeded"], 1);
    assert_eq!(job["status"]["uncountedTerminatedPods"], serde_json::json!({}));
    let pod_row = case.ok(&["get", "pods", "-l", "job-name=once", "--no-headers"]);
    assert_eq!(pod_row.split_whitespace().nth(2), Some("Completed"), "{pod_row}");
}
