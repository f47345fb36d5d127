//! What a learner types works: real kubectl (1.32, 1.33, 1.37) on `sim up` scales Deployments,
//! ReplicaSets and StatefulSets through the `scale` subresource, and reads `/version/`.
//! Each client's transcript must be the same; the first is snapshotted.

use std::process::Output;

use crate::{
    support::binary::{stderr, stdout},
    support::{
        kubectl::{Kubectl, clients},
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

#[test]
fn an_indexed_job_runs_one_pod_per_index_and_completes() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let sim = Sim::up(&["--nodes", "2"]);
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
