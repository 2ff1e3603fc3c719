//! `Read(…)` deny rules and git's history: a committed file is printed by `git show
//! HEAD:secret.txt`, `git log -p` or `git grep x HEAD` from `.git/objects`, where no path rule
//! and no sandbox mask of the working file reaches. So a git command that may print stored
//! files ([`toolbelt_command::history`]) asks, in every mode, while a `Read(…)` deny rule
//! could hide a file of a repository the session works in; `dontAsk` denies it.
//!
//! Sound rather than clever: whether the denied path is tracked, or was once, would take
//! walking the history at every call, so any rule whose pattern can reach inside a
//! workspace root, or inside the repository holding one, counts. A rule about files
//! elsewhere (`Read(~/.ssh/**)`) leaves git alone. An allow rule for the command does not
//! skip the question (it was written to let the command run, not to lift a denial), and the
//! question offers no rule to remember: each such command is asked about.

use std::path::{Path, PathBuf};

use super::PermissionEngine;
use crate::rules::{CallParts, Rule};
use crate::{CallInfo, Decision, Verdict};

impl PermissionEngine {
    /// The question for a call whose git commands may print stored files while a `Read(…)`
    /// deny rule could hide one of them; `None` when there is none to ask.
    pub(super) fn history_question(&self, call: &CallInfo<'_>, parts: &CallParts) -> Option<Verdict> {
        let git = parts.history.first()?;
        let rule = self.history_rule(&call.session.roots())?;
        let verdict = Verdict::new(
            Decision::Ask,
            format!(
                "`{git}` can print files from git's history, where the deny rule `{}` cannot be checked (git \
                 shows a committed file whatever the working tree holds), so it needs approval in every mode; \
                 git commands that print no file's content (`git log --stat`, `git diff --name-only`) run \
                 without it",
                rule.text()
            ),
            rule.source(),
        );
        Some(verdict)
    }

    /// The first `Read(…)` deny rule that could hide a file of a repository holding or inside
    /// one of `roots`.
    fn history_rule(&self, roots: &[PathBuf]) -> Option<&Rule> {
        let reach: Vec<PathBuf> = roots.iter().flat_map(|r| [r.clone()].into_iter().chain(repository_top(r))).collect();
        self.rules.deny.iter().filter(|r| r.tool_name() == Some("Read")).find(|rule| {
            rule.read_base().is_some_and(|base| reach.iter().any(|dir| base.starts_with(dir) || dir.starts_with(&base)))
        })
    }
}

/// The work tree of the repository `dir` lies in: the nearest directory at or above it
/// holding `.git`.
fn repository_top(dir: &Path) -> Option<PathBuf> {
    dir.ancestors().find(|d| d.join(".git").symlink_metadata().is_ok()).map(Path::to_path_buf)
}
