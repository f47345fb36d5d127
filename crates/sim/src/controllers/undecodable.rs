//! Stored objects a controller cannot decode into their API type: reported once, then skipped.
//!
//! Such an object can only come from before the API server checked types (an older store, or a
//! write below the HTTP layer). Upstream's informers never see one (the apiserver refuses it), so
//! there is no upstream text to mirror; what matters is that one bad object does not wedge every
//! controller: a node whose `metadata.labels` is a list must not keep all pods Pending.

use std::{
    collections::BTreeSet,
    sync::{Mutex, OnceLock},
};

use serde::de::DeserializeOwned;

use super::decode;
use crate::store::Stored;

/// One revision of one stored object: resource, namespace, name, revision.
type ObjectRevision = (String, String, String, u64);

/// Every object revision already reported in this process.
fn reported() -> &'static Mutex<BTreeSet<ObjectRevision>> {
    static REPORTED: OnceLock<Mutex<BTreeSet<ObjectRevision>>> = OnceLock::new();
    REPORTED.get_or_init(Mutex::default)
}

/// `stored` as `T`, or `None` after a warning in the log (once per object revision: a later
/// write that fixes or breaks it again is reported anew).
pub(crate) fn decode_or_skip<T: DeserializeOwned>(stored: &Stored) -> Option<T> {
    match decode(stored) {
        Ok(value) => Some(value),
        Err(error) => {
            let key = (
                stored.group_resource.clone(),
                stored.namespace.clone(),
                stored.name.clone(),
                stored.revision,
            );
            let first = reported().lock().unwrap_or_else(|p| p.into_inner()).insert(key);
            if first {
                tracing::warn!(%error, "skipping a stored object the controllers cannot decode");
            }
            None
        }
    }
}

/// Every item of `stored` that decodes as `T`, the others reported and skipped.
pub(crate) fn decode_all<'a, T: DeserializeOwned>(stored: impl IntoIterator<Item = &'a Stored>) -> Vec<T> {
    stored.into_iter().filter_map(decode_or_skip).collect()
}
