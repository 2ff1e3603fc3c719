//! Every fix a refusal suggests works when followed: the `--allow` rules and the `--add-dir`
//! roots it names are passed back, and the same call then runs.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use assert_cmd::Command;
use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

struct Project {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    other: PathBuf,
}

impl Project {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (root, home, other) = (base.join("project"), base.join("home"), base.join("hk"));
        for d in [root.join(".git"), home.clone(), other.clone()] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(other.join("secret.txt"), "the other repo's notes\n").unwrap();
        // A link inside the project to a file outside: the advice must be about where it leads.
        std::os::unix::fs::symlink(other.join("secret.txt"), root.join("link.txt")).unwrap();
        Project { _dir: dir, root, home, other }
    }

    fn run(&self, tool: &str, input: &Value, extra: &[String]) -> (i32, String) {
        let out = Command::from_std(hermetic::toolbelt_with_home(&self.root, &self.home))
            .env("NO_COLOR", "1")
            .args(["call", tool, &input.to_string()])
            .args(extra)
            .output()
            .unwrap();
        (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

/// The flags a refusal suggests: each `--allow '…'` and `--add-dir '…'`.
fn suggested(message: &str, flag: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let needle = format!("{flag} '");
    let mut rest = message;
    while let Some(at) = rest.find(&needle) {
        let after = &rest[at + needle.len()..];
        let Some(end) = after.find('\'') else { break };
        out.push(vec![flag.to_string(), after[..end].to_string()]);
        rest = &after[end..];
    }
    out
}

#[test]
fn every_suggestion_works_when_followed() {
    let p = Project::new();
    let outside = p.other.join("secret.txt");
    let cases: Vec<(&str, Value, Vec<String>)> = vec![
        ("Read", json!({"file_path": "../hk/secret.txt"}), vec![]),
        ("Read", json!({"file_path": outside}), vec![]),
        ("Read", json!({"file_path": "link.txt"}), vec![]),
        ("Write", json!({"file_path": "notes/a.txt", "content": "x"}), vec![]),
        ("Write", json!({"file_path": "../hk/new.txt", "content": "x"}), vec![]),
        (
            "Write",
            json!({"file_path": ".vscode/settings.json", "content": "{}"}),
            vec!["--mode".into(), "acceptEdits".into()],
        ),
        ("Bash", json!({"command": "mkdir -p build/out"}), vec![]),
        ("Bash", json!({"command": "cat ../hk/secret.txt"}), vec![]),
        ("Grep", json!({"pattern": "notes", "path": "../hk"}), vec![]),
    ];
    for (tool, input, extra) in cases {
        let (code, refusal) = p.run(tool, &input, &extra);
        assert_eq!(code, 1, "{tool} {input} should need approval: {refusal}");
        let allows = suggested(&refusal, "--allow");
        assert!(!allows.is_empty(), "{tool} {input}: the refusal suggests a rule: {refusal}");
        let mut with_rules = extra.clone();
        with_rules.extend(allows.into_iter().flatten());
        let (code, out) = p.run(tool, &input, &with_rules);
        assert_eq!(code, 0, "{tool} {input} with {with_rules:?}: {out}");
        // Where it names a directory to add as a root, that works on its own too.
        let dirs = suggested(&refusal, "--add-dir");
        if !dirs.is_empty() {
            let mut with_dirs = extra.clone();
            with_dirs.extend(dirs.into_iter().flatten());
            let (code, out) = p.run(tool, &input, &with_dirs);
            assert!(
                code == 0 || out.contains("needs approval") && !out.contains("outside the workspace"),
                "{tool} {input} with {with_dirs:?}: {out}"
            );
        }
    }
}
