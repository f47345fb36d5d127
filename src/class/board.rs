//! `lab-runner class board`: the instructor's live page — learners × tasks, pushed as server-sent events.
//!
//! One loop grades every learner's cluster (the same `check` as `check --contexts all`), back to
//! back with at least `interval` between rounds, and publishes a [`BoardSnapshot`] whenever a
//! learner's report changed; `/events` streams each snapshot to every open page, `/report.json`
//! is the class report exactly as `check --contexts all --format json` prints it. The page is
//! one self-contained HTML file (no external assets: it works offline) with its texts in en and ja.

use std::{
    collections::HashMap,
    convert::Infallible,
    net::SocketAddr,
    path::PathBuf,
    sync::Arc,
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    extract::{Query, State},
    http::header,
    response::{
        Html, IntoResponse,
        sse::{Event, KeepAlive, Sse},
    },
    routing::get,
};
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use tokio::sync::watch;

use crate::{
    engine, exit, lab,
    report::{ClassReport, Report},
    session::{ClusterTarget, Lang},
};

/// The page, with its script and styles inline.
const PAGE: &str = include_str!("board.html");

/// Errors of `class board`; each maps to one documented exit code ([`Error::exit_code`]).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address is taken or not ours to bind. Exit 2.
    #[error("--listen {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why it cannot be bound.
        source: std::io::Error,
    },
    /// The kubeconfig names no context to grade. Exit 2.
    #[error("{0}: no context to grade")]
    NoContexts(String),
    /// The kubeconfig could not be read. Exit 2.
    #[error("{path}: {reason}")]
    Kubeconfig {
        /// The kubeconfig.
        path: String,
        /// Why it could not be read.
        reason: String,
    },
    /// The server stopped with an I/O error. Exit 3.
    #[error("board server: {0}")]
    Serve(std::io::Error),
}

impl Error {
    /// The documented exit code (DESIGN §6).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Bind { .. } | Error::NoContexts(_) | Error::Kubeconfig { .. } => exit::BAD_INPUT,
            Error::Serve(_) => exit::CLUSTER_ERROR,
        }
    }
}

/// What `class board` is asked.
#[derive(Debug, Clone)]
pub struct BoardOptions {
    /// The kubeconfig whose contexts are the learners (`None`: `$KUBECONFIG`, then ~/.kube/config).
    pub kubeconfig: Option<PathBuf>,
    /// The contexts to grade; empty: every context of the kubeconfig.
    pub contexts: Vec<String>,
    /// Where the page is served.
    pub listen: SocketAddr,
    /// The least time between two grading rounds.
    pub interval: Duration,
    /// A learner whose report has not changed for this long is shown as stalled.
    pub stalled_after: Duration,
    /// The page's language unless the page asks for another (`?lang=ja`).
    pub lang: Lang,
}

/// One learner's progress beside its report: how long its report has stayed the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Progress {
    /// The kubeconfig context (the learner).
    pub context: String,
    /// Seconds since this learner's report last changed (since the board started, at first).
    pub unchanged_seconds: u64,
    /// Whether that is longer than the board's `stalled_after`.
    pub stalled: bool,
}

/// What `/events` pushes and `/board.json` answers.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoardSnapshot {
    /// Which grading round this is (1 for the first).
    pub round: u64,
    /// When the round finished (RFC 3339).
    pub checked_at: String,
    /// The class report, as `check --contexts all --format json` prints it.
    pub report: ClassReport,
    /// Each learner's progress, in the report's order.
    pub progress: Vec<Progress>,
}

/// The contexts a board grades: the ones asked for, else every context of the kubeconfig.
pub fn board_contexts(kubeconfig: Option<&PathBuf>, asked: &[String]) -> Result<Vec<String>, Error> {
    if !asked.is_empty() && asked != ["all"] {
        return Ok(asked.to_vec());
    }
    let shown = kubeconfig.map(|p| p.display().to_string()).unwrap_or_else(|| "kubeconfig".into());
    let config = match kubeconfig {
        Some(path) => kube::config::Kubeconfig::read_from(path),
        None => kube::config::Kubeconfig::read(),
    }
    .map_err(|e| Error::Kubeconfig { path: shown.clone(), reason: engine::cluster::one_line(&e) })?;
    let contexts: Vec<String> = config.contexts.iter().map(|c| c.name.clone()).collect();
    if contexts.is_empty() {
        return Err(Error::NoContexts(shown));
    }
    Ok(contexts)
}

/// Binds the board's address (a taken port is bad input, reported before anything else runs).
pub async fn bind(listen: SocketAddr) -> Result<tokio::net::TcpListener, Error> {
    tokio::net::TcpListener::bind(listen).await.map_err(|source| Error::Bind { addr: listen, source })
}

/// One grading round's outcome for one learner.
type Outcome = (String, std::result::Result<Report, String>);

/// Grades one learner: connects (once per round, so a learner who comes up later is found) and
/// checks, the error as one line.
async fn grade_one(options: &BoardOptions, bundle: &lab::loader::Bundle, context: &str) -> Outcome {
    let target = ClusterTarget { kubeconfig: options.kubeconfig.clone(), context: Some(context.to_string()) };
    let graded = async {
        let cluster = engine::cluster::connect(&target).await?;
        engine::check::check(&cluster, bundle, options.lang, engine::check::Help::default()).await
    };
    (context.to_string(), graded.await.map_err(|e| e.to_string()))
}

/// Grades every learner round after round and publishes a snapshot whenever one changed.
async fn grade_forever(
    options: BoardOptions,
    bundle: lab::loader::Bundle,
    contexts: Vec<String>,
    publish: watch::Sender<Option<Arc<BoardSnapshot>>>,
) {
    let mut last_change: HashMap<String, Instant> = HashMap::new();
    let mut previous: Option<ClassReport> = None;
    let mut round = 0;
    loop {
        let started = Instant::now();
        let outcomes =
            futures::future::join_all(contexts.iter().map(|context| grade_one(&options, &bundle, context)))
                .await;
        let report = ClassReport::new(&bundle.lab.id.value, outcomes);
        let now = Instant::now();
        for learner in &report.learners {
            let before =
                previous.as_ref().and_then(|p| p.learners.iter().find(|l| l.context == learner.context));
            if before != Some(learner) {
                last_change.insert(learner.context.clone(), now);
            }
        }
        round += 1;
        let progress = report
            .learners
            .iter()
            .map(|learner| {
                let unchanged = last_change.get(&learner.context).map(|t| now - *t).unwrap_or_default();
                Progress {
                    context: learner.context.clone(),
                    unchanged_seconds: unchanged.as_secs(),
                    stalled: unchanged >= options.stalled_after,
                }
            })
            .collect::<Vec<_>>();
        // A round that changed nothing but the stalled flags is published too (the page shows
        // who stopped progressing); one that changed nothing at all is not.
        let stalled_changed = publish
            .borrow()
            .as_ref()
            .is_none_or(|old| old.progress.iter().map(|p| p.stalled).ne(progress.iter().map(|p| p.stalled)));
        if previous.as_ref() != Some(&report) || stalled_changed {
            let snapshot = BoardSnapshot {
                round,
                checked_at: k8s_openapi::jiff::Timestamp::now()
                    .round(k8s_openapi::jiff::Unit::Second)
                    .map(|t| t.to_string())
                    .unwrap_or_default(),
                report: report.clone(),
                progress,
            };
            publish.send_replace(Some(Arc::new(snapshot)));
        }
        previous = Some(report);
        tokio::time::sleep(options.interval.saturating_sub(started.elapsed())).await;
    }
}

#[derive(Clone)]
struct AppState {
    snapshots: watch::Receiver<Option<Arc<BoardSnapshot>>>,
    lang: Lang,
}

#[derive(Deserialize)]
struct PageQuery {
    lang: Option<String>,
}

async fn page(State(state): State<AppState>, Query(query): Query<PageQuery>) -> impl IntoResponse {
    let lang = match query.lang.as_deref() {
        Some("ja") => "ja",
        Some("en") => "en",
        _ => match state.lang {
            Lang::Ja => "ja",
            Lang::En => "en",
        },
    };
    ([(header::CACHE_CONTROL, "no-store")], Html(PAGE.replace("__LANG__", lang)))
}

/// The latest snapshot, once the first round is done.
async fn latest(state: &AppState) -> Arc<BoardSnapshot> {
    let mut snapshots = state.snapshots.clone();
    let snapshot = snapshots.wait_for(Option::is_some).await.expect("the grading loop outlives the server");
    snapshot.clone().expect("waited for a snapshot")
}

async fn report_json(State(state): State<AppState>) -> impl IntoResponse {
    Json(latest(&state).await.report.clone())
}

async fn board_json(State(state): State<AppState>) -> impl IntoResponse {
    Json(latest(&state).await.as_ref().clone())
}

async fn events(State(state): State<AppState>) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let stream =
        tokio_stream::wrappers::WatchStream::new(state.snapshots.clone()).filter_map(|snapshot| async move {
            let snapshot = snapshot?;
            let data = serde_json::to_string(snapshot.as_ref()).expect("a snapshot serializes");
            Some(Ok(Event::default().event("board").data(data)))
        });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The board's routes over the snapshots the grading loop publishes.
fn router(snapshots: watch::Receiver<Option<Arc<BoardSnapshot>>>, lang: Lang) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/report.json", get(report_json))
        .route("/board.json", get(board_json))
        .route("/events", get(events))
        .with_state(AppState { snapshots, lang })
}

/// Serves the board on `listener` until the process is stopped, grading `contexts` for `bundle`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    options: BoardOptions,
    bundle: lab::loader::Bundle,
    contexts: Vec<String>,
) -> Result<(), Error> {
    let (publish, snapshots) = watch::channel(None);
    let lang = options.lang;
    let grading = tokio::spawn(grade_forever(options, bundle, contexts, publish));
    let served = axum::serve(listener, router(snapshots, lang)).await.map_err(Error::Serve);
    grading.abort();
    served
}

/// The address the board's URL names: an unspecified listen address is reached through 127.0.0.1.
pub fn url(bound: SocketAddr) -> String {
    let ip = if bound.ip().is_unspecified() { std::net::Ipv4Addr::LOCALHOST.into() } else { bound.ip() };
    format!("http://{}/", SocketAddr::new(ip, bound.port()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_no_external_assets_and_both_languages() {
        for needle in ["http://", "https://", "src=\"//", "href=\"//"] {
            assert!(!PAGE.contains(needle), "the page must work offline; it names {needle}");
        }
        assert!(PAGE.contains("__LANG__"));
        for key in ["title", "learner", "stalled", "evidence", "offline"] {
            assert_eq!(PAGE.matches(&format!("\"{key}\": \"")).count(), 2, "{key} in both en and ja");
        }
    }

    #[test]
    fn board_urls_reach_unspecified_addresses_through_loopback() {
        assert_eq!(url("0.0.0.0:8420".parse().unwrap()), "http://127.0.0.1:8420/");
        assert_eq!(url("10.0.0.5:80".parse().unwrap()), "http://10.0.0.5:80/");
    }
}
