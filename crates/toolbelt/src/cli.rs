//! The command line, as clap sees it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

mod global;

pub use global::{Global, SandboxArg, UnsandboxedArg};

/// The tool system of an AI coding agent: list, call and batch tools through one pipeline
/// (validation, permissions, hooks, timeouts, output budget).
#[derive(Debug, Parser)]
#[command(name = "toolbelt", version, propagate_version = true, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,

    #[command(flatten)]
    pub global: Global,
}

impl Cli {
    /// The command line, its defaults stated from the one home of each ([`CallLimits::DEFAULT`]).
    pub fn command_line() -> clap::Command {
        let limits = toolbelt_core::CallLimits::DEFAULT;
        let with_default = |arg: clap::Arg, default: String| {
            let help = arg.get_help().map(ToString::to_string).unwrap_or_default();
            arg.help(format!("{help} [default: {default}]"))
        };
        <Cli as clap::CommandFactory>::command()
            .mut_arg("output_budget", |a| with_default(a, limits.output_budget.to_string()))
            .mut_arg("max_timeout", |a| with_default(a, limits.max_timeout.as_secs().to_string()))
    }
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List the tools and export their schemas.
    Tools(ToolsArgs),
    /// Run an agent on a task: a model working with every tool, under the same settings,
    /// permissions, hooks, sandbox and audit; the final answer on stdout.
    Agent(AgentArgs),
    /// List the agent definitions: where each comes from, what it may use, and bad files.
    Agents(AgentsArgs),
    /// List the skills found from here: where each comes from, what it asks for, and bad files.
    Skills(SkillsArgs),
    /// Run one call through the full pipeline and print its result.
    Call(CallArgs),
    /// Run JSON Lines of calls as one session; print one result line per call, in order.
    Batch(BatchArgs),
    /// The OS sandbox for shell commands.
    Sandbox(SandboxArgs),
    /// Serve every tool over MCP (stdio, or Streamable HTTP with --http).
    Mcp(McpArgs),
    /// Connect the configured upstream MCP servers and show each one's state.
    McpServers(McpServersArgs),
    /// The merged settings: where each value comes from, and whether every file is valid.
    Config(ConfigArgs),
    /// What the permission rules decide for a call, and why.
    Permissions(PermissionsArgs),
    /// Trust a project: apply its own settings (hooks, MCP servers, mode, rules) from now on.
    Trust(TrustArgs),
    /// The audit log: where it is, and whether its hash chain holds.
    Audit(AuditArgs),
    /// Print the task list (the project's, or the one --task-list names): each task's id,
    /// status, owner, subject and open blockers.
    Tasks(TasksArgs),
    /// The project's durable scheduled jobs: run them without a host (`serve`), list, run
    /// one now, remove one.
    Cron(CronArgs),
    /// Plugins: folders bundling tools, hooks, skills, agents, MCP and language servers (list,
    /// add, remove, enable, disable).
    Plugin(PluginArgs),
}

#[derive(Debug, Args)]
pub struct PluginArgs {
    #[command(subcommand)]
    pub action: PluginAction,
}

#[derive(Debug, Subcommand)]
pub enum PluginAction {
    /// List the plugins found (the user's and the project's): name, version, whether it
    /// applies and why not, what it bundles, and what is wrong in it.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Copy the plugin folder PATH (with a toolbelt-plugin.toml or a .claude-plugin/plugin.json)
    /// into your plugins (or the project's, with --project) and enable it.
    Add {
        /// The plugin's folder.
        path: PathBuf,
        /// Into the project's .toolbelt/plugins/ (its hooks, servers and tools then wait for
        /// the project's trust).
        #[arg(long)]
        project: bool,
    },
    /// Delete a plugin's folder and take it out of your enabled plugins.
    Remove {
        /// The plugin's name.
        name: String,
        /// The project's plugin of that name.
        #[arg(long)]
        project: bool,
    },
    /// Enable a plugin in your own settings (plugins.enabled).
    Enable {
        /// The plugin's name.
        name: String,
    },
    /// Disable a plugin in your own settings (plugins.disabled), whatever else enables it.
    Disable {
        /// The plugin's name.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct CronArgs {
    #[command(subcommand)]
    pub action: CronAction,
}

#[derive(Debug, Subcommand)]
pub enum CronAction {
    /// Run the project's durable jobs as they come due, until stopped (a firing missed while
    /// nothing ran runs once, at start); one line per run start and end on stdout.
    Serve {
        /// Run the jobs due now, wait for them to end, and exit (for a timer unit or a cron
        /// entry of the system's).
        #[arg(long)]
        once: bool,
    },
    /// List the project's durable jobs: id, name, schedule, next firing, latest run.
    List {
        /// Print JSON: every job as CronList returns it.
        #[arg(long)]
        json: bool,
    },
    /// Run a durable job now, outside its schedule, and print its output; exit 1 if it failed.
    RunNow {
        /// The job's id or name.
        id: String,
    },
    /// Delete a durable job.
    Remove {
        /// The job's id or name.
        id: String,
    },
}

#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Print JSON: the list's name and file, and every task as TaskList returns it.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct TrustArgs {
    /// The project (default: the one the working directory is in).
    pub path: Option<PathBuf>,

    /// Print the project's own settings and whether they apply; change nothing.
    #[arg(long, conflicts_with_all = ["revoke", "list"])]
    pub show: bool,

    /// Stop trusting the project: its own settings are ignored again.
    #[arg(long, conflicts_with = "list")]
    pub revoke: bool,

    /// List the trusted projects.
    #[arg(long, conflicts_with = "path")]
    pub list: bool,

    /// Also apply the project's settings that loosen the policy (a mode that asks less,
    /// allow rules, the sandbox off or the network on, more directories); without it they
    /// are left out, saying so.
    #[arg(long, conflicts_with_all = ["show", "revoke", "list"])]
    pub allow_loosening: bool,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    #[command(subcommand)]
    pub action: AuditAction,
}

#[derive(Debug, Subcommand)]
pub enum AuditAction {
    /// Check the log's hash chain (rotated files oldest first, then the live one, then the
    /// head anchor); exit 1 naming the first broken or missing record.
    Verify {
        /// The log (default: this project's, as `toolbelt audit path` prints it).
        file: Option<PathBuf>,
        /// Print JSON: {"ok": true, "records", "first_seq", …} or {"ok": false, "kind", "message", …}.
        #[arg(long)]
        json: bool,
    },
    /// Print where this project's audit log is (whether it is enabled or not).
    Path,
}

#[derive(Debug, Args)]
pub struct McpArgs {
    /// Serve Streamable HTTP at http://ADDR/mcp instead of stdio (e.g. 127.0.0.1:8765).
    #[arg(long, value_name = "ADDR")]
    pub http: Option<std::net::SocketAddr>,

    /// Require `Authorization: Bearer <token>` on HTTP, the token read from this environment
    /// variable.
    #[arg(long, value_name = "VAR", requires = "http")]
    pub token_env: Option<String>,

    /// A workspace root when the client offers none (repeatable; the first is the working
    /// directory). Default: --cwd and every --add-dir.
    #[arg(long, value_name = "DIR")]
    pub root: Vec<PathBuf>,

    /// HTTP sessions held at once; past this a new one is refused until one ends [default:
    /// 64, or mcp.max_sessions].
    #[arg(long, value_name = "N", requires = "http", value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub max_sessions: Option<u64>,

    /// Close an HTTP session unused for this many seconds, killing its background processes
    /// [default: 1800, or mcp.session_idle_timeout].
    #[arg(long, value_name = "SECS", requires = "http", value_parser = clap::value_parser!(u64).range(1..=604_800))]
    pub session_idle_timeout: Option<u64>,

    /// Close a call's SSE stream after this many seconds while the call goes on; the client
    /// resumes it with Last-Event-ID (0: never) [default: 0, or mcp.sse_poll_after].
    #[arg(long, value_name = "SECS", requires = "http", value_parser = clap::value_parser!(u64).range(0..=86_400))]
    pub sse_poll_after: Option<u64>,

    /// After SIGTERM, let running calls finish for this many seconds, then cut them (0: at
    /// once) [default: 20, or mcp.drain_timeout].
    #[arg(long, value_name = "SECS", requires = "http", value_parser = clap::value_parser!(u64).range(0..=3_600))]
    pub drain_timeout: Option<u64>,

    /// Also answer web pages from this origin, e.g. http://localhost:3000 (repeatable; by
    /// default only the server's own origin, besides clients that send none).
    #[arg(long, value_name = "ORIGIN", requires = "http")]
    pub allow_origin: Vec<String>,

    /// Also answer requests whose Host is this name, as clients behind a load balancer or an
    /// Ingress send it, e.g. toolbelt.example.com (repeatable; by default only the server's
    /// address, and localhost on loopback).
    #[arg(long, value_name = "HOST", requires = "http")]
    pub allow_host: Vec<String>,
}

#[derive(Debug, Args)]
pub struct AgentArgs {
    /// The task; `-` reads it from stdin (as does no argument with input piped in).
    pub prompt: Option<String>,

    /// The model [default: the agent definition's, else the provider's].
    #[arg(long)]
    pub model: Option<String>,

    /// The model provider, by name: `[agent.providers.NAME]`, or `openai`/`anthropic` from
    /// the environment [default: `agent.provider`, else the first].
    #[arg(long, value_name = "NAME")]
    pub provider: Option<String>,

    /// Run this agent definition (`toolbelt agents` lists them) instead of the main agent.
    #[arg(long = "agent", value_name = "NAME")]
    pub agent: Option<String>,

    /// Model turns at most [default: agent.max_turns, 100].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_turns: Option<u32>,

    /// Print one JSON object: status, final text, turns, tool calls, usage and the messages.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Args)]
pub struct AgentsArgs {
    /// Print JSON: every definition (shadowed ones too, with their prompts) and every problem.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct SkillsArgs {
    /// Print JSON: every skill (shadowed ones too) and every problem.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct McpServersArgs {
    /// Print JSON.
    #[arg(long, global = true)]
    pub json: bool,
    /// Sign in to a server, or sign out; without one, show every server's state.
    #[command(subcommand)]
    pub action: Option<McpServersAction>,
}

#[derive(Debug, Subcommand)]
pub enum McpServersAction {
    /// Sign in to an HTTP server that asks for OAuth: prints the address to open, opens the
    /// browser, and keeps the tokens (owner-only) for every later connection.
    Login(McpLoginArgs),
    /// Forget a server's OAuth tokens, and toolbelt's registration with its authorization
    /// server (the next sign-in registers anew).
    Logout {
        /// The server's name in the settings.
        name: String,
    },
}

#[derive(Debug, Args)]
pub struct McpLoginArgs {
    /// The server's name in the settings.
    pub name: String,
    /// Only print the address to open; do not start a browser.
    #[arg(long)]
    pub no_browser: bool,
    /// Seconds to wait for the browser to come back.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub timeout: u64,
}

#[derive(Debug, Args)]
pub struct ConfigArgs {
    #[command(subcommand)]
    pub action: ConfigAction,
}

#[derive(Debug, Subcommand)]
pub enum ConfigAction {
    /// Print the merged settings and where each value came from.
    Show {
        /// Print JSON: every key with its value and source.
        #[arg(long)]
        json: bool,
    },
    /// Check every settings file: unknown keys, wrong types, bad rules, hooks and directories;
    /// exit 1 when anything is wrong.
    Check {
        /// Print JSON: `ok`, the files read, and every message with its file and line.
        #[arg(long)]
        json: bool,
        /// Also connect the MCP servers, and report those that do not connect and the names
        /// in the settings (`disabled_tools`, `enabled_tools`, `mcp__server__tool` rules) that
        /// match none of their tools.
        #[arg(long)]
        connect: bool,
    },
}

#[derive(Debug, Args)]
pub struct PermissionsArgs {
    #[command(subcommand)]
    pub action: PermissionsAction,
}

#[derive(Debug, Subcommand)]
pub enum PermissionsAction {
    /// Print what the rules and the mode decide for one call, what made the decision, and the
    /// rule that would allow it; runs nothing.
    Explain {
        /// Tool name or alias.
        tool: String,
        /// The input as JSON (default: `{}`).
        input: Option<String>,
        /// Print the explanation as JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, Args)]
pub struct SandboxArgs {
    #[command(subcommand)]
    pub action: SandboxAction,
}

#[derive(Debug, Subcommand)]
pub enum SandboxAction {
    /// Print what the sandbox can enforce on this machine; exit 1 when the chosen mode
    /// (--sandbox, --network) cannot be enforced.
    Check,
}

/// How `toolbelt tools` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ToolsFormat {
    /// A table for people: name, category, aliases, summary.
    Table,
    /// One name per line.
    Names,
    /// Every tool's full manifest (JSON array).
    Json,
    /// OpenAI function-calling definitions (JSON array).
    Openai,
    /// Anthropic tool definitions (JSON array).
    Anthropic,
    /// MCP `tools/list` entries (JSON array).
    Mcp,
}

#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ToolsFormat::Table)]
    pub format: ToolsFormat,

    /// Only tools of this category (files, search, shell, web, code, planning, agent, mcp, other).
    #[arg(long, value_name = "CATEGORY")]
    pub category: Option<String>,

    /// Only tools carrying this tag (repeatable: all must match).
    #[arg(long, value_name = "TAG")]
    pub tag: Vec<String>,

    /// In the table, also list every tool `tools.enabled` / `tools.disabled` (or `--tools`,
    /// `--disable-tool`) left out, each with the setting that did.
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args)]
pub struct CallArgs {
    /// Tool name or alias.
    pub tool: String,

    /// The input as JSON, or `-` to read it from stdin (default: `{}`).
    pub input: Option<String>,

    /// Print one JSON object: {"is_error","content","structured","duration_ms"}.
    #[arg(long)]
    pub json: bool,

    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// A file of JSON Lines ({"id","name","input"} per line), or `-` for stdin (default).
    pub file: Option<PathBuf>,

    /// Also stream the calls' events (started, progress, output, finished) as JSON lines.
    #[arg(long)]
    pub events: bool,

    /// How many shared calls run at once [default: runtime.concurrency, 10].
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub concurrency: Option<u16>,

    #[command(flatten)]
    pub session: SessionArgs,
}

#[derive(Debug, Args)]
pub struct SessionArgs {
    /// Keep the session's state (working directory, todo list, and what other tools keep)
    /// across invocations, by this name (kept in the user's state directory, per project).
    #[arg(long, value_name = "NAME")]
    pub session: Option<String>,
}
