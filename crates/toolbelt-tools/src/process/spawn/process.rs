//! A process started by [`super::clone`], waited for through its pidfd.
//!
//! The pidfd (from `CLONE_PIDFD`) becomes readable when the process exits, so tokio's reactor
//! wakes the waiting task without a `SIGCHLD` handler; the exit status is then collected with
//! `waitpid` on the process's own pid, which stays ours (a zombie) until then. Like
//! `kill_on_drop(true)` on a tokio child, dropping one that was not waited for kills it and
//! reaps it.
//!
//! A sandboxed command with protected paths runs in a mount namespace of its own, and the
//! kernel tears a namespace down when its last process exits, waiting for a read-copy-update
//! grace period first: done by the exiting `bash`, that wait would come before the server sees
//! the exit. So the process holds its namespace ([`Process::hold_namespace`]) until it has
//! been waited for, then a background thread lets it go.

use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
use std::os::unix::process::ExitStatusExt as _;
use std::process::ExitStatus;
use std::sync::OnceLock;
use std::sync::mpsc::{Sender, channel};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;

/// A started process.
#[derive(Debug)]
pub struct Process {
    pid: libc::pid_t,
    pidfd: AsyncFd<OwnedFd>,
    status: Option<ExitStatus>,
    /// The process's mount namespace, held until it has been waited for.
    namespace: Option<OwnedFd>,
}

impl Process {
    /// Takes over the process `pid`, with `pidfd` referring to it. Must run inside a tokio
    /// runtime (the pidfd is registered with its reactor).
    #[allow(unsafe_code)]
    pub(super) fn new(pid: libc::pid_t, pidfd: OwnedFd) -> std::io::Result<Self> {
        // SAFETY: an `OwnedFd` is open, keeps its number and is closed only when dropped,
        // with the `AsyncFd` that owns it.
        let pidfd =
            unsafe { AsyncFd::register_with_interest(pidfd, Interest::READABLE) }.map_err(std::io::Error::from)?;
        Ok(Self { pid, pidfd, status: None, namespace: None })
    }

    /// Holds the process's mount namespace until the process has been waited for (see the
    /// module docs). Call right after the start: a process already gone has nothing to hold.
    #[allow(unsafe_code)]
    pub(super) fn hold_namespace(&mut self) {
        /// `PIDFD_GET_MNT_NAMESPACE` (Linux 6.11): the namespace from the pidfd.
        const PIDFD_GET_MNT_NAMESPACE: libc::c_ulong = 0xFF03;
        // SAFETY: the ioctl takes the pidfd and no argument, and returns a new descriptor.
        let fd = unsafe { libc::ioctl(self.pidfd.get_ref().as_raw_fd(), PIDFD_GET_MNT_NAMESPACE as _, 0) };
        self.namespace = if fd >= 0 {
            // SAFETY: a descriptor the ioctl just created, owned by nothing else.
            Some(unsafe { OwnedFd::from_raw_fd(fd) })
        } else {
            std::fs::File::open(format!("/proc/{}/ns/mnt", self.pid)).ok().map(OwnedFd::from)
        };
    }

    /// The process id, until the process has been waited for.
    pub fn id(&self) -> Option<u32> {
        match self.status {
            None => u32::try_from(self.pid).ok(),
            Some(_) => None,
        }
    }

    /// Waits for the process to exit and returns its status (at once if it was already
    /// collected).
    pub async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            // Readiness is cleared before looking again, so an exit after the look is a new
            // event, and one before it is seen by the look.
            self.pidfd.readable().await?.clear_ready();
        }
    }

    /// The exit status when the process has exited, collecting it; None while it runs.
    fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        if self.status.is_none() {
            self.status = reap(self.pid, libc::WNOHANG)?;
            if self.status.is_some() {
                release(self.namespace.take());
            }
        }
        Ok(self.status)
    }
}

/// Closes `fd` on a background thread: the last close of a mount namespace waits for the
/// kernel's teardown.
fn release(fd: Option<OwnedFd>) {
    static CLOSER: OnceLock<Option<Sender<OwnedFd>>> = OnceLock::new();
    let Some(fd) = fd else { return };
    let closer = CLOSER.get_or_init(|| {
        let (send, receive) = channel::<OwnedFd>();
        let started = std::thread::Builder::new().name("toolbelt-ns-close".into()).spawn(move || {
            for fd in receive {
                drop(fd);
            }
        });
        started.ok().map(|_| send)
    });
    if let Some(closer) = closer
        && let Err(unsent) = closer.send(fd)
    {
        drop(unsent.0);
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        release(self.namespace.take());
        if self.status.is_some() {
            return;
        }
        signal_kill(&self.pidfd);
        if let Ok(Some(_)) = reap(self.pid, libc::WNOHANG) {
            return;
        }
        // Not dead yet (SIGKILL takes effect at the process's next return to user space):
        // collect it off this thread so it leaves no zombie.
        let pid = self.pid;
        let spawned = std::thread::Builder::new().name("toolbelt-reap".into()).spawn(move || {
            let _ = reap(pid, 0);
        });
        if let Err(e) = spawned {
            tracing::debug!(error = %e, pid, "cannot start a thread to reap a killed command");
        }
    }
}

/// `waitpid(pid, flags)`: the status once the process has exited, None while it runs (with
/// `WNOHANG`). Interrupted waits are retried.
#[allow(unsafe_code)]
fn reap(pid: libc::pid_t, flags: libc::c_int) -> std::io::Result<Option<ExitStatus>> {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes the status to the integer it is given.
        let ret = unsafe { libc::waitpid(pid, &mut status, flags) };
        match ret {
            0 => return Ok(None),
            r if r == pid => return Ok(Some(ExitStatus::from_raw(status))),
            _ => {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() != Some(libc::EINTR) {
                    return Err(e);
                }
            }
        }
    }
}

/// SIGKILL through the pidfd: never reaches another process that reused the pid.
#[allow(unsafe_code)]
fn signal_kill(pidfd: &AsyncFd<OwnedFd>) {
    // SAFETY: pidfd_send_signal with a descriptor, a signal number, a null info pointer
    // (meaning "as kill(2) would") and no flags.
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.get_ref().as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0 as libc::c_uint,
        );
    }
}
