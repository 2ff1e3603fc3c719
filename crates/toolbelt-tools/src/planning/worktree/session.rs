//! What the worktree tools share: where worktrees are made, the session slot that remembers
//! what was entered and where from, names, and how the working directory and the workspace
//! roots move into a worktree and back.
//!
//! **Where.** In the folder the front end gives as [`WorktreeDir`] (the binary gives the
//! project's directory under the user's state directory, `…/projects/<project>-<hash>/
//! worktrees/`), one directory per worktree named as its branch. Not in the repository: a
//! checkout inside the main tree shows up in its Grep, Glob and `git status`, and the places
//! a repository could hold it (`.toolbelt/`, `.claude/`) are protected paths every write
//! would ask about. Without a `WorktreeDir` (a library user), `$XDG_STATE_HOME/toolbelt/
//! worktrees` is used.
//!
//! **Moving.** Entering a worktree `W` from the work tree `T` moves every workspace root
//! inside `T` to the same place in `W` (to `W` itself when that place does not exist there)
//! and the working directory with them; roots outside `T` stay, and `W` comes first when no
//! root was inside `T`. The session's cwd and roots before the move are kept in the
//! [`WorktreeSession`] slot, which `ExitWorktree` restores; a named session saves the slot
//! with its other state, and [`resume`] moves a reopened one back into its worktree.
//!
//! **Switching.** As in Claude Code, a session in a worktree may move into another existing
//! worktree by `path` (the roots move from the one it is in), but creates no second one
//! until it left; `ExitWorktree` always goes back to where the first `EnterWorktree` came
//! from. The slot also lists the worktrees the session created, so one it left with `keep`
//! and entered again by `path` is still its own to remove.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toolbelt_core::{SessionSlot, SessionState, ToolContext, ToolError};

use crate::planning::worktree::git::Git;

/// Where `EnterWorktree` makes worktrees (a service the front end sets up).
#[derive(Debug, Clone)]
pub struct WorktreeDir(pub PathBuf);

impl WorktreeDir {
    /// The folder for a call: the configured one, else `$XDG_STATE_HOME/toolbelt/worktrees`.
    pub fn of(cx: &ToolContext) -> PathBuf {
        match cx.service::<WorktreeDir>() {
            Some(dir) => dir.0.clone(),
            None => crate::dirs::default_state_dir().join("worktrees"),
        }
    }
}

/// Whether `path` lies where the session may move its workspace without a person's word:
/// beneath the worktree folder (where `EnterWorktree` makes worktrees, in the user's state
/// directory) or inside one of the session's workspace roots, where it already works.
///
/// Anywhere else, entering an existing worktree would make a directory the workspace that
/// nobody chose: `git worktree list` names whatever `.git/worktrees/*/gitdir` says, and a
/// command can write those files (in a repository it made with `git init`, or with
/// `sandbox.git_writes`). Judged on the path as given and on where it really leads; both
/// must be in reach.
pub fn in_reach(cx: &ToolContext, path: &Path) -> bool {
    let places = reach(cx);
    inside(&places, &toolbelt_core::paths::normalize(path)) && inside(&places, &toolbelt_core::paths::real_path(path))
}

/// Whether `path` *as written* (`..` folded, links not followed) lies where [`in_reach`]
/// says. A path written in reach was not asked about when its call was authorized unless it
/// led out then; one written out of reach always was.
pub fn named_in_reach(cx: &ToolContext, path: &Path) -> bool {
    inside(&reach(cx), &toolbelt_core::paths::normalize(path))
}

/// The worktree folder and the session's roots, each as written and as it really is.
fn reach(cx: &ToolContext) -> Vec<PathBuf> {
    let mut places = vec![WorktreeDir::of(cx)];
    places.extend(cx.session().roots());
    places
        .into_iter()
        .flat_map(|p| [toolbelt_core::paths::real_path(&p), toolbelt_core::paths::normalize(&p)])
        .collect()
}

fn inside(places: &[PathBuf], path: &Path) -> bool {
    places.iter().any(|place| path.starts_with(place))
}

/// The worktree the session works in after `EnterWorktree`, if any, and the worktrees it
/// created.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorktreeSession {
    /// What was entered, and what to go back to.
    #[serde(default)]
    pub entered: Option<EnteredWorktree>,
    /// The worktrees `EnterWorktree` created in this session and `ExitWorktree` has not
    /// removed: the only ones it ever removes, also when the session left one (`keep`) and
    /// entered it again by `path`.
    #[serde(default)]
    pub made: Vec<MadeWorktree>,
}

impl WorktreeSession {
    /// The branch made for the worktree at `path`, if this session created it.
    pub fn made_branch(&self, path: &Path) -> Option<&str> {
        self.made.iter().find(|m| m.path == path).map(|m| m.branch.as_str())
    }
}

/// A worktree `EnterWorktree` created.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MadeWorktree {
    /// Its top directory.
    pub path: PathBuf,
    /// The branch made for it.
    pub branch: String,
}

impl SessionSlot for WorktreeSession {
    const KEY: &'static str = "worktree";
}

/// A worktree the session entered, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnteredWorktree {
    /// The worktree's top directory.
    pub path: PathBuf,
    /// The work tree the session was in before its first `EnterWorktree` (where git is run
    /// to remove the worktree).
    pub from: PathBuf,
    /// The branch made for it when this session created it; else the branch checked out
    /// there when entered.
    pub branch: Option<String>,
    /// Whether `EnterWorktree` created it in this session; only such a worktree is ever
    /// removed.
    pub created: bool,
    /// The working directory to return to.
    pub original_cwd: PathBuf,
    /// The workspace roots to return to.
    pub original_roots: Vec<PathBuf>,
}

/// The longest worktree name.
pub const MAX_NAME: usize = 64;

/// Why `name` cannot name a worktree and its branch, if it cannot.
///
/// One path segment only: Claude Code also takes `a/b`, but here the name is the directory
/// under the worktree folder, and `feature/login` would put one worktree inside the
/// directory of another (`feature`).
pub fn name_problem(name: &str) -> Option<String> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let why = if name.is_empty() || name.len() > MAX_NAME {
        format!("is {} characters long (1 to {MAX_NAME})", name.chars().count())
    } else if !name.chars().all(allowed) {
        "holds characters other than letters, digits, `.`, `_` and `-`".to_string()
    } else if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        "does not start with a letter or a digit".to_string()
    } else if name.contains("..") || name.ends_with('.') || name.ends_with(".lock") || name == "HEAD" {
        "is not a valid branch name (no `..`, no `.` or `.lock` at the end, not `HEAD`)".to_string()
    } else {
        return None;
    };
    Some(format!(
        "the worktree name {name:?} {why}; use a short name such as `fix-login` (it names the directory and the new branch)"
    ))
}

/// `name`, `name-2`, `name-3`…: the names tried for a worktree, the given one first.
pub fn candidates(name: &str) -> impl Iterator<Item = String> + '_ {
    std::iter::once(name.to_string()).chain((2..1000).map(move |n| format!("{name}-{n}")))
}

/// What already uses a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clash {
    /// A branch of that name exists.
    Branch,
    /// Something exists at the worktree's directory.
    Directory(PathBuf),
}

/// What already uses `name` in the repository of `top` or the worktree folder `dir`.
pub async fn clash(git: &Git, top: &Path, dir: &Path, name: &str) -> Result<Option<Clash>, ToolError> {
    let path = dir.join(name);
    if path.symlink_metadata().is_ok() {
        return Ok(Some(Clash::Directory(path)));
    }
    let reference = format!("refs/heads/{name}");
    let found = git.output(top, &["show-ref", "--verify", "--quiet", &reference]).await?;
    Ok(found.status.success().then_some(Clash::Branch))
}

/// The top directory of the work tree holding `dir`, or an error saying it is in none.
pub async fn work_tree_top(git: &Git, dir: &Path) -> Result<PathBuf, ToolError> {
    let out = git.output(dir, &["rev-parse", "--show-toplevel"]).await?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() && !text.is_empty() {
        return Ok(std::fs::canonicalize(&text).unwrap_or_else(|_| PathBuf::from(text)));
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if said.contains("not a git repository") {
        return Err(ToolError::failed(format!(
            "the working directory {} is not inside a git repository, so there is nothing to make a worktree of; \
             move into a repository first (or ask the user to run `git init` there)",
            dir.display()
        )));
    }
    Err(ToolError::failed(format!("cannot find the git work tree of {}: {said}", dir.display())))
}

/// `path` inside `from` moved to the same place inside `to` (to `to` itself when that place
/// is not a directory there); any other path as it is.
pub fn moved(path: &Path, from: &Path, to: &Path) -> PathBuf {
    match path.strip_prefix(from) {
        Ok(rel) if rel.as_os_str().is_empty() => to.to_path_buf(),
        Ok(rel) => {
            let there = to.join(rel);
            if there.is_dir() { there } else { to.to_path_buf() }
        }
        Err(_) => path.to_path_buf(),
    }
}

/// The roots moved from `from` into `to` (see the module docs).
pub fn moved_roots(roots: &[PathBuf], from: &Path, to: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    if !roots.iter().any(|r| r.starts_with(from)) {
        out.push(to.to_path_buf());
    }
    for root in roots {
        let root = moved(root, from, to);
        if !out.contains(&root) {
            out.push(root);
        }
    }
    out
}

/// How a worktree is entered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Created by this call on the new branch named here.
    Created(String),
    /// An existing worktree, with the branch checked out there (`None`: a detached HEAD).
    Existing(Option<String>),
}

/// Moves the session from the work tree `from` into the worktree `to` and remembers how to
/// come back; returns what was entered. When the session already works in a worktree (a
/// switch by `path`), the roots move from that one and the way back stays the one from
/// before the first `EnterWorktree`.
pub fn enter(cx: &ToolContext, from: &Path, to: &Path, entry: Entry) -> EnteredWorktree {
    let session = cx.session();
    let (cwd, roots) = (session.cwd(), session.roots());
    let real_cwd = std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone());
    cx.with_slot::<WorktreeSession, _>(|s| {
        if let Entry::Created(branch) = &entry {
            s.made.push(MadeWorktree { path: to.to_path_buf(), branch: branch.clone() });
        }
        // A worktree this session made keeps the branch made for it, whatever is checked out.
        let (branch, created) = match (s.made_branch(to), entry) {
            (Some(made), _) => (Some(made.to_string()), true),
            (None, Entry::Created(branch)) => (Some(branch), true),
            (None, Entry::Existing(branch)) => (branch, false),
        };
        let entered = match s.entered.take() {
            Some(previous) => {
                session.set_roots(moved_roots(&roots, &previous.path, to));
                session.set_cwd(moved(&real_cwd, &previous.path, to));
                EnteredWorktree { path: to.to_path_buf(), branch, created, ..previous }
            }
            None => {
                session.set_roots(moved_roots(&roots, from, to));
                session.set_cwd(moved(&real_cwd, from, to));
                EnteredWorktree {
                    path: to.to_path_buf(),
                    from: from.to_path_buf(),
                    branch,
                    created,
                    original_cwd: cwd,
                    original_roots: roots,
                }
            }
        };
        s.entered = Some(entered.clone());
        entered
    })
}

/// Forgets that this session created the worktree at `path` (it was removed).
pub fn forget_made(cx: &ToolContext, path: &Path) {
    cx.with_slot::<WorktreeSession, _>(|s| s.made.retain(|m| m.path != path));
}

/// Puts the session back where it was before it entered; returns what it left.
pub fn leave(cx: &ToolContext) -> Option<EnteredWorktree> {
    let entered = cx.with_slot::<WorktreeSession, _>(|s| s.entered.take())?;
    cx.session().set_roots(entered.original_roots.clone());
    cx.session().set_cwd(entered.original_cwd.clone());
    Some(entered)
}

/// Moves a reopened named session back into the worktree it was in, if any: `roots` are the
/// workspace roots this invocation was started with, which become the ones `ExitWorktree`
/// returns to. A worktree that no longer exists is forgotten, the session put back at its
/// original directory (or the first root) and the returned notice says so.
pub fn resume(state: &SessionState, roots: &[PathBuf]) -> Option<String> {
    let mut entered = state.with_slot::<WorktreeSession, _>(|s| s.entered.clone())?;
    if !entered.path.is_dir() {
        state.with_slot::<WorktreeSession, _>(|s| s.entered = None);
        let back = Some(entered.original_cwd.clone())
            .filter(|d| d.is_dir() && roots.iter().any(|r| d.starts_with(r)))
            .or_else(|| roots.first().cloned());
        if let Some(dir) = &back {
            state.set_cwd(dir.clone());
        }
        state.set_roots(roots.to_vec());
        return Some(format!(
            "the worktree {} this session worked in no longer exists; the session is back in {}",
            entered.path.display(),
            back.as_deref().unwrap_or(Path::new("its working directory")).display()
        ));
    }
    let new_roots = moved_roots(roots, &entered.from, &entered.path);
    let cwd = state.cwd();
    if !new_roots.iter().any(|r| cwd.starts_with(r)) {
        // A working directory given for this invocation (`--cwd`): the same place in the worktree.
        entered.original_cwd = cwd.clone();
        state.set_cwd(moved(&cwd, &entered.from, &entered.path));
    }
    entered.original_roots = roots.to_vec();
    state.set_roots(new_roots);
    state.with_slot::<WorktreeSession, _>(|s| s.entered = Some(entered));
    None
}

/// One entry of `git worktree list --porcelain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedWorktree {
    /// Its top directory.
    pub path: PathBuf,
    /// The branch checked out there (`None`: a detached HEAD).
    pub branch: Option<String>,
    /// A bare repository (no files to work in).
    pub bare: bool,
}

/// Parses `git worktree list --porcelain`.
pub fn parse_worktree_list(text: &str) -> Vec<ListedWorktree> {
    let mut out: Vec<ListedWorktree> = Vec::new();
    for line in text.lines() {
        if let Some(path) = line.strip_prefix("worktree ") {
            out.push(ListedWorktree { path: PathBuf::from(path), branch: None, bare: false });
        } else if let Some(last) = out.last_mut() {
            if let Some(reference) = line.strip_prefix("branch ") {
                last.branch = Some(reference.strip_prefix("refs/heads/").unwrap_or(reference).to_string());
            } else if line == "bare" {
                last.bare = true;
            }
        }
    }
    out
}

/// `s` as one shell word (quoted when it needs to be), for the command lines calls declare.
pub fn shell_word(s: &str) -> String {
    let plain = !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain { s.to_string() } else { format!("'{}'", s.replace('\'', r"'\''")) }
}

/// A path as results show it.
pub fn shown(path: &Path) -> String {
    path.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        for good in ["fix-login", "v1.2", "a", "A_b-3", &"x".repeat(MAX_NAME)] {
            assert_eq!(name_problem(good), None, "{good}");
        }
        for bad in ["", "-x", ".x", "a/b", "a b", "a..b", "a.", "a.lock", "HEAD", "ü", &"x".repeat(MAX_NAME + 1)] {
            assert!(name_problem(bad).is_some(), "{bad}");
        }
        assert_eq!(candidates("x").take(3).collect::<Vec<_>>(), ["x", "x-2", "x-3"]);
    }

    #[test]
    fn roots_inside_the_work_tree_move_and_the_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        let (t, w) = (dir.path().join("repo"), dir.path().join("wt"));
        for d in [t.join("sub"), w.join("sub")] {
            std::fs::create_dir_all(d).unwrap();
        }
        let other = dir.path().join("other");
        assert_eq!(moved_roots(&[t.clone(), other.clone()], &t, &w), [w.clone(), other.clone()]);
        assert_eq!(moved_roots(&[t.join("sub")], &t, &w), [w.join("sub")]);
        // A place the worktree does not have: the worktree itself.
        assert_eq!(moved(&t.join("gone"), &t, &w), w);
        assert_eq!(moved(&t, &t, &w).as_os_str(), w.as_os_str(), "no trailing `/`");
        // No root inside the work tree: the worktree comes first.
        assert_eq!(moved_roots(std::slice::from_ref(&other), &t, &w), [w.clone(), other]);
    }

    #[test]
    fn worktree_list() {
        let text = "worktree /r\nHEAD abc\nbranch refs/heads/main\n\nworktree /w/x\nHEAD def\ndetached\n\n\
                    worktree /b\nbare\n";
        let list = parse_worktree_list(text);
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].branch.as_deref(), Some("main"));
        assert_eq!((list[1].path.as_path(), list[1].branch.as_deref()), (Path::new("/w/x"), None));
        assert!(list[2].bare);
    }

    #[test]
    fn shell_words() {
        assert_eq!(shell_word("/a/b-c"), "/a/b-c");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
