//! Ignore files that are not regular files.
//!
//! The walker reads `.gitignore`, `.ignore`, `.rgignore` and `.git/info/exclude` in every
//! directory it enters (and in the start's parents) with a plain, blocking open: one
//! planted as a FIFO would hang Grep, Glob and ListDir for their whole timeout, one that is
//! a character device would be read forever. So the walk looks at those names first (a
//! `stat` each, no open): the start's parents and the start itself before the walk, where
//! such a file refuses the call, and every directory before the walk enters it, where such a
//! file skips the directory with a note.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use toolbelt_core::ToolError;

use super::WalkErrors;
use crate::fs::regular::NotRegular;

/// The ignore files the walker reads in a directory.
const IGNORE_FILES: [&str; 4] = [".gitignore", ".ignore", ".rgignore", ".git/info/exclude"];

/// The first ignore file in `dir` that a blocking read would hang on or never finish, and
/// what it is.
pub fn special_ignore_file(dir: &Path) -> Option<(PathBuf, NotRegular)> {
    IGNORE_FILES.iter().find_map(|name| {
        let path = dir.join(name);
        let meta = std::fs::metadata(&path).ok()?;
        // A directory named so only makes the read fail; it does not block.
        let kind = NotRegular::of(meta.file_type()).filter(|k| *k != NotRegular::Directory)?;
        Some((path, kind))
    })
}

/// Refuses a walk from `start` when the start or one of its parents holds such a file.
pub fn check_start(start: &Path) -> Result<(), ToolError> {
    for dir in start.ancestors() {
        if let Some((path, kind)) = special_ignore_file(dir) {
            return Err(ToolError::failed(format!(
                "{} is {}, not a regular file, and walking {} would read it as an ignore file (and hang on it); ask \
                 the user to remove or rename it (ignore files must be regular files), or start the walk somewhere \
                 it does not apply",
                path.display(),
                kind.describe(),
                start.display()
            )));
        }
    }
    Ok(())
}

/// Directories a walk skipped because of such a file, for the walk's note.
#[derive(Clone, Default)]
pub struct Skipped(Arc<Mutex<WalkErrors>>);

impl Skipped {
    /// Whether the walk may enter `dir`; records why not.
    pub fn may_enter(&self, dir: &Path) -> bool {
        match special_ignore_file(dir) {
            None => true,
            Some((path, kind)) => {
                let mut errors = self.0.lock().unwrap_or_else(PoisonError::into_inner);
                errors.push_message(format!(
                    "{} is {}, not a regular file, so {} was not entered",
                    path.display(),
                    kind.describe(),
                    dir.display()
                ));
                false
            }
        }
    }

    /// What was skipped, taken out.
    pub fn take(&self) -> WalkErrors {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}
