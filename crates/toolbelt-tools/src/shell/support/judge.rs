//! How a bash command line is judged and where it runs, shared by `Bash` and `Monitor`: the
//! deny lists, the read-only classifier (a proven read runs beside other reads), the files it
//! names, git's repository-named programs, and the sandbox's availability — then, at the call,
//! the working directory, judged again when the one it was judged in is gone.

use std::path::PathBuf;
use std::time::Duration;

use toolbelt_core::{Access, CallLimits, ToolContext, ToolError};

use crate::process::config::BashConfig;
use crate::process::confine::{self, Confining};
use crate::shell::support::cwd::start_dir;
use crate::shell::support::{deny, git_programs, operands};

/// What a command touches, the shell settings its deny patterns were checked against, and
/// how it will be confined.
pub fn bash_command(command: &str, cx: &ToolContext) -> Result<(Access, BashConfig, Confining), ToolError> {
    bash_command_carrying(command, cx, None)
}

/// [`bash_command`] for a command that runs after what a session's shell carries
/// (`unproven`: why its text does not say all it runs): then it is never read-only — not for
/// the policy, not for running beside reads, not for running unsandboxed without asking — and
/// it is opaque ([`Access::opaque`]): an alias, a function or `BASH_ENV` the shell carries can
/// run a program its text does not name, so rules about commands ask rather than match.
pub fn bash_command_carrying(
    command: &str,
    cx: &ToolContext,
    unproven: Option<String>,
) -> Result<(Access, BashConfig, Confining), ToolError> {
    let config = BashConfig::in_effect(cx);
    deny::check(command, &config.deny_patterns).map_err(deny::Refusal::into_error)?;
    let read_only = unproven.is_none() && toolbelt_command::is_read_only(command);
    let mut access = if read_only { Access::shared() } else { Access::exclusive() };
    if let Some(why) = unproven {
        access = access.opaque(why);
    }
    let mut access = operands::declare(access.executes(command.to_string()), command, cx);
    if read_only {
        access = git_programs::untrusted_git(access, command, cx);
    }
    let (access, confining) = confine::declare(cx, access, read_only)?;
    Ok((access, config, confining))
}

/// Where `command` runs: the session's working directory, or, when a command has deleted
/// it since the judgement, a root — judged again there, since its relative paths name other
/// files now. The context to run with, the directory, and the notice saying it moved.
pub async fn run_dir(cx: ToolContext, command: &str) -> Result<(ToolContext, PathBuf, Option<String>), ToolError> {
    let (cwd, moved) = start_dir(&cx)?;
    if moved.is_none() {
        return Ok((cx, cwd, None));
    }
    let there = cx.with_cwd(cwd.clone());
    let (access, _, _) = bash_command(command, &there)?;
    there.authorize(access).await?;
    Ok((there, cwd, moved))
}

/// The time limit a call asks for (`asked`, in milliseconds), within `limits`.
pub fn requested(limits: &CallLimits, asked: Option<u64>) -> Duration {
    asked.map_or(limits.default_timeout, Duration::from_millis).clamp(Duration::from_millis(1), limits.max_timeout)
}
