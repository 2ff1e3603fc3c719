//! What the agent loop costs beyond the model and the tools: `cargo bench -p toolbelt-agent
//! --bench agent_loop -- [TURNS]`.
//!
//! * **Per turn.** An instant in-process provider answers each turn with one `BackgroundTasks`
//!   call (a tool that does almost nothing) until the last turn answers in text; each request
//!   carries the general-purpose agent's tool definitions, as a real run's do. The same calls
//!   run directly through `Runtime::batch` give the tools' own cost; the difference, per
//!   turn, is the loop's: building the request from the history, the reply into the
//!   history, the results back. Goal: at most 1 ms a turn.
//! * **Memory.** The resident set before and while four sub-agents run at once in the
//!   background (each in a `sleep` command), and per agent.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use toolbelt_agent::testing::{InstantProvider, text_reply, tool_reply};
use toolbelt_agent::{AgentHost, AgentLimits, Catalog, Conversation, NoInbox, run, run_spec};
use toolbelt_core::{CancellationToken, EventSink, Registry};
use toolbelt_runtime::{Runtime, Session, ToolCall};
use toolbelt_tools::agents::AgentType;

fn runtime_with(provider: Arc<InstantProvider>) -> (Arc<Runtime>, Arc<AgentHost>) {
    let catalog = Catalog::builtin();
    let types: Vec<AgentType> = catalog
        .definitions
        .iter()
        .map(|d| AgentType { name: d.name.clone(), description: d.description.clone() })
        .collect();
    let registry = Registry::new();
    for tool in toolbelt_tools::builtin().into_iter().chain(toolbelt_tools::agents::tools(&types)) {
        registry.register(tool).expect("unique tool names");
    }
    let host = AgentHost::new(vec![provider], catalog, AgentLimits::DEFAULT);
    let mut services = toolbelt_core::Extensions::default();
    services.insert(host.handle());
    let runtime = Arc::new(
        Runtime::builder(Arc::new(registry)).authorizer(Arc::new(toolbelt_policy::AllowAll)).services(services).build(),
    );
    host.attach(&runtime);
    (runtime, host)
}

fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmRSS:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

async fn per_turn(turns: u32) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    let provider = Arc::new(InstantProvider::from_fn(move |request| {
        let turn = request.messages.len() / 2;
        if turn + 1 >= turns as usize {
            Ok(text_reply("done"))
        } else {
            Ok(tool_reply([(format!("c{turn}"), "BackgroundTasks".to_string(), json!({}))]))
        }
    }));
    let (runtime, _host) = runtime_with(Arc::clone(&provider));
    let session = Session::new("bench", root.clone(), vec![root.clone()], root.join("session"));
    // The general-purpose agent's spec: every built-in tool's definition goes with each request.
    let catalog = Catalog::builtin();
    let def = catalog.definitions.iter().find(|d| d.name == "general-purpose").expect("built-in");
    let limits = AgentLimits { max_turns: turns + 1, ..AgentLimits::DEFAULT };
    let spec = run_spec(&runtime, provider.clone(), None, def, &limits, false);
    let cancel = CancellationToken::new();
    // Warm up, then measure the loop.
    for _ in 0..2 {
        let mut convo = Conversation::default();
        convo.push_user("go");
        run(&runtime, &session, &spec, &mut convo, &NoInbox, &cancel, &|_| {}).await;
    }
    let start = Instant::now();
    let mut convo = Conversation::default();
    convo.push_user("go");
    let outcome = run(&runtime, &session, &spec, &mut convo, &NoInbox, &cancel, &|_| {}).await;
    let looped = start.elapsed();
    assert_eq!(convo.turns, turns, "{outcome:?}");
    // The same tool calls, straight through the runtime.
    let start = Instant::now();
    for i in 0..turns.saturating_sub(1) {
        let call = ToolCall::new(format!("c{i}"), "BackgroundTasks", json!({}));
        runtime.batch(&session, vec![call], &EventSink::none(), &cancel).await;
    }
    let direct = start.elapsed();
    let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(turns);
    println!("{turns} turns, one BackgroundTasks call each, {} tool definitions sent each turn", spec.tools.len());
    println!("  {:<34} {:>9.1} µs/turn", "agent loop (tools included)", per(looped));
    println!("  {:<34} {:>9.1} µs/turn", "the same calls through the runtime", per(direct));
    println!("  {:<34} {:>9.1} µs/turn   (goal ≤ 1000)", "the loop's own cost", per(looped) - per(direct));
}

async fn memory() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().to_path_buf();
    let provider = Arc::new(InstantProvider::from_fn(|request| {
        if request.messages.len() > 1 {
            Ok(text_reply("done"))
        } else {
            Ok(tool_reply([("s".to_string(), "Bash".to_string(), json!({"command": "sleep 2"}))]))
        }
    }));
    let (runtime, _host) = runtime_with(provider);
    let session = Session::new("bench", root.clone(), vec![root.clone()], root.join("session"));
    let cancel = CancellationToken::new();
    let before = rss_kib();
    let mut ids = Vec::new();
    for i in 0..4 {
        let call = ToolCall::new("a", "Agent", json!({"prompt": format!("task {i}"), "run_in_background": true}));
        let result = runtime.call(&session, call, &EventSink::none(), &cancel).await;
        let id = result.structured.as_ref().and_then(|s| s["agent_id"].as_str()).unwrap_or("").to_string();
        ids.push(id);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let during = rss_kib();
    for id in &ids {
        let call = ToolCall::new("w", "TaskOutput", json!({"task_id": id}));
        runtime.call(&session, call, &EventSink::none(), &cancel).await;
    }
    println!("4 sub-agents running at once (each in a `sleep 2` command)");
    println!("  {:<34} {:>9} KiB", "resident before", before);
    println!("  {:<34} {:>9} KiB", "resident while they run", during);
    println!("  {:<34} {:>9} KiB", "per agent", during.saturating_sub(before) / 4);
}

fn main() {
    let turns = std::env::args().skip(1).find_map(|a| a.parse::<u32>().ok()).unwrap_or(200);
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("tokio runtime");
    rt.block_on(async {
        per_turn(turns).await;
        memory().await;
    });
}
