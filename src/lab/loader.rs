//! Loads lab bundles from a directory or from the binary's embedded `labs/` tree, and checks
//! everything that can be checked without a cluster.
//!
//! Every problem is collected (not just the first) and carries the file, and where known the
//! line and column, rendered by miette with a code snippet. A YAML syntax error or an unknown
//! field stops reading that file; reference errors (missing files, unknown or cyclic `needs`,
//! duplicate ids) are all reported together.

use std::{
    collections::{BTreeMap, BTreeSet},
    fmt,
    path::{Component, Path, PathBuf},
    sync::Arc,
};

use include_dir::{Dir, include_dir};
use miette::{GraphicalReportHandler, GraphicalTheme, NamedSource, SourceSpan};
use serde_json::Value;

use super::model::{Expectation, Lab, Spanned, TaskKind, WaitFor};
use crate::{
    grade::{self, ExpectedFiles},
    session::LabSource,
};

/// The lab bundles compiled into the binary (the repository's `labs/` directory).
pub static BUILT_IN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/labs");

/// The name of a bundle's main file.
pub const LAB_FILE: &str = "lab.yaml";

/// Errors from finding and loading lab bundles.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bundle has problems; each names its file and, where known, line and column.
    #[error("lab bundle {bundle} has {count} problem{s}", count = problems.len(), s = if problems.len() == 1 { "" } else { "s" })]
    Invalid {
        /// The bundle's directory as shown to the user.
        bundle: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// The course file cannot be read as a course; each problem names its line and column.
    #[error("the course file {file} has {count} problem{s}", count = problems.len(), s = if problems.len() == 1 { "" } else { "s" })]
    InvalidCourse {
        /// The course file as shown to the user.
        file: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// No lab has this id.
    #[error("no lab named {id:?}; known labs: {}", if known.is_empty() { "none".to_string() } else { known.join(", ") })]
    UnknownLab {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: Vec<String>,
    },
    /// The path holds no `lab.yaml`.
    #[error("{0}: not a lab bundle (no lab.yaml)")]
    NotABundle(String),
    /// A directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

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
struct SourceFile {
    display: String,
    text: Arc<String>,
}

impl SourceFile {
    /// A problem at a location the YAML parser recorded.
    fn at(
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
    fn whole(&self, message: String, help: Option<String>) -> Problem {
        problem_without_position(&self.display, message, help)
    }

    /// A YAML error (syntax, unknown field, wrong type) from serde-saphyr. Where the YAML path of
    /// the offending node can be found, the message starts with it (`tasks[1].pointz: unknown
    /// field …`); otherwise serde-saphyr's own report is kept.
    fn yaml_error(&self, error: &serde_saphyr::Error) -> Problem {
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

fn problem_without_position(file: &str, message: String, help: Option<String>) -> Problem {
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

/// Where a bundle's files live.
#[derive(Debug, Clone)]
pub enum BundleRoot {
    /// A directory on disk.
    Dir(PathBuf),
    /// A directory of the embedded `labs/` tree.
    BuiltIn(&'static Dir<'static>),
}

impl BundleRoot {
    /// The bundle's directory name (which must equal the lab id).
    pub fn dir_name(&self) -> String {
        let path = match self {
            BundleRoot::Dir(path) => path.as_path(),
            BundleRoot::BuiltIn(dir) => dir.path(),
        };
        path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
    }

    /// The bundle as shown to the user.
    pub fn display(&self) -> String {
        match self {
            BundleRoot::Dir(path) => path.display().to_string(),
            BundleRoot::BuiltIn(dir) => format!("labs/{} (built in)", dir.path().display()),
        }
    }

    /// A file of the bundle as shown to the user.
    pub fn display_file(&self, relative: &str) -> String {
        match self {
            BundleRoot::Dir(path) => path.join(relative).display().to_string(),
            BundleRoot::BuiltIn(dir) => format!("labs/{}/{relative}", dir.path().display()),
        }
    }

    /// Reads a file of the bundle; `Ok(None)` when it does not exist.
    fn read(&self, relative: &str) -> std::result::Result<Option<String>, String> {
        match self {
            BundleRoot::Dir(path) => match std::fs::read_to_string(path.join(relative)) {
                Ok(text) => Ok(Some(text)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(e.to_string()),
            },
            BundleRoot::BuiltIn(dir) => match BUILT_IN.get_file(dir.path().join(relative)) {
                None => Ok(None),
                Some(file) => {
                    file.contents_utf8().map(|t| Some(t.to_string())).ok_or_else(|| "not UTF-8".to_string())
                }
            },
        }
    }
}

/// The YAML syntax errors of every other `.yaml`/`.yml` file of the bundle, in path order. When
/// `lab.yaml` cannot be read, which files it references is unknown, yet each file's own errors
/// are still listed rather than hidden behind the first one.
fn yaml_syntax_problems(root: &BundleRoot) -> Vec<Problem> {
    fn walk_disk(dir: &Path, prefix: &Path, into: &mut Vec<String>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for entry in entries.flatten() {
            let path = entry.path();
            let relative = prefix.join(entry.file_name());
            if path.is_dir() {
                walk_disk(&path, &relative, into);
            } else {
                into.push(relative.to_string_lossy().into_owned());
            }
        }
    }
    fn walk_built_in(dir: &Dir<'static>, bundle: &Path, into: &mut Vec<String>) {
        for file in dir.files() {
            if let Ok(relative) = file.path().strip_prefix(bundle) {
                into.push(relative.to_string_lossy().into_owned());
            }
        }
        for sub in dir.dirs() {
            walk_built_in(sub, bundle, into);
        }
    }
    let mut relatives = Vec::new();
    match root {
        BundleRoot::Dir(path) => walk_disk(path, Path::new(""), &mut relatives),
        BundleRoot::BuiltIn(dir) => walk_built_in(dir, dir.path(), &mut relatives),
    }
    relatives.sort();
    let mut problems = Vec::new();
    for relative in relatives {
        let yaml = relative.ends_with(".yaml") || relative.ends_with(".yml");
        if !yaml || relative == LAB_FILE {
            continue;
        }
        let Ok(Some(text)) = root.read(&relative) else { continue };
        let file = SourceFile { display: root.display_file(&relative), text: Arc::new(text) };
        if let Err(error) = serde_saphyr::from_multiple::<Value>(&file.text) {
            problems.push(file.yaml_error(&error));
        }
    }
    problems
}

/// A loaded, checked lab bundle: the model and every file it refers to, parsed.
#[derive(Debug, Clone)]
pub struct Bundle {
    /// The model from `lab.yaml`.
    pub lab: Lab,
    /// Where it came from.
    pub root: BundleRoot,
    /// Manifest documents by path relative to the bundle (every stage's and variant's), in file order.
    pub manifests: BTreeMap<String, Vec<Value>>,
    /// Expected objects, pod specs and probes by path relative to the bundle (`expected/…`).
    pub expected: ExpectedFiles,
    lab_file: SourceFile,
}

impl Bundle {
    /// `lab.yaml` as shown to the user.
    pub fn lab_file(&self) -> &str {
        &self.lab_file.display
    }
}

/// What reading a bundle gave: the bundle when `lab.yaml` itself could be read, and every problem.
#[derive(Debug)]
pub struct Loaded {
    /// The bundle, unless `lab.yaml` could not be parsed.
    pub bundle: Option<Bundle>,
    /// Every problem found, in file and line order.
    pub problems: Vec<Problem>,
}

/// Loads and checks the bundle at `root`; any problem makes it [`Error::Invalid`].
pub fn load(root: BundleRoot) -> Result<Bundle> {
    let display = root.display();
    let loaded = read(root)?;
    match loaded.bundle {
        Some(bundle) if loaded.problems.is_empty() => Ok(bundle),
        _ => Err(Error::Invalid { bundle: display, problems: loaded.problems }),
    }
}

/// Loads the bundle in a directory, or the one whose `lab.yaml` is given.
pub fn load_path(path: &Path) -> Result<Bundle> {
    load(root_of_path(path)?)
}

/// The bundle root a path names: a bundle directory or its `lab.yaml`.
pub fn root_of_path(path: &Path) -> Result<BundleRoot> {
    let dir = if path.file_name().is_some_and(|n| n == LAB_FILE) && path.is_file() {
        path.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
    } else {
        path.to_path_buf()
    };
    if dir.join(LAB_FILE).is_file() {
        Ok(BundleRoot::Dir(dir))
    } else {
        Err(Error::NotABundle(path.display().to_string()))
    }
}

/// Every bundle in a lab source, sorted by directory name: the embedded tree, or a `--labs`
/// directory holding bundle directories (or itself one bundle).
pub fn roots(source: &LabSource) -> Result<Vec<BundleRoot>> {
    let mut roots = match source {
        LabSource::BuiltIn => BUILT_IN
            .dirs()
            .filter(|dir| BUILT_IN.get_file(dir.path().join(LAB_FILE)).is_some())
            .map(BundleRoot::BuiltIn)
            .collect(),
        LabSource::Dir(path) if path.join(LAB_FILE).is_file() => vec![BundleRoot::Dir(path.clone())],
        LabSource::Dir(path) => {
            let io = |source| Error::Io { path: path.display().to_string(), source };
            let mut roots = Vec::new();
            for entry in std::fs::read_dir(path).map_err(io)? {
                let entry = entry.map_err(io)?;
                if entry.path().join(LAB_FILE).is_file() {
                    roots.push(BundleRoot::Dir(entry.path()));
                }
            }
            roots
        }
    };
    roots.sort_by_key(BundleRoot::dir_name);
    Ok(roots)
}

/// Loads every bundle of a source; the first invalid one is the error.
pub fn load_all(source: &LabSource) -> Result<Vec<Bundle>> {
    roots(source)?.into_iter().map(load).collect()
}

/// Loads the lab with this id from a source, or says which ids exist.
pub fn find(source: &LabSource, id: &str) -> Result<Bundle> {
    let roots = roots(source)?;
    match roots.iter().position(|root| root.dir_name() == id) {
        Some(index) => load(roots[index].clone()),
        None => Err(Error::UnknownLab {
            id: id.to_string(),
            known: roots.iter().map(BundleRoot::dir_name).collect(),
        }),
    }
}

/// The name of the course file at the root of a lab source.
pub const COURSE_FILE: &str = "course.yaml";

/// `course.yaml` as written: the course title and its labs in order.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CourseFile {
    #[allow(dead_code, reason = "read only to reject other versions")]
    api_version: super::model::ApiVersion,
    #[allow(dead_code, reason = "read only to reject other kinds")]
    kind: CourseKind,
    title: super::model::Text,
    labs: Vec<Spanned<String>>,
}

/// The only `kind` a course file has.
#[derive(Debug, Clone, Copy, serde::Deserialize)]
enum CourseKind {
    /// A course.
    Course,
}

/// The course of a lab source: its title and the ids of its labs in the order learners take them.
#[derive(Debug, Clone)]
pub struct Course {
    /// The course title.
    pub title: super::model::Text,
    /// Lab ids in course order, with where each is written (for diagnostics).
    pub labs: Vec<Spanned<String>>,
    file: SourceFile,
}

impl Course {
    /// The course file as shown to the user.
    pub fn file(&self) -> &str {
        &self.file.display
    }

    /// Where a course entry is written, as `file:line:col`.
    pub fn location_of(&self, entry: &Spanned<String>) -> String {
        let at = entry.referenced;
        format!("{}:{}:{}", self.file.display, at.line(), at.column())
    }
}

/// What reading a source's course file gave: the course when the file parsed, and every problem
/// (a malformed file, an entry naming no lab bundle, a lab listed twice).
#[derive(Debug, Default)]
pub struct CourseRead {
    /// The course, unless there is no course file or it could not be parsed.
    pub course: Option<Course>,
    /// Every problem found, in line order.
    pub problems: Vec<Problem>,
}

/// Reads the course file of a lab source (`labs/course.yaml` built in, `DIR/course.yaml` with
/// `--labs DIR`) and checks each entry against the source's bundles. A source without a course
/// file (or a `--labs` path that is itself one bundle) has no course and no problems.
pub fn read_course(source: &LabSource) -> Result<CourseRead> {
    let file = match source {
        LabSource::BuiltIn => match BUILT_IN.get_file(COURSE_FILE) {
            None => return Ok(CourseRead::default()),
            Some(file) => SourceFile {
                display: format!("labs/{COURSE_FILE}"),
                text: Arc::new(String::from_utf8_lossy(file.contents()).into_owned()),
            },
        },
        LabSource::Dir(dir) if dir.join(LAB_FILE).is_file() => return Ok(CourseRead::default()),
        LabSource::Dir(dir) => {
            let path = dir.join(COURSE_FILE);
            match std::fs::read_to_string(&path) {
                Ok(text) => SourceFile { display: path.display().to_string(), text: Arc::new(text) },
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(CourseRead::default()),
                Err(source) => return Err(Error::Io { path: path.display().to_string(), source }),
            }
        }
    };
    let parsed: CourseFile = match serde_saphyr::from_str(&file.text) {
        Ok(parsed) => parsed,
        Err(error) => return Ok(CourseRead { course: None, problems: vec![file.yaml_error(&error)] }),
    };
    let known: Vec<String> = roots(source)?.iter().map(BundleRoot::dir_name).collect();
    let mut problems = Vec::new();
    let mut seen: BTreeMap<&str, u64> = BTreeMap::new();
    for entry in &parsed.labs {
        if let Some(first_line) = seen.get(entry.value.as_str()) {
            problems.push(file.at(
                entry.referenced,
                "listed again",
                format!("the course lists lab {:?} twice (first on line {first_line})", entry.value),
                None,
            ));
            continue;
        }
        seen.insert(&entry.value, entry.referenced.line());
        if !known.contains(&entry.value) {
            let listed = if known.is_empty() { "none".to_string() } else { known.join(", ") };
            problems.push(file.at(
                entry.referenced,
                "no such lab",
                format!("the course lists lab {:?}, which has no bundle (labs: {listed})", entry.value),
                Some(format!(
                    "add the bundle directory {}/ with a lab.yaml, or remove the entry",
                    entry.value
                )),
            ));
        }
    }
    let course = Course { title: parsed.title, labs: parsed.labs, file };
    Ok(CourseRead { course: Some(course), problems })
}

/// The course of a source for `labs list`: `Ok(None)` without a course file, an
/// [`Error::InvalidCourse`] when the file cannot be parsed. Entries naming no bundle are not an error
/// here (`labs list` marks them; `lint` reports them).
pub fn course(source: &LabSource) -> Result<Option<Course>> {
    let read = read_course(source)?;
    match read.course {
        Some(course) => Ok(Some(course)),
        None if read.problems.is_empty() => Ok(None),
        None => {
            let file = read.problems[0].file.clone();
            Err(Error::InvalidCourse { file, problems: read.problems })
        }
    }
}

/// Reads and checks a bundle, collecting every problem. `Err` only when there is no `lab.yaml`.
pub fn read(root: BundleRoot) -> Result<Loaded> {
    let text = match root.read(LAB_FILE) {
        Ok(Some(text)) => text,
        Ok(None) => return Err(Error::NotABundle(root.display())),
        Err(reason) => {
            let problem = problem_without_position(
                &root.display_file(LAB_FILE),
                format!("cannot read: {reason}"),
                None,
            );
            return Ok(Loaded { bundle: None, problems: vec![problem] });
        }
    };
    let lab_file = SourceFile { display: root.display_file(LAB_FILE), text: Arc::new(text) };
    let lab: Lab = match serde_saphyr::from_str(&lab_file.text) {
        Ok(lab) => lab,
        Err(error) => {
            let mut problems = vec![lab_file.yaml_error(&error)];
            problems.extend(yaml_syntax_problems(&root));
            return Ok(Loaded { bundle: None, problems });
        }
    };
    let mut checker = Checker {
        root: &root,
        lab_file: &lab_file,
        problems: Vec::new(),
        manifests: BTreeMap::new(),
        expected: BTreeMap::new(),
    };
    checker.check(&lab);
    let Checker { mut problems, manifests, expected, .. } = checker;
    sort_problems(&mut problems);
    Ok(Loaded { bundle: Some(Bundle { lab, root, manifests, expected, lab_file }), problems })
}

/// Orders problems by file, then line and column (problems without a position first).
pub fn sort_problems(problems: &mut [Problem]) {
    problems.sort_by(|a, b| (&a.file, a.position).cmp(&(&b.file, b.position)));
}

/// A problem pointing into a bundle's `lab.yaml`, for lint.
pub(super) fn problem_at<T>(
    bundle: &Bundle,
    spanned: &Spanned<T>,
    label: &str,
    message: String,
    help: Option<String>,
) -> Problem {
    bundle.lab_file.at(spanned.referenced, label, message, help)
}

struct Checker<'a> {
    root: &'a BundleRoot,
    lab_file: &'a SourceFile,
    problems: Vec<Problem>,
    manifests: BTreeMap<String, Vec<Value>>,
    expected: ExpectedFiles,
}

impl Checker<'_> {
    fn at<T>(&mut self, spanned: &Spanned<T>, label: &str, message: String, help: Option<&str>) {
        let problem = self.lab_file.at(spanned.referenced, label, message, help.map(str::to_string));
        self.problems.push(problem);
    }

    fn check(&mut self, lab: &Lab) {
        let id = &lab.id.value;
        let valid_id = !id.is_empty()
            && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !id.starts_with('-')
            && !id.ends_with('-');
        if !valid_id {
            self.at(
                &lab.id,
                "this id",
                format!("lab id {id:?} must be lowercase letters, digits and '-'"),
                None,
            );
        }
        let dir = self.root.dir_name();
        if dir != *id {
            self.at(
                &lab.id,
                "this id",
                format!("lab id {id:?} differs from its bundle directory {dir:?}"),
                Some("rename the directory or the id: `labs list` and `start` find a lab by its directory"),
            );
        }
        if lab.stages.is_empty() {
            self.at(&lab.id, "this lab", "the lab has no stages".to_string(), None);
        }
        if lab.tasks.is_empty() {
            self.at(&lab.id, "this lab", "the lab has no tasks".to_string(), None);
        }
        self.duplicates("variant", lab.variants.iter().map(|v| &v.id));
        self.duplicates("stage", lab.stages.iter().map(|s| &s.id));
        self.duplicates("task", lab.tasks.iter().map(|t| &t.id));
        self.check_stages(lab);
        self.check_needs(lab);
        for task in &lab.tasks {
            self.check_task(lab, task);
        }
    }

    fn duplicates<'s>(&mut self, what: &str, ids: impl Iterator<Item = &'s Spanned<String>>) {
        let mut seen: BTreeMap<&str, &Spanned<String>> = BTreeMap::new();
        for id in ids {
            if let Some(first) = seen.get(id.value.as_str()) {
                let first_line = first.referenced.line();
                self.at(
                    id,
                    "duplicate",
                    format!("duplicate {what} id {:?} (first defined on line {first_line})", id.value),
                    None,
                );
            } else {
                seen.insert(&id.value, id);
            }
        }
    }

    fn check_stages(&mut self, lab: &Lab) {
        let variant_ids: BTreeSet<&str> = lab.variants.iter().map(|v| v.id.value.as_str()).collect();
        for stage in &lab.stages {
            for manifest in &stage.manifests {
                self.manifest(manifest);
            }
            for (name, variant) in &stage.variants {
                if !variant_ids.contains(name.as_str()) {
                    let known = variant_ids.iter().copied().collect::<Vec<_>>().join(", ");
                    self.at(
                        &stage.id,
                        "in this stage",
                        format!("stage {:?} has variant {name:?}, which the lab does not declare (variants: {known})", stage.id.value),
                        Some("declare it under the top-level `variants`"),
                    );
                }
                for manifest in &variant.manifests {
                    self.manifest(manifest);
                }
                self.waits(&stage.id, &variant.waits);
            }
            if !stage.variants.is_empty() {
                for id in &variant_ids {
                    if !stage.variants.contains_key(*id) {
                        self.at(
                            &stage.id,
                            "this stage",
                            format!(
                                "stage {:?} has variants but none for lab variant {id:?}",
                                stage.id.value
                            ),
                            None,
                        );
                    }
                }
            }
            self.waits(&stage.id, &stage.waits);
        }
    }

    fn waits(&mut self, stage: &Spanned<String>, waits: &[super::model::Wait]) {
        for wait in waits {
            let target = format!("{} {}", wait.target.kind, wait.target.name);
            match (wait.condition, wait.symptom) {
                (WaitFor::StalledAsIntended, None) => self.at(
                    stage,
                    "in this stage",
                    format!(
                        "stage {:?}: the stalledAsIntended wait on {target} needs a `symptom`",
                        stage.value
                    ),
                    Some("symptom: imagePullBackOff, unschedulable or desiredDropped"),
                ),
                (WaitFor::StalledAsIntended, Some(_)) | (_, None) => {}
                (_, Some(_)) => self.at(
                    stage,
                    "in this stage",
                    format!(
                        "stage {:?}: only a stalledAsIntended wait takes a `symptom` (wait on {target})",
                        stage.value
                    ),
                    None,
                ),
            }
        }
    }

    /// Checks a bundle path and reads the file; `None` (with a problem) when it cannot.
    fn file(&mut self, reference: &Spanned<String>, what: &str) -> Option<SourceFile> {
        let relative = &reference.value;
        let inside = !relative.is_empty()
            && Path::new(relative)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            self.at(
                reference,
                "this path",
                format!("{what} {relative:?} must be a relative path inside the bundle"),
                None,
            );
            return None;
        }
        match self.root.read(relative) {
            Ok(Some(text)) => {
                Some(SourceFile { display: self.root.display_file(relative), text: Arc::new(text) })
            }
            Ok(None) => {
                let shown = self.root.display_file(relative);
                self.at(reference, "this file", format!("{what} {relative} does not exist ({shown})"), None);
                None
            }
            Err(reason) => {
                self.at(reference, "this file", format!("cannot read {what} {relative}: {reason}"), None);
                None
            }
        }
    }

    fn manifest(&mut self, reference: &Spanned<String>) {
        if self.manifests.contains_key(&reference.value) {
            return;
        }
        let Some(file) = self.file(reference, "manifest") else { return };
        match serde_saphyr::from_multiple::<Value>(&file.text) {
            Err(error) => self.problems.push(file.yaml_error(&error)),
            Ok(documents) => {
                let documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
                if documents.is_empty() {
                    self.problems.push(file.whole("the manifest holds no objects".to_string(), None));
                }
                for (index, document) in documents.iter().enumerate() {
                    let has = |field: &str| {
                        document.get(field).and_then(Value::as_str).is_some_and(|s| !s.is_empty())
                    };
                    let named = document
                        .pointer("/metadata/name")
                        .and_then(Value::as_str)
                        .is_some_and(|s| !s.is_empty());
                    if !(has("apiVersion") && has("kind") && named) {
                        self.problems.push(file.whole(
                            format!("document {} needs apiVersion, kind and metadata.name", index + 1),
                            None,
                        ));
                    }
                }
                self.manifests.insert(reference.value.clone(), documents);
            }
        }
    }

    /// Reads a single-document YAML file of the bundle (expected object, pod, probe).
    fn expected_file(&mut self, reference: &Spanned<String>) -> Option<Value> {
        if let Some(value) = self.expected.get(&reference.value) {
            return Some(value.clone());
        }
        let file = self.file(reference, "file")?;
        match serde_saphyr::from_str::<Value>(&file.text) {
            Err(error) => {
                self.problems.push(file.yaml_error(&error));
                None
            }
            Ok(value) if !value.is_object() => {
                self.problems
                    .push(file.whole("the file must hold one YAML map (a partial object)".to_string(), None));
                None
            }
            Ok(value) => {
                self.expected.insert(reference.value.clone(), value.clone());
                Some(value)
            }
        }
    }

    fn check_needs(&mut self, lab: &Lab) {
        let ids: BTreeSet<&str> = lab.tasks.iter().map(|t| t.id.value.as_str()).collect();
        for task in &lab.tasks {
            for need in &task.needs {
                if need.value == task.id.value {
                    self.at(need, "itself", format!("task {:?} needs itself", task.id.value), None);
                } else if !ids.contains(need.value.as_str()) {
                    let known = ids.iter().copied().collect::<Vec<_>>().join(", ");
                    self.at(
                        need,
                        "unknown task",
                        format!(
                            "task {:?} needs unknown task {:?} (tasks: {known})",
                            task.id.value, need.value
                        ),
                        None,
                    );
                }
            }
        }
        // Cycles: depth-first search over `needs`, reporting each cycle once at the edge that closes it.
        let index: BTreeMap<&str, usize> =
            lab.tasks.iter().enumerate().map(|(i, t)| (t.id.value.as_str(), i)).collect();
        let mut state = vec![Visit::New; lab.tasks.len()];
        let mut stack = Vec::new();
        for start in 0..lab.tasks.len() {
            self.visit(lab, &index, start, &mut state, &mut stack);
        }
    }

    fn visit(
        &mut self,
        lab: &Lab,
        index: &BTreeMap<&str, usize>,
        at: usize,
        state: &mut [Visit],
        stack: &mut Vec<usize>,
    ) {
        if state[at] != Visit::New {
            return;
        }
        state[at] = Visit::OnPath;
        stack.push(at);
        for need in &lab.tasks[at].needs {
            let Some(&next) = index.get(need.value.as_str()) else { continue };
            if next == at {
                continue; // reported as "needs itself"
            }
            match state[next] {
                Visit::New => self.visit(lab, index, next, state, stack),
                Visit::OnPath => {
                    let from = stack.iter().position(|&i| i == next).unwrap_or(0);
                    let mut cycle: Vec<&str> =
                        stack[from..].iter().map(|&i| lab.tasks[i].id.value.as_str()).collect();
                    cycle.push(&lab.tasks[next].id.value);
                    self.at(
                        need,
                        "closes the cycle",
                        format!("`needs` form a cycle: {}", cycle.join(" → ")),
                        None,
                    );
                }
                Visit::Done => {}
            }
        }
        stack.pop();
        state[at] = Visit::Done;
    }

    fn check_task(&mut self, lab: &Lab, task: &super::model::Task) {
        let id = &task.id;
        let has_quiz = task.expect.iter().any(|e| matches!(e, Expectation::Quiz(_)));
        match task.kind {
            TaskKind::Quiz if !has_quiz => {
                self.at(id, "this task", format!("quiz task {:?} has no `quiz` expectation", id.value), None)
            }
            TaskKind::Task if has_quiz => self.at(
                id,
                "this task",
                format!("task {:?} has a `quiz` expectation but is not `kind: quiz`", id.value),
                None,
            ),
            _ => {}
        }
        for (n, expectation) in task.expect.iter().enumerate() {
            let context = format!("task {:?}, expectation {} ({})", id.value, n + 1, expectation.name());
            let complain = |checker: &mut Self, message: String| {
                checker.at(id, "in this task", format!("{context}: {message}"), None)
            };
            match expectation {
                Expectation::Match(m) => {
                    let available = match (&m.expected, &m.expected_file) {
                        (Some(_), Some(_)) | (None, None) => {
                            complain(self, "give exactly one of `expected` and `expectedFile`".to_string());
                            continue;
                        }
                        (Some(_), None) => true,
                        (None, Some(file)) => self.expected_file(file).is_some(),
                    };
                    // A missing or unreadable file is already reported.
                    let error = grade::prepare_match(m, &self.expected).err().map(|e| e.to_string());
                    if let (true, Some(error)) = (available, error) {
                        complain(self, error);
                    }
                }
                Expectation::Quantity(q) => {
                    if let Err(error) = grade::prepare_quantity(q) {
                        complain(self, error.to_string());
                    }
                }
                Expectation::Schedulable(s) => match (&s.pods, &s.pod_file) {
                    (Some(_), None) => {}
                    (None, Some(file)) => {
                        self.expected_file(file);
                    }
                    _ => complain(self, "give exactly one of `pods` and `podFile`".to_string()),
                },
                Expectation::QuotaInForce(q) => {
                    if crate::k8s::quantity::Quantity::from_json(&q.hard).is_err() {
                        complain(
                            self,
                            format!("hard {} is not a Kubernetes quantity", grade::partial::show(&q.hard)),
                        );
                    }
                    if let Some(file) = &q.probe_file {
                        self.expected_file(file);
                    }
                }
                Expectation::Rollout(r) => {
                    if let Some(stage) = &r.broken_stage
                        && !lab.stages.iter().any(|s| &s.id.value == stage)
                    {
                        complain(self, format!("brokenStage {stage:?} is not a stage of the lab"));
                    }
                }
                Expectation::Quiz(q) => {
                    if q.fact.is_none() && q.accept.is_empty() && q.accept_by_variant.is_empty() {
                        complain(self, "give `fact`, `accept` or `acceptByVariant`".to_string());
                    }
                    for variant in q.accept_by_variant.keys() {
                        if lab.variant(variant).is_none() {
                            complain(self, format!("acceptByVariant names unknown variant {variant:?}"));
                        }
                    }
                }
                Expectation::Absent(_)
                | Expectation::Count(_)
                | Expectation::DevicePluginConfig(_)
                | Expectation::AlertRule(_) => {}
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    OnPath,
    Done,
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
        let error = serde_saphyr::from_str::<BTreeMap<String, u8>>("a: [1]\n").unwrap_err();
        let problem = file.yaml_error(&error);
        assert_eq!(problem.position, Some(Position { line: 1, column: 4 }));
        assert!(problem.to_string().starts_with("lab.yaml:1:4: a: "), "{problem}");
        let whole = file.whole("no objects".into(), None);
        assert_eq!(whole.to_string(), "lab.yaml: no objects");
        assert_eq!(whole.render(GraphicalTheme::none()).trim(), "x lab.yaml: no objects");
    }
}
