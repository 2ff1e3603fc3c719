//! One transaction on a task list, whatever keeps it: the statements [`super::ops`] needs,
//! written once per backend — an SQLite file ([`SqliteTx`]) or a PostgreSQL database shared
//! by several machines ([`super::postgres`]). The rules (what an update may do, cycles,
//! claims, all or nothing) live in `ops` alone, so both backends behave the same.
//!
//! A transaction that is dropped without [`ListTx::commit`] rolls back.

use std::path::PathBuf;

use rusqlite::{Connection, OptionalExtension as _, params};

use super::store::TaskListError;
use crate::sqlite::{self, SqlKind};

/// A task's stored fields: subject, description, active form, status, owner, metadata (JSON).
pub(crate) type RawRow = (String, String, Option<String>, String, Option<String>, String);

/// A task as a list shows it: id, subject, status, owner.
pub(crate) type RawLine = (i64, String, String, Option<String>);

/// A column an update sets (a closed set: no column name comes from input).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Column {
    Subject,
    Description,
    ActiveForm,
    Owner,
    Metadata,
    Status,
}

impl Column {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Column::Subject => "subject",
            Column::Description => "description",
            Column::ActiveForm => "active_form",
            Column::Owner => "owner",
            Column::Metadata => "metadata",
            Column::Status => "status",
        }
    }
}

/// A task to insert, pending.
pub(crate) struct NewRow<'a> {
    pub subject: &'a str,
    pub description: &'a str,
    pub active_form: Option<&'a str>,
    pub metadata: &'a str,
    pub now_ms: i64,
}

/// The statements of one transaction on one list.
pub(crate) trait ListTx {
    /// Task `id`'s stored fields, deleted or not.
    fn row(&mut self, id: i64) -> Result<Option<RawRow>, TaskListError>;
    /// The ids of the tasks that are not deleted, in order.
    fn existing(&mut self) -> Result<Vec<i64>, TaskListError>;
    /// Every edge, blocker → blocked.
    fn edges(&mut self) -> Result<Vec<(i64, i64)>, TaskListError>;
    /// The tasks blocking `id`, in order, with their stored statuses.
    fn blocker_statuses(&mut self, id: i64) -> Result<Vec<(i64, String)>, TaskListError>;
    /// The tasks `id` blocks, in order.
    fn blocks(&mut self, id: i64) -> Result<Vec<i64>, TaskListError>;
    /// Every task but deleted ones, in id order.
    fn lines(&mut self) -> Result<Vec<RawLine>, TaskListError>;
    /// Every (blocked, blocker) whose blocker is still open, in order.
    fn open_blocks(&mut self) -> Result<Vec<(i64, i64)>, TaskListError>;
    /// Adds a pending task; its id.
    fn insert(&mut self, task: &NewRow<'_>) -> Result<i64, TaskListError>;
    /// Sets one column of task `id`.
    fn set(&mut self, id: i64, column: Column, value: Option<&str>) -> Result<(), TaskListError>;
    /// Adds the edge; false when it was there.
    fn link(&mut self, blocker: i64, blocked: i64) -> Result<bool, TaskListError>;
    /// Removes every edge of `id`.
    fn unlink_all(&mut self, id: i64) -> Result<(), TaskListError>;
    /// Notes that task `id` changed at `now_ms`.
    fn touch(&mut self, id: i64, now_ms: i64) -> Result<(), TaskListError>;
    /// Makes the transaction's changes stay.
    fn commit(&mut self) -> Result<(), TaskListError>;
}

/// An SQLite error of the database at `path`, classified: busy, damaged, or other.
pub(crate) fn sqlite_error(path: &std::path::Path, e: rusqlite::Error) -> TaskListError {
    let path = path.to_path_buf();
    match sqlite::kind_of(&e) {
        SqlKind::Busy => TaskListError::Busy { path },
        SqlKind::Corrupt => TaskListError::Corrupt { path, detail: e.to_string() },
        SqlKind::Other => TaskListError::Sql { path, source: e },
    }
}

/// A transaction on a list's SQLite file: `BEGIN IMMEDIATE` for a change, so it holds the
/// write lock before it reads (see `docs/design.md`), a deferred one (a WAL snapshot) to read.
pub(crate) struct SqliteTx {
    conn: Connection,
    path: PathBuf,
    open: bool,
}

impl SqliteTx {
    /// Begins on `conn`, the database at `path`.
    pub(crate) fn begin(conn: Connection, path: PathBuf, write: bool) -> Result<Self, TaskListError> {
        conn.execute_batch(if write { "BEGIN IMMEDIATE" } else { "BEGIN" }).map_err(|e| sqlite_error(&path, e))?;
        Ok(Self { conn, path, open: true })
    }

    fn err(&self, e: rusqlite::Error) -> TaskListError {
        sqlite_error(&self.path, e)
    }

    fn pairs(&mut self, sql: &str, id: Option<i64>) -> Result<Vec<(i64, i64)>, TaskListError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| sqlite_error(&self.path, e))?;
        let map = |r: &rusqlite::Row<'_>| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?));
        let rows = match id {
            Some(id) => stmt.query_map(params![id], map),
            None => stmt.query_map([], map),
        };
        rows.and_then(Iterator::collect).map_err(|e| sqlite_error(&self.path, e))
    }

    fn ids(&mut self, sql: &str, id: Option<i64>) -> Result<Vec<i64>, TaskListError> {
        let mut stmt = self.conn.prepare(sql).map_err(|e| sqlite_error(&self.path, e))?;
        let map = |r: &rusqlite::Row<'_>| r.get::<_, i64>(0);
        let rows = match id {
            Some(id) => stmt.query_map(params![id], map),
            None => stmt.query_map([], map),
        };
        rows.and_then(Iterator::collect).map_err(|e| sqlite_error(&self.path, e))
    }
}

impl Drop for SqliteTx {
    fn drop(&mut self) {
        if self.open {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}

impl ListTx for SqliteTx {
    fn row(&mut self, id: i64) -> Result<Option<RawRow>, TaskListError> {
        self.conn
            .query_row(
                "SELECT subject, description, active_form, status, owner, metadata FROM tasks WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .optional()
            .map_err(|e| self.err(e))
    }

    fn existing(&mut self) -> Result<Vec<i64>, TaskListError> {
        self.ids("SELECT id FROM tasks WHERE status <> 'deleted' ORDER BY id", None)
    }

    fn edges(&mut self) -> Result<Vec<(i64, i64)>, TaskListError> {
        self.pairs("SELECT blocker, blocked FROM blocks", None)
    }

    fn blocker_statuses(&mut self, id: i64) -> Result<Vec<(i64, String)>, TaskListError> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT b.blocker, t.status FROM blocks b JOIN tasks t ON t.id = b.blocker \
                 WHERE b.blocked = ?1 ORDER BY b.blocker",
            )
            .map_err(|e| sqlite_error(&self.path, e))?;
        let rows = stmt.query_map(params![id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)));
        rows.and_then(Iterator::collect).map_err(|e| sqlite_error(&self.path, e))
    }

    fn blocks(&mut self, id: i64) -> Result<Vec<i64>, TaskListError> {
        self.ids("SELECT blocked FROM blocks WHERE blocker = ?1 ORDER BY blocked", Some(id))
    }

    fn lines(&mut self) -> Result<Vec<RawLine>, TaskListError> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, subject, status, owner FROM tasks WHERE status <> 'deleted' ORDER BY id")
            .map_err(|e| sqlite_error(&self.path, e))?;
        let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)));
        rows.and_then(Iterator::collect).map_err(|e| sqlite_error(&self.path, e))
    }

    fn open_blocks(&mut self) -> Result<Vec<(i64, i64)>, TaskListError> {
        self.pairs(
            "SELECT b.blocked, b.blocker FROM blocks b JOIN tasks t ON t.id = b.blocker \
             WHERE t.status IN ('pending', 'in_progress') ORDER BY b.blocked, b.blocker",
            None,
        )
    }

    fn insert(&mut self, task: &NewRow<'_>) -> Result<i64, TaskListError> {
        self.conn
            .execute(
                "INSERT INTO tasks (subject, description, active_form, status, metadata, created_ms, updated_ms) \
                 VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?5)",
                params![task.subject, task.description, task.active_form, task.metadata, task.now_ms],
            )
            .map_err(|e| self.err(e))?;
        Ok(self.conn.last_insert_rowid())
    }

    fn set(&mut self, id: i64, column: Column, value: Option<&str>) -> Result<(), TaskListError> {
        let sql = format!("UPDATE tasks SET {} = ?1 WHERE id = ?2", column.name());
        self.conn.execute(&sql, params![value, id]).map(drop).map_err(|e| self.err(e))
    }

    fn link(&mut self, blocker: i64, blocked: i64) -> Result<bool, TaskListError> {
        let sql = "INSERT OR IGNORE INTO blocks (blocker, blocked) VALUES (?1, ?2)";
        self.conn.execute(sql, params![blocker, blocked]).map(|n| n > 0).map_err(|e| self.err(e))
    }

    fn unlink_all(&mut self, id: i64) -> Result<(), TaskListError> {
        let sql = "DELETE FROM blocks WHERE blocker = ?1 OR blocked = ?1";
        self.conn.execute(sql, params![id]).map(drop).map_err(|e| self.err(e))
    }

    fn touch(&mut self, id: i64, now_ms: i64) -> Result<(), TaskListError> {
        let sql = "UPDATE tasks SET updated_ms = ?1 WHERE id = ?2";
        self.conn.execute(sql, params![now_ms, id]).map(drop).map_err(|e| self.err(e))
    }

    fn commit(&mut self) -> Result<(), TaskListError> {
        self.conn.execute_batch("COMMIT").map_err(|e| sqlite_error(&self.path, e))?;
        self.open = false;
        Ok(())
    }
}
