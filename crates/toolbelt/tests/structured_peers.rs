//! `toolbelt mcp` under a client that shows the model `structuredContent`: pydantic-ai's
//! `MCPToolset`, with its scripted `FunctionModel` playing the agent (no network). The agent
//! must see the file it reads, edit it after the read, and see the edit through Bash — all
//! from the structured results alone.
//!
//! pydantic-ai is installed by `.ci/run` into `.ci/peers/venv` (pinned in
//! `.ci/peers/requirements.txt`). Without it this test says so and passes — except under CI,
//! where a missing peer is a failure.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

#[path = "common/hermetic.rs"]
mod hermetic;

/// The peers' Python, when pydantic-ai is installed in it.
fn python_with_pydantic_ai() -> Option<PathBuf> {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.ci/peers/venv/bin/python");
    let ready = python.exists()
        && Command::new(&python)
            .args(["-c", "import pydantic_ai.mcp, fastmcp"])
            .output()
            .is_ok_and(|out| out.status.success());
    if ready {
        return Some(python);
    }
    let ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
    assert!(!ci, "pydantic-ai is not installed in .ci/peers/venv; .ci/run installs it");
    eprintln!("skipped: pydantic-ai is not installed in .ci/peers/venv (run .ci/run, or see it for the commands)");
    None
}

#[test]
fn a_pydantic_ai_agent_reads_edits_and_sees_the_edit_through_structured_content() {
    let Some(python) = python_with_pydantic_ai() else { return };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join("greeting.py"), "GREETING = \"hello\"\nprint(GREETING)\n").unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/pydantic_ai_agent.py");
    let toolbelt = assert_cmd::cargo::cargo_bin("toolbelt");
    // The environment `hermetic::toolbelt` gives the binary (a home inside the temp dir), for
    // the server pydantic-ai starts.
    let hermetic = hermetic::toolbelt(&root);
    let mut cmd = Command::new(python);
    cmd.arg(script).arg(&toolbelt).arg(&root).args(["--mode", "acceptEdits"]).current_dir(&root);
    for (key, value) in hermetic.get_envs() {
        match value {
            Some(value) => cmd.env(key, value),
            None => cmd.env_remove(key),
        };
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|_| {
        panic!("no JSON from the agent ({}):\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr))
    });
    assert!(seen["failure"].is_null(), "{seen:#}");
    let steps = seen["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "Read, Edit, Bash, then the answer: {seen:#}");

    // The Read result reached the model as the structured value, with the file in it.
    let read = &steps[1];
    assert_eq!((read["tool"].as_str(), read["structured"].as_bool()), (Some("Read"), Some(true)), "{seen:#}");
    assert!(read["text"].as_str().unwrap().contains("GREETING = \\\"hello\\\""), "the model saw the file: {seen:#}");
    assert_eq!(seen["old_string"], "GREETING = \"hello\"", "{seen:#}");

    // The edit it made from what it saw, after the read, landed on disk…
    let edit = &steps[2];
    assert_eq!((edit["tool"].as_str(), edit["structured"].as_bool()), (Some("Edit"), Some(true)), "{seen:#}");
    assert!(edit["text"].as_str().unwrap().contains("hello from the agent"), "Edit shows the edited lines: {seen:#}");
    let on_disk = std::fs::read_to_string(root.join("greeting.py")).unwrap();
    assert_eq!(on_disk, "GREETING = \"hello from the agent\"\nprint(GREETING)\n");

    // …and Bash's structured result shows it to the model.
    let bash = &steps[3];
    assert_eq!((bash["tool"].as_str(), bash["structured"].as_bool()), (Some("Bash"), Some(true)), "{seen:#}");
    assert!(bash["text"].as_str().unwrap().contains("hello from the agent"), "{seen:#}");
    assert_eq!(seen["final"], "Done.");
}
