//! Stage 2: check the input against the tool's compiled schema, then decode it.

use serde_json::Value;
use toolbelt_core::{Prepared, ToolEntry, ToolError};

/// Every failing field is reported at once, with its JSON path and what was expected.
pub(super) fn run(entry: &ToolEntry, input: Value) -> Result<Prepared, ToolError> {
    entry.prepare(input)
}
