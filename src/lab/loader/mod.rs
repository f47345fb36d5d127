//! Loads lab bundles from a directory or from the binary's embedded `labs/` tree, and checks
//! everything that can be checked without a cluster.
//!
//! Every problem is collected (not just the first) and carries the file, and where known the
//! line and column, rendered by miette with a code snippet. A YAML syntax error or an unknown
//! field stops reading that file; reference errors (missing files, unknown or cyclic `needs`,
//! duplicate ids) are all reported together.

use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    sync::Arc,
};

use include_dir::{Dir, include_dir};
use serde_json::Value;

pub use self::{
    diagnostics::{Position, Problem, sort_problems},
    tree::{YamlNode, YamlShape},
    validate::Gradable,
};
use self::{
    diagnostics::{SourceFile, problem_without_position},
    validate::Checker,
};
use super::model::{Lab, Spanned};
use crate::{
    english_display,
    i18n::{Localized, Message},
    msg,
    session::LabSource,
};

mod diagnostics;
mod tree;
mod validate;

/// Expected partial objects loaded from a bundle's files, by path relative to the bundle.
pub type ExpectedFiles = BTreeMap<String, Value>;

/// The lab bundles compiled into the binary (the repository's `labs/` directory).
pub static BUILT_IN: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/labs");

/// The name of a bundle's main file.
pub const LAB_FILE: &str = "lab.yaml";

/// Errors from finding and loading lab bundles.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The bundle has problems; each names its file and, where known, line and column.
    Invalid {
        /// The bundle's directory as shown to the user.
        bundle: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// The course file cannot be read as a course; each problem names its line and column.
    InvalidCourse {
        /// The course file as shown to the user.
        file: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
    /// No lab has this id.
    UnknownLab {
        /// The id asked for.
        id: String,
        /// The ids that exist.
        known: Vec<String>,
        /// True when only the built-in labs were looked at (no `--labs DIR`), so the lab may be
        /// one of a directory.
        built_in: bool,
    },
    /// The path holds no `lab.yaml`.
    NotABundle(String),
    /// A directory could not be read.
    Io {
        /// The path.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::Invalid { bundle, problems } => {
                msg!("error-invalid-bundle", bundle = bundle, count = problems.len())
            }
            Error::InvalidCourse { file, problems } => {
                msg!("error-invalid-course", file = file, count = problems.len())
            }
            Error::UnknownLab { id, known, built_in } => {
                let known = crate::i18n::list(known);
                if *built_in {
                    msg!("error-unknown-built-in-lab", id = id, known = known)
                } else {
                    msg!("error-unknown-lab", id = id, known = known)
                }
            }
            Error::NotABundle(path) => msg!("error-not-a-bundle", path = path),
            Error::Io { path, source } => {
                msg!("loader-cannot-read-dir", path = path, reason = source.to_string())
            }
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

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

    /// `lab.yaml` as a tree of positions.
    pub(crate) fn lab_tree(&self) -> Option<YamlNode> {
        YamlNode::parse(&self.lab_file.text)
    }

    /// A bundle file (`expected/…`) as a tree of positions.
    pub(crate) fn file_tree(&self, relative: &str) -> Option<YamlNode> {
        YamlNode::parse(&self.root.read(relative).ok()??)
    }

    /// A problem at a position of `lab.yaml` (`file: None`) or of another file of the bundle.
    pub(crate) fn problem_at_location(
        &self,
        file: Option<&str>,
        location: serde_saphyr::Location,
        label: Message,
        message: Message,
        help: Option<Message>,
    ) -> Problem {
        match file.and_then(|relative| Some((relative, self.root.read(relative).ok()??))) {
            Some((relative, text)) => {
                let source = SourceFile { display: self.root.display_file(relative), text: Arc::new(text) };
                source.at(location, label, message, help)
            }
            None => self.lab_file.at(location, label, message, help),
        }
    }

    /// A problem at a line and column inside a scalar of `lab.yaml` (a CEL expression).
    pub(crate) fn problem_inside(
        &self,
        scalar: &Spanned<String>,
        position: (usize, usize),
        label: Message,
        message: Message,
        help: Option<Message>,
    ) -> Problem {
        self.lab_file.inside_scalar(scalar.referenced, &scalar.value, position, label, message, help)
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
            built_in: *source == LabSource::BuiltIn,
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
                msg!("loader-label-listed-again"),
                msg!("loader-course-twice", lab = format!("{:?}", entry.value), line = *first_line),
                None,
            ));
            continue;
        }
        seen.insert(&entry.value, entry.referenced.line());
        if !known.contains(&entry.value) {
            let listed = crate::i18n::list(&known);
            problems.push(file.at(
                entry.referenced,
                msg!("loader-label-no-such-lab"),
                msg!("loader-course-no-bundle", lab = format!("{:?}", entry.value), labs = listed),
                Some(msg!("loader-course-no-bundle-help", lab = &entry.value)),
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
                msg!("loader-cannot-read", reason = reason),
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

/// A problem pointing into a bundle's `lab.yaml`, for lint.
pub(crate) fn problem_at<T>(
    bundle: &Bundle,
    spanned: &Spanned<T>,
    label: Message,
    message: Message,
    help: Option<Message>,
) -> Problem {
    bundle.lab_file.at(spanned.referenced, label, message, help)
}
