//! The commands that change a class — `up`, `start`, `restart`, `reset`, `down` — each under the class lock, each leaving the record as the class now is.

use std::{net::SocketAddr, path::Path};

use futures::StreamExt as _;
use tokio::sync::watch;

use super::{
    Error, LabOutcome, LearnerOutcome, Recorded, Result, SimOutcome, Stopped, Summary, UpOptions, hosting,
    instructor_target, learner_name,
    record::{self, ClassRecord, LabStart, LearnerRecord, ProcessModel},
    runtime, variant_for_learner, write_kubeconfigs,
};
use crate::{
    engine, lab,
    session::{LabSource, Lang},
    sim::kubeconfig::KUBECONFIG_FILE,
};

/// How many learners' simulators start at once (each start mostly waits for its process to
/// answer; more at once only crowds a small host).
const STARTS_AT_ONCE: usize = 4;

/// Which command is changing the class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Intent {
    /// `class up`: the class as recorded (created when new), everything down started.
    Up,
    /// `class start LAB`: the class moves to LAB, started in every learner who has not yet.
    StartLab,
}

impl Intent {
    fn command(self) -> &'static str {
        match self {
            Intent::Up => "class up",
            Intent::StartLab => "class start",
        }
    }
}

/// `class up`: creates the class when the directory has none, else brings the recorded class
/// back: starts every learner that is down on its recorded port, and the class's lab in every
/// learner that has not started it (never again in one who has). A learner that fails is
/// reported; the others keep running. Ctrl-C stops the learners this command started.
pub fn up(options: &UpOptions) -> Result<Summary> {
    change(options, Intent::Up)
}

/// What `class start LAB` is asked.
#[derive(Debug, Clone)]
pub struct StartLabOptions {
    /// The class directory.
    pub dir: std::path::PathBuf,
    /// The lab.
    pub lab: String,
    /// The variant every learner gets.
    pub variant: Option<String>,
    /// The seed the learners' variants come from (default: the class's).
    pub seed: Option<u64>,
    /// Labs' source.
    pub labs: LabSource,
    /// Language of the briefings.
    pub lang: Lang,
}

/// `class start LAB`: makes LAB the class's lab and starts it in every learner who has not
/// started it (a class created without a lab gets its lab; a course's next lab follows the
/// last). Learners that are down are started first.
pub fn start_lab(options: &StartLabOptions) -> Result<Summary> {
    let up = UpOptions {
        dir: options.dir.clone(),
        learners: None,
        lab: Some(options.lab.clone()),
        variant: options.variant.clone(),
        seed: options.seed,
        listen: None,
        tls_sans: Vec::new(),
        labs: options.labs.clone(),
        lang: options.lang,
        processes: None,
    };
    change(&up, Intent::StartLab)
}

/// Checks what needs no record: the count, the port range, the names for a network class.
fn check_options(options: &UpOptions) -> Result<()> {
    if let Some(learners) = options.learners
        && (learners == 0 || learners > super::MAX_LEARNERS)
    {
        return Err(Error::LearnerCount(learners));
    }
    if let Some(listen) = options.listen {
        let port = u32::from(listen.port());
        let learners = options.learners.unwrap_or(1);
        if port != 0 && port + learners - 1 > u32::from(u16::MAX) {
            return Err(Error::PortRange { addr: listen, learners });
        }
        // The default stays 127.0.0.1: any other address is an explicit choice, and the names
        // learners reach it by must be in their certificates and kubeconfigs.
        if !listen.ip().is_loopback() && options.tls_sans.is_empty() {
            return Err(Error::NeedsTlsSan(listen.ip()));
        }
    }
    Ok(())
}

/// Loads `lab` and checks `variant` names one of its variants.
fn load_lab(labs: &LabSource, lab: &str, variant: Option<&str>) -> Result<lab::loader::Bundle> {
    let bundle = lab::loader::find(labs, lab)?;
    if let Some(variant) = variant
        && bundle.lab.variant(variant).is_none()
    {
        return Err(Error::UnknownVariant {
            lab: lab.to_string(),
            variant: variant.to_string(),
            known: bundle.lab.variants.iter().map(|v| v.id.value.clone()).collect(),
        });
    }
    Ok(bundle)
}

/// A seed for a class that was given none: from the clock, recorded, so the learners' variants
/// are fixed once and neighbours still differ.
fn clock_seed() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// The learners' ports are tried before any starts: a taken one is bad input in one line.
fn check_ports_free(listen: SocketAddr, learners: u32) -> Result<()> {
    if listen.port() == 0 {
        return Ok(());
    }
    for index in 0..learners {
        let port = listen.port() + index as u16;
        if let Err(source) = std::net::TcpListener::bind(SocketAddr::new(listen.ip(), port)) {
            return Err(Error::PortInUse { port, learner: learner_name(index + 1), source });
        }
    }
    Ok(())
}

/// The record of a new class, from `options`.
fn new_record(options: &UpOptions) -> Result<ClassRecord> {
    let learners = options.learners.ok_or_else(|| Error::NeedsLearners(options.dir.clone()))?;
    let listen = options.listen.unwrap_or(crate::sim::lifecycle::DEFAULT_LISTEN);
    check_ports_free(listen, learners)?;
    let seed = options.seed.or_else(|| (options.variant.is_none() && options.lab.is_some()).then(clock_seed));
    Ok(ClassRecord {
        version: record::RECORD_VERSION,
        lab: options.lab.clone(),
        seed,
        variant: options.variant.clone(),
        listen,
        tls_sans: options.tls_sans.clone(),
        processes: options.processes.unwrap_or_default(),
        shared_pid: None,
        learners: Vec::new(),
        layout: record::Layout::Nested,
    })
    .map(|mut record| {
        grow(&mut record, learners);
        record
    })
}

/// Adds learners up to `learners`, each with its port when the class has a first port.
fn grow(record: &mut ClassRecord, learners: u32) {
    for index in record.learners.len() as u32..learners {
        let port = match record.listen.port() {
            0 => None,
            first => Some(first + index as u16),
        };
        record.learners.push(LearnerRecord { name: learner_name(index + 1), port, labs: Vec::new() });
    }
}

/// `given` must be what the class recorded (or not given at all).
fn same<T: PartialEq + std::fmt::Display>(
    option: Recorded,
    given: Option<&T>,
    recorded: String,
    equal: bool,
) -> Result<()> {
    match given {
        Some(asked) if !equal => Err(Error::Differs { option, asked: asked.to_string(), recorded }),
        _ => Ok(()),
    }
}

/// The recorded class with `options` applied: the options must agree with what the learners'
/// kubeconfigs already use; more learners are added; a class without a lab takes `--lab`.
fn reconcile(mut record: ClassRecord, options: &UpOptions, intent: Intent) -> Result<ClassRecord> {
    if let Some(listen) = options.listen {
        let equal = listen.ip() == record.listen.ip()
            && (listen.port() == 0 || listen.port() == record.listen.port());
        same(Recorded::Listen, Some(&listen), record.listen.to_string(), equal)?;
    }
    if !options.tls_sans.is_empty() && options.tls_sans != record.tls_sans {
        let shown = |names: &[String]| if names.is_empty() { "none".to_string() } else { names.join(", ") };
        return Err(Error::Differs {
            option: Recorded::TlsSan,
            asked: shown(&options.tls_sans),
            recorded: shown(&record.tls_sans),
        });
    }
    if let Some(processes) = options.processes
        && processes != record.processes
    {
        let shown = |p: ProcessModel| match p {
            ProcessModel::PerLearner => "--processes per-learner",
            ProcessModel::Shared => "--processes shared",
        };
        return Err(Error::Differs {
            option: Recorded::Processes,
            asked: shown(processes).into(),
            recorded: shown(record.processes).into(),
        });
    }
    if let Some(learners) = options.learners {
        if (learners as usize) < record.learners.len() {
            return Err(Error::FewerLearners { recorded: record.learners.len(), asked: learners });
        }
        grow(&mut record, learners);
    }
    let moving = match (&record.lab, &options.lab) {
        (_, None) => false,
        (None, Some(_)) => true,
        (Some(running), Some(asked)) if running == asked => false,
        (Some(running), Some(asked)) => {
            if intent == Intent::Up {
                return Err(Error::OtherLab { running: running.clone(), asked: asked.clone() });
            }
            true
        }
    };
    if moving || intent == Intent::StartLab {
        // How the variants of learners who have not started this lab are chosen.
        if options.variant.is_some() {
            record.variant = options.variant.clone();
        } else if options.seed.is_some() {
            record.seed = options.seed;
            record.variant = None;
        }
        if record.variant.is_none() && record.seed.is_none() {
            record.seed = Some(clock_seed());
        }
        record.lab = options.lab.clone();
    } else {
        let shown = |v: Option<String>| v.unwrap_or_else(|| "none".into());
        same(
            Recorded::Seed,
            options.seed.as_ref(),
            shown(record.seed.map(|s| s.to_string())),
            options.seed == record.seed,
        )?;
        same(
            Recorded::Variant,
            options.variant.as_ref(),
            shown(record.variant.clone()),
            options.variant == record.variant,
        )?;
    }
    Ok(record)
}

/// Gives every learner a record of the class's lab (pending, its variant chosen now) when it
/// has none: the variant is fixed from here on.
fn record_lab(record: &mut ClassRecord, bundle: &lab::loader::Bundle) {
    let lab = bundle.lab.id.value.clone();
    let (variant, seed) = (record.variant.clone(), record.seed);
    for (index, learner) in record.learners.iter_mut().enumerate() {
        learner.lab_mut(&lab, || {
            variant
                .clone()
                .or_else(|| seed.and_then(|seed| variant_for_learner(&bundle.lab, seed, index as u32)))
        });
    }
}

/// `class up` and `class start`: see [`up`] and [`start_lab`].
fn change(options: &UpOptions, intent: Intent) -> Result<Summary> {
    check_options(options)?;
    if let Some(lab) = &options.lab {
        load_lab(&options.labs, lab, options.variant.as_deref())?;
    }
    let dir = &options.dir;
    let fresh = !dir.join(record::CLASS_FILE).exists();
    if fresh && intent == Intent::StartLab {
        return Err(Error::NoClass(dir.clone()));
    }
    let lock = record::lock(dir, intent.command())?;
    let planned = match record::read_if_any(dir) {
        Ok(None) if intent == Intent::StartLab => Err(Error::NoClass(dir.clone())),
        Ok(None) => new_record(options),
        Ok(Some(existing)) => reconcile(existing, options, intent),
        Err(error) => Err(error),
    };
    let mut record = match planned {
        Ok(record) => record,
        Err(error) => {
            if fresh {
                // Bad input leaves nothing behind: not even the lock of a class never made.
                drop(lock);
                let _ = std::fs::remove_file(dir.join(record::LOCK_FILE));
                let _ = std::fs::remove_dir(dir);
            }
            return Err(error);
        }
    };
    if record.layout == record::Layout::Flat {
        if !hosting::serving_processes(&record, dir).is_empty() {
            return Err(Error::OlderClassRunning(dir.clone()));
        }
        record::nest(dir, &mut record)?;
    }
    let bundle = record.lab.as_deref().map(|lab| load_lab(&options.labs, lab, None)).transpose()?;
    if let Some(bundle) = &bundle {
        record_lab(&mut record, bundle);
    }
    // Every learner is recorded before any starts: an interrupted `class up` leaves nothing
    // unrecorded, and `class down` finds every process.
    record::write(dir, &record)?;
    let runtime = runtime()?;
    let (interrupt, interrupted) = watch::channel(false);
    let learners = runtime.block_on(async {
        let listener = tokio::spawn(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = interrupt.send(true);
            }
        });
        let learners = bring_up(dir, &mut record, bundle.as_ref(), options.lang, interrupted).await;
        listener.abort();
        learners
    })?;
    drop(lock);
    Ok(Summary { dir: dir.clone(), lab: record.lab.clone(), learners })
}

/// Starts every learner that is down, records the ports, writes the kubeconfigs, then starts
/// the lab where it was not started. On Ctrl-C, the learners this call started are stopped.
async fn bring_up(
    dir: &Path,
    record: &mut ClassRecord,
    bundle: Option<&lab::loader::Bundle>,
    lang: Lang,
    interrupted: watch::Receiver<bool>,
) -> Result<Vec<LearnerOutcome>> {
    let sims = start_sims(dir, record, &interrupted).await?;
    record_ports(record, dir);
    record::write(dir, record)?;
    let handed_out = write_kubeconfigs(record, dir)?;
    let started_here = |sims: &[(String, SimOutcome)]| -> Vec<String> {
        sims.iter().filter(|(_, s)| matches!(s, SimOutcome::Started)).map(|(n, _)| n.clone()).collect()
    };
    if *interrupted.borrow() {
        return Err(Error::Interrupted { stopped: stop_started(dir, record, &started_here(&sims)).await });
    }
    let mut labs: Vec<Option<LabOutcome>> = record.learners.iter().map(|_| None).collect();
    if let Some(bundle) = bundle {
        let up: Vec<bool> =
            sims.iter().map(|(_, s)| matches!(s, SimOutcome::Started | SimOutcome::AlreadyUp)).collect();
        let mut waiting = interrupted.clone();
        tokio::select! {
            outcomes = start_labs(dir, record, bundle, lang, &up) => labs = outcomes,
            _ = waiting.wait_for(|stop| *stop) => {
                return Err(Error::Interrupted { stopped: stop_started(dir, record, &started_here(&sims)).await });
            }
        }
        let lab = &bundle.lab.id.value;
        for (learner, outcome) in record.learners.iter_mut().zip(&labs) {
            let entry = learner.lab_mut(lab, || None);
            match outcome {
                Some(LabOutcome::Started | LabOutcome::FoundStarted) => {
                    entry.start = LabStart::Started { at: Some(super::now_rfc3339()) }
                }
                Some(LabOutcome::Failed(error)) => {
                    entry.start = LabStart::Failed { at: super::now_rfc3339(), reason: error.to_string() }
                }
                _ => {}
            }
        }
        record::write(dir, record)?;
    }
    Ok(sims
        .into_iter()
        .zip(labs)
        .map(|((name, sim), lab)| {
            let server = handed_out.iter().find(|(n, _)| *n == name).map(|(_, s)| s.clone());
            LearnerOutcome { name, server, sim, lab }
        })
        .collect())
}

/// Stops the learners `names` (those this command started), after Ctrl-C; how many.
async fn stop_started(dir: &Path, record: &ClassRecord, names: &[String]) -> usize {
    let mut pids: Vec<u32> = Vec::new();
    for name in names {
        if let hosting::SimState::Up { pid, .. } = hosting::sim_state(&record.sim_dir(dir, name)) {
            pids.push(pid);
        }
    }
    if record.processes == ProcessModel::Shared
        && let Some(pid) = record.shared_pid
    {
        pids.push(pid);
    }
    pids.sort_unstable();
    pids.dedup();
    let _ = hosting::stop_processes(&pids).await;
    hosting::clear_run_files(record, dir, names);
    names.len()
}

/// Records the port of every learner that has none yet, from its running server's endpoint.
fn record_ports(record: &mut ClassRecord, dir: &Path) {
    for index in 0..record.learners.len() {
        if record.learners[index].port.is_some() {
            continue;
        }
        let name = record.learners[index].name.clone();
        if let hosting::SimState::Up { endpoint: Some(endpoint), .. } =
            hosting::sim_state(&record.sim_dir(dir, &name))
        {
            record.learners[index].port = hosting::endpoint_port(&endpoint);
        }
    }
}

/// Starts every learner whose simulator is down (a few at once); each learner's outcome, in
/// order. After Ctrl-C no further learner is started (those starting finish first, so none is
/// missed when the started ones are stopped).
async fn start_sims(
    dir: &Path,
    record: &mut ClassRecord,
    interrupted: &watch::Receiver<bool>,
) -> Result<Vec<(String, SimOutcome)>> {
    let names = record.names();
    match record.processes {
        ProcessModel::PerLearner => {
            let record = &*record;
            let outcomes = futures::stream::iter(names)
                .map(|name| async move {
                    let outcome = match hosting::sim_state(&record.sim_dir(dir, &name)) {
                        hosting::SimState::Up { .. } => SimOutcome::AlreadyUp,
                        _ if *interrupted.borrow() => SimOutcome::Untouched,
                        _ => match hosting::start_learner(record, dir, &name).await {
                            Ok(_) => SimOutcome::Started,
                            Err(error) => SimOutcome::Failed(Box::new(error)),
                        },
                    };
                    (name, outcome)
                })
                .buffered(STARTS_AT_ONCE)
                .collect()
                .await;
            Ok(outcomes)
        }
        ProcessModel::Shared => {
            if let Some(pid) = record.shared_pid
                && hosting::is_shared_server(pid)
            {
                return Ok(names.into_iter().map(|name| (name, SimOutcome::AlreadyUp)).collect());
            }
            start_shared(dir, record, interrupted).await
        }
    }
}

/// Spawns the shared process (recorded at once) and waits for each learner to answer.
async fn start_shared(
    dir: &Path,
    record: &mut ClassRecord,
    interrupted: &watch::Receiver<bool>,
) -> Result<Vec<(String, SimOutcome)>> {
    record.shared_pid = Some(hosting::spawn_shared(dir)?);
    record::write(dir, record)?;
    let log = hosting::shared_log(dir);
    let mut outcomes = Vec::new();
    for name in record.names() {
        let outcome = if *interrupted.borrow() {
            SimOutcome::Untouched
        } else {
            match hosting::wait_until_served(&record.sim_dir(dir, &name), &name, &log).await {
                Ok(_) => SimOutcome::Started,
                Err(error) => SimOutcome::Failed(Box::new(error)),
            }
        };
        outcomes.push((name, outcome));
    }
    Ok(outcomes)
}

/// Starts the lab in every learner that is `up` and has not started it (all at once: each
/// start mostly waits for its own cluster's rollout); each learner's outcome, in order.
async fn start_labs(
    dir: &Path,
    record: &ClassRecord,
    bundle: &lab::loader::Bundle,
    lang: Lang,
    up: &[bool],
) -> Vec<Option<LabOutcome>> {
    let lab = &bundle.lab.id.value;
    futures::future::join_all(record.learners.iter().zip(up).map(|(learner, up)| async move {
        let entry = learner.lab(lab)?;
        Some(match (&entry.start, up) {
            (LabStart::Started { .. }, _) => LabOutcome::AlreadyStarted,
            (_, false) => LabOutcome::LearnerDown,
            (LabStart::Pending | LabStart::Failed { .. }, true) => {
                match start_lab_in(dir, &learner.name, bundle, entry.variant.clone(), lang).await {
                    Ok(outcome) => outcome,
                    Err(error) => LabOutcome::Failed(Box::new(error)),
                }
            }
        })
    }))
    .await
}

/// Starts `bundle` in learner `name`'s cluster, through the instructor's kubeconfig (the
/// address this host reaches), unless the cluster shows it started completely already.
async fn start_lab_in(
    dir: &Path,
    name: &str,
    bundle: &lab::loader::Bundle,
    variant: Option<String>,
    lang: Lang,
) -> Result<LabOutcome> {
    let engine_error =
        |source: engine::Error| Error::Engine { learner: name.to_string(), source: Box::new(source) };
    let cluster =
        engine::cluster::connect(&instructor_target(dir, name)).await.map_err(|e| engine_error(e.into()))?;
    let inventory =
        engine::inventory::load(&cluster.client, &bundle.lab.id.value).await.map_err(engine_error)?;
    if inventory.is_some_and(|i| i.progress == engine::inventory::Progress::Complete) {
        return Ok(LabOutcome::FoundStarted);
    }
    let start = engine::start::StartOptions { variant, seed: None, yes: true, hosted: true };
    engine::start::start(&cluster, bundle, lang, &start).await.map_err(engine_error)?;
    Ok(LabOutcome::Started)
}

/// The lock of an existing class (no class: nothing is made, not even the lock file).
fn lock_class(dir: &Path, command: &str) -> Result<record::ClassLock> {
    if !dir.join(record::CLASS_FILE).exists() {
        return Err(Error::NoClass(dir.to_path_buf()));
    }
    record::lock(dir, command)
}

/// The learners `names` stands for (`all`: every learner), each one known.
fn resolve_names(record: &ClassRecord, names: &[String]) -> Result<Vec<String>> {
    if names.is_empty() {
        return Err(Error::NoLearnerNamed);
    }
    if names.iter().any(|n| n == "all") {
        return Ok(record.names());
    }
    let mut resolved = Vec::new();
    for name in names {
        if record.learner(name).is_none() {
            return Err(Error::UnknownLearner { name: name.clone(), known: record.names() });
        }
        if !resolved.contains(name) {
            resolved.push(name.clone());
        }
    }
    Ok(resolved)
}

/// `class restart LEARNER…`: stops the named learners' simulators (when running: a hung one
/// too) and starts them again on their recorded ports; their clusters, labs and kubeconfigs stay
/// as they were. With `--processes shared` the one process serving every learner is restarted.
pub fn restart(dir: &Path, names: &[String]) -> Result<Summary> {
    let lock = lock_class(dir, "class restart")?;
    let mut record = record::read(dir)?;
    let names = resolve_names(&record, names)?;
    let runtime = runtime()?;
    let outcomes = runtime.block_on(async {
        match record.processes {
            ProcessModel::PerLearner => {
                let mut pids = Vec::new();
                for name in &names {
                    if let hosting::SimState::Up { pid, .. } = hosting::sim_state(&record.sim_dir(dir, name))
                    {
                        pids.push(pid);
                    }
                }
                hosting::stop_processes(&pids).await?;
                hosting::clear_run_files(&record, dir, &names);
                let record = &record;
                Ok::<_, Error>(
                    futures::stream::iter(names.clone())
                        .map(|name| async move {
                            let outcome = match hosting::start_learner(record, dir, &name).await {
                                Ok(_) => SimOutcome::Restarted,
                                Err(error) => SimOutcome::Failed(Box::new(error)),
                            };
                            (name, outcome)
                        })
                        .buffered(STARTS_AT_ONCE)
                        .collect::<Vec<_>>()
                        .await,
                )
            }
            ProcessModel::Shared => {
                let pids: Vec<u32> =
                    hosting::serving_processes(&record, dir).into_iter().map(|(pid, _)| pid).collect();
                hosting::stop_processes(&pids).await?;
                hosting::clear_run_files(&record, dir, &record.names());
                let (_, never) = watch::channel(false);
                let outcomes = start_shared(dir, &mut record, &never).await?;
                Ok(outcomes
                    .into_iter()
                    .map(|(name, outcome)| match outcome {
                        SimOutcome::Started => (name, SimOutcome::Restarted),
                        other => (name, other),
                    })
                    .collect())
            }
        }
    })?;
    record_ports(&mut record, dir);
    record::write(dir, &record)?;
    let handed_out = write_kubeconfigs(&record, dir)?;
    drop(lock);
    let learners = outcomes
        .into_iter()
        .map(|(name, sim)| {
            let server = handed_out.iter().find(|(n, _)| *n == name).map(|(_, s)| s.clone());
            LearnerOutcome { name, server, sim, lab: None }
        })
        .collect();
    Ok(Summary { dir: dir.to_path_buf(), lab: record.lab.clone(), learners })
}

/// `class reset LEARNER…`: puts the class's lab in the named learners' clusters back to what its
/// start left (their own variant, the breakage applied again, fresh facts, no answers), as
/// `lab-runner reset` then `start` would, recorded as started now.
pub fn reset(dir: &Path, names: &[String], labs: &LabSource, lang: Lang) -> Result<Summary> {
    let lock = lock_class(dir, "class reset")?;
    let mut record = record::read(dir)?;
    let names = resolve_names(&record, names)?;
    let lab = record.lab.clone().ok_or_else(|| Error::NoLab(dir.to_path_buf()))?;
    let bundle = load_lab(labs, &lab, None)?;
    let runtime = runtime()?;
    let outcomes = runtime.block_on(futures::future::join_all(names.iter().map(|name| {
        let variant = record.learner(name).and_then(|l| l.lab(&lab)).and_then(|l| l.variant.clone());
        let bundle = &bundle;
        let record = &record;
        async move {
            let outcome = match reset_in(dir, record, name, bundle, variant, lang).await {
                Ok(()) => LabOutcome::Reset,
                Err(error) => LabOutcome::Failed(Box::new(error)),
            };
            (name.clone(), outcome)
        }
    })));
    for (name, outcome) in &outcomes {
        let learner = record.learner_mut(name).expect("resolved names are the record's");
        let entry = learner.lab_mut(&lab, || None);
        if let LabOutcome::Reset = outcome {
            entry.start = LabStart::Started { at: Some(super::now_rfc3339()) };
        }
    }
    record::write(dir, &record)?;
    drop(lock);
    let learners = outcomes
        .into_iter()
        .map(|(name, lab)| {
            let server = super::host_endpoint(&record, dir, &name)
                .map(|endpoint| super::learner_server(&endpoint, record.listen, &record.tls_sans));
            LearnerOutcome { name, server, sim: SimOutcome::Untouched, lab: Some(lab) }
        })
        .collect();
    Ok(Summary { dir: dir.to_path_buf(), lab: Some(lab), learners })
}

/// Resets then starts `bundle` in learner `name`'s cluster with its recorded variant.
async fn reset_in(
    dir: &Path,
    record: &ClassRecord,
    name: &str,
    bundle: &lab::loader::Bundle,
    variant: Option<String>,
    lang: Lang,
) -> Result<()> {
    if !matches!(hosting::sim_state(&record.sim_dir(dir, name)), hosting::SimState::Up { .. }) {
        return Err(Error::LearnerDown(name.to_string()));
    }
    let engine_error =
        |source: engine::Error| Error::Engine { learner: name.to_string(), source: Box::new(source) };
    let cluster =
        engine::cluster::connect(&instructor_target(dir, name)).await.map_err(|e| engine_error(e.into()))?;
    let asked = engine::reset::ResetOptions { variant: variant.clone(), ..Default::default() };
    let planned = engine::reset::load_plan_to(&cluster, bundle, &asked).await.map_err(engine_error)?;
    let variant = variant.or_else(|| planned.variant.clone());
    engine::reset::execute(&cluster, bundle, planned, lang).await.map_err(engine_error)?;
    let start = engine::start::StartOptions { variant, seed: None, yes: true, hosted: true };
    engine::start::start(&cluster, bundle, lang, &start).await.map_err(engine_error)?;
    Ok(())
}

/// `class down`: stops every learner at once (SIGTERM to every process, then waits for all);
/// `purge` also deletes the class directory's contents.
pub fn down(dir: &Path, purge: bool) -> Result<Stopped> {
    let lock = lock_class(dir, "class down")?;
    let record = record::read(dir)?;
    let processes = hosting::serving_processes(&record, dir);
    let pids: Vec<u32> = processes.iter().map(|(pid, _)| *pid).collect();
    let runtime =
        tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(Error::Runtime)?;
    runtime.block_on(hosting::stop_processes(&pids))?;
    let names = record.names();
    hosting::clear_run_files(&record, dir, &names);
    let learners = names
        .into_iter()
        .map(|name| {
            let pid = processes.iter().find(|(_, served)| served.contains(&name)).map(|(pid, _)| *pid);
            (name, pid)
        })
        .collect();
    if purge {
        let remove = |path: std::path::PathBuf, result: std::io::Result<()>| match result {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(Error::File { path, reason: crate::i18n::outside::cause(&e) })
            }
            _ => Ok(()),
        };
        for name in record.names() {
            let path = dir.join(&name);
            remove(path.clone(), std::fs::remove_dir_all(&path))?;
        }
        for file in [KUBECONFIG_FILE, record::CLASS_FILE, super::board::MEMORY_FILE, "serve.log"] {
            let path = dir.join(file);
            remove(path.clone(), std::fs::remove_file(&path))?;
        }
        drop(lock);
        let _ = std::fs::remove_file(dir.join(record::LOCK_FILE));
        // The directory itself goes when nothing else is in it.
        let _ = std::fs::remove_dir(dir);
    }
    Ok(Stopped { learners, purged: purge })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::HasExitCode as _;

    fn options(learners: Option<u32>, listen: &str) -> UpOptions {
        UpOptions {
            dir: "/unused".into(),
            learners,
            lab: None,
            variant: None,
            seed: None,
            listen: Some(listen.parse().unwrap()),
            tls_sans: vec![],
            labs: LabSource::BuiltIn,
            lang: Lang::En,
            processes: None,
        }
    }

    #[test]
    fn bad_counts_and_port_ranges_are_bad_input() {
        for (learners, listen) in
            [(0, "127.0.0.1:0"), (super::super::MAX_LEARNERS + 1, "127.0.0.1:0"), (3, "127.0.0.1:65534")]
        {
            let error = check_options(&options(Some(learners), listen)).unwrap_err();
            assert_eq!(error.exit_code(), crate::exit::BAD_INPUT, "{error}");
        }
        assert!(check_options(&options(Some(3), "127.0.0.1:0")).is_ok());
        let error = check_options(&options(Some(1), "0.0.0.0:0")).unwrap_err();
        assert!(matches!(error, Error::NeedsTlsSan(_)), "{error}");
        let named = UpOptions { tls_sans: vec!["class.example".into()], ..options(Some(1), "0.0.0.0:0") };
        assert!(check_options(&named).is_ok());
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let error = new_record(&options(Some(1), &format!("127.0.0.1:{port}"))).unwrap_err();
        assert!(matches!(error, Error::PortInUse { .. }), "{error}");
        assert_eq!(error.exit_code(), crate::exit::BAD_INPUT);
    }

    #[test]
    fn a_new_class_records_every_learner_and_its_port() {
        let record = new_record(&options(Some(3), "127.0.0.1:0")).unwrap();
        let ports: Vec<Option<u16>> = record.learners.iter().map(|l| l.port).collect();
        assert_eq!(ports, [None, None, None], "each learner's first start picks one");
        assert_eq!(record.names(), ["learner-01", "learner-02", "learner-03"]);
        let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let fixed = new_record(&options(Some(2), &format!("127.0.0.1:{free}"))).unwrap();
        assert_eq!(fixed.learners[1].port, Some(free + 1));
        let error = new_record(&UpOptions { learners: None, ..options(None, "127.0.0.1:0") }).unwrap_err();
        assert!(matches!(error, Error::NeedsLearners(_)), "{error}");
    }

    #[test]
    fn a_re_up_must_agree_with_the_record_and_may_only_add_learners() {
        let record = new_record(&options(Some(2), "127.0.0.1:0")).unwrap();
        let grown = reconcile(record.clone(), &options(Some(4), "127.0.0.1:0"), Intent::Up).unwrap();
        assert_eq!(grown.learners.len(), 4);
        let error = reconcile(record.clone(), &options(Some(1), "127.0.0.1:0"), Intent::Up).unwrap_err();
        assert!(matches!(error, Error::FewerLearners { recorded: 2, asked: 1 }), "{error}");
        let error = reconcile(record.clone(), &options(None, "10.0.0.1:0"), Intent::Up).unwrap_err();
        assert!(matches!(error, Error::Differs { option: Recorded::Listen, .. }), "{error}");
        let shared = UpOptions { processes: Some(ProcessModel::Shared), ..options(None, "127.0.0.1:0") };
        assert!(matches!(reconcile(record.clone(), &shared, Intent::Up), Err(Error::Differs { .. })));

        // A class without a lab takes one; a class with one keeps it unless `class start` moves it.
        let with_lab = UpOptions { lab: Some("stuck-rollout".into()), ..options(None, "127.0.0.1:0") };
        let started = reconcile(record, &with_lab, Intent::Up).unwrap();
        assert_eq!(started.lab.as_deref(), Some("stuck-rollout"));
        assert!(started.seed.is_some(), "a seed is chosen and recorded");
        let other = UpOptions { lab: Some("gpu-sharing".into()), ..options(None, "127.0.0.1:0") };
        let error = reconcile(started.clone(), &other, Intent::Up).unwrap_err();
        assert!(matches!(error, Error::OtherLab { .. }), "{error}");
        assert!(error.to_string().contains("class start gpu-sharing"), "{error}");
        let moved = reconcile(started.clone(), &other, Intent::StartLab).unwrap();
        assert_eq!(moved.lab.as_deref(), Some("gpu-sharing"));
        let reseeded = UpOptions { seed: Some(started.seed.unwrap() + 1), ..with_lab };
        assert!(matches!(
            reconcile(started, &reseeded, Intent::Up),
            Err(Error::Differs { option: Recorded::Seed, .. })
        ));
    }

    #[test]
    fn each_learner_gets_its_variant_once() {
        let bundle = lab::loader::find(&LabSource::BuiltIn, "stuck-rollout").unwrap();
        let mut record = new_record(&UpOptions {
            lab: Some("stuck-rollout".into()),
            seed: Some(7),
            ..options(Some(3), "127.0.0.1:0")
        })
        .unwrap();
        record_lab(&mut record, &bundle);
        let variants: Vec<Option<String>> =
            record.learners.iter().map(|l| l.lab("stuck-rollout").unwrap().variant.clone()).collect();
        assert!(variants.iter().all(Option::is_some));
        assert!(variants[0] != variants[1] && variants[1] != variants[2], "{variants:?}");
        // Recorded once: another seed later changes nobody's.
        record.seed = Some(8);
        record_lab(&mut record, &bundle);
        let again: Vec<Option<String>> =
            record.learners.iter().map(|l| l.lab("stuck-rollout").unwrap().variant.clone()).collect();
        assert_eq!(again, variants);
    }

    #[test]
    fn learners_are_named_or_all() {
        let record = new_record(&options(Some(3), "127.0.0.1:0")).unwrap();
        assert_eq!(resolve_names(&record, &["all".into()]).unwrap().len(), 3);
        assert_eq!(
            resolve_names(&record, &["learner-02".into(), "learner-02".into()]).unwrap(),
            ["learner-02"]
        );
        assert!(matches!(resolve_names(&record, &[]), Err(Error::NoLearnerNamed)));
        let error = resolve_names(&record, &["learner-9".into()]).unwrap_err();
        assert!(error.to_string().contains("learner-01, learner-02, learner-03"), "{error}");
    }
}
