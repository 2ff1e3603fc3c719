//! Finding where a hunk goes.
//!
//! A hunk's old lines (context and removed) are sought from where the previous hunk ended,
//! at increasingly tolerant levels: exact, then ignoring trailing whitespace, then ignoring
//! surrounding whitespace, then also folding Unicode punctuation (dashes and minus to `-`,
//! curly quotes to straight ones, non-breaking and other Unicode spaces to a space). The
//! first level with a match wins, as in Codex. `@@` anchors are sought the same way, and
//! finally as a part of a line (`@@ fn parse` finds `    pub fn parse(input: &str) {`).
//! Untouched lines keep their bytes whatever level matched: only `-` lines go and `+` lines
//! come.

use super::doc::{Doc, loose};
use super::parse::Hunk;

/// How tolerant a match had to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Byte for byte.
    Exact,
    /// Ignoring trailing whitespace.
    TrailingSpace,
    /// Ignoring leading and trailing whitespace.
    Spaces,
    /// Also folding Unicode dashes, quotes and spaces.
    Unicode,
    /// (Anchors only) the anchor is part of the line.
    Contains,
}

impl Level {
    /// How the match was made, for notes.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingSpace => "ignoring trailing whitespace",
            Level::Spaces => "ignoring leading and trailing whitespace",
            Level::Unicode => "ignoring whitespace and Unicode punctuation variants",
            Level::Contains => "with its @@ anchor found inside a longer line",
        }
    }
}

const LINE_LEVELS: [Level; 4] = [Level::Exact, Level::TrailingSpace, Level::Spaces, Level::Unicode];

/// Whether file line `i` equals `pat` at `level` (`pat_loose` is `loose(pat)`).
fn line_eq(doc: &Doc<'_>, i: usize, pat: &str, pat_loose: &str, level: Level) -> bool {
    let f = doc.line(i);
    match level {
        Level::Exact => f == pat,
        Level::TrailingSpace => f.trim_end() == pat.trim_end(),
        Level::Spaces => f.trim() == pat.trim(),
        Level::Unicode => doc.loose(i) == pat_loose,
        Level::Contains => !pat_loose.is_empty() && doc.loose(i).contains(pat_loose),
    }
}

/// Where a sequence of lines was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    /// Index of the first line.
    pub start: usize,
    /// How tolerant the match had to be.
    pub level: Level,
}

/// Finds `pattern` at or after line index `from`; with `eof`, only as the file's last lines.
pub fn seek(doc: &Doc<'_>, pattern: &[&str], from: usize, eof: bool) -> Option<Found> {
    let n = pattern.len();
    if n == 0 || n > doc.len() {
        return None;
    }
    let last = doc.len() - n;
    let starts = if eof { last.max(from)..=last } else { from..=last };
    if starts.is_empty() {
        return None;
    }
    let loose_pattern: Vec<String> = pattern.iter().map(|p| loose(p)).collect();
    LINE_LEVELS.into_iter().find_map(|level| {
        starts
            .clone()
            .find(|&s| (0..n).all(|k| line_eq(doc, s + k, pattern[k], &loose_pattern[k], level)))
            .map(|start| Found { start, level })
    })
}

/// Finds one anchor line at or after `from`, as a whole line at each level, then as part of
/// a line.
pub fn seek_anchor(doc: &Doc<'_>, anchor: &str, from: usize) -> Option<Found> {
    let anchor_loose = loose(anchor);
    LINE_LEVELS.into_iter().chain([Level::Contains]).find_map(|level| {
        (from..doc.len()).find(|&i| line_eq(doc, i, anchor, &anchor_loose, level)).map(|start| Found { start, level })
    })
}

/// Where a hunk goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// Index of the first line its old lines cover (or where an add-only hunk's lines go).
    pub start: usize,
    /// How many file lines it covers.
    pub len: usize,
    /// The most tolerant level any of its parts needed.
    pub level: Level,
}

/// Why a hunk could not be placed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// An `@@` anchor was not found at or after `from`.
    Anchor {
        /// The anchor.
        anchor: String,
        /// Where the search started (line index).
        from: usize,
    },
    /// The old lines were not found at or after `from`.
    Lines {
        /// Where the search started (line index).
        from: usize,
        /// Whether an `@@` anchor set `from`.
        anchored: bool,
    },
}

/// Places `hunk` at or after line index `from`: its anchors first, each after the previous,
/// then its old lines after the last anchor. A hunk that only adds goes after its last
/// anchor, or at the end of the file when it has none (or is marked `*** End of File`).
pub fn place(doc: &Doc<'_>, hunk: &Hunk, from: usize) -> Result<Placement, Miss> {
    let mut at = from;
    let mut level = Level::Exact;
    for anchor in &hunk.headers {
        let found = seek_anchor(doc, anchor, at).ok_or_else(|| Miss::Anchor { anchor: anchor.clone(), from: at })?;
        at = found.start + 1;
        level = level.max(found.level);
    }
    let old: Vec<&str> = hunk.old().into_iter().map(|(t, _)| t).collect();
    if old.is_empty() {
        let start = if hunk.headers.is_empty() || hunk.end_of_file { doc.len() } else { at };
        return Ok(Placement { start, len: 0, level });
    }
    match seek(doc, &old, at, hunk.end_of_file) {
        Some(found) => Ok(Placement { start: found.start, len: old.len(), level: level.max(found.level) }),
        None => Err(Miss::Lines { from: at, anchored: !hunk.headers.is_empty() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_in_order() {
        let doc = Doc::new("a  \n  b\nx \u{2014} \u{201C}q\u{201D}\u{00A0}y\nb\n");
        assert_eq!(seek(&doc, &["b"], 0, false), Some(Found { start: 3, level: Level::Exact }));
        assert_eq!(seek(&doc, &["a"], 0, false), Some(Found { start: 0, level: Level::TrailingSpace }));
        assert_eq!(seek(&doc, &["a", "b"], 0, false), Some(Found { start: 0, level: Level::Spaces }));
        assert_eq!(seek(&doc, &["x - \"q\" y"], 0, false), Some(Found { start: 2, level: Level::Unicode }));
        assert_eq!(seek(&doc, &["b"], 4, false), None);
        assert_eq!(seek(&doc, &["  b"], 0, true), Some(Found { start: 3, level: Level::Spaces }));
        assert_eq!(seek(&doc, &["a"], 0, true), None);
    }

    #[test]
    fn anchors_fall_back_to_part_of_a_line() {
        let doc = Doc::new("fn parse_all() {}\n    pub fn parse(input: &str) {\n");
        assert_eq!(seek_anchor(&doc, "pub fn parse(input: &str) {", 0).map(|f| f.level), Some(Level::Spaces));
        assert_eq!(seek_anchor(&doc, "fn parse(", 0), Some(Found { start: 1, level: Level::Contains }));
        assert_eq!(seek_anchor(&doc, "nothing", 0), None);
    }

    #[test]
    fn fold_covers_the_usual_variants() {
        assert_eq!(loose("\u{00A0}a\u{2013}b\u{2212}c \u{2018}d\u{2019} \u{3000}"), "a-b-c 'd'");
    }
}
