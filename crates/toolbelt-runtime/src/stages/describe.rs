//! Stage 3: ask the tool what the call will touch and whether it may run beside others.

use std::sync::Arc;

use toolbelt_core::{Access, CancellationToken, EventSink, Limits, Prepared, ToolContext, ToolEntry, ToolError};

use crate::runtime::Runtime;
use crate::session::Session;

/// The tool only describes here; nothing runs yet.
pub(super) fn run(rt: &Runtime, entry: &ToolEntry, input: &Prepared, session: &Session) -> Result<Access, ToolError> {
    let cx = ToolContext::new(
        "describe",
        Arc::clone(session.state()),
        CancellationToken::new(),
        EventSink::none(),
        Limits::default(),
        rt.services.clone(),
    )
    .with_hidden(rt.hidden.clone());
    entry.tool().access(input, &cx)
}
