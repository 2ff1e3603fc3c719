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
    /// What was typed and not yet run (judged with the line it ends up in), and how many
    /// writes changed it: a call judged against an older state is judged again.
    typist: Mutex<(typed::Typist, u64)>,
    /// Held from a call's last judgement through its write, so calls type one at a time.
    pub writing: tokio::sync::Mutex<()>,
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
        let typist = typed::Typist::for_command(&command);
        Session {
            terminal: master.is_some(),
            command,
            master: Mutex::new(master),
            input: tokio::sync::Mutex::new(Some(input)),
            screen: Mutex::new(screen),
            last_active: Mutex::new(Instant::now()),
            idle_limit,
            typist: Mutex::new((typist, 0)),
            writing: tokio::sync::Mutex::new(()),
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

    /// The text of the row the cursor is on: what a progress line shows.
    pub(super) fn latest_line(&self) -> String {
        lock(&self.screen).cursor_line()
    }

    /// What was typed and not yet run, and its generation.
    pub fn typist(&self) -> (typed::Typist, u64) {
        lock(&self.typist).clone()
    }

    /// Records what is typed and not yet run after a write (a new generation).
    pub fn set_typist(&self, typist: typed::Typist) {
        let mut state = lock(&self.typist);
        *state = (typist, state.1 + 1);
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

    /// Lets go of what only a running session needs once everything it printed was read
    /// in: its input, its terminal, and its emulated screen (what was not read yet, and the
    /// last screen, are kept as text; the log keeps every byte).
    pub(super) async fn ended(&self) {
        self.input.lock().await.take();
        lock(&self.master).take();
        lock(&self.screen).finish();
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

/// What typing `chars` (then closing the input, with `close`) into `session` touches, what
/// is typed and not yet run after it, and the generation of the state it was judged against.
pub fn judge_typing(
    session: &Session,
    chars: &str,
    close: bool,
    cx: &ToolContext,
) -> Result<(Access, typed::Typist, u64), ToolError> {
    let (typist, generation) = session.typist();
    let mut keys = chars.to_string();
    if close && session.terminal {
        keys.push('\u{4}');
    }
    let closing = close && !session.terminal;
    if keys.is_empty() && !closing {
        return Ok((Access::shared(), typist, generation));
    }
    let reading = reading_program(session);
    // Relative paths name files from where the reader is.
    let cx = match reading.pid.and_then(|pid| procfs::cwd(pid).ok()) {
        Some(cwd) => cx.clone().with_cwd(cwd),
        None => cx.clone(),
    };
    let at = typed::Typing {
        reader: reading.reader,
        program: &reading.name,
        command: &session.command,
        terminal: session.terminal,
        closing,
    };
    let (access, after) = typed::judge(at, &typist, &keys, &cx)?;
    Ok((access, after, generation))
}

/// The program reading what is typed, as judged.
struct Reading {
    reader: typed::Reader,
    name: String,
    pid: Option<i32>,
}

/// The program reading what is typed. In a terminal: the newest of the foreground group's
/// processes that started none of the others (`bash -c 'python3'` waits while `python3`
/// reads), by its executable (not the name it gave itself); through a pipe, the first word of
/// the session's command.
fn reading_program(session: &Session) -> Reading {
    if let Some(group) = session.foreground() {
        let procs: Vec<procfs::Stat> = procfs::all().into_iter().filter(|p| p.pgrp == group && !p.zombie()).collect();
        let leaf = procs.iter().filter(|p| !procs.iter().any(|c| c.ppid == p.pid)).max_by_key(|p| p.starttime);
        if let Some(leaf) = leaf {
            return match std::fs::read_link(format!("/proc/{}/exe", leaf.pid)) {
                Ok(exe) => {
                    let system = exe.starts_with("/usr/") || exe.starts_with("/bin/");
                    let name = exe.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    Reading { reader: typed::reader_of(&name, system), name, pid: Some(leaf.pid) }
                }
                Err(_) => Reading { reader: typed::Reader::Program, name: leaf.comm.clone(), pid: Some(leaf.pid) },
            };
        }
    }
    let first = session.command.split_whitespace().next().unwrap_or_default();
    let system = matches!(first, "bash" | "/bin/bash" | "/usr/bin/bash") || !first.contains('/');
    Reading { reader: typed::reader_of(first, system), name: first.to_string(), pid: None }
}
