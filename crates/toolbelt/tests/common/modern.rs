//! What a session of `peers/modern_client.py` (the official Python SDK at MCP 2026-07-28)
//! must have seen, served by one server or by a team of replicas.

use std::path::Path;

use serde_json::{Value, json};

/// Checks what modern_client.py saw (`seen`) of a session working in `root`.
pub fn check_modern_session(seen: &Value, root: &Path) {
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
