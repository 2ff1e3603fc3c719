//! What removing a worktree would lose: its uncommitted changes (untracked files included,
//! ignored ones not; asked of a [`Shadow`] repository, so no filter of the repository's runs
//! to compare files), and the commits of its HEAD and of the branch made for it that no
//! other branch, local or remote, holds.

use std::path::Path;

use toolbelt_core::ToolError;

use crate::planning::worktree::git::Git;
use crate::planning::worktree::session::EnteredWorktree;
use crate::planning::worktree::shadow::Shadow;

/// Most commits named in a refusal.
const LISTED: usize = 5;
/// Most changed files named in a refusal.
const LISTED_CHANGES: usize = 10;

/// Work that removing a worktree would lose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AtRisk {
    /// Uncommitted changes, as `git status --porcelain` lists them (`M src/a.rs`).
    pub changes: Vec<String>,
    /// How many commits no other branch holds.
    pub commits: usize,
    /// The first of them, `abc1234 subject`.
    pub listed: Vec<String>,
}

impl AtRisk {
    /// Whether nothing would be lost.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.commits == 0
    }

    /// "2 uncommitted changes (M a.txt, ?? new.txt) and 1 commit on no other branch (abc1234 Add x)".
    pub fn describe(&self, branch: Option<&str>) -> String {
        let mut parts = Vec::new();
        if !self.changes.is_empty() {
            let mut named: Vec<&str> = self.changes.iter().take(LISTED_CHANGES).map(String::as_str).collect();
            if self.changes.len() > LISTED_CHANGES {
                named.push("…");
            }
            parts.push(format!("{} ({})", count(self.changes.len(), "uncommitted change"), named.join(", ")));
        }
        if self.commits > 0 {
            let on = branch.map(|b| format!(" of branch `{b}`")).unwrap_or_default();
            let mut named = self.listed.join("; ");
            if !named.is_empty() {
                if self.commits > self.listed.len() {
                    named.push_str("; …");
                }
                named = format!(" ({named})");
            }
            parts.push(format!("{}{on} that no other branch holds{named}", count(self.commits, "commit")));
        }
        parts.join(" and ")
    }
}

/// "1 commit", "3 commits".
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// What removing `entered` (and the branch made for it) would lose; `folder` is the worktree
/// folder, where the shadow repository is made.
pub async fn at_risk(git: &Git, entered: &EnteredWorktree, folder: &Path) -> Result<AtRisk, ToolError> {
    let mut risk = AtRisk::default();
    let mut heads: Vec<String> = Vec::new();
    if entered.path.is_dir() {
        risk.changes = Shadow::of(&entered.path, folder).await?.changes().await?;
        let head = git.output(&entered.path, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).await?;
        let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
        if !head.is_empty() {
            heads.push(head);
        }
    }
    if let Some(branch) = &entered.branch
        && branch_exists(git, &entered.from, branch).await?
    {
        heads.push(format!("refs/heads/{branch}"));
    }
    if heads.is_empty() {
        return Ok(risk);
    }
    // Every branch but the one made for the worktree (which goes with it), and every remote one.
    let mut others: Vec<String> = vec!["--not".into()];
    if let Some(branch) = &entered.branch {
        others.push(format!("--exclude={branch}"));
    }
    others.extend(["--branches".to_string(), "--remotes".to_string()]);
    let args = |first: &[&str]| -> Vec<String> {
        first.iter().map(|s| (*s).to_string()).chain(heads.iter().cloned()).chain(others.iter().cloned()).collect()
    };
    let counted = run(git, &entered.from, &args(&["rev-list", "--count"])).await?;
    risk.commits = counted.trim().parse().unwrap_or(0);
    if risk.commits > 0 {
        let max = format!("--max-count={LISTED}");
        let listed = run(git, &entered.from, &args(&["rev-list", &max, "--format=%h %s"])).await?;
        // `commit <sha>` headers, each followed by its formatted line.
        risk.listed = listed.lines().skip(1).step_by(2).map(|l| l.trim_end().to_string()).collect();
    }
    Ok(risk)
}

/// Whether the branch exists in the repository of `dir`.
pub async fn branch_exists(git: &Git, dir: &Path, branch: &str) -> Result<bool, ToolError> {
    let reference = format!("refs/heads/{branch}");
    Ok(git.output(dir, &["show-ref", "--verify", "--quiet", &reference]).await?.status.success())
}

async fn run(git: &Git, dir: &Path, args: &[String]) -> Result<String, ToolError> {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Ok(git.run(dir, &args).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_what_would_be_lost() {
        let risk = AtRisk {
            changes: vec!["M a.txt".into(), "?? new.txt".into()],
            commits: 6,
            listed: vec!["abc1234 Add x".into()],
        };
        assert_eq!(
            risk.describe(Some("x")),
            "2 uncommitted changes (M a.txt, ?? new.txt) and 6 commits of branch `x` that no other branch holds \
             (abc1234 Add x; …)"
        );
        assert!(AtRisk::default().is_empty());
    }
}
