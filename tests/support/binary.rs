//! The built `lab-runner` binary with a clean environment, and a finished command's output as text.

use assert_cmd::Command;

/// The built `lab-runner` binary with a clean environment for deterministic output.
pub fn lab_runner() -> Command {
    let mut cmd = Command::cargo_bin("lab-runner").expect("lab-runner binary is built");
    cmd.env_remove("KUBECONFIG")
        .env_remove("LAB_RUNNER_LABS")
        .env("LANG", "C.UTF-8")
        .env_remove("LC_ALL")
        .env("NO_COLOR", "1");
    cmd
}

/// Stdout of a finished command as text.
pub fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Stderr of a finished command as text.
pub fn stderr(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
