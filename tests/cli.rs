//! The CLI through the built binary: help, completions, exit codes.

use crate::support::binary::{lab_runner, stderr, stdout};

#[test]
fn help_lists_every_command() {
    let output = lab_runner().arg("--help").env("COLUMNS", "100").output().unwrap();
    assert!(output.status.success());
    insta::assert_snapshot!(stdout(&output));
}

#[test]
fn completions_print_a_bash_script() {
    let output = lab_runner().args(["completions", "bash"]).output().unwrap();
    assert!(output.status.success());
    let script = stdout(&output);
    assert!(script.contains("complete -F _lab__runner"), "{script}");
    assert!(script.contains("selftest"));
}

#[test]
fn usage_errors_exit_2() {
    let output = lab_runner().arg("no-such-command").output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("unrecognized subcommand"));
}

#[test]
fn missing_labs_dir_is_bad_input() {
    let output = lab_runner().args(["--labs", "/nonexistent/labs", "labs", "list"]).output().unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(stderr(&output), "error: --labs /nonexistent/labs: not a directory\n");
}

/// The README's first command, end to end through the binary: a fresh simulator, `start`, the
/// reference solution with real kubectl, `check` — on the variant whose column to read differs
/// (DESIRED drops; the restored template differs from the broken one only in its tolerations).
#[test]
fn demo_runs_the_stuck_rollout_lab_to_a_full_score() {
    if !crate::support::kubectl::kubectl_on_path() {
        return;
    }
    let output = lab_runner().args(["demo", "stuck-rollout", "--variant", "toleration"]).output().unwrap();
    let out = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{out}\n{}", stderr(&output));
    assert!(out.contains("started stuck-rollout (variant toleration)"), "{out}");
    assert!(out.contains("score 14/14"), "{out}");
}
