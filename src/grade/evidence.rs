//! The evidence a lab is graded on: one observation of the cluster, what `start` recorded, the bundle's files.
//!
//! Everything here is plain data the engine gathers (it alone talks to the cluster); the graders
//! in [`super`] are pure functions over it, so lint can grade the same expectations against an
//! empty cluster and tests can grade hand-made evidence.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ExpectedFiles, KindKey, Observed};
use crate::lab::{loader::Bundle, model::Stage};

/// One observation of the cluster: the objects listed, why any kind could not be, the probes sent.
#[derive(Debug, Clone, Default)]
pub struct Observation {
    /// The listed objects, by kind.
    pub observed: Observed,
    /// Kinds that could not be listed, with the reason on one line.
    pub failures: BTreeMap<KindKey, String>,
    /// The `dryRun=All` probes sent, by probe file.
    pub probes: BTreeMap<String, Probe>,
    /// Objects a LIST returned that could not be read, by kind: an expectation that might be
    /// about one of them is ERROR, naming it.
    pub unreadable: BTreeMap<KindKey, Vec<Unreadable>>,
}

/// An object a LIST returned whose metadata does not decode (an ill-typed object another
/// client or an older server stored).
#[derive(Debug, Clone, PartialEq)]
pub struct Unreadable {
    /// The object as listed, with apiVersion and kind set.
    pub object: Value,
    /// Why it could not be read, on one line.
    pub reason: String,
}

/// What a `dryRun=All` create probe got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    /// Admission accepted it.
    Admitted,
    /// Admission rejected it, with the server's message.
    Rejected(String),
    /// It could not be sent or judged, with why.
    NotSent(crate::i18n::Message),
}

/// A captured fact, salted and hashed: the exact value's digest and the case-folded one's.
/// Stored in the lab's inventory; a quiz compares an answer with it without ever holding the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashedFact {
    /// Random salt, hex.
    pub salt: String,
    /// SHA-256 of salt and the trimmed value, hex.
    pub exact: String,
    /// SHA-256 of salt and the trimmed, lower-cased value, hex.
    pub folded: String,
}

impl HashedFact {
    /// Hashes `value` with a fresh random salt.
    pub fn new(value: &str) -> HashedFact {
        use ring::rand::SecureRandom;
        let mut salt = [0u8; 16];
        ring::rand::SystemRandom::new().fill(&mut salt).expect("the system random source works");
        let salt = hex(&salt);
        HashedFact {
            exact: digest(&salt, value.trim()),
            folded: digest(&salt, &value.trim().to_lowercase()),
            salt,
        }
    }

    /// Whether `answer` equals the hashed value, exactly or ignoring case.
    pub fn matches(&self, answer: &str, case_insensitive: bool) -> bool {
        if case_insensitive {
            digest(&self.salt, &answer.trim().to_lowercase()) == self.folded
        } else {
            digest(&self.salt, answer.trim()) == self.exact
        }
    }
}

fn digest(salt: &str, value: &str) -> String {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    context.update(salt.as_bytes());
    context.update(b":");
    context.update(value.as_bytes());
    hex(context.finish().as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What `start` recorded on this cluster that a quiz or a rollout check grades against.
#[derive(Debug, Clone, Copy)]
pub struct Started<'a> {
    /// The lab id.
    pub lab: &'a str,
    /// The variant started, if the lab has variants (stored hashed, like the facts).
    pub variant: Option<&'a HashedFact>,
    /// Quiz answers by task id.
    pub answers: &'a BTreeMap<String, String>,
    /// Facts captured when the breakage was confirmed, by fact name.
    pub facts: &'a BTreeMap<String, HashedFact>,
    /// How many answers `answer` recorded, by task id.
    pub attempts: &'a BTreeMap<String, u32>,
    /// Per working namespace, the uids of the objects in it when the lab was first started: the
    /// objects that are not a learner's answer.
    pub present_at_start: &'a BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Started<'_> {
    /// Whether the variant started is `id`.
    pub fn variant_is(&self, id: &str) -> bool {
        self.variant.is_some_and(|v| v.matches(id, false))
    }
}

/// Everything one grading looks at.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The cluster as observed.
    pub observation: &'a Observation,
    /// What `start` recorded; `None` when the lab was not started on this cluster.
    pub started: Option<Started<'a>>,
    /// The bundle's expected objects, pod specs and probes, by path.
    pub files: &'a ExpectedFiles,
    /// The bundle's manifest documents, by path (a rollout check compares with its broken stage's).
    pub manifests: &'a BTreeMap<String, Vec<Value>>,
    /// The lab's stages.
    pub stages: &'a [Stage],
    /// The variant started, found among the lab's variants by its digest.
    pub variant: Option<&'a str>,
    /// Whether the report shows details (`check --details`): what grading left alone is named.
    pub details: bool,
}

impl<'a> Evidence<'a> {
    /// The evidence for grading `bundle` against `observation`.
    pub fn new(
        bundle: &'a Bundle,
        observation: &'a Observation,
        started: Option<Started<'a>>,
    ) -> Evidence<'a> {
        Evidence {
            observation,
            started,
            files: &bundle.expected,
            manifests: &bundle.manifests,
            stages: &bundle.lab.stages,
            variant: started.and_then(|s| {
                bundle.lab.variants.iter().map(|v| v.id.value.as_str()).find(|id| s.variant_is(id))
            }),
            details: false,
        }
    }

    /// The same evidence for a report with details (`check --details`).
    pub fn with_details(self, details: bool) -> Evidence<'a> {
        Evidence { details, ..self }
    }

    /// The objects observed.
    pub fn observed(&self) -> &'a Observed {
        &self.observation.observed
    }
}
