//! Code intelligence: `code_query` (symbols and files from an index of the workspace). One
//! file per tool; the index in [`index`].

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod code_query;
pub mod index;

/// Every code tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(code_query::CodeQuery)]
}
