//! The kubectl walk: the subcommands a course on workloads and GPU scheduling uses, run in one sequence with real kubectl 1.33 against the simulator, each answer as a 1.33 cluster without metrics-server or container runtime gives it (docs/simulator.md, "The kubectl walk").

use std::process::Output;

use crate::support::{
    binary::{stderr, stdout},
    kubectl::{Kubectl, clients},
    sim::Sim,
};

/// What one step must print.
enum Expect {
    /// Exit 0 and exactly this on stdout.
    Prints(&'static str),
    /// Exit 0 and this as the last line of stdout (waits print progress before it).
    Ends(&'static str),
    /// This exit code and stderr containing this.
    Fails(i32, &'static str),
}

const DAEMON_SET: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: nginx}]
";

const STATEFUL_SET: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: nginx}]
";

const BUDGET: &str = "apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec:
  maxUnavailable: 1
  selector: {matchLabels: {app: web}}
";

/// The walk, in order: (arguments split on spaces, expectation).
const WALK: &[(&str, Expect)] = &[
    ("create deployment web --image=nginx --replicas=2", Expect::Prints("deployment.apps/web created\n")),
    (
        "rollout status deployment/web --timeout=60s",
        Expect::Ends("deployment \"web\" successfully rolled out"),
    ),
    ("set image deployment/web nginx=nginx:1.27", Expect::Prints("deployment.apps/web image updated\n")),
    (
        "rollout status deployment/web --timeout=60s",
        Expect::Ends("deployment \"web\" successfully rolled out"),
    ),
    (
        "rollout history deployment/web",
        Expect::Prints(
            "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n",
        ),
    ),
    (
        "rollout undo deployment/web --to-revision=2",
        Expect::Prints(
            "deployment.apps/web skipped rollback (current template already matches revision 2)\n",
        ),
    ),
    ("rollout undo deployment/web", Expect::Prints("deployment.apps/web rolled back\n")),
    ("rollout pause deployment/web", Expect::Prints("deployment.apps/web paused\n")),
    ("rollout pause deployment/web", Expect::Fails(1, "error: deployments.apps \"web\" is already paused")),
    ("set env deployment/web MODE=fast", Expect::Prints("deployment.apps/web env updated\n")),
    (
        "set resources deployment/web -c=nginx --limits=cpu=200m,memory=256Mi",
        Expect::Prints("deployment.apps/web resource requirements updated\n"),
    ),
    ("rollout resume deployment/web", Expect::Prints("deployment.apps/web resumed\n")),
    ("rollout restart deployment/web", Expect::Prints("deployment.apps/web restarted\n")),
    ("scale deployment/web --replicas=3", Expect::Prints("deployment.apps/web scaled\n")),
    (
        "rollout status deployment/web --timeout=60s",
        Expect::Ends("deployment \"web\" successfully rolled out"),
    ),
    (
        "wait --for=jsonpath={.status.readyReplicas}=3 deployment/web --timeout=60s",
        Expect::Prints("deployment.apps/web condition met\n"),
    ),
    (
        "wait --for=condition=Available deployment/web --timeout=60s",
        Expect::Prints("deployment.apps/web condition met\n"),
    ),
    (
        "autoscale deployment/web --min=3 --max=5",
        Expect::Prints("horizontalpodautoscaler.autoscaling/web autoscaled\n"),
    ),
    ("apply -f DIR/agent.yaml", Expect::Prints("daemonset.apps/agent created\n")),
    ("rollout status ds/agent --timeout=60s", Expect::Ends("daemon set \"agent\" successfully rolled out")),
    ("rollout restart ds/agent", Expect::Prints("daemonset.apps/agent restarted\n")),
    ("rollout status ds/agent --timeout=60s", Expect::Ends("daemon set \"agent\" successfully rolled out")),
    (
        "rollout undo ds/agent --to-revision=2",
        Expect::Prints(
            "daemonset.apps/agent skipped rollback (current template already matches revision 2)\n",
        ),
    ),
    ("rollout pause ds/agent", Expect::Fails(1, "error: daemonsets.apps \"agent\" pausing is not supported")),
    ("apply -f DIR/db.yaml", Expect::Prints("statefulset.apps/db created\n")),
    (
        "rollout status sts/db --timeout=60s",
        Expect::Ends("partitioned roll out complete: 1 new pods have been updated..."),
    ),
    ("rollout restart sts/db", Expect::Prints("statefulset.apps/db restarted\n")),
    (
        "rollout status sts/db --timeout=60s",
        Expect::Ends("partitioned roll out complete: 1 new pods have been updated..."),
    ),
    (
        "rollout undo sts/db --to-revision=2",
        Expect::Prints(
            "statefulset.apps/db skipped rollback (current template already matches revision 2)\n",
        ),
    ),
    ("rollout resume sts/db", Expect::Fails(1, "error: statefulsets.apps \"db\" resuming is not supported")),
    ("scale sts/db --replicas=2", Expect::Prints("statefulset.apps/db scaled\n")),
    (
        "create cronjob nightly --image=nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0 --schedule=0_0_*_*_*",
        Expect::Prints("cronjob.batch/nightly created\n"),
    ),
    ("create job manual --from=cronjob/nightly", Expect::Prints("job.batch/manual created\n")),
    (
        "wait --for=condition=Complete job/manual --timeout=60s",
        Expect::Prints("job.batch/manual condition met\n"),
    ),
    ("apply -f DIR/budget.yaml", Expect::Prints("poddisruptionbudget.policy/web created\n")),
    ("cordon worker-1", Expect::Prints("node/worker-1 cordoned\n")),
    ("cordon worker-1", Expect::Prints("node/worker-1 already cordoned\n")),
    ("uncordon worker-1", Expect::Prints("node/worker-1 uncordoned\n")),
    (
        "drain worker-1 --timeout=60s",
        Expect::Fails(
            1,
            "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): default/agent-",
        ),
    ),
    ("drain worker-1 --ignore-daemonsets --timeout=60s", Expect::Ends("node/worker-1 drained")),
    ("uncordon worker-1", Expect::Prints("node/worker-1 uncordoned\n")),
    ("top nodes", Expect::Fails(1, "error: Metrics API not available")),
    ("top pods", Expect::Fails(1, "error: Metrics API not available")),
    (
        "exec sts/db -- ls",
        Expect::Fails(
            1,
            "cannot exec into container \"db\" in pod \"db-0\": the lab-runner simulator runs no processes",
        ),
    ),
    (
        "attach db-0",
        Expect::Fails(
            1,
            "cannot attach to container \"db\" in pod \"db-0\": the lab-runner simulator runs no processes",
        ),
    ),
    ("port-forward db-0 8080:80", Expect::Fails(1, "cannot forward ports of pod \"db-0\"")),
    (
        "debug db-0 --image=busybox",
        Expect::Fails(
            1,
            "pods \"db-0\" is forbidden: the simulator runs no containers, so no ephemeral container can run in pod \"db-0\"",
        ),
    ),
    (
        "debug node/worker-1 --image=busybox",
        Expect::Fails(
            1,
            "the simulator runs no containers, so node \"worker-1\" has no host namespaces or filesystem to debug",
        ),
    ),
];

fn check(step: &str, expect: &Expect, output: &Output) -> Option<String> {
    let (out, err) = (stdout(output), stderr(output));
    let code = output.status.code().unwrap_or(-1);
    let ok = match expect {
        Expect::Prints(text) => code == 0 && out == *text,
        Expect::Ends(line) => code == 0 && out.trim_end().lines().last() == Some(*line),
        Expect::Fails(want, text) => code == *want && err.contains(text),
    };
    (!ok).then(|| format!("kubectl {step}\n  exit {code}\n  stdout: {out:?}\n  stderr: {err:?}"))
}

#[test]
fn the_course_kubectl_walk_answers_as_a_1_33_cluster() {
    let Some(client) = clients().into_iter().find(|c| c.version == "1.33") else { return };
    let sim = Sim::up(&["--nodes", "2", "--speed", "10"]);
    let dir = sim.scratch_dir().to_path_buf();
    for (file, text) in [("agent.yaml", DAEMON_SET), ("db.yaml", STATEFUL_SET), ("budget.yaml", BUDGET)] {
        std::fs::write(dir.join(file), text).unwrap();
    }
    let mut failures = Vec::new();
    for (step, expect) in WALK {
        let args: Vec<String> =
            step.split(' ').map(|arg| arg.replace("DIR", dir.to_str().unwrap()).replace('_', " ")).collect();
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = run(&sim, &client, &args);
        failures.extend(check(step, expect, &output));
    }
    assert!(failures.is_empty(), "{} steps answered otherwise:\n{}", failures.len(), failures.join("\n"));
}

fn run(sim: &Sim, client: &Kubectl, args: &[&str]) -> Output {
    sim.kubectl(client, args)
}
