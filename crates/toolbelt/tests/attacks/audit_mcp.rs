//! The audit log of `toolbelt mcp`: every record names its client (what it said in
//! `initialize`; over HTTP also its address and which token it used), and calls the server
//! refuses (an unknown tool as a protocol error, a hidden one as a denial) are recorded too;
//! nothing but the log and its anchor is left beside it, also when a signal stops the server.

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("project/.git")).unwrap();
        std::fs::write(root.join("project/notes.txt"), "one\n").unwrap();
        Project { _dir: dir, root }
    }

    fn toolbelt(&self) -> Command {
        let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
        crate::hermetic::isolate(cmd.current_dir(self.root.join("project")), &self.root.join("home"))
            .env("XDG_STATE_HOME", self.root.join("state"))
            .env("TOOLBELT_AUDIT__ENABLED", "true");
        cmd
    }

    fn records(&self) -> (String, Vec<Value>) {
        let out = self.toolbelt().args(["audit", "path"]).output().unwrap();
        let text = std::fs::read_to_string(String::from_utf8(out.stdout).unwrap().trim()).unwrap();
        let records = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        (text, records)
    }

    /// The files beside the log but the log and its anchor.
    fn left_beside(&self) -> Vec<String> {
        let out = self.toolbelt().args(["audit", "path"]).output().unwrap();
        let log = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
        let name = log.file_name().unwrap().to_string_lossy().into_owned();
        std::fs::read_dir(log.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&name) && *n != name && *n != format!("{name}.head"))
            .collect()
    }

    fn verify(&self) -> String {
        let out = self.toolbelt().args(["audit", "verify"]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stdout));
        String::from_utf8(out.stdout).unwrap()
    }
}

/// Sends each message on stdin, reads one answer line per request.
fn converse(p: &Project, args: &[&str], messages: &[Value]) -> Vec<Value> {
    converse_with(p, &[], args, messages)
}

/// [`converse`] with these variables set.
fn converse_with(p: &Project, env: &[(String, String)], args: &[&str], messages: &[Value]) -> Vec<Value> {
    let mut child = p
        .toolbelt()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .arg("mcp")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
        if message.get("id").is_some() {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            answers.push(serde_json::from_str::<Value>(&line).unwrap());
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    answers
}

fn call(id: u64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

#[test]
fn over_stdio_records_name_the_client_and_refused_calls_are_recorded() {
    let p = Project::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "audit-probe", "version": "1.2.3"}}});
    let answers = converse(
        &p,
        &["--deny", "Bash"],
        &[
            initialize,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call(2, "Read", json!({"file_path": "notes.txt"})),
            call(3, "Nope", json!({"url": "https://admin:hunter2@example.com/"})),
            call(4, "Bash", json!({"command": "curl -H 'Authorization: Bearer abcdefgh12345678' x"})),
        ],
    );
    assert_eq!(answers[1]["result"]["isError"], false, "{}", answers[1]);
    // An unknown tool is the client's protocol mistake; a hidden one is denied, naming the rule.
    assert_eq!(answers[2]["error"]["code"], json!(-32602), "{}", answers[2]);
    assert_eq!(answers[3]["result"]["isError"], true, "{}", answers[3]);
    let denied = answers[3]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(denied.starts_with("permission denied: `Bash` is denied by the rule `Bash` (flag --deny)"), "{denied}");

    let (text, records) = p.records();
    assert!(!text.contains("hunter2") && !text.contains("abcdefgh12345678"), "{text}");
    assert_eq!(records.len(), 3, "{text}");
    let client = json!({"kind": "mcp", "transport": "stdio", "name": "audit-probe", "version": "1.2.3"});
    assert!(records.iter().all(|r| r["client"] == client), "{text}");
    assert_eq!((records[0]["tool"].clone(), records[0]["outcome"].clone()), (json!("Read"), json!("ok")));
    assert_eq!((records[1]["tool"].clone(), records[1]["outcome"].clone()), (json!("Nope"), json!("unknown_tool")));
    assert_eq!(records[1]["input"], json!({"url": "https://[redacted]@example.com/"}));
    assert!(records[1]["reason"].as_str().unwrap().starts_with("unknown tool `Nope`"));
    assert_eq!((records[2]["tool"].clone(), records[2]["outcome"].clone()), (json!("Bash"), json!("denied")));
    assert_eq!(records[2]["input"], json!({"command": "curl -H 'Authorization: Bearer [redacted]' x"}));
    assert!(p.verify().starts_with("ok: 3 records"));
    assert_eq!(p.left_beside(), Vec::<String>::new());
}

#[test]
fn a_server_stopped_by_a_signal_leaves_nothing_but_the_log_and_its_anchor() {
    let p = Project::new();
    let mut child =
        p.toolbelt().arg("mcp").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}}});
    for message in [
        initialize,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        call(2, "Read", json!({"file_path": "notes.txt"})),
        // From the second record on, the anchor's previous copy is kept for the next one.
        call(3, "Read", json!({"file_path": "notes.txt"})),
    ] {
        writeln!(stdin, "{message}").unwrap();
        if message.get("id").is_some() {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
        }
    }
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
    assert_eq!(p.records().1.len(), 2);
    assert_eq!(p.left_beside(), Vec::<String>::new());
}

#[test]
fn a_sub_agent_s_records_name_the_client_it_runs_under_and_the_agent() {
    let p = Project::new();
    let model = ScriptedServer::openai([
        Turn::tool_call("r1", "Read", json!({"file_path": "notes.txt"})),
        Turn::text("It says one."),
    ])
    .unwrap();
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "audit-probe", "version": "1.2.3"}}});
    let answers = converse_with(
        &p,
        &model.env(),
        &[],
        &[
            initialize,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            call(
                2,
                "Agent",
                json!({"prompt": "What do the notes say?", "description": "read notes", "subagent_type": "Explore"}),
            ),
        ],
    );
    assert_eq!(answers[1]["result"]["isError"], false, "{}", answers[1]);
    let (text, records) = p.records();
    let client = json!({"kind": "mcp", "transport": "stdio", "name": "audit-probe", "version": "1.2.3"});
    let read = records.iter().find(|r| r["tool"] == "Read").unwrap_or_else(|| panic!("{text}"));
    // The sub-agent's call: the MCP client whose call started it, and which agent made it —
    // not an "embedded" program nobody can name.
    let mut by_agent = client.clone();
    by_agent["agent"] = json!("agent_1 (Explore)");
    assert_eq!(read["client"], by_agent, "{text}");
    assert!(read["session"].as_str().unwrap().ends_with("-agent_1"), "{read}");
    let agent = records.iter().find(|r| r["tool"] == "Agent").unwrap_or_else(|| panic!("{text}"));
    assert_eq!(agent["client"], client, "{text}");
    assert!(p.verify().starts_with("ok: 2 records"));
}

/// Kills the server when the test ends, however it ends.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `toolbelt mcp --http` on a free loopback port with a bearer token; returns its URL.
fn serve_http(p: &Project, token: &str) -> (Server, String) {
    let mut child = p
        .toolbelt()
        .args(["mcp", "--http", "127.0.0.1:0", "--token-env", "AUDIT_TEST_TOKEN"])
        .env("AUDIT_TEST_TOKEN", token)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let server = Server(child);
    let mut line = String::new();
    while !line.contains("serving MCP at ") {
        line.clear();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "the server ended before serving");
    }
    let url = line.split("serving MCP at ").nth(1).unwrap().trim().to_string();
    // Keep draining its stderr so the server never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    (server, url)
}

async fn http_call(url: &str, token: &str) -> Value {
    use rmcp::ServiceExt as _;
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string()).auth_header(token.to_string());
    let transport = StreamableHttpClientTransport::with_client(reqwest::Client::new(), config);
    let info: rmcp::model::ClientConfig = serde_json::from_value(json!({
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "audit-http-probe", "version": "4.5.6"}}))
    .unwrap();
    let client = info.serve(transport).await.unwrap();
    let params = serde_json::from_value(json!({"name": "Read", "arguments": {"file_path": "notes.txt"}})).unwrap();
    let result = serde_json::to_value(client.peer().call_tool(params).await.unwrap()).unwrap();
    let _ = client.cancel().await;
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_records_name_the_peer_and_the_token_but_never_the_token() {
    let p = Project::new();
    let token = "tb-test-token-0123456789abcdef";
    let (_server, url) = serve_http(&p, token);
    let result = http_call(&url, token).await;
    assert_eq!(result["isError"], false, "{result}");

    let (text, records) = p.records();
    assert!(!text.contains(token), "{text}");
    let client = &records[0]["client"];
    assert_eq!(
        (client["kind"].clone(), client["transport"].clone(), client["name"].clone(), client["version"].clone()),
        (json!("mcp"), json!("http"), json!("audit-http-probe"), json!("4.5.6")),
        "{text}"
    );
    assert!(client["peer"].as_str().unwrap().starts_with("127.0.0.1:"), "{client}");
    assert_eq!(client["token_id"], &toolbelt::core::sha256_hex(token)[..12]);
    assert!(p.verify().starts_with("ok: 1 record"));
}
