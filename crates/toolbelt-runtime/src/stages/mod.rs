//! The stages of one call, in order. [`plan`] runs the first three (no I/O) so the scheduler
//! knows whether the call may run beside others; [`run`] does the rest, each stage taking
//! the call's [`CallCx`].
//!
//! The stages know the runtime only as its [`Pipeline`]: the runtime depends on them, never
//! the other way.

mod audit;
mod authorize;
mod execute;
mod fit;
mod follow_up;
mod plan;
mod post_hooks;
mod pre_hooks;
mod render;

use std::path::PathBuf;
use std::time::Instant;

use serde_json::Value;
use toolbelt_core::{Access, CancellationToken, EventSink, Prepared, ToolEntry, ToolError};
use toolbelt_policy::{Approval, CallInfo, HookRun, Verdict};
use tracing::Instrument as _;

use crate::call::ToolResult;
use crate::pipeline::Pipeline;
use crate::session::Session;

pub use plan::Plan;
pub(crate) use plan::{Early, plan, refuse};
pub use render::truncate_text;

use plan::{Checked, Planned};

/// Where planned calls run: the runtime's pipeline, the session, where events go and what
/// cancels the calls. The same for every call of a batch.
#[derive(Clone, Copy)]
pub(crate) struct Scope<'a> {
    pub pipeline: &'a Pipeline,
    pub session: &'a Session,
    pub events: &'a EventSink,
    pub cancel: &'a CancellationToken,
}

/// One call as its stages see it: what they use of the runtime, the session, the call's id
/// and tool, where it runs, when it arrived, what it declared it touches, where its events
/// go and what cancels it. The input, which a hook may rewrite and the tool consumes, is
/// passed beside it.
pub(super) struct CallCx<'a> {
    pub pipeline: &'a Pipeline,
    pub session: &'a Session,
    pub id: &'a str,
    pub entry: &'a ToolEntry,
    /// The session's working directory when the call started.
    pub cwd: PathBuf,
    pub arrived: Instant,
    /// What the call declared it touches (after a hook's rewrite, what the rewrite does).
    pub access: Access,
    /// The session's [`places`](toolbelt_core::SessionState::places) when `access` was
    /// declared.
    pub places: u64,
    pub events: &'a EventSink,
    pub cancel: &'a CancellationToken,
}

impl CallCx<'_> {
    /// The call as the policy and the hooks see it, with `input` as its input.
    pub fn info<'b>(&'b self, input: &'b Value) -> CallInfo<'b> {
        CallInfo {
            session: self.session.state(),
            call_id: self.id,
            cwd: &self.cwd,
            tool: self.entry.spec(),
            input,
            access: &self.access,
        }
    }
}

/// What the stages found out along the way: for the audit log (the verdict, the approval,
/// the hooks that ran) and for the model (context the hooks added).
#[derive(Default)]
pub(crate) struct Trail {
    pub verdict: Option<Verdict>,
    pub approval: Option<Approval>,
    pub hooks: Vec<HookRun>,
    pub context: Vec<String>,
    /// Verdicts on access the call asked for while it ran (a redirect to another host).
    pub follow_ups: Vec<Verdict>,
}

/// Pre-hooks → authorize → execute → post-hooks → render, then the audit record; a call
/// refused while planned only gets its finished event and its record.
pub(crate) async fn run(scope: Scope<'_>, plan: Plan) -> ToolResult {
    let metrics = &scope.pipeline.metrics;
    let running = metrics.started();
    let result = match plan.0 {
        Checked::Ready(planned) => run_planned(scope, planned).await,
        Checked::Refused(early) => finish_early(scope, early),
    };
    metrics.finished(result.tool.as_deref(), result.outcome, result.duration);
    drop(running);
    result
}

/// Tells the pipeline's observer, if any, that the call ended.
fn observe(
    pipeline: &crate::pipeline::Pipeline,
    session: &crate::session::Session,
    result: &ToolResult,
    tool: &str,
    trail: &Trail,
) {
    let Some(observer) = &pipeline.observer else { return };
    let client = session.client();
    observer.call_finished(&crate::observe::CallReport {
        tool,
        known_tool: result.tool.is_some(),
        call_id: &result.id,
        session: session.id(),
        client: &client,
        outcome: result.outcome,
        is_error: result.is_error,
        duration: result.duration,
        decision: trail.verdict.as_ref(),
        approval: trail.approval.as_ref().map(audit::approval_name),
    });
}

/// Emits the finished event for a call that ended early, records it, and returns its result.
fn finish_early(scope: Scope<'_>, early: Early) -> ToolResult {
    let Early { result, name, raw, writes, verdict } = early;
    render::emit_finished(&result, scope.events);
    if let Some(verdict) = &verdict {
        scope.pipeline.metrics.decided(verdict);
    }
    let trail = Trail { verdict: verdict.map(|v| *v), ..Trail::default() };
    let tool = result.tool.as_deref().unwrap_or(&name);
    if let Some(log) = &scope.pipeline.audit {
        let call = audit::Recorded { tool, input: raw.unwrap_or(Value::Null), writes, trail: &trail };
        audit::record(log, scope.session, &result, call);
    }
    observe(scope.pipeline, scope.session, &result, tool, &trail);
    *result
}

async fn run_planned(scope: Scope<'_>, planned: Planned) -> ToolResult {
    let Planned { id, entry, input, access, places, arrived } = planned;
    let span = tracing::info_span!(
        "tool_call",
        tool = %entry.spec().name,
        call_id = %id,
        outcome = tracing::field::Empty,
        duration_ms = tracing::field::Empty,
    );
    let cx = CallCx {
        pipeline: scope.pipeline,
        session: scope.session,
        id: &id,
        entry: &entry,
        cwd: scope.session.state().cwd(),
        arrived,
        access,
        places,
        events: scope.events,
        cancel: scope.cancel,
    };
    let result = run_stages(cx, input).instrument(span.clone()).await;
    span.record("outcome", result.outcome.as_str());
    span.record("duration_ms", arrived.elapsed().as_secs_f64() * 1000.0);
    let _entered = span.enter();
    tracing::info!(is_error = result.is_error, "call finished");
    result
}

async fn run_stages(mut cx: CallCx<'_>, mut input: Prepared) -> ToolResult {
    let pipeline = cx.pipeline;
    let mut trail = Trail::default();
    // Post-hooks and the audit log see the JSON input (as rewritten by a hook, if one did);
    // keep it only when somebody will read it.
    let keep_json = !pipeline.hooks.is_empty() || pipeline.audit.is_some();
    let mut json = keep_json.then(|| input.json().clone());

    let outcome = async {
        let mut hook_verdict = None;
        // A call cancelled while its hooks run (its client gave up, the server drains) stops
        // waiting for them; their processes are killed as their futures drop.
        let pre = tokio::select! {
            pre = pre_hooks::run(&cx, &input) => pre,
            () = cx.cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        if let Some(pre) = pre {
            trail.hooks.extend(pre.runs);
            trail.context.extend(pre.additional_context);
            hook_verdict = pre.verdict;
            if let Some(rewritten) = pre.updated_input {
                cx.places = cx.session.state().places();
                (input, cx.access) = pre_hooks::revalidate(&cx, rewritten)?;
                json = keep_json.then(|| input.json().clone());
            }
        }
        let authorization = authorize::run(&cx, input.json(), hook_verdict).await;
        pipeline.metrics.decided(&authorization.verdict);
        trail.verdict = Some(authorization.verdict);
        trail.approval = authorization.approval;
        let extra_roots = authorization.outcome?;
        let follow_ups = follow_up::Verdicts::default();
        let result = execute::run(&cx, input, extra_roots, &follow_ups).await;
        trail.follow_ups = std::mem::take(&mut *follow_ups.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
        Ok(result)
    }
    .await;

    let result = match (outcome, &json) {
        (Ok(result), Some(json)) if !pipeline.hooks.is_empty() => post_hooks::run(&cx, json, result, &mut trail).await,
        (Ok(result), _) => result,
        (Err(e), _) => Err(e),
    };
    let result = render::run(&cx, result, std::mem::take(&mut trail.context)).await;
    if let Some(log) = &pipeline.audit {
        let writes = crate::audit::may_write(cx.entry.spec(), crate::audit::Declared::Access(&cx.access));
        let input = json.unwrap_or(Value::Null);
        let call = audit::Recorded { tool: &cx.entry.spec().name, input, writes, trail: &trail };
        audit::record(log, cx.session, &result, call);
    }
    observe(pipeline, cx.session, &result, &cx.entry.spec().name, &trail);
    result
}
