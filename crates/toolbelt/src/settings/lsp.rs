//! The `[lsp]` settings: which language servers the LSP and Diagnostics tools use, and how
//! long an edit waits for a running server's diagnostics.
//!
//! ```toml
//! [lsp]
//! enabled = true               # false: no language server is ever started
//! defaults = true              # rust-analyzer, basedpyright/pyright, typescript-language-server, gopls, clangd when on PATH
//! diagnostics_timeout = 3000   # milliseconds an edit waits for the errors it introduced
//! request_timeout = 30         # seconds one request may take
//!
//! [lsp.servers.pylsp]
//! command = "pylsp"
//! args = []
//! extensions = ["py", "pyi"]   # or a table of extension = "language id"
//! initialization_options = {}
//! settings = { pylsp = { plugins = { ruff = { enabled = true } } } }
//! ```
//!
//! With `compat.claude`, the language servers of the user's Claude Code plugins join them:
//! each installed plugin's `.lsp.json` (`~/.claude/plugins/installed_plugins.json` says
//! where the plugins are), after the servers configured here.
//!
//! A project's own `[lsp.servers.*]` starts programs, so like every project setting it waits
//! until the project is trusted (see `trust.rs`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use toolbelt_tools::language_servers::LspSettings;
use toolbelt_tools::language_servers::config::{from_lsp_json, spec_from_json};

use super::winner::{named_winner, winner};
use super::{Entry, Problem};
use crate::settings::schema::Key;

/// The language server settings the entries give; each bad server a problem at its place.
///
/// `plugins` are the `.lsp.json` files of the enabled plugins: their servers join too.
pub(super) fn resolve(
    entries: &[Entry],
    problems: &mut Vec<Problem>,
    home: &Path,
    compat_claude: bool,
    plugins: &[PathBuf],
) -> LspSettings {
    let defaults = LspSettings::default();
    let bool_of = |key: Key, default: bool| winner(entries, key).and_then(|e| e.value.as_bool()).unwrap_or(default);
    let uint = |key: Key| winner(entries, key).and_then(|e| e.value.as_u64());
    let mut settings = LspSettings {
        enabled: bool_of(Key::LSP_ENABLED, true),
        use_defaults: bool_of(Key::LSP_DEFAULTS, true),
        diagnostics_wait: uint(Key::LSP_DIAGNOSTICS_TIMEOUT).map_or(defaults.diagnostics_wait, Duration::from_millis),
        request_timeout: uint(Key::LSP_REQUEST_TIMEOUT).map_or(defaults.request_timeout, Duration::from_secs),
        ..defaults
    };
    let mut names: Vec<&str> = entries.iter().filter_map(|e| Key::LSP_SERVERS.name_in(&e.key)).collect();
    names.sort_unstable();
    names.dedup();
    for name in names {
        let Some(entry) = named_winner(entries, Key::LSP_SERVERS, name) else { continue };
        match spec_from_json(name, &entry.value, "settings", "extensions") {
            Ok(spec) => settings.servers.push(spec),
            Err(why) => problems.push(Problem {
                origin: entry.origin.clone(),
                key: entry.key.clone(),
                message: format!(
                    "{why}; a language server takes command, args, extensions, initialization_options, settings"
                ),
            }),
        }
    }
    let claude_plugins = if compat_claude { plugin_lsp_files(home) } else { Vec::new() };
    {
        for file in claude_plugins.into_iter().chain(plugins.iter().cloned()) {
            let Some(value) = std::fs::read_to_string(&file).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok())
            else {
                settings.problems.push(format!("{}: not readable JSON", file.display()));
                continue;
            };
            let (specs, bad) = from_lsp_json(&value, &format!("plugin {}", file.display()));
            settings.servers.extend(specs);
            settings.problems.extend(bad);
        }
    }
    settings
}

/// The `.lsp.json` of each installed Claude Code plugin: `installed_plugins.json` lists
/// plugins by name with their `installPath` (one record per plugin, or a list of them).
fn plugin_lsp_files(home: &Path) -> Vec<PathBuf> {
    let list = home.join(".claude/plugins/installed_plugins.json");
    let Some(value) = std::fs::read_to_string(list).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok()) else {
        return Vec::new();
    };
    let Some(plugins) = value.get("plugins").and_then(Value::as_object) else { return Vec::new() };
    let mut files: Vec<PathBuf> = plugins
        .values()
        .flat_map(|v| match v {
            Value::Array(records) => records.clone(),
            other => vec![other.clone()],
        })
        .filter_map(|record| record.get("installPath").and_then(Value::as_str).map(|p| Path::new(p).join(".lsp.json")))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files.dedup();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plugins_lsp_json_files_are_found_through_the_install_list() {
        let home = tempfile::tempdir().unwrap();
        let plugin = home.path().join(".claude/plugins/cache/market/gopls/1.0.0");
        std::fs::create_dir_all(&plugin).unwrap();
        std::fs::write(
            plugin.join(".lsp.json"),
            r#"{"go": {"command": "gopls", "extensionToLanguage": {".go": "go"}}}"#,
        )
        .unwrap();
        let list =
            serde_json::json!({"version": 2, "plugins": {"gopls@market": [{"scope": "user", "installPath": plugin}]}});
        std::fs::write(home.path().join(".claude/plugins/installed_plugins.json"), list.to_string()).unwrap();
        let mut problems = Vec::new();
        let settings = resolve(&[], &mut problems, home.path(), true, &[]);
        assert_eq!(settings.servers.len(), 1);
        assert_eq!(settings.servers[0].command, "gopls");
        assert!(settings.servers[0].origin.contains(".lsp.json"));
        assert!(resolve(&[], &mut problems, home.path(), false, &[]).servers.is_empty());
    }
}
