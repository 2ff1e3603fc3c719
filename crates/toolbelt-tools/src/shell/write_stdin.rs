//! `WriteStdin`: types into an interactive session started by `Bash` (`tty: true` or
//! `yield_time_ms`), waits a moment, and returns what the program printed since — as a person
//! would read it on the screen — with its exit code once it ended. Codex's `write_stdin`.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, PlannedTool, Render, SideEffects, TimeLimit, ToolContext,
    ToolError, ToolSpec,
};

use crate::process::capture::HeadTail;
use crate::process::procfs;
use crate::shell::support::background::Task;
use crate::shell::support::session::{self, Session, typed};
use crate::tasks::TaskStatus;

/// How long a call waits for output when it does not say.
pub const DEFAULT_YIELD: Duration = Duration::from_millis(250);
/// The longest a call may wait.
pub const MAX_YIELD: Duration = Duration::from_secs(300);

/// Input of `WriteStdin`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteStdinInput {
    /// The session's id, as Bash returned it (`session_1`).
    pub session_id: String,
    /// What to type, sent as is: end a line with "\n" to enter it. Control keys are their
    /// characters: "\u0003" is Ctrl-C, "\u0004" Ctrl-D, "\u001b" Escape, "\u001b[A" the up
    /// arrow. Empty or absent: just read what came since.
    pub chars: Option<String>,
    /// How long to wait for output after typing, in milliseconds (default 250, at most
    /// 300000); the call returns sooner when the program ends.
    pub yield_time_ms: Option<u64>,
    /// After typing, close the program's input (end of file; for a terminal, Ctrl-D).
    pub close_stdin: Option<bool>,
    /// Also return the whole screen as it reads now (for full-screen programs).
    pub screen: Option<bool>,
}

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

/// The `WriteStdin` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteStdin;

const DESCRIPTION: &str = "Types into an interactive session started by Bash with `tty: true` (a terminal: \
REPLs, editors, prompts, full-screen programs) or `yield_time_ms` (a pipe), then waits `yield_time_ms` and returns \
what the program printed since, as its screen reads (colours and redrawn progress bars resolved), with the exit \
code once it ended. End a line with \"\\n\" to enter it; \"\\u0003\" is Ctrl-C. Empty `chars` just reads. \
`screen: true` adds the whole screen. Each line typed into a shell is judged as a Bash command is; keys typed \
into other programs as running that program again. Sessions are background tasks: BackgroundTasks lists them, \
TaskStop ends one with every process it started; an unused session ends by itself after a while.";

/// What a call was judged to send: what is typed and not yet run once it is sent; `None`
/// when the session did not exist yet when the call was judged (a batch judges its calls
/// before the one starting the session ran), so the typing is judged when the call runs.
#[derive(Debug)]
pub struct Typing {
    after: Option<typed::Typist>,
}

impl PlannedTool for WriteStdin {
    type Input = WriteStdinInput;
    type Output = WriteStdinOutput;
    type Plan = Typing;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("WriteStdin", DESCRIPTION)
            .title("Type into an interactive session")
            .aliases(["write_stdin"])
            .param_alias("input", "chars")
            .param_alias("text", "chars")
            .param_alias("task_id", "session_id")
            .category(Category::Shell)
            .tags(["shell", "terminal", "interactive", "stdin", "repl", "session"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: true })
            .bash_rules()
            .streams()
            .search_hint("type input stdin terminal tty repl interactive prompt session keys ctrl-c editor")
    }

    fn access(&self, input: &WriteStdinInput, cx: &ToolContext) -> Result<(Access, Typing), ToolError> {
        let Ok((_, session)) = session::find(cx, &input.session_id) else {
            return Ok((Access::exclusive(), Typing { after: None }));
        };
        let (access, after) = judge_typing(&session, input.chars.as_deref().unwrap_or_default(), cx)?;
        Ok((access, Typing { after: Some(after) }))
    }

    fn timeout(&self, input: &WriteStdinInput, _cx: &ToolContext) -> Option<TimeLimit> {
        // Room beyond the wait, so the answer (rather than the runtime's timeout) ends the call.
        Some(TimeLimit::Asked(yield_for(input.yield_time_ms) + Duration::from_secs(5)))
    }

    async fn call(&self, input: WriteStdinInput, plan: Typing, cx: ToolContext) -> Result<WriteStdinOutput, ToolError> {
        let (task, session) = session::find(&cx, &input.session_id)?;
        session.touch();
        let chars = input.chars.unwrap_or_default();
        let after = match plan.after {
            Some(after) => after,
            None => {
                let (access, after) = judge_typing(&session, &chars, &cx)?;
                cx.authorize(access).await?;
                after
            }
        };
        if !chars.is_empty() {
            if task.status().0 != TaskStatus::Running {
                return Err(ToolError::failed(format!(
                    "{}; nothing can be typed into it. Read what is left with TaskOutput.",
                    standing(&task.id, task.status().0, task.status().1)
                )));
            }
            session.write(chars.as_bytes()).await?;
            session.set_typist(after);
        }
        if input.close_stdin == Some(true) {
            session.close_input().await?;
        }
        let limit = yield_for(input.yield_time_ms).min(cx.limits().timeout.saturating_sub(Duration::from_secs(1)));
        session::wait(&task, &session, limit, &cx).await;
        session.touch();
        Ok(read(&cx, &task, &session, input.screen == Some(true)))
    }
}

/// What typing `chars` into `session` touches, and what is typed and not yet run after it.
fn judge_typing(session: &Session, chars: &str, cx: &ToolContext) -> Result<(Access, typed::Typist), ToolError> {
    if chars.is_empty() {
        return Ok((Access::shared(), session.typist()));
    }
    let program = reading_program(session);
    typed::judge(typed::reader_of(&program), &program, &session.command, &session.typist(), chars, cx)
}

/// What a session printed since the last read, within the output budget, and where it stands.
pub fn read(cx: &ToolContext, task: &Task, session: &Session, with_screen: bool) -> WriteStdinOutput {
    // How it stands first: once it has ended, everything it printed is on the screen.
    let (status, exit_code) = task.status();
    let (text, lost) = session.take_new();
    task.skip_to_end();
    let budget = cx.limits().output_budget.saturating_sub(800);
    let total = text.len() as u64;
    let rendered = HeadTail::from_parts(text.into_bytes(), &[], total).render(budget);
    let screen = with_screen.then(|| session.snapshot());
    if status != TaskStatus::Running {
        session.retire();
    }
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

/// The wait a call asks for, within the cap.
fn yield_for(asked: Option<u64>) -> Duration {
    asked.map_or(DEFAULT_YIELD, Duration::from_millis).min(MAX_YIELD)
}

/// The program reading what is typed: in a terminal, the newest of the foreground group's
/// processes that started none of the others (`bash -c 'python3'` waits while `python3`
/// reads); else the first word of the session's command.
fn reading_program(session: &Session) -> String {
    if let Some(group) = session.foreground() {
        let procs: Vec<procfs::Stat> = procfs::all().into_iter().filter(|p| p.pgrp == group && !p.zombie()).collect();
        let leaf = procs.iter().filter(|p| !procs.iter().any(|c| c.ppid == p.pid)).max_by_key(|p| p.starttime);
        if let Some(leaf) = leaf
            && let Ok(cmdline) = std::fs::read(format!("/proc/{}/cmdline", leaf.pid))
            && let Some(first) = cmdline.split(|&b| b == 0).next().filter(|a| !a.is_empty())
        {
            return String::from_utf8_lossy(first).into_owned();
        }
    }
    session.command.split_whitespace().next().unwrap_or_default().to_string()
}
