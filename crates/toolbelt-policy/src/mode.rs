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
    /// The mode in force for `session`: its own when it switched, else `configured`.
    pub fn of(session: &SessionState, configured: PermissionMode) -> PermissionMode {
        session.with_slot::<SessionMode, _>(|m| m.mode).unwrap_or(configured)
    }
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
