//! `lab-runner class report`: one class report from a running class, report files, or the grade Job's results.
//!
//! Whatever the source, the report is the one `check --contexts all --format json` prints (a
//! [`ClassReport`]: `learners[].report.tasks`), so scripts read one shape. The sources:
//!
//! - a class directory (`class up`): every learner graded now, concurrently, as `check --contexts
//!   all` grades them;
//! - JSON files: each one learner's `check --format json` (the learner named after the file, or
//!   after its directory when the file is `report.json`), or a whole class report;
//! - `--job NAMESPACE/NAME`: the results ConfigMaps a grading run of deploy/kubernetes writes
//!   (label `lab-runner.io/grade-job=NAME`, learner in `lab-runner.io/grade`, the class's size in
//!   `lab-runner.io/grade-learners`, the report in `report.json`), one learner per completion
//!   index; an index without a result is an ERROR row. The results outlive the Job: once it is
//!   gone (its `ttlSecondsAfterFinished`), the size comes from their label.

use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
};

use k8s_openapi::api::{batch::v1::Job, core::v1::ConfigMap};
use unicode_width::UnicodeWidthStr;

use crate::{
    engine,
    report::{ClassReport, Report, TaskStatus},
    session::{ClusterTarget, LabSource, Lang},
    sim::kubeconfig::KUBECONFIG_FILE,
    tr,
};

/// The label the grade Job puts on each result: the learner it graded.
pub const LEARNER_LABEL: &str = "lab-runner.io/grade";
/// The label the grade Job puts on each result: the Job's name.
pub const JOB_LABEL: &str = "lab-runner.io/grade-job";
/// The label the grade Job puts on each result: how many learners the run grades.
pub const LEARNERS_LABEL: &str = "lab-runner.io/grade-learners";
/// The key of a result ConfigMap holding the report.
pub const REPORT_KEY: &str = "report.json";

/// Errors of `class report`; each maps to one documented exit code (`src/exit.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A report file could not be read. Exit 2.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why: the operating system's words, named by kind.
        reason: crate::i18n::Message,
    },
    /// A file is not a report `check --format json` or `check --contexts … --format json` wrote. Exit 2.
    NotAReport {
        /// The file.
        path: PathBuf,
        /// The JSON parser's words, quoted.
        reason: crate::i18n::Message,
    },
    /// The reports grade different labs. Exit 2.
    MixedLabs {
        /// The first lab seen.
        first: String,
        /// Another one.
        other: String,
    },
    /// `--job` is not `NAMESPACE/NAME`. Exit 2.
    JobName(String),
    /// Neither the grading run nor any result of it exists. Exit 2.
    NoJob {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
        /// The context asked.
        context: String,
    },
    /// Reading the Job or its results failed. Exit 3.
    Api {
        /// What was being done.
        what: crate::i18n::Message,
        /// Why it failed.
        reason: crate::i18n::Message,
    },
    /// Connecting to the cluster holding the Job failed. Exit: the engine's code.
    Engine(#[from] Box<engine::Error>),
    /// No report file was given and nothing else to read. Exit 2.
    Nothing,
}

impl crate::i18n::Localized for Error {
    fn message(&self) -> crate::i18n::Message {
        use crate::msg;
        let shown = |path: &std::path::Path| path.display().to_string();
        match self {
            Error::Unreadable { path, reason } => msg!("error-file", path = shown(path), reason = reason),
            Error::NotAReport { path, reason } => {
                msg!("class-report-error-not-a-report", path = shown(path), reason = reason)
            }
            Error::MixedLabs { first, other } => {
                msg!("class-report-error-mixed-labs", first = first, other = other)
            }
            Error::JobName(given) => msg!("class-report-error-job-name", given = given),
            Error::NoJob { namespace, name, context } => {
                msg!("class-report-error-no-job", namespace = namespace, name = name, context = context)
            }
            Error::Api { what, reason } => msg!("error-api", action = what, reason = reason),
            Error::Engine(error) => error.message(),
            Error::Nothing => msg!("class-report-error-nothing"),
        }
    }
}
crate::english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One learner's outcome, as [`ClassReport::new`] takes it.
pub type Outcome = (String, std::result::Result<Report, String>);

/// Grades `contexts` of `kubeconfig` concurrently (as `check --contexts` does); a learner whose
/// cluster cannot be graded is an error row in `lang`.
pub async fn grade_contexts(
    kubeconfig: &Path,
    contexts: &[String],
    bundle: &crate::lab::loader::Bundle,
    lang: Lang,
) -> Vec<Outcome> {
    futures::future::join_all(contexts.iter().map(|context| async move {
        let target =
            ClusterTarget { kubeconfig: Some(kubeconfig.to_path_buf()), context: Some(context.clone()) };
        let graded = async {
            let cluster = engine::cluster::connect(&target).await?;
            engine::check::check_with(
                &cluster,
                bundle,
                lang,
                engine::check::Help::default(),
                engine::check::Observations::Once,
            )
            .await
        };
        (
            context.clone(),
            graded.await.map_err(|e: engine::Error| crate::i18n::Localized::message(&e).render(lang)),
        )
    }))
    .await
}

/// Grades every learner of the class in `dir` now, in `lab` or the class's lab.
pub async fn from_class(
    dir: &Path,
    lab: Option<&str>,
    labs: &LabSource,
    lang: Lang,
) -> super::Result<ClassReport> {
    let record = super::record::read(dir)?;
    let lab = lab
        .map(str::to_string)
        .or(record.lab.clone())
        .ok_or_else(|| super::Error::NoLab(dir.to_path_buf()))?;
    let bundle = crate::lab::loader::find(labs, &lab)?;
    let outcomes = grade_contexts(&dir.join(KUBECONFIG_FILE), &record.names(), &bundle, lang).await;
    Ok(ClassReport::new(&lab, outcomes))
}

/// What a report file holds: one learner's report, or a class's.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum ReportFile {
    Class(ClassReport),
    Learner(Box<Report>),
}

/// The learner a report file is named after: its stem, or its directory's name for a file named
/// `report.json` (`grade/learner-01/report.json`).
pub fn learner_of(path: &Path) -> String {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if stem == "report"
        && let Some(dir) = path.parent().and_then(Path::file_name)
    {
        return dir.to_string_lossy().into_owned();
    }
    stem
}

/// One class report from report files (each a learner's or a class's), in the files' order.
pub fn from_files(paths: &[PathBuf], lab: Option<&str>) -> Result<ClassReport> {
    if paths.is_empty() {
        return Err(Error::Nothing);
    }
    let mut outcomes: Vec<Outcome> = Vec::new();
    let mut labs: Vec<String> = lab.map(str::to_string).into_iter().collect();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Unreadable { path: path.clone(), reason: crate::i18n::outside::cause(&e) })?;
        let file: ReportFile = serde_json::from_str(&text).map_err(|e| Error::NotAReport {
            path: path.clone(),
            reason: crate::i18n::outside::quoted(e.to_string()),
        })?;
        match file {
            ReportFile::Learner(report) => {
                labs.push(report.lab.clone());
                outcomes.push((learner_of(path), Ok(*report)));
            }
            ReportFile::Class(class) => {
                labs.push(class.lab.clone());
                for learner in class.learners {
                    let outcome = match (learner.report, learner.error) {
                        (Some(report), _) => Ok(report),
                        (None, error) => Err(error.unwrap_or_default()),
                    };
                    outcomes.push((learner.context, outcome));
                }
            }
        }
    }
    let first = labs[0].clone();
    if let Some(other) = labs.iter().find(|l| **l != first) {
        return Err(Error::MixedLabs { first, other: other.clone() });
    }
    Ok(ClassReport::new(&first, outcomes))
}

/// `--job NAMESPACE/NAME` split.
pub fn parse_job(text: &str) -> Result<(String, String)> {
    match text.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok((namespace.to_string(), name.to_string()))
        }
        _ => Err(Error::JobName(text.to_string())),
    }
}

/// One class report from the grade Job's results: one learner per completion index
/// (`learner-01` for index 0 …), an index without a result (still running, or failed) an ERROR row.
pub async fn from_job(
    cluster: &engine::cluster::Cluster,
    namespace: &str,
    name: &str,
    lab: Option<&str>,
    lang: Lang,
) -> Result<ClassReport> {
    let api_error = |what: crate::i18n::Message| {
        move |e: kube::Error| Error::Api { what, reason: engine::cluster::reason(&e) }
    };
    let jobs: kube::Api<Job> = kube::Api::namespaced(cluster.client.clone(), namespace);
    let job = jobs
        .get_opt(name)
        .await
        .map_err(api_error(crate::msg!("action-read", object = format!("Job {namespace}/{name}"))))?;
    let config_maps: kube::Api<ConfigMap> = kube::Api::namespaced(cluster.client.clone(), namespace);
    let results = config_maps
        .list(&kube::api::ListParams::default().labels(&format!("{JOB_LABEL}={name}")))
        .await
        .map_err(api_error(crate::msg!("action-read-job-results", job = format!("{namespace}/{name}"))))?;
    let recorded_size = results
        .items
        .iter()
        .filter_map(|cm| cm.metadata.labels.as_ref()?.get(LEARNERS_LABEL)?.parse::<u32>().ok())
        .max();
    let completions = match (&job, recorded_size) {
        (Some(job), _) => job.spec.as_ref().and_then(|s| s.completions).unwrap_or(1).max(0) as u32,
        (None, Some(size)) => size,
        (None, None) => {
            return Err(Error::NoJob {
                namespace: namespace.to_string(),
                name: name.to_string(),
                context: cluster.context.clone(),
            });
        }
    };
    let mut outcomes = Vec::new();
    let mut labs: Vec<String> = lab.map(str::to_string).into_iter().collect();
    for index in 0..completions {
        let learner = super::learner_name(index + 1);
        let result = results.items.iter().find(|cm| {
            cm.metadata.labels.as_ref().and_then(|l| l.get(LEARNER_LABEL)).is_some_and(|l| *l == learner)
        });
        let outcome = match result.and_then(|cm| cm.data.as_ref()).and_then(|d| d.get(REPORT_KEY)) {
            None => {
                Err(tr!(lang, "class-report-no-result", index = index, job = format!("{namespace}/{name}")))
            }
            Some(text) => match serde_json::from_str::<Report>(text) {
                Ok(report) => {
                    labs.push(report.lab.clone());
                    Ok(report)
                }
                Err(e) => Err(tr!(lang, "class-report-bad-result", index = index, reason = e.to_string())),
            },
        };
        outcomes.push((learner, outcome));
    }
    let Some(first) = labs.first().cloned() else {
        // No result at all and no --lab: the Job's class settings name none here either.
        return Ok(ClassReport::new("-", outcomes));
    };
    if let Some(other) = labs.iter().find(|l| **l != first) {
        return Err(Error::MixedLabs { first, other: other.clone() });
    }
    Ok(ClassReport::new(&first, outcomes))
}

/// The class report as a table for a terminal: a heading, then one row per learner with the
/// whole lab's verdict, the score and each task's verdict (verdicts are codes in every language);
/// a learner who could not be graded shows why instead of the tasks.
pub fn render_table(class: &ClassReport, lang: Lang) -> String {
    let mut tasks: Vec<String> = Vec::new();
    for report in class.learners.iter().filter_map(|l| l.report.as_ref()) {
        for task in &report.tasks {
            if !tasks.contains(&task.id) {
                tasks.push(task.id.clone());
            }
        }
    }
    let passed = class.learners.iter().filter(|l| l.status == TaskStatus::Pass).count();
    let mut out = tr!(
        lang,
        "class-report-heading",
        lab = class.lab.as_str(),
        learners = class.learners.len(),
        passed = passed
    ) + "\n";
    let mut rows: Vec<Vec<String>> = vec![
        [
            tr!(lang, "class-report-learner"),
            tr!(lang, "class-report-result"),
            tr!(lang, "class-report-score"),
        ]
        .into_iter()
        .chain(tasks.iter().cloned())
        .collect(),
    ];
    for learner in &class.learners {
        let mut row = vec![learner.context.clone(), learner.status.as_str().to_string()];
        match (&learner.report, &learner.error) {
            (Some(report), _) => {
                row.push(format!("{}/{}", report.score, report.total));
                for id in &tasks {
                    let verdict = report.tasks.iter().find(|t| &t.id == id);
                    row.push(verdict.map(|t| t.status.as_str()).unwrap_or("-").to_string());
                }
            }
            (None, error) => {
                row.push("-".into());
                row.push(error.clone().unwrap_or_default());
            }
        }
        rows.push(row);
    }
    // An error row's message spans the task columns: it does not widen them.
    let columns = 3 + tasks.len();
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            rows.iter()
                .filter(|r| r.len() == columns || c < 3)
                .filter_map(|r| r.get(c))
                .map(|cell| cell.width())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let pad = widths.get(c).copied().unwrap_or(0).saturating_sub(cell.width());
            let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
        }
        out += line.trim_end();
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{exit::HasExitCode, report::TaskResult};

    fn task(id: &str, status: TaskStatus, points: i64) -> TaskResult {
        TaskResult {
            id: id.into(),
            title: format!("the {id} task"),
            description: None,
            status,
            points,
            awarded: if status == TaskStatus::Pass { points } else { 0 },
            evidence: vec![format!("{id}: observed")],
            hints: vec![],
            hints_available: 1,
            solution: None,
        }
    }

    fn report(statuses: [TaskStatus; 3]) -> Report {
        let ids = ["find-node", "undo", "alert"];
        Report::new(
            "stuck-rollout",
            "A stuck rollout",
            None,
            ids.iter().zip(statuses).map(|(id, s)| task(id, s, 5)).collect(),
        )
    }

    fn class() -> ClassReport {
        use TaskStatus::*;
        ClassReport::new(
            "stuck-rollout",
            vec![
                ("learner-01".into(), Ok(report([Pass, Pass, Pass]))),
                ("learner-02".into(), Ok(report([Pass, Fail, Blocked]))),
                (
                    "learner-03".into(),
                    Err("cluster https://127.0.0.1:40003 unreachable: connection refused".into()),
                ),
            ],
        )
    }

    #[test]
    fn the_class_report_is_a_table_in_english() {
        insta::assert_snapshot!(render_table(&class(), Lang::En));
    }

    #[test]
    fn the_class_report_is_a_table_in_japanese() {
        insta::assert_snapshot!(render_table(&class(), Lang::Ja));
    }

    #[test]
    fn learner_and_class_report_files_make_one_report_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let learner_dir = dir.path().join("learner-01");
        std::fs::create_dir_all(&learner_dir).unwrap();
        let single = learner_dir.join("report.json");
        std::fs::write(&single, serde_json::to_string(&class().learners[0].report).unwrap()).unwrap();
        let rest = ClassReport { learners: class().learners[1..].to_vec(), ..class() };
        let class_file = dir.path().join("rest.json");
        std::fs::write(&class_file, serde_json::to_string(&rest).unwrap()).unwrap();
        let merged = from_files(&[single, class_file.clone()], None).unwrap();
        assert_eq!(merged, class(), "read back exactly as written");

        let other = dir.path().join("alice.json");
        let mut elsewhere = report([TaskStatus::Pass; 3]);
        elsewhere.lab = "gpu-sharing".into();
        std::fs::write(&other, serde_json::to_string(&elsewhere).unwrap()).unwrap();
        assert_eq!(learner_of(&other), "alice");
        let error = from_files(&[class_file, other], None).unwrap_err();
        assert!(matches!(error, Error::MixedLabs { .. }), "{error}");

        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, r#"{"hello": 1}"#).unwrap();
        let error = from_files(&[junk], None).unwrap_err();
        assert_eq!(error.exit_code(), crate::exit::BAD_INPUT);
        assert!(error.to_string().contains("not a lab-runner report"), "{error}");
    }

    #[test]
    fn job_names_are_namespace_and_name() {
        assert_eq!(parse_job("lab-class/grade").unwrap(), ("lab-class".into(), "grade".into()));
        for bad in ["grade", "/grade", "lab-class/", "a/b/c"] {
            assert!(matches!(parse_job(bad), Err(Error::JobName(_))), "{bad}");
        }
    }
}
