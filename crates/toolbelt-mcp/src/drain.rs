//! Stopping an HTTP server without cutting its clients off mid-call: told to stop
//! (SIGTERM, as Kubernetes and systemd say it), the server drains.
//!
//! * **It takes no new work.** `/readyz` answers 503, so a load balancer sends new sessions
//!   elsewhere; a request that would open a session gets 503, and a `tools/call` gets a
//!   JSON-RPC error saying the server is shutting down and the call was not run. Everything
//!   else (listing tools, a resumed stream, ending a session) is still answered.
//! * **Running calls finish** within a grace period, their answers delivered.
//! * **What is left is cut**: [`Drain::cut`] cancels the calls still running (each ends
//!   `cancelled`, recorded in the audit log like any call), and the front end then kills the
//!   commands still running and records what it cut.
//!
//! Each call of a draining server runs under a cancellation token that is both its
//! request's (the client cancelled) and the drain's (the grace period ended), so cutting a
//! call goes through the same path as a client's cancel: the tool stops, its processes are
//! killed, and its result is recorded.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rmcp::ErrorData as McpError;
use rmcp::model::ErrorCode;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

/// What a call cut by the drain adds to its result, for the model and the client.
pub(crate) const CUT: &str = "The server is shutting down and cut this call when its grace period ended (its \
processes were killed). Run it again in a new session: behind a load balancer, another replica takes it.";

/// A server's drain: whether it began, the calls still running, and what cuts them.
#[derive(Debug, Default)]
pub struct Drain {
    draining: AtomicBool,
    running: AtomicUsize,
    idle: Notify,
    cut: CancellationToken,
}

/// A call counted as running until dropped.
#[derive(Debug)]
pub struct Running<'a>(&'a Drain);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if self.0.running.fetch_sub(1, Ordering::SeqCst) == 1 {
            self.0.idle.notify_waiters();
        }
    }
}

impl Drain {
    /// Begins the drain; false when it had begun already.
    pub fn start(&self) -> bool {
        !self.draining.swap(true, Ordering::SeqCst)
    }

    /// Whether the drain began.
    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// How many calls are running.
    pub fn running(&self) -> usize {
        self.running.load(Ordering::SeqCst)
    }

    /// Resolves when no call is running.
    pub async fn idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.running() == 0 {
                return;
            }
            notified.await;
        }
    }

    /// Cancels every call still running, and every call that starts after.
    pub fn cut(&self) {
        self.cut.cancel();
    }

    /// Whether the drain cut the running calls.
    pub fn is_cut(&self) -> bool {
        self.cut.is_cancelled()
    }

    /// The refusal of a call that arrives while the server drains.
    pub(crate) fn refusal(&self) -> Option<McpError> {
        self.is_draining().then(|| {
            McpError::new(
                ErrorCode(-32000),
                "this server is shutting down (draining after SIGTERM): the call was not run; open a new session \
                 (behind a load balancer, another replica takes it) and call again",
                None,
            )
        })
    }

    /// Counts a call as running until the guard is dropped.
    pub(crate) fn enter(&self) -> Running<'_> {
        self.running.fetch_add(1, Ordering::SeqCst);
        Running(self)
    }

    /// A token for one call: cancelled when the drain cuts the running calls, or (through
    /// [`follow`]) when its request is cancelled.
    pub(crate) fn token(&self) -> CancellationToken {
        self.cut.child_token()
    }
}

/// Runs `call`, whose cancellation token is `token`, cancelling `token` when `request` is
/// cancelled: the call then ends as a cancelled call does, and its result is still recorded.
pub(crate) async fn follow<T>(
    call: impl Future<Output = T>,
    request: &CancellationToken,
    token: &CancellationToken,
) -> T {
    let mut call = std::pin::pin!(call);
    tokio::select! {
        biased;
        out = &mut call => return out,
        () = request.cancelled() => token.cancel(),
    }
    call.await
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[tokio::test]
    async fn idle_waits_for_the_last_call_and_cut_cancels_what_runs() {
        let drain = Arc::new(Drain::default());
        assert!(drain.start());
        assert!(!drain.start());
        drain.idle().await;
        let token = drain.token();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let held = Arc::clone(&drain);
        let call = tokio::spawn(async move {
            let _running = held.enter();
            let _ = rx.await;
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(drain.running(), 1);
        let waiting = tokio::time::timeout(Duration::from_millis(50), drain.idle()).await;
        assert!(waiting.is_err(), "idle while a call runs");
        drain.cut();
        assert!(token.is_cancelled());
        let _ = tx.send(());
        call.await.unwrap();
        tokio::time::timeout(Duration::from_secs(1), drain.idle()).await.unwrap();
    }

    #[tokio::test]
    async fn a_cancelled_request_cancels_its_call_which_still_answers() {
        let drain = Drain::default();
        let (request, token) = (CancellationToken::new(), drain.token());
        let watched = token.clone();
        let call = async move {
            watched.cancelled().await;
            "ended as cancelled"
        };
        let cancel = request.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            cancel.cancel();
        });
        assert_eq!(follow(call, &request, &token).await, "ended as cancelled");
    }
}
