//! The conversation as the loop keeps it, independent of any provider's wire shape: each
//! provider turns it into its own request and its stream back into a [`Reply`].

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbelt_core::Content;

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The person, the parent agent, or tool results going back to the model.
    User,
    /// The model.
    Assistant,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// A tool call the model made.
    ToolUse {
        /// The call's id, as the model gave it (results must carry it back).
        id: String,
        /// The tool's name.
        name: String,
        /// Its input.
        input: Value,
    },
    /// The result of a tool call, going back to the model.
    ToolResult {
        /// The id of the call it answers.
        id: String,
        /// What the tool returned (already cut to the output budget).
        content: Vec<Content>,
        /// Whether it is an error.
        is_error: bool,
    },
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Part::Text { text: text.into() }
    }

    /// The text a provider that takes only text gets for a tool result: its text content,
    /// each image named, an error's text starting with `Error:`.
    pub fn result_text(content: &[Content], is_error: bool) -> String {
        let parts: Vec<String> = content
            .iter()
            .map(|c| match c {
                Content::Text { text } => text.clone(),
                Content::Image { mime_type, data } => format!(
                    "[an image ({mime_type}, {} bytes) is not shown: this provider takes text results only]",
                    data.len() / 4 * 3
                ),
            })
            .collect();
        let text = parts.join("\n");
        if is_error && !text.starts_with("Error") { format!("Error: {text}") } else { text }
    }
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who wrote it.
    pub role: Role,
    /// What it holds, in order.
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message holding one text.
    pub fn user(text: impl Into<String>) -> Self {
        Self { role: Role::User, parts: vec![Part::text(text)] }
    }

    /// All text parts joined by newlines.
    pub fn text(&self) -> String {
        let texts: Vec<&str> = self
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect();
        texts.join("\n")
    }

    /// The tool calls it makes, in order.
    pub fn tool_uses(&self) -> impl Iterator<Item = (&str, &str, &Value)> {
        self.parts.iter().filter_map(|p| match p {
            Part::ToolUse { id, name, input } => Some((id.as_str(), name.as_str(), input)),
            _ => None,
        })
    }
}

/// A tool as a model is shown it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolDef {
    /// Its name.
    pub name: String,
    /// What it does and when to use it.
    pub description: String,
    /// The JSON Schema of its input.
    pub input_schema: Value,
}

/// How the model wants the tools used on one turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolChoice {
    /// The model decides.
    #[default]
    Auto,
    /// No tool calls this turn (the last turn of a run that must answer).
    None,
}

/// One request to a model.
#[derive(Debug, Clone)]
pub struct Request {
    /// The model's name as the provider knows it.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far; it ends with a user message.
    pub messages: Vec<Message>,
    /// The tools the model may call (shared: a run sends the same set every turn).
    pub tools: Arc<[ToolDef]>,
    /// How it may call them.
    pub tool_choice: ToolChoice,
    /// The most tokens the reply may have.
    pub max_tokens: u32,
}

/// Why the model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// It finished its answer.
    EndTurn,
    /// It wants its tool calls run.
    ToolUse,
    /// It hit the token limit: the reply is cut.
    MaxTokens,
    /// It refused (a content filter or a refusal stop).
    Refusal,
    /// Another reason the provider named.
    Other(String),
}

/// Tokens a reply cost, as the provider counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    /// Tokens read.
    pub input_tokens: u64,
    /// Tokens written.
    pub output_tokens: u64,
}

impl Usage {
    /// Adds another reply's usage.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// The model's reply to one [`Request`].
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// Text and tool calls, in the order the model wrote them.
    pub parts: Vec<Part>,
    /// Why it stopped.
    pub stop: StopReason,
    /// What it cost.
    pub usage: Usage,
}

impl Reply {
    /// The reply as an assistant message for the history.
    pub fn into_message(self) -> Message {
        Message { role: Role::Assistant, parts: self.parts }
    }
}

/// What a provider reports while a reply streams in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEvent<'a> {
    /// More text.
    Text(&'a str),
    /// The model started a tool call.
    ToolUse {
        /// The tool's name.
        name: &'a str,
    },
}
