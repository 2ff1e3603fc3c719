//! `Message`: sends a message to one of the channels the user configured — a webhook, Slack,
//! Discord, Telegram, e-mail, or a file (NanoBot's `message` tool, on toolbelt's settings).
//!
//! The model names a channel, never an address: where a message goes and with which secret
//! is the user's settings' business (`[message.channels.NAME]`, which a project cannot set).
//! Each call is judged as what it reaches: the channel's site (its origin only, since the
//! rest of a webhook's address is its secret) or the file it appends to. `Message` and
//! `Message(ops)` rules allow it, the latter matching the channel's name, never the text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::web::support::channels::{ChannelConfig, Secret};
use crate::web::support::client::Web;
use crate::web::support::send::send;

/// Input of `Message`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageInput {
    /// The channel, by the name the settings give it (`Message` with an unknown name lists
    /// them).
    #[schemars(length(min = 1))]
    pub channel: String,
    /// The message.
    #[schemars(length(min = 1))]
    pub content: String,
    /// For a Telegram channel: another of the chats its settings list, instead of its own;
    /// for a webhook: passed on as `chat_id`.
    pub chat_id: Option<String>,
    /// For an e-mail channel: the subject, instead of the channel's own.
    pub subject: Option<String>,
}

/// The structured result of `Message`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MessageOutput {
    /// The channel it went to.
    pub channel: String,
    /// Its kind: webhook, slack, discord, telegram, email or file.
    pub kind: String,
    /// The HTTP status the service answered with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// What the service answered (cut to 2,000 characters), or where the file now ends.
    pub answer: String,
    /// The id the service gave the message, when it gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
}

impl Render for MessageOutput {
    /// Where it went and what the service said.
    fn render(&self) -> Vec<Content> {
        let status = self.status.map(|s| format!(" (HTTP {s})")).unwrap_or_default();
        let id = self.message_id.as_deref().map(|id| format!(", message id {id}")).unwrap_or_default();
        let answer = self.answer.trim();
        let answer = if answer.is_empty() { String::new() } else { format!(": {answer}") };
        vec![Content::text(format!("Sent to channel `{}` ({}){status}{id}{answer}", self.channel, self.kind))]
    }
}

/// The `Message` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Message;

const DESCRIPTION: &str = "Sends a message to one of the channels the user configured (a chat through Slack, \
Discord or Telegram, a webhook, e-mail, or a notes file): to report a result, ask for attention, or hand something over \
when nobody is watching the session. Name the channel; the addresses and secrets are the user's settings. The \
result says what the service answered; a refusal says why, and nothing was sent.";

impl Tool for Message {
    type Input = MessageInput;
    type Output = MessageOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Message", DESCRIPTION)
            .title("Send a message to a channel")
            .aliases(["message", "send_message_to_channel"])
            .category(Category::Web)
            .tags(["message", "notify", "chat", "slack", "telegram", "webhook"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Network)
            .annotations(Annotations { read_only: false, destructive: false, idempotent: false, open_world: true })
            .rule_field("channel")
            .deferred()
            .search_hint("message notify send slack discord telegram webhook chat alert channel")
    }

    fn access(&self, input: &MessageInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let web = Web::of(cx);
        let channel = channel(&web, &input.channel)?;
        Ok(match channel {
            ChannelConfig::File { path } => Access::exclusive().writes(path.clone()),
            ChannelConfig::Webhook { url, .. } | ChannelConfig::Slack { url } | ChannelConfig::Discord { url } => {
                let address = match url {
                    Secret::Plain(url) => url.clone(),
                    Secret::Env(var) => web.var(var).unwrap_or_default(),
                };
                Access::shared().contacts(origin(&address, &input.channel))
            }
            ChannelConfig::Telegram { api_base, .. } => Access::shared().contacts(origin(api_base, &input.channel)),
            ChannelConfig::Email(mail) => Access::shared().contacts(format!("smtp://{}:{}", mail.host, mail.port)),
        })
    }

    async fn call(&self, input: MessageInput, cx: ToolContext) -> Result<MessageOutput, ToolError> {
        let web = Web::of(&cx);
        let channel = channel(&web, &input.channel)?.clone();
        let sent =
            send(&web, &input.channel, &channel, &input.content, input.chat_id.as_deref(), input.subject.as_deref())
                .await?;
        Ok(MessageOutput {
            channel: input.channel,
            kind: channel.kind().to_string(),
            status: sent.status,
            answer: sent.answer,
            message_id: sent.message_id,
        })
    }
}

/// The channel named `name`, or an error listing those there are.
fn channel<'w>(web: &'w Web, name: &str) -> Result<&'w ChannelConfig, ToolError> {
    let channels = &web.config().channels;
    channels.get(name).ok_or_else(|| {
        if channels.is_empty() {
            ToolError::failed(
                "no message channels are configured; the user adds them to their settings \
                 (~/.config/toolbelt/config.toml), e.g. [message.channels.ops] kind = \"slack\" url_env = \
                 \"SLACK_WEBHOOK_URL\"",
            )
        } else {
            let names: Vec<String> = channels.iter().map(|(name, c)| format!("`{name}` ({})", c.kind())).collect();
            ToolError::failed(format!("no channel `{name}`; the configured ones are {}", names.join(", ")))
        }
    })
}

/// The scheme, host and port of `address`, which is all a judgement or an audit record sees
/// of it (the rest may be a secret).
fn origin(address: &str, name: &str) -> String {
    match url::Url::parse(address.trim()) {
        Ok(url) => url.origin().ascii_serialization(),
        Err(_) => format!("the address of channel `{name}`"),
    }
}
