//! `toolbelt mcp` at MCP 2026-07-28, under the official Python SDK client in its default
//! mode (which probes `server/discover` and speaks 2026-07-28 to a server that offers it):
//! over stdio and Streamable HTTP, no `initialize`; the session remembers what was read
//! between requests; approvals and questions travel as `input_required` results; and a
//! tampered, misused or replayed `requestState` is refused (an unanswered question is asked
//! again).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/http_server.rs"]
mod http_server;
#[path = "common/peers.rs"]
mod peers;

use http_server::HttpServer;
use peers::{Peers, project, run, script, toolbelt};

fn check_modern_session(seen: &Value, root: &Path) {
    assert_eq!((&seen["era"], &seen["version"]), (&json!("modern"), &json!("2026-07-28")), "{seen}");
    assert!(seen["tools"].as_u64().unwrap() > 10, "{seen}");
    assert_eq!(seen["read"], json!([false, "     1\thello from the workspace"]));
    // The Edit came in a request of its own: the read was remembered, and its approval went
    // to the client as an input_required result and came back with the retry.
    assert_eq!(seen["edit"][0], false, "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("hello.txt")).unwrap(), "goodbye from the workspace\n");
    let asked: Vec<&str> = seen["asked"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(asked[0].starts_with("Edit wants to "), "{asked:?}");
    // Declined: denied, nothing ran.
    assert_eq!(seen["declined"], json!([true, "permission denied: the user declined this call"]));
    assert!(!root.join("nope").exists());
    // AskUserQuestion: the question went out with the result, the answer came with the retry.
    assert_eq!(seen["answered"][0], false, "{seen}");
    assert!(seen["answered"][1].as_str().unwrap().contains("SQLite"), "{seen}");
    assert!(asked.iter().any(|m| m.contains("Which database")), "{asked:?}");
    // Brief's message came as a log message on the request's response: the client opted in.
    assert_eq!(seen["brief"][0], false, "{seen}");
    assert!(seen["logs"].as_array().unwrap().iter().any(|l| l == "Halfway there."), "{seen}");

    // By hand: the first attempt asks for an approval under a key, with a sealed state.
    assert_eq!((&seen["first"], &seen["key"]), (&json!("InputRequiredResult"), &json!("input-0")), "{seen}");
    let refused = |what: &str, because: &str| {
        let said = seen[what].as_str().unwrap();
        assert!(said.contains(because), "{what}: {said}");
    };
    refused("tampered", "not one this server issued for this call");
    refused("other_call", "not one this server issued for this call");
    // Sent back without its answer: the question is asked again, under a new state (the old
    // one was spent).
    assert_eq!(seen["unanswered"], json!(["InputRequiredResult", ["input-0"]]), "{seen}");
    refused("replayed_unanswered", "used already");
    assert_eq!(seen["redeemed"], json!(["CallToolResult", false]), "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("w.txt")).unwrap(), "sealed\n");
    assert!(!root.join("other.txt").exists());
    refused("replayed", "used already");
}

#[test]
fn the_python_sdk_speaks_2026_07_28_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("modern_client.py")).arg("stdio").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, "");
    check_modern_session(&seen, &root);
}

#[test]
fn the_python_sdk_speaks_2026_07_28_over_http_without_sessions() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let server = HttpServer::start(&root);
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("modern_client.py")).arg("http").arg(&server.url).arg(&root);
    let seen = run(cmd, &root, "");
    check_modern_session(&seen, &root);
}
