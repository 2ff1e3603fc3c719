//! `ApplyPatch` (alias `apply_patch`): Codex's patch format — add, delete, update and move
//! files in one call, hunks anchored by context rather than line numbers.
//!
//! It goes further than Codex where Codex users suffer:
//! - **All-or-nothing.** Every file's new content is worked out in memory first
//!   ([`plan`]); if anything does not apply, nothing on disk changes. Writes are then staged
//!   beside their targets and committed together, deletes last ([`commit`]).
//! - **Failures say where and why.** A hunk that does not match is reported with its file,
//!   its number and anchor, the nearest region of the file that resembles it, and the first
//!   line that differs, with how it differs ([`report`]) — every failing hunk at once.
//! - **Files keep their form.** Line endings (CRLF stays CRLF), BOM, encoding and whether
//!   the file ends with a newline are kept; lines the patch only uses as context keep their
//!   bytes even when matched tolerantly ([`doc`], [`seek`]).
//! - **Atomic under a crash.** The commit is journalled: a process killed between two renames
//!   leaves a journal that the next write in the workspace rolls forward or back
//!   ([`crate::files::support::journal`]).
//!
//! No prior Read is required (as in Codex), but a file read in this session and changed
//! since is refused, and every written file is recorded in the read ledger, so an `Edit`
//! can follow.

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Content, PlannedTool, Render, ToolContext, ToolError, ToolSpec};

use crate::blocking::run_blocking;
use crate::language_servers::after_change::{Introduced, after_change, with_diagnostics};

use crate::files::support::journal::{self, JournalDir};
use crate::files::support::ledger::{FileLedger, FileState};
use crate::files::support::patch::commit::{self, Action};
pub use crate::files::support::patch::outcome::{FileStatus, PatchedFile};
use crate::files::support::patch::{parse, plan};
use crate::fs::roots::{OpenRoots, absolute};

/// Input of `ApplyPatch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchInput {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`, in the format described
    /// in the tool's description.
    #[schemars(length(min = 1))]
    pub input: String,
}

/// The structured result of `ApplyPatch`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ApplyPatchOutput {
    /// Every changed file, in patch order.
    pub files: Vec<PatchedFile>,
    /// Hunks that matched only tolerantly (whitespace, Unicode punctuation), and anything
    /// left behind.
    pub notes: Vec<String>,
    /// Errors a running language server reports that this change introduced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<Introduced>,
}

impl Render for ApplyPatchOutput {
    /// "Success. Updated the following files:\nA new.txt (+3 -0)\n…", as Codex prints it,
    /// with line counts, then each note.
    fn render(&self) -> Vec<Content> {
        let mut text = String::from("Success. Updated the following files:");
        for f in &self.files {
            let letter = match f.status {
                FileStatus::Added => 'A',
                FileStatus::Modified => 'M',
                FileStatus::Deleted => 'D',
            };
            let moved = f.moved_from.as_ref().map(|m| format!(" (moved from {m})")).unwrap_or_default();
            text.push_str(&format!("\n{letter} {}{moved} (+{} -{})", f.path, f.added, f.removed));
        }
        if self.files.is_empty() {
            text.push_str("\n(none: the patch leaves every file as it was)");
        }
        for note in &self.notes {
            text.push_str(&format!("\nNote: {note}"));
        }
        with_diagnostics(vec![Content::text(text)], &self.diagnostics)
    }
}

/// The `ApplyPatch` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ApplyPatch;

const DESCRIPTION: &str = "Applies a patch that adds, deletes, updates and moves files, in one call. \
The patch is all-or-nothing: if any part does not apply, no file changes and the error says exactly which \
hunk failed, where the nearest match is and which line differs. Format:\n\
*** Begin Patch\n\
*** Add File: path/new.txt\n\
+every line of the new file, prefixed with +\n\
*** Delete File: path/old.txt\n\
*** Update File: path/a.rs\n\
*** Move to: path/b.rs          (optional: rename the file)\n\
@@ fn anchor_line()             (optional: a line of the file to search from, e.g. a signature; stack several @@ lines to narrow down)\n\
\x20context line (a space, then the line as it is in the file)\n\
-removed line\n\
+added line\n\
*** End of File                 (optional: the hunk must match the end of the file)\n\
*** End Patch\n\
Paths are relative to the working directory (absolute paths inside the workspace work too). In each hunk \
give about 3 lines of context above and below each change, copied exactly; hunks of one file must be in file \
order. Whitespace and Unicode punctuation differences are tolerated, but the text must otherwise match. Files \
keep their line endings, encoding and final newline. A file read earlier and changed since is refused (Read it \
again). Use Add File only for files that do not exist yet.";

/// The plan of an `ApplyPatch` call is its patch, parsed once: the operations judged are the
/// ones applied.
impl PlannedTool for ApplyPatch {
    type Input = ApplyPatchInput;
    type Output = ApplyPatchOutput;
    type Plan = parse::Patch;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ApplyPatch", DESCRIPTION)
            .title("Apply a patch")
            .aliases(["apply_patch"])
            .param_alias("patch", "input")
            .category(Category::Files)
            .tags(["files", "edit", "patch", "write", "multi-file"])
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: false })
            .search_hint("apply patch diff multi-file edit add delete rename move files codex")
    }

    fn access(&self, input: &ApplyPatchInput, cx: &ToolContext) -> Result<(Access, parse::Patch), ToolError> {
        let patch = parse::parse(&input.input).map_err(|e| ToolError::failed(e.to_string()))?;
        let mut seen: Vec<PathBuf> = Vec::new();
        for path in patch.ops.iter().flat_map(parse::FileOp::paths) {
            let abs = absolute(cx, path);
            if !seen.contains(&abs) {
                seen.push(abs);
            }
        }
        Ok((seen.into_iter().fold(Access::exclusive(), Access::writes), patch))
    }

    async fn call(
        &self,
        _: ApplyPatchInput,
        patch: parse::Patch,
        cx: ToolContext,
    ) -> Result<ApplyPatchOutput, ToolError> {
        let mut out = run_blocking(&cx, move |cx| run(&patch, cx)).await?;
        let mut changed = Vec::new();
        let mut deleted = Vec::new();
        for f in &out.files {
            match f.status {
                FileStatus::Deleted => deleted.push(absolute(&cx, &f.path)),
                FileStatus::Added | FileStatus::Modified => changed.push(absolute(&cx, &f.path)),
            }
            deleted.extend(f.moved_from.as_deref().map(|m| absolute(&cx, m)));
        }
        out.diagnostics = after_change(&cx, &changed, &deleted).await;
        Ok(out)
    }
}

/// Applies `patch` (as parsed when the call was judged: the files it names are the ones the
/// runtime judged written).
fn run(patch: &parse::Patch, cx: &ToolContext) -> Result<ApplyPatchOutput, ToolError> {
    let ws = OpenRoots::open(cx)?;
    // A commit a killed process left halfway is finished or undone before this one is planned.
    let recovered = journal::recover(&ws, cx);
    let outcome = plan::Plan::build(&ws, cx, patch)?;
    if cx.is_cancelled() {
        return Err(ToolError::Cancelled);
    }
    let mut notes = recovered;
    notes.extend(outcome.notes);
    notes.extend(commit::apply(&ws, &outcome.changes, &JournalDir::of(cx))?);
    for change in &outcome.changes {
        match &change.action {
            Action::Write { bytes, .. } => {
                let mtime = ws.metadata(&change.loc).ok().and_then(|m| m.modified().ok()).map(|t| t.into_std());
                FileLedger::record(cx, &change.loc.abs, FileState::of(bytes, mtime));
            }
            _ => FileLedger::forget(cx, &change.loc.abs),
        }
    }
    Ok(ApplyPatchOutput { files: outcome.files, notes, diagnostics: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_and_access() {
        let spec = ApplyPatch.spec();
        assert!(spec.answers_to("apply_patch"));
        assert!(spec.annotations.destructive && !spec.annotations.read_only);
        let cx = ToolContext::detached(PathBuf::from("/w"));
        let input = ApplyPatchInput {
            input: "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.txt\n*** Move to: /w/c.txt\n\
                    *** Delete File: a.txt\n*** End Patch"
                .into(),
        };
        let (access, _) = ApplyPatch.access(&input, &cx).unwrap();
        assert!(!access.is_shared());
        let paths: Vec<String> = access
            .touches
            .iter()
            .map(|t| match t {
                toolbelt_core::Touch::Write(p) => p.display().to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(paths, ["/w/a.txt", "/w/b.txt", "/w/c.txt"]);
        let bad = ApplyPatchInput { input: "nope".into() };
        let e = ApplyPatch.access(&bad, &cx).unwrap_err().to_string();
        assert!(e.starts_with("invalid patch, line 1:"), "{e}");
    }
}
