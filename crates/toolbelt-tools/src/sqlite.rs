//! What the SQLite stores toolbelt keeps for the user share (the task list, the snippets):
//! the owner-only file and directory, WAL mode switched on with retries, and the error codes
//! that mean "busy" or "damaged".
//!
//! Each store opens its own connection per call and maps these into its own error enum, whose
//! messages name the store the model knows ("the task list", "the snippets").

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, ErrorCode};

/// Why a database file could not be made ready.
#[derive(Debug)]
pub(crate) enum FileError {
    /// The file or its directory could not be created, opened or secured.
    Io {
        /// The file or directory.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// Something other than a regular file is where the database should be.
    NotAFile,
}

/// What an SQLite error means for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SqlKind {
    /// Another connection holds the lock.
    Busy,
    /// The file is not a database of this store, or is damaged.
    Corrupt,
    /// Anything else.
    Other,
}

/// Classifies an SQLite error: busy, damaged (including a table or column that is missing,
/// or a value of the wrong type), or other.
pub(crate) fn kind_of(e: &rusqlite::Error) -> SqlKind {
    match e {
        rusqlite::Error::SqliteFailure(f, message) => match f.code {
            ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => SqlKind::Busy,
            ErrorCode::NotADatabase | ErrorCode::DatabaseCorrupt => SqlKind::Corrupt,
            _ if message.as_deref().is_some_and(|m| m.starts_with("no such")) => SqlKind::Corrupt,
            _ => SqlKind::Other,
        },
        rusqlite::Error::FromSqlConversionFailure(..)
        | rusqlite::Error::InvalidColumnType(..)
        | rusqlite::Error::IntegralValueOutOfRange(..) => SqlKind::Corrupt,
        _ => SqlKind::Other,
    }
}

/// Makes the directory (`0700`) and the file (`0600`) when `create`, tightening looser ones;
/// `false` when the file does not exist and `create` is false. SQLite gives the `-wal` and
/// `-shm` files the database's mode.
pub(crate) fn prepare_file(path: &Path, create: bool) -> Result<bool, FileError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| FileError::Io { path, source }
    };
    if create && let Some(dir) = path.parent() {
        DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io(dir))?;
        let meta = std::fs::metadata(dir).map_err(io(dir))?;
        if meta.permissions().mode() & 0o077 != 0 {
            std::fs::set_permissions(dir, Permissions::from_mode(0o700)).map_err(io(dir))?;
        }
    }
    let file = match OpenOptions::new().read(true).write(true).create(create).mode(0o600).open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !create => return Ok(false),
        Err(e) => return Err(io(path)(e)),
    };
    let meta = file.metadata().map_err(io(path))?;
    if !meta.is_file() {
        return Err(FileError::NotAFile);
    }
    if meta.permissions().mode() & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(0o600)).map_err(io(path))?;
    }
    Ok(true)
}

/// Puts the database in WAL mode (once; the mode is kept in the file), so readers never wait
/// for a writer. Switching needs a moment alone with the file, so a busy answer is retried
/// until `timeout`.
pub(crate) fn use_wal(conn: &Connection, timeout: Duration) -> Result<(), rusqlite::Error> {
    let started = Instant::now();
    loop {
        let mode = conn.query_row("PRAGMA journal_mode", [], |r| r.get::<_, String>(0))?;
        if mode.eq_ignore_ascii_case("wal") {
            return Ok(());
        }
        match conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get::<_, String>(0)) {
            Ok(_) => {}
            Err(e) if kind_of(&e) == SqlKind::Busy && started.elapsed() < timeout => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Milliseconds since the epoch, for rows' times.
pub(crate) fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

/// Why a database could not be brought to a store's schema.
#[derive(Debug)]
pub(crate) enum MigrateError {
    /// SQLite failed.
    Sql(rusqlite::Error),
    /// A newer version wrote it (`PRAGMA user_version`).
    Newer(i64),
    /// It holds another program's tables, or a version this one never wrote.
    Foreign(String),
}

/// Creates `schema` (at `version`, kept in `PRAGMA user_version`) in a new database, and
/// checks an existing one is at `version`: in one immediate transaction, so processes opening
/// a new database at once create it once.
pub(crate) fn migrate(conn: &mut Connection, schema: &str, version: i64) -> Result<(), MigrateError> {
    let read = |conn: &Connection| conn.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0));
    match read(conn).map_err(MigrateError::Sql)? {
        found if found == version => return Ok(()),
        found if found > version => return Err(MigrateError::Newer(found)),
        _ => {}
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate).map_err(MigrateError::Sql)?;
    match read(&tx).map_err(MigrateError::Sql)? {
        0 => {
            let tables: i64 =
                tx.query_row("SELECT count(*) FROM sqlite_schema", [], |r| r.get(0)).map_err(MigrateError::Sql)?;
            if tables > 0 {
                return Err(MigrateError::Foreign("it holds tables of another program".into()));
            }
            tx.execute_batch(schema).map_err(MigrateError::Sql)?;
            tx.pragma_update(None, "user_version", version).map_err(MigrateError::Sql)?;
        }
        found if found == version => {}
        found if found > version => return Err(MigrateError::Newer(found)),
        found => return Err(MigrateError::Foreign(format!("unknown schema version {found}"))),
    }
    tx.commit().map_err(MigrateError::Sql)
}
