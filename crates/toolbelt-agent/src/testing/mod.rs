//! Model providers for tests and benchmarks (the `testing` feature).
//!
//! * [`ScriptedServer`]: a real HTTP server on a loopback port speaking the real OpenAI Chat
//!   Completions or Anthropic Messages streaming protocol, answering [`Turn`] by turn and
//!   recording every request. It runs on a thread of its own, so a test can point a spawned
//!   process at it (its [`ScriptedServer::env`]) and wait for that process synchronously.
//! * [`InstantProvider`]: an in-process [`crate::Provider`] answering scripted replies with
//!   no I/O at all.

mod instant;
mod script;

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use axum::body::Body;
use axum::extract::State;
use axum::http::{Response, StatusCode};
use serde_json::Value;

pub use instant::{InstantProvider, text_reply, tool_reply};
pub use script::{Protocol, ScriptedCall, Turn};

use crate::config::{ProviderConfig, ProviderKind};

/// The model name scripted servers' configurations and environments use.
pub const SCRIPTED_MODEL: &str = "scripted-model";

/// `at` as an HTTP date, for a `retry-after` that names a time.
pub fn http_date(at: SystemTime) -> String {
    crate::providers::http_date(at)
}

/// One request a scripted server received.
#[derive(Debug, Clone)]
pub struct RecordedRequest {
    /// `POST`, …
    pub method: String,
    /// The path (`/v1/chat/completions`).
    pub path: String,
    /// Its headers, names in lower case (a repeated header's last value).
    pub headers: BTreeMap<String, String>,
    /// Its body as JSON (a JSON string of the text when it was not JSON).
    pub body: Value,
    /// When it arrived.
    pub received: Instant,
}

impl RecordedRequest {
    /// The value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }

    /// The body's `messages`.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"].as_array().map(Vec::as_slice).unwrap_or_default()
    }
}

#[derive(Debug)]
struct Shared {
    protocol: Protocol,
    turns: Mutex<VecDeque<Turn>>,
    requests: Mutex<Vec<RecordedRequest>>,
    scripted: Mutex<usize>,
}

/// A loopback model server answering a script (see the module's documentation). Dropping it
/// stops it, cutting any reply still streaming.
#[derive(Debug)]
pub struct ScriptedServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl ScriptedServer {
    /// A server speaking `protocol` on `127.0.0.1`, answering `turns` in order.
    pub fn start(protocol: Protocol, turns: impl IntoIterator<Item = Turn>) -> std::io::Result<Self> {
        let turns: VecDeque<Turn> = turns.into_iter().collect();
        let scripted = Mutex::new(turns.len());
        let shared = Arc::new(Shared { protocol, turns: Mutex::new(turns), requests: Mutex::default(), scripted });
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let app = axum::Router::new().fallback(answer).with_state(Arc::clone(&shared));
        let thread = std::thread::Builder::new().name("scripted-model-server".into()).spawn(move || {
            runtime.block_on(async move {
                let Ok(listener) = tokio::net::TcpListener::from_std(listener) else { return };
                // Returning drops the runtime, and with it every connection still open.
                tokio::select! {
                    _ = axum::serve(listener, app) => {}
                    _ = stopped => {}
                }
            });
        })?;
        Ok(Self { shared, addr, stop: Some(stop), thread: Some(thread) })
    }

    /// An OpenAI Chat Completions server.
    pub fn openai(turns: impl IntoIterator<Item = Turn>) -> std::io::Result<Self> {
        Self::start(Protocol::OpenAi, turns)
    }

    /// An Anthropic Messages server.
    pub fn anthropic(turns: impl IntoIterator<Item = Turn>) -> std::io::Result<Self> {
        Self::start(Protocol::Anthropic, turns)
    }

    /// The base URL to configure: `http://127.0.0.1:PORT/v1` for OpenAI (whose paths follow
    /// it), `http://127.0.0.1:PORT` for Anthropic.
    pub fn base_url(&self) -> String {
        match self.shared.protocol {
            Protocol::OpenAi => format!("http://{}/v1", self.addr),
            Protocol::Anthropic => format!("http://{}", self.addr),
        }
    }

    /// A provider configuration pointing at this server, model [`SCRIPTED_MODEL`], its key
    /// read from `api_key_env` when given.
    pub fn config(&self, name: &str, api_key_env: Option<&str>) -> ProviderConfig {
        ProviderConfig {
            name: name.to_string(),
            kind: match self.shared.protocol {
                Protocol::OpenAi => ProviderKind::OpenAi,
                Protocol::Anthropic => ProviderKind::Anthropic,
            },
            base_url: Some(self.base_url()),
            base_url_from: None,
            api_key_env: api_key_env.map(str::to_string),
            model: Some(SCRIPTED_MODEL.to_string()),
        }
    }

    /// The variables that make a process's environment-defined provider this server:
    /// `OPENAI_BASE_URL`, `OPENAI_API_KEY` and `OPENAI_MODEL` (or Anthropic's), the key being
    /// `scripted-key`.
    pub fn env(&self) -> Vec<(String, String)> {
        let prefix = match self.shared.protocol {
            Protocol::OpenAi => "OPENAI",
            Protocol::Anthropic => "ANTHROPIC",
        };
        vec![
            (format!("{prefix}_BASE_URL"), self.base_url()),
            (format!("{prefix}_API_KEY"), "scripted-key".to_string()),
            (format!("{prefix}_MODEL"), SCRIPTED_MODEL.to_string()),
        ]
    }

    /// Adds a turn at the end of the script.
    pub fn push(&self, turn: Turn) {
        lock(&self.shared.turns).push_back(turn);
        *lock(&self.shared.scripted) += 1;
    }

    /// The turns not answered yet.
    pub fn turns_left(&self) -> usize {
        lock(&self.shared.turns).len()
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }
}

impl Drop for ScriptedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn json_response(status: u16, body: &Value, retry_after: Option<&str>) -> Response<Body> {
    let mut response = Response::new(Body::from(body.to_string()));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let headers = response.headers_mut();
    headers.insert("content-type", axum::http::HeaderValue::from_static("application/json"));
    if let Some(value) = retry_after.and_then(|v| axum::http::HeaderValue::from_str(v).ok()) {
        headers.insert("retry-after", value);
    }
    response
}

/// The first user message of a request's conversation, as JSON text (whatever its shape).
fn first_user_message(body: &Value) -> String {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages.iter().find(|m| m["role"] == "user").map(|m| m["content"].to_string()).unwrap_or_default()
}

/// Records the request and answers it with the next turn (of its conversation).
async fn answer(State(shared): State<Arc<Shared>>, request: axum::extract::Request) -> Response<Body> {
    let received = Instant::now();
    let (parts, body) = request.into_parts();
    let bytes = axum::body::to_bytes(body, 64 << 20).await.unwrap_or_default();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let body: Value = serde_json::from_str(&text).unwrap_or(Value::String(text));
    let headers = parts
        .headers
        .iter()
        .map(|(k, v)| (k.as_str().to_string(), String::from_utf8_lossy(v.as_bytes()).into_owned()))
        .collect();
    let model = body["model"].as_str().unwrap_or(SCRIPTED_MODEL).to_string();
    let (method, path) = (parts.method.to_string(), parts.uri.path().to_string());
    let n = {
        let mut requests = lock(&shared.requests);
        requests.push(RecordedRequest { method: method.clone(), path: path.clone(), headers, body, received });
        requests.len()
    };
    let protocol = shared.protocol;
    let expected = match protocol {
        Protocol::OpenAi => "/v1/chat/completions",
        Protocol::Anthropic => "/v1/messages",
    };
    if method != "POST" || path != expected {
        let message = format!("Unknown request URL: {method} {path} (this scripted server answers POST {expected})");
        return json_response(404, &script::error_body(protocol, 404, &message), None);
    }
    let first = first_user_message(&lock(&shared.requests)[n - 1].body);
    let next = {
        let mut turns = lock(&shared.turns);
        turns.iter().position(|t| t.answers(&first)).and_then(|i| turns.remove(i))
    };
    let Some(turn) = next else {
        let scripted = *lock(&shared.scripted);
        let message = match lock(&shared.turns).len() {
            0 => format!(
                "the scripted server has no turn left: it was given {scripted} and this is a request beyond them; \
                 script one more turn"
            ),
            left => format!(
                "the scripted server has no turn left for this conversation (its {left} others are for other \
                 conversations); script one more turn for it"
            ),
        };
        return json_response(500, &script::error_body(protocol, 500, &message), None);
    };
    tokio::time::sleep(turn.delay).await;
    if let script::Answer::HttpError { status, message, body, retry_after } = &turn.answer {
        let body = body.clone().unwrap_or_else(|| script::error_body(protocol, *status, message));
        return json_response(*status, &body, retry_after.as_deref());
    }
    let events = script::events(protocol, &turn, &model, n);
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<String, std::io::Error>>(64);
    let stall = turn.stall;
    tokio::spawn(async move {
        for event in events {
            match event {
                Some(text) => {
                    if tx.send(Ok(text)).await.is_err() {
                        return;
                    }
                    // Each event its own chunk on the wire.
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                None => tokio::time::sleep(stall).await,
            }
        }
    });
    let stream = futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) });
    let mut response = Response::new(Body::from_stream(stream));
    let headers = response.headers_mut();
    headers.insert("content-type", axum::http::HeaderValue::from_static("text/event-stream"));
    headers.insert("cache-control", axum::http::HeaderValue::from_static("no-cache"));
    response
}
