//! File tools: `Read`, `Write`, `Edit`, `MultiEdit`, `NotebookEdit`, `ApplyPatch`, `ListDir`,
//! one file each. What they share is in [`support`]: the session's read ledger
//! ([`support::ledger`]), atomic writes ([`support::atomic`]) and the journal that makes a
//! multi-file change crash-safe ([`support::journal`]). Confinement to the workspace roots at
//! open time is below every family, in [`crate::fs`]; text decoding that round-trips every
//! encoding byte-exact, in [`crate::formats`].
use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod apply_patch;
pub mod edit;
pub mod list_dir;
pub mod multi_edit;
pub mod notebook_edit;
pub mod read;
pub(crate) mod support;
pub mod write;

pub use support::atomic::write as write_atomic;
pub use support::journal::JournalDir;
pub use support::ledger::{FileLedger, FileState, hash as content_hash};

/// Every file tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![
        erase(read::Read),
        erase(write::Write),
        erase(edit::Edit),
        erase(multi_edit::MultiEdit),
        erase(notebook_edit::NotebookEdit),
        erase(list_dir::ListDir),
        erase(apply_patch::ApplyPatch),
    ]
}
