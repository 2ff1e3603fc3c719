//! Hooks driven by real shell scripts and a real loopback HTTP server.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolbelt_core::{Access, BoxFuture, SessionState, ToolError, ToolOutput, ToolSpec};
use toolbelt_policy::hooks::{HookSet, InProcessHook};
use toolbelt_policy::{CallInfo, Decision, Finished, HookEvent, Hooks, PostToolOutcome, SessionInfo, SubagentInfo};

struct Fixture {
    dir: tempfile::TempDir,
    session: SessionState,
    bash: ToolSpec,
}

impl Fixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let session = SessionState::new("sess-1", dir.path().to_path_buf(), vec![]);
        Fixture { dir, session, bash: ToolSpec::new("Bash", "runs commands").aliases(["exec"]) }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Writes a shell script; returns a command running it.
    fn script(&self, name: &str, body: &str) -> String {
        let path = self.path(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        format!("sh {}", path.display())
    }

    fn hooks(&self, settings: Value) -> HookSet {
        HookSet::from_json(&settings).unwrap().with_permission_mode("acceptEdits").with_project_dir(self.dir.path())
    }
}

fn command(event: &str, matcher: &str, commands: &[&str], timeout: Option<u64>) -> Value {
    let handlers: Vec<Value> = commands
        .iter()
        .map(|c| match timeout {
            Some(t) => json!({"type": "command", "command": c, "timeout": t}),
            None => json!({"type": "command", "command": c}),
        })
        .collect();
    json!({ event: [{"matcher": matcher, "hooks": handlers}] })
}

async fn pre(f: &Fixture, hooks: &HookSet, tool: &ToolSpec, input: Value) -> toolbelt_policy::PreToolOutcome {
    let access = Access::exclusive();
    let cwd = f.dir.path().to_path_buf();
    let call = CallInfo { session: &f.session, call_id: "toolu_01", cwd: &cwd, tool, input: &input, access: &access };
    hooks.pre_tool_use(&call).await
}

async fn post(
    f: &Fixture,
    hooks: &HookSet,
    result: Result<&ToolOutput, &ToolError>,
) -> toolbelt_policy::PostToolReport {
    let access = Access::exclusive();
    let cwd = f.dir.path().to_path_buf();
    let input = json!({"command": "make"});
    let call =
        CallInfo { session: &f.session, call_id: "toolu_02", cwd: &cwd, tool: &f.bash, input: &input, access: &access };
    hooks.post_tool_use(&Finished { call, result }).await
}

#[tokio::test]
async fn json_decisions_with_reasons() {
    let f = Fixture::new();
    for (decision, want) in [("deny", Decision::Deny), ("ask", Decision::Ask), ("allow", Decision::Allow)] {
        let answer = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision,
            "permissionDecisionReason": format!("{decision} because")}});
        let cmd = f.script("decide.sh", &format!("cat > /dev/null; echo '{answer}'"));
        let hooks = f.hooks(command("PreToolUse", "Bash", &[&cmd], None));
        let out = pre(&f, &hooks, &f.bash, json!({"command": "ls"})).await;
        let verdict = out.verdict.unwrap();
        assert_eq!(verdict.decision, want);
        assert_eq!(verdict.reason, format!("{decision} because"));
        assert_eq!(verdict.source, format!("PreToolUse hook `command {cmd}`"));
        assert_eq!(out.runs.len(), 1);
        assert!(!out.runs[0].failed() && out.runs[0].outcome.to_string().starts_with(decision), "{:?}", out.runs[0]);
    }
    // The older top-level form still works.
    let cmd = f.script("legacy.sh", r#"echo '{"decision": "block", "reason": "legacy no"}'"#);
    let out = pre(&f, &f.hooks(command("PreToolUse", "*", &[&cmd], None)), &f.bash, json!({})).await;
    assert_eq!(out.verdict.unwrap().reason, "legacy no");
}

#[tokio::test]
async fn rewrites_and_context() {
    let f = Fixture::new();
    let cmd = f.script(
        "rewrite.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"command": "ls -la"}, "additionalContext": "listing in long form"}}'"#,
    );
    let out = pre(&f, &f.hooks(command("PreToolUse", "", &[&cmd], None)), &f.bash, json!({"command": "ls"})).await;
    assert_eq!(out.updated_input, Some(json!({"command": "ls -la"})));
    assert_eq!(out.additional_context, ["listing in long form"]);
    assert!(out.verdict.is_none());
    assert_eq!(out.runs[0].outcome, "rewrote the input; added context");
}

#[tokio::test]
async fn exit_codes_and_bad_output() {
    let f = Fixture::new();
    let run = |body: &str| {
        let cmd = f.script("exit.sh", body);
        f.hooks(command("PreToolUse", "Bash", &[&cmd], None))
    };
    // Exit 2 blocks with stderr as the reason.
    let out = pre(&f, &run("echo 'use trash, not rm' >&2; exit 2"), &f.bash, json!({})).await;
    let v = out.verdict.unwrap();
    assert_eq!((v.decision, v.reason.as_str()), (Decision::Deny, "use trash, not rm"));
    // Another status is a non-blocking error, recorded.
    let out = pre(&f, &run("echo 'jq: not found' >&2; exit 127"), &f.bash, json!({})).await;
    assert!(out.verdict.is_none());
    assert!(out.runs[0].failed());
    assert_eq!(out.runs[0].outcome, "error: exit status 127: jq: not found");
    // Invalid JSON: a non-blocking error; plain text: no decision.
    let out = pre(&f, &run("echo '{not json'"), &f.bash, json!({})).await;
    assert!(out.verdict.is_none() && out.runs[0].failed() && out.runs[0].outcome.to_string().contains("invalid JSON"));
    let out = pre(&f, &run("echo 'all good'"), &f.bash, json!({})).await;
    assert!(out.verdict.is_none() && !out.runs[0].failed() && out.runs[0].outcome == "no decision");
}

#[tokio::test]
async fn a_hook_that_hangs_is_killed_at_its_timeout() {
    let f = Fixture::new();
    let pid_file = f.path("sleeper.pid");
    let cmd = f.script("hang.sh", &format!("sleep 30 & echo $! > {}; wait", pid_file.display()));
    let hooks = f.hooks(command("PreToolUse", "Bash", &[&cmd], Some(1)));
    let out = pre(&f, &hooks, &f.bash, json!({})).await;
    assert!(out.verdict.is_none(), "a timeout never blocks the call");
    assert!(out.runs[0].failed());
    assert_eq!(out.runs[0].outcome, "error: timed out after 1 s");
    assert_eq!(
        out.runs[0].outcome,
        toolbelt_policy::HookOutcome::Failed(toolbelt_policy::HookFailure::TimedOut(Duration::from_secs(1)))
    );
    let pid = std::fs::read_to_string(&pid_file).unwrap().trim().to_string();
    let gone = (0..50).any(|_| {
        let alive = std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| !s.contains(") Z "));
        if alive {
            std::thread::sleep(Duration::from_millis(100));
        }
        !alive
    });
    assert!(gone, "the hook's child process {pid} outlived the timeout");
}

#[tokio::test]
async fn the_input_has_every_documented_field() {
    let f = Fixture::new();
    let seen = f.path("seen.json");
    let cmd = f.script(
        "copy.sh",
        &format!(
            "cat > {}; echo \"$TOOLBELT_PROJECT_DIR|$CLAUDE_PROJECT_DIR\" > {}.env",
            seen.display(),
            seen.display()
        ),
    );
    let hooks = f.hooks(command("PreToolUse", "Bash", &[&cmd], None));
    pre(&f, &hooks, &f.bash, json!({"command": "cargo test"})).await;
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&seen).unwrap()).unwrap();
    assert_eq!(
        input,
        json!({
            "session_id": "sess-1",
            "cwd": f.dir.path(),
            "permission_mode": "acceptEdits",
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": "cargo test"},
            "tool_use_id": "toolu_01",
        })
    );
    let dir = f.dir.path().display().to_string();
    assert_eq!(std::fs::read_to_string(format!("{}.env", seen.display())).unwrap().trim(), format!("{dir}|{dir}"));

    // After a call: the response; after a failure: the error.
    let hooks = f.hooks(json!({
        "PostToolUse": [{"hooks": [{"type": "command", "command": f.script("p.sh", &format!("cat > {}.post", seen.display()))}]}],
        "PostToolUseFailure": [{"hooks": [{"type": "command", "command": f.script("q.sh", &format!("cat > {}.fail", seen.display()))}]}],
    }));
    post(&f, &hooks, Ok(&ToolOutput::text("built").with_structured(json!({"exit_code": 0})))).await;
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.post", seen.display())).unwrap()).unwrap();
    assert_eq!(
        (input["hook_event_name"].clone(), input["tool_response"].clone()),
        (json!("PostToolUse"), json!({"exit_code": 0}))
    );
    post(&f, &hooks, Err(&ToolError::Cancelled)).await;
    let input: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}.fail", seen.display())).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "PostToolUseFailure");
    assert_eq!(input["is_interrupt"], true);
    assert!(input["error"].as_str().unwrap().contains("cancelled"), "{input}");
}

#[tokio::test]
async fn matchers_pick_the_hooks_that_run() {
    let f = Fixture::new();
    let mark =
        |name: &str| f.script(&format!("{name}.sh"), &format!("touch {}", f.path(&format!("{name}.ran")).display()));
    let settings = json!({"PreToolUse": [
        {"matcher": "*", "hooks": [{"type": "command", "command": mark("all")}]},
        {"matcher": "Edit|Bash", "hooks": [{"type": "command", "command": mark("names")}]},
        {"matcher": "exec", "hooks": [{"type": "command", "command": mark("alias")}]},
        {"matcher": "mcp__.*__read", "hooks": [{"type": "command", "command": mark("regex")}]},
        {"matcher": "Bas", "hooks": [{"type": "command", "command": mark("partial")}]},
        {"matcher": "B.s", "hooks": [{"type": "command", "command": mark("short_regex")}]},
    ]});
    let hooks = f.hooks(settings);
    pre(&f, &hooks, &f.bash, json!({})).await;
    let ran = |name: &str| f.path(&format!("{name}.ran")).exists();
    assert!(ran("all") && ran("names") && ran("alias"));
    assert!(!ran("regex") && !ran("partial") && !ran("short_regex"), "names are exact, a regex matches the whole name");
    pre(&f, &hooks, &ToolSpec::new("mcp__fs__read", "d"), json!({})).await;
    assert!(ran("regex"));
}

#[tokio::test]
async fn matching_hooks_run_in_parallel_and_combine_by_strictness() {
    let f = Fixture::new();
    // Each hook leaves its mark, then waits (bounded) for the other's: both can finish with
    // their decision only if they ran at the same time.
    let body = |me: &str, other: &str, decision: &str| {
        format!(
            "touch {me}; i=0; while [ ! -e {other} ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i+1)); done; \
             [ -e {other} ] || exit 1; echo '{{\"hookSpecificOutput\": {{\"permissionDecision\": \"{decision}\", \"permissionDecisionReason\": \"{decision}\"}}}}'",
            me = f.path(me).display(),
            other = f.path(other).display()
        )
    };
    let a = f.script("a.sh", &body("a.mark", "b.mark", "allow"));
    let b = f.script("b.sh", &body("b.mark", "a.mark", "ask"));
    let hooks = f.hooks(command("PreToolUse", "*", &[&a, &b], None));
    let out = pre(&f, &hooks, &f.bash, json!({})).await;
    assert!(out.runs.iter().all(|r| !r.failed()), "{:?}", out.runs);
    assert_eq!(out.verdict.unwrap().decision, Decision::Ask, "ask beats allow");
    let c = f.script("c.sh", r#"echo '{"hookSpecificOutput": {"permissionDecision": "deny"}}'"#);
    let d = f.script("d.sh", r#"echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'"#);
    let hooks = f.hooks(command("PreToolUse", "*", &[&d, &c], None));
    assert_eq!(pre(&f, &hooks, &f.bash, json!({})).await.verdict.unwrap().decision, Decision::Deny);
}

#[tokio::test]
async fn post_hooks_block_replace_or_add_context() {
    let f = Fixture::new();
    let ok = ToolOutput::text("secret=hunter2");
    let run = |body: &str| f.hooks(command("PostToolUse", "Bash", &[&f.script("post.sh", body)], None));
    let report = post(&f, &run(r#"echo '{"decision": "block", "reason": "leaks a secret"}'"#), Ok(&ok)).await;
    assert_eq!(report.outcome, PostToolOutcome::Block { reason: "leaks a secret".into() });
    let report = post(&f, &run("echo 'formatting failed' >&2; exit 2"), Ok(&ok)).await;
    assert_eq!(report.outcome, PostToolOutcome::Block { reason: "formatting failed".into() });
    let report = post(
        &f,
        &run(r#"echo '{"hookSpecificOutput": {"updatedMCPToolOutput": [{"type": "text", "text": "secret=[redacted]"}]}}'"#),
        Ok(&ok),
    )
    .await;
    assert!(
        matches!(&report.outcome, PostToolOutcome::Replace { output } if output.joined_text() == "secret=[redacted]")
    );
    let report =
        post(&f, &run(r#"echo '{"hookSpecificOutput": {"additionalContext": "run the tests next"}}'"#), Ok(&ok)).await;
    assert_eq!(report.outcome, PostToolOutcome::Continue { additional_context: vec!["run the tests next".into()] });
    // After a failure, exit 2's stderr is context for the model.
    let hooks = f.hooks(command(
        "PostToolUseFailure",
        "*",
        &[&f.script("f.sh", "echo 'try make clean first' >&2; exit 2")],
        None,
    ));
    let report = post(&f, &hooks, Err(&ToolError::failed("make: *** [all] Error 2"))).await;
    assert_eq!(report.outcome, PostToolOutcome::Continue { additional_context: vec!["try make clean first".into()] });
}

/// A one-request-at-a-time HTTP/1.1 server on loopback: records each request (headers and
/// body) and answers with `status` and `body`.
async fn serve(status: u16, body: &'static str) -> (String, tokio::sync::mpsc::UnboundedReceiver<(String, Value)>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let mut raw = Vec::new();
            let mut buf = [0u8; 4096];
            let (head, length) = loop {
                let n = socket.read(&mut buf).await.unwrap();
                raw.extend_from_slice(&buf[..n]);
                if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
                    let head = String::from_utf8_lossy(&raw[..end]).to_string();
                    let length = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    raw.drain(..end + 4);
                    break (head, length);
                }
            };
            while raw.len() < length {
                let n = socket.read(&mut buf).await.unwrap();
                raw.extend_from_slice(&buf[..n]);
            }
            let _ = tx.send((head, serde_json::from_slice(&raw[..length]).unwrap_or(Value::Null)));
            let reply = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(reply.as_bytes()).await.unwrap();
        }
    });
    (url, rx)
}

#[tokio::test]
async fn http_hooks_post_the_same_json() {
    let f = Fixture::new();
    let (url, mut requests) = serve(200, r#"{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "policy server says no"}}"#).await;
    let path = std::env::var("PATH").unwrap();
    let hooks = f.hooks(json!({"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "http", "url": url, "headers": {"X-Path": "p=$PATH", "X-Missing": "[${TOOLBELT_SURELY_UNSET}]"}, "timeout": 5}
    ]}]}));
    let out = pre(&f, &hooks, &f.bash, json!({"command": "curl evil"})).await;
    let v = out.verdict.unwrap();
    assert_eq!((v.decision, v.reason.as_str()), (Decision::Deny, "policy server says no"));
    assert_eq!(v.source, format!("PreToolUse hook `http {url}`"));
    let (head, body) = requests.recv().await.unwrap();
    assert!(head.starts_with("POST /hook HTTP/1.1"), "{head}");
    assert!(head.to_ascii_lowercase().contains(&format!("x-path: p={}", path.to_ascii_lowercase())), "{head}");
    assert!(head.to_ascii_lowercase().contains("x-missing: []"), "{head}");
    assert_eq!(body["tool_input"], json!({"command": "curl evil"}));
    assert_eq!(body["hook_event_name"], "PreToolUse");

    // A server error is a non-blocking error.
    let (url, _requests) = serve(500, "boom").await;
    let hooks = f.hooks(json!({"PreToolUse": [{"hooks": [{"type": "http", "url": url}]}]}));
    let out = pre(&f, &hooks, &f.bash, json!({})).await;
    assert!(out.verdict.is_none() && out.runs[0].failed());
    assert!(out.runs[0].outcome.to_string().starts_with("error: HTTP 500"), "{}", out.runs[0].outcome);
}

struct NoFridays;
impl InProcessHook for NoFridays {
    fn name(&self) -> &str {
        "no-fridays"
    }
    fn run<'a>(&'a self, input: &'a Value) -> BoxFuture<'a, Result<Value, toolbelt_policy::hooks::InProcessHookError>> {
        let command = input["tool_input"]["command"].as_str().unwrap_or_default().to_string();
        Box::pin(async move {
            Ok(if command.contains("deploy") {
                json!({"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no deploys today"}})
            } else {
                json!({})
            })
        })
    }
}

#[tokio::test]
async fn in_process_hooks_speak_the_same_json() {
    let f = Fixture::new();
    let hooks = HookSet::new().with_in_process(HookEvent::PreToolUse, "Bash", Arc::new(NoFridays)).unwrap();
    assert!(!hooks.is_empty() && HookSet::new().is_empty());
    let out = pre(&f, &hooks, &f.bash, json!({"command": "make deploy"})).await;
    assert_eq!(out.verdict.unwrap().reason, "no deploys today");
    assert_eq!(out.runs[0].handler, "in-process no-fridays");
    assert!(pre(&f, &hooks, &f.bash, json!({"command": "make"})).await.verdict.is_none());
}

#[tokio::test]
async fn session_start_adds_context() {
    let f = Fixture::new();
    let json_hook = f.script(
        "s1.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "branch: main"}}'"#,
    );
    let text_hook = f.script("s2.sh", "echo 'open issues: 3'");
    let never = f.script("s3.sh", "echo 'resumed only'");
    let hooks = f.hooks(json!({"SessionStart": [
        {"hooks": [{"type": "command", "command": json_hook}, {"type": "command", "command": text_hook}]},
        {"matcher": "resume", "hooks": [{"type": "command", "command": never}]},
    ]}));
    let cwd: &Path = f.dir.path();
    let (context, runs) = hooks.session_start(&SessionInfo { session_id: "s", cwd, reason: "startup" }).await;
    assert_eq!(context, ["branch: main", "open issues: 3"]);
    assert_eq!(runs.len(), 2);
}

#[tokio::test]
async fn subagent_hooks_match_the_agent_type_and_see_how_it_stopped() {
    let f = Fixture::new();
    let log = f.path("stop.json");
    let start = f.script(
        "start.sh",
        r#"echo '{"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "use the staging db"}}'"#,
    );
    let stop = f.script("stop.sh", &format!("cat > {}", log.display()));
    let hooks = f.hooks(json!({
        "SubagentStart": [{"matcher": "Explore", "hooks": [{"type": "command", "command": start}]}],
        "SubagentStop": [{"hooks": [{"type": "command", "command": stop}]}],
    }));
    let cwd: &Path = f.dir.path();
    let info = SubagentInfo {
        session_id: "s",
        agent_id: "agent_1",
        agent_type: "Explore",
        cwd,
        status: None,
        last_message: None,
    };
    let (context, runs) = hooks.subagent_start(&info).await;
    assert_eq!(context, ["use the staging db"]);
    assert_eq!(runs.len(), 1);
    let other = SubagentInfo { agent_type: "general-purpose", ..info };
    assert!(hooks.subagent_start(&other).await.0.is_empty(), "the matcher names Explore only");
    let stopped = SubagentInfo { status: Some("max_turns"), last_message: Some("halfway there"), ..info };
    assert_eq!(hooks.subagent_stop(&stopped).await.len(), 1);
    let input: Value = serde_json::from_str(&std::fs::read_to_string(&log).unwrap()).unwrap();
    assert_eq!(input["hook_event_name"], "SubagentStop");
    assert_eq!(input["agent_id"], "agent_1");
    assert_eq!(input["agent_type"], "Explore");
    assert_eq!(input["status"], "max_turns");
    assert_eq!(input["last_assistant_message"], "halfway there");
}

/// Marks the commands it prepares (a variable the hook prints), or refuses them.
struct Marking {
    refuse: bool,
}

impl toolbelt_policy::confine::Confiner for Marking {
    fn confine(&self, command: &mut tokio::process::Command) -> Result<toolbelt_policy::confine::Confined, String> {
        if self.refuse {
            return Err("the sandbox cannot be applied here".into());
        }
        command.env("CONFINED", "yes");
        Ok(toolbelt_policy::confine::Confined::default())
    }
}

#[tokio::test]
async fn confined_hooks_start_as_their_confiner_prepares_them_and_not_at_all_when_it_refuses() {
    let f = Fixture::new();
    let user = f.script(
        "user.sh",
        "echo \"{\\\"hookSpecificOutput\\\": {\\\"additionalContext\\\": \\\"user ${CONFINED:-no}\\\"}}\"",
    );
    let project = f.script(
        "project.sh",
        "echo \"{\\\"hookSpecificOutput\\\": {\\\"additionalContext\\\": \\\"project ${CONFINED:-no}\\\"}}\"",
    );
    let hooks = HookSet::from_json(&command("PreToolUse", "Bash", &[&user], None))
        .unwrap()
        .with_confined_json(&command("PreToolUse", "Bash", &[&project], None), Arc::new(Marking { refuse: false }))
        .unwrap();
    let out = pre(&f, &hooks, &f.bash, json!({})).await;
    assert_eq!(out.additional_context, ["user no", "project yes"], "only the project's hook is confined");
    let refusing = HookSet::new()
        .with_confined_json(&command("PreToolUse", "Bash", &[&project], None), Arc::new(Marking { refuse: true }))
        .unwrap();
    let out = pre(&f, &refusing, &f.bash, json!({})).await;
    assert!(out.runs[0].failed(), "{:?}", out.runs);
    assert_eq!(out.runs[0].outcome.to_string(), "error: not started: the sandbox cannot be applied here");
    assert!(out.additional_context.is_empty());
}
