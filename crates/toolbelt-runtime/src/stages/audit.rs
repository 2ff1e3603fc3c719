//! After render: one record in the audit log, when one is configured.

use std::time::SystemTime;

use serde_json::Value;
use toolbelt_policy::Approval;

use super::Trail;
use crate::audit::{AuditLog, AuditRecord, digest_written, rfc3339};
use crate::call::{Outcome, ToolResult};
use crate::session::Session;

/// The longest reason recorded, in characters (runtime errors are short; this bounds a hook
/// or an upstream server that says a lot).
const MAX_REASON: usize = 4_000;

/// The call as the log sees it.
pub(super) struct Recorded<'a> {
    /// The canonical name, or the name asked for when it did not resolve.
    pub tool: &'a str,
    /// The validated input, or the raw one for a call refused before it validated.
    pub input: Value,
    /// Whether the call may write files (its content fields are then recorded by digest).
    pub writes: bool,
    /// What the stages found out.
    pub trail: &'a Trail,
}

/// Records one finished call.
pub(super) fn record(log: &AuditLog, session: &Session, result: &ToolResult, call: Recorded<'_>) {
    let Recorded { tool, mut input, writes, trail } = call;
    if writes {
        digest_written(&mut input);
    }
    let output_chars = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.chars().count()).sum();
    let arrived = SystemTime::now().checked_sub(result.duration).unwrap_or_else(SystemTime::now);
    // The runtime's own errors say why the call ended; a tool's failure is its output.
    let reason = (result.is_error && result.outcome != Outcome::ToolError).then(|| {
        let text = result.text();
        match text.char_indices().nth(MAX_REASON) {
            Some((cut, _)) => format!("{}…", &text[..cut]),
            None => text,
        }
    });
    let client = session.client();
    log.record(&AuditRecord {
        time: rfc3339(arrived),
        session: session.id(),
        client: &client,
        call_id: &result.id,
        tool,
        input,
        reason: reason.as_deref(),
        decision: trail.verdict.as_ref(),
        approval: trail.approval.as_ref().map(approval_name),
        hooks: &trail.hooks,
        follow_ups: &trail.follow_ups,
        outcome: result.outcome,
        is_error: result.is_error,
        duration_ms: (result.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        output_chars,
    });
}

pub(super) fn approval_name(approval: &Approval) -> &'static str {
    match approval {
        Approval::AllowOnce => "allow_once",
        Approval::AllowSession => "allow_session",
        Approval::AllowAlways => "allow_always",
        Approval::AcceptEditsForSession => "accept_edits_session",
        Approval::Deny { .. } => "deny",
    }
}
