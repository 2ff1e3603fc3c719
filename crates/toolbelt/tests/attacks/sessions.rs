//! Interactive sessions (`Bash` with `tty`, typed into with `WriteStdin`).
//!
//! * A shell runs lines that are not the text typed: history expansion (`^echo ^` runs the
//!   previous line without its `echo`), history recall with line editing, and a command
//!   continued over two writes. Each would carry a denied command past a rule that judges the
//!   text; each is refused, and the shell runs nothing of it.
//! * A session's terminal reaches no other command: the other side of its pseudo-terminal
//!   stays with toolbelt and the session's own processes.
//! * A session outlives nothing: when the server ends, so does every process it started.

use serde_json::{Value, json};

use crate::World;

fn typed(chars: &str) -> Value {
    json!({"name": "WriteStdin", "input": {"session_id": "session_1", "chars": chars, "yield_time_ms": 300}})
}

fn text(result: &Value) -> String {
    result["content"].as_array().unwrap().iter().filter_map(|c| c["text"].as_str()).collect()
}

#[test]
fn typed_lines_that_run_other_text_cannot_carry_a_denied_command() {
    let w = World::new();
    // The attack is real: an interactive bash runs `^echo ^` as the previous line minus `echo `.
    let proof = w.batch(
        &[json!({"name": "Bash", "input": {"command": "printf 'echo touch by-history\\n^echo ^\\n' | bash --norc -i"}})],
        &["--allow", "Bash"],
    );
    assert!(w.root.join("by-history").exists(), "{}", text(&proof[0]));

    let start = json!({"name": "Bash", "input": {"command": "bash --norc", "tty": true, "yield_time_ms": 500}});
    let lines = [
        start,
        typed("echo touch made-1\n"),
        typed("^echo ^\n"),
        typed("!!:s/echo //\n"),
        // Up, Home, then Delete five times: `touch made-1`.
        typed("\u{1b}[A\u{1b}[H\u{1b}[3~\u{1b}[3~\u{1b}[3~\u{1b}[3~\u{1b}[3~\n"),
        typed("to\\\n"),
        typed("uch made-2\n"),
        json!({"name": "WriteStdin", "input": {"session_id": "session_1"}}),
    ];
    let results = w.batch(&lines, &["--allow", "Bash", "--deny", "Bash(touch:*)"]);
    for (i, result) in results.iter().enumerate().skip(2).take(3) {
        assert_eq!(result["is_error"], true, "line {i}: {}", text(result));
    }
    assert!(
        results[5]["is_error"] == true || results[6]["is_error"] == true,
        "{}\n{}",
        text(&results[5]),
        text(&results[6])
    );
    assert!(text(&results[7]).contains("still running"), "{}", text(&results[7]));
    for made in ["made-1", "made-2"] {
        assert!(!w.root.join(made).exists(), "{made} was made");
    }
}

#[test]
fn a_session_s_terminal_reaches_no_other_command() {
    let w = World::new();
    let lines = [
        json!({"name": "Bash", "input": {"command": "cat", "tty": true, "yield_time_ms": 300}}),
        json!({"name": "Bash", "input": {"command": "ls -l /proc/self/fd/ /proc/$PPID/fd/ 2>&1; tty"}}),
    ];
    let results = w.batch(&lines, &["--allow", "Bash"]);
    let listing = text(&results[1]);
    assert!(listing.contains("not a tty"), "{listing}");
    assert!(!listing.contains("/dev/pts") && !listing.contains("ptmx"), "{listing}");
}

#[test]
fn a_session_s_processes_end_with_the_server() {
    let w = World::new();
    let lines = [json!({"name": "Bash", "input": {
        "command": "sleep 300 & echo child=$!; cat", "tty": true, "yield_time_ms": 500}})];
    let results = w.batch(&lines, &["--allow", "Bash"]);
    let out = text(&results[0]);
    let child: i32 =
        out.lines().find_map(|l| l.trim().strip_prefix("child=")).unwrap_or_else(|| panic!("{out}")).parse().unwrap();
    let alive = std::fs::read_to_string(format!("/proc/{child}/stat"))
        .is_ok_and(|s| s.rsplit(')').next().is_some_and(|rest| !rest.trim_start().starts_with('Z')));
    assert!(!alive, "the session's `sleep` outlived the server");
}

#[test]
fn keys_a_model_reads_differently_from_the_program_cannot_carry_a_denied_command() {
    let w = World::new();
    let session = |command: &str, tty: bool| json!({"name": "Bash", "input": {"command": command, "tty": tty, "yield_time_ms": 500}});
    let typed_in = |id: &str, chars: &str| json!({"name": "WriteStdin", "input": {"session_id": id, "chars": chars, "yield_time_ms": 300}});
    let lines = [
        // Through a pipe, Ctrl-U deletes nothing: bash reads `touch` as written.
        session("bash", false),
        typed_in("session_1", "touch made-1;\u{15}echo hi\n"),
        // End of file hands bash a last line that never ended.
        json!({"name": "WriteStdin", "input": {"session_id": "session_1", "chars": "touch made-2", "close_stdin": true}}),
        // Ctrl-O runs the line in bash's line editor, with no Enter.
        session("bash --norc", true),
        typed_in("session_2", "touch made-3\u{f}"),
        // A line typed in two calls judged before either ran: the second is judged again.
        typed_in("session_2", "tou"),
        typed_in("session_2", "ch made-4\n"),
        // Typed ahead while `sleep` reads the terminal: bash reads it next.
        typed_in("session_2", "\u{3}sleep 2\n"),
        typed_in("session_2", "touch made-5\n"),
    ];
    let results = w.batch(&lines, &["--allow", "Bash", "--deny", "Bash(touch:*)"]);
    for i in [1, 2, 4, 6, 8] {
        assert_eq!(results[i]["is_error"], true, "line {i}: {}", text(&results[i]));
    }
    std::thread::sleep(std::time::Duration::from_millis(2500));
    for made in ["made-1", "made-2", "made-3", "made-4", "made-5"] {
        assert!(!w.root.join(made).exists(), "{made} was made");
    }
}
