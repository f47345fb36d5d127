//! `lab-runner class up|status|down|board` through the built binary: a real class of learner
//! simulators on sockets, their isolation, the class report, and the board in headless Chromium.

use std::{
    io::{BufRead, BufReader, Read, Write},
    path::Path,
    process::{Child, Stdio},
    time::{Duration, Instant},
};

use crate::support::{
    binary::{lab_runner, stderr, stdout},
    chromium,
};

fn class(args: &[&str], dir: &Path) -> std::process::Output {
    lab_runner().arg("class").args(args).arg("--state-dir").arg(dir).output().unwrap()
}

/// Stops a test's class even when the test fails half-way.
struct Down<'a>(&'a Path);

impl Drop for Down<'_> {
    fn drop(&mut self) {
        let _ = class(&["down"], self.0);
    }
}

fn kubeconfig(path: &Path) -> kube::config::Kubeconfig {
    kube::config::Kubeconfig::read_from(path).unwrap()
}

fn context_names(config: &kube::config::Kubeconfig) -> Vec<String> {
    config.contexts.iter().map(|c| c.name.clone()).collect()
}

/// Lists namespaces with a learner's own kubeconfig (their token) against `server`, the server
/// certificate not verified (so the token, not the CA, decides); the HTTP status.
async fn status_with(learner_kubeconfig: &Path, server: &str) -> u16 {
    let options = kube::config::KubeConfigOptions::default();
    let mut config =
        kube::Config::from_custom_kubeconfig(kubeconfig(learner_kubeconfig), &options).await.unwrap();
    config.cluster_url = server.parse().unwrap();
    config.accept_invalid_certs = true;
    config.root_cert = None;
    let client = kube::Client::try_from(config).unwrap();
    let namespaces = kube::Api::<k8s_openapi::api::core::v1::Namespace>::all(client);
    match namespaces.list(&Default::default()).await {
        Ok(_) => 200,
        Err(kube::Error::Api(status)) => status.code,
        Err(other) => panic!("{other}"),
    }
}

#[test]
fn class_up_status_check_down() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    let up = class(&["up", "--learners", "3", "--lab", "stuck-rollout", "--seed", "7"], &state);
    let _down = Down(&state);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    assert!(stdout(&up).contains("started stuck-rollout in 3 learner(s)"), "{}", stdout(&up));

    // The instructor's kubeconfig: exactly one context per learner; each learner's: their own.
    let class_config = kubeconfig(&state.join("kubeconfig"));
    assert_eq!(context_names(&class_config), ["learner-01", "learner-02", "learner-03"]);
    for name in ["learner-01", "learner-02", "learner-03"] {
        assert_eq!(context_names(&kubeconfig(&state.join(name).join("kubeconfig"))), [name]);
    }

    // A learner's token reaches their own cluster and no other.
    let server = |n: usize| class_config.clusters[n].cluster.as_ref().unwrap().server.clone().unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let learner_01 = state.join("learner-01").join("kubeconfig");
    assert_eq!(runtime.block_on(status_with(&learner_01, &server(0))), 200);
    assert_eq!(runtime.block_on(status_with(&learner_01, &server(1))), 401);
    assert_eq!(runtime.block_on(status_with(&learner_01, &server(2))), 401);
    let kubeconfig_path = state.join("kubeconfig");

    // One class report over every learner; the seed gave neighbours different variants (which
    // the report names only to an instructor who asks with --reveal).
    let check = lab_runner()
        .args(["check", "stuck-rollout", "--contexts", "all", "--format", "json", "--reveal", "--kubeconfig"])
        .arg(&kubeconfig_path)
        .output()
        .unwrap();
    assert_eq!(check.status.code(), Some(1), "{}", stderr(&check));
    let report: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    let learners = report["learners"].as_array().unwrap();
    let contexts: Vec<&str> = learners.iter().map(|l| l["context"].as_str().unwrap()).collect();
    assert_eq!(contexts, ["learner-01", "learner-02", "learner-03"]);
    let variants: Vec<&str> = learners.iter().map(|l| l["report"]["variant"].as_str().unwrap()).collect();
    assert!(
        variants[0] != variants[1] && variants[1] != variants[2] && variants[0] != variants[2],
        "{variants:?}"
    );
    assert!(learners.iter().all(|l| !l["report"]["tasks"].as_array().unwrap().is_empty()));

    // Who can write what: a learner's credentials cannot write the lab's records nor read the key
    // they are sealed with; they answer through entries of their own, counted once each.
    runtime.block_on(a_learner_cannot_write_the_records(&learner_01));
    let as_learner =
        |args: &[&str]| lab_runner().arg("--kubeconfig").arg(&learner_01).args(args).output().unwrap();
    let first = as_learner(&["answer", "stuck-rollout", "ci-wait", "1"]);
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    assert!(stdout(&first).starts_with("answer for ci-wait recorded (attempt 1 of 1)"), "{}", stdout(&first));
    let second = as_learner(&["answer", "stuck-rollout", "ci-wait", "0"]);
    assert_eq!(second.status.code(), Some(2), "{}", stdout(&second));
    let reveal = as_learner(&["check", "stuck-rollout", "--reveal"]);
    assert_eq!(reveal.status.code(), Some(2), "--reveal is the instructor's: {}", stdout(&reveal));
    let restart = as_learner(&["start", "stuck-rollout", "--variant", "image", "--yes"]);
    assert_eq!(restart.status.code(), Some(2), "start is the instructor's: {}", stdout(&restart));
    // The learner's own check cannot judge a keyed quiz; the instructor's does, with the attempt.
    let own = as_learner(&["check", "stuck-rollout", "--format", "json"]);
    let own: serde_json::Value = serde_json::from_slice(&own.stdout).unwrap();
    let ci_wait = |report: &serde_json::Value| {
        report["tasks"].as_array().unwrap().iter().find(|t| t["id"] == "ci-wait").cloned().unwrap()
    };
    assert_eq!(ci_wait(&own)["status"], "ERROR", "{own}");
    let instructor = lab_runner()
        .args(["check", "stuck-rollout", "--format", "json", "--context", "learner-01", "--kubeconfig"])
        .arg(state.join("kubeconfig"))
        .output()
        .unwrap();
    let instructor: serde_json::Value = serde_json::from_slice(&instructor.stdout).unwrap();
    let graded = ci_wait(&instructor);
    assert!(matches!(graded["status"].as_str(), Some("PASS" | "FAIL")), "{graded}");
    assert!(graded["evidence"].to_string().contains("attempt 1 of 1"), "{graded}");

    // `class report` is the same class report, from the class directory.
    let class_report = class(&["report", "--format", "json"], &state);
    assert_eq!(class_report.status.code(), Some(1), "{}", stderr(&class_report));
    let aggregated: serde_json::Value = serde_json::from_slice(&class_report.stdout).unwrap();
    assert_eq!(aggregated["lab"], "stuck-rollout");
    let contexts: Vec<&str> =
        aggregated["learners"].as_array().unwrap().iter().map(|l| l["context"].as_str().unwrap()).collect();
    assert_eq!(contexts, ["learner-01", "learner-02", "learner-03"]);
    let table = stdout(&class(&["report"], &state));
    assert!(table.starts_with("class report: stuck-rollout — 3 learner(s), 0 passed\nLEARNER "), "{table}");

    let status = class(&["status"], &state);
    assert_eq!(status.status.code(), Some(0), "{}", stderr(&status));
    let text = stdout(&status);
    assert!(text.starts_with("LEARNER"), "{text}");
    assert_eq!(
        text.lines().filter(|l| l.contains(" up ") && l.contains("stuck-rollout")).count(),
        3,
        "{text}"
    );

    let again = class(&["up", "--learners", "3"], &state);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(stderr(&again).lines().count(), 1, "{}", stderr(&again));

    let down = class(&["down"], &state);
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    assert_eq!(
        stdout(&down),
        "class stopped: 3 of 3 learner(s) were running, in 3 process(es); state kept\n"
    );
    let status = stdout(&class(&["status"], &state));
    assert_eq!(status.lines().filter(|l| l.contains(" down ")).count(), 3, "{status}");
    assert!(state.join("learner-02").join("store.db").exists());

    let purge = class(&["down", "--purge"], &state);
    assert_eq!(purge.status.code(), Some(0), "{}", stderr(&purge));
    assert!(!state.exists());
}

/// A learner's kubeconfig against their own cluster: the lab's records (namespace lab-runner)
/// can be read but neither changed nor deleted, their key cannot be read, and the rest of the
/// cluster is theirs.
async fn a_learner_cannot_write_the_records(learner_kubeconfig: &Path) {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
    let options = kube::config::KubeConfigOptions::default();
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig(learner_kubeconfig), &options).await.unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let code = |result: Result<(), kube::Error>| match result {
        Ok(()) => 200,
        Err(kube::Error::Api(status)) => status.code,
        Err(other) => panic!("{other}"),
    };
    let records: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "lab-runner");
    let inventory = "lab-runner-inventory-stuck-rollout";
    assert_eq!(code(records.get(inventory).await.map(|_| ())), 200, "the records can be read");
    let reset = serde_json::json!({"data": {"attempts": "{}"}});
    let patched = records.patch(inventory, &Default::default(), &kube::api::Patch::Merge(&reset)).await;
    assert_eq!(code(patched.map(|_| ())), 403, "the records cannot be changed");
    assert_eq!(code(records.delete(inventory, &Default::default()).await.map(|_| ())), 403);
    let keys: kube::Api<Secret> = kube::Api::namespaced(client.clone(), "lab-runner");
    assert_eq!(code(keys.get("lab-runner-key-stuck-rollout").await.map(|_| ())), 403, "nor the key read");
    let every_secret: kube::Api<Secret> = kube::Api::all(client.clone());
    assert_eq!(code(every_secret.list(&Default::default()).await.map(|_| ())), 403);
    let namespaces: kube::Api<Namespace> = kube::Api::all(client.clone());
    assert_eq!(code(namespaces.delete("lab-runner", &Default::default()).await.map(|_| ())), 403);
    assert_eq!(code(namespaces.list(&Default::default()).await.map(|_| ())), 200, "the rest is theirs");
}

#[test]
fn bad_class_input_is_one_line_and_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    for (args, says) in [
        (vec!["up", "--learners", "0"], "a class has 1 to 100 learners"),
        (vec!["up", "--learners", "101"], "a class has 1 to 100 learners"),
        (vec!["up", "--learners", "2", "--lab", "no-such-lab"], "no-such-lab"),
        (vec!["up", "--learners", "2", "--lab", "stuck-rollout", "--variant", "nope"], "no variant \"nope\""),
        (vec!["up", "--learners", "1", "--listen", &format!("127.0.0.1:{port}")], "is in use"),
        (vec!["up", "--learners", "1", "--listen", "0.0.0.0"], "needs --tls-san NAME"),
        (vec!["status"], "no class in"),
    ] {
        let output = class(&args, &dir.path().join("class"));
        let expected = if args[0] == "status" { 3 } else { 2 };
        assert_eq!(output.status.code(), Some(expected), "{args:?}: {}", stderr(&output));
        let error = stderr(&output);
        assert_eq!(error.lines().count(), 1, "{args:?}: {error}");
        assert!(error.contains(says), "{args:?}: {error}");
    }
    assert!(!dir.path().join("class").join("learner-01").exists(), "nothing started on bad input");
}

/// A learner's report as `check --format json` writes it.
fn learner_report(passed: bool) -> String {
    use lab_runner::report::{Report, TaskResult, TaskStatus};
    let status = if passed { TaskStatus::Pass } else { TaskStatus::Fail };
    let task = TaskResult {
        id: "quotas".into(),
        title: "Team quotas".into(),
        description: None,
        status,
        points: 5,
        awarded: if passed { 5 } else { 0 },
        evidence: vec!["team-a: requests.nvidia.com/gpu 4".into()],
        hints: vec![],
        hints_available: 2,
        solution: None,
    };
    serde_json::to_string(&Report::new("gpu-sharing", "GPU sharing", None, vec![task])).unwrap()
}

#[test]
fn class_report_reads_the_grade_jobs_results_from_the_cluster() {
    use k8s_openapi::api::{batch::v1::Job, core::v1::ConfigMap};
    let sim = crate::support::sim::Sim::up(&[]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = kube::Config::from_custom_kubeconfig(kubeconfig(&sim.kubeconfig), &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        // The grade Job of three learners, suspended (only its completions matter here).
        let job: Job = serde_json::from_value(serde_json::json!({
            "apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "grade", "namespace": "default"},
            "spec": {"completionMode": "Indexed", "completions": 3, "parallelism": 3, "suspend": true,
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "grade", "image": "lab-runner"}]}}}
        }))
        .unwrap();
        kube::Api::<Job>::namespaced(client.clone(), "default")
            .create(&Default::default(), &job)
            .await
            .unwrap();
        // What index 0 and 2 wrote (index 1 has not finished), and another Job's result.
        let config_maps = kube::Api::<ConfigMap>::namespaced(client, "default");
        for (learner, job, passed) in
            [("learner-01", "grade", true), ("learner-03", "grade", false), ("learner-02", "other", true)]
        {
            let result: ConfigMap = serde_json::from_value(serde_json::json!({
                "metadata": {"name": format!("{job}-{learner}"),
                    "labels": {"lab-runner.io/grade": learner, "lab-runner.io/grade-job": job}},
                "data": {"report.json": learner_report(passed)}
            }))
            .unwrap();
            config_maps.create(&Default::default(), &result).await.unwrap();
        }
    });
    let report = |args: &[&str]| {
        lab_runner()
            .args(["class", "report"])
            .args(args)
            .arg("--kubeconfig")
            .arg(&sim.kubeconfig)
            .output()
            .unwrap()
    };
    let output = report(&["--job", "default/grade", "--format", "json"]);
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let class: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(class["lab"], "gpu-sharing");
    let rows: Vec<(&str, &str)> = class["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["context"].as_str().unwrap(), l["status"].as_str().unwrap()))
        .collect();
    assert_eq!(rows, [("learner-01", "PASS"), ("learner-02", "ERROR"), ("learner-03", "FAIL")]);
    assert!(
        class["learners"][1]["error"]
            .as_str()
            .unwrap()
            .starts_with("no result from index 1 of job default/grade"),
        "{class}"
    );
    assert_eq!(class["learners"][0]["report"]["tasks"][0]["id"], "quotas");

    let junit = report(&["--job", "default/grade", "--format", "junit"]);
    assert!(stdout(&junit).contains("learner-03/gpu-sharing"), "{}", stdout(&junit));
    let missing = report(&["--job", "default/nope"]);
    assert_eq!(missing.status.code(), Some(2), "{}", stderr(&missing));
    assert_eq!(stderr(&missing).lines().count(), 1, "{}", stderr(&missing));
    assert!(stderr(&missing).contains("job default/nope not found"), "{}", stderr(&missing));
}

#[test]
fn a_shared_class_on_every_address_hands_out_its_tls_san_and_stops_as_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    let up = class(
        &[
            "up",
            "--learners",
            "3",
            "--processes",
            "shared",
            "--listen",
            "0.0.0.0",
            "--tls-san",
            "class.example",
        ],
        &state,
    );
    let _down = Down(&state);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let server = |config: &kube::config::Kubeconfig| {
        config.clusters[0].cluster.as_ref().unwrap().server.clone().unwrap()
    };
    // The instructor's kubeconfig works on this host; a learner's names the host they reach.
    let instructor = server(&kubeconfig(&state.join("kubeconfig")));
    let learner = server(&kubeconfig(&state.join("learner-01").join("kubeconfig")));
    let port = instructor.strip_prefix("https://127.0.0.1:").expect("the instructor's is 127.0.0.1");
    assert_eq!(learner, format!("https://class.example:{port}"));
    assert!(stdout(&up).contains(&learner), "{}", stdout(&up));

    let down = class(&["down"], &state);
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    assert_eq!(
        stdout(&down),
        "class stopped: 3 of 3 learner(s) were running, in 1 process(es); state kept\n"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("class.json")).unwrap()).unwrap();
    let pid = record["shared_pid"].as_u64().expect("the shared process is recorded") as u32;
    assert!(!lab_runner::sim::lifecycle::process_alive(pid), "the shared process {pid} is gone");
    let status = stdout(&class(&["status"], &state));
    assert_eq!(status.lines().filter(|l| l.contains(" down ")).count(), 3, "{status}");
}

/// A running `class board`, stopped when dropped; its URL read from its first line.
struct Board {
    child: Child,
    url: String,
}

impl Board {
    fn start(state: &Path) -> Board {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lab-runner"))
            .args(["class", "board", "--listen", "127.0.0.1:0", "--retry", "200ms", "--state-dir"])
            .arg(state)
            .env_remove("KUBECONFIG")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let url = first.rsplit(' ').next().expect("the board prints its URL").trim().to_string();
        assert!(url.starts_with("http://127.0.0.1:"), "{first}");
        Board { child, url }
    }

    /// GET `path` (plain HTTP/1.1 on a socket: the board is local and unencrypted).
    fn get(&self, path: &str) -> String {
        let authority = self.url.trim_start_matches("http://").trim_end_matches('/');
        let mut socket = std::net::TcpStream::connect(authority).unwrap();
        write!(socket, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        socket.read_to_string(&mut response).unwrap();
        response
    }
}

impl Drop for Board {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `condition` until it holds or `limit` passes; how long it took.
fn wait_for(limit: Duration, mut condition: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if condition() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn the_board_turns_a_cell_green_in_a_real_browser() {
    if chromium::unavailable().is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    let up = class(&["up", "--learners", "2", "--lab", "stuck-rollout", "--variant", "image"], &state);
    let _down = Down(&state);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));

    let board = Board::start(&state);
    // The JSON endpoint is the class report as `check --contexts all --format json` prints it.
    let report = board.get("/report.json");
    assert!(report.starts_with("HTTP/1.1 200"), "{report}");
    let body: serde_json::Value = serde_json::from_str(report.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert_eq!(body["lab"], "stuck-rollout");
    assert_eq!(body["learners"].as_array().unwrap().len(), 2);

    let mut browser = chromium::Browser::open(&board.url);
    let cell = |learner: &str| {
        format!(
            r#"document.querySelector('td[data-learner="{learner}"][data-task="cause"]')?.dataset.status ?? null"#
        )
    };
    assert!(
        wait_for(Duration::from_secs(20), || browser.eval(&cell("learner-01")) == "FAIL").is_some(),
        "the page shows learner-01's cause as FAIL"
    );
    assert_eq!(browser.eval(&cell("learner-02")), "FAIL");

    // learner-01 answers; the cell turns green without reloading the page.
    let answer = lab_runner()
        .args(["answer", "stuck-rollout", "cause", "image", "--kubeconfig"])
        .arg(state.join("learner-01").join("kubeconfig"))
        .output()
        .unwrap();
    assert_eq!(answer.status.code(), Some(0), "{}", stderr(&answer));
    let latency = wait_for(Duration::from_secs(20), || browser.eval(&cell("learner-01")) == "PASS");
    assert!(latency.is_some(), "learner-01's cause turned PASS on the page");
    eprintln!("board update latency (answer recorded → cell green): {:?}", latency.unwrap());
    assert_eq!(browser.eval(&cell("learner-02")), "FAIL", "learner-02 did not answer");
    let background = browser.eval(
        r#"getComputedStyle(document.querySelector('td[data-learner="learner-01"][data-task="cause"]')).backgroundColor"#,
    );
    assert_eq!(background, "rgb(30, 142, 62)", "a PASS cell is green");

    // Evidence on click.
    browser.eval(r#"document.querySelector('td[data-learner="learner-01"][data-task="cause"]').click()"#);
    let detail = browser.eval("document.getElementById('detail').textContent");
    assert!(detail.as_str().unwrap().starts_with("learner-01 · cause · PASS"), "{detail}");

    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("class-board.png"), browser.screenshot()).unwrap();

    // The same page in Japanese.
    let mut ja = chromium::Browser::open(&format!("{}?lang=ja", board.url));
    assert!(
        wait_for(Duration::from_secs(20), || ja
            .eval("document.querySelector('#board th')?.textContent ?? ''")
            == "受講者")
        .is_some()
    );
    assert_eq!(ja.eval(&cell("learner-01")), "PASS");
    std::fs::write(artifacts.join("class-board-ja.png"), ja.screenshot()).unwrap();
}

#[test]
fn a_board_on_a_taken_port_is_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("class.json"), r#"{"lab": "stuck-rollout", "learners": ["learner-01"]}"#)
        .unwrap();
    std::fs::write(
        state.join("kubeconfig"),
        "apiVersion: v1\nkind: Config\nclusters: []\nusers: []\ncontexts: []\n",
    )
    .unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let output = lab_runner()
        .args(["class", "board", "--listen", &format!("127.0.0.1:{port}"), "--state-dir"])
        .arg(&state)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(stderr(&output).lines().count(), 1, "{}", stderr(&output));
    assert!(stderr(&output).contains(&format!("--listen 127.0.0.1:{port}")), "{}", stderr(&output));
}

#[test]
fn the_kubernetes_base_renders_and_passes_server_side_dry_run() {
    let Some(client) = crate::support::kubectl::clients().into_iter().find(|c| c.version == "1.33") else {
        return;
    };
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy").join("kubernetes");
    let sim = crate::support::sim::Sim::up(&[]);
    let rendered = sim.kubectl(&client, &["kustomize", base.to_str().unwrap()]);
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    let manifest = sim.scratch_dir().join("class.yaml");
    std::fs::write(&manifest, &rendered.stdout).unwrap();
    let kinds: Vec<String> =
        stdout(&rendered).lines().filter_map(|l| l.strip_prefix("kind: ").map(str::to_string)).collect();
    for kind in
        ["Namespace", "StatefulSet", "Service", "Deployment", "Job", "Role", "RoleBinding", "ConfigMap"]
    {
        assert!(kinds.iter().any(|k| k == kind), "{kind} in {kinds:?}");
    }
    // The namespace it declares exists first (as `kubectl apply` of the whole base creates it).
    let namespace = sim.kubectl(&client, &["create", "namespace", "lab-class"]);
    assert!(namespace.status.success(), "{}", stderr(&namespace));
    let dry_run = sim
        .kubectl(&client, &["apply", "--server-side", "--dry-run=server", "-f", manifest.to_str().unwrap()]);
    assert!(dry_run.status.success(), "{}\n{}", stdout(&dry_run), stderr(&dry_run));
    let applied = stdout(&dry_run);
    assert_eq!(applied.lines().filter(|l| l.ends_with("(server dry run)")).count(), kinds.len(), "{applied}");
    for object in ["statefulset.apps/learner", "job.batch/grade", "deployment.apps/board", "service/learner"]
    {
        assert!(applied.contains(object), "{object}: {applied}");
    }
}

#[test]
fn ctrl_c_during_class_up_stops_the_learners_already_started() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    let up = std::process::Command::new(assert_cmd::cargo::cargo_bin("lab-runner"))
        .args(["class", "up", "--learners", "5", "--state-dir"])
        .arg(&state)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _down = Down(&state);
    // Interrupted once the first learner serves, while the next ones start.
    let first = state.join("learner-01").join("sim.json");
    assert!(wait_for(Duration::from_secs(60), || first.exists()).is_some(), "learner-01 started");
    let pid = rustix::process::Pid::from_raw(up.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let output = up.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    let error = stderr(&output);
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(error.starts_with("error: class up interrupted: stopped "), "{error}");
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("class.json")).unwrap()).unwrap();
    for learner in record["learners"].as_array().unwrap() {
        let pid_file = state.join(learner.as_str().unwrap()).join("sim.pid");
        assert!(!pid_file.exists(), "{learner} still has a pid file");
    }
}
