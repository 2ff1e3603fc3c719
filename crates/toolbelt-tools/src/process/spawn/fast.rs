//! The parent's side of the `clone3` spawn: everything the child will read, built before the
//! clone (the program's path, `argv`, `envp`, the descriptors), then the clone, then the
//! parent's ends of the pipes.

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, FromRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicI32;
use std::sync::{Mutex, PoisonError};

use nix::fcntl::OFlag;
use tokio::process::{ChildStderr, ChildStdout};

use super::clone::{self, Failure};
use super::plan::Plan;
use super::process::Process;
use super::spawner;
use super::{EnvChanges, Sink};
use crate::process::cgroup::CommandCgroup;
use crate::process::sandbox::{Bounding, Confinement};

/// What to start.
#[derive(Debug)]
pub(super) struct Start<'a> {
    /// What `bash -c` runs.
    pub script: &'a str,
    /// The working directory.
    pub cwd: &'a Path,
    /// The environment's changes, in order, over toolbelt's own.
    pub env: &'a EnvChanges,
    /// Where stdout and stderr go.
    pub sink: &'a Sink,
    /// The control pipe's write end, the child's stdin (its stderr with [`Sink::Typed`]).
    pub control: &'a OwnedFd,
    /// The cgroup the child starts in.
    pub cgroup: Option<&'a CommandCgroup>,
    /// The sandbox.
    pub confinement: Option<&'a Confinement>,
}

/// The started process and, with [`Sink::Pipes`], the read ends of its output.
type Started = (Process, Option<ChildStdout>, Option<ChildStderr>);

/// Why the command was not started.
#[derive(Debug)]
pub(super) enum NotStarted {
    /// Nothing of it ran (the clone is not available here, or the child failed before exec):
    /// it may be started another way.
    Before(std::io::Error),
    /// `bash` was started but could not be watched: it was killed, and must not be started
    /// again.
    After(std::io::Error),
}

/// Starts `bash -c script` as [`Start`] says.
pub(super) fn spawn(start: &Start<'_>) -> Result<Started, NotStarted> {
    let (pid, pidfd, read_ends) = start_child(start).map_err(NotStarted::Before)?;
    watch(pid, pidfd, read_ends, start.confinement).map_err(NotStarted::After)
}

/// The parent's ends of the output pipes.
type ReadEnds = Option<(OwnedFd, OwnedFd)>;

/// Everything up to the child's exec: its pid, its pidfd and the parent's pipe ends.
fn start_child(start: &Start<'_>) -> std::io::Result<(libc::pid_t, OwnedFd, ReadEnds)> {
    let env = environment(start.env);
    let path = env.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_os_str());
    let program = bash(path)?;
    let env: Vec<CString> = env
        .into_iter()
        .map(|(key, value)| CString::new([key.as_bytes(), b"=", value.as_bytes()].concat()))
        .collect::<Result<_, _>>()?;
    let argv = [c"bash".to_owned(), c"-c".to_owned(), CString::new(start.script)?];
    let argv_ptrs = pointers(&argv);
    let envp = pointers(&env);
    let cwd = CString::new(start.cwd.as_os_str().as_bytes())?;

    // The parent's read ends, and the child's ends it closes once the child has exec'd.
    let mut keep: Vec<OwnedFd> = Vec::new();
    let mut read_ends: Option<(OwnedFd, OwnedFd)> = None;
    let (stdout, stderr) = match start.sink {
        Sink::Pipes => {
            let (out_read, out_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
            let (err_read, err_write) = nix::unistd::pipe2(OFlag::O_CLOEXEC)?;
            let fds = (above_stderr(out_write.as_fd(), &mut keep)?, above_stderr(err_write.as_fd(), &mut keep)?);
            keep.extend([out_write, err_write]);
            read_ends = Some((out_read, err_read));
            fds
        }
        Sink::File(file) => {
            let fd = above_stderr(file.as_fd(), &mut keep)?;
            (fd, fd)
        }
        Sink::Typed(typed) => {
            (above_stderr(typed.input.as_fd(), &mut keep)?, above_stderr(typed.output.as_fd(), &mut keep)?)
        }
    };
    let control = above_stderr(start.control.as_fd(), &mut keep)?;
    // The control pipe comes in as stdin, or as stderr for a command given its own input
    // (the script moves it either way).
    let stdio = match start.sink {
        Sink::Typed(_) => [stdout, stderr, control],
        _ => [control, stdout, stderr],
    };
    let plan = Plan {
        program: &program,
        argv: &argv_ptrs,
        envp: &envp,
        cwd: &cwd,
        stdio,
        terminal: matches!(start.sink, Sink::Typed(t) if t.terminal),
        confinement: start.confinement,
        error: AtomicI32::new(0),
    };
    let cgroup = start.cgroup.and_then(CommandCgroup::dir_fd);
    // A sandboxed command starts from the thread whose bounding set is already empty.
    let started = if start.confinement.is_some_and(Confinement::drops_capabilities) {
        spawner::start(&plan, cgroup)
    } else {
        clone::start(&plan, cgroup, Bounding::Full)
    };
    drop(keep);
    let (pid, pidfd) = started.map_err(|failure| match failure {
        Failure::Clone(errno) => std::io::Error::from_raw_os_error(errno),
        Failure::Child(errno) => {
            if errno == libc::ENOENT {
                forget_bash();
            }
            std::io::Error::from_raw_os_error(errno)
        }
    })?;
    Ok((pid, pidfd, read_ends))
}

/// The started child as a [`Process`] the reactor watches, with its output; on failure the
/// child is killed and reaped.
#[allow(unsafe_code)]
fn watch(
    pid: libc::pid_t,
    pidfd: OwnedFd,
    read_ends: ReadEnds,
    confinement: Option<&Confinement>,
) -> std::io::Result<Started> {
    let mut process = match Process::new(pid, pidfd) {
        Ok(process) => process,
        Err(e) => {
            // SAFETY: kill and waitpid on our own child, not waited for yet (its pid cannot
            // have been reused); waitpid writes the status to `status`.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                let mut status = 0;
                libc::waitpid(pid, &mut status, 0);
            }
            return Err(e);
        }
    };
    if confinement.is_some_and(Confinement::has_namespace) {
        process.hold_namespace();
    }
    // From here on a failure drops `process`, which kills and reaps it.
    let Some((out_read, err_read)) = read_ends else { return Ok((process, None, None)) };
    let stdout = ChildStdout::from_std(std::process::ChildStdout::from(out_read))?;
    let stderr = ChildStderr::from_std(std::process::ChildStderr::from(err_read))?;
    Ok((process, Some(stdout), Some(stderr)))
}

/// Toolbelt's environment with `changes` applied, sorted by name (as the standard library
/// builds a child's).
fn environment(changes: &EnvChanges) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = std::env::vars_os().collect();
    for (key, value) in changes {
        let at = env.iter().position(|(k, _)| k == key);
        match (at, value) {
            (Some(at), Some(value)) => env[at].1.clone_from(value),
            (None, Some(value)) => env.push((key.clone(), value.clone())),
            (Some(at), None) => {
                env.swap_remove(at);
            }
            (None, None) => {}
        }
    }
    env.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    env
}

/// A null-terminated array of pointers to `strings`.
fn pointers(strings: &[CString]) -> Vec<*const libc::c_char> {
    strings.iter().map(|s| s.as_ptr()).chain([std::ptr::null()]).collect()
}

/// `fd`'s number when it is above 2 (so setting up the child's 0, 1 and 2 cannot overwrite
/// it), else that of a close-on-exec copy above 2, held in `keep` until the clone. (The
/// standard library opens 0, 1 and 2 at start when they are closed, so this is a safeguard.)
fn above_stderr(fd: BorrowedFd<'_>, keep: &mut Vec<OwnedFd>) -> std::io::Result<RawFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd.as_raw_fd());
    }
    let copy = fd.try_clone_to_owned()?;
    let above = nix::fcntl::fcntl(&copy, nix::fcntl::FcntlArg::F_DUPFD_CLOEXEC(3))?;
    keep.push(copy);
    // SAFETY: F_DUPFD_CLOEXEC returned a new descriptor that nothing else owns.
    #[allow(unsafe_code)]
    let above = unsafe { OwnedFd::from_raw_fd(above) };
    let raw = above.as_raw_fd();
    keep.push(above);
    Ok(raw)
}

/// Where `bash` was found, for the `PATH` it was looked up in.
static BASH: Mutex<Option<(Option<OsString>, CString)>> = Mutex::new(None);

/// The path of `bash` on `path` (the child's `PATH`; the C library's default when it has
/// none), looked up once per `PATH` value: the child execs it directly instead of trying every
/// directory in turn (each miss is a failed `execve`). A directory that is not absolute is
/// left to the fallback, which searches as `execvp` does.
fn bash(path: Option<&OsStr>) -> std::io::Result<CString> {
    let mut cached = BASH.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((for_path, found)) = cached.as_ref()
        && for_path.as_deref() == path
    {
        return Ok(found.clone());
    }
    let search = path.unwrap_or(OsStr::new("/bin:/usr/bin"));
    for dir in std::env::split_paths(search) {
        if !dir.is_absolute() {
            break;
        }
        let candidate: PathBuf = dir.join("bash");
        if is_executable(&candidate) {
            let found = CString::new(candidate.as_os_str().as_bytes())?;
            *cached = Some((path.map(OsStr::to_os_string), found.clone()));
            return Ok(found);
        }
    }
    Err(std::io::Error::from(std::io::ErrorKind::NotFound))
}

/// Forgets where `bash` was (it could not be executed there any more).
fn forget_bash() {
    *BASH.lock().unwrap_or_else(PoisonError::into_inner) = None;
}

fn is_executable(path: &Path) -> bool {
    let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: access with a NUL-terminated path.
    #[allow(unsafe_code)]
    let ok = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
    ok && path.is_file()
}
