//! After render: one line in the audit log, when one is configured.

use std::time::SystemTime;

use serde_json::Value;
use toolbelt_policy::Approval;

use super::Trail;
use crate::audit::{AuditLog, AuditRecord, redact, rfc3339};
use crate::call::ToolResult;
use crate::session::Session;

/// Records one finished call.
pub(super) fn record(log: &AuditLog, session: &Session, result: &ToolResult, tool: &str, input: Value, trail: &Trail) {
    let output_chars = result.content.iter().filter_map(|c| c.as_text()).map(|t| t.chars().count()).sum();
    let arrived = SystemTime::now().checked_sub(result.duration).unwrap_or_else(SystemTime::now);
    log.record(&AuditRecord {
        time: rfc3339(arrived),
        session: session.id(),
        call_id: &result.id,
        tool,
        input: redact(&input),
        decision: trail.verdict.as_ref(),
        approval: trail.approval.as_ref().map(approval_name),
        hooks: &trail.hooks,
        outcome: result.outcome,
        is_error: result.is_error,
        duration_ms: (result.duration.as_secs_f64() * 1_000_000.0).round() / 1000.0,
        output_chars,
    });
}

fn approval_name(approval: &Approval) -> &'static str {
    match approval {
        Approval::AllowOnce => "allow_once",
        Approval::AllowSession => "allow_session",
        Approval::AllowAlways => "allow_always",
        Approval::Deny { .. } => "deny",
    }
}
