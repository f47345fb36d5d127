//! Connection hygiene of a served simulator, as kube-apiserver's secure serving has it.
//!
//! * Timeouts (apiserver `pkg/server/secure_serving.go` `Serve`): the TLS handshake and a
//!   request's header must arrive within [`Limits::read_header`] (`ReadHeaderTimeout` 32 s; Go's
//!   `http.Server` gives the handshake the same), and a keep-alive connection with no request
//!   in flight is closed after [`Limits::idle`] (`IdleTimeout` 90 s). Headers are bounded at
//!   `MaxHeaderBytes` (1 MiB). Long-running requests (watches) have no deadline here.
//! * Open connections are bounded ([`Limits::max_connections`], and no more than the open-file
//!   limit allows, which is raised to its hard limit at start as Go raises it for every program,
//!   `os/rlimit.go`). At the bound, the connection that has waited longest without a request
//!   in flight (handshaking, sending its header, or idle) is closed for the new one; when every
//!   connection has a request in flight, the new one is refused. Go has no such bound: its
//!   file limit and memory are the bound, which here would let idle connections lock everyone
//!   out (issue #30).
//! * Request handlers run on a runtime of their own ([`handler_runtime`]): the connections,
//!   health checks and metrics stay on the serving runtime, so a CPU-heavy request cannot keep
//!   `/readyz` from answering (Go preempts goroutines; tokio tasks are not preempted).

use std::{
    convert::Infallible,
    future::Future,
    pin::Pin,
    sync::{Arc, Mutex},
    task::{Context, Poll},
    time::Duration,
};

use axum::http;
use axum::{
    extract::Request,
    response::{IntoResponse, Response},
};
use tower::{Service, ServiceExt};

use super::status::ApiError;
use crate::THREAD_STACK_BYTES;

/// Worker threads of [`handler_runtime`]: the machines the simulator targets have two cores.
const HANDLER_THREADS: usize = 2;

/// The nice value of the handler threads: below the serving runtime's (0), so that however
/// much CPU the requests take, the threads that accept connections, finish TLS handshakes and
/// answer the health probes are scheduled first. kube-apiserver gets the same effect from API
/// priority and fairness, which serves the `probes` flow schema at the `exempt` level
/// (`apis/flowcontrol/bootstrap/default.go`); a process with one CPU budget gets it from the
/// scheduler. (On Linux the nice value is per thread: `setpriority(PRIO_PROCESS, 0, …)` from a
/// thread changes that thread only.)
const HANDLER_NICENESS: i32 = 10;

/// The runtime the request handlers of every simulator in this process run on: started on
/// first use and kept for the life of the process, its threads with [`THREAD_STACK_BYTES`] of
/// stack (deep input is handled by recursion) and [`HANDLER_NICENESS`].
pub fn handler_runtime() -> std::io::Result<tokio::runtime::Handle> {
    static RUNTIME: Mutex<Option<&'static tokio::runtime::Runtime>> = Mutex::new(None);
    let mut runtime = RUNTIME.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(runtime) = *runtime {
        return Ok(runtime.handle().clone());
    }
    let built = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(HANDLER_THREADS)
        .thread_name("sim-handler")
        .thread_stack_size(THREAD_STACK_BYTES)
        // A thread that cannot lower its priority runs at the default one: nothing else changes.
        .on_thread_start(|| {
            let _ = rustix::process::setpriority_process(None, HANDLER_NICENESS);
        })
        .enable_all()
        .build()?;
    // Never dropped: a runtime cannot be dropped from within another one, and this one serves
    // until the process ends.
    let leaked: &'static tokio::runtime::Runtime = Box::leak(Box::new(built));
    *runtime = Some(leaked);
    Ok(leaked.handle().clone())
}

/// A service whose requests are handled on another runtime: the response (and any streaming
/// body, which the handler's tasks feed) comes back to the caller's.
#[derive(Clone)]
pub struct Offload<S> {
    inner: S,
    handlers: tokio::runtime::Handle,
}

impl<S> Offload<S> {
    /// `inner`, run on `handlers`.
    pub fn new(inner: S, handlers: tokio::runtime::Handle) -> Offload<S> {
        Offload { inner, handlers }
    }
}

impl<S> Service<Request> for Offload<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        let inner = self.inner.clone();
        let handled = self.handlers.spawn(async move { inner.oneshot(request).await });
        Box::pin(async move {
            Ok(match handled.await {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                // A handler that panicked (a bug: every input is meant to be answered) costs
                // its request, not the connection.
                Err(error) => {
                    ApiError::internal(format!("the request handler failed: {error}")).into_response()
                }
            })
        })
    }
}

/// Connection limits of a served simulator (defaults: upstream's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Time for the TLS handshake, and for a request's header once its first byte came (the
    /// first request's from the end of the handshake).
    pub read_header: Duration,
    /// Time a keep-alive connection may wait for its next request.
    pub idle: Duration,
    /// Open connections at most (lowered to what the open-file limit allows).
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { read_header: Duration::from_secs(32), idle: Duration::from_secs(90), max_connections: 4096 }
    }
}

/// Open files kept for the store, the state directory and the listener beside the connections.
const RESERVED_FILES: u64 = 64;

/// Raises the soft open-file limit to the hard one, as Go's `os` package does at start for
/// every Go program (`os/rlimit.go`, Go 1.19+), and returns the soft limit now in force.
pub fn raise_file_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    // `None` is unlimited; the soft limit is never above the hard one.
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        // Refused (a sandbox, say): the old soft limit stays, and bounds connections below.
        let _ = setrlimit(Resource::Nofile, limit);
    }
    getrlimit(Resource::Nofile).current
}

/// The connection bound `limits` gives under the soft open-file limit `files`.
pub fn connection_bound(limits: &Limits, files: Option<u64>) -> usize {
    let by_files = files.map_or(usize::MAX, |files| {
        usize::try_from(files.saturating_sub(RESERVED_FILES)).unwrap_or(usize::MAX).max(1)
    });
    limits.max_connections.min(by_files)
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// TLS handshake under way.
    Handshake,
    /// Waiting for a request's header: the first request's, or one whose first byte came.
    Header,
    /// Requests in flight (a response, or its streaming body, not finished), and when the
    /// response must be written by (none for a long-running request).
    Busy(usize, Option<tokio::time::Instant>),
    /// Keep-alive, waiting for the next request.
    Idle,
}

/// One connection as the accept loop and its own task see it.
struct Tracked {
    state: Mutex<(Phase, tokio::time::Instant)>,
    /// The phase changed: the connection's task recomputes its deadline.
    changed: tokio::sync::Notify,
    /// Closed to make room for a new connection.
    evicted: tokio::sync::Notify,
}

impl Tracked {
    fn new() -> Arc<Tracked> {
        Arc::new(Tracked {
            state: Mutex::new((Phase::Handshake, tokio::time::Instant::now())),
            changed: tokio::sync::Notify::new(),
            evicted: tokio::sync::Notify::new(),
        })
    }

    fn phase(&self) -> (Phase, tokio::time::Instant) {
        *self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Moves to the phase `next` makes of the current one (unchanged: `None`).
    fn update(&self, next: impl FnOnce(Phase) -> Option<Phase>) {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(phase) = next(state.0) {
            *state = (phase, tokio::time::Instant::now());
            drop(state);
            self.changed.notify_one();
        }
    }

    fn request_started(&self) {
        self.update(|phase| {
            Some(if let Phase::Busy(n, by) = phase { Phase::Busy(n + 1, by) } else { Phase::Busy(1, None) })
        });
    }

    /// The response being written must be done by `by`.
    fn respond_by(&self, by: tokio::time::Instant) {
        self.update(|phase| match phase {
            Phase::Busy(n, earlier) => {
                Some(Phase::Busy(n, Some(earlier.map_or(by, |earlier| earlier.min(by)))))
            }
            _ => None,
        });
    }

    fn request_finished(&self) {
        self.update(|phase| match phase {
            Phase::Busy(n, by) if n > 1 => Some(Phase::Busy(n - 1, by)),
            _ => Some(Phase::Idle),
        });
    }

    fn bytes_arrived(&self) {
        self.update(|phase| (phase == Phase::Idle).then_some(Phase::Header));
    }

    /// When the current phase runs out (`None`: it does not).
    fn deadline(&self, limits: &Limits) -> Option<tokio::time::Instant> {
        match self.phase() {
            (Phase::Handshake | Phase::Header, since) => Some(since + limits.read_header),
            (Phase::Idle, since) => Some(since + limits.idle),
            (Phase::Busy(_, by), _) => by,
        }
    }
}

/// The open connections, for the bound.
#[derive(Default)]
struct Registry {
    open: Mutex<std::collections::HashMap<u64, Arc<Tracked>>>,
}

impl Registry {
    fn len(&self) -> usize {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).len()
    }

    fn insert(&self, id: u64, tracked: Arc<Tracked>) {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).insert(id, tracked);
    }

    fn remove(&self, id: u64) {
        self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).remove(&id);
    }

    /// Closes the connection that has waited longest with no request in flight; false when
    /// every connection has one.
    fn evict_one(&self) -> bool {
        let open = self.open.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let victim = open
            .values()
            .filter_map(|tracked| match tracked.phase() {
                (Phase::Busy(..), _) => None,
                (_, since) => Some((since, tracked)),
            })
            .min_by_key(|(since, _)| *since);
        match victim {
            Some((_, tracked)) => {
                tracked.evicted.notify_one();
                true
            }
            None => false,
        }
    }
}

/// An I/O stream that tells its connection when bytes arrive (an idle connection that starts a
/// request gets the header deadline).
struct Watched<T> {
    io: T,
    tracked: Arc<Tracked>,
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            self.tracked.bytes_arrived();
        }
        polled
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    // Vectored writes let hyper queue a response's chunks as they are (a watch line sharing a
    // stored object's text) instead of copying them into one buffer.
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// Frees its connection's request when dropped: at the end of the response body that holds
/// it ([`super::filters::OnEnd`]: sent in full, or dropped).
struct Finished(Arc<Tracked>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.request_finished();
    }
}

/// The kernel's send buffer of each connection at most (Linux doubles what is set, for its own
/// bookkeeping). Left to autotuning, a socket whose client reads nothing grows its send buffer
/// to `net.ipv4.tcp_wmem`'s maximum (4 MiB by default), so every stalled watch had the server
/// copy megabytes into the kernel: 275 of them kept both cores busy in `_copy_from_iter` for
/// seconds and held `/readyz` for as long (issue #30, measured with `perf`). Bounded, a stalled
/// client costs the kernel what it costs the watch's outbox; a quarter of a MiB in flight still
/// carries gigabytes a second over loopback and 5 MB/s at 50 ms of round trip. (Go's
/// `net/http` leaves the buffer to autotuning; kube-apiserver pays that copy.)
pub const SEND_BUFFER_BYTES: usize = 128 * 1024;

/// Bounds `tcp`'s send buffer at [`SEND_BUFFER_BYTES`]. An option that cannot be set leaves
/// the kernel's autotuning: nothing else changes.
pub fn bound_send_buffer(tcp: &tokio::net::TcpStream) {
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(tcp, SEND_BUFFER_BYTES);
}

/// The listen backlog when the kernel's `net.core.somaxconn` cannot be read: the kernel's own
/// default for it since Linux 5.4. (Go falls back to `syscall.SOMAXCONN`, 128, there; asking
/// more costs nothing, as the kernel clamps a backlog to `somaxconn`.)
const DEFAULT_BACKLOG: u32 = 4096;

/// Binds the simulator's listener with Go's backlog: `net.core.somaxconn` (Go's
/// `net/sock_linux.go` `maxListenerBacklog`; 4,096 on current kernels), not the 128 of tokio's
/// `TcpListener::bind` (the standard library's, which mio copies). A burst of connections larger
/// than the backlog overflows the accept queue, and the kernel drops the SYNs of the rest: those
/// clients — a kubelet's probe among them — wait a full second for their retransmission
/// (issue #30: the 2,875 connections of the hostile client's attacks opened together made one
/// `/readyz` in a few take 1.07 s or 2.1 s, `nstat` counting `ListenOverflows`). Like tokio's
/// `TcpListener::bind`, the address may be reused at once after a restart.
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket =
        if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    let backlog = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok())
        .filter(|&n| n > 0)
        .unwrap_or(DEFAULT_BACKLOG);
    socket.listen(backlog)
}

/// How long open connections get to finish once the server stops (watches are long-lived).
const SHUTDOWN_GRACE: Duration = Duration::from_secs(2);

/// The TLS accept loop: one task per connection, HTTP/1.1 (what ALPN offers), within `limits`,
/// until `shutdown`; then open connections get a graceful close and a short grace period.
pub async fn serve_tls(
    listener: tokio::net::TcpListener,
    config: Arc<rustls::ServerConfig>,
    app: axum::Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let bound = connection_bound(&limits, raise_file_limit());
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let registry = Arc::new(Registry::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut connections = tokio::task::JoinSet::new();
    let mut next_id = 0u64;
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => {
                let tcp = match accepted {
                    Ok((tcp, _)) => tcp,
                    // Out of files (or the like): make room, and keep serving the others.
                    Err(_) => {
                        registry.evict_one();
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    }
                };
                if registry.len() >= bound && !registry.evict_one() {
                    // Every connection has a request in flight: no room for another.
                    drop(tcp);
                    continue;
                }
                bound_send_buffer(&tcp);
                next_id += 1;
                let id = next_id;
                let tracked = Tracked::new();
                registry.insert(id, tracked.clone());
                let connection = Connection { acceptor: acceptor.clone(), app: app.clone(), limits, tracked };
                let (registry, stop) = (registry.clone(), stop_rx.clone());
                connections.spawn(async move {
                    connection.serve(tcp, stop).await;
                    registry.remove(id);
                });
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(SHUTDOWN_GRACE + Duration::from_secs(1), async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    connections.abort_all();
    Ok(())
}

/// One accepted connection and what it needs.
struct Connection {
    acceptor: tokio_rustls::TlsAcceptor,
    app: axum::Router,
    limits: Limits,
    tracked: Arc<Tracked>,
}

impl Connection {
    /// Serves the connection until it ends, times out, is evicted, or the server stops.
    async fn serve(self, tcp: tokio::net::TcpStream, mut stop: tokio::sync::watch::Receiver<bool>) {
        // The client's address, for what the audit log records of a request (`sourceIPs`).
        let peer = tcp.peer_addr().ok();
        let handshake = tokio::time::timeout(self.limits.read_header, self.acceptor.accept(tcp));
        let tls = tokio::select! {
            done = handshake => match done {
                Ok(Ok(tls)) => tls,
                _ => return,
            },
            _ = self.tracked.evicted.notified() => return,
        };
        self.tracked.update(|_| Some(Phase::Header));
        let tracked = self.tracked.clone();
        let app = self.app.clone();
        let service =
            hyper::service::service_fn(move |request: http::Request<hyper::body::Incoming>| {
                tracked.request_started();
                let tracked = tracked.clone();
                let mut request = request.map(axum::body::Body::new);
                if let Some(peer) = peer {
                    request.extensions_mut().insert(axum::extract::ConnectInfo(peer));
                }
                let handled = app.clone().oneshot(request);
                async move {
                    let Ok(response) = handled.await;
                    if let Some(super::filters::RespondBy(by)) = response.extensions().get() {
                        tracked.respond_by(*by);
                    }
                    Ok::<_, Infallible>(response.map(|body| {
                        axum::body::Body::new(super::filters::OnEnd::new(body, Finished(tracked)))
                    }))
                }
            });
        let io = Watched { io: tls, tracked: self.tracked.clone() };
        let connection = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(io), service);
        tokio::pin!(connection);
        loop {
            let deadline = self.tracked.deadline(&self.limits);
            let expired = async {
                match deadline {
                    Some(deadline) => tokio::time::sleep_until(deadline).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = connection.as_mut() => return,
                _ = self.tracked.changed.notified() => {}
                _ = expired => {
                    // Only if the phase it was computed for has not moved on since.
                    if self.tracked.deadline(&self.limits).is_some_and(|d| d <= tokio::time::Instant::now()) {
                        return;
                    }
                }
                _ = self.tracked.evicted.notified() => return,
                _ = async { let _ = stop.wait_for(|stopping| *stopping).await; } => {
                    connection.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(SHUTDOWN_GRACE, connection).await;
                    return;
                }
            }
        }
    }
}
