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
//!   `--min-request-timeout`); a closed connection ends it within a second.
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
use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};
use tokio::sync::{broadcast, mpsc};

use super::{
    AppState,
    api::Selection,
    crd,
    request::{self, Query},
    status::{ApiError, Result},
    table,
};
use crate::sim::{
    resources::ResourceType,
    store::{self, Event, EventType, Stored, WatchFrom},
};

/// Default stream length when the client sends no `timeoutSeconds`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(1800);

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
    group_resource: String,
    namespace: Option<String>,
    selection: Selection,
    bookmarks: Bookmarks,
    rendering: Rendering,
    /// Table column definitions go out with the first table only.
    columns_sent: bool,
    /// The newest revision this stream has seen (matching or not): bookmarks carry it.
    revision: u64,
    sender: mpsc::Sender<Result<Bytes, Infallible>>,
}

/// Answers a `watch=true` request.
pub fn serve(
    state: AppState,
    rt: ResourceType,
    namespace: Option<String>,
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
        Some(seconds) if seconds > 0 => Duration::from_secs(seconds as u64),
        _ => DEFAULT_TIMEOUT,
    };
    let rendering = if request::wants_table(headers) { Rendering::Tables } else { Rendering::Objects };
    let group_resource = rt.group_resource();
    let start = state.store.watch(&group_resource, from);
    let (sender, receiver) = mpsc::channel(256);
    let revision = state.store.revision();
    let mut stream = Stream {
        state,
        rt,
        group_resource,
        namespace,
        selection,
        bookmarks,
        rendering,
        columns_sent: false,
        revision,
        sender,
    };
    tokio::spawn(async move {
        let deadline = tokio::time::Instant::now() + timeout;
        // Ending on a closed client is the normal way a stream stops; nothing to report.
        let _ = stream.run(start, from, send_initial == Some(true), deadline).await;
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
    Ok((StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// The client went away; the stream stops.
struct Closed;

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
        // watching 100 learners' clusters (several streams each) cost idle CPU.
        let sender = self.sender.clone();
        loop {
            let wake = deadline.min(next_bookmark);
            tokio::select! {
                _ = sender.closed() => return Err(Closed),
                received = live.recv() => match received {
                    Ok(event) => self.send_event(&event).await?,
                    Err(broadcast::error::RecvError::Lagged(_)) => {
                        let oldest = self.state.store.oldest_watchable_revision();
                        let error = store::Error::Expired { requested: self.revision, oldest };
                        return self.send_error(ApiError::from(error)).await;
                    }
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
                // The common case: the event as stored, encoded once for every watcher.
                Rendering::Objects => {
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
                Rendering::Tables => {}
            }
        }
        self.send_object(event_type, &event.object).await
    }

    async fn send_object(&mut self, event_type: EventType, stored: &Stored) -> Result<(), Closed> {
        let line = match self.rendering {
            Rendering::Objects => object_line(event_type, &stored.json),
            Rendering::Tables => {
                let line = self.table_line(event_type, stored, self.state.clock.now());
                self.columns_sent = true;
                line
            }
        };
        self.send_bytes(line).await
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
        let mut object = json!({
            "kind": self.rt.kind,
            "apiVersion": self.rt.api_version(),
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
        self.sender.send(Ok(line)).await.map_err(|_| Closed)
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
