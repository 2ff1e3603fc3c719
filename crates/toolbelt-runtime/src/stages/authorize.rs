//! Stage 5: the permission engine's verdict, combined with any hook verdict; `Ask` goes to
//! the approver.

use std::path::PathBuf;

use serde_json::Value;
use toolbelt_core::ToolError;
use toolbelt_policy::{Approval, CallInfo, Decision, Verdict, VerdictSource};

use super::CallCx;

/// What the stage decided: the verdict (for the audit log), how a person answered if one was
/// asked, and — when the call may run — the directories outside the workspace roots it may
/// open for this call only.
pub(super) struct Authorization {
    pub verdict: Verdict,
    pub approval: Option<Approval>,
    pub outcome: Result<Vec<PathBuf>, ToolError>,
}

/// Allows the call with `input` or says why not, combining the policy's verdict with the
/// PreToolUse hooks' (`hook`, when one gave a verdict). Deny beats ask beats allow, and a
/// hook's allow turns only a mode's default ask into an allow — never an explicit rule's deny
/// or ask.
pub(super) async fn run(cx: &CallCx<'_>, input: &Value, hook: Option<Verdict>) -> Authorization {
    let info = &cx.info(input);
    let mut verdict = cx.pipeline.authorizer.authorize(info);
    if let Some(hook) = hook {
        verdict = if hook.decision == Decision::Allow && verdict.decision != Decision::Allow && verdict.hook_may_allow {
            Verdict { allowed_outside: outside_paths(info), ..hook }
        } else {
            verdict.max(hook)
        };
    }
    if verdict.decision == Decision::Allow {
        if info.tool.needs_confirmation {
            verdict =
                Verdict::new(Decision::Ask, "this tool asks for confirmation on every call", VerdictSource::ToolSpec);
        } else if let Some(reason) = &info.access.approval {
            verdict = Verdict::new(Decision::Ask, reason.clone(), VerdictSource::ToolForThisCall);
        }
    }
    let verdict = verdict.in_context(info.access);
    match verdict.decision {
        Decision::Allow => {
            let outcome = Ok(roots_for(&verdict.allowed_outside));
            Authorization { verdict, approval: None, outcome }
        }
        Decision::Deny => {
            let outcome = Err(ToolError::Denied { reason: format!("{} ({})", verdict.reason, verdict.source) });
            Authorization { verdict, approval: None, outcome }
        }
        Decision::Ask => {
            // A scheduled job's run has nobody watching it: whoever the runtime's approver
            // would ask (a terminal, an embedder's prompt) is not asked about it.
            let approval = if info.session.with_slot::<toolbelt_core::JobRun, _>(|r| r.run.is_some()) {
                toolbelt_policy::Approver::approve(&toolbelt_policy::NoApprover, info, &verdict).await
            } else {
                let asked = std::time::Instant::now();
                // A call cancelled while it waits (its client gave up, the server drains) stops
                // waiting: nobody is left to act on the answer.
                let approval = tokio::select! {
                    approval = cx.pipeline.approver.approve(info, &verdict) => approval,
                    () = cx.cancel.cancelled() => {
                        return Authorization { verdict, approval: None, outcome: Err(ToolError::Cancelled) };
                    }
                };
                cx.pipeline.metrics.answered(&approval, asked.elapsed());
                approval
            };
            let outcome = match &approval {
                Approval::AllowOnce
                | Approval::AllowSession
                | Approval::AllowAlways
                | Approval::AcceptEditsForSession => {
                    cx.pipeline.authorizer.remember(info, &verdict, &approval);
                    // A person saw the call and said yes: every path it declared is in reach.
                    Ok(roots_for(&outside_paths(info)))
                }
                Approval::Deny { reason } => Err(ToolError::Denied { reason: reason.clone() }),
            };
            Authorization { verdict, approval: Some(approval), outcome }
        }
    }
}

fn outside_paths(info: &CallInfo<'_>) -> Vec<PathBuf> {
    toolbelt_policy::paths::outside_session(info.access, info.session)
}

/// The directories to open as roots for the call: a directory itself, a file's parent.
fn roots_for(paths: &[PathBuf]) -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    for path in paths {
        let dir = if path.is_dir() { Some(path.as_path()) } else { path.parent().filter(|p| p.is_dir()) };
        if let Some(dir) = dir
            && !roots.iter().any(|r| r == dir)
        {
            roots.push(dir.to_path_buf());
        }
    }
    roots
}
