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
use super::winner::named_winner;
use super::{Entry, Layer, Problem};

/// The definitions of `entries`, and a problem for each refused: the settings' own first,
/// then the plugins' (a plugin's tool is named `PLUGIN__tool` when its own name is taken by a
/// built-in tool, the settings' or another plugin's).
pub fn resolve(entries: &[Entry]) -> (Vec<Definition>, Vec<Problem>) {
    let plugin = |e: &Entry| matches!(e.origin.layer, Layer::UserPlugin | Layer::ProjectPlugin);
    let own: Vec<Entry> = entries.iter().filter(|e| !plugin(e)).cloned().collect();
    let mut definitions: Vec<Definition> = Vec::new();
    let mut problems = Vec::new();
    for (family, kind) in FAMILIES {
        let mut names: Vec<&str> = own.iter().filter_map(|e| family.name_in(&e.key)).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let Some(entry) = named_winner(&own, family, name) else { continue };
            if definitions.iter().any(|d| d.name == name) {
                problems.push(problem(entry, format!(
                    "`{name}` is defined as a command tool and as an HTTP tool; rename one (the command tool is kept)"
                )));
                continue;
            }
            match read_entry(kind, name, name, entry, &BTreeMap::new()) {
                Ok(definition) => definitions.push(definition),
                Err(e) => problems.push(problem(entry, format!("{e}; the tool is left out"))),
            }
        }
    }
    let theirs: Vec<&Entry> = entries.iter().filter(|e| plugin(e)).collect();
    if theirs.is_empty() {
        return (definitions, problems);
    }
    let taken = built_in_names();
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
    let mut definition = custom::read(kind, written, &entry.value, &dir, &origin, vars)?;
    definition.name = name.to_string();
    Ok(definition)
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
