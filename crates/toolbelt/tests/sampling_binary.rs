//! Agents on the host's model, through the real binary: `toolbelt mcp --http` with no model
//! provider configured, and the official Python SDK client lending its model through
//! `sampling/createMessage` with tools. Skipped when the MCP test peers are not installed
//! (outside CI).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

fn python() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers/venv/bin/python");
    if venv.exists() {
        return Some(venv);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(!ci, "the MCP test peers are not installed in .ci/peers; .ci/run installs them");
    eprintln!("skipped: the MCP test peers are not installed (run .ci/run, or see it for the commands)");
    None
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn an_agent_runs_on_the_clients_model_through_toolbelt_mcp() {
    let Some(python) = python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let notes = root.join("notes.txt");
    std::fs::write(&notes, "the launch moved to Thursday\n").unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let _server = Server(
        hermetic::toolbelt(&root)
            .args(["mcp", "--http", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    for _ in 0..200 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolbelt-mcp/tests/peers/sampling_client.py");
    let out = root.join("seen.json");
    let output = std::process::Command::new(python)
        .arg(script)
        .args(["http", &format!("http://127.0.0.1:{port}/mcp"), "tools"])
        .arg(&notes)
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let seen: Value = serde_json::from_str(
        &std::fs::read_to_string(&out).unwrap_or_else(|e| panic!("no report ({e}): {}\n{stderr}", output.status)),
    )
    .unwrap();
    assert!(seen.get("failure").is_none(), "{}\n{stderr}", seen["failure"]);
    let tools: Vec<&str> = seen["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"Agent"), "a sampling client is offered the agent tools: {tools:?}");
    let agent = &seen["agent"];
    assert_eq!(agent["is_error"], false, "{seen}");
    assert!(agent["text"].as_str().unwrap().starts_with("The notes say: the launch moved to Thursday"), "{seen}");
    assert_eq!(agent["structured"]["tool_calls"], 1, "{seen}");
    let sampling = seen["sampling"].as_array().unwrap();
    assert_eq!(sampling.len(), 2, "{seen}");
    let offered: Vec<&str> = sampling[0]["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(offered.contains(&"Read") && !offered.contains(&"Agent"), "{offered:?}");
}
