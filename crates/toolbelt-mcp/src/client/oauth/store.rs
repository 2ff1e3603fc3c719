//! Where an upstream server's OAuth tokens are kept: one file per server, owner-only; or, on a
//! team (`storage.url`), one row per server in the shared database, under the file's name
//! ([`SharedTokens`]), so one sign-in serves every replica and refreshes take turns across them.
//!
//! `<dir>/<name>-<digest of the url>.json` under toolbelt's state directory (outside every
//! project, and out of the sandbox's reach). The digest binds the tokens to the address they
//! were issued for: a project that names another address `github` gets a file of its own, and
//! never the tokens.
//!
//! The file holds the tokens (rmcp's [`StoredCredentials`]), the clients registered with each
//! authorization server (by issuer: a registration is never shown to another one), and the
//! scopes the server asked for since the last sign-in. It is written whole, to a new file
//! that replaces the old one (0600, in a 0700 directory); a file that another user owns, that
//! others may read, or that is a link is refused. Refreshes of the same tokens, from several
//! toolbelt processes, take turns by a lock on `<file>.lock`.

use std::collections::BTreeMap;
use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io::{Read as _, Write as _};
use std::os::unix::fs::{DirBuilderExt as _, MetadataExt as _, OpenOptionsExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, PoisonError};

use nix::fcntl::{Flock, FlockArg};
use rmcp::transport::auth::{AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials};

use serde::{Deserialize, Serialize};
use url::Url;

/// A client registered with one authorization server (its `Debug` leaves the secret out).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    /// Its client id.
    pub client_id: String,
    /// Its secret, when the server gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The address it was registered to be sent back to.
    pub redirect_uri: String,
}

impl std::fmt::Debug for Registration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registration")
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "[REDACTED]"))
            .field("redirect_uri", &self.redirect_uri)
            .finish()
    }
}

/// What the file holds (its `Debug` leaves the tokens out).
#[derive(Default, Clone, Serialize, Deserialize)]
pub(crate) struct Saved {
    /// The server's address, for whoever reads the file.
    #[serde(default)]
    pub(crate) url: String,
    /// The tokens, once signed in.
    #[serde(default)]
    pub(crate) credentials: Option<StoredCredentials>,
    /// Registered clients, by the issuer of their authorization server.
    #[serde(default)]
    pub(crate) registrations: BTreeMap<String, Registration>,
    /// Scopes the server asked for (a call refused with `insufficient_scope`) since.
    #[serde(default)]
    pub(crate) wanted_scopes: Vec<String>,
}

impl Saved {
    /// Whether it holds tokens.
    pub(crate) fn has_tokens(&self) -> bool {
        self.credentials.as_ref().is_some_and(|c| c.token_response.is_some())
    }
}

/// A file's size and modification time, to tell whether it changed since it was read.
type Stamp = (u64, i64, i64);

impl std::fmt::Debug for Saved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Saved")
            .field("url", &self.url)
            .field("credentials", &self.credentials)
            .field("registrations", &self.registrations.keys())
            .field("wanted_scopes", &self.wanted_scopes)
            .finish()
    }
}

/// Tokens kept where a team's replicas all read them (the binary's: its shared database), each
/// server's under its file's name. The methods block; they may be called from a thread that
/// drives an async runtime, and implementations must cope (run off it).
pub trait SharedTokens: Send + Sync + std::fmt::Debug {
    /// Where they are, for people.
    fn place(&self) -> String;
    /// What is kept under `key`.
    fn read(&self, key: &str) -> Result<Option<String>, String>;
    /// Keeps `value` under `key`, for the server at `url`.
    fn write(&self, key: &str, url: &str, value: &str) -> Result<(), String>;
    /// Forgets `key`'s tokens; `false` when there were none.
    fn delete(&self, key: &str) -> Result<bool, String>;
    /// Waits for the turn at changing `key`'s tokens, across every replica; held until the
    /// value returned is dropped (from any thread).
    fn lock(&self, key: &str) -> Result<Box<dyn Send>, String>;
}

/// Where upstream servers' tokens are kept: files in a directory, or, on a team, the shared
/// database ([`SharedTokens`]), where one sign-in serves every replica.
#[derive(Debug, Clone)]
pub struct TokenPlace {
    /// The directory of the files (toolbelt's state directory's `oauth/`).
    pub dir: PathBuf,
    /// What keeps them instead, if anything.
    pub shared: Option<Arc<dyn SharedTokens>>,
}

impl TokenPlace {
    /// The tokens of the server `name` at `url`.
    pub fn file(&self, name: &str, url: &Url) -> TokenFile {
        let mut file = TokenFile::new(&self.dir, name, url);
        file.shared.clone_from(&self.shared);
        file
    }
}

/// One server's token file (or, on a team, its row in the shared database).
pub struct TokenFile {
    path: PathBuf,
    url: String,
    /// The file as last read, with the size and time it had then.
    cache: Mutex<Option<(Stamp, Saved)>>,
    /// What keeps the tokens instead of the file, under the file's name.
    shared: Option<Arc<dyn SharedTokens>>,
    /// The shared tokens as last read, and when.
    shared_cache: Mutex<Option<(std::time::Instant, Saved)>>,
    /// Bumped by every turn, write and forget: a read begun before one is not cached.
    shared_generation: AtomicU64,
}

/// How long shared tokens read once are used without reading them again.
const SHARED_FRESH: std::time::Duration = std::time::Duration::from_secs(5);

/// A turn at changing the tokens: a lock on the file's lock file, or in the database.
enum Turn {
    File(#[allow(dead_code)] Flock<File>),
    Shared(#[allow(dead_code)] Box<dyn Send>),
}

impl TokenFile {
    /// The file of the server `name` at `url`, in `dir`.
    pub fn new(dir: &Path, name: &str, url: &Url) -> Self {
        let digest = toolbelt_core::sha256_hex(url.as_str().as_bytes());
        let name: String = name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' }).collect();
        Self {
            path: dir.join(format!("{name}-{}.json", &digest[..16])),
            url: url.to_string(),
            cache: Mutex::new(None),
            shared: None,
            shared_cache: Mutex::new(None),
            shared_generation: AtomicU64::new(0),
        }
    }

    /// Where it is (the file's path; on a team its name is the row's key).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the tokens are, for people: the file, or the database.
    pub fn place(&self) -> String {
        match &self.shared {
            Some(shared) => shared.place(),
            None => self.path.display().to_string(),
        }
    }

    /// Forgets the shared tokens read, and keeps a read under way from being cached.
    fn forget_read(&self) {
        self.shared_generation.fetch_add(1, Ordering::AcqRel);
        *self.shared_cache.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// The row's key in the shared database: the file's name without `.json`.
    fn key(&self) -> String {
        file_name(&self.path).trim_end_matches(".json").to_string()
    }

    /// What it holds (nothing when there is no file yet).
    pub(crate) fn read(&self) -> Result<Saved, String> {
        if let Some(table) = &self.shared {
            // Read again after a few seconds, or once a turn is taken (a refresh must see the
            // tokens another replica's refresh just kept): not on every request.
            if let Some((read_at, saved)) = self.shared_cache.lock().unwrap_or_else(PoisonError::into_inner).as_ref()
                && read_at.elapsed() < SHARED_FRESH
            {
                return Ok(saved.clone());
            }
            // A read that a turn, a write or a forget overtook is not kept: it may be older.
            let generation = self.shared_generation.load(Ordering::Acquire);
            let key = self.key();
            let text = table.read(&key).map_err(|e| format!("cannot read the tokens: {e}"))?;
            let saved: Saved = match text {
                None => Saved::default(),
                Some(text) => serde_json::from_str(&text).map_err(|e| {
                    format!("the tokens kept for {key} in {} are damaged ({e}); sign in again", self.place())
                })?,
            };
            let mut cache = self.shared_cache.lock().unwrap_or_else(PoisonError::into_inner);
            if self.shared_generation.load(Ordering::Acquire) == generation {
                *cache = Some((std::time::Instant::now(), saved.clone()));
            }
            return Ok(saved);
        }
        let file = match OpenOptions::new().read(true).custom_flags(libc_o_nofollow()).open(&self.path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Saved::default()),
            Err(e) => return Err(format!("cannot open {}: {e}", self.path.display())),
        };
        let meta = file.metadata().map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        if !meta.is_file() || meta.uid() != nix::unistd::geteuid().as_raw() || meta.mode() & 0o077 != 0 {
            return Err(format!(
                "{} is not a file only you can read, so its tokens are not used; remove it and sign in again",
                self.path.display()
            ));
        }
        let stamp = (meta.len(), meta.mtime(), meta.mtime_nsec());
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((seen, saved)) = cache.as_ref()
            && *seen == stamp
        {
            return Ok(saved.clone());
        }
        let mut text = String::new();
        (&file).read_to_string(&mut text).map_err(|e| format!("cannot read {}: {e}", self.path.display()))?;
        let saved: Saved = serde_json::from_str(&text)
            .map_err(|e| format!("{} is damaged ({e}); remove it and sign in again", self.path.display()))?;
        *cache = Some((stamp, saved.clone()));
        Ok(saved)
    }

    /// Changes what it holds: reads it, applies `change`, and writes it whole, holding the
    /// lock refreshes take, so a change never writes back tokens a refresh replaced meanwhile.
    pub(crate) fn update(&self, change: impl FnOnce(&mut Saved)) -> Result<(), String> {
        let _lock = self.lock()?;
        self.update_held(change)
    }

    /// [`TokenFile::update`] for a caller that holds the lock already (rmcp saves a refresh
    /// under it, and a second lock of the same file would wait for ever).
    fn update_held(&self, change: impl FnOnce(&mut Saved)) -> Result<(), String> {
        // A change starts from what is kept now, never from a read cached before.
        self.forget_read();
        let mut saved = self.read()?;
        saved.url.clone_from(&self.url);
        change(&mut saved);
        self.write(&saved)
    }

    fn write(&self, saved: &Saved) -> Result<(), String> {
        if let Some(table) = &self.shared {
            let text = serde_json::to_string(saved).map_err(|e| format!("cannot write the tokens: {e}"))?;
            let key = self.key();
            self.forget_read();
            let written = table.write(&key, &self.url, &text).map_err(|e| format!("cannot save the tokens: {e}"));
            self.forget_read();
            return written;
        }
        let failed = |e: std::io::Error| format!("cannot save the tokens in {}: {e}", self.path.display());
        let dir = self.path.parent().unwrap_or(Path::new("."));
        DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(failed)?;
        std::fs::set_permissions(dir, Permissions::from_mode(0o700)).map_err(failed)?;
        let text = serde_json::to_vec_pretty(saved).map_err(|e| format!("cannot write the tokens: {e}"))?;
        // Unique to this write, so two writers never share (or remove) one temp file.
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{}.{}.{n}.tmp", file_name(&self.path), std::process::id()));
        let written = (|| {
            let mut file = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
            file.write_all(&text)?;
            file.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written.map_err(failed)?;
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = None;
        Ok(())
    }

    /// Forgets everything kept for the server: its tokens, and toolbelt's registrations with
    /// its authorization servers; `false` when there were no tokens.
    pub fn forget(&self) -> Result<bool, String> {
        let had = self.read().is_ok_and(|s| s.has_tokens());
        // The lock file stays: a process holding it keeps excluding the others.
        let _lock = self.lock()?;
        if let Some(table) = &self.shared {
            let key = self.key();
            self.forget_read();
            table.delete(&key).map_err(|e| format!("cannot forget the tokens: {e}"))?;
            self.forget_read();
            return Ok(had);
        }
        match std::fs::remove_file(&self.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(format!("cannot remove {}: {e}", self.path.display()));
            }
            _ => {}
        }
        *self.cache.lock().unwrap_or_else(PoisonError::into_inner) = None;
        Ok(had)
    }

    /// Forgets the tokens and the registration of the client they were issued to (the
    /// authorization server no longer knows it): the next sign-in registers anew.
    pub fn forget_client(&self) -> Result<(), String> {
        self.update(|saved| {
            if let Some(credentials) = saved.credentials.take() {
                saved.registrations.retain(|_, r| r.client_id != credentials.client_id);
            }
        })
    }

    /// Notes scopes the server asked for, for the next sign-in to ask for them too.
    pub fn want_scopes(&self, scopes: &[String]) -> Result<(), String> {
        self.update(|saved| {
            for scope in scopes {
                if !saved.wanted_scopes.contains(scope) {
                    saved.wanted_scopes.push(scope.clone());
                }
            }
        })
    }

    fn lock(&self) -> Result<Turn, String> {
        if let Some(table) = &self.shared {
            let key = self.key();
            let turn = table.lock(&key);
            // What is read in the turn is read anew (a refresh must see what another
            // replica's refresh kept).
            self.forget_read();
            return turn.map(Turn::Shared).map_err(|e| format!("cannot take the turn at refreshing the tokens: {e}"));
        }
        self.lock_file().map(Turn::File)
    }

    fn lock_file(&self) -> Result<Flock<File>, String> {
        let path = self.path.with_extension("json.lock");
        let dir = self.path.parent().unwrap_or(Path::new("."));
        DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| e.to_string())?;
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(libc_o_nofollow())
            .open(&path)
            .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
        Flock::lock(file, FlockArg::LockExclusive).map_err(|(_, e)| format!("cannot lock {}: {e}", path.display()))
    }
}

impl std::fmt::Debug for TokenFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenFile").field("path", &self.path).finish()
    }
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

const fn libc_o_nofollow() -> i32 {
    nix::fcntl::OFlag::O_NOFOLLOW.bits()
}

/// The tokens of a [`TokenFile`], as rmcp keeps them.
#[derive(Debug, Clone)]
pub(crate) struct FileStore(pub(crate) std::sync::Arc<TokenFile>);

fn store_error(e: String) -> AuthError {
    AuthError::CredentialStoreError(e)
}

#[async_trait::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.0.read().map(|s| s.credentials).map_err(store_error)
    }

    // rmcp saves a refresh while it holds the refresh guard (the lock), and the first tokens
    // of a sign-in, and clears them, without it: only the sign-in's own process writes then.
    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.0.update_held(|saved| saved.credentials = Some(credentials)).map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.0.update_held(|saved| saved.credentials = None).map_err(store_error)
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let file = std::sync::Arc::clone(&self.0);
        let lock = tokio::task::spawn_blocking(move || file.lock())
            .await
            .map_err(|e| store_error(e.to_string()))?
            .map_err(store_error)?;
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(dir: &Path) -> TokenFile {
        TokenFile::new(&dir.join("oauth"), "docs", &Url::parse("https://docs.example/mcp").unwrap())
    }

    #[test]
    fn tokens_are_kept_owner_only_and_bound_to_the_address() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = file(dir.path());
        assert!(tokens.read().unwrap().credentials.is_none());
        tokens.want_scopes(&["mcp:write".into()]).unwrap();
        tokens.want_scopes(&["mcp:write".into(), "b".into()]).unwrap();
        assert_eq!(tokens.read().unwrap().wanted_scopes, ["mcp:write", "b"]);
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!((mode(tokens.path()), mode(tokens.path().parent().unwrap())), (0o600, 0o700));
        let name = file_name(tokens.path());
        assert!(name.starts_with("docs-") && name.ends_with(".json"), "{name}");
        let other = TokenFile::new(&dir.path().join("oauth"), "docs", &Url::parse("https://evil.example/mcp").unwrap());
        assert_ne!(other.path(), tokens.path());
        // Nothing is left beside it but the lock refreshes take.
        let mut left: Vec<String> = std::fs::read_dir(tokens.path().parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, [name.clone(), format!("{name}.lock")]);
        // Signing out forgets it all.
        assert!(!tokens.forget().unwrap());
        assert!(!tokens.path().exists() && tokens.read().unwrap().wanted_scopes.is_empty());
    }

    #[test]
    fn changes_made_together_are_all_kept() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = std::sync::Arc::new(file(dir.path()));
        let writers: Vec<_> = (0..8)
            .map(|i| {
                let tokens = std::sync::Arc::clone(&tokens);
                std::thread::spawn(move || tokens.want_scopes(&[format!("s{i}")]).unwrap())
            })
            .collect();
        writers.into_iter().for_each(|w| w.join().unwrap());
        let mut wanted = tokens.read().unwrap().wanted_scopes;
        wanted.sort();
        assert_eq!(wanted, (0..8).map(|i| format!("s{i}")).collect::<Vec<_>>());
    }

    #[test]
    fn a_file_others_can_read_or_a_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let tokens = file(dir.path());
        tokens.want_scopes(&["a".into()]).unwrap();
        std::fs::set_permissions(tokens.path(), Permissions::from_mode(0o644)).unwrap();
        assert!(tokens.read().unwrap_err().contains("not a file only you can read"));
        std::fs::remove_file(tokens.path()).unwrap();
        let elsewhere = dir.path().join("elsewhere.json");
        std::fs::write(&elsewhere, "{}").unwrap();
        std::fs::set_permissions(&elsewhere, Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::symlink(&elsewhere, tokens.path()).unwrap();
        assert!(tokens.read().unwrap_err().starts_with("cannot open"));
        std::fs::remove_file(tokens.path()).unwrap();
        std::fs::write(tokens.path(), "not json").unwrap();
        std::fs::set_permissions(tokens.path(), Permissions::from_mode(0o600)).unwrap();
        assert!(tokens.read().unwrap_err().contains("is damaged"));
    }
}
