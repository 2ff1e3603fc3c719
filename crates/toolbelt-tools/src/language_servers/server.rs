//! One running language server: started in its own process group (under the sandbox when
//! one applies), initialized once, its documents kept in step with the files, shut down
//! politely and then killed with everything it started.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use lsp_types::{InitializeResult, ServerCapabilities, Url};
use serde_json::{Value, json};

use super::LspError;
use super::client::{Client, Progress, initialize_params, keep_stderr};
use super::config::ServerSpec;
use super::diagnostics::DiagnosticStore;
use super::rpc::{Rpc, RpcError};
use crate::process::sandbox::Confinement;
use crate::process::tree::{TAG_VAR, Tree, become_subreaper, new_tag};

/// An open document: the version sent last and what its text was.
#[derive(Debug, Clone)]
struct Doc {
    version: i32,
    hash: u64,
    stamp: Option<(u64, std::time::SystemTime)>,
    /// When it was last synced, by a counter: the least recently used is closed first.
    used: u64,
}

/// Most documents kept open on a server; past it the least recently used one is closed (a
/// server keeps, and re-checks, every open document).
const MAX_OPEN: usize = 64;

/// The longest a request waits for work the server reports in progress once the project
/// has loaded (a check run after a save, say): long enough for most, never a minute.
const BUSY_WAIT: Duration = Duration::from_secs(2);

/// A running server.
pub struct Server {
    /// Its spec.
    pub spec: Arc<ServerSpec>,
    /// The workspace root it was started for.
    pub root: PathBuf,
    /// What it said it can do.
    pub capabilities: ServerCapabilities,
    /// Its published diagnostics.
    pub diagnostics: Arc<DiagnosticStore>,
    /// When it was started.
    pub started: Instant,
    rpc: Arc<Rpc>,
    progress: Arc<Progress>,
    first_open: Mutex<Option<Instant>>,
    /// Whether the first wait for the load is over: later requests wait at most [`BUSY_WAIT`].
    loaded: std::sync::atomic::AtomicBool,
    /// Counts syncs, for [`Doc::used`].
    uses: std::sync::atomic::AtomicU64,
    pid: Option<u32>,
    tree: Tree,
    docs: tokio::sync::Mutex<HashMap<PathBuf, Doc>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("name", &self.spec.name).field("root", &self.root).finish_non_exhaustive()
    }
}

impl Server {
    /// Starts `spec`'s program for `root` and initializes it.
    pub async fn start(
        spec: Arc<ServerSpec>,
        root: PathBuf,
        confinement: Option<Confinement>,
        env: super::EnvChanges,
    ) -> Result<Arc<Server>, LspError> {
        let name = spec.name.clone();
        let program = spec.program().ok_or_else(|| LspError::Start {
            server: name.clone(),
            reason: format!("`{}` is not on PATH", spec.command),
        })?;
        let root_uri = Url::from_directory_path(&root).map_err(|()| LspError::Start {
            server: name.clone(),
            reason: format!("{} is not absolute", root.display()),
        })?;
        become_subreaper();
        let tag = new_tag();
        let mut command = tokio::process::Command::new(&program);
        command
            .args(spec.args_when(confinement.is_some()))
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        // A session of its own (its own process group, no controlling terminal), set up
        // before the sandbox's hook.
        toolbelt_core::process::new_session(command.as_std_mut());
        for (key, value) in env {
            match value {
                Some(value) => command.env(key, value),
                None => command.env_remove(key),
            };
        }
        command.envs(&spec.env).env(TAG_VAR, &tag).env("NO_COLOR", "1");
        if let Some(confinement) = confinement {
            confinement.install(&mut command, None);
        }
        let mut child = command
            .spawn()
            .map_err(|e| LspError::Start { server: name.clone(), reason: format!("{}: {e}", program.display()) })?;
        let pid = child.id();
        let tree = Tree::new(pid.unwrap_or(0), tag, None);
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(LspError::Start { server: name, reason: "its standard streams could not be opened".into() });
        };
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        keep_stderr(stderr, stderr_tail.clone());
        let diagnostics = Arc::new(DiagnosticStore::default());
        let progress = Arc::new(Progress::new());
        let client = Client {
            diagnostics: diagnostics.clone(),
            progress: progress.clone(),
            settings: spec.settings.clone().unwrap_or(Value::Null),
            root: root_uri.clone(),
            name: name.clone(),
        };
        let rpc = Rpc::start(stdout, stdin, Arc::new(client));
        // The child is reaped by this task, which closes the connection when it exits (a
        // process it started may still hold its stdout open); the tree (its process group)
        // is killed on drop.
        let connection = Arc::downgrade(&rpc);
        tokio::spawn(async move {
            let _ = child.wait().await;
            if let Some(rpc) = connection.upgrade() {
                rpc.close();
            }
        });
        let mut server = Server {
            spec: spec.clone(),
            root,
            capabilities: ServerCapabilities::default(),
            diagnostics,
            started: Instant::now(),
            rpc,
            progress,
            first_open: Mutex::new(None),
            loaded: std::sync::atomic::AtomicBool::new(false),
            uses: std::sync::atomic::AtomicU64::new(0),
            pid,
            tree,
            docs: tokio::sync::Mutex::new(HashMap::new()),
            stderr: stderr_tail,
        };
        let init = initialize_params(&root_uri, &spec);
        let answer = server.rpc.request("initialize", init, spec.startup_timeout).await;
        let result: InitializeResult = match answer {
            Ok(value) => serde_json::from_value(value).map_err(|e| LspError::Start {
                server: name.clone(),
                reason: format!("its answer to initialize did not parse: {e}"),
            })?,
            Err(e) => {
                // Give stderr a moment to say why.
                tokio::time::sleep(Duration::from_millis(100)).await;
                return Err(server.error("initialize", e, spec.startup_timeout));
            }
        };
        server.capabilities = result.capabilities;
        let _ = server.rpc.notify("initialized", json!({})).await;
        if let Some(settings) = &spec.settings {
            let _ = server.rpc.notify("workspace/didChangeConfiguration", json!({"settings": settings})).await;
        }
        Ok(Arc::new(server))
    }

    /// Whether the server is still there.
    pub fn is_alive(&self) -> bool {
        !self.rpc.is_closed()
    }

    /// Its process id (the leader of its process group).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The last lines it wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        let lines = self.stderr.lock().unwrap_or_else(PoisonError::into_inner);
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Sends request `method` and reads its result as `T`, waiting up to `timeout`. A
    /// "content modified" answer (the server was still catching up) is retried a few times.
    pub async fn call<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> Result<T, LspError> {
        // While the server loads the project (it reports that as progress), answers can be
        // wrong: wait for it, at most the startup timeout. Right after the first document
        // was opened, give it a moment to say it started loading.
        let first_open = *self.first_open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(opened) = first_open {
            use std::sync::atomic::Ordering::Relaxed;
            let limit = if self.loaded.load(Relaxed) { BUSY_WAIT } else { self.spec.startup_timeout };
            // Not past the server's end (the request below then says it exited), and the full
            // startup wait only once: a progress report that never ends does not hold every
            // later call for as long.
            tokio::select! {
                _ = self.progress.quiet(opened, Duration::from_millis(750), limit) => {}
                () = self.rpc.closed() => {}
            }
            self.loaded.store(true, Relaxed);
        }
        let mut tries = 0;
        let value = loop {
            match self.rpc.request(method, params.clone(), timeout).await {
                Err(RpcError::Server { code: -32801 | -32802, .. }) if tries < 5 => {
                    tries += 1;
                    tokio::time::sleep(Duration::from_millis(200 * tries)).await;
                }
                Err(e) => return Err(self.error(method, e, timeout)),
                Ok(value) => break value,
            }
        };
        serde_json::from_value(value).map_err(|e| LspError::Protocol {
            server: self.spec.name.clone(),
            reason: format!("its answer to {method} did not parse: {e}"),
        })
    }

    fn error(&self, method: &str, e: RpcError, timeout: Duration) -> LspError {
        let server = self.spec.name.clone();
        match e {
            RpcError::Closed => LspError::Crashed { server, stderr: self.stderr_tail() },
            RpcError::Timeout => {
                LspError::Timeout { server, method: method.to_owned(), seconds: timeout.as_secs_f64() }
            }
            RpcError::Server { code, message } => LspError::Server { server, method: method.to_owned(), code, message },
        }
    }

    /// Makes the server's copy of `path` hold `text`: opens it the first time, sends the
    /// whole new text when it changed. Returns the document's version when something was
    /// sent, None when the server already had this text.
    pub async fn sync(&self, path: &Path, text: &str, stamp: Option<(u64, std::time::SystemTime)>) -> Option<i32> {
        let language = self.spec.language_of(path)?;
        let uri = Url::from_file_path(path).ok()?;
        let hash = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let used = self.uses.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut docs = self.docs.lock().await;
        match docs.get_mut(path) {
            Some(doc) if doc.hash == hash => {
                doc.stamp = stamp;
                doc.used = used;
                None
            }
            Some(doc) => {
                doc.version += 1;
                doc.hash = hash;
                doc.stamp = stamp;
                doc.used = used;
                let params =
                    json!({"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [{"text": text}]});
                let _ = self.rpc.notify("textDocument/didChange", params).await;
                // The file is on disk as sent (toolbelt wrote it): say so to a server that
                // asked to hear of saves (some check only then).
                if self.wants_saves() {
                    let _ = self.rpc.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
                }
                Some(doc.version)
            }
            None => {
                self.first_open.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert_with(Instant::now);
                if docs.len() >= MAX_OPEN
                    && let Some(oldest) = docs.iter().min_by_key(|(_, d)| d.used).map(|(p, _)| p.clone())
                {
                    docs.remove(&oldest);
                    if let Ok(old) = Url::from_file_path(&oldest) {
                        let _ = self.rpc.notify("textDocument/didClose", json!({"textDocument": {"uri": old}})).await;
                    }
                }
                docs.insert(path.to_path_buf(), Doc { version: 1, hash, stamp, used });
                let item = json!({"uri": uri, "languageId": language, "version": 1, "text": text});
                let _ = self.rpc.notify("textDocument/didOpen", json!({"textDocument": item})).await;
                Some(1)
            }
        }
    }

    /// Whether the server asked for `didSave` (its sync options name `save`).
    fn wants_saves(&self) -> bool {
        match &self.capabilities.text_document_sync {
            Some(lsp_types::TextDocumentSyncCapability::Options(options)) => options
                .save
                .as_ref()
                .is_some_and(|s| !matches!(s, lsp_types::TextDocumentSyncSaveOptions::Supported(false))),
            _ => false,
        }
    }

    /// Whether `path` is open on the server.
    pub async fn is_open(&self, path: &Path) -> bool {
        self.docs.lock().await.contains_key(path)
    }

    /// The open documents whose file changed on disk since it was sent (by size and time),
    /// or is gone: what another process (a Bash command) changed.
    pub async fn stale(&self) -> Vec<PathBuf> {
        let docs = self.docs.lock().await;
        docs.iter()
            .filter(|(path, doc)| {
                let now = std::fs::metadata(path).ok().and_then(|m| Some((m.len(), m.modified().ok()?)));
                now.is_none() || now != doc.stamp
            })
            .map(|(p, _)| p.clone())
            .collect()
    }

    /// Closes `path` on the server (it was deleted).
    pub async fn close(&self, path: &Path) {
        if self.docs.lock().await.remove(path).is_some()
            && let Ok(uri) = Url::from_file_path(path)
        {
            let _ = self.rpc.notify("textDocument/didClose", json!({"textDocument": {"uri": uri}})).await;
        }
        self.diagnostics.forget(path);
    }

    /// Asks the server to shut down and exit, then kills what is left of its process group.
    pub async fn shutdown(&self) {
        if self.is_alive() {
            let _ = self.rpc.request("shutdown", Value::Null, Duration::from_secs(2)).await;
            let _ = self.rpc.notify("exit", Value::Null).await;
            let _ = tokio::time::timeout(Duration::from_secs(1), self.rpc.closed()).await;
        }
        self.kill();
    }

    fn kill(&self) {
        let tree = self.tree.clone();
        // A kill waits for stubborn processes: not on the caller's thread.
        std::thread::spawn(move || {
            tree.kill();
            tree.retire();
        });
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}
