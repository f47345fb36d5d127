//! `lint`: validate lab bundles and the course file without a cluster.

use std::{io::Write, path::PathBuf};

use super::{Result, print};
use crate::{engine, exit, session::Session, tr};

/// What `lint` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Bundle directories or `lab.yaml` files (empty: every lab of the session's source).
    pub paths: Vec<PathBuf>,
}

/// `lint`: warnings on stderr (they never change the exit code); every problem of the course file
/// and of every bundle on stderr and exit 2, or a one-line summary and 0.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    let (paths, source, lang) = (&options.paths, &session.labs, session.lang);
    let course = engine::lint::lint_course(paths, source)?;
    let reports = engine::lint::lint(paths, source)?;
    let problems: usize = course.len() + reports.iter().map(|r| r.problems.len()).sum::<usize>();
    {
        let mut err = std::io::stderr().lock();
        for warning in reports.iter().flat_map(|r| &r.warnings) {
            writeln!(err, "{}", tr!(lang, "warning-line", message = warning.line(lang)))?;
        }
    }
    let labs = reports.len();
    if problems == 0 {
        let ids: Vec<&str> = reports.iter().filter_map(|r| r.lab.as_deref()).collect();
        let summary = if labs == 0 {
            tr!(lang, "lint-nothing")
        } else {
            tr!(lang, "lint-clean", count = labs, ids = crate::i18n::list(&ids))
        };
        return print(&(summary + "\n"));
    }
    let mut err = std::io::stderr().lock();
    for problem in course.iter().chain(reports.iter().flat_map(|r| &r.problems)) {
        err.write_all(problem.render(miette::GraphicalTheme::default(), lang).as_bytes())?;
        err.write_all(b"\n")?;
    }
    let failing = reports.iter().filter(|r| !r.problems.is_empty()).count();
    let summary = match (course.is_empty(), failing) {
        (true, _) => tr!(lang, "lint-problems", problems = problems, failing = failing, labs = labs),
        (false, 0) => tr!(lang, "lint-problems-course", problems = problems),
        (false, _) => {
            tr!(lang, "lint-problems-course-and-labs", problems = problems, failing = failing, labs = labs)
        }
    };
    writeln!(err, "{summary}")?;
    Ok(exit::BAD_INPUT)
}
