//! What a client does besides asking: answering what a server sends on its own
//! ([`Client`]), following the work it reports in progress ([`Progress`]), keeping the end
//! of its stderr, and what it says about itself in `initialize`.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use lsp_types::notification::Notification as _;
use lsp_types::{ClientCapabilities, Url};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _};

use super::config::ServerSpec;
use super::diagnostics::DiagnosticStore;
use super::rpc::Inbound;

/// Lines of the server's stderr kept, to say why it failed.
pub const STDERR_LINES: usize = 20;

/// The work a server reports in progress (`$/progress` begin without end yet): loading a
/// project, indexing. Answers asked for meanwhile can be wrong (an import not yet followed),
/// so requests wait for it to end, up to a bound.
#[derive(Debug)]
pub struct Progress {
    active: Mutex<std::collections::HashSet<String>>,
    count: tokio::sync::watch::Sender<usize>,
}

impl Progress {
    pub fn new() -> Self {
        Self { active: Mutex::new(std::collections::HashSet::new()), count: tokio::sync::watch::channel(0).0 }
    }

    pub fn update(&self, params: &Value) {
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
    /// `grace` of `since` first gives the server that long to announce work. Whether the
    /// server went quiet.
    pub async fn quiet(&self, since: Instant, grace: Duration, limit: Duration) -> bool {
        let mut rx = self.count.subscribe();
        let deadline = tokio::time::Instant::now() + limit;
        let announce = tokio::time::Instant::from_std(since + grace);
        if *rx.borrow() == 0 && tokio::time::Instant::now() < announce {
            let _ = tokio::time::timeout_at(announce.min(deadline), rx.wait_for(|n| *n > 0)).await;
        }
        tokio::time::timeout_at(deadline, rx.wait_for(|n| *n == 0)).await.is_ok()
    }
}

/// Answers what a server sends on its own; keeps its diagnostics.
pub struct Client {
    pub diagnostics: Arc<DiagnosticStore>,
    pub progress: Arc<Progress>,
    pub settings: Value,
    pub root: Url,
    pub name: String,
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
            | "workspace/semanticTokens/refresh"
            | "workspace/inlayHint/refresh"
            | "workspace/inlineValue/refresh"
            | "workspace/codeLens/refresh"
            | "workspace/diagnostic/refresh"
            | "workspace/foldingRange/refresh" => Ok(Value::Null),
            // Nothing is shown to anybody: say so rather than answer null.
            "window/showDocument" => Ok(json!({"success": false})),
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

/// Keeps the last [`STDERR_LINES`] lines the server writes to stderr, each cut to 500
/// characters; reads all of it whatever the bytes (a pipe left unread would make the
/// server's next write fail, and some servers die of that), in bounded memory.
pub fn keep_stderr(stderr: tokio::process::ChildStderr, tail: Arc<Mutex<VecDeque<String>>>) {
    tokio::spawn(async move {
        let mut reader = tokio::io::BufReader::new(stderr);
        let mut line = Vec::new();
        loop {
            line.clear();
            // Up to a newline or 4 KiB, whichever first; the rest of a long line is read as
            // the next pieces and kept as lines of their own.
            match (&mut reader).take(4096).read_until(b'\n', &mut line).await {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            let text: String = String::from_utf8_lossy(&line).trim_end().chars().take(500).collect();
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            if tail.len() == STDERR_LINES {
                tail.pop_front();
            }
            tail.push_back(text);
        }
    });
}

/// What the client says about itself in `initialize`.
pub fn initialize_params(root: &Url, spec: &ServerSpec) -> Value {
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
