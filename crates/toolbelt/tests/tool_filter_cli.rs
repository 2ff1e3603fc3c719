//! `[tools] enabled` / `disabled` and `--tools` / `--disable-tool` through the real binary:
//! a tool left out is absent from `toolbelt tools`, every export and MCP `tools/list`, a call
//! by its name says which setting left it out, `toolbelt tools --all` lists why; a word names
//! a tool, an alias, a category or a tag; a project's filter applies untrusted (it only takes
//! tools away) and nothing brings back a tool a deny rule hid.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.md"), "hello\n").unwrap();
    (dir, root)
}

fn names(root: &Path, args: &[&str]) -> Vec<String> {
    let out = hermetic::toolbelt(root).args(args).args(["tools", "--format", "names"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(str::to_string).collect()
}

fn stdout(root: &Path, args: &[&str]) -> (String, String, Option<i32>) {
    let out = hermetic::toolbelt(root).args(args).output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        out.status.code(),
    )
}

#[test]
fn flags_choose_tools_by_name_alias_category_or_tag() {
    let (_dir, root) = project();
    assert_eq!(names(&root, &["--tools", "Read,grep"]), ["Grep", "Read"]);
    // `Read` is the Read tool, not every tool tagged `read`; `web` is a category.
    let web = names(&root, &["--tools", "web"]);
    assert!(web.contains(&"WebFetch".to_string()) && web.contains(&"WebSearch".to_string()), "{web:?}");
    assert!(!web.contains(&"Read".to_string()), "{web:?}");
    // An alias names its tool; a category takes its whole family away.
    let all = names(&root, &[]);
    let without = names(&root, &["--disable-tool", "exec", "--disable-tool", "planning"]);
    assert!(all.contains(&"Bash".to_string()) && !without.contains(&"Bash".to_string()));
    assert!(!without.contains(&"TodoWrite".to_string()) && !without.contains(&"CronCreate".to_string()));
    assert!(without.contains(&"Monitor".to_string()), "{without:?}");

    // A call by its name says which setting left it out.
    let (_, err, code) = stdout(&root, &["--disable-tool", "exec", "call", "Bash", r#"{"command":"ls"}"#]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("disabled by tools.disabled `exec` (flag --disable-tool)"), "{err}");
    let (_, err, _) = stdout(&root, &["--tools", "Read", "call", "Grep", r#"{"pattern":"hello"}"#]);
    assert!(err.contains("not among tools.enabled (flag --tools): Read"), "{err}");
    // Every export leaves it out.
    for format in ["openai", "anthropic", "mcp", "json"] {
        let (out, _, _) = stdout(&root, &["--tools", "Read", "tools", "--format", format]);
        let tools: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(tools.as_array().unwrap().len(), 1, "{format}: {out}");
    }
}

#[test]
fn the_table_counts_what_was_left_out_and_all_says_why() {
    let (_dir, root) = project();
    let (table, _, _) = stdout(&root, &["--tools", "Read,Grep", "tools"]);
    assert!(table.contains("more left out by tools.enabled / tools.disabled (`toolbelt tools --all`"), "{table}");
    assert!(!table.contains("Bash:"), "{table}");
    let (all, _, _) = stdout(&root, &["--tools", "Read,Grep", "tools", "--all"]);
    assert!(all.contains("  Bash: not among tools.enabled (flag --tools): Read, Grep"), "{all}");
}

#[test]
fn settings_layers_add_up_and_a_project_s_filter_applies_untrusted() {
    let (_dir, root) = project();
    let user = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("config.toml"), "[tools]\ndisabled = [\"web\"]\n").unwrap();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(root.join(".toolbelt/config.toml"), "[tools]\nenabled = [\"Read\", \"WebFetch\", \"Bash\"]\n")
        .unwrap();
    // The project is not trusted: a filter only takes tools away, so it applies; the user's
    // `disabled` still holds for WebFetch.
    assert_eq!(names(&root, &[]), ["Bash", "Read"]);
    let (_, err, _) = stdout(&root, &["call", "WebFetch", r#"{"url":"https://example.com","prompt":"x"}"#]);
    assert!(err.contains("disabled by tools.disabled `web`") && err.contains("config.toml"), "{err}");
    // The flag's list is the most specific layer's.
    assert_eq!(names(&root, &["--tools", "Grep,Read"]), ["Grep", "Read"]);
    // Nothing brings back a tool a bare deny rule hid.
    assert_eq!(names(&root, &["--deny", "Bash"]), ["Read"]);
}

#[test]
fn an_mcp_client_never_sees_a_tool_left_out() {
    let (_dir, root) = project();
    let mut child = hermetic::toolbelt(&root)
        .args(["--disable-tool", "shell", "mcp"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut request = |id: u64, method: &str, params: Value| -> Value {
        writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).unwrap();
        stdin.flush().unwrap();
        loop {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the server closed stdout");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message;
            }
        }
    };
    request(
        1,
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    let listed = request(2, "tools/list", json!({}));
    let tools: Vec<&str> =
        listed["result"]["tools"].as_array().unwrap().iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert!(tools.contains(&"Read") && !tools.contains(&"Bash") && !tools.contains(&"Monitor"), "{tools:?}");
    // As for an unknown tool, a protocol error, which says why.
    let called = request(3, "tools/call", json!({"name": "Bash", "arguments": {"command": "echo hi"}}));
    let message = called["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("disabled by tools.disabled `shell` (flag --disable-tool)"), "{called}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn config_check_names_a_word_that_names_nothing_with_file_and_line() {
    let (_dir, root) = project();
    std::fs::create_dir_all(root.join(".toolbelt")).unwrap();
    std::fs::write(root.join(".toolbelt/config.toml"), "[tools]\ndisabled = [\"web\", \"Bassh\"]\n").unwrap();
    let (out, err, code) = stdout(&root, &["config", "check"]);
    assert_eq!(code, Some(0), "a warning, not an error: {out}{err}");
    let warning = out.lines().find(|l| l.contains("Bassh")).unwrap_or_else(|| panic!("{out}"));
    assert!(warning.starts_with("warning: "), "{warning}");
    assert!(warning.contains(".toolbelt/config.toml:2"), "{warning}");
    assert!(warning.contains("names no tool, alias, category or tag here; did you mean `Bash`?"), "{warning}");
    assert!(!out.contains("`web` names no tool"), "{out}");
}
