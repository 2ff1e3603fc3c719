//! The MCP server as an attacker finds it: over HTTP, sessions opened until memory runs out,
//! sessions left idle with processes running, tokens guessed by their length, pages of other
//! local origins; over stdio, lines that are not JSON, not UTF-8, too long, or of the wrong
//! shape, each of which once went unanswered or was answered wrongly.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::World;

/// `toolbelt mcp --http` on a free loopback port, its stderr collected.
struct Server {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<String>>,
}

impl Server {
    fn start(w: &World, args: &[&str], env: &[(&str, &str)]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let mut child = w
            .toolbelt()
            .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(String::new()));
        let collected = Arc::clone(&stderr);
        let mut pipe = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut line = String::new();
            while pipe.read_line(&mut line).unwrap_or(0) > 0 {
                collected.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        let server = Server { child, port, stderr };
        let deadline = Instant::now() + Duration::from_secs(30);
        while server.send("GET", &[], None).is_err() || !server.stderr().contains("serving MCP at") {
            assert!(Instant::now() < deadline, "the server did not start: {}", server.stderr());
            std::thread::sleep(Duration::from_millis(50));
        }
        // The startup lines are written together; give the reader a moment for the last.
        std::thread::sleep(Duration::from_millis(200));
        server
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// One request over plain HTTP/1.1.
    fn send(&self, method: &str, headers: &[(&str, &str)], body: Option<&Value>) -> std::io::Result<Reply> {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", self.port))?;
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut request = format!(
            "{method} /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
            self.port,
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        stream.write_all(request.as_bytes())?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
        let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        let session = head.lines().find_map(|l| {
            let (name, value) = l.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id").then(|| value.trim().to_string())
        });
        Ok(Reply { status, session, body: body.to_string() })
    }

    fn post(&self, headers: &[(&str, &str)], body: &Value) -> Reply {
        self.send("POST", headers, Some(body)).unwrap()
    }

    /// A new session: `initialize`, then `notifications/initialized`.
    fn open(&self, headers: &[(&str, &str)]) -> Reply {
        let reply = self.post(headers, &initialize(1));
        if let Some(id) = &reply.session {
            let mut with = headers.to_vec();
            with.extend([("Mcp-Session-Id", id.as_str()), ("Mcp-Protocol-Version", "2025-11-25")]);
            let sent = self.post(&with, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
            assert_eq!(sent.status, 202, "{}", sent.body);
        }
        reply
    }

    /// A request in session `id`.
    fn in_session(&self, id: &str, body: &Value) -> Reply {
        self.post(&[("Mcp-Session-Id", id), ("Mcp-Protocol-Version", "2025-11-25")], body)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Reply {
    status: u16,
    session: Option<String>,
    body: String,
}

impl Reply {
    /// The JSON-RPC message of the body (plain JSON, or the SSE event carrying it).
    fn json(&self) -> Value {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:").map(str::trim).or_else(|| l.starts_with('{').then_some(l)))
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|v| v.get("result").is_some() || v.get("error").is_some())
            .unwrap_or(Value::Null)
    }
}

fn initialize(id: u64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "attacker", "version": "1"}}})
}

fn call(id: u64, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}})
}

#[test]
fn sessions_beyond_the_cap_are_refused_until_one_ends() {
    let w = World::new();
    let server = Server::start(&w, &["--max-sessions", "2"], &[]);
    let a = server.open(&[]).session.expect("a first session");
    let b = server.open(&[]).session.expect("a second session");
    let refused = server.post(&[], &initialize(1));
    assert_eq!(refused.status, 503, "{}", refused.body);
    assert!(refused.session.is_none());
    let message = refused.json()["error"]["message"].as_str().unwrap_or_default().to_string();
    assert!(message.contains("the server is full: 2 MCP sessions"), "{message}");
    assert!(message.contains("DELETE") && message.contains("--max-sessions"), "says what to do: {message}");
    // The open sessions are still served.
    assert!(server.in_session(&b, &json!({"jsonrpc": "2.0", "id": 2, "method": "ping"})).json()["result"].is_object());
    // One ends: a new one is served again.
    let deleted = server.send("DELETE", &[("Mcp-Session-Id", &a), ("Mcp-Protocol-Version", "2025-11-25")], None);
    // Answered as the Python SDK expects (200 or 204; it logs a failure for anything else).
    assert_eq!(deleted.unwrap().status, 204);
    let again = server.open(&[]);
    assert_eq!(again.status, 200, "{}", again.body);
    assert!(again.session.is_some());
}

/// The processes whose command line is exactly `argv`, not zombies.
fn processes(argv: &[&str]) -> Vec<u32> {
    let wanted: Vec<u8> = argv.iter().flat_map(|a| a.bytes().chain([0])).collect();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat.rsplit_once(')').is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
        if cmdline == wanted && !zombie {
            found.push(pid);
        }
    }
    found
}

#[test]
fn an_idle_session_ends_and_its_background_process_dies() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join(".git")).unwrap();
    let server = Server::start(&w, &["--session-idle-timeout", "1", "--allow", "Bash(sleep *)"], &[]);
    let id = server.open(&[]).session.unwrap();
    let seconds = format!("300.{}", std::process::id());
    let started = server
        .in_session(&id, &call(2, "Bash", json!({"command": format!("sleep {seconds}"), "run_in_background": true})));
    let text = started.json().to_string();
    assert!(text.contains("Started in the background"), "{text}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while processes(&["sleep", &seconds]).is_empty() {
        assert!(Instant::now() < deadline, "the background process never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // Used more often than the timeout, the session and its process stay.
    for n in 0..8 {
        std::thread::sleep(Duration::from_millis(300));
        let pong = server.in_session(&id, &json!({"jsonrpc": "2.0", "id": 10 + n, "method": "ping"}));
        assert_eq!(pong.status, 200, "{}", pong.body);
    }
    assert!(!processes(&["sleep", &seconds]).is_empty(), "a session in use keeps its process");
    // Nobody uses the session: it is closed, and its process with it.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !processes(&["sleep", &seconds]).is_empty() {
        assert!(Instant::now() < deadline, "the idle session's process still runs: {}", server.stderr());
        std::thread::sleep(Duration::from_millis(100));
    }
    let gone = server.in_session(&id, &json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(gone.status, 404, "the expired session is unknown: {}", gone.body);
    // The server goes on: a new session is served.
    assert_eq!(server.open(&[]).status, 200);
}

#[test]
fn the_startup_line_says_who_can_use_an_unguarded_server() {
    let w = World::new();
    let open = Server::start(&w, &[], &[]);
    let said = open.stderr();
    assert!(said.contains(&format!("serving MCP at http://127.0.0.1:{}/mcp", open.port)), "{said}");
    assert!(said.contains("any local process") && said.contains("every tool"), "{said}");
    assert!(said.contains("--token-env"), "says how to require a token: {said}");
    let guarded = Server::start(&w, &["--token-env", "SERVE_AUTH"], &[("SERVE_AUTH", "t0ken")]);
    assert!(!guarded.stderr().contains("any local process"), "{}", guarded.stderr());
}

#[test]
fn wrong_tokens_are_refused_whatever_their_length() {
    let w = World::new();
    let token = "abcdef123456";
    let server = Server::start(&w, &["--token-env", "SERVE_AUTH"], &[("SERVE_AUTH", token)]);
    for wrong in ["abcdef123457", "Abcdef123456", "abc", "abcdef1234567890abcdef", ""] {
        let bearer = format!("Bearer {wrong}");
        let refused = server.post(&[("Authorization", &bearer)], &initialize(1));
        assert_eq!(refused.status, 401, "{wrong:?} must be refused: {}", refused.body);
        assert!(refused.session.is_none());
    }
    assert_eq!(server.post(&[], &initialize(1)).status, 401, "no token at all");
    let bearer = format!("Bearer {token}");
    let served = server.open(&[("Authorization", &bearer)]);
    assert_eq!(served.status, 200, "{}", served.body);
}

#[test]
fn only_the_server_s_own_origin_is_answered() {
    let w = World::new();
    let server = Server::start(&w, &["--allow-origin", "http://localhost:3000"], &[]);
    let port = server.port;
    for foreign in [
        format!("http://localhost:{}", port + 1),
        format!("http://127.0.0.1:{}", port + 1),
        "http://localhost:3001".into(),
        format!("https://localhost:{port}"),
        "http://evil.example".into(),
        "null".into(),
    ] {
        let refused = server.post(&[("Origin", &foreign)], &initialize(1));
        assert_eq!(refused.status, 403, "{foreign} must be refused: {}", refused.body);
        assert!(refused.body.contains("--allow-origin"), "{}", refused.body);
    }
    for own in [format!("http://127.0.0.1:{port}"), format!("http://localhost:{port}"), "http://localhost:3000".into()]
    {
        let served = server.open(&[("Origin", &own)]);
        assert_eq!(served.status, 200, "{own} must be answered: {}", served.body);
    }
    // A program sends no Origin: answered.
    assert_eq!(server.open(&[]).status, 200);
    // Something that is not an origin is a usage error, not a silent no-op.
    let (code, _, err) = w.run(&["mcp", "--http", "127.0.0.1:0", "--allow-origin", "localhost:3000"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("`localhost:3000` is not an origin"), "{err}");
}

/// Writes raw bytes to the stdio server and reads its next line as JSON.
fn raw(mcp: &mut super::Mcp, bytes: &[u8]) -> Value {
    mcp.stdin.write_all(bytes).unwrap();
    mcp.stdin.flush().unwrap();
    let mut line = String::new();
    assert!(mcp.stdout.read_line(&mut line).unwrap() > 0, "the server closed the connection");
    serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON: {line:?}"))
}

fn still_serving(mcp: &mut super::Mcp) {
    let pong = mcp.request("ping", json!({}));
    assert!(pong["result"].is_object(), "{pong}");
}

#[test]
fn malformed_lines_over_stdio_are_answered_and_the_session_goes_on() {
    let w = World::new();
    let mut mcp = w.mcp(&[]);
    let answer = raw(&mut mcp, b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\"\n");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer.as_object().unwrap().get("id").is_some_and(Value::is_null), "id null: {answer}");
    still_serving(&mut mcp);
    let answer = raw(&mut mcp, b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"\xff\xfe\"}\n");
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("UTF-8"), "{answer}");
    still_serving(&mut mcp);
    let answer = raw(&mut mcp, b"[{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"ping\"}]\n");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    still_serving(&mut mcp);
}

#[test]
fn an_oversized_line_over_stdio_is_answered_and_skipped() {
    let w = World::new();
    let mut mcp = w.mcp(&[]);
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..17 {
        mcp.stdin.write_all(&chunk).unwrap();
    }
    let answer = raw(&mut mcp, b"\n");
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(answer["id"].is_null(), "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains("16 MiB"), "names the limit: {answer}");
    still_serving(&mut mcp);
}

#[test]
fn wrongly_typed_arguments_are_invalid_params() {
    let w = World::new();
    let mut mcp = w.mcp(&[]);
    for arguments in [json!("x"), json!([1]), json!(7)] {
        let answer = mcp.request("tools/call", json!({"name": "Read", "arguments": arguments}));
        assert_eq!(answer["error"]["code"], -32602, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("`arguments` must be an object"), "{answer}");
    }
    let answer = mcp.request("no/such/method", json!({}));
    assert_eq!(answer["error"]["code"], -32601, "{answer}");
    still_serving(&mut mcp);
}

#[test]
fn params_of_the_wrong_type_are_invalid_params_whatever_is_wrong() {
    let w = World::new();
    let mut mcp = w.mcp(&[]);
    for (id, method, params, says) in [
        // Params that are not an object at all.
        (101, "tools/call", json!([{"name": "Read"}]), "must be an object"),
        (102, "tools/call", json!("Read"), "must be an object"),
        (103, "tools/list", json!([]), "must be an object"),
        (104, "ping", json!(7), "must be an object"),
        // A field of the wrong type, which rmcp would drop or read as another message.
        (105, "tools/list", json!({"cursor": 5}), "cursor"),
        (106, "prompts/list", json!({"cursor": true}), "cursor"),
        (107, "tools/call", json!({"name": "Read", "arguments": {}, "_meta": 5}), "_meta"),
        (108, "tools/call", json!({"name": "Read", "arguments": {}, "_meta": {"progressToken": [1]}}), "progressToken"),
    ] {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let answer = raw(&mut mcp, format!("{line}\n").as_bytes());
        assert_eq!(answer["id"], id, "{method} {params}: {answer}");
        assert_eq!(answer["error"]["code"], -32602, "{method} {params}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(says) && message.contains(method), "{method} {params}: {message}");
    }
    // An unknown method stays unknown, whatever its params.
    let answer = raw(&mut mcp, b"{\"jsonrpc\": \"2.0\", \"id\": 109, \"method\": \"no/such\", \"params\": [1]}\n");
    assert_eq!((answer["id"].clone(), answer["error"]["code"].clone()), (json!(109), json!(-32601)), "{answer}");
    // Well-typed ones still work.
    let listed = mcp.request("tools/list", json!({"cursor": null}));
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    still_serving(&mut mcp);
}

#[test]
fn a_second_initialize_is_refused_and_the_session_goes_on() {
    let w = World::new();
    w.write("notes.txt", "one\n");
    let mut mcp = w.mcp(&[]);
    let again = mcp.request(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "again", "version": "2"}}),
    );
    assert_eq!(again["error"]["code"], -32600, "{again}");
    assert!(again["error"]["message"].as_str().unwrap().contains("already initialized"), "{again}");
    let (is_error, text) = mcp.call("Read", json!({"file_path": "notes.txt"}));
    assert!(!is_error && text.contains("one"), "{text}");
}
