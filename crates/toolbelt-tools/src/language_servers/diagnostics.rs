//! The diagnostics a server published, per file, and waiting for the next publication.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use lsp_types::{Diagnostic, DiagnosticSeverity, PublishDiagnosticsParams};
use tokio::sync::watch;

/// What a server last said about one file.
#[derive(Debug, Clone, Default)]
pub struct Published {
    /// The document version it was about, when the server said.
    pub version: Option<i32>,
    /// The diagnostics.
    pub items: Vec<Diagnostic>,
    /// Which publication this was (counts up across all files of the server).
    pub generation: u64,
}

/// The diagnostics of one server.
#[derive(Debug)]
pub struct DiagnosticStore {
    files: Mutex<HashMap<PathBuf, Published>>,
    generation: watch::Sender<u64>,
}

impl Default for DiagnosticStore {
    fn default() -> Self {
        Self { files: Mutex::new(HashMap::new()), generation: watch::channel(0).0 }
    }
}

impl DiagnosticStore {
    /// Records a `textDocument/publishDiagnostics`.
    pub fn publish(&self, params: PublishDiagnosticsParams) {
        let Ok(path) = params.uri.to_file_path() else { return };
        let mut files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        let generation = *self.generation.borrow() + 1;
        files.insert(path, Published { version: params.version, items: params.diagnostics, generation });
        drop(files);
        self.generation.send_replace(generation);
    }

    /// The latest publication's number (0 before any).
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// What was last published for `path`.
    pub fn get(&self, path: &Path) -> Option<Published> {
        self.files.lock().unwrap_or_else(PoisonError::into_inner).get(path).cloned()
    }

    /// Every file with diagnostics.
    pub fn all(&self) -> Vec<(PathBuf, Published)> {
        let files = self.files.lock().unwrap_or_else(PoisonError::into_inner);
        files.iter().filter(|(_, p)| !p.items.is_empty()).map(|(k, v)| (k.clone(), v.clone())).collect()
    }

    /// Forgets `path` (closed or deleted).
    pub fn forget(&self, path: &Path) {
        self.files.lock().unwrap_or_else(PoisonError::into_inner).remove(path);
    }

    /// Waits up to `wait` for a publication about `path` newer than `after` (and, when the
    /// server numbers them, about `version` or later), then a short while more in case a
    /// second one follows (servers that check syntax and types separately). None when none
    /// came in time.
    pub async fn wait_newer(&self, path: &Path, after: u64, version: Option<i32>, wait: Duration) -> Option<Published> {
        let fresh = |p: &Published| p.generation > after && version.is_none_or(|v| p.version.is_none_or(|pv| pv >= v));
        let mut rx = self.generation.subscribe();
        let deadline = tokio::time::Instant::now() + wait;
        let first = loop {
            if let Some(p) = self.get(path).filter(fresh) {
                break p;
            }
            match tokio::time::timeout_at(deadline, rx.changed()).await {
                Ok(Ok(())) => continue,
                _ => return None,
            }
        };
        // Settle: another publication for the same file soon after replaces the first.
        let settle = tokio::time::Instant::now() + Duration::from_millis(300);
        let mut latest = first;
        while let Ok(Ok(())) = tokio::time::timeout_at(settle.min(deadline), rx.changed()).await {
            if let Some(p) = self.get(path).filter(|p| p.generation > latest.generation) {
                latest = p;
            }
        }
        Some(latest)
    }
}

/// How serious a diagnostic is, as the tools' outputs name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// An error.
    Error,
    /// A warning.
    Warning,
    /// Information.
    Info,
    /// A hint.
    Hint,
}

impl Level {
    /// The name outputs use (`error`, `warning`, `info`, `hint`).
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Error => "error",
            Level::Warning => "warning",
            Level::Info => "info",
            Level::Hint => "hint",
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The level of `d`.
pub fn level(d: &Diagnostic) -> Level {
    match d.severity {
        Some(DiagnosticSeverity::WARNING) => Level::Warning,
        Some(DiagnosticSeverity::INFORMATION) => Level::Info,
        Some(DiagnosticSeverity::HINT) => Level::Hint,
        // Unset is read as an error, as editors do.
        _ => Level::Error,
    }
}

/// Whether `d` is an error.
pub fn is_error(d: &Diagnostic) -> bool {
    level(d) == Level::Error
}

/// The diagnostic's code as text (`E0308`, `reportAttributeAccessIssue`), if any.
pub fn code_text(d: &Diagnostic) -> Option<String> {
    d.code.as_ref().map(|c| match c {
        lsp_types::NumberOrString::Number(n) => n.to_string(),
        lsp_types::NumberOrString::String(s) => s.clone(),
    })
}

/// The errors of `after` that `before` did not have: matched by source, code and message
/// (not position, since an edit moves lines), each earlier error used up once.
pub fn introduced<'a>(before: &[Diagnostic], after: &'a [Diagnostic]) -> Vec<&'a Diagnostic> {
    let key = |d: &Diagnostic| (d.source.clone(), code_text(d), d.message.clone());
    let mut old: Vec<_> = before.iter().filter(|d| is_error(d)).map(key).collect();
    after
        .iter()
        .filter(|d| is_error(d))
        .filter(|d| {
            let k = key(d);
            match old.iter().position(|o| *o == k) {
                Some(i) => {
                    old.swap_remove(i);
                    false
                }
                None => true,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_read_as_they_print_and_their_schema_lists_them() {
        let levels = [Level::Error, Level::Warning, Level::Info, Level::Hint];
        for l in levels {
            assert_eq!(serde_json::to_value(l).unwrap(), serde_json::json!(l.to_string()));
        }
        let schema = serde_json::to_value(schemars::schema_for!(Level)).unwrap();
        let listed: Vec<&str> = schema["enum"].as_array().map_or_else(
            || schema["oneOf"].as_array().unwrap().iter().filter_map(|c| c["const"].as_str()).collect(),
            |values| values.iter().filter_map(serde_json::Value::as_str).collect(),
        );
        assert_eq!(listed, levels.map(Level::as_str));
        let unset = Diagnostic { severity: None, ..diag(1, "x", DiagnosticSeverity::HINT) };
        assert_eq!(level(&unset), Level::Error, "unset reads as an error");
    }
    use lsp_types::{Position, Range};

    fn diag(line: u32, message: &str, severity: DiagnosticSeverity) -> Diagnostic {
        Diagnostic {
            range: Range::new(Position::new(line, 0), Position::new(line, 1)),
            severity: Some(severity),
            message: message.into(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn only_new_errors_count_as_introduced() {
        let before = [diag(1, "old", DiagnosticSeverity::ERROR), diag(2, "dup", DiagnosticSeverity::ERROR)];
        let after = [
            diag(5, "old", DiagnosticSeverity::ERROR),
            diag(6, "dup", DiagnosticSeverity::ERROR),
            diag(7, "dup", DiagnosticSeverity::ERROR),
            diag(8, "new warning", DiagnosticSeverity::WARNING),
        ];
        let new: Vec<u32> = introduced(&before, &after).iter().map(|d| d.range.start.line).collect();
        assert_eq!(new, [7]);
    }

    #[tokio::test]
    async fn waiting_sees_a_later_publication_and_times_out_without_one() {
        let store = std::sync::Arc::new(DiagnosticStore::default());
        let path = std::env::temp_dir().join("x.py");
        let uri = lsp_types::Url::from_file_path(&path).unwrap();
        assert!(store.wait_newer(&path, 0, None, Duration::from_millis(30)).await.is_none());
        let s = store.clone();
        let u = uri.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            s.publish(PublishDiagnosticsParams::new(u, vec![diag(0, "e", DiagnosticSeverity::ERROR)], Some(3)));
        });
        let got = store.wait_newer(&path, 0, Some(3), Duration::from_secs(5)).await.unwrap();
        assert_eq!(got.items.len(), 1);
        assert_eq!(got.version, Some(3));
    }
}
