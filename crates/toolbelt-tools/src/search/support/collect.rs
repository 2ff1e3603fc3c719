//! The searcher's sink: what one file's search found, its output lines formatted as they
//! come (`path:12:text`, `path-12-text`, `--`), after those of the files before it in the run
//! the thread is searching.

use std::io;
use std::ops::Range;
use std::path::Path;

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{LineIter, Searcher, Sink, SinkContext, SinkMatch};
use toolbelt_core::CancellationToken;

use super::content::{BREAK, CANCEL_EVERY, LineKind, MAX_LINE_CHARS, Mode, Outcome, Output, Plan};
use crate::fs::walk::Shown;

/// Records one file's results, its output lines formatted into `out`.
pub(super) struct Collect<'a> {
    plan: &'a Plan,
    pub(super) matcher: &'a RegexMatcher,
    shown: &'a Shown,
    path: &'a Path,
    cancel: &'a CancellationToken,
    pub(super) out: &'a mut Output,
    pub(super) text_start: usize,
    pub(super) lines_start: usize,
    names_start: usize,
    /// The file's path as shown, in the output's names, once written.
    shown_at: Option<Range<usize>>,
    pub(super) count: u64,
    /// Calls of `matched` (for how often to look at the token).
    matched: u32,
    pub(super) binary: bool,
}

impl<'a> Collect<'a> {
    pub(super) fn new(
        plan: &'a Plan,
        matcher: &'a RegexMatcher,
        shown: &'a Shown,
        path: &'a Path,
        cancel: &'a CancellationToken,
        out: &'a mut Output,
    ) -> Self {
        let (text_start, lines_start, names_start) = (out.text.len(), out.kinds.len(), out.names.len());
        Self {
            plan,
            matcher,
            shown,
            path,
            cancel,
            out,
            text_start,
            lines_start,
            names_start,
            shown_at: None,
            count: 0,
            matched: 0,
            binary: false,
        }
    }

    /// Where the file's path as shown is in the output's names (written the first time).
    pub(super) fn shown(&mut self) -> Range<usize> {
        if let Some(at) = &self.shown_at {
            return at.clone();
        }
        let names = &mut self.out.names;
        let at = names.len();
        self.shown.show_into(self.path, names);
        let at = at..names.len();
        self.shown_at = Some(at.clone());
        at
    }

    /// Drops what this file added to the output (nothing of it is kept).
    pub(super) fn discard(&mut self) {
        self.out.text.truncate(self.text_start);
        self.out.kinds.truncate(self.lines_start);
        self.out.names.truncate(self.names_start);
    }

    /// Appends `path:12:text` (match) or `path-12-text` (context), without the number when
    /// lines are not numbered. The line's own text never holds a newline (the searcher
    /// splits at them, and the one ending the line is dropped here), so the only newline
    /// after the path ends the output line.
    fn push(&mut self, kind: LineKind, number: u64, bytes: &[u8]) {
        let shown = self.shown();
        let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
        let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
        let sep = if kind == LineKind::Match { ':' } else { '-' };
        let Output { text, names, .. } = &mut *self.out;
        text.push_str(names.get(shown).unwrap_or_default());
        text.push(sep);
        if number > 0 {
            push_number(text, number);
            text.push(sep);
        }
        match std::str::from_utf8(bytes) {
            Ok(line) => push_cut(text, line),
            Err(_) => push_cut(text, &String::from_utf8_lossy(bytes)),
        }
        text.push('\n');
        self.out.kinds.push(kind);
    }

    fn push_lines(&mut self, kind: LineKind, first: Option<u64>, bytes: &[u8]) {
        let mut number = first.unwrap_or(0);
        for line in LineIter::new(b'\n', bytes) {
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
    text.extend(digits[at..].iter().map(|&d| char::from(d)));
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
        self.out.text.push_str(BREAK);
        self.out.kinds.push(LineKind::Break);
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
            out.push_str(&format!("… [line cut: {} more characters]", toolbelt_core::thousands(rest)));
        }
    }
}

/// Searches one file into `sink`; what it added to the sink's output is dropped unless the
/// file has matches.
pub(super) fn search_file(
    searcher: &mut Searcher,
    file: &std::fs::File,
    sink: &mut Collect<'_>,
) -> io::Result<Outcome> {
    let result = searcher.search_file(sink.matcher, file, &mut *sink);
    outcome(result, sink)
}

/// [`search_file`] for a file already read whole into `bytes` (one no larger than
/// [`WHOLE`](super::whole::WHOLE): the searcher then looks for binary data in all of it before
/// the first match, as it does when it reads the file itself).
pub(super) fn search_bytes(searcher: &mut Searcher, bytes: &[u8], sink: &mut Collect<'_>) -> io::Result<Outcome> {
    let result = searcher.search_slice(sink.matcher, bytes, &mut *sink);
    outcome(result, sink)
}

/// What a search of one file came to; drops what it added to the sink's output unless the
/// file has matches.
fn outcome(result: io::Result<()>, sink: &mut Collect<'_>) -> io::Result<Outcome> {
    if result.is_err() || sink.binary || sink.count == 0 {
        sink.discard();
    }
    result?;
    Ok(if sink.binary {
        Outcome::Binary
    } else if sink.count == 0 {
        Outcome::NoMatch
    } else {
        Outcome::Hits
    })
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
