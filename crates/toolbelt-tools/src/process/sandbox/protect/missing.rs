//! The protected entries missing where a command's plan looked, and which of them the command
//! made.
//!
//! Looking again after every command costs a `stat` per missing name per directory (six names
//! in each root and each of its subdirectories) and a listing of each root: more than the
//! rest of the sandbox's bookkeeping. A directory in which nothing was made is recognized by
//! its status-change time instead: making, renaming or removing an entry in a directory sets
//! its ctime to the current time, and no command can set a ctime back (`touch -d` sets the
//! mtime; the ctime follows the clock, which only a privileged process sets, and commands run
//! without privileges). So a directory whose identity and ctime are what they were when the
//! command started holds no new entry. That holds only if any later change gets a different
//! ctime: a directory changed in the last seconds (file systems keep ctime to a second or two
//! at worst, the kernel's clock ticks in milliseconds) is looked into again whatever its ctime
//! says.

use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use toolbelt_core::PROTECTED_NAMES;

/// How long ago, in seconds, a directory's last change must be for its ctime to tell that
/// nothing changed since: above any file system's timestamp granularity (FAT's 2 s) and the
/// kernel clock's tick.
const SETTLED_SECS: i64 = 3;

/// The protected entries (`.git`, `.vscode`, `.idea`, `.toolbelt`, `.claude`, `.mcp.json`)
/// that did not exist in a writable root or its direct subdirectories when a command
/// started. Nothing can hold a name that does not exist yet without sealing the whole
/// directory (every new entry in the workspace refused), so a command may make one; what it
/// made ([`Missing::made`]) is then kept only if a person approves, and moved aside otherwise
/// (`set_aside.rs`); what is kept is held read-only from the next command on, like any
/// protected entry that exists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Missing {
    /// Each directory looked into, with what it lacked.
    looked: Vec<Looked>,
    /// The writable roots, with the subdirectories the plan looked into.
    roots: Vec<(PathBuf, Vec<PathBuf>)>,
}

/// One directory looked into: its state then, and the protected names it lacked.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Looked {
    dir: PathBuf,
    /// Its device, inode and ctime when that ctime was settled; `None` when it was not (or
    /// the directory could not be read): then it is always looked into again.
    stamp: Option<Stamp>,
    missing: Vec<&'static str>,
}

/// A directory's device, inode and status-change time (seconds, nanoseconds).
type Stamp = (u64, u64, i64, i64);

impl Missing {
    /// Notes what `dir` lacks, as seen now.
    pub(super) fn look(&mut self, dir: &Path, missing: Vec<&'static str>) {
        self.look_at(dir, missing, now_secs());
    }

    /// Notes a writable root and the subdirectories looked into in it.
    pub(super) fn root(&mut self, root: &Path, inside: Vec<PathBuf>) {
        self.roots.push((root.to_path_buf(), inside));
    }

    fn look_at(&mut self, dir: &Path, missing: Vec<&'static str>, now: i64) {
        let stamp = stamp(dir).filter(|s| s.2 + SETTLED_SECS <= now);
        self.looked.push(Looked { dir: dir.to_path_buf(), stamp, missing });
    }

    /// Those that exist now (not followed if a symlink): made while the command ran, also
    /// in a subdirectory of a root that the command made (`mkdir app && mkdir app/.idea`);
    /// not `.toolbelt`, nor what a person approved keeping ([`settles`]).
    pub fn made(&self) -> Vec<PathBuf> {
        let mut made = Vec::new();
        for looked in self.looked.iter().filter(|l| !l.unchanged()) {
            let now: Vec<PathBuf> = looked.missing.iter().map(|n| looked.dir.join(n)).collect();
            made.extend(now.into_iter().filter(|p| settles(p)));
        }
        for (root, seen) in &self.roots {
            // A subdirectory made in the root changed the root's ctime.
            if self.looked.iter().any(|l| l.dir == *root && l.unchanged()) {
                continue;
            }
            for dir in super::subdirs(root).into_iter().filter(|d| !seen.contains(d)) {
                made.extend(PROTECTED_NAMES.iter().map(|n| dir.join(n)).filter(|p| settles(p)));
            }
        }
        made
    }
}

/// Whether `path`, missing before, is one to settle now: it exists (a link counts, not
/// followed), no person approved keeping it, and it is not `.toolbelt`. toolbelt writes
/// there itself (its session files, the Config tool's project-local settings), reads it only
/// under the project's trust — a new settings file changes the trusted digest, so nothing
/// in it applies until a person trusts the project again — and no other program reads it.
fn settles(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n != ".toolbelt")
        && path.symlink_metadata().is_ok()
        && !super::set_aside::is_kept(path)
}

impl Looked {
    /// Whether the directory is the one looked into, with nothing made, renamed or removed
    /// in it since.
    fn unchanged(&self) -> bool {
        self.stamp.is_some() && stamp(&self.dir) == self.stamp
    }
}

fn stamp(dir: &Path) -> Option<Stamp> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    meta.is_dir().then(|| (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec()))
}

fn now_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_settled_directory_is_trusted_only_while_its_ctime_holds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let later = now_secs() + SETTLED_SECS + 1;
        let mut missing = Missing::default();
        missing.look_at(&root, vec![".idea", ".git"], later);
        assert!(missing.looked[0].unchanged(), "settled and untouched");
        assert!(missing.made().is_empty());
        std::fs::create_dir(root.join(".idea")).unwrap();
        assert!(!missing.looked[0].unchanged(), "making an entry changes the directory's ctime");
        assert_eq!(missing.made(), [root.join(".idea")]);

        // Changed in the last seconds: looked into again whatever its ctime says.
        let mut recent = Missing::default();
        recent.look_at(&root, vec![".git"], now_secs());
        assert_eq!(recent.looked[0].stamp, None);
        assert!(!recent.looked[0].unchanged());

        // Setting the times back does not hide a change: the ctime moves on.
        let mut touched = Missing::default();
        touched.look_at(&root, vec![".git"], now_secs() + SETTLED_SECS + 1);
        let before = std::fs::metadata(&root).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        let old =
            std::fs::FileTimes::new().set_modified(before.modified().unwrap()).set_accessed(before.accessed().unwrap());
        std::fs::File::open(&root).unwrap().set_times(old).unwrap();
        assert_eq!(std::fs::metadata(&root).unwrap().modified().unwrap(), before.modified().unwrap());
        assert_eq!(touched.made(), [root.join(".git")]);
    }

    #[test]
    fn a_new_subdirectory_of_a_root_is_looked_into() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let mut missing = Missing::default();
        missing.look_at(&root, vec![], now_secs() + SETTLED_SECS + 1);
        missing.root(&root, Vec::new());
        std::fs::create_dir_all(root.join("app/.vscode")).unwrap();
        assert_eq!(missing.made(), [root.join("app/.vscode")]);
    }
}
