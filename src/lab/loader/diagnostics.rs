//! A bundle's problems as diagnostics: file:line:col, a miette rendering with a code snippet, and the YAML path of a node.

use std::{fmt, sync::Arc};

use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};

/// A 1-based line and column in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Position {
    /// Line, from 1.
    pub line: u64,
    /// Column (in characters), from 1.
    pub column: u64,
}

/// One problem in a bundle: where, what, and a rendered diagnostic with a code snippet.
#[derive(Debug)]
pub struct Problem {
    /// The file as shown to the user (a real path for bundles on disk).
    pub file: String,
    /// Line and column, where known.
    pub position: Option<Position>,
    /// What is wrong, in one line.
    pub message: String,
    report: miette::Report,
}

impl Problem {
    /// The miette rendering: `file:line:col` header, snippet, label and help.
    pub fn render(&self, theme: GraphicalTheme) -> String {
        let mut out = String::new();
        GraphicalReportHandler::new_themed(theme)
            .with_width(100)
            .render_report(&mut out, self.report.as_ref())
            .expect("rendering into a String cannot fail");
        out
    }

    /// The diagnostic, for callers that print through miette themselves.
    pub fn diagnostic(&self) -> &dyn miette::Diagnostic {
        self.report.as_ref()
    }
}

impl fmt::Display for Problem {
    /// `file:line:col: message`, as compilers print it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some(Position { line, column }) => write!(f, "{}:{line}:{column}: {}", self.file, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
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
    /// A problem at a location the YAML parser recorded.
    pub(super) fn at(
        &self,
        location: serde_saphyr::Location,
        label: &str,
        message: String,
        help: Option<String>,
    ) -> Problem {
        if location.line() == 0 {
            return self.whole(message, help);
        }
        let span = location.span();
        let offset = span
            .byte_offset()
            .map(|o| o as usize)
            .unwrap_or_else(|| offset_of(&self.text, location.line(), location.column()));
        let len = span.byte_len().map(|l| l as usize).unwrap_or(1).max(1);
        let report = miette::Report::new(Located {
            message: message.clone(),
            code: NamedSource::new(&self.display, self.text.to_string()),
            span: (offset, len).into(),
            label: label.to_string(),
            help,
        });
        Problem {
            file: self.display.clone(),
            position: Some(Position { line: location.line(), column: location.column() }),
            message,
            report,
        }
    }

    /// A problem about the file as a whole.
    pub(super) fn whole(&self, message: String, help: Option<String>) -> Problem {
        problem_without_position(&self.display, message, help)
    }

    /// A YAML error (syntax, unknown field, wrong type) from serde-saphyr. Where the YAML path of
    /// the offending node can be found, the message starts with it (`tasks[1].pointz: unknown
    /// field …`); otherwise serde-saphyr's own report is kept.
    pub(super) fn yaml_error(&self, error: &serde_saphyr::Error) -> Problem {
        let options = serde_saphyr::render_options! { source_name: Some(self.display.as_str()) };
        let report =
            serde_saphyr::miette::to_miette_report_with_options(error, &self.text, &self.display, options);
        let message = report.to_string();
        let location = error.location().filter(|l| l.line() > 0);
        if let Some(location) = location
            && let Some(path) = yaml_path_at(&self.text, location.line(), location.column())
        {
            return self.at(location, "here", format!("{path}: {message}"), None);
        }
        let position = location.map(|l| Position { line: l.line(), column: l.column() });
        Problem { file: self.display.clone(), position, message, report }
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

pub(super) fn problem_without_position(file: &str, message: String, help: Option<String>) -> Problem {
    let report = miette::Report::new(Unlocated { file: file.to_string(), message: message.clone(), help });
    Problem { file: file.to_string(), position: None, message, report }
}

/// Byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: u64, column: u64) -> usize {
    let line_start: usize =
        text.split_inclusive('\n').take(line.saturating_sub(1) as usize).map(str::len).sum();
    let rest = &text[line_start.min(text.len())..];
    line_start + rest.chars().take(column.saturating_sub(1) as usize).map(char::len_utf8).sum::<usize>()
}

/// Orders problems by file, then line and column (problems without a position first).
pub fn sort_problems(problems: &mut [Problem]) {
    problems.sort_by(|a, b| (&a.file, a.position).cmp(&(&b.file, b.position)));
}

#[cfg(test)]
mod tests {
    use super::*;

    const YAML: &str = "a: 1\nlist:\n  - x: 1\n    y: [p, {q: 2}]\n  - é: 3\nflow: {k: v}\n";

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
        let whole = file.whole("no objects".into(), None);
        assert_eq!(whole.to_string(), "lab.yaml: no objects");
        assert_eq!(whole.render(GraphicalTheme::none()).trim(), "x lab.yaml: no objects");
    }
}
