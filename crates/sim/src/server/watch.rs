//! Watch streams: newline-delimited JSON events, chunked and flushed per event
//! (apiserver `pkg/endpoints/handlers/watch.go` `serveWatch`).
//!
//! * `resourceVersion=N`: every change after N, replayed from the store's history, then live;
//!   older than the history window → one `ERROR` event carrying a 410 `Expired` Status, as
//!   upstream's watch cache answers (`too old resource version: N (oldest)`).
//! * `resourceVersion` unset or `0`: the current objects as `ADDED`, then live.
//! * `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan` and
//!   `allowWatchBookmarks=true`, as client-go's WatchList sends it): the current objects as
//!   `ADDED`, a `BOOKMARK` annotated `k8s.io/initial-events-end: "true"`, then live.
//! * Label and field selectors filter; an object that stops matching yields `DELETED`, one that
//!   starts matching `ADDED` (upstream `cacher.go`, `watchCacheEvent` filtering).
//! * `allowWatchBookmarks=true`: a `BOOKMARK` every [`super::SimState::bookmark_interval`].
//! * `timeoutSeconds` ends the stream cleanly (default 30 minutes, upstream's
//!   `--min-request-timeout`); a value past what a clock can add saturates (the stream never
//!   times out) instead of overflowing; a closed connection ends the stream at once.
//!
//! Memory per watcher is bounded (issue #30): the lines not yet taken by the connection are
//! counted in bytes against [`WatchBudget::pending_bytes`] (one line always fits, however long).
//! The initial state is sent as it is read, each line sharing the stored object's text; when
//! the client reads nothing the stream waits, holding its budget and no more. A live event that
//! finds no room within [`WatchBudget::unresponsive_after`], or a stream that falls behind the
//! store's live feed, closes the stream as upstream's watch cache closes a watcher it cannot
//! deliver to (`cacher/cache_watcher.go` `cacheWatcher.add`: "Forcing … watcher close due to
//! unresponsiveness"), without an error event: the client watches again from the last
//! resourceVersion it saw, or lists again when that is too old.
//!
//! Fan-out cost (issue #17): a stream skips other types and namespaces before it looks at an
//! object, selectors read the labels and fields the store keeps, an event sent as stored is
//! encoded once and its bytes shared by every watcher, and table watchers share the row
//! cached per object revision (`Stored::table_row`) and, after their first table, the whole
//! line rendered once per event and clock second (`Event::encoded_table`).

use std::{convert::Infallible, sync::Arc, time::Duration};

use axum::{
    body::{Body, Bytes},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
};
use futures::StreamExt;
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, broadcast, mpsc};

use super::{
    AppState,
    api::Selection,
    crd,
    request::{self, Query},
    status::{ApiError, Result},
    table,
    versions::Conversion,
};
use crate::{
    resources::ResourceType,
    store::{self, Event, EventType, Stored, WatchFrom},
};

/// Default stream length when the client sends no `timeoutSeconds`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

/// How long a stream whose `timeoutSeconds` cannot be added to the clock lasts: longer than any
/// simulator runs.
const NEVER: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// What one watcher may hold back (issue #30).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchBudget {
    /// Bytes of watch lines a stream may have queued that its connection has not taken yet.
    pub pending_bytes: usize,
    /// How long a live event may wait for room before the watcher counts as unresponsive and
    /// is closed: upstream's dispatch time budget (`cacher/time_budget.go` `maxBudget`).
    pub unresponsive_after: Duration,
}

impl Default for WatchBudget {
    fn default() -> Self {
        WatchBudget { pending_bytes: 1 << 20, unresponsive_after: Duration::from_millis(100) }
    }
}

/// The deadline `timeout` after now, saturating far in the future when the clock cannot add it.
fn deadline_after(timeout: Duration) -> tokio::time::Instant {
    let now = tokio::time::Instant::now();
    now.checked_add(timeout).or_else(|| now.checked_add(NEVER)).unwrap_or(now)
}

/// Whether a stream sends BOOKMARK events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bookmarks {
    Allowed,
    Off,
}

/// Whether event objects are sent as they are stored or as `Table`s (`kubectl get -w`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rendering {
    Objects,
    Tables,
}

/// One watch stream's parameters and position.
struct Stream {
    state: AppState,
    rt: ResourceType,
    /// Set for a watch in another served version than the stored `rt`: each event's object is
    /// converted as it is sent.
    conversion: Option<Conversion>,
    group_resource: String,
    namespace: Option<String>,
    selection: Selection,
    bookmarks: Bookmarks,
    rendering: Rendering,
    /// Table column definitions go out with the first table only.
    columns_sent: bool,
    /// The newest revision this stream has seen (matching or not): bookmarks carry it.
    revision: u64,
    /// Past the initial state and replay: lines wait for room only so long.
    live: bool,
    outbox: Outbox,
}

/// One piece of the response body and the budget it holds until the connection takes it.
struct Chunk {
    bytes: Bytes,
    _room: Option<OwnedSemaphorePermit>,
}

/// A watcher's unsent lines, bounded in bytes: a line waits for room ([`Outbox::send`]) and
/// hands its room back when the connection takes it.
struct Outbox {
    room: Arc<Semaphore>,
    budget: u32,
    sender: mpsc::UnboundedSender<Chunk>,
}

/// Why a line was not queued.
enum Refused {
    /// The client went away.
    Closed,
    /// The line found no room in time: the watcher does not keep up.
    Unresponsive,
}

impl Outbox {
    /// An outbox of `budget` bytes and the response body that drains it.
    fn new(budget: usize) -> (Outbox, Body) {
        let budget = u32::try_from(budget.max(1)).unwrap_or(u32::MAX);
        let (sender, receiver) = mpsc::unbounded_channel::<Chunk>();
        let body = tokio_stream::wrappers::UnboundedReceiverStream::new(receiver)
            .map(|chunk| Ok::<_, Infallible>(chunk.bytes));
        let room = Arc::new(Semaphore::new(budget as usize));
        (Outbox { room, budget, sender }, Body::from_stream(body))
    }

    /// Queues one line (its pieces sent in order), waiting for room as long as `within` allows
    /// (`None`: as long as it takes).
    async fn send(&self, pieces: &[Bytes], within: Option<Duration>) -> Result<(), Refused> {
        let length: usize = pieces.iter().map(Bytes::len).sum();
        // A line longer than the whole budget waits until the outbox is empty.
        let needed = u32::try_from(length).unwrap_or(u32::MAX).clamp(1, self.budget);
        let acquire = self.room.clone().acquire_many_owned(needed);
        let room = match within {
            None => tokio::select! {
                room = acquire => room,
                _ = self.sender.closed() => return Err(Refused::Closed),
            },
            Some(within) => tokio::select! {
                room = tokio::time::timeout(within, acquire) => room.map_err(|_| Refused::Unresponsive)?,
                _ = self.sender.closed() => return Err(Refused::Closed),
            },
        }
        .map_err(|_| Refused::Closed)?;
        let mut room = Some(room);
        for (index, bytes) in pieces.iter().enumerate() {
            let last = index + 1 == pieces.len();
            let chunk = Chunk { bytes: bytes.clone(), _room: if last { room.take() } else { None } };
            self.sender.send(chunk).map_err(|_| Refused::Closed)?;
        }
        Ok(())
    }
}

/// Answers a `watch=true` request.
pub fn serve(
    state: AppState,
    rt: ResourceType,
    namespace: Option<String>,
    conversion: Option<Conversion>,
    query: &Query,
    headers: &HeaderMap,
) -> Result<Response> {
    let selection = Selection::from_query(query, &rt)?;
    let send_initial = query.get("sendInitialEvents").map(|v| v == "true" || v == "1");
    let bookmarks = if query.flag("allowWatchBookmarks") { Bookmarks::Allowed } else { Bookmarks::Off };
    if send_initial == Some(true) {
        // Upstream validation (`apimachinery/pkg/apis/meta/internalversion/validation`).
        if query.get("resourceVersionMatch") != Some("NotOlderThan") {
            return Err(ApiError::bad_request(
                "sendInitialEvents: Forbidden: sendInitialEvents is forbidden for resourceVersionMatch different from NotOlderThan",
            ));
        }
        if bookmarks == Bookmarks::Off {
            return Err(ApiError::bad_request(
                "allowWatchBookmarks: Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is true",
            ));
        }
    }
    let from = match (send_initial, query.get("resourceVersion").filter(|rv| !rv.is_empty())) {
        (Some(true), _) | (None, None | Some("0")) => WatchFrom::InitialState,
        (Some(false), None | Some("0")) => WatchFrom::Revision(state.store.revision()),
        (_, Some(rv)) => WatchFrom::Revision(
            rv.parse().map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))?,
        ),
    };
    let timeout = match query.integer("timeoutSeconds")? {
        Some(seconds) if seconds > 0 => Duration::from_secs(seconds.unsigned_abs()),
        _ => DEFAULT_TIMEOUT,
    };
    let rendering = if request::wants_table(headers) { Rendering::Tables } else { Rendering::Objects };
    let group_resource = rt.group_resource();
    let start = state.store.watch(&group_resource, from);
    let (outbox, body) = Outbox::new(state.watch_budget.pending_bytes);
    let revision = state.store.revision();
    let mut stream = Stream {
        state,
        rt,
        conversion,
        group_resource,
        namespace,
        selection,
        bookmarks,
        rendering,
        columns_sent: false,
        revision,
        live: false,
        outbox,
    };
    tokio::spawn(async move {
        let deadline = deadline_after(timeout);
        // A client gone or a watcher closed for not keeping up: the stream just ends.
        let _ = stream.run(start, from, send_initial == Some(true), deadline).await;
    });
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The stream stops: its client went away, or it was closed for not keeping up.
struct Closed;

impl From<Refused> for Closed {
    fn from(_: Refused) -> Closed {
        Closed
    }
}

impl Stream {
    async fn run(
        &mut self,
        start: store::Result<store::WatchStart>,
        from: WatchFrom,
        initial_end_bookmark: bool,
        deadline: tokio::time::Instant,
    ) -> Result<(), Closed> {
        let start = match start {
            Ok(start) => start,
            Err(error) => return self.send_error(ApiError::from(error)).await,
        };
        self.revision = start.revision;
        if from == WatchFrom::InitialState {
            for stored in &start.initial {
                if self.in_scope(stored) && self.selection.matches(stored) {
                    self.send_object(EventType::Added, stored).await?;
                }
            }
            if initial_end_bookmark {
                self.send_bookmark(true).await?;
            }
        }
        for event in &start.replay {
            self.send_event(event).await?;
        }
        let mut live = start.live;
        let interval = self.state.bookmark_interval;
        let mut next_bookmark = tokio::time::Instant::now() + interval;
        // An idle stream sleeps until its next bookmark or its end, or until its client goes
        // away (the body's receiver dropped): no periodic wake-ups, which with a class board
        // watching 100 learners' clusters (several streams each) cost idle CPU. From here on
        // a line waits for room only so long: a watcher that does not keep up is closed.
        self.live = true;
        let sender = self.outbox.sender.clone();
        loop {
            let wake = deadline.min(next_bookmark);
            tokio::select! {
                _ = sender.closed() => return Err(Closed),
                received = live.recv() => match received {
                    Ok(event) => self.send_event(&event).await?,
                    // Fallen behind the live feed: as unresponsive as it gets.
                    Err(broadcast::error::RecvError::Lagged(_)) => return Err(Closed),
                    Err(broadcast::error::RecvError::Closed) => return Ok(()),
                },
                _ = tokio::time::sleep_until(wake) => {
                    let now = tokio::time::Instant::now();
                    if now >= deadline {
                        return Ok(());
                    }
                    if now >= next_bookmark {
                        next_bookmark = now + interval;
                        if self.bookmarks == Bookmarks::Allowed {
                            self.send_bookmark(false).await?;
                        }
                    }
                }
            }
        }
    }

    fn in_scope(&self, stored: &Stored) -> bool {
        stored.group_resource == self.group_resource
            && self.namespace.as_deref().is_none_or(|namespace| stored.namespace == namespace)
    }

    /// Sends `event` as this stream's selectors see it.
    async fn send_event(&mut self, event: &Arc<Event>) -> Result<(), Closed> {
        self.revision = self.revision.max(event.revision);
        if !self.in_scope(&event.object) {
            return Ok(());
        }
        let now_matches = self.selection.matches(&event.object);
        let before_matched = event.previous.as_ref().is_some_and(|previous| self.selection.matches(previous));
        let event_type = match event.event_type {
            EventType::Added if now_matches => EventType::Added,
            EventType::Modified if now_matches && before_matched => EventType::Modified,
            EventType::Modified if now_matches => EventType::Added,
            EventType::Modified if before_matched => EventType::Deleted,
            EventType::Deleted if before_matched || now_matches => EventType::Deleted,
            _ => return Ok(()),
        };
        if event_type == event.event_type {
            match self.rendering {
                // The common case: the event as stored, encoded once for every watcher (a
                // converted stream's objects are its own: sent below).
                Rendering::Objects if self.conversion.is_none() => {
                    let line = event.encoded(|event| object_line(event.event_type, &event.object.json));
                    return self.send_bytes(line).await;
                }
                // A built-in type's table after the stream's first: rendered once a second for
                // every table watcher (a custom type's printer columns can change: not shared).
                Rendering::Tables if self.columns_sent && !crd::is_custom(&self.state, &self.rt) => {
                    let now = self.state.clock.now();
                    let line = event
                        .encoded_table(now.as_second(), || self.table_line(event_type, &event.object, now));
                    return self.send_bytes(line).await;
                }
                Rendering::Objects | Rendering::Tables => {}
            }
        }
        self.send_object(event_type, &event.object).await
    }

    async fn send_object(&mut self, event_type: EventType, stored: &Stored) -> Result<(), Closed> {
        match (self.rendering, &self.conversion) {
            // The object in the request's version, converted for this line alone (nothing held
            // beyond it): upstream's `watchEncoder` encodes each event's object so.
            (Rendering::Objects, Some(conversion)) => {
                // The store holds only JSON it wrote: an object that does not read back is skipped.
                let Ok(object) = stored.value() else { return Ok(()) };
                let line = object_line(event_type, &conversion.to_served(&object).to_string());
                self.send_bytes(line).await
            }
            // The stored text itself between a head and a tail: no copy per watcher.
            (Rendering::Objects, None) => {
                let head = Bytes::from(format!("{{\"type\":\"{}\",\"object\":", event_type.as_str()));
                self.send_pieces(&[head, stored.json_bytes(), Bytes::from_static(b"}\n")]).await
            }
            (Rendering::Tables, _) => {
                let line = self.table_line(event_type, stored, self.state.clock.now());
                self.columns_sent = true;
                self.send_bytes(line).await
            }
        }
    }

    /// A watch line carrying `stored` as a one-row `Table`.
    fn table_line(&self, event_type: EventType, stored: &Stored, now: Timestamp) -> Bytes {
        let table = self.table_of(stored, now);
        Bytes::from(format!("{{\"type\":\"{}\",\"object\":{table}}}\n", event_type.as_str()))
    }

    /// `stored` as a one-row `Table`: from the row cached for its revision (shared with every
    /// other table watcher and list), with column definitions on the stream's first table only.
    fn table_of(&self, stored: &Stored, now: Timestamp) -> String {
        let rv = stored.revision.to_string();
        if crd::is_custom(&self.state, &self.rt) {
            // A CRD's printer columns can change without the object changing: not cached.
            let value = stored.value().unwrap_or(Value::Null);
            let mut table = crd::render_table(&self.state, &self.rt, std::slice::from_ref(&value), &rv, now);
            if self.columns_sent {
                table["columnDefinitions"] = json!([]);
            }
            return table.to_string();
        }
        let fallback;
        let row = match stored.table_row(|object| table::row_template(&self.rt, object)) {
            Ok(row) => row,
            Err(_) => {
                fallback = table::row_template(&self.rt, &Value::Null);
                &fallback
            }
        };
        table::render_rows(&self.rt, std::iter::once(row), &rv, None, !self.columns_sent, now)
    }

    async fn send_bookmark(&mut self, initial_events_end: bool) -> Result<(), Closed> {
        // An empty object of the request's version: not converted, only named in that version.
        let served = self.conversion.as_ref().map_or(&self.rt, Conversion::served);
        let mut object = json!({
            "kind": served.kind,
            "apiVersion": served.api_version(),
            "metadata": {"resourceVersion": self.revision.to_string()},
        });
        if initial_events_end {
            object["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
        }
        self.send_line(format!("{{\"type\":\"BOOKMARK\",\"object\":{object}}}\n")).await
    }

    async fn send_error(&mut self, error: ApiError) -> Result<(), Closed> {
        self.send_line(format!("{{\"type\":\"ERROR\",\"object\":{}}}\n", error.to_status())).await
    }

    async fn send_line(&mut self, line: String) -> Result<(), Closed> {
        self.send_bytes(Bytes::from(line)).await
    }

    async fn send_bytes(&mut self, line: Bytes) -> Result<(), Closed> {
        self.send_pieces(&[line]).await
    }

    /// Queues one line: before the stream is live, waiting as long as it takes (the client
    /// reads its initial state at its own pace); once live, only as long as a responsive
    /// watcher would need.
    async fn send_pieces(&mut self, pieces: &[Bytes]) -> Result<(), Closed> {
        let within = self.live.then_some(self.state.watch_budget.unresponsive_after);
        Ok(self.outbox.send(pieces, within).await?)
    }
}

/// One watch line carrying the object's stored JSON.
fn object_line(event_type: EventType, json: &str) -> Bytes {
    let (head, tail) = ("{\"type\":\"", "\",\"object\":");
    let mut line = String::with_capacity(head.len() + 8 + tail.len() + json.len() + 2);
    line.push_str(head);
    line.push_str(event_type.as_str());
    line.push_str(tail);
    line.push_str(json);
    line.push_str("}\n");
    Bytes::from(line)
}
