//! toolbelt: the tool system of an AI coding agent, as a library.
//!
//! [`Toolbelt`] sets everything up the way the `toolbelt` binary does — the project found
//! from the working directory, the settings layers, the permission policy with its protected
//! paths, hooks, the Bash sandbox, the audit log and the upstream MCP servers:
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use toolbelt::runtime::ToolCall;
//!
//! let toolbelt = toolbelt::Toolbelt::builder(std::env::current_dir()?).build().await?;
//! let session = toolbelt.session("main");
//! let call = ToolCall::new("1", "Grep", serde_json::json!({"pattern": "fn main"}));
//! println!("{}", toolbelt.call(&session, call).await.text());
//! # Ok(()) }
//! ```
//!
//! The layers, for those who assemble their own:
//!
//! * [`core`] — the tool contract, registry, schemas (exported for OpenAI, Anthropic, MCP)
//!   and validation;
//! * [`policy`] — permission verdicts, approvals and hooks;
//! * [`runtime`] — the call pipeline, batches, sessions, and calls and results in the model
//!   APIs' shapes ([`runtime::wire`]);
//! * [`tools`] — the built-in tools;
//! * [`agent`] — model providers, the agent loop and sub-agents;
//! * [`mcp`] — the MCP server and the gateway to upstream MCP servers;
//! * [`settings`] — layered settings files (user, project, project-local, environment, flags,
//!   managed) and Claude Code's settings, merged and checked; [`assemble`] builds a runtime
//!   from them.
//!
//! A runtime built by hand judges in the `default` mode with nobody to approve until it is
//! given an authorizer: reads inside the session's roots and read-only commands run, the rest
//! is refused with the rule that would allow it.

pub use toolbelt_agent as agent;
pub use toolbelt_core as core;
pub use toolbelt_mcp as mcp;
pub use toolbelt_policy as policy;
pub use toolbelt_runtime as runtime;
pub use toolbelt_tools as tools;

pub mod agents;
pub mod assemble;
mod embed;
pub mod jobs;
pub mod live;
pub mod project_sandbox;
pub mod replica;
pub mod sessions;
pub mod settings;
pub mod telemetry;
pub mod upstream_names;

pub use assemble::AssembleError;
pub use embed::{Toolbelt, ToolbeltBuilder};

/// A registry holding every built-in tool, described with the default limits.
pub fn builtin_registry() -> toolbelt_core::Registry {
    builtin_registry_with(&toolbelt_core::CallLimits::DEFAULT)
}

/// A registry holding every built-in tool, described with `limits` (the runtime's).
pub fn builtin_registry_with(limits: &toolbelt_core::CallLimits) -> toolbelt_core::Registry {
    let registry = toolbelt_core::Registry::new();
    // Built-in names are fixed at compile time and tested to be unique.
    if let Err(e) = toolbelt_tools::register_builtin_with(&registry, limits) {
        tracing::error!("built-in tools clash: {e}");
    }
    // The settings tools work on the settings this crate reads (every runtime it builds has
    // them: [`assemble::Assembly::model_settings`]). Compiled at first use, as the others.
    for tool in toolbelt_tools::settings::tools() {
        if let Err(e) = registry.register_lazy(tool) {
            tracing::error!("built-in tools clash: {e}");
        }
    }
    registry
}
