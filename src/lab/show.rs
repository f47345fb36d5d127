//! Text for `labs list` and `labs show`, in the session's language.

use std::fmt::Write;

use comfy_table::{ContentArrangement, Table, presets::NOTHING};

use super::{
    loader::{Bundle, Course},
    model::{Expectation, Stage, TaskKind, Variant, Wait},
};
use crate::{
    i18n::list as listed,
    session::{LabSource, Lang},
    tr,
};

/// `labs list`: id, title, number of tasks and total points per lab, or an honest line when there
/// are none. With a course file, the course title comes first and the labs follow in course order,
/// numbered; a bundle the course does not list comes after them, marked, and a course entry with
/// no bundle is named under the table (`lint` reports it with its line and column).
pub fn list(bundles: &[Bundle], course: Option<&Course>, source: &LabSource, lang: Lang) -> String {
    if bundles.is_empty() && course.is_none() {
        return match source {
            LabSource::BuiltIn => tr!(lang, "labs-none-built-in") + "\n",
            LabSource::Dir(dir) => tr!(lang, "labs-none-in-dir", dir = dir.display().to_string()) + "\n",
        };
    }
    let Some(course) = course else {
        let rows = bundles.iter().map(|bundle| row(bundle, lang)).collect();
        return tidy(table(false, rows, lang));
    };
    let mut rows = Vec::new();
    let mut missing = Vec::new();
    for (n, entry) in course.labs.iter().enumerate() {
        // A lab listed twice is shown at its first place (lint reports the repeat).
        if course.labs[..n].iter().any(|earlier| earlier.value == entry.value) {
            continue;
        }
        match bundles.iter().find(|b| b.lab.id.value == entry.value) {
            Some(bundle) => rows.push([vec![(n + 1).to_string()], row(bundle, lang)].concat()),
            None => missing.push(entry),
        }
    }
    let listed = |bundle: &&Bundle| course.labs.iter().any(|entry| entry.value == bundle.lab.id.value);
    let extra: Vec<&Bundle> = bundles.iter().filter(|b| !listed(b)).collect();
    for bundle in &extra {
        rows.push([vec![NOT_IN_COURSE.to_string()], row(bundle, lang)].concat());
    }
    let mut out = tr!(lang, "labs-course", title = course.title.get(lang)) + "\n\n";
    out.push_str(&tidy(table(true, rows, lang)));
    if !extra.is_empty() || !missing.is_empty() {
        out.push('\n');
    }
    if !extra.is_empty() {
        let file = course.file().to_string();
        let _ = writeln!(out, "{}", tr!(lang, "labs-not-in-course", mark = NOT_IN_COURSE, file = file));
    }
    for entry in missing {
        let at = course.location_of(entry).to_string();
        let _ = writeln!(out, "! {}", tr!(lang, "labs-course-missing", at = at, lab = &entry.value));
    }
    out
}

/// The mark in the `#` column of a lab the course does not list.
const NOT_IN_COURSE: &str = "-";

/// One lab's cells: id, title, tasks, points.
fn row(bundle: &Bundle, lang: Lang) -> Vec<String> {
    let lab = &bundle.lab;
    vec![
        lab.id.value.clone(),
        lab.title.get(lang).to_string(),
        lab.tasks.len().to_string(),
        lab.total_points().to_string(),
    ]
}

/// The listing table; `numbered` adds a first `#` column (each row then starts with its position
/// in the course, or the not-in-course mark).
fn table(numbered: bool, rows: Vec<Vec<String>>, lang: Lang) -> Table {
    let mut table = Table::new();
    table.load_style(NOTHING).force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
    let mut header: Vec<String> = if numbered { vec!["#".to_string()] } else { Vec::new() };
    header.extend([
        "ID".to_string(),
        tr!(lang, "labs-column-title"),
        tr!(lang, "labs-column-tasks"),
        tr!(lang, "labs-column-points"),
    ]);
    table.set_header(header);
    for row in rows {
        table.add_row(row);
    }
    table
}

/// comfy-table's NOTHING preset pads every cell with a space on each side; print as kubectl does:
/// no leading blank, columns two spaces apart, no trailing blanks.
fn tidy(table: Table) -> String {
    let mut out = String::new();
    for line in table.lines() {
        let line = line.strip_prefix(' ').unwrap_or(&line).trim_end().to_string();
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// `labs show --reveal` or `--variant V`, for instructors: for `variant`, what it breaks and the
/// quiz answers accepted in it; without one, the quiz answers of a lab without variants, or of
/// every variant in turn; then every task's shortcuts (which `selftest` proves do not pass).
pub fn show_revealed(bundle: &Bundle, variant: Option<&Variant>, lang: Lang) -> String {
    let lab = &bundle.lab;
    let mut out = String::new();
    match variant {
        Some(variant) => show_variant(&mut out, bundle, variant, lang),
        None if lab.variants.is_empty() => {
            let _ = writeln!(out, "\n{}", tr!(lang, "labs-quiz-answers-variantless"));
            show_answers(&mut out, bundle, None, lang);
        }
        None => {
            for variant in &lab.variants {
                show_variant(&mut out, bundle, variant, lang);
            }
        }
    }
    let _ = writeln!(out, "\n{}", tr!(lang, "labs-shortcuts"));
    write_attempts(&mut out, lab, |t| &t.shortcuts, lang);
    if lab.tasks.iter().any(|t| !t.solutions.is_empty()) {
        let _ = writeln!(out, "\n{}", tr!(lang, "labs-solutions"));
    }
    write_attempts(&mut out, lab, |t| &t.solutions, lang);
    out
}

/// One line per attempt (`TASK/ID: description`) of every task, in task order.
fn write_attempts(
    out: &mut String,
    lab: &crate::lab::model::Lab,
    attempts: impl Fn(&crate::lab::model::Task) -> &Vec<crate::lab::model::Attempt>,
    lang: Lang,
) {
    for task in &lab.tasks {
        for attempt in attempts(task) {
            let _ = writeln!(
                out,
                "  {}/{}: {}",
                task.id.value,
                attempt.id.value,
                attempt.description.get(lang).trim_end()
            );
        }
    }
}

/// What a variant breaks and the quiz answers accepted in it.
fn show_variant(out: &mut String, bundle: &Bundle, variant: &Variant, lang: Lang) {
    let id = variant.id.value.as_str();
    let _ = writeln!(out, "\n{}", tr!(lang, "labs-variant-heading", variant = id));
    let _ = writeln!(out, "  {}", variant.description.get(lang).trim_end());
    let _ = writeln!(out, "\n{}", tr!(lang, "labs-quiz-answers"));
    show_answers(out, bundle, Some(id), lang);
}

/// Each quiz's accepted answers (in `variant`, when the lab has variants), or the fact it is
/// compared with.
fn show_answers(out: &mut String, bundle: &Bundle, variant: Option<&str>, lang: Lang) {
    for task in bundle.lab.tasks.iter().filter(|t| t.kind == TaskKind::Quiz) {
        for expectation in &task.expect {
            let Expectation::Quiz(quiz) = expectation else { continue };
            let mut accepted: Vec<&str> = quiz.accept.iter().map(String::as_str).collect();
            let by_variant = variant.and_then(|id| quiz.accept_by_variant.get(id));
            accepted.extend(by_variant.into_iter().flatten().map(String::as_str));
            let answer = match &quiz.fact {
                Some(fact) => tr!(lang, "labs-answer-recorded", fact = fact.key()),
                None => tr!(lang, "labs-answers", answers = listed(&accepted)),
            };
            let _ = writeln!(out, "  {}: {answer}", task.id.value);
        }
    }
}

/// `labs show`: briefing, stages, variants and tasks.
pub fn show(bundle: &Bundle, lang: Lang) -> String {
    let lab = &bundle.lab;
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}\n", lab.id.value, lab.title.get(lang));
    let _ = writeln!(out, "{}", lab.briefing.get(lang).trim_end());
    let _ = writeln!(out, "\n{}", tr!(lang, "labs-stages"));
    for (n, stage) in lab.stages.iter().enumerate() {
        show_stage(&mut out, n + 1, stage, lang);
    }
    if !lab.variants.is_empty() {
        let _ = writeln!(out, "\n{}", tr!(lang, "labs-variants"));
        let width = lab.variants.iter().map(|v| v.id.value.len()).max().unwrap_or(0);
        for variant in &lab.variants {
            let _ = writeln!(out, "  {:width$}  {}", variant.id.value, variant.description.get(lang));
        }
    }
    let _ = writeln!(out, "\n{}", tr!(lang, "labs-tasks", points = lab.total_points()));
    for task in &lab.tasks {
        let kind = match task.kind {
            TaskKind::Task => tr!(lang, "labs-kind-task"),
            TaskKind::Quiz => tr!(lang, "labs-kind-quiz"),
        };
        let line = tr!(
            lang,
            "labs-task",
            task = &task.id.value,
            kind = kind,
            points = task.points.value,
            title = task.title.get(lang)
        );
        let _ = writeln!(out, "  {line}");
        if !task.needs.is_empty() {
            let needs = listed(task.needs.iter().map(|n| n.value.as_str()));
            let _ = writeln!(out, "      {}", tr!(lang, "labs-needs", needs = needs));
        }
        for line in task.description.get(lang).trim_end().lines() {
            let _ = writeln!(out, "      {line}");
        }
    }
    out
}

fn show_stage(out: &mut String, number: usize, stage: &Stage, lang: Lang) {
    let manifests: Vec<&str> = stage.manifests.iter().map(|m| m.value.as_str()).collect();
    let _ = writeln!(out, "  {number}. {}", stage.id.value);
    if !manifests.is_empty() {
        let _ = writeln!(out, "     {}", tr!(lang, "labs-apply", manifests = listed(&manifests)));
    }
    for wait in &stage.waits {
        let _ = writeln!(out, "     {}", tr!(lang, "labs-wait", wait = describe_wait(wait)));
    }
    for (name, variant) in &stage.variants {
        let manifests: Vec<&str> = variant.manifests.iter().map(|m| m.value.as_str()).collect();
        let line = tr!(lang, "labs-stage-variant", variant = name, manifests = listed(&manifests));
        let _ = writeln!(out, "     {line}");
        for wait in &variant.waits {
            let _ = writeln!(out, "       {}", tr!(lang, "labs-wait", wait = describe_wait(wait)));
        }
    }
}

fn describe_wait(wait: &Wait) -> String {
    let condition = serde_json::to_value(wait.wait_for).ok().and_then(|v| v.as_str().map(str::to_string));
    let mut text = condition.unwrap_or_default();
    if let Some(symptom) = wait.symptom.and_then(|s| serde_json::to_value(s).ok()) {
        text.push_str(&format!(" ({})", symptom.as_str().unwrap_or_default()));
    }
    if let Some(condition) = &wait.condition {
        let reason = condition.reason.as_deref().map(|r| format!(", {r}")).unwrap_or_default();
        text.push_str(&format!(" ({}={}{reason})", condition.type_, condition.status.as_str()));
    }
    if let Some(event) = &wait.event {
        text.push_str(&format!(" ({})", event.reason));
    }
    if let Some(expression) = &wait.expression {
        text.push_str(&format!(" ({})", expression.value));
    }
    let target = &wait.target;
    let name = match &target.namespace {
        Some(namespace) => format!("{namespace}/{}", target.name),
        None => target.name.clone(),
    };
    format!("{text} {} {name} ≤ {}", target.kind, wait.timeout)
}
