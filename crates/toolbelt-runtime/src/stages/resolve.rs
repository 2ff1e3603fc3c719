//! Stage 1: find the tool by name or alias.

use toolbelt_core::{ToolEntry, ToolError};

use super::Refused;
use crate::runtime::Runtime;

/// Looks the name up; an unknown name's error lists the closest registered tools. A tool the
/// policy hides (a bare deny rule) is denied, naming the rule: the call is refused by the
/// policy, and the verdict goes to the audit log.
pub(super) fn run(rt: &Runtime, name: &str) -> Result<ToolEntry, Refused> {
    match rt.registry.lookup(name) {
        Ok(entry) => Ok(entry),
        Err(ToolError::Disabled { name }) => {
            let entry = rt.registry.entry(&name);
            let hidden = entry.as_ref().and_then(|e| rt.authorizer.hidden(e.spec()));
            match hidden {
                Some(verdict) => {
                    let error = ToolError::Denied { reason: verdict.reason.clone() };
                    Err((entry, error, Some(Box::new(verdict))))
                }
                None => Err((entry, ToolError::Disabled { name }, None)),
            }
        }
        Err(e) => Err((None, e, None)),
    }
}
