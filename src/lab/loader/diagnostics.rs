//! A bundle's problems as diagnostics: file:line:col, a miette rendering with a code snippet, and the YAML path of a node.

use std::{fmt, sync::Arc};

use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};

use crate::{i18n::Message, msg, session::Lang};

/// A 1-based line and column in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Line, from 1.
    pub line: u64,
    /// Column (in characters), from 1.
    pub column: u64,
}

/// One problem in a bundle: where, what, and a diagnostic with a code snippet, rendered in the
/// reader's language ([`Problem::render`]).
#[derive(Debug, Clone)]
pub struct Problem {
    /// The file as shown to the user (a real path for bundles on disk).
    pub file: String,
    /// Line and column, where known.
    pub position: Option<Position>,
    /// What is wrong, in one line.
    pub message: Message,
    /// How to fix it, when there is advice.
    pub help: Option<Message>,
    /// The snippet to point into, when the problem has a place in the file.
    snippet: Option<Snippet>,
}

/// Where in a file's text a problem points, and what the pointer says.
#[derive(Debug, Clone)]
struct Snippet {
    text: Arc<String>,
    offset: usize,
    len: usize,
    label: Message,
}

impl Problem {
    /// The miette rendering in `lang`: `file:line:col` header, snippet, label and help.
    pub fn render(&self, theme: GraphicalTheme, lang: Lang) -> String {
        let message = self.message.render(lang);
        let help = self.help.as_ref().map(|h| h.render(lang));
        let report = match &self.snippet {
            Some(snippet) => miette::Report::new(Located {
                message,
                code: NamedSource::new(&self.file, snippet.text.to_string()),
                span: (snippet.offset, snippet.len).into(),
                label: snippet.label.render(lang),
                help,
            }),
            None => miette::Report::new(Unlocated { file: self.file.clone(), message, help }),
        };
        let mut out = String::new();
        GraphicalReportHandler::new_themed(theme)
            .with_width(100)
            .render_report(&mut out, report.as_ref())
            .expect("rendering into a String cannot fail");
        out
    }

    /// `file:line:col: message` in `lang`, as compilers print it.
    pub fn line(&self, lang: Lang) -> String {
        let message = self.message.render(lang);
        match self.position {
            Some(Position { line, column }) => format!("{}:{line}:{column}: {message}", self.file),
            None => format!("{}: {message}", self.file),
        }
    }
}

impl fmt::Display for Problem {
    /// `file:line:col: message` in English.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.line(Lang::En))
    }
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{message}")]
struct Located {
    message: String,
    #[source_code]
    code: NamedSource<String>,
    #[label("{label}")]
    span: SourceSpan,
    label: String,
    #[help]
    help: Option<String>,
}

#[derive(Debug, thiserror::Error, miette::Diagnostic)]
#[error("{file}: {message}")]
struct Unlocated {
    file: String,
    message: String,
    #[help]
    help: Option<String>,
}

/// A text file of the bundle, kept for pointing into it.
#[derive(Debug, Clone)]
pub(super) struct SourceFile {
    pub(super) display: String,
    pub(super) text: Arc<String>,
}

impl SourceFile {
    /// A problem at a location the YAML parser recorded; `label` says what is there.
    pub(super) fn at(
        &self,
        location: serde_saphyr::Location,
        label: Message,
        message: Message,
        help: Option<Message>,
    ) -> Problem {
        if location.line() == 0 {
            return self.whole(message, help);
        }
        let offset = self.offset(location);
        let len = location.span().byte_len().map(|l| l as usize).unwrap_or(1).max(1);
        Problem {
            file: self.display.clone(),
            position: Some(Position { line: location.line(), column: location.column() }),
            message,
            help,
            snippet: Some(Snippet { text: self.text.clone(), offset, len, label }),
        }
    }

    /// A problem at a line and column inside the text of the scalar written at `location`
    /// (a CEL expression's error): found by looking for that line of `value` in the file from
    /// the scalar on, so a plain, quoted or block scalar all point at the right character; the
    /// scalar's start when the line cannot be found (an escaped quoted string).
    pub(super) fn inside_scalar(
        &self,
        location: serde_saphyr::Location,
        value: &str,
        (line, column): (usize, usize),
        label: Message,
        message: Message,
        help: Option<Message>,
    ) -> Problem {
        if location.line() == 0 {
            return self.whole(message, help);
        }
        let start = self.offset(location).min(self.text.len());
        let wanted = value.lines().nth(line.saturating_sub(1)).unwrap_or_default();
        let offset = match self.text[start..].find(wanted).filter(|_| !wanted.is_empty()) {
            Some(found) => {
                let line_start = start + found;
                let within: usize = wanted.chars().take(column.saturating_sub(1)).map(char::len_utf8).sum();
                line_start + within
            }
            None => start,
        };
        let (line, column) = line_column_of(&self.text, offset);
        Problem {
            file: self.display.clone(),
            position: Some(Position { line, column }),
            message,
            help,
            snippet: Some(Snippet { text: self.text.clone(), offset, len: 1, label }),
        }
    }

    /// The byte offset of a location the parser recorded.
    fn offset(&self, location: serde_saphyr::Location) -> usize {
        let span = location.span();
        span.byte_offset()
            .map(|o| o as usize)
            .unwrap_or_else(|| offset_of(&self.text, location.line(), location.column()))
    }

    /// A problem about the file as a whole.
    pub(super) fn whole(&self, message: Message, help: Option<Message>) -> Problem {
        problem_without_position(&self.display, message, help)
    }

    /// A YAML error (syntax, unknown field, wrong type) from serde-saphyr, in the parser's words
    /// (quoted under a Japanese frame). Where the YAML path of the offending node can be found,
    /// the message starts with it (`tasks[1].pointz: unknown field …`).
    pub(super) fn yaml_error(&self, error: &serde_saphyr::Error) -> Problem {
        let options = serde_saphyr::render_options! { source_name: Some(self.display.as_str()) };
        // The report's own line: the parser's message without serde-saphyr's position prefix.
        let reason =
            serde_saphyr::miette::to_miette_report_with_options(error, &self.text, &self.display, options)
                .to_string();
        let location = error.location().filter(|l| l.line() > 0);
        let path = location.and_then(|l| yaml_path_at(&self.text, l.line(), l.column()));
        let message = match (path, serde_field_problem(&reason)) {
            (Some(path), Some(problem)) => msg!("loader-yaml-field-at", path = path, problem = problem),
            (None, Some(problem)) => problem,
            (Some(path), None) => msg!("loader-yaml-error-at", path = path, reason = reason),
            (None, None) => msg!("loader-yaml-error", reason = reason),
        };
        match location {
            Some(location) => self.at(location, msg!("loader-label-here"), message, None),
            None => self.whole(message, None),
        }
    }
}

/// One step of a YAML path.
enum Step {
    Key(String),
    Index(usize),
}

/// A container being walked: a map (waiting for a key, or holding the key of the next value) or
/// a sequence (with the index of the next element).
enum Frame {
    Map { key: Option<String>, pushed: bool },
    Seq { next: usize, pushed: bool },
}

/// The path (`tasks[1].points`) of the deepest YAML node that starts at a 1-based line and
/// column, found by walking the parser's events; `None` when no node starts there.
fn yaml_path_at(text: &str, line: u64, column: u64) -> Option<String> {
    use serde_saphyr::granit_parser::{Event, Parser};
    let render = |steps: &[Step]| {
        let mut out = String::new();
        for step in steps {
            match step {
                Step::Key(key) if out.is_empty() => out.push_str(key),
                Step::Key(key) => {
                    out.push('.');
                    out.push_str(key);
                }
                Step::Index(index) => out.push_str(&format!("[{index}]")),
            }
        }
        if out.is_empty() { "(document)".to_string() } else { out }
    };
    let mut frames: Vec<Frame> = Vec::new();
    let mut steps: Vec<Step> = Vec::new();
    let mut candidate = None;
    for item in Parser::new_from_str(text) {
        let Ok((event, span)) = item else { break };
        let here = span.start.line() as u64 == line && span.start.col() as u64 + 1 == column;
        // The step that leads to this node from its container, if it is a node.
        let is_node = matches!(
            event,
            Event::Scalar(..) | Event::Alias(_) | Event::MappingStart(..) | Event::SequenceStart(..)
        );
        let mut step = None;
        if is_node {
            match frames.last_mut() {
                Some(Frame::Map { key: key @ None, .. }) => {
                    // A key. Complex (non-scalar) keys are rare; name them `?`.
                    let name = match &event {
                        Event::Scalar(value, ..) => value.to_string(),
                        _ => "?".to_string(),
                    };
                    if here {
                        steps.push(Step::Key(name));
                        return Some(render(&steps));
                    }
                    if matches!(event, Event::Scalar(..) | Event::Alias(_)) {
                        *key = Some(name);
                        continue;
                    }
                    step = Some(Step::Key(name));
                }
                Some(Frame::Map { key, .. }) => step = key.take().map(Step::Key),
                Some(Frame::Seq { next, .. }) => {
                    step = Some(Step::Index(*next));
                    *next += 1;
                }
                None => {}
            }
        }
        match event {
            Event::Scalar(..) | Event::Alias(_) if here => {
                steps.extend(step);
                return Some(render(&steps));
            }
            Event::MappingStart(..) | Event::SequenceStart(..) => {
                let pushed = step.is_some();
                steps.extend(step);
                if here {
                    // A block map starts where its first key does; the deepest node wins.
                    candidate = Some(render(&steps));
                }
                frames.push(match event {
                    Event::MappingStart(..) => Frame::Map { key: None, pushed },
                    _ => Frame::Seq { next: 0, pushed },
                });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                if let Some(Frame::Map { pushed: true, .. } | Frame::Seq { pushed: true, .. }) = frames.pop()
                {
                    steps.pop();
                }
            }
            _ => {}
        }
    }
    candidate
}

pub(super) fn problem_without_position(file: &str, message: Message, help: Option<Message>) -> Problem {
    Problem { file: file.to_string(), position: None, message, help, snippet: None }
}

/// Byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let line_start: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1) as usize).map(str::len).sum();
    let rest = &text[line_start.min(text.len())..];
    line_start + rest.chars().take(column.saturating_sub(1) as usize).map(char::len_utf8).sum::<usize>()
}

/// The 1-based line and column (in characters) of a byte offset.
fn line_column_of(text: &str, offset: usize) -> (u64, u64) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() as u64 + 1;
    let column = before.rsplit('\n').next().unwrap_or_default().chars().count() as u64 + 1;
    (line, column)
}

/// Orders problems by file, then line and column (problems without a position first).
pub fn sort_problems(problems: &mut [Problem]) {
    problems.sort_by(|a, b| (&a.file, a.position).cmp(&(&b.file, b.position)));
}

/// serde's words for a field it does not know or misses (`unknown field `titel`, expected one
/// of id, title, …`, `missing field `id``), as a message in the reader's language; `None` for
/// any other parser message, which is quoted as it is.
fn serde_field_problem(reason: &str) -> Option<Message> {
    let line = reason.split_whitespace().collect::<Vec<_>>().join(" ");
    if let Some(rest) = line.strip_prefix("unknown field `") {
        let (field, rest) = rest.split_once('`')?;
        let expected =
            rest.strip_prefix(", expected one of ").or_else(|| rest.strip_prefix(", expected "))?;
        let names = expected.split(", ").map(|name| name.trim_matches('`'));
        return Some(msg!("loader-yaml-unknown-field", field = field, expected = crate::i18n::list(names)));
    }
    let field = line.strip_prefix("missing field `")?.strip_suffix('`')?;
    Some(msg!("loader-yaml-missing-field", field = field))
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "a: 1\nlist:\n  - x: 1\n    y: [p, {q: 2}]\n  - é: 3\nflow: {k: v}\n";

    #[test]
    fn serdes_field_problems_read_in_the_readers_language() {
        let unknown = serde_field_problem("unknown field `titel`, expected one of\n id, title").unwrap();
        assert_eq!(unknown.render(Lang::En), "unknown field `titel`, expected one of id, title");
        assert_eq!(
            unknown.render(Lang::Ja),
            "フィールド `titel` はありません（使えるフィールド: id、title）"
        );
        let missing = serde_field_problem("missing field `id`").unwrap();
        assert_eq!(missing.render(Lang::Ja), "必須のフィールド `id` がありません");
        assert_eq!(serde_field_problem("invalid type: string \"x\", expected u32"), None);
    }

    #[test]
    fn yaml_paths_of_nodes_at_positions() {
        assert_eq!(yaml_path_at(YAML, 1, 1).as_deref(), Some("a"));
        assert_eq!(yaml_path_at(YAML, 1, 4).as_deref(), Some("a"));
        assert_eq!(yaml_path_at(YAML, 3, 5).as_deref(), Some("list[0].x"));
        assert_eq!(yaml_path_at(YAML, 4, 8).as_deref(), Some("list[0].y"));
        assert_eq!(yaml_path_at(YAML, 4, 9).as_deref(), Some("list[0].y[0]"));
        assert_eq!(yaml_path_at(YAML, 4, 13).as_deref(), Some("list[0].y[1].q"));
        assert_eq!(yaml_path_at(YAML, 5, 5).as_deref(), Some("list[1].é"));
        assert_eq!(yaml_path_at(YAML, 6, 8).as_deref(), Some("flow.k"));
        assert_eq!(yaml_path_at(YAML, 3, 3).as_deref(), Some("list"), "where the sequence starts");
        assert_eq!(yaml_path_at(YAML, 2, 6), None, "no node starts there");
    }

    #[test]
    fn offsets_count_characters_within_the_line() {
        assert_eq!(offset_of(YAML, 1, 1), 0);
        assert_eq!(offset_of(YAML, 2, 1), 5);
        assert_eq!(&YAML[offset_of(YAML, 5, 8)..offset_of(YAML, 5, 9)], "3");
    }

    #[test]
    fn problems_print_as_compilers_print_them() {
        let file = SourceFile { display: "lab.yaml".into(), text: Arc::new(YAML.to_string()) };
        let error = serde_saphyr::from_str::<std::collections::BTreeMap<String, u8>>("a: [1]\n").unwrap_err();
        let problem = file.yaml_error(&error);
        assert_eq!(problem.position, Some(Position { line: 1, column: 4 }));
        assert!(problem.to_string().starts_with("lab.yaml:1:4: a: "), "{problem}");
        let whole = file.whole(msg!("loader-manifest-empty"), None);
        assert_eq!(whole.to_string(), "lab.yaml: the manifest holds no objects");
        assert_eq!(
            whole.render(GraphicalTheme::none(), Lang::En).trim(),
            "x lab.yaml: the manifest holds no objects"
        );
        assert_eq!(whole.line(Lang::Ja), "lab.yaml: マニフェストにオブジェクトがありません");
    }
}
