//! Jupyter notebooks (`.ipynb`): parsing, rendering for `Read`, and the cell edits
//! `NotebookEdit` makes. Pure: text in, text out, no I/O.
//!
//! An edit changes one cell and nothing else. The notebook is parsed into a
//! [`serde_json::Value`] (key order kept) to decide what the edited cell becomes, and the
//! file's text is then changed only inside that cell's span (see [`layout`]): other cells,
//! the metadata, `nbformat`/`nbformat_minor`, the indentation and the trailing newline stay
//! byte for byte. Cells are stored as nbformat writes them — `source` as a list of lines
//! each ending in `\n` but the last, keys in the cell's existing order (sorted, as nbformat
//! sorts them, for new cells) — so a later save from Jupyter produces no spurious diff.
//! Every edit is checked by re-parsing the result and comparing it with the intended
//! document before it is handed back.

mod layout;
mod render;

use std::hash::{BuildHasher as _, Hasher as _};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use layout::Layout;
pub use render::{render_cell, render_for_read};

/// The kind of cell an edit creates or converts to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
// A top-level type lets the validator read an explicit `null` as "left out".
#[schemars(extend("type" = "string"))]
pub enum CellType {
    /// A code cell (has outputs and an execution count).
    Code,
    /// A Markdown cell.
    Markdown,
}

impl CellType {
    /// The name nbformat uses.
    pub fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

/// Which cell: its id, or its 0-based position.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(untagged)]
#[schemars(extend("type" = ["integer", "string"]))]
pub enum CellRef {
    /// A 0-based index; negative counts from the end (-1 is the last cell).
    Index(i64),
    /// A cell id; a numeric string or `cell-N` is read as an index when no cell has that id.
    Id(String),
}

/// What an edit did, for the tool's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The index of the edited, inserted or deleted cell.
    pub index: usize,
    /// Its id, when it has one.
    pub id: Option<String>,
    /// Its type after the edit (before, for a deletion).
    pub cell_type: String,
    /// Its type before the edit, when a replacement changed it.
    pub previous_type: Option<String>,
    /// How many outputs a replacement cleared.
    pub cleared_outputs: usize,
}

/// A parsed notebook and the text it came from.
#[derive(Debug, Clone)]
pub struct Notebook {
    text: String,
    value: Value,
    layout: Layout,
}

impl Notebook {
    /// Parses a notebook's text (a leading byte-order mark is the caller's to strip). The
    /// error says what is wrong, for the model.
    pub fn parse(text: &str) -> Result<Self, String> {
        let value = render::parse_json(text)?;
        render::cells_of(&value)?;
        if let Some(major) = value.get("nbformat").and_then(Value::as_u64)
            && major != 4
        {
            return Err(format!(
                "the notebook is in nbformat {major}; only nbformat 4 notebooks can be edited. Convert it first \
                 (`python3 -c \"import nbformat as n, sys; n.write(n.read(sys.argv[1], as_version=4), sys.argv[1])\" FILE`)"
            ));
        }
        let Some(Value::Array(cells)) = value.get("cells") else {
            return Err("the notebook has no `cells` array".to_string());
        };
        if let Some(i) = cells.iter().position(|c| !c.is_object()) {
            return Err(format!(
                "cell {i} of the notebook is not a JSON object, so the notebook cannot be edited safely; fix the file first"
            ));
        }
        let layout = Layout::scan(text).filter(|l| l.cells.len() == cells.len()).ok_or_else(|| {
            "the notebook's cells could not be located in its text; the file may be malformed".to_string()
        })?;
        Ok(Self { text: text.to_string(), value, layout })
    }

    /// The notebook's text, with every edit made so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The cells.
    pub fn cells(&self) -> &[Value] {
        self.value.get("cells").and_then(Value::as_array).map_or(&[], Vec::as_slice)
    }

    /// The id of cell `index`, when it has one.
    pub fn cell_id(&self, index: usize) -> Option<String> {
        self.cells().get(index).and_then(|c| c.get("id")).and_then(Value::as_str).map(str::to_string)
    }

    /// Resolves a cell reference to an index. The error lists what would have matched.
    pub fn find(&self, cell: &CellRef) -> Result<usize, String> {
        match cell {
            CellRef::Index(i) => self.index(*i),
            CellRef::Id(id) => {
                if let Some(i) = self.cells().iter().position(|c| c.get("id").and_then(Value::as_str) == Some(id)) {
                    return Ok(i);
                }
                let t = id.trim();
                let numeric = t.parse::<i64>().ok().or_else(|| t.strip_prefix("cell-").and_then(|n| n.parse().ok()));
                match numeric {
                    Some(i) => self.index(i),
                    None => Err(self.unknown_id(id)),
                }
            }
        }
    }

    fn index(&self, i: i64) -> Result<usize, String> {
        let n = self.cells().len();
        let resolved = if i < 0 { i64::try_from(n).ok().map(|n| n + i) } else { Some(i) };
        match resolved.and_then(|r| usize::try_from(r).ok()).filter(|r| *r < n) {
            Some(r) => Ok(r),
            None if n == 0 => Err(format!("cell index {i} is out of range: the notebook has no cells")),
            None => Err(format!(
                "cell index {i} is out of range: the notebook has {n} cell{} (indexes 0 to {})",
                if n == 1 { "" } else { "s" },
                n - 1
            )),
        }
    }

    fn unknown_id(&self, id: &str) -> String {
        let n = self.cells().len();
        let ids: Vec<String> = self.cells().iter().filter_map(|c| c.get("id")?.as_str().map(str::to_string)).collect();
        if ids.is_empty() {
            return match n {
                0 => format!("no cell has id `{id}`: the notebook has no cells"),
                _ => format!(
                    "no cell has id `{id}`: this notebook's cells have no ids; use a 0-based index from 0 to {}",
                    n - 1
                ),
            };
        }
        const SHOWN: usize = 40;
        let mut list: Vec<String> = ids.iter().take(SHOWN).enumerate().map(|(i, x)| format!("{i}:{x}")).collect();
        if ids.len() > SHOWN {
            list.push(format!("… {} more", ids.len() - SHOWN));
        }
        format!(
            "no cell has id `{id}`; the cells are (index:id) {}. Use one of these ids or a 0-based index from 0 to {}",
            list.join(", "),
            n - 1
        )
    }

    /// Replaces the source of cell `index`, changing its type when `cell_type` says so. A
    /// code cell's outputs and execution count are cleared.
    pub fn replace(&mut self, index: usize, source: &str, cell_type: Option<CellType>) -> Result<Change, String> {
        let needs_id = self.needs_ids();
        let taken = self.ids();
        let old = self.cells().get(index).cloned().ok_or_else(|| format!("cell {index} does not exist"))?;
        let Value::Object(mut cell) = old else { return Err(format!("cell {index} is not a JSON object")) };
        let sorted = is_sorted(&cell);
        let before = cell.get("cell_type").and_then(Value::as_str).unwrap_or("code").to_string();
        let after = match cell_type {
            Some(t) => t.as_str().to_string(),
            None => before.clone(),
        };
        let cleared_outputs = cell.get("outputs").and_then(Value::as_array).map_or(0, Vec::len);
        let keep_string = cell.get("source").is_some_and(Value::is_string);
        cell.insert("cell_type".into(), Value::from(after.as_str()));
        cell.insert("source".into(), source_value(source, keep_string));
        if !cell.get("metadata").is_some_and(Value::is_object) {
            cell.insert("metadata".into(), json!({}));
        }
        if after == "code" {
            cell.insert("execution_count".into(), Value::Null);
            cell.insert("outputs".into(), json!([]));
            cell.shift_remove("attachments");
        } else {
            cell.shift_remove("execution_count");
            cell.shift_remove("outputs");
        }
        if needs_id && !cell.get("id").is_some_and(Value::is_string) {
            cell.insert("id".into(), Value::from(new_id(&taken, &self.text)));
        }
        if sorted {
            cell.sort_keys();
        }
        let id = cell.get("id").and_then(Value::as_str).map(str::to_string);
        let serialized = self.layout.serialize(&Value::Object(cell.clone())).ok_or_else(serialize_failed)?;
        let span = self.layout.cells[index].clone();
        let mut expected = self.value.clone();
        set_cells(&mut expected, |cells| cells[index] = Value::Object(cell));
        self.splice(span, &serialized, expected)?;
        let previous_type = (before != after).then_some(before);
        Ok(Change { index, id, cell_type: after, previous_type, cleared_outputs })
    }

    /// Inserts a new cell so that it becomes cell `at` (0 = first; the cell count = last).
    pub fn insert(&mut self, at: usize, source: &str, cell_type: CellType) -> Result<Change, String> {
        let n = self.cells().len();
        if at > n {
            return Err(format!("cannot insert at index {at}: the notebook has {n} cells"));
        }
        let mut cell = Map::new();
        cell.insert("cell_type".into(), Value::from(cell_type.as_str()));
        if cell_type == CellType::Code {
            cell.insert("execution_count".into(), Value::Null);
        }
        let id = self.needs_ids().then(|| new_id(&self.ids(), &self.text));
        if let Some(id) = &id {
            cell.insert("id".into(), Value::from(id.as_str()));
        }
        cell.insert("metadata".into(), json!({}));
        if cell_type == CellType::Code {
            cell.insert("outputs".into(), json!([]));
        }
        let strings = n > 0 && self.cells().iter().all(|c| c.get("source").is_some_and(Value::is_string));
        cell.insert("source".into(), source_value(source, strings));
        let serialized = self.layout.serialize(&Value::Object(cell.clone())).ok_or_else(serialize_failed)?;
        let separator = self.layout.separator(&self.text);
        let (span, replacement) = match (n, self.layout.cells.get(at)) {
            (0, _) => (self.layout.inner.clone(), self.layout.sole(&serialized)),
            (_, Some(next)) => (next.start..next.start, format!("{serialized}{separator}")),
            (_, None) => {
                let end = self.layout.cells[n - 1].end;
                (end..end, format!("{separator}{serialized}"))
            }
        };
        let mut expected = self.value.clone();
        set_cells(&mut expected, |cells| cells.insert(at, Value::Object(cell)));
        self.splice(span, &replacement, expected)?;
        Ok(Change { index: at, id, cell_type: cell_type.as_str().to_string(), previous_type: None, cleared_outputs: 0 })
    }

    /// Deletes cell `index`.
    pub fn delete(&mut self, index: usize) -> Result<Change, String> {
        let cells = &self.layout.cells;
        let span = match (cells.len(), index) {
            (n, i) if i >= n => return Err(format!("cell {index} does not exist")),
            (1, _) => self.layout.inner.clone(),
            (n, i) if i + 1 < n => cells[i].start..cells[i + 1].start,
            (_, i) => cells[i - 1].end..cells[i].end,
        };
        let cell_type = self.cells()[index].get("cell_type").and_then(Value::as_str).unwrap_or("code").to_string();
        let id = self.cell_id(index);
        let mut expected = self.value.clone();
        set_cells(&mut expected, |cells| {
            cells.remove(index);
        });
        self.splice(span, "", expected)?;
        Ok(Change { index, id, cell_type, previous_type: None, cleared_outputs: 0 })
    }

    /// Whether new cells get ids: nbformat 4.5 and later require them; an older notebook
    /// gets them only when its cells already have some.
    fn needs_ids(&self) -> bool {
        let major = self.value.get("nbformat").and_then(Value::as_u64).unwrap_or(4);
        let minor = self.value.get("nbformat_minor").and_then(Value::as_u64).unwrap_or(0);
        major > 4 || (major == 4 && minor >= 5) || self.cells().iter().any(|c| c.get("id").is_some())
    }

    fn ids(&self) -> Vec<String> {
        self.cells().iter().filter_map(|c| c.get("id")?.as_str().map(str::to_string)).collect()
    }

    /// Replaces `span` of the text and checks the result parses to `expected`.
    fn splice(&mut self, span: std::ops::Range<usize>, replacement: &str, expected: Value) -> Result<(), String> {
        let mut text = String::with_capacity(self.text.len() + replacement.len());
        text.push_str(&self.text[..span.start]);
        text.push_str(replacement);
        text.push_str(&self.text[span.end..]);
        let edited = Self::parse(&text)
            .map_err(|e| format!("the edit produced an invalid notebook ({e}); nothing was written"))?;
        if edited.value != expected {
            return Err("the edit did not produce the intended notebook; nothing was written".to_string());
        }
        *self = edited;
        Ok(())
    }
}

fn set_cells(doc: &mut Value, f: impl FnOnce(&mut Vec<Value>)) {
    if let Some(Value::Array(cells)) = doc.get_mut("cells") {
        f(cells);
    }
}

fn serialize_failed() -> String {
    "the edited cell could not be serialized; nothing was written".to_string()
}

fn is_sorted(map: &Map<String, Value>) -> bool {
    map.keys().zip(map.keys().skip(1)).all(|(a, b)| a <= b)
}

/// `source` as nbformat stores it: a list of lines, each keeping its line break (split as
/// Python's `str.splitlines(keepends=True)` does), or one string when `as_string`.
pub fn source_value(source: &str, as_string: bool) -> Value {
    if as_string {
        return Value::from(source);
    }
    Value::Array(split_lines(source).into_iter().map(Value::from).collect())
}

/// Python's `str.splitlines(keepends=True)`: what nbformat uses to store multi-line text.
pub fn split_lines(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end = match c {
            '\r' if chars.peek().is_some_and(|(_, n)| *n == '\n') => {
                chars.next();
                i + 2
            }
            '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{1c}' | '\u{1d}' | '\u{1e}' | '\u{85}' | '\u{2028}' | '\u{2029}' => {
                i + c.len_utf8()
            }
            _ => continue,
        };
        out.push(&text[start..end]);
        start = end;
    }
    if start < text.len() {
        out.push(&text[start..]);
    }
    out
}

/// A new cell id: 8 hex digits as nbformat makes them, unique among `taken`.
fn new_id(taken: &[String], salt: &str) -> String {
    let mut attempt = 0u64;
    loop {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write(salt.as_bytes());
        h.write_u64(attempt);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        h.write_u128(nanos);
        let id = format!("{:08x}", h.finish() as u32);
        if !taken.contains(&id) {
            return id;
        }
        attempt += 1;
    }
}

#[cfg(test)]
/// Whether `id` is a valid nbformat cell id (1–64 characters of `[A-Za-z0-9_-]`).
pub fn is_valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests;
