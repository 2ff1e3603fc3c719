//! A file's text split into lines that remember their endings, and the rebuilding of that
//! text once hunks are placed.
//!
//! Lines are compared without their ending (so CRLF files match LF patches); untouched lines
//! are copied back with their own ending, added lines get the file's dominant ending, and
//! whether the file ends with a newline is kept as it was.

use std::cell::OnceCell;

use super::parse::{Hunk, Kind};
use crate::formats::encoding::LineEnding;

/// A file's text as lines.
pub struct Doc<'a> {
    text: &'a str,
    /// `(start, content end, end)` byte offsets of each line.
    spans: Vec<(usize, usize, usize)>,
    trailing_newline: bool,
    ending: &'static str,
    loose: OnceCell<Vec<String>>,
}

/// A hunk placed at a line of the document.
pub struct Placed<'h> {
    /// Index of the first line the hunk's old lines cover (or where its lines go, when it
    /// only adds).
    pub start: usize,
    /// The hunk.
    pub hunk: &'h Hunk,
}

impl<'a> Doc<'a> {
    /// Splits `text` into lines.
    pub fn new(text: &'a str) -> Self {
        let mut spans = Vec::new();
        let mut start = 0;
        let bytes = text.as_bytes();
        while start < text.len() {
            let (content_end, end) = match text[start..].find('\n') {
                Some(i) => {
                    let nl = start + i;
                    let content_end = if nl > start && bytes[nl - 1] == b'\r' { nl - 1 } else { nl };
                    (content_end, nl + 1)
                }
                None => (text.len(), text.len()),
            };
            spans.push((start, content_end, end));
            start = end;
        }
        Self {
            text,
            spans,
            trailing_newline: text.is_empty() || text.ends_with('\n'),
            ending: LineEnding::of(text).as_str(),
            loose: OnceCell::new(),
        }
    }

    /// How many lines.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    /// Line `i` (0-based), without its ending.
    pub fn line(&self, i: usize) -> &'a str {
        let (s, e, _) = self.spans[i];
        &self.text[s..e]
    }

    /// Line `i` with its ending (`\n`, `\r\n`, or nothing for a last line without one).
    fn ending_of(&self, i: usize) -> &'a str {
        let (_, e, end) = self.spans[i];
        &self.text[e..end]
    }

    /// Line `i` folded for the loosest comparison (see [`loose`]).
    pub fn loose(&self, i: usize) -> &str {
        let all = self.loose.get_or_init(|| (0..self.len()).map(|i| loose(self.line(i))).collect());
        &all[i]
    }

    /// The text with the placed hunks applied. `placed` is in order and non-overlapping.
    pub fn apply(&self, placed: &[Placed<'_>]) -> String {
        let mut out: Vec<(&str, &str)> = Vec::with_capacity(self.len());
        let mut pos = 0;
        for p in placed {
            out.extend((pos..p.start.min(self.len())).map(|i| (self.line(i), self.ending_of(i))));
            pos = p.start;
            for l in &p.hunk.lines {
                match l.kind {
                    Kind::Context => {
                        if pos < self.len() {
                            out.push((self.line(pos), self.ending_of(pos)));
                        }
                        pos += 1;
                    }
                    Kind::Remove => pos += 1,
                    Kind::Add => out.push((&l.text, "")),
                }
            }
        }
        out.extend((pos.min(self.len())..self.len()).map(|i| (self.line(i), self.ending_of(i))));

        let mut text = String::with_capacity(self.text.len() + 64);
        let last = out.len().saturating_sub(1);
        for (k, (line, ending)) in out.iter().enumerate() {
            text.push_str(line);
            if k < last || self.trailing_newline {
                text.push_str(if ending.is_empty() { self.ending } else { ending });
            }
        }
        text
    }

    /// How many lines a text has (for counts of deleted files).
    pub fn count_lines(text: &str) -> usize {
        Doc::new(text).len()
    }
}

/// One character folded for the loosest comparison.
fn fold(c: char) -> char {
    match c {
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}' => '-',
        '\u{2018}'..='\u{201B}' | '\u{2032}' | '\u{FF07}' => '\'',
        '\u{201C}'..='\u{201F}' | '\u{2033}' | '\u{FF02}' => '"',
        '\u{00A0}' | '\u{1680}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        other => other,
    }
}

/// A line folded (Unicode punctuation to ASCII) and trimmed.
pub fn loose(s: &str) -> String {
    let folded: String = s.chars().map(fold).collect();
    folded.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::support::patch::parse::{FileOp, parse};

    fn hunks(body: &str) -> Vec<Hunk> {
        let patch = format!("*** Begin Patch\n*** Update File: f\n{body}*** End Patch\n");
        match parse(&patch).unwrap().ops.remove(0) {
            FileOp::Update { hunks, .. } => hunks,
            _ => unreachable!(),
        }
    }

    #[test]
    fn keeps_endings_and_trailing_newline_state() {
        let h = hunks("@@\n a\n-b\n+B\n+B2\n");
        let placed = [Placed { start: 0, hunk: &h[0] }];
        assert_eq!(Doc::new("a\r\nb\r\nc\r\n").apply(&placed), "a\r\nB\r\nB2\r\nc\r\n");
        assert_eq!(Doc::new("a\nb").apply(&placed), "a\nB\nB2");
        // Mixed endings: untouched lines keep theirs, new lines get the dominant one.
        assert_eq!(Doc::new("a\r\nb\nc\r\nd\r\n").apply(&placed), "a\r\nB\r\nB2\r\nc\r\nd\r\n");
        let add = hunks("@@\n+x\n");
        assert_eq!(Doc::new("a").apply(&[Placed { start: 1, hunk: &add[0] }]), "a\nx");
        assert_eq!(Doc::new("").apply(&[Placed { start: 0, hunk: &add[0] }]), "x\n");
        let del = hunks("@@\n a\n-b\n");
        assert_eq!(Doc::new("a\nb").apply(&[Placed { start: 0, hunk: &del[0] }]), "a");
    }

    #[test]
    fn splits_lines() {
        let d = Doc::new("one\r\ntwo\n\nfour");
        assert_eq!(d.len(), 4);
        assert_eq!((d.line(0), d.line(2), d.line(3)), ("one", "", "four"));
        assert_eq!(Doc::count_lines("a\nb\n"), 2);
        assert_eq!(Doc::count_lines(""), 0);
    }
}
