//! Putting a planned patch on disk as one unit, even when the process is killed midway.
//!
//! 1. A journal names everything the commit will do ([`crate::files::support::journal`]).
//! 2. Every new content is staged: a temp file beside its target, written and fsynced
//!    (owner-only for a new file until its rename).
//! 3. Every original about to be replaced gets a second name: a hard link (a copy where
//!    links cannot be made).
//! 4. The journal's `commit` line: from here the new state is reachable without us.
//! 5. Every path to delete (and a symlink about to be replaced by a file) is renamed aside,
//!    to a hidden name in its own directory.
//! 6. Every staged file is renamed over its target; each directory is synced once.
//! 7. Backups and set-aside entries are removed, then the journal.
//!
//! A failure in steps 1–6 rolls everything back with the same code that rolls back a
//! crashed commit: originals return from their backups, new files and temp files go, the
//! directories made for new files are removed. A failure in step 7 leaves a hidden file
//! behind and is reported as a warning.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, Permissions, PermissionsExt};
use toolbelt_core::ToolError;

use crate::files::support::atomic::{self, StageOptions};
use crate::files::support::journal::Journal;
use crate::files::support::journal::record::{Entry, Header, PathText, VERSION};
use crate::files::support::journal::replay::{self, Step, StepKind};
use crate::fs::roots::{Located, OpenRoots};

/// What to do at one path.
pub enum Action {
    /// Put these bytes there.
    Write {
        /// The new content, encoded.
        bytes: Vec<u8>,
        /// The original content, when the path held a file (kept as a copy for a rollback
        /// where a hard link cannot be made).
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

/// Directories above `rel` that do not exist yet, deepest first.
fn missing_dirs(dir: &Dir, rel: &Path) -> Vec<PathBuf> {
    rel.parent()
        .into_iter()
        .flat_map(Path::ancestors)
        .filter(|a| !a.as_os_str().is_empty() && dir.symlink_metadata(a).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// `name` in the directory of `rel`.
fn beside(rel: &Path, name: OsString) -> PathBuf {
    rel.parent().map_or_else(|| PathBuf::from(&name), |p| p.join(&name))
}

/// The journal's header for these changes: every name decided before anything is written.
fn header(ws: &OpenRoots, changes: &[Change]) -> Header {
    let roots = ws.root_paths().iter().map(|p| PathText::of(p)).collect();
    let entries = changes
        .iter()
        .map(|c| {
            let (dir, rel, root) = (ws.dir(&c.loc), &c.loc.rel, ws.root_of(&c.loc));
            let name = rel.file_name().unwrap_or(OsStr::new("file"));
            match &c.action {
                Action::Write { bytes, restore, aside, perms } => {
                    let mode = perms
                        .as_ref()
                        .map(PermissionsExt::mode)
                        .or_else(|| dir.metadata(rel).ok().map(|m| m.permissions().mode()))
                        .unwrap_or_else(atomic::new_file_mode);
                    Entry::Write {
                        root,
                        path: PathText::of(rel),
                        temp: PathText::of(&beside(rel, atomic::temp_name(name))),
                        backup: restore.is_some().then(|| PathText::of(&beside(rel, atomic::tagged_name(name, "old")))),
                        aside: aside.then(|| PathText::of(&beside(rel, atomic::tagged_name(name, "del")))),
                        sha256: toolbelt_core::sha256_hex(bytes),
                        mode: mode & 0o7777,
                        dirs: missing_dirs(dir, rel).iter().map(|d| PathText::of(d)).collect(),
                    }
                }
                Action::Delete => Entry::Delete {
                    root,
                    path: PathText::of(rel),
                    aside: PathText::of(&beside(rel, atomic::tagged_name(name, "del"))),
                },
            }
        })
        .collect();
    Header { version: VERSION, pid: std::process::id(), roots, entries }
}

/// Applies every change, or none; a crash midway is finished or undone by the next write
/// in the workspace. Returns warnings (leftover hidden files).
pub fn apply(ws: &OpenRoots, changes: &[Change], journal_dir: &Path) -> Result<Vec<String>, ToolError> {
    let header = header(ws, changes);
    let steps = replay::steps(ws, &header)
        .ok_or_else(|| ToolError::internal("the patch's own journal names a root that is not open"))?;
    let mut journal = Journal::create(journal_dir, &header).map_err(|e| {
        ToolError::failed(format!(
            "The patch was not applied: its journal (what makes it all-or-nothing even if toolbelt is killed) could              not be written in {}: {e}. Nothing was changed; free disk space or fix the directory's permissions and              send the patch again",
            journal_dir.display()
        ))
    })?;
    match run(ws, changes, &steps, &mut journal) {
        Ok(()) => {
            let warnings = replay::clean_up(&steps);
            let _ = journal.remove();
            Ok(warnings)
        }
        Err(what) => {
            let notes = replay::roll_back(&steps);
            let _ = journal.remove();
            Err(failure(what, notes))
        }
    }
}

/// Steps 2–6; the error says what failed.
fn run(ws: &OpenRoots, changes: &[Change], steps: &[Step<'_>], journal: &mut Journal) -> Result<(), String> {
    for (c, s) in changes.iter().zip(steps) {
        if let (Action::Write { bytes, perms, .. }, StepKind::Write { temp, .. }) = (&c.action, &s.kind) {
            let options = StageOptions {
                temp: temp.file_name().map(OsStr::to_os_string),
                mode: perms.as_ref().map(PermissionsExt::mode),
            };
            atomic::stage_with(ws.dir(&c.loc), &c.loc.rel, bytes, &options)
                .map_err(|e| format!("could not write {}: {e}", c.loc.abs.display()))?
                .keep();
            slow_down_for_tests();
        }
    }
    for (c, s) in changes.iter().zip(steps) {
        if let (Action::Write { restore: Some(original), .. }, StepKind::Write { backup: Some(backup), mode, .. }) =
            (&c.action, &s.kind)
        {
            back_up(s.dir, &c.loc.rel, backup, original, *mode)
                .map_err(|e| format!("could not keep a copy of {} to roll back to: {e}", c.loc.abs.display()))?;
        }
    }
    journal.mark_committed().map_err(|e| format!("could not write the patch journal: {e}"))?;
    replay::set_aside(steps).map_err(|(i, e)| format!("could not delete {}: {e}", changes[i].loc.abs.display()))?;
    let total = steps.iter().filter(|s| matches!(s.kind, StepKind::Write { .. })).count();
    let mut done = 0;
    for (c, s) in changes.iter().zip(steps) {
        if matches!(s.kind, StepKind::Write { .. }) {
            replay::put_in_place(s).map_err(|e| {
                format!("writing {} failed after {done} of {total} files were written: {e}", c.loc.abs.display())
            })?;
            done += 1;
            slow_down_for_tests();
        }
    }
    replay::sync_parents(steps);
    Ok(())
}

/// A second name for the original at `rel`: a hard link, else a copy of its bytes.
fn back_up(dir: &Dir, rel: &Path, backup: &Path, original: &[u8], mode: u32) -> std::io::Result<()> {
    if dir.hard_link(rel, dir, backup).is_ok() {
        return Ok(());
    }
    let staged = atomic::stage_with(dir, backup, original, &StageOptions { temp: None, mode: Some(mode) })?;
    staged.commit()
}

/// Test-only: `TOOLBELT_TEST_COMMIT_DELAY_MS` waits that long after each file a commit stages
/// and after each rename, so a crash test's kills land inside the commit rather than in the
/// process's start. Harmless: it only slows a commit down.
fn slow_down_for_tests() {
    static DELAY: std::sync::OnceLock<Option<std::time::Duration>> = std::sync::OnceLock::new();
    let delay = DELAY.get_or_init(|| {
        std::env::var("TOOLBELT_TEST_COMMIT_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map(std::time::Duration::from_millis)
    });
    if let Some(delay) = delay {
        std::thread::sleep(*delay);
    }
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

#[cfg(test)]
mod tests;
