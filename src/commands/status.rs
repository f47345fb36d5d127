//! `status`: the split-generation view of a lab's DaemonSets, GPU node configs and quotas, or of one DaemonSet.

use super::{Result, on_cluster, print};
use crate::{
    engine::{self, cluster::Cluster},
    exit,
    lab::{self, model::ObjectRef},
    session::{LabSource, Lang, Session},
    tr,
};

/// What `status` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Options {
    /// What a learner of the lab looks at.
    Lab {
        /// The lab id.
        lab: String,
        /// Instructors: also the variant and the facts captured at start (`--reveal`).
        instructor: bool,
    },
    /// One DaemonSet (`--daemonset NAMESPACE/NAME`).
    DaemonSet {
        /// The DaemonSet.
        daemon_set: ObjectRef,
        /// A lab whose incomplete start is told first, if one was named.
        lab: Option<String>,
    },
}

/// `status` against the session's cluster.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    on_cluster(&session.cluster, |cluster| on(cluster, &session.labs, session.lang, options))
}

/// `status` against `cluster`; exit 1 with the remedy first when the lab's start is incomplete.
pub async fn on(cluster: Cluster, labs: &LabSource, lang: Lang, options: &Options) -> Result<u8> {
    let mut header = String::new();
    let (view, lab) = match options {
        Options::DaemonSet { daemon_set, lab } => {
            (engine::status::View::daemon_set(daemon_set.clone()), lab.as_deref())
        }
        Options::Lab { lab: id, instructor } => {
            let bundle = lab::loader::find(labs, id)?;
            if *instructor {
                let inventory = engine::inventory::load(&cluster.client, id).await?;
                header = match inventory {
                    None => tr!(lang, "status-not-started", lab = id),
                    Some(inventory) => tr!(
                        lang,
                        "status-instructor",
                        lab = id,
                        variant = inventory.variant_in(&bundle.lab).as_deref().unwrap_or("-"),
                        stages = inventory.stages.join(", "),
                        facts = inventory.facts.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                } + "\n";
            }
            (engine::status::view_of(&bundle.lab), Some(id.as_str()))
        }
    };
    // Half a start is no state to read: one line with the remedy, before the view.
    let incomplete = match lab {
        Some(id) => {
            engine::inventory::load(&cluster.client, id).await?.and_then(|i| i.incomplete_start(lang))
        }
        None => None,
    };
    let text = engine::status::status(&cluster, &view, lang).await?;
    match incomplete {
        Some(line) => {
            print(&format!("{line}\n{header}{text}"))?;
            Ok(exit::CHECKS_FAILED)
        }
        None => print(&format!("{header}{text}")),
    }
}
