//! Settings tools: `Config`. They work on the runtime's [`toolbelt_core::SettingsService`],
//! so they are not among [`crate::builtin`]: whoever provides the service registers them
//! ([`tools`]).

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod config;

/// Every settings tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(config::Config)]
}
