//! A cgroup per command, so that killing a command kills everything it started.
//!
//! A process can leave its process group (`setsid`), drop the tag in its environment
//! (`env -i`) and close every descriptor it inherited: the process-tree scan
//! ([`crate::shell::support::tree`]) then has nothing left to recognise it by. A cgroup holds on to it
//! whatever it does: each command runs in a cgroup v2 of its own, beside toolbelt's own
//! process (`<toolbelt's cgroup>/toolbelt-<pid>-<n>`), and killing the command writes `1` to
//! the group's `cgroup.kill`, which the kernel applies to every member at once. The group is
//! removed when the command is over.
//!
//! A sandboxed command joins its cgroup in the child before exec (its hook writes
//! `cgroup.procs`); an unsandboxed one, spawned without a hook, has `bash` move itself there
//! as the first statement of its script, before the command's own code runs. Either way
//! nothing it starts is outside.
//!
//! Where there is no writable cgroup v2 (no unified hierarchy, or no delegation to this user),
//! commands run without one and the kill relies on the tree scan; `toolbelt sandbox check` and
//! the timeout notice say so. Directories left by a toolbelt that was killed are emptied and
//! removed when the next one starts.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

/// How long a kill waits for the group to empty.
const KILL_DEADLINE: Duration = Duration::from_secs(3);

/// One command's cgroup. Killed and removed when dropped.
#[derive(Debug)]
pub struct CommandCgroup {
    dir: PathBuf,
    procs: CString,
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
        drop(CommandCgroup { dir: entry.path(), procs: CString::default() });
    }
}

impl CommandCgroup {
    /// A fresh cgroup for one command; `None` when cgroups cannot be used here.
    pub fn for_command() -> Option<Arc<CommandCgroup>> {
        let base = base().ok()?;
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
        Ok(CommandCgroup { dir, procs })
    }

    /// The group's `cgroup.procs`: writing `0` there moves the writer in. Each command is
    /// moved once, by itself: a move costs the kernel a read-copy-update grace period now and
    /// then (about 0.1–0.3 ms a command, measured with the shell benchmark).
    pub fn procs_path(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    /// Moves the calling process into the group: for the child, before exec. Only system
    /// calls on data built before the fork.
    pub fn join_self(&self) -> std::io::Result<()> {
        sys::write_file(&self.procs, b"0")
    }

    /// Whether any process is still in the group.
    pub fn populated(&self) -> bool {
        std::fs::read_to_string(self.dir.join("cgroup.events"))
            .is_ok_and(|t| t.lines().any(|l| l.trim() == "populated 1"))
    }

    /// Kills every process in the group and waits (bounded) until it is empty; returns
    /// whether anything was there.
    pub fn kill(&self) -> bool {
        if !self.populated() {
            return false;
        }
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

/// The raw system calls, each allocating nothing (so they may run between fork and exec;
/// the sandbox's namespace set-up writes its id maps with the same call).
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
}
