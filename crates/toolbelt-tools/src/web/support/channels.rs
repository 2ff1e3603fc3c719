//! The channels `Message` sends to, as the user's settings define them
//! (`[message.channels.NAME]`), and their checks.
//!
//! ```toml
//! [message.channels.ops]
//! kind = "slack"                      # an incoming webhook; also "discord"
//! url_env = "SLACK_WEBHOOK_URL"       # the variable holding the webhook's URL (it is the secret)
//!
//! [message.channels.ci]
//! kind = "webhook"                    # a JSON POST: {"channel", "content", "chat_id"?}
//! url = "https://hooks.example.com/agent"
//! headers = { Authorization = "Bearer ${HOOK_TOKEN}" }   # ${VAR} from the environment
//!
//! [message.channels.me]
//! kind = "telegram"
//! token_env = "TELEGRAM_BOT_TOKEN"
//! chat_id = "123456789"               # the default
//! chats = ["-100222333"]              # others a call may name (no other chat is reachable)
//!
//! [message.channels.mail]
//! kind = "email"                      # SMTP; STARTTLS required unless security says otherwise
//! host = "smtp.example.com"
//! port = 587                          # the default for starttls (465 for "tls")
//! username_env = "SMTP_USER"
//! password_env = "SMTP_PASSWORD"
//! from = "Agent <agent@example.com>"
//! to = ["me@example.com"]
//!
//! [message.channels.notes]
//! kind = "file"
//! path = "~/notes/from-the-agent.md"  # appended to
//! ```
//!
//! Secrets are never written in the settings: a URL that carries one (Slack's, Discord's) and
//! a bot token are named by the variable that holds them. Only the user's own settings define
//! channels: a project cannot point a message, or the user's secrets, at its own server.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;
use serde_json::Value;

/// Telegram's Bot API, unless a channel names another address (a local Bot API server).
pub const TELEGRAM_API: &str = "https://api.telegram.org";

/// Where a secret is: written in the settings (a URL that carries none), or in a variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Secret {
    /// The value itself.
    Plain(String),
    /// The environment variable holding it.
    Env(String),
}

/// What kind of channel, and how it is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChannelConfig {
    /// A JSON POST of `{"channel", "content", "chat_id"?}` to `url`, with `headers`.
    Webhook {
        /// The address.
        url: Secret,
        /// Headers, values with `${VAR}` read from the environment.
        headers: BTreeMap<String, String>,
    },
    /// A Slack incoming webhook: `{"text": content}`.
    Slack {
        /// The webhook's address (a secret).
        url: Secret,
    },
    /// A Discord webhook: `{"content": content}`.
    Discord {
        /// The webhook's address (a secret).
        url: Secret,
    },
    /// Telegram's Bot API `sendMessage`.
    Telegram {
        /// The variable holding the bot's token.
        token_env: String,
        /// The chat messages go to unless a call names one.
        chat_id: Option<String>,
        /// The other chats a call may name (the model never picks a recipient the user did
        /// not list).
        chats: Vec<String>,
        /// The API's address.
        api_base: String,
    },
    /// A file each message is appended to.
    File {
        /// The file (a leading `~/` is the home directory).
        path: PathBuf,
    },
    /// E-mail over SMTP.
    Email(super::email::EmailConfig),
}

impl ChannelConfig {
    /// The kind's name, as the settings write it.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Webhook { .. } => "webhook",
            Self::Slack { .. } => "slack",
            Self::Discord { .. } => "discord",
            Self::Telegram { .. } => "telegram",
            Self::File { .. } => "file",
            Self::Email(_) => "email",
        }
    }

    /// A channel's table, checked: what is wrong says what to write instead.
    pub fn from_table(value: &Value, home: &std::path::Path) -> Result<Self, String> {
        if value.get("kind").and_then(serde_json::Value::as_str) == Some("email") {
            return super::email::EmailConfig::from_table(value, home).map(Self::Email);
        }
        let table: Table = serde_json::from_value(value.clone()).map_err(|e| {
            format!("{e}; a channel takes kind, url or url_env, headers, token_env, chat_id, chats, api_base, path")
        })?;
        let url = |table: &Table| -> Result<Secret, String> {
            match (&table.url, &table.url_env) {
                (Some(_), Some(_)) => Err("give url or url_env, not both".into()),
                (Some(url), None) => {
                    check_url(url)?;
                    Ok(Secret::Plain(url.clone()))
                }
                (None, Some(var)) => Ok(Secret::Env(variable(var, "url_env")?)),
                (None, None) => Err("give the address: url_env (the variable holding it) or url".into()),
            }
        };
        let only = |allowed: &[&str], table: &Table| -> Result<(), String> {
            let given = [
                ("url", table.url.is_some()),
                ("url_env", table.url_env.is_some()),
                ("headers", !table.headers.is_empty()),
                ("token_env", table.token_env.is_some()),
                ("chat_id", table.chat_id.is_some()),
                ("api_base", table.api_base.is_some()),
                ("path", table.path.is_some()),
                ("chats", !table.chats.is_empty()),
            ];
            match given.iter().find(|(name, set)| *set && !allowed.contains(name)) {
                Some((name, _)) => {
                    Err(format!("a {} channel takes no `{name}` (it takes {})", table.kind, allowed.join(", ")))
                }
                None => Ok(()),
            }
        };
        match table.kind.as_str() {
            "webhook" => {
                only(&["url", "url_env", "headers"], &table)?;
                Ok(Self::Webhook { url: url(&table)?, headers: table.headers.clone() })
            }
            "slack" | "discord" => {
                only(&["url", "url_env"], &table)?;
                if table.url.is_some() {
                    return Err(format!(
                        "a {} webhook's address is its secret: put it in a variable and name it with url_env",
                        table.kind
                    ));
                }
                let url = url(&table)?;
                Ok(if table.kind == "slack" { Self::Slack { url } } else { Self::Discord { url } })
            }
            "telegram" => {
                only(&["token_env", "chat_id", "chats", "api_base"], &table)?;
                let token_env = variable(
                    table.token_env.as_deref().ok_or("give token_env: the variable holding the bot's token")?,
                    "token_env",
                )?;
                let api_base = table.api_base.clone().unwrap_or_else(|| TELEGRAM_API.to_string());
                check_url(&api_base)?;
                Ok(Self::Telegram { token_env, chat_id: table.chat_id.clone(), chats: table.chats.clone(), api_base })
            }
            "file" => {
                only(&["path"], &table)?;
                let path = table.path.as_deref().ok_or("give path: the file messages are appended to")?;
                let path = match path.strip_prefix("~/") {
                    Some(rest) => home.join(rest),
                    None => PathBuf::from(path),
                };
                if !path.is_absolute() {
                    return Err("path must be absolute (or start with ~/)".into());
                }
                Ok(Self::File { path })
            }
            "email" => {
                Err("e-mail channels are not available yet; use a webhook, slack, discord, telegram or file channel"
                    .into())
            }
            other => Err(format!("unknown kind `{other}`: webhook, slack, discord, telegram or file")),
        }
    }
}

/// A channel's table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    kind: String,
    url: Option<String>,
    url_env: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    token_env: Option<String>,
    chat_id: Option<String>,
    #[serde(default)]
    chats: Vec<String>,
    api_base: Option<String>,
    path: Option<String>,
}

fn variable(name: &str, key: &str) -> Result<String, String> {
    let name = name.trim();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "{key} names the variable that holds the secret (e.g. SLACK_WEBHOOK_URL), not the secret itself"
        ));
    }
    Ok(name.to_string())
}

fn check_url(url: &str) -> Result<(), String> {
    match url::Url::parse(url) {
        Ok(u) if matches!(u.scheme(), "http" | "https") && u.host_str().is_some() => Ok(()),
        _ => Err(format!("`{url}` is not an http(s) URL")),
    }
}

/// `${VAR}` in `text` replaced by the variable's value; a variable not set is an error naming
/// it.
pub fn expand(text: &str, var: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after.find('}').ok_or_else(|| format!("`${{` without its `}}` in `{text}`"))?;
        let name = &after[..end];
        out.push_str(&var(name).ok_or_else(|| format!("${name} is not set"))?);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(value: Value) -> Result<ChannelConfig, String> {
        ChannelConfig::from_table(&value, std::path::Path::new("/home/u"))
    }

    #[test]
    fn each_kind_is_read_and_its_mistakes_named() {
        assert_eq!(
            parse(json!({"kind": "slack", "url_env": "SLACK_URL"})).unwrap(),
            ChannelConfig::Slack { url: Secret::Env("SLACK_URL".into()) }
        );
        assert!(parse(json!({"kind": "slack", "url": "https://hooks.slack.com/x"})).unwrap_err().contains("url_env"));
        assert!(parse(json!({"kind": "telegram"})).unwrap_err().contains("token_env"));
        assert!(parse(json!({"kind": "telegram", "token_env": "123:abc"})).unwrap_err().contains("not the secret"));
        assert_eq!(
            parse(json!({"kind": "file", "path": "~/n.md"})).unwrap(),
            ChannelConfig::File { path: "/home/u/n.md".into() }
        );
        assert!(parse(json!({"kind": "file", "path": "n.md"})).unwrap_err().contains("absolute"));
        assert!(parse(json!({"kind": "file", "path": "/n", "url": "https://x"})).unwrap_err().contains("no `url`"));
        assert!(parse(json!({"kind": "pager"})).unwrap_err().contains("unknown kind"));
        assert!(parse(json!({"kind": "webhook", "url": "ftp://x"})).unwrap_err().contains("not an http(s) URL"));
        assert!(parse(json!({"kind": "webhook", "uri": "https://x"})).unwrap_err().contains("unknown field"));
    }

    #[test]
    fn variables_are_expanded_and_a_missing_one_named() {
        let var = |n: &str| (n == "T").then(|| "tok".to_string());
        assert_eq!(expand("Bearer ${T}!", &var).unwrap(), "Bearer tok!");
        assert_eq!(expand("${NOPE}", &var).unwrap_err(), "$NOPE is not set");
    }
}
