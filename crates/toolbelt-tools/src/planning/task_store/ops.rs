//! Reading and changing a task list: each call is one transaction.
//!
//! Changes take the write lock when they begin (`BEGIN IMMEDIATE`), so an update reads the
//! task and writes it back with no other writer in between: two processes merging metadata
//! into one task, or adding blockers to it, at the same moment both land. Reads run in a
//! snapshot (WAL) and never wait for a writer. A change that would make a cycle of
//! blockers, or names a task that does not exist, is refused whole: nothing of it is kept.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use rusqlite::{Connection, OptionalExtension as _, TransactionBehavior, params};
use serde_json::{Map, Value};

use super::store::{TaskListError, TaskListStore};
use super::view::{TaskDetail, TaskLine, TaskListing, TaskStatus, id_text, with_status};
use crate::sqlite::now_ms;

/// A task to add.
#[derive(Debug, Clone, Default)]
pub struct NewTask {
    /// Its subject.
    pub subject: String,
    /// Its description.
    pub description: String,
    /// Its subject in the present continuous.
    pub active_form: Option<String>,
    /// Metadata to attach (keys with a `null` value are left out).
    pub metadata: Map<String, Value>,
}

/// What to change in a task; `None` and empty lists change nothing.
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// A new status (`Deleted` removes the task from the list).
    pub status: Option<TaskStatus>,
    /// A new subject.
    pub subject: Option<String>,
    /// A new description.
    pub description: Option<String>,
    /// A new active form.
    pub active_form: Option<String>,
    /// A new owner; empty clears it.
    pub owner: Option<String>,
    /// Keys to merge into the metadata; a `null` value removes its key.
    pub metadata: Option<Map<String, Value>>,
    /// Tasks this one blocks from now on.
    pub add_blocks: Vec<i64>,
    /// Tasks that block this one from now on.
    pub add_blocked_by: Vec<i64>,
}

impl Changes {
    fn is_empty(&self) -> bool {
        self.status.is_none()
            && self.subject.is_none()
            && self.description.is_none()
            && self.active_form.is_none()
            && self.owner.is_none()
            && self.metadata.is_none()
            && self.add_blocks.is_empty()
            && self.add_blocked_by.is_empty()
    }
}

/// What an update did.
#[derive(Debug, Clone)]
pub struct Updated {
    /// The task as it is now.
    pub task: TaskDetail,
    /// The fields the update set, in input order.
    pub fields: Vec<String>,
    /// The status before and after, when it changed.
    pub status_change: Option<(TaskStatus, TaskStatus)>,
    /// Things worth knowing (a task started while blockers are open).
    pub notes: Vec<String>,
}

/// One row of `tasks`, decoded.
struct Row {
    id: i64,
    subject: String,
    description: String,
    active_form: Option<String>,
    status: TaskStatus,
    owner: Option<String>,
    metadata: Map<String, Value>,
}

/// The cycle that the edge `from → to` closes among `edges` (blocker → the tasks it blocks,
/// the new edge included): `[from, to, …, from]`, the shortest one.
pub(crate) fn cycle_through(edges: &BTreeMap<i64, Vec<i64>>, from: i64, to: i64) -> Option<Vec<i64>> {
    let mut parent: HashMap<i64, i64> = HashMap::new();
    let mut seen = HashSet::from([to]);
    let mut queue = VecDeque::from([to]);
    while let Some(node) = queue.pop_front() {
        if node == from {
            let mut path = vec![from];
            let mut at = from;
            while at != to {
                at = *parent.get(&at)?;
                path.push(at);
            }
            path.reverse();
            let mut cycle = vec![from];
            cycle.extend(path);
            return Some(cycle);
        }
        for &next in edges.get(&node).into_iter().flatten() {
            if seen.insert(next) {
                parent.insert(next, node);
                queue.push_back(next);
            }
        }
    }
    None
}

impl TaskListStore {
    /// Every task but deleted ones, in id order, each with its open blockers. A list that
    /// does not exist yet is empty (and is not created).
    pub fn list(&self) -> Result<TaskListing, TaskListError> {
        let mut listing = TaskListing { list: self.name.clone(), tasks: Vec::new() };
        let Some(mut conn) = self.open(false)? else { return Ok(listing) };
        let e = |err| self.sql(err);
        let tx = conn.transaction().map_err(e)?;
        let mut open: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        {
            let mut stmt = tx
                .prepare(
                    "SELECT b.blocked, b.blocker FROM blocks b JOIN tasks t ON t.id = b.blocker \
                     WHERE t.status IN ('pending', 'in_progress') ORDER BY b.blocked, b.blocker",
                )
                .map_err(e)?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))).map_err(e)?;
            for row in rows {
                let (blocked, blocker) = row.map_err(e)?;
                open.entry(blocked).or_default().push(id_text(blocker));
            }
            let mut stmt = tx
                .prepare("SELECT id, subject, status, owner FROM tasks WHERE status <> 'deleted' ORDER BY id")
                .map_err(e)?;
            let rows = stmt
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, String>(2)?, r.get(3)?)))
                .map_err(e)?;
            for row in rows {
                let (id, subject, status, owner): (i64, String, String, Option<String>) = row.map_err(e)?;
                let status = self.status(&status)?;
                let blocked_by = open.remove(&id).unwrap_or_default();
                listing.tasks.push(TaskLine { id: id_text(id), subject, status, owner, blocked_by });
            }
        }
        tx.finish().map_err(e)?;
        Ok(listing)
    }

    /// The task `id` in full.
    pub(crate) fn get(&self, id: i64) -> Result<TaskDetail, TaskListError> {
        let Some(mut conn) = self.open(false)? else { return Err(self.unknown_in_empty(id)) };
        let tx = conn.transaction().map_err(|e| self.sql(e))?;
        let row = self.live(&tx, id)?;
        let detail = self.detail(&tx, row)?;
        tx.finish().map_err(|e| self.sql(e))?;
        Ok(detail)
    }

    /// Adds a pending task; returns it.
    pub(crate) fn create(&self, new: NewTask) -> Result<TaskDetail, TaskListError> {
        let mut conn = self.writable()?;
        let e = |err| self.sql(err);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(e)?;
        let metadata: Map<String, Value> = new.metadata.into_iter().filter(|(_, v)| !v.is_null()).collect();
        let now = now_ms();
        tx.execute(
            "INSERT INTO tasks (subject, description, active_form, status, metadata, created_ms, updated_ms) \
             VALUES (?1, ?2, ?3, 'pending', ?4, ?5, ?5)",
            params![new.subject, new.description, new.active_form, Value::Object(metadata).to_string(), now],
        )
        .map_err(e)?;
        let id = tx.last_insert_rowid();
        let row = self.live(&tx, id)?;
        let detail = self.detail(&tx, row)?;
        tx.commit().map_err(e)?;
        Ok(detail)
    }

    /// Applies `changes` to the task `id`, all or nothing.
    pub(crate) fn update(&self, id: i64, changes: Changes) -> Result<Updated, TaskListError> {
        if changes.is_empty() {
            return Err(TaskListError::NothingToUpdate);
        }
        let mut conn = self.writable()?;
        let e = |err| self.sql(err);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate).map_err(e)?;
        let row = self.live(&tx, id)?;
        for &other in changes.add_blocks.iter().chain(&changes.add_blocked_by) {
            if other == id {
                return Err(TaskListError::Cycle(vec![id, id]));
            }
            self.live(&tx, other)?;
        }
        let mut fields = Vec::new();
        let mut set = |column: &str, field: &str, value: Option<String>| -> Result<(), TaskListError> {
            self.set(&tx, id, column, value)?;
            fields.push(field.to_string());
            Ok(())
        };
        if let Some(subject) = changes.subject {
            set("subject", "subject", Some(subject))?;
        }
        if let Some(description) = changes.description {
            set("description", "description", Some(description))?;
        }
        if let Some(active) = changes.active_form {
            set("active_form", "activeForm", Some(active))?;
        }
        if let Some(owner) = changes.owner {
            set("owner", "owner", Some(owner).filter(|o| !o.is_empty()))?;
        }
        if let Some(patch) = changes.metadata {
            let mut metadata = row.metadata.clone();
            for (key, value) in patch {
                match value {
                    Value::Null => metadata.remove(&key),
                    value => metadata.insert(key, value),
                };
            }
            set("metadata", "metadata", Some(Value::Object(metadata).to_string()))?;
        }
        if let Some(status) = changes.status {
            set("status", "status", Some(status.as_str().to_string()))?;
        }
        if !changes.add_blocks.is_empty() {
            fields.push("blocks".to_string());
        }
        if !changes.add_blocked_by.is_empty() {
            fields.push("blockedBy".to_string());
        }
        let mut added = Vec::new();
        let links = changes.add_blocks.iter().map(|&b| (id, b)).chain(changes.add_blocked_by.iter().map(|&b| (b, id)));
        for (blocker, blocked) in links {
            let n = tx
                .execute("INSERT OR IGNORE INTO blocks (blocker, blocked) VALUES (?1, ?2)", params![blocker, blocked])
                .map_err(e)?;
            if n > 0 {
                added.push((blocker, blocked));
            }
        }
        if !added.is_empty() {
            let edges = self.edges(&tx)?;
            if let Some(cycle) = added.iter().find_map(|&(from, to)| cycle_through(&edges, from, to)) {
                return Err(TaskListError::Cycle(cycle));
            }
        }
        let mut status_change = None;
        if let Some(status) = changes.status {
            if status != row.status {
                status_change = Some((row.status, status));
            }
            if status == TaskStatus::Deleted {
                // A deleted task blocks nothing and waits for nothing.
                tx.execute("DELETE FROM blocks WHERE blocker = ?1 OR blocked = ?1", params![id]).map_err(e)?;
            }
        }
        tx.execute("UPDATE tasks SET updated_ms = ?1 WHERE id = ?2", params![now_ms(), id]).map_err(e)?;
        let row = self.row(&tx, id)?.ok_or_else(|| self.corrupt(format!("task #{id} vanished while updated")))?;
        let task = self.detail(&tx, row)?;
        let mut notes = Vec::new();
        let working = matches!(task.status, TaskStatus::InProgress | TaskStatus::Completed);
        if working && changes.status.is_some() && !task.open_blockers.is_empty() {
            let blockers: Vec<String> = self
                .blocker_statuses(&tx, id)?
                .into_iter()
                .filter(|(_, s)| s.is_open())
                .map(|(b, s)| with_status(b, s))
                .collect();
            notes.push(format!(
                "task #{id} is still blocked by {}: finish those first, or mark them completed",
                blockers.join(", ")
            ));
        }
        tx.commit().map_err(e)?;
        Ok(Updated { task, fields, status_change, notes })
    }

    /// Sets one column of task `id`.
    fn set(&self, conn: &Connection, id: i64, column: &str, value: Option<String>) -> Result<(), TaskListError> {
        let sql = format!("UPDATE tasks SET {column} = ?1 WHERE id = ?2");
        conn.execute(&sql, params![value, id]).map(drop).map_err(|e| self.sql(e))
    }

    /// A connection that may write, the database created when it is missing.
    fn writable(&self) -> Result<Connection, TaskListError> {
        self.open(true)?.ok_or_else(|| TaskListError::Io {
            path: self.path.clone(),
            source: std::io::Error::other("the database could not be created"),
        })
    }

    /// A stored status, or the error saying the database is damaged.
    fn status(&self, text: &str) -> Result<TaskStatus, TaskListError> {
        TaskStatus::parse(text).ok_or_else(|| self.corrupt(format!("a task has the unknown status `{text}`")))
    }

    /// The row of task `id`, deleted or not.
    fn row(&self, conn: &Connection, id: i64) -> Result<Option<Row>, TaskListError> {
        type Raw = (String, String, Option<String>, String, Option<String>, String);
        let raw: Option<Raw> = conn
            .query_row(
                "SELECT subject, description, active_form, status, owner, metadata FROM tasks WHERE id = ?1",
                params![id],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)),
            )
            .optional()
            .map_err(|e| self.sql(e))?;
        let Some((subject, description, active_form, status, owner, metadata)) = raw else { return Ok(None) };
        let status = self.status(&status)?;
        let metadata = match serde_json::from_str::<Value>(&metadata) {
            Ok(Value::Object(map)) => map,
            _ => return Err(self.corrupt(format!("task #{id}'s metadata is not a JSON object"))),
        };
        Ok(Some(Row { id, subject, description, active_form, status, owner, metadata }))
    }

    /// The row of task `id`, or the error naming the tasks that exist.
    fn live(&self, conn: &Connection, id: i64) -> Result<Row, TaskListError> {
        match self.row(conn, id)? {
            Some(row) if row.status != TaskStatus::Deleted => Ok(row),
            found => Err(TaskListError::Unknown {
                id,
                deleted: found.is_some(),
                list: self.label(),
                existing: self.existing(conn)?,
            }),
        }
    }

    /// The error for any id of a list nobody wrote to yet.
    fn unknown_in_empty(&self, id: i64) -> TaskListError {
        TaskListError::Unknown { id, deleted: false, list: self.label(), existing: Vec::new() }
    }

    /// The ids of the tasks that are not deleted, in order.
    fn existing(&self, conn: &Connection) -> Result<Vec<i64>, TaskListError> {
        let mut stmt =
            conn.prepare("SELECT id FROM tasks WHERE status <> 'deleted' ORDER BY id").map_err(|e| self.sql(e))?;
        let ids = stmt.query_map([], |r| r.get::<_, i64>(0)).map_err(|e| self.sql(e))?;
        ids.collect::<Result<Vec<_>, _>>().map_err(|e| self.sql(e))
    }

    /// Every blocker → the tasks it blocks.
    fn edges(&self, conn: &Connection) -> Result<BTreeMap<i64, Vec<i64>>, TaskListError> {
        let mut stmt = conn.prepare("SELECT blocker, blocked FROM blocks").map_err(|e| self.sql(e))?;
        let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))).map_err(|e| self.sql(e))?;
        let mut edges: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for row in rows {
            let (blocker, blocked) = row.map_err(|e| self.sql(e))?;
            edges.entry(blocker).or_default().push(blocked);
        }
        Ok(edges)
    }

    /// The tasks blocking `id`, in order, with their statuses.
    fn blocker_statuses(&self, conn: &Connection, id: i64) -> Result<Vec<(i64, TaskStatus)>, TaskListError> {
        let mut stmt = conn
            .prepare(
                "SELECT b.blocker, t.status FROM blocks b JOIN tasks t ON t.id = b.blocker \
                 WHERE b.blocked = ?1 ORDER BY b.blocker",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map(params![id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))
            .map_err(|e| self.sql(e))?;
        let mut out = Vec::new();
        for row in rows {
            let (blocker, status) = row.map_err(|e| self.sql(e))?;
            out.push((blocker, self.status(&status)?));
        }
        Ok(out)
    }

    /// A row in full: with the tasks it blocks and those blocking it.
    fn detail(&self, conn: &Connection, row: Row) -> Result<TaskDetail, TaskListError> {
        let mut stmt =
            conn.prepare("SELECT blocked FROM blocks WHERE blocker = ?1 ORDER BY blocked").map_err(|e| self.sql(e))?;
        let blocks = stmt.query_map(params![row.id], |r| r.get::<_, i64>(0)).map_err(|e| self.sql(e))?;
        let blocks: Vec<String> = blocks.map(|b| b.map(id_text)).collect::<Result<_, _>>().map_err(|e| self.sql(e))?;
        let blockers = self.blocker_statuses(conn, row.id)?;
        Ok(TaskDetail {
            id: id_text(row.id),
            subject: row.subject,
            description: row.description,
            active_form: row.active_form,
            status: row.status,
            owner: row.owner,
            metadata: row.metadata,
            blocks,
            blocked_by: blockers.iter().map(|&(b, _)| id_text(b)).collect(),
            open_blockers: blockers.iter().filter(|(_, s)| s.is_open()).map(|&(b, _)| id_text(b)).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(i64, i64)]) -> BTreeMap<i64, Vec<i64>> {
        let mut g: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        for &(a, b) in edges {
            g.entry(a).or_default().push(b);
        }
        g
    }

    #[test]
    fn finds_the_cycle_an_edge_closes() {
        let g = graph(&[(1, 2), (2, 3), (3, 1)]);
        assert_eq!(cycle_through(&g, 3, 1), Some(vec![3, 1, 2, 3]));
        let g = graph(&[(1, 2), (2, 1)]);
        assert_eq!(cycle_through(&g, 2, 1), Some(vec![2, 1, 2]));
        let g = graph(&[(1, 2), (2, 3), (1, 3)]);
        assert_eq!(cycle_through(&g, 1, 3), None);
    }
}
