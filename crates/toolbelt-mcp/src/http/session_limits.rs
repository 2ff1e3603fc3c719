//! How many sessions the HTTP endpoint holds, for how long, with how many requests each.

use std::time::Duration;

/// How many sessions may be open, how long one may idle, how many requests it may have in
/// flight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionLimits {
    /// Sessions open at once; a new one past this is refused until one ends.
    pub max_sessions: usize,
    /// A session with no request in flight and no message from its client for this long is
    /// closed.
    pub idle_timeout: Duration,
    /// Requests of one session in flight at once; one more is refused until one finishes.
    pub max_in_flight: usize,
    /// A request's SSE stream still open this long is closed while its call goes on; the
    /// client comes back for the rest with `Last-Event-ID` (MCP's "polling", SEP-1699).
    /// `None`: a stream stays open until its answer.
    pub poll_after: Option<Duration>,
}

impl SessionLimits {
    /// The default number of sessions.
    pub const DEFAULT_MAX_SESSIONS: usize = 64;
    /// The default idle timeout: 30 minutes.
    pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(30 * 60);
    /// The default number of requests in flight per session.
    pub const DEFAULT_MAX_IN_FLIGHT: usize = 64;
}

impl Default for SessionLimits {
    fn default() -> Self {
        Self {
            max_sessions: Self::DEFAULT_MAX_SESSIONS,
            idle_timeout: Self::DEFAULT_IDLE_TIMEOUT,
            max_in_flight: Self::DEFAULT_MAX_IN_FLIGHT,
            poll_after: None,
        }
    }
}
