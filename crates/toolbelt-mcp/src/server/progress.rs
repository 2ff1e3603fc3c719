//! A call's events as `notifications/progress`, when the client asked for them with a
//! `progressToken`.
//!
//! Events arrive synchronously from the tool (the event sink is a plain callback); they are
//! queued and sent by a task, coalesced so a command printing a gigabyte sends a
//! notification every 50 ms at most, each with at most the last 16 KiB of what came since.

use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use toolbelt_core::{EventSink, ToolEvent};

/// The most text one notification carries.
const MAX_MESSAGE: usize = 16 * 1024;
/// The least time between two notifications.
const INTERVAL: Duration = Duration::from_millis(50);

/// The task sending a call's notifications.
pub(super) struct Forwarder(Option<(tokio::task::JoinHandle<()>, CancellationToken)>);

impl Forwarder {
    /// Waits until every queued event was sent (call after dropping the sink): the pause
    /// between notifications is cut short, so the call's answer is never held back by it.
    pub async fn finish(self) {
        if let Some((task, done)) = self.0 {
            done.cancel();
            let _ = task.await;
        }
    }
}

/// An event sink forwarding to `peer` under `token`; a silent sink when there is no token.
pub(super) fn forward(token: Option<ProgressToken>, peer: Peer<RoleServer>) -> (EventSink, Forwarder) {
    let Some(token) = token else { return (EventSink::none(), Forwarder(None)) };
    let (tx, mut rx) = mpsc::unbounded_channel::<String>();
    let sink = EventSink::new(move |event: &ToolEvent| {
        let text = match event {
            ToolEvent::Output { chunk, .. } => chunk.clone(),
            ToolEvent::Progress { message, fraction: Some(f), .. } => format!("{message} ({:.0}%)", f * 100.0),
            ToolEvent::Progress { message, .. } => message.clone(),
            ToolEvent::Started { .. } | ToolEvent::Finished { .. } => return,
        };
        let _ = tx.send(text);
    });
    let done = CancellationToken::new();
    let call_ended = done.clone();
    let task = tokio::spawn(async move {
        let mut sent = 0u64;
        while let Some(first) = rx.recv().await {
            let mut message = first;
            while let Ok(more) = rx.try_recv() {
                message.push_str(&more);
            }
            if message.len() > MAX_MESSAGE {
                let mut cut = message.len() - MAX_MESSAGE;
                while !message.is_char_boundary(cut) {
                    cut += 1;
                }
                message = format!("…{}", &message[cut..]);
            }
            sent += 1;
            let param = json!({"progressToken": token, "progress": sent, "message": message});
            if let Ok(param) = serde_json::from_value::<ProgressNotificationParam>(param)
                && peer.notify_progress(param).await.is_err()
            {
                break; // the client is gone
            }
            tokio::select! {
                () = tokio::time::sleep(INTERVAL) => {}
                () = call_ended.cancelled() => {}
            }
        }
    });
    (sink, Forwarder(Some((task, done))))
}
