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

/// The key a lab's records are sealed and its facts keyed with: 32 random bytes `start` keeps in a
/// Secret beside the records (`lab-runner/lab-runner-key-<lab>`). Without it, a stored fact cannot
/// be tested against a guess (a variant is one of three words: a plain hash would give it away
/// offline), and a record cannot be rewritten unnoticed.
#[derive(Clone, PartialEq, Eq)]
pub struct RecordKey(Vec<u8>);

impl std::fmt::Debug for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecordKey(…)")
    }
}

/// How long a record key is, in bytes.
pub const RECORD_KEY_BYTES: usize = 32;

impl RecordKey {
    /// A fresh random key.
    pub fn generate() -> RecordKey {
        use ring::rand::SecureRandom;
        let mut key = vec![0u8; RECORD_KEY_BYTES];
        ring::rand::SystemRandom::new().fill(&mut key).expect("the system random source works");
        RecordKey(key)
    }

    /// A key read back; `None` when it is not one (too short).
    pub fn from_bytes(bytes: Vec<u8>) -> Option<RecordKey> {
        (bytes.len() >= RECORD_KEY_BYTES).then_some(RecordKey(bytes))
    }

    /// The key's bytes, to store.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// HMAC-SHA256 over `parts`, each followed by a zero byte, hex.
    pub fn mac(&self, parts: &[&str]) -> String {
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &self.0);
        let mut context = ring::hmac::Context::with_key(&key);
        for part in parts {
            context.update(part.as_bytes());
            context.update(&[0]);
        }
        hex(context.sign().as_ref())
    }
}

/// A captured fact, keyed: the HMAC of the exact value and of the case-folded one under the lab's
/// [`RecordKey`]. Stored in the lab's inventory; a quiz compares an answer with it without ever
/// holding the value, and nobody without the key can test a guess against it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HashedFact {
    /// HMAC of the trimmed value, hex.
    pub exact: String,
    /// HMAC of the trimmed, lower-cased value, hex.
    pub folded: String,
}

impl HashedFact {
    /// Keys `value` with `key`.
    pub fn new(key: &RecordKey, value: &str) -> HashedFact {
        HashedFact {
            exact: key.mac(&["fact", value.trim()]),
            folded: key.mac(&["fact", &value.trim().to_lowercase()]),
        }
    }

    /// Whether `answer` equals the keyed value, exactly or ignoring case.
    pub fn matches(&self, key: &RecordKey, answer: &str, case_insensitive: bool) -> bool {
        if case_insensitive {
            key.mac(&["fact", &answer.trim().to_lowercase()]) == self.folded
        } else {
            key.mac(&["fact", answer.trim()]) == self.exact
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A node `start` found a `rollout` check's `nodes` selector matching: the nodes it must cover.
/// Node names and uids are no secret (anyone lists them); the record is sealed like the others.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StartNode {
    /// Node name.
    pub name: String,
    /// Its uid then: a node deleted and made again under the name is another node.
    pub uid: String,
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
    /// The nodes the `rollout` checks cover, captured at start.
    pub start_nodes: &'a [StartNode],
    /// The key the facts are keyed with; `None` when these credentials cannot read it (a learner's
    /// in a hosted class): a quiz graded against a keyed fact is then graded by the instructor.
    pub key: Option<&'a RecordKey>,
    /// How many answers `answer` recorded, by task id.
    pub attempts: &'a BTreeMap<String, u32>,
    /// Per working namespace, the uids of the objects in it when the lab was first started: the
    /// objects that are not a learner's answer.
    pub present_at_start: &'a BTreeMap<String, std::collections::BTreeSet<String>>,
}

impl Started<'_> {
    /// Whether the variant started is `id` (never, without the key).
    pub fn variant_is(&self, id: &str) -> bool {
        match (self.variant, self.key) {
            (Some(variant), Some(key)) => variant.matches(key, id, false),
            _ => false,
        }
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
