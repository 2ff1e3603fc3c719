//! A repository of toolbelt's own, for the git commands that run filters: the checkout of a
//! new worktree and `status` in one.
//!
//! A filter driver is named by the repository's attributes and defined by its configuration,
//! under any name and through any include (`[includeIf "gitdir:**/worktrees/**"]` applies only
//! where a worktree's git runs), so no list of names to switch off can be complete. Instead
//! these commands run with `--git-dir` set to a directory toolbelt makes in the worktree
//! folder for the call and removes after it:
//!
//! * `HEAD` (the commit at hand), an empty `refs/`, and `objects/info/alternates` naming the
//!   repository's object store, so every object is readable and none is written there;
//! * a `config` toolbelt writes (the format version, the object format), so the only
//!   configuration git reads is that file, the user's own (system and global, where a driver
//!   such as git-lfs is the user's program) and the command line: a few of the repository's
//!   settings that change how files are written and compared and name no program (line
//!   endings, symbolic links, file modes, case) are carried over as values, and `lfs.storage`
//!   points git-lfs at the repository's store;
//! * `info/exclude` copied from the repository (patterns, read as a regular file of at most
//!   1 MiB), so `status` ignores what the repository ignores.
//!
//! The work tree is the worktree and the index its own (`GIT_INDEX_FILE`), so what a checkout
//! writes is the worktree's, and what `status` reports is the worktree's state. A filter the
//! repository defines does not exist here: files are checked out exactly as committed. The
//! directory is in the user's state directory, where sandboxed commands cannot write, so
//! nothing can change its configuration between its making and its use.

use std::ffi::OsString;
use std::io::Read as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use toolbelt_core::ToolError;

use crate::planning::worktree::git::Git;

/// The repository's settings carried into the shadow: values that change how files are
/// written and compared, none naming a program.
const CARRIED: &str = r"^(core\.(autocrlf|eol|symlinks|ignorecase|precomposeunicode|filemode|trustctime|checkstat|checkroundtripencoding|protecthfs|protectntfs)|extensions\.objectformat)$";

/// The most of the repository's `info/exclude` copied.
const MAX_EXCLUDE: u64 = 1024 * 1024;

/// A shadow repository for the worktree at one path; removed when dropped.
pub struct Shadow {
    dir: PathBuf,
    git: Git,
    work_tree: PathBuf,
}

impl std::fmt::Debug for Shadow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shadow").field("dir", &self.dir).field("work_tree", &self.work_tree).finish()
    }
}

impl Shadow {
    /// A shadow of the worktree whose top directory is `work_tree`, made in `parent` (the
    /// worktree folder, created 0700 if missing).
    pub async fn of(work_tree: &Path, parent: &Path) -> Result<Shadow, ToolError> {
        let plain = Git::plain();
        let paths = plain.run(work_tree, &["rev-parse", "--git-common-dir", "--git-path", "index"]).await?;
        let mut lines = paths.lines().map(|l| work_tree.join(l));
        let (Some(common), Some(index)) = (lines.next(), lines.next()) else {
            return Err(ToolError::failed(format!(
                "git did not say where the repository of {} keeps its objects and index",
                work_tree.display()
            )));
        };
        let head = plain.output(work_tree, &["rev-parse", "--verify", "--quiet", "HEAD^{commit}"]).await?;
        let head = String::from_utf8_lossy(&head.stdout).trim().to_string();
        let carried = carried(&plain, work_tree).await?;
        let objects = common.join("objects");
        let dir = make_dir(parent)?;
        // From here on, dropping the shadow removes what was made.
        let mut shadow = Shadow { dir, git: Git::plain(), work_tree: work_tree.to_path_buf() };
        shadow.lay_out(&objects, &common, &head, &carried)?;
        let mut git = Git::plain()
            .with_option(option("--git-dir=", &shadow.dir))
            .with_option(option("--work-tree=", work_tree))
            .with_env("GIT_INDEX_FILE", index.as_os_str())
            .with_config("lfs.storage", common.join("lfs").display().to_string());
        for (key, value) in carried.into_iter().filter(|(k, _)| k.starts_with("core.")) {
            git = git.with_config(key, value);
        }
        shadow.git = git;
        Ok(shadow)
    }

    /// Writes the shadow's files (see the module docs).
    fn lay_out(
        &self,
        objects: &Path,
        common: &Path,
        head: &str,
        carried: &[(String, String)],
    ) -> Result<(), ToolError> {
        let failed = |what: &str, e: std::io::Error| {
            ToolError::failed(format!("cannot prepare the checkout of the worktree ({what}: {e})"))
        };
        let objects_text = objects.to_str().filter(|t| !t.contains('\n')).ok_or_else(|| {
            ToolError::failed(format!(
                "the repository's object store {} has a name git cannot be pointed at (not UTF-8, or a line break)",
                objects.display()
            ))
        })?;
        let format = match carried.iter().find(|(k, _)| k == "extensions.objectformat").map(|(_, v)| v.as_str()) {
            None | Some("sha1") => None,
            Some("sha256") => Some("sha256"),
            Some(other) => {
                return Err(ToolError::failed(format!(
                    "the repository uses the object format `{other}`, which the worktree tools do not know"
                )));
            }
        };
        for sub in ["objects/info", "refs", "info"] {
            std::fs::create_dir_all(self.dir.join(sub)).map_err(|e| failed(sub, e))?;
        }
        let head = if head.is_empty() { "ref: refs/heads/unborn".to_string() } else { head.to_string() };
        let config = match format {
            None => "[core]\n\trepositoryformatversion = 0\n\tbare = false\n".to_string(),
            Some(f) => {
                format!("[core]\n\trepositoryformatversion = 1\n\tbare = false\n[extensions]\n\tobjectformat = {f}\n")
            }
        };
        let exclude = read_exclude(&common.join("info/exclude"));
        for (name, text) in [
            ("HEAD", format!("{head}\n").into_bytes()),
            ("config", config.into_bytes()),
            ("objects/info/alternates", format!("{objects_text}\n").into_bytes()),
            ("info/exclude", exclude),
        ] {
            std::fs::write(self.dir.join(name), text).map_err(|e| failed(name, e))?;
        }
        Ok(())
    }

    /// Writes the files of `commit` into the (empty) worktree and its index.
    pub async fn checkout(&self, commit: &str) -> Result<(), ToolError> {
        self.git
            .run(&self.work_tree, &["read-tree", "--reset", "-u", "--no-recurse-submodules", commit])
            .await
            .map_err(|e| ToolError::failed(format!("checking out the worktree's files failed: {e}")))?;
        Ok(())
    }

    /// The worktree's uncommitted changes, untracked files included and ignored ones not, as
    /// `git status --porcelain` lists them; a submodule checked out in it counts as one (its
    /// own files are not looked at, since its git would read its own configuration).
    pub async fn changes(&self) -> Result<Vec<String>, ToolError> {
        let status = self
            .git
            .run(
                &self.work_tree,
                &["status", "--porcelain=v1", "--untracked-files=normal", "--ignore-submodules=dirty"],
            )
            .await?;
        let mut changes: Vec<String> =
            status.lines().filter(|l| !l.trim().is_empty()).map(|l| l.trim_end().to_string()).collect();
        let staged = self.git.run(&self.work_tree, &["ls-files", "--stage", "-z"]).await?;
        for entry in staged.split('\0') {
            let Some((meta, path)) = entry.split_once('\t') else { continue };
            if meta.starts_with("160000 ") && self.work_tree.join(path).join(".git").symlink_metadata().is_ok() {
                changes.push(format!("submodule {path} (checked out; its own changes are not looked at)"));
            }
        }
        Ok(changes)
    }
}

impl Drop for Shadow {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.dir)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!("could not remove {}: {e}", self.dir.display());
        }
    }
}

/// `--git-dir=PATH`, for any path.
fn option(name: &str, path: &Path) -> OsString {
    let mut option = OsString::from(name);
    option.push(path.as_os_str());
    option
}

/// The repository's [`CARRIED`] settings, as git resolves them in `work_tree`.
async fn carried(git: &Git, work_tree: &Path) -> Result<Vec<(String, String)>, ToolError> {
    let out = git.output(work_tree, &["config", "-z", "--get-regexp", CARRIED]).await?;
    if !out.status.success() {
        // 1: none is set.
        return Ok(Vec::new());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Ok(text
        .split('\0')
        .filter(|e| !e.is_empty())
        .map(|e| match e.split_once('\n') {
            Some((key, value)) => (key.to_string(), value.to_string()),
            None => (e.to_string(), "true".to_string()),
        })
        .collect())
}

/// The repository's `info/exclude`, when it is a regular file (never a FIFO or a device),
/// up to [`MAX_EXCLUDE`] bytes; nothing otherwise.
fn read_exclude(path: &Path) -> Vec<u8> {
    let Ok(file) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW).open(path)
    else {
        return Vec::new();
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Vec::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(MAX_EXCLUDE).read_to_end(&mut bytes);
    bytes
}

/// What a shadow's directory name starts with.
const PREFIX: &str = ".checkout-";

/// A new directory of its own in `parent` (0700), named so no worktree can have its name (a
/// worktree's starts with a letter or digit): `.checkout-<pid>-<n>`. Those a process that is
/// gone left (killed mid-call) are removed first.
fn make_dir(parent: &Path) -> Result<PathBuf, ToolError> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let failed = |e: std::io::Error| {
        ToolError::failed(format!("cannot make a directory for the checkout in {}: {e}", parent.display()))
    };
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(parent).map_err(failed)?;
    sweep(parent);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = parent.join(format!("{PREFIX}{}-{n}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(failed(e)),
        }
    }
}

/// Removes the shadows in `parent` whose process no longer runs.
fn sweep(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)).and_then(|rest| rest.split('-').next())
        else {
            continue;
        };
        let gone = pid.parse::<u32>().is_ok_and(|pid| !Path::new(&format!("/proc/{pid}")).exists());
        if gone {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}
