//! Agents as the binary sets them up: the providers the settings and the environment define,
//! the definitions of the project, the user and the built-ins, the limits — and the host that
//! runs sub-agents, put among the runtime's services with the agent tools in the registry.

use std::path::Path;
use std::sync::Arc;

use toolbelt_agent::definitions::{Catalog, main_definition};
use toolbelt_agent::{AgentDefinition, AgentHost, AgentLimits, AgentSettings, Provider};
use toolbelt_tools::agents::AgentType;

/// What agents need, read from the settings.
pub struct AgentSetup {
    /// The providers that could be built, the default first.
    pub providers: Vec<Arc<dyn Provider>>,
    /// Why each provider that could not be built could not (for `config check`).
    pub problems: Vec<String>,
    /// The agent definitions.
    pub catalog: Catalog,
    /// The limits.
    pub limits: AgentLimits,
}

impl AgentSetup {
    /// The setup of `settings` (the default provider first) with `catalog`'s definitions;
    /// API keys are read with `env`.
    pub fn new(settings: &AgentSettings, catalog: Catalog, env: &dyn Fn(&str) -> Option<String>) -> Self {
        let mut configs = settings.providers.clone();
        if let Some(name) = &settings.default_provider
            && let Some(i) = configs.iter().position(|c| &c.name == name)
        {
            let first = configs.remove(i);
            configs.insert(0, first);
        }
        let mut providers = Vec::new();
        let mut problems = Vec::new();
        for config in &configs {
            match toolbelt_agent::providers::build(config, env) {
                Ok(provider) => providers.push(provider),
                Err(e) => problems.push(e.to_string()),
            }
        }
        Self { providers, problems, catalog, limits: settings.limits }
    }

    /// Whether agents can run (a provider is there).
    pub fn available(&self) -> bool {
        !self.providers.is_empty()
    }

    /// The provider named `name`, else the default; an error saying what to set when there
    /// is none.
    pub fn provider(&self, name: Option<&str>) -> Result<Arc<dyn Provider>, String> {
        match name {
            Some(name) => self.providers.iter().find(|p| p.name() == name).cloned().ok_or_else(|| {
                let names: Vec<&str> = self.providers.iter().map(|p| p.name()).collect();
                if names.is_empty() {
                    format!("there is no model provider `{name}`: {}", self.why_unavailable())
                } else {
                    format!("there is no model provider `{name}`; the providers are: {}", names.join(", "))
                }
            }),
            None => self.providers.first().cloned().ok_or_else(|| self.why_unavailable()),
        }
    }

    /// Why agents cannot run: the configured providers that could not be set up, each with
    /// what to set, or, when none is configured, how to configure one.
    pub fn why_unavailable(&self) -> String {
        if self.problems.is_empty() {
            "no model provider is configured; set OPENAI_API_KEY (with OPENAI_BASE_URL for a compatible server such \
             as Ollama) or ANTHROPIC_API_KEY, or add [agent.providers.NAME] with kind, base_url, api_key_env and \
             model to the settings"
                .to_string()
        } else {
            format!("no model provider is usable: {}", self.problems.join("; "))
        }
    }

    /// The canonical name of the agent tool `name` names (`Task` is `Agent`), whether or not
    /// agents can run; `None` for any other name.
    pub fn agent_tool(name: &str) -> Option<String> {
        let registry = toolbelt_core::Registry::new();
        for tool in toolbelt_tools::agents::tools(&[]) {
            let _ = registry.register_lazy(tool);
        }
        registry.lookup(name).ok().map(|entry| entry.spec().name.clone())
    }

    /// The definition named `name`.
    pub fn definition(&self, name: &str) -> Result<&AgentDefinition, String> {
        self.catalog.get(name).ok_or_else(|| {
            format!(
                "there is no agent `{name}`; the agents are: {} (`toolbelt agents` lists them with where each comes from)",
                self.catalog.names().join(", ")
            )
        })
    }

    /// The agent `toolbelt agent` runs when none is named, working in `cwd`.
    pub fn main_definition(&self, cwd: &Path) -> AgentDefinition {
        main_definition(cwd)
    }

    /// The agent types the `Agent` tool lists.
    pub fn agent_types(&self) -> Vec<AgentType> {
        self.catalog
            .definitions
            .iter()
            .map(|d| AgentType { name: d.name.clone(), description: d.description.clone() })
            .collect()
    }

    /// A host running sub-agents on these providers, definitions and limits.
    pub fn host(&self) -> Arc<AgentHost> {
        AgentHost::configured(self.providers.clone(), self.problems.clone(), self.catalog.clone(), self.limits)
    }
}
