//! `start`: apply a lab's stages and print its briefing.

use std::io::IsTerminal;

use super::{Error, Result, confirmed, on_cluster, print};
use crate::{
    engine::{self, cluster::Cluster},
    lab,
    session::{LabSource, Lang, Session},
    tr,
};

/// What `start` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The lab id.
    pub lab: String,
    /// The variant to start (default: chosen from `seed`).
    pub variant: Option<String>,
    /// The seed that picks the default variant reproducibly.
    pub seed: Option<u64>,
    /// Name the variant started (instructors: it answers a quiz).
    pub reveal: bool,
    /// Replace another variant whose breakage is applied without asking.
    pub yes: bool,
}

/// `start` against the session's cluster.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    on_cluster(&session.cluster, |cluster| on(cluster, &session.labs, session.lang, options))
}

/// `start` against `cluster`: apply the lab and print its briefing.
pub async fn on(cluster: Cluster, labs: &LabSource, lang: Lang, options: &Options) -> Result<u8> {
    let bundle = lab::loader::find(labs, &options.lab)?;
    let mut start = engine::start::StartOptions {
        variant: options.variant.clone(),
        seed: options.seed,
        yes: options.yes,
        hosted: false,
    };
    let started = match engine::start::start(&cluster, &bundle, lang, &start).await {
        Err(engine::Error::VariantChange { lab, running, wanted }) if std::io::stdin().is_terminal() => {
            let prompt = if options.reveal {
                tr!(lang, "start-variant-prompt-revealed", lab = &lab, running = &running, wanted = &wanted)
            } else {
                tr!(lang, "start-variant-prompt", lab = &lab)
            };
            if !confirmed(&prompt)? {
                return Err(Error::Engine(engine::Error::BadInput(crate::msg!("start-cancelled"))));
            }
            start.yes = true;
            engine::start::start(&cluster, &bundle, lang, &start).await?
        }
        Err(engine::Error::VariantChange { lab, running, wanted }) if options.reveal => {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!(
                "start-variant-change-revealed",
                lab = &lab,
                running = &running,
                wanted = &wanted
            ))));
        }
        other => other?,
    };
    let lab = &bundle.lab.id.value;
    // The variant answers the `cause` quiz: named only to an instructor who asks.
    let done = match started.variant.filter(|_| options.reveal) {
        Some(variant) => {
            tr!(lang, "start-done-variant", lab = lab, variant = variant, count = started.applied)
        }
        None => tr!(lang, "start-done", lab = lab, count = started.applied),
    };
    print(&format!("{done}\n\n{}\n", started.briefing))
}
