//! Background tasks as every family that starts or lists them sees them: where one stands
//! ([`TaskStatus`]), and how a background agent shows among them — its status, its command
//! line, and its report's text. The shell's `TaskOutput`, `TaskStop` and `BackgroundTasks`
//! list commands and agents alike; the agent tools return the same report text. (The task
//! *list* the planning tools keep is another thing: `planning::task_store`.)

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{AgentReport, AgentStatus, human_duration};

/// Where a task stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Still running.
    Running,
    /// Exited with code 0.
    Completed,
    /// Exited with another code, or was killed by a signal we did not send.
    Failed,
    /// Stopped by TaskStop or by the end of the session.
    Killed,
}

impl TaskStatus {
    /// The lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Running => "running",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Killed => "killed",
        }
    }
}

/// An agent's status as a background task's (for TaskOutput, TaskStop and BackgroundTasks).
pub fn task_status(status: AgentStatus) -> TaskStatus {
    match status {
        AgentStatus::Running => TaskStatus::Running,
        AgentStatus::Completed => TaskStatus::Completed,
        AgentStatus::Stopped => TaskStatus::Killed,
        _ => TaskStatus::Failed,
    }
}

/// How an agent shows among background tasks: `Agent(Explore): find the parser`.
pub fn task_command(report: &AgentReport) -> String {
    format!("Agent({}): {}", report.agent_type, report.description)
}

/// The text of a report: the answer, or plainly why the agent stopped short, what it was
/// doing and its last text; then one line saying which agent and how to reach it.
pub fn render_report(report: &AgentReport) -> String {
    let who = match &report.name {
        Some(name) => format!("{} ({name}, {})", report.agent_id, report.agent_type),
        None => format!("{} ({})", report.agent_id, report.agent_type),
    };
    let took = human_duration(Duration::from_millis(report.duration_ms));
    let counts = format!(
        "{} turn{}, {} tool call{}, {took}",
        report.turns,
        if report.turns == 1 { "" } else { "s" },
        report.tool_calls,
        if report.tool_calls == 1 { "" } else { "s" }
    );
    match report.status {
        AgentStatus::Completed => {
            let text =
                if report.text.trim().is_empty() { "(it finished without writing an answer)" } else { &report.text };
            format!(
                "{text}\n\n[Agent {who} completed: {counts}. Continue it with SendMessage{{to: \"{}\"}}.]",
                report.agent_id
            )
        }
        AgentStatus::Running => {
            let mut text = format!(
                "Agent {who} is running in the background ({counts} so far). Read its result with \
                 TaskOutput{{task_id: \"{id}\"}} (it waits for the agent to finish), send it more with \
                 SendMessage{{to: \"{id}\"}}, stop it with TaskStop{{task_id: \"{id}\"}}.",
                id = report.agent_id
            );
            if let Some(doing) = &report.doing {
                text.push_str(&format!("\nLast seen doing: {doing}."));
            }
            if !report.text.trim().is_empty() {
                text.push_str(&format!("\nIts latest text:\n{}", report.text));
            }
            text
        }
        status => {
            let why = report.error.clone().unwrap_or_else(|| status.as_str().replace('_', " "));
            let mut text = format!("Agent {who} stopped before finishing ({}): {why}.", status.as_str());
            if let Some(doing) = &report.doing {
                text.push_str(&format!("\nIt was doing: {doing}."));
            }
            if report.text.trim().is_empty() {
                text.push_str("\nIt had written no text yet.");
            } else {
                text.push_str(&format!("\nIts last text:\n{}", report.text));
            }
            text.push_str(&format!(
                "\n\n[{counts}. Its work so far is kept: continue it with SendMessage{{to: \"{}\"}}.]",
                report.agent_id
            ));
            text
        }
    }
}

/// A scheduled job's run as `TaskOutput` shows it: how it went, then its output.
pub(crate) fn render_run(run: &toolbelt_core::RunReport) -> String {
    let ended = run.ended_at.as_deref().map(|e| format!(", ended {e}")).unwrap_or_default();
    let mut text = format!(
        "Run {} of job {} is {} (started {}{ended}; {}).",
        run.run_id,
        run.job_id,
        run.status.as_str(),
        run.started_at,
        run.reason
    );
    if run.output.trim().is_empty() {
        text.push_str("\nNo output.");
    } else {
        text.push_str(&format!("\nOutput:\n{}", run.output.trim_end()));
    }
    if run.truncated {
        text.push_str("\n[the output was cut to the first 16 KiB]");
    }
    text
}
