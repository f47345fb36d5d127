//! `demo`: a lab end to end on a fresh embedded simulator: `start`, `status`, the reference solution, `check`.

use super::{Result, check, say, selftest::solution_shell, start, status, temp_sim::TempSimulator};
use crate::{
    engine::{
        self,
        check::Observations,
        selftest::{Shell, ShellOutput},
    },
    i18n::Localized,
    lab,
    session::{Lang, Session},
    tr,
};

/// Simulated delays (image pulls, readiness) pass this many times faster in a demo, slow enough
/// to watch.
const DEMO_SPEED: f64 = 10.0;

/// What `demo` is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The lab id.
    pub lab: String,
    /// The variant to run (default: as `start` picks).
    pub variant: Option<String>,
}

/// Runs `demo <lab>`: returns the exit code of the final `check` (0 when the reference solution
/// passes every task).
pub fn run(session: &Session, options: &Options) -> Result<u8> {
    let lang = session.lang;
    let bundle = lab::loader::find(&session.labs, &options.lab)?;
    let runtime = super::runtime()?;
    let simulator = TempSimulator::start(&runtime, "demo", DEMO_SPEED, lang)?;
    let at = tr!(lang, "demo-simulator-at", endpoint = simulator.endpoint(), speed = DEMO_SPEED.to_string());
    say(&format!("== {at}\n"))?;
    let outcome = run_lab(&runtime, session, options, &bundle, &simulator);
    simulator.stop(&runtime, lang);
    outcome
}

/// The demo's steps on the temporary simulator, each command run through its own options.
fn run_lab(
    runtime: &tokio::runtime::Runtime,
    session: &Session,
    options: &Options,
    bundle: &lab::loader::Bundle,
    simulator: &TempSimulator,
) -> Result<u8> {
    let (labs, lang) = (&session.labs, session.lang);
    let target = simulator.target();
    let id = bundle.lab.id.value.clone();
    let connect = || async { engine::cluster::connect(&target).await.map_err(engine::Error::from) };

    say(&format!("== lab-runner start {id}\n"))?;
    let start = start::Options {
        lab: id.clone(),
        variant: options.variant.clone(),
        seed: None,
        reveal: true,
        yes: true,
    };
    runtime.block_on(async { start::on(connect().await?, labs, lang, &start).await })?;

    say(&format!("== lab-runner status {id}\n"))?;
    let status = status::Options::Lab { lab: id.clone(), instructor: false };
    runtime.block_on(async { status::on(connect().await?, labs, lang, &status).await })?;

    say(&format!("== {}\n", tr!(lang, "demo-reference-solution")))?;
    let shell = solution_shell(Some(&simulator.kubeconfig()), labs, ShellOutput::Echo, lang);
    for task in bundle.lab.tasks_in_needs_order() {
        say(&format!("-- {}: {}\n", task.id.value, task.title.get(lang)))?;
        for command in &task.solution {
            say(&format!("$ {command}\n"))?;
            let on_stderr = |line: String| eprintln!("{line}");
            let ran = runtime.block_on(run_showing_elapsed(&shell, command, lang, ELAPSED_EVERY, &on_stderr));
            if ran.exit != engine::selftest::CommandExit::Success {
                say(&format!("[{}]\n", ran.exit.message().render(lang)))?;
            }
        }
    }

    say(&format!("== lab-runner check {id}\n"))?;
    let check = check::Options {
        lab: id,
        format: super::Format::Human,
        help: engine::check::Help::default(),
        mode: check::Mode::Report(Observations::Once),
    };
    runtime
        .block_on(async { check::on(connect().await?, labs, lang, &check, Observations::Once, None).await })
}

/// How often a solution command that is still running says how long it has run.
const ELAPSED_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs one solution command; one that takes long (the ci-wait step waits for a rollout that
/// never finishes) says through `say`, every `every`, how long it has run, so the demo is not
/// silent, and when it ends after that, how long it took.
async fn run_showing_elapsed(
    shell: &Shell,
    command: &str,
    lang: Lang,
    every: std::time::Duration,
    say: &dyn Fn(String),
) -> engine::selftest::CommandRun {
    let began = tokio::time::Instant::now();
    let run = shell.run(command);
    tokio::pin!(run);
    let mut ticks = tokio::time::interval_at(began + every, every);
    loop {
        tokio::select! {
            ran = &mut run => {
                if began.elapsed() >= every {
                    say(tr!(lang, "demo-command-took", seconds = began.elapsed().as_secs()));
                }
                return ran;
            }
            _ = ticks.tick() => {
                say(tr!(lang, "demo-command-running", seconds = began.elapsed().as_secs()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::{sync::Mutex, time::Duration};

    use super::*;

    /// A command that outlasts the interval is reported while it runs and when it ends; a quick
    /// one says nothing.
    #[tokio::test]
    async fn a_long_solution_command_says_how_long_it_has_run() {
        let shell = Shell::new(None, ShellOutput::Capture);
        let said = Mutex::new(Vec::new());
        let say = |line: String| said.lock().unwrap().push(line);
        let every = Duration::from_millis(100);
        let ran = run_showing_elapsed(&shell, "sleep 0.35", Lang::En, every, &say).await;
        assert_eq!(ran.exit, engine::selftest::CommandExit::Success);
        let lines = said.lock().unwrap().clone();
        let running = lines.iter().filter(|l| l.starts_with("… still running after")).count();
        assert!(running >= 2, "{lines:?}");
        assert_eq!(lines.last().map(String::as_str), Some("… it took 0s"), "{lines:?}");
        said.lock().unwrap().clear();
        run_showing_elapsed(&shell, "true", Lang::Ja, every, &say).await;
        assert!(said.lock().unwrap().is_empty());
    }
}
