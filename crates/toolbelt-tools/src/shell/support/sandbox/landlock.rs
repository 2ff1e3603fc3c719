//! The Landlock layer: which paths a command may write, which processes it may signal, and,
//! with the network off, no TCP bind or connect and no Unix socket outside the sandbox.
//!
//! Only write rights are handled, so reads and execution stay allowed everywhere. The rights
//! are those of a fixed ABI (5: writes, truncation, cross-directory renames and device
//! ioctls), not of whatever the kernel offers, so what commands can do does not change from
//! one kernel to the next. Creating character and block devices is handled and granted
//! nowhere. Scopes (ABI 6): a command may signal only processes of its own sandbox, and with
//! the network off connect only to abstract Unix sockets created inside it. Connecting to a
//! Unix socket by path (ABI 9) is granted only beneath the writable roots, with the network
//! off. On an older kernel the rights it lacks are dropped, and the probe reports it (path
//! sockets are then masked by the mount namespace, see `protect.rs`).

use std::os::fd::{AsFd as _, BorrowedFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use ::landlock::{
    ABI, Access as _, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr as _, RulesetCreated,
    RulesetCreatedAttr as _, RulesetError, RulesetStatus, Scope,
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

/// The temp directory, and where shared memory lives (POSIX semaphores, Python's
/// multiprocessing), which is temp-like: writable in `workspace-write`.
const TEMP: &[&str] = &["/tmp", "/dev/shm"];

/// What a command may write to, besides the devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Writable {
    /// The temp directory and shared memory ([`TEMP`]).
    temp: bool,
    /// The workspace roots, the configured `writable_roots`, and `$TMPDIR` when it is not
    /// `/tmp` (duplicates kept out).
    dirs: Vec<PathBuf>,
}

/// What a command run under `config` with these roots may write to.
pub(super) fn writable(config: &SandboxConfig, roots: &[PathBuf]) -> Writable {
    if config.mode != SandboxMode::WorkspaceWrite {
        return Writable { temp: false, dirs: Vec::new() };
    }
    let tmpdir = std::env::var_os("TMPDIR").filter(|d| !d.is_empty()).map(PathBuf::from);
    let candidates = roots.iter().chain(&config.writable_roots).cloned().chain(tmpdir).chain([std::env::temp_dir()]);
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in candidates {
        if !dirs.contains(&dir) && !TEMP.iter().any(|t| dir == Path::new(t)) {
            dirs.push(dir);
        }
    }
    Writable { temp: true, dirs }
}

impl Writable {
    /// These directories too.
    pub(super) fn with(mut self, more: &[PathBuf]) -> Self {
        self.dirs.extend(more.iter().filter(|d| !self.dirs.contains(d)).cloned().collect::<Vec<_>>());
        self
    }
}

/// A path opened for a rule.
#[derive(Debug)]
struct Opened {
    fd: PathFd,
    is_dir: bool,
}

impl Opened {
    /// Opens `path`; None when it is missing (no /dev/shm, a root deleted since): nothing
    /// there to write to.
    fn new(path: &Path) -> Option<Self> {
        let is_dir = std::fs::metadata(path).ok()?.is_dir();
        Some(Self { fd: PathFd::new(path).ok()?, is_dir })
    }

    /// Opens each of `paths` once per process: these never move, so every command's ruleset
    /// reuses the same descriptors instead of opening them again.
    fn fixed(cache: &'static OnceLock<Vec<Opened>>, paths: &[&str]) -> &'static [Opened] {
        cache.get_or_init(|| paths.iter().filter_map(|p| Self::new(Path::new(p))).collect())
    }

    /// The rule granting `rights` beneath it (only those that apply to files, on a file).
    fn rule(&self, rights: BitFlags<AccessFs>) -> PathBeneath<BorrowedFd<'_>> {
        let rights = if self.is_dir { rights } else { rights & AccessFs::from_file(FS_ABI) };
        PathBeneath::new(self.fd.as_fd(), rights)
    }
}

/// The write rights granted beneath writable paths: every write right but making devices.
fn granted() -> BitFlags<AccessFs> {
    AccessFs::from_write(FS_ABI) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
}

/// Creates the ruleset: write rights handled, granted beneath the devices and each path of
/// `writable` (just the file rights on files; never making devices); signals scoped to the
/// sandbox; with the network off (`network` false), TCP bind and connect handled and granted
/// nowhere, abstract Unix sockets scoped to the sandbox, and connecting to path sockets
/// granted only beneath the writable directories.
pub(super) fn ruleset(writable: &Writable, network: bool) -> Result<RulesetCreated, RulesetError> {
    static DEVICE_FDS: OnceLock<Vec<Opened>> = OnceLock::new();
    static TEMP_FDS: OnceLock<Vec<Opened>> = OnceLock::new();
    let write = AccessFs::from_write(FS_ABI);
    let mut ruleset = Ruleset::default().handle_access(write)?;
    let mut scopes: BitFlags<Scope> = Scope::Signal.into();
    if !network {
        ruleset = ruleset.handle_access(AccessNet::from_all(NET_ABI))?.handle_access(AccessFs::ResolveUnix)?;
        scopes |= Scope::AbstractUnixSocket;
    }
    let mut created = ruleset.scope(scopes)?.create()?;
    for opened in Opened::fixed(&DEVICE_FDS, DEVICES) {
        created = created.add_rule(opened.rule(granted()))?;
    }
    if writable.temp {
        for opened in Opened::fixed(&TEMP_FDS, TEMP) {
            created = created.add_rule(opened.rule(granted()))?;
        }
    }
    let sockets = if network { BitFlags::EMPTY } else { BitFlags::from(AccessFs::ResolveUnix) };
    for opened in writable.dirs.iter().filter_map(|dir| Opened::new(dir)) {
        created = created.add_rule(opened.rule(granted() | sockets))?;
    }
    Ok(created)
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
        let config = SandboxConfig {
            writable_roots: vec![PathBuf::from("/cache"), "/work/a".into(), "/tmp".into()],
            ..Default::default()
        };
        let w = writable(&config, &roots);
        assert!(w.temp);
        for p in ["/work/a", "/work/b", "/cache"] {
            assert_eq!(w.dirs.iter().filter(|d| d.as_path() == Path::new(p)).count(), 1, "{p} once in {w:?}");
        }
        assert!(!w.dirs.contains(&PathBuf::from("/tmp")), "/tmp comes with the temp rules");

        let read_only = SandboxConfig { mode: SandboxMode::ReadOnly, ..config };
        assert_eq!(writable(&read_only, &roots), Writable { temp: false, dirs: vec![] });
    }

    #[test]
    fn rulesets_build_with_and_without_the_network() {
        let w = writable(&SandboxConfig::default(), &[PathBuf::from("/nonexistent/root")]);
        ruleset(&w, true).unwrap();
        ruleset(&w, false).unwrap();
        assert!(!granted().contains(AccessFs::MakeChar) && !granted().contains(AccessFs::MakeBlock));
        assert!(granted().contains(AccessFs::MakeReg) && granted().contains(AccessFs::MakeFifo));
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
