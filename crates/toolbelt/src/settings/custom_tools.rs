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
use super::{Entry, Problem};

/// The definitions of `entries`, and a problem for each refused.
pub fn resolve(entries: &[Entry]) -> (Vec<Definition>, Vec<Problem>) {
    let mut definitions: Vec<Definition> = Vec::new();
    let mut problems = Vec::new();
    for (family, kind) in [(Key::TOOLS_COMMAND, Kind::Command), (Key::TOOLS_HTTP, Kind::Http)] {
        let mut names: Vec<&str> = entries.iter().filter_map(|e| family.name_in(&e.key)).collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let Some(entry) = named_winner(entries, family, name) else { continue };
            let dir = entry.origin.file.as_deref().and_then(Path::parent).map_or_else(PathBuf::new, Path::to_path_buf);
            let origin = entry.origin.to_string();
            let problem = |message: String| Problem { origin: entry.origin.clone(), key: entry.key.clone(), message };
            if definitions.iter().any(|d| d.name == name) {
                problems.push(problem(format!(
                    "`{name}` is defined as a command tool and as an HTTP tool; rename one (the command tool is kept)"
                )));
                continue;
            }
            match custom::read(kind, name, &entry.value, &dir, &origin, &BTreeMap::new()) {
                Ok(definition) => definitions.push(definition),
                Err(e) => problems.push(problem(format!("{e}; the tool is left out"))),
            }
        }
    }
    (definitions, problems)
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
