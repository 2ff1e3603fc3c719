//! toolbelt: the tool system of an AI coding agent, as a library.
//!
//! This facade re-exports the layers so an embedding agent depends on one crate:
//!
//! * [`core`] — the tool contract, registry, schemas and validation;
//! * [`policy`] — permission verdicts, approvals and hooks;
//! * [`runtime`] — the call pipeline, batches, sessions;
//! * [`tools`] — the built-in tools;
//! * [`settings`] — layered settings files (user, project, project-local, environment, flags,
//!   managed) and Claude Code's settings, merged and checked.
//!
//! ```no_run
//! # async fn demo() {
//! use std::sync::Arc;
//! use toolbelt::core::{CancellationToken, EventSink};
//! use toolbelt::runtime::{Runtime, Session, ToolCall};
//!
//! let runtime = Runtime::builder(Arc::new(toolbelt::builtin_registry())).build();
//! let cwd = std::env::current_dir().unwrap();
//! let session = Session::new("demo", cwd.clone(), vec![], cwd.join(".toolbelt/sessions/demo"));
//! let call = ToolCall::new("1", "TodoWrite", serde_json::json!({"todos": []}));
//! let result = runtime.call(&session, call, &EventSink::none(), &CancellationToken::new()).await;
//! println!("{}", result.text());
//! # }
//! ```

pub use toolbelt_core as core;
pub use toolbelt_policy as policy;
pub use toolbelt_runtime as runtime;
pub use toolbelt_tools as tools;

pub mod settings;

/// A registry holding every built-in tool.
pub fn builtin_registry() -> toolbelt_core::Registry {
    let registry = toolbelt_core::Registry::new();
    // Built-in names are fixed at compile time and tested to be unique.
    if let Err(e) = toolbelt_tools::register_builtin(&registry) {
        tracing::error!("built-in tools clash: {e}");
    }
    registry
}
