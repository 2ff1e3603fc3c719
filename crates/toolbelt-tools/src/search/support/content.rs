//! Grep's engine: ripgrep's searcher over ripgrep's parallel walker. Output lines are
//! formatted by the thread that searched the file, appended to that thread's own buffer (an
//! arena: no allocation per file or per line); at the end the files are put in path order
//! (`rg --sort path`, without giving up the parallel walk) and their slices concatenated.

use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::{WalkBuilder, WalkState};
use toolbelt_core::{CancellationToken, ToolError};

use super::open::open_searched;
use super::{Shown, Start, WalkErrors, path_order};
use crate::files::support::regular::NotRegular;
use crate::files::support::roots::io_error;

/// How often the cancellation token is looked at: every this many walk entries, and every this
/// many matches of a file (each look takes a lock the threads share).
const CANCEL_EVERY: u32 = 64;

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

/// One line of content output, as offsets into its arena's text: the formatted line
/// (`path:12:text\n`) ends at `end`, the line's own text is `body..end - 1`.
#[derive(Debug, Clone, Copy)]
pub struct Line {
    /// 1-based line number (0 when not counted, and for breaks).
    pub number: u64,
    /// What the line is.
    pub kind: LineKind,
    /// Where the line's own text starts.
    pub body: usize,
    /// Where the formatted line ends (after its newline).
    pub end: usize,
}

/// The formatted output of the files one thread searched.
#[derive(Debug, Default)]
pub struct Arena {
    text: String,
    lines: Vec<Line>,
}

/// One file's results.
#[derive(Debug)]
pub struct FileHits {
    /// The file's real absolute path.
    pub path: PathBuf,
    /// The path as shown to the model.
    pub shown: String,
    /// Matching lines (multiline mode: matches); 1 in files mode.
    pub count: u64,
    arena: usize,
    text: Range<usize>,
    lines: Range<usize>,
}

/// Everything a search found: the files with matches, in path order, and their output.
#[derive(Debug, Default)]
pub struct Found {
    /// The files with matches, in path order.
    pub files: Vec<FileHits>,
    arenas: Vec<Arena>,
    /// What could not be read.
    pub errors: WalkErrors,
}

impl Found {
    /// A file's content output lines.
    pub fn lines(&self, hit: &FileHits) -> &[Line] {
        self.arenas.get(hit.arena).and_then(|a| a.lines.get(hit.lines.clone())).unwrap_or(&[])
    }

    /// A file's content output, formatted, each line ending with a newline.
    pub fn text(&self, hit: &FileHits) -> &str {
        self.arenas.get(hit.arena).and_then(|a| a.text.get(hit.text.clone())).unwrap_or("")
    }

    /// Output line `k` of a file, formatted (with its newline).
    pub fn formatted(&self, hit: &FileHits, k: usize) -> &str {
        let lines = self.lines(hit);
        let start = k.checked_sub(1).and_then(|p| lines.get(p)).map_or(hit.text.start, |l| l.end);
        let end = lines.get(k).map_or(start, |l| l.end);
        self.arenas.get(hit.arena).and_then(|a| a.text.get(start..end)).unwrap_or("")
    }

    /// Output line `k` of a file: the line's own text.
    pub fn body(&self, hit: &FileHits, k: usize) -> &str {
        let Some(line) = self.lines(hit).get(k) else { return "" };
        self.arenas.get(hit.arena).and_then(|a| a.text.get(line.body..line.end.saturating_sub(1))).unwrap_or("")
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

/// What one walker thread found, handed over when the thread is done.
#[derive(Default)]
struct Handed {
    /// The thread's number, in the order the walk created them.
    index: usize,
    arena: Arena,
    files: Vec<FileHits>,
    errors: WalkErrors,
}

/// One walker thread's state.
struct Worker<'a> {
    searcher: Searcher,
    /// The thread's own copy of the pattern: a copy has its own pool of search caches, which
    /// its thread takes without contention.
    matcher: RegexMatcher,
    mine: Handed,
    done: &'a Mutex<Vec<Handed>>,
}

impl Drop for Worker<'_> {
    /// Hands over what the thread found, its files already in path order: the threads sort
    /// in parallel, and what is left is merging their runs.
    fn drop(&mut self) {
        let mut mine = std::mem::take(&mut self.mine);
        mine.files.sort_unstable_by(|a, b| path_order(&a.path, &b.path));
        self.done.lock().unwrap_or_else(PoisonError::into_inner).push(mine);
    }
}

/// Searches every file under `start` that `walk` yields, in parallel; returns the files
/// with matches in path order, and what could not be read. Stops early when `cancel` fires.
pub fn search_tree(plan: &Plan, start: &Start, shown: &Shown, walk: &WalkBuilder, cancel: &CancellationToken) -> Found {
    let done = Mutex::new(Vec::new());
    let dir = start.ws.dir(&start.loc);
    let mut threads = 0;
    walk.build_parallel().run(|| {
        let mine = Handed { index: threads, ..Handed::default() };
        let mut worker = Worker { searcher: plan.searcher(), matcher: plan.matcher.clone(), mine, done: &done };
        // The token is checked every few entries: a check takes a lock every thread shares.
        let mut entries = 0u32;
        threads += 1;
        Box::new(move |entry| {
            entries = entries.wrapping_add(1);
            if entries.is_multiple_of(CANCEL_EVERY) && cancel.is_cancelled() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(e) => {
                    worker.mine.errors.push(&e);
                    return WalkState::Continue;
                }
            };
            // Like rg: regular files only; symlinks are not followed. A FIFO, a device or a
            // socket is never opened, and named in the note.
            match entry.file_type().map(NotRegular::of) {
                Some(None) if entry.file_type().is_some_and(|t| t.is_file()) => {}
                Some(Some(kind)) if kind != NotRegular::Directory => {
                    let path = entry.path().display();
                    worker.mine.errors.push_message(format!("{path} is {}, not a regular file", kind.describe()));
                    return WalkState::Continue;
                }
                _ => return WalkState::Continue,
            }
            let Some(rel) = start.rel_in_root(entry.path()) else { return WalkState::Continue };
            // Opened beneath the root's handle: confined at open time; without blocking, and
            // only if the handle is a regular file (the entry may have been swapped since).
            // A second name of a file outside the roots, or of a hidden one, is skipped.
            let result = open_searched(&start.ws, dir, rel, entry.path()).and_then(|file| {
                let mine = &mut worker.mine;
                let sink =
                    Collect::new(plan, &worker.matcher, shown, entry.path(), cancel, &mut mine.arena, mine.index);
                search_file(&mut worker.searcher, &file, sink)
            });
            match result {
                Ok(Outcome::Hits(hits)) => worker.mine.files.push(hits),
                Ok(Outcome::NoMatch | Outcome::Binary) => {}
                Err(e) => worker.mine.errors.push_message(format!("{}: {e}", entry.path().display())),
            }
            WalkState::Continue
        })
    });
    let mut handed = done.into_inner().unwrap_or_else(PoisonError::into_inner);
    handed.sort_unstable_by_key(|h| h.index);
    let mut found = Found::default();
    for h in handed {
        // Indexes are 0.. in order; a gap (a thread that never handed over) keeps its slot.
        while found.arenas.len() < h.index {
            found.arenas.push(Arena::default());
        }
        found.arenas.push(h.arena);
        found.files.extend(h.files);
        found.errors.merge(h.errors);
    }
    // One sorted run per thread: the stable sort finds the runs and merges them.
    found.files.sort_by(|a, b| path_order(&a.path, &b.path));
    found
}

/// Searches the start when it is a single file (a regular one: anything else is refused).
pub fn search_start_file(
    plan: &Plan,
    start: &Start,
    shown: &Shown,
    cancel: &CancellationToken,
) -> Result<(Outcome, Found), ToolError> {
    let abs = &start.loc.abs;
    let file = start.ws.open_file(&start.loc)?;
    let mut arena = Arena::default();
    let sink = Collect::new(plan, &plan.matcher, shown, abs, cancel, &mut arena, 0);
    let outcome = search_file(&mut plan.searcher(), &file, sink).map_err(|e| io_error(abs, &e))?;
    Ok((outcome, Found { files: Vec::new(), arenas: vec![arena], errors: WalkErrors::default() }))
}

fn search_file(searcher: &mut Searcher, file: &std::fs::File, mut sink: Collect<'_>) -> io::Result<Outcome> {
    let result = searcher.search_file(sink.matcher, file, &mut sink);
    if result.is_err() || sink.binary || sink.count == 0 {
        // Nothing of this file is kept: drop what it added to the arena.
        sink.arena.text.truncate(sink.text_start);
        sink.arena.lines.truncate(sink.lines_start);
    }
    result?;
    if sink.binary {
        return Ok(Outcome::Binary);
    }
    if sink.count == 0 {
        return Ok(Outcome::NoMatch);
    }
    let shown = sink.path_shown.take().unwrap_or_else(|| sink.shown.show(sink.path));
    Ok(Outcome::Hits(FileHits {
        path: sink.path.to_path_buf(),
        shown,
        count: sink.count,
        arena: sink.arena_index,
        text: sink.text_start..sink.arena.text.len(),
        lines: sink.lines_start..sink.arena.lines.len(),
    }))
}

/// The searcher's sink: records one file's results, formatted into the thread's arena.
struct Collect<'a> {
    plan: &'a Plan,
    matcher: &'a RegexMatcher,
    shown: &'a Shown,
    path: &'a Path,
    cancel: &'a CancellationToken,
    arena: &'a mut Arena,
    arena_index: usize,
    text_start: usize,
    lines_start: usize,
    path_shown: Option<String>,
    count: u64,
    /// Calls of `matched` (for how often to look at the token).
    matched: u32,
    binary: bool,
}

impl<'a> Collect<'a> {
    fn new(
        plan: &'a Plan,
        matcher: &'a RegexMatcher,
        shown: &'a Shown,
        path: &'a Path,
        cancel: &'a CancellationToken,
        arena: &'a mut Arena,
        arena_index: usize,
    ) -> Self {
        let (text_start, lines_start) = (arena.text.len(), arena.lines.len());
        Self {
            plan,
            matcher,
            shown,
            path,
            cancel,
            arena,
            arena_index,
            text_start,
            lines_start,
            path_shown: None,
            count: 0,
            matched: 0,
            binary: false,
        }
    }

    /// Appends `path:12:text` (match) or `path-12-text` (context), without the number when
    /// lines are not numbered.
    fn push(&mut self, kind: LineKind, number: u64, bytes: &[u8]) {
        let shown = self.path_shown.get_or_insert_with(|| self.shown.show(self.path));
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let sep = if kind == LineKind::Match { ':' } else { '-' };
        let text = &mut self.arena.text;
        text.push_str(shown);
        text.push(sep);
        if number > 0 {
            push_number(text, number);
            text.push(sep);
        }
        let body = text.len();
        match std::str::from_utf8(bytes) {
            Ok(line) => push_cut(text, line),
            Err(_) => push_cut(text, &String::from_utf8_lossy(bytes)),
        }
        text.push('\n');
        self.arena.lines.push(Line { number, kind, body, end: text.len() });
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

/// Appends `n` in decimal.
fn push_number(text: &mut String, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    text.push_str(std::str::from_utf8(&digits[at..]).unwrap_or("0"));
}

impl Sink for Collect<'_> {
    type Error = io::Error;

    fn matched(&mut self, searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        match self.plan.mode {
            Mode::Files => {
                self.count = 1;
                return Ok(false);
            }
            Mode::Count if searcher.multi_line_with_matcher(self.matcher) => {
                self.count += count_matches(self.matcher, mat);
            }
            Mode::Count => self.count += 1,
            Mode::Content => {
                self.count += 1;
                self.push_lines(LineKind::Match, mat.line_number(), mat.bytes());
            }
        }
        self.matched = self.matched.wrapping_add(1);
        Ok(!self.matched.is_multiple_of(CANCEL_EVERY) || !self.cancel.is_cancelled())
    }

    fn context(&mut self, _searcher: &Searcher, context: &SinkContext<'_>) -> Result<bool, io::Error> {
        self.push_lines(LineKind::Context, context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, io::Error> {
        self.arena.text.push_str("--\n");
        let end = self.arena.text.len();
        self.arena.lines.push(Line { number: 0, kind: LineKind::Break, body: end - 1, end });
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

    #[test]
    fn numbers_in_decimal() {
        let mut out = String::new();
        for n in [0, 7, 10, 1234, u64::MAX] {
            push_number(&mut out, n);
            out.push(' ');
        }
        assert_eq!(out, format!("0 7 10 1234 {} ", u64::MAX));
    }
}
