//! Plugins: folders bundling tools, hooks, skills, agents, MCP servers and language servers,
//! found in `~/.config/toolbelt/plugins/` (the user's) and `.toolbelt/plugins/` (the
//! project's), each applying only while a setting enables it (`plugins.enabled`, which
//! `toolbelt plugin enable|add` writes).
//!
//! Two layouts are read as they are:
//! - toolbelt's: `toolbelt-plugin.toml` with `name`, `version`, `description`, then the
//!   settings tables a plugin may bundle: `[tools.command.*]`, `[tools.http.*]`, `[hooks]`,
//!   `[mcp.servers.*]`, `[lsp.servers.*]`;
//! - Claude Code's: `.claude-plugin/plugin.json` (`name`, `version`, `description`), with
//!   `hooks/hooks.json`, `.mcp.json` and `.lsp.json` beside it.
//!
//! Either may also hold `skills/` (skill folders), `commands/` (one `.md` file per command,
//! used as a skill of that name) and `agents/` (agent definitions). `${TOOLBELT_PLUGIN_ROOT}`
//! and `${CLAUDE_PLUGIN_ROOT}` in any value are the plugin's folder.
//!
//! How it is built: what a plugin bundles becomes settings entries of a layer of its own
//! ([`Layer::UserPlugin`], below the user's files, so the user's own settings win a clash;
//! [`Layer::ProjectPlugin`], a project layer). So a plugin's hooks, servers and tools are
//! checked, shown and reloaded as settings are, and a project's plugin waits for the same
//! trust as the project's own settings, with no path of its own around it. A plugin never
//! sets permissions or anything else: only the tables above are read from it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::schema::Key;
use super::{Entry, Layer, Loaded, Locations, Origin, Problem, claude, toml_file};

/// The manifest of toolbelt's layout.
pub const MANIFEST: &str = "toolbelt-plugin.toml";
/// The manifest of Claude Code's layout.
pub const CLAUDE_MANIFEST: &str = ".claude-plugin/plugin.json";
/// The manifest's own fields (not settings).
const HEADER: [&str; 6] = ["name", "version", "description", "author", "homepage", "license"];
/// How many plugins one folder may hold before the rest are left unread.
const MAX_PLUGINS: usize = 200;

/// Whose a plugin is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's (`~/.config/toolbelt/plugins/`).
    User,
    /// The project's (`.toolbelt/plugins/`).
    Project,
}

impl Scope {
    /// `user` or `project`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::User => "user",
            Scope::Project => "project",
        }
    }

    fn layer(self) -> Layer {
        match self {
            Scope::User => Layer::UserPlugin,
            Scope::Project => Layer::ProjectPlugin,
        }
    }
}

/// One plugin found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// Its name (the manifest's, else its folder's).
    pub name: String,
    /// Its version, when the manifest gives one.
    pub version: Option<String>,
    /// What it is for.
    pub description: Option<String>,
    /// Its folder.
    pub root: PathBuf,
    /// Its manifest.
    pub manifest: PathBuf,
    /// Whose it is.
    pub scope: Scope,
    /// The places its manifest names besides the usual folders (Claude Code's `skills`,
    /// `commands`, `agents`, `hooks`, `mcpServers`, `lspServers` keys), inside its folder.
    pub paths: Paths,
}

/// The component paths a Claude Code manifest adds to the usual folders.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Paths {
    /// More skill folders' parents.
    pub skills: Vec<PathBuf>,
    /// More command files or folders of them.
    pub commands: Vec<PathBuf>,
    /// More agent definition folders.
    pub agents: Vec<PathBuf>,
    /// More hook files.
    pub hooks: Vec<PathBuf>,
    /// Hooks written in the manifest itself.
    pub inline_hooks: Option<Value>,
    /// More MCP server files.
    pub mcp_servers: Vec<PathBuf>,
    /// MCP servers written in the manifest itself.
    pub inline_mcp_servers: Option<Value>,
    /// More language server files.
    pub lsp_servers: Vec<PathBuf>,
}

impl Plugin {
    /// Its skills folders (each holding skill folders) and its commands (files, or folders
    /// of them): `skills/` and `commands/`, then what its manifest adds.
    pub fn skill_dirs(&self) -> (Vec<PathBuf>, Vec<PathBuf>) {
        let skills = std::iter::once(self.root.join("skills")).chain(self.paths.skills.iter().cloned()).collect();
        let commands = std::iter::once(self.root.join("commands")).chain(self.paths.commands.iter().cloned()).collect();
        (skills, commands)
    }

    /// Its agent definition folders: `agents/`, then what its manifest adds.
    pub fn agent_dirs(&self) -> Vec<PathBuf> {
        std::iter::once(self.root.join("agents")).chain(self.paths.agents.iter().cloned()).collect()
    }

    /// Its language server files that exist: `.lsp.json`, then what its manifest adds.
    pub fn lsp_json(&self) -> Vec<PathBuf> {
        std::iter::once(self.root.join(".lsp.json"))
            .chain(self.paths.lsp_servers.iter().cloned())
            .filter(|p| p.is_file())
            .collect()
    }

    /// What it bundles, in words (`2 tool(s), hooks, skills`), read from its files.
    pub fn contents(&self) -> Vec<String> {
        let (mut entries, mut problems) = (Vec::new(), Vec::new());
        read_bundle(self, &mut entries, &mut problems);
        let count = |pred: &dyn Fn(&str) -> bool| entries.iter().filter(|e| pred(&e.key)).count();
        let mut out = Vec::new();
        let tools = count(&|k| Key::TOOLS_COMMAND.name_in(k).is_some() || Key::TOOLS_HTTP.name_in(k).is_some());
        if tools > 0 {
            out.push(format!("{tools} tool(s)"));
        }
        if count(&|k| Key::parse(k).and_then(Key::event).is_some()) > 0 {
            out.push("hooks".to_string());
        }
        let servers = count(&|k| Key::MCP_SERVERS.name_in(k).is_some());
        if servers > 0 {
            out.push(format!("{servers} MCP server(s)"));
        }
        if count(&|k| Key::LSP_SERVERS.name_in(k).is_some()) > 0 || !self.lsp_json().is_empty() {
            out.push("language servers".to_string());
        }
        let (skills, commands) = self.skill_dirs();
        for (places, what) in [(skills, "skills"), (commands, "commands"), (self.agent_dirs(), "agents")] {
            if places.iter().any(|p| p.exists()) {
                out.push(what.to_string());
            }
        }
        out
    }
}

/// Every plugin in the user's and the project's plugin folders, and what could not be read.
pub fn discover(loc: &Locations) -> (Vec<Plugin>, Vec<Problem>) {
    let mut plugins = Vec::new();
    let mut problems = Vec::new();
    for (scope, base) in [(Scope::User, loc.user_plugins()), (Scope::Project, loc.project_plugins())] {
        let Ok(listing) = std::fs::read_dir(&base) else { continue };
        let mut dirs: Vec<PathBuf> = listing.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        dirs.sort();
        dirs.truncate(MAX_PLUGINS);
        for dir in dirs {
            if dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')) {
                continue;
            }
            match read_manifest(&dir, scope) {
                Ok(Some(plugin)) => plugins.push(plugin),
                Ok(None) => {}
                Err((file, message)) => problems.push(Problem {
                    origin: Origin::file(scope.layer(), &file, None),
                    key: String::new(),
                    message,
                }),
            }
        }
    }
    (plugins, problems)
}

/// The plugin in `dir`: `None` when it has no manifest.
fn read_manifest(dir: &Path, scope: Scope) -> Result<Option<Plugin>, (PathBuf, String)> {
    let folder = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut paths = Paths::default();
    let (manifest, header) = if dir.join(MANIFEST).is_file() {
        let file = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&file).map_err(|e| (file.clone(), format!("cannot be read: {e}")))?;
        let doc: toml_edit::DocumentMut = text
            .parse()
            .map_err(|e: toml_edit::TomlError| (file.clone(), format!("not valid TOML: {}", e.message())))?;
        let field = |name: &str| doc.get(name).and_then(|v| v.as_str()).map(str::to_string);
        (file, [field("name"), field("version"), field("description")])
    } else if dir.join(CLAUDE_MANIFEST).is_file() {
        let file = dir.join(CLAUDE_MANIFEST);
        let text = std::fs::read_to_string(&file).map_err(|e| (file.clone(), format!("cannot be read: {e}")))?;
        let json: Value = serde_json::from_str(&text).map_err(|e| (file.clone(), format!("not valid JSON: {e}")))?;
        let field = |name: &str| json.get(name).and_then(Value::as_str).map(str::to_string);
        paths = component_paths(dir, &json).map_err(|e| (file.clone(), e))?;
        (file, [field("name"), field("version"), field("description")])
    } else {
        return Ok(None);
    };
    let [name, version, description] = header;
    let name = name.unwrap_or(folder);
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || "_-".contains(c)) {
        return Err((manifest, format!("`{name}` is not a plugin name: use letters, digits, `_` or `-`")));
    }
    Ok(Some(Plugin { name, version, description, root: dir.to_path_buf(), manifest, scope, paths }))
}

/// The component paths of a Claude Code manifest: each key a path or a list of them
/// (`./custom/agents/`), relative to the plugin's folder and inside it; `hooks` and
/// `mcpServers` may also be written inline.
fn component_paths(dir: &Path, json: &Value) -> Result<Paths, String> {
    let list = |key: &str| -> Result<Vec<PathBuf>, String> {
        let items: Vec<&str> = match json.get(key) {
            None | Some(Value::Object(_)) => Vec::new(),
            Some(Value::String(p)) => vec![p.as_str()],
            Some(Value::Array(items)) => items.iter().filter_map(Value::as_str).collect(),
            Some(other) => return Err(format!("`{key}` must be a path or a list of paths, not {other}")),
        };
        items.into_iter().map(|p| inside(dir, key, p)).collect()
    };
    let inline = |key: &str| json.get(key).filter(|v| v.is_object()).cloned();
    Ok(Paths {
        skills: list("skills")?,
        commands: list("commands")?,
        agents: list("agents")?,
        hooks: list("hooks")?,
        inline_hooks: inline("hooks"),
        mcp_servers: list("mcpServers")?,
        inline_mcp_servers: inline("mcpServers"),
        lsp_servers: list("lspServers")?,
    })
}

/// `path` (as a manifest writes it) inside the plugin's folder `dir`, or why not: a plugin
/// names its own files, never others (a project's plugin could otherwise point anywhere).
fn inside(dir: &Path, key: &str, path: &str) -> Result<PathBuf, String> {
    let relative = Path::new(path);
    let climbs = relative.components().any(|c| matches!(c, std::path::Component::ParentDir));
    if relative.is_absolute() || climbs {
        return Err(format!("`{key}`: `{path}` is outside the plugin's folder; name its own files (`./…`)"));
    }
    Ok(dir.join(relative))
}

/// The plugins the entries enable: every layer's `plugins.enabled`, less `plugins.disabled`
/// (the user's own: [`keep_user_disabled`]).
pub fn enabled_names(entries: &[Entry]) -> BTreeSet<String> {
    let words = |key: Key| -> BTreeSet<String> {
        entries.iter().filter(|e| e.key == key).filter_map(|e| e.value.as_str()).map(str::to_string).collect()
    };
    let disabled = words(Key::PLUGINS_DISABLED);
    words(Key::PLUGINS_ENABLED).into_iter().filter(|n| !disabled.contains(n)).collect()
}

/// Whether a key may come from a plugin: its tools, hooks, MCP servers and language servers.
fn bundles(key: &str) -> bool {
    Key::TOOLS_COMMAND.name_in(key).is_some()
        || Key::TOOLS_HTTP.name_in(key).is_some()
        || Key::MCP_SERVERS.name_in(key).is_some()
        || Key::LSP_SERVERS.name_in(key).is_some()
        || Key::parse(key).and_then(Key::event).is_some()
}

/// Reads what every plugin an entry enables bundles into `loaded` (before the trust decision,
/// so a project's plugin waits for it as the project's settings do). A user's plugin and a
/// project's of the same name both apply, as two settings files would: a repository cannot
/// take away a user's plugin (its hooks may be what guards the user) by naming one its own.
/// A plugin's problems are its own: said, never stopping a call.
pub(super) fn load(loaded: &mut Loaded, loc: &Locations) {
    // Which `plugins.disabled` count is decided later (a project's do not): every plugin any
    // layer enables is read, and [`keep_enabled`] keeps those that apply.
    let wanted: BTreeSet<String> = loaded
        .entries
        .iter()
        .filter(|e| e.key == Key::PLUGINS_ENABLED)
        .filter_map(|e| e.value.as_str().map(str::to_string))
        .collect();
    if wanted.is_empty() {
        return;
    }
    let (found, problems) = discover(loc);
    loaded.plugin_problems.extend(problems);
    let chosen: Vec<Plugin> = found.into_iter().filter(|p| wanted.contains(&p.name)).collect();
    for plugin in chosen.iter().filter(|p| p.scope == Scope::Project) {
        // Every file of a project's plugin is in the trust digest: skills, agents, language
        // servers and scripts as much as its settings; a changed file asks for trust again.
        loaded.entries.push(Entry {
            key: Key::PLUGINS_FILES.named(&plugin.name),
            value: files_digest(&plugin.root),
            origin: Origin {
                name: Some(plugin.name.clone()),
                ..Origin::file(Layer::ProjectPlugin, &plugin.manifest, None)
            },
        });
    }
    for plugin in &chosen {
        let mut entries = Vec::new();
        let mut problems = Vec::new();
        read_bundle(plugin, &mut entries, &mut problems);
        for mut entry in entries {
            if bundles(&entry.key) {
                substitute_root(&mut entry.value, &plugin.root);
                entry.origin.name = Some(plugin.name.clone());
                loaded.entries.push(entry);
            } else {
                problems.push(Problem {
                    origin: entry.origin.clone(),
                    key: entry.key.clone(),
                    message: "a plugin bundles tools, hooks, MCP servers and language servers only; this is left out \
                              (permissions and other settings are the user's and the project's own)"
                        .into(),
                });
            }
        }
        loaded.plugin_problems.extend(problems.into_iter().filter(|p| !HEADER.contains(&p.key.as_str())));
    }
    loaded.plugins = chosen;
}

/// After the trust decision: keeps the plugins (and their entries) still enabled by what
/// applies, and drops a project's plugins when the project's settings do not apply.
pub(super) fn keep_enabled(loaded: &mut Loaded) {
    let enabled = enabled_names(&loaded.entries);
    // A project's plugin applies only once a person trusted the project as it is now.
    let trusted = matches!(loaded.trust, super::Trust::Trusted { .. });
    loaded.plugins.retain(|p| enabled.contains(&p.name) && (trusted || p.scope == Scope::User));
    let kept: Vec<(String, Layer)> = loaded.plugins.iter().map(|p| (p.name.clone(), p.scope.layer())).collect();
    loaded.entries.retain(|e| {
        !matches!(e.origin.layer, Layer::UserPlugin | Layer::ProjectPlugin)
            || kept.iter().any(|(name, layer)| e.origin.name.as_deref() == Some(name) && e.origin.layer == *layer)
    });
}

/// The settings entries of a plugin's files.
fn read_bundle(plugin: &Plugin, out: &mut Vec<Entry>, problems: &mut Vec<Problem>) {
    let layer = plugin.scope.layer();
    let read = |file: &Path| std::fs::read_to_string(file).ok();
    if plugin.manifest.ends_with(MANIFEST)
        && let Some(text) = read(&plugin.manifest)
    {
        toml_file::entries(layer, &plugin.manifest, &text, out, problems);
    }
    let extra = &plugin.paths;
    for hooks in std::iter::once(plugin.root.join("hooks/hooks.json")).chain(extra.hooks.iter().cloned()) {
        if let Some(text) = read(&hooks) {
            claude::entries(layer, &hooks, &text, out, problems);
        }
    }
    for servers in std::iter::once(plugin.root.join(".mcp.json")).chain(extra.mcp_servers.iter().cloned()) {
        if let Some(text) = read(&servers) {
            claude::mcp_json_entries(layer, &servers, &text, out, problems);
        }
    }
    // Written in the manifest itself: read as if they were files of their own.
    if let Some(hooks) = &extra.inline_hooks {
        let text = serde_json::json!({ "hooks": hooks }).to_string();
        claude::entries(layer, &plugin.manifest, &text, out, problems);
    }
    if let Some(servers) = &extra.inline_mcp_servers {
        let text = serde_json::json!({ "mcpServers": servers }).to_string();
        claude::mcp_json_entries(layer, &plugin.manifest, &text, out, problems);
    }
}

/// Puts the plugin's folder for `${TOOLBELT_PLUGIN_ROOT}` and `${CLAUDE_PLUGIN_ROOT}` in every
/// string of `value`.
fn substitute_root(value: &mut Value, root: &Path) {
    match value {
        Value::String(s) if s.contains("_PLUGIN_ROOT}") => {
            let root = root.to_string_lossy();
            *s = s.replace("${TOOLBELT_PLUGIN_ROOT}", &root).replace("${CLAUDE_PLUGIN_ROOT}", &root);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| substitute_root(v, root)),
        Value::Object(map) => map.values_mut().for_each(|v| substitute_root(v, root)),
        _ => {}
    }
}

/// `plugins.disabled` is the user's: a project's would take a user's plugin away (its hooks
/// may be what guards the user), so it is dropped, saying so.
pub(super) fn keep_user_disabled(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let project = super::trust::is_project_layer(e.origin.layer) && e.key == Key::PLUGINS_DISABLED;
        if project {
            notices.push(format!(
                "plugins.disabled in {} is ignored: which of your plugins apply is yours to say (a project simply \
                 does not enable one)",
                e.origin
            ));
        }
        !project
    });
}

/// The most files of a plugin hashed (more are counted, not read).
const MAX_HASHED_FILES: usize = 5_000;

/// What a plugin's folder holds, as a digest: every regular file's path and content, every
/// link's path and target (never followed), in name order.
fn files_digest(root: &Path) -> Value {
    let mut listing: Vec<(String, String)> = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    let mut skipped = 0usize;
    while let Some(dir) = stack.pop() {
        let Ok(read) = std::fs::read_dir(&dir) else { continue };
        for entry in read.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(root).unwrap_or(&path).to_string_lossy().into_owned();
            let Ok(kind) = entry.file_type() else { continue };
            if listing.len() >= MAX_HASHED_FILES {
                skipped += 1;
            } else if kind.is_symlink() {
                let target = std::fs::read_link(&path).map(|t| t.to_string_lossy().into_owned()).unwrap_or_default();
                listing.push((rel, format!("link to {target}")));
            } else if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file() {
                let content = std::fs::read(&path).map(toolbelt_core::sha256_hex).unwrap_or_default();
                listing.push((rel, content));
            }
        }
    }
    listing.sort();
    let text: String = listing.iter().map(|(p, h)| format!("{p}\0{h}\n")).collect();
    serde_json::json!({"files": listing.len() + skipped, "sha256": toolbelt_core::sha256_hex(text)})
}
