//! A settings key as a type: code names a key by its constant (`Key::PERMISSIONS_MODE`),
//! declared once in the schema's table ([`super::KEYS`]), so a misspelt key does not compile
//! and every key the code reads is one the schema knows. Keys with a name of the user's in
//! them (`mcp.servers.github`) are built from their table's key ([`Key::named`]).

use std::fmt;

use toolbelt_policy::HookEvent;

/// A settings key: the dotted path of one entry of the schema (`permissions.mode`), or of a
/// family of tables named by the user (`mcp.servers.*`).
///
/// Only the schema makes keys: the constants on this type, [`Key::hook`], and
/// [`Key::parse`] for a path read from a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Key {
    /// Everything before the last dot (`permissions`, `web.search`, `mcp.servers`).
    section: &'static str,
    /// The last part (`mode`; `*` for a family of named tables).
    name: &'static str,
}

impl Key {
    /// The key at a dotted path; a path without a dot fails to compile where it is a constant.
    pub(super) const fn at(path: &'static str) -> Key {
        let bytes = path.as_bytes();
        let mut dot = bytes.len();
        while dot > 0 {
            dot -= 1;
            if bytes[dot] == b'.' {
                break;
            }
        }
        assert!(dot > 0 && bytes[dot] == b'.' && dot + 1 < bytes.len(), "a settings key is `section.name`");
        let (section, rest) = path.split_at(dot);
        let (_, name) = rest.split_at(1);
        Key { section, name }
    }

    /// The key of a hook event's groups (`hooks.PreToolUse`).
    pub const fn hook(event: HookEvent) -> Key {
        Key { section: "hooks", name: event.as_str() }
    }

    /// The hook event this key holds the groups of, if it is a `hooks.` key.
    pub fn event(self) -> Option<HookEvent> {
        (self.section == "hooks").then(|| HookEvent::parse(self.name)).flatten()
    }

    /// The schema's key for a dotted path (`mcp.servers.github` is [`Key::MCP_SERVERS`]);
    /// `None` for a path the schema does not know.
    pub fn parse(path: &str) -> Option<Key> {
        super::find(path).map(|def| def.key)
    }

    /// The key's entry in the schema: its type, default and doc (every key has one; `None`
    /// only for a [`Key::hook`] of an event the table left out, which its tests rule out).
    pub fn def(self) -> Option<&'static super::KeyDef> {
        super::KEYS.iter().find(|k| k.key == self)
    }

    /// Everything before the last dot: `permissions` for `permissions.mode`.
    pub fn section(self) -> &'static str {
        self.section
    }

    /// Whether `path` lies in this key's section (`audit.anything` for `Key::AUDIT_PATH`),
    /// known key or not.
    pub fn shares_section(self, path: &str) -> bool {
        path.strip_prefix(self.section).is_some_and(|rest| rest.starts_with('.'))
    }

    /// Whether this key is a family of tables the user names (`mcp.servers.*`).
    pub fn is_named(self) -> bool {
        self.name == "*"
    }

    /// The path of one table of a named family: `mcp.servers.github` for
    /// `Key::MCP_SERVERS.named("github")`.
    pub fn named(self, name: &str) -> String {
        debug_assert!(self.is_named(), "{self} has no named tables");
        format!("{}.{name}", self.section)
    }

    /// The name in `path` when it is one table of this family (`github` in
    /// `mcp.servers.github`): one part, not empty.
    pub fn name_in(self, path: &str) -> Option<&str> {
        let name = path.strip_prefix(self.section)?.strip_prefix('.')?;
        (self.is_named() && !name.is_empty() && !name.contains('.')).then_some(name)
    }

    /// Whether `path` is this key, or one table of it when it is a named family.
    pub fn matches(self, path: &str) -> bool {
        if self.is_named() { self.name_in(path).is_some() } else { self == *path }
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.section, self.name)
    }
}

impl PartialEq<str> for Key {
    fn eq(&self, path: &str) -> bool {
        path.strip_prefix(self.section).and_then(|rest| rest.strip_prefix('.')) == Some(self.name)
    }
}

impl PartialEq<Key> for str {
    fn eq(&self, key: &Key) -> bool {
        key == self
    }
}

impl PartialEq<Key> for String {
    fn eq(&self, key: &Key) -> bool {
        key == self.as_str()
    }
}

impl PartialEq<Key> for &str {
    fn eq(&self, key: &Key) -> bool {
        key == *self
    }
}

impl From<Key> for String {
    fn from(key: Key) -> String {
        key.to_string()
    }
}
