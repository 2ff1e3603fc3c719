//! Stage 6: run the tool under its timeout, its cancellation and the session's execution
//! lock, turning a panic into an error instead of a crash.

use std::panic::AssertUnwindSafe;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::FutureExt as _;
use toolbelt_core::{
    Access, CancellationToken, EventSink, Limits, Prepared, ToolContext, ToolEntry, ToolError, ToolEvent, ToolOutput,
};

use crate::runtime::Runtime;
use crate::session::Session;

/// The timeout that applies: the input's, else the spec's, else the runtime default — never
/// above the runtime's cap.
pub(super) fn timeout_for(rt: &Runtime, entry: &ToolEntry, input: &Prepared) -> Duration {
    entry
        .tool()
        .timeout(input)
        .or(entry.spec().default_timeout)
        .unwrap_or(rt.config.default_timeout)
        .min(rt.config.max_timeout)
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn run(
    rt: &Runtime,
    session: &Session,
    call_id: &str,
    entry: &ToolEntry,
    input: Prepared,
    access: &Access,
    extra_roots: Vec<PathBuf>,
    events: &EventSink,
    cancel: &CancellationToken,
) -> Result<ToolOutput, ToolError> {
    let timeout = timeout_for(rt, entry, &input);
    // The call's own token: fired on timeout as well as when the caller cancels, so the tool
    // can clean up either way.
    let token = cancel.child_token();
    let cx = ToolContext::new(
        call_id,
        Arc::clone(session.state()),
        token.clone(),
        events.clone(),
        Limits { timeout, output_budget: rt.config.output_budget },
        rt.services.clone(),
    )
    .with_hidden(rt.hidden.clone());
    let cx = if extra_roots.is_empty() { cx } else { cx.with_extra_roots(extra_roots) };

    // Shared calls hold the read side, exclusive calls the write side.
    let lock = session.exec_lock();
    let (_read, _write) = if access.is_shared() {
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

    if events.is_listening() {
        events.emit(&ToolEvent::Started { id: call_id.to_string(), tool: entry.spec().name.clone() });
    }
    let work = AssertUnwindSafe(entry.tool().call(input, cx)).catch_unwind();
    // Biased, tool first: a call that finishes on its first poll never arms the timer
    // (registering it costs more than the rest of the pipeline).
    let outcome = tokio::select! {
        biased;
        r = work => match r {
            Ok(result) => result,
            Err(panic) => Err(ToolError::internal(format!("the tool panicked: {}", panic_message(&panic)))),
        },
        () = cancel.cancelled() => Err(ToolError::Cancelled),
        () = tokio::time::sleep(timeout) => Err(ToolError::TimedOut { after: timeout }),
    };
    // Whatever ended the call, tell the tool's helpers to stop; the tool's future itself was
    // dropped above (when it did not finish), which kills what it owns.
    token.cancel();
    outcome
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
