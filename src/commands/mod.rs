//! The commands: one module per command, each run with the resolved [`Session`] and its own options, never clap's types.
//!
//! `cli.rs` turns what the user typed into an [`Invocation`] (as ripgrep turns its low-level
//! arguments into high-level ones before any work); [`run`] dispatches it to the command's module,
//! and [`finish`] prints an error in the session's language and maps the outcome to the
//! documented exit code. `demo` and `selftest` run other commands through their options, exactly
//! as the dispatcher does.

pub mod answer;
pub mod check;
pub mod class;
pub mod completions;
pub mod demo;
pub mod labs;
pub mod lint;
pub mod reset;
pub mod selftest;
pub mod sim;
pub mod start;
pub mod status;
pub mod temp_sim;

use std::{io::Write, path::PathBuf, process::ExitCode};

use crate::{
    engine::{self, cluster::Cluster},
    exit::{self, HasExitCode},
    lab, report,
    session::{ClusterTarget, Lang, Session},
    tr,
};

/// A command line, resolved: the global options and the command's own.
#[derive(Debug)]
pub struct Invocation {
    /// The global options.
    pub session: Session,
    /// The command with its options.
    pub command: Command,
}

/// Every command, with its resolved options.
#[derive(Debug)]
pub enum Command {
    /// `start`.
    Start(start::Options),
    /// `check`.
    Check(check::Options),
    /// `answer`.
    Answer(answer::Options),
    /// `reset`.
    Reset(reset::Options),
    /// `status`.
    Status(status::Options),
    /// `selftest`.
    Selftest(selftest::Options),
    /// `demo`.
    Demo(demo::Options),
    /// `lint`.
    Lint(lint::Options),
    /// `labs list|show`.
    Labs(labs::Options),
    /// `sim …`.
    Sim(sim::Options),
    /// `class …`.
    Class(class::Options),
    /// `completions`.
    Completions(completions::Options),
}

/// The format a report is printed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// Coloured text for a terminal.
    #[default]
    Human,
    /// Versioned JSON (docs/report-format.md).
    Json,
    /// JUnit XML for CI systems.
    Junit,
}

/// Everything a command can fail with, as the binary reports it.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Error {
    /// `--labs DIR` does not name a directory.
    #[error("--labs {0}: not a directory")]
    LabsDirMissing(PathBuf),
    /// A duration flag could not be read.
    #[error("invalid value '{value}' for '{flag}': {}", crate::cli::ValueError::NotADuration)]
    BadDuration {
        /// The flag.
        flag: &'static str,
        /// What was given.
        value: String,
    },
    /// A `class` command failed.
    #[error(transparent)]
    Class(#[from] crate::class::Error),
    /// Learners' kubeconfigs could not be merged (`class kubeconfig`).
    #[error(transparent)]
    Kubeconfigs(#[from] crate::class::kubeconfig::Error),
    /// A `sim` command failed.
    #[error(transparent)]
    Sim(#[from] crate::sim::lifecycle::Error),
    /// A lab bundle could not be found or is invalid.
    #[error(transparent)]
    Lab(#[from] lab::loader::Error),
    /// Lint could not read the bundles it was given.
    #[error(transparent)]
    Lint(#[from] engine::lint::Error),
    /// An engine command failed (cluster, API, wait, preflight).
    #[error(transparent)]
    Engine(#[from] engine::Error),
    /// A report could not be rendered.
    #[error(transparent)]
    Report(#[from] report::Error),
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The error's one line in `lang`: a catalog message.
    pub fn message(&self, lang: Lang) -> String {
        use crate::i18n::{Localized, outside};
        match self {
            Error::LabsDirMissing(dir) => {
                tr!(lang, "error-labs-dir-missing", dir = dir.display().to_string())
            }
            Error::BadDuration { flag, value } => tr!(
                lang,
                "usage-invalid-value-because",
                arg = *flag,
                value = value,
                reason = crate::cli::ValueError::NotADuration.message()
            ),
            Error::Engine(error) => error.message().render(lang),
            Error::Lab(error) => error.message().render(lang),
            Error::Lint(error) => error.message().render(lang),
            Error::Kubeconfigs(error) => error.message().render(lang),
            Error::Sim(error) => error.message().render(lang),
            Error::Report(error) => tr!(lang, "error-report", reason = outside::quoted(error.to_string())),
            Error::Output(error) => tr!(lang, "error-output", reason = outside::cause(error)),
            Error::Class(error) => error.message().render(lang),
        }
    }

    /// The error as printed on stderr: one `error:` line (its frame in `lang`), then any bundle
    /// problems with their file:line:col and code snippets.
    pub fn render(&self, lang: Lang) -> String {
        let mut out = tr!(lang, "error-line", message = self.message(lang));
        out.push('\n');
        if let Error::Lab(
            lab::loader::Error::Invalid { problems, .. } | lab::loader::Error::InvalidCourse { problems, .. },
        ) = self
        {
            for problem in problems {
                out.push('\n');
                out.push_str(&problem.render(miette::GraphicalTheme::default(), lang));
            }
        }
        out
    }
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Prints the error of an outcome on stderr in `lang` and returns the outcome's exit code.
pub fn finish(outcome: Result<u8>, lang: Lang) -> ExitCode {
    match outcome {
        Ok(code) => exit::code(code),
        // A closed pipe (`lab-runner labs list | head`) is not a failure, as in ripgrep.
        Err(Error::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::code(exit::OK),
        Err(error) => {
            let code = error.exit_code();
            eprint!("{}", error.render(lang));
            exit::code(code)
        }
    }
}

/// Runs one command and returns its exit code.
pub fn run(invocation: Invocation) -> Result<u8> {
    let Invocation { session, command } = invocation;
    install_tracing(session.verbosity);
    match command {
        Command::Completions(options) => completions::run(&options),
        Command::Start(options) => start::run(&session, &options),
        Command::Check(options) => check::run(&session, &options),
        Command::Answer(options) => answer::run(&session, &options),
        Command::Reset(options) => reset::run(&session, &options),
        Command::Status(options) => status::run(&session, &options),
        Command::Selftest(options) => selftest::run(&session, &options),
        Command::Demo(options) => demo::run(&session, &options),
        Command::Lint(options) => lint::run(&session, &options),
        Command::Labs(options) => labs::run(&session, &options),
        Command::Class(options) => class::run(&session, options),
        Command::Sim(options) => Ok(sim::run(&session, options)?),
    }
}

/// `-v` and `-vv`: log lines (the simulator's controllers' warnings among them) on stderr, ours
/// at info and at debug level; `RUST_LOG`, when set, is the filter instead (with or without `-v`).
/// `sim serve`'s stderr is its log: `sim up` writes it into the state directory's `serve.log`,
/// and the detached server inherits `RUST_LOG`. With neither, nothing is installed and stderr
/// carries only what commands print.
fn install_tracing(verbosity: u8) {
    let filter = match (tracing_subscriber::EnvFilter::try_from_default_env(), verbosity) {
        (Ok(from_env), _) => from_env,
        (Err(_), 0) => return,
        // Other crates' lines (rustls' handshakes at debug) stay one level quieter than ours.
        (Err(_), 1) => tracing_subscriber::EnvFilter::new("warn,lab_runner=info"),
        (Err(_), _) => tracing_subscriber::EnvFilter::new("info,lab_runner=debug"),
    };
    // A second install (a test calling `run` twice) keeps the first; that is not an error.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Writes `text` on stdout and flushes it.
pub(crate) fn say(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Writes `text` on stdout: the command is done (exit 0).
pub(crate) fn print(text: &str) -> Result<u8> {
    say(text)?;
    Ok(exit::OK)
}

/// A tokio runtime for one command.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?)
}

/// Runs an engine command on a fresh tokio runtime against `target`.
pub(crate) fn on_cluster<'a, F, Fut>(target: &'a ClusterTarget, command: F) -> Result<u8>
where
    F: FnOnce(Cluster) -> Fut,
    Fut: std::future::Future<Output = Result<u8>> + 'a,
{
    runtime()?.block_on(async {
        let cluster = engine::cluster::connect(target).await.map_err(engine::Error::from)?;
        command(cluster).await
    })
}

/// Asks `prompt` on stderr and reads a line from stdin: whether it was yes.
pub(crate) fn confirmed(prompt: &str) -> Result<bool> {
    let mut err = std::io::stderr().lock();
    write!(err, "{prompt} ")?;
    err.flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    Ok(matches!(line.trim(), "y" | "Y" | "yes"))
}
