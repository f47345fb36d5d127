//! Runs a resolved [`Session`](crate::cli::Session) and maps every outcome to a documented exit code.

use std::{io::Write, process::ExitCode};

use clap::CommandFactory;

use crate::{
    cli::{self, Cli, Command, Session},
    exit, lab,
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
    /// A lab bundle could not be found or is invalid.
    #[error(transparent)]
    Lab(#[from] lab::loader::Error),
    /// Lint could not read the bundles it was given.
    #[error(transparent)]
    Lint(#[from] lab::lint::Error),
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The documented exit code for this error (DESIGN §6).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Cli(_) | Error::NotYetAvailable { .. } => exit::BAD_INPUT,
            Error::Lab(_) | Error::Lint(_) => exit::BAD_INPUT,
            Error::Output(_) => exit::BAD_INPUT,
            Error::Sim(error) => error.exit_code(),
        }
    }

    /// The error as printed on stderr: one `error:` line, then any bundle problems with their
    /// file:line:col and code snippets.
    pub fn render(&self) -> String {
        let mut out = format!("error: {self}\n");
        if let Error::Lab(lab::loader::Error::Invalid { problems, .. }) = self {
            for problem in problems {
                out.push('\n');
                out.push_str(&problem.render(miette::GraphicalTheme::default()));
            }
        }
        out
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
            eprint!("{}", error.render());
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
        Command::Lint(args) => lint(&args.paths, &session.labs),
        Command::Labs(cli::LabsCommand::List) => {
            let bundles = lab::loader::load_all(&session.labs)?;
            print(&lab::show::list(&bundles, &session.labs, session.lang))
        }
        Command::Labs(cli::LabsCommand::Show { lab }) => {
            let bundle = lab::loader::find(&session.labs, &lab)?;
            print(&lab::show::show(&bundle, session.lang))
        }
        Command::Sim(command) => Ok(crate::sim::lifecycle::run_command(command)?),
    }
}

fn print(text: &str) -> Result<u8, Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}

/// `lint`: every problem of every bundle on stderr and exit 2, or a one-line summary and 0.
fn lint(paths: &[std::path::PathBuf], source: &cli::LabSource) -> Result<u8, Error> {
    let reports = lab::lint::lint(paths, source)?;
    let problems: usize = reports.iter().map(|r| r.problems.len()).sum();
    let labs = reports.len();
    let plural = |n: usize, word: &str| if n == 1 { format!("{n} {word}") } else { format!("{n} {word}s") };
    if problems == 0 {
        let ids: Vec<&str> = reports.iter().filter_map(|r| r.lab.as_deref()).collect();
        let summary = if labs == 0 {
            "lint: no lab bundles to check\n".to_string()
        } else {
            format!("lint: {} clean ({})\n", plural(labs, "lab"), ids.join(", "))
        };
        return print(&summary);
    }
    let mut err = std::io::stderr().lock();
    for report in &reports {
        for problem in &report.problems {
            err.write_all(problem.render(miette::GraphicalTheme::default()).as_bytes())?;
            err.write_all(b"\n")?;
        }
    }
    let failing = reports.iter().filter(|r| !r.problems.is_empty()).count();
    writeln!(err, "lint: {} in {} of {}", plural(problems, "problem"), plural(failing, "lab"), labs)?;
    Ok(exit::BAD_INPUT)
}
