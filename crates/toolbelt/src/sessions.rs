//! Old sessions' files are cleaned up: a session's directory (saved state, spilled output,
//! task logs) untouched for [`MAX_AGE`] is removed (a named session's for
//! [`MAX_AGE_NAMED`]), and when the sessions of a project hold more than [`MAX_BYTES`] the
//! oldest go first until they fit. Run when a session opens; best effort, never an error.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// How long an unnamed session's files are kept after their last change.
pub const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// How long a named session (`--session NAME`) is kept after its last use.
pub const MAX_AGE_NAMED: Duration = Duration::from_secs(30 * 24 * 3600);
/// Most bytes a project's sessions may hold.
pub const MAX_BYTES: u64 = 1024 * 1024 * 1024;

/// A session directory: when it last changed, how big it is, whether it is named.
struct Found {
    path: PathBuf,
    changed: SystemTime,
    bytes: u64,
    named: bool,
}

/// Removes old sessions under `dir`; see the module docs.
pub fn clean(dir: &Path) {
    clean_with(dir, SystemTime::now(), MAX_AGE, MAX_AGE_NAMED, MAX_BYTES);
}

fn clean_with(dir: &Path, now: SystemTime, max_age: Duration, max_age_named: Duration, max_bytes: u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut found: Vec<Found> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| {
            let path = e.path();
            let (changed, bytes) = newest_and_size(&path);
            let name = e.file_name().to_string_lossy().into_owned();
            let named = !["call-", "batch-", "mcp-"].iter().any(|p| name.starts_with(p));
            Found { path, changed, bytes, named }
        })
        .collect();
    found.retain(|f| {
        let limit = if f.named { max_age_named } else { max_age };
        let old = now.duration_since(f.changed).is_ok_and(|age| age > limit);
        if old {
            remove(&f.path);
        }
        !old
    });
    let mut total: u64 = found.iter().map(|f| f.bytes).sum();
    found.sort_by_key(|f| f.changed);
    for f in &found {
        if total <= max_bytes {
            break;
        }
        remove(&f.path);
        total = total.saturating_sub(f.bytes);
    }
}

fn remove(path: &Path) {
    if let Err(e) = std::fs::remove_dir_all(path) {
        tracing::debug!(error = %e, path = %path.display(), "cannot remove an old session's files");
    }
}

/// The newest modification time under `path` (itself included) and the total size of its
/// files; symlinks are not followed.
fn newest_and_size(path: &Path) -> (SystemTime, u64) {
    let mut newest = std::fs::symlink_metadata(path).and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
    let mut bytes = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.metadata() else { continue };
            if let Ok(modified) = meta.modified() {
                newest = newest.max(modified);
            }
            if meta.is_dir() {
                stack.push(entry.path());
            } else {
                bytes += meta.len();
            }
        }
    }
    (newest, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_and_oversized_sessions_go_named_ones_last() {
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, bytes: usize| {
            std::fs::create_dir_all(dir.path().join(name).join("spill")).unwrap();
            std::fs::write(dir.path().join(name).join("spill/x.log"), vec![b'x'; bytes]).unwrap();
        };
        make("call-1-1", 10);
        make("mcp-2-2", 10);
        make("work", 10);
        let day = Duration::from_secs(86_400);
        // Ten days on: the unnamed ones are older than a week, the named one is kept.
        clean_with(dir.path(), SystemTime::now() + 10 * day, MAX_AGE, MAX_AGE_NAMED, MAX_BYTES);
        let left = |d: &Path| {
            let mut names: Vec<String> =
                std::fs::read_dir(d).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
            names.sort();
            names
        };
        assert_eq!(left(dir.path()), ["work"]);
        // Over the size limit, the oldest go first.
        make("batch-3-3", 100);
        clean_with(dir.path(), SystemTime::now(), MAX_AGE, MAX_AGE_NAMED, 100);
        assert_eq!(left(dir.path()), ["batch-3-3"]);
    }
}
