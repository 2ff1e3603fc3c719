//! A session's permission mode, as the plan-mode tools change it.
//!
//! The mode belongs to the policy, which tools never see. The runtime offers this narrow
//! handle among the services ([`Modes`]): the current mode's name, a switch, and a grant of
//! one allow rule for the rest of the session. Only the tools that exist for it use it
//! (`EnterPlanMode` tightens; `ExitPlanMode` loosens only to the mode the session had, once a
//! person approved the plan), and the policy still judges every call in the mode it is left in.

use std::sync::Arc;

use crate::session::SessionState;

/// The policy's side of [`Modes`].
pub trait ModeSwitch: Send + Sync {
    /// The mode in force for `session` (`default`, `acceptEdits`, `plan`…), when the policy
    /// has modes.
    fn mode(&self, session: &SessionState) -> Option<String>;

    /// Puts `session` in `mode` (a mode's name); why not, when it cannot.
    fn switch(&self, session: &SessionState, mode: &str) -> Result<(), String>;

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
