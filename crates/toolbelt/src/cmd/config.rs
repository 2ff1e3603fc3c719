//! `toolbelt config show` (and `config check`, in [`super::config_check`]).

use std::process::ExitCode;

use serde_json::{Map, Value, json};
use toolbelt::settings::Entry;
use toolbelt::settings::schema::{KEYS, KeyDef, Kind};

use crate::cli::{ConfigAction, ConfigArgs, Global};
use crate::cmd::Setup;
use crate::output::line;

pub async fn run(global: &Global, args: &ConfigArgs) -> anyhow::Result<ExitCode> {
    let setup = Setup::load(global)?;
    match args.action {
        ConfigAction::Show { json } if json => show_json(&setup),
        ConfigAction::Show { .. } => show(&setup),
        ConfigAction::Check { json, connect } => super::config_check::run(&setup, json, connect).await,
    }
}

/// The entries of `key` that count: every valid item of a list; the winner of a scalar first,
/// then what it overrides.
fn entries_of<'a>(setup: &'a Setup, def: &KeyDef) -> Vec<&'a Entry> {
    let bad: Vec<&toolbelt::settings::Origin> =
        setup.problems.iter().filter(|p| p.key == def.key).map(|p| &p.origin).collect();
    let mut entries: Vec<&Entry> =
        setup.loaded.entries.iter().filter(|e| def.key.matches(&e.key) && !bad.contains(&&e.origin)).collect();
    entries.sort_by_key(|e| e.origin.layer);
    if !def.kind.accumulates() {
        entries.reverse();
    }
    entries
}

fn show(setup: &Setup) -> anyhow::Result<ExitCode> {
    line("# Merged settings. A single value comes from the highest layer that sets it")?;
    line("# (user < project < project-local < env < flags < managed); lists add up.")?;
    if let Some(notice) = setup.loaded.trust.notice(&setup.loc.project) {
        line(&format!("# Not applied: {notice}."))?;
    }
    if let Some(note) = &setup.loaded.claude_note {
        line(&format!("# {note}."))?;
    }
    if setup.loaded.files_read.is_empty() {
        line("# No settings file was found; everything is a default.")?;
    } else {
        line("# Files read:")?;
        for (layer, file) in &setup.loaded.files_read {
            line(&format!("#   {:<14} {}", layer.as_str(), file.display()))?;
        }
    }
    let mut section = String::new();
    for def in KEYS {
        let path = def.key.to_string();
        let (table, name) = path.split_once('.').unwrap_or(("", &path));
        if table != section {
            line(&format!("\n[{table}]"))?;
            section = table.to_string();
        }
        let entries = entries_of(setup, def);
        if def.kind == Kind::Table {
            // One table per name: the highest layer's, whole.
            let mut shown: Vec<&str> = Vec::new();
            for e in &entries {
                if shown.contains(&e.key.as_str()) {
                    continue;
                }
                shown.push(&e.key);
                let server = e.key.rsplit('.').next().unwrap_or_default();
                line(&format!("{}.{server} = {}  # {}", name.trim_end_matches(".*"), compact(&e.value), e.origin))?;
            }
            if shown.is_empty() {
                line(&format!("# {}: none configured", name.trim_end_matches(".*")))?;
            }
            continue;
        }
        if def.kind.accumulates() {
            if entries.is_empty() {
                line(&format!("{name} = []  # default"))?;
                continue;
            }
            line(&format!("{name} = ["))?;
            for e in &entries {
                line(&format!("  {},  # {}", compact(&e.value), e.origin))?;
            }
            line("]")?;
        } else {
            match entries.split_first() {
                None => line(&format!("{name} = {}  # default", def.default.text()))?,
                Some((winner, overridden)) => {
                    line(&format!("{name} = {}  # {}", compact(&winner.value), winner.origin))?;
                    for e in overridden {
                        line(&format!("#   overrides {} from {}", compact(&e.value), e.origin))?;
                    }
                }
            }
        }
    }
    if !setup.problems.is_empty() {
        line(&format!("\n# {} problem(s): run `toolbelt config check`", setup.problems.len()))?;
    }
    Ok(ExitCode::SUCCESS)
}

fn show_json(setup: &Setup) -> anyhow::Result<ExitCode> {
    let mut out = Map::new();
    for def in KEYS {
        let entries = entries_of(setup, def);
        if def.kind == Kind::Table {
            for e in &entries {
                if !out.contains_key(&e.key) {
                    out.insert(e.key.clone(), json!({"value": e.value, "source": e.origin.to_string()}));
                }
            }
            continue;
        }
        let value = if def.kind.accumulates() {
            json!({
                "value": entries.iter().map(|e| e.value.clone()).collect::<Vec<_>>(),
                "sources": entries.iter().map(|e| e.origin.to_string()).collect::<Vec<_>>(),
            })
        } else {
            match entries.first() {
                Some(e) => json!({"value": e.value, "source": e.origin.to_string()}),
                None => {
                    let default: Value = serde_json::from_str(&def.default.text()).unwrap_or(Value::Null);
                    json!({"value": default, "source": "default"})
                }
            }
        };
        out.insert(def.key.to_string(), value);
    }
    line(&serde_json::to_string_pretty(&Value::Object(out))?)?;
    Ok(ExitCode::SUCCESS)
}

/// A value on one line.
/// A value as one line, its secret-shaped parts (a password in a URL) redacted.
fn compact(value: &Value) -> String {
    toolbelt_runtime::audit::redact_text(&serde_json::to_string(value).unwrap_or_default()).into_owned()
}
