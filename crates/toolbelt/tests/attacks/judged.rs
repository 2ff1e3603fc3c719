//! What was judged is what runs. A call is judged (what it touches, from its input, the
//! working directory and the settings) before it runs; an earlier call of the same batch or
//! MCP session that moves the working directory must not make it touch something else than
//! what was judged. It once did: `cd .git` (a read-only command, allowed) and then `Write
//! hooks/pre-commit` was judged as a plain edit of `./hooks/pre-commit` — allowed in
//! `acceptEdits` — and wrote `.git/hooks/pre-commit`, a protected path that asks in every mode.

use std::io::{BufRead as _, Write as _};

use serde_json::{Value, json};

use super::World;

#[test]
fn a_cd_before_a_relative_write_does_not_move_the_write_into_git() {
    let w = World::with_git();
    let hook = w.root.join(".git/hooks/pre-commit");
    let results = w.batch(
        &[
            json!({"name": "Bash", "input": {"command": "cd .git"}}),
            json!({"name": "Write", "input": {"file_path": "hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"}}),
            json!({"name": "ApplyPatch", "input": {"input": "*** Begin Patch\n*** Add File: hooks/post-checkout\n+#!/bin/sh\n*** End Patch"}}),
        ],
        &["--mode", "acceptEdits"],
    );
    assert_eq!(results[0]["is_error"], false, "{}", results[0]);
    let text = results[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("changed after this call was judged"), "{text}");
    assert_eq!(results[0]["structured"]["cwd"], w.root.join(".git").display().to_string(), "{}", results[0]);
    for result in &results[1..] {
        assert_eq!(result["is_error"], true, "{results:#?}");
        // Judged again where it would run (or, planned after the cd, judged there at once):
        // the protected path asks, and nobody can answer.
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("changed after this call was judged") || text.contains("protected path"), "{text}");
    }
    assert!(!hook.exists(), "the write reached .git/hooks");
    assert!(!w.root.join(".git/hooks/post-checkout").exists(), "the patch reached .git/hooks");
    assert!(!w.root.join("hooks").exists(), "nothing is written where it was judged either");
}

#[test]
fn a_command_after_a_cd_still_runs_where_the_cd_left_it() {
    let w = World::new();
    std::fs::create_dir_all(w.root.join("sub")).unwrap();
    let results = w.batch(
        &[
            json!({"name": "Bash", "input": {"command": "cd sub"}}),
            json!({"name": "Bash", "input": {"command": "pwd"}}),
            json!({"name": "Write", "input": {"file_path": w.root.join("sub/b.txt"), "content": "b"}}),
        ],
        // One at a time: two read-only commands may otherwise run side by side.
        &["--mode", "acceptEdits", "--concurrency", "1"],
    );
    let sub = w.root.join("sub").display().to_string();
    assert_eq!(results[1]["content"][0]["text"].as_str().unwrap().trim(), sub, "{}", results[1]);
    // An absolute path touches the same wherever the session is: judged once, it runs.
    assert_eq!(results[2]["is_error"], false, "{}", results[2]);
    assert_eq!(std::fs::read_to_string(w.root.join("sub/b.txt")).unwrap(), "b");
}

#[test]
fn over_mcp_a_write_judged_while_a_cd_ran_does_not_follow_it() {
    let w = World::with_git();
    let mut mcp = w.mcp(&["--mode", "acceptEdits", "--allow", "Bash(sleep *)"]);
    // Both sent at once: the Write arrives, and is judged, while the `cd` still runs.
    let calls = [
        (1001, "Bash", json!({"command": "cd .git && sleep 1"})),
        (1002, "Write", json!({"file_path": "hooks/pre-commit", "content": "#!/bin/sh\ntouch pwned\n"})),
    ];
    for (id, name, arguments) in &calls {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": arguments}});
        writeln!(mcp.stdin, "{call}").unwrap();
    }
    mcp.stdin.flush().unwrap();
    let mut answers = std::collections::BTreeMap::new();
    while answers.len() < 2 {
        let mut line = String::new();
        assert!(mcp.stdout.read_line(&mut line).unwrap() > 0, "the server closed the connection");
        let message: Value = serde_json::from_str(&line).unwrap();
        if let Some(id) = message["id"].as_u64().filter(|_| message.get("method").is_none()) {
            answers.insert(id, message);
        }
    }
    assert_eq!(answers[&1001]["result"]["isError"], false, "{}", answers[&1001]);
    let write = &answers[&1002]["result"];
    assert_eq!(write["isError"], true, "{write}");
    assert!(write["content"][0]["text"].as_str().unwrap().contains("changed after this call was judged"), "{write}");
    assert!(!w.root.join(".git/hooks/pre-commit").exists(), "the write reached .git/hooks");
    assert!(!w.root.join("hooks").exists());
}

#[test]
fn a_command_judged_in_a_deleted_folder_is_judged_again_where_it_runs() {
    // A command deletes the working directory; the next one, judged there, runs in the root
    // instead, where its relative path is a file a deny rule protects.
    let w = World::new();
    std::fs::create_dir_all(w.root.join("secrets")).unwrap();
    let results = w.batch(
        &[
            json!({"name": "Bash", "input": {"command": "mkdir gone && cd gone"}}),
            json!({"name": "Bash", "input": {"command": "rmdir ../gone"}}),
            json!({"name": "Bash", "input": {"command": "echo stolen > secrets/key"}}),
        ],
        &["--mode", "bypassPermissions", "--deny", "Edit(./secrets/**)"],
    );
    assert_eq!(results[1]["is_error"], false, "{}", results[1]);
    assert_eq!(results[2]["outcome"], "denied", "{}", results[2]);
    assert!(!w.root.join("secrets/key").exists(), "the deny rule was bypassed");
}
