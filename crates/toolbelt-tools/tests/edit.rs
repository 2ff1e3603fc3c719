//! Write, Edit and MultiEdit on real files.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use common::*;
use serde_json::json;

fn dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    (tmp, root)
}

#[tokio::test]
async fn write_creates_and_overwrites_only_what_was_read() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    assert_eq!(
        ok(&s, "Write", json!({"file_path": "a/b/new.txt", "content": "one\ntwo\n"})).await,
        "Created a/b/new.txt (8 B, 2 lines)."
    );
    std::fs::write(root.join("old.sh"), "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(root.join("old.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let e = err(&s, "Write", json!({"file_path": "old.sh", "content": "x"})).await;
    assert!(e.contains("has not been read in this session; Read it first"), "{e}");
    assert_eq!(std::fs::read_to_string(root.join("old.sh")).unwrap(), "#!/bin/sh\n");
    ok(&s, "Read", json!({"file_path": "old.sh"})).await;
    assert_eq!(
        ok(&s, "write_file", json!({"path": "old.sh", "content": "echo hi\n"})).await,
        "Updated old.sh (8 B, 1 line)."
    );
    assert_eq!(std::fs::metadata(root.join("old.sh")).unwrap().permissions().mode() & 0o777, 0o755);
    // A file the tool itself wrote can be written again without a new Read.
    ok(&s, "Write", json!({"file_path": "old.sh", "content": "echo bye\n"})).await;
    assert!(err(&s, "Write", json!({"file_path": "a", "content": "x"})).await.contains("is a directory"));
}

#[tokio::test]
async fn write_goes_through_a_symlink_to_its_target() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("target.txt"), "old\n").unwrap();
    std::os::unix::fs::symlink("target.txt", root.join("link.txt")).unwrap();
    ok(&s, "Read", json!({"file_path": "link.txt"})).await;
    ok(&s, "Write", json!({"file_path": "link.txt", "content": "new\n"})).await;
    assert!(std::fs::symlink_metadata(root.join("link.txt")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read_to_string(root.join("target.txt")).unwrap(), "new\n");
}

#[tokio::test]
async fn staleness_is_judged_by_content_not_mtime() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let path = root.join("f.rs");
    std::fs::write(&path, "fn a() {}\n").unwrap();
    ok(&s, "Read", json!({"file_path": "f.rs"})).await;
    // A formatter rewrote the same bytes: the mtime changed, the content did not.
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(3600);
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(later).unwrap();
    ok(&s, "Edit", json!({"file_path": "f.rs", "old_string": "a()", "new_string": "b()"})).await;
    // The ledger follows our own edit: a second edit needs no new Read.
    ok(&s, "Edit", json!({"file_path": "f.rs", "old_string": "b()", "new_string": "c()"})).await;
    // Somebody else changes the content: refused until read again.
    std::fs::write(&path, "fn c() { changed }\n").unwrap();
    let e = err(&s, "Edit", json!({"file_path": "f.rs", "old_string": "c()", "new_string": "d()"})).await;
    assert!(e.contains("has changed since you read it"), "{e}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "fn c() { changed }\n");
}

#[tokio::test]
async fn edit_checks_in_order_and_explains_misses() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    std::fs::write(root.join("m.py"), "def f():\n    return 1\n\ndef g():\n    return 1\n").unwrap();
    // 1. not read yet
    let e = err(&s, "Edit", json!({"file_path": "m.py", "old_string": "x", "new_string": "x"})).await;
    assert!(e.contains("has not been read"), "{e}");
    ok(&s, "Read", json!({"file_path": "m.py"})).await;
    // 2. same strings
    let e = err(&s, "Edit", json!({"file_path": "m.py", "old_string": "x", "new_string": "x"})).await;
    assert!(e.starts_with("old_string and new_string are the same"), "{e}");
    // 3. no match: the closest region, numbered, and what differs
    let e =
        err(&s, "Edit", json!({"file_path": "m.py", "old_string": "def g():\n  return 1", "new_string": "y"})).await;
    assert!(e.starts_with("old_string was not found in m.py. The closest match is at lines 4-5:\n     4\tdef g():\n     5\t    return 1\n"), "{e}");
    assert!(e.contains("line 5: indentation differs (file: 4 spaces, old_string: 2 spaces)"), "{e}");
    // 4. several matches: their lines
    let e = err(&s, "Edit", json!({"file_path": "m.py", "old_string": "return 1", "new_string": "return 2"})).await;
    assert!(e.starts_with("old_string matches 2 places (lines 2, 5)"), "{e}");
    let out = ok(
        &s,
        "Edit",
        json!({"file_path": "m.py", "old_string": "return 1", "new_string": "return 2", "replace_all": true}),
    )
    .await;
    assert!(
        out.starts_with(
            "Edited m.py: replaced 2 occurrences. Lines 1-5 now read:\n     1\tdef f():\n     2\t    return 2"
        ),
        "{out}"
    );
    // The answer shows the edited region with context.
    let out = ok(&s, "str_replace", json!({"path": "m.py", "old_str": "def g():", "new_str": "def h():"})).await;
    assert_eq!(
        out,
        "Edited m.py: replaced 1 occurrence. Lines 1-5 now read:\n     1\tdef f():\n     2\t    return 2\n     3\t\n     4\tdef h():\n     5\t    return 2"
    );
}

#[tokio::test]
async fn edit_creates_a_missing_file_with_an_empty_old_string() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let out =
        ok(&s, "Edit", json!({"file_path": "src/new.rs", "old_string": "", "new_string": "fn main() {}\n"})).await;
    assert!(out.starts_with("Created src/new.rs. Lines 1-1 now read:\n     1\tfn main() {}"), "{out}");
    let e = err(&s, "Edit", json!({"file_path": "missing.rs", "old_string": "a", "new_string": "b"})).await;
    assert!(e.contains("missing.rs does not exist"), "{e}");
    let e = err(&s, "Edit", json!({"file_path": "src/new.rs", "old_string": "", "new_string": "x"})).await;
    assert!(e.starts_with("old_string is empty, but the file already has content"), "{e}");
}

/// Edits keep every byte outside the edited region: line endings, BOM and encoding.
#[tokio::test]
async fn edits_are_byte_exact_in_every_encoding() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let cases: Vec<(&str, Vec<u8>, Vec<u8>)> = vec![
        ("crlf.txt", b"alpha\r\nbeta  \r\ngamma\r\n".to_vec(), b"alpha\r\nBETA\r\nDELTA  \r\ngamma\r\n".to_vec()),
        ("bom.txt", b"\xEF\xBB\xBFalpha\nbeta  \ngamma".to_vec(), b"\xEF\xBB\xBFalpha\nBETA\nDELTA  \ngamma".to_vec()),
        ("u16.txt", utf16le("alpha\r\nbeta  \r\ngamma\r\n"), utf16le("alpha\r\nBETA\r\nDELTA  \r\ngamma\r\n")),
        ("l1.txt", latin1("café\nbeta  \nnaïve\n"), latin1("café\nBETA\nDELTA  \nnaïve\n")),
    ];
    for (name, before, expected) in cases {
        std::fs::write(root.join(name), &before).unwrap();
        ok(&s, "Read", json!({"file_path": name})).await;
        // The model sends LF line endings; the file's own endings are kept.
        ok(&s, "Edit", json!({"file_path": name, "old_string": "beta  \n", "new_string": "BETA\nDELTA  \n"})).await;
        assert_eq!(std::fs::read(root.join(name)).unwrap(), expected, "{name}");
    }
}

fn utf16le(s: &str) -> Vec<u8> {
    [0xFF, 0xFE].into_iter().chain(s.encode_utf16().flat_map(u16::to_le_bytes)).collect()
}

fn latin1(s: &str) -> Vec<u8> {
    s.chars().map(|c| c as u8).collect()
}

#[tokio::test]
async fn a_failed_write_leaves_the_original_intact() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let original = latin1("café: 10 EUR\n");
    std::fs::write(root.join("p.txt"), &original).unwrap();
    ok(&s, "Read", json!({"file_path": "p.txt"})).await;
    // windows-1252 has no arrow: the encode fails before anything is written.
    let e = err(&s, "Edit", json!({"file_path": "p.txt", "old_string": "10 EUR", "new_string": "10 → 12 EUR"})).await;
    assert!(e.contains("which windows-1252 cannot represent"), "{e}");
    assert_eq!(std::fs::read(root.join("p.txt")).unwrap(), original);
    // A write whose parent is a file fails without touching anything either.
    std::fs::write(root.join("plain"), "x").unwrap();
    assert!(call(&s, "Write", json!({"file_path": "plain/child.txt", "content": "y"})).await.is_err());
    assert_eq!(std::fs::read_to_string(root.join("plain")).unwrap(), "x");
    let leftovers: Vec<_> = std::fs::read_dir(&root).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 2, "no temp files left: {leftovers:?}");
}

#[tokio::test]
async fn multi_edit_is_all_or_nothing() {
    let (_t, root) = dir();
    let s = session(&root, &[]);
    let original = "let a = 1;\nlet b = 2;\nlet c = 3;\n";
    std::fs::write(root.join("x.js"), original).unwrap();
    ok(&s, "Read", json!({"file_path": "x.js"})).await;
    let e = err(
        &s,
        "MultiEdit",
        json!({"file_path": "x.js", "edits": [
            {"old_string": "let a = 1;", "new_string": "let a = 10;"},
            {"old_string": "let b = 20;", "new_string": "let b = 200;"}
        ]}),
    )
    .await;
    assert!(e.starts_with("edit 2 of 2: old_string was not found in x.js. The closest match is at lines 2-2"), "{e}");
    assert!(e.ends_with("no edit was applied, the file is unchanged"), "{e}");
    assert_eq!(std::fs::read_to_string(root.join("x.js")).unwrap(), original);

    // In order, each edit sees the result of the previous one.
    let out = ok(
        &s,
        "MultiEdit",
        json!({"file_path": "x.js", "edits": [
            {"old_string": "let a = 1;", "new_string": "let a = 10;"},
            {"old_string": "let a = 10;\nlet b", "new_string": "let a = 100;\nlet bb"},
            {"old_string": "let", "new_string": "const", "replace_all": true}
        ]}),
    )
    .await;
    assert!(out.starts_with("Applied 3 edits to x.js (5 replacements)"), "{out}");
    assert_eq!(std::fs::read_to_string(root.join("x.js")).unwrap(), "const a = 100;\nconst bb = 2;\nconst c = 3;\n");
    // Creating a file with a first empty old_string.
    ok(
        &s,
        "MultiEdit",
        json!({"file_path": "n.txt", "edits": [
            {"old_string": "", "new_string": "a b\n"}, {"old_string": "b", "new_string": "c"}
        ]}),
    )
    .await;
    assert_eq!(std::fs::read_to_string(root.join("n.txt")).unwrap(), "a c\n");
}
