//! `check --watch`: one watch per kind the lab needs (kube-rs watcher into a reflector store),
//! debounced re-evaluation of every task on change, until every task passes, a stop signal or a
//! timeout.
//!
//! Requests: one LIST then WATCH per kind (scoped as a one-shot check's LIST) and one for the lab's inventory ConfigMap (answers to
//! quizzes land there), re-established by the watcher with back-off when a stream ends; plus the
//! `dryRun=All` probes a task declares, sent again at each evaluation. Nothing else is written.

use std::{
    collections::BTreeMap,
    future::Future,
    time::{Duration, Instant},
};

use futures::StreamExt;
use kube::{
    api::{Api, ApiResource, DynamicObject},
    discovery,
    runtime::{
        WatchStreamExt,
        reflector::store::{Store, Writer},
        watcher,
    },
};
use serde_json::Value;
use tokio::sync::mpsc;

use super::{Error, Result, check, cluster::Cluster, inventory, observe};
use crate::{
    grade::{self, KindKey},
    lab::loader::Bundle,
    report::{
        Report,
        live::{Change, Checklist},
    },
    session::Lang,
};

/// How `watch` waits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchOptions {
    /// Quiet time after a change before re-evaluating, so a burst of events (a rollout) is
    /// graded once.
    pub debounce: Duration,
    /// The longest a steady stream of changes may postpone an evaluation.
    pub max_delay: Duration,
    /// Give up after this long (`--timeout`).
    pub timeout: Option<Duration>,
    /// When the watch ends by itself.
    pub finish: Finish,
}

/// When a watch ends by itself (besides the stop signal and the timeout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Finish {
    /// Once every task passes (`check --watch`).
    #[default]
    WhenAllPass,
    /// Only when stopped: a learner can regress after passing (the class board).
    WhenStopped,
}

impl Default for WatchOptions {
    fn default() -> WatchOptions {
        WatchOptions {
            debounce: Duration::from_millis(300),
            max_delay: Duration::from_secs(2),
            timeout: None,
            finish: Finish::WhenAllPass,
        }
    }
}

/// Why a watch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// Every task passed (exit 0).
    AllPassed,
    /// The stop signal came (Ctrl-C): the last report decides the exit code.
    Interrupted,
    /// `--timeout` ran out before every task passed (exit 4).
    TimedOut,
}

/// What a finished watch hands back.
#[derive(Debug, Clone)]
pub struct Watched {
    /// The last evaluation's report.
    pub report: Report,
    /// Why it ended.
    pub ending: Ending,
    /// The checklist at the end (evaluations, regressions).
    pub checklist: Checklist,
    /// How long it ran.
    pub elapsed: Duration,
}

/// One evaluation, as handed to the caller's renderer.
#[derive(Debug)]
pub struct Update<'a> {
    /// The evaluation's report.
    pub report: &'a Report,
    /// The checklist after it.
    pub checklist: &'a Checklist,
    /// Tasks whose verdict changed (all of them at the first evaluation).
    pub changes: &'a [Change],
    /// Time since the watch started.
    pub elapsed: Duration,
    /// Kinds whose watch is failing right now, with why (their last listed objects are used).
    pub reconnecting: Vec<(String, String)>,
    /// What the report was graded from, to grade it again in another language or with other
    /// help ([`check::grade_observation`]) without asking the cluster again.
    pub graded_from: &'a Graded,
}

/// What one evaluation graded: the observation and the lab's inventory.
#[derive(Debug)]
pub struct Graded {
    /// The objects of the kinds the tasks look at, and the probes' answers.
    pub observation: grade::Observation,
    /// The lab's inventory, when it exists.
    pub inventory: Option<inventory::Inventory>,
}

/// Where one watched source stands.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FeedState {
    /// The initial list has not finished.
    Listing,
    /// The initial list failed and none has succeeded yet: the kind is not observed.
    Failed(String),
    /// Listed, and watching.
    Synced,
    /// Listed before; the watch failed since and is being re-established (the store keeps the
    /// objects last seen).
    Reconnecting(String),
}

/// A watched source: a kind the tasks need, or the inventory.
struct Feed {
    /// What the rows and messages call it (`apps/v1 DaemonSet`).
    label: String,
    state: FeedState,
    store: Store<DynamicObject>,
}

/// What a feed task tells the evaluation loop.
enum Signal {
    /// The initial list (or a re-list) finished.
    Synced(usize),
    /// An object was added, changed or deleted.
    Changed(usize),
    /// A list or watch failed, with why on one line.
    Failed(usize, String),
}

/// Watches the cluster and re-grades `bundle` on every change, calling `on_update` after each
/// evaluation, until every task passes, `stop` resolves (Ctrl-C) or the timeout runs out.
///
/// ```no_run
/// # async fn example(cluster: lab_runner::engine::cluster::Cluster, bundle: lab_runner::lab::loader::Bundle) {
/// use lab_runner::engine::{check::Help, watch};
/// let stop = async { let _ = tokio::signal::ctrl_c().await; };
/// let watched = watch::watch(&cluster, &bundle, lab_runner::session::Lang::En, Help::default(),
///     watch::WatchOptions::default(), stop, |update| eprint!("{}",
///         lab_runner::report::live::change_lines(update.changes, update.checklist, update.elapsed,
///         lab_runner::session::Lang::En)))
///     .await;
/// # }
/// ```
pub async fn watch(
    cluster: &Cluster,
    bundle: &Bundle,
    lang: Lang,
    help: check::Help,
    options: WatchOptions,
    stop: impl Future<Output = ()>,
    mut on_update: impl FnMut(&Update<'_>),
) -> Result<Watched> {
    let started = Instant::now();
    let lab = &bundle.lab.id.value;
    let (sender, mut signals) = mpsc::unbounded_channel();
    let mut tasks = tokio::task::JoinSet::new();
    let mut feeds: Vec<Feed> = Vec::new();
    let mut kinds: Vec<(KindKey, usize)> = Vec::new();
    let plan = grade::Plan::for_tasks(&bundle.lab.tasks);
    for (key, scope) in plan.iter() {
        let key = key.clone();
        let gvk = observe::gvk_of(&key);
        let writer = Writer::new(ApiResource::from_gvk(&gvk));
        let index = feeds.len();
        feeds.push(Feed {
            label: format!("{} {}", key.api_version, key.kind),
            state: FeedState::Listing,
            store: writer.as_reader(),
        });
        let source = Source::Kind(gvk, scope.clone());
        tasks.spawn(run_feed(cluster.watch_client(), source, writer, index, sender.clone()));
        kinds.push((key, index));
    }
    let inventory_feed = feeds.len();
    {
        let resource = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
        let writer = Writer::new(resource);
        feeds.push(Feed {
            label: format!("inventory {}/{}", inventory::NAMESPACE, inventory::name_for(lab)),
            state: FeedState::Listing,
            store: writer.as_reader(),
        });
        let source = Source::Inventory(lab.clone());
        tasks.spawn(run_feed(cluster.watch_client(), source, writer, inventory_feed, sender.clone()));
    }
    drop(sender);

    let mut checklist = Checklist::new();
    let mut last: Option<Report> = None;
    // The first change since the last evaluation, and the last one: the evaluation is due when
    // changes have been quiet for `debounce`, or `max_delay` after the first.
    let mut dirty: Option<(Instant, Instant)> = Some((started, started));
    tokio::pin!(stop);
    let deadline = options.timeout.map(|t| tokio::time::Instant::from_std(started + t));
    let timed_out = async move {
        match deadline {
            Some(deadline) => tokio::time::sleep_until(deadline).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(timed_out);
    let ending = loop {
        let listed = feeds.iter().all(|f| f.state != FeedState::Listing);
        let due = match dirty {
            Some((first, latest)) if listed => {
                let at = (latest + options.debounce).min(first + options.max_delay);
                Some(tokio::time::Instant::from_std(at))
            }
            _ => None,
        };
        tokio::select! {
            biased;
            _ = &mut stop => break Ending::Interrupted,
            _ = &mut timed_out => break Ending::TimedOut,
            signal = signals.recv() => {
                let Some(signal) = signal else {
                    // Every feed task ended: nothing can change any more.
                    break Ending::Interrupted;
                };
                let now = Instant::now();
                dirty = Some(match dirty {
                    Some((first, _)) => (first, now),
                    None => (now, now),
                });
                apply(&mut feeds, signal);
            }
            _ = sleep_until_due(due), if due.is_some() => {
                dirty = None;
                let graded = evaluate(cluster, bundle, &feeds, &kinds, inventory_feed).await?;
                let report = graded.report(bundle, lang, help);
                let changes = checklist.update(&report);
                let reconnecting = feeds
                    .iter()
                    .filter_map(|f| match &f.state {
                        FeedState::Reconnecting(reason) => Some((f.label.clone(), reason.clone())),
                        _ => None,
                    })
                    .collect();
                on_update(&Update {
                    report: &report,
                    checklist: &checklist,
                    changes: &changes,
                    elapsed: started.elapsed(),
                    reconnecting,
                    graded_from: &graded,
                });
                let passed = report.passed;
                last = Some(report);
                if passed && options.finish == Finish::WhenAllPass {
                    break Ending::AllPassed;
                }
            }
        }
    };
    tasks.abort_all();
    let report = match last {
        Some(report) => report,
        // Stopped before the first evaluation: grade what has been listed (kinds still being
        // listed are ERROR rows, never PASS or FAIL).
        None => {
            let report =
                evaluate(cluster, bundle, &feeds, &kinds, inventory_feed).await?.report(bundle, lang, help);
            checklist.update(&report);
            report
        }
    };
    Ok(Watched { report, ending, checklist, elapsed: started.elapsed() })
}

async fn sleep_until_due(due: Option<tokio::time::Instant>) {
    match due {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn apply(feeds: &mut [Feed], signal: Signal) {
    match signal {
        Signal::Synced(index) => feeds[index].state = FeedState::Synced,
        // Events flow again after a failed watch was re-established without a re-list.
        Signal::Changed(index) => {
            if let FeedState::Reconnecting(_) = feeds[index].state {
                feeds[index].state = FeedState::Synced;
            }
        }
        Signal::Failed(index, reason) => {
            let feed = &mut feeds[index];
            feed.state = match feed.state {
                FeedState::Listing | FeedState::Failed(_) => FeedState::Failed(reason),
                FeedState::Synced | FeedState::Reconnecting(_) => FeedState::Reconnecting(reason),
            };
        }
    }
}

impl Graded {
    /// The report of this evaluation in `lang` with `help`.
    pub fn report(&self, bundle: &Bundle, lang: Lang, help: check::Help) -> Report {
        check::grade_observation(bundle, self.inventory.as_ref(), &self.observation, lang, help)
    }
}

/// What the tasks are graded from, out of the stores (no list requests; the probes are sent
/// again).
async fn evaluate(
    cluster: &Cluster,
    bundle: &Bundle,
    feeds: &[Feed],
    kinds: &[(KindKey, usize)],
    inventory_feed: usize,
) -> Result<Graded> {
    let mut observation = grade::Observation::default();
    for (key, index) in kinds {
        let feed = &feeds[*index];
        match &feed.state {
            FeedState::Listing => {
                observation.failures.insert(key.clone(), "not listed yet".to_string());
            }
            FeedState::Failed(reason) => {
                observation.failures.insert(key.clone(), reason.clone());
            }
            FeedState::Synced | FeedState::Reconnecting(_) => {
                observation.observed.insert(&key.api_version, &key.kind, objects(&feed.store, key));
            }
        }
    }
    let feed = &feeds[inventory_feed];
    let inventory =
        match &feed.state {
            FeedState::Synced | FeedState::Reconnecting(_) => match feed.store.state().iter().find(|c| {
                c.metadata.name.as_deref() == Some(inventory::name_for(&bundle.lab.id.value).as_str())
            }) {
                Some(config_map) => {
                    let key = inventory::read_key(&cluster.client, &bundle.lab.id.value).await?;
                    let mut read = inventory::Inventory::from_data(&string_data(config_map), key)?;
                    inventory::count_learner_entries(&cluster.client, &bundle.lab, &mut read).await?;
                    Some(read)
                }
                None => None,
            },
            // Quizzes are graded against the inventory: without it, no verdict would be honest.
            FeedState::Failed(reason) => {
                return Err(Error::Api {
                    action: crate::msg!("action-watch", feed = &feed.label),
                    reason: crate::i18n::outside::quoted(reason.clone()),
                });
            }
            FeedState::Listing => {
                return Err(Error::Api {
                    action: crate::msg!("action-watch", feed = &feed.label),
                    reason: crate::msg!("watch-stopped-before-listed"),
                });
            }
        };
    observation.probes = check::run_probes(cluster, bundle).await;
    Ok(Graded { observation, inventory })
}

/// The store's objects as listed JSON (apiVersion and kind set), in namespace/name order as a
/// LIST returns them, so evidence reads the same as a one-shot check's.
fn objects(store: &Store<DynamicObject>, key: &KindKey) -> Vec<Value> {
    let mut objects: Vec<Value> = store
        .state()
        .iter()
        .map(|object| {
            let mut value = serde_json::to_value(object.as_ref()).unwrap_or(Value::Null);
            if let Some(map) = value.as_object_mut() {
                map.insert("apiVersion".into(), Value::String(key.api_version.clone()));
                map.insert("kind".into(), Value::String(key.kind.clone()));
            }
            value
        })
        .collect();
    let place = |v: &Value| {
        let field = |f: &str| v.pointer(f).and_then(Value::as_str).unwrap_or("").to_string();
        (field("/metadata/namespace"), field("/metadata/name"))
    };
    objects.sort_by_key(place);
    objects
}

fn string_data(config_map: &DynamicObject) -> BTreeMap<String, String> {
    config_map.data["data"]
        .as_object()
        .map(|data| data.iter().filter_map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string()))).collect())
        .unwrap_or_default()
}

/// What a feed watches.
enum Source {
    /// The objects of a kind its scope admits (the same scope a one-shot check lists with).
    Kind(kube::api::GroupVersionKind, grade::Scope),
    /// The ConfigMaps of the records namespace labelled with this lab: its inventory, and a hosted
    /// class's answer and hint entries.
    Inventory(String),
}

/// Runs one watcher into its reflector store, telling the loop about each list, change and
/// failure. A kind whose guessed plural the server does not know (404 on the first list) is
/// resolved through discovery once and watched again, as a one-shot check lists it.
async fn run_feed(
    client: kube::Client,
    source: Source,
    mut writer: Writer<DynamicObject>,
    index: usize,
    signals: mpsc::UnboundedSender<Signal>,
) {
    let (mut api, config): (Api<DynamicObject>, watcher::Config) = match &source {
        Source::Kind(gvk, scope) => {
            let config = watcher::Config {
                label_selector: scope.label_selector(),
                field_selector: scope.field_selector(),
                ..watcher::Config::default()
            };
            (scoped_api(&client, &ApiResource::from_gvk(gvk), scope.namespace.as_deref()), config)
        }
        // The inventory and, in a hosted class, the learners' answer and hint entries: every ConfigMap
        // of the records' namespace labelled with the lab.
        Source::Inventory(lab) => {
            let resource = ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&());
            (
                Api::namespaced_with(client.clone(), inventory::NAMESPACE, &resource),
                watcher::Config::default().labels(&format!("{}={lab}", super::LAB_LABEL)),
            )
        }
    };
    let mut rediscovered = false;
    'restart: loop {
        let stream = watcher(api.clone(), config.clone()).default_backoff();
        tokio::pin!(stream);
        while let Some(item) = stream.next().await {
            let signal = match item {
                Ok(event) => {
                    writer.apply_watcher_event(&event);
                    match event {
                        watcher::Event::InitDone => Signal::Synced(index),
                        watcher::Event::Init | watcher::Event::InitApply(_) => continue,
                        watcher::Event::Apply(_) | watcher::Event::Delete(_) => Signal::Changed(index),
                    }
                }
                Err(error) => {
                    if let (Source::Kind(gvk, scope), false) = (&source, rediscovered)
                        && is_not_found(&error)
                    {
                        rediscovered = true;
                        // Another plural, or a namespace given for a cluster-scoped kind (as
                        // `observe::list_scoped` handles it).
                        if let Ok((resource, capabilities)) = discovery::pinned_kind(&client, gvk).await {
                            let cluster_scoped = capabilities.scope == discovery::Scope::Cluster;
                            let namespace = scope.namespace.as_deref().filter(|_| !cluster_scoped);
                            let dropped = cluster_scoped && scope.namespace.is_some();
                            if resource.plural != ApiResource::from_gvk(gvk).plural || dropped {
                                api = scoped_api(&client, &resource, namespace);
                                continue 'restart;
                            }
                        }
                    }
                    Signal::Failed(index, reason(&error))
                }
            };
            if signals.send(signal).is_err() {
                return;
            }
        }
        return;
    }
}

/// The API of `resource` in `namespace`, or in every namespace.
fn scoped_api(client: &kube::Client, resource: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(namespace) => Api::namespaced_with(client.clone(), namespace, resource),
        None => Api::all_with(client.clone(), resource),
    }
}

fn is_not_found(error: &watcher::Error) -> bool {
    matches!(error, watcher::Error::InitialListFailed(kube::Error::Api(status)) if status.code == 404)
}

/// A watcher error on one line, with the server's message and code when there is one.
fn reason(error: &watcher::Error) -> String {
    let inner = match error {
        watcher::Error::InitialListFailed(e)
        | watcher::Error::WatchStartFailed(e)
        | watcher::Error::WatchFailed(e) => e,
        watcher::Error::WatchError(status) => return format!("{} ({})", status.message, status.code),
        watcher::Error::NoResourceVersion => return error.to_string(),
    };
    match inner {
        kube::Error::Api(status) => format!("{} ({})", status.message, status.code),
        other => super::cluster::one_line(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed() -> Feed {
        let writer: Writer<DynamicObject> =
            Writer::new(ApiResource::erase::<k8s_openapi::api::core::v1::Pod>(&()));
        Feed { label: "v1 Pod".into(), state: FeedState::Listing, store: writer.as_reader() }
    }

    #[test]
    fn a_feed_fails_before_its_first_list_and_reconnects_after_it() {
        let mut feeds = vec![feed()];
        apply(&mut feeds, Signal::Failed(0, "forbidden (403)".into()));
        assert_eq!(feeds[0].state, FeedState::Failed("forbidden (403)".into()));
        apply(&mut feeds, Signal::Failed(0, "still forbidden (403)".into()));
        assert_eq!(feeds[0].state, FeedState::Failed("still forbidden (403)".into()));
        apply(&mut feeds, Signal::Synced(0));
        assert_eq!(feeds[0].state, FeedState::Synced);
        apply(&mut feeds, Signal::Changed(0));
        assert_eq!(feeds[0].state, FeedState::Synced);
        apply(&mut feeds, Signal::Failed(0, "connection reset".into()));
        assert_eq!(feeds[0].state, FeedState::Reconnecting("connection reset".into()));
        // Events again without a re-list: the watch is back.
        apply(&mut feeds, Signal::Changed(0));
        assert_eq!(feeds[0].state, FeedState::Synced);
    }

    #[test]
    fn watcher_errors_read_as_one_line_with_the_code() {
        let status = kube::core::Status::failure("pods is forbidden", "Forbidden").with_code(403);
        let listed = watcher::Error::InitialListFailed(kube::Error::Api(Box::new(status)));
        assert_eq!(reason(&listed), "pods is forbidden (403)");
        assert!(!is_not_found(&listed));
        let gone =
            kube::core::Status::failure("the server could not find the requested resource", "NotFound")
                .with_code(404);
        assert!(is_not_found(&watcher::Error::InitialListFailed(kube::Error::Api(Box::new(gone)))));
    }
}
