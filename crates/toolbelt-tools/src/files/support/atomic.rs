//! Atomic writes, confined to a root: a temp file in the same directory, written and
//! fsynced, then renamed over the target. A reader sees the old content or the new, never
//! half of either; a failure leaves the original intact.
//!
//! The temp file never shows its content to more people than the target does: it is created
//! with the target's own mode (an existing file's, or the mode the caller asks for), and a
//! new file's temp is created `0600` and given the default mode for new files (`0666` less
//! the umask) only just before the rename. Temp files are named
//! `.<name>.tb<pid>-<n>.tmp`; one left behind by a process that was killed (its pid is gone,
//! and it is older than [`STALE_AFTER`](stale::STALE_AFTER)) is removed by the next write to its directory
//! ([`stale`]). Nothing that does not have that exact shape is ever removed.
//!
//! Writes are done in two steps — [`stage`] then [`Staged::commit`] — so a tool changing
//! several files (ApplyPatch) can stage all of them and commit only when every one staged.
//! The commit refuses to replace anything but a regular file or a symlink: a FIFO, a device,
//! a socket or a directory found at the target keeps its place.

mod stale;

use std::ffi::{OsStr, OsString};
use std::io::Write as _;
use std::path::Path;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt as _, Permissions, PermissionsExt as _};

use stale::clean_stale;
#[cfg(test)]
pub(crate) use stale::parse_temp_name;

use crate::fs::regular::NotRegular;

/// A new content, written to a temp file beside its target, not yet in place.
pub struct Staged {
    dir: Dir,
    tmp: OsString,
    name: OsString,
    /// The mode to give the temp just before the rename (a new file's), if any.
    final_mode: Option<u32>,
    committed: bool,
}

/// How a file is staged.
#[derive(Debug, Clone, Default)]
pub struct StageOptions {
    /// The temp file's name (from [`temp_name`]); a fresh one when `None`.
    pub temp: Option<OsString>,
    /// The file's mode; when `None`, an existing target's mode, or the default for new
    /// files.
    pub mode: Option<u32>,
}

/// A fresh temp name for a file called `name`: `.<name>.tb<pid>-<n>.tmp` (the name cut to
/// 100 characters), unique in this process and unlikely to meet a dead process's.
pub fn temp_name(name: &OsStr) -> OsString {
    tagged_name(name, "")
}

/// A hidden name beside `name` with a tag after `tb` (`del` for an entry set aside, `old` for
/// a backup): `.<name>.tb<tag><pid>-<n>.tmp`. The stale-temp cleaner never removes these.
pub fn tagged_name(name: &OsStr, tag: &str) -> OsString {
    static COUNTER: OnceLock<AtomicU64> = OnceLock::new();
    let counter = COUNTER.get_or_init(|| {
        // Start somewhere a previous process with the same pid is unlikely to have been.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| u64::from(d.subsec_nanos()))
            .unwrap_or(0);
        AtomicU64::new(nanos)
    });
    let n = counter.fetch_add(1, Ordering::Relaxed);
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    OsString::from(format!(".{stem}.tb{tag}{}-{n}.tmp", std::process::id()))
}

/// The mode a new file gets: `0666` less the process's umask.
pub fn new_file_mode() -> u32 {
    static UMASK: OnceLock<u32> = OnceLock::new();
    // Read from /proc rather than set and restored with umask(2), which would race with
    // other threads creating files.
    let umask = UMASK.get_or_init(|| {
        std::fs::read_to_string("/proc/self/status")
            .ok()
            .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Umask:").map(|v| v.trim().to_string())))
            .and_then(|v| u32::from_str_radix(&v, 8).ok())
            .unwrap_or(0o022)
    });
    0o666 & !umask
}

/// The parent directory of `rel` inside `root`, created when missing.
fn parent_dir(root: &Dir, rel: &Path) -> std::io::Result<Dir> {
    match rel.parent() {
        Some(p) if !p.as_os_str().is_empty() => match root.open_dir(p) {
            Ok(dir) => Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                root.create_dir_all(p)?;
                root.open_dir(p)
            }
            Err(e) => Err(e),
        },
        _ => root.try_clone(),
    }
}

/// Writes `bytes` to a temp file beside `rel` (inside `root`), creating parent directories.
/// `rel` must have no symlink in its last component (resolve it first to write through a
/// link to its target).
pub fn stage(root: &Dir, rel: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
    stage_with(root, rel, bytes, &StageOptions::default())
}

/// [`stage`] with a chosen temp name and mode.
pub fn stage_with(root: &Dir, rel: &Path, bytes: &[u8], options: &StageOptions) -> std::io::Result<Staged> {
    let name = rel.file_name().ok_or_else(|| std::io::Error::other("the path has no file name"))?.to_os_string();
    let dir = parent_dir(root, rel)?;
    clean_stale(&dir);
    let existing = dir.metadata(&name).ok().map(|m| m.permissions().mode());
    // The temp is born with the mode it will have; a new file's is owner-only until the end.
    let mode = options.mode.or(existing).map(|m| m & 0o7777);
    let (tmp, mut file) = create_temp(&dir, &name, options.temp.as_deref(), mode.map_or(0o600, |m| m & 0o777))?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(mode) = mode {
            // The umask may have taken bits off at creation (the temp was only ever narrower):
            // give it the exact mode, setuid and sticky bits included.
            file.set_permissions(Permissions::from_mode(mode))?;
        }
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        return Err(e);
    }
    let final_mode = if mode.is_none() { Some(new_file_mode()) } else { None };
    Ok(Staged { dir, tmp, name, final_mode, committed: false })
}

fn create_temp(
    dir: &Dir,
    name: &OsStr,
    chosen: Option<&OsStr>,
    mode: u32,
) -> std::io::Result<(OsString, cap_std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true).mode(mode);
    if let Some(tmp) = chosen {
        return dir.open_with(tmp, &options).map(|f| (tmp.to_os_string(), f));
    }
    loop {
        let tmp = temp_name(name);
        match dir.open_with(&tmp, &options) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Refuses to replace `name` in `dir` when it is a FIFO, a device, a socket or a directory.
pub fn check_replaceable(dir: &Dir, name: &OsStr) -> std::io::Result<()> {
    match dir.symlink_metadata(name) {
        Ok(meta) => match NotRegular::of_cap(meta.file_type()) {
            Some(kind) => Err(std::io::Error::other(format!(
                "it is {} now, not a regular file; it was left in place",
                kind.describe()
            ))),
            None => Ok(()),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

impl Staged {
    /// Puts the new content in place (rename) and syncs the directory.
    pub fn commit(self) -> std::io::Result<()> {
        let dir = self.dir.try_clone()?;
        self.rename_into_place()?;
        let _ = dir.into_std_file().sync_all();
        Ok(())
    }

    /// Puts the new content in place (rename) without syncing the directory (the caller
    /// syncs each directory once, after many renames).
    pub fn rename_into_place(mut self) -> std::io::Result<()> {
        check_replaceable(&self.dir, &self.name)?;
        if let Some(mode) = self.final_mode {
            self.dir.set_permissions(&self.tmp, Permissions::from_mode(mode))?;
        }
        self.dir.rename(&self.tmp, &self.dir, &self.name)?;
        self.committed = true;
        Ok(())
    }

    /// Leaves the temp file on disk for the caller to rename by name (a journal names it),
    /// letting go of the directory handle.
    pub fn keep(mut self) {
        self.committed = true;
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = self.dir.remove_file(&self.tmp);
        }
    }
}

/// Stages and commits at once.
pub fn write(root: &Dir, rel: &Path, bytes: &[u8]) -> std::io::Result<()> {
    stage(root, rel, bytes)?.commit()
}

#[cfg(test)]
mod tests;
