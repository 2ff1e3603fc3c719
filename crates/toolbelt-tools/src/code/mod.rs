//! Code intelligence: `code_query` (symbols and files from an index of the workspace), `LSP`
//! (questions to the file's language server), `Diagnostics` (what the servers report) and
//! `Lint` (the project's linters). One file per tool; the index in [`index`], the language
//! servers (which the file tools tell of each edit too) below every family, in
//! [`crate::language_servers`]; the linters in [`linters`].

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod code_query;
pub mod diagnostics;
pub mod index;
pub mod lint;
pub mod linters;
pub mod lsp;

/// Every code tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(code_query::CodeQuery), erase(lsp::Lsp), erase(diagnostics::Diagnostics), erase(lint::Lint)]
}
