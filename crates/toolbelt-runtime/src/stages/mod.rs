//! The stages of one call, in order. `plan` runs the first three (no I/O) so the scheduler
//! knows whether the call may run beside others; `run` does the rest.

mod authorize;
mod describe;
mod execute;
mod post_hooks;
mod pre_hooks;
mod render;
mod resolve;
mod validate;

use std::time::Instant;

use toolbelt_core::{Access, CancellationToken, EventSink, Prepared, ToolEntry, ToolError};
use toolbelt_policy::CallInfo;
use tracing::Instrument as _;

use crate::call::{ToolCall, ToolResult};
use crate::runtime::Runtime;
use crate::session::Session;

pub use render::truncate_text;

/// A call that passed resolve, validate and describe.
pub struct Planned {
    id: String,
    entry: ToolEntry,
    input: Prepared,
    access: Access,
    arrived: Instant,
}

impl Planned {
    /// Whether the call may run beside other shared calls.
    pub fn is_shared(&self) -> bool {
        self.access.is_shared()
    }
}

/// A call that ended before it could be scheduled (unknown tool, invalid input…).
pub struct Early(Box<ToolResult>);

/// Resolve → validate → describe.
pub fn plan(rt: &Runtime, session: &Session, call: ToolCall) -> Result<Planned, Early> {
    let arrived = Instant::now();
    let ToolCall { id, name, input } = call;
    let fail = |tool: Option<&ToolEntry>, e: ToolError| {
        let tool = tool.map(|t| t.spec().name.clone());
        tracing::debug!(call_id = %id, tool = tool.as_deref().unwrap_or(&name), outcome = e.kind(), "call refused before running");
        Early(Box::new(ToolResult::from_error(&id, tool, &e, arrived.elapsed())))
    };
    let entry = resolve::run(rt, &name).map_err(|e| fail(None, e))?;
    let input = validate::run(&entry, input).map_err(|e| fail(Some(&entry), e))?;
    let access = describe::run(rt, &entry, &input, session).map_err(|e| fail(Some(&entry), e))?;
    Ok(Planned { id, entry, input, access, arrived })
}

/// Emits the finished event for a call that ended early and returns its result.
pub fn finish_early(early: Early, events: &EventSink) -> ToolResult {
    let Early(result) = early;
    render::emit_finished(&result, events);
    *result
}

/// Pre-hooks → authorize → execute → post-hooks → render.
pub async fn run(
    rt: &Runtime,
    session: &Session,
    planned: Planned,
    events: &EventSink,
    cancel: &CancellationToken,
) -> ToolResult {
    let span = tracing::info_span!(
        "tool_call",
        tool = %planned.entry.spec().name,
        call_id = %planned.id,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    );
    let arrived = planned.arrived;
    let result = run_stages(rt, session, planned, events, cancel).instrument(span.clone()).await;
    span.record("outcome", result.outcome);
    span.record("duration_ms", arrived.elapsed().as_secs_f64() * 1000.0);
    let _entered = span.enter();
    tracing::info!(is_error = result.is_error, "call finished");
    result
}

async fn run_stages(
    rt: &Runtime,
    session: &Session,
    planned: Planned,
    events: &EventSink,
    cancel: &CancellationToken,
) -> ToolResult {
    let Planned { id, entry, mut input, mut access, arrived } = planned;
    let cwd = session.state().cwd();
    let mut context = Vec::new();

    let outcome = async {
        let pre = pre_hooks::run(rt, session, &id, &cwd, &entry, &input, &access).await;
        let mut hook_verdict = None;
        if let Some(pre) = pre {
            context.extend(pre.additional_context);
            hook_verdict = pre.verdict;
            if let Some(rewritten) = pre.updated_input {
                (input, access) = pre_hooks::revalidate(&entry, rewritten, session, rt)?;
            }
        }
        let info = CallInfo {
            session_id: session.id(),
            call_id: &id,
            cwd: &cwd,
            tool: entry.spec(),
            input: input.json(),
            access: &access,
        };
        authorize::run(rt, &info, hook_verdict).await?;
        // Post-hooks see the JSON input; keep it only when somebody will read it.
        let json = if rt.hooks.is_empty() { None } else { Some(input.json().clone()) };
        let result = execute::run(rt, session, &id, &entry, input, &access, events, cancel).await;
        Ok((result, json))
    }
    .await;

    let result = match outcome {
        Ok((result, Some(json))) => {
            let info = CallInfo {
                session_id: session.id(),
                call_id: &id,
                cwd: &cwd,
                tool: entry.spec(),
                input: &json,
                access: &access,
            };
            post_hooks::run(rt, &info, result, &mut context).await
        }
        Ok((result, None)) => result,
        Err(e) => Err(e),
    };
    render::run(rt, session, &id, &entry, result, context, arrived, events).await
}
