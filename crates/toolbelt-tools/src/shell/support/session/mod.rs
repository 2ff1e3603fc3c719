//! Interactive sessions: a command that keeps running after its `Bash` call yields, which
//! the model then types into (`WriteStdin`) and reads back.
//!
//! A session is a background task (`BackgroundTasks` lists it, `TaskOutput` reads it,
//! `TaskStop` ends it with its whole tree) whose command was given an input toolbelt writes
//! to: with `tty`, a pseudo-terminal that is its controlling terminal, so REPLs, editors,
//! password prompts and full-screen programs behave as they do for a person; without, a pipe.
//! A pump reads what it prints: every byte goes to the task's log, and through the emulated
//! terminal ([`screen`]) that turns it into the text a person would read. A watcher records
//! how it ended, kills what is left of its tree, and ends it once it has sat unused for
//! `shell.session_idle_timeout`. Its sandbox, cgroup, environment and audit are Bash's.
//!
//! [`typed`] judges what is typed; [`io`] moves the bytes; [`answer`] is what a read answers.

pub(crate) mod answer;
pub(crate) mod io;
pub(crate) mod screen;
pub(crate) mod state;
pub(crate) mod typed;
pub(crate) mod yielded;

use std::path::Path;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::Interest;
use toolbelt_core::{ToolContext, ToolError};

use crate::process::cgroup::CommandCgroup;
use crate::process::config::BashConfig;
use crate::process::foreground::spawn_error;
use crate::process::made::PlacesWatch;
use crate::process::pty::{self, Size};
use crate::process::spawn::{Launch, Setup, Sink, Spawned, Typed, spawn};
use crate::process::spill::SpillTarget;
use crate::shell::support::background::{Recorded, Task, Tasks};
use crate::tasks::TaskStatus;

use self::screen::Screen;
pub use self::state::Session;
use self::state::lock;

/// The terminal's size when the call does not set one.
pub const DEFAULT_SIZE: Size = Size { rows: 40, cols: 120 };

/// How long a `Bash` call with `tty` waits for output before it yields, when it does not say.
pub const DEFAULT_BASH_YIELD: Duration = Duration::from_secs(10);

/// What a terminal session's command gets besides Bash's environment: a terminal type
/// programs know (Bash's `TERM=dumb` would keep editors and REPLs plain), colours allowed
/// (the emulator interprets them), and the settings that answer prompts for a command
/// without input removed (an editor for `git commit`, git's own prompts).
const TERMINAL_ENV: &[(&str, Option<&str>)] = &[
    ("TERM", Some("xterm-256color")),
    ("NO_COLOR", None),
    ("CLICOLOR", None),
    ("GIT_EDITOR", None),
    ("GIT_TERMINAL_PROMPT", None),
    ("DEBIAN_FRONTEND", None),
    ("PIP_NO_INPUT", None),
];

/// What a new session runs, and how.
#[derive(Debug)]
pub struct Request<'a> {
    /// The `bash -c` line.
    pub command: &'a str,
    /// What it does, as the call described it.
    pub description: Option<&'a str>,
    /// A terminal of this size; `None`: pipes.
    pub terminal: Option<Size>,
}

/// Starts a session; returns its task once it runs.
pub fn start(
    cx: &ToolContext,
    request: Request<'_>,
    cwd: &Path,
    config: &BashConfig,
    cgroup: Option<Arc<CommandCgroup>>,
    mut setup: Setup,
) -> Result<Arc<Task>, ToolError> {
    let watch = PlacesWatch::of(setup.confinement.as_ref());
    let slot = cx.session().slot::<Tasks>();
    let mut tasks = slot.lock().unwrap_or_else(PoisonError::into_inner);
    let running = tasks.running_sessions();
    if running >= config.max_sessions {
        return Err(ToolError::failed(format!(
            "too many interactive sessions: {running} are running (the limit is {}, `shell.max_sessions`). End one \
             with TaskStop (BackgroundTasks lists them), then start this again.",
            config.max_sessions
        )));
    }
    let id = tasks.next_id("session", config)?;
    let (mut log_file, log) = SpillTarget::new(cx, "tasks", &id)
        .create()
        .map_err(|reason| ToolError::failed(format!("cannot create the session's log file: {reason}")))?;
    let (typed, ours, master) = match request.terminal {
        Some(size) => {
            let pty = pty::open(size).map_err(|e| ToolError::failed(format!("cannot open a terminal: {e}")))?;
            let slave2 = pty.slave.try_clone().map_err(spawn_error)?;
            let master =
                Arc::new(pty::register(pty.master, Interest::READABLE | Interest::WRITABLE).map_err(spawn_error)?);
            setup.env.extend(TERMINAL_ENV.iter().map(|(k, v)| (k.into(), v.map(Into::into))));
            // Bash's line editor reads bytes past ASCII as Meta keys in a locale without
            // UTF-8 (`î` would be two editing keys): a terminal session gets a UTF-8 one.
            if !locale_is_utf8() {
                setup.env.push(("LC_CTYPE".into(), Some("C.UTF-8".into())));
                if std::env::var_os("LC_ALL").is_some_and(|v| !v.is_empty()) {
                    setup.env.push(("LC_ALL".into(), Some("C.UTF-8".into())));
                }
            }
            setup.env.push(("COLUMNS".into(), Some(size.cols.to_string().into())));
            setup.env.push(("LINES".into(), Some(size.rows.to_string().into())));
            let typed = Typed { input: pty.slave, output: slave2, terminal: true };
            (typed, (Arc::clone(&master), Arc::clone(&master)), Some(master))
        }
        None => {
            let (input, output, ours) = io::pipes().map_err(spawn_error)?;
            (Typed { input, output, terminal: false }, ours, None)
        }
    };
    let terminal = request.terminal.is_some();
    let launch = Launch { command: request.command, cwd, sink: Sink::Typed(typed), report_cwd: false, cgroup, setup };
    let Spawned { mut child, tree, mut control, .. } = spawn(launch).map_err(spawn_error)?;
    let size = request.terminal.unwrap_or(DEFAULT_SIZE);
    let screen = Screen::new(size.rows, size.cols, !terminal);
    let session =
        Arc::new(Session::new(request.command.to_string(), master, ours.0, screen, config.session_idle_timeout));
    let recorded = Recorded {
        shown: request.command,
        description: request.description,
        tree,
        monitor: None,
        watch,
        session: Some(Arc::clone(&session)),
    };
    let task = Task::new(id, log, recorded);
    tasks.add(Arc::clone(&task));
    drop(tasks);

    let (drained_tx, drained) = tokio::sync::oneshot::channel::<()>();
    let pumped = Arc::clone(&task);
    let output = ours.1;
    tokio::spawn(async move {
        io::pump(&output, |bytes| {
            use std::io::Write as _;
            if let Err(e) = log_file.write_all(bytes) {
                tracing::warn!("cannot add to the log of `{}`: {e}", pumped.id);
            }
            if let Some(session) = &pumped.session {
                lock(&session.screen).feed(bytes);
            }
            pumped.tell_news();
        })
        .await;
        let _ = drained_tx.send(());
    });
    let watched = Arc::clone(&task);
    tokio::spawn(async move {
        let status = tokio::select! {
            status = child.wait() => status.ok(),
            () = idle(&session) => {
                session.idled.store(true, std::sync::atomic::Ordering::Relaxed);
                watched.stop();
                child.wait().await.ok()
            }
        };
        // What it printed last reaches the screen before anyone is told it ended: a program
        // of its tree still holding the output is killed, then the output read to its end.
        let mut drained = drained;
        if tokio::time::timeout(Duration::from_millis(200), &mut drained).await.is_err() {
            watched.tree().leftovers(control.held());
            let _ = tokio::time::timeout(Duration::from_secs(2), drained).await;
        }
        session.ended().await;
        watched.exited(status, control.held());
    });
    Ok(task)
}

/// Whether the locale toolbelt passes on reads UTF-8 (`LC_ALL`, else `LC_CTYPE`, else
/// `LANG`, the first one set).
fn locale_is_utf8() -> bool {
    let locale = ["LC_ALL", "LC_CTYPE", "LANG"].iter().find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()));
    locale.is_some_and(|l| {
        let l = l.to_ascii_lowercase();
        l.contains("utf-8") || l.contains("utf8")
    })
}

/// Returns once the session has sat unused for its idle limit.
async fn idle(session: &Session) {
    loop {
        let since = *lock(&session.last_active);
        let deadline = since + session.idle_limit;
        if Instant::now() >= deadline {
            return;
        }
        tokio::time::sleep_until(deadline.into()).await;
    }
}

/// Waits up to `limit` for the session's command to end, saying its latest line as progress
/// while it prints; returns early if `cx` is cancelled.
pub async fn wait(task: &Task, session: &Session, limit: Duration, cx: &ToolContext) {
    if limit.is_zero() {
        // No timer: one would round up to the timer's next millisecond.
        return;
    }
    let mut news = task.news();
    let mut done = task.done();
    let deadline = tokio::time::Instant::now() + limit;
    let mut said = String::new();
    loop {
        tokio::select! {
            _ = done.wait_for(|d| *d) => return,
            () = tokio::time::sleep_until(deadline) => return,
            () = cx.cancellation().cancelled() => return,
            changed = news.changed() => {
                if changed.is_err() {
                    return;
                }
                let line = session.latest_line();
                if !line.is_empty() && line != said {
                    cx.progress(crate::process::capture::one_line(&line, 200), None);
                    said = line;
                }
            }
        }
    }
}

/// The error for a session id this MCP session does not have.
pub fn unknown(cx: &ToolContext, id: &str) -> ToolError {
    let ids: Vec<String> = cx.with_slot::<Tasks, _>(|t| {
        t.all()
            .iter()
            .filter(|t| t.session.is_some() && t.status().0 == TaskStatus::Running)
            .map(|t| t.id.clone())
            .collect()
    });
    if ids.is_empty() {
        ToolError::failed(format!(
            "no running session `{id}` here: start one with Bash and `tty: true` (or `yield_time_ms`); a session \
             belongs to the session (the MCP session) that started it"
        ))
    } else {
        ToolError::failed(format!("no running session `{id}` here; the running ones are {}", ids.join(", ")))
    }
}

/// The running session `id` of this session, with its task.
pub fn find(cx: &ToolContext, id: &str) -> Result<(Arc<Task>, Arc<Session>), ToolError> {
    let task = cx.with_slot::<Tasks, _>(|t| t.get(id)).ok_or_else(|| unknown(cx, id))?;
    let session = task.session.clone().ok_or_else(|| {
        ToolError::failed(format!(
            "`{id}` is a background task started without an input to type into; read it with TaskOutput. To type \
             into a command, start it with Bash and `tty: true` or `yield_time_ms`."
        ))
    })?;
    Ok((task, session))
}
