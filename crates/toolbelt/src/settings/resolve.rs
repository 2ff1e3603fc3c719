//! From entries to typed settings: the winning value of each scalar, every item of each list,
//! each one checked (rules parsed, directories found, patterns compiled).

pub use super::serving::{McpHttpSettings, StorageSettings};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value};
use toolbelt_mcp::client::{UpstreamConfig, UpstreamTransport};
use toolbelt_policy::rules::{Rule, RuleEnv, RuleOrigin};
use toolbelt_policy::{HookEvent, PermissionMode, PermissionRules};
use toolbelt_runtime::{AuditConfig, RuntimeConfig};
use toolbelt_tools::shell::{SandboxConfig, SandboxMode, WhenUnavailable};
use toolbelt_tools::snippets::SnippetScope;

use super::tool_search::{ToolSearch, defer_threshold};

use super::schema::{self, Key};
use super::winner::{named_winner, winner};
use super::{Entry, Layer, Loaded, Locations, Problem};

/// The shell tools' settings.
#[derive(Debug, Clone, Default)]
pub struct ShellSettings {
    /// The OS sandbox.
    pub sandbox: SandboxConfig,
    /// Regular expressions of commands to refuse.
    pub deny_commands: Vec<String>,
    /// More patterns of variables removed from commands' environment (besides the defaults).
    pub env_remove: Vec<String>,
    /// Variables kept although a removal pattern matches them.
    pub env_keep: Vec<String>,
    /// Whether a session's Bash calls carry their shell's state over (`shell.persistent`).
    pub persistent: bool,
    /// How many interactive sessions may run at once (`shell.max_sessions`).
    pub max_sessions: usize,
    /// How long an interactive session may sit unused (`shell.session_idle_timeout`).
    pub session_idle_timeout: Duration,
}

/// The merged, checked settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The mode and every rule.
    pub permissions: PermissionRules,
    /// More workspace roots (canonical).
    pub additional_directories: Vec<PathBuf>,
    /// The hooks of the user's own settings (and the managed file, variables and flags), as
    /// Claude Code's JSON (`{"PreToolUse": [groups…], …}`), every layer's groups in order.
    pub hooks: Value,
    /// The hooks of the project's own files, the same way: their commands run in the sandbox
    /// ([`toolbelt_policy::confine`]).
    pub project_hooks: Value,
    /// The shell tools' settings.
    pub shell: ShellSettings,
    /// Timeouts, budget, concurrency.
    pub runtime: RuntimeConfig,
    /// Where the audit log is and how it rotates (`audit.path`, else this project's file in
    /// the user's state directory), whether it is enabled or not.
    pub audit: AuditConfig,
    /// Whether calls are recorded in the audit log (`audit.enabled`).
    pub audit_enabled: bool,
    /// Whether Claude Code's settings files were read.
    pub compat_claude: bool,
    /// Upstream MCP servers, by name.
    pub mcp_servers: Vec<(String, UpstreamConfig)>,
    /// The names of those the project's own files define: their programs start in the
    /// sandbox ([`toolbelt_policy::confine`]).
    pub project_servers: Vec<String>,
    /// How `toolbelt mcp --http` serves.
    pub mcp_http: McpHttpSettings,
    /// Past how many characters of definitions upstream MCP tools are deferred
    /// ([`defer_threshold`](super::tool_search::defer_threshold)).
    pub mcp_defer_threshold: Option<usize>,
    /// The `[agent]` settings: the providers the files configure (the environment's join
    /// them in [`super::agent::agent_settings`]), the default's name, the limits.
    pub agent: toolbelt_agent::AgentSettings,
    /// What the web tools may reach and which search provider they use.
    pub web: toolbelt_tools::web::WebConfig,
    /// Whose snippets the snippet tools work on (`snippets.scope`): the user's, or the
    /// project's own. Only a choice between the two fixed places: no setting names a file.
    pub snippets: SnippetScope,
    /// The language servers the LSP and Diagnostics tools use (`[lsp]`).
    pub lsp: toolbelt_tools::language_servers::LspSettings,
    /// The linters the Lint tool runs (`[lint]`).
    pub lint: toolbelt_tools::code::linters::LintSettings,
    /// The tools left out (`[tools] enabled`, `disabled`; `--tools`, `--disable-tool`).
    pub tool_filter: super::ToolFilter,
    /// The tools the settings define (`[tools.command.*]`, `[tools.http.*]`).
    pub custom_tools: Vec<toolbelt_tools::custom::Definition>,
    /// The definitions refused: each left out, the rest of the settings applying.
    pub tool_problems: Vec<Problem>,
    /// How scheduled jobs behave (`[cron]`).
    pub cron: crate::jobs::JobSettings,
    /// The incoming triggers `toolbelt mcp --http` serves (`[cron.triggers.NAME]`).
    pub incoming_triggers: std::collections::BTreeMap<String, crate::jobs::IncomingTrigger>,
    /// Shared storage (`[storage]`), when a database is named.
    pub storage: Option<StorageSettings>,
}

impl Settings {
    /// Resolves every key; values that fail their checks are skipped and reported.
    pub fn resolve(loaded: &Loaded, loc: &Locations, env: &RuleEnv) -> (Settings, Vec<Problem>) {
        let mut r = Resolver { entries: &loaded.entries, loc, problems: Vec::new() };
        let disable_bypass = r.bool(Key::PERMISSIONS_DISABLE_BYPASS).unwrap_or(false);
        let mut mode = r.scalar(Key::PERMISSIONS_MODE).and_then(|e| e.value.as_str().and_then(PermissionMode::parse));
        if mode == Some(PermissionMode::BypassPermissions)
            && disable_bypass
            && let Some(entry) = r.scalar(Key::PERMISSIONS_MODE)
        {
            r.problem(
                entry,
                "bypassPermissions mode is disabled by permissions.disable_bypass; using default mode".into(),
            );
            mode = None;
        }
        let permissions = PermissionRules {
            mode: mode.unwrap_or_default(),
            allow: r.rules(Key::PERMISSIONS_ALLOW, env),
            ask: r.rules(Key::PERMISSIONS_ASK, env),
            deny: r.rules(Key::PERMISSIONS_DENY, env),
        };
        let additional_directories = r.dirs(Key::PERMISSIONS_ADDITIONAL_DIRECTORIES);
        let (hooks, project_hooks) = r.hooks();
        let sandbox = SandboxConfig {
            mode: r.text(Key::SANDBOX_MODE).as_deref().and_then(SandboxMode::parse).unwrap_or_default(),
            network: r.bool(Key::SANDBOX_NETWORK).unwrap_or(false),
            writable_roots: r.dirs(Key::SANDBOX_WRITABLE_ROOTS),
            when_unavailable: r
                .text(Key::SANDBOX_IF_UNSANDBOXED)
                .as_deref()
                .and_then(WhenUnavailable::parse)
                .unwrap_or_default(),
            git_writes: r.bool(Key::SANDBOX_GIT_WRITES).unwrap_or(false),
            protected_paths: Vec::new(),
            own_dirs: Vec::new(),
        };
        let deny_commands = r.patterns(Key::SHELL_DENY_COMMANDS);
        let env_remove = r.texts(Key::SHELL_ENV_REMOVE);
        let env_keep = r.texts(Key::SHELL_ENV_KEEP);
        let persistent = r.bool(Key::SHELL_PERSISTENT).unwrap_or(false);
        let max_sessions = r.usize(Key::SHELL_MAX_SESSIONS).unwrap_or(8);
        let session_idle_timeout = Duration::from_secs(
            r.int(Key::SHELL_SESSION_IDLE_TIMEOUT).and_then(|n| u64::try_from(n).ok()).unwrap_or(1800),
        );
        let defaults = RuntimeConfig::default();
        let secs = |r: &Resolver<'_>, key: Key| r.int(key).and_then(|n| u64::try_from(n).ok()).map(Duration::from_secs);
        let max_timeout = secs(&r, Key::RUNTIME_MAX_TIMEOUT).unwrap_or(defaults.max_timeout);
        let default_timeout = secs(&r, Key::RUNTIME_DEFAULT_TIMEOUT).unwrap_or(defaults.default_timeout);
        // A default set above the cap could never take effect: said, not silently lowered (the
        // built-in default just follows a lower cap).
        if default_timeout > max_timeout
            && let Some(entry) = winner(&loaded.entries, Key::RUNTIME_DEFAULT_TIMEOUT)
        {
            r.problem(
                entry,
                format!(
                    "{default_key} ({} s) is above {max_key} ({} s), which caps every call's default; lower \
                     {default_key} or raise {max_key}",
                    default_timeout.as_secs(),
                    max_timeout.as_secs(),
                    default_key = Key::RUNTIME_DEFAULT_TIMEOUT,
                    max_key = Key::RUNTIME_MAX_TIMEOUT,
                ),
            );
        }
        let runtime = RuntimeConfig {
            default_timeout: default_timeout.min(max_timeout),
            max_timeout,
            output_budget: r.usize(Key::RUNTIME_OUTPUT_BUDGET).unwrap_or(defaults.output_budget),
            concurrency: r.usize(Key::RUNTIME_CONCURRENCY).unwrap_or(defaults.concurrency),
        };
        let audit_enabled = r.bool(Key::AUDIT_ENABLED).unwrap_or(false);
        let audit = {
            let path = match r.scalar(Key::AUDIT_PATH) {
                Some(e) => audit_base(loc, e.origin.layer).join(e.value.as_str().unwrap_or_default()),
                None => loc.project_state_dir().join("audit.jsonl"),
            };
            let defaults = AuditConfig::at(&path);
            AuditConfig {
                path,
                max_bytes: r
                    .int(Key::AUDIT_MAX_BYTES)
                    .and_then(|n| u64::try_from(n).ok())
                    .unwrap_or(defaults.max_bytes),
                keep: r.int(Key::AUDIT_KEEP).and_then(|n| u32::try_from(n).ok()).unwrap_or(defaults.keep),
                anchor: true,
            }
        };
        let compat_claude = r.bool(Key::COMPAT_CLAUDE).unwrap_or(false)
            || loaded
                .files_read
                .iter()
                .any(|(l, _)| matches!(l, Layer::ClaudeUser | Layer::ClaudeProject | Layer::ClaudeLocal));
        let mcp_servers = r.mcp_servers();
        let project_servers = mcp_servers
            .iter()
            .filter(|(name, _)| {
                named_winner(r.entries, Key::MCP_SERVERS, name)
                    .is_some_and(|e| super::trust::is_project_layer(e.origin.layer))
            })
            .map(|(name, _)| name.clone())
            .collect();
        let mut limits = toolbelt_mcp::http::SessionLimits::default();
        if let Some(n) = r.usize(Key::MCP_MAX_SESSIONS) {
            limits.max_sessions = n;
        }
        if let Some(idle) = secs(&r, Key::MCP_SESSION_IDLE_TIMEOUT) {
            limits.idle_timeout = idle;
        }
        if let Some(after) = secs(&r, Key::MCP_SSE_POLL_AFTER) {
            limits.poll_after = (!after.is_zero()).then_some(after);
        }
        let mcp_http = McpHttpSettings {
            limits,
            allowed_origins: r.texts(Key::MCP_ALLOWED_ORIGINS),
            allowed_hosts: r.texts(Key::MCP_ALLOWED_HOSTS),
            advertise_url: r.text(Key::MCP_ADVERTISE_URL).filter(|u| !u.trim().is_empty()),
            drain_timeout: secs(&r, Key::MCP_DRAIN_TIMEOUT)
                .unwrap_or(Duration::from_secs(super::serving::DRAIN_TIMEOUT_SECS)),
        };
        let mode = r.text(Key::MCP_TOOL_SEARCH).as_deref().and_then(ToolSearch::parse).unwrap_or_default();
        let mcp_defer_threshold = defer_threshold(mode, r.usize(Key::MCP_TOOL_SEARCH_THRESHOLD));
        let agent = super::agent::resolve(loaded.entries.as_slice(), &mut r.problems);
        let mut web = super::web::resolve(loaded.entries.as_slice(), &mut r.problems);
        web.channels = super::remote::channels(loaded.entries.as_slice(), &mut r.problems, &loc.home);
        web.triggers = super::remote::triggers(loaded.entries.as_slice(), &mut r.problems);
        let snippets = r.text(Key::SNIPPETS_SCOPE).as_deref().and_then(SnippetScope::parse).unwrap_or_default();
        let plugin_lsp: Vec<PathBuf> = loaded.plugins.iter().flat_map(super::plugins::Plugin::lsp_json).collect();
        let lsp =
            super::lsp::resolve(loaded.entries.as_slice(), &mut r.problems, &loc.home, compat_claude, &plugin_lsp);
        let lint = super::lint::resolve(loaded.entries.as_slice(), &mut r.problems);
        let cron = crate::jobs::JobSettings {
            max_age: match r.int(Key::CRON_MAX_AGE_DAYS) {
                Some(0) => None,
                Some(days) => Some(std::time::Duration::from_secs(u64::try_from(days).unwrap_or(7) * 86_400)),
                None => crate::jobs::JobSettings::default().max_age,
            },
            jitter: r.bool(Key::CRON_JITTER).unwrap_or(true),
        };
        let incoming_triggers = super::remote::incoming_triggers(loaded.entries.as_slice(), &mut r.problems);
        let storage = r.storage();
        let tool_filter = super::ToolFilter::from_entries(&r.items(Key::TOOLS_ENABLED), &r.items(Key::TOOLS_DISABLED));
        let (custom_tools, tool_problems) = super::custom_tools::resolve(loaded.entries.as_slice());
        let settings = Settings {
            tool_filter,
            custom_tools,
            tool_problems,
            cron,
            incoming_triggers,
            storage,
            lsp,
            lint,
            agent,
            web,
            mcp_servers,
            project_servers,
            mcp_http,
            mcp_defer_threshold,
            permissions,
            additional_directories,
            hooks,
            project_hooks,
            shell: ShellSettings {
                sandbox,
                deny_commands,
                env_remove,
                env_keep,
                persistent,
                max_sessions,
                session_idle_timeout,
            },
            runtime,
            audit,
            audit_enabled,
            compat_claude,
            snippets,
        };
        (settings, r.problems)
    }
}

/// The value of the highest layer that sets a boolean `key` (for decisions made before
/// everything is resolved).
pub(super) fn last_bool(entries: &[Entry], key: Key) -> Option<bool> {
    winner(entries, key).and_then(|e| e.value.as_bool())
}

/// Where a relative audit path is relative to: the cwd for flags and variables, the project
/// for files.
fn audit_base(loc: &Locations, layer: Layer) -> &Path {
    match layer {
        Layer::Env | Layer::Flags => &loc.cwd,
        _ => &loc.project,
    }
}

struct Resolver<'a> {
    entries: &'a [Entry],
    loc: &'a Locations,
    problems: Vec<Problem>,
}

/// The shared storage `entries` name (`[storage]`), if any: what the settings' `storage`
/// will be, known before they are resolved (the trust decisions may be kept there).
pub fn storage_of(entries: &[Entry], loc: &Locations) -> Option<StorageSettings> {
    Resolver { entries, loc, problems: Vec::new() }.storage()
}

impl Resolver<'_> {
    fn storage(&self) -> Option<StorageSettings> {
        let ca_file = self.file_path(Key::STORAGE_CA_FILE);
        self.text(Key::STORAGE_URL).filter(|u| !u.trim().is_empty()).map(|url| StorageSettings {
            url,
            password_env: self.text(Key::STORAGE_PASSWORD_ENV).filter(|v| !v.is_empty()),
            max_connections: self.usize(Key::STORAGE_MAX_CONNECTIONS).and_then(|n| u32::try_from(n).ok()).unwrap_or(8),
            ca_file,
        })
    }
}

impl<'a> Resolver<'a> {
    fn problem(&mut self, entry: &Entry, message: String) {
        self.problems.push(Problem { origin: entry.origin.clone(), key: entry.key.clone(), message });
    }

    fn scalar(&self, key: Key) -> Option<&'a Entry> {
        winner(self.entries, key)
    }

    fn bool(&self, key: Key) -> Option<bool> {
        self.scalar(key).and_then(|e| e.value.as_bool())
    }

    fn int(&self, key: Key) -> Option<i64> {
        self.scalar(key).and_then(|e| e.value.as_i64())
    }

    fn usize(&self, key: Key) -> Option<usize> {
        self.int(key).and_then(|n| usize::try_from(n).ok())
    }

    fn text(&self, key: Key) -> Option<String> {
        self.scalar(key).and_then(|e| e.value.as_str().map(str::to_string))
    }

    /// Every valid item of a list key, in precedence order.
    fn items(&self, key: Key) -> Vec<&'a Entry> {
        let Some(def) = key.def() else { return Vec::new() };
        let mut items: Vec<&Entry> =
            self.entries.iter().filter(|e| e.key == key && schema::check(def, &e.value).is_ok()).collect();
        items.sort_by_key(|e| e.origin.layer);
        items
    }

    fn rules(&mut self, key: Key, env: &RuleEnv) -> Vec<Rule> {
        let mut rules = Vec::new();
        for entry in self.items(key) {
            let text = entry.value.as_str().unwrap_or_default();
            let origin = Arc::new(RuleOrigin::new(entry.origin.to_string(), self.loc.base_of(entry.origin.layer)));
            match Rule::parse(text, origin, env) {
                Ok(rule) => rules.push(rule),
                Err(e) => self.problem(entry, e.to_string()),
            }
        }
        rules
    }

    /// A file the winning entry of `key` names (`~/` the home, else relative to where it was
    /// set); `None` when empty.
    fn file_path(&self, key: Key) -> Option<PathBuf> {
        let entry = winner(self.entries, key)?;
        let raw = entry.value.as_str().filter(|s| !s.trim().is_empty())?;
        Some(expand_home(raw, &self.loc.home).unwrap_or_else(|| self.loc.base_of(entry.origin.layer).join(raw)))
    }

    fn dirs(&mut self, key: Key) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = Vec::new();
        for entry in self.items(key) {
            let raw = entry.value.as_str().unwrap_or_default();
            let path =
                expand_home(raw, &self.loc.home).unwrap_or_else(|| self.loc.base_of(entry.origin.layer).join(raw));
            match std::fs::canonicalize(&path) {
                Ok(dir) if dir.is_dir() => {
                    if !dirs.contains(&dir) {
                        dirs.push(dir);
                    }
                }
                Ok(_) => self.problem(entry, format!("{} is not a directory", path.display())),
                Err(e) => self.problem(entry, format!("{}: {e}", path.display())),
            }
        }
        dirs
    }

    fn texts(&self, key: Key) -> Vec<String> {
        self.items(key).iter().filter_map(|e| e.value.as_str().map(str::to_string)).collect()
    }

    fn patterns(&mut self, key: Key) -> Vec<String> {
        let mut patterns = Vec::new();
        for entry in self.items(key) {
            let pattern = entry.value.as_str().unwrap_or_default();
            match regex::Regex::new(pattern) {
                Ok(_) => patterns.push(pattern.to_string()),
                Err(e) => self.problem(entry, format!("`{pattern}` is not a valid regular expression: {e}")),
            }
        }
        patterns
    }

    /// Every hook group of every event, each checked on its own so a mistake names its place:
    /// the user's, and the project's own files'.
    fn hooks(&mut self) -> (Value, Value) {
        let (mut user, mut project) = (Map::new(), Map::new());
        for event in HookEvent::ALL {
            let event_name = event.as_str();
            let (mut users, mut projects) = (Vec::new(), Vec::new());
            for entry in self.items(Key::hook(event)) {
                let one = serde_json::json!({ event_name: [entry.value.clone()] });
                match toolbelt_policy::hooks::HookSet::from_json(&one) {
                    Ok(_) if super::trust::is_project_layer(entry.origin.layer) => projects.push(entry.value.clone()),
                    Ok(_) => users.push(entry.value.clone()),
                    Err(e) => self.problem(entry, e.to_string()),
                }
            }
            for (groups, all) in [(users, &mut user), (projects, &mut project)] {
                if !groups.is_empty() {
                    all.insert(event_name.to_string(), Value::Array(groups));
                }
            }
        }
        (Value::Object(user), Value::Object(project))
    }
}

impl Resolver<'_> {
    /// Each `mcp.servers.<name>` from the highest layer that defines it, checked.
    fn mcp_servers(&mut self) -> Vec<(String, UpstreamConfig)> {
        let mut names: Vec<&str> = self.entries.iter().filter_map(|e| Key::MCP_SERVERS.name_in(&e.key)).collect();
        names.sort_unstable();
        names.dedup();
        let mut servers = Vec::new();
        for name in names {
            let Some(entry) = named_winner(self.entries, Key::MCP_SERVERS, name) else { continue };
            match serde_json::from_value::<UpstreamConfig>(entry.value.clone()) {
                Ok(mut config) => {
                    let origin = &entry.origin;
                    config.origin = Some(match (&origin.file, origin.line) {
                        (Some(file), Some(line)) => format!("{}:{line}", file.display()),
                        (Some(file), None) => file.display().to_string(),
                        _ => origin.to_string(),
                    });
                    if let UpstreamTransport::Stdio { cwd: Some(cwd), .. } = &mut config.transport
                        && cwd.is_relative()
                    {
                        *cwd = self.loc.base_of(entry.origin.layer).join(&*cwd);
                    }
                    servers.push((name.to_string(), config));
                }
                Err(e) => self.problem(entry, e.to_string()),
            }
        }
        servers
    }
}

/// `~` and `~/x` under `home`.
fn expand_home(raw: &str, home: &Path) -> Option<PathBuf> {
    match raw.strip_prefix('~') {
        Some("") => Some(home.to_path_buf()),
        Some(rest) if rest.starts_with('/') => Some(home.join(rest.trim_start_matches('/'))),
        _ => None,
    }
}
