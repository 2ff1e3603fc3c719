//! A task list in a PostgreSQL database several machines share.
//!
//! One database holds every list, each task keyed by its list (`named:sprint`,
//! `project:<project>-<hash>`) and a per-list id, so ids read as they do in a file of their
//! own (#1, #2…). A change first takes its list's row in `task_lists` `FOR UPDATE`: writers of
//! one list, on any replica, go one after the other, as `BEGIN IMMEDIATE` orders them on one
//! machine, and each reads the list as the last one left it (READ COMMITTED sees every commit
//! made before its statement). Ids come from the same row (`next_id`), so a deleted task's id
//! is never given again. A read runs in one REPEATABLE READ snapshot and waits for nobody.

use postgres::types::ToSql;

use super::store::TaskListError;
use super::tx::{Column, ListTx, NewRow, RawLine, RawRow};
use crate::storage::{PooledClient, SharedStorage};

/// The component name and schema version recorded in `toolbelt_schema`.
const COMPONENT: &str = "task_lists";
const VERSION: i32 = 1;

/// The tables; `IF NOT EXISTS` because replicas of different ages start against one database.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS task_lists (
    list    TEXT PRIMARY KEY,
    next_id BIGINT NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS tasks (
    list        TEXT NOT NULL REFERENCES task_lists (list),
    id          BIGINT NOT NULL,
    subject     TEXT NOT NULL,
    description TEXT NOT NULL,
    active_form TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'deleted')),
    owner       TEXT,
    metadata    TEXT NOT NULL DEFAULT '{}',
    created_ms  BIGINT NOT NULL,
    updated_ms  BIGINT NOT NULL,
    PRIMARY KEY (list, id)
);
CREATE TABLE IF NOT EXISTS task_blocks (
    list    TEXT NOT NULL,
    blocker BIGINT NOT NULL,
    blocked BIGINT NOT NULL,
    PRIMARY KEY (list, blocker, blocked),
    FOREIGN KEY (list, blocker) REFERENCES tasks (list, id),
    FOREIGN KEY (list, blocked) REFERENCES tasks (list, id),
    CHECK (blocker <> blocked)
);
CREATE INDEX IF NOT EXISTS task_blocks_by_blocked ON task_blocks (list, blocked, blocker);
";

/// How long a change waits for another replica's change of the same list.
const LOCK_TIMEOUT: &str = "10s";

/// A transaction on one list.
pub(crate) struct PgTx<'s> {
    shared: &'s SharedStorage,
    client: PooledClient,
    list: String,
    open: bool,
}

impl<'s> PgTx<'s> {
    /// Begins on `list`; a change takes the list's lock first (making the list when missing).
    pub(crate) fn begin(shared: &'s SharedStorage, list: String, write: bool) -> Result<Self, TaskListError> {
        let client = shared.client(COMPONENT, VERSION, SCHEMA)?;
        let mut tx = Self { shared, client, list, open: false };
        if write {
            tx.batch("BEGIN")?;
            tx.open = true;
            // A replica that dies mid-change lets go of the list soon, not when TCP notices.
            tx.batch(&format!(
                "SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'; SET LOCAL idle_in_transaction_session_timeout = '{LOCK_TIMEOUT}'"
            ))?;
            tx.exec("INSERT INTO task_lists (list) VALUES ($1) ON CONFLICT (list) DO NOTHING", &[])?;
            tx.exec("SELECT next_id FROM task_lists WHERE list = $1 FOR UPDATE", &[])?;
        } else {
            tx.batch("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")?;
            tx.open = true;
        }
        Ok(tx)
    }

    fn err(&self, e: &postgres::Error) -> TaskListError {
        TaskListError::Shared(self.shared.error(e))
    }

    fn batch(&mut self, sql: &str) -> Result<(), TaskListError> {
        self.client.batch_execute(sql).map_err(|e| self.err(&e))
    }

    /// `$1` is the list; `more` are `$2`…
    fn params<'a>(list: &'a String, more: &[&'a (dyn ToSql + Sync)]) -> Vec<&'a (dyn ToSql + Sync)> {
        let mut all: Vec<&(dyn ToSql + Sync)> = vec![list];
        all.extend_from_slice(more);
        all
    }

    fn exec(&mut self, sql: &str, more: &[&(dyn ToSql + Sync)]) -> Result<u64, TaskListError> {
        let params = Self::params(&self.list, more);
        self.client.execute(sql, &params).map_err(|e| TaskListError::Shared(self.shared.error(&e)))
    }

    fn query(&mut self, sql: &str, more: &[&(dyn ToSql + Sync)]) -> Result<Vec<postgres::Row>, TaskListError> {
        let params = Self::params(&self.list, more);
        self.client.query(sql, &params).map_err(|e| TaskListError::Shared(self.shared.error(&e)))
    }

    /// A column of the rows, decoded; a value of the wrong type is damage, not a panic.
    fn column<T: for<'r> postgres::types::FromSql<'r>>(
        &self,
        rows: &[postgres::Row],
        i: usize,
    ) -> Result<Vec<T>, TaskListError> {
        rows.iter().map(|r| r.try_get(i).map_err(|e| self.damaged(&e))).collect()
    }

    fn damaged(&self, e: &postgres::Error) -> TaskListError {
        TaskListError::Shared(self.shared.damaged(format!("a task list row cannot be read ({e})")))
    }

    fn pairs(&mut self, sql: &str, more: &[&(dyn ToSql + Sync)]) -> Result<Vec<(i64, i64)>, TaskListError> {
        let rows = self.query(sql, more)?;
        Ok(self.column::<i64>(&rows, 0)?.into_iter().zip(self.column::<i64>(&rows, 1)?).collect())
    }
}

impl Drop for PgTx<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = self.client.batch_execute("ROLLBACK");
        }
    }
}

impl ListTx for PgTx<'_> {
    fn row(&mut self, id: i64) -> Result<Option<RawRow>, TaskListError> {
        let rows = self.query(
            "SELECT subject, description, active_form, status, owner, metadata FROM tasks WHERE list = $1 AND id = $2",
            &[&id],
        )?;
        let Some(r) = rows.first() else { return Ok(None) };
        let get = |e: postgres::Error| self.damaged(&e);
        Ok(Some((
            r.try_get(0).map_err(get)?,
            r.try_get(1).map_err(get)?,
            r.try_get(2).map_err(get)?,
            r.try_get(3).map_err(get)?,
            r.try_get(4).map_err(get)?,
            r.try_get(5).map_err(get)?,
        )))
    }

    fn existing(&mut self) -> Result<Vec<i64>, TaskListError> {
        let rows = self.query("SELECT id FROM tasks WHERE list = $1 AND status <> 'deleted' ORDER BY id", &[])?;
        self.column(&rows, 0)
    }

    fn edges(&mut self) -> Result<Vec<(i64, i64)>, TaskListError> {
        self.pairs("SELECT blocker, blocked FROM task_blocks WHERE list = $1", &[])
    }

    fn blocker_statuses(&mut self, id: i64) -> Result<Vec<(i64, String)>, TaskListError> {
        let rows = self.query(
            "SELECT b.blocker, t.status FROM task_blocks b JOIN tasks t ON t.list = b.list AND t.id = b.blocker \
             WHERE b.list = $1 AND b.blocked = $2 ORDER BY b.blocker",
            &[&id],
        )?;
        Ok(self.column::<i64>(&rows, 0)?.into_iter().zip(self.column::<String>(&rows, 1)?).collect())
    }

    fn blocks(&mut self, id: i64) -> Result<Vec<i64>, TaskListError> {
        let rows =
            self.query("SELECT blocked FROM task_blocks WHERE list = $1 AND blocker = $2 ORDER BY blocked", &[&id])?;
        self.column(&rows, 0)
    }

    fn lines(&mut self) -> Result<Vec<RawLine>, TaskListError> {
        let rows = self.query(
            "SELECT id, subject, status, owner FROM tasks WHERE list = $1 AND status <> 'deleted' ORDER BY id",
            &[],
        )?;
        let ids = self.column::<i64>(&rows, 0)?;
        let subjects = self.column::<String>(&rows, 1)?;
        let statuses = self.column::<String>(&rows, 2)?;
        let owners = self.column::<Option<String>>(&rows, 3)?;
        Ok(ids.into_iter().zip(subjects).zip(statuses).zip(owners).map(|(((i, s), st), o)| (i, s, st, o)).collect())
    }

    fn open_blocks(&mut self) -> Result<Vec<(i64, i64)>, TaskListError> {
        self.pairs(
            "SELECT b.blocked, b.blocker FROM task_blocks b JOIN tasks t ON t.list = b.list AND t.id = b.blocker \
             WHERE b.list = $1 AND t.status IN ('pending', 'in_progress') ORDER BY b.blocked, b.blocker",
            &[],
        )
    }

    fn insert(&mut self, task: &NewRow<'_>) -> Result<i64, TaskListError> {
        let rows =
            self.query("UPDATE task_lists SET next_id = next_id + 1 WHERE list = $1 RETURNING next_id - 1", &[])?;
        let id = *self.column::<i64>(&rows, 0)?.first().ok_or_else(|| {
            TaskListError::Shared(self.shared.damaged("a task list lost its row while it was locked".into()))
        })?;
        self.exec(
            "INSERT INTO tasks (list, id, subject, description, active_form, status, metadata, created_ms, updated_ms) \
             VALUES ($1, $2, $3, $4, $5, 'pending', $6, $7, $7)",
            &[&id, &task.subject, &task.description, &task.active_form, &task.metadata, &task.now_ms],
        )?;
        Ok(id)
    }

    fn set(&mut self, id: i64, column: Column, value: Option<&str>) -> Result<(), TaskListError> {
        let sql = format!("UPDATE tasks SET {} = $3 WHERE list = $1 AND id = $2", column.name());
        self.exec(&sql, &[&id, &value]).map(drop)
    }

    fn link(&mut self, blocker: i64, blocked: i64) -> Result<bool, TaskListError> {
        let sql = "INSERT INTO task_blocks (list, blocker, blocked) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING";
        self.exec(sql, &[&blocker, &blocked]).map(|n| n > 0)
    }

    fn unlink_all(&mut self, id: i64) -> Result<(), TaskListError> {
        self.exec("DELETE FROM task_blocks WHERE list = $1 AND (blocker = $2 OR blocked = $2)", &[&id]).map(drop)
    }

    fn touch(&mut self, id: i64, now_ms: i64) -> Result<(), TaskListError> {
        self.exec("UPDATE tasks SET updated_ms = $3 WHERE list = $1 AND id = $2", &[&id, &now_ms]).map(drop)
    }

    fn commit(&mut self) -> Result<(), TaskListError> {
        self.batch("COMMIT")?;
        self.open = false;
        Ok(())
    }
}
