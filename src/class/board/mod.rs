//! `lab-runner class board`: the instructor's live page — learners × tasks, pushed as server-sent events, giving no answer away.
//!
//! Each learner is graded by its own `engine::watch` (one watch per kind the lab needs, the same
//! grading as `check`), re-graded on every change until the board stops, in English and in
//! Japanese from the same observation. A quiz cell says whether the learner answered and whether
//! it was right, never the value (unless the instructor starts the board with `--reveal`): the
//! board is made to be projected. The learners' latest reports and their clocks
//! ([`progress`]) make a [`BoardSnapshot`] per language, published whenever one changed; `/events`
//! streams the page's language, `/report.json` is the class report as `check --contexts all
//! --format json` prints it (its quiz evidence concealed the same way). The page is one
//! self-contained HTML file (no external assets: it works offline). Who may read it: [`access`].

pub mod access;
pub mod progress;

use std::{convert::Infallible, net::SocketAddr, path::PathBuf, sync::Arc, time::Duration};

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
use k8s_openapi::jiff::Timestamp;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, watch};

pub use self::progress::MEMORY_FILE;
use self::progress::{Clocks, Progress};
use super::{hosting, record::ClassRecord};
use crate::{
    engine::{
        self,
        check::{Answers, Help},
        watch::{Finish, WatchOptions},
    },
    lab,
    report::{ClassReport, Report},
    session::{ClusterTarget, Lang},
    tr,
};

/// The page, with its script and styles inline.
const PAGE: &str = include_str!("page.html");

/// Errors of `class board`; each maps to one documented exit code (`src/exit.rs`).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The listen address is taken or not ours to bind. Exit 2.
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// Why it cannot be bound.
        source: std::io::Error,
    },
    /// A board other hosts can reach needs a token. Exit 2.
    NeedsToken(SocketAddr),
    /// No random token could be made. Exit 3.
    Token(crate::sim::auth::Error),
    /// The kubeconfig names no context to grade. Exit 2.
    NoContexts(String),
    /// The kubeconfig could not be read. Exit 2.
    Kubeconfig {
        /// The kubeconfig.
        path: String,
        /// Why it could not be read.
        reason: crate::i18n::Message,
    },
    /// The server stopped with an I/O error. Exit 3.
    Serve(std::io::Error),
}

impl crate::i18n::Localized for Error {
    fn message(&self) -> crate::i18n::Message {
        use crate::{i18n::outside, msg};
        match self {
            Error::Bind { addr, source } => {
                msg!("class-board-error-bind", addr = addr.to_string(), reason = outside::cause(source))
            }
            Error::NeedsToken(addr) => msg!("class-board-error-needs-token", addr = addr.to_string()),
            Error::Token(error) => {
                msg!("class-board-error-token", reason = outside::quoted(error.to_string()))
            }
            Error::NoContexts(path) => msg!("class-board-error-no-contexts", path = path),
            Error::Kubeconfig { path, reason } => {
                msg!("class-kubeconfig-unreadable", path = path, reason = reason)
            }
            Error::Serve(source) => msg!("class-board-error-serve", reason = outside::cause(source)),
        }
    }
}
crate::english_display!(Error);

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
    /// A learner whose verdicts have not changed for this long (and who has not finished) is
    /// shown as stalled.
    pub stalled_after: Duration,
    /// The page's language unless the page asks for another (`?lang=ja`).
    pub lang: Lang,
    /// The token every request must carry (required unless `listen` is loopback).
    pub token: Option<String>,
    /// Show quiz answers, variants and solutions (the instructor's explicit choice).
    pub reveal: bool,
    /// Where the clocks are remembered across restarts (`DIR/board.json` for a class).
    pub memory: Option<PathBuf>,
    /// The class the learners belong to, when the board grades a class directory: a learner
    /// whose simulator does not run is shown with that reason.
    pub class: Option<(PathBuf, ClassRecord)>,
}

/// The columns: each task's id and title in the page's language, in the report's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskColumn {
    /// The task id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its points.
    pub points: i64,
}

/// What `/events` pushes and `/board.json` answers, in one language.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BoardSnapshot {
    /// Which snapshot this is (1 for the first, once every learner was graded).
    pub round: u64,
    /// When it was made (RFC 3339).
    pub checked_at: String,
    /// The lab's title.
    pub title: String,
    /// The tasks, in order.
    pub tasks: Vec<TaskColumn>,
    /// The class report, as `check --contexts all --format json` prints it (a learner who
    /// cannot be graded has `error`: why).
    pub report: ClassReport,
    /// Each learner's progress, in the report's order.
    pub progress: Vec<Progress>,
}

/// A value in both languages.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InLangs<T> {
    /// In English.
    pub en: T,
    /// In Japanese.
    pub ja: T,
}

impl<T> InLangs<T> {
    /// The value in `lang`.
    pub fn get(&self, lang: Lang) -> &T {
        match lang {
            Lang::En => &self.en,
            Lang::Ja => &self.ja,
        }
    }

    /// Both made by `make`, one language at a time.
    pub fn make(mut make: impl FnMut(Lang) -> T) -> InLangs<T> {
        InLangs { en: make(Lang::En), ja: make(Lang::Ja) }
    }
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
    .map_err(|e| Error::Kubeconfig { path: shown.clone(), reason: crate::i18n::outside::cause(&e) })?;
    let contexts: Vec<String> = config.contexts.iter().map(|c| c.name.clone()).collect();
    if contexts.is_empty() {
        return Err(Error::NoContexts(shown));
    }
    Ok(contexts)
}

/// Refuses a board other hosts can reach without a token, before anything else runs.
pub fn check_access(options: &BoardOptions) -> Result<(), Error> {
    if !options.listen.ip().is_loopback() && options.token.is_none() {
        return Err(Error::NeedsToken(options.listen));
    }
    Ok(())
}

/// Binds the board's address (a taken port is bad input, reported before anything else runs).
pub async fn bind(listen: SocketAddr) -> Result<tokio::net::TcpListener, Error> {
    tokio::net::TcpListener::bind(listen).await.map_err(|source| Error::Bind { addr: listen, source })
}

/// One learner's latest grading in both languages: the reports, or why there are none.
type Outcome = Result<InLangs<Report>, InLangs<String>>;

/// What a learner's watch tells the board.
struct Graded {
    /// The learner's index in `contexts`.
    index: usize,
    /// Its new outcome.
    outcome: Outcome,
}

/// Why learner `context` of a class cannot be graded when its simulator is not running (`None`:
/// not a class's learner, or it runs).
fn class_down_reason(options: &BoardOptions, context: &str) -> Option<InLangs<String>> {
    let (dir, record) = options.class.as_ref()?;
    record.learner(context)?;
    match hosting::sim_state(&record.sim_dir(dir, context)) {
        hosting::SimState::Stopped => {
            Some(InLangs::make(|lang| tr!(lang, "class-board-learner-stopped", learner = context)))
        }
        hosting::SimState::Gone { pid } => {
            Some(InLangs::make(|lang| tr!(lang, "class-board-learner-gone", learner = context, pid = pid)))
        }
        hosting::SimState::Up { .. } => None,
    }
}

/// Why learner `context` cannot be graded: its simulator is not running (a class's learner), or
/// what connecting said.
fn down_reason(options: &BoardOptions, context: &str, error: &engine::Error) -> InLangs<String> {
    class_down_reason(options, context)
        .unwrap_or_else(|| InLangs::make(|lang| crate::i18n::Localized::message(error).render(lang)))
}

/// Grades one learner for as long as the board runs: connects, then `engine::watch` re-grades on
/// every change of what the lab looks at (debounced) and sends each report in both languages; a
/// cluster that cannot be reached (or a watch that fails) is sent as an error and tried again
/// after `retry`.
async fn watch_learner(
    options: Arc<BoardOptions>,
    bundle: Arc<lab::loader::Bundle>,
    index: usize,
    graded: mpsc::UnboundedSender<Graded>,
    mut stopped: watch::Receiver<bool>,
) {
    let context = options.contexts[index].clone();
    let target = ClusterTarget { kubeconfig: options.kubeconfig.clone(), context: Some(context.clone()) };
    let send = |outcome: Outcome| graded.send(Graded { index, outcome }).is_ok();
    let help = Help {
        reveal: options.reveal,
        answers: if options.reveal { Answers::Quoted } else { Answers::Concealed },
        ..Help::default()
    };
    let watch_options = WatchOptions {
        // A burst of changes (a rollout) is graded once; a quiet change is on the page well
        // within 2 s.
        debounce: Duration::from_millis(200),
        max_delay: Duration::from_secs(1),
        timeout: None,
        finish: Finish::WhenStopped,
    };
    loop {
        let outcome = match engine::cluster::connect(&target).await {
            Err(error) => Err(down_reason(&options, &context, &error.into())),
            Ok(cluster) => {
                let mut stop = stopped.clone();
                let stop = async move {
                    let _ = stop.wait_for(|stop| *stop).await;
                };
                let watched =
                    engine::watch::watch(&cluster, &bundle, Lang::En, help, watch_options, stop, |update| {
                        // While a kind's watch reconnects its objects may be stale: no verdict
                        // from them (grading never lies), the learner is an ERROR row until back.
                        let outcome = match update.reconnecting.first() {
                            None => Ok(InLangs {
                                en: update.report.clone(),
                                ja: update.graded_from.report(&bundle, Lang::Ja, help),
                            }),
                            Some((feed, reason)) => Err(class_down_reason(&options, &context)
                                .unwrap_or_else(|| {
                                    InLangs::make(|lang| {
                                        tr!(lang, "watch-reconnecting-note", feed = feed, reason = reason)
                                    })
                                })),
                        };
                        send(outcome);
                    })
                    .await;
                match watched {
                    // Stopped (the board ends), or every feed ended (the server went away).
                    Ok(_) => {
                        if *stopped.borrow() {
                            return;
                        }
                        let server = cluster.server.as_str();
                        Err(InLangs::make(|lang| tr!(lang, "class-board-watch-ended", server = server)))
                    }
                    Err(error) => Err(down_reason(&options, &context, &error)),
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

/// What the publishing loop keeps: the lab, the learners' latest outcomes and their clocks.
struct Publisher {
    bundle: Arc<lab::loader::Bundle>,
    contexts: Vec<String>,
    stalled_after: Duration,
    memory: Option<PathBuf>,
    /// The language of the lines it logs on stderr (the instructor's).
    lang: Lang,
    outcomes: Vec<Option<Outcome>>,
    clocks: Clocks,
    round: u64,
}

impl Publisher {
    fn new(bundle: Arc<lab::loader::Bundle>, options: &BoardOptions) -> Publisher {
        let lab = bundle.lab.id.value.clone();
        let remembered = options.memory.as_deref().and_then(|path| progress::read_memory(path, &lab));
        let clocks = Clocks::new(&lab, &options.contexts, remembered, Timestamp::now());
        Publisher {
            bundle,
            contexts: options.contexts.clone(),
            stalled_after: options.stalled_after,
            memory: options.memory.clone(),
            lang: options.lang,
            outcomes: vec![None; options.contexts.len()],
            clocks,
            round: 0,
        }
    }

    /// Records a learner's outcome: (whether it differs from the one before, whether its
    /// verdicts changed).
    fn apply(&mut self, Graded { index, outcome }: Graded) -> (bool, bool) {
        if self.outcomes[index].as_ref() == Some(&outcome) {
            return (false, false);
        }
        let verdicts = outcome.as_ref().ok().map(|reports| progress::verdicts_of(&reports.en));
        let changed = self.clocks.record(index, verdicts, Timestamp::now());
        self.outcomes[index] = Some(outcome);
        (true, changed)
    }

    /// The snapshot of every learner in both languages, once each has been graded once.
    fn snapshots(&mut self) -> Option<InLangs<BoardSnapshot>> {
        if self.outcomes.iter().any(Option::is_none) {
            return None;
        }
        self.round += 1;
        let now = Timestamp::now();
        let progress = self.clocks.progress(now, self.stalled_after);
        let checked_at = super::now_rfc3339();
        let lab = &self.bundle.lab;
        Some(InLangs::make(|lang| {
            let outcomes = self
                .contexts
                .iter()
                .zip(&self.outcomes)
                .map(|(context, outcome)| {
                    let outcome = match outcome.as_ref().expect("every learner graded") {
                        Ok(reports) => Ok(reports.get(lang).clone()),
                        Err(reasons) => Err(reasons.get(lang).clone()),
                    };
                    (context.clone(), outcome)
                })
                .collect();
            BoardSnapshot {
                round: self.round,
                checked_at: checked_at.clone(),
                title: lab.title.get(lang).trim().to_string(),
                tasks: lab
                    .tasks_in_needs_order()
                    .into_iter()
                    .map(|task| TaskColumn {
                        id: task.id.value.clone(),
                        title: task.title.get(lang).trim().to_string(),
                        points: task.points.value,
                    })
                    .collect(),
                report: ClassReport::new(&lab.id.value, outcomes),
                progress: progress.clone(),
            }
        }))
    }

    /// Writes the clocks to the memory file (atomically); a failure is logged, never fatal.
    fn remember(&self) {
        let Some(path) = &self.memory else { return };
        let text =
            serde_json::to_string_pretty(&self.clocks.memory()).expect("the board's memory serializes");
        if let Err(error) = super::record::write_file(path, text.as_bytes()) {
            eprintln!("{}", tr!(self.lang, "error-line", message = crate::i18n::Localized::message(&error)));
        }
    }
}

/// Keeps every learner's latest outcome and publishes the snapshots whenever one changed (once
/// each learner has been graded once), or when a learner turns stalled. Nothing runs on a timer
/// but the moment the next learner would turn stalled.
async fn publish_snapshots(
    mut publisher: Publisher,
    mut graded: mpsc::UnboundedReceiver<Graded>,
    publish: watch::Sender<Option<Arc<InLangs<BoardSnapshot>>>>,
) {
    loop {
        let next_stall = publisher.clocks.next_stall(Timestamp::now(), publisher.stalled_after);
        let (mut changed, mut verdicts_changed) = tokio::select! {
            received = graded.recv() => {
                let Some(received) = received else { return };
                publisher.apply(received)
            }
            // Rounded up, so the learner is stalled when it wakes.
            _ = tokio::time::sleep(next_stall.unwrap_or_default() + Duration::from_millis(5)), if next_stall.is_some() => (true, false),
        };
        // Everything already waiting goes into the same snapshot.
        while let Ok(received) = graded.try_recv() {
            let (outcome, verdicts) = publisher.apply(received);
            changed |= outcome;
            verdicts_changed |= verdicts;
        }
        if verdicts_changed {
            publisher.remember();
        }
        if changed && let Some(snapshots) = publisher.snapshots() {
            publish.send_replace(Some(Arc::new(snapshots)));
        }
    }
}

#[derive(Clone)]
struct AppState {
    snapshots: watch::Receiver<Option<Arc<InLangs<BoardSnapshot>>>>,
    lang: Lang,
}

#[derive(Deserialize)]
struct LangQuery {
    lang: Option<String>,
}

impl AppState {
    /// The language a request asks for (`?lang=ja`), else the board's.
    fn lang(&self, query: &LangQuery) -> Lang {
        match query.lang.as_deref() {
            Some("ja") => Lang::Ja,
            Some("en") => Lang::En,
            _ => self.lang,
        }
    }

    /// The latest snapshots, once the first round is done.
    async fn latest(&self) -> Arc<InLangs<BoardSnapshot>> {
        let mut snapshots = self.snapshots.clone();
        let snapshot =
            snapshots.wait_for(Option::is_some).await.expect("the grading loop outlives the server");
        snapshot.clone().expect("waited for a snapshot")
    }
}

fn lang_code(lang: Lang) -> &'static str {
    match lang {
        Lang::En => "en",
        Lang::Ja => "ja",
    }
}

async fn page(State(state): State<AppState>, Query(query): Query<LangQuery>) -> impl IntoResponse {
    let lang = lang_code(state.lang(&query));
    ([(header::CACHE_CONTROL, "no-store")], Html(page_html(lang)))
}

/// The page in the language `lang` (its `<html lang>`), with its words in both languages.
fn page_html(lang: &str) -> String {
    let texts = serde_json::json!({"en": page_texts(Lang::En), "ja": page_texts(Lang::Ja)});
    PAGE.replace("__LANG__", lang).replace("__TEXTS__", &texts.to_string())
}

/// The page's own words in `lang`, by the key its script looks them up with.
fn page_texts(lang: Lang) -> serde_json::Value {
    serde_json::json!({
        "title": tr!(lang, "board-page-title"),
        "learner": tr!(lang, "board-page-learner"),
        "score": tr!(lang, "board-page-score"),
        "unchanged": tr!(lang, "board-page-unchanged"),
        "stalled": tr!(lang, "board-page-stalled"),
        "stalledTitle": tr!(lang, "board-page-stalled-title"),
        "finished": tr!(lang, "board-page-finished"),
        "evidence": tr!(lang, "board-page-evidence"),
        "connecting": tr!(lang, "board-page-connecting"),
        "waiting": tr!(lang, "board-page-waiting"),
        "offline": tr!(lang, "board-page-offline"),
        "checked": tr!(lang, "board-page-checked"),
        "round": tr!(lang, "board-page-round", n = "%n"),
        "down": tr!(lang, "board-page-down"),
        "error": tr!(lang, "board-page-error"),
        "english": tr!(lang, "board-page-english"),
        "japanese": tr!(lang, "board-page-japanese"),
    })
}

async fn report_json(State(state): State<AppState>, Query(query): Query<LangQuery>) -> impl IntoResponse {
    Json(state.latest().await.get(state.lang(&query)).report.clone())
}

async fn board_json(State(state): State<AppState>, Query(query): Query<LangQuery>) -> impl IntoResponse {
    Json(state.latest().await.get(state.lang(&query)).clone())
}

async fn events(
    State(state): State<AppState>,
    Query(query): Query<LangQuery>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let lang = state.lang(&query);
    let stream = tokio_stream::wrappers::WatchStream::new(state.snapshots.clone()).filter_map(
        move |snapshots| async move {
            let snapshots = snapshots?;
            let data = serde_json::to_string(snapshots.get(lang)).expect("a snapshot serializes");
            Some(Ok(Event::default().event("board").data(data)))
        },
    );
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The board's routes over the snapshots the grading loop publishes, behind its [`access`] guard.
fn router(
    snapshots: watch::Receiver<Option<Arc<InLangs<BoardSnapshot>>>>,
    lang: Lang,
    gate: access::Gate,
) -> Router {
    Router::new()
        .route("/", get(page))
        .route("/report.json", get(report_json))
        .route("/board.json", get(board_json))
        .route("/events", get(events))
        .route(access::HEALTH_PATH, get(|| async { "ok\n" }))
        .with_state(AppState { snapshots, lang })
        .layer(axum::middleware::from_fn_with_state(gate, access::guard))
}

/// Serves the board on `listener` until the process is stopped, each learner of
/// `options.contexts` graded by its own watch for `bundle`.
pub async fn serve(
    listener: tokio::net::TcpListener,
    options: BoardOptions,
    bundle: lab::loader::Bundle,
) -> Result<(), Error> {
    let (publish, snapshots) = watch::channel(None);
    let (stop, stopped) = watch::channel(false);
    let (graded, grades) = mpsc::unbounded_channel();
    let gate = access::Gate::new(options.listen, options.token.as_deref());
    let lang = options.lang;
    let options = Arc::new(options);
    let bundle = Arc::new(bundle);
    let mut learners = tokio::task::JoinSet::new();
    for index in 0..options.contexts.len() {
        learners.spawn(watch_learner(
            options.clone(),
            bundle.clone(),
            index,
            graded.clone(),
            stopped.clone(),
        ));
    }
    drop(graded);
    let publishing = tokio::spawn(publish_snapshots(Publisher::new(bundle, &options), grades, publish));
    let served = axum::serve(listener, router(snapshots, lang, gate)).await.map_err(Error::Serve);
    let _ = stop.send(true);
    learners.shutdown().await;
    publishing.abort();
    served
}

/// The address the board's URL names (an unspecified listen address is reached through
/// 127.0.0.1), with the token when there is one.
pub fn url(bound: SocketAddr, token: Option<&str>) -> String {
    let ip = if bound.ip().is_unspecified() { std::net::Ipv4Addr::LOCALHOST.into() } else { bound.ip() };
    let base = format!("http://{}/", SocketAddr::new(ip, bound.port()));
    match token {
        Some(token) => format!("{base}?{}={token}", access::TOKEN_PARAM),
        None => base,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_has_no_external_assets_and_both_languages() {
        for needle in ["http://", "https://", "src=\"//", "href=\"//"] {
            assert!(!PAGE.contains(needle), "the page must work offline; it names {needle}");
        }
        assert!(PAGE.contains("__LANG__") && PAGE.contains("__TEXTS__"));
        // Every word the script looks up is among the texts, in both languages.
        let page = page_html("ja");
        let texts: serde_json::Value = {
            let start = page.find("const TEXTS = ").unwrap() + "const TEXTS = ".len();
            let end = start + page[start..].find(";\n").unwrap();
            serde_json::from_str(&page[start..end]).unwrap()
        };
        let looked_up = regex::Regex::new(r#"\bt\("([A-Za-z]+)"\)"#).unwrap();
        let keys: Vec<&str> = looked_up.captures_iter(PAGE).map(|c| c.get(1).unwrap().as_str()).collect();
        assert!(keys.len() > 10, "{keys:?}");
        for key in keys {
            for lang in ["en", "ja"] {
                assert!(texts[lang][key].as_str().is_some_and(|t| !t.is_empty()), "{key} in {lang}");
            }
        }
        assert_eq!(texts["ja"]["round"], "（%n 回目の更新）");
    }

    fn options(contexts: &[&str]) -> BoardOptions {
        BoardOptions {
            kubeconfig: None,
            contexts: contexts.iter().map(|c| c.to_string()).collect(),
            listen: "127.0.0.1:0".parse().unwrap(),
            retry: Duration::from_secs(1),
            stalled_after: Duration::from_secs(600),
            lang: Lang::En,
            token: None,
            reveal: false,
            memory: None,
            class: None,
        }
    }

    fn bundle() -> Arc<lab::loader::Bundle> {
        Arc::new(lab::loader::find(&crate::session::LabSource::BuiltIn, "stuck-rollout").unwrap())
    }

    #[tokio::test]
    async fn a_snapshot_waits_for_every_learner_and_is_published_on_change_only() {
        let (graded, grades) = mpsc::unbounded_channel();
        let (publish, mut snapshots) = watch::channel(None);
        let publisher = Publisher::new(bundle(), &options(&["learner-1", "learner-2"]));
        let publishing = tokio::spawn(publish_snapshots(publisher, grades, publish));
        let outcome = |index: usize, reason: &str| Graded {
            index,
            outcome: Err(InLangs::make(|lang| format!("{reason} ({})", lang_code(lang)))),
        };
        let next = async |snapshots: &mut watch::Receiver<Option<Arc<InLangs<BoardSnapshot>>>>| {
            tokio::time::timeout(Duration::from_secs(10), snapshots.changed()).await.unwrap().unwrap();
            snapshots.borrow_and_update().clone().expect("a snapshot")
        };

        graded.send(outcome(0, "down")).unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(snapshots.borrow().is_none(), "no snapshot before every learner was graded once");
        graded.send(outcome(1, "down")).unwrap();
        let first = next(&mut snapshots).await;
        assert_eq!((first.en.round, first.en.report.learners.len()), (1, 2));
        // The reason a learner is down, in each language; the columns are the tasks' titles.
        assert_eq!(first.ja.report.learners[0].error.as_deref(), Some("down (ja)"));
        assert_eq!(first.en.tasks.len(), first.ja.tasks.len());
        assert!(first.en.tasks.iter().zip(&first.ja.tasks).any(|(en, ja)| en.title != ja.title));

        // The same outcome again changes nothing; a new one is the next snapshot.
        graded.send(outcome(0, "down")).unwrap();
        graded.send(outcome(1, "still down")).unwrap();
        let second = next(&mut snapshots).await;
        assert_eq!(second.en.round, 2);
        assert!(!second.en.progress.iter().any(|p| p.stalled), "a learner who is down is not stalled");
        drop(graded);
        publishing.await.unwrap();
        assert!(!snapshots.has_changed().unwrap_or(false), "nothing published for the repeated outcome");
    }

    #[test]
    fn board_urls_reach_unspecified_addresses_through_loopback_and_carry_the_token() {
        assert_eq!(url("0.0.0.0:8420".parse().unwrap(), None), "http://127.0.0.1:8420/");
        assert_eq!(url("10.0.0.5:80".parse().unwrap(), Some("abc")), "http://10.0.0.5:80/?token=abc");
    }

    #[test]
    fn a_board_other_hosts_reach_needs_a_token() {
        let open = BoardOptions { listen: "0.0.0.0:8420".parse().unwrap(), ..options(&[]) };
        let error = check_access(&open).unwrap_err();
        assert_eq!(crate::exit::HasExitCode::exit_code(&error), crate::exit::BAD_INPUT);
        assert!(error.to_string().contains("--token generate"), "{error}");
        check_access(&BoardOptions { token: Some("t".into()), ..open }).unwrap();
        check_access(&options(&[])).unwrap();
    }
}
