//! Code snippets: pieces of code saved under a name to reuse in later sessions and other
//! projects — `snippet_save`, `snippet_load`, `snippet_list` (full-text search, tags,
//! language) and `snippet_delete`.
//!
//! Snippets live in one SQLite database outside every project: the user's
//! (`$XDG_DATA_HOME/toolbelt/snippets.db`) or, when the front end says so, the project's own
//! in its state directory. Which one is the [`SnippetStore`] service. The machinery:
//!
//! * [`store`] says where the database is and opens it: owner-only, WAL, busy timeout, the
//!   schema made or checked (`PRAGMA user_version`), with a full-text index (FTS5) over
//!   names, descriptions and code;
//! * `fields` checks and normalizes what a call sends (names, code size, tags, language);
//! * `fts` turns the model's search into an FTS5 query that cannot fail to parse;
//! * `ops` saves, loads and deletes snippets (rows and index in one transaction);
//! * `search` lists them: by name, or best match first, with how many match;
//! * [`view`] is what the tools return, and its text;
//! * `postgres` keeps them in a team's shared database instead (`storage.url`), with the
//!   same tools and messages ([`SnippetStore::kept_in`]).

mod delete;
mod fields;
mod fts;
mod list;
mod load;
mod ops;
mod postgres;
mod save;
mod search;
pub mod store;
pub mod view;

pub use delete::{SnippetDelete, SnippetDeleteInput, SnippetDeleteOutput};
pub use list::{DEFAULT_LIMIT, MAX_LIMIT, SnippetList, SnippetListInput, SnippetListing};
pub use load::{SnippetLoad, SnippetLoadInput, SnippetLoadOutput};
pub use save::{SaveKind, SnippetSave, SnippetSaveInput, SnippetSaveOutput};
pub use store::{SnippetError, SnippetScope, SnippetStore};
pub use view::{Snippet, SnippetLine};

use std::sync::Arc;

use toolbelt_core::{DynTool, erase};

/// The snippet tools, erased.
pub fn tools() -> Vec<Arc<dyn DynTool>> {
    vec![erase(SnippetSave), erase(SnippetLoad), erase(SnippetList), erase(SnippetDelete)]
}
