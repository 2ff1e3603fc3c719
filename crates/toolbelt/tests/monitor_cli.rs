//! `Monitor` through the real `toolbelt` binary: each stdout line an event (those within
//! 200 ms together) on `batch --events` and, over MCP, a log notification the Python SDK
//! client receives; `TaskOutput` waiting for the next lines; a flood stopped with a notice; a
//! time limit; `TaskStop` leaving nothing running; Bash's rules governing its commands.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;

use peers::{Peers, run, script, toolbelt};

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// Runs `calls` as one `toolbelt batch --events` session: every line it printed, parsed.
fn batch(root: &Path, args: &[&str], calls: &[Value]) -> Vec<Value> {
    let mut child = hermetic::toolbelt(root)
        .args(["batch", "--events"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for call in calls {
        writeln!(stdin, "{call}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// The task events among `lines`.
fn task_events(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["event"] == "task").collect()
}

/// The result line of call `id`.
fn result<'a>(lines: &'a [Value], id: &str) -> &'a Value {
    lines
        .iter()
        .find(|l| l["id"] == id && l.get("event").is_none())
        .unwrap_or_else(|| panic!("no result {id}: {lines:?}"))
}

fn text(result: &Value) -> String {
    result["content"][0]["text"].as_str().unwrap_or_default().to_string()
}

#[test]
fn each_line_is_an_event_and_lines_that_come_together_travel_together() {
    let (_dir, root) = project();
    let lines = batch(
        &root,
        &["--allow", "Monitor", "--allow", "Bash(sleep *)"],
        &[
            json!({"id": "m", "name": "Monitor", "input": {"command": "for i in 1 2 3; do echo l$i; sleep 0.4; done; printf 'a\\nb\\nc\\n'; exit 3", "description": "count"}}),
            json!({"id": "first", "name": "TaskOutput", "input": {"task_id": "monitor_1", "timeout": 5000}}),
            json!({"id": "wait", "name": "Bash", "input": {"command": "sleep 2"}}),
            json!({"id": "last", "name": "TaskOutput", "input": {"task_id": "monitor_1", "timeout": 5000}}),
        ],
    );
    let started = result(&lines, "m");
    assert_eq!(started["is_error"], false, "{started}");
    assert_eq!(started["structured"]["task_id"], "monitor_1");
    assert!(text(started).contains("TaskOutput{task_id: \"monitor_1\"}"), "{started}");

    let events = task_events(&lines);
    let texts: Vec<&str> = events.iter().map(|e| e["text"].as_str().unwrap()).collect();
    // Lines 0.4 s apart are events of their own; three printed at once are one.
    assert_eq!(texts[..4], ["l1", "l2", "l3", "a\nb\nc"], "{events:?}");
    assert!(events[..4].iter().all(|e| e["kind"] == "lines" && e["task_id"] == "monitor_1"));
    let end = events.last().unwrap();
    assert_eq!(end["kind"], "ended", "{events:?}");
    assert_eq!(end["exit_code"], 3);
    assert!(end["text"].as_str().unwrap().starts_with("exited with code 3"), "{end}");

    // The first read waited for the first line, not for the end.
    let first = result(&lines, "first");
    assert_eq!(first["structured"]["status"], "running", "{first}");
    assert_eq!(first["structured"]["output"], "l1\n", "{first}");
    // The events came before the later read's result, which says how it ended.
    let at = |pred: &dyn Fn(&Value) -> bool| lines.iter().position(pred).unwrap();
    assert!(
        at(&|l| l["event"] == "task" && l["kind"] == "ended") < at(&|l| l["id"] == "last" && l.get("event").is_none())
    );
    let last = result(&lines, "last");
    assert_eq!(last["structured"]["status"], "failed", "{last}");
    assert_eq!(last["structured"]["exit_code"], 3, "{last}");
    assert!(last["structured"]["output"].as_str().unwrap().ends_with("a\nb\nc\n"), "{last}");
}

#[test]
fn a_flood_is_stopped_with_a_notice_and_a_time_limit_ends_it() {
    let (_dir, root) = project();
    let lines = batch(
        &root,
        &["--allow", "Monitor", "--allow", "Bash(sleep *)"],
        &[
            json!({"id": "flood", "name": "Monitor", "input": {"command": "yes", "description": "flood"}}),
            json!({"id": "slow", "name": "Monitor", "input": {"command": "sleep 30", "description": "nothing", "timeout_ms": 500}}),
            json!({"id": "wait", "name": "Bash", "input": {"command": "sleep 3"}}),
            json!({"id": "tasks", "name": "BackgroundTasks", "input": {}}),
            json!({"id": "log", "name": "TaskOutput", "input": {"task_id": "monitor_1", "block": false}}),
        ],
    );
    let events = task_events(&lines);
    let notice = events.iter().find(|e| e["task_id"] == "monitor_1" && e["kind"] == "notice").expect("a notice");
    assert!(notice["text"].as_str().unwrap().contains("lines (or 256 KiB) a second"), "{notice}");
    assert!(notice["text"].as_str().unwrap().contains("grep --line-buffered"), "{notice}");
    assert!(events.iter().any(|e| e["task_id"] == "monitor_1" && e["kind"] == "ended"));
    let timed = events.iter().find(|e| e["task_id"] == "monitor_2" && e["kind"] == "ended").expect("an end");
    assert!(timed["text"].as_str().unwrap().starts_with("timed out after 500 ms"), "{timed}");

    let tasks = &result(&lines, "tasks")["structured"];
    assert_eq!(tasks["running"], 0, "{tasks}");
    assert!(tasks["tasks"].as_array().unwrap().iter().all(|t| t["status"] == "killed"), "{tasks}");
    // The log says why it stopped, after what it printed.
    let log = std::fs::read_to_string(result(&lines, "log")["structured"]["log_file"].as_str().unwrap()).unwrap();
    assert!(log.starts_with("y\ny\n"), "{}", &log[..20]);
    assert!(log.trim_end().ends_with("and start it again"), "{}", &log[log.len() - 300..]);
}

#[test]
fn task_stop_ends_a_persistent_monitor_and_everything_it_started() {
    let (_dir, root) = project();
    let lines = batch(
        &root,
        &["--allow", "Monitor"],
        &[
            json!({"id": "m", "name": "Monitor", "input": {"command": "(sleep 297 &) ; while true; do echo tick; sleep 0.2; done", "description": "ticks", "persistent": true}}),
            json!({"id": "read", "name": "TaskOutput", "input": {"task_id": "monitor_1"}}),
            json!({"id": "stop", "name": "TaskStop", "input": {"task_id": "monitor_1"}}),
            json!({"id": "left", "name": "Process", "input": {"action": "list", "name": "sleep 297"}}),
        ],
    );
    assert_eq!(result(&lines, "m")["structured"]["persistent"], true);
    assert!(result(&lines, "m")["structured"].get("timeout_ms").is_none());
    assert!(result(&lines, "read")["structured"]["output"].as_str().unwrap().starts_with("tick\n"));
    assert_eq!(result(&lines, "stop")["structured"]["stopped"], true, "{lines:?}");
    let left = &result(&lines, "left")["structured"];
    assert!(left.get("processes").is_none(), "a process of the monitor survived: {left}");
}

#[test]
fn bash_rules_govern_its_commands() {
    let (_dir, root) = project();
    let run = |args: &[&str], command: &str| {
        let input = json!({"command": command, "description": "watch"}).to_string();
        let out = hermetic::toolbelt(&root).args(args).args(["call", "--json", "Monitor", &input]).output().unwrap();
        (serde_json::from_str::<Value>(&String::from_utf8_lossy(&out.stdout)).unwrap(), out.status.code())
    };
    // A Bash deny rule refuses the same command in a monitor, however it is dressed.
    let (denied, code) =
        run(&["--allow", "Monitor", "--deny", "Bash(curl *)"], "while true; do command curl -s x; done");
    assert_eq!(code, Some(1), "{denied}");
    assert!(text(&denied).contains("Bash(curl *)"), "{denied}");
    // A Bash allow rule allows it; without one, it asks (nobody here to answer).
    let (allowed, code) = run(&["--allow", "Bash(touch *)"], "touch watched");
    assert_eq!(code, Some(0), "{allowed}");
    let (asked, code) = run(&[], "touch watched");
    assert_eq!(code, Some(1), "{asked}");
    assert!(text(&asked).contains("--allow 'Monitor(touch *)'"), "{asked}");
    // The deny list of catastrophic commands holds too.
    let (refused, _) = run(&["--allow", "Monitor"], "rm -rf /");
    assert!(text(&refused).starts_with("Refused"), "{refused}");
    // A bare deny of Bash by one of its other names reaches Monitor too.
    let (hidden, code) = run(&["--allow", "Monitor", "--deny", "exec"], "tail -f x");
    assert_eq!(code, Some(1), "{hidden}");
    // So does a hook that vets Bash's commands.
    let settings = root.join(".test-home/.config/toolbelt");
    std::fs::create_dir_all(&settings).unwrap();
    std::fs::write(
        settings.join("config.toml"),
        "[[hooks.PreToolUse]]\nmatcher = \"Bash\"\nhooks = [{ type = \"command\", command = \"echo no monitors here >&2; exit 2\" }]\n",
    )
    .unwrap();
    let (hooked, code) = run(&["--allow", "Monitor"], "tail -f x");
    assert_eq!(code, Some(1), "{hooked}");
    assert!(text(&hooked).contains("no monitors here"), "{hooked}");
}

#[test]
fn the_python_sdk_client_gets_the_lines_as_log_notifications_and_reads_them() {
    let Some(peers) = Peers::find() else { return };
    for mode in ["legacy", "auto"] {
        let (_dir, root) = project();
        let mut cmd = Command::new(peers.python());
        cmd.arg(script("monitor_client.py")).arg(mode).arg(toolbelt()).arg(&root);
        let seen = run(cmd, &root, "");
        assert_eq!(seen["started"][0], false, "{seen}");
        // TaskOutput returns the lines as they come, then how it ended (both modes).
        let outputs = seen["outputs"].as_array().unwrap();
        let read: String = outputs.iter().map(|o| o["output"].as_str().unwrap_or_default()).collect();
        assert_eq!(read, "line1\nline2\nline3\n", "{seen}");
        assert!(outputs.len() >= 2, "TaskOutput waited for the end instead of the next lines: {seen}");
        assert_eq!(outputs.last().unwrap()["exit_code"], 4, "{seen}");
        if mode == "legacy" {
            assert_eq!(seen["era"], "legacy", "{seen}");
            let logs = seen["logs"].as_array().unwrap();
            let lines: Vec<&Value> = logs.iter().filter(|l| l["logger"] == "toolbelt/monitor_1").collect();
            let texts: Vec<&str> = lines.iter().map(|l| l["data"]["text"].as_str().unwrap()).collect();
            assert_eq!(texts.len(), 4, "{seen}");
            assert_eq!(texts[..3], ["line1", "line2", "line3"], "{seen}");
            assert!(texts[3].starts_with("exited with code 4 after"), "{seen}");
            assert_eq!(lines.last().unwrap()["data"]["kind"], "ended", "{seen}");
            assert_eq!(lines.last().unwrap()["data"]["exit_code"], 4, "{seen}");
        }
    }
}
