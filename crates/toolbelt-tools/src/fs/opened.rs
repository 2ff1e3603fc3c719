//! The workspace roots' directory handles, kept open between calls.
//!
//! Each file tool's call opened every root afresh: the root's real path resolved (a `readlink`
//! per component), the directory opened, and closed again when the call ended, five or six
//! system calls a root, on every call; a client reading small files spent more time there
//! than reading them. A handle is now kept per root path and used again while the path still
//! names the directory it was opened on: a `stat` of the path, compared by device, inode and
//! birth time with the handle's, decides (a removed directory's inode number can come back on
//! a new one, born later; where the file system keeps no birth time, a `stat` of the handle
//! says whether it still has a name). A root removed, renamed away
//! or replaced (by another directory or a symlink to one) is opened afresh, as before. At
//! most [`KEPT`] roots are kept.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use cap_std::ambient_authority;
use cap_std::fs::{Dir, MetadataExt as _};

/// How many roots' handles are kept (the most recently opened).
const KEPT: usize = 16;

/// One root: its canonical path and an open handle on it.
#[derive(Debug)]
pub(crate) struct Root {
    /// The root's real path, symlinks resolved.
    pub(crate) path: PathBuf,
    /// The open directory.
    pub(crate) dir: Dir,
    /// Which directory `dir` is: (device, inode, birth time when the file system keeps one).
    id: Id,
}

/// A directory's identity.
type Id = (u64, u64, Option<std::time::SystemTime>);

fn id_of(meta: &std::fs::Metadata) -> Id {
    (meta.dev(), meta.ino(), meta.created().ok())
}

/// Kept handles, by the path the root was given as.
static KEPT_ROOTS: Mutex<Vec<(PathBuf, Arc<Root>)>> = Mutex::new(Vec::new());

/// Why a root cannot be opened.
#[derive(Debug)]
pub(crate) enum RootError {
    /// Its real path cannot be resolved.
    Resolve(std::io::Error),
    /// It cannot be opened as a directory.
    Open(PathBuf, std::io::Error),
}

/// The root `given` opened: the kept handle when `given` still names its directory, else a
/// new one (kept for next time).
pub(crate) fn root(given: &Path) -> Result<Arc<Root>, RootError> {
    let id = id_of(&std::fs::metadata(given).map_err(RootError::Resolve)?);
    let kept = KEPT_ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    let found = kept.iter().find(|(path, root)| path == given && root.id == id).map(|(_, root)| Arc::clone(root));
    drop(kept);
    let alive = |root: &Arc<Root>| id.2.is_some() || root.dir.dir_metadata().is_ok_and(|m| m.nlink() > 0);
    if let Some(root) = found.filter(alive) {
        return Ok(root);
    }
    let path = std::fs::canonicalize(given).map_err(RootError::Resolve)?;
    let dir = Dir::open_ambient_dir(&path, ambient_authority()).map_err(|e| RootError::Open(path.clone(), e))?;
    // What was opened, not what the path named a moment before.
    let opened = dir.dir_metadata().map_err(|e| RootError::Open(path.clone(), e))?;
    let id = (opened.dev(), opened.ino(), opened.created().ok().map(cap_std::time::SystemTime::into_std));
    let root = Arc::new(Root { path, dir, id });
    let mut kept = KEPT_ROOTS.lock().unwrap_or_else(PoisonError::into_inner);
    kept.retain(|(path, _)| path != given);
    if kept.len() >= KEPT {
        kept.remove(0);
    }
    kept.push((given.to_path_buf(), Arc::clone(&root)));
    Ok(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_kept_while_its_path_names_the_same_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let given = tmp.path().join("root");
        std::fs::create_dir(&given).unwrap();
        let first = root(&given).unwrap();
        assert!(Arc::ptr_eq(&first, &root(&given).unwrap()), "kept");
        // Replaced by another directory: opened afresh, and the new one is what opens.
        std::fs::rename(&given, tmp.path().join("old")).unwrap();
        std::fs::create_dir(&given).unwrap();
        std::fs::write(given.join("new.txt"), "x").unwrap();
        let second = root(&given).unwrap();
        assert!(!Arc::ptr_eq(&first, &second));
        assert!(second.dir.exists("new.txt"));
        // Replaced by a symlink to a directory elsewhere: that directory, at its real path.
        std::fs::remove_file(given.join("new.txt")).unwrap();
        std::fs::remove_dir(&given).unwrap();
        let elsewhere = tmp.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &given).unwrap();
        let third = root(&given).unwrap();
        assert_eq!(third.path, elsewhere.canonicalize().unwrap());
        // Removed and made again (maybe with the same inode number): the new one.
        std::fs::remove_file(&given).unwrap();
        std::fs::create_dir(&given).unwrap();
        let fourth = root(&given).unwrap();
        std::fs::remove_dir(&given).unwrap();
        std::fs::create_dir(&given).unwrap();
        std::fs::write(given.join("again.txt"), "x").unwrap();
        assert!(root(&given).unwrap().dir.exists("again.txt"));
        drop(fourth);
        // Gone: an error, not the old handle.
        std::fs::remove_file(given.join("again.txt")).unwrap();
        std::fs::remove_dir(&given).unwrap();
        std::fs::write(&given, "").unwrap();
        std::fs::remove_file(&given).unwrap();
        assert!(matches!(root(&given), Err(RootError::Resolve(_))));
    }
}
