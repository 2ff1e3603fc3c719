//! A raw MCP client over Streamable HTTP for the load benchmarks: `initialize`, then
//! `tools/call`s in the session, every failure counted.
#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tokio::sync::Semaphore;

/// The HTTP side of the benchmark: one client, a cap on requests in flight, error counts.
pub struct Load {
    http: reqwest::Client,
    url: String,
    gate: Semaphore,
    /// Failed requests.
    pub errors: AtomicUsize,
    /// The first failure, in words.
    pub first_error: std::sync::Mutex<Option<String>>,
}

impl Load {
    /// A client of the MCP endpoint `url`, at most `concurrency` requests in flight.
    pub fn new(url: String, concurrency: usize) -> Self {
        Self {
            http: reqwest::Client::builder().pool_max_idle_per_host(concurrency).build().unwrap(),
            url,
            gate: Semaphore::new(concurrency),
            errors: AtomicUsize::new(0),
            first_error: std::sync::Mutex::new(None),
        }
    }

    fn error(&self, what: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.first_error.lock().unwrap().get_or_insert(what);
    }

    /// One POST; (status, session id, the JSON-RPC answer if any).
    pub async fn post(&self, session: Option<&str>, body: &Value) -> Option<(u16, Option<String>, Value)> {
        let _permit = self.gate.acquire().await.unwrap();
        let mut request = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body.to_string());
        if let Some(id) = session {
            request = request.header("mcp-session-id", id).header("mcp-protocol-version", "2025-11-25");
        }
        let response = match request.send().await {
            Ok(r) => r,
            Err(e) => {
                self.error(format!("request failed: {e}"));
                return None;
            }
        };
        let status = response.status().as_u16();
        let id = response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(String::from);
        let text = response.text().await.unwrap_or_default();
        let answer = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:").map(str::trim).or_else(|| l.starts_with('{').then_some(l)))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("result").is_some() || v.get("error").is_some())
            .unwrap_or(Value::Null);
        Some((status, id, answer))
    }

    pub async fn open(&self) -> Option<String> {
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "http_load", "version": "1"}}});
        let (status, id, answer) = self.post(None, &init).await?;
        let Some(id) = id.filter(|_| status == 200 && answer["result"].is_object()) else {
            self.error(format!("initialize: HTTP {status}: {answer}"));
            return None;
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        match self.post(Some(&id), &initialized).await {
            Some((202, _, _)) => Some(id),
            other => {
                self.error(format!("notifications/initialized: {:?}", other.map(|o| o.0)));
                None
            }
        }
    }

    /// `tools/call` of `tool` with `arguments` as request `n` of `session`: its result, or
    /// `None` (counted as an error) when it failed.
    pub async fn call(&self, session: &str, n: u64, tool: &str, arguments: Value) -> Option<Value> {
        let call = json!({"jsonrpc": "2.0", "id": n + 2, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        match self.post(Some(session), &call).await {
            Some((200, _, answer)) if answer["result"]["isError"] == false => Some(answer),
            other => {
                self.error(format!("tools/call {tool}: {other:?}"));
                None
            }
        }
    }

    /// Opens `n` sessions at once: the ids of those that opened.
    pub async fn open_all(self: &std::sync::Arc<Self>, n: usize) -> Vec<String> {
        let tasks: Vec<_> = (0..n)
            .map(|_| {
                let load = std::sync::Arc::clone(self);
                tokio::spawn(async move { load.open().await })
            })
            .collect();
        let mut ids = Vec::new();
        for task in tasks {
            ids.extend(task.await.unwrap());
        }
        ids
    }
}
