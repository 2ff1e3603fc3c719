//! `toolbelt agents` as a process: definitions from the project and the user's directories,
//! the built-ins, what shadows what, and bad files reported with their path and line.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

#[path = "common/hermetic.rs"]
mod hermetic;

use std::path::{Path, PathBuf};

use serde_json::Value;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A project (with `.git`) holding agents of its own, and a user with agents in both of the
/// user's directories.
fn setup() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("src/deep")).unwrap();
    let home = root.join(".test-home");
    write(
        &root.join(".claude/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: Reviews a change for bugs.\\nSecond line.\ntools: Read, Grep, Glob\n\
         model: sonnet\npermissionMode: plan\nmaxTurns: 20\ncolor: red\n---\nYou review code.\n",
    );
    write(
        &home.join(".config/toolbelt/agents/reviewer.md"),
        "---\nname: reviewer\ndescription: The user's own reviewer.\n---\nReview.\n",
    );
    write(
        &home.join(".claude/agents/docs/writer.md"),
        "---\ndescription: \"Writes the docs\\e]0;pwned\\a for a change.\"\ntools: [Read, Write, NotebookRead]\n---\nWrite \
         docs.\n",
    );
    write(&root.join(".toolbelt/agents/broken.md"), "---\nname: broken\ndescription: d\nmaxTurns: lots\n---\n");
    (dir, root)
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

#[test]
fn lists_project_and_user_agents_the_shadowed_one_and_the_bad_file() {
    let (_dir, root) = setup();
    let out = hermetic::toolbelt(&root).arg("agents").output().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "problems never fail the listing: {text}\n{}", String::from_utf8_lossy(&out.stderr));
    let lines: Vec<&str> = text.lines().collect();
    let at = |start: &str| {
        lines.iter().position(|l| l.starts_with(start)).unwrap_or_else(|| panic!("no `{start}` in:\n{text}"))
    };
    let reviewer = at("reviewer  .claude/agents/reviewer.md (project)");
    assert_eq!(lines[reviewer + 1], "    Reviews a change for bugs.");
    assert_eq!(
        lines[reviewer + 2],
        "    tools: Read, Grep, Glob · model: sonnet · permission mode: plan · max turns: 20"
    );
    // Paths below the working directory are shown relative to it (the test's home is there).
    assert_eq!(
        lines[reviewer + 3],
        "reviewer  .test-home/.config/toolbelt/agents/reviewer.md (user)  [shadowed by .claude/agents/reviewer.md \
         (project)]",
        "the shadowed one follows the one that hides it"
    );
    let writer = at("writer  ");
    assert_eq!(lines[writer], "writer  .test-home/.claude/agents/docs/writer.md (user)");
    assert_eq!(
        lines[writer + 1],
        "    Writes the docs\u{fffd}]0;pwned\u{fffd} for a change.",
        "no escape reaches the terminal"
    );
    assert_eq!(lines[writer + 2], "    tools: Read, Write, NotebookRead");
    let gp = at("general-purpose  built-in");
    assert_eq!(lines[gp + 2], "    tools: all except Agent, SendMessage, TeamCreate, TeamDelete, TaskBroadcast");
    assert!(
        lines[at("Explore  built-in") + 2].contains("tools: Read, Glob, Grep, ListDir, Bash · permission mode: plan")
    );
    assert!(reviewer < writer && writer < gp, "project, then user, then built-in:\n{text}");

    assert!(
        lines.contains(
            &".toolbelt/agents/broken.md:4: `maxTurns: lots` is not valid: it is a whole number of model turns, from 1 \
              to 4294967295"
        ),
        "{text}"
    );
    let warning = ".test-home/.claude/agents/docs/writer.md:3: warning: `tools` names `NotebookRead`, which is no tool here; it is left out";
    assert!(lines.contains(&warning), "{text}");
    assert!(!text.contains("broken  "), "a bad file lists no agent:\n{text}");
}

#[test]
fn json_lists_every_definition_with_its_source_and_every_problem() {
    let (_dir, root) = setup();
    // From a subdirectory: the project is found above it.
    let out = hermetic::toolbelt(&root).args(["--cwd", "src/deep", "agents", "--json"]).output().unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agents = v["agents"].as_array().unwrap();
    let names: Vec<&str> = agents.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["reviewer", "reviewer", "writer", "general-purpose", "Explore"]);

    let reviewer = &agents[0];
    assert_eq!(reviewer["source"]["kind"], "file");
    assert_eq!(reviewer["source"]["scope"], "project");
    assert_eq!(reviewer["source"]["path"], root.join(".claude/agents/reviewer.md").display().to_string());
    assert_eq!(reviewer["description"], "Reviews a change for bugs.\nSecond line.");
    assert_eq!(reviewer["tools"], serde_json::json!(["Read", "Grep", "Glob"]));
    assert_eq!(reviewer["tool_set"], serde_json::json!(["Glob", "Grep", "Read"]));
    assert_eq!(reviewer["permission_mode"], "plan");
    assert_eq!(reviewer["max_turns"], 20);
    assert_eq!(reviewer["system_prompt"], "You review code.");
    assert!(reviewer["shadowed_by"].is_null());
    assert_eq!(agents[1]["source"]["scope"], "user");
    assert_eq!(agents[1]["shadowed_by"], reviewer["source"]);
    assert_eq!(agents[3]["source"]["kind"], "built-in");
    assert!(agents[3]["tools"].is_null());

    let problems = v["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 2, "{problems:#?}");
    assert_eq!(problems[0]["path"], root.join(".toolbelt/agents/broken.md").display().to_string());
    assert_eq!(problems[0]["line"], 4);
    assert_eq!(problems[0]["severity"], "error");
    assert_eq!(problems[1]["severity"], "warning");
    assert_eq!(v["directories"][3]["path"], root.join(".test-home/.config/toolbelt/agents").display().to_string());
}

#[test]
fn the_user_directory_follows_xdg_config_home_and_no_files_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    let elsewhere = root.join("elsewhere-config");
    let out = hermetic::toolbelt(&root).env("XDG_CONFIG_HOME", &elsewhere).arg("agents").output().unwrap();
    let text = stdout(&out);
    assert!(text.contains("No agent files: add Markdown files"), "{text}");
    assert_eq!(text.lines().filter(|l| l.ends_with("built-in")).count(), 2, "{text}");

    write(&elsewhere.join("toolbelt/agents/mine.md"), "---\ndescription: Found by XDG_CONFIG_HOME.\n---\n");
    let out = hermetic::toolbelt(&root).env("XDG_CONFIG_HOME", &elsewhere).arg("agents").output().unwrap();
    let text = stdout(&out);
    assert!(text.starts_with("mine  elsewhere-config/toolbelt/agents/mine.md (user)\n"), "{text}");
    assert!(!text.contains("No agent files"), "{text}");
}
