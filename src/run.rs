//! Runs a resolved [`Session`](crate::cli::Session) and maps every outcome to a documented exit code.

use std::{io::Write, process::ExitCode};

use clap::CommandFactory;

use crate::{
    cli::{self, Cli, Command, Session},
    engine::{self, check::Help, cluster::Cluster},
    exit, lab, report, session, tr,
};

/// Everything a command can fail with, as the binary reports it.
#[derive(Debug, thiserror::Error, miette::Diagnostic)]
pub enum Error {
    /// The command line could not be resolved.
    #[error(transparent)]
    Cli(#[from] cli::Error),
    /// The command exists but its capability has not landed in this build.
    #[error("`lab-runner {command}` is not available in this build yet: {waiting_for}")]
    NotYetAvailable {
        /// The command as typed.
        command: &'static str,
        /// What it waits for.
        waiting_for: &'static str,
    },
    /// A `class` command failed.
    #[error(transparent)]
    Class(#[from] crate::class::Error),
    /// A `sim` command failed.
    #[error(transparent)]
    Sim(#[from] crate::sim::lifecycle::Error),
    /// A lab bundle could not be found or is invalid.
    #[error(transparent)]
    Lab(#[from] lab::loader::Error),
    /// Lint could not read the bundles it was given.
    #[error(transparent)]
    Lint(#[from] engine::lint::Error),
    /// An engine command failed (cluster, API, wait, preflight).
    #[error(transparent)]
    Engine(#[from] engine::Error),
    /// A report could not be rendered.
    #[error(transparent)]
    Report(#[from] report::Error),
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(#[from] std::io::Error),
}

impl Error {
    /// The documented exit code for this error (DESIGN §6).
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Cli(_) | Error::NotYetAvailable { .. } => exit::BAD_INPUT,
            Error::Lab(_) | Error::Lint(_) => exit::BAD_INPUT,
            Error::Output(_) => exit::BAD_INPUT,
            Error::Sim(error) => error.exit_code(),
            Error::Class(error) => error.exit_code(),
            Error::Engine(error) => error.exit_code(),
            Error::Report(_) => exit::BAD_INPUT,
        }
    }

    /// The error's one line in `lang`: the engine's, the loader's and lint's errors are catalog
    /// messages; the rest (command line, simulator, class) as their own text, which quotes what
    /// failed.
    pub fn message(&self, lang: session::Lang) -> String {
        use crate::i18n::Localized;
        match self {
            Error::Engine(error) => error.message().render(lang),
            Error::Lab(error) => error.message().render(lang),
            Error::Lint(error) => error.message().render(lang),
            other => other.to_string(),
        }
    }

    /// The error as printed on stderr: one `error:` line (its frame in `lang`), then any bundle
    /// problems with their file:line:col and code snippets.
    pub fn render(&self, lang: session::Lang) -> String {
        let mut out = tr!(lang, "error-line", message = self.message(lang));
        out.push('\n');
        if let Error::Lab(
            lab::loader::Error::Invalid { problems, .. } | lab::loader::Error::InvalidCourse { problems, .. },
        ) = self
        {
            for problem in problems {
                out.push('\n');
                out.push_str(&problem.render(miette::GraphicalTheme::default(), lang));
            }
        }
        out
    }
}

/// Resolves the command line, runs it, prints any error, and returns the exit code.
pub fn main(cli: Cli) -> ExitCode {
    let lang = cli::lang_of(&cli, cli::locale().as_deref());
    let outcome = Session::resolve(cli).map_err(Error::from).and_then(|session| {
        install_tracing(session.verbosity);
        execute(session)
    });
    match outcome {
        Ok(code) => exit::code(code),
        // A closed pipe (`lab-runner labs list | head`) is not a failure, as in ripgrep.
        Err(Error::Output(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => exit::code(exit::OK),
        Err(error) => {
            let code = error.exit_code();
            eprint!("{}", error.render(lang));
            exit::code(code)
        }
    }
}

/// `-v` and `-vv`: log lines (the simulator's controllers' warnings among them) on stderr, ours
/// at info and at debug level; `RUST_LOG`, when set, is the filter instead (with or without `-v`).
/// `sim serve`'s stderr is its log: `sim up` writes it into the state directory's `serve.log`,
/// and the detached server inherits `RUST_LOG`. With neither, nothing is installed and stderr
/// carries only what commands print.
fn install_tracing(verbosity: u8) {
    let filter = match (tracing_subscriber::EnvFilter::try_from_default_env(), verbosity) {
        (Ok(from_env), _) => from_env,
        (Err(_), 0) => return,
        // Other crates' lines (rustls' handshakes at debug) stay one level quieter than ours.
        (Err(_), 1) => tracing_subscriber::EnvFilter::new("warn,lab_runner=info"),
        (Err(_), _) => tracing_subscriber::EnvFilter::new("info,lab_runner=debug"),
    };
    // A second install (a test calling `main` twice) keeps the first; that is not an error.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Runs one command and returns its exit code.
pub fn execute(session: Session) -> Result<u8, Error> {
    match session.command {
        Command::Completions(args) => {
            let mut out = std::io::stdout().lock();
            clap_complete::generate(args.shell, &mut Cli::command(), "lab-runner", &mut out);
            out.flush()?;
            Ok(exit::OK)
        }
        Command::Start(args) => {
            engine_command(&session.cluster, |cluster| start(cluster, &session.labs, session.lang, &args))
        }
        Command::Check(args) if args.watch => engine_command(&session.cluster, |cluster| {
            check_watch(cluster, &session.labs, session.lang, &args, session.check_durations)
        }),
        Command::Check(args) if !args.contexts.is_empty() => {
            class_check(&session.cluster, &session.labs, session.lang, &args, session.check_durations)
        }
        Command::Check(args) => engine_command(&session.cluster, |cluster| {
            check(cluster, &session.labs, session.lang, &args, session.check_durations)
        }),
        Command::Answer(args) => {
            engine_command(&session.cluster, |cluster| answer(cluster, &session.labs, session.lang, &args))
        }
        Command::Reset(args) => {
            // An unknown stage is bad input, reported before the cluster is contacted.
            let bundle = lab::loader::find(&session.labs, &args.lab)?;
            engine::reset::stages_up_to(&bundle.lab, args.to_stage.as_deref())?;
            engine_command(&session.cluster, |cluster| reset(cluster, &session.labs, session.lang, &args))
        }
        Command::Status(args) => {
            engine_command(&session.cluster, |cluster| status(cluster, &session.labs, session.lang, &args))
        }
        Command::Selftest(args) => {
            crate::demo::selftest(&session.labs, &session.cluster, session.lang, &args)
        }
        Command::Demo(args) => crate::demo::demo(&session.labs, session.lang, &args),
        Command::Lint(args) => lint(&args.paths, &session.labs, session.lang),
        Command::Labs(cli::LabsCommand::List) => {
            let bundles = lab::loader::load_all(&session.labs)?;
            let course = lab::loader::course(&session.labs)?;
            print(&lab::show::list(&bundles, course.as_ref(), &session.labs, session.lang))
        }
        Command::Labs(cli::LabsCommand::Show { lab, variant }) => {
            let bundle = lab::loader::find(&session.labs, &lab)?;
            let mut text = lab::show::show(&bundle, session.lang);
            if let Some(wanted) = variant {
                let Some(variant) = bundle.lab.variant(&wanted) else {
                    let known: Vec<&str> = bundle.lab.variants.iter().map(|v| v.id.value.as_str()).collect();
                    let known = if known.is_empty() { "-".to_string() } else { known.join(", ") };
                    return Err(Error::Engine(engine::Error::BadInput(crate::msg!(
                        "error-unknown-variant",
                        lab = &lab,
                        variant = format!("{wanted:?}"),
                        known = known
                    ))));
                };
                text.push_str(&lab::show::show_variant(&bundle, variant, session.lang));
            }
            print(&text)
        }
        Command::Class(command) => class(command, &session.cluster, &session.labs, session.lang),
        Command::Sim(command) => {
            Ok(crate::sim_command::run_command(command, session.verbosity, session.lang)?)
        }
    }
}

fn print(text: &str) -> Result<u8, Error> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}

/// `class kubeconfig`: the merged kubeconfig on stdout or, private (0600), in `--output`.
fn class_kubeconfig(args: &cli::ClassKubeconfigArgs) -> Result<u8, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let merged = engine::class::merge(&args.inputs, &args.names).map_err(engine::Error::from)?;
    // JSON is YAML, and kubectl and kube read either.
    let text = serde_json::to_string_pretty(&merged).map_err(report::Error::from)? + "\n";
    match &args.output {
        None => print(&text),
        Some(path) => {
            let mut file =
                std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(path)?;
            file.write_all(text.as_bytes())?;
            Ok(exit::OK)
        }
    }
}

/// `lint`: warnings on stderr (they never change the exit code); every problem of the course file
/// and of every bundle on stderr and exit 2, or a one-line summary and 0.
fn lint(paths: &[std::path::PathBuf], source: &session::LabSource, lang: session::Lang) -> Result<u8, Error> {
    let course = engine::lint::lint_course(paths, source)?;
    let reports = engine::lint::lint(paths, source)?;
    let problems: usize = course.len() + reports.iter().map(|r| r.problems.len()).sum::<usize>();
    {
        let mut err = std::io::stderr().lock();
        for warning in reports.iter().flat_map(|r| &r.warnings) {
            writeln!(err, "{}", tr!(lang, "warning-line", message = warning.line(lang)))?;
        }
    }
    let labs = reports.len();
    if problems == 0 {
        let ids: Vec<&str> = reports.iter().filter_map(|r| r.lab.as_deref()).collect();
        let summary = if labs == 0 {
            tr!(lang, "lint-nothing")
        } else {
            tr!(lang, "lint-clean", count = labs, ids = ids.join(", "))
        };
        return print(&(summary + "\n"));
    }
    let mut err = std::io::stderr().lock();
    for problem in course.iter().chain(reports.iter().flat_map(|r| &r.problems)) {
        err.write_all(problem.render(miette::GraphicalTheme::default(), lang).as_bytes())?;
        err.write_all(b"\n")?;
    }
    let failing = reports.iter().filter(|r| !r.problems.is_empty()).count();
    let summary = match (course.is_empty(), failing) {
        (true, _) => tr!(lang, "lint-problems", problems = problems, failing = failing, labs = labs),
        (false, 0) => tr!(lang, "lint-problems-course", problems = problems),
        (false, _) => {
            tr!(lang, "lint-problems-course-and-labs", problems = problems, failing = failing, labs = labs)
        }
    };
    writeln!(err, "{summary}")?;
    Ok(exit::BAD_INPUT)
}

/// The class directory: `--state-dir`, else `class` beside the simulator's default directory.
fn class_dir(explicit: Option<std::path::PathBuf>) -> Result<std::path::PathBuf, Error> {
    match explicit {
        Some(dir) => Ok(dir),
        None => Ok(crate::sim::lifecycle::state_dir(None)?.with_file_name("class")),
    }
}

/// `class report`: one class report from a class, report files or the grade Job; exit 0 when
/// every learner passed, 1 otherwise (as `check --contexts`).
fn class_report(
    args: cli::ClassReportArgs,
    cluster: &session::ClusterTarget,
    labs: &session::LabSource,
    lang: session::Lang,
) -> Result<u8, Error> {
    use crate::class::{self as class, report as class_report};
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let graded = if let Some(job) = &args.job {
        let (namespace, name) = class_report::parse_job(job).map_err(class::Error::from)?;
        runtime.block_on(async {
            let connected = engine::cluster::connect(cluster).await.map_err(engine::Error::from)?;
            class_report::from_job(&connected, &namespace, &name, args.lab.as_deref(), lang)
                .await
                .map_err(|e| Error::Class(e.into()))
        })?
    } else if !args.files.is_empty() {
        class_report::from_files(&args.files, args.lab.as_deref()).map_err(class::Error::from)?
    } else {
        let dir = class_dir(args.state.state_dir)?;
        runtime.block_on(class_report::from_class(&dir, args.lab.as_deref(), labs, lang))?
    };
    match args.format {
        cli::Format::Human => print(&class_report::render_table(&graded, lang))?,
        cli::Format::Json => {
            print(&(serde_json::to_string_pretty(&graded).map_err(report::Error::from)? + "\n"))?
        }
        cli::Format::Junit => print(&report::class_junit(&graded)?)?,
    };
    Ok(if graded.passed { exit::OK } else { exit::CHECKS_FAILED })
}

/// `class up|status|down`.
fn class(
    command: cli::ClassCommand,
    cluster: &session::ClusterTarget,
    labs: &session::LabSource,
    lang: session::Lang,
) -> Result<u8, Error> {
    // One rustls provider for the whole process (kube's client uses ring).
    let _ = rustls::crypto::ring::default_provider().install_default();
    match command {
        cli::ClassCommand::Kubeconfig(args) => class_kubeconfig(&args),
        cli::ClassCommand::Up(args) => {
            let options = crate::class::UpOptions {
                dir: class_dir(args.state.state_dir)?,
                learners: args.learners,
                lab: args.lab,
                variant: args.variant,
                seed: args.seed,
                listen: args.listen.unwrap_or(crate::sim::lifecycle::DEFAULT_LISTEN),
                tls_sans: args.tls_sans,
                labs: labs.clone(),
                lang,
                processes: match args.processes {
                    cli::ProcessesArg::PerLearner => crate::class::ProcessModel::PerLearner,
                    cli::ProcessesArg::Shared => crate::class::ProcessModel::Shared,
                },
            };
            let started = crate::class::up(&options)?;
            let mut text = String::new();
            for (name, endpoint) in &started.learners {
                text += &format!("{name}  {endpoint}\n");
            }
            if let Some(lab) = &options.lab {
                text += &format!("started {lab} in {} learner(s)\n", started.learners.len());
            }
            text += &format!(
                "class kubeconfig (one context per learner): {}\nhand out: {}/learner-NN/kubeconfig\n",
                started.kubeconfig.display(),
                options.dir.display()
            );
            print(&text)
        }
        cli::ClassCommand::Status(args) => {
            let (record, lines) = crate::class::status(&class_dir(args.state_dir)?, labs, lang)?;
            print(&crate::class::render_status(&record, &lines))
        }
        cli::ClassCommand::Down(args) => {
            let dir = class_dir(args.state.state_dir)?;
            let stopped = crate::class::down(&dir, args.purge)?;
            let running = stopped.iter().filter(|(_, pid)| pid.is_some()).count();
            // With --processes shared one process serves every learner: counted once.
            let mut processes: Vec<u32> = stopped.iter().filter_map(|(_, pid)| *pid).collect();
            processes.sort_unstable();
            processes.dedup();
            let kept = if args.purge { "state purged" } else { "state kept" };
            print(&format!(
                "class stopped: {running} of {} learner(s) were running, in {} process(es); {kept}\n",
                stopped.len(),
                processes.len()
            ))
        }
        cli::ClassCommand::Report(args) => class_report(args, cluster, labs, lang),
        cli::ClassCommand::ServeShared(args) => {
            crate::class::serve_shared(&args.state_dir, args.learners, args.listen, &args.tls_sans)?;
            Ok(exit::OK)
        }
        cli::ClassCommand::Board(args) => {
            let source = if args.contexts.is_empty() {
                crate::class::BoardSource::Class { dir: class_dir(args.state.state_dir)?, lab: args.lab }
            } else {
                crate::class::BoardSource::Contexts {
                    kubeconfig: cluster.kubeconfig.clone(),
                    contexts: args.contexts,
                    lab: args.lab.expect("clap requires --lab with --contexts"),
                }
            };
            let options = crate::class::board::BoardOptions {
                kubeconfig: None,
                contexts: Vec::new(),
                listen: args.listen,
                retry: args.retry,
                stalled_after: args.stalled_after,
                lang,
            };
            crate::class::board(source, options, labs)?;
            Ok(exit::OK)
        }
    }
}

/// Runs an engine command on a fresh tokio runtime against the session's cluster.
fn engine_command<'a, F, Fut>(target: &'a session::ClusterTarget, command: F) -> Result<u8, Error>
where
    F: FnOnce(Cluster) -> Fut,
    Fut: std::future::Future<Output = Result<u8, Error>> + 'a,
{
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        let cluster = engine::cluster::connect(target).await.map_err(engine::Error::from)?;
        command(cluster).await
    })
}

/// `start`: apply the lab and print its briefing.
pub async fn start(
    cluster: Cluster,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::StartArgs,
) -> Result<u8, Error> {
    use std::io::IsTerminal;
    let bundle = lab::loader::find(labs, &args.lab)?;
    let mut options = engine::start::StartOptions {
        variant: args.variant.clone(),
        seed: args.seed,
        yes: args.yes,
        hosted: false,
    };
    let started = match engine::start::start(&cluster, &bundle, lang, &options).await {
        Err(engine::Error::VariantChange { lab, running, wanted }) if std::io::stdin().is_terminal() => {
            let prompt = if args.reveal {
                tr!(lang, "start-variant-prompt-revealed", lab = &lab, running = &running, wanted = &wanted)
            } else {
                tr!(lang, "start-variant-prompt", lab = &lab)
            };
            let mut err = std::io::stderr().lock();
            write!(err, "{prompt} ")?;
            err.flush()?;
            let mut line = String::new();
            std::io::stdin().read_line(&mut line)?;
            if !matches!(line.trim(), "y" | "Y" | "yes") {
                return Err(Error::Engine(engine::Error::BadInput(crate::msg!("start-cancelled"))));
            }
            options.yes = true;
            engine::start::start(&cluster, &bundle, lang, &options).await?
        }
        Err(engine::Error::VariantChange { lab, running, wanted }) if args.reveal => {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!(
                "start-variant-change-revealed",
                lab = &lab,
                running = &running,
                wanted = &wanted
            ))));
        }
        other => other?,
    };
    let lab = &bundle.lab.id.value;
    // The variant answers the `cause` quiz: named only to an instructor who asks.
    let done = match started.variant.filter(|_| args.reveal) {
        Some(variant) => {
            tr!(lang, "start-done-variant", lab = lab, variant = variant, count = started.applied)
        }
        None => tr!(lang, "start-done", lab = lab, count = started.applied),
    };
    print(&format!("{done}\n\n{}\n", started.briefing))
}

/// `check`: grade the lab and print the report; exit 1 unless every task passed.
pub async fn check(
    cluster: Cluster,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::CheckArgs,
    durations: cli::CheckDurations,
) -> Result<u8, Error> {
    let bundle = lab::loader::find(labs, &args.lab)?;
    let help = Help { hint: args.hint, reveal: args.reveal, details: args.details, alone: false };
    let report = engine::check::check_with(&cluster, &bundle, lang, help, observations(durations)).await?;
    print_report(&report, args.format, lang)?;
    Ok(if report.passed { exit::OK } else { exit::CHECKS_FAILED })
}

/// Once, or twice `--confirm DURATION` apart.
fn observations(durations: cli::CheckDurations) -> engine::check::Observations {
    match durations.confirm {
        Some(apart) => engine::check::Observations::Confirmed(apart),
        None => engine::check::Observations::Once,
    }
}

/// A check report on stdout in the chosen format.
fn print_report(report: &report::Report, format: cli::Format, lang: session::Lang) -> Result<(), Error> {
    match format {
        cli::Format::Human => {
            let mut out = anstream::stdout();
            out.write_all(report::human_in(report, true, lang).as_bytes())?;
            out.flush()?;
        }
        cli::Format::Json => {
            print(&report::json(report)?)?;
        }
        cli::Format::Junit => {
            print(&report::junit(report)?)?;
        }
    }
    Ok(())
}

/// `check --watch`: the live checklist on stderr (redrawn in place on a terminal, a line per
/// change otherwise), then the final report on stdout. Exit 0 when every task passed, 4 at
/// `--timeout`, and on Ctrl-C the final report's code.
pub async fn check_watch(
    cluster: Cluster,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::CheckArgs,
    durations: cli::CheckDurations,
) -> Result<u8, Error> {
    use std::io::IsTerminal;
    let bundle = lab::loader::find(labs, &args.lab)?;
    let help = Help { hint: args.hint, reveal: args.reveal, details: args.details, alone: false };
    let options = engine::watch::WatchOptions { timeout: durations.timeout, ..Default::default() };
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    let terminal = std::io::stderr().is_terminal();
    let styled = terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty());
    let mut live =
        terminal.then(|| report::live::Terminal::new(&bundle.lab.id.value, &cluster.context, lang));
    if live.is_none() {
        eprintln!("{}", tr!(lang, "watch-watching", lab = &bundle.lab.id.value, context = &cluster.context));
    }
    let watched =
        engine::watch::watch(&cluster, &bundle, lang, help, options, stop, |update| match &mut live {
            Some(terminal) => terminal.draw(update.checklist, &update.reconnecting, styled),
            None => {
                eprint!(
                    "{}",
                    report::live::change_lines(update.changes, update.checklist, update.elapsed, lang)
                );
                for (feed, reason) in &update.reconnecting {
                    eprintln!("{}", tr!(lang, "watch-reconnecting-note", feed = feed, reason = reason));
                }
            }
        })
        .await;
    if let Some(terminal) = live {
        terminal.finish();
    }
    let watched = watched?;
    let ending = match watched.ending {
        engine::watch::Ending::AllPassed => tr!(lang, "watch-all-pass"),
        engine::watch::Ending::Interrupted => tr!(lang, "watch-stopped"),
        engine::watch::Ending::TimedOut => {
            tr!(lang, "watch-timed-out", timeout = args.timeout.as_deref().unwrap_or(""))
        }
    };
    let regressed = watched.checklist.regressed();
    let evaluations = tr!(lang, "watch-evaluations", count = watched.checklist.evaluations());
    let seconds = watched.elapsed.as_secs();
    let ended = if regressed.is_empty() {
        tr!(lang, "watch-ended", seconds = seconds, evaluations = &evaluations, ending = &ending)
    } else {
        let tasks = regressed.join(", ");
        tr!(
            lang,
            "watch-ended-regressed",
            seconds = seconds,
            evaluations = &evaluations,
            ending = &ending,
            tasks = tasks
        )
    };
    eprintln!("{ended}");
    print_report(&watched.report, args.format, lang)?;
    Ok(match watched.ending {
        engine::watch::Ending::TimedOut => exit::TIMED_OUT,
        _ if watched.report.passed => exit::OK,
        _ => exit::CHECKS_FAILED,
    })
}

/// `answer`: check a quiz answer's domain and the attempts left, then store it in the inventory.
pub async fn answer(
    cluster: Cluster,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::AnswerArgs,
) -> Result<u8, Error> {
    let bundle = lab::loader::find(labs, &args.lab)?;
    let recorded = engine::answer::answer(&cluster, &bundle, &args.task, &args.value, lang).await?;
    print(&format!("{}\n", recorded.message(&args.lab, &args.task, lang)))
}

/// `reset`: print the plan, ask (unless `--yes`), and carry it out.
pub async fn reset(
    cluster: Cluster,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::ResetArgs,
) -> Result<u8, Error> {
    use std::io::IsTerminal;
    let bundle = lab::loader::find(labs, &args.lab)?;
    let planned = if args.remove {
        engine::reset::load_remove_plan(&cluster, &bundle).await?
    } else {
        let options = engine::reset::ResetOptions {
            to_stage: args.to_stage.clone(),
            variant: args.variant.clone(),
            seed: args.seed,
        };
        engine::reset::load_plan_to(&cluster, &bundle, &options).await?
    };
    let plan: String = planned.actions.iter().map(|s| format!("  {}\n", s.render(lang))).collect();
    if args.dry_run {
        return print(&format!("{}\n{plan}", tr!(lang, "reset-would", lab = &args.lab)));
    }
    if !args.yes {
        if !std::io::stdin().is_terminal() {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!(
                "reset-needs-yes",
                lab = &args.lab
            ))));
        }
        let mut err = std::io::stderr().lock();
        write!(err, "{}\n{plan}{} ", tr!(lang, "reset-will", lab = &args.lab), tr!(lang, "reset-proceed"))?;
        err.flush()?;
        let mut line = String::new();
        std::io::stdin().read_line(&mut line)?;
        if !matches!(line.trim(), "y" | "Y" | "yes") {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!("reset-cancelled"))));
        }
    }
    let done = engine::reset::execute(&cluster, &bundle, planned, lang).await?;
    let lines: String = done.iter().map(|s| format!("  {}\n", s.render(lang))).collect();
    print(&format!("{}\n{lines}", tr!(lang, "reset-done", lab = &args.lab)))
}

/// `status`: the split-generation view of the lab's DaemonSets (or one named).
pub async fn status(
    cluster: Cluster,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::StatusArgs,
) -> Result<u8, Error> {
    let mut header = String::new();
    let view = match (&args.daemonset, &args.lab) {
        (Some(text), _) => engine::status::View::daemon_set(engine::status::parse_daemonset(text)?),
        (None, Some(id)) => {
            let bundle = lab::loader::find(labs, id)?;
            if args.instructor {
                let inventory = engine::inventory::load(&cluster.client, id).await?;
                header = match inventory {
                    None => tr!(lang, "status-not-started", lab = id),
                    Some(inventory) => tr!(
                        lang,
                        "status-instructor",
                        lab = id,
                        variant = inventory.variant_in(&bundle.lab).as_deref().unwrap_or("-"),
                        stages = inventory.stages.join(", "),
                        facts = inventory.facts.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                } + "\n";
            }
            engine::status::view_of(&bundle.lab)
        }
        (None, None) => {
            return Err(Error::Engine(engine::Error::BadInput(crate::msg!("status-needs-target"))));
        }
    };
    // Half a start is no state to read: one line with the remedy, before the view.
    let incomplete = match &args.lab {
        Some(id) => {
            engine::inventory::load(&cluster.client, id).await?.and_then(|i| i.incomplete_start(lang))
        }
        None => None,
    };
    let text = engine::status::status(&cluster, &view, lang).await?;
    match incomplete {
        Some(line) => {
            print(&format!("{line}\n{header}{text}"))?;
            Ok(exit::CHECKS_FAILED)
        }
        None => print(&format!("{header}{text}")),
    }
}

/// `check --contexts`: every learner's cluster graded concurrently into one report; a learner
/// whose cluster cannot be reached is an ERROR row, not an abort.
fn class_check(
    cluster: &session::ClusterTarget,
    labs: &session::LabSource,
    lang: session::Lang,
    args: &cli::CheckArgs,
    durations: cli::CheckDurations,
) -> Result<u8, Error> {
    let bundle = lab::loader::find(labs, &args.lab)?;
    // A class is its learners: `all` leaves out the read-only viewer contexts, and a context
    // the kubeconfig does not have is bad input before any cluster is contacted.
    let kubeconfig = engine::cluster::read_kubeconfig(cluster).map_err(engine::Error::from)?;
    let contexts: Vec<String> = if args.contexts == ["all"] {
        kubeconfig
            .contexts
            .iter()
            .map(|c| c.name.clone())
            .filter(|name| !engine::class::is_viewer_context(name))
            .collect()
    } else {
        engine::cluster::require_contexts(cluster, &kubeconfig, &args.contexts)
            .map_err(engine::Error::from)?;
        args.contexts.clone()
    };
    let help = Help { hint: args.hint, reveal: args.reveal, details: args.details, alone: false };
    let observations = observations(durations);
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let outcomes = runtime.block_on(futures::future::join_all(contexts.iter().map(|context| {
        let target =
            session::ClusterTarget { kubeconfig: cluster.kubeconfig.clone(), context: Some(context.clone()) };
        let bundle = &bundle;
        async move {
            let graded = async {
                let cluster = engine::cluster::connect(&target).await?;
                engine::check::check_with(&cluster, bundle, lang, help, observations).await
            };
            (context.clone(), graded.await.map_err(|e| Error::from(e).message(lang)))
        }
    })));
    let class = report::ClassReport::new(&args.lab, outcomes);
    match args.format {
        cli::Format::Human => {
            let mut out = anstream::stdout();
            out.write_all(report::class_human(&class, true, lang).as_bytes())?;
            out.flush()?;
        }
        cli::Format::Json => {
            print(&(serde_json::to_string_pretty(&class).map_err(report::Error::from)? + "\n"))?;
        }
        cli::Format::Junit => {
            print(&report::class_junit(&class)?)?;
        }
    }
    Ok(if class.passed { exit::OK } else { exit::CHECKS_FAILED })
}
