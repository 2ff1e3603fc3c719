//! Server-sent events, as both APIs stream them: `event:` and `data:` lines, an empty line
//! ending each event. Bytes arrive in arbitrary chunks (a line, a UTF-8 character, may be
//! split between two), so whole lines are taken from a buffer as they complete.

use std::collections::VecDeque;

/// The longest line accepted: past this the stream is not what it should be.
const MAX_LINE: usize = 16 << 20;

/// One event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// Its `event:` name, when it had one.
    pub event: Option<String>,
    /// Its `data:` lines, joined by newlines.
    pub data: String,
}

/// Turns chunks of bytes into events.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    buf: Vec<u8>,
    event: Option<String>,
    data: Option<String>,
    ready: VecDeque<SseEvent>,
    /// The first line that was no SSE field (a server answering JSON, or HTML), for errors.
    pub stray: Option<String>,
}

impl SseParser {
    /// Takes more bytes; an error when a line is not UTF-8 or absurdly long.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(end) = self.buf[start..].iter().position(|&b| b == b'\n') {
            let line = self.buf[start..start + end].to_vec();
            start += end + 1;
            self.line(&line)?;
        }
        self.buf.drain(..start);
        if self.buf.len() > MAX_LINE {
            return Err(format!("a line of the event stream is longer than {MAX_LINE} bytes"));
        }
        Ok(())
    }

    /// The stream ended: a last line without its newline, and an event without its empty
    /// line, still count (some servers end that way).
    pub fn finish(&mut self) -> Result<(), String> {
        if !self.buf.is_empty() {
            let line = std::mem::take(&mut self.buf);
            self.line(&line)?;
        }
        self.dispatch();
        Ok(())
    }

    /// The next complete event.
    pub fn next(&mut self) -> Option<SseEvent> {
        self.ready.pop_front()
    }

    fn line(&mut self, line: &[u8]) -> Result<(), String> {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let line = std::str::from_utf8(line).map_err(|e| format!("the event stream is not UTF-8 text: {e}"))?;
        if line.is_empty() {
            self.dispatch();
            return Ok(());
        }
        if line.starts_with(':') {
            return Ok(());
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            "event" => self.event = Some(value.to_string()),
            "id" | "retry" => {}
            _ => {
                if self.stray.is_none() {
                    self.stray = Some(line.chars().take(300).collect());
                }
            }
        }
        Ok(())
    }

    fn dispatch(&mut self) {
        match self.data.take() {
            Some(data) => self.ready.push_back(SseEvent { event: self.event.take(), data }),
            None => self.event = None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn events(parser: &mut SseParser) -> Vec<(Option<String>, String)> {
        std::iter::from_fn(|| parser.next()).map(|e| (e.event, e.data)).collect()
    }

    const STREAM: &str = ": keep-alive\nevent: message_start\ndata: {\"a\":1}\n\ndata: {\"é\":\r\ndata: 2}\r\n\r\nid: 3\nretry: 10\ndata: [DONE]\n\n";

    fn expected() -> Vec<(Option<String>, String)> {
        vec![(Some("message_start".into()), "{\"a\":1}".into()), (None, "{\"é\":\n2}".into()), (None, "[DONE]".into())]
    }

    #[test]
    fn events_come_whole_however_the_bytes_are_cut() {
        let bytes = STREAM.as_bytes();
        for size in [1, 2, 3, 7, bytes.len()] {
            let mut parser = SseParser::default();
            for chunk in bytes.chunks(size) {
                parser.push(chunk).unwrap();
            }
            parser.finish().unwrap();
            assert_eq!(events(&mut parser), expected(), "chunks of {size}");
            assert_eq!(parser.stray, None);
        }
    }

    #[test]
    fn a_last_event_without_its_empty_line_counts_and_stray_lines_are_kept() {
        let mut parser = SseParser::default();
        parser.push(b"{\"error\": \"not a stream\"}\ndata: x").unwrap();
        assert!(parser.next().is_none());
        parser.finish().unwrap();
        assert_eq!(events(&mut parser), vec![(None, "x".to_string())]);
        assert_eq!(parser.stray.as_deref(), Some("{\"error\": \"not a stream\"}"));
    }

    #[test]
    fn bytes_that_are_not_text_are_an_error() {
        let mut parser = SseParser::default();
        let err = parser.push(b"data: \xff\xfe\n").unwrap_err();
        assert!(err.contains("not UTF-8"), "{err}");
    }
}
