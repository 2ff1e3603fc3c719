//! `NotebookEdit`: replace, insert or delete one cell of a Jupyter notebook.
//!
//! Same parameters as Claude Code's (`notebook_path`, `cell_id`, `new_source`, `cell_type`,
//! `edit_mode`). The notebook must have been read in this session and be unchanged since
//! (judged by content), like any file edit. Only the edited cell's text changes: metadata,
//! other cells and their outputs, key order, indentation and the trailing newline are kept
//! byte for byte (see [`crate::files::support::notebook`]), and the file is replaced atomically.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec};

use crate::blocking::run_blocking;

use crate::files::support::change::{self, Target, with_notes};

use crate::files::support::notebook::{CellRef, CellType, Change, Notebook, render_cell};
use crate::fs::roots::absolute;
use crate::fs::shown::shown;

/// What to do to the cell.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A top-level type lets the validator read an explicit `null` as "left out".
#[schemars(extend("type" = "string"))]
pub enum EditMode {
    /// Replace the cell's source (the default).
    #[default]
    Replace,
    /// Insert a new cell after `cell_id` (at the start when `cell_id` is left out).
    Insert,
    /// Delete the cell.
    Delete,
}

impl EditMode {
    fn as_str(self) -> &'static str {
        match self {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

/// Input of `NotebookEdit`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NotebookEditInput {
    /// The notebook to edit (a .ipynb file): an absolute path, or a path relative to the
    /// working directory.
    pub notebook_path: String,
    /// The cell to edit: its id as Read shows it, or its 0-based index (a number or a
    /// numeric string; -1 is the last cell). For `insert`, the new cell goes right after
    /// this cell; leave it out to insert at the start.
    pub cell_id: Option<CellRef>,
    /// The cell's new source, in full (for `replace` and `insert`).
    pub new_source: Option<String>,
    /// `code` or `markdown`. Required for `insert`; for `replace` it changes the cell's
    /// type (left out, the type stays).
    pub cell_type: Option<CellType>,
    /// `replace` (the default), `insert` or `delete`.
    pub edit_mode: Option<EditMode>,
}

/// The structured result of `NotebookEdit`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct NotebookEditOutput {
    /// What was done: `replace`, `insert` or `delete`.
    pub edit_mode: EditMode,
    /// The 0-based index of the edited, inserted or deleted cell.
    pub cell_index: usize,
    /// Its id, when the notebook's cells have ids.
    pub cell_id: Option<String>,
    /// Its type.
    pub cell_type: String,
    /// How many cells the notebook has now.
    pub cell_count: usize,
    /// The notebook, relative to the working directory when inside it.
    pub notebook: String,
    /// The cell's type before a replacement changed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_type: Option<String>,
    /// How many outputs a replacement cleared.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub cleared_outputs: usize,
    /// The id of the cell an inserted one follows, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_cell_id: Option<String>,
    /// The edited or inserted cell as Read shows it (absent after a deletion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cell: Option<String>,
    /// What was done first: a multi-file change a killed process left halfway, finished or
    /// undone.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Render for NotebookEditOutput {
    /// What was done to which cell and how many cells there are now, then the cell as it is
    /// now (unless deleted); each note after, in a block of its own.
    fn render(&self) -> Vec<Content> {
        let (i, name, n) = (self.cell_index, &self.notebook, self.cell_count);
        let id = self.cell_id.as_ref().map(|id| format!(" (id={id})")).unwrap_or_default();
        let count = format!("{n} cell{}", if n == 1 { "" } else { "s" });
        let mut text = match self.edit_mode {
            EditMode::Replace => {
                let mut s = format!("Replaced cell {i}{id} of {name}");
                if let Some(before) = &self.previous_type {
                    s.push_str(&format!(", changing it from {before} to {}", self.cell_type));
                }
                match (self.cleared_outputs, self.cell_type.as_str()) {
                    (0, _) => {}
                    (1, "code") => s.push_str("; its output was cleared"),
                    (1, _) => s.push_str("; its output was removed"),
                    (k, "code") => s.push_str(&format!("; its {k} outputs were cleared")),
                    (k, _) => s.push_str(&format!("; its {k} outputs were removed")),
                }
                s.push('.');
                s
            }
            EditMode::Insert => {
                let place = match i.checked_sub(1) {
                    None => "at the start".to_string(),
                    Some(prev) => {
                        let prev_id = self.previous_cell_id.as_ref().map(|p| format!(" (id={p})")).unwrap_or_default();
                        format!("after cell {prev}{prev_id}")
                    }
                };
                format!(
                    "Inserted a {} cell at index {i}{id} of {name}, {place}; the notebook now has {count}.",
                    self.cell_type
                )
            }
            EditMode::Delete => {
                let moved = if i < n { " (the cells after it moved up one index)" } else { "" };
                format!(
                    "Deleted cell {i}{id}, a {} cell, from {name}; the notebook now has {count}{moved}.",
                    self.cell_type
                )
            }
        };
        if let Some(cell) = &self.cell {
            text.push_str("\n\n");
            text.push_str(cell);
        }
        with_notes(text, &self.notes)
    }
}

/// The `NotebookEdit` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct NotebookEdit;

const DESCRIPTION: &str = "Edits one cell of a Jupyter notebook (.ipynb). `edit_mode`: `replace` (default) sets \
a cell's source, `insert` adds a new cell, `delete` removes one. Name the cell with `cell_id`: its id as Read shows \
it, or its 0-based index. For `insert` the new cell goes right after `cell_id` (at the start when it is left out) \
and `cell_type` (`code` or `markdown`) is required; for `replace`, `cell_type` changes the cell's type. Replacing a \
code cell clears its outputs and execution count. Read the notebook before editing it; everything but the edited \
cell is kept byte for byte.";

impl Tool for NotebookEdit {
    type Input = NotebookEditInput;
    type Output = NotebookEditOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("NotebookEdit", DESCRIPTION)
            .title("Edit a notebook cell")
            .aliases(["notebook_edit", "edit_notebook"])
            .param_alias("file_path", "notebook_path")
            .param_alias("path", "notebook_path")
            .category(Category::Files)
            .tags(["fs", "write", "notebook"])
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("jupyter notebook ipynb cell edit insert delete replace markdown code")
    }

    fn access(&self, input: &NotebookEditInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().writes(absolute(cx, &input.notebook_path)))
    }

    async fn call(&self, input: NotebookEditInput, cx: ToolContext) -> Result<NotebookEditOutput, ToolError> {
        run_blocking(&cx, move |cx| edit(&input, cx)).await
    }
}

fn edit(input: &NotebookEditInput, cx: &ToolContext) -> Result<NotebookEditOutput, ToolError> {
    let abs = absolute(cx, &input.notebook_path);
    let name = shown(cx, &abs);
    if !abs.extension().is_some_and(|e| e.eq_ignore_ascii_case("ipynb")) {
        return Err(ToolError::failed(format!(
            "{name} is not a Jupyter notebook (.ipynb); NotebookEdit changes .ipynb files only, use Edit for other files"
        )));
    }
    let mode = input.edit_mode.unwrap_or_default();
    let source = match (mode, &input.new_source) {
        (EditMode::Delete, _) => "",
        (_, Some(s)) => s.as_str(),
        (_, None) => {
            return Err(ToolError::failed(format!(
                "edit_mode `{}` needs `new_source`: the cell's full source (an empty string for an empty cell)",
                mode.as_str()
            )));
        }
    };
    let cell_type = match (mode, input.cell_type) {
        (EditMode::Insert, None) => {
            return Err(ToolError::failed(
                "edit_mode `insert` needs `cell_type`: `code` or `markdown`, the type of the new cell",
            ));
        }
        (_, t) => t,
    };
    if mode != EditMode::Insert && input.cell_id.is_none() {
        return Err(ToolError::failed(format!(
            "edit_mode `{}` needs `cell_id`: the id of the cell as Read shows it, or its 0-based index",
            mode.as_str()
        )));
    }

    let (ws, notes) = change::open_for_change(cx)?;
    let loaded = match change::load(&ws, cx, &abs)? {
        Target::Existing(loaded) => loaded,
        Target::New(_) => {
            return Err(ToolError::failed(format!(
                "{name} does not exist; check the path (Glob finds files by name), or create the notebook with Write first"
            )));
        }
    };
    let failed = |e: String| ToolError::failed(format!("{name}: {e}"));
    let mut nb = Notebook::parse(&loaded.text).map_err(failed)?;
    let target = input.cell_id.as_ref().map(|c| nb.find(c)).transpose().map_err(failed)?;
    let change = match (mode, target) {
        (EditMode::Replace, Some(i)) => nb.replace(i, source, cell_type),
        (EditMode::Delete, Some(i)) => nb.delete(i),
        (EditMode::Insert, after) => match cell_type {
            Some(t) => nb.insert(after.map_or(0, |i| i + 1), source, t),
            None => Err("an inserted cell needs a cell_type".to_string()),
        },
        (_, None) => Err("a cell_id is needed".to_string()),
    }
    .map_err(failed)?;
    if cx.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    change::save(&ws, cx, &loaded.real, nb.text(), loaded.format)?;
    Ok(report(&nb, mode, change, name, notes))
}

/// The result of an edit that was saved: `nb` is the notebook as it is now.
fn report(nb: &Notebook, mode: EditMode, change: Change, notebook: String, notes: Vec<String>) -> NotebookEditOutput {
    let i = change.index;
    let previous_cell_id = match mode {
        EditMode::Insert => i.checked_sub(1).and_then(|prev| nb.cell_id(prev)),
        EditMode::Replace | EditMode::Delete => None,
    };
    let cell = match mode {
        EditMode::Delete => None,
        EditMode::Replace | EditMode::Insert => nb.cells().get(i).map(|cell| render_cell(i, cell)),
    };
    NotebookEditOutput {
        edit_mode: mode,
        cell_index: i,
        cell_id: change.id,
        cell_type: change.cell_type,
        cell_count: nb.cells().len(),
        notebook,
        previous_type: change.previous_type,
        cleared_outputs: change.cleared_outputs,
        previous_cell_id,
        cell,
        notes,
    }
}
