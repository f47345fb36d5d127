//! `class up|start|restart|reset|status|down|board|report|kubeconfig`: a class of learner clusters, and the instructor's views of it.

use std::{io::Write, path::PathBuf};

use super::{Format, Result, print, runtime};
use crate::{
    class::{
        self as classroom, BoardSource, UpOptions, board::BoardOptions, lifecycle::StartLabOptions,
        report as class_report,
    },
    engine, exit,
    i18n::Localized as _,
    report,
    session::Session,
};

/// What `class` is asked; every class directory is resolved (`--state-dir`,
/// `$LAB_RUNNER_CLASS_DIR`, else the default one).
#[derive(Debug, Clone)]
pub enum Options {
    /// `class up`.
    Up(UpOptions),
    /// `class start LAB`.
    Start(StartLabOptions),
    /// `class restart LEARNER…`.
    Restart {
        /// The class directory.
        dir: PathBuf,
        /// The learners, or `all`.
        learners: Vec<String>,
    },
    /// `class reset LEARNER…`.
    Reset {
        /// The class directory.
        dir: PathBuf,
        /// The learners, or `all`.
        learners: Vec<String>,
    },
    /// `class status`.
    Status {
        /// The class directory.
        dir: PathBuf,
    },
    /// `class down`.
    Down {
        /// The class directory.
        dir: PathBuf,
        /// Also delete the learners' state, the kubeconfigs and the class record.
        purge: bool,
    },
    /// `class board`.
    Board {
        /// Whom the page grades.
        source: BoardSource,
        /// Where and how (boxed: it is large, and one).
        options: Box<BoardOptions>,
    },
    /// `class report`.
    Report {
        /// Where the reports come from.
        source: ReportSource,
        /// The lab (default: the class's, or the reports').
        lab: Option<String>,
        /// The output format.
        format: Format,
    },
    /// `class kubeconfig`.
    Kubeconfig {
        /// Learners' kubeconfig files or `sim up` state directories.
        inputs: Vec<PathBuf>,
        /// The learners' names, once per input in order (default: from the file names).
        names: Vec<String>,
        /// Write here (mode 0600) instead of stdout.
        output: Option<PathBuf>,
    },
    /// `class serve-shared` (what `class up --processes shared` runs): every learner of the
    /// class record, on its recorded port.
    ServeShared {
        /// The class directory.
        dir: PathBuf,
    },
}

/// Where `class report` reads the learners' reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportSource {
    /// The learners of a class, graded now.
    Class(PathBuf),
    /// Report files: a learner's `check --format json` each, or class reports.
    Files(Vec<PathBuf>),
    /// A grading run of deploy/kubernetes: its results ConfigMaps, read from the session's cluster.
    Job {
        /// The Job's namespace.
        namespace: String,
        /// The Job's name.
        name: String,
    },
}

/// The default class directory: `class` beside the simulator's default state directory.
pub fn default_dir() -> std::result::Result<PathBuf, crate::sim::lifecycle::Error> {
    Ok(crate::sim::lifecycle::state_dir(None)?.with_file_name("class"))
}

/// Runs one `class` command.
pub fn run(session: &Session, options: Options) -> Result<u8> {
    // One rustls provider for the whole process (kube's client uses ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let lang = session.lang;
    let summary = match options {
        Options::Kubeconfig { inputs, names, output } => {
            return kubeconfig(&inputs, &names, output.as_deref());
        }
        Options::Up(options) => classroom::up(&options)?,
        Options::Start(options) => classroom::start_lab(&options)?,
        Options::Restart { dir, learners } => classroom::restart(&dir, &learners)?,
        Options::Reset { dir, learners } => classroom::reset(&dir, &learners, &session.labs, lang)?,
        Options::Status { dir } => {
            let (record, lines) = classroom::status(&dir, &session.labs, lang)?;
            return print(&classroom::render_status(&record, &lines, lang));
        }
        Options::Down { dir, purge } => return print(&classroom::down(&dir, purge)?.render(lang)),
        Options::Report { source, lab, format } => {
            return class_report(session, &source, lab.as_deref(), format);
        }
        Options::ServeShared { dir } => {
            classroom::serve_shared(&dir)?;
            return Ok(exit::OK);
        }
        Options::Board { source, options } => {
            classroom::board(source, *options, &session.labs)?;
            return Ok(exit::OK);
        }
    };
    // What each learner got; a learner that failed is named on stderr with why, the others
    // keep running, and the exit code is the first failure's.
    print(&summary.render(lang))?;
    let mut err = std::io::stderr().lock();
    for (learner, error) in summary.failures() {
        // A simulator's or the engine's error names its learner already.
        let message = match error {
            classroom::Error::Sim { .. } | classroom::Error::Engine { .. } => error.message(),
            _ => crate::msg!("class-error-learner", learner = learner, reason = error.message()),
        };
        write!(err, "{}", crate::tr!(lang, "error-line", message = message) + "\n")?;
    }
    Ok(summary.exit_code())
}

/// `class kubeconfig`: the merged kubeconfig on stdout or, private (0600), in `output`.
fn kubeconfig(inputs: &[PathBuf], names: &[String], output: Option<&std::path::Path>) -> Result<u8> {
    use std::os::unix::fs::OpenOptionsExt;
    let merged = classroom::kubeconfig::merge(inputs, names)?;
    // JSON is YAML, and kubectl and kube read either.
    let text = serde_json::to_string_pretty(&merged).map_err(report::Error::from)? + "\n";
    match output {
        None => print(&text),
        Some(path) => {
            let mut file =
                std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
            file.write_all(text.as_bytes())?;
            Ok(exit::OK)
        }
    }
}

/// `class report`: one class report from a class, report files or the grade Job; exit 0 when
/// every learner passed, 1 otherwise (as `check --contexts`).
fn class_report(session: &Session, source: &ReportSource, lab: Option<&str>, format: Format) -> Result<u8> {
    let lang = session.lang;
    let graded = match source {
        ReportSource::Job { namespace, name } => runtime()?.block_on(async {
            let connected = engine::cluster::connect(&session.cluster).await.map_err(engine::Error::from)?;
            class_report::from_job(&connected, namespace, name, lab, lang)
                .await
                .map_err(|e| super::Error::Class(e.into()))
        })?,
        ReportSource::Files(files) => class_report::from_files(files, lab).map_err(classroom::Error::from)?,
        ReportSource::Class(dir) => {
            runtime()?.block_on(class_report::from_class(dir, lab, &session.labs, lang))?
        }
    };
    match format {
        Format::Human => print(&class_report::render_table(&graded, lang))?,
        Format::Json => print(&(serde_json::to_string_pretty(&graded).map_err(report::Error::from)? + "\n"))?,
        Format::Junit => print(&report::class_junit(&graded)?)?,
    };
    Ok(if graded.passed { exit::OK } else { exit::CHECKS_FAILED })
}
