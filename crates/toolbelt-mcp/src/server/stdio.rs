//! MCP over stdio: newline-delimited JSON-RPC, each line judged before rmcp sees it.
//!
//! rmcp's own stdio transport drops a line that is not JSON, or longer than its cap, without
//! a word, and answers JSON of the wrong shape without an `id`. JSON-RPC 2.0 wants an answer
//! to each: `-32700 Parse error` for a line that is not JSON (invalid UTF-8 included),
//! `-32600 Invalid Request` for JSON that is not a message, with `"id": null` unless the id
//! could be read, and `-32602 Invalid params` for a request whose params are of the wrong
//! type, including those rmcp would drop or read as another message (`super::params`). [`Lines`] frames the input itself, answers those with what was wrong and
//! what to send instead, and hands rmcp only messages it can read. A line longer than
//! [`MAX_LINE`] is answered as soon as it passes the cap; the rest of it is skipped as it
//! arrives, never held in memory.
//!
//! `receive` is polled inside rmcp's `select!`, so it may be dropped at any await: a partial
//! line stays in the buffer, and an answer is queued in [`Out`] before anything awaits (a
//! message written halfway is finished by the next flush first), so no message is lost or cut
//! into another.

use std::io;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{CallToolRequest, ClientJsonRpcMessage, ClientRequest, JsonRpcRequest};
use rmcp::service::TxJsonRpcMessage;
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncRead, AsyncWrite, BufReader};

use toolbelt_core::json_kind;

mod in_flight;
mod out;

use in_flight::{Held, InFlight};
use out::Out;

/// The longest line read: 16 MiB.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// The line buffer, grown past this, is given back after its line.
const KEEP_CAPACITY: usize = 1024 * 1024;

/// JSON-RPC's code for input that is not JSON.
const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's code for JSON that is not a valid message.
const INVALID_REQUEST: i64 = -32600;

/// Newline-delimited JSON-RPC over a reader and a writer, as an rmcp server transport.
pub(super) struct Lines<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    /// Dropping the rest of a line that passed the cap.
    skipping: bool,
    /// An answer of ours is queued and maybe not all written.
    flushing: bool,
    out: Arc<Out<W>>,
    /// The requests being answered.
    in_flight: Arc<InFlight>,
    /// Requests read while [`in_flight::MAX_IN_FLIGHT`] were being answered.
    held: Held,
    /// The input ended (held requests are still handed on, one answer at a time).
    ended: bool,
}

impl<R: AsyncRead + Unpin, W: AsyncWrite + Unpin> Lines<R, W> {
    pub(super) fn new(read: R, write: W) -> Self {
        Self {
            read: BufReader::with_capacity(64 * 1024, read),
            line: Vec::new(),
            skipping: false,
            flushing: false,
            out: Arc::new(Out::new(write)),
            in_flight: Arc::default(),
            held: Held::default(),
            ended: false,
        }
    }

    /// Reads up to the next newline into `self.line`, at most [`MAX_LINE`] bytes.
    async fn read_line(&mut self) -> io::Result<Read> {
        loop {
            let (used, step) = {
                let available = self.read.fill_buf().await?;
                if available.is_empty() {
                    return Ok(Read::End);
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let take = newline.map_or(available.len(), |i| i + 1);
                if self.skipping {
                    (take, if newline.is_some() { Step::EndSkip } else { Step::More })
                } else if self.line.len() + take > MAX_LINE + 1 {
                    self.line.clear();
                    (take, if newline.is_some() { Step::TooLong } else { Step::TooLongSkip })
                } else {
                    self.line.extend_from_slice(&available[..take]);
                    (take, if newline.is_some() { Step::Line } else { Step::More })
                }
            };
            self.read.consume(used);
            match step {
                Step::More => {}
                Step::EndSkip => self.skipping = false,
                Step::Line => return Ok(Read::Line),
                Step::TooLong => return Ok(Read::TooLong),
                Step::TooLongSkip => {
                    self.skipping = true;
                    return Ok(Read::TooLong);
                }
            }
        }
    }

    /// Queues an answer of ours (a line) to be written before anything more is read.
    fn answer(&mut self, line: &[u8]) -> io::Result<()> {
        self.out.queue(line)?;
        self.flushing = true;
        Ok(())
    }

    /// Writes our queued answers, if any (safe to cancel: see the module's notes).
    async fn flush_answers(&mut self) -> io::Result<()> {
        if self.flushing {
            self.out.flush().await?;
            self.flushing = false;
        }
        Ok(())
    }
}

enum Read {
    Line,
    TooLong,
    End,
}

enum Step {
    More,
    EndSkip,
    Line,
    TooLong,
    TooLongSkip,
}

impl<R, W> Transport<RoleServer> for Lines<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Error = io::Error;

    fn send(&mut self, item: TxJsonRpcMessage<RoleServer>) -> impl Future<Output = io::Result<()>> + Send + 'static {
        let out = Arc::clone(&self.out);
        match &item {
            rmcp::model::JsonRpcMessage::Response(r) => self.in_flight.answered(&r.id),
            rmcp::model::JsonRpcMessage::Error(rmcp::model::JsonRpcError { id: Some(id), .. }) => {
                self.in_flight.answered(id);
            }
            _ => {}
        }
        // Queued now, in the order rmcp hands messages over; written by the first flush
        // (see `out`).
        let queued = serde_json::to_vec(&item).map_err(io::Error::other).and_then(|mut line| {
            line.push(b'\n');
            out.queue(&line)
        });
        async move {
            queued?;
            out.flush().await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            if let Err(e) = self.flush_answers().await {
                tracing::error!("cannot write to the MCP client: {e}");
                return None;
            }
            if let Some(message) = self.held.release(&self.in_flight) {
                return Some(message);
            }
            let line = if self.ended {
                if self.held.is_empty() {
                    return None;
                }
                self.in_flight.freed().await;
                continue;
            } else if self.held.is_empty() {
                self.read_line().await
            } else {
                // Reading goes on (the client's answers and notifications pass) until an
                // answer going out makes room for the oldest held request.
                let in_flight = Arc::clone(&self.in_flight);
                tokio::select! {
                    biased;
                    () = in_flight.freed() => continue,
                    line = self.read_line() => line,
                }
            };
            let read = match line {
                Ok(read) => read,
                Err(e) => {
                    tracing::error!("cannot read from the MCP client: {e}");
                    return None;
                }
            };
            match read {
                Read::End => self.ended = true,
                Read::TooLong => {
                    tracing::warn!("a message longer than {MAX_LINE} bytes was skipped");
                    let line = error_line(
                        &Value::Null,
                        INVALID_REQUEST,
                        &format!(
                            "the message is longer than {} MiB ({MAX_LINE} bytes), the limit of one line; it was \
                             skipped. Send smaller messages (put large contents in files the tools read)",
                            MAX_LINE >> 20
                        ),
                    );
                    if let Err(e) = self.answer(&line) {
                        tracing::error!("cannot write to the MCP client: {e}");
                        return None;
                    }
                }
                Read::Line => {
                    let verdict = judge(&self.line);
                    self.line.clear();
                    if self.line.capacity() > KEEP_CAPACITY {
                        self.line = Vec::new();
                    }
                    match verdict {
                        Verdict::Message(message) => match *message {
                            ClientJsonRpcMessage::Request(request)
                                if !self.held.is_empty() || !self.in_flight.try_admit(&request.id) =>
                            {
                                self.held.hold(ClientJsonRpcMessage::Request(request));
                            }
                            message if self.held.cancel(&message) => {}
                            message => return Some(message),
                        },
                        Verdict::Answer(answer) => {
                            if let Err(e) = self.answer(&answer) {
                                tracing::error!("cannot write to the MCP client: {e}");
                                return None;
                            }
                        }
                        Verdict::Skip => {}
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> io::Result<()> {
        self.out.close().await
    }
}

/// What to do with one line.
#[derive(Debug)]
enum Verdict {
    /// Hand it to rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// Answer it with this error line.
    Answer(Vec<u8>),
    /// Nothing (a blank line, or a notification or response nobody can answer).
    Skip,
}

/// A `tools/call` request, the message that comes most, read as what it is. rmcp reads a
/// request by trying each kind in turn — thirteen before `tools/call`, each failure an error
/// built and dropped — which was a tenth of a small call's cost. `None` for anything else,
/// and for a line naming `result` or `error` anywhere, which the general reading judges (a
/// request must not carry them).
fn call_tool(text: &str) -> Option<ClientJsonRpcMessage> {
    if !text.contains("\"tools/call\"") || text.contains("\"result\"") || text.contains("\"error\"") {
        return None;
    }
    let JsonRpcRequest { jsonrpc, id, request } = serde_json::from_str::<JsonRpcRequest<CallToolRequest>>(text).ok()?;
    Some(ClientJsonRpcMessage::Request(JsonRpcRequest {
        jsonrpc,
        id,
        request: ClientRequest::CallToolRequest(request),
    }))
}

/// Judges one line (with its newline).
fn judge(line: &[u8]) -> Verdict {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
    let text = match std::str::from_utf8(line) {
        Ok(text) => text,
        Err(e) => {
            let message = format!(
                "parse error: the message is not valid UTF-8 (at byte {}); send JSON text in UTF-8, one \
                 message per line",
                e.valid_up_to()
            );
            return Verdict::Answer(error_line(&Value::Null, PARSE_ERROR, &message));
        }
    };
    if text.trim().is_empty() {
        return Verdict::Skip;
    }
    let typed = match call_tool(text).map_or_else(|| serde_json::from_str::<ClientJsonRpcMessage>(text), Ok) {
        Ok(message) => {
            return match super::params::wrongly_typed(&message, text) {
                Some((id, refusal)) => Verdict::Answer(error_line(&id, i64::from(refusal.code.0), &refusal.message)),
                None => Verdict::Message(Box::new(message)),
            };
        }
        Err(e) => e,
    };
    let value = match serde_json::from_str::<Value>(text) {
        Ok(value) => value,
        Err(e) => {
            let message =
                format!("parse error: the message is not valid JSON ({e}); send one JSON-RPC message per line");
            return Verdict::Answer(error_line(&Value::Null, PARSE_ERROR, &message));
        }
    };
    let object = match &value {
        Value::Object(object) => object,
        Value::Array(_) => {
            let message = "invalid request: batches (JSON arrays) are not supported; send each message on a line of \
                           its own";
            return Verdict::Answer(error_line(&Value::Null, INVALID_REQUEST, message));
        }
        other => {
            let message = format!("invalid request: a JSON-RPC message is an object, not {}", json_kind(other));
            return Verdict::Answer(error_line(&Value::Null, INVALID_REQUEST, &message));
        }
    };
    let id = object.get("id").filter(|id| id.is_string() || id.is_i64() || id.is_u64());
    // A request rmcp could not read although its envelope is right: its params (or their
    // `_meta`) are of the wrong type.
    if let (Some(Value::String(method)), Some(id)) = (object.get("method"), id)
        && object.get("jsonrpc").and_then(Value::as_str) == Some("2.0")
        && object.get("params").is_some_and(|p| !p.is_null())
    {
        let refusal = super::params::refuse(method, object.get("params"));
        return Verdict::Answer(error_line(id, i64::from(refusal.code.0), &refusal.message));
    }
    match (object.get("method"), id) {
        (Some(Value::String(method)), None) if !object.contains_key("id") => {
            tracing::debug!("skipping a notification that cannot be read ({method}): {typed}");
            Verdict::Skip
        }
        (None, _) if object.contains_key("result") || object.contains_key("error") => {
            tracing::warn!("skipping a response from the client that cannot be read: {typed}");
            Verdict::Skip
        }
        (_, id) => {
            let message = format!(
                "invalid request: not a JSON-RPC 2.0 message ({typed}); a request is \
                 {{\"jsonrpc\": \"2.0\", \"id\": <number or string>, \"method\": <string>, \"params\": <object>}}"
            );
            Verdict::Answer(error_line(id.unwrap_or(&Value::Null), INVALID_REQUEST, &message))
        }
    }
}

/// A JSON-RPC error response, as a line.
fn error_line(id: &Value, code: i64, message: &str) -> Vec<u8> {
    let mut line = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string();
    line.push('\n');
    line.into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt as _;

    fn answer(line: &str) -> Value {
        match judge(line.as_bytes()) {
            Verdict::Answer(bytes) => serde_json::from_slice(&bytes).unwrap(),
            other => panic!("expected an answer to {line:?}, got {other:?}"),
        }
    }

    #[test]
    fn a_tool_call_read_directly_is_the_message_rmcp_reads() {
        for line in [
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"Read","arguments":{"file_path":"a"}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"Bash","arguments":{"command":"ls"},"_meta":{"progressToken":3}}}"#,
            r#"{"method":"tools/call","params":{"name":"Glob"},"id":1,"jsonrpc":"2.0"}"#,
        ] {
            let general = serde_json::to_value(serde_json::from_str::<ClientJsonRpcMessage>(line).unwrap()).unwrap();
            let direct = serde_json::to_value(call_tool(line).unwrap()).unwrap();
            assert_eq!(direct, general, "{line}");
            assert!(matches!(judge(line.as_bytes()), Verdict::Message(_)), "{line}");
        }
        // Another method naming tools/call in its params, a request carrying a result, and
        // a malformed call are left to the general reading (and its answers).
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"tools/call"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"Read"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":3}}"#,
        ] {
            assert!(call_tool(line).is_none(), "{line}");
        }
    }

    #[test]
    fn lines_that_are_not_json_are_parse_errors_with_a_null_id() {
        for line in ["garbage{\n", "{\"jsonrpc\": \"2.0\", \"id\": 1, \n"] {
            let a = answer(line);
            assert_eq!(a["error"]["code"], PARSE_ERROR, "{a}");
            assert!(a["id"].is_null() && a.as_object().unwrap().contains_key("id"), "{a}");
        }
        let Verdict::Answer(bytes) = judge(b"{\"a\": \"\xff\"}\n") else { panic!("invalid UTF-8 is answered") };
        let a: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(a["error"]["code"], PARSE_ERROR);
        assert!(a["error"]["message"].as_str().unwrap().contains("UTF-8"), "{a}");
    }

    #[test]
    fn json_that_is_not_a_message_is_an_invalid_request() {
        assert_eq!(answer("[1]")["error"]["code"], INVALID_REQUEST);
        assert_eq!(answer("42")["error"]["code"], INVALID_REQUEST);
        let a = answer(r#"{"jsonrpc": "2.0", "id": 7, "method": 5}"#);
        assert_eq!((a["id"].clone(), a["error"]["code"].clone()), (json!(7), json!(INVALID_REQUEST)), "{a}");
        assert!(answer(r#"{"id": {"x": 1}, "method": "ping"}"#)["id"].is_null());
    }

    #[test]
    fn messages_pass_and_blank_lines_are_skipped() {
        let ok = judge(b"\xEF\xBB\xBF{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\r\n");
        assert!(matches!(ok, Verdict::Message(_)), "{ok:?}");
        assert!(matches!(judge(b"  \n"), Verdict::Skip));
        assert!(matches!(judge(br#"{"jsonrpc":"2.0","method":7}"#), Verdict::Answer(_)));
        assert!(matches!(judge(br#"{"jsonrpc":"2.0","result":7}"#), Verdict::Skip));
    }

    #[tokio::test]
    async fn an_oversized_line_is_answered_and_skipped_and_the_next_one_read() {
        let (mut client, server) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server);
        let mut lines = Lines::new(server_read, server_write);
        let writer = tokio::spawn(async move {
            let chunk = vec![b'x'; 1 << 20];
            for _ in 0..(MAX_LINE >> 20) + 2 {
                client.write_all(&chunk).await.unwrap();
            }
            client.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n").await.unwrap();
            let mut answer = Vec::new();
            let mut reader = BufReader::new(&mut client);
            reader.read_until(b'\n', &mut answer).await.unwrap();
            answer
        });
        let next = lines.receive().await.unwrap();
        assert!(matches!(next, ClientJsonRpcMessage::Request(_)), "{next:?}");
        let answer: Value = serde_json::from_slice(&writer.await.unwrap()).unwrap();
        assert_eq!(answer["error"]["code"], INVALID_REQUEST);
        assert!(answer["error"]["message"].as_str().unwrap().contains("16 MiB"), "{answer}");
        assert!(lines.line.capacity() <= MAX_LINE + 1);
    }
}
