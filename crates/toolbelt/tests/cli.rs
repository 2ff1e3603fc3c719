//! The `toolbelt` binary, driven as a user or script would.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use assert_cmd::Command;
use predicates::prelude::*;
use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

fn toolbelt(dir: &std::path::Path) -> Command {
    // Hermetic: no user settings, nobody at a terminal to ask; help wrapped at 100 columns.
    let mut cmd = Command::from_std(hermetic::toolbelt(dir));
    cmd.env("NO_COLOR", "1").env("COLUMNS", "100");
    cmd
}

fn todos(items: &[(&str, &str)]) -> String {
    let list: Vec<Value> =
        items.iter().map(|(c, s)| json!({"content": c, "status": s, "activeForm": format!("{c}ing")})).collect();
    json!({ "todos": list }).to_string()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn help_is_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    for args in [&["--help"][..], &["tools", "--help"], &["call", "--help"], &["batch", "--help"], &["mcp", "--help"]] {
        let out = toolbelt(dir.path()).args(args).output().unwrap();
        assert!(out.status.success(), "{args:?}");
        let text = stdout(&out);
        assert!(text.contains("Usage: toolbelt"), "{text}");
        assert!(!text.contains('\u{1b}'), "no colour unless forced");
        let name = if args[0] == "--help" { "toolbelt" } else { args[0] };
        insta::assert_snapshot!(format!("help_{name}"), text);
    }
    // Colour forced on: NO_COLOR still wins (and without it the help is coloured, so this
    // check can fail).
    let forced = |no_color: bool| {
        let mut cmd = toolbelt(dir.path());
        cmd.arg("--help").env("CLICOLOR_FORCE", "1");
        if !no_color {
            cmd.env_remove("NO_COLOR");
        }
        stdout(&cmd.output().unwrap()).contains('\u{1b}')
    };
    assert!(forced(false), "CLICOLOR_FORCE colours the help");
    assert!(!forced(true), "NO_COLOR is honoured even when colour is forced");
    // `--version` alone is answered before clap builds the command line: the same words as
    // clap's own answer (which `--version` with another flag still gets).
    let version = format!("toolbelt {}\n", env!("CARGO_PKG_VERSION"));
    for args in [&["--version"][..], &["-V"], &["--version", "--verbose"]] {
        toolbelt(dir.path()).args(args).assert().success().stdout(version.clone());
    }
    toolbelt(dir.path()).arg("frobnicate").assert().code(2);
}

#[test]
fn tools_lists_and_filters() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolbelt(dir.path()).args(["tools", "--format", "names"]).output().unwrap();
    let names: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    for expected in
        ["ApplyPatch", "Edit", "Glob", "Grep", "ListDir", "MultiEdit", "NotebookEdit", "Read", "TodoWrite", "Write"]
    {
        assert!(names.iter().any(|n| n == expected), "{expected} missing from {names:?}");
    }
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "stable order by name");
    toolbelt(dir.path())
        .args(["tools"])
        .assert()
        .success()
        .stdout(predicate::str::is_match(r"(?m)^TodoWrite +planning +session").unwrap());
    let out = toolbelt(dir.path()).args(["tools", "--format", "names", "--category", "planning"]).output().unwrap();
    let planning: Vec<String> = stdout(&out).lines().map(str::to_string).collect();
    assert!(planning.iter().any(|n| n == "TodoWrite") && planning.iter().any(|n| n == "EnterPlanMode"), "{planning:?}");
    assert!(!planning.iter().any(|n| n == "Read"), "{planning:?}");
    let out = toolbelt(dir.path()).args(["tools", "--format", "names", "--category", "files"]).output().unwrap();
    assert!(stdout(&out).lines().any(|n| n == "Read") && !stdout(&out).contains("TodoWrite"));
    toolbelt(dir.path())
        .args(["tools", "--format", "names", "--tag", "planning", "--tag", "session"])
        .assert()
        .stdout("TodoWrite\n");
    toolbelt(dir.path())
        .args(["tools", "--format", "names", "--tag", "tasks"])
        .assert()
        .stdout("TaskCreate\nTaskGet\nTaskList\nTaskUpdate\n");
    toolbelt(dir.path())
        .args(["tools", "--format", "names", "--tag", "snippets"])
        .assert()
        .stdout("snippet_delete\nsnippet_list\nsnippet_load\nsnippet_save\n");
    toolbelt(dir.path()).args(["tools", "--format", "names", "--tag", "nope"]).assert().stdout("");
    toolbelt(dir.path())
        .args(["tools", "--category", "filez"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown category `filez`; expected one of: files, search"));
}

#[test]
fn exports_are_stable_and_valid_draft_2020_12() {
    let dir = tempfile::tempdir().unwrap();
    let meta = jsonschema::draft202012::meta::validator();
    for (format, pointers) in [
        ("openai", &["/function/parameters"][..]),
        ("anthropic", &["/input_schema"]),
        ("mcp", &["/inputSchema", "/outputSchema"]),
    ] {
        let out = toolbelt(dir.path()).args(["tools", "--format", format]).output().unwrap();
        assert!(out.status.success());
        let tools: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        assert!(!tools.is_empty());
        for tool in &tools {
            for p in pointers {
                // Every tool has an input schema; only tools with a typed result have an output schema.
                let Some(schema) = tool.pointer(p) else {
                    assert_eq!(*p, "/outputSchema", "{format}: {p} missing in {tool}");
                    continue;
                };
                let errors: Vec<String> = meta.iter_errors(schema).map(|e| e.to_string()).collect();
                assert!(errors.is_empty(), "{format} {p}: {errors:?}");
            }
        }
        insta::assert_json_snapshot!(format!("tools_{format}"), tools);
    }
    let out = toolbelt(dir.path()).args(["tools", "--format", "json"]).output().unwrap();
    let specs: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    insta::assert_json_snapshot!("tools_json", specs);
}

#[test]
fn call_prints_the_model_facing_text_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    toolbelt(dir.path())
        .args(["call", "TodoWrite", &todos(&[("Build", "in_progress")])])
        .assert()
        .success()
        .stdout("Todo list updated: 1 task (0 completed, 1 in progress, 0 pending). Since the last update: 1 added.\n[~] Building\n");
    // By alias, with the input on stdin.
    toolbelt(dir.path())
        .args(["call", "todo_write", "-"])
        .write_stdin(todos(&[]))
        .assert()
        .success()
        .stdout(predicate::str::starts_with("Todo list updated: 0 tasks"));
}

#[test]
fn snippets_are_saved_by_one_call_and_found_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    toolbelt(dir.path())
        .args([
            "call",
            "snippet_save",
            r#"{"name": "list-ports", "code": "ss -tlnp", "language": "sh", "description": "Listening TCP ports", "tags": ["net"]}"#,
        ])
        .assert()
        .success()
        .stdout("Saved snippet #1 `list-ports` (sh, 1 line) in your snippets.\n");
    toolbelt(dir.path())
        .args(["call", "snippet_list", r#"{"query": "listen*"}"#])
        .assert()
        .success()
        .stdout("list-ports — Listening TCP ports [sh] #net\n");
    toolbelt(dir.path())
        .args(["call", "load_snippet", r#"{"name": "list-ports"}"#])
        .assert()
        .success()
        .stdout(predicate::str::ends_with("\n```sh\nss -tlnp\n```\n"));
    assert!(dir.path().join(".test-home/.local/share/toolbelt/snippets.db").is_file(), "in the user's data directory");
}

#[test]
fn call_json_has_the_documented_shape() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolbelt(dir.path()).args(["call", "TodoWrite", "--json", &todos(&[("A", "pending")])]).output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(keys, ["is_error", "content", "structured", "duration_ms"]);
    assert_eq!(v["is_error"], false);
    assert_eq!(v["content"][0]["type"], "text");
    assert_eq!(v["structured"]["pending"], 1);
    assert!(v["duration_ms"].as_f64().unwrap() >= 0.0);
}

#[test]
fn call_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    // The tool returned an error (the input failed validation): 1, with the message on stdout.
    let out = toolbelt(dir.path()).args(["call", "TodoWrite", "--json", r#"{"todos": "none"}"#]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["is_error"], true);
    assert_eq!(
        v["content"][0]["text"],
        "invalid input for `TodoWrite` (1 problem); fix these fields and call again:\n  /todos: expected array, got string"
    );
    // Unknown tool: 2, with suggestions on stderr.
    toolbelt(dir.path())
        .args(["call", "TodoWrit", "{}"])
        .assert()
        .code(2)
        .stdout("")
        .stderr("error: unknown tool `TodoWrit`; did you mean `TodoWrite`?\n");
    // Invalid JSON: 2, the hint built from the tool's own required fields.
    toolbelt(dir.path()).args(["call", "TodoWrite", "{todos:"]).assert().code(2).stderr(
        predicate::str::contains("error: the input is not valid JSON")
            .and(predicate::str::contains(r#"pass a JSON object such as '{"todos":[]}'"#)),
    );
    toolbelt(dir.path())
        .args(["call", "Read", "{file_path:"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(r#"pass a JSON object such as '{"file_path":"…"}'"#));
    toolbelt(dir.path())
        .args(["call", "Edit", "nope"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(r#"'{"file_path":"…","old_string":"…","new_string":"…"}'"#));
    // A missing --cwd: 2.
    toolbelt(dir.path())
        .args(["call", "TodoWrite", "--cwd", "no/such/dir", "{}"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cwd"));
}

#[test]
fn batch_answers_in_input_order_as_one_session() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        json!({"id": "a", "name": "TodoWrite", "input": serde_json::from_str::<Value>(&todos(&[("A", "in_progress")])).unwrap()}),
        json!({"id": "b", "name": "Nope", "input": {}}),
        json!({"name": "todo_write", "input": serde_json::from_str::<Value>(&todos(&[("A", "completed")])).unwrap()}),
        json!({"id": 7, "name": "TodoWrite", "input": {"todos": 3}}),
    ];
    let input: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let out = toolbelt(dir.path()).arg("batch").write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "some calls failed");
    let results: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let ids: Vec<&str> = results.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["a", "b", "3", "7"]);
    let outcomes: Vec<&str> = results.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "unknown_tool", "ok", "invalid_input"]);
    // The third call saw the first one's list: the batch is one session.
    assert!(results[2]["content"][0]["text"].as_str().unwrap().contains("Since the last update: 1 completed."));
    assert_eq!(results[2]["tool"], "TodoWrite");
}

#[test]
fn batch_streams_events_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let line = json!({"id": "x", "name": "TodoWrite", "input": {"todos": []}});
    let out = toolbelt(dir.path()).args(["batch", "--events"]).write_stdin(format!("{line}\n")).output().unwrap();
    assert!(out.status.success());
    let lines: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let kinds: Vec<&str> = lines.iter().map(|l| l["event"].as_str().unwrap_or("result")).collect();
    assert_eq!(kinds, ["started", "finished", "result"]);
    assert_eq!(lines[0]["tool"], "TodoWrite");
}

#[test]
fn a_malformed_batch_line_is_that_lines_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = [
        json!({"id": "a", "name": "TodoWrite", "input": {"todos": []}}).to_string(),
        "not json".to_string(),
        json!({"id": "c", "input": {}}).to_string(),
        json!({"id": "d", "name": "TodoWrite", "input": {"todos": []}}).to_string(),
    ]
    .join("\n");
    let out = toolbelt(dir.path()).arg("batch").write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "two lines failed");
    let results: Vec<Value> = stdout(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let seen: Vec<(&str, &str)> =
        results.iter().map(|r| (r["id"].as_str().unwrap(), r["outcome"].as_str().unwrap())).collect();
    assert_eq!(seen, [("a", "ok"), ("2", "invalid_line"), ("c", "invalid_line"), ("d", "ok")]);
    let text = results[1]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("line 2 is not a call (") && text.ends_with("The other lines ran."), "{text}");
    assert!(results[2]["content"][0]["text"].as_str().unwrap().contains("missing field `name`"), "{}", results[2]);
    assert_eq!(results[1]["is_error"], true);
    // From a file too.
    std::fs::write(
        dir.path().join("calls.jsonl"),
        format!("{}\n", json!({"name": "TodoWrite", "input": {"todos": []}})),
    )
    .unwrap();
    toolbelt(dir.path()).args(["batch", "calls.jsonl"]).assert().success();
    toolbelt(dir.path()).args(["batch", "missing.jsonl"]).assert().code(2);
}

#[test]
fn named_sessions_keep_state_across_invocations() {
    let dir = tempfile::tempdir().unwrap();
    toolbelt(dir.path())
        .args(["call", "--session", "work", "TodoWrite", &todos(&[("A", "in_progress")])])
        .assert()
        .success();
    toolbelt(dir.path())
        .args(["call", "--session", "work", "TodoWrite", &todos(&[("A", "completed")])])
        .assert()
        .success()
        .stdout(predicate::str::contains("Since the last update: 1 completed."));
    // Without --session, every call starts afresh.
    toolbelt(dir.path())
        .args(["call", "TodoWrite", &todos(&[("A", "completed")])])
        .assert()
        .stdout(predicate::str::contains("Since the last update: 1 added."));
    // The session's state lives in the user's state directory, not in the project.
    let projects = dir.path().join(".test-home/.local/state/toolbelt/projects");
    let project = std::fs::read_dir(&projects).unwrap().next().unwrap().unwrap().path();
    let state: Value =
        serde_json::from_str(&std::fs::read_to_string(project.join("sessions/work/state.json")).unwrap()).unwrap();
    assert_eq!(state["slots"]["todos"]["todos"][0]["status"], "completed");
    assert!(!dir.path().join(".toolbelt").exists(), "nothing lands in the project");
    toolbelt(dir.path()).args(["call", "--session", "../x", "TodoWrite", "{}"]).assert().code(2);
}

#[test]
fn long_results_are_cut_and_spilled() {
    let dir = tempfile::tempdir().unwrap();
    let many: Vec<(String, &str)> = (0..50).map(|i| (format!("Task number {i}"), "pending")).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(c, s)| (c.as_str(), *s)).collect();
    let out =
        toolbelt(dir.path()).args(["call", "--output-budget", "200", "TodoWrite", &todos(&many)]).output().unwrap();
    assert!(out.status.success());
    let text = stdout(&out);
    let notice = text.split("[Output truncated: ").nth(1).expect("a truncation notice");
    assert!(notice.starts_with("showing the first 120 and the last 80 of "), "{notice}");
    let path = notice.split("saved to ").nth(1).unwrap().split("; read it").next().unwrap();
    let full = std::fs::read_to_string(path).unwrap();
    assert!(full.contains("[ ] Task number 49"));
    assert!(path.contains(".local/state/toolbelt/projects/") && path.contains("/sessions/call-"), "{path}");
    // The model reads it back: the sessions of the project are a read-only root.
    let back = toolbelt(dir.path())
        .args(["call", "Read", &serde_json::json!({"file_path": path}).to_string()])
        .output()
        .unwrap();
    assert!(back.status.success() && stdout(&back).contains("Task number 49"), "{}", stdout(&back));
    let write = serde_json::json!({"file_path": path, "content": "x"}).to_string();
    let out = toolbelt(dir.path()).args(["call", "Write", &write, "--mode", "bypassPermissions"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1), "no tool writes there: {}", stdout(&out));
}

#[test]
fn shell_switches_reach_the_bash_tool() {
    let dir = tempfile::tempdir().unwrap();
    toolbelt(dir.path())
        .args(["call", "Bash", r#"{"command":"curl --version"}"#, "--deny-command", "^curl"])
        .assert()
        .code(1)
        .stdout(predicate::str::starts_with("Refused: the command matches the deny pattern `^curl`"));
    toolbelt(dir.path())
        .args(["call", "Bash", r#"{"command":"true"}"#, "--deny-command", "("])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a valid regular expression"));
    let out = toolbelt(dir.path())
        .args([
            "call",
            "--json",
            "Bash",
            r#"{"command":"echo started; sleep 30"}"#,
            "--max-timeout",
            "1",
            "--allow",
            "Bash",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["structured"]["timed_out"], true, "{v}");
    assert!(v["content"][0]["text"].as_str().unwrap().starts_with("started"));
}

#[test]
fn a_command_that_fails_is_a_call_that_succeeded() {
    let dir = tempfile::tempdir().unwrap();
    // The tool ran the command and reports how it ended: exit 0, `is_error` false, and the
    // command's status in the text and in `structured.exit_code`.
    let run = |json: bool| {
        let mut cmd = toolbelt(dir.path());
        cmd.args(["call", "Bash", r#"{"command":"echo partial; exit 3"}"#, "--allow", "Bash"]);
        if json {
            cmd.arg("--json");
        }
        cmd.output().unwrap()
    };
    let out = run(false);
    assert_eq!((out.status.code(), stdout(&out).as_str()), (Some(0), "partial\n\n[Exit code 3]\n"));
    let out = run(true);
    assert_eq!(out.status.code(), Some(0));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((v["is_error"].clone(), v["structured"]["exit_code"].clone()), (json!(false), json!(3)), "{v}");
}
