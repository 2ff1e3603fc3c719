//! `ListMcpResources` and `ReadMcpResource`: the resources of the upstream servers, as tools.

use std::sync::Arc;

use rmcp::model::ReadResourceRequestParams;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolbelt_core::{
    Access, Category, Content, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
};

use super::convert::content_from_block;
use super::upstream::{Upstream, UpstreamState};

/// The upstream servers, for the resource tools.
#[derive(Clone)]
pub struct Servers(pub(super) Arc<Vec<Arc<Upstream>>>);

impl Servers {
    fn find(&self, name: &str) -> Result<&Arc<Upstream>, ToolError> {
        self.0.iter().find(|u| u.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.0.iter().map(|u| u.name.as_str()).collect();
            ToolError::failed(format!("no MCP server is named `{name}`; the servers are: {}", names.join(", ")))
        })
    }
}

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
            None => self.0.0.iter().filter(|u| matches!(u.state(), UpstreamState::Connected { .. })).collect(),
        };
        let (mut lines, mut all) = (Vec::new(), Vec::new());
        for server in servers {
            let peer = server.peer().ok_or_else(|| server.unavailable())?;
            let resources = peer.list_all_resources().await.map_err(|e| {
                ToolError::failed(format!("MCP server `{}` could not list resources: {e}", server.name))
            })?;
            for r in resources {
                let r = serde_json::to_value(&r).unwrap_or(Value::Null);
                let s = |k: &str| r[k].as_str().unwrap_or_default().to_string();
                let mime = if s("mimeType").is_empty() { String::new() } else { format!(", {}", s("mimeType")) };
                let about = if s("description").is_empty() { String::new() } else { format!(": {}", s("description")) };
                lines.push(format!("{} {} ({}{mime}){about}", server.name, s("uri"), s("name")));
                all.push(json!({"server": server.name, "uri": r["uri"], "name": r["name"], "mimeType": r["mimeType"], "description": r["description"]}));
            }
        }
        let text = if lines.is_empty() { "No resources.".to_string() } else { lines.join("\n") };
        Ok(ToolOutput::text(text).with_structured(json!({ "resources": all })))
    }
}

/// Input of ReadMcpResource.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadMcpResourceInput {
    /// The server offering the resource (as ListMcpResources shows it).
    pub server: String,
    /// The resource's URI.
    pub uri: String,
}

/// Reads one resource of an upstream MCP server.
pub struct ReadMcpResource(pub Servers);

impl Tool for ReadMcpResource {
    type Input = ReadMcpResourceInput;
    const NAME: &'static str = "ReadMcpResource";

    fn spec(&self) -> ToolSpec {
        ToolSpec::new(Self::NAME, "Reads a resource of an MCP server by its URI (see ListMcpResources).")
            .title("Read an MCP resource")
            .aliases(["ReadMcpResourceTool", "read_mcp_resource"])
            .category(Category::Mcp)
            .tags(["mcp"])
            .read_only()
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Network)
    }

    fn access(&self, input: &Self::Input, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().contacts(input.uri.clone()))
    }

    async fn call(&self, input: Self::Input, _cx: ToolContext) -> Result<ToolOutput, ToolError> {
        let server = self.0.find(&input.server)?;
        let peer = server.peer().ok_or_else(|| server.unavailable())?;
        let params: ReadResourceRequestParams = serde_json::from_value(json!({"uri": input.uri}))
            .map_err(|e| ToolError::internal(format!("cannot build the request: {e}")))?;
        let result = peer.read_resource(params).await.map_err(|e| {
            ToolError::failed(format!("MCP server `{}` could not read {}: {e}", server.name, input.uri))
        })?;
        let result = serde_json::to_value(&result).unwrap_or(Value::Null);
        let mut out = ToolOutput::text("");
        out.content.clear();
        for c in result["contents"].as_array().into_iter().flatten() {
            let mime = c["mimeType"].as_str().unwrap_or_default();
            out.content.push(match (c["text"].as_str(), c["blob"].as_str()) {
                (Some(text), _) => Content::text(text),
                (None, Some(blob)) if mime.starts_with("image/") => {
                    Content::Image { data: blob.to_string(), mime_type: mime.to_string() }
                }
                _ => content_from_block(&json!({"type": "resource", "resource": c})),
            });
        }
        if out.content.is_empty() {
            out.content.push(Content::text("(the resource is empty)"));
        }
        Ok(out)
    }
}
