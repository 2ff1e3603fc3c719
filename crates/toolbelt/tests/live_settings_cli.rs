//! Settings changed while `toolbelt mcp` serves, through the real binary and a client on its
//! stdio: a tool added to the settings reaches the client after
//! `notifications/tools/list_changed` and runs, a removed one goes; an invalid edit is
//! reported and changes nothing; a hook added applies to the next call; a plugin enabled by
//! another process brings its MCP server's tools; `[tools] disabled` applies live.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::json;

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/stdio_mcp.rs"]
mod stdio_mcp;

use stdio_mcp::StdioMcp;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join(".test-home/.config/toolbelt")).unwrap();
    (dir, root)
}

fn config(root: &Path) -> PathBuf {
    root.join(".test-home/.config/toolbelt/config.toml")
}

/// Writes the file whole, as an editor's save does (a new file renamed over the old).
fn save(path: &Path, text: &str) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn server(root: &Path) -> StdioMcp {
    let mut cmd = hermetic::toolbelt(root);
    cmd.arg("mcp");
    StdioMcp::start(cmd)
}

const FIRST: &str = "[tools.command.first]\ndescription = \"First\"\ncommand = \"echo\"\nargs = [\"one\"]\n";
const SECOND: &str = "[tools.command.second]\ndescription = \"Second\"\ncommand = \"echo\"\nargs = [\"two {x}\"]\n";

#[test]
fn a_tool_added_to_the_settings_reaches_the_client_after_list_changed() {
    let (_dir, root) = project();
    save(&config(&root), FIRST);
    let mut server = server(&root);
    let tools = server.tools();
    assert!(tools.contains(&"first".to_string()) && !tools.contains(&"second".to_string()), "{tools:?}");

    save(&config(&root), SECOND);
    server.notification("notifications/tools/list_changed");
    let tools = server.tools();
    assert!(tools.contains(&"second".to_string()) && !tools.contains(&"first".to_string()), "{tools:?}");
    let called = server.call("second", json!({"x": "live"}));
    assert!(called.to_string().contains("two live"), "{called}");

    // An invalid edit changes nothing; a valid one after it applies.
    save(&config(&root), "[tools.command.third\ndescription = ");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(server.tools().contains(&"second".to_string()));
    let called = server.call("second", json!({"x": "still"}));
    assert!(called.to_string().contains("two still"), "{called}");
    // So does a definition made invalid: the tool stays as it was.
    save(&config(&root), "[tools.command.second]\ndescription = \"Second\"\ncommand = \"echo two words\"\n");
    std::thread::sleep(Duration::from_millis(2500));
    let called = server.call("second", json!({"x": "kept"}));
    assert!(called.to_string().contains("two kept"), "{called}");
    save(&config(&root), &format!("{SECOND}\n[tools]\ndisabled = [\"second\"]\n"));
    server.notification("notifications/tools/list_changed");
    assert!(!server.tools().contains(&"second".to_string()));
}

#[test]
fn a_hook_added_applies_to_the_next_call() {
    let (_dir, root) = project();
    // The rules are read at start (they apply from the next one); the hooks live.
    save(&config(&root), "[permissions]\nallow = [\"Write\"]\n");
    let mut server = server(&root);
    let log = root.join("hook.log");
    let hook = format!(
        "[permissions]\nallow = [\"Write\"]\n[[hooks.PostToolUse]]\nmatcher = \"Write\"\nhooks = [{{ type = \"command\", command = \"cat >> {}\" }}]\n",
        log.display()
    );
    save(&config(&root), &hook);
    // No tool changed, so no notification: wait for the next look at the files.
    std::thread::sleep(Duration::from_millis(2500));
    let called = server.call("Write", json!({"file_path": "a.txt", "content": "x"}));
    assert_eq!(called["result"]["isError"], false, "{called}");
    let said = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(said.contains("PostToolUse"), "the hook did not run: {said:?}");
}

#[test]
fn a_plugin_enabled_by_another_process_brings_its_server() {
    let (_dir, root) = project();
    let plugin = root.join(".test-home/.config/toolbelt/plugins/minikit");
    std::fs::create_dir_all(plugin.join(".claude-plugin")).unwrap();
    std::fs::write(plugin.join(".claude-plugin/plugin.json"), r#"{"name": "minikit"}"#).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/mini_server.py");
    let config_json = json!({"name": "mini", "tools": [{"name": "ping"}]});
    let servers = json!({"mcpServers": {"mini": {"command": "python3", "args": [script, config_json.to_string()]}}});
    std::fs::write(plugin.join(".mcp.json"), servers.to_string()).unwrap();
    let mut server = server(&root);
    assert!(!server.tools().iter().any(|t| t.starts_with("mcp__mini")));
    let out = hermetic::toolbelt(&root).args(["plugin", "enable", "minikit"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    server.notification("notifications/tools/list_changed");
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.tools().contains(&"mcp__mini__ping".to_string()) {
        assert!(Instant::now() < deadline, "the plugin's server's tool never came");
        server.notification("notifications/tools/list_changed");
    }
}
