//! core/v1 Events as upstream's recorder writes them, aggregated with counts.
//!
//! client-go's `EventCorrelator` (`tools/record/events_cache.go`) merges an event identical to an
//! earlier one (same involved object, type, reason, message, source) into it: `count` goes up
//! and `lastTimestamp` moves, the name stays. Names are `<involvedObject.name>.<hex nanos>`
//! (`tools/record/event.go`, `makeEvent`). Events of cluster-scoped objects (nodes) live in
//! `default`.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{Ctx, timestamp};
use crate::store::{BatchWrite, DeleteOptions};

/// kube-apiserver's default `--event-ttl` (cmd/kube-apiserver/app/options/options.go, v1.33:
/// `EventTTL: 1 * time.Hour`). The Event's storage lease is set at each write
/// (pkg/registry/core/event/storage/storage.go, `TTLFunc`), so an Event goes an hour after its
/// last write, whoever wrote it.
pub const EVENT_TTL_SECONDS: i64 = 3600;

/// `Normal` or `Warning`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EventType {
    /// An expected step.
    Normal,
    /// Something a user should look at.
    Warning,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Normal => "Normal",
            EventType::Warning => "Warning",
        }
    }
}

/// The object an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Involved {
    /// `Pod`, `DaemonSet`, `Node`.
    pub kind: String,
    /// `v1`, `apps/v1`.
    pub api_version: String,
    /// Namespace (`""` for cluster-scoped objects).
    pub namespace: String,
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
    /// `spec.containers{name}` for container events.
    pub field_path: Option<String>,
}

impl Involved {
    /// The involved object of `object` (its kind and apiVersion from the object itself).
    pub fn of(object: &Value) -> Involved {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        Involved {
            kind: text(&object["kind"]),
            api_version: text(&object["apiVersion"]),
            namespace: text(&object["metadata"]["namespace"]),
            name: text(&object["metadata"]["name"]),
            uid: text(&object["metadata"]["uid"]),
            field_path: None,
        }
    }

    /// The same object, narrowed to one container.
    pub fn container(mut self, container: &str) -> Involved {
        self.field_path = Some(format!("spec.containers{{{container}}}"));
        self
    }
}

/// Who reports an event: `default-scheduler`, `daemonset-controller`, or `kubelet` on a host.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    /// `source.component`.
    pub component: String,
    /// `source.host` (kubelet events).
    pub host: Option<String>,
}

impl Source {
    /// A control-plane component.
    pub fn component(component: &str) -> Source {
        Source { component: component.to_string(), host: None }
    }

    /// The kubelet of `node`.
    pub fn kubelet(node: &str) -> Source {
        Source { component: "kubelet".to_string(), host: Some(node.to_string()) }
    }
}

type Key = (Involved, EventType, String, String, Source);

/// Events by the second they expire (etcd's leases; here an index the controllers sweep).
#[derive(Debug, Default)]
pub(crate) struct Expiry {
    due: BTreeMap<i64, BTreeSet<(String, String)>>,
}

/// The last write of a stored Event (Unix seconds) as its timestamps tell it.
fn last_write(event: &Value) -> Option<i64> {
    [
        &event["metadata"]["creationTimestamp"],
        &event["firstTimestamp"],
        &event["lastTimestamp"],
        &event["eventTime"],
        &event["series"]["lastObservedTime"],
    ]
    .into_iter()
    .filter_map(|at| at.as_str()?.parse::<Timestamp>().ok())
    .map(|at| at.as_second())
    .max()
}

impl Expiry {
    /// The Event (namespace, name) was written at `at` (Unix seconds).
    pub(crate) fn written(&mut self, key: (String, String), at: i64) -> Timestamp {
        let expires = at + EVENT_TTL_SECONDS;
        self.due.entry(expires).or_default().insert(key);
        Timestamp::from_second(expires).unwrap_or(Timestamp::MAX)
    }

    /// Indexes a stored Event by its own timestamps (at start: Events of an earlier run expire
    /// when their lease would have).
    pub(crate) fn stored(&mut self, event: &Value, now: i64) -> Timestamp {
        let key = (
            event["metadata"]["namespace"].as_str().unwrap_or_default().to_string(),
            event["metadata"]["name"].as_str().unwrap_or_default().to_string(),
        );
        self.written(key, last_write(event).unwrap_or(now))
    }

    /// Deletes the Events whose last write is [`EVENT_TTL_SECONDS`] old by now; returns when
    /// the next one is due.
    pub(crate) fn sweep(&mut self, ctx: &Ctx<'_>, recorder: &mut Recorder) -> Option<Timestamp> {
        let now = ctx.now.as_second();
        let later = self.due.split_off(&(now + 1));
        let due = std::mem::replace(&mut self.due, later);
        let mut deleted = HashSet::new();
        for key in due.into_values().flatten() {
            let Ok(event) = ctx.store.get_value(&ctx.types.events, &key.0, &key.1) else { continue };
            match last_write(&event) {
                // Written again since it was indexed: its lease runs from that write.
                Some(at) if at + EVENT_TTL_SECONDS > now => {
                    self.written(key, at);
                }
                _ => {
                    let gone = ctx.store.delete(&ctx.types.events, &key.0, &key.1, &DeleteOptions::default());
                    if let Err(error) = gone {
                        tracing::debug!(%error, "event expiry");
                    }
                    deleted.insert(key);
                }
            }
        }
        if !deleted.is_empty() {
            recorder.names.retain(|_, name| !deleted.contains(name));
        }
        self.due.keys().next().and_then(|at| Timestamp::from_second(*at).ok())
    }
}

/// Writes events, merging repeats. A controller step's events are queued and written together
/// at its end ([`Recorder::flush`]), one transaction for the lot, as upstream's broadcaster
/// writes them apart from the controllers' own work (`StartRecordingToSink`).
#[derive(Debug, Default)]
pub struct Recorder {
    names: HashMap<Key, (String, String)>,
    sequence: u64,
    /// This step's writes, in order.
    pending: Vec<BatchWrite>,
    /// The Events (namespace, name) queued in `pending`, by position: a repeat within the step
    /// counts on the queued write.
    queued: HashMap<(String, String), usize>,
}

/// One more occurrence of an Event: `count + 1`, `lastTimestamp` now.
fn count_again(event: &mut Value, now: Timestamp) {
    let count = event["count"].as_i64().unwrap_or(1) + 1;
    event["count"] = json!(count);
    event["lastTimestamp"] = json!(timestamp(now));
}

impl Recorder {
    /// Records one occurrence: a new Event, or `count + 1` on the matching earlier one.
    /// Like upstream's recorder, a failed write (e.g. into a namespace being deleted) drops the
    /// event rather than failing the controller.
    pub fn record(
        &mut self,
        ctx: &Ctx<'_>,
        involved: &Involved,
        event_type: EventType,
        reason: &str,
        message: &str,
        source: &Source,
    ) {
        let (store, types, now) = (ctx.store, ctx.types, ctx.now);
        let namespace = if involved.namespace.is_empty() { "default" } else { &involved.namespace };
        let key = (involved.clone(), event_type, reason.to_string(), message.to_string(), source.clone());
        if let Some(existing) = self.names.get(&key) {
            if let Some(&at) = self.queued.get(existing) {
                let (BatchWrite::Create(event) | BatchWrite::Update(event)) = &mut self.pending[at];
                count_again(event, now);
                return;
            }
            if let Ok(mut event) = store.get_value(&types.events, &existing.0, &existing.1) {
                count_again(&mut event, now);
                self.queued.insert(existing.clone(), self.pending.len());
                self.pending.push(BatchWrite::Update(event));
                return;
            }
        }
        // A sequence number keeps names unique when a manual clock stands still.
        self.sequence += 1;
        let nanos = now.as_nanosecond() as u128 + u128::from(self.sequence);
        let name = format!("{}.{nanos:x}", involved.name);
        let mut involved_object = json!({
            "kind": involved.kind,
            "apiVersion": involved.api_version,
            "name": involved.name,
            "uid": involved.uid,
        });
        if !involved.namespace.is_empty() {
            involved_object["namespace"] = json!(involved.namespace);
        }
        if let Some(path) = &involved.field_path {
            involved_object["fieldPath"] = json!(path);
        }
        let mut source_json = json!({"component": source.component});
        if let Some(host) = &source.host {
            source_json["host"] = json!(host);
        }
        let event = json!({
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": namespace},
            "involvedObject": involved_object,
            "reason": reason,
            "message": message,
            "source": source_json,
            "firstTimestamp": timestamp(now),
            "lastTimestamp": timestamp(now),
            "count": 1,
            "type": event_type.as_str(),
            "eventTime": null,
            "reportingComponent": source.component,
            "reportingInstance": source.host.clone().unwrap_or_default(),
        });
        let written = (namespace.to_string(), name);
        self.queued.insert(written.clone(), self.pending.len());
        self.pending.push(BatchWrite::Create(event));
        self.names.insert(key, written);
    }

    /// Writes the queued events, each succeeding or failing alone (one transaction). A new
    /// Event that could not be written is forgotten, so its next occurrence creates it again.
    pub(crate) fn flush(&mut self, ctx: &Ctx<'_>) {
        if self.pending.is_empty() {
            return;
        }
        let pending = std::mem::take(&mut self.pending);
        let mut names: Vec<Option<(String, String)>> = vec![None; pending.len()];
        for (name, at) in self.queued.drain() {
            names[at] = Some(name);
        }
        let created: Vec<bool> = pending.iter().map(|write| matches!(write, BatchWrite::Create(_))).collect();
        let failed: Vec<usize> = match ctx.store.write_each(&ctx.types.events, pending) {
            Ok(outcomes) => outcomes
                .into_iter()
                .enumerate()
                .filter_map(|(at, outcome)| {
                    let error = outcome.err()?;
                    tracing::debug!(%error, "event dropped");
                    Some(at)
                })
                .collect(),
            Err(error) => {
                tracing::debug!(%error, "events dropped");
                (0..names.len()).collect()
            }
        };
        let forgotten: HashSet<&(String, String)> =
            failed.into_iter().filter(|at| created[*at]).filter_map(|at| names[at].as_ref()).collect();
        if !forgotten.is_empty() {
            self.names.retain(|_, name| !forgotten.contains(name));
        }
    }
}
