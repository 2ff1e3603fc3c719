//! The MCP server, driven by a real rmcp client over a duplex pipe.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::*;
use rmcp::model::{CallToolRequestParams, ClientRequest, PaginatedRequestParams};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use toolbelt_policy::PermissionMode;

#[tokio::test]
async fn tools_are_listed_with_schemas_and_annotations() {
    let h = connect(PermissionMode::Default, &[], Client::default()).await;
    let info = h.client.peer().peer_info().unwrap();
    assert_eq!(info.server_info.as_ref().unwrap().name, "toolbelt");
    assert!(info.capabilities.tools.is_some());
    let tools = h.client.peer().list_tools(None::<PaginatedRequestParams>).await.unwrap();
    let tools = serde_json::to_value(&tools.tools).unwrap();
    let bash = tools.as_array().unwrap().iter().find(|t| t["name"] == "Bash").unwrap();
    assert_eq!(bash["inputSchema"]["required"], json!(["command"]));
    assert!(bash["outputSchema"]["properties"]["exit_code"].is_object(), "{bash}");
    assert_eq!(bash["annotations"]["title"], "Run a shell command");
    assert_eq!(bash["annotations"]["readOnlyHint"], false);
    let read = tools.as_array().unwrap().iter().find(|t| t["name"] == "Read").unwrap();
    assert_eq!(read["annotations"]["readOnlyHint"], true);
}

#[tokio::test]
async fn results_errors_and_structured_content() {
    let h = connect(PermissionMode::AcceptEdits, &["Bash(echo *)"], Client::default()).await;
    h.write("a.txt", "alpha\nbeta\n");
    let r = h.call("Read", json!({"file_path": "a.txt"})).await.unwrap();
    assert!(!is_error(&r));
    assert_eq!(text(&r), "     1\talpha\n     2\tbeta");
    // Read's typed result arrives as structuredContent beside the text.
    let structured = r.structured_content.as_ref().unwrap();
    assert_eq!((structured["num_lines"].clone(), structured["total_lines"].clone()), (json!(2), json!(2)));
    // A typed result carries structuredContent.
    let r = h.call("Bash", json!({"command": "echo hi"})).await.unwrap();
    assert_eq!(r.structured_content.as_ref().unwrap()["exit_code"], 0);
    // A tool failure is a result the model reads, not a protocol error.
    let r = h.call("Read", json!({"file_path": "missing.txt"})).await.unwrap();
    assert!(is_error(&r) && text(&r).contains("missing.txt"), "{}", text(&r));
    let r = h.call("Read", json!({"file_path": 5})).await.unwrap();
    assert!(is_error(&r) && text(&r).contains("/file_path: expected string"), "{}", text(&r));
    // An unknown tool is a protocol error naming the closest.
    let err = h.call("Reed", json!({})).await.unwrap_err();
    assert!(err.contains("unknown tool `Reed`") && err.contains("`Read`"), "{err}");
}

#[tokio::test]
async fn images_come_back_as_image_content() {
    let h = connect(PermissionMode::Default, &[], Client::default()).await;
    // A 1×1 PNG.
    let png: [u8; 67] = [
        0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
        0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00,
        0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d,
        0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82,
    ];
    std::fs::write(h.root.join("dot.png"), png).unwrap();
    let r = h.call("Read", json!({"file_path": "dot.png"})).await.unwrap();
    let v = serde_json::to_value(&r).unwrap();
    let image = v["content"].as_array().unwrap().iter().find(|c| c["type"] == "image").unwrap();
    assert_eq!(image["mimeType"], "image/png");
    assert!(!image["data"].as_str().unwrap().is_empty());
}

/// A Bash call sent as a cancellable request, which carries a progress token.
async fn bash_in_flight(h: &Harness, command: &str) -> rmcp::service::RequestHandle<rmcp::RoleClient> {
    let params: CallToolRequestParams =
        serde_json::from_value(json!({"name": "Bash", "arguments": {"command": command}})).unwrap();
    let request = ClientRequest::CallToolRequest(rmcp::model::Request::new(params));
    h.client.peer().send_cancellable_request(request, PeerRequestOptions::default()).await.unwrap()
}

#[tokio::test]
async fn live_output_arrives_as_progress() {
    let h = connect(PermissionMode::BypassPermissions, &[], Client::default()).await;
    let handle = bash_in_flight(&h, "for i in 1 2 3; do echo line$i; sleep 0.2; done").await;
    let response = handle.await_response().await.unwrap();
    let response = serde_json::to_value(&response).unwrap();
    assert!(response.to_string().contains("line3"), "{response}");
    let progress = h.seen.progress.lock().unwrap().join("");
    assert!(progress.contains("line1") && progress.contains("line3"), "{progress:?}");
}

#[tokio::test]
async fn cancelling_a_call_kills_its_processes() {
    let h = connect(PermissionMode::BypassPermissions, &[], Client::default()).await;
    let pid_file = h.root.join("sleeper.pid");
    let handle = bash_in_flight(&h, &format!("sleep 60 & echo $! > {}; wait", pid_file.display())).await;
    assert!(eventually(|| std::fs::read_to_string(&pid_file).is_ok_and(|s| s.ends_with('\n'))).await);
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    assert!(alive(&pid));
    handle.cancel(Some("the user pressed Esc".into())).await.unwrap();
    assert!(eventually(|| !alive(&pid)).await, "the command's process {pid} outlived the cancellation");
}

fn asking_client(answer: Value) -> Client {
    Client { answer: Some(Arc::new(Mutex::new(answer))), ..Client::default() }
}

#[tokio::test]
async fn an_ask_becomes_an_elicitation() {
    let accept = |decision: &str| json!({"action": "accept", "content": {"decision": decision}});
    let h = connect(PermissionMode::Default, &[], asking_client(accept("allow_once"))).await;
    let r = h.call("Write", json!({"file_path": "notes.md", "content": "hi\n"})).await.unwrap();
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(std::fs::read_to_string(h.root.join("notes.md")).unwrap(), "hi\n");
    let asked = h.seen.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert!(asked[0].starts_with("Write wants to write ") && asked[0].contains("notes.md"), "{asked:?}");
    assert!(asked[0].contains("\"Always allow\" adds Edit(./notes.md)"), "{asked:?}");
    // The answers the terminal offers, by the same names (`toolbelt_policy::offers`).
    let form = h.seen.requests.lock().unwrap()[0].clone();
    let decision = &form["requestedSchema"]["properties"]["decision"];
    assert_eq!(decision["enum"], json!(["allow_once", "allow_session", "allow_always", "accept_edits", "deny"]));
    assert_eq!(
        decision["enumNames"],
        json!([
            "Allow once",
            "Allow for this session",
            "Always allow Edit(./notes.md)",
            "Allow all edits for the rest of this session (acceptEdits mode)",
            "Deny"
        ])
    );

    // Denied with a reason: the model reads it, nothing is written.
    *h.seen.answer.as_ref().unwrap().lock().unwrap() =
        json!({"action": "accept", "content": {"decision": "deny", "reason": "not that file"}});
    let r = h.call("Write", json!({"file_path": "other.md", "content": "x"})).await.unwrap();
    assert!(is_error(&r));
    assert_eq!(text(&r), "permission denied: the user denied this call: not that file");
    assert!(!h.root.join("other.md").exists());
    *h.seen.answer.as_ref().unwrap().lock().unwrap() = json!({"action": "decline"});
    let r = h.call("Bash", json!({"command": "touch x"})).await.unwrap();
    assert_eq!(text(&r), "permission denied: the user declined this call");

    // For the session: asked once, then remembered.
    *h.seen.answer.as_ref().unwrap().lock().unwrap() = accept("allow_session");
    let before = h.seen.asked.lock().unwrap().len();
    for _ in 0..2 {
        let r = h.call("Bash", json!({"command": "mkdir -p build"})).await.unwrap();
        assert!(!is_error(&r), "{}", text(&r));
    }
    assert_eq!(h.seen.asked.lock().unwrap().len(), before + 1);
}

#[tokio::test]
async fn allowing_all_edits_switches_the_session_to_accept_edits() {
    let accept = |decision: &str| json!({"action": "accept", "content": {"decision": decision}});
    let h = connect(PermissionMode::Default, &[], asking_client(accept("accept_edits"))).await;
    let r = h.call("Write", json!({"file_path": "a.md", "content": "a"})).await.unwrap();
    assert!(!is_error(&r), "{}", text(&r));
    let offered = h.seen.requests.lock().unwrap()[0]["requestedSchema"]["properties"]["decision"].clone();
    assert!(offered.to_string().contains("accept_edits"), "{offered}");
    // Later edits inside the workspace are not asked about; a command still is.
    let r = h.call("Edit", json!({"file_path": "a.md", "old_string": "a", "new_string": "b"})).await.unwrap();
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(h.seen.asked.lock().unwrap().len(), 1);
    *h.seen.answer.as_ref().unwrap().lock().unwrap() = json!({"action": "decline"});
    let r = h.call("Bash", json!({"command": "mkdir -p build"})).await.unwrap();
    assert!(is_error(&r));
    assert_eq!(h.seen.asked.lock().unwrap().len(), 2);
    // A command's question never offers the switch.
    let offered = h.seen.requests.lock().unwrap()[1]["requestedSchema"]["properties"]["decision"].clone();
    assert!(!offered.to_string().contains("accept_edits"), "{offered}");
}

#[tokio::test]
async fn without_elicitation_an_ask_is_denied_with_the_rule() {
    let h = connect(PermissionMode::Default, &[], Client::default()).await;
    let r = h.call("Bash", json!({"command": "cargo build"})).await.unwrap();
    assert!(is_error(&r));
    assert!(text(&r).contains("--allow 'Bash(cargo build *)'"), "{}", text(&r));
}

#[tokio::test]
async fn roots_from_the_client_are_the_workspace() {
    let outer = tempfile::tempdir().unwrap();
    let (a, b) = (outer.path().canonicalize().unwrap().join("a"), outer.path().canonicalize().unwrap().join("b"));
    for (dir, file) in [(&a, "in-a.txt"), (&b, "in-b.txt")] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join(file), file).unwrap();
    }
    let roots = Arc::new(Mutex::new(vec![a.clone()]));
    let client = Client { roots: Some(roots.clone()), ..Client::default() };
    let h = connect(PermissionMode::Default, &[], client).await;
    assert!(eventually(|| h.server.session().state().roots() == vec![a.clone()]).await);
    let r = h.call("Read", json!({"file_path": "in-a.txt"})).await.unwrap();
    assert!(!is_error(&r), "a relative path resolves in the client's root: {}", text(&r));
    // The root the server started with is no longer reachable.
    h.write("start.txt", "x");
    let r = h.call("Read", json!({"file_path": h.root.join("start.txt")})).await.unwrap();
    assert!(is_error(&r), "{}", text(&r));

    // The client changes its roots and says so: the workspace follows.
    *roots.lock().unwrap() = vec![b.clone()];
    h.client.peer().notify_roots_list_changed().await.unwrap();
    assert!(eventually(|| h.server.session().state().roots() == vec![b.clone()]).await);
    let r = h.call("Read", json!({"file_path": "in-b.txt"})).await.unwrap();
    assert!(!is_error(&r), "{}", text(&r));
    assert_eq!(h.server.session().state().cwd(), b);
}
