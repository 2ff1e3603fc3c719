//! Snippets through the real `toolbelt` binary: saved by one process and found by another, in
//! the user's data directory shared by every project (or a project's own with
//! `snippets.scope = "project"`, never inside the repository), and separate processes saving
//! at once without losing a snippet.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// A project (a `.git` directory) named `name` in `home`'s temp directory, canonical.
fn project(home: &Path, name: &str) -> PathBuf {
    let root = home.join(name);
    std::fs::create_dir_all(root.join(".git")).unwrap();
    root
}

/// `toolbelt` working in `root`, its home under `home` (several projects, one user).
fn toolbelt(home: &Path, root: &Path) -> std::process::Command {
    let mut cmd = hermetic::toolbelt(home);
    cmd.current_dir(root).env("NO_COLOR", "1");
    cmd
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `toolbelt call --json TOOL INPUT` in its own process: the result object.
fn call(cmd: &mut std::process::Command, tool: &str, input: Value) -> Value {
    let out = cmd.args(["call", "--json", tool, &input.to_string()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    serde_json::from_str(&text(&out))
        .unwrap_or_else(|e| panic!("{tool}: {e}\nstdout: {}\nstderr: {stderr}", text(&out)))
}

/// [`call`] that must succeed: its structured result.
fn ok(cmd: &mut std::process::Command, tool: &str, input: Value) -> Value {
    let result = call(cmd, tool, input.clone());
    assert_eq!(result["is_error"], false, "{tool} {input}: {result}");
    result["structured"].clone()
}

/// The names a `snippet_list` call in its own process gives.
fn names(cmd: &mut std::process::Command, input: Value) -> Vec<String> {
    let listed = ok(cmd, "snippet_list", input);
    listed["snippets"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn a_snippet_saved_by_one_process_is_found_by_another_in_any_project() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    let (app, tools) = (project(&home, "app"), project(&home, "tools"));
    let saved = ok(
        &mut toolbelt(&home, &app),
        "snippet_save",
        json!({"name": "retry-with-backoff", "code": "for i in 1 2 3; do cmd && break; sleep $i; done",
               "language": "bash", "description": "Retry a command, waiting longer each time",
               "tags": ["shell", "retry"]}),
    );
    assert_eq!(saved["type"], "created");
    assert_eq!(saved["scope"], "user");
    ok(&mut toolbelt(&home, &app), "snippet_save", json!({"name": "hello", "code": "echo hello", "tags": ["shell"]}));

    // Another process in another project: the user's snippets are shared.
    let out = toolbelt(&home, &tools).args(["call", "snippet_list", r#"{"query": "wait* longer"}"#]).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert_eq!(text(&out), "retry-with-backoff — Retry a command, waiting longer each time [bash] #retry #shell\n");
    assert_eq!(names(&mut toolbelt(&home, &tools), json!({"tags": ["shell"]})), ["hello", "retry-with-backoff"]);
    let loaded = ok(&mut toolbelt(&home, &tools), "snippet_load", json!({"id": saved["id"]}));
    assert_eq!(loaded["snippet"]["code"], "for i in 1 2 3; do cmd && break; sleep $i; done");
    let replaced =
        ok(&mut toolbelt(&home, &tools), "snippet_save", json!({"name": "retry-with-backoff", "code": "retry cmd"}));
    assert_eq!(
        (&replaced["type"], &replaced["id"], &replaced["created_at"]),
        (&json!("replaced"), &saved["id"], &saved["created_at"])
    );

    // Kept in $XDG_DATA_HOME/toolbelt, never inside a project.
    let data = home.join(".test-home/.local/share/toolbelt/snippets.db");
    assert!(data.is_file(), "{}", data.display());
    for root in [&app, &tools] {
        let inside: Vec<_> = walk(root).into_iter().filter(|p| p.to_string_lossy().contains("snippets")).collect();
        assert!(inside.is_empty(), "{inside:?}");
    }
    // Without XDG_DATA_HOME, under ~/.local/share — the same file here.
    let mut plain = toolbelt(&home, &app);
    plain.env_remove("XDG_DATA_HOME");
    assert_eq!(names(&mut plain, json!({})), ["hello", "retry-with-backoff"]);

    // A missing snippet names what exists, to a process that did not save them.
    let missing = call(&mut toolbelt(&home, &tools), "snippet_delete", json!({"name": "Hello"}));
    assert_eq!(missing["is_error"], true);
    assert_eq!(
        missing["content"][0]["text"],
        "there is no snippet named `Hello`; did you mean `hello`? 2 snippets exist: `hello` and `retry-with-backoff`"
    );
    ok(&mut toolbelt(&home, &tools), "snippet_delete", json!({"name": "hello"}));
    assert_eq!(names(&mut toolbelt(&home, &app), json!({})), ["retry-with-backoff"]);
}

/// Every path below `root`.
fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(root).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        }
        out.push(path);
    }
    out
}

#[test]
fn project_scope_keeps_a_projects_snippets_to_itself() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    let (app, other) = (project(&home, "app"), project(&home, "other"));
    ok(&mut toolbelt(&home, &app), "snippet_save", json!({"name": "shared", "code": "x"}));
    let scoped = |root: &Path| {
        let mut cmd = toolbelt(&home, root);
        cmd.env("TOOLBELT_SNIPPETS__SCOPE", "project");
        cmd
    };
    let saved = ok(&mut scoped(&app), "snippet_save", json!({"name": "mine", "code": "y"}));
    assert_eq!(saved["scope"], "project");
    assert_eq!(names(&mut scoped(&app), json!({})), ["mine"], "the project's own, not the user's");
    assert_eq!(names(&mut scoped(&other), json!({})), Vec::<String>::new(), "another project, other snippets");
    assert_eq!(names(&mut toolbelt(&home, &app), json!({})), ["shared"], "the user's are untouched");
    let out = scoped(&app).args(["call", "snippet_delete", r#"{"name": "mine"}"#]).output().unwrap();
    assert_eq!(text(&out), "Deleted snippet #1 `mine` from this project's snippets.\n");

    // In the project's state directory, beside its task list; not in the repository.
    let projects = home.join(".test-home/.local/state/toolbelt/projects");
    let dirs: Vec<String> =
        std::fs::read_dir(&projects).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(dirs.iter().any(|d| d.starts_with("app-") && projects.join(d).join("snippets.db").is_file()), "{dirs:?}");
    assert!(walk(&app).iter().all(|p| !p.to_string_lossy().contains("snippets")));

    // The setting is a choice of the two places, nothing else.
    let out = toolbelt(&home, &app)
        .env("TOOLBELT_SNIPPETS__SCOPE", "/tmp/elsewhere")
        .args(["call", "snippet_list", "{}"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("snippets.scope") && stderr.contains("is not one of: user, project"), "{stderr}");
}

/// Runs `toolbelt batch` over `lines` in `root`; returns each result line.
fn batch(home: &Path, root: &Path, lines: &[Value]) -> Vec<Value> {
    let mut child = toolbelt(home, root)
        .arg("batch")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "batch failed: {}", String::from_utf8_lossy(&out.stderr));
    text(&out).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn processes_saving_at_once_lose_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().canonicalize().unwrap();
    let root = project(&home, "app");
    // Four processes at once: three `batch` runs and a loop of single `call`s, in two
    // projects, all saving to the user's snippets; each also saves one shared name.
    const BATCHES: usize = 3;
    const EACH: usize = 20;
    const CALLS: usize = 6;
    let other = project(&home, "other");
    std::thread::scope(|scope| {
        let mut workers = Vec::new();
        for p in 0..BATCHES {
            let (home, root) = (&home, if p % 2 == 0 { &root } else { &other });
            workers.push(scope.spawn(move || {
                let mut lines = Vec::new();
                for i in 0..EACH {
                    let own = json!({"name": format!("p{p}-{i}"), "code": format!("batch {p} item {i}"),
                        "tags": [format!("p{p}")]});
                    lines.push(json!({"name": "snippet_save", "input": own}));
                    let shared = json!({"name": "shared", "code": format!("from batch {p}")});
                    lines.push(json!({"name": "snippet_save", "input": shared}));
                }
                for r in batch(home, root, &lines) {
                    assert_eq!(r["outcome"], "ok", "{r}");
                }
            }));
        }
        let (home, root) = (&home, &root);
        workers.push(scope.spawn(move || {
            for i in 0..CALLS {
                ok(&mut toolbelt(home, root), "snippet_save", json!({"name": format!("call-{i}"), "code": "c"}));
            }
        }));
        for w in workers {
            w.join().unwrap();
        }
    });
    let listed = ok(&mut toolbelt(&home, &root), "snippet_list", json!({"limit": 500}));
    assert_eq!(listed["total"], BATCHES * EACH + CALLS + 1, "every snippet, the shared name once");
    for p in 0..BATCHES {
        let mine =
            names(&mut toolbelt(&home, &root), json!({"tags": [format!("p{p}")], "query": format!("batch {p}")}));
        assert_eq!(mine.len(), EACH, "batch {p}: {mine:?}");
    }
}
