//! Git as the worktree tools run it: never a program a repository names.
//!
//! `EnterWorktree` and `ExitWorktree` run git themselves (`worktree add`, `worktree remove`,
//! `status`, `branch -D` and a few queries). A repository's configuration can name programs
//! for git to run: hooks (`post-checkout`, `reference-transaction`…), clean and smudge filters
//! (run when files are checked out or compared), the file-system monitor, a signing program.
//! Its `.git` may be hostile: it arrived with an archive, or a command the agent ran wrote it
//! (`git init` where there was no repository, or `sandbox.git_writes`), and configuration it
//! includes can apply only where the worktree tools run (`[includeIf "gitdir:**/worktrees/**"]`).
//! So two rules, each complete by construction rather than by listing what a repository
//! might name:
//!
//! * **Programs looked up by a fixed name are switched off on the command line.** Every git
//!   here runs with command-scope configuration appended after the user's own
//!   (`GIT_CONFIG_COUNT`…), which wins over every file and every include: the shell's
//!   `core.fsmonitor=false` and `safe.bareRepository=explicit`, and `core.hooksPath=/dev/null`
//!   (no hook runs, the repository's or the user's), `log.showSignature=false`, `gc.auto=0`,
//!   `maintenance.auto=false`; `GIT_NO_LAZY_FETCH=1` keeps a partial clone from fetching (and
//!   so from running a transport the repository configures).
//! * **Filters, named by the repository's own attributes, never meet its configuration.** A
//!   filter driver has whatever name `.gitattributes` gives it, defined wherever the
//!   configuration says — no list of names can be complete. So the commands that run filters
//!   (a checkout, and `status`, which cleans files to compare them) are not run in the
//!   repository at all but in a [`super::shadow`] repository of toolbelt's own: it reads the
//!   worktree's objects, index and files, and a configuration toolbelt wrote plus the user's
//!   own (system and global), never the repository's. A driver the repository defines does
//!   not exist there; one the user defines (git-lfs) runs, as in any checkout of theirs. The
//!   other commands (`worktree add --no-checkout`, `worktree remove --force`, `branch -D`,
//!   `rev-list`, `rev-parse`, `show-ref`) check nothing out and compare no file, so no filter
//!   runs in them.
//!
//! Git runs with stdin closed, no terminal prompt, the pager `cat`, the variables that point
//! it at another repository (`GIT_DIR`, `GIT_WORK_TREE`…) removed, and in a process group of
//! its own that is killed whole when the call is cancelled or times out (the runtime drops
//! the call's future) and once git has exited.

use std::ffi::{OsStr, OsString};
use std::path::Path;
use std::process::{Output, Stdio};

use toolbelt_core::ToolError;

use crate::process::env::git_config_env;

/// Configuration every git run here gets, besides the shell's.
const HARDENING: &[(&str, &str)] =
    &[("core.hooksPath", "/dev/null"), ("log.showSignature", "false"), ("gc.auto", "0"), ("maintenance.auto", "false")];

/// Variables that would point git at another repository than the one it is run in.
const LOCATION_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
];

/// Why git could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// Git could not be started.
    #[error("cannot run git ({source}); is git installed and on PATH?")]
    Start {
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Git ran and failed.
    #[error("`git {command}` failed: {message}")]
    Failed {
        /// The git subcommand and its arguments.
        command: String,
        /// What git said (its standard error), or its exit status.
        message: String,
    },
}

impl From<GitError> for ToolError {
    fn from(e: GitError) -> Self {
        ToolError::failed(e.to_string())
    }
}

/// Git with the hardening of the module docs.
#[derive(Debug, Clone)]
pub struct Git {
    config: Vec<(String, String)>,
    /// Options before the subcommand (`--git-dir=…`).
    options: Vec<OsString>,
    /// Variables set for every run.
    env: Vec<(String, OsString)>,
}

impl Git {
    /// Git with the hardening of the module docs, in the repository of the directory it is
    /// run in.
    pub fn plain() -> Git {
        Git {
            config: HARDENING.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect(),
            options: Vec::new(),
            env: Vec::new(),
        }
    }

    /// This git with `key=value` added to its command-line configuration.
    pub fn with_config(mut self, key: impl Into<String>, value: impl Into<String>) -> Git {
        self.config.push((key.into(), value.into()));
        self
    }

    /// This git with a global option before every subcommand (`--git-dir=…`).
    pub fn with_option(mut self, option: impl Into<OsString>) -> Git {
        self.options.push(option.into());
        self
    }

    /// This git with a variable set for every run.
    pub fn with_env(mut self, name: &str, value: impl Into<OsString>) -> Git {
        self.env.push((name.to_string(), value.into()));
        self
    }

    /// Runs `git ARGS…` in `dir`; its standard output when it succeeds.
    pub async fn run(&self, dir: &Path, args: &[&str]) -> Result<String, GitError> {
        let out = self.output(dir, args).await?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(failure(args, &out))
        }
    }

    /// Runs `git ARGS…` in `dir` and returns how it ended, whatever that was.
    pub async fn output(&self, dir: &Path, args: &[&str]) -> Result<Output, GitError> {
        let mut command = tokio::process::Command::new("git");
        command
            .arg("-C")
            .arg(dir)
            .args(&self.options)
            .args(args.iter().map(OsStr::new))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_NO_LAZY_FETCH", "1")
            .kill_on_drop(true);
        // A session of its own: its own process group (killed below), no controlling terminal.
        toolbelt_core::process::new_session(command.as_std_mut());
        for name in LOCATION_VARS {
            command.env_remove(name);
        }
        for (key, value) in git_config_env(&self.config) {
            command.env(key, value);
        }
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let child = command.spawn().map_err(|source| GitError::Start { source })?;
        // Whatever git started (a filter of the user's) goes with it, also when the call is
        // dropped mid-way.
        let _group = GroupKill(child.id().and_then(|id| i32::try_from(id).ok()));
        child.wait_with_output().await.map_err(|source| GitError::Start { source })
    }
}

/// Kills a process group when dropped.
struct GroupKill(Option<i32>);

impl Drop for GroupKill {
    fn drop(&mut self) {
        if let Some(pid) = self.0 {
            // The child leads its own session and group (`new_session`), so this never reaches us.
            let _ = nix::sys::signal::killpg(nix::unistd::Pid::from_raw(pid), nix::sys::signal::Signal::SIGKILL);
        }
    }
}

/// The error for a git run that ended badly.
fn failure(args: &[&str], out: &Output) -> GitError {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = stderr.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let message = if said.is_empty() {
        match out.status.code() {
            Some(code) => format!("exit status {code}"),
            None => "killed by a signal".to_string(),
        }
    } else {
        said.join(" ")
    };
    GitError::Failed { command: args.join(" "), message }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_say_what_git_said() {
        use std::os::unix::process::ExitStatusExt as _;
        let out = Output {
            status: std::process::ExitStatus::from_raw(128 << 8),
            stdout: Vec::new(),
            stderr: b"fatal: not a git repository\n".to_vec(),
        };
        assert_eq!(
            failure(&["rev-parse", "--show-toplevel"], &out).to_string(),
            "`git rev-parse --show-toplevel` failed: fatal: not a git repository"
        );
    }
}
