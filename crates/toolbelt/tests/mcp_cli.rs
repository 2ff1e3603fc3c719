//! `toolbelt mcp` and `toolbelt mcp-servers` as processes, spoken to in raw JSON-RPC.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

fn toolbelt(root: &Path) -> Command {
    hermetic::toolbelt_with_home(root, &root.join("home"))
}

fn project() -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// Sends each message, reads one answer line per request; every line on stdout must be JSON.
fn converse(root: &Path, messages: &[Value]) -> Vec<Value> {
    let mut child = toolbelt(root)
        .args(["mcp", "-v"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for message in messages {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        if message.get("id").is_some() {
            let mut line = String::new();
            stdout.read_line(&mut line).unwrap();
            answers
                .push(serde_json::from_str::<Value>(&line).unwrap_or_else(|_| panic!("not JSON on stdout: {line:?}")));
        }
    }
    drop(stdin);
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(rest.trim().is_empty(), "stdout must carry only protocol messages: {rest:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).is_empty(), "with -v, logs go to stderr");
    answers
}

fn initialize(id: u64, version: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

#[test]
fn initialize_answers_each_supported_revision() {
    let (_dir, root) = project();
    for version in ["2025-06-18", "2025-11-25", "2025-03-26"] {
        let answers = converse(&root, &[initialize(1, version)]);
        assert_eq!(answers[0]["result"]["protocolVersion"], version);
        assert_eq!(answers[0]["result"]["serverInfo"]["name"], "toolbelt");
    }
    // A 2026-07-28 discovery probe is told what is supported, so the client can fall back.
    let discover =
        json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta("2026-07-28")}});
    let answers = converse(&root, &[discover, initialize(2, "2025-11-25")]);
    assert_eq!(
        answers[0]["result"]["supportedVersions"],
        json!(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"]),
        "{}",
        answers[0]
    );
    assert_eq!(answers[1]["result"]["protocolVersion"], "2025-11-25");
}

/// A 2026-07-28 request's `_meta`: who the client is, with every request.
fn meta(version: &str) -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": version,
           "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
           "io.modelcontextprotocol/clientCapabilities": {}})
}

#[test]
fn a_2026_07_28_client_is_served_without_initialize() {
    let (_dir, root) = project();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    let call = |id: u64, name: &str, args: Value, version: &str| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args, "_meta": meta(version)}});
    let answers = converse(
        &root,
        &[
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta("2026-07-28")}}),
            call(2, "Read", json!({"file_path": "notes.txt"}), "2026-07-28"),
            call(3, "Edit", json!({"file_path": "notes.txt", "old_string": "two", "new_string": "2"}), "2026-07-28"),
            call(4, "Read", json!({"file_path": "notes.txt"}), "2099-01-01"),
            json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}),
        ],
    );
    assert!(answers[0]["result"]["tools"].as_array().unwrap().iter().any(|t| t["name"] == "Edit"), "{}", answers[0]);
    assert_eq!(answers[1]["result"]["resultType"], "complete");
    assert_eq!(answers[1]["result"]["content"][0]["text"], "     1\tone\n     2\ttwo");
    // The Edit needs approval, and this client cannot answer forms: refused, naming the rule.
    let denied = answers[2]["result"]["content"][0]["text"].as_str().unwrap();
    assert!(denied.contains("--allow 'Edit(./notes.txt)'"), "{denied}");
    // A version it does not speak: the reserved code, with the versions it does.
    assert_eq!(answers[3]["error"]["code"], -32022, "{}", answers[3]);
    assert_eq!(answers[3]["error"]["data"]["supported"][4], "2026-07-28");
    // Every request says who the client is; one that does not is refused, saying what is missing.
    assert_eq!(answers[4]["error"]["code"], -32602, "{}", answers[4]);
    assert!(answers[4]["error"]["message"].as_str().unwrap().contains("protocolVersion"), "{}", answers[4]);
}

#[test]
fn a_session_over_stdio() {
    let (_dir, root) = project();
    std::fs::write(root.join("notes.txt"), "one\ntwo\n").unwrap();
    let call = |id: u64, name: &str, args: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}});
    let answers = converse(
        &root,
        &[
            initialize(1, "2025-06-18"),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            call(3, "Read", json!({"file_path": "notes.txt"})),
            call(4, "Edit", json!({"file_path": "notes.txt", "old_string": "two", "new_string": "2"})),
            call(5, "Nope", json!({})),
        ],
    );
    let tools = answers[1]["result"]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "Edit" && t["annotations"]["destructiveHint"] == true));
    assert_eq!(answers[2]["result"]["content"][0]["text"], "     1\tone\n     2\ttwo");
    // Default mode, nobody to ask: the edit is refused with the rule that would allow it.
    let denied = answers[3]["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(answers[3]["result"]["isError"], true);
    assert!(denied.contains("--allow 'Edit(./notes.txt)'"), "{denied}");
    assert_eq!(answers[4]["error"]["code"], -32602);
}

#[test]
fn mcp_servers_reports_each_upstream() {
    let (_dir, root) = project();
    let script = root.join("tiny.py");
    std::fs::write(&script, tiny("drop table")).unwrap();
    std::fs::write(
        root.join(".mcp.json"),
        json!({"mcpServers": {"tiny": {"command": "python3", "args": [script]}, "gone": {"command": "/no/such/binary"}}})
            .to_string(),
    )
    .unwrap();
    // Untrusted, the project's servers are not started, and it says how to trust.
    let out = toolbelt(&root).arg("mcp-servers").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("MCP servers tiny, gone") && err.contains("toolbelt trust"), "{err}");
    assert!(toolbelt(&root).arg("trust").status().unwrap().success());
    let out = toolbelt(&root).arg("mcp-servers").output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "a failed server makes the exit status 1: {text}");
    assert!(text.contains("tiny  stdio      connected, 2 tools"), "{text}");
    assert!(text.contains("gone  stdio      failed: cannot start `/no/such/binary`"), "{text}");
    // Each connected server's tools, under its line.
    assert!(text.contains(&format!("\n{}mcp__tiny__ping, mcp__tiny__drop_table\n", " ".repeat(17))), "{text}");
    let names = toolbelt(&root).args(["tools", "--format", "names", "--category", "mcp"]).output().unwrap();
    let names = String::from_utf8_lossy(&names.stdout);
    assert!(names.contains("mcp__tiny__ping") && names.contains("mcp__tiny__drop_table"), "{names}");
    // `permissions explain` knows the servers' tools as `tools` and `call` do.
    let out = toolbelt(&root).args(["permissions", "explain", "mcp__tiny__ping", "{}"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.starts_with("mcp__tiny__ping {}\n") && text.contains("decision:   ask"), "{text}");
    assert!(text.contains("to allow:   --allow 'mcp__tiny__ping'"), "{text}");
    let out = toolbelt(&root).args(["permissions", "explain", "mcp__tiny__nope", "{}"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown tool `mcp__tiny__nope`"));
}

/// A stdio MCP server in Python answering `initialize` and `tools/list` with two tools:
/// `ping` and `second`.
fn tiny(second: &str) -> String {
    format!(
        r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        result = {{"protocolVersion": msg["params"]["protocolVersion"], "capabilities": {{"tools": {{}}}},
                  "serverInfo": {{"name": "tiny", "version": "1"}}}}
    elif msg.get("method") == "tools/list":
        result = {{"tools": [{{"name": "ping", "inputSchema": {{"type": "object"}}}},
                            {{"name": "{second}", "inputSchema": {{"type": "object"}}}}]}}
    else:
        continue
    print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": result}}), flush=True)
"#
    )
}

#[test]
fn mcp_servers_reports_a_silent_server_at_its_startup_timeout() {
    let (_dir, root) = project();
    std::fs::write(root.join("tiny.py"), tiny("secret")).unwrap();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!(
            "[mcp.servers.silent]\ncommand = \"python3\"\nargs = [\"-c\", \"import time; time.sleep(30)\"]\n\
             startup_timeout = 1.5\n\n\
             [mcp.servers.tiny]\ncommand = \"python3\"\nargs = [{:?}]\n\
             env = {{ TINY_TOKEN = \"${{TOOLBELT_TEST_UNSET_TOKEN}}\" }}\n",
            root.join("tiny.py").display().to_string()
        ),
    )
    .unwrap();
    assert!(toolbelt(&root).arg("trust").status().unwrap().success());
    let started = std::time::Instant::now();
    let out = toolbelt(&root).arg("mcp-servers").env_remove("TOOLBELT_TEST_UNSET_TOKEN").output().unwrap();
    let elapsed = started.elapsed();
    let (text, err) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{text}{err}");
    assert!(text.contains("silent  stdio      failed: no answer within 1.5 s"), "{text}");
    assert!(text.contains("tiny    stdio      connected, 2 tools (MCP 2025-11-25)\n"), "{text}");
    // Reported at its startup timeout, not later.
    assert!(elapsed < std::time::Duration::from_secs(5), "took {elapsed:?}");
    // The unset variable is named, with the server.
    assert!(
        err.contains("MCP server `tiny`: env.TINY_TOKEN uses ${TOOLBELT_TEST_UNSET_TOKEN}, which is not set"),
        "{err}"
    );
    let out = toolbelt(&root).args(["mcp-servers", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tiny = listed.as_array().unwrap().iter().find(|s| s["name"] == "tiny").unwrap();
    assert_eq!(tiny["tool_names"], json!(["mcp__tiny__ping", "mcp__tiny__secret"]), "{listed}");
}

/// Lines from the server's stdout, read on a thread so a missing one fails the test
/// instead of hanging it.
/// `toolbelt mcp` started in `root`: the process, its stdin, and its stdout's lines as they
/// come.
fn serve_stdio(root: &Path) -> (std::process::Child, std::process::ChildStdin, Lines) {
    let mut child =
        toolbelt(root).arg("mcp").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn().unwrap();
    let stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    (child, stdin, Lines(rx))
}

struct Lines(std::sync::mpsc::Receiver<String>);

impl Lines {
    fn next(&self) -> Value {
        let line = self.0.recv_timeout(std::time::Duration::from_secs(20)).expect("a message from the server");
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("not JSON on stdout: {line:?}"))
    }

    /// The answer to request `id`, and the notifications that came before it.
    fn answer(&self, id: u64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let message = self.next();
            if message["id"] == id {
                return (message, notes);
            }
            notes.push(message);
        }
    }
}

#[test]
fn tools_that_join_late_are_announced() {
    let (_dir, root) = project();
    // The server fails its first start; started again, it waits for the test's go-ahead.
    let late = format!(
        "import os, sys, time\n\
         if not os.path.exists('started'):\n    open('started', 'w').close()\n    sys.exit(1)\n\
         while not os.path.exists('go'):\n    time.sleep(0.05)\n{}",
        tiny("secret")
    );
    std::fs::write(root.join("late.py"), late).unwrap();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        format!(
            "[permissions]\ndeny = [\"mcp__late__secret\"]\n\n\
             [mcp.servers.late]\ncommand = \"python3\"\nargs = [{:?}]\ncwd = {:?}\nstartup_timeout = 60\n",
            root.join("late.py").display().to_string(),
            root.display().to_string()
        ),
    )
    .unwrap();
    assert!(toolbelt(&root).arg("trust").status().unwrap().success());
    let (mut child, mut stdin, lines) = serve_stdio(&root);
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let names = |answer: &Value| -> Vec<String> {
        answer["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    };
    send(initialize(1, "2025-06-18"));
    let (init, _) = lines.answer(1);
    assert_eq!(init["result"]["capabilities"]["tools"]["listChanged"], true, "{init}");
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let (listed, _) = lines.answer(2);
    assert!(names(&listed).contains(&"Read".to_string()) && !names(&listed).iter().any(|n| n.starts_with("mcp__late")));
    // The server comes up: the client is told, and the next listing has its tools (but not
    // the one a deny rule hides).
    std::fs::write(root.join("go"), "").unwrap();
    let announced = lines.next();
    assert_eq!(announced["method"], "notifications/tools/list_changed", "{announced}");
    send(json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}));
    let (listed, _) = lines.answer(3);
    let names = names(&listed);
    assert!(names.contains(&"mcp__late__ping".to_string()), "{names:?}");
    assert!(!names.contains(&"mcp__late__secret".to_string()), "{names:?}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn ignored_project_settings_are_told_to_the_host() {
    let (_dir, root) = project();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(
        root.join(".toolbelt/config.toml"),
        "[permissions]\nmode = \"acceptEdits\"\n\n[[hooks.PreToolUse]]\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    )
    .unwrap();
    let (instructions, told) = what_the_host_hears(&root, 1);
    // The model reads the instructions: they say the project's settings are not applied.
    assert!(
        instructions.contains("this project's own settings (1 hook, permissions.mode) are ignored"),
        "{instructions}"
    );
    assert!(instructions.contains("toolbelt trust"), "{instructions}");
    // The host's user sees a log message, as soon as the session is initialized.
    assert!(told[0].contains("are ignored") && told[0].contains("`toolbelt trust`"), "{told:?}");
}

#[test]
fn a_project_file_that_does_not_parse_is_told_to_the_host() {
    let (_dir, root) = project();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(root.join(".toolbelt/config.toml"), "[permissions]\nmode = \"acceptEdit\"\n").unwrap();
    let (instructions, told) = what_the_host_hears(&root, 2);
    let problem = "config.toml:2: permissions.mode: `acceptEdit` is not a permission mode";
    assert!(instructions.contains(problem), "{instructions}");
    assert!(told.iter().any(|data| data.contains(problem) && data.contains("calls go on")), "{told:?}");
}

/// Starts `toolbelt mcp` in `root` and initializes a session: the instructions it answers
/// with, and the data of the first `warnings` warnings it logs to the client right after.
fn what_the_host_hears(root: &Path, warnings: usize) -> (String, Vec<String>) {
    let (mut child, mut stdin, lines) = serve_stdio(root);
    let mut send = |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(initialize(1, "2025-11-25"));
    let (init, _) = lines.answer(1);
    let instructions = init["result"]["instructions"].as_str().unwrap().to_string();
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let mut told = Vec::new();
    while told.len() < warnings {
        let message = lines.next();
        if message["method"] == "notifications/message" {
            assert_eq!(message["params"]["level"], "warning", "{message}");
            told.push(message["params"]["data"].as_str().unwrap().to_string());
        }
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    (instructions, told)
}

#[test]
fn a_server_whose_stdout_is_a_file_waits_for_a_slow_client() {
    // stdin a pipe, stdout a file (`toolbelt mcp > answers.jsonl`): the client writes only
    // after a while, and the server is still there to answer it.
    let (_dir, root) = project();
    let answers = root.join("answers.jsonl");
    let mut child = toolbelt(&root)
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(std::fs::File::create(&answers).unwrap())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(700));
    assert!(child.try_wait().unwrap().is_none(), "the server gave up on a quiet client");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{}", initialize(1, "2025-06-18")).unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let text = std::fs::read_to_string(&answers).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {text}\n{}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(first["result"]["serverInfo"]["name"], "toolbelt", "{first}");
}
