//! Stages 1–3, which need no I/O: resolve the name, validate the input, and ask the tool what
//! the call will touch and whether it may run beside others.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use toolbelt_core::{
    Access, CancellationToken, Content, EventSink, Limits, Prepared, ToolContext, ToolEntry, ToolError, ToolSpec,
};
use toolbelt_policy::Verdict;

use crate::audit::{Declared, may_write};
use crate::call::{Outcome, ToolCall, ToolResult};
use crate::pipeline::Pipeline;
use crate::session::Session;

/// A call checked as far as it can be without running anything: ready to run, or already
/// refused (an unknown tool, invalid input, a tool the policy hides…). Made by
/// [`crate::Runtime::plan`], run by [`crate::Runtime::run`].
pub struct Plan(pub(super) Checked);

// A plan lives only until it runs; boxing the ready call would cost an allocation per call on
// the hot path for no gain.
#[allow(clippy::large_enum_variant)]
pub(super) enum Checked {
    Ready(Planned),
    Refused(Early),
}

impl Plan {
    /// The spec of the tool the call will run, when the call is ready to run.
    pub fn spec(&self) -> Option<&ToolSpec> {
        match &self.0 {
            Checked::Ready(planned) => Some(planned.entry.spec()),
            Checked::Refused(_) => None,
        }
    }

    /// Whether the call may run beside other shared calls. A refused call takes no slot, so
    /// it never stands between them.
    pub(crate) fn is_shared(&self) -> bool {
        match &self.0 {
            Checked::Ready(planned) => planned.access.is_shared(),
            Checked::Refused(_) => true,
        }
    }

    /// The tool, the prepared input and the declared access of a call ready to run; the
    /// refusal otherwise.
    pub(crate) fn into_parts(self) -> Result<(ToolEntry, Prepared, Access), Early> {
        match self.0 {
            Checked::Ready(Planned { entry, input, access, .. }) => Ok((entry, input, access)),
            Checked::Refused(early) => Err(early),
        }
    }
}

/// A call that passed resolve, validate and describe.
pub(super) struct Planned {
    pub id: String,
    pub entry: ToolEntry,
    pub input: Prepared,
    pub access: Access,
    /// The session's [`places`](toolbelt_core::SessionState::places) when it was judged.
    pub places: u64,
    pub arrived: Instant,
}

/// A call that ended before it could be scheduled.
pub(crate) struct Early {
    pub(super) result: Box<ToolResult>,
    /// The name the call asked for.
    pub(super) name: String,
    /// The input as it arrived, kept for the audit log (only when there is one).
    pub(super) raw: Option<Value>,
    /// Whether the tool, when it resolved, may write files.
    pub(super) writes: bool,
    /// The policy's verdict, when the policy refused the call this early (a hidden tool).
    pub(super) verdict: Option<Box<Verdict>>,
}

impl Early {
    /// The policy's verdict, when the policy refused the call before it was planned (a tool
    /// a bare deny rule hides), with the tool's canonical name; otherwise the error result.
    pub(crate) fn into_policy_refusal(self) -> Result<(String, Verdict), Box<ToolResult>> {
        match (self.verdict, &self.result.tool) {
            (Some(verdict), Some(tool)) => Ok((tool.clone(), *verdict)),
            _ => Err(self.result),
        }
    }
}

/// Why the first three stages stopped.
struct Refusal {
    /// The tool, when the name resolved.
    entry: Option<ToolEntry>,
    error: ToolError,
    /// The policy's verdict, when the policy refused the call.
    verdict: Option<Box<Verdict>>,
}

/// Resolve → validate → describe.
pub(crate) fn plan(pipeline: &Pipeline, session: &Session, call: ToolCall) -> Plan {
    let arrived = Instant::now();
    let ToolCall { id, name, input } = call;
    // A refused call is recorded with its input as it arrived; validation consumes it.
    let raw = pipeline.audit.is_some().then(|| input.clone());
    // Read before judging: a move while the tool judges makes the call be judged again.
    let places = session.state().places();
    match check(pipeline, session, &name, input) {
        Ok((entry, input, access)) => Plan(Checked::Ready(Planned { id, entry, input, access, places, arrived })),
        Err(Refusal { entry, error, verdict }) => {
            let tool = entry.as_ref().map(|t| t.spec().name.clone());
            tracing::debug!(call_id = %id, tool = tool.as_deref().unwrap_or(&name), outcome = error.kind(), "call refused before running");
            let writes = entry.as_ref().is_some_and(|t| may_write(t.spec(), Declared::Nothing));
            let result = Box::new(refused(&id, tool, &error, arrived.elapsed()));
            Plan(Checked::Refused(Early { result, name, raw, writes, verdict }))
        }
    }
}

/// A call refused for a reason of the caller's before it is planned (a sub-agent calling a
/// tool it was not given): it then runs like any call refused while planned — its finished
/// event, its audit record with the input as it came.
pub(crate) fn refuse(pipeline: &Pipeline, call: ToolCall, error: ToolError) -> Plan {
    let ToolCall { id, name, input } = call;
    let entry = pipeline.registry.entry(&name);
    let tool = entry.as_ref().map(|t| t.spec().name.clone());
    let writes = entry.as_ref().is_some_and(|t| may_write(t.spec(), Declared::Nothing));
    let raw = pipeline.audit.is_some().then_some(input);
    let result = Box::new(refused(&id, tool, &error, Duration::ZERO));
    Plan(Checked::Refused(Early { result, name, raw, writes, verdict: None }))
}

fn check(
    pipeline: &Pipeline,
    session: &Session,
    name: &str,
    input: Value,
) -> Result<(ToolEntry, Prepared, Access), Refusal> {
    let entry = resolve(pipeline, name)?;
    // Validate: every failing field is reported at once, with its JSON path and what was
    // expected; then the input is decoded.
    let checked =
        entry.prepare(input).and_then(|mut input| Ok((describe(pipeline, session, &entry, &mut input)?, input)));
    match checked {
        Ok((access, input)) => Ok((entry, input, access)),
        Err(error) => Err(Refusal { entry: Some(entry), error, verdict: None }),
    }
}

/// Stage 1: looks the name (or an alias) up; an unknown name's error lists the closest
/// registered tools. A tool the policy hides (a bare deny rule) is denied, naming the rule:
/// the call is refused by the policy, and the verdict goes to the audit log.
fn resolve(pipeline: &Pipeline, name: &str) -> Result<ToolEntry, Refusal> {
    match pipeline.registry.lookup(name) {
        Ok(entry) => Ok(entry),
        Err(ToolError::Disabled { name, reason }) => {
            let entry = pipeline.registry.entry(&name);
            let hidden = entry.as_ref().and_then(|e| pipeline.authorizer.hidden(e.spec()));
            match hidden {
                Some(verdict) => {
                    let error = ToolError::Denied { reason: verdict.reason.clone() };
                    Err(Refusal { entry, error, verdict: Some(Box::new(verdict)) })
                }
                None => Err(Refusal { entry, error: ToolError::Disabled { name, reason }, verdict: None }),
            }
        }
        Err(error) => Err(Refusal { entry: None, error, verdict: None }),
    }
}

/// Stage 3: the tool says what the call will touch; it only describes here, nothing runs. The
/// plan it makes, if it plans, is kept in `input`: what is judged next is what will run.
pub(super) fn describe(
    pipeline: &Pipeline,
    session: &Session,
    entry: &ToolEntry,
    input: &mut Prepared,
) -> Result<Access, ToolError> {
    describe_in(pipeline, session, entry, input, None)
}

/// [`describe`], the call working in `cwd` when given rather than in the session's.
pub(super) fn describe_in(
    pipeline: &Pipeline,
    session: &Session,
    entry: &ToolEntry,
    input: &mut Prepared,
    cwd: Option<PathBuf>,
) -> Result<Access, ToolError> {
    let cx = ToolContext::new(
        "describe",
        Arc::clone(session.state()),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        pipeline.services.clone(),
    )
    .with_hidden(pipeline.hidden.clone());
    let cx = match cwd {
        Some(cwd) => cx.with_cwd(cwd),
        None => cx,
    };
    entry.tool().access(input, &cx)
}

/// The result of a call refused before it ran.
fn refused(id: &str, tool: Option<String>, error: &ToolError, duration: Duration) -> ToolResult {
    ToolResult {
        id: id.to_string(),
        tool,
        content: vec![Content::text(error.to_string())],
        structured: None,
        is_error: true,
        outcome: Outcome::from(error),
        duration,
    }
}
