//! `selftest` for every course lab and variant, its offences on fixture labs, and `reset --to-stage`, all through the built binary.

use std::{path::Path, time::Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::support::binary::{lab_runner, stderr, stdout};

/// Bundles made for these tests (no GPU node needed): see tests/fixtures/selftest/README.md.
const FIXTURES: &str = "tests/fixtures/selftest";

/// Runs `lab-runner [--labs DIR] selftest ARGS…`, printing its wall time (reported, never
/// asserted) and its progress lines.
fn selftest(labs: Option<&str>, args: &[&str]) -> std::process::Output {
    let mut command = lab_runner();
    if let Some(dir) = labs {
        command.arg("--labs").arg(dir);
    }
    let began = Instant::now();
    let output = command.arg("selftest").args(args).output().unwrap();
    eprintln!("{}", stderr(&output));
    println!("wall time of `lab-runner selftest {}`: {:.1} s", args.join(" "), began.elapsed().as_secs_f64());
    output
}

/// Asserts a passing selftest and snapshots its transcript.
fn passes(name: &str, labs: Option<&str>, args: &[&str]) {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = selftest(labs, args);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    // A pod's generated name depends on the timing of the run (which the brownfield fixture's
    // extra objects vary): the evidence names it, the snapshot does not.
    insta::with_settings!({filters => vec![(r"daemonset-[a-z0-9]{5}\b", "daemonset-[suffix]")]}, {
        insta::assert_snapshot!(name, out);
    });
}

/// The brownfield fixture (a cluster that already runs the GPU Operator's namespace, the
/// Prometheus Operator's CRD with the platform's rules, another team): one variant of each lab
/// runs its selftest there, the others on the plain simulator (CI time).
const BROWNFIELD: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/manifests/clusters/brownfield");

#[test]
fn stuck_rollout_image_passes_its_selftest_on_brownfield() {
    passes("stuck_rollout_image", None, &["stuck-rollout", "--variant", "image", "--fixture", BROWNFIELD]);
}

#[test]
fn gpu_sharing_passes_its_selftest_on_brownfield() {
    passes("gpu_sharing_brownfield", None, &["gpu-sharing", "--fixture", BROWNFIELD]);
}

#[test]
fn stuck_rollout_resources_passes_its_selftest() {
    passes("stuck_rollout_resources", None, &["stuck-rollout", "--variant", "resources"]);
}

#[test]
fn stuck_rollout_toleration_passes_its_selftest() {
    passes("stuck_rollout_toleration", None, &["stuck-rollout", "--variant", "toleration"]);
}

#[test]
fn gpu_sharing_passes_its_selftest() {
    passes("gpu_sharing", None, &["gpu-sharing"]);
}

#[test]
fn a_correct_fixture_lab_passes_and_reset_brings_back_its_start() {
    passes("config_drift", Some(FIXTURES), &["config-drift"]);
}

#[test]
fn a_task_passing_before_its_solution_is_named() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = selftest(Some(FIXTURES), &["early-pass"]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(out.contains("task already-done passes before its solution"), "{out}");
    insta::assert_snapshot!("early_pass", out);
}

#[test]
fn a_failing_solution_command_is_quoted_with_its_stderr() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = selftest(Some(FIXTURES), &["bad-solution"]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    insta::assert_snapshot!("bad_solution", out);
}

#[test]
fn a_shortcut_that_passes_is_named_with_its_task() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = selftest(Some(FIXTURES), &["passing-shortcut"]);
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{out}");
    assert!(out.contains("task fix-mode passes after shortcut recreate-settings"), "{out}");
    insta::assert_snapshot!("passing_shortcut", out);
}

#[test]
fn an_unknown_variant_is_bad_input() {
    let output = lab_runner().args(["selftest", "stuck-rollout", "--variant", "nope"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: lab stuck-rollout has no variant \"nope\" (variants: image, resources, toleration, all)\n"
    );
}

#[test]
fn reset_to_an_unknown_stage_lists_the_stages_before_contacting_a_cluster() {
    let output = lab_runner()
        .args(["--labs", FIXTURES, "--kubeconfig", "/nonexistent/kubeconfig"])
        .args(["reset", "config-drift", "--to-stage", "nope", "--yes"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
    assert_eq!(
        stderr(&output),
        "error: lab config-drift has no stage \"nope\" (stages, in order: namespace, settings, extra)\n"
    );
}

fn sim(args: &[&str], dir: &Path) -> std::process::Output {
    lab_runner().arg("sim").args(args).arg("--state-dir").arg(dir).output().unwrap()
}

/// Stops the test's simulator even when the test fails half-way.
struct Stop<'a>(&'a Path);

impl Drop for Stop<'_> {
    fn drop(&mut self) {
        let _ = sim(&["down"], self.0);
    }
}

#[tokio::test]
async fn reset_to_stage_reapplies_the_stages_up_to_it() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("sim");
    let up = sim(&["up", "--nodes", "1"], &state);
    assert!(up.status.success(), "{}", stderr(&up));
    let _stop = Stop(&state);
    let kubeconfig = state.join("kubeconfig");
    let run = |args: &[&str]| {
        lab_runner()
            .arg("--labs")
            .arg(FIXTURES)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .output()
            .unwrap()
    };
    let started = run(&["start", "config-drift"]);
    assert!(started.status.success(), "{}", stderr(&started));

    // The learner's work: the setting changed, a marker made.
    let config = kube::Config::from_custom_kubeconfig(
        kube::config::Kubeconfig::read_from(&kubeconfig).unwrap(),
        &Default::default(),
    )
    .await
    .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "config-drift");
    let fixed = json!({"data": {"mode": "fixed"}});
    config_maps.patch("settings", &PatchParams::default(), &Patch::Merge(&fixed)).await.unwrap();
    let marker: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "marker"}, "data": {"done": "yes"}})).unwrap();
    config_maps.create(&PostParams::default(), &marker).await.unwrap();

    let plan = run(&["reset", "config-drift", "--to-stage", "settings", "--dry-run"]);
    assert_eq!(plan.status.code(), Some(0), "{}", stderr(&plan));
    insta::assert_snapshot!("reset_to_stage_plan", stdout(&plan));
    assert_eq!(
        config_maps.get("settings").await.unwrap().data.unwrap()["mode"],
        "fixed",
        "--dry-run changes nothing"
    );

    let reset = run(&["reset", "config-drift", "--to-stage", "settings", "--yes"]);
    assert_eq!(reset.status.code(), Some(0), "{}", stderr(&reset));
    assert_eq!(
        config_maps.get("settings").await.unwrap().data.unwrap()["mode"],
        "broken",
        "stage settings again"
    );
    assert!(config_maps.get_opt("marker").await.unwrap().is_none(), "the learner's object is gone");
    assert!(config_maps.get_opt("extra").await.unwrap().is_none(), "the stage after settings is not applied");
    let inventory = lab_runner::engine::inventory::load(&client, "config-drift").await.unwrap().unwrap();
    assert_eq!(inventory.stages, ["namespace", "settings"]);
}

#[test]
fn a_named_cluster_is_used_instead_of_a_fresh_simulator() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("sim");
    let up = sim(&["up", "--nodes", "1"], &state);
    assert!(up.status.success(), "{}", stderr(&up));
    let _stop = Stop(&state);
    let kubeconfig = state.join("kubeconfig");
    let kubeconfig = kubeconfig.to_str().unwrap();
    // --context: the solutions' kubectl reads a private kubeconfig whose current context is it.
    let output = selftest(
        Some(FIXTURES),
        &["config-drift", "--kubeconfig", kubeconfig, "--context", "lab-runner-sim"],
    );
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}");
    assert!(!stderr(&output).contains("simulator at"), "no simulator of its own was started");
    assert!(out.ends_with("selftest config-drift: passed\n"), "{out}");
    // What the selftest left on the named cluster: the lab as `start` leaves it, every stage.
    let listed = lab_runner()
        .args(["--labs", FIXTURES, "--kubeconfig", kubeconfig, "reset", "config-drift", "--dry-run"])
        .output()
        .unwrap();
    assert_eq!(
        stdout(&listed),
        "reset config-drift would:\n  delete ConfigMap config-drift/extra (created by the lab)\n  \
         delete ConfigMap config-drift/settings (created by the lab)\n  delete Namespace config-drift (created by the lab)\n  \
         apply stage namespace again\n  apply stage settings again\n  apply stage extra again\n"
    );
}

#[test]
fn a_speed_factor_must_be_above_zero() {
    let output = lab_runner().args(["selftest", "stuck-rollout", "--speed", "0"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: --speed 0: the speed factor must be a number above 0\n");
}

/// The selftest's own simulator does not outlive an interrupted selftest.
#[test]
fn ctrl_c_stops_the_selftests_simulator() {
    use std::io::BufRead;
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let binary = assert_cmd::cargo::cargo_bin("lab-runner");
    let mut child = std::process::Command::new(binary)
        .args(["selftest", "stuck-rollout", "--variant", "image"])
        .env_remove("KUBECONFIG")
        .env_remove("LAB_RUNNER_LABS")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let state = std::env::temp_dir().join(format!("lab-runner-selftest-{}", child.id()));
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    // The ci-wait solution waits 20 s on the stalled rollout: a moment to interrupt.
    let reached = lines.by_ref().map_while(Result::ok).any(|line| line.ends_with("solution ci-wait"));
    assert!(reached, "the selftest reached its ci-wait step");
    let server: u32 = std::fs::read_to_string(state.join("sim.pid")).unwrap().trim().parse().unwrap();
    let pid = rustix::process::Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "{rest:?}");
    assert!(rest.iter().any(|l| l == "selftest interrupted: its simulator was stopped"), "{rest:?}");
    // Gone, or a zombie waiting for a reaper (a container's init may never reap it).
    let stat = std::fs::read_to_string(format!("/proc/{server}/stat")).unwrap_or_default();
    let state_letter = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next()).unwrap_or_default();
    assert!(matches!(state_letter, None | Some('Z')), "the simulator's server is gone: {stat}");
    assert!(!state.exists(), "its state directory is removed");
}

/// docs/lab-format.md's walk-through, "Writing a lab": its `guide:` blocks, written to their
/// files in order, are a lab that lints clean; with the typo the guide shows, lint reports it as
/// the guide says; and the lab's selftest passes with the transcript the guide prints.
#[test]
fn the_lab_format_guide_builds_a_lab_that_lints_clean_and_selftests_green() {
    use crate::support::docs::{marked_blocks, transcripts};
    let doc = std::fs::read_to_string("docs/lab-format.md").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let labs = dir.path().join("labs-dev");
    let mut files: Vec<String> = Vec::new();
    for marked in marked_blocks(&doc).into_iter().filter(|m| m.directive == "guide") {
        let path = labs.join(&marked.argument);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        text.push_str(&marked.block);
        std::fs::write(&path, text).unwrap();
        files.push(marked.argument);
    }
    assert!(files.iter().any(|f| f == "quota-rollout/lab.yaml"), "{files:?}");

    let lint =
        |dir: &Path| lab_runner().current_dir(dir).args(["lint", "labs-dev/quota-rollout"]).output().unwrap();
    let lint_transcripts = transcripts(&doc, "lab-runner lint labs-dev/quota-rollout");
    assert_eq!(lint_transcripts.len(), 2, "the guide shows lint clean, then lint of the typo");
    let clean = lint(dir.path());
    assert_eq!(clean.status.code(), Some(0), "{}", stderr(&clean));
    assert_eq!(stderr(&clean) + &stdout(&clean), lint_transcripts[0]);

    // The typo the guide shows: lint reports it, where it is written, as the guide prints it.
    let typo = tempfile::tempdir().unwrap();
    let copy = typo.path().join("labs-dev/quota-rollout");
    for file in &files {
        let target = typo.path().join("labs-dev").join(file);
        std::fs::create_dir_all(target.parent().unwrap()).unwrap();
        std::fs::copy(labs.join(file), target).unwrap();
    }
    let lab_yaml = std::fs::read_to_string(copy.join("lab.yaml")).unwrap();
    let line = "          expected: {spec: {replicas: 3}}\n";
    assert!(lab_yaml.contains(line), "the guide's task matches spec.replicas");
    let with_typo = lab_yaml.replacen(
        line,
        "          expected: {spec: {replicas: 3}, status: {unavailableReplica: null}}\n",
        1,
    );
    std::fs::write(copy.join("lab.yaml"), with_typo).unwrap();
    let caught = lint(typo.path());
    assert_eq!(caught.status.code(), Some(2), "{}", stderr(&caught));
    assert_eq!(stderr(&caught) + &stdout(&caught), lint_transcripts[1]);

    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = selftest(Some(labs.to_str().unwrap()), &["quota-rollout"]);
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let printed = transcripts(&doc, "lab-runner selftest quota-rollout");
    assert_eq!(printed, [stdout(&output)], "the guide's selftest transcript");
}
