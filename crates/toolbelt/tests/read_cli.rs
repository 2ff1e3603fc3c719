//! Read through the binary: where a file read really is (what Edit checks against), and the
//! files read on the calling thread or on the blocking pool.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// Runs `calls` (name, input) as one batch in `dir`, edits allowed; the answers, in order.
fn batch(dir: &Path, calls: &[(&str, Value)]) -> Vec<Value> {
    let input: String =
        calls.iter().map(|(name, input)| format!("{}\n", json!({"name": name, "input": input}))).collect();
    let out = hermetic::toolbelt(dir)
        .args(["batch", "--mode", "acceptEdits"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write as _;
            child.stdin.take().unwrap().write_all(input.as_bytes())?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn text(answer: &Value) -> &str {
    answer["content"][0]["text"].as_str().unwrap_or_default()
}

#[test]
fn a_file_read_through_links_is_known_by_its_real_name() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(project.join("real")).unwrap();
    std::fs::write(project.join("real/a.txt"), "one\n").unwrap();
    std::os::unix::fs::symlink("real", project.join("link")).unwrap();
    // The project itself reached through a symlink, as a cwd often is.
    std::os::unix::fs::symlink(&project, tmp.path().join("here")).unwrap();
    let answers = batch(
        &tmp.path().join("here"),
        &[
            ("Read", json!({"file_path": "link/a.txt"})),
            // Read through a link: editing it by its real name needs no second read.
            ("Edit", json!({"file_path": "real/a.txt", "old_string": "one", "new_string": "two"})),
            ("Read", json!({"file_path": "real/../link/a.txt"})),
            ("Edit", json!({"file_path": "link/a.txt", "old_string": "two", "new_string": "three"})),
        ],
    );
    let outcomes: Vec<&str> = answers.iter().map(|a| a["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "ok", "ok", "ok"], "{answers:#?}");
    assert!(text(&answers[2]).contains("two"), "{}", text(&answers[2]));
    assert_eq!(std::fs::read_to_string(project.join("real/a.txt")).unwrap(), "three\n");
}

#[test]
fn large_and_hard_linked_files_are_read_whole() {
    let tmp = tempfile::tempdir().unwrap();
    // Past what is read on the calling thread (64 KiB): read on the blocking pool.
    let lines: Vec<String> = (1..=20_000).map(|i| format!("line {i}")).collect();
    std::fs::write(tmp.path().join("big.txt"), lines.join("\n") + "\n").unwrap();
    // Small, but with two names (both inside): its other names are looked for off the
    // calling thread.
    std::fs::write(tmp.path().join("one.txt"), "same file\n").unwrap();
    std::fs::hard_link(tmp.path().join("one.txt"), tmp.path().join("two.txt")).unwrap();
    let answers = batch(
        tmp.path(),
        &[
            ("Read", json!({"file_path": "big.txt", "offset": 19_999, "limit": 5})),
            ("Read", json!({"file_path": "two.txt"})),
            ("Edit", json!({"file_path": "two.txt", "old_string": "same", "new_string": "one"})),
        ],
    );
    let outcomes: Vec<&str> = answers.iter().map(|a| a["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["ok", "ok", "ok"], "{answers:#?}");
    let big = text(&answers[0]);
    assert!(big.contains("19999\tline 19999") && big.contains("20000\tline 20000"), "{big}");
    assert!(text(&answers[1]).contains("same file"));
    assert_eq!(std::fs::read_to_string(tmp.path().join("two.txt")).unwrap(), "one file\n");
}
