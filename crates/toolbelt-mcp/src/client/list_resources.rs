//! `ListMcpResources`: the resources the upstream servers offer, with their URIs.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
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

/// What ListMcpResources found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ListMcpResourcesOutput {
    /// The resources, server by server.
    pub resources: Vec<ResourceEntry>,
}

/// One resource of an upstream server.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResourceEntry {
    /// The server offering it.
    pub server: String,
    /// Its URI (what ReadMcpResource takes).
    pub uri: String,
    /// Its name.
    pub name: String,
    /// Its media type, when the server says.
    #[serde(rename = "mimeType")]
    pub mime_type: Option<String>,
    /// What it is, when the server says.
    pub description: Option<String>,
}

impl Render for ListMcpResourcesOutput {
    fn render(&self) -> Vec<Content> {
        let lines: Vec<String> = self
            .resources
            .iter()
            .map(|r| {
                let mime = r.mime_type.as_deref().filter(|m| !m.is_empty()).map(|m| format!(", {m}"));
                let about = r.description.as_deref().filter(|d| !d.is_empty()).map(|d| format!(": {d}"));
                format!("{} {} ({}{}){}", r.server, r.uri, r.name, mime.unwrap_or_default(), about.unwrap_or_default())
            })
            .collect();
        vec![Content::text(if lines.is_empty() { "No resources.".to_string() } else { lines.join("\n") })]
    }
}

/// Lists the resources of the upstream MCP servers.
pub struct ListMcpResources(pub Servers);

impl Tool for ListMcpResources {
    type Input = ListMcpResourcesInput;
    type Output = ListMcpResourcesOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(
            "ListMcpResources",
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

    async fn call(&self, input: Self::Input, _cx: ToolContext) -> Result<ListMcpResourcesOutput, ToolError> {
        let servers: Vec<&Arc<Upstream>> = match &input.server {
            Some(name) => vec![self.0.find(name)?],
            None => self.0.connected().collect(),
        };
        let mut resources = Vec::new();
        for server in servers {
            let peer = server.peer().ok_or_else(|| server.unavailable())?;
            let listed = peer.list_all_resources().await.map_err(|e| {
                ToolError::failed(format!("MCP server `{}` could not list resources: {e}", server.name))
            })?;
            resources.extend(listed.into_iter().map(|r| ResourceEntry {
                server: server.name.clone(),
                uri: r.uri,
                name: r.name,
                mime_type: r.mime_type,
                description: r.description,
            }));
        }
        Ok(ListMcpResourcesOutput { resources })
    }
}
