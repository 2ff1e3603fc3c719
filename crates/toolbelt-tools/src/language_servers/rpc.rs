//! JSON-RPC 2.0 with a language server over its stdin and stdout, framed by `Content-Length`
//! headers as the LSP base protocol says.
//!
//! Why our own transport rather than a framework: a client needs only requests with a
//! deadline, notifications, and answers to the few requests a server sends back
//! (`workspace/configuration` and the like), and it must notice at once when the server dies
//! so the next call can restart it. That is this file; the message types come from
//! `lsp-types`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{
    AsyncBufRead, AsyncBufReadExt as _, AsyncRead, AsyncReadExt as _, AsyncWrite, AsyncWriteExt as _, BufReader,
};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// The largest message accepted from a server; a longer one ends the connection (a server
/// gone wrong must not make us allocate without bound).
const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Why a request got no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RpcError {
    /// The connection is closed: the server exited or broke the protocol.
    Closed,
    /// No answer within the deadline.
    Timeout,
    /// The server answered with an error.
    Server {
        /// The JSON-RPC error code.
        code: i64,
        /// Its message.
        message: String,
    },
}

/// What the server sends on its own: notifications, and requests it expects an answer to.
pub trait Inbound: Send + Sync + 'static {
    /// A notification (`textDocument/publishDiagnostics`, `window/logMessage`, …).
    fn notification(&self, method: &str, params: Value);
    /// A request from the server; Ok is the result, Err a JSON-RPC error code and message.
    fn request(&self, method: &str, params: Value) -> Result<Value, (i64, String)>;
}

type Pending = Mutex<HashMap<i64, oneshot::Sender<Result<Value, RpcError>>>>;

/// Frames waiting for the writer; past this many, sending waits (up to [`SEND_TIMEOUT`]).
const OUTBOX: usize = 1024;

/// The longest a message waits to be queued, and the longest one write to the server's
/// stdin may take: a server that stops reading its input is treated as gone (the connection
/// closes, and the next call starts the server again) rather than left to hang every call.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// One connection to a server.
///
/// Messages go out through one writer task fed by a queue: a send only queues a whole
/// frame, so a call cancelled while sending never leaves half a message on the server's
/// stdin, and the reader (which answers the server's own requests) never waits on a write
/// while the server waits on us to read.
pub struct Rpc {
    outbox: mpsc::Sender<Vec<u8>>,
    pending: Arc<Pending>,
    next_id: AtomicI64,
    closed: CancellationToken,
}

impl std::fmt::Debug for Rpc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rpc").field("closed", &self.closed.is_cancelled()).finish_non_exhaustive()
    }
}

impl Rpc {
    /// Starts reading `reader` (the server's stdout) and writing `writer` (its stdin) on
    /// tasks of their own; `inbound` gets what the server sends on its own.
    pub fn start(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        inbound: Arc<dyn Inbound>,
    ) -> Arc<Rpc> {
        let (outbox, frames) = mpsc::channel(OUTBOX);
        let rpc = Arc::new(Rpc {
            outbox: outbox.clone(),
            pending: Arc::new(Mutex::new(HashMap::new())),
            next_id: AtomicI64::new(1),
            closed: CancellationToken::new(),
        });
        tokio::spawn(write_frames(writer, frames, rpc.closed.clone()));
        let pending = rpc.pending.clone();
        let closed = rpc.closed.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            loop {
                let message = tokio::select! {
                    read = read_message(&mut reader) => match read {
                        Ok(Some(message)) => message,
                        Ok(None) => break,
                        Err(e) => {
                            tracing::debug!(error = %e, "language server connection broke");
                            break;
                        }
                    },
                    () = closed.cancelled() => break,
                };
                if let Some(reply) = dispatch(message, &pending, inbound.as_ref()) {
                    // Never wait here: a full queue means the server is not reading.
                    if outbox.try_send(frame(&reply)).is_err() {
                        break;
                    }
                }
            }
            closed.cancel();
            let waiting: Vec<_> = pending.lock().unwrap_or_else(PoisonError::into_inner).drain().collect();
            for (_, tx) in waiting {
                let _ = tx.send(Err(RpcError::Closed));
            }
        });
        rpc
    }

    /// Whether the connection is closed.
    pub fn is_closed(&self) -> bool {
        self.closed.is_cancelled()
    }

    /// Completes when the connection closes.
    pub async fn closed(&self) {
        self.closed.cancelled().await;
    }

    /// Closes the connection (the server exited): waiting requests fail at once.
    pub fn close(&self) {
        self.closed.cancel();
    }

    /// Sends a request and waits up to `timeout` for its answer (cancelling it on the server
    /// when the deadline passes).
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RpcError> {
        if self.is_closed() {
            return Err(RpcError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id, tx);
        // Taken out again however this ends, a cancelled call included.
        let _forget = Forget { pending: &self.pending, id };
        if self.send(&message(Some(id), method, params)).await.is_err() {
            return Err(RpcError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(RpcError::Closed),
            Err(_) => {
                let _ = self.notify("$/cancelRequest", json!({"id": id})).await;
                Err(RpcError::Timeout)
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.send(&message(None, method, params)).await
    }

    /// Queues a message for the writer.
    async fn send(&self, message: &Value) -> Result<(), RpcError> {
        if self.is_closed() {
            return Err(RpcError::Closed);
        }
        match self.outbox.send_timeout(frame(message), SEND_TIMEOUT).await {
            Ok(()) => Ok(()),
            Err(_) => {
                self.closed.cancel();
                Err(RpcError::Closed)
            }
        }
    }
}

/// Takes a request's waiter out of the pending map when dropped.
struct Forget<'a> {
    pending: &'a Pending,
    id: i64,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.id);
    }
}

/// A request (with `id`) or a notification; `params` left out when null, as JSON-RPC 2.0
/// allows only an object or an array there.
fn message(id: Option<i64>, method: &str, params: Value) -> Value {
    let mut message = json!({"jsonrpc": "2.0", "method": method});
    if let Some(id) = id {
        message["id"] = json!(id);
    }
    if !params.is_null() {
        message["params"] = params;
    }
    message
}

/// A message framed with its `Content-Length` header.
fn frame(message: &Value) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    frame.extend_from_slice(&body);
    frame
}

/// Writes queued frames in order, each within [`SEND_TIMEOUT`]; a failed or stuck write
/// closes the connection.
async fn write_frames(
    mut writer: impl AsyncWrite + Send + Unpin,
    mut frames: mpsc::Receiver<Vec<u8>>,
    closed: CancellationToken,
) {
    loop {
        let frame = tokio::select! {
            frame = frames.recv() => match frame {
                Some(frame) => frame,
                None => break,
            },
            () = closed.cancelled() => break,
        };
        let written = async {
            writer.write_all(&frame).await?;
            writer.flush().await
        };
        match tokio::time::timeout(SEND_TIMEOUT, written).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) | Err(_) => {
                closed.cancel();
                break;
            }
        }
    }
    let _ = writer.shutdown().await;
}

/// Routes one message: a response to its waiting request, a notification or a request to
/// `inbound`. Returns the reply to send for a request.
fn dispatch(message: Value, pending: &Pending, inbound: &dyn Inbound) -> Option<Value> {
    let method = message.get("method").and_then(Value::as_str).map(str::to_owned);
    let id = message.get("id").cloned().filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => {
            let params = message.get("params").cloned().unwrap_or(Value::Null);
            Some(match inbound.request(&method, params) {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, text)) => json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": text}}),
            })
        }
        (Some(method), None) => {
            inbound.notification(&method, message.get("params").cloned().unwrap_or(Value::Null));
            None
        }
        (None, Some(id)) => {
            let id = id.as_i64()?;
            let tx = pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id)?;
            let answer = match message.get("error") {
                Some(error) if !error.is_null() => Err(RpcError::Server {
                    code: error.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: error.get("message").and_then(Value::as_str).unwrap_or("").to_owned(),
                }),
                _ => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let _ = tx.send(answer);
            None
        }
        (None, None) => None,
    }
}

/// Reads one framed message; Ok(None) at the end of the stream.
async fn read_message(reader: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Option<Value>> {
    let mut length: Option<usize> = None;
    let mut line = String::new();
    loop {
        line.clear();
        // At most one byte past the limit is read: a header with no end is refused below.
        if (&mut *reader).take(1025).read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let header = line.trim_end_matches(['\r', '\n']);
        if header.is_empty() {
            if length.is_some() {
                break;
            }
            // Blank lines before a header: some servers print a stray newline.
            continue;
        }
        if line.len() > 1024 {
            return Err(std::io::Error::other("a header line longer than 1 KiB"));
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().ok();
        }
    }
    let length = length.unwrap_or(0);
    if length > MAX_MESSAGE {
        return Err(std::io::Error::other(format!("a message of {length} bytes")));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    serde_json::from_slice(&body).map(Some).map_err(|e| std::io::Error::other(format!("not JSON: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Quiet;
    impl Inbound for Quiet {
        fn notification(&self, _: &str, _: Value) {}
        fn request(&self, method: &str, _: Value) -> Result<Value, (i64, String)> {
            if method == "workspace/configuration" { Ok(json!([null])) } else { Err((-32601, "unknown".into())) }
        }
    }

    #[tokio::test]
    async fn frames_round_trip_and_a_closed_peer_fails_waiting_requests() {
        let (client_end, server_end) = tokio::io::duplex(1 << 16);
        let (client_read, client_write) = tokio::io::split(client_end);
        let rpc = Rpc::start(client_read, client_write, Arc::new(Quiet));
        let (server_read, mut server_write) = tokio::io::split(server_end);
        let server = tokio::spawn(async move {
            let mut reader = BufReader::new(server_read);
            let request = read_message(&mut reader).await.unwrap().unwrap();
            assert_eq!(request["method"], "initialize");
            // A server request first, then the answer, split across writes.
            let ask = br#"{"jsonrpc":"2.0","id":"a","method":"workspace/configuration","params":{}}"#;
            server_write.write_all(format!("Content-Length: {}\r\n\r\n", ask.len()).as_bytes()).await.unwrap();
            server_write.write_all(ask).await.unwrap();
            let reply = read_message(&mut reader).await.unwrap().unwrap();
            assert_eq!(reply["id"], "a");
            assert_eq!(reply["result"], json!([null]));
            let body = json!({"jsonrpc": "2.0", "id": request["id"], "result": {"ok": "é"}}).to_string();
            let frame = format!("Content-Length: {}\r\nContent-Type: x\r\n\r\n{body}", body.len());
            let (a, b) = frame.as_bytes().split_at(10);
            server_write.write_all(a).await.unwrap();
            server_write.write_all(b).await.unwrap();
            // Then it hangs up while a second request waits.
            let _second = read_message(&mut reader).await.unwrap().unwrap();
            drop(server_write);
        });
        let answer = rpc.request("initialize", json!({}), Duration::from_secs(5)).await.unwrap();
        assert_eq!(answer, json!({"ok": "é"}));
        let second = rpc.request("shutdown", Value::Null, Duration::from_secs(5)).await;
        assert_eq!(second, Err(RpcError::Closed));
        server.await.unwrap();
        assert!(rpc.is_closed());
    }

    #[tokio::test]
    async fn a_call_cancelled_while_its_message_is_written_leaves_the_stream_whole() {
        // A pipe of 64 bytes: a large message takes many writes, as the server reads.
        let (client_end, server_end) = tokio::io::duplex(64);
        let (r, w) = tokio::io::split(client_end);
        let rpc = Rpc::start(r, w, Arc::new(Quiet));
        let big = json!({"text": "x".repeat(20_000)});
        // Given up on long before the server has read it all.
        let _ = tokio::time::timeout(Duration::from_millis(1), rpc.notify("textDocument/didOpen", big)).await;
        let _ = tokio::time::timeout(Duration::from_millis(1), rpc.request("hover", json!({}), Duration::from_secs(5)))
            .await;
        rpc.notify("exit", Value::Null).await.unwrap();
        let (server_read, _server_write) = tokio::io::split(server_end);
        let mut reader = BufReader::new(server_read);
        let mut methods = Vec::new();
        for _ in 0..3 {
            let message = read_message(&mut reader).await.unwrap().unwrap();
            methods.push(message["method"].as_str().unwrap().to_owned());
            if message["method"] == "exit" {
                // No `params: null`: JSON-RPC allows only an object or an array there.
                assert!(message.get("params").is_none(), "{message}");
            }
        }
        assert_eq!(methods, ["textDocument/didOpen", "hover", "exit"]);
    }

    #[tokio::test]
    async fn an_unanswered_request_times_out() {
        let (client_end, _server_end) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(client_end);
        let rpc = Rpc::start(r, w, Arc::new(Quiet));
        let answer = rpc.request("hover", json!({}), Duration::from_millis(50)).await;
        assert_eq!(answer, Err(RpcError::Timeout));
    }
}
