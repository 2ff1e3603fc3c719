//! What a project's own files set that waits for trust, as a person reviews it and as its
//! digest records it.

use std::path::{Path, PathBuf};

use super::{is_project_layer, only_restricts};
use crate::settings::schema::Key;
use crate::settings::{Entry, loosening};

/// What a project's own files set that waits for trust: only what would apply once it is
/// trusted (a value the user's own settings override, or a key only the user sets, is not
/// here), split into what a plain trust applies and what loosens the policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pending {
    /// What a trust applies: hooks, servers, providers, settings that do not loosen the
    /// policy; in precedence order.
    pub entries: Vec<Entry>,
    /// What loosens the policy ([`loosening::reason`]): applies only when the trust included
    /// it.
    pub loosening: Vec<Entry>,
    /// The digest of both, in precedence order: SHA-256 over each entry's layer, file name,
    /// key and value (and the content of the project files its commands name). What a trust
    /// that includes the loosening settings accepts.
    pub digest: String,
    /// The digest of [`Pending::entries`] alone: what a plain trust accepts, so a loosening
    /// setting added later is ignored (with a notice) rather than untrusting the rest.
    pub base_digest: String,
}

impl Pending {
    /// The entries of `entries` that come from the project's files and need trust.
    pub fn of(entries: &[Entry], project: &Path) -> Self {
        let (mut all, mut base) = (String::new(), String::new());
        let mut pending = Self::default();
        for e in entries.iter().filter(|e| is_project_layer(e.origin.layer) && !only_restricts(e)) {
            let line = canonical(e, project);
            all.push_str(&line);
            if loosening::reason(e).is_some() {
                pending.loosening.push(e.clone());
            } else {
                base.push_str(&line);
                pending.entries.push(e.clone());
            }
        }
        pending.digest = toolbelt_core::sha256_hex(all);
        pending.base_digest = toolbelt_core::sha256_hex(base);
        pending
    }

    /// Whether nothing waits for trust.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty() && self.loosening.is_empty()
    }

    /// The digest a trust records: with the loosening settings or without.
    pub fn digest_for(&self, loosening: bool) -> &str {
        if loosening { &self.digest } else { &self.base_digest }
    }

    /// One line per entry a trust applies: `hooks.PreToolUse = {…} (.toolbelt/config.toml:3)`.
    pub fn summary(&self) -> Vec<String> {
        self.entries.iter().map(line).collect()
    }

    /// One line per loosening entry, saying what it lets happen:
    /// `permissions.allow = "Bash(*)" (.toolbelt/config.toml:2) — loosens: runs without asking`.
    pub fn loosening_summary(&self) -> Vec<String> {
        self.loosening
            .iter()
            .map(|e| format!("{} — loosens: {}", line(e), loosening::reason(e).unwrap_or("the policy")))
            .collect()
    }

    /// A few words on what waits: `2 hooks, MCP servers github and docs, permissions.mode`.
    pub fn gist(&self) -> String {
        gist(self.entries.iter().chain(&self.loosening))
    }

    /// A few words on the loosening settings: `permissions.mode, permissions.allow`.
    pub fn loosening_gist(&self) -> String {
        gist(self.loosening.iter())
    }
}

/// One entry's line in the digest: what it is, where, and the content of the project files
/// its commands name.
fn canonical(e: &Entry, project: &Path) -> String {
    let file = e.origin.file.as_deref().map(|f| f.strip_prefix(project).unwrap_or(f).display().to_string());
    let mut line = format!("{}\t{}\t{}\t{}\n", e.origin.layer.as_str(), file.unwrap_or_default(), e.key, e.value);
    // A hook or server that runs a script of the project is trusted as that script is now:
    // editing it is a change that needs trusting again.
    for script in project_files(&e.value, project) {
        let content = std::fs::read(&script).unwrap_or_default();
        line.push_str(&format!("\tfile {} {}\n", script.display(), toolbelt_core::sha256_hex(&content)));
    }
    line
}

/// `key = value (file:line)`, the value cut to 100 characters, a provider's reach after it.
fn line(e: &Entry) -> String {
    let mut value = e.value.to_string();
    if value.chars().count() > 100 {
        value = format!("{}…", value.chars().take(99).collect::<String>());
    }
    let place = match (&e.origin.file, e.origin.line) {
        (Some(f), Some(l)) => format!(" ({}:{l})", short(f)),
        (Some(f), None) => format!(" ({})", short(f)),
        _ => String::new(),
    };
    let reach = if Key::AGENT_PROVIDERS.shares_section(&e.key) {
        format!(" — {}", crate::settings::agent::provider_reach(&e.value))
    } else if Key::MCP_SERVERS.shares_section(&e.key) {
        never_started(&e.value).map(|why| format!(" — never started: {why}")).unwrap_or_default()
    } else {
        String::new()
    };
    format!("{} = {value}{place}{reach}", e.key)
}

/// Why the MCP server an entry configures is never started, whatever the trust (its command
/// is this toolbelt): the reason's first clause.
fn never_started(value: &serde_json::Value) -> Option<String> {
    let config = serde_json::from_value::<toolbelt_mcp::client::UpstreamConfig>(value.clone()).ok()?;
    let why = toolbelt_mcp::client::lineage::skip_reason(&config)?;
    Some(why.split_once(": ").map_or(why.as_str(), |(first, _)| first).to_string())
}

fn gist<'e>(entries: impl Iterator<Item = &'e Entry> + Clone) -> String {
    let is_hook = |e: &Entry| Key::parse(&e.key).is_some_and(|k| k.event().is_some());
    let hooks = entries.clone().filter(|e| is_hook(e)).count();
    let servers: Vec<&str> = entries.clone().filter_map(|e| Key::MCP_SERVERS.name_in(&e.key)).collect();
    let providers: Vec<String> = entries
        .clone()
        .filter_map(|e| {
            Key::AGENT_PROVIDERS
                .name_in(&e.key)
                .map(|name| format!("{name} ({})", crate::settings::agent::provider_reach(&e.value)))
        })
        .collect();
    let mut others: Vec<&str> = entries
        .filter(|e| {
            !is_hook(e) && !Key::MCP_SERVERS.shares_section(&e.key) && !Key::AGENT_PROVIDERS.shares_section(&e.key)
        })
        .map(|e| e.key.as_str())
        .collect();
    others.dedup();
    let mut parts = Vec::new();
    if hooks > 0 {
        parts.push(format!("{hooks} hook{}", if hooks == 1 { "" } else { "s" }));
    }
    if !servers.is_empty() {
        parts.push(format!("MCP server{} {}", if servers.len() == 1 { "" } else { "s" }, servers.join(", ")));
    }
    if !providers.is_empty() {
        parts.push(format!("model provider{} {}", if providers.len() == 1 { "" } else { "s" }, providers.join(", ")));
    }
    parts.extend(others.into_iter().take(6).map(str::to_string));
    parts.join(", ")
}

/// The project's files a setting's commands name: every word of a `command` or `args` string
/// (hooks, MCP servers) that is a file inside the project, relative or through
/// `$TOOLBELT_PROJECT_DIR`/`$CLAUDE_PROJECT_DIR`.
pub(super) fn project_files(value: &serde_json::Value, project: &Path) -> Vec<PathBuf> {
    let mut words: Vec<String> = Vec::new();
    collect_command_words(value, &mut words);
    let mut files = Vec::new();
    for word in words {
        let word = word.trim_matches(|c| c == '"' || c == '\'');
        let mut expanded = word.to_string();
        for var in ["$TOOLBELT_PROJECT_DIR", "${TOOLBELT_PROJECT_DIR}", "$CLAUDE_PROJECT_DIR", "${CLAUDE_PROJECT_DIR}"]
        {
            expanded = expanded.replace(var, &project.display().to_string());
        }
        let path = project.join(&expanded);
        if !expanded.starts_with('-') && path.starts_with(project) && path.is_file() && !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

fn collect_command_words(value: &serde_json::Value, out: &mut Vec<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                match (k.as_str(), v) {
                    ("command", serde_json::Value::String(s)) => out.extend(s.split_whitespace().map(str::to_string)),
                    ("args", serde_json::Value::Array(items)) => {
                        out.extend(items.iter().filter_map(|i| i.as_str().map(str::to_string)));
                    }
                    _ => collect_command_words(v, out),
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| collect_command_words(i, out)),
        _ => {}
    }
}

fn short(file: &Path) -> String {
    let parts: Vec<_> = file.components().rev().take(2).collect();
    parts.into_iter().rev().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::settings::{Layer, Origin};

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/.toolbelt/config.toml"), Some(1)) }
    }

    #[test]
    fn only_project_entries_that_do_not_restrict_wait_and_their_digests_follow_them() {
        let p = Path::new("/p");
        let entries = vec![
            entry(Layer::User, "permissions.mode", json!("acceptEdits")),
            entry(Layer::Project, "permissions.deny", json!("Bash(rm *)")),
            entry(Layer::Project, "hooks.PreToolUse", json!({"matcher": "*", "hooks": []})),
            entry(Layer::Local, "permissions.allow", json!("Bash")),
            entry(Layer::Project, "permissions.disable_bypass", json!(true)),
        ];
        let pending = Pending::of(&entries, p);
        let keys: Vec<&str> = pending.entries.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(keys, ["hooks.PreToolUse"]);
        let loose: Vec<&str> = pending.loosening.iter().map(|e| e.key.as_str()).collect();
        assert_eq!(loose, ["permissions.allow"]);
        assert_eq!(pending.gist(), "1 hook, permissions.allow");
        assert!(pending.loosening_summary()[0].ends_with("— loosens: runs without asking"), "{pending:?}");
        let provider = json!({"kind": "openai", "base_url": "https://llm.example", "api_key_env": "GITHUB_TOKEN"});
        let with_provider = Pending::of(&[entry(Layer::Project, "agent.providers.team", provider)], p);
        assert_eq!(with_provider.gist(), "model provider team (sends $GITHUB_TOKEN to https://llm.example)");
        assert!(with_provider.summary()[0].ends_with("— sends $GITHUB_TOKEN to https://llm.example"));
        // A changed hook changes both digests; a changed loosening setting only the whole one.
        let mut changed = entries.clone();
        changed[2].value = json!({"matcher": "*", "hooks": [{"type": "command", "command": "evil"}]});
        let after = Pending::of(&changed, p);
        assert!(after.digest != pending.digest && after.base_digest != pending.base_digest);
        changed[3].value = json!("Bash(*)");
        let looser = Pending::of(&changed, p);
        assert!(looser.digest != after.digest && looser.base_digest == after.base_digest);
        // Only restrictive settings: nothing to trust.
        assert!(Pending::of(&entries[..2], p).is_empty());
    }

    #[test]
    fn a_script_a_hook_runs_is_part_of_the_digest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("hooks")).unwrap();
        std::fs::write(p.join("hooks/guard.sh"), "exit 0").unwrap();
        let hook = json!({"hooks": [{"type": "command", "command": "sh $TOOLBELT_PROJECT_DIR/hooks/guard.sh --x"}]});
        let server = json!({"command": "python3", "args": ["hooks/guard.sh"]});
        for value in [hook, server] {
            let entries = vec![entry(Layer::Project, "hooks.PreToolUse", value)];
            let before = Pending::of(&entries, p).digest;
            std::fs::write(p.join("hooks/guard.sh"), "echo allow").unwrap();
            assert_ne!(Pending::of(&entries, p).digest, before, "editing the script needs trusting again");
            std::fs::write(p.join("hooks/guard.sh"), "exit 0").unwrap();
            assert_eq!(Pending::of(&entries, p).digest, before);
        }
    }
}
