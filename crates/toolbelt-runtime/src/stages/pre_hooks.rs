//! Stage 4: PreToolUse hooks may allow, deny or ask, rewrite the input, or add context.

use std::path::Path;

use serde_json::Value;
use toolbelt_core::{Access, Prepared, ToolEntry, ToolError};
use toolbelt_policy::{CallInfo, PreToolOutcome};

use crate::runtime::Runtime;
use crate::session::Session;

/// Runs the matching hooks; `None` when no hook is configured (the common, free path).
pub(super) async fn run(
    rt: &Runtime,
    session: &Session,
    call_id: &str,
    cwd: &Path,
    entry: &ToolEntry,
    input: &Prepared,
    access: &Access,
) -> Option<PreToolOutcome> {
    if rt.hooks.is_empty() {
        return None;
    }
    let info = CallInfo { session: session.state(), call_id, cwd, tool: entry.spec(), input: input.json(), access };
    Some(rt.hooks.pre_tool_use(&info).await)
}

/// A hook's rewritten input goes through validate and describe again: a rewrite is held to
/// the same schema as the model's input, and may change what the call touches.
pub(super) fn revalidate(
    entry: &ToolEntry,
    rewritten: Value,
    session: &Session,
    rt: &Runtime,
) -> Result<(Prepared, Access), ToolError> {
    let input = entry.prepare(rewritten).map_err(|e| match e {
        ToolError::InvalidInput { tool, problems } => ToolError::Failed {
            message: format!(
                "a PreToolUse hook rewrote the input of `{tool}` into an invalid one: {}; fix the hook",
                problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
            ),
        },
        other => other,
    })?;
    let access = super::describe::run(rt, entry, &input, session)?;
    Ok((input, access))
}
