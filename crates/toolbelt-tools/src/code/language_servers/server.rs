//! One running language server: started in its own process group (under the sandbox when
//! one applies), initialized once, its documents kept in step with the files, shut down
//! politely and then killed with everything it started.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use lsp_types::notification::Notification as _;
use lsp_types::{ClientCapabilities, InitializeResult, ServerCapabilities, Url};
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt as _;

use super::LspError;
use super::config::ServerSpec;
use super::diagnostics::DiagnosticStore;
use super::rpc::{Inbound, Rpc, RpcError};
use crate::shell::support::sandbox::Confinement;
use crate::shell::support::tree::{TAG_VAR, Tree, become_subreaper, new_tag};

/// Lines of the server's stderr kept, to say why it failed.
const STDERR_LINES: usize = 20;

/// An open document: the version sent last and what its text was.
#[derive(Debug, Clone)]
struct Doc {
    version: i32,
    hash: u64,
    stamp: Option<(u64, std::time::SystemTime)>,
}

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

/// The work a server reports in progress (`$/progress` begin without end yet): loading a
/// project, indexing. Answers asked for meanwhile can be wrong (an import not yet followed),
/// so requests wait for it to end, up to a bound.
#[derive(Debug)]
struct Progress {
    active: Mutex<std::collections::HashSet<String>>,
    count: tokio::sync::watch::Sender<usize>,
}

impl Progress {
    fn new() -> Self {
        Self { active: Mutex::new(std::collections::HashSet::new()), count: tokio::sync::watch::channel(0).0 }
    }

    fn update(&self, params: &Value) {
        let token = params.get("token").map(Value::to_string).unwrap_or_default();
        let kind = params.pointer("/value/kind").and_then(Value::as_str);
        let mut active = self.active.lock().unwrap_or_else(PoisonError::into_inner);
        match kind {
            Some("begin") => {
                active.insert(token);
            }
            Some("end") => {
                active.remove(&token);
            }
            _ => return,
        }
        self.count.send_replace(active.len());
    }

    /// Waits until no work is in progress, for at most `limit`; a wait that starts within
    /// `grace` of `since` first gives the server that long to announce work.
    async fn quiet(&self, since: Instant, grace: Duration, limit: Duration) {
        let mut rx = self.count.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        let announce = tokio::time::Instant::from_std(since + grace);
        if *rx.borrow() == 0 && tokio::time::Instant::now() < announce {
            let _ = tokio::time::timeout_at(announce.min(deadline), rx.wait_for(|n| *n > 0)).await;
        }
        let _ = tokio::time::timeout_at(deadline, rx.wait_for(|n| *n == 0)).await;
    }
}

/// Answers what a server sends on its own; keeps its diagnostics.
struct Client {
    diagnostics: Arc<DiagnosticStore>,
    progress: Arc<Progress>,
    settings: Value,
    root: Url,
    name: String,
}

impl Inbound for Client {
    fn notification(&self, method: &str, params: Value) {
        if method == lsp_types::notification::PublishDiagnostics::METHOD {
            if let Ok(params) = serde_json::from_value(params) {
                self.diagnostics.publish(params);
            }
        } else if method == "$/progress" {
            self.progress.update(&params);
        } else if method == "window/logMessage" || method == "window/showMessage" {
            let text = params.get("message").and_then(Value::as_str).unwrap_or("");
            tracing::debug!(server = %self.name, "{text}");
        }
    }

    fn request(&self, method: &str, params: Value) -> Result<Value, (i64, String)> {
        match method {
            "workspace/configuration" => {
                let items = params.get("items").and_then(Value::as_array).cloned().unwrap_or_default();
                Ok(Value::Array(items.iter().map(|item| self.section(item)).collect()))
            }
            "workspace/workspaceFolders" => Ok(json!([{"uri": self.root, "name": "root"}])),
            // toolbelt's tools write files; a server never does.
            "workspace/applyEdit" => {
                Ok(json!({"applied": false, "failureReason": "edits are made with the file tools"}))
            }
            "window/workDoneProgress/create"
            | "client/registerCapability"
            | "client/unregisterCapability"
            | "window/showMessageRequest"
            | "window/showDocument"
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/inlineValue/refresh"
            | "workspace/codeLens/refresh"
            | "workspace/diagnostic/refresh"
            | "workspace/foldingRange/refresh" => Ok(Value::Null),
            _ => Err((-32601, format!("{method} is not supported by this client"))),
        }
    }
}

impl Client {
    /// The settings under `item.section` (dotted), or all of them.
    fn section(&self, item: &Value) -> Value {
        let Some(section) = item.get("section").and_then(Value::as_str).filter(|s| !s.is_empty()) else {
            return self.settings.clone();
        };
        section.split('.').try_fold(&self.settings, |v, key| v.get(key)).cloned().unwrap_or(Value::Null)
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
        become_subreaper();
        let tag = new_tag();
        let mut command = tokio::process::Command::new(&program);
        command
            .args(&spec.args)
            .current_dir(&root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
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
        // The child is reaped by the task; the tree (its process group) is killed on drop.
        tokio::spawn(async move {
            let _ = child.wait().await;
        });
        let diagnostics = Arc::new(DiagnosticStore::default());
        let progress = Arc::new(Progress::new());
        let root_uri = Url::from_directory_path(&root).map_err(|()| LspError::Start {
            server: name.clone(),
            reason: format!("{} is not absolute", root.display()),
        })?;
        let client = Client {
            diagnostics: diagnostics.clone(),
            progress: progress.clone(),
            settings: spec.settings.clone().unwrap_or(Value::Null),
            root: root_uri.clone(),
            name: name.clone(),
        };
        let rpc = Rpc::start(stdout, stdin, Arc::new(client));
        let mut server = Server {
            spec: spec.clone(),
            root,
            capabilities: ServerCapabilities::default(),
            diagnostics,
            started: Instant::now(),
            rpc,
            progress,
            first_open: Mutex::new(None),
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
            self.progress.quiet(opened, Duration::from_millis(750), self.spec.startup_timeout).await;
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
        let mut docs = self.docs.lock().await;
        match docs.get_mut(path) {
            Some(doc) if doc.hash == hash => {
                doc.stamp = stamp;
                None
            }
            Some(doc) => {
                doc.version += 1;
                doc.hash = hash;
                doc.stamp = stamp;
                let params =
                    json!({"textDocument": {"uri": uri, "version": doc.version}, "contentChanges": [{"text": text}]});
                let _ = self.rpc.notify("textDocument/didChange", params).await;
                let _ = self.rpc.notify("textDocument/didSave", json!({"textDocument": {"uri": uri}})).await;
                Some(doc.version)
            }
            None => {
                if docs.is_empty() {
                    *self.first_open.lock().unwrap_or_else(PoisonError::into_inner) = Some(Instant::now());
                }
                docs.insert(path.to_path_buf(), Doc { version: 1, hash, stamp });
                let item = json!({"uri": uri, "languageId": language, "version": 1, "text": text});
                let _ = self.rpc.notify("textDocument/didOpen", json!({"textDocument": item})).await;
                Some(1)
            }
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

/// Keeps the last [`STDERR_LINES`] lines the server writes to stderr.
fn keep_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    tokio::spawn(async move {
        let mut lines = tokio::io::BufReader::new(stderr).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(line.chars().take(500).collect());
        }
    });
}

/// What the client says about itself in `initialize`.
fn initialize_params(root: &Url, spec: &ServerSpec) -> Value {
    let capabilities: ClientCapabilities = serde_json::from_value(json!({
        "general": {"positionEncodings": ["utf-16"]},
        "workspace": {
            "configuration": true,
            "workspaceFolders": true,
            "symbol": {"symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()}},
            "didChangeConfiguration": {"dynamicRegistration": false}
        },
        "textDocument": {
            "synchronization": {"didSave": true, "dynamicRegistration": false},
            "publishDiagnostics": {"relatedInformation": false, "versionSupport": true},
            "hover": {"contentFormat": ["markdown", "plaintext"]},
            "definition": {"linkSupport": true},
            "implementation": {"linkSupport": true},
            "references": {},
            "documentSymbol": {"hierarchicalDocumentSymbolSupport": true, "symbolKind": {"valueSet": (1..=26).collect::<Vec<u32>>()}},
            "callHierarchy": {}
        },
        "window": {"workDoneProgress": true}
    }))
    .unwrap_or_default();
    let mut params = json!({
        // Null, not our pid: a sandboxed server may not signal us (Landlock scopes signals), and
        // servers that watch the pid with `kill(pid, 0)` would take that for our death and
        // exit. Its stdin closing when we go is what ends it.
        "processId": null,
        "clientInfo": {"name": "toolbelt", "version": env!("CARGO_PKG_VERSION")},
        "rootUri": root,
        "rootPath": root.to_file_path().ok(),
        "workspaceFolders": [{"uri": root, "name": "root"}],
        "capabilities": capabilities,
    });
    // Absent rather than null: some servers read null options as "options given, all unset".
    if let Some(options) = &spec.initialization_options {
        params["initializationOptions"] = options.clone();
    }
    params
}
