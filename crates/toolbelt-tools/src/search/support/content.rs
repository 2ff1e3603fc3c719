//! What a content search looks for and what it found: the [`Plan`] (matcher, mode, context,
//! searcher settings) and the [`Found`] files with their output lines and text, which the
//! engine ([`engine`](super::engine)) fills and Grep renders.
use std::ops::Range;

use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};

use super::pages;
use crate::fs::walk::WalkErrors;

/// How often the cancellation token is looked at: every this many walk entries, and every this
/// many matches of a file (each look takes a lock the threads share).
pub(super) const CANCEL_EVERY: u32 = 64;

/// The line between non-adjacent groups of lines.
pub(super) const BREAK: &str = "--\n";

/// Characters of one line shown before it is cut.
pub const MAX_LINE_CHARS: usize = 2_000;

/// What a search reports per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Whether the file matches (stops at the first match).
    Files,
    /// How many lines match (in multiline mode: how many matches).
    Count,
    /// The matching lines, with context lines around them.
    Content,
}

/// A search to run: the matcher and how to report.
pub struct Plan {
    /// The compiled pattern.
    pub matcher: RegexMatcher,
    /// What to report.
    pub mode: Mode,
    /// Number the lines (content mode).
    pub line_numbers: bool,
    /// Context lines before each match (content mode).
    pub before: usize,
    /// Context lines after each match (content mode).
    pub after: usize,
    /// Matches may span lines.
    pub multiline: bool,
}

impl Plan {
    pub(super) fn searcher(&self) -> Searcher {
        let content = self.mode == Mode::Content;
        SearcherBuilder::new()
            .line_number(content && self.line_numbers)
            .multi_line(self.multiline)
            .before_context(if content { self.before } else { 0 })
            .after_context(if content { self.after } else { 0 })
            .binary_detection(BinaryDetection::quit(b'\0'))
            .build()
    }

    /// Whether files' lines are set apart by a `--` line (content mode with context).
    fn separated(&self) -> bool {
        self.mode == Mode::Content && (self.before > 0 || self.after > 0)
    }
}

/// What a line of content output is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A matching line.
    Match,
    /// A context line.
    Context,
    /// A break between non-adjacent groups of lines (`--`).
    Break,
}

/// Formatted output: lines of text, each ending with a newline, what each line is, and the
/// files' paths as shown, one after another.
#[derive(Debug, Default)]
pub(super) struct Output {
    pub(super) text: String,
    pub(super) kinds: Vec<LineKind>,
    pub(super) names: String,
}

impl Output {
    /// Empties the buffers, keeping their room.
    pub(super) fn clear(&mut self) {
        self.text.clear();
        self.kinds.clear();
        self.names.clear();
    }
}

/// One file's results.
#[derive(Debug)]
pub struct FileHits {
    /// The path as shown to the model ([`Found::shown`]), in the search's names.
    shown: Range<usize>,
    /// Matching lines (multiline mode: matches); 1 in files mode.
    pub count: u64,
    /// The file's output lines (indexes of [`Found::line_count`]'s lines), the `--` line
    /// setting it apart from the file before included.
    pub lines: Range<usize>,
    /// Where those lines are in the text.
    text: Range<usize>,
}

/// Everything a search found: the files with matches and their output, in path order.
#[derive(Debug, Default)]
pub struct Found {
    /// The files with matches, in path order.
    pub files: Vec<FileHits>,
    /// Content mode: the output of every file, in order.
    out: Output,
    /// The capacity of the text last backed by huge pages.
    advised: usize,
    /// Whether output lines carry line numbers.
    numbered: bool,
    /// Whether files' lines are set apart by a `--` line.
    separated: bool,
    /// What could not be read.
    pub errors: WalkErrors,
}

/// One formatted line of content output.
#[derive(Debug, Clone, Copy)]
pub struct OutputLine<'a> {
    /// What the line is.
    pub kind: LineKind,
    /// The line as output, ending with its newline (`path:12:text\n`).
    pub text: &'a str,
}

impl Found {
    pub(super) fn new(plan: &Plan) -> Self {
        Self { numbered: plan.line_numbers, separated: plan.separated(), ..Self::default() }
    }

    /// How many content output lines there are.
    pub fn line_count(&self) -> usize {
        self.out.kinds.len()
    }

    /// The content output, formatted, each line ending with a newline.
    pub fn text(&self) -> &str {
        &self.out.text
    }

    /// The content output, handed over.
    pub fn into_text(self) -> String {
        self.out.text
    }

    /// The output lines of file `i`, in order, with where each starts in the text. A line is
    /// `--`, or the shown path, a separator, the number and a separator when numbered, then
    /// its own text, which holds no newline: its end is the first newline after the path
    /// (the path itself may hold one).
    pub fn lines(&self, i: usize) -> impl Iterator<Item = (usize, OutputLine<'_>)> + '_ {
        let hit = self.files.get(i);
        let kinds = hit.and_then(|h| self.out.kinds.get(h.lines.clone())).unwrap_or_default();
        let mut at = hit.map_or(0, |h| h.text.start);
        let shown = hit.map_or(0, |h| h.shown.len());
        kinds.iter().map(move |&kind| {
            let rest = self.out.text.get(at..).unwrap_or_default();
            let len = match kind {
                LineKind::Break => BREAK.len(),
                _ => rest.get(shown + 1..).and_then(|r| r.find('\n')).map_or(rest.len(), |n| shown + 1 + n + 1),
            };
            let start = at;
            at += len.min(rest.len());
            (start, OutputLine { kind, text: rest.get(..len).unwrap_or(rest) })
        })
    }

    /// Where output line `n` starts in the text (the text's end for the line after the last).
    pub fn line_start(&self, n: usize) -> usize {
        let i = self.files.partition_point(|hit| hit.lines.end <= n);
        match self.files.get(i) {
            None => self.out.text.len(),
            Some(hit) => self.lines(i).nth(n.saturating_sub(hit.lines.start)).map_or(hit.text.end, |(at, _)| at),
        }
    }

    /// Makes room for `files` more files with matches and `names` more bytes of their names.
    pub(super) fn reserve(&mut self, files: usize, names: usize) {
        self.files.reserve(files);
        self.out.names.reserve(names);
    }

    /// The path of a file with matches, as shown to the model.
    pub fn shown(&self, hit: &FileHits) -> &str {
        self.out.names.get(hit.shown.clone()).unwrap_or_default()
    }

    /// The number (when lines are numbered) and the own text of an output line of file `i`.
    pub fn number_and_body<'a>(&self, i: usize, line: &OutputLine<'a>) -> (Option<u64>, &'a str) {
        if line.kind == LineKind::Break {
            return (None, "");
        }
        let shown = self.files.get(i).map_or(0, |h| h.shown.len());
        let text = line.text.strip_suffix('\n').unwrap_or(line.text);
        let rest = text.get(shown + 1..).unwrap_or("");
        if !self.numbered {
            return (None, rest);
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let number = rest.get(..digits).and_then(|d| d.parse().ok());
        (number, rest.get(digits + 1..).unwrap_or(""))
    }

    /// Adds a file's results, after those of the files before it in path order: its path as
    /// shown is `out`'s `shown` name, its output lines `out`'s `lines` and `text`, set apart
    /// by a `--` line when `separated`.
    pub(super) fn push(
        &mut self,
        out: &Output,
        shown: Range<usize>,
        count: u64,
        lines: Range<usize>,
        text: Range<usize>,
    ) {
        let separated = self.separated && !self.files.is_empty();
        let (line_start, text_start) = (self.out.kinds.len(), self.out.text.len());
        let bytes = out.text.get(text).unwrap_or_default();
        if !bytes.is_empty() {
            pages::reserve(&mut self.out.text, bytes.len() + BREAK.len(), &mut self.advised);
        }
        if separated {
            self.out.text.push_str(BREAK);
            self.out.kinds.push(LineKind::Break);
        }
        self.out.text.push_str(bytes);
        self.out.kinds.extend_from_slice(out.kinds.get(lines).unwrap_or_default());
        let (lines, text) = (line_start..self.out.kinds.len(), text_start..self.out.text.len());
        let name = self.out.names.len();
        self.out.names.push_str(out.names.get(shown).unwrap_or_default());
        let shown = name..self.out.names.len();
        self.files.push(FileHits { shown, count, lines, text });
    }
}

/// What searching one file found.
pub enum Outcome {
    /// At least one match.
    Hits,
    /// No match.
    NoMatch,
    /// The file is binary (a NUL byte) and was skipped.
    Binary,
}
