//! The documented process exit codes of `lab-runner` (DESIGN §6), in one place.
//!
//! Every command maps its outcome to exactly one of these. Scripts and CI jobs may rely on them.

use std::process::ExitCode;

/// Everything passed, or the command did what it was asked.
pub const OK: u8 = 0;
/// `check` (or `selftest`) ran and at least one task did not pass.
pub const CHECKS_FAILED: u8 = 1;
/// Bad input: CLI usage, a malformed or invalid lab bundle, a capability that has not landed.
pub const BAD_INPUT: u8 = 2;
/// The cluster could not be reached, or answered with an API error.
pub const CLUSTER_ERROR: u8 = 3;
/// A wait ran out of time.
pub const TIMED_OUT: u8 = 4;

/// All codes with a one-line meaning, as printed in `--help` and the README.
pub const TABLE: [(u8, &str); 5] = [
    (OK, "all passed / done"),
    (CHECKS_FAILED, "checks failed"),
    (BAD_INPUT, "bad input (CLI usage, lab bundle, not yet available)"),
    (CLUSTER_ERROR, "cluster unreachable or API error"),
    (TIMED_OUT, "timed out waiting"),
];

/// The exit codes as `lab-runner --help` ends with them (a test keeps it equal to [`TABLE`]).
pub const HELP: &str = "Exit codes:
  0  all passed / done
  1  checks failed
  2  bad input (CLI usage, lab bundle, not yet available)
  3  cluster unreachable or API error
  4  timed out waiting";

/// Converts one of the constants above into a process exit code.
pub fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_code_of_the_table() {
        let listed: String = TABLE.iter().map(|(code, meaning)| format!("\n  {code}  {meaning}")).collect();
        assert_eq!(HELP, format!("Exit codes:{listed}"));
    }
}
