//! `status`: what a learner of the lab looks at, derived from the lab's expectations, from one LIST per kind.
//!
//! A DaemonSet the lab's rollout checks or waits name: the split-generation table (node × pod ×
//! revision × image × state, with the nodes the lab expects a pod on and that have none) and
//! its counters with what each means. Nodes a `devicePluginConfig` check selects: the config
//! label, what GFD reports in effect, what the node advertises, the MIG config and its state.
//! Namespaces a `quotaInForce` check names: each quota's used/hard. Nothing names the variant.

use std::{collections::BTreeSet, fmt::Write as _};

use serde_json::Value;

use comfy_table::{Table, presets::NOTHING};

use super::{Result, cluster::Cluster, observe};
use crate::{
    grade::{
        KindKey, Plan, Scope,
        builtin::{self, RolloutAnalysis},
    },
    lab::model::{Expectation, LabelSelector, ObjectRef},
    session::Lang,
    tr,
};

/// What a lab's status view shows, derived from its expectations and waits.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct View {
    /// DaemonSets, each with the nodes the lab expects it to cover (a rollout check's `nodes`).
    pub daemon_sets: Vec<(ObjectRef, Option<LabelSelector>)>,
    /// GPU node tables, one per config label: the label and the selectors of the
    /// `devicePluginConfig` checks that use it (a node any of them selects is a row).
    pub gpu_nodes: Vec<(String, Vec<LabelSelector>)>,
    /// Namespaces whose ResourceQuotas a `quotaInForce` check grades.
    pub quota_namespaces: Vec<String>,
}

impl View {
    /// One DaemonSet (`status --daemonset NS/NAME`), without expected nodes.
    pub fn daemon_set(target: ObjectRef) -> View {
        View { daemon_sets: vec![(target, None)], ..View::default() }
    }
}

/// The status view of `lab`: the DaemonSets its rollout checks and waits name (with the nodes a
/// rollout check expects covered), the GPU nodes its device-plugin checks select, the namespaces
/// of its quota checks.
pub fn view_of(lab: &crate::lab::model::Lab) -> View {
    let mut view = View::default();
    let expectations = || lab.tasks.iter().flat_map(|t| &t.expect);
    for expectation in expectations() {
        match expectation {
            Expectation::Rollout(check) if check.target.kind == "DaemonSet" => {
                match view.daemon_sets.iter_mut().find(|(target, _)| *target == check.target) {
                    Some((_, nodes)) => {
                        if nodes.is_none() {
                            nodes.clone_from(&check.nodes);
                        }
                    }
                    None => view.daemon_sets.push((check.target.clone(), check.nodes.clone())),
                }
            }
            Expectation::DevicePluginConfig(check) => {
                match view.gpu_nodes.iter_mut().find(|(label, _)| *label == check.label) {
                    Some((_, selectors)) => {
                        if !selectors.contains(&check.nodes) {
                            selectors.push(check.nodes.clone());
                        }
                    }
                    None => view.gpu_nodes.push((check.label.clone(), vec![check.nodes.clone()])),
                }
            }
            Expectation::QuotaInForce(check) if !view.quota_namespaces.contains(&check.namespace) => {
                view.quota_namespaces.push(check.namespace.clone());
            }
            _ => {}
        }
    }
    // A lab whose expectations give no view (no rollout, device-plugin or quota check) shows the
    // DaemonSets its stages wait for; otherwise those are the lab's plumbing, not its subject.
    if view == View::default() {
        let waits =
            lab.stages.iter().flat_map(|s| s.waits.iter().chain(s.variants.values().flat_map(|v| &v.waits)));
        for wait in waits {
            let target = &wait.target;
            if target.kind == "DaemonSet" && !view.daemon_sets.iter().any(|(t, _)| t == target) {
                view.daemon_sets.push((target.clone(), None));
            }
        }
    }
    view
}

/// Parses `NS/NAME` into a DaemonSet reference.
pub fn parse_daemonset(text: &str) -> Result<ObjectRef> {
    match text.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(ObjectRef {
                api_version: "apps/v1".into(),
                kind: "DaemonSet".into(),
                namespace: Some(namespace.into()),
                name: name.into(),
            })
        }
        _ => Err(super::Error::BadInput(crate::msg!("status-bad-daemonset", given = text))),
    }
}

/// Observes the cluster and renders `view` in `lang`.
pub async fn status(cluster: &Cluster, view: &View, lang: Lang) -> Result<String> {
    let observation = observe::observe(&cluster.client, &plan_of(view)).await;
    if let Some((kind, reason)) = observation.failures.iter().next() {
        return Err(super::Error::Api {
            action: crate::msg!("action-list", plural = format!("{} {}", kind.api_version, kind.kind)),
            reason: crate::i18n::outside::quoted(reason.clone()),
        });
    }
    let observed = &observation.observed;
    let nodes = observed.objects("v1", "Node").unwrap_or_default();
    let mut sections = Vec::new();
    for (target, expected) in &view.daemon_sets {
        match builtin::analyse_rollout(observed, target) {
            Ok(analysis) => {
                let expected: BTreeSet<&str> = match expected {
                    Some(selector) => nodes
                        .iter()
                        .filter(|n| crate::grade::observed::selector_matches(selector, n))
                        .map(name_of)
                        .collect(),
                    None => BTreeSet::new(),
                };
                sections.push(render_expecting(&analysis, &expected, lang));
            }
            Err(e) => sections.push(format!("{}\n", crate::i18n::Localized::message(&e).render(lang))),
        }
    }
    for (label, selectors) in &view.gpu_nodes {
        let selected: Vec<&Value> = nodes
            .iter()
            .filter(|n| {
                selectors.iter().any(|selector| crate::grade::observed::selector_matches(selector, n))
            })
            .collect();
        sections.push(render_gpu_nodes(&selected, label, lang));
    }
    if !view.quota_namespaces.is_empty() {
        let quotas = observed.objects("v1", "ResourceQuota").unwrap_or_default();
        sections.push(render_quotas(quotas, &view.quota_namespaces, lang));
    }
    Ok(sections.join("\n"))
}

/// What the view reads, one LIST per kind: the DaemonSets it shows and the pods in their
/// namespaces (a rollout table reads a DaemonSet's own pods), every node, the ResourceQuotas of
/// the namespaces it shows.
pub fn plan_of(view: &View) -> Plan {
    let mut scopes = vec![(KindKey::new("v1", "Node"), Scope::whole())];
    for (target, _) in &view.daemon_sets {
        scopes.push((KindKey::new("apps/v1", "DaemonSet"), Scope::of_ref(target)));
        scopes.push((KindKey::new("v1", "Pod"), Scope::in_namespace(target.namespace.as_deref())));
    }
    for namespace in &view.quota_namespaces {
        scopes.push((KindKey::new("v1", "ResourceQuota"), Scope::in_namespace(Some(namespace))));
    }
    Plan::from_scopes(scopes)
}

fn name_of(object: &Value) -> &str {
    object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("")
}

/// A table as kubectl prints one: no borders, columns two spaces apart, no trailing blanks.
fn plain_table(header: &[String], rows: Vec<Vec<String>>) -> String {
    let mut table = Table::new();
    table
        .load_style(NOTHING)
        .force_no_tty()
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    table.set_header(header);
    for row in rows {
        table.add_row(row);
    }
    table
        .to_string()
        .lines()
        .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end().to_string() + "\n")
        .collect()
}

/// The GPU nodes a device-plugin check selects: the config each picked (its label), what GFD
/// reports in effect (sharing strategy and replicas, or the MIG strategy), what the node
/// advertises (allocatable `nvidia.com/gpu` and `nvidia.com/mig-*`), the MIG config asked for
/// and the MIG manager's state of it (`nvidia.com/mig.config.state`).
fn render_gpu_nodes(nodes: &[&Value], label: &str, lang: Lang) -> String {
    let out = tr!(lang, "status-gpu-nodes", label = label) + "\n";
    if nodes.is_empty() {
        return out + &tr!(lang, "status-no-gpu-nodes") + "\n";
    }
    let header: Vec<String> = ["NODE", "CONFIG", "IN EFFECT", "ADVERTISED", "MIG CONFIG", "MIG STATE"]
        .into_iter()
        .map(String::from)
        .collect();
    let rows = nodes
        .iter()
        .map(|node| {
            let labels = crate::k8s::selector::labels_of(node);
            let get = |key: &str| labels.get(key).cloned().unwrap_or_else(|| "-".into());
            let in_effect = match labels.get("nvidia.com/mig.strategy").map(String::as_str) {
                Some(strategy) if strategy != "none" => format!("MIG {strategy}"),
                _ => match (
                    labels.get("nvidia.com/gpu.sharing-strategy"),
                    labels.get("nvidia.com/gpu.replicas"),
                ) {
                    (Some(strategy), Some(replicas)) => format!("{strategy} ×{replicas}"),
                    (Some(strategy), None) => strategy.clone(),
                    (None, _) => "-".into(),
                },
            };
            let advertised: Vec<String> = node
                .pointer("/status/allocatable")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter(|(resource, _)| {
                    *resource == "nvidia.com/gpu" || resource.starts_with("nvidia.com/mig-")
                })
                .map(|(resource, count)| format!("{resource}: {}", count.as_str().unwrap_or("?")))
                .collect();
            let advertised = if advertised.is_empty() { "-".to_string() } else { advertised.join(", ") };
            vec![
                name_of(node).to_string(),
                get(label),
                in_effect,
                advertised,
                get("nvidia.com/mig.config"),
                get("nvidia.com/mig.config.state"),
            ]
        })
        .collect();
    out + &plain_table(&header, rows)
}

/// Each ResourceQuota in `namespaces`: per resource, used and hard as its status reports them.
fn render_quotas(quotas: &[Value], namespaces: &[String], lang: Lang) -> String {
    let mut out = tr!(lang, "status-quotas") + "\n";
    let mut rows = Vec::new();
    for namespace in namespaces {
        let in_namespace: Vec<&Value> = quotas
            .iter()
            .filter(|q| q.pointer("/metadata/namespace").and_then(Value::as_str) == Some(namespace))
            .collect();
        if in_namespace.is_empty() {
            rows.push(vec![
                namespace.clone(),
                "-".into(),
                tr!(lang, "status-no-quota"),
                "-".into(),
                "-".into(),
            ]);
        }
        for quota in in_namespace {
            let hard = quota.pointer("/status/hard").or_else(|| quota.pointer("/spec/hard"));
            for (resource, limit) in hard.and_then(Value::as_object).into_iter().flatten() {
                let used = quota
                    .pointer("/status/used")
                    .and_then(|u| u.get(resource))
                    .and_then(Value::as_str)
                    .unwrap_or("-");
                rows.push(vec![
                    namespace.clone(),
                    name_of(quota).to_string(),
                    resource.clone(),
                    used.to_string(),
                    limit.as_str().unwrap_or("?").to_string(),
                ]);
            }
        }
    }
    let header: Vec<String> =
        ["NAMESPACE", "QUOTA", "RESOURCE", "USED", "HARD"].into_iter().map(String::from).collect();
    out.push_str(&plain_table(&header, rows));
    out
}

/// The view of one DaemonSet as text in `lang` (column names and counters stay as kubectl
/// prints them).
pub fn render(analysis: &RolloutAnalysis, lang: Lang) -> String {
    render_expecting(analysis, &BTreeSet::new(), lang)
}

/// As [`render`], also listing the `expected` nodes (those the lab expects the DaemonSet to
/// cover) that have no pod even where the DaemonSet no longer targets them: the node a changed
/// toleration or nodeSelector left behind.
pub fn render_expecting(analysis: &RolloutAnalysis, expected: &BTreeSet<&str>, lang: Lang) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        tr!(lang, "status-daemonset", daemonset = &analysis.daemon_set, hash = &analysis.current_hash)
    );
    let mut table = Table::new();
    table
        .load_style(NOTHING)
        .force_no_tty()
        .set_content_arrangement(comfy_table::ContentArrangement::Disabled);
    table.set_header(["NODE", "POD", "REVISION", "IMAGE", "STATE"]);
    for row in &analysis.rows {
        let no_pod = row.pod == "-";
        let expected_here = expected.contains(row.node.as_str());
        if !row.wanted && no_pod && !expected_here {
            continue;
        }
        let revision = match (row.revision.as_str(), row.current) {
            ("-", _) => "-".to_string(),
            (hash, true) => tr!(lang, "status-revision-current", hash = hash),
            (hash, false) => tr!(lang, "status-revision-old", hash = hash),
        };
        let state = match (no_pod, row.wanted, expected_here) {
            (true, false, true) => tr!(lang, "status-no-pod-expected"),
            (true, _, _) => tr!(lang, "status-no-pod"),
            (false, true, _) => row.state.clone(),
            (false, false, _) => tr!(lang, "status-not-wanted", state = &row.state),
        };
        table.add_row([
            row.node.as_str(),
            row.pod.as_str(),
            revision.as_str(),
            row.image.as_str(),
            state.as_str(),
        ]);
    }
    let _ = writeln!(
        out,
        "{}",
        table
            .to_string()
            .lines()
            .map(|line| line.strip_prefix(' ').unwrap_or(line).trim_end())
            .collect::<Vec<_>>()
            .join("\n")
    );
    let c = analysis.counters;
    let counters = [
        ("DESIRED", c.desired_number_scheduled, tr!(lang, "status-desired")),
        ("CURRENT", c.current_number_scheduled, tr!(lang, "status-current")),
        ("READY", c.number_ready, tr!(lang, "status-ready")),
        ("UP-TO-DATE", c.updated_number_scheduled, tr!(lang, "status-up-to-date")),
        ("AVAILABLE", c.number_available, tr!(lang, "status-available")),
        ("MISSCHEDULED", c.number_misscheduled, tr!(lang, "status-misscheduled")),
        ("UNAVAILABLE", c.number_unavailable, tr!(lang, "status-unavailable")),
    ];
    for (name, value, meaning) in counters {
        let _ = writeln!(out, "  {name:<13}{value:>4}  {meaning}");
    }
    out
}
