//! Temp files left behind by a writer that was killed between creating its temp file and
//! renaming it (`kill -9`, the OOM killer, a power cut).
//!
//! Each temp name carries its writer's pid: `.<name>.tb<pid>-<n>.tmp`. Before a write, the
//! directory it writes to is scanned (at most once a minute per directory and process) and a
//! temp file is removed when all of these hold:
//! - its name has exactly that shape (`tb`, digits, `-`, digits, `.tmp`; backups and entries
//!   set aside, `tbold…`/`tbdel…`, are left to the patch journal that names them);
//! - the pid in it is not this process's and no process has it now;
//! - it is a regular file last modified more than [`STALE_AFTER`] ago (a writer in another
//!   pid namespace, whose pid means nothing here, has that long to finish).
//!
//! Anything else in the directory is never touched.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};

use cap_std::fs::{Dir, MetadataExt as _};
use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// How old a dead writer's temp file must be before it is removed.
pub const STALE_AFTER: Duration = Duration::from_secs(10);

/// How often one directory is scanned, at most, by one process.
const RESCAN_AFTER: Duration = Duration::from_secs(60);

/// The writer's pid in a temp name of the shape `.<name>.tb<pid>-<n>.tmp`, or `None` for
/// any other name.
pub fn parse_temp_name(name: &OsStr) -> Option<u32> {
    let name = name.to_str()?;
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (_, tail) = rest.rsplit_once(".tb")?;
    let (pid, n) = tail.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(n) {
        return None;
    }
    pid.parse().ok()
}

/// Whether a process with this pid exists (one we may not signal exists too).
fn alive(pid: u32) -> bool {
    let Ok(raw) = i32::try_from(pid) else { return false };
    if raw <= 0 {
        return true;
    }
    !matches!(kill(Pid::from_raw(raw), None), Err(Errno::ESRCH))
}

/// A directory: device, inode and birth time.
type DirKey = (u64, u64, u128);

/// Removes the stale temp files of dead writers from `dir` (see the module's rules).
/// Best effort: a failure to list or remove is ignored.
pub fn clean_stale(dir: &Dir) {
    static SCANNED: OnceLock<Mutex<HashMap<DirKey, Instant>>> = OnceLock::new();
    let Ok(meta) = dir.dir_metadata() else { return };
    // The birth time tells a directory from a later one that got the same inode number.
    let born = meta
        .created()
        .ok()
        .and_then(|t| t.into_std().duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let key = (meta.dev(), meta.ino(), born);
    {
        let mut scanned = SCANNED.get_or_init(Mutex::default).lock().unwrap_or_else(PoisonError::into_inner);
        let now = Instant::now();
        if scanned.get(&key).is_some_and(|at| now.duration_since(*at) < RESCAN_AFTER) {
            return;
        }
        scanned.retain(|_, at| now.duration_since(*at) < RESCAN_AFTER);
        scanned.insert(key, now);
    }
    let Ok(entries) = dir.entries() else { return };
    let me = std::process::id();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = parse_temp_name(&name) else { continue };
        if pid == me || alive(pid) {
            continue;
        }
        let Ok(meta) = dir.symlink_metadata(&name) else { continue };
        let old = meta
            .modified()
            .ok()
            .and_then(|m| SystemTime::now().duration_since(m.into_std()).ok())
            .is_some_and(|age| age > STALE_AFTER);
        if meta.is_file() && old {
            let _ = dir.remove_file(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_exact_shape_is_a_temp_name() {
        let p = |s: &str| parse_temp_name(OsStr::new(s));
        assert_eq!(p(".a.txt.tb123-45.tmp"), Some(123));
        assert_eq!(p(".weird.tb.name.tb7-0.tmp"), Some(7));
        assert_eq!(p(".a.txt.tbold123-45.tmp"), None);
        assert_eq!(p(".a.txt.tbdel123-45.tmp"), None);
        assert_eq!(p("a.txt.tb123-45.tmp"), None);
        assert_eq!(p(".a.txt.tb123-45.tmp.bak"), None);
        assert_eq!(p(".a.txt.tb-45.tmp"), None);
        assert_eq!(p(".a.txt.tb12x-45.tmp"), None);
        assert_eq!(p("notes.tmp"), None);
    }
}
