//! `MultiEdit`: several replacements in one file, applied in order in memory and written
//! once — all or nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{Access, Annotations, Category, Tool, ToolContext, ToolError, ToolSpec};

use crate::blocking::run_blocking;
use crate::language_servers::after_change::after_change;

use crate::files::edit::{Change, EditOutput, apply};
use crate::fs::roots::absolute;

/// One replacement of a `MultiEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditOperation {
    /// The exact text to replace (as the file is after the edits before this one).
    pub old_string: String,
    /// The text to put in its place.
    pub new_string: String,
    /// Replace every occurrence instead of exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// Input of `MultiEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MultiEditInput {
    /// The file to edit: an absolute path, or a path relative to the working directory.
    pub file_path: String,
    /// The replacements, applied in order; each sees the result of the ones before it.
    #[schemars(length(min = 1))]
    pub edits: Vec<EditOperation>,
}

/// The `MultiEdit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct MultiEdit;

const DESCRIPTION: &str = "Makes several replacements in one file at once: `edits` are applied in order, each to the \
result of the ones before, and the file is written only if every one succeeds (all or nothing). Each edit follows \
Edit's rules (exact, unique unless `replace_all`). Read the file first in this session. To create a file, give a \
first edit with an empty `old_string`.";

impl Tool for MultiEdit {
    type Input = MultiEditInput;
    type Output = EditOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("MultiEdit", DESCRIPTION)
            .title("Edit a file in several places")
            .aliases(["multi_edit", "multiedit"])
            .param_alias("path", "file_path")
            .param_alias("filePath", "file_path")
            .category(Category::Files)
            .tags(["fs", "write", "edit"])
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("edit several replacements batch multiple changes one file")
    }

    fn access(&self, input: &MultiEditInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().writes(absolute(cx, &input.file_path)))
    }

    async fn call(&self, input: MultiEditInput, cx: ToolContext) -> Result<EditOutput, ToolError> {
        let path = absolute(&cx, &input.file_path);
        let mut out = run_blocking(&cx, move |cx| {
            let changes: Vec<Change<'_>> = input
                .edits
                .iter()
                .map(|e| Change { old: &e.old_string, new: &e.new_string, all: e.replace_all })
                .collect();
            apply(cx, &input.file_path, &changes)
        })
        .await?;
        out.diagnostics = after_change(&cx, &[path], &[]).await;
        Ok(out)
    }
}
