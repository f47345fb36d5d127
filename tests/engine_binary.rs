//! The engine through the built binary against `lab-runner sim up` (its kubeconfig, TLS, tokens
//! and contexts), with real kubectl making the learner's moves: start → check fails → the fix →
//! check passes; `--confirm`, `--watch` (non-TTY: a line per change, exit 0 when all pass, 4 at
//! `--timeout`, the last report on Ctrl-C), JUnit parsed back, and the read-only proof (viewer
//! context, store revision unchanged, only GETs in the simulator's request log).
//!
//! One simulator serves the whole module; kubectl runs five times. Skipped with a printed reason
//! when no kubectl client is installed (under `CI=true` that fails instead).

use std::{
    io::{BufRead, BufReader, Write},
    path::PathBuf,
    process::{Child, Output, Stdio},
    sync::mpsc,
    time::{Duration, Instant},
};

use serde_json::Value;

use crate::support::{
    binary::{lab_runner, stderr, stdout},
    kubectl::{Kubectl, clients},
};

const LAB: &str = "stuck-rollout";
const DS: &str = "daemonset/nvidia-container-toolkit-daemonset";
const VIEWER_CONTEXT: &str = "lab-runner-sim-viewer";
/// The kinds the stuck-rollout lab's tasks read: one LIST each per observation, scoped to what
/// the tasks can match (every node; the toolkit's namespace; its DaemonSet by name).
const KINDS_LISTED: [&str; 4] = [
    "/api/v1/nodes",
    "/api/v1/namespaces/gpu-operator/pods",
    "/apis/apps/v1/namespaces/gpu-operator/daemonsets",
    "/apis/monitoring.coreos.com/v1/namespaces/gpu-operator/prometheusrules",
];

/// A simulator from `sim up` at 10× speed with its request log on, stopped on drop.
struct Sim {
    dir: tempfile::TempDir,
    kubeconfig: PathBuf,
    kubectl: Kubectl,
}

impl Sim {
    fn up(kubectl: Kubectl) -> Sim {
        let dir = tempfile::tempdir().unwrap();
        let output = lab_runner()
            .args(["sim", "up", "--speed", "10", "--state-dir"])
            .arg(dir.path().join("sim"))
            .env(lab_runner::sim::lifecycle::REQUEST_LOG_ENV, "1")
            .output()
            .unwrap();
        assert!(output.status.success(), "sim up failed: {}", stderr(&output));
        let kubeconfig = dir.path().join("sim/kubeconfig");
        Sim { dir, kubeconfig, kubectl }
    }

    /// `lab-runner --kubeconfig <ours> <args>`, run to the end.
    fn run(&self, args: &[&str]) -> Output {
        lab_runner().arg("--kubeconfig").arg(&self.kubeconfig).args(args).output().unwrap()
    }

    /// `lab-runner --kubeconfig <ours> <args>` started with piped output, not waited for.
    fn spawn(&self, args: &[&str]) -> Child {
        std::process::Command::new(assert_cmd::cargo::cargo_bin("lab-runner"))
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .env("LANG", "C.UTF-8")
            .env_remove("LC_ALL")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    /// Real kubectl against the simulator (private HOME and discovery cache), `input` on stdin.
    fn kubectl(&self, args: &[&str], input: Option<&str>) -> String {
        let home = self.dir.path().join("home");
        let mut child = std::process::Command::new(&self.kubectl.path)
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .env_remove("KUBECONFIG")
            .env("HOME", &home)
            .env("KUBECACHEDIR", home.join("cache"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(input.unwrap_or("").as_bytes()).unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "kubectl {args:?} failed: {}{}", stdout(&output), stderr(&output));
        stdout(&output)
    }

    /// The request log lines so far (`request <user> <METHOD> <target> <status>`).
    fn requests(&self) -> Vec<String> {
        let log = std::fs::read_to_string(self.dir.path().join("sim/serve.log")).unwrap_or_default();
        log.lines().filter(|l| l.starts_with("request ")).map(str::to_string).collect()
    }

    /// The store's revision, as `sim status` reports it.
    fn revision(&self) -> u64 {
        let output = lab_runner()
            .args(["sim", "status", "--state-dir"])
            .arg(self.dir.path().join("sim"))
            .output()
            .unwrap();
        assert!(output.status.success(), "{}", stderr(&output));
        stdout(&output)
            .lines()
            .find_map(|l| l.trim().strip_prefix("revision"))
            .and_then(|v| v.trim().parse().ok())
            .expect("sim status shows the revision")
    }

    /// Waits until the revision stays put for a second (controllers idle), and returns it.
    fn quiet_revision(&self) -> u64 {
        let mut last = self.revision();
        for _ in 0..60 {
            std::thread::sleep(Duration::from_secs(1));
            let now = self.revision();
            if now == last {
                return now;
            }
            last = now;
        }
        panic!("the simulator never went quiet (revision still moving at {last})");
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        let _ = lab_runner().args(["sim", "down", "--state-dir"]).arg(self.dir.path().join("sim")).output();
    }
}

/// The requests `run` made, by difference of the log before and after.
fn requests_of(sim: &Sim, run: impl FnOnce() -> Output) -> (Output, Vec<String>) {
    let before = sim.requests().len();
    let output = run();
    // The server logs a request when its response is ready; the client exits right after.
    std::thread::sleep(Duration::from_millis(200));
    (output, sim.requests()[before..].to_vec())
}

/// `(user, method, path)` of a request log line, the query left out.
fn request_parts(line: &str) -> (String, String, String) {
    let fields: Vec<&str> = line.split(' ').collect();
    let path = fields[3].split('?').next().unwrap_or("").to_string();
    (fields[1].to_string(), fields[2].to_string(), path)
}

/// Every request is a GET, and the kinds are listed once each, `times` over.
fn assert_read_only_lists(requests: &[String], times: usize, user: &str) {
    let parts: Vec<_> = requests.iter().map(|r| request_parts(r)).collect();
    assert!(parts.iter().all(|(who, method, _)| method == "GET" && who == user), "{requests:#?}");
    for kind in KINDS_LISTED {
        let lists = parts.iter().filter(|(_, _, path)| path == kind).count();
        assert_eq!(lists, times, "{kind} listed {lists} times, not {times}: {requests:#?}");
    }
    // The DaemonSet every task names is listed by name.
    let by_name = "fieldSelector=metadata.name%3Dnvidia-container-toolkit-daemonset";
    let named = requests.iter().filter(|r| r.contains("/daemonsets?") && r.contains(by_name)).count();
    assert_eq!(named, times, "{requests:#?}");
    // Besides the lists: one GET of the inventory and one of its key per observation, and one of
    // /version to connect.
    let inventory = "/api/v1/namespaces/lab-runner/configmaps/lab-runner-inventory-stuck-rollout";
    assert_eq!(parts.iter().filter(|(_, _, p)| p == inventory).count(), times, "{requests:#?}");
    let key = "/api/v1/namespaces/lab-runner/secrets/lab-runner-key-stuck-rollout";
    assert_eq!(parts.iter().filter(|(_, _, p)| p == key).count(), times, "{requests:#?}");
    assert_eq!(requests.len(), times * (KINDS_LISTED.len() + 2) + 1, "{requests:#?}");
}

fn statuses(json: &str) -> Vec<(String, String)> {
    let report: Value = serde_json::from_str(json).expect("a JSON report");
    report["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap().to_string(), t["status"].as_str().unwrap().to_string()))
        .collect()
}

fn rows(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// `(tests, failures, errors, skipped, [case names])` of a JUnit document, read with quick-xml.
fn junit_counts(xml: &str) -> (usize, usize, usize, usize, Vec<String>) {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let (mut failures, mut errors, mut skipped) = (0, 0, 0);
    let mut names = Vec::new();
    loop {
        match reader.read_event().expect("well-formed JUnit XML") {
            Event::Start(e) | Event::Empty(e) => match e.name().as_ref() {
                b"testcase" => {
                    let name = e.try_get_attribute("name").unwrap().expect("a testcase has a name");
                    names.push(String::from_utf8(name.value.to_vec()).unwrap());
                }
                b"failure" => failures += 1,
                b"error" => errors += 1,
                b"skipped" => skipped += 1,
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
    }
    (names.len(), failures, errors, skipped, names)
}

/// Reads a child's stderr lines on a thread, so the test can wait for one.
fn stderr_lines(child: &mut Child) -> mpsc::Receiver<String> {
    let (sender, receiver) = mpsc::channel();
    let stream = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Collects lines until one contains `wanted` (returning them all), or panics after `limit`.
fn wait_for_line(lines: &mpsc::Receiver<String>, wanted: &str, limit: Duration) -> Vec<String> {
    let deadline = Instant::now() + limit;
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match lines.recv_timeout(left) {
            Ok(line) => {
                let found = line.contains(wanted);
                seen.push(line);
                if found {
                    return seen;
                }
            }
            Err(_) => break,
        }
    }
    panic!("no line with {wanted:?} within {limit:?}; saw {seen:#?}");
}

/// Waits for the child to exit (killing it after `limit`), returning its code and stdout.
fn finish(mut child: Child, limit: Duration) -> (Option<i32>, String) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let mut out = String::new();
            std::io::Read::read_to_string(&mut child.stdout.take().unwrap(), &mut out).unwrap();
            return (status.code(), out);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            panic!("the process did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The lab's reference alert rule: the heredoc of its `alert` task's solution.
fn reference_alert_rule() -> String {
    let bundle = lab_runner::lab::loader::find(&lab_runner::session::LabSource::BuiltIn, LAB).unwrap();
    let solution = &bundle.lab.task("alert").expect("the lab has an alert task").solution[0];
    let body = solution.split_once('\n').expect("a heredoc").1;
    body.rsplit_once("YAML").expect("the heredoc ends with YAML").0.to_string()
}

#[test]
fn stuck_rollout_start_check_fix_and_watch_through_the_binary() {
    let Some(kubectl) = clients().into_iter().find(|c| c.version == "1.33").or_else(|| clients().pop())
    else {
        return;
    };
    let sim = Sim::up(kubectl);

    let started = sim.run(&["start", LAB, "--variant", "image"]);
    assert!(started.status.success(), "start failed: {}{}", stdout(&started), stderr(&started));

    // At the start: nothing answered, the rollout stalled; one LIST per kind, GETs only.
    let (at_start, requests) = requests_of(&sim, || sim.run(&["check", LAB]));
    assert_eq!(at_start.status.code(), Some(1), "{}", stderr(&at_start));
    insta::assert_snapshot!("check_at_start", stdout(&at_start));
    assert_read_only_lists(&requests, 1, "lab-runner-admin");
    let junit = sim.run(&["check", LAB, "--format", "junit"]);
    assert_eq!(junit.status.code(), Some(1));
    let (tests, failures, errors, skipped, names) = junit_counts(&stdout(&junit));
    assert_eq!((tests, failures, errors, skipped), (5, 3, 0, 2));
    assert_eq!(names, ["affected-node", "cause", "ci-wait", "one-generation", "alert"]);

    // The learner's findings: the node whose new pod cannot pull (one kubectl call), the cause,
    // what `rollout status --timeout` exits with; and the reference alert rule.
    let pods = sim.kubectl(
        &["-n", "gpu-operator", "get", "pods", "-l", "app=nvidia-container-toolkit-daemonset", "-o", "json"],
        None,
    );
    let pods: Value = serde_json::from_str(&pods).unwrap();
    let stuck: Vec<&str> = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["status"]["phase"] != "Running")
        .filter_map(|p| p["spec"]["nodeName"].as_str())
        .collect();
    assert_eq!(stuck.len(), 1, "the rollout stalls at exactly one node: {stuck:?}");
    for (task, value) in [("affected-node", stuck[0]), ("cause", "image"), ("ci-wait", "1")] {
        let answered = sim.run(&["answer", LAB, task, value]);
        assert!(answered.status.success(), "{}", stderr(&answered));
    }
    sim.kubectl(&["apply", "-f", "-"], Some(&reference_alert_rule()));

    // --confirm: observed twice, failing both times, with one LIST per kind per observation.
    let (confirmed, requests) =
        requests_of(&sim, || sim.run(&["check", LAB, "--confirm", "1s", "--format", "json"]));
    assert_eq!(confirmed.status.code(), Some(1), "{}", stderr(&confirmed));
    assert_eq!(
        statuses(&stdout(&confirmed)),
        rows(&[
            ("affected-node", "PASS"),
            ("cause", "PASS"),
            ("ci-wait", "PASS"),
            ("one-generation", "FAIL"),
            ("alert", "BLOCKED")
        ])
    );
    let report: Value = serde_json::from_str(&stdout(&confirmed)).unwrap();
    let evidence = &report["tasks"][3]["evidence"];
    assert_eq!(evidence[0], "observation 1 of 2 (at start): FAIL", "{evidence}");
    assert_eq!(evidence[1], "observation 2 of 2 (after 1s): FAIL", "{evidence}");
    assert_eq!(report["tasks"][0]["evidence"][0], "held at both observations, 1s apart");
    assert_read_only_lists(&requests, 2, "lab-runner-admin");

    // --watch --timeout on a task that keeps failing: exit 4 with the last report.
    let (code, out) =
        finish(sim.spawn(&["check", LAB, "--watch", "--timeout", "2s"]), Duration::from_secs(60));
    assert_eq!(code, Some(4));
    assert!(out.contains("FAIL    one-generation"), "{out}");

    // --watch ended by Ctrl-C (SIGINT): the last report and its exit code (1).
    let mut watch = sim.spawn(&["check", LAB, "--watch"]);
    let lines = stderr_lines(&mut watch);
    wait_for_line(&lines, "score 6/14", Duration::from_secs(60));
    let pid = rustix::process::Pid::from_raw(watch.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let (code, out) = finish(watch, Duration::from_secs(30));
    assert_eq!(code, Some(1));
    assert!(out.contains("score 6/14"), "{out}");
    wait_for_line(&lines, "the watch stopped", Duration::from_secs(5));

    // --watch while the learner fixes it with real kubectl: the task flips and the watch exits 0.
    let mut watch = sim.spawn(&["check", LAB, "--watch", "--timeout", "5m"]);
    let lines = stderr_lines(&mut watch);
    let first = wait_for_line(&lines, "score 6/14", Duration::from_secs(60));
    assert!(
        first.iter().any(|l| l.contains("] one-generation  FAIL · daemonset gpu-operator/")),
        "{first:#?}"
    );
    sim.kubectl(&["-n", "gpu-operator", "rollout", "undo", DS], None);
    let flipped = wait_for_line(&lines, "every task passes", Duration::from_secs(240));
    let (code, out) = finish(watch, Duration::from_secs(30));
    assert_eq!(code, Some(0), "{flipped:#?}\n{out}");
    assert!(flipped.iter().any(|l| l.ends_with("] one-generation  FAIL → PASS")), "{flipped:#?}");
    assert!(flipped.iter().any(|l| l.ends_with("] alert           BLOCKED → PASS")), "{flipped:#?}");
    assert!(out.ends_with("score 14/14\n"), "{out}");

    // Solved, through the read-only viewer context (the lab declares no dryRun probes): every
    // task passes, the store revision does not move, and the check sent GETs only.
    let before = sim.quiet_revision();
    let (viewed, requests) =
        requests_of(&sim, || sim.run(&["check", LAB, "--context", VIEWER_CONTEXT, "--format", "json"]));
    assert_eq!(viewed.status.code(), Some(0), "{}{}", stdout(&viewed), stderr(&viewed));
    assert_eq!(
        statuses(&stdout(&viewed)),
        rows(&[
            ("affected-node", "PASS"),
            ("cause", "PASS"),
            ("ci-wait", "PASS"),
            ("one-generation", "PASS"),
            ("alert", "PASS")
        ])
    );
    assert_read_only_lists(&requests, 1, "lab-runner-viewer");
    assert_eq!(sim.revision(), before, "check changed the store");

    let junit = sim.run(&["check", LAB, "--format", "junit"]);
    assert_eq!(junit.status.code(), Some(0));
    let (tests, failures, errors, skipped, _) = junit_counts(&stdout(&junit));
    assert_eq!((tests, failures, errors, skipped), (5, 0, 0, 0));
    let solved = sim.run(&["check", LAB, "--confirm", "1s"]);
    assert_eq!(solved.status.code(), Some(0), "{}", stdout(&solved));
    let pod_suffix = regex::Regex::new(r"nvidia-container-toolkit-daemonset-[a-z0-9]{5}\b").unwrap();
    let text = stdout(&solved);
    let text = pod_suffix.replace_all(&text, "nvidia-container-toolkit-daemonset-[pod]");
    let text = text.replace(&format!("answer \"{}\"", stuck[0]), "answer \"[affected node]\"");
    insta::assert_snapshot!("check_solved_confirmed", text);
    assert_eq!(sim.revision(), before, "check changed the store");
}
