//! The job store's errors: each names the store and what to do.

use std::path::{Path, PathBuf};

use toolbelt_core::ToolError;

use crate::sqlite::{self, SqlKind};

/// Why the job store failed. Every message names the store and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file or its directory could not be created, opened or secured.
    #[error("cannot open the job store {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a job store, is damaged, or was written by a newer toolbelt.
    #[error("the job store {} cannot be used ({detail}); move it aside, and a new, empty one starts in its place", .path.display())]
    Unusable {
        /// The file.
        path: PathBuf,
        /// What was found wrong.
        detail: String,
    },
    /// Another process held it locked for too long.
    #[error("the job store {} is busy: another process is changing it; try again", .path.display())]
    Busy {
        /// The file.
        path: PathBuf,
    },
    /// The shared database failed (unreachable, or a server error).
    #[error("the durable jobs cannot be used: {0}")]
    Shared(#[from] crate::storage::StorageError),
    /// Any other database failure.
    #[error("the job store {} failed: {source}", .path.display())]
    Sql {
        /// The file (`:memory:` for session jobs).
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl From<StoreError> for ToolError {
    fn from(e: StoreError) -> Self {
        ToolError::failed(e.to_string())
    }
}

/// What an SQLite error on the store at `path` means.
pub(super) fn sql_error(path: &Path, e: rusqlite::Error) -> StoreError {
    match sqlite::kind_of(&e) {
        SqlKind::Busy => StoreError::Busy { path: path.to_path_buf() },
        SqlKind::Corrupt => StoreError::Unusable { path: path.to_path_buf(), detail: e.to_string() },
        SqlKind::Other => StoreError::Sql { path: path.to_path_buf(), source: e },
    }
}
