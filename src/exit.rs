//! The documented process exit codes of `lab-runner`, and the one mapping of every error onto them.
//!
//! Every command maps its outcome to exactly one of these; scripts and CI jobs may rely on them.
//! Which failure exits with which code is decided here and nowhere else: the modules' error enums
//! (the engine's, the simulator's lifecycle, the class's) say what went wrong, and
//! [`HasExitCode`] says, for each of their variants, what the process returns. A new variant
//! does not compile until it has its row here.

use std::process::ExitCode;

use crate::{
    class, commands,
    engine::{self, cluster},
    sim::lifecycle,
};

/// Everything passed, or the command did what it was asked.
pub const OK: u8 = 0;
/// `check` (or `selftest`) ran and at least one task did not pass.
pub const CHECKS_FAILED: u8 = 1;
/// Bad input: CLI usage, a malformed or invalid lab bundle, an invalid answer, a refused start.
pub const BAD_INPUT: u8 = 2;
/// The cluster could not be reached, answered with an API error, or does not fit the lab.
pub const CLUSTER_ERROR: u8 = 3;
/// A wait ran out of time.
pub const TIMED_OUT: u8 = 4;

/// All codes with a one-line meaning, as printed in `--help` and the README.
pub const TABLE: [(u8, &str); 5] = [
    (OK, "all passed / done"),
    (CHECKS_FAILED, "checks failed"),
    (BAD_INPUT, "bad input (CLI usage, lab bundle, an invalid answer, a refused start)"),
    (CLUSTER_ERROR, "cluster unreachable, API error, or the cluster does not fit the lab"),
    (TIMED_OUT, "timed out waiting"),
];

/// The exit codes as `lab-runner --help` ends with them (a test keeps it equal to [`TABLE`]).
pub const HELP: &str = "Exit codes:
  0  all passed / done
  1  checks failed
  2  bad input (CLI usage, lab bundle, an invalid answer, a refused start)
  3  cluster unreachable, API error, or the cluster does not fit the lab
  4  timed out waiting";

/// Converts one of the constants above into a process exit code.
pub fn code(value: u8) -> ExitCode {
    ExitCode::from(value)
}

/// An error the process can end with: its documented exit code.
pub trait HasExitCode {
    /// One of the constants of this module.
    fn exit_code(&self) -> u8;
}

impl HasExitCode for commands::Error {
    fn exit_code(&self) -> u8 {
        use commands::Error;
        match self {
            Error::LabsDirMissing(_) | Error::BadDuration { .. } => BAD_INPUT,
            Error::Lab(_) | Error::Lint(_) | Error::Report(_) | Error::Output(_) => BAD_INPUT,
            Error::Kubeconfigs(_) => BAD_INPUT,
            Error::Sim(error) => error.exit_code(),
            Error::Class(error) => error.exit_code(),
            Error::Engine(error) => error.exit_code(),
        }
    }
}

impl HasExitCode for engine::Error {
    fn exit_code(&self) -> u8 {
        use engine::Error;
        match self {
            Error::Cluster(
                cluster::Error::Kubeconfig { .. }
                | cluster::Error::NoCurrentContext { .. }
                | cluster::Error::UnknownContext { .. },
            )
            | Error::BadInput(_)
            | Error::VariantChange { .. } => BAD_INPUT,
            // A preflight failure is the cluster not fitting the lab (no GPU node, a missing CRD).
            Error::Cluster(_) | Error::Api { .. } | Error::Preflight { .. } | Error::Inventory(_) => {
                CLUSTER_ERROR
            }
            Error::TimedOut { .. } => TIMED_OUT,
            Error::NotReproduced(_) => CHECKS_FAILED,
        }
    }
}

impl HasExitCode for lifecycle::Error {
    fn exit_code(&self) -> u8 {
        use lifecycle::Error;
        match self {
            Error::NoStateDir
            | Error::StateDirUnwritable { .. }
            | Error::PortInUse { .. }
            | Error::Bind { .. }
            | Error::AlreadyRunning { .. }
            | Error::Topology(_)
            | Error::Tls(_)
            | Error::Tokens(_)
            | Error::Kubeconfig(_)
            | Error::ControllerConfig(_)
            | Error::StateFile { .. } => BAD_INPUT,
            Error::NoState { .. }
            | Error::NotRunning { .. }
            | Error::StalePidFile { .. }
            | Error::Store { .. }
            | Error::Controllers(_)
            | Error::Spawn { .. }
            | Error::Signal { .. }
            | Error::Unreachable { .. }
            | Error::Serve(_) => CLUSTER_ERROR,
            Error::StartTimedOut { .. } | Error::StopTimedOut { .. } => TIMED_OUT,
            // The server is this binary (`sim serve`): its own code is a documented one.
            Error::ServerExited { code, .. } => code.unwrap_or(CLUSTER_ERROR),
        }
    }
}

impl HasExitCode for class::Error {
    fn exit_code(&self) -> u8 {
        use class::Error;
        match self {
            Error::LearnerCount(_)
            | Error::NeedsLearners(_)
            | Error::FewerLearners { .. }
            | Error::Differs { .. }
            | Error::OtherLab { .. }
            | Error::PortRange { .. }
            | Error::NeedsTlsSan(_)
            | Error::PortInUse { .. }
            | Error::UnknownVariant { .. }
            | Error::UnknownLearner { .. }
            | Error::NoLearnerNamed
            | Error::Locked { .. }
            | Error::OlderClassRunning(_)
            | Error::Lab(_)
            | Error::File { .. }
            | Error::Interrupted { .. }
            | Error::NoLab(_) => BAD_INPUT,
            Error::Board(error) => error.exit_code(),
            Error::Report(error) => error.exit_code(),
            // A learner that is down cannot have its lab reset: its cluster cannot be reached.
            Error::NoClass(_) | Error::Runtime(_) | Error::LearnerDown(_) | Error::Timeline(_) => {
                CLUSTER_ERROR
            }
            Error::Sim { source, .. } => source.exit_code(),
            Error::Engine { source, .. } => source.exit_code(),
        }
    }
}

impl HasExitCode for class::board::Error {
    fn exit_code(&self) -> u8 {
        use class::board::Error;
        match self {
            Error::Bind { .. } | Error::NeedsToken(_) | Error::NoContexts(_) | Error::Kubeconfig { .. } => {
                BAD_INPUT
            }
            Error::Serve(_) | Error::Token(_) => CLUSTER_ERROR,
        }
    }
}

impl HasExitCode for class::report::Error {
    fn exit_code(&self) -> u8 {
        use class::report::Error;
        match self {
            Error::Unreadable { .. }
            | Error::NotAReport { .. }
            | Error::MixedLabs { .. }
            | Error::JobName(_)
            | Error::NoJob { .. }
            | Error::Nothing => BAD_INPUT,
            Error::Api { .. } => CLUSTER_ERROR,
            Error::Engine(error) => error.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_lists_every_code_of_the_table() {
        let listed: String = TABLE.iter().map(|(code, meaning)| format!("\n  {code}  {meaning}")).collect();
        assert_eq!(HELP, format!("Exit codes:{listed}"));
    }

    #[test]
    fn the_simulators_errors_exit_with_documented_codes() {
        use lifecycle::{DEFAULT_LISTEN, Error};
        assert_eq!(Error::PortInUse { addr: DEFAULT_LISTEN }.exit_code(), BAD_INPUT);
        assert_eq!(Error::NotRunning { dir: "/d".into() }.exit_code(), CLUSTER_ERROR);
        assert_eq!(Error::StopTimedOut { pid: 1 }.exit_code(), TIMED_OUT);
        assert_eq!(Error::ServerExited { message: String::new(), code: Some(2) }.exit_code(), 2);
        assert_eq!(Error::ServerExited { message: String::new(), code: None }.exit_code(), CLUSTER_ERROR);
    }

    #[test]
    fn a_cluster_that_does_not_fit_the_lab_exits_3() {
        let error = engine::Error::Preflight { lab: "l".into(), reason: crate::msg!("start-cancelled") };
        assert_eq!(error.exit_code(), CLUSTER_ERROR);
        let wrapped = commands::Error::Engine(error);
        assert_eq!(wrapped.exit_code(), CLUSTER_ERROR);
    }
}
