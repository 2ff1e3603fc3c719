//! The options every command takes (`toolbelt --allow … call …`): workspace, permissions,
//! tools, the shell sandbox, limits and logging.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// Options every command takes.
#[derive(Debug, Args)]
pub struct Global {
    /// Working directory of the session (default: the current directory).
    #[arg(long, global = true, help_heading = "Workspace", value_name = "DIR")]
    pub cwd: Option<PathBuf>,

    /// Another workspace root besides the working directory (repeatable).
    #[arg(long = "add-dir", global = true, help_heading = "Workspace", value_name = "DIR")]
    pub add_dir: Vec<PathBuf>,

    /// Work on the task list NAME (TaskCreate, TaskList…), shared by every session, agent and
    /// process that names it [env: TOOLBELT_TASK_LIST; default: the project's own list].
    #[arg(long, global = true, help_heading = "Workspace", value_name = "NAME")]
    pub task_list: Option<String>,

    /// Permission mode: default, acceptEdits, plan, dontAsk or bypassPermissions.
    #[arg(long, global = true, help_heading = "Permissions", value_name = "MODE", value_parser = parse_mode)]
    pub mode: Option<String>,

    /// Allow calls matching this rule without asking, e.g. 'Bash(cargo test *)' (repeatable).
    #[arg(long, global = true, help_heading = "Permissions", value_name = "RULE")]
    pub allow: Vec<String>,

    /// Always ask before calls matching this rule (repeatable).
    #[arg(long, global = true, help_heading = "Permissions", value_name = "RULE")]
    pub ask: Vec<String>,

    /// Never run calls matching this rule, e.g. 'Read(./.env)'; a bare tool name also hides
    /// the tool (repeatable).
    #[arg(long, global = true, help_heading = "Permissions", value_name = "RULE")]
    pub deny: Vec<String>,

    /// Record every call as a JSON line in this file (the audit log).
    #[arg(long, global = true, help_heading = "Limits and logging", value_name = "FILE")]
    pub audit: Option<PathBuf>,

    /// Also apply the allow rules, mode and hooks of Claude Code's settings files
    /// (~/.claude/settings.json, .claude/settings.json, .claude/settings.local.json); their deny
    /// and ask rules always apply.
    #[arg(long, global = true, help_heading = "Permissions")]
    pub claude_settings: bool,

    /// Characters of text a result may have before it is cut and the rest saved to a file.
    #[arg(long, global = true, help_heading = "Limits and logging", value_name = "CHARS")]
    pub output_budget: Option<usize>,

    /// How far shell commands are confined: read-only, workspace-write (writes only in the
    /// workspace roots and the temp directory) or danger-full-access (no sandbox) [default:
    /// workspace-write].
    #[arg(long, global = true, help_heading = "Shell sandbox", value_enum, value_name = "MODE")]
    pub sandbox: Option<SandboxArg>,

    /// Let sandboxed shell commands use the network (off by default).
    #[arg(long, global = true, help_heading = "Shell sandbox")]
    pub network: bool,

    /// What a shell command does when the sandbox cannot be applied on this machine: ask a
    /// person first, refuse it, or run it unconfined with a notice [default: ask].
    #[arg(long, global = true, help_heading = "Shell sandbox", value_enum, value_name = "WHAT")]
    pub if_unsandboxed: Option<UnsandboxedArg>,

    /// Offer only these tools (by name, alias, category or tag; comma-separated), as
    /// `tools.enabled` in the settings.
    #[arg(long, global = true, help_heading = "Tools", value_name = "NAMES", value_delimiter = ',')]
    pub tools: Vec<String>,

    /// Leave a tool out everywhere (by name, alias, category or tag), as `tools.disabled`.
    #[arg(long = "disable-tool", global = true, help_heading = "Tools", value_name = "NAME")]
    pub disable_tool: Vec<String>,

    /// Carry exported variables, functions, aliases and shell options from one Bash call to
    /// the next in a session, as `shell.persistent` in the settings.
    #[arg(long = "persistent-shell", global = true, help_heading = "Shell sandbox")]
    pub persistent_shell: bool,

    /// Refuse shell commands matching this regular expression (repeatable), on top of the
    /// built-in list of catastrophic commands.
    #[arg(long = "deny-command", global = true, help_heading = "Shell sandbox", value_name = "REGEX")]
    pub deny_command: Vec<String>,

    /// Cap in seconds on a call's default or requested time limit (a tool's own limit
    /// setting, such as lint.timeout, binds that tool instead).
    #[arg(long, global = true, help_heading = "Limits and logging", value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub max_timeout: Option<u64>,

    /// Log more to stderr (-v info, -vv debug); TOOLBELT_LOG takes a full filter.
    #[arg(short, long, global = true, help_heading = "Limits and logging", action = clap::ArgAction::Count)]
    pub verbose: u8,
}

fn parse_mode(s: &str) -> Result<String, String> {
    toolbelt_policy::PermissionMode::parse(s)
        .map(|m| m.as_str().to_string())
        .ok_or_else(|| "expected one of: default, acceptEdits, plan, dontAsk, bypassPermissions".to_string())
}

/// The `--sandbox` modes (the flag's help says what each allows; values without help keep
/// the help pages short).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    ReadOnly,
    WorkspaceWrite,
    DangerFullAccess,
}

/// The `--if-unsandboxed` choices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum UnsandboxedArg {
    Ask,
    Refuse,
    Run,
}
