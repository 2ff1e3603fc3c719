//! The model providers: OpenAI-compatible Chat Completions ([`OpenAiProvider`]) and Anthropic
//! Messages ([`AnthropicProvider`]), both streaming with tool calls, behind [`Retrying`];
//! [`build`] makes one from its [`ProviderConfig`], [`from_env`] finds the ones the
//! environment defines, [`select`] picks the default.
//!
//! # Hand-written over reqwest
//!
//! Both protocols are a JSON POST answered by server-sent events, so each provider is a
//! request builder and an event loop over `reqwest`, which the workspace already has. General
//! model client crates (genai, async-openai) were set aside because what agents need is at
//! their edges:
//!
//! * custom base URLs for every compatible server (Ollama, vLLM, llama.cpp, proxies), and
//!   their quirks (a `stop` reason after tool calls, calls without an index, no key);
//! * `retry-after` (and OpenAI's `retry-after-ms`) honoured as the server gives it, and a
//!   clear error when it asks for longer than we wait;
//! * parallel tool calls whose argument fragments interleave by index;
//! * cancellation by dropping the future, with nothing running on behind it;
//! * one fewer heavy dependency tree, and errors that say which setting to change.
//!
//! # Tool calls whose arguments are not JSON
//!
//! A model sometimes writes arguments that do not parse (or a reply is cut mid-call). The
//! call is kept, its input being the raw text as a JSON string ([`unparsed_arguments`] finds
//! it), so the loop answers it with an error the model can correct rather than losing it.

mod anthropic;
mod http;
mod openai;
mod reply;
mod retry;
mod sse;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

pub use anthropic::{ANTHROPIC_VERSION, AnthropicProvider};
#[cfg(any(test, feature = "testing"))]
pub(crate) use http::http_date;
pub use openai::OpenAiProvider;
pub use retry::{RetryPolicy, Retrying};

use crate::config::{AgentSettings, ProviderConfig, ProviderKind};
use crate::provider::{Provider, ProviderError};

/// OpenAI's API, for an `openai` provider without a `base_url`.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";
/// Anthropic's API, for an `anthropic` provider without a `base_url`.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com";
/// The model of an `openai` provider without a `model`: a capable tool-calling model that
/// takes `max_tokens` (the reasoning models want `max_completion_tokens`).
pub const OPENAI_DEFAULT_MODEL: &str = "gpt-4.1";
/// The model of an `anthropic` provider without a `model`.
pub const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// The model a provider of `kind` uses when its settings name none.
pub fn default_model(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAi => OPENAI_DEFAULT_MODEL,
        ProviderKind::Anthropic => ANTHROPIC_DEFAULT_MODEL,
    }
}

/// The base URL a provider of `kind` uses when its settings name none.
pub fn default_base_url(kind: ProviderKind) -> &'static str {
    match kind {
        ProviderKind::OpenAi => OPENAI_BASE_URL,
        ProviderKind::Anthropic => ANTHROPIC_BASE_URL,
    }
}

/// How long to wait for a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// To connect (TCP and TLS).
    pub connect: Duration,
    /// From sending the request to the response's headers (connecting included).
    pub response: Duration,
    /// Between two chunks of the reply's stream.
    pub idle: Duration,
}

impl Timeouts {
    /// 30 s to connect, 5 minutes to the response (a long prompt may take a while to be
    /// read), 2 minutes between chunks (servers send keep-alives well within that).
    pub const DEFAULT: Timeouts = Timeouts {
        connect: Duration::from_secs(30),
        response: Duration::from_secs(300),
        idle: Duration::from_secs(120),
    };
}

impl Default for Timeouts {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// How [`build_with`] makes a provider.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProviderOptions {
    /// Its timeouts.
    pub timeouts: Timeouts,
    /// How it tries again.
    pub retry: RetryPolicy,
}

/// The provider `config` describes, with the default timeouts and retries; `env` reads the
/// variable its key is in.
pub fn build(
    config: &ProviderConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Arc<dyn Provider>, ProviderError> {
    build_with(config, env, &ProviderOptions::default())
}

/// [`build`] with these timeouts and retries. A key variable that is not set, or a base URL
/// that is not an http(s) URL, is a [`ProviderError::Config`] saying what to set.
pub fn build_with(
    config: &ProviderConfig,
    env: &dyn Fn(&str) -> Option<String>,
    options: &ProviderOptions,
) -> Result<Arc<dyn Provider>, ProviderError> {
    check_config(config)?;
    let key = match &config.api_key_env {
        None => None,
        Some(var) => match env(var).filter(|v| !v.trim().is_empty()) {
            Some(key) => Some(key.trim().to_string()),
            None => {
                return Err(ProviderError::Config {
                    provider: config.name.clone(),
                    message: missing_key(var, &config.name),
                });
            }
        },
    };
    let inner: Arc<dyn Provider> = match config.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(config, key, options.timeouts)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config, key, options.timeouts)?),
    };
    Ok(Arc::new(Retrying::new(inner, options.retry)))
}

/// What a provider whose key variable `var` is not set says: the variable, that it is
/// toolbelt's own environment that lacks it, and where that environment comes from — a
/// shell's, or, for `toolbelt mcp`, the one the MCP host starts it with (a key exported in
/// the person's shell is not in it).
fn missing_key(var: &str, provider: &str) -> String {
    format!(
        "its API key is read from ${var}, which is not set in toolbelt's environment: set {var} where toolbelt is \
         started (`export {var}=…` in a shell; for `toolbelt mcp`, the `env` of toolbelt's entry in the MCP host's \
         configuration), or point api_key_env in [agent.providers.{provider}] at the variable that holds the key"
    )
}

/// Checks what can be checked of `config` without its key: its base URL is an http(s) URL,
/// its `api_key_env` a variable's name (never the key itself, which the message leaves out).
pub fn check_config(config: &ProviderConfig) -> Result<(), ProviderError> {
    base_url(config)?;
    match config.api_key_env.as_deref() {
        Some(var) if !is_variable_name(var) => Err(ProviderError::Config {
            provider: config.name.clone(),
            message: format!(
                "api_key_env must name the environment variable that holds the key ({}), never the key itself; \
                 the value given is no variable name",
                match config.kind {
                    ProviderKind::OpenAi => "OPENAI_API_KEY",
                    ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
                }
            ),
        }),
        _ => Ok(()),
    }
}

/// Whether `name` can be an environment variable's name: letters, digits and `_`, not
/// starting with a digit.
fn is_variable_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The base URL of `config` without its trailing `/`, checked to be an http(s) URL.
pub(crate) fn base_url(config: &ProviderConfig) -> Result<String, ProviderError> {
    let raw = config.base_url.as_deref().map(str::trim).filter(|u| !u.is_empty());
    let url = raw.unwrap_or(default_base_url(config.kind)).trim_end_matches('/');
    let problem = match reqwest::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") && parsed.has_host() => return Ok(url.to_string()),
        Ok(parsed) => format!("it is a {} URL, not http or https", parsed.scheme()),
        Err(e) => e.to_string(),
    };
    Err(ProviderError::Config {
        provider: config.name.clone(),
        message: format!(
            "base_url `{url}` is not a usable URL ({problem}): set base_url = \"https://…\" in [agent.providers.{}]",
            config.name
        ),
    })
}

/// The providers the environment defines: `openai` when `OPENAI_API_KEY` is set (with
/// `OPENAI_BASE_URL` and `OPENAI_MODEL` when they are), or when only `OPENAI_BASE_URL` is (a
/// local server such as Ollama, which takes no key); `anthropic` when `ANTHROPIC_API_KEY` is
/// set (with `ANTHROPIC_BASE_URL` and `ANTHROPIC_MODEL`). OpenAI's first.
pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> Vec<ProviderConfig> {
    let var = |name: &str| env(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let mut out = Vec::new();
    let openai_key = var("OPENAI_API_KEY").map(|_| "OPENAI_API_KEY".to_string());
    let openai_url = var("OPENAI_BASE_URL");
    if openai_key.is_some() || openai_url.is_some() {
        out.push(ProviderConfig {
            name: "openai".into(),
            kind: ProviderKind::OpenAi,
            base_url_from: openai_url.as_ref().map(|_| "$OPENAI_BASE_URL".to_string()),
            base_url: openai_url,
            api_key_env: openai_key,
            model: var("OPENAI_MODEL"),
        });
    }
    if var("ANTHROPIC_API_KEY").is_some() {
        let base_url = var("ANTHROPIC_BASE_URL");
        out.push(ProviderConfig {
            name: "anthropic".into(),
            kind: ProviderKind::Anthropic,
            base_url_from: base_url.as_ref().map(|_| "$ANTHROPIC_BASE_URL".to_string()),
            base_url,
            api_key_env: Some("ANTHROPIC_API_KEY".into()),
            model: var("ANTHROPIC_MODEL"),
        });
    }
    out
}

/// Why no provider could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// None is configured, and the environment defines none.
    #[error(
        "no model provider is configured: set OPENAI_API_KEY or ANTHROPIC_API_KEY (or OPENAI_BASE_URL for a local \
         OpenAI-compatible server such as Ollama), or add an [agent.providers.NAME] table to your settings"
    )]
    NoProvider,
    /// The name given is none of theirs.
    #[error("no model provider is named `{name}`; {}", known_list(.known))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The providers there are.
        known: Vec<String>,
    },
}

fn known_list(known: &[String]) -> String {
    if known.is_empty() {
        "none is configured: add [agent.providers.NAME] to your settings, or set OPENAI_API_KEY or ANTHROPIC_API_KEY"
            .to_string()
    } else {
        format!("the providers are: {}", known.join(", "))
    }
}

impl From<SelectError> for ProviderError {
    fn from(e: SelectError) -> Self {
        let provider = match &e {
            SelectError::NoProvider => "default".to_string(),
            SelectError::Unknown { name, .. } => name.clone(),
        };
        ProviderError::Config { provider, message: e.to_string() }
    }
}

/// The provider named `name`, else the default: `[agent] provider`, else the first
/// configured, else the environment's (`openai` before `anthropic`, as [`from_env`] lists
/// them after the configured ones).
pub fn select<'a>(settings: &'a AgentSettings, name: Option<&str>) -> Result<&'a ProviderConfig, SelectError> {
    let find = |name: &str| {
        settings.providers.iter().find(|p| p.name == name).ok_or_else(|| SelectError::Unknown {
            name: name.to_string(),
            known: settings.providers.iter().map(|p| p.name.clone()).collect(),
        })
    };
    match name.or(settings.default_provider.as_deref()) {
        Some(name) => find(name),
        None => settings.providers.first().ok_or(SelectError::NoProvider),
    }
}

/// The raw text of a tool call's arguments that were not JSON (the call's input is then that
/// text as a JSON string); `None` for an input that parsed.
pub fn unparsed_arguments(input: &Value) -> Option<&str> {
    input.as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| v.to_string())
    }

    #[test]
    fn the_environment_defines_providers() {
        assert!(from_env(&env(&[])).is_empty());
        let both = from_env(&env(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o"), ("OPENAI_MODEL", "gpt-x")]));
        let names: Vec<&str> = both.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["openai", "anthropic"]);
        assert_eq!(both[0].model.as_deref(), Some("gpt-x"));
        assert_eq!(both[1].api_key_env.as_deref(), Some("ANTHROPIC_API_KEY"));
        let local = from_env(&env(&[("OPENAI_BASE_URL", "http://localhost:11434/v1"), ("OPENAI_API_KEY", " ")]));
        assert_eq!(local.len(), 1);
        assert_eq!(
            (local[0].api_key_env.as_deref(), local[0].base_url.as_deref()),
            (None, Some("http://localhost:11434/v1"))
        );
        assert_eq!(local[0].base_url_from.as_deref(), Some("$OPENAI_BASE_URL"));
        assert_eq!(both[1].base_url_from, None, "Anthropic's own URL");
    }

    #[test]
    fn the_default_is_named_else_first() {
        let mut settings = AgentSettings {
            providers: from_env(&env(&[("ANTHROPIC_API_KEY", "a"), ("OPENAI_API_KEY", "o")])),
            ..Default::default()
        };
        assert_eq!(select(&settings, None).unwrap().name, "openai");
        assert_eq!(select(&settings, Some("anthropic")).unwrap().name, "anthropic");
        settings.default_provider = Some("anthropic".into());
        assert_eq!(select(&settings, None).unwrap().name, "anthropic");
        settings.default_provider = Some("local".into());
        let e = select(&settings, None).unwrap_err();
        assert_eq!(e.to_string(), "no model provider is named `local`; the providers are: openai, anthropic");
        assert_eq!(select(&AgentSettings::default(), None).unwrap_err(), SelectError::NoProvider);
        let e = ProviderError::from(SelectError::NoProvider).to_string();
        assert!(e.contains("set OPENAI_API_KEY or ANTHROPIC_API_KEY"), "{e}");
    }

    #[test]
    fn a_missing_key_or_bad_url_says_what_to_set() {
        let config = ProviderConfig {
            name: "work".into(),
            kind: ProviderKind::Anthropic,
            base_url: None,
            base_url_from: None,
            api_key_env: Some("WORK_LLM_KEY".into()),
            model: None,
        };
        let e = build(&config, &env(&[])).unwrap_err();
        assert!(matches!(e, ProviderError::Config { .. }));
        assert!(e.to_string().contains("$WORK_LLM_KEY, which is not set in toolbelt's environment"), "{e}");
        assert!(e.to_string().contains("`export WORK_LLM_KEY=…` in a shell"), "{e}");
        let p = build(&config, &env(&[("WORK_LLM_KEY", "k")])).unwrap();
        assert_eq!((p.name(), p.default_model()), ("work", ANTHROPIC_DEFAULT_MODEL));
        assert!(!format!("{p:?}").contains("\"k\""), "the key stays out of Debug: {p:?}");
        let leaked = ProviderConfig { api_key_env: Some("sk-ant-secret".into()), ..config.clone() };
        let e = check_config(&leaked).unwrap_err().to_string();
        assert!(e.contains("never the key itself") && !e.contains("sk-ant"), "{e}");
        assert!(check_config(&config).is_ok());
        for bad in ["ftp://x", "localhost:8080", "not a url"] {
            let config = ProviderConfig { base_url: Some(bad.into()), api_key_env: None, ..config.clone() };
            let e = build(&config, &env(&[])).unwrap_err().to_string();
            assert!(e.contains("is not a usable URL") && e.contains("[agent.providers.work]"), "{bad}: {e}");
        }
    }
}
