//! `[tools.command.NAME]` and `[tools.http.NAME]`: tools the settings define
//! (`toolbelt_tools::custom` says what each field does). Each table is read on its own: a bad
//! one is a problem at its file and line, and is left out while the others and the rest of the
//! settings apply. The highest layer's table of a name wins whole.
//!
//! A project's definitions run programs and reach addresses, so like every project setting
//! they wait until the project is trusted (`trust.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use toolbelt_core::Registry;
use toolbelt_tools::custom::{self, Definition, Kind};

use super::schema::Key;
use super::trust::is_project_layer;
use super::winner::named_winner;
use super::{Entry, Layer, Problem};

/// The definitions of `entries`, and a problem for each refused: the settings' own first,
/// then the plugins' (a plugin's tool is named `PLUGIN__tool` when its own name is taken by a
/// built-in tool, the settings' or another plugin's).
///
/// A name the user's own settings define is theirs: a project's definition of it is refused
/// (it would inherit the rules that allow the user's). A built-in tool's name is refused.
/// A project's definitions (and its plugins') never read environment variables: secrets are
/// the user's, and a repository's tool could send them anywhere it names.
pub fn resolve(entries: &[Entry]) -> (Vec<Definition>, Vec<Problem>) {
    let plugin = |e: &Entry| matches!(e.origin.layer, Layer::UserPlugin | Layer::ProjectPlugin);
    let defines = |e: &Entry| FAMILIES.iter().any(|(f, _)| f.name_in(&e.key).is_some());
    let own: Vec<Entry> = entries.iter().filter(|e| !plugin(e) && defines(e)).cloned().collect();
    let theirs: Vec<&Entry> = entries.iter().filter(|e| plugin(e) && defines(e)).collect();
    let mut definitions: Vec<Definition> = Vec::new();
    let mut problems = Vec::new();
    if own.is_empty() && theirs.is_empty() {
        return (definitions, problems);
    }
    let taken = built_in_names();
    for (family, kind) in FAMILIES {
        let mut names: Vec<&str> = own.iter().filter_map(|e| family.name_in(&e.key)).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let users: Vec<Entry> = own.iter().filter(|e| !is_project_layer(e.origin.layer)).cloned().collect();
            let entry = match named_winner(&users, family, name) {
                Some(users) => {
                    for shadow in
                        own.iter().filter(|e| is_project_layer(e.origin.layer) && family.name_in(&e.key) == Some(name))
                    {
                        problems.push(problem(shadow, format!(
                            "your own settings define `{name}`; a project cannot replace it (it would get the rules \
                             that allow yours); the project's is left out"
                        )));
                    }
                    users
                }
                None => match named_winner(&own, family, name) {
                    Some(entry) => entry,
                    None => continue,
                },
            };
            let entry = &entry.clone();
            if definitions.iter().any(|d| d.name == name) {
                problems.push(problem(entry, format!(
                    "`{name}` is defined as a command tool and as an HTTP tool; rename one (the command tool is kept)"
                )));
                continue;
            }
            if taken.contains(&name.to_ascii_lowercase()) {
                problems.push(problem(
                    entry,
                    format!(
                        "`{name}` is a built-in tool's name; a defined tool never replaces a built-in one: rename it"
                    ),
                ));
                continue;
            }
            match read_entry(kind, name, name, entry, &BTreeMap::new()) {
                Ok(definition) => definitions.push(definition),
                Err(e) => problems.push(problem(entry, format!("{e}; the tool is left out"))),
            }
        }
    }
    for entry in theirs {
        let Some((family, kind)) = FAMILIES.into_iter().find(|(f, _)| f.name_in(&entry.key).is_some()) else {
            continue;
        };
        let (Some(name), Some(owner)) = (family.name_in(&entry.key), entry.origin.name.as_deref()) else { continue };
        let is_taken = |n: &str| taken.contains(&n.to_ascii_lowercase()) || definitions.iter().any(|d| d.name == n);
        let chosen = if is_taken(name) { format!("{owner}__{name}") } else { name.to_string() };
        if is_taken(&chosen) {
            problems.push(problem(entry, format!("`{name}` and `{chosen}` are both taken; the tool is left out")));
            continue;
        }
        if let Err(e) = custom::check_name(&chosen) {
            problems.push(problem(entry, format!("`{name}` is taken, and {e}; the tool is left out")));
            continue;
        }
        match read_entry(kind, &chosen, name, entry, &BTreeMap::new()) {
            Ok(mut definition) => {
                definition.tags.push(format!("plugin:{owner}"));
                definitions.push(definition);
            }
            Err(e) => problems.push(problem(entry, format!("{e}; the tool is left out"))),
        }
    }
    (definitions, problems)
}

/// The two families of defined tools.
const FAMILIES: [(Key, Kind); 2] = [(Key::TOOLS_COMMAND, Kind::Command), (Key::TOOLS_HTTP, Kind::Http)];

fn problem(entry: &Entry, message: String) -> Problem {
    Problem { origin: entry.origin.clone(), key: entry.key.clone(), message }
}

/// Reads the definition of `entry` as the tool `name` (`written` is the name its table has).
fn read_entry(
    kind: Kind,
    name: &str,
    written: &str,
    entry: &Entry,
    vars: &BTreeMap<String, String>,
) -> Result<Definition, custom::DefinitionError> {
    let dir = entry.origin.file.as_deref().and_then(Path::parent).map_or_else(PathBuf::new, Path::to_path_buf);
    let origin = match &entry.origin.name {
        Some(plugin) => format!("plugin {plugin}, {}", entry.origin),
        None => entry.origin.to_string(),
    };
    if is_project_layer(entry.origin.layer) && reads_variables(&entry.value) {
        return Err(custom::DefinitionError(
            "a project's tool cannot read environment variables (`${VAR}`): secrets are the user's; define it in \
             your own settings (~/.config/toolbelt/config.toml) to pass one"
                .into(),
        ));
    }
    let mut definition = custom::read(kind, written, &entry.value, &dir, &origin, vars)?;
    definition.name = name.to_string();
    Ok(definition)
}

/// Whether a definition's text reads a variable anywhere (`${VAR}`).
fn reads_variables(value: &serde_json::Value) -> bool {
    match value {
        serde_json::Value::String(s) => s.contains("${"),
        serde_json::Value::Array(items) => items.iter().any(reads_variables),
        serde_json::Value::Object(map) => map.values().any(reads_variables),
        _ => false,
    }
}

/// Every name and alias a built-in tool (the agent tools included) answers to, lowercased.
fn built_in_names() -> std::collections::HashSet<String> {
    let tools = toolbelt_tools::builtin().into_iter().chain(toolbelt_tools::agents::tools(&[]));
    tools
        .flat_map(|t| {
            let names = t.names();
            std::iter::once(names.name.to_string()).chain(names.aliases.iter().cloned()).collect::<Vec<_>>()
        })
        .map(|n| n.to_ascii_lowercase())
        .collect()
}

/// Registers `definitions` in `registry` (after the built-in tools): a name a tool already
/// answers to is refused, never replaced. What was refused, by name and why.
pub fn register(registry: &Registry, definitions: &[Definition]) -> Vec<(String, String)> {
    let mut refused = Vec::new();
    for definition in definitions {
        let name = definition.name.clone();
        if let Err(e) = registry.register(custom::CustomTool::erased(definition.clone())) {
            refused.push((name, format!("{e}: a defined tool never replaces another; rename it")));
        }
    }
    refused
}
