//! Where things are in a notebook's JSON text, so an edit rewrites only the cell it changes.
//!
//! Re-serializing a whole notebook would reformat every number, escape and key of cells the
//! edit never touched. Instead the text is scanned once for the byte span of each element of
//! `cells`, the indentation unit, the cells' own indentation and the line ending; an edit
//! then splices one serialized cell (in the file's style) into the original text. The text
//! passed in has already been parsed by serde_json, so the scanner only has to find
//! boundaries, not judge validity.

use std::ops::Range;

use serde::Serialize as _;
use serde_json::Value;

/// The byte layout of a notebook's text.
#[derive(Debug, Clone)]
pub(super) struct Layout {
    /// The span of each element of the `cells` array, in order.
    pub cells: Vec<Range<usize>>,
    /// The span between the `[` and `]` of the `cells` array.
    pub inner: Range<usize>,
    /// Whether the file is indented over several lines (otherwise it is on one line).
    pub pretty: bool,
    /// One level of indentation, as the file writes it (nbformat: one space).
    pub unit: String,
    /// The indentation of the line holding the `"cells"` key.
    pub key_indent: String,
    /// The indentation before a cell's `{`.
    pub cell_indent: String,
    /// The line ending the file uses.
    pub newline: &'static str,
}

impl Layout {
    /// Scans `text` (valid JSON whose root is an object). `None` when it has no `cells`
    /// array, or when the scan disagrees with the parser (which would be a bug).
    pub fn scan(text: &str) -> Option<Layout> {
        let mut s = Scan { b: text.as_bytes(), pos: 0 };
        s.ws();
        s.expect(b'{')?;
        let open = s.pos;
        let mut first_key = None;
        let mut cells = None;
        s.ws();
        if s.peek()? != b'}' {
            loop {
                s.ws();
                let key = s.string()?;
                first_key.get_or_insert(key.start);
                s.ws();
                s.expect(b':')?;
                s.ws();
                let value = s.value()?;
                // A repeated key: the parser keeps the last value, and so does this.
                if serde_json::from_str::<String>(&text[key.clone()]).ok()? == "cells" {
                    cells = Some((key.start, value));
                }
                s.ws();
                match s.next()? {
                    b',' => {}
                    b'}' => break,
                    _ => return None,
                }
            }
        }
        let (key_at, array) = cells?;
        let elements = elements(text, &array)?;
        let pretty = first_key.is_some_and(|k| text[open..k].contains('\n'));
        let unit = first_key.map(|k| line_indent(text, k).to_string()).unwrap_or_default();
        let key_indent = line_indent(text, key_at).to_string();
        let cell_indent = match elements.first() {
            Some(first) if pretty => line_indent(text, first.start).to_string(),
            _ => format!("{key_indent}{unit}"),
        };
        let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
        let inner = array.start + 1..array.end - 1;
        Some(Layout { cells: elements, inner, pretty, unit, key_indent, cell_indent, newline })
    }

    /// `cell` serialized in the file's style, as it would stand at a cell's position (no
    /// leading indentation: the splice point already has it).
    pub fn serialize(&self, cell: &Value) -> Option<String> {
        if !self.pretty {
            return serde_json::to_string(cell).ok();
        }
        let mut buf = Vec::new();
        let formatter = serde_json::ser::PrettyFormatter::with_indent(self.unit.as_bytes());
        let mut ser = serde_json::Serializer::with_formatter(&mut buf, formatter);
        cell.serialize(&mut ser).ok()?;
        let text = String::from_utf8(buf).ok()?;
        // JSON strings hold no raw line breaks, so every '\n' here is layout.
        Some(text.replace('\n', &format!("{}{}", self.newline, self.cell_indent)))
    }

    /// What separates two cells: taken from the file when it has two, else built.
    pub fn separator(&self, text: &str) -> String {
        match self.cells.as_slice() {
            [a, b, ..] => text[a.end..b.start].to_string(),
            _ if self.pretty => format!(",{}{}", self.newline, self.cell_indent),
            _ => ",".to_string(),
        }
    }

    /// The inside of a `cells` array holding only `cell` (already serialized).
    pub fn sole(&self, cell: &str) -> String {
        if self.pretty {
            format!("{nl}{}{cell}{nl}{}", self.cell_indent, self.key_indent, nl = self.newline)
        } else {
            cell.to_string()
        }
    }
}

/// The spans of the elements of the array at `array`.
fn elements(text: &str, array: &Range<usize>) -> Option<Vec<Range<usize>>> {
    let mut s = Scan { b: &text.as_bytes()[..array.end], pos: array.start };
    s.expect(b'[')?;
    let mut out = Vec::new();
    s.ws();
    if s.peek()? == b']' {
        return Some(out);
    }
    loop {
        s.ws();
        out.push(s.value()?);
        s.ws();
        match s.next()? {
            b',' => {}
            b']' => return Some(out),
            _ => return None,
        }
    }
}

/// The whitespace from the start of the line holding `at` up to `at`, when only whitespace
/// precedes it on that line; empty otherwise.
fn line_indent(text: &str, at: usize) -> &str {
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let before = &text[start..at];
    if before.chars().all(|c| c == ' ' || c == '\t') { before } else { "" }
}

/// A cursor over JSON bytes that finds value boundaries.
struct Scan<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Scan<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.next()? == c).then_some(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// A string starting at the cursor, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        self.expect(b'"')?;
        loop {
            match self.next()? {
                b'\\' => self.pos += 1,
                b'"' => return Some(start..self.pos),
                _ => {}
            }
        }
    }

    /// Any value starting at the cursor.
    fn value(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth = depth.checked_sub(1)?,
                        _ => {}
                    }
                    self.pos += 1;
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {
                while !matches!(self.peek(), None | Some(b',' | b']' | b'}' | b' ' | b'\t' | b'\n' | b'\r')) {
                    self.pos += 1;
                }
            }
        }
        (self.pos > start).then_some(start..self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_cells_indent_and_line_ending() {
        let text = "{\n \"cells\": [\n  {\"a\": \"]}\\\"\"},\n  [1, {\"b\": []}]\n ],\n \"x\": 1\n}\n";
        let l = Layout::scan(text).unwrap();
        assert_eq!(l.cells.len(), 2);
        assert_eq!(&text[l.cells[0].clone()], "{\"a\": \"]}\\\"\"}");
        assert_eq!(&text[l.cells[1].clone()], "[1, {\"b\": []}]");
        assert!(l.pretty);
        assert_eq!((l.unit.as_str(), l.key_indent.as_str(), l.cell_indent.as_str(), l.newline), (" ", " ", "  ", "\n"));
        assert_eq!(l.separator(text), ",\n  ");

        let crlf = "{\r\n\t\"cells\": []\r\n}";
        let l = Layout::scan(crlf).unwrap();
        assert_eq!((l.unit.as_str(), l.cell_indent.as_str(), l.newline), ("\t", "\t\t", "\r\n"));
        assert!(l.cells.is_empty());
        assert_eq!(l.sole("{}"), "\r\n\t\t{}\r\n\t");

        let compact = r#"{"nbformat":4,"cells":[{"x":1},{"y":2}]}"#;
        let l = Layout::scan(compact).unwrap();
        assert!(!l.pretty);
        assert_eq!(l.separator(compact), ",");
        assert_eq!(l.serialize(&serde_json::json!({"k": [1]})).unwrap(), r#"{"k":[1]}"#);
    }

    #[test]
    fn serializes_a_cell_at_its_depth() {
        let text = "{\n  \"cells\": [\n    {}\n  ]\n}";
        let l = Layout::scan(text).unwrap();
        let cell = serde_json::json!({"a": ["x\n", "y"], "b": {}});
        assert_eq!(
            l.serialize(&cell).unwrap(),
            "{\n      \"a\": [\n        \"x\\n\",\n        \"y\"\n      ],\n      \"b\": {}\n    }"
        );
    }

    #[test]
    fn takes_the_last_of_repeated_keys_and_refuses_a_missing_array() {
        let text = r#"{"cells": [1], "cells": [2, 3]}"#;
        assert_eq!(Layout::scan(text).unwrap().cells.len(), 2);
        assert!(Layout::scan(r#"{"worksheets": []}"#).is_none());
        assert!(Layout::scan(r#"{"cells": 3}"#).is_none());
    }
}
