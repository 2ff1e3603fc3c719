//! Bash under the sandbox, end to end: what a command may write in each mode, the network
//! switch, and that the shell's own plumbing (cwd carry-over, background logs, spill files)
//! keeps working when the command may write nowhere.
//!
//! Roots live away from `/tmp` (wherever the checkout is), which the sandbox leaves writable.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod shell_support;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{Value, json};
use shell_support::{call_with, cx_with};
use toolbelt_core::{EventSink, Extensions, Limits, SessionState, ToolOutput};
use toolbelt_tools::shell::{SandboxConfig, SandboxMode};

fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = shell_support::beyond_tmp();
    let path = dir.path().canonicalize().unwrap();
    (dir, path)
}

fn services(mode: SandboxMode, network: bool) -> Extensions {
    let mut services = Extensions::default();
    services.insert(SandboxConfig { mode, network, ..SandboxConfig::default() });
    services
}

async fn bash(s: &Arc<SessionState>, services: &Extensions, input: Value) -> ToolOutput {
    let cx = cx_with(s, EventSink::none(), Limits::default(), services.clone());
    call_with(cx, "Bash", input).await.unwrap()
}

#[tokio::test]
async fn workspace_write_confines_writes_to_the_roots() {
    let (_r, root) = scratch();
    let (_o, outside) = scratch();
    let s = common::session(&root, &[]);
    let sandbox = services(SandboxMode::WorkspaceWrite, false);
    let command = format!("echo in > inside.txt && echo ok; echo out > '{}/f.txt'", outside.display());
    let out = bash(&s, &sandbox, json!({"command": command})).await;
    let text = out.joined_text();
    assert!(text.starts_with("ok\n") && text.contains("Permission denied"), "{text}");
    assert_eq!(std::fs::read_to_string(root.join("inside.txt")).unwrap(), "in\n");
    assert!(!outside.join("f.txt").exists());
    // Unconfined, the same write lands.
    let open = services(SandboxMode::DangerFullAccess, false);
    bash(&s, &open, json!({"command": format!("echo out > '{}/f.txt'", outside.display())})).await;
    assert!(outside.join("f.txt").exists());
}

#[tokio::test]
async fn read_only_blocks_every_write_but_the_shell_still_works() {
    let (_r, root) = scratch();
    std::fs::create_dir(root.join("sub")).unwrap();
    let s = common::session(&root, &[]);
    let sandbox = services(SandboxMode::ReadOnly, false);
    let out = bash(&s, &sandbox, json!({"command": "echo x > f.txt; mkdir d; cd sub && pwd"})).await;
    let text = out.joined_text();
    assert!(text.matches("Permission denied").count() >= 2, "{text}");
    assert!(!root.join("f.txt").exists() && !root.join("d").exists());
    // The cd still carries over: the directory is reported on an inherited pipe.
    assert_eq!(s.cwd(), root.join("sub"));
    // Long output still spills (the server writes the file, not the command).
    let out = bash(&s, &sandbox, json!({"command": "seq 1 100000"})).await;
    let spill = out.structured.unwrap()["output_file"].as_str().unwrap().to_string();
    assert_eq!(std::fs::read(spill).unwrap().len(), 588_895);
    // A background task's output still reaches its log.
    let cx = cx_with(&s, EventSink::none(), Limits::default(), sandbox.clone());
    let started = call_with(cx, "Bash", json!({"command": "echo from-task", "run_in_background": true})).await.unwrap();
    let id = started.structured.unwrap()["task_id"].as_str().unwrap().to_string();
    let text = common::ok(&s, "TaskOutput", json!({"task_id": id, "timeout": 20000})).await;
    assert!(text.contains("from-task"), "{text}");
}

#[tokio::test]
async fn the_network_is_off_unless_turned_on() {
    let (_r, root) = scratch();
    let s = common::session(&root, &[]);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let connect = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    let off = bash(&s, &services(SandboxMode::WorkspaceWrite, false), json!({"command": connect})).await;
    let text = off.joined_text();
    assert!(!text.contains("connected"), "{text}");
    let on = bash(&s, &services(SandboxMode::WorkspaceWrite, true), json!({"command": connect})).await;
    assert_eq!(on.joined_text(), "connected\n");
}

#[tokio::test]
async fn the_default_is_workspace_write_with_the_network_off() {
    let (_r, root) = scratch();
    let (_o, outside) = scratch();
    let s = common::session(&root, &[]);
    let text =
        common::ok(&s, "Bash", json!({"command": format!("touch '{}/x' || echo refused", outside.display())})).await;
    assert!(text.contains("refused"), "{text}");
    assert!(!outside.join("x").exists());
}
