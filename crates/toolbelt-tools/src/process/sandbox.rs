//! The OS sandbox for shell commands: what a command may write, and whether it may reach the
//! network, enforced by the kernel on the command's process tree.
//!
//! Three modes, as in Codex: `read-only` (writes nowhere but a few harmless devices),
//! `workspace-write` (the default: writes only inside the workspace roots, the temp directory
//! and the extra `writable_roots`) and `danger-full-access` (nothing applied). Reads are
//! allowed everywhere in every mode. The network is off in the first two unless the config
//! turns it on.
//!
//! Two kernel mechanisms, layered:
//!
//! * **Landlock** (`sandbox/landlock.rs`) confines writes to the allowed directories
//!   and, from ABI 4, denies TCP `bind` and `connect`;
//! * a **seccomp** filter (`sandbox/seccomp.rs`) lets `socket()` create only `AF_UNIX`
//!   sockets, so UDP, raw and packet sockets are off too (and TCP even on kernels without
//!   Landlock's TCP rules), while local tools that talk over Unix sockets keep working. It also
//!   refuses `io_uring_setup`, whose rings could open sockets without calling `socket()`.
//!
//! Everything is built in the server before the child starts ([`Confinement::for_command`]);
//! the child applies it between its start and exec ([`Confinement::apply`]) with nothing but
//! system calls on what was built, so the server process itself is never confined. Both
//! layers are inherited by every descendant and cannot be lifted. The parts that depend only
//! on the machine and the settings are built once and shared: the seccomp program, and the
//! Landlock ruleset for a given set of writable directories (see `sandbox/landlock.rs` for
//! when it is built again).
//!
//! What this machine can enforce is probed once per process ([`SandboxReport::probe`]) by
//! applying each layer in a short-lived child. When a mode cannot be enforced,
//! [`SandboxReport::can_confine`] and [`Confinement::for_command`] say why in one line; the
//! caller then asks, refuses or runs unconfined as [`WhenUnavailable`] says — never silently.
//!
//! A third layer keeps the protected entries inside writable roots (`.git`, `.toolbelt`,
//! `.claude`, `.mcp.json`, `.vscode`, `.idea`) read-only: Landlock rules only ever add access,
//! so the command gets a mount namespace where they are bound read-only
//! (`sandbox/protect.rs`). The user's own protected places (toolbelt's settings and state,
//! git's global configuration) are held the same way where a writable directory holds them,
//! and kept from being made where they are missing (`sandbox/places.rs`).

use std::ffi::{CStr, CString};
use std::os::unix::ffi::OsStrExt as _;
use std::path::PathBuf;
use std::sync::Arc;

use crate::process::cgroup::CommandCgroup;

mod bpf;
mod caps;
mod landlock;
mod places;
mod probe;
pub mod protect;
mod seccomp;
mod shared_git;
mod sockets;
mod terminal;

pub(crate) use caps::{Bounding, empty_bounding_set};
pub use probe::SandboxReport;

/// How far commands are confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Commands may read anything and write nowhere (but `/dev/null` and terminal devices).
    ReadOnly,
    /// Commands may read anything and write inside the workspace roots, the temp directory
    /// and the configured `writable_roots`.
    #[default]
    WorkspaceWrite,
    /// Nothing is confined.
    DangerFullAccess,
}

impl SandboxMode {
    /// Every mode, the strictest first (the order a project may not loosen).
    pub const ALL: [SandboxMode; 3] = [Self::ReadOnly, Self::WorkspaceWrite, Self::DangerFullAccess];
    /// Their names as the settings and the `--sandbox` flag spell them, in [`Self::ALL`]'s
    /// order: the one home of these names.
    pub const NAMES: [&'static str; 3] = ["read-only", "workspace-write", "danger-full-access"];

    /// The mode's name, as the config and the `--sandbox` flag spell it.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The mode named `name`, if one is.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to do with a command when the sandbox cannot be applied on this machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WhenUnavailable {
    /// Refuse the command, saying why.
    Refuse,
    /// Ask a person to approve each such command.
    #[default]
    Ask,
    /// Run it unconfined, with a notice in its output.
    Run,
}

impl WhenUnavailable {
    /// Every choice, the strictest first.
    pub const ALL: [WhenUnavailable; 3] = [Self::Refuse, Self::Ask, Self::Run];
    /// Their names as the settings (`sandbox.if_unsandboxed`) and `--if-unsandboxed` spell
    /// them, in [`Self::ALL`]'s order: the one home of these names.
    pub const NAMES: [&'static str; 3] = ["refuse", "ask", "run"];

    /// The choice's name.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The choice named `name`, if one is.
    pub fn parse(name: &str) -> Option<Self> {
        Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
    }
}

/// The sandbox settings, set up once by whoever builds the runtime and handed to tools as a
/// service (`cx.service::<SandboxConfig>()`); absent means the defaults.
#[derive(Debug, Clone, Default)]
pub struct SandboxConfig {
    /// How far commands are confined.
    pub mode: SandboxMode,
    /// Whether commands may use the network (ignored in `danger-full-access`, where they can).
    pub network: bool,
    /// Directories commands may also write to in `workspace-write` (ignored in `read-only`).
    pub writable_roots: Vec<PathBuf>,
    /// What to do when the sandbox cannot be applied on this machine.
    pub when_unavailable: WhenUnavailable,
    /// Whether git's data (objects, refs, the index) inside a workspace root stays writable in
    /// `workspace-write`, so commits work; git's configuration and hooks stay read-only either
    /// way. Off: all of `.git` is read-only.
    pub git_writes: bool,
    /// The user's protected places besides [`toolbelt_core::PROTECTED_NAMES`] (toolbelt's own
    /// settings, state, data and cache, the managed settings, git's global configuration, the
    /// protected names at the top of the home directory). Where one lies inside a directory
    /// commands may write, it is kept read-only, and one that is missing is kept from being
    /// made (`sandbox/places.rs`).
    pub protected_paths: Vec<PathBuf>,
    /// toolbelt's own directories among [`protected_paths`](Self::protected_paths): made
    /// (owner-only) when missing inside a writable directory, then kept read-only.
    pub own_dirs: Vec<PathBuf>,
}

/// A confinement built (in the parent, before the child starts) for one command.
#[derive(Debug)]
pub struct Confinement {
    /// The Landlock ruleset, rules added, ready for `restrict_self` in the child.
    ruleset: Option<landlock::Rules>,
    /// The seccomp programs.
    filter: Option<seccomp::Filters>,
    /// The mounts of the command's namespace (protected paths read-only, hidden ones
    /// masked), when there are any.
    binds: Option<protect::Binds>,
    /// Every capability dropped, when set.
    caps: Option<caps::CapDrop>,
    /// Directories in which the command may make no new entry (see `sandbox/places.rs`).
    sealed: Vec<PathBuf>,
    /// The protected entries missing in the writable roots when it was built.
    missing: protect::Missing,
}

/// Why commands cannot be confined here: one plain line saying what is missing and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxUnavailable(pub String);

impl std::fmt::Display for SandboxUnavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SandboxUnavailable {}

impl From<String> for SandboxUnavailable {
    fn from(reason: String) -> Self {
        SandboxUnavailable(reason)
    }
}

impl Confinement {
    /// Builds the confinement for a command run with these workspace roots; Ok(None) in
    /// danger-full-access mode. Err(reason) when the sandbox cannot be applied here.
    pub fn for_command(
        config: &SandboxConfig,
        roots: &[PathBuf],
        masks: &[PathBuf],
    ) -> Result<Option<Confinement>, SandboxUnavailable> {
        if config.mode == SandboxMode::DangerFullAccess {
            return Ok(None);
        }
        let report = SandboxReport::probe();
        report.can_confine(config.mode, config.network)?;
        // A linked worktree's commits go to its repository's git directory, outside the
        // roots: writable with `git_writes` only where the namespace holds its configuration
        // and hooks read-only.
        let shared_git =
            if config.git_writes && config.mode == SandboxMode::WorkspaceWrite && report.protected().is_ok() {
                shared_git::shared_git_dirs(roots)
            } else {
                Vec::new()
            };
        let writable = landlock::writable(config, roots).with(&shared_git);
        // The user's protected places inside what the command may write: held, pinned, or
        // kept from being made (sealed).
        let mut root_dirs: Vec<PathBuf> = Vec::new();
        if config.mode == SandboxMode::WorkspaceWrite {
            root_dirs.extend(roots.iter().cloned());
            root_dirs.extend(config.writable_roots.iter().cloned());
        }
        let (all, temp) = (writable.all(), writable.temp_dirs());
        let places = places::places(&places::Input {
            places: &config.protected_paths,
            own: &config.own_dirs,
            writable: &all,
            temp: &temp,
            roots: &root_dirs,
        });
        if !places.uncovered.is_empty() {
            tracing::debug!(places = ?places.uncovered, "missing protected places beneath a temp directory stay creatable");
        }
        let writable = writable.sealing(&places.seal);
        let ruleset = landlock::shared(&writable, config.network).map_err(|e| {
            format!("cannot build the sandbox for this command: {e}; retry, or check `toolbelt sandbox check`")
        })?;
        let filter = Some(seccomp::filters(config.network)?);
        let mut missing = protect::Missing::default();
        let binds = match report.protected() {
            Ok(namespace) => {
                let dirs = root_dirs;
                // Path sockets outside the writable roots: Landlock keeps commands from them
                // from ABI 9; before that, they are masked.
                let sockets = if config.network || report.landlock_abi().unwrap_or(0) >= 9 {
                    Vec::new()
                } else {
                    sockets::outside(&dirs).map_err(|()| {
                        format!(
                            "more than {} Unix sockets are listening outside the workspace, more than the sandbox \
                             can keep a command from on this kernel (Landlock before ABI 9); stop what opened them \
                             (see `ss -xl`), or allow the network for this command",
                            sockets::MAX_SOCKETS
                        )
                    })?
                };
                let plan = protect::Plan {
                    writable: &dirs,
                    roots,
                    places: Some(&places),
                    git_writes: config.git_writes,
                    shared_git: &shared_git,
                    masks,
                    sockets: &sockets,
                    terminals: terminal::devices(),
                };
                let (binds, absent) = protect::plan(plan, namespace);
                missing = absent;
                if let Some(dropped) = binds.as_ref().map(protect::Binds::dropped).filter(|n| *n > 0) {
                    return Err(format!(
                        "this command's sandbox would need {dropped} more mounts than the {} it may have (protected \
                         paths, hidden files and sockets outside the workspace); narrow the Read deny rules or \
                         the workspace roots",
                        protect::MAX_BINDS
                    )
                    .into());
                }
                binds
            }
            Err(_) => None,
        };
        Ok(Some(Confinement {
            ruleset: Some(ruleset),
            filter,
            binds,
            caps: Some(caps::CapDrop::plan()),
            sealed: places.seal,
            missing,
        }))
    }

    /// Whether the command drops its capabilities (so a thread with an empty bounding set may
    /// start it, see `spawn/spawner.rs`).
    pub(crate) fn drops_capabilities(&self) -> bool {
        self.caps.is_some()
    }

    /// Whether the command gets a mount namespace of its own.
    pub(crate) fn has_namespace(&self) -> bool {
        self.binds.is_some()
    }

    /// The directories in which this confinement lets the command make no new entry.
    pub fn sealed(&self) -> &[PathBuf] {
        &self.sealed
    }

    /// The protected entries missing in the writable roots when this was built, to tell
    /// afterwards which the command made ([`protect::Missing::made`]).
    pub fn missing(&self) -> &protect::Missing {
        &self.missing
    }

    /// The paths this confinement keeps read-only with bind mounts.
    pub fn read_only_binds(&self) -> Vec<PathBuf> {
        self.binds.as_ref().map(protect::Binds::read_only).unwrap_or_default()
    }

    /// Installs a `pre_exec` hook on the command that applies the confinement in the child
    /// before exec, joining `cgroup` first. Never applies anything to the calling process.
    pub fn install(self, command: &mut tokio::process::Command, cgroup: Option<Arc<CommandCgroup>>) {
        self.install_std(command.as_std_mut(), cgroup);
    }

    /// [`install`](Self::install) for a standard library command (the probe uses it).
    fn install_std(self, command: &mut std::process::Command, cgroup: Option<Arc<CommandCgroup>>) {
        // Where the command starts, as an absolute path to enter again once the mounts are
        // made (see `apply`).
        let cwd = match command.get_current_dir() {
            Some(dir) if dir.is_absolute() => Some(dir.to_path_buf()),
            Some(dir) => std::env::current_dir().ok().map(|here| here.join(dir)),
            None => std::env::current_dir().ok(),
        };
        let cwd = cwd.and_then(|dir| CString::new(dir.as_os_str().as_bytes()).ok());
        pre_exec(command, move || {
            // The cgroup first, while the child may still write it.
            if let Some(cgroup) = &cgroup {
                cgroup.join_self()?;
            }
            self.apply(cwd.as_deref(), Bounding::Full)
        });
    }

    /// Applies the confinement to the calling thread, which must be the single thread of a
    /// child about to exec (`cwd` is the directory it runs in, entered again after the mounts;
    /// `bounding` says whether the thread that started it had emptied its bounding set).
    /// Only system calls on what [`for_command`](Self::for_command) built, which it reads and
    /// never changes: it may run in a forked child or in one sharing the server's memory.
    pub(crate) fn apply(&self, cwd: Option<&CStr>, bounding: Bounding) -> std::io::Result<()> {
        // In this order: mounts while the child has the capability (and before Landlock,
        // which forbids changing them); the capabilities; Landlock and the filter; finally no
        // descriptor but the standard ones (and the control pipe, moved there by the script)
        // reaches the command.
        if let Some(binds) = &self.binds {
            protect::apply(binds)?;
            // A working directory inside a bound path still refers to what lies beneath the
            // mount, where writes are allowed: look it up again, through the mounts.
            if let Some(cwd) = cwd {
                protect::enter(cwd)?;
            }
        }
        if let Some(caps) = self.caps {
            caps.apply(bounding)?;
        }
        if let Some(ruleset) = &self.ruleset {
            landlock::restrict_self(ruleset)?;
        }
        if let Some(filter) = self.filter {
            seccomp::apply(filter)?;
        }
        close_inherited();
        Ok(())
    }
}

/// Marks every descriptor above stderr close-on-exec: whatever the server inherited or opened
/// without the flag does not reach the command. (The control pipe arrives as stdin and is
/// moved by the command's script.)
#[allow(unsafe_code)]
fn close_inherited() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range with integer arguments; with CLOEXEC it only sets a flag on
    // descriptors from 3 up. On a kernel without it (before 5.11) nothing happens, and the
    // server's own start marks its inherited descriptors (see `spawn::seal_inherited`).
    unsafe {
        libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC);
    }
}

/// Registers `hook` to run in the child between fork and exec.
#[allow(unsafe_code)]
fn pre_exec(command: &mut std::process::Command, hook: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static) {
    use std::os::unix::process::CommandExt as _;
    // SAFETY: the hook runs in the forked child, where only async-signal-safe work is allowed.
    // It only makes system calls on data built before the fork: open/write/close of the
    // cgroup's `cgroup.procs` and the namespace's id maps, unshare, mount, chdir, prctl,
    // capget/capset, landlock_restrict_self on a ruleset descriptor, seccomp on a program
    // already in memory, close_range. It never allocates, locks or logs; errors are carried as
    // raw OS error numbers, which need no allocation.
    unsafe {
        command.pre_exec(hook);
    }
}

#[cfg(test)]
mod tests;
