//! Capturing a command's output in bounded memory, whatever it prints.
//!
//! Each stream, and both interleaved in arrival order, keep a head (the first bytes) and a
//! ring-buffer tail (the last bytes); the middle is dropped. Once the interleaved output
//! outgrows its head, every byte also streams to a spill file, so the model can read back
//! what it was not shown. Memory stays a few hundred kilobytes for a gigabyte of output.

use std::path::PathBuf;

use tokio::io::AsyncWriteExt as _;
use toolbelt_core::{OutputStream, ToolContext};

use crate::process::spill::SpillTarget;

/// The first bytes of a stream and, once it outgrows them, the last bytes.
#[derive(Debug)]
pub struct HeadTail {
    head: Vec<u8>,
    head_cap: usize,
    tail: Ring,
    total: u64,
}

impl HeadTail {
    /// Room for `budget` characters shown from each end, in any encoding width, with
    /// enough head that a stream not kept whole is certainly over the budget.
    pub fn for_budget(budget: usize) -> Self {
        Self::with_caps(budget.saturating_mul(4), budget.saturating_mul(2))
    }

    /// A stream of `total` bytes of which only `head` (its start) and `tail` (its end) are
    /// at hand, as when reading the ends of a file.
    pub fn from_parts(head: Vec<u8>, tail: &[u8], total: u64) -> Self {
        let mut ring = Ring::new(tail.len());
        ring.push(tail);
        Self { head_cap: head.len(), head, tail: ring, total }
    }

    fn with_caps(head_cap: usize, tail_cap: usize) -> Self {
        Self { head: Vec::new(), head_cap, tail: Ring::new(tail_cap), total: 0 }
    }

    /// Adds bytes.
    pub fn push(&mut self, mut data: &[u8]) {
        self.total += data.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(data.len());
            self.head.extend_from_slice(&data[..take]);
            data = &data[take..];
        }
        if !data.is_empty() {
            self.tail.push(data);
        }
    }

    /// Bytes seen in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Whether every byte is kept (then it is all in the head).
    pub fn is_whole(&self) -> bool {
        self.total == self.head.len() as u64
    }

    /// The head bytes.
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    /// The stream as text of at most `budget` characters: whole when it fits, else its head
    /// and tail around a marker saying how much was left out.
    pub fn render(&self, budget: usize) -> Rendered {
        if self.is_whole() {
            let text = String::from_utf8_lossy(&self.head);
            if text.len() <= budget || text.chars().count() <= budget {
                return Rendered { text: text.into_owned(), cut: false };
            }
        }
        let marker_room = 60;
        let room = budget.saturating_sub(marker_room);
        let head_chars = room / 2;
        let tail_chars = room - head_chars;
        let (head_bytes, tail_bytes) = if self.is_whole() {
            (&self.head[..], &self.head[..])
        } else {
            (&self.head[..], &self.tail.contents()[..])
        };
        let head = first_chars(&String::from_utf8_lossy(head_bytes), head_chars);
        let tail_text = String::from_utf8_lossy(skip_continuation(tail_bytes));
        let tail = last_chars(&tail_text, tail_chars).to_string();
        let shown = (head.len() + tail.len()) as u64;
        let omitted = self.total.saturating_sub(shown);
        let text = format!("{head}\n[… {} bytes omitted …]\n{tail}", thousands(omitted));
        Rendered { text, cut: true }
    }
}

/// Text made from a stream for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The text.
    pub text: String,
    /// Whether part of the stream was left out.
    pub cut: bool,
}

/// A fixed-size ring keeping the last bytes pushed (allocated on first use: most commands
/// never fill their head).
#[derive(Debug)]
struct Ring {
    buf: Vec<u8>,
    cap: usize,
    next: usize,
    full: bool,
}

impl Ring {
    fn new(cap: usize) -> Self {
        Self { buf: Vec::new(), cap, next: 0, full: false }
    }

    fn push(&mut self, data: &[u8]) {
        let cap = self.cap;
        if cap == 0 {
            return;
        }
        if self.buf.len() < cap {
            self.buf.resize(cap, 0);
        }
        if data.len() >= cap {
            self.buf.copy_from_slice(&data[data.len() - cap..]);
            self.next = 0;
            self.full = true;
            return;
        }
        let first = (cap - self.next).min(data.len());
        self.buf[self.next..self.next + first].copy_from_slice(&data[..first]);
        let rest = data.len() - first;
        self.buf[..rest].copy_from_slice(&data[first..]);
        if self.next + data.len() >= cap {
            self.full = true;
        }
        self.next = (self.next + data.len()) % cap;
    }

    fn contents(&self) -> Vec<u8> {
        if self.full {
            let mut out = Vec::with_capacity(self.buf.len());
            out.extend_from_slice(&self.buf[self.next..]);
            out.extend_from_slice(&self.buf[..self.next]);
            out
        } else {
            self.buf[..self.next].to_vec()
        }
    }
}

/// Skips the continuation bytes a cut in the middle of a character leaves at the start.
fn skip_continuation(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take(3).take_while(|&&b| b & 0xC0 == 0x80).count();
    &bytes[skip..]
}

fn first_chars(text: &str, n: usize) -> String {
    match text.char_indices().nth(n) {
        Some((i, _)) => text[..i].to_string(),
        None => text.to_string(),
    }
}

fn last_chars(text: &str, n: usize) -> &str {
    if n == 0 {
        return "";
    }
    match text.char_indices().rev().nth(n - 1) {
        Some((i, _)) => &text[i..],
        None => text,
    }
}

/// `1234567` → `1,234,567`, for byte counts.
pub fn thousands(n: u64) -> String {
    toolbelt_core::thousands(usize::try_from(n).unwrap_or(usize::MAX))
}

/// `text` on one line, cut to `max` characters.
pub fn one_line(text: &str, max: usize) -> String {
    let flat: String = text.chars().map(|c| if c == '\n' { ' ' } else { c }).collect();
    match flat.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &flat[..i]),
        None => flat,
    }
}

/// Turns chunks of bytes into text for live events without splitting a character between
/// two events: an incomplete sequence at a chunk's end waits for the next chunk.
#[derive(Debug, Default)]
pub struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    /// The text of `chunk` (plus what the previous chunk left), minus a trailing incomplete
    /// character.
    pub fn feed(&mut self, chunk: &[u8]) -> String {
        let joined;
        let bytes = if self.pending.is_empty() {
            chunk
        } else {
            self.pending.extend_from_slice(chunk);
            joined = std::mem::take(&mut self.pending);
            &joined[..]
        };
        let cut = complete_prefix(bytes);
        let text = String::from_utf8_lossy(&bytes[..cut]).into_owned();
        self.pending = bytes[cut..].to_vec();
        text
    }

    /// What is left at the end of the stream.
    pub fn finish(&mut self) -> String {
        String::from_utf8_lossy(&std::mem::take(&mut self.pending)).into_owned()
    }
}

/// The length of `bytes` without a trailing incomplete UTF-8 sequence.
fn complete_prefix(bytes: &[u8]) -> usize {
    let len = bytes.len();
    for back in 1..=len.min(3) {
        let b = bytes[len - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back for the lead
        }
        let need = match b {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => 1,
        };
        return if need > back { len - back } else { len };
    }
    len
}

/// Where the whole output goes once it is too long to keep.
#[derive(Debug)]
enum Spill {
    /// Not needed yet.
    Idle(SpillTarget),
    /// Every byte so far is in this file.
    Open { file: tokio::fs::File, path: PathBuf },
    /// The file could not be written (the reason).
    Failed(String),
}

/// A command's output: both streams, interleaved, live events and the spill file.
#[derive(Debug)]
pub struct Capture {
    /// Both streams in arrival order.
    pub combined: HeadTail,
    /// Standard output.
    pub stdout: HeadTail,
    /// Standard error.
    pub stderr: HeadTail,
    events: [Utf8Chunks; 2],
    spill: Spill,
}

/// Where the full output of a call ended up, when it was needed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spilled {
    /// The output fit; no file.
    No,
    /// Every byte is in this file.
    Saved(PathBuf),
    /// Saving failed, for this reason.
    Failed(String),
}

impl Capture {
    /// An empty capture sized for `budget` characters, spilling to `target`.
    pub fn new(budget: usize, target: SpillTarget) -> Self {
        Self {
            combined: HeadTail::for_budget(budget),
            stdout: HeadTail::for_budget(budget / 2),
            stderr: HeadTail::for_budget(budget / 2),
            events: Default::default(),
            spill: Spill::Idle(target),
        }
    }

    /// Takes a chunk from `stream`: streams it as an event, keeps what the budget allows
    /// and writes it to the spill file once there is one.
    pub async fn push(&mut self, stream: OutputStream, data: &[u8], cx: &ToolContext) {
        if cx.is_streaming() {
            let index = usize::from(stream == OutputStream::Stderr);
            let text = self.events[index].feed(data);
            if !text.is_empty() {
                cx.output(stream, text);
            }
        }
        match stream {
            OutputStream::Stdout => self.stdout.push(data),
            OutputStream::Stderr => self.stderr.push(data),
        }
        if self.combined.total() + data.len() as u64 > self.combined.head_cap as u64 {
            self.start_spill().await;
        }
        self.write_spill(data).await;
        self.combined.push(data);
    }

    /// Flushes the last partial characters of the live events.
    pub fn finish_events(&mut self, cx: &ToolContext) {
        if cx.is_streaming() {
            for (stream, chunks) in [(OutputStream::Stdout, 0), (OutputStream::Stderr, 1)] {
                let rest = self.events[chunks].finish();
                if !rest.is_empty() {
                    cx.output(stream, rest);
                }
            }
        }
    }

    /// Makes sure every byte is in a file when `needed` (the text shown was cut), flushes
    /// it, and says where it is. A file started for output that in the end was shown whole
    /// cannot happen: a spill starts only past what the budget can show.
    pub async fn settle(&mut self, needed: bool) -> Spilled {
        if needed {
            self.start_spill().await;
        }
        match &mut self.spill {
            Spill::Idle(_) => Spilled::No,
            Spill::Failed(reason) => Spilled::Failed(reason.clone()),
            Spill::Open { file, path } => match file.flush().await {
                Ok(()) => Spilled::Saved(path.clone()),
                Err(e) => Spilled::Failed(e.to_string()),
            },
        }
    }

    async fn start_spill(&mut self) {
        let Spill::Idle(target) = &self.spill else { return };
        self.spill = match target.create() {
            Ok((file, path)) => {
                let mut file = tokio::fs::File::from_std(file);
                match file.write_all(self.combined.head()).await {
                    Ok(()) => Spill::Open { file, path },
                    Err(e) => Spill::Failed(e.to_string()),
                }
            }
            Err(reason) => Spill::Failed(reason),
        };
    }

    async fn write_spill(&mut self, data: &[u8]) {
        if let Spill::Open { file, .. } = &mut self.spill
            && let Err(e) = file.write_all(data).await
        {
            self.spill = Spill::Failed(e.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_head_and_tail_and_counts_the_middle() {
        let mut ht = HeadTail::with_caps(4, 3);
        for chunk in [&b"abcdef"[..], b"ghij", b"k"] {
            ht.push(chunk);
        }
        assert_eq!(ht.total(), 11);
        assert!(!ht.is_whole());
        assert_eq!(ht.head(), b"abcd");
        assert_eq!(ht.tail.contents(), b"ijk");
        let mut ring = Ring::new(4);
        ring.push(b"ab");
        assert_eq!(ring.contents(), b"ab");
        ring.push(b"cdef");
        assert_eq!(ring.contents(), b"cdef");
        ring.push(b"g");
        assert_eq!(ring.contents(), b"defg");
        ring.push(b"0123456789");
        assert_eq!(ring.contents(), b"6789");
    }

    #[test]
    fn renders_within_the_budget() {
        let mut ht = HeadTail::for_budget(100);
        ht.push("é".repeat(1000).as_bytes());
        let r = ht.render(100);
        assert!(r.cut);
        assert!(r.text.chars().count() <= 100, "{}", r.text.chars().count());
        assert!(r.text.starts_with("éé") && r.text.ends_with("éé"));
        assert!(r.text.contains("bytes omitted"), "{}", r.text);

        let mut small = HeadTail::for_budget(100);
        small.push(b"short");
        assert_eq!(small.render(100), Rendered { text: "short".into(), cut: false });
    }

    #[test]
    fn events_never_split_a_character() {
        let mut chunks = Utf8Chunks::default();
        let bytes = "aé€😀".as_bytes();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&chunks.feed(std::slice::from_ref(b)));
        }
        out.push_str(&chunks.finish());
        assert_eq!(out, "aé€😀");
        assert_eq!(complete_prefix(b"ab\xe2\x82"), 2);
        assert_eq!(complete_prefix(b"ab\xe2\x82\xac"), 5);
        assert_eq!(complete_prefix(b"\xff"), 1);
    }

    #[test]
    fn numbers_read_with_separators() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(12), "12");
    }
}
