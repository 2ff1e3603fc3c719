//! Stage 5: the permission engine's verdict, combined with any hook verdict; `Ask` goes to
//! the approver.

use toolbelt_core::ToolError;
use toolbelt_policy::{Approval, CallInfo, Decision, Verdict};

use crate::runtime::Runtime;

/// Allows the call or says why not. Deny beats ask beats allow, so a hook's allow never
/// overrides a rule's deny or ask.
pub(super) async fn run(rt: &Runtime, info: &CallInfo<'_>, hook: Option<Verdict>) -> Result<(), ToolError> {
    let mut verdict = rt.authorizer.authorize(info);
    if let Some(hook) = hook {
        verdict = verdict.max(hook);
    }
    if verdict.decision == Decision::Allow {
        if info.tool.needs_confirmation {
            verdict = Verdict::new(Decision::Ask, "this tool asks for confirmation on every call", "tool spec");
        } else if let Some(reason) = &info.access.approval {
            verdict = Verdict::new(Decision::Ask, reason.clone(), "the tool, for this call");
        }
    }
    match verdict.decision {
        Decision::Allow => Ok(()),
        Decision::Deny => Err(ToolError::Denied { reason: format!("{} ({})", verdict.reason, verdict.source) }),
        Decision::Ask => match rt.approver.approve(info, &verdict).await {
            Approval::AllowOnce | Approval::AllowSession => Ok(()),
            Approval::Deny { reason } => Err(ToolError::Denied { reason }),
        },
    }
}
