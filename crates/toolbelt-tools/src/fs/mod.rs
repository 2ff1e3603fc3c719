//! File tools, and what they share: confinement to the workspace roots at open time
//! ([`workspace`]), the session's read ledger ([`ledger`]), text decoding that round-trips
//! every encoding byte-exact ([`text`]), and atomic writes ([`atomic`]).

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod apply_patch;
pub mod atomic;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod journal;
pub mod ledger;
pub mod links;
pub mod list_dir;
pub mod multi_edit;
pub mod notebook;
pub mod notebook_edit;
pub mod read;
pub mod read_stream;
pub mod regular;
pub mod replace;
pub mod search;
pub mod text;
pub mod textfile;
pub mod workspace;
pub mod write;

/// Every file tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![
        erase(read::Read),
        erase(write::Write),
        erase(edit::Edit),
        erase(multi_edit::MultiEdit),
        erase(notebook_edit::NotebookEdit),
        erase(grep::Grep),
        erase(glob::Glob),
        erase(list_dir::ListDir),
        erase(apply_patch::ApplyPatch),
    ]
}
