//! What a tool hands back.

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// One piece of model-facing content. Serializes in the MCP shape
/// (`{"type":"text","text":…}`, `{"type":"image","data":…,"mimeType":…}`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64 of the image bytes.
        data: String,
        /// `image/png`, `image/jpeg`, …
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// Text content.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// The text, when this is text content.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

/// A tool's result: content for the model, optional structured JSON, and whether it reports
/// a failure the tool chose to describe with content (a command's non-zero exit stays a
/// normal result; this flag is for results that are errors yet carry output).
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct ToolOutput {
    /// Model-facing content, in order.
    pub content: Vec<Content>,
    /// Structured result matching the tool's output schema, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// Whether this output describes a failure.
    pub is_error: bool,
}

impl ToolOutput {
    /// A result of one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self { content: vec![Content::text(text)], structured: None, is_error: false }
    }

    /// Attaches a structured result.
    pub fn with_structured(mut self, value: Value) -> Self {
        self.structured = Some(value);
        self
    }

    /// Marks the output as describing a failure.
    pub fn into_error(mut self) -> Self {
        self.is_error = true;
        self
    }

    /// All text blocks joined by newlines.
    pub fn joined_text(&self) -> String {
        let texts: Vec<&str> = self.content.iter().filter_map(Content::as_text).collect();
        texts.join("\n")
    }
}

/// How a tool's typed result reads to the model: the one place a tool turns its result into
/// content. The structured result is the same value serialized, so text and structure
/// cannot tell different stories.
pub trait Render {
    /// The model-facing content, in order.
    fn render(&self) -> Vec<Content>;

    /// [`Render::render`], consuming the result: what the runtime calls, once the structured
    /// result is taken. A result holding a large text hands it over instead of copying it;
    /// whatever it returns is what `render` returns.
    fn into_content(self) -> Vec<Content>
    where
        Self: Sized,
    {
        self.render()
    }

    /// Whether the result describes a failure the tool reports with content (a command that
    /// timed out, with what it printed before). Most results never do.
    fn is_error(&self) -> bool {
        false
    }
}

/// A result that is one text and nothing more, for tools with nothing to structure (test
/// doubles, simple tools of embedders). Its structured form is `{"text": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct TextOutput {
    /// The text.
    pub text: String,
}

impl TextOutput {
    /// A text result.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }
}

impl Render for TextOutput {
    fn render(&self) -> Vec<Content> {
        vec![Content::text(&self.text)]
    }
}
