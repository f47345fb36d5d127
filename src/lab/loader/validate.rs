//! The checks a bundle gets before any cluster is involved: ids, stages, files, `needs`, and each task's expectations.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Component, Path},
    sync::Arc,
};

use serde_json::Value;

use super::{
    BundleRoot, ExpectedFiles,
    diagnostics::{Problem, SourceFile},
};
use crate::{
    i18n::Message,
    k8s::cel,
    lab::model::{
        CelExpectation, Expectation, Fact, FactCapture, Lab, Schedulability, Spanned, TaskKind, Wait, WaitFor,
    },
    msg,
};

/// Whether grading can judge an expectation at all (its expected source is there, its lists are
/// declared, its paths and quantities parse), asked before any cluster is involved.
///
/// Grading owns the answer: `grade` implements this for the expectation types that need it, so
/// the lab layer never imports `grade` (grade → lab is the one direction, docs/architecture.md).
pub trait Gradable {
    /// `Err` with the message grading would give when it cannot judge this expectation.
    fn gradable(&self, files: &ExpectedFiles) -> Result<(), Message>;
}

/// Collects the problems of one bundle while reading the files `lab.yaml` names.
pub(super) struct Checker<'a> {
    /// Where the bundle's files are read from.
    pub(super) root: &'a BundleRoot,
    /// `lab.yaml`, which problems point into.
    pub(super) lab_file: &'a SourceFile,
    /// Every problem found so far.
    pub(super) problems: Vec<Problem>,
    /// The manifest documents read, by path.
    pub(super) manifests: BTreeMap<String, Vec<Value>>,
    /// The expected files read, by path.
    pub(super) expected: ExpectedFiles,
}

impl Checker<'_> {
    fn at<T>(&mut self, spanned: &Spanned<T>, label: Message, message: Message, help: Option<Message>) {
        let problem = self.lab_file.at(spanned.referenced, label, message, help);
        self.problems.push(problem);
    }

    /// Checks `lab`, reading and parsing every file it names.
    pub(super) fn check(&mut self, lab: &Lab) {
        let id = &lab.id.value;
        let valid_id = !id.is_empty()
            && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !id.starts_with('-')
            && !id.ends_with('-');
        let quoted = format!("{id:?}");
        if !valid_id {
            self.at(&lab.id, msg!("loader-label-this-id"), msg!("loader-lab-id-invalid", id = &quoted), None);
        }
        let dir = self.root.dir_name();
        if dir != *id {
            self.at(
                &lab.id,
                msg!("loader-label-this-id"),
                msg!("loader-lab-id-not-dir", id = &quoted, dir = format!("{dir:?}")),
                Some(msg!("loader-lab-id-not-dir-help")),
            );
        }
        if lab.stages.is_empty() {
            self.at(&lab.id, msg!("loader-label-this-lab"), msg!("loader-no-stages"), None);
        }
        if lab.tasks.is_empty() {
            self.at(&lab.id, msg!("loader-label-this-lab"), msg!("loader-no-tasks"), None);
        }
        self.duplicates(|id| msg!("loader-duplicate-variant", id = id), lab.variants.iter().map(|v| &v.id));
        self.duplicates(|id| msg!("loader-duplicate-stage", id = id), lab.stages.iter().map(|s| &s.id));
        self.duplicates(|id| msg!("loader-duplicate-task", id = id), lab.tasks.iter().map(|t| &t.id));
        self.check_stages(lab);
        self.check_facts(lab);
        self.check_needs(lab);
        for task in &lab.tasks {
            self.check_task(lab, task);
            let task_id = format!("{:?}", task.id.value);
            self.duplicates(
                |id| msg!("loader-duplicate-shortcut", id = id, task = &task_id),
                task.shortcuts.iter().chain(&task.solutions).map(|s| &s.id),
            );
            for shortcut in task.shortcuts.iter().chain(&task.solutions).filter(|s| s.commands.is_empty()) {
                self.at(
                    &shortcut.id,
                    msg!("loader-label-this-shortcut"),
                    msg!(
                        "loader-shortcut-no-commands",
                        shortcut = format!("{:?}", shortcut.id.value),
                        task = &task_id
                    ),
                    None,
                );
            }
        }
    }

    /// Reports every id of `ids` seen before; `what` names the duplicate (given the quoted id).
    fn duplicates<'s>(
        &mut self,
        what: impl Fn(String) -> Message,
        ids: impl Iterator<Item = &'s Spanned<String>>,
    ) {
        let mut seen: BTreeMap<&str, &Spanned<String>> = BTreeMap::new();
        for id in ids {
            if let Some(first) = seen.get(id.value.as_str()) {
                let first_line = first.referenced.line();
                self.at(
                    id,
                    msg!("loader-label-duplicate"),
                    msg!("loader-duplicate", what = what(format!("{:?}", id.value)), line = first_line),
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
                    let known = crate::i18n::list(variant_ids.iter().copied());
                    self.at(
                        &stage.id,
                        msg!("loader-label-in-this-stage"),
                        msg!(
                            "loader-stage-unknown-variant",
                            stage = format!("{:?}", stage.id.value),
                            variant = format!("{name:?}"),
                            known = known
                        ),
                        Some(msg!("loader-stage-unknown-variant-help")),
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
                            msg!("loader-label-this-stage"),
                            msg!(
                                "loader-stage-missing-variant",
                                stage = format!("{:?}", stage.id.value),
                                variant = format!("{id:?}")
                            ),
                            None,
                        );
                    }
                }
            }
            self.waits(&stage.id, &stage.waits);
        }
    }

    fn waits(&mut self, stage: &Spanned<String>, waits: &[Wait]) {
        for wait in waits {
            let target = format!("{} {}", wait.target.kind, wait.target.name);
            let stage_id = format!("{:?}", stage.value);
            let wait_for = serde_json::to_value(wait.wait_for).ok();
            let wait_for = wait_for.as_ref().and_then(Value::as_str).unwrap_or_default();
            // The one field each kind of wait takes beyond target and timeout.
            let needed = match wait.wait_for {
                WaitFor::StalledAsIntended => Some("symptom"),
                WaitFor::Condition => Some("condition"),
                WaitFor::Event => Some("event"),
                WaitFor::Cel => Some("expression"),
                WaitFor::RolledOut | WaitFor::Available | WaitFor::Established => None,
            };
            let given = [
                ("symptom", wait.symptom.is_some()),
                ("condition", wait.condition.is_some()),
                ("event", wait.event.is_some()),
                ("expression", wait.expression.is_some()),
            ];
            let label = || msg!("loader-label-in-this-stage");
            for (field, present) in given {
                match (Some(field) == needed, present) {
                    (true, false) if field == "symptom" => self.at(
                        stage,
                        label(),
                        msg!("loader-wait-needs-symptom", stage = &stage_id, target = &target),
                        Some(msg!("loader-wait-needs-symptom-help")),
                    ),
                    (true, false) => self.at(
                        stage,
                        label(),
                        msg!(
                            "loader-wait-needs-field",
                            stage = &stage_id,
                            wait = wait_for,
                            target = &target,
                            field = field
                        ),
                        None,
                    ),
                    (false, true) if field == "symptom" => self.at(
                        stage,
                        label(),
                        msg!("loader-wait-symptom-unused", stage = &stage_id, target = &target),
                        None,
                    ),
                    (false, true) => self.at(
                        stage,
                        label(),
                        msg!(
                            "loader-wait-field-unused",
                            stage = &stage_id,
                            wait = wait_for,
                            target = &target,
                            field = field
                        ),
                        None,
                    ),
                    _ => {}
                }
            }
            if let (WaitFor::Cel, Some(expression)) = (wait.wait_for, &wait.expression) {
                let wrap = |problem| {
                    msg!("loader-wait-problem", stage = &stage_id, target = &target, problem = problem)
                };
                self.expression(expression, &["object"], wrap);
            }
            if wait.wait_for == WaitFor::StalledAsIntended && wait.target.kind != "DaemonSet" {
                self.at(
                    stage,
                    label(),
                    msg!("loader-wait-stalled-daemonset", stage = &stage_id, target = &target),
                    Some(msg!("loader-wait-stalled-daemonset-help")),
                );
            }
        }
    }

    /// Compiles a CEL expression with the variables it may use; each compile error is a problem
    /// at its line and column inside the expression, said by `wrap` (which names the place).
    fn expression(
        &mut self,
        expression: &Spanned<String>,
        variables: &[&str],
        wrap: impl Fn(Message) -> Message,
    ) {
        let Err(errors) = cel::Expression::compile(&expression.value, variables) else { return };
        for error in &errors.errors {
            let message = wrap(msg!("loader-cel-error", error = &error.message));
            let problem = self.lab_file.inside_scalar(
                expression.referenced,
                &expression.value,
                (error.line, error.column),
                msg!("loader-label-here"),
                message,
                Some(msg!("loader-cel-error-help", variables = crate::i18n::list(variables))),
            );
            self.problems.push(problem);
        }
    }

    /// The facts stages read from the cluster: valid, unique ids; one path or one expression; a
    /// path read from one named object. Every quiz's `fact` must be one the lab captures.
    fn check_facts(&mut self, lab: &Lab) {
        let captures: Vec<&FactCapture> = lab.stages.iter().flat_map(|s| &s.facts).collect();
        self.duplicates(|id| msg!("loader-duplicate-fact", id = id), captures.iter().map(|f| &f.id));
        for capture in &captures {
            let id = format!("{:?}", capture.id.value);
            let label = || msg!("loader-label-this-fact");
            let valid = !capture.id.value.is_empty()
                && capture
                    .id
                    .value
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !capture.id.value.starts_with('-')
                && !capture.id.value.ends_with('-');
            if !valid || capture.id.value == Fact::Variant.key() {
                self.at(&capture.id, label(), msg!("loader-fact-id-invalid", id = &id), None);
            }
            match (&capture.path, &capture.expression) {
                (Some(_), None) if capture.from.name.is_none() => {
                    self.at(&capture.id, label(), msg!("loader-fact-path-needs-name", id = &id), None)
                }
                (Some(path), None) => {
                    if let Err(problem) = capture.gradable(&self.expected) {
                        self.at(path, msg!("loader-label-this-path"), problem, None);
                    }
                }
                (None, Some(expression)) => {
                    let wrap = |problem| msg!("loader-fact-problem", id = &id, problem = problem);
                    self.expression(expression, &[capture.variable()], wrap);
                }
                _ => self.at(&capture.id, label(), msg!("loader-fact-source", id = &id), None),
            }
        }
        let known: Vec<&str> = captures.iter().map(|f| f.id.value.as_str()).collect();
        for task in &lab.tasks {
            for expectation in &task.expect {
                let Expectation::Quiz(quiz) = expectation else { continue };
                let Some(Fact::Captured(fact)) = &quiz.fact else { continue };
                if !known.contains(&fact.as_str()) {
                    let listed = crate::i18n::list(&known);
                    self.at(
                        &task.id,
                        msg!("loader-label-this-task"),
                        msg!(
                            "loader-quiz-unknown-fact",
                            task = format!("{:?}", task.id.value),
                            fact = format!("{fact:?}"),
                            known = listed
                        ),
                        Some(msg!("loader-quiz-unknown-fact-help")),
                    );
                }
            }
        }
    }

    /// Checks a bundle path and reads the file; `None` (with a problem) when it cannot. `what`
    /// says what the file is (`manifest`, `file`).
    fn file(&mut self, reference: &Spanned<String>, what: FileRole) -> Option<SourceFile> {
        let relative = &reference.value;
        let inside = !relative.is_empty()
            && Path::new(relative)
                .components()
                .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
        if !inside {
            let message = match what {
                FileRole::Manifest => msg!("loader-manifest-outside", path = format!("{relative:?}")),
                FileRole::File => msg!("loader-file-outside", path = format!("{relative:?}")),
            };
            self.at(reference, msg!("loader-label-this-path"), message, None);
            return None;
        }
        match self.root.read(relative) {
            Ok(Some(text)) => {
                Some(SourceFile { display: self.root.display_file(relative), text: Arc::new(text) })
            }
            Ok(None) => {
                let shown = self.root.display_file(relative);
                let message = match what {
                    FileRole::Manifest => msg!("loader-manifest-missing", path = relative, shown = shown),
                    FileRole::File => msg!("loader-file-missing", path = relative, shown = shown),
                };
                self.at(reference, msg!("loader-label-this-file"), message, None);
                None
            }
            Err(reason) => {
                let message = match what {
                    FileRole::Manifest => {
                        msg!("loader-manifest-unreadable", path = relative, reason = reason)
                    }
                    FileRole::File => msg!("loader-file-unreadable", path = relative, reason = reason),
                };
                self.at(reference, msg!("loader-label-this-file"), message, None);
                None
            }
        }
    }

    fn manifest(&mut self, reference: &Spanned<String>) {
        if self.manifests.contains_key(&reference.value) {
            return;
        }
        let Some(file) = self.file(reference, FileRole::Manifest) else { return };
        match serde_saphyr::from_multiple::<Value>(&file.text) {
            Err(error) => self.problems.push(file.yaml_error(&error)),
            Ok(documents) => {
                let documents: Vec<Value> = documents.into_iter().filter(|d| !d.is_null()).collect();
                if documents.is_empty() {
                    self.problems.push(file.whole(msg!("loader-manifest-empty"), None));
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
                        self.problems
                            .push(file.whole(msg!("loader-document-unnamed", document = index + 1), None));
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
        let file = self.file(reference, FileRole::File)?;
        match serde_saphyr::from_str::<Value>(&file.text) {
            Err(error) => {
                self.problems.push(file.yaml_error(&error));
                None
            }
            Ok(value) if !value.is_object() => {
                self.problems.push(file.whole(msg!("loader-file-not-a-map"), None));
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
            let task_id = format!("{:?}", task.id.value);
            for need in &task.needs {
                if need.value == task.id.value {
                    self.at(
                        need,
                        msg!("loader-label-itself"),
                        msg!("loader-needs-itself", task = &task_id),
                        None,
                    );
                } else if !ids.contains(need.value.as_str()) {
                    let known = crate::i18n::list(ids.iter().copied());
                    self.at(
                        need,
                        msg!("loader-label-unknown-task"),
                        msg!(
                            "loader-needs-unknown",
                            task = &task_id,
                            need = format!("{:?}", need.value),
                            known = known
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
                        msg!("loader-label-closes-cycle"),
                        msg!("loader-needs-cycle", cycle = cycle.join(" → ")),
                        None,
                    );
                }
                Visit::Done => {}
            }
        }
        stack.pop();
        state[at] = Visit::Done;
    }

    fn check_task(&mut self, lab: &Lab, task: &crate::lab::model::Task) {
        let id = &task.id;
        let task_id = format!("{:?}", id.value);
        let has_quiz = task.expect.iter().any(|e| matches!(e, Expectation::Quiz(_)));
        match task.kind {
            TaskKind::Quiz if !has_quiz => self.at(
                id,
                msg!("loader-label-this-task"),
                msg!("loader-quiz-without-quiz", task = &task_id),
                None,
            ),
            TaskKind::Task if has_quiz => self.at(
                id,
                msg!("loader-label-this-task"),
                msg!("loader-quiz-in-task", task = &task_id),
                None,
            ),
            _ => {}
        }
        for (n, expectation) in task.expect.iter().enumerate() {
            let complain = |checker: &mut Self, problem: Message| {
                let message = msg!(
                    "loader-expectation-problem",
                    task = &task_id,
                    number = n + 1,
                    kind = expectation.name(),
                    problem = problem
                );
                checker.at(id, msg!("loader-label-in-this-task"), message, None)
            };
            match expectation {
                Expectation::Match(m) => {
                    let available = match (&m.expected, &m.expected_file) {
                        (Some(_), Some(_)) | (None, None) => {
                            complain(self, msg!("grade-error-expected-source"));
                            continue;
                        }
                        (Some(_), None) => true,
                        (None, Some(file)) => self.expected_file(file).is_some(),
                    };
                    // A missing or unreadable file is already reported.
                    let error = m.gradable(&self.expected).err();
                    if let (true, Some(error)) = (available, error) {
                        complain(self, error);
                    }
                }
                Expectation::Quantity(q) => {
                    if let Err(error) = q.gradable(&self.expected) {
                        complain(self, error);
                    }
                }
                Expectation::Schedulable(s) => match (&s.pods, &s.pod_file) {
                    (Some(_), None) => {}
                    (None, Some(_)) if s.want == Schedulability::Running => {
                        complain(self, msg!("loader-running-needs-pods"))
                    }
                    (None, Some(file)) => {
                        self.expected_file(file);
                    }
                    _ => complain(self, msg!("loader-schedulable-source")),
                },
                Expectation::QuotaInForce(q) => {
                    if let Err(error) = q.gradable(&self.expected) {
                        complain(self, error);
                    }
                    if let Some(file) = &q.probe_file {
                        self.expected_file(file);
                    }
                }
                Expectation::Rollout(r) => {
                    if let Some(stage) = &r.broken_stage
                        && !lab.stages.iter().any(|s| &s.id.value == stage)
                    {
                        complain(self, msg!("loader-broken-stage-unknown", stage = format!("{stage:?}")));
                    }
                }
                Expectation::Quiz(q) => {
                    if q.fact.is_none() && q.accept.is_empty() && q.accept_by_variant.is_empty() {
                        complain(self, msg!("loader-quiz-nothing-accepted"));
                    }
                    for variant in q.accept_by_variant.keys() {
                        if lab.variant(variant).is_none() {
                            complain(
                                self,
                                msg!("loader-quiz-unknown-variant", variant = format!("{variant:?}")),
                            );
                        }
                    }
                    // `answer` refuses values outside `choices`: an accepted one there could never be given.
                    let accepted = q.accept.iter().chain(q.accept_by_variant.values().flatten());
                    for value in accepted.filter(|_| !q.choices.is_empty()) {
                        if !q.choices.iter().any(|c| c.eq_ignore_ascii_case(value)) {
                            complain(self, msg!("loader-quiz-not-a-choice", value = format!("{value:?}")));
                        }
                    }
                    if q.attempts == Some(0) {
                        complain(self, msg!("loader-quiz-no-attempts"));
                    }
                    for (lang, word) in quiz_placeholder_mismatches(lab, task, q) {
                        complain(self, msg!("loader-quiz-placeholder", lang = lang, word = word));
                    }
                }
                Expectation::Cel(c) => {
                    if c.target.is_none() && c.targets.is_empty() {
                        complain(self, msg!("loader-cel-no-target"));
                    }
                    for name in c.targets.keys().filter(|n| !CelExpectation::valid_target_name(n)) {
                        complain(self, msg!("loader-cel-target-name", name = format!("{name:?}")));
                    }
                    let wrap = |problem: Message| {
                        msg!(
                            "loader-expectation-problem",
                            task = &task_id,
                            number = n + 1,
                            kind = expectation.name(),
                            problem = problem
                        )
                    };
                    self.expression(&c.expression, &c.variables(), wrap);
                }
                Expectation::Absent(_)
                | Expectation::Count(_)
                | Expectation::DevicePluginConfig(_)
                | Expectation::AlertRule(_) => {}
            }
        }
    }
}

/// What a file a bundle names is, as its problems say it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileRole {
    /// A manifest of a stage.
    Manifest,
    /// An expected object, pod or probe.
    File,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    OnPath,
    Done,
}

/// The languages whose description of `task` shows `lab-runner answer LAB TASK WORD` with a WORD
/// other than the quiz's `placeholder` in that language (what `check` tells a learner to type
/// must be what the description says), each with the word the description writes.
fn quiz_placeholder_mismatches(
    lab: &Lab,
    task: &crate::lab::model::Task,
    quiz: &crate::lab::model::QuizCheck,
) -> Vec<(&'static str, String)> {
    let Some(placeholder) = &quiz.placeholder else { return Vec::new() };
    let command = format!("lab-runner answer {} {} ", lab.id.value, task.id.value);
    let mut found = Vec::new();
    for (lang, description, wanted) in
        [("en", &task.description.en, &placeholder.en), ("ja", &task.description.ja, &placeholder.ja)]
    {
        for (at, _) in description.match_indices(&command) {
            let word: String = description[at + command.len()..]
                .chars()
                .take_while(|c| !c.is_whitespace() && *c != '`')
                .collect();
            if word != *wanted {
                found.push((lang, word));
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::model::{Expectation, Lab};

    /// What lint says of a quiz whose placeholder is `placeholder` and whose descriptions say
    /// `en` and `ja`.
    fn mismatches(placeholder: &str, en: &str, ja: &str) -> Vec<(&'static str, String)> {
        let lab: Lab = serde_saphyr::from_str(&format!(
            "apiVersion: lab-runner.io/v1\nid: l\ntitle: {{en: t}}\nbriefing: {{en: b}}\nstages: []\ntasks:\n\
             - {{id: q, kind: quiz, title: {{en: q}}, points: 1, description: {{en: \"{en}\", ja: \"{ja}\"}},\n\
                expect: [{{quiz: {{accept: [x]{placeholder}}}}}]}}\n"
        ))
        .unwrap();
        let task = &lab.tasks[0];
        let Expectation::Quiz(quiz) = &task.expect[0] else { panic!("a quiz") };
        quiz_placeholder_mismatches(&lab, task, quiz)
    }

    #[test]
    fn a_quiz_placeholder_must_be_the_word_its_description_uses() {
        let declared = ", placeholder: {en: NODE, ja: ノード名}";
        let (en, ja) = (
            "Answer with `lab-runner answer l q NODE`.",
            "`lab-runner answer l q ノード名` で答えてください。",
        );
        assert_eq!(mismatches(declared, en, ja), []);
        let ja_other = "`lab-runner answer l q 名前` で答えてください。";
        assert_eq!(mismatches(declared, en, ja_other), [("ja", "名前".to_string())]);
        assert_eq!(
            mismatches(declared, "Answer with `lab-runner answer l q VALUE`.", ja),
            [("en", "VALUE".to_string())]
        );
        // Without a placeholder there is nothing to compare.
        assert_eq!(mismatches("", en, ja_other), []);
    }
}
