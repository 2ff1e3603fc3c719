//! `ExitWorktree`: back from the worktree `EnterWorktree` entered, keeping it or removing it.
//!
//! Claude Code's name and parameters (`action: keep|remove`, `discard_changes`). The session
//! returns to the working directory and workspace roots it had before. `remove` deletes the
//! worktree and the branch made for it, and refuses while that would lose work — uncommitted
//! changes, or commits no other branch holds — unless `discard_changes` is set; it removes
//! only a worktree `EnterWorktree` created in this session, never one the session found and
//! entered by `path`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::planning::enter_worktree::SESSION_STATE;
use crate::planning::worktree::at_risk::{self, AtRisk};
use crate::planning::worktree::git::Git;
use crate::planning::worktree::session::{self, EnteredWorktree, WorktreeDir, WorktreeSession, shell_word, shown};

/// What to do with the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExitAction {
    /// Leave the worktree and its branch on disk, to come back to or merge later.
    Keep,
    /// Delete the worktree and its branch (only one EnterWorktree created in this session).
    Remove,
}

/// Input of `ExitWorktree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExitWorktreeInput {
    /// `keep` the worktree on disk, or `remove` it with its branch.
    pub action: ExitAction,
    /// With `remove`: delete the worktree even though it has uncommitted changes or commits
    /// no other branch holds. That work is lost: set it only when the user agreed.
    #[serde(default)]
    pub discard_changes: bool,
}

/// What became of the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ExitOutcome {
    /// Left on disk with its branch.
    Kept,
    /// Deleted, with the branch made for it.
    Removed,
}

/// What `ExitWorktree` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExitWorktreeOutput {
    /// What became of the worktree.
    pub outcome: ExitOutcome,
    /// The worktree's top directory.
    pub worktree_path: String,
    /// Its branch (deleted with it when removed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Uncommitted changes deleted with it, as `git status --porcelain` lists them.
    pub discarded_changes: Vec<String>,
    /// How many commits no other branch held were deleted with it.
    pub discarded_commits: usize,
    /// The working directory now (the one before EnterWorktree).
    pub working_directory: String,
    /// The workspace roots now.
    pub roots: Vec<String>,
}

impl Render for ExitWorktreeOutput {
    fn render(&self) -> Vec<Content> {
        let branch =
            |with: &str| self.branch.as_deref().map(|b| format!(" {with} its branch `{b}`")).unwrap_or_default();
        let first = match self.outcome {
            ExitOutcome::Kept => format!(
                "Left the worktree {}; it stays on disk{} (EnterWorktree with this `path` goes back to it).",
                self.worktree_path,
                branch("with")
            ),
            ExitOutcome::Removed => {
                let lost =
                    AtRisk { changes: self.discarded_changes.clone(), commits: self.discarded_commits, listed: vec![] };
                let discarded =
                    if lost.is_empty() { String::new() } else { format!(", discarding {}", lost.describe(None)) };
                format!("Removed the worktree {}{}{discarded}.", self.worktree_path, branch("and"))
            }
        };
        let text = format!(
            "{first} The working directory is back to {}; workspace roots: {}.",
            self.working_directory,
            self.roots.join(", ")
        );
        vec![Content::text(text)]
    }
}

/// The `ExitWorktree` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExitWorktree;

const DESCRIPTION: &str = "Leave the worktree EnterWorktree moved the session into, and return to the original \
working directory and workspace roots. `action: keep` leaves the worktree and its branch on disk (to come back to, \
or to merge later). `action: remove` deletes the worktree and its branch; it is refused while the worktree has \
uncommitted changes or commits no other branch holds, unless `discard_changes: true` — which loses that work, so \
ask the user first (or commit and merge it). Only a worktree EnterWorktree created in this session can be removed; \
an existing one entered by `path` can only be kept.";

impl Tool for ExitWorktree {
    type Input = ExitWorktreeInput;
    type Output = ExitWorktreeOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ExitWorktree", DESCRIPTION)
            .deferred()
            .title("Leave the git worktree")
            .aliases(["exit_worktree"])
            .category(Category::Planning)
            .tags(["git", "worktree", "session"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("git worktree leave exit remove keep branch return")
    }

    /// Changes the session's working directory and roots; removing a worktree this session
    /// created also runs git and writes (deletes) the worktree.
    fn access(&self, input: &ExitWorktreeInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let access = Access::exclusive().changes_state(SESSION_STATE);
        let entered = cx.with_slot::<WorktreeSession, _>(|s| s.entered.clone());
        match entered {
            Some(entered) if input.action == ExitAction::Remove && entered.created => {
                Ok(access.executes(removal_command(&entered)).writes(entered.path))
            }
            _ => Ok(access),
        }
    }

    async fn call(&self, input: ExitWorktreeInput, cx: ToolContext) -> Result<ExitWorktreeOutput, ToolError> {
        let entered = cx.with_slot::<WorktreeSession, _>(|s| s.entered.clone()).ok_or_else(|| {
            ToolError::failed(
                "the session is not in a worktree entered with EnterWorktree (or has already left it); there is \
                 nothing to exit",
            )
        })?;
        let mut outcome = ExitWorktreeOutput {
            outcome: ExitOutcome::Kept,
            worktree_path: shown(&entered.path),
            branch: entered.branch.clone(),
            discarded_changes: Vec::new(),
            discarded_commits: 0,
            working_directory: String::new(),
            roots: Vec::new(),
        };
        if input.action == ExitAction::Remove {
            let lost = remove(&cx, &entered, input.discard_changes).await?;
            session::forget_made(&cx, &entered.path);
            outcome.outcome = ExitOutcome::Removed;
            (outcome.discarded_changes, outcome.discarded_commits) = (lost.changes, lost.commits);
        }
        session::leave(&cx);
        outcome.working_directory = shown(&cx.session().cwd());
        outcome.roots = cx.session().roots().iter().map(|r| shown(r)).collect();
        Ok(outcome)
    }
}

/// The command lines removing `entered` runs, as declared (always `--force`: see [`remove`]).
fn removal_command(entered: &EnteredWorktree) -> String {
    let mut command = format!("git worktree remove --force {}", shell_word(&shown(&entered.path)));
    if let Some(branch) = &entered.branch {
        command.push_str(&format!(" && git branch -D {}", shell_word(branch)));
    }
    command
}

/// Removes the worktree `entered` and its branch, unless that loses work nobody agreed to
/// lose; returns what was discarded.
async fn remove(cx: &ToolContext, entered: &EnteredWorktree, discard: bool) -> Result<AtRisk, ToolError> {
    if !entered.created {
        return Err(ToolError::failed(format!(
            "the worktree {} was not created by EnterWorktree in this session (it was entered by `path`), so it is \
             not removed; call ExitWorktree with `keep`. Removing it is the user's decision (`git worktree remove`)",
            entered.path.display()
        )));
    }
    let git = Git::plain();
    let lost = at_risk::at_risk(&git, entered, &WorktreeDir::of(cx)).await?;
    if !lost.is_empty() && !discard {
        return Err(ToolError::failed(format!(
            "the worktree {} has work that removing it would lose: {}. Commit it and merge it into another branch \
             (or push it), or call ExitWorktree with `keep`; or, only if the user agreed to lose it, with `remove` \
             and `discard_changes: true`. Nothing was changed: the session is still in the worktree",
            entered.path.display(),
            lost.describe(entered.branch.as_deref())
        )));
    }
    let place = shown(&entered.path);
    cx.progress(format!("git worktree remove {place}"), None);
    if entered.path.is_dir() {
        // Always forced: what would be lost was just judged above, without running a filter
        // of the repository's, and git's own check runs `status` in the worktree, which would.
        git.run(&entered.from, &["worktree", "remove", "--force", &place]).await?;
    } else {
        // Deleted by hand: forget its administrative files.
        git.run(&entered.from, &["worktree", "prune"]).await?;
    }
    if let Some(branch) = &entered.branch
        && at_risk::branch_exists(&git, &entered.from, branch).await?
    {
        git.run(&entered.from, &["branch", "-D", branch]).await?;
    }
    Ok(lost)
}
