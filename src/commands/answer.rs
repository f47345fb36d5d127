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

/// `answer` against the session's cluster. The lab is found before any cluster is asked: an
/// unknown lab (one in a directory named without `--labs`, say) is bad input wherever it runs.
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    let bundle = lab::loader::find(&session.labs, &options.lab)?;
    on_cluster(&session.cluster, |cluster| record(cluster, &bundle, session.lang, options))
}

/// `answer` against `cluster`: check a quiz answer's domain and the attempts left, then store it
/// in the inventory.
pub async fn on(cluster: Cluster, labs: &LabSource, lang: Lang, options: &Options) -> Result<u8> {
    let bundle = lab::loader::find(labs, &options.lab)?;
    record(cluster, &bundle, lang, options).await
}

async fn record(cluster: Cluster, bundle: &lab::loader::Bundle, lang: Lang, options: &Options) -> Result<u8> {
    let recorded = engine::answer::answer(&cluster, bundle, &options.task, &options.value, lang).await?;
    print(&format!("{}\n", recorded.message(&options.lab, &options.task, lang)))
}
