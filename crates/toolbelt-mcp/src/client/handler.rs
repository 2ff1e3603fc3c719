//! The client side of one upstream connection: progress routed to the call that asked, the
//! server's word that its tools changed passed to the supervisor, which lists them again, and
//! the workspace roots offered (`roots/list`).
//!
//! Roots are deprecated from protocol 2026-07-28; for the versions this client speaks they are
//! how a server learns where the workspace is.
#![allow(deprecated)]

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::RoleClient;
use rmcp::model::{
    ClientCapabilities, ClientConfig, ErrorData, Implementation, ListRootsResult, ProgressNotificationParam,
    ProgressToken, ProtocolVersion, Root,
};
use rmcp::service::{NotificationContext, RequestContext};
use toolbelt_core::ToolContext;

/// Progress notifications go to the context of the call whose token they carry.
#[derive(Clone, Default)]
pub struct UpstreamHandler {
    routes: Arc<Mutex<HashMap<ProgressToken, ToolContext>>>,
    /// Signalled when the server says its tools changed (a permit is kept when nobody waits,
    /// so a change during a listing is not lost).
    pub(super) tools_changed: Arc<tokio::sync::Notify>,
    /// The workspace roots offered to the server (none: the capability is not declared).
    pub(super) roots: Arc<[PathBuf]>,
}

impl UpstreamHandler {
    /// Routes progress of `token` to `cx` until the guard is dropped.
    pub fn route(&self, token: ProgressToken, cx: ToolContext) -> RouteGuard {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).insert(token.clone(), cx);
        RouteGuard { routes: Arc::clone(&self.routes), token }
    }
}

/// Removes a progress route when the call ends.
pub struct RouteGuard {
    routes: Arc<Mutex<HashMap<ProgressToken, ToolContext>>>,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.token);
    }
}

impl ClientHandler for UpstreamHandler {
    fn get_info(&self) -> ClientConfig {
        let capabilities = if self.roots.is_empty() {
            ClientCapabilities::default()
        } else {
            ClientCapabilities::builder().enable_roots().build()
        };
        ClientConfig::new(capabilities, Implementation::new("toolbelt", env!("CARGO_PKG_VERSION")))
            .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }

    async fn list_roots(&self, _context: RequestContext<RoleClient>) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .roots
            .iter()
            .filter_map(|root| {
                let uri = url::Url::from_directory_path(root).ok()?;
                let name = root.file_name().map(|n| n.to_string_lossy().into_owned());
                Some(match name {
                    Some(name) => Root::new(uri.as_str().trim_end_matches('/')).with_name(name),
                    None => Root::new(uri.as_str().trim_end_matches('/')),
                })
            })
            .collect();
        Ok(ListRootsResult::new(roots))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tools_changed.notify_one();
    }

    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let cx = self.routes.lock().unwrap_or_else(PoisonError::into_inner).get(&params.progress_token).cloned();
        let Some(cx) = cx else { return };
        let fraction = params.total.filter(|t| *t > 0.0).map(|t| params.progress / t);
        let message = params.message.unwrap_or_else(|| match params.total {
            Some(total) => format!("{} of {total}", params.progress),
            None => format!("{}", params.progress),
        });
        cx.progress(message, fraction);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_client_introduces_itself() {
        let expected = serde_json::json!({
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "toolbelt", "version": env!("CARGO_PKG_VERSION")},
        });
        let config = UpstreamHandler::default().get_info();
        assert_eq!(serde_json::to_value(&config).unwrap(), expected);
        let with_roots = UpstreamHandler { roots: Arc::from(vec![PathBuf::from("/w/app")]), ..Default::default() };
        assert_eq!(
            serde_json::to_value(with_roots.get_info()).unwrap()["capabilities"],
            serde_json::json!({"roots": {}})
        );
    }
}
