//! `NotebookEdit`: replace, insert or delete one cell of a Jupyter notebook.
//!
//! Same parameters as Claude Code's (`notebook_path`, `cell_id`, `new_source`, `cell_type`,
//! `edit_mode`). The notebook must have been read in this session and be unchanged since
//! (judged by content), like any file edit. Only the edited cell's text changes: metadata,
//! other cells and their outputs, key order, indentation and the trailing newline are kept
//! byte for byte (see [`crate::files::support::notebook`]), and the file is replaced atomically.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Tool, ToolContext, ToolError, ToolOutput, ToolSpec, output_schema};

use crate::blocking::run_blocking;

use crate::files::support::change::{self, Target, shown};
use crate::files::support::notebook::{CellRef, CellType, Change, Notebook, render_cell};
use crate::files::support::roots::absolute;

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
    const NAME: &'static str = "NotebookEdit";

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(Self::NAME, DESCRIPTION)
            .title("Edit a notebook cell")
            .aliases(["notebook_edit", "edit_notebook"])
            .param_alias("file_path", "notebook_path")
            .param_alias("path", "notebook_path")
            .category(Category::Files)
            .tags(["fs", "write", "notebook"])
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("jupyter notebook ipynb cell edit insert delete replace markdown code")
            .output_schema(output_schema::<NotebookEditOutput>())
    }

    fn access(&self, input: &NotebookEditInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().writes(absolute(cx, &input.notebook_path)))
    }

    async fn call(&self, input: NotebookEditInput, cx: ToolContext) -> Result<ToolOutput, ToolError> {
        run_blocking(&cx, move |cx| edit(&input, cx)).await
    }
}

fn edit(input: &NotebookEditInput, cx: &ToolContext) -> Result<ToolOutput, ToolError> {
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
    Ok(change::noted(report(&nb, mode, &change, &name), notes))
}

fn report(nb: &Notebook, mode: EditMode, change: &Change, name: &str) -> ToolOutput {
    let n = nb.cells().len();
    let id = change.id.as_ref().map(|id| format!(" (id={id})")).unwrap_or_default();
    let count = format!("{n} cell{}", if n == 1 { "" } else { "s" });
    let i = change.index;
    let mut text = match mode {
        EditMode::Replace => {
            let mut s = format!("Replaced cell {i}{id} of {name}");
            if let Some(before) = &change.previous_type {
                s.push_str(&format!(", changing it from {before} to {}", change.cell_type));
            }
            match (change.cleared_outputs, change.cell_type.as_str()) {
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
                    let prev_id = nb.cell_id(prev).map(|p| format!(" (id={p})")).unwrap_or_default();
                    format!("after cell {prev}{prev_id}")
                }
            };
            format!(
                "Inserted a {} cell at index {i}{id} of {name}, {place}; the notebook now has {count}.",
                change.cell_type
            )
        }
        EditMode::Delete => {
            let moved = if i < n { " (the cells after it moved up one index)" } else { "" };
            format!(
                "Deleted cell {i}{id}, a {} cell, from {name}; the notebook now has {count}{moved}.",
                change.cell_type
            )
        }
    };
    if mode != EditMode::Delete
        && let Some(cell) = nb.cells().get(i)
    {
        text.push_str("\n\n");
        text.push_str(&render_cell(i, cell));
    }
    let structured = NotebookEditOutput {
        edit_mode: mode,
        cell_index: i,
        cell_id: change.id.clone(),
        cell_type: change.cell_type.clone(),
        cell_count: n,
    };
    let out = ToolOutput::text(text);
    match serde_json::to_value(&structured) {
        Ok(v) => out.with_structured(v),
        Err(_) => out,
    }
}
