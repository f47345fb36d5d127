//! The checks a bundle gets before any cluster is involved: ids, stages, files, `needs`, and each task's expectations.

use std::{
    collections::{BTreeMap, BTreeSet},
    path::{Component, Path},
    sync::Arc,
};

use serde_json::Value;

use super::{
    BundleRoot,
    diagnostics::{Problem, SourceFile},
};
use crate::{
    grade::{self, ExpectedFiles},
    lab::model::{Expectation, Lab, Spanned, TaskKind, WaitFor},
};

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
    fn at<T>(&mut self, spanned: &Spanned<T>, label: &str, message: String, help: Option<&str>) {
        let problem = self.lab_file.at(spanned.referenced, label, message, help.map(str::to_string));
        self.problems.push(problem);
    }

    /// Checks `lab`, reading and parsing every file it names.
    pub(super) fn check(&mut self, lab: &Lab) {
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

    fn waits(&mut self, stage: &Spanned<String>, waits: &[crate::lab::model::Wait]) {
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

    fn check_task(&mut self, lab: &Lab, task: &crate::lab::model::Task) {
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
