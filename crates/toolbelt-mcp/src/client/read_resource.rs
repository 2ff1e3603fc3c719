//! `ReadMcpResource`: one resource of an upstream server, by its URI.

use rmcp::model::{ReadResourceRequestParams, ResourceContents};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError, ToolSpec,
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

/// What ReadMcpResource read. The parts go to the model as content (text as text, images as
/// images); the structured result lists them, each text part with its text (a binary part is
/// described, its base64 left to the content).
#[derive(Debug, Serialize, JsonSchema)]
pub struct ReadMcpResourceOutput {
    /// The server that was read.
    pub server: String,
    /// The resource's URI.
    pub uri: String,
    /// The parts of the resource, in order.
    pub parts: Vec<ResourcePart>,
    /// The parts as the model reads them.
    #[serde(skip)]
    content: Vec<Content>,
}

/// One part of a resource.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResourcePart {
    /// The part's URI.
    pub uri: String,
    /// Its media type, when the server says.
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Whether it is text or binary (base64).
    pub kind: PartKind,
    /// Characters of text, or of base64 for a binary part.
    pub size: usize,
    /// The text, for a text part.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

/// Text or binary.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartKind {
    /// Text.
    Text,
    /// Binary, base64-encoded.
    Blob,
}

impl Render for ReadMcpResourceOutput {
    fn render(&self) -> Vec<Content> {
        if self.content.is_empty() {
            return vec![Content::text("(the resource is empty)")];
        }
        self.content.clone()
    }
}

/// Reads one resource of an upstream MCP server.
pub struct ReadMcpResource(pub Servers);

impl Tool for ReadMcpResource {
    type Input = ReadMcpResourceInput;
    type Output = ReadMcpResourceOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ReadMcpResource", "Reads a resource of an MCP server by its URI (see ListMcpResources).")
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

    async fn call(&self, input: Self::Input, _cx: ToolContext) -> Result<ReadMcpResourceOutput, ToolError> {
        let server = self.0.find(&input.server)?;
        let peer = server.peer().ok_or_else(|| server.unavailable())?;
        let result = peer.read_resource(ReadResourceRequestParams::new(input.uri.as_str())).await.map_err(|e| {
            ToolError::failed(format!("MCP server `{}` could not read {}: {e}", server.name, input.uri))
        })?;
        let parts = result.contents.iter().map(part_of).collect();
        let content = result.contents.iter().map(content_of).collect();
        Ok(ReadMcpResourceOutput { server: input.server, uri: input.uri, parts, content })
    }
}

/// What the structured result says of one part.
fn part_of(contents: &ResourceContents) -> ResourcePart {
    match contents {
        ResourceContents::TextResourceContents { uri, mime_type, text, .. } => ResourcePart {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            kind: PartKind::Text,
            size: text.chars().count(),
            text: Some(text.clone()),
        },
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => ResourcePart {
            uri: uri.clone(),
            mime_type: mime_type.clone(),
            kind: PartKind::Blob,
            size: blob.len(),
            text: None,
        },
        // A kind of contents a later revision adds: described as binary, of unknown size.
        _ => ResourcePart { uri: String::new(), mime_type: None, kind: PartKind::Blob, size: 0, text: None },
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
