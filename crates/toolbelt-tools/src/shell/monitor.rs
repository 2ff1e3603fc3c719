//! `Monitor`: runs a command in the background and turns each line it prints into an event
//! (Claude Code's tool of that name, with a time limit of its own).
//!
//! The command runs exactly as a background Bash command does — same judgement (Bash's rules
//! govern it, the read-only classifier, the deny list), same sandbox, cgroup and tree kill,
//! same task registry, so `TaskStop` and `BackgroundTasks` take it and the session's end
//! kills it. What differs is its output: a pump ([`crate::shell::support::monitor`]) splits
//! stdout into lines, batches those that come within 200 ms, and sends each batch to the
//! session's task-event sink (`batch --events`, MCP log notifications) and into the log,
//! where `TaskOutput` waits for the next one.

use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, PlannedTool, Render, SideEffects, ToolContext, ToolError,
    ToolSpec, human_duration,
};

use crate::process::cgroup::CommandCgroup;
use crate::process::config::BashConfig;
use crate::process::confine;
use crate::process::env;
use crate::process::spawn::Setup;
use crate::shell::support::background::{self, MonitorLimits, Pumping, TaskCommand, one_line};
use crate::shell::support::judge;
use crate::shell::support::monitor::{self as pump, BATCH_WINDOW, MAX_LINES_PER_SECOND};

/// How long a monitor runs when the call does not say.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The longest time limit a call may set (`persistent` has none).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// Input of `Monitor`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MonitorInput {
    /// The command to watch, in bash syntax: each line it prints on stdout is an event (e.g.
    /// `tail -f build.log | grep --line-buffered -E 'error|warning'`). Filter it to the lines
    /// worth reading; use line-buffered output (`grep --line-buffered`, `stdbuf -oL`).
    #[schemars(length(min = 1))]
    pub command: String,
    /// What it watches, in a few words ("Errors in the build log"), for the user.
    pub description: String,
    /// How long it may run, in milliseconds (default 600000, at most 3600000); then it is
    /// stopped.
    #[schemars(range(min = 1))]
    pub timeout_ms: Option<u64>,
    /// Run until TaskStop or the end of the session, with no time limit.
    pub persistent: Option<bool>,
}

/// The structured result of `Monitor`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MonitorOutput {
    /// The monitor's task id (`monitor_1`), for TaskOutput and TaskStop.
    pub task_id: String,
    /// The command it watches.
    pub command: String,
    /// The log file holding every line it printed (stdout and stderr).
    pub log_file: String,
    /// Its time limit in milliseconds; absent when persistent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Whether it runs until stopped.
    pub persistent: bool,
    /// What to know besides: it runs unsandboxed, say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Render for MonitorOutput {
    /// Its id and how to read and stop it.
    fn render(&self) -> Vec<Content> {
        let until = match self.timeout_ms {
            Some(ms) => format!("for up to {}", human_duration(Duration::from_millis(ms))),
            None => "until stopped".to_string(),
        };
        let mut text = format!(
            "Monitoring `{}` as task {} ({until}). Each line it prints is an event; read new events with \
             TaskOutput{{task_id: \"{}\"}} (it waits for the next lines), stop it with TaskStop. Every line is also \
             in {}.",
            one_line(&self.command, 200),
            self.task_id,
            self.task_id,
            self.log_file
        );
        for note in &self.notes {
            text.push_str(&format!("\n[{note}]"));
        }
        vec![Content::text(text)]
    }
}

/// The `Monitor` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Monitor;

fn description() -> String {
    format!(
        "Starts a command in the background and streams each line it prints on stdout as an event: watch a log, a \
         build, a test run, a deploy. Lines within {} ms arrive together. Read new events with TaskOutput (it waits \
         for the next lines), stop it with TaskStop; it also ends when the command exits or its time limit ({} min \
         by default, `persistent: true` for none) runs out. Filter the command to the lines that matter (`tail -f \
         app.log | grep --line-buffered ERROR`): a monitor printing more than {MAX_LINES_PER_SECOND} lines a second \
         is stopped. It runs like Bash (same sandbox and permissions); use Bash for commands whose output you need \
         once.",
        BATCH_WINDOW.as_millis(),
        DEFAULT_TIMEOUT.as_secs() / 60
    )
}

/// What a `Monitor` call was judged to run.
#[derive(Debug)]
pub struct MonitorPlan {
    config: BashConfig,
    confining: confine::Confining,
}

impl PlannedTool for Monitor {
    type Input = MonitorInput;
    type Output = MonitorOutput;
    type Plan = MonitorPlan;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("Monitor", description())
            .title("Watch a command's output")
            .aliases(["monitor"])
            .category(Category::Shell)
            .tags(["shell", "command", "background", "watch", "events"])
            .permission(PermissionClass::External)
            .side_effects(SideEffects::Files)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: false, open_world: true })
            .bash_rules()
            .deferred()
            .search_hint("monitor watch tail follow log stream events background lines")
    }

    fn access(&self, input: &MonitorInput, cx: &ToolContext) -> Result<(Access, MonitorPlan), ToolError> {
        let (access, config, confining) = judge::bash_command(&input.command, cx)?;
        Ok((access, MonitorPlan { config, confining }))
    }

    async fn call(&self, input: MonitorInput, plan: MonitorPlan, cx: ToolContext) -> Result<MonitorOutput, ToolError> {
        let MonitorPlan { config, confining } = plan;
        let (cx, cwd, moved) = judge::run_dir(cx, &input.command).await?;
        let (confinement, unconfined) = confining.confinement(&cx)?;
        let cgroup = CommandCgroup::for_command();
        let mut env = env::changes(&config);
        // Python buffers a pipe's output; a monitor wants each line as it comes.
        env.push(("PYTHONUNBUFFERED".into(), Some("1".into())));
        let setup = Setup { env, confinement, control_room: None };
        let persistent = input.persistent == Some(true);
        let timeout =
            (!persistent).then(|| input.timeout_ms.map_or(DEFAULT_TIMEOUT, Duration::from_millis).min(MAX_TIMEOUT));
        let command = TaskCommand {
            prefix: "monitor",
            run: &input.command,
            shown: &input.command,
            description: Some(&input.description),
            monitor: Some(Pumping { limits: MonitorLimits { timeout }, start: pump::start }),
        };
        let started = background::start(&cx, command, &cwd, &config, unconfined, cgroup, setup)?;
        Ok(MonitorOutput {
            task_id: started.task_id.unwrap_or_default(),
            command: input.command,
            log_file: started.output_file.unwrap_or_default(),
            timeout_ms: timeout.map(|t| u64::try_from(t.as_millis()).unwrap_or(u64::MAX)),
            persistent,
            notes: moved.into_iter().chain(started.notes).collect(),
        })
    }
}
