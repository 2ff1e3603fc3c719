//! Language servers, below the tool families that use them: the code tools ask them (`LSP`,
//! `Diagnostics`; `Lint` finds its programs the same way) and the file tools tell them of
//! each edit and show what it introduced ([`after_change`]), so neither family reaches into
//! the other. Which server serves a file ([`config`]), starting one lazily per (workspace
//! root, server) and keeping it ([`LanguageServers`]), talking to it ([`rpc`], [`server`]),
//! its diagnostics ([`diagnostics`]).
//!
//! A server runs under the same sandbox as Bash commands (Landlock, seccomp, hidden paths
//! masked), from the session's roots at the time it starts; it is a program that reads the
//! whole project and may run some of it (build scripts, plugins a config names).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt as _;

use toolbelt_core::{ToolContext, ToolError};

use crate::process::sandbox::Confinement;

pub mod after_change;
mod client;
pub mod config;
pub mod diagnostics;
pub mod position;
pub mod rpc;
pub mod server;

pub use config::{LspSettings, ServerSpec};
pub use server::Server;

/// What went wrong with a language server.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LspError {
    /// No server serves this kind of file.
    #[error("{0}")]
    NoServer(String),
    /// The server could not be started.
    #[error("the language server {server} could not start: {reason}")]
    Start {
        /// Its name.
        server: String,
        /// Why.
        reason: String,
    },
    /// The server exited.
    #[error("the language server {server} exited{}", stderr_note(.stderr))]
    Crashed {
        /// Its name.
        server: String,
        /// The last lines of its stderr.
        stderr: String,
    },
    /// It crashed too often, or too recently, to be started now.
    #[error("{0}")]
    GaveUp(String),
    /// No answer in time.
    #[error(
        "the language server {server} did not answer {method} within {seconds:.0} s; it may still be loading the project: retry in a moment"
    )]
    Timeout {
        /// Its name.
        server: String,
        /// The request.
        method: String,
        /// The deadline.
        seconds: f64,
    },
    /// The server answered with an error.
    #[error("the language server {server} answered {method} with an error ({code}): {message}")]
    Server {
        /// Its name.
        server: String,
        /// The request.
        method: String,
        /// The JSON-RPC code.
        code: i64,
        /// The message.
        message: String,
    },
    /// The server said something that is not LSP.
    #[error("the language server {server} broke the protocol: {reason}")]
    Protocol {
        /// Its name.
        server: String,
        /// What.
        reason: String,
    },
}

fn stderr_note(stderr: &str) -> String {
    if stderr.trim().is_empty() { String::new() } else { format!("; the end of its stderr:\n{stderr}") }
}

impl From<LspError> for ToolError {
    fn from(e: LspError) -> Self {
        ToolError::failed(e.to_string())
    }
}

/// A server's place: its workspace root and its name.
type SlotKey = (PathBuf, String);

/// What a server's environment changes from ours: a variable set, or removed when None.
pub type EnvChanges = Vec<(OsString, Option<OsString>)>;

/// One server's place: the server while it runs, and its crash record.
#[derive(Debug, Default)]
struct Slot {
    server: Option<Arc<Server>>,
    crashes: u32,
    retry_at: Option<Instant>,
    last_crash: Option<String>,
}

/// The language servers of a runtime: a service (`cx.service::<LanguageServers>()`) the
/// front end sets up from the settings. Servers start on first use, one per (workspace
/// root, server), and are shut down with it ([`LanguageServers::shutdown_all`], or killed
/// when it is dropped).
#[derive(Debug)]
pub struct LanguageServers {
    settings: LspSettings,
    slots: Mutex<HashMap<SlotKey, Arc<tokio::sync::Mutex<Slot>>>>,
}

impl LanguageServers {
    /// Servers as `settings` say.
    pub fn new(settings: LspSettings) -> Self {
        Self { settings, slots: Mutex::new(HashMap::new()) }
    }

    /// The settings in effect.
    pub fn settings(&self) -> &LspSettings {
        &self.settings
    }

    /// The server spec for `path` and the workspace root to start it in, or why there is none.
    pub fn choose(&self, path: &Path, roots: &[PathBuf]) -> Result<(Arc<ServerSpec>, PathBuf), LspError> {
        let ext = config::extension(path);
        let shown = ext.as_deref().map_or_else(|| "files without an extension".to_owned(), |e| format!(".{e} files"));
        if !self.settings.enabled {
            return Err(LspError::NoServer(format!(
                "language servers are turned off (lsp.enabled = false); turn them on to use them for {shown}"
            )));
        }
        let candidates = self.settings.candidates(path);
        if let Some(spec) = candidates.iter().find(|s| s.program().is_some()) {
            let root = workspace_root(path, roots, &spec.root_markers);
            return Ok((Arc::new(spec.clone()), root));
        }
        let mut text = if candidates.is_empty() {
            format!(
                "No language server is set up for {shown}. Configure one under [lsp.servers.NAME] (command, args, \
                 extensions) in the settings; built in are rust-analyzer, basedpyright/pyright, \
                 typescript-language-server, gopls and clangd for their languages"
            )
        } else {
            let wanted: Vec<String> = candidates
                .iter()
                .map(|s| match &s.install_hint {
                    Some(hint) => format!("{} (`{}`; install: {hint})", s.name, s.command),
                    None => format!("{} (`{}`, from {})", s.name, s.command, s.origin),
                })
                .collect();
            format!(
                "No language server for {shown} is installed: none of these is on PATH: {}. Install one, or \
                 configure another under [lsp.servers.NAME]",
                wanted.join("; ")
            )
        };
        if !self.settings.problems.is_empty() {
            text.push_str(&format!(". Problems in the configuration: {}", self.settings.problems.join("; ")));
        }
        Err(LspError::NoServer(text))
    }

    /// The running server for `path`, started if needed (under the sandbox of `cx`). A server
    /// that crashed is restarted, waiting longer after each crash.
    pub async fn server_for(&self, cx: &ToolContext, path: &Path) -> Result<Arc<Server>, LspError> {
        let (spec, root) = self.choose(path, &cx.roots())?;
        let slot = self.slot(&root, &spec.name);
        let mut slot = slot.lock().await;
        if let Some(server) = slot.server.clone() {
            if server.is_alive() {
                return Ok(server);
            }
            slot.crashes += 1;
            slot.last_crash = Some(server.stderr_tail());
            slot.retry_at = Some(Instant::now() + backoff(slot.crashes));
            slot.server = None;
        }
        if slot.crashes > spec.max_restarts {
            return Err(LspError::GaveUp(format!(
                "the language server {} crashed {} times and is not restarted again in this session{}",
                spec.name,
                slot.crashes,
                stderr_note(slot.last_crash.as_deref().unwrap_or(""))
            )));
        }
        if let Some(at) = slot.retry_at {
            let wait = at.saturating_duration_since(Instant::now());
            if wait > Duration::from_secs(5) {
                return Err(LspError::GaveUp(format!(
                    "the language server {} crashed {} times; it is restarted in {} s: retry then",
                    spec.name,
                    slot.crashes,
                    wait.as_secs() + 1
                )));
            }
            tokio::time::sleep(wait).await;
        }
        let (confinement, env) = launch_plan(cx, &spec.name)?;
        match Server::start(spec, root, confinement, env).await {
            Ok(server) => {
                slot.server = Some(server.clone());
                Ok(server)
            }
            // A start that fails counts as a crash: the next waits longer, and after
            // `max_restarts` the server is given up on, rather than every call waiting out
            // its startup timeout again.
            Err(e) => {
                slot.crashes += 1;
                slot.last_crash = Some(e.to_string());
                slot.retry_at = Some(Instant::now() + backoff(slot.crashes));
                Err(e)
            }
        }
    }

    /// The running servers that serve `path` (none is started).
    pub fn running_for(&self, path: &Path) -> Vec<Arc<Server>> {
        self.running().into_iter().filter(|s| s.spec.language_of(path).is_some() && path.starts_with(&s.root)).collect()
    }

    /// Every running server.
    pub fn running(&self) -> Vec<Arc<Server>> {
        let slots: Vec<_> = self.slots.lock().unwrap_or_else(PoisonError::into_inner).values().cloned().collect();
        slots
            .iter()
            .filter_map(|slot| slot.try_lock().ok().and_then(|s| s.server.clone()))
            .filter(|s| s.is_alive())
            .collect()
    }

    /// Shuts every server down (politely, then killing what is left).
    pub async fn shutdown_all(&self) {
        let slots: Vec<_> = self.slots.lock().unwrap_or_else(PoisonError::into_inner).drain().map(|(_, s)| s).collect();
        let mut servers = Vec::new();
        for slot in slots {
            if let Some(server) = slot.lock().await.server.take() {
                servers.push(server);
            }
        }
        futures_util::future::join_all(servers.iter().map(|s| s.shutdown())).await;
    }

    fn slot(&self, root: &Path, name: &str) -> Arc<tokio::sync::Mutex<Slot>> {
        let mut slots = self.slots.lock().unwrap_or_else(PoisonError::into_inner);
        slots.entry((root.to_path_buf(), name.to_owned())).or_default().clone()
    }
}

/// The sandbox a server starts under, and the environment it gets (Bash's: secrets removed).
/// A server only reads the workspace: the one place it may write (besides the temp
/// directory, as commands may) is a scratch folder of its own, its `TMPDIR`; so nothing it
/// keeps, such as an index, lands in the project. The network stays as the sandbox
/// settings say.
fn launch_plan(cx: &ToolContext, name: &str) -> Result<(Option<Confinement>, EnvChanges), LspError> {
    use crate::process::sandbox::{SandboxMode, WhenUnavailable};
    let start_error = |reason: String| LspError::Start { server: name.to_owned(), reason };
    let base = std::env::temp_dir().join(format!("toolbelt-lsp-{}", nix::unistd::geteuid()));
    // A name from a plugin's `.lsp.json` is the plugin's to choose: one path component.
    let scratch = base.join(crate::process::spill::safe_name(name));
    for dir in [&base, &scratch] {
        private_dir(dir)
            .map_err(|e| start_error(format!("its scratch folder {} cannot be used: {e}", dir.display())))?;
    }
    let mut config = crate::process::confine::sandbox_config(cx);
    if config.mode == SandboxMode::ReadOnly {
        config.mode = SandboxMode::WorkspaceWrite;
    }
    config.writable_roots.clear();
    let masks = cx.hidden().map(|h| h.masks()).unwrap_or_default();
    let confinement = match Confinement::for_command(&config, std::slice::from_ref(&scratch), &masks) {
        Ok(confinement) => confinement,
        Err(why) if config.when_unavailable == WhenUnavailable::Refuse => {
            return Err(start_error(format!(
                "the sandbox cannot be applied here ({why}) and the settings say to refuse"
            )));
        }
        Err(why) => {
            tracing::warn!("a language server runs without the sandbox: {why}");
            None
        }
    };
    let bash = crate::process::config::BashConfig::in_effect(cx);
    let mut env = crate::process::env::changes(&bash);
    env.push(("TMPDIR".into(), Some(scratch.into_os_string())));
    Ok((confinement, env))
}

/// How long to wait before starting a server again after its `crashes`-th crash: 0.5 s,
/// doubling, at most 16 s.
fn backoff(crashes: u32) -> Duration {
    Duration::from_millis(500 * 2u64.pow(crashes.clamp(1, 6) - 1))
}

/// Makes `dir` (its parent exists), or accepts it as it is only if it is a real folder (not
/// a link), ours and nobody else's (0700): the shared temporary directory is anybody's to
/// plant a folder or a link in, and this one is given to a server to write.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => return Err(e),
        Err(_) => {}
    }
    let meta = std::fs::symlink_metadata(dir)?;
    let ours = meta.uid() == nix::unistd::geteuid().as_raw();
    if !meta.file_type().is_dir() || !ours || meta.mode() & 0o077 != 0 {
        return Err(std::io::Error::other("it exists and is not a folder of this user's alone (0700); remove it"));
    }
    Ok(())
}

/// The text of `path` (at most 16 MiB, invalid UTF-8 replaced), opened as the file tools
/// open one: confined to `roots`, a regular file, no hard link to a hidden file. None when
/// this session may not read it.
pub fn read_text(roots: &crate::fs::roots::OpenRoots, path: &Path) -> Option<String> {
    use std::io::Read as _;
    let loc = roots.locate(path).ok()?;
    let file = crate::fs::walk::open::open_searched(roots, roots.dir(&loc), &loc.rel, path).ok()?;
    let mut bytes = Vec::new();
    file.take(16 << 20).read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The workspace root for `path`: the nearest folder above it holding one of `markers`,
/// within the session root that holds it; else that root (or the file's folder when no
/// root holds it).
pub fn workspace_root(path: &Path, roots: &[PathBuf], markers: &[String]) -> PathBuf {
    let root = roots.iter().filter(|r| path.starts_with(r)).max_by_key(|r| r.components().count());
    let fallback = root.cloned().or_else(|| path.parent().map(Path::to_path_buf)).unwrap_or_else(|| PathBuf::from("/"));
    let mut dir = path.parent();
    while let Some(d) = dir {
        if root.is_some_and(|r| !d.starts_with(r)) {
            break;
        }
        if markers.iter().any(|m| d.join(m).exists()) {
            return d.to_path_buf();
        }
        if root.is_some_and(|r| d == r) {
            break;
        }
        dir = d.parent();
    }
    fallback
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_marked_folder_inside_the_root_is_the_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        std::fs::create_dir_all(root.join("a/b/c")).unwrap();
        std::fs::write(root.join("a/pyproject.toml"), "").unwrap();
        let markers = vec!["pyproject.toml".to_owned()];
        assert_eq!(workspace_root(&root.join("a/b/c/x.py"), std::slice::from_ref(&root), &markers), root.join("a"));
        assert_eq!(workspace_root(&root.join("x.py"), std::slice::from_ref(&root), &markers), root);
        // A marker above the root is not looked at.
        let inner = root.join("a/b");
        assert_eq!(workspace_root(&inner.join("c/x.py"), std::slice::from_ref(&inner), &markers), inner);
    }

    #[test]
    fn a_scratch_folder_is_a_private_one_named_safely() {
        use crate::process::spill::safe_name;
        assert_eq!(safe_name("../../home/u"), ".._.._home_u");
        assert_eq!(safe_name(".."), "_");
        assert_eq!(safe_name("rust-analyzer"), "rust-analyzer");
        let dir = tempfile::tempdir().unwrap();
        let mine = dir.path().join("mine");
        private_dir(&mine).unwrap();
        private_dir(&mine).unwrap();
        // Planted by someone else: a link, or a folder others may write.
        std::os::unix::fs::symlink(dir.path(), dir.path().join("link")).unwrap();
        assert!(private_dir(&dir.path().join("link")).is_err());
        let open = dir.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
        assert!(private_dir(&open).is_err());
    }

    #[test]
    fn no_server_names_the_file_type_and_what_would_serve_it() {
        let servers = LanguageServers::new(LspSettings { use_defaults: true, ..LspSettings::default() });
        let err = servers.choose(Path::new("/p/x.zig"), &[]).unwrap_err().to_string();
        assert!(err.contains(".zig files") && err.contains("[lsp.servers.NAME]"), "{err}");
        let mut settings = LspSettings::default();
        settings.servers.push(ServerSpec::new("nope", "definitely-not-a-server-xyz", &[], &[("go", "go")]));
        settings.use_defaults = false;
        let err = LanguageServers::new(settings).choose(Path::new("/p/x.go"), &[]).unwrap_err().to_string();
        assert!(err.contains(".go files") && err.contains("definitely-not-a-server-xyz"), "{err}");
    }
}
