//! Sending one message to one channel, over each service's own API: a generic JSON webhook,
//! Slack's and Discord's incoming webhooks, Telegram's Bot API, e-mail over SMTP
//! ([`super::email`]), or a file appended to.
//!
//! A channel's address may carry its secret (a Slack webhook's path, a Telegram token), so
//! no error here names the address: they name the channel, the service and its answer.

use std::io::Write as _;
use std::path::Path;

use serde_json::{Value, json};
use toolbelt_core::ToolError;

use super::channels::{ChannelConfig, Secret, expand};
use super::client::Web;

/// The longest part of a server's answer kept.
const MAX_ANSWER: usize = 2_000;

/// What a channel did with a message.
#[derive(Debug, Default)]
pub(crate) struct Sent {
    /// The HTTP status, for a channel reached over HTTP.
    pub status: Option<u16>,
    /// The server's answer (cut to 2,000 characters), or where the file now ends.
    pub answer: String,
    /// The id the service gave the message (Telegram's `message_id`).
    pub message_id: Option<String>,
}

/// What one message may hold on a channel that limits it, in characters.
fn limit(channel: &ChannelConfig) -> Option<(usize, &'static str)> {
    match channel {
        ChannelConfig::Discord { .. } => Some((2_000, "Discord")),
        ChannelConfig::Telegram { .. } => Some((4_096, "Telegram")),
        ChannelConfig::Slack { .. } => Some((40_000, "Slack")),
        _ => None,
    }
}

/// Sends `content` to channel `name`.
pub(crate) async fn send(
    web: &Web,
    name: &str,
    channel: &ChannelConfig,
    content: &str,
    chat_id: Option<&str>,
    subject: Option<&str>,
) -> Result<Sent, ToolError> {
    if let Some((max, service)) = limit(channel) {
        let chars = content.chars().count();
        if chars > max {
            return Err(ToolError::failed(format!(
                "the message is {chars} characters; {service} takes at most {max} in one message (channel `{name}`). \
                 Shorten it, or send it in parts of at most {max} characters"
            )));
        }
    }
    let secret = |s: &Secret| -> Result<String, ToolError> {
        match s {
            Secret::Plain(v) => Ok(v.clone()),
            Secret::Env(var) => web.var(var).map(|v| v.trim().to_string()).ok_or_else(|| unset(name, var)),
        }
    };
    match channel {
        ChannelConfig::File { path } => append(name, path, content),
        ChannelConfig::Email(config) => {
            let answer =
                super::email::send(name, config, content, subject, &|v| web.var(v), web.config().timeout).await?;
            Ok(Sent { status: None, answer, message_id: None })
        }
        ChannelConfig::Webhook { url, headers } => {
            let mut body = json!({"channel": name, "content": content});
            if let Some(chat) = chat_id {
                body["chat_id"] = json!(chat);
            }
            let mut expanded = Vec::new();
            for (key, value) in headers {
                let value = expand(value, &|v| web.var(v))
                    .map_err(|e| ToolError::failed(format!("channel `{name}`: header {key}: {e}")))?;
                expanded.push((key.clone(), value));
            }
            let (status, answer) = post(web, name, "the webhook", &secret(url)?, &body, &expanded).await?;
            if !(200..300).contains(&status) {
                return Err(refused(name, "the webhook", status, &answer));
            }
            Ok(Sent { status: Some(status), answer, message_id: None })
        }
        ChannelConfig::Slack { url } => {
            let (status, answer) = post(web, name, "Slack", &secret(url)?, &json!({"text": content}), &[]).await?;
            if status != 200 {
                return Err(refused(name, "Slack", status, &answer));
            }
            Ok(Sent { status: Some(status), answer, message_id: None })
        }
        ChannelConfig::Discord { url } => {
            let (status, answer) = post(web, name, "Discord", &secret(url)?, &json!({"content": content}), &[]).await?;
            if !(200..300).contains(&status) {
                let said = serde_json::from_str::<Value>(&answer)
                    .ok()
                    .and_then(|v| v["message"].as_str().map(str::to_string))
                    .unwrap_or(answer);
                return Err(refused(name, "Discord", status, &said));
            }
            Ok(Sent { status: Some(status), answer, message_id: None })
        }
        ChannelConfig::Telegram { token_env, chat_id: default_chat, chats, api_base } => {
            let chat = match chat_id {
                // The recipients are the user's choice: the channel's chat, or one it lists.
                Some(asked) if default_chat.as_deref() == Some(asked) || chats.iter().any(|c| c == asked) => {
                    asked.to_string()
                }
                Some(asked) => {
                    let listed: Vec<&str> = default_chat.iter().chain(chats.iter()).map(String::as_str).collect();
                    return Err(ToolError::failed(format!(
                        "channel `{name}` does not send to chat `{asked}`; its chats are {} (the user lists others \
                         under `chats` in the channel's settings)",
                        if listed.is_empty() { "none".to_string() } else { listed.join(", ") }
                    )));
                }
                None => default_chat.clone().or_else(|| chats.first().cloned()).ok_or_else(|| {
                    ToolError::failed(format!(
                        "channel `{name}` has no chat_id in the settings; the user sets chat_id (the chat's number, \
                         or @channelname) in the channel's settings"
                    ))
                })?,
            };
            let token = web.var(token_env).ok_or_else(|| unset(name, token_env))?;
            let url = format!("{}/bot{}/sendMessage", api_base.trim_end_matches('/'), token.trim());
            let (status, answer) =
                post(web, name, "Telegram", &url, &json!({"chat_id": chat, "text": content}), &[]).await?;
            let reply: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
            if reply["ok"] != true {
                let said = reply["description"].as_str().map_or(answer.clone(), str::to_string);
                return Err(refused(name, "Telegram", status, &said));
            }
            let id = reply["result"]["message_id"].as_i64().map(|id| id.to_string());
            Ok(Sent { status: Some(status), answer, message_id: id })
        }
    }
}

fn unset(name: &str, var: &str) -> ToolError {
    ToolError::failed(format!(
        "channel `{name}` takes its secret from ${var}, which is not set in toolbelt's environment; set it where \
         toolbelt starts (the MCP host's env, the shell) and try again"
    ))
}

fn refused(name: &str, service: &str, status: u16, answer: &str) -> ToolError {
    let answer = answer.trim();
    let said = if answer.is_empty() { "no explanation".to_string() } else { format!("`{answer}`") };
    ToolError::failed(format!(
        "{service} refused the message for channel `{name}` (HTTP {status}): {said}. Nothing was sent; check the \
         channel's settings (its address or token may be wrong or revoked)"
    ))
}

/// POSTs `body` as JSON; the status and the answer. No redirect is followed.
async fn post(
    web: &Web,
    name: &str,
    service: &str,
    url: &str,
    body: &Value,
    headers: &[(String, String)],
) -> Result<(u16, String), ToolError> {
    let parsed = url::Url::parse(url).map_err(|_| {
        ToolError::failed(format!(
            "channel `{name}`: its address is not a URL; check the variable or url that gives it"
        ))
    })?;
    let client = web.endpoint_client()?;
    let mut request = client.post(parsed).json(body);
    for (key, value) in headers {
        request = request.header(key, value);
    }
    let timeout = web.config().timeout;
    let response = tokio::time::timeout(timeout, request.send())
        .await
        .map_err(|_| {
            ToolError::failed(format!(
                "{service} did not answer within {} (channel `{name}`); the message may not have been sent",
                toolbelt_core::human_duration(timeout)
            ))
        })?
        // The address may hold the channel's secret: never in an error.
        .map_err(|e| ToolError::failed(format!("cannot reach {service} for channel `{name}`: {}", e.without_url())))?;
    let status = response.status().as_u16();
    let text = response.text().await.unwrap_or_default();
    let answer: String = text.chars().take(MAX_ANSWER).collect();
    Ok((status, answer))
}

/// Appends the message to the file, as one write: a line with the time, the message, an
/// empty line.
fn append(name: &str, path: &Path, content: &str) -> Result<Sent, ToolError> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let stamp = toolbelt_core::time::rfc3339_millis(crate::sqlite::now_ms());
    let block = format!("--- {stamp} ---\n{}\n\n", content.trim_end());
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| {
            ToolError::failed(format!("channel `{name}`: cannot open {} to append to it: {e}", path.display()))
        })?;
    crate::fs::regular::check_regular(&file)
        .map_err(|e| ToolError::failed(format!("channel `{name}`: {}: {e}", path.display())))?;
    file.write_all(block.as_bytes())
        .map_err(|e| ToolError::failed(format!("channel `{name}`: cannot append to {}: {e}", path.display())))?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    Ok(Sent { status: None, answer: format!("appended to {} (now {size} bytes)", path.display()), message_id: None })
}
