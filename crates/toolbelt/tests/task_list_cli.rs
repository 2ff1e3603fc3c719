//! The task list through the real `toolbelt` binary: the tools' round trip with `call`,
//! metadata merged and a cycle refused, `toolbelt tasks` for a person, one list per project
//! unless `--task-list` / `TOOLBELT_TASK_LIST` names a shared one, a sub-agent working on its
//! parent's list, and separate processes writing one list at once without losing an update.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};
use toolbelt_agent::testing::{ScriptedServer, Turn};

#[path = "common/hermetic.rs"]
mod hermetic;

/// A project (a `.git` directory) in a temp directory, canonical.
fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// `toolbelt` working in `root`, its home the shared `home` (several projects, one user).
fn toolbelt(home: &Path, root: &Path) -> std::process::Command {
    let mut cmd = hermetic::toolbelt(home);
    cmd.current_dir(root).env("NO_COLOR", "1");
    cmd
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `toolbelt [args…] call --json TOOL INPUT`: the result object, whether it failed or not.
fn call(home: &Path, root: &Path, args: &[&str], tool: &str, input: Value) -> Value {
    let out = toolbelt(home, root).args(args).args(["call", "--json", tool, &input.to_string()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    serde_json::from_str(&text(&out))
        .unwrap_or_else(|e| panic!("{tool}: {e}\nstdout: {}\nstderr: {stderr}", text(&out)))
}

/// [`call`] that must succeed: its structured result.
fn ok(home: &Path, root: &Path, args: &[&str], tool: &str, input: Value) -> Value {
    let result = call(home, root, args, tool, input.clone());
    assert_eq!(result["is_error"], false, "{tool} {input}: {result}");
    result["structured"].clone()
}

/// [`call`] that must fail: its message.
fn refused(home: &Path, root: &Path, tool: &str, input: Value) -> String {
    let result = call(home, root, &[], tool, input.clone());
    assert_eq!(result["is_error"], true, "{tool} {input} succeeded: {result}");
    result["content"][0]["text"].as_str().unwrap().to_string()
}

#[test]
fn create_get_update_list_and_tasks_round_trip() {
    let (dir, root) = project();
    let home = dir.path();
    let out = toolbelt(home, &root).arg("tasks").output().unwrap();
    assert!(out.status.success(), "{out:?}");
    let listed = text(&out);
    assert!(listed.starts_with("This project's task list ("), "{listed}");
    assert!(listed.contains("/.test-home/.local/state/toolbelt/projects/app-"), "in the state directory: {listed}");
    assert!(listed.ends_with("/tasks.db)\nNo tasks yet (agents add them with TaskCreate).\n"), "{listed}");

    // The model-facing text, as `call` prints it.
    let out = toolbelt(home, &root)
        .args(["call", "TaskCreate", r#"{"subject": "Write the parser", "description": "by hand", "activeForm": "Writing the parser", "metadata": {"area": "config", "size": 3}}"#])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text(&out), "Task #1 created: Write the parser\n");
    ok(home, &root, &[], "TaskCreate", json!({"subject": "Test the parser", "description": "every rule"}));
    ok(home, &root, &[], "TaskCreate", json!({"subject": "Ship it", "description": ""}));

    let updated = ok(
        home,
        &root,
        &[],
        "TaskUpdate",
        json!({"taskId": "1", "status": "in_progress", "owner": "alice",
               "metadata": {"size": null, "reviewer": "bob"}}),
    );
    assert_eq!(updated["task"]["metadata"], json!({"area": "config", "reviewer": "bob"}), "merged, null deleted");
    assert_eq!(updated["statusChange"], json!({"from": "pending", "to": "in_progress"}));
    ok(home, &root, &[], "TaskUpdate", json!({"taskId": "2", "addBlockedBy": ["1"]}));
    ok(home, &root, &[], "TaskUpdate", json!({"taskId": "3", "addBlockedBy": ["2"]}));

    let got = ok(home, &root, &[], "TaskGet", json!({"taskId": "1"}));
    assert_eq!(got["task"]["owner"], "alice");
    assert_eq!(got["task"]["activeForm"], "Writing the parser");
    assert_eq!(got["task"]["metadata"], json!({"area": "config", "reviewer": "bob"}));
    assert_eq!(got["task"]["blocks"], json!(["2"]));

    // A cycle is refused, saying which, and changes nothing.
    let e = refused(home, &root, "TaskUpdate", json!({"taskId": "1", "owner": "", "addBlockedBy": ["3"]}));
    assert_eq!(
        e,
        "refused: that makes a cycle of blockers, #3 blocks #1 blocks #2 blocks #3 (none of them could ever start); \
         nothing was changed"
    );
    assert_eq!(ok(home, &root, &[], "TaskGet", json!({"taskId": "1"}))["task"]["owner"], "alice");
    // A task with an owner is taken.
    let e = refused(home, &root, "TaskUpdate", json!({"taskId": "1", "owner": "carol"}));
    assert!(e.starts_with("task #1 is taken: its owner is `alice`"), "{e}");
    // Bad ids say what to do.
    let e = refused(home, &root, "TaskGet", json!({"taskId": "7"}));
    assert_eq!(e, "there is no task #7 in this project's task list; its tasks are #1–#3");
    let e = refused(home, &root, "TaskUpdate", json!({"taskId": "first", "status": "completed"}));
    assert!(e.contains("ids are numbers such as \"3\" (TaskList shows them)"), "{e}");

    let out = toolbelt(home, &root).args(["call", "TaskList"]).output().unwrap();
    assert_eq!(
        text(&out),
        "#1 [in_progress] Write the parser (owner: alice)\n#2 [pending] Test the parser [blocked by #1]\n\
         #3 [pending] Ship it [blocked by #2]\n"
    );
    ok(home, &root, &[], "TaskUpdate", json!({"taskId": "1", "status": "completed"}));
    let out = toolbelt(home, &root).arg("tasks").output().unwrap();
    let listed = text(&out);
    let table = listed.split_once('\n').unwrap().1;
    assert_eq!(
        table,
        "3 task(s): 2 pending, 0 in progress, 1 completed\n\
         ID  STATUS     OWNER  BLOCKED BY  SUBJECT\n\
         #1  completed  alice  -           Write the parser\n\
         #2  pending    -      -           Test the parser\n\
         #3  pending    -      #2          Ship it\n"
    );
    let out = toolbelt(home, &root).args(["tasks", "--json"]).output().unwrap();
    let json: Value = serde_json::from_str(&text(&out)).unwrap();
    assert_eq!(json["list"], Value::Null);
    assert!(json["file"].as_str().unwrap().ends_with("/tasks.db"), "{json}");
    assert_eq!(json["tasks"][2], json!({"id": "3", "subject": "Ship it", "status": "pending", "blockedBy": ["2"]}));
}

#[test]
fn each_project_has_its_own_list_and_a_named_list_is_shared() {
    let (dir, app) = project();
    let home = dir.path();
    let other = home.join("other");
    std::fs::create_dir_all(other.join(".git")).unwrap();
    ok(home, &app, &[], "TaskCreate", json!({"subject": "In app", "description": ""}));
    let listed = ok(home, &other, &[], "TaskList", json!({}));
    assert_eq!(listed["tasks"], json!([]), "another project, another list");

    // Named by the flag in one project and by the variable in the other: one list.
    ok(home, &app, &["--task-list", "team"], "TaskCreate", json!({"subject": "Shared", "description": ""}));
    let out = toolbelt(home, &other).env("TOOLBELT_TASK_LIST", "team").args(["call", "TaskList"]).output().unwrap();
    assert_eq!(text(&out), "#1 [pending] Shared\n");
    let out = toolbelt(home, &other).args(["tasks", "--task-list", "team"]).output().unwrap();
    let listed = text(&out);
    assert!(listed.starts_with("The task list `team` ("), "{listed}");
    assert!(listed.contains("/.local/state/toolbelt/task-lists/team.db)"), "{listed}");
    assert!(listed.contains("#1  pending  -      -           Shared"), "{listed}");
    // The flag wins over the variable; the project's list is untouched by all this.
    let out = toolbelt(home, &app)
        .env("TOOLBELT_TASK_LIST", "team")
        .args(["--task-list", "solo", "call", "TaskList"])
        .output()
        .unwrap();
    assert_eq!(text(&out), "No tasks in the task list `solo`. Add one with TaskCreate.\n");
    let mine = ok(home, &app, &[], "TaskList", json!({}));
    assert_eq!(mine["tasks"].as_array().unwrap().len(), 1);
    assert_eq!(mine["tasks"][0]["subject"], "In app");

    // A name that cannot be a file name is a usage error saying what names may be.
    for (flag, var) in [(Some("../etc"), None), (None, Some("a b"))] {
        let mut cmd = toolbelt(home, &app);
        if let Some(name) = flag {
            cmd.args(["--task-list", name]);
        }
        if let Some(name) = var {
            cmd.env("TOOLBELT_TASK_LIST", name);
        }
        let out = cmd.args(["call", "TaskList"]).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("--task-list / TOOLBELT_TASK_LIST: invalid task list name"), "{stderr}");
        assert!(stderr.contains("use 1 to 64 letters, digits"), "{stderr}");
    }
}

#[test]
fn a_sub_agent_works_on_its_parents_list() {
    let (dir, root) = project();
    let home = dir.path();
    ok(home, &root, &[], "TaskCreate", json!({"subject": "Review the parser", "description": "for bugs"}));
    let model = ScriptedServer::openai([
        Turn::tool_call("l1", "TaskList", json!({})),
        Turn::tool_calls([
            (
                "u1".to_string(),
                "TaskUpdate".to_string(),
                json!({"taskId": "1", "status": "completed",
                "owner": "reviewer", "metadata": {"found": 2}}),
            ),
            (
                "c1".to_string(),
                "TaskCreate".to_string(),
                json!({"subject": "Fix the two bugs", "description": "see #1"}),
            ),
        ]),
        Turn::text("Reviewed; two bugs filed as #2."),
    ])
    .unwrap();
    let out = toolbelt(home, &root)
        .envs(model.env())
        .args([
            "call",
            "--json",
            "Agent",
            r#"{"description": "review", "prompt": "Review task #1.", "subagent_type": "general-purpose"}"#,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(result["structured"]["status"], "completed", "{result}");
    // The sub-agent saw the parent's task, and what it did is in the parent's list.
    let requests = model.requests();
    let listed = requests[1].messages().iter().find(|m| m["role"] == "tool").unwrap().clone();
    assert_eq!(listed["content"], "#1 [pending] Review the parser", "{listed}");
    let out = toolbelt(home, &root).arg("tasks").output().unwrap();
    let table = text(&out);
    assert!(table.contains("#1  completed  reviewer  -           Review the parser\n"), "{table}");
    assert!(table.contains("#2  pending    -         -           Fix the two bugs\n"), "{table}");
    assert_eq!(ok(home, &root, &[], "TaskGet", json!({"taskId": "1"}))["task"]["metadata"], json!({"found": 2}));
}

/// Runs `toolbelt batch` over `lines` in `root`; returns each result line.
fn batch(home: &Path, root: &Path, args: &[&str], lines: &[Value]) -> Vec<Value> {
    let mut child = toolbelt(home, root)
        .args(args)
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "batch failed: {}", String::from_utf8_lossy(&out.stderr));
    text(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn processes_writing_one_list_at_once_lose_nothing() {
    let (dir, root) = project();
    let home = dir.path();
    let list = ["--task-list", "crowd"];
    ok(home, &root, &list, "TaskCreate", json!({"subject": "Hub", "description": "everyone writes here"}));

    // Four processes at once: three `batch` runs and one loop of single `call`s. Each merges
    // its own metadata keys into task #1, adds tasks, and makes #1 block each one it added.
    const BATCHES: usize = 3;
    const EACH: usize = 20;
    const CALLS: usize = 6;
    std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for p in 0..BATCHES {
            let root = &root;
            workers.push(scope.spawn(move || {
                let mut lines = Vec::new();
                for i in 0..EACH {
                    let key = format!("p{p}-{i}");
                    lines.push(json!({"name": "TaskUpdate", "input": {"taskId": "1", "metadata": {key: i}}}));
                    lines.push(
                        json!({"name": "TaskCreate", "input": {"subject": format!("p{p}-{i}"), "description": ""}}),
                    );
                }
                let results = batch(home, root, &list, &lines);
                assert_eq!(results.len(), lines.len());
                let mut made = Vec::new();
                for r in &results {
                    assert_eq!(r["outcome"], "ok", "{r}");
                    if r["tool"] == "TaskCreate" {
                        made.push(r["structured"]["task"]["id"].as_str().unwrap().to_string());
                    }
                }
                let links: Vec<Value> = made
                    .iter()
                    .map(|id| json!({"name": "TaskUpdate", "input": {"taskId": "1", "addBlocks": [id]}}))
                    .collect();
                for r in batch(home, root, &list, &links) {
                    assert_eq!(r["outcome"], "ok", "{r}");
                }
            }));
        }
        let root = &root;
        workers.push(scope.spawn(move || {
            for i in 0..CALLS {
                let key = format!("call-{i}");
                ok(home, root, &list, "TaskUpdate", json!({"taskId": "1", "metadata": {key: true}}));
            }
        }));
        for w in workers {
            w.join().unwrap();
        }
    });

    let hub = ok(home, &root, &list, "TaskGet", json!({"taskId": "1"}));
    let metadata = hub["task"]["metadata"].as_object().unwrap();
    assert_eq!(metadata.len(), BATCHES * EACH + CALLS, "every merged key is there: {metadata:?}");
    assert_eq!(hub["task"]["blocks"].as_array().unwrap().len(), BATCHES * EACH, "every link is there");
    let listed = ok(home, &root, &list, "TaskList", json!({}));
    let ids: Vec<usize> =
        listed["tasks"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap().parse().unwrap()).collect();
    assert_eq!(ids, (1..=1 + BATCHES * EACH).collect::<Vec<_>>(), "every task, in id order, none lost or doubled");
}
