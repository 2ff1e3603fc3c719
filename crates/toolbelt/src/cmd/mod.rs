//! One module per subcommand, and the set-up they share: the workspace, the settings, and
//! the runtime built from them.

pub mod agent;
pub mod agents;
pub mod audit;
pub mod batch;
pub mod call;
pub mod config;
pub mod config_check;
pub mod cron;
pub mod mcp;
pub mod mcp_login;
pub mod mcp_servers;
pub mod permissions;
pub mod plugin;
pub mod sandbox;
pub mod serve_ops;
pub mod serve_replicas;
pub mod serve_team;
pub mod skills;
pub mod tasks;
pub mod tools;
pub mod trust;

use std::sync::Arc;

use toolbelt::assemble::Assembly;
use toolbelt::settings::Entry;
use toolbelt::settings::Key;
use toolbelt_core::{CancellationToken, Category};
use toolbelt_policy::{Approver, NoApprover};
use toolbelt_runtime::Runtime;
use toolbelt_tools::shell::{SandboxConfig, SandboxMode, WhenUnavailable};

use crate::Usage;
use crate::approve::TerminalApprover;
use crate::cli::{Global, SandboxArg, UnsandboxedArg};
use crate::project::WorkDirs;

/// What every command starts from: where it works and the merged settings (the library's
/// [`Assembly`], which it derefs to).
pub struct Setup {
    /// The working directory, the roots and the project.
    pub ws: WorkDirs,
    /// The settings read and what the runtime is built from.
    pub asm: Assembly,
}

impl std::ops::Deref for Setup {
    type Target = Assembly;

    fn deref(&self) -> &Assembly {
        &self.asm
    }
}

impl Setup {
    /// The project's MCP servers that wait for the project to be trusted, by name.
    pub fn waiting_for_trust(&self) -> Vec<String> {
        let toolbelt::settings::Trust::Untrusted { pending, .. } = &self.loaded.trust else { return Vec::new() };
        let mut names: Vec<String> =
            pending.entries.iter().filter_map(|e| Key::MCP_SERVERS.name_in(&e.key)).map(str::to_string).collect();
        names.sort();
        names.dedup();
        names
    }

    /// Reads the flags and every settings layer. Problems are kept, not fatal: `config check`
    /// reports them; other commands call [`Setup::require_valid`].
    pub fn load(global: &Global) -> anyhow::Result<Setup> {
        let mut ws = WorkDirs::from_flags(global)?;
        let mut asm = Assembly::load(
            ws.cwd.clone(),
            ws.roots.clone(),
            flag_entries(global),
            std::env::vars(),
            global.claude_settings,
            None,
        );
        if global.task_list.is_some() {
            asm.task_list.clone_from(&global.task_list);
        }
        for notice in asm.warnings() {
            tracing::warn!("{notice}");
        }
        if let Some(note) = &asm.loaded.claude_note {
            tracing::info!("{note}");
        }
        ws.roots.clone_from(&asm.roots);
        Ok(Setup { ws, asm })
    }

    /// [`Setup::load`], and at a terminal, when the project's own settings wait for trust,
    /// the question whether to trust it (then the settings are read again).
    pub fn load_asking_trust(global: &Global) -> anyhow::Result<Setup> {
        let setup = Setup::load(global)?;
        if trust::ask_at_terminal(global, &setup.loc, &setup.loaded.trust) {
            return Setup::load(global);
        }
        Ok(setup)
    }

    /// Fails with every settings problem (exit status 2) when there is any.
    pub fn require_valid(&self) -> anyhow::Result<()> {
        self.asm.require_valid().map_err(|e| Usage(e.to_string()).into())
    }

    /// Connects the upstream servers that calls of these tools (name and input) need, and no
    /// other ([`Assembly::servers_for`]); their tools join `runtime`'s registry.
    pub async fn gateway_for(
        &self,
        runtime: &Runtime,
        calls: &[(&str, &serde_json::Value)],
    ) -> Option<toolbelt_mcp::client::Gateway> {
        let servers = self.servers_for(runtime.registry(), calls);
        self.gateway_of(runtime.registry(), &servers).await
    }

    /// The runtime every calling command uses: the tools behind the permission engine, the
    /// hooks and the audit log of the settings, a terminal (when there is one) answering
    /// what asks. `concurrency` overrides the settings' value.
    pub fn runtime(&self, concurrency: Option<usize>) -> anyhow::Result<Arc<Runtime>> {
        self.terminal_runtime(concurrency, false)
    }

    /// [`Setup::runtime`] for an unattended run (`toolbelt batch`): tools that ask the user a
    /// question are told nobody is there (the permission prompt still uses a terminal).
    pub fn runtime_unattended(&self, concurrency: Option<usize>) -> anyhow::Result<Arc<Runtime>> {
        self.terminal_runtime(concurrency, true)
    }

    fn terminal_runtime(&self, concurrency: Option<usize>, unattended: bool) -> anyhow::Result<Arc<Runtime>> {
        let approver: Arc<dyn Approver> = match TerminalApprover::open() {
            Some(terminal) => Arc::new(terminal),
            None => Arc::new(NoApprover),
        };
        let asker = Arc::new(crate::ask::CliPeople::open(unattended));
        self.asm.runtime_with(concurrency, approver, asker).map_err(|e| Usage(e.to_string()).into())
    }

    /// The runtime `toolbelt mcp` serves: agents there even without a configured provider,
    /// for clients that offer sampling; `approver` and `asker` route to each session's client.
    pub fn runtime_serving(
        &self,
        concurrency: Option<usize>,
        approver: Arc<dyn Approver>,
        asker: Arc<dyn toolbelt_core::Asker>,
    ) -> anyhow::Result<Arc<Runtime>> {
        self.asm.runtime_serving(concurrency, approver, asker, true).map_err(|e| Usage(e.to_string()).into())
    }
}

/// The command line's settings, as the flag layer's entries.
pub(crate) fn flag_entries(global: &Global) -> Vec<Entry> {
    let mut out = Vec::new();
    if let Some(mode) = &global.mode {
        out.push(Entry::flag(Key::PERMISSIONS_MODE, mode.as_str(), "--mode"));
    }
    for (key, flag, rules) in [
        (Key::PERMISSIONS_ALLOW, "--allow", &global.allow),
        (Key::PERMISSIONS_ASK, "--ask", &global.ask),
        (Key::PERMISSIONS_DENY, "--deny", &global.deny),
    ] {
        out.extend(rules.iter().map(|r| Entry::flag(key, r.as_str(), flag)));
    }
    if let Some(path) = &global.audit {
        out.push(Entry::flag(Key::AUDIT_ENABLED, true, "--audit"));
        out.push(Entry::flag(Key::AUDIT_PATH, path.display().to_string(), "--audit"));
    }
    if global.claude_settings {
        out.push(Entry::flag(Key::COMPAT_CLAUDE, true, "--claude-settings"));
    }
    if let Some(budget) = global.output_budget {
        out.push(Entry::flag(Key::RUNTIME_OUTPUT_BUDGET, budget, "--output-budget"));
    }
    if let Some(secs) = global.max_timeout {
        out.push(Entry::flag(Key::RUNTIME_MAX_TIMEOUT, secs, "--max-timeout"));
    }
    if let Some(mode) = global.sandbox {
        let name = match mode {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::DangerFullAccess => SandboxMode::DangerFullAccess,
        };
        out.push(Entry::flag(Key::SANDBOX_MODE, name.as_str(), "--sandbox"));
    }
    if global.network {
        out.push(Entry::flag(Key::SANDBOX_NETWORK, true, "--network"));
    }
    if let Some(what) = global.if_unsandboxed {
        let choice = match what {
            UnsandboxedArg::Ask => WhenUnavailable::Ask,
            UnsandboxedArg::Refuse => WhenUnavailable::Refuse,
            UnsandboxedArg::Run => WhenUnavailable::Run,
        };
        out.push(Entry::flag(Key::SANDBOX_IF_UNSANDBOXED, choice.as_str(), "--if-unsandboxed"));
    }
    out.extend(global.deny_command.iter().map(|p| Entry::flag(Key::SHELL_DENY_COMMANDS, p.as_str(), "--deny-command")));
    if global.persistent_shell {
        out.push(Entry::flag(Key::SHELL_PERSISTENT, true, "--persistent-shell"));
    }
    out.extend(global.tools.iter().map(|t| Entry::flag(Key::TOOLS_ENABLED, t.as_str(), "--tools")));
    out.extend(global.disable_tool.iter().map(|t| Entry::flag(Key::TOOLS_DISABLED, t.as_str(), "--disable-tool")));
    out
}

/// Starts the sandbox probe when a call will run a shell command, so a sandbox that cannot
/// be enforced here is reported once, up front; other commands skip it.
pub fn probe_sandbox_for(sandbox: &SandboxConfig, runtime: &Runtime, tools: &[&str]) {
    let shell = tools
        .iter()
        .any(|name| runtime.registry().lookup(name).is_ok_and(|entry| entry.spec().category == Category::Shell));
    if shell {
        sandbox::probe_in_background(sandbox);
    }
}

/// A token cancelled by Ctrl-C (SIGINT) or SIGTERM, so an interrupted command still ends its
/// calls cleanly (processes killed, results reported as cancelled).
pub fn cancel_on_stop() -> CancellationToken {
    let token = CancellationToken::new();
    let trigger = token.clone();
    tokio::spawn(async move {
        let signal = stop_signal().await;
        tracing::warn!("{signal}: cancelling running calls");
        trigger.cancel();
    });
    token
}

/// Resolves at the first SIGINT or SIGTERM, naming it.
pub async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    match (signal(SignalKind::interrupt()), signal(SignalKind::terminate())) {
        (Ok(mut int), Ok(mut term)) => tokio::select! {
            _ = int.recv() => "interrupted",
            _ = term.recv() => "terminated",
        },
        _ => {
            let _ = tokio::signal::ctrl_c().await;
            "interrupted"
        }
    }
}
