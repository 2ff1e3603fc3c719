//! The session's record of what the model has read: a file may be overwritten or edited
//! only if it was read in this session and has not changed since.
//!
//! Change is judged by **content hash**, not mtime: a formatter or `touch` that rewrites a
//! file with the same bytes does not make it stale (a frequent complaint about other
//! agents). Files are keyed by their real path (symlinks resolved), so a read through a link
//! counts for an edit of its target.

use std::collections::BTreeMap;
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

/// Every file read (or written) in the session, by real path.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct FileLedger {
    files: BTreeMap<PathBuf, FileState>,
}

impl SessionSlot for FileLedger {
    const KEY: &'static str = "file_ledger";
}

impl FileLedger {
    /// Records what was read or written.
    pub fn record(cx: &ToolContext, real_path: &Path, state: FileState) {
        cx.with_slot::<FileLedger, _>(|l| {
            l.files.insert(real_path.to_path_buf(), state);
        });
    }

    /// Drops what was recorded for a file that no longer exists (deleted or moved away).
    pub fn forget(cx: &ToolContext, real_path: &Path) {
        cx.with_slot::<FileLedger, _>(|l| {
            l.files.remove(real_path);
        });
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
