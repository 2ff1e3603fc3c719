//! Protected paths: the files that decide what runs next — toolbelt's settings, the agent
//! host's, git's internals and the editor's.
//!
//! An agent that can write these can widen its own policy: one Write to
//! `.toolbelt/config.toml` turns the sandbox off for the next session, a `core.fsmonitor` in
//! `.git/config` runs at the user's next `git status`, a hook in `.git/hooks/` at their next
//! commit, a task in `.vscode/tasks.json` when the folder opens. So writing any of them asks
//! in **every** mode — `acceptEdits` and `bypassPermissions` included — unless an allow rule
//! names the path (`Edit(./.git/hooks/pre-commit)`; a broad `Edit(./**)` does not count), and
//! a hook's allow cannot skip the question. The Bash sandbox keeps the ones inside writable
//! roots read-only as well (see `toolbelt-tools`' sandbox).
//!
//! Protected, at any depth below any directory:
//!
//! | entry | why |
//! |---|---|
//! | `.git` | `config` (fsmonitor, textconv, pager, hooksPath…), `hooks/`, `info/attributes` run programs |
//! | `.toolbelt` | toolbelt's project settings: mode, rules, hooks, MCP servers, sandbox |
//! | `.claude` | Claude Code's settings, hooks, agents, skills and commands |
//! | `.mcp.json` | MCP servers a host starts |
//! | `.vscode`, `.idea` | editor tasks and run configurations that start on open |
//!
//! plus the absolute paths the embedder adds ([`ProtectedPaths::with_paths`]): toolbelt's user
//! settings and state directories, the managed settings, and the user's git configuration —
//! except the folders beneath them the embedder hands to the model to work in
//! ([`ProtectedPaths::except`]: the worktrees `EnterWorktree` makes in the state directory).
//! The names stay protected there too: a worktree's `.git` asks like any other.

use std::path::{Component, Path, PathBuf};

pub use toolbelt_core::PROTECTED_NAMES;

/// The paths no tool writes without an explicit approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedPaths {
    names: Vec<String>,
    paths: Vec<PathBuf>,
    except: Vec<PathBuf>,
}

impl Default for ProtectedPaths {
    /// Every entry of [`PROTECTED_NAMES`], at any depth.
    fn default() -> Self {
        Self { names: PROTECTED_NAMES.iter().map(|n| n.to_string()).collect(), paths: Vec::new(), except: Vec::new() }
    }
}

impl ProtectedPaths {
    /// Also protects these absolute paths and everything beneath them.
    pub fn with_paths(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        for path in paths {
            if !self.paths.contains(&path) {
                self.paths.push(path);
            }
        }
        self
    }

    /// Leaves these absolute paths, and everything beneath them, out of the protected
    /// absolute paths (the protected names still hold beneath them).
    pub fn except(mut self, paths: impl IntoIterator<Item = PathBuf>) -> Self {
        for path in paths {
            if !self.except.contains(&path) {
                self.except.push(path);
            }
        }
        self
    }

    /// The protected absolute paths (besides the names).
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The entry that makes `path` protected (`.git`, or one of the absolute paths), if any.
    /// Names are compared without case: on a case-insensitive file system `.GIT` is `.git`.
    pub fn protects(&self, path: &Path) -> Option<String> {
        for component in path.components() {
            if let Component::Normal(name) = component {
                let name = name.to_string_lossy();
                if let Some(hit) = self.names.iter().find(|n| n.eq_ignore_ascii_case(&name)) {
                    return Some(hit.clone());
                }
            }
        }
        if self.except.iter().any(|e| path.starts_with(e)) {
            return None;
        }
        self.paths.iter().find(|p| path.starts_with(p)).map(|p| p.display().to_string())
    }

    /// The word an allow rule must spell out to name the entry `protects` returned: the name
    /// itself, or an absolute path's last component (`toolbelt` for `~/.config/toolbelt`).
    pub fn entry_word(entry: &str) -> &str {
        Path::new(entry).file_name().and_then(|n| n.to_str()).unwrap_or(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_at_any_depth_and_paths_beneath() {
        let p = ProtectedPaths::default().with_paths([PathBuf::from("/home/ann/.config/toolbelt")]);
        for (path, hit) in [
            ("/w/.git/config", Some(".git")),
            ("/w/sub/vendor/.git/hooks/pre-commit", Some(".git")),
            ("/w/.GIT/config", Some(".git")),
            ("/w/.toolbelt/config.toml", Some(".toolbelt")),
            ("/w/.claude/settings.json", Some(".claude")),
            ("/w/pkg/.mcp.json", Some(".mcp.json")),
            ("/w/.vscode/tasks.json", Some(".vscode")),
            ("/w/.idea/workspace.xml", Some(".idea")),
            ("/home/ann/.config/toolbelt/config.toml", Some("/home/ann/.config/toolbelt")),
            ("/w/src/git.rs", None),
            ("/w/.gitignore", None),
            ("/w/.github/workflows/ci.yml", None),
            ("/home/ann/.config/toolbelt-other/x", None),
        ] {
            assert_eq!(p.protects(Path::new(path)).as_deref(), hit, "{path}");
        }
        assert_eq!(ProtectedPaths::entry_word("/home/ann/.config/toolbelt"), "toolbelt");
        assert_eq!(ProtectedPaths::entry_word(".git"), ".git");
    }

    #[test]
    fn exceptions_open_a_folder_but_not_the_names_in_it() {
        let state = PathBuf::from("/home/ann/.local/state/toolbelt");
        let worktrees = state.join("projects/p-1/worktrees");
        let p = ProtectedPaths::default().with_paths([state.clone()]).except([worktrees.clone()]);
        assert_eq!(p.protects(&worktrees.join("x/src/main.rs")), None);
        assert_eq!(p.protects(&worktrees.join("x/.git")).as_deref(), Some(".git"));
        for path in ["projects/p-1/audit.jsonl", "projects/p-1/worktrees-x/a", "trust.json"] {
            assert_eq!(p.protects(&state.join(path)), Some(state.display().to_string()), "{path}");
        }
    }
}
