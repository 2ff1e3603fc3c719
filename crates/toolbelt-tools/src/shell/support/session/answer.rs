//! What a read of a session answers — from `WriteStdin`, from the `Bash` call that started
//! it, and from `TaskOutput`: what it printed since the last read as its screen shows it,
//! within the output budget, and where it stands.

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{Content, Render, ToolContext};

use crate::process::capture::HeadTail;
use crate::shell::support::background::Task;
use crate::shell::support::session::state::Session;
use crate::tasks::TaskStatus;

/// The structured result of `WriteStdin`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteStdinOutput {
    /// The session's id.
    pub session_id: String,
    /// What the program printed since the last read, as the screen shows it (for a
    /// full-screen program, its screen).
    pub output: String,
    /// Whether it is still running.
    pub running: bool,
    /// Where it stands.
    pub status: TaskStatus,
    /// Its exit code, once it exited on its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The whole screen, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screen: Option<String>,
    /// Part of the output was left out (every byte is in `log_file`).
    pub truncated: bool,
    /// The file holding every byte the program printed.
    pub log_file: String,
    /// What else the model should know.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Render for WriteStdinOutput {
    /// The output (or a note that there was none), the screen when asked, then where the
    /// session stands and what to do next.
    fn render(&self) -> Vec<Content> {
        let mut text = if self.output.is_empty() { "(no new output)".to_string() } else { self.output.clone() };
        if let Some(screen) = &self.screen {
            text.push_str(&format!("\n\n[screen]\n{screen}\n[end of screen]"));
        }
        for note in &self.notes {
            text.push_str(&format!("\n[{note}]"));
        }
        text.push_str(&format!("\n[{}]", standing(&self.session_id, self.status, self.exit_code)));
        vec![Content::text(text)]
    }
}

/// Where a session stands, in a sentence that says what to do next.
pub fn standing(id: &str, status: TaskStatus, exit_code: Option<i32>) -> String {
    match (status, exit_code) {
        (TaskStatus::Running, _) => format!(
            "session {id} is still running: WriteStdin types into it (empty chars just reads), TaskStop ends it"
        ),
        (_, Some(code)) => format!("session {id} ended with exit code {code}"),
        (status, None) => format!("session {id} ended ({})", status.as_str()),
    }
}

/// What a session printed since the last read, within the output budget, and where it stands.
pub fn read(cx: &ToolContext, task: &Task, session: &Session, with_screen: bool) -> WriteStdinOutput {
    // How it stands first: once it has ended, everything it printed was read in.
    let (status, exit_code) = task.status();
    let (text, lost) = session.take_new();
    task.skip_to_end();
    let budget = cx.limits().output_budget.saturating_sub(800);
    let total = text.len() as u64;
    let rendered = HeadTail::from_parts(text.into_bytes(), &[], total).render(budget);
    let screen = with_screen.then(|| session.snapshot());
    let log = crate::fs::shown::shown(cx, &task.log);
    let mut notes = Vec::new();
    if lost {
        notes.push(format!("earlier lines scrolled past unread; every byte the program printed is in {log}"));
    } else if rendered.cut {
        notes.push(format!("the output was too long to show whole; every byte is in {log}"));
    }
    if session.idled() {
        notes.push(format!(
            "it was ended after {} without use (`shell.session_idle_timeout`)",
            toolbelt_core::human_duration(session.idle_limit())
        ));
    }
    WriteStdinOutput {
        session_id: task.id.clone(),
        output: rendered.text,
        running: status == TaskStatus::Running,
        status,
        exit_code,
        screen,
        truncated: rendered.cut || lost,
        log_file: task.log.display().to_string(),
        notes,
    }
}
