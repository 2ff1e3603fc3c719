//! [`Toolbelt`]: the tools, policy, hooks, sandbox, audit log and MCP upstreams of a working
//! directory, set up in a few lines the way the `toolbelt` binary sets them up.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use toolbelt::policy::PermissionMode;
//! use toolbelt::runtime::ToolCall;
//!
//! let toolbelt = toolbelt::Toolbelt::builder(std::env::current_dir()?)
//!     .mode(PermissionMode::AcceptEdits)
//!     .allow("Bash(cargo test *)")
//!     .build()
//!     .await?;
//! let session = toolbelt.session("main");
//! let result = toolbelt.call(&session, ToolCall::new("1", "Read", serde_json::json!({"file_path": "README.md"}))).await;
//! println!("{}", result.text());
//! # Ok(()) }
//! ```
//!
//! With nobody set to approve ([`ToolbeltBuilder::approver`]), what the policy would ask
//! about is refused, naming the rule that would allow it: the model reads that and can say so.
//! With nobody set to answer ([`ToolbeltBuilder::asker`]), `AskUserQuestion` and
//! `ExitPlanMode` fail saying so, and `Brief` messages reach only the call's events.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::{Asker, CancellationToken, EventSink, ExportFormat, Nobody};
use toolbelt_mcp::client::Gateway;
use toolbelt_policy::{Approver, NoApprover, PermissionMode};
use toolbelt_runtime::{Runtime, Session, ToolCall, ToolResult};

use crate::assemble::{AssembleError, Assembly, existing_dir};
use crate::settings::schema::Key;
use crate::settings::{Entry, Origin, Settings};

/// How a [`Toolbelt`] is set up; see [`Toolbelt::builder`].
pub struct ToolbeltBuilder {
    cwd: PathBuf,
    add_dirs: Vec<PathBuf>,
    entries: Vec<Entry>,
    environment: bool,
    claude: bool,
    approver: Arc<dyn Approver>,
    asker: Arc<dyn Asker>,
    concurrency: Option<usize>,
    gateway: bool,
    home: Option<PathBuf>,
    task_list: Option<String>,
}

impl ToolbeltBuilder {
    fn entry(mut self, key: Key, value: impl Into<Value>, how: &str) -> Self {
        self.entries.push(Entry { key: key.to_string(), value: value.into(), origin: Origin::flag(how) });
        self
    }

    /// The permission mode (above every settings file but the managed one, like `--mode`).
    pub fn mode(self, mode: PermissionMode) -> Self {
        self.entry(Key::PERMISSIONS_MODE, mode.as_str(), "builder mode()")
    }

    /// Allows calls matching `rule` (`Bash(cargo test *)`, `Edit(/src/**)`…) without asking.
    pub fn allow(self, rule: &str) -> Self {
        self.entry(Key::PERMISSIONS_ALLOW, rule, "builder allow()")
    }

    /// Always asks before calls matching `rule`.
    pub fn ask(self, rule: &str) -> Self {
        self.entry(Key::PERMISSIONS_ASK, rule, "builder ask()")
    }

    /// Never runs calls matching `rule`; a bare tool name hides the tool.
    pub fn deny(self, rule: &str) -> Self {
        self.entry(Key::PERMISSIONS_DENY, rule, "builder deny()")
    }

    /// Any settings key (`Key::SANDBOX_NETWORK`, `Key::RUNTIME_OUTPUT_BUDGET`,
    /// `Key::AUDIT_PATH`…) at the level of a command-line flag; its value is checked like a
    /// flag's when the toolbelt is built.
    pub fn setting(self, key: Key, value: impl Into<Value>) -> Self {
        let how = format!("builder setting({key})");
        self.entry(key, value, &how)
    }

    /// Another workspace root besides the working directory (relative to the current directory).
    pub fn add_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.add_dirs.push(dir.into());
        self
    }

    /// Who answers what the policy asks about (a terminal, a UI, an MCP elicitation). The
    /// default is nobody: such calls are refused with the rule that would allow them.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.approver = approver;
        self
    }

    /// Who answers the questions tools put to the user (`AskUserQuestion`, a plan to approve)
    /// and sees the messages they send (`Brief`): the embedding application's UI. The default
    /// is nobody: questions fail, saying so, and are never answered for the user.
    pub fn asker(mut self, asker: Arc<dyn Asker>) -> Self {
        self.asker = asker;
        self
    }

    /// Whether `TOOLBELT_<SECTION>__<KEY>` variables are read as a settings layer (yes by
    /// default, as the binary does).
    pub fn environment(mut self, read: bool) -> Self {
        self.environment = read;
        self
    }

    /// Applies all of Claude Code's settings files, not only their deny and ask rules (as
    /// `--claude-settings` does).
    pub fn claude_settings(mut self, whole: bool) -> Self {
        self.claude = whole;
        self
    }

    /// How many calls of a batch run at once (overrides `runtime.concurrency`).
    pub fn concurrency(mut self, calls: usize) -> Self {
        self.concurrency = Some(calls);
        self
    }

    /// The user's home directory: the user settings (`.config/toolbelt/config.toml`), the
    /// trust store and session files (`.local/state/toolbelt`) and Claude Code's user
    /// settings are found under it instead of from `HOME` and the XDG variables.
    pub fn home(mut self, dir: impl Into<PathBuf>) -> Self {
        self.home = Some(dir.into());
        self
    }

    /// Works on the task list named `name`, shared with every session, agent and process that
    /// names it (as `--task-list` does; the default is the project's own list).
    pub fn task_list(mut self, name: impl Into<String>) -> Self {
        self.task_list = Some(name.into());
        self
    }

    /// Leaves the configured upstream MCP servers unconnected.
    pub fn without_gateway(mut self) -> Self {
        self.gateway = false;
        self
    }

    /// Reads the settings, checks them, and builds the runtime; connects the upstream MCP
    /// servers (waiting for each up to its startup timeout).
    pub async fn build(self) -> Result<Toolbelt, AssembleError> {
        let here = std::env::current_dir().map_err(|e| AssembleError::Directory {
            what: "current directory".into(),
            path: PathBuf::from("."),
            message: e.to_string(),
        })?;
        let cwd = existing_dir(&here, &self.cwd, "working directory")?;
        let mut roots = vec![cwd.clone()];
        for dir in &self.add_dirs {
            let dir = existing_dir(&here, dir, "added root")?;
            if !roots.contains(&dir) {
                roots.push(dir);
            }
        }
        let env: Vec<(String, String)> = if self.environment { std::env::vars().collect() } else { Vec::new() };
        let mut asm = Assembly::load(cwd, roots, self.entries, env, self.claude, self.home.as_deref());
        if self.task_list.is_some() {
            asm.task_list = self.task_list;
        }
        let runtime = asm.runtime_with(self.concurrency, self.approver, self.asker)?;
        let gateway = if self.gateway { asm.gateway(runtime.registry()).await } else { None };
        Ok(Toolbelt { asm, runtime, gateway })
    }
}

/// The tool system of one working directory, set up by [`Toolbelt::builder`]; what would ask
/// is answered by the builder's approver (by default nobody: refused, naming the rule).
pub struct Toolbelt {
    asm: Assembly,
    runtime: Arc<Runtime>,
    gateway: Option<Gateway>,
}

impl Toolbelt {
    /// Starts setting up a toolbelt working in `cwd` (relative to the current directory; its
    /// project and settings are found from there, as the binary finds them).
    pub fn builder(cwd: impl Into<PathBuf>) -> ToolbeltBuilder {
        ToolbeltBuilder {
            cwd: cwd.into(),
            add_dirs: Vec::new(),
            entries: Vec::new(),
            environment: true,
            claude: false,
            approver: Arc::new(NoApprover),
            asker: Arc::new(Nobody("no asker was given to Toolbelt::builder (see `.asker(…)`)".into())),
            concurrency: None,
            gateway: true,
            home: None,
            task_list: None,
        }
    }

    /// The runtime (for batches, streaming events, cancellation, explanations).
    pub fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }

    /// The merged settings.
    pub fn settings(&self) -> &Settings {
        &self.asm.settings
    }

    /// What the user should be told about the settings (a project waiting for
    /// `toolbelt trust`, Claude Code's rules found…).
    pub fn notices(&self) -> Vec<String> {
        self.asm.notices()
    }

    /// A session named `id`: the working directory and roots, its files (spilled output,
    /// task logs) in the user's state directory. Old sessions' files are cleaned up here.
    pub fn session(&self, id: &str) -> Session {
        let dir = self.asm.sessions_dir();
        crate::sessions::clean(&dir);
        Session::new(id, self.asm.cwd.clone(), self.asm.roots.clone(), dir.join(id))
    }

    /// Runs one call through the whole pipeline (validation, policy, hooks, audit).
    pub async fn call(&self, session: &Session, call: ToolCall) -> ToolResult {
        self.runtime.call(session, call, &EventSink::none(), &CancellationToken::new()).await
    }

    /// Runs the calls of one model turn together: those that only read run concurrently,
    /// the others in order; results come back in call order.
    pub async fn batch(&self, session: &Session, calls: Vec<ToolCall>) -> Vec<ToolResult> {
        self.runtime.batch(session, calls, &EventSink::none(), &CancellationToken::new()).await
    }

    /// Every tool's schema in an API's shape, to send with the model request.
    pub fn tool_schemas(&self, format: ExportFormat) -> Vec<Value> {
        let mut specs = self.runtime.registry().specs();
        specs.sort_by(|a, b| a.name.cmp(&b.name));
        specs.iter().map(|spec| format.render(spec)).collect()
    }

    /// The job scheduler behind the cron tools. Nothing fires until it is started
    /// ([`crate::jobs::JobHost::start`]: with `true`, the project's durable jobs too); until
    /// then `CronCreate` accepts durable jobs only.
    pub fn jobs(&self) -> Option<Arc<crate::jobs::JobHost>> {
        self.runtime.services().get::<crate::jobs::JobHost>()
    }

    /// Stops the job scheduler and the upstream MCP servers.
    pub async fn shutdown(self) {
        if let Some(jobs) = self.jobs() {
            jobs.shutdown();
        }
        if let Some(gateway) = self.gateway {
            gateway.shutdown().await;
        }
    }
}
