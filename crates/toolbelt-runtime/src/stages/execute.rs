//! Stage 6: run the tool under its timeout, its cancellation and the session's execution
//! lock, turning a panic into an error instead of a crash.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use toolbelt_core::{Limits, Prepared, TimeLimit, ToolContext, ToolError, ToolEvent, ToolOutput};

use super::CallCx;
use super::follow_up::{Judge, Verdicts};

/// The time limit that applies, and the setting that set it (for the advice when it runs
/// out): a setting of the tool's, honoured as given ([`TimeLimit::Set`]); else what the input
/// asks, the spec's default or the runtime's, never above `runtime.max_timeout`.
fn limit_for(cx: &CallCx<'_>, input: &Prepared, tool_cx: &ToolContext) -> (Duration, Option<String>) {
    let (config, spec) = (&cx.pipeline.config, cx.entry.spec());
    let (wanted, setting) = match cx.entry.tool().timeout(input, tool_cx) {
        Some(TimeLimit::Set(own)) => return (own, spec.time_limit_setting.clone()),
        Some(TimeLimit::Asked(asked)) => (asked, None),
        None => match spec.default_timeout {
            Some(default) => (default, spec.time_limit_setting.clone()),
            None => (config.default_timeout, Some("`runtime.default_timeout`".to_string())),
        },
    };
    if wanted > config.max_timeout {
        (config.max_timeout, Some("`runtime.max_timeout`".to_string()))
    } else {
        (wanted, setting)
    }
}

/// Runs the tool with `input`, the directories in `extra_roots` open to it for this call;
/// access it asks for while it runs is judged and its verdicts kept in `follow_ups`.
pub(super) async fn run(
    cx: &CallCx<'_>,
    mut input: Prepared,
    extra_roots: Vec<PathBuf>,
    follow_ups: &Verdicts,
) -> Result<ToolOutput, ToolError> {
    let CallCx { pipeline, session, entry, events, cancel, .. } = *cx;
    // The call's own token: fired on timeout as well as when the caller cancels, so the tool
    // can clean up either way.
    let token = cancel.child_token();
    let tool_cx = ToolContext::new(
        cx.id,
        Arc::clone(session.state()),
        token.clone(),
        events.clone(),
        Limits { timeout: pipeline.config.default_timeout, output_budget: pipeline.config.output_budget },
        pipeline.services.clone(),
    )
    .with_hidden(pipeline.hidden.clone())
    .with_follow_up(Arc::new(Judge::of(cx, Arc::clone(follow_ups))));
    let tool_cx = if extra_roots.is_empty() { tool_cx } else { tool_cx.with_extra_roots(extra_roots) };
    // The tool says its own limit in the context it will run in; the context then carries it.
    let (timeout, setting) = limit_for(cx, &input, &tool_cx);
    let tool_cx = tool_cx.with_timeout(timeout);

    // Shared calls hold the read side, exclusive calls the write side.
    let lock = session.exec_lock();
    let (_read, _write) = if cx.access.is_shared() {
        tokio::select! {
            g = lock.read() => (Some(g), None),
            () = cancel.cancelled() => return Err(ToolError::Cancelled),
        }
    } else {
        tokio::select! {
            g = lock.write() => (None, Some(g)),
            () = cancel.cancelled() => return Err(ToolError::Cancelled),
        }
    };

    // Where the call runs: read before the check, so a move after the read leaves the call
    // where it was judged (pinned), and a move before it is seen.
    let cwd = session.state().cwd();
    if session.state().places() != cx.places {
        rejudge(cx, &mut input, &cwd)?;
    }
    let tool_cx = tool_cx.with_cwd(cwd);

    if events.is_listening() {
        events.emit(&ToolEvent::Started { id: cx.id.to_string(), tool: entry.spec().name.clone() });
    }
    let work = AssertUnwindSafe(entry.tool().call(input, tool_cx)).catch_unwind();
    // Biased, tool first: a call that finishes on its first poll never arms the timer
    // (registering it costs more than the rest of the pipeline).
    let outcome = tokio::select! {
        biased;
        r = work => match r {
            Ok(result) => result,
            Err(panic) => Err(ToolError::internal(format!("the tool panicked: {}", panic_message(&panic)))),
        },
        () = cancel.cancelled() => Err(ToolError::Cancelled),
        () = tokio::time::sleep(timeout) => Err(ToolError::timed_out(timeout, setting.as_deref())),
    };
    // Whatever ended the call, tell the tool's helpers to stop; the tool's future itself was
    // dropped above (when it did not finish), which kills what it owns.
    token.cancel();
    outcome
}

/// The working directory or the workspace roots changed after the call was judged (an
/// earlier call's `cd` ran first): the call is judged again where it now runs, and goes on
/// only when it touches exactly what was judged and authorized — then with the plan made
/// there. Otherwise it does not run: a relative path judged in one folder must not be written
/// in another.
fn rejudge(cx: &CallCx<'_>, input: &mut Prepared, cwd: &std::path::Path) -> Result<(), ToolError> {
    let access = super::plan::describe_in(cx.pipeline, cx.session, cx.entry, input, Some(cwd.to_path_buf()))?;
    if access == cx.access {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "not run: the working directory (now {}) or the workspace roots changed after this call was judged — an \
         earlier call moved them — and here it would touch other paths than the ones judged. Call it again (with \
         absolute paths) to have it judged where it runs now.",
        cwd.display()
    )))
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "no message".to_string()
    }
}
