//! `status`: the split-generation view of a lab's DaemonSets, GPU node configs and quotas, or of one DaemonSet.

use super::{Result, on_cluster, print};
use crate::{
    engine::{self, cluster::Cluster},
    exit,
    lab::{self, model::ObjectRef},
    msg,
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

/// `status` against `cluster`; exit 1 with the remedy first when the lab is not started or its
/// start is incomplete.
pub async fn on(cluster: Cluster, labs: &LabSource, lang: Lang, options: &Options) -> Result<u8> {
    let (view, lab, instructor) = match options {
        Options::DaemonSet { daemon_set, lab } => {
            (engine::status::View::daemon_set(daemon_set.clone()), lab.as_deref().map(|id| (id, None)), false)
        }
        Options::Lab { lab: id, instructor } => {
            let bundle = lab::loader::find(labs, id)?;
            (engine::status::view_of(&bundle.lab), Some((id.as_str(), Some(bundle))), *instructor)
        }
    };
    let (mut header, mut incomplete) = (String::new(), false);
    if let Some((id, bundle)) = lab {
        match (engine::inventory::load(&cluster.client, id).await?, bundle) {
            // Nothing of the lab to show: what to run, instead of a table of absences.
            (None, Some(_)) => {
                print(&(tr!(lang, "status-not-started", lab = id) + "\n"))?;
                return Ok(exit::CHECKS_FAILED);
            }
            (None, None) => {}
            (Some(inventory), bundle) => {
                // Half a start is no state to read: one line with the remedy, before the view.
                if let Some(line) = inventory.incomplete_start(lang) {
                    header = format!("{line}\n");
                    incomplete = true;
                }
                if let (true, Some(bundle)) = (instructor, bundle) {
                    header += &(instructor_line(id, &inventory, &bundle.lab, lang) + "\n");
                }
            }
        }
    }
    let text = engine::status::status(&cluster, &view, lang).await?;
    print(&format!("{header}{text}"))?;
    Ok(if incomplete { exit::CHECKS_FAILED } else { exit::OK })
}

/// What only an instructor sees: the variant started, the stages done, the values recorded.
fn instructor_line(
    id: &str,
    inventory: &engine::inventory::Inventory,
    lab: &lab::model::Lab,
    lang: Lang,
) -> String {
    let variant = match inventory.variant_in(lab) {
        Some(variant) => msg!("status-variant", variant = variant),
        None => msg!("status-variant-none"),
    };
    // Items joined with `・`: the line itself is a list joined with `、`.
    let listed = |items: Vec<String>| match items.is_empty() {
        true => tr!(lang, "value-none"),
        false => items.join(&tr!(lang, "list-separator-and")),
    };
    let facts = listed(inventory.facts.keys().cloned().collect());
    tr!(
        lang,
        "status-instructor",
        lab = id,
        variant = variant,
        stages = listed(inventory.stages.clone()),
        facts = facts
    )
}
