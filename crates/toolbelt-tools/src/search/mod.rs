//! Search tools: `Grep` (contents, ripgrep's engine) and `Glob` (names), one file each. The
//! walk they share with `ListDir` and the code index — roots, ignore files, hidden paths, the
//! confirmation that each entry is still beneath its root — is below every family, in
//! [`crate::fs::walk`]; the content search only Grep runs is in [`support`].

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

pub mod glob;
pub mod grep;
pub(crate) mod support;

/// Every search tool, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(grep::Grep), erase(glob::Glob)]
}
