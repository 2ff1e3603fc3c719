//! Protected paths inside writable roots, kept read-only for sandboxed commands.
//!
//! Landlock grants are allow-lists: granting writes beneath a workspace root grants them
//! beneath its `.git` too, and nothing can take a subtree back. So a sandboxed command gets
//! a mount namespace of its own in which each protected entry that exists inside a writable
//! root is bind-mounted onto itself read-only; the rest of the system is unchanged, and
//! nothing propagates back (the namespace's mounts are made slaves first). A bind mount also
//! pins its name: renaming or deleting `.git` fails with "device busy", so it cannot be
//! swapped for a hostile one. Landlock then forbids changing the mount topology, so the
//! command cannot unmount them.
//!
//! What is bound, in each workspace root and configured writable root and in their direct
//! subdirectories (a workspace holding several repositories): every entry of
//! [`toolbelt_core::PROTECTED_NAMES`] that exists (`.git`, `.toolbelt`, `.claude`,
//! `.mcp.json`, `.vscode`, `.idea`); and the user's protected places inside a writable
//! directory, with the directories above them that could be moved away pinned
//! (`places.rs`: toolbelt's own settings and state when the workspace is the home directory;
//! a workspace root inside one of them is bound writable again on top). With
//! `git_writes`, `.git` stays writable so commits work, and only what can make git run a
//! program is read-only: `config`, `config.worktree`, `hooks/`, `info/`, and the same in each
//! submodule's and worktree's git directory — also in the git directory a linked worktree
//! among the roots shares with its repository ([`super::shared_git`]).
//!
//! The same namespace hides what `Read(…)` deny rules name without wildcards (`./.env`,
//! `./secrets/**`, `~/.ssh/**`): `/dev/null` is bound over a hidden file (and over its other
//! hard-linked names in the workspace) and an empty read-only file system over a hidden
//! directory, so `grep -r`, `tar` or a script read nothing of them. Patterns with wildcards
//! (`*.env`) are matched only by what the tools and the policy see. The terminal toolbelt
//! runs in is covered by `/dev/null` too (`terminal.rs`).
//!
//! As root the namespace is a plain mount namespace; otherwise it is nested in a user
//! namespace mapping the user to itself. Not covered here: a protected name a project folder
//! does not have yet (a command may create `.mcp.json`: what it made is found when it ends,
//! [`Missing`], and kept only if a person approves, else moved aside, `set_aside.rs` — the
//! user's own places are kept from being made by `places.rs`), deeper nested repositories,
//! and an entry that is itself a symlink.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use toolbelt_core::PROTECTED_NAMES;

pub use missing::Missing;
pub use set_aside::{holds, keep, set_aside};

use super::places::Places;
use crate::process::cgroup::sys::write_file;

/// Most bind mounts one command gets; a plan that needs more is refused
/// ([`Binds::dropped`]), never applied with some left out.
pub const MAX_BINDS: usize = 512;
/// Most subdirectories of one root looked into.
const MAX_SUBDIRS: usize = 512;

/// The namespaces a command's protected paths are held in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace {
    /// A mount namespace (the server runs as root).
    Mount,
    /// A user namespace mapping the user to itself, with a mount namespace inside.
    User,
}

/// One mount.
#[derive(Debug)]
struct Bind {
    /// Where it goes.
    path: CString,
    /// What is mounted there.
    what: What,
    read_only: bool,
    /// Made writable again after the bind (it lies inside a read-only bind, whose flag a
    /// bind copies).
    reopen: bool,
    /// The flags the mounted file system already has (nosuid, nodev…), kept on the read-only
    /// remount: a user namespace may not drop them.
    keep: libc::c_ulong,
}

/// What a mount puts in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum What {
    /// The path itself (pinned, and read-only when asked).
    Itself,
    /// `/dev/null`, over a file a deny rule hides: it reads as empty.
    Null,
    /// An empty read-only file system, over a directory a deny rule hides.
    Empty,
}

/// The binds for one command, built before its child starts.
#[derive(Debug)]
pub struct Binds {
    binds: Vec<Bind>,
    namespace: Namespace,
    /// `/proc/self/uid_map` and `gid_map` contents, for a user namespace.
    maps: Option<(CString, CString)>,
    /// Mounts the plan needed past [`MAX_BINDS`]: when any, the plan must not be applied.
    dropped: usize,
}

impl Binds {
    /// How many mounts the plan needed past [`MAX_BINDS`] (then it must not be applied: what
    /// is left out would stay writable, readable or reachable).
    pub fn dropped(&self) -> usize {
        self.dropped
    }

    /// The paths bound read-only (for tests and reports).
    pub fn read_only(&self) -> Vec<PathBuf> {
        self.binds
            .iter()
            .filter(|b| b.read_only)
            .map(|b| PathBuf::from(std::ffi::OsStr::from_bytes(b.path.as_bytes())))
            .collect()
    }
}

/// What one command's namespace holds.
#[derive(Debug, Clone, Copy, Default)]
pub struct Plan<'a> {
    /// The writable roots: their protected entries are held read-only.
    pub writable: &'a [PathBuf],
    /// The workspace roots, where other names of a hidden file are looked for.
    pub roots: &'a [PathBuf],
    /// The user's protected places: held read-only, pinned, reopened (`places.rs`).
    pub places: Option<&'a Places>,
    /// Whether git's data stays writable (only its configuration and hooks are held).
    pub git_writes: bool,
    /// Git directories outside the roots that linked worktrees among them share (writable
    /// with `git_writes`): pinned, with their configuration and hooks held read-only.
    pub shared_git: &'a [PathBuf],
    /// Files and directories a deny rule hides from reading: emptied.
    pub masks: &'a [PathBuf],
    /// Unix sockets outside the workspace: covered, so no `connect` reaches them.
    pub sockets: &'a [PathBuf],
    /// The terminal devices toolbelt holds: covered, so no command opens the person's
    /// terminal by its name (`terminal.rs`).
    pub terminals: &'a [PathBuf],
}

/// The mounts of `plan` (`None` when there is nothing to do), and the protected entries
/// missing where it looked ([`Missing`]).
pub fn plan(plan: Plan<'_>, namespace: Namespace) -> (Option<Binds>, Missing) {
    let Plan { writable: dirs, roots, places, git_writes, shared_git, masks, sockets, terminals } = plan;
    let mut m = Mounts::default();
    let mut missing = Missing::default();
    for dir in dirs {
        let inside = subdirs(dir);
        for place in std::iter::once(dir).chain(&inside) {
            let mut lacks = Vec::new();
            for name in PROTECTED_NAMES {
                let entry = place.join(name);
                let Ok(meta) = entry.symlink_metadata() else {
                    lacks.push(*name);
                    continue;
                };
                if meta.file_type().is_symlink() {
                    continue;
                }
                if *name == ".git" && meta.is_dir() && git_writes {
                    m.add(&entry, What::Itself, false);
                    for inner in git_program_paths(&entry) {
                        m.add(&inner, What::Itself, true);
                    }
                } else {
                    m.add(&entry, What::Itself, true);
                }
            }
            missing.look(place, lacks);
        }
        missing.root(dir, inside);
    }
    for git_dir in shared_git {
        m.add(git_dir, What::Itself, false);
        for inner in git_program_paths(git_dir) {
            m.add(&inner, What::Itself, true);
        }
    }
    if let Some(places) = places {
        for dir in &places.pin {
            m.add(dir, What::Itself, false);
        }
        for place in &places.hold {
            m.add(place, What::Itself, true);
        }
        for root in &places.reopen {
            m.push(root, What::Itself, false, true);
        }
    }
    for mask in masks {
        let Ok(meta) = std::fs::metadata(mask) else { continue };
        let Ok(real) = std::fs::canonicalize(mask) else { continue };
        if meta.is_dir() {
            m.add(&real, What::Empty, true);
        } else if meta.is_file() {
            m.add(&real, What::Null, true);
            // Its other names (hard links) inside the workspace are hidden too.
            for other in crate::fs::links::other_names(roots, &real) {
                m.add(&other, What::Null, true);
            }
        }
    }
    for device in sockets.iter().chain(terminals) {
        m.add(device, What::Null, true);
    }
    let Mounts { binds, dropped } = m;
    if binds.is_empty() && dropped == 0 {
        return (None, missing);
    }
    let maps = (namespace == Namespace::User).then(|| {
        let (uid, gid) = (nix::unistd::getuid(), nix::unistd::getgid());
        (CString::new(format!("{uid} {uid} 1")), CString::new(format!("{gid} {gid} 1")))
    });
    let maps = match maps {
        Some((Ok(u), Ok(g))) => Some((u, g)),
        Some(_) => return (None, missing),
        None => None,
    };
    (Some(Binds { binds, namespace, maps, dropped }), missing)
}

/// The mounts planned so far, each path once, and how many went past [`MAX_BINDS`].
#[derive(Debug, Default)]
struct Mounts {
    binds: Vec<Bind>,
    dropped: usize,
}

impl Mounts {
    fn add(&mut self, path: &Path, what: What, read_only: bool) {
        self.push(path, what, read_only, false);
    }

    fn push(&mut self, path: &Path, what: What, read_only: bool, reopen: bool) {
        let Ok(c) = CString::new(path.as_os_str().as_bytes()) else { return };
        if self.binds.iter().any(|b| b.path == c) {
            return;
        }
        if self.binds.len() >= MAX_BINDS {
            self.dropped += 1;
        } else {
            let keep = kept_flags(if what == What::Null { Path::new("/dev/null") } else { path });
            self.binds.push(Bind { path: c, what, read_only, reopen, keep });
        }
    }
}

/// The directories directly inside `dir` (not symlinks, not protected entries themselves).
fn subdirs(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| !PROTECTED_NAMES.iter().any(|n| e.file_name() == *n))
        .take(MAX_SUBDIRS)
        .map(|e| e.path())
        .collect()
}

/// Inside a git directory, what makes git run programs: its configuration, hooks and
/// attributes, and the same in submodules' and worktrees' git directories. `hooks/` and
/// `info/` are created when missing, so a command cannot add them.
fn git_program_paths(git_dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut one = |dir: &Path| {
        for dir_entry in ["hooks", "info"] {
            let path = dir.join(dir_entry);
            if !path.exists() {
                let _ = std::fs::create_dir(&path);
            }
            out.push(path);
        }
        for file in ["config", "config.worktree", "commondir", "gitdir"] {
            out.push(dir.join(file));
        }
    };
    one(git_dir);
    for nested in ["modules", "worktrees"] {
        if let Ok(entries) = std::fs::read_dir(git_dir.join(nested)) {
            for entry in entries.flatten().take(MAX_SUBDIRS) {
                one(&entry.path());
            }
        }
    }
    out.retain(|p| p.symlink_metadata().is_ok_and(|m| !m.file_type().is_symlink()));
    out
}

/// The mount flags of the file system holding `path` that a remount must keep.
fn kept_flags(path: &Path) -> libc::c_ulong {
    use nix::sys::statvfs::FsFlags;
    let Ok(stat) = nix::sys::statvfs::statvfs(path) else { return 0 };
    let flags = stat.flags();
    let mut keep = 0;
    for (fs, ms) in [
        (FsFlags::ST_NOSUID, libc::MS_NOSUID),
        (FsFlags::ST_NODEV, libc::MS_NODEV),
        (FsFlags::ST_NOEXEC, libc::MS_NOEXEC),
        (FsFlags::ST_NOATIME, libc::MS_NOATIME),
        (FsFlags::ST_NODIRATIME, libc::MS_NODIRATIME),
        (FsFlags::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if flags.contains(fs) {
            keep |= ms;
        }
    }
    keep
}

/// Enters the namespaces and makes the mounts. Runs in the child before exec: only system
/// calls on data built before the child started.
pub(super) fn apply(binds: &Binds) -> std::io::Result<()> {
    match binds.namespace {
        Namespace::Mount => sys::unshare(libc::CLONE_NEWNS)?,
        Namespace::User => {
            sys::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS)?;
            if let Some((uid_map, gid_map)) = &binds.maps {
                write_file(c"/proc/self/setgroups", b"deny")?;
                write_file(c"/proc/self/uid_map", uid_map.to_bytes())?;
                write_file(c"/proc/self/gid_map", gid_map.to_bytes())?;
            }
        }
    }
    sys::mount(None, c"/", None, libc::MS_REC | libc::MS_SLAVE, None)?;
    for bind in &binds.binds {
        match bind.what {
            What::Itself => sys::mount(Some(&bind.path), &bind.path, None, libc::MS_BIND | libc::MS_REC, None)?,
            What::Null => sys::mount(Some(c"/dev/null"), &bind.path, None, libc::MS_BIND, None)?,
            What::Empty => {
                let flags = libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
                sys::mount(Some(c"tmpfs"), &bind.path, Some(c"tmpfs"), flags, Some(c"size=4k,mode=0555"))?;
                continue;
            }
        }
        if bind.read_only {
            let flags = libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | bind.keep;
            sys::mount(None, &bind.path, None, flags, None)?;
        } else if bind.reopen {
            sys::mount(None, &bind.path, None, libc::MS_BIND | libc::MS_REMOUNT | bind.keep, None)?;
        }
    }
    Ok(())
}

/// Enters `dir` again after the mounts: a process whose working directory lies inside a bound
/// path would otherwise keep it on the file system beneath the mount, and write there.
pub(super) fn enter(dir: &std::ffi::CStr) -> std::io::Result<()> {
    sys::chdir(dir)
}

/// Whether protected paths can be held here, and how: tried for real in a child on a
/// scratch directory.
pub fn probe() -> Result<Namespace, String> {
    let namespace = if nix::unistd::geteuid().is_root() { Namespace::Mount } else { Namespace::User };
    let scratch = std::env::temp_dir().join(format!("toolbelt-protect-probe-{}", std::process::id()));
    let inner = scratch.join(".git");
    std::fs::create_dir_all(&inner).map_err(|e| format!("cannot make a scratch directory ({e})"))?;
    let result = (|| {
        let writable = std::slice::from_ref(&scratch);
        let binds = plan(Plan { writable, ..Plan::default() }, namespace)
            .0
            .ok_or_else(|| "nothing to bind in the scratch directory".to_string())?;
        let mut command = std::process::Command::new("sh");
        command
            .arg("-c")
            .arg(format!("touch '{}/x' 2>/dev/null && exit 1; exit 0", inner.display()))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        toolbelt_core::process::new_session(&mut command);
        super::pre_exec(&mut command, move || apply(&binds));
        match command.status() {
            Ok(s) if s.success() => Ok(namespace),
            Ok(_) => Err("a read-only bind mount did not hold in a test process".to_string()),
            Err(e) => Err(match namespace {
                Namespace::Mount => format!("mount namespaces are not available ({e})"),
                Namespace::User => format!(
                    "unprivileged user namespaces are not available ({e}); run as root or enable kernel.unprivileged_userns_clone"
                ),
            }),
        }
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// The raw system calls, each a thin wrapper that allocates nothing.
#[allow(unsafe_code)]
mod sys {
    use std::ffi::CStr;

    fn check(ret: libc::c_int) -> std::io::Result<()> {
        if ret < 0 { Err(std::io::Error::last_os_error()) } else { Ok(()) }
    }

    pub(super) fn unshare(flags: libc::c_int) -> std::io::Result<()> {
        // SAFETY: unshare takes only flags; in the single-threaded child it moves this
        // process alone into new namespaces.
        check(unsafe { libc::unshare(flags) })
    }

    pub(super) fn chdir(dir: &CStr) -> std::io::Result<()> {
        // SAFETY: a NUL-terminated path that outlives the call.
        check(unsafe { libc::chdir(dir.as_ptr()) })
    }

    pub(super) fn mount(
        source: Option<&CStr>,
        target: &CStr,
        fstype: Option<&CStr>,
        flags: libc::c_ulong,
        data: Option<&CStr>,
    ) -> std::io::Result<()> {
        let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
        // SAFETY: every pointer is a NUL-terminated string that outlives the call, or null,
        // which mount accepts for the source, file system type and data of a bind, a remount
        // or a propagation change.
        check(unsafe { libc::mount(ptr(source), target.as_ptr(), ptr(fstype), flags, ptr(data).cast()) })
    }
}

mod missing;
mod set_aside;
#[cfg(test)]
mod tests;
