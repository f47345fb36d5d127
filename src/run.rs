//! Runs a resolved [`Session`](crate::cli::Session) and maps every outcome to a documented exit code.

use std::{io::Write, process::ExitCode};

use clap::CommandFactory;

use crate::{
    cli::{self, Cli, Command, Session},
    exit,
};

/// Everything a command can fail with, as the binary reports it.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Error {
    /// The command line could not be resolved.
    #[error(transparent)]
    Cli(#[from] cli::Error),
    /// The command exists but its capability has not landed in this build.
    #[error("`lab-runner {command}` is not available in this build yet: {waiting_for}")]
    NotYetAvailable {
        /// The command as typed.
        command: &'static str,
        /// What it waits for.
        waiting_for: &'static str,
    },
    /// A `sim` command failed.
    #[error(transparent)]
    Sim(#[from] crate::sim::lifecycle::Error),
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The documented exit code for this error (DESIGN §6).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Cli(_) | Error::NotYetAvailable { .. } => exit::BAD_INPUT,
            Error::Output(_) => exit::BAD_INPUT,
            Error::Sim(error) => error.exit_code(),
        }
    }
}

/// Resolves the command line, runs it, prints any error, and returns the exit code.
pub fn main(cli: Cli) -> ExitCode {
    let outcome = Session::resolve(cli).map_err(Error::from).and_then(execute);
    match outcome {
        Ok(code) => exit::code(code),
        // A closed pipe (`lab-runner labs list | head`) is not a failure, as in ripgrep.
        Err(Error::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::code(exit::OK),
        Err(error) => {
            let code = error.exit_code();
            eprintln!("error: {error}");
            exit::code(code)
        }
    }
}

/// Runs one command and returns its exit code.
pub fn execute(session: Session) -> Result<u8, Error> {
    let not_yet = |command, waiting_for| Err(Error::NotYetAvailable { command, waiting_for });
    match session.command {
        Command::Completions(args) => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(args.shell, &mut Cli::command(), "lab-runner", &mut out);
            out.flush()?;
            Ok(exit::OK)
        }
        Command::Start(_) => not_yet("start", "the lab engine (issue #7)"),
        Command::Check(_) => not_yet("check", "the lab engine (issue #7)"),
        Command::Answer(_) => not_yet("answer", "the lab engine (issue #7)"),
        Command::Reset(_) => not_yet("reset", "the lab engine (issue #7)"),
        Command::Status(_) => not_yet("status", "the lab engine (issue #7)"),
        Command::Selftest(_) => not_yet("selftest", "the lab engine (issue #7)"),
        Command::Demo(_) => not_yet("demo", "the lab engine (issue #7) and the course labs (issue #8)"),
        Command::Lint(_) => not_yet("lint", "the lab bundle loader"),
        Command::Labs(_) => not_yet("labs", "the lab bundle loader"),
        Command::Sim(command) => Ok(crate::sim::lifecycle::run_command(command)?),
    }
}
