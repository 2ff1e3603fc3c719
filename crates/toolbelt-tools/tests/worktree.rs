//! EnterWorktree and ExitWorktree with real git in temporary directories: the worktree and its
//! branch made, the session's working directory and roots moved there (and back), files
//! written by Write and Bash landing in the worktree, removal refused while it would lose
//! work, named sessions resumed in their worktree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use serde_json::{Value, json};
use toolbelt_core::{CancellationToken, EventSink, Extensions, Limits, SessionState, ToolContext};
use toolbelt_tools::files::JournalDir;
use toolbelt_tools::planning::WorktreeDir;

/// A repository with one commit on `main`, a folder for worktrees, and a session in the
/// repository.
struct World {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    worktrees: PathBuf,
    session: Arc<SessionState>,
}

/// Git as the tests run it: none of the machine's configuration, a fixed author.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .env_remove("GIT_INDEX_FILE")
        .output()
        .unwrap();
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
    let session = Arc::new(SessionState::new("test", repo.clone(), vec![repo.clone()]));
    World { worktrees: base.join("state/worktrees"), repo, session, _dir: dir }
}

impl World {
    fn cx(&self) -> ToolContext {
        let mut services = Extensions::default();
        services.insert(JournalDir(common::journal_dir()));
        services.insert(WorktreeDir(self.worktrees.clone()));
        let (session, cancel) = (Arc::clone(&self.session), CancellationToken::new());
        ToolContext::new("call", session, cancel, EventSink::none(), Limits::default(), services)
    }

    async fn ok(&self, tool: &str, input: Value) -> (String, Value) {
        common::ok_in(self.cx(), tool, input).await
    }

    async fn err(&self, tool: &str, input: Value) -> String {
        common::err_in(self.cx(), tool, input).await
    }

    fn branches(&self) -> String {
        git(&self.repo, &["branch", "--format=%(refname:short)"])
    }
}

#[tokio::test]
async fn a_created_worktree_takes_the_session_and_its_writes_then_removal_guards_the_work() {
    let w = world();
    let (text, out) = w.ok("EnterWorktree", json!({"name": "feature"})).await;
    let wt = w.worktrees.canonicalize().unwrap().join("feature");
    assert_eq!(out["worktree_path"], wt.display().to_string(), "{text}");
    assert_eq!((out["origin"].as_str(), out["branch"].as_str()), (Some("created"), Some("feature")));
    assert!(text.contains("on the new branch `feature`"), "{text}");
    assert!(w.branches().lines().any(|b| b == "feature"), "{}", w.branches());
    assert_eq!((w.session.cwd(), w.session.roots()), (wt.clone(), vec![wt.clone()]));
    assert_eq!(std::fs::read_to_string(wt.join("src/a.txt")).unwrap(), "one\n");

    // Write and Bash work in the worktree; the main tree stays as it was.
    w.ok("Write", json!({"file_path": "notes.txt", "content": "in the worktree\n"})).await;
    w.ok("Bash", json!({"command": "echo from bash > src/b.txt && pwd"})).await;
    assert_eq!(std::fs::read_to_string(wt.join("notes.txt")).unwrap(), "in the worktree\n");
    assert!(wt.join("src/b.txt").is_file());
    assert!(!w.repo.join("notes.txt").exists() && !w.repo.join("src/b.txt").exists());
    assert_eq!(git(&w.repo, &["status", "--porcelain"]), "");

    // Uncommitted files: removal is refused and the session stays.
    let refused = w.err("ExitWorktree", json!({"action": "remove"})).await;
    assert!(refused.contains("2 uncommitted changes") && refused.contains("?? notes.txt"), "{refused}");
    assert!(refused.contains("discard_changes: true") && refused.contains("Nothing was changed"), "{refused}");
    assert_eq!(w.session.cwd(), wt);

    // Committed on the worktree's branch only: still refused, naming the commit.
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-qm", "Add notes"]);
    let refused = w.err("ExitWorktree", json!({"action": "remove"})).await;
    assert!(refused.contains("1 commit of branch `feature` that no other branch holds"), "{refused}");
    assert!(refused.contains("Add notes") && !refused.contains("uncommitted"), "{refused}");

    // Discarding: the worktree and its branch go, the session comes back.
    std::fs::write(wt.join("scratch.txt"), "x").unwrap();
    let (text, out) = w.ok("ExitWorktree", json!({"action": "remove", "discard_changes": true})).await;
    assert_eq!(out["outcome"], "removed", "{text}");
    assert_eq!(
        (out["discarded_commits"].as_u64(), out["discarded_changes"][0].as_str()),
        (Some(1), Some("?? scratch.txt"))
    );
    assert!(text.contains("discarding 1 uncommitted change (?? scratch.txt) and 1 commit"), "{text}");
    assert!(!wt.exists());
    assert!(!w.branches().contains("feature"), "{}", w.branches());
    assert_eq!((w.session.cwd(), w.session.roots()), (w.repo.clone(), vec![w.repo.clone()]));
    let gone = w.err("ExitWorktree", json!({"action": "keep"})).await;
    assert!(gone.contains("not in a worktree"), "{gone}");
}

#[tokio::test]
async fn the_checkout_leaves_nothing_in_the_worktree_folder_and_sweeps_what_a_killed_one_left() {
    let w = world();
    // What a toolbelt killed mid-checkout left (no process has that id).
    let stale = w.worktrees.join(".checkout-999999999-0");
    std::fs::create_dir_all(stale.join("objects/info")).unwrap();
    w.ok("EnterWorktree", json!({"name": "tidy"})).await;
    let mut left: Vec<String> = std::fs::read_dir(&w.worktrees)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["tidy"]);
}

#[tokio::test]
async fn a_link_inside_the_workspace_does_not_carry_the_session_to_a_worktree_outside() {
    let w = world();
    let outside = w.repo.parent().unwrap().join("outside");
    git(&w.repo, &["worktree", "add", "-q", "-b", "outside", &outside.display().to_string()]);
    // A link in the workspace to a worktree elsewhere: the runtime asks about such a call (its
    // access needs approval), but the link may also have been swapped in after the call was
    // judged; the call itself refuses either way (this harness skips the policy).
    std::os::unix::fs::symlink(&outside, w.repo.join("there")).unwrap();
    let refused = w.err("EnterWorktree", json!({"path": "there"})).await;
    assert!(refused.contains("leads to") && refused.contains("give"), "{refused}");
    assert_eq!(w.session.roots(), vec![w.repo.clone()]);
    // Named by its own path, it is entered (that call is the one a person approves).
    let (text, _) = w.ok("EnterWorktree", json!({"path": outside.display().to_string()})).await;
    assert!(text.contains("Moved into the existing worktree"), "{text}");
}

#[tokio::test]
async fn a_checked_out_submodule_is_work_at_risk() {
    let w = world();
    let sub = w.repo.parent().unwrap().join("sub");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::write(sub.join("s.txt"), "s\n").unwrap();
    git(&sub, &["init", "-q", "-b", "main"]);
    git(&sub, &["add", "."]);
    git(&sub, &["commit", "-qm", "s"]);
    git(&w.repo, &["-c", "protocol.file.allow=always", "submodule", "add", "-q", &sub.display().to_string(), "sub"]);
    git(&w.repo, &["commit", "-qm", "sub"]);
    w.ok("EnterWorktree", json!({"name": "withsub"})).await;
    let wt = w.session.cwd();
    git(&wt, &["-c", "protocol.file.allow=always", "submodule", "update", "-q", "--init"]);
    std::fs::write(wt.join("sub/s.txt"), "changed in the submodule\n").unwrap();
    // Its own changes are not looked at (its git would read its own configuration), so the
    // checkout itself counts: removing the worktree would delete it.
    let refused = w.err("ExitWorktree", json!({"action": "remove"})).await;
    assert!(refused.contains("submodule sub (checked out"), "{refused}");
    assert!(wt.join("sub/s.txt").is_file());
    let (text, _) = w.ok("ExitWorktree", json!({"action": "remove", "discard_changes": true})).await;
    assert!(text.contains("Removed the worktree"), "{text}");
    assert!(!wt.exists());
}

#[tokio::test]
async fn work_merged_elsewhere_is_removed_without_discarding() {
    let w = world();
    w.ok("EnterWorktree", json!({"name": "merged"})).await;
    let wt = w.session.cwd();
    std::fs::write(wt.join("x.txt"), "x\n").unwrap();
    git(&wt, &["add", "."]);
    git(&wt, &["commit", "-qm", "x"]);
    git(&w.repo, &["merge", "-q", "--ff-only", "merged"]);
    let (text, out) = w.ok("ExitWorktree", json!({"action": "remove"})).await;
    assert_eq!(
        (out["discarded_commits"].as_u64(), out["discarded_changes"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
    assert!(text.starts_with("Removed the worktree") && !text.contains("discarding"), "{text}");
    assert!(!wt.exists() && !w.branches().contains("merged"));
    assert!(w.repo.join("x.txt").is_file(), "the merged work stays on main");
}

#[tokio::test]
async fn kept_worktrees_stay_and_can_be_entered_again_by_path() {
    let w = world();
    w.ok("EnterWorktree", json!({"name": "kept"})).await;
    let wt = w.session.cwd();
    let (text, out) = w.ok("ExitWorktree", json!({"action": "keep"})).await;
    assert_eq!(out["outcome"], "kept", "{text}");
    assert!(text.contains("stays on disk with its branch `kept`"), "{text}");
    assert!(wt.join("src/a.txt").is_file() && w.branches().contains("kept"));
    assert_eq!((w.session.cwd(), w.session.roots()), (w.repo.clone(), vec![w.repo.clone()]));

    // Back in by path (from a subdirectory of the main tree: the same one in the worktree).
    w.session.set_cwd(w.repo.join("src"));
    let (text, out) = w.ok("EnterWorktree", json!({"path": wt.display().to_string()})).await;
    assert_eq!((out["origin"].as_str(), out["branch"].as_str()), (Some("existing"), Some("kept")), "{text}");
    assert_eq!(out["removable"], true, "this session created it");
    assert_eq!((w.session.cwd(), w.session.roots()), (wt.join("src"), vec![wt.clone()]));
    // Still this session's own: it may remove it.
    let (text, _) = w.ok("ExitWorktree", json!({"action": "remove"})).await;
    assert!(text.starts_with("Removed the worktree") && !wt.exists(), "{text}");
    assert!(!w.branches().contains("kept"));
    assert_eq!(w.session.cwd(), w.repo.join("src"));
}

#[tokio::test]
async fn a_worktree_the_session_did_not_create_is_entered_and_switched_but_never_removed() {
    let w = world();
    let theirs = w.repo.parent().unwrap().join("theirs");
    git(&w.repo, &["worktree", "add", "-q", "-b", "theirs", &theirs.display().to_string()]);
    let (text, out) = w.ok("EnterWorktree", json!({"path": "../theirs"})).await;
    assert_eq!((out["origin"].as_str(), out["removable"].as_bool()), (Some("existing"), Some(false)), "{text}");
    assert!(text.contains("not removed"), "{text}");
    assert_eq!((w.session.cwd(), w.session.roots()), (theirs.clone(), vec![theirs.clone()]));
    let refused = w.err("ExitWorktree", json!({"action": "remove", "discard_changes": true})).await;
    assert!(refused.contains("was not created by EnterWorktree") && refused.contains("`keep`"), "{refused}");
    assert!(theirs.is_dir() && w.session.cwd() == theirs);
    // No new worktree from inside one, but a switch to another existing one by path.
    let nested = w.err("EnterWorktree", json!({"name": "second"})).await;
    assert!(nested.contains("ExitWorktree first") && nested.contains("`path`"), "{nested}");
    let back = w.err("EnterWorktree", json!({"path": w.repo.display().to_string()})).await;
    assert!(back.contains("where the session came from") && back.contains("ExitWorktree"), "{back}");
    git(&w.repo, &["worktree", "add", "-q", "--detach", &w.worktrees.join("other").display().to_string()]);
    let other = w.worktrees.canonicalize().unwrap().join("other");
    let (text, out) = w.ok("EnterWorktree", json!({"path": other.display().to_string()})).await;
    assert!(out.get("branch").is_none() && text.contains("a detached HEAD"), "{text}");
    assert_eq!(out["original_work_tree"], w.repo.display().to_string());
    assert_eq!((w.session.cwd(), w.session.roots()), (other.clone(), vec![other.clone()]));
    // Back to where the first EnterWorktree came from; both worktrees stay.
    w.ok("ExitWorktree", json!({"action": "keep"})).await;
    assert_eq!((w.session.cwd(), w.session.roots()), (w.repo.clone(), vec![w.repo.clone()]));
    assert!(theirs.is_dir() && other.is_dir());

    // Not a worktree of this repository, or the one the session is in: refused, nothing moves.
    let not = w.err("EnterWorktree", json!({"path": w.worktrees.display().to_string()})).await;
    assert!(not.contains("is not the top directory of a worktree") && not.contains("theirs"), "{not}");
    let elsewhere = w.repo.parent().unwrap().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    git(&elsewhere, &["init", "-q"]);
    let foreign = w.err("EnterWorktree", json!({"path": elsewhere.display().to_string()})).await;
    assert!(foreign.contains("is not the top directory of a worktree of this repository"), "{foreign}");
    let missing = w.err("EnterWorktree", json!({"path": "../nowhere"})).await;
    assert!(missing.contains("cannot enter") && missing.contains("`name` to create one"), "{missing}");
    let here = w.err("EnterWorktree", json!({"path": w.repo.display().to_string()})).await;
    assert!(here.contains("already works in"), "{here}");
    assert_eq!((w.session.cwd(), w.session.roots()), (w.repo.clone(), vec![w.repo.clone()]));
}

#[tokio::test]
async fn one_worktree_at_a_time() {
    let w = world();
    w.ok("EnterWorktree", json!({"name": "first"})).await;
    let nested = w.err("EnterWorktree", json!({"name": "second"})).await;
    assert!(nested.contains("already works in the worktree") && nested.contains("ExitWorktree first"), "{nested}");
    assert!(!w.branches().contains("second"));
    w.ok("ExitWorktree", json!({"action": "remove"})).await;
    w.ok("EnterWorktree", json!({"name": "second"})).await;
}

#[tokio::test]
async fn names_are_checked_and_made_up_when_missing() {
    let w = world();
    git(&w.repo, &["branch", "taken"]);
    let clash = w.err("EnterWorktree", json!({"name": "taken"})).await;
    assert!(clash.contains("a branch named `taken` already exists") && clash.contains("`taken-2` is free"), "{clash}");
    std::fs::create_dir_all(w.worktrees.join("busy")).unwrap();
    let clash = w.err("EnterWorktree", json!({"name": "busy"})).await;
    assert!(clash.contains("busy already exists") && clash.contains("`busy-2` is free"), "{clash}");
    for bad in ["../x", "a/b", "-x", "a b", ".."] {
        let refused = w.err("EnterWorktree", json!({"name": bad})).await;
        assert!(refused.contains("/name"), "{bad}: {refused}");
    }
    let refused = w.err("EnterWorktree", json!({"name": "a..b"})).await;
    assert!(refused.contains("not a valid branch name"), "{refused}");
    let both = w.err("EnterWorktree", json!({"name": "x", "path": "."})).await;
    assert!(both.contains("not both"), "{both}");
    assert_eq!(w.branches().lines().count(), 2, "nothing was created: {}", w.branches());

    let (_, out) = w.ok("EnterWorktree", json!({})).await;
    assert_eq!(out["branch"], "worktree");
    w.ok("ExitWorktree", json!({"action": "keep"})).await;
    let (_, out) = w.ok("EnterWorktree", json!({})).await;
    assert_eq!(out["branch"], "worktree-2");
}

#[tokio::test]
async fn outside_a_repository_or_before_a_commit_it_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().canonicalize().unwrap();
    let session = common::session(&plain, &[]);
    let mut services = Extensions::default();
    services.insert(WorktreeDir(plain.join("worktrees")));
    let cx = ToolContext::new("c", session, CancellationToken::new(), EventSink::none(), Limits::default(), services);
    let text = common::err_in(cx.clone(), "EnterWorktree", json!({"name": "x"})).await;
    assert!(text.contains("is not inside a git repository"), "{text}");
    git(&plain, &["init", "-q"]);
    let text = common::err_in(cx, "EnterWorktree", json!({"name": "x"})).await;
    assert!(text.contains("has no commit yet"), "{text}");
}

#[tokio::test]
async fn a_named_session_is_resumed_in_its_worktree() {
    let w = world();
    w.ok("EnterWorktree", json!({"name": "saved"})).await;
    let wt = w.session.cwd();
    let saved = w.session.save();

    // The next invocation: a fresh session from the flags, then the saved state.
    let other = w.repo.parent().unwrap().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let roots = vec![w.repo.clone(), other.clone()];
    let state = Arc::new(SessionState::new("test", w.repo.clone(), roots.clone()));
    state.load(saved).unwrap();
    assert_eq!(toolbelt_tools::planning::resume_worktree(&state, &roots), None);
    assert_eq!((state.cwd(), state.roots()), (wt.clone(), vec![wt.clone(), other.clone()]));
    let resumed = World { session: Arc::clone(&state), ..w };
    resumed.ok("ExitWorktree", json!({"action": "keep"})).await;
    assert_eq!((state.cwd(), state.roots()), (resumed.repo.clone(), roots.clone()));

    // A worktree removed meanwhile is forgotten, with a notice.
    resumed.session.set_cwd(resumed.repo.clone());
    resumed.ok("EnterWorktree", json!({"path": wt.display().to_string()})).await;
    let saved = resumed.session.save();
    git(&resumed.repo, &["worktree", "remove", &wt.display().to_string()]);
    let state = SessionState::new("test", resumed.repo.clone(), roots.clone());
    state.load(saved).unwrap();
    let notice = toolbelt_tools::planning::resume_worktree(&state, &roots).unwrap();
    assert!(notice.contains("no longer exists"), "{notice}");
    assert_eq!((state.cwd(), state.roots()), (resumed.repo.clone(), roots));
}
