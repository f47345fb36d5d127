//! The learners' simulators as processes: started on their recorded ports (one process each, or one for all), stopped all at once.

use std::{
    net::SocketAddr,
    path::{Path, PathBuf},
    time::Duration,
};

use super::{
    Error, Result,
    record::{ClassRecord, ProcessModel},
};
use crate::sim::lifecycle::{self, ControlPlane, PidState, RunRecord, ServeOptions, TopologySource};

/// How long the learners' processes may take to stop after SIGTERM (together: they stop in
/// parallel, each within the simulator's grace for open watches).
const STOP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a shared process may take until a learner answers.
const SERVE_TIMEOUT: Duration = Duration::from_secs(120);
/// How often a process is looked at while waiting.
const POLL: Duration = Duration::from_millis(50);

/// Whether a learner's simulator runs, from its pid file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimState {
    /// It runs, in this process, answering at this endpoint (as written by the server).
    Up {
        /// The serving process (with `--processes shared`, the one every learner shares).
        pid: u32,
        /// The server's own endpoint (`https://127.0.0.1:PORT`).
        endpoint: Option<String>,
    },
    /// It was stopped (`class down`), or never started.
    Stopped,
    /// Its process is gone without stopping (killed, crashed, the host rebooted).
    Gone {
        /// The pid its pid file names.
        pid: u32,
    },
}

/// The state of the simulator in `sim_dir`.
pub fn sim_state(sim_dir: &Path) -> SimState {
    match lifecycle::pid_state(sim_dir) {
        Ok(PidState::Running(pid)) => {
            SimState::Up { pid, endpoint: lifecycle::run_record(sim_dir).map(|r| r.endpoint) }
        }
        Ok(PidState::Stale(pid)) => SimState::Gone { pid },
        Ok(PidState::Absent) | Err(_) => SimState::Stopped,
    }
}

/// The port in a server's endpoint (`https://127.0.0.1:40001` → 40001).
pub fn endpoint_port(endpoint: &str) -> Option<u16> {
    endpoint.rsplit_once(':').and_then(|(_, port)| port.trim_end_matches('/').parse().ok())
}

/// What `sim serve` options learner `name` gets: its state directory, the class's address and
/// names, and its recorded port (0 until its first start picked one).
pub fn serve_options(record: &ClassRecord, dir: &Path, name: &str) -> ServeOptions {
    let port = record.learner(name).and_then(|l| l.port).unwrap_or(0);
    ServeOptions {
        state_dir: record.sim_dir(dir, name),
        topology: TopologySource::BuiltIn,
        listen: SocketAddr::new(record.listen.ip(), port),
        tls_sans: record.tls_sans.clone(),
        speed: 1.0,
        control_plane: ControlPlane::Running,
        // A class's servers log warnings only (to each learner's serve.log).
        verbosity: 0,
    }
}

fn sim_error(learner: &str) -> impl FnOnce(lifecycle::Error) -> Error + '_ {
    move |source| Error::Sim { learner: learner.to_string(), source: Box::new(source) }
}

/// Starts learner `name`'s own simulator process and waits until it answers.
pub async fn start_learner(record: &ClassRecord, dir: &Path, name: &str) -> Result<RunRecord> {
    let options = serve_options(record, dir, name);
    Ok(lifecycle::up(&options).await.map_err(sim_error(name))?.record)
}

/// Starts `class serve-shared` in the background (its own process group, output to
/// `DIR/serve.log`): every learner of the record in one process. Returns its pid.
pub fn spawn_shared(dir: &Path) -> Result<u32> {
    let file_error = |path: &Path, e: std::io::Error| Error::File {
        path: path.to_path_buf(),
        reason: crate::i18n::outside::cause(&e),
    };
    let log_path = dir.join("serve.log");
    let log = crate::sim::owner_only::create_file(&log_path).map_err(|e| file_error(&log_path, e))?;
    let log_err = log.try_clone().map_err(|e| file_error(&log_path, e))?;
    let program = std::env::current_exe().map_err(|e| file_error(Path::new("lab-runner"), e))?;
    let mut command = std::process::Command::new(program);
    command.args(["class", "serve-shared", "--state-dir"]).arg(dir);
    command.stdin(std::process::Stdio::null()).stdout(log).stderr(log_err);
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command.spawn().map_err(|e| file_error(&log_path, e))?;
    Ok(child.id())
}

/// Waits until the learner in `sim_dir` answers with its admin kubeconfig.
pub async fn wait_until_served(sim_dir: &Path, name: &str, log: &Path) -> Result<RunRecord> {
    let deadline = tokio::time::Instant::now() + SERVE_TIMEOUT;
    loop {
        if let Some(record) = lifecycle::run_record(sim_dir)
            && lifecycle::answers_version(&record.kubeconfig).await
        {
            return Ok(record);
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(sim_error(name)(lifecycle::Error::StartTimedOut { log: log.to_path_buf() }));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether `pid` is a live `class serve-shared` process (a recorded pid may since have been
/// reused by an unrelated process, which must not be signalled).
pub fn is_shared_server(pid: u32) -> bool {
    lifecycle::process_alive(pid)
        && std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|cmdline| cmdline.windows(b"serve-shared".len()).any(|w| w == b"serve-shared"))
}

/// The processes serving the class now: each with the learners it serves (one per learner, or
/// one for all with `--processes shared`, also found by the recorded pid before its learners
/// wrote their pid files).
pub fn serving_processes(record: &ClassRecord, dir: &Path) -> Vec<(u32, Vec<String>)> {
    let mut processes: Vec<(u32, Vec<String>)> = Vec::new();
    for name in record.names() {
        if let SimState::Up { pid, .. } = sim_state(&record.sim_dir(dir, &name)) {
            match processes.iter_mut().find(|(p, _)| *p == pid) {
                Some((_, names)) => names.push(name),
                None => processes.push((pid, vec![name])),
            }
        }
    }
    if record.processes == ProcessModel::Shared
        && let Some(pid) = record.shared_pid
        && !processes.iter().any(|(p, _)| *p == pid)
        && is_shared_server(pid)
    {
        processes.push((pid, Vec::new()));
    }
    processes
}

/// Sends SIGTERM to every process at once, then waits until all have exited: a class stops in
/// the time its slowest learner takes, not in the sum of them.
pub async fn stop_processes(pids: &[u32]) -> Result<()> {
    let mut waiting = Vec::new();
    for &pid in pids {
        let raw =
            i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw).expect("a live pid is positive");
        match rustix::process::kill_process(raw, rustix::process::Signal::TERM) {
            Ok(()) => waiting.push(pid),
            Err(e) if e == rustix::io::Errno::SRCH => {}
            Err(e) => {
                return Err(sim_error("class")(lifecycle::Error::Signal { pid, source: e.into() }));
            }
        }
    }
    let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
    while let Some(&pid) = waiting.iter().find(|pid| lifecycle::process_alive(**pid)) {
        if tokio::time::Instant::now() >= deadline {
            return Err(sim_error("class")(lifecycle::Error::StopTimedOut { pid }));
        }
        tokio::time::sleep(POLL).await;
        waiting.retain(|pid| lifecycle::process_alive(*pid));
    }
    Ok(())
}

/// Removes the run files a killed learner left (a stopped server removes its own).
pub fn clear_run_files(record: &ClassRecord, dir: &Path, names: &[String]) {
    for name in names {
        let sim_dir = record.sim_dir(dir, name);
        if !matches!(sim_state(&sim_dir), SimState::Up { .. }) {
            lifecycle::remove_run_files(&sim_dir);
        }
    }
}

/// `class serve-shared` (what `class up --processes shared` runs in the background): every
/// learner of the class in `dir` in this one process, each with its own store, CA, tokens,
/// clock and recorded port, until SIGTERM or Ctrl-C.
pub fn serve_shared(dir: &Path) -> Result<()> {
    let record = super::record::read(dir)?;
    let runtime = super::runtime()?;
    runtime.block_on(async {
        let (stop, stopped) = tokio::sync::watch::channel(false);
        let serving = record.names().into_iter().map(|name| {
            let options = serve_options(&record, dir, &name);
            let mut stopped = stopped.clone();
            let shutdown: std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>> =
                Box::pin(async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                });
            async move { lifecycle::serve(&options, Some(shutdown), |_| {}).await.map_err(sim_error(&name)) }
        });
        let all = futures::future::try_join_all(serving);
        tokio::pin!(all);
        #[cfg(unix)]
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(Error::Runtime)?;
        #[cfg(unix)]
        let terminated = term.recv();
        #[cfg(not(unix))]
        let terminated = std::future::pending::<Option<()>>();
        tokio::select! {
            served = &mut all => return served.map(|_| ()),
            _ = tokio::signal::ctrl_c() => {}
            _ = terminated => {}
        }
        // Every learner stops and removes its run files before the process exits.
        let _ = stop.send(true);
        all.await.map(|_| ())
    })
}

/// The shared process's log.
pub fn shared_log(dir: &Path) -> PathBuf {
    dir.join("serve.log")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_read_from_endpoints() {
        assert_eq!(endpoint_port("https://127.0.0.1:40001"), Some(40001));
        assert_eq!(endpoint_port("https://[::1]:6443/"), Some(6443));
        assert_eq!(endpoint_port("https://class.example"), None);
    }

    #[test]
    fn pid_files_say_stopped_up_or_gone() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(sim_state(dir.path()), SimState::Stopped);
        std::fs::write(dir.path().join(lifecycle::PID_FILE), format!("{}\n", std::process::id())).unwrap();
        assert!(matches!(sim_state(dir.path()), SimState::Up { endpoint: None, .. }));
        std::fs::write(dir.path().join(lifecycle::PID_FILE), "99999999\n").unwrap();
        assert_eq!(sim_state(dir.path()), SimState::Gone { pid: 99_999_999 });
    }

    #[tokio::test]
    async fn processes_stop_together() {
        let children: Vec<_> =
            (0..3).map(|_| std::process::Command::new("sleep").arg("60").spawn().unwrap()).collect();
        let pids: Vec<u32> = children.iter().map(std::process::Child::id).collect();
        // Reaped as they exit, as a learner's parent (init) reaps it.
        let reaper = std::thread::spawn(move || {
            for mut child in children {
                let _ = child.wait();
            }
        });
        let started = std::time::Instant::now();
        stop_processes(&pids).await.unwrap();
        reaper.join().unwrap();
        assert!(pids.iter().all(|pid| !lifecycle::process_alive(*pid)));
        eprintln!("3 processes stopped in {:?}", started.elapsed());
    }
}
