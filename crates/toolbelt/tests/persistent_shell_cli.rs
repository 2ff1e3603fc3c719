//! `shell.persistent` / `--persistent-shell` through the real binary: exported variables,
//! functions, aliases and options carried from one Bash call to the next of a session (a
//! batch, an MCP session), and not without it; `cd` kept inside the roots only, as always;
//! a command that replaces the shell gives a fresh one with a notice; a call killed at its
//! time limit keeps the earlier state; each call's process tree still killed whole; and once
//! the carried shell redefines commands (a function, an alias, `PATH`), no command line counts
//! as read-only.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/stdio_mcp.rs"]
mod stdio_mcp;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    (dir, root)
}

/// The texts of a batch of Bash commands, run as one session.
fn batch(root: &Path, flags: &[&str], commands: &[&str]) -> Vec<String> {
    let input: String = commands
        .iter()
        .map(|c| format!("{}\n", json!({"name": "Bash", "input": {"command": c, "timeout": 3000}})))
        .collect();
    let mut child = hermetic::toolbelt(root)
        .args(flags)
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            v["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect::<Vec<_>>().join("\n")
        })
        .collect()
}

const ON: [&str; 3] = ["--persistent-shell", "--allow", "Bash"];

#[test]
fn variables_functions_aliases_and_options_carry_over_only_when_asked() {
    let (_dir, root) = project();
    let set =
        "export FOO=41; greet() { echo hi \"$1\"; }; shopt -s expand_aliases; alias say=echo; set -o pipefail; echo ok";
    let use_it = "echo FOO=$FOO; greet you; say aliased; shopt -po pipefail";
    let out = batch(&root, &ON, &[set, use_it]);
    assert!(out[1].contains("FOO=41") && out[1].contains("hi you"), "{out:?}");
    assert!(out[1].contains("aliased") && out[1].contains("set -o pipefail"), "{out:?}");
    let out = batch(&root, &["--allow", "Bash"], &[set, use_it]);
    assert!(out[1].contains("FOO=\n") || out[1].starts_with("FOO=\n"), "{out:?}");
    assert!(!out[1].contains("hi you"), "{out:?}");
}

#[test]
fn cd_keeps_its_rules_and_a_replaced_shell_starts_fresh() {
    let (dir, root) = project();
    let outside = dir.path().canonicalize().unwrap();
    let out = batch(
        &root,
        &ON,
        &[
            "export FOO=1; cd sub",
            "pwd; echo FOO=$FOO",
            &format!("cd {}", outside.display()),
            "pwd",
            "exec true",
            "echo FOO=[$FOO]",
        ],
    );
    assert!(out[1].contains(&root.join("sub").display().to_string()) && out[1].contains("FOO=1"), "{out:?}");
    assert!(out[2].contains("not kept"), "{out:?}");
    assert!(out[3].contains(&root.join("sub").display().to_string()), "{out:?}");
    assert!(out[4].contains("fresh shell"), "{out:?}");
    assert!(out[5].contains("FOO=[]"), "{out:?}");
}

#[test]
fn a_killed_call_keeps_the_earlier_state_and_trees_still_die() {
    let (_dir, root) = project();
    let out = batch(
        &root,
        &ON,
        &[
            "export FOO=kept",
            "export FOO=lost; sleep 30",
            "echo FOO=$FOO",
            "(sleep 300 & echo $! > bg.pid); echo started",
            "kill -0 $(cat bg.pid) 2>/dev/null && echo alive || echo gone",
        ],
    );
    assert!(out[1].to_lowercase().contains("timed out"), "{out:?}");
    assert!(out[2].contains("FOO=kept"), "{out:?}");
    assert!(out[4].contains("gone"), "a process of an earlier call outlived it: {out:?}");
}

#[test]
fn anything_carried_makes_no_command_read_only() {
    let (_dir, root) = project();
    let flags = ["--persistent-shell", "--allow", "Bash(ls() *)", "--allow", "Bash(export *)", "--allow", "Bash(cd *)"];
    // `ls` runs without asking while the shell is as a fresh one (a `cd` carries no state)…
    let out = batch(&root, &flags, &["ls", "cd sub", "ls", "ls() { echo redefined; }", "ls"]);
    assert!(!out[0].contains("permission denied") && !out[2].contains("permission denied"), "{out:?}");
    // …and asks once the shell carries anything, saying what.
    assert!(out[4].contains("permission denied") && out[4].contains("function `ls`"), "{out:?}");
    // A rule naming the command still allows it.
    let mut with_rule = flags.to_vec();
    with_rule.extend(["--allow", "Bash(ls)"]);
    let out = batch(&root, &with_rule, &["ls() { echo redefined; }", "ls"]);
    assert!(out[1].contains("redefined"), "{out:?}");
    // A variable a program reads changes what it does: it counts too.
    let out = batch(&root, &flags, &["export GIT_PAGER='touch pwned'", "ls"]);
    assert!(out[1].contains("permission denied") && out[1].contains("`GIT_PAGER`"), "{out:?}");
    assert!(!root.join("pwned").exists());
}

#[test]
fn an_mcp_session_carries_its_shell_with_the_setting() {
    let (_dir, root) = project();
    let config = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.toml"), "[shell]\npersistent = true\n[permissions]\nallow = [\"Bash\"]\n")
        .unwrap();
    let mut cmd = hermetic::toolbelt(&root);
    cmd.arg("mcp");
    let mut mcp = stdio_mcp::StdioMcp::start(cmd);
    mcp.call("Bash", json!({"command": "export FOO=1"}));
    let called = mcp.call("Bash", json!({"command": "echo FOO=$FOO"}));
    assert!(called.to_string().contains("FOO=1"), "{called}");
}

#[test]
fn a_shell_s_own_settings_do_not_lose_its_state() {
    let (_dir, root) = project();
    let out = batch(&root, &ON, &["IFS=:; set -C; export FOO=kept", "echo FOO=$FOO; shopt -po noclobber"]);
    assert!(out[1].contains("FOO=kept") && out[1].contains("set -o noclobber"), "{out:?}");
}

#[test]
fn a_forged_state_is_code_that_makes_every_command_ask() {
    let (_dir, root) = project();
    // A state in the report's own framing, the exit trap taken away.
    let forge = r#"trap - EXIT; s='touch pwned-by-state'; printf '\036%s\n%s\n' ${#s} "$s" >&98"#;
    let flags = ["--persistent-shell", "--allow", "Bash(trap *)", "--allow", "Bash(s=*)", "--allow", "Bash(printf *)"];
    let out = batch(&root, &flags, &[forge, "ls"]);
    assert!(out[1].contains("permission denied") && out[1].contains("other code"), "{out:?}");
    assert!(!root.join("pwned-by-state").exists());
    // No file of the state lies in the shared temporary directory for another command to
    // read, rewrite or replace with a link.
    let out = batch(&root, &ON, &["export SECRET_NOTE=x; env | grep -c '^TOOLBELT_SHELL' || true"]);
    assert!(out[0].trim().starts_with('0'), "{out:?}");
}

#[test]
fn a_state_too_large_to_carry_is_dropped_and_the_session_goes_on() {
    let (_dir, root) = project();
    // 70,000 two-byte characters: 140 KB, more than a command's environment string holds.
    let out = batch(&root, &ON, &["export BIG=$(printf 'é%.0s' $(seq 70000)); echo set", "echo next ${#BIG}"]);
    assert!(out[0].contains("over 120 KiB"), "{out:?}");
    assert!(out[1].contains("next 0"), "{out:?}");
}

#[test]
fn a_carried_builtin_cannot_keep_the_state_in_the_environment() {
    let (_dir, root) = project();
    let out =
        batch(&root, &ON, &["builtin() { :; }; unset() { :; }; export A=1", "env | grep -c TOOLBELT_SHELL || true"]);
    assert!(out[1].trim().starts_with('0'), "{out:?}");
}
