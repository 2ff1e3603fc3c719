//! "Always allow": rules a person chose to allow for good, written to a settings file keeping
//! its comments and layout, atomically (a temp file beside it, then a rename), so a crash
//! never leaves it half-written. Rules approved in a session that works elsewhere (an MCP
//! client whose roots are another project) go to that project's file.
//!
//! # Where grants live
//!
//! A person's "always" goes to `grants.toml` in the project's directory under the user's
//! state directory (`$XDG_STATE_HOME/toolbelt/projects/<project>-<hash>/grants.toml`, 0600 in
//! a 0700 directory), not to the project's `.toolbelt/config.local.toml`. A file inside the
//! project is the repository's to ship: it applies only once the project is trusted, so a
//! grant written there did nothing in a project nobody trusted — and trusting the project
//! to make it count would also trust everything else the repository ships. A file in the
//! state directory is the user's alone: no clone carries one, no tool writes it without an
//! approval (the state directory is a protected path), and no sandboxed command can reach
//! it. So grants apply in the next session, trusted project or not, and hold nothing but
//! allow rules ([`grant_entries`]).
//!
//! The `Config` tool's writes still go to the project-local file ([`LocalRuleStore::new`]),
//! where they wait for trust like the rest of the project's settings.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use toml_edit::{Array, DocumentMut, Item, Table, Value};
use toolbelt_policy::{RuleStore, RuleStoreError};

use super::{Entry, Layer, Problem};
use crate::settings::schema::Key;

/// Why allow rules could not be added to a settings file (which is then left as it was).
#[derive(Debug, thiserror::Error)]
#[error("cannot update {}: {problem}", .file.display())]
pub struct StoreError {
    /// The settings file.
    pub file: PathBuf,
    /// What went wrong.
    pub problem: StoreProblem,
}

/// What went wrong updating a settings file.
#[derive(Debug, thiserror::Error)]
pub enum StoreProblem {
    /// Reading, creating its directory or writing it failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// It is not valid TOML.
    #[error(transparent)]
    Toml(#[from] toml_edit::TomlError),
    /// `permissions` is there but is not a table.
    #[error("`permissions` is not a table")]
    PermissionsNotATable,
    /// `permissions.allow` is there but is not an array.
    #[error("`permissions.allow` is not an array")]
    AllowNotAnArray,
    /// A key's table is there but is not a table.
    #[error("`{0}` is not a table")]
    NotATable(String),
    /// A value TOML cannot hold here (null, an object).
    #[error("{0} cannot be written as a setting")]
    Unsupported(String),
}

/// Makes the store of another project (given its directory).
type StoreFor = Arc<dyn Fn(&Path) -> LocalRuleStore + Send + Sync>;

/// Writes allow rules to `<project>/.toolbelt/config.local.toml` (and makes sure git ignores
/// that file).
#[derive(Clone)]
pub struct LocalRuleStore {
    file: PathBuf,
    /// The user's own file outside every project (the grants): made owner-only, never added
    /// to a `.gitignore`.
    private: bool,
    after_write: Option<Arc<dyn Fn() + Send + Sync>>,
    /// The workspace this store's file serves, and how to reach the store of a session
    /// working elsewhere.
    elsewhere: Option<(PathBuf, StoreFor)>,
}

impl std::fmt::Debug for LocalRuleStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalRuleStore").field("file", &self.file).finish()
    }
}

impl LocalRuleStore {
    /// A store writing to `file`.
    pub fn new(file: impl Into<PathBuf>) -> Self {
        Self { file: file.into(), private: false, after_write: None, elsewhere: None }
    }

    /// A store of a person's "always" grants for one project, writing to `file` (in the
    /// user's state directory, [`crate::settings::Locations::grants_file`]) owner-only.
    pub fn grants(file: impl Into<PathBuf>) -> Self {
        Self { private: true, ..Self::new(file) }
    }

    /// A store of the user's own settings file (`~/.config/toolbelt/config.toml`): made
    /// owner-only when missing, never added to a `.gitignore`.
    pub fn user_settings(file: impl Into<PathBuf>) -> Self {
        Self { private: true, ..Self::new(file) }
    }

    /// Runs `after` once rules were written (to keep the project's trust, which covers the file).
    pub fn after_write(mut self, after: impl Fn() + Send + Sync + 'static) -> Self {
        self.after_write = Some(Arc::new(after));
        self
    }

    /// This store serves sessions whose first workspace root is `workspace`; rules approved
    /// in a session working elsewhere go to the store `store_for` makes for that root's
    /// project ([`crate::settings::project_root`]).
    pub fn elsewhere(
        mut self,
        workspace: impl Into<PathBuf>,
        store_for: impl Fn(&Path) -> LocalRuleStore + Send + Sync + 'static,
    ) -> Self {
        self.elsewhere = Some((workspace.into(), Arc::new(store_for)));
        self
    }

    /// The store for rules approved in a session whose first workspace root is `workspace`.
    fn for_workspace(&self, workspace: &Path) -> LocalRuleStore {
        match &self.elsewhere {
            Some((mine, store_for)) if mine != workspace => store_for(&crate::settings::project_root(workspace)),
            _ => self.clone(),
        }
    }

    /// Adds the rules not already in `permissions.allow`; returns the file.
    pub fn add(&self, rules: &[String]) -> Result<PathBuf, StoreError> {
        self.edit(|doc| {
            let permissions = doc.entry("permissions").or_insert_with(|| Item::Table(Table::new()));
            let Some(permissions) = permissions.as_table_like_mut() else {
                return Err(StoreProblem::PermissionsNotATable);
            };
            let allow = permissions.entry("allow").or_insert(Item::Value(Value::Array(Array::new())));
            let Some(allow) = allow.as_array_mut() else {
                return Err(StoreProblem::AllowNotAnArray);
            };
            for rule in rules {
                if !allow.iter().any(|v| v.as_str() == Some(rule.as_str())) {
                    allow.push(rule.as_str());
                }
            }
            if allow.len() > 1 {
                allow.iter_mut().for_each(|v| v.decor_mut().set_prefix("\n  "));
                allow.set_trailing("\n");
                allow.set_trailing_comma(true);
            }
            Ok(())
        })
    }

    /// Sets the dotted `key` (`runtime.output_budget`) to `value`, creating its tables as
    /// needed and keeping the comments around a value it replaces; returns the file.
    pub fn set(&self, key: &str, value: &serde_json::Value) -> Result<PathBuf, StoreError> {
        let value = toml_value(value).ok_or_else(|| StoreError {
            file: self.file.clone(),
            problem: StoreProblem::Unsupported(value.to_string()),
        })?;
        self.edit(|doc| {
            let mut parts: Vec<&str> = key.split('.').collect();
            let name = parts.pop().unwrap_or(key);
            let mut table = doc.as_table_mut() as &mut dyn toml_edit::TableLike;
            let mut path = String::new();
            for part in parts {
                path = if path.is_empty() { part.to_string() } else { format!("{path}.{part}") };
                let item = table.entry(part).or_insert_with(|| {
                    let mut t = Table::new();
                    t.set_implicit(true);
                    Item::Table(t)
                });
                table = item.as_table_like_mut().ok_or_else(|| StoreProblem::NotATable(path.clone()))?;
            }
            match table.get_mut(name) {
                Some(Item::Value(old)) => {
                    let decor = old.decor().clone();
                    *old = value;
                    *old.decor_mut() = decor;
                }
                _ => {
                    table.insert(name, Item::Value(value));
                }
            }
            Ok(())
        })
    }

    /// Reads the file (none is an empty one), lets `change` edit it, and writes it back
    /// atomically; the file is left as it was when anything fails.
    fn edit(&self, change: impl FnOnce(&mut DocumentMut) -> Result<(), StoreProblem>) -> Result<PathBuf, StoreError> {
        let fail = |problem: StoreProblem| StoreError { file: self.file.clone(), problem };
        let text = match std::fs::read_to_string(&self.file) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(fail(e.into())),
        };
        let mut doc: DocumentMut = text.parse().map_err(|e: toml_edit::TomlError| fail(e.into()))?;
        change(&mut doc).map_err(fail)?;
        let dir = self.file.parent().unwrap_or(Path::new("."));
        if self.private {
            private_file(&self.file).map_err(|e| fail(e.into()))?;
        } else {
            std::fs::create_dir_all(dir).map_err(|e| fail(e.into()))?;
        }
        write_atomically(&self.file, doc.to_string().as_bytes()).map_err(|e| fail(e.into()))?;
        if !self.private {
            ignore_in_git(dir, &self.file);
        }
        if let Some(after) = &self.after_write {
            after();
        }
        Ok(self.file.clone())
    }
}

/// A JSON scalar or list of scalars as a TOML value (`None` for null and objects, which no
/// settable key takes).
fn toml_value(value: &serde_json::Value) -> Option<Value> {
    use serde_json::Value as Json;
    Some(match value {
        Json::Bool(b) => Value::from(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => Value::from(i),
            None => Value::from(n.as_f64()?),
        },
        Json::String(s) => Value::from(s.as_str()),
        Json::Array(items) => Value::Array(items.iter().map(toml_value).collect::<Option<Array>>()?),
        Json::Null | Json::Object(_) => return None,
    })
}

impl RuleStore for LocalRuleStore {
    fn add_allow_rules(&self, rules: &[String], workspace: &Path) -> Result<String, RuleStoreError> {
        let store = self.for_workspace(workspace);
        let file = store.add(rules)?;
        let label = if store.private { "grants" } else { "project-local" };
        Ok(format!("{label} {}", file.display()))
    }
}

/// The file replaced atomically (temp file, fsync, rename; its permissions kept), with the
/// file tools' own writer.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().ok_or_else(|| std::io::Error::other("the settings path has no file name"))?;
    let root = cap_std::fs::Dir::open_ambient_dir(dir, cap_std::ambient_authority())?;
    toolbelt_tools::files::write_atomic(&root, Path::new(name), bytes)
}

/// Makes `file`'s directory (0700, with the missing ones above it) and `file` itself (empty,
/// 0600) when they are not there, so its atomic replacement keeps the owner-only mode.
fn private_file(file: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    let dir = file.parent().unwrap_or(Path::new("."));
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    match std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(file) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Reads a grants file into its `permissions.allow` entries; any other key is a problem
/// (the file holds a person's "always" rules, nothing else).
pub(super) fn grant_entries(file: &Path, text: &str, out: &mut Vec<Entry>, problems: &mut Vec<Problem>) {
    let mut entries = Vec::new();
    super::toml_file::entries(Layer::Grants, file, text, &mut entries, problems);
    for entry in entries {
        if entry.key == Key::PERMISSIONS_ALLOW {
            out.push(entry);
        } else {
            problems.push(Problem {
                origin: entry.origin,
                key: entry.key,
                message: "this file keeps only the rules you allowed \"always\" (permissions.allow); put other \
                          settings in your own settings file (~/.config/toolbelt/config.toml)"
                    .into(),
            });
        }
    }
}

/// Adds the file's name to `.gitignore` beside it, when not there yet (personal settings are
/// never meant to be committed). Best effort: a failure is only logged.
fn ignore_in_git(dir: &Path, file: &Path) {
    let Some(name) = file.file_name().and_then(|n| n.to_str()) else { return };
    let ignore = dir.join(".gitignore");
    let current = std::fs::read_to_string(&ignore).unwrap_or_default();
    if current.lines().any(|l| l.trim() == name || l.trim() == format!("/{name}")) {
        return;
    }
    let mut text = current;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(name);
    text.push('\n');
    if let Err(e) = std::fs::write(&ignore, text) {
        tracing::warn!("cannot add {name} to {}: {e}", ignore.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_are_added_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".toolbelt/config.local.toml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(
            &file,
            "# my personal settings\n[permissions]\n# things I trust\nallow = [\"Bash(ls *)\"]\nmode = \"acceptEdits\" # yes\n",
        )
        .unwrap();
        let store = LocalRuleStore::new(&file);
        store.add(&["Bash(cargo test *)".into(), "Bash(ls *)".into()]).unwrap();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text,
            "# my personal settings\n[permissions]\n# things I trust\nallow = [\n  \"Bash(ls *)\",\n  \"Bash(cargo test *)\",\n]\nmode = \"acceptEdits\" # yes\n"
        );
        assert_eq!(std::fs::read_to_string(dir.path().join(".toolbelt/.gitignore")).unwrap(), "config.local.toml\n");

        // A missing file is created; a second add of the same rule changes nothing.
        let other = dir.path().join("new/config.local.toml");
        LocalRuleStore::new(&other).add(&["Edit(./src/main.rs)".into()]).unwrap();
        LocalRuleStore::new(&other).add(&["Edit(./src/main.rs)".into()]).unwrap();
        assert_eq!(std::fs::read_to_string(&other).unwrap(), "[permissions]\nallow = [\"Edit(./src/main.rs)\"]\n");
    }

    #[test]
    fn rules_from_a_session_elsewhere_go_to_its_project() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (here, there, data_only) = (base.join("here"), base.join("there"), base.join("scratch"));
        std::fs::create_dir_all(there.join(".git")).unwrap();
        std::fs::create_dir_all(there.join("src/deep")).unwrap();
        std::fs::create_dir_all(data_only.join(".toolbelt/sessions")).unwrap();
        std::fs::create_dir_all(&here).unwrap();
        let store = LocalRuleStore::new(here.join(".toolbelt/config.local.toml"))
            .elsewhere(&here, |project| LocalRuleStore::new(project.join(".toolbelt/config.local.toml")));
        store.add_allow_rules(&["Read".into()], &here).unwrap();
        assert!(here.join(".toolbelt/config.local.toml").is_file());
        let place = store.add_allow_rules(&["Edit(./a.txt)".into()], &there.join("src/deep")).unwrap();
        assert_eq!(place, format!("project-local {}", there.join(".toolbelt/config.local.toml").display()));
        assert!(std::fs::read_to_string(there.join(".toolbelt/config.local.toml")).unwrap().contains("Edit(./a.txt)"));
        // A directory holding only session files is no project: its parent has none either,
        // so the rules go beside the workspace itself.
        assert_eq!(crate::settings::project_root(&data_only), data_only);
        std::fs::write(data_only.join(".toolbelt/config.toml"), "").unwrap();
        assert_eq!(crate::settings::project_root(&data_only.join(".toolbelt/sessions")), data_only);
    }

    #[test]
    fn values_are_set_keeping_comments() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.local.toml");
        std::fs::write(&file, "# mine\n[runtime]\n# how much output\noutput_budget = 100 # small\n").unwrap();
        let store = LocalRuleStore::new(&file);
        store.set("runtime.output_budget", &serde_json::json!(5000)).unwrap();
        store.set("runtime.default_timeout", &serde_json::json!(60)).unwrap();
        store.set("web.search.provider", &serde_json::json!("brave")).unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "# mine\n[runtime]\n# how much output\noutput_budget = 5000 # small\ndefault_timeout = 60\n\n[web.search]\nprovider = \"brave\"\n"
        );
        let err = store.set("runtime.output_budget.deeper", &serde_json::json!(1)).unwrap_err().to_string();
        assert!(err.contains("`runtime.output_budget` is not a table"), "{err}");
        assert!(store.set("runtime.x", &serde_json::json!(null)).is_err());
    }

    #[test]
    fn grants_are_owner_only_outside_git_and_hold_only_allow_rules() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("state/projects/p-0123/grants.toml");
        let store = LocalRuleStore::grants(&file);
        let place = store.add_allow_rules(&["Bash(make *)".into()], dir.path()).unwrap();
        assert_eq!(place, format!("grants {}", file.display()));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "[permissions]\nallow = [\"Bash(make *)\"]\n");
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(&file), mode(file.parent().unwrap())), (0o600, 0o700));
        assert!(!file.parent().unwrap().join(".gitignore").exists());
        let (mut entries, mut problems) = (Vec::new(), Vec::new());
        let text = "[permissions]\nallow = [\"Read\"]\nmode = \"bypassPermissions\"\n";
        grant_entries(&file, text, &mut entries, &mut problems);
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0].origin.layer, Layer::Grants);
        assert_eq!(problems.len(), 1);
        assert!(problems[0].to_string().contains(":3: permissions.mode: this file keeps only"), "{problems:?}");
    }

    #[test]
    fn a_broken_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.local.toml");
        std::fs::write(&file, "[permissions\n").unwrap();
        let err = LocalRuleStore::new(&file).add(&["Read".into()]).unwrap_err().to_string();
        assert!(err.starts_with("cannot update"), "{err}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "[permissions\n");
    }
}
