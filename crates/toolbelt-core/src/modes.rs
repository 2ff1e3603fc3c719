//! The permission modes ([`PermissionMode`]), and a session's mode as the plan-mode tools
//! change it.
//!
//! What a mode decides belongs to the policy, which tools never see; its names live here, so
//! the policy, the settings and the tools' outputs share one enum. The runtime offers a
//! narrow handle among the services ([`Modes`]): the current mode, a switch, and a grant of
//! one allow rule for the rest of the session. Only the tools that exist for it use it
//! (`EnterPlanMode` tightens; `ExitPlanMode` loosens only to the mode the session had, once a
//! person approved the plan), and the policy still judges every call in the mode it is left in.

use std::fmt;
use std::sync::Arc;

use crate::session::SessionState;

/// How much runs without asking.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
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
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The policy's side of [`Modes`].
pub trait ModeSwitch: Send + Sync {
    /// The mode in force for `session`, when the policy has modes.
    fn mode(&self, session: &SessionState) -> Option<PermissionMode>;

    /// Puts `session` in `mode`; why not, when it cannot.
    fn switch(&self, session: &SessionState, mode: PermissionMode) -> Result<(), String>;

    /// Allows calls matching `rule` (a permission rule, `Bash(cargo test *)`) for the rest of
    /// `session`; why not, when it cannot (a rule that does not parse, a policy without rules).
    fn grant(&self, session: &SessionState, rule: &str) -> Result<(), String>;
}

/// The runtime's [`ModeSwitch`], as a service tools ask for (`cx.service::<Modes>()`).
#[derive(Clone)]
pub struct Modes(pub Arc<dyn ModeSwitch>);

impl std::fmt::Debug for Modes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Modes")
    }
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
    fn the_wire_names_are_the_settings_names() {
        for mode in PermissionMode::ALL {
            assert_eq!(serde_json::to_value(mode).unwrap(), serde_json::json!(mode.as_str()));
            assert_eq!(serde_json::from_value::<PermissionMode>(serde_json::json!(mode.as_str())).unwrap(), mode);
        }
        let schema = serde_json::to_value(schemars::schema_for!(PermissionMode)).unwrap();
        let listed: Vec<&str> =
            schema["oneOf"].as_array().unwrap().iter().filter_map(|c| c["const"].as_str()).collect();
        assert_eq!(listed, PermissionMode::ALL.map(PermissionMode::as_str));
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
