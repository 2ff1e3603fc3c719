//! EnterWorktree and ExitWorktree through the real binary, on a git repository each test
//! makes: a batch (one session) that creates a worktree, writes in it and removes it only
//! when told to discard; kept worktrees entered again by `path`; a worktree the session did
//! not create never removed; named sessions that stay in their worktree across invocations;
//! and the errors outside a repository and for bad input, which change nothing.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{Value, json};

#[path = "common/hermetic.rs"]
mod hermetic;

/// A temporary directory holding `repo/` (a git repository with one commit on `main`) and
/// the test's home, where toolbelt keeps its state and so the worktrees.
struct World {
    _dir: tempfile::TempDir,
    base: PathBuf,
    repo: PathBuf,
}

/// Variables that keep git away from the machine's configuration and give commits an author.
const GIT_ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_AUTHOR_NAME", "t"),
    ("GIT_AUTHOR_EMAIL", "t@example.com"),
    ("GIT_COMMITTER_NAME", "t"),
    ("GIT_COMMITTER_EMAIL", "t@example.com"),
];

fn git(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    cmd.args(args).current_dir(dir).envs(GIT_ENV.iter().copied());
    for name in ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"] {
        cmd.env_remove(name);
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn world() -> World {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().canonicalize().unwrap();
    let repo = base.join("repo");
    std::fs::create_dir_all(repo.join("src")).unwrap();
    std::fs::write(repo.join("src/a.txt"), "one\n").unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "one"]);
    World { _dir: dir, base, repo }
}

impl World {
    /// `toolbelt ARGS…` in the repository, hermetic, edits allowed in the workspace and the
    /// worktree tools allowed (they ask in every mode otherwise).
    fn toolbelt(&self, args: &[&str]) -> Output {
        let mut cmd = hermetic::toolbelt(&self.base);
        cmd.current_dir(&self.repo).envs(GIT_ENV.iter().copied());
        cmd.args(args).args(["--mode", "acceptEdits", "--allow", "EnterWorktree", "--allow", "ExitWorktree"]);
        cmd.output().unwrap()
    }

    /// Runs the calls as one `toolbelt batch` (one session); one result per call.
    fn batch(&self, calls: &[(&str, Value)]) -> Vec<Value> {
        let input: String = calls
            .iter()
            .enumerate()
            .map(|(i, (name, input))| format!("{}\n", json!({"id": i.to_string(), "name": name, "input": input})))
            .collect();
        let mut cmd = hermetic::toolbelt(&self.base);
        cmd.current_dir(&self.repo).envs(GIT_ENV.iter().copied());
        cmd.args(["batch", "--mode", "acceptEdits", "--allow", "EnterWorktree", "--allow", "ExitWorktree"]);
        let out = run_with_stdin(cmd, &input);
        let results: Vec<Value> =
            String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(results.len(), calls.len(), "{}", String::from_utf8_lossy(&out.stderr));
        results
    }

    /// Where toolbelt makes this project's worktrees (in the test's state directory).
    fn worktrees(&self) -> PathBuf {
        let projects = self.base.join(".test-home/.local/state/toolbelt/projects");
        let project = std::fs::read_dir(&projects).unwrap().next().unwrap().unwrap().path();
        assert!(project.file_name().unwrap().to_string_lossy().starts_with("repo-"), "{}", project.display());
        project.join("worktrees")
    }

    fn branches(&self) -> Vec<String> {
        git(&self.repo, &["branch", "--format=%(refname:short)"]).lines().map(str::to_string).collect()
    }
}

fn run_with_stdin(mut cmd: Command, input: &str) -> Output {
    use std::io::Write as _;
    use std::process::Stdio;
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn outcome(result: &Value) -> &str {
    result["outcome"].as_str().unwrap()
}

#[test]
fn a_batch_works_in_a_new_worktree_and_removes_it_only_when_told_to_discard() {
    let w = world();
    let results = w.batch(&[
        ("EnterWorktree", json!({"name": "feature"})),
        ("Write", json!({"file_path": "notes.txt", "content": "in the worktree\n"})),
        ("Bash", json!({"command": "pwd && ls"})),
        // The original checkout is outside the workspace now: writing there asks, and nobody can answer.
        ("Write", json!({"file_path": w.repo.join("stray.txt").display().to_string(), "content": "x\n"})),
        ("ExitWorktree", json!({"action": "remove"})),
        ("Bash", json!({"command": "cat notes.txt"})),
        ("ExitWorktree", json!({"action": "remove", "discard_changes": true})),
        ("Write", json!({"file_path": "back.txt", "content": "in the repository\n"})),
    ]);
    let wt = w.worktrees().join("feature");
    let entered = &results[0];
    assert_eq!(outcome(entered), "ok", "{entered}");
    assert_eq!(entered["structured"]["worktree_path"], wt.display().to_string());
    assert_eq!(entered["structured"]["branch"], "feature");
    assert_eq!(entered["structured"]["roots"], json!([wt.display().to_string()]));
    assert!(text(entered).contains(&format!("{} stays as it was", w.repo.display())), "{entered}");

    assert_eq!(outcome(&results[1]), "ok", "{}", results[1]);
    let listed = text(&results[2]);
    assert!(listed.starts_with(&format!("{}\n", wt.display())) && listed.contains("notes.txt"), "{listed}");
    assert_eq!(outcome(&results[3]), "denied", "{}", results[3]);

    let refused = &results[4];
    assert_eq!(outcome(refused), "failed", "{refused}");
    assert!(text(refused).contains("1 uncommitted change (?? notes.txt)"), "{refused}");
    assert!(text(refused).contains("discard_changes: true"), "{refused}");
    // Refused means nothing changed: the session is still in the worktree, the file still there.
    assert_eq!(text(&results[5]), "in the worktree\n", "{}", results[5]);

    let removed = &results[6];
    assert_eq!(outcome(removed), "ok", "{removed}");
    assert_eq!(removed["structured"]["discarded_changes"], json!(["?? notes.txt"]));
    assert_eq!(removed["structured"]["working_directory"], w.repo.display().to_string());
    assert_eq!(outcome(&results[7]), "ok", "{}", results[7]);

    assert!(!wt.exists(), "the worktree is gone");
    let left: Vec<_> = std::fs::read_dir(w.worktrees()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "nothing is left in the worktree folder (the checkouts' own repositories): {left:?}");
    assert_eq!(w.branches(), ["main"]);
    assert_eq!(std::fs::read_to_string(w.repo.join("back.txt")).unwrap(), "in the repository\n");
    assert!(!w.repo.join("notes.txt").exists() && !w.repo.join("stray.txt").exists());
    assert_eq!(git(&w.repo, &["worktree", "list", "--porcelain"]).matches("worktree ").count(), 1);
}

#[test]
fn kept_worktrees_stay_and_path_switches_into_existing_ones() {
    let w = world();
    // Inside the workspace: one outside it needs a person's approval to enter (see the
    // attack tests).
    let theirs = w.repo.join("theirs");
    git(&w.repo, &["worktree", "add", "-q", "-b", "theirs", &theirs.display().to_string()]);
    let results = w.batch(&[
        ("EnterWorktree", json!({"name": "kept"})),
        ("Write", json!({"file_path": "src/b.txt", "content": "kept work\n"})),
        ("ExitWorktree", json!({"action": "keep"})),
        // Another worktree of this repository, which the session did not create.
        ("EnterWorktree", json!({"path": "theirs"})),
        ("ExitWorktree", json!({"action": "remove", "discard_changes": true})),
        ("Write", json!({"file_path": "theirs.txt", "content": "x\n"})),
        ("ExitWorktree", json!({"action": "keep"})),
    ]);
    let wt = w.worktrees().join("kept");
    for (i, result) in results.iter().enumerate().filter(|(i, _)| *i != 4) {
        assert_eq!(outcome(result), "ok", "call {i}: {result}");
    }
    assert_eq!(results[2]["structured"]["outcome"], "kept");
    assert!(text(&results[2]).contains("stays on disk with its branch `kept`"), "{}", results[2]);
    assert_eq!(results[3]["structured"]["origin"], "existing");
    assert_eq!(results[3]["structured"]["removable"], false);
    assert!(text(&results[4]).contains("was not created by EnterWorktree"), "{}", results[4]);

    assert_eq!(std::fs::read_to_string(wt.join("src/b.txt")).unwrap(), "kept work\n");
    assert!(theirs.join("theirs.txt").is_file(), "the switch moved the session into it");
    assert!(!w.repo.join("src/b.txt").exists() && !w.repo.join("theirs.txt").exists());
    assert_eq!(w.branches(), ["kept", "main", "theirs"]);

    // Back in by path, in a later batch: the kept worktree, with its file.
    let results = w.batch(&[
        ("EnterWorktree", json!({"path": wt.display().to_string()})),
        ("Read", json!({"file_path": "src/b.txt"})),
        ("ExitWorktree", json!({"action": "keep"})),
    ]);
    assert_eq!(results[0]["structured"]["branch"], "kept", "{}", results[0]);
    assert!(text(&results[1]).contains("kept work"), "{}", results[1]);
    assert!(wt.is_dir());
}

#[test]
fn a_named_session_stays_in_its_worktree_across_invocations() {
    let w = world();
    let call = |tool: &str, input: Value| {
        let out = w.toolbelt(&["call", "--session", "work", "--json", tool, &input.to_string()]);
        let result: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert!(out.status.success(), "{tool}: {result}");
        result
    };
    call("EnterWorktree", json!({"name": "saved"}));
    call("Write", json!({"file_path": "later.txt", "content": "next invocation\n"}));
    let wt = w.worktrees().join("saved");
    assert!(wt.join("later.txt").is_file() && !w.repo.join("later.txt").exists());
    let left = call("ExitWorktree", json!({"action": "keep"}));
    assert_eq!(left["structured"]["working_directory"], w.repo.display().to_string());
    call("Write", json!({"file_path": "after.txt", "content": "back\n"}));
    assert!(w.repo.join("after.txt").is_file() && !wt.join("after.txt").exists());
}

#[test]
fn bad_input_and_no_repository_are_errors_that_change_nothing() {
    let w = world();
    let results = w.batch(&[
        ("EnterWorktree", json!({"name": "../x"})),
        ("EnterWorktree", json!({"name": "a..b"})),
        ("EnterWorktree", json!({"path": "src"})),
        ("EnterWorktree", json!({"name": "x", "path": "."})),
        ("ExitWorktree", json!({"action": "keep"})),
    ]);
    assert_eq!(outcome(&results[0]), "invalid_input", "{}", results[0]);
    assert!(text(&results[0]).contains("/name"), "{}", results[0]);
    assert!(text(&results[1]).contains("not a valid branch name"), "{}", results[1]);
    assert!(text(&results[2]).contains("is not the top directory of a worktree of this repository"));
    assert!(text(&results[3]).contains("not both"), "{}", results[3]);
    assert!(text(&results[4]).contains("not in a worktree"), "{}", results[4]);
    assert_eq!(w.branches(), ["main"]);

    // Not allowed: denied before git runs.
    let mut cmd = hermetic::toolbelt(&w.base);
    cmd.current_dir(&w.repo).envs(GIT_ENV.iter().copied());
    let out = cmd.args(["call", "EnterWorktree", r#"{"name": "asked"}"#]).output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("needs approval") && said.contains("--allow 'EnterWorktree'"), "{said}");
    assert_eq!(w.branches(), ["main"]);

    // Outside a repository.
    let plain = w.base.join("plain");
    std::fs::create_dir_all(&plain).unwrap();
    let mut cmd = hermetic::toolbelt(&w.base);
    cmd.current_dir(&plain).envs(GIT_ENV.iter().copied()).env("GIT_CEILING_DIRECTORIES", &w.base);
    cmd.args(["call", "EnterWorktree", "{}", "--allow", "EnterWorktree"]);
    let out = cmd.output().unwrap();
    let said = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("is not inside a git repository"), "{said}");
}

#[test]
fn with_git_writes_a_worktree_commits_to_its_repository_whose_config_stays_read_only() {
    let w = world();
    let commit = "echo two > b.txt && git add b.txt && git commit -qm two && echo committed; \
                  git config core.fsmonitor x || echo config-refused; \
                  touch \"$(git rev-parse --git-common-dir)/hooks/pre-commit\" || echo hooks-refused";
    let input: String = [
        json!({"id": "0", "name": "EnterWorktree", "input": {"name": "commits"}}),
        json!({"id": "1", "name": "Bash", "input": {"command": commit}}),
        json!({"id": "2", "name": "ExitWorktree", "input": {"action": "keep"}}),
    ]
    .iter()
    .map(|l| format!("{l}\n"))
    .collect();
    let mut cmd = hermetic::toolbelt(&w.base);
    cmd.current_dir(&w.repo).envs(GIT_ENV.iter().copied()).env("TOOLBELT_SANDBOX__GIT_WRITES", "true");
    cmd.args(["batch", "--allow", "EnterWorktree", "--allow", "ExitWorktree", "--allow", "Bash"]);
    let out = run_with_stdin(cmd, &input);
    let results: Vec<Value> =
        String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(results.len(), 3, "{}", String::from_utf8_lossy(&out.stderr));
    let said = text(&results[1]);
    assert!(said.contains("committed"), "the commit lands: {said}");
    assert!(said.contains("config-refused") && said.contains("hooks-refused"), "{said}");
    assert_eq!(git(&w.repo, &["log", "-1", "--format=%s", "commits"]).trim(), "two");
    let config = std::fs::read_to_string(w.repo.join(".git/config")).unwrap();
    assert!(!config.contains("fsmonitor"), "{config}");
    assert!(!w.repo.join(".git/hooks/pre-commit").exists());
}
