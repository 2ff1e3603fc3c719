//! One module per subcommand, and the set-up they share: the workspace, the settings, and
//! the runtime built from them.

pub mod audit;
pub mod batch;
pub mod call;
pub mod config;
pub mod mcp;
pub mod mcp_servers;
pub mod permissions;
pub mod sandbox;
pub mod tools;
pub mod trust;

use std::sync::Arc;

use toolbelt::settings::{self, Entry, Loaded, Locations, Problem, Settings, TrustStore};
use toolbelt_core::{CancellationToken, Category, Extensions, Registry};
use toolbelt_mcp::client::Gateway;
use toolbelt_policy::hooks::HookSet;
use toolbelt_policy::protected::ProtectedPaths;
use toolbelt_policy::rules::RuleEnv;
use toolbelt_policy::{Approver, NoApprover, PermissionEngine};
use toolbelt_runtime::{AuditLog, Runtime, RuntimeConfig};
use toolbelt_tools::fs::journal::JournalDir;
use toolbelt_tools::shell::BashConfig;
use toolbelt_tools::shell::sandbox::{SandboxConfig, SandboxMode};

use crate::Usage;
use crate::approve::TerminalApprover;
use crate::cli::{Global, SandboxArg, UnsandboxedArg};
use crate::project::Workspace;

/// What every command starts from: where it works and the merged settings.
pub struct Setup {
    /// The working directory, the roots and the project.
    pub ws: Workspace,
    /// Where the settings files are.
    pub loc: Locations,
    /// Every value of every layer.
    pub loaded: Loaded,
    /// The merged, checked settings.
    pub settings: Settings,
    /// How `~/` and `./` in rules resolve.
    pub rule_env: RuleEnv,
    /// Every problem found in the settings.
    pub problems: Vec<Problem>,
    /// Variables toolbelt reads secrets from (besides the settings' own): kept out of shell
    /// commands' environment.
    pub secret_vars: Vec<String>,
    /// How to read the settings again (after toolbelt wrote to them).
    reload: Reload,
}

/// What the settings were read with, to read them again.
#[derive(Clone)]
struct Reload {
    flags: Vec<Entry>,
    claude: bool,
}

impl Setup {
    /// Reads the flags and every settings layer. Problems are kept, not fatal: `config check`
    /// reports them; other commands call [`Setup::require_valid`].
    pub fn load(global: &Global) -> anyhow::Result<Setup> {
        let mut ws = Workspace::from_flags(global)?;
        let loc = Locations::discover(&ws.cwd, &ws.project);
        let loaded = settings::load(&loc, flag_entries(global), std::env::vars(), global.claude_settings);
        if let Some(notice) = loaded.trust.notice(&loc.project) {
            tracing::warn!("{notice}");
        }
        for notice in &loaded.notices {
            tracing::warn!("{notice}");
        }
        let rule_env = RuleEnv { home: loc.home.clone(), cwd: ws.cwd.clone() };
        let (settings, resolve_problems) = Settings::resolve(&loaded, &loc, &rule_env);
        let mut problems = loaded.problems.clone();
        problems.extend(resolve_problems);
        for dir in &settings.additional_directories {
            if !ws.roots.contains(dir) {
                ws.roots.push(dir.clone());
            }
        }
        let secret_vars = settings.mcp_servers.iter().filter_map(|(_, c)| c.bearer_token_env.clone()).collect();
        let reload = Reload { flags: flag_entries(global), claude: global.claude_settings };
        Ok(Setup { ws, loc, loaded, settings, rule_env, problems, secret_vars, reload })
    }

    /// [`Setup::load`], and at a terminal, when the project's own settings wait for trust,
    /// the question whether to trust it (then the settings are read again).
    pub fn load_asking_trust(global: &Global) -> anyhow::Result<Setup> {
        let setup = Setup::load(global)?;
        if trust::ask_at_terminal(&setup.loc, &setup.loaded.trust) {
            return Setup::load(global);
        }
        Ok(setup)
    }

    /// Fails with every settings problem (exit status 2) when there is any.
    pub fn require_valid(&self) -> anyhow::Result<()> {
        if self.problems.is_empty() {
            return Ok(());
        }
        let lines: Vec<String> = self.problems.iter().map(|p| format!("  {p}")).collect();
        Err(Usage(format!(
            "the settings have {} problem{}; fix {} (`toolbelt config check` lists them):\n{}",
            self.problems.len(),
            if self.problems.len() == 1 { "" } else { "s" },
            if self.problems.len() == 1 { "it" } else { "them" },
            lines.join("\n")
        ))
        .into())
    }

    /// The permission engine of these settings, writing "always" rules to the project-local file.
    pub fn engine(&self) -> PermissionEngine {
        PermissionEngine::new(self.settings.permissions.clone(), self.rule_env.clone())
            .with_store(Arc::new(self.rule_store()))
            .with_protected(self.protected_paths())
    }

    /// Where "always" rules go: the project-local file, keeping the project trusted when it
    /// was (its digest covers that file). Rules approved in a session working elsewhere (an
    /// MCP client's roots in another project) go to that project's file, the same way.
    fn rule_store(&self) -> settings::LocalRuleStore {
        let reload = self.reload.clone();
        let store_for = move |loc: Locations, applied: bool| {
            let reload = reload.clone();
            settings::LocalRuleStore::new(loc.local_file()).after_write(move || {
                let now = settings::load(&loc, reload.flags.clone(), std::env::vars(), reload.claude);
                settings::trust::refresh_after_write(&TrustStore::at(&loc), &loc.project, applied, &now.pending);
            })
        };
        let applied = !matches!(self.loaded.trust, settings::Trust::Untrusted { .. });
        let (home_store, reload) = (store_for.clone(), self.reload.clone());
        home_store(self.loc.clone(), applied).elsewhere(&self.ws.cwd, move |project| {
            let loc = Locations::discover(project, project);
            let before = settings::load(&loc, reload.flags.clone(), std::env::vars(), reload.claude);
            store_for(loc, !matches!(before.trust, settings::Trust::Untrusted { .. }))
        })
    }

    /// What no tool writes without an explicit approval: the entries of every project
    /// (`.git`, `.toolbelt`, `.claude`, …) and the user's toolbelt settings, toolbelt's state
    /// (the trust store, audit logs), the managed settings and the user's git configuration.
    pub fn protected_paths(&self) -> ProtectedPaths {
        let mut paths = vec![self.loc.state_dir.clone()];
        if let Some(dir) = self.loc.user_file.parent() {
            paths.push(dir.to_path_buf());
        }
        paths.extend(self.loc.managed_files.iter().cloned());
        paths.push(self.loc.home.join(".gitconfig"));
        let git_config_home = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| self.loc.home.join(".config"))
            .join("git");
        paths.push(git_config_home);
        ProtectedPaths::default().with_paths(paths)
    }

    /// The built-in tools, without those a bare deny rule removes.
    pub fn registry(&self, engine: &PermissionEngine) -> Registry {
        let registry = toolbelt::builtin_registry();
        engine.hide_denied(&registry);
        registry
    }

    /// Connects the configured upstream MCP servers, their tools joining `registry` (those a
    /// bare deny rule names stay hidden); `None` when none is configured.
    pub async fn gateway(&self, registry: &Arc<Registry>) -> Option<Gateway> {
        if self.settings.mcp_servers.is_empty() {
            return None;
        }
        // The servers' tools a bare deny rule names join hidden, however late they come.
        let engine = self.engine();
        registry.hide_joining(move |spec| engine.hiding_rule(spec).is_some());
        let gateway = Gateway::start(self.settings.mcp_servers.clone(), Arc::clone(registry)).await;
        Some(gateway)
    }

    /// Whether calls of these tools need the upstream servers.
    pub fn needs_gateway(&self, names: &[&str]) -> bool {
        !self.settings.mcp_servers.is_empty()
            && names.iter().any(|n| n.starts_with("mcp__") || n.contains("McpResource") || n.contains("mcp_resource"))
    }

    /// The sandbox settings, holding the protected paths read-only.
    pub fn sandbox(&self) -> SandboxConfig {
        let mut sandbox = self.settings.shell.sandbox.clone();
        sandbox.protected_paths = self.protected_paths().paths().to_vec();
        sandbox
    }

    /// The runtime every calling command uses: the tools behind the permission engine, the
    /// hooks and the audit log of the settings. `concurrency` overrides the settings' value.
    pub fn runtime(&self, concurrency: Option<usize>) -> anyhow::Result<Runtime> {
        let approver: Arc<dyn Approver> = match TerminalApprover::open() {
            Some(terminal) => Arc::new(terminal),
            None => Arc::new(NoApprover),
        };
        self.runtime_with(concurrency, approver)
    }

    /// [`Setup::runtime`] with the given approver (MCP elicitations instead of a terminal).
    pub fn runtime_with(&self, concurrency: Option<usize>, approver: Arc<dyn Approver>) -> anyhow::Result<Runtime> {
        self.require_valid()?;
        let mut config: RuntimeConfig = self.settings.runtime.clone();
        if let Some(n) = concurrency {
            config.concurrency = n;
        }
        let mut bash = BashConfig { deny_patterns: self.settings.shell.deny_commands.clone(), ..BashConfig::default() };
        bash.env_remove.extend(self.settings.shell.env_remove.iter().cloned());
        bash.env_keep.clone_from(&self.settings.shell.env_keep);
        bash.secret_vars.clone_from(&self.secret_vars);
        bash.validate().map_err(Usage)?;
        let mut services = Extensions::default();
        services.insert(self.sandbox());
        services.insert(bash);
        // Multi-file commits journal here: outside the project, where no project file and no
        // sandboxed command can plant a journal for toolbelt to act on.
        services.insert(JournalDir(self.loc.project_state_dir().join("patch-journal")));
        let engine = self.engine();
        let registry = self.registry(&engine);
        let hooks = HookSet::from_json(&self.settings.hooks)
            .map_err(|e| Usage(format!("the hooks settings are invalid: {e}")))?
            .with_permission_mode(engine.mode().as_str())
            .with_project_dir(&self.ws.project);
        let mut builder = Runtime::builder(Arc::new(registry))
            .config(config)
            .services(services)
            .authorizer(Arc::new(engine))
            .approver(approver)
            .hooks(Arc::new(hooks));
        if self.settings.audit_enabled {
            builder = builder.audit(AuditLog::new(self.settings.audit.clone()));
        }
        Ok(builder.build())
    }
}

/// The command line's settings, as the flag layer's entries.
pub(crate) fn flag_entries(global: &Global) -> Vec<Entry> {
    let mut out = Vec::new();
    if let Some(mode) = &global.mode {
        out.push(Entry::flag("permissions.mode", mode.as_str(), "--mode"));
    }
    for (key, flag, rules) in [
        ("permissions.allow", "--allow", &global.allow),
        ("permissions.ask", "--ask", &global.ask),
        ("permissions.deny", "--deny", &global.deny),
    ] {
        out.extend(rules.iter().map(|r| Entry::flag(key, r.as_str(), flag)));
    }
    if let Some(path) = &global.audit {
        out.push(Entry::flag("audit.enabled", true, "--audit"));
        out.push(Entry::flag("audit.path", path.display().to_string(), "--audit"));
    }
    if global.claude_settings {
        out.push(Entry::flag("compat.claude", true, "--claude-settings"));
    }
    if let Some(budget) = global.output_budget {
        out.push(Entry::flag("runtime.output_budget", budget, "--output-budget"));
    }
    if let Some(secs) = global.max_timeout {
        out.push(Entry::flag("runtime.max_timeout", secs, "--max-timeout"));
    }
    if let Some(mode) = global.sandbox {
        let name = match mode {
            SandboxArg::ReadOnly => SandboxMode::ReadOnly,
            SandboxArg::WorkspaceWrite => SandboxMode::WorkspaceWrite,
            SandboxArg::DangerFullAccess => SandboxMode::DangerFullAccess,
        };
        out.push(Entry::flag("sandbox.mode", name.as_str(), "--sandbox"));
    }
    if global.network {
        out.push(Entry::flag("sandbox.network", true, "--network"));
    }
    if let Some(what) = global.if_unsandboxed {
        let name = match what {
            UnsandboxedArg::Ask => "ask",
            UnsandboxedArg::Refuse => "refuse",
            UnsandboxedArg::Run => "run",
        };
        out.push(Entry::flag("sandbox.if_unsandboxed", name, "--if-unsandboxed"));
    }
    out.extend(global.deny_command.iter().map(|p| Entry::flag("shell.deny_commands", p.as_str(), "--deny-command")));
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
