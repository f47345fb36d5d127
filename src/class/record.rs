//! The class record `DIR/class.json` and the lock `DIR/class.lock`: the learners, where each listens, which labs each started.
//!
//! The record is the class's memory across `class up`/`down`, crashes and restarts: each
//! learner's name, port, and every lab started in it with its variant and when. Commands that
//! change the class hold the lock on the directory for as long as they run (a second one is
//! refused, naming the holder); every file is replaced atomically, so a reader (`class status`,
//! `class board`) sees the old record or the new one, never half of one.
//!
//! The directory (docs/classroom.md "The class directory"):
//!
//! ```text
//! DIR/class.json           this record
//! DIR/class.lock           who is changing the class now (pid, command, since)
//! DIR/kubeconfig           the instructor's: one context per learner
//! DIR/board.json           the board's memory: each learner's verdicts and when they last changed
//! DIR/learner-NN/kubeconfig  handed out: that learner's context only
//! DIR/learner-NN/sim/      that learner's simulator: store, CA, tokens, pid file, serve.log
//! ```

use std::{
    io::{Read as _, Seek as _, Write as _},
    net::SocketAddr,
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use super::{Error, Result};
use crate::sim::tls;

/// The class record inside the class directory.
pub const CLASS_FILE: &str = "class.json";
/// The lock file inside the class directory.
pub const LOCK_FILE: &str = "class.lock";
/// The simulator's state directory inside a learner's directory.
pub const SIM_DIR: &str = "sim";
/// The version of the record this build writes.
pub const RECORD_VERSION: u32 = 2;

/// How a class's simulators are hosted (docs/classroom.md has the measurements behind the default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProcessModel {
    /// One `sim serve` process per learner: the operating system isolates them (a crash or a
    /// runaway learner takes no other down).
    #[default]
    PerLearner,
    /// Every learner in one background process (`class serve-shared`), each still with its own
    /// store, CA, tokens, clock and port.
    Shared,
}

/// Where a learner's simulator keeps its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Layout {
    /// `DIR/learner-NN/sim/`, beside the handed-out `DIR/learner-NN/kubeconfig` (which the
    /// simulator, writing its own kubeconfig at every start, never touches).
    #[default]
    Nested,
    /// `DIR/learner-NN/` itself: a class recorded by an older lab-runner (record version 1).
    /// `class up` moves it to [`Layout::Nested`] once it is stopped.
    Flat,
}

/// The class record: what the class is, learner by learner.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClassRecord {
    /// [`RECORD_VERSION`].
    pub version: u32,
    /// The class's lab: the one `status`, `report` and `board` grade (the last one started).
    pub lab: Option<String>,
    /// `--seed` the learners' variants come from, unless `--variant` gives everyone one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// `--variant` every learner gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The address every learner listens on, with the first learner's port (learner N on
    /// PORT+N-1), or port 0 (each learner the port the kernel gave its first start).
    pub listen: SocketAddr,
    /// The names the learners' certificates carry; the first one is the server their
    /// kubeconfigs name when `listen` is not loopback.
    #[serde(default)]
    pub tls_sans: Vec<String>,
    /// One process per learner, or one for all.
    #[serde(default)]
    pub processes: ProcessModel,
    /// The process hosting every learner with [`ProcessModel::Shared`] (recorded as soon as it
    /// is spawned, so `class down` stops it even before its learners wrote their pid files).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_pid: Option<u32>,
    /// The learners, in order.
    pub learners: Vec<LearnerRecord>,
    /// Where the simulators' state is (not stored: it follows from the version read).
    #[serde(skip)]
    pub layout: Layout,
}

/// One learner of the class.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LearnerRecord {
    /// `learner-01` …: the name of its directory and of its kubeconfig context.
    pub name: String,
    /// The port it listens on: chosen when the class was created (`--listen IP:PORT`), or the
    /// one the kernel gave its first start; every later start uses it again, so a handed-out
    /// kubeconfig keeps working. `None` only until that first start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// The labs started in it, in the order they were started.
    #[serde(default)]
    pub labs: Vec<LabRecord>,
}

/// A lab in a learner's cluster.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LabRecord {
    /// The lab.
    pub lab: String,
    /// The variant chosen for this learner (fixed when recorded; a re-start keeps it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// Where its start stands.
    pub start: LabStart,
}

/// Where a learner's lab start stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum LabStart {
    /// Recorded, not yet started: the next `class up` starts it (unless the learner's cluster
    /// shows it started completely, which is then recorded instead).
    Pending,
    /// Started: never applied again by `class up` (`class reset` is the way back).
    Started {
        /// When (RFC 3339); `None` for a class recorded by an older lab-runner.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// The last attempt failed; the next `class up` tries again.
    Failed {
        /// When (RFC 3339).
        at: String,
        /// Why, on one line.
        reason: String,
    },
}

impl LearnerRecord {
    /// The record of `lab` in this learner, if any.
    pub fn lab(&self, lab: &str) -> Option<&LabRecord> {
        self.labs.iter().find(|l| l.lab == lab)
    }

    /// The record of `lab`, created as [`LabStart::Pending`] with `variant` when absent.
    pub fn lab_mut(&mut self, lab: &str, variant: impl FnOnce() -> Option<String>) -> &mut LabRecord {
        match self.labs.iter().position(|l| l.lab == lab) {
            Some(at) => &mut self.labs[at],
            None => {
                self.labs.push(LabRecord {
                    lab: lab.to_string(),
                    variant: variant(),
                    start: LabStart::Pending,
                });
                self.labs.last_mut().expect("just pushed")
            }
        }
    }
}

impl ClassRecord {
    /// The learner called `name`.
    pub fn learner(&self, name: &str) -> Option<&LearnerRecord> {
        self.learners.iter().find(|l| l.name == name)
    }

    /// The learner called `name`, to change.
    pub fn learner_mut(&mut self, name: &str) -> Option<&mut LearnerRecord> {
        self.learners.iter_mut().find(|l| l.name == name)
    }

    /// The learners' names, in order.
    pub fn names(&self) -> Vec<String> {
        self.learners.iter().map(|l| l.name.clone()).collect()
    }

    /// The directory of learner `name`'s simulator.
    pub fn sim_dir(&self, dir: &Path, name: &str) -> PathBuf {
        match self.layout {
            Layout::Nested => dir.join(name).join(SIM_DIR),
            Layout::Flat => dir.join(name),
        }
    }
}

/// A record as an older lab-runner wrote it: names and the lab only.
#[derive(Deserialize)]
struct RecordV1 {
    lab: Option<String>,
    learners: Vec<String>,
    #[serde(default)]
    shared_pid: Option<u32>,
}

impl RecordV1 {
    /// The same class in the current record: every learner listening on 127.0.0.1 as they did
    /// (a port is recorded at its next start), the lab taken as started in every learner (an
    /// older `class up` started it in all or stopped the class).
    fn upgrade(self) -> ClassRecord {
        let learners = self
            .learners
            .into_iter()
            .map(|name| LearnerRecord {
                name,
                port: None,
                labs: self
                    .lab
                    .iter()
                    .map(|lab| LabRecord {
                        lab: lab.clone(),
                        variant: None,
                        start: LabStart::Started { at: None },
                    })
                    .collect(),
            })
            .collect();
        ClassRecord {
            version: RECORD_VERSION,
            lab: self.lab,
            seed: None,
            variant: None,
            listen: crate::sim::lifecycle::DEFAULT_LISTEN,
            tls_sans: Vec::new(),
            processes: if self.shared_pid.is_some() {
                ProcessModel::Shared
            } else {
                ProcessModel::PerLearner
            },
            shared_pid: self.shared_pid,
            learners,
            layout: Layout::Flat,
        }
    }
}

/// Reads `DIR/class.json` (a version 1 record is read as [`Layout::Flat`]).
pub fn read(dir: &Path) -> Result<ClassRecord> {
    let path = dir.join(CLASS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(Error::NoClass(dir.to_path_buf())),
        Err(e) => return Err(Error::File { path, reason: crate::i18n::outside::cause(&e) }),
    };
    let bad =
        |e: serde_json::Error| Error::File { path: path.clone(), reason: crate::i18n::outside::cause(&e) };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(bad)?;
    match value.get("version").and_then(serde_json::Value::as_u64) {
        None => Ok(serde_json::from_value::<RecordV1>(value).map_err(bad)?.upgrade()),
        Some(v) if v == u64::from(RECORD_VERSION) => serde_json::from_value(value).map_err(bad),
        Some(v) => Err(Error::File {
            path,
            reason: crate::msg!("class-error-newer-record", version = v.to_string()),
        }),
    }
}

/// Reads `DIR/class.json`, `None` when there is no class yet.
pub fn read_if_any(dir: &Path) -> Result<Option<ClassRecord>> {
    match read(dir) {
        Ok(record) => Ok(Some(record)),
        Err(Error::NoClass(_)) => Ok(None),
        Err(error) => Err(error),
    }
}

/// Replaces `DIR/class.json` atomically (a reader sees the old record or the new one).
pub fn write(dir: &Path, record: &ClassRecord) -> Result<()> {
    let text = serde_json::to_string_pretty(record).expect("a class record serializes") + "\n";
    write_file(&dir.join(CLASS_FILE), text.as_bytes())
}

/// Replaces a class file atomically, owner-only.
pub fn write_file(path: &Path, contents: &[u8]) -> Result<()> {
    tls::write_private_file(path, contents)
        .map_err(|e| Error::File { path: path.to_path_buf(), reason: crate::i18n::outside::cause(&e) })
}

/// Who holds the class lock: written into `DIR/class.lock` once it is taken.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Holder {
    /// The holding process.
    pub pid: u32,
    /// What it runs (`class up`).
    pub command: String,
    /// Since when (RFC 3339).
    pub since: String,
}

/// The class lock, held until dropped (or the process ends: the kernel releases it, so a killed
/// command leaves no stale lock behind).
#[derive(Debug)]
pub struct ClassLock {
    _file: std::fs::File,
}

/// Takes the lock on the class directory `dir` for `command`, or says who holds it.
pub fn lock(dir: &Path, command: &str) -> Result<ClassLock> {
    crate::sim::owner_only::create_dir(dir)
        .map_err(|e| Error::File { path: dir.to_path_buf(), reason: crate::i18n::outside::cause(&e) })?;
    let path = dir.join(LOCK_FILE);
    let file_error =
        |e: std::io::Error| Error::File { path: path.clone(), reason: crate::i18n::outside::cause(&e) };
    // Opened without truncating: the holder's line stays readable until the lock is ours.
    let mut options = std::fs::OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, crate::sim::owner_only::FILE_MODE);
    let mut file = options.open(&path).map_err(file_error)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            let holder = serde_json::from_str::<Holder>(&text).ok();
            return Err(Error::Locked { dir: dir.to_path_buf(), holder: holder.map(Box::new) });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(file_error(e)),
    }
    let holder =
        Holder { pid: std::process::id(), command: command.to_string(), since: crate::class::now_rfc3339() };
    let text = serde_json::to_string(&holder).expect("a holder serializes") + "\n";
    file.set_len(0).map_err(file_error)?;
    file.rewind().map_err(file_error)?;
    file.write_all(text.as_bytes()).map_err(file_error)?;
    Ok(ClassLock { _file: file })
}

/// Moves a stopped class of [`Layout::Flat`] to [`Layout::Nested`]: each learner's simulator
/// state into `DIR/learner-NN/sim/`, the handed-out kubeconfig left where it was. Renames only:
/// the stores, CAs and tokens are the same files.
pub fn nest(dir: &Path, record: &mut ClassRecord) -> Result<()> {
    if record.layout == Layout::Nested {
        return Ok(());
    }
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |e: std::io::Error| Error::File { path, reason: crate::i18n::outside::cause(&e) }
    };
    for name in record.names() {
        let learner = dir.join(&name);
        if !learner.is_dir() {
            continue;
        }
        let moving = dir.join(format!(".{name}.nesting"));
        std::fs::rename(&learner, &moving).map_err(io(&learner))?;
        crate::sim::owner_only::create_dir(&learner).map_err(io(&learner))?;
        std::fs::rename(&moving, learner.join(SIM_DIR)).map_err(io(&moving))?;
        let handed_out = learner.join(SIM_DIR).join(crate::sim::kubeconfig::KUBECONFIG_FILE);
        if handed_out.exists() {
            std::fs::copy(&handed_out, learner.join(crate::sim::kubeconfig::KUBECONFIG_FILE))
                .map_err(io(&handed_out))?;
        }
    }
    record.layout = Layout::Nested;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::HasExitCode as _;

    fn record() -> ClassRecord {
        ClassRecord {
            version: RECORD_VERSION,
            lab: Some("stuck-rollout".into()),
            seed: Some(7),
            variant: None,
            listen: "127.0.0.1:0".parse().unwrap(),
            tls_sans: vec![],
            processes: ProcessModel::PerLearner,
            shared_pid: None,
            learners: vec![LearnerRecord {
                name: "learner-01".into(),
                port: Some(40001),
                labs: vec![LabRecord {
                    lab: "stuck-rollout".into(),
                    variant: Some("image".into()),
                    start: LabStart::Started { at: Some("2026-01-01T00:00:00Z".into()) },
                }],
            }],
            layout: Layout::Nested,
        }
    }

    #[test]
    fn the_record_reads_back_as_written() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), &record()).unwrap();
        assert_eq!(read(dir.path()).unwrap(), record());
        insta::assert_snapshot!(std::fs::read_to_string(dir.path().join(CLASS_FILE)).unwrap());
    }

    #[test]
    fn an_older_record_reads_as_a_flat_class_whose_lab_started() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(CLASS_FILE),
            r#"{"lab": "gpu-sharing", "learners": ["learner-01", "learner-02"], "shared_pid": 42}"#,
        )
        .unwrap();
        let record = read(dir.path()).unwrap();
        assert_eq!(record.layout, Layout::Flat);
        assert_eq!(record.processes, ProcessModel::Shared);
        assert_eq!(record.sim_dir(dir.path(), "learner-02"), dir.path().join("learner-02"));
        assert_eq!(
            record.learners[1].lab("gpu-sharing").map(|l| &l.start),
            Some(&LabStart::Started { at: None })
        );
        let newer = r#"{"version": 9, "lab": null, "listen": "127.0.0.1:0", "learners": []}"#;
        std::fs::write(dir.path().join(CLASS_FILE), newer).unwrap();
        assert!(read(dir.path()).unwrap_err().to_string().contains("newer lab-runner"));
    }

    #[test]
    fn a_flat_class_is_nested_keeping_its_files() {
        let dir = tempfile::tempdir().unwrap();
        let learner = dir.path().join("learner-01");
        std::fs::create_dir_all(&learner).unwrap();
        std::fs::write(learner.join("store.db"), "store").unwrap();
        std::fs::write(learner.join("kubeconfig"), "handed out").unwrap();
        let mut record = record();
        record.layout = Layout::Flat;
        nest(dir.path(), &mut record).unwrap();
        assert_eq!(record.layout, Layout::Nested);
        let sim = record.sim_dir(dir.path(), "learner-01");
        assert_eq!(std::fs::read_to_string(sim.join("store.db")).unwrap(), "store");
        assert_eq!(std::fs::read_to_string(learner.join("kubeconfig")).unwrap(), "handed out");
    }

    #[test]
    fn a_second_lock_names_the_holder_and_the_first_is_released_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let held = lock(dir.path(), "class up").unwrap();
        let refused = lock(dir.path(), "class down").unwrap_err();
        let Error::Locked { holder: Some(holder), .. } = &refused else { panic!("{refused:?}") };
        assert_eq!((holder.pid, holder.command.as_str()), (std::process::id(), "class up"));
        assert_eq!(refused.exit_code(), crate::exit::BAD_INPUT);
        assert!(refused.to_string().contains("`class up` (pid "), "{refused}");
        drop(held);
        lock(dir.path(), "class down").unwrap();
    }
}
