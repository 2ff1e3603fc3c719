//! Git as the worktree tools run it: never a program a repository names.
//!
//! `EnterWorktree` and `ExitWorktree` run git themselves (`worktree add`, `worktree remove`,
//! `status`, `branch -D` and a few queries). `git worktree add` checks files out, which runs
//! clean and smudge filters and the `post-checkout` and `reference-transaction` hooks; `git
//! status` runs clean filters and the file-system monitor. A repository whose `.git` arrived
//! with it (an archive, a copied folder) could name any of them. So every git here runs with
//! command-scope configuration appended after the user's own (`GIT_CONFIG_COUNT`…, which wins
//! over every configuration file):
//!
//! * what every command toolbelt runs gets: `core.fsmonitor=false`,
//!   `safe.bareRepository=explicit` (see the shell tools' `env` module);
//! * `core.hooksPath=/dev/null`: no hook runs, the repository's or the user's;
//! * every filter driver the repository's own configuration defines (the `local` and
//!   `worktree` scopes, includes followed) emptied: `smudge`, `clean` and `process` set to
//!   nothing and `required` off, so files are checked out exactly as committed. Drivers the
//!   user's own files define (system and global: git-lfs) still run — they are the user's
//!   programs. A git too old to say where a setting comes from (before 2.26) gets every
//!   driver emptied;
//! * `log.showSignature=false` (no signature program), `gc.auto=0` and
//!   `maintenance.auto=false` (no background work started).
//!
//! Git runs with stdin closed, no terminal prompt, the pager `cat`, the variables that point
//! it at another repository (`GIT_DIR`, `GIT_WORK_TREE`…) removed, and in a process group of
//! its own that is killed whole when the call is cancelled or times out (the runtime drops
//! the call's future) and once git has exited.

use std::ffi::OsStr;
use std::path::Path;
use std::process::{Output, Stdio};

use toolbelt_core::ToolError;

use crate::shell::support::env::git_config_env;

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

/// Scopes whose filter drivers are the user's own, and keep running.
const USER_SCOPES: &[&str] = &["system", "global"];

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
}

impl Git {
    /// Git with the hardening that needs no repository (hooks, monitor, signatures off).
    pub fn plain() -> Git {
        Git { config: HARDENING.iter().map(|(k, v)| ((*k).to_string(), (*v).to_string())).collect() }
    }

    /// Git for the repository holding `dir`: [`Git::plain`], and every filter driver the
    /// repository's own configuration defines emptied.
    pub async fn for_repository(dir: &Path) -> Result<Git, GitError> {
        let mut git = Git::plain();
        for driver in git.repository_filters(dir).await? {
            for key in ["smudge", "clean", "process"] {
                git.config.push((format!("filter.{driver}.{key}"), String::new()));
            }
            git.config.push((format!("filter.{driver}.required"), "false".to_string()));
        }
        Ok(git)
    }

    /// The filter drivers configured outside the user's own files.
    async fn repository_filters(&self, dir: &Path) -> Result<Vec<String>, GitError> {
        const KEYS: &str = r"^filter\.";
        let scoped = self.output(dir, &["config", "--show-scope", "--get-regexp", KEYS]).await?;
        let (text, scoped) = match scoped.status.code() {
            Some(0) => (scoped.stdout, true),
            // No filter is configured anywhere.
            Some(1) => return Ok(Vec::new()),
            // A git without `--show-scope`: every driver counts.
            _ => {
                let all = self.output(dir, &["config", "--get-regexp", KEYS]).await?;
                match all.status.code() {
                    Some(0) => (all.stdout, false),
                    Some(1) => return Ok(Vec::new()),
                    _ => return Err(failure(&["config", "--get-regexp", KEYS], &all)),
                }
            }
        };
        Ok(filter_drivers(&String::from_utf8_lossy(&text), scoped))
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
            .args(args.iter().map(OsStr::new))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_PAGER", "cat")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .kill_on_drop(true);
        // A session of its own: its own process group (killed below), no controlling terminal.
        toolbelt_core::process::new_session(command.as_std_mut());
        for name in LOCATION_VARS {
            command.env_remove(name);
        }
        for (key, value) in git_config_env(&self.config) {
            command.env(key, value);
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

/// The drivers named in `git config --get-regexp '^filter\.'` output (with `--show-scope`
/// when `scoped`: those of the user's own scopes left out).
fn filter_drivers(text: &str, scoped: bool) -> Vec<String> {
    let mut drivers: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        if scoped && words.next().is_some_and(|scope| USER_SCOPES.contains(&scope)) {
            continue;
        }
        let Some(key) = words.next() else { continue };
        // `filter.<driver>.<key>`; a driver's name may itself hold dots.
        let Some((driver, _)) = key.strip_prefix("filter.").and_then(|rest| rest.rsplit_once('.')) else {
            continue;
        };
        if !driver.is_empty() && !drivers.iter().any(|d| d == driver) {
            drivers.push(driver.to_string());
        }
    }
    drivers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drivers_of_the_repository_are_found_and_the_user_s_kept() {
        let text = "global\tfilter.lfs.smudge git-lfs smudge -- %f\n\
                    global\tfilter.lfs.process git-lfs filter-process\n\
                    local\tfilter.evil.smudge touch x\n\
                    local\tfilter.evil.required true\n\
                    worktree\tfilter.a.b.clean sh x\n\
                    system\tfilter.sys.clean y\n";
        assert_eq!(filter_drivers(text, true), ["evil", "a.b"]);
        let unscoped = "filter.lfs.smudge git-lfs smudge\nfilter.evil.clean x\n";
        assert_eq!(filter_drivers(unscoped, false), ["lfs", "evil"]);
    }

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
