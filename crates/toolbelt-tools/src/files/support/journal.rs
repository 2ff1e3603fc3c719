//! The commit journal: what makes a multi-file change (ApplyPatch) all-or-nothing even when
//! the process is killed in the middle of it.
//!
//! Renaming a staged file over its target is atomic for one file, but a patch renames
//! hundreds: a `kill -9` between two renames used to leave some files new and the rest old.
//! So before its first rename a commit writes down everything it is about to do ([`record`]):
//! every target, the staged temp file holding its new content and that content's SHA-256,
//! a second name (a hard link, else a copy) of every original it replaces, where entries to
//! delete are set aside, and the directories it made. The journal is written in two steps:
//! its header (fsynced) before anything is staged, so even a kill during staging leaves
//! nothing unaccounted for, and the line `commit` once every staged file and backup is on
//! disk — the point after which the new state can be reached without the process.
//!
//! The next write in the workspace (any of Write, Edit, MultiEdit, NotebookEdit, ApplyPatch)
//! first looks for journals left by a dead process ([`recover`]). A journal that reached
//! `commit` and whose every new content is still whole — staged with the right digest, or
//! already at its target — is **rolled forward**; any other is **rolled back** from the
//! backups ([`replay`]). Then the journal is removed. A live commit holds an exclusive
//! `flock` on its journal for its whole run, so a concurrent process never touches it; the
//! lock dies with its process.
//!
//! Where the journals live: outside the workspace, in the directory the front end gives as
//! [`JournalDir`] (the binary uses the project's directory under the user's state directory,
//! `~/.local/state/toolbelt/projects/<project>-<hash>/patch-journal/`). Not inside the
//! repository, because what a journal says is acted on: a journal planted by a cloned
//! repository or written by a sandboxed command could make toolbelt rename files of its
//! choice over protected ones. The state directory is out of reach of both. Without a
//! `JournalDir` (a library user), the same place is derived from `XDG_STATE_HOME`/`HOME`.

pub mod record;
pub mod replay;

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use nix::fcntl::{Flock, FlockArg};
use toolbelt_core::ToolContext;

use crate::fs::roots::OpenRoots;
use record::{COMMIT_LINE, Header};

/// Where the journals of multi-file commits are kept (a service the front end sets up).
#[derive(Debug, Clone)]
pub struct JournalDir(pub PathBuf);

impl JournalDir {
    /// The journal directory for a call: the configured one, else
    /// `$XDG_STATE_HOME/toolbelt/patch-journal` (`~/.local/state/toolbelt/patch-journal`).
    pub fn of(cx: &ToolContext) -> PathBuf {
        if let Some(dir) = cx.service::<JournalDir>() {
            return dir.0.clone();
        }
        crate::dirs::default_state_dir().join("patch-journal")
    }
}

/// A journal being written by a live commit; it holds the lock that tells other processes
/// so.
pub struct Journal {
    path: PathBuf,
    file: Flock<File>,
}

impl Journal {
    /// Writes `header` to a new journal in `dir` (created `0700`), locked and synced.
    pub fn create(dir: &Path, header: &Header) -> std::io::Result<Journal> {
        static N: AtomicU64 = AtomicU64::new(0);
        DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
        let id = format!("{}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        // Written under a name recovery ignores while it is incomplete, then renamed (the
        // lock stays with the file).
        let (partial, path) = (dir.join(format!("{id}.journal.new")), dir.join(format!("{id}.journal")));
        let file = OpenOptions::new().read(true).write(true).create_new(true).mode(0o600).open(&partial)?;
        let file = Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| std::io::Error::from(e))?;
        let written = (|| {
            let mut bytes = serde_json::to_vec(header).map_err(std::io::Error::other)?;
            bytes.push(b'\n');
            (&*file).write_all(&bytes)?;
            file.sync_all()?;
            std::fs::rename(&partial, &path)?;
            File::open(dir)?.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&partial);
            return Err(e);
        }
        Ok(Journal { path, file })
    }

    /// Appends the `commit` line: everything is staged and backed up, renames may begin.
    pub fn mark_committed(&mut self) -> std::io::Result<()> {
        (&*self.file).seek(SeekFrom::End(0))?;
        (&*self.file).write_all(COMMIT_LINE)?;
        self.file.sync_data()
    }

    /// Removes the journal (its commit is done, or undone).
    pub fn remove(self) -> std::io::Result<()> {
        std::fs::remove_file(&self.path)
    }
}

/// Rolls forward or back every commit a dead process left in this workspace (see the
/// module's rules). Returns a sentence for each, for the model.
pub fn recover(ws: &OpenRoots, cx: &ToolContext) -> Vec<String> {
    let dir = JournalDir::of(cx);
    let Ok(listing) = std::fs::read_dir(&dir) else { return Vec::new() };
    let mut notes = Vec::new();
    for entry in listing.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let partial = name.ends_with(".journal.new");
        if !partial && !name.ends_with(".journal") {
            continue;
        }
        if partial && writer_alive(&name) {
            // Being written right now (it is locked only a moment after it is created).
            continue;
        }
        let Ok(file) = OpenOptions::new().read(true).write(true).open(&path) else { continue };
        // A live commit holds the lock: leave its journal alone.
        let Ok(locked) = Flock::lock(file, FlockArg::LockExclusiveNonblock) else { continue };
        if partial {
            // Its process died before staging anything.
            let _ = std::fs::remove_file(&path);
            continue;
        }
        let mut bytes = Vec::new();
        if (&*locked).read_to_end(&mut bytes).is_err() {
            continue;
        }
        let Some(read) = record::parse(&bytes) else {
            tracing::warn!("{} is not a journal this version can read; it is left as it is", path.display());
            continue;
        };
        // A journal with files in a root this session lacks waits for a session that has it.
        let Some(steps) = replay::steps(ws, &read.header) else { continue };
        let forward = read.committed && replay::can_roll_forward(&steps);
        let problems = if forward { replay::roll_forward(&steps) } else { replay::roll_back(&steps) };
        let files = steps.len();
        let what = if forward {
            "completed: its files are in their new state"
        } else {
            "rolled back: its files are as they were before it"
        };
        let mut note = format!(
            "An ApplyPatch changing {files} file{} was interrupted (process {} was killed) and has now been {what}.",
            if files == 1 { "" } else { "s" },
            read.header.pid
        );
        if !problems.is_empty() {
            note.push_str(&format!(" Some of it could not be done; check these files:\n{}", problems.join("\n")));
        }
        tracing::warn!("{note}");
        notes.push(note);
        let _ = std::fs::remove_file(&path);
        drop(locked);
    }
    notes
}

/// Whether the process that named a journal `<pid>-<n>.journal…` still runs.
fn writer_alive(name: &str) -> bool {
    let pid = name.split('-').next().and_then(|p| p.parse::<i32>().ok());
    match pid {
        Some(pid) if pid > 0 => {
            !matches!(nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None), Err(nix::errno::Errno::ESRCH))
        }
        _ => false,
    }
}
