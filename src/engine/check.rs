//! `check`: observe once (one LIST per kind), evaluate the tasks in `needs` order, and build the
//! report. Read-only: GET and LIST requests only.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Result, builtin, cluster::Cluster, inventory, observe};
use crate::{
    cli::Lang,
    grade::{self, KindKey, Outcome},
    lab::{
        loader::Bundle,
        model::{Expectation, Lab},
    },
    report::{Report, TaskResult, TaskStatus},
};

/// How much help the report carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Help {
    /// Hint tiers 1..=N for tasks that have not passed.
    pub hint: Option<u8>,
    /// Include reference solutions.
    pub reveal: bool,
}

/// Every kind the lab's tasks look at.
pub fn kinds_for(lab: &Lab) -> BTreeSet<KindKey> {
    let mut kinds = grade::kinds_needed(&lab.tasks);
    for expectation in lab.tasks.iter().flat_map(|t| &t.expect) {
        kinds.extend(builtin::kinds_of(expectation));
    }
    kinds
}

/// Observes the cluster and grades every task of `bundle`.
pub async fn check(cluster: &Cluster, bundle: &Bundle, lang: Lang, help: Help) -> Result<Report> {
    let lab = &bundle.lab;
    let inventory = inventory::load(&cluster.client, &lab.id.value).await?;
    let mut observation = observe::observe(&cluster.client, &kinds_for(lab)).await;
    observation.probes = run_probes(cluster, bundle).await;
    Ok(grade_observation(bundle, inventory.as_ref(), &observation, lang, help))
}

/// Sends each `dryRun=All` create a task declares as a probe (the only writes `check` makes,
/// and the server persists nothing for them).
async fn run_probes(cluster: &Cluster, bundle: &Bundle) -> BTreeMap<String, observe::Probe> {
    use kube::api::{Api, DynamicObject, PostParams};
    let mut probes = BTreeMap::new();
    for expectation in bundle.lab.tasks.iter().flat_map(|t| &t.expect) {
        let Expectation::QuotaInForce(check) = expectation else { continue };
        let Some(file) = &check.probe_file else { continue };
        let Some(document) = bundle.expected.get(&file.value) else {
            probes.insert(
                file.value.clone(),
                observe::Probe::NotSent(format!("{} is not part of the bundle", file.value)),
            );
            continue;
        };
        let Ok(object) = serde_json::from_value::<DynamicObject>(document.clone()) else {
            probes.insert(
                file.value.clone(),
                observe::Probe::NotSent(format!("{} is not an object", file.value)),
            );
            continue;
        };
        let resource = kube::api::ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&());
        let api: Api<DynamicObject> =
            Api::namespaced_with(cluster.client.clone(), &check.namespace, &resource);
        let params = PostParams { dry_run: true, ..PostParams::default() };
        let probe = match api.create(&params, &object).await {
            Ok(_) => observe::Probe::Admitted,
            Err(kube::Error::Api(status)) if status.code == 403 || status.code == 422 => {
                observe::Probe::Rejected(status.message.clone())
            }
            Err(e) => observe::Probe::NotSent(super::cluster::one_line(&e)),
        };
        probes.insert(file.value.clone(), probe);
    }
    probes
}

/// Grades `bundle`'s tasks against an observation (pure: no requests).
pub fn grade_observation(
    bundle: &Bundle,
    inventory: Option<&inventory::Inventory>,
    observation: &observe::Observation,
    lang: Lang,
    help: Help,
) -> Report {
    let lab = &bundle.lab;
    let mut statuses: BTreeMap<String, TaskStatus> = BTreeMap::new();
    let mut results: Vec<TaskResult> = Vec::new();
    for task in lab.tasks_in_needs_order() {
        let id = task.id.value.clone();
        let unmet: Vec<String> = task
            .needs
            .iter()
            .filter(|need| statuses.get(&need.value) != Some(&TaskStatus::Pass))
            .map(|need| {
                let status = statuses.get(&need.value).map(|s| s.as_str()).unwrap_or("not graded");
                format!("needs {} ({status})", need.value)
            })
            .collect();
        let (status, evidence) = if !unmet.is_empty() {
            (TaskStatus::Blocked, unmet)
        } else {
            let outcomes: Vec<Outcome> =
                task.expect.iter().map(|e| evaluate(e, &id, bundle, inventory, observation)).collect();
            combine(&outcomes)
        };
        statuses.insert(id.clone(), status);
        let points = task.points.value.max(0);
        let hints = match (status, help.hint) {
            (TaskStatus::Pass, _) | (_, None) => Vec::new(),
            (_, Some(tier)) => {
                task.hints.iter().take(tier as usize).map(|h| h.get(lang).trim().to_string()).collect()
            }
        };
        results.push(TaskResult {
            id,
            title: task.title.get(lang).trim().to_string(),
            status,
            points,
            awarded: if status == TaskStatus::Pass { points } else { 0 },
            evidence,
            hints,
            hints_available: task.hints.len(),
            solution: help.reveal.then(|| task.solution.clone()),
        });
    }
    Report::new(&lab.id.value, lab.title.get(lang).trim(), inventory.and_then(|i| i.variant.clone()), results)
}

/// FAIL if any expectation fails, else ERROR if any could not be judged, else PASS.
fn combine(outcomes: &[Outcome]) -> (TaskStatus, Vec<String>) {
    let with = |wanted: grade::Status| -> Vec<String> {
        outcomes.iter().filter(|o| o.status() == wanted).flat_map(|o| o.evidence().iter().cloned()).collect()
    };
    if outcomes.iter().any(|o| o.status() == grade::Status::Fail) {
        (TaskStatus::Fail, with(grade::Status::Fail))
    } else if outcomes.iter().any(|o| o.status() == grade::Status::Error) {
        (TaskStatus::Error, with(grade::Status::Error))
    } else {
        (TaskStatus::Pass, with(grade::Status::Pass))
    }
}

fn evaluate(
    expectation: &Expectation,
    task: &str,
    bundle: &Bundle,
    inventory: Option<&inventory::Inventory>,
    observation: &observe::Observation,
) -> Outcome {
    let observed = &observation.observed;
    let outcome = match expectation {
        Expectation::Rollout(check) => {
            let broken = check
                .broken_stage
                .as_deref()
                .and_then(|stage| broken_pod_spec(bundle, stage, check, inventory));
            builtin::rollout(check, observed, broken.as_ref())
        }
        Expectation::Quiz(check) => builtin::quiz(check, task, inventory),
        Expectation::QuotaInForce(check) => {
            let probe = check.probe_file.as_ref().map(|f| observation.probes.get(&f.value));
            builtin::quota_in_force(check, observed, probe)
        }
        Expectation::Schedulable(check) => builtin::schedulable(check, &bundle.expected, observed),
        Expectation::DevicePluginConfig(check) => builtin::device_plugin_config(check, observed),
        Expectation::AlertRule(check) => super::alert::alert_rule(check, observed),
        matcher => grade::evaluate(matcher, &bundle.expected, observed),
    };
    // A kind that could not be listed says why, instead of only "not observed".
    match outcome {
        Outcome::Error(mut lines) => {
            let kinds: Vec<KindKey> = match grade::target_of(expectation) {
                Some(target) => vec![KindKey::new(&target.api_version, &target.kind)],
                None => builtin::kinds_of(expectation),
            };
            for kind in kinds {
                if let Some(reason) = observation.failures.get(&kind) {
                    lines.push(format!("listing {} {}: {reason}", kind.api_version, kind.kind));
                }
            }
            Outcome::Error(lines)
        }
        other => other,
    }
}

/// The containers the broken stage gives the checked DaemonSet (for the variant started).
/// The pod spec of the target's template as the lab's broken stage applied it (the variant's).
fn broken_pod_spec(
    bundle: &Bundle,
    stage: &str,
    check: &crate::lab::model::RolloutCheck,
    inventory: Option<&inventory::Inventory>,
) -> Option<Value> {
    let stage = bundle.lab.stages.iter().find(|s| s.id.value == stage)?;
    let variant = inventory.and_then(|i| i.variant.as_deref());
    stage
        .manifests_for(variant)
        .into_iter()
        .filter_map(|file| bundle.manifests.get(file))
        .flatten()
        .find(|doc| {
            doc.get("kind").and_then(Value::as_str) == Some(check.target.kind.as_str())
                && doc.pointer("/metadata/name").and_then(Value::as_str) == Some(check.target.name.as_str())
        })
        .and_then(|doc| doc.pointer("/spec/template/spec").cloned())
}
