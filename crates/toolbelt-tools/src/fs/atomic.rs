//! Atomic writes, confined to a root: a temp file in the same directory, written and
//! fsynced, given the old file's permissions, then renamed over the target. A reader sees
//! the old content or the new, never half of either; a failure leaves the original intact.
//!
//! Writes are done in two steps — [`stage`] then [`Staged::commit`] — so a tool changing
//! several files (ApplyPatch) can stage all of them and commit only when every one staged.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A new content, written to a temp file beside its target, not yet in place.
pub struct Staged {
    dir: Dir,
    tmp: OsString,
    name: OsString,
    committed: bool,
}

/// Writes `bytes` to a temp file beside `rel` (inside `root`), creating parent directories.
/// `rel` must have no symlink in its last component (resolve it first to write through a
/// link to its target).
pub fn stage(root: &Dir, rel: &Path, bytes: &[u8]) -> std::io::Result<Staged> {
    let name = rel.file_name().ok_or_else(|| std::io::Error::other("the path has no file name"))?.to_os_string();
    let dir = match rel.parent() {
        Some(p) if !p.as_os_str().is_empty() => match root.open_dir(p) {
            Ok(dir) => dir,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                root.create_dir_all(p)?;
                root.open_dir(p)?
            }
            Err(e) => return Err(e),
        },
        _ => root.try_clone()?,
    };
    let previous = dir.metadata(&name).ok().map(|m| m.permissions());
    let (tmp, mut file) = create_temp(&dir, &name)?;
    let written = (|| {
        file.write_all(bytes)?;
        if let Some(perms) = previous {
            file.set_permissions(perms)?;
        }
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = dir.remove_file(&tmp);
        return Err(e);
    }
    Ok(Staged { dir, tmp, name, committed: false })
}

fn create_temp(dir: &Dir, name: &OsString) -> std::io::Result<(OsString, cap_std::fs::File)> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    let stem: String = name.to_string_lossy().chars().take(100).collect();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = OsString::from(format!(".{stem}.tb{}-{n}.tmp", std::process::id()));
        match dir.open_with(&tmp, &options) {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

impl Staged {
    /// Puts the new content in place (rename) and syncs the directory.
    pub fn commit(mut self) -> std::io::Result<()> {
        self.dir.rename(&self.tmp, &self.dir, &self.name)?;
        self.committed = true;
        if let Ok(d) = self.dir.try_clone() {
            let _ = d.into_std_file().sync_all();
        }
        Ok(())
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
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    #[test]
    fn replaces_content_keeps_mode_and_leaves_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("a.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o751)).unwrap();
        let root = Dir::open_ambient_dir(tmp.path(), cap_std::ambient_authority()).unwrap();
        write(&root, Path::new("a.sh"), b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o751);
        write(&root, Path::new("deep/er/b.txt"), b"x").unwrap();
        assert_eq!(std::fs::read_to_string(tmp.path().join("deep/er/b.txt")).unwrap(), "x");
        // A staged write dropped without commit leaves the original and no temp behind.
        drop(stage(&root, Path::new("a.sh"), b"never").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(names.len(), 2, "{names:?}");
    }
}
