//! A session's output as a person would read it: the bytes go through a terminal emulator
//! (`vt100`), so colours and cursor movement are interpreted, a progress bar redrawn in place
//! reads once as its last state, and a full-screen program (an editor, `top`, a curses menu)
//! reads as its screen.
//!
//! **What "new output" is.** Lines leave the top of the screen into the emulator's
//! scrollback; each read takes the lines from the row the cursor was on at the previous read
//! down to the last written row (the scrollback, cleared after each read, holds exactly those
//! that scrolled off since). So the row being typed on (a prompt) is shown again with what was
//! typed and answered after it. A program on the alternate screen (an editor) is read as its
//! whole screen.
//!
//! Every byte also goes to the session's log, which keeps what scrolled past faster than it was
//! read (more than [`SCROLLBACK`] lines between two reads).

use std::num::NonZeroU16;

/// Lines kept between two reads (about a result's worth of text, at 32 bytes a cell: under
/// 2 MB for a 120-column terminal); older ones are in the log only.
pub const SCROLLBACK: usize = 500;

/// The emulated terminal of one session.
pub struct Screen {
    parser: vt100::Parser,
    /// The row (of the screen, counting the scrollback above it) unread output starts at.
    from: usize,
    /// Whether bytes came since the last read.
    fresh: bool,
    /// Whether input is a pipe's: a lone line feed also returns the carriage (as a
    /// terminal's line discipline does on output).
    pipe: bool,
    /// Whether the last byte fed was a carriage return (for the pipe translation across
    /// chunks).
    after_cr: bool,
    /// Once the session ended: what was not read yet, and the last screen, as text (the
    /// emulator itself is let go).
    finished: Option<Finished>,
}

/// What is kept of a screen once its session ended.
#[derive(Debug, Default)]
struct Finished {
    unread: Option<(String, bool)>,
    last: String,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Screen").field("from", &self.from).field("fresh", &self.fresh).finish_non_exhaustive()
    }
}

impl Screen {
    /// A screen of `rows` × `cols`; `pipe` when the output comes through a pipe rather than
    /// a terminal.
    pub fn new(rows: u16, cols: u16, pipe: bool) -> Self {
        let (rows, cols) =
            (NonZeroU16::new(rows).unwrap_or(NonZeroU16::MIN), NonZeroU16::new(cols).unwrap_or(NonZeroU16::MIN));
        let parser = vt100::Parser::new(rows, cols, SCROLLBACK);
        Self { parser, from: 0, fresh: false, pipe, after_cr: false, finished: None }
    }

    /// Takes in output.
    pub fn feed(&mut self, bytes: &[u8]) {
        if bytes.is_empty() || self.finished.is_some() {
            return;
        }
        self.fresh = true;
        if !self.pipe {
            self.parser.process(bytes);
            return;
        }
        let mut translated = Vec::with_capacity(bytes.len() + bytes.len() / 16);
        for &b in bytes {
            if b == b'\n' && !self.after_cr {
                translated.push(b'\r');
            }
            translated.push(b);
            self.after_cr = b == b'\r';
        }
        self.parser.process(&translated);
    }

    /// The bytes a terminal sends for `typed`: the cursor keys as the program asked for them
    /// (`ESC O A` rather than `ESC [ A` once it set application cursor mode, as curses
    /// programs and editors do).
    pub fn keys<'a>(&self, typed: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        if !self.parser.screen().application_cursor() || !typed.windows(2).any(|w| w == b"\x1b[") {
            return std::borrow::Cow::Borrowed(typed);
        }
        let mut sent = Vec::with_capacity(typed.len());
        let mut i = 0;
        while i < typed.len() {
            if typed[i..].starts_with(b"\x1b[") && typed.get(i + 2).is_some_and(|k| b"ABCDHF".contains(k)) {
                sent.extend_from_slice(&[0x1b, b'O', typed[i + 2]]);
                i += 3;
            } else {
                sent.push(typed[i]);
                i += 1;
            }
        }
        std::borrow::Cow::Owned(sent)
    }

    /// The output since the last read, as text (empty when nothing came); and whether lines
    /// scrolled past faster than they were read (then the log has them).
    pub fn take_new(&mut self) -> (String, bool) {
        if let Some(finished) = &mut self.finished {
            return finished.unread.take().unwrap_or_default();
        }
        if !std::mem::take(&mut self.fresh) {
            return (String::new(), false);
        }
        if self.parser.screen().alternate_screen() {
            return (self.snapshot(), false);
        }
        let rows = self.rows_with_scrollback();
        let lost = self.parser.screen().scrollback_len() >= SCROLLBACK;
        let scrolled = self.parser.screen().scrollback_len();
        let cursor = scrolled + usize::from(self.parser.screen().cursor_position().0);
        let last = rows.iter().rposition(|(text, _)| !text.is_empty()).unwrap_or(0).max(cursor);
        let mut start = self.from.min(last);
        // From the start of the line the row belongs to, when it continues a wrapped one.
        while start > 0 && rows[start - 1].1 {
            start -= 1;
        }
        let text = join(&rows[start..=last.min(rows.len().saturating_sub(1))]);
        self.parser.screen_mut().clear_scrollback();
        self.from = usize::from(self.parser.screen().cursor_position().0);
        (text, lost)
    }

    /// Keeps what was not read yet and the last screen as text, and lets the emulator go
    /// (the session ended: nothing more comes; what still does is in the log only).
    pub fn finish(&mut self) {
        if self.finished.is_some() {
            return;
        }
        let unread = self.take_new();
        let last = self.snapshot();
        self.parser = vt100::Parser::new(NonZeroU16::MIN, NonZeroU16::MIN, 0);
        self.finished = Some(Finished { unread: Some(unread), last });
    }

    /// The text of the row the cursor is on.
    pub fn cursor_line(&self) -> String {
        let screen = self.parser.screen();
        let row = screen.cursor_position().0;
        screen.rows(0, screen.size().1.get()).nth(usize::from(row)).unwrap_or_default().trim().to_string()
    }

    /// The screen as it reads now, blank rows at its end left out.
    pub fn snapshot(&mut self) -> String {
        if let Some(finished) = &self.finished {
            return finished.last.clone();
        }
        self.parser.screen_mut().set_scrollback(0);
        let screen = self.parser.screen();
        let cols = screen.size().1.get();
        let rows: Vec<(String, bool)> = screen
            .rows(0, cols)
            .enumerate()
            .map(|(i, text)| (text, screen.row_wrapped(u16::try_from(i).unwrap_or(u16::MAX))))
            .collect();
        let last = rows.iter().rposition(|(text, _)| !text.is_empty()).map_or(0, |i| i + 1);
        join(&rows[..last])
    }

    /// Every row of the scrollback, oldest first, then every row of the screen, each with
    /// whether it wraps into the next.
    fn rows_with_scrollback(&mut self) -> Vec<(String, bool)> {
        let screen = self.parser.screen_mut();
        let (height, cols) = (usize::from(screen.size().0.get()), screen.size().1.get());
        let mut rows = Vec::new();
        let mut offset = screen.scrollback_len();
        // Each view shows at most a screen's height of the scrollback at its top.
        while offset > 0 {
            screen.set_scrollback(offset);
            let take = offset.min(height);
            let view: Vec<String> = screen.rows(0, cols).take(take).collect();
            for (i, text) in view.into_iter().enumerate() {
                rows.push((text, screen.row_wrapped(u16::try_from(i).unwrap_or(u16::MAX))));
            }
            offset -= take;
        }
        screen.set_scrollback(0);
        for (i, text) in screen.rows(0, cols).enumerate().collect::<Vec<_>>() {
            rows.push((text, screen.row_wrapped(u16::try_from(i).unwrap_or(u16::MAX))));
        }
        rows
    }
}

/// Rows as lines: a row that wraps continues on the next without a line break.
fn join(rows: &[(String, bool)]) -> String {
    let mut text = String::new();
    for (i, (row, wrapped)) in rows.iter().enumerate() {
        text.push_str(row.trim_end_matches(' '));
        if i + 1 < rows.len() && !wrapped {
            text.push('\n');
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prompt_row_is_shown_again_with_what_was_typed_and_answered() {
        let mut screen = Screen::new(40, 120, false);
        screen.feed(b">>> ");
        assert_eq!(screen.take_new().0, ">>>");
        assert_eq!(screen.take_new().0, "", "nothing new");
        screen.feed(b"x + 1\r\n42\r\n>>> ");
        assert_eq!(screen.take_new().0, ">>> x + 1\n42\n>>>");
    }

    #[test]
    fn a_progress_bar_redrawn_in_place_reads_once_and_colours_are_gone() {
        let mut screen = Screen::new(40, 120, true);
        screen.feed(b"building\n");
        for pct in [10, 50, 100] {
            screen.feed(format!("\r\x1b[32m[{pct:>3}%]\x1b[0m").as_bytes());
        }
        screen.feed(b"\ndone\n");
        assert_eq!(screen.take_new().0, "building\n[100%]\ndone\n");
    }

    #[test]
    fn lines_that_scrolled_off_between_reads_are_kept_and_long_lines_are_not_broken() {
        let mut screen = Screen::new(5, 20, true);
        let mut fed = String::new();
        for i in 0..30 {
            fed.push_str(&format!("line {i}\n"));
        }
        fed.push_str(&"x".repeat(50));
        screen.feed(fed.as_bytes());
        let (text, lost) = screen.take_new();
        assert!(!lost);
        let mut want: Vec<String> = (0..30).map(|i| format!("line {i}")).collect();
        want.push("x".repeat(50));
        assert_eq!(text, want.join("\n"));
        screen.feed(b"\nmore\n");
        assert_eq!(screen.take_new().0, format!("{}\nmore\n", "x".repeat(50)));
    }

    #[test]
    fn a_finished_screen_keeps_what_was_unread_and_the_last_screen() {
        let mut screen = Screen::new(10, 40, false);
        screen.feed(b"one\r\n");
        assert_eq!(screen.take_new().0, "one\n");
        screen.feed(b"two\r\nbye");
        screen.finish();
        screen.feed(b"late");
        assert_eq!(screen.take_new().0, "two\nbye");
        assert_eq!(screen.take_new().0, "");
        assert_eq!(screen.snapshot(), "one\ntwo\nbye");
    }

    #[test]
    fn cursor_keys_are_sent_as_the_program_asked_for_them() {
        let mut screen = Screen::new(10, 40, false);
        assert_eq!(&*screen.keys(b"\x1b[Ax"), b"\x1b[Ax");
        screen.feed(b"\x1b[?1h");
        assert_eq!(&*screen.keys(b"\x1b[Ax\x1b[B\x1b[5~"), b"\x1bOAx\x1bOB\x1b[5~");
    }

    #[test]
    fn a_full_screen_program_reads_as_its_screen() {
        let mut screen = Screen::new(10, 40, false);
        screen.feed(b"$ top\r\n\x1b[?1049h\x1b[2J\x1b[3;5Hhello\x1b[6;1Hbottom");
        assert_eq!(screen.take_new().0, "\n\n    hello\n\n\nbottom");
        screen.feed(b"\x1b[?1049l");
        assert_eq!(screen.snapshot(), "$ top");
    }
}
