//! `class up|status|down|board|report|kubeconfig`: a class of learner clusters, and the instructor's views of it.

use std::{io::Write, net::SocketAddr, path::PathBuf};

use super::{Format, Result, print, runtime};
use crate::{
    class::{self as classroom, BoardSource, UpOptions, board::BoardOptions, report as class_report},
    engine, exit, report,
    session::Session,
};

/// What `class` is asked; every class directory is resolved (`--state-dir`,
/// `$LAB_RUNNER_CLASS_DIR`, else the default one).
#[derive(Debug, Clone)]
pub enum Options {
    /// `class up`.
    Up(UpOptions),
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
        /// Where and how.
        options: BoardOptions,
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
    /// `class serve-shared` (what `class up --processes shared` runs).
    ServeShared {
        /// The class directory.
        dir: PathBuf,
        /// How many learners.
        learners: u32,
        /// Address of learner 1 (port 0: any free port each).
        listen: SocketAddr,
        /// Other names the learners' certificates carry.
        tls_sans: Vec<String>,
    },
}

/// Where `class report` reads the learners' reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReportSource {
    /// The learners of a class, graded now.
    Class(PathBuf),
    /// Report files: a learner's `check --format json` each, or class reports.
    Files(Vec<PathBuf>),
    /// The grade Job of deploy/kubernetes: its results ConfigMaps, read from the session's cluster.
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
    match options {
        Options::Kubeconfig { inputs, names, output } => kubeconfig(&inputs, &names, output.as_deref()),
        Options::Up(options) => {
            let started = classroom::up(&options)?;
            let mut text = String::new();
            for (name, endpoint) in &started.learners {
                text += &format!("{name}  {endpoint}\n");
            }
            if let Some(lab) = &options.lab {
                text += &format!("started {lab} in {} learner(s)\n", started.learners.len());
            }
            text += &format!(
                "class kubeconfig (one context per learner): {}\nhand out: {}/learner-NN/kubeconfig\n",
                started.kubeconfig.display(),
                options.dir.display()
            );
            print(&text)
        }
        Options::Status { dir } => {
            let (record, lines) = classroom::status(&dir, &session.labs, session.lang)?;
            print(&classroom::render_status(&record, &lines))
        }
        Options::Down { dir, purge } => {
            let stopped = classroom::down(&dir, purge)?;
            let running = stopped.iter().filter(|(_, pid)| pid.is_some()).count();
            // With --processes shared one process serves every learner: counted once.
            let mut processes: Vec<u32> = stopped.iter().filter_map(|(_, pid)| *pid).collect();
            processes.sort_unstable();
            processes.dedup();
            let kept = if purge { "state purged" } else { "state kept" };
            print(&format!(
                "class stopped: {running} of {} learner(s) were running, in {} process(es); {kept}\n",
                stopped.len(),
                processes.len()
            ))
        }
        Options::Report { source, lab, format } => class_report(session, &source, lab.as_deref(), format),
        Options::ServeShared { dir, learners, listen, tls_sans } => {
            classroom::serve_shared(&dir, learners, listen, &tls_sans)?;
            Ok(exit::OK)
        }
        Options::Board { source, options } => {
            classroom::board(source, options, &session.labs)?;
            Ok(exit::OK)
        }
    }
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
