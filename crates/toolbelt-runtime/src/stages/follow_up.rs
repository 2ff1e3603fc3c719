//! During execute: access a running call asks for after it started ([`FollowUp`]), judged
//! as the authorize stage judged the call — the authorizer's verdict, the approver when it
//! asks — and kept for the call's audit record.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use toolbelt_core::{Access, BoxFuture, FollowUp, SessionState, ToolEntry, ToolError};
use toolbelt_policy::{Approval, Approver, Authorizer, CallInfo, Decision, Verdict};

use super::CallCx;

/// The verdicts on a call's follow-ups, in order, for its audit record.
pub(super) type Verdicts = Arc<Mutex<Vec<Verdict>>>;

/// Judges one call's follow-ups. It owns what it needs, since the tool holds it for as long
/// as it runs.
pub(super) struct Judge {
    authorizer: Arc<dyn Authorizer>,
    approver: Arc<dyn Approver>,
    session: Arc<SessionState>,
    call_id: String,
    cwd: PathBuf,
    entry: ToolEntry,
    verdicts: Verdicts,
}

impl std::fmt::Debug for Judge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Judge").field("call_id", &self.call_id).field("tool", &self.entry.spec().name).finish()
    }
}

impl Judge {
    /// The judge of `cx`'s follow-ups, recording its verdicts in `verdicts`.
    pub fn of(cx: &CallCx<'_>, verdicts: Verdicts) -> Self {
        Self {
            authorizer: Arc::clone(&cx.pipeline.authorizer),
            approver: Arc::clone(&cx.pipeline.approver),
            session: Arc::clone(cx.session.state()),
            call_id: cx.id.to_string(),
            cwd: cx.cwd.clone(),
            entry: cx.entry.clone(),
            verdicts,
        }
    }
}

impl FollowUp for Judge {
    fn authorize(&self, access: Access) -> BoxFuture<'_, Result<(), ToolError>> {
        Box::pin(async move {
            // The follow-up is judged by what it touches; the input was judged with the call
            // (a null input is what marks a follow-up: `CallInfo::is_follow_up`).
            let input = Value::Null;
            let info = CallInfo {
                session: &self.session,
                call_id: &self.call_id,
                cwd: &self.cwd,
                tool: self.entry.spec(),
                input: &input,
                access: &access,
            };
            let verdict = self.authorizer.authorize(&info).in_context(&access);
            let outcome = match verdict.decision {
                Decision::Allow => Ok(()),
                Decision::Deny => Err(ToolError::Denied { reason: format!("{} ({})", verdict.reason, verdict.source) }),
                Decision::Ask => match self.approver.approve(&info, &verdict).await {
                    Approval::Deny { reason } => Err(ToolError::Denied { reason }),
                    approval => {
                        self.authorizer.remember(&info, &verdict, &approval);
                        Ok(())
                    }
                },
            };
            self.verdicts.lock().unwrap_or_else(PoisonError::into_inner).push(verdict);
            outcome
        })
    }
}
