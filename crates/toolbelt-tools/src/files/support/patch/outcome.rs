//! What a patch did to each file, as `ApplyPatch` reports it: worked out by [`super::plan`],
//! returned in the tool's result.

use schemars::JsonSchema;
use serde::Serialize;

/// What happened to a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileStatus {
    /// Created.
    Added,
    /// Changed (or moved, see `moved_from`).
    Modified,
    /// Deleted.
    Deleted,
}

/// One file the patch changed.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PatchedFile {
    /// The path (relative to the working directory when inside it).
    pub path: String,
    /// What happened to it.
    pub status: FileStatus,
    /// The path it was moved from, for a move.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub moved_from: Option<String>,
    /// Lines added.
    pub added: usize,
    /// Lines removed.
    pub removed: usize,
}
