//! `ListMcpResources`: the resources the upstream servers offer, with their URIs.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use toolbelt_core::{
    Access, Category, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
};

use super::servers::Servers;
use super::upstream::Upstream;

/// Input of ListMcpResources.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListMcpResourcesInput {
    /// Only this server's resources (default: every connected server's).
    pub server: Option<String>,
}

/// Lists the resources of the upstream MCP servers.
pub struct ListMcpResources(pub Servers);

impl Tool for ListMcpResources {
    type Input = ListMcpResourcesInput;
    const NAME: &'static str = "ListMcpResources";

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            Self::NAME,
            "Lists the resources (files, documents, records) the connected MCP servers offer, with their URIs. \
             Read one with ReadMcpResource.",
        )
        .title("List MCP resources")
        .aliases(["ListMcpResourcesTool", "list_mcp_resources"])
        .category(Category::Mcp)
        .tags(["mcp"])
        .read_only()
        .permission(PermissionClass::External)
        .side_effects(SideEffects::Network)
    }

    fn access(&self, _input: &Self::Input, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: Self::Input, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let servers: Vec<&Arc<Upstream>> = match &input.server {
            Some(name) => vec![self.0.find(name)?],
            None => self.0.connected().collect(),
        };
        let (mut lines, mut all) = (Vec::new(), Vec::new());
        for server in servers {
            let peer = server.peer().ok_or_else(|| server.unavailable())?;
            let resources = peer.list_all_resources().await.map_err(|e| {
                ToolError::failed(format!("MCP server `{}` could not list resources: {e}", server.name))
            })?;
            for r in resources {
                let mime = r.mime_type.as_deref().filter(|m| !m.is_empty()).map(|m| format!(", {m}"));
                let about = r.description.as_deref().filter(|d| !d.is_empty()).map(|d| format!(": {d}"));
                lines.push(format!(
                    "{} {} ({}{}){}",
                    server.name,
                    r.uri,
                    r.name,
                    mime.unwrap_or_default(),
                    about.unwrap_or_default()
                ));
                all.push(json!({
                    "server": server.name,
                    "uri": r.uri,
                    "name": r.name,
                    "mimeType": r.mime_type,
                    "description": r.description,
                }));
            }
        }
        let text = if lines.is_empty() { "No resources.".to_string() } else { lines.join("\n") };
        Ok(ToolOutput::text(text).with_structured(json!({ "resources": all })))
    }
}
