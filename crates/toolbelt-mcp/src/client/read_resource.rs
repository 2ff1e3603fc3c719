//! `ReadMcpResource`: one resource of an upstream server, by its URI.

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use schemars::JsonSchema;
use serde::Deserialize;
use toolbelt_core::{
    Access, Category, Content, PermissionClass, SideEffects, Tool, ToolContext, ToolError, ToolOutput, ToolSpec,
};

use super::convert::content_from_resource;
use super::servers::Servers;

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
        let result = peer.read_resource(ReadResourceRequestParams::new(input.uri.as_str())).await.map_err(|e| {
            ToolError::failed(format!("MCP server `{}` could not read {}: {e}", server.name, input.uri))
        })?;
        let mut out = ToolOutput { content: result.contents.iter().map(content_of).collect(), ..Default::default() };
        if out.content.is_empty() {
            out.content.push(Content::text("(the resource is empty)"));
        }
        Ok(out)
    }
}

/// A resource's text as text, an image as an image, other binary contents described.
fn content_of(contents: &ResourceContents) -> Content {
    match contents {
        ResourceContents::BlobResourceContents { mime_type: Some(mime), blob, .. } if mime.starts_with("image/") => {
            Content::Image { data: blob.clone(), mime_type: mime.clone() }
        }
        other => content_from_resource(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_are_kept_and_other_blobs_described() {
        let blob = |mime: Option<&str>| ResourceContents::BlobResourceContents {
            uri: "file:///x".into(),
            mime_type: mime.map(str::to_string),
            blob: "AAAA".into(),
            meta: None,
        };
        assert_eq!(
            content_of(&blob(Some("image/png"))),
            Content::Image { data: "AAAA".into(), mime_type: "image/png".into() }
        );
        assert_eq!(
            content_of(&blob(Some("application/zip"))),
            Content::text("[binary resource file:///x (application/zip), 4 bytes of base64]")
        );
        assert_eq!(content_of(&ResourceContents::text("hello", "file:///t")), Content::text("hello"));
    }
}
