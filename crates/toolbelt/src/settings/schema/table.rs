//! The schema's table: every key, declared once with its constant ([`Key`]), type, default
//! and what it does. The hook keys are not written here: there is one per [`HookEvent`], in
//! [`HookEvent::ALL`]'s order, so the schema and the hook engine cannot disagree.

use toolbelt_agent::AgentLimits;
use toolbelt_core::CallLimits;
use toolbelt_policy::HookEvent;
use toolbelt_tools::shell::{DEFAULT_ENV_REMOVE, SandboxMode, WhenUnavailable};
use toolbelt_tools::snippets::SnippetScope;
use toolbelt_tools::web::{SearchProviderKind, WebConfig};

use super::{DefaultText, Key, KeyDef, Kind};

/// Declares keys: each row makes a constant on [`Key`] and the key's entry in the table.
macro_rules! keys {
    ($(#[$meta:meta])* const $table:ident = [
        $($name:ident = $path:literal => $def:ident($($arg:expr),* $(,)?)),* $(,)?
    ];) => {
        impl Key {
            $(
                #[doc = concat!("`", $path, "`.")]
                pub const $name: Key = Key::at($path);
            )*
        }

        $(#[$meta])*
        const $table: &[KeyDef] = &[$($def(Key::$name, $($arg),*)),*];
    };
}

const fn key(key: Key, kind: Kind, default: &'static str, doc: &'static str) -> KeyDef {
    KeyDef { key, kind, default: DefaultText::Literal(default), doc }
}

/// A key whose default has its home elsewhere: the runtime's limits ([`CallLimits::DEFAULT`]),
/// agents' ([`AgentLimits::DEFAULT`]), the web tools' ([`WebConfig::default`]), the shell's
/// removed variables ([`DEFAULT_ENV_REMOVE`]).
const fn limit(key: Key, kind: Kind, default: fn() -> String, doc: &'static str) -> KeyDef {
    KeyDef { key, kind, default: DefaultText::From(default), doc }
}

const SEARCH_DOC: &str = "a search provider: api_key_env (the variable holding its key), base_url (its endpoint; \
     required for searxng) (user settings only)";

/// The longest `lint.timeout` the settings take.
const LINT_MAX_TIMEOUT: i64 = toolbelt_tools::code::linters::MAX_TIMEOUT.as_secs() as i64;

const HOOK_DOC: &str = "hook groups: {matcher, hooks = [{type = \"command\"|\"http\", …}]}";

keys! {
    /// The permission keys, printed first.
    const PERMISSION_KEYS = [
        PERMISSIONS_MODE = "permissions.mode" => key(
            Kind::Mode,
            "\"default\"",
            "default, acceptEdits, plan, dontAsk or bypassPermissions",
        ),
        PERMISSIONS_ALLOW = "permissions.allow" => key(Kind::List, "[]", "rules that run without asking"),
        PERMISSIONS_ASK = "permissions.ask" => key(Kind::List, "[]", "rules that always ask"),
        PERMISSIONS_DENY = "permissions.deny" => key(
            Kind::List,
            "[]",
            "rules that never run (a bare tool name also hides the tool)",
        ),
        PERMISSIONS_ADDITIONAL_DIRECTORIES = "permissions.additional_directories" => key(
            Kind::List,
            "[]",
            "more workspace roots",
        ),
        PERMISSIONS_DISABLE_BYPASS = "permissions.disable_bypass" => key(
            Kind::Bool,
            "false",
            "refuse bypassPermissions mode",
        ),
    ];
}

keys! {
    /// The keys after the hooks.
    const OTHER_KEYS = [
        SANDBOX_MODE = "sandbox.mode" => key(
            Kind::Choice(&SandboxMode::NAMES),
            "\"workspace-write\"",
            "how far shell commands are confined",
        ),
        SANDBOX_NETWORK = "sandbox.network" => key(
            Kind::Bool,
            "false",
            "whether sandboxed commands may use the network",
        ),
        SANDBOX_IF_UNSANDBOXED = "sandbox.if_unsandboxed" => key(
            Kind::Choice(&WhenUnavailable::NAMES),
            "\"ask\"",
            "what a command does when the sandbox cannot be applied",
        ),
        SANDBOX_WRITABLE_ROOTS = "sandbox.writable_roots" => key(
            Kind::List,
            "[]",
            "more directories sandboxed commands may write",
        ),
        SANDBOX_GIT_WRITES = "sandbox.git_writes" => key(
            Kind::Bool,
            "false",
            "let sandboxed commands write git's data (commits, branches) while .git/config and hooks stay read-only",
        ),
        SHELL_PERSISTENT = "shell.persistent" => key(
            Kind::Bool,
            "false",
            "carry exported variables, functions, aliases and shell options from one Bash call to the next in a session (each call still a fresh process); once they redefine commands, no command line counts as read-only",
        ),
        SHELL_MAX_SESSIONS = "shell.max_sessions" => key(
            Kind::Int { min: 1, max: 256 },
            "8",
            "interactive sessions (Bash with tty or yield_time_ms, typed into with WriteStdin) one session may run at once",
        ),
        SHELL_SESSION_IDLE_TIMEOUT = "shell.session_idle_timeout" => key(
            Kind::Int { min: 1, max: 604_800 },
            "1800",
            "seconds an interactive session may go without being typed into or read before it is ended with every process it started",
        ),
        SHELL_DENY_COMMANDS = "shell.deny_commands" => key(
            Kind::List,
            "[]",
            "regular expressions of commands to refuse",
        ),
        SHELL_ENV_REMOVE = "shell.env_remove" => limit(
            Kind::List,
            || {
                let quoted: Vec<String> = DEFAULT_ENV_REMOVE.iter().map(|p| format!("\"{p}\"")).collect();
                format!("[{}]", quoted.join(", "))
            },
            "more patterns of variables kept out of shell commands' environment (`*` wildcards, any case); values shaped like secrets (a URL with a password, a provider's token) are kept out too",
        ),
        SHELL_ENV_KEEP = "shell.env_keep" => key(
            Kind::List,
            "[]",
            "variables shell commands keep although a removal pattern matches them",
        ),
        RUNTIME_OUTPUT_BUDGET = "runtime.output_budget" => limit(
            Kind::Int { min: 100, max: 1 << 40 },
            || CallLimits::DEFAULT.output_budget.to_string(),
            "characters of text per result",
        ),
        RUNTIME_DEFAULT_TIMEOUT = "runtime.default_timeout" => limit(
            Kind::Int { min: 1, max: 86_400 },
            || CallLimits::DEFAULT.default_timeout.as_secs().to_string(),
            "seconds a call runs by default",
        ),
        RUNTIME_MAX_TIMEOUT = "runtime.max_timeout" => limit(
            Kind::Int { min: 1, max: 86_400 },
            || CallLimits::DEFAULT.max_timeout.as_secs().to_string(),
            "seconds a call may run on a default or on what its input asks (a tool's own limit setting binds it instead)",
        ),
        RUNTIME_CONCURRENCY = "runtime.concurrency" => key(
            Kind::Int { min: 1, max: 256 },
            "10",
            "shared calls of a batch run at once",
        ),
        SNIPPETS_SCOPE = "snippets.scope" => key(
            Kind::Choice(&SnippetScope::NAMES),
            "\"user\"",
            "where the snippet tools keep snippets: user (shared by every project, $XDG_DATA_HOME/toolbelt/snippets.db) \
             or project (this project's own, in its state directory beside its task list)",
        ),
        STORAGE_URL = "storage.url" => key(
            Kind::Text,
            "\"\"",
            "a PostgreSQL database every replica shares (postgres://USER@HOST:PORT/DATABASE) keeping the task lists instead of the SQLite files; empty: the files (user settings only)",
        ),
        STORAGE_PASSWORD_ENV = "storage.password_env" => key(
            Kind::Text,
            "\"\"",
            "the environment variable holding the database password for storage.url (user settings only)",
        ),
        STORAGE_MAX_CONNECTIONS = "storage.max_connections" => key(
            Kind::Int { min: 1, max: 1_000 },
            "8",
            "connections each toolbelt process keeps to storage.url at most (user settings only)",
        ),
        STORAGE_CA_FILE = "storage.ca_file" => key(
            Kind::Text,
            "\"\"",
            "CA certificates (PEM) trusted besides the system's for storage.url with sslmode=require, e.g. a cloud provider's bundle (user settings only)",
        ),
        AUDIT_ENABLED = "audit.enabled" => key(Kind::Bool, "false", "write one hash-chained JSON line per call"),
        AUDIT_PATH = "audit.path" => key(
            Kind::Text,
            "\"$XDG_STATE_HOME/toolbelt/projects/<project>-<hash>/audit.jsonl\"",
            "the audit log (relative to the project; by default outside it, where sandboxed commands cannot write)",
        ),
        AUDIT_MAX_BYTES = "audit.max_bytes" => key(
            Kind::Int { min: 4_096, max: 1 << 40 },
            "10485760",
            "rotate the log past this size",
        ),
        AUDIT_KEEP = "audit.keep" => key(
            Kind::Int { min: 0, max: 1_000 },
            "5",
            "rotated audit files kept (0 is read as 1)",
        ),
        COMPAT_CLAUDE = "compat.claude" => key(Kind::Bool, "false", "also read Claude Code's settings files"),
        CONFIG_MODEL_MAY_SET_MODE = "config.model_may_set_mode" => key(
            Kind::Bool,
            "false",
            "let the Config tool change permissions.mode (never to bypassPermissions) (user settings only)",
        ),
        MCP_MAX_SESSIONS = "mcp.max_sessions" => key(
            Kind::Int { min: 1, max: 100_000 },
            "64",
            "MCP sessions `toolbelt mcp --http` holds at once; past this a new one is refused until one ends",
        ),
        MCP_SESSION_IDLE_TIMEOUT = "mcp.session_idle_timeout" => key(
            Kind::Int { min: 1, max: 604_800 },
            "1800",
            "seconds an HTTP MCP session may go unused before it is closed (its background processes killed)",
        ),
        MCP_SSE_POLL_AFTER = "mcp.sse_poll_after" => key(
            Kind::Int { min: 0, max: 86_400 },
            "0",
            "seconds after which `toolbelt mcp --http` closes a call's SSE stream while the call goes on, for the client to resume with Last-Event-ID (0: never)",
        ),
        MCP_DRAIN_TIMEOUT = "mcp.drain_timeout" => key(
            Kind::Int { min: 0, max: 3_600 },
            "20",
            "seconds `toolbelt mcp --http` lets running calls finish after SIGTERM before it cuts them (keep it 5 s or more under the orchestrator's grace period)",
        ),
        MCP_ALLOWED_ORIGINS = "mcp.allowed_origins" => key(
            Kind::List,
            "[]",
            "browser origins `toolbelt mcp --http` answers besides its own (scheme://host:port, or null)",
        ),
        MCP_ALLOWED_HOSTS = "mcp.allowed_hosts" => key(
            Kind::List,
            "[]",
            "Host names `toolbelt mcp --http` answers under besides its address (the name clients and a load balancer use, e.g. toolbelt.example.com; host:port pins a port)",
        ),
        MCP_ADVERTISE_URL = "mcp.advertise_url" => key(
            Kind::Text,
            "\"\"",
            "where the other replicas of a team reach this `toolbelt mcp --http` (http://POD_IP:8080), to pass it requests of its sessions; empty: its address unless it serves 0.0.0.0 (user settings only)",
        ),
        MCP_TOOL_SEARCH = "mcp.tool_search" => key(
            Kind::Choice(&crate::settings::tool_search::ToolSearch::NAMES),
            "\"auto\"",
            "defer upstream MCP tools (listed by name, loaded with ToolSearch): auto past mcp.tool_search_threshold, always, or never",
        ),
        MCP_TOOL_SEARCH_THRESHOLD = "mcp.tool_search_threshold" => key(
            Kind::Int { min: 0, max: 100 },
            "10",
            "percent of a 200,000-token context (4 characters a token) upstream tool definitions may fill before auto defers them",
        ),
        MCP_SERVERS = "mcp.servers.*" => key(
            Kind::Table,
            "{}",
            "an upstream MCP server: command, args, env, cwd (stdio) or url, headers, bearer_token_env, oauth (HTTP: enabled, client_id, client_secret_env, issuer, client_metadata_url, scopes, callback_port); enabled_tools, disabled_tools, timeout, startup_timeout, enabled, protocol (auto, 2026-07-28, 2025-11-25, 2025-06-18)",
        ),
        LSP_ENABLED = "lsp.enabled" => key(
            Kind::Bool,
            "true",
            "use language servers (the LSP and Diagnostics tools, errors after edits)",
        ),
        LSP_DEFAULTS = "lsp.defaults" => key(
            Kind::Bool,
            "true",
            "use rust-analyzer, basedpyright/pyright, typescript-language-server, gopls and clangd when on PATH",
        ),
        LSP_DIAGNOSTICS_TIMEOUT = "lsp.diagnostics_timeout" => key(
            Kind::Int { min: 0, max: 60_000 },
            "3000",
            "milliseconds an edit waits for a running language server's diagnostics (0: do not wait)",
        ),
        LSP_REQUEST_TIMEOUT = "lsp.request_timeout" => key(
            Kind::Int { min: 1, max: 600 },
            "30",
            "seconds one language server request may take",
        ),
        LSP_SERVERS = "lsp.servers.*" => key(
            Kind::Table,
            "{}",
            "a language server: command, args, extensions (a list, or extension = language id), env, initialization_options, settings, root_markers, startup_timeout, max_restarts",
        ),
        LINT_DEFAULTS = "lint.defaults" => key(
            Kind::Bool,
            "true",
            "run clippy, ruff, eslint and shellcheck where the project uses them",
        ),
        LINT_TIMEOUT = "lint.timeout" => key(
            Kind::Int { min: 1, max: LINT_MAX_TIMEOUT },
            "600",
            "seconds one Lint call may take",
        ),
        LINT_LINTERS = "lint.linters.*" => key(
            Kind::Table,
            "{}",
            "a linter: command ({path} is the path linted), format (cargo, ruff, eslint, shellcheck, sarif, lines), extensions, root_markers",
        ),
        AGENT_PROVIDER = "agent.provider" => key(
            Kind::Text,
            "\"(the first of agent.providers, else openai or anthropic from the environment)\"",
            "the model provider agents use unless one is asked for",
        ),
        AGENT_MAX_CONCURRENT = "agent.max_concurrent" => limit(
            Kind::Int { min: 1, max: 64 },
            || AgentLimits::DEFAULT.max_concurrent.to_string(),
            "sub-agents running at once in one session",
        ),
        AGENT_MAX_DEPTH = "agent.max_depth" => limit(
            Kind::Int { min: 0, max: 8 },
            || AgentLimits::DEFAULT.max_depth.to_string(),
            "how deep agents nest: 0 allows no sub-agents; 1 lets the top level start sub-agents, which start none",
        ),
        AGENT_MAX_TURNS = "agent.max_turns" => limit(
            Kind::Int { min: 1, max: 10_000 },
            || AgentLimits::DEFAULT.max_turns.to_string(),
            "model turns per run, unless the agent's definition says fewer",
        ),
        AGENT_TIME_BUDGET = "agent.time_budget" => limit(
            Kind::Int { min: 1, max: 604_800 },
            || AgentLimits::DEFAULT.time_budget.as_secs().to_string(),
            "seconds of wall time per run",
        ),
        AGENT_RESULT_CAP = "agent.result_cap" => limit(
            Kind::Int { min: 1_000, max: 1 << 30 },
            || AgentLimits::DEFAULT.result_cap.to_string(),
            "characters of an agent's final text its result carries (the rest is written to a file)",
        ),
        AGENT_MAX_TOKENS = "agent.max_tokens" => limit(
            Kind::Int { min: 1, max: 1_000_000 },
            || AgentLimits::DEFAULT.max_tokens.to_string(),
            "the most tokens one model reply may have",
        ),
        AGENT_PROVIDERS = "agent.providers.*" => key(
            Kind::Table,
            "{}",
            "a model provider: kind = \"openai\" (OpenAI-compatible: OpenAI, Ollama, vLLM…) or \"anthropic\"; base_url, api_key_env (the variable holding the key), model",
        ),
        WEB_ALLOW_PRIVATE_NETWORK = "web.allow_private_network" => key(
            Kind::Bool,
            "false",
            "let the web tools reach loopback, private, link-local and cloud-metadata addresses (user settings only)",
        ),
        WEB_ALLOWED_PRIVATE_HOSTS = "web.allowed_private_hosts" => key(
            Kind::List,
            "[]",
            "hosts the web tools may reach on private addresses: `host` or `*.domain` (user settings only)",
        ),
        WEB_PROXY = "web.proxy" => key(
            Kind::Text,
            "\"(HTTPS_PROXY, HTTP_PROXY or ALL_PROXY)\"",
            "the proxy web requests go through: http://host:port (user settings only)",
        ),
        WEB_NO_PROXY = "web.no_proxy" => key(
            Kind::Text,
            "\"(NO_PROXY)\"",
            "hosts reached without the proxy, NO_PROXY's syntax (user settings only)",
        ),
        WEB_TIMEOUT = "web.timeout" => limit(
            Kind::Int { min: 1, max: 600 },
            || WebConfig::default().timeout.as_secs().to_string(),
            "seconds one fetch may take, redirects and body included",
        ),
        WEB_SEARCH_PROVIDER = "web.search.provider" => key(
            Kind::Choice(&SearchProviderKind::NAMES),
            "\"duckduckgo\"",
            "where WebSearch sends queries (a provider without its key falls back to DuckDuckGo)",
        ),
        WEB_SEARCH_DUCKDUCKGO = "web.search.duckduckgo" => key(Kind::Table, "{}", SEARCH_DOC),
        WEB_SEARCH_BRAVE = "web.search.brave" => key(Kind::Table, "{}", SEARCH_DOC),
        WEB_SEARCH_TAVILY = "web.search.tavily" => key(Kind::Table, "{}", SEARCH_DOC),
        WEB_SEARCH_EXA = "web.search.exa" => key(Kind::Table, "{}", SEARCH_DOC),
        WEB_SEARCH_SEARXNG = "web.search.searxng" => key(Kind::Table, "{}", SEARCH_DOC),
        MESSAGE_CHANNELS = "message.channels.*" => key(
            Kind::Table,
            "{}",
            "a channel Message sends to (your own settings only): kind (webhook, slack, discord, telegram, file), url or url_env, headers, token_env, chat_id, api_base, path",
        ),
        TRIGGERS = "triggers.*" => key(
            Kind::Table,
            "{}",
            "an HTTP trigger RemoteTrigger calls (your own settings only): url (scheme and host written out; {field} from the payload and ${VAR} after them), method, headers, body, description",
        ),
        TOOLS_ENABLED = "tools.enabled" => key(
            Kind::List,
            "[]",
            "the only tools offered, by name, alias, category or tag (the most specific layer's list; empty: every tool)",
        ),
        TOOLS_DISABLED = "tools.disabled" => key(
            Kind::List,
            "[]",
            "tools left out everywhere, by name, alias, category or tag (every layer's add up)",
        ),
        TOOLS_COMMAND = "tools.command.*" => key(
            Kind::Table,
            "{}",
            "a command tool: description, command, args ({field} from the input), input_schema (a table or a .json file), shell, stdin (\"json\"), env, timeout (seconds), output (text, json), output_schema, reads, writes, network, exec, category, tags",
        ),
        TOOLS_HTTP = "tools.http.*" => key(
            Kind::Table,
            "{}",
            "an HTTP tool: description, url (scheme and host written out; {field} from the input after them), method, headers (${VAR} from the environment), body, input_schema, timeout (seconds), output (text, json), output_schema, category, tags",
        ),
        PLUGINS_ENABLED = "plugins.enabled" => key(
            Kind::List,
            "[]",
            "the plugins that apply, by name (every layer's add up; `toolbelt plugin enable` writes your own)",
        ),
        PLUGINS_DISABLED = "plugins.disabled" => key(
            Kind::List,
            "[]",
            "plugins that never apply, whoever enables them (every layer's add up)",
        ),
        PLUGINS_FILES = "plugins.files.*" => key(
            Kind::Table,
            "{}",
            "set by toolbelt, not by you: the digest of a project plugin's files, so trusting the project covers every file of the plugin",
        ),
        CRON_MAX_AGE_DAYS = "cron.max_age_days" => key(
            Kind::Int { min: 0, max: 3650 },
            "7",
            "days a recurring scheduled job lives before it deletes itself (0: until deleted; your own settings only)",
        ),
        CRON_JITTER = "cron.jitter" => key(
            Kind::Bool,
            "true",
            "recurring jobs fire up to a tenth of their period late (at most 15 minutes), each by its own share, so jobs do not all fire at once",
        ),
        CRON_TRIGGERS = "cron.triggers.*" => key(
            Kind::Table,
            "{}",
            "an incoming trigger `toolbelt mcp --http` serves at POST /triggers/NAME (your own settings only): token_env (the variable holding its bearer token), and prompt, or tool and input: the job it runs",
        ),
    ];
}

/// The key of a hook event's groups.
const fn hook_key(event: HookEvent) -> KeyDef {
    KeyDef { key: Key::hook(event), kind: Kind::HookGroups, default: DefaultText::Literal("[]"), doc: HOOK_DOC }
}

const COUNT: usize = PERMISSION_KEYS.len() + HookEvent::ALL.len() + OTHER_KEYS.len();

/// The permission keys, a hook key per event, then the rest.
const JOINED: [KeyDef; COUNT] = {
    let mut out = [PERMISSION_KEYS[0]; COUNT];
    let mut at = 0;
    let mut i = 0;
    while i < PERMISSION_KEYS.len() {
        out[at] = PERMISSION_KEYS[i];
        (at, i) = (at + 1, i + 1);
    }
    let mut i = 0;
    while i < HookEvent::ALL.len() {
        out[at] = hook_key(HookEvent::ALL[i]);
        (at, i) = (at + 1, i + 1);
    }
    let mut i = 0;
    while i < OTHER_KEYS.len() {
        out[at] = OTHER_KEYS[i];
        (at, i) = (at + 1, i + 1);
    }
    out
};

/// Every key, in the order `config show` prints them.
pub const KEYS: &[KeyDef] = &JOINED;
