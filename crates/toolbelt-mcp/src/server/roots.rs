//! The client's roots as the session's workspace roots.
//!
//! Roots are deprecated from protocol 2026-07-28 (still served): they are how a client says
//! where the workspace is. Up to 2025-11-25 the server asks for them once the client is
//! initialized, and again when they change; a 2026-07-28 client is asked with its first call
//! (an `input_required` round), once per session.
#![allow(deprecated)]

use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::Root;
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;
use toolbelt_runtime::Session;

/// How long a call waits for the client's answer to `roots/list` before it goes on with the
/// roots the session has (the server's own until then).
pub(super) const ROOTS_WAIT: Duration = Duration::from_secs(2);

/// Whether a `roots/list` request is awaiting its answer. The first request goes out after
/// `notifications/initialized`, and nothing orders the client's first `tools/call` after its
/// answer: a call waits here (bounded by [`ROOTS_WAIT`]) so it resolves paths against the
/// client's workspace rather than the server's.
pub(super) struct RootsGate {
    /// Roots requests expected or in flight.
    pending: watch::Sender<usize>,
}

impl RootsGate {
    pub(super) fn new() -> Self {
        Self { pending: watch::Sender::new(0) }
    }

    /// A roots request is due (the client declared roots, or said they changed).
    pub(super) fn expect(&self) {
        self.pending.send_modify(|n| *n += 1);
    }

    /// A roots request was answered (or failed).
    pub(super) fn settle(&self) {
        self.pending.send_modify(|n| *n = n.saturating_sub(1));
    }

    /// Waits until no roots request is pending, at most `limit`; `false` when it gave up
    /// (then later calls no longer wait for that request; its answer still applies when it
    /// comes).
    pub(super) async fn wait(&self, limit: Duration) -> bool {
        let mut pending = self.pending.subscribe();
        if tokio::time::timeout(limit, pending.wait_for(|n| *n == 0)).await.is_ok() {
            return true;
        }
        self.pending.send_replace(0);
        false
    }
}

/// Asks the client for its roots (when it offers them) and makes them the session's roots
/// ([`apply`]).
pub(super) async fn sync(session: &Session, peer: &Peer<RoleServer>) {
    let offers = peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
    if !offers {
        return;
    }
    match peer.list_roots().await {
        Ok(result) => apply(session, &result.roots),
        Err(e) => tracing::warn!("the client offers roots but listing them failed: {e}"),
    }
}

/// Makes the client's `roots` the session's roots; the cwd moves to the first root when it
/// is not inside any of them. Roots that are not local directories are skipped; with none
/// left, the session keeps its roots.
pub(super) fn apply(session: &Session, roots: &[Root]) {
    let dirs: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| url::Url::parse(&root.uri).ok()?.to_file_path().ok())
        .filter_map(|path| std::fs::canonicalize(path).ok())
        .filter(|path| path.is_dir())
        .collect();
    let Some(first) = dirs.first().cloned() else {
        tracing::warn!("none of the client's roots is a local directory; keeping the session's roots");
        return;
    };
    let state = session.state();
    if !dirs.iter().any(|d| state.cwd().starts_with(d)) {
        state.set_cwd(first);
    }
    tracing::info!(roots = ?dirs, "workspace roots from the client");
    state.set_roots(dirs);
}
