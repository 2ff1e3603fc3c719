//! toolbelt as a library: the builder sets up what the binary does, a hand-built runtime is
//! not allow-all, and the example agent loop drives a model over each API's real wire format
//! (a loopback server scripted as the model).
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolbelt::Toolbelt;
use toolbelt::core::{CancellationToken, EventSink};
use toolbelt::policy::PermissionMode;
use toolbelt::runtime::{Runtime, Session, ToolCall};
use toolbelt::settings::Key;

#[path = "common/hermetic.rs"]
mod hermetic;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(dir.path().join("home")).unwrap();
    std::fs::write(root.join("notes.md"), "the build uses make\n").unwrap();
    (dir, root)
}

#[tokio::test]
async fn the_builder_sets_up_what_the_binary_does() {
    let (dir, root) = project();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    let home = dir.path().join("home");
    let toolbelt = Toolbelt::builder(&root)
        .home(&home)
        .mode(PermissionMode::AcceptEdits)
        .deny("Read(./secrets/**)")
        .environment(false)
        .build()
        .await
        .unwrap();
    let session = toolbelt.session("lib");
    // An edit inside the workspace runs in acceptEdits; a deny rule holds; a command that is
    // not read-only asks, and with nobody to ask it is refused naming the rule.
    let write = ToolCall::new("1", "Write", json!({"file_path": "out.md", "content": "x\n"}));
    assert!(!toolbelt.call(&session, write).await.is_error);
    assert_eq!(std::fs::read_to_string(root.join("out.md")).unwrap(), "x\n");
    std::fs::create_dir_all(root.join("secrets")).unwrap();
    std::fs::write(root.join("secrets/k"), "K").unwrap();
    let read = toolbelt.call(&session, ToolCall::new("2", "Read", json!({"file_path": "secrets/k"}))).await;
    assert!(read.is_error && read.text().contains("Read(./secrets/**)"), "{}", read.text());
    let bash = toolbelt.call(&session, ToolCall::new("3", "Bash", json!({"command": "touch made"}))).await;
    assert!(bash.is_error && bash.text().contains("Bash(touch"), "{}", bash.text());
    assert!(!root.join("made").exists());
    // Protected paths hold: the project's settings are not an ordinary edit.
    let config = ToolCall::new("4", "Write", json!({"file_path": ".toolbelt/config.toml", "content": "x"}));
    assert!(toolbelt.call(&session, config).await.is_error);
    // Session files live in the user's state directory, not in the project.
    assert!(!root.join(".toolbelt/sessions").exists());
    assert!(session.data_dir().starts_with(home.join(".local/state/toolbelt/projects")), "{:?}", session.data_dir());
    // Bad settings are an error naming the file and line, not a runtime that ignores them.
    std::fs::create_dir_all(home.join(".config/toolbelt")).unwrap();
    std::fs::write(home.join(".config/toolbelt/config.toml"), "[permissions]\nmode = \"yolo\"\n").unwrap();
    let Err(e) = Toolbelt::builder(&root).home(&home).environment(false).build().await else {
        panic!("bad settings built")
    };
    assert!(e.to_string().contains("toolbelt/config.toml:2"), "{e}");
    let bad_flag = Toolbelt::builder(&root).home(&home).environment(false).setting(Key::SANDBOX_NETWORK, "yes");
    let Err(e) = bad_flag.build().await else { panic!("built") };
    assert!(e.to_string().contains("builder setting(sandbox.network)"), "{e}");
}

#[tokio::test]
async fn the_task_list_runs_through_the_runtime_in_any_mode() {
    let (dir, root) = project();
    let home = dir.path().join("home");
    let other = dir.path().canonicalize().unwrap().join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    // Plan mode, nobody to approve: the task list is the agent's own bookkeeping and runs.
    let planning = Toolbelt::builder(&root).home(&home).mode(PermissionMode::Plan).environment(false).build().await;
    let planning = planning.unwrap();
    let session = planning.session("plan");
    let calls = vec![
        ToolCall::new("1", "TaskCreate", json!({"subject": "Design", "description": "the API"})),
        ToolCall::new("2", "TaskCreate", json!({"subject": "Build", "description": "it", "metadata": {"k": 1}})),
        ToolCall::new("3", "TaskUpdate", json!({"taskId": "2", "addBlockedBy": ["1"], "metadata": {"k": null}})),
        ToolCall::new("4", "TaskUpdate", json!({"taskId": "1", "addBlockedBy": ["2"]})),
        ToolCall::new("5", "TaskList", json!({})),
    ];
    let results = planning.batch(&session, calls).await;
    let texts: Vec<String> = results.iter().map(|r| r.text()).collect();
    assert!(results[..3].iter().all(|r| !r.is_error), "{texts:?}");
    assert!(results[3].is_error && texts[3].contains("cycle of blockers, #2 blocks #1 blocks #2"), "{texts:?}");
    assert_eq!(texts[4], "#1 [pending] Design\n#2 [pending] Build [blocked by #1]");
    assert_eq!(results[2].structured.as_ref().unwrap()["task"]["metadata"], json!({}));
    // The list is the project's, in the user's state directory, not in the project.
    let projects = home.join(".local/state/toolbelt/projects");
    let dbs: Vec<PathBuf> = std::fs::read_dir(&projects)
        .unwrap()
        .map(|e| e.unwrap().path().join("tasks.db"))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(dbs.len(), 1, "{dbs:?}");
    assert!(!root.join(".toolbelt").exists());

    // Another project has its own list, unless both name a shared one.
    let elsewhere = Toolbelt::builder(&other).home(&home).environment(false).build().await.unwrap();
    let listed = elsewhere.call(&elsewhere.session("e"), ToolCall::new("1", "TaskList", json!({}))).await;
    assert_eq!(listed.text(), "No tasks. Add one with TaskCreate.");
    for (dir, subject) in [(&root, "from root"), (&other, "from other")] {
        let shared = Toolbelt::builder(dir).home(&home).task_list("team").environment(false).build().await.unwrap();
        let call = ToolCall::new("1", "TaskCreate", json!({"subject": subject, "description": ""}));
        assert!(!shared.call(&shared.session("s"), call).await.is_error);
    }
    let shared = Toolbelt::builder(&other).home(&home).task_list("team").environment(false).build().await.unwrap();
    let listed = shared.call(&shared.session("s"), ToolCall::new("1", "TaskList", json!({}))).await;
    assert_eq!(listed.text(), "#1 [pending] from root\n#2 [pending] from other");
    let Err(e) = Toolbelt::builder(&other).home(&home).task_list("a/b").environment(false).build().await else {
        panic!("built with a bad list name")
    };
    assert!(e.to_string().contains("invalid task list name `a/b`"), "{e}");
}

#[tokio::test]
async fn a_runtime_built_by_hand_asks_and_nobody_answers() {
    let (_dir, root) = project();
    let runtime = Runtime::builder(Arc::new(toolbelt::builtin_registry())).build();
    let session = Session::new("bare", root.clone(), vec![root.clone()], root.join("../session"));
    let (events, cancel) = (EventSink::none(), CancellationToken::new());
    let read = ToolCall::new("1", "Read", json!({"file_path": "notes.md"}));
    assert!(!runtime.call(&session, read, &events, &cancel).await.is_error);
    let write = ToolCall::new("2", "Write", json!({"file_path": "x.md", "content": "x"}));
    let write = runtime.call(&session, write, &events, &cancel).await;
    assert!(write.is_error && write.text().contains("permission denied"), "{}", write.text());
    assert!(!root.join("x.md").exists());
}

/// A loopback server answering model requests from a script: the first reply calls tools,
/// the second repeats what the tool results said. Records every request body.
fn scripted_model(api: &'static str) -> (String, Arc<Mutex<Vec<Value>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let (mut length, mut line) = (0usize, String::new());
            reader.read_line(&mut line).unwrap();
            let path = line.split_whitespace().nth(1).unwrap_or_default().to_string();
            loop {
                line.clear();
                reader.read_line(&mut line).unwrap();
                if line.trim().is_empty() {
                    break;
                }
                if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let request: Value = serde_json::from_slice(&body).unwrap();
            log.lock().unwrap().push(request.clone());
            let reply = match api {
                "anthropic" => {
                    assert_eq!(path, "/v1/messages");
                    anthropic_reply(&request)
                }
                _ => {
                    assert_eq!(path, "/v1/chat/completions");
                    openai_reply(&request)
                }
            };
            let body = reply.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            stream.write_all(head.as_bytes()).unwrap();
            stream.write_all(body.as_bytes()).unwrap();
        }
    });
    (url, seen)
}

fn anthropic_reply(request: &Value) -> Value {
    let messages = request["messages"].as_array().unwrap();
    let last = &messages[messages.len() - 1]["content"];
    match last.as_array() {
        // The tool results came back: say what they were.
        Some(blocks) if blocks.iter().any(|b| b["type"] == "tool_result") => {
            let said: Vec<String> = blocks
                .iter()
                .map(|b| {
                    format!(
                        "{}={}:{}",
                        b["tool_use_id"].as_str().unwrap(),
                        b["is_error"] == true,
                        b["content"][0]["text"].as_str().unwrap()
                    )
                })
                .collect();
            json!({"role": "assistant", "stop_reason": "end_turn", "content": [{"type": "text", "text": said.join(" | ")}]})
        }
        _ => json!({"role": "assistant", "stop_reason": "tool_use", "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_read", "name": "Read", "input": {"file_path": "notes.md"}},
            {"type": "tool_use", "id": "toolu_rm", "name": "Bash", "input": {"command": "rm -rf build"}},
        ]}),
    }
}

fn openai_reply(request: &Value) -> Value {
    let messages = request["messages"].as_array().unwrap();
    let tool_messages: Vec<&Value> = messages.iter().filter(|m| m["role"] == "tool").collect();
    let message = if tool_messages.is_empty() {
        json!({"role": "assistant", "content": null, "tool_calls": [
            {"id": "call_read", "type": "function", "function": {"name": "Read", "arguments": "{\"file_path\": \"notes.md\"}"}},
            {"id": "call_rm", "type": "function", "function": {"name": "Bash", "arguments": "{\"command\": \"rm -rf build\"}"}},
            {"id": "call_bad", "type": "function", "function": {"name": "Read", "arguments": "{not json"}},
        ]})
    } else {
        let said: Vec<String> = tool_messages
            .iter()
            .map(|m| format!("{}:{}", m["tool_call_id"].as_str().unwrap(), m["content"].as_str().unwrap()))
            .collect();
        json!({"role": "assistant", "content": said.join(" | ")})
    };
    json!({"choices": [{"index": 0, "message": message, "finish_reason": "stop"}]})
}

/// The example binary, built if this run did not build it.
fn example() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join("examples/agent_loop");
    if !path.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "-p", "toolbelt", "--example", "agent_loop"])
            .status()
            .unwrap();
        assert!(status.success());
    }
    path
}

fn run_example(api: &str, url: &str, root: &Path, home: &Path) -> (String, String) {
    let mut cmd = std::process::Command::new(example());
    cmd.args(["--api", api, "--base-url", url, "What does notes.md say?"]).current_dir(root);
    let out = hermetic::isolate(&mut cmd, home).output().unwrap();
    let (stdout, stderr) =
        (String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned());
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

#[test]
fn the_example_agent_loop_speaks_anthropic_messages() {
    let (dir, root) = project();
    std::fs::create_dir_all(root.join("build")).unwrap();
    let (url, seen) = scripted_model("anthropic");
    let (stdout, stderr) = run_example("anthropic", &url, &root, &dir.path().join("home"));
    // The model got the file through Read, and the destructive command refused with the
    // exact rule that would allow it (default mode, nobody to approve).
    assert!(stdout.contains("toolu_read=false:") && stdout.contains("the build uses make"), "{stdout}");
    assert!(stdout.contains("toolu_rm=true:") && stdout.contains("Bash(rm -rf build)"), "{stdout}");
    assert!(root.join("build").exists());
    assert!(stderr.contains("→ Read"), "{stderr}");
    let requests = seen.lock().unwrap();
    assert_eq!(requests.len(), 2);
    let tools = requests[0]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["name"] == "Read" && t["input_schema"]["type"] == "object"));
}

#[test]
fn the_example_agent_loop_speaks_openai_chat_completions() {
    let (dir, root) = project();
    let (url, seen) = scripted_model("openai");
    let (stdout, _) = run_example("openai", &url, &root, &dir.path().join("home"));
    assert!(stdout.contains("call_read:") && stdout.contains("the build uses make"), "{stdout}");
    assert!(stdout.contains("call_rm:Error: ") && stdout.contains("Bash(rm -rf build)"), "{stdout}");
    // Arguments that are not JSON are answered as that call's error; the others still ran.
    assert!(stdout.contains("call_bad:Error: ") && stdout.contains("not valid JSON"), "{stdout}");
    let requests = seen.lock().unwrap();
    let tools = requests[0]["tools"].as_array().unwrap();
    assert!(tools.iter().any(|t| t["function"]["name"] == "Bash"));
}
