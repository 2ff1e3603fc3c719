//! Every settings key: its type, its default, and what it does. The one list the loader, the
//! validator (`config check`), `config show` and the unknown-key suggestions all read.

mod check;
mod key;
mod table;

pub use check::{ValueError, check, type_name};
pub use key::Key;
pub use table::KEYS;

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
    /// The key (`permissions.mode`).
    pub key: Key,
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

/// The key at `path` (`mcp.servers.github` is the key `mcp.servers.*`).
pub fn find(path: &str) -> Option<&'static KeyDef> {
    KEYS.iter().find(|k| k.key.matches(path))
}

/// Whether some key lies under `path` (so `path` is a table).
pub fn is_table(path: &str) -> bool {
    KEYS.iter().any(|k| {
        let section = k.key.section();
        section == path || section.strip_prefix(path).is_some_and(|rest| rest.starts_with('.'))
    })
}

/// The known key closest to an unknown one, when one is close enough to be a typo.
pub fn suggest(path: &str) -> Option<Key> {
    let last = |p: &str| p.rsplit('.').next().unwrap_or(p).to_ascii_lowercase();
    KEYS.iter()
        .map(|k| {
            let known = k.key.to_string();
            let whole = strsim::jaro_winkler(&path.to_ascii_lowercase(), &known.to_ascii_lowercase());
            let tail = strsim::jaro_winkler(&last(path), &last(&known));
            (whole.max(tail * 0.97), k.key)
        })
        .filter(|(score, _)| *score > 0.85)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use toolbelt_policy::HookEvent;
    use toolbelt_tools::shell::{DEFAULT_ENV_REMOVE, SandboxMode, WhenUnavailable};

    use super::*;

    #[test]
    fn defaults_and_choices_come_from_their_homes() {
        let env_remove = Key::SHELL_ENV_REMOVE.def().unwrap().default.text();
        let parsed: toml_edit::DocumentMut = format!("v = {env_remove}").parse().unwrap();
        let listed: Vec<&str> = parsed["v"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(listed, DEFAULT_ENV_REMOVE);
        for mode in SandboxMode::ALL {
            assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
            assert!(check(Key::SANDBOX_MODE.def().unwrap(), &json!(mode.as_str())).is_ok());
        }
        for choice in WhenUnavailable::ALL {
            assert_eq!(WhenUnavailable::parse(choice.as_str()), Some(choice));
            assert!(check(Key::SANDBOX_IF_UNSANDBOXED.def().unwrap(), &json!(choice.as_str())).is_ok());
        }
        assert!(check(Key::SANDBOX_MODE.def().unwrap(), &json!("full")).is_err());
        let choices = |key: Key| match key.def().unwrap().kind {
            Kind::Choice(names) => names.to_vec(),
            other => panic!("{key:?} is {other:?}"),
        };
        let scopes = toolbelt_tools::snippets::SnippetScope::ALL.map(|s| s.as_str());
        assert_eq!(choices(Key::SNIPPETS_SCOPE), scopes);
        let providers = toolbelt_tools::web::SearchProviderKind::ALL.map(|k| k.as_str());
        assert_eq!(choices(Key::WEB_SEARCH_PROVIDER), providers);
        for name in choices(Key::MCP_TOOL_SEARCH) {
            assert!(crate::settings::tool_search::ToolSearch::parse(name).is_some(), "{name}");
        }
        let mode_doc = Key::PERMISSIONS_MODE.def().unwrap().doc;
        for mode in toolbelt_policy::PermissionMode::ALL {
            assert!(mode_doc.contains(mode.as_str()), "the doc of permissions.mode names {mode}: {mode_doc}");
        }
    }

    #[test]
    fn every_key_is_declared_once_and_reads_back_as_itself() {
        for (at, def) in KEYS.iter().enumerate() {
            let path = def.key.to_string();
            assert!(KEYS[..at].iter().all(|k| k.key != def.key && path != k.key), "{path} twice");
            assert_eq!(def.key.def().map(|d| d.key), Some(def.key), "{path}");
            if def.key.is_named() {
                let one = def.key.named("x");
                assert_eq!(Key::parse(&one), Some(def.key), "{one}");
                assert_eq!(def.key.name_in(&one), Some("x"));
                assert_eq!(Key::parse(&def.key.named("x.y")), None);
            } else {
                assert_eq!(Key::parse(&path), Some(def.key), "{path}");
                assert!(def.key == *path.as_str() && path == def.key);
                assert_eq!(def.key.name_in(&path), None);
            }
        }
        assert_eq!(Key::parse("permissions.mod"), None);
        assert_eq!(Key::PERMISSIONS_MODE.to_string(), "permissions.mode");
        assert_eq!(Key::WEB_SEARCH_PROVIDER.section(), "web.search");
        assert_eq!(Key::MCP_SERVERS.named("github"), "mcp.servers.github");
    }

    #[test]
    fn the_hook_keys_are_the_hook_events() {
        let hooks: Vec<String> =
            KEYS.iter().filter(|k| k.kind == Kind::HookGroups).map(|k| k.key.to_string()).collect();
        let events: Vec<String> = HookEvent::ALL.iter().map(|e| format!("hooks.{}", e.as_str())).collect();
        assert_eq!(hooks, events);
        for event in HookEvent::ALL {
            let key = Key::parse(&format!("hooks.{}", event.as_str())).unwrap();
            assert_eq!((key, key.event()), (Key::hook(event), Some(event)));
        }
        assert_eq!(Key::parse("hooks.UserPromptSubmit"), None);
        assert_eq!(Key::PERMISSIONS_MODE.event(), None);
    }

    #[test]
    fn suggests_the_key_meant() {
        let suggest = |path: &str| suggest(path).map(|k| k.to_string());
        assert_eq!(suggest("permissions.alow").as_deref(), Some("permissions.allow"));
        assert_eq!(suggest("permission.mode").as_deref(), Some("permissions.mode"));
        assert_eq!(suggest("sandbox.netwrok").as_deref(), Some("sandbox.network"));
        assert_eq!(suggest("hooks.PreToolUs").as_deref(), Some("hooks.PreToolUse"));
        assert_eq!(suggest("completely.different"), None);
    }

    #[test]
    fn value_errors_say_what_to_write() {
        let def = |kind| KeyDef { key: Key::AUDIT_PATH, kind, default: DefaultText::Literal(""), doc: "" };
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
        assert_eq!(find("mcp.servers.github").map(|k| k.key), Some(Key::MCP_SERVERS));
        assert!(find("mcp.servers").is_none() && find("mcp.servers.a.b").is_none() && is_table("mcp.servers"));
        assert_eq!(find("mcp.max_sessions").map(|k| k.key), Some(Key::MCP_MAX_SESSIONS));
        assert!(is_table("mcp") && find("mcp.allowed_origins").is_some_and(|k| k.kind == Kind::List));
        assert_eq!(find("agent.providers.local").map(|k| k.key), Some(Key::AGENT_PROVIDERS));
        assert!(is_table("agent") && is_table("agent.providers") && find("agent.max_depth").is_some());
        assert_eq!(suggest("agent.max_turn"), Some(Key::AGENT_MAX_TURNS));
    }
}
