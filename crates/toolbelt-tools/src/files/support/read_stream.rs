//! Reading a window of a file too large to decode whole, in bounded memory.
//!
//! The file is scanned once in fixed-size chunks: the lines inside the window are kept (each
//! cut to the line limit as it arrives, so even a gigabyte-long line costs a few kilobytes),
//! every byte goes through the streaming content hash for the ledger, and the line count
//! comes for free. UTF-8 and single-byte legacy encodings stream line by line; UTF-16 does
//! not (its line breaks are two bytes) and is refused with a way out.

use std::io::Read as _;

use toolbelt_core::{ToolContext, ToolError};
use xxhash_rust::xxh3::Xxh3;

use crate::files::support::ledger::{FileLedger, FileState, hash_hex, mtime_ms};
use crate::files::support::read_output::{MAX_LINE_CHARS, ReadOutput, binary, cut_line};
use crate::fs::error::io_error;
use crate::fs::roots::{Located, OpenRoots};

const CHUNK: usize = 256 * 1024;
/// Bytes of one line kept: enough for [`MAX_LINE_CHARS`] characters of any UTF-8.
const MAX_LINE_BYTES: usize = MAX_LINE_CHARS * 4;

/// Reads lines `offset..offset+limit` (1-based) of a large file.
pub fn read_large(
    ws: &OpenRoots,
    cx: &ToolContext,
    real: &Located,
    name: String,
    offset: usize,
    limit: usize,
) -> Result<ReadOutput, ToolError> {
    let meta = ws.metadata(real)?;
    let mut file = ws.open_file(real)?;
    let mut hasher = Xxh3::new();
    let mut buf = vec![0u8; CHUNK];
    let mut encoding: Option<&'static encoding_rs::Encoding> = None;
    let mut scan =
        Scan { line_no: 1, current: Vec::new(), dropped: 0, pending: false, window: Vec::new(), offset, limit };
    let mut total_bytes = 0u64;
    loop {
        if cx.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let n = file.read(&mut buf).map_err(|e| io_error(&real.abs, &e))?;
        if n == 0 {
            break;
        }
        let chunk = &buf[..n];
        if encoding.is_none() {
            encoding = Some(detect(chunk, &name, meta.len())?);
        }
        hasher.update(chunk);
        total_bytes += n as u64;
        scan.feed(chunk);
    }
    scan.finish();
    let mtime = meta.modified().ok().map(|t| t.into_std());
    let state = FileState { hash: hash_hex(hasher.digest128()), size: total_bytes, mtime_ms: mtime_ms(mtime) };
    FileLedger::record(cx, &real.abs, state);

    let total = scan.line_no - 1;
    if total == 0 {
        return Ok(ReadOutput::text(name, total_bytes, offset, &[], 0));
    }
    if offset > total {
        return Err(ToolError::failed(format!(
            "{name} has {total} lines; offset {offset} is past the end. Read from an offset up to {total}."
        )));
    }
    let encoding = encoding.unwrap_or(encoding_rs::UTF_8);
    let lines: Vec<String> =
        scan.window.iter().map(|(bytes, dropped)| decode_line(bytes, *dropped, encoding)).collect();
    let shown: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut out = ReadOutput::text(name, total_bytes, offset, &shown, total);
    out.streamed = true;
    if encoding != encoding_rs::UTF_8 {
        out.encoding = Some(encoding.name().to_string());
    }
    Ok(out)
}

/// The encoding to decode lines with, from the first chunk; refuses binary and UTF-16.
fn detect(chunk: &[u8], name: &str, size: u64) -> Result<&'static encoding_rs::Encoding, ToolError> {
    if let Some((enc, _)) = encoding_rs::Encoding::for_bom(chunk) {
        if enc == encoding_rs::UTF_8 {
            return Ok(enc);
        }
        return Err(ToolError::failed(format!(
            "{name} is {} text larger than 32 MB, which cannot be read in slices; convert a copy to UTF-8 \
             (`iconv -f {} -t UTF-8 {name} > copy.txt`) and read that",
            enc.name(),
            enc.name()
        )));
    }
    if chunk.contains(&0) || content_inspector::inspect(chunk).is_binary() {
        return Err(binary(name, crate::formats::encoding::sniff(chunk), size));
    }
    // Valid UTF-8 up to a character cut by the chunk's end counts as UTF-8.
    match std::str::from_utf8(chunk) {
        Ok(_) => Ok(encoding_rs::UTF_8),
        Err(e) if e.error_len().is_none() => Ok(encoding_rs::UTF_8),
        Err(_) => {
            let mut d = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
            d.feed(chunk, false);
            Ok(d.guess(None, chardetng::Utf8Detection::Deny))
        }
    }
}

fn decode_line(bytes: &[u8], dropped: usize, encoding: &'static encoding_rs::Encoding) -> String {
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    let (text, _) = encoding.decode_without_bom_handling(bytes);
    let cut = cut_line(&text).into_owned();
    if dropped > 0 {
        // The line was already cut while scanning; say how much more there was.
        let kept: String = text.chars().take(MAX_LINE_CHARS).collect();
        let extra = text.chars().count().saturating_sub(MAX_LINE_CHARS);
        return format!("{kept}… [line cut: {} more bytes]", dropped + extra);
    }
    cut
}

/// The line scanner: keeps the window's lines, each capped.
struct Scan {
    line_no: usize,
    current: Vec<u8>,
    dropped: usize,
    /// Whether the current line has any byte yet (in or out of the window).
    pending: bool,
    window: Vec<(Vec<u8>, usize)>,
    offset: usize,
    limit: usize,
}

impl Scan {
    fn in_window(&self) -> bool {
        self.line_no >= self.offset && self.line_no < self.offset.saturating_add(self.limit)
    }

    fn feed(&mut self, mut chunk: &[u8]) {
        while !chunk.is_empty() {
            let (part, rest, ends_line) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (&chunk[..i], &chunk[i + 1..], true),
                None => (chunk, &[][..], false),
            };
            self.pending |= !part.is_empty();
            if self.in_window() {
                let room = MAX_LINE_BYTES.saturating_sub(self.current.len());
                let take = room.min(part.len());
                self.current.extend_from_slice(&part[..take]);
                self.dropped += part.len() - take;
            }
            if ends_line {
                self.end_line();
            }
            chunk = rest;
        }
    }

    fn end_line(&mut self) {
        if self.in_window() {
            self.window.push((std::mem::take(&mut self.current), std::mem::take(&mut self.dropped)));
        }
        self.line_no += 1;
        self.pending = false;
    }

    /// A last line without a newline still counts.
    fn finish(&mut self) {
        if self.pending {
            self.end_line();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(chunks: &[&[u8]], offset: usize, limit: usize) -> (usize, Vec<(Vec<u8>, usize)>) {
        let mut s =
            Scan { line_no: 1, current: Vec::new(), dropped: 0, pending: false, window: Vec::new(), offset, limit };
        for c in chunks {
            s.feed(c);
        }
        s.finish();
        (s.line_no - 1, s.window)
    }

    #[test]
    fn counts_lines_across_chunks_and_keeps_the_window() {
        let (total, window) = scan(
            &[
                b"one
tw",
                b"o
three
four",
            ],
            2,
            2,
        );
        assert_eq!(total, 4);
        assert_eq!(window, vec![(b"two".to_vec(), 0), (b"three".to_vec(), 0)]);
        let (total, _) = scan(
            &[b"a
b
"],
            1,
            1,
        );
        assert_eq!(total, 2);
    }

    #[test]
    fn huge_lines_are_capped_while_scanning() {
        let big = vec![b'x'; MAX_LINE_BYTES + 10];
        let (_, window) = scan(
            &[
                &big, b"
next",
            ],
            1,
            1,
        );
        assert_eq!(window[0].0.len(), MAX_LINE_BYTES);
        assert_eq!(window[0].1, 10);
    }
}
