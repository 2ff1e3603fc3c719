//! `toolbelt mcp` over stdio under a client that pipelines far more calls than it waits for.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write as _};
use std::process::Stdio;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// The server's peak memory so far, in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Writes `calls` small Reads at once (ids from `first`), then reads every answer; checks each
/// id is answered once, with the file's text.
fn flood(stdin: &mut (impl std::io::Write + Send), stdout: &mut impl BufRead, first: u64, calls: u64) {
    let path = "small.txt";
    let payload: String = (first..first + calls)
        .map(|id| {
            let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "Read", "arguments": {"file_path": path}}});
            format!("{call}\n")
        })
        .collect();
    std::thread::scope(|s| {
        s.spawn(|| {
            stdin.write_all(payload.as_bytes()).unwrap();
            stdin.flush().unwrap();
        });
        let mut seen = BTreeSet::new();
        for _ in 0..calls {
            let mut line = String::new();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "the server stopped answering");
            let answer: Value = serde_json::from_str(&line).unwrap();
            let id = answer["id"].as_u64().unwrap();
            assert!(answer["result"]["isError"] != true, "{answer}");
            assert!(answer["result"]["content"][0]["text"].as_str().unwrap().contains("needle"), "{answer}");
            assert!(seen.insert(id), "answered twice: {id}");
        }
        assert_eq!(seen, (first..first + calls).collect::<BTreeSet<_>>());
    });
}

/// A server in a new project (kept by the returned directory), after `initialize` declaring
/// `capabilities` and `notifications/initialized`.
struct Server {
    _dir: tempfile::TempDir,
    root: std::path::PathBuf,
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

fn serve(capabilities: Value) -> Server {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("small.txt"), "a needle in a small file\n").unwrap();
    let mut child = hermetic::toolbelt_with_home(&root, &root.join("home"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "raw", "version": "1"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).unwrap();
    Server { _dir: dir, root, child, stdin, stdout }
}

#[test]
fn a_flood_of_pipelined_calls_is_answered_in_full_in_bounded_memory() {
    let Server { _dir, root: _, mut child, mut stdin, mut stdout } = serve(json!({}));

    flood(&mut stdin, &mut stdout, 1, 500);
    let after_few = peak_kib(child.id());
    flood(&mut stdin, &mut stdout, 1_000, 8_000);
    let after_many = peak_kib(child.id());
    // rmcp starts a task per request read: unbounded, eight thousand calls read at once held
    // some 60 MB more than five hundred did. At most 256 are answered at once now.
    assert!(
        after_many < after_few + 24 * 1024,
        "peak memory grew from {after_few} KiB to {after_many} KiB with the flood"
    );

    // Calls pipelined and the input closed at once are all answered before the server ends.
    let payload: String = (1..=600)
        .map(|id| {
            let call = json!({"jsonrpc": "2.0", "id": 50_000 + id, "method": "tools/call",
                "params": {"name": "Read", "arguments": {"file_path": "small.txt"}}});
            format!("{call}\n")
        })
        .collect();
    stdin.write_all(payload.as_bytes()).unwrap();
    drop(stdin);
    let answered = stdout.lines().map(Result::unwrap).filter(|l| l.contains("needle")).count();
    assert_eq!(answered, 600, "every call written before the input closed is answered");
    assert!(child.wait().unwrap().success());
}

#[test]
fn calls_waiting_on_the_client_are_answered_while_others_are_held() {
    // More calls than are answered at once, each asking the client's approval: the approvals
    // travel on the same input as the held calls, so reading must go on past them.
    let Server { _dir, root, mut child, mut stdin, mut stdout } = serve(json!({"elicitation": {}}));
    let pid = child.id();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watchdog = {
        let done = std::sync::Arc::clone(&done);
        std::thread::spawn(move || {
            for _ in 0..1200 {
                if done.load(std::sync::atomic::Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            // Stuck: end the server so the test fails instead of hanging.
            let _ = std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status();
        })
    };
    let mut line = String::new();
    let calls = 300;
    for id in 1..=calls {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Write", "arguments": {"file_path": format!("out/{id}.txt"), "content": "x\n"}}});
        writeln!(stdin, "{call}").unwrap();
    }
    stdin.flush().unwrap();
    let (mut answered, mut asked) = (0, 0);
    while answered < calls {
        line.clear();
        assert!(stdout.read_line(&mut line).unwrap() > 0, "the server stopped after {answered} answers");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "elicitation/create" {
            asked += 1;
            let result = json!({"action": "accept", "content": {"decision": "allow_once"}});
            writeln!(stdin, "{}", json!({"jsonrpc": "2.0", "id": message["id"], "result": result})).unwrap();
            stdin.flush().unwrap();
        } else if message.get("method").is_some() && message.get("id").is_some() {
            let no = json!({"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": "no"}});
            writeln!(stdin, "{no}").unwrap();
            stdin.flush().unwrap();
        } else if message.get("id").is_some() {
            assert!(message["result"]["isError"] != true, "{message}");
            answered += 1;
        }
    }
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    watchdog.join().unwrap();
    assert_eq!(asked, calls, "each write was approved by the client");
    assert_eq!(std::fs::read_dir(root.join("out")).unwrap().count(), calls as usize);
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_root_replaced_between_calls_is_read_where_its_path_now_leads() {
    // The server keeps each root's directory handle between calls; a root moved away and made
    // again (perhaps with the same inode number) must be opened afresh, not read from the old.
    let Server { _dir, root, mut child, mut stdin, mut stdout } = serve(json!({}));
    let mut read = |id: u64| {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "Read", "arguments": {"file_path": root.join("small.txt")}}});
        writeln!(stdin, "{call}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()["result"]["content"][0]["text"].as_str().unwrap().to_string()
    };
    assert!(read(1).contains("a needle in a small file"));
    let old = root.with_file_name(format!("{}-old", root.file_name().unwrap().to_string_lossy()));
    std::fs::rename(&root, &old).unwrap();
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("small.txt"), "the new root's file\n").unwrap();
    let text = read(2);
    assert!(text.contains("the new root's file"), "{text}");
    std::fs::remove_dir_all(&root).unwrap();
    std::fs::rename(&old, &root).unwrap();
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
