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
    assert_eq!(stdout(&up).matches("  started  stuck-rollout started\n").count(), 3, "{}", stdout(&up));
    assert!(stdout(&up).contains("3 learner(s), all ready"), "{}", stdout(&up));

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
    // Its one attempt is used: the evidence says the quiz takes no more answers.
    assert!(
        graded["evidence"].to_string().contains("one answer is allowed: no more answers are taken"),
        "{graded}"
    );

    // The learner's hints are recorded before they are shown, as entries of their own they can
    // neither change nor delete, and the board puts them on the learner's timeline.
    let hinted = as_learner(&["check", "stuck-rollout", "--hint", "2", "--format", "json"]);
    assert_eq!(hinted.status.code(), Some(1), "{}", stderr(&hinted));
    let hinted: serde_json::Value = serde_json::from_slice(&hinted.stdout).unwrap();
    let shown =
        hinted["tasks"].as_array().unwrap().iter().filter(|t| !t["hints"].as_array().unwrap().is_empty());
    assert!(shown.count() > 0, "{hinted}");
    runtime.block_on(a_learner_cannot_take_back_a_hint(&learner_01));
    let board = Board::start(&state, &[]);
    let hints = || timeline(&state, "learner-01", &[]);
    assert!(wait_for(Duration::from_secs(20), || hints().contains("hint 2 shown")).is_some(), "{}", hints());
    drop(board);
    // The learner's writes are on it too, from their simulator's audit log: the answer entry
    // they made, and the refused change of the records (the instructor's `class start` is not
    // the learner's).
    let mine = hints();
    assert!(mine.contains("wrote: create configmaps lab-runner/lab-runner-answer-stuck-rollout-"), "{mine}");
    assert!(
        mine.contains("wrote: patch configmaps lab-runner/lab-runner-inventory-stuck-rollout (403)"),
        "{mine}"
    );
    assert!(!mine.contains("lab-runner-key-stuck-rollout"), "no instructor write: {mine}");

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

    // Up again: nothing to start, nothing applied again.
    let again = class(&["up", "--learners", "3"], &state);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again).matches("up (already running)  stuck-rollout already started").count(), 3);

    let down = class(&["down"], &state);
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    assert_eq!(
        stdout(&down),
        "class stopped: 3 of 3 learner(s) were running, in 3 process(es); state kept\n"
    );
    let status = stdout(&class(&["status"], &state));
    assert_eq!(status.lines().filter(|l| l.contains(" down ")).count(), 3, "{status}");
    assert!(state.join("learner-02").join("sim").join("store.db").exists());

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

/// A learner's hint entries in their own cluster: there, immutable, neither deleted nor changed
/// with the learner's token.
async fn a_learner_cannot_take_back_a_hint(learner_kubeconfig: &Path) {
    use k8s_openapi::api::core::v1::ConfigMap;
    let options = kube::config::KubeConfigOptions::default();
    let config =
        kube::Config::from_custom_kubeconfig(kubeconfig(learner_kubeconfig), &options).await.unwrap();
    let records: kube::Api<ConfigMap> =
        kube::Api::namespaced(kube::Client::try_from(config).unwrap(), "lab-runner");
    let listed =
        records.list(&kube::api::ListParams::default().labels("lab-runner.io/hint-for")).await.unwrap();
    let entry = listed.items.first().expect("a hint entry");
    assert_eq!(entry.immutable, Some(true));
    let name = entry.metadata.name.clone().unwrap();
    let refused =
        |result: Result<(), kube::Error>| matches!(result, Err(kube::Error::Api(s)) if s.code == 403);
    assert!(refused(records.delete(&name, &Default::default()).await.map(|_| ())), "not deleted");
    let lowered = serde_json::json!({"data": {"level": "1"}});
    let patched = records.patch(&name, &Default::default(), &kube::api::Patch::Merge(&lowered)).await;
    assert!(refused(patched.map(|_| ())), "not changed");
}

/// `learner` answers stuck-rollout's `cause` quiz (rightly, for the `image` variant) with the
/// kubeconfig it was handed.
fn answer_the_cause(state: &Path, learner: &str) {
    let answer = lab_runner()
        .args(["answer", "stuck-rollout", "cause", "image", "--kubeconfig"])
        .arg(state.join(learner).join("kubeconfig"))
        .output()
        .unwrap();
    assert_eq!(answer.status.code(), Some(0), "{}", stderr(&answer));
}

/// `learner`'s timeline, from `class report --learner`.
fn timeline(state: &Path, learner: &str, extra: &[&str]) -> String {
    let output = class(&[&["report", "--learner", learner][..], extra].concat(), state);
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    String::from_utf8(output.stdout).unwrap()
}

/// Every learner's score and task verdicts, from `class report --format json`.
fn progress(state: &Path) -> Vec<(String, u64, Vec<String>)> {
    let report = class(&["report", "--format", "json"], state);
    assert_eq!(report.status.code(), Some(1), "{}", stderr(&report));
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    report["learners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|learner| {
            let tasks = learner["report"]["tasks"].as_array().expect("graded");
            let verdicts = tasks
                .iter()
                .map(|t| format!("{} {}", t["id"].as_str().unwrap(), t["status"].as_str().unwrap()));
            (
                learner["context"].as_str().unwrap().to_string(),
                learner["report"]["score"].as_u64().unwrap(),
                verdicts.collect(),
            )
        })
        .collect()
}

/// The Nodes of the cluster `kubeconfig` reaches, with the learner's own token.
async fn nodes(kubeconfig: &Path) -> kube::Api<k8s_openapi::api::core::v1::Node> {
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    kube::Api::all(kube::Client::try_from(config).unwrap())
}

/// The names of the nodes of the cluster `kubeconfig` reaches.
fn node_names(kubeconfig: &Path) -> Vec<String> {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let listed = nodes(kubeconfig).await.list(&Default::default()).await.unwrap();
        listed.items.into_iter().filter_map(|node| node.metadata.name).collect()
    })
}

/// Deletes the last node of the cluster `kubeconfig` reaches, as a learner may; its name.
fn delete_a_node(kubeconfig: &Path) -> String {
    let name = node_names(kubeconfig).pop().expect("the cluster has nodes");
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        nodes(kubeconfig).await.delete(&name, &Default::default()).await.unwrap();
    });
    name
}

/// What each learner was handed: its own kubeconfig, byte for byte.
fn handed_out(state: &Path, learners: &[&str]) -> Vec<String> {
    learners.iter().map(|n| std::fs::read_to_string(state.join(n).join("kubeconfig")).unwrap()).collect()
}

#[test]
fn re_up_a_killed_learner_and_its_restart_keep_every_learners_work_and_address() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    let up_args = ["up", "--learners", "2", "--lab", "stuck-rollout", "--variant", "image"];
    let up = class(&up_args, &state);
    let _down = Down(&state);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let learners = ["learner-01", "learner-02"];
    answer_the_cause(&state, "learner-01");
    // learner-02 deletes a node of their cluster: the lab must not be applied again over it.
    let deleted = delete_a_node(&state.join("learner-02").join("kubeconfig"));
    let before = progress(&state);
    assert_eq!(before[0].1, 2, "learner-01 earned the cause's points: {before:?}");
    assert!(before[0].2.contains(&"cause PASS".to_string()), "{before:?}");
    let kubeconfigs = handed_out(&state, &learners);

    // The day-one command again after `class down`: the same clusters on the same addresses,
    // the lab not applied again.
    let down = class(&["down"], &state);
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    let again = class(&up_args, &state);
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(
        stdout(&again).matches("  started  stuck-rollout already started").count(),
        2,
        "{}",
        stdout(&again)
    );
    assert_eq!(progress(&state), before);
    assert_eq!(handed_out(&state, &learners), kubeconfigs);
    assert!(!node_names(&state.join("learner-02").join("kubeconfig")).contains(&deleted));

    // learner-02's simulator is killed: the class says so, and a restart brings it back as it was.
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("class.json")).unwrap()).unwrap();
    assert_eq!(record["learners"][1]["labs"][0]["start"]["state"], "started", "{record}");
    let pid: i32 = std::fs::read_to_string(state.join("learner-02").join("sim").join("sim.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(pid).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    assert!(
        wait_for(Duration::from_secs(10), || !lab_runner::sim::lifecycle::process_alive(pid as u32))
            .is_some()
    );
    let status = stdout(&class(&["status"], &state));
    assert!(status.lines().any(|l| l.starts_with("learner-02") && l.contains(" gone ")), "{status}");
    let restart = class(&["restart", "learner-02"], &state);
    assert_eq!(restart.status.code(), Some(0), "{}", stderr(&restart));
    assert!(stdout(&restart).starts_with("learner-02  https://127.0.0.1:"), "{}", stdout(&restart));
    assert_eq!(progress(&state), before);
    assert_eq!(handed_out(&state, &learners), kubeconfigs);

    // While a command changes the class, another is refused and told who holds it.
    let held = lab_runner::class::record::lock(&state, "class up").unwrap();
    let refused = class(&["up"], &state);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    let error = stderr(&refused);
    assert_eq!(error.lines().count(), 1, "{error}");
    assert!(error.contains(&format!("in use by `class up` (pid {}", std::process::id())), "{error}");
    drop(held);

    // `class reset` puts learner-01 back to the start: the answer is gone, the variant kept.
    let reset = class(&["reset", "learner-01"], &state);
    assert_eq!(reset.status.code(), Some(0), "{}", stderr(&reset));
    let after = progress(&state);
    assert_eq!(after[0].1, 0, "{after:?}");
    assert_eq!(after[1], before[1], "learner-02 untouched");
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
        (vec!["up", "--lab", "stuck-rollout"], "give --learners N"),
        (vec!["status"], "no class in"),
        (vec!["restart", "learner-01"], "no class in"),
        (vec!["start", "stuck-rollout"], "no class in"),
    ] {
        let output = class(&args, &dir.path().join("class"));
        let expected = if ["status", "restart", "start"].contains(&args[0]) { 3 } else { 2 };
        assert_eq!(output.status.code(), Some(expected), "{args:?}: {}", stderr(&output));
        let error = stderr(&output);
        assert_eq!(error.lines().count(), 1, "{args:?}: {error}");
        assert!(error.contains(says), "{args:?}: {error}");
    }
    assert!(!dir.path().join("class").exists(), "nothing made on bad input");
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
fn a_shared_class_on_every_address_starts_its_lab_hands_out_its_tls_san_and_stops_as_one_process() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    // The lab is started through this host's own address: the name learners use need not
    // resolve here.
    let up = class(
        &[
            "up",
            "--learners",
            "3",
            "--lab",
            "stuck-rollout",
            "--processes",
            "shared",
            "--listen",
            "0.0.0.0",
            "--tls-san",
            "class.example.invalid",
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
    assert_eq!(learner, format!("https://class.example.invalid:{port}"));
    assert_eq!(stdout(&up).matches("stuck-rollout started").count(), 3, "{}", stdout(&up));
    assert!(stdout(&up).contains(&learner), "{}", stdout(&up));

    let down = class(&["down"], &state);
    assert_eq!(down.status.code(), Some(0), "{}", stderr(&down));
    assert_eq!(
        stdout(&down),
        "class stopped: 3 of 3 learner(s) were running, in 1 process(es); state kept\n"
    );
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(state.join("class.json")).unwrap()).unwrap();
    let pid = record["sharedPid"].as_u64().expect("the shared process is recorded") as u32;
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
    fn start(state: &Path, args: &[&str]) -> Board {
        let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("lab-runner"))
            .args(["class", "board", "--listen", "127.0.0.1:0", "--retry", "200ms", "--state-dir"])
            .arg(state)
            .args(args)
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

    fn authority(&self) -> String {
        let rest = self.url.trim_start_matches("http://");
        rest.split_once('/').map_or(rest, |(authority, _)| authority).to_string()
    }

    /// GET `path` (plain HTTP/1.1 on a socket: the board is local and unencrypted): the status
    /// line and the body.
    fn get(&self, path: &str) -> (String, String) {
        let authority = self.authority();
        let mut socket = std::net::TcpStream::connect(&authority).unwrap();
        write!(socket, "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        socket.read_to_string(&mut response).unwrap();
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        (head.lines().next().unwrap_or_default().to_string(), body.to_string())
    }

    /// GET a JSON document.
    fn json(&self, path: &str) -> serde_json::Value {
        let (status, body) = self.get(path);
        assert!(status.starts_with("HTTP/1.1 200"), "{path}: {status}\n{body}");
        serde_json::from_str(&body).unwrap()
    }

    /// The first `board` event of `/events` (in the board's language unless `query` says).
    fn first_event(&self, query: &str) -> serde_json::Value {
        let authority = self.authority();
        let mut socket = std::net::TcpStream::connect(&authority).unwrap();
        socket.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        write!(socket, "GET /events{query} HTTP/1.1\r\nHost: {authority}\r\n\r\n").unwrap();
        let mut received = Vec::new();
        let mut buffer = [0u8; 65536];
        loop {
            let read = socket.read(&mut buffer).unwrap();
            assert!(read > 0, "the event stream ended: {}", String::from_utf8_lossy(&received));
            received.extend_from_slice(&buffer[..read]);
            let text = String::from_utf8_lossy(&received);
            if let Some(at) = text.find("data: ")
                && let Some(line) = text[at + 6..].split_once('\n')
            {
                return serde_json::from_str(line.0).unwrap();
            }
        }
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

/// The evidence of `task` for `learner` in a class report.
fn evidence(report: &serde_json::Value, learner: usize, task: &str) -> Vec<String> {
    let tasks = report["learners"][learner]["report"]["tasks"].as_array().expect("graded");
    let task = tasks.iter().find(|t| t["id"] == task).expect("the task");
    task["evidence"].as_array().unwrap().iter().map(|e| e.as_str().unwrap().to_string()).collect()
}

/// Whether a class report quotes a quiz answer anywhere (the value learners would copy).
fn quotes_an_answer(report: &serde_json::Value) -> bool {
    let text = report.to_string();
    text.contains(r#"answer \""#) || text.contains(r#"回答 \""#)
}

/// The GPU node whose toolkit pod is not Ready in the cluster of `kubeconfig` (what the
/// affected-node quiz asks).
fn affected_node(kubeconfig: &Path) -> String {
    tokio::runtime::Runtime::new().unwrap().block_on(async {
        let config = kube::Config::from_custom_kubeconfig(
            kube::config::Kubeconfig::read_from(kubeconfig).unwrap(),
            &Default::default(),
        )
        .await
        .unwrap();
        let pods = kube::Api::<k8s_openapi::api::core::v1::Pod>::namespaced(
            kube::Client::try_from(config).unwrap(),
            "gpu-operator",
        );
        let listed = pods.list(&Default::default()).await.unwrap();
        let not_ready = listed.items.iter().find(|pod| {
            let statuses = pod.status.as_ref().and_then(|s| s.container_statuses.as_ref());
            statuses.is_some_and(|statuses| statuses.iter().any(|c| !c.ready))
        });
        not_ready.and_then(|pod| pod.spec.as_ref()?.node_name.clone()).expect("a toolkit pod is not Ready")
    })
}

/// The pid of learner `name`'s simulator.
fn learner_pid(state: &Path, name: &str) -> i32 {
    std::fs::read_to_string(state.join(name).join("sim").join("sim.pid")).unwrap().trim().parse().unwrap()
}

#[test]
fn the_board_turns_a_cell_green_in_a_real_browser_and_gives_no_answer_away() {
    if chromium::unavailable().is_some() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("class");
    let up = class(&["up", "--learners", "2", "--lab", "stuck-rollout", "--variant", "image"], &state);
    let _down = Down(&state);
    assert_eq!(up.status.code(), Some(0), "{}", stderr(&up));
    let lab =
        lab_runner::lab::loader::find(&lab_runner::session::LabSource::BuiltIn, "stuck-rollout").unwrap();
    let title = |id: &str, lang| {
        lab.lab.tasks.iter().find(|t| t.id.value == id).unwrap().title.get(lang).trim().to_string()
    };

    let board = Board::start(&state, &[]);
    // The JSON endpoint is the class report as `check --contexts all --format json` prints it.
    let body = board.json("/report.json");
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
    // The columns are the tasks' titles.
    let header = browser.eval(r#"document.querySelector('th[data-task="cause"]').firstChild.textContent"#);
    assert_eq!(header, title("cause", lab_runner::session::Lang::En).as_str());

    // learner-01 answers; the cell turns green without reloading the page.
    answer_the_cause(&state, "learner-01");
    let latency = wait_for(Duration::from_secs(20), || browser.eval(&cell("learner-01")) == "PASS");
    assert!(latency.is_some(), "learner-01's cause turned PASS on the page");
    eprintln!("board update latency (answer recorded → cell green): {:?}", latency.unwrap());
    assert_eq!(browser.eval(&cell("learner-02")), "FAIL", "learner-02 did not answer");
    let background = browser.eval(
        r#"getComputedStyle(document.querySelector('td[data-learner="learner-01"][data-task="cause"]')).backgroundColor"#,
    );
    assert_eq!(background, "rgb(30, 142, 62)", "a PASS cell is green");

    // Evidence on click: answered and right, not the answer.
    browser.eval(r#"document.querySelector('td[data-learner="learner-01"][data-task="cause"]').click()"#);
    let detail = browser.eval("document.getElementById('detail').textContent");
    let detail = detail.as_str().unwrap();
    let heading = format!("learner-01 · {} · PASS", title("cause", lab_runner::session::Lang::En));
    assert!(detail.starts_with(&heading), "{detail}");
    assert!(detail.contains("answered: right") && !detail.contains("image"), "{detail}");

    // Neither the report, nor the snapshot, nor the event stream carries the value, in either
    // language.
    for query in ["", "?lang=ja"] {
        let report = board.json(&format!("/report.json{query}"));
        assert!(!quotes_an_answer(&report), "{report}");
        assert!(evidence(&report, 0, "cause").iter().all(|line| !line.contains("image")), "{report}");
        assert!(!quotes_an_answer(&board.json(&format!("/board.json{query}"))));
        let event = board.first_event(query);
        assert!(!quotes_an_answer(&event["report"]), "{event}");
    }
    assert_eq!(evidence(&board.json("/report.json"), 0, "cause")[0], "answered: right");
    assert_eq!(evidence(&board.json("/report.json?lang=ja"), 0, "cause")[0], "回答済み：正解");

    // learner-01 names the affected node and the CI wait's code: the rollout task that needs them
    // is graded now, and its evidence, which names every node, does not name that one.
    let node = affected_node(&state.join("learner-01").join("kubeconfig"));
    for (quiz, value) in [("affected-node", node.as_str()), ("ci-wait", "1")] {
        let answer = lab_runner()
            .args(["answer", "stuck-rollout", quiz, value, "--kubeconfig"])
            .arg(state.join("learner-01").join("kubeconfig"))
            .output()
            .unwrap();
        assert_eq!(answer.status.code(), Some(0), "{}", stderr(&answer));
    }
    let graded = || {
        let report = board.json("/report.json");
        let tasks = report["learners"][0]["report"]["tasks"].as_array().cloned().unwrap_or_default();
        tasks.iter().find(|t| t["id"] == "one-generation").map(|t| t["status"].clone())
    };
    assert!(
        wait_for(Duration::from_secs(20), || graded() == Some("FAIL".into())).is_some(),
        "one-generation graded: {:?}",
        graded()
    );
    let rollout = evidence(&board.json("/report.json"), 0, "one-generation").join("\n");
    assert!(rollout.contains("node [answer]:") && !rollout.contains(&format!("{node}:")), "{rollout}");

    // learner-02 asks for a hint: `check --hint` keeps the level in its cluster, the board puts
    // it on learner-02's timeline. learner-01's timeline has its start and its answers, their
    // values concealed.
    let hint = lab_runner()
        .args(["check", "stuck-rollout", "--hint", "1", "--kubeconfig"])
        .arg(state.join("learner-02").join("kubeconfig"))
        .output()
        .unwrap();
    assert_eq!(hint.status.code(), Some(1), "{}", stderr(&hint));
    assert!(
        wait_for(Duration::from_secs(20), || timeline(&state, "learner-02", &[]).contains("hint 1 shown"))
            .is_some(),
        "{}",
        timeline(&state, "learner-02", &[])
    );
    let mine = timeline(&state, "learner-01", &[]);
    assert!(mine.contains("lab started") && mine.contains("answered [answer] (attempt 1): right"), "{mine}");
    assert!(!mine.contains("\"image\""), "no value without --reveal: {mine}");
    // On the page: where the class is stuck, a chart per task drawn in the page (one bar per
    // learner), and learner-01's timeline on a click of its name, its answer's value concealed.
    let bars = r#"document.querySelectorAll('#stuck svg[data-task="cause"] rect').length"#;
    assert!(
        wait_for(Duration::from_secs(20), || browser.eval(bars) == 2).is_some(),
        "a bar per learner in the cause chart: {}",
        browser.eval("document.getElementById('stuck').outerHTML")
    );
    browser.eval(r#"document.querySelector('td.learner[data-learner="learner-01"]').click()"#);
    let shown = "document.getElementById('timeline')?.textContent ?? ''";
    assert!(
        wait_for(Duration::from_secs(10), || browser
            .eval(shown)
            .as_str()
            .unwrap_or("")
            .contains("answered [answer]"))
        .is_some(),
        "learner-01's timeline on click: {}",
        browser.eval(shown)
    );
    assert!(!browser.eval(shown).as_str().unwrap().contains("\"image\""));

    // learner-02's simulator is killed: the page says why that learner cannot be graded.
    let changed_at = board.json("/board.json")["progress"][0]["verdictsChangedAt"].clone();
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(learner_pid(&state, "learner-02")).unwrap(),
        rustix::process::Signal::KILL,
    )
    .unwrap();
    let down = r#"document.querySelector('td.down[data-learner="learner-02"]')?.textContent ?? ''"#;
    assert!(
        wait_for(Duration::from_secs(30), || browser.eval(down).as_str().unwrap_or("").contains("is gone"))
            .is_some(),
        "learner-02's row says its simulator is gone: {}",
        browser.eval(down)
    );

    let artifacts = Path::new(env!("CARGO_MANIFEST_DIR")).join("target").join("test-artifacts");
    std::fs::create_dir_all(&artifacts).unwrap();
    std::fs::write(artifacts.join("class-board.png"), browser.screenshot()).unwrap();

    // The same page in Japanese: titles, evidence and the reason in Japanese.
    let mut ja = chromium::Browser::open(&format!("{}?lang=ja", board.url));
    assert!(
        wait_for(Duration::from_secs(20), || ja
            .eval("document.querySelector('#board th')?.textContent ?? ''")
            == "受講者")
        .is_some()
    );
    assert_eq!(ja.eval(&cell("learner-01")), "PASS");
    let header = ja.eval(r#"document.querySelector('th[data-task="cause"]').firstChild.textContent"#);
    assert_eq!(header, title("cause", lab_runner::session::Lang::Ja).as_str());
    assert!(ja.eval(down).as_str().unwrap().contains("終了しています"), "{}", ja.eval(down));
    ja.eval(r#"document.querySelector('td[data-learner="learner-01"][data-task="cause"]').click()"#);
    let detail = ja.eval("document.getElementById('detail').textContent");
    assert!(detail.as_str().unwrap().contains("回答済み：正解"), "{detail}");
    let stuck = "document.querySelector('#stuck h2')?.textContent ?? ''";
    assert!(wait_for(Duration::from_secs(10), || ja.eval(stuck) == "クラスがつまずいている所").is_some());
    ja.eval(r#"document.querySelector('td.learner[data-learner="learner-01"]').click()"#);
    let shown = "document.getElementById('timeline')?.textContent ?? ''";
    assert!(
        wait_for(Duration::from_secs(10), || ja
            .eval(shown)
            .as_str()
            .unwrap_or("")
            .contains("[解答] と解答しました"))
        .is_some(),
        "{}",
        ja.eval(shown)
    );
    std::fs::write(artifacts.join("class-board-ja.png"), ja.screenshot()).unwrap();

    // A board started again keeps each learner's clock: learner-01's verdicts last changed when
    // it answered, not when this board started.
    let recorded = timeline(&state, "learner-01", &["--format", "csv"]).lines().count();
    drop(board);
    let board = Board::start(&state, &[]);
    assert_eq!(board.json("/board.json")["progress"][0]["verdictsChangedAt"], changed_at);
    // ... and records nothing twice in the timeline, which the instructor reads revealed.
    assert_eq!(timeline(&state, "learner-01", &["--format", "csv"]).lines().count(), recorded);
    assert!(timeline(&state, "learner-01", &["--reveal"]).contains("answered \"image\""));
    let report = class(&["report"], &state);
    let report = String::from_utf8_lossy(&report.stdout);
    assert!(report.contains("where the class is stuck: stuck-rollout — 2 learner(s)"), "{report}");

    // The instructor sees the value only when asking for it.
    let revealed = Board::start(&state, &["--reveal"]);
    assert!(quotes_an_answer(&revealed.json("/report.json")));

    // A token, printed in the URL, is asked of every request.
    let guarded = Board::start(&state, &["--token", "generate"]);
    let (_, query) = guarded.url.split_once("/?").expect("the URL carries the token");
    assert!(guarded.get("/report.json").0.starts_with("HTTP/1.1 401"));
    assert!(guarded.get(&format!("/report.json?{query}")).0.starts_with("HTTP/1.1 200"));
}

/// Every character of the board page outside ASCII has a glyph in a font installed here (the
/// image's fonts: DejaVu, Noto CJK), so nothing renders as a box.
#[test]
fn the_board_page_uses_only_glyphs_the_installed_fonts_have() {
    let Ok(probe) = std::process::Command::new("fc-list").arg("--version").output() else {
        let reason = "no fc-list (fontconfig) to ask which glyphs the fonts have";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
        eprintln!("skipped: {reason}");
        return;
    };
    assert!(probe.status.success());
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/class/board/page.html"))
            .unwrap();
    let mut missing = Vec::new();
    let mut characters: Vec<char> = page.chars().filter(|c| !c.is_ascii()).collect();
    characters.sort_unstable();
    characters.dedup();
    for c in characters {
        let fonts =
            std::process::Command::new("fc-list").arg(format!(":charset={:x}", c as u32)).output().unwrap();
        if stdout(&fonts).trim().is_empty() {
            missing.push(format!("{c} (U+{:04X})", c as u32));
        }
    }
    assert!(missing.is_empty(), "no installed font has: {}", missing.join(", "));
}

#[test]
fn a_board_on_a_taken_port_or_open_to_others_without_a_token_is_bad_input() {
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

    // Other hosts could reach it: refused without a token.
    let open = lab_runner()
        .args(["class", "board", "--listen", "0.0.0.0:0", "--state-dir"])
        .arg(&state)
        .env_remove("LAB_RUNNER_BOARD_TOKEN")
        .output()
        .unwrap();
    assert_eq!(open.status.code(), Some(2), "{}", stderr(&open));
    assert_eq!(stderr(&open).lines().count(), 1, "{}", stderr(&open));
    assert!(stderr(&open).contains("needs --token"), "{}", stderr(&open));
}

/// The value at `path` (a kubectl jsonpath) of `object` in namespace lab-class.
fn jsonpath(
    sim: &crate::support::sim::Sim,
    client: &crate::support::kubectl::Kubectl,
    object: &str,
    path: &str,
) -> String {
    let output = sim.kubectl(client, &["-n", "lab-class", "get", object, "-o", &format!("jsonpath={path}")]);
    assert!(output.status.success(), "{object} {path}: {}", stderr(&output));
    stdout(&output)
}

/// Renders the kustomization in `dir` with `client`.
fn kustomize(
    sim: &crate::support::sim::Sim,
    client: &crate::support::kubectl::Kubectl,
    dir: &Path,
) -> String {
    let rendered = sim.kubectl(client, &["kustomize", dir.to_str().unwrap()]);
    assert!(rendered.status.success(), "{}", stderr(&rendered));
    stdout(&rendered)
}

/// deploy/kubernetes as an instructor runs it: rendered (the class's size set in one place, in
/// the base and in an overlay), applied to the simulator, a grading run made from the CronJob as
/// `kubectl create job --from` makes it, each index's script run as its pod would run it (the
/// simulator runs no containers), and the run's results read back by `class report --job`, also
/// once the Job is gone.
#[test]
fn the_kubernetes_base_applies_and_a_grading_run_reports_the_class() {
    let Some(client) = crate::support::kubectl::clients().into_iter().find(|c| c.version == "1.33") else {
        return;
    };
    let busybox = Path::new("/bin/busybox");
    if !busybox.is_file() {
        let reason = "no /bin/busybox: the image's shell runs the grading script";
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{reason}");
        eprintln!("skipped: {reason}");
        return;
    }
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy").join("kubernetes");
    let sim = crate::support::sim::Sim::up(&[]);

    // The size is LEARNERS, nowhere else: in the base, and in an overlay that merges its own.
    let rendered = kustomize(&sim, &client, &base);
    let counts = |text: &str, key: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(key))
            .map(|v| v.trim().trim_matches('"').to_string())
            .collect()
    };
    assert_eq!(counts(&rendered, "LEARNERS:"), ["3"]);
    assert_eq!(counts(&rendered, "completions:"), ["3"]);
    assert_eq!(counts(&rendered, "parallelism:"), ["3"]);
    assert!(counts(&rendered, "replicas:").contains(&"3".to_string()), "{rendered}");
    let overlay = sim.scratch_dir().join("overlay");
    std::fs::create_dir_all(&overlay).unwrap();
    // Kustomize takes relative paths only: up to the root, then down to the base.
    let up = "../".repeat(overlay.components().count() - 1);
    let relative = format!("{up}{}", base.display().to_string().trim_start_matches('/'));
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!(
            "resources: [{relative}]\ncomponents: [{relative}/class-size]\nconfigMapGenerator:\n  - name: class-settings\n    behavior: merge\n    literals: [LEARNERS=5]\n"
        ),
    )
    .unwrap();
    let resized = kustomize(&sim, &client, &overlay);
    assert_eq!(counts(&resized, "completions:"), ["5"]);
    assert_eq!(counts(&resized, "parallelism:"), ["5"]);
    assert!(counts(&resized, "replicas:").contains(&"5".to_string()), "{resized}");
    // Every script stops at the first failure, in a pipe too.
    let scripts = rendered.matches("- |").count();
    assert_eq!(rendered.matches("set -euo pipefail").count(), scripts, "{rendered}");

    // Applied as `kubectl apply -k` would: every object, grading suspended until a run is made.
    let manifest = sim.scratch_dir().join("class.yaml");
    std::fs::write(&manifest, &rendered).unwrap();
    let applied = sim.kubectl(&client, &["apply", "--server-side", "-f", manifest.to_str().unwrap()]);
    assert!(applied.status.success(), "{}\n{}", stdout(&applied), stderr(&applied));
    for object in
        ["statefulset.apps/learner", "cronjob.batch/grade", "deployment.apps/board", "service/learner"]
    {
        assert!(stdout(&applied).contains(object), "{object}: {}", stdout(&applied));
    }
    assert_eq!(jsonpath(&sim, &client, "statefulset/learner", "{.spec.replicas}"), "3");
    // The learners are probed on the health paths their simulator serves (without a token, as
    // a kubelet asks; tests/sim_hostile.rs): this simulator answers them.
    let probe = |kind: &str| {
        let path = format!("{{.spec.template.spec.containers[?(@.name==\"sim\")].{kind}.httpGet.path}}");
        jsonpath(&sim, &client, "statefulset/learner", &path)
    };
    for (kind, path) in [("readinessProbe", "/readyz"), ("livenessProbe", "/livez")] {
        assert_eq!(probe(kind), path, "{kind}");
        let answered = sim.kubectl(&client, &["get", "--raw", path]);
        assert_eq!(stdout(&answered), "ok", "{path}: {}", stderr(&answered));
    }
    assert_eq!(jsonpath(&sim, &client, "cronjob/grade", "{.spec.suspend}"), "true");
    assert_eq!(jsonpath(&sim, &client, "jobs", "{.items}"), "[]", "nothing graded at apply time");

    // Two learners published their kubeconfigs (learner-03 has not yet): here, the simulator's own.
    let config = std::fs::read_to_string(&sim.kubeconfig).unwrap();
    for learner in ["learner-01", "learner-02"] {
        let file = sim.scratch_dir().join(learner);
        std::fs::write(&file, &config).unwrap();
        let secret = sim.kubectl(
            &client,
            &[
                "-n",
                "lab-class",
                "create",
                "secret",
                "generic",
                &format!("{learner}-kubeconfig"),
                &format!("--from-file=kubeconfig={}", file.display()),
            ],
        );
        assert!(secret.status.success(), "{}", stderr(&secret));
    }

    // A grading run, named by the instructor, made from the CronJob.
    let run =
        sim.kubectl(&client, &["-n", "lab-class", "create", "job", "grade-run1", "--from=cronjob/grade"]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert_eq!(jsonpath(&sim, &client, "job/grade-run1", "{.spec.completions}"), "3");
    let indexes = || {
        jsonpath(
            &sim,
            &client,
            "pods",
            r#"{range .items[*]}{.metadata.labels.batch\.kubernetes\.io/job-name}/{.metadata.annotations.batch\.kubernetes\.io/job-completion-index} {end}"#,
        )
    };
    assert!(
        wait_for(Duration::from_secs(30), || indexes()
            .split_whitespace()
            .filter(|p| p.starts_with("grade-run1/"))
            .count()
            == 3)
        .is_some(),
        "the Job controller made one pod per index: {}",
        indexes()
    );

    // What each index's container runs, run as it would run: the image's shell, kubectl and
    // lab-runner on the PATH, the Job's environment, the pod's namespace.
    let script = jsonpath(
        &sim,
        &client,
        "cronjob/grade",
        "{.spec.jobTemplate.spec.template.spec.containers[0].command[2]}",
    );
    let settings = jsonpath(
        &sim,
        &client,
        "cronjob/grade",
        "{.spec.jobTemplate.spec.template.spec.containers[0].envFrom[0].configMapRef.name}",
    );
    let lab = jsonpath(&sim, &client, &format!("configmap/{settings}"), "{.data.LAB}");
    let bin = sim.scratch_dir().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(&client.path, bin.join("kubectl")).unwrap();
    std::os::unix::fs::symlink(assert_cmd::cargo::cargo_bin("lab-runner"), bin.join("lab-runner")).unwrap();
    let in_namespace = sim.scratch_dir().join("pod-kubeconfig");
    std::fs::copy(&sim.kubeconfig, &in_namespace).unwrap();
    let namespaced = std::process::Command::new(&client.path)
        .args(["config", "set-context", "--current", "--namespace=lab-class", "--kubeconfig"])
        .arg(&in_namespace)
        .output()
        .unwrap();
    assert!(namespaced.status.success(), "{}", stderr(&namespaced));
    let mut codes = Vec::new();
    for index in 0..3 {
        let pod = std::process::Command::new(busybox)
            .args(["sh", "-c", &script])
            .env("PATH", format!("{}:/bin:/usr/bin", bin.display()))
            .env("KUBECONFIG", &in_namespace)
            .env("HOME", sim.scratch_dir())
            .env("TMPDIR", sim.scratch_dir())
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("JOB_NAME", "grade-run1")
            .env("LAB", &lab)
            .env("LEARNERS", "3")
            .env("SEED", "1")
            .current_dir(sim.scratch_dir())
            .output()
            .unwrap();
        codes.push(pod.status.code());
    }
    // learner-03 has no kubeconfig yet: its index fails (pipefail: the broken pipe is not hidden).
    assert_eq!(codes[..2], [Some(0), Some(0)], "indexes 0 and 1 graded");
    assert_ne!(codes[2], Some(0), "index 2 failed");

    let report = |job: &str| {
        let output = lab_runner()
            .args([
                "class",
                "report",
                "--job",
                &format!("lab-class/{job}"),
                "--format",
                "json",
                "--kubeconfig",
            ])
            .arg(&sim.kubeconfig)
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
        let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let rows: Vec<(String, String)> = report["learners"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| (l["context"].as_str().unwrap().to_string(), l["status"].as_str().unwrap().to_string()))
            .collect();
        (report["lab"].as_str().unwrap().to_string(), rows)
    };
    let expected = vec![
        ("learner-01".to_string(), "FAIL".to_string()),
        ("learner-02".to_string(), "FAIL".to_string()),
        ("learner-03".to_string(), "ERROR".to_string()),
    ];
    assert_eq!(report("grade-run1"), (lab.clone(), expected.clone()));
    // The results are the run's own: another run has none of them; and they outlive the Job.
    let other =
        sim.kubectl(&client, &["-n", "lab-class", "create", "job", "grade-run2", "--from=cronjob/grade"]);
    assert!(other.status.success(), "{}", stderr(&other));
    let (_, rows) = report("grade-run2");
    assert!(rows.iter().all(|(_, status)| status == "ERROR"), "{rows:?}");
    let deleted = sim.kubectl(&client, &["-n", "lab-class", "delete", "job", "grade-run1"]);
    assert!(deleted.status.success(), "{}", stderr(&deleted));
    assert_eq!(report("grade-run1"), (lab, expected));

    // A settings change applied again (5 learners, from the overlay) updates the objects in
    // place: no Job's immutable template stands in the way, and the next run has 5 indexes.
    let resized_manifest = sim.scratch_dir().join("class-5.yaml");
    std::fs::write(&resized_manifest, &resized).unwrap();
    let reapplied =
        sim.kubectl(&client, &["apply", "--server-side", "-f", resized_manifest.to_str().unwrap()]);
    assert!(reapplied.status.success(), "{}\n{}", stdout(&reapplied), stderr(&reapplied));
    assert_eq!(jsonpath(&sim, &client, "statefulset/learner", "{.spec.replicas}"), "5");
    assert_eq!(jsonpath(&sim, &client, "cronjob/grade", "{.spec.jobTemplate.spec.completions}"), "5");
    let run3 =
        sim.kubectl(&client, &["-n", "lab-class", "create", "job", "grade-run3", "--from=cronjob/grade"]);
    assert!(run3.status.success(), "{}", stderr(&run3));
    assert_eq!(jsonpath(&sim, &client, "job/grade-run3", "{.spec.completions}"), "5");
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
    let first = state.join("learner-01").join("sim").join("sim.json");
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
    let learners = record["learners"].as_array().unwrap();
    assert_eq!(learners.len(), 5, "every learner recorded before any started: {record}");
    for learner in learners {
        let pid_file = state.join(learner["name"].as_str().unwrap()).join("sim").join("sim.pid");
        assert!(!pid_file.exists(), "{learner} still has a pid file");
    }
}
