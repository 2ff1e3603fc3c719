//! A 2026-07-28 client carries a person's answers between the rounds of a call in
//! `requestState`, and can send back anything it likes: a forged state, an approval of one
//! command moved to another, a state of another server process, the same state twice, or
//! answers without any state. Each is refused, and nothing runs. And a call is re-run with
//! the answers only when it asked before it acted: what it asks afterwards (a protected place
//! its command made) is not put to the client, or the retry would run the command again.

use serde_json::{Value, json};

use super::{Mcp, World};

/// A 2026-07-28 request's `_meta`, for a client that answers forms.
fn meta() -> Value {
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientInfo": {"name": "attacker", "version": "1"},
           "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}})
}

/// `tools/call` of Bash with `command`, and the state and answers of a retry, if any.
fn bash(mcp: &mut Mcp, command: &str, state: Option<&str>, answers: Option<Value>) -> Value {
    let mut params = json!({"name": "Bash", "arguments": {"command": command}, "_meta": meta()});
    if let Some(state) = state {
        params["requestState"] = json!(state);
    }
    if let Some(answers) = answers {
        params["inputResponses"] = answers;
    }
    mcp.request("tools/call", params)
}

fn allow_once() -> Value {
    json!({"input-0": {"action": "accept", "content": {"decision": "allow_once"}}})
}

/// The state of the `input_required` result `answer` is, after checking it asks for approval.
fn state_of(answer: &Value) -> String {
    let result = &answer["result"];
    assert_eq!(result["resultType"], "input_required", "{answer}");
    assert!(result["inputRequests"]["input-0"]["params"]["message"].as_str().unwrap().starts_with("Bash wants to"));
    result["requestState"].as_str().unwrap().to_string()
}

fn refused(answer: &Value, because: &str) {
    assert_eq!(answer["error"]["code"], -32602, "{answer}");
    assert!(answer["error"]["message"].as_str().unwrap().contains(because), "{answer}");
}

#[test]
fn a_request_state_approves_only_its_own_call_once_in_the_process_that_issued_it() {
    let w = World::new();
    let (x, y) = (w.root.join("x"), w.root.join("y"));
    let touch = |p: &std::path::Path| format!("touch {}", p.display());
    let mut mcp = w.mcp_unopened(&[]);
    let state = state_of(&bash(&mut mcp, &touch(&x), None, None));

    // Answers without a state: nothing was asked, as far as the server knows; it asks.
    state_of(&bash(&mut mcp, &touch(&x), None, Some(allow_once())));
    // The approval of `touch x` sent with `touch y`.
    refused(&bash(&mut mcp, &touch(&y), Some(&state), Some(allow_once())), "not one this server issued");
    // A forged state, and the real one altered.
    refused(&bash(&mut mcp, &touch(&x), Some("rs1.e30.AAAA"), Some(allow_once())), "not one this server issued");
    let mut altered = state.clone();
    let last = altered.pop().unwrap();
    altered.push(if last == 'A' { 'B' } else { 'A' });
    refused(&bash(&mut mcp, &touch(&x), Some(&altered), Some(allow_once())), "not one this server issued");
    // A state another server process issued for the very same call.
    let mut other = w.mcp_unopened(&[]);
    let foreign = state_of(&bash(&mut other, &touch(&x), None, None));
    refused(&bash(&mut mcp, &touch(&x), Some(&foreign), Some(allow_once())), "not one this server issued");
    assert!(!x.exists() && !y.exists(), "nothing ran");

    // The state, with its call: the command runs, once.
    let done = bash(&mut mcp, &touch(&x), Some(&state), Some(allow_once()));
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert!(x.exists(), "{done}");
    std::fs::remove_file(&x).unwrap();
    refused(&bash(&mut mcp, &touch(&x), Some(&state), Some(allow_once())), "used already");
    assert!(!x.exists() && !y.exists());
}

#[test]
fn what_a_call_asks_after_it_acted_does_not_make_it_run_again() {
    let w = World::new();
    let mut mcp = w.mcp_unopened(&[]);
    // Approved, the command runs once and makes a protected place; that follow-up is not
    // asked in another round (the retry would run the command again): it is moved aside.
    let command = "echo ran >> runs.txt && mkdir .vscode";
    let state = state_of(&bash(&mut mcp, command, None, None));
    let done = bash(&mut mcp, command, Some(&state), Some(allow_once()));
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(std::fs::read_to_string(w.root.join("runs.txt")).unwrap(), "ran\n", "ran once: {done}");
    assert!(!w.root.join(".vscode").exists() && w.root.join(".vscode.set-aside").is_dir(), "{done}");
    assert!(done.to_string().contains("moved to"), "the result says where: {done}");
}
