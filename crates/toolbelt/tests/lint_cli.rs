//! `Lint` through the real `toolbelt` binary: ruff and shellcheck only read, so they run in
//! the default mode without asking and leave nothing in the project; `cargo clippy` runs
//! the project's code, so it asks, and the advice of the refusal works when followed; a
//! finding in a file a deny rule hides is not shown; a project's own linter waits until the
//! project is trusted.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

#[path = "common/hermetic.rs"]
mod hermetic;

/// `PATH` with the test peers' ruff in front, or None (a failure under CI) without it.
fn path_with_ruff() -> Option<String> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers/venv/bin");
    let shellcheck = std::process::Command::new("shellcheck").arg("--version").output().is_ok();
    if !venv.join("ruff").exists() || !shellcheck {
        assert!(std::env::var_os("CI").is_none(), "ruff or shellcheck is not installed; .ci/run installs them");
        eprintln!("skipped: ruff or shellcheck is not installed");
        return None;
    }
    Some(format!("{}:{}", venv.canonicalize().unwrap().display(), std::env::var("PATH").unwrap_or_default()))
}

/// A project in a temp directory with `files`, marked by `.git`.
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("lint-cli-").tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("proj");
    std::fs::create_dir_all(root.join(".git")).unwrap();
    for (name, text) in files {
        std::fs::create_dir_all(root.join(name).parent().unwrap()).unwrap();
        std::fs::write(root.join(name), text).unwrap();
    }
    (dir, root)
}

fn lint(root: &Path, path_var: &str, args: &[&str]) -> Output {
    hermetic::toolbelt(root.parent().unwrap())
        .current_dir(root)
        .env("PATH", path_var)
        .arg("call")
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    names
}

#[test]
fn ruff_and_shellcheck_run_without_asking_and_leave_the_project_as_it_was() {
    let Some(path_var) = path_with_ruff() else { return };
    let (_dir, root) = project(&[
        ("app.py", "import os\n\nprint(missing)\n"),
        ("secret/keys.py", "import sys\n"),
        ("run.sh", "#!/bin/sh\ncd /srv\n"),
    ]);
    let out = lint(&root, &path_var, &["--json", "--deny", "Read(./secret/**)", "Lint", "{}"]);
    assert!(out.status.success(), "{}", text(&out));
    let result: Value = serde_json::from_slice(&out.stdout).unwrap();
    let shown = result["content"][0]["text"].as_str().unwrap();
    assert!(shown.contains("app.py:1:8 error F401 `os` imported but unused [fixable]"), "{shown}");
    assert!(shown.contains("app.py:3:7 error F821 Undefined name `missing`"), "{shown}");
    assert!(shown.contains("run.sh:2:1 warning SC2164"), "{shown}");
    // The denied file is neither linted nor shown.
    assert!(!shown.contains("keys.py"), "{shown}");
    assert_eq!(result["structured"]["total"], 3, "{result}");
    assert_eq!(names(&root), [".git", "app.py", "run.sh", "secret"]);
}

#[test]
fn clippy_asks_and_the_advice_of_the_refusal_works() {
    let Some(path_var) = path_with_ruff() else { return };
    let (_dir, root) = project(&[
        ("Cargo.toml", "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
        ("src/main.rs", "fn main() {\n    let unused = 1;\n}\n"),
    ]);
    let out = lint(&root, &path_var, &["Lint", r#"{"linter": "clippy"}"#]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let refused = text(&out);
    assert!(refused.contains("`cargo clippy --all-targets --message-format=json` is not read-only"), "{refused}");
    assert!(refused.contains("--allow 'Lint'"), "{refused}");
    assert!(!root.join("target").exists(), "clippy ran before it was allowed");

    let out = lint(&root, &path_var, &["--allow", "Lint", "Lint", r#"{"linter": "clippy"}"#]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("src/main.rs:2:9 warning unused_variables unused variable: `unused` [fixable]"), "{shown}");
    assert!(shown.contains("- clippy: 1 finding (`cargo clippy --all-targets --message-format=json`)"), "{shown}");
}

#[test]
fn a_projects_own_linter_waits_until_the_project_is_trusted() {
    let Some(path_var) = path_with_ruff() else { return };
    let config = "[lint.linters.house]\n\
                  command = \"touch ran-before-trust; printf 'notes.md:2:1: warning: heading too long\\\\n'\"\n\
                  format = \"lines\"\n";
    let (_dir, root) = project(&[(".toolbelt/config.toml", config), ("notes.md", "# Notes\n## A heading\n")]);
    let out = lint(&root, &path_var, &["Lint", r#"{"linter": "house"}"#]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let refused = text(&out);
    assert!(refused.contains("there is no linter `house`"), "{refused}");
    assert!(refused.contains("trust"), "{refused}");
    assert!(!root.join("ran-before-trust").exists(), "the project's linter ran before trust");

    let trusted = hermetic::toolbelt(root.parent().unwrap()).current_dir(&root).arg("trust").output().unwrap();
    assert!(trusted.status.success(), "{}", text(&trusted));
    let out = lint(&root, &path_var, &["--allow", "Lint", "Lint", r#"{"linter": "house"}"#]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("notes.md:2:1 warning heading too long"), "{}", text(&out));
}
