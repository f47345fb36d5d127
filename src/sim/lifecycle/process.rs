//! A simulator managed from outside its process: `up`, `down`, `status`, pid files, and the
//! kubeconfig for an address other than the one the server wrote (a published container port).

use std::{path::Path, time::Duration};

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use super::{
    ControlPlane, Error, LOG_FILE, PID_FILE, POLL, RUN_FILE, Result, RunRecord, START_TIMEOUT, STOP_TIMEOUT,
    ServeOptions, TopologySource, ensure_writable,
};
use crate::sim::{
    auth::{ADMIN_TOKEN_FILE, VIEWER_TOKEN_FILE},
    kubeconfig::{self, Access},
    resources,
    tls::CA_CERT_FILE,
};
use crate::{
    i18n::{Message, outside},
    msg,
    session::Lang,
    tr,
};

/// What the pid file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PidState {
    /// No pid file.
    Absent,
    /// The process lives.
    Running(u32),
    /// The process is gone.
    Stale(u32),
}

/// Whether process `pid` exists (and is not a zombie waiting to be reaped).
pub fn process_alive(pid: u32) -> bool {
    let Some(raw) = i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw) else {
        return false;
    };
    match rustix::process::test_kill_process(raw) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::PERM => {}
        Err(_) => return false,
    }
    // A zombie still answers kill(0); /proc/<pid>/stat's third field says `Z`.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next()) != Some("Z"),
        Err(_) => true,
    }
}

/// Reads the pid file of `dir`.
pub fn pid_state(dir: &Path) -> Result<PidState> {
    let path = dir.join(PID_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(PidState::Absent),
        Err(source) => return Err(Error::StateFile { path, source }),
    };
    // An unreadable pid file names no live process: treat it as stale (pid 0).
    let pid: u32 = text.trim().parse().unwrap_or(0);
    Ok(if pid != 0 && process_alive(pid) { PidState::Running(pid) } else { PidState::Stale(pid) })
}

/// Removes the pid file and run record (missing files are fine).
pub fn remove_run_files(dir: &Path) {
    for file in [PID_FILE, RUN_FILE] {
        let _ = std::fs::remove_file(dir.join(file));
    }
}

/// Reads the run record of `dir`, if any.
pub fn run_record(dir: &Path) -> Option<RunRecord> {
    let text = std::fs::read_to_string(dir.join(RUN_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// What `up` reports.
#[derive(Debug)]
pub struct Started {
    /// The server's run record.
    pub record: RunRecord,
    /// A stale pid file that was removed first, if any.
    pub removed_stale_pid: Option<u32>,
}

/// Starts `sim serve` in the background (its own process group, output to `serve.log`) and
/// waits until it answers `/version` over TLS with the admin token.
pub async fn up(options: &ServeOptions) -> Result<Started> {
    let dir = &options.state_dir;
    ensure_writable(dir)?;
    let removed_stale_pid = match pid_state(dir)? {
        PidState::Running(pid) => {
            let endpoint = run_record(dir).map(|r| r.endpoint);
            return Err(Error::AlreadyRunning { dir: dir.clone(), pid, endpoint });
        }
        PidState::Stale(pid) => {
            remove_run_files(dir);
            Some(pid)
        }
        PidState::Absent => None,
    };
    // Bad topology input is reported here, before a process is started.
    crate::sim::controllers::config::Config::from_topology(&options.topology.load()?)?;

    let program =
        std::env::current_exe().map_err(|source| Error::Spawn { program: "lab-runner".into(), source })?;
    let log_path = dir.join(LOG_FILE);
    let log = crate::sim::owner_only::create_file(&log_path)
        .map_err(|source| Error::StateFile { path: log_path.clone(), source })?;
    let log_err = log.try_clone().map_err(|source| Error::StateFile { path: log_path.clone(), source })?;
    let mut command = serve_command(&program, options);
    command.stdin(std::process::Stdio::null()).stdout(log).stderr(log_err);
    #[cfg(unix)]
    {
        // Its own process group: a Ctrl-C in the shell that ran `sim up` does not reach it.
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
    }
    let mut child = command.spawn().map_err(|source| Error::Spawn { program: program.clone(), source })?;

    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) =
            child.try_wait().map_err(|source| Error::Spawn { program: program.clone(), source })?
        {
            let log = std::fs::read_to_string(&log_path).unwrap_or_default();
            let message = log.lines().rev().find_map(|line| line.strip_prefix("error: ")).map(str::to_string);
            let code = status.code().and_then(|c| u8::try_from(c).ok()).filter(|c| *c != 0);
            return Err(Error::ServerExited { message, status: status.to_string(), log: log_path, code });
        }
        if let Some(record) = run_record(dir).filter(|r| r.pid == child.id())
            && answers_version(&record.kubeconfig).await
        {
            return Ok(Started { record, removed_stale_pid });
        }
        if tokio::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            remove_run_files(dir);
            return Err(Error::StartTimedOut { log: log_path });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// The `sim serve` command line `up` runs for `options` (`-v`/`-vv` as given to `up`: the
/// served process installs its own log subscriber from them, writing to `serve.log`).
fn serve_command(program: &Path, options: &ServeOptions) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    // Its log is in English whatever the learner reads: `up` finds the server's `error:` line
    // there and shows it, quoted, in the learner's language.
    command.env("LAB_RUNNER_LANG", "en");
    command.args(["sim", "serve", "--state-dir"]).arg(&options.state_dir);
    match &options.topology {
        TopologySource::BuiltIn => {}
        TopologySource::File(path) => {
            command.arg("--topology").arg(path);
        }
        TopologySource::Generated(n) => {
            command.args(["--nodes", &n.to_string()]);
        }
    }
    command.args(["--listen", &options.listen.to_string()]);
    for name in &options.tls_sans {
        command.args(["--tls-san", name]);
    }
    command.args(["--speed", &options.speed.to_string()]);
    if options.control_plane == ControlPlane::ApiOnly {
        command.arg("--api-only");
    }
    if options.audit == super::Audit::Off {
        command.arg("--no-audit-log");
    }
    if options.verbosity > 0 {
        command.arg(format!("-{}", "v".repeat(usize::from(options.verbosity))));
    }
    command
}

/// Whether the server behind `kubeconfig` answers `GET /version` (TLS verified with its CA,
/// the admin token sent).
pub async fn answers_version(kubeconfig: &Path) -> bool {
    let Ok(config) = kube::config::Kubeconfig::read_from(kubeconfig) else { return false };
    let Ok(config) = kube::Config::from_custom_kubeconfig(config, &Default::default()).await else {
        return false;
    };
    let Ok(client) = kube::Client::try_from(config) else { return false };
    tokio::time::timeout(Duration::from_secs(2), client.apiserver_version()).await.is_ok_and(|r| r.is_ok())
}

/// The pid of the simulator running for `dir`; a stale pid file is removed and reported.
fn running_pid(dir: &Path) -> Result<u32> {
    match pid_state(dir)? {
        PidState::Absent => Err(Error::NotRunning { dir: dir.to_path_buf() }),
        PidState::Stale(pid) => {
            remove_run_files(dir);
            Err(Error::StalePidFile { dir: dir.to_path_buf(), pid })
        }
        PidState::Running(pid) => Ok(pid),
    }
}

/// Stops the simulator of `dir`: SIGTERM, then waits for the process to exit.
pub async fn down(dir: &Path) -> Result<u32> {
    let pid = running_pid(dir)?;
    let raw =
        i32::try_from(pid).ok().and_then(rustix::process::Pid::from_raw).expect("a live pid is positive");
    rustix::process::kill_process(raw, rustix::process::Signal::TERM)
        .map_err(|e| Error::Signal { pid, source: e.into() })?;
    let deadline = tokio::time::Instant::now() + STOP_TIMEOUT;
    while process_alive(pid) {
        if tokio::time::Instant::now() >= deadline {
            return Err(Error::StopTimedOut { pid });
        }
        tokio::time::sleep(POLL).await;
    }
    remove_run_files(dir);
    Ok(pid)
}

/// What `sim status` shows.
#[derive(Debug, Clone)]
pub struct Status {
    /// The run record.
    pub record: RunRecord,
    /// How long it has run.
    pub uptime: SignedDuration,
    /// Objects per type (`nodes`, `daemonsets.apps`, …).
    pub counts: Vec<(String, u64)>,
    /// The store's revision.
    pub revision: u64,
}

/// The status of the simulator of `dir`. Counts come from the running server through its API
/// (one list per served type, with the admin token), not from the database file: opening the
/// store from a second process would compete with the server's writes.
pub async fn status(dir: &Path) -> Result<Status> {
    let pid = running_pid(dir)?;
    let record = run_record(dir).ok_or_else(|| Error::StateFile {
        path: dir.join(RUN_FILE),
        source: std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("missing, although process {pid} runs"),
        ),
    })?;
    let started: Timestamp = record.started.parse().unwrap_or_else(|_| Timestamp::now());
    let uptime = Timestamp::now().duration_since(started);
    let (counts, revision) = object_counts(&record).await?;
    Ok(Status { record, uptime, counts, revision })
}

/// Lists every stored built-in type through the API: objects per group-resource (types with
/// none left out, sorted) and the newest list resourceVersion. A stored type is watchable
/// (`componentstatuses` are listed but computed) and is listed once, at its first served
/// version (an autoscaling/v1 HPA is the v2 one).
async fn object_counts(record: &RunRecord) -> Result<(Vec<(String, u64)>, u64)> {
    let unreachable =
        |reason: Message| Error::Unreachable { pid: record.pid, endpoint: record.endpoint.clone(), reason };
    let kubeconfig = kube::config::Kubeconfig::read_from(&record.kubeconfig)
        .map_err(|e| unreachable(outside::cause(&e)))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .map_err(|e| unreachable(outside::cause(&e)))?;
    let client = kube::Client::try_from(config).map_err(|e| unreachable(outside::cause(&e)))?;
    let mut counts = Vec::new();
    let mut revision = 0;
    let mut seen = std::collections::BTreeSet::new();
    let stored = resources::built_in()
        .into_iter()
        .filter(|rt| rt.verbs.iter().any(|v| v == "watch"))
        .filter(|rt| seen.insert(rt.group_resource()));
    for rt in stored {
        let request = axum::http::Request::get(format!("{}/{}", rt.group_version_path(), rt.plural))
            .body(Vec::new())
            .expect("a list request builds");
        let list: serde_json::Value = tokio::time::timeout(Duration::from_secs(10), client.request(request))
            .await
            .map_err(|_| unreachable(msg!("error-no-answer", seconds = 10)))?
            .map_err(|e| unreachable(outside::cause(&e)))?;
        let items = list["items"].as_array().map_or(0, Vec::len) as u64;
        if items > 0 {
            counts.push((rt.group_resource(), items));
        }
        let list_revision =
            list["metadata"]["resourceVersion"].as_str().and_then(|v| v.parse().ok()).unwrap_or(0);
        revision = revision.max(list_revision);
    }
    counts.sort();
    Ok((counts, revision))
}

/// `sim status`'s text in `lang`: a heading, the server's facts under labels in one column,
/// then the objects per group-resource.
pub fn render_status(status: &Status, lang: Lang) -> String {
    use unicode_width::UnicodeWidthStr;
    let record = &status.record;
    let uptime = std::time::Duration::from_secs(u64::try_from(status.uptime.as_secs()).unwrap_or(0));
    let uptime = crate::i18n::duration(uptime).render(lang);
    let rows = [
        (tr!(lang, "sim-status-pid"), record.pid.to_string()),
        (tr!(lang, "sim-status-endpoint"), record.endpoint.clone()),
        (tr!(lang, "sim-status-uptime"), uptime),
        (tr!(lang, "sim-status-kubeconfig"), record.kubeconfig.display().to_string()),
        (tr!(lang, "sim-status-revision"), status.revision.to_string()),
    ];
    let width = rows.iter().map(|(label, _)| label.width()).max().unwrap_or(0);
    let mut out = tr!(lang, "sim-status-running") + "\n";
    for (label, value) in rows {
        let pad = " ".repeat(width - label.width());
        out.push_str(&format!("  {label}{pad}  {value}\n"));
    }
    out.push_str(&(tr!(lang, "sim-status-objects") + "\n"));
    let width = status.counts.iter().map(|(kind, _)| kind.len()).max().unwrap_or(0);
    for (kind, count) in &status.counts {
        out.push_str(&format!("  {kind:width$}  {count}\n"));
    }
    if status.counts.is_empty() {
        out.push_str(&format!("  {}\n", tr!(lang, "sim-status-no-objects")));
    }
    out
}

/// The admin kubeconfig of the simulator whose state is in `dir`, pointing at `server` (e.g.
/// `https://127.0.0.1:PORT` where a container publishes it), or at the endpoint of the running
/// server when `server` is `None`. Reads the CA certificate and tokens only: it works while the
/// server runs (from `docker exec`) and after it stopped, and never creates state.
pub fn kubeconfig_for(dir: &Path, server: Option<&str>) -> Result<String> {
    let read = |file: &str| match std::fs::read_to_string(dir.join(file)) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(Error::NoState { dir: dir.to_path_buf() }),
        Err(source) => Err(Error::StateFile { path: dir.join(file), source }),
    };
    let (ca_pem, admin, viewer) = (read(CA_CERT_FILE)?, read(ADMIN_TOKEN_FILE)?, read(VIEWER_TOKEN_FILE)?);
    let endpoint = match server {
        Some(server) => server.to_string(),
        None => match pid_state(dir)? {
            PidState::Running(_) => run_record(dir)
                .map(|record| record.endpoint)
                .ok_or_else(|| Error::NotRunning { dir: dir.to_path_buf() })?,
            PidState::Absent | PidState::Stale(_) => {
                return Err(Error::NotRunning { dir: dir.to_path_buf() });
            }
        },
    };
    Ok(kubeconfig::render(&Access {
        server: &endpoint,
        ca_pem: &ca_pem,
        admin_token: admin.trim(),
        viewer_token: viewer.trim(),
    }))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn the_served_process_gets_the_options_and_verbosity_of_up() {
        let mut options = ServeOptions {
            state_dir: PathBuf::from("/state"),
            topology: TopologySource::Generated(3),
            listen: "127.0.0.1:6443".parse().unwrap(),
            tls_sans: vec!["sim.local".into()],
            speed: 2.0,
            control_plane: ControlPlane::ApiOnly,
            verbosity: 0,
            audit: super::super::Audit::Off,
        };
        let args = |options: &ServeOptions| -> Vec<String> {
            let command = serve_command(Path::new("/bin/lab-runner"), options);
            command.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
        };
        let quiet = args(&options);
        assert_eq!(
            quiet,
            [
                "sim",
                "serve",
                "--state-dir",
                "/state",
                "--nodes",
                "3",
                "--listen",
                "127.0.0.1:6443",
                "--tls-san",
                "sim.local",
                "--speed",
                "2",
                "--api-only",
                "--no-audit-log"
            ]
        );
        options.verbosity = 2;
        assert_eq!(args(&options).last().map(String::as_str), Some("-vv"));
        assert_eq!(args(&options)[..quiet.len()], quiet[..]);
    }

    #[test]
    fn pid_files_are_absent_running_or_stale() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Absent);
        std::fs::write(dir.path().join(PID_FILE), format!("{}\n", std::process::id())).unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Running(std::process::id()));
        std::fs::write(dir.path().join(PID_FILE), "99999999\n").unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Stale(99_999_999));
        std::fs::write(dir.path().join(PID_FILE), "garbage").unwrap();
        assert_eq!(pid_state(dir.path()).unwrap(), PidState::Stale(0));
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        assert!(matches!(runtime.block_on(status(dir.path())), Err(Error::StalePidFile { pid: 0, .. })));
        assert!(!dir.path().join(PID_FILE).exists());
    }

    #[test]
    fn status_text() {
        let status = Status {
            record: RunRecord {
                pid: 4242,
                endpoint: "https://127.0.0.1:6443".to_string(),
                started: "2026-01-01T00:00:00Z".to_string(),
                kubeconfig: PathBuf::from("/state/kubeconfig"),
            },
            uptime: SignedDuration::from_secs(303),
            counts: vec![("daemonsets.apps".to_string(), 2), ("nodes".to_string(), 5)],
            revision: 57,
        };
        insta::assert_snapshot!(render_status(&status, Lang::En), @r"
        simulator running
          pid         4242
          endpoint    https://127.0.0.1:6443
          uptime      5m3s
          kubeconfig  /state/kubeconfig
          revision    57
        objects
          daemonsets.apps  2
          nodes            5
        ");
        insta::assert_snapshot!(render_status(&status, Lang::Ja), @r"
        シミュレーター稼働中
          pid             4242
          エンドポイント  https://127.0.0.1:6443
          稼働時間        5 分 3 秒
          kubeconfig      /state/kubeconfig
          リビジョン      57
        オブジェクト
          daemonsets.apps  2
          nodes            5
        ");
    }

    #[test]
    fn the_kubeconfig_for_another_server_needs_state_not_a_running_server() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            kubeconfig_for(dir.path(), Some("https://127.0.0.1:1")),
            Err(Error::NoState { .. })
        ));
        crate::sim::tls::TlsMaterial::load_or_create(dir.path(), &["127.0.0.1".to_string()]).unwrap();
        crate::sim::auth::Tokens::load_or_create(dir.path()).unwrap();
        let text = kubeconfig_for(dir.path(), Some("https://127.0.0.1:32768")).unwrap();
        let config = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(
            config.clusters[0].cluster.as_ref().unwrap().server.as_deref(),
            Some("https://127.0.0.1:32768")
        );
        // Without --server it names the running server's endpoint, and none runs here.
        assert!(matches!(kubeconfig_for(dir.path(), None), Err(Error::NotRunning { .. })));
    }
}
