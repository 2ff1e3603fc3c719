//! A call's events as `notifications/progress`, when the client asked for them with a
//! `progressToken`.
//!
//! Events arrive synchronously from the tool (the event sink is a plain callback); their text
//! is gathered in a buffer that a task sends from, coalesced so a command printing a gigabyte
//! sends a notification every 50 ms at most, each with at most the last 16 KiB of what came
//! since. The buffer keeps only that much too: a client slow to read its notifications holds
//! back at most 32 KiB, never the whole output.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use toolbelt_core::{EventSink, ToolEvent};

/// The most text one notification carries.
const MAX_MESSAGE: usize = 16 * 1024;
/// The least time between two notifications.
const INTERVAL: Duration = Duration::from_millis(50);

/// The task sending a call's notifications.
pub(super) struct Forwarder(Option<(tokio::task::JoinHandle<()>, CancellationToken)>);

impl Forwarder {
    /// Waits until the text gathered was sent (call after dropping the sink): the pause
    /// between notifications is cut short, so the call's answer is never held back by it.
    pub async fn finish(self) {
        if let Some((task, done)) = self.0 {
            done.cancel();
            let _ = task.await;
        }
    }
}

/// Text not sent yet.
#[derive(Default)]
struct Pending {
    text: String,
    /// Whether text was dropped from its front.
    cut: bool,
}

impl Pending {
    fn push(&mut self, more: &str) {
        self.text.push_str(more);
        if self.text.len() > 2 * MAX_MESSAGE {
            self.keep_tail();
        }
    }

    /// Keeps the last [`MAX_MESSAGE`] bytes (at a character boundary).
    fn keep_tail(&mut self) {
        if self.text.len() <= MAX_MESSAGE {
            return;
        }
        let mut cut = self.text.len() - MAX_MESSAGE;
        while !self.text.is_char_boundary(cut) {
            cut += 1;
        }
        self.text.drain(..cut);
        self.cut = true;
    }

    /// The next notification's message, if there is text.
    fn take(&mut self) -> Option<String> {
        self.keep_tail();
        let text = std::mem::take(&mut self.text);
        let cut = std::mem::take(&mut self.cut);
        match (text.is_empty(), cut) {
            (true, _) => None,
            (false, true) => Some(format!("…{text}")),
            (false, false) => Some(text),
        }
    }
}

/// An event sink forwarding to `peer` under `token`; a silent sink when there is no token.
pub(super) fn forward(token: Option<ProgressToken>, peer: Peer<RoleServer>) -> (EventSink, Forwarder) {
    let Some(token) = token else { return (EventSink::none(), Forwarder(None)) };
    let pending = Arc::new((Mutex::new(Pending::default()), Notify::new()));
    let gathered = Arc::clone(&pending);
    let sink = EventSink::new(move |event: &ToolEvent| {
        let text = match event {
            ToolEvent::Output { chunk, .. } => chunk.clone(),
            ToolEvent::Progress { message, fraction: Some(f), .. } => format!("{message} ({:.0}%)", f * 100.0),
            ToolEvent::Progress { message, .. } => message.clone(),
            ToolEvent::Started { .. } | ToolEvent::Finished { .. } | ToolEvent::Task { .. } => return,
        };
        gathered.0.lock().unwrap_or_else(PoisonError::into_inner).push(&text);
        gathered.1.notify_one();
    });
    let done = CancellationToken::new();
    let call_ended = done.clone();
    let task = tokio::spawn(async move {
        let mut sent = 0u64;
        loop {
            let ended = tokio::select! {
                () = pending.1.notified() => false,
                () = call_ended.cancelled() => true,
            };
            let message = pending.0.lock().unwrap_or_else(PoisonError::into_inner).take();
            if let Some(message) = message {
                sent += 1;
                let param = ProgressNotificationParam::new(token.clone(), sent as f64).with_message(message);
                if peer.notify_progress(param).await.is_err() {
                    break; // the client is gone
                }
            }
            if ended {
                break;
            }
            tokio::select! {
                () = tokio::time::sleep(INTERVAL) => {}
                () = call_ended.cancelled() => {}
            }
        }
    });
    (sink, Forwarder(Some((task, done))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pending_text_keeps_only_the_tail() {
        let mut p = Pending::default();
        for _ in 0..10_000 {
            p.push("0123456789");
            assert!(p.text.len() <= 2 * MAX_MESSAGE);
        }
        let message = p.take().unwrap();
        assert!(message.starts_with('…') && message.len() <= MAX_MESSAGE + '…'.len_utf8());
        assert!(p.take().is_none());
        p.push("short");
        assert_eq!(p.take().as_deref(), Some("short"));
    }
}
