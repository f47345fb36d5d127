//! The lab engine: start, check, answer, reset, status and selftest against any cluster through `kube`, and lint.
//!
//! It speaks only the Kubernetes API (docs/architecture.md, "Layers"): the same code runs against
//! kind, k3s, a cloud cluster or the embedded simulator, which is never a special case here (the
//! engine does not import `crate::sim`).

pub mod answer;
pub mod apply;
pub mod captured;
pub mod check;
pub mod cluster;
pub mod facts;
pub mod hints;
pub mod inventory;
pub mod lint;
pub mod observe;
pub mod reset;
pub mod reset_plan;
pub mod selftest;
pub mod start;
pub mod status;
pub mod waits;
pub mod watch;

use crate::{
    english_display,
    i18n::{Localized, Message},
    msg,
};

/// Everything an engine command can fail with. Its words are catalog messages ([`Localized`]),
/// which the CLI renders in the session's language; `Display` is English.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The cluster could not be reached or the kubeconfig is unusable.
    Cluster(#[from] cluster::Error),
    /// The API server answered a request with an error.
    Api {
        /// What the engine was doing.
        action: Message,
        /// The server's answer, on one line.
        reason: Message,
    },
    /// The cluster lacks what the lab needs (preflight), with what to do about it.
    Preflight {
        /// The lab id.
        lab: String,
        /// What is missing and how to get it.
        reason: Message,
    },
    /// A wait ran out of time.
    TimedOut {
        /// What was awaited.
        what: Message,
        /// The timeout.
        seconds: u64,
        /// The last state observed.
        last_seen: Message,
    },
    /// The breakage of a variant did not reproduce.
    NotReproduced(Message),
    /// The command was asked something it cannot do (unknown variant, task, refused prompt).
    BadInput(Message),
    /// `start` with a variant other than the one whose stage is applied, unconfirmed.
    VariantChange {
        /// The lab id.
        lab: String,
        /// The variant applied now (shown only with `--reveal`).
        running: String,
        /// The variant asked for.
        wanted: String,
    },
    /// The in-cluster inventory is unreadable.
    Inventory(Message),
}

impl Localized for Error {
    fn message(&self) -> Message {
        match self {
            Error::Cluster(error) => error.message(),
            Error::Api { action, reason } => msg!("error-api", action = action, reason = reason),
            Error::Preflight { lab, reason } => msg!("error-preflight", lab = lab, reason = reason),
            Error::TimedOut { what, seconds, last_seen } => {
                msg!("error-timed-out", what = what, seconds = *seconds, seen = last_seen)
            }
            Error::NotReproduced(why) => msg!("error-not-reproduced", reason = why),
            Error::BadInput(message) => message.clone(),
            Error::VariantChange { lab, .. } => msg!("error-variant-change", lab = lab),
            Error::Inventory(why) => msg!("error-inventory", reason = why),
        }
    }
}
english_display!(Error);

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An API error while doing `action` (a catalog message: `listing nodes`).
    pub fn api(action: Message, error: &kube::Error) -> Error {
        Error::Api { action, reason: cluster::reason(error) }
    }
}

/// The label naming the lab that applied an object.
pub const LAB_LABEL: &str = "lab-runner.io/lab";
/// The label naming the stage that applied an object.
pub const STAGE_LABEL: &str = "lab-runner.io/stage";
/// The server-side apply field manager of every engine write.
pub const FIELD_MANAGER: &str = "lab-runner";
