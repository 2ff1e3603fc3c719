//! One part of a call judged: allowed by a rule or a grant, else decided by the mode, with the
//! reason in a sentence and the allow rule that would cover it.

use std::path::PathBuf;

use toolbelt_core::{PermissionClass, SessionState, ToolSpec};

use super::PermissionEngine;
use crate::mode::{PartKind, PermissionMode};
use crate::paths::Roots;
use crate::rules::{Part, Rule};
use crate::{CallInfo, Decision, RuleRef, VerdictSource};

/// Where a session may write (its workspace roots) and read (those and its data directory).
pub(super) struct SessionRoots {
    pub(super) write: Roots,
    pub(super) read: Roots,
}

impl SessionRoots {
    /// The roots of `session`.
    pub(super) fn of(session: &SessionState) -> Self {
        Self { write: Roots::new(&session.roots()), read: Roots::new(&session.read_roots()) }
    }
}

/// One part, judged.
pub(super) struct Judged {
    pub(super) decision: Decision,
    pub(super) reason: String,
    pub(super) source: VerdictSource,
    pub(super) suggestion: Vec<String>,
    /// A path outside the roots, when this part reads or writes one.
    pub(super) outside: Option<PathBuf>,
    /// Whether the part is an edit inside the roots (what `acceptEdits` allows).
    pub(super) edit_inside: bool,
}

/// What each part of a call is judged against besides itself.
#[derive(Clone, Copy)]
pub(super) struct Judging<'a> {
    /// The session's roots (for writes, and for reads with its data directory).
    pub(super) roots: &'a SessionRoots,
    /// The session's grants.
    pub(super) grants: &'a [Rule],
    /// The rules "always" approvals added while running.
    pub(super) persisted: &'a [Rule],
    /// The session's effective mode.
    pub(super) mode: PermissionMode,
    /// The call runs command lines and each is read-only as a whole, so each of their parts
    /// is too.
    pub(super) lines_read_only: bool,
}

impl PermissionEngine {
    /// Judges one part of a call against what [`Judging`] holds.
    pub(super) fn judge(&self, call: &CallInfo<'_>, part: &Part, judging: &Judging<'_>) -> Judged {
        let Judging { roots, grants, persisted, mode, lines_read_only } = *judging;
        let (tool, input) = (call.tool, call.input);
        let outside = match part {
            Part::Read { given, real } => roots.read.outside_view(given, real),
            Part::Write { given, real } => roots.write.outside_view(given, real),
            _ => None,
        };
        let allowed = |source: VerdictSource| Judged {
            decision: Decision::Allow,
            reason: "an allow rule covers it".into(),
            source,
            suggestion: Vec::new(),
            outside: outside.clone(),
            edit_inside: false,
        };
        // A path is seen as declared and as it really is: an allow must cover both (by the same
        // rule or two), so a symlink cannot carry an allow somewhere else.
        let (view, target): (Part, Option<Part>) = match part {
            Part::Read { given, real } if given != real => (
                Part::Read { given: given.clone(), real: given.clone() },
                Some(Part::Read { given: real.clone(), real: real.clone() }),
            ),
            Part::Write { given, real } if given != real => (
                Part::Write { given: given.clone(), real: given.clone() },
                Some(Part::Write { given: real.clone(), real: real.clone() }),
            ),
            _ => (part.clone(), None),
        };
        let rules: Vec<&Rule> = self.rules.allow.iter().chain(persisted).collect();
        let cover = |view: &Part| -> Option<RuleRef> {
            if let Some(rule) = rules.iter().find(|r| r.covers(tool, input, view)) {
                return Some(rule.source());
            }
            grants.iter().find(|r| r.covers(tool, input, view)).map(|r| RuleRef::SessionGrant { rule: r.text().into() })
        };
        let covered = match (cover(&view), target.as_ref().map(cover)) {
            (Some(link), Some(Some(target))) if link != target => Some(VerdictSource::LinkAndTarget { link, target }),
            (Some(rule), None | Some(Some(_))) => Some(VerdictSource::Rule(rule)),
            _ => None,
        };
        if let Some(source) = covered {
            return allowed(source);
        }
        let reaches = call.access.reaches.as_deref();
        let unproven = call.access.unproven.as_deref();
        let (mut kind, fact) = self.kind_of(call.tool, part, outside.is_some(), lines_read_only, reaches, unproven);
        // The files a command names inside the workspace are the command's business: its own
        // part decides (allowed by its rule, or asked about), so they add no question. Those
        // outside the roots ask like the Read and Write tools; deny rules and protected paths
        // hold either way.
        let runs = call.access.touches.iter().any(|t| matches!(t, toolbelt_core::Touch::Execute(_)));
        if runs && matches!(kind, PartKind::ReadInside | PartKind::WriteInside) {
            kind = PartKind::State;
        }
        let decision = crate::mode::baseline(mode, kind);
        let reason = match (decision, kind) {
            (Decision::Allow, _) if mode == PermissionMode::BypassPermissions => {
                "bypassPermissions mode allows what no rule denies or asks about".to_string()
            }
            (Decision::Allow, _) => format!("{fact}, which {mode} mode allows"),
            (Decision::Deny, _) if mode == PermissionMode::Plan => {
                format!("plan mode is read-only, and {fact}; present the plan with ExitPlanMode to leave it")
            }
            (_, PartKind::ReadOutside | PartKind::WriteOutside) => {
                format!("{fact}, outside the workspace roots, so it needs approval")
            }
            (_, PartKind::WriteInside) if mode == PermissionMode::Default => format!(
                "{fact}, so it needs approval in default mode (acceptEdits mode allows edits inside the workspace)"
            ),
            _ => format!("{fact}, so it needs approval"),
        };
        let suggestion = if decision == Decision::Allow { Vec::new() } else { self.suggest(call, part) };
        let edit_inside = kind == PartKind::WriteInside;
        Judged { decision, reason, source: VerdictSource::Mode(mode), suggestion, outside, edit_inside }
    }

    /// The kind of a part, and a clause saying what it does ("`ls -la` only reads"); an
    /// external tool that says what it reaches is described by that.
    fn kind_of(
        &self,
        tool: &ToolSpec,
        part: &Part,
        outside: bool,
        lines_read_only: bool,
        reaches: Option<&str>,
        unproven: Option<&str>,
    ) -> (PartKind, String) {
        match part {
            Part::Read { given, real } => (
                if outside { PartKind::ReadOutside } else { PartKind::ReadInside },
                if given == real || !outside {
                    format!("this reads {}", given.display())
                } else {
                    format!("this reads {}, which leads to {}", given.display(), real.display())
                },
            ),
            Part::Write { given, .. } => (
                if outside { PartKind::WriteOutside } else { PartKind::WriteInside },
                format!("this writes {}", given.display()),
            ),
            Part::Command(command) if unproven.is_some() => (
                PartKind::Command,
                format!("`{command}` may not do what it reads as: {}", unproven.unwrap_or_default()),
            ),
            Part::Command(command) => match toolbelt_command::classify(command).reason() {
                None => (PartKind::ReadOnlyCommand, format!("`{command}` only reads")),
                // A part that reads only in its script's context: the whole script decides
                // (`cat "$f"` after `f=README.md`, inside `for f in a b`).
                Some(_) if lines_read_only => {
                    (PartKind::ReadOnlyCommand, format!("`{command}` only reads (the whole command line is read-only)"))
                }
                Some(why) => (PartKind::Command, format!("`{command}` is not read-only because {why}")),
            },
            Part::Url(url) => (PartKind::Network, format!("this contacts {url}")),
            Part::Call => match tool.permission {
                PermissionClass::Read => (PartKind::State, format!("`{}` only reads", tool.name)),
                PermissionClass::Write => (PartKind::WriteInside, format!("`{}` changes files or state", tool.name)),
                PermissionClass::External => match reaches {
                    Some(what) => (PartKind::Command, format!("`{}` {what}", tool.name)),
                    None => {
                        (PartKind::Command, format!("`{}` runs commands or reaches outside the machine", tool.name))
                    }
                },
            },
        }
    }
}

/// Whether the call runs command lines and every one of them is read-only as a whole.
pub(super) fn lines_read_only(access: &toolbelt_core::Access) -> bool {
    if access.unproven.is_some() {
        return false;
    }
    let mut lines = access.touches.iter().filter_map(|t| match t {
        toolbelt_core::Touch::Execute(command) => Some(command),
        _ => None,
    });
    let mut any = false;
    let all = lines.all(|c| {
        any = true;
        toolbelt_command::is_read_only(c)
    });
    any && all
}
