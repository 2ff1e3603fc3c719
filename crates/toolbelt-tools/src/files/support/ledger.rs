//! The session's record of what the model has read: a file may be overwritten or edited
//! only if it was read in this session and has not changed since.
//!
//! Change is judged by **content hash**, not mtime: a formatter or `touch` that rewrites a
//! file with the same bytes does not make it stale (a frequent complaint about other
//! agents). Files are keyed by their real path (symlinks resolved), so a read through a link
//! counts for an edit of its target.
//!
//! The ledger remembers at most [`MAX_FILES`] files; past that, the one recorded longest ago
//! is forgotten (an edit of it asks for a new Read), so a session reading file after file
//! holds a bounded amount of memory.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, ToolContext, ToolError};

/// What was seen of a file when it was last read or written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    /// xxh3-128 of the whole content, hex.
    pub hash: String,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, milliseconds since the epoch (informational).
    pub mtime_ms: Option<u64>,
}

impl FileState {
    /// The state of `bytes`, with the file's mtime.
    pub fn of(bytes: &[u8], mtime: Option<std::time::SystemTime>) -> Self {
        Self { hash: hash(bytes), size: bytes.len() as u64, mtime_ms: mtime_ms(mtime) }
    }
}

/// A modification time as milliseconds since the epoch.
pub fn mtime_ms(mtime: Option<std::time::SystemTime>) -> Option<u64> {
    mtime.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).and_then(|d| u64::try_from(d.as_millis()).ok())
}

/// The content hash used by the ledger.
pub fn hash(bytes: &[u8]) -> String {
    hash_hex(xxhash_rust::xxh3::xxh3_128(bytes))
}

/// How a 128-bit digest is written in the ledger (so a streamed hash matches [`hash`]).
pub fn hash_hex(digest: u128) -> String {
    format!("{digest:032x}")
}

/// The most files a ledger remembers.
pub const MAX_FILES: usize = 20_000;

/// Every file read (or written) in the session, by real path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileLedger {
    files: BTreeMap<PathBuf, FileState>,
    /// When each file was last recorded (a counter), to forget the oldest first.
    #[serde(skip)]
    recorded: HashMap<PathBuf, u64>,
    /// Files in the order recorded, each with its count then; an entry whose count is no
    /// longer the file's is stale (recorded again since).
    #[serde(skip)]
    order: VecDeque<(u64, PathBuf)>,
    #[serde(skip)]
    next: u64,
}

impl SessionSlot for FileLedger {
    const KEY: &'static str = "file_ledger";
    const SHARED: bool = true;

    /// Files read on either replica count as read (what this one recorded of a file wins).
    fn merge(&mut self, theirs: Self) {
        for (path, state) in theirs.files {
            if !self.files.contains_key(&path) {
                self.insert(&path, state);
            }
        }
    }
}

impl FileLedger {
    /// Records what was read or written.
    pub fn record(cx: &ToolContext, real_path: &Path, state: FileState) {
        cx.with_slot::<FileLedger, _>(|l| l.insert(real_path, state));
    }

    /// Drops what was recorded for a file that no longer exists (deleted or moved away).
    pub fn forget(cx: &ToolContext, real_path: &Path) {
        cx.with_slot::<FileLedger, _>(|l| {
            l.files.remove(real_path);
            l.recorded.remove(real_path);
        });
    }

    /// Records `state` for `path`, forgetting the files recorded longest ago past
    /// [`MAX_FILES`].
    fn insert(&mut self, path: &Path, state: FileState) {
        self.next += 1;
        self.files.insert(path.to_path_buf(), state);
        self.recorded.insert(path.to_path_buf(), self.next);
        self.order.push_back((self.next, path.to_path_buf()));
        while self.files.len() > MAX_FILES {
            match self.order.pop_front() {
                Some((n, old)) if self.recorded.get(&old) == Some(&n) => {
                    self.recorded.remove(&old);
                    self.files.remove(&old);
                }
                Some(_) => {}
                // Files restored from a saved session have no order: the first by path go.
                None => {
                    let first = self.files.keys().find(|p| !self.recorded.contains_key(*p)).cloned();
                    match first {
                        Some(first) => self.files.remove(&first),
                        None => break,
                    };
                }
            }
        }
        if self.order.len() > 2 * MAX_FILES {
            let recorded = &self.recorded;
            self.order.retain(|(n, p)| recorded.get(p) == Some(n));
        }
    }

    /// How many files are remembered.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether no file is remembered.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// What was recorded for the file, if anything.
    pub fn get(cx: &ToolContext, real_path: &Path) -> Option<FileState> {
        cx.with_slot::<FileLedger, _>(|l| l.files.get(real_path).cloned())
    }

    /// Checks that the file was read in this session and that `current` (its bytes now)
    /// is what was read. `shown` is the path as the model named it.
    pub fn check_fresh(cx: &ToolContext, real_path: &Path, shown: &Path, current: &[u8]) -> Result<(), ToolError> {
        match Self::get(cx, real_path) {
            None => Err(ToolError::failed(format!(
                "{} has not been read in this session; Read it first, then retry (this keeps you from overwriting content you have not seen)",
                shown.display()
            ))),
            Some(seen) if seen.hash != hash(current) => Err(ToolError::failed(format!(
                "{} has changed since you read it (by the user, a formatter or another tool); Read it again, then retry",
                shown.display()
            ))),
            Some(_) => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(n: usize) -> FileState {
        FileState::of(n.to_string().as_bytes(), None)
    }

    #[test]
    fn the_ledger_forgets_the_files_recorded_longest_ago() {
        let mut ledger = FileLedger::default();
        ledger.insert(Path::new("/keep"), state(0));
        for n in 0..MAX_FILES + 10 {
            ledger.insert(&PathBuf::from(format!("/f{n}")), state(n));
            if n % 1000 == 0 {
                ledger.insert(Path::new("/keep"), state(0)); // recorded again: stays
            }
        }
        assert_eq!(ledger.len(), MAX_FILES);
        assert!(ledger.files.contains_key(Path::new("/keep")));
        assert!(!ledger.files.contains_key(Path::new("/f0")) && ledger.files.contains_key(Path::new("/f20009")));
        assert!(ledger.order.len() <= 2 * MAX_FILES + 1 && ledger.recorded.len() == MAX_FILES);
    }
}
