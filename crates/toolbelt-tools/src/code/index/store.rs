//! The index's SQLite database: one per workspace root, in the user's cache directory. Files
//! with their size, modification time and content hash; symbols; trigram indexes (FTS5) of
//! symbol names and paths for substring and typo-tolerant lookups.
//!
//! WAL mode and a busy timeout: a query reads while another process writes, and two
//! processes refreshing at once each apply their changes in one immediate transaction, the
//! second finding the first's work done.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, params};

use crate::sqlite::{FileError, MigrateError, migrate, prepare_file, use_wal};

/// How long a call waits for another process's write.
const BUSY_TIMEOUT: Duration = Duration::from_secs(20);

const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE files (
    id       INTEGER PRIMARY KEY,
    path     TEXT NOT NULL UNIQUE,
    lpath    TEXT NOT NULL,
    size     INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    hash     INTEGER NOT NULL,
    lang     TEXT,
    state    TEXT NOT NULL
);
CREATE TABLE symbols (
    id    INTEGER PRIMARY KEY,
    file  INTEGER NOT NULL,
    name  TEXT NOT NULL,
    lower TEXT NOT NULL,
    kind  TEXT NOT NULL,
    line  INTEGER NOT NULL,
    col   INTEGER NOT NULL,
    text  TEXT NOT NULL,
    scope TEXT
);
CREATE TABLE counts (
    files   INTEGER NOT NULL,
    symbols INTEGER NOT NULL,
    errors  INTEGER NOT NULL
);
INSERT INTO counts VALUES (0, 0, 0);
CREATE INDEX symbols_lower ON symbols (lower, file, line);
CREATE INDEX symbols_file ON symbols (file);
CREATE VIRTUAL TABLE symbols_tri USING fts5(lower, content = 'symbols', content_rowid = 'id', tokenize = 'trigram');
CREATE VIRTUAL TABLE files_tri USING fts5(lpath, content = 'files', content_rowid = 'id', tokenize = 'trigram');
CREATE TRIGGER files_added AFTER INSERT ON files BEGIN
    INSERT INTO files_tri (rowid, lpath) VALUES (new.id, new.lpath);
END;
CREATE TRIGGER files_removed AFTER DELETE ON files BEGIN
    INSERT INTO files_tri (files_tri, rowid, lpath) VALUES ('delete', old.id, old.lpath);
END;
CREATE TRIGGER symbols_added AFTER INSERT ON symbols BEGIN
    INSERT INTO symbols_tri (rowid, lower) VALUES (new.id, new.lower);
END;
CREATE TRIGGER symbols_removed AFTER DELETE ON symbols BEGIN
    INSERT INTO symbols_tri (symbols_tri, rowid, lower) VALUES ('delete', old.id, old.lower);
END;
";

/// Why the index could not be used.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// Its file or directory could not be made or opened.
    #[error("the code index at {path} cannot be opened: {reason}")]
    File {
        /// The database.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// SQLite failed (a damaged file, a full disk).
    #[error("the code index at {path} failed: {reason}; delete the file to rebuild it")]
    Sql {
        /// The database.
        path: PathBuf,
        /// What SQLite said.
        reason: String,
    },
}

/// One symbol as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    /// Its name.
    pub name: String,
    /// `function`, `class` or `variable`.
    pub kind: &'static str,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
    /// The definition's first line, trimmed.
    pub text: String,
    /// The definition it is inside (`class Config`), if any.
    pub scope: Option<String>,
}

/// A file as the index last saw it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    /// Its row.
    pub id: i64,
    /// Its size.
    pub size: i64,
    /// Its modification time, in nanoseconds.
    pub mtime_ns: i64,
    /// Its content's hash (64-bit xxh3).
    pub hash: i64,
}

/// A file new or changed since the index last saw it, with its symbols.
#[derive(Debug)]
pub struct Replaced {
    /// Below the root.
    pub path: String,
    /// Its size.
    pub size: i64,
    /// Its modification time, in nanoseconds.
    pub mtime_ns: i64,
    /// Its content's hash (64-bit xxh3).
    pub hash: i64,
    /// Its language, when it has one.
    pub lang: Option<&'static str>,
    /// `ok`, `error` or `skipped`.
    pub state: &'static str,
    /// Its symbols.
    pub symbols: Vec<Symbol>,
}

/// What changes a refresh writes.
#[derive(Debug, Default)]
pub struct Changes {
    /// Files whose size or time changed but whose content did not: (path, size, mtime).
    pub touched: Vec<(String, i64, i64)>,
    /// Files new or changed.
    pub replaced: Vec<Replaced>,
    /// Files gone.
    pub removed: Vec<String>,
}

impl Changes {
    /// Whether there is nothing to write.
    pub fn is_empty(&self) -> bool {
        self.touched.is_empty() && self.replaced.is_empty() && self.removed.is_empty()
    }
}

/// An open index.
pub struct Store {
    path: PathBuf,
    conn: Connection,
}

impl Store {
    /// Opens (creating when needed) the index at `path`.
    pub fn open(path: &Path) -> Result<Self, IndexError> {
        let file_error = |reason: String| IndexError::File { path: path.to_path_buf(), reason };
        prepare_file(path, true).map_err(|e| match e {
            FileError::Io { source, .. } => file_error(source.to_string()),
            FileError::NotAFile => file_error("something other than a regular file is there".into()),
        })?;
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let mut conn = Connection::open_with_flags(path, flags).map_err(|e| file_error(e.to_string()))?;
        let store_sql = |e: rusqlite::Error| IndexError::Sql { path: path.to_path_buf(), reason: e.to_string() };
        conn.busy_timeout(BUSY_TIMEOUT).map_err(store_sql)?;
        use_wal(&conn, BUSY_TIMEOUT).map_err(store_sql)?;
        // Each call opens its own connection: reading the file through the page cache's
        // mapping spares a large index's pages being copied into a fresh cache every time.
        conn.pragma_update(None, "mmap_size", 1_i64 << 30).map_err(store_sql)?;
        migrate(&mut conn, SCHEMA, SCHEMA_VERSION).map_err(|e| match e {
            MigrateError::Sql(e) => store_sql(e),
            MigrateError::Newer(found) => IndexError::Sql {
                path: path.to_path_buf(),
                reason: format!("a newer toolbelt wrote it (schema {found})"),
            },
            MigrateError::Foreign(reason) => IndexError::Sql { path: path.to_path_buf(), reason },
        })?;
        Ok(Self { path: path.to_path_buf(), conn })
    }

    fn sql(&self, e: rusqlite::Error) -> IndexError {
        IndexError::Sql { path: self.path.clone(), reason: e.to_string() }
    }

    /// The underlying connection, for queries.
    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    /// Every file the index holds, by path.
    pub fn seen(&self) -> Result<HashMap<String, Seen>, IndexError> {
        let mut stmt =
            self.conn.prepare("SELECT id, path, size, mtime_ns, hash FROM files").map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(1)?,
                    Seen { id: r.get(0)?, size: r.get(2)?, mtime_ns: r.get(3)?, hash: r.get(4)? },
                ))
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// Writes `changes` in one transaction.
    pub fn apply(&mut self, changes: &Changes) -> Result<(), IndexError> {
        let path = self.path.clone();
        let sql = |e: rusqlite::Error| IndexError::Sql { path: path.clone(), reason: e.to_string() };
        let tx = self.conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(sql)?;
        {
            let mut touch = tx.prepare("UPDATE files SET size = ?2, mtime_ns = ?3 WHERE path = ?1").map_err(sql)?;
            for (p, size, mtime) in &changes.touched {
                touch.execute(params![p, size, mtime]).map_err(sql)?;
            }
            let mut drop_symbols =
                tx.prepare("DELETE FROM symbols WHERE file = (SELECT id FROM files WHERE path = ?1)").map_err(sql)?;
            let mut drop_file = tx.prepare("DELETE FROM files WHERE path = ?1").map_err(sql)?;
            for p in changes.removed.iter().chain(changes.replaced.iter().map(|r| &r.path)) {
                drop_symbols.execute([p]).map_err(sql)?;
                drop_file.execute([p]).map_err(sql)?;
            }
            let mut add_file = tx
                .prepare(
                    "INSERT INTO files (path, lpath, size, mtime_ns, hash, lang, state) \
                     VALUES (?1, ?7, ?2, ?3, ?4, ?5, ?6)",
                )
                .map_err(sql)?;
            let mut add_symbol = tx
                .prepare(
                    "INSERT INTO symbols (file, name, lower, kind, line, col, text, scope) \
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                )
                .map_err(sql)?;
            for r in &changes.replaced {
                let lpath = r.path.to_lowercase();
                add_file.execute(params![r.path, r.size, r.mtime_ns, r.hash, r.lang, r.state, lpath]).map_err(sql)?;
                let file = tx.last_insert_rowid();
                for s in &r.symbols {
                    add_symbol
                        .execute(params![file, s.name, s.name.to_lowercase(), s.kind, s.line, s.col, s.text, s.scope])
                        .map_err(sql)?;
                }
            }
            // Kept here so a query does not count a large index's rows.
            tx.execute(
                "UPDATE counts SET files = (SELECT count(*) FROM files), symbols = (SELECT count(*) FROM symbols), \
                 errors = (SELECT count(*) FROM files WHERE state = 'error')",
                [],
            )
            .map_err(sql)?;
        }
        tx.commit().map_err(sql)
    }

    /// How many files, symbols and files that did not parse the index holds.
    pub fn counts(&self) -> Result<(u64, u64, u64), IndexError> {
        self.conn
            .query_row("SELECT files, symbols, errors FROM counts", [], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
            })
            .map(|(a, b, c)| (a.unsigned_abs(), b.unsigned_abs(), c.unsigned_abs()))
            .map_err(|e| self.sql(e))
    }
}
