//! Permissions, settings layers, hooks and the audit log, through the real binary.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use assert_cmd::Command;

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/pty.rs"]
mod pty;
use serde_json::{Value, json};

/// A project directory with its own home and settings, isolated from the machine's.
struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    managed: Option<PathBuf>,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, home) = (base.join("project"), base.join("home"));
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        Project { _dir: dir, root, home, managed: None }
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn toolbelt(&self) -> Command {
        let mut cmd = Command::from_std(hermetic::toolbelt_with_home(&self.root, &self.home));
        cmd.env("NO_COLOR", "1");
        match &self.managed {
            Some(file) => cmd.env("TOOLBELT_MANAGED_CONFIG", file),
            None => cmd.env_remove("TOOLBELT_MANAGED_CONFIG"),
        };
        cmd
    }

    /// Trusts the project as its files are now, so its own settings apply — those that loosen
    /// the policy included (these tests are about how settings merge, not about trust).
    fn trust(&self) {
        let (code, out, err) = self.run(&["trust", "--allow-loosening"]);
        assert_eq!(code, 0, "{out}{err}");
    }

    fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.toolbelt().args(args).output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }
}

fn write_call(path: &str) -> String {
    json!({"file_path": path, "content": "hello\n"}).to_string()
}

#[test]
fn with_nobody_to_ask_the_denial_names_the_rule_and_the_flag() {
    let p = Project::new();
    let (code, out, _) = p.run(&["call", "Write", &write_call("notes/a.txt")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("needs approval"), "{out}");
    assert!(out.contains("mode default"), "{out}");
    assert!(out.contains("`Edit(./notes/a.txt)`") && out.contains("--allow 'Edit(./notes/a.txt)'"), "{out}");
    assert!(!p.root.join("notes/a.txt").exists(), "nothing was written");

    // The flag it names works, and so does the mode that allows edits.
    let (code, out, _) = p.run(&["call", "Write", &write_call("notes/a.txt"), "--allow", "Edit(./notes/a.txt)"]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = p.run(&["call", "Write", &write_call("notes/b.txt"), "--mode", "acceptEdits"]);
    assert_eq!(code, 0, "{out}");
    // Reads inside the workspace and read-only commands never ask.
    assert_eq!(p.run(&["call", "Read", r#"{"file_path":"notes/a.txt"}"#]).0, 0);
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"ls notes | wc -l"}"#]);
    assert_eq!((code, out.trim()), (0, "2"));
    // Plan mode refuses writes outright, saying why.
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"touch x"}"#, "--mode", "plan"]);
    assert_eq!(code, 1);
    assert!(out.starts_with("permission denied: plan mode is read-only"), "{out}");
}

#[test]
fn layers_merge_and_the_managed_file_cannot_be_loosened() {
    let mut p = Project::new();
    std::fs::create_dir_all(p.home.join(".config/toolbelt")).unwrap();
    std::fs::write(p.home.join(".config/toolbelt/config.toml"), "[permissions]\nallow = [\"Bash(echo *)\"]\n").unwrap();
    p.write(".toolbelt/config.toml", "[permissions]\nmode = \"plan\"\nallow = [\"Bash(curl *)\"]\n");
    p.write(".toolbelt/config.local.toml", "[permissions]\nmode = \"acceptEdits\"\n");
    p.trust();

    // Scalars: the highest layer wins (project-local over project); lists add up.
    let (_, shown, _) = p.run(&["config", "show", "--json"]);
    let v: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(v["permissions.mode"]["value"], "acceptEdits");
    assert!(v["permissions.mode"]["source"].as_str().unwrap().contains(".toolbelt/config.local.toml:2"));
    assert_eq!(v["permissions.allow"]["value"], json!(["Bash(echo *)", "Bash(curl *)"]));
    assert_eq!(v["sandbox.mode"], json!({"value": "workspace-write", "source": "default"}));
    // The environment overrides files; flags override the environment.
    let out =
        p.toolbelt().args(["config", "show", "--json"]).env("TOOLBELT_PERMISSIONS__MODE", "dontAsk").output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["permissions.mode"]["value"], "dontAsk");
    let out = p
        .toolbelt()
        .args(["config", "show", "--json", "--mode", "plan"])
        .env("TOOLBELT_PERMISSIONS__MODE", "dontAsk")
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["permissions.mode"], json!({"value": "plan", "source": "flag --mode"}));

    // A managed deny holds against every allow below it, bypass mode included.
    let managed = p.write("managed/managed.toml", "[permissions]\ndeny = [\"Bash(curl *)\"]\n");
    p.managed = Some(managed.clone());
    let (code, out, _) = p.run(&[
        "call",
        "Bash",
        r#"{"command":"curl --version"}"#,
        "--mode",
        "bypassPermissions",
        "--allow",
        "Bash(curl *)",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("rule `Bash(curl *)` (managed") && out.contains("managed.toml:2"), "{out}");
    // The managed file's scalars override the flags.
    std::fs::write(&managed, "[permissions]\nmode = \"plan\"\n").unwrap();
    let (_, shown, _) = p.run(&["config", "show", "--json", "--mode", "bypassPermissions"]);
    let v: Value = serde_json::from_str(&shown).unwrap();
    assert_eq!(v["permissions.mode"]["value"], "plan");
}

#[test]
fn config_check_names_file_line_and_fix() {
    let p = Project::new();
    let file = p.write(
        ".toolbelt/config.toml",
        "[permissions]\nalow = [\"Bash\"]\ndeny = [\"Bash(\", \"Read(./x)\"]\nmode = \"yolo\"\n\n[sandbox]\nnetwork = \"yes\"\n",
    );
    // Such a project cannot be trusted; its files are checked all the same.
    let (code, _, err) = p.run(&["trust"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("cannot trust") && err.contains("permissions.alow: unknown key"), "{err}");
    let (code, out, _) = p.run(&["config", "check"]);
    assert_eq!(code, 1, "{out}");
    let f = file.display();
    for expected in [
        format!("error: {f}:2: permissions.alow: unknown key; did you mean `permissions.allow`?"),
        format!("error: {f}:3: permissions.deny: invalid rule `Bash(`: a specifier must end with `)`"),
        format!("error: {f}:4: permissions.mode: `yolo` is not a permission mode"),
        format!("error: {f}:7: sandbox.network: expected true or false, got a string"),
    ] {
        assert!(out.contains(&expected), "missing {expected:?} in:\n{out}");
    }
    // In file and line order, and the same as JSON.
    let at = |needle: &str| out.find(needle).unwrap_or_else(|| panic!("{needle} in {out}"));
    assert!(at(":2: ") < at(":3: ") && at(":3: ") < at(":4: ") && at(":4: ") < at(":7: "), "{out}");
    let (code, json, _) = p.run(&["config", "check", "--json"]);
    assert_eq!(code, 1, "{json}");
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["ok"], false);
    let lines: Vec<i64> = v["messages"].as_array().unwrap().iter().filter_map(|m| m["line"].as_i64()).collect();
    assert!(lines.windows(2).all(|w| w[0] <= w[1]) && lines.contains(&7), "{json}");
    assert_eq!(v["messages"][0]["key"], "permissions.alow");
    assert_eq!(v["messages"][0]["file"], f.to_string());
    assert_eq!(v["messages"][0]["severity"], "error");
    // Other commands go on without what a project nobody trusted got wrong, saying so…
    let (code, out, err) = p.run(&["call", "Read", r#"{"file_path":"x"}"#]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("Read(./x)"), "its valid deny rule applies at once: {out}");
    assert!(err.contains("toolbelt config check") && err.contains(&format!("{f}:2: permissions.alow")), "{err}");
    // …and refuse to run with the user's own broken settings (exit 2), pointing at the check.
    std::fs::create_dir_all(p.home.join(".config/toolbelt")).unwrap();
    std::fs::write(
        p.home.join(".config/toolbelt/config.toml"),
        "[permissions]
mode = \"yolo\"\n",
    )
    .unwrap();
    let (code, _, err) = p.run(&["call", "Read", r#"{"file_path":"x"}"#]);
    assert_eq!(code, 2);
    assert!(err.contains("toolbelt config check"), "{err}");
    std::fs::remove_file(p.home.join(".config/toolbelt/config.toml")).unwrap();

    std::fs::write(&file, "[permissions]\nallow = [\"Bsh(ls *)\", \"LS\"]\n").unwrap();
    p.trust();
    let (code, out, _) = p.run(&["config", "check"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warning:") && out.contains("names no tool here; did you mean `Bash`?"), "{out}");
    assert!(!out.contains("`LS`"), "an alias names a tool: {out}");
}

#[test]
fn explain_says_what_decides_and_what_would_allow() {
    let p = Project::new();
    p.write(".toolbelt/config.toml", "[permissions]\ndeny = [\"Read(./.env)\"]\n");
    let (code, out, _) = p.run(&["permissions", "explain", "Bash", r#"{"command":"cargo build --release"}"#]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("touches:    runs `cargo build --release` (runs alone)"), "{out}");
    assert!(out.contains("decision:   ask"), "{out}");
    assert!(out.contains("decided by: mode default"), "{out}");
    assert!(out.contains("to allow:   --allow 'Bash(cargo build *)'"), "{out}");

    let (_, out, _) = p.run(&["permissions", "explain", "Read", r#"{"file_path":".env"}"#]);
    assert!(out.contains("decision:   deny"), "{out}");
    assert!(out.contains("decided by: rule `Read(./.env)` (project ") && out.contains("config.toml:2)"), "{out}");

    let (_, out, _) = p.run(&["permissions", "explain", "--json", "Bash", r#"{"command":"git status"}"#]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["verdict"]["decision"], "allow");
    assert_eq!(v["access"]["concurrency"], "shared");
}

#[test]
fn read_only_scripts_run_and_destructive_commands_are_offered_exactly() {
    let p = Project::new();
    p.write("a.txt", "alpha\n");
    p.write("b.txt", "beta\n");
    std::fs::create_dir_all(p.root.join("build/out")).unwrap();
    let bash = |command: &str| json!({ "command": command }).to_string();
    // Loops, tests, exit statuses and the script's own variables, in plan and default mode:
    // they only read, so they run without asking (nobody is here to ask).
    for (command, expected) in [
        ("for f in a.txt b.txt; do cat \"$f\"; done", "alpha\nbeta"),
        ("[ -f a.txt ] && echo yes", "yes"),
        ("test -d build || echo missing; echo rc=$?", "rc=0"),
        ("f=b.txt; wc -l < b.txt; head -n 1 \"$f\"", "1\nbeta"),
        ("false; printf 'status %s\\n' \"$?\"", "status 1"),
    ] {
        for mode in ["plan", "default"] {
            let (code, out, err) = p.run(&["call", "Bash", &bash(command), "--mode", mode]);
            assert_eq!((code, out.trim()), (0, expected), "{mode} `{command}`: {err}");
        }
        let (_, explained, _) = p.run(&["permissions", "explain", "Bash", &bash(command)]);
        assert!(
            explained.contains("decision:   allow") && explained.contains("may run beside other reads"),
            "{explained}"
        );
    }

    // A destructive command is offered exactly as asked, never as `rm *`.
    let (_, explained, _) = p.run(&["permissions", "explain", "Bash", &bash("rm -rf build")]);
    assert!(explained.contains("decision:   ask"), "{explained}");
    assert!(
        explained.contains(
            "because:    `rm -rf build` is not read-only because `rm` is not a read-only command, so it needs approval"
        ),
        "{explained}"
    );
    assert!(explained.contains("to allow:   --allow 'Bash(rm -rf build)'"), "{explained}");
    let (code, out, _) = p.run(&["call", "Bash", &bash("rm -rf build")]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("`Bash(rm -rf build)`") && !out.contains("Bash(rm *)"), "{out}");
    assert!(p.root.join("build/out").is_dir(), "nothing was removed");
    // The rule it names allows that command and nothing wider.
    let (code, out, _) = p.run(&["call", "Bash", &bash("rm -rf build/out a.txt"), "--allow", "Bash(rm -rf build)"]);
    assert_eq!(code, 1, "{out}");
    assert!(p.root.join("a.txt").exists());
    let (code, out, _) = p.run(&["call", "Bash", &bash("rm -rf build"), "--allow", "Bash(rm -rf build)"]);
    assert_eq!(code, 0, "{out}");
    assert!(!p.root.join("build").exists());
    // Plan mode refuses it, in a sentence.
    let (code, out, _) = p.run(&["call", "Bash", &bash("touch x && exit 3"), "--mode", "plan"]);
    assert_eq!(code, 1);
    assert!(
        out.starts_with(
            "permission denied: plan mode is read-only, and `touch x` is not read-only because `touch` is not a \
             read-only command"
        ),
        "{out}"
    );
}

#[test]
fn a_bare_deny_rule_hides_the_tool_everywhere() {
    let p = Project::new();
    let (_, names, _) = p.run(&["tools", "--format", "names"]);
    assert!(names.lines().any(|l| l == "Bash"));
    let (_, names, _) = p.run(&["tools", "--format", "names", "--deny", "Bash"]);
    assert!(!names.lines().any(|l| l == "Bash"), "{names}");
    let (_, mcp, _) = p.run(&["tools", "--format", "mcp", "--deny", "Bash"]);
    assert!(!mcp.contains("\"name\": \"Bash\""));
    // A call to it is a denial (exit 1) naming the rule, in text and in JSON alike.
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"ls"}"#, "--deny", "Bash"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("permission denied: `Bash` is denied by the rule `Bash` (flag --deny)"), "{out}");
    let (code, out, _) = p.run(&["call", "--json", "bash", r#"{"command":"ls"}"#, "--deny", "Bash"]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((code, v["is_error"].clone()), (1, json!(true)), "{out}");
    p.write(".toolbelt/config.toml", "[permissions]\ndeny = [\"Bash\"]\n");
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"ls"}"#]);
    assert_eq!(code, 1, "{out}");
    let file = p.root.join(".toolbelt/config.toml");
    assert!(out.contains(&format!("the rule `Bash` (project {}:2)", file.display())), "{out}");
    // In a batch it is that call's denial; `permissions explain` says the same.
    let line = json!({"id": "x", "name": "Bash", "input": {"command": "ls"}});
    let out = p.toolbelt().arg("batch").write_stdin(format!("{line}\n")).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((out.status.code(), v["outcome"].clone()), (Some(1), json!("denied")), "{v}");
    let (code, out, _) = p.run(&["permissions", "explain", "--json", "Bash", r#"{"command":"ls"}"#]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!((code, v["verdict"]["decision"].clone()), (0, json!("deny")), "{out}");
    assert_eq!(v["verdict"]["source"], format!("rule `Bash` (project {}:2)", file.display()));
}

#[test]
fn claude_code_settings_apply_as_they_are() {
    let p = Project::new();
    p.write(
        ".claude/settings.json",
        r#"{"permissions": {"allow": ["Bash(make *)"], "deny": ["Read(./secrets/**)"], "defaultMode": "acceptEdits"}}"#,
    );
    p.write("secrets/key.txt", "k");
    p.write("Makefile", "all:\n\t@echo built\n");
    // Their deny rules always apply (they only make things stricter), named in the refusal…
    let (code, out, _) = p.run(&["call", "Read", r#"{"file_path":"secrets/key.txt"}"#]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("claude project") && out.contains(".claude/settings.json:1"), "{out}");
    // …their allow rules and mode need the opt-in, and the check says so.
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"make"}"#]);
    assert_eq!(code, 1, "{out}");
    let (_, out, _) = p.run(&["config", "check"]);
    assert!(
        out.contains("1 deny and 0 ask rule(s) applied; 2 other setting(s)") && out.contains("--claude-settings"),
        "{out}"
    );
    // With --claude-settings (or [compat] claude = true) and the project trusted they apply too.
    let (code, out, _) = p.run(&["call", "Read", r#"{"file_path":"secrets/key.txt"}"#, "--claude-settings"]);
    assert_eq!(code, 1);
    assert!(out.contains("claude project") && out.contains(".claude/settings.json:1"), "{out}");
    p.write(".toolbelt/config.toml", "[compat]\nclaude = true\n");
    p.trust();
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"make"}"#]);
    assert_eq!((code, out.trim()), (0, "built"));
    let (code, _, _) = p.run(&["call", "Write", &write_call("new.txt")]);
    assert_eq!(code, 0, "defaultMode acceptEdits applies");
}

#[test]
fn hooks_from_settings_block_and_the_audit_log_records_it() {
    let p = Project::new();
    p.write(
        "hooks/guard.sh",
        "#!/bin/sh\ninput=$(cat)\ncase \"$input\" in *'\"rm '*) echo 'no rm here, use trash' >&2; exit 2;; esac\nexit 0\n",
    );
    p.write(
        ".toolbelt/config.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"sh $TOOLBELT_PROJECT_DIR/hooks/guard.sh\" }]\n",
    );
    p.trust();
    let audit = p.root.join("logs/audit.jsonl");
    let audit_flag = audit.display().to_string();
    let (code, out, _) = p.run(&[
        "call",
        "Bash",
        r#"{"command":"rm -rf build"}"#,
        "--mode",
        "bypassPermissions",
        "--audit",
        &audit_flag,
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("no rm here, use trash"), "{out}");
    let (code, out, _) =
        p.run(&["call", "Bash", r#"{"command":"echo fine"}"#, "--mode", "bypassPermissions", "--audit", &audit_flag]);
    assert_eq!((code, out.trim()), (0, "fine"));

    let lines: Vec<Value> =
        std::fs::read_to_string(&audit).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2);
    let first = &lines[0];
    assert_eq!(first["tool"], "Bash");
    assert_eq!(first["input"]["command"], "rm -rf build");
    assert_eq!(first["outcome"], "denied");
    assert_eq!(first["decision"]["decision"], "deny");
    assert!(first["decision"]["source"].as_str().unwrap().contains("PreToolUse hook"), "{first}");
    assert_eq!(first["hooks"][0]["event"], "PreToolUse");
    assert!(first["time"].as_str().unwrap().ends_with('Z'));
    assert_eq!(lines[1]["outcome"], "ok");
    assert_eq!(lines[1]["decision"]["source"], "mode bypassPermissions");
    assert!(lines[1]["output_chars"].as_u64().unwrap() >= 4);
}

#[test]
fn an_approved_read_outside_the_roots_reaches_only_that_place() {
    let p = Project::new();
    let outside = p.root.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("notes.txt"), "outside notes\n").unwrap();
    let input = json!({"file_path": outside.join("notes.txt")}).to_string();
    // Asks (outside the roots); nobody to ask: denied, naming the rule.
    let (code, out, _) = p.run(&["call", "Read", &input]);
    assert_eq!(code, 1);
    let rule = format!("Read(/{}/**)", outside.display());
    assert!(out.contains(&format!("--allow '{rule}'")), "{out}");
    // With that rule, the file is read (the runtime opens its directory for this call only).
    let (code, out, _) = p.run(&["call", "Read", &input, "--allow", &rule]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("outside notes"));
    // The rule does not stretch to a sibling directory.
    let sibling = p.root.parent().unwrap().join("sibling.txt");
    std::fs::write(&sibling, "no").unwrap();
    let (code, _, _) = p.run(&["call", "Read", &json!({"file_path": sibling}).to_string(), "--allow", &rule]);
    assert_eq!(code, 1);
}

#[test]
fn grants_persist_in_named_sessions_and_always_rules_in_the_user_s_grants() {
    let p = Project::new();
    // Grant for the session, through a real terminal.
    let (out, code) = pty(&p, &["call", "--session", "work", "Bash", r#"{"command":"mkdir -p build"}"#], "s\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Bash wants to run `mkdir -p build`"), "{out}");
    assert!(
        out.contains("  y  Allow once\n  s  Allow for this session\n  a  Always allow Bash(mkdir *)\n  n  Deny\n"),
        "the same answers, by the same names, as an MCP host's form: {out}"
    );
    // The same named session remembers it (no terminal needed now).
    let (code, out, _) = p.run(&["call", "--session", "work", "Bash", r#"{"command":"mkdir -p build/x"}"#]);
    assert_eq!(code, 0, "{out}");
    // Another session does not.
    assert_eq!(p.run(&["call", "Bash", r#"{"command":"mkdir -p build/y"}"#]).0, 1);

    // "Always" keeps the rule in the user's grants for the project.
    let (out, code) = pty(&p, &["call", "Bash", r#"{"command":"touch build/z"}"#], "a\n");
    assert_eq!(code, 0, "{out}");
    let grants = grants_file(&p.home.join(".local/state"));
    assert!(std::fs::read_to_string(&grants).unwrap().contains("allow = [\"Bash(touch *)\"]"));
    assert!(!p.root.join(".toolbelt/config.local.toml").exists());
    assert_eq!(p.run(&["call", "Bash", r#"{"command":"touch build/z"}"#]).0, 0);

    // "Deny" with a reason: the model reads the reason.
    let (out, code) = pty(&p, &["call", "Bash", r#"{"command":"rm -r build"}"#], "n\nuse git clean instead\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("the user denied this call: use git clean instead"), "{out}");
}

#[test]
fn allowing_all_edits_lasts_for_the_named_session_only() {
    let p = Project::new();
    let write = |name: &str| json!({"file_path": format!("notes/{name}.md"), "content": "x\n"}).to_string();
    let (out, code) = pty(&p, &["call", "--session", "edits", "Write", &write("a")], "e\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("e  Allow all edits for the rest of this session (acceptEdits mode)"), "{out}");
    assert!(out.contains("choice [y/s/a/e/n]"), "{out}");
    // The session now accepts edits inside the workspace without asking…
    let (code, out, _) = p.run(&["call", "--session", "edits", "Write", &write("b")]);
    assert_eq!(code, 0, "{out}");
    assert!(p.root.join("notes/b.md").exists());
    // …but commands and paths outside the workspace still ask (nobody here: denied).
    let (code, out, _) = p.run(&["call", "--session", "edits", "Bash", r#"{"command":"mkdir -p build"}"#]);
    assert_eq!(code, 1, "{out}");
    let outside = json!({"file_path": "../outside.md", "content": "x"}).to_string();
    assert_eq!(p.run(&["call", "--session", "edits", "Write", &outside]).0, 1);
    // Another session is still in default mode; a command never offers the switch.
    assert_eq!(p.run(&["call", "Write", &write("c")]).0, 1);
    let (out, _) = pty(&p, &["call", "Bash", r#"{"command":"mkdir -p build"}"#], "n\n\n");
    assert!(out.contains("choice [y/s/a/n]"), "{out}");
}

/// The grants file of the one project in the state directory `state`.
fn grants_file(state: &std::path::Path) -> PathBuf {
    let projects = std::fs::read_dir(state.join("toolbelt/projects")).unwrap();
    let dirs: Vec<PathBuf> = projects.map(|e| e.unwrap().path()).filter(|d| d.join("grants.toml").exists()).collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    dirs[0].join("grants.toml")
}

/// Runs toolbelt under a pseudo-terminal in the project, answering its permission prompt.
fn pty(p: &Project, args: &[&str], answers: &str) -> (String, i32) {
    let config = p.home.join(".config");
    pty::toolbelt_in_pty(args, &p.root, &[("HOME", &p.home), ("XDG_CONFIG_HOME", &config)], "choice [", answers)
}

#[test]
fn a_hooks_allow_skips_the_modes_question_but_never_a_rule() {
    let p = Project::new();
    p.write(
        "hooks/allow.sh",
        "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\": {\"permissionDecision\": \"allow\", \"permissionDecisionReason\": \"CI bot\", \"updatedInput\": {\"command\": \"touch made-by-hook\"}}}'\n",
    );
    p.write(
        ".toolbelt/config.toml",
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"sh hooks/allow.sh\" }]\n",
    );
    p.trust();
    // Default mode would ask; the hook allows, and its rewrite is what runs.
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"touch x"}"#]);
    assert_eq!(code, 0, "{out}");
    assert!(p.root.join("made-by-hook").exists() && !p.root.join("x").exists());
    // An ask rule still asks (nobody here: denied); a deny rule still denies.
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"touch x"}"#, "--ask", "Bash(touch *)"]);
    assert_eq!(code, 1);
    assert!(out.contains("an ask rule always asks"), "{out}");
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"touch x"}"#, "--deny", "Bash(touch *)"]);
    assert_eq!(code, 1);
    assert!(out.contains("a deny rule forbids"), "{out}");
    // An invalid rewrite is the hook's error, not a crash.
    p.write("hooks/allow.sh", "#!/bin/sh\necho '{\"hookSpecificOutput\": {\"updatedInput\": {\"command\": 5}}}'\n");
    // The script the hook runs changed: the project needs trusting again.
    p.trust();
    let (code, out, _) = p.run(&["call", "Bash", r#"{"command":"ls"}"#]);
    assert_eq!(code, 1);
    assert!(out.contains("a PreToolUse hook rewrote the input of `Bash` into an invalid one"), "{out}");
}
