//! `status`: the split-generation view of a DaemonSet (node × pod × revision × image × state)
//! and its counters with what each means, from one LIST each of DaemonSets, Nodes and Pods.

use std::{collections::BTreeSet, fmt::Write as _};

use comfy_table::{Table, presets::NOTHING};

use super::{Result, cluster::Cluster, observe};
use crate::{
    grade::{
        KindKey,
        builtin::{self, RolloutAnalysis},
    },
    lab::model::ObjectRef,
    session::Lang,
    tr,
};

/// The DaemonSets a lab's rollout checks and waits name.
pub fn daemon_sets_of(lab: &crate::lab::model::Lab) -> Vec<ObjectRef> {
    let mut found: Vec<ObjectRef> = Vec::new();
    let waits =
        lab.stages.iter().flat_map(|s| s.waits.iter().chain(s.variants.values().flat_map(|v| &v.waits)));
    let checks = lab.tasks.iter().flat_map(|t| &t.expect).filter_map(|e| match e {
        crate::lab::model::Expectation::Rollout(check) => Some(check.target.clone()),
        _ => None,
    });
    for target in waits.map(|w| w.target.clone()).chain(checks) {
        if target.kind == "DaemonSet" && !found.contains(&target) {
            found.push(target);
        }
    }
    found
}

/// Parses `NS/NAME` into a DaemonSet reference (the error in `lang`).
pub fn parse_daemonset(text: &str, lang: Lang) -> Result<ObjectRef> {
    match text.split_once('/') {
        Some((namespace, name)) if !namespace.is_empty() && !name.is_empty() && !name.contains('/') => {
            Ok(ObjectRef {
                api_version: "apps/v1".into(),
                kind: "DaemonSet".into(),
                namespace: Some(namespace.into()),
                name: name.into(),
            })
        }
        _ => Err(super::Error::BadInput(tr!(lang, "status-bad-daemonset", given = text))),
    }
}

/// Observes the cluster and renders the view of each DaemonSet in `lang`.
pub async fn status(cluster: &Cluster, daemon_sets: &[ObjectRef], lang: Lang) -> Result<String> {
    let kinds: BTreeSet<KindKey> =
        [KindKey::new("apps/v1", "DaemonSet"), KindKey::new("v1", "Node"), KindKey::new("v1", "Pod")].into();
    let observation = observe::observe(&cluster.client, &kinds).await;
    if let Some((kind, reason)) = observation.failures.iter().next() {
        return Err(super::Error::Api {
            action: format!("listing {} {}", kind.api_version, kind.kind),
            reason: reason.clone(),
        });
    }
    let mut out = String::new();
    for target in daemon_sets {
        match builtin::analyse_rollout(&observation.observed, target) {
            Ok(analysis) => out.push_str(&render(&analysis, lang)),
            Err(e) => {
                let _ = writeln!(out, "{e}");
            }
        }
    }
    Ok(out)
}

/// The view of one DaemonSet as text in `lang` (column names and counters stay as kubectl
/// prints them).
pub fn render(analysis: &RolloutAnalysis, lang: Lang) -> String {
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
        if !row.wanted && row.pod == "-" {
            continue;
        }
        let revision = match (row.revision.as_str(), row.current) {
            ("-", _) => "-".to_string(),
            (hash, true) => tr!(lang, "status-revision-current", hash = hash),
            (hash, false) => tr!(lang, "status-revision-old", hash = hash),
        };
        let state =
            if row.wanted { row.state.clone() } else { tr!(lang, "status-not-wanted", state = &row.state) };
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
