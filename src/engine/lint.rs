//! `lab-runner lint`: everything the loader checks, plus authoring rules — no vacuous task, hints
//! on every task, every text in `en` and `ja`, points above zero, a reference solution — and
//! warnings (exit code unchanged) for graded tasks that declare no shortcuts.
//!
//! It lives in the engine because it uses both layers below: the lab's loader and grading.
//! Vacuity is judged by [`crate::grade`] itself, built-in checks included: every task is graded
//! against an empty cluster (each kind the task looks at observed, with no objects, no probe sent,
//! the lab not started). A task that passes there would pass before the learner did anything
//! (NVIDIA aicr#1075).

use std::path::Path;

mod paths;

use crate::{
    english_display,
    grade::{self, Evidence, Observation, Observed, Status},
    i18n::{Localized, Message},
    lab::{
        loader::{self, Bundle, BundleRoot, Problem, problem_at},
        model::{Lab, Spanned, TaskKind, Text},
    },
    msg,
    session::LabSource,
};

/// Errors that stop lint before it can look at a bundle.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path or the lab source could not be read as bundles.
    Loader(#[from] loader::Error),
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::Loader(error) => error.message(),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Lint's findings for one bundle.
#[derive(Debug)]
pub struct BundleReport {
    /// The bundle as shown to the user.
    pub bundle: String,
    /// The lab id, when `lab.yaml` could be read.
    pub lab: Option<String>,
    /// Every problem, in file and line order.
    pub problems: Vec<Problem>,
    /// Advice that does not make the bundle invalid (lint's exit code ignores it).
    pub warnings: Vec<Problem>,
}

/// Whether `path` is a directory holding bundles (like `labs/`) rather than a bundle itself: a
/// directory without a `lab.yaml`.
fn holds_bundles(path: &Path) -> bool {
    path.is_dir() && !path.join(loader::LAB_FILE).exists()
}

/// Lints the bundles at `paths` (bundle directories, `lab.yaml` files, or directories holding
/// bundles, as `labs/`), or, with no paths, every bundle of `source`.
pub fn lint(paths: &[impl AsRef<Path>], source: &LabSource) -> Result<Vec<BundleReport>> {
    let mut roots = Vec::new();
    if paths.is_empty() {
        roots = loader::roots(source)?;
    }
    for path in paths.iter().map(AsRef::as_ref) {
        if holds_bundles(path) {
            let found = loader::roots(&LabSource::Dir(path.to_path_buf()))?;
            // A directory given by name that holds neither bundles nor a course is a mistake,
            // not a clean lint.
            if found.is_empty() && !path.join(loader::COURSE_FILE).exists() {
                return Err(loader::Error::NotABundle(path.display().to_string()).into());
            }
            roots.extend(found);
        } else {
            roots.push(loader::root_of_path(path)?);
        }
    }
    roots.into_iter().map(lint_root).collect()
}

/// The course file's problems (malformed, an entry naming no bundle, a lab listed twice) of the
/// source when no paths are given, else of each given directory that holds bundles; a bundle
/// path has no course.
pub fn lint_course(paths: &[impl AsRef<Path>], source: &LabSource) -> Result<Vec<Problem>> {
    if paths.is_empty() {
        return Ok(loader::read_course(source)?.problems);
    }
    let mut problems = Vec::new();
    for path in paths.iter().map(AsRef::as_ref).filter(|p| holds_bundles(p)) {
        problems.extend(loader::read_course(&LabSource::Dir(path.to_path_buf()))?.problems);
    }
    Ok(problems)
}

/// Lints one bundle.
pub fn lint_root(root: BundleRoot) -> Result<BundleReport> {
    let bundle_name = root.display();
    let loaded = loader::read(root)?;
    let mut problems = loaded.problems;
    let lab = loaded.bundle.as_ref().map(|b| b.lab.id.value.clone());
    let mut warnings = Vec::new();
    if let Some(bundle) = &loaded.bundle {
        problems.extend(authoring_problems(bundle));
        problems.extend(paths::path_problems(bundle));
        warnings.extend(authoring_warnings(bundle));
    }
    loader::sort_problems(&mut problems);
    Ok(BundleReport { bundle: bundle_name, lab, problems, warnings })
}

/// The authoring rules beyond what the loader checks.
pub fn authoring_problems(bundle: &Bundle) -> Vec<Problem> {
    let lab = &bundle.lab;
    let mut problems = Vec::new();
    let text = |problems: &mut Vec<Problem>, anchor: &Spanned<String>, what: Message, text: &Text| {
        for lang in text.missing() {
            let message = msg!("lint-text-missing", what = &what, lang = lang);
            problems.push(problem_at(bundle, anchor, msg!("loader-label-here"), message, None));
        }
    };
    text(&mut problems, &lab.id, msg!("lint-what-lab-title"), &lab.title);
    text(&mut problems, &lab.id, msg!("lint-what-lab-briefing"), &lab.briefing);
    for (n, requirement) in lab.requires.nodes.iter().enumerate() {
        let what = msg!("lint-what-field", field = format!("requires.nodes[{n}].description"));
        text(&mut problems, &lab.id, what, &requirement.description);
    }
    for variant in &lab.variants {
        let what = msg!("lint-what-variant-description", variant = format!("{:?}", variant.id.value));
        text(&mut problems, &variant.id, what, &variant.description);
    }
    let empty = empty_cluster(lab);
    let evidence = Evidence::new(bundle, &empty, None);
    for task in &lab.tasks {
        let id = &task.id;
        let task_id = format!("{:?}", id.value);
        text(&mut problems, id, msg!("lint-what-task-title", task = &task_id), &task.title);
        text(&mut problems, id, msg!("lint-what-task-description", task = &task_id), &task.description);
        for (tier, hint) in task.hints.iter().enumerate() {
            text(&mut problems, id, msg!("lint-what-task-hint", task = &task_id, tier = tier + 1), hint);
        }
        if task.points.value <= 0 {
            problems.push(problem_at(
                bundle,
                &task.points,
                msg!("loader-label-here"),
                msg!("lint-points", task = &task_id, points = task.points.value),
                None,
            ));
        }
        if task.hints.is_empty() {
            problems.push(problem_at(
                bundle,
                id,
                msg!("loader-label-this-task"),
                msg!("lint-no-hints", task = &task_id),
                Some(msg!("lint-no-hints-help")),
            ));
        }
        if task.solution.is_empty() {
            problems.push(problem_at(
                bundle,
                id,
                msg!("loader-label-this-task"),
                msg!("lint-no-solution", task = &task_id),
                Some(msg!("lint-no-solution-help")),
            ));
        }
        let graded = grade::evaluate_task(task, &evidence);
        if graded.outcome.status() == Status::Pass {
            problems.push(problem_at(
                bundle,
                id,
                msg!("lint-label-passes-empty"),
                msg!("lint-vacuous", task = &task_id, evidence = graded.outcome.evidence().to_vec()),
                Some(msg!("lint-vacuous-help")),
            ));
        }
    }
    problems
}

/// Advice on a valid bundle: a graded task (not a quiz) that declares no `shortcuts`, so
/// `selftest` cannot prove that the attempts a learner would try first do not pass.
pub fn authoring_warnings(bundle: &Bundle) -> Vec<Problem> {
    bundle
        .lab
        .tasks
        .iter()
        .filter(|task| task.kind == TaskKind::Task && task.shortcuts.is_empty())
        .map(|task| {
            problem_at(
                bundle,
                &task.id,
                msg!("loader-label-this-task"),
                msg!("lint-no-shortcuts", task = format!("{:?}", task.id.value)),
                Some(msg!("lint-no-shortcuts-help")),
            )
        })
        .collect()
}

/// Every kind the lab's expectations look at, observed with no objects.
fn empty_cluster(lab: &Lab) -> Observation {
    Observation { observed: Observed::empty_of(grade::kinds_for(&lab.tasks)), ..Observation::default() }
}
