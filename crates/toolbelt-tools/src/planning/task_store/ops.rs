//! Reading and changing a task list: each call is one transaction, whatever keeps the list
//! ([`super::tx`]).
//!
//! Changes take the list's write lock when they begin (`BEGIN IMMEDIATE` in SQLite, the
//! list's row `FOR UPDATE` in PostgreSQL), so an update reads the task and writes it back
//! with no other writer in between: two processes (or machines) merging metadata into one
//! task, adding blockers to it, or claiming it at the same moment, are served one after the
//! other. Reads run in a snapshot and never wait for a writer. A change that would make a
//! cycle of blockers, names a task that does not exist, or claims a task someone else owns,
//! is refused whole: nothing of it is kept.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};

use serde_json::{Map, Value};

use super::store::{TaskListError, TaskListStore};
use super::tx::{Column, ListTx, NewRow};
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
        let Some(mut tx) = self.read()? else { return Ok(listing) };
        let mut open: BTreeMap<i64, Vec<String>> = BTreeMap::new();
        for (blocked, blocker) in tx.open_blocks()? {
            open.entry(blocked).or_default().push(id_text(blocker));
        }
        for (id, subject, status, owner) in tx.lines()? {
            let status = self.status(&status)?;
            let blocked_by = open.remove(&id).unwrap_or_default();
            listing.tasks.push(TaskLine { id: id_text(id), subject, status, owner, blocked_by });
        }
        tx.commit()?;
        Ok(listing)
    }

    /// The task `id` in full.
    pub(crate) fn get(&self, id: i64) -> Result<TaskDetail, TaskListError> {
        let Some(mut tx) = self.read()? else { return Err(self.unknown_in_empty(id)) };
        let row = self.live(&mut *tx, id)?;
        let detail = self.detail(&mut *tx, row)?;
        tx.commit()?;
        Ok(detail)
    }

    /// Adds a pending task; returns it.
    pub(crate) fn create(&self, new: NewTask) -> Result<TaskDetail, TaskListError> {
        let mut tx = self.write()?;
        let metadata: Map<String, Value> = new.metadata.into_iter().filter(|(_, v)| !v.is_null()).collect();
        let metadata = Value::Object(metadata).to_string();
        let row = NewRow {
            subject: &new.subject,
            description: &new.description,
            active_form: new.active_form.as_deref(),
            metadata: &metadata,
            now_ms: now_ms(),
        };
        let id = tx.insert(&row)?;
        let row = self.live(&mut *tx, id)?;
        let detail = self.detail(&mut *tx, row)?;
        tx.commit()?;
        Ok(detail)
    }

    /// Applies `changes` to the task `id`, all or nothing. A task that has an owner is taken:
    /// giving it another owner is refused until its owner is cleared (`""`), so two agents
    /// that claim one task at once never both get it.
    pub(crate) fn update(&self, id: i64, changes: Changes) -> Result<Updated, TaskListError> {
        if changes.is_empty() {
            return Err(TaskListError::NothingToUpdate);
        }
        let mut tx = self.write()?;
        let tx = &mut *tx;
        let row = self.live(tx, id)?;
        for &other in changes.add_blocks.iter().chain(&changes.add_blocked_by) {
            if other == id {
                return Err(TaskListError::Cycle(vec![id, id]));
            }
            self.live(tx, other)?;
        }
        if let (Some(new), Some(held)) = (changes.owner.as_deref().filter(|o| !o.is_empty()), row.owner.as_deref())
            && new != held
        {
            return Err(TaskListError::Claimed { id, owner: held.to_string() });
        }
        let mut fields = Vec::new();
        let mut set = |tx: &mut dyn ListTx, column: Column, field: &str, value: Option<&str>| {
            tx.set(id, column, value)?;
            fields.push(field.to_string());
            Ok::<_, TaskListError>(())
        };
        if let Some(subject) = &changes.subject {
            set(tx, Column::Subject, "subject", Some(subject))?;
        }
        if let Some(description) = &changes.description {
            set(tx, Column::Description, "description", Some(description))?;
        }
        if let Some(active) = &changes.active_form {
            set(tx, Column::ActiveForm, "activeForm", Some(active))?;
        }
        if let Some(owner) = &changes.owner {
            set(tx, Column::Owner, "owner", Some(owner.as_str()).filter(|o| !o.is_empty()))?;
        }
        if let Some(patch) = changes.metadata {
            let mut metadata = row.metadata.clone();
            for (key, value) in patch {
                match value {
                    Value::Null => metadata.remove(&key),
                    value => metadata.insert(key, value),
                };
            }
            set(tx, Column::Metadata, "metadata", Some(&Value::Object(metadata).to_string()))?;
        }
        if let Some(status) = changes.status {
            set(tx, Column::Status, "status", Some(status.as_str()))?;
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
            if tx.link(blocker, blocked)? {
                added.push((blocker, blocked));
            }
        }
        if !added.is_empty() {
            let mut edges: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
            for (blocker, blocked) in tx.edges()? {
                edges.entry(blocker).or_default().push(blocked);
            }
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
                tx.unlink_all(id)?;
            }
        }
        tx.touch(id, now_ms())?;
        let row = self.row(tx, id)?.ok_or_else(|| self.corrupt(format!("task #{id} vanished while updated")))?;
        let task = self.detail(tx, row)?;
        let mut notes = Vec::new();
        let working = matches!(task.status, TaskStatus::InProgress | TaskStatus::Completed);
        if working && changes.status.is_some() && !task.open_blockers.is_empty() {
            let blockers: Vec<String> = self
                .blocker_statuses(tx, id)?
                .into_iter()
                .filter(|(_, s)| s.is_open())
                .map(|(b, s)| with_status(b, s))
                .collect();
            notes.push(format!(
                "task #{id} is still blocked by {}: finish those first, or mark them completed",
                blockers.join(", ")
            ));
        }
        tx.commit()?;
        Ok(Updated { task, fields, status_change, notes })
    }

    /// A stored status, or the error saying the list is damaged.
    fn status(&self, text: &str) -> Result<TaskStatus, TaskListError> {
        TaskStatus::parse(text).ok_or_else(|| self.corrupt(format!("a task has the unknown status `{text}`")))
    }

    /// The row of task `id`, deleted or not.
    fn row(&self, tx: &mut dyn ListTx, id: i64) -> Result<Option<Row>, TaskListError> {
        let Some((subject, description, active_form, status, owner, metadata)) = tx.row(id)? else { return Ok(None) };
        let status = self.status(&status)?;
        let metadata = match serde_json::from_str::<Value>(&metadata) {
            Ok(Value::Object(map)) => map,
            _ => return Err(self.corrupt(format!("task #{id}'s metadata is not a JSON object"))),
        };
        Ok(Some(Row { id, subject, description, active_form, status, owner, metadata }))
    }

    /// The row of task `id`, or the error naming the tasks that exist.
    fn live(&self, tx: &mut dyn ListTx, id: i64) -> Result<Row, TaskListError> {
        match self.row(tx, id)? {
            Some(row) if row.status != TaskStatus::Deleted => Ok(row),
            found => Err(TaskListError::Unknown {
                id,
                deleted: found.is_some(),
                list: self.label(),
                existing: tx.existing()?,
            }),
        }
    }

    /// The error for any id of a list nobody wrote to yet.
    fn unknown_in_empty(&self, id: i64) -> TaskListError {
        TaskListError::Unknown { id, deleted: false, list: self.label(), existing: Vec::new() }
    }

    /// The tasks blocking `id`, in order, with their statuses.
    fn blocker_statuses(&self, tx: &mut dyn ListTx, id: i64) -> Result<Vec<(i64, TaskStatus)>, TaskListError> {
        tx.blocker_statuses(id)?.into_iter().map(|(blocker, status)| Ok((blocker, self.status(&status)?))).collect()
    }

    /// A row in full: with the tasks it blocks and those blocking it.
    fn detail(&self, tx: &mut dyn ListTx, row: Row) -> Result<TaskDetail, TaskListError> {
        let blocks: Vec<String> = tx.blocks(row.id)?.into_iter().map(id_text).collect();
        let blockers = self.blocker_statuses(tx, row.id)?;
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
