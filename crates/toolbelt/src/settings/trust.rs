//! Project trust: a project's own settings apply only once a person trusted the project.
//!
//! A cloned repository is somebody else's code. Its `.toolbelt/config.toml`, `.mcp.json` or
//! `.claude/settings.json` could start hooks and MCP servers on the first `toolbelt call` in
//! that folder, switch to `bypassPermissions`, turn the sandbox off or the network on. So, as
//! Claude Code and Codex ask before trusting a folder, the settings of a project's own files
//! — toolbelt's project and project-local files, `.mcp.json`, and Claude Code's project files
//! — apply only once the project is trusted (`toolbelt trust`, or the question at a terminal
//! on first use); until then they are ignored with one line saying so and how to trust.
//!
//! Only what could loosen the policy or run code waits for trust. What only tightens it —
//! deny and ask rules, `shell.deny_commands`, `permissions.disable_bypass = true` — applies
//! at once: ignoring it could only make an untrusted project more permissive.
//!
//! Trust comes in two steps. A plain trust lets the project's code run (hooks, servers,
//! providers) and applies its settings that do not loosen the policy; the settings that do
//! ([`super::loosening`]: `bypassPermissions`, allow rules, the sandbox off…) need a consent
//! of their own (`toolbelt trust --allow-loosening`, or a second "y" at the terminal) and
//! are ignored, saying so, without it. The review shows only what would apply: a value the
//! user's own settings override, or a key only the user sets (`audit.*`, `web.*`), is never
//! listed as applying.
//!
//! A trust is recorded with the SHA-256 digest of what it accepted (every waiting entry: key,
//! value and file, and the content of every project file a hook or MCP server command names,
//! such as `hooks/guard.sh`). When a project's hooks, MCP servers or any other accepted
//! setting change, the digest changes and the project needs trusting again — so a hook
//! planted by a command the agent ran is never run silently. One trust covers both ways of
//! reading the project — with Claude Code's files applying whole (`--claude-settings`) and
//! without — so switching between them never reads as a change.
//!
//! User-level and managed settings are the user's own and are trusted as they are. A project
//! setting can never loosen what the user level sets ([`keep_user_floor`]).
//!
//! The store is `trust.json` in toolbelt's state directory (0600, in a 0700 directory): out
//! of every project, and a protected path no tool writes without approval. With `storage.url`
//! (user or managed settings only) it is the `trusted_projects` table of the team's database
//! instead: a trust given once holds on every replica serving the project from the same path,
//! and a database that cannot be read trusts nothing.

mod floor;
mod pending;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use toolbelt_tools::storage::{SharedStorage, TrustTable};

pub use floor::keep_user_floor;
pub use pending::Pending;

use super::{Entry, Layer, Locations};
use crate::settings::schema::Key;

/// One trusted project.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrustRecord {
    /// The digest of what was trusted ([`Pending::digest_for`]).
    pub digest: String,
    /// The digests of the project's other ways of being read (with or without Claude Code's
    /// files applying whole) that the same trust accepted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub other_views: Vec<String>,
    /// Whether the trust included the settings that loosen the policy. Records from before
    /// the distinction did: their review listed those settings with the rest.
    #[serde(default = "included")]
    pub loosening: bool,
    /// When (RFC 3339, UTC).
    pub trusted_at: String,
    /// What was trusted, one line per setting, for `toolbelt trust --list`.
    #[serde(default)]
    pub settings: Vec<String>,
}

fn included() -> bool {
    true
}

impl TrustRecord {
    /// Whether this trust accepted `pending` as it is.
    fn accepts(&self, pending: &Pending) -> bool {
        let digest = pending.digest_for(self.loosening);
        self.digest == digest || self.other_views.iter().any(|d| d == digest)
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    projects: BTreeMap<String, TrustRecord>,
}

/// The trust decisions, in `<state dir>/trust.json`; or, with `storage.url`, in the database a
/// team's replicas share (a trust given once holds for every replica serving the project).
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
    /// The shared database keeping the decisions instead of the file, or why `storage.url`
    /// cannot be used (then no project counts as trusted, rather than each machine deciding).
    shared: Option<Result<TrustTable, String>>,
}

impl TrustStore {
    /// The store of these locations, in the file.
    pub fn at(loc: &Locations) -> Self {
        Self { file: loc.state_dir.join("trust.json"), shared: None }
    }

    /// The store of these locations: in the database `storage` names, if any, else the file.
    /// Nothing is connected until a decision is read or written.
    pub fn of(loc: &Locations, storage: Option<&super::serving::StorageSettings>) -> Self {
        let mut store = Self::at(loc);
        store.shared = storage.map(|s| {
            let password = match &s.password_env {
                Some(var) => Some(std::env::var(var).map_err(|_| {
                    format!("storage.password_env names {var}, which is not set; export the password in it")
                })?),
                None => None,
            };
            SharedStorage::connect_with(&s.url, password.as_deref(), 2, s.ca_file.as_deref())
                .map(|shared| TrustTable::new(Arc::new(shared)))
                .map_err(|e| e.to_string())
        });
        store
    }

    /// The store of these locations in `shared`, a database already set up (the assembly's).
    pub fn in_shared(loc: &Locations, shared: Arc<SharedStorage>) -> Self {
        let mut store = Self::at(loc);
        store.shared = Some(Ok(TrustTable::new(shared)));
        store
    }

    /// The file (without shared storage).
    pub fn file(&self) -> &Path {
        &self.file
    }

    /// Where the decisions are, for people: the file, or the database.
    pub fn place(&self) -> String {
        match &self.shared {
            Some(Ok(table)) => format!("the PostgreSQL database {}", table.server()),
            Some(Err(_)) => "the shared database (storage.url)".into(),
            None => self.file.display().to_string(),
        }
    }

    fn read(&self) -> TrustFile {
        if let Some(shared) = &self.shared {
            let all = shared.as_ref().map_err(Clone::clone).and_then(|t| t.all().map_err(|e| e.to_string()));
            return match all {
                Ok(rows) => TrustFile {
                    projects: rows
                        .into_iter()
                        .filter_map(|(project, record)| match serde_json::from_str(&record) {
                            Ok(record) => Some((project, record)),
                            Err(e) => {
                                tracing::warn!(
                                    "the trust record of {project} in {} is not valid ({e}); it counts as not trusted",
                                    self.place()
                                );
                                None
                            }
                        })
                        .collect(),
                },
                Err(e) => {
                    tracing::warn!(
                        "trust decisions are kept in the shared database, which cannot be read ({e}); no project counts as trusted until it can"
                    );
                    TrustFile::default()
                }
            };
        }
        match std::fs::read_to_string(&self.file) {
            Ok(text) => serde_json::from_str(&text).unwrap_or_else(|e| {
                tracing::warn!("{} is not valid ({e}); no project counts as trusted", self.file.display());
                TrustFile::default()
            }),
            Err(_) => TrustFile::default(),
        }
    }

    fn write(&self, file: &TrustFile) -> std::io::Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        let text = serde_json::to_string_pretty(file).map_err(std::io::Error::other)?;
        let temp = dir.join(format!(".trust.json.{}.tmp", std::process::id()));
        let mut out = std::fs::OpenOptions::new().write(true).create_new(true).mode(0o600).open(&temp)?;
        let written = out.write_all(text.as_bytes()).and_then(|()| out.sync_all());
        drop(out);
        if let Err(e) = written.and_then(|()| std::fs::rename(&temp, &self.file)) {
            let _ = std::fs::remove_file(&temp);
            return Err(e);
        }
        Ok(())
    }

    /// The record of a project, if it was trusted.
    pub fn record(&self, project: &Path) -> Option<TrustRecord> {
        if let Some(shared) = &self.shared {
            let got =
                shared.as_ref().map_err(Clone::clone).and_then(|t| t.get(&key(project)).map_err(|e| e.to_string()));
            return match got {
                Ok(record) => record.and_then(|r| serde_json::from_str(&r).ok()),
                Err(e) => {
                    tracing::warn!(
                        "trust decisions are kept in the shared database, which cannot be read ({e}); this project counts as not trusted until it can"
                    );
                    None
                }
            };
        }
        self.read().projects.remove(&key(project))
    }

    /// Writes one project's record (`None`: forgets it) to the shared database.
    fn put_shared(
        &self,
        table: &Result<TrustTable, String>,
        project: &Path,
        record: Option<&TrustRecord>,
    ) -> std::io::Result<bool> {
        let table = table.as_ref().map_err(|e| std::io::Error::other(e.clone()))?;
        let done = match record {
            Some(record) => {
                let text = serde_json::to_string(record).map_err(std::io::Error::other)?;
                table.put(&key(project), &text).map(|()| true)
            }
            None => table.delete(&key(project)),
        };
        done.map_err(|e| std::io::Error::other(e.to_string()))
    }

    /// Trusts a project as it is now, in each of its `views` (the first is the one the
    /// record lists), with the settings that loosen the policy when `loosening`.
    pub fn trust(&self, project: &Path, views: &[&Pending], loosening: bool) -> std::io::Result<()> {
        let Some((first, others)) = views.split_first() else { return Ok(()) };
        let mut settings = first.summary();
        if loosening {
            settings.extend(first.loosening_summary());
        }
        let mut other_views: Vec<String> = Vec::new();
        for view in others {
            let digest = view.digest_for(loosening);
            if digest != first.digest_for(loosening) && !other_views.iter().any(|d| d == digest) {
                other_views.push(digest.to_string());
            }
        }
        let record = TrustRecord {
            digest: first.digest_for(loosening).to_string(),
            other_views,
            loosening,
            trusted_at: toolbelt_runtime::rfc3339(std::time::SystemTime::now()),
            settings,
        };
        if let Some(shared) = &self.shared {
            return self.put_shared(shared, project, Some(&record)).map(drop);
        }
        let mut file = self.read();
        file.projects.insert(key(project), record);
        self.write(&file)
    }

    /// Forgets a project's trust; whether it was trusted.
    pub fn revoke(&self, project: &Path) -> std::io::Result<bool> {
        if let Some(shared) = &self.shared {
            return self.put_shared(shared, project, None);
        }
        let mut file = self.read();
        let was = file.projects.remove(&key(project)).is_some();
        if was {
            self.write(&file)?;
        }
        Ok(was)
    }

    /// Every trusted project.
    pub fn all(&self) -> Vec<(String, TrustRecord)> {
        self.read().projects.into_iter().collect()
    }
}

fn key(project: &Path) -> String {
    project.display().to_string()
}

/// Whether an entry comes from a project's own files.
pub fn is_project_layer(layer: Layer) -> bool {
    matches!(layer, Layer::Project | Layer::ProjectPlugin | Layer::Local | Layer::ClaudeProject | Layer::ClaudeLocal)
}

/// Whether an entry can only make the policy stricter (so it applies without trust).
pub fn only_restricts(entry: &Entry) -> bool {
    match Key::parse(&entry.key) {
        Some(
            Key::PERMISSIONS_DENY
            | Key::PERMISSIONS_ASK
            | Key::SHELL_DENY_COMMANDS
            | Key::TOOLS_ENABLED
            | Key::TOOLS_DISABLED,
        ) => true,
        Some(Key::PERMISSIONS_DISABLE_BYPASS) => entry.value.as_bool() == Some(true),
        _ => false,
    }
}

/// Whether the project's settings apply.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Trust {
    /// Its files set nothing that needs trust.
    #[default]
    NotNeeded,
    /// A person trusted it as it is now.
    Trusted {
        /// Whether the trust included the settings that loosen the policy (without, they
        /// are ignored).
        loosening: bool,
    },
    /// Its settings wait for trust; `changed` when it was trusted before and they changed.
    Untrusted {
        /// What waits.
        pending: Pending,
        /// Whether an earlier trust no longer matches.
        changed: bool,
    },
}

impl Trust {
    /// Decides for `project`, whose files set `pending`, from the store.
    pub fn decide(pending: &Pending, project: &Path, store: &TrustStore) -> Trust {
        if pending.is_empty() {
            return Trust::NotNeeded;
        }
        match store.record(project) {
            Some(record) if record.accepts(pending) => Trust::Trusted { loosening: record.loosening },
            Some(_) => Trust::Untrusted { pending: pending.clone(), changed: true },
            None => Trust::Untrusted { pending: pending.clone(), changed: false },
        }
    }

    /// The one line said when the project's settings are ignored.
    pub fn notice(&self, project: &Path) -> Option<String> {
        let Trust::Untrusted { pending, changed } = self else { return None };
        let why = if *changed { "has changed since you trusted it" } else { "is not trusted yet" };
        let loosening = match pending.loosening.len() {
            0 => String::new(),
            n => format!(" (with `--allow-loosening` for the {n} that loosen the policy)"),
        };
        Some(format!(
            "this project's own settings ({}) are ignored: the project at {} {why}; review them with `toolbelt \
             trust --show` and apply them with `toolbelt trust`{loosening} (its deny and ask rules apply already)",
            pending.gist(),
            project.display()
        ))
    }
}

/// How a project's own settings stood before toolbelt wrote to them (the `Config` tool's
/// change, approved by a person).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BeforeWrite {
    /// They waited for trust: one approved change does not trust the rest.
    Waiting,
    /// They applied (the project was trusted, or set nothing that needed trust).
    Applied {
        /// Whether what loosens the policy may apply after the write: the trust included it,
        /// or there was none of it, so anything loosening now is the change just approved.
        loosening: bool,
    },
}

impl BeforeWrite {
    /// How `loaded`'s project stands.
    pub fn of(loaded: &super::Loaded) -> Self {
        match loaded.trust {
            Trust::Untrusted { .. } => BeforeWrite::Waiting,
            Trust::NotNeeded => BeforeWrite::Applied { loosening: true },
            Trust::Trusted { loosening } => {
                BeforeWrite::Applied { loosening: loosening || loaded.pending.loosening.is_empty() }
            }
        }
    }
}

/// Keeps a project's settings applying after toolbelt itself wrote to them: when they
/// applied `before`, the project is trusted as it is now, in each of its `views`.
pub fn refresh_after_write(store: &TrustStore, project: &Path, before: BeforeWrite, views: &[&Pending]) {
    let BeforeWrite::Applied { loosening } = before else { return };
    if let Err(e) = store.trust(project, views, loosening) {
        tracing::warn!("could not keep {} trusted after writing its settings: {e}", project.display());
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::json;

    use super::*;
    use crate::settings::Origin;

    fn entry(layer: Layer, key: &str, value: serde_json::Value) -> Entry {
        Entry { key: key.into(), value, origin: Origin::file(layer, Path::new("/p/.toolbelt/config.toml"), Some(1)) }
    }

    #[test]
    fn the_store_records_revokes_and_decides() {
        let dir = tempfile::tempdir().unwrap();
        let store = TrustStore { file: dir.path().join("state/trust.json"), shared: None };
        let p = Path::new("/p");
        let pending = |entries: &[Entry]| Pending::of(entries, p);
        let entries = vec![
            entry(Layer::Project, "hooks.SessionStart", json!({"hooks": []})),
            entry(Layer::Project, "sandbox.mode", json!("danger-full-access")),
        ];
        assert!(matches!(Trust::decide(&pending(&entries), p, &store), Trust::Untrusted { changed: false, .. }));
        store.trust(p, &[&pending(&entries)], true).unwrap();
        assert_eq!(Trust::decide(&pending(&entries), p, &store), Trust::Trusted { loosening: true });
        let mode = std::fs::metadata(store.file()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let more = vec![entries[0].clone(), entries[1].clone(), entry(Layer::Project, "sandbox.network", json!(true))];
        assert!(matches!(Trust::decide(&pending(&more), p, &store), Trust::Untrusted { changed: true, .. }));
        // Trusted without the loosening settings: one added later changes nothing trusted.
        store.trust(p, &[&pending(&entries)], false).unwrap();
        assert_eq!(Trust::decide(&pending(&more), p, &store), Trust::Trusted { loosening: false });
        // Another view of the project trusted at the same time is accepted too.
        let other = vec![entries[0].clone(), entry(Layer::ClaudeProject, "hooks.PreToolUse", json!({"hooks": []}))];
        store.trust(p, &[&pending(&entries), &pending(&other)], false).unwrap();
        assert_eq!(Trust::decide(&pending(&other), p, &store), Trust::Trusted { loosening: false });
        assert!(store.revoke(p).unwrap());
        assert!(matches!(Trust::decide(&pending(&entries), p, &store), Trust::Untrusted { changed: false, .. }));
    }

    #[test]
    fn a_record_from_before_the_two_consents_keeps_its_meaning() {
        let old = r#"{"digest": "abc", "trusted_at": "2025-01-01T00:00:00Z", "settings": []}"#;
        let record: TrustRecord = serde_json::from_str(old).unwrap();
        assert!(record.loosening && record.other_views.is_empty());
    }
}
