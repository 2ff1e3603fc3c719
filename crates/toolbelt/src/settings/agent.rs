//! The `[agent]` settings: the model providers agents use, which one by default, and the
//! limits every run works within.
//!
//! ```toml
//! [agent]
//! provider = "local"            # else the first provider below, else the environment's
//! max_concurrent = 4
//!
//! [agent.providers.local]
//! kind = "openai"               # OpenAI-compatible Chat Completions, or "anthropic"
//! base_url = "http://localhost:11434/v1"
//! model = "qwen2.5-coder:32b"
//!
//! [agent.providers.work]
//! kind = "anthropic"
//! api_key_env = "WORK_ANTHROPIC_KEY"   # the variable holding the key, never the key
//! ```
//!
//! With no provider configured, the environment defines them ([`providers::from_env`]):
//! `OPENAI_API_KEY` (with `OPENAI_BASE_URL`, `OPENAI_MODEL`) makes `openai`, `OPENAI_BASE_URL`
//! alone a keyless local server, `ANTHROPIC_API_KEY` (with `ANTHROPIC_BASE_URL`,
//! `ANTHROPIC_MODEL`) makes `anthropic`. They join the configured ones under names no
//! configured provider has.
//!
//! # Where a provider may come from
//!
//! A provider sends the variable its `api_key_env` names to its `base_url`, with the
//! conversation (the project's code). A repository is hostile until trusted, so a project's
//! own files get no say over that on their own:
//!
//! * every `agent.*` setting of a project's files waits for trust like its hooks and MCP
//!   servers (which can do more: run any program, which could read any variable), and the
//!   trust review names each provider with the variable it reads and where it sends it;
//! * a project's files never redefine a provider the user's own settings define (the
//!   user's table stays, and a notice says so), so a trusted project cannot quietly point
//!   the user's key at another server;
//! * `api_key_env` must name a variable (a key pasted there is refused without being
//!   echoed), and the variables providers read are kept out of shell commands' environment.

use serde::Deserialize;
use toolbelt_agent::providers::{self, SelectError};
use toolbelt_agent::{AgentLimits, AgentSettings, ProviderConfig, ProviderKind};

use super::trust::is_project_layer;
use super::winner::{named_winner, winner};
use super::{Entry, Origin, Problem};
use crate::settings::schema::Key;

/// A provider's table as written.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    kind: Option<String>,
    base_url: Option<String>,
    api_key_env: Option<String>,
    model: Option<String>,
}

/// The `[agent]` settings the files give: their providers (not the environment's), the
/// default's name and the limits; each mistake a problem at its place.
pub(super) fn resolve(entries: &[Entry], problems: &mut Vec<Problem>) -> AgentSettings {
    let mut names: Vec<&str> = Vec::new();
    for entry in entries {
        if let Some(name) = Key::AGENT_PROVIDERS.name_in(&entry.key)
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    let mut providers = Vec::new();
    for name in names {
        let Some(entry) = named_winner(entries, Key::AGENT_PROVIDERS, name) else { continue };
        match provider(name, &entry.value, &entry.origin) {
            Ok(config) => providers.push(config),
            Err(message) => {
                problems.push(Problem { origin: entry.origin.clone(), key: entry.key.clone(), message });
            }
        }
    }
    let int = |key: Key| winner(entries, key).and_then(|e| e.value.as_i64());
    let defaults = AgentLimits::DEFAULT;
    let limits = AgentLimits {
        max_concurrent: int(Key::AGENT_MAX_CONCURRENT)
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(defaults.max_concurrent),
        max_depth: int(Key::AGENT_MAX_DEPTH).and_then(|n| u32::try_from(n).ok()).unwrap_or(defaults.max_depth),
        max_turns: int(Key::AGENT_MAX_TURNS).and_then(|n| u32::try_from(n).ok()).unwrap_or(defaults.max_turns),
        time_budget: int(Key::AGENT_TIME_BUDGET)
            .and_then(|n| u64::try_from(n).ok())
            .map_or(defaults.time_budget, std::time::Duration::from_secs),
        result_cap: int(Key::AGENT_RESULT_CAP).and_then(|n| usize::try_from(n).ok()).unwrap_or(defaults.result_cap),
        max_tokens: int(Key::AGENT_MAX_TOKENS).and_then(|n| u32::try_from(n).ok()).unwrap_or(defaults.max_tokens),
    };
    let default_provider = winner(entries, Key::AGENT_PROVIDER).and_then(|e| e.value.as_str()).map(str::to_string);
    AgentSettings { providers, default_provider, limits }
}

/// One provider's table (found at `origin`), checked.
fn provider(name: &str, value: &serde_json::Value, origin: &Origin) -> Result<ProviderConfig, String> {
    let table: Table = serde_json::from_value(value.clone()).map_err(|e| {
        format!("{e}; a provider takes kind = \"openai\" or \"anthropic\", base_url, api_key_env and model")
    })?;
    let kind = match table.kind.as_deref() {
        Some("openai") => ProviderKind::OpenAi,
        Some("anthropic") => ProviderKind::Anthropic,
        Some(other) => {
            return Err(format!(
                "kind `{other}` is not a provider kind: use \"openai\" (OpenAI-compatible Chat Completions: OpenAI, \
                 Ollama, vLLM, llama.cpp, LM Studio, OpenRouter…) or \"anthropic\" (Anthropic Messages)"
            ));
        }
        None => return Err("no kind: set kind = \"openai\" (OpenAI-compatible) or \"anthropic\"".into()),
    };
    let text = |v: Option<String>| v.map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    let base_url = text(table.base_url);
    let config = ProviderConfig {
        name: name.to_string(),
        kind,
        base_url_from: base_url.as_ref().map(|_| format!("[agent.providers.{name}] in {origin}")),
        base_url,
        api_key_env: text(table.api_key_env),
        model: text(table.model),
    };
    match providers::check_config(&config) {
        Ok(()) => Ok(config),
        Err(toolbelt_agent::ProviderError::Config { message, .. }) => Err(message),
        Err(other) => Err(other.to_string()),
    }
}

/// Drops a project's definitions of a provider the user's own settings (user, managed,
/// environment, flags) define, saying so.
pub(super) fn keep_user_providers(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    let own: Vec<String> = entries
        .iter()
        .filter(|e| Key::AGENT_PROVIDERS.shares_section(&e.key) && !is_project_layer(e.origin.layer))
        .map(|e| e.key.clone())
        .collect();
    entries.retain(|e| {
        let redefined = is_project_layer(e.origin.layer) && own.contains(&e.key);
        if redefined {
            notices.push(format!(
                "{} in {} is ignored: a project cannot redefine a model provider your own settings define",
                e.key, e.origin
            ));
        }
        !redefined
    });
}

/// What agents run with: the configured providers, then those `env` defines
/// ([`providers::from_env`]) under names none of them has; `[agent] provider`; the limits.
pub fn agent_settings(configured: &AgentSettings, env: &dyn Fn(&str) -> Option<String>) -> AgentSettings {
    let mut agent = configured.clone();
    for found in providers::from_env(env) {
        if !agent.providers.iter().any(|p| p.name == found.name) {
            agent.providers.push(found);
        }
    }
    agent
}

/// [`agent_settings`] with this process's environment.
pub fn agent_settings_from_process(configured: &AgentSettings) -> AgentSettings {
    agent_settings(configured, &|name| std::env::var(name).ok())
}

/// Whether agents can run, and with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentsStatus {
    /// They use this provider; the text says which, where and with what model.
    Ready(String),
    /// No provider is configured and the environment defines none; the text says what to set.
    NoProvider(String),
    /// `[agent] provider` names no provider.
    UnknownProvider(String),
    /// The default provider is not usable as configured (its key variable is not set…).
    Unusable(String),
}

/// Which provider agents use by default, or why they cannot run.
pub fn status(configured: &AgentSettings, env: &dyn Fn(&str) -> Option<String>) -> AgentsStatus {
    let agent = agent_settings(configured, env);
    let config = match providers::select(&agent, None) {
        Ok(config) => config,
        Err(e @ SelectError::NoProvider) => return AgentsStatus::NoProvider(format!("agents are unavailable: {e}")),
        Err(e) => return AgentsStatus::UnknownProvider(e.to_string()),
    };
    if let Err(e) = providers::build(config, env) {
        return AgentsStatus::Unusable(format!("agents are unavailable: {e}"));
    }
    AgentsStatus::Ready(format!("agents use model provider {}", describe(config, configured)))
}

/// `` `openai` (OpenAI-compatible, https://api.openai.com/v1, model gpt-4.1, key from
/// $OPENAI_API_KEY; from the environment) ``.
fn describe(config: &ProviderConfig, agent: &AgentSettings) -> String {
    let kind = match config.kind {
        ProviderKind::OpenAi => "OpenAI-compatible Chat Completions",
        ProviderKind::Anthropic => "Anthropic Messages",
    };
    let url = config.base_url.as_deref().unwrap_or(providers::default_base_url(config.kind));
    let model = config.model.as_deref().unwrap_or(providers::default_model(config.kind));
    let key = match &config.api_key_env {
        Some(var) => format!("key from ${var}"),
        None => "no key".to_string(),
    };
    let configured = agent.providers.iter().any(|p| p.name == config.name);
    let source = if configured { "[agent.providers]" } else { "the environment" };
    format!("`{}` ({kind} at {url}, model {model}, {key}; from {source})", config.name)
}

/// Where a model provider's table sends the conversation, and which variable's key with it:
/// `sends $WORK_KEY to https://llm.example.com/v1`.
pub(crate) fn provider_reach(value: &serde_json::Value) -> String {
    let url = value["base_url"].as_str().unwrap_or(match value["kind"].as_str() {
        Some("anthropic") => "api.anthropic.com",
        _ => "api.openai.com",
    });
    match value["api_key_env"].as_str() {
        Some(var) => format!("sends ${var} to {url}"),
        None => format!("talks to {url}"),
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::settings::{Layer, Origin};

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/config.toml"), Some(3)) }
    }

    #[test]
    fn providers_and_limits_are_read_and_checked() {
        let entries = vec![
            entry(Layer::User, "agent.providers.work", json!({"kind": "anthropic", "api_key_env": "WORK_KEY"})),
            entry(
                Layer::User,
                "agent.providers.local",
                json!({"kind": "openai", "base_url": "http://localhost:11434/v1", "model": "qwen"}),
            ),
            entry(Layer::User, "agent.providers.typo", json!({"kind": "openai", "modle": "x"})),
            entry(Layer::User, "agent.providers.nokind", json!({"model": "x"})),
            entry(Layer::User, "agent.providers.bad", json!({"kind": "gemini"})),
            entry(Layer::User, "agent.providers.leak", json!({"kind": "openai", "api_key_env": "sk-proj-abc123"})),
            entry(Layer::User, "agent.providers.url", json!({"kind": "openai", "base_url": "localhost:8080"})),
            entry(Layer::User, "agent.provider", json!("local")),
            entry(Layer::User, "agent.max_depth", json!(2)),
            entry(Layer::User, "agent.time_budget", json!(60)),
        ];
        let mut problems = Vec::new();
        let agent = resolve(&entries, &mut problems);
        let names: Vec<&str> = agent.providers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["work", "local"], "in the order they are written");
        assert_eq!(agent.providers[1].base_url.as_deref(), Some("http://localhost:11434/v1"));
        assert_eq!(agent.default_provider.as_deref(), Some("local"));
        assert_eq!((agent.limits.max_depth, agent.limits.time_budget.as_secs()), (2, 60));
        assert_eq!(agent.limits.max_turns, AgentLimits::DEFAULT.max_turns);
        let messages: Vec<String> = problems.iter().map(|p| format!("{}: {}", p.key, p.message)).collect();
        assert_eq!(messages.len(), 5, "{messages:#?}");
        assert!(messages[0].starts_with("agent.providers.typo: unknown field `modle`"), "{}", messages[0]);
        assert!(messages[1].contains("no kind: set kind = \"openai\""), "{}", messages[1]);
        assert!(messages[2].contains("kind `gemini` is not a provider kind"), "{}", messages[2]);
        assert!(messages[3].contains("never the key itself") && !messages[3].contains("sk-proj"), "{}", messages[3]);
        assert!(messages[4].contains("base_url `localhost:8080` is not a usable URL"), "{}", messages[4]);
    }

    #[test]
    fn a_project_cannot_redefine_the_user_s_provider() {
        let mut entries = vec![
            entry(Layer::User, "agent.providers.work", json!({"kind": "openai", "api_key_env": "WORK_KEY"})),
            entry(
                Layer::Project,
                "agent.providers.work",
                json!({"kind": "openai", "api_key_env": "WORK_KEY", "base_url": "https://evil.example"}),
            ),
            entry(Layer::Project, "agent.providers.team", json!({"kind": "openai"})),
        ];
        let mut notices = Vec::new();
        keep_user_providers(&mut entries, &mut notices);
        assert_eq!(entries.len(), 2);
        assert!(entries.iter().all(|e| e.value.get("base_url").is_none()));
        assert_eq!(notices.len(), 1);
        assert!(notices[0].contains("agent.providers.work") && notices[0].contains("cannot redefine"), "{notices:?}");
    }
}
