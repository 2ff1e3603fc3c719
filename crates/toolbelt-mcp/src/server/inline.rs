//! Clients without a protocol session (MCP 2026-07-28): which runtime session their requests
//! run in, and how it starts.
//!
//! Up to 2025-11-25 a client opens a session with `initialize`, and everything a session
//! keeps — the files read (Edit needs a Read first), the working directory, background tasks,
//! the grants a person gave — lives in the runtime session of that MCP session. From
//! 2026-07-28 there is no `initialize` and no session id; each request says who it is in its
//! own `_meta`. What still holds the state, then (see also `docs/design.md`):
//!
//! * **stdio**: the connection. One process serves one client, so the connection's session
//!   serves all its requests as an initialized session's would; it starts (SessionStart hooks)
//!   with its first request.
//! * **Streamable HTTP**: what the request can prove, which is the bearer token it presented
//!   (or none, on a loopback server without a token). Requests with the same token share one
//!   session ([`InlineSessions`]), started with the first of them and ended when the server
//!   stops. Two clients given the same token share its state, as two terminals of the same
//!   user share a shell's history; a client that must be kept apart needs a token (and server)
//!   of its own.
//! * Server-minted handles stay what they were: a background task's id is read with
//!   `TaskOutput` from any request of the session.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::{RequestContext, SubscriptionContext};
use rmcp::{ErrorData as McpError, RoleServer};
use tokio::sync::watch;
use toolbelt_runtime::{ClientInfo, EndReason, Runtime, Session, StartSource, Transport};

use super::McpServer;
use crate::http::HttpClient;
use crate::team::SharedSeat;

/// Whether `context`'s request speaks 2026-07-28 or later (no `initialize`; who the client is
/// comes with each request; questions go back as `input_required` results).
pub(super) fn is_inline(context: &RequestContext<RoleServer>) -> bool {
    context.protocol_version().is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
}

/// Whether `context`'s request belongs to no protocol session: a 2026-07-28 one, an HTTP one
/// without `Mcp-Session-Id` (rmcp serves a request whose `_meta` is complete so, whatever its
/// version), or one on a stdio connection no `initialize` opened.
/// `inline`: whether it is a 2026-07-28 one ([`is_inline`]).
pub(super) fn is_sessionless(context: &RequestContext<RoleServer>, inline: bool) -> bool {
    if inline {
        return true;
    }
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => !parts.headers.contains_key("mcp-session-id"),
        None => context.peer.peer_info().is_none(),
    }
}

/// The methods 2026-07-28 removed. rmcp refuses most of them itself when they are well formed;
/// these are found here when their params are not (and `logging/setLevel`, which this server
/// still serves to sessions opened with `initialize`).
const REMOVED: [&str; 5] = ["initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"];

/// The refusal of `method` in a 2026-07-28 request, when that revision removed it: method not
/// found (HTTP 404), saying what replaced it.
pub(super) fn removed(method: &str) -> Option<McpError> {
    REMOVED.contains(&method).then(|| {
        let instead = match method {
            "initialize" => {
                "the client says who it is in each request's `_meta`; `server/discover` tells what the server speaks"
            }
            "logging/setLevel" => {
                "a request asks for log messages with `io.modelcontextprotocol/logLevel` in its `_meta`"
            }
            "ping" => "any request shows the server is up",
            _ => "`subscriptions/listen` subscribes to changes",
        };
        McpError::new(
            ErrorCode::METHOD_NOT_FOUND,
            format!("`{method}` is not part of MCP 2026-07-28, which this request speaks: {instead}"),
            None,
        )
    })
}

static SESSIONS: AtomicU64 = AtomicU64::new(0);

impl McpServer {
    /// A fresh session, with the server's cwd and roots.
    pub(super) fn new_seat(&self) -> Seat {
        let options = &self.inner.options;
        let millis =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis()).unwrap_or(0);
        let id = format!("mcp-{millis}-{}-{}", std::process::id(), SESSIONS.fetch_add(1, Ordering::Relaxed));
        let session =
            Session::new(id.clone(), options.cwd.clone(), options.roots.clone(), options.sessions_dir.join(&id));
        Seat::new(session)
    }

    /// The session of requests without a protocol session that present token `token` (its
    /// id). On a team it has the same id on every replica (request states are bound to it),
    /// and its state is kept in shared storage too.
    pub(super) fn new_inline_seat(&self, token: Option<&str>) -> Seat {
        if self.inner.options.team.is_none() {
            return self.new_seat();
        }
        let owner = format!("token-{}", token.unwrap_or("none"));
        let options = &self.inner.options;
        let session =
            Session::new(owner.clone(), options.cwd.clone(), options.roots.clone(), options.sessions_dir.join(&owner));
        Seat::new(session).shared(crate::team::SharedSeat::new(owner))
    }
}

impl McpServer {
    /// On a team, takes into `seat`'s session what other replicas changed of its state (a
    /// session without a protocol session; others have nothing to take).
    pub(super) async fn pull_shared(&self, seat: &Seat) -> Result<(), McpError> {
        let (Some(team), Some(shared)) = (self.inner.options.team.as_deref(), seat.shared_seat()) else {
            return Ok(());
        };
        let changed = Box::pin(team.pull(shared, seat.session().state())).await?;
        if changed.iter().any(|k| k == <toolbelt_core::LoadedTools as toolbelt_core::SessionSlot>::KEY) {
            seat.tools_loaded();
        }
        Ok(())
    }

    /// On a team, writes what a call changed of `seat`'s session's state; `Err` says why it
    /// could not.
    pub(super) async fn push_shared(&self, seat: &Seat) -> Result<(), String> {
        match (self.inner.options.team.as_deref(), seat.shared_seat()) {
            (Some(team), Some(shared)) => Box::pin(team.push(shared, seat.session().state())).await,
            _ => Ok(()),
        }
    }
}

/// A runtime session, and what the MCP side keeps beside it.
pub(crate) struct Seat {
    session: Arc<Session>,
    /// Bumped when a call loads deferred tools (`ToolSearch`): the session's tool list changed.
    loaded: watch::Sender<u64>,
    /// Set when the session's start began; true once its SessionStart hooks have run.
    started: OnceLock<watch::Receiver<bool>>,
    /// Whether the session has its client's roots (a 2026-07-28 client is asked for them
    /// with its first call).
    roots_known: AtomicBool,
    /// On a team, for a session without a protocol session: its state as shared storage
    /// holds it ([`crate::team`]).
    shared: Option<SharedSeat>,
}

impl Seat {
    pub(super) fn new(session: Session) -> Self {
        Self {
            session: Arc::new(session),
            loaded: watch::Sender::new(0),
            started: OnceLock::new(),
            roots_known: AtomicBool::new(false),
            shared: None,
        }
    }

    /// The seat, its state kept in a team's shared storage too.
    pub(super) fn shared(mut self, shared: SharedSeat) -> Self {
        self.shared = Some(shared);
        self
    }

    /// Its state in a team's shared storage, if kept there.
    pub(super) fn shared_seat(&self) -> Option<&SharedSeat> {
        self.shared.as_ref()
    }

    /// The runtime session.
    pub(super) fn session(&self) -> &Arc<Session> {
        &self.session
    }

    /// Whether the session has its client's roots.
    pub(super) fn roots_known(&self) -> bool {
        self.roots_known.load(Ordering::Acquire)
    }

    /// The session has its client's roots.
    pub(super) fn roots_learned(&self) {
        self.roots_known.store(true, Ordering::Release);
    }

    /// Says the session's tool list changed (a call loaded tools).
    pub(super) fn tools_loaded(&self) {
        self.loaded.send_modify(|n| *n += 1);
    }

    /// Changes of the session's own tool list.
    pub(super) fn loaded_changes(&self) -> watch::Receiver<u64> {
        self.loaded.subscribe()
    }

    /// Starts the session once: says who its client is and runs the SessionStart hooks, then
    /// returns when they have run. The hooks run in a task of their own, so a first request
    /// that is cancelled meanwhile does not make the next one run them again.
    pub(super) async fn start(
        &self,
        runtime: &Arc<Runtime>,
        context: &RequestContext<RoleServer>,
        http: Option<&HttpClient>,
    ) {
        let mut started = self
            .started
            .get_or_init(|| {
                let (name, version) = match context.client_info() {
                    Some(info) => (info.name, info.version),
                    None => ("unknown".to_string(), String::new()),
                };
                let transport = if http.is_some() { Transport::Http } else { Transport::Stdio };
                let mut client = ClientInfo::mcp(transport, &name, &version);
                if let Some(http) = http {
                    client.peer = http.peer.map(|p| p.to_string());
                    client.token_id.clone_from(&http.token_id);
                }
                self.session.set_client(client);
                let (done, started) = watch::channel(false);
                let (runtime, session) = (Arc::clone(runtime), Arc::clone(&self.session));
                tokio::spawn(async move {
                    runtime.start_session(&session, StartSource::Startup).await;
                    done.send_replace(true);
                });
                started
            })
            .clone();
        // A start whose task ended without saying so (it panicked) counts as done.
        let _ = started.wait_for(|done| *done).await;
    }

    /// Claims the session's start for `initialize`, which runs it itself; `false` when the
    /// session was started already (by an earlier request without `initialize`).
    pub(super) fn start_by_initialize(&self) -> bool {
        self.started.set(watch::channel(true).1).is_ok()
    }

    /// Ends the session (SessionEnd hooks, its background tasks killed), in the background.
    pub(super) fn end(&self, runtime: &Arc<Runtime>) {
        if let Ok(handle) = tokio::runtime::Handle::try_current() {
            let (runtime, session) = (Arc::clone(runtime), Arc::clone(&self.session));
            handle.spawn(async move { runtime.end_session(&session, EndReason::Exit).await });
        }
    }
}

/// The sessions of HTTP requests without a protocol session, one per bearer token.
#[derive(Default)]
pub struct InlineSessions {
    by_token: Mutex<HashMap<String, Arc<Seat>>>,
    /// The runtime, to end the sessions with (set with the first one).
    runtime: Mutex<Option<Arc<Runtime>>>,
}

impl std::fmt::Debug for InlineSessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.by_token.lock().map(|m| m.len()).unwrap_or(0);
        f.debug_struct("InlineSessions").field("sessions", &n).finish()
    }
}

impl InlineSessions {
    /// The session of the requests with token `token_id` (`None`: no token), made with `new`
    /// the first time.
    pub(super) fn seat(&self, runtime: &Arc<Runtime>, token_id: Option<&str>, new: impl FnOnce() -> Seat) -> Arc<Seat> {
        let key = token_id.unwrap_or_default().to_string();
        let mut by_token = self.by_token.lock().unwrap_or_else(PoisonError::into_inner);
        let seat = by_token.entry(key).or_insert_with(|| Arc::new(new()));
        self.runtime.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(|| Arc::clone(runtime));
        Arc::clone(seat)
    }
}

impl Drop for InlineSessions {
    fn drop(&mut self) {
        let runtime = self.runtime.get_mut().unwrap_or_else(PoisonError::into_inner).take();
        let seats = std::mem::take(self.by_token.get_mut().unwrap_or_else(PoisonError::into_inner));
        if let Some(runtime) = runtime {
            for seat in seats.values() {
                seat.end(&runtime);
            }
        }
    }
}

/// Announces every change of the registry's tools and of the tools `seat`'s session loaded
/// on `subscription`, until it is cancelled or the client is gone.
pub(super) async fn listen(runtime: &Runtime, seat: &Seat, subscription: &SubscriptionContext) {
    let mut registry = runtime.registry().subscribe();
    let mut loaded = seat.loaded_changes();
    loop {
        tokio::select! {
            changed = registry.changed() => if changed.is_err() { return },
            changed = loaded.changed() => if changed.is_err() { return },
            () = subscription.cancelled() => return,
        }
        registry.mark_unchanged();
        loaded.mark_unchanged();
        if let Err(e) = subscription.sink().notify_tool_list_changed().await {
            tracing::debug!("could not announce the changed tool list: {e}");
            return;
        }
    }
}
