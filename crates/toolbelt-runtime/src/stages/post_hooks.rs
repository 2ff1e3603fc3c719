//! Stage 7: PostToolUse / PostToolUseFailure hooks may block the result, replace it, or add
//! context. A replaced result's structured form is the hook's output alone
//! ([`additions::HOOK_OUTPUT`]).

use serde_json::Value;
use toolbelt_core::additions;
use toolbelt_core::{Content, ToolError, ToolOutput};
use toolbelt_policy::{Finished, PostToolOutcome};

use super::{CallCx, Trail};

/// Runs the matching hooks over the result of the call with `input` (its JSON input, as a
/// hook may have rewritten it), noting in `trail` the hooks that ran and the context they add.
pub(super) async fn run(
    cx: &CallCx<'_>,
    input: &Value,
    result: Result<ToolOutput, ToolError>,
    trail: &mut Trail,
) -> Result<ToolOutput, ToolError> {
    let done = Finished { call: cx.info(input), result: result.as_ref() };
    let report = cx.pipeline.hooks.post_tool_use(&done).await;
    trail.hooks.extend(report.runs);
    match report.outcome {
        PostToolOutcome::Continue { additional_context } => {
            trail.context.extend(additional_context);
            result
        }
        PostToolOutcome::Block { reason } => {
            Err(ToolError::failed(format!("a PostToolUse hook blocked this result: {reason}")))
        }
        PostToolOutcome::Replace { mut output } => {
            // A client may show the model the structured result instead of the text: it holds the
            // hook's output, and nothing of the tool's own.
            output.structured = None;
            if !output.is_error {
                let text = output.content.iter().filter_map(Content::as_text).collect::<Vec<_>>().join("\n");
                output.structured = additions::hook_output(cx.entry.spec().output_schema.as_ref(), text);
            }
            Ok(output)
        }
    }
}
