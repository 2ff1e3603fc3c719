//! The settings a session runs under, as the `Config` tool reads and changes them.
//!
//! Settings files, their layers and their schema belong to whoever builds the runtime (the
//! `toolbelt` crate for the CLI and the MCP server). It puts a [`SettingsAccess`] among the
//! services ([`SettingsService`]); tools never open a settings file themselves. Reading any
//! setting is harmless; changing one goes to the project-local file, only for the keys the
//! implementation lets a model set, and the `Config` tool declares that write so the
//! permission engine judges it like any other (it is a protected file: someone approves).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::PermissionMode;

/// One setting as it stands: its value, and where that value comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SettingValue {
    /// The dotted key (`runtime.output_budget`).
    pub key: String,
    /// The value in force: the winning layer's for a single value, every layer's items for a
    /// list, the default when nothing sets it.
    pub value: Value,
    /// Where the value comes from (`project-local /p/.toolbelt/config.local.toml:3`,
    /// `flag --mode`, `default`); for a list, where each item comes from.
    pub sources: Vec<String>,
    /// What the setting does.
    pub doc: String,
    /// Whether a model may change it with `Config`.
    pub settable: bool,
}

/// What a change did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SetOutcome {
    /// The value written (a number given as text is written as a number).
    pub written: Value,
    /// The file it was written to.
    pub file: PathBuf,
    /// The setting as it then stands.
    pub now: SettingValue,
    /// Whether the written value is the one in force (no higher layer overrides it).
    pub applies: bool,
    /// The permission mode written, when the setting is the permission mode (a session can
    /// switch to it at once).
    pub mode: Option<PermissionMode>,
}

/// Why a setting could not be read or changed. The messages say what to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// No such key.
    #[error("there is no setting `{key}`{}", suggestion.as_ref().map(|s| format!("; did you mean `{s}`?")).unwrap_or_default())]
    UnknownKey {
        /// The key asked for.
        key: String,
        /// The nearest key there is.
        suggestion: Option<String>,
    },
    /// The key exists, but a model may not change it.
    #[error("`{key}` can only be changed by the user ({why}); settings you may change: {}", settable.join(", "))]
    NotSettable {
        /// The key.
        key: String,
        /// Why not.
        why: String,
        /// The keys a model may change here.
        settable: Vec<String>,
    },
    /// The value does not fit the key.
    #[error("`{key}` cannot be set to {value}: {message}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given, as JSON.
        value: String,
        /// What the key takes.
        message: String,
    },
    /// The settings file could not be updated (it is left as it was).
    #[error("{0}")]
    Write(String),
}

/// Reading and changing settings, for a session working in `workspace` (its first workspace
/// root, which decides the project and so the files).
pub trait SettingsAccess: Send + Sync {
    /// The setting `key` as it stands now (files are read again: a change made a moment ago
    /// shows).
    fn get(&self, workspace: &Path, key: &str) -> Result<SettingValue, SettingsError>;

    /// Checks that a model may set `key` to `value` and returns the file the change would be
    /// written to — what the permission engine is asked about before [`SettingsAccess::set`].
    fn target(&self, workspace: &Path, key: &str, value: &Value) -> Result<PathBuf, SettingsError>;

    /// Writes `key = value` to the project-local file (atomically, keeping its comments); the
    /// setting as it then stands may still come from a higher layer.
    fn set(&self, workspace: &Path, key: &str, value: &Value) -> Result<SetOutcome, SettingsError>;
}

/// The runtime's [`SettingsAccess`], as a service tools ask for
/// (`cx.service::<SettingsService>()`).
#[derive(Clone)]
pub struct SettingsService(pub Arc<dyn SettingsAccess>);

impl std::fmt::Debug for SettingsService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SettingsService")
    }
}
