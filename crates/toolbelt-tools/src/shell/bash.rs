//! `Bash`: runs a command with `bash -c` in the session's working directory.
//!
//! Same name and parameters as Claude Code's (`command`, `timeout` in ms, `description`,
//! `run_in_background`). What users of the peers complain about is handled here: a timeout
//! returns the output printed so far instead of losing it, the whole process tree dies with
//! the call (setsid'd grandchildren included), long output keeps its head *and* tail with
//! every byte in a file the model can read, and memory stays bounded whatever the command
//! prints.

use std::time::Duration;

use toolbelt_core::{
    Access, Annotations, CallLimits, Category, PermissionClass, PlannedTool, SideEffects, TimeLimit, ToolContext,
    ToolError, ToolSpec, thousands,
};

use crate::process::cgroup::CommandCgroup;
use crate::process::config::BashConfig;
use crate::process::confine;
use crate::process::env;
use crate::process::foreground;
use crate::process::made::PlacesWatch;
use crate::process::spawn::Setup;
use crate::shell::support::background;
use crate::shell::support::carried;
use crate::shell::support::cwd::carry_over;
use crate::shell::support::judge;
use crate::shell::support::result::{BashOutput, finish};
use crate::shell::support::session::yielded;

pub use crate::shell::support::input::BashInput;

/// The `Bash` tool, with the call limits it describes and applies: its default timeout and
/// cap, and the output budget the runtime cuts its text to.
#[derive(Debug, Clone, Copy)]
pub struct Bash {
    limits: CallLimits,
}

impl Bash {
    /// Bash under `limits` (the runtime's, so the description says what happens).
    pub fn new(limits: CallLimits) -> Self {
        Self { limits }
    }

    /// The time limit the input asks for, within the bounds.
    fn requested(&self, input: &BashInput) -> Duration {
        judge::requested(&self.limits, input.timeout)
    }

    /// The description, with the limits in force.
    fn description(&self) -> String {
        format!(
            "{INTRO}- Timeout: {} ms by default, at most {}. On timeout the command and every process it started are \
             killed and the output printed so far is returned.\n\
             - Output over {} characters is cut to its head and tail; every byte is saved to a file whose path the \
             result gives, to Read or Grep.\n{REST}",
            self.limits.default_timeout.as_millis(),
            self.limits.max_timeout.as_millis(),
            thousands(self.limits.output_budget)
        )
    }
}

impl Default for Bash {
    /// Bash under [`CallLimits::DEFAULT`].
    fn default() -> Self {
        Self::new(CallLimits::DEFAULT)
    }
}

/// The description up to the limits.
const INTRO: &str = "Runs a bash command in the session's working directory and returns its output \
(stdout and stderr interleaved as they arrived), with the exit code when it is not 0. Details:\n\
- `cd` carries over to the next call while it stays inside the workspace roots; environment variables and other \
shell state do not.\n\
- stdin is empty, so a command that asks for input fails instead of waiting; pagers and colours are off. For a \
command that needs a terminal or answers (a REPL, an editor, a prompt, `git rebase -i`, a watch mode) pass `tty: true` \
(and `yield_time_ms`): if it is still running when the call yields, the result gives a `session_id` to type into \
with WriteStdin.\n";

/// The description after the limits.
const REST: &str = "\
- For servers, watchers and long jobs use `run_in_background: true`, then TaskOutput to read and TaskStop to stop.\n\
- Prefer the dedicated tools to shell equivalents: Read over cat/head/tail, Grep over grep/rg, Glob over find/ls, \
Edit over sed/awk, Write over echo >.\n\
- Commands run in a sandbox: by default they may write only inside the workspace roots and the temp \
directory (never `.git/config`, `.git/hooks` or the agent's settings), and the network is off.\n\
- Secrets are not in the environment (variables named like *TOKEN*, *SECRET*, *_KEY, *PASSWORD*, or holding a token or a \
URL with a password).\n\
- A few catastrophic commands (rm -rf /, mkfs, dd onto a disk, fork bombs) are refused.";

/// What a `Bash` call was judged to run: the command under the shell settings its deny
/// patterns were checked against (the environment it gets comes from the same), confined as
/// the sandbox settings and this machine allowed then.
#[derive(Debug)]
pub struct BashPlan {
    config: BashConfig,
    confining: confine::Confining,
    /// The generation of the session's carried shell the call was judged with.
    carried: u64,
}

impl PlannedTool for Bash {
    type Input = BashInput;
    type Output = BashOutput;
    type Plan = BashPlan;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Bash", self.description())
            .title("Run a shell command")
            .aliases(["exec", "shell_exec", "bash"])
            .param_alias("cmd", "command")
            .category(Category::Shell)
            .tags(["shell", "command", "process", "exec"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: true })
            .streams()
            .default_timeout(self.limits.default_timeout)
            .search_hint("shell bash command terminal run execute script build test git npm cargo make process")
    }

    fn access(&self, input: &BashInput, cx: &ToolContext) -> Result<(Access, BashPlan), ToolError> {
        // A command run after what the session's shell carries says less than it does.
        let (unproven, carried) = match BashConfig::in_effect(cx).persistent {
            true => carried::redefines(cx),
            false => (None, 0),
        };
        let (access, config, confining) = judge::bash_command_carrying(&input.command, cx, unproven)?;
        Ok((access, BashPlan { config, confining, carried }))
    }

    fn timeout(&self, input: &BashInput, _cx: &ToolContext) -> Option<TimeLimit> {
        Some(TimeLimit::Asked(self.requested(input)))
    }

    async fn call(&self, input: BashInput, plan: BashPlan, cx: ToolContext) -> Result<BashOutput, ToolError> {
        let BashPlan { config, confining, carried: judged } = plan;
        let (cx, cwd, moved) = judge::run_dir(cx, &input.command).await?;
        let (confinement, unconfined) = confining.confinement(&cx)?;
        let sealed = confinement.as_ref().map(|c| c.sealed().to_vec()).unwrap_or_default();
        let watch = PlacesWatch::of(confinement.as_ref());
        let cgroup = CommandCgroup::for_command();
        let mut setup = Setup { env: env::changes(&config), confinement, control_room: None };
        let limit = self.requested(&input).min(cx.limits().timeout);
        if yielded::wanted(&input) {
            let notices = moved.into_iter().chain(unconfined).collect();
            let prepared = yielded::Prepared { notices, cgroup, setup, limit };
            return yielded::run(&cx, &input, &cwd, &config, prepared).await;
        }
        if input.run_in_background == Some(true) {
            return background::start(&cx, (&input).into(), &cwd, &config, unconfined, cgroup, setup);
        }
        if let Some(description) = input.description.as_deref().filter(|d| !d.trim().is_empty()) {
            cx.progress(description, None);
        }
        // With the persistent shell, the call starts from the state the session carries and
        // leaves its own for the next.
        let command = match config.persistent {
            true => carried::start(&cx, &input.command, judged, moved.is_some(), &mut setup).await?,
            false => input.command.clone(),
        };
        let outcome = foreground::run(&cx, &command, &cwd, limit, cgroup, setup).await?;
        let mut notices: Vec<String> = moved.into_iter().chain(unconfined).collect();
        if config.persistent {
            let exited = outcome.status.is_some() && !outcome.timed_out && !outcome.interrupted;
            notices.extend(carried::keep(&cx, exited, &outcome.control));
        }
        notices.extend(watch.settle(&cx).await);
        if let Some(ended_in) = &outcome.final_cwd
            && let Some(notice) = carry_over(&cx, &cwd, ended_in)
        {
            notices.push(notice);
        }
        Ok(finish(&cx, outcome, limit, self.limits.max_timeout, notices, &sealed).await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(command: &str, timeout: Option<u64>) -> BashInput {
        BashInput { command: command.into(), timeout, ..BashInput::default() }
    }

    #[test]
    fn the_policy_knows_bash_s_names() {
        // Rules and hook matchers naming Bash reach Monitor by these names.
        let spec = PlannedTool::spec(&Bash::default());
        let names: Vec<&str> =
            std::iter::once(spec.name.as_str()).chain(spec.aliases.iter().map(String::as_str)).collect();
        assert_eq!(names, toolbelt_policy::rules::BASH_NAMES);
    }

    #[test]
    fn timeouts_default_and_cap() {
        let bash = Bash::default();
        assert_eq!(bash.requested(&input("x", None)), CallLimits::DEFAULT.default_timeout);
        assert_eq!(bash.requested(&input("x", Some(5_000))), Duration::from_secs(5));
        assert_eq!(bash.requested(&input("x", Some(10_000_000))), CallLimits::DEFAULT.max_timeout);
    }

    #[test]
    fn access_refuses_denied_commands_and_declares_the_command() {
        let cx = ToolContext::detached(std::env::temp_dir());
        let access = |command| Bash::default().access(&input(command, None), &cx).map(|(access, _)| access);
        let err = access("rm -rf /").unwrap_err();
        assert!(err.to_string().starts_with("Refused"), "{err}");
        let made = access("make").unwrap();
        assert!(!made.is_shared());
        assert_eq!(made.touches, vec![toolbelt_core::Touch::Execute("make".into())]);
        // A command the classifier proves read-only runs beside other reads.
        assert!(access("ls -la && git status").unwrap().is_shared());
        assert!(!access("ls > out.txt").unwrap().is_shared());
    }
}
