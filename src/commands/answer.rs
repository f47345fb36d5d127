//! `answer`: record the answer to a quiz task in the cluster.

use super::{Result, on_cluster, print};
use crate::{
    engine::{self, cluster::Cluster},
    lab,
    session::{LabSource, Lang, Session},
};

/// What `answer` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The lab id.
    pub lab: String,
    /// The quiz task id.
    pub task: String,
    /// The answer.
    pub value: String,
}

/// `answer` against the session's cluster.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    on_cluster(&session.cluster, |cluster| on(cluster, &session.labs, session.lang, options))
}

/// `answer` against `cluster`: check a quiz answer's domain and the attempts left, then store it
/// in the inventory.
pub async fn on(cluster: Cluster, labs: &LabSource, lang: Lang, options: &Options) -> Result<u8> {
    let bundle = lab::loader::find(labs, &options.lab)?;
    let recorded = engine::answer::answer(&cluster, &bundle, &options.task, &options.value, lang).await?;
    print(&format!("{}\n", recorded.message(&options.lab, &options.task, lang)))
}
