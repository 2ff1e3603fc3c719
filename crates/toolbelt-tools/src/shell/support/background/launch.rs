//! Starting a background task: what it runs ([`TaskCommand`]), a monitor's limits and pump,
//! and the call's answer once it runs.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use toolbelt_core::{ToolContext, ToolError};

use super::{Recorded, Task, Tasks, lock, one_line};
use crate::fs::shown::shown;
use crate::process::cgroup::CommandCgroup;
use crate::process::config::BashConfig;
use crate::process::foreground::spawn_error;
use crate::process::made::PlacesWatch;
use crate::process::spawn::{Launch, Setup, Sink, Spawned, spawn};
use crate::process::spill::SpillTarget;
use crate::shell::support::input::BashInput;
use crate::shell::support::result::{BashOutput, Report};

/// What a monitor may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorLimits {
    /// How long it may run; `None` for a persistent one (until `TaskStop` or the session's
    /// end).
    pub timeout: Option<Duration>,
}

/// How a monitor's output is read: its limits, and what starts the task that reads it (the
/// pump, [`crate::shell::support::monitor::start`]).
#[derive(Debug, Clone, Copy)]
pub struct Pumping {
    /// Its limits.
    pub limits: MonitorLimits,
    /// Starts the pump.
    pub start: fn(Pump),
}

/// Everything a monitor's pump works on: the task, the command's streams and leader, the
/// log both streams go to, its limits and where its events go.
pub struct Pump {
    /// The task.
    pub task: Arc<Task>,
    /// The command's stdout.
    pub stdout: Option<tokio::process::ChildStdout>,
    /// The command's stderr.
    pub stderr: Option<tokio::process::ChildStderr>,
    /// The task's log.
    pub log: std::fs::File,
    /// The command's `bash`.
    pub child: crate::process::spawn::Leader,
    /// The control pipe every process of the tree inherits.
    pub control: crate::process::spawn::Control,
    /// Its limits.
    pub limits: MonitorLimits,
    /// The session's task-event sink.
    pub events: toolbelt_core::EventSink,
}

/// What a background task runs, and how it is shown.
#[derive(Debug, Clone, Copy)]
pub struct TaskCommand<'a> {
    /// What its id starts with (`bash` gives `bash_1`).
    pub prefix: &'static str,
    /// The `bash -c` line to run.
    pub run: &'a str,
    /// The command as the call gave it (what `BackgroundTasks` and `TaskStop` show).
    pub shown: &'a str,
    /// What it does, as the call described it.
    pub description: Option<&'a str>,
    /// Set for a monitor: its stdout lines become events, read by the pump it starts.
    pub monitor: Option<Pumping>,
}

impl<'a> From<&'a BashInput> for TaskCommand<'a> {
    /// A Bash command runs as given.
    fn from(input: &'a BashInput) -> Self {
        Self {
            prefix: "bash",
            run: &input.command,
            shown: &input.command,
            description: input.description.as_deref(),
            monitor: None,
        }
    }
}

/// Starts `command` in the background and returns at once with its id.
pub fn start(
    cx: &ToolContext,
    command: TaskCommand<'_>,
    cwd: &Path,
    config: &BashConfig,
    notice: Option<String>,
    cgroup: Option<Arc<CommandCgroup>>,
    setup: Setup,
) -> Result<BashOutput, ToolError> {
    let watch = PlacesWatch::of(setup.confinement.as_ref());
    let slot = cx.session().slot::<Tasks>();
    let mut tasks = lock(&slot);
    let id = tasks.next_id(command.prefix, config)?;
    let (file, log) = SpillTarget::new(cx, "tasks", &id)
        .create()
        .map_err(|reason| ToolError::failed(format!("cannot create the task's log file: {reason}")))?;
    // A monitor's output goes through its pump, which splits stdout into events; a command's
    // goes straight to the log.
    let (sink, pumped) = match command.monitor {
        Some(_) => (Sink::Pipes, Some(file)),
        None => (Sink::File(file), None),
    };
    let launch = Launch { command: command.run, cwd, sink, report_cwd: false, cgroup, setup };
    let Spawned { mut child, tree, mut control, stdout, stderr } = spawn(launch).map_err(spawn_error)?;
    let recorded = Recorded {
        shown: command.shown,
        description: command.description,
        tree,
        monitor: command.monitor.map(|p| p.limits),
        watch,
        session: None,
    };
    let task = Task::new(id.clone(), log.clone(), recorded);
    tasks.add(Arc::clone(&task));
    drop(tasks);

    if let (Some(pumping), Some(file)) = (command.monitor, pumped) {
        let (limits, events) = (pumping.limits, cx.task_events());
        (pumping.start)(Pump { task: Arc::clone(&task), stdout, stderr, log: file, child, control, limits, events });
        return Ok(started(cx, command, cwd, &log, notice, &id));
    }

    let watched = Arc::clone(&task);
    tokio::spawn(async move {
        let status = child.wait().await.ok();
        watched.exited(status, control.held());
    });
    Ok(started(cx, command, cwd, &log, notice, &id))
}

/// The result of a call that started a task.
fn started(
    cx: &ToolContext,
    command: TaskCommand<'_>,
    cwd: &Path,
    log: &Path,
    notice: Option<String>,
    id: &str,
) -> BashOutput {
    BashOutput {
        stdout: String::new(),
        stderr: String::new(),
        exit_code: None,
        signal: None,
        duration_ms: 0,
        timed_out: false,
        interrupted: false,
        truncated: false,
        output_file: Some(log.display().to_string()),
        cwd: cwd.display().to_string(),
        task_id: Some(id.to_string()),
        session_id: None,
        notes: notice.into_iter().collect(),
        report: Report::Started { command: one_line(command.shown, 200), log: shown(cx, log) },
    }
}
