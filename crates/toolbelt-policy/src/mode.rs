//! Permission modes (Claude Code's five) and what each decides for a part of a call that no
//! rule covers.

use std::fmt;

use toolbelt_core::{SessionSlot, SessionState};

use crate::Decision;

/// How much runs without asking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum PermissionMode {
    /// Reads inside the workspace roots and read-only commands run; writes, other commands,
    /// network access and anything outside the roots ask.
    #[default]
    Default,
    /// As `default`, and file edits inside the roots run too.
    AcceptEdits,
    /// Read-only: writes and commands that are not read-only are denied.
    Plan,
    /// As `default`, but what would ask is denied (for unattended runs).
    DontAsk,
    /// Everything runs except what a deny rule or an ask rule catches.
    BypassPermissions,
}

impl PermissionMode {
    /// Every mode.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::DontAsk,
        PermissionMode::BypassPermissions,
    ];

    /// The mode's name as settings, flags and hook input spell it (`acceptEdits`).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::DontAsk => "dontAsk",
            PermissionMode::BypassPermissions => "bypassPermissions",
        }
    }

    /// Parses a mode name (case-insensitive, `-`/`_` ignored, so `accept-edits` works too).
    pub fn parse(name: &str) -> Option<PermissionMode> {
        let fold =
            |s: &str| s.chars().filter(|c| !matches!(c, '-' | '_')).flat_map(char::to_lowercase).collect::<String>();
        let wanted = fold(name);
        PermissionMode::ALL.into_iter().find(|m| fold(m.as_str()) == wanted)
    }

    /// How strict the mode is: `bypassPermissions` < `acceptEdits` < `default` < `plan` <
    /// `dontAsk` (which denies everything `plan` would still ask about).
    pub fn strictness(self) -> u8 {
        match self {
            PermissionMode::BypassPermissions => 0,
            PermissionMode::AcceptEdits => 1,
            PermissionMode::Default => 2,
            PermissionMode::Plan => 3,
            PermissionMode::DontAsk => 4,
        }
    }

    /// The stricter of two modes: what a sub-agent gets when its definition asks for `other`
    /// under a parent in `self` (a definition can tighten the parent's mode, never loosen it).
    pub fn stricter(self, other: PermissionMode) -> PermissionMode {
        if other.strictness() > self.strictness() { other } else { self }
    }

    /// What the mode decides for a part no rule covers.
    pub(crate) fn baseline(self, kind: PartKind) -> Decision {
        use Decision::{Allow, Ask, Deny};
        use PartKind::*;
        match (self, kind) {
            (PermissionMode::BypassPermissions, _) => Allow,
            (_, ReadInside | ReadOnlyCommand | State) => Allow,
            (PermissionMode::AcceptEdits, WriteInside) => Allow,
            (PermissionMode::Plan, WriteInside | WriteOutside | Command) => Deny,
            (PermissionMode::DontAsk, _) => Deny,
            (_, ReadOutside | WriteInside | WriteOutside | Command | Network) => Ask,
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_leniently() {
        assert_eq!(PermissionMode::parse("acceptEdits"), Some(PermissionMode::AcceptEdits));
        assert_eq!(PermissionMode::parse("accept-edits"), Some(PermissionMode::AcceptEdits));
        assert_eq!(PermissionMode::parse("BYPASSPERMISSIONS"), Some(PermissionMode::BypassPermissions));
        assert_eq!(PermissionMode::parse("yolo"), None);
    }

    #[test]
    fn a_definition_only_tightens() {
        use PermissionMode::*;
        assert_eq!(Default.stricter(BypassPermissions), Default);
        assert_eq!(AcceptEdits.stricter(Plan), Plan);
        assert_eq!(DontAsk.stricter(Plan), DontAsk);
        assert_eq!(BypassPermissions.stricter(AcceptEdits), AcceptEdits);
    }
}
