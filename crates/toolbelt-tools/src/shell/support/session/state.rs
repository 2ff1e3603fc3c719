//! A running session's interactive side: where typing goes, the emulated screen, the idle
//! clock and what is typed but not yet run. Held by its background task.

use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use toolbelt_core::{Access, ToolContext, ToolError};

use super::screen::Screen;
use super::{io, typed};
use crate::process::{procfs, pty};

/// How long typing waits after a key that sends a signal, for the terminal to have dropped
/// what it had queued.
const SIGNAL_SETTLE: Duration = Duration::from_millis(50);

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The interactive side of a running session.
#[derive(Debug)]
pub struct Session {
    /// Whether its command has a terminal (else a pipe for input and one for output).
    pub terminal: bool,
    /// The command as started.
    pub command: String,
    /// The terminal's side toolbelt keeps, for a terminal session (let go once it ended).
    master: Mutex<Option<Arc<AsyncFd<OwnedFd>>>>,
    /// Where typing goes; `None` once the input is closed (a pipe's).
    input: tokio::sync::Mutex<Option<Arc<AsyncFd<OwnedFd>>>>,
    /// What it printed, as a person reads it.
    pub(super) screen: Mutex<Screen>,
    /// When the model last typed into or read it.
    pub(super) last_active: Mutex<Instant>,
    /// How long it may sit unused.
    pub(super) idle_limit: Duration,
    /// What was typed and not yet run (judged with the line it ends up in).
    typist: Mutex<typed::Typist>,
    /// Whether it was ended for sitting unused.
    pub(super) idled: std::sync::atomic::AtomicBool,
}

impl Session {
    /// A session of `command` whose output reads through `screen`, typed into through
    /// `input` (and, with a terminal, its `master` side), ended after `idle_limit` unused.
    pub fn new(
        command: String,
        master: Option<Arc<AsyncFd<OwnedFd>>>,
        input: Arc<AsyncFd<OwnedFd>>,
        screen: Screen,
        idle_limit: Duration,
    ) -> Self {
        Session {
            terminal: master.is_some(),
            command,
            master: Mutex::new(master),
            input: tokio::sync::Mutex::new(Some(input)),
            screen: Mutex::new(screen),
            last_active: Mutex::new(Instant::now()),
            idle_limit,
            typist: Mutex::new(typed::Typist::default()),
            idled: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Marks it used now (its idle time starts again).
    pub fn touch(&self) {
        *lock(&self.last_active) = Instant::now();
    }

    /// The output since the last read, as text, and whether lines scrolled past unread.
    pub fn take_new(&self) -> (String, bool) {
        lock(&self.screen).take_new()
    }

    /// The screen as it reads now.
    pub fn snapshot(&self) -> String {
        lock(&self.screen).snapshot()
    }

    /// The text of the row the cursor is on and those just above it: what a progress line
    /// shows.
    pub(super) fn latest_line(&self) -> String {
        let text = lock(&self.screen).snapshot();
        text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or_default().trim().to_string()
    }

    /// What was typed and not yet run.
    pub fn typist(&self) -> typed::Typist {
        lock(&self.typist).clone()
    }

    /// Records what is typed and not yet run after a write.
    pub fn set_typist(&self, typist: typed::Typist) {
        *lock(&self.typist) = typist;
    }

    /// The process group reading the terminal now (a terminal session's).
    pub fn foreground(&self) -> Option<i32> {
        lock(&self.master).as_ref().and_then(|m| pty::foreground(m.get_ref()))
    }

    /// Whether it was ended for sitting unused.
    pub fn idled(&self) -> bool {
        self.idled.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// How long it may sit unused.
    pub fn idle_limit(&self) -> Duration {
        self.idle_limit
    }

    /// Writes `bytes` as typed input.
    pub async fn write(&self, bytes: &[u8]) -> Result<(), ToolError> {
        let input = self.input.lock().await.clone();
        let Some(input) = input else {
            return Err(ToolError::failed(
                "this session's input is closed (close_stdin was sent); it can only be read now",
            ));
        };
        let bytes = lock(&self.screen).keys(bytes).into_owned();
        let failed = |e: std::io::Error| {
            ToolError::failed(format!("cannot type into the session: {e} (the program may have closed its input)"))
        };
        // A terminal drops what it has queued when a key sends a signal (Ctrl-C, Ctrl-\,
        // Ctrl-Z), as it does for a person typing ahead: what follows goes a moment later.
        let mut rest = &bytes[..];
        while self.terminal
            && let Some(at) = rest.iter().position(|b| matches!(b, 0x03 | 0x1a | 0x1c))
            && at + 1 < rest.len()
        {
            io::write_all(&input, &rest[..=at]).await.map_err(failed)?;
            tokio::time::sleep(SIGNAL_SETTLE).await;
            rest = &rest[at + 1..];
        }
        io::write_all(&input, rest).await.map_err(failed)
    }

    /// Lets go of what only a running session needs: its input and its terminal.
    pub(super) async fn ended(&self) {
        self.input.lock().await.take();
        lock(&self.master).take();
    }

    /// Once an ended session's last output was read: its screen shrinks to nothing (its log
    /// keeps every byte).
    pub fn retire(&self) {
        *lock(&self.screen) = Screen::new(1, 1, !self.terminal);
    }

    /// Closes the input: end of file for a pipe; for a terminal, the end-of-file key (what
    /// Ctrl-D does at the start of a line).
    pub async fn close_input(&self) -> Result<(), ToolError> {
        if self.terminal {
            return self.write(b"\x04").await;
        }
        self.input.lock().await.take();
        Ok(())
    }
}

/// What typing `chars` into `session` touches, and what is typed and not yet run after it.
pub fn judge_typing(session: &Session, chars: &str, cx: &ToolContext) -> Result<(Access, typed::Typist), ToolError> {
    if chars.is_empty() {
        return Ok((Access::shared(), session.typist()));
    }
    let program = reading_program(session);
    typed::judge(typed::reader_of(&program), &program, &session.command, &session.typist(), chars, cx)
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
