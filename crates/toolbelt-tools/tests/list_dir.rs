//! The ListDir tool on real trees.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::json;

fn dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    (tmp, root)
}

fn put(root: &Path, files: &[(&str, usize)]) {
    for (path, size) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, vec![b'x'; *size]).unwrap();
    }
}

fn project() -> (tempfile::TempDir, PathBuf) {
    let (t, root) = dir();
    put(
        &root,
        &[
            ("Cargo.toml", 300),
            ("README.md", 2_500),
            ("src/main.rs", 40),
            ("src/fs/read.rs", 1_100_000),
            ("src/fs/mod.rs", 10),
            ("benches/b.rs", 5),
            ("target/debug/app", 9),
            ("app.log", 3),
            (".env", 7),
            (".github/ci.yml", 8),
        ],
    );
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::os::unix::fs::symlink("src/main.rs", root.join("main-link")).unwrap();
    (t, root)
}

#[tokio::test]
async fn one_level_directories_first_with_types_and_sizes() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let out = ok(&s, "ListDir", json!({})).await;
    assert_eq!(
        out,
        format!(
            "{}/\n  benches/\n  src/\n  Cargo.toml  300 B\n  main-link -> src/main.rs\n  README.md  2.4 KiB",
            root.display()
        )
    );
    let v = call(&s, "LS", json!({"path": "src"})).await.unwrap().structured.unwrap();
    assert_eq!(
        v,
        json!({"path": "src", "entries": [
            {"path": "fs", "type": "dir"},
            {"path": "main.rs", "type": "file", "size": 40},
        ], "total": 2})
    );
    // Every alias answers.
    for alias in ["LS", "list_dir", "file_list"] {
        assert_eq!(ok(&s, alias, json!({"path": "benches"})).await, "benches/\n  b.rs  5 B");
    }
}

#[tokio::test]
async fn recursive_and_depth_list_a_tree() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let out = ok(&s, "ListDir", json!({"path": "src", "recursive": true})).await;
    assert_eq!(out, "src/\n  fs/\n    mod.rs  10 B\n    read.rs  1.0 MiB\n  main.rs  40 B");
    let out = ok(&s, "ListDir", json!({"depth": 2, "path": "."})).await;
    assert!(out.contains("\n  src/\n    fs/\n    main.rs  40 B\n  Cargo.toml"), "{out}");
    assert!(!out.contains("read.rs"), "{out}");
}

#[tokio::test]
async fn gitignore_hidden_pattern_and_ignore_options() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let out = ok(&s, "ListDir", json!({"hidden": true, "no_ignore": true})).await;
    let names: Vec<&str> = out.lines().skip(1).map(str::trim).collect();
    assert_eq!(
        names,
        [
            ".github/",
            "benches/",
            "src/",
            "target/",
            ".env  7 B",
            ".gitignore  14 B",
            "app.log  3 B",
            "Cargo.toml  300 B",
            "main-link -> src/main.rs",
            "README.md  2.4 KiB"
        ]
    );
    // Outside a git repository .gitignore still applies; `.git` is listed but not entered.
    std::fs::create_dir_all(root.join(".git/objects")).unwrap();
    let out = ok(&s, "ListDir", json!({"hidden": true, "recursive": true})).await;
    assert!(out.contains("\n  .git/\n  .github/\n    ci.yml  8 B\n"), "{out}");
    assert!(!out.contains("objects") && !out.contains("target") && !out.contains("app.log"), "{out}");

    let out = ok(&s, "ListDir", json!({"recursive": true, "pattern": "*.rs"})).await;
    assert_eq!(
        out,
        format!(
            "{}/\n  benches/\n    b.rs  5 B\n  src/\n    fs/\n      mod.rs  10 B\n      read.rs  1.0 MiB\n    main.rs  40 B",
            root.display()
        )
    );
    let out = ok(&s, "ListDir", json!({"recursive": true, "ignore": ["fs", "*.md"]})).await;
    assert!(!out.contains("fs/") && !out.contains("read.rs") && !out.contains("README"), "{out}");
    assert!(out.contains("main.rs"), "{out}");
    let out = ok(&s, "ListDir", json!({"path": "benches", "pattern": "*.txt"})).await;
    assert_eq!(out, "benches/\n  (no entries; hidden, .gitignore'd, non-matching entries are not listed)");
}

#[tokio::test]
async fn the_limit_cuts_breadth_first_and_says_how_many_were_left_out() {
    let (_t, root) = dir();
    let files: Vec<(String, usize)> = (0..30).map(|i| (format!("d{}/sub/f{i:02}.txt", i % 3), 1)).collect();
    let files: Vec<(&str, usize)> = files.iter().map(|(p, n)| (p.as_str(), *n)).collect();
    put(&root, &files);
    let s = session(&root, &[]);
    let out = ok(&s, "ListDir", json!({"recursive": true, "limit": 8})).await;
    assert_eq!(
        out,
        format!(
            "{}/\n  d0/\n    sub/\n      f00.txt  1 B\n      f03.txt  1 B\n  d1/\n    sub/\n  d2/\n    sub/\n\n\
             [Listed 8 of 36 entries (breadth first); 28 more not shown: list a subdirectory, lower `depth`, or raise `limit`.]",
            root.display()
        )
    );
    let v = call(&s, "ListDir", json!({"recursive": true})).await.unwrap().structured.unwrap();
    assert_eq!((v["total"].as_u64(), v["entries"].as_array().map(Vec::len)), (Some(36), Some(36)));
}

#[tokio::test]
async fn files_and_paths_outside_the_roots_are_refused() {
    let (_t, root) = project();
    let s = session(&root, &[]);
    let e = err(&s, "ListDir", json!({"path": "Cargo.toml"})).await;
    assert_eq!(e, "Cargo.toml is a file, not a directory; use Read to read it");
    let e = err(&s, "ListDir", json!({"path": "/"})).await;
    assert!(e.contains("outside the workspace roots"), "{e}");
    let e = err(&s, "ListDir", json!({"path": "nope"})).await;
    assert!(e.contains("does not exist"), "{e}");
    // A symlink leading out of the roots is refused, not followed.
    std::os::unix::fs::symlink("/etc", root.join("escape")).unwrap();
    let e = err(&s, "ListDir", json!({"path": "escape"})).await;
    assert!(e.contains("outside the workspace roots"), "{e}");
}
