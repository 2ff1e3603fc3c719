//! The code index behind `code_query`: the symbols of a workspace root's source files
//! (tree-sitter tag queries, [`langs`]) and its file paths, in SQLite under the user's cache
//! directory, one database per root, brought up to date on each use ([`scan`]) and searched
//! by rank ([`search`]).

pub mod langs;
pub mod scan;
pub mod search;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use toolbelt_core::{ToolContext, ToolError};

use crate::fs::walk::guard::Skipped;
use crate::fs::walk::open::open_searched;
use crate::fs::walk::{Start, WalkOptions, walker};
use scan::{Found, rel_of, stamp};
use store::Store;

/// Where the indexes are kept: a directory the front end names (the binary:
/// `$XDG_CACHE_HOME/toolbelt/code-index`); without it, that directory from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeIndexDir(pub PathBuf);

impl CodeIndexDir {
    /// `$XDG_CACHE_HOME/toolbelt/code-index` (`~/.cache/…`; a per-user folder of the temp
    /// directory when neither is set).
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let cache = var("XDG_CACHE_HOME")
            .or_else(|| var("HOME").map(|h| h.join(".cache")))
            .unwrap_or_else(|| std::env::temp_dir().join(format!("toolbelt-{}", nix::unistd::geteuid())));
        Self(cache.join("toolbelt/code-index"))
    }

    /// The database for `root`: its name and a hash of its path.
    pub fn database(&self, root: &Path) -> PathBuf {
        let name: String = root
            .file_name()
            .map(|n| {
                n.to_string_lossy().chars().filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_')).take(40).collect()
            })
            .unwrap_or_default();
        let hash = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
        self.0.join(format!("{name}-{hash:016x}.db"))
    }
}

/// What a refresh did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Refreshed {
    /// Files re-read and re-tagged.
    pub updated: usize,
    /// Files dropped.
    pub removed: usize,
}

/// The index of the workspace root holding the session's cwd, up to date.
pub struct Index {
    /// The root, canonical.
    pub root: PathBuf,
    /// The database.
    pub store: Store,
    /// What bringing it up to date did.
    pub refreshed: Refreshed,
    /// The workspace, opened for this call.
    start: Start,
}

impl Index {
    /// Opens the index of the root holding the cwd and brings it up to date with the tree.
    pub fn open(cx: &ToolContext) -> Result<Self, ToolError> {
        let start = Start::resolve(cx, None)?;
        let root = start.ws.root_path(&start.loc).to_path_buf();
        let dir = cx.service::<CodeIndexDir>().map_or_else(CodeIndexDir::from_env, |d| (*d).clone());
        let db = dir.database(&root);
        let mut store = Store::open(&db).map_err(|e| ToolError::failed(e.to_string()))?;
        let found = walk(&root, cx)?;
        if cx.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        let seen = store.seen().map_err(|e| ToolError::failed(e.to_string()))?;
        let threads = crate::blocking::processors();
        let changes = scan::diff(&seen, found, threads, &|rel: &str| open(&start, &root, rel));
        let refreshed = Refreshed { updated: changes.replaced.len(), removed: changes.removed.len() };
        if !changes.is_empty() {
            store.apply(&changes).map_err(|e| ToolError::failed(e.to_string()))?;
        }
        Ok(Self { root, store, refreshed, start })
    }

    /// Whether this call may read the file at `rel` (below the root) now: opened as every
    /// file tool opens one — confined, a regular file, and, when it has other names (hard
    /// links), only if none of them is hidden from this session. The index is shared by
    /// sessions with different rules, so what it holds is shown only after this check.
    pub fn readable(&self, rel: &str) -> bool {
        open(&self.start, &self.root, rel).is_ok()
    }
}

/// Opens `rel` below `root` as Grep opens a file.
fn open(start: &Start, root: &Path, rel: &str) -> std::io::Result<std::fs::File> {
    open_searched(&start.ws, start.ws.dir(&start.loc), Path::new(rel), &root.join(rel))
}

/// Every file below `root` a search would visit (`.gitignore` respected, hidden and denied
/// paths skipped), with its size and time.
fn walk(root: &Path, cx: &ToolContext) -> Result<Vec<Found>, ToolError> {
    let skipped = Skipped::default();
    let options = WalkOptions { hidden: false, no_ignore: false, max_depth: None, overrides: None, types: None };
    let builder = walker(root, cx, options, &skipped)?;
    let found: Mutex<Vec<Found>> = Mutex::new(Vec::new());
    let cancel = cx.cancellation().clone();
    builder.build_parallel().run(|| {
        let found = &found;
        let cancel = cancel.clone();
        Box::new(move |entry| {
            if cancel.is_cancelled() {
                return ignore::WalkState::Quit;
            }
            let Ok(entry) = entry else { return ignore::WalkState::Continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                return ignore::WalkState::Continue;
            }
            let (Ok(meta), Some(rel)) = (entry.metadata(), rel_of(root, entry.path())) else {
                return ignore::WalkState::Continue;
            };
            let (size, mtime_ns) = stamp(&meta);
            found.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(Found { rel, size, mtime_ns });
            ignore::WalkState::Continue
        })
    });
    Ok(found.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner))
}
