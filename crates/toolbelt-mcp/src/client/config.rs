//! An upstream server's settings: `[mcp.servers.NAME]` in toolbelt's config, or an entry of a
//! project's `.mcp.json`.
//!
//! Both read into the same fields: `command` (with `args`, `env`, `cwd`) for a stdio server,
//! `url` (with `headers`, `bearer_token_env`, `oauth`) for a Streamable HTTP one. A `type` field
//! (`stdio`, `http`, `streamable-http`) may say so too, but `command` or `url` decides. The
//! settings are checked as they are read: [`UpstreamConfig`] holds one transport or the other,
//! never both or neither, and a bad entry is refused with a [`UpstreamConfigError`] saying what
//! to write instead.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;
use url::Url;

use super::oauth::OAuthSettings;

/// Seconds one call may take when `timeout` is not set.
const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Seconds connecting may take when `startup_timeout` is not set.
const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest timeout the settings accept, in seconds (a day).
const MAX_TIMEOUT_SECS: f64 = 86_400.0;

/// How to reach one upstream server, and which of its tools to use.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawConfig")]
pub struct UpstreamConfig {
    /// How it is reached.
    pub transport: UpstreamTransport,
    /// Only these of its tools join the registry (by their names on the server).
    pub enabled_tools: Option<Vec<String>>,
    /// These of its tools never join the registry.
    pub disabled_tools: Vec<String>,
    /// How long one call may take (`timeout`, 60 s unless set).
    pub call_timeout: Duration,
    /// How long connecting and listing its tools may take (`startup_timeout`, 10 s unless
    /// set).
    pub startup_timeout: Duration,
    /// Whether it is used (`enabled = false` keeps it configured but unused).
    pub enabled: bool,
    /// Which revision of MCP to speak (`protocol`).
    pub protocol: UpstreamProtocol,
    /// Where the settings define it (`/p/.toolbelt/config.toml:4`), for messages; set by
    /// whoever read the settings, `None` when unknown.
    pub origin: Option<String>,
}

/// Which revision of MCP toolbelt speaks to an upstream server (`protocol`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UpstreamProtocol {
    /// `auto` (the default): asks with `server/discover` whether it speaks 2026-07-28, and
    /// starts with `initialize` (2025-11-25) when it answers that it does not. A server that
    /// does not answer the question at all is given 10 s before `initialize`.
    #[default]
    Auto,
    /// `2026-07-28`: `server/discover` only; a server that does not speak it fails.
    Modern,
    /// `2025-11-25` or `2025-06-18`: `initialize` with that version, never asking.
    Initialize(&'static str),
}

impl UpstreamProtocol {
    /// How a connection starts under this setting.
    pub(crate) fn lifecycle(self) -> rmcp::service::ClientLifecycleMode {
        use rmcp::service::ClientLifecycleMode;
        let modern = vec![rmcp::model::ProtocolVersion::V_2026_07_28];
        match self {
            Self::Auto => ClientLifecycleMode::Auto { preferred_versions: modern, legacy_version: None },
            Self::Modern => ClientLifecycleMode::Discover { preferred_versions: modern },
            Self::Initialize(_) => ClientLifecycleMode::Initialize,
        }
    }

    /// The setting as written.
    fn parse(text: &str) -> Result<Self, UpstreamConfigError> {
        match text {
            "auto" => Ok(Self::Auto),
            "2026-07-28" => Ok(Self::Modern),
            "2025-11-25" => Ok(Self::Initialize("2025-11-25")),
            "2025-06-18" => Ok(Self::Initialize("2025-06-18")),
            other => Err(UpstreamConfigError::UnsupportedProtocol(other.to_string())),
        }
    }
}

/// How an upstream server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum UpstreamTransport {
    /// A program toolbelt starts, spoken to over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables added to its environment (`${VAR}` expanded when it starts).
        env: BTreeMap<String, String>,
        /// Its working directory (toolbelt's own unless set).
        cwd: Option<PathBuf>,
    },
    /// A Streamable HTTP endpoint.
    Http {
        /// The endpoint.
        url: Url,
        /// Headers sent with every request (`${VAR}` expanded when it connects).
        headers: BTreeMap<String, String>,
        /// The environment variable holding its bearer token.
        bearer_token_env: Option<String>,
        /// How to sign in when it asks for OAuth (`[…oauth]`).
        oauth: OAuthSettings,
    },
}

impl UpstreamTransport {
    /// `stdio` or `http`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
        }
    }

    /// The OAuth settings of an HTTP server that may sign in with OAuth: not one given a
    /// bearer token (`bearer_token_env`, an `Authorization` header), nor one with
    /// `oauth.enabled = false`.
    pub fn oauth(&self) -> Option<&OAuthSettings> {
        match self {
            Self::Http { oauth, bearer_token_env: None, headers, .. }
                if oauth.enabled && !headers.keys().any(|h| h.eq_ignore_ascii_case("authorization")) =>
            {
                Some(oauth)
            }
            _ => None,
        }
    }

    /// The environment variable holding the bearer token, for an HTTP server that has one.
    pub fn bearer_token_env(&self) -> Option<&str> {
        match self {
            Self::Http { bearer_token_env, .. } => bearer_token_env.as_deref(),
            Self::Stdio { .. } => None,
        }
    }
}

impl UpstreamConfig {
    /// A server with these settings and the defaults for the rest: every tool, the default
    /// timeouts, enabled.
    pub fn new(transport: UpstreamTransport) -> Self {
        Self {
            transport,
            enabled_tools: None,
            disabled_tools: Vec::new(),
            call_timeout: DEFAULT_CALL_TIMEOUT,
            startup_timeout: DEFAULT_STARTUP_TIMEOUT,
            enabled: true,
            protocol: UpstreamProtocol::Auto,
            origin: None,
        }
    }

    /// ` (where it is defined)` for a message, or nothing when that is unknown.
    pub fn at(&self) -> String {
        self.origin.as_deref().map(|o| format!(" ({o})")).unwrap_or_default()
    }

    /// Why a tool of the server `server` (by its own name) is left out, as a call of it is
    /// told: the list that leaves it out, and where it is written. `None` when it joins.
    pub fn left_out(&self, server: &str, tool: &str) -> Option<String> {
        let (list, verb) = if self.disabled_tools.iter().any(|t| t == tool) {
            ("disabled_tools", "lists it")
        } else if self.enabled_tools.as_ref().is_some_and(|list| !list.iter().any(|t| t == tool)) {
            ("enabled_tools", "does not list it")
        } else {
            return None;
        };
        Some(format!(
            "`{list}` of MCP server `{server}`{} {verb}; use another tool, or ask the user to change that list",
            self.at()
        ))
    }
}

/// Why an upstream server's settings were refused; each says what to write instead.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UpstreamConfigError {
    /// Both `command` and `url`.
    #[error("give either `command` (stdio) or `url` (HTTP), not both")]
    BothTransports,
    /// Neither `command` nor `url`.
    #[error("give `command` for a stdio server or `url` for an HTTP server")]
    NoTransport,
    /// A `url` that does not parse.
    #[error("`{url}` is not a URL: {reason}")]
    BadUrl {
        /// The `url` as written.
        url: String,
        /// Why it does not parse.
        reason: url::ParseError,
    },
    /// A blank `command`.
    #[error("`command` is empty")]
    EmptyCommand,
    /// A `type` other than `stdio`, `http` or `streamable-http`.
    #[error("transport type `{0}` is not supported; use stdio or http")]
    UnsupportedType(String),
    /// A `timeout` or `startup_timeout` that is not a number of seconds in (0, 86400].
    #[error("timeout {0} is out of range (seconds, up to 86400)")]
    TimeoutOutOfRange(f64),
    /// A `protocol` toolbelt does not speak.
    #[error("protocol `{0}` is not one toolbelt speaks; use auto, 2026-07-28, 2025-11-25 or 2025-06-18")]
    UnsupportedProtocol(String),
    /// An `oauth` table that cannot work (the message says why).
    #[error("{0}")]
    OAuth(String),
}

/// The settings as written, before they are checked.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    bearer_token_env: Option<String>,
    #[serde(default)]
    oauth: Option<OAuthSettings>,
    #[serde(default)]
    enabled_tools: Option<Vec<String>>,
    #[serde(default)]
    disabled_tools: Vec<String>,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    startup_timeout: Option<f64>,
    #[serde(default)]
    enabled: Option<bool>,
    #[serde(default)]
    protocol: Option<String>,
    /// `.mcp.json`'s transport field; implied by `command` or `url`.
    #[serde(default, rename = "type")]
    kind: Option<String>,
}

impl TryFrom<RawConfig> for UpstreamConfig {
    type Error = UpstreamConfigError;

    fn try_from(raw: RawConfig) -> Result<Self, Self::Error> {
        let transport = match (raw.command, raw.url) {
            (Some(_), Some(_)) => return Err(UpstreamConfigError::BothTransports),
            (None, None) => return Err(UpstreamConfigError::NoTransport),
            (None, Some(url)) => UpstreamTransport::Http {
                url: Url::parse(&url).map_err(|reason| UpstreamConfigError::BadUrl { url: url.clone(), reason })?,
                headers: raw.headers,
                bearer_token_env: raw.bearer_token_env,
                oauth: {
                    let oauth = raw.oauth.unwrap_or_default();
                    oauth.check().map_err(UpstreamConfigError::OAuth)?;
                    oauth
                },
            },
            (Some(_), None) if raw.oauth.is_some() => {
                return Err(UpstreamConfigError::OAuth(
                    "`oauth` applies to HTTP servers (`url`); a stdio server is given its credentials in `env`".into(),
                ));
            }
            (Some(command), None) if command.trim().is_empty() => return Err(UpstreamConfigError::EmptyCommand),
            (Some(command), None) => UpstreamTransport::Stdio { command, args: raw.args, env: raw.env, cwd: raw.cwd },
        };
        if let Some(kind) = raw.kind
            && !matches!(kind.as_str(), "stdio" | "http" | "streamable-http")
        {
            return Err(UpstreamConfigError::UnsupportedType(kind));
        }
        Ok(Self {
            transport,
            enabled_tools: raw.enabled_tools,
            disabled_tools: raw.disabled_tools,
            call_timeout: timeout(raw.timeout, DEFAULT_CALL_TIMEOUT)?,
            startup_timeout: timeout(raw.startup_timeout, DEFAULT_STARTUP_TIMEOUT)?,
            enabled: raw.enabled.unwrap_or(true),
            protocol: raw.protocol.as_deref().map(UpstreamProtocol::parse).transpose()?.unwrap_or_default(),
            origin: None,
        })
    }
}

/// A timeout in seconds as written, or `default`.
fn timeout(secs: Option<f64>, default: Duration) -> Result<Duration, UpstreamConfigError> {
    match secs {
        None => Ok(default),
        Some(secs) if secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT_SECS => Ok(Duration::from_secs_f64(secs)),
        Some(secs) => Err(UpstreamConfigError::TimeoutOutOfRange(secs)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn read(value: Value) -> Result<UpstreamConfig, String> {
        serde_json::from_value(value).map_err(|e| e.to_string())
    }

    #[test]
    fn command_or_url_decides_the_transport() {
        let stdio = read(json!({"command": "srv", "args": ["-v"], "env": {"A": "${B}"}, "cwd": "sub"})).unwrap();
        let env = BTreeMap::from([("A".to_string(), "${B}".to_string())]);
        let transport =
            UpstreamTransport::Stdio { command: "srv".into(), args: vec!["-v".into()], env, cwd: Some("sub".into()) };
        assert_eq!(stdio, UpstreamConfig::new(transport));
        assert_eq!(stdio.transport.kind(), "stdio");

        let http = read(json!({"type": "http", "url": "http://127.0.0.1:9/mcp", "bearer_token_env": "TOKEN",
                               "timeout": 2.5, "startup_timeout": 1, "enabled": false}))
        .unwrap();
        assert!(matches!(&http.transport, UpstreamTransport::Http { url, .. } if url.path() == "/mcp"));
        assert_eq!((http.transport.kind(), http.transport.bearer_token_env()), ("http", Some("TOKEN")));
        assert_eq!((http.call_timeout, http.startup_timeout), (Duration::from_millis(2500), Duration::from_secs(1)));
        assert!(!http.enabled);
        assert!(read(json!({"type": "streamable-http", "url": "https://example.com/mcp"})).is_ok());
        assert!(read(json!({"type": "stdio", "command": "srv"})).is_ok());
    }

    #[test]
    fn a_bad_entry_says_what_to_write() {
        let error = |value: Value| read(value).unwrap_err();
        assert_eq!(
            error(json!({"command": "a", "url": "http://x"})),
            "give either `command` (stdio) or `url` (HTTP), not both"
        );
        assert_eq!(error(json!({"args": ["x"]})), "give `command` for a stdio server or `url` for an HTTP server");
        assert_eq!(error(json!({"url": "no url"})), "`no url` is not a URL: relative URL without a base");
        assert_eq!(error(json!({"command": "  "})), "`command` is empty");
        assert_eq!(
            error(json!({"type": "sse", "url": "http://x"})),
            "transport type `sse` is not supported; use stdio or http"
        );
        for secs in [0.0, -1.0, 86_401.0] {
            assert_eq!(
                error(json!({"command": "a", "timeout": secs})),
                format!("timeout {secs} is out of range (seconds, up to 86400)")
            );
        }
        assert!(error(json!({"command": "a", "startup_timeout": 0})).contains("out of range"));
        assert!(error(json!({"command": "a", "comand": "b"})).starts_with("unknown field `comand`, expected one of"));
    }

    #[test]
    fn an_http_server_signs_in_with_oauth_unless_given_a_token() {
        let oauth = |value: Value| read(value).map(|c| c.transport.oauth().cloned());
        let settings = oauth(json!({"url": "https://x/mcp", "oauth": {"clientId": "abc", "client_secret_env": "S",
                                     "scopes": ["a", "b"], "callbackPort": 8765}}))
        .unwrap()
        .unwrap();
        assert_eq!(settings.client_id.as_deref(), Some("abc"));
        assert_eq!((settings.scopes.unwrap(), settings.callback_port), (vec!["a".to_string(), "b".into()], 8765));
        assert_eq!(oauth(json!({"url": "https://x/mcp"})).unwrap(), Some(OAuthSettings::default()));
        assert_eq!(oauth(json!({"url": "https://x/mcp", "bearer_token_env": "T"})).unwrap(), None);
        assert_eq!(oauth(json!({"url": "https://x/mcp", "headers": {"authorization": "Bearer x"}})).unwrap(), None);
        assert_eq!(oauth(json!({"url": "https://x/mcp", "oauth": {"enabled": false}})).unwrap(), None);
        assert_eq!(oauth(json!({"command": "srv"})).unwrap(), None);

        let error = |value: Value| read(value).unwrap_err();
        assert!(error(json!({"command": "srv", "oauth": {}})).starts_with("`oauth` applies to HTTP servers"));
        assert!(
            error(json!({"url": "https://x", "oauth": {"client_secret_env": "S"}})).contains("needs `oauth.client_id`")
        );
        let cimd = error(json!({"url": "https://x", "oauth": {"client_metadata_url": "http://x/c.json"}}));
        assert!(cimd.contains("must be an https:// address with a path"), "{cimd}");
        assert!(error(json!({"url": "https://x", "oauth": {"scopes": ["a b"]}})).contains("one scope per string"));
        assert!(error(json!({"url": "https://x", "oauth": {"client": "a"}})).starts_with("unknown field `client`"));
    }

    #[test]
    fn tools_are_filtered_by_their_names_on_the_server() {
        let config = read(json!({"command": "a", "enabled_tools": ["x", "y"], "disabled_tools": ["y"]})).unwrap();
        assert_eq!(config.left_out("s", "x"), None);
        let why = config.left_out("s", "y").unwrap();
        assert!(why.starts_with("`disabled_tools` of MCP server `s` lists it; "), "{why}");
        assert!(config.left_out("s", "z").unwrap().starts_with("`enabled_tools` of MCP server `s` does not list it"));
    }
}
