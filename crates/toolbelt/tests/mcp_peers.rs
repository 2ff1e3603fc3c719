//! `toolbelt mcp` against the real MCP peers: the official Python SDK client (in its default
//! mode), the official TypeScript SDK client, the MCP Inspector's CLI and the official
//! conformance suite. The reference servers as upstreams through the gateway are in
//! `gateway_peers.rs`.
//!
//! The peers are installed by `.ci/run` into `.ci/peers/` (npm packages pinned by its
//! lockfile, Node 22 among them, and a Python venv with `mcp`). Without them these tests say
//! so and pass — except under CI, where a missing peer is a failure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/http_server.rs"]
mod http_server;
#[path = "common/peers.rs"]
mod peers;

use http_server::HttpServer;
use peers::{Peers, project, run, run_with_stderr, script, toolbelt};

fn check_python_session(seen: &Value, root: &Path) {
    assert_eq!(seen["era"], "modern", "the client negotiates 2026-07-28 with server/discover, no initialize");
    let tools: Vec<&str> = seen["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"Read") && tools.contains(&"Bash") && tools.contains(&"ApplyPatch"), "{tools:?}");
    assert_eq!(seen["bash_output_schema"], true);
    assert_eq!(seen["read"], json!([false, "     1\thello from the workspace"]));
    // Write asks; the client's elicitation approves it once.
    assert_eq!(seen["write"][0], false, "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("written.txt")).unwrap(), "by python\n");
    assert!(seen["asked"][0].as_str().unwrap().starts_with("Write wants to write "), "{seen}");
    // A declined elicitation denies the call.
    assert_eq!(seen["declined"], json!([true, "permission denied: the user declined this call"]));
    assert!(!root.join("nope").exists());
    // Live output came as progress while the command ran.
    assert_eq!(seen["bash"], json!([false, 0]));
    let progress = seen["progress"].as_str().unwrap();
    assert!(progress.contains("step1") && progress.contains("step3"), "{progress:?}");
    assert!(seen["unknown"].as_str().unwrap().contains("unknown tool `NoSuchTool`"), "{seen}");
}

#[test]
fn python_sdk_client_in_its_default_mode_over_stdio() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("python_client.py")).arg("stdio").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, "[]");
    check_python_session(&seen, &root);
}

/// A PostToolUse hook that replaces a result: the SDK checks `structuredContent` against the
/// tool's `outputSchema` and refused a replaced result that had none ("has an output schema
/// but did not return structured content").
#[test]
fn the_python_client_accepts_a_result_a_hook_replaced() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let config = root.join("home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        r#"[[hooks.PostToolUse]]
matcher = "Grep"
hooks = [{ type = "command", command = '''echo '{"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedMCPToolOutput": "[redacted by a hook]"}}' ''' }]
"#,
    )
    .unwrap();
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("python_client.py")).arg("stdio").arg(toolbelt()).arg(&root);
    let seen = run(cmd, &root, r#"[["Grep", {"pattern": "hello"}]]"#);
    assert_eq!(seen["extra"], json!([["Grep", false, "[redacted by a hook]"]]), "{seen}");
}

#[test]
fn python_sdk_client_over_streamable_http() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let server = HttpServer::start(&root);
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("python_client.py")).arg("http").arg(&server.url).arg(&root);
    let (seen, stderr) = run_with_stderr(cmd, &root, "[]");
    check_python_session(&seen, &root);
    // Its DELETE at the end of the session is answered as the SDK expects (200 or 204).
    assert!(!stderr.contains("Session termination failed"), "{stderr}");
}

#[test]
fn typescript_sdk_client_over_stdio_and_http() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    // Beside its node_modules, so it resolves the SDK installed there.
    let script_path = peers.dir.join("ts_client.mjs");
    let server = HttpServer::start(&root);
    for (kind, target) in [("stdio", toolbelt().display().to_string()), ("http", server.url.clone())] {
        let mut cmd = Command::new(peers.node());
        cmd.arg(&script_path).arg(kind).arg(&target);
        let seen = run(cmd, &root, "");
        assert_eq!(seen["server"], "toolbelt", "{kind}: {seen}");
        assert!(seen["tools"].as_array().unwrap().contains(&json!("Grep")), "{kind}: {seen}");
        assert_eq!(seen["readOnly"], true);
        assert_eq!(seen["read"], json!([false, "     1\thello from the workspace"]), "{kind}");
        assert_eq!(seen["bash"], json!([false, "from ts\n"]), "{kind}");
        assert_eq!(seen["missing"][0], true, "{kind}");
    }
}

/// The server closes a call's stream after a second (`--sse-poll-after 1`) while the call
/// runs two: each SDK client comes back with `Last-Event-ID` after the retry hint (3 s, when
/// the call has finished) and gets the answer from what the session kept.
#[test]
fn sdk_clients_resume_a_stream_the_server_closes_mid_call() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let server = HttpServer::start_with(&root, &["--sse-poll-after", "1", "--allow", "Bash(sleep *)"]);
    let slow = r#"[["Bash", {"command": "sleep 2; echo polled"}]]"#;
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("python_client.py")).arg("http").arg(&server.url).arg(&root);
    let seen = run(cmd, &root, slow);
    assert_eq!(seen["extra"][0][1], false, "{seen}");
    assert!(seen["extra"][0][2].as_str().unwrap().contains("polled"), "{seen}");
    let mut cmd = Command::new(peers.node());
    cmd.arg(peers.dir.join("ts_client.mjs")).arg("http").arg(&server.url).arg("sleep 2; echo polled");
    let seen = run(cmd, &root, "");
    assert_eq!(seen["slow"], json!([false, "polled\n"]), "{seen}");
}

/// The official conformance suite's server scenarios, at every revision served: every one that
/// does not call the suite's own test tools passes (those are listed, with why, in
/// `peers/conformance-baseline.yml`, and for 2026-07-28, run by the suite's next release, in
/// `peers/conformance-2026-baseline.yml`; one that starts passing fails the run too).
/// `server-sse-polling` passes its checks with one warning, for the same reason: it resumes a
/// call of its `test_reconnection` tool.
#[test]
fn the_conformance_suite_passes_every_scenario_but_those_of_its_test_tools() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let server = HttpServer::start(&root);
    // The suite (`module`) run with `args`: passed, every failure expected by its baseline.
    let conformance = |module: &str, args: &[&str], what: &str| {
        let out = Command::new(peers.node())
            .arg(peers.module(module))
            .args(["server", "--url", &server.url])
            .args(args)
            .current_dir(&root)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(out.status.success(), "{what}:\n{text}");
        assert!(text.contains("all failures are expected"), "{what}:\n{text}");
    };
    let baseline = script("conformance-baseline.yml");
    for version in ["2025-06-18", "2025-11-25"] {
        let args = ["--spec-version", version, "--expected-failures", baseline.to_str().unwrap()];
        conformance("@modelcontextprotocol/conformance/dist/index.js", &args, version);
    }
    // 2026-07-28, by the suite's next release: the scenarios that revision requires.
    let results = root.join("conformance-2026");
    let baseline = script("conformance-2026-baseline.yml");
    let args = [
        "--requirements",
        "2026-07-28",
        "--expected-failures",
        baseline.to_str().unwrap(),
        "-o",
        results.to_str().unwrap(),
    ];
    conformance("conformance-next/dist/index.js", &args, "2026-07-28");
    // Of the stateless server's checks, only those calling the suite's test tools fail.
    let stateless = std::fs::read_dir(&results)
        .unwrap()
        .filter_map(Result::ok)
        .find(|e| e.file_name().to_string_lossy().starts_with("server-server-stateless-"))
        .expect("the server-stateless results");
    let checks: Value = serde_json::from_slice(&std::fs::read(stateless.path().join("checks.json")).unwrap()).unwrap();
    let failed: Vec<&Value> = checks.as_array().unwrap().iter().filter(|c| c["status"] == "FAILURE").collect();
    assert!(
        failed.iter().all(|c| c["errorMessage"]
            .as_str()
            .is_some_and(|m| m.starts_with("Not testable: server does not list the diagnostic tool"))),
        "server-stateless: {failed:#?}"
    );
}

#[test]
fn inspector_cli_lists_and_calls() {
    let Some(peers) = Peers::find() else { return };
    let (_dir, root) = project();
    let cli = peers.module("@modelcontextprotocol/inspector/cli/build/cli.js");
    let inspect = |args: &[&str]| {
        let mut cmd = Command::new(peers.node());
        cmd.arg(&cli).arg("--cli").arg(toolbelt()).arg("mcp").args(args);
        let out = hermetic::isolate(cmd.current_dir(&root), &root.join("home")).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let listed = inspect(&["--method", "tools/list"]);
    assert!(listed["tools"].as_array().unwrap().iter().any(|t| t["name"] == "TodoWrite"));
    let called = inspect(&["--method", "tools/call", "--tool-name", "Read", "--tool-arg", "file_path=hello.txt"]);
    assert_eq!(called["content"][0]["text"], "     1\thello from the workspace");
    assert_eq!(called["isError"], false);
}

#[test]
fn the_python_client_answers_questions_and_plans_through_elicitation() {
    let Some(peers) = Peers::find() else { return };
    for http in [false, true] {
        let (_dir, root) = project();
        let server = http.then(|| HttpServer::start(&root));
        let mut cmd = Command::new(peers.python());
        match &server {
            Some(server) => cmd.arg(script("ask_client.py")).arg("http").arg(&server.url).arg(&root),
            None => cmd.arg(script("ask_client.py")).arg("stdio").arg(toolbelt()).arg(&root),
        };
        asked_and_planned(&run(cmd, &root, ""), &root);
    }
}

/// What the Python client saw answering and declining questions and approving a plan.
fn asked_and_planned(seen: &Value, root: &Path) {
    // Declined: said so, nothing invented.
    assert_eq!(seen["declined"][0], true, "{seen}");
    assert!(seen["declined"][1].as_str().unwrap().contains("declined"), "{seen}");
    // Answered: Claude Code's sentence, the structured answer, the client's own words kept.
    assert_eq!(seen["answered"][0], false, "{seen}");
    assert_eq!(
        seen["answered"][1],
        "User has answered your questions: \"Which database should the service use?\"=\"SQLite, version 3.45\". \
         You can now continue with the user's answers in mind.",
        "{seen}"
    );
    assert_eq!(seen["answered"][2]["answers"][0]["selected"], json!(["SQLite"]), "{seen}");
    // One field per question, and one for an answer of one's own.
    assert_eq!(seen["forms"][0]["fields"], json!(["q1", "q1_other"]), "{seen}");
    // Brief reached the client as a log message.
    assert_eq!(seen["brief"][0], false, "{seen}");
    assert!(seen["logs"].to_string().contains("Halfway there."), "{seen}");
    // Plan mode: the write refused, then the plan approved with "accept edits" and the write
    // runs without a permission prompt.
    assert_eq!(seen["enter"][0], false, "{seen}");
    assert_eq!(seen["write_in_plan"][0], true, "{seen}");
    assert!(seen["write_in_plan"][1].as_str().unwrap().contains("ExitPlanMode"), "{seen}");
    assert_eq!(seen["exit"][0], false, "{seen}");
    assert_eq!(seen["write_after"][0], false, "{seen}");
    assert_eq!(std::fs::read_to_string(root.join("plan.txt")).unwrap(), "x\n");
    let prompts = seen["forms"].as_array().unwrap().iter().filter(|f| f["fields"] == json!(["decision"])).count();
    assert_eq!(prompts, 0, "acceptEdits needs no prompt for an edit inside the workspace: {seen}");
}

#[test]
fn the_first_call_waits_for_the_clients_roots_and_always_goes_to_their_project() {
    let Some(peers) = Peers::find() else { return };
    // The server starts in one project; the client's root is another.
    let (_dir, server_dir) = project();
    std::fs::write(server_dir.join("hello.txt"), "hello from the server's directory\n").unwrap();
    let other = tempfile::tempdir().unwrap();
    let client_root = other.path().canonicalize().unwrap();
    std::fs::create_dir_all(client_root.join(".git")).unwrap();
    std::fs::write(client_root.join("hello.txt"), "hello from the client's root\n").unwrap();
    let mut cmd = Command::new(peers.python());
    cmd.arg(script("roots_client.py")).arg(toolbelt()).arg(&client_root);
    let seen = run(cmd, &server_dir, "");
    // The very first call resolved its path in the client's root, though the answer to
    // roots/list came half a second after the call.
    assert_eq!(seen["read"], json!([false, "     1\thello from the client's root"]), "{seen}");
    // "Always allow": the file written in the client's root, the rule saved in the user's
    // grants for that project (relative to it), and not asked again.
    assert_eq!(seen["write"][0], false, "{seen}");
    assert_eq!(seen["asked"].as_array().unwrap().len(), 1, "{seen}");
    assert_eq!(seen["again"][0], false, "{seen}");
    assert_eq!(std::fs::read_to_string(client_root.join("new.txt")).unwrap(), "again\n");
    let projects = server_dir.join("home/.local/state/toolbelt/projects");
    let name = client_root.file_name().unwrap().to_string_lossy().replace('.', "_");
    let grants: Vec<PathBuf> = std::fs::read_dir(&projects)
        .unwrap()
        .map(|e| e.unwrap().path().join("grants.toml"))
        .filter(|g| g.exists())
        .collect();
    assert_eq!(grants.len(), 1, "{grants:?}");
    assert!(grants[0].parent().unwrap().file_name().unwrap().to_string_lossy().starts_with(&name), "{grants:?}");
    let text = std::fs::read_to_string(&grants[0]).unwrap();
    assert!(text.contains("\"Edit(./new.txt)\""), "{text}");
    assert!(!server_dir.join("new.txt").exists());
    assert!(!client_root.join(".toolbelt/config.local.toml").exists());
}
