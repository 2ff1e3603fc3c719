//! A runtime put together the way the `toolbelt` binary puts it together: the project found
//! from the working directory, every settings layer read and checked (the project's own
//! only once it is trusted), the permission engine with its protected paths and the file
//! "always" approvals go to, the sandbox and shell services, hooks, the audit log and the
//! upstream MCP servers. The binary and [`crate::Toolbelt`] both build from an [`Assembly`],
//! so an embedding agent gets exactly what `toolbelt call` and `toolbelt mcp` do.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toolbelt_core::{Registry, SettingsService};
use toolbelt_mcp::client::{Gateway, UpstreamConfig};
use toolbelt_policy::PermissionEngine;
use toolbelt_policy::rules::RuleEnv;
use toolbelt_tools::knowledge::skills::{PluginSkills, Scope as SkillScope, SkillDirs};
use toolbelt_tools::planning::{TASK_LIST_VAR, TaskListError};
use toolbelt_tools::storage::SharedStorage;

use toolbelt_agent::SearchDirs;

mod runtime;
mod sandbox;
mod servers;
mod shared_audit;
mod shared_tokens;
mod stores;

use crate::agents::AgentSetup;
use crate::settings::model_access::ModelSettings;
use crate::settings::plugins::{Plugin, Scope as PluginScope};
use crate::settings::{self, Entry, Loaded, Locations, Problem, Settings, TrustStore};

/// Why a runtime could not be put together.
#[derive(Debug, thiserror::Error)]
pub enum AssembleError {
    /// The settings have problems (each with its file and line); nothing runs until they are
    /// fixed (`toolbelt config check` lists them).
    #[error("the settings have {} problem(s); fix them (`toolbelt config check` lists them):\n{}", .0.len(), list(.0))]
    InvalidSettings(Vec<Problem>),
    /// A working directory or added root that is not a usable directory.
    #[error("{what} {}: {message}", .path.display())]
    Directory {
        /// Which directory (`--cwd`, `--add-dir`, `working directory`…).
        what: String,
        /// The path as given.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// The shell settings cannot be applied (a deny pattern that is not a regex…).
    #[error("the shell settings are invalid: {0}")]
    Shell(String),
    /// The hooks settings cannot be applied.
    #[error("the hooks settings are invalid: {0}")]
    Hooks(String),
    /// The task list named by `--task-list` or `TOOLBELT_TASK_LIST` cannot be one.
    #[error("--task-list / {TASK_LIST_VAR}: {0}")]
    TaskList(#[from] TaskListError),
    /// `[storage]` cannot be used.
    #[error("{0}")]
    Storage(String),
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

pub use crate::settings::project_root;

/// `dir` joined to `base`, canonical, and a directory.
pub fn existing_dir(base: &Path, dir: &Path, what: &str) -> Result<PathBuf, AssembleError> {
    let joined = base.join(dir);
    let error = |message: String| AssembleError::Directory { what: what.to_string(), path: joined.clone(), message };
    match std::fs::canonicalize(&joined) {
        Ok(p) if p.is_dir() => Ok(p),
        Ok(_) => Err(error("not a directory".into())),
        Err(e) => Err(error(e.to_string())),
    }
}

/// The settings of one working directory, read, and what a runtime is built from.
pub struct Assembly {
    /// The working directory (canonical).
    pub cwd: PathBuf,
    /// The workspace roots: the working directory, the added ones, and the settings'
    /// `permissions.additional_directories`.
    pub roots: Vec<PathBuf>,
    /// Where the settings files are (the project, the user's directories).
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
    /// The task list shared by name (`--task-list`, else `TOOLBELT_TASK_LIST`); `None` for
    /// the project's own. See [`Assembly::task_store`].
    pub task_list: Option<String>,
    /// What the settings were read from, to read them again after toolbelt wrote to them.
    reread: Reread,
    /// The shared storage `storage.url` names, once a store asked for it (one pool per
    /// process).
    shared: std::sync::OnceLock<Arc<SharedStorage>>,
}

/// What settings are read from besides the files: to read them again (after a write, for
/// another project's session) the same way.
#[derive(Clone)]
struct Reread {
    /// The flag layer.
    flags: Vec<Entry>,
    /// The environment layer's variables (`TOOLBELT_…__…`).
    env: Vec<(String, String)>,
    /// Whether Claude Code's settings apply whole (`--claude-settings`).
    claude: bool,
    /// The user's home when given instead of `HOME` and the XDG variables.
    home: Option<PathBuf>,
}

impl Reread {
    /// The locations and settings of the project of `dir`.
    fn load(&self, dir: &Path) -> (Locations, settings::Loaded) {
        let loc = locations(dir, &project_root(dir), self.home.as_deref());
        let loaded = settings::load(&loc, self.flags.clone(), self.env.clone(), self.claude);
        (loc, loaded)
    }

    /// The writer of `loc`'s project-local file (the `Config` tool's), which keeps the
    /// project trusted after a write when its settings applied before.
    fn store_keeping_trust(&self, loc: &Locations) -> settings::LocalRuleStore {
        let before = settings::load(loc, self.flags.clone(), self.env.clone(), self.claude);
        let storage = settings::storage_of(&before.entries, loc);
        let before = settings::trust::BeforeWrite::of(&before);
        let (this, loc) = (self.clone(), loc.clone());
        settings::LocalRuleStore::new(loc.local_file()).after_write(move || {
            let [without, with] = settings::trust_views(&loc, &this.flags, &this.env);
            let store = TrustStore::of(&loc, storage.as_ref());
            settings::trust::refresh_after_write(&store, &loc.project, before, &[&without, &with]);
        })
    }
}

/// The settings locations of `project`, the user's directories from the environment or
/// under `home`.
fn locations(cwd: &Path, project: &Path, home: Option<&Path>) -> Locations {
    match home {
        None => Locations::discover(cwd, project),
        Some(home) => Locations::discover_with(cwd, project, |name| match name {
            "HOME" => Some(home.as_os_str().to_owned()),
            "TOOLBELT_MANAGED_CONFIG" => std::env::var_os(name),
            _ => None,
        }),
    }
}

impl Assembly {
    /// Reads every settings layer for `cwd` (canonical) with `roots` (the cwd first), the
    /// flag layer `flags` and the environment `env`; the user's directories are found from
    /// `HOME` and the XDG variables, or under `home` when given. Problems are kept, not
    /// fatal: see [`Assembly::require_valid`].
    pub fn load(
        cwd: PathBuf,
        mut roots: Vec<PathBuf>,
        flags: Vec<Entry>,
        env: impl IntoIterator<Item = (String, String)>,
        claude: bool,
        home: Option<&Path>,
    ) -> Self {
        let project = project_root(&cwd);
        let loc = locations(&cwd, &project, home);
        // Only `TOOLBELT_…` variables are settings; they are kept to read the settings again.
        let env: Vec<(String, String)> = env.into_iter().filter(|(k, _)| k.starts_with("TOOLBELT_")).collect();
        let task_list = env.iter().find(|(k, v)| k == TASK_LIST_VAR && !v.is_empty()).map(|(_, v)| v.clone());
        let loaded = settings::load(&loc, flags.clone(), env.clone(), claude);
        let rule_env = RuleEnv { home: loc.home.clone(), cwd: cwd.clone() };
        let (settings, resolve_problems) = Settings::resolve(&loaded, &loc, &rule_env);
        let mut loaded = loaded;
        let mut problems = loaded.problems.clone();
        problems.extend(loaded.keep_fatal(resolve_problems));
        for dir in &settings.additional_directories {
            if !roots.contains(dir) {
                roots.push(dir.clone());
            }
        }
        let secret_vars = settings
            .mcp_servers
            .iter()
            .filter_map(|(_, c)| c.transport.bearer_token_env().map(str::to_string))
            .chain(settings.mcp_servers.iter().filter_map(|(_, c)| c.transport.oauth()?.client_secret_env.clone()))
            .chain(settings.agent.providers.iter().filter_map(|p| p.api_key_env.clone()))
            .chain(settings.web.search.key_vars())
            // The secrets of Message's channels and RemoteTrigger's triggers.
            .chain(settings.web.endpoint_vars())
            // The shared database's password, and its URL (which may hold one).
            .chain(settings.storage.iter().filter_map(|s| s.password_env.clone()))
            .chain(settings.storage.iter().map(|_| "TOOLBELT_STORAGE__URL".to_string()))
            // An OpenTelemetry collector's key travels in these.
            .chain(crate::telemetry::SECRET_VARS.iter().map(|v| (*v).to_string()))
            .collect();
        let home = home.map(Path::to_path_buf);
        let reread = Reread { flags, env, claude, home };
        let shared = std::sync::OnceLock::new();
        Self { cwd, roots, loc, loaded, settings, rule_env, problems, secret_vars, task_list, reread, shared }
    }

    /// What reads these settings again from the same places and inputs (a file changed):
    /// what `live` applies to a running server. Reads nothing until called.
    pub fn reloader(&self) -> impl Fn() -> Assembly + Send + Sync + 'static {
        let (cwd, roots, r) = (self.cwd.clone(), self.roots.clone(), self.reread.clone());
        let (task_list, secret_vars) = (self.task_list.clone(), self.secret_vars.clone());
        move || {
            let env = r.env.clone();
            let mut next =
                Assembly::load(cwd.clone(), roots.clone(), r.flags.clone(), env, r.claude, r.home.as_deref());
            next.task_list.clone_from(&task_list);
            for var in &secret_vars {
                if !next.secret_vars.contains(var) {
                    next.secret_vars.push(var.clone());
                }
            }
            next
        }
    }

    /// The project root.
    pub fn project(&self) -> &Path {
        &self.loc.project
    }

    /// Where this project's sessions keep their files (saved state, spilled output, task
    /// logs): in the user's state directory, never in the project.
    pub fn sessions_dir(&self) -> PathBuf {
        self.loc.project_state_dir().join("sessions")
    }

    /// What to tell the user about these settings: [`Assembly::warnings`], then what Claude
    /// Code's files contributed.
    pub fn notices(&self) -> Vec<String> {
        let mut out = self.warnings();
        out.extend(self.loaded.claude_note.clone());
        out
    }

    /// What of these settings does not apply: a project waiting for trust, a project file that
    /// does not parse, a project setting the user's floor overrides.
    pub fn warnings(&self) -> Vec<String> {
        let mut out: Vec<String> = self.loaded.trust.notice(&self.loc.project).into_iter().collect();
        out.extend(self.loaded.ignored_notice());
        out.extend(self.loaded.notices.iter().cloned());
        out.extend(self.settings.tool_problems.iter().map(ToString::to_string));
        out.extend(self.loaded.plugin_problems.iter().map(|p| format!("{p} (this part of the plugin is left out)")));
        out
    }

    /// The settings as they would be once the project is trusted with everything it asks
    /// for ([`settings::load_trusted`]).
    pub fn loaded_as_trusted(&self) -> Loaded {
        settings::load_trusted(&self.loc, self.reread.flags.clone(), self.reread.env.clone(), self.reread.claude)
    }

    /// The problems the project's own files would have once trusted
    /// ([`settings::project_problems`]).
    pub fn project_problems(&self) -> Vec<Problem> {
        settings::project_problems(&self.loc, &self.reread.flags, &self.reread.env, self.reread.claude)
    }

    /// Whether a person trusted this project as it is (`toolbelt trust`, or the question at a
    /// terminal), also when its files set nothing that waits for trust: then its
    /// repository's own git configuration is theirs too, and read-only git commands may run
    /// the programs it names.
    fn person_trusted(&self) -> bool {
        match self.loaded.trust {
            settings::Trust::Trusted { .. } => true,
            // Asked of the team's database (its pool, set up once) when there is one.
            settings::Trust::NotNeeded => match self.shared_storage() {
                Ok(Some(shared)) => TrustStore::in_shared(&self.loc, shared).record(&self.loc.project).is_some(),
                Ok(None) => TrustStore::at(&self.loc).record(&self.loc.project).is_some(),
                Err(_) => false,
            },
            settings::Trust::Untrusted { .. } => false,
        }
    }

    /// Fails with every settings problem when there is any.
    pub fn require_valid(&self) -> Result<(), AssembleError> {
        if self.problems.is_empty() { Ok(()) } else { Err(AssembleError::InvalidSettings(self.problems.clone())) }
    }

    /// The permission engine of these settings, writing "always" rules to the project's
    /// grants in the user's state directory.
    pub fn engine(&self) -> PermissionEngine {
        PermissionEngine::new(self.settings.permissions.clone(), self.rule_env.clone())
            .with_store(Arc::new(self.rule_store()))
            .with_protected(self.protected_paths())
    }

    /// Where "always" rules go: the project's grants file in the user's state directory
    /// ([`Locations::grants_file`]), which applies whether the project is trusted or not and
    /// which no repository can ship. Rules approved in a session working elsewhere (an MCP
    /// client's roots in another project) go to that project's grants, the same way.
    fn rule_store(&self) -> settings::LocalRuleStore {
        let home = self.reread.home.clone();
        settings::LocalRuleStore::grants(self.loc.grants_file()).elsewhere(&self.cwd, move |project| {
            settings::LocalRuleStore::grants(locations(project, project, home.as_deref()).grants_file())
        })
    }

    /// The settings as the `Config` tool reads and changes them.
    pub fn model_settings(&self) -> SettingsService {
        let (load, store) = (self.reread.clone(), self.reread.clone());
        SettingsService(Arc::new(ModelSettings::new(
            Arc::new(move |dir: &Path| load.load(dir)),
            Arc::new(move |loc: &Locations| store.store_keeping_trust(loc)),
        )))
    }

    /// The job scheduler of this project: session jobs in memory, durable ones in the
    /// project's state directory (or, with `storage.url`, in the database every replica
    /// shares); nothing fires until a front end starts it.
    pub fn job_host(&self) -> Arc<crate::jobs::JobHost> {
        let state_dir = self.loc.project_state_dir();
        let place = crate::jobs::JobPlace {
            cwd: self.cwd.clone(),
            roots: self.roots.clone(),
            data_dir: state_dir.join("sessions"),
            state_dir,
            shared: self.shared_storage().map_err(|e| e.to_string()),
            machine: crate::replica::name(),
        };
        crate::jobs::JobHost::new(place, self.settings.cron)
    }

    /// Where EnterWorktree makes worktrees: in this project's state directory, outside the
    /// repository (see `docs/design.md`, "Worktrees: in the state directory").
    pub fn worktree_dir(&self) -> PathBuf {
        self.loc.project_state_dir().join("worktrees")
    }

    /// The built-in tools, described with the limits in force, and the agent tools when a
    /// model provider is configured; without those a bare deny rule removes.
    pub fn registry(&self, engine: &PermissionEngine) -> Registry {
        self.registry_for(engine, &self.agents(), false)
    }

    /// [`Assembly::registry`] with `agents`' tools when agents can run (or, with `sampling`,
    /// may run on a client's model).
    fn registry_for(&self, engine: &PermissionEngine, agents: &AgentSetup, sampling: bool) -> Registry {
        let registry = crate::builtin_registry_with(&self.settings.runtime.limits());
        registry.set_defer_threshold(self.settings.mcp_defer_threshold);
        if agents.available() || sampling {
            for tool in toolbelt_tools::agents::tools(&agents.agent_types()) {
                if let Err(e) = registry.register_lazy(tool) {
                    tracing::error!("agent tools clash: {e}");
                }
            }
        }
        for (name, why) in settings::custom_tools::register(&registry, &self.settings.custom_tools) {
            tracing::warn!("the tool `{name}` the settings define is left out: {why}");
        }
        self.settings.tool_filter.apply(&registry);
        engine.hide_denied(&registry);
        registry
    }

    /// Connects the configured upstream MCP servers, their tools joining `registry` (those a
    /// bare deny rule names stay hidden); `None` when none is configured.
    pub async fn gateway(&self, registry: &Arc<Registry>) -> Option<Gateway> {
        self.start_gateway(registry, self.settings.mcp_servers.clone()).await
    }

    /// [`Assembly::gateway`] with only the servers named in `only` (see
    /// [`Assembly::servers_for`]); `None` when that is none.
    pub async fn gateway_of(&self, registry: &Arc<Registry>, only: &[String]) -> Option<Gateway> {
        let servers = self.settings.mcp_servers.iter().filter(|(name, _)| only.contains(name)).cloned().collect();
        self.start_gateway(registry, servers).await
    }

    async fn start_gateway(&self, registry: &Arc<Registry>, servers: Vec<(String, UpstreamConfig)>) -> Option<Gateway> {
        if servers.is_empty() {
            return None;
        }
        let engine = self.engine();
        // A project's servers start in the sandbox; it is built only when one is among them.
        let projects = self.settings.project_servers.clone();
        let sandbox = servers.iter().any(|(name, _)| projects.contains(name)).then(|| self.project_sandbox(&engine));
        // The servers' tools a bare deny rule names join hidden, however late they come;
        // so do those `tools.disabled` (or `enabled`) leaves out.
        let filter = self.settings.tool_filter.clone();
        let tool_words = filter.tool_words(registry);
        registry.hide_joining(move |spec| match engine.hiding_rule(spec) {
            Some(_) => Some(String::new()),
            None => filter.reason(spec, &|w| tool_words.contains(&w.to_ascii_lowercase())),
        });
        let confiner = move |name: &str| projects.iter().any(|p| p == name).then(|| sandbox.clone()).flatten();
        let tokens = self.token_place();
        Some(Gateway::start_confined(servers, Arc::clone(registry), confiner, &self.roots, Some(&tokens)).await)
    }

    /// Where upstream servers' OAuth tokens are kept: `oauth/` in toolbelt's state directory
    /// (the user's, outside every project and out of the sandbox's reach).
    pub fn oauth_dir(&self) -> PathBuf {
        self.loc.state_dir.join("oauth")
    }

    /// Where upstream servers' OAuth tokens are kept: [`Assembly::oauth_dir`], or, with
    /// `storage.url`, the database every replica shares (one sign-in serves them all). A
    /// `storage.url` that cannot be used keeps them nowhere rather than on one machine: the
    /// error says why when a server needs them.
    pub fn token_place(&self) -> toolbelt_mcp::client::oauth::store::TokenPlace {
        let shared: Option<Arc<dyn toolbelt_mcp::client::oauth::store::SharedTokens>> = match self.shared_storage() {
            Ok(Some(shared)) => Some(Arc::new(crate::assemble::shared_tokens::SharedTokenTable::new(shared))),
            Ok(None) => None,
            Err(e) => Some(Arc::new(crate::assemble::shared_tokens::Unusable(e.to_string()))),
        };
        toolbelt_mcp::client::oauth::store::TokenPlace { dir: self.oauth_dir(), shared }
    }

    /// The upstream servers that calls of these tools (name and input) need, by name, judged
    /// from `registry` before any server is connected ([`servers::needed`]): a call starts
    /// only the servers it uses.
    pub fn servers_for(&self, registry: &Registry, calls: &[(&str, &serde_json::Value)]) -> Vec<String> {
        let all: Vec<&str> = self.settings.mcp_servers.iter().map(|(name, _)| name.as_str()).collect();
        servers::needed(&all, registry, calls)
    }

    /// Agents as these settings define them: the providers (the settings' and the
    /// environment's), the definitions of the project, the user and the built-ins, the limits.
    pub fn agents(&self) -> AgentSetup {
        let catalog = toolbelt_agent::discover(&agent_search_dirs(&self.loc, &self.loaded.plugins));
        let env = |name: &str| std::env::var(name).ok();
        AgentSetup::new(&settings::agent::agent_settings(&self.settings.agent, &env), catalog, &env)
    }
}

/// The user's configuration directory: the one the user's settings file
/// (`<config home>/toolbelt/config.toml`) is in, so `HOME` and `XDG_CONFIG_HOME` count the
/// same way for everything read from there.
fn config_home(loc: &Locations) -> PathBuf {
    loc.user_file.parent().and_then(Path::parent).map_or_else(|| loc.home.join(".config"), Path::to_path_buf)
}

/// Where the skills are for the user of `loc`, the enabled `plugins`' included.
pub fn skill_dirs(loc: &Locations, plugins: &[Plugin]) -> SkillDirs {
    let plugins = plugins
        .iter()
        .map(|p| {
            let (skills, commands) = p.skill_dirs();
            PluginSkills {
                root: p.root.clone(),
                scope: match p.scope {
                    PluginScope::User => SkillScope::User,
                    PluginScope::Project => SkillScope::Project,
                },
                skills,
                commands,
            }
        })
        .collect();
    SkillDirs { home: loc.home.clone(), config_home: config_home(loc), plugins }
}

/// The directories agent definitions are looked for in, for the project and the user of
/// `loc` (the settings' own locations), then the enabled `plugins`'.
pub fn agent_search_dirs(loc: &Locations, plugins: &[Plugin]) -> SearchDirs {
    let mut dirs = SearchDirs::new(&loc.project, &loc.home, config_home(loc));
    dirs.plugins = plugins
        .iter()
        .flat_map(|p| {
            let scope = match p.scope {
                PluginScope::User => toolbelt_agent::definitions::Scope::User,
                PluginScope::Project => toolbelt_agent::definitions::Scope::Project,
            };
            p.agent_dirs().into_iter().map(move |dir| (scope, dir))
        })
        .collect();
    dirs
}
