//! A short answer to the `server/discover` question for a server that never answers it.
//!
//! With `protocol = auto` a connection starts by asking `server/discover`. A 2025 server
//! answers with an error (method not found), and rmcp starts with `initialize`. But a server
//! that ignores requests it does not know (hand-written ones do) never answers, and rmcp waits
//! 10 s for it: a whole default startup timeout, so such a server would never connect.
//! [`Probed`] wraps the transport: when the question has no answer within [`PROBE_WAIT`], it
//! hands rmcp a "method not found" in the server's name, so rmcp starts with `initialize` at
//! once; an answer that comes later is dropped. A 2026-07-28 server slower than that to answer
//! its first request is spoken to in 2025-11-25, which it may also speak.

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ClientRequest, ErrorData, JsonRpcError, RequestId, ServerJsonRpcMessage};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::time::Instant;

/// How long the `server/discover` question waits for an answer.
pub(super) const PROBE_WAIT: Duration = Duration::from_secs(3);

/// A transport whose `server/discover` question is answered for the server after
/// [`PROBE_WAIT`].
pub(super) struct Probed<T> {
    inner: T,
    /// The question asked, and until when its answer is awaited.
    waiting: Option<(RequestId, Instant)>,
    /// A question answered for the server, whose late answer is dropped.
    answered: Option<RequestId>,
    asked: bool,
}

impl<T> Probed<T> {
    /// `inner`, its question answered for the server when `armed` (`protocol = auto`: with a
    /// pinned revision there is nothing to fall back to).
    pub(super) fn new(inner: T, armed: bool) -> Self {
        Self { inner, waiting: None, answered: None, asked: !armed }
    }
}

/// The id a message answers, when it is an answer.
fn answers(message: &ServerJsonRpcMessage) -> Option<&RequestId> {
    match message {
        ServerJsonRpcMessage::Response(response) => Some(&response.id),
        ServerJsonRpcMessage::Error(error) => error.id.as_ref(),
        _ => None,
    }
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Probed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let ClientJsonRpcMessage::Request(request) = &item
            && matches!(request.request, ClientRequest::DiscoverRequest(_))
            && !self.asked
        {
            self.asked = true;
            self.waiting = Some((request.id.clone(), Instant::now() + PROBE_WAIT));
        }
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            let message = match self.waiting.clone() {
                Some((id, until)) => {
                    tokio::select! {
                        message = self.inner.receive() => message,
                        () = tokio::time::sleep_until(until) => {
                            self.waiting = None;
                            self.answered = Some(id.clone());
                            let error = ErrorData::method_not_found::<rmcp::model::DiscoverRequestMethod>();
                            return Some(ServerJsonRpcMessage::Error(JsonRpcError::new(Some(id), error)));
                        }
                    }
                }
                None => self.inner.receive().await,
            };
            let answered = message.as_ref().and_then(answers);
            if answered.is_some() && answered == self.waiting.as_ref().map(|(id, _)| id) {
                self.waiting = None;
            } else if answered.is_some() && answered == self.answered.as_ref() {
                self.answered = None;
                continue;
            }
            return message;
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}
