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
use tokio::sync::oneshot;
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

/// One connection to a server.
pub struct Rpc {
    writer: tokio::sync::Mutex<Box<dyn AsyncWrite + Send + Unpin>>,
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
    /// Starts reading `reader` (the server's stdout) on a task of its own; `inbound` gets
    /// what the server sends on its own.
    pub fn start(
        reader: impl AsyncRead + Send + Unpin + 'static,
        writer: impl AsyncWrite + Send + Unpin + 'static,
        inbound: Arc<dyn Inbound>,
    ) -> Arc<Rpc> {
        let rpc = Arc::new(Rpc {
            writer: tokio::sync::Mutex::new(Box::new(writer)),
            pending: Arc::new(Mutex::new(HashMap::new())),
            next_id: AtomicI64::new(1),
            closed: CancellationToken::new(),
        });
        let weak = Arc::downgrade(&rpc);
        let pending = rpc.pending.clone();
        let closed = rpc.closed.clone();
        tokio::spawn(async move {
            let mut reader = BufReader::new(reader);
            loop {
                let message = match read_message(&mut reader).await {
                    Ok(Some(message)) => message,
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(error = %e, "language server connection broke");
                        break;
                    }
                };
                if let Some(reply) = dispatch(message, &pending, inbound.as_ref()) {
                    let Some(rpc) = weak.upgrade() else { break };
                    if rpc.send(&reply).await.is_err() {
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

    /// Sends a request and waits up to `timeout` for its answer (cancelling it on the server
    /// when the deadline passes).
    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value, RpcError> {
        if self.is_closed() {
            return Err(RpcError::Closed);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap_or_else(PoisonError::into_inner).insert(id, tx);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if self.send(&message).await.is_err() {
            self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
            return Err(RpcError::Closed);
        }
        match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(answer)) => answer,
            Ok(Err(_)) => Err(RpcError::Closed),
            Err(_) => {
                self.pending.lock().unwrap_or_else(PoisonError::into_inner).remove(&id);
                let _ = self.notify("$/cancelRequest", json!({"id": id})).await;
                Err(RpcError::Timeout)
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> Result<(), RpcError> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params})).await
    }

    async fn send(&self, message: &Value) -> Result<(), RpcError> {
        if self.is_closed() {
            return Err(RpcError::Closed);
        }
        let body = serde_json::to_vec(message).map_err(|_| RpcError::Closed)?;
        let mut frame = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
        frame.extend_from_slice(&body);
        let mut writer = self.writer.lock().await;
        let written = async {
            writer.write_all(&frame).await?;
            writer.flush().await
        };
        written.await.map_err(|_| {
            self.closed.cancel();
            RpcError::Closed
        })
    }
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
        if reader.read_line(&mut line).await? == 0 {
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
    async fn an_unanswered_request_times_out() {
        let (client_end, _server_end) = tokio::io::duplex(1 << 16);
        let (r, w) = tokio::io::split(client_end);
        let rpc = Rpc::start(r, w, Arc::new(Quiet));
        let answer = rpc.request("hover", json!({}), Duration::from_millis(50)).await;
        assert_eq!(answer, Err(RpcError::Timeout));
    }
}
