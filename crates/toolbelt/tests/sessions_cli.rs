//! Interactive sessions through the real binary, over MCP stdio: `Bash` with `tty` or
//! `yield_time_ms` yields a session `WriteStdin` types into — a Python REPL for several turns,
//! `git rebase -i` finished in its editor, Ctrl-C inside a shell, a curses program's screen —
//! and the limits around them: typed lines judged as commands (a denied one refused, plan mode
//! letting only reads through), the cap on sessions, the idle limit ending a session with its
//! processes. And with the official Python SDK over Streamable HTTP: the REPL read from the
//! text and from `structuredContent`, and a session another MCP session cannot type into.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;
#[path = "common/peers.rs"]
mod peers;
#[path = "common/stdio_mcp.rs"]
mod stdio_mcp;

use stdio_mcp::StdioMcp;

fn project() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("app");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    (dir, root)
}

/// Lets every command run (the tests of judgement say what they allow).
const ALLOW: &[&str] = &["--allow", "Bash"];

/// The server in `root` with `args` before `mcp` and settings as `TOOLBELT_*` variables.
fn server(root: &Path, args: &[&str], env: &[(&str, &str)]) -> StdioMcp {
    let mut cmd = hermetic::toolbelt(root);
    // No editor of the machine's: git falls back to `vi`, as on a fresh account.
    for name in ["EDITOR", "VISUAL", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR"] {
        cmd.env_remove(name);
    }
    cmd.envs(env.iter().copied()).args(args).arg("mcp");
    StdioMcp::start(cmd)
}

/// A tool's answer: its text, its structured content, whether it is an error.
struct Answer {
    text: String,
    data: Value,
    error: bool,
}

fn call(mcp: &mut StdioMcp, name: &str, arguments: Value) -> Answer {
    let answer = mcp.call(name, arguments);
    let result = &answer["result"];
    let text = result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect();
    Answer { text, data: result["structuredContent"].clone(), error: result["isError"] == true }
}

/// Starts `command` as a session (with a terminal when `tty`); its id and first output.
fn start(mcp: &mut StdioMcp, command: &str, tty: bool) -> (String, String) {
    let started = call(mcp, "Bash", json!({"command": command, "tty": tty, "yield_time_ms": 300}));
    assert!(!started.error, "{}", started.text);
    let id = started.data["session_id"].as_str().unwrap_or_else(|| panic!("no session: {}", started.text)).to_string();
    assert_eq!(started.data["task_id"], id.as_str());
    (id, started.data["stdout"].as_str().unwrap().to_string())
}

/// Reads session `id`'s screen until it shows `want` (at most 20 s).
fn shows(mcp: &mut StdioMcp, id: &str, want: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let answer = call(mcp, "WriteStdin", json!({"session_id": id, "yield_time_ms": 100, "screen": true}));
        let screen = answer.data["screen"].as_str().unwrap_or_default().to_string();
        if screen.contains(want) {
            return screen;
        }
        assert!(Instant::now() < deadline, "the screen never showed {want:?}: {screen}\n{}", answer.text);
    }
}

/// Types `chars` into session `id`, then reads until what came since contains `want` (at most
/// 20 s); everything read, from the text the model sees and from the structured output.
fn until(mcp: &mut StdioMcp, id: &str, chars: &str, want: &str) -> (String, Value) {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut first = true;
    let (mut text, mut output) = (String::new(), String::new());
    loop {
        let typed = if first { chars } else { "" };
        let answer = call(mcp, "WriteStdin", json!({"session_id": id, "chars": typed, "yield_time_ms": 200}));
        assert!(!answer.error, "{}", answer.text);
        first = false;
        text.push_str(&answer.text);
        output.push_str(answer.data["output"].as_str().unwrap());
        if output.contains(want) || answer.data["running"] == false || Instant::now() > deadline {
            assert!(text.contains(want), "the text lacks {want:?}: {text}");
            assert!(output.contains(want), "the structured output lacks {want:?}: {output}");
            return (output, answer.data);
        }
    }
}

#[test]
fn a_python_repl_is_driven_for_several_turns() {
    let (_dir, root) = project();
    let mut mcp = server(&root, ALLOW, &[]);
    let (answer, seen) = mcp.request_seeing(
        "tools/call",
        json!({"name": "Bash", "arguments": {"command": "python3", "tty": true, "yield_time_ms": 1500},
               "_meta": {"progressToken": "p1"}}),
    );
    let id = answer["result"]["structuredContent"]["session_id"].as_str().unwrap().to_string();
    assert!(
        seen.iter().any(|m| m["method"] == "notifications/progress" && m["params"]["progressToken"] == "p1"),
        "output streams as progress: {seen:?}"
    );
    shows(&mut mcp, &id, ">>>");
    until(&mut mcp, &id, "x = 41\n", ">>>");
    let (output, _) = until(&mut mcp, &id, "x + 1\n", "42");
    assert!(output.contains(">>> x + 1\n42"), "{output}");
    let (_, data) = until(&mut mcp, &id, "exit()\n", "exit()");
    let ended = if data["running"] == true { until(&mut mcp, &id, "", "").1 } else { data };
    assert_eq!(ended["exit_code"], 0, "{ended}");
    let listed = call(&mut mcp, "BackgroundTasks", json!({}));
    assert!(listed.text.contains(&id) && listed.text.contains("completed"), "{}", listed.text);
}

#[test]
fn git_rebase_i_is_finished_by_typing_into_the_editor() {
    assert!(Command::new("vi").arg("--version").output().is_ok(), "this test needs `vi` (Debian's vim-tiny)");
    let (_dir, root) = project();
    std::fs::remove_dir_all(root.join(".git")).unwrap();
    let git = |args: &[&str]| {
        let out = hermetic::isolate(&mut Command::new("git"), &root.join(".test-home"))
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .current_dir(&root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    git(&["init", "-q"]);
    for n in ["one", "two", "three"] {
        std::fs::write(root.join(n), n).unwrap();
        git(&["add", n]);
        git(&["commit", "-qm", n]);
    }
    let mut mcp = server(&root, ALLOW, &[("TOOLBELT_SANDBOX__GIT_WRITES", "true")]);
    let command = "git -c user.name=t -c user.email=t@example.com rebase -i HEAD~2";
    let (id, _) = start(&mut mcp, command, true);
    shows(&mut mcp, &id, "pick");
    // The todo list, then the message of the squashed commit: two editors, one session.
    until(&mut mcp, &id, ":2s/^pick/squash/\r:wq\r", "This is a combination of 2 commits");
    let (output, data) = until(&mut mcp, &id, ":wq\r", "Successfully rebased");
    let data = if data["running"] == true { until(&mut mcp, &id, "", "").1 } else { data };
    assert_eq!(data["exit_code"], 0, "{output}");
    assert_eq!(git(&["log", "--format=%s"]).lines().count(), 2, "two and three were squashed");
}

#[test]
fn ctrl_c_interrupts_a_command_inside_a_shell_session() {
    let (_dir, root) = project();
    let mut mcp = server(&root, ALLOW, &[]);
    let (id, _) = start(&mut mcp, "bash --norc", true);
    until(&mut mcp, &id, "sleep 30 && echo not-interrupted\n", "sleep 30");
    let started = Instant::now();
    let (output, data) = until(&mut mcp, &id, "\u{3}echo back-$((40+2))\n", "back-42");
    assert!(started.elapsed() < Duration::from_secs(15), "Ctrl-C did not stop the sleep");
    assert!(!output.contains("not-interrupted"), "{output}");
    assert_eq!(data["running"], true, "the shell lives on");
    let stopped = call(&mut mcp, "TaskStop", json!({"task_id": id}));
    assert!(stopped.text.contains("Stopped"), "{}", stopped.text);
}

/// A curses menu: the choice under `>` moves with the arrow keys; Enter picks it.
const MENU: &str = r#"
import curses
def main(screen):
    fruits = ["apple", "banana", "cherry"]
    at = 0
    while True:
        screen.clear()
        screen.addstr(1, 4, "Pick a fruit")
        for i, fruit in enumerate(fruits):
            screen.addstr(3 + i, 4, ("> " if i == at else "  ") + fruit)
        screen.refresh()
        key = screen.getch()
        if key == curses.KEY_DOWN:
            at = min(at + 1, 2)
        elif key in (10, 13, curses.KEY_ENTER):
            return fruits[at]
print("chose", curses.wrapper(main))
"#;

#[test]
fn a_curses_program_s_screen_reads_back() {
    let (_dir, root) = project();
    std::fs::write(root.join("menu.py"), MENU).unwrap();
    let mut mcp = server(&root, ALLOW, &[]);
    let (id, _) = start(&mut mcp, "python3 menu.py", true);
    shows(&mut mcp, &id, "Pick a fruit");
    let down = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "\u{1b}[B", "screen": true}));
    let screen = down.data["screen"].as_str().unwrap();
    let rows: Vec<&str> = screen.lines().collect();
    assert_eq!(rows.get(1).copied(), Some("    Pick a fruit"), "{screen}");
    assert_eq!(rows.get(4).copied(), Some("    > banana"), "{screen}");
    assert!(down.text.contains("[screen]") && down.text.contains("    > banana"), "{}", down.text);
    let (output, data) = until(&mut mcp, &id, "\r", "chose banana");
    let data = if data["running"] == true { until(&mut mcp, &id, "", "").1 } else { data };
    assert_eq!(data["exit_code"], 0, "{output}");
}

#[test]
fn an_idle_session_is_ended_with_its_processes() {
    let (_dir, root) = project();
    let mut mcp = server(&root, ALLOW, &[("TOOLBELT_SHELL__SESSION_IDLE_TIMEOUT", "1")]);
    let (id, first) = start(&mut mcp, "sleep 300 & echo child=$!; cat", false);
    let child: i32 = first.trim().strip_prefix("child=").unwrap_or_else(|| panic!("{first}")).parse().unwrap();
    let alive = |pid: i32| {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')))
    };
    assert!(alive(child));
    let deadline = Instant::now() + Duration::from_secs(20);
    let listed = loop {
        std::thread::sleep(Duration::from_millis(500));
        let listed = call(&mut mcp, "BackgroundTasks", json!({}));
        if !listed.text.contains("running") || Instant::now() > deadline {
            break listed;
        }
    };
    assert!(listed.text.contains(&format!("{id}  killed")), "{}", listed.text);
    assert!(!alive(child), "the session's background process was killed with it");
    let read = call(&mut mcp, "TaskOutput", json!({"task_id": id, "block": false}));
    assert!(read.text.contains("session_idle_timeout"), "{}", read.text);
    let typed = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "x\n"}));
    assert!(typed.error && typed.text.contains("ended"), "{}", typed.text);
}

#[test]
fn a_denied_line_is_refused_in_a_shell_session() {
    let (_dir, root) = project();
    let mut mcp = server(&root, &["--allow", "Bash", "--deny", "Bash(touch:*)"], &[]);
    let (id, _) = start(&mut mcp, "bash --norc", true);
    shows(&mut mcp, &id, "bash-");
    let typed = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "touch made-1\n"}));
    assert!(typed.error && typed.text.contains("touch"), "{}", typed.text);
    let typed = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "rm -rf /\n"}));
    assert!(typed.error && typed.text.starts_with("Refused"), "{}", typed.text);
    // Split over two calls with a line continuation: one of them is refused, so the shell
    // never runs `touch`.
    let first = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "to\\\n"}));
    let second = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "uch made-2\n"}));
    assert!(first.error || second.error, "{}\n{}", first.text, second.text);
    // History recall would run an earlier line that is not the text typed.
    let recalled = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "\u{1b}[A\n"}));
    assert!(recalled.error && recalled.text.contains("editing key"), "{}", recalled.text);
    // What was refused never reached the shell, which still runs. (Once it was given a line
    // not proven read-only, every later line asks while a rule about commands exists.)
    let polled = call(&mut mcp, "WriteStdin", json!({"session_id": id}));
    assert_eq!(polled.data["running"], true, "{}", polled.text);
    let later = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "\u{3}echo later\n"}));
    assert!(later.error && later.text.contains("may have changed what later lines run"), "{}", later.text);
    assert!(!root.join("made-1").exists() && !root.join("made-2").exists());
}

#[test]
fn plan_mode_lets_only_read_only_lines_through() {
    let (_dir, root) = project();
    // The rule allows starting the shell, and nothing else.
    let mut mcp = server(&root, &["--allow", "Bash(bash --norc)"], &[]);
    let (id, _) = start(&mut mcp, "bash --norc", true);
    let entered = call(&mut mcp, "EnterPlanMode", json!({}));
    assert!(!entered.error, "{}", entered.text);
    until(&mut mcp, &id, "ls -a\n", ".git");
    let written = call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "touch made.txt\n"}));
    assert!(written.error, "{}", written.text);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!root.join("made.txt").exists());
}

#[test]
fn sessions_are_capped_listed_and_stopped() {
    let (_dir, root) = project();
    let mut mcp = server(&root, ALLOW, &[("TOOLBELT_SHELL__MAX_SESSIONS", "2")]);
    let (first, _) = start(&mut mcp, "cat", false);
    start(&mut mcp, "cat", true);
    let third = call(&mut mcp, "Bash", json!({"command": "cat", "tty": true, "yield_time_ms": 100}));
    assert!(third.error && third.text.contains("shell.max_sessions"), "{}", third.text);
    let stopped = call(&mut mcp, "TaskStop", json!({"task_id": first}));
    assert!(stopped.text.contains("Stopped"), "{}", stopped.text);
    start(&mut mcp, "cat", true);
}

#[test]
fn without_a_terminal_input_comes_through_a_pipe() {
    let (_dir, root) = project();
    let mut mcp = server(&root, ALLOW, &[]);
    let (id, _) = start(&mut mcp, "cat", false);
    until(&mut mcp, &id, "hello pipe\n", "hello pipe");
    // TaskOutput waits for a session's next output, not for its end.
    call(&mut mcp, "WriteStdin", json!({"session_id": id, "chars": "again\n", "yield_time_ms": 0}));
    let started = Instant::now();
    let read = call(&mut mcp, "TaskOutput", json!({"task_id": id}));
    assert!(started.elapsed() < Duration::from_secs(10) && read.data["output"] == "again\n", "{}", read.text);
    let closed = call(&mut mcp, "WriteStdin", json!({"session_id": id, "close_stdin": true, "yield_time_ms": 5000}));
    assert_eq!(closed.data["exit_code"], 0, "{}", closed.text);
    assert!(closed.text.contains("ended with exit code 0"), "{}", closed.text);
    // A command that ends within its yield answers as any command does, with no session.
    let quick = call(&mut mcp, "Bash", json!({"command": "printf 'quick\\n'; exit 3", "tty": true}));
    assert_eq!(quick.data["exit_code"], 3, "{}", quick.text);
    assert!(quick.data.get("session_id").is_none() && quick.text.contains("quick"), "{}", quick.text);
}

#[test]
fn the_python_sdk_drives_a_repl_over_http_and_another_mcp_session_cannot_type_into_it() {
    let Some(peers) = peers::Peers::find() else { return };
    let (_dir, root) = peers::project();
    let mut cmd = Command::new(peers.python());
    // A 2025 session of its own for each client (a 2026-07-28 client has no protocol
    // session: its sessions are its token's).
    cmd.arg(peers::script("session_client.py")).arg(peers::toolbelt()).arg(&root).arg("legacy");
    let seen = peers::run(cmd, &root, "");
    assert!(seen["started"]["stdout"].as_str().unwrap().contains(">>>"), "{seen}");
    let last = &seen["turns"][1];
    for part in ["text", "output"] {
        assert!(last[part].as_str().unwrap().contains(">>> x + 1\n42\n>>>"), "{part}: {seen}");
    }
    assert!(seen["progress"].as_array().is_some_and(|p| !p.is_empty()), "{seen}");
    assert_eq!(seen["other"]["is_error"], true, "{seen}");
    assert!(seen["other"]["text"].as_str().unwrap().contains("no running session"), "{seen}");
    assert!(seen["stopped"].as_str().unwrap().starts_with("Stopped"), "{seen}");
}
