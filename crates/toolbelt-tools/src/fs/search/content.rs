//! Grep's engine: ripgrep's searcher over ripgrep's parallel walker, collecting each file's
//! results in its own buffer so they can be put in path order at the end (`rg --sort path`
//! without giving up the parallel walk).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::{WalkBuilder, WalkState};
use toolbelt_core::CancellationToken;

use super::{Start, WalkErrors};

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
    fn searcher(&self) -> Searcher {
        let content = self.mode == Mode::Content;
        SearcherBuilder::new()
            .line_number(content && self.line_numbers)
            .multi_line(self.multiline)
            .before_context(if content { self.before } else { 0 })
            .after_context(if content { self.after } else { 0 })
            .binary_detection(BinaryDetection::quit(b'\0'))
            .build()
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

/// One line of content output; its text is the file's `text[previous end..end]`.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    /// 1-based line number (0 when not counted, and for breaks).
    pub number: u64,
    /// What the line is.
    pub kind: LineKind,
    /// Where its text ends in [`FileHits::text`].
    pub end: usize,
}

/// One file's results.
#[derive(Debug, Default)]
pub struct FileHits {
    /// The file's real absolute path.
    pub path: PathBuf,
    /// Matching lines (multiline mode: matches); 1 in files mode.
    pub count: u64,
    /// The text of every line in `lines`, concatenated.
    pub text: String,
    /// Content output lines, in file order.
    pub lines: Vec<Line>,
}

impl FileHits {
    /// The lines with their text.
    pub fn lines(&self) -> impl Iterator<Item = (&Line, &str)> {
        let mut start = 0;
        self.lines.iter().map(move |line| {
            let text = self.text.get(start..line.end).unwrap_or("");
            start = line.end;
            (line, text)
        })
    }
}

/// What searching one file found.
pub enum Outcome {
    /// At least one match.
    Hits(FileHits),
    /// No match.
    NoMatch,
    /// The file is binary (a NUL byte) and was skipped.
    Binary,
}

/// Searches every file under `start` that `walk` yields, in parallel; returns the files
/// with matches in path order, and what could not be read. Stops early when `cancel` fires.
pub fn search_tree(
    plan: &Plan,
    start: &Start,
    walk: &WalkBuilder,
    cancel: &CancellationToken,
) -> (Vec<FileHits>, WalkErrors) {
    let found: Mutex<Vec<FileHits>> = Mutex::new(Vec::new());
    let errors: Mutex<WalkErrors> = Mutex::new(WalkErrors::default());
    let dir = start.ws.dir(&start.loc);
    walk.build_parallel().run(|| {
        let mut searcher = plan.searcher();
        let (found, errors) = (&found, &errors);
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    lock(errors).push(&e);
                    return WalkState::Continue;
                }
            };
            // Like rg: regular files only; symlinks are not followed.
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return WalkState::Continue;
            }
            let Some(rel) = start.rel_in_root(entry.path()) else { return WalkState::Continue };
            // Opened beneath the root's handle: confined at open time.
            let result =
                dir.open(rel).and_then(|file| search_file(plan, &mut searcher, &file.into_std(), entry.path(), cancel));
            match result {
                Ok(Outcome::Hits(hits)) => lock(found).push(hits),
                Ok(Outcome::NoMatch | Outcome::Binary) => {}
                Err(e) => lock(errors).push_message(format!("{}: {e}", entry.path().display())),
            }
            WalkState::Continue
        })
    });
    let mut found = found.into_inner().unwrap_or_else(PoisonError::into_inner);
    // Component-wise, as `rg --sort path` orders (`a/b` before `a.txt`).
    found.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    (found, errors.into_inner().unwrap_or_else(PoisonError::into_inner))
}

/// Searches the start when it is a single file.
pub fn search_start_file(plan: &Plan, start: &Start, cancel: &CancellationToken) -> io::Result<Outcome> {
    let file = start.ws.dir(&start.loc).open(&start.loc.rel)?.into_std();
    search_file(plan, &mut plan.searcher(), &file, &start.loc.abs, cancel)
}

fn search_file(
    plan: &Plan,
    searcher: &mut Searcher,
    file: &std::fs::File,
    path: &Path,
    cancel: &CancellationToken,
) -> io::Result<Outcome> {
    let mut sink = Collect { plan, cancel, hits: FileHits::default(), binary: false };
    searcher.search_file(&plan.matcher, file, &mut sink)?;
    if sink.binary {
        return Ok(Outcome::Binary);
    }
    if sink.hits.count == 0 {
        return Ok(Outcome::NoMatch);
    }
    sink.hits.path = path.to_path_buf();
    Ok(Outcome::Hits(sink.hits))
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The searcher's sink: records one file's results.
struct Collect<'a> {
    plan: &'a Plan,
    cancel: &'a CancellationToken,
    hits: FileHits,
    binary: bool,
}

impl Collect<'_> {
    fn push(&mut self, kind: LineKind, number: u64, bytes: &[u8]) {
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        match std::str::from_utf8(bytes) {
            Ok(text) => push_cut(&mut self.hits.text, text),
            Err(_) => push_cut(&mut self.hits.text, &String::from_utf8_lossy(bytes)),
        }
        self.hits.lines.push(Line { number, kind, end: self.hits.text.len() });
    }

    fn push_lines(&mut self, kind: LineKind, first: Option<u64>, bytes: &[u8]) {
        let mut number = first.unwrap_or(0);
        for line in bytes.split_inclusive(|&b| b == b'\n') {
            self.push(kind, number, line);
            if first.is_some() {
                number += 1;
            }
        }
    }
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        match self.plan.mode {
            Mode::Files => {
                self.hits.count = 1;
                return Ok(false);
            }
            Mode::Count if searcher.multi_line_with_matcher(&self.plan.matcher) => {
                self.hits.count += count_matches(&self.plan.matcher, mat);
            }
            Mode::Count => self.hits.count += 1,
            Mode::Content => {
                self.hits.count += 1;
                self.push_lines(LineKind::Match, mat.line_number(), mat.bytes());
            }
        }
        Ok(!self.cancel.is_cancelled())
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push_lines(LineKind::Context, context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        self.hits.lines.push(Line { number: 0, kind: LineKind::Break, end: self.hits.text.len() });
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// How many matches a multiline match group holds (what `rg -c -U` counts). The search
/// may look a little past the group, as rg's does, so look-ahead at its end still matches.
fn count_matches(matcher: &RegexMatcher, mat: &SinkMatch<'_>) -> u64 {
    const LOOK_AHEAD: usize = 128;
    let buffer = mat.buffer();
    let range = mat.bytes_range_in_buffer();
    let end = buffer.len().min(range.end.saturating_add(LOOK_AHEAD));
    let mut count = 0u64;
    let _ = matcher.find_iter_at(&buffer[..end], range.start, |m| {
        if m.start() >= range.end {
            return false;
        }
        count += 1;
        true
    });
    count.max(1)
}

/// Appends `text`, cut after [`MAX_LINE_CHARS`] characters with a marker saying how much
/// was left out.
fn push_cut(out: &mut String, text: &str) {
    if text.len() <= MAX_LINE_CHARS {
        out.push_str(text);
        return;
    }
    match text.char_indices().nth(MAX_LINE_CHARS) {
        None => out.push_str(text),
        Some((cut, _)) => {
            let rest = text[cut..].chars().count();
            out.push_str(&text[..cut]);
            // The marker Read uses, so a cut line reads the same in both.
            out.push_str(&format!("… [line cut: {} more characters]", super::thousands(rest)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_with_a_marker() {
        let mut out = String::new();
        push_cut(&mut out, &"é".repeat(MAX_LINE_CHARS + 1234));
        assert!(out.starts_with(&"é".repeat(MAX_LINE_CHARS)));
        assert!(out.ends_with("… [line cut: 1,234 more characters]"), "{}", &out[out.len() - 60..]);
        let mut out = String::new();
        push_cut(&mut out, &"a".repeat(MAX_LINE_CHARS));
        assert_eq!(out.len(), MAX_LINE_CHARS);
    }
}
