//! AskUserQuestion, plan mode and Config through the real binary: questions answered on a
//! pseudo-terminal, refused where nobody can answer (batch, CI), plan mode kept across the
//! calls of a named session, settings read and changed with their comments kept.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/pty.rs"]
mod pty;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        Project { _dir: dir, root }
    }

    fn home(&self) -> PathBuf {
        self.root.join(".test-home")
    }

    /// Runs toolbelt without a terminal (as under CI); exit status, stdout, stderr.
    fn run(&self, args: &[&str], stdin: &str) -> (i32, String, String) {
        use std::io::Write as _;
        let mut child = hermetic::toolbelt(&self.root)
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        (out.status.code().unwrap_or(-1), text(&out.stdout), text(&out.stderr))
    }

    /// Runs toolbelt at a pseudo-terminal, typing `answers` once `prompt` shows.
    fn at_terminal(&self, args: &[&str], prompt: &str, answers: &str) -> (String, i32) {
        let (home, config, state) = (self.home(), self.home().join(".config"), self.home().join(".local/state"));
        let env: [(&str, &Path); 3] = [("HOME", &home), ("XDG_CONFIG_HOME", &config), ("XDG_STATE_HOME", &state)];
        pty::toolbelt_in_pty(args, &self.root, &env, prompt, answers)
    }
}

fn database_question(multi: bool) -> String {
    json!({"questions": [{
        "question": "Which database should the service use?",
        "header": "Database",
        "multiSelect": multi,
        "options": [
            {"label": "Postgres", "description": "a server, for production"},
            {"label": "SQLite", "description": "a file, for the prototype"}
        ]
    }]})
    .to_string()
}

#[test]
fn a_question_is_answered_at_the_terminal() {
    let p = Project::new();
    let q = database_question(false);
    let (out, code) = p.at_terminal(&["call", "AskUserQuestion", &q], "Pick one (1-3)", "2\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("[Database] Which database should the service use?"), "the menu is shown: {out}");
    assert!(out.contains("1. Postgres — a server, for production"), "{out}");
    assert!(
        out.contains(
            "User has answered your questions: \"Which database should the service use?\"=\"SQLite\". You can now \
             continue with the user's answers in mind."
        ),
        "{out}"
    );

    // Several choices and words of one's own.
    let q = database_question(true);
    let (out, code) =
        p.at_terminal(&["call", "AskUserQuestion", &q, "--json"], "separated by commas", "1,3\nversion 16 please\n");
    assert_eq!(code, 0, "{out}");
    let json_start = out.find("{\"").unwrap();
    let result: Value = serde_json::from_str(out[json_start..].trim()).unwrap();
    assert_eq!(
        result["structured"]["answers"],
        json!([{"question": "Which database should the service use?", "selected": ["Postgres"],
            "other": "version 16 please"}]),
        "{out}"
    );

    // Declined: said so, and the call fails.
    let (out, code) = p.at_terminal(&["call", "AskUserQuestion", &database_question(false)], "Pick one", "0\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("declined"), "{out}");
}

#[test]
fn with_nobody_at_a_terminal_a_question_fails_and_repeats_itself() {
    let p = Project::new();
    // `call` under CI: no one to ask.
    let (code, out, _) = p.run(&["call", "AskUserQuestion", &database_question(false)], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("nobody can answer here"), "{out}");
    assert!(out.contains("Which database should the service use?"), "the question is repeated: {out}");
    assert!(out.contains("Postgres") && out.contains("SQLite"), "with its choices: {out}");
    // `batch` runs unattended, even at a terminal: that line fails, the others run.
    let lines = format!(
        "{}\n{}\n",
        json!({"id": "q", "name": "AskUserQuestion", "input": serde_json::from_str::<Value>(&database_question(false)).unwrap()}),
        json!({"id": "t", "name": "Think", "input": {"thought": "then go on"}})
    );
    let input = p.root.join("calls.jsonl");
    std::fs::write(&input, &lines).unwrap();
    let (out, code) = p.at_terminal(&["batch", input.to_str().unwrap()], "", "");
    let results: Vec<Value> =
        out.lines().filter(|l| l.starts_with('{')).map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(results.len(), 2, "{out}");
    assert_eq!(results[0]["outcome"], "failed", "{out}");
    let text = results[0]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("`toolbelt batch` runs unattended"), "{text}");
    assert!(text.contains("Which database should the service use?"), "{text}");
    assert_eq!(results[1]["outcome"], "ok", "{out}");
    assert_ne!(code, 0);
}

#[test]
fn plan_mode_holds_across_a_named_sessions_calls_until_a_person_approves() {
    let p = Project::new();
    let session = ["call", "--session", "plan"];
    let call = |tool: &str, input: Value| {
        let mut args = session.to_vec();
        args.extend([tool]);
        let input = input.to_string();
        args.push(&input);
        p.run(&args, "")
    };
    let (code, out, _) = call("EnterPlanMode", json!({}));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Entered plan mode (from default)"), "{out}");
    // A write and a command that is not read-only are refused, pointing at ExitPlanMode.
    let (code, out, _) = call("Write", json!({"file_path": "x.txt", "content": "x"}));
    assert_eq!(code, 1);
    assert!(out.contains("plan mode is read-only") && out.contains("ExitPlanMode"), "{out}");
    let (code, out, _) = call("Bash", json!({"command": "touch y"}));
    assert_eq!(code, 1);
    assert!(out.contains("plan mode is read-only"), "{out}");
    assert!(!p.root.join("x.txt").exists() && !p.root.join("y").exists());
    // Reads and read-only commands run.
    assert_eq!(call("Bash", json!({"command": "ls"})).0, 0);

    // With nobody to approve, the plan stays a plan.
    let plan = json!({"plan": "1. Write x.txt.\n2. Run the tests.", "allowedPrompts": [{"tool": "Bash", "prompt": "run tests"}]});
    let (code, out, _) = call("ExitPlanMode", plan.clone());
    assert_eq!(code, 1);
    assert!(out.contains("could not be approved") && out.contains("stays in plan mode"), "{out}");

    // Rejected at the terminal, with feedback: asked with the permission prompt's letters,
    // `n` then the reason, as a denied call is.
    let mut args = session.to_vec();
    let plan_text = plan.to_string();
    args.extend(["ExitPlanMode", &plan_text]);
    let (out, code) = p.at_terminal(&args, "choice [y/e/n]", "n\nalso update the docs\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("1. Write x.txt."), "the plan is shown: {out}");
    assert!(
        out.contains(
            "[Plan] Approve this plan?\n  y  Approve — leave plan mode and carry it out, back in default mode\n  \
             e  Approve, allow all edits — leave plan mode for acceptEdits mode: edits inside the workspace run \
             without asking\n  n  Keep planning — stay in plan mode; say what to change\nchoice [y/e/n]: "
        ),
        "{out}"
    );
    assert!(out.contains("tell the model why (optional): "), "{out}");
    assert!(out.contains("wants changes to the plan: also update the docs"), "{out}");
    assert_eq!(call("Write", json!({"file_path": "x.txt", "content": "x"})).0, 1, "still planning");

    // Approved with "accept edits": the write runs without anyone to ask.
    let (out, code) = p.at_terminal(&args, "choice [y/e/n]", "e\n");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("acceptEdits"), "{out}");
    let (code, out, _) = call("Write", json!({"file_path": "x.txt", "content": "x"}));
    assert_eq!(code, 0, "{out}");
    assert!(p.root.join("x.txt").is_file());

    // A session the settings put in plan mode cannot be approved out of it.
    let mut args = vec!["call", "--mode", "plan", "ExitPlanMode"];
    args.push(&plan_text);
    let (out, code) = p.at_terminal(&args, "choice [y/e/n]", "y\n");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("only the user can change that"), "{out}");
}

#[test]
fn config_reads_any_setting_and_changes_the_few_a_model_may() {
    let p = Project::new();
    let local = p.root.join(".toolbelt/config.local.toml");
    std::fs::create_dir_all(local.parent().unwrap()).unwrap();
    std::fs::write(&local, "# my own settings\n[runtime]\n# keep results short\noutput_budget = 20000 # chars\n")
        .unwrap();
    let allow_write = "Edit(./.toolbelt/config.local.toml)";
    // The user's own file, which they trust (a project's files apply once trusted).
    assert_eq!(p.run(&["trust"], "").0, 0);

    let (code, out, _) = p.run(&["call", "Config", r#"{"setting": "runtime.output_budget"}"#], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("runtime.output_budget = 20000 (project-local "), "{out}");
    assert!(out.contains("config.local.toml:4)"), "with its line: {out}");
    assert!(out.contains("You may change it with Config"), "{out}");

    // A change is a write of a protected file: refused with nobody to approve, saying which
    // rule would allow it; the file is untouched.
    let change = r#"{"setting": "runtime.output_budget", "value": "50000"}"#;
    let (code, out, _) = p.run(&["call", "Config", change], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains(allow_write), "{out}");
    assert!(std::fs::read_to_string(&local).unwrap().contains("output_budget = 20000 # chars"));
    // Allowed: written as a number, comments kept; read back from the file.
    let (code, out, _) = p.run(&["call", "--allow", allow_write, "Config", change], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("Set runtime.output_budget to 50000 in "), "{out}");
    assert!(out.contains("(it was 20000)"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&local).unwrap(),
        "# my own settings\n[runtime]\n# keep results short\noutput_budget = 50000 # chars\n"
    );
    let (_, out, _) = p.run(&["call", "--json", "Config", r#"{"setting": "runtime.output_budget"}"#], "");
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["structured"]["value"], json!(50000), "{out}");
    // A flag above the file: the change is written but said not to apply.
    let (code, out, _) = p.run(
        &[
            "call",
            "--allow",
            allow_write,
            "--output-budget",
            "9000",
            "Config",
            r#"{"setting": "runtime.output_budget", "value": 7000}"#,
        ],
        "",
    );
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("does not apply yet: flag --output-budget sets it to 9000"), "{out}");

    // What a model may not change, and keys that do not exist.
    for (input, expected) in [
        (json!({"setting": "sandbox.mode", "value": "danger-full-access"}), "can only be changed by the user"),
        (json!({"setting": "permissions.allow", "value": "Bash"}), "can only be changed by the user"),
        (json!({"setting": "permissions.mode", "value": "acceptEdits"}), "config.model_may_set_mode = true"),
        (json!({"setting": "runtime.output_budget", "value": "lots"}), "cannot be set to \"lots\""),
        (json!({"setting": "sandbox.mod"}), "did you mean `sandbox.mode`?"),
    ] {
        let (code, out, _) = p.run(&["call", "--allow", allow_write, "Config", &input.to_string()], "");
        assert_eq!(code, 1, "{input}: {out}");
        assert!(out.contains(expected), "{input}: {out}");
    }
    assert!(std::fs::read_to_string(&local).unwrap().contains("output_budget = 7000"));

    // A project cannot opt its model into changing the mode; the user can, never to bypass.
    std::fs::write(p.root.join(".toolbelt/config.toml"), "[config]\nmodel_may_set_mode = true\n").unwrap();
    assert_eq!(p.run(&["trust"], "").0, 0);
    let mode = |value: &str| json!({"setting": "permissions.mode", "value": value}).to_string();
    let (code, out, _) = p.run(&["call", "--allow", allow_write, "Config", &mode("acceptEdits")], "");
    assert_eq!(code, 1, "{out}");
    let user = p.home().join(".config/toolbelt/config.toml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, "[config]\nmodel_may_set_mode = true\n").unwrap();
    let (code, out, _) = p.run(&["call", "--allow", allow_write, "Config", &mode("bypassPermissions")], "");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("only the user can turn permission checks off"), "{out}");
    let (code, out, _) = p.run(&["call", "--session", "m", "--allow", allow_write, "Config", &mode("acceptEdits")], "");
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("This session is now in acceptEdits mode."), "{out}");
    assert!(std::fs::read_to_string(&local).unwrap().contains("mode = \"acceptEdits\""));
    // The next call reads the mode from the file: an edit runs without asking.
    let (code, out, _) = p.run(&["call", "Write", r#"{"file_path": "a.txt", "content": "a"}"#], "");
    assert_eq!(code, 0, "{out}");
}

#[test]
fn a_project_skill_s_grant_is_asked_with_the_permission_prompt_s_letters() {
    let p = Project::new();
    let skill = p.root.join(".agents/skills/setup/SKILL.md");
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(&skill, "---\ndescription: Set up\nallowed-tools: Bash(touch granted.txt)\n---\nSet it up.\n")
        .unwrap();
    let (out, code) = p.at_terminal(&["call", "Skill", r#"{"skill": "setup"}"#], "choice [s/n]", "n\nnot now\n");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(
            "[Skill] Allow them?\n  s  Allow — for the rest of this session\n  n  Don't allow — load the skill; ask as \
             usual\nchoice [s/n]: "
        ),
        "{out}"
    );
    assert!(out.contains("Bash(touch granted.txt) (the user did not allow them"), "{out}");
}
