//! Project trust: a project's own settings apply only once a person trusted the project.
//!
//! A cloned repository is somebody else's code. Its `.toolbelt/config.toml`, `.mcp.json` or
//! `.claude/settings.json` could start hooks and MCP servers (programs, unsandboxed) on the
//! first `toolbelt call` in that folder, switch to `bypassPermissions`, turn the sandbox off
//! or the network on. So, as Claude Code and Codex ask before trusting a folder, the settings
//! of a project's own files — toolbelt's project and project-local files, `.mcp.json`, and
//! Claude Code's project files — apply only once the project is trusted (`toolbelt trust`, or
//! the question at a terminal on first use); until then they are ignored with one line saying
//! so and how to trust.
//!
//! Only what could loosen the policy or run code waits for trust. What only tightens it —
//! deny and ask rules, `shell.deny_commands`, `permissions.disable_bypass = true` — applies
//! at once: ignoring it could only make an untrusted project more permissive.
//!
//! A trust is recorded with the SHA-256 digest of what it trusted (every waiting entry: key,
//! value and file, and the content of every project file a hook or MCP server command names,
//! such as `hooks/guard.sh`). When a project's hooks, MCP servers or any other waiting setting change,
//! the digest changes and the project needs trusting again — so a hook planted by a command
//! the agent ran is never run silently. "Always allow" rules that a person chose, written by
//! toolbelt itself, keep the project's settings applying ([`refresh_after_write`]).
//!
//! User-level and managed settings are the user's own and are trusted as they are. A project
//! setting can never loosen what the user level sets: a project's `permissions.mode`,
//! `sandbox.mode`, `sandbox.network` or `sandbox.if_unsandboxed` looser than the user's own
//! value is ignored, saying so.
//!
//! The store is `trust.json` in toolbelt's state directory (0600, in a 0700 directory): out
//! of every project, and a protected path no tool writes without approval.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{Entry, Layer, Locations};

/// One trusted project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The digest of what was trusted ([`Pending::digest`]).
    pub digest: String,
    /// When (RFC 3339, UTC).
    pub trusted_at: String,
    /// What was trusted, one line per setting, for `toolbelt trust --list`.
    #[serde(default)]
    pub settings: Vec<String>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    projects: BTreeMap<String, TrustRecord>,
}

/// The trust decisions, in `<state dir>/trust.json`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The store of these locations.
    pub fn at(loc: &Locations) -> Self {
        Self { file: loc.state_dir.join("trust.json") }
    }

    /// The file.
    pub fn file(&self) -> &Path {
        &self.file
    }

    fn read(&self) -> TrustFile {
        match std::fs::read_to_string(&self.file) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!("{} is not valid ({e}); no project counts as trusted", self.file.display());
                TrustFile::default()
            }),
            Err(_) => TrustFile::default(),
        }
    }

    fn write(&self, file: &TrustFile) -> std::io::Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
        let temp = dir.join(format!(".trust.json.{}.tmp", std::process::id()));
        let mut out = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
        let written = out.write_all(text.as_bytes()).and_then(|()| out.sync_all());
        drop(out);
        if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &self.file)) {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        Ok(())
    }

    /// The record of a project, if it was trusted.
    pub fn record(&self, project: &Path) -> Option<TrustRecord> {
        self.read().projects.remove(&key(project))
    }

    /// Trusts a project as it is now.
    pub fn trust(&self, project: &Path, pending: &Pending) -> std::io::Result<()> {
        let mut file = self.read();
        let record = TrustRecord {
            digest: pending.digest.clone(),
            trusted_at: toolbelt_runtime::rfc3339(std::time::SystemTime::now()),
            settings: pending.summary(),
        };
        file.projects.insert(key(project), record);
        self.write(&file)
    }

    /// Forgets a project's trust; whether it was trusted.
    pub fn revoke(&self, project: &Path) -> std::io::Result<bool> {
        let mut file = self.read();
        let was = file.projects.remove(&key(project)).is_some();
        if was {
            self.write(&file)?;
        }
        Ok(was)
    }

    /// Every trusted project.
    pub fn all(&self) -> Vec<(String, TrustRecord)> {
        self.read().projects.into_iter().collect()
    }
}

fn key(project: &Path) -> String {
    project.display().to_string()
}

/// Whether an entry comes from a project's own files.
pub fn is_project_layer(layer: Layer) -> bool {
    matches!(layer, Layer::Project | Layer::Local | Layer::ClaudeProject | Layer::ClaudeLocal)
}

/// Whether an entry can only make the policy stricter (so it applies without trust).
pub fn only_restricts(entry: &Entry) -> bool {
    match entry.key.as_str() {
        "permissions.deny" | "permissions.ask" | "shell.deny_commands" => true,
        "permissions.disable_bypass" => entry.value.as_bool() == Some(true),
        _ => false,
    }
}

/// What a project's own files set that waits for trust.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pending {
    /// The entries, in precedence order.
    pub entries: Vec<Entry>,
    /// Their digest: SHA-256 over each entry's layer, file name, key and value.
    pub digest: String,
}

impl Pending {
    /// The entries of `entries` that come from the project's files and need trust.
    pub fn of(entries: &[Entry], project: &Path) -> Self {
        let entries: Vec<Entry> =
            entries.iter().filter(|e| is_project_layer(e.origin.layer) && !only_restricts(e)).cloned().collect();
        let mut canonical = String::new();
        for e in &entries {
            let file = e.origin.file.as_deref().map(|f| f.strip_prefix(project).unwrap_or(f).display().to_string());
            canonical.push_str(&format!(
                "{}\t{}\t{}\t{}\n",
                e.origin.layer.as_str(),
                file.unwrap_or_default(),
                e.key,
                e.value
            ));
            // A hook or server that runs a script of the project is trusted as that script is
            // now: editing it is a change that needs trusting again.
            for script in project_files(&e.value, project) {
                let content = std::fs::read(&script).unwrap_or_default();
                canonical.push_str(&format!("\tfile {} {}\n", script.display(), toolbelt_core::sha256_hex(&content)));
            }
        }
        Self { entries, digest: toolbelt_core::sha256_hex(canonical) }
    }

    /// Whether nothing waits for trust.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// One line per entry: `hooks.PreToolUse = {…} (.toolbelt/config.toml:3)`.
    pub fn summary(&self) -> Vec<String> {
        self.entries
            .iter()
            .map(|e| {
                let mut value = e.value.to_string();
                if value.chars().count() > 100 {
                    value = format!("{}…", value.chars().take(99).collect::<String>());
                }
                let place = match (&e.origin.file, e.origin.line) {
                    (Some(f), Some(l)) => format!(" ({}:{l})", short(f)),
                    (Some(f), None) => format!(" ({})", short(f)),
                    _ => String::new(),
                };
                let reach = match e.key.strip_prefix("agent.providers.") {
                    Some(_) => format!(" — {}", super::agent::provider_reach(&e.value)),
                    None => String::new(),
                };
                format!("{} = {value}{place}{reach}", e.key)
            })
            .collect()
    }

    /// A few words on what waits: `2 hooks, MCP servers github and docs, permissions.mode`.
    pub fn gist(&self) -> String {
        let hooks = self.entries.iter().filter(|e| e.key.starts_with("hooks.")).count();
        let servers: Vec<&str> = self.entries.iter().filter_map(|e| e.key.strip_prefix("mcp.servers.")).collect();
        let providers: Vec<String> = self
            .entries
            .iter()
            .filter_map(|e| {
                e.key
                    .strip_prefix("agent.providers.")
                    .map(|name| format!("{name} ({})", super::agent::provider_reach(&e.value)))
            })
            .collect();
        let mut others: Vec<&str> = self
            .entries
            .iter()
            .filter(|e| {
                !e.key.starts_with("hooks.")
                    && !e.key.starts_with("mcp.servers.")
                    && !e.key.starts_with("agent.providers.")
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
            parts.push(format!(
                "model provider{} {}",
                if providers.len() == 1 { "" } else { "s" },
                providers.join(", ")
            ));
        }
        parts.extend(others.into_iter().take(6).map(str::to_string));
        parts.join(", ")
    }
}

/// The project's files a setting's commands name: every word of a `command` or `args` string
/// (hooks, MCP servers) that is a file inside the project, relative or through
/// `$TOOLBELT_PROJECT_DIR`/`$CLAUDE_PROJECT_DIR`.
fn project_files(value: &serde_json::Value, project: &Path) -> Vec<PathBuf> {
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

/// Whether the project's settings apply.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Trust {
    /// Its files set nothing that needs trust.
    #[default]
    NotNeeded,
    /// A person trusted it as it is now.
    Trusted,
    /// Its settings wait for trust; `changed` when it was trusted before and they changed.
    Untrusted {
        /// What waits.
        pending: Pending,
        /// Whether an earlier trust no longer matches.
        changed: bool,
    },
}

impl Trust {
    /// Decides for `project` from `entries` (every layer's) and the store.
    pub fn decide(entries: &[Entry], project: &Path, store: &TrustStore) -> Trust {
        let pending = Pending::of(entries, project);
        if pending.is_empty() {
            return Trust::NotNeeded;
        }
        match store.record(project) {
            Some(record) if record.digest == pending.digest => Trust::Trusted,
            Some(_) => Trust::Untrusted { pending, changed: true },
            None => Trust::Untrusted { pending, changed: false },
        }
    }

    /// The one line said when the project's settings are ignored.
    pub fn notice(&self, project: &Path) -> Option<String> {
        let Trust::Untrusted { pending, changed } = self else { return None };
        let why = if *changed { "has changed since you trusted it" } else { "is not trusted yet" };
        Some(format!(
            "this project's own settings ({}) are ignored: the project at {} {why}; review them with `toolbelt \
             trust --show` and apply them with `toolbelt trust` (its deny and ask rules apply already)",
            pending.gist(),
            project.display()
        ))
    }
}

/// Keeps a project's settings applying after toolbelt itself wrote to them (an "always
/// allow" rule a person chose): when they applied before the write (the project was trusted,
/// or set nothing that needed trust), the project is trusted as it is now. A project whose
/// settings were waiting for trust stays waiting: one approved rule does not trust the rest.
pub fn refresh_after_write(store: &TrustStore, project: &Path, applied_before: bool, now: &Pending) {
    if !applied_before {
        return;
    }
    if let Err(e) = store.trust(project, now) {
        tracing::warn!("could not keep {} trusted after writing its settings: {e}", project.display());
    }
}

/// Drops the project entries looser than the user's own value of the same key; says why.
pub fn keep_user_floor(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    const ORDERED: &[(&str, &[&str])] = &[
        ("permissions.mode", &["plan", "dontAsk", "default", "acceptEdits", "bypassPermissions"]),
        ("sandbox.mode", &["read-only", "workspace-write", "danger-full-access"]),
        ("sandbox.if_unsandboxed", &["refuse", "ask", "run"]),
    ];
    let rank = |key: &str, value: &serde_json::Value| -> Option<usize> {
        if key == "sandbox.network" {
            return value.as_bool().map(usize::from);
        }
        let (_, order) = ORDERED.iter().find(|(k, _)| *k == key)?;
        let text = value.as_str()?;
        let text = toolbelt_policy::PermissionMode::parse(text).map_or(text, |m| m.as_str());
        order.iter().position(|v| *v == text)
    };
    let user_rank = |key: &str| {
        entries
            .iter()
            .filter(|e| e.key == key && matches!(e.origin.layer, Layer::User | Layer::ClaudeUser))
            .filter_map(|e| rank(key, &e.value))
            .next_back()
    };
    let floors: Vec<(String, usize)> =
        ["permissions.mode", "sandbox.mode", "sandbox.network", "sandbox.if_unsandboxed"]
            .iter()
            .filter_map(|k| user_rank(k).map(|r| (k.to_string(), r)))
            .collect();
    entries.retain(|e| {
        let Some((_, floor)) = floors.iter().find(|(k, _)| *k == e.key) else { return true };
        let looser = is_project_layer(e.origin.layer) && rank(&e.key, &e.value).is_some_and(|r| r > *floor);
        if looser {
            notices.push(format!(
                "{} = {} in {} is ignored: a project's settings cannot loosen your own ({})",
                e.key, e.value, e.origin, "user settings"
            ));
        }
        !looser
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Origin;
    use serde_json::json;

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/.toolbelt/config.toml"), Some(1)) }
    }

    #[test]
    fn only_loosening_project_entries_wait_and_their_digest_follows_them() {
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
        assert_eq!(keys, ["hooks.PreToolUse", "permissions.allow"]);
        assert_eq!(pending.gist(), "1 hook, permissions.allow");
        let provider = json!({"kind": "openai", "base_url": "https://llm.example", "api_key_env": "GITHUB_TOKEN"});
        let with_provider = Pending::of(&[entry(Layer::Project, "agent.providers.team", provider)], p);
        assert_eq!(with_provider.gist(), "model provider team (sends $GITHUB_TOKEN to https://llm.example)");
        assert!(with_provider.summary()[0].ends_with("— sends $GITHUB_TOKEN to https://llm.example"));
        let mut changed = entries.clone();
        changed[2].value = json!({"matcher": "*", "hooks": [{"type": "command", "command": "evil"}]});
        assert_ne!(Pending::of(&changed, p).digest, pending.digest);
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

    #[test]
    fn the_store_records_revokes_and_decides() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore { file: dir.path().join("state/trust.json") };
        let p = Path::new("/p");
        let entries = vec![entry(Layer::Project, "sandbox.mode", json!("danger-full-access"))];
        assert!(matches!(Trust::decide(&entries, p, &store), Trust::Untrusted { changed: false, .. }));
        store.trust(p, &Pending::of(&entries, p)).unwrap();
        assert_eq!(Trust::decide(&entries, p, &store), Trust::Trusted);
        let mode = std::fs::metadata(store.file()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let more = vec![entries[0].clone(), entry(Layer::Project, "sandbox.network", json!(true))];
        assert!(matches!(Trust::decide(&more, p, &store), Trust::Untrusted { changed: true, .. }));
        assert!(store.revoke(p).unwrap());
        assert!(matches!(Trust::decide(&entries, p, &store), Trust::Untrusted { changed: false, .. }));
    }

    #[test]
    fn a_project_cannot_loosen_the_user_s_own_settings() {
        let mut entries = vec![
            entry(Layer::User, "sandbox.mode", json!("workspace-write")),
            entry(Layer::Project, "sandbox.mode", json!("danger-full-access")),
            entry(Layer::Project, "sandbox.network", json!(true)),
            entry(Layer::User, "permissions.mode", json!("default")),
            entry(Layer::Local, "permissions.mode", json!("plan")),
        ];
        let mut notices = Vec::new();
        keep_user_floor(&mut entries, &mut notices);
        let kept: Vec<(&str, String)> = entries.iter().map(|e| (e.key.as_str(), e.value.to_string())).collect();
        assert_eq!(
            kept,
            [
                ("sandbox.mode", "\"workspace-write\"".to_string()),
                ("sandbox.network", "true".to_string()),
                ("permissions.mode", "\"default\"".to_string()),
                ("permissions.mode", "\"plan\"".to_string())
            ],
            "stricter project values stay; the user never set the network"
        );
        assert_eq!(notices.len(), 1, "{notices:?}");
    }
}
