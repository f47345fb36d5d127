//! The SQLite side of the store: one table of object revisions, the k3s kine model.
//!
//! Every write appends rows keyed by a monotonic revision (`rev`, the resourceVersion); the
//! current state of a key is its newest row unless that row is a deletion tombstone.
//!
//! Durability: WAL mode with `synchronous=NORMAL`, and a write returns only after its
//! transaction committed, i.e. after the WAL frames were written to the file. That survives the
//! process being killed (`kill -9`): the data is in the operating system's page cache and
//! reaches the disk without the process. It does not promise to survive an OS crash or power
//! loss (that needs `synchronous=FULL`, an fsync per commit: about 180 commits/s on the
//! development machine's disk, against the 2,000 writes/s the simulator needs). SQLite's WAL
//! stays consistent either way (<https://www.sqlite.org/pragma.html#pragma_synchronous>).

use std::path::Path;

use rusqlite::{Connection, params};

/// Errors from the database layer.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// SQLite refused an operation (open, schema, insert, query).
    #[error("state database: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The database file could not be made owner-only before opening it.
    #[error("state database {path}: {source}")]
    Private {
        /// The database file.
        path: std::path::PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// `Result` with this module's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// One row of the revisions table.
#[derive(Debug, Clone)]
pub struct Row {
    /// The revision (resourceVersion) this row was written at.
    pub revision: u64,
    /// `pods`, `daemonsets.apps`.
    pub group_resource: String,
    /// Namespace, `""` for cluster-scoped objects.
    pub namespace: String,
    /// Object name.
    pub name: String,
    /// Whether this row removes the key (a tombstone carrying the last state).
    pub change: RowChange,
    /// The object's JSON.
    pub value: String,
}

/// What a row does to its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowChange {
    /// The key's first row after being absent.
    Created,
    /// A later state of an existing key.
    Updated,
    /// The key is removed; `value` is its last state.
    Deleted,
}

impl RowChange {
    fn code(self) -> i64 {
        match self {
            RowChange::Created => 0,
            RowChange::Updated => 1,
            RowChange::Deleted => 2,
        }
    }

    fn from_code(code: i64) -> RowChange {
        match code {
            0 => RowChange::Created,
            2 => RowChange::Deleted,
            _ => RowChange::Updated,
        }
    }
}

/// The open database.
#[derive(Debug)]
pub struct Db {
    conn: Connection,
}

/// A read-only connection of its own to the database file, for the health checks: in WAL mode
/// a reader neither waits for the writer nor holds it up, so a check answers from the database
/// itself while a long write runs (as upstream's `etcd` check reads from etcd, not through the
/// apiserver's storage layer).
#[derive(Debug)]
pub struct Probe {
    conn: Connection,
}

impl Probe {
    /// The newest revision in the file.
    pub fn max_revision(&self) -> Result<u64> {
        let rev: Option<i64> = self.conn.query_row("SELECT MAX(rev) FROM kine", [], |row| row.get(0))?;
        Ok(rev.unwrap_or(0) as u64)
    }
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kine (
    rev       INTEGER PRIMARY KEY,
    resource  TEXT    NOT NULL,
    namespace TEXT    NOT NULL,
    name      TEXT    NOT NULL,
    change    INTEGER NOT NULL,
    value     TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS kine_key ON kine (resource, namespace, name, rev);
";

impl Db {
    /// Opens (creating if needed) the database file at `path` in WAL mode.
    pub fn open(path: &Path) -> Result<Db> {
        // Owner-only before SQLite opens it: SQLite gives the `-wal` and `-shm` files (the WAL
        // holds Secret data) the mode of the database file.
        crate::owner_only::prepare_database(path)
            .map_err(|source| Error::Private { path: path.to_path_buf(), source })?;
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        Db::init(conn)
    }

    /// A second, read-only connection to the database file at `path` for the health checks
    /// ([`Probe`]).
    pub fn probe(path: &Path) -> Result<Probe> {
        let flags = rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX;
        Ok(Probe { conn: Connection::open_with_flags(path, flags)? })
    }

    /// A database that lives in memory only (tests, benchmarks).
    pub fn in_memory() -> Result<Db> {
        Db::init(Connection::open_in_memory()?)
    }

    fn init(conn: Connection) -> Result<Db> {
        conn.execute_batch(SCHEMA)?;
        Ok(Db { conn })
    }

    /// Drops superseded rows and tombstones older than `before`, keeping the newest row of the
    /// table so the revision counter never goes back.
    pub fn compact(&self, before: u64) -> Result<usize> {
        let removed = self.conn.execute(
            "DELETE FROM kine WHERE rev < ?1 AND rev < (SELECT MAX(rev) FROM kine) AND (change = 2 OR EXISTS
               (SELECT 1 FROM kine AS newer WHERE newer.resource = kine.resource
                  AND newer.namespace = kine.namespace AND newer.name = kine.name AND newer.rev > kine.rev))",
            params![before as i64],
        )?;
        Ok(removed)
    }

    /// Drops the rows at `revisions` (superseded rows and tombstones the store tracked since it
    /// opened) in one transaction: the cost of each compaction is the rows it removes, not the
    /// table it scans as [`Db::compact`] does (issue #17: every 10,000 writes on a 1,000-node
    /// store). Returns how many rows went.
    pub fn remove_revisions(&mut self, revisions: &[u64]) -> Result<usize> {
        let transaction = self.conn.transaction()?;
        let mut removed = 0;
        {
            let mut delete = transaction.prepare_cached("DELETE FROM kine WHERE rev = ?1")?;
            for revision in revisions {
                removed += delete.execute(params![*revision as i64])?;
            }
        }
        transaction.commit()?;
        Ok(removed)
    }

    /// The newest revision written, 0 for an empty database.
    pub fn max_revision(&self) -> Result<u64> {
        let rev: Option<i64> = self.conn.query_row("SELECT MAX(rev) FROM kine", [], |row| row.get(0))?;
        Ok(rev.unwrap_or(0) as u64)
    }

    /// Every row in revision order, for rebuilding the current state at open.
    pub fn rows(&self, mut each: impl FnMut(Row)) -> Result<()> {
        let mut statement = self
            .conn
            .prepare("SELECT rev, resource, namespace, name, change, value FROM kine ORDER BY rev")?;
        let mut rows = statement.query([])?;
        while let Some(row) = rows.next()? {
            each(Row {
                revision: row.get::<_, i64>(0)? as u64,
                group_resource: row.get(1)?,
                namespace: row.get(2)?,
                name: row.get(3)?,
                change: RowChange::from_code(row.get(4)?),
                value: row.get(5)?,
            });
        }
        Ok(())
    }

    /// Appends `rows` in one transaction; returns once it committed.
    pub fn append(&mut self, rows: &[Row]) -> Result<()> {
        let transaction = self.conn.transaction()?;
        {
            let mut insert = transaction.prepare_cached(
                "INSERT INTO kine (rev, resource, namespace, name, change, value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for row in rows {
                insert.execute(params![
                    row.revision as i64,
                    row.group_resource,
                    row.namespace,
                    row.name,
                    row.change.code(),
                    row.value
                ])?;
            }
        }
        transaction.commit()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(revision: u64, name: &str, change: RowChange) -> Row {
        Row {
            revision,
            group_resource: "pods".into(),
            namespace: "default".into(),
            name: name.into(),
            change,
            value: format!("{{\"rev\":{revision}}}"),
        }
    }

    #[test]
    fn compaction_keeps_current_rows_and_the_newest_revision() {
        let mut db = Db::in_memory().unwrap();
        db.append(&[row(1, "a", RowChange::Created), row(2, "a", RowChange::Updated)]).unwrap();
        db.append(&[row(3, "b", RowChange::Created), row(4, "b", RowChange::Deleted)]).unwrap();
        assert_eq!(db.compact(10).unwrap(), 2, "a@1 is superseded; b@3 is superseded; b@4 is newest");
        let mut revisions = Vec::new();
        db.rows(|row| revisions.push(row.revision)).unwrap();
        assert_eq!(revisions, vec![2, 4]);
        assert_eq!(db.max_revision().unwrap(), 4);
    }
}
