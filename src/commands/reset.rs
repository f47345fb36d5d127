//! `reset`: print the plan back to a lab's starting state (or off the cluster), ask, carry it out.

use super::{Error, Result, confirmed, on_cluster, print};
use crate::{
    engine::{self, cluster::Cluster},
    lab,
    session::{LabSource, Lang, Session},
    tr,
};

/// What `reset` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The lab id.
    pub lab: String,
    /// Back to which state.
    pub goal: Goal,
    /// Print the plan and change nothing.
    pub dry_run: bool,
    /// Do not ask before deleting.
    pub yes: bool,
}

/// The state `reset` goes back to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Goal {
    /// What `start` leaves: every stage, or the state after this one (`--to-stage`).
    Start {
        /// `--to-stage`, if given.
        to_stage: Option<String>,
        /// `--variant`: start again with this variant instead of the one recorded.
        variant: Option<String>,
        /// `--seed`: pick the variant to start again with from this seed.
        seed: Option<u64>,
    },
    /// The lab off the cluster, the cluster as before its first `start` (`--remove`).
    Remove,
}

/// `reset` against the session's cluster; an unknown stage is bad input, reported before the
/// cluster is contacted.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    if let Goal::Start { to_stage, .. } = &options.goal {
        let bundle = lab::loader::find(&session.labs, &options.lab)?;
        engine::reset::stages_up_to(&bundle.lab, to_stage.as_deref())?;
    }
    on_cluster(&session.cluster, |cluster| on(cluster, &session.labs, session.lang, options))
}

/// `reset` against `cluster`: print the plan, ask (unless `--yes`), and carry it out.
pub async fn on(cluster: Cluster, labs: &LabSource, lang: Lang, options: &Options) -> Result<u8> {
    use std::io::IsTerminal;
    let bundle = lab::loader::find(labs, &options.lab)?;
    let planned = match &options.goal {
        Goal::Remove => engine::reset::load_remove_plan(&cluster, &bundle).await?,
        Goal::Start { to_stage, variant, seed } => {
            let asked = engine::reset::ResetOptions {
                to_stage: to_stage.clone(),
                variant: variant.clone(),
                seed: *seed,
            };
            engine::reset::load_plan_to(&cluster, &bundle, &asked).await?
        }
    };
    let plan: String = planned.actions.iter().map(|s| format!("  {}\n", s.render(lang))).collect();
    if options.dry_run {
        return print(&format!("{}\n{plan}", tr!(lang, "reset-would", lab = &options.lab)));
    }
    if !options.yes {
        if !std::io::stdin().is_terminal() {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!(
                "reset-needs-yes",
                lab = &options.lab
            ))));
        }
        let prompt =
            format!("{}\n{plan}{}", tr!(lang, "reset-will", lab = &options.lab), tr!(lang, "reset-proceed"));
        if !confirmed(&prompt)? {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!("reset-cancelled"))));
        }
    }
    let done = engine::reset::execute(&cluster, &bundle, planned, lang).await?;
    let lines: String = done.iter().map(|s| format!("  {}\n", s.render(lang))).collect();
    print(&format!("{}\n{lines}", tr!(lang, "reset-done", lab = &options.lab)))
}
