//! The watch hub: a bounded in-memory history of change events and the live fan-out.
//!
//! The history keeps the last [`DEFAULT_WINDOW`] events (configurable). A watch asking for a
//! resourceVersion older than the oldest retained event minus one gets `410 Expired` with
//! upstream's text `too old resource version: X (Y)` (`apiserver/pkg/storage/cacher/
//! watch_cache.go`, `getAllEventsSinceLocked`). Subscribing happens under the store lock, in
//! the same critical section that reads the history, so no event falls between replay and live.
//! After a restart the history is empty: any resourceVersion older than the current revision
//! is expired, and clients relist, as after an apiserver restart.

use std::{
    collections::VecDeque,
    sync::{Arc, OnceLock},
};

use axum::body::Bytes;
use tokio::sync::broadcast;

use super::Stored;

/// Events retained for resourceVersion replay by default.
pub const DEFAULT_WINDOW: usize = 10_000;

/// Live events buffered for the slowest subscriber before it is cut off with an `ERROR` 410
/// (it relists, as client-go does after any expired watch). The buffer holds the objects of
/// that many past writes, so it is kept well under the history window.
const FANOUT_CAPACITY: usize = 4_096;

/// What happened to an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created.
    Added,
    /// Changed.
    Modified,
    /// Removed.
    Deleted,
}

impl EventType {
    /// The watch wire name: `ADDED`, `MODIFIED`, `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change, at one revision.
#[derive(Debug, Clone)]
pub struct Event {
    /// The revision the change was written at.
    pub revision: u64,
    /// Added, modified or deleted.
    pub event_type: EventType,
    /// The object after the change (for `Deleted`: its last state, at the deletion revision).
    pub object: Arc<Stored>,
    /// The object before the change (`None` for `Added`), so a selector watch can tell an
    /// object that stopped matching (upstream sends `DELETED` then).
    pub previous: Option<Arc<Stored>>,
    /// The event as a watch line, encoded by the first watcher that sent it and shared by all
    /// the others (`server::watch`): twenty watchers cost one encoding, not twenty.
    wire: OnceLock<Bytes>,
    /// The event as a one-row `Table` watch line without column definitions, and the clock's
    /// second it was rendered at (its AGE cells read the clock): shared by the table watchers
    /// (`kubectl get -w`) that send it within that second.
    table_wire: OnceLock<(i64, Bytes)>,
}

impl Event {
    /// A change at `revision`.
    pub fn new(
        revision: u64,
        event_type: EventType,
        object: Arc<Stored>,
        previous: Option<Arc<Stored>>,
    ) -> Event {
        Event { revision, event_type, object, previous, wire: OnceLock::new(), table_wire: OnceLock::new() }
    }

    /// The event as `encode` writes it, encoded once (the first caller's encoding is kept).
    pub fn encoded(&self, encode: impl FnOnce(&Event) -> Bytes) -> Bytes {
        self.wire.get_or_init(|| encode(self)).clone()
    }

    /// The event as a table watch line rendered at the clock's `second`: the first rendering is
    /// kept and shared by the callers in the same second; a caller in another second renders
    /// its own.
    pub fn encoded_table(&self, second: i64, encode: impl FnOnce() -> Bytes) -> Bytes {
        match self.table_wire.get() {
            Some((at, line)) if *at == second => line.clone(),
            Some(_) => encode(),
            None => self.table_wire.get_or_init(|| (second, encode())).1.clone(),
        }
    }
}

/// The history window and live fan-out.
#[derive(Debug)]
pub struct History {
    events: VecDeque<Arc<Event>>,
    window: usize,
    sender: broadcast::Sender<Arc<Event>>,
}

/// Why a watch cannot start at the asked revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gap {
    /// Older than the window: `too old resource version: {requested} ({oldest})`.
    TooOld {
        /// The resourceVersion asked for.
        requested: u64,
        /// Oldest resourceVersion a watch can start from.
        oldest: u64,
    },
}

impl History {
    /// An empty history retaining `window` events.
    pub fn new(window: usize) -> History {
        let (sender, _) = broadcast::channel(FANOUT_CAPACITY);
        History { events: VecDeque::new(), window: window.max(1), sender }
    }

    /// Records an event and hands it to live subscribers.
    pub fn publish(&mut self, event: Event) {
        let event = Arc::new(event);
        if self.events.len() == self.window {
            self.events.pop_front();
        }
        self.events.push_back(event.clone());
        // No subscriber is not an error.
        let _ = self.sender.send(event);
    }

    /// A live subscription; call under the store lock together with [`History::since`].
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        self.sender.subscribe()
    }

    /// Retained events newer than `revision`, or why they cannot be replayed. `current` is the
    /// store's revision (the history is empty right after open).
    pub fn since(&self, revision: u64, current: u64) -> Result<Vec<Arc<Event>>, Gap> {
        let oldest = self.events.front().map(|event| event.revision).unwrap_or(current + 1);
        if revision + 1 < oldest {
            return Err(Gap::TooOld { requested: revision, oldest: oldest - 1 });
        }
        let first = self.events.partition_point(|event| event.revision <= revision);
        Ok(self.events.range(first..).cloned().collect())
    }

    /// The oldest revision a watch can start from.
    pub fn oldest_start(&self, current: u64) -> u64 {
        self.events.front().map(|event| event.revision - 1).unwrap_or(current)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_table_line_is_shared_within_its_second_and_rendered_afresh_in_another() {
        let object = json!({"metadata": {"name": "a", "namespace": "default"}});
        let stored = Arc::new(Stored::new(7, "configmaps", &object).unwrap());
        let event = Event::new(7, EventType::Added, stored, None);
        let renders = std::cell::Cell::new(0);
        let render = |text: &'static str| {
            renders.set(renders.get() + 1);
            Bytes::from_static(text.as_bytes())
        };
        assert_eq!(event.encoded_table(100, || render("at 100")), "at 100");
        assert_eq!(event.encoded_table(100, || render("again")), "at 100", "the same second shares it");
        assert_eq!(event.encoded_table(101, || render("at 101")), "at 101", "a later second renders anew");
        assert_eq!(event.encoded_table(100, || render("unused")), "at 100");
        assert_eq!(renders.get(), 2);
    }
}
