//! A cgroup per command, so that killing a command kills everything it started.
//!
//! A process can leave its process group (`setsid`), drop the tag in its environment
//! (`env -i`) and close every descriptor it inherited: the process-tree scan
//! ([`crate::process::tree`]) then has nothing left to recognise it by. A cgroup holds on to it
//! whatever it does: each command runs in a cgroup v2 of its own, beside toolbelt's own
//! process (`<toolbelt's cgroup>/toolbelt-<pid>-<n>`), and killing the command writes `1` to
//! the group's `cgroup.kill`, which the kernel applies to every member at once. The group is
//! removed when the command is over.
//!
//! A command starts inside its cgroup (`clone3` with `CLONE_INTO_CGROUP`, given the group's
//! directory, see `spawn/clone.rs`), which costs the kernel far less than moving a process in.
//! Where that clone is not available, a sandboxed command joins its cgroup in the child before
//! exec (its hook writes `cgroup.procs`) and an unsandboxed one has `bash` move itself there as
//! the first statement of its script, before the command's own code runs. Either way nothing
//! it starts is outside.
//!
//! Making and removing a group costs the kernel about 70 µs, so a group whose command is over
//! and left nothing in it is kept for the next command ([`CommandCgroup::recycle`], up to
//! [`KEEP_IDLE`]); a group is only ever handed to one command at a time, and only empty. A
//! group that was killed is never kept: the kernel (6.18 here) kills every process later
//! started into it with `CLONE_INTO_CGROUP`, as if the kill were still going on. Idle groups
//! are removed when toolbelt stops ([`release_idle`]).
//!
//! Where there is no writable cgroup v2 (no unified hierarchy, or no delegation to this user),
//! commands run without one and the kill relies on the tree scan; `toolbelt sandbox check` and
//! the timeout notice say so. Directories left by a toolbelt that was killed are emptied and
//! removed when the next one starts.

use std::ffi::CString;
use std::os::fd::{AsRawFd as _, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// How long a kill waits for the group to empty.
const KILL_DEADLINE: Duration = Duration::from_secs(3);

/// One command's cgroup. Killed and removed when dropped.
#[derive(Debug)]
pub struct CommandCgroup {
    dir: PathBuf,
    procs: CString,
    /// The directory, open, for starting a process inside the group.
    fd: Option<OwnedFd>,
    /// Whether `cgroup.kill` was written (such a group is not used again).
    killed: AtomicBool,
}

/// Empty groups kept for the next commands.
static IDLE: Idle = Idle(Mutex::new(Vec::new()));
/// Most idle groups kept (about as many as commands run at once).
pub const KEEP_IDLE: usize = 4;

/// Removes the idle groups (toolbelt is stopping). Those of a toolbelt that stopped without
/// doing so are removed when the next one starts.
pub fn release_idle() {
    let idle = std::mem::take(&mut *IDLE.0.lock().unwrap_or_else(PoisonError::into_inner));
    drop(idle);
}

/// Groups waiting for a command.
#[derive(Debug)]
struct Idle(Mutex<Vec<CommandCgroup>>);

impl Idle {
    fn take(&self) -> Option<CommandCgroup> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    /// Keeps `group` when nothing else holds it, it was never killed, no process is in it and
    /// there is room; else drops it (killed and removed).
    fn give(&self, group: Arc<CommandCgroup>) {
        let Ok(group) = Arc::try_unwrap(group) else { return };
        if group.fd.is_none() || group.killed.load(Ordering::Relaxed) || group.populated() {
            return;
        }
        let mut idle = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < KEEP_IDLE {
            idle.push(group);
        }
    }
}

/// The cgroup command cgroups are made in (toolbelt's own), or why there is none (found
/// once).
pub fn base() -> Result<&'static Path, String> {
    static BASE: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BASE.get_or_init(find_base).as_ref().map(PathBuf::as_path).map_err(Clone::clone)
}

fn find_base() -> Result<PathBuf, String> {
    let mount = cgroup2_mount().ok_or("there is no cgroup v2 (unified) hierarchy mounted")?;
    let own = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|t| t.lines().find_map(|l| l.strip_prefix("0::").map(str::to_string)))
        .ok_or("this process is in no cgroup v2")?;
    let base = mount.join(own.trim_start_matches('/'));
    sweep(&base);
    let probe = CommandCgroup::create_in(&base)
        .map_err(|e| format!("cannot create a cgroup in {} ({e}); delegate it to this user", base.display()))?;
    let kill = probe.dir.join("cgroup.kill").exists();
    drop(probe);
    if !kill {
        return Err("this kernel's cgroups have no cgroup.kill (Linux 5.14 or later)".into());
    }
    Ok(base)
}

/// The mount point of the cgroup v2 hierarchy, from `/proc/self/mountinfo`.
fn cgroup2_mount() -> Option<PathBuf> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    info.lines().find_map(|line| {
        let (left, right) = line.split_once(" - ")?;
        let point = left.split_whitespace().nth(4)?;
        (right.split_whitespace().next()? == "cgroup2").then(|| PathBuf::from(point))
    })
}

/// Empties and removes the command cgroups of toolbelt processes that are gone (killed before
/// they could clean up): their commands die now rather than run on unowned.
fn sweep(base: &Path) {
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let owner = name.to_str().and_then(|n| n.strip_prefix("toolbelt-")).and_then(|rest| rest.split('-').next());
        let Some(pid) = owner.and_then(|p| p.parse::<i32>().ok()) else { continue };
        if Path::new(&format!("/proc/{pid}")).exists() {
            continue;
        }
        // Dropping it kills what is left and removes it.
        drop(CommandCgroup { dir: entry.path(), procs: CString::default(), fd: None, killed: AtomicBool::new(false) });
    }
}

impl CommandCgroup {
    /// An empty cgroup for one command (an idle one, else a new one); `None` when cgroups
    /// cannot be used here.
    pub fn for_command() -> Option<Arc<CommandCgroup>> {
        let base = base().ok()?;
        if let Some(group) = IDLE.take() {
            return Some(Arc::new(group));
        }
        match Self::create_in(base) {
            Ok(group) => Some(Arc::new(group)),
            Err(e) => {
                tracing::debug!(error = %e, "cannot create a cgroup for a command");
                None
            }
        }
    }

    fn create_in(base: &Path) -> std::io::Result<CommandCgroup> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = base.join(format!("toolbelt-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed)));
        std::fs::create_dir(&dir)?;
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes()).map_err(std::io::Error::other)?;
        let fd = std::fs::File::open(&dir).ok().map(OwnedFd::from);
        Ok(CommandCgroup { dir, procs, fd, killed: AtomicBool::new(false) })
    }

    /// The group's directory, open (what `clone3` takes to start a process inside).
    pub fn dir_fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(|fd| fd.as_raw_fd())
    }

    /// The group's `cgroup.procs`: writing `0` there moves the writer in (where a command
    /// cannot be started inside the group). A move takes the kernel's cgroup-wide lock for
    /// writing, which waits for a read-copy-update grace period: 0.1 to several ms.
    pub fn procs_path(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Moves the calling process into the group: for the child, before exec. Only system
    /// calls on data built before the child started.
    pub fn join_self(&self) -> std::io::Result<()> {
        sys::write_file(&self.procs, b"0")
    }

    /// Hands the group back once its command is over and its tree dealt with: kept for
    /// another command when nothing holds it any more, it was never killed and no process is
    /// in it; else dropped (killed and removed).
    pub fn recycle(group: Arc<CommandCgroup>) {
        IDLE.give(group);
    }

    /// Whether any process is still in the group (`cgroup.events` says `populated 1`; read in
    /// one call).
    pub fn populated(&self) -> bool {
        use std::io::Read as _;
        let mut events = [0u8; 256];
        let Ok(mut file) = std::fs::File::open(self.dir.join("cgroup.events")) else { return false };
        let n = file.read(&mut events).unwrap_or(0);
        events[..n].split(|&b| b == b'\n').any(|l| l.trim_ascii() == b"populated 1")
    }

    /// Kills every process in the group and waits (bounded) until it is empty; returns
    /// whether anything was there.
    pub fn kill(&self) -> bool {
        if !self.populated() {
            return false;
        }
        self.killed.store(true, Ordering::Relaxed);
        if let Err(e) = std::fs::write(self.dir.join("cgroup.kill"), "1") {
            tracing::warn!(error = %e, "cannot kill a command's cgroup");
            return true;
        }
        let deadline = Instant::now() + KILL_DEADLINE;
        let mut pause = Duration::from_micros(200);
        while self.populated() && Instant::now() < deadline {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(20));
        }
        true
    }
}

impl Drop for CommandCgroup {
    fn drop(&mut self) {
        self.kill();
        if let Err(e) = std::fs::remove_dir(&self.dir) {
            tracing::debug!(error = %e, dir = %self.dir.display(), "cannot remove a command's cgroup");
        }
    }
}

/// The raw system calls, each allocating nothing (so they may run between a child's start and
/// its exec; the sandbox's namespace set-up writes its id maps with the same call).
#[allow(unsafe_code)]
pub(crate) mod sys {
    use std::ffi::CStr;

    /// Writes `bytes` to the existing file `path` in one `write`.
    pub(crate) fn write_file(path: &CStr, bytes: &[u8]) -> std::io::Result<()> {
        // SAFETY: a NUL-terminated path; the descriptor is closed before returning.
        let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `bytes` is valid for its length; `fd` is open for writing.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        let error = std::io::Error::last_os_error();
        // SAFETY: `fd` was opened above and is closed once.
        unsafe { libc::close(fd) };
        if usize::try_from(written).ok() == Some(bytes.len()) { Ok(()) } else { Err(error) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_that_escapes_its_session_dies_with_the_group() {
        let Some(group) = CommandCgroup::for_command() else {
            eprintln!("skipped: no usable cgroup v2 here ({})", base().err().unwrap_or_default());
            return;
        };
        // As the shell tool starts a command: bash moves itself in before anything else runs.
        let script =
            format!("echo 0 > '{}'; ( setsid sh -c 'sleep 4006' & ) ; sleep 4006", group.procs_path().display());
        let mut child = std::process::Command::new("bash")
            .args(["-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(group.populated());
        assert!(group.kill());
        assert!(!group.populated(), "every member is gone");
        let _ = child.wait();
        let left = std::process::Command::new("pgrep").args(["-f", "sleep 4006"]).output().unwrap();
        assert!(left.stdout.is_empty(), "the setsid'd process died too: {}", String::from_utf8_lossy(&left.stdout));
        let dir = group.dir.clone();
        drop(group);
        assert!(!dir.exists(), "the group is removed");
    }

    #[test]
    fn an_empty_group_serves_again_and_a_killed_one_never_does() {
        let Ok(base) = base() else {
            eprintln!("skipped: no usable cgroup v2 here ({})", base().err().unwrap_or_default());
            return;
        };
        let idle = Idle(Mutex::new(Vec::new()));
        let run_in = |group: &CommandCgroup, script: &str| {
            std::process::Command::new("bash")
                .args(["-c", &format!("echo 0 > '{}'; {script}", group.procs_path().display())])
                .stdin(std::process::Stdio::null())
                .spawn()
                .unwrap()
        };
        // Used, emptied by the command's own end: kept and handed out again.
        let group = Arc::new(CommandCgroup::create_in(base).unwrap());
        run_in(&group, "true").wait().unwrap();
        let dir = group.dir.clone();
        idle.give(group);
        let again = idle.take().unwrap();
        assert_eq!(again.dir, dir);
        // Still held by a process: not kept (dropping it kills the process and removes it).
        let again = Arc::new(again);
        let mut child = run_in(&again, "sleep 4007");
        std::thread::sleep(Duration::from_millis(100));
        idle.give(again);
        assert!(idle.take().is_none() && !dir.exists());
        let _ = child.wait();
        // Killed once, even if empty now: never used again.
        let group = Arc::new(CommandCgroup::create_in(base).unwrap());
        let mut child = run_in(&group, "sleep 4007");
        std::thread::sleep(Duration::from_millis(100));
        assert!(group.kill());
        let _ = child.wait();
        let dir = group.dir.clone();
        idle.give(group);
        assert!(idle.take().is_none() && !dir.exists());
    }
}
