//! Text for `labs list` and `labs show`, in the session's language.

use std::fmt::Write;

use comfy_table::{ContentArrangement, Table, presets::NOTHING};

use super::{
    loader::Bundle,
    model::{Stage, TaskKind, Wait},
};
use crate::cli::{LabSource, Lang};

/// Words of the listing in each language.
fn word(lang: Lang, en: &'static str, ja: &'static str) -> &'static str {
    match lang {
        Lang::En => en,
        Lang::Ja => ja,
    }
}

/// `labs list`: id, title, number of tasks and total points per lab, or an honest line when there
/// are none.
pub fn list(bundles: &[Bundle], source: &LabSource, lang: Lang) -> String {
    if bundles.is_empty() {
        return match source {
            LabSource::BuiltIn => word(
                lang,
                "No labs are built into this binary yet (the course labs arrive with issue #8).\n\
                 Use --labs DIR to read lab bundles from a directory.\n",
                "このバイナリにはまだラボが組み込まれていません（コースのラボは issue #8 で追加されます）。\n\
                 --labs DIR でディレクトリからラボを読み込めます。\n",
            )
            .to_string(),
            LabSource::Dir(dir) => match lang {
                Lang::En => format!("No lab bundles in {}.\n", dir.display()),
                Lang::Ja => format!("{} にラボはありません。\n", dir.display()),
            },
        };
    }
    let mut table = Table::new();
    table.load_style(NOTHING).force_no_tty().set_content_arrangement(ContentArrangement::Disabled);
    table.set_header(vec![
        "ID",
        word(lang, "TITLE", "タイトル"),
        word(lang, "TASKS", "タスク"),
        word(lang, "POINTS", "点数"),
    ]);
    for bundle in bundles {
        let lab = &bundle.lab;
        table.add_row(vec![
            lab.id.value.clone(),
            lab.title.get(lang).to_string(),
            lab.tasks.len().to_string(),
            lab.total_points().to_string(),
        ]);
    }
    tidy(table)
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

/// `labs show`: briefing, stages, variants and tasks.
pub fn show(bundle: &Bundle, lang: Lang) -> String {
    let lab = &bundle.lab;
    let mut out = String::new();
    let _ = writeln!(out, "{} — {}\n", lab.id.value, lab.title.get(lang));
    let _ = writeln!(out, "{}", lab.briefing.get(lang).trim_end());
    let _ = writeln!(out, "\n{}:", word(lang, "Stages", "ステージ"));
    for (n, stage) in lab.stages.iter().enumerate() {
        show_stage(&mut out, n + 1, stage, lang);
    }
    if !lab.variants.is_empty() {
        let _ = writeln!(
            out,
            "\n{}:",
            word(lang, "Variants (default chosen from --seed)", "バリアント（既定は --seed で選択）")
        );
        let width = lab.variants.iter().map(|v| v.id.value.len()).max().unwrap_or(0);
        for variant in &lab.variants {
            let _ = writeln!(out, "  {:width$}  {}", variant.id.value, variant.description.get(lang));
        }
    }
    let _ = writeln!(
        out,
        "\n{} ({} {}):",
        word(lang, "Tasks", "タスク"),
        lab.total_points(),
        word(lang, "points", "点")
    );
    for task in &lab.tasks {
        let kind = match task.kind {
            TaskKind::Task => word(lang, "task", "作業"),
            TaskKind::Quiz => word(lang, "quiz", "設問"),
        };
        let _ = writeln!(
            out,
            "  {} [{kind}, {} {}] {}",
            task.id.value,
            task.points.value,
            word(lang, "pts", "点"),
            task.title.get(lang)
        );
        if !task.needs.is_empty() {
            let needs: Vec<&str> = task.needs.iter().map(|n| n.value.as_str()).collect();
            let _ = writeln!(out, "      {}: {}", word(lang, "needs", "前提"), needs.join(", "));
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
        let _ = writeln!(out, "     {}: {}", word(lang, "apply", "適用"), manifests.join(", "));
    }
    for wait in &stage.waits {
        let _ = writeln!(out, "     {}: {}", word(lang, "wait", "待機"), describe_wait(wait));
    }
    for (name, variant) in &stage.variants {
        let manifests: Vec<&str> = variant.manifests.iter().map(|m| m.value.as_str()).collect();
        let _ =
            writeln!(out, "     {} {name}: {}", word(lang, "variant", "バリアント"), manifests.join(", "));
        for wait in &variant.waits {
            let _ = writeln!(out, "       {}: {}", word(lang, "wait", "待機"), describe_wait(wait));
        }
    }
}

fn describe_wait(wait: &Wait) -> String {
    let condition = serde_json::to_value(wait.condition).ok().and_then(|v| v.as_str().map(str::to_string));
    let mut text = condition.unwrap_or_default();
    if let Some(symptom) = wait.symptom.and_then(|s| serde_json::to_value(s).ok()) {
        text.push_str(&format!(" ({})", symptom.as_str().unwrap_or_default()));
    }
    let target = &wait.target;
    let name = match &target.namespace {
        Some(namespace) => format!("{namespace}/{}", target.name),
        None => target.name.clone(),
    };
    format!("{text} {} {name} ≤ {}", target.kind, wait.timeout)
}
