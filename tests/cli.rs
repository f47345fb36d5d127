//! The CLI through the built binary: help, completions, exit codes.

use crate::util::{lab_runner, stderr, stdout};

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
