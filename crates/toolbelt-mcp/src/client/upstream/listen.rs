//! A 2026-07-28 server's tool changes: it sends `notifications/tools/list_changed` only on a
//! `subscriptions/listen` stream the client opened, so one is opened for servers that say
//! their tools may change, and each change wakes the relisting a 2025 server's notification
//! wakes.

use rmcp::model::{ServerNotification, SubscriptionFilter};
use rmcp::{Peer, RoleClient};

use super::Upstream;

/// Ends the listening task when dropped (with the connection it listens on).
pub(super) struct Listening(tokio::task::JoinHandle<()>);

impl Drop for Listening {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Upstream {
    /// Listens for the connected server's tool changes, when it speaks 2026-07-28 and says its
    /// tools may change; `None` otherwise (a 2025 server's changes come as notifications).
    pub(super) fn listen_for_changes(&self, peer: &Peer<RoleClient>) -> Option<Listening> {
        let info = peer.peer_info()?;
        let changes = info.capabilities.tools.as_ref().and_then(|t| t.list_changed).unwrap_or(false);
        if info.protocol_version.has_initialize() || !changes {
            return None;
        }
        let (peer, changed, name) = (peer.clone(), self.handler.tools_changed.clone(), self.name.clone());
        Some(Listening(tokio::spawn(async move {
            let filter = SubscriptionFilter::builder().tools_list_changed().build();
            let mut subscription = match peer.listen(filter).await {
                Ok(subscription) => subscription,
                Err(e) => {
                    tracing::warn!(server = %name, "cannot listen for its tool changes: {e}");
                    return;
                }
            };
            loop {
                match subscription.next().await {
                    Ok(Some(ServerNotification::ToolListChangedNotification(_))) => changed.notify_one(),
                    Ok(Some(_)) => {}
                    Ok(None) => break,
                    Err(e) => {
                        tracing::debug!(server = %name, "its tool changes stream ended: {e}");
                        break;
                    }
                }
            }
        })))
    }
}
