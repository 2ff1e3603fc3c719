//! Process trees: finding and killing everything a command started.
//!
//! Every command runs as the leader of a new process group, with a tag unique to the call in
//! its environment ([`TAG_VAR`]), under a server that is a child subreaper: a process that
//! double-forks or calls `setsid` and loses its parent is re-parented to the server instead
//! of init, so it stays findable and its zombie is ours to reap.
//!
//! Killing a tree ([`Tree::kill`]) sends SIGKILL to the group, then scans `/proc` for every
//! process that belongs to the group, carries the tag, or descends from the leader or from a
//! process already found; SIGKILLs those, reaps the ones re-parented to the server, and
//! repeats until nothing is left (bounded in time, for processes stuck in the kernel).
//!
//! The scan costs about a millisecond, too much for every short command, so after a normal
//! exit [`Tree::leftovers`] first asks two cheap questions: does the group still have
//! members, and is the control pipe every process of the tree inherits still held open
//! ([`crate::process::spawn`])? Only a yes to either runs the full kill. A daemon that leaves
//! the group *and* closes every inherited descriptor is only found by the full kill, which
//! timeouts, cancellation, `TaskStop` and session end always run, and which a normal exit
//! runs too when such a process still holds the output open.
//!
//! Zombies: the kill reaps the processes it killed that were re-parented to us. A
//! descendant that left the group (setsid) and *exited on its own* while the call ran is a
//! zombie with nothing left to tie it to the call (its environment is gone), and the server
//! cannot reap it without risking another owner's child: it stays a zombie (a process table
//! entry, no memory or descriptors) until the server exits.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, PoisonError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nix::sys::signal::{self, Signal};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::Pid;

use crate::process::cgroup::CommandCgroup;
use crate::process::procfs::{self, Stat};

/// The environment variable that tags every process of one command.
pub const TAG_VAR: &str = "TOOLBELT_CALL_ID";

/// How long a kill keeps trying before it gives up on processes that will not die (stuck in
/// uninterruptible sleep, say).
const KILL_DEADLINE: Duration = Duration::from_secs(3);

/// Makes this process a child subreaper, once. Orphaned descendants of the commands we run
/// are then re-parented to us, where the kill can still find them.
pub fn become_subreaper() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if let Err(e) = nix::sys::prctl::set_child_subreaper(true) {
            tracing::warn!(error = %e, "cannot become a child subreaper; orphaned processes may escape the kill");
        }
    });
}

/// A tag no other call of this process (or of another process) uses.
pub fn new_tag() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
    format!("{}-{nanos:x}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// One command's process tree: its leader (the `bash` we spawned, also the process group id),
/// its tag, and its cgroup when the machine offers one.
#[derive(Debug, Clone)]
pub struct Tree {
    leader: i32,
    tag: String,
    cgroup: Option<Arc<CommandCgroup>>,
}

/// The trees whose commands may still run, so a signal to the server can kill them all.
static LIVE: Mutex<Vec<Tree>> = Mutex::new(Vec::new());

/// Kills the tree of every command still running (the server was told to stop); returns how
/// many trees there were.
pub fn kill_all() -> usize {
    let trees: Vec<Tree> = std::mem::take(&mut *LIVE.lock().unwrap_or_else(PoisonError::into_inner));
    for tree in &trees {
        tree.kill();
    }
    crate::process::cgroup::release_idle();
    trees.len()
}

/// How many commands' trees may still run (for `/metrics`).
pub fn live_count() -> usize {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner).len()
}

impl Tree {
    /// The tree led by `leader`, tagged `tag`, held in `cgroup` when there is one; it counts
    /// as live (for [`kill_all`]) until [`Tree::retire`].
    pub fn new(leader: u32, tag: String, cgroup: Option<Arc<CommandCgroup>>) -> Self {
        let tree = Self { leader: i32::try_from(leader).unwrap_or(i32::MAX), tag, cgroup };
        if tree.valid() {
            LIVE.lock().unwrap_or_else(PoisonError::into_inner).push(tree.clone());
        }
        tree
    }

    /// The command is over and its tree dealt with: no longer live.
    pub fn retire(&self) {
        LIVE.lock().unwrap_or_else(PoisonError::into_inner).retain(|t| t.tag != self.tag);
    }

    /// The command is over, its tree dealt with and retired: its cgroup, if nothing else
    /// holds it, may serve another command ([`CommandCgroup::recycle`]).
    pub fn recycle(self) {
        if let Some(cgroup) = self.cgroup {
            CommandCgroup::recycle(cgroup);
        }
    }

    /// Whether a cgroup holds the tree (so nothing it started can escape the kill).
    pub fn is_held(&self) -> bool {
        self.cgroup.is_some()
    }

    /// Whether the leader is a real process of ours: never signal group 0 (our own) or 1.
    fn valid(&self) -> bool {
        self.leader > 1 && u32::try_from(self.leader).is_ok_and(|l| l != std::process::id())
    }

    /// The tag in every process's environment.
    pub fn tag(&self) -> &str {
        &self.tag
    }

    /// After the leader exited and was reaped: kills whatever of the tree is still running.
    /// `control_held` says whether some process still holds the control pipe. Returns
    /// whether anything was left.
    pub fn leftovers(&self, control_held: bool) -> bool {
        if !self.valid() {
            return false;
        }
        // With the leader reaped, a successful signal means other members are alive.
        let group_alive = signal::killpg(Pid::from_raw(self.leader), Signal::SIGKILL).is_ok();
        let held_alive = self.cgroup.as_ref().is_some_and(|c| c.populated());
        if group_alive || control_held || held_alive {
            self.kill();
            return true;
        }
        false
    }

    /// Kills every process of the tree and reaps those re-parented to us; returns how many
    /// processes were found alive. Blocks for a few milliseconds (bounded by a deadline).
    pub fn kill(&self) -> usize {
        if !self.valid() {
            return 0;
        }
        // The cgroup first: it takes every member at once, those that left the group and
        // dropped the tag included. The scan then reaps what was re-parented to us.
        if let Some(cgroup) = &self.cgroup {
            cgroup.kill();
        }
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        let needle = format!("{TAG_VAR}={}", self.tag).into_bytes();
        let mut known: HashSet<i32> = HashSet::new();
        let mut killed: HashSet<i32> = HashSet::new();
        let deadline = Instant::now() + KILL_DEADLINE;
        let mut pause = Duration::from_micros(200);
        let mut first = true;
        loop {
            let _ = signal::killpg(Pid::from_raw(self.leader), Signal::SIGKILL);
            let procs: Vec<Stat> = procfs::list_pids().filter_map(procfs::stat).collect();
            let members = self.members(&procs, &known, &needle, me, first);
            first = false;
            let mut pending = false;
            for p in procs.iter().filter(|p| members.contains(&p.pid)) {
                if p.zombie() {
                    // The leader's zombie belongs to whoever spawned it (it waits for it);
                    // others re-parented to us are ours to reap. A zombie whose parent is
                    // a member is re-parented to us once that parent dies.
                    if p.pid != self.leader && p.ppid == me {
                        let _ = waitpid(Pid::from_raw(p.pid), Some(WaitPidFlag::WNOHANG));
                    } else if p.pid != self.leader && members.contains(&p.ppid) {
                        pending = true;
                    }
                } else {
                    let _ = signal::kill(Pid::from_raw(p.pid), Signal::SIGKILL);
                    killed.insert(p.pid);
                    pending = true;
                }
                if p.pid != self.leader {
                    known.insert(p.pid);
                }
            }
            if !pending {
                break;
            }
            if Instant::now() >= deadline {
                tracing::warn!(tag = %self.tag, "some processes of a command did not die within the kill deadline");
                break;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        killed.len()
    }

    /// The processes of the tree among `procs`: the leader, the group, processes found
    /// before, processes carrying the tag (all of them on the first scan; later only those
    /// re-parented to us, the only way a new one can appear outside the ancestry), and every
    /// descendant of those.
    fn members(&self, procs: &[Stat], known: &HashSet<i32>, needle: &[u8], me: i32, first: bool) -> HashSet<i32> {
        let mut members: HashSet<i32> = HashSet::new();
        for p in procs {
            let seed = p.pid == self.leader
                || p.pgrp == self.leader
                || known.contains(&p.pid)
                || (!p.zombie() && (first || p.ppid == me) && p.pid != me && has_tag(p.pid, needle));
            if seed {
                members.insert(p.pid);
            }
        }
        loop {
            let before = members.len();
            for p in procs {
                if members.contains(&p.ppid) && p.ppid != me {
                    members.insert(p.pid);
                }
            }
            if members.len() == before {
                break;
            }
        }
        members
    }

    /// The live processes of the tree among `procs` (one scan of the table, shared by every
    /// tree asked): what `Process` marks as the session's own.
    pub fn alive_among(&self, procs: &[Stat]) -> Vec<i32> {
        if !self.valid() {
            return Vec::new();
        }
        let me = i32::try_from(std::process::id()).unwrap_or(0);
        let needle = format!("{TAG_VAR}={}", self.tag).into_bytes();
        let members = self.members(procs, &HashSet::new(), &needle, me, true);
        procs.iter().filter(|p| members.contains(&p.pid) && !p.zombie()).map(|p| p.pid).collect()
    }

    #[cfg(test)]
    /// Whether any process of the tree is alive (a full scan; for tests and diagnostics).
    pub fn alive(&self) -> Vec<u32> {
        self.alive_among(&procfs::all()).into_iter().filter_map(|p| u32::try_from(p).ok()).collect()
    }
}

/// Whether the process's environment holds exactly the entry `needle` (`VAR=value`).
fn has_tag(pid: i32, needle: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ")).is_ok_and(|env| env.split(|&b| b == 0).any(|entry| entry == needle))
}

/// Kills the tree when dropped, unless disarmed: dropping a call's future (the runtime does
/// on timeout or cancellation) must not leave its processes running.
#[derive(Debug)]
pub struct TreeGuard {
    tree: Option<Tree>,
}

impl TreeGuard {
    /// Guards `tree`.
    pub fn new(tree: Tree) -> Self {
        Self { tree: Some(tree) }
    }

    /// Stops guarding: the tree was dealt with.
    pub fn disarm(&mut self) {
        self.tree = None;
    }
}

impl Drop for TreeGuard {
    fn drop(&mut self) {
        if let Some(tree) = self.tree.take() {
            tree.kill();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_leader_is_never_signalled() {
        // Group 0 is our own: a tree whose leader is unknown must not signal anything.
        let tree = Tree::new(0, new_tag(), None);
        assert_eq!(tree.kill(), 0);
        assert!(!tree.leftovers(true));
        assert!(tree.alive().is_empty());
    }

    #[test]
    fn tags_are_unique() {
        assert_ne!(new_tag(), new_tag());
    }
}
