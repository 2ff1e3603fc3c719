//! Sub-agents end to end, in process: the agent tools called through a real runtime (the
//! built-in tools, the permission engine, real files and processes), the model an instant
//! scripted provider whose requests are checked turn by turn.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::json;
use toolbelt_agent::testing::{InstantProvider, text_reply, tool_reply};
use toolbelt_agent::{AgentLimits, Catalog, Part};
use toolbelt_policy::PermissionMode;

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

    let listed = w.call("BackgroundTasks", json!({})).await;
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
async fn a_long_answer_is_cut_to_the_cap_and_kept_whole_in_a_file() {
    use std::os::unix::fs::PermissionsExt as _;
    let answer: String = (0..100).map(|i| format!("line {i:03} of the report\n")).collect();
    let provider = Arc::new(InstantProvider::new([text_reply(answer.clone())]));
    let limits = AgentLimits { result_cap: 200, ..AgentLimits::DEFAULT };
    let w = world_with(provider, PermissionMode::AcceptEdits, &[], limits);
    let result = w.call("Agent", json!({"prompt": "Report at length."})).await;
    assert!(!result.is_error, "{}", result.text());
    let report = structured(&result);
    assert_eq!(report["status"], "completed");
    let shown = report["text"].as_str().unwrap();
    assert!(shown.starts_with(&answer[..200]), "{shown}");
    let rest = answer.chars().count() - 200;
    assert!(shown.contains(&format!("{} more characters cut", toolbelt_core::thousands(rest))), "{shown}");
    assert!(!shown.contains("line 099"), "the cut text is the head only: {shown}");
    // The whole answer is in the file the result names, readable by its owner only.
    let path = report["full_text_path"].as_str().unwrap();
    assert!(shown.contains(path) && result.text().contains(path), "{}", result.text());
    assert_eq!(std::fs::read_to_string(path).unwrap(), answer);
    assert_eq!(std::fs::metadata(path).unwrap().permissions().mode() & 0o777, 0o600);
}

#[tokio::test]
async fn an_agent_loads_deferred_tools_with_tool_search_and_sees_the_skills_here() {
    let provider = Arc::new(InstantProvider::new([
        tool_reply([("s1", "ToolSearch", json!({"query": "select:EnterWorktree"}))]),
        text_reply("loaded"),
    ]));
    let w = world(provider.clone());
    let skill = w.root.join(".claude/skills/tidy");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(skill.join("SKILL.md"), "---\ndescription: Tidy the imports\n---\nTidy them.\n").unwrap();
    let result = w.call("Agent", json!({"description": "load", "prompt": "Load the worktree tool."})).await;
    assert_eq!(structured(&result)["status"], "completed", "{}", result.text());
    let requests = provider.requests();
    let names = |i: usize| -> Vec<String> { requests[i].tools.iter().map(|t| t.name.clone()).collect() };
    assert!(!names(0).contains(&"EnterWorktree".to_string()), "{:?}", names(0));
    let search = requests[0].tools.iter().find(|t| t.name == "ToolSearch").unwrap();
    assert!(search.description.contains("EnterWorktree"), "{}", search.description);
    let skill_tool = requests[0].tools.iter().find(|t| t.name == "Skill").unwrap();
    assert!(skill_tool.description.contains("- tidy: Tidy the imports"), "{}", skill_tool.description);
    // Loaded by the first turn: shown from the second on, and no longer named as deferred.
    assert!(names(1).contains(&"EnterWorktree".to_string()), "{:?}", names(1));
    let search = requests[1].tools.iter().find(|t| t.name == "ToolSearch").unwrap();
    assert!(!search.description.contains("EnterWorktree"), "{}", search.description);
}
