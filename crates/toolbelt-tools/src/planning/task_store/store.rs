//! Where a task list is kept, and opening its database.
//!
//! A list is one SQLite database file. The front end says which with the [`TaskListStore`]
//! service: the binary gives each project its own list
//! (`$XDG_STATE_HOME/toolbelt/projects/<project>-<hash>/tasks.db`) and, when a list is named
//! (`--task-list NAME`, `TOOLBELT_TASK_LIST`), the named list shared by every session,
//! sub-agent and process that names it (`$XDG_STATE_HOME/toolbelt/task-lists/NAME.db`).
//! Without the service (a library calling the tools directly) the list is the named list
//! that `TOOLBELT_TASK_LIST` names, else the one named `default`.
//!
//! The database and its directory are the owner's only (`0600`, `0700`; SQLite gives its
//! `-wal` and `-shm` files the database's mode). It runs in WAL mode, so readers never wait
//! for a writer, and every connection waits up to [`BUSY_TIMEOUT`] for another process's
//! write. A file that is not a task list database, or is damaged, is an error that names it;
//! nothing here panics on what a file holds.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use toolbelt_core::{ToolContext, ToolError};

use super::postgres::PgTx;
use super::tx::{ListTx, SqliteTx};
use crate::sqlite::{self, FileError};
use crate::storage::{SharedStorage, StorageError};

/// How long a call waits for another process's transaction on the same list to end.
pub const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// The variable naming the task list when no front end chose one (the binary's
/// `--task-list` reads it too).
pub const TASK_LIST_VAR: &str = "TOOLBELT_TASK_LIST";

/// The list used when nothing names one and no front end set a [`TaskListStore`] up.
pub const DEFAULT_LIST: &str = "default";

/// The longest list name.
pub const MAX_NAME_LEN: usize = 64;

/// The schema this version writes (`PRAGMA user_version`).
const SCHEMA_VERSION: i64 = 1;

/// The tables: tasks, and who blocks whom. A deleted task keeps its row (status `deleted`,
/// so its id is never given again and a reference to it can say it was deleted) but loses
/// its edges.
const SCHEMA: &str = "
CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    subject     TEXT NOT NULL,
    description TEXT NOT NULL,
    active_form TEXT,
    status      TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'completed', 'deleted')),
    owner       TEXT,
    metadata    TEXT NOT NULL DEFAULT '{}',
    created_ms  INTEGER NOT NULL,
    updated_ms  INTEGER NOT NULL
);
CREATE TABLE blocks (
    blocker INTEGER NOT NULL REFERENCES tasks (id),
    blocked INTEGER NOT NULL REFERENCES tasks (id),
    PRIMARY KEY (blocker, blocked),
    CHECK (blocker <> blocked)
) WITHOUT ROWID;
CREATE INDEX blocks_by_blocked ON blocks (blocked, blocker);
";

/// Which task list the tools work on: its database file, and its name when it is a named
/// list (a service the front end sets up; see the module docs for the default); kept in a
/// PostgreSQL database several machines share instead of the file when `shared` is set.
#[derive(Debug, Clone)]
pub struct TaskListStore {
    /// The database file (when shared, its name still tells a project's list from another's).
    pub path: PathBuf,
    /// The list's name when it was chosen by name; `None` for a project's own list.
    pub name: Option<String>,
    /// The shared storage keeping the list instead of the file, if any.
    pub shared: Option<Arc<SharedStorage>>,
}

/// Why the task list could not be read or changed. Every message says what to do next.
#[derive(Debug, thiserror::Error)]
pub enum TaskListError {
    /// A list name that cannot be a file name.
    #[error(
        "invalid task list name `{0}`: use 1 to {MAX_NAME_LEN} letters, digits, `-`, `_` or `.`, not starting \
         with `.`"
    )]
    InvalidName(String),
    /// A task id that is not a number.
    #[error("`{0}` is not a task id: ids are numbers such as \"3\" (TaskList shows them)")]
    InvalidId(String),
    /// The database's file or directory could not be created, opened or secured.
    #[error("cannot open the task list database {}: {source}", .path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The file is not a task list database, or is damaged.
    #[error(
        "the task list database {} is damaged or is not a task list ({detail}); move it aside, and a new, empty \
         list starts in its place",
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
        "the task list database {} has schema version {found}, newer than this toolbelt knows ({SCHEMA_VERSION}); \
         use a newer toolbelt",
        .path.display()
    )]
    Newer {
        /// The database file.
        path: PathBuf,
        /// Its schema version.
        found: i64,
    },
    /// Another process held the list locked (for longer than [`BUSY_TIMEOUT`], or in a way
    /// that waiting cannot resolve).
    #[error(
        "the task list {} is busy: another process is changing it (this call waits up to {} s for that); try \
         again",
        .path.display(),
        BUSY_TIMEOUT.as_secs()
    )]
    Busy {
        /// The database file.
        path: PathBuf,
    },
    /// Any other database failure.
    #[error("the task list database {} failed: {source}", .path.display())]
    Sql {
        /// The database file.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// No task with this id (or one that was deleted).
    #[error("{}", unknown_message(*.id, *.deleted, .list, .existing))]
    Unknown {
        /// The id asked for.
        id: i64,
        /// Whether the task existed and was deleted.
        deleted: bool,
        /// The list, as messages name it.
        list: String,
        /// The ids of the tasks that exist, in order.
        existing: Vec<i64>,
    },
    /// Blockers that would go round in a circle: `[a, b, …, a]`, each blocking the next.
    #[error(
        "refused: that makes a cycle of blockers, {} (none of them could ever start); nothing was changed",
        cycle_text(.0)
    )]
    Cycle(Vec<i64>),
    /// A claim of a task someone else owns.
    #[error(
        "task #{id} is taken: its owner is `{owner}`; pick another task (TaskList shows who owns what), or clear \
         its owner first (owner \"\") if it should change hands; nothing was changed"
    )]
    Claimed {
        /// The task.
        id: i64,
        /// Who owns it.
        owner: String,
    },
    /// The shared storage failed (unreachable, or a server error).
    #[error("{0}")]
    Shared(#[from] StorageError),
    /// An update that changes nothing.
    #[error(
        "nothing to update: give TaskUpdate a field to change besides taskId (status, subject, description, \
         activeForm, owner, metadata, addBlocks or addBlockedBy)"
    )]
    NothingToUpdate,
}

impl From<TaskListError> for ToolError {
    fn from(e: TaskListError) -> Self {
        ToolError::failed(e.to_string())
    }
}

/// "#3", as ids are shown.
pub fn show_id(id: i64) -> String {
    format!("#{id}")
}

/// "#1–#4, #6, #9": ids in order, runs shortened, at most 40 shown.
pub fn show_ids(ids: &[i64]) -> String {
    const SHOWN: usize = 40;
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &id in ids {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == id => *end = id,
            _ => runs.push((id, id)),
        }
    }
    let mut parts: Vec<String> = runs
        .iter()
        .map(|&(a, b)| match b - a {
            0 => show_id(a),
            1 => format!("{}, {}", show_id(a), show_id(b)),
            _ => format!("{}–{}", show_id(a), show_id(b)),
        })
        .collect();
    if parts.len() > SHOWN {
        let more = parts.len() - SHOWN;
        parts.truncate(SHOWN);
        parts.push(format!("and {more} more"));
    }
    parts.join(", ")
}

fn unknown_message(id: i64, deleted: bool, list: &str, existing: &[i64]) -> String {
    let what = if deleted { format!("task #{id} was deleted") } else { format!("there is no task #{id}") };
    if existing.is_empty() {
        format!("{what}: {list} is empty (TaskCreate adds tasks)")
    } else {
        format!("{what} in {list}; its tasks are {}", show_ids(existing))
    }
}

fn cycle_text(cycle: &[i64]) -> String {
    let ids: Vec<String> = cycle.iter().map(|&id| show_id(id)).collect();
    ids.join(" blocks ")
}

/// Whether `name` may name a list: it becomes a file name.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && !name.starts_with('.')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

impl TaskListStore {
    /// A project's own list, kept in `path`.
    pub fn project(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into(), name: None, shared: None }
    }

    /// The list named `name`, kept in `dir` (`dir/NAME.db`).
    pub fn named(dir: &Path, name: &str) -> Result<Self, TaskListError> {
        if !valid_name(name) {
            return Err(TaskListError::InvalidName(name.to_string()));
        }
        Ok(Self { path: dir.join(format!("{name}.db")), name: Some(name.to_string()), shared: None })
    }

    /// The directory named lists are kept in, under toolbelt's state directory
    /// (`$XDG_STATE_HOME/toolbelt`).
    pub fn lists_dir(state_dir: &Path) -> PathBuf {
        state_dir.join("task-lists")
    }

    /// The list a call works on: the front end's, else the named list `TOOLBELT_TASK_LIST`
    /// names (or [`DEFAULT_LIST`]) under `$XDG_STATE_HOME/toolbelt/task-lists`.
    pub fn of(cx: &ToolContext) -> Result<Self, TaskListError> {
        if let Some(store) = cx.service::<TaskListStore>() {
            return Ok((*store).clone());
        }
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        let state = var("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".local/state")))
            .unwrap_or_else(|| std::env::temp_dir().join(format!("toolbelt-{}", nix::unistd::geteuid())));
        let name = var(TASK_LIST_VAR).map(|v| v.to_string_lossy().into_owned());
        Self::named(&Self::lists_dir(&state.join("toolbelt")), name.as_deref().unwrap_or(DEFAULT_LIST))
    }

    /// The list as messages name it: "the task list `sprint`", "this project's task list".
    pub fn label(&self) -> String {
        match &self.name {
            Some(name) => format!("the task list `{name}`"),
            None => "this project's task list".to_string(),
        }
    }

    /// An error of this list's database, classified: busy, damaged, or other.
    pub(crate) fn sql(&self, e: rusqlite::Error) -> TaskListError {
        super::tx::sqlite_error(&self.path, e)
    }

    /// A damaged-list error naming `detail`.
    pub(crate) fn corrupt(&self, detail: impl Into<String>) -> TaskListError {
        match &self.shared {
            Some(shared) => shared.damaged(format!("{} is damaged: {}", self.label(), detail.into())).into(),
            None => TaskListError::Corrupt { path: self.path.clone(), detail: detail.into() },
        }
    }

    /// Where the list is kept, for a person: its file, or `PostgreSQL user@host:port/db`.
    pub fn place(&self) -> String {
        match &self.shared {
            Some(shared) => format!("PostgreSQL {}", shared.server()),
            None => self.path.display().to_string(),
        }
    }

    /// Keeps the list in `shared` instead of its file.
    pub fn shared(mut self, shared: Arc<SharedStorage>) -> Self {
        self.shared = Some(shared);
        self
    }

    /// What names the list in shared storage: `named:NAME`, or `project:<project>-<hash>`
    /// (the name of the project's state directory, the same on every machine serving the
    /// project from the same path).
    fn key(&self) -> String {
        match &self.name {
            Some(name) => format!("named:{name}"),
            None => {
                let dir = self.path.parent().and_then(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned());
                format!("project:{}", dir.unwrap_or_default())
            }
        }
    }

    /// A transaction that reads: `None` for a list nobody wrote to yet (its file missing).
    pub(crate) fn read(&self) -> Result<Option<Box<dyn ListTx + '_>>, TaskListError> {
        if let Some(shared) = &self.shared {
            return Ok(Some(Box::new(PgTx::begin(shared, self.key(), false)?)));
        }
        let Some(conn) = self.open(false)? else { return Ok(None) };
        Ok(Some(Box::new(SqliteTx::begin(conn, self.path.clone(), false)?)))
    }

    /// A transaction that writes, holding the list's write lock; the list is made when
    /// missing.
    pub(crate) fn write(&self) -> Result<Box<dyn ListTx + '_>, TaskListError> {
        if let Some(shared) = &self.shared {
            return Ok(Box::new(PgTx::begin(shared, self.key(), true)?));
        }
        let conn = self.open(true)?.ok_or_else(|| TaskListError::Io {
            path: self.path.clone(),
            source: std::io::Error::other("the database could not be created"),
        })?;
        Ok(Box::new(SqliteTx::begin(conn, self.path.clone(), true)?))
    }

    /// Opens the database, ready for use: `None` when it does not exist and `create` is
    /// false (a list nobody wrote to yet is empty, and reading it creates nothing).
    pub(crate) fn open(&self, create: bool) -> Result<Option<Connection>, TaskListError> {
        if !self.prepare_file(create)? {
            return Ok(None);
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(&self.path, flags).map_err(|e| self.sql(e))?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(|e| self.sql(e))?;
        self.use_wal(&conn)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(|e| self.sql(e))?;
        conn.pragma_update(None, "foreign_keys", true).map_err(|e| self.sql(e))?;
        self.migrate(&mut conn)?;
        Ok(Some(conn))
    }

    /// Makes the directory and the file, owner-only, when `create`; `false` when the file
    /// does not exist and `create` is false.
    fn prepare_file(&self, create: bool) -> Result<bool, TaskListError> {
        sqlite::prepare_file(&self.path, create).map_err(|e| match e {
            FileError::Io { path, source } => TaskListError::Io { path, source },
            FileError::NotAFile => self.corrupt("it is not a regular file"),
        })
    }

    /// Puts the database in WAL mode (see [`sqlite::use_wal`]).
    fn use_wal(&self, conn: &Connection) -> Result<(), TaskListError> {
        sqlite::use_wal(conn, BUSY_TIMEOUT).map_err(|e| self.sql(e))
    }

    /// Creates the schema in a new database, and checks an existing one is one this version
    /// can read.
    fn migrate(&self, conn: &mut Connection) -> Result<(), TaskListError> {
        crate::sqlite::migrate(conn, SCHEMA, SCHEMA_VERSION).map_err(|e| match e {
            crate::sqlite::MigrateError::Sql(e) => self.sql(e),
            crate::sqlite::MigrateError::Newer(found) => TaskListError::Newer { path: self.path.clone(), found },
            crate::sqlite::MigrateError::Foreign(detail) => self.corrupt(detail),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_shown_in_runs() {
        assert_eq!(show_ids(&[1, 2, 3, 4, 6, 9, 10]), "#1–#4, #6, #9, #10");
        assert_eq!(show_ids(&[]), "");
        let many: Vec<i64> = (0..100).map(|i| i * 2).collect();
        assert!(show_ids(&many).ends_with("and 60 more"));
    }

    #[test]
    fn names_must_be_file_names() {
        for good in ["default", "sprint-3", "a.b_c", "X"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", ".hidden", "a/b", "..", "with space", &"x".repeat(65)] {
            assert!(!valid_name(bad), "{bad}");
        }
        assert!(TaskListStore::named(Path::new("/s"), "../x").is_err());
        assert_eq!(TaskListStore::named(Path::new("/s"), "x").unwrap().path, Path::new("/s/x.db"));
    }

    #[test]
    fn cycles_read_as_a_chain() {
        assert_eq!(
            TaskListError::Cycle(vec![3, 1, 2, 3]).to_string(),
            "refused: that makes a cycle of blockers, #3 blocks #1 blocks #2 blocks #3 (none of them could ever \
             start); nothing was changed"
        );
    }
}
