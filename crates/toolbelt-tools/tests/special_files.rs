//! FIFOs, devices and sockets in the workspace: every file tool refuses them at once, by
//! what the open handle is, and leaves them as they were.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// Well under any tool's timeout: a refusal takes microseconds; a blocked open, forever.
const QUICK: Duration = Duration::from_secs(5);

fn fifo(path: &Path) {
    nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
}

/// `mknod zero c 1 5` (an endless `/dev/zero`); `false`, with a message, when not allowed.
fn char_device(path: &Path) -> bool {
    use nix::sys::stat::{Mode, SFlag, makedev, mknod};
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: making a character device needs root");
        return false;
    }
    match mknod(path, SFlag::S_IFCHR, Mode::from_bits_truncate(0o666), makedev(1, 5)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("skipped: mknod is not allowed here ({e})");
            false
        }
    }
}

fn kind(path: &Path) -> &'static str {
    let t = std::fs::symlink_metadata(path).unwrap().file_type();
    if t.is_fifo() {
        "fifo"
    } else if t.is_char_device() {
        "char"
    } else if t.is_file() {
        "file"
    } else {
        "other"
    }
}

/// The calls that must each refuse `name` quickly.
fn calls(name: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("Read", json!({"file_path": name})),
        ("Grep", json!({"pattern": "x", "path": name})),
        ("Write", json!({"file_path": name, "content": "replaced"})),
        ("Edit", json!({"file_path": name, "old_string": "a", "new_string": "b"})),
        ("MultiEdit", json!({"file_path": name, "edits": [{"old_string": "a", "new_string": "b"}]})),
        ("NotebookEdit", json!({"notebook_path": format!("{name}.ipynb"), "cell_id": "0", "new_source": "x"})),
        (
            "ApplyPatch",
            json!({"input": format!("*** Begin Patch\n*** Update File: {name}\n@@\n-a\n+b\n*** End Patch")}),
        ),
        ("ApplyPatch", json!({"input": format!("*** Begin Patch\n*** Delete File: {name}\n*** End Patch")})),
    ]
}

async fn refused_quickly(root: &Path, name: &str, what: &str) {
    let s = session(root, &[]);
    let before = kind(&root.join(name));
    for (tool, input) in calls(name) {
        let started = Instant::now();
        let call = tokio::time::timeout(QUICK * 2, call(&s, tool, input.clone())).await;
        let took = started.elapsed();
        let Ok(result) = call else { panic!("{tool} on {name} hung") };
        let e = match result {
            Ok(out) => panic!("{tool} {input} succeeded: {}", out.joined_text()),
            Err(e) => e.to_string(),
        };
        assert!(took < QUICK, "{tool} on {name} took {took:?}");
        assert!(e.contains(&format!("is {what}, not a regular file")), "{tool}: {e}");
        assert_eq!(kind(&root.join(name)), before, "{tool} changed {name}");
        assert_eq!(kind(&root.join(format!("{name}.ipynb"))), before, "{tool} changed {name}.ipynb");
    }
}

fn tree() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    std::fs::write(root.join("a.txt"), "hello\n").unwrap();
    (tmp, root)
}

#[tokio::test]
async fn a_fifo_is_refused_by_every_file_tool() {
    let (_tmp, root) = tree();
    fifo(&root.join("pipe"));
    fifo(&root.join("pipe.ipynb"));
    refused_quickly(&root, "pipe", "a named pipe (FIFO)").await;
}

#[tokio::test]
async fn a_character_device_is_refused_by_every_file_tool() {
    let (_tmp, root) = tree();
    if !char_device(&root.join("zero")) || !char_device(&root.join("zero.ipynb")) {
        return;
    }
    refused_quickly(&root, "zero", "a character device").await;
}

#[tokio::test]
async fn walks_skip_special_files_with_a_note_and_never_block() {
    let (_tmp, root) = tree();
    fifo(&root.join("pipe"));
    let device = char_device(&root.join("zero"));
    let s = session(&root, &[]);
    let started = Instant::now();
    let grep = ok(&s, "Grep", json!({"pattern": "hello|x", "output_mode": "content"})).await;
    assert!(grep.contains("a.txt:1:hello"), "{grep}");
    assert!(grep.contains("pipe is a named pipe (FIFO), not a regular file"), "{grep}");
    if device {
        assert!(grep.contains("zero is a character device, not a regular file"), "{grep}");
    }
    // Glob lists regular files only, by their metadata: it never opens one.
    let glob = ok(&s, "Glob", json!({"pattern": "*"})).await;
    assert!(glob.contains("a.txt") && !glob.contains("pipe") && !glob.contains("zero"), "{glob}");
    let list = ok(&s, "ListDir", json!({})).await;
    assert!(list.contains("pipe"), "{list}");
    assert!(started.elapsed() < QUICK, "the walks took {:?}", started.elapsed());
    assert_eq!(kind(&root.join("pipe")), "fifo");
}

#[tokio::test]
async fn a_patch_adding_a_file_where_a_fifo_is_says_it_exists() {
    let (_tmp, root) = tree();
    fifo(&root.join("pipe"));
    let s = session(&root, &[]);
    let e = err(&s, "ApplyPatch", json!({"input": "*** Begin Patch\n*** Add File: pipe\n+x\n*** End Patch"})).await;
    assert!(e.contains("not a regular file"), "{e}");
    assert_eq!(kind(&root.join("pipe")), "fifo");
}

#[tokio::test]
async fn an_ignore_file_that_is_a_fifo_skips_its_directory_and_never_blocks() {
    let (_tmp, root) = tree();
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("sub/b.txt"), "hello\n").unwrap();
    fifo(&root.join("sub/.gitignore"));
    let s = session(&root, &[]);
    let started = Instant::now();
    let grep = ok(&s, "Grep", json!({"pattern": "hello", "output_mode": "content"})).await;
    assert!(grep.contains("a.txt:1:hello") && !grep.contains("b.txt"), "{grep}");
    assert!(grep.contains("sub/.gitignore is a named pipe (FIFO), not a regular file, so"), "{grep}");
    let glob = ok(&s, "Glob", json!({"pattern": "**/*.txt"})).await;
    assert!(glob.contains("a.txt") && glob.contains("was not entered"), "{glob}");
    let list = ok(&s, "ListDir", json!({})).await;
    assert!(list.contains("was not entered"), "{list}");
    // Without ignore files the directory is walked.
    let glob = ok(&s, "Glob", json!({"pattern": "**/*.txt", "no_ignore": true})).await;
    assert!(glob.contains("b.txt"), "{glob}");
    // Starting inside it: refused, saying why.
    let e = err(&s, "Grep", json!({"pattern": "hello", "path": "sub"})).await;
    assert!(e.contains(".gitignore is a named pipe (FIFO), not a regular file"), "{e}");
    assert!(started.elapsed() < QUICK, "the walks took {:?}", started.elapsed());
    assert_eq!(kind(&root.join("sub/.gitignore")), "fifo");
}
