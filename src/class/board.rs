//! `lab-runner class board`: the instructor's live page — learners × tasks, pushed as server-sent events.
//!
//! Each learner is graded by its own `engine::watch` (one watch per kind the lab needs, the same
//! grading as `check`), re-graded on every change until the board stops; the learners' latest
//! reports make a [`BoardSnapshot`], published whenever one changed. `/events` streams each
//! snapshot to every open page, `/report.json` is the class report exactly as `check --contexts
//! all --format json` prints it. The page is one self-contained HTML file (no external assets: it
//! works offline) with its texts in en and ja.

use std::{
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
use tokio::sync::{mpsc, watch};

use crate::{
    engine::{
        self,
        watch::{Finish, WatchOptions},
    },
    lab,
    report::{ClassReport, Report},
    session::{ClusterTarget, Lang},
};

/// The page, with its script and styles inline.
const PAGE: &str = include_str!("board.html");

/// Errors of `class board`; each maps to one documented exit code (`src/exit.rs`).
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

/// What `class board` is asked.
#[derive(Debug, Clone)]
pub struct BoardOptions {
    /// The kubeconfig whose contexts are the learners (`None`: `$KUBECONFIG`, then ~/.kube/config).
    pub kubeconfig: Option<PathBuf>,
    /// The contexts to grade; empty: every context of the kubeconfig.
    pub contexts: Vec<String>,
    /// Where the page is served.
    pub listen: SocketAddr,
    /// How soon a learner whose cluster could not be reached (or whose watch ended) is tried again.
    pub retry: Duration,
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
    /// Which snapshot this is (1 for the first, once every learner was graded).
    pub round: u64,
    /// When it was made (RFC 3339).
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

/// One learner's latest grading: the report, or why there is none (one line).
type Outcome = std::result::Result<Report, String>;

/// What a learner's watch tells the board.
struct Graded {
    /// The learner's index in `contexts`.
    index: usize,
    /// Its new outcome.
    outcome: Outcome,
}

/// Grades one learner for as long as the board runs: connects, then `engine::watch` re-grades on
/// every change of what the lab looks at (debounced) and sends each report; a cluster that cannot
/// be reached (or a watch that fails) is sent as an error and tried again after `retry`.
async fn watch_learner(
    options: Arc<BoardOptions>,
    bundle: Arc<lab::loader::Bundle>,
    context: String,
    index: usize,
    graded: mpsc::UnboundedSender<Graded>,
    mut stopped: watch::Receiver<bool>,
) {
    let target = ClusterTarget { kubeconfig: options.kubeconfig.clone(), context: Some(context) };
    let lang = options.lang;
    let send = |outcome: Outcome| graded.send(Graded { index, outcome }).is_ok();
    let watch_options = WatchOptions {
        // A burst of changes (a rollout) is graded once; a quiet change is on the page well
        // within the 2 s.
        debounce: Duration::from_millis(200),
        max_delay: Duration::from_secs(1),
        timeout: None,
        finish: Finish::WhenStopped,
    };
    loop {
        let outcome = match engine::cluster::connect(&target).await {
            Err(error) => Err(crate::i18n::Localized::message(&error).render(lang)),
            Ok(cluster) => {
                let mut stop = stopped.clone();
                let stop = async move {
                    let _ = stop.wait_for(|stop| *stop).await;
                };
                let watched = engine::watch::watch(
                    &cluster,
                    &bundle,
                    lang,
                    engine::check::Help::default(),
                    watch_options,
                    stop,
                    |update| {
                        // While a kind's watch reconnects its objects may be stale: no verdict
                        // from them (grading never lies), the learner is an ERROR row until back.
                        let outcome = match update.reconnecting.first() {
                            None => Ok(update.report.clone()),
                            Some((feed, reason)) => {
                                Err(crate::tr!(lang, "watch-reconnecting-note", feed = feed, reason = reason))
                            }
                        };
                        send(outcome);
                    },
                )
                .await;
                match watched {
                    // Stopped (the board ends), or every feed ended (the server went away).
                    Ok(_) => {
                        if *stopped.borrow() {
                            return;
                        }
                        Err(crate::tr!(lang, "class-board-watch-ended", server = cluster.server.as_str()))
                    }
                    Err(error) => Err(crate::i18n::Localized::message(&error).render(lang)),
                }
            }
        };
        if !send(outcome) {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(options.retry) => {}
            _ = stopped.wait_for(|stop| *stop) => return,
        }
    }
}

/// Keeps every learner's latest outcome and publishes a snapshot whenever one changed (once each
/// learner has been graded once), or when a learner turns stalled. Nothing runs on a timer but
/// the moment the next learner would turn stalled.
async fn publish_snapshots(
    lab: String,
    contexts: Vec<String>,
    stalled_after: Duration,
    mut graded: mpsc::UnboundedReceiver<Graded>,
    publish: watch::Sender<Option<Arc<BoardSnapshot>>>,
) {
    let started = Instant::now();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; contexts.len()];
    let mut last_change: Vec<Instant> = vec![started; contexts.len()];
    let mut snapshot_number = 0;
    loop {
        let now = Instant::now();
        let next_stall = last_change
            .iter()
            .map(|changed| *changed + stalled_after)
            .filter(|at| *at > now)
            .min()
            .map(tokio::time::Instant::from_std);
        let mut changed = tokio::select! {
            received = graded.recv() => {
                let Some(Graded { index, outcome }) = received else { return };
                apply_outcome(&mut outcomes, &mut last_change, index, outcome)
            }
            _ = sleep_until(next_stall), if next_stall.is_some() => true,
        };
        // Everything already waiting goes into the same snapshot.
        while let Ok(Graded { index, outcome }) = graded.try_recv() {
            changed |= apply_outcome(&mut outcomes, &mut last_change, index, outcome);
        }
        if !changed || outcomes.iter().any(Option::is_none) {
            continue;
        }
        let now = Instant::now();
        let report = ClassReport::new(
            &lab,
            contexts
                .iter()
                .cloned()
                .zip(outcomes.iter().map(|o| o.clone().expect("every learner graded")))
                .collect(),
        );
        let progress = contexts
            .iter()
            .zip(&last_change)
            .map(|(context, changed)| {
                let unchanged = now - *changed;
                Progress {
                    context: context.clone(),
                    unchanged_seconds: unchanged.as_secs(),
                    stalled: unchanged >= stalled_after,
                }
            })
            .collect();
        snapshot_number += 1;
        let snapshot = BoardSnapshot {
            round: snapshot_number,
            checked_at: k8s_openapi::jiff::Timestamp::now()
                .round(k8s_openapi::jiff::Unit::Second)
                .map(|t| t.to_string())
                .unwrap_or_default(),
            report,
            progress,
        };
        publish.send_replace(Some(Arc::new(snapshot)));
    }
}

/// Records a learner's outcome; whether it differs from the one before.
fn apply_outcome(
    outcomes: &mut [Option<Outcome>],
    last_change: &mut [Instant],
    index: usize,
    outcome: Outcome,
) -> bool {
    if outcomes[index].as_ref() == Some(&outcome) {
        return false;
    }
    outcomes[index] = Some(outcome);
    last_change[index] = Instant::now();
    true
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
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

/// Serves the board on `listener` until the process is stopped, each learner of `contexts`
/// graded by its own watch for `bundle`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    options: BoardOptions,
    bundle: lab::loader::Bundle,
    contexts: Vec<String>,
) -> Result<(), Error> {
    let (publish, snapshots) = watch::channel(None);
    let (stop, stopped) = watch::channel(false);
    let (graded, grades) = mpsc::unbounded_channel();
    let lang = options.lang;
    let lab = bundle.lab.id.value.clone();
    let options = Arc::new(options);
    let bundle = Arc::new(bundle);
    let mut learners = tokio::task::JoinSet::new();
    for (index, context) in contexts.iter().enumerate() {
        learners.spawn(watch_learner(
            options.clone(),
            bundle.clone(),
            context.clone(),
            index,
            graded.clone(),
            stopped.clone(),
        ));
    }
    drop(graded);
    let publishing = tokio::spawn(publish_snapshots(lab, contexts, options.stalled_after, grades, publish));
    let served = axum::serve(listener, router(snapshots, lang)).await.map_err(Error::Serve);
    let _ = stop.send(true);
    learners.shutdown().await;
    publishing.abort();
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

    #[tokio::test]
    async fn a_snapshot_waits_for_every_learner_and_is_published_on_change_only() {
        let (graded, grades) = mpsc::unbounded_channel();
        let (publish, mut snapshots) = watch::channel(None);
        let contexts = vec!["learner-1".to_string(), "learner-2".to_string()];
        let publishing = tokio::spawn(publish_snapshots(
            "lab".into(),
            contexts,
            Duration::from_secs(600),
            grades,
            publish,
        ));
        let outcome = |index: usize, reason: &str| Graded { index, outcome: Err(reason.to_string()) };
        let next = async |snapshots: &mut watch::Receiver<Option<Arc<BoardSnapshot>>>| {
            tokio::time::timeout(Duration::from_secs(10), snapshots.changed()).await.unwrap().unwrap();
            snapshots.borrow_and_update().clone().expect("a snapshot")
        };

        graded.send(outcome(0, "down")).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(snapshots.borrow().is_none(), "no snapshot before every learner was graded once");
        graded.send(outcome(1, "down")).unwrap();
        let first = next(&mut snapshots).await;
        assert_eq!((first.round, first.report.learners.len()), (1, 2));

        // The same outcome again changes nothing; a new one is the next snapshot.
        graded.send(outcome(0, "down")).unwrap();
        graded.send(outcome(1, "still down")).unwrap();
        let second = next(&mut snapshots).await;
        assert_eq!(second.round, 2);
        assert!(!second.progress.iter().any(|p| p.stalled));
        drop(graded);
        publishing.await.unwrap();
        assert!(!snapshots.has_changed().unwrap_or(false), "nothing published for the repeated outcome");
    }

    #[test]
    fn board_urls_reach_unspecified_addresses_through_loopback() {
        assert_eq!(url("0.0.0.0:8420".parse().unwrap()), "http://127.0.0.1:8420/");
        assert_eq!(url("10.0.0.5:80".parse().unwrap()), "http://10.0.0.5:80/");
    }
}
