//! `toolbelt agent` and the `Agent` tool through the real binary, the model a loopback server
//! speaking the real OpenAI Chat Completions or Anthropic Messages streaming protocol,
//! scripted turn by turn; each request the loop sent is checked.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/pty.rs"]
mod pty;

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.md"), "status: draft\n").unwrap();
    (dir, root)
}

fn run(root: &Path, server: Option<&ScriptedServer>, args: &[&str]) -> Output {
    let mut cmd = hermetic::toolbelt(root);
    if let Some(server) = server {
        cmd.envs(server.env());
    }
    cmd.args(args).output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn an_agent_reads_edits_runs_and_answers_over_openai() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::openai([
        Turn::tool_call("r1", "Read", json!({"file_path": "notes.md"})).with_text("Reading the notes."),
        Turn::tool_call("e1", "Edit", json!({"file_path": "notes.md", "old_string": "draft", "new_string": "final"})),
        Turn::tool_call("b1", "Bash", json!({"command": "echo edited"})),
        Turn::text("The notes now say final."),
    ])
    .unwrap();
    let out = run(
        &root,
        Some(&server),
        &["agent", "Mark the notes final.", "--mode", "acceptEdits", "--allow", "Bash(echo *)"],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stdout.trim(), "The notes now say final.");
    assert!(stderr.contains("● Read(notes.md)") && stderr.contains("● Bash(echo edited)"), "{stderr}");
    assert!(stderr.contains("Reading the notes."), "{stderr}");
    assert_eq!(std::fs::read_to_string(root.join("notes.md")).unwrap(), "status: final\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert_eq!(requests[0].header("authorization"), Some("Bearer scripted-key"));
    let first = &requests[0].body;
    assert_eq!(first["stream"], true);
    assert_eq!(first["messages"][0]["role"], "system");
    assert_eq!(first["messages"][1], json!({"role": "user", "content": "Mark the notes final."}));
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"Read") && tools.contains(&"Agent"), "{tools:?}");
    // The Read result went back as a tool message answering r1.
    let second = requests[1].messages();
    let answer = second.iter().find(|m| m["role"] == "tool").unwrap();
    assert_eq!(answer["tool_call_id"], "r1");
    assert!(answer["content"].as_str().unwrap().contains("status: draft"), "{answer}");
    let assistant = second.iter().find(|m| m["role"] == "assistant").unwrap();
    assert_eq!(assistant["tool_calls"][0]["function"]["name"], "Read");
    let ran = requests[3].messages().iter().rev().find(|m| m["role"] == "tool").unwrap().clone();
    assert!(ran["content"].as_str().unwrap().contains("edited"), "{ran}");
}

#[test]
fn json_transcript_over_anthropic() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::anthropic([
        Turn::tool_calls([
            ("g1".to_string(), "Grep".to_string(), json!({"pattern": "status"})),
            ("l1".to_string(), "ListDir".to_string(), json!({})),
        ]),
        Turn::text("One file mentions status."),
    ])
    .unwrap();
    let out = run(&root, Some(&server), &["agent", "--json", "Which files mention status?"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let transcript: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(transcript["status"], "completed");
    assert_eq!(transcript["text"], "One file mentions status.");
    assert_eq!(transcript["tool_calls"], 2);
    assert_eq!(transcript["provider"], "anthropic");
    let requests = server.requests();
    assert_eq!(requests[0].header("x-api-key"), Some("scripted-key"));
    assert!(requests[0].body["system"].as_str().unwrap().contains("coding agent"));
    // Both results in the next user message, in call order, as tool_result blocks.
    let last = requests[1].messages().last().unwrap().clone();
    assert_eq!(last["role"], "user");
    let ids: Vec<&str> = last["content"].as_array().unwrap().iter().filter_map(|b| b["tool_use_id"].as_str()).collect();
    assert_eq!(ids, ["g1", "l1"]);
}

#[test]
fn a_run_cut_by_its_turn_limit_exits_1_with_its_last_text() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::openai([
        Turn::tool_call("g1", "Grep", json!({"pattern": "needle"})).with_text("Searching for the needle."),
        Turn::tool_call("g2", "Grep", json!({"pattern": "haystack"})).with_text("Trying the haystack."),
    ])
    .unwrap();
    let out = run(&root, Some(&server), &["agent", "--max-turns", "2", "Find the needle."]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stderr.contains("stopped before finishing (max_turns)"), "{stderr}");
    assert!(stderr.contains("it was doing: Grep(haystack)"), "{stderr}");
    // The advice is the command's own, not the Agent tool's.
    assert!(stderr.contains("--max-turns") && !stderr.contains("SendMessage"), "{stderr}");
    assert_eq!(stdout.trim(), "Trying the haystack.");
}

#[test]
fn provider_errors_are_retried_then_reported_clearly() {
    let (_dir, root) = workspace();
    // A rate limit with retry-after, then an answer: the run succeeds.
    let server =
        ScriptedServer::openai([Turn::http_error(429, "slow down").retry_after("1"), Turn::text("done")]).unwrap();
    let started = std::time::Instant::now();
    let out = run(&root, Some(&server), &["agent", "Say done."]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "done");
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    assert_eq!(server.requests().len(), 2);

    // A key the server refuses: not retried, and the message says where the key comes from.
    let server = ScriptedServer::openai([Turn::http_error(401, "invalid api key")]).unwrap();
    let out = run(&root, Some(&server), &["agent", "Say done."]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("`openai`") && stderr.contains("401") && stderr.contains("OPENAI_API_KEY"), "{stderr}");

    // A stream that is not the protocol.
    let server = ScriptedServer::openai([Turn::malformed()]).unwrap();
    let out = run(&root, Some(&server), &["agent", "Say done."]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("could not be read"), "{stderr}");
}

#[test]
fn the_agent_tool_runs_a_sub_agent_from_toolbelt_call() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::openai([
        Turn::tool_call("r1", "Read", json!({"file_path": "notes.md"})),
        Turn::text("The notes are a draft."),
    ])
    .unwrap();
    let out = run(
        &root,
        Some(&server),
        &["call", "Agent", r#"{"prompt":"What state are the notes in?","subagent_type":"Explore"}"#, "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["structured"]["status"], "completed");
    assert_eq!(result["structured"]["agent_type"], "Explore");
    assert!(result["content"][0]["text"].as_str().unwrap().starts_with("The notes are a draft."));
    // Explore's prompt and tools only.
    let first = &server.requests()[0].body;
    let tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    assert_eq!(tools.len(), 5, "{tools:?}");
    assert!(!tools.contains(&"Edit"), "{tools:?}");
}

#[test]
fn without_a_provider_agents_are_absent_and_the_command_says_what_to_set() {
    let (_dir, root) = workspace();
    let out = run(&root, None, &["tools", "--format", "names"]);
    assert!(out.status.success());
    let names = text(&out.stdout);
    assert!(!names.lines().any(|l| l.trim() == "Agent"), "{names}");
    let out = run(&root, None, &["agent", "anything"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no model provider is configured") && stderr.contains("OPENAI_API_KEY"), "{stderr}");
}

#[test]
fn the_agent_delegates_to_a_sub_agent_and_shows_what_it_does() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::openai([
        Turn::tool_call(
            "a1",
            "Agent",
            json!({"description": "read notes", "prompt": "What do the notes say?", "subagent_type": "Explore"}),
        ),
        Turn::tool_call("r1", "Read", json!({"file_path": "notes.md"})),
        Turn::text("They say: status draft."),
        Turn::text("The notes are still a draft."),
    ])
    .unwrap();
    let out = run(&root, Some(&server), &["agent", "Are the notes final?"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert_eq!(stdout.trim(), "The notes are still a draft.");
    assert!(stderr.contains("● Agent(read notes)"), "{stderr}");
    assert!(stderr.contains("· agent_1: Read(notes.md)"), "the sub-agent's calls show: {stderr}");
    // The sub-agent's request: Explore's prompt and tools, the task as its first message.
    let sub = &server.requests()[1].body;
    assert_eq!(sub["messages"][1]["content"], "What do the notes say?");
    assert!(sub["messages"][0]["content"].as_str().unwrap().contains("read-only"), "{sub}");
    // Its answer came back to the main agent as the Agent call's result.
    let back = server.requests()[3].messages().iter().rev().find(|m| m["role"] == "tool").unwrap().clone();
    assert_eq!(back["tool_call_id"], "a1");
    assert!(back["content"].as_str().unwrap().starts_with("They say: status draft."), "{back}");
}

/// The tool results the second request carried back to the model, by call id.
fn results_of(request: &toolbelt_agent::testing::RecordedRequest) -> std::collections::HashMap<String, String> {
    request
        .messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| (m["tool_call_id"].as_str().unwrap().to_string(), m["content"].as_str().unwrap().to_string()))
        .collect()
}

#[test]
fn a_refused_call_in_the_loop_names_the_rule_or_the_closest_tools() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::openai([
        Turn::tool_calls([
            ("w1".to_string(), "WebFetch".to_string(), json!({"url": "https://example.com", "prompt": "x"})),
            ("u1".to_string(), "Raed".to_string(), json!({"file_path": "notes.md"})),
            ("n1".to_string(), "Frobnicate".to_string(), json!({})),
            ("a1".to_string(), "read_file".to_string(), json!({"path": "notes.md"})),
        ]),
        Turn::text("done"),
    ])
    .unwrap();
    let out = run(&root, Some(&server), &["agent", "Look around.", "--deny", "WebFetch"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let results = results_of(&server.requests()[1]);
    // A tool a deny rule removed: the rule, where it comes from, and no list of every tool.
    let denied = &results["w1"];
    assert!(denied.contains("`WebFetch` is denied by the rule `WebFetch` (flag --deny)"), "{denied}");
    assert!(!denied.contains("Grep") && denied.len() < 300, "no list of the agent's tools: {denied}");
    // A name no tool has: not a permission matter, and the closest of the agent's tools.
    let unknown = &results["u1"];
    assert!(!unknown.contains("permission denied"), "{unknown}");
    assert!(unknown.contains("unknown tool `Raed`; did you mean `Read`?"), "{unknown}");
    let nothing_close = &results["n1"];
    assert!(nothing_close.contains("unknown tool `Frobnicate`"), "{nothing_close}");
    assert!(!nothing_close.contains("Grep") && nothing_close.len() < 300, "{nothing_close}");
    // A tool's other name is that tool.
    assert!(results["a1"].contains("status: draft"), "{}", results["a1"]);
}

#[test]
fn a_sub_agent_refused_a_tool_its_definition_leaves_out_is_told_so_briefly() {
    let (_dir, root) = workspace();
    let server = ScriptedServer::openai([
        Turn::tool_call("e1", "Edit", json!({"file_path": "notes.md", "old_string": "draft", "new_string": "x"})),
        Turn::text("I may not edit."),
    ])
    .unwrap();
    let out = run(
        &root,
        Some(&server),
        &["call", "Agent", r#"{"prompt":"Edit the notes.","subagent_type":"Explore"}"#, "--json"],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let refused = &results_of(&server.requests()[1])["e1"];
    assert!(refused.contains("`Edit` is not one of this agent's tools"), "{refused}");
    assert!(refused.contains("`Explore`"), "it names the definition that leaves it out: {refused}");
    assert_eq!(std::fs::read_to_string(root.join("notes.md")).unwrap(), "status: draft\n");
}

#[test]
fn a_refused_connection_is_reported_at_once_with_where_base_url_comes_from() {
    let (_dir, root) = workspace();
    // A loopback port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/v1");
    let started = std::time::Instant::now();
    let out = hermetic::toolbelt(&root)
        .env("OPENAI_BASE_URL", &url)
        .env("OPENAI_API_KEY", "k")
        .args(["agent", "Say hi."])
        .output()
        .unwrap();
    let took = started.elapsed();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "could not connect to {url}/chat/completions: connection refused; is the server running? (base_url from \
             $OPENAI_BASE_URL)"
        )),
        "{stderr}"
    );
    // Nothing listens there, and that does not pass in seconds: one more try, not the
    // backoff a rate limit gets (five tries over 7.5 to 15 s).
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");

    // A provider of the settings: the table and the file it is in.
    let config = root.join(".test-home/.config/toolbelt/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(&config, format!("[agent.providers.local]\nkind = \"openai\"\nbase_url = \"{url}\"\n")).unwrap();
    let out = hermetic::toolbelt(&root).args(["agent", "Say hi."]).output().unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "connection refused; is the server running? (base_url from [agent.providers.local] in user {}:1)",
            config.display()
        )),
        "{stderr}"
    );
}

#[test]
fn a_background_sub_agent_s_question_at_the_terminal_says_which_agent_asks() {
    let (_dir, root) = workspace();
    let task = "Touch the marker file.";
    let server = ScriptedServer::openai([
        // The main agent: starts a named agent in the background, waits for it, answers.
        Turn::tool_call(
            "a1",
            "Agent",
            json!({"description": "touch the marker", "prompt": task, "name": "scout", "run_in_background": true}),
        )
        .in_conversation("Tidy up."),
        Turn::tool_call("w1", "TaskOutput", json!({"task_id": "agent_1", "block": true, "timeout": 60000}))
            .in_conversation("Tidy up."),
        Turn::text("All tidy.").in_conversation("Tidy up."),
        // The background agent: a command that asks, then a question of its own.
        Turn::tool_call("b1", "Bash", json!({"command": "touch marker"})).in_conversation(task),
        Turn::tool_call(
            "q1",
            "AskUserQuestion",
            json!({"questions": [{"question": "Touch another?", "header": "Marker", "multiSelect": false,
                "options": [{"label": "Yes", "description": "one more"}, {"label": "No", "description": "enough"}]}]}),
        )
        .in_conversation(task),
        Turn::text("Touched.").in_conversation(task),
    ])
    .unwrap();
    let home = root.join(".test-home");
    let (config, state) = (home.join(".config"), home.join(".local/state"));
    let vars: Vec<(String, String)> = server.env();
    let mut env: Vec<(&str, &Path)> = vars.iter().map(|(k, v)| (k.as_str(), Path::new(v.as_str()))).collect();
    env.extend([("HOME", home.as_path()), ("XDG_CONFIG_HOME", config.as_path()), ("XDG_STATE_HOME", state.as_path())]);
    let (out, code) = pty::toolbelt_in_pty(&["agent", "Tidy up."], &root, &env, "choice [", "y\n2\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("agent_1 `scout` (general-purpose, in the background: touch the marker) asks:\nBash wants to run `touch marker`"),
        "the question names the agent that asks: {out}"
    );
    assert!(root.join("marker").exists(), "{out}");
    assert!(
        out.contains(
            "agent_1 `scout` (general-purpose, in the background: touch the marker) asks:\n[Marker] Touch another?"
        ),
        "{out}"
    );
    assert!(out.contains("All tidy."), "{out}");
}

#[test]
fn subagent_hooks_in_the_settings_are_accepted_and_run() {
    let (_dir, root) = workspace();
    // The user's own settings: a broken file there would stop every call.
    let config = root.join(".test-home/.config/toolbelt/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    let log = root.join("subagents.log");
    std::fs::write(
        &config,
        format!(
            "[[hooks.SubagentStart]]\nmatcher = \"Explore\"\nhooks = [{{ type = \"command\", command = \"echo start >> '{log}'\" }}]\n\n\
             [[hooks.SubagentStop]]\nhooks = [{{ type = \"command\", command = \"echo stop >> '{log}'\" }}]\n",
            log = log.display()
        ),
    )
    .unwrap();
    let out = run(&root, None, &["config", "check"]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    let server = ScriptedServer::openai([Turn::text("The notes are a draft.")]).unwrap();
    let out = run(&root, Some(&server), &["call", "Agent", r#"{"prompt":"Notes?","subagent_type":"Explore"}"#]);
    assert!(out.status.success(), "{}{}", text(&out.stdout), text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "start\nstop\n");
}

#[test]
fn a_sub_agent_s_monitor_reports_to_the_person_under_the_agent_s_name() {
    let (_dir, root) = workspace();
    let task = "Start the watcher.";
    let server = ScriptedServer::openai([
        Turn::tool_call(
            "a1",
            "Agent",
            json!({"description": "watch", "prompt": task, "subagent_type": "general-purpose"}),
        )
        .in_conversation("Watch it."),
        Turn::text("Done.").in_conversation("Watch it."),
        Turn::tool_call("m1", "Monitor", json!({"command": "echo seen-by-the-parent", "description": "echo"}))
            .in_conversation(task),
        Turn::tool_call("w1", "TaskOutput", json!({"task_id": "monitor_1", "timeout": 5000})).in_conversation(task),
        Turn::text("Watched.").in_conversation(task),
    ])
    .unwrap();
    let out = run(&root, Some(&server), &["agent", "Watch it."]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("/monitor_1: seen-by-the-parent"), "{stderr}");
}
