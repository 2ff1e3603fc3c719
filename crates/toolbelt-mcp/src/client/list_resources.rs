//! `ListMcpResources`: the resources the upstream servers offer, with their URIs.
//!
//! Servers are asked together, and one that offers no resources (it does not declare the
//! capability, or answers `-32601`), is not connected or fails to list them is named with
//! why, beside what the others offer: one server never empties the whole answer.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
};

use rmcp::ServiceError;
use rmcp::model::ErrorCode;

use super::servers::Servers;
use super::upstream::{Upstream, UpstreamState};

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
    /// The servers that listed none, and why (no resources, not connected, an error).
    pub without: Vec<ServerWithout>,
}

/// A server that listed no resources.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ServerWithout {
    /// The server.
    pub server: String,
    /// Why (`offers no resources`, `is not connected (…)`, `could not list its resources: …`).
    pub reason: String,
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
        let mut text = if lines.is_empty() { "No resources.".to_string() } else { lines.join("\n") };
        for without in &self.without {
            text.push_str(&format!("\n{} {}", without.server, without.reason));
        }
        vec![Content::text(text)]
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

    fn access(&self, input: &Self::Input, _cx: &ToolContext) -> Result<Access, ToolError> {
        let servers: Vec<String> = match &input.server {
            Some(name) => vec![format!("`{name}`")],
            None => self.0.in_use().map(|u| format!("`{}`", u.name)).collect(),
        };
        let which = match servers.len() {
            1 => format!("the MCP server {}", servers[0]),
            _ => format!("the MCP servers {}", servers.join(", ")),
        };
        Ok(Access::shared().reaching(format!("asks {which} for the resources they offer")))
    }

    async fn call(&self, input: Self::Input, _cx: ToolContext) -> Result<ListMcpResourcesOutput, ToolError> {
        let servers: Vec<&Arc<Upstream>> = match &input.server {
            Some(name) => {
                let server = self.0.find(name)?;
                server.peer().ok_or_else(|| server.unavailable())?;
                vec![server]
            }
            None => self.0.in_use().collect(),
        };
        let listed = futures_util::future::join_all(servers.iter().map(|s| resources_of(s))).await;
        let mut out = ListMcpResourcesOutput { resources: Vec::new(), without: Vec::new() };
        for (server, listed) in servers.iter().zip(listed) {
            match listed {
                Ok(listed) => out.resources.extend(listed.into_iter().map(|r| ResourceEntry {
                    server: server.name.clone(),
                    uri: r.uri,
                    name: r.name,
                    mime_type: r.mime_type,
                    description: r.description,
                })),
                Err(reason) => out.without.push(ServerWithout { server: server.name.clone(), reason }),
            }
        }
        Ok(out)
    }
}

/// The resources of one server, or why it has none to give.
async fn resources_of(server: &Upstream) -> Result<Vec<rmcp::model::Resource>, String> {
    let Some(peer) = server.peer() else {
        return Err(match server.state() {
            UpstreamState::Failed { error } => format!("is not connected ({error})"),
            UpstreamState::NeedsLogin { .. } => {
                format!("waits for a sign-in: ask the user to run `toolbelt mcp-servers login {}`", server.name)
            }
            _ => "is not connected yet".to_string(),
        });
    };
    // A server that does not declare resources has none: not asked.
    if peer.peer_info().is_some_and(|info| info.capabilities.resources.is_none()) {
        return Err(NONE.into());
    }
    match peer.list_all_resources().await {
        Ok(listed) => Ok(listed),
        Err(ServiceError::McpError(e)) if e.code == ErrorCode::METHOD_NOT_FOUND => Err(NONE.into()),
        Err(e) => Err(format!("could not list its resources: {e}")),
    }
}

/// What is said of a server without resources.
const NONE: &str = "offers no resources";
