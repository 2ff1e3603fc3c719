//! Background tasks with real processes: start, output since the last read, status and exit
//! code, stop (whole tree), list, the concurrency cap, and cleanup when the session ends.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod shell_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{err, ok, session};
use serde_json::{Value, json};
use shell_support::*;
use toolbelt_core::{EventSink, Extensions, Limits, SessionState};
use toolbelt_tools::shell::BashConfig;

/// Starts a background task and returns its id.
async fn start(s: &Arc<SessionState>, command: &str) -> String {
    let out = common::call(s, "Bash", json!({"command": command, "run_in_background": true})).await.unwrap();
    let st = out.structured.unwrap();
    let id = st["task_id"].as_str().unwrap().to_string();
    assert!(out.content[0].as_text().unwrap().contains(&format!("task {id}")));
    id
}

async fn output(s: &Arc<SessionState>, input: Value) -> (String, Value) {
    let out = common::call(s, "TaskOutput", input).await.unwrap();
    (out.joined_text(), out.structured.unwrap())
}

#[tokio::test]
async fn start_returns_at_once_and_output_reads_since_the_last_read() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    // The command cannot finish before the test lets it: the start must not wait for it.
    let id = start(&s, "echo hi; echo warn >&2; while [ ! -e go ]; do sleep 0.01; done; echo bye; exit 4").await;
    assert_eq!(id, "bash_1");
    std::fs::write(root.join("go"), b"").unwrap();

    let (text, st) = output(&s, json!({"task_id": id})).await;
    assert_eq!(st["status"], "failed");
    assert_eq!(st["exit_code"], 4);
    assert_eq!(st["output"], "hi\nwarn\nbye\n");
    assert!(text.starts_with("Task bash_1 is failed (exit code 4"), "{text}");
    // Nothing new on the second read; the log still has everything.
    let (text, st) = output(&s, json!({"task_id": id})).await;
    assert!(text.contains("No new output since the last read."), "{text}");
    assert_eq!(st["output"], "");
    assert_eq!(std::fs::read_to_string(st["log_file"].as_str().unwrap()).unwrap(), "hi\nwarn\nbye\n");
}

#[tokio::test]
async fn non_blocking_reads_see_a_running_task() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let id = start(&s, "echo started; while [ ! -e go ]; do sleep 0.01; done; echo finished").await;
    let mut seen = String::new();
    let begun = Instant::now();
    while !seen.contains("started") {
        let (_, st) = output(&s, json!({"task_id": id, "block": false})).await;
        assert_eq!(st["status"], "running");
        seen.push_str(st["output"].as_str().unwrap());
        assert!(begun.elapsed() < Duration::from_secs(20));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // A blocking read with a short timeout answers while the task still runs.
    let (text, st) = output(&s, json!({"task_id": id, "timeout": 50})).await;
    assert_eq!(st["status"], "running");
    assert!(text.contains("is running (for"), "{text}");
    std::fs::write(root.join("go"), b"").unwrap();
    let (_, st) = output(&s, json!({"task_id": id, "block": true, "timeout": 20000})).await;
    assert_eq!(st["status"], "completed");
    assert_eq!(st["exit_code"], 0);
    assert_eq!(st["output"], "finished\n");
}

#[tokio::test]
async fn stop_kills_the_whole_tree() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    let id = start(
        &s,
        &format!("export TEST_MARK={mark}; setsid sh -c 'echo $$ > gc.pid; sleep 300' & sh -c 'sleep 300' & sleep 300"),
    )
    .await;
    let grandchild: u32 = wait_for_file(&root.join("gc.pid")).await.parse().unwrap();
    assert!(pid_alive(grandchild));
    let text = ok(&s, "TaskStop", json!({"task_id": id})).await;
    assert!(text.starts_with(&format!("Stopped task {id}")), "{text}");
    assert!(!pid_alive(grandchild));
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
    let (_, st) = output(&s, json!({"task_id": id})).await;
    assert_eq!(st["status"], "killed");
    // Stopping again is harmless and says so.
    let text = ok(&s, "TaskStop", json!({"task_id": id})).await;
    assert!(text.contains("had already ended (killed)"), "{text}");
}

#[tokio::test]
async fn a_task_that_exits_leaves_nothing_behind() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    let id = start(&s, &format!("export TEST_MARK={mark}; setsid sh -c 'sleep 300' & sleep 300 & echo done")).await;
    let (_, st) = output(&s, json!({"task_id": id, "timeout": 20000})).await;
    assert_eq!(st["status"], "completed");
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn list_shows_command_status_and_run_time() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    assert!(ok(&s, "BackgroundTasks", json!({})).await.starts_with("No background tasks"));
    let quick = start(&s, "true").await;
    let slow = start(&s, "sleep 300").await;
    output(&s, json!({"task_id": quick, "timeout": 20000})).await;
    let out = common::call(&s, "BackgroundTasks", json!({})).await.unwrap();
    let text = out.joined_text();
    assert!(text.starts_with("2 background task(s), 1 running:"), "{text}");
    assert!(text.contains(&format!("{quick}  completed, exit 0  ")), "{text}");
    assert!(text.contains(&format!("{slow}  running  ")) && text.ends_with("sleep 300"), "{text}");
    let st = out.structured.unwrap();
    assert_eq!(st["running"], 1);
    assert_eq!(st["tasks"][1]["command"], "sleep 300");
    assert!(st["tasks"][1]["run_time_ms"].is_u64());
    ok(&s, "TaskStop", json!({"task_id": slow})).await;
}

#[tokio::test]
async fn the_concurrency_cap_refuses_clearly() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mut services = Extensions::default();
    services.insert(BashConfig { max_background_tasks: 2, ..BashConfig::default() });
    let cx = || cx_with(&s, EventSink::none(), Limits::default(), services.clone());
    for _ in 0..2 {
        call_with(cx(), "Bash", json!({"command": "sleep 300", "run_in_background": true})).await.unwrap();
    }
    let e = call_with(cx(), "Bash", json!({"command": "sleep 300", "run_in_background": true})).await.unwrap_err();
    assert!(e.to_string().starts_with("too many background tasks: 2 are running (the limit is 2)"), "{e}");
    ok(&s, "TaskStop", json!({"task_id": "bash_1"})).await;
    call_with(cx(), "Bash", json!({"command": "true", "run_in_background": true})).await.unwrap();
    ok(&s, "TaskStop", json!({"task_id": "bash_2"})).await;
}

#[tokio::test]
async fn tasks_end_with_their_session() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    start(&s, &format!("export TEST_MARK={mark}; setsid sh -c 'echo $$ > gc.pid; sleep 300' & sleep 300")).await;
    let grandchild: u32 = wait_for_file(&root.join("gc.pid")).await.parse().unwrap();
    assert!(pid_alive(grandchild));
    // A saved session carries no live processes.
    assert_eq!(s.save()["slots"]["shell_tasks"], json!({}));
    drop(s);
    assert!(!pid_alive(grandchild));
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn unknown_ids_and_old_names() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let e = err(&s, "TaskOutput", json!({"task_id": "bash_9"})).await;
    assert!(e.contains("this session has none"), "{e}");
    let id = start(&s, "echo x").await;
    let e = err(&s, "TaskStop", json!({"task_id": "nope"})).await;
    assert!(e.contains(&format!("this session's tasks are {id}")), "{e}");
    // Claude Code's older names and parameter spellings.
    let text = ok(&s, "BashOutput", json!({"bash_id": id, "timeout": 20000})).await;
    assert!(text.contains("x\n"), "{text}");
    ok(&s, "KillShell", json!({"shell_id": id})).await;
    ok(&s, "KillBash", json!({"shell_id": id})).await;
    ok(&s, "background_tasks", json!({})).await;
    // A number is a task list id, and the error says where those go.
    let e = err(&s, "TaskOutput", json!({"task_id": "3"})).await;
    assert!(e.contains("TaskGet and TaskUpdate take those"), "{e}");
}

#[tokio::test]
async fn structured_results_match_the_output_schemas() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let id = start(&s, "echo hi").await;
    let registry = common::registry();
    for (tool, input) in [
        ("TaskOutput", json!({"task_id": id, "timeout": 20000})),
        ("BackgroundTasks", json!({})),
        ("TaskStop", json!({"task_id": id})),
    ] {
        let spec = registry.lookup(tool).unwrap().spec().clone();
        let validator =
            toolbelt_core::InputValidator::compile(tool, spec.output_schema.as_ref().unwrap(), &[]).unwrap();
        let structured = common::call(&s, tool, input.clone()).await.unwrap().structured.unwrap();
        if let Err(e) = validator.check(structured.clone()) {
            panic!("{tool} {input}: {e}\n{structured}");
        }
    }
}

#[tokio::test]
async fn long_task_output_shows_head_and_tail_and_points_at_the_log() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let id = start(&s, "seq 1 200000").await;
    let (text, st) = output(&s, json!({"task_id": id, "timeout": 20000})).await;
    assert_eq!(st["status"], "completed");
    assert_eq!(st["truncated"], true);
    let shown = st["output"].as_str().unwrap();
    assert!(shown.starts_with("1\n2\n") && shown.ends_with("199999\n200000\n"), "{}", &shown[..20]);
    assert!(text.chars().count() <= 30_000, "{}", text.chars().count());
    assert!(text.contains("every byte is in .toolbelt/sessions/test/tasks/bash_1.log (bytes 0–1288895)"), "{text}");
}
