//! Resumable SSE streams: what a session's streams carried, kept so a client can come back
//! with `Last-Event-ID` and get what followed (MCP 2025-11-25, "Resumability and
//! Redelivery").
//!
//! rmcp's session keeps the last 16 messages of a request's stream, and only while the call
//! runs: a client whose connection dropped during a call that then finished before it came
//! back (its SDK waits the `retry` hint, 3 s, first) found nothing, and lost the result; and a
//! resume sent again the event it named. [`Replay`] is the event store rmcp writes every event
//! to instead, keeping each message as its JSON text. It names each event itself
//! (`<stream>-<n>`), gives back only what came after the one named, follows the stream live
//! until the call's answer when it is still running, and keeps a finished stream for
//! [`KEEP_FINISHED`].
//!
//! A stream belongs to the session it was delivered to ([`Replay::claim`]): the first event of
//! a stream reaches its client only through that session's response, so the claim always
//! comes first, and a resume naming another session's event is refused like an unknown one.
//!
//! Bounds: per stream at most [`MAX_EVENTS`] events and [`MAX_STREAM_BYTES`] of messages (the
//! oldest progress and log notifications go first; the answer is always kept, as it is the
//! one message a resume is for); per session at most [`MAX_SESSION_BYTES`] over its streams
//! (its oldest finished streams go first); a closed session's streams are dropped with it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::Stream;
use rmcp::transport::streamable_http_server::SessionId;
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::store::{EventStore, EventStoreError, EventStream};
use tokio::sync::watch;

mod kept;

use kept::Kept;

/// Events kept per stream.
pub const MAX_EVENTS: usize = 256;
/// Bytes of messages (as JSON) kept per stream, the answer aside.
pub const MAX_STREAM_BYTES: usize = 4 << 20;
/// Bytes of messages kept per session.
pub const MAX_SESSION_BYTES: usize = 16 << 20;
/// How long a stream whose call has been answered stays resumable.
pub const KEEP_FINISHED: Duration = Duration::from_secs(5 * 60);

/// Why a resume found nothing to give.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The id is not one this server gave, or no longer kept, or another session's.
    #[error("no stream of this session has the event `{0}` (unknown, another session's, or no longer kept)")]
    Unknown(String),
    /// A resume without a session (MCP 2026-07-28's stateless requests): not served.
    #[error("a stream is resumed within its session: send Mcp-Session-Id with Last-Event-ID")]
    NoSession,
}

/// The event store of the HTTP endpoint's sessions.
#[derive(Debug)]
pub struct Replay {
    inner: Mutex<Inner>,
    /// Bumped (under the lock) at each event and each stream dropped, for resumes following
    /// a stream live: one for the store, as followers are few and a wake-up is a look.
    changed: watch::Sender<u64>,
}

impl Default for Replay {
    fn default() -> Self {
        Self { inner: Mutex::default(), changed: watch::Sender::new(0) }
    }
}

#[derive(Debug, Default)]
struct Inner {
    /// Streams by our number.
    streams: HashMap<u64, Log>,
    /// rmcp's names of the streams, to our numbers.
    names: HashMap<String, u64>,
    next_stream: u64,
    /// What each session's streams hold.
    sessions: HashMap<SessionId, Held>,
    /// Finished streams, oldest first, to expire.
    finished: VecDeque<(Instant, u64)>,
}

/// A session's share of the store.
#[derive(Debug, Default)]
struct Held {
    bytes: usize,
    /// Its finished streams, oldest first.
    finished: VecDeque<u64>,
}

#[derive(Debug)]
struct Log {
    name: String,
    owner: Option<SessionId>,
    /// Kept events with their number, oldest first.
    events: VecDeque<(u64, Kept)>,
    next: u64,
    bytes: usize,
    /// When the call's answer came (a request's stream ends there).
    finished: Option<Instant>,
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    inner.lock().unwrap_or_else(PoisonError::into_inner)
}

/// `<stream>-<n>`.
fn event_id(stream: u64, n: u64) -> String {
    format!("{stream}-{n}")
}

fn parse_event_id(id: &str) -> Option<(u64, u64)> {
    let (stream, n) = id.split_once('-')?;
    Some((stream.parse().ok()?, n.parse().ok()?))
}

impl Replay {
    /// No stream yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Notes that the event `event_id` was delivered to session `session`: its stream is that
    /// session's (the first delivery decides; later ones change nothing).
    pub fn claim(&self, event_id: &str, session: &SessionId) {
        let Some((stream, _)) = parse_event_id(event_id) else { return };
        let mut inner = lock(&self.inner);
        inner.own(stream, session);
    }

    /// Forgets the streams of a session that ended.
    pub fn forget(&self, session: &SessionId) {
        let mut inner = lock(&self.inner);
        let gone: Vec<u64> =
            inner.streams.iter().filter(|(_, log)| log.owner.as_ref() == Some(session)).map(|(n, _)| *n).collect();
        for n in gone {
            inner.drop_stream(n);
        }
        inner.sessions.remove(session);
        self.changed.send_modify(|v| *v += 1);
    }

    /// The events of `session`'s stream after `last_event_id`, then, while its call runs,
    /// those that come, until its answer.
    pub fn replay(self: &Arc<Self>, session: &SessionId, last_event_id: &str) -> Result<Follow, ReplayError> {
        let unknown = || ReplayError::Unknown(last_event_id.to_string());
        let (stream, n) = parse_event_id(last_event_id).ok_or_else(unknown)?;
        let mut inner = lock(&self.inner);
        inner.expire();
        let log = inner.streams.get(&stream).ok_or_else(unknown)?;
        if log.owner.as_ref() != Some(session) || n >= log.next {
            return Err(unknown());
        }
        if log.events.front().is_some_and(|(first, _)| *first > n + 1) {
            tracing::warn!(stream, "a resume after event {n} misses events no longer kept (from {} on)", n + 1);
        }
        Ok(Follow { replay: Arc::clone(self), stream, next: n + 1, changed: self.changed.subscribe() })
    }

    fn store(&self, name: &str, event: &ServerSseMessage) -> String {
        let mut inner = lock(&self.inner);
        inner.expire();
        let stream = match inner.names.get(name) {
            Some(n) => *n,
            None => inner.open(name),
        };
        let Some(log) = inner.streams.get_mut(&stream) else { return String::new() };
        let n = log.next;
        log.next += 1;
        let id = event_id(stream, n);
        let kept = Kept::of(event);
        let size = kept.size();
        let answer = kept.is_answer();
        log.events.push_back((n, kept));
        log.bytes += size;
        let freed = log.trim();
        let owner = log.owner.clone();
        if answer {
            let now = Instant::now();
            log.finished = Some(now);
            inner.finished.push_back((now, stream));
        }
        if let Some(owner) = owner {
            let held = inner.sessions.entry(owner.clone()).or_default();
            held.bytes = (held.bytes + size).saturating_sub(freed);
            if answer {
                held.finished.push_back(stream);
            }
            inner.trim_session(&owner);
        }
        self.changed.send_modify(|v| *v += 1);
        id
    }
}

impl Log {
    /// Drops the oldest events other than the answer past the stream's bounds; the bytes
    /// freed.
    fn trim(&mut self) -> usize {
        let mut freed = 0;
        while self.events.len() > MAX_EVENTS || self.bytes > MAX_STREAM_BYTES {
            let Some(at) = self.events.iter().position(|(_, kept)| !kept.is_answer()) else {
                break;
            };
            if let Some((_, kept)) = self.events.remove(at) {
                self.bytes -= kept.size();
                freed += kept.size();
            }
        }
        freed
    }
}

impl Inner {
    /// A new stream named `name` by rmcp. A session's own stream (`<session>:common`) is that
    /// session's from the start; a request's is claimed when delivered.
    fn open(&mut self, name: &str) -> u64 {
        let n = self.next_stream;
        self.next_stream += 1;
        self.names.insert(name.to_string(), n);
        let log =
            Log { name: name.to_string(), owner: None, events: VecDeque::new(), next: 0, bytes: 0, finished: None };
        self.streams.insert(n, log);
        if let Some(session) = name.strip_suffix(":common") {
            self.own(n, &SessionId::from(session));
        }
        n
    }

    /// Makes stream `n` `session`'s, if it is nobody's yet.
    fn own(&mut self, n: u64, session: &SessionId) {
        let Some(log) = self.streams.get_mut(&n) else { return };
        if log.owner.is_some() {
            return;
        }
        log.owner = Some(session.clone());
        let held = self.sessions.entry(session.clone()).or_default();
        held.bytes += log.bytes;
        if log.finished.is_some() {
            held.finished.push_back(n);
        }
    }

    /// Drops the finished streams kept [`KEEP_FINISHED`].
    fn expire(&mut self) {
        while let Some((at, n)) = self.finished.front().copied() {
            if at.elapsed() < KEEP_FINISHED {
                break;
            }
            self.finished.pop_front();
            self.drop_stream(n);
        }
    }

    /// Drops `session`'s oldest finished streams while its streams hold more than
    /// [`MAX_SESSION_BYTES`].
    fn trim_session(&mut self, session: &SessionId) {
        loop {
            let Some(held) = self.sessions.get_mut(session) else { return };
            if held.bytes <= MAX_SESSION_BYTES {
                return;
            }
            let Some(n) = held.finished.pop_front() else { return };
            self.drop_stream(n);
        }
    }

    fn drop_stream(&mut self, n: u64) {
        let Some(log) = self.streams.remove(&n) else { return };
        self.names.remove(&log.name);
        if let Some(owner) = &log.owner
            && let Some(held) = self.sessions.get_mut(owner)
        {
            held.bytes = held.bytes.saturating_sub(log.bytes);
            held.finished.retain(|f| *f != n);
        }
    }
}

/// A resumed stream: the kept events after the one named, then those still to come until
/// the call's answer (or, for the session's own stream, until the session ends).
pub struct Follow {
    replay: Arc<Replay>,
    stream: u64,
    next: u64,
    changed: watch::Receiver<u64>,
}

impl Follow {
    /// The events, as a stream.
    pub fn into_stream(self) -> impl Stream<Item = ServerSseMessage> + Send + Sync + 'static {
        futures_util::stream::unfold(self, |mut follow| async move {
            loop {
                match follow.step() {
                    Step::Event(event) => return Some((event, follow)),
                    Step::End => return None,
                    Step::Wait => {
                        if follow.changed.changed().await.is_err() {
                            return None;
                        }
                    }
                }
            }
        })
    }

    fn step(&mut self) -> Step {
        let inner = lock(&self.replay.inner);
        let Some(log) = inner.streams.get(&self.stream) else { return Step::End };
        self.changed.mark_unchanged();
        let from = self.next;
        for (n, kept) in log.events.iter().filter(|(n, _)| *n >= from) {
            self.next = n + 1;
            if let Some(event) = kept.event(event_id(self.stream, *n)) {
                return Step::Event(event);
            }
        }
        if log.finished.is_some() { Step::End } else { Step::Wait }
    }
}

enum Step {
    Event(ServerSseMessage),
    End,
    Wait,
}

#[async_trait::async_trait]
impl EventStore for Replay {
    async fn store_event(&self, stream_id: &str, event: &ServerSseMessage) -> Result<String, EventStoreError> {
        Ok(self.store(stream_id, event))
    }

    async fn replay_events_after(&self, _last_event_id: &str) -> Result<EventStream, EventStoreError> {
        Err(Box::new(ReplayError::NoSession))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt as _;
    use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, NumberOrString, ServerJsonRpcMessage, ServerResult};

    fn answer(id: i64) -> ServerSseMessage {
        let message = ServerJsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id: NumberOrString::Number(id),
            result: ServerResult::empty(()),
        });
        ServerSseMessage::from_message(message)
    }

    fn priming() -> ServerSseMessage {
        ServerSseMessage::retry(Duration::from_secs(3))
    }

    #[tokio::test]
    async fn a_resume_gets_what_followed_live_and_after_the_answer_and_only_in_its_session() {
        let replay = Arc::new(Replay::new());
        let (mine, other): (SessionId, SessionId) = ("s1".to_string().into(), "s2".to_string().into());
        let first = replay.store("req-a", &priming());
        replay.claim(&first, &mine);
        // Another session cannot resume it, nor can an id never given.
        assert!(replay.replay(&other, &first).is_err());
        assert!(replay.replay(&mine, "99-0").is_err());
        assert!(replay.replay(&mine, &event_id(0, 1)).is_err(), "not given yet");
        // Resumed while the call runs: the answer arrives live, and the stream ends.
        let live = replay.replay(&mine, &first).unwrap().into_stream();
        let store = Arc::clone(&replay);
        let answered = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(50)).await;
            store.store("req-a", &answer(1))
        });
        let got: Vec<ServerSseMessage> = live.collect().await;
        let answer_id = answered.await.unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].event_id.as_deref(), Some(answer_id.as_str()));
        // Resumed after the answer: it is still there, and the named event is not sent again.
        let after: Vec<ServerSseMessage> = replay.replay(&mine, &first).unwrap().into_stream().collect().await;
        assert_eq!(after.len(), 1);
        let none: Vec<ServerSseMessage> = replay.replay(&mine, &answer_id).unwrap().into_stream().collect().await;
        assert!(none.is_empty());
        // The session ends: its streams go with it.
        replay.forget(&mine);
        assert!(replay.replay(&mine, &first).is_err());
    }

    #[test]
    fn a_stream_keeps_its_answer_within_its_bounds() {
        let replay = Replay::new();
        let first = replay.store("req-b", &priming());
        replay.claim(&first, &"s".to_string().into());
        for _ in 0..MAX_EVENTS + 10 {
            replay.store("req-b", &priming());
        }
        replay.store("req-b", &answer(2));
        let inner = lock(&replay.inner);
        let log = inner.streams.values().next().unwrap();
        assert_eq!(log.events.len(), MAX_EVENTS);
        assert!(log.events.back().unwrap().1.is_answer());
    }
}
