//! Real kubectl (1.32, 1.33, 1.37) against `lab-runner sim up`: protobuf `create` commands,
//! `auth can-i` for the admin and the viewer, a CRD with custom resources, and `rollout
//! history|undo` over ControllerRevisions written through the API. Transcripts are snapshotted
//! (ages, uids and timestamps redacted) and must be the same for every client.

use crate::support::{
    binary::{stderr, stdout},
    kubectl::clients,
    sim::Sim,
    transcript::{Recorder, redacted},
};

/// Runs commands for one client and records what they print.
struct Session<'a>(Recorder<'a>);

/// `run` and `ok` are the recorder's.
impl<'a> std::ops::Deref for Session<'a> {
    type Target = Recorder<'a>;

    fn deref(&self) -> &Recorder<'a> {
        &self.0
    }
}

impl std::ops::DerefMut for Session<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl Session<'_> {
    /// Writes `text` to `file` in a scratch dir and returns its path.
    fn file(&self, file: &str, text: &str) -> String {
        let path = self.sim.state_dir().join(format!("{}-{file}", self.client.version));
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    }
}

/// Runs `script` once per client, each on a fresh simulator, and snapshots the transcript,
/// which must not depend on the client.
fn for_every_client(snapshot: &str, script: impl Fn(&mut Session<'_>)) {
    // The API surface alone: these tests write what controllers would (revisions, status).
    let clients = clients();
    let mut first: Option<(&str, String)> = None;
    for client in &clients {
        let sim = Sim::up(&["--nodes", "1", "--api-only"]);
        let mut session = Session(Recorder::new(&sim, client, &[]));
        script(&mut session);
        let state_dir = sim.state_dir().to_str().unwrap().to_string();
        let transcript = session
            .0
            .transcript
            .0
            .replace(&state_dir, "<state>")
            .replace(env!("CARGO_MANIFEST_DIR"), "<repo>");
        let transcript = redacted(&transcript).replace(&format!("{}-", client.version), "");
        match &first {
            None => first = Some((client.version, transcript)),
            Some((version, expected)) => {
                assert_eq!(
                    &transcript, expected,
                    "kubectl {} printed otherwise than {version}",
                    client.version
                )
            }
        }
    }
    if let Some((_, transcript)) = first {
        insta::assert_snapshot!(snapshot, transcript);
    }
}

#[test]
fn protobuf_creates_and_self_reviews() {
    for_every_client("protobuf_creates_and_self_reviews", |s| {
        s.ok("create namespace team-a");
        s.ok("create configmap cfg -n team-a --from-literal=a=b");
        s.ok("create secret generic s1 -n team-a --from-literal=p=q");
        s.ok("create quota q1 -n team-a --hard=cpu=1,nvidia.com/gpu=2");
        s.ok("create deployment web -n team-a --image=nginx --replicas=2 --port=80");
        s.ok("create job j1 -n team-a --image=busybox -- echo hi");
        s.ok("create serviceaccount sa1 -n team-a");
        s.ok("get configmap/cfg secret/s1 quota/q1 serviceaccount/sa1 -n team-a");
        s.ok("get deployment web -n team-a -o jsonpath={.spec.replicas}/{.spec.template.spec.containers[0].ports[0].containerPort}");
        s.ok("get job j1 -n team-a -o jsonpath={.spec.template.spec.containers[0].command}");
        s.ok("get secret s1 -n team-a -o jsonpath={.data.p}");
        s.ok("auth can-i create pods");
        let denied = s.run("--context lab-runner-sim-viewer auth can-i create pods");
        assert_eq!(denied.status.code(), Some(1), "a denied can-i exits 1");
        s.ok("--context lab-runner-sim-viewer auth can-i list daemonsets.apps -n kube-system");
        s.ok("auth can-i --list");
        s.ok("--context lab-runner-sim-viewer auth can-i --list");
        // The viewer's protobuf create is refused by the auth layer before decoding.
        s.run("--context lab-runner-sim-viewer create configmap nope -n team-a");
    });
}

const GPU_CLAIMS_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gpuclaims.lab.example.com
spec:
  group: lab.example.com
  names: {kind: GpuClaim, listKind: GpuClaimList, plural: gpuclaims, singular: gpuclaim, shortNames: [gc]}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    additionalPrinterColumns:
    - {name: GPUs, type: integer, jsonPath: .spec.gpus}
    - {name: Node, type: string, jsonPath: .spec.node}
    - {name: Models, type: string, jsonPath: '.spec.models[*].name'}
    - {name: Age, type: date, jsonPath: .metadata.creationTimestamp}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [gpus]
            properties:
              gpus: {type: integer}
              node: {type: string}
              models: {type: array, items: {type: object, properties: {name: {type: string}}}}
              extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#;

const PROMETHEUS_RULE: &str = r#"apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: gpu-alerts
spec:
  groups:
  - name: gpu
    rules:
    - alert: GPUHot
      expr: DCGM_FI_DEV_GPU_TEMP > 85
      for: 5m
      labels: {severity: warning}
      annotations: {summary: GPU too hot}
"#;

#[test]
fn custom_resources_follow_their_definitions() {
    let crd = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/crds/prometheusrules.yaml");
    for_every_client("custom_resources_follow_their_definitions", |s| {
        s.ok(&format!("apply -f {crd}"));
        s.ok("wait --for=condition=Established crd/prometheusrules.monitoring.coreos.com --timeout=10s");
        s.ok("get crd prometheusrules.monitoring.coreos.com -o jsonpath={.status.acceptedNames.shortNames}");
        let rule = s.file("rule.yaml", PROMETHEUS_RULE);
        s.ok(&format!("create -f {rule}"));
        s.ok("get promrule");
        s.ok("get prometheusrules.monitoring.coreos.com gpu-alerts -o jsonpath={.spec.groups[0].rules[0].expr}");
        let typo =
            s.file("typo.yaml", &PROMETHEUS_RULE.replace("gpu-alerts", "typo").replace("for:", "fore:"));
        assert!(!s.run(&format!("create -f {typo}")).status.success(), "Strict rejects an unknown field");
        let missing = s.file(
            "missing.yaml",
            &PROMETHEUS_RULE
                .replace("gpu-alerts", "missing")
                .replace("expr: DCGM_FI_DEV_GPU_TEMP > 85", "record: x"),
        );
        assert!(!s.run(&format!("create -f {missing}")).status.success(), "expr is required");
        let changed = s.file("changed.yaml", &PROMETHEUS_RULE.replace("for: 5m", "for: 10m"));
        s.ok(&format!("apply -f {changed}"));
        assert_eq!(s.ok("get promrule gpu-alerts -o jsonpath={.spec.groups[0].rules[0].for}"), "10m");
        let served = s.file("ssa.yaml", &PROMETHEUS_RULE.replace("gpu-alerts", "ssa"));
        s.ok(&format!("apply --server-side -f {served}"));
        let served_typo =
            s.file("ssa-typo.yaml", &PROMETHEUS_RULE.replace("gpu-alerts", "ssa").replace("for:", "fore:"));
        assert!(
            !s.run(&format!("apply --server-side -f {served_typo}")).status.success(),
            "SSA is validated too"
        );

        let claims = s.file("claims-crd.yaml", GPU_CLAIMS_CRD);
        s.ok(&format!("apply -f {claims}"));
        s.ok("wait --for=condition=Established crd/gpuclaims.lab.example.com --timeout=10s");
        let claim = s.file(
            "claim.yaml",
            "apiVersion: lab.example.com/v1\nkind: GpuClaim\nmetadata: {name: train}\nspec:\n  gpus: 2\n  node: gpu-node-1\n  models: [{name: llama}, {name: bert}]\n  extra: {anything: [1, 2]}\n",
        );
        s.ok(&format!("create -f {claim} --validate=false"));
        s.ok("get gc");
        s.ok("get gpuclaim train -o jsonpath={.spec.extra}");
        let wrong = s.file(
            "wrong.yaml",
            "apiVersion: lab.example.com/v1\nkind: GpuClaim\nmetadata: {name: wrong}\nspec: {gpus: two, stray: 1}\n",
        );
        s.run(&format!("create -f {wrong} --validate=false"));

        s.ok("delete crd prometheusrules.monitoring.coreos.com");
        s.ok(&format!("apply -f {crd}"));
        s.ok("wait --for=condition=Established crd/prometheusrules.monitoring.coreos.com --timeout=10s");
        s.ok("get promrule");
    });
}

#[test]
fn custom_types_survive_a_restart() {
    let Some(client) = clients().into_iter().find(|c| c.version == "1.33") else { return };
    let sim = Sim::up(&["--nodes", "1"]);
    let crd = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/crds/prometheusrules.yaml");
    let mut s = Session(Recorder::new(&sim, &client, &[]));
    s.ok(&format!("apply -f {crd}"));
    let rule = s.file("rule.yaml", PROMETHEUS_RULE);
    s.ok(&format!("create -f {rule}"));
    let state = sim.state_dir();
    let down = crate::support::binary::lab_runner()
        .args(["sim", "down", "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    assert!(down.status.success(), "{}", stderr(&down));
    let up =
        crate::support::binary::lab_runner().args(["sim", "up", "--state-dir"]).arg(&state).output().unwrap();
    assert!(up.status.success(), "{}", stderr(&up));
    assert_eq!(s.ok("get promrule -o name"), "prometheusrule.monitoring.coreos.com/gpu-alerts\n");
}

fn revision(name: &str, number: u32, image: &str, uid: &str) -> String {
    format!(
        r#"{{"apiVersion":"apps/v1","kind":"ControllerRevision","metadata":{{"name":"{name}","namespace":"default","labels":{{"app":"agent","controller-revision-hash":"{name}"}},"annotations":{{"kubernetes.io/change-cause":"image {image}"}},"ownerReferences":[{{"apiVersion":"apps/v1","kind":"DaemonSet","name":"agent","uid":"{uid}","controller":true,"blockOwnerDeletion":true}}]}},"revision":{number},"data":{{"spec":{{"template":{{"$patch":"replace","metadata":{{"labels":{{"app":"agent"}}}},"spec":{{"containers":[{{"image":"{image}","name":"agent"}}]}}}}}}}}}}"#
    )
}

const DAEMON_SET: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "agent:v2"}]
"#;

#[test]
fn rollout_history_and_undo_over_written_revisions() {
    for_every_client("rollout_history_and_undo_over_written_revisions", |s| {
        let ds = s.file("ds.yaml", DAEMON_SET);
        s.ok(&format!("create -f {ds}"));
        // Not recorded: a uid can look like an age to the redaction.
        let uid = stdout(&s.sim.kubectl(s.client, &["get", "ds", "agent", "-o", "jsonpath={.metadata.uid}"]));
        assert_eq!(uid.len(), 36, "a uid: {uid}");
        // No DaemonSet controller here: the test writes what it would (revisions and status).
        for (number, image) in [(1, "agent:v1"), (2, "agent:v2")] {
            let file = s.file(
                &format!("rev{number}.json"),
                &revision(&format!("agent-{number}"), number, image, &uid),
            );
            s.ok(&format!("create -f {file}"));
        }
        let status = r#"{"status":{"currentNumberScheduled":1,"desiredNumberScheduled":1,"numberMisscheduled":0,"numberReady":1,"updatedNumberScheduled":1,"numberAvailable":1,"observedGeneration":1}}"#;
        s.ok(&format!("patch ds agent --subresource=status --type=merge -p {status}"));
        s.ok("get controllerrevisions -l app=agent");
        let raw = s.sim.kubectl(
            s.client,
            &["get", "--raw", "/apis/apps/v1/namespaces/default/controllerrevisions/agent-1"],
        );
        assert!(
            stdout(&raw).contains(r#""data":{"spec":{"template":{"$patch":"replace","metadata":{"labels":{"app":"agent"}},"spec":{"containers":[{"image":"agent:v1","name":"agent"}]}}}}"#),
            "data is stored as sent: {}",
            stdout(&raw)
        );
        s.ok("rollout history ds/agent");
        s.ok("rollout history ds/agent --revision=1");
        s.ok("rollout undo ds/agent --to-revision=1");
        s.ok("get ds agent -o jsonpath={.spec.template.spec.containers[0].image}");
        s.run("rollout undo ds/agent --to-revision=7");
    });
}

#[test]
fn protobuf_creates_of_rbac_kinds_and_services() {
    // Issue #16: these typed creates send protobuf too; the simulator answered 415.
    for_every_client("protobuf_creates_of_rbac_kinds_and_services", |s| {
        s.ok("create namespace team-a");
        s.ok("create clusterrole x --verb=get --resource=pods");
        s.ok("create clusterrole agg --aggregation-rule=lab=yes");
        s.ok("create role r -n team-a --verb=get,list --resource=configmaps --resource-name=cfg");
        s.ok("create clusterrolebinding xb --clusterrole=x --serviceaccount=team-a:default --user=ann");
        s.ok("create rolebinding rb -n team-a --role=r --group=devs");
        s.ok("create service clusterip web -n team-a --tcp=80:8080");
        s.ok("create service externalname ext -n team-a --external-name=example.com");
        s.ok("get clusterrole x -o jsonpath={.rules}");
        s.ok("get clusterrole agg -o jsonpath={.aggregationRule}");
        s.ok("get role r -n team-a -o jsonpath={.rules}");
        s.ok("get clusterrolebinding xb -o jsonpath={.roleRef}/{.subjects}");
        s.ok("get rolebinding rb -n team-a -o jsonpath={.roleRef}/{.subjects}");
        s.ok("get service web -n team-a -o jsonpath={.spec.type}/{.spec.ports}/{.spec.selector}");
        s.ok("get service ext -n team-a -o jsonpath={.spec.type}/{.spec.externalName}");
    });
}

/// `kubectl auth whoami` posts a SelfSubjectReview (authentication.k8s.io/v1, served on 1.33;
/// pkg/registry/authentication/selfsubjectreview/rest.go answers with the caller's user info);
/// `kubectl get --sort-by=.data.k` sorts by a field the Table rows carry only with
/// `includeObject=Object`; `kubectl version` reads `/version` with 1.33's emulation and minimum-compatibility fields;
/// DELETE of a ConfigMap answers a `Status` (`Store.finalizeDelete`) that kubectl reports as
/// deleted.
#[test]
fn whoami_sort_by_version_and_delete_answer_as_a_1_33_server() {
    for client in clients().iter().filter(|c| c.version == "1.33") {
        let sim = Sim::up(&["--nodes", "1", "--api-only"]);
        let mut s = Recorder::new(&sim, client, &[]);
        let admin = s.ok("auth whoami");
        assert_eq!(
            admin,
            "ATTRIBUTE   VALUE\nUsername    lab-runner-admin\nGroups      [system:masters system:authenticated]\n"
        );
        let viewer =
            s.ok("--context lab-runner-sim-viewer auth whoami -o jsonpath={.status.userInfo.username}");
        assert_eq!(viewer, "lab-runner-viewer");
        let version = s.ok("get --raw /version");
        assert!(
            version.contains("\n  \"emulationMinor\": \"33\",\n  \"minCompatibilityMajor\": \"1\",\n"),
            "{version}"
        );
        // `--sort-by` outside the metadata asks the Table for whole objects (`includeObject=Object`).
        s.ok("create configmap zulu --from-literal=k=1");
        s.ok("create configmap alpha --from-literal=k=2");
        let sorted = s.ok("get configmaps --sort-by=.data.k");
        let (zulu, alpha) = (sorted.find("zulu").unwrap(), sorted.find("alpha").unwrap());
        assert!(zulu < alpha, "{sorted}");
        s.ok("create configmap gone --from-literal=a=b");
        assert_eq!(s.ok("delete configmap gone"), "configmap \"gone\" deleted\n");
    }
}
