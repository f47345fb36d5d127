//! Owner-only state on disk: the state directory 0700, `store.db*` and `serve.log` 0600, created with those modes.
//!
//! The store's WAL holds Secret data and `serve.log` every request, so nothing is created with a
//! wider mode first and narrowed later (no window in which another user may open it), and what
//! an older version left wider is narrowed when the simulator starts.

use std::{fs, io, path::Path};

#[cfg(unix)]
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};

/// Mode of the state directory.
pub const DIR_MODE: u32 = 0o700;
/// Mode of the files in it that carry state or logs.
pub const FILE_MODE: u32 = 0o600;

/// Creates `dir` (and missing parents) as 0700, or narrows an existing one to 0700.
pub fn create_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    builder.mode(DIR_MODE);
    builder.create(dir)?;
    narrow(dir, DIR_MODE)
}

/// Creates (or truncates) the file at `path` as 0600 and opens it for writing.
pub fn create_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    let file = options.open(path)?;
    // `mode` applies only when the file is created; an existing one keeps its own.
    narrow(path, FILE_MODE)?;
    Ok(file)
}

/// Opens the file at `path` for appending, creating it as 0600 when absent.
pub fn append_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    let file = options.open(path)?;
    narrow(path, FILE_MODE)?;
    Ok(file)
}

/// Makes the SQLite database at `path` owner-only before SQLite opens it: creates it empty as
/// 0600 when absent (SQLite treats an empty file as a new database), narrows it and any `-wal`
/// and `-shm` beside it otherwise. SQLite creates its `-wal`/`-shm` files with the database
/// file's mode (`os_unix.c` `findCreateFileMode`), so they follow.
pub fn prepare_database(path: &Path) -> io::Result<()> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(false);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    options.open(path)?;
    narrow(path, FILE_MODE)?;
    for suffix in ["-wal", "-shm"] {
        let mut sidecar = path.as_os_str().to_owned();
        sidecar.push(suffix);
        let sidecar = Path::new(&sidecar);
        if sidecar.exists() {
            narrow(sidecar, FILE_MODE)?;
        }
    }
    Ok(())
}

/// Sets `path`'s permission bits to `mode` when they differ.
fn narrow(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    if fs::metadata(path)?.permissions().mode() & 0o777 != mode {
        fs::set_permissions(path, fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_state_dir_and_log_are_owner_only() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("state/sim");
        create_dir(&dir).unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&root.path().join("state")), 0o700);
        create_file(&dir.join("serve.log")).unwrap();
        assert_eq!(mode(&dir.join("serve.log")), 0o600);
    }

    #[test]
    fn what_an_older_version_left_wider_is_narrowed() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("sim");
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        for name in ["serve.log", "store.db", "store.db-wal", "store.db-shm"] {
            fs::write(dir.join(name), b"").unwrap();
            fs::set_permissions(dir.join(name), fs::Permissions::from_mode(0o644)).unwrap();
        }
        create_dir(&dir).unwrap();
        create_file(&dir.join("serve.log")).unwrap();
        prepare_database(&dir.join("store.db")).unwrap();
        assert_eq!(mode(&dir), 0o700);
        for name in ["serve.log", "store.db", "store.db-wal", "store.db-shm"] {
            assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
        }
    }

    #[test]
    fn sqlite_gives_its_wal_the_database_file_mode() {
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("store.db");
        let store = crate::store::Store::open(&path).unwrap();
        let namespaces = crate::resources::built_in().into_iter().find(|t| t.plural == "namespaces").unwrap();
        store
            .create(
                &namespaces,
                serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}),
            )
            .unwrap();
        for name in ["store.db", "store.db-wal", "store.db-shm"] {
            assert_eq!(mode(&root.path().join(name)), 0o600, "{name}");
        }
    }
}
