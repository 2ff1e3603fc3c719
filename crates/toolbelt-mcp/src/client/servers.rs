//! The upstream servers, as the resource tools (ListMcpResources, ReadMcpResource) see them.

use std::sync::Arc;

use toolbelt_core::ToolError;

use super::upstream::{Upstream, UpstreamState};

/// The upstream servers, for the resource tools.
#[derive(Clone)]
pub struct Servers(pub(super) Arc<Vec<Arc<Upstream>>>);

impl Servers {
    /// The server named `name`, or an error listing the names there are.
    pub(super) fn find(&self, name: &str) -> Result<&Arc<Upstream>, ToolError> {
        self.0.iter().find(|u| u.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.0.iter().map(|u| u.name.as_str()).collect();
            ToolError::failed(format!("no MCP server is named `{name}`; the servers are: {}", names.join(", ")))
        })
    }

    /// The servers meant to be used: neither disabled nor skipped (connected or not).
    pub(super) fn in_use(&self) -> impl Iterator<Item = &Arc<Upstream>> {
        self.0.iter().filter(|u| !matches!(u.state(), UpstreamState::Disabled | UpstreamState::Skipped { .. }))
    }
}
