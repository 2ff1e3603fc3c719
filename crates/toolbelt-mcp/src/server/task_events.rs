//! A session's background-task events (a monitor's lines, its end) as log notifications to
//! its client: logger `toolbelt/<task id>`, data `{task_id, kind, text, exit_code?}`, level
//! `info` (`warning` for a notice), at or above the level the client set.
//!
//! The tool side emits synchronously into the session's [`TaskEvents`] sink; a task per
//! connection sends them in order. A 2026-07-28 client has no channel for messages outside
//! a request (logging rides a request's own response there), so its monitors are read with
//! `TaskOutput` only.
#![allow(deprecated)]

use std::sync::{Arc, PoisonError};

use rmcp::model::LoggingLevel;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use toolbelt_core::{EventSink, SessionState, TaskEventKind, TaskEvents, ToolEvent};

use crate::ask::ClientAsker;

/// Sends `session`'s task events through `asker` until `stop` fires or the client is gone.
pub(super) fn forward(session: &SessionState, asker: Arc<ClientAsker>, stop: CancellationToken) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<ToolEvent>();
    let sink = EventSink::new(move |event| {
        if matches!(event, ToolEvent::Task { .. }) {
            let _ = tx.send(event.clone());
        }
    });
    session.slot::<TaskEvents>().lock().unwrap_or_else(PoisonError::into_inner).set(sink);
    tokio::spawn(async move {
        loop {
            let event = tokio::select! {
                event = rx.recv() => event,
                () = stop.cancelled() => None,
            };
            let Some(ToolEvent::Task { task_id, kind, text, exit_code }) = event else { return };
            let level = if kind == TaskEventKind::Notice { LoggingLevel::Warning } else { LoggingLevel::Info };
            let mut data = json!({"task_id": task_id, "kind": kind, "text": text});
            if let Some(code) = exit_code {
                data["exit_code"] = json!(code);
            }
            asker.log(level, &format!("toolbelt/{task_id}"), data).await;
        }
    });
}
