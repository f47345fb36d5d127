//! `lab-runner sim up|status|down` through the built binary: the lifecycle, TLS with the
//! kubeconfig's CA, the bearer tokens, and the one-line errors with their exit codes.

use std::{net::TcpListener, path::Path};

use crate::support::binary::{lab_runner, stderr, stdout};

/// Hides what changes from run to run: the temp dir, ports, pids and uptimes.
fn redacted(text: &str, dir: &Path) -> String {
    let mut out = text.replace(&dir.display().to_string(), "[DIR]");
    for (pattern, replacement) in [
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
        (r"pid \d+", "pid [PID]"),
        (r"(?m)^(  pid\s+)\d+$", "${1}[PID]"),
        (r"(?m)^(  uptime\s+)\S+$", "${1}[UPTIME]"),
        (r"(?m)^(  revision\s+)\d+$", "${1}[REV]"),
        (r"process \d+", "process [PID]"),
        (r"port \d+", "port [PORT]"),
    ] {
        out = replace_all(&out, pattern, replacement);
    }
    out
}

fn replace_all(text: &str, pattern: &str, replacement: &str) -> String {
    regex::Regex::new(pattern).unwrap().replace_all(text, replacement).into_owned()
}

fn sim(args: &[&str], dir: &Path) -> std::process::Output {
    lab_runner().arg("sim").args(args).arg("--state-dir").arg(dir).output().unwrap()
}

/// Stops the simulator of a test even when the test fails half-way.
struct Stop<'a>(&'a Path);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        let _ = sim(&["down"], self.0);
    }
}

#[test]
fn up_status_down() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("sim");
    let up = sim(&["up"], &state);
    let _stop = Stop(&state);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    insta::assert_snapshot!("up", redacted(&stdout(&up), &state));

    let kubeconfig = state.join("kubeconfig");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&kubeconfig).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let again = sim(&["up"], &state);
    assert_eq!(again.status.code(), Some(2));
    insta::assert_snapshot!("up_twice", redacted(&stderr(&again), &state));

    let status = sim(&["status"], &state);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    insta::assert_snapshot!("status", redacted(&stdout(&status), &state));

    let down = sim(&["down"], &state);
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    assert!(stdout(&down).starts_with("simulator stopped (pid "), "{}", stdout(&down));
    assert!(!state.join("sim.pid").exists());

    let status = sim(&["status"], &state);
    assert_eq!(status.status.code(), Some(3));
    insta::assert_snapshot!("status_when_down", redacted(&stderr(&status), &state));
}

#[test]
fn a_restart_keeps_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let counts = |dir: &Path| {
        let status = stdout(&sim(&["status"], dir));
        status.split_once("objects\n").map(|(_, counts)| counts.to_string()).unwrap_or(status)
    };
    assert!(sim(&["up", "--nodes", "2"], dir.path()).status.success());
    let _stop = Stop(dir.path());
    let first = counts(dir.path());
    assert!(first.lines().any(|line| line.split_whitespace().eq(["nodes", "3"])), "{first}");
    assert!(std::fs::read_to_string(dir.path().join("serve.log")).unwrap().contains("seeded 14 objects"));
    assert!(sim(&["down"], dir.path()).status.success());

    // A different topology on restart does not re-seed over the stored cluster.
    assert!(sim(&["up", "--nodes", "5"], dir.path()).status.success());
    assert_eq!(counts(dir.path()), first);
    assert!(
        std::fs::read_to_string(dir.path().join("serve.log")).unwrap().contains("kept the existing store")
    );
}

#[test]
fn a_port_in_use_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let up =
        lab_runner().args(["sim", "up", "--port", &port, "--state-dir"]).arg(dir.path()).output().unwrap();
    assert_eq!(up.status.code(), Some(2));
    insta::assert_snapshot!(redacted(&stderr(&up), dir.path()), @"error: the simulator exited during start: port [PORT] on 127.0.0.1 is already in use: choose another with --port or --listen, or omit the port for a free one");
    assert!(!dir.path().join("sim.pid").exists());
}

#[test]
fn a_stale_pid_file_is_reported_and_removed() {
    let dir = tempfile::tempdir().unwrap();
    // Above any pid_max Linux allows (2^22), so no process can have it.
    std::fs::write(dir.path().join("sim.pid"), "99999999\n").unwrap();
    let status = sim(&["status"], dir.path());
    assert_eq!(status.status.code(), Some(3));
    insta::assert_snapshot!(redacted(&stderr(&status), dir.path()), @"error: no simulator is running from [DIR]: process [PID] in its pid file is gone (stale pid file removed)");
    assert!(!dir.path().join("sim.pid").exists());

    std::fs::write(dir.path().join("sim.pid"), "99999999\n").unwrap();
    let down = sim(&["down"], dir.path());
    assert_eq!(down.status.code(), Some(3));
    assert!(!dir.path().join("sim.pid").exists());
}

#[test]
fn an_unwritable_state_dir_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "").unwrap();
    let up = sim(&["up"], &file.join("sim"));
    assert_eq!(up.status.code(), Some(2));
    insta::assert_snapshot!(redacted(&stderr(&up), dir.path()), @"error: state directory [DIR]/a-file/sim is not writable: not a directory");
}

#[test]
fn a_bad_topology_points_at_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let topology = dir.path().join("topology.yaml");
    std::fs::write(&topology, "nodes:\n  - name: a\n    capacity: {cpu: 1, memory: 1Gi}\n    gpus: 2\n")
        .unwrap();
    let up = lab_runner()
        .args(["sim", "up", "--topology"])
        .arg(&topology)
        .arg("--state-dir")
        .arg(dir.path().join("sim"))
        .output()
        .unwrap();
    assert_eq!(up.status.code(), Some(2));
    let line = redacted(&stderr(&up), dir.path());
    assert!(line.starts_with("error: topology [DIR]/topology.yaml:4:5: unknown field `gpus`"), "{line}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_token_and_viewer_through_kube() {
    let dir = tempfile::tempdir().unwrap();
    let up = sim(&["up", "--nodes", "1"], dir.path());
    let _stop = Stop(dir.path());
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kubeconfig = kube::config::Kubeconfig::read_from(dir.path().join("kubeconfig")).unwrap();

    let client = |context: &str| {
        let kubeconfig = kubeconfig.clone();
        let options =
            kube::config::KubeConfigOptions { context: Some(context.to_string()), ..Default::default() };
        async move {
            let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options).await.unwrap();
            kube::Client::try_from(config).unwrap()
        }
    };
    let admin = client("lab-runner-sim").await;
    assert_eq!(admin.apiserver_version().await.unwrap().git_version, "v1.33.4");

    let viewer = client("lab-runner-sim-viewer").await;
    assert_eq!(viewer.apiserver_version().await.unwrap().git_version, "v1.33.4");
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(viewer);
    let namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": "team-a"}})).unwrap();
    match namespaces.create(&Default::default(), &namespace).await {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 403);
            assert_eq!(
                status.message,
                "namespaces is forbidden: User \"lab-runner-viewer\" cannot create resource \"namespaces\" in API group \"\" at the cluster scope"
            );
        }
        other => panic!("the viewer created a namespace: {other:?}"),
    }

    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig.clone(), &Default::default()).await.unwrap();
    config.auth_info.token = Some("not-the-token".to_string().into());
    let stranger = kube::Client::try_from(config).unwrap();
    match stranger.apiserver_version().await {
        Err(kube::Error::Api(status)) => {
            assert_eq!((status.code, status.reason.as_str()), (401, "Unauthorized"))
        }
        other => panic!("an unknown token was accepted: {other:?}"),
    }
}

fn signal(pid: u32, signal: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    rustix::process::kill_process(pid, signal).unwrap();
}

/// A child process killed when the test ends, whatever happened.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn serve_stops_cleanly_on_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let binary = assert_cmd::cargo::cargo_bin("lab-runner");
    let serve = std::process::Command::new(binary)
        .args(["sim", "serve", "--nodes", "1", "--state-dir"])
        .arg(dir.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut serve = KillOnDrop(serve);
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(serve.0.stdout.take().unwrap()));
    let first = lines.next().unwrap().unwrap();
    assert!(first.starts_with("simulator serving https://127.0.0.1:"), "{first}");
    // Two nodes (control-plane and worker-1), their leases, four namespaces, four accounts.
    assert!(first.ends_with("; seeded 12 objects)"), "{first}");
    assert!(dir.path().join("sim.pid").exists());
    signal(serve.0.id(), rustix::process::Signal::INT);
    let status = serve.0.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert_eq!(rest.last().map(String::as_str), Some("simulator stopped"));
    assert!(!dir.path().join("sim.pid").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_keeps_acknowledged_writes_and_leaves_a_stale_pid_file() {
    let dir = tempfile::tempdir().unwrap();
    assert!(sim(&["up", "--nodes", "1"], dir.path()).status.success());
    let _stop = Stop(dir.path());
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = || async {
        let kubeconfig = kube::config::Kubeconfig::read_from(dir.path().join("kubeconfig")).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
        kube::Client::try_from(config).unwrap()
    };
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client().await);
    let team = serde_json::from_value(serde_json::json!({"metadata": {"name": "team-a"}})).unwrap();
    namespaces.create(&Default::default(), &team).await.unwrap();

    let pid: u32 = std::fs::read_to_string(dir.path().join("sim.pid")).unwrap().trim().parse().unwrap();
    signal(pid, rustix::process::Signal::KILL);
    while std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z")) {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }

    let up = sim(&["up"], dir.path());
    assert!(up.status.success(), "{}", stderr(&up));
    assert_eq!(
        redacted(&stderr(&up), dir.path()),
        "note: removed the stale pid file in [DIR] (process [PID] is gone)\n"
    );
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client().await);
    assert!(namespaces.get_opt("team-a").await.unwrap().is_some());
}

/// The version the server behind `kubeconfig` answers, the certificate verified against
/// `tls_server_name` when given (as kubeconfig's `tls-server-name` does).
async fn version_through(kubeconfig: &str, tls_server_name: Option<&str>) -> Result<String, String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kubeconfig = kube::config::Kubeconfig::from_yaml(kubeconfig).map_err(|e| e.to_string())?;
    let mut config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| e.to_string())?;
    config.tls_server_name = tls_server_name.map(str::to_string);
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    // Debug, not Display: the rustls cause is in the source chain Display leaves out.
    client.apiserver_version().await.map(|v| v.git_version).map_err(|e| format!("{e:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_container_listen_address_keeps_tls_verifiable_from_the_host() {
    let dir = tempfile::tempdir().unwrap();
    // What the image runs, on an unspecified address with a free port.
    let up = sim(&["up", "--nodes", "1", "--listen", "0.0.0.0", "--tls-san", "sim.example"], dir.path());
    let _stop = Stop(dir.path());
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let written = std::fs::read_to_string(dir.path().join("kubeconfig")).unwrap();
    let endpoint = regex::Regex::new(r"server: (https://127\.0\.0\.1:(\d+))").unwrap();
    let captures = endpoint.captures(&written).expect("the kubeconfig names 127.0.0.1");
    let port = captures[2].to_string();

    // `sim kubeconfig --server` writes another address for the same CA and tokens.
    let exported = sim(&["kubeconfig", "--server", &format!("https://localhost:{port}")], dir.path());
    assert_eq!(exported.status.code(), Some(0), "{}", stderr(&exported));
    let exported = stdout(&exported);
    assert!(exported.contains(&format!("server: https://localhost:{port}\n")), "{exported}");
    assert_eq!(version_through(&exported, None).await.as_deref(), Ok("v1.33.4"));
    // The certificate names the --tls-san name and nothing else a client did not ask for.
    assert_eq!(version_through(&written, Some("sim.example")).await.as_deref(), Ok("v1.33.4"));
    let refused = version_through(&written, Some("other.example")).await.unwrap_err();
    assert!(refused.contains("NotValidForName"), "{refused}");

    // Without --server it is the running server's own kubeconfig.
    let own = sim(&["kubeconfig"], dir.path());
    assert_eq!(stdout(&own), written);
}

#[test]
fn the_kubeconfig_needs_a_state_dir_a_simulator_used() {
    let dir = tempfile::tempdir().unwrap();
    let out = sim(&["kubeconfig", "--server", "https://127.0.0.1:6443"], dir.path());
    assert_eq!(out.status.code(), Some(3));
    insta::assert_snapshot!(redacted(&stderr(&out), dir.path()), @"error: no simulator state in [DIR]: start one with `lab-runner sim up` or `sim serve` first");
    let bad = lab_runner().args(["sim", "serve", "--listen", "localhost:6443"]).output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        stderr(&bad).contains("invalid value 'localhost:6443' for '--listen <ADDR>'"),
        "{}",
        stderr(&bad)
    );
}

/// Pods by name: (uid, resourceVersion, `<phase>` or `<phase>/ready`) as the API shows them.
async fn pod_states(client: kube::Client) -> std::collections::BTreeMap<String, (String, String, String)> {
    let pods: kube::Api<k8s_openapi::api::core::v1::Pod> = kube::Api::namespaced(client, "default");
    let list = pods.list(&Default::default()).await.unwrap();
    list.items
        .into_iter()
        .map(|pod| {
            let status = pod.status.unwrap_or_default();
            let ready = status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True");
            let phase = status.phase.unwrap_or_default() + if ready { "/ready" } else { "" };
            let meta = pod.metadata;
            (meta.name.unwrap(), (meta.uid.unwrap(), meta.resource_version.unwrap(), phase))
        })
        .collect()
}

/// Every Event as (namespace/name, count, resourceVersion).
async fn event_states(client: kube::Client) -> Vec<(String, i32, String)> {
    let events: kube::Api<k8s_openapi::api::core::v1::Event> = kube::Api::all(client);
    let list = events.list(&Default::default()).await.unwrap();
    let mut states: Vec<(String, i32, String)> = list
        .items
        .into_iter()
        .map(|e| {
            let meta = e.metadata;
            (
                format!("{}/{}", meta.namespace.unwrap_or_default(), meta.name.unwrap_or_default()),
                e.count.unwrap_or(0),
                meta.resource_version.unwrap_or_default(),
            )
        })
        .collect();
    states.sort();
    states
}

async fn admin_client(dir: &Path) -> kube::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let kubeconfig = kube::config::Kubeconfig::read_from(dir.join("kubeconfig")).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default()).await.unwrap();
    kube::Client::try_from(config).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn running_pods_keep_running_across_sim_down_and_up() {
    let dir = tempfile::tempdir().unwrap();
    let args = ["up", "--nodes", "2", "--speed", "20"];
    let up = sim(&args, dir.path());
    let _stop = Stop(dir.path());
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let client = admin_client(dir.path()).await;
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(client.clone(), "default");
    let deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}},
        },
    }))
    .unwrap();
    deployments.create(&Default::default(), &deployment).await.unwrap();
    // Until the four pods run and are ready (the clock runs 20x: a few wall seconds at most).
    let mut before = pod_states(client.clone()).await;
    for _ in 0..300 {
        if before.len() == 4 && before.values().all(|(_, _, phase)| phase == "Running/ready") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        before = pod_states(client.clone()).await;
    }
    assert!(before.values().all(|(_, _, phase)| phase == "Running/ready"), "{before:?}");
    // Let the readiness and ReplicaSet/Deployment status writes land before the snapshot.
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    let before = pod_states(client.clone()).await;
    let events_before = event_states(client).await;

    assert!(sim(&["down"], dir.path()).status.success());
    let up = sim(&args, dir.path());
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let client = admin_client(dir.path()).await;
    // Give the restarted controllers time to act (an old kubelet restarted every pod here).
    tokio::time::sleep(std::time::Duration::from_secs(3)).await;
    assert_eq!(pod_states(client.clone()).await, before, "no pod left Running or was rewritten");
    assert_eq!(event_states(client).await, events_before, "no new or updated Event");
}

/// The audit log's lines, as JSON, once there are `count` of them (the writer flushes each
/// batch as the responses end, off the requests' path).
fn audit_lines(dir: &Path, count: usize) -> Vec<serde_json::Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(dir.join("audit.log")).unwrap_or_default();
        let lines: Vec<serde_json::Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        if lines.len() >= count || std::time::Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_are_audited_as_kube_apiserver_logs_them_and_sim_timeline_shows_them() {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    let dir = tempfile::tempdir().unwrap();
    let up = sim(&["up", "--nodes", "1"], dir.path());
    let _stop = Stop(dir.path());
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let admin = admin_client(dir.path()).await;
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(admin.clone(), "default");
    let made = serde_json::from_value(serde_json::json!({"metadata": {"name": "audited"}})).unwrap();
    config_maps.create(&Default::default(), &made).await.unwrap();
    config_maps.get("audited").await.unwrap();
    let data = serde_json::json!({"data": {"k": "v"}});
    config_maps.patch("audited", &Default::default(), &kube::api::Patch::Merge(&data)).await.unwrap();
    config_maps.delete("audited", &Default::default()).await.unwrap();
    // A write the viewer may not make is audited too, with its 403.
    let kubeconfig = kube::config::Kubeconfig::read_from(dir.path().join("kubeconfig")).unwrap();
    let options = kube::config::KubeConfigOptions {
        context: Some("lab-runner-sim-viewer".into()),
        ..Default::default()
    };
    let viewer =
        kube::Client::try_from(kube::Config::from_custom_kubeconfig(kubeconfig, &options).await.unwrap())
            .unwrap();
    let namespaces: kube::Api<Namespace> = kube::Api::all(viewer);
    let team = serde_json::from_value(serde_json::json!({"metadata": {"name": "team-a"}})).unwrap();
    assert!(namespaces.create(&Default::default(), &team).await.is_err());

    let lines = audit_lines(dir.path(), 4);
    let seen: Vec<(&str, &str, &str, u64)> = lines
        .iter()
        .map(|e| {
            let name = e["objectRef"]["name"].as_str().unwrap_or_default();
            (
                e["verb"].as_str().unwrap(),
                name,
                e["user"]["username"].as_str().unwrap(),
                e["responseStatus"]["code"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("create", "audited", "lab-runner-admin", 201),
            ("patch", "audited", "lab-runner-admin", 200),
            ("delete", "audited", "lab-runner-admin", 200),
            // Refused before its body is read, as upstream's authorization refuses it: no name.
            ("create", "", "lab-runner-viewer", 403),
        ],
        "writes only, no read: {lines:#?}"
    );
    let first = &lines[0];
    assert_eq!((&first["apiVersion"], &first["kind"]), (&"audit.k8s.io/v1".into(), &"Event".into()));
    assert_eq!((&first["level"], &first["stage"]), (&"Metadata".into(), &"ResponseComplete".into()));
    assert_eq!(first["requestURI"], "/api/v1/namespaces/default/configmaps?");
    assert_eq!(
        first["objectRef"],
        serde_json::json!({"resource": "configmaps", "namespace": "default", "name": "audited", "apiVersion": "v1"})
    );
    assert_eq!(first["sourceIPs"], serde_json::json!(["127.0.0.1"]));
    assert_eq!(first["user"]["groups"], serde_json::json!(["system:masters", "system:authenticated"]));
    assert_eq!(first["responseStatus"], serde_json::json!({"metadata": {}, "code": 201}));
    let ids: std::collections::BTreeSet<&str> =
        lines.iter().map(|e| e["auditID"].as_str().unwrap()).collect();
    assert_eq!(ids.len(), 4, "an id per request");
    for event in &lines {
        let at =
            |field: &str| event[field].as_str().unwrap().parse::<k8s_openapi::jiff::Timestamp>().unwrap();
        assert!(at("stageTimestamp") >= at("requestReceivedTimestamp"), "{event}");
        assert_eq!(event["stageTimestamp"].as_str().unwrap().len(), "2026-12-05T19:00:00.000000Z".len());
    }

    let timeline = sim(&["timeline"], dir.path());
    assert_eq!(timeline.status.code(), Some(0), "{}", stderr(&timeline));
    let text = stdout(&timeline);
    assert!(text.contains(": 4 event(s)"), "{text}");
    assert!(text.contains("wrote: create configmaps default/audited (201)"), "{text}");
    assert!(text.contains("wrote: delete configmaps default/audited (200)"), "{text}");
    assert!(text.contains("wrote: create namespaces (403)"), "{text}");

    // `check` with the kubeconfig `sim up` wrote keeps what it saw in the same timeline.
    let check = lab_runner()
        .args(["check", "stuck-rollout", "--kubeconfig"])
        .arg(dir.path().join("kubeconfig"))
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    assert!(dir.path().join("timeline.db").exists());
    let text = stdout(&sim(&["timeline"], dir.path()));
    assert!(
        text.lines().any(|l| l.contains(" ci-wait ") && l.contains("ERROR: the lab has not been started")),
        "{text}"
    );
    let csv = stdout(&sim(&["timeline", "--format", "csv"], dir.path()));
    assert!(csv.starts_with("at,learner,event,task,status"), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",write,")).count(), 4, "{csv}");
}
