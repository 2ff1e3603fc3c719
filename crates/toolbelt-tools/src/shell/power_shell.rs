//! `PowerShell`: runs a PowerShell 7 script (`pwsh -NoProfile -NonInteractive`) in the
//! session's working directory, with Bash's machinery — sandbox, process-tree kill,
//! timeouts, head-and-tail output with every byte spilled, background tasks.
//!
//! Registered only where `pwsh` is on `PATH` ([`crate::register_builtin_with`] registers it
//! disabled with the reason otherwise, which `toolbelt tools` shows); the version is checked
//! by the script's prologue, in the sandbox. No script counts as read-only and Bash's command rules do not reach it:
//! the policy's command analysis reads bash, and PowerShell is another language. A call is
//! judged as what it is, a program the session runs: it asks unless a `PowerShell` rule
//! allows it (a rule's pattern is matched against the script), or the mode does.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
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
use crate::shell::support::background::{self, TaskCommand};
use crate::shell::support::cwd::start_dir;
use crate::shell::support::judge;
use crate::shell::support::pwsh;
use crate::shell::support::result::{BashOutput, finish};

/// Input of `PowerShell`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PowerShellInput {
    /// The PowerShell script to run (one command or several lines), e.g. `Get-ChildItem -Recurse
    /// *.ps1 | Select-Object -First 20`.
    #[schemars(length(min = 1))]
    pub command: String,
    /// Time limit in milliseconds (the tool's description gives the default and the cap). On
    /// timeout `pwsh` and every process it started are stopped and the output so far is
    /// returned.
    #[schemars(range(min = 1))]
    pub timeout: Option<u64>,
    /// What the script does, in 5–10 words ("List the build scripts"), for the user watching.
    pub description: Option<String>,
    /// Run it in the background: the call returns a task id at once; read the output with
    /// TaskOutput and stop it with TaskStop.
    pub run_in_background: Option<bool>,
}

/// The `PowerShell` tool, with the call limits it describes and applies.
#[derive(Debug, Clone, Copy)]
pub struct PowerShell {
    limits: CallLimits,
}

impl PowerShell {
    /// PowerShell under `limits` (the runtime's).
    pub fn new(limits: CallLimits) -> Self {
        Self { limits }
    }

    fn requested(&self, input: &PowerShellInput) -> Duration {
        judge::requested(&self.limits, input.timeout)
    }

    fn description(&self) -> String {
        format!(
            "Runs a PowerShell 7 script (`pwsh -NoProfile -NonInteractive`) in the session's working directory and \
             returns its output (stdout and stderr as they arrived), with the exit code when it is not 0. Use it for \
             PowerShell scripts and cmdlets; use Bash for everything else.\n\
             - Timeout: {} ms by default, at most {}; on timeout pwsh and every process it started are killed and the \
             output so far is returned.\n\
             - Output over {} characters is cut to its head and tail; every byte is saved to a file whose path the \
             result gives.\n\
             - Nothing is carried between calls (Set-Location, variables, modules imported); no profile is loaded and \
             nothing may prompt (Read-Host fails). Progress bars and colours are off.\n\
             - For long jobs use `run_in_background: true`, then TaskOutput and TaskStop.\n\
             - It runs in the same sandbox as Bash: by default it may write only inside the workspace roots and the \
             temp directory, and the network is off. Every call needs approval unless a rule allows it.",
            self.limits.default_timeout.as_millis(),
            self.limits.max_timeout.as_millis(),
            thousands(self.limits.output_budget)
        )
    }
}

impl Default for PowerShell {
    /// PowerShell under [`CallLimits::DEFAULT`].
    fn default() -> Self {
        Self::new(CallLimits::DEFAULT)
    }
}

/// The script as a person approving it sees it: whole up to 2,000 characters, else its start
/// and its length (no rule can vouch for what is not shown, so a long script is read in full
/// by the model's own tools first).
fn shown_script(script: &str) -> String {
    let chars = script.chars().count();
    if chars <= 2_000 {
        return script.to_string();
    }
    let start: String = script.chars().take(2_000).collect();
    format!("{start}` … (the script is {chars} characters; only the first 2,000 are shown here) `")
}

/// What a `PowerShell` call was judged to run: which `pwsh`, under which shell settings,
/// confined how.
#[derive(Debug)]
pub struct PowerShellPlan {
    pwsh: PathBuf,
    config: BashConfig,
    confining: confine::Confining,
}

impl PlannedTool for PowerShell {
    type Input = PowerShellInput;
    type Output = BashOutput;
    type Plan = PowerShellPlan;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("PowerShell", self.description())
            .title("Run a PowerShell script")
            .aliases(["powershell", "pwsh"])
            // A `PowerShell(…)` rule matches the script, never the description.
            .rule_field("command")
            .param_alias("cmd", "command")
            .param_alias("script", "command")
            .category(Category::Shell)
            .tags(["shell", "command", "process", "powershell", "windows"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: true })
            .streams()
            .default_timeout(self.limits.default_timeout)
            // Rarely wanted outside Windows: named to the model, loaded by ToolSearch.
            .deferred()
            .search_hint("powershell pwsh cmdlet script ps1 windows get-childitem")
    }

    fn access(&self, input: &PowerShellInput, cx: &ToolContext) -> Result<(Access, PowerShellPlan), ToolError> {
        let pwsh = pwsh::find().ok_or_else(|| ToolError::failed(pwsh::MISSING))?;
        let config = BashConfig::in_effect(cx);
        // No touch: the call is judged whole, as a program the session runs (a declared
        // command would be read as bash by the policy).
        let access =
            Access::exclusive().reaching(format!("runs the PowerShell script `{}`", shown_script(&input.command)));
        let (access, confining) = confine::declare(cx, access, false)?;
        Ok((access, PowerShellPlan { pwsh, config, confining }))
    }

    fn timeout(&self, input: &PowerShellInput, _cx: &ToolContext) -> Option<TimeLimit> {
        Some(TimeLimit::Asked(self.requested(input)))
    }

    async fn call(
        &self,
        input: PowerShellInput,
        plan: PowerShellPlan,
        cx: ToolContext,
    ) -> Result<BashOutput, ToolError> {
        let PowerShellPlan { pwsh, config, confining } = plan;
        let (cwd, moved) = start_dir(&cx)?;
        let (confinement, unconfined) = confining.confinement(&cx)?;
        let sealed = confinement.as_ref().map(|c| c.sealed().to_vec()).unwrap_or_default();
        let watch = PlacesWatch::of(confinement.as_ref());
        let cgroup = CommandCgroup::for_command();
        let setup = Setup { env: env::changes(&config), confinement, control_room: None };
        let line = pwsh::command_line(&pwsh, &input.command);
        pwsh::check_length(&line, &input.command)?;
        if input.run_in_background == Some(true) {
            let command = TaskCommand {
                prefix: "pwsh",
                run: &line,
                shown: &input.command,
                description: input.description.as_deref(),
                monitor: None,
            };
            return background::start(&cx, command, &cwd, &config, unconfined, cgroup, setup);
        }
        if let Some(description) = input.description.as_deref().filter(|d| !d.trim().is_empty()) {
            cx.progress(description, None);
        }
        let limit = self.requested(&input).min(cx.limits().timeout);
        let outcome = foreground::run(&cx, &line, &cwd, limit, cgroup, setup).await?;
        let mut notices: Vec<String> = moved.into_iter().chain(unconfined).collect();
        notices.extend(watch.settle(&cx).await);
        let out = finish(&cx, outcome, limit, self.limits.max_timeout, notices, &sealed).await;
        // The prologue's refusal of an older PowerShell is a failed call, not a script's exit.
        if out.exit_code == Some(pwsh::TOO_OLD)
            && let Some(said) =
                [&out.stderr, &out.stdout].iter().find_map(|t| t.lines().find(|l| l.contains(pwsh::TOO_OLD_SAYS)))
        {
            return Err(ToolError::failed(format!(
                "{}; install PowerShell 7 and make it the `pwsh` on PATH",
                said.trim()
            )));
        }
        Ok(out)
    }
}
