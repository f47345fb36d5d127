//! What a learner types works: real kubectl (1.32, 1.33, 1.37) on `sim up` scales Deployments,
//! ReplicaSets and StatefulSets through the `scale` subresource, and reads `/version/`.
//! Each client's transcript must be the same; the first is snapshotted.

use std::process::Output;

use crate::{
    support::binary::{stderr, stdout},
    support::{
        kubectl::{Kubectl, clients, expect_line, lines_of},
        sim::Sim,
        transcript::redacted,
    },
};

/// Runs kubectl commands against one simulator and records what they print.
/// Each client works in its own namespace (named after its version), so one client's deletions
/// never race the next one's creations; the transcript calls it `learner`.
struct Session<'a> {
    sim: &'a Sim,
    client: &'a Kubectl,
    namespace: String,
    transcript: String,
}

impl<'a> Session<'a> {
    fn new(sim: &'a Sim, client: &'a Kubectl) -> Session<'a> {
        let namespace = format!("learner-{}", client.version.replace('.', "-"));
        let created = sim.kubectl(client, &["create", "namespace", &namespace]);
        assert!(created.status.success(), "create namespace: {}", stderr(&created));
        Session { sim, client, namespace, transcript: String::new() }
    }

    /// The transcript with the namespace and manifest paths made client-independent.
    fn finish(self) -> String {
        let dir = self.sim.state_dir().to_str().unwrap().to_string() + "/";
        redacted(&self.transcript.replace(&dir, "").replace(&self.namespace, "learner"))
    }

    /// Runs `command` (split on spaces) and records it with its output and exit code.
    fn run(&mut self, command: &str) -> Output {
        let output = self.quiet(command);
        self.transcript.push_str(&format!("$ kubectl {command}\n{}{}", stdout(&output), stderr(&output)));
        if !output.status.success() {
            self.transcript.push_str(&format!("[exit {}]\n", output.status.code().unwrap_or(-1)));
        }
        self.transcript.push('\n');
        output
    }

    /// Runs `command` that must succeed, recording it.
    fn ok(&mut self, command: &str) {
        let output = self.run(command);
        assert!(output.status.success(), "kubectl {} {command}: {}", self.client.version, stderr(&output));
    }

    /// Runs `command` that must succeed without recording its output (a wait whose progress
    /// lines depend on timing).
    fn wait(&mut self, command: &str) {
        let output = self.quiet(command);
        assert!(
            output.status.success(),
            "kubectl {} {command}: {}{}",
            self.client.version,
            stdout(&output),
            stderr(&output)
        );
        self.transcript.push_str(&format!("$ kubectl {command}\n[succeeded]\n\n"));
    }

    fn quiet(&self, command: &str) -> Output {
        let mut args: Vec<&str> = vec!["--namespace", &self.namespace];
        args.extend(command.split(' '));
        self.sim.kubectl(self.client, &args)
    }

    /// Writes `yaml` into the simulator's state dir as `file`; returns its path.
    fn manifest(&self, file: &str, yaml: &str) -> String {
        let path = self.sim.state_dir().join(file);
        std::fs::write(&path, yaml).unwrap();
        path.to_str().unwrap().to_string()
    }
}

/// Asserts every client printed the same transcript and snapshots it.
fn same_for_every_client(transcripts: Vec<(&'static str, String)>, snapshot: &str) {
    let Some((first_version, first)) = transcripts.first().cloned() else { return };
    for (version, transcript) in &transcripts {
        assert_eq!(transcript, &first, "kubectl {version} printed otherwise than kubectl {first_version}");
    }
    insta::assert_snapshot!(snapshot, first);
}

const REPLICA_SET: &str = "apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: rs1
spec:
  replicas: 1
  selector:
    matchLabels: {app: rs1}
  template:
    metadata:
      labels: {app: rs1}
    spec:
      containers:
      - {name: web, image: nginx}
";

#[test]
fn scale_deployments_and_replicasets_and_read_version_with_a_slash() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "2"]);
    let uid = regex::Regex::new(r#""uid":"[^"]*""#).unwrap();
    let rv = regex::Regex::new(r#""(resourceVersion|creationTimestamp)":"[^"]*""#).unwrap();
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        session.ok("create deployment d1 --image=nginx");
        session.ok("scale deployment d1 --replicas=3");
        session.wait("rollout status deployment/d1 --timeout=60s");
        session.ok("get deployment d1 -o jsonpath={.spec.replicas}/{.status.readyReplicas}");
        session.ok(&format!("get --raw /apis/apps/v1/namespaces/{}/deployments/d1/scale", session.namespace));
        // kubectl checks --current-replicas against the Scale it GETs first.
        session.run("scale deployment d1 --replicas=1 --current-replicas=2");
        session.ok("scale deployment/d1 --replicas=0 --current-replicas=3");
        session.ok(&format!("create -f {}", session.manifest("rs1.yaml", REPLICA_SET)));
        session.ok("scale rs rs1 --replicas=2 --dry-run=server");
        session.ok("scale rs rs1 --replicas=2");
        session.ok("get rs rs1 -o jsonpath={.spec.replicas}");
        session.ok("get --raw /version/");
        let transcript = session.finish();
        let transcript = uid.replace_all(&transcript, r#""uid":"[UID]""#).into_owned();
        let transcript = rv.replace_all(&transcript, r#""$1":"[REDACTED]""#).into_owned();
        transcripts.push((client.version, transcript));
    }
    same_for_every_client(transcripts, "scale_and_version");
}

const INDEXED_JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: shard
spec:
  completionMode: Indexed
  completions: 3
  parallelism: 3
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
";

const INDEXED_JOB_WITHOUT_COMPLETIONS: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: unbounded
spec:
  completionMode: Indexed
  parallelism: 2
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0
";

/// Two workers and a batch image that fails (exit 3 after 2 s).
const FLAKY_TOPOLOGY: &str = "name: flaky
nodes:
  - {name: node-a, capacity: {cpu: 8, memory: 32Gi, pods: 110}}
  - {name: node-b, capacity: {cpu: 8, memory: 32Gi, pods: 110}}
images:
  - {name: example.com/flaky:v1, runs: 2s, exitCode: 3}
timings: {pullSeconds: 1}
";

/// An Indexed Job whose every pod fails, one retry per index (`backoffLimitPerIndex: 1`).
const PER_INDEX_JOB: &str = "apiVersion: batch/v1
kind: Job
metadata:
  name: flaky
spec:
  completionMode: Indexed
  completions: 2
  parallelism: 2
  backoffLimitPerIndex: 1
  template:
    spec:
      restartPolicy: Never
      containers:
      - name: work
        image: example.com/flaky:v1
";

#[test]
fn an_indexed_job_completes_per_index_and_one_fails_past_its_backoff_limit_per_index() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let topology = dir.path().join("topology.yaml");
    std::fs::write(&topology, FLAKY_TOPOLOGY).unwrap();
    let sim = Sim::up(&["--topology", topology.to_str().unwrap(), "--speed", "5"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let job = session.manifest("shard.yaml", INDEXED_JOB);
        let unbounded = session.manifest("unbounded.yaml", INDEXED_JOB_WITHOUT_COMPLETIONS);
        session.run(&format!("create -f {unbounded}"));
        session.ok(&format!("create -f {job}"));
        session.wait("wait --for=condition=complete job/shard --timeout=120s");
        session.ok("get job shard -o jsonpath={.status.completedIndexes}/{.status.succeeded}");
        session.ok(
            "get pods -l batch.kubernetes.io/job-name=shard --sort-by=.spec.hostname -o custom-columns=HOST:.spec.hostname,INDEX:.metadata.annotations.batch\\.kubernetes\\.io/job-completion-index,ENV:.spec.containers[0].env[0].valueFrom.fieldRef.fieldPath,PHASE:.status.phase",
        );
        // backoffLimitPerIndex: each index runs twice, then fails for good, and so does the Job.
        session.ok(&format!("create -f {}", session.manifest("flaky.yaml", PER_INDEX_JOB)));
        session.wait("wait --for=condition=failed job/flaky --timeout=120s");
        session.ok(
            "get job flaky -o jsonpath={.status.failedIndexes}/{.status.failed}/{.status.conditions[?(@.type==\"Failed\")].reason}",
        );
        let jsonpath = "-o=jsonpath={range .items[*]}{.metadata.annotations.batch\\.kubernetes\\.io/job-index-failure-count}{\",\"}{end}";
        let selector = "batch.kubernetes.io/job-name=flaky";
        let counts =
            sim.kubectl(client, &["-n", &session.namespace, "get", "pods", "-l", selector, jsonpath]);
        let mut counts: Vec<String> =
            stdout(&counts).split(',').filter(|c| !c.is_empty()).map(str::to_string).collect();
        counts.sort();
        assert_eq!(
            counts,
            ["0", "0", "1", "1"],
            "kubectl {}: each index's pods count its failures",
            client.version
        );
        transcripts.push((client.version, session.finish()));
    }
    same_for_every_client(transcripts, "indexed_job");
}

const STATEFUL_SET: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: web
spec:
  serviceName: web
  replicas: 3
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - {name: nginx, image: nginx}
";

#[test]
fn a_stateful_set_rolls_out_in_order_lists_and_scales() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "2"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let manifest = session.manifest("web.yaml", STATEFUL_SET);
        session.ok(&format!("apply -f {manifest}"));
        session.wait("rollout status sts/web --timeout=120s");
        // Once rolled out, the final line (statefulset `StatusViewer`, default partition 0).
        session.ok("rollout status sts/web --watch=false");
        session.ok("get statefulsets");
        session.ok("get sts web -o wide");
        session.ok(
            "get pods -l app=web -o custom-columns=NAME:.metadata.name,INDEX:.metadata.labels.apps\\.kubernetes\\.io/pod-index,HOST:.spec.hostname,SUBDOMAIN:.spec.subdomain,OWNER:.metadata.ownerReferences[0].kind",
        );
        session.ok("get events --field-selector involvedObject.kind=StatefulSet -o custom-columns=REASON:.reason,MESSAGE:.message --sort-by=.message");
        session.ok("scale sts web --replicas=1");
        session.wait("wait --for=delete pod/web-2 pod/web-1 --timeout=60s");
        session.ok("get pods -l app=web -o name");
        transcripts.push((client.version, session.finish()));
    }
    same_for_every_client(transcripts, "stateful_set");
}

/// `kubectl rollout undo sts/x --to-revision=<current>` is skipped as on a 1.33 cluster: the
/// revision's data holds the bytes kubectl's `statefulsetMatch` builds from the StatefulSet (the
/// controller's `getPatch`), and an undo to revision 1 takes that revision back as number 3
/// (`getStatefulSetRevisions`).
#[test]
fn rollout_undo_of_a_stateful_set_skips_the_current_revision_and_renumbers() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "2"]);
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let manifest = session.manifest("web.yaml", &STATEFUL_SET.replace("replicas: 3", "replicas: 1"));
        session.ok(&format!("apply -f {manifest}"));
        session.wait("rollout status sts/web --timeout=120s");
        session.ok("set image sts/web nginx=nginx:1.27");
        session.wait("rollout status sts/web --timeout=120s");
        let current = session.run("rollout undo sts/web --to-revision=2");
        assert!(current.status.success(), "{}", stderr(&current));
        let said = String::from_utf8_lossy(&current.stdout).to_string();
        if client.version != "1.37" {
            // kubectl 1.37 omits the zero typed fields a 1.33 controller writes: it says
            // "rolled back" against a real 1.33 cluster too.
            assert_eq!(
                said,
                "statefulset.apps/web skipped rollback (current template already matches revision 2)\n"
            );
        }
        let undo = session.run("rollout undo sts/web --to-revision=1");
        assert_eq!(String::from_utf8_lossy(&undo.stdout), "statefulset.apps/web rolled back\n");
        session.wait("rollout status sts/web --timeout=120s");
        let history = session.run("get controllerrevisions -l app=web -o custom-columns=IMAGE:.data.spec.template.spec.containers[0].image,REVISION:.revision --sort-by=.revision");
        assert_eq!(
            String::from_utf8_lossy(&history.stdout),
            "IMAGE        REVISION\nnginx:1.27   2\nnginx        3\n",
            "revision 1 was taken back as 3"
        );
    }
}

const RUNTIME_CLASS: &str = "apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata:
  name: nvidia
handler: nvidia
";

#[test]
fn priority_and_runtime_classes_are_resolved_at_pod_admission() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "1", "--api-only"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let class = format!("high-{}", client.version.replace('.', "-"));
        session.ok("get priorityclasses");
        // kubectl's generator sends a protobuf body.
        session.ok(&format!("create priorityclass {class} --value=1000 --description=training"));
        session.run("create priorityclass system-mine --value=10");
        session.run("create priorityclass huge --value=2000000000");
        session.ok(&format!(
            "run p1 --image=nginx --overrides={{\"spec\":{{\"priorityClassName\":\"{class}\"}}}}"
        ));
        session.ok("get pod p1 -o jsonpath={.spec.priority}/{.spec.preemptionPolicy}");
        session.ok(
            "run p2 --image=nginx --overrides={\"spec\":{\"priorityClassName\":\"system-node-critical\"}}",
        );
        session.ok("get pod p2 -o jsonpath={.spec.priority}");
        session.run("run p3 --image=nginx --overrides={\"spec\":{\"priorityClassName\":\"missing\"}}");
        // GPU Operator clusters run pods with runtimeClassName: nvidia; without the class the
        // apiserver's RuntimeClass admission refuses them.
        session.run("run p4 --image=nginx --overrides={\"spec\":{\"runtimeClassName\":\"nvidia\"}}");
        let manifest = session.manifest("nvidia.yaml", RUNTIME_CLASS);
        session.ok(&format!("apply -f {manifest}"));
        session.ok("run p4 --image=nginx --overrides={\"spec\":{\"runtimeClassName\":\"nvidia\"}}");
        session.ok("get runtimeclass nvidia");
        session.ok(&format!("delete priorityclass {class}"));
        session.ok("delete runtimeclass nvidia");
        let transcript = session.finish().replace(&class, "high");
        transcripts.push((client.version, transcript));
    }
    same_for_every_client(transcripts, "priority_and_runtime_classes");
}

const CLAIM: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: scratch
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 10Gi
";

const CLAIM_WITHOUT_SIZE: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: sizeless
spec:
  accessModes: [ReadWriteOnce]
";

#[test]
fn a_persistent_volume_claim_is_stored_and_listed_as_kubectl_shows_it() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "1", "--api-only"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let claim = session.manifest("scratch.yaml", CLAIM);
        let sizeless = session.manifest("sizeless.yaml", CLAIM_WITHOUT_SIZE);
        session.ok(&format!("apply -f {claim}"));
        session.ok(&format!("apply -f {claim}"));
        session.run(&format!("apply -f {sizeless}"));
        session.ok("get pvc");
        session.ok("get persistentvolumeclaims scratch -o wide");
        session.ok("get pvc scratch -o jsonpath={.status.phase}/{.spec.volumeMode}");
        transcripts.push((client.version, session.finish()));
    }
    same_for_every_client(transcripts, "persistent_volume_claim");
}

const DAEMON_SET: &str = "apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: agent
spec:
  selector:
    matchLabels: {app: agent}
  template:
    metadata:
      labels: {app: agent}
    spec:
      containers:
      - name: main
        image: nginx:1.26
        command: [sh, -c, 'sleep 1 && exec nginx -g \"daemon off;\"']
";

#[test]
fn rollout_undo_of_a_daemon_set_compares_revisions_as_kubectl_does() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "2"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let manifest = session.manifest("agent.yaml", DAEMON_SET);
        session.ok(&format!("apply -f {manifest}"));
        session.wait("rollout status ds/agent --timeout=120s");
        session.ok("set image ds/agent main=nginx:1.27");
        session.wait("rollout status ds/agent --timeout=120s");
        session.ok("rollout history ds/agent");
        session.ok("rollout history ds/agent --revision=1");
        // kubectl compares the revision's data bytes with its own json.Marshal of the
        // DaemonSet's template (`daemonSetMatch`): the revision must hold Go's bytes (sorted
        // keys, `$patch` first, `&` as \u0026, the typed zero fields).
        let undo_current = session.run("rollout undo ds/agent --to-revision=2");
        assert!(undo_current.status.success(), "{}", stderr(&undo_current));
        session.ok("rollout undo ds/agent --to-revision=1");
        session.wait("rollout status ds/agent --timeout=120s");
        session.ok("get ds agent -o jsonpath={.spec.template.spec.containers[0].image}");
        session.ok("rollout history ds/agent");
        let mut transcript = session.finish();
        if client.version == "1.37" {
            // kubectl 1.37's apimachinery omits the zero creationTimestamp and resources
            // (`omitzero`), so its bytes differ from a 1.33 controller's: against a real 1.33
            // cluster it too says "rolled back" (and the patch changes nothing).
            let rolled =
                "$ kubectl rollout undo ds/agent --to-revision=2\ndaemonset.apps/agent rolled back\n";
            assert!(transcript.contains(rolled), "{transcript}");
            transcript = transcript.replace(
                rolled,
                "$ kubectl rollout undo ds/agent --to-revision=2\ndaemonset.apps/agent skipped rollback (current template already matches revision 2)\n",
            );
            // kubectl 1.37 also warns, client-side, that an undo leaves the last-applied
            // annotation as it is.
            let warning = "Warning: resource daemonsets/agent was previously managed with 'kubectl apply'. Rolling back will not update the kubectl.kubernetes.io/last-applied-configuration annotation, which may cause unexpected behavior on future 'kubectl apply' operations. Consider using 'kubectl apply' with your previous configuration file instead.\n";
            assert!(transcript.contains(warning), "{transcript}");
            transcript = transcript.replace(warning, "");
        }
        transcripts.push((client.version, transcript));
    }
    same_for_every_client(transcripts, "daemon_set_rollout_undo");
}

const EVICTION: &str =
    r#"{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"POD","namespace":"NAMESPACE"}}"#;

/// Two replicas labelled per client (`run: VERSION`), so one client's drain never selects
/// another's pods.
const WEB: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 2
  selector:
    matchLabels: {run: VERSION}
  template:
    metadata:
      labels: {run: VERSION}
    spec:
      containers:
      - {name: nginx, image: nginx}
";

#[test]
fn a_disruption_budget_blocks_an_eviction_and_drain_honours_it() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "2"]);
    let suffix = regex::Regex::new("node-debugger-NODE-[a-z0-9]{5}").unwrap();
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        let run = format!("v{}", client.version.replace('.', "-"));
        let manifest = session.manifest("web.yaml", &WEB.replace("VERSION", &run));
        session.ok(&format!("apply -f {manifest}"));
        session.wait("rollout status deployment/web --timeout=120s");
        // kubectl's generator sends a protobuf body.
        session.ok(&format!("create pdb web --selector=run={run} --min-available=2"));
        session.wait("wait --for=jsonpath={.status.currentHealthy}=2 pdb/web --timeout=60s");
        session.ok("get pdb web");
        session.ok("get pdb web -o jsonpath={.status.currentHealthy}/{.status.desiredHealthy}/{.status.expectedPods}/{.status.disruptionsAllowed}");
        let pod =
            stdout(&session.quiet(&format!("get pods -l run={run} -o jsonpath={{.items[0].metadata.name}}")))
                .trim()
                .to_string();
        let eviction = EVICTION.replace("POD", &pod).replace("NAMESPACE", &session.namespace);
        let file = session.manifest("eviction.json", &eviction);
        session.run(&format!(
            "create --raw /api/v1/namespaces/{}/pods/{pod}/eviction -f {file}",
            session.namespace
        ));
        session.ok("patch pdb web --type=merge -p {\"spec\":{\"minAvailable\":1}}");
        session.wait("wait --for=jsonpath={.status.disruptionsAllowed}=1 pdb/web --timeout=60s");
        session.ok("get pdb web");
        // Drain the node of one pod: its eviction takes the one disruption; a second pod on the
        // same node waits (429, retried every 5 s by kubectl) until the replacement is Ready.
        let node = stdout(&session.quiet(&format!("get pod {pod} -o jsonpath={{.spec.nodeName}}")))
            .trim()
            .to_string();
        let drain = session
            .quiet(&format!("drain {node} --pod-selector=run={run} --ignore-daemonsets --timeout=120s"));
        assert!(drain.status.success(), "drain: {}{}", stdout(&drain), stderr(&drain));
        assert!(stdout(&drain).contains(&format!("node/{node} drained")), "{}", stdout(&drain));
        session
            .transcript
            .push_str("$ kubectl drain NODE --pod-selector=run=RUN --ignore-daemonsets\n[drained]\n\n");
        session.wait("wait --for=jsonpath={.status.currentHealthy}=2 pdb/web --timeout=120s");
        let on_drained = stdout(
            &session.quiet(&format!("get pods -l run={run} --field-selector=spec.nodeName={node} -o name")),
        );
        assert_eq!(on_drained.trim(), "", "pods left on the drained node");
        session.ok(&format!("uncordon {node}"));
        // Not recorded: kubectl 1.37 words the deletion otherwise.
        assert!(session.quiet("delete deployment web").status.success());
        // No process runs on a simulated node: its debugging pod is refused, at once.
        session.run(&format!("debug node/{node} --image=busybox --profile=general"));
        let transcript = session.finish().replace(&pod, "POD").replace(&node, "NODE").replace(&run, "RUN");
        let transcript = suffix.replace_all(&transcript, "node-debugger-NODE-xxxxx").into_owned();
        transcripts.push((client.version, transcript));
    }
    same_for_every_client(transcripts, "disruption_budget_and_drain");
}

#[test]
fn a_cron_job_is_created_listed_and_instantiated_by_hand() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "1"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        // kubectl's generator sends a protobuf body.
        session.ok("create cronjob nightly --image=nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0 --schedule=@daily");
        session.run("create cronjob broken --image=busybox --schedule=61");
        session.ok("get cronjobs");
        session.ok("get cj nightly -o wide");
        session.ok("get cj nightly -o jsonpath={.spec.concurrencyPolicy}/{.spec.suspend}/{.spec.successfulJobsHistoryLimit}/{.spec.jobTemplate.spec.template.spec.restartPolicy}");
        session.ok("create job manual --from=cronjob/nightly");
        session.wait("wait --for=condition=complete job/manual --timeout=120s");
        session.ok("get job manual -o jsonpath={.metadata.ownerReferences[0].kind}/{.metadata.annotations.cronjob\\.kubernetes\\.io/instantiate}");
        session.ok("patch cj nightly --type=merge -p {\"spec\":{\"suspend\":true}}");
        session.ok("get cj nightly");
        transcripts.push((client.version, session.finish()));
    }
    same_for_every_client(transcripts, "cron_job");
}

const AUTOSCALER: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 4
";

const BAD_AUTOSCALER: &str = "apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: bad
spec:
  scaleTargetRef: {kind: Deployment, name: a/b}
  minReplicas: 0
  maxReplicas: 1
";

#[test]
fn an_autoscaler_keeps_its_minimum_and_shows_unknown_metrics_without_metrics_server() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    // The HPA controller syncs every 15 simulated seconds.
    let sim = Sim::up(&["--nodes", "1", "--speed", "10"]);
    let mut transcripts = Vec::new();
    for client in &clients {
        let mut session = Session::new(&sim, client);
        session.ok("create deployment web --image=nginx");
        session.ok(&format!("apply -f {}", session.manifest("hpa.yaml", AUTOSCALER)));
        session.run(&format!("create -f {}", session.manifest("bad-hpa.yaml", BAD_AUTOSCALER)));
        session.wait("wait --for=jsonpath={.status.desiredReplicas}=2 hpa/web --timeout=60s");
        session.wait("rollout status deployment/web --timeout=60s");
        session.wait("wait --for=jsonpath={.status.currentReplicas}=2 hpa/web --timeout=60s");
        session.ok("get hpa");
        session.ok("get hpa web -o jsonpath={.spec.metrics[0].resource.target.averageUtilization}/{.status.currentReplicas}/{.status.conditions[*].reason}");
        transcripts.push((client.version, session.finish()));
        // kubectl 1.33 and later post autoscaling/v2, 1.32 autoscaling/v1 (served beside v2,
        // pkg/apis/autoscaling/v1/conversion.go).
        let created = session_autoscale(&sim, client);
        assert!(created.contains("horizontalpodautoscaler.autoscaling/web2 autoscaled"), "{created}");
        let namespace = format!("learner-{}", client.version.replace('.', "-"));
        let v1 = sim.kubectl(
            client,
            &["-n", &namespace, "get", "horizontalpodautoscalers.v1.autoscaling", "web2", "-o", "json"],
        );
        let v1: serde_json::Value = serde_json::from_slice(&v1.stdout).unwrap();
        assert_eq!(v1["apiVersion"], "autoscaling/v1");
        // No --cpu: v2's default metric, 80 % CPU, is v1's own field.
        assert_eq!(v1["spec"]["targetCPUUtilizationPercentage"], 80, "{v1}");
        watch_and_patch_through_v1(&sim, client, &namespace);
    }
    same_for_every_client(transcripts, "autoscaler");
}

/// `kubectl get horizontalpodautoscalers.v1.autoscaling -w` sees `kubectl patch` of the same v1
/// resource (merge, then strategic) change v1's own field; v2 reads the change as its CPU
/// metric. The full name: kubectl's shortcut expander (client-go `restmapper/shortcut.go`
/// `expandResourceShortcut`) drops the version of `hpa.v1.autoscaling`, which then names the
/// preferred version, v2, on any cluster.
fn watch_and_patch_through_v1(sim: &Sim, client: &Kubectl, namespace: &str) {
    let mut watch = sim
        .kubectl_command(client)
        .args(["-n", namespace, "get", "horizontalpodautoscalers.v1.autoscaling", "web2", "-w"])
        .arg("-o=jsonpath={.apiVersion}/{.spec.targetCPUUtilizationPercentage}/{.spec.maxReplicas}{\"\\n\"}")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(&mut watch);
    expect_line(&lines, "autoscaling/v1/80/3");
    let patch = |kind: &str, body: &str| {
        let args = [
            "-n",
            namespace,
            "patch",
            "horizontalpodautoscalers.v1.autoscaling",
            "web2",
            "--type",
            kind,
            "-p",
            body,
        ];
        let output = sim.kubectl(client, &args);
        assert!(output.status.success(), "kubectl {}: patch: {}", client.version, stderr(&output));
        stdout(&output)
    };
    let patched = patch("merge", r#"{"spec":{"targetCPUUtilizationPercentage":60}}"#);
    assert!(patched.contains("horizontalpodautoscaler.autoscaling/web2 patched"), "{patched}");
    expect_line(&lines, "autoscaling/v1/60/3");
    patch("strategic", r#"{"spec":{"maxReplicas":4}}"#);
    expect_line(&lines, "autoscaling/v1/60/4");
    let _ = watch.kill();
    let _ = watch.wait();
    let jsonpath = "-o=jsonpath={.spec.metrics[0].resource.target.averageUtilization}/{.spec.maxReplicas}";
    let v2 = sim.kubectl(client, &["-n", namespace, "get", "hpa.v2.autoscaling", "web2", jsonpath]);
    assert_eq!(stdout(&v2), "60/4", "kubectl {}", client.version);
}

/// `kubectl autoscale` of a second deployment (a protobuf body), outside the transcript.
fn session_autoscale(sim: &Sim, client: &Kubectl) -> String {
    let namespace = format!("learner-{}", client.version.replace('.', "-"));
    let created = sim.kubectl(client, &["-n", &namespace, "create", "deployment", "web2", "--image=nginx"]);
    assert!(created.status.success(), "{}", stderr(&created));
    let output =
        sim.kubectl(client, &["-n", &namespace, "autoscale", "deployment", "web2", "--min=1", "--max=3"]);
    format!("{}{}", stdout(&output), stderr(&output))
}
