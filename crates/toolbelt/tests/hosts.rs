//! The host snippets of README.md ("In your MCP host"), each started the way its host starts
//! it and spoken to over stdio: what a user pastes works.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// One host's way of starting toolbelt, as the README gives it.
#[derive(Debug)]
struct Launch {
    host: String,
    command: String,
    args: Vec<String>,
}

/// The code blocks of the README's host section, each with the host named in the line above.
fn snippets() -> Vec<Launch> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../README.md")).unwrap();
    let start = readme.find("\n## In your MCP host\n").expect("README has the host section");
    let section = &readme[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |end| end + 3)];
    let lines: Vec<&str> = section.lines().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let Some(lang) = lines[i].strip_prefix("```").filter(|l| !l.is_empty()) else {
            i += 1;
            continue;
        };
        let host = lines[..i].iter().rev().find(|l| !l.trim().is_empty()).unwrap();
        let host = host.split(',').next().unwrap().trim().to_string();
        let end = i + 1 + lines[i + 1..].iter().position(|l| *l == "```").unwrap();
        let body = lines[i + 1..end].join("\n");
        out.push(parse(&host, lang, &body));
        i = end + 1;
    }
    out
}

fn parse(host: &str, lang: &str, body: &str) -> Launch {
    let (command, args): (String, Vec<String>) = match lang {
        "json" => {
            let v: Value = serde_json::from_str(body).unwrap_or_else(|e| panic!("{host}: not JSON: {e}"));
            let server = if v.get("servers").is_some() {
                assert_eq!(v["servers"]["toolbelt"]["type"], "stdio", "{host}");
                &v["servers"]["toolbelt"]
            } else {
                &v["mcpServers"]["toolbelt"]
            };
            (server["command"].as_str().unwrap().into(), serde_json::from_value(server["args"].clone()).unwrap())
        }
        "toml" => {
            let doc: toml_edit::DocumentMut = body.parse().unwrap_or_else(|e| panic!("{host}: not TOML: {e}"));
            let server = &doc["mcp_servers"]["toolbelt"];
            let args = server["args"].as_array().unwrap().iter().map(|a| a.as_str().unwrap().to_string()).collect();
            (server["command"].as_str().unwrap().into(), args)
        }
        "yaml" => {
            // Goose's extension entry: `cmd: x` and a flow list `args: [...]` (JSON syntax).
            let field = |name: &str| {
                body.lines()
                    .find_map(|l| l.trim().strip_prefix(&format!("{name}: ")).map(str::to_string))
                    .unwrap_or_else(|| panic!("{host}: no `{name}:`"))
            };
            assert_eq!(field("type"), "stdio", "{host}");
            assert_eq!(field("enabled"), "true", "{host}");
            (field("cmd"), serde_json::from_str(&field("args")).unwrap())
        }
        other => panic!("{host}: unexpected snippet language {other}"),
    };
    Launch { host: host.to_string(), command, args }
}

/// Speaks to one launched server as a host without elicitation would.
fn session(launch: &Launch, project: &Path, elsewhere: &Path) {
    assert_eq!(launch.command, "toolbelt", "{launch:?}");
    let folder = project.display().to_string();
    let args: Vec<String> = launch.args.iter().map(|a| a.replace("${workspaceFolder}", &folder)).collect();
    // A host that passes the folder may start the server anywhere; the others start it in the project.
    let cwd = if launch.args.iter().any(|a| a.contains("${workspaceFolder}")) { elsewhere } else { project };
    let mut cmd = Command::new(assert_cmd::cargo::cargo_bin("toolbelt"));
    cmd.args(&args).current_dir(cwd);
    let mut child = hermetic::isolate(&mut cmd, &elsewhere.join("home"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut ask = |id: u64, method: &str, params: Value| -> Value {
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        if id == 1 {
            writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        }
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|_| panic!("{}: not JSON on stdout: {line:?}", launch.host))
    };
    let host = &launch.host;
    let init = ask(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": host, "version": "1"}}),
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "toolbelt", "{host}: {init}");
    let tools = ask(2, "tools/list", json!({}));
    let names: Vec<&str> =
        tools["result"]["tools"].as_array().unwrap().iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(names.contains(&"Read") && names.contains(&"Bash"), "{host}: {names:?}");
    // acceptEdits: an edit inside the project runs without a question…
    let write = ask(3, "tools/call", json!({"name": "Write", "arguments": {"file_path": "notes.md", "content": host}}));
    assert_ne!(write["result"]["isError"], true, "{host}: {write}");
    assert_eq!(std::fs::read_to_string(project.join("notes.md")).unwrap(), *host);
    let read = ask(4, "tools/call", json!({"name": "Read", "arguments": {"file_path": "notes.md"}}));
    assert!(read["result"]["content"][0]["text"].as_str().unwrap().contains(host.as_str()), "{host}: {read}");
    // …a command that is not read-only asks, and with no way to ask it is refused with the rule.
    let bash = ask(5, "tools/call", json!({"name": "Bash", "arguments": {"command": "touch made"}}));
    assert_eq!(bash["result"]["isError"], true, "{host}: {bash}");
    assert!(bash.to_string().contains("--allow 'Bash(touch"), "{host}: {bash}");
    assert!(!project.join("made").exists());
    drop(stdin);
    assert!(child.wait().unwrap().success(), "{host}");
}

#[test]
fn every_host_snippet_in_the_readme_starts_a_working_server() {
    let launches = snippets();
    let hosts: Vec<&str> = launches.iter().map(|l| l.host.as_str()).collect();
    assert_eq!(hosts, ["Claude Code", "Codex", "Cursor", "VS Code", "Goose"]);
    for launch in &launches {
        let dir = tempfile::tempdir().unwrap();
        let root: PathBuf = dir.path().canonicalize().unwrap();
        let project = root.join("project");
        let elsewhere = root.join("elsewhere");
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        session(launch, &project, &elsewhere);
        assert!(!elsewhere.join("notes.md").exists(), "{}", launch.host);
    }
}
