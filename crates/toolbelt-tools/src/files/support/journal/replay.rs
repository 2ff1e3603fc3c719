//! Acting on a journal: rolling a commit forward to the new state, or back to the old one.
//!
//! Both work from what is on disk, step by step, so either can be run again after being
//! interrupted itself, and both are what the commit itself runs (a rollback after a failed
//! rename is the same code as one after a crash).

use std::collections::HashSet;
use std::io::Read as _;
use std::path::{Path, PathBuf};

use cap_std::fs::{Dir, MetadataExt as _, Permissions, PermissionsExt as _};

use super::record::{Entry, Header, PathText};
use crate::files::support::atomic::check_replaceable;
use crate::fs::regular::open_regular;
use crate::fs::roots::OpenRoots;

/// One entry, its paths decoded and its root opened.
pub struct Step<'a> {
    /// The root's handle.
    pub dir: &'a Dir,
    /// The root's path (for messages).
    pub root: &'a Path,
    /// The target, relative to the root.
    pub path: PathBuf,
    /// What to do there.
    pub kind: StepKind,
}

/// What a step does.
pub enum StepKind {
    /// Put the staged `temp` at the path.
    Write {
        /// The staged new content.
        temp: PathBuf,
        /// The original's second name, if there was an original file.
        backup: Option<PathBuf>,
        /// Where a symlink at the path goes while the commit runs.
        aside: Option<PathBuf>,
        /// SHA-256 of the new content.
        sha256: String,
        /// The new file's mode.
        mode: u32,
        /// Directories made for it, deepest first.
        dirs: Vec<PathBuf>,
    },
    /// Remove the path (set aside to `aside` first).
    Delete {
        /// The hidden name.
        aside: PathBuf,
    },
}

/// The steps of `header` in this workspace; `None` when a root one of its entries is in is
/// not open here, or a path does not decode.
pub fn steps<'a>(ws: &'a OpenRoots, header: &Header) -> Option<Vec<Step<'a>>> {
    let paths = ws.root_paths();
    let roots: Vec<Option<(&Dir, &Path)>> = header
        .roots
        .iter()
        .map(|root| {
            let i = ws.root_index(&root.path()?)?;
            Some((ws.root_dir(i)?, *paths.get(i)?))
        })
        .collect();
    let mut out = Vec::with_capacity(header.entries.len());
    for entry in &header.entries {
        let (dir, root) = (*roots.get(entry.root())?)?;
        let (path, kind) = match entry {
            Entry::Write { path, temp, backup, aside, sha256, mode, dirs, .. } => {
                let kind = StepKind::Write {
                    temp: temp.path()?,
                    backup: optional(backup.as_ref())?,
                    aside: optional(aside.as_ref())?,
                    sha256: sha256.clone(),
                    mode: *mode,
                    dirs: dirs.iter().map(|d| d.path()).collect::<Option<_>>()?,
                };
                (path.path()?, kind)
            }
            Entry::Delete { path, aside, .. } => (path.path()?, StepKind::Delete { aside: aside.path()? }),
        };
        out.push(Step { dir, root, path, kind });
    }
    Some(out)
}

/// An optional path decoded: `None` when it is there but does not decode.
fn optional(text: Option<&PathText>) -> Option<Option<PathBuf>> {
    match text {
        None => Some(None),
        Some(t) => t.path().map(Some),
    }
}

fn exists(dir: &Dir, path: &Path) -> bool {
    dir.symlink_metadata(path).is_ok()
}

/// SHA-256 of a regular file's content; `None` when it is missing or not a regular file.
fn digest(dir: &Dir, path: &Path) -> Option<String> {
    let mut file = open_regular(dir, path).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(toolbelt_core::sha256_hex(&bytes))
}

/// Whether two names are the same file (a backup that is a hard link of the original).
fn same_file(dir: &Dir, a: &Path, b: &Path) -> bool {
    match (dir.symlink_metadata(a), dir.symlink_metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn note(step: &Step<'_>, what: &str, e: &std::io::Error) -> String {
    format!("- {}: {what} ({e})", step.root.join(&step.path).display())
}

/// Whether every new content is whole somewhere: staged, or already at its target.
pub fn can_roll_forward(steps: &[Step<'_>]) -> bool {
    steps.iter().all(|s| match &s.kind {
        StepKind::Write { temp, sha256, .. } => match digest(s.dir, temp) {
            Some(d) => &d == sha256,
            None => !exists(s.dir, temp) && digest(s.dir, &s.path).as_ref() == Some(sha256),
        },
        StepKind::Delete { .. } => true,
    })
}

/// Moves the entries to delete (and symlinks to replace) aside, in order.
pub fn set_aside(steps: &[Step<'_>]) -> Result<(), (usize, std::io::Error)> {
    for (i, s) in steps.iter().enumerate() {
        let aside = match &s.kind {
            StepKind::Delete { aside } | StepKind::Write { aside: Some(aside), .. } => aside,
            StepKind::Write { aside: None, .. } => continue,
        };
        s.dir.rename(&s.path, s.dir, aside).map_err(|e| (i, e))?;
    }
    Ok(())
}

/// Renames one staged file over its target (the new file's final mode given first).
pub fn put_in_place(step: &Step<'_>) -> std::io::Result<()> {
    let StepKind::Write { temp, mode, .. } = &step.kind else { return Ok(()) };
    let name = step.path.file_name().ok_or_else(|| std::io::Error::other("the path has no file name"))?;
    let parent = step.dir.open_dir(parent_of(&step.path))?;
    check_replaceable(&parent, name)?;
    step.dir.set_permissions(temp, Permissions::from_mode(*mode))?;
    step.dir.rename(temp, step.dir, &step.path)
}

fn parent_of(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Finishes an interrupted commit: every staged file still in place is renamed over its
/// target, entries to delete are removed, backups and set-aside entries are removed.
/// Returns what could not be done.
pub fn roll_forward(steps: &[Step<'_>]) -> Vec<String> {
    let mut notes = Vec::new();
    for s in steps {
        match &s.kind {
            StepKind::Delete { aside } => {
                if !exists(s.dir, aside)
                    && exists(s.dir, &s.path)
                    && let Err(e) = s.dir.rename(&s.path, s.dir, aside)
                {
                    notes.push(note(s, "could not be deleted", &e));
                }
            }
            StepKind::Write { temp, .. } => {
                if exists(s.dir, temp)
                    && let Err(e) = put_in_place(s)
                {
                    notes.push(note(s, "its new content could not be put in place", &e));
                }
            }
        }
    }
    sync_parents(steps);
    notes.extend(clean_up(steps));
    notes
}

/// Removes the backups and set-aside entries of a commit whose renames are all done.
pub fn clean_up(steps: &[Step<'_>]) -> Vec<String> {
    let mut notes = Vec::new();
    for s in steps {
        let leftovers = match &s.kind {
            StepKind::Delete { aside } => [Some(aside), None],
            StepKind::Write { backup, aside, .. } => [backup.as_ref(), aside.as_ref()],
        };
        for left in leftovers.into_iter().flatten() {
            match s.dir.remove_file(left) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    notes.push(format!("- {} is left behind ({e}); remove it", s.root.join(left).display()));
                }
                _ => {}
            }
        }
    }
    notes
}

/// Undoes a commit, newest step first: originals come back from their backups (or from
/// being set aside), new files that are ours are removed, staged files and the directories
/// made for new files go. Returns what could not be undone.
pub fn roll_back(steps: &[Step<'_>]) -> Vec<String> {
    let mut notes = Vec::new();
    for s in steps.iter().rev() {
        match &s.kind {
            StepKind::Delete { aside } => {
                if exists(s.dir, aside)
                    && let Err(e) = s.dir.rename(aside, s.dir, &s.path)
                {
                    notes.push(note(
                        s,
                        &format!("could not be put back; it is at {}", s.root.join(aside).display()),
                        &e,
                    ));
                }
            }
            StepKind::Write { temp, backup, aside, sha256, dirs, .. } => {
                if let Some(backup) = backup.as_ref().filter(|b| exists(s.dir, b)) {
                    // A hard link of an original that never left: just drop the second name.
                    let restored = if same_file(s.dir, backup, &s.path) {
                        s.dir.remove_file(backup)
                    } else {
                        s.dir.rename(backup, s.dir, &s.path)
                    };
                    if let Err(e) = restored {
                        notes.push(note(s, "could not restore its original content", &e));
                    }
                } else if let Some(aside) = aside.as_ref().filter(|a| exists(s.dir, a)) {
                    if let Err(e) = s.dir.rename(aside, s.dir, &s.path) {
                        notes.push(note(s, "could not put the symlink back", &e));
                    }
                } else if backup.is_none()
                    && aside.is_none()
                    && !exists(s.dir, temp)
                    && digest(s.dir, &s.path).as_ref() == Some(sha256)
                    && let Err(e) = s.dir.remove_file(&s.path)
                {
                    notes.push(note(s, "the new file could not be removed", &e));
                }
                match s.dir.remove_file(temp) {
                    Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                        notes.push(note(s, "its staged new content is left behind", &e));
                    }
                    _ => {}
                }
                for d in dirs {
                    // A directory another file still uses is not empty and stays.
                    let _ = s.dir.remove_dir(d);
                }
            }
        }
    }
    sync_parents(steps);
    notes
}

/// Syncs each directory the steps changed, once.
pub fn sync_parents(steps: &[Step<'_>]) {
    let mut done: HashSet<(&Path, &Path)> = HashSet::new();
    for s in steps {
        let parent = parent_of(&s.path);
        if done.insert((s.root, parent))
            && let Ok(d) = s.dir.open_dir(parent)
        {
            let _ = d.into_std_file().sync_all();
        }
    }
}
