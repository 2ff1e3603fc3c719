//! The Landlock layer: which paths a command may write, and no TCP bind or connect.
//!
//! Only write rights are handled, so reads and execution stay allowed everywhere. The rights
//! are those of a fixed ABI (5: writes, truncation, cross-directory renames and device
//! ioctls), not of whatever the kernel offers: a newer ABI's rights (such as ABI 9's control of
//! connecting to Unix sockets by path) would change what commands can do from one kernel to
//! the next. On an older kernel the rights it lacks are dropped, and the probe reports it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use ::landlock::{
    ABI, Access as _, AccessFs, AccessNet, PathBeneath, PathFd, Ruleset, RulesetAttr as _, RulesetCreated,
    RulesetCreatedAttr as _, RulesetError, RulesetStatus,
};

use super::{SandboxConfig, SandboxMode};

/// The ABI whose filesystem rights are handled.
pub(super) const FS_ABI: ABI = ABI::V5;
/// The ABI whose network rights are handled (TCP bind and connect).
pub(super) const NET_ABI: ABI = ABI::V4;

/// Devices any command may write to in every mode: they hold no data (`/dev/null`) or are
/// the terminal. Shells need them (`2>/dev/null`, `</dev/tty`).
const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx", "/dev/pts"];

/// Where shared memory lives (POSIX semaphores, Python's multiprocessing): temp-like, so
/// writable wherever the temp directory is.
const SHARED_MEMORY: &str = "/dev/shm";

/// The paths a command run under `config` with these roots may write to (duplicates kept out;
/// paths that do not exist are skipped when the rules are added).
pub(super) fn writable_paths(config: &SandboxConfig, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    if config.mode == SandboxMode::WorkspaceWrite {
        paths.extend(roots.iter().cloned());
        paths.extend(config.writable_roots.iter().cloned());
        paths.extend(temp_dirs());
        paths.push(PathBuf::from(SHARED_MEMORY));
    }
    let mut unique = Vec::with_capacity(paths.len());
    for path in paths {
        if !unique.contains(&path) {
            unique.push(path);
        }
    }
    unique
}

/// The temp directories: `/tmp`, `$TMPDIR` and the standard library's idea of it.
fn temp_dirs() -> Vec<PathBuf> {
    let mut dirs = vec![PathBuf::from("/tmp"), std::env::temp_dir()];
    if let Some(dir) = std::env::var_os("TMPDIR").filter(|d| !d.is_empty()).map(|d: OsString| PathBuf::from(d)) {
        dirs.push(dir);
    }
    dirs
}

/// Creates the ruleset: write rights handled, granted beneath each of `writable` (just the
/// file rights on files); with `no_tcp`, TCP bind and connect handled and granted nowhere.
pub(super) fn ruleset(writable: &[PathBuf], no_tcp: bool) -> Result<RulesetCreated, RulesetError> {
    let write = AccessFs::from_write(FS_ABI);
    let mut ruleset = Ruleset::default().handle_access(write)?;
    if no_tcp {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?;
    }
    let mut created = ruleset.create()?;
    for path in writable {
        // A path that is missing (no /dev/shm, a root deleted since) has nothing to write to.
        let Some((fd, is_dir)) = open(path) else { continue };
        let rights = if is_dir { write } else { write & AccessFs::from_file(FS_ABI) };
        created = created.add_rule(PathBeneath::new(fd, rights))?;
    }
    Ok(created)
}

/// Opens `path` for a rule, and says whether it is a directory.
fn open(path: &Path) -> Option<(PathFd, bool)> {
    let is_dir = std::fs::metadata(path).ok()?.is_dir();
    Some((PathFd::new(path).ok()?, is_dir))
}

/// Confines the calling thread, which must be the single thread of a forked child about to
/// exec. Only system calls (prctl, landlock_restrict_self, close); a failure, or a kernel that
/// enforces nothing, is an error so the command does not start unconfined.
pub(super) fn restrict_self(ruleset: RulesetCreated) -> std::io::Result<()> {
    match ruleset.restrict_self() {
        Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
        Ok(_) => Err(std::io::Error::from_raw_os_error(libc::ENOSYS)),
        Err(_) => Err(last_os_error()),
    }
}

/// The error of the system call that just failed (EPERM when none is recorded).
pub(super) fn last_os_error() -> std::io::Error {
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(0) | None => std::io::Error::from_raw_os_error(libc::EPERM),
        Some(_) => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_mode() {
        let roots = vec![PathBuf::from("/work/a"), PathBuf::from("/work/b")];
        let config =
            SandboxConfig { writable_roots: vec![PathBuf::from("/cache"), "/work/a".into()], ..Default::default() };
        let paths = writable_paths(&config, &roots);
        for p in ["/work/a", "/work/b", "/cache", "/tmp", "/dev/null", "/dev/pts", "/dev/shm"] {
            assert!(paths.contains(&PathBuf::from(p)), "{p} in {paths:?}");
        }
        assert_eq!(paths.iter().filter(|p| p.as_path() == Path::new("/work/a")).count(), 1, "no duplicates");

        let read_only = SandboxConfig { mode: SandboxMode::ReadOnly, ..config };
        let paths = writable_paths(&read_only, &roots);
        assert!(paths.contains(&PathBuf::from("/dev/null")));
        for p in ["/work/a", "/cache", "/tmp", "/dev/shm"] {
            assert!(!paths.contains(&PathBuf::from(p)), "{p} not writable in read-only");
        }
    }

    #[test]
    fn files_get_only_file_rights() {
        let dir = AccessFs::from_write(FS_ABI);
        let file = dir & AccessFs::from_file(FS_ABI);
        assert!(file.contains(AccessFs::WriteFile) && file.contains(AccessFs::Truncate));
        assert!(!file.contains(AccessFs::MakeReg) && !file.contains(AccessFs::Refer));
        assert!(!dir.contains(AccessFs::ReadFile), "reads are not handled, so allowed everywhere");
    }
}
