//! What each permission mode ([`PermissionMode`], Claude Code's five, named in core so tools
//! and settings share it) decides for a part of a call that no rule covers, and a session's
//! own mode.

use toolbelt_core::{SessionSlot, SessionState};

pub use toolbelt_core::PermissionMode;

use crate::Decision;

/// What `mode` decides for a part no rule covers.
pub(crate) fn baseline(mode: PermissionMode, kind: PartKind) -> Decision {
    use Decision::{Allow, Ask, Deny};
    use PartKind::*;
    match (mode, kind) {
        (PermissionMode::BypassPermissions, _) => Allow,
        (_, ReadInside | ReadOnlyCommand | State) => Allow,
        (PermissionMode::AcceptEdits, WriteInside) => Allow,
        (PermissionMode::Plan, WriteInside | WriteOutside | Command) => Deny,
        (PermissionMode::DontAsk, _) => Deny,
        (_, ReadOutside | WriteInside | WriteOutside | Command | Network) => Ask,
    }
}

/// A session's own mode, when a person switched it during the session ("allow all edits for
/// the rest of this session" turns `default` into `acceptEdits`). Kept in the session's state,
/// so a named CLI session keeps it across invocations; it never outlives the session.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SessionMode {
    /// The mode the session switched to, if it did.
    pub mode: Option<PermissionMode>,
}

impl SessionSlot for SessionMode {
    const KEY: &'static str = "permission_mode";
    const SHARED: bool = true;
}

impl SessionMode {
    /// The mode in force for `session`: its own when it switched, else `configured`. A mode
    /// the settings in force do not let a session switch to ([`may_switch`]) is not used: a
    /// session's state kept elsewhere (a named session's file, a team's database) may have
    /// been switched under other settings.
    pub fn of(session: &SessionState, configured: PermissionMode) -> PermissionMode {
        session.with_slot::<SessionMode, _>(|m| m.mode).filter(|m| may_switch(configured, *m)).unwrap_or(configured)
    }
}

/// Whether a session the settings put in mode `base` may switch to `mode`. Tightening to plan
/// mode is always possible. Otherwise a session only moves between the settings' own mode and,
/// when that is `default` or `acceptEdits`, those two: a session the settings put in plan or
/// dontAsk mode stays there, and nothing but the settings turns permission checks off.
pub fn may_switch(base: PermissionMode, mode: PermissionMode) -> bool {
    use PermissionMode::{AcceptEdits, Default as Normal, Plan};
    mode == Plan || mode == base || (matches!(base, Normal | AcceptEdits) && matches!(mode, Normal | AcceptEdits))
}

/// The kinds of part a mode judges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PartKind {
    ReadInside,
    ReadOutside,
    WriteInside,
    WriteOutside,
    ReadOnlyCommand,
    /// A command the classifier cannot prove read-only, or a tool that reaches outside.
    Command,
    Network,
    /// Session-local state (a todo list), or a read-only tool that declares nothing.
    State,
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    #[test]
    fn a_mode_kept_from_other_settings_counts_only_where_these_allow_it() {
        use PermissionMode::{AcceptEdits, BypassPermissions, Default as Normal, DontAsk, Plan};
        let session = SessionState::new("s", PathBuf::from("/"), vec![]);
        for (kept, configured, in_force) in [
            (AcceptEdits, Normal, AcceptEdits),
            (Plan, DontAsk, Plan),
            (BypassPermissions, Normal, Normal),
            (AcceptEdits, Plan, Plan),
            (Normal, DontAsk, DontAsk),
        ] {
            session.with_slot::<SessionMode, _>(|m| m.mode = Some(kept));
            assert_eq!(SessionMode::of(&session, configured), in_force, "{kept:?} under {configured:?}");
        }
    }
}
