//! The `check` report and the `status` view of every course lab (and every stuck-rollout variant)
//! as a learner reads them, at the start and once the reference solution has run: human and JSON,
//! English and Japanese, through the built binary against a fresh `sim up` and real kubectl.
//!
//! The Japanese ones are also held to the rule of `tests/i18n_flows.rs`: every line Japanese, a
//! command, an identifier or a quotation.
//!
//! What varies from run to run is redacted: pod name suffixes (the only random part of the
//! reports; revisions are template hashes, node names and counters are the lab's). Each report is
//! a snapshot to read as a learner would, not only to compare.

use std::{
    path::{Path, PathBuf},
    process::Output,
};

use lab_runner::lab::loader;

use crate::support::{
    binary::{lab_runner, stderr, stdout},
    kubectl::kubectl_on_path,
    sim::Sim,
};

/// Simulated delays pass this many times faster (as in `demo`).
const SPEED: &str = "10";

/// How long one solution command may run before the test gives up on it.
const COMMAND_TIMEOUT: &str = "240";

/// The point of the lab the reports are taken at.
#[derive(Debug, Clone, Copy)]
enum Phase {
    /// Right after `start`.
    Start,
    /// After every task's reference solution ran.
    Solved,
}

impl Phase {
    fn name(self) -> &'static str {
        match self {
            Phase::Start => "start",
            Phase::Solved => "solved",
        }
    }
}

/// A lab started on its own simulator.
struct Started {
    sim: Sim,
    lab: &'static str,
    /// `lab` or `lab_variant`, the snapshots' prefix.
    name: String,
}

impl Started {
    /// `sim up`, then `start <lab> [--variant v]`; `None` (skip, with the reason printed) when no
    /// kubectl is on the PATH outside CI.
    fn new(lab: &'static str, variant: Option<&str>) -> Option<Started> {
        if !kubectl_on_path() {
            return None;
        }
        let sim = Sim::up(&["--speed", SPEED]);
        let mut start = vec!["start", lab];
        start.extend(variant.iter().flat_map(|v| ["--variant", v]));
        let started = Started { sim, lab, name: variant.map_or(lab.to_string(), |v| format!("{lab}_{v}")) };
        let output = started.lab_runner(&start);
        assert_eq!(output.status.code(), Some(0), "start: {}{}", stdout(&output), stderr(&output));
        Some(started)
    }

    /// The binary with the simulator's kubeconfig.
    fn lab_runner(&self, args: &[&str]) -> Output {
        lab_runner().arg("--kubeconfig").arg(&self.sim.kubeconfig).args(args).output().unwrap()
    }

    /// Snapshots `check` in both languages, human and JSON; at the start also with every hint
    /// tier shown (`--hint 3`), which is what a stuck learner reads. Asserts the exit code: 1 at
    /// the start (checks fail), 0 once solved.
    fn snapshot_reports(&self, phase: Phase, transcript: &str) {
        let expected_code = match phase {
            Phase::Start => 1,
            Phase::Solved => 0,
        };
        for lang in ["en", "ja"] {
            let mut formats = vec![("human", vec!["--format", "human"]), ("json", vec!["--format", "json"])];
            if let Phase::Start = phase {
                formats.push(("hints", vec!["--format", "human", "--hint", "3"]));
            }
            for (format, flags) in formats {
                let mut args = vec!["check", self.lab, "--lang", lang];
                args.extend(flags);
                let output = self.lab_runner(&args);
                let report = stdout(&output);
                assert_eq!(
                    output.status.code(),
                    Some(expected_code),
                    "check {args:?} at {}:\n{report}{}\nsolution transcript:\n{transcript}",
                    phase.name(),
                    stderr(&output)
                );
                if format == "json" {
                    let parsed: serde_json::Value = serde_json::from_str(&report).unwrap();
                    assert_eq!(parsed["passed"], matches!(phase, Phase::Solved), "{report}");
                }
                if lang == "ja" && format != "json" {
                    // Every line Japanese, a command, an identifier or a quotation; every evidence
                    // line Japanese (tests/i18n_flows.rs).
                    crate::i18n_flows::assert_japanese(&format!("check {args:?}"), &report);
                }
                let snapshot = format!("{}_{}_{format}_{lang}", self.name, phase.name());
                insta::assert_snapshot!(snapshot, redacted(&report));
            }
            // What the learner of this lab looks at; it never names the variant.
            let (output, status) = self.status(lang);
            assert_eq!(output.status.code(), Some(0), "status: {status}{}", stderr(&output));
            assert!(!status.contains("variant") && !status.contains("バリアント"), "{status}");
            if lang == "ja" {
                crate::i18n_flows::assert_japanese("status", &status);
            }
            insta::assert_snapshot!(
                format!("{}_{}_status_{lang}", self.name, phase.name()),
                redacted(&status)
            );
        }
    }

    /// `status` in `lang`. A pod whose image cannot be pulled alternates between ErrImagePull (an
    /// attempt just failed) and ImagePullBackOff (waiting for the next one), the same stuck pull:
    /// the view is taken again while it shows the short-lived first state, so the snapshot holds
    /// the state a learner mostly sees (a bounded number of looks, no timing asserted).
    fn status(&self, lang: &str) -> (Output, String) {
        let mut looks = 0;
        loop {
            let output = self.lab_runner(&["status", self.lab, "--lang", lang]);
            let status = stdout(&output);
            looks += 1;
            if !status.contains("ErrImagePull") || looks == 40 {
                return (output, status);
            }
            std::thread::sleep(std::time::Duration::from_millis(250));
        }
    }

    /// Runs every task's reference solution in `needs` order, as `demo` does: `sh -c` with the
    /// simulator's kubeconfig and this binary first on the PATH. Returns the transcript.
    fn solve(&self) -> String {
        let bundle = loader::find(&lab_runner::session::LabSource::BuiltIn, self.lab).unwrap();
        let mut transcript = String::new();
        for task in bundle.lab.tasks_in_needs_order() {
            for command in &task.solution {
                let output = std::process::Command::new("timeout")
                    .args([COMMAND_TIMEOUT, "sh", "-c", command])
                    .env("KUBECONFIG", &self.sim.kubeconfig)
                    .env("PATH", path_with_the_binary())
                    .env("NO_COLOR", "1")
                    .output()
                    .unwrap();
                transcript.push_str(&format!(
                    "-- {} [exit {:?}]\n$ {command}\n{}{}\n",
                    task.id.value,
                    output.status.code(),
                    stdout(&output),
                    stderr(&output)
                ));
                assert_ne!(output.status.code(), Some(124), "a solution command timed out:\n{transcript}");
            }
        }
        transcript
    }
}

/// The PATH with the directory of the built `lab-runner` first (solutions call `lab-runner answer`).
fn path_with_the_binary() -> std::ffi::OsString {
    let binary = PathBuf::from(env!("CARGO_BIN_EXE_lab-runner"));
    let mut dirs = vec![binary.parent().map(Path::to_path_buf).unwrap()];
    dirs.extend(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()));
    std::env::join_paths(dirs).unwrap()
}

/// Pod names end in five random characters (`nvidia-container-toolkit-daemonset-6g9b9`);
/// everything else in a report is determined by the lab and the simulator.
fn redacted(text: &str) -> String {
    let pod_suffix =
        regex::Regex::new(r"\b([a-z0-9]+(?:-[a-z0-9]+)*-)[bcdfghjklmnpqrstvwxz2456789]{5}\b").unwrap();
    pod_suffix.replace_all(text, "${1}[suffix]").into_owned()
}

fn stuck_rollout(variant: &str) {
    let Some(lab) = Started::new("stuck-rollout", Some(variant)) else { return };
    lab.snapshot_reports(Phase::Start, "");
    let transcript = lab.solve();
    lab.snapshot_reports(Phase::Solved, &transcript);
}

#[test]
fn stuck_rollout_image_reports_at_start_and_solved() {
    stuck_rollout("image");
}

#[test]
fn stuck_rollout_resources_reports_at_start_and_solved() {
    stuck_rollout("resources");
}

#[test]
fn stuck_rollout_toleration_reports_at_start_and_solved() {
    stuck_rollout("toleration");
}

/// gpu-sharing at its start and once solved (its solution labels the MIG geometry, waits for the
/// MIG manager, then selects the plugin config).
#[test]
fn gpu_sharing_reports_at_start_and_solved() {
    let Some(lab) = Started::new("gpu-sharing", None) else { return };
    lab.snapshot_reports(Phase::Start, "");
    let transcript = lab.solve();
    lab.snapshot_reports(Phase::Solved, &transcript);
}

#[test]
fn the_redaction_hides_pod_suffixes_only() {
    assert_eq!(
        redacted("node gpu-1: pod nvidia-container-toolkit-daemonset-6g9b9 revision 7bf4ffbdcf (current)"),
        "node gpu-1: pod nvidia-container-toolkit-daemonset-[suffix] revision 7bf4ffbdcf (current)"
    );
    assert_eq!(
        redacted("gpu-operator/nvidia-container-toolkit-daemonset"),
        "gpu-operator/nvidia-container-toolkit-daemonset"
    );
}

impl Started {
    /// Runs the commands of `task`'s reference solution, or of its shortcut `shortcut`, as
    /// [`Started::solve`] does.
    fn run(&self, task: &str, shortcut: Option<&str>) -> String {
        let bundle = loader::find(&lab_runner::session::LabSource::BuiltIn, self.lab).unwrap();
        let task = bundle.lab.task(task).unwrap();
        let commands = match shortcut {
            None => task.solution.clone(),
            Some(id) => task.shortcuts.iter().find(|s| s.id.value == id).unwrap().commands.clone(),
        };
        let mut transcript = String::new();
        for command in commands {
            let output = std::process::Command::new("timeout")
                .args([COMMAND_TIMEOUT, "sh", "-c", &command])
                .env("KUBECONFIG", &self.sim.kubeconfig)
                .env("PATH", path_with_the_binary())
                .output()
                .unwrap();
            transcript.push_str(&format!("$ {command}\n{}{}\n", stdout(&output), stderr(&output)));
            assert_eq!(output.status.code(), Some(0), "{transcript}");
        }
        transcript
    }
}

/// What a learner who took a shortcut reads: relabelling nodes and rolling back leaves
/// one-generation failing with what is observed on the nodes captured at start; a wrong `cause`
/// locks the quiz; in English and Japanese.
#[test]
fn a_shortcut_shows_what_is_observed_in_both_languages() {
    let Some(lab) = Started::new("stuck-rollout", Some("image")) else { return };
    // An answer outside the quiz's domain is refused in one line, in the chosen language.
    for (lang, refusal) in [
        (
            "en",
            "error: \"gpu-9\" is not a node of this cluster (see `kubectl get nodes`); nothing was recorded\n",
        ),
        (
            "ja",
            "エラー: \"gpu-9\" はこのクラスターのノードではありません（`kubectl get nodes` を参照）。回答は記録されていません\n",
        ),
    ] {
        let output = lab.lab_runner(&["--lang", lang, "answer", "stuck-rollout", "affected-node", "gpu-9"]);
        assert_eq!((output.status.code(), stderr(&output).as_str()), (Some(2), refusal));
    }
    let mut transcript = lab.run("affected-node", None);
    transcript += &lab.run("ci-wait", None);
    transcript += &lab.run("cause", Some("guess-each-class"));
    let locked = lab.lab_runner(&["answer", "stuck-rollout", "cause", "image"]);
    assert_eq!(
        (locked.status.code(), stderr(&locked).as_str()),
        (Some(2), "error: cause is locked: all 1 of its attempts are used; nothing was recorded\n")
    );
    transcript += &lab.run("one-generation", Some("relabel-nodes"));
    for (lang, captured) in [
        ("en", "node cpu-1 did not match nvidia.com/gpu.present=true at start: it does not count"),
        ("ja", "ノード cpu-1 は開始時に nvidia.com/gpu.present=true に一致していなかったので数えません"),
    ] {
        let output = lab.lab_runner(&["check", "stuck-rollout", "--lang", lang]);
        let report = stdout(&output);
        assert_eq!(output.status.code(), Some(1), "{report}{}\n{transcript}", stderr(&output));
        assert!(report.contains(captured), "{report}");
        if lang == "ja" {
            crate::i18n_flows::assert_japanese("check stuck-rollout", &report);
        }
        insta::assert_snapshot!(format!("stuck-rollout_image_shortcuts_{lang}"), redacted(&report));
    }
}
