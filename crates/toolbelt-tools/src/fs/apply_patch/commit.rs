//! Putting a planned patch on disk as one unit.
//!
//! 1. Every new content is staged: a temp file beside its target, written and fsynced.
//! 2. Every path to delete (and a symlink about to be replaced by a file) is renamed aside,
//!    to a hidden name in its own directory.
//! 3. Every staged file is renamed over its target.
//! 4. The set-aside entries are removed.
//!
//! A failure in steps 1–2 undoes what was done (temp files removed, entries renamed back,
//! directories created for new files removed): nothing changed. A failure in step 3 (rare:
//! a rename in a directory we just wrote to) restores every file already committed from
//! its original bytes held in memory, renames the set-aside entries back, and says so. A
//! failure in step 4 leaves a hidden file behind and is reported as a warning.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, Permissions};
use toolbelt_core::ToolError;

use crate::fs::atomic::{self, Staged};
use crate::fs::workspace::{Located, Workspace};

/// What to do at one path.
pub enum Action {
    /// Put these bytes there.
    Write {
        /// The new content, encoded.
        bytes: Vec<u8>,
        /// The original content to restore on rollback; `None` when the path held no file
        /// (the new file is removed instead).
        restore: Option<Vec<u8>>,
        /// Whether an entry (a symlink) must first be set aside.
        aside: bool,
        /// Permissions to give the new file (a moved file keeps its source's).
        perms: Option<Permissions>,
    },
    /// Remove the entry.
    Delete,
}

/// One path's change.
pub struct Change {
    /// Where (a real location; for deletes, the entry itself).
    pub loc: Located,
    /// What.
    pub action: Action,
}

static ASIDE: AtomicU64 = AtomicU64::new(0);

/// A hidden name beside `rel` for setting it aside.
fn aside_name(rel: &Path) -> PathBuf {
    let name = rel.file_name().map(|n| n.to_string_lossy().chars().take(100).collect::<String>()).unwrap_or_default();
    let n = ASIDE.fetch_add(1, Ordering::Relaxed);
    let hidden = OsString::from(format!(".{name}.tbdel{}-{n}.tmp", std::process::id()));
    rel.parent().map_or_else(|| PathBuf::from(&hidden), |p| p.join(&hidden))
}

/// Directories above `rel` that do not exist yet, deepest first.
fn missing_dirs(dir: &Dir, rel: &Path) -> Vec<PathBuf> {
    rel.parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .filter(|a| !a.as_os_str().is_empty() && dir.symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// Applies every change, or none. Returns warnings (leftover hidden files).
pub fn apply(ws: &Workspace, changes: &[Change]) -> Result<Vec<String>, ToolError> {
    let mut undo = Undo { ws, changes, dirs: Vec::new(), asides: Vec::new(), committed: Vec::new() };

    let mut staged: Vec<(usize, Staged)> = Vec::new();
    for (i, c) in changes.iter().enumerate() {
        if let Action::Write { bytes, .. } = &c.action {
            let dir = ws.dir(&c.loc);
            undo.dirs.extend(missing_dirs(dir, &c.loc.rel).into_iter().map(|d| (i, d)));
            match atomic::stage(dir, &c.loc.rel, bytes) {
                Ok(s) => staged.push((i, s)),
                Err(e) => {
                    drop(staged);
                    let notes = undo.run();
                    return Err(failure(format!("could not write {}: {e}", c.loc.abs.display()), notes));
                }
            }
        }
    }

    for (i, c) in changes.iter().enumerate() {
        if matches!(c.action, Action::Delete | Action::Write { aside: true, .. }) {
            let aside = aside_name(&c.loc.rel);
            let dir = ws.dir(&c.loc);
            if let Err(e) = dir.rename(&c.loc.rel, dir, &aside) {
                drop(staged);
                let notes = undo.run();
                return Err(failure(format!("could not delete {}: {e}", c.loc.abs.display()), notes));
            }
            undo.asides.push((i, aside));
        }
    }

    let total = staged.len();
    let mut pending = staged.into_iter();
    while let Some((i, s)) = pending.next() {
        let c = &changes[i];
        if let Err(e) = s.commit() {
            drop(pending);
            let done = undo.committed.len();
            let notes = undo.run();
            return Err(failure(
                format!("writing {} failed after {done} of {total} files were written: {e}", c.loc.abs.display()),
                notes,
            ));
        }
        undo.committed.push(i);
        if let Action::Write { perms: Some(perms), .. } = &c.action {
            let _ = ws.dir(&c.loc).set_permissions(&c.loc.rel, perms.clone());
        }
    }

    let mut warnings = Vec::new();
    for (i, aside) in &undo.asides {
        let loc = &changes[*i].loc;
        if let Err(e) = ws.dir(loc).remove_file(aside) {
            let left = ws.root_path(loc).join(aside);
            warnings.push(format!(
                "{} was deleted, but {} is left behind ({e}); remove it",
                loc.abs.display(),
                left.display()
            ));
        }
    }
    Ok(warnings)
}

/// The error for a failed application: what failed, and how the rollback went.
fn failure(what: String, notes: Vec<String>) -> ToolError {
    if notes.is_empty() {
        ToolError::failed(format!(
            "The patch was not applied: {what}. Every change was rolled back; nothing was changed. Fix the cause \
             (permissions, disk space) and send the patch again"
        ))
    } else {
        ToolError::failed(format!(
            "The patch was not applied: {what}. Rolling back failed for some files, which may be left changed:\n{}\n\
             Read those files to see their state before retrying",
            notes.join("\n")
        ))
    }
}

/// What has been done so far, to undo it.
struct Undo<'a> {
    ws: &'a Workspace,
    changes: &'a [Change],
    dirs: Vec<(usize, PathBuf)>,
    asides: Vec<(usize, PathBuf)>,
    committed: Vec<usize>,
}

impl Undo<'_> {
    /// Undoes everything, newest first; returns what could not be undone.
    fn run(&mut self) -> Vec<String> {
        let mut notes = Vec::new();
        for i in self.committed.drain(..).rev() {
            let c = &self.changes[i];
            let dir = self.ws.dir(&c.loc);
            let restored = match &c.action {
                Action::Write { restore: Some(original), .. } => atomic::write(dir, &c.loc.rel, original),
                Action::Write { restore: None, .. } => dir.remove_file(&c.loc.rel),
                Action::Delete => Ok(()),
            };
            if let Err(e) = restored {
                notes.push(format!("- {}: could not restore its original content: {e}", c.loc.abs.display()));
            }
        }
        for (i, aside) in self.asides.drain(..).rev() {
            let c = &self.changes[i];
            let dir = self.ws.dir(&c.loc);
            if let Err(e) = dir.rename(&aside, dir, &c.loc.rel) {
                let left = self.ws.root_path(&c.loc).join(&aside);
                notes.push(format!(
                    "- {}: could not be put back; it is at {} ({e})",
                    c.loc.abs.display(),
                    left.display()
                ));
            }
        }
        for (i, d) in self.dirs.drain(..) {
            // Deepest first per file; a directory another file still uses is not empty and stays.
            let _ = self.ws.dir(&self.changes[i].loc).remove_dir(&d);
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_commit_rolls_back_what_was_committed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::write(root.join("a.txt"), "original a").unwrap();
        std::fs::write(root.join("b.txt"), "original b").unwrap();
        // Renaming a file over a non-empty directory fails: the third commit breaks.
        std::fs::create_dir_all(root.join("blocker/inner")).unwrap();
        let ws = Workspace::from_paths(std::slice::from_ref(&root)).unwrap();
        let at = |name: &str| ws.locate(&root.join(name)).unwrap();
        let write = |bytes: &[u8], restore: Option<&[u8]>| Action::Write {
            bytes: bytes.to_vec(),
            restore: restore.map(<[u8]>::to_vec),
            aside: false,
            perms: None,
        };
        let changes = vec![
            Change { loc: at("a.txt"), action: write(b"new a", Some(b"original a")) },
            Change { loc: at("new/c.txt"), action: write(b"new c", None) },
            Change { loc: at("b.txt"), action: Action::Delete },
            Change { loc: at("blocker"), action: write(b"boom", None) },
        ];
        let e = apply(&ws, &changes).err().unwrap().to_string();
        assert!(e.contains("failed after 2 of 3 files were written"), "{e}");
        assert!(e.contains("Every change was rolled back; nothing was changed"), "{e}");
        assert_eq!(std::fs::read_to_string(root.join("a.txt")).unwrap(), "original a");
        assert_eq!(std::fs::read_to_string(root.join("b.txt")).unwrap(), "original b");
        assert!(!root.join("new").exists());
        let mut names: Vec<String> =
            std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        assert_eq!(names, ["a.txt", "b.txt", "blocker"]);
    }
}
