//! `WriteStdin`: types into an interactive session started by `Bash` (`tty: true` or
//! `yield_time_ms`), waits a moment, and returns what the program printed since — as a person
//! would read it on the screen — with its exit code once it ended. Codex's `write_stdin`.
//! What it answers is [`WriteStdinOutput`] (`support/session/answer.rs`, which `Bash` and
//! `TaskOutput` answer a session's reads with too).

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, PlannedTool, SideEffects, TimeLimit, ToolContext, ToolError,
    ToolSpec,
};

use crate::shell::support::session::answer::{read, standing};
use crate::shell::support::session::state::judge_typing;
use crate::shell::support::session::{self, typed};
use crate::tasks::TaskStatus;

pub use crate::shell::support::session::answer::WriteStdinOutput;

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

/// What a call was judged to send: what is typed and not yet run once it is sent, and the
/// generation of the session's typing it was judged against; `None` when the session did not
/// exist yet when the call was judged (a batch judges its calls before the one starting the
/// session ran). Either way, a call whose judgement is out of date when it runs is judged
/// again then.
#[derive(Debug)]
pub struct Typing {
    judged: Option<(typed::Typist, u64)>,
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
            return Ok((Access::exclusive(), Typing { judged: None }));
        };
        let chars = input.chars.as_deref().unwrap_or_default();
        let (access, after, generation) = judge_typing(&session, chars, input.close_stdin == Some(true), cx)?;
        Ok((access, Typing { judged: Some((after, generation)) }))
    }

    fn timeout(&self, input: &WriteStdinInput, _cx: &ToolContext) -> Option<TimeLimit> {
        // Room beyond the wait, so the answer (rather than the runtime's timeout) ends the call.
        Some(TimeLimit::Asked(yield_for(input.yield_time_ms) + Duration::from_secs(5)))
    }

    async fn call(&self, input: WriteStdinInput, plan: Typing, cx: ToolContext) -> Result<WriteStdinOutput, ToolError> {
        let (task, session) = session::find(&cx, &input.session_id)?;
        session.touch();
        let chars = input.chars.unwrap_or_default();
        let close = input.close_stdin == Some(true);
        if !chars.is_empty() || close {
            if task.status().0 != TaskStatus::Running {
                return Err(ToolError::failed(format!(
                    "{}; nothing can be typed into it. Read what is left with TaskOutput.",
                    standing(&task.id, task.status().0, task.status().1)
                )));
            }
            // One call types at a time, from the state it was judged against.
            let _writing = session.writing.lock().await;
            let after = match plan.judged {
                Some((after, generation)) if generation == session.typist().1 => after,
                _ => {
                    let (access, after, _) = judge_typing(&session, &chars, close, &cx)?;
                    cx.authorize(access).await?;
                    after
                }
            };
            // Until the write is whole, what the program was typed is not known.
            session.set_typist(after.writing());
            session.write(chars.as_bytes()).await?;
            if close {
                session.close_input().await?;
            }
            session.set_typist(after);
        }
        let limit = yield_for(input.yield_time_ms).min(cx.limits().timeout.saturating_sub(Duration::from_secs(1)));
        session::wait(&task, &session, limit, &cx).await;
        session.touch();
        Ok(read(&cx, &task, &session, input.screen == Some(true)))
    }
}

/// The wait a call asks for, within the cap.
fn yield_for(asked: Option<u64>) -> Duration {
    asked.map_or(DEFAULT_YIELD, Duration::from_millis).min(MAX_YIELD)
}
