//! Plugins through the real binary: a Claude Code plugin folder (`.claude-plugin/plugin.json`
//! with a skill, a command, an agent definition, a hook and an `.mcp.json` server) added with
//! `toolbelt plugin add`, every part of it working; nothing of it applying once disabled; a
//! toolbelt plugin (`toolbelt-plugin.toml`) whose tools are named `PLUGIN__tool` where they
//! would clash and never replace a built-in; a project's plugin waiting for trust; a plugin's
//! mistakes named without stopping anything.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};

#[path = "common/hermetic.rs"]
mod hermetic;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".test-home/.config/toolbelt")).unwrap();
    (dir, root)
}

fn run(root: &Path, args: &[&str]) -> (String, String, Option<i32>) {
    let out = hermetic::toolbelt(root).args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A plugin in Claude Code's layout at `dir`.
fn claude_plugin(dir: &Path) {
    write(
        &dir.join(".claude-plugin/plugin.json"),
        r#"{"name": "reviewkit", "version": "1.2.0", "description": "Review helpers"}"#,
    );
    write(
        &dir.join("skills/review/SKILL.md"),
        "---\nname: review\ndescription: Review the change\n---\nRead the diff, then review it.\n",
    );
    write(&dir.join("commands/hello.md"), "---\ndescription: Say hello\n---\nSay hello to $ARGUMENTS.\n");
    write(
        &dir.join("agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews code changes\ntools: Read, Grep\n---\nYou review code.\n",
    );
    write(
        &dir.join("hooks/hooks.json"),
        r#"{"description": "log writes", "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/log.sh"}]}]}}"#,
    );
    write(&dir.join("scripts/log.sh"), "#!/bin/sh\ncat >> \"$HOME/hook.log\"\necho >> \"$HOME/hook.log\"\n");
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(dir.join("scripts/log.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mini_server.py");
    let config = json!({"name": "mini", "tools": [{"name": "ping", "annotations": {"readOnlyHint": true}}]});
    let servers = json!({"mcpServers": {"mini": {"command": "python3", "args": [script, config.to_string()]}}});
    write(&dir.join(".mcp.json"), &servers.to_string());
}

#[test]
fn a_claude_code_plugin_s_skill_command_agent_hook_and_server_all_work() {
    let (dir, root) = project();
    let source = dir.path().join("reviewkit-src");
    claude_plugin(&source);
    let (out, err, code) = run(&root, &["plugin", "add", source.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("Added `reviewkit`") && out.contains("enabled it"), "{out}");
    let (out, _, _) = run(&root, &["plugin", "list"]);
    assert!(out.contains("reviewkit 1.2.0 (user): enabled"), "{out}");
    assert!(out.contains("hooks, 1 MCP server(s), skills, commands, agents"), "{out}");

    // The skill and the command are skills; the agent definition is listed.
    let (out, _, _) = run(&root, &["skills"]);
    assert!(out.contains("review ") && out.contains("hello "), "{out}");
    let (out, _, _) = run(&root, &["call", "Skill", r#"{"skill": "hello", "args": "Ada"}"#]);
    assert!(out.contains("Say hello to Ada."), "{out}");
    let (out, _, _) = run(&root, &["agents"]);
    assert!(out.contains("reviewer") && out.contains("reviewkit"), "{out}");
    // The agent definition runs: its prompt and its tools, on a loopback model.
    let model = ScriptedServer::openai([Turn::text("Looks fine.")]).unwrap();
    let out = hermetic::toolbelt(&root)
        .envs(model.env())
        .args(["call", "--json", "Agent", r#"{"prompt": "Review a.txt", "subagent_type": "reviewer"}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["structured"]["agent_type"], "reviewer", "{result}");
    let first = &model.requests()[0].body;
    assert!(first.to_string().contains("You review code."), "{first}");
    let mut tools: Vec<&str> =
        first["tools"].as_array().unwrap().iter().map(|t| t["function"]["name"].as_str().unwrap()).collect();
    tools.sort_unstable();
    assert_eq!(tools, ["Grep", "Read"], "{first}");

    // The hook runs, with the plugin's folder for ${CLAUDE_PLUGIN_ROOT}.
    let (out, err, code) =
        run(&root, &["--allow", "Write", "call", "Write", r#"{"file_path": "a.txt", "content": "x"}"#]);
    assert_eq!(code, Some(0), "{out}{err}");
    let log = std::fs::read_to_string(root.join(".test-home/hook.log")).unwrap_or_default();
    let event: Value = serde_json::from_str(log.lines().next().unwrap_or("{}")).unwrap();
    assert_eq!(event["hook_event_name"], "PostToolUse", "{log}");
    assert_eq!(event["tool_input"]["file_path"], "a.txt", "{log}");

    // The server's tool is there and answers.
    let (out, err, code) = run(&root, &["--allow", "mcp__mini__ping", "call", "mcp__mini__ping", "{}"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains(r#""server": "mini""#), "{out}");

    // Disabled, nothing of it applies; enabled again, it is back.
    let (out, err, code) = run(&root, &["plugin", "disable", "reviewkit"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(!names.contains("mcp__mini__ping"), "{names}");
    let (out, _, _) = run(&root, &["skills"]);
    assert!(!out.contains("hello "), "{out}");
    std::fs::remove_file(root.join(".test-home/hook.log")).unwrap();
    run(&root, &["--allow", "Write", "call", "Write", r#"{"file_path": "b.txt", "content": "x"}"#]);
    assert!(!root.join(".test-home/hook.log").exists(), "a disabled plugin's hook ran");
    run(&root, &["plugin", "enable", "reviewkit"]);
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(names.contains("mcp__mini__ping"), "{names}");

    // Removed, it is gone.
    let (out, err, code) = run(&root, &["plugin", "remove", "reviewkit"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(!root.join(".test-home/.config/toolbelt/plugins/reviewkit").exists());
    let (out, _, _) = run(&root, &["plugin", "list"]);
    assert!(out.contains("No plugins"), "{out}");
}

const TOOLBELT_PLUGIN: &str = r#"
name = "deploykit"
version = "0.3.0"
description = "Deploy tools"

[tools.command.Read]
description = "Reads the deploy log"
command = "cat"
args = ["${TOOLBELT_PLUGIN_ROOT}/deploy.log"]

[tools.command.status]
description = "Deploy status"
command = "echo"
args = ["deployed"]

[permissions]
allow = ["Bash"]
"#;

#[test]
fn a_plugin_s_tools_are_renamed_where_they_would_clash_and_never_widen_the_policy() {
    let (_dir, root) = project();
    let plugin = root.join(".test-home/.config/toolbelt/plugins/deploykit");
    write(&plugin.join("toolbelt-plugin.toml"), TOOLBELT_PLUGIN);
    write(&plugin.join("deploy.log"), "all good\n");
    // The user's own `status` takes the name first.
    write(
        &root.join(".test-home/.config/toolbelt/config.toml"),
        "[tools.command.status]\ndescription = \"Mine\"\ncommand = \"echo\"\nargs = [\"mine\"]\n",
    );
    // Not enabled: nothing of it is there.
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(!names.contains("deploykit__"), "{names}");
    run(&root, &["plugin", "enable", "deploykit"]);
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(
        names.lines().any(|l| l == "deploykit__Read") && names.lines().any(|l| l == "deploykit__status"),
        "{names}"
    );
    let (out, _, _) = run(&root, &["call", "Read", r#"{"file_path": "nothing-here"}"#]);
    assert!(!out.contains("all good"), "the built-in Read is still Read: {out}");
    let (out, err, code) = run(&root, &["call", "deploykit__Read", "{}"]);
    assert_eq!(code, Some(0), "{out}{err}");
    assert!(out.contains("all good"), "{out}");
    let (out, _, _) = run(&root, &["call", "status", "{}"]);
    assert!(out.contains("mine"), "{out}");
    // Its `permissions` table is left out, and said to be.
    let (out, err, code) = run(&root, &["call", "Bash", r#"{"command": "touch x"}"#]);
    assert_ne!(code, Some(0), "{out}{err}");
    assert!(!root.join("x").exists());
    let (out, _, code) = run(&root, &["config", "check"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("toolbelt-plugin.toml:") && out.contains("a plugin bundles tools, hooks"), "{out}");
}

#[test]
fn a_project_s_plugin_waits_for_trust() {
    let (dir, root) = project();
    claude_plugin(&root.join(".toolbelt/plugins/reviewkit"));
    write(&root.join(".toolbelt/config.toml"), "[plugins]\nenabled = [\"reviewkit\"]\n");
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(!names.contains("mcp__mini__ping"), "an untrusted project's plugin applied: {names}");
    // The user enabling it by name does not make the project's files apply either.
    let _ = dir;
    run(&root, &["plugin", "enable", "reviewkit"]);
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(!names.contains("mcp__mini__ping"), "{names}");
    let (out, _, _) = run(&root, &["plugin", "list"]);
    assert!(out.contains("reviewkit 1.2.0 (project): waits for the project's trust"), "{out}");
    let (out, err, code) = run(&root, &["trust"]);
    assert_eq!(code, Some(0), "{out}{err}");
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(names.contains("mcp__mini__ping"), "{names}");
    // A change to the plugin's files is a change to what was trusted.
    let hooks = root.join(".toolbelt/plugins/reviewkit/hooks/hooks.json");
    write(
        &hooks,
        r#"{"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [{"type": "command", "command": "touch /tmp/never"}]}]}}"#,
    );
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(!names.contains("mcp__mini__ping"), "a changed plugin kept the old trust: {names}");
}

#[test]
fn a_claude_code_manifest_s_own_component_paths_are_read_and_kept_inside_the_plugin() {
    let (_dir, root) = project();
    let plugin = root.join(".test-home/.config/toolbelt/plugins/custom");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mini_server.py");
    let config = json!({"name": "inline", "tools": [{"name": "pong"}]});
    let manifest = json!({
        "name": "custom",
        "commands": ["./extra/deploy.md"],
        "agents": "./team/",
        "hooks": "./config/hooks.json",
        "mcpServers": {"inline": {"command": "python3", "args": [script, config.to_string()]}},
    });
    write(&plugin.join(".claude-plugin/plugin.json"), &manifest.to_string());
    write(&plugin.join("extra/deploy.md"), "---\ndescription: Deploy it\n---\nDeploy $ARGUMENTS.\n");
    write(&plugin.join("team/auditor.md"), "---\nname: auditor\ndescription: Audits\n---\nYou audit.\n");
    write(
        &plugin.join("config/hooks.json"),
        &json!({"hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "cat >> \"$HOME/custom-hook.log\""}]}]}}).to_string(),
    );
    write(&root.join(".test-home/.config/toolbelt/config.toml"), "[plugins]\nenabled = [\"custom\"]\n");
    let (out, _, _) = run(&root, &["skills"]);
    assert!(out.contains("deploy "), "{out}");
    let (out, _, _) = run(&root, &["agents"]);
    assert!(out.contains("auditor"), "{out}");
    let (names, _, _) = run(&root, &["tools", "--format", "names"]);
    assert!(names.contains("mcp__inline__pong"), "{names}");
    run(&root, &["--allow", "Write", "call", "Write", r#"{"file_path": "c.txt", "content": "x"}"#]);
    assert!(root.join(".test-home/custom-hook.log").exists(), "the manifest's hooks file did not run");

    // A path leading out of the plugin's folder is refused, and said to be.
    let climbing = json!({"name": "custom", "agents": "../../../../elsewhere/"});
    write(&plugin.join(".claude-plugin/plugin.json"), &climbing.to_string());
    let (out, _, _) = run(&root, &["plugin", "list"]);
    assert!(out.contains("outside the plugin's folder"), "{out}");
}
