//! Code intelligence: `code_query` (symbols and files from an index of the workspace), `LSP`
//! (questions to the file's language server) and `Diagnostics` (what the servers report).
//! One file per tool; the index in [`index`], the language servers in [`language_servers`].

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod code_query;
pub mod diagnostics;
pub mod index;
pub mod language_servers;
pub mod lsp;

/// Every code tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(code_query::CodeQuery), erase(lsp::Lsp), erase(diagnostics::Diagnostics)]
}
