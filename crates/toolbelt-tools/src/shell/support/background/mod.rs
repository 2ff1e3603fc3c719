//! Background tasks: commands started with `run_in_background`, and the session's registry
//! of them that `TaskOutput`, `TaskStop` and `BackgroundTasks` read.
//!
//! A task's stdout and stderr go straight to a log file under the session's directory (no
//! pump in between, so nothing of ours sits in the data path). A watcher waits for the
//! task's `bash`, records how it ended and kills whatever of its tree is left, as a
//! foreground call does. The registry is a session slot: when the session ends it is
//! dropped, and dropping it kills every task's whole tree, so nothing outlives the server's
//! sessions. It saves as nothing (live processes cannot be restored). Starting one is in
//! [`launch`].

use std::collections::VecDeque;
use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

mod launch;
use toolbelt_core::{SessionSlot, ToolContext, ToolError};

pub(crate) use crate::process::capture::one_line;
use crate::process::capture::{HeadTail, Rendered};
use crate::process::config::BashConfig;
use crate::process::made::PlacesWatch;
use crate::process::tree::Tree;
use crate::shell::support::session::state::Session;
use crate::tasks::TaskStatus;
pub use launch::{MonitorLimits, Pump, Pumping, TaskCommand, start};

/// Finished tasks kept for TaskOutput and BackgroundTasks; older ones are forgotten.
const KEEP_FINISHED: usize = 100;

#[derive(Debug)]
struct State {
    status: TaskStatus,
    exit_code: Option<i32>,
    ended: Option<Instant>,
    /// How far TaskOutput has read the log.
    read_to: u64,
}

/// One background task.
#[derive(Debug)]
pub struct Task {
    /// Its id (`bash_1`).
    pub id: String,
    /// The command line.
    pub command: String,
    /// What it does, as the call described it.
    pub description: Option<String>,
    /// The log file both streams go to.
    pub log: PathBuf,
    started: Instant,
    tree: Tree,
    state: Mutex<State>,
    done: tokio::sync::watch::Sender<bool>,
    /// Bumped each time a monitor's pump adds to the log (a command's output goes to the log
    /// without us, so it never is).
    news: tokio::sync::watch::Sender<u64>,
    /// What its events are limited to, when it is a monitor.
    pub monitor: Option<MonitorLimits>,
    /// The protected places missing when it started, to move aside those it made.
    watch: PlacesWatch,
    /// Its input and screen, when it is an interactive session.
    pub session: Option<Arc<Session>>,
}

/// What a new task is, besides its id and log.
pub(crate) struct Recorded<'a> {
    /// The command as shown.
    pub shown: &'a str,
    /// What it does.
    pub description: Option<&'a str>,
    /// Its process tree.
    pub tree: Tree,
    /// Its limits, when it is a monitor.
    pub monitor: Option<MonitorLimits>,
    /// The protected places missing when it started.
    pub watch: PlacesWatch,
    /// Its input and screen, when it is an interactive session.
    pub session: Option<Arc<Session>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Task {
    /// A running task's record.
    pub(crate) fn new(id: String, log: PathBuf, recorded: Recorded<'_>) -> Arc<Task> {
        let Recorded { shown, description, tree, monitor, watch, session } = recorded;
        let (done, _) = tokio::sync::watch::channel(false);
        let (news, _) = tokio::sync::watch::channel(0);
        Arc::new(Task {
            id,
            command: shown.to_string(),
            description: description.map(str::to_string),
            log,
            started: Instant::now(),
            tree,
            state: Mutex::new(State { status: TaskStatus::Running, exit_code: None, ended: None, read_to: 0 }),
            done,
            news,
            monitor,
            watch,
            session,
        })
    }

    /// Its status and exit code now.
    pub fn status(&self) -> (TaskStatus, Option<i32>) {
        let state = lock(&self.state);
        (state.status, state.exit_code)
    }

    /// How long it ran (or has been running).
    pub fn run_time(&self) -> Duration {
        let state = lock(&self.state);
        state.ended.unwrap_or_else(Instant::now).duration_since(self.started)
    }

    /// The live processes of its tree among `procs` (none once it has ended: its tree was
    /// killed then).
    pub fn processes_among(&self, procs: &[crate::process::procfs::Stat]) -> Vec<i32> {
        if self.status().0 == TaskStatus::Running { self.tree.alive_among(procs) } else { Vec::new() }
    }

    /// Whether a cgroup holds its tree (so stopping it reaches everything it started).
    pub fn is_held(&self) -> bool {
        self.tree.is_held()
    }

    /// Kills its whole tree; returns whether it was still running.
    pub fn stop(&self) -> bool {
        {
            let mut state = lock(&self.state);
            if state.status != TaskStatus::Running {
                return false;
            }
            state.status = TaskStatus::Killed;
            state.ended = Some(Instant::now());
        }
        self.tree.kill();
        self.tree.retire();
        // Here too, not only in the watcher: at the session's end the watcher may never run
        // again. What is already moved aside is not found twice.
        self.settle();
        true
    }

    /// Moves aside the protected places that appeared while it ran (nobody can be asked:
    /// `made.rs`), saying so on stderr and at the end of its output.
    pub(crate) fn settle(&self) {
        let notices = self.watch.ended(&format!("the background command `{}`", self.id));
        if notices.is_empty() {
            return;
        }
        let appended = std::fs::OpenOptions::new().append(true).open(&self.log).and_then(|mut log| {
            use std::io::Write as _;
            notices.iter().try_for_each(|n| writeln!(log, "\n[toolbelt] {n}"))
        });
        if let Err(e) = appended {
            tracing::warn!("cannot add to the log of `{}`: {e}", self.id);
        }
    }

    /// Records how it ended, unless it was stopped first; returns whether this was news.
    pub(crate) fn record_end(&self, status: TaskStatus, exit_code: Option<i32>) -> bool {
        let mut state = lock(&self.state);
        if state.status != TaskStatus::Running {
            return false;
        }
        state.status = status;
        state.exit_code = exit_code;
        state.ended = Some(Instant::now());
        true
    }

    /// Its tree.
    pub(crate) fn tree(&self) -> &Tree {
        &self.tree
    }

    /// Says the log grew (a monitor's pump, after writing).
    pub(crate) fn tell_news(&self) {
        self.news.send_modify(|n| *n += 1);
    }

    /// A receiver told each time the log grows (a session's pump says so too).
    pub(crate) fn news(&self) -> tokio::sync::watch::Receiver<u64> {
        self.news.subscribe()
    }

    /// A receiver told when the task is done.
    pub(crate) fn done(&self) -> tokio::sync::watch::Receiver<bool> {
        self.done.subscribe()
    }

    /// The bytes of the log read so far, and its length now.
    pub(crate) fn range(&self) -> (u64, u64) {
        let read_to = lock(&self.state).read_to;
        (read_to, std::fs::metadata(&self.log).map_or(read_to, |m| m.len().max(read_to)))
    }

    /// Marks the log read to its current end (a session is read through its screen); the
    /// byte range this covers.
    pub(crate) fn skip_to_end(&self) -> (u64, u64) {
        let mut state = lock(&self.state);
        let from = state.read_to;
        state.read_to = std::fs::metadata(&self.log).map_or(from, |m| m.len().max(from));
        (from, state.read_to)
    }

    /// Once its command exited with `status` (`held`: whether a process still holds the
    /// control pipe): kills what is left of its tree, moves aside the protected places it
    /// made, records how it ended, and wakes every waiter.
    pub(crate) fn exited(&self, status: Option<std::process::ExitStatus>, held: bool) {
        // Nothing of the tree outlives the task.
        self.tree.leftovers(held);
        self.tree.retire();
        self.settle();
        let code = status.and_then(|s| s.code());
        self.record_end(if code == Some(0) { TaskStatus::Completed } else { TaskStatus::Failed }, code);
        self.mark_done();
    }

    /// Marks the task done, waking every waiter.
    pub(crate) fn mark_done(&self) {
        self.done.send_replace(true);
        self.tell_news();
    }

    /// Waits until the log holds output not read yet, or the task ends, at most `limit`;
    /// returns early if `cx` is cancelled. What a monitor's reader waits for: its next lines.
    pub async fn wait_news(&self, limit: Duration, cx: &ToolContext) {
        let mut news = self.news.subscribe();
        let unread = || {
            let read_to = lock(&self.state).read_to;
            std::fs::metadata(&self.log).is_ok_and(|m| m.len() > read_to) || *self.done.borrow()
        };
        let waiting = async {
            while !unread() {
                if news.changed().await.is_err() {
                    break;
                }
            }
        };
        tokio::select! {
            () = waiting => {}
            () = tokio::time::sleep(limit) => {}
            () = cx.cancellation().cancelled() => {}
        }
    }

    /// Waits until the task ends, at most `limit`; returns early if `cx` is cancelled.
    pub async fn wait(&self, limit: Duration, cx: &ToolContext) {
        let mut done = self.done.subscribe();
        tokio::select! {
            _ = done.wait_for(|d| *d) => {}
            () = tokio::time::sleep(limit) => {}
            () = cx.cancellation().cancelled() => {}
        }
    }

    /// The output written since the last call, within `budget` characters (head and tail
    /// when more came), and the byte range it covers.
    pub fn read_new(&self, budget: usize) -> Result<(Rendered, u64, u64), ToolError> {
        let mut state = lock(&self.state);
        let from = state.read_to;
        let (rendered, to) = read_range(&self.log, from, budget)
            .map_err(|e| ToolError::failed(format!("cannot read the log {}: {e}", self.log.display())))?;
        state.read_to = to;
        Ok((rendered, from, to))
    }
}

/// Reads the log from byte `from` to its current end: whole when short, else its head and
/// tail (the middle is never read, so a huge log costs nothing).
fn read_range(log: &Path, from: u64, budget: usize) -> std::io::Result<(Rendered, u64)> {
    // Without blocking, and a regular file only: a command may have put a FIFO in its place.
    let mut file = {
        use std::os::unix::fs::OpenOptionsExt as _;
        let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY).open(log)?;
        crate::fs::regular::check_regular(&file).map_err(std::io::Error::other)?;
        file
    };
    let to = file.metadata()?.len().max(from);
    let len = to - from;
    let head_cap = budget.saturating_mul(4) as u64;
    let tail_cap = budget.saturating_mul(2) as u64;
    file.seek(SeekFrom::Start(from))?;
    let mut head = Vec::new();
    (&mut file).take(len.min(head_cap)).read_to_end(&mut head)?;
    let mut tail = Vec::new();
    if len > head_cap {
        file.seek(SeekFrom::Start(to - tail_cap.min(len - head_cap)))?;
        (&mut file).take(tail_cap).read_to_end(&mut tail)?;
    }
    let total = (head.len() + tail.len()) as u64;
    let parts = HeadTail::from_parts(head, &tail, len.max(total));
    Ok((parts.render(budget), to))
}

/// The session's background tasks (interactive sessions among them).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Tasks {
    #[serde(skip)]
    tasks: VecDeque<Arc<Task>>,
    /// The last number given, by kind (`bash`, `pwsh`, `monitor`): each kind counts from 1.
    #[serde(skip)]
    next: std::collections::HashMap<&'static str, u64>,
}

impl SessionSlot for Tasks {
    const KEY: &'static str = "shell_tasks";
}

impl Drop for Tasks {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.stop();
        }
    }
}

impl Tasks {
    /// The task with this id.
    pub fn get(&self, id: &str) -> Option<Arc<Task>> {
        self.tasks.iter().find(|t| t.id == id).cloned()
    }

    /// Every task, oldest first.
    pub fn all(&self) -> Vec<Arc<Task>> {
        self.tasks.iter().cloned().collect()
    }

    fn running(&self) -> usize {
        self.tasks.iter().filter(|t| t.status().0 == TaskStatus::Running).count()
    }

    /// How many interactive sessions are running.
    pub(crate) fn running_sessions(&self) -> usize {
        self.tasks.iter().filter(|t| t.session.is_some() && t.status().0 == TaskStatus::Running).count()
    }

    /// Checks the limit on running tasks and numbers the next one of this kind (`bash_3`, or
    /// `bash_3@replica` on a team).
    pub(crate) fn next_id(&mut self, prefix: &'static str, config: &BashConfig) -> Result<String, ToolError> {
        let running = self.running();
        if running >= config.max_background_tasks {
            return Err(ToolError::failed(format!(
                "too many background tasks: {running} are running (the limit is {}). Stop one with TaskStop \
                 (BackgroundTasks shows them) or wait for one to finish, then start this again.",
                config.max_background_tasks
            )));
        }
        let number = self.next.entry(prefix).or_default();
        *number += 1;
        Ok(match &config.replica {
            Some(replica) => format!("{prefix}_{number}@{replica}"),
            None => format!("{prefix}_{number}"),
        })
    }

    /// Adds a started task.
    pub(crate) fn add(&mut self, task: Arc<Task>) {
        self.tasks.push_back(task);
        self.forget_old();
    }

    /// Forgets a task (one that ended before its call returned: nothing is left to read).
    pub(crate) fn remove(&mut self, id: &str) {
        self.tasks.retain(|t| t.id != id);
    }

    fn forget_old(&mut self) {
        while self.tasks.iter().filter(|t| t.status().0 != TaskStatus::Running).count() > KEEP_FINISHED {
            match self.tasks.iter().position(|t| t.status().0 != TaskStatus::Running) {
                Some(i) => drop(self.tasks.remove(i)),
                None => break,
            }
        }
    }
}

/// The error for an id the session does not know, listing the ones it does.
pub fn unknown_task(cx: &ToolContext, id: &str) -> ToolError {
    // An id of another replica's: its task runs there, in a session of that replica's.
    let here = cx.service::<BashConfig>().and_then(|c| c.replica.clone());
    if let (Some(here), Some((_, owner))) = (&here, id.rsplit_once('@'))
        && owner != here
    {
        return ToolError::failed(format!(
            "background task `{id}` runs on replica {owner}, and this is replica {here}: read or stop it in the \
             session that started it, on {owner} (if {owner} has stopped, the task ended with it)"
        ));
    }
    let mut ids: Vec<String> = cx.with_slot::<Tasks, _>(|t| t.all().iter().map(|t| t.id.clone()).collect());
    if let Some(agents) = cx.agents() {
        ids.extend(agents.list(cx).into_iter().map(|r| r.agent_id));
    }
    // Ids of the task list (TaskCreate's) are numbers; background tasks' never are.
    let digits = id.trim_start_matches('#');
    let list_hint = if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        format!(" (`{id}` looks like an id of the task list: TaskGet and TaskUpdate take those)")
    } else {
        String::new()
    };
    if ids.is_empty() {
        ToolError::failed(format!(
            "no background task `{id}`: this session has none; start one with Bash and run_in_background: true{}{list_hint}",
            if cx.agents().is_some() { " (or Agent with run_in_background: true)" } else { "" }
        ))
    } else {
        ToolError::failed(format!("no background task `{id}`; this session's tasks are {}{list_hint}", ids.join(", ")))
    }
}
