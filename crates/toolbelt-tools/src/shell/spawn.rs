//! Starting a command: `bash -c` in its own process group, stdin empty, pagers and colours
//! off, tagged for the kill, with a control pipe every process of the tree inherits.
//!
//! The control pipe (descriptor [`CONTROL_FD`] in the child) does two jobs. The script's
//! exit trap writes the final `pwd -P` to it, so `cd` can carry over to the next call without
//! mixing anything into the output; and since every descendant inherits it, the pipe still
//! being held open after the leader exited says that something of the tree is still running
//! ([`Control::held`]), without scanning `/proc`.

use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::errno::Errno;
use nix::fcntl::{FcntlArg, OFlag, fcntl};

use crate::shell::tree::{TAG_VAR, Tree, become_subreaper, new_tag};

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
}

/// The script `bash -c` runs: the command, after an exit trap (on the same line, so error
/// messages keep their line numbers) that reports the working directory.
fn script(command: &str, report_cwd: bool) -> String {
    if report_cwd {
        format!("trap 'builtin pwd -P >&{CONTROL_FD} 2>/dev/null' EXIT; {command}")
    } else {
        command.to_string()
    }
}

/// Starts the command. `configure` gets the command last, to add a confinement.
pub fn spawn(launch: Launch<'_>, configure: impl FnOnce(&mut tokio::process::Command)) -> std::io::Result<Spawned> {
    become_subreaper();
    let tag = new_tag();
    let (read, write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
    let flags = OFlag::from_bits_retain(fcntl(&read, FcntlArg::F_GETFL)?);
    fcntl(&read, FcntlArg::F_SETFL(flags | OFlag::O_NONBLOCK))?;

    let mut command = tokio::process::Command::new("bash");
    command.arg("-c").arg(script(launch.command, launch.report_cwd)).current_dir(launch.cwd);
    command.stdin(Stdio::null()).process_group(0).kill_on_drop(true);
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
    install_control_fd(&mut command, write.as_raw_fd());
    configure(&mut command);
    let child = command.spawn()?;
    // Our copy of the write end must go, or the pipe would never read as closed.
    drop(write);
    drop(command);
    let leader = child.id().unwrap_or(0);
    Ok(Spawned { child, tree: Tree::new(leader, tag), control: Control { read, data: Vec::new(), closed: false } })
}

/// Puts the control pipe's write end on [`CONTROL_FD`] in the child, without close-on-exec.
#[allow(unsafe_code)]
fn install_control_fd(command: &mut tokio::process::Command, write_fd: RawFd) {
    // SAFETY: the closure runs in the child between fork and exec. It calls only `dup2` and
    // `fcntl` (async-signal-safe) and reads errno; it allocates nothing and takes no lock.
    unsafe {
        command.pre_exec(move || {
            if write_fd == CONTROL_FD {
                let flags = libc::fcntl(write_fd, libc::F_GETFD);
                if flags < 0 || libc::fcntl(write_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            } else if libc::dup2(write_fd, CONTROL_FD) < 0 {
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
    fn the_trap_shares_the_first_line() {
        assert_eq!(script("ls", false), "ls");
        let s = script("echo hi\nexit 3", true);
        assert!(s.starts_with("trap '") && s.ends_with("EXIT; echo hi\nexit 3"), "{s}");
    }
}
