//! The client's roots as the session's workspace roots.
//!
//! Roots are deprecated from protocol 2026-07-28, which this server does not negotiate; for
//! the versions it does speak they are how a client says where the workspace is.
#![allow(deprecated)]

use std::path::PathBuf;

use rmcp::{Peer, RoleServer};
use toolbelt_runtime::Session;

/// Asks the client for its roots (when it offers them) and makes them the session's roots;
/// the cwd moves to the first root when it is not inside any of them. Roots that are not
/// local directories are skipped; with none left, the session keeps its roots.
pub(super) async fn sync(session: &Session, peer: &Peer<RoleServer>) {
    let offers = peer.peer_info().is_some_and(|info| info.capabilities.roots.is_some());
    if !offers {
        return;
    }
    let listed = peer.list_roots().await;
    let roots = match listed {
        Ok(result) => result.roots,
        Err(e) => {
            tracing::warn!("the client offers roots but listing them failed: {e}");
            return;
        }
    };
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
