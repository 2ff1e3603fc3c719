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
//!
//! **Built once, applied many times.** A ruleset is a kernel object that
//! `landlock_restrict_self` copies into the restricted process and never changes, so one
//! ruleset serves every command with the same writable directories ([`shared`]). Its rules
//! hold the directories' inodes, not their paths: the ruleset is reused only while each path
//! still leads to the same directory (device and inode, looked up on every command; the
//! ruleset's own reference keeps a replaced directory's inode number from being handed to
//! another), so a root deleted, moved or recreated, or one that appeared since, gets a new
//! ruleset. Different roots (another session, a root added) are another key.

use std::os::fd::{AsFd as _, AsRawFd as _, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use ::landlock::{
    ABI, Access as _, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr as _,
    RulesetCreatedAttr as _, Scope,
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

/// A ruleset ready to restrict a process with (its descriptor, shared by the commands that
/// use it).
#[derive(Debug, Clone)]
pub(super) struct Rules(Arc<OwnedFd>);

/// The rulesets built so far, with the directories they were built for.
static SHARED: Mutex<Vec<(Key, Rules)>> = Mutex::new(Vec::new());
/// Most rulesets kept (one per set of roots in use).
const KEEP: usize = 8;

/// What a ruleset was built for: the network setting, the writable paths, and what each of
/// these paths led to then (device and inode; None when it did not exist).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    network: bool,
    writable: Writable,
    found: Vec<Option<(u64, u64)>>,
}

/// The ruleset for `writable` and `network`: a shared one while its directories are still
/// the same (see the module docs), else a new one, kept for the next command.
pub(super) fn shared(writable: &Writable, network: bool) -> Result<Rules, String> {
    let found = writable.dirs.iter().map(|dir| std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))).collect();
    let key = Key { network, writable: writable.clone(), found };
    let mut shared = SHARED.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(at) = shared.iter().position(|(k, _)| *k == key) {
        let entry = shared.remove(at);
        let rules = entry.1.clone();
        shared.push(entry);
        return Ok(rules);
    }
    let rules = ruleset(writable, network)?;
    // A path that changed since its identity was taken would make the key wrong: keep the
    // ruleset only if every path still leads where it did.
    let now: Vec<Option<(u64, u64)>> =
        writable.dirs.iter().map(|dir| std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))).collect();
    if now == key.found {
        shared.retain(|(k, _)| !(k.network == key.network && k.writable == key.writable));
        if shared.len() >= KEEP {
            shared.remove(0);
        }
        shared.push((key, rules.clone()));
    }
    Ok(rules)
}

/// Creates the ruleset: write rights handled, granted beneath the devices and each path of
/// `writable` (just the file rights on files; never making devices); signals scoped to the
/// sandbox; with the network off (`network` false), TCP bind and connect handled and granted
/// nowhere, abstract Unix sockets scoped to the sandbox, and connecting to path sockets
/// granted only beneath the writable directories.
pub(super) fn ruleset(writable: &Writable, network: bool) -> Result<Rules, String> {
    let created = build(writable, network).map_err(|e| e.to_string())?;
    let fd: Option<OwnedFd> = created.into();
    match fd {
        Some(fd) => Ok(Rules(Arc::new(fd))),
        None => Err("Landlock enforces nothing on this kernel".to_string()),
    }
}

fn build(writable: &Writable, network: bool) -> Result<::landlock::RulesetCreated, ::landlock::RulesetError> {
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

/// Confines the calling thread, which must be the single thread of a child about to exec,
/// with `rules` (whose descriptor stays open: other commands use it too). Only system calls
/// (prctl, landlock_restrict_self); a failure is an error so the command does not start
/// unconfined.
#[allow(unsafe_code)]
pub(super) fn restrict_self(rules: &Rules) -> std::io::Result<()> {
    // SAFETY: landlock_restrict_self with a ruleset descriptor that `rules` keeps open, and
    // no flags.
    unsafe {
        no_new_privs()?;
        if libc::syscall(libc::SYS_landlock_restrict_self, rules.0.as_raw_fd(), 0 as libc::c_uint) != 0 {
            return Err(last_os_error());
        }
    }
    Ok(())
}

/// Sets `no_new_privs` on the calling thread (what Landlock and seccomp both require), with
/// the one system call it takes; safe in a child about to exec.
#[allow(unsafe_code)]
pub(super) fn no_new_privs() -> std::io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    let set = unsafe {
        libc::prctl(
            libc::PR_SET_NO_NEW_PRIVS,
            1 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if set != 0 { Err(last_os_error()) } else { Ok(()) }
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
    fn a_ruleset_is_shared_while_its_directories_stay_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir(&root).unwrap();
        let config = SandboxConfig::default();
        let w = writable(&config, std::slice::from_ref(&root));
        let a = shared(&w, false).unwrap();
        assert!(Arc::ptr_eq(&a.0, &shared(&w, false).unwrap().0), "same roots, same ruleset");
        assert!(!Arc::ptr_eq(&a.0, &shared(&w, true).unwrap().0), "the network setting is part of it");
        // The root replaced by another directory: its rule would name the old one.
        std::fs::rename(&root, dir.path().join("moved")).unwrap();
        std::fs::create_dir(&root).unwrap();
        let b = shared(&w, false).unwrap();
        assert!(!Arc::ptr_eq(&a.0, &b.0), "a new ruleset for the new directory");
        assert!(Arc::ptr_eq(&b.0, &shared(&w, false).unwrap().0));
        // A root that did not exist, then does.
        let later = dir.path().join("later");
        let w = writable(&config, std::slice::from_ref(&later));
        let c = shared(&w, false).unwrap();
        std::fs::create_dir(&later).unwrap();
        assert!(!Arc::ptr_eq(&c.0, &shared(&w, false).unwrap().0));
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
