//! `Write`: create a file, or replace one the model has read.
//!
//! Overwriting needs a prior Read in this session and no change since (by content hash), so
//! content the model has not seen is never lost. The write is atomic (temp file, fsync,
//! rename), keeps the file's permissions, encoding and BOM, creates parent directories, and
//! writes through a symlink inside the roots to its target.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec, human_size,
};

use crate::blocking::run_blocking;
use crate::language_servers::after_change::{Introduced, after_change, with_diagnostics};

use crate::files::support::change::{Target, load, open_for_change, save, with_notes};

use crate::formats::encoding::TextFormat;
use crate::fs::roots::absolute;
use crate::fs::shown::shown;

/// Input of `Write`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteInput {
    /// The file to write: an absolute path, or a path relative to the working directory.
    pub file_path: String,
    /// The whole new content of the file.
    pub content: String,
}

/// What `Write` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct WriteOutput {
    /// The file, as results name it (relative to the working directory when inside it).
    pub file_path: String,
    /// `create` when the file did not exist, `update` when its content was replaced.
    #[serde(rename = "type")]
    pub kind: WriteKind,
    /// Bytes written (in the file's encoding).
    pub bytes: u64,
    /// Lines in the new content.
    pub lines: usize,
    /// What was done first: a multi-file change a killed process left halfway, finished or
    /// undone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Errors a running language server reports that this change introduced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Introduced>,
}

/// Whether a write created the file or replaced it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// The file is new.
    Create,
    /// The file existed and now holds the new content.
    Update,
}

impl Render for WriteOutput {
    fn render(&self) -> Vec<Content> {
        let verb = match self.kind {
            WriteKind::Create => "Created",
            WriteKind::Update => "Updated",
        };
        let text = format!(
            "{verb} {} ({}, {} line{}).",
            self.file_path,
            human_size(self.bytes),
            self.lines,
            if self.lines == 1 { "" } else { "s" }
        );
        with_diagnostics(with_notes(text, &self.notes), &self.diagnostics)
    }
}

/// The `Write` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Write;

const DESCRIPTION: &str = "Writes a file: creates it (with any missing parent directories) or replaces its whole \
content. To replace an existing file you must have read it with Read in this session, and it must not have changed \
since. Prefer Edit for changes to part of a file. The write is atomic and keeps the file's permissions and encoding.";

impl Tool for Write {
    type Input = WriteInput;
    type Output = WriteOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Write", DESCRIPTION)
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

    async fn call(&self, input: WriteInput, cx: ToolContext) -> Result<WriteOutput, ToolError> {
        let path = absolute(&cx, &input.file_path);
        let mut out = run_blocking(&cx, move |cx| write(&input, cx)).await?;
        out.diagnostics = after_change(&cx, &[path], &[]).await;
        Ok(out)
    }
}

fn write(input: &WriteInput, cx: &ToolContext) -> Result<WriteOutput, ToolError> {
    let abs = absolute(cx, &input.file_path);
    let (ws, notes) = open_for_change(cx)?;
    let (loc, format, kind) = match load(&ws, cx, &abs)? {
        Target::Existing(file) => (file.real, file.format, WriteKind::Update),
        Target::New(loc) => (loc, TextFormat::UTF8, WriteKind::Create),
    };
    let state = save(&ws, cx, &loc, &input.content, format)?;
    let lines = input.content.lines().count();
    Ok(WriteOutput { file_path: shown(cx, &abs), kind, bytes: state.size, lines, notes, diagnostics: Vec::new() })
}
