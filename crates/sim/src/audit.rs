//! The simulator's audit log: every write to the cluster as a Kubernetes audit event (`audit.k8s.io/v1` `Event`, level `Metadata`), one JSON object a line in `audit.log`.
//!
//! The event is `staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go` `Event`, fields in its
//! order and with its JSON names. What kube-apiserver writes with `--audit-log-path` and a policy of
//! `level: Metadata` for the
//! mutating verbs (create, update, patch, delete, deletecollection): the event of the
//! `ResponseComplete` stage, as `staging/src/k8s.io/apiserver/pkg/audit/request.go`
//! (`NewEventFromRequest`, `LogRequestObject`, `LogResponseObject`) fills it and the log
//! backend (`staging/src/k8s.io/apiserver/plugin/pkg/audit/log/backend.go`, format `json`)
//! writes it: one object per line. So tools that read kube-apiserver's audit log read this one.
//!
//! It costs the request nothing it waits for: the middleware hands a small event to a bounded
//! buffer when the response ends, and one thread writes the buffer in batches, as the buffered
//! backend (`plugin/pkg/audit/buffered/buffered.go`) batches for the log backend; when the
//! buffer is full an event is dropped and counted rather than blocking the request, as that
//! backend's `ProcessEvents` does. The file is bounded: past [`AuditOptions::max_size`] it is
//! renamed `audit.log.1` (the one backup kept, as `--audit-log-maxbackup=1`) and a new one begun.

use std::{
    fs,
    io::{self, BufWriter, Write as _},
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
        mpsc,
    },
};

use axum::{
    body::Body,
    extract::{ConnectInfo, Request, State},
    middleware::Next,
    response::Response,
};
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};

use super::auth::{self, Identity, RequestInfo};

/// The audit log in a simulator's state directory.
pub const AUDIT_LOG_FILE: &str = "audit.log";
/// The one rotated file kept beside it.
pub const ROTATED_FILE: &str = "audit.log.1";

/// The verbs audited: the writes.
pub const MUTATING_VERBS: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// How the audit log is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AuditOptions {
    /// The size past which the file is rotated (upstream's `--audit-log-maxsize`, in bytes here).
    pub max_size: u64,
    /// Events buffered before the writer at most (upstream's `--audit-log-batch-buffer-size`).
    pub buffer: usize,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions { max_size: 10 * 1024 * 1024, buffer: 10_000 }
    }
}

/// The user a request ran as (`authentication.k8s.io/v1` `UserInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UserInfo {
    /// The user name.
    pub username: String,
    /// Its groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
}

/// The object a request was about (`audit.k8s.io/v1` `ObjectReference`; empty fields omitted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    /// The resource (plural).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub resource: String,
    /// Its namespace.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// Its name (for a create, the request object's).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The API group (empty: core).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    /// The API version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    /// The subresource.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// The response's status: at level `Metadata`, its code (`metav1.Status` with only `code`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResponseStatus {
    /// Always empty (`ListMeta`), as upstream writes it.
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
    /// The HTTP status code.
    pub code: u16,
}

/// One audit event (`audit.k8s.io/v1` `Event`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// `Event`.
    pub kind: String,
    /// `audit.k8s.io/v1`.
    pub api_version: String,
    /// `Metadata`.
    pub level: String,
    /// The request's id (its `Audit-ID` header, else a new UUID).
    #[serde(rename = "auditID")]
    pub audit_id: String,
    /// `ResponseComplete`.
    pub stage: String,
    /// The path and query requested.
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    /// The Kubernetes verb.
    pub verb: String,
    /// Who.
    pub user: UserInfo,
    /// From where: `X-Forwarded-For`'s addresses, then the peer's.
    #[serde(rename = "sourceIPs", default, skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    /// The client's `User-Agent`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    /// The object.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectRef>,
    /// The response's code.
    pub response_status: ResponseStatus,
    /// When the request arrived (RFC 3339, microseconds).
    pub request_received_timestamp: String,
    /// When its response was complete.
    pub stage_timestamp: String,
}

/// The name of the object a create made, which the handler learns from the request body and
/// hands the audit middleware in the response's extensions (`LogRequestObject` completes
/// `objectRef.name` from the request object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreatedName(pub String);

/// A running audit log: the buffer its writer thread drains.
#[derive(Debug)]
pub struct AuditLog {
    buffer: mpsc::SyncSender<Event>,
    dropped: AtomicU64,
}

impl AuditLog {
    /// Starts writing `dir`'s audit log (appending to what is there) on a thread of its own.
    pub fn start(dir: &Path, options: AuditOptions) -> io::Result<Arc<AuditLog>> {
        let writer = Writer::open(dir, options.max_size)?;
        let (buffer, events) = mpsc::sync_channel(options.buffer);
        std::thread::Builder::new().name("audit-log".into()).spawn(move || writer.run(events))?;
        Ok(Arc::new(AuditLog { buffer, dropped: AtomicU64::new(0) }))
    }

    /// Hands `event` to the writer, or drops it (counted) when the buffer is full.
    fn submit(&self, event: Event) {
        if self.buffer.try_send(event).is_err() {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// How many events were dropped because the buffer was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The writer thread's file.
struct Writer {
    path: PathBuf,
    rotated: PathBuf,
    out: BufWriter<fs::File>,
    size: u64,
    max_size: u64,
}

impl Writer {
    fn open(dir: &Path, max_size: u64) -> io::Result<Writer> {
        let path = dir.join(AUDIT_LOG_FILE);
        let file = super::owner_only::append_file(&path)?;
        let size = file.metadata()?.len();
        Ok(Writer { rotated: dir.join(ROTATED_FILE), path, out: BufWriter::new(file), size, max_size })
    }

    /// Writes every event as it comes, a batch at a time (what is buffered when the writer
    /// wakes), flushed after each batch; ends when the log is dropped.
    fn run(mut self, events: mpsc::Receiver<Event>) {
        while let Ok(first) = events.recv() {
            let batch = std::iter::once(first).chain(std::iter::from_fn(|| events.try_recv().ok()));
            for event in batch {
                if let Err(error) = self.write(&event) {
                    tracing::warn!("audit log {}: {error}", self.path.display());
                }
            }
            if let Err(error) = self.out.flush() {
                tracing::warn!("audit log {}: {error}", self.path.display());
            }
        }
    }

    fn write(&mut self, event: &Event) -> io::Result<()> {
        let mut line = serde_json::to_vec(event).expect("an audit event serializes");
        line.push(b'\n');
        let len = line.len() as u64;
        if self.size > 0 && self.size + len > self.max_size {
            self.out.flush()?;
            fs::rename(&self.path, &self.rotated)?;
            self.out = BufWriter::new(super::owner_only::append_file(&self.path)?);
            self.size = 0;
        }
        self.out.write_all(&line)?;
        self.size += len;
        Ok(())
    }
}

/// A time as audit events write it (`metav1.MicroTime`: RFC 3339 with microseconds, UTC).
fn micro_time(at: Timestamp) -> String {
    format!("{at:.6}")
}

/// The request's source addresses as `utilnet.SourceIPs` lists them: `X-Forwarded-For`'s, then
/// `X-Real-Ip`, then the peer's.
fn source_ips(request: &Request) -> Vec<String> {
    let header = |name: &str| request.headers().get(name).and_then(|v| v.to_str().ok());
    let mut ips: Vec<String> = header("x-forwarded-for")
        .into_iter()
        .flat_map(|v| v.split(','))
        .map(|ip| ip.trim().to_string())
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        .collect();
    if let Some(real) = header("x-real-ip").filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        && !ips.iter().any(|ip| ip == real)
    {
        ips.push(real.to_string());
    }
    if let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>() {
        let peer = peer.ip().to_string();
        if !ips.contains(&peer) {
            ips.push(peer);
        }
    }
    ips
}

/// The middleware (outermost, around the token layer, so refused writes are audited too):
/// a mutating resource request's event, handed to the log when its response ends.
pub async fn audit(State(log): State<Arc<AuditLog>>, request: Request, next: Next) -> Response {
    let info = auth::classify(request.method().as_str(), request.uri().path(), request.uri().query());
    let RequestInfo::Resource { verb, group, resource, subresource, namespace, name } = info else {
        return next.run(request).await;
    };
    if !MUTATING_VERBS.contains(&verb) {
        return next.run(request).await;
    }
    let received = Timestamp::now();
    let header = |request: &Request, name: &str| {
        request.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_string)
    };
    // The client's `Audit-ID`, else a new one (`WithAuditInit`).
    let audit_id = header(&request, "audit-id")
        .filter(|id| !id.is_empty())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let user_agent = header(&request, "user-agent").unwrap_or_default();
    let source_ips = source_ips(&request);
    let request_uri =
        request.uri().path_and_query().map_or_else(|| request.uri().path().to_string(), |p| p.to_string());
    let api_version = super::server::filters::version_of(request.uri().path());
    let response = next.run(request).await;
    // A request that did not authenticate (401) is nobody's write.
    let Some(identity) = response.extensions().get::<Identity>().cloned() else { return response };
    let name = match response.extensions().get::<CreatedName>() {
        Some(CreatedName(created)) if name.is_empty() => created.clone(),
        _ => name,
    };
    let event = Event {
        kind: "Event".into(),
        api_version: "audit.k8s.io/v1".into(),
        level: "Metadata".into(),
        audit_id,
        stage: "ResponseComplete".into(),
        request_uri,
        verb: verb.to_string(),
        user: UserInfo {
            username: identity.user.to_string(),
            groups: super::server::authz::identity_groups(&identity).into_iter().map(String::from).collect(),
        },
        source_ips,
        user_agent,
        object_ref: Some(ObjectRef { resource, namespace, name, api_group: group, api_version, subresource }),
        response_status: ResponseStatus { code: response.status().as_u16(), ..ResponseStatus::default() },
        request_received_timestamp: micro_time(received),
        stage_timestamp: String::new(),
    };
    response
        .map(|body| Body::new(super::server::filters::OnEnd::new(body, Pending { log, event: Some(event) })))
}

/// An event waiting for its response to end.
struct Pending {
    log: Arc<AuditLog>,
    event: Option<Event>,
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut event) = self.event.take() {
            event.stage_timestamp = micro_time(Timestamp::now());
            self.log.submit(event);
        }
    }
}

/// Reads the events of `dir`'s audit log, the rotated file's first; a line that is not an
/// event (a line cut short by a crash) is skipped.
pub fn read(dir: &Path) -> io::Result<Vec<Event>> {
    let mut events = Vec::new();
    for file in [ROTATED_FILE, AUDIT_LOG_FILE] {
        match fs::read_to_string(dir.join(file)) {
            Ok(text) => events.extend(text.lines().filter_map(|line| serde_json::from_str(line).ok())),
            Err(error) if error.kind() == io::ErrorKind::NotFound => {}
            Err(error) => return Err(error),
        }
    }
    Ok(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(n: usize) -> Event {
        Event {
            kind: "Event".into(),
            api_version: "audit.k8s.io/v1".into(),
            level: "Metadata".into(),
            audit_id: format!("id-{n}"),
            stage: "ResponseComplete".into(),
            request_uri: "/api/v1/namespaces/default/configmaps".into(),
            verb: "create".into(),
            user: UserInfo { username: "u".into(), groups: vec!["system:authenticated".into()] },
            source_ips: vec!["127.0.0.1".into()],
            user_agent: "kubectl/v1.33.0".into(),
            object_ref: Some(ObjectRef {
                resource: "configmaps".into(),
                namespace: "default".into(),
                name: format!("c{n}"),
                api_version: "v1".into(),
                ..ObjectRef::default()
            }),
            response_status: ResponseStatus { code: 201, ..ResponseStatus::default() },
            request_received_timestamp: "2026-12-05T19:00:00.000000Z".into(),
            stage_timestamp: "2026-12-05T19:00:00.001000Z".into(),
        }
    }

    #[test]
    fn an_event_is_one_line_in_upstreams_shape() {
        let line = serde_json::to_string(&event(1)).unwrap();
        insta::assert_snapshot!(line);
        assert_eq!(micro_time(Timestamp::from_second(0).unwrap()), "1970-01-01T00:00:00.000000Z");
    }

    #[test]
    fn the_log_rotates_past_its_size_and_keeps_one_backup() {
        let dir = tempfile::tempdir().unwrap();
        let line = serde_json::to_vec(&event(0)).unwrap().len() as u64 + 1;
        let mut writer = Writer::open(dir.path(), line * 3).unwrap();
        for n in 0..8 {
            writer.write(&event(n)).unwrap();
        }
        writer.out.flush().unwrap();
        let ids: Vec<String> = read(dir.path()).unwrap().into_iter().map(|e| e.audit_id).collect();
        // 8 events, 3 a file: the first 3 were rotated out twice over; 6 and 7 remain in the
        // current file, 3 to 5 in the backup.
        assert_eq!(ids, ["id-3", "id-4", "id-5", "id-6", "id-7"]);
        let size = |f: &str| fs::metadata(dir.path().join(f)).unwrap().len();
        assert!(size(AUDIT_LOG_FILE) <= line * 3 && size(ROTATED_FILE) <= line * 3);
    }
}
