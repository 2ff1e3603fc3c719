//! The git directory a linked worktree shares with its repository, for `sandbox.git_writes`.
//!
//! A worktree made by `git worktree add` (or `EnterWorktree`) keeps its index and `HEAD` in
//! `<repository>/.git/worktrees/<name>` and its objects and refs in the repository's `.git`:
//! both outside the worktree, so outside the workspace roots. With `git_writes`, a commit in
//! the worktree needs them writable, as the checkout's own `.git` is — with the same parts
//! held read-only (configuration, hooks, `info/`, every worktree's `gitdir`), which only the
//! mount namespace can do. So the shared directory is granted only where that namespace is
//! available.
//!
//! The `.git` file of a root is written by whatever writes in the root, so it is not taken
//! at its word: the directory it names must be `<common>/worktrees/<name>`, its `gitdir`
//! must name this very `.git` file back, and `<common>` must look like a git directory
//! (`HEAD`, `objects/`, `refs/`). Pointing a planted `.git` file at a directory would need
//! those files in it already — that is, write access there to begin with.

use std::path::{Path, PathBuf};

/// Bytes of a `.git` or `gitdir` file read at most.
const MAX_POINTER: u64 = 4096;

/// The shared git directories of the roots that are linked worktrees (not those inside a
/// root already, which the root's own rules cover), each once.
pub(super) fn shared_git_dirs(roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for root in roots {
        if let Some(common) = shared_git_dir(root)
            && !roots.iter().any(|r| common.starts_with(r))
            && !out.contains(&common)
        {
            out.push(common);
        }
    }
    out
}

/// The repository's git directory when `root` is a linked worktree of it.
fn shared_git_dir(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let pointer = read_pointer(&dot_git)?;
    let named = pointer.strip_prefix("gitdir:")?.trim();
    let private = std::fs::canonicalize(root.join(named)).ok()?;
    // The worktree's own git directory names this `.git` file back.
    let back = read_pointer(&private.join("gitdir"))?;
    let back = std::fs::canonicalize(private.join(back.trim())).ok()?;
    if back != std::fs::canonicalize(&dot_git).ok()? {
        return None;
    }
    let common = read_pointer(&private.join("commondir"))?;
    let common = std::fs::canonicalize(private.join(common.trim())).ok()?;
    let looks_like_git =
        common.join("HEAD").is_file() && common.join("objects").is_dir() && common.join("refs").is_dir();
    (private.parent() == Some(common.join("worktrees").as_path()) && looks_like_git).then_some(common)
}

/// A small regular file's text (not a symlink, not a device).
fn read_pointer(path: &Path) -> Option<String> {
    let meta = path.symlink_metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_POINTER {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    #[test]
    fn a_real_worktree_shares_its_repositorys_git_directory_and_a_planted_pointer_shares_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (repo, tree) = (base.join("repo"), base.join("tree"));
        std::fs::create_dir_all(&repo).unwrap();
        std::fs::write(repo.join("a.txt"), "a\n").unwrap();
        git(&repo, &["init", "-q", "-b", "main"]);
        git(&repo, &["add", "."]);
        git(&repo, &["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "one"]);
        git(&repo, &["worktree", "add", "-q", "-b", "side", tree.to_str().unwrap()]);
        assert_eq!(shared_git_dirs(std::slice::from_ref(&tree)), [repo.join(".git")]);
        // The checkout itself is no linked worktree; a root holding the repository covers it.
        assert!(shared_git_dirs(std::slice::from_ref(&repo)).is_empty());
        assert!(shared_git_dirs(&[tree.clone(), base.clone()]).is_empty());

        // A `.git` file planted in another root, naming the real worktree's git directory
        // (whose `gitdir` names the real worktree) or a directory of its own making.
        let planted = base.join("planted");
        std::fs::create_dir_all(&planted).unwrap();
        let private = repo.join(".git/worktrees/tree");
        std::fs::write(planted.join(".git"), format!("gitdir: {}\n", private.display())).unwrap();
        assert!(shared_git_dirs(std::slice::from_ref(&planted)).is_empty());
        let victim = base.join("victim");
        std::fs::create_dir_all(victim.join("worktrees/x")).unwrap();
        std::fs::write(victim.join("worktrees/x/gitdir"), format!("{}\n", planted.join(".git").display())).unwrap();
        std::fs::write(victim.join("worktrees/x/commondir"), "../..\n").unwrap();
        std::fs::write(planted.join(".git"), format!("gitdir: {}\n", victim.join("worktrees/x").display())).unwrap();
        assert!(shared_git_dirs(std::slice::from_ref(&planted)).is_empty(), "not a git directory");
        std::fs::write(victim.join("HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir_all(victim.join("objects")).unwrap();
        std::fs::create_dir_all(victim.join("refs")).unwrap();
        // Only with every file in place — which took write access to `victim` already.
        assert_eq!(shared_git_dirs(std::slice::from_ref(&planted)), [victim]);
    }
}
