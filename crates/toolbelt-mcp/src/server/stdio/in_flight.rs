//! How many requests of the client are being answered at once, and the ones waiting.
//!
//! rmcp starts a task for every request it reads, as soon as it reads it. A client that
//! pipelines ten thousand calls had ten thousand tasks alive at once: the server's memory
//! grew by kilobytes per call while it caught up, each new page of heap a page fault, and
//! the calls ran slower for it. Past [`MAX_IN_FLIGHT`] requests being answered, the ones
//! read are held, in the order they came, until an answer goes out. Reading goes on
//! meanwhile, so the client's answers to our own requests (an approval it was asked for) and
//! its notifications still arrive: a call waiting on the client never blocks the line it
//! waits for. A held request the client cancels is dropped without being run (a cancelled
//! request gets no answer).

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

use rmcp::model::{ClientJsonRpcMessage, ClientNotification, RequestId};
use tokio::sync::Notify;

/// Requests answered at once before the next ones wait for an answer to go out.
pub(crate) const MAX_IN_FLIGHT: usize = 256;

/// The requests being answered, shared by the reading and the writing half.
#[derive(Debug, Default)]
pub(crate) struct InFlight {
    ids: Mutex<Ids>,
    /// Told when an answer goes out.
    freed: Notify,
}

/// Each id being answered, with how many requests carry it (a client may reuse one).
#[derive(Debug, Default)]
struct Ids {
    by_id: HashMap<RequestId, usize>,
    total: usize,
}

impl InFlight {
    fn ids(&self) -> MutexGuard<'_, Ids> {
        self.ids.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `id` as being answered when there is room; whether there was.
    pub(crate) fn try_admit(&self, id: &RequestId) -> bool {
        let mut ids = self.ids();
        if ids.total >= MAX_IN_FLIGHT {
            return false;
        }
        ids.total += 1;
        *ids.by_id.entry(id.clone()).or_default() += 1;
        true
    }

    /// The request `id` was answered.
    pub(crate) fn answered(&self, id: &RequestId) {
        let mut ids = self.ids();
        if let Some(count) = ids.by_id.get_mut(id) {
            *count -= 1;
            if *count == 0 {
                ids.by_id.remove(id);
            }
            ids.total -= 1;
            drop(ids);
            // Stored when no one waits yet: the next wait ends at once.
            self.freed.notify_one();
        }
    }

    /// Waits until an answer goes out (maybe one that went out since the last wait).
    pub(crate) async fn freed(&self) {
        self.freed.notified().await;
    }
}

/// Requests read but not yet handed on, oldest first.
#[derive(Debug, Default)]
pub(crate) struct Held(VecDeque<ClientJsonRpcMessage>);

impl Held {
    /// Whether none is held.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Holds `message` behind the others.
    pub(crate) fn hold(&mut self, message: ClientJsonRpcMessage) {
        self.0.push_back(message);
    }

    /// The oldest held request, when `in_flight` has room for it.
    pub(crate) fn release(&mut self, in_flight: &InFlight) -> Option<ClientJsonRpcMessage> {
        let ClientJsonRpcMessage::Request(request) = self.0.front()? else {
            return self.0.pop_front();
        };
        if in_flight.try_admit(&request.id) { self.0.pop_front() } else { None }
    }

    /// Drops the held request a cancellation names; whether one was.
    pub(crate) fn cancel(&mut self, message: &ClientJsonRpcMessage) -> bool {
        let ClientJsonRpcMessage::Notification(n) = message else { return false };
        let ClientNotification::CancelledNotification(cancelled) = &n.notification else { return false };
        let Some(id) = cancelled.params.request_id.as_ref() else { return false };
        let before = self.0.len();
        self.0.retain(|m| !matches!(m, ClientJsonRpcMessage::Request(r) if &r.id == id));
        self.0.len() != before
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_comes_back_with_each_answer() {
        let in_flight = InFlight::default();
        for i in 0..MAX_IN_FLIGHT {
            assert!(in_flight.try_admit(&RequestId::Number(i as i64)));
        }
        assert!(!in_flight.try_admit(&RequestId::Number(-1)));
        in_flight.answered(&RequestId::Number(3));
        assert!(in_flight.try_admit(&RequestId::Number(-1)));
        // An answer to an id never admitted frees nothing.
        in_flight.answered(&RequestId::Number(-7));
        assert!(!in_flight.try_admit(&RequestId::Number(-2)));
    }

    fn message(value: serde_json::Value) -> ClientJsonRpcMessage {
        serde_json::from_value(value).unwrap()
    }

    fn ping(id: i64) -> ClientJsonRpcMessage {
        message(serde_json::json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
    }

    #[test]
    fn held_requests_go_in_order_and_a_cancelled_one_never_goes() {
        let in_flight = InFlight::default();
        for i in 0..MAX_IN_FLIGHT {
            assert!(in_flight.try_admit(&RequestId::Number(1000 + i as i64)));
        }
        let mut held = Held::default();
        for id in 1..=3 {
            held.hold(ping(id));
        }
        assert!(held.release(&in_flight).is_none(), "no room yet");
        let cancel = message(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": 1, "reason": "changed my mind"}}));
        assert!(held.cancel(&cancel));
        assert!(!held.cancel(&cancel), "already gone");
        in_flight.answered(&RequestId::Number(1000));
        in_flight.answered(&RequestId::Number(1001));
        let ids: Vec<RequestId> = std::iter::from_fn(|| held.release(&in_flight))
            .map(|m| match m {
                ClientJsonRpcMessage::Request(r) => r.id,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(ids, [RequestId::Number(2), RequestId::Number(3)]);
        assert!(held.is_empty());
    }
}
