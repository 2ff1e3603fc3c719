//! The Glob tool on real trees.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use common::*;
use serde_json::json;

fn dir() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    (tmp, root)
}

/// Writes `files`, giving the n-th the modification time `base + minutes[n]`.
fn put(root: &Path, files: &[(&str, u64)]) {
    let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    for (path, minutes) in files {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, path.to_string_lossy().as_bytes()).unwrap();
        let file = std::fs::File::options().write(true).open(&path).unwrap();
        file.set_modified(base + Duration::from_secs(minutes * 60)).unwrap();
    }
}

fn lines(text: &str) -> Vec<&str> {
    text.lines().collect()
}

#[tokio::test]
async fn newest_first_ties_by_path_at_any_depth() {
    let (_t, root) = dir();
    put(&root, &[("old.rs", 1), ("src/new.rs", 30), ("src/deep/mid.rs", 10), ("b.rs", 20), ("a.rs", 20), ("x.md", 99)]);
    let s = session(&root, &[]);
    // No `/`: matches file names at any depth.
    let out = ok(&s, "Glob", json!({"pattern": "*.rs"})).await;
    assert_eq!(lines(&out), ["src/new.rs", "a.rs", "b.rs", "src/deep/mid.rs", "old.rs"]);
    assert_eq!(ok(&s, "glob", json!({"pattern": "**/*.rs"})).await, out);
    // With `/`: anchored at `path`.
    assert_eq!(lines(&ok(&s, "Glob", json!({"pattern": "src/*.rs"})).await), ["src/new.rs"]);
    assert_eq!(lines(&ok(&s, "Glob", json!({"pattern": "src/**/*.rs"})).await), ["src/new.rs", "src/deep/mid.rs"]);
    assert_eq!(lines(&ok(&s, "Glob", json!({"pattern": "deep/*.rs", "path": "src"})).await), ["src/deep/mid.rs"]);
    assert_eq!(lines(&ok(&s, "Glob", json!({"pattern": "./deep/*", "path": "src"})).await), ["src/deep/mid.rs"]);
    // Brace expansion.
    assert_eq!(lines(&ok(&s, "Glob", json!({"pattern": "*.{md,rs}", "limit": 2})).await)[..2], ["x.md", "src/new.rs"]);
    // An absolute pattern names its directory.
    let abs = format!("{}/src/**/*.rs", root.display());
    assert_eq!(lines(&ok(&s, "Glob", json!({"pattern": abs})).await), ["src/new.rs", "src/deep/mid.rs"]);
    let v = call(&s, "Glob", json!({"pattern": "*.rs", "limit": 2})).await.unwrap().structured.unwrap();
    assert_eq!(
        v,
        json!({"files": ["src/new.rs", "a.rs"], "total": 5, "offset": 0, "next_offset": 2,
            "notes": ["[Showing files 1–2 of 5 (newest first); use offset=2 for more, or narrow the pattern.]"]})
    );
}

#[tokio::test]
async fn a_hundred_at_a_time_with_the_total_and_the_next_offset() {
    let (_t, root) = dir();
    let files: Vec<(String, u64)> = (0..250).map(|i| (format!("d{}/f{i:03}.txt", i % 7), i)).collect();
    let files: Vec<(&str, u64)> = files.iter().map(|(p, m)| (p.as_str(), *m)).collect();
    put(&root, &files);
    let s = session(&root, &[]);
    let out = ok(&s, "Glob", json!({"pattern": "**/*.txt"})).await;
    let listed = lines(&out);
    assert_eq!(listed.len(), 102, "100 paths, a blank line and the notice");
    assert_eq!(listed[0], "d4/f249.txt");
    assert_eq!(listed[99], "d3/f150.txt");
    assert_eq!(
        listed[101],
        "[Showing files 1–100 of 250 (newest first); use offset=100 for more, or narrow the pattern.]"
    );
    let out = ok(&s, "Glob", json!({"pattern": "**/*.txt", "offset": 200})).await;
    assert_eq!(lines(&out)[0], "d0/f049.txt");
    assert!(out.ends_with("\n\n[Showing files 201–250 of 250 (newest first).]"), "{out}");
    let out = ok(&s, "Glob", json!({"pattern": "**/*.txt", "offset": 300})).await;
    assert_eq!(out, "[No files at offset 300: there are 250 in all; use a smaller offset.]");
    let out = ok(&s, "Glob", json!({"pattern": "**/*.txt", "limit": 0})).await;
    assert_eq!(lines(&out).len(), 250);
}

#[tokio::test]
async fn gitignore_and_hidden_files_outside_a_git_repository() {
    let (_t, root) = dir();
    put(&root, &[("keep.rs", 1), ("target/gen.rs", 2), ("debug.log", 3), (".hidden/h.rs", 4), (".env.rs", 5)]);
    std::fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
    std::fs::create_dir_all(root.join("sub/.git")).unwrap();
    std::fs::write(root.join("sub/.git/config.rs"), "").unwrap();
    let s = session(&root, &[]);
    // `*` names the ignored `target` directory and `debug.log`: still left out.
    assert_eq!(ok(&s, "Glob", json!({"pattern": "*"})).await, "keep.rs");
    assert!(ok(&s, "Glob", json!({"pattern": "*.log"})).await.starts_with("No files found matching `*.log`"));
    let out = ok(&s, "Glob", json!({"pattern": "*", "no_ignore": true})).await;
    assert_eq!(lines(&out), ["debug.log", "target/gen.rs", "keep.rs"]);
    // `.git` stays out even with hidden files included.
    let out = ok(&s, "Glob", json!({"pattern": "*.rs", "hidden": true})).await;
    assert_eq!(lines(&out), [".env.rs", ".hidden/h.rs", "keep.rs"]);
    let out = ok(&s, "Glob", json!({"pattern": "*", "include_hidden": true, "include_ignored": true})).await;
    // (.gitignore was written last, so it is the newest.)
    assert_eq!(lines(&out), [".gitignore", ".env.rs", ".hidden/h.rs", "debug.log", "target/gen.rs", "keep.rs"]);
}

#[tokio::test]
async fn nothing_found_explains_and_errors_name_the_fix() {
    let (_t, root) = dir();
    put(&root, &[("README.md", 1), ("docs/Guide.MD", 2)]);
    let s = session(&root, &[]);
    let out = ok(&s, "Glob", json!({"pattern": "*.md"})).await;
    assert_eq!(out, "README.md");
    let out = ok(&s, "Glob", json!({"pattern": "*.txt"})).await;
    assert!(out.starts_with(&format!("No files found matching `*.txt` in {}; skipped files excluded", root.display())));
    let out = ok(&s, "Glob", json!({"pattern": "readme*"})).await;
    assert!(out.ends_with("The pattern is case-sensitive; 1 file matches it ignoring case: README.md."), "{out}");

    let e = err(&s, "Glob", json!({"pattern": "*", "path": "README.md"})).await;
    assert!(e.contains("is a file, not a directory"), "{e}");
    let e = err(&s, "Glob", json!({"pattern": "*", "path": "/"})).await;
    assert!(e.contains("outside the workspace roots"), "{e}");
    let e = err(&s, "Glob", json!({"pattern": "[z-a]"})).await;
    assert!(e.starts_with("invalid glob in `pattern`"), "{e}");
}

#[tokio::test]
async fn same_files_as_rg_files() {
    let rg_ok = Command::new("rg").arg("--version").output().is_ok_and(|o| o.status.success());
    if !rg_ok {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("`rg` is required to compare Glob with ripgrep in CI; install it (apt-get install -y ripgrep)");
        }
        eprintln!("skipping the rg comparison: `rg` is not installed (Debian: apt-get install -y ripgrep)");
        return;
    }
    let (_t, root) = dir();
    let files: Vec<(String, u64)> = (0..120)
        .map(|i| (format!("{}/n{i}.{}", ["a", "a/b", "c", "d/e/f", "."][i % 5], ["rs", "md", "ts"][i % 3]), 1))
        .collect();
    let files: Vec<(&str, u64)> = files.iter().map(|(p, m)| (p.as_str(), *m)).collect();
    put(&root, &files);
    std::fs::write(root.join(".gitignore"), "c/\n*.md\n").unwrap();
    let s = session(&root, &[]);
    // Patterns that name no ignored file: `rg --glob` would list an ignored file the glob
    // names itself (an override lifts ignore rules); Glob keeps it out. So `*` compares with
    // plain `rg --files`.
    for pattern in ["*.rs", "**/*.ts", "a/**/*.{rs,ts}", "d/e/**/*.ts", "n1*.{rs,ts}", "*"] {
        let glob: &[&str] = if pattern == "*" { &[] } else { &["-g", pattern] };
        let out = Command::new("rg")
            .args(["--no-config", "--no-require-git", "--files"])
            .args(glob)
            .current_dir(&root)
            .output()
            .unwrap();
        let mut expected: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(String::from).collect();
        expected.sort();
        let text = ok(&s, "Glob", json!({"pattern": pattern, "limit": 0})).await;
        let mut got: Vec<String> = text.lines().map(String::from).collect();
        got.sort();
        assert!(!expected.is_empty(), "{pattern}");
        assert_eq!(got, expected, "Glob {pattern} differs from rg --files -g {pattern}");
    }
}
