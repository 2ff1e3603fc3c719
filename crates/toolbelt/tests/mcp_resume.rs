//! MCP over Streamable HTTP, through the binary: a call's SSE stream that drops (or that the
//! server closes, `--sse-poll-after`) is resumed with `Last-Event-ID` and delivers the answer,
//! whether the call is still running or finished meanwhile; a resume never sends the named
//! event again, and never another session's events.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/http_server.rs"]
mod http_server;

use http_server::HttpServer;

/// One SSE event: its id and its data.
#[derive(Debug, Clone)]
struct Event {
    id: Option<String>,
    data: String,
}

/// Reads SSE events from a response until `stop` says so, the stream ends, or 10 s pass.
async fn events(response: &mut reqwest::Response, stop: impl Fn(&Event) -> bool) -> (Vec<Event>, bool) {
    let mut buffer = String::new();
    let mut out = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        while let Some(end) = buffer.find("\n\n") {
            let block: String = buffer.drain(..end + 2).collect();
            let mut event = Event { id: None, data: String::new() };
            for line in block.lines() {
                if let Some(id) = line.strip_prefix("id:") {
                    event.id = Some(id.trim().to_string());
                } else if let Some(data) = line.strip_prefix("data:") {
                    event.data.push_str(data.trim_start());
                }
            }
            let done = stop(&event);
            out.push(event);
            if done {
                return (out, false);
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, response.chunk()).await {
            Ok(Ok(Some(chunk))) => buffer.push_str(&String::from_utf8_lossy(&chunk)),
            Ok(_) => return (out, true),
            Err(_) => panic!("no end after 10 s: {out:?}"),
        }
    }
}

fn is_answer(event: &Event) -> bool {
    serde_json::from_str::<Value>(&event.data).is_ok_and(|v| v["id"] == 1 && v.get("result").is_some())
}

struct Session {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl Session {
    async fn open(url: &str) -> Session {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::new();
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "resume-test", "version": "1"}}});
        let response =
            http.post(url).header("Accept", "application/json, text/event-stream").json(&init).send().await.unwrap();
        let id = response.headers()["mcp-session-id"].to_str().unwrap().to_string();
        response.bytes().await.unwrap();
        let session = Session { http, url: url.to_string(), id };
        session.post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.bytes().await.unwrap();
        session
    }

    async fn post(&self, body: Value) -> reqwest::Response {
        self.http
            .post(&self.url)
            .header("Accept", "application/json, text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .json(&body)
            .send()
            .await
            .unwrap()
    }

    /// Calls Bash with `command` as request 1.
    async fn call(&self, command: &str) -> reqwest::Response {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "Bash", "arguments": {"command": command}}});
        let response = self.post(call).await;
        assert_eq!(response.status(), 200);
        response
    }

    async fn resume(&self, last_event_id: &str) -> reqwest::Response {
        self.http
            .get(&self.url)
            .header("Accept", "text/event-stream")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", "2025-11-25")
            .header("last-event-id", last_event_id)
            .send()
            .await
            .unwrap()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_is_resumed_with_last_event_id_during_the_call_and_after_it() {
    let tmp = tempfile::tempdir().unwrap();
    let server = HttpServer::start_with(tmp.path(), &["--allow", "Bash"]);
    for wait in [Duration::from_millis(100), Duration::from_millis(2500)] {
        let session = Session::open(&server.url).await;
        let mut response = session.call("sleep 1; echo resumed").await;
        // The first event (the priming one, with the retry hint) names where to resume from.
        let (first, _) = events(&mut response, |e| e.id.is_some()).await;
        let last = first.last().unwrap().id.clone().unwrap();
        drop(response);
        // Back while the call runs, or after it finished (which lost the answer before).
        tokio::time::sleep(wait).await;
        let mut resumed = session.resume(&last).await;
        assert_eq!(resumed.status(), 200);
        let (got, _) = events(&mut resumed, is_answer).await;
        assert!(got.iter().all(|e| e.id.as_deref() != Some(last.as_str())), "the named event came again: {got:?}");
        let answer: Value = serde_json::from_str(&got.last().unwrap().data).unwrap();
        assert_eq!(answer["result"]["structuredContent"]["stdout"], "resumed\n", "after {wait:?}: {answer}");

        // Another session cannot resume it: an empty stream, as for an id never given.
        let other = Session::open(&server.url).await;
        for id in [last.as_str(), "12345-0", "garbage"] {
            let mut stolen = other.resume(id).await;
            let (got, ended) = events(&mut stolen, |_| false).await;
            assert!(ended && got.iter().all(|e| e.data.is_empty()), "{id}: {got:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_closes_a_long_calls_stream_and_the_client_resumes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let server = HttpServer::start_with(tmp.path(), &["--allow", "Bash", "--sse-poll-after", "1"]);
    let session = Session::open(&server.url).await;
    let started = Instant::now();
    let mut response = session.call("sleep 3; echo polled").await;
    let (first, ended) = events(&mut response, |_| false).await;
    assert!(ended && !first.iter().any(is_answer), "the stream ends before the answer: {first:?}");
    assert!(started.elapsed() < Duration::from_millis(2500), "closed after about 1 s, not at the answer");
    let last = first.iter().rev().find_map(|e| e.id.clone()).unwrap();
    let mut resumed = session.resume(&last).await;
    let (got, _) = events(&mut resumed, is_answer).await;
    let answer: Value = serde_json::from_str(&got.last().unwrap().data).unwrap();
    assert_eq!(answer["result"]["structuredContent"]["stdout"], "polled\n", "{answer}");
}
