//! Real kubectl (1.32, 1.33, 1.37) applying the device plugin's ClusterRole and binding
//! (`manifests/device-plugin/rbac.yaml`) to `sim up --api-only`: created, then unchanged, then
//! listed by label as kubectl prints them, plain and `-o wide`, and explained from OpenAPI v3. Stored objects only — the
//! simulator's tokens, not these bindings, decide access.

use crate::support::{
    binary::{stderr, stdout},
    kubectl::clients,
    sim::Sim,
    transcript::redacted,
};

const LABEL: &str = "app.kubernetes.io/name=nvidia-device-plugin";

#[test]
fn device_plugin_rbac_applies_and_lists_as_kubectl_prints_it() {
    let clients = clients();
    if clients.is_empty() {
        return;
    }
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/device-plugin/rbac.yaml");
    let sim = Sim::up(&["--nodes", "1", "--api-only"]);
    let time = regex::Regex::new(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").unwrap();
    let mut first: Option<(&str, String)> = None;
    for client in &clients {
        let mut transcript = String::new();
        let commands = [
            format!("apply -f {manifest}"),
            format!("apply -f {manifest}"),
            format!("get clusterrole,clusterrolebinding -l {LABEL}"),
            format!("get clusterrolebinding -l {LABEL} -o wide"),
            // From the published OpenAPI v3 document of rbac.authorization.k8s.io/v1.
            "explain clusterrolebinding.roleRef.kind".to_string(),
            format!("delete -f {manifest}"),
        ];
        for command in &commands {
            let args: Vec<&str> = command.split(' ').collect();
            let output = sim.kubectl(client, &args);
            assert!(
                output.status.success(),
                "kubectl {} {command}: {}{}",
                client.version,
                stdout(&output),
                stderr(&output)
            );
            transcript.push_str(&format!("$ kubectl {command}\n{}{}\n", stdout(&output), stderr(&output)));
        }
        let transcript = redacted(&transcript.replace(manifest, "rbac.yaml"));
        let transcript = time.replace_all(&transcript, "<time>").into_owned();
        match &first {
            None => first = Some((client.version, transcript)),
            Some((first_version, expected)) => assert_eq!(
                &transcript, expected,
                "kubectl {} printed otherwise than kubectl {first_version}",
                client.version
            ),
        }
    }
    if let Some((_, transcript)) = first {
        insta::assert_snapshot!("device_plugin_rbac", transcript);
    }
}
