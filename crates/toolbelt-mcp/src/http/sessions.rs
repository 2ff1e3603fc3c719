//! The HTTP endpoint's MCP sessions, bounded in number, in requests and in time.
//!
//! [`Sessions`] is the rmcp session manager of the endpoint: rmcp's in-memory
//! [`LocalSessionManager`] underneath, plus a table of the open sessions with, for each, when
//! its client was last heard from and how many of its requests are in flight. It refuses a
//! new session past [`SessionLimits::max_sessions`] and a request past
//! [`SessionLimits::max_in_flight`]; [`reap`] closes the sessions idle longer than
//! [`SessionLimits::idle_timeout`]. Closing a session ends its rmcp service, which drops its
//! [`McpServer`](crate::McpServer) and with it the runtime session: its background processes
//! are killed and its SessionEnd hooks run.
//!
//! Idle means no request in flight and no message from the client: an open `GET` stream (a
//! client listening for server messages) does not keep a session alive, a long tool call does.
//! rmcp's own idle timer is turned off: it counts a long call with no output as idle, and
//! would end the session under it.
//!
//! # What one session holds, and what bounds it
//!
//! * rmcp's session worker: a 16-message inbound channel; a cache of the last 16 messages for
//!   the `GET` stream and for each request's stream (one per request in flight, at most
//!   [`SessionLimits::max_in_flight`]); at most 32 extra `GET` streams, one message each;
//!   the streams of cancelled requests for 60 s. A request body is at most 4 MiB.
//! * The rmcp service: one task per request in flight.
//! * The runtime session: the read ledger (at most its cap of files, the oldest forgotten),
//!   the todo list (replaced whole by each TodoWrite, so at most one request's size), the
//!   background tasks (a running limit; at most 100 finished ones kept; their output in log
//!   files, not in memory), the grants (one per approval a person gave).
//! * Progress notifications: at most 16 KiB of a call's output waiting to be sent, the rest
//!   dropped while the client is slow.
//! * The events of its streams, kept for resuming ([`super::replay`]): at most 16 MiB, a
//!   finished call's for 5 minutes.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, LocalSessionManagerError};
use rmcp::transport::streamable_http_server::session::store::EventStore;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use tokio_util::sync::CancellationToken;

use super::replay::{Replay, ReplayError};
use super::session_ids::SessionIds;
pub use super::session_limits::SessionLimits;

/// Why the endpoint refused to open a session or to take a request.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Every session slot is taken.
    #[error(
        "the server is full: {max} MCP sessions are open, its limit (--max-sessions, mcp.max_sessions). \
         End a session you no longer use (HTTP DELETE /mcp with its Mcp-Session-Id), wait for an idle one \
         to be closed (after {idle}), or restart the server with a higher limit"
    )]
    Full {
        /// The limit.
        max: usize,
        /// The idle timeout, in words.
        idle: String,
    },
    /// The session has as many requests in flight as it may.
    #[error(
        "this session is at its limit of requests in flight ({max}); wait for one to finish, then send this \
         again"
    )]
    Busy {
        /// The limit.
        max: usize,
    },
    /// A request names a session another replica opened (its id says which).
    #[error(
        "the session {id} was opened on replica {owner}, and this is replica {here}: {owner} is out of reach \
         (stopped, or restarted) and what ran in the session is gone with it; start a new session with initialize"
    )]
    Elsewhere {
        /// The session.
        id: String,
        /// The replica its id names.
        owner: String,
        /// This replica.
        here: String,
    },
    /// A request names a session this server does not hold.
    #[error(
        "the session {0} is not open on this server: it ended (closed, idle, or the server restarted), or it was \
         opened on another replica, now out of reach, and what ran in it is gone; start a new session with \
         initialize"
    )]
    NotHere(String),
    /// The server drains after SIGTERM: it opens no new session.
    #[error(
        "this server is shutting down (draining after SIGTERM) and opens no new session; connect again (behind a \
         load balancer, another replica takes it)"
    )]
    Draining,
    /// The session was closed (idle, or deleted) while the request came in.
    #[error("the session {0} has ended; start a new one with initialize")]
    Ended(SessionId),
    /// rmcp's session manager failed.
    #[error(transparent)]
    Local(#[from] LocalSessionManagerError),
    /// A resume named nothing this session can resume.
    #[error(transparent)]
    Replay(#[from] ReplayError),
}

/// The endpoint's sessions: rmcp's in-memory manager, within [`SessionLimits`].
#[derive(Debug)]
pub struct Sessions {
    local: LocalSessionManager,
    /// The ids clients see: rmcp's, or on a team `replica.<rmcp's>`.
    ids: SessionIds,
    replay: Arc<Replay>,
    limits: SessionLimits,
    table: Arc<Mutex<Table>>,
}

#[derive(Debug, Default)]
struct Table {
    open: HashMap<SessionId, Activity>,
    /// Sessions being created (counted against the limit before they have an id).
    opening: usize,
    /// Places held by requests that may open a session ([`Sessions::reserve`]).
    reserved: usize,
    /// Requests without a protocol session in flight ([`Sessions::start_inline`]).
    inline_in_flight: usize,
}

#[derive(Debug)]
struct Activity {
    last: Instant,
    in_flight: usize,
}

impl Activity {
    fn now() -> Self {
        Self { last: Instant::now(), in_flight: 0 }
    }
}

fn lock(table: &Mutex<Table>) -> MutexGuard<'_, Table> {
    table.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Sessions {
    /// No session yet.
    pub fn new(limits: SessionLimits) -> Self {
        Self::named(limits, None)
    }

    /// No session yet; with `replica`, every session id names it (`replica.<uuid>`), so a
    /// request that reaches another replica is told whose session it is.
    pub fn named(limits: SessionLimits, replica: Option<&str>) -> Self {
        let replay = Arc::new(Replay::new());
        let mut local = LocalSessionManager::default().with_event_store(Arc::clone(&replay) as Arc<dyn EventStore>);
        // Idleness is judged here (rmcp's timer would end a session during a long call).
        local.session_config.keep_alive = None;
        Self { local, ids: SessionIds::new(replica), replay, limits, table: Arc::default() }
    }

    /// Why a session `id` names is not here: it ended, or another replica holds it.
    pub fn not_here(&self, id: &str) -> SessionError {
        self.ids.not_here(id)
    }

    /// The limits.
    pub fn limits(&self) -> SessionLimits {
        self.limits
    }

    /// How many sessions are open.
    pub fn len(&self) -> usize {
        lock(&self.table).open.len()
    }

    /// Whether the session `id` is open here.
    pub fn is_open(&self, id: &str) -> bool {
        lock(&self.table).open.contains_key(id)
    }

    /// Whether no session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Holds a place for a session a request may open (a `POST` without a session id) until
    /// the returned guard is dropped, or refuses when every place is taken or held. Held
    /// places count until the request ends, even once its session is open, so requests
    /// racing for the last place are refused here, never halfway through.
    pub fn reserve(&self) -> Result<Reservation, SessionError> {
        let mut table = lock(&self.table);
        if table.open.len() + table.reserved >= self.limits.max_sessions {
            return Err(self.full());
        }
        table.reserved += 1;
        Ok(Reservation { table: Arc::clone(&self.table) })
    }

    /// Counts a request without a protocol session (2026-07-28) in flight until the returned
    /// guard is dropped, or refuses it past [`SessionLimits::max_in_flight`]: such requests
    /// run in one session per token, held to a session's limit.
    pub fn start_inline(&self) -> Result<InlineInFlight, SessionError> {
        let mut table = lock(&self.table);
        if table.inline_in_flight >= self.limits.max_in_flight {
            return Err(SessionError::Busy { max: self.limits.max_in_flight });
        }
        table.inline_in_flight += 1;
        Ok(InlineInFlight { table: Arc::clone(&self.table) })
    }

    /// The refusal a new request of session `id` would get now, if any.
    pub fn refuse_request(&self, id: &str) -> Option<SessionError> {
        let table = lock(&self.table);
        let busy = table.open.get(id).is_some_and(|a| a.in_flight >= self.limits.max_in_flight);
        busy.then_some(SessionError::Busy { max: self.limits.max_in_flight })
    }

    fn full(&self) -> SessionError {
        SessionError::Full { max: self.limits.max_sessions, idle: words(self.limits.idle_timeout) }
    }

    /// Notes that the client of `id` was heard from.
    fn touch(&self, id: &SessionId) -> Result<(), SessionError> {
        match lock(&self.table).open.get_mut(id) {
            Some(activity) => {
                activity.last = Instant::now();
                Ok(())
            }
            None => Err(SessionError::Ended(id.clone())),
        }
    }

    /// Counts a request of `id` in flight until the returned guard is dropped.
    fn start_request(&self, id: &SessionId) -> Result<InFlight, SessionError> {
        let mut table = lock(&self.table);
        let activity = table.open.get_mut(id).ok_or_else(|| SessionError::Ended(id.clone()))?;
        if activity.in_flight >= self.limits.max_in_flight {
            return Err(SessionError::Busy { max: self.limits.max_in_flight });
        }
        activity.in_flight += 1;
        activity.last = Instant::now();
        Ok(InFlight { table: Arc::clone(&self.table), id: id.clone() })
    }

    /// Takes the sessions idle for the timeout out of the table (so no request reaches them
    /// any more) and returns their ids.
    fn take_idle(&self) -> Vec<SessionId> {
        let timeout = self.limits.idle_timeout;
        let mut table = lock(&self.table);
        let idle: Vec<SessionId> = table
            .open
            .iter()
            .filter(|(_, a)| a.in_flight == 0 && a.last.elapsed() >= timeout)
            .map(|(id, _)| id.clone())
            .collect();
        for id in &idle {
            table.open.remove(id);
        }
        idle
    }
}

/// A session slot being filled; given back if the creation fails or is abandoned.
struct Opening<'a>(&'a Mutex<Table>);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        lock(self.0).opening -= 1;
    }
}

/// A place held for a session a request may open; given back on drop.
#[derive(Debug)]
pub struct Reservation {
    table: Arc<Mutex<Table>>,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        lock(&self.table).reserved -= 1;
    }
}

/// A request without a protocol session in flight; on drop it no longer counts.
#[derive(Debug)]
pub struct InlineInFlight {
    table: Arc<Mutex<Table>>,
}

impl Drop for InlineInFlight {
    fn drop(&mut self) {
        let mut table = lock(&self.table);
        table.inline_in_flight = table.inline_in_flight.saturating_sub(1);
    }
}

/// A request in flight; on drop (its response sent, or its client gone) it no longer counts.
struct InFlight {
    table: Arc<Mutex<Table>>,
    id: SessionId,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if let Some(activity) = lock(&self.table).open.get_mut(&self.id) {
            activity.in_flight = activity.in_flight.saturating_sub(1);
            activity.last = Instant::now();
        }
    }
}

/// A request's response stream, holding its [`InFlight`] until the stream is dropped. The
/// first event it delivers makes the stream its session's in the [`Replay`] store; past
/// [`SessionLimits::poll_after`] it ends (between two events) while the call goes on.
struct Tracked<S> {
    inner: S,
    in_flight: InFlight,
    /// rmcp's id of the session, which the [`Replay`] store knows it by.
    session: SessionId,
    replay: Arc<Replay>,
    claimed: bool,
    close_at: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S: Stream<Item = ServerSseMessage> + Unpin> Stream for Tracked<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let next = Pin::new(&mut self.inner).poll_next(cx);
        if let Poll::Ready(Some(event)) = &next {
            if !self.claimed
                && let Some(id) = &event.event_id
            {
                self.replay.claim(id, &self.session);
                self.claimed = true;
            }
            return next;
        }
        if next.is_pending()
            && let Some(close_at) = self.close_at.as_mut()
            && close_at.as_mut().poll(cx).is_ready()
        {
            tracing::debug!(session = %self.in_flight.id, "closing a request's stream; the client resumes it");
            return Poll::Ready(None);
        }
        next
    }
}

impl SessionManager for Sessions {
    type Error = SessionError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let opening = {
            let mut table = lock(&self.table);
            if table.open.len() + table.opening >= self.limits.max_sessions {
                return Err(self.full());
            }
            table.opening += 1;
            Opening(&self.table)
        };
        let (inner, transport) = self.local.create_session().await?;
        let id = self.ids.outer(inner);
        lock(&self.table).open.insert(id.clone(), Activity::now());
        drop(opening);
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let _in_flight = self.start_request(id)?;
        Ok(self.local.initialize_session(&self.ids.inner(id)?, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        let Ok(inner) = self.ids.inner(id) else { return Ok(false) };
        Ok(lock(&self.table).open.contains_key(id) && self.local.has_session(&inner).await?)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let inner = self.ids.inner(id)?;
        lock(&self.table).open.remove(id);
        self.replay.forget(&inner);
        Ok(self.local.close_session(&inner).await?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let in_flight = self.start_request(id)?;
        let session = self.ids.inner(id)?;
        // Boxed as a 'static stream: rmcp's stream type names the id it was asked with, a
        // local here.
        let inner: SseStream = Box::pin(self.local.create_stream(&session, message).await?);
        let close_at = self.limits.poll_after.map(|after| Box::pin(tokio::time::sleep(after)));
        Ok(Tracked { inner, in_flight, session, replay: Arc::clone(&self.replay), claimed: false, close_at })
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        self.touch(id)?;
        Ok(self.local.accept_message(&self.ids.inner(id)?, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id)?;
        let session = self.ids.inner(id)?;
        let stream: SseStream = Box::pin(self.local.create_standalone_stream(&session).await?);
        Ok(stream)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.touch(id)?;
        // The store, asked for this session's streams: rmcp's resume through an event store
        // does not look at the session.
        Ok(self.replay.replay(&self.ids.inner(id)?, &last_event_id)?.into_stream())
    }
}

/// A response stream of rmcp's, boxed.
type SseStream = Pin<Box<dyn Stream<Item = ServerSseMessage> + Send + Sync + 'static>>;

/// Closes idle sessions until `shutdown`, looking every quarter of the idle timeout (between
/// 0.1 s and 30 s).
pub async fn reap(sessions: Arc<Sessions>, shutdown: CancellationToken) {
    let tick = (sessions.limits.idle_timeout / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
    loop {
        tokio::select! {
            () = tokio::time::sleep(tick) => {}
            () = shutdown.cancelled() => return,
        }
        for id in sessions.take_idle() {
            tracing::info!(session = %id, "closing an MCP session idle for {}", words(sessions.limits.idle_timeout));
            if let Err(e) = sessions.close_session(&id).await {
                tracing::warn!(session = %id, "closing an idle MCP session failed: {e}");
            }
        }
    }
}

/// A duration as people write it: `30 min`, `90 s`.
pub fn words(d: Duration) -> String {
    let secs = d.as_secs();
    if secs >= 60 && secs.is_multiple_of(60) { format!("{} min", secs / 60) } else { format!("{secs} s") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_in_words() {
        assert_eq!(words(Duration::from_secs(1800)), "30 min");
        assert_eq!(words(Duration::from_secs(90)), "90 s");
        assert_eq!(words(Duration::from_secs(1)), "1 s");
    }
}
