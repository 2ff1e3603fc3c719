//! The stages of one call, in order. `plan` runs the first three (no I/O) so the scheduler
//! knows whether the call may run beside others; `run` does the rest.

mod audit;
mod authorize;
mod describe;
mod execute;
mod post_hooks;
mod pre_hooks;
mod render;
mod resolve;
mod validate;

use std::time::Instant;

use serde_json::Value;
use toolbelt_core::{Access, CancellationToken, EventSink, Prepared, ToolEntry, ToolError};
use toolbelt_policy::{Approval, CallInfo, HookRun, Verdict};
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
    /// The tool, the prepared input and the declared access.
    pub fn parts(self) -> (ToolEntry, Prepared, Access) {
        (self.entry, self.input, self.access)
    }

    /// Whether the call may run beside other shared calls.
    pub fn is_shared(&self) -> bool {
        self.access.is_shared()
    }
}

/// A call that ended before it could be scheduled (unknown tool, invalid input…).
pub struct Early {
    result: Box<ToolResult>,
    /// The name the call asked for.
    name: String,
    /// The input as it arrived, kept for the audit log (only when there is one).
    raw: Option<Value>,
    /// Whether the tool, when it resolved, may write files.
    writes: bool,
    /// The policy's verdict, when the policy refused the call this early (a hidden tool).
    verdict: Option<Box<Verdict>>,
}

impl Early {
    /// The error result.
    pub fn into_result(self) -> ToolResult {
        *self.result
    }

    /// The policy's verdict, when the policy refused the call before it was planned (a tool
    /// a bare deny rule hides), with the tool's canonical name; otherwise the error result.
    pub fn into_policy_refusal(self) -> Result<(String, Verdict), Box<ToolResult>> {
        match (self.verdict, &self.result.tool) {
            (Some(verdict), Some(tool)) => Ok((tool.clone(), *verdict)),
            _ => Err(self.result),
        }
    }
}

/// Resolve → validate → describe.
pub fn plan(rt: &Runtime, session: &Session, call: ToolCall) -> Result<Planned, Early> {
    let arrived = Instant::now();
    let ToolCall { id, name, input } = call;
    // A refused call is recorded with its input as it arrived; validation consumes it.
    let raw = rt.audit.is_some().then(|| input.clone());
    match plan_stages(rt, session, &name, input) {
        Ok((entry, input, access)) => Ok(Planned { id, entry, input, access, arrived }),
        Err((entry, e, verdict)) => {
            let tool = entry.as_ref().map(|t| t.spec().name.clone());
            tracing::debug!(call_id = %id, tool = tool.as_deref().unwrap_or(&name), outcome = e.kind(), "call refused before running");
            let writes = entry.as_ref().is_some_and(|t| crate::audit::may_write(t.spec(), None));
            let result = Box::new(ToolResult::from_error(&id, tool, &e, arrived.elapsed()));
            Err(Early { result, name, raw, writes, verdict })
        }
    }
}

/// Why the first three stages stopped: the tool when it resolved, the error, and the policy's
/// verdict when the policy refused it.
pub(super) type Refused = (Option<ToolEntry>, ToolError, Option<Box<Verdict>>);

fn plan_stages(
    rt: &Runtime,
    session: &Session,
    name: &str,
    input: Value,
) -> Result<(ToolEntry, Prepared, Access), Refused> {
    let entry = resolve::run(rt, name)?;
    let input = match validate::run(&entry, input) {
        Ok(input) => input,
        Err(e) => return Err((Some(entry), e, None)),
    };
    match describe::run(rt, &entry, &input, session) {
        Ok(access) => Ok((entry, input, access)),
        Err(e) => Err((Some(entry), e, None)),
    }
}

/// Emits the finished event for a call that ended early, records it, and returns its result.
pub fn finish_early(rt: &Runtime, session: &Session, early: Early, events: &EventSink) -> ToolResult {
    let Early { result, name, raw, writes, verdict } = early;
    render::emit_finished(&result, events);
    if let Some(log) = &rt.audit {
        let tool = result.tool.as_deref().unwrap_or(&name);
        let call = audit::Recorded { tool, input: raw.unwrap_or(Value::Null), writes };
        audit::record(log, session, &result, call, &Trail { verdict: verdict.map(|v| *v), ..Trail::default() });
    }
    *result
}

/// What the stages found out along the way, for the audit log.
#[derive(Default)]
pub(crate) struct Trail {
    pub verdict: Option<Verdict>,
    pub approval: Option<Approval>,
    pub hooks: Vec<HookRun>,
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
    let mut trail = Trail::default();
    // Post-hooks and the audit log see the JSON input (as rewritten by a hook, if one did);
    // keep it only when somebody will read it.
    let keep_json = !rt.hooks.is_empty() || rt.audit.is_some();
    let mut json = keep_json.then(|| input.json().clone());

    let outcome = async {
        let pre = pre_hooks::run(rt, session, &id, &cwd, &entry, &input, &access).await;
        let mut hook_verdict = None;
        if let Some(pre) = pre {
            trail.hooks.extend(pre.runs);
            context.extend(pre.additional_context);
            hook_verdict = pre.verdict;
            if let Some(rewritten) = pre.updated_input {
                (input, access) = pre_hooks::revalidate(&entry, rewritten, session, rt)?;
                json = keep_json.then(|| input.json().clone());
            }
        }
        let call = CallInfo {
            session: session.state(),
            call_id: &id,
            cwd: &cwd,
            tool: entry.spec(),
            input: input.json(),
            access: &access,
        };
        let authorization = authorize::run(rt, &call, hook_verdict).await;
        trail.verdict = Some(authorization.verdict);
        trail.approval = authorization.approval;
        let extra_roots = authorization.outcome?;
        Ok(execute::run(rt, session, &id, &entry, input, &access, extra_roots, events, cancel).await)
    }
    .await;

    let result = match (outcome, &json) {
        (Ok(result), Some(json)) if !rt.hooks.is_empty() => {
            let call = CallInfo {
                session: session.state(),
                call_id: &id,
                cwd: &cwd,
                tool: entry.spec(),
                input: json,
                access: &access,
            };
            post_hooks::run(rt, &call, result, &mut context, &mut trail.hooks).await
        }
        (Ok(result), _) => result,
        (Err(e), _) => Err(e),
    };
    let result = render::run(rt, session, &id, &entry, result, context, arrived, events).await;
    if let Some(log) = &rt.audit {
        let writes = crate::audit::may_write(entry.spec(), Some(&access));
        let call = audit::Recorded { tool: &entry.spec().name, input: json.unwrap_or(Value::Null), writes };
        audit::record(log, session, &result, call, &trail);
    }
    result
}
