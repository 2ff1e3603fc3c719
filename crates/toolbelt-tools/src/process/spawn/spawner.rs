//! A thread that starts the sandboxed commands, its capability bounding set emptied once.
//!
//! Credentials belong to a thread, and a child inherits those of the thread that started it.
//! A sandboxed command running as root must end up with an empty bounding set, which the
//! kernel only lowers one capability per call, each call replacing the thread's credentials:
//! about 45 µs per command when every child does it. This thread does it once, for itself:
//! its children start with an empty bounding set and skip the loop (the rest of the drop —
//! securebits, ambient, effective, permitted, inheritable — still happens in each child).
//! Handing a start to the thread and back costs about 6 µs.
//!
//! Only sandboxed commands are started here: an unsandboxed command (and everything else the
//! server runs) keeps the capabilities its user has. Where the thread cannot be had (no
//! `CAP_SETPCAP`, so nothing to drop; the set not empty after all; no thread), commands are
//! started from the calling thread and drop the set themselves.

use std::os::fd::{OwnedFd, RawFd};
use std::sync::OnceLock;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use super::clone::{self, Failure};
use super::plan::Plan;
use crate::process::sandbox::{Bounding, empty_bounding_set};

/// What a start returns.
type Started = Result<(libc::pid_t, OwnedFd), Failure>;

/// One start asked of the thread.
struct Job {
    /// The plan, alive until the answer is received (the asking thread waits for it).
    plan: *const Plan<'static>,
    cgroup: Option<RawFd>,
    answer: SyncSender<Started>,
}

// SAFETY: the plan is only read, by the spawner thread and its child, while the thread that
// owns it is blocked waiting for the answer (see `start`).
#[allow(unsafe_code)]
unsafe impl Send for Job {}

/// Starts the child of `plan` in `cgroup`: from the spawner thread when there is one, else
/// from the calling thread. Returns once the child has exec'd or failed.
#[allow(unsafe_code)]
pub(super) fn start(plan: &Plan<'_>, cgroup: Option<RawFd>) -> Started {
    let Some(jobs) = spawner() else { return clone::start(plan, cgroup, Bounding::Full) };
    let (answer, answered) = sync_channel(1);
    // SAFETY: only the lifetime is erased; the plan outlives its use, because this thread
    // waits below until the spawner has answered (after the clone returned, the child having
    // exec'd or exited), or until the spawner is gone.
    let plan_ptr: *const Plan<'static> = std::ptr::from_ref(plan).cast();
    if jobs.send(Job { plan: plan_ptr, cgroup, answer }).is_err() {
        return clone::start(plan, cgroup, Bounding::Full);
    }
    match answered.recv() {
        Ok(started) => started,
        // The spawner is gone without answering: it never started the clone (it answers every
        // job it receives once the clone has returned).
        Err(_) => clone::start(plan, cgroup, Bounding::Full),
    }
}

/// The spawner's queue, once it runs with an empty bounding set.
fn spawner() -> Option<&'static SyncSender<Job>> {
    static JOBS: OnceLock<Option<SyncSender<Job>>> = OnceLock::new();
    JOBS.get_or_init(|| {
        let (jobs, queue) = sync_channel::<Job>(0);
        let (ready, is_ready) = sync_channel::<bool>(1);
        let thread = std::thread::Builder::new().name("toolbelt-spawn".into()).spawn(move || serve(&queue, &ready));
        match (thread, is_ready.recv()) {
            (Ok(_), Ok(true)) => Some(jobs),
            _ => None,
        }
    })
    .as_ref()
}

/// The spawner thread: empties its bounding set, says whether that worked, then starts every
/// child it is asked to.
#[allow(unsafe_code)]
fn serve(queue: &Receiver<Job>, ready: &SyncSender<bool>) {
    let empty = empty_bounding_set();
    let _ = ready.send(empty);
    if !empty {
        return;
    }
    for job in queue {
        // SAFETY: the asking thread keeps the plan alive until it has the answer (`start`).
        let plan = unsafe { &*job.plan };
        let started = clone::start(plan, job.cgroup, Bounding::Empty);
        let _ = job.answer.send(started);
    }
}
