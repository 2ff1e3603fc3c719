//! What `Process` reads from the process table and how it reads to the model: one row per
//! process for `list`, the whole picture of one for `info`, and which processes are the
//! session's own (its background tasks' trees, and toolbelt itself).

use std::collections::HashMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;
use toolbelt_core::{Content, Render, ToolContext, human_duration, time::rfc3339_millis};

use crate::process::procfs::{self, Stat};
use crate::shell::support::background::{Tasks, one_line};

/// Rows `list` returns at most; the rest are counted.
pub const MAX_ROWS: usize = 200;

/// Which processes belong to the session: pid → the background task whose tree holds it
/// (`bash_1`), or `toolbelt` for this process itself.
#[derive(Debug, Default)]
pub struct Own(HashMap<i32, String>);

impl Own {
    /// The session's processes among `procs`.
    pub fn of(cx: &ToolContext, procs: &[Stat]) -> Self {
        let mut own = HashMap::new();
        for task in cx.with_slot::<Tasks, _>(|t| t.all()) {
            for pid in task.processes_among(procs) {
                own.insert(pid, task.id.clone());
            }
        }
        if let Ok(me) = i32::try_from(std::process::id()) {
            own.insert(me, "toolbelt".to_string());
        }
        Self(own)
    }

    /// The task holding `pid`, if the session's.
    pub fn task(&self, pid: i32) -> Option<&str> {
        self.0.get(&pid).map(String::as_str)
    }
}

/// `pid` and every process below it.
pub fn descendants(pid: i32, procs: &[Stat]) -> std::collections::HashSet<i32> {
    let mut set = std::collections::HashSet::from([pid]);
    loop {
        let before = set.len();
        for p in procs {
            if set.contains(&p.ppid) {
                set.insert(p.pid);
            }
        }
        if set.len() == before {
            return set;
        }
    }
}

/// Whether `stat` is toolbelt, or a copy of it not yet running another program (a forked
/// probe): their command line is toolbelt's own, which may hold the very name looked for.
pub fn is_toolbelt(stat: &Stat, me: i32) -> bool {
    static MINE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    if stat.pid == me {
        return true;
    }
    let mine = MINE.get_or_init(|| procfs::cmdline(me));
    stat.ppid == me && mine.is_some() && procfs::cmdline(stat.pid) == *mine
}

/// Whether the process's name or command line holds `needle` (lowercase).
pub fn matches_name(stat: &Stat, needle: &str) -> bool {
    stat.comm.to_lowercase().contains(needle) || procfs::command(stat).to_lowercase().contains(needle)
}

/// The state letter of `/proc/<pid>/stat` in words.
pub fn state_word(state: char) -> &'static str {
    match state {
        'R' => "running",
        'S' => "sleeping",
        'D' => "waiting on I/O",
        'Z' => "zombie",
        'T' => "stopped",
        't' => "stopped by a tracer",
        'X' => "dead",
        'I' => "idle",
        'P' => "parked",
        _ => "unknown",
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// One process, as `list` shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessRow {
    /// Its pid.
    pub pid: i32,
    /// Its parent's pid.
    pub ppid: i32,
    /// The user it runs as.
    pub user: String,
    /// Its state: running, sleeping, waiting on I/O, stopped, zombie, idle.
    pub state: String,
    /// Its resident memory, in KiB.
    pub rss_kib: u64,
    /// The CPU time it has used, in milliseconds.
    pub cpu_time_ms: u64,
    /// When it started (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started: Option<String>,
    /// Its command line (cut to 120 characters in a list), or its name in brackets when it
    /// has none (a kernel thread).
    pub command: String,
    /// The session's background task it belongs to (`bash_1`), or `toolbelt` for this
    /// process itself; absent for every other process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

impl ProcessRow {
    /// The row for `stat`, with its command cut to `width` characters.
    pub fn of(stat: &Stat, own: &Own, width: usize) -> Self {
        let uid = procfs::status(stat.pid).and_then(|s| s.uid);
        Self {
            pid: stat.pid,
            ppid: stat.ppid,
            user: uid.map_or_else(|| "?".to_string(), procfs::user_name),
            state: state_word(stat.state).to_string(),
            rss_kib: stat.rss_kib(),
            cpu_time_ms: millis(stat.cpu_time()),
            started: stat.started_ms().map(rfc3339_millis),
            command: one_line(&procfs::command(stat), width),
            task_id: own.task(stat.pid).map(str::to_string),
        }
    }

    fn line(&self) -> String {
        let mark = self.task_id.as_deref().map(|t| format!("  * {t}")).unwrap_or_default();
        format!(
            "{:>7} {:>7}  {:<10} {:<9} {:>9}  {:>8}  {}{mark}",
            self.pid,
            self.ppid,
            self.user,
            self.state,
            kib(self.rss_kib),
            human_duration(Duration::from_millis(self.cpu_time_ms)),
            self.command
        )
    }
}

fn kib(n: u64) -> String {
    if n >= 10 * 1024 * 1024 {
        format!("{} GiB", n / (1024 * 1024))
    } else if n >= 10 * 1024 {
        format!("{} MiB", n / 1024)
    } else {
        format!("{n} KiB")
    }
}

/// A child of the process `info` shows.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ChildProcess {
    /// Its pid.
    pub pid: i32,
    /// Its command line (cut to 120 characters).
    pub command: String,
}

/// One process in full, as `info` shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessDetails {
    /// What `list` shows of it; `command` is the whole command line here.
    #[serde(flatten)]
    pub row: ProcessRow,
    /// Its working directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// Why its working directory could not be read (another user's process).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd_error: Option<String>,
    /// How many threads it has.
    pub threads: u64,
    /// Its virtual memory size, in KiB.
    pub vm_size_kib: u64,
    /// The share of one CPU it used over a 200 ms sample, in percent.
    pub cpu_percent: f64,
    /// How long it has been running, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub running_for_ms: Option<u64>,
    /// Its parent's command line (cut to 120 characters).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_command: Option<String>,
    /// Its children.
    pub children: Vec<ChildProcess>,
}

impl ProcessDetails {
    /// `first` and `second` are two reads of the same process `sample` apart; `procs` is the
    /// table (for its parent and children).
    pub fn of(first: &Stat, second: &Stat, sample: Duration, procs: &[Stat], own: &Own) -> Self {
        let mut row = ProcessRow::of(second, own, 4000);
        let used = second.cpu_time().saturating_sub(first.cpu_time());
        let cpu_percent = (used.as_secs_f64() / sample.as_secs_f64().max(0.001) * 1000.0).round() / 10.0;
        let (cwd, cwd_error) = match procfs::cwd(second.pid) {
            Ok(path) => (Some(path.display().to_string()), None),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                (None, Some("not readable: the process belongs to another user".to_string()))
            }
            Err(e) => (None, Some(format!("not readable: {e}"))),
        };
        let status = procfs::status(second.pid).unwrap_or_default();
        if let Some(rss) = status.vm_rss_kib {
            row.rss_kib = rss;
        }
        let children = procs
            .iter()
            .filter(|p| p.ppid == second.pid)
            .map(|p| ChildProcess { pid: p.pid, command: one_line(&procfs::command(p), 120) })
            .collect();
        let parent_command = procs.iter().find(|p| p.pid == second.ppid).map(|p| one_line(&procfs::command(p), 120));
        Self {
            row,
            cwd,
            cwd_error,
            threads: second.threads,
            vm_size_kib: status.vm_size_kib.unwrap_or(second.vsize / 1024),
            cpu_percent,
            running_for_ms: second.started_ms().map(|s| u64::try_from(procfs::now_ms() - s).unwrap_or(0)),
            parent_command,
            children,
        }
    }

    fn text(&self) -> String {
        let row = &self.row;
        let mut text = format!("Process {}", row.pid);
        if let Some(task) = &row.task_id {
            text.push_str(&match task.as_str() {
                "toolbelt" => " (toolbelt itself)".to_string(),
                task => format!(" (this session's background task {task})"),
            });
        }
        text.push_str(&format!("\ncommand: {}", row.command));
        match (&self.cwd, &self.cwd_error) {
            (Some(cwd), _) => text.push_str(&format!("\ncwd: {cwd}")),
            (None, Some(why)) => text.push_str(&format!("\ncwd: {why}")),
            (None, None) => {}
        }
        text.push_str(&format!("\nuser: {}\nstate: {}", row.user, row.state));
        text.push_str(&format!("\nparent: {}", row.ppid));
        if let Some(parent) = &self.parent_command {
            text.push_str(&format!(" ({parent})"));
        }
        text.push_str(&format!(
            "\nmemory: {} resident, {} virtual\nthreads: {}\ncpu: {} used, {}% over the last 200 ms",
            kib(row.rss_kib),
            kib(self.vm_size_kib),
            self.threads,
            human_duration(Duration::from_millis(row.cpu_time_ms)),
            self.cpu_percent
        ));
        if let (Some(started), Some(running)) = (&row.started, self.running_for_ms) {
            text.push_str(&format!("\nstarted: {started} ({} ago)", human_duration(Duration::from_millis(running))));
        }
        if self.children.is_empty() {
            text.push_str("\nchildren: none");
        } else {
            text.push_str(&format!("\nchildren ({}):", self.children.len()));
            for child in &self.children {
                text.push_str(&format!("\n  {} {}", child.pid, child.command));
            }
        }
        text
    }
}

/// What a signal did.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SignalReport {
    /// The process signalled.
    pub pid: i32,
    /// Its command line (cut to 120 characters).
    pub command: String,
    /// The signal sent (`SIGTERM`).
    pub signal: String,
    /// What became of the process within the wait: `exited`, `stopped`, `continued` or
    /// `still running` (it may handle or ignore the signal).
    pub outcome: String,
    /// The session's background task it belonged to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
}

/// The structured result of `Process`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ProcessResult {
    /// The action done: `list`, `info` or `signal`.
    pub action: String,
    /// For `list`: the processes, the session's own first, then by pid.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub processes: Vec<ProcessRow>,
    /// For `list`: how many processes matched but were left out (over the 200-row cap).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub more: usize,
    /// For `info`: the process.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub process: Option<ProcessDetails>,
    /// For `signal`: what the signal did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signalled: Option<SignalReport>,
    /// For `list`: the filter given (`name`, or `pid` and its descendants), in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Render for ProcessResult {
    /// A table for `list` (the session's own marked `*`), key lines for `info`, a sentence
    /// for `signal`.
    fn render(&self) -> Vec<Content> {
        let text = if let Some(details) = &self.process {
            details.text()
        } else if let Some(s) = &self.signalled {
            let task = s.task_id.as_deref().map(|t| format!(", background task {t}")).unwrap_or_default();
            format!("Sent {} to process {} (`{}`{task}): {}.", s.signal, s.pid, s.command, s.outcome)
        } else {
            let filter = self.filter.as_deref().map(|f| format!(" {f}")).unwrap_or_default();
            if self.processes.is_empty() {
                format!("No processes{filter}.")
            } else {
                let own = self.processes.iter().filter(|p| p.task_id.is_some()).count();
                let mut text = format!(
                    "{} process(es){filter}; {own} marked * are this session's (toolbelt and its background tasks).\n{:>7} {:>7}  {:<10} {:<9} {:>9}  {:>8}  COMMAND",
                    self.processes.len() + self.more,
                    "PID",
                    "PPID",
                    "USER",
                    "STATE",
                    "RSS",
                    "CPU"
                );
                for row in &self.processes {
                    text.push('\n');
                    text.push_str(&row.line());
                }
                if self.more > 0 {
                    text.push_str(&format!(
                        "\n… and {} more not shown; narrow the list with `name` (part of the command) or `pid` (a \
                         process and its descendants).",
                        self.more
                    ));
                }
                text
            }
        };
        vec![Content::text(text)]
    }
}
