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
//!
//! **Sealed directories.** A directory where the user's protected settings would be made
//! (the home directory when it lies inside a writable root, `~/.config` when `~/.config/git`
//! is missing; see `places.rs`) is *sealed*: the command may write, truncate and remove there,
//! but make no new entry directly in it. Landlock rights only add up along a path, so the
//! writable directory above it cannot simply be granted: each directory from the writable one
//! down to the sealed one gets every right but making entries, and each of their other
//! subdirectories (not symbolic links) every right. A ruleset with seals is also rebuilt when
//! one of those directories' entries changed (its modification time and link count); until
//! then a folder made there by someone else is not writable for commands (never the reverse).

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
    /// Directories inside `dirs` in which no new entry may be made (see the module docs).
    sealed: Vec<PathBuf>,
}

/// Most subdirectories one sealed directory's rules name; a directory with more cannot be
/// sealed, and the command is not started (it would be left unsealed).
const MAX_SEALED_CHILDREN: usize = 4096;

/// What a command run under `config` with these roots may write to.
pub(super) fn writable(config: &SandboxConfig, roots: &[PathBuf]) -> Writable {
    if config.mode != SandboxMode::WorkspaceWrite {
        return Writable { temp: false, dirs: Vec::new(), sealed: Vec::new() };
    }
    let tmpdir = std::env::var_os("TMPDIR").filter(|d| !d.is_empty()).map(PathBuf::from);
    let candidates = roots.iter().chain(&config.writable_roots).cloned().chain(tmpdir).chain([std::env::temp_dir()]);
    let mut dirs: Vec<PathBuf> = Vec::new();
    for dir in candidates {
        if !dirs.contains(&dir) && !TEMP.iter().any(|t| dir == Path::new(t)) {
            dirs.push(dir);
        }
    }
    Writable { temp: true, dirs, sealed: Vec::new() }
}

impl Writable {
    /// These directories too.
    pub(super) fn with(mut self, more: &[PathBuf]) -> Self {
        self.dirs.extend(more.iter().filter(|d| !self.dirs.contains(d)).cloned().collect::<Vec<_>>());
        self
    }

    /// With these directories sealed (those beneath a temp directory are left out: sealing
    /// one would forbid new temporary files; `places.rs` does not ask for them).
    pub(super) fn sealing(mut self, sealed: &[PathBuf]) -> Self {
        let temp = self.temp_dirs();
        self.sealed = sealed.iter().filter(|s| !temp.iter().any(|t| s.starts_with(t))).cloned().collect();
        self
    }

    /// Every directory a command may write beneath (the temp directories included).
    pub(super) fn all(&self) -> Vec<PathBuf> {
        let mut all = self.dirs.clone();
        if self.temp {
            all.extend(TEMP.iter().map(PathBuf::from));
        }
        all
    }

    /// The temp directories a command may write beneath: `/tmp`, `/dev/shm`, `$TMPDIR` and
    /// the temp directory.
    pub(super) fn temp_dirs(&self) -> Vec<PathBuf> {
        if !self.temp {
            return Vec::new();
        }
        let mut temp: Vec<PathBuf> = TEMP.iter().map(PathBuf::from).collect();
        let tmpdir = std::env::var_os("TMPDIR").filter(|d| !d.is_empty()).map(PathBuf::from);
        temp.extend(tmpdir.into_iter().chain([std::env::temp_dir()]).filter(|d| self.dirs.contains(d)));
        temp
    }

    /// The directories whose rules a seal splits: each writable directory holding a sealed
    /// one, and every directory from there down to it.
    fn split(&self) -> Vec<PathBuf> {
        let mut split: Vec<PathBuf> = Vec::new();
        for sealed in &self.sealed {
            for dir in self.dirs.iter().filter(|d| sealed.starts_with(d)) {
                for path in sealed.ancestors().take_while(|a| a.starts_with(dir)) {
                    if !split.iter().any(|p| p == path) {
                        split.push(path.to_path_buf());
                    }
                }
            }
        }
        split
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

/// What a ruleset was built for: the network setting, the writable paths, and what they led
/// to then.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    network: bool,
    writable: Writable,
    found: Identities,
}

/// What the writable paths lead to: each one's device and inode (None when it does not
/// exist), and for the directories a seal splits, also when their entries last changed and how
/// many folders they hold (the link count: a folder made within one clock tick changes it).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identities {
    dirs: Vec<Option<(u64, u64)>>,
    split: Vec<Option<Split>>,
}

/// A split directory's device, inode, modification time (seconds, nanoseconds) and link count.
type Split = (u64, u64, i64, i64, u64);

impl Identities {
    /// What `writable`'s paths lead to now.
    fn of(writable: &Writable) -> Self {
        let dirs = writable.dirs.iter().map(|dir| std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))).collect();
        let split = writable
            .split()
            .iter()
            .map(|dir| std::fs::metadata(dir).ok().map(|m| (m.dev(), m.ino(), m.mtime(), m.mtime_nsec(), m.nlink())))
            .collect();
        Identities { dirs, split }
    }
}

/// The ruleset for `writable` and `network`: a shared one while its directories are still
/// the same (see the module docs), else a new one, kept for the next command.
pub(super) fn shared(writable: &Writable, network: bool) -> Result<Rules, String> {
    let key = Key { network, writable: writable.clone(), found: Identities::of(writable) };
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
    if Identities::of(writable) == key.found {
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
    let created = build(writable, network).map_err(|e| match e {
        Built::Landlock(e) => e.to_string(),
        Built::Seal(why) => why,
    })?;
    let fd: Option<OwnedFd> = created.into();
    match fd {
        Some(fd) => Ok(Rules(Arc::new(fd))),
        None => Err("Landlock enforces nothing on this kernel".to_string()),
    }
}

/// Why a ruleset could not be built.
enum Built {
    Landlock(::landlock::RulesetError),
    /// A directory to seal has more subdirectories than its rules may name.
    Seal(String),
}

impl From<::landlock::RulesetError> for Built {
    fn from(e: ::landlock::RulesetError) -> Self {
        Built::Landlock(e)
    }
}

fn build(writable: &Writable, network: bool) -> Result<::landlock::RulesetCreated, Built> {
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
    for dir in &writable.dirs {
        if writable.sealed.iter().any(|s| s.starts_with(dir)) {
            created = seal(created, dir, &writable.sealed, granted() | sockets)?;
        } else if let Some(opened) = Opened::new(dir) {
            created = created.add_rule(opened.rule(granted() | sockets))?;
        }
    }
    Ok(created)
}

/// The rights that make a new entry in a directory.
fn making() -> BitFlags<AccessFs> {
    AccessFs::MakeReg | AccessFs::MakeDir | AccessFs::MakeSym | AccessFs::MakeSock | AccessFs::MakeFifo
}

/// Rules for `dir`, on the way to a sealed directory: `rights` but making entries on `dir`
/// itself, `rights` on each of its subdirectories, and the same again for a subdirectory on
/// the way to a sealed one (see the module docs).
fn seal(
    mut created: ::landlock::RulesetCreated,
    dir: &Path,
    sealed: &[PathBuf],
    rights: BitFlags<AccessFs>,
) -> Result<::landlock::RulesetCreated, Built> {
    let Some(opened) = Opened::new(dir) else { return Ok(created) };
    created = created.add_rule(opened.rule(rights & !making()))?;
    let entries = std::fs::read_dir(dir).map_err(|e| Built::Seal(format!("cannot list {}: {e}", dir.display())))?;
    let mut named = 0;
    for entry in entries.flatten() {
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let child = entry.path();
        if sealed.iter().any(|s| s.starts_with(&child)) {
            created = seal(created, &child, sealed, rights)?;
            continue;
        }
        named += 1;
        if named > MAX_SEALED_CHILDREN {
            return Err(Built::Seal(format!(
                "{} holds more than {MAX_SEALED_CHILDREN} directories, more than the sandbox can name to keep new \
                 entries out of it (it holds the user's protected settings); make the workspace a directory \
                 inside it",
                dir.display()
            )));
        }
        // Opened without following a link: a directory put there in between is named itself.
        if let Ok(fd) = nix::fcntl::open(
            &child,
            nix::fcntl::OFlag::O_PATH
                | nix::fcntl::OFlag::O_NOFOLLOW
                | nix::fcntl::OFlag::O_DIRECTORY
                | nix::fcntl::OFlag::O_CLOEXEC,
            nix::sys::stat::Mode::empty(),
        ) {
            created = created.add_rule(PathBeneath::new(fd.as_fd(), rights))?;
        }
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
mod tests;
