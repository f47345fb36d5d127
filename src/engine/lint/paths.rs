//! Lint's schema check: every field a lab names — in a `match`'s expected object and its `lists` and `quantities`, a `quantity`'s path, a fact's path, and the field selections of every CEL expression — resolved against its kind's OpenAPI schema.
//!
//! Built-in kinds come from k8s-openapi, custom resources from the CRDs among the lab's own
//! manifests ([`crate::k8s::schema`]); a kind of an API group neither knows (a CRD the cluster
//! already has) is not checked. An unknown field is reported where it is written, with the field
//! it most likely misspells: `unavailableReplica: null` would otherwise hold on every object,
//! since `null` means absent, and `updatedReplica: 3` would fail only at selftest.

use crate::{
    grade::path::{FieldPath, Segment},
    i18n::Message,
    k8s::{
        cel::{Expression, SelectionRoot},
        schema::{self, KindLookup, Kinds, Node, Step},
    },
    lab::{
        loader::{Bundle, Problem, YamlNode, YamlShape},
        model::{CelExpectation, Expectation, FactCapture, Spanned, Target, Wait, WaitFor},
    },
    msg,
};

/// Every field path of `bundle` that its kind's schema does not have, as problems.
pub fn path_problems(bundle: &Bundle) -> Vec<Problem> {
    let crds = bundle.manifests.values().flatten().filter(|document| {
        document.get("kind").and_then(serde_json::Value::as_str) == Some("CustomResourceDefinition")
    });
    let kinds = Kinds::new(schema::builtin(), crds);
    let Some(tree) = bundle.lab_tree() else { return Vec::new() };
    let mut check = PathCheck { bundle, kinds: &kinds, problems: Vec::new() };
    for (t, task) in bundle.lab.tasks.iter().enumerate() {
        for (e, expectation) in task.expect.iter().enumerate() {
            let (t, e) = (t.to_string(), e.to_string());
            let node = tree.path(&["tasks", &t, "expect", &e, expectation.name()]);
            check.expectation(expectation, node);
        }
    }
    for (s, stage) in bundle.lab.stages.iter().enumerate() {
        let s = s.to_string();
        for (w, wait) in stage.waits.iter().enumerate() {
            check.wait(wait, tree.path(&["stages", &s, "waits", &w.to_string()]));
        }
        for (name, variant) in &stage.variants {
            for (w, wait) in variant.waits.iter().enumerate() {
                check.wait(wait, tree.path(&["stages", &s, "variants", name, "waits", &w.to_string()]));
            }
        }
        for (f, fact) in stage.facts.iter().enumerate() {
            check.fact(fact, tree.path(&["stages", &s, "facts", &f.to_string()]));
        }
    }
    check.problems
}

/// The walk over one bundle.
struct PathCheck<'b> {
    bundle: &'b Bundle,
    kinds: &'b Kinds,
    problems: Vec<Problem>,
}

/// What a path resolved to, when it did not.
enum Miss<'a> {
    /// `at` has no field `field`.
    Unknown { at: FieldPath, field: String, known: Vec<&'a str>, suggestion: Option<&'a str> },
    /// `at` is a scalar of this type.
    Scalar { at: FieldPath, type_: &'a str },
    /// `at` is a list where an object was wanted.
    List { at: FieldPath },
    /// `at` is not a list where one was wanted.
    NotAList { at: FieldPath },
}

/// How a path steps through lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lists {
    /// Written without indices (`lists:` and `quantities:` keys): a key after a list is a key
    /// of its elements.
    Implicit,
    /// Indexed (`spec.containers[0].image`): a key after a list is a mistake.
    Indexed,
}

/// What a CEL variable holds: one object of a kind, or a list of them.
#[derive(Clone, Copy)]
struct Bound<'k> {
    node: Node<'k>,
    list: bool,
    kind: &'k str,
}

impl<'b> PathCheck<'b> {
    /// The schema of a target's kind, or `None` (a problem when the kind is unknown in a known
    /// API group).
    fn root(&mut self, target: (&str, &str), node: Option<&YamlNode>) -> Option<Node<'b>> {
        let (api_version, kind) = target;
        match self.kinds.lookup(api_version, kind) {
            KindLookup::Found(root) => Some(root),
            KindLookup::Unchecked => None,
            KindLookup::Unknown { suggestion } => {
                let location = node.and_then(|n| n.entry("kind")).map(|(key, _)| key.referenced);
                let help = suggestion.map(|s| msg!("lint-did-you-mean", suggestion = s));
                let message = msg!("lint-unknown-kind", api_version = api_version, kind = kind);
                self.push(None, location, msg!("loader-label-here"), message, help);
                None
            }
        }
    }

    fn push(
        &mut self,
        file: Option<&str>,
        location: Option<serde_saphyr::Location>,
        label: Message,
        message: Message,
        help: Option<Message>,
    ) {
        let location = location.unwrap_or(serde_saphyr::Location::UNKNOWN);
        self.problems.push(self.bundle.problem_at_location(file, location, label, message, help));
    }

    fn expectation(&mut self, expectation: &'b Expectation, node: Option<&YamlNode>) {
        let target_of = |target: &'b Target| (target.api_version.as_str(), target.kind.as_str());
        let target_node = node.and_then(|n| n.get("target"));
        match expectation {
            Expectation::Match(m) => {
                let Some(root) = self.root(target_of(&m.target), target_node) else { return };
                let kind = m.target.kind.as_str();
                if let Some(expected) = node.and_then(|n| n.get("expected")) {
                    self.expected(root, expected, None, &FieldPath::root(), kind);
                }
                if let Some(file) = &m.expected_file
                    && let Some(tree) = self.bundle.file_tree(&file.value)
                {
                    self.expected(root, &tree, Some(&file.value), &FieldPath::root(), kind);
                }
                if let Some(YamlShape::Map(entries)) = node.and_then(|n| n.get("lists")).map(|n| &n.shape) {
                    for (key, _) in entries {
                        self.path(root, &key.value, Lists::Implicit, kind, Some(key.referenced));
                    }
                }
                let quantities = node.and_then(|n| n.get("quantities"));
                for (i, path) in m.quantities.iter().enumerate() {
                    let location = quantities.and_then(|q| q.at(i)).map(|n| n.location);
                    self.path(root, path, Lists::Implicit, kind, location);
                }
            }
            Expectation::Quantity(q) => {
                let Some(root) = self.root(target_of(&q.target), target_node) else { return };
                let location = node.and_then(|n| n.get("path")).map(|n| n.location);
                self.path(root, &q.path, Lists::Indexed, &q.target.kind, location);
            }
            Expectation::Absent(a) => {
                self.root(target_of(&a.target), target_node);
            }
            Expectation::Count(c) => {
                self.root(target_of(&c.target), target_node);
            }
            Expectation::Cel(c) => self.cel(c, node),
            _ => {}
        }
    }

    fn cel(&mut self, check: &'b CelExpectation, node: Option<&YamlNode>) {
        let mut bound: Vec<(&str, Option<Bound<'b>>)> = Vec::new();
        if let Some(target) = &check.target {
            let root = self.root((&target.api_version, &target.kind), node.and_then(|n| n.get("target")));
            let kind = target.kind.as_str();
            bound.push((CelExpectation::OBJECT, root.map(|node| Bound { node, list: false, kind })));
        }
        for (name, target) in &check.targets {
            let target_node = node.and_then(|n| n.path(&["targets", name]));
            let root = self.root((&target.api_version, &target.kind), target_node);
            let (list, kind) = (target.name.is_none(), target.kind.as_str());
            bound.push((name, root.map(|node| Bound { node, list, kind })));
        }
        self.selections(&check.expression, &check.variables(), &bound);
    }

    fn wait(&mut self, wait: &'b Wait, node: Option<&YamlNode>) {
        let target = (wait.target.api_version.as_str(), wait.target.kind.as_str());
        let root = self.root(target, node.and_then(|n| n.get("target")));
        if let (WaitFor::Cel, Some(expression)) = (wait.wait_for, &wait.expression) {
            let kind = wait.target.kind.as_str();
            let bound = [("object", root.map(|node| Bound { node, list: false, kind }))];
            self.selections(expression, &["object"], &bound);
        }
    }

    fn fact(&mut self, fact: &'b FactCapture, node: Option<&YamlNode>) {
        let from = (fact.from.api_version.as_str(), fact.from.kind.as_str());
        let root = self.root(from, node.and_then(|n| n.get("from")));
        if let (Some(root), Some(path)) = (root, &fact.path) {
            self.path(root, &path.value, Lists::Indexed, &fact.from.kind, Some(path.referenced));
        }
        if let Some(expression) = &fact.expression {
            let variable = fact.variable();
            let (list, kind) = (variable == "objects", fact.from.kind.as_str());
            let bound = [(variable, root.map(|node| Bound { node, list, kind }))];
            self.selections(expression, &[variable], &bound);
        }
    }

    /// Walks an expected partial object along its kind's schema.
    fn expected(
        &mut self,
        schema: Node<'b>,
        yaml: &YamlNode,
        file: Option<&str>,
        at: &FieldPath,
        kind: &str,
    ) {
        match &yaml.shape {
            YamlShape::Map(entries) => {
                for (key, value) in entries {
                    let here = at.key(&key.value);
                    let miss = match schema.field(&key.value) {
                        Step::Found(next) => {
                            self.expected(next, value, file, &here, kind);
                            continue;
                        }
                        Step::Open => continue,
                        Step::Unknown { known, suggestion } => {
                            Miss::Unknown { at: at.clone(), field: key.value.clone(), known, suggestion }
                        }
                        Step::Scalar(type_) => Miss::Scalar { at: at.clone(), type_ },
                        Step::List | Step::NotAList => Miss::List { at: at.clone() },
                    };
                    let null = matches!(value.shape, YamlShape::Null);
                    self.report(miss, kind, null, file, Some(key.referenced));
                }
            }
            YamlShape::List(items) => match schema.items() {
                Step::Found(next) => {
                    for (i, item) in items.iter().enumerate() {
                        self.expected(next, item, file, &at.index(i), kind);
                    }
                }
                Step::Open => {}
                _ => self.report(Miss::NotAList { at: at.clone() }, kind, false, file, Some(yaml.location)),
            },
            YamlShape::Null | YamlShape::Scalar => {}
        }
    }

    /// Resolves a written path (`status.allocatable["nvidia.com/gpu"]`) along the schema; one
    /// that does not parse is the loader's problem.
    fn path(
        &mut self,
        root: Node<'b>,
        text: &str,
        lists: Lists,
        kind: &str,
        location: Option<serde_saphyr::Location>,
    ) {
        let Ok(path) = text.parse::<FieldPath>() else { return };
        if let Err(miss) = resolve(root, path.segments(), lists) {
            self.report(miss, kind, false, None, location);
        }
    }

    /// Resolves every field selection of a CEL expression, where it starts at a variable bound
    /// to objects of a known kind; a miss points at the field inside the expression.
    fn selections(
        &mut self,
        expression: &Spanned<String>,
        variables: &[&str],
        bound: &[(&str, Option<Bound<'b>>)],
    ) {
        let Ok(compiled) = Expression::compile(&expression.value, variables) else { return };
        for selection in compiled.selections() {
            let Some(start) = start_of(&selection.root, bound) else { continue };
            let Some(first) = selection.fields.first() else { continue };
            let (message, help) = if start.list {
                let SelectionRoot::Variable(variable) = &selection.root else { continue };
                (msg!("lint-cel-list", variable = variable, kind = start.kind), None)
            } else {
                let keys: Vec<Segment> =
                    selection.fields.iter().map(|f| Segment::Key(f.name.clone())).collect();
                let Err(miss) = resolve(start.node, &keys, Lists::Indexed) else { continue };
                let depth = match &miss {
                    Miss::Unknown { at, .. }
                    | Miss::Scalar { at, .. }
                    | Miss::List { at }
                    | Miss::NotAList { at } => at.segments().len(),
                };
                let field = selection.fields.get(depth).unwrap_or(first);
                let problem = describe(miss, start.kind, false);
                let position = (field.line, field.column);
                let label = msg!("loader-label-here");
                self.problems
                    .push(self.bundle.problem_inside(expression, position, label, problem.0, problem.1));
                continue;
            };
            let label = msg!("loader-label-here");
            self.problems.push(self.bundle.problem_inside(
                expression,
                (first.line, first.column),
                label,
                message,
                help,
            ));
        }
    }

    fn report(
        &mut self,
        miss: Miss<'_>,
        kind: &str,
        null: bool,
        file: Option<&str>,
        location: Option<serde_saphyr::Location>,
    ) {
        let label = match miss {
            Miss::Unknown { .. } => msg!("lint-label-unknown-field"),
            _ => msg!("loader-label-here"),
        };
        let (message, help) = describe(miss, kind, null);
        self.push(file, location, label, message, help);
    }
}

/// Walks `segments` from `node`.
fn resolve<'a>(node: Node<'a>, segments: &[Segment], lists: Lists) -> Result<Node<'a>, Miss<'a>> {
    let mut at = FieldPath::root();
    let mut node = node;
    for segment in segments {
        let step = match segment {
            Segment::Key(key) => {
                let mut step = node.field(key);
                if matches!(step, Step::List) && lists == Lists::Implicit {
                    // Declared without indices: the key is one of the elements'.
                    if let Step::Found(items) = node.items() {
                        step = items.field(key);
                    }
                }
                match step {
                    Step::Unknown { known, suggestion } => {
                        return Err(Miss::Unknown { at, field: key.clone(), known, suggestion });
                    }
                    other => other,
                }
            }
            Segment::Index(_) => node.items(),
        };
        node = match step {
            Step::Found(next) => next,
            Step::Open => return Ok(node),
            Step::Scalar(type_) => return Err(Miss::Scalar { at, type_ }),
            Step::List => return Err(Miss::List { at }),
            Step::NotAList => return Err(Miss::NotAList { at }),
            Step::Unknown { .. } => unreachable!("returned above"),
        };
        at = match segment {
            Segment::Key(key) => at.key(key),
            Segment::Index(index) => at.index(*index),
        };
    }
    Ok(node)
}

/// What a selection's start holds: its variable's binding, or for a comprehension variable one
/// element of what it ranges over; `None` when nothing is known about it.
fn start_of<'k>(root: &SelectionRoot, bound: &[(&str, Option<Bound<'k>>)]) -> Option<Bound<'k>> {
    match root {
        SelectionRoot::Variable(name) => bound.iter().find(|(bound_name, _)| bound_name == name)?.1,
        SelectionRoot::ElementOf(range) => {
            let outer = start_of(&range.root, bound)?;
            if range.fields.is_empty() {
                // Ranging over a target's objects: each is an object of its kind.
                return outer.list.then_some(Bound { list: false, ..outer });
            }
            if outer.list {
                return None;
            }
            let keys: Vec<Segment> = range.fields.iter().map(|f| Segment::Key(f.name.clone())).collect();
            match resolve(outer.node, &keys, Lists::Indexed).ok()?.items() {
                Step::Found(items) => Some(Bound { node: items, list: false, kind: outer.kind }),
                _ => None,
            }
        }
    }
}

/// A miss's message and help.
fn describe(miss: Miss<'_>, kind: &str, null: bool) -> (Message, Option<Message>) {
    let path = |at: &FieldPath| if at.segments().is_empty() { kind.to_string() } else { at.to_string() };
    match miss {
        Miss::Unknown { at, field, known, suggestion } => {
            let full = at.key(&field).to_string();
            let message = if null {
                msg!("lint-unknown-field-null", kind = kind, path = &full)
            } else {
                msg!("lint-unknown-field", kind = kind, path = &full)
            };
            let help = match suggestion {
                Some(suggestion) => msg!("lint-did-you-mean", suggestion = at.key(suggestion).to_string()),
                None => msg!("lint-known-fields", parent = path(&at), known = crate::i18n::list(known)),
            };
            (message, Some(help))
        }
        Miss::Scalar { at, type_ } => {
            (msg!("lint-below-scalar", kind = kind, path = path(&at), type_ = type_), None)
        }
        Miss::List { at } => (msg!("lint-is-a-list", kind = kind, path = path(&at)), None),
        Miss::NotAList { at } => (msg!("lint-not-a-list", kind = kind, path = path(&at)), None),
    }
}
