//! core/v1 Events as upstream's recorder writes them, aggregated with counts.
//!
//! client-go's `EventCorrelator` (`tools/record/events_cache.go`) merges an event identical to an
//! earlier one (same involved object, type, reason, message, source) into it: `count` goes up
//! and `lastTimestamp` moves, the name stays. Names are `<involvedObject.name>.<hex nanos>`
//! (`tools/record/event.go`, `makeEvent`). Events of cluster-scoped objects (nodes) live in
//! `default`.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::{Ctx, Error, Result, timestamp};
use crate::sim::store::{DryRun, Subresource};

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

/// Writes events, merging repeats.
#[derive(Debug, Default)]
pub struct Recorder {
    names: HashMap<Key, (String, String)>,
    sequence: u64,
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
        if let Err(error) = self.write(ctx, involved, event_type, reason, message, source) {
            tracing::debug!(%error, reason, "event dropped");
        }
    }

    fn write(
        &mut self,
        ctx: &Ctx<'_>,
        involved: &Involved,
        event_type: EventType,
        reason: &str,
        message: &str,
        source: &Source,
    ) -> Result<()> {
        let (store, types, now) = (ctx.store, ctx.types, ctx.now);
        let namespace = if involved.namespace.is_empty() { "default" } else { &involved.namespace };
        let key = (involved.clone(), event_type, reason.to_string(), message.to_string(), source.clone());
        if let Some((ns, name)) = self.names.get(&key)
            && let Ok(mut existing) = store.get_value(&types.events, ns, name)
        {
            let count = existing["count"].as_i64().unwrap_or(1) + 1;
            existing["count"] = json!(count);
            existing["lastTimestamp"] = json!(timestamp(now));
            store.update(&types.events, existing, Subresource::Main, DryRun::Off).map_err(Error::Store)?;
            return Ok(());
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
        store.create(&types.events, event).map_err(Error::Store)?;
        self.names.insert(key, (namespace.to_string(), name));
        Ok(())
    }
}
