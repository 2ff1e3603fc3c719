//! `toolbelt plugin list|add|remove|enable|disable`: the plugins of the user and the project
//! (`settings/plugins.rs` says what a plugin is and how it applies). Enabling and disabling
//! write the user's own settings file (`plugins.enabled`, `plugins.disabled`), keeping its
//! comments; nothing of a plugin applies until a setting enables it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Value, json};
use toolbelt::settings::plugins::{self, CLAUDE_MANIFEST, MANIFEST, Plugin, Scope};
use toolbelt::settings::{Key, LocalRuleStore, Trust};

use crate::Usage;
use crate::cli::{Global, PluginAction, PluginArgs};
use crate::cmd::Setup;
use crate::output::line;

/// Most files `add` copies (a plugin is a handful of files, not a repository).
const MAX_FILES: usize = 5_000;

pub fn run(global: &Global, args: &PluginArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    match &args.action {
        PluginAction::List { json } => list(&setup, *json),
        PluginAction::Enable { name } => {
            let found = find(&setup, name, None)?;
            let file = set_user_list(&setup, name, true)?;
            line(&format!("Enabled `{name}` in {}.{}", file.display(), trust_note(&setup, &found)))?;
            Ok(ExitCode::SUCCESS)
        }
        PluginAction::Disable { name } => {
            let file = set_user_list(&setup, name, false)?;
            line(&format!("Disabled `{name}` in {} (plugins.disabled): it applies nowhere now.", file.display()))?;
            Ok(ExitCode::SUCCESS)
        }
        PluginAction::Add { path, project } => add(&setup, path, *project),
        PluginAction::Remove { name, project } => {
            let scope = if *project { Scope::Project } else { Scope::User };
            let found = find(&setup, name, Some(scope))?;
            std::fs::remove_dir_all(&found.root)
                .map_err(|e| Usage(format!("cannot delete {}: {e}", found.root.display())))?;
            let mut note = String::new();
            if scope == Scope::User || !plugin_exists(&setup, name) {
                let file = remove_from_user_lists(&setup, name)?;
                note = format!("; taken out of plugins.enabled in {}", file.display());
            }
            line(&format!("Removed `{name}` ({}){note}.", found.root.display()))?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The plugin named `name` (of `scope` when given; the project's first otherwise).
fn find(setup: &Setup, name: &str, scope: Option<Scope>) -> anyhow::Result<Plugin> {
    let (found, _) = plugins::discover(&setup.loc);
    let mut matching: Vec<Plugin> =
        found.iter().filter(|p| p.name == name && scope.is_none_or(|s| s == p.scope)).cloned().collect();
    matching.sort_by_key(|p| p.scope == Scope::User);
    matching.into_iter().next().ok_or_else(|| {
        let names: Vec<&str> = found.iter().map(|p| p.name.as_str()).collect();
        let there =
            if names.is_empty() { "there are none".to_string() } else { format!("there are: {}", names.join(", ")) };
        Usage(format!(
            "no plugin `{name}` in {} or {} ({there}); add one with `toolbelt plugin add PATH`",
            setup.loc.user_plugins().display(),
            setup.loc.project_plugins().display()
        ))
        .into()
    })
}

fn plugin_exists(setup: &Setup, name: &str) -> bool {
    plugins::discover(&setup.loc).0.iter().any(|p| p.name == name)
}

/// What to add when enabling a project's plugin the project does not trust yet.
fn trust_note(setup: &Setup, plugin: &Plugin) -> &'static str {
    match (plugin.scope, &setup.loaded.trust) {
        (Scope::Project, Trust::Untrusted { .. }) => {
            " It is the project's: its hooks, MCP servers and tools apply once the project is trusted (`toolbelt trust`)."
        }
        _ => "",
    }
}

/// The user's own settings file.
fn user_store(setup: &Setup) -> LocalRuleStore {
    LocalRuleStore::user_settings(setup.loc.user_file.clone())
}

/// The user's own `plugins.enabled` and `plugins.disabled`, as their file has them.
fn user_lists(setup: &Setup) -> (BTreeSet<String>, BTreeSet<String>) {
    let mine = |key: Key| -> BTreeSet<String> {
        setup
            .loaded
            .entries
            .iter()
            .filter(|e| e.key == key && e.origin.file.as_deref() == Some(setup.loc.user_file.as_path()))
            .filter_map(|e| e.value.as_str().map(str::to_string))
            .collect()
    };
    (mine(Key::PLUGINS_ENABLED), mine(Key::PLUGINS_DISABLED))
}

/// Enables (`on`) or disables `name` in the user's file; the file.
fn set_user_list(setup: &Setup, name: &str, on: bool) -> anyhow::Result<PathBuf> {
    let (mut enabled, mut disabled) = user_lists(setup);
    if on {
        enabled.insert(name.to_string());
        disabled.remove(name);
    } else {
        enabled.remove(name);
        disabled.insert(name.to_string());
    }
    write_lists(setup, &enabled, &disabled)
}

fn remove_from_user_lists(setup: &Setup, name: &str) -> anyhow::Result<PathBuf> {
    let (mut enabled, disabled) = user_lists(setup);
    enabled.remove(name);
    write_lists(setup, &enabled, &disabled)
}

fn write_lists(setup: &Setup, enabled: &BTreeSet<String>, disabled: &BTreeSet<String>) -> anyhow::Result<PathBuf> {
    let store = user_store(setup);
    let list = |set: &BTreeSet<String>| Value::Array(set.iter().map(|n| Value::from(n.as_str())).collect());
    store.set(&Key::PLUGINS_ENABLED.to_string(), &list(enabled))?;
    Ok(store.set(&Key::PLUGINS_DISABLED.to_string(), &list(disabled))?)
}

/// `add`: copies the folder in and enables it.
fn add(setup: &Setup, path: &Path, project: bool) -> anyhow::Result<ExitCode> {
    let name = manifest_name(path)?;
    let scope = if project { Scope::Project } else { Scope::User };
    let base = if project { setup.loc.project_plugins() } else { setup.loc.user_plugins() };
    let target = base.join(&name);
    if target.exists() {
        return Err(Usage(format!(
            "a plugin `{name}` is already at {}; remove it first (`toolbelt plugin remove {name}{}`)",
            target.display(),
            if project { " --project" } else { "" }
        ))
        .into());
    }
    std::fs::create_dir_all(&base).map_err(|e| Usage(format!("cannot make {}: {e}", base.display())))?;
    let staging = base.join(format!(".{name}.adding-{}", std::process::id()));
    let mut copied = 0;
    let mut skipped = Vec::new();
    let result = copy_tree(path, &staging, &mut copied, &mut skipped)
        .and_then(|()| std::fs::rename(&staging, &target).map_err(|e| format!("cannot move it into place: {e}")));
    if let Err(why) = result {
        let _ = std::fs::remove_dir_all(&staging);
        return Err(Usage(format!("cannot add the plugin from {}: {why}; nothing was added", path.display())).into());
    }
    let file = set_user_list(setup, &name, true)?;
    let found = Plugin {
        name: name.clone(),
        version: None,
        description: None,
        root: target.clone(),
        manifest: target.clone(),
        scope,
        paths: plugins::Paths::default(),
    };
    line(&format!(
        "Added `{name}` to {} ({copied} file(s)) and enabled it in {}.{}",
        target.display(),
        file.display(),
        trust_note(setup, &found)
    ))?;
    for link in skipped {
        line(&format!("  not copied (a link): {}", link.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The name a plugin folder's manifest gives (else the folder's), refusing a folder that is
/// no plugin.
fn manifest_name(path: &Path) -> anyhow::Result<String> {
    let has = |m: &str| path.join(m).is_file();
    if !has(MANIFEST) && !has(CLAUDE_MANIFEST) {
        return Err(Usage(format!(
            "{} is not a plugin folder: it has neither {MANIFEST} nor {CLAUDE_MANIFEST}",
            path.display()
        ))
        .into());
    }
    let text = if has(MANIFEST) {
        let doc: toml_edit::DocumentMut = std::fs::read_to_string(path.join(MANIFEST))?
            .parse()
            .map_err(|e: toml_edit::TomlError| Usage(format!("{MANIFEST} is not valid TOML: {}", e.message())))?;
        doc.get("name").and_then(|v| v.as_str()).map(str::to_string)
    } else {
        let json: Value = serde_json::from_str(&std::fs::read_to_string(path.join(CLAUDE_MANIFEST))?)
            .map_err(|e| Usage(format!("{CLAUDE_MANIFEST} is not valid JSON: {e}")))?;
        json.get("name").and_then(Value::as_str).map(str::to_string)
    };
    let folder = path.canonicalize()?.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let name = text.unwrap_or(folder);
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c)) {
        return Err(Usage(format!("`{name}` is not a plugin name: use letters, digits, `_` or `-`")).into());
    }
    Ok(name)
}

/// Copies the regular files and folders of `from` into `to`; links are left out (a link
/// could lead anywhere once the copy is elsewhere) and listed.
fn copy_tree(from: &Path, to: &Path, copied: &mut usize, skipped: &mut Vec<PathBuf>) -> Result<(), String> {
    std::fs::create_dir(to).map_err(|e| format!("cannot make {}: {e}", to.display()))?;
    let listing = std::fs::read_dir(from).map_err(|e| format!("cannot read {}: {e}", from.display()))?;
    for entry in listing.flatten() {
        let kind = entry.file_type().map_err(|e| e.to_string())?;
        let target = to.join(entry.file_name());
        if kind.is_symlink() {
            skipped.push(entry.path());
        } else if kind.is_dir() {
            if entry.file_name() == ".git" {
                continue;
            }
            copy_tree(&entry.path(), &target, copied, skipped)?;
        } else if kind.is_file() {
            *copied += 1;
            if *copied > MAX_FILES {
                return Err(format!("it holds more than {MAX_FILES} files"));
            }
            std::fs::copy(entry.path(), &target).map_err(|e| format!("cannot copy {}: {e}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// `list`.
fn list(setup: &Setup, json: bool) -> anyhow::Result<ExitCode> {
    let (found, problems) = plugins::discover(&setup.loc);
    let (_, disabled) = user_lists(setup);
    let applying = |p: &Plugin| setup.loaded.plugins.iter().any(|a| a.root == p.root);
    let status = |p: &Plugin| -> String {
        if applying(p) {
            "enabled".into()
        } else if disabled.contains(&p.name) {
            "disabled (plugins.disabled)".into()
        } else if p.scope == Scope::Project && matches!(setup.loaded.trust, Trust::Untrusted { .. }) {
            "waits for the project's trust (`toolbelt trust`)".into()
        } else {
            format!("not enabled (`toolbelt plugin enable {}`)", p.name)
        }
    };
    let mine = |p: &Plugin, problem: &toolbelt::settings::Problem| {
        problem.origin.file.as_deref().is_some_and(|f| f.starts_with(&p.root))
    };
    let all_problems: Vec<&toolbelt::settings::Problem> =
        problems.iter().chain(&setup.loaded.plugin_problems).collect();
    if json {
        let rows: Vec<Value> = found
            .iter()
            .map(|p| {
                json!({
                    "name": p.name,
                    "version": p.version,
                    "description": p.description,
                    "scope": p.scope.as_str(),
                    "path": p.root,
                    "applies": applying(p),
                    "status": status(p),
                    "bundles": p.contents(),
                    "problems": all_problems.iter().filter(|q| mine(p, q)).map(ToString::to_string).collect::<Vec<_>>(),
                })
            })
            .collect();
        line(&serde_json::to_string_pretty(&json!({"plugins": rows}))?)?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.is_empty() {
        line(&format!(
            "No plugins in {} or {}; add one with `toolbelt plugin add PATH`.",
            setup.loc.user_plugins().display(),
            setup.loc.project_plugins().display()
        ))?;
    }
    for p in &found {
        let version = p.version.as_deref().map(|v| format!(" {v}")).unwrap_or_default();
        line(&format!("{}{version} ({}): {}", p.name, p.scope.as_str(), status(p)))?;
        if let Some(description) = &p.description {
            line(&format!("  {description}"))?;
        }
        let bundles = p.contents();
        if !bundles.is_empty() {
            line(&format!("  bundles: {}", bundles.join(", ")))?;
        }
        line(&format!("  at {}", p.root.display()))?;
        for problem in all_problems.iter().filter(|q| mine(p, q)) {
            line(&format!("  problem: {problem}"))?;
        }
    }
    for problem in problems.iter().filter(|q| !found.iter().any(|p| mine(p, q))) {
        line(&format!("problem: {problem}"))?;
    }
    Ok(ExitCode::SUCCESS)
}
