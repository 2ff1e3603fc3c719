//! Starting a command: `bash -c` in its own process group, stdin empty, pagers and colours
//! off, tagged for the kill, with a control pipe every process of the tree inherits.
//!
//! The control pipe (descriptor [`CONTROL_FD`] in the child) does two jobs. The script's
//! exit trap writes the final `pwd -P` to it, so `cd` can carry over to the next call without
//! mixing anything into the output; and since every descendant inherits it, the pipe still
//! being held open after the leader exited says that something of the tree is still running
//! ([`Control::held`]), without scanning `/proc`.

use std::os::fd::{OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::shell::support::tree::{TAG_VAR, Tree, become_subreaper, new_tag};

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
}

/// A started command.
#[derive(Debug)]
pub struct Spawned {
    /// The `bash` process.
    pub child: tokio::process::Child,
    /// Its process tree.
    pub tree: Tree,
    /// The read end of the control pipe.
    pub control: Control,
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
    /// The cgroup the command runs in, when the machine offers one (the confinement's hook
    /// joins it in the child; the parent moves the leader there too).
    pub cgroup: Option<std::sync::Arc<crate::shell::support::cgroup::CommandCgroup>>,
}

/// The script `bash -c` runs. It first moves the control pipe, handed over as stdin, to
/// [`CONTROL_FD`] and makes stdin empty (so no `pre_exec` hook is needed, and the spawn can
/// use the cheaper `posix_spawn`); then, when the command may change directory, sets an exit
/// trap that reports where it ended; then runs the command. All on the first line, so error
/// messages keep their line numbers.
fn script(command: &str, report_cwd: bool, cgroup_procs: Option<&Path>) -> String {
    let mut script = format!("exec {CONTROL_FD}>&0 </dev/null; ");
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

/// Starts the command. `configure` gets the command last, to add a confinement.
pub fn spawn(launch: Launch<'_>, configure: impl FnOnce(&mut tokio::process::Command)) -> std::io::Result<Spawned> {
    become_subreaper();
    let tag = new_tag();
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let flags = OFlag::from_bits_retain(fcntl(&read, FcntlArg::F_GETFL)?);
    fcntl(&read, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;

    let mut command = tokio::process::Command::new("bash");
    let procs = launch.cgroup.as_ref().map(|c| c.procs_path());
    command.arg("-c").arg(script(launch.command, launch.report_cwd, procs.as_deref())).current_dir(launch.cwd);
    // The control pipe goes in as stdin; the script moves it and makes stdin empty.
    command.stdin(Stdio::from(write)).process_group(0).kill_on_drop(true);
    for (key, value) in ENV {
        command.env(key, value);
    }
    for key in ENV_REMOVE {
        command.env_remove(key);
    }
    command.env(TAG_VAR, &tag);
    match launch.sink {
        Sink::Pipes => {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
        Sink::File(file) => {
            command.stdout(Stdio::from(file.try_clone()?)).stderr(Stdio::from(file));
        }
    }
    configure(&mut command);
    let child = command.spawn()?;
    // Our copy of the write end goes with the command, or the pipe would never read as closed.
    drop(command);
    let leader = child.id().unwrap_or(0);
    let tree = Tree::new(leader, tag, launch.cgroup);
    Ok(Spawned { child, tree, control: Control { read, data: Vec::new(), closed: false } })
}

/// The read end of a command's control pipe.
#[derive(Debug)]
pub struct Control {
    read: OwnedFd,
    data: Vec<u8>,
    closed: bool,
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
                    let room = CONTROL_MAX.saturating_sub(self.data.len());
                    self.data.extend_from_slice(&chunk[..n.min(room)]);
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => return true,
                Err(_) => self.closed = true,
            }
        }
        false
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
mod tests {
    use super::*;

    #[test]
    fn the_prologue_shares_the_first_line() {
        assert_eq!(script("ls", false, None), "exec 98>&0 </dev/null; ls");
        assert_eq!(script("ls", true, None), "exec 98>&0 </dev/null; ls", "no trap without a way to change directory");
        let joined = script("ls", false, Some(Path::new("/cg/cmd-1/cgroup.procs")));
        assert_eq!(joined, "exec 98>&0 </dev/null; builtin echo 0 2>/dev/null >'/cg/cmd-1/cgroup.procs'; ls");
        let s = script("cd x\nexit 3", true, None);
        assert!(s.starts_with("exec 98>&0 </dev/null; trap '") && s.ends_with("EXIT; cd x\nexit 3"), "{s}");
        for command in ["pushd /tmp", ". ./env.sh", "x; . env", "source env", "eval \"$X\""] {
            assert!(may_change_dir(command), "{command}");
        }
        for command in ["ls -la", "cargo test", "echo a.b", "./run.sh"] {
            assert!(!may_change_dir(command), "{command}");
        }
    }
}
