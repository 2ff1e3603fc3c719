//! Where the snippets are kept, what they may hold, and opening their database.
//!
//! The snippets are one SQLite database file. The front end says which with the
//! [`SnippetStore`] service: the binary keeps them in the user's data directory
//! (`$XDG_DATA_HOME/toolbelt/snippets.db`, shared by every project), or, with
//! `[snippets] scope = "project"`, in the project's state directory beside its task list —
//! never inside the repository. Without the service (a library calling the tools directly)
//! they are in the user's data directory.
//!
//! The database and its directory are the owner's only (`0600`, `0700`). It runs in WAL
//! mode, so readers never wait for a writer, and every connection waits up to
//! [`BUSY_TIMEOUT`] for another process's write. A file that is not a snippets database, or
//! is damaged, is an error that names it; nothing here panics on what a file holds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{ToolContext, ToolError};

use crate::sqlite::{self, FileError, SqlKind};

/// How long a call waits for another process's transaction on the snippets to end.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The database's file name, in either place.
pub const FILE_NAME: &str = "snippets.db";

/// The longest name, in characters.
pub const MAX_NAME_CHARS: usize = 128;

/// The largest code, in bytes (1 MiB).
pub const MAX_CODE_BYTES: usize = 1 << 20;

/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 4_000;

/// The longest tag or language, in characters.
pub const MAX_LABEL_CHARS: usize = 40;

/// The most tags one snippet may have.
pub const MAX_TAGS: usize = 20;

/// The schema this version writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 1;

/// The tables: what lists show (small rows, so a list never reads code it does not show), the
/// code apart, the tags to filter by, and the full-text index over name, description and
/// code. The index keeps no copy of the text (`content = ''`); [`super::ops`] changes it in
/// the same transaction as the rows. It also indexes every word's first 2 and 3 characters,
/// so a short prefix (`pa*`, `par*`) reads one list instead of merging hundreds.
const SCHEMA: &str = "
CREATE TABLE snippets (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT NOT NULL UNIQUE,
    description TEXT NOT NULL DEFAULT '',
    language    TEXT,
    tags        TEXT NOT NULL DEFAULT '',
    created_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL
);
CREATE INDEX snippets_by_language ON snippets (language, name);
CREATE TABLE snippet_code (
    snippet INTEGER PRIMARY KEY REFERENCES snippets (id) ON DELETE CASCADE,
    code    TEXT NOT NULL
);
CREATE TABLE snippet_tags (
    tag     TEXT NOT NULL,
    snippet INTEGER NOT NULL REFERENCES snippets (id) ON DELETE CASCADE,
    PRIMARY KEY (tag, snippet)
) WITHOUT ROWID;
CREATE INDEX snippet_tags_by_snippet ON snippet_tags (snippet, tag);
CREATE VIRTUAL TABLE snippets_fts USING fts5 (
    name, description, code,
    content = '', contentless_delete = 1, prefix = '2 3',
    tokenize = 'unicode61 remove_diacritics 2'
);
";

/// Which of the two places the snippets are kept in.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SnippetScope {
    /// The user's data directory, shared by every project.
    #[default]
    User,
    /// The project's state directory: this project's own.
    Project,
}

impl SnippetScope {
    /// Every scope, in [`Self::NAMES`]'s order.
    pub const ALL: [SnippetScope; 2] = [SnippetScope::User, SnippetScope::Project];
    /// The names settings (`snippets.scope`) and outputs use.
    pub const NAMES: [&'static str; 2] = ["user", "project"];

    /// The scope's name (`user`, `project`).
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The scope of a name.
    pub fn parse(name: &str) -> Option<SnippetScope> {
        Self::NAMES.iter().position(|n| *n == name).map(|i| Self::ALL[i])
    }

    /// The snippets of this scope as messages name them.
    pub fn label(self) -> &'static str {
        match self {
            SnippetScope::User => "your snippets",
            SnippetScope::Project => "this project's snippets",
        }
    }
}

/// Where the snippets are kept (a service the front end sets up; see the module docs for the
/// default).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnippetStore {
    /// The database file.
    pub path: PathBuf,
    /// Whose snippets they are.
    pub scope: SnippetScope,
    /// On a team: the shared database keeping them instead of the file.
    pub shared: Option<super::postgres::SharedSnippets>,
}

/// Why a snippet could not be saved, found or read. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum SnippetError {
    /// An input that breaks one of the limits or rules above.
    #[error("{0}")]
    Invalid(String),
    /// No snippet with this name or id.
    #[error("{}", super::view::missing_message(.wanted, .similar, .names, *.total))]
    Missing {
        /// What was asked for: "named `x`" or "#3".
        wanted: String,
        /// Names close to the one asked for, closest first.
        similar: Vec<String>,
        /// Some of the names that exist, in order.
        names: Vec<String>,
        /// How many snippets exist.
        total: usize,
    },
    /// The database's file or directory could not be created, opened or secured.
    #[error("cannot open the snippets database {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a snippets database, or is damaged.
    #[error(
        "the snippets database {} is damaged or holds something else ({detail}); move it aside, and a new, empty \
         one starts in its place",
        .path.display()
    )]
    Corrupt {
        /// The database file.
        path: PathBuf,
        /// What was found wrong.
        detail: String,
    },
    /// The database was written by a newer version, with a schema this one does not know.
    #[error(
        "the snippets database {} has schema version {found}, newer than this toolbelt knows ({SCHEMA_VERSION}); \
         use a newer toolbelt",
        .path.display()
    )]
    Newer {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
    },
    /// Another process held the database locked for longer than [`BUSY_TIMEOUT`].
    #[error(
        "the snippets database {} is busy: another process is changing it (this call waits up to {} s for that); \
         try again",
        .path.display(),
        BUSY_TIMEOUT.as_secs()
    )]
    Busy {
        /// The database file.
        path: PathBuf,
    },
    /// The shared database failed (unreachable, or a server error).
    #[error("the snippets cannot be used: {0}")]
    Shared(crate::storage::StorageError),
    /// Any other database failure.
    #[error("the snippets database {} failed: {source}", .path.display())]
    Sql {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
}

impl From<SnippetError> for ToolError {
    fn from(e: SnippetError) -> Self {
        ToolError::failed(e.to_string())
    }
}

impl SnippetStore {
    /// The user's snippets, kept in `data_dir` (toolbelt's data directory,
    /// `$XDG_DATA_HOME/toolbelt`).
    pub fn user(data_dir: &Path) -> Self {
        Self { path: data_dir.join(FILE_NAME), scope: SnippetScope::User, shared: None }
    }

    /// A project's own snippets, kept in `project_state_dir` (the project's directory under
    /// toolbelt's state directory, beside its task list).
    pub fn project(project_state_dir: &Path) -> Self {
        Self { path: project_state_dir.join(FILE_NAME), scope: SnippetScope::Project, shared: None }
    }

    /// The same snippets kept in `shared` (a team's database) instead of the file: the user's
    /// become the team's, and a project's stay its own (by its state directory's name, the
    /// same on every replica serving one path).
    pub fn kept_in(mut self, shared: Arc<crate::storage::SharedStorage>) -> Self {
        let project = self.path.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
        self.shared = Some(super::postgres::SharedSnippets::new(shared, self.scope, &project.unwrap_or_default()));
        self
    }

    /// The snippets a call works on: the front end's, else the user's.
    pub fn of(cx: &ToolContext) -> Self {
        match cx.service::<SnippetStore>() {
            Some(store) => (*store).clone(),
            None => Self::user(&crate::dirs::default_data_dir()),
        }
    }

    /// The snippets as messages name them.
    pub fn label(&self) -> &'static str {
        self.scope.label()
    }

    /// An error of this database, classified: busy, damaged, or other.
    pub(crate) fn sql(&self, e: rusqlite::Error) -> SnippetError {
        let path = self.path.clone();
        match sqlite::kind_of(&e) {
            SqlKind::Busy => SnippetError::Busy { path },
            SqlKind::Corrupt => SnippetError::Corrupt { path, detail: e.to_string() },
            SqlKind::Other => SnippetError::Sql { path, source: e },
        }
    }

    /// A damaged-database error naming `detail`.
    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> SnippetError {
        SnippetError::Corrupt { path: self.path.clone(), detail: detail.into() }
    }

    /// Opens the database, ready for use: `None` when it does not exist and `create` is
    /// false (nobody saved a snippet yet, and reading creates nothing).
    pub(crate) fn open(&self, create: bool) -> Result<Option<Connection>, SnippetError> {
        let ready = sqlite::prepare_file(&self.path, create).map_err(|e| match e {
            FileError::Io { path, source } => SnippetError::Io { path, source },
            FileError::NotAFile => self.corrupt("it is not a regular file"),
        })?;
        if !ready {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&self.path, flags).map_err(|e| self.sql(e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| self.sql(e))?;
        sqlite::use_wal(&conn, BUSY_TIMEOUT).map_err(|e| self.sql(e))?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| self.sql(e))?;
        conn.pragma_update(None, "foreign_keys", true).map_err(|e| self.sql(e))?;
        self.migrate(&mut conn)?;
        Ok(Some(conn))
    }

    /// A connection that may write, the database created when it is missing.
    pub(crate) fn writable(&self) -> Result<Connection, SnippetError> {
        self.open(true)?.ok_or_else(|| SnippetError::Io {
            path: self.path.clone(),
            source: std::io::Error::other("the database could not be created"),
        })
    }

    /// Creates the schema in a new database, and checks an existing one is one this version
    /// can read.
    fn migrate(&self, conn: &mut Connection) -> Result<(), SnippetError> {
        crate::sqlite::migrate(conn, SCHEMA, SCHEMA_VERSION).map_err(|e| match e {
            crate::sqlite::MigrateError::Sql(e) => self.sql(e),
            crate::sqlite::MigrateError::Newer(found) => SnippetError::Newer { path: self.path.clone(), found },
            crate::sqlite::MigrateError::Foreign(detail) => self.corrupt(detail),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::SnippetScope;

    #[test]
    fn the_wire_names_are_the_settings_names() {
        for scope in SnippetScope::ALL {
            assert_eq!(serde_json::to_value(scope).unwrap(), serde_json::json!(scope.as_str()));
            assert_eq!(SnippetScope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(SnippetScope::parse("global"), None);
    }
}
