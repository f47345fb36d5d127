//! Real kubectl (1.32, 1.33, 1.37) writing through `lab-runner sim up --api-only`: client-side
//! `apply -f` (created → unchanged → configured → list elements removed), server-side apply with
//! two managers, `patch --type strategic|merge|json`, `annotate`, `--dry-run=server`, unknown
//! fields under Strict, and OpenAPI v3 for a CRD's types. One simulator per test; each client
//! works in its own namespace, and the transcripts (namespace, paths, ages and ids hidden) are
//! snapshotted and must not depend on the client.

use crate::support::{
    binary::{stderr, stdout},
    kubectl::{Kubectl, clients},
    sim::Sim,
    transcript::Recorder,
};

/// One client's commands against a shared simulator, in its own namespace, recorded.
struct Session<'a> {
    recorder: Recorder<'a>,
    namespace: String,
}

/// `run`, `ok` and `fails` are the recorder's, in the namespace.
impl<'a> std::ops::Deref for Session<'a> {
    type Target = Recorder<'a>;

    fn deref(&self) -> &Recorder<'a> {
        &self.recorder
    }
}

impl std::ops::DerefMut for Session<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.recorder
    }
}

impl<'a> Session<'a> {
    /// Creates the client's namespace (`v133` for kubectl 1.33); not recorded.
    fn new(sim: &'a Sim, client: &'a Kubectl) -> Session<'a> {
        let namespace = format!("v{}", client.version.replace('.', ""));
        let created = sim.kubectl(client, &["create", "namespace", &namespace]);
        assert!(created.status.success(), "create namespace: {}", stderr(&created));
        Session { recorder: Recorder::new(sim, client, &["-n", &namespace]), namespace }
    }

    /// Unrecorded `kubectl get <what> -o jsonpath=<path>` in the namespace.
    fn jsonpath(&self, what: &str, path: &str) -> String {
        let jsonpath = format!("jsonpath={path}");
        let mut args = vec!["-n", self.namespace.as_str(), "get"];
        args.extend(what.split(' '));
        args.extend(["-o", &jsonpath]);
        let output = self.sim.kubectl(self.client, &args);
        assert!(output.status.success(), "get {what}: {}", stderr(&output));
        stdout(&output)
    }

    /// Writes `text` (with `NS` replaced by the namespace) to `<file>` in a scratch dir and
    /// returns the file name to pass to kubectl (the transcript shows `<dir>/<file>`).
    fn file(&self, file: &str, text: &str) -> String {
        let dir = self.sim.state_dir().join(&self.namespace);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(file);
        std::fs::write(&path, text.replace("NS", &self.namespace)).unwrap();
        path.to_str().unwrap().to_string()
    }

    /// The transcript with what depends on the client hidden.
    fn finish(self) -> (&'static str, String) {
        let dir = self.sim.state_dir().join(&self.namespace);
        let text = self
            .recorder
            .transcript
            .0
            .replace(dir.to_str().unwrap(), "<dir>")
            .replace(&self.namespace, "NS")
            // Newer clients name the namespace: `"agent" deleted from NS namespace`.
            .replace(" deleted from NS namespace", " deleted");
        // Not `kubectl::redacted`: its age pattern would hide quantities such as `100m`.
        let mut text = text;
        for (pattern, replacement) in [
            (r"(?m)^(\s*-?\s*(creationTimestamp|resourceVersion|uid|time)):.*$", "$1: [REDACTED]"),
            (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "<time>"),
            (r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "[UID]"),
        ] {
            text = regex::Regex::new(pattern).unwrap().replace_all(&text, replacement).into_owned();
        }
        (self.client.version, text)
    }
}

/// Runs `script` for every client on one simulator and snapshots the transcript, which must be
/// the same for all of them.
fn for_every_client(snapshot: &str, script: impl Fn(&mut Session<'_>)) {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    // The API surface alone: no controller writes to what the test reads back.
    let sim = Sim::up(&["--nodes", "1", "--api-only"]);
    let mut first: Option<(&str, String)> = None;
    for client in &clients {
        let mut session = Session::new(&sim, client);
        script(&mut session);
        let (version, transcript) = session.finish();
        match &first {
            None => first = Some((version, transcript)),
            Some((first_version, expected)) => assert_eq!(
                &transcript, expected,
                "kubectl {version} printed otherwise than kubectl {first_version}"
            ),
        }
    }
    if let Some((_, transcript)) = first {
        insta::assert_snapshot!(snapshot, transcript);
    }
}

const AGENT_V1: &str = r#"apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: NS, labels: {app: agent}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: agent
        image: busybox:1.36
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
        resources:
          requests: {cpu: 100m, memory: 64Mi}
          limits: {memory: 128Mi, nvidia.com/gpu: "1"}
      - name: sidecar
        image: busybox:1.36
"#;

/// Containers, their env names and the tolerations, to read a DaemonSet's template back.
const TEMPLATE: &str = "{range .spec.template.spec.containers[*]}{.name}={.image}[{.env[*].name}] {end}tolerations={.spec.template.spec.tolerations}";

#[test]
fn client_side_apply_create_unchanged_change_and_removal() {
    for_every_client("client_side_apply", |s| {
        let v1 = s.file("agent-v1.yaml", AGENT_V1);
        assert_eq!(s.ok(&format!("apply -f {v1}")), "daemonset.apps/agent created\n");
        // kubectl's three-way patch from last-applied, the file and the live object is `{}`:
        // no PATCH is sent (kubectl pkg/cmd/apply/patcher.go skips an empty patch).
        assert_eq!(s.ok(&format!("apply -f {v1}")), "daemonset.apps/agent unchanged\n");

        let v2 = s.file("agent-v2.yaml", &AGENT_V1.replace("busybox:1.36", "busybox:1.37"));
        assert_eq!(s.ok(&format!("apply -f {v2}")), "daemonset.apps/agent configured\n");
        assert_eq!(
            s.jsonpath("ds agent", TEMPLATE),
            r#"agent=busybox:1.37[A B] sidecar=busybox:1.37[] tolerations=[{"effect":"NoSchedule","key":"nvidia.com/gpu","operator":"Exists"}]"#
        );

        // An env var, a container and the tolerations dropped from the manifest: kubectl sends
        // `$setElementOrder`, `$patch: delete` by merge key and `tolerations: null`.
        let v3 = s.file(
            "agent-v3.yaml",
            &AGENT_V1
                .replace("busybox:1.36", "busybox:1.37")
                .replace("      tolerations:\n      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n", "")
                .replace("        - {name: A, value: \"1\"}\n", "")
                .replace("      - name: sidecar\n        image: busybox:1.37\n", ""),
        );
        assert_eq!(s.ok(&format!("apply -f {v3}")), "daemonset.apps/agent configured\n");
        assert_eq!(s.jsonpath("ds agent", TEMPLATE), "agent=busybox:1.37[B] tolerations=");
        assert_eq!(s.ok(&format!("apply -f {v3}")), "daemonset.apps/agent unchanged\n");
        s.ok("get ds agent -o yaml");

        // As upstream (kubernetes/kubernetes#66450, #116135): quantities are stored in canonical
        // form (`cpu: "0.5"` as `500m`) and as strings (a YAML number `1` as `"1"`); kubectl's
        // diff compares the file with the live object (apimachinery strategicpatch/patch.go
        // `diffMaps`) and sends both again each time, so re-applying says `configured` though
        // nothing changes.
        let numbers = s.file(
            "numbers.yaml",
            &AGENT_V1
                .replace("name: agent,", "name: numbers,")
                .replace("nvidia.com/gpu: \"1\"", "nvidia.com/gpu: 1")
                .replace("cpu: 100m", "cpu: \"0.5\""),
        );
        assert_eq!(s.ok(&format!("apply -f {numbers}")), "daemonset.apps/numbers created\n");
        assert_eq!(s.ok(&format!("apply -f {numbers}")), "daemonset.apps/numbers configured\n");
        assert_eq!(
            s.jsonpath("ds numbers", "{.spec.template.spec.containers[0].resources}"),
            r#"{"limits":{"memory":"128Mi","nvidia.com/gpu":"1"},"requests":{"cpu":"500m","memory":"64Mi"}}"#
        );
    });
}

const WEB: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: NS}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        env:
        - {name: A, value: "1"}
        - {name: B, value: "2"}
"#;

const SCALE: &str =
    "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: NS}\nspec:\n  replicas: 5\n";

const WEB_STATE: &str = "{.spec.replicas}|{.spec.template.spec.containers[0].image}|{.spec.template.spec.containers[0].env[*].name}";

#[test]
fn server_side_apply_merges_per_manager() {
    for_every_client("server_side_apply", |s| {
        // Created client-side first: the object carries last-applied-configuration, so the
        // server-side apply is followed by kubectl's metadata-only `kubectl-last-applied` apply
        // and the managedFields migration; the spec must survive both.
        let web = s.file("web.yaml", WEB);
        s.ok(&format!("apply -f {web}"));
        assert_eq!(
            s.ok(&format!("apply --server-side -f {web}")),
            "deployment.apps/web serverside-applied\n"
        );
        assert_eq!(s.jsonpath("deploy web", WEB_STATE), "2|nginx:1.27|A B");
        let managers = s.jsonpath("deploy web", "{.metadata.managedFields[*].manager}");
        let mut managers: Vec<&str> = managers.split(' ').collect();
        managers.sort_unstable();
        assert_eq!(managers, ["kubectl", "kubectl-last-applied"], "the client-side manager was migrated");

        // A changed image and a dropped env var: the field the manager no longer applies goes.
        let changed = s.file(
            "web-v2.yaml",
            &WEB.replace("nginx:1.27", "nginx:1.28").replace("        - {name: A, value: \"1\"}\n", ""),
        );
        s.ok(&format!("apply --server-side -f {changed}"));
        assert_eq!(s.jsonpath("deploy web", WEB_STATE), "2|nginx:1.28|B");

        // A second manager's apply conflicts on replicas until it forces.
        let scale = s.file("scale.yaml", SCALE);
        let conflict = s.fails(&format!("apply --server-side --field-manager=scaler -f {scale}"));
        assert!(
            conflict.starts_with(
                "error: Apply failed with 1 conflict: conflict with \"kubectl\": .spec.replicas\n"
            ),
            "{conflict}"
        );
        assert_eq!(s.jsonpath("deploy web", WEB_STATE), "2|nginx:1.28|B");
        s.ok(&format!("apply --server-side --field-manager=scaler --force-conflicts -f {scale}"));
        assert_eq!(s.jsonpath("deploy web", WEB_STATE), "5|nginx:1.28|B");
        // The first manager no longer owns replicas: its next apply leaves them alone.
        let without_replicas =
            s.file("web-v3.yaml", &WEB.replace("nginx:1.27", "nginx:1.28").replace("  replicas: 2\n", ""));
        s.ok(&format!("apply --server-side -f {without_replicas}"));
        assert_eq!(s.jsonpath("deploy web", WEB_STATE), "5|nginx:1.28|A B");
    });
}

#[test]
fn patches_annotations_dry_runs_and_strict_fields() {
    for_every_client("patches_annotations_dry_runs", |s| {
        let agent = s.file("agent.yaml", AGENT_V1);
        s.ok(&format!("create -f {agent}"));
        let image = "{.spec.template.spec.containers[0].image}";

        s.ok(r#"patch ds agent --type strategic -p {"spec":{"template":{"spec":{"containers":[{"name":"agent","image":"busybox:1.37"}]}}}}"#);
        assert_eq!(s.jsonpath("ds agent", TEMPLATE).split(' ').next(), Some("agent=busybox:1.37[A"));
        s.ok(r#"patch ds agent --type merge -p {"metadata":{"labels":{"tier":"node"}}}"#);
        assert_eq!(s.jsonpath("ds agent", "{.metadata.labels}"), r#"{"app":"agent","tier":"node"}"#);
        let failed = s.fails(r#"patch ds agent --type json -p [{"op":"test","path":"/spec/template/spec/containers/0/image","value":"busybox:1.36"},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.38"}]"#);
        assert_eq!(
            failed,
            "The request is invalid: the server rejected our request due to an error in our request\n"
        );
        assert_eq!(s.jsonpath("ds agent", image), "busybox:1.37", "a failed test op changes nothing");
        s.ok(r#"patch ds agent --type json -p [{"op":"test","path":"/spec/template/spec/containers/0/image","value":"busybox:1.37"},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"busybox:1.38"}]"#);
        assert_eq!(s.jsonpath("ds agent", image), "busybox:1.38");
        s.ok(r#"patch ds agent --type merge -p {"metadata":{"labels":{"tier":"node"}}}"#);

        // On a ConfigMap: a DaemonSet keeps its own `deprecated.daemonset.template.generation`.
        let settings = s.file(
            "settings.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\"}\n",
        );
        s.ok(&format!("create -f {settings}"));
        s.ok("annotate configmap settings owner=team-a");
        s.fails("annotate configmap settings owner=team-b");
        s.ok("annotate configmap settings owner=team-b --overwrite");
        assert_eq!(s.jsonpath("configmap settings", "{.metadata.annotations}"), r#"{"owner":"team-b"}"#);
        s.ok("annotate configmap settings owner-");
        // Gone with its last key, as ObjectMeta's `omitempty` map drops it upstream.
        assert_eq!(s.jsonpath("configmap settings", "{.metadata.annotations}"), "");
        s.ok("annotate ds agent owner=team-a");

        // Server-side dry runs answer as the write would and store nothing.
        let before = s.jsonpath("ds agent", "{.metadata.resourceVersion}");
        let changed = s.file("agent-v2.yaml", &AGENT_V1.replace("busybox:1.36", "busybox:1.39"));
        s.ok(&format!("apply -f {changed} --dry-run=server"));
        s.ok(&format!("apply --server-side --force-conflicts -f {changed} --dry-run=server"));
        s.ok(r#"patch ds agent --type merge -p {"metadata":{"labels":{"tier":"gpu"}}} --dry-run=server"#);
        s.ok("annotate ds agent owner=nobody --overwrite --dry-run=server");
        s.ok("delete ds agent --dry-run=server");
        let other = s.file("other.yaml", &AGENT_V1.replace("name: agent,", "name: other,"));
        s.ok(&format!("create -f {other} --dry-run=server"));
        assert_eq!(s.jsonpath("ds agent", "{.metadata.resourceVersion}"), before, "nothing was stored");
        assert_eq!(
            s.jsonpath("ds agent", "{.metadata.labels.tier}|{.metadata.annotations.owner}"),
            "node|team-a"
        );
        assert_eq!(s.jsonpath("ds agent", image), "busybox:1.38");
        s.ok("get ds -o name");

        // Unknown fields: kubectl validates by default (fieldValidation=Strict), `warn` sends
        // Warn, `false` sends Ignore (the field is dropped silently).
        let typo = s.file(
            "typo.yaml",
            &AGENT_V1
                .replace("name: agent,", "name: typo,")
                .replace("spec:\n  selector", "spec:\n  foo: 1\n  selector"),
        );
        s.fails(&format!("create -f {typo}"));
        s.fails(&format!("apply -f {typo} --validate=strict"));
        s.fails(&format!("apply --server-side -f {typo}"));
        // A value of the wrong type: structured-merge-diff's words, upstream's 500 (no reason).
        let ill_typed = s
            .file("ill-typed.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ill}\ndata: {a: 1}\n");
        s.fails(&format!("apply --server-side -f {ill_typed}"));
        s.ok(&format!("apply -f {typo} --validate=warn"));
        s.ok(&format!("delete -f {typo}"));
        s.ok(&format!("create -f {typo} --validate=false"));
        assert_eq!(s.jsonpath("ds typo", "{.spec.foo}"), "", "the unknown field was dropped");
    });
}

const PROMETHEUS_RULE: &str = r#"apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata: {name: gpu-alerts, namespace: NS}
spec:
  groups:
  - name: gpu
    rules:
    - alert: GpuTooHot
      expr: DCGM_FI_DEV_GPU_TEMP > 85
      for: 5m
      labels: {severity: warning}
"#;

#[test]
fn custom_types_are_described_by_openapi_v3() {
    let crd = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/crds/prometheusrules.yaml");
    for_every_client("custom_types_openapi", |s| {
        // Installed by the first client, unchanged for the others (so not recorded).
        let applied = s.sim.kubectl(s.client, &["apply", "-f", crd]);
        assert!(applied.status.success(), "{}", stderr(&applied));
        s.ok("wait --for=condition=Established crd/prometheusrules.monitoring.coreos.com --timeout=10s");
        let root: serde_json::Value = serde_json::from_str(&s.jsonpath_raw("/openapi/v3")).unwrap();
        let url = root["paths"]["apis/monitoring.coreos.com/v1"]["serverRelativeURL"].as_str().unwrap();
        assert!(url.starts_with("/openapi/v3/apis/monitoring.coreos.com/v1?hash="), "{url}");
        s.ok("explain prometheusrule.spec.groups.rules");

        let rule = s.file("rule.yaml", PROMETHEUS_RULE);
        s.ok(&format!("apply -f {rule}"));
        assert_eq!(
            s.ok(&format!("apply -f {rule}")),
            "prometheusrule.monitoring.coreos.com/gpu-alerts unchanged\n"
        );
        let changed = s.file("rule-v2.yaml", &PROMETHEUS_RULE.replace("for: 5m", "for: 10m"));
        // No strategic merge for custom types: kubectl sends a JSON merge patch.
        s.ok(&format!("apply -f {changed}"));
        assert_eq!(s.jsonpath("promrule gpu-alerts", "{.spec.groups[0].rules[0].for}"), "10m");
        let typo = s.file("rule-typo.yaml", &PROMETHEUS_RULE.replace("for:", "fore:"));
        s.fails(&format!("apply -f {typo}"));
    });
}

impl Session<'_> {
    /// Unrecorded `kubectl get --raw <path>`.
    fn jsonpath_raw(&self, path: &str) -> String {
        let output = self.sim.kubectl(self.client, &["get", "--raw", path]);
        assert!(output.status.success(), "get --raw {path}: {}", stderr(&output));
        stdout(&output)
    }
}
