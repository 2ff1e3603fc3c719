//! A session: the state its calls share, where its files go, and its execution lock.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock as StdRwLock};

use tokio::sync::RwLock;
use toolbelt_core::SessionState;

use crate::client::ClientInfo;

/// Why a saved session could not be loaded or saved.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// Reading or writing the session file failed.
    #[error("session file {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The session file is not valid.
    #[error("session file {path} is not a valid saved session ({source}); delete it to start afresh")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The decoding error.
        source: serde_json::Error,
    },
}

/// Why a session starts: the `source` SessionStart hooks get, and their matchers match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StartSource {
    /// A new session (`startup`).
    Startup,
    /// A named session whose saved state was restored (`resume`).
    Resume,
}

impl StartSource {
    /// The name hooks see.
    pub fn as_str(self) -> &'static str {
        match self {
            StartSource::Startup => "startup",
            StartSource::Resume => "resume",
        }
    }
}

/// Why a session ends: the `reason` SessionEnd hooks get, and their matchers match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EndReason {
    /// Its front end is done with it: the command finished, the connection closed (`exit`).
    Exit,
    /// Any other ending (`other`).
    Other,
}

impl EndReason {
    /// The name hooks see.
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Exit => "exit",
            EndReason::Other => "other",
        }
    }
}

/// One session: a batch, an MCP connection, or a named CLI session.
///
/// Its calls share the cwd, the roots and the typed state slots (the file-read ledger, the
/// todo list…). Exclusive calls hold the write side of its execution lock, shared calls the
/// read side, so an exclusive call never overlaps another call of the same session, whoever
/// sent them.
pub struct Session {
    state: Arc<SessionState>,
    data_dir: PathBuf,
    exec_lock: RwLock<()>,
    seq: AtomicU64,
    client: StdRwLock<Arc<ClientInfo>>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("id", &self.state.id()).field("data_dir", &self.data_dir).finish()
    }
}

impl Session {
    /// A session with the given id, cwd and roots (the cwd when empty), keeping its files
    /// (spilled output, saved state) under `data_dir`, which is created when first needed.
    pub fn new(id: impl Into<String>, cwd: PathBuf, roots: Vec<PathBuf>, data_dir: PathBuf) -> Self {
        let state = SessionState::new(id, cwd, roots);
        let readable = data_dir.parent().map(Path::to_path_buf).unwrap_or_else(|| data_dir.clone());
        state.set_data_dir(data_dir.clone(), readable);
        Self {
            state: Arc::new(state),
            data_dir,
            exec_lock: RwLock::new(()),
            seq: AtomicU64::new(0),
            client: StdRwLock::new(Arc::new(ClientInfo::default())),
        }
    }

    /// The session, its calls sent by `client`.
    pub fn with_client(self, client: ClientInfo) -> Self {
        self.set_client(client);
        self
    }

    /// Says who sends the session's calls from now on (an MCP client once it introduced
    /// itself, or from a new address).
    pub fn set_client(&self, client: ClientInfo) {
        let client = Arc::new(client);
        self.state.with_slot::<crate::client::SessionClient, _>(|slot| slot.client = Some(Arc::clone(&client)));
        *self.client.write().unwrap_or_else(PoisonError::into_inner) = client;
    }

    /// Who sends the session's calls.
    pub fn client(&self) -> Arc<ClientInfo> {
        Arc::clone(&self.client.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// The session id.
    pub fn id(&self) -> &str {
        self.state.id()
    }

    /// The state shared by the session's calls.
    pub fn state(&self) -> &Arc<SessionState> {
        &self.state
    }

    /// Where the session's files go.
    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub(crate) fn exec_lock(&self) -> &RwLock<()> {
        &self.exec_lock
    }

    /// A number unique within the session, for file names.
    pub(crate) fn next_seq(&self) -> u64 {
        self.seq.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Restores the state saved at `path`, if the file exists (a missing file is a fresh
    /// session, not an error).
    pub fn load_state(&self, path: &Path) -> Result<(), SessionError> {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(source) => return Err(SessionError::Io { path: path.to_path_buf(), source }),
        };
        let corrupt = |source| SessionError::Corrupt { path: path.to_path_buf(), source };
        let value: serde_json::Value = serde_json::from_slice(&bytes).map_err(corrupt)?;
        self.state.load(value).map_err(corrupt)?;
        // The saved state holds no client (whoever opens the session is): the one said
        // before loading is mirrored into the state again.
        self.set_client((*self.client()).clone());
        Ok(())
    }

    /// Saves the state to `path` atomically (a temp file beside it, then a rename), so a
    /// crash mid-save never leaves a half-written session.
    pub fn save_state(&self, path: &Path) -> Result<(), SessionError> {
        let io = |source| SessionError::Io { path: path.to_path_buf(), source };
        let dir = path.parent().unwrap_or(Path::new("."));
        private_dir(dir).map_err(io)?;
        let bytes = serde_json::to_vec_pretty(&self.state.save()).map_err(|e| io(e.into()))?;
        let mut tmp = tempfile_in(dir).map_err(io)?;
        tmp.1.write_all(&bytes).map_err(io)?;
        tmp.1.sync_all().map_err(io)?;
        std::fs::rename(&tmp.0, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp.0);
            io(e)
        })
    }
}

/// Creates `dir` owner-only (`0700`; missing parents too), or narrows it to that when it
/// exists open to others. What a session keeps (its state, spilled output) is its owner's.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.is_dir() && meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// Creates a new owner-only file with a unique name in `dir`.
fn tempfile_in(dir: &Path) -> std::io::Result<(PathBuf, std::fs::File)> {
    let pid = std::process::id();
    for n in 0..1000u32 {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.subsec_nanos()).unwrap_or(0);
        let path = dir.join(format!(".state.{pid}.{nanos}.{n}.tmp"));
        match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&path) {
            Ok(f) => return Ok((path, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other("could not create a temporary file"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_serialize_as_the_names_hooks_see() {
        for source in [StartSource::Startup, StartSource::Resume] {
            assert_eq!(serde_json::to_value(source).unwrap(), source.as_str());
        }
        for reason in [EndReason::Exit, EndReason::Other] {
            assert_eq!(serde_json::to_value(reason).unwrap(), reason.as_str());
        }
        assert_eq!((StartSource::Resume.as_str(), EndReason::Exit.as_str()), ("resume", "exit"));
    }
}
