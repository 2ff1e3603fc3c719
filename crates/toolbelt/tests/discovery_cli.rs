//! Skills and deferred tools through the real `toolbelt` binary: `toolbelt skills` lists what
//! is found (project and user, the shadowed one, a bad file with its path and why), `call
//! Skill` loads one with arguments, `toolbelt tools` marks deferred tools, and `call
//! ToolSearch` returns a deferred tool's definition.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

fn skill(base: &Path, folder: &str, text: &str) {
    std::fs::create_dir_all(base.join(folder)).unwrap();
    std::fs::write(base.join(folder).join("SKILL.md"), text).unwrap();
}

/// `toolbelt args…` in `root`; its home is `<base>/.test-home`.
fn run(base: &Path, root: &Path, args: &[&str]) -> (bool, String, String) {
    let out = hermetic::toolbelt(base).current_dir(root).args(args).output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn skills_are_listed_and_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, home) = (base.join("app"), base.join(".test-home"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    skill(&root.join(".claude/skills"), "review", "---\ndescription: Review a change\n---\nReview $1 closely.\n");
    skill(&home.join(".claude/skills"), "review", "---\ndescription: My review\n---\nMine.\n");
    skill(&home.join(".agents/skills"), "notes", "---\ndescription: Keep notes\nallowed-tools: Read\n---\nNote it.\n");
    skill(&root.join(".agents/skills"), "broken", "---\nname: [1, 2]\n---\nx\n");

    let (ok, out, err) = run(&base, &root, &["skills"]);
    assert!(ok, "{err}");
    assert!(out.starts_with("review  .claude/skills/review/SKILL.md (project)\n    Review a change\n"), "{out}");
    assert!(out.contains("[shadowed by .claude/skills/review/SKILL.md]"), "{out}");
    assert!(out.contains("notes  ") && out.contains("allowed tools: Read"), "{out}");
    assert!(out.contains(".agents/skills/broken/SKILL.md: error: line 2: `name` should be text, not a list"), "{out}");

    let (ok, out, _) = run(&base, &root, &["skills", "--json"]);
    assert!(ok);
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(listed["skills"].as_array().unwrap().len(), 2);
    assert_eq!(listed["shadowed"][0]["scope"], "user");

    let (ok, out, err) =
        run(&base, &root, &["call", "Skill", &json!({"skill": "review", "args": "lib.rs"}).to_string()]);
    assert!(ok, "{err}");
    assert!(out.contains("Review lib.rs closely."), "{out}");
    // The user's own skill grants its tools for the session.
    let (ok, out, err) = run(&base, &root, &["call", "--json", "Skill", &json!({"skill": "notes"}).to_string()]);
    assert!(ok, "{err}");
    let result: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(result["structured"]["granted"], json!(["Read"]), "{out}");
}

#[test]
fn deferred_tools_are_marked_and_found() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let (root, home) = (base.join("app"), base.join(".test-home"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let (ok, out, err) = run(&base, &root, &["tools"]);
    assert!(ok, "{err}");
    let line = out.lines().find(|l| l.starts_with("EnterWorktree ")).unwrap();
    assert!(line.contains("[deferred] Create a git worktree"), "{line}");
    assert!(out.contains("[deferred]: listed to the model by name only until ToolSearch loads it"), "{out}");
    let (ok, out, err) = run(&base, &root, &["call", "ToolSearch", r#"{"query": "git worktree isolate branch"}"#]);
    assert!(ok, "{err}");
    assert!(out.contains("<function>{\"name\":\"EnterWorktree\""), "{out}");
}
