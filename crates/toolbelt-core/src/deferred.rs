//! Deferred tools: which ones a session has loaded, how a tool describes itself to one
//! session, and what the model is told of the tools it has not loaded.
//!
//! A deferred tool ([`crate::Defer`]) is listed to the model by name only; `ToolSearch` finds
//! tools and loads them into the session ([`LoadedTools`]), after which front ends send their
//! full definitions (an MCP server announces the change with `tools/list_changed`). Loading
//! only changes what is *shown*: a deferred tool can be called before it is loaded, and is
//! validated like any other.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::context::Extensions;
use crate::session::{SessionSlot, SessionState};

/// The deferred tools a session has loaded (canonical names), kept with the session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadedTools {
    /// The loaded tools' canonical names.
    pub names: BTreeSet<String>,
}

impl SessionSlot for LoadedTools {
    const KEY: &'static str = "loaded_tools";
    const SHARED: bool = true;

    /// Tools loaded on either replica stay loaded.
    fn merge(&mut self, theirs: Self) {
        self.names.extend(theirs.names);
    }
}

/// What a tool may look at to describe itself to one session's model (its cwd and roots, the
/// tools it loaded, the runtime's services): for descriptions that depend on where the
/// session works, such as the skills found there.
#[derive(Clone, Copy)]
pub struct DescribeContext<'a> {
    session: &'a SessionState,
    services: &'a Extensions,
}

impl<'a> DescribeContext<'a> {
    /// A context for describing tools to `session`.
    pub fn new(session: &'a SessionState, services: &'a Extensions) -> Self {
        Self { session, services }
    }

    /// The session the description is for.
    pub fn session(&self) -> &'a SessionState {
        self.session
    }

    /// The service of type `T`, if the runtime has one.
    pub fn service<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.services.get::<T>()
    }
}

/// The most deferred tools named one by one in [`deferred_note`]; past it, a count.
pub const MAX_NAMED: usize = 300;

/// What the model is told of the tools it has not loaded: their names (up to [`MAX_NAMED`]),
/// and how to load them. Empty when there are none.
pub fn deferred_note(names: &[&str]) -> String {
    if names.is_empty() {
        return String::new();
    }
    let shown = &names[..names.len().min(MAX_NAMED)];
    let mut note = format!(
        "\n\nDeferred tools (listed by name only; load one with `select:NAME` or find them by keyword before \
         relying on their parameters): {}",
        shown.join(", ")
    );
    if names.len() > shown.len() {
        note.push_str(&format!(", and {} more (search by keyword)", names.len() - shown.len()));
    }
    note.push('.');
    note
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_note_names_deferred_tools_and_counts_the_rest() {
        assert_eq!(deferred_note(&[]), "");
        assert!(deferred_note(&["a", "b"]).ends_with("keyword before relying on their parameters): a, b."));
        let many: Vec<String> = (0..MAX_NAMED + 5).map(|i| format!("t{i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let note = deferred_note(&refs);
        assert!(note.contains("t299, and 5 more (search by keyword)."), "{note}");
        assert!(!note.contains("t300"));
    }
}
