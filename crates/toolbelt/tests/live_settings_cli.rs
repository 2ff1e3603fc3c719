//! Settings changed while `toolbelt mcp` serves, through the real binary and a client on its
//! stdio: a tool added to the settings reaches the client after
//! `notifications/tools/list_changed` and runs, a removed one goes; an invalid edit is
//! reported and changes nothing; a hook added applies to the next call; a plugin enabled by
//! another process brings its MCP server's tools; `[tools] disabled` applies live.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

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

struct Server {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<Value>,
    next: u64,
}

impl Server {
    fn start(root: &Path) -> Server {
        let mut child = hermetic::toolbelt(root)
            .arg("mcp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { return };
                if let Ok(message) = serde_json::from_str::<Value>(&line)
                    && tx.send(message).is_err()
                {
                    return;
                }
            }
        });
        let mut server = Server { child, stdin, lines, next: 1 };
        server.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        writeln!(server.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
        server
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next;
        self.next += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        self.stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let message = self.lines.recv_timeout(deadline - Instant::now()).expect("an answer");
            if message["id"] == id {
                return message;
            }
        }
    }

    /// Waits for `notifications/tools/list_changed` (at most 20 s).
    fn list_changed(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(message) if message["method"] == "notifications/tools/list_changed" => return,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => {
                    panic!("no notifications/tools/list_changed")
                }
            }
        }
    }

    fn tools(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap().to_string()).collect()
    }

    fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const FIRST: &str = "[tools.command.first]\ndescription = \"First\"\ncommand = \"echo\"\nargs = [\"one\"]\n";
const SECOND: &str = "[tools.command.second]\ndescription = \"Second\"\ncommand = \"echo\"\nargs = [\"two {x}\"]\n";

#[test]
fn a_tool_added_to_the_settings_reaches_the_client_after_list_changed() {
    let (_dir, root) = project();
    save(&config(&root), FIRST);
    let mut server = Server::start(&root);
    let tools = server.tools();
    assert!(tools.contains(&"first".to_string()) && !tools.contains(&"second".to_string()), "{tools:?}");

    save(&config(&root), SECOND);
    server.list_changed();
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
    server.list_changed();
    assert!(!server.tools().contains(&"second".to_string()));
}

#[test]
fn a_hook_added_applies_to_the_next_call() {
    let (_dir, root) = project();
    // The rules are read at start (they apply from the next one); the hooks live.
    save(&config(&root), "[permissions]\nallow = [\"Write\"]\n");
    let mut server = Server::start(&root);
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
    let mut server = Server::start(&root);
    assert!(!server.tools().iter().any(|t| t.starts_with("mcp__mini")));
    let out = hermetic::toolbelt(&root).args(["plugin", "enable", "minikit"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    server.list_changed();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !server.tools().contains(&"mcp__mini__ping".to_string()) {
        assert!(Instant::now() < deadline, "the plugin's server's tool never came");
        server.list_changed();
    }
}
