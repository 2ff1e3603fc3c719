//! `Edit`: replace an exact string in a file the model has read.
//!
//! Checks, in order: the file was read in this session and is unchanged since (content
//! hash) → `old_string` differs from `new_string` → it matches (line endings normalized) →
//! it matches once, unless `replace_all`. The file keeps its encoding, BOM and line endings;
//! the write is atomic; the ledger is updated so the next Edit works. The answer shows the
//! edited region, numbered, so the model can check its change without a new Read.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec};

use crate::blocking::run_blocking;
use crate::language_servers::after_change::{Introduced, after_change, with_diagnostics};

use crate::files::support::change::{Target, load, numbered, open_for_change, save, with_notes};

use crate::files::support::replace::{Miss, replace};
use crate::formats::encoding::TextFormat;
use crate::fs::roots::absolute;
use crate::fs::shown::shown;

/// Input of `Edit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditInput {
    /// The file to edit: an absolute path, or a path relative to the working directory.
    pub file_path: String,
    /// The exact text to replace, as Read shows it (without the line-number prefix). Include
    /// enough surrounding lines to make it unique. Empty only to create a new file.
    pub old_string: String,
    /// The text to put in its place (must differ from `old_string`).
    pub new_string: String,
    /// Replace every occurrence instead of exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

/// What `Edit` and `MultiEdit` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EditOutput {
    /// The file, as results name it (relative to the working directory when inside it).
    pub file_path: String,
    /// Whether the edit created the file.
    pub created: bool,
    /// Edits applied (1 for Edit).
    pub edits: usize,
    /// Occurrences replaced in all.
    pub replacements: usize,
    /// The lines that differ from before, in the new file (absent when nothing changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_lines: Option<LineRange>,
    /// What was done first: a multi-file change a killed process left halfway, finished or
    /// undone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Errors a running language server reports that this change introduced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Introduced>,
    /// The edited region as it reads now, with a few lines around it (absent when the file
    /// is empty).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snippet: Option<Snippet>,
}

/// Lines of a file as they read now, numbered like Read shows them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Snippet {
    /// The first line shown (1-based).
    pub start: usize,
    /// The last line shown.
    pub end: usize,
    /// The lines, numbered like `cat -n` (the line number, a tab, the line).
    pub text: String,
}

/// A range of lines, 1-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
pub struct LineRange {
    /// The first line.
    pub start: usize,
    /// The last line.
    pub end: usize,
}

impl Render for EditOutput {
    fn render(&self) -> Vec<Content> {
        let name = &self.file_path;
        let total = self.replacements;
        let what = if self.created {
            format!("Created {name}")
        } else if self.edits > 1 {
            format!("Applied {} edits to {name} ({total} replacement{})", self.edits, plural(total))
        } else {
            format!("Edited {name}: replaced {total} occurrence{}", plural(total))
        };
        let text = match &self.snippet {
            Some(Snippet { start, end, text }) => format!("{what}. Lines {start}-{end} now read:\n{text}"),
            None => format!("{what}."),
        };
        with_diagnostics(with_notes(text, &self.notes), &self.diagnostics)
    }
}

/// The lines of `after` that differ from `before`: everything between the longest common
/// run of lines at the start and the longest at the end.
fn changed_lines(before: &str, after: &str) -> Option<LineRange> {
    let (old, new): (Vec<&str>, Vec<&str>) = (before.lines().collect(), after.lines().collect());
    if before == after || new.is_empty() {
        return None;
    }
    let head = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let room = old.len().min(new.len()) - head;
    let tail = old.iter().rev().zip(new.iter().rev()).take_while(|(a, b)| a == b).count().min(room);
    let start = (head + 1).min(new.len());
    Some(LineRange { start, end: (new.len() - tail).max(start) })
}

/// The `Edit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Edit;

const DESCRIPTION: &str = "Replaces exact text in a file. Read the file first in this session. `old_string` must \
match the file exactly (indentation included; copy it from Read's output without the line-number prefix) and only \
once — add surrounding lines to make it unique, or set `replace_all` to change every occurrence. Line endings are \
matched either way and kept as the file has them. An empty `old_string` creates a new file with `new_string`. The \
answer shows the edited lines.";

/// Lines of context shown around an edit.
const CONTEXT: usize = 3;

impl Tool for Edit {
    type Input = EditInput;
    type Output = EditOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Edit", DESCRIPTION)
            .title("Edit a file")
            .aliases(["edit_file", "str_replace", "file_edit"])
            .param_alias("path", "file_path")
            .param_alias("filePath", "file_path")
            .param_alias("old_str", "old_string")
            .param_alias("new_str", "new_string")
            .category(Category::Files)
            .tags(["fs", "write", "edit"])
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("edit replace change modify string text in file")
    }

    fn access(&self, input: &EditInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().writes(absolute(cx, &input.file_path)))
    }

    async fn call(&self, input: EditInput, cx: ToolContext) -> Result<EditOutput, ToolError> {
        let path = absolute(&cx, &input.file_path);
        let mut out = run_blocking(&cx, move |cx| {
            let one = [Change { old: &input.old_string, new: &input.new_string, all: input.replace_all }];
            apply(cx, &input.file_path, &one)
        })
        .await?;
        out.diagnostics = after_change(&cx, &[path], &[]).await;
        Ok(out)
    }
}

/// One replacement to make.
pub struct Change<'a> {
    /// The text to find.
    pub old: &'a str,
    /// Its replacement.
    pub new: &'a str,
    /// Every occurrence.
    pub all: bool,
}

/// Applies changes in order, in memory, then writes once: all or nothing. Shared with
/// MultiEdit. A missing file may be created by a first change whose `old` is empty.
pub fn apply(cx: &ToolContext, file_path: &str, changes: &[Change<'_>]) -> Result<EditOutput, ToolError> {
    let abs = absolute(cx, file_path);
    let name = shown(cx, &abs);
    let (ws, notes) = open_for_change(cx)?;
    let multi = changes.len() > 1;
    let which = |i: usize| if multi { format!("edit {} of {}: ", i + 1, changes.len()) } else { String::new() };
    let unchanged = if multi { "; no edit was applied, the file is unchanged" } else { "" };

    let (loc, format, mut text, created) = match load(&ws, cx, &abs)? {
        Target::Existing(file) => (file.real, file.format, file.text, false),
        Target::New(loc) => match changes.first() {
            Some(first) if first.old.is_empty() => (loc, TextFormat::UTF8, String::new(), true),
            _ => {
                return Err(ToolError::failed(format!(
                    "{name} does not exist; check the path, or create it with an empty old_string (or Write)"
                )));
            }
        },
    };

    let before = text.clone();
    let mut first_edit: Option<(usize, usize)> = None;
    let mut total = 0;
    for (i, change) in changes.iter().enumerate() {
        // An empty old_string fills an empty (or new) file; elsewhere it is an error.
        let result = if change.old.is_empty() && text.is_empty() {
            let span = change.new.matches('\n').count() + 1;
            Ok(crate::files::support::replace::Replaced { text: change.new.to_string(), count: 1, first_line: 1, span })
        } else {
            replace(&text, change.old, change.new, change.all)
        };
        match result {
            Ok(r) => {
                text = r.text;
                total += r.count;
                first_edit.get_or_insert((r.first_line, r.span));
            }
            Err(miss @ Miss::NotFound(_)) => {
                return Err(ToolError::failed(format!(
                    "{}{}{unchanged}",
                    which(i),
                    miss.to_string().replacen("in the file", &format!("in {name}"), 1)
                )));
            }
            Err(miss) => return Err(ToolError::failed(format!("{}{miss} ({name}){unchanged}", which(i)))),
        }
    }

    save(&ws, cx, &loc, &text, format)?;
    let (line, span) = first_edit.unwrap_or((1, 1));
    let lines: Vec<&str> = text.lines().collect();
    let from = line.saturating_sub(CONTEXT).max(1);
    let to = (line + span - 1 + CONTEXT).min(lines.len());
    let snippet = if lines.is_empty() { String::new() } else { numbered(lines[from - 1..to].iter().copied(), from) };
    Ok(EditOutput {
        changed_lines: changed_lines(&before, &text),
        file_path: name,
        created,
        edits: changes.len(),
        replacements: total,
        notes,
        diagnostics: Vec::new(),
        snippet: (!snippet.is_empty()).then_some(Snippet { start: from, end: to, text: snippet }),
    })
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_cover_what_differs() {
        let range = |start, end| Some(LineRange { start, end });
        assert_eq!(changed_lines("a\nb\nc\n", "a\nB\nc\n"), range(2, 2));
        assert_eq!(changed_lines("a\nb\nc\n", "a\nb\nx\ny\nc\n"), range(3, 4));
        assert_eq!(changed_lines("a\nb\nc\n", "a\nc\n"), range(2, 2));
        assert_eq!(changed_lines("", "new\nfile\n"), range(1, 2));
        assert_eq!(changed_lines("same\n", "same\n"), None);
        assert_eq!(changed_lines("x\nx\n", "x\nx\nx\n"), range(3, 3));
    }
}
