//! `EnterWorktree`: a git worktree on a new branch, and the session moved into it.
//!
//! Claude Code's name and parameters (`name`, or `path` for an existing worktree). The new
//! worktree starts at the current HEAD, on a branch named as the worktree, in the folder the
//! front end gives ([`WorktreeDir`]); the session's working directory and workspace roots
//! move there, so file tools and commands work in the worktree and the original checkout
//! stays as it was. One created worktree at a time: `name` while in a worktree is refused
//! until `ExitWorktree` has brought the session back, while `path` may switch to another
//! existing worktree (as in Claude Code) — one outside the worktree folder and the workspace
//! roots only with a person's approval ([`session::in_reach`]). The checkout runs no filter
//! of the repository's ([`Shadow`]).

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::planning::worktree::git::Git;
use crate::planning::worktree::session::{
    self, Clash, EnteredWorktree, Entry, MAX_NAME, WorktreeDir, WorktreeSession, shell_word, shown,
};
use crate::planning::worktree::shadow::Shadow;

/// What a call changes in the session besides files.
pub(crate) const SESSION_STATE: &str = "the session's working directory and workspace roots";

/// Input of `EnterWorktree`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterWorktreeInput {
    /// Name of the new worktree, which is also the name of its new branch: letters, digits,
    /// `.`, `_` and `-`. One is made up when omitted.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"))]
    pub name: Option<String>,
    /// An existing worktree of this repository to move into instead of creating one: its top
    /// directory, absolute or relative to the working directory. Not with `name`.
    #[schemars(length(min = 1))]
    pub path: Option<String>,
}

/// Whether the worktree was made by this call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WorktreeOrigin {
    /// Created by this call, on a new branch.
    Created,
    /// An existing worktree, entered by `path`.
    Existing,
}

/// What `EnterWorktree` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct EnterWorktreeOutput {
    /// The worktree's top directory.
    pub worktree_path: String,
    /// Whether it was created now or already existed.
    pub origin: WorktreeOrigin,
    /// Whether `ExitWorktree` may remove it: this session created it.
    pub removable: bool,
    /// The branch checked out in it (absent when its HEAD is detached).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The commit its new branch starts at (created worktrees only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_commit: Option<String>,
    /// The working directory now.
    pub working_directory: String,
    /// The workspace roots now.
    pub roots: Vec<String>,
    /// The work tree the session came from, which stays as it was.
    pub original_work_tree: String,
}

impl Render for EnterWorktreeOutput {
    fn render(&self) -> Vec<Content> {
        let branch = self.branch.as_deref().map(|b| format!("`{b}`")).unwrap_or_else(|| "a detached HEAD".into());
        let first = match (self.origin, &self.base_commit) {
            (WorktreeOrigin::Created, base) => format!(
                "Created the worktree {} on the new branch {branch}{} and moved into it.",
                self.worktree_path,
                base.as_deref().map(|c| format!(" (from {})", short(c))).unwrap_or_default()
            ),
            (WorktreeOrigin::Existing, _) => {
                format!("Moved into the existing worktree {} (on {branch}).", self.worktree_path)
            }
        };
        let leave = if self.removable {
            "When done, call ExitWorktree: `keep` leaves the worktree and its branch on disk, `remove` deletes both."
        } else {
            "When done, call ExitWorktree with `keep` to go back (this session did not create it, so it is not removed)."
        };
        let text = format!(
            "{first} The working directory is now {}; workspace roots: {}. Files and commands now work in the \
             worktree; {} stays as it was. {leave}",
            self.working_directory,
            self.roots.join(", "),
            self.original_work_tree
        );
        vec![Content::text(text)]
    }
}

fn short(commit: &str) -> &str {
    commit.get(..12).unwrap_or(commit)
}

/// The `EnterWorktree` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnterWorktree;

const DESCRIPTION: &str = "Create a git worktree (a second checkout of this repository, on a new branch starting \
at the current HEAD) and move the session into it: the working directory and the workspace roots switch to the \
worktree, so file tools and commands work there while the original checkout stays untouched. Use it when the user \
asks to work in a worktree or in isolation from the current checkout. `name` names the worktree and its new branch \
(letters, digits, `.`, `_`, `-`; made up when omitted; a name already used is refused with a free one suggested). \
`path` moves into an existing worktree of this repository instead (also from inside a worktree); one outside the \
workspace and the worktree folder needs the user's approval. A new worktree cannot be created from inside one: \
call ExitWorktree to come back first (`keep` leaves the worktree on disk, `remove` deletes a worktree this session \
created).";

/// The worktree a call asks for.
enum Target<'a> {
    Named(&'a str),
    MadeUp,
    Existing(&'a str),
}

impl<'a> Target<'a> {
    fn of(input: &'a EnterWorktreeInput) -> Result<Self, ToolError> {
        match (input.name.as_deref(), input.path.as_deref()) {
            (Some(_), Some(_)) => Err(ToolError::failed(
                "give `name` (to create a worktree) or `path` (to enter an existing one), not both",
            )),
            (Some(name), None) => match session::name_problem(name) {
                Some(problem) => Err(ToolError::failed(problem)),
                None => Ok(Target::Named(name)),
            },
            (None, Some(path)) => Ok(Target::Existing(path)),
            (None, None) => Ok(Target::MadeUp),
        }
    }
}

/// A path with the symlinks of its existing part followed.
fn real(path: &Path) -> PathBuf {
    toolbelt_core::paths::real_path(path)
}

impl Tool for EnterWorktree {
    type Input = EnterWorktreeInput;
    type Output = EnterWorktreeOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("EnterWorktree", DESCRIPTION)
            .deferred()
            .title("Work in a git worktree")
            .aliases(["enter_worktree"])
            .category(Category::Planning)
            .tags(["git", "worktree", "session"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: false })
            .search_hint("git worktree branch isolate separate checkout parallel work")
    }

    /// Runs git; writes the new worktree (or, for an existing one, makes it a workspace root,
    /// where later edits are judged as inside the workspace: declared as a write of it); and
    /// changes the session's working directory and roots. An existing worktree outside the
    /// worktree folder and the workspace roots ([`session::in_reach`]) needs a person's
    /// approval whatever the rules and the mode allow.
    fn access(&self, input: &EnterWorktreeInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let access = Access::exclusive();
        let access = match Target::of(input)? {
            Target::Named(name) => {
                let path = real(&WorktreeDir::of(cx).join(name));
                let command = format!("git worktree add -b {} {} HEAD", shell_word(name), shell_word(&shown(&path)));
                access.executes(command).writes(path)
            }
            // The name is made up when the call runs: the worktree goes beneath the folder.
            Target::MadeUp => access.executes("git worktree add").writes(real(&WorktreeDir::of(cx))),
            Target::Existing(path) => {
                let given = toolbelt_core::paths::normalize(&cx.resolve(Path::new(path)));
                let access = access.executes("git worktree list --porcelain").writes(given.clone());
                if session::in_reach(cx, &given) {
                    access
                } else {
                    access.needs_approval(format!(
                        "entering {} makes it the workspace (files and commands work there), and it lies outside \
                         the workspace roots and the folder toolbelt makes worktrees in",
                        given.display()
                    ))
                }
            }
        };
        Ok(access.changes_state(SESSION_STATE))
    }

    async fn call(&self, input: EnterWorktreeInput, cx: ToolContext) -> Result<EnterWorktreeOutput, ToolError> {
        let target = Target::of(&input)?;
        let current = cx.with_slot::<WorktreeSession, _>(|s| s.entered.clone());
        if let (Some(entered), Target::Named(_) | Target::MadeUp) = (&current, &target) {
            return Err(ToolError::failed(format!(
                "the session already works in the worktree {} (entered with EnterWorktree) and creates no second \
                 one from there; call ExitWorktree first (`keep` or `remove`), then EnterWorktree again — or give \
                 `path` to move into another existing worktree",
                entered.path.display()
            )));
        }
        // The repository is the one of the worktree the session is in, else of its directory.
        let here = current.as_ref().map_or_else(|| cx.cwd(), |e| e.path.clone());
        let git = Git::plain();
        let top = session::work_tree_top(&git, &here).await?;
        let (entered, base, origin) = match target {
            Target::Existing(path) => {
                (enter_existing(&cx, &git, &top, current.as_ref(), path).await?, None, WorktreeOrigin::Existing)
            }
            Target::Named(name) => {
                let (entered, base) = create(&cx, &git, &top, Some(name)).await?;
                (entered, base, WorktreeOrigin::Created)
            }
            Target::MadeUp => {
                let (entered, base) = create(&cx, &git, &top, None).await?;
                (entered, base, WorktreeOrigin::Created)
            }
        };
        Ok(EnterWorktreeOutput {
            worktree_path: shown(&entered.path),
            origin,
            removable: entered.created,
            branch: entered.branch,
            base_commit: base,
            working_directory: shown(&cx.session().cwd()),
            roots: cx.session().roots().iter().map(|r| shown(r)).collect(),
            original_work_tree: shown(&entered.from),
        })
    }
}

/// Creates a worktree of `top`'s repository on a new branch and enters it; what was entered
/// and the commit it starts at.
///
/// `git worktree add --no-checkout` makes the worktree and its branch without writing a file;
/// the files are then written by a [`Shadow`] repository, which never reads the repository's
/// configuration, so no filter it defines (under any name, through any include) runs. A
/// worktree whose checkout failed is removed with its branch.
async fn create(
    cx: &ToolContext,
    git: &Git,
    top: &Path,
    name: Option<&str>,
) -> Result<(EnteredWorktree, Option<String>), ToolError> {
    let dir = WorktreeDir::of(cx);
    let head = git.output(top, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).await?;
    let base = String::from_utf8_lossy(&head.stdout).trim().to_string();
    if !head.status.success() || base.is_empty() {
        return Err(ToolError::failed(format!(
            "the repository at {} has no commit yet, and a worktree starts from one; commit first",
            top.display()
        )));
    }
    let name = match name {
        Some(name) => {
            if let Some(clash) = session::clash(git, top, &dir, name).await? {
                let free = first_free(git, top, &dir, name).await?;
                let what = match clash {
                    Clash::Branch => format!("a branch named `{name}` already exists"),
                    Clash::Directory(path) => format!("{} already exists", path.display()),
                };
                let suggestion = free.map(|f| format!(" (`{f}` is free)")).unwrap_or_default();
                return Err(ToolError::failed(format!(
                    "cannot create the worktree `{name}`: {what}; choose another name{suggestion}, or enter an \
                     existing worktree with `path`"
                )));
            }
            name.to_string()
        }
        None => first_free(git, top, &dir, "worktree")
            .await?
            .ok_or_else(|| ToolError::failed("no free worktree name was found; give one with `name`"))?,
    };
    make_private_dir(&dir)?;
    let path = dir.join(&name);
    let place = shown(&path);
    cx.progress(format!("git worktree add {place}"), None);
    git.run(top, &["worktree", "add", "--no-checkout", "-b", &name, &place, &base]).await?;
    let path = std::fs::canonicalize(&path).unwrap_or(path);
    let checked_out = match Shadow::of(&path, &dir).await {
        Ok(shadow) => shadow.checkout(&base).await,
        Err(e) => Err(e),
    };
    if let Err(e) = checked_out {
        // Nothing half-made stays: the worktree and the branch made for it go.
        let _ = git.run(top, &["worktree", "remove", "--force", &shown(&path)]).await;
        let _ = git.run(top, &["branch", "-D", &name]).await;
        return Err(e);
    }
    Ok((session::enter(cx, top, &path, Entry::Created(name)), Some(base)))
}

/// The first of `name`, `name-2`, `name-3`… that no branch and no directory uses.
async fn first_free(git: &Git, top: &Path, dir: &Path, name: &str) -> Result<Option<String>, ToolError> {
    for candidate in session::candidates(name) {
        if candidate.len() <= MAX_NAME && session::clash(git, top, dir, &candidate).await?.is_none() {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

/// Creates the worktree folder (owner-only) if it is missing.
fn make_private_dir(dir: &Path) -> Result<(), ToolError> {
    use std::os::unix::fs::DirBuilderExt as _;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| ToolError::failed(format!("cannot create the worktree folder {}: {e}", dir.display())))
}

/// Enters the existing worktree at `path` of `top`'s repository (from the worktree `current`
/// the session is in, if any).
async fn enter_existing(
    cx: &ToolContext,
    git: &Git,
    top: &Path,
    current: Option<&EnteredWorktree>,
    path: &str,
) -> Result<EnteredWorktree, ToolError> {
    let given = toolbelt_core::paths::normalize(&cx.resolve(Path::new(path)));
    let wanted = std::fs::canonicalize(&given).map_err(|e| {
        ToolError::failed(format!(
            "cannot enter {}: {e}; give the top directory of an existing worktree (`git worktree list` shows them), \
             or `name` to create one",
            given.display()
        ))
    })?;
    // The path was judged when the call was authorized. Written out of reach, a person
    // approved it. Written in reach, nobody was asked unless it led out then — which this
    // call cannot tell from a link changed since — so it must lead somewhere in reach now.
    if session::named_in_reach(cx, &given) && !session::in_reach(cx, &wanted) {
        return Err(ToolError::failed(format!(
            "{} leads to {}, outside the workspace roots and the folder toolbelt makes worktrees in, so the session \
             stays where it is; to enter it, give {} itself (the user is asked to approve it)",
            given.display(),
            wanted.display(),
            wanted.display()
        )));
    }
    let listed = session::parse_worktree_list(&git.run(top, &["worktree", "list", "--porcelain"]).await?);
    let found = listed
        .iter()
        .filter(|w| !w.bare)
        .find(|w| std::fs::canonicalize(&w.path).is_ok_and(|p| p == wanted))
        .ok_or_else(|| {
        let known: Vec<String> = listed.iter().filter(|w| !w.bare).map(|w| shown(&w.path)).collect();
        ToolError::failed(format!(
            "{} is not the top directory of a worktree of this repository, so the session stays where it is; \
                 give one of its worktrees ({}), or `name` to create one",
            given.display(),
            known.join(", ")
        ))
    })?;
    if wanted == top {
        return Err(ToolError::failed(format!("the session already works in {}", top.display())));
    }
    if let Some(current) = current
        && wanted == current.from
    {
        return Err(ToolError::failed(format!(
            "{} is where the session came from; call ExitWorktree (`keep` or `remove`) to go back there",
            wanted.display()
        )));
    }
    Ok(session::enter(cx, top, &wanted, Entry::Existing(found.branch.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_what_happened_and_how_to_come_back() {
        let out = EnterWorktreeOutput {
            worktree_path: "/s/wt/x".into(),
            origin: WorktreeOrigin::Created,
            removable: true,
            branch: Some("x".into()),
            base_commit: Some("0123456789abcdef0123".into()),
            working_directory: "/s/wt/x".into(),
            roots: vec!["/s/wt/x".into()],
            original_work_tree: "/r".into(),
        };
        let text = out.render()[0].as_text().unwrap_or_default().to_string();
        assert!(text.starts_with("Created the worktree /s/wt/x on the new branch `x` (from 0123456789ab)"), "{text}");
        assert!(text.contains("/r stays as it was") && text.contains("`remove` deletes both"), "{text}");
    }
}
