//! Every settings key: its type, its default, and what it does. The one list the loader, the
//! validator (`config check`), `config show` and the unknown-key suggestions all read.

mod check;

pub use check::{ValueError, check, type_name};

use toolbelt_agent::AgentLimits;
use toolbelt_core::CallLimits;
use toolbelt_tools::shell::{DEFAULT_ENV_REMOVE, SandboxMode, WhenUnavailable};
use toolbelt_tools::web::WebConfig;

/// The type of a key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Any string.
    Text,
    /// One of these strings.
    Choice(&'static [&'static str]),
    /// A permission mode (Claude Code's names; `accept-edits` style accepted too).
    Mode,
    /// `true` or `false`.
    Bool,
    /// An integer in this range.
    Int {
        /// Smallest allowed.
        min: i64,
        /// Largest allowed.
        max: i64,
    },
    /// A list of strings; every layer's items add up.
    List,
    /// A list of hook groups (`{matcher, hooks}`); every layer's groups add up.
    HookGroups,
    /// A table taken whole (an MCP server's settings); a higher layer replaces it whole.
    Table,
}

impl Kind {
    /// Whether values from several layers add up (lists) rather than override (scalars).
    pub fn accumulates(self) -> bool {
        matches!(self, Kind::List | Kind::HookGroups)
    }
}

/// One key.
#[derive(Debug, Clone, Copy)]
pub struct KeyDef {
    /// The dotted path (`permissions.mode`).
    pub path: &'static str,
    /// Its type.
    pub kind: Kind,
    /// Its default, as `config show` prints it.
    pub default: DefaultText,
    /// What it does.
    pub doc: &'static str,
}

/// A key's default, as TOML text. A default that has a home elsewhere (the runtime's limits)
/// is read from there, so this table never restates it.
#[derive(Debug, Clone, Copy)]
pub enum DefaultText {
    /// Written here.
    Literal(&'static str),
    /// Read from where the behaviour takes it.
    From(fn() -> String),
}

impl DefaultText {
    /// The default as TOML text.
    pub fn text(&self) -> std::borrow::Cow<'static, str> {
        match self {
            DefaultText::Literal(text) => (*text).into(),
            DefaultText::From(read) => read().into(),
        }
    }
}

const fn key(path: &'static str, kind: Kind, default: &'static str, doc: &'static str) -> KeyDef {
    KeyDef { path, kind, default: DefaultText::Literal(default), doc }
}

/// A key whose default has its home elsewhere: the runtime's limits ([`CallLimits::DEFAULT`]),
/// agents' ([`AgentLimits::DEFAULT`]), the web tools' ([`WebConfig::default`]), the shell's
/// removed variables ([`DEFAULT_ENV_REMOVE`]).
const fn limit(path: &'static str, kind: Kind, default: fn() -> String, doc: &'static str) -> KeyDef {
    KeyDef { path, kind, default: DefaultText::From(default), doc }
}

const SEARCH_DOC: &str = "a search provider: api_key_env (the variable holding its key), base_url (its endpoint; \
     required for searxng) (user settings only)";

/// The longest `lint.timeout` the settings take.
const LINT_MAX_TIMEOUT: i64 = toolbelt_tools::code::linters::MAX_TIMEOUT.as_secs() as i64;

const HOOK_DOC: &str = "hook groups: {matcher, hooks = [{type = \"command\"|\"http\", …}]}";

/// Every key, in the order `config show` prints them.
pub const KEYS: &[KeyDef] = &[
    key("permissions.mode", Kind::Mode, "\"default\"", "default, acceptEdits, plan, dontAsk or bypassPermissions"),
    key("permissions.allow", Kind::List, "[]", "rules that run without asking"),
    key("permissions.ask", Kind::List, "[]", "rules that always ask"),
    key("permissions.deny", Kind::List, "[]", "rules that never run (a bare tool name also hides the tool)"),
    key("permissions.additional_directories", Kind::List, "[]", "more workspace roots"),
    key("permissions.disable_bypass", Kind::Bool, "false", "refuse bypassPermissions mode"),
    key("hooks.PreToolUse", Kind::HookGroups, "[]", HOOK_DOC),
    key("hooks.PostToolUse", Kind::HookGroups, "[]", HOOK_DOC),
    key("hooks.PostToolUseFailure", Kind::HookGroups, "[]", HOOK_DOC),
    key("hooks.SessionStart", Kind::HookGroups, "[]", HOOK_DOC),
    key("hooks.SessionEnd", Kind::HookGroups, "[]", HOOK_DOC),
    key("hooks.SubagentStart", Kind::HookGroups, "[]", HOOK_DOC),
    key("hooks.SubagentStop", Kind::HookGroups, "[]", HOOK_DOC),
    key(
        "sandbox.mode",
        Kind::Choice(&SandboxMode::NAMES),
        "\"workspace-write\"",
        "how far shell commands are confined",
    ),
    key("sandbox.network", Kind::Bool, "false", "whether sandboxed commands may use the network"),
    key(
        "sandbox.if_unsandboxed",
        Kind::Choice(&WhenUnavailable::NAMES),
        "\"ask\"",
        "what a command does when the sandbox cannot be applied",
    ),
    key("sandbox.writable_roots", Kind::List, "[]", "more directories sandboxed commands may write"),
    key(
        "sandbox.git_writes",
        Kind::Bool,
        "false",
        "let sandboxed commands write git's data (commits, branches) while .git/config and hooks stay read-only",
    ),
    key("shell.deny_commands", Kind::List, "[]", "regular expressions of commands to refuse"),
    limit(
        "shell.env_remove",
        Kind::List,
        || {
            let quoted: Vec<String> = DEFAULT_ENV_REMOVE.iter().map(|p| format!("\"{p}\"")).collect();
            format!("[{}]", quoted.join(", "))
        },
        "more patterns of variables kept out of shell commands' environment (`*` wildcards, any case); values shaped like secrets (a URL with a password, a provider's token) are kept out too",
    ),
    key("shell.env_keep", Kind::List, "[]", "variables shell commands keep although a removal pattern matches them"),
    limit(
        "runtime.output_budget",
        Kind::Int { min: 100, max: 1 << 40 },
        || CallLimits::DEFAULT.output_budget.to_string(),
        "characters of text per result",
    ),
    limit(
        "runtime.default_timeout",
        Kind::Int { min: 1, max: 86_400 },
        || CallLimits::DEFAULT.default_timeout.as_secs().to_string(),
        "seconds a call runs by default",
    ),
    limit(
        "runtime.max_timeout",
        Kind::Int { min: 1, max: 86_400 },
        || CallLimits::DEFAULT.max_timeout.as_secs().to_string(),
        "seconds a call may run on a default or on what its input asks (a tool's own limit setting binds it instead)",
    ),
    key("runtime.concurrency", Kind::Int { min: 1, max: 256 }, "10", "shared calls of a batch run at once"),
    key(
        "snippets.scope",
        Kind::Choice(&["user", "project"]),
        "\"user\"",
        "where the snippet tools keep snippets: user (shared by every project, $XDG_DATA_HOME/toolbelt/snippets.db) \
         or project (this project's own, in its state directory beside its task list)",
    ),
    key("audit.enabled", Kind::Bool, "false", "write one hash-chained JSON line per call"),
    key(
        "audit.path",
        Kind::Text,
        "\"$XDG_STATE_HOME/toolbelt/projects/<project>-<hash>/audit.jsonl\"",
        "the audit log (relative to the project; by default outside it, where sandboxed commands cannot write)",
    ),
    key("audit.max_bytes", Kind::Int { min: 4_096, max: 1 << 40 }, "10485760", "rotate the log past this size"),
    key("audit.keep", Kind::Int { min: 0, max: 1_000 }, "5", "rotated audit files kept (0 is read as 1)"),
    key("compat.claude", Kind::Bool, "false", "also read Claude Code's settings files"),
    key(
        "config.model_may_set_mode",
        Kind::Bool,
        "false",
        "let the Config tool change permissions.mode (never to bypassPermissions) (user settings only)",
    ),
    key(
        "mcp.max_sessions",
        Kind::Int { min: 1, max: 100_000 },
        "64",
        "MCP sessions `toolbelt mcp --http` holds at once; past this a new one is refused until one ends",
    ),
    key(
        "mcp.session_idle_timeout",
        Kind::Int { min: 1, max: 604_800 },
        "1800",
        "seconds an HTTP MCP session may go unused before it is closed (its background processes killed)",
    ),
    key(
        "mcp.allowed_origins",
        Kind::List,
        "[]",
        "browser origins `toolbelt mcp --http` answers besides its own (scheme://host:port, or null)",
    ),
    key(
        "mcp.tool_search",
        Kind::Choice(&["auto", "always", "never"]),
        "\"auto\"",
        "defer upstream MCP tools (listed by name, loaded with ToolSearch): auto past mcp.tool_search_threshold, always, or never",
    ),
    key(
        "mcp.tool_search_threshold",
        Kind::Int { min: 0, max: 100 },
        "10",
        "percent of a 200,000-token context (4 characters a token) upstream tool definitions may fill before auto defers them",
    ),
    key(
        "mcp.servers.*",
        Kind::Table,
        "{}",
        "an upstream MCP server: command, args, env, cwd (stdio) or url, headers, bearer_token_env (HTTP); enabled_tools, disabled_tools, timeout, startup_timeout, enabled",
    ),
    key("lsp.enabled", Kind::Bool, "true", "use language servers (the LSP and Diagnostics tools, errors after edits)"),
    key(
        "lsp.defaults",
        Kind::Bool,
        "true",
        "use rust-analyzer, basedpyright/pyright, typescript-language-server, gopls and clangd when on PATH",
    ),
    key(
        "lsp.diagnostics_timeout",
        Kind::Int { min: 0, max: 60_000 },
        "3000",
        "milliseconds an edit waits for a running language server's diagnostics (0: do not wait)",
    ),
    key("lsp.request_timeout", Kind::Int { min: 1, max: 600 }, "30", "seconds one language server request may take"),
    key(
        "lsp.servers.*",
        Kind::Table,
        "{}",
        "a language server: command, args, extensions (a list, or extension = language id), env, initialization_options, settings, root_markers, startup_timeout, max_restarts",
    ),
    key("lint.defaults", Kind::Bool, "true", "run clippy, ruff, eslint and shellcheck where the project uses them"),
    key("lint.timeout", Kind::Int { min: 1, max: LINT_MAX_TIMEOUT }, "600", "seconds one Lint call may take"),
    key(
        "lint.linters.*",
        Kind::Table,
        "{}",
        "a linter: command ({path} is the path linted), format (cargo, ruff, eslint, shellcheck, sarif, lines), extensions, root_markers",
    ),
    key(
        "agent.provider",
        Kind::Text,
        "\"(the first of agent.providers, else openai or anthropic from the environment)\"",
        "the model provider agents use unless one is asked for",
    ),
    limit(
        "agent.max_concurrent",
        Kind::Int { min: 1, max: 64 },
        || AgentLimits::DEFAULT.max_concurrent.to_string(),
        "sub-agents running at once in one session",
    ),
    limit(
        "agent.max_depth",
        Kind::Int { min: 0, max: 8 },
        || AgentLimits::DEFAULT.max_depth.to_string(),
        "how deep agents nest: 0 allows no sub-agents; 1 lets the top level start sub-agents, which start none",
    ),
    limit(
        "agent.max_turns",
        Kind::Int { min: 1, max: 10_000 },
        || AgentLimits::DEFAULT.max_turns.to_string(),
        "model turns per run, unless the agent's definition says fewer",
    ),
    limit(
        "agent.time_budget",
        Kind::Int { min: 1, max: 604_800 },
        || AgentLimits::DEFAULT.time_budget.as_secs().to_string(),
        "seconds of wall time per run",
    ),
    limit(
        "agent.result_cap",
        Kind::Int { min: 1_000, max: 1 << 30 },
        || AgentLimits::DEFAULT.result_cap.to_string(),
        "characters of an agent's final text its result carries (the rest is written to a file)",
    ),
    limit(
        "agent.max_tokens",
        Kind::Int { min: 1, max: 1_000_000 },
        || AgentLimits::DEFAULT.max_tokens.to_string(),
        "the most tokens one model reply may have",
    ),
    key(
        "agent.providers.*",
        Kind::Table,
        "{}",
        "a model provider: kind = \"openai\" (OpenAI-compatible: OpenAI, Ollama, vLLM…) or \"anthropic\"; base_url, api_key_env (the variable holding the key), model",
    ),
    key(
        "web.allow_private_network",
        Kind::Bool,
        "false",
        "let the web tools reach loopback, private, link-local and cloud-metadata addresses (user settings only)",
    ),
    key(
        "web.allowed_private_hosts",
        Kind::List,
        "[]",
        "hosts the web tools may reach on private addresses: `host` or `*.domain` (user settings only)",
    ),
    key(
        "web.proxy",
        Kind::Text,
        "\"(HTTPS_PROXY, HTTP_PROXY or ALL_PROXY)\"",
        "the proxy web requests go through: http://host:port (user settings only)",
    ),
    key(
        "web.no_proxy",
        Kind::Text,
        "\"(NO_PROXY)\"",
        "hosts reached without the proxy, NO_PROXY's syntax (user settings only)",
    ),
    limit(
        "web.timeout",
        Kind::Int { min: 1, max: 600 },
        || WebConfig::default().timeout.as_secs().to_string(),
        "seconds one fetch may take, redirects and body included",
    ),
    key(
        "web.search.provider",
        Kind::Choice(&["duckduckgo", "brave", "tavily", "exa", "searxng"]),
        "\"duckduckgo\"",
        "where WebSearch sends queries (a provider without its key falls back to DuckDuckGo)",
    ),
    key("web.search.duckduckgo", Kind::Table, "{}", SEARCH_DOC),
    key("web.search.brave", Kind::Table, "{}", SEARCH_DOC),
    key("web.search.tavily", Kind::Table, "{}", SEARCH_DOC),
    key("web.search.exa", Kind::Table, "{}", SEARCH_DOC),
    key("web.search.searxng", Kind::Table, "{}", SEARCH_DOC),
];

/// The key at `path` (`mcp.servers.github` is the key `mcp.servers.*`).
pub fn find(path: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| match k.path.strip_suffix(".*") {
        Some(prefix) => path
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|name| !name.is_empty() && !name.contains('.')),
        None => k.path == path,
    })
}

/// Whether some key lies under `path` (so `path` is a table).
pub fn is_table(path: &str) -> bool {
    KEYS.iter().any(|k| k.path.len() > path.len() && k.path.starts_with(path) && k.path.as_bytes()[path.len()] == b'.')
}

/// The known key closest to an unknown one, when one is close enough to be a typo.
pub fn suggest(path: &str) -> Option<&'static str> {
    let last = |p: &str| p.rsplit('.').next().unwrap_or(p).to_ascii_lowercase();
    KEYS.iter()
        .map(|k| {
            let whole = strsim::jaro_winkler(&path.to_ascii_lowercase(), &k.path.to_ascii_lowercase());
            let tail = strsim::jaro_winkler(&last(path), &last(k.path));
            (whole.max(tail * 0.97), k.path)
        })
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn defaults_and_choices_come_from_their_homes() {
        let env_remove = find("shell.env_remove").unwrap().default.text();
        let parsed: toml_edit::DocumentMut = format!("v = {env_remove}").parse().unwrap();
        let listed: Vec<&str> = parsed["v"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(listed, DEFAULT_ENV_REMOVE);
        for mode in SandboxMode::ALL {
            assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
            assert!(check(find("sandbox.mode").unwrap(), &json!(mode.as_str())).is_ok());
        }
        for choice in WhenUnavailable::ALL {
            assert_eq!(WhenUnavailable::parse(choice.as_str()), Some(choice));
            assert!(check(find("sandbox.if_unsandboxed").unwrap(), &json!(choice.as_str())).is_ok());
        }
        assert!(check(find("sandbox.mode").unwrap(), &json!("full")).is_err());
    }

    #[test]
    fn suggests_the_key_meant() {
        assert_eq!(suggest("permissions.alow"), Some("permissions.allow"));
        assert_eq!(suggest("permission.mode"), Some("permissions.mode"));
        assert_eq!(suggest("sandbox.netwrok"), Some("sandbox.network"));
        assert_eq!(suggest("hooks.PreToolUs"), Some("hooks.PreToolUse"));
        assert_eq!(suggest("completely.different"), None);
    }

    #[test]
    fn value_errors_say_what_to_write() {
        let def = |kind| KeyDef { path: "k", kind, default: DefaultText::Literal(""), doc: "" };
        let cases = [
            (Kind::Text, json!(1), "expected a string, got an integer"),
            (Kind::Choice(&["a", "b"]), json!("c"), "`c` is not one of: a, b"),
            (Kind::Choice(&["a", "b"]), json!(true), "expected one of a, b, got a boolean"),
            (
                Kind::Mode,
                json!("yolo"),
                "`yolo` is not a permission mode; use one of: default, acceptEdits, plan, dontAsk, bypassPermissions",
            ),
            (Kind::Mode, json!(null), "expected a permission mode (a string), got nothing"),
            (Kind::Bool, json!("yes"), "expected true or false, got a string"),
            (Kind::Int { min: 1, max: 9 }, json!(10), "10 is out of range (1 to 9)"),
            (Kind::Int { min: 1, max: 9 }, json!(1.5), "expected an integer, got a float"),
            (Kind::HookGroups, json!([]), "expected a hook group ({matcher, hooks}), got an array"),
            (Kind::Table, json!("x"), "expected a table, got a string"),
        ];
        for (kind, value, message) in cases {
            assert_eq!(check(&def(kind), &value).unwrap_err().to_string(), message);
        }
        assert!(check(&def(Kind::Mode), &json!("accept-edits")).is_ok());
    }

    #[test]
    fn tables_and_keys() {
        assert!(is_table("permissions") && is_table("hooks") && !is_table("permissions.mode"));
        assert!(find("audit.keep").is_some() && find("audit").is_none());
        assert_eq!(find("mcp.servers.github").map(|k| k.path), Some("mcp.servers.*"));
        assert!(find("mcp.servers").is_none() && find("mcp.servers.a.b").is_none() && is_table("mcp.servers"));
        assert_eq!(find("mcp.max_sessions").map(|k| k.path), Some("mcp.max_sessions"));
        assert!(is_table("mcp") && find("mcp.allowed_origins").is_some_and(|k| k.kind == Kind::List));
        assert_eq!(find("agent.providers.local").map(|k| k.path), Some("agent.providers.*"));
        assert!(is_table("agent") && is_table("agent.providers") && find("agent.max_depth").is_some());
        assert_eq!(suggest("agent.max_turn"), Some("agent.max_turns"));
    }
}
