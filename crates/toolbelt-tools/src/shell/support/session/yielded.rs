//! A `Bash` call that starts a session (`tty` or `yield_time_ms`): it waits for the command
//! until its yield, then answers with what it printed — and, when it is still running, the
//! session's id to type into. A command that ended within the yield answers as any finished
//! command does, and leaves no session behind.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolbelt_core::{ToolContext, ToolError};

use crate::process::cgroup::CommandCgroup;
use crate::process::config::BashConfig;
use crate::process::pty::Size;
use crate::process::spawn::Setup;
use crate::shell::support::background::Tasks;
use crate::shell::support::input::BashInput;
use crate::shell::support::result::{BashOutput, Report};
use crate::shell::support::session::{self, DEFAULT_BASH_YIELD, DEFAULT_SIZE, Request, answer};
use crate::tasks::TaskStatus;

/// Whether a call runs its command as a session.
pub fn wanted(input: &BashInput) -> bool {
    input.tty == Some(true) || input.yield_time_ms.is_some()
}

/// How the call's command is to run, as Bash prepared it.
#[derive(Debug)]
pub struct Prepared {
    /// Notices for the model (the sandbox could not apply, the directory moved).
    pub notices: Vec<String>,
    /// The command's cgroup.
    pub cgroup: Option<Arc<CommandCgroup>>,
    /// Its environment and sandbox.
    pub setup: Setup,
    /// The call's time limit.
    pub limit: Duration,
}

/// Starts the session and answers at its yield (within the call's time limit).
pub async fn run(
    cx: &ToolContext,
    input: &BashInput,
    cwd: &Path,
    config: &BashConfig,
    prepared: Prepared,
) -> Result<BashOutput, ToolError> {
    let Prepared { notices, cgroup, setup, limit } = prepared;
    let started = Instant::now();
    let terminal = (input.tty == Some(true)).then(|| Size {
        rows: input.rows.unwrap_or(DEFAULT_SIZE.rows).clamp(5, 200),
        cols: input.cols.unwrap_or(DEFAULT_SIZE.cols).clamp(20, 400),
    });
    let request = Request { command: &input.command, description: input.description.as_deref(), terminal };
    let task = session::start(cx, request, cwd, config, cgroup, setup)?;
    let Some(session) = task.session.clone() else {
        return Err(ToolError::failed("the session started without its input"));
    };
    let asked = match (input.yield_time_ms, input.run_in_background) {
        (Some(ms), _) => Duration::from_millis(ms),
        (None, Some(true)) => Duration::ZERO,
        (None, _) => DEFAULT_BASH_YIELD,
    };
    let wait = asked.min(limit.saturating_sub(Duration::from_secs(1)));
    session::wait(&task, &session, wait, cx).await;
    session.touch();
    let read = answer::read(cx, &task, &session, false);
    let interrupted = cx.is_cancelled();
    if interrupted {
        // The call was cancelled: the session goes with it.
        task.stop();
    }
    let running = read.status == TaskStatus::Running && !interrupted;
    let mut notes = notices;
    if config.persistent {
        notes.push(
            "a session's command starts from a fresh shell: what the persistent shell carries is not in it".into(),
        );
    }
    notes.extend(read.notes);
    if running {
        notes.push(answer::standing(&task.id, read.status, read.exit_code));
    } else {
        // Nothing is left to type into: the call answers as a finished command does.
        cx.with_slot::<Tasks, _>(|t| t.remove(&task.id));
        if let Some(code) = read.exit_code.filter(|&c| c != 0) {
            notes.push(format!("Exit code {code}"));
        }
    }
    Ok(BashOutput {
        stdout: read.output.clone(),
        stderr: String::new(),
        exit_code: read.exit_code,
        signal: None,
        duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        timed_out: false,
        interrupted,
        truncated: read.truncated,
        output_file: (running || read.truncated).then_some(read.log_file),
        cwd: cwd.display().to_string(),
        task_id: running.then(|| task.id.clone()),
        session_id: running.then(|| task.id.clone()),
        notes,
        report: Report::Ran { output: read.output },
    })
}
