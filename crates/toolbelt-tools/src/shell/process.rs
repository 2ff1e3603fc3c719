//! `Process`: lists the machine's processes, shows one, signals one.
//!
//! Read from Linux's `/proc` (elsewhere the call fails and says to use `ps` through Bash).
//! The session's own processes — toolbelt itself and every process of its background tasks'
//! trees — are marked, and that line decides the permission of a signal: stopping what the
//! session started is a session action, like `TaskStop`; any other process is outside
//! access, which the permission engine judges (it asks by default, `Process` rules allow
//! it). Listing and reading never ask.
//!
//! A pid can be reused. The judgement records the process's start time beside its pid, and
//! the call opens a pidfd first, then checks the start time again: the signal goes to the
//! process that was judged or to nothing.

use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Annotations, Category, PermissionClass, PlannedTool, SideEffects, ToolContext, ToolError, ToolSpec,
};

use crate::blocking::run_blocking;
use crate::process::procfs::{self, Stat};
use crate::shell::support::background::{Tasks, one_line};
use crate::shell::support::process_view::{
    MAX_ROWS, Own, ProcessDetails, ProcessResult, ProcessRow, SignalReport, descendants, is_toolbelt, matches_name,
};
use crate::tasks::TaskStatus;

/// What `Process` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ProcessAction {
    /// List processes (the session's own first, marked).
    List,
    /// Show one process in full.
    Info,
    /// Send a signal to one process.
    Signal,
}

/// A signal `Process` sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, JsonSchema)]
pub enum SignalName {
    /// Ask it to end (the default).
    #[default]
    #[serde(rename = "TERM", alias = "SIGTERM", alias = "term")]
    Term,
    /// End it at once (it cannot refuse).
    #[serde(rename = "KILL", alias = "SIGKILL", alias = "kill")]
    Kill,
    /// Interrupt it, as Ctrl-C does.
    #[serde(rename = "INT", alias = "SIGINT", alias = "int")]
    Int,
    /// Hang up (many daemons reload their configuration).
    #[serde(rename = "HUP", alias = "SIGHUP", alias = "hup")]
    Hup,
    /// Quit, with a core dump where enabled.
    #[serde(rename = "QUIT", alias = "SIGQUIT", alias = "quit")]
    Quit,
    /// User-defined signal 1.
    #[serde(rename = "USR1", alias = "SIGUSR1", alias = "usr1")]
    Usr1,
    /// User-defined signal 2.
    #[serde(rename = "USR2", alias = "SIGUSR2", alias = "usr2")]
    Usr2,
    /// Pause it.
    #[serde(rename = "STOP", alias = "SIGSTOP", alias = "stop")]
    Stop,
    /// Resume a paused process.
    #[serde(rename = "CONT", alias = "SIGCONT", alias = "cont")]
    Cont,
}

impl SignalName {
    fn name(self) -> &'static str {
        match self {
            Self::Term => "SIGTERM",
            Self::Kill => "SIGKILL",
            Self::Int => "SIGINT",
            Self::Hup => "SIGHUP",
            Self::Quit => "SIGQUIT",
            Self::Usr1 => "SIGUSR1",
            Self::Usr2 => "SIGUSR2",
            Self::Stop => "SIGSTOP",
            Self::Cont => "SIGCONT",
        }
    }

    fn signal(self) -> rustix::process::Signal {
        use rustix::process::Signal;
        match self {
            Self::Term => Signal::TERM,
            Self::Kill => Signal::KILL,
            Self::Int => Signal::INT,
            Self::Hup => Signal::HUP,
            Self::Quit => Signal::QUIT,
            Self::Usr1 => Signal::USR1,
            Self::Usr2 => Signal::USR2,
            Self::Stop => Signal::STOP,
            Self::Cont => Signal::CONT,
        }
    }
}

/// Input of `Process`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProcessInput {
    /// `list` (processes, the session's own first), `info` (one process in full) or `signal`
    /// (send `signal` to one process).
    pub action: ProcessAction,
    /// The process. For `list`: that process and its descendants only.
    #[serde(default)]
    pub pid: Option<i32>,
    /// Part of a command line (case-insensitive). For `list`: only the processes whose
    /// command holds it. For `info` and `signal` without `pid`: the one process it matches.
    #[serde(default)]
    pub name: Option<String>,
    /// For `signal`: TERM (the default), KILL, INT, HUP, QUIT, USR1, USR2, STOP or CONT.
    #[serde(default)]
    pub signal: Option<SignalName>,
}

/// The process a call of `info` or `signal` acts on, as judged.
#[derive(Debug, Clone)]
pub struct Target {
    pid: i32,
    starttime: u64,
    command: String,
    task_id: Option<String>,
}

/// What the judgement worked out.
#[derive(Debug, Clone)]
pub enum ProcessPlan {
    /// List (nothing to fix in advance).
    List,
    /// Show this process.
    Info(Target),
    /// Send this signal to this process.
    Signal(Target, SignalName),
}

/// The `Process` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Process;

const DESCRIPTION: &str = "Lists, inspects and signals processes on this machine (Linux).\n\
- action \"list\": pid, parent, user, state, memory, CPU time, start time and command of every process; this \
session's own (toolbelt and its background tasks' processes) come first, marked with their task id. Narrow it \
with `name` (part of the command line) or `pid` (a process and its descendants).\n\
- action \"info\": one process in full (by `pid`, or by a `name` matching exactly one): command line, working \
directory, state, memory, CPU use, start time, parent and children.\n\
- action \"signal\": sends `signal` (TERM by default; KILL, INT, HUP, QUIT, USR1, USR2, STOP, CONT) to one \
process and says whether it exited. Signalling this session's own processes is allowed like TaskStop; any other \
process needs approval. For a background task started with Bash, TaskStop is simpler: it ends the whole tree.";

impl PlannedTool for Process {
    type Input = ProcessInput;
    type Output = ProcessResult;
    type Plan = ProcessPlan;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Process", DESCRIPTION)
            .title("List, inspect and signal processes")
            .aliases(["ps"])
            // A `Process(…)` rule matches `name`, which must then pick the one process.
            .rule_field("name")
            .category(Category::Shell)
            .tags(["shell", "process", "signal", "kill"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .deferred()
            .search_hint("process list ps kill signal pid memory cpu running programs")
    }

    fn access(&self, input: &ProcessInput, cx: &ToolContext) -> Result<(Access, ProcessPlan), ToolError> {
        if !procfs::available() {
            return Err(ToolError::failed(
                "Process reads Linux's /proc, which this machine does not have; run `ps` (or `kill`) with Bash instead",
            ));
        }
        if input.signal.is_some() && input.action != ProcessAction::Signal {
            return Err(ToolError::failed(
                "`signal` goes with action \"signal\" only; drop it, or set action to \"signal\"",
            ));
        }
        match input.action {
            ProcessAction::List => {
                Ok((Access::shared().changes_state("nothing: it reads the process table"), ProcessPlan::List))
            }
            ProcessAction::Info => {
                let target = resolve(input, cx)?;
                Ok((Access::shared().changes_state("nothing: it reads the process table"), ProcessPlan::Info(target)))
            }
            ProcessAction::Signal => {
                let target = resolve(input, cx)?;
                refuse_vital(target.pid)?;
                let signal = input.signal.unwrap_or_default();
                let access = match &target.task_id {
                    Some(task) => Access::exclusive().changes_state(format!("background task {task}")),
                    None => {
                        let stat = procfs::stat(target.pid);
                        let user = procfs::status(target.pid)
                            .and_then(|s| s.uid)
                            .map_or_else(|| "unknown".to_string(), procfs::user_name);
                        let name = stat.map_or_else(|| target.command.clone(), |s| s.comm);
                        Access::exclusive().reaching(format!(
                            "sends {} to process {} (`{name}`, user {user}), which this session did not start",
                            signal.name(),
                            target.pid
                        ))
                    }
                };
                Ok((access, ProcessPlan::Signal(target, signal)))
            }
        }
    }

    async fn call(&self, input: ProcessInput, plan: ProcessPlan, cx: ToolContext) -> Result<ProcessResult, ToolError> {
        let empty = ProcessResult {
            action: String::new(),
            processes: Vec::new(),
            more: 0,
            process: None,
            signalled: None,
            filter: None,
        };
        match plan {
            ProcessPlan::List => run_blocking(&cx, move |cx| Ok(list(&input, cx))).await,
            ProcessPlan::Info(target) => {
                let first = same_process(&target)?;
                let sample = Duration::from_millis(200);
                let started = Instant::now();
                tokio::time::sleep(sample).await;
                let second = same_process(&target)?;
                let procs = procfs::all();
                let own = Own::of(&cx, &procs);
                let details = ProcessDetails::of(&first, &second, started.elapsed(), &procs, &own);
                Ok(ProcessResult { action: "info".into(), process: Some(details), ..empty })
            }
            ProcessPlan::Signal(target, signal) => {
                let outcome = send(&target, signal).await?;
                // A background task of the session's whose process ended: its own record says
                // so before this answers (its waiter reaps it a moment later), so a listing
                // made next never shows it running.
                if outcome.starts_with("exited")
                    && let Some(id) = &target.task_id
                    && let Some(task) = cx.with_slot::<Tasks, _>(|t| t.get(id))
                {
                    let deadline = Instant::now() + TASK_SETTLES;
                    while task.status().0 == TaskStatus::Running && Instant::now() < deadline {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                }
                let report = SignalReport {
                    pid: target.pid,
                    command: one_line(&target.command, 120),
                    signal: signal.name().to_string(),
                    outcome,
                    task_id: target.task_id,
                };
                Ok(ProcessResult { action: "signal".into(), signalled: Some(report), ..empty })
            }
        }
    }
}

/// How long a signal's answer waits for an ended background task's record to say so.
const TASK_SETTLES: Duration = Duration::from_secs(2);

/// Every process the filter keeps: the session's own first, then by pid, capped.
fn list(input: &ProcessInput, cx: &ToolContext) -> ProcessResult {
    let procs = procfs::all();
    let own = Own::of(cx, &procs);
    let needle = input.name.as_deref().map(str::to_lowercase).filter(|n| !n.is_empty());
    // toolbelt's own command line may hold the name only because it was given there.
    let me = i32::try_from(std::process::id()).unwrap_or(0);
    let under = input.pid.map(|pid| descendants(pid, &procs));
    let mut kept: Vec<&Stat> = procs
        .iter()
        .filter(|p| under.as_ref().is_none_or(|set| set.contains(&p.pid)))
        .filter(|p| needle.as_deref().is_none_or(|n| !is_toolbelt(p, me) && matches_name(p, n)))
        .collect();
    kept.sort_by_key(|p| (own.task(p.pid).is_none(), p.pid));
    let more = kept.len().saturating_sub(MAX_ROWS);
    let processes = kept.iter().take(MAX_ROWS).map(|p| ProcessRow::of(p, &own, 120)).collect();
    let filter = match (input.pid, &input.name) {
        (Some(pid), Some(name)) => Some(format!("under process {pid} matching `{name}`")),
        (Some(pid), None) => Some(format!("under process {pid} (it and its descendants)")),
        (None, Some(name)) => Some(format!("matching `{name}`")),
        (None, None) => None,
    };
    ProcessResult { action: "list".into(), processes, more, process: None, signalled: None, filter }
}

/// The one process `pid` or `name` names.
fn resolve(input: &ProcessInput, cx: &ToolContext) -> Result<Target, ToolError> {
    if input.pid.is_some() && input.name.is_some() {
        return Err(ToolError::failed(
            "give `pid` or `name`, not both: the process must be named one way (a `Process(…)` rule judges the name)",
        ));
    }
    let procs = procfs::all();
    let stat = match (input.pid, input.name.as_deref()) {
        (Some(pid), _) => procs.iter().find(|p| p.pid == pid).cloned().ok_or_else(|| {
            ToolError::failed(format!(
                "no process {pid}: it has ended or never existed; Process{{action: \"list\"}} shows the running ones"
            ))
        })?,
        (None, Some(name)) if !name.trim().is_empty() => {
            let needle = name.to_lowercase();
            let me = i32::try_from(std::process::id()).unwrap_or(0);
            let found: Vec<&Stat> =
                procs.iter().filter(|p| !is_toolbelt(p, me) && !p.zombie() && matches_name(p, &needle)).collect();
            match found.as_slice() {
                [one] => (*one).clone(),
                [] => {
                    return Err(ToolError::failed(format!(
                        "no process's command holds `{name}`; Process{{action: \"list\"}} shows the running ones"
                    )));
                }
                many => {
                    let shown: Vec<String> = many
                        .iter()
                        .take(10)
                        .map(|p| format!("{} `{}`", p.pid, one_line(&procfs::command(p), 80)))
                        .collect();
                    let rest = many.len().saturating_sub(10);
                    let rest = if rest > 0 { format!(" and {rest} more") } else { String::new() };
                    return Err(ToolError::failed(format!(
                        "{} processes match `{name}`: {}{rest}; give the `pid` of the one you mean",
                        many.len(),
                        shown.join(", ")
                    )));
                }
            }
        }
        _ => {
            return Err(ToolError::failed(
                "this action needs the process: give `pid` (or `name`, part of its command)",
            ));
        }
    };
    let own = Own::of(cx, &procs);
    Ok(Target {
        pid: stat.pid,
        starttime: stat.starttime,
        command: procfs::command(&stat),
        task_id: own.task(stat.pid).map(str::to_string),
    })
}

/// Refuses init, toolbelt and the processes above it: stopping
/// any of them would end this session or the machine.
fn refuse_vital(pid: i32) -> Result<(), ToolError> {
    if pid <= 1 {
        return Err(ToolError::failed(format!("process {pid} is the system's init; Process does not signal it")));
    }
    let mut ancestor = i32::try_from(std::process::id()).unwrap_or(0);
    let mut hops = 0;
    while ancestor > 1 && hops < 64 {
        if ancestor == pid {
            let what = if hops == 0 { "toolbelt itself" } else { "a process toolbelt runs under" };
            return Err(ToolError::failed(format!(
                "process {pid} is {what}; signalling it would end this session, so Process does not"
            )));
        }
        ancestor = procfs::stat(ancestor).map_or(0, |s| s.ppid);
        hops += 1;
    }
    Ok(())
}

/// The process judged, still there: its stat now, or why it is not.
fn same_process(target: &Target) -> Result<Stat, ToolError> {
    match procfs::stat(target.pid) {
        Some(stat) if stat.starttime == target.starttime => Ok(stat),
        Some(_) => Err(reused(target.pid)),
        None => Err(ended(target.pid)),
    }
}

fn ended(pid: i32) -> ToolError {
    ToolError::failed(format!("process {pid} has ended; Process{{action: \"list\"}} shows the running ones"))
}

fn reused(pid: i32) -> ToolError {
    ToolError::failed(format!(
        "pid {pid} now belongs to another process (the one judged has ended); list again and choose anew"
    ))
}

/// Sends `signal` to the judged process through a pidfd (so a reused pid is never hit), then
/// waits briefly to say what it did.
async fn send(target: &Target, signal: SignalName) -> Result<String, ToolError> {
    let pid = rustix::process::Pid::from_raw(target.pid).ok_or_else(|| ended(target.pid))?;
    let fd = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::empty()).map_err(|e| match e {
        rustix::io::Errno::SRCH => ended(target.pid),
        e => ToolError::failed(format!("cannot reach process {}: {e}", target.pid)),
    })?;
    // The pidfd now holds whatever process has this pid: the judged one only if it started
    // at the judged time.
    let stat = same_process(target)?;
    if stat.zombie() {
        return Ok("exited (it had already ended)".into());
    }
    rustix::process::pidfd_send_signal(&fd, signal.signal()).map_err(|e| match e {
        rustix::io::Errno::PERM => ToolError::failed(format!(
            "not permitted to signal process {}: it belongs to another user (`{}`)",
            target.pid,
            procfs::status(target.pid).and_then(|s| s.uid).map_or_else(|| "?".to_string(), procfs::user_name)
        )),
        rustix::io::Errno::SRCH => ended(target.pid),
        e => ToolError::failed(format!("cannot signal process {}: {e}", target.pid)),
    })?;
    let wait = match signal {
        SignalName::Usr1 | SignalName::Usr2 | SignalName::Hup => Duration::from_millis(100),
        _ => Duration::from_secs(2),
    };
    let deadline = Instant::now() + wait;
    loop {
        let now = procfs::stat(target.pid).filter(|s| s.starttime == target.starttime);
        let outcome = match (&now, signal) {
            (None, _) => Some("exited"),
            (Some(s), _) if s.zombie() => Some("exited"),
            (Some(s), SignalName::Stop) if s.state == 'T' => Some("stopped"),
            (Some(s), SignalName::Cont) if s.state != 'T' => Some("continued"),
            _ => None,
        };
        if let Some(outcome) = outcome {
            return Ok(outcome.into());
        }
        if Instant::now() >= deadline {
            let waited = match signal {
                SignalName::Usr1 | SignalName::Usr2 | SignalName::Hup => {
                    "still running (as expected: it may handle this signal)"
                }
                _ => "still running after 2 s (it may handle or ignore the signal; KILL cannot be ignored)",
            };
            return Ok(waited.into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me() -> Stat {
        procfs::stat(i32::try_from(std::process::id()).unwrap()).unwrap()
    }

    #[test]
    fn a_pid_given_to_another_process_is_never_taken_for_the_judged_one() {
        let now = me();
        let judged = Target { pid: now.pid, starttime: now.starttime, command: String::new(), task_id: None };
        assert_eq!(same_process(&judged).unwrap().pid, now.pid);
        let earlier = Target { starttime: now.starttime.saturating_sub(1), ..judged };
        let refused = same_process(&earlier).unwrap_err().to_string();
        assert!(refused.contains("now belongs to another process"), "{refused}");
    }

    #[test]
    fn signalling_a_reused_pid_sends_nothing() {
        let now = me();
        // Were the signal sent, this test process would stop.
        let earlier =
            Target { pid: now.pid, starttime: now.starttime.saturating_sub(1), command: String::new(), task_id: None };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let refused = runtime.block_on(send(&earlier, SignalName::Stop)).unwrap_err().to_string();
        assert!(refused.contains("now belongs to another process"), "{refused}");
    }

    #[test]
    fn signal_names_take_the_usual_spellings() {
        for spelling in ["\"TERM\"", "\"SIGTERM\"", "\"term\""] {
            assert_eq!(serde_json::from_str::<SignalName>(spelling).unwrap(), SignalName::Term);
        }
        assert!(serde_json::from_str::<SignalName>("\"SEGV\"").is_err());
    }

    #[test]
    fn the_processes_above_toolbelt_are_refused() {
        assert!(refuse_vital(1).is_err());
        assert!(refuse_vital(me().pid).unwrap_err().to_string().contains("toolbelt itself"));
        assert!(refuse_vital(me().ppid).unwrap_err().to_string().contains("runs under"));
    }
}
