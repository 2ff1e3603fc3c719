//! Special files in the workspace, through the binary: a character device read whole grew
//! to gigabytes, a FIFO blocked Read and Write for the whole timeout, Write replaced a device
//! with a regular file. Each call is now refused at once and the node is left as it was.

use std::os::unix::fs::FileTypeExt as _;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::World;

/// Far under the tools' timeouts (two minutes by default): a refusal is a process start.
const QUICK: Duration = Duration::from_secs(10);
const EDITS: &[&str] = &["--mode", "acceptEdits"];

fn file_type(path: &Path) -> std::fs::FileType {
    std::fs::symlink_metadata(path).unwrap().file_type()
}

/// `mknod NAME c 1 5` (an endless `/dev/zero`); false, with a message, when it is refused
/// (not root, or no right to make devices here).
fn char_device(path: &Path) -> bool {
    let out = Command::new("mknod").arg(path).args(["c", "1", "5"]).output().unwrap();
    if !out.status.success() {
        eprintln!(
            "skipped: `mknod` needs root and the right to make devices ({})",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    out.status.success()
}

fn fifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

fn calls(name: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("Read", json!({"file_path": name})),
        ("Grep", json!({"pattern": "x", "path": name})),
        ("Write", json!({"file_path": name, "content": "replaced"})),
        ("Edit", json!({"file_path": name, "old_string": "a", "new_string": "b"})),
        ("NotebookEdit", json!({"notebook_path": format!("{name}.ipynb"), "cell_id": "0", "new_source": "x"})),
        (
            "ApplyPatch",
            json!({"input": format!("*** Begin Patch\n*** Update File: {name}\n@@\n-a\n+b\n*** End Patch")}),
        ),
        ("ApplyPatch", json!({"input": format!("*** Begin Patch\n*** Delete File: {name}\n*** End Patch")})),
    ]
}

fn refused_quickly(w: &World, name: &str, what: &str, is_kind: fn(&std::fs::FileType) -> bool) {
    for (tool, input) in calls(name) {
        let started = Instant::now();
        let (code, out) = w.call(tool, input.clone(), EDITS);
        let took = started.elapsed();
        assert_eq!(code, 1, "{tool} {input}: {out}");
        assert!(took < QUICK, "{tool} on {name} took {took:?}");
        assert!(out.contains(&format!("is {what}, not a regular file")), "{tool}: {out}");
        for node in [name.to_string(), format!("{name}.ipynb")] {
            assert!(is_kind(&file_type(&w.root.join(&node))), "{tool} changed {node}");
        }
    }
}

#[test]
fn a_fifo_is_refused_at_once_by_every_file_tool() {
    let w = World::new();
    for name in ["pipe", "pipe.ipynb"] {
        fifo(&w.root.join(name));
    }
    refused_quickly(&w, "pipe", "a named pipe (FIFO)", std::fs::FileType::is_fifo);
}

#[test]
fn a_character_device_is_refused_and_never_replaced() {
    let w = World::new();
    if !char_device(&w.root.join("zero")) || !char_device(&w.root.join("zero.ipynb")) {
        return;
    }
    refused_quickly(&w, "zero", "a character device", std::fs::FileType::is_char_device);
    // A Grep over the tree searches the files and names the device it skipped.
    w.write("notes.txt", "needle\n");
    let started = Instant::now();
    let (code, out) = w.call("Grep", json!({"pattern": "needle", "output_mode": "content"}), &[]);
    assert!(code == 0 && out.contains("notes.txt:1:needle"), "{out}");
    assert!(out.contains("zero is a character device, not a regular file"), "{out}");
    assert!(started.elapsed() < QUICK);
    assert!(file_type(&w.root.join("zero")).is_char_device());
}
