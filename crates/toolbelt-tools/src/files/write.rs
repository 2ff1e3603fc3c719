//! `Write`: create a file, or replace one the model has read.
//!
//! Overwriting needs a prior Read in this session and no change since (by content hash), so
//! content the model has not seen is never lost. The write is atomic (temp file, fsync,
//! rename), keeps the file's permissions, encoding and BOM, creates parent directories, and
//! writes through a symlink inside the roots to its target.

use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{Access, Annotations, Category, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, human_size};

use crate::blocking::run_blocking;

use crate::files::support::change::{Target, load, noted, open_for_change, save, shown};
use crate::files::support::encoding::TextFormat;
use crate::files::support::roots::absolute;

/// Input of `Write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The file to write: an absolute path, or a path relative to the working directory.
    pub file_path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// The `Write` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Write;

const DESCRIPTION: &str = "Writes a file: creates it (with any missing parent directories) or replaces its whole \
content. To replace an existing file you must have read it with Read in this session, and it must not have changed \
since. Prefer Edit for changes to part of a file. The write is atomic and keeps the file's permissions and encoding.";

impl Tool for Write {
    type Input = WriteInput;
    const NAME: &'static str = "Write";

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(Self::NAME, DESCRIPTION)
            .title("Write a file")
            .aliases(["write_file", "file_write", "create_file"])
            .param_alias("path", "file_path")
            .param_alias("filePath", "file_path")
            .category(Category::Files)
            .tags(["fs", "write"])
            .annotations(Annotations { read_only: false, destructive: true, idempotent: true, open_world: false })
            .search_hint("write create save overwrite new file contents")
    }

    fn access(&self, input: &WriteInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().writes(absolute(cx, &input.file_path)))
    }

    async fn call(&self, input: WriteInput, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking(&cx, move |cx| write(&input, cx)).await
    }
}

fn write(input: &WriteInput, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let abs = absolute(cx, &input.file_path);
    let (ws, notes) = open_for_change(cx)?;
    let (loc, format, verb) = match load(&ws, cx, &abs)? {
        Target::Existing(file) => (file.real, file.format, "Updated"),
        Target::New(loc) => (loc, TextFormat::UTF8, "Created"),
    };
    let state = save(&ws, cx, &loc, &input.content, format)?;
    let lines = input.content.lines().count();
    let out = ToolOutput::text(format!(
        "{verb} {} ({}, {lines} line{}).",
        shown(cx, &abs),
        human_size(state.size),
        if lines == 1 { "" } else { "s" }
    ));
    Ok(noted(out, notes))
}
