//! The lab engine: start, check, answer, reset, status and selftest against any cluster through `kube`, and lint.
//!
//! It speaks only the Kubernetes API (DESIGN §2.1): the same code runs against kind, k3s, a cloud
//! cluster or the embedded simulator, which is never a special case here (the engine does not
//! import `crate::sim`).

pub mod answer;
pub mod apply;
pub mod captured;
pub mod check;
pub mod class;
pub mod cluster;
pub mod inventory;
pub mod lint;
pub mod observe;
pub mod reset;
pub mod reset_plan;
pub mod selftest;
pub mod start;
pub mod status;
pub mod watch;

use crate::exit;

/// Everything an engine command can fail with.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The cluster could not be reached or the kubeconfig is unusable.
    #[error(transparent)]
    Cluster(#[from] cluster::Error),
    /// The API server answered a request with an error.
    #[error("{action}: {reason}")]
    Api {
        /// What the engine was doing.
        action: String,
        /// The server's answer, on one line.
        reason: String,
    },
    /// The cluster lacks what the lab needs (preflight), with what to do about it.
    #[error("the cluster does not fit lab {lab}: {reason}")]
    Preflight {
        /// The lab id.
        lab: String,
        /// What is missing and how to get it.
        reason: String,
    },
    /// A wait ran out of time.
    #[error("timed out after {seconds}s waiting for {what}: {last_seen}")]
    TimedOut {
        /// What was awaited.
        what: String,
        /// The timeout.
        seconds: u64,
        /// The last state observed.
        last_seen: String,
    },
    /// The breakage of a variant did not reproduce.
    #[error("the breakage did not reproduce: {0}")]
    NotReproduced(String),
    /// The command was asked something it cannot do (unknown variant, task, refused prompt).
    #[error("{0}")]
    BadInput(String),
    /// Learners' kubeconfigs could not be merged (`class kubeconfig`).
    #[error(transparent)]
    Class(#[from] class::Error),
    /// `start` with a variant other than the one whose stage is applied, unconfirmed.
    #[error(
        "lab {lab} is started with another variant whose breakage is applied; starting a different one replaces it and forgets the answers: pass --yes to proceed (or `lab-runner reset {lab}` first)"
    )]
    VariantChange {
        /// The lab id.
        lab: String,
        /// The variant applied now (shown only with `--reveal`).
        running: String,
        /// The variant asked for.
        wanted: String,
    },
    /// The in-cluster inventory is unreadable.
    #[error("the lab inventory is unreadable: {0}")]
    Inventory(String),
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The documented exit code (DESIGN §6).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Cluster(cluster::Error::Kubeconfig { .. } | cluster::Error::UnknownContext { .. })
            | Error::BadInput(_)
            | Error::Class(_)
            | Error::VariantChange { .. } => exit::BAD_INPUT,
            Error::Cluster(_) | Error::Api { .. } | Error::Preflight { .. } | Error::Inventory(_) => {
                exit::CLUSTER_ERROR
            }
            Error::TimedOut { .. } => exit::TIMED_OUT,
            Error::NotReproduced(_) => exit::CHECKS_FAILED,
        }
    }

    /// An API error while doing `action`.
    pub fn api(action: impl Into<String>, error: &kube::Error) -> Error {
        let reason = match error {
            kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
            other => cluster::one_line(other),
        };
        Error::Api { action: action.into(), reason }
    }
}

/// The label naming the lab that applied an object.
pub const LAB_LABEL: &str = "lab-runner.io/lab";
/// The label naming the stage that applied an object.
pub const STAGE_LABEL: &str = "lab-runner.io/stage";
/// The server-side apply field manager of every engine write.
pub const FIELD_MANAGER: &str = "lab-runner";
