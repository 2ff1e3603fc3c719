//! `toolbelt trust` and the settings of a project nobody trusted, through the real binary: a
//! project is checked before it is trusted, a broken file of a repository nobody trusted
//! stops nothing, `config check` checks what waits for trust, and one trust covers the
//! project with and without Claude Code's settings.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;

use std::path::{Path, PathBuf};

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("project");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("notes.txt"), "notes\n").unwrap();
    (dir, root)
}

fn write(root: &Path, rel: &str, text: &str) -> PathBuf {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// (exit code, stdout, stderr)
fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hermetic::toolbelt(root).args(args).output().unwrap();
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
}

const READ: &[&str] = &["call", "Read", r#"{"file_path": "notes.txt"}"#];

#[test]
fn trust_refuses_a_project_whose_settings_do_not_validate() {
    let (_dir, root) = project();
    let file = write(
        &root,
        ".toolbelt/config.toml",
        "[permissions]\nmode = \"acceptEdit\"\nallow = [\"Bash(ls\"]\n\n[[hooks.PreToolUse]]\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    );
    let (code, out, err) = run(&root, &["trust"]);
    assert_eq!(code, 2, "{out}{err}");
    let f = file.display();
    assert!(err.contains(&format!("cannot trust {}: its settings have 2 problem(s)", root.display())), "{err}");
    assert!(err.contains(&format!("{f}:2: permissions.mode: `acceptEdit` is not a permission mode")), "{err}");
    assert!(err.contains(&format!("{f}:3: permissions.allow: invalid rule `Bash(ls`")), "{err}");
    assert!(err.contains("fix them") && err.contains("then run `toolbelt trust` again"), "{err}");
    let (_, listed, _) = run(&root, &["trust", "--list"]);
    assert!(listed.contains("no project is trusted"), "{listed}");
    // The review says so too.
    let (code, shown, _) = run(&root, &["trust", "--show"]);
    assert_eq!(code, 0);
    assert!(shown.contains("cannot be trusted until these 2 problem(s) are fixed"), "{shown}");
    // Calls go on (its settings wait), saying what is wrong.
    let (code, out, err) = run(&root, READ);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(&format!("{f}:2: permissions.mode")), "{err}");
    // Once fixed, it is trusted.
    std::fs::write(&file, "[permissions]\nmode = \"acceptEdits\"\nallow = [\"Bash(touch *)\"]\n").unwrap();
    let (code, out, err) = run(&root, &["trust", "--allow-loosening"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, _) = run(&root, &["call", "Bash", r#"{"command": "touch made"}"#]);
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_broken_file_of_a_repository_nobody_trusted_stops_no_call() {
    let (_dir, root) = project();
    // A file that does not parse (nothing else in the project needs trust)…
    let toml = write(&root, ".toolbelt/config.toml", "[permissions\ndeny = [\"Read(./x)\"]\n");
    let (code, out, err) = run(&root, READ);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(&format!("{}:", toml.display())) && err.contains("not valid TOML"), "{err}");
    assert!(err.contains("calls go on without what they concern"), "{err}");
    // …Claude Code's settings that do not parse, a hook event toolbelt does not have, a deny
    // rule that does not parse: the same.
    std::fs::remove_file(&toml).unwrap();
    let json = write(&root, ".claude/settings.json", "{\"permissions\": {\"deny\": [\"Read(./x)\"");
    write(&root, ".toolbelt/config.toml", "[permissions]\ndeny = [\"Bash(\"]\n\n[[hooks.PreToolUs]]\nhooks = []\n");
    let (code, out, err) = run(&root, READ);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains(&format!("{}:1: not valid JSON", json.display())), "{err}");
    assert!(err.contains("permissions.deny: invalid rule `Bash(`"), "{err}");
    assert!(err.contains("hooks.PreToolUs: unknown key"), "{err}");
    // The MCP server starts too (here, to find no client), saying so where hosts log it.
    let (_, _, err) = run(&root, &["mcp"]);
    assert!(err.contains(&format!("{}:1: not valid JSON", json.display())), "{err}");
    assert!(err.contains("MCP handshake") && !err.contains("the settings have"), "{err}");
    // The user's own broken settings stay an error: nothing runs until they are fixed.
    write(&root, ".test-home/.config/toolbelt/config.toml", "[permissions]\nmode = \"acceptEdit\"\n");
    let (code, _, err) = run(&root, READ);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("toolbelt config check"), "{err}");
}

#[test]
fn config_check_checks_the_files_of_a_project_waiting_for_trust() {
    let (_dir, root) = project();
    let file = write(
        &root,
        ".toolbelt/config.toml",
        "[permissions]\nmode = \"acceptEdit\"\n\n[[hooks.SessionStart]]\nhooks = [{ type = \"command\", command = \"true\" }]\n",
    );
    let (code, out, _) = run(&root, &["config", "check"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(&format!("error: {}:2: permissions.mode: `acceptEdit`", file.display())), "{out}");
    assert!(out.contains("`toolbelt trust` refuses it until it is fixed"), "{out}");
    assert!(out.contains(&format!("project {} (waiting for trust)", file.display())), "{out}");
    assert!(!out.contains("no settings files found"), "{out}");
    // Valid, it is ok, and still says the file waits.
    std::fs::write(&file, "[permissions]\nmode = \"plan\"\n").unwrap();
    let (code, out, _) = run(&root, &["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains(&format!("ok: project {} (waiting for trust)", file.display())), "{out}");
    let (_, json, _) = run(&root, &["config", "check", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["waiting_for_trust"][0]["path"], file.display().to_string(), "{json}");
}

#[test]
fn one_trust_covers_the_project_with_and_without_claude_code_s_settings() {
    let (_dir, root) = project();
    // The logs outside the project: a file inside it that a hook's command names is part of
    // what its trust covers.
    let logs = root.parent().unwrap().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let (ours, theirs) = (logs.join("toolbelt.log"), logs.join("claude.log"));
    write(
        &root,
        ".toolbelt/config.toml",
        &format!(
            "[[hooks.SessionStart]]\nhooks = [{{ type = \"command\", command = \"echo ran >> '{}'\" }}]\n",
            ours.display()
        ),
    );
    let claude = format!(
        r#"{{"hooks": {{"SessionStart": [{{"hooks": [{{"type": "command", "command": "echo ran >> '{}'"}}]}}]}}}}"#,
        theirs.display()
    );
    let claude_file = write(&root, ".claude/settings.json", &claude);
    let lines = |file: &Path| std::fs::read_to_string(file).unwrap_or_default().lines().count();
    // The review shows what applies only with Claude Code's settings, and a plain trust
    // covers it.
    let (_, shown, _) = run(&root, &["trust", "--show"]);
    assert!(shown.contains("with --claude-settings (Claude Code's files applying whole), also:"), "{shown}");
    assert_eq!(run(&root, &["trust"]).0, 0);
    for args in [&["--claude-settings"][..], &[][..], &["--claude-settings"][..]] {
        let (code, out, err) = run(&root, &[READ, args].concat());
        assert_eq!(code, 0, "{out}{err}");
        assert!(!err.contains("changed since"), "{args:?}: {err}");
    }
    assert_eq!((lines(&ours), lines(&theirs)), (3, 2));
    // When Claude Code's file changes, the advice given is what fixes it.
    std::fs::write(&claude_file, claude.replace("echo ran", "echo changed")).unwrap();
    let (_, _, err) = run(&root, &[READ, &["--claude-settings"][..]].concat());
    assert!(err.contains("has changed since you trusted it") && err.contains("`toolbelt trust`"), "{err}");
    assert_eq!(lines(&theirs), 2, "the changed hook did not run");
    assert_eq!(run(&root, &["trust"]).0, 0);
    let (_, _, err) = run(&root, &[READ, &["--claude-settings"][..]].concat());
    assert!(!err.contains("changed since"), "{err}");
    assert!(std::fs::read_to_string(&theirs).unwrap().ends_with("ran\nchanged\n"));
}
