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
    i18n::Message,
    msg,
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

/// Every code, in order.
pub const ALL: [u8; 5] = [OK, CHECKS_FAILED, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT];

/// What `code` means, one line, as `--help` lists it (the README lists the same).
pub fn meaning(code: u8) -> Message {
    match code {
        OK => msg!("exit-code-ok"),
        CHECKS_FAILED => msg!("exit-code-checks-failed"),
        BAD_INPUT => msg!("exit-code-bad-input"),
        CLUSTER_ERROR => msg!("exit-code-cluster-error"),
        _ => msg!("exit-code-timed-out"),
    }
}

/// The codes each command can end with, by its path (`""` for `lab-runner` itself, `check`,
/// `sim up`), as its `--help` lists them. Every command can be given bad input (a usage error
/// at least), so every one lists 2; the rest follow from the errors the command can meet (the
/// rows of [`HasExitCode`] below) and from what it returns itself.
pub const BY_COMMAND: &[(&str, &[u8])] = &[
    ("", &ALL),
    // NotReproduced (the breakage did not show) is 1; a stage wait that runs out is 4.
    ("start", &ALL),
    // 1 when a task does not pass; 4 when `--watch --timeout` runs out.
    ("check", &ALL),
    ("answer", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    // Waiting for deletions can run out.
    ("reset", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    // 1 when the lab's start is incomplete or it is not started.
    ("status", &[OK, CHECKS_FAILED, BAD_INPUT, CLUSTER_ERROR]),
    ("selftest", &ALL),
    // The final `check`'s code, after a `start` that may time out.
    ("demo", &ALL),
    ("lint", &[OK, BAD_INPUT]),
    ("labs", &[OK, BAD_INPUT]),
    ("labs list", &[OK, BAD_INPUT]),
    ("labs show", &[OK, BAD_INPUT]),
    ("sim", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    ("sim up", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    ("sim down", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    ("sim status", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    ("sim serve", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    ("sim kubeconfig", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    ("sim timeline", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    ("class", &ALL),
    // A learner's failure is the class's code: a lab's start may not reproduce (1) or time out.
    ("class up", &ALL),
    ("class start", &ALL),
    ("class restart", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    ("class reset", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    ("class status", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    ("class down", &[OK, BAD_INPUT, CLUSTER_ERROR, TIMED_OUT]),
    ("class board", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    // 1 when a learner's task does not pass.
    ("class report", &[OK, CHECKS_FAILED, BAD_INPUT, CLUSTER_ERROR]),
    ("class kubeconfig", &[OK, BAD_INPUT]),
    ("class serve-shared", &[OK, BAD_INPUT, CLUSTER_ERROR]),
    ("completions", &[OK, BAD_INPUT]),
];

/// The codes the command at `path` can end with (every code for a path the table lacks, which
/// a test rules out).
pub fn of_command(path: &str) -> &'static [u8] {
    BY_COMMAND.iter().find(|(command, _)| *command == path).map_or(&ALL, |(_, codes)| codes)
}

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
    fn every_command_lists_0_and_2_in_order() {
        for (command, codes) in BY_COMMAND {
            assert!(codes.contains(&OK) && codes.contains(&BAD_INPUT), "{command}: {codes:?}");
            assert!(codes.windows(2).all(|pair| pair[0] < pair[1]), "{command}: {codes:?}");
        }
    }

    #[test]
    fn the_simulators_errors_exit_with_documented_codes() {
        use lifecycle::{DEFAULT_LISTEN, Error};
        assert_eq!(Error::PortInUse { addr: DEFAULT_LISTEN }.exit_code(), BAD_INPUT);
        assert_eq!(Error::NotRunning { dir: "/d".into() }.exit_code(), CLUSTER_ERROR);
        assert_eq!(Error::StopTimedOut { pid: 1 }.exit_code(), TIMED_OUT);
        let exited =
            |code| Error::ServerExited { message: None, status: String::new(), log: "/l".into(), code };
        assert_eq!(exited(Some(2)).exit_code(), 2);
        assert_eq!(exited(None).exit_code(), CLUSTER_ERROR);
    }

    #[test]
    fn a_cluster_that_does_not_fit_the_lab_exits_3() {
        let error = engine::Error::Preflight { lab: "l".into(), reason: crate::msg!("start-cancelled") };
        assert_eq!(error.exit_code(), CLUSTER_ERROR);
        let wrapped = commands::Error::Engine(error);
        assert_eq!(wrapped.exit_code(), CLUSTER_ERROR);
    }
}
