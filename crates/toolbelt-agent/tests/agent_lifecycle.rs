//! Sub-agents stopping: cancellation, limits, hooks, messages racing the end of a run, and
//! what is left running when an agent stops, checked in /proc.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::*;
use serde_json::{Value, json};
use toolbelt_agent::testing::{InstantProvider, text_reply, tool_reply};
use toolbelt_agent::{AgentLimits, Catalog};
use toolbelt_core::CancellationToken;
use toolbelt_policy::PermissionMode;

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
    let listed = w.call("BackgroundTasks", json!({})).await;
    assert!(listed.text().matches("agent_").count() <= 110, "{}", listed.text().len());
}
