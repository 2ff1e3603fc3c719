//! Time limits through the real binary: each has one owner. A tool whose limit is a setting of
//! its own (`lint.timeout`, `web.timeout`, `agent.time_budget`, an MCP server's `timeout`) is
//! given that limit even past `runtime.max_timeout`, which bounds only the defaults; a setting
//! that could never take effect is an error `config check` names.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};
use toolbelt_tools::web::testing::{Reply, Server};

#[path = "common/hermetic.rs"]
mod hermetic;

/// The runtime's cap for every run here, in seconds: each slow thing below takes longer.
const CAP: &str = "2";

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// Writes the user's own settings (no trust needed).
fn user_settings(root: &Path, toml: &str) {
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), toml).unwrap();
}

fn run(root: &Path, env: &[(String, String)], args: &[&str]) -> (i32, String, String) {
    let out = hermetic::toolbelt(root).envs(env.iter().cloned()).arg("--max-timeout").arg(CAP).args(args).output();
    let out = out.unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

#[test]
fn lint_timeout_past_the_runtime_cap_is_honoured() {
    let (_dir, root) = project();
    std::fs::write(root.join("notes.md"), "# Notes\n").unwrap();
    user_settings(
        &root,
        "[lint]\ntimeout = 30\n\n[lint.linters.slow]\n\
         command = \"sleep 3; printf 'notes.md:1:1: warning: slow but sure\\\\n'\"\nformat = \"lines\"\n",
    );
    let (code, out, err) = run(&root, &[], &["call", "Lint", r#"{"linter": "slow"}"#, "--allow", "Lint"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("slow but sure"), "the linter ran its 3 s under a 2 s cap: {out}");

    // A linter past `lint.timeout` is stopped by it, and the advice names it.
    user_settings(&root, "[lint]\ntimeout = 1\n\n[lint.linters.slow]\ncommand = \"sleep 5\"\nformat = \"lines\"\n");
    let (_, out, err) = run(&root, &[], &["call", "Lint", r#"{"linter": "slow"}"#, "--allow", "Lint"]);
    assert!(out.contains("stopped after 1 s") && out.contains("raise `lint.timeout`"), "{out}{err}");
}

#[test]
fn web_timeout_past_the_runtime_cap_is_honoured() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime
        .block_on(Server::start(|_| {
            Reply::ok("text/plain", "a slow page, read in the end").after(Duration::from_secs(3))
        }))
        .unwrap();
    let (_dir, root) = project();
    user_settings(&root, "[web]\ntimeout = 30\nallowed_private_hosts = [\"localhost\"]\n");
    let input = json!({"url": format!("http://localhost:{}/slow", server.port())}).to_string();
    let (code, out, err) = run(&root, &[], &["call", "WebFetch", &input, "--allow", "WebFetch"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("a slow page, read in the end"), "{out}");
}

#[test]
fn a_foreground_agent_runs_on_its_budget_not_the_runtime_cap() {
    let (_dir, root) = project();
    let server = ScriptedServer::openai([
        Turn::tool_call("b1", "Bash", json!({"command": "sleep 1.5"})),
        Turn::tool_call("b2", "Bash", json!({"command": "sleep 1.5"})),
        Turn::text("Both waits are done."),
    ])
    .unwrap();
    let input = r#"{"prompt": "Wait twice.", "description": "wait twice"}"#;
    let (code, out, err) = run(&root, &server.env(), &["call", "Agent", input, "--allow", "Bash", "--json"]);
    assert_eq!(code, 0, "{out}{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["structured"]["status"], "completed", "{out}");
    assert!(out.contains("Both waits are done."), "{out}");
}

#[test]
fn an_mcp_server_s_timeout_past_the_runtime_cap_is_honoured() {
    let (_dir, root) = project();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mini_server.py");
    let config = json!({"name": "slow", "tools": [{"name": "ponder", "sleep": 3}]}).to_string();
    let args = toml_edit::Value::from_iter([script.display().to_string(), config]);
    user_settings(&root, &format!("[mcp.servers.slow]\ncommand = \"python3\"\nargs = {args}\ntimeout = 30\n"));
    let (code, out, err) = run(&root, &[], &["call", "mcp__slow__ponder", "{}", "--allow", "mcp__slow__ponder"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"tool\": \"ponder\"") || out.contains("\"tool\":\"ponder\""), "{out}");

    // Past the server's own `timeout`, the call says which setting binds.
    user_settings(&root, &format!("[mcp.servers.slow]\ncommand = \"python3\"\nargs = {args}\ntimeout = 1\n"));
    let (_, out, err) = run(&root, &[], &["call", "mcp__slow__ponder", "{}", "--allow", "mcp__slow__ponder"]);
    assert!(format!("{out}{err}").contains("the limit is the `timeout` of the MCP server `slow`"), "{out}{err}");
}

#[test]
fn a_default_timeout_above_the_cap_is_an_error_config_check_names() {
    let (_dir, root) = project();
    user_settings(&root, "[runtime]\ndefault_timeout = 900\nmax_timeout = 600\n");
    let out = hermetic::toolbelt(&root).args(["config", "check"]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("runtime.default_timeout (900 s) is above runtime.max_timeout (600 s)"), "{said}");
    assert!(said.contains("config.toml:2"), "with its file and line: {said}");
    // The built-in default follows a lower cap without a word.
    user_settings(&root, "[runtime]\nmax_timeout = 60\n");
    let out = hermetic::toolbelt(&root).args(["config", "check"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_command_cut_at_the_cap_names_the_cap_not_its_timeout() {
    let (_dir, root) = project();
    let (_, out, err) =
        run(&root, &[], &["call", "Bash", r#"{"command": "sleep 5", "timeout": 600000}"#, "--allow", "Bash"]);
    assert!(out.contains("Timed out after 2 s") && out.contains("`runtime.max_timeout`"), "{out}{err}");
    assert!(!out.contains("Retry with a larger timeout"), "a larger timeout would not help: {out}");
}
