//! `check`: observe (one LIST per kind per observation, scoped to what the tasks can match), grade the tasks in `needs` order with
//! [`crate::grade`], and build the report; `--confirm` observes twice and passes only what held
//! both times.
//! Read-only: GET and LIST requests only, plus the `dryRun=All` probes a task declares.

use std::{
    collections::{BTreeMap, BTreeSet},
    time::Duration,
};

use super::{Result, cluster::Cluster, inventory, observe};
use crate::{
    grade::{self, Evidence, Observation, Probe},
    lab::{
        loader::Bundle,
        model::{Expectation, Lab, TaskKind},
    },
    msg,
    report::{Report, TaskResult, TaskStatus},
    session::Lang,
    tr,
};

/// How much help the report carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Help {
    /// Hint tiers 1..=N for tasks that have not passed.
    pub hint: Option<u8>,
    /// Include reference solutions.
    pub reveal: bool,
    /// Show every task's description, not only those of failing tasks.
    pub details: bool,
    /// Grade every task on its own checks, its `needs` taken as met (never BLOCKED): `selftest`
    /// judges a shortcut or an alternative by the task's checks alone.
    pub alone: bool,
    /// Whether a quiz's evidence quotes the answer given.
    pub answers: Answers,
}

/// Whether a quiz's evidence quotes the answer given: the learner who answered reads it; a board
/// projected to a class must not, since a right answer quoted there answers everyone's quiz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Answers {
    /// `answer "gpu-1" is right` (the learner's own report).
    #[default]
    Quoted,
    /// `answered: right`: whether an answer was given and judged right, never its value (the
    /// class board, unless the instructor asks to reveal).
    Concealed,
}

/// Conceals, in every task's evidence, the values of the fact quizzes this learner answered
/// rightly (a node's name): once a fact quiz passed, the tasks that need it are graded and their
/// evidence names that node (`node gpu-1: … ImagePullBackOff`), which on a projected board would
/// answer the quiz for everyone else.
fn conceal_fact_answers(
    lab: &Lab,
    inventory: Option<&inventory::Inventory>,
    results: &mut [TaskResult],
    lang: Lang,
) {
    let Some(inventory) = inventory else { return };
    let is_fact_quiz = |id: &str| {
        lab.tasks.iter().any(|task| {
            task.id.value == id
                && task.expect.iter().any(|e| matches!(e, Expectation::Quiz(quiz) if quiz.fact.is_some()))
        })
    };
    let values: Vec<String> = results
        .iter()
        .filter(|r| r.status == TaskStatus::Pass && is_fact_quiz(&r.id))
        .filter_map(|r| inventory.answers.get(&r.id))
        .map(|answer| answer.trim().to_string())
        .filter(|answer| !answer.is_empty())
        .collect();
    if values.is_empty() {
        return;
    }
    let placeholder = tr!(lang, "check-value-concealed");
    for line in results.iter_mut().flat_map(|r| r.evidence.iter_mut()) {
        for value in &values {
            *line = conceal_word(line, value, &placeholder);
        }
    }
}

/// `line` with every whole-word occurrence of `value` (ASCII case ignored: answers may be given
/// in either case) replaced by `placeholder`; a word is bounded by anything but letters, digits,
/// `-`, `_` and a `.` inside a name (`gpu-1.example`), as a Kubernetes name is.
fn conceal_word(line: &str, value: &str, placeholder: &str) -> String {
    let part_of_name = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let (lower, wanted) = (line.to_ascii_lowercase(), value.to_ascii_lowercase());
    let mut out = String::new();
    let mut rest = 0;
    let mut from = 0;
    while let Some(at) = lower[from..].find(&wanted).map(|i| i + from) {
        let end = at + wanted.len();
        let before = line[..at].chars().next_back();
        let mut after = line[end..].chars();
        let continues = match after.next() {
            None => false,
            // A sentence's full stop ends the name; a dot followed by more of a name does not.
            Some('.') => after.next().is_some_and(|c| c.is_ascii_alphanumeric()),
            Some(c) => part_of_name(c),
        };
        if before.is_none_or(|c| !part_of_name(c)) && !continues {
            out += &line[rest..at];
            out += placeholder;
            rest = end;
        }
        from = end;
    }
    out + &line[rest..]
}

/// A quiz's evidence without any answer's value: what was judged stays (answered or not, right
/// or not, attempts, why it cannot be judged); any line not known to be free of values is
/// replaced, so a line grading adds later cannot leak one either.
fn conceal_quiz_evidence(lines: &[crate::i18n::Message]) -> Vec<crate::i18n::Message> {
    lines
        .iter()
        .map(|line| match line.id() {
            "check-answer-right" => msg!("check-answer-right-concealed"),
            "check-answer-wrong" => msg!("check-answer-wrong-concealed"),
            "check-no-answer" | "check-no-answer-choices" => msg!("check-no-answer-concealed"),
            "check-attempts-locked"
            | "check-attempts-of"
            | "check-answered"
            | "grade-not-started"
            | "grade-fact-not-captured"
            | "grade-quiz-unjudgeable" => line.clone(),
            _ => msg!("check-evidence-concealed"),
        })
        .collect()
}

/// Observes the cluster and grades every task of `bundle`.
pub async fn check(cluster: &Cluster, bundle: &Bundle, lang: Lang, help: Help) -> Result<Report> {
    Ok(check_locked(cluster, bundle, lang, help).await?.0)
}

/// [`check`], with the quizzes whose answer was locked at that observation.
async fn check_locked(
    cluster: &Cluster,
    bundle: &Bundle,
    lang: Lang,
    help: Help,
) -> Result<(Report, BTreeSet<String>)> {
    let lab = &bundle.lab;
    let mut inventory = inventory::load(&cluster.client, &lab.id.value).await?;
    if let Some(inventory) = &mut inventory {
        // What --reveal shows (the variant, which answers a quiz) is the instructor's: credentials
        // that cannot read the records' key (a hosted class's learner's) are refused it.
        if help.reveal && inventory.integrity == inventory::Integrity::Unverifiable {
            return Err(super::Error::BadInput(crate::msg!("check-reveal-needs-key", lab = &lab.id.value)));
        }
        inventory::count_answer_entries(&cluster.client, lab, inventory).await?;
    }
    let mut observation = observe::observe(&cluster.client, &grade::Plan::for_tasks(&lab.tasks)).await;
    observation.probes = run_probes(cluster, bundle).await;
    let locked = locked_quizzes(lab, inventory.as_ref());
    Ok((grade_observation(bundle, inventory.as_ref(), &observation, lang, help), locked))
}

/// The quiz tasks whose answer is locked (every attempt used, right or wrong). A locked quiz
/// satisfies `needs` for ordering: its points are won or lost for good, and the tasks after it
/// stay open (docs/lab-format.md, "Tasks").
pub fn locked_quizzes(lab: &Lab, inventory: Option<&inventory::Inventory>) -> BTreeSet<String> {
    let Some(inventory) = inventory else { return BTreeSet::new() };
    lab.tasks
        .iter()
        .filter(|task| task.kind == TaskKind::Quiz)
        .filter(|task| {
            let used = inventory.attempts.get(&task.id.value).copied().unwrap_or(0);
            task.attempt_limit().is_some_and(|limit| used >= limit)
        })
        .map(|task| task.id.value.clone())
        .collect()
}

/// How many times `check` observes the cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Observations {
    /// Once (the default).
    #[default]
    Once,
    /// Twice, this far apart (`--confirm DURATION`); a task passes only if it passed both times.
    Confirmed(Duration),
}

/// Observes the cluster once or twice (`observations`) and grades every task of `bundle`.
pub async fn check_with(
    cluster: &Cluster,
    bundle: &Bundle,
    lang: Lang,
    help: Help,
    observations: Observations,
) -> Result<Report> {
    match observations {
        Observations::Once => check(cluster, bundle, lang, help).await,
        Observations::Confirmed(apart) => {
            let (first, _) = check_locked(cluster, bundle, lang, help).await?;
            tokio::time::sleep(apart).await;
            // A lock is for good: the second observation's locks hold for both.
            let (second, locked) = check_locked(cluster, bundle, lang, help).await?;
            Ok(confirm(&bundle.lab, &first, &second, &locked, apart, lang))
        }
    }
}

/// Combines two reports of the same lab taken `apart` from each other (pure): a task passes only
/// if it passed both times; otherwise it takes the status of the observation that did not pass
/// (the second one's when both did not), with evidence naming which observation failed. A task
/// whose needs did not pass both times is BLOCKED, as in a single observation (a need that is a
/// `locked` quiz is met, as there).
pub fn confirm(
    lab: &Lab,
    first: &Report,
    second: &Report,
    locked: &BTreeSet<String>,
    apart: Duration,
    lang: Lang,
) -> Report {
    let at = |n: u8| match n {
        1 => tr!(lang, "check-observation-first"),
        _ => tr!(lang, "check-observation-second", apart = crate::i18n::duration(apart)),
    };
    let find = |report: &Report, id: &str| report.tasks.iter().find(|t| t.id == id).cloned();
    let mut statuses: BTreeMap<String, TaskStatus> = BTreeMap::new();
    let mut results = Vec::new();
    for task in lab.tasks_in_needs_order() {
        let id = task.id.value.as_str();
        let (Some(one), Some(two)) = (find(first, id), find(second, id)) else { continue };
        let unmet = unmet_needs(task, &statuses, locked, lang);
        let header = |n: u8, result: &TaskResult| format!("{}: {}", at(n), result.status.as_str());
        let (status, evidence, hints) = if !unmet.is_empty() {
            let hints = if two.hints.is_empty() { one.hints.clone() } else { two.hints.clone() };
            (TaskStatus::Blocked, unmet, hints)
        } else {
            match (one.status, two.status) {
                (TaskStatus::Pass, TaskStatus::Pass) => {
                    let mut evidence =
                        vec![tr!(lang, "check-held-both", apart = crate::i18n::duration(apart))];
                    evidence.extend(two.evidence.iter().cloned());
                    (TaskStatus::Pass, evidence, Vec::new())
                }
                (first_status, TaskStatus::Pass) => {
                    let mut evidence = vec![header(1, &one)];
                    evidence.extend(one.evidence.iter().cloned());
                    evidence.push(header(2, &two));
                    (first_status, evidence, one.hints.clone())
                }
                (_, second_status) => {
                    let mut evidence = vec![header(1, &one), header(2, &two)];
                    evidence.extend(two.evidence.iter().cloned());
                    (second_status, evidence, two.hints.clone())
                }
            }
        };
        statuses.insert(id.to_string(), status);
        results.push(TaskResult {
            status,
            awarded: if status == TaskStatus::Pass { two.points } else { 0 },
            evidence,
            hints,
            ..two
        });
    }
    Report::new(&second.lab, &second.title, second.variant.clone(), results)
}

/// Sends each `dryRun=All` create a task declares as a probe (the only writes `check` makes,
/// and the server persists nothing for them).
pub(crate) async fn run_probes(cluster: &Cluster, bundle: &Bundle) -> BTreeMap<String, Probe> {
    use kube::api::{Api, DynamicObject, PostParams};
    let mut probes = BTreeMap::new();
    for expectation in bundle.lab.tasks.iter().flat_map(|t| &t.expect) {
        let Expectation::QuotaInForce(check) = expectation else { continue };
        let Some(file) = &check.probe_file else { continue };
        let Some(document) = bundle.expected.get(&file.value) else {
            probes.insert(file.value.clone(), Probe::NotSent(msg!("probe-file-missing", file = &file.value)));
            continue;
        };
        let Ok(object) = serde_json::from_value::<DynamicObject>(document.clone()) else {
            probes
                .insert(file.value.clone(), Probe::NotSent(msg!("probe-not-an-object", file = &file.value)));
            continue;
        };
        let resource = kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
        let api: Api<DynamicObject> =
            Api::namespaced_with(cluster.client.clone(), &check.namespace, &resource);
        let params = PostParams { dry_run: true, ..PostParams::default() };
        let probe = match api.create(&params, &object).await {
            Ok(_) => Probe::Admitted,
            Err(kube::Error::Api(status)) if is_quota_rejection(status.code, &status.message) => {
                Probe::Rejected(status.message.clone())
            }
            Err(e) => Probe::NotSent(msg!("probe-request-failed", reason = super::cluster::reason(&e))),
        };
        probes.insert(file.value.clone(), probe);
    }
    probes
}

/// Whether a refused probe was refused by quota admission. Only a 403 whose message carries the
/// ResourceQuota admission's `exceeded quota` counts (k8s plugin/pkg/admission/resourcequota
/// controller.go: `admission.NewForbidden(a, fmt.Errorf("exceeded quota: ..."))`): an RBAC
/// Forbidden is also a 403 and must not pass the quota task. 422 stays a rejection (invalid).
fn is_quota_rejection(code: u16, message: &str) -> bool {
    match code {
        403 => message.contains("exceeded quota"),
        422 => true,
        _ => false,
    }
}

/// The evidence of a BLOCKED task, in `lang`: each of its `needs` that has not passed and is not
/// a locked quiz, with its status.
fn unmet_needs(
    task: &crate::lab::model::Task,
    statuses: &BTreeMap<String, TaskStatus>,
    locked: &BTreeSet<String>,
    lang: Lang,
) -> Vec<String> {
    task.needs
        .iter()
        .filter(|need| statuses.get(&need.value) != Some(&TaskStatus::Pass) && !locked.contains(&need.value))
        .map(|need| {
            let status = match statuses.get(&need.value) {
                Some(status) => status.as_str().to_string(),
                None => tr!(lang, "check-not-graded"),
            };
            tr!(lang, "check-needs", task = &need.value, status = status)
        })
        .collect()
}

/// Grades `bundle`'s tasks against an observation (pure: no requests).
pub fn grade_observation(
    bundle: &Bundle,
    inventory: Option<&inventory::Inventory>,
    observation: &Observation,
    lang: Lang,
    help: Help,
) -> Report {
    let lab = &bundle.lab;
    let evidence = Evidence::new(bundle, observation, inventory.map(inventory::Inventory::started))
        .with_details(help.details);
    let mut statuses: BTreeMap<String, TaskStatus> = BTreeMap::new();
    let mut results: Vec<TaskResult> = Vec::new();
    // Half a start, or records changed outside lab-runner, is no state to grade: every task says
    // so, none passes or fails.
    let incomplete = inventory.and_then(|i| {
        i.incomplete_start(lang)
            .or_else(|| i.tampered().map(|line| line.render(lang)))
            .or_else(|| i.missing_stage(lab, lang))
    });
    let locked = locked_quizzes(lab, inventory);
    for task in lab.tasks_in_needs_order() {
        let id = task.id.value.clone();
        let unmet = if help.alone { Vec::new() } else { unmet_needs(task, &statuses, &locked, lang) };
        let (status, evidence) = if let Some(line) = &incomplete {
            (TaskStatus::Error, vec![line.clone()])
        } else if !unmet.is_empty() {
            (TaskStatus::Blocked, unmet)
        } else {
            let graded = grade::evaluate_task(task, &evidence).outcome;
            let status = match graded.status() {
                grade::Status::Pass => TaskStatus::Pass,
                grade::Status::Fail => TaskStatus::Fail,
                grade::Status::Error => TaskStatus::Error,
            };
            // Grading's evidence is catalog messages: the report holds them in the learner's language.
            let lines = match (task.kind, help.answers) {
                (TaskKind::Quiz, Answers::Concealed) => conceal_quiz_evidence(graded.evidence()),
                _ => graded.evidence().to_vec(),
            };
            (status, lines.iter().map(|line| line.render(lang)).collect())
        };
        statuses.insert(id.clone(), status);
        let points = task.points.value.max(0);
        let hints = match (status, help.hint) {
            (TaskStatus::Pass, _) | (_, None) => Vec::new(),
            (_, Some(tier)) => {
                task.hints.iter().take(tier as usize).map(|h| h.get(lang).trim().to_string()).collect()
            }
        };
        let describe = help.details || status == TaskStatus::Fail;
        results.push(TaskResult {
            id,
            title: task.title.get(lang).trim().to_string(),
            description: describe.then(|| task.description.get(lang).trim().to_string()),
            status,
            points,
            awarded: if status == TaskStatus::Pass { points } else { 0 },
            evidence,
            hints,
            hints_available: task.hints.len(),
            solution: help.reveal.then(|| task.solution.clone()),
        });
    }
    if help.answers == Answers::Concealed {
        conceal_fact_answers(lab, inventory, &mut results, lang);
    }
    // The variant answers the `cause` quiz: a learner's report never names it (issue #15); an
    // instructor grading with `--reveal` sees it.
    let variant = inventory.and_then(|i| i.variant_in(lab)).filter(|_| help.reveal);
    Report::new(&lab.id.value, lab.title.get(lang).trim(), variant, results)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fact_answer_is_concealed_as_a_whole_word_wherever_evidence_names_it() {
        let line = "node gpu-1: pod toolkit-x (current) ImagePullBackOff; node gpu-10 and GPU-1.";
        assert_eq!(
            conceal_word(line, "gpu-1", "[answer]"),
            "node [answer]: pod toolkit-x (current) ImagePullBackOff; node gpu-10 and [answer]."
        );
        assert_eq!(conceal_word("gpu-1", "gpu-1", "[answer]"), "[answer]");
        assert_eq!(
            conceal_word("xgpu-1 gpu-1x gpu-1.example", "gpu-1", "[answer]"),
            "xgpu-1 gpu-1x gpu-1.example"
        );
    }

    #[test]
    fn concealed_quiz_evidence_says_what_was_judged_and_never_a_value() {
        let lines = [
            msg!("check-answer-right", answer = "gpu-1"),
            msg!("check-attempts-of", used = 1, limit = 3),
            msg!("check-answer-wrong", answer = "gpu-2"),
            msg!("check-no-answer-choices", lab = "l", task = "t", word = "VALUE", values = "`a`, `b`"),
            msg!("grade-fact-not-captured", fact = "affectedNode"),
            // A line grading might add one day, possibly naming a value: replaced, not passed on.
            msg!("status-desired"),
        ];
        let concealed: Vec<String> =
            conceal_quiz_evidence(&lines).iter().map(|l| l.render(Lang::En)).collect();
        assert_eq!(
            concealed,
            [
                "answered: right",
                "attempt 1 of 3",
                "answered: not right",
                "not answered yet",
                "start did not capture the fact affectedNode; run `lab-runner start` again",
                "(not shown on the board: it could name an answer)",
            ]
        );
    }

    #[test]
    fn only_quota_forbidden_counts_as_quota_rejection() {
        let quota = "pods \"p\" is forbidden: exceeded quota: gpu-quota, requested: nvidia.com/gpu=1, used: nvidia.com/gpu=2, limited: nvidia.com/gpu=2";
        let rbac = "pods is forbidden: User \"learner\" cannot create resource \"pods\" in API group \"\" in the namespace \"team-a\"";
        assert!(is_quota_rejection(403, quota));
        assert!(!is_quota_rejection(403, rbac));
        assert!(!is_quota_rejection(500, quota));
    }

    fn lab() -> Lab {
        serde_saphyr::from_str(
            "apiVersion: lab-runner.io/v1\nid: x\ntitle: {en: t}\nbriefing: {en: b}\nstages: []\ntasks:\n\
             - {id: a, title: {en: a}, description: {en: a}, points: 2, expect: []}\n\
             - {id: b, title: {en: b}, description: {en: b}, points: 3, needs: [a], expect: []}\n\
             - {id: c, title: {en: c}, description: {en: c}, points: 1, expect: []}\n",
        )
        .unwrap()
    }

    fn result(id: &str, points: i64, status: TaskStatus, evidence: &str) -> TaskResult {
        TaskResult {
            id: id.into(),
            title: id.into(),
            description: None,
            status,
            points,
            awarded: if status == TaskStatus::Pass { points } else { 0 },
            evidence: vec![evidence.into()],
            hints: Vec::new(),
            hints_available: 0,
            solution: None,
        }
    }

    fn report(a: TaskStatus, b: TaskStatus, c: TaskStatus, tag: &str) -> Report {
        Report::new(
            "x",
            "t",
            None,
            vec![
                result("a", 2, a, &format!("a {tag}")),
                result("b", 3, b, &format!("b {tag}")),
                result("c", 1, c, &format!("c {tag}")),
            ],
        )
    }

    fn rows(report: &Report) -> Vec<(&str, &str, Vec<&str>)> {
        report
            .tasks
            .iter()
            .map(|t| (t.id.as_str(), t.status.as_str(), t.evidence.iter().map(String::as_str).collect()))
            .collect()
    }

    use TaskStatus::{Blocked, Error, Fail, Pass};

    #[test]
    fn a_task_passes_only_if_it_passed_both_times() {
        let first = report(Pass, Pass, Fail, "seen first");
        let second = report(Pass, Pass, Pass, "seen second");
        let confirmed = confirm(&lab(), &first, &second, &BTreeSet::new(), Duration::from_secs(30), Lang::En);
        assert_eq!(
            rows(&confirmed),
            [
                ("a", "PASS", vec!["held at both observations, 30s apart", "a seen second"]),
                ("b", "PASS", vec!["held at both observations, 30s apart", "b seen second"]),
                (
                    "c",
                    "FAIL",
                    vec![
                        "observation 1 of 2 (at start): FAIL",
                        "c seen first",
                        "observation 2 of 2 (after 30s): PASS"
                    ]
                ),
            ]
        );
        assert_eq!((confirmed.score, confirmed.total, confirmed.passed), (5, 6, false));
    }

    #[test]
    fn a_task_that_fails_at_either_observation_blocks_what_needs_it() {
        let first = report(Pass, Pass, Error, "one");
        let second = report(Fail, Blocked, Fail, "two");
        let confirmed = confirm(&lab(), &first, &second, &BTreeSet::new(), Duration::from_secs(90), Lang::En);
        assert_eq!(
            rows(&confirmed),
            [
                (
                    "a",
                    "FAIL",
                    vec![
                        "observation 1 of 2 (at start): PASS",
                        "observation 2 of 2 (after 1m30s): FAIL",
                        "a two"
                    ]
                ),
                ("b", "BLOCKED", vec!["needs a (FAIL)"]),
                (
                    "c",
                    "FAIL",
                    vec![
                        "observation 1 of 2 (at start): ERROR",
                        "observation 2 of 2 (after 1m30s): FAIL",
                        "c two"
                    ]
                ),
            ]
        );
        assert_eq!(confirmed.score, 0);

        // A need that failed only the first time still blocks.
        let first = report(Fail, Blocked, Pass, "one");
        let second = report(Pass, Pass, Pass, "two");
        let confirmed = confirm(&lab(), &first, &second, &BTreeSet::new(), Duration::from_secs(5), Lang::En);
        let statuses: Vec<&str> = confirmed.tasks.iter().map(|t| t.status.as_str()).collect();
        assert_eq!(statuses, ["FAIL", "BLOCKED", "PASS"]);
        assert_eq!(confirmed.score, 1);
    }

    #[test]
    fn a_locked_quiz_meets_needs_right_or_wrong() {
        let lab: Lab = serde_saphyr::from_str(
            "apiVersion: lab-runner.io/v1\nid: x\ntitle: {en: t}\nbriefing: {en: b}\nstages: []\ntasks:\n\
             - {id: q, kind: quiz, title: {en: q}, description: {en: q}, points: 2, expect: [{quiz: {accept: [a], attempts: 2}}]}\n\
             - {id: open, kind: quiz, title: {en: o}, description: {en: o}, points: 2, expect: [{quiz: {accept: [a]}}]}\n\
             - {id: fix, title: {en: f}, description: {en: f}, points: 3, needs: [q, open], expect: []}\n",
        )
        .unwrap();
        let mut inventory = inventory::Inventory::new("x");
        inventory.attempts.insert("q".into(), 1);
        inventory.attempts.insert("open".into(), 5);
        assert!(locked_quizzes(&lab, Some(&inventory)).is_empty(), "one of two attempts; no limit");
        inventory.attempts.insert("q".into(), 2);
        let locked = locked_quizzes(&lab, Some(&inventory));
        assert_eq!(locked, BTreeSet::from(["q".to_string()]));
        let statuses =
            BTreeMap::from([("q".to_string(), TaskStatus::Fail), ("open".to_string(), TaskStatus::Fail)]);
        let fix = lab.task("fix").unwrap();
        assert_eq!(unmet_needs(fix, &statuses, &locked, Lang::En), ["needs open (FAIL)"]);
        let statuses =
            BTreeMap::from([("q".to_string(), TaskStatus::Fail), ("open".to_string(), TaskStatus::Pass)]);
        assert!(unmet_needs(fix, &statuses, &locked, Lang::En).is_empty());
        assert_eq!(unmet_needs(fix, &statuses, &BTreeSet::new(), Lang::En), ["needs q (FAIL)"]);
    }
}
