//! The session's permission mode as tools may change it ([`toolbelt_core::Modes`]), over the
//! runtime's authorizer: every runtime offers it, so the plan-mode tools work wherever the
//! policy has modes.

use std::sync::Arc;

use toolbelt_core::{ModeSwitch, SessionState};
use toolbelt_policy::{Authorizer, PermissionMode};

/// [`ModeSwitch`] over an authorizer.
pub(crate) struct PolicyModes(pub Arc<dyn Authorizer>);

impl ModeSwitch for PolicyModes {
    fn mode(&self, session: &SessionState) -> Option<PermissionMode> {
        self.0.mode(session)
    }

    fn switch(&self, session: &SessionState, mode: PermissionMode) -> Result<(), String> {
        self.0.switch_mode(session, mode)
    }

    fn grant(&self, session: &SessionState, rule: &str) -> Result<(), String> {
        self.0.grant(session, rule)
    }
}
