//! The runtime an [`Assembly`] builds: the tools behind the permission engine, the services
//! they reach (shell, web, stores, language servers, the job scheduler, the agent host), the
//! hooks and the audit log of the settings.

use std::sync::Arc;

use toolbelt_core::{Asker, Extensions, People, Prompts};
use toolbelt_policy::Approver;
use toolbelt_policy::hooks::HookSet;
use toolbelt_runtime::{AuditLog, Runtime, RuntimeConfig};
use toolbelt_tools::code::index::CodeIndexDir;
use toolbelt_tools::files::JournalDir;
use toolbelt_tools::knowledge::skills::SkillPrompts;
use toolbelt_tools::language_servers::LanguageServers;
use toolbelt_tools::planning::WorktreeDir;
use toolbelt_tools::shell::BashConfig;
use toolbelt_tools::storage::AuditChain;
use toolbelt_tools::web::Web;

use super::shared_audit::SharedAuditLog;
use super::{AssembleError, Assembly, skill_dirs};
use crate::live::LiveHooks;

impl Assembly {
    /// The runtime: the tools behind the permission engine, the hooks and the audit log of
    /// the settings, `approver` answering what the policy asks, `asker` what tools ask the
    /// user (`AskUserQuestion`, plans) and where they tell it things; with the agent tools and the host that
    /// runs sub-agents when a model provider is configured. `concurrency` overrides the
    /// settings'.
    pub fn runtime_with(
        &self,
        concurrency: Option<usize>,
        approver: Arc<dyn Approver>,
        asker: Arc<dyn Asker>,
    ) -> Result<Arc<Runtime>, AssembleError> {
        self.runtime_serving(concurrency, approver, asker, false)
    }

    /// [`Assembly::runtime_with`] for a server whose clients may offer their own model
    /// (MCP sampling): with `sampling`, the agent host and tools are there even without a
    /// configured provider, and the server shows the tools only to sessions that can run
    /// agents.
    pub fn runtime_serving(
        &self,
        concurrency: Option<usize>,
        approver: Arc<dyn Approver>,
        asker: Arc<dyn Asker>,
        sampling: bool,
    ) -> Result<Arc<Runtime>, AssembleError> {
        self.require_valid()?;
        let mut config: RuntimeConfig = self.settings.runtime.clone();
        if let Some(n) = concurrency {
            config.concurrency = n;
        }
        let mut bash = BashConfig { deny_patterns: self.settings.shell.deny_commands.clone(), ..BashConfig::default() };
        bash.env_remove.extend(self.settings.shell.env_remove.iter().cloned());
        bash.env_keep.clone_from(&self.settings.shell.env_keep);
        bash.persistent = self.settings.shell.persistent;
        bash.max_sessions = self.settings.shell.max_sessions;
        bash.session_idle_timeout = self.settings.shell.session_idle_timeout;
        bash.secret_vars.clone_from(&self.secret_vars);
        bash.trusted_project = self.person_trusted().then(|| self.loc.project.clone());
        bash.replica = crate::replica::on_team(self.settings.storage.is_some());
        bash.validate().map_err(|e| AssembleError::Shell(e.to_string()))?;
        let mut services = Extensions::default();
        services.insert(self.sandbox());
        services.insert(bash);
        // Multi-file commits journal here: outside the project, where no project file and no
        // sandboxed command can plant a journal for toolbelt to act on.
        services.insert(JournalDir(self.loc.project_state_dir().join("patch-journal")));
        services.insert(WorktreeDir(self.worktree_dir()));
        services.insert(Web::new(self.settings.web.clone()));
        services.insert(People(asker));
        services.insert(self.model_settings());
        services.insert(self.task_store()?);
        let skills = skill_dirs(&self.loc, &self.loaded.plugins);
        services.insert(Prompts(Arc::new(SkillPrompts(skills.clone()))));
        services.insert(skills);
        services.insert(self.snippet_store()?);
        services.insert(CodeIndexDir(self.loc.cache_dir.join("code-index")));
        services.insert(LanguageServers::new(self.settings.lsp.clone()));
        services.insert(self.settings.lint.clone());
        let jobs = self.job_host();
        services.insert(jobs.handle());
        services.insert_arc(Arc::clone(&jobs));
        let engine = self.engine();
        let agents = self.agents();
        let registry = self.registry_for(&engine, &agents, sampling);
        let host = (agents.available() || sampling).then(|| agents.host());
        if let Some(host) = &host {
            services.insert(host.handle());
        }
        // Replaceable while serving: a settings file that changes swaps them (`live`).
        let hooks = Arc::new(LiveHooks::new(self.hook_set(&engine)?));
        services.insert_arc(Arc::clone(&hooks));
        let mut builder = Runtime::builder(Arc::new(registry))
            .config(config)
            .services(services)
            .authorizer(Arc::new(engine))
            .approver(approver)
            .hooks(hooks);
        if self.settings.audit_enabled {
            builder = builder.audit(self.audit_log()?);
        }
        if let Some(observer) = crate::telemetry::observer() {
            builder = builder.observer(observer);
        }
        let runtime = Arc::new(builder.build());
        jobs.attach(&runtime);
        if let Some(host) = host {
            host.attach(&runtime);
        }
        Ok(runtime)
    }

    /// The audit log of the settings: its file, or with `storage.url` the chain in that
    /// database, which every replica appends to.
    pub fn audit_log(&self) -> Result<AuditLog, AssembleError> {
        let config = self.settings.audit.clone();
        let Some(shared) = self.shared_storage()? else { return Ok(AuditLog::new(config)) };
        let store = SharedAuditLog::start(AuditChain::new(shared), &crate::replica::name())
            .map_err(|e| AssembleError::Storage(format!("cannot start the audit log's writer: {e}")))?;
        Ok(AuditLog::with_store(config, Box::new(store)))
    }

    /// The hooks of these settings, the project's confined as `engine` says.
    pub fn hook_set(&self, engine: &toolbelt_policy::PermissionEngine) -> Result<HookSet, AssembleError> {
        Ok(HookSet::from_json(&self.settings.hooks)
            .and_then(|hooks| hooks.with_confined_json(&self.settings.project_hooks, self.project_sandbox(engine)))
            .map_err(|e| AssembleError::Hooks(e.to_string()))?
            .with_permission_mode(engine.mode().as_str())
            .with_project_dir(&self.loc.project))
    }
}
