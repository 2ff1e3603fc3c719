//! How agents are configured: the providers, which one is the default, and the limits every
//! run works within. The binary fills these from settings (`[agent]`) and the environment.

use std::time::Duration;

/// Which wire protocol a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (OpenAI, Ollama, vLLM, llama.cpp, LM Studio,
    /// OpenRouter…).
    OpenAi,
    /// Anthropic Messages.
    Anthropic,
}

/// One configured provider (`[agent.providers.NAME]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderConfig {
    /// Its name (the table's key, or `openai`/`anthropic` for one defined by environment
    /// variables).
    pub name: String,
    /// Its protocol.
    pub kind: ProviderKind,
    /// Its base URL (`https://api.openai.com/v1`, `http://localhost:11434/v1`…); the
    /// protocol's usual one when absent.
    pub base_url: Option<String>,
    /// Where `base_url` was set, as messages about reaching it name it (`$OPENAI_BASE_URL`,
    /// `[agent.providers.local] in user ~/.config/toolbelt/config.toml:4`); `None` when it
    /// is not known, or there is no `base_url`.
    pub base_url_from: Option<String>,
    /// The name of the environment variable holding its API key; none for a local server
    /// that takes no key.
    pub api_key_env: Option<String>,
    /// Its default model.
    pub model: Option<String>,
}

/// The limits every agent run works within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentLimits {
    /// Sub-agents running at once in one session.
    pub max_concurrent: usize,
    /// How deep agents may nest: 1 lets the top level start sub-agents, which cannot start
    /// their own.
    pub max_depth: u32,
    /// Model turns per run, unless the agent's definition says fewer.
    pub max_turns: u32,
    /// Wall time per run.
    pub time_budget: Duration,
    /// Characters of final text a result carries; the rest is written to a file.
    pub result_cap: usize,
    /// The most tokens one reply may have.
    pub max_tokens: u32,
}

impl AgentLimits {
    /// Four at once, depth 1, 100 turns, 30 minutes, 32,000 characters, 16,384 tokens a reply.
    pub const DEFAULT: AgentLimits = AgentLimits {
        max_concurrent: 4,
        max_depth: 1,
        max_turns: 100,
        time_budget: Duration::from_secs(30 * 60),
        result_cap: 32_000,
        max_tokens: 16_384,
    };
}

impl Default for AgentLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Everything about agents the settings say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentSettings {
    /// The providers, configured and from the environment.
    pub providers: Vec<ProviderConfig>,
    /// The name of the default provider (`[agent] provider`); the first one when absent.
    pub default_provider: Option<String>,
    /// The limits.
    pub limits: AgentLimits,
}
