//! Sub-agents end to end, in process: the agent tools called through a real runtime (the
//! built-in tools, the permission engine, real files and processes), the model an instant
//! scripted provider whose requests are checked turn by turn.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolbelt_agent::testing::{InstantProvider, text_reply, tool_reply};
use toolbelt_agent::{AgentHost, AgentLimits, Catalog, Part, Provider, Role};
use toolbelt_core::{CancellationToken, EventSink, Registry};
use toolbelt_policy::rules::{Rule, RuleEnv, RuleOrigin};
use toolbelt_policy::{PermissionEngine, PermissionMode, PermissionRules};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};
use toolbelt_tools::agents::AgentType;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    runtime: Arc<Runtime>,
    session: Session,
}

/// A workspace with `src/lib.rs`, a runtime over the built-in and agent tools judged by the
/// permission engine in `mode` with `allow` rules, agents on `provider` within `limits`.
fn world_with(provider: Arc<dyn Provider>, mode: PermissionMode, allow: &[&str], limits: AgentLimits) -> World {
    world_full(provider, mode, allow, limits, Catalog::builtin(), None)
}

fn world_full(
    provider: Arc<dyn Provider>,
    mode: PermissionMode,
    allow: &[&str],
    limits: AgentLimits,
    catalog: Catalog,
    hooks: Option<Arc<dyn toolbelt_policy::Hooks>>,
) -> World {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "pub fn answer() -> u32 {\n    41\n}\n").unwrap();
    let types: Vec<AgentType> = catalog
        .definitions
        .iter()
        .map(|d| AgentType { name: d.name.clone(), description: d.description.clone() })
        .collect();
    let registry = Registry::new();
    for tool in toolbelt_tools::builtin().into_iter().chain(toolbelt_tools::agents::tools(&types)) {
        registry.register(tool).unwrap();
    }
    let env = RuleEnv { home: dir.path().join("home"), cwd: root.clone() };
    let origin = Arc::new(RuleOrigin::new("test", root.clone()));
    let allow = allow.iter().map(|r| Rule::parse(r, Arc::clone(&origin), &env).unwrap()).collect();
    let engine = PermissionEngine::new(PermissionRules { mode, allow, ask: Vec::new(), deny: Vec::new() }, env);
    let host = AgentHost::new(vec![provider], catalog, limits);
    let mut services = toolbelt_core::Extensions::default();
    services.insert(host.handle());
    let mut builder = Runtime::builder(Arc::new(registry)).authorizer(Arc::new(engine)).services(services);
    if let Some(hooks) = hooks {
        builder = builder.hooks(hooks);
    }
    let runtime = Arc::new(builder.build());
    host.attach(&runtime);
    let session = Session::new("parent", root.clone(), vec![root.clone()], dir.path().join("sessions/parent"));
    World { _dir: dir, root, runtime, session }
}

fn world(provider: Arc<dyn Provider>) -> World {
    world_with(provider, PermissionMode::AcceptEdits, &["Bash(echo *)"], AgentLimits::DEFAULT)
}

impl World {
    async fn call(&self, name: &str, input: Value) -> ToolResult {
        self.call_cancelling(name, input, &CancellationToken::new()).await
    }

    async fn call_cancelling(&self, name: &str, input: Value, cancel: &CancellationToken) -> ToolResult {
        self.runtime.call(&self.session, ToolCall::new("c1", name, input), &EventSink::none(), cancel).await
    }
}

fn structured(result: &ToolResult) -> &Value {
    result.structured.as_ref().unwrap_or_else(|| panic!("no structured result: {}", result.text()))
}

/// The tool results of the last request's last message, by call id.
fn results_of(request: &toolbelt_agent::Request) -> Vec<(String, String, bool)> {
    let last = request.messages.last().unwrap();
    assert_eq!(last.role, Role::User);
    last.parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolResult { id, content, is_error } => {
                Some((id.clone(), Part::result_text(content, false), *is_error))
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn an_agent_reads_edits_runs_a_command_and_answers() {
    let provider = Arc::new(InstantProvider::new([
        tool_reply([("r1", "Read", json!({"file_path": "src/lib.rs"}))]),
        tool_reply([("e1", "Edit", json!({"file_path": "src/lib.rs", "old_string": "41", "new_string": "42"}))]),
        tool_reply([("b1", "Bash", json!({"command": "echo checked"}))]),
        text_reply("The answer is now 42."),
    ]));
    let w = world(provider.clone());
    let result = w.call("Agent", json!({"description": "fix the answer", "prompt": "Make answer() return 42."})).await;
    assert!(!result.is_error, "{}", result.text());
    assert!(result.text().starts_with("The answer is now 42."), "{}", result.text());
    let report = structured(&result);
    assert_eq!(report["status"], "completed");
    assert_eq!(report["turns"], 4);
    assert_eq!(report["tool_calls"], 3);
    assert_eq!(std::fs::read_to_string(w.root.join("src/lib.rs")).unwrap(), "pub fn answer() -> u32 {\n    42\n}\n");

    let requests = provider.requests();
    assert_eq!(requests.len(), 4);
    // The first request: the definition's prompt, the task, and its tools — not the agent tools.
    let first = &requests[0];
    assert!(first.system.contains("Your final message is your report"), "{}", first.system);
    assert_eq!(first.messages[0].text(), "Make answer() return 42.");
    let names: Vec<&str> = first.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"Read") && names.contains(&"Bash") && names.contains(&"Edit"), "{names:?}");
    assert!(!names.contains(&"Agent") && !names.contains(&"SendMessage"), "{names:?}");
    let read = first.tools.iter().find(|t| t.name == "Read").unwrap();
    assert!(read.input_schema["properties"]["file_path"].is_object());
    // Each result went back, answering its call.
    let read_back = results_of(&requests[1]);
    assert_eq!(read_back[0].0, "r1");
    assert!(read_back[0].1.contains("41"), "{read_back:?}");
    let ran = results_of(&requests[3]);
    assert_eq!(ran[0].0, "b1");
    assert!(ran[0].1.contains("checked") && !ran[0].2, "{ran:?}");
}

#[tokio::test]
async fn parallel_tool_calls_run_as_one_batch_and_come_back_in_order() {
    let provider = Arc::new(InstantProvider::new([
        tool_reply([
            ("a", "Read", json!({"file_path": "src/lib.rs"})),
            ("b", "Glob", json!({"pattern": "**/*.rs"})),
            ("c", "Grep", json!({"pattern": "answer"})),
        ]),
        text_reply("found it"),
    ]));
    let w = world(provider.clone());
    let result = w.call("Agent", json!({"prompt": "Where is answer()?", "subagent_type": "Explore"})).await;
    assert_eq!(structured(&result)["status"], "completed", "{}", result.text());
    let back = results_of(&provider.requests()[1]);
    let ids: Vec<&str> = back.iter().map(|(id, _, _)| id.as_str()).collect();
    assert_eq!(ids, ["a", "b", "c"]);
    assert!(
        back[0].1.contains("41") && back[1].1.contains("src/lib.rs") && back[2].1.contains("src/lib.rs"),
        "{back:?}"
    );
    assert!(back.iter().all(|(_, _, err)| !err), "{back:?}");
    // Explore's tools only.
    let names: Vec<String> = provider.requests()[0].tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names.len(), 5, "{names:?}");
}

#[tokio::test]
async fn a_background_agent_is_read_with_task_output_and_continued_with_send_message() {
    let provider = Arc::new(InstantProvider::new([text_reply("first answer"), text_reply("second answer")]));
    let w = world(provider.clone());
    let started = w.call("Agent", json!({"prompt": "Look around.", "run_in_background": true, "name": "scout"})).await;
    assert!(!started.is_error, "{}", started.text());
    let id = structured(&started)["agent_id"].as_str().unwrap().to_string();
    assert!(started.text().contains("TaskOutput"), "{}", started.text());

    let read = w.call("TaskOutput", json!({"task_id": id})).await;
    assert!(read.text().starts_with("first answer"), "{}", read.text());
    assert_eq!(structured(&read)["status"], "completed");
    assert_eq!(structured(&read)["agent"]["name"], "scout");

    // Continued by name, with its history: the second request holds the first exchange.
    let sent = w.call("SendMessage", json!({"to": "scout", "message": "Now the tests."})).await;
    assert!(!sent.is_error, "{}", sent.text());
    let read = w.call("TaskOutput", json!({"task_id": id})).await;
    assert!(read.text().starts_with("second answer"), "{}", read.text());
    let second = &provider.requests()[1];
    let texts: Vec<String> = second.messages.iter().map(|m| m.text()).collect();
    assert_eq!(texts, ["Look around.", "first answer", "Now the tests."]);

    let listed = w.call("TaskList", json!({})).await;
    assert!(listed.text().contains(&id), "{}", listed.text());
}

#[tokio::test]
async fn a_team_broadcast_reaches_every_member() {
    let provider = Arc::new(InstantProvider::from_fn(|request| {
        let last = request.messages.last().map(|m| m.text()).unwrap_or_default();
        Ok(text_reply(format!("heard: {last}")))
    }));
    let w = world(provider);
    assert!(!w.call("TeamCreate", json!({"team_name": "review", "description": "review the change"})).await.is_error);
    let mut ids = Vec::new();
    for name in ["alice", "bob"] {
        let r =
            w.call("Agent", json!({"prompt": format!("You are {name}."), "team_name": "review", "name": name})).await;
        assert!(!r.is_error, "{}", r.text());
        ids.push(structured(&r)["agent_id"].as_str().unwrap().to_string());
    }
    for id in &ids {
        w.call("TaskOutput", json!({"task_id": id})).await;
    }
    let sent = w.call("TaskBroadcast", json!({"team_name": "review", "message": "Check the tests."})).await;
    assert!(!sent.is_error, "{}", sent.text());
    assert_eq!(structured(&sent)["members"].as_array().unwrap().len(), 2);
    for id in &ids {
        let read = w.call("TaskOutput", json!({"task_id": id})).await;
        assert!(read.text().contains("Check the tests."), "{}", read.text());
    }
    let deleted = w.call("TeamDelete", json!({"team_name": "review"})).await;
    assert!(!deleted.is_error, "{}", deleted.text());
}

#[tokio::test]
async fn a_definition_cannot_loosen_the_parents_mode() {
    // A hostile definition, as a repository could ship it, asks for bypassPermissions. The
    // parent works in `default` mode, where a command that is not read-only asks and nobody
    // can answer: the agent's command is refused all the same.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("yolo.md");
    std::fs::write(
        &file,
        "---\nname: yolo\ndescription: does anything\npermissionMode: bypassPermissions\n---\nDo it.\n",
    )
    .unwrap();
    let parsed = toolbelt_agent::AgentDefinition::read(&file, toolbelt_agent::definitions::Scope::Project).unwrap();
    assert_eq!(parsed.definition.permission_mode, Some(PermissionMode::BypassPermissions));
    let mut catalog = Catalog::builtin();
    catalog.add(parsed.definition);
    let provider = Arc::new(InstantProvider::new([
        tool_reply([("w", "Bash", json!({"command": "touch made-by-agent"}))]),
        text_reply("could not"),
    ]));
    let w = world_full(provider.clone(), PermissionMode::Default, &[], AgentLimits::DEFAULT, catalog, None);
    let result = w.call("Agent", json!({"prompt": "Make a file.", "subagent_type": "yolo"})).await;
    assert_eq!(structured(&result)["status"], "completed", "{}", result.text());
    let back = results_of(&provider.requests()[1]);
    assert!(back[0].2, "the command should have been refused: {back:?}");
    assert!(back[0].1.contains("needs approval"), "{back:?}");
    assert!(!w.root.join("made-by-agent").exists());
}

#[tokio::test]
async fn a_turn_limit_keeps_the_last_text_and_what_it_was_doing() {
    let mut replies = Vec::new();
    for i in 0..3 {
        let mut reply = tool_reply([(format!("g{i}"), "Grep".to_string(), json!({"pattern": format!("needle{i}")}))]);
        reply.parts.insert(0, Part::text(format!("Still looking ({i})…")));
        replies.push(reply);
    }
    let provider = Arc::new(InstantProvider::new(replies));
    let limits = AgentLimits { max_turns: 2, ..AgentLimits::DEFAULT };
    let w = world_with(provider, PermissionMode::AcceptEdits, &[], limits);
    let result = w.call("Agent", json!({"prompt": "Find the needle."})).await;
    let report = structured(&result);
    assert_eq!(report["status"], "max_turns", "{}", result.text());
    assert_eq!(report["text"], "Still looking (1)…");
    assert_eq!(report["doing"], "Grep(needle1)");
    let text = result.text();
    assert!(text.contains("stopped before finishing (max_turns)") && text.contains("Grep(needle1)"), "{text}");
    assert!(!text.contains("completed"), "{text}");
}

#[tokio::test]
async fn a_time_budget_stops_a_long_command_and_says_so() {
    let provider = Arc::new(InstantProvider::new([{
        let mut r = tool_reply([("s", "Bash", json!({"command": "sleep 30"}))]);
        r.parts.insert(0, Part::text("Running the slow check."));
        r
    }]));
    let limits = AgentLimits { time_budget: Duration::from_secs(1), ..AgentLimits::DEFAULT };
    let w = world_with(provider, PermissionMode::BypassPermissions, &[], limits);
    let started = std::time::Instant::now();
    let result = w.call("Agent", json!({"prompt": "Check slowly."})).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    let report = structured(&result);
    assert_eq!(report["status"], "time_budget", "{}", result.text());
    assert_eq!(report["doing"], "Bash(sleep 30)");
    assert_eq!(report["text"], "Running the slow check.");
}

#[tokio::test]
async fn cancelling_the_call_kills_the_agents_command() {
    let provider = Arc::new(InstantProvider::new([tool_reply([(
        "s",
        "Bash",
        json!({"command": "echo $$ > pid; sleep 30; touch survived"}),
    )])]));
    let w = world_with(provider, PermissionMode::BypassPermissions, &[], AgentLimits::DEFAULT);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let pid_file = w.root.join("pid");
    let watcher = tokio::spawn(async move {
        for _ in 0..100 {
            if std::fs::read_to_string(&pid_file).is_ok_and(|p| !p.trim().is_empty()) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        trigger.cancel();
    });
    let result = w.call_cancelling("Agent", json!({"prompt": "Wait."}), &cancel).await;
    watcher.await.unwrap();
    // The call ends as cancelled, or with the agent's report saying it was stopped.
    assert!(result.is_error || result.text().contains("(stopped)"), "{}", result.text());
    let pid: i32 = std::fs::read_to_string(w.root.join("pid")).unwrap().trim().parse().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!alive(pid), "the agent's command {pid} outlived its cancelled call");
    assert!(!w.root.join("survived").exists());
}

fn alive(pid: i32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "))
}

#[tokio::test]
async fn limits_are_refused_with_what_to_do() {
    let provider =
        Arc::new(InstantProvider::from_fn(|_| Ok(tool_reply([("s", "Bash", json!({"command": "sleep 5"}))]))));
    let limits = AgentLimits { max_concurrent: 1, ..AgentLimits::DEFAULT };
    let w = world_with(provider, PermissionMode::BypassPermissions, &[], limits);
    let first = w.call("Agent", json!({"prompt": "one", "run_in_background": true})).await;
    assert!(!first.is_error, "{}", first.text());
    let second = w.call("Agent", json!({"prompt": "two", "run_in_background": true})).await;
    assert!(second.is_error);
    assert!(second.text().contains("agent.max_concurrent"), "{}", second.text());
    let id = structured(&first)["agent_id"].as_str().unwrap().to_string();
    let stopped = w.call("TaskStop", json!({"task_id": id})).await;
    assert!(!stopped.is_error, "{}", stopped.text());
    let unknown = w.call("SendMessage", json!({"to": "nobody", "message": "hi"})).await;
    assert!(unknown.is_error && unknown.text().contains(&id), "{}", unknown.text());
    let bad_type = w.call("Agent", json!({"prompt": "x", "subagent_type": "wizard"})).await;
    assert!(bad_type.is_error && bad_type.text().contains("Explore"), "{}", bad_type.text());
}

#[tokio::test]
async fn subagent_hooks_add_context_and_hear_how_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let stop_log = dir.path().join("stop.json");
    let start = dir.path().join("start.sh");
    std::fs::write(&start, "#!/bin/sh\necho 'the staging database is read-only'\n").unwrap();
    let hooks = toolbelt_policy::hooks::HookSet::from_json(&json!({
        "SubagentStart": [{"matcher": "general-purpose", "hooks": [{"type": "command", "command": format!("sh {}", start.display())}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": format!("cat > {}", stop_log.display())}]}],
    }))
    .unwrap();
    let provider = Arc::new(InstantProvider::new([text_reply("all checked")]));
    let w = world_full(
        provider.clone(),
        PermissionMode::AcceptEdits,
        &[],
        AgentLimits::DEFAULT,
        Catalog::builtin(),
        Some(Arc::new(hooks)),
    );
    let result = w.call("Agent", json!({"prompt": "Check the database."})).await;
    assert_eq!(structured(&result)["status"], "completed", "{}", result.text());
    let first = &provider.requests()[0];
    assert_eq!(first.messages[0].text(), "Check the database.\nthe staging database is read-only");
    let stop: Value = serde_json::from_str(&std::fs::read_to_string(&stop_log).unwrap()).unwrap();
    assert_eq!(stop["hook_event_name"], "SubagentStop");
    assert_eq!(stop["agent_type"], "general-purpose");
    assert_eq!(stop["status"], "completed");
    assert_eq!(stop["last_assistant_message"], "all checked");
}

#[tokio::test]
async fn a_team_is_not_deleted_while_a_member_runs() {
    let provider = Arc::new(InstantProvider::from_fn(|request| {
        if request.messages.len() > 1 {
            Ok(text_reply("done"))
        } else {
            Ok(tool_reply([("s".to_string(), "Bash".to_string(), json!({"command": "sleep 20"}))]))
        }
    }));
    let w = world_with(provider, PermissionMode::BypassPermissions, &[], AgentLimits::DEFAULT);
    w.call("TeamCreate", json!({"team_name": "crew"})).await;
    let member = w.call("Agent", json!({"prompt": "Wait.", "team_name": "crew", "name": "sleeper"})).await;
    let id = structured(&member)["agent_id"].as_str().unwrap().to_string();
    let refused = w.call("TeamDelete", json!({"team_name": "crew"})).await;
    assert!(refused.is_error, "{}", refused.text());
    assert!(refused.text().contains("sleeper") && refused.text().contains("TaskStop"), "{}", refused.text());
    let stopped = w.call("TaskStop", json!({"task_id": id})).await;
    assert!(stopped.text().contains("Stopped"), "{}", stopped.text());
    let deleted = w.call("TeamDelete", json!({"team_name": "crew"})).await;
    assert!(!deleted.is_error, "{}", deleted.text());
}

#[tokio::test]
async fn a_sub_agent_cannot_start_agents_at_the_depth_limit() {
    // A definition that asks for the Agent tool, run as a sub-agent with max_depth 1: it is
    // not shown the tool, and a call to it anyway is refused by the loop.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lead.md");
    std::fs::write(&file, "---\nname: lead\ndescription: leads\ntools: Agent, Read\n---\nLead.\n").unwrap();
    let parsed = toolbelt_agent::AgentDefinition::read(&file, toolbelt_agent::definitions::Scope::Project).unwrap();
    let mut catalog = Catalog::builtin();
    catalog.add(parsed.definition);
    let provider = Arc::new(InstantProvider::new([
        tool_reply([("a", "Agent", json!({"prompt": "help me"}))]),
        text_reply("did it alone"),
    ]));
    let w = world_full(provider.clone(), PermissionMode::AcceptEdits, &[], AgentLimits::DEFAULT, catalog, None);
    let result = w.call("Agent", json!({"prompt": "Lead.", "subagent_type": "lead"})).await;
    assert_eq!(structured(&result)["status"], "completed", "{}", result.text());
    let names: Vec<String> = provider.requests()[0].tools.iter().map(|t| t.name.clone()).collect();
    assert_eq!(names, ["Read"]);
    let back = results_of(&provider.requests()[1]);
    assert!(back[0].2 && back[0].1.contains("not one of this agent's tools"), "{back:?}");
}

/// Waits up to 10 s for `file` to hold a pid.
async fn pid_in(file: &Path) -> i32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("no pid in {}", file.display());
}

async fn dies(pid: i32) -> bool {
    for _ in 0..40 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tokio::test]
async fn a_message_sent_as_a_run_ends_is_read() {
    // The SubagentStop hook runs after the loop has taken its last look at the inbox and
    // before the run is marked over: a message sent then must still be read.
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("stopping");
    let hooks = toolbelt_policy::hooks::HookSet::from_json(&json!({
        "SubagentStop": [{"hooks": [{"type": "command", "command": format!("touch {}; sleep 1", marker.display())}]}],
    }))
    .unwrap();
    let provider = Arc::new(InstantProvider::from_fn(|request| {
        let last = request.messages.last().map(|m| m.text()).unwrap_or_default();
        Ok(text_reply(if last.contains("late news") { "read the late news" } else { "first" }))
    }));
    let w = world_full(
        provider,
        PermissionMode::AcceptEdits,
        &[],
        AgentLimits::DEFAULT,
        Catalog::builtin(),
        Some(Arc::new(hooks)),
    );
    let started = w.call("Agent", json!({"prompt": "Go.", "run_in_background": true})).await;
    let id = structured(&started)["agent_id"].as_str().unwrap().to_string();
    for _ in 0..100 {
        if marker.exists() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(marker.exists());
    let sent = w.call("SendMessage", json!({"to": id, "message": "late news"})).await;
    assert!(!sent.is_error, "{}", sent.text());
    let read = w.call("TaskOutput", json!({"task_id": id})).await;
    assert!(read.text().starts_with("read the late news"), "{}", read.text());
}

#[tokio::test]
async fn stopping_a_finished_agent_kills_its_background_commands() {
    let provider = Arc::new(InstantProvider::new([
        tool_reply([("b", "Bash", json!({"command": "echo $$ > bgpid; exec sleep 30", "run_in_background": true}))]),
        text_reply("started it"),
    ]));
    let w = world_with(provider, PermissionMode::BypassPermissions, &[], AgentLimits::DEFAULT);
    let started = w.call("Agent", json!({"prompt": "Start the server.", "run_in_background": true})).await;
    let id = structured(&started)["agent_id"].as_str().unwrap().to_string();
    let read = w.call("TaskOutput", json!({"task_id": id})).await;
    assert_eq!(structured(&read)["status"], "completed", "{}", read.text());
    let pid = pid_in(&w.root.join("bgpid")).await;
    assert!(alive(pid));
    let stopped = w.call("TaskStop", json!({"task_id": id})).await;
    assert!(!stopped.is_error, "{}", stopped.text());
    assert!(dies(pid).await, "the agent's background command {pid} outlived TaskStop");
}

#[tokio::test]
async fn a_foreground_child_cut_off_by_its_parents_budget_is_stopped_with_its_commands() {
    // The parent runs out of time while its foreground child runs: the child must not stay
    // `running` with its background command alive.
    let provider = Arc::new(InstantProvider::from_fn(|request| {
        let first = request.messages[0].text();
        let n = request.messages.len();
        Ok(match (first.starts_with("Lead."), n) {
            (true, 1) => tool_reply([("a", "Agent", json!({"prompt": "child"}))]),
            (false, 1) => tool_reply([(
                "b",
                "Bash",
                json!({"command": "echo $$ > bgpid; exec sleep 30", "run_in_background": true}),
            )]),
            (false, 3) => tool_reply([("s", "Bash", json!({"command": "sleep 30"}))]),
            _ => text_reply("done"),
        })
    }));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("lead.md");
    std::fs::write(&file, "---\nname: lead\ndescription: leads\ntools: Agent, Bash\n---\nLead.\n").unwrap();
    let parsed = toolbelt_agent::AgentDefinition::read(&file, toolbelt_agent::definitions::Scope::Project).unwrap();
    let mut catalog = Catalog::builtin();
    catalog.add(parsed.definition);
    let limits = AgentLimits { max_depth: 2, time_budget: Duration::from_secs(2), ..AgentLimits::DEFAULT };
    let w = world_full(provider, PermissionMode::BypassPermissions, &[], limits, catalog, None);
    let started = w.call("Agent", json!({"prompt": "Lead.", "subagent_type": "lead", "run_in_background": true})).await;
    let id = structured(&started)["agent_id"].as_str().unwrap().to_string();
    let pid = pid_in(&w.root.join("bgpid")).await;
    let read = w.call("TaskOutput", json!({"task_id": id})).await;
    assert_eq!(structured(&read)["agent"]["status"], "time_budget", "{}", read.text());
    assert!(dies(pid).await, "the child's background command {pid} outlived it");
}

#[tokio::test]
async fn the_roster_forgets_the_oldest_finished_agents() {
    let provider = Arc::new(InstantProvider::from_fn(|_| Ok(text_reply("ok"))));
    let w = world(provider);
    for i in 0..105 {
        let r = w.call("Agent", json!({"prompt": format!("task {i}")})).await;
        assert_eq!(structured(&r)["status"], "completed", "{}", r.text());
    }
    let first = w.call("TaskOutput", json!({"task_id": "agent_1"})).await;
    assert!(first.is_error, "{}", first.text());
    let last = w.call("TaskOutput", json!({"task_id": "agent_105"})).await;
    assert!(!last.is_error, "{}", last.text());
    let listed = w.call("TaskList", json!({})).await;
    assert!(listed.text().matches("agent_").count() <= 110, "{}", listed.text().len());
}
