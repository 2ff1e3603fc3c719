//! Starting a command: `bash -c` in a session of its own (its own process group, and no
//! controlling terminal), stdin empty, pagers and colours off, tagged for the kill, with a
//! control pipe every process of the tree inherits.
//!
//! The control pipe (descriptor [`CONTROL_FD`] in the child) does two jobs. The script's
//! exit trap writes the final `pwd -P` to it, so `cd` can carry over to the next call without
//! mixing anything into the output; and since every descendant inherits it, the pipe still
//! being held open after the leader exited says that something of the tree is still running
//! ([`Control::held`]), without scanning `/proc`.
//!
//! **How the process starts.** The first choice is a `clone3` that shares the server's memory
//! until exec and starts the child in its cgroup (`spawn/clone.rs` says why that is cheaper
//! and safe; `spawn/child.rs` what the child does). Where that is not available (another
//! architecture, a kernel or container refusing `clone3`) or fails before the command ran, it
//! is started as before, by tokio (a fork, the new session being a hook);
//! both ways give the command the same environment, descriptors, session, cgroup and
//! sandbox (a test compares them).

use std::ffi::OsString;
use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};
use tokio::process::{ChildStderr, ChildStdout};

use crate::process::sandbox::Confinement;
use crate::process::tree::{TAG_VAR, Tree, become_subreaper, new_tag};

mod child;
mod clone;
mod fast;
mod plan;
mod process;
mod spawner;

pub use process::Process;

/// The descriptor the child sees the control pipe on.
pub const CONTROL_FD: RawFd = 98;

/// Most of what the control pipe carries that we read (a path, plus whatever a process
/// writes there by mistake).
const CONTROL_MAX: usize = 64 * 1024;

/// Set in every command's environment: no pager waits for a key, no colour codes reach the
/// model, no prompt waits for input that never comes.
const ENV: &[(&str, &str)] = &[
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("MANPAGER", "cat"),
    ("SYSTEMD_PAGER", "cat"),
    ("LESS", "-FRX"),
    ("NO_COLOR", "1"),
    ("CLICOLOR", "0"),
    ("TERM", "dumb"),
    ("CARGO_TERM_COLOR", "never"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_EDITOR", "true"),
    ("DEBIAN_FRONTEND", "noninteractive"),
    ("PIP_NO_INPUT", "1"),
    ("NPM_CONFIG_COLOR", "false"),
    ("NPM_CONFIG_YES", "false"),
];

/// Removed from every command's environment (they force colours back on).
const ENV_REMOVE: &[&str] = &["CLICOLOR_FORCE", "FORCE_COLOR"];

/// Marks every descriptor above stderr that this process inherited close-on-exec, so none
/// reaches a command it starts (a descriptor its parent left open, say `7>>/outside/f`, would
/// let a command write where its sandbox does not). Call once at start, before other threads
/// open files; sandboxed commands also do it in their own hook.
pub fn seal_inherited() {
    let Ok(entries) = std::fs::read_dir("/proc/self/fd") else { return };
    let fds: Vec<RawFd> = entries.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect();
    for fd in fds.into_iter().filter(|&fd| fd > 2) {
        set_cloexec(fd);
    }
}

/// Sets close-on-exec on descriptor `fd`; a number that is not open (the listing's own, closed
/// by now) fails harmlessly.
#[allow(unsafe_code)]
fn set_cloexec(fd: RawFd) {
    // SAFETY: fcntl(F_SETFD) takes only integers; on a descriptor that is not open it fails
    // with EBADF and changes nothing.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
    }
}

/// Where a command's output goes.
#[derive(Debug)]
pub enum Sink {
    /// Two pipes the caller reads (a foreground call).
    Pipes,
    /// One file both streams append to (a background task).
    File(std::fs::File),
    /// Input the caller writes and one output both streams go to (an interactive session).
    Typed(Typed),
}

/// The child's ends of an interactive session: what it reads, and where both its streams go.
/// With a pseudo-terminal both are its one end (the same device twice), and it becomes the
/// command's controlling terminal.
#[derive(Debug)]
pub struct Typed {
    /// What the command reads as stdin.
    pub input: OwnedFd,
    /// Where its stdout and stderr go.
    pub output: OwnedFd,
    /// Whether they are a pseudo-terminal's.
    pub terminal: bool,
}

/// A started command.
#[derive(Debug)]
pub struct Spawned {
    /// The `bash` process.
    pub child: Leader,
    /// Its stdout, with [`Sink::Pipes`].
    pub stdout: Option<ChildStdout>,
    /// Its stderr, with [`Sink::Pipes`].
    pub stderr: Option<ChildStderr>,
    /// Its process tree.
    pub tree: Tree,
    /// The read end of the control pipe.
    pub control: Control,
}

/// The `bash` process of a command, however it was started. Killed if dropped before it was
/// waited for.
#[derive(Debug)]
pub enum Leader {
    /// Started by `clone3`, waited for through its pidfd.
    Cloned(Process),
    /// Started by tokio (the fallback).
    Forked(tokio::process::Child),
}

impl Leader {
    /// Waits for the process to exit.
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match self {
            Leader::Cloned(p) => p.wait().await,
            Leader::Forked(c) => c.wait().await,
        }
    }
}

/// Changes to a command's environment, in order: a variable set, or removed when None (a
/// later change of the same variable wins).
pub type EnvChanges = Vec<(OsString, Option<OsString>)>;

/// How a command's process is set up besides its command line.
#[derive(Debug, Default)]
pub struct Setup {
    /// Its environment's changes (secrets removed, git configured), after those every command
    /// gets.
    pub env: EnvChanges,
    /// The sandbox, when one applies.
    pub confinement: Option<Confinement>,
    /// Room the control pipe gets (the kernel's, up to its limit) and how much of what comes
    /// through it is kept, when the command reports more than its working directory there (a
    /// persistent shell's state); `None`: the default 64 KiB.
    pub control_room: Option<usize>,
}

/// What to start.
#[derive(Debug)]
pub struct Launch<'a> {
    /// The command line, run with `bash -c`.
    pub command: &'a str,
    /// The working directory.
    pub cwd: &'a Path,
    /// Where the output goes.
    pub sink: Sink,
    /// Whether the final working directory is reported on the control pipe.
    pub report_cwd: bool,
    /// The cgroup the command runs in, when the machine offers one (it starts there).
    pub cgroup: Option<std::sync::Arc<crate::process::cgroup::CommandCgroup>>,
    /// The environment and the sandbox.
    pub setup: Setup,
}

/// The script `bash -c` runs. It first moves the control pipe, handed over as stdin, to
/// [`CONTROL_FD`] and makes stdin empty (so the confinement's `close_range` leaves it alone) —
/// for a session's command ([`Sink::Typed`]), handed over as stderr, which then joins stdout;
/// then, for a command started outside its cgroup (`cgroup_procs`), moves `bash` in; then,
/// when the command may change directory, sets an exit trap that reports where it ended; then
/// runs the command. All on the first line, so error messages keep their line numbers.
fn script(command: &str, report_cwd: bool, cgroup_procs: Option<&Path>, typed: bool) -> String {
    // A session's command keeps the stdin it was given: its control pipe came as stderr.
    let mut script = match typed {
        true => format!("exec {CONTROL_FD}>&2 2>&1; "),
        false => format!("exec {CONTROL_FD}>&0 </dev/null; "),
    };
    if let Some(procs) = cgroup_procs {
        // bash moves itself into the command's cgroup before it runs anything (a sandboxed
        // command was moved by its hook already, and this write is refused, silently).
        let quoted = procs.display().to_string().replace('\'', "'\\''");
        script.push_str(&format!("builtin echo 0 2>/dev/null >'{quoted}'; "));
    }
    if report_cwd && may_change_dir(command) {
        script.push_str(&format!("trap 'builtin pwd -P >&{CONTROL_FD} 2>&{CONTROL_FD}' EXIT; "));
    }
    script.push_str(command);
    script
}

/// Whether `command` might change the working directory: it names `cd`, `pushd` or `popd`,
/// or runs code it does not spell out (`source`, `.`, `eval`, `builtin`, `exec`). A false
/// yes costs a trap; without any of these words no directory change can happen.
fn may_change_dir(command: &str) -> bool {
    ["cd", "pushd", "popd", "source", "eval", "builtin", "exec"].iter().any(|w| command.contains(w))
        || command.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | '(' | '{')).any(|w| w == ".")
}

/// What every command's environment gets before its own changes: [`ENV`] set, [`ENV_REMOVE`]
/// removed, and the tree's tag.
fn base_env(tag: &str) -> EnvChanges {
    let mut env: EnvChanges = ENV.iter().map(|(k, v)| (OsString::from(k), Some(OsString::from(v)))).collect();
    env.extend(ENV_REMOVE.iter().map(|k| (OsString::from(k), None)));
    env.push((TAG_VAR.into(), Some(tag.into())));
    env
}

/// Starts the command.
pub fn spawn(launch: Launch<'_>) -> std::io::Result<Spawned> {
    spawn_with(launch, clone::available())
}

/// Starts the command, with `clone3` when `clone` is true, else as tokio does.
fn spawn_with(launch: Launch<'_>, clone: bool) -> std::io::Result<Spawned> {
    become_subreaper();
    let tag = new_tag();
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let flags = OFlag::from_bits_retain(fcntl(&read, FcntlArg::F_GETFL)?);
    fcntl(&read, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;
    let Launch { command, cwd, sink, report_cwd, cgroup, setup } = launch;
    let keep = setup.control_room.unwrap_or(CONTROL_MAX);
    if let Some(room) = setup.control_room {
        // Refused above the kernel's limit: the command then writes what fits, then waits.
        let _ = fcntl(&read, FcntlArg::F_SETPIPE_SZ(libc::c_int::try_from(room).unwrap_or(libc::c_int::MAX)));
    }
    let typed = matches!(sink, Sink::Typed(_));
    let mut env = base_env(&tag);
    env.extend(setup.env);

    // The clone starts the command inside its cgroup through the group's open directory; a
    // group without one is joined the fallback's way.
    if clone && cgroup.as_ref().is_none_or(|c| c.dir_fd().is_some()) {
        let start = fast::Start {
            script: &script(command, report_cwd, None, typed),
            cwd,
            env: &env,
            sink: &sink,
            control: &write,
            cgroup: cgroup.as_deref(),
            confinement: setup.confinement.as_ref(),
        };
        match fast::spawn(&start) {
            Ok((process, stdout, stderr)) => {
                drop(write);
                let tree = Tree::new(process.id().unwrap_or(0), tag, cgroup);
                let control = Control { read, data: Vec::new(), closed: false, keep };
                return Ok(Spawned { child: Leader::Cloned(process), stdout, stderr, tree, control });
            }
            Err(fast::NotStarted::Before(e)) => {
                tracing::debug!(error = %e, "clone3 spawn failed; starting the command with fork");
            }
            Err(fast::NotStarted::After(e)) => return Err(e),
        }
    }

    let mut cmd = tokio::process::Command::new("bash");
    let procs = cgroup.as_ref().map(|c| c.procs_path());
    cmd.arg("-c").arg(script(command, report_cwd, procs.as_deref(), typed)).current_dir(cwd);
    cmd.kill_on_drop(true);
    // A session of its own, without the person's terminal (first: before the sandbox's hook).
    toolbelt_core::process::new_session(cmd.as_std_mut());
    for (key, value) in &env {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    // The control pipe goes in as stdin (as stderr for a session); the script moves it.
    match sink {
        Sink::Pipes => {
            cmd.stdin(Stdio::from(write)).stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Sink::File(file) => {
            cmd.stdin(Stdio::from(write)).stdout(Stdio::from(file.try_clone()?)).stderr(Stdio::from(file));
        }
        Sink::Typed(Typed { input, output, terminal }) => {
            cmd.stdin(Stdio::from(input)).stdout(Stdio::from(output)).stderr(Stdio::from(write));
            if terminal {
                controlling_terminal(cmd.as_std_mut());
            }
        }
    }
    if let Some(confinement) = setup.confinement {
        confinement.install(&mut cmd, cgroup.clone());
    }
    let mut child = cmd.spawn()?;
    // Our copy of the write end goes with the command, or the pipe would never read as closed.
    drop(cmd);
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let leader = child.id().unwrap_or(0);
    let tree = Tree::new(leader, tag, cgroup);
    let control = Control { read, data: Vec::new(), closed: false, keep };
    Ok(Spawned { child: Leader::Forked(child), stdout, stderr, tree, control })
}

/// Makes the child's stdin, a pseudo-terminal, its controlling terminal (after the hook that
/// starts its session, before the sandbox's).
#[allow(unsafe_code)]
fn controlling_terminal(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the hook runs in the child between fork and exec and makes one system call,
    // which is async-signal-safe; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(|| {
            if libc::ioctl(libc::STDIN_FILENO, libc::TIOCSCTTY, 0) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// The read end of a command's control pipe.
#[derive(Debug)]
pub struct Control {
    read: OwnedFd,
    data: Vec<u8>,
    closed: bool,
    /// The most bytes of what comes through kept.
    keep: usize,
}

impl Control {
    /// Reads what is buffered and says whether some process still holds the write end (the
    /// tree is not entirely gone). Never blocks.
    pub fn held(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        while !self.closed {
            match nix::unistd::read(&self.read, &mut chunk) {
                Ok(0) => self.closed = true,
                Ok(n) => {
                    let room = self.keep.saturating_sub(self.data.len());
                    self.data.extend_from_slice(&chunk[..n.min(room)]);
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return true,
                Err(_) => self.closed = true,
            }
        }
        false
    }

    /// Everything read from the pipe (up to what is kept).
    pub fn data(&mut self) -> &[u8] {
        self.held();
        &self.data
    }

    /// The working directory the command ended in, as its exit trap reported it (the last
    /// line written, in case something else wrote there too).
    pub fn final_cwd(&mut self) -> Option<PathBuf> {
        use std::os::unix::ffi::OsStrExt as _;
        self.held();
        let line = self.data.split(|&b| b == b'\n').rev().find(|l| l.first() == Some(&b'/'))?;
        Some(PathBuf::from(std::ffi::OsStr::from_bytes(line)))
    }
}

#[cfg(test)]
mod tests;
