//! The hint levels `check --hint` shows, recorded before they are shown: sealed in the lab's records, or as a hosted learner's entries.
//!
//! Hint use is part of the learner's record as answers are (docs/classroom.md, "Who can write
//! what"): credentials that hold the records' key (a learner alone, the instructor) keep the
//! highest level per task in the sealed inventory, written only if nobody wrote it since it was
//! read, so a concurrent `answer` is never overwritten; a hosted class's learner, who may not
//! write the records, creates an immutable entry of their own per new level, which they can
//! neither change nor delete. Credentials that can do neither are not shown the hints.

use std::collections::BTreeMap;

use super::{
    Error, Result,
    cluster::Cluster,
    inventory::{self, Written},
};
use crate::{lab::model::Lab, msg, report::Report};

/// How many times the records are read again after another writer got in between.
const CONFLICT_RETRIES: usize = 20;

/// The hint level `report` shows per task (tasks showing none left out).
pub fn shown(report: &Report) -> BTreeMap<String, u8> {
    report
        .tasks
        .iter()
        .filter(|t| !t.hints.is_empty())
        .map(|t| (t.id.clone(), u8::try_from(t.hints.len()).unwrap_or(u8::MAX)))
        .collect()
}

/// Which levels of `shown` are above what `recorded` holds.
fn raised(recorded: &BTreeMap<String, u8>, shown: &BTreeMap<String, u8>) -> BTreeMap<String, u8> {
    shown
        .iter()
        .filter(|(task, level)| recorded.get(*task).is_none_or(|kept| kept < level))
        .map(|(task, level)| (task.clone(), *level))
        .collect()
}

/// Records the hint levels `shown` (by task) for `lab` before they are shown. Nothing when the
/// lab was never started here (no records to keep them in) or its records were changed outside
/// lab-runner (every task is ERROR then, and sealing the records again would hide the change).
/// Bad input (exit 2) for credentials that can neither write the records nor make an entry.
pub async fn record(cluster: &Cluster, lab: &Lab, shown: &BTreeMap<String, u8>) -> Result<()> {
    if shown.is_empty() {
        return Ok(());
    }
    let id = &lab.id.value;
    for _ in 0..CONFLICT_RETRIES {
        let Some((mut records, version)) = inventory::load_versioned(&cluster.client, id).await? else {
            return Ok(());
        };
        if records.tampered().is_some() {
            return Ok(());
        }
        if records.key.is_none() {
            if !records.answer_log {
                let secret = format!("{}/{}", inventory::NAMESPACE, inventory::key_name_for(id));
                return Err(Error::BadInput(msg!("hints-not-recorded", secret = secret)));
            }
            inventory::count_learner_entries(&cluster.client, lab, &mut records).await?;
            for (task, level) in raised(&records.hints, shown) {
                inventory::record_hint_entry(&cluster.client, id, &task, level).await?;
            }
            return Ok(());
        }
        let raised = raised(&records.hints, shown);
        if raised.is_empty() {
            return Ok(());
        }
        records.hints.extend(raised);
        if inventory::save_if_unchanged(&cluster.client, &records, &version).await? == Written::Saved {
            return Ok(());
        }
    }
    Err(Error::BadInput(msg!("hints-busy", lab = id)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_levels_above_the_recorded_ones_are_recorded() {
        let recorded = BTreeMap::from([("fix".to_string(), 2), ("quiz".to_string(), 1)]);
        let shown = BTreeMap::from([("fix".to_string(), 1), ("quiz".to_string(), 3), ("new".to_string(), 1)]);
        assert_eq!(raised(&recorded, &shown), BTreeMap::from([("new".into(), 1), ("quiz".into(), 3)]));
    }
}
