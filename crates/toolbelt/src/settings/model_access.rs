//! What a model may read and change through the `Config` tool
//! ([`toolbelt_core::SettingsAccess`]).
//!
//! Reading: any key, with where its value comes from — the same merge `toolbelt config show`
//! prints, read again at each call so a change shows at once.
//!
//! Changing: only [`MODEL_SETTABLE`] — settings about how much the model sees and how long
//! it waits, none of which lets a tool do, reach or hide more — written to the project-local
//! file. `permissions.mode` joins them only when the user's own settings say
//! `config.model_may_set_mode = true` (a project's files cannot: [`keep_user_opt_in`]), and
//! never to `bypassPermissions`. Everything about rules, hooks, the sandbox, the network,
//! upstream servers and the audit log stays the user's. The write itself is a protected
//! file's: the tool declares it and the permission engine asks someone in every mode.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use toolbelt_core::{PermissionMode, SetOutcome, SettingValue, SettingsAccess, SettingsError};

use super::schema::{self, KeyDef};
use super::trust::is_project_layer;
use super::{Entry, Layer, LocalRuleStore, Locations};
use crate::settings::schema::Key;

/// The keys a model may change, besides `permissions.mode` when the user allows it.
pub const MODEL_SETTABLE: &[Key] =
    &[Key::RUNTIME_OUTPUT_BUDGET, Key::RUNTIME_DEFAULT_TIMEOUT, Key::RUNTIME_CONCURRENCY, Key::AGENT_MAX_TURNS];

/// The user's opt-in that lets a model change the permission mode.
pub const MODE_OPT_IN: Key = Key::CONFIG_MODEL_MAY_SET_MODE;

/// Reads the settings of the project of a directory: its locations and every layer.
pub type LoadFor = Arc<dyn Fn(&Path) -> (Locations, super::Loaded) + Send + Sync>;

/// Makes the writer of a project's local file (which keeps the project's trust).
pub type StoreFor = Arc<dyn Fn(&Locations) -> LocalRuleStore + Send + Sync>;

/// The settings as the `Config` tool sees them.
pub struct ModelSettings {
    load: LoadFor,
    store: StoreFor,
}

impl ModelSettings {
    /// Settings read with `load` and written through `store`.
    pub fn new(load: LoadFor, store: StoreFor) -> Self {
        Self { load, store }
    }
}

/// Drops `config.model_may_set_mode` from a project's files, saying so: whether a model may
/// loosen the mode is the user's decision, never a repository's.
pub(super) fn keep_user_opt_in(entries: &mut Vec<Entry>, notices: &mut Vec<String>) {
    entries.retain(|e| {
        let dropped = e.key == MODE_OPT_IN && is_project_layer(e.origin.layer);
        if dropped {
            notices.push(format!(
                "{MODE_OPT_IN} in {} is ignored: whether a model may change the permission mode is set in your own \
                 settings (~/.config/toolbelt/config.toml), never by a project",
                e.origin
            ));
        }
        !dropped
    });
}

fn find(key: &str) -> Result<&'static KeyDef, SettingsError> {
    schema::find(key).filter(|d| d.key == *key).ok_or_else(|| SettingsError::UnknownKey {
        key: key.to_string(),
        suggestion: schema::find(key).map(|d| d.key).or_else(|| schema::suggest(key)).map(|k| k.to_string()),
    })
}

/// The entries that count for `def`: every item of a list in layer order; the winner of a
/// single value first.
fn entries_for<'a>(entries: &'a [Entry], def: &KeyDef) -> Vec<&'a Entry> {
    let mut out: Vec<&Entry> = entries.iter().filter(|e| def.key.matches(&e.key)).collect();
    out.sort_by_key(|e| e.origin.layer);
    if !def.kind.accumulates() {
        out.reverse();
    }
    out
}

fn may_set_mode(entries: &[Entry]) -> bool {
    entries.iter().rev().find(|e| e.key == MODE_OPT_IN).is_some_and(|e| e.value == Value::Bool(true))
}

fn settable(def: &KeyDef, entries: &[Entry]) -> bool {
    MODEL_SETTABLE.contains(&def.key) || (def.key == Key::PERMISSIONS_MODE && may_set_mode(entries))
}

fn settable_list(entries: &[Entry]) -> Vec<String> {
    let mut keys: Vec<String> = MODEL_SETTABLE.iter().map(|k| k.to_string()).collect();
    if may_set_mode(entries) {
        keys.push(Key::PERMISSIONS_MODE.into());
    }
    keys
}

fn value_of(def: &KeyDef, entries: &[Entry]) -> SettingValue {
    let found = entries_for(entries, def);
    let (value, sources) = if def.kind.accumulates() {
        (
            Value::Array(found.iter().map(|e| e.value.clone()).collect()),
            found.iter().map(|e| e.origin.to_string()).collect(),
        )
    } else {
        match found.first() {
            Some(e) => (e.value.clone(), vec![e.origin.to_string()]),
            None => {
                let text = def.default.text();
                (serde_json::from_str(&text).unwrap_or(Value::String(text.into_owned())), vec!["default".into()])
            }
        }
    };
    SettingValue {
        key: def.key.to_string(),
        value,
        sources: if sources.is_empty() { vec!["default".into()] } else { sources },
        doc: def.doc.to_string(),
        settable: settable(def, entries),
    }
}

impl ModelSettings {
    /// Checks a change and returns the project's locations it applies to and the value to
    /// write (a number or boolean given as a string, `"5000"`, is read as one).
    fn check(&self, workspace: &Path, key: &str, value: &Value) -> Result<(Locations, Value), SettingsError> {
        let def = find(key)?;
        let (loc, loaded) = (self.load)(workspace);
        if !settable(def, &loaded.entries) {
            let why = if def.key == Key::PERMISSIONS_MODE {
                format!(
                    "the permission mode is the user's choice; they can let you change it with {MODE_OPT_IN} = true \
                     in their own settings"
                )
            } else if def.key == MODE_OPT_IN {
                "only the user's own settings may say whether you change the mode".to_string()
            } else {
                "it decides what tools may do, reach, run or record, or where they send things".to_string()
            };
            return Err(SettingsError::NotSettable {
                key: def.key.to_string(),
                why,
                settable: settable_list(&loaded.entries),
            });
        }
        let bad =
            |message: String| SettingsError::BadValue { key: def.key.to_string(), value: value.to_string(), message };
        let value = match (schema::check(def, value), value) {
            (Ok(()), _) => value.clone(),
            (Err(e), Value::String(text)) => match serde_json::from_str::<Value>(text.trim()) {
                Ok(read) if !read.is_string() && schema::check(def, &read).is_ok() => read,
                _ => return Err(bad(e.to_string())),
            },
            (Err(e), _) => return Err(bad(e.to_string())),
        };
        if def.key == Key::PERMISSIONS_MODE && value.as_str() == Some("bypassPermissions") {
            return Err(bad("only the user can turn permission checks off".into()));
        }
        Ok((loc, value))
    }
}

impl SettingsAccess for ModelSettings {
    fn get(&self, workspace: &Path, key: &str) -> Result<SettingValue, SettingsError> {
        let def = find(key)?;
        let (_, loaded) = (self.load)(workspace);
        Ok(value_of(def, &loaded.entries))
    }

    fn target(&self, workspace: &Path, key: &str, value: &Value) -> Result<PathBuf, SettingsError> {
        Ok(self.check(workspace, key, value)?.0.local_file())
    }

    fn set(&self, workspace: &Path, key: &str, value: &Value) -> Result<SetOutcome, SettingsError> {
        let (loc, written) = self.check(workspace, key, value)?;
        let file = (self.store)(&loc).set(key, &written).map_err(|e| SettingsError::Write(e.to_string()))?;
        let (_, loaded) = (self.load)(workspace);
        let def = find(key)?;
        let applies = entries_for(&loaded.entries, def).first().is_some_and(|e| e.origin.layer == Layer::Local);
        let mode =
            (def.key == Key::PERMISSIONS_MODE).then(|| written.as_str().and_then(PermissionMode::parse)).flatten();
        Ok(SetOutcome { written, file, now: value_of(def, &loaded.entries), applies, mode })
    }
}
