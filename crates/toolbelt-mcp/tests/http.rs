//! Streamable HTTP on loopback: sessions kept apart, DNS-rebinding protection, bearer tokens.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::ServiceExt as _;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolbelt_mcp::approve::SessionApprovers;
use toolbelt_mcp::{McpServer, ServerOptions, http};
use toolbelt_runtime::Runtime;

struct Server {
    _dir: tempfile::TempDir,
    root: PathBuf,
    url: String,
    shutdown: CancellationToken,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

async fn start(token: Option<&str>) -> Server {
    start_with(http::HttpOptions { token: token.map(String::from), ..Default::default() }).await
}

async fn start_with(http_options: http::HttpOptions) -> Server {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let registry = toolbelt_core::Registry::new();
    toolbelt_tools::register_builtin(&registry).unwrap();
    let approvers = Arc::new(SessionApprovers::default());
    let runtime = Arc::new(
        Runtime::builder(Arc::new(registry))
            .authorizer(Arc::new(toolbelt_policy::AllowAll))
            .approver(approvers.clone())
            .build(),
    );
    let options = Arc::new(ServerOptions {
        cwd: root.clone(),
        roots: vec![root.clone()],
        sessions_dir: root.join(".sessions"),
        approvers,
        askers: Default::default(),
        instructions: None,
        notices: Vec::new(),
        inline: Default::default(),
        drain: None,
        team: None,
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let shutdown = CancellationToken::new();
    let new_server = move || McpServer::new(runtime.clone(), options.clone());
    tokio::spawn(http::serve_on(listener, new_server, http_options, shutdown.clone()));
    Server { _dir: dir, root, url, shutdown }
}

async fn client(url: &str, token: Option<&str>) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    if let Some(t) = token {
        config = config.auth_header(t.to_string());
    }
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    ().serve(transport).await.unwrap()
}

async fn call(c: &rmcp::service::RunningService<rmcp::RoleClient, ()>, name: &str, args: Value) -> Value {
    let params: CallToolRequestParams = serde_json::from_value(json!({"name": name, "arguments": args})).unwrap();
    serde_json::to_value(c.peer().call_tool(params).await.unwrap()).unwrap()
}

#[tokio::test]
async fn each_session_has_its_own_state() {
    let s = start(None).await;
    std::fs::create_dir_all(s.root.join("sub")).unwrap();
    let (a, b) = (client(&s.url, None).await, client(&s.url, None).await);
    let todo = json!({"todos": [{"content": "Ship", "status": "in_progress", "activeForm": "Shipping"}]});
    call(&a, "TodoWrite", todo).await;
    let listed = call(&a, "TodoWrite", json!({"todos": []})).await;
    assert!(listed["content"][0]["text"].as_str().unwrap().contains("0 tasks"), "{listed}");
    // Session b never saw a's list: its first update has nothing to compare with.
    let fresh = call(&b, "TodoWrite", json!({"todos": []})).await;
    assert_eq!(fresh["isError"], false);
    // Reads are recorded per session: a Read in a lets a write in a, not in b.
    std::fs::write(s.root.join("f.txt"), "x\n").unwrap();
    call(&a, "Read", json!({"file_path": "f.txt"})).await;
    let in_b = call(&b, "Write", json!({"file_path": "f.txt", "content": "y\n"})).await;
    assert_eq!(in_b["isError"], true, "{in_b}");
    let in_a = call(&a, "Write", json!({"file_path": "f.txt", "content": "y\n"})).await;
    assert_eq!(in_a["isError"], false, "{in_a}");
}

fn initialize() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

async fn post(url: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    post_body(url, headers, &initialize()).await
}

async fn post_body(url: &str, headers: &[(&str, &str)], body: &Value) -> reqwest::Response {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .json(body);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    request.send().await.unwrap()
}

#[tokio::test]
async fn foreign_origins_and_hosts_are_refused() {
    let s = start(None).await;
    assert!(post(&s.url, &[]).await.status().is_success());
    let own = s.url.trim_end_matches("/mcp").to_string();
    assert!(post(&s.url, &[("origin", &own)]).await.status().is_success());
    let other_port = post(&s.url, &[("origin", "http://localhost:3000")]).await;
    assert_eq!(other_port.status(), 403, "another local page must not drive the server");
    let evil = post(&s.url, &[("origin", "http://evil.example")]).await;
    assert_eq!(evil.status(), 403, "a page from another site must not drive the server");
    let rebound = post(&s.url, &[("host", "evil.example")]).await;
    assert!(rebound.status().is_client_error(), "a rebound DNS name must be refused: {}", rebound.status());
}

#[tokio::test]
async fn a_bearer_token_is_required_when_configured() {
    let s = start(Some("s3cret")).await;
    assert_eq!(post(&s.url, &[]).await.status(), 401);
    assert_eq!(post(&s.url, &[("authorization", "Bearer wrong")]).await.status(), 401);
    assert!(post(&s.url, &[("authorization", "Bearer s3cret")]).await.status().is_success());
    let c = client(&s.url, Some("s3cret")).await;
    let tools = c.peer().list_tools(None).await.unwrap();
    assert!(tools.tools.iter().any(|t| t.name == "Read"));
}

#[tokio::test]
async fn a_long_call_keeps_its_session_while_an_idle_one_is_closed() {
    let limits = http::SessionLimits { idle_timeout: std::time::Duration::from_millis(500), ..Default::default() };
    let s = start_with(http::HttpOptions { limits, ..Default::default() }).await;
    std::fs::write(s.root.join("f.txt"), "x\n").unwrap();
    let (busy, idle) = (client(&s.url, None).await, client(&s.url, None).await);
    call(&busy, "Read", json!({"file_path": "f.txt"})).await;
    call(&idle, "Read", json!({"file_path": "f.txt"})).await;
    // Longer than the idle timeout, with no output meanwhile: the session is in use.
    let slow = call(&busy, "Bash", json!({"command": "sleep 2; echo finished"})).await;
    assert!(slow.to_string().contains("finished"), "{slow}");
    // The busy session still knows its read; the idle one was closed (its client may start
    // a new session, which has read nothing).
    let write = json!({"file_path": "f.txt", "content": "y\n"});
    assert_eq!(call(&busy, "Write", write.clone()).await["isError"], false);
    let params: CallToolRequestParams = serde_json::from_value(json!({"name": "Write", "arguments": write})).unwrap();
    match idle.peer().call_tool(params).await {
        Ok(result) => assert_eq!(result.is_error, Some(true), "{result:?}"),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
}

#[tokio::test]
async fn the_session_cap_holds_when_sessions_race() {
    let limits = http::SessionLimits { max_sessions: 3, ..Default::default() };
    let s = start_with(http::HttpOptions { limits, ..Default::default() }).await;
    let attempts = (0..20).map(|_| post(&s.url, &[]));
    let replies = futures_util::future::join_all(attempts).await;
    let mut served = replies.iter().filter(|r| r.status().is_success()).count();
    // Requests racing for the last places may all be refused (a place counts until its
    // request is answered), but never more than the limit are served.
    assert!((1..=3).contains(&served), "{:?}", replies.iter().map(|r| r.status()).collect::<Vec<_>>());
    for refused in replies.into_iter().filter(|r| !r.status().is_success()) {
        let status = refused.status();
        let body = refused.text().await.unwrap();
        assert_eq!(status, 503, "{body}");
        assert!(body.contains("the server is full"), "{body}");
    }
    // One at a time, the places left are served, and not one more.
    while post(&s.url, &[]).await.status().is_success() {
        served += 1;
    }
    assert_eq!(served, 3);
}

#[tokio::test]
async fn requests_past_a_session_s_in_flight_limit_are_refused() {
    let limits = http::SessionLimits { max_in_flight: 1, ..Default::default() };
    let s = start_with(http::HttpOptions { limits, ..Default::default() }).await;
    let opened = post(&s.url, &[]).await;
    let id = opened.headers()["mcp-session-id"].to_str().unwrap().to_string();
    let in_session = [("mcp-session-id", id.as_str()), ("mcp-protocol-version", "2025-06-18")];
    let slow = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "Bash", "arguments": {"command": "sleep 1; echo done"}}});
    let (url, headers) = (s.url.clone(), in_session.map(|(k, v)| (k, v.to_string())));
    let running = tokio::spawn(async move {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(k, v)| (*k, v.as_str())).collect();
        post_body(&url, &headers, &slow).await.text().await.unwrap()
    });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let refused = post_body(&s.url, &in_session, &ping).await;
    assert_eq!(refused.status(), 429);
    let body = refused.text().await.unwrap();
    assert!(body.contains("limit of requests in flight (1)") && body.contains("wait for one to finish"), "{body}");
    assert!(running.await.unwrap().contains("done"));
    assert!(post_body(&s.url, &in_session, &ping).await.status().is_success());
}
