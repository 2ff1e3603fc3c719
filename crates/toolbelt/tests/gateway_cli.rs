//! The MCP gateway through the real `toolbelt` binary, with small stdio servers
//! (`tests/peers/mini_server.py`) as upstreams: what `mcp-servers`, `config check --connect`,
//! `call` and `permissions explain` say about them, and which servers a call starts.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// A project (a `.git` directory) in a temporary directory, canonical.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// `[mcp.servers.NAME]` running the mini server with `config` (its name added).
fn server(name: &str, config: Value, extra: &str) -> String {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mini_server.py");
    let mut config = config;
    config["name"] = json!(name);
    let args = toml_edit::Value::from_iter([script.display().to_string(), config.to_string()]);
    format!("[mcp.servers.{name}]\ncommand = \"python3\"\nargs = {args}\n{extra}\n")
}

/// Writes the project's settings and trusts the project.
fn settings(root: &Path, toml: &str) {
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(root.join(".toolbelt/config.toml"), toml).unwrap();
    let out = hermetic::toolbelt(root).arg("trust").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out: Output = hermetic::toolbelt(root).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn list_mcp_resources_lists_what_others_have_and_names_the_one_without() {
    let (_dir, root) = project();
    let docs = json!({"resources": [{"uri": "mini://guide", "name": "guide", "mimeType": "text/markdown"}]});
    settings(&root, &format!("{}{}", server("docs", docs, ""), server("fs", json!({}), "")));
    let (code, out, err) = run(&root, &["call", "ListMcpResources", "{}", "--allow", "ListMcpResources"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("docs mini://guide (guide, text/markdown)"), "{out}");
    assert!(out.contains("fs offers no resources"), "the server without any is named: {out}");
    // Asked for by name, the one without resources says so rather than failing.
    let (code, out, err) =
        run(&root, &["call", "ListMcpResources", r#"{"server": "fs"}"#, "--allow", "ListMcpResources"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("fs offers no resources"), "{out}");
}

#[test]
fn mcp_servers_says_a_project_s_servers_wait_for_trust() {
    let (_dir, root) = project();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!("{}{}", server("fs", json!({}), ""), server("docs", json!({}), "")),
    )
    .unwrap();
    let (code, out, err) = run(&root, &["mcp-servers"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(!out.contains("No MCP servers are configured"), "{out}");
    assert!(out.contains("docs, fs"), "names the servers: {out}");
    assert!(out.contains("wait") && out.contains("toolbelt trust"), "says they wait for trust and how: {out}");
}

#[test]
fn tool_search_in_the_cli_finds_upstream_tools() {
    let (_dir, root) = project();
    settings(&root, &server("everything", json!({"tools": [{"name": "echo", "description": "Echoes back"}]}), ""));
    let (code, out, err) = run(&root, &["call", "ToolSearch", r#"{"query": "select:mcp__everything__echo"}"#]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("mcp__everything__echo"), "{out}");
    assert!(!out.to_lowercase().contains("not found"), "{out}");
}

/// Each server is spoken to in the revision it answers: a 2025 server answers `server/discover`
/// with "method not found" and is started with `initialize` at once; one that ignores the
/// question is started with `initialize` after a short wait, well within its startup timeout
/// (rmcp alone would wait 10 s, the whole default timeout, and never connect it); pinned, no
/// question is asked.
#[test]
fn a_2025_server_connects_whether_it_answers_the_discover_question_or_not() {
    let (_dir, root) = project();
    let tools = json!({"tools": [{"name": "echo"}]});
    let silent = json!({"tools": [{"name": "echo"}], "ignores_unknown": true});
    let pinned = "protocol = \"2025-06-18\"";
    let toml =
        [server("plain", tools.clone(), ""), server("silent", silent.clone(), ""), server("pinned", silent, pinned)];
    settings(&root, &toml.concat());
    let started = Instant::now();
    let (code, out, err) = run(&root, &["mcp-servers", "--json"]);
    let took = started.elapsed();
    assert_eq!(code, 0, "{out}{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let state = |name: &str| {
        let server = listed.as_array().unwrap().iter().find(|s| s["name"] == name).unwrap();
        (server["state"].clone(), server["protocol"].clone())
    };
    assert_eq!(state("plain"), (json!("connected"), json!("2025-11-25")), "{listed}");
    assert_eq!(state("silent"), (json!("connected"), json!("2025-11-25")), "{listed}");
    assert_eq!(state("pinned"), (json!("connected"), json!("2025-06-18")), "{listed}");
    assert!(took < Duration::from_secs(8), "the silent server was waited for {took:?}");
}

#[test]
fn a_call_starts_only_the_server_it_names() {
    let (_dir, root) = project();
    let log = root.join("started.log");
    let mini = |tool: &str| json!({"tools": [{"name": tool}], "started": log});
    // A server that never answers would hold every call up to its startup timeout.
    let silent = "[mcp.servers.silent]\ncommand = \"python3\"\nargs = [\"-c\", \"import time; time.sleep(60)\"]\n\
                  startup_timeout = 5\n";
    settings(&root, &format!("{}{}{silent}", server("one", mini("echo"), ""), server("two", mini("echo"), "")));
    let started = Instant::now();
    let (code, out, err) = run(&root, &["call", "mcp__one__echo", r#"{"x": 1}"#, "--allow", "mcp__one"]);
    let took = started.elapsed();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains(r#""server": "one""#) && out.contains(r#""x": 1"#), "{out}");
    let servers: Vec<String> =
        std::fs::read_to_string(&log).unwrap().lines().map(|l| l.split(' ').next().unwrap().to_string()).collect();
    assert_eq!(servers, ["one"], "only the server named was started");
    assert!(took < Duration::from_secs(5), "not held up by the silent server: {took:?}");
}

#[test]
fn a_read_only_upstream_tool_asks_for_its_true_reason() {
    let (_dir, root) = project();
    let tools = json!({"tools": [{"name": "peek", "annotations": {"readOnlyHint": true}}]});
    settings(&root, &server("fs", tools, ""));
    let (code, out, err) = run(&root, &["permissions", "explain", "mcp__fs__peek", "{}"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("decision:   ask"), "{out}");
    assert!(!out.contains("runs commands"), "{out}");
    let because = out.lines().find(|l| l.starts_with("because:")).unwrap();
    assert!(because.contains("MCP server `fs`") && because.contains("python3"), "{because}");
    let (code, out, err) = run(&root, &["permissions", "explain", "ListMcpResources", "{}"]);
    assert_eq!(code, 0, "{out}{err}");
    let because = out.lines().find(|l| l.starts_with("because:")).unwrap();
    assert!(!because.contains("runs commands") && because.contains("MCP server"), "{because}");
}

#[test]
fn misnamed_upstream_tools_are_reported_once_the_servers_connect() {
    let (_dir, root) = project();
    let tools = json!({"tools": [{"name": "get-env"}, {"name": "write_file"}, {"name": "read_file"}]});
    let toml = format!(
        "[permissions]\ndeny = [\"mcp__fs__write-file\"]\nallow = [\"mcp__fs__read_file\"]\n\n{}",
        server("fs", tools, "disabled_tools = [\"get_env\"]")
    );
    settings(&root, &toml);
    // Without connecting, nothing is known of the servers' tools.
    let (code, out, err) = run(&root, &["config", "check"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(&root, &["config", "check", "--connect"]);
    assert_eq!(code, 0, "warnings, not errors: {out}{err}");
    let config = root.join(".toolbelt/config.toml").display().to_string();
    let disabled = out.lines().find(|l| l.contains("get_env")).unwrap_or_else(|| panic!("{out}"));
    assert!(disabled.starts_with(&format!("warning: {config}:")), "{disabled}");
    assert!(disabled.contains("did you mean `get-env`?"), "{disabled}");
    let deny = out.lines().find(|l| l.contains("mcp__fs__write-file")).unwrap_or_else(|| panic!("{out}"));
    assert!(deny.contains("did you mean `mcp__fs__write_file`?"), "{deny}");
    assert!(!out.contains("mcp__fs__read_file`"), "a rule naming a real tool is fine: {out}");
    let (code, json_out, err) = run(&root, &["config", "check", "--connect", "--json"]);
    assert_eq!(code, 0, "{json_out}{err}");
    let checked: Value = serde_json::from_str(&json_out).unwrap();
    let warnings: Vec<&Value> =
        checked["messages"].as_array().unwrap().iter().filter(|m| m["severity"] == "warning").collect();
    assert_eq!(warnings.len(), 2, "{checked}");
    // `mcp-servers` says the same under the server's line.
    let (code, out, err) = run(&root, &["mcp-servers"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("get_env") && out.contains("did you mean `get-env`?"), "{out}");
    assert!(out.contains("mcp__fs__write-file") && out.contains("did you mean `mcp__fs__write_file`?"), "{out}");
    // The MCP server says so too (here on stderr, before a client that never comes; to its
    // clients as log messages).
    let (_, _, err) = run(&root, &["mcp"]);
    assert!(err.contains("did you mean `get-env`?") && err.contains("did you mean `mcp__fs__write_file`?"), "{err}");
}

#[test]
fn a_tool_disabled_tools_hides_says_where_it_is_disabled() {
    let (_dir, root) = project();
    let tools = json!({"tools": [{"name": "get-env"}, {"name": "echo"}]});
    settings(&root, &server("fs", tools, "disabled_tools = [\"get-env\"]"));
    let (code, out, err) = run(&root, &["call", "mcp__fs__get-env", "{}", "--allow", "mcp__fs"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(!err.contains("unknown tool"), "{err}");
    let config = root.join(".toolbelt/config.toml").display().to_string();
    assert!(err.contains("disabled_tools") && err.contains(&config), "{err}");
    let (code, out, err) = run(&root, &["tools", "--format", "names", "--category", "mcp"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("mcp__fs__echo") && !out.contains("get-env"), "still not listed: {out}");
}

/// `toolbelt mcp` over stdio in `root`, spoken to line by line; killed on drop.
struct McpSession {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    lines: std::sync::mpsc::Receiver<Value>,
}

impl McpSession {
    /// Started with `args` after `mcp`, and initialized with `capabilities`.
    fn start(root: &Path, args: &[&str], capabilities: Value) -> McpSession {
        use std::io::BufRead as _;
        let mut child = hermetic::toolbelt(root)
            .arg("mcp")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let (lines_tx, lines) = std::sync::mpsc::channel::<Value>();
        let stdout = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines().map_while(Result::ok) {
                if lines_tx.send(serde_json::from_str(&line).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut session = McpSession { child, stdin, lines };
        session.send(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}}));
        session.wait_for(&|m| m["id"] == 0);
        session.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        session
    }

    fn send(&mut self, message: Value) {
        use std::io::Write as _;
        writeln!(self.stdin, "{message}").unwrap();
    }

    /// The next message `what` accepts (the ones before it are passed over to `seen`).
    fn wait_for(&self, what: &dyn Fn(&Value) -> bool) -> Value {
        loop {
            let message = self.lines.recv_timeout(Duration::from_secs(20)).expect("an answer within 20 s");
            if what(&message) {
                return message;
            }
        }
    }

    /// Every message that came in the next `wait`.
    fn seen_within(&self, wait: Duration) -> Vec<Value> {
        let until = Instant::now() + wait;
        let mut seen = Vec::new();
        while let Ok(message) = self.lines.recv_timeout(until.saturating_duration_since(Instant::now())) {
            seen.push(message);
        }
        seen
    }

    /// The tool names of a `tools/list` sent as request `id`.
    fn tools(&mut self, id: u64) -> Vec<String> {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}));
        let answer = self.wait_for(&|m| m["id"] == id);
        answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    }
}

impl Drop for McpSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An upstream that adds a tool and says its tools changed: the gateway lists them again, the
/// new tool joins, and the MCP client is told its list changed.
#[test]
fn an_upstream_s_changed_tools_reach_the_client() {
    let (_dir, root) = project();
    let grow = json!({"tools": [{"name": "grow", "adds": {"name": "fresh"}}]});
    settings(&root, &server("up", grow, ""));
    let mut session = McpSession::start(&root, &["--allow", "mcp__up"], json!({}));
    let before = session.tools(1);
    assert!(before.contains(&"mcp__up__grow".to_string()) && !before.iter().any(|t| t.contains("fresh")), "{before:?}");
    session.send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "mcp__up__grow", "arguments": {}}}),
    );
    session.wait_for(&|m| m["id"] == 2);
    session.wait_for(&|m| m["method"] == "notifications/tools/list_changed");
    let after = session.tools(3);
    assert!(after.contains(&"mcp__up__fresh".to_string()), "{after:?}");
    session.send(
        json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "mcp__up__fresh", "arguments": {"n": 1}}}),
    );
    let answer = session.wait_for(&|m| m["id"] == 4);
    assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains(r#""tool": "fresh""#), "{answer}");
}

/// An upstream that puts a question while no call waits on it (here, as soon as it is
/// initialized) reaches nobody: the client, which could answer forms, is never asked, and the
/// server is told "decline".
#[test]
fn an_upstream_s_question_outside_a_call_reaches_nobody() {
    let (_dir, root) = project();
    let record = root.join("answer.json");
    settings(&root, &server("up", json!({"tools": [{"name": "echo"}], "asks_at_start": record}), ""));
    let mut session = McpSession::start(&root, &["--allow", "mcp__up"], json!({"elicitation": {}}));
    assert!(session.tools(1).contains(&"mcp__up__echo".to_string()));
    let started = Instant::now();
    while !record.exists() && started.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let answer: Value = serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(answer["result"]["action"], "decline", "{answer}");
    let seen = session.seen_within(Duration::from_millis(300));
    assert!(!seen.iter().any(|m| m["method"] == "elicitation/create"), "the client was asked: {seen:?}");
}

/// The gateway offers the workspace roots to an upstream that asks for them.
#[test]
fn an_upstream_is_offered_the_workspace_roots() {
    let (_dir, root) = project();
    let other = tempfile::tempdir().unwrap();
    let other = other.path().canonicalize().unwrap();
    settings(&root, &server("up", json!({"tools": [{"name": "where", "asks_roots": true}]}), ""));
    let added = other.display().to_string();
    let (code, out, err) = run(&root, &["call", "mcp__up__where", "{}", "--allow", "mcp__up", "--add-dir", &added]);
    assert_eq!(code, 0, "{out}{err}");
    let reply: Value = serde_json::from_str(out.trim()).unwrap_or_else(|_| panic!("{out}"));
    assert_eq!(reply["client_capabilities"]["roots"], json!({}), "{reply}");
    let uris: Vec<&str> =
        reply["roots"]["roots"].as_array().unwrap().iter().map(|r| r["uri"].as_str().unwrap()).collect();
    let uri = |p: &Path| format!("file://{}", p.display());
    assert_eq!(uris, [uri(&root), uri(&other)], "{reply}");
}
