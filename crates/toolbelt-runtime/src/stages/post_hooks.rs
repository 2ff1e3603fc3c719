//! Stage 7: PostToolUse / PostToolUseFailure hooks may block the result, replace it, or add
//! context.

use toolbelt_core::{ToolError, ToolOutput};
use toolbelt_policy::{CallInfo, Finished, HookRun, PostToolOutcome};

use crate::runtime::Runtime;

/// Runs the matching hooks over the call's result.
pub(super) async fn run(
    rt: &Runtime,
    info: &CallInfo<'_>,
    result: Result<ToolOutput, ToolError>,
    context: &mut Vec<String>,
    runs: &mut Vec<HookRun>,
) -> Result<ToolOutput, ToolError> {
    let done = Finished { call: *info, result: result.as_ref() };
    let report = rt.hooks.post_tool_use(&done).await;
    runs.extend(report.runs);
    match report.outcome {
        PostToolOutcome::Continue { additional_context } => {
            context.extend(additional_context);
            result
        }
        PostToolOutcome::Block { reason } => {
            Err(ToolError::failed(format!("a PostToolUse hook blocked this result: {reason}")))
        }
        PostToolOutcome::Replace { output } => Ok(output),
    }
}
