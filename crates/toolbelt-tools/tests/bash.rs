//! Bash with real processes: exit codes and streams, live events, the environment, cwd
//! carry-over, timeouts and cancellation that leave nothing running, head+tail truncation
//! with a spill file holding every byte, and the deny list.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
mod shell_support;

use std::sync::Arc;
use std::time::Duration;

use common::{err, ok, session};
use serde_json::{Value, json};
use shell_support::*;
use toolbelt_core::{EventSink, Extensions, Limits, OutputStream, ToolEvent};
use toolbelt_tools::shell::BashConfig;

async fn run(s: &Arc<toolbelt_core::SessionState>, input: Value) -> (String, Value, bool) {
    let out = common::call(s, "Bash", input).await.unwrap();
    (out.joined_text(), out.structured.unwrap(), out.is_error)
}

#[tokio::test]
async fn exit_code_and_both_streams() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let (text, st, is_error) = run(&s, json!({"command": "echo out; echo err >&2; exit 3"})).await;
    assert!(!is_error, "a non-zero exit is a normal result");
    assert!(text.contains("out\n") && text.contains("err\n"), "{text}");
    assert!(text.ends_with("[Exit code 3]"), "{text}");
    assert_eq!(st["stdout"], "out\n");
    assert_eq!(st["stderr"], "err\n");
    assert_eq!(st["exit_code"], 3);
    assert_eq!(st["timed_out"], false);
    assert_eq!(st["interrupted"], false);
    assert!(st["duration_ms"].is_u64());

    let (text, st, _) = run(&s, json!({"command": "true"})).await;
    assert_eq!(text, "(no output)");
    assert_eq!(st["exit_code"], 0);
}

#[tokio::test]
async fn streams_interleave_in_arrival_order() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let command = "echo a; sleep 0.1; echo b >&2; sleep 0.1; echo c";
    let (text, _, _) = run(&s, json!({"command": command})).await;
    assert_eq!(text, "a\nb\nc\n");
}

#[tokio::test]
async fn output_streams_live_while_the_command_runs() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    // The command waits for a file that only the event listener creates when it sees the
    // first line: it can finish only if that line was streamed while it ran.
    let go = root.join("go");
    let sink_log = Arc::new(std::sync::Mutex::new(Vec::<ToolEvent>::new()));
    let (go2, log2) = (go.clone(), Arc::clone(&sink_log));
    let sink = EventSink::new(move |e| {
        if let ToolEvent::Output { chunk, .. } = e
            && chunk.contains("first")
        {
            std::fs::write(&go2, b"").unwrap();
        }
        log2.lock().unwrap().push(e.clone());
    });
    let cx = cx_with(&s, sink, Limits::default(), Extensions::default());
    let command = "echo first; echo warn >&2; while [ ! -e go ]; do sleep 0.01; done; echo second";
    let out = call_with(cx, "Bash", json!({"command": command, "timeout": 20000})).await.unwrap();
    assert!(!out.is_error, "{}", out.joined_text());
    assert_eq!(streamed(&sink_log, OutputStream::Stdout), "first\nsecond\n");
    assert_eq!(streamed(&sink_log, OutputStream::Stderr), "warn\n");
}

#[tokio::test]
async fn stdin_is_empty_and_pagers_and_colours_are_off() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let (text, _, _) = run(&s, json!({"command": "read line; echo \"read=$?\""})).await;
    assert_eq!(text, "read=1\n");
    let command = "echo $PAGER $GIT_PAGER $NO_COLOR $TERM $GIT_TERMINAL_PROMPT ${FORCE_COLOR:-none}";
    let (text, _, _) = run(&s, json!({"command": command})).await;
    assert_eq!(text, "cat cat 1 dumb 0 none\n");
}

#[tokio::test]
async fn cd_carries_over_inside_the_roots_and_variables_do_not() {
    let (_t, root) = project();
    std::fs::create_dir_all(root.join("sub/deeper")).unwrap();
    let s = session(&root, &[]);
    let (text, _, _) = run(&s, json!({"command": "cd sub && export FOO=1"})).await;
    assert!(text.contains(&format!("[Working directory is now {}]", root.join("sub").display())), "{text}");
    assert_eq!(s.cwd(), root.join("sub"));
    let (text, st, _) = run(&s, json!({"command": "pwd; echo ${FOO:-unset}"})).await;
    assert_eq!(text, format!("{}\nunset\n", root.join("sub").display()));
    assert_eq!(st["cwd"], root.join("sub").display().to_string());
    // An exit after the cd still carries it.
    ok(&s, "Bash", json!({"command": "cd deeper; exit 2"})).await;
    assert_eq!(s.cwd(), root.join("sub/deeper"));
    // Outside the roots: not kept, and the result says so.
    let (text, _, _) = run(&s, json!({"command": "cd / && ls >/dev/null"})).await;
    assert!(text.contains("cd outside the workspace roots is not kept"), "{text}");
    assert_eq!(s.cwd(), root.join("sub/deeper"));
    // A second root counts as inside.
    let (_t2, other) = project();
    let s2 = session(&root, &[&root, &other]);
    ok(&s2, "Bash", json!({"command": format!("cd '{}'", other.display())})).await;
    assert_eq!(s2.cwd(), other);
}

/// A judge of follow-ups that keeps what it was asked and allows it, or refuses everything.
#[derive(Debug, Default)]
struct Judge {
    asked: std::sync::Mutex<Vec<toolbelt_core::Touch>>,
    refuse: bool,
}

impl toolbelt_core::FollowUp for Judge {
    fn authorize(
        &self,
        access: toolbelt_core::Access,
    ) -> toolbelt_core::BoxFuture<'_, Result<(), toolbelt_core::ToolError>> {
        Box::pin(async move {
            self.asked.lock().unwrap().extend(access.touches);
            if self.refuse { Err(toolbelt_core::ToolError::Denied { reason: "not there".into() }) } else { Ok(()) }
        })
    }
}

#[tokio::test]
async fn a_deleted_working_directory_falls_back_to_the_root_judged_again() {
    let (_t, root) = project();
    std::fs::create_dir(root.join("gone")).unwrap();
    let s = session(&root.join("gone"), &[&root]);
    std::fs::remove_dir(root.join("gone")).unwrap();
    let judge = Arc::new(Judge::default());
    let cx = common::cx(&s).with_follow_up(judge.clone());
    let out = common::call_in(cx, "Bash", json!({"command": "pwd > here.txt; pwd"})).await.unwrap();
    let text = out.joined_text();
    assert!(text.starts_with(&format!("{}\n", root.display())), "{text}");
    assert!(text.contains("no longer exists"), "{text}");
    assert_eq!(s.cwd(), root);
    // Judged in the deleted folder, the command was judged again where it ran.
    let asked = judge.asked.lock().unwrap().clone();
    assert!(asked.contains(&toolbelt_core::Touch::Write(root.join("here.txt"))), "{asked:?}");

    // Refused there, it does not run.
    std::fs::create_dir(root.join("gone2")).unwrap();
    let s = session(&root.join("gone2"), &[&root]);
    std::fs::remove_dir(root.join("gone2")).unwrap();
    let cx = common::cx(&s).with_follow_up(Arc::new(Judge { refuse: true, ..Judge::default() }));
    let refused = common::call_in(cx, "Bash", json!({"command": "touch made.txt"})).await.unwrap_err();
    assert!(refused.to_string().contains("not there"), "{refused}");
    assert!(!root.join("made.txt").exists());
}

#[tokio::test]
async fn timeout_returns_partial_output_and_kills_the_whole_tree() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    let command = format!(
        "export TEST_MARK={mark}; echo before; echo oops >&2; \
         setsid sh -c 'echo $$ > grandchild.pid; sleep 300' & \
         sh -c 'sleep 300' & sleep 300"
    );
    let out = common::call(&s, "Bash", json!({"command": command, "timeout": 1500})).await.unwrap();
    let text = out.joined_text();
    assert!(out.is_error, "a timeout is reported as an error result");
    assert!(text.starts_with("before\noops\n"), "{text}");
    assert!(text.contains("[Timed out after 1.5 s: the command and every process it started were stopped"), "{text}");
    let st = out.structured.unwrap();
    assert_eq!(st["timed_out"], true);
    assert_eq!(st["stdout"], "before\n");
    // What to do about it is in the structured result too (a client may show the model only that).
    let note = st["notes"][0].as_str().unwrap();
    assert!(note.starts_with("Timed out after 1.5 s") && note.contains("run_in_background"), "{st}");
    // The setsid'd grandchild ran, and nothing of the tree is left.
    let grandchild: u32 = wait_for_file(&root.join("grandchild.pid")).await.parse().unwrap();
    assert!(!pid_alive(grandchild), "the setsid'd grandchild {grandchild} survived");
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn cancellation_stops_the_tree_and_returns_what_was_printed() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    let (cx, _log) = recording(&s);
    let token = cx.cancellation().clone();
    let command =
        format!("export TEST_MARK={mark}; echo started; setsid sh -c 'echo $$ > gc.pid; sleep 300' & sleep 300");
    let call = tokio::spawn(call_with(cx, "Bash", json!({"command": command})));
    let grandchild: u32 = wait_for_file(&root.join("gc.pid")).await.parse().unwrap();
    assert!(pid_alive(grandchild));
    token.cancel();
    let out = call.await.unwrap().unwrap();
    assert!(out.is_error);
    let text = out.joined_text();
    assert!(text.starts_with("started\n") && text.contains("[Interrupted"), "{text}");
    assert_eq!(out.structured.unwrap()["interrupted"], true);
    assert!(!pid_alive(grandchild));
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn dropping_the_call_kills_the_tree() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    let command =
        format!("export TEST_MARK={mark}; setsid sh -c 'echo $$ > gc.pid; sleep 300' & (sleep 300 &) ; sleep 300");
    let call = Box::pin(common::call(&s, "Bash", json!({"command": command})));
    let mut call = Some(call);
    let gc = root.join("gc.pid");
    // Run the call until the grandchild is up, then drop it (as the runtime does on timeout).
    let pid: u32 = tokio::select! {
        r = call.as_mut().unwrap() => panic!("the command ended early: {r:?}"),
        pid = wait_for_file(&gc) => pid.parse().unwrap(),
    };
    assert!(pid_alive(pid));
    assert!(alive_with(&mark).contains(&pid));
    drop(call.take());
    assert!(!pid_alive(pid));
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn nothing_outlives_a_command_that_exits_normally() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    // Background children that keep the output open, one in its own session: the call must
    // neither wait for them nor leave them running.
    let command = format!(
        "export TEST_MARK={mark}; sleep 300 & setsid sh -c 'sleep 300' & (sleep 300 >/dev/null 2>&1 &); echo done"
    );
    let (text, st, _) = run(&s, json!({"command": command, "timeout": 60000})).await;
    assert_eq!(text, "done\n");
    assert_eq!(st["timed_out"], false);
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn long_output_keeps_head_and_tail_and_spills_every_byte() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let (text, st, _) = run(&s, json!({"command": "seq 1 200000; echo tail-end >&2"})).await;
    assert!(text.chars().count() <= 30_000, "{} characters", text.chars().count());
    assert!(text.starts_with("1\n2\n3\n"), "{}", &text[..20]);
    assert!(text.contains("bytes omitted"), "no middle marker");
    assert!(text.contains("tail-end"), "the tail is kept");
    assert!(text.contains("Every byte is in .toolbelt/sessions/test/spill/"), "{}", &text[text.len() - 400..]);
    assert_eq!(st["truncated"], true);
    let file = st["output_file"].as_str().unwrap();
    let mut expected: Vec<u8> = (1..=200_000).flat_map(|n| format!("{n}\n").into_bytes()).collect();
    expected.extend_from_slice(b"tail-end\n");
    assert_eq!(std::fs::read(file).unwrap(), expected);
    // The structured streams are cut too, together within the budget: the short one whole,
    // the long one the rest of the room.
    let stdout = st["stdout"].as_str().unwrap();
    assert!(stdout.chars().count() + "tail-end\n".len() <= 30_000, "{}", stdout.chars().count());
    assert!(stdout.chars().count() > 20_000, "stdout gets the room stderr does not need");
    assert!(stdout.starts_with("1\n2\n3\n") && stdout.ends_with("199999\n200000\n"), "{}", &stdout[..20]);
    assert_eq!(st["stderr"], "tail-end\n");
    // And the notes the text ends with.
    let notes = st["notes"].as_array().unwrap();
    assert!(notes.iter().any(|n| n.as_str().unwrap().contains("Every byte is in ")), "{st}");
}

#[tokio::test]
async fn the_budget_comes_from_the_context() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let limits = Limits { output_budget: 2_000, ..Limits::default() };
    let cx = cx_with(&s, EventSink::none(), limits, Extensions::default());
    let out =
        call_with(cx, "Bash", json!({"command": "printf 'x%.0s' $(seq 1 5000); printf '\\xff\\xfe'"})).await.unwrap();
    let text = out.joined_text();
    assert!(text.chars().count() <= 2_000, "{}", text.chars().count());
    let st = out.structured.unwrap();
    let spilled = std::fs::read(st["output_file"].as_str().unwrap()).unwrap();
    assert_eq!(spilled.len(), 5_002);
    assert!(spilled.ends_with(b"\xff\xfe"), "the spill file holds the raw bytes");
    // Output that fits leaves no spill file behind.
    let cx = cx_with(&s, EventSink::none(), limits, Extensions::default());
    let out = call_with(cx, "Bash", json!({"command": "echo small"})).await.unwrap();
    assert!(out.structured.unwrap().get("output_file").is_none());
}

#[tokio::test]
async fn catastrophic_commands_and_configured_patterns_are_refused() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let e = err(&s, "Bash", json!({"command": "rm -rf ~"})).await;
    assert!(e.starts_with("Refused: this command recursively deletes `~`"), "{e}");
    assert!(e.contains("safety stop"), "{e}");
    let e = err(&s, "Bash", json!({"command": ":(){ :|:& };:"})).await;
    assert!(e.contains("fork bomb"), "{e}");

    let mut services = Extensions::default();
    services.insert(BashConfig { deny_patterns: vec![r"\bgit\s+push\b".into()], ..BashConfig::default() });
    let cx = cx_with(&s, EventSink::none(), Limits::default(), services.clone());
    let e = call_with(cx, "Bash", json!({"command": "git push --force"})).await.unwrap_err().to_string();
    assert!(e.contains("matches the deny pattern `\\bgit\\s+push\\b`"), "{e}");
    let cx = cx_with(&s, EventSink::none(), Limits::default(), services);
    let out = call_with(cx, "Bash", json!({"command": "echo git status"})).await.unwrap();
    assert_eq!(out.joined_text(), "git status\n");
}

#[tokio::test]
async fn aliases_and_parameter_spellings_reach_bash() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    for name in ["exec", "shell_exec", "bash"] {
        assert_eq!(ok(&s, name, json!({"command": "echo hi"})).await, "hi\n", "{name}");
    }
    assert_eq!(ok(&s, "Bash", json!({"cmd": "echo via-cmd"})).await, "via-cmd\n");
}

#[tokio::test]
async fn structured_results_match_the_output_schema() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let spec = common::registry().lookup("Bash").unwrap().spec().clone();
    let validator = toolbelt_core::InputValidator::compile("Bash", spec.output_schema.as_ref().unwrap(), &[]).unwrap();
    for input in [
        json!({"command": "echo hi; exit 1"}),
        json!({"command": "seq 1 100000"}),
        json!({"command": "sleep 5", "timeout": 200}),
        json!({"command": "sleep 1", "run_in_background": true}),
    ] {
        let structured = common::call(&s, "Bash", input.clone()).await.unwrap().structured.unwrap();
        if let Err(e) = validator.check(structured.clone()) {
            panic!("{input}: {e}\n{structured}");
        }
    }
    assert!(spec.streams);
    assert_eq!(spec.default_timeout, Some(Duration::from_secs(120)));
}

#[tokio::test]
async fn a_process_that_drops_the_control_pipe_is_still_found_by_its_tag() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let mark = marker();
    // It leaves the group and closes the inherited control pipe, but keeps stdout open: the
    // cheap checks miss it, the tag search does not.
    let command = format!(
        "export TEST_MARK={mark}; setsid bash -c 'exec 98>&-; echo $$ > gc.pid; exec sleep 300' & \
         while [ ! -s gc.pid ]; do sleep 0.01; done; echo done"
    );
    let (text, st, _) = run(&s, json!({"command": command, "timeout": 60000})).await;
    assert!(text.starts_with("done\n"), "{text}");
    assert_eq!(st["timed_out"], false);
    let pid: u32 = wait_for_file(&root.join("gc.pid")).await.parse().unwrap();
    assert!(!pid_alive(pid));
    assert_eq!(alive_with(&mark), Vec::<u32>::new());
}

#[tokio::test]
async fn the_description_is_reported_as_progress() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let (cx, log) = recording(&s);
    call_with(cx, "Bash", json!({"command": "true", "description": "Check the build"})).await.unwrap();
    let events = log.lock().unwrap();
    assert!(
        events.iter().any(|e| matches!(e, ToolEvent::Progress { message, .. } if message == "Check the build")),
        "{events:?}"
    );
}

mod through_the_runtime {
    use super::*;
    use toolbelt_core::{CancellationToken, Registry};
    use toolbelt_runtime::{Runtime, RuntimeConfig, Session, ToolCall};

    fn runtime(config: RuntimeConfig) -> Runtime {
        let registry = Registry::new();
        toolbelt_tools::register_builtin(&registry).unwrap();
        Runtime::builder(Arc::new(registry)).authorizer(Arc::new(toolbelt_policy::AllowAll)).config(config).build()
    }

    #[tokio::test]
    async fn bash_stops_itself_before_the_runtime_and_keeps_the_output() {
        let (_t, root) = project();
        let session = Session::new("rt", root.clone(), vec![], root.join(".toolbelt/sessions/rt"));
        let rt = runtime(RuntimeConfig::default());
        let call = ToolCall::new("1", "Bash", json!({"command": "echo partial; sleep 30", "timeout": 1000}));
        let result = rt.call(&session, call, &EventSink::none(), &CancellationToken::new()).await;
        assert!(result.is_error);
        assert_eq!(result.outcome, "tool_error", "the tool's own result, not the runtime's timeout");
        let text = result.text();
        assert!(text.starts_with("partial\n") && text.contains("[Timed out after 1 s"), "{text}");
        assert_eq!(result.structured.unwrap()["timed_out"], true);
    }

    #[tokio::test]
    async fn the_runtime_cap_bounds_the_timeout() {
        let (_t, root) = project();
        let session = Session::new("rt", root.clone(), vec![], root.join(".toolbelt/sessions/rt"));
        let config = RuntimeConfig { max_timeout: Duration::from_millis(800), ..RuntimeConfig::default() };
        let rt = runtime(config);
        let call = ToolCall::new("1", "Bash", json!({"command": "echo partial; sleep 30"}));
        let result = rt.call(&session, call, &EventSink::none(), &CancellationToken::new()).await;
        assert_eq!(result.outcome, "tool_error");
        assert!(result.text().contains("[Timed out after 800 ms"), "{}", result.text());
    }

    #[tokio::test]
    async fn long_output_is_not_cut_twice() {
        let (_t, root) = project();
        let session = Session::new("rt", root.clone(), vec![], root.join(".toolbelt/sessions/rt"));
        let rt = runtime(RuntimeConfig::default());
        let call = ToolCall::new("1", "Bash", json!({"command": "seq 1 100000"}));
        let result = rt.call(&session, call, &EventSink::none(), &CancellationToken::new()).await;
        let text = result.text();
        assert!(text.contains("Every byte is in .toolbelt/sessions/rt/spill/"), "{}", &text[text.len() - 300..]);
        assert!(!text.contains("[Output truncated"), "the runtime cut it again");
        assert!(text.chars().count() <= 30_000);
    }
}
