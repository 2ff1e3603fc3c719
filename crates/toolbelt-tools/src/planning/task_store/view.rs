//! What the task list tools return: a task in full ([`TaskDetail`]), a task as the list
//! shows it ([`TaskLine`]), and their text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::store::show_id;

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Removed from the list (for good).
    Deleted,
}

impl TaskStatus {
    /// The status as stored and shown (`in_progress`).
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Pending => "pending",
            TaskStatus::InProgress => "in_progress",
            TaskStatus::Completed => "completed",
            TaskStatus::Deleted => "deleted",
        }
    }

    /// The status stored as `text`.
    pub fn parse(text: &str) -> Option<TaskStatus> {
        [TaskStatus::Pending, TaskStatus::InProgress, TaskStatus::Completed, TaskStatus::Deleted]
            .into_iter()
            .find(|s| s.as_str() == text)
    }

    /// Whether a task in this status still blocks the tasks it blocks.
    pub fn is_open(self) -> bool {
        matches!(self, TaskStatus::Pending | TaskStatus::InProgress)
    }
}

/// A task in full.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskDetail {
    /// Its id (what `taskId` takes).
    pub id: String,
    /// A short title, in the imperative.
    pub subject: String,
    /// What is to be done.
    pub description: String,
    /// The subject in the present continuous, shown while the task is in progress.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
    /// Where it stands.
    pub status: TaskStatus,
    /// Who is working on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// Whatever was attached to it.
    pub metadata: Map<String, Value>,
    /// The tasks that cannot start until this one is completed.
    pub blocks: Vec<String>,
    /// The tasks that must be completed before this one can start, done or not.
    pub blocked_by: Vec<String>,
    /// Those of `blockedBy` not completed yet.
    pub open_blockers: Vec<String>,
}

impl TaskDetail {
    /// The task as text: subject, status, owner, description, blockers and metadata.
    pub fn text(&self) -> String {
        let mut text = format!("Task #{}: {}\nStatus: {}", self.id, self.subject, self.status.as_str());
        if let Some(owner) = &self.owner {
            text.push_str(&format!("\nOwner: {owner}"));
        }
        if let Some(active) = &self.active_form {
            text.push_str(&format!("\nActive form: {active}"));
        }
        if !self.description.is_empty() {
            text.push_str(&format!("\nDescription: {}", self.description));
        }
        if !self.blocked_by.is_empty() {
            let shown: Vec<String> = self
                .blocked_by
                .iter()
                .map(|id| match self.open_blockers.contains(id) {
                    true => format!("#{id} (open)"),
                    false => format!("#{id} (done)"),
                })
                .collect();
            text.push_str(&format!("\nBlocked by: {}", shown.join(", ")));
        }
        if !self.blocks.is_empty() {
            text.push_str(&format!("\nBlocks: {}", hashed(&self.blocks)));
        }
        if !self.metadata.is_empty() {
            text.push_str(&format!("\nMetadata: {}", Value::Object(self.metadata.clone())));
        }
        text
    }
}

/// A task as the list shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskLine {
    /// Its id (what `taskId` takes).
    pub id: String,
    /// Its subject.
    pub subject: String,
    /// Where it stands.
    pub status: TaskStatus,
    /// Who is working on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
    /// The tasks blocking it that are not completed yet.
    pub blocked_by: Vec<String>,
}

impl TaskLine {
    /// `#3 [pending] Ship it (owner: alice) [blocked by #1, #2]`.
    pub fn text(&self) -> String {
        let mut text = format!("#{} [{}] {}", self.id, self.status.as_str(), self.subject);
        if let Some(owner) = &self.owner {
            text.push_str(&format!(" (owner: {owner})"));
        }
        if !self.blocked_by.is_empty() {
            text.push_str(&format!(" [blocked by {}]", hashed(&self.blocked_by)));
        }
        text
    }
}

/// The tasks of a list, in id order.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TaskListing {
    /// The list's name, when it was chosen by name (absent for a project's own list).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list: Option<String>,
    /// Every task but deleted ones, in id order.
    pub tasks: Vec<TaskLine>,
}

/// "#1, #2" from ids as `taskId` takes them.
pub fn hashed(ids: &[String]) -> String {
    ids.iter().map(|id| format!("#{id}")).collect::<Vec<_>>().join(", ")
}

/// An id as outputs carry it ("3").
pub fn id_text(id: i64) -> String {
    id.to_string()
}

/// Parses a `taskId` ("3", or "#3" as results show it).
pub fn parse_id(text: &str) -> Option<i64> {
    let digits = text.trim().trim_start_matches('#');
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok().filter(|&id| id > 0)
}

/// "#3 (in_progress)" for a note about a blocker.
pub fn with_status(id: i64, status: TaskStatus) -> String {
    format!("{} ({})", show_id(id), status.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_with_or_without_the_hash() {
        assert_eq!(parse_id("3"), Some(3));
        assert_eq!(parse_id("#12"), Some(12));
        assert_eq!(parse_id(" 7 "), Some(7));
        for bad in ["", "#", "0", "-1", "x", "1.5", "99999999999999999999"] {
            assert_eq!(parse_id(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_line_shows_owner_and_open_blockers() {
        let line = TaskLine {
            id: "3".into(),
            subject: "Ship it".into(),
            status: TaskStatus::Pending,
            owner: Some("alice".into()),
            blocked_by: vec!["1".into(), "2".into()],
        };
        assert_eq!(line.text(), "#3 [pending] Ship it (owner: alice) [blocked by #1, #2]");
    }
}
