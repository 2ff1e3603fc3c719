//! `toolbelt tasks`: the task list for a person — the list the tools of a session started
//! here would work on (the project's own, or the one `--task-list` / `TOOLBELT_TASK_LIST`
//! names), as a table.

use std::process::ExitCode;

use serde_json::json;
use toolbelt_tools::planning::{TaskLine, TaskListing, TaskStatus};

use crate::Usage;
use crate::cli::{Global, TasksArgs};
use crate::cmd::Setup;
use crate::output::line;

pub fn run(global: &Global, args: &TasksArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    let store = setup.task_store().map_err(|e| Usage(e.to_string()))?;
    // Off the runtime's thread: a list in shared storage is read with a blocking client.
    let listing = std::thread::scope(|scope| scope.spawn(|| store.list()).join())
        .map_err(|_| anyhow::anyhow!("reading the task list failed"))??;
    if args.json {
        let value = match &store.shared {
            Some(shared) => json!({"list": listing.list, "storage": shared.server(), "tasks": listing.tasks}),
            None => json!({"list": listing.list, "file": store.path, "tasks": listing.tasks}),
        };
        line(&value.to_string())?;
    } else {
        line(&format!("{} ({})", capitalized(&store.label()), store.place()))?;
        line(&table(&listing))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// "The task list `x`" from "the task list `x`".
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// A summary line, then one row per task: id, status, owner, open blockers and subject
/// (last, so a long one needs no padding).
fn table(listing: &TaskListing) -> String {
    if listing.tasks.is_empty() {
        return "No tasks yet (agents add them with TaskCreate).".to_string();
    }
    let count = |status: TaskStatus| listing.tasks.iter().filter(|t| t.status == status).count();
    let mut out = format!(
        "{} task(s): {} pending, {} in progress, {} completed\n",
        listing.tasks.len(),
        count(TaskStatus::Pending),
        count(TaskStatus::InProgress),
        count(TaskStatus::Completed)
    );
    let rows: Vec<[String; 5]> = listing.tasks.iter().map(row).collect();
    let header = ["ID", "STATUS", "OWNER", "BLOCKED BY", "SUBJECT"].map(str::to_string);
    let mut widths = [0; 4];
    for r in rows.iter().chain([&header]) {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let lines: Vec<String> = [&header]
        .into_iter()
        .chain(&rows)
        .map(|r| {
            let mut text: String = widths.iter().zip(r).map(|(w, cell)| format!("{cell:<w$}  ")).collect();
            text.push_str(&r[4]);
            text
        })
        .collect();
    out.push_str(&lines.join("\n"));
    out
}

fn row(task: &TaskLine) -> [String; 5] {
    let blockers: Vec<String> = task.blocked_by.iter().map(|id| format!("#{id}")).collect();
    [
        format!("#{}", task.id),
        task.status.as_str().to_string(),
        task.owner.as_deref().map_or_else(|| "-".to_string(), printable),
        if blockers.is_empty() { "-".to_string() } else { blockers.join(",") },
        printable(&task.subject),
    ]
}

/// `text` with control characters (line breaks, terminal escapes) shown as spaces: a task's
/// text is whatever an agent wrote, and it must not reshape or restyle the terminal.
fn printable(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(id: &str, status: TaskStatus, owner: Option<&str>, blocked_by: &[&str], subject: &str) -> TaskLine {
        TaskLine {
            id: id.into(),
            subject: subject.into(),
            status,
            owner: owner.map(Into::into),
            blocked_by: blocked_by.iter().map(|b| b.to_string()).collect(),
        }
    }

    #[test]
    fn rows_line_up_and_escapes_are_defused() {
        let listing = TaskListing {
            list: None,
            tasks: vec![
                task("1", TaskStatus::Completed, Some("alice"), &[], "Write the parser"),
                task("2", TaskStatus::InProgress, None, &["1", "3"], "Test\nit\u{1b}[31m"),
                task("10", TaskStatus::Pending, Some("bob"), &[], "Ship"),
            ],
        };
        assert_eq!(
            table(&listing),
            "3 task(s): 1 pending, 1 in progress, 1 completed\n\
             ID   STATUS       OWNER  BLOCKED BY  SUBJECT\n\
             #1   completed    alice  -           Write the parser\n\
             #2   in_progress  -      #1,#3       Test it [31m\n\
             #10  pending      bob    -           Ship"
        );
        assert_eq!(capitalized("the task list `x`"), "The task list `x`");
    }
}
