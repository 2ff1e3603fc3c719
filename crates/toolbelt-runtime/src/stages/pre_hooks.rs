//! Stage 4: PreToolUse hooks may allow, deny or ask, rewrite the input, or add context.

use serde_json::Value;
use toolbelt_core::{Access, Prepared, ToolError};
use toolbelt_policy::PreToolOutcome;

use super::CallCx;

/// Runs the matching hooks over the call with `input`; `None` when no hook is configured
/// (the common, free path).
pub(super) async fn run(cx: &CallCx<'_>, input: &Prepared) -> Option<PreToolOutcome> {
    let hooks = &cx.pipeline.hooks;
    if hooks.is_empty() {
        return None;
    }
    Some(hooks.pre_tool_use(&cx.info(input.json())).await)
}

/// A hook's rewritten input goes through validate and describe again: a rewrite is held to
/// the same schema as the model's input, and may change what the call touches — and what it
/// runs: the rewrite's own plan replaces the first.
pub(super) fn revalidate(cx: &CallCx<'_>, rewritten: Value) -> Result<(Prepared, Access), ToolError> {
    let mut input = cx.entry.prepare(rewritten).map_err(|e| match e {
        ToolError::InvalidInput { tool, problems } => ToolError::Failed {
            message: format!(
                "a PreToolUse hook rewrote the input of `{tool}` into an invalid one: {}; fix the hook",
                problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
            ),
        },
        other => other,
    })?;
    let access = super::plan::describe(cx.pipeline, cx.session, cx.entry, &mut input)?;
    Ok((input, access))
}
