//! Objects, a monotonic revision (= resourceVersion) and watch history, durable in SQLite.
//!
//! The store is **synchronous**: every method takes one mutex, and a write returns only after
//! its SQLite transaction committed (WAL, `synchronous=NORMAL`), so an acknowledged write
//! survives `kill -9` (see [`db`] for what it does not promise). Async callers call it
//! directly; a write blocks for one commit (tens of microseconds, no fsync). The current state of every object is also held in memory as
//! its serialized JSON plus the labels and selectable fields selectors need, so lists and watch
//! fan-out never touch the database; the database is read only at open.
//!
//! The store only stores: object semantics (uid, creationTimestamp, generation, admission,
//! graceful deletion, finalizers, namespace cascade) are the generic registry's, whose write
//! path (`Store::create`, `update`, `modify`, `bind`, `delete`, …) is defined in
//! [`crate::registry`] on top of [`Store::write`]. The store calls neither the registry nor
//! the kinds' strategies (but for the selectable fields it keeps beside each object) nor the
//! server.
//!
//! ```no_run
//! use lab_runner_sim::{resources, store::Store};
//! let store = Store::open(std::path::Path::new("/tmp/sim/state.db"))?;
//! let types = resources::built_in();
//! let nodes = resources::find(&types, "", "v1", "nodes").unwrap();
//! store.create(nodes, serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}))?;
//! assert_eq!(store.count_by_type()?, vec![("nodes".to_string(), 1)]);
//! # Ok::<(), lab_runner_sim::store::Error>(())
//! ```

use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
    sync::{Arc, Mutex, MutexGuard, OnceLock},
};

use k8s_openapi::jiff::Timestamp;
use serde_json::Value;
use tokio::sync::broadcast;

use super::{
    clock::Clock,
    kinds::{self, Cause},
    resources::ResourceType,
};
use crate::k8s::selector::{self, Fields};

mod claims;
pub mod db;
mod history;

pub use claims::claimed_by_selector;
pub use history::{DEFAULT_WINDOW, Event, EventType};

/// Errors from store operations; each maps to one upstream `Status`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The object does not exist (404): `pods "x" not found`.
    #[error("{resource} \"{name}\" not found")]
    NotFound {
        /// Group-resource, e.g. `pods`, `daemonsets.apps`.
        resource: String,
        /// Object name.
        name: String,
    },
    /// Create of an existing name (409 AlreadyExists): `pods "x" already exists`.
    #[error("{resource} \"{name}\" already exists")]
    AlreadyExists {
        /// Group-resource.
        resource: String,
        /// Object name.
        name: String,
    },
    /// A stale resourceVersion or failed precondition (409 Conflict).
    #[error("Operation cannot be fulfilled on {resource} \"{name}\": {reason}")]
    Conflict {
        /// Group-resource.
        resource: String,
        /// Object name.
        name: String,
        /// Upstream's reason text, e.g. `the object has been modified; …`.
        reason: String,
    },
    /// Create in a namespace being deleted (403 Forbidden), upstream's NamespaceLifecycle text.
    #[error(
        "{resource} \"{name}\" is forbidden: unable to create new content in namespace {namespace} because it is being terminated"
    )]
    NamespaceTerminating {
        /// Group-resource.
        resource: String,
        /// Object name.
        name: String,
        /// The terminating namespace.
        namespace: String,
    },
    /// A validating admission plugin refused the request (403 Forbidden), e.g. quota:
    /// `pods "x" is forbidden: exceeded quota: …` (`admission.NewForbidden`).
    #[error("{resource} \"{name}\" is forbidden: {message}")]
    Forbidden {
        /// Group-resource.
        resource: String,
        /// Object name (the generated one for `generateName`).
        name: String,
        /// The plugin's reason.
        message: String,
    },
    /// Admission rejected the object (422 Invalid).
    #[error("{qualified_kind} \"{name}\" is invalid: {}", summarize(.causes))]
    Invalid {
        /// `Pod`, `DaemonSet.apps`.
        qualified_kind: String,
        /// Kind alone, for `details.kind`.
        kind: String,
        /// API group, for `details.group`.
        group: String,
        /// Object name.
        name: String,
        /// The failures.
        causes: Vec<Cause>,
    },
    /// A request the store cannot make sense of (400 BadRequest).
    #[error("{0}")]
    BadRequest(String),
    /// A watch from a resourceVersion older than the history window (410 Expired).
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The resourceVersion asked for.
        requested: u64,
        /// The oldest one a watch can start from.
        oldest: u64,
    },
    /// A resourceVersion newer than the store's (504 upstream, after waiting).
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The resourceVersion asked for.
        requested: u64,
        /// The store's revision.
        current: u64,
    },
    /// The database failed (500).
    #[error(transparent)]
    Database(#[from] db::Error),
    /// A stored object is not valid JSON (500; only a damaged database causes it).
    #[error("stored object is not valid JSON: {0}")]
    Corrupt(#[from] serde_json::Error),
    /// An object over etcd's request limit ([`MAX_OBJECT_BYTES`]): etcd's own error, which
    /// kube-apiserver passes on as a 500 with no reason (kubernetes/kubernetes#74600, #112152).
    #[error("etcdserver: request is too large")]
    RequestTooLarge,
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// etcd's `--max-request-bytes` default (1.5 MiB, `embed.DefaultMaxRequestBytes`), which
/// kube-apiserver's etcd keeps. etcd measures the whole protobuf request; the simulator
/// measures the object's stored JSON, a little larger than its protobuf for the same object.
pub const MAX_OBJECT_BYTES: usize = 1024 * 1024 + 512 * 1024;

fn summarize(causes: &[Cause]) -> String {
    kinds::field::aggregate(causes)
}

/// One stored object: its JSON (with `metadata.resourceVersion` set) and what selectors read.
#[derive(Debug, Clone)]
pub struct Stored {
    /// The revision it was written at.
    pub revision: u64,
    /// `pods`, `daemonsets.apps`.
    pub group_resource: String,
    /// Namespace (`""` for cluster-scoped).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// The object as JSON text.
    pub json: Arc<str>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// Selectable fields (see [`kinds::selectable_fields`]).
    pub fields: Fields,
    /// The owner reference marked `controller: true`, if any: controllers find their dependents
    /// and route changes by it without parsing the objects (issue #17).
    pub controller: Option<ControllerRef>,
    /// This revision's `Table` row, rendered by the first request that needed it: a Table LIST
    /// or a table watch then reads it instead of parsing the object again (issue #17).
    table_row: OnceLock<Box<str>>,
}

impl Stored {
    fn new(revision: u64, group_resource: &str, value: &Value) -> Result<Stored> {
        Ok(Stored {
            revision,
            group_resource: group_resource.to_string(),
            namespace: value["metadata"]["namespace"].as_str().unwrap_or_default().to_string(),
            name: value["metadata"]["name"].as_str().unwrap_or_default().to_string(),
            // Go's bytes, as kube-apiserver serves them (see `gojson`).
            json: crate::gojson::to_string(value).into(),
            labels: selector::labels_of(value),
            fields: kinds::selectable_fields(group_resource, value),
            controller: ControllerRef::of(value),
            table_row: OnceLock::new(),
        })
    }

    /// Whether [`Stored::table_row`] has been computed.
    pub fn has_table_row(&self) -> bool {
        self.table_row.get().is_some()
    }

    /// This revision's `Table` row: `render`'s output for the parsed object, computed once (the
    /// first caller's rendering is kept; the row printer of a type never changes).
    pub fn table_row(&self, render: impl FnOnce(&Value) -> String) -> Result<&str> {
        if let Some(row) = self.table_row.get() {
            return Ok(row);
        }
        let row = render(&self.value()?);
        Ok(self.table_row.get_or_init(|| row.into()))
    }

    /// The object's JSON as bytes that share its text (no copy, however many responses and
    /// watch streams send it at once).
    pub fn json_bytes(&self) -> axum::body::Bytes {
        /// The stored text as the owner of a `Bytes`.
        struct SharedJson(Arc<str>);
        impl AsRef<[u8]> for SharedJson {
            fn as_ref(&self) -> &[u8] {
                self.0.as_bytes()
            }
        }
        axum::body::Bytes::from_owner(SharedJson(self.json.clone()))
    }

    /// The object parsed.
    pub fn value(&self) -> Result<Value> {
        // Client input is read to Go's nesting limit, past serde_json's default of 128.
        Ok(crate::gojson::from_checked(self.json.as_bytes())?)
    }
}

/// An owner reference with `controller: true`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerRef {
    /// `DaemonSet`, `ReplicaSet`.
    pub kind: Box<str>,
    /// The owner's name.
    pub name: Box<str>,
    /// The owner's uid.
    pub uid: Box<str>,
}

impl ControllerRef {
    /// `metav1.GetControllerOf`: the first owner reference marked `controller: true`.
    pub fn of(object: &Value) -> Option<ControllerRef> {
        let reference = object["metadata"]["ownerReferences"]
            .as_array()?
            .iter()
            .find(|reference| reference["controller"] == Value::Bool(true))?;
        let text = |field: &str| reference[field].as_str().unwrap_or_default().into();
        Some(ControllerRef { kind: text("kind"), name: text("name"), uid: text("uid") })
    }
}

/// `dryRun=All`: run everything, store nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DryRun {
    /// A real write.
    #[default]
    Off,
    /// Validate and return the would-be result only.
    All,
}

/// Which part of an object a write addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    /// The object: the stored status is kept for types with a status subresource.
    Main,
    /// `/status`: only `status` changes.
    Status,
}

/// A pod's binding to a node ([`Store::bind`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Binding {
    /// The node.
    pub node: String,
    /// The pod's uid, when the binding names it (a precondition).
    pub uid: Option<String>,
    /// The pod's resourceVersion, when the binding names it (a precondition).
    pub resource_version: Option<String>,
    /// Annotations the binding adds to the pod.
    pub annotations: serde_json::Map<String, Value>,
    /// `dryRun=All`: check, write nothing.
    pub dry_run: DryRun,
}

/// The revision (resourceVersion) an object returned by a write carries.
pub fn revision_of(object: &Value) -> Option<u64> {
    object["metadata"]["resourceVersion"].as_str()?.parse().ok()
}

/// One write of a batch ([`Store::write_each`]).
#[derive(Debug, Clone, PartialEq)]
pub enum BatchWrite {
    /// Create the object.
    Create(Value),
    /// Replace the object (optimistic concurrency on its `metadata.resourceVersion`).
    Update(Value),
}

/// `propagationPolicy` of a delete.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Delete now; the garbage collector removes dependents afterwards.
    Background,
    /// Keep the object (finalizer `foregroundDeletion`) until its dependents are gone.
    Foreground,
    /// Keep the object (finalizer `orphan`) until its dependents' owner references are removed.
    Orphan,
}

/// `DeleteOptions` as a delete request carries them.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `gracePeriodSeconds`; `None` uses the type's default (pods: the pod's
    /// `terminationGracePeriodSeconds`).
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`; `None` is Background for the types served.
    pub propagation: Option<Propagation>,
    /// `preconditions.uid`.
    pub precondition_uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub precondition_resource_version: Option<String>,
    /// `dryRun`.
    pub dry_run: DryRun,
}

/// What a delete did.
#[derive(Debug, Clone, PartialEq)]
pub enum Deletion {
    /// The object is gone; its last state.
    Removed(Value),
    /// The object stays with `deletionTimestamp` (graceful pod deletion, finalizers, a
    /// namespace still emptying); its current state.
    Pending(Value),
}

impl Deletion {
    /// The object either way.
    pub fn object(&self) -> &Value {
        match self {
            Deletion::Removed(object) | Deletion::Pending(object) => object,
        }
    }
}

/// Whether a create-or-update write created the object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The object did not exist (HTTP 201).
    Created,
    /// The object existed (HTTP 200).
    Updated,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ListPage {
    /// Matching objects in (namespace, name) order.
    pub items: Vec<Arc<Stored>>,
    /// The store revision the list reflects.
    pub revision: u64,
    /// When `limit` cut the list: the last (namespace, name) returned.
    pub continue_after: Option<(String, String)>,
    /// When `limit` cut the list: how many matching objects remain.
    pub remaining: Option<u64>,
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchFrom {
    /// Every change after this resourceVersion (replayed from history, then live).
    Revision(u64),
    /// The current objects as `ADDED`, then every later change.
    InitialState,
}

/// A started watch: what to send first, then the live feed.
#[derive(Debug)]
pub struct WatchStart {
    /// Current objects (for [`WatchFrom::InitialState`]), in key order.
    pub initial: Vec<Arc<Stored>>,
    /// Retained events after the asked revision.
    pub replay: Vec<Arc<Event>>,
    /// The store revision when the watch started.
    pub revision: u64,
    /// Later events, in revision order (all types: filter by `group_resource`).
    pub live: broadcast::Receiver<Arc<Event>>,
}

type Objects = BTreeMap<(String, String), Arc<Stored>>;

#[derive(Debug)]
struct Inner {
    db: db::Db,
    revision: u64,
    objects: HashMap<String, Objects>,
    owners: claims::OwnerIndex,
    history: history::History,
    writes_since_compaction: usize,
    /// Rows written since the store opened that no longer hold an object's current state (the
    /// previous revision of every change, and every tombstone), for the next compaction.
    superseded: Vec<u64>,
}

/// Rows written between two compactions of superseded revisions.
const COMPACT_EVERY: usize = 10_000;

/// The simulator's object store.
#[derive(Debug)]
pub struct Store {
    inner: Mutex<Inner>,
    /// The health checks' own connection to the database file (`None` in memory): [`Store::ping`]
    /// never waits on a write in progress.
    probe: Option<Mutex<db::Probe>>,
    clock: Clock,
    /// Where the latency of each database write is recorded, if anywhere.
    metrics: Option<Arc<crate::metrics::Metrics>>,
}

impl Store {
    /// Opens (or creates) the state database at `path` and loads the current objects.
    pub fn open(path: &Path) -> Result<Store> {
        let mut store = Store::from_db(db::Db::open(path)?)?;
        store.probe = Some(Mutex::new(db::Db::probe(path)?));
        Ok(store)
    }

    /// A store that keeps nothing on disk (tests, benchmarks).
    pub fn in_memory() -> Result<Store> {
        Store::from_db(db::Db::in_memory()?)
    }

    fn from_db(db: db::Db) -> Result<Store> {
        let revision = db.max_revision()?;
        db.compact(revision)?;
        let mut objects: HashMap<String, Objects> = HashMap::new();
        let mut failure = None;
        db.rows(|row| {
            let key = (row.namespace.clone(), row.name.clone());
            let by_type = objects.entry(row.group_resource.clone()).or_default();
            if row.change == db::RowChange::Deleted {
                by_type.remove(&key);
                return;
            }
            match crate::gojson::from_checked::<Value>(row.value.as_bytes())
                .map_err(Error::from)
                .and_then(|value| Stored::new(row.revision, &row.group_resource, &value))
            {
                Ok(stored) => {
                    by_type.insert(key, Arc::new(stored));
                }
                Err(error) => failure = Some(error),
            }
        })?;
        if let Some(error) = failure {
            return Err(error);
        }
        let mut owners = claims::OwnerIndex::default();
        for stored in objects.values().flat_map(|by_type| by_type.values()) {
            owners.insert(stored);
        }
        Ok(Store {
            inner: Mutex::new(Inner {
                db,
                revision,
                objects,
                owners,
                superseded: Vec::new(),
                history: history::History::new(DEFAULT_WINDOW),
                writes_since_compaction: 0,
            }),
            probe: None,
            clock: Clock::real(),
            metrics: None,
        })
    }

    /// Records the latency of every database write in `metrics` (`etcd_request_duration_seconds`
    /// by operation and type, as upstream's storage layer records its etcd requests).
    pub fn with_metrics(mut self, metrics: Arc<crate::metrics::Metrics>) -> Store {
        self.metrics = Some(metrics);
        self
    }

    /// Uses `clock` for creation and deletion timestamps.
    pub fn with_clock(mut self, clock: Clock) -> Store {
        self.clock = clock;
        self
    }

    /// Retains `window` events for resourceVersion replay (default [`DEFAULT_WINDOW`]).
    pub fn with_history_window(self, window: usize) -> Store {
        self.lock().history = history::History::new(window);
        self
    }

    /// The clock the store stamps objects with.
    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A panic while holding the lock cannot leave a half-applied write: changes are applied
        // to memory only after the commit, in one step.
        self.inner.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The newest revision (resourceVersion) written.
    pub fn revision(&self) -> u64 {
        self.lock().revision
    }

    /// How many objects each group-resource holds (`pods`, `daemonsets.apps`), sorted by name;
    /// types with no object are left out.
    pub fn count_by_type(&self) -> Result<Vec<(String, u64)>> {
        let inner = self.lock();
        let mut counts: Vec<(String, u64)> = inner
            .objects
            .iter()
            .filter(|(_, objects)| !objects.is_empty())
            .map(|(group_resource, objects)| (group_resource.clone(), objects.len() as u64))
            .collect();
        counts.sort();
        Ok(counts)
    }

    /// The stored object, if any.
    pub fn get(&self, group_resource: &str, namespace: &str, name: &str) -> Option<Arc<Stored>> {
        let inner = self.lock();
        inner.objects.get(group_resource)?.get(&(namespace.to_string(), name.to_string())).cloned()
    }

    /// The stored object parsed, or [`Error::NotFound`].
    pub fn get_value(&self, rt: &ResourceType, namespace: &str, name: &str) -> Result<Value> {
        let namespace = if rt.namespaced() { namespace } else { "" };
        match self.get(&rt.group_resource(), namespace, name) {
            Some(stored) => stored.value(),
            None => Err(not_found(&rt.group_resource(), name)),
        }
    }

    /// Lists objects of `group_resource` (in `namespace`, or all), keeping those `keep`
    /// accepts, starting after `after`, at most `limit`.
    pub fn list(
        &self,
        group_resource: &str,
        namespace: Option<&str>,
        keep: &dyn Fn(&Stored) -> bool,
        after: Option<&(String, String)>,
        limit: Option<usize>,
    ) -> ListPage {
        let inner = self.lock();
        let revision = inner.revision;
        let Some(objects) = inner.objects.get(group_resource) else {
            return ListPage { items: Vec::new(), revision, continue_after: None, remaining: None };
        };
        let lower = match (after, namespace) {
            (Some(after), _) => std::ops::Bound::Excluded(after.clone()),
            (None, Some(ns)) => std::ops::Bound::Included((ns.to_string(), String::new())),
            (None, None) => std::ops::Bound::Unbounded,
        };
        let mut matching = objects
            .range((lower, std::ops::Bound::Unbounded))
            .take_while(|((ns, _), _)| namespace.is_none_or(|wanted| ns == wanted))
            .map(|(_, stored)| stored)
            .filter(|stored| keep(stored));
        let limit = limit.filter(|limit| *limit > 0).unwrap_or(usize::MAX);
        let items: Vec<Arc<Stored>> = matching.by_ref().take(limit).cloned().collect();
        let remaining = matching.count() as u64;
        let continue_after = (remaining > 0)
            .then(|| items.last().map(|last| (last.namespace.clone(), last.name.clone())))
            .flatten();
        ListPage { items, revision, remaining: continue_after.as_ref().map(|_| remaining), continue_after }
    }

    /// The objects of `group_resource` in `namespace` that the controller with `uid` can claim:
    /// those it controls and those no controller owns, in name order, without scanning the
    /// namespace. `None` for a type not [`claimed_by_selector`] (list and filter those instead).
    pub fn claimable(&self, group_resource: &str, namespace: &str, uid: &str) -> Option<Vec<Arc<Stored>>> {
        let inner = self.lock();
        let names = inner.owners.claimable(group_resource, namespace, uid)?;
        let objects = inner.objects.get(group_resource);
        Some(
            names
                .into_iter()
                .filter_map(|name| objects?.get(&(namespace.to_string(), name)).cloned())
                .collect(),
        )
    }

    /// Starts a watch of `group_resource` (all namespaces; the caller filters).
    pub fn watch(&self, group_resource: &str, from: WatchFrom) -> Result<WatchStart> {
        let inner = self.lock();
        let live = inner.history.subscribe();
        let revision = inner.revision;
        match from {
            WatchFrom::InitialState => {
                let initial = inner
                    .objects
                    .get(group_resource)
                    .map(|o| o.values().cloned().collect())
                    .unwrap_or_default();
                Ok(WatchStart { initial, replay: Vec::new(), revision, live })
            }
            WatchFrom::Revision(requested) if requested > revision => {
                Err(Error::TooLargeResourceVersion { requested, current: revision })
            }
            WatchFrom::Revision(requested) => match inner.history.since(requested, revision) {
                Ok(replay) => Ok(WatchStart { initial: Vec::new(), replay, revision, live }),
                Err(history::Gap::TooOld { requested, oldest }) => Err(Error::Expired { requested, oldest }),
            },
        }
    }

    /// Asks the database for its newest revision: what the `etcd` health checks ask of the
    /// store (upstream's check reads from etcd). A store on disk asks on its probe connection,
    /// so the answer does not wait for a write that holds the store (a long patch, a burst of
    /// writes); a store in memory has one connection and asks it between writes.
    pub fn ping(&self) -> Result<()> {
        match &self.probe {
            Some(probe) => {
                let probe = probe.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                probe.max_revision().map(|_| ()).map_err(Error::from)
            }
            None => self.lock().db.max_revision().map(|_| ()).map_err(Error::from),
        }
    }

    /// The oldest resourceVersion a watch can start from without 410.
    pub fn oldest_watchable_revision(&self) -> u64 {
        let inner = self.lock();
        inner.history.oldest_start(inner.revision)
    }

    /// The current state of every object, to [`Store::restore`] later (a copy of the in-memory
    /// index: the objects themselves are shared, not serialized).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint { objects: self.lock().objects.clone() }
    }

    /// Writes the objects of `checkpoint` back: what was created since is removed, what was
    /// deleted or changed is written again with its uid. Every change is a new revision with its
    /// watch event, so watchers and controllers see ordinary writes and resourceVersions stay
    /// monotonic. An object whose uid changed (deleted and recreated) is removed and added again,
    /// as a watcher would have seen it. Returns how many objects were written.
    pub fn restore(&self, checkpoint: &Checkpoint) -> Result<usize> {
        self.write(DryRun::Off, |txn| {
            let mut current: Vec<Arc<Stored>> = Vec::new();
            for objects in txn.inner.objects.values() {
                current.extend(objects.values().cloned());
            }
            let mut written = 0;
            for stored in &current {
                let saved = checkpoint
                    .objects
                    .get(&stored.group_resource)
                    .and_then(|objects| objects.get(&(stored.namespace.clone(), stored.name.clone())));
                let keep = match saved {
                    Some(saved) => uid_of(saved)? == uid_of(stored)?,
                    None => false,
                };
                if !keep {
                    txn.remove(stored)?;
                    written += 1;
                }
            }
            for (group_resource, objects) in &checkpoint.objects {
                for saved in objects.values() {
                    let live = txn.get(group_resource, &saved.namespace, &saved.name);
                    if live.is_some_and(|live| without_version(&live.json) == without_version(&saved.json)) {
                        continue;
                    }
                    txn.put(group_resource, saved.value()?)?;
                    written += 1;
                }
            }
            Ok(written)
        })
    }

    /// Runs `f` against a transaction and commits what it wrote (unless `dry_run`): one SQLite
    /// transaction, then memory and watchers, all under the lock.
    pub(crate) fn write<T, E: From<Error>>(
        &self,
        dry_run: DryRun,
        f: impl FnOnce(&mut Txn<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut inner = self.lock();
        let (output, changes) = {
            let mut txn = Txn {
                inner: &inner,
                next: inner.revision,
                changes: Vec::new(),
                overlay: HashMap::new(),
                now: self.clock.now(),
            };
            let output = f(&mut txn)?;
            (output, txn.changes)
        };
        if dry_run == DryRun::All || changes.is_empty() {
            return Ok(output);
        }
        let rows: Vec<db::Row> = changes
            .iter()
            .map(|event| db::Row {
                revision: event.revision,
                group_resource: event.object.group_resource.clone(),
                namespace: event.object.namespace.clone(),
                name: event.object.name.clone(),
                change: match event.event_type {
                    EventType::Added => db::RowChange::Created,
                    EventType::Modified => db::RowChange::Updated,
                    EventType::Deleted => db::RowChange::Deleted,
                },
                value: event.object.json.to_string(),
            })
            .collect();
        let started = std::time::Instant::now();
        inner.db.append(&rows).map_err(Error::from)?;
        if let Some(metrics) = &self.metrics {
            let elapsed = started.elapsed();
            let mut seen: Vec<(&str, &str)> = Vec::new();
            for row in &rows {
                let operation = match row.change {
                    db::RowChange::Created => "create",
                    db::RowChange::Updated => "update",
                    db::RowChange::Deleted => "delete",
                };
                if !seen.contains(&(operation, row.group_resource.as_str())) {
                    seen.push((operation, &row.group_resource));
                    metrics.storage(operation, &row.group_resource, elapsed);
                }
            }
        }
        let inner = &mut *inner;
        for event in changes {
            let object = &event.object;
            let key = (object.namespace.clone(), object.name.clone());
            let by_type = inner.objects.entry(object.group_resource.clone()).or_default();
            let replaced = match event.event_type {
                EventType::Deleted => by_type.remove(&key),
                _ => by_type.insert(key, object.clone()),
            };
            if let Some(replaced) = replaced {
                inner.owners.remove(&replaced);
                inner.superseded.push(replaced.revision);
            }
            match event.event_type {
                // The tombstone row is superseded as soon as it is written.
                EventType::Deleted => inner.superseded.push(event.revision),
                _ => inner.owners.insert(object),
            }
            inner.revision = event.revision;
            inner.history.publish(event);
        }
        inner.writes_since_compaction += rows.len();
        if inner.writes_since_compaction >= COMPACT_EVERY {
            inner.writes_since_compaction = 0;
            // Rows a watch can no longer replay go; the newest row always stays, so the revision
            // counter never goes back. Failing leaves extra rows, not wrong ones: kept for the
            // next compaction, and the full one at open removes them anyway.
            let before = inner.history.oldest_start(inner.revision).min(inner.revision);
            let (due, later): (Vec<u64>, Vec<u64>) =
                std::mem::take(&mut inner.superseded).into_iter().partition(|revision| *revision < before);
            inner.superseded = later;
            if inner.db.remove_revisions(&due).is_err() {
                inner.superseded.extend(due);
            }
        }
        Ok(output)
    }
}

/// A saved state of every object ([`Store::checkpoint`]).
#[derive(Debug, Clone)]
pub struct Checkpoint {
    objects: HashMap<String, Objects>,
}

fn uid_of(stored: &Stored) -> Result<String> {
    Ok(stored.value()?["metadata"]["uid"].as_str().unwrap_or_default().to_string())
}

/// The object's JSON without its resourceVersion, to tell a changed object from a rewritten one.
fn without_version(json: &str) -> Option<Value> {
    let mut value: Value = serde_json::from_str(json).ok()?;
    if let Some(metadata) = value.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.remove("resourceVersion");
    }
    Some(value)
}

pub(crate) fn not_found(resource: &str, name: &str) -> Error {
    Error::NotFound { resource: resource.to_string(), name: name.to_string() }
}

type Key = (String, String, String);

/// The writes of one operation before they commit, readable by the operation itself (the
/// registry's write path runs inside one, `Store::write`).
pub(crate) struct Txn<'a> {
    inner: &'a Inner,
    next: u64,
    changes: Vec<Event>,
    overlay: HashMap<Key, Option<Arc<Stored>>>,
    /// The clock's time when the transaction started: every timestamp it writes.
    pub(crate) now: Timestamp,
}

/// Where a [`Txn`] stood before one write of a batch, to undo that write alone.
pub(crate) struct Savepoint {
    next: u64,
    changes: usize,
}

impl Txn<'_> {
    pub(crate) fn savepoint(&self) -> Savepoint {
        Savepoint { next: self.next, changes: self.changes.len() }
    }

    /// Undoes the writes since `savepoint`, newest first: each key goes back to the object its
    /// change replaced (the committed one, read through, or an earlier write of this batch).
    pub(crate) fn roll_back(&mut self, savepoint: Savepoint) {
        for change in self.changes.drain(savepoint.changes..).rev() {
            let object = &change.object;
            let key = (object.group_resource.clone(), object.namespace.clone(), object.name.clone());
            let committed = self
                .inner
                .objects
                .get(&key.0)
                .and_then(|objects| objects.get(&(key.1.clone(), key.2.clone())));
            let unchanged = match (&change.previous, committed) {
                (Some(previous), Some(committed)) => Arc::ptr_eq(previous, committed),
                (None, None) => true,
                _ => false,
            };
            if unchanged {
                self.overlay.remove(&key);
            } else {
                self.overlay.insert(key, change.previous.clone());
            }
        }
        self.next = savepoint.next;
    }

    pub(crate) fn get(&self, group_resource: &str, namespace: &str, name: &str) -> Option<Arc<Stored>> {
        let key = (group_resource.to_string(), namespace.to_string(), name.to_string());
        if let Some(overlaid) = self.overlay.get(&key) {
            return overlaid.clone();
        }
        self.inner.objects.get(group_resource)?.get(&(key.1, key.2)).cloned()
    }

    /// Writes `object` at the next revision (its `metadata.resourceVersion` is set); an object
    /// over [`MAX_OBJECT_BYTES`] is refused as etcd refuses it, and nothing is written.
    pub(crate) fn put(&mut self, group_resource: &str, mut object: Value) -> Result<Arc<Stored>> {
        object["metadata"]["resourceVersion"] = Value::String((self.next + 1).to_string());
        let stored = Arc::new(Stored::new(self.next + 1, group_resource, &object)?);
        if stored.json.len() > MAX_OBJECT_BYTES {
            return Err(Error::RequestTooLarge);
        }
        self.next += 1;
        let key = (group_resource.to_string(), stored.namespace.clone(), stored.name.clone());
        let previous = self.get(&key.0, &key.1, &key.2);
        let event_type = if previous.is_some() { EventType::Modified } else { EventType::Added };
        self.changes.push(Event::new(self.next, event_type, stored.clone(), previous));
        self.overlay.insert(key, Some(stored.clone()));
        Ok(stored)
    }

    /// Removes the object; the `DELETED` event carries its last state at the new revision.
    pub(crate) fn remove(&mut self, current: &Arc<Stored>) -> Result<Arc<Stored>> {
        self.next += 1;
        let mut object = current.value()?;
        object["metadata"]["resourceVersion"] = Value::String(self.next.to_string());
        let stored = Arc::new(Stored::new(self.next, &current.group_resource, &object)?);
        let key = (current.group_resource.clone(), current.namespace.clone(), current.name.clone());
        self.changes.push(Event::new(self.next, EventType::Deleted, stored.clone(), Some(current.clone())));
        self.overlay.insert(key, None);
        Ok(stored)
    }

    /// The objects of one type in `namespace`, with this transaction's own writes, by name.
    pub(crate) fn list_in(&self, group_resource: &str, namespace: &str) -> Vec<Arc<Stored>> {
        let mut found: BTreeMap<String, Arc<Stored>> = BTreeMap::new();
        if let Some(objects) = self.inner.objects.get(group_resource) {
            let lower = (namespace.to_string(), String::new());
            for ((ns, name), stored) in objects.range(lower..) {
                if ns != namespace {
                    break;
                }
                found.insert(name.clone(), stored.clone());
            }
        }
        for (key, overlaid) in &self.overlay {
            if key.0 == group_resource && key.1 == namespace {
                match overlaid {
                    Some(stored) => found.insert(key.2.clone(), stored.clone()),
                    None => found.remove(&key.2),
                };
            }
        }
        found.into_values().collect()
    }

    /// Every object currently in `namespace`, across types.
    pub(crate) fn in_namespace(&self, namespace: &str) -> Vec<Arc<Stored>> {
        let mut found: BTreeMap<Key, Arc<Stored>> = BTreeMap::new();
        let lower = (namespace.to_string(), String::new());
        for (group_resource, objects) in &self.inner.objects {
            for ((ns, name), stored) in objects.range(lower.clone()..) {
                if ns != namespace {
                    break;
                }
                found.insert((group_resource.clone(), ns.clone(), name.clone()), stored.clone());
            }
        }
        for (key, overlaid) in &self.overlay {
            if key.1 == namespace {
                match overlaid {
                    Some(stored) => found.insert(key.clone(), stored.clone()),
                    None => found.remove(key),
                };
            }
        }
        found.into_values().collect()
    }
}

#[cfg(test)]
mod tests;
