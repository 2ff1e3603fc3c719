//! The LSP operations: each one's request, and its answer turned into [`LspItem`]s.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use lsp_types::{
    CallHierarchyIncomingCall, CallHierarchyItem, CallHierarchyOutgoingCall, DocumentSymbolResponse,
    GotoDefinitionResponse, Hover, HoverContents, Location, MarkedString, Position, Range, SymbolKind, Url,
    WorkspaceSymbolResponse,
};
use serde_json::json;
use toolbelt_core::{ToolContext, ToolError};

use super::{LspItem, LspOperation};
use crate::fs::roots::OpenRoots;
use crate::language_servers::after_change::shown;
use crate::language_servers::position::{from_lsp, line_text};
use crate::language_servers::{LspError, Server, read_text};

/// What an operation found.
#[derive(Debug, Default)]
pub struct Found {
    /// Locations and symbols.
    pub items: Vec<LspItem>,
    /// Hover text.
    pub hover: Option<String>,
    /// Symbols past [`MAX_READ`] that were counted but not read.
    pub unread: usize,
}

/// Most workspace symbols whose files are read (each read to show its line): a query
/// matching thousands of names does not read thousands of files for a list cut to a few
/// hundred.
const MAX_READ: usize = 1000;

/// Runs `operation` at `position` in `uri` on `server`.
pub async fn run(
    server: &Server,
    operation: LspOperation,
    uri: &Url,
    position: Position,
    query: Option<&str>,
    timeout: Duration,
    sources: &mut Sources<'_>,
) -> Result<Found, ToolError> {
    let at = json!({"textDocument": {"uri": uri}, "position": position});
    let mut found = Found::default();
    match operation {
        LspOperation::GoToDefinition | LspOperation::GoToImplementation => {
            let method = if operation == LspOperation::GoToDefinition {
                "textDocument/definition"
            } else {
                "textDocument/implementation"
            };
            let mut locations = definitions(server, method, at, timeout).await?;
            // Some servers (typescript-language-server) answer with the import that brought
            // the name in: follow it once to the definition itself.
            if let [(target, range)] = locations.as_slice()
                && target == uri
                && let Some(path) = target.to_file_path().ok()
                && sources.text(&path).and_then(|t| line_text(t, range.start.line, 400)).is_some_and(|l| is_import(&l))
            {
                let again = json!({"textDocument": {"uri": target}, "position": range.start});
                let followed = definitions(server, method, again, timeout).await?;
                if !followed.is_empty() && followed != locations {
                    locations = followed;
                }
            }
            found.items = locations.into_iter().filter_map(|(u, r)| sources.item(&u, r.start, None, None, 0)).collect();
        }
        LspOperation::FindReferences => {
            let mut params = at;
            params["context"] = json!({"includeDeclaration": true});
            let answer: Option<Vec<Location>> =
                server.call("textDocument/references", params, timeout).await.map_err(named)?;
            found.items = answer
                .unwrap_or_default()
                .into_iter()
                .filter_map(|l| sources.item(&l.uri, l.range.start, None, None, 0))
                .collect();
        }
        LspOperation::Hover => {
            let answer: Option<Hover> = server.call("textDocument/hover", at, timeout).await.map_err(named)?;
            found.hover = answer.map(|h| hover_text(h.contents)).filter(|t| !t.trim().is_empty());
        }
        LspOperation::DocumentSymbol => {
            let params = json!({"textDocument": {"uri": uri}});
            let answer: Option<DocumentSymbolResponse> =
                server.call("textDocument/documentSymbol", params, timeout).await.map_err(named)?;
            match answer {
                None => {}
                Some(DocumentSymbolResponse::Flat(symbols)) => {
                    for s in symbols {
                        let container = s.container_name.clone();
                        found.items.extend(sources.item(
                            &s.location.uri,
                            s.location.range.start,
                            Some((s.name, s.kind)),
                            container,
                            0,
                        ));
                    }
                }
                Some(DocumentSymbolResponse::Nested(symbols)) => {
                    let mut stack: Vec<(lsp_types::DocumentSymbol, u32)> =
                        symbols.into_iter().rev().map(|s| (s, 0)).collect();
                    while let Some((mut s, depth)) = stack.pop() {
                        let children = s.children.take().unwrap_or_default();
                        found.items.extend(sources.item(
                            uri,
                            s.selection_range.start,
                            Some((s.name, s.kind)),
                            s.detail,
                            depth,
                        ));
                        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
                    }
                }
            }
        }
        LspOperation::WorkspaceSymbol => {
            let query = query.map(str::trim).filter(|q| !q.is_empty()).ok_or_else(|| {
                ToolError::failed("workspaceSymbol needs `query`: the name, or part of it, to look for")
            })?;
            let answer: Option<WorkspaceSymbolResponse> =
                server.call("workspace/symbol", json!({"query": query}), timeout).await.map_err(named)?;
            match answer {
                None => {}
                Some(WorkspaceSymbolResponse::Flat(mut symbols)) => {
                    found.unread = symbols.len().saturating_sub(MAX_READ);
                    symbols.truncate(MAX_READ);
                    for s in symbols {
                        found.items.extend(sources.item(
                            &s.location.uri,
                            s.location.range.start,
                            Some((s.name, s.kind)),
                            s.container_name,
                            0,
                        ));
                    }
                }
                Some(WorkspaceSymbolResponse::Nested(mut symbols)) => {
                    found.unread = symbols.len().saturating_sub(MAX_READ);
                    symbols.truncate(MAX_READ);
                    for s in symbols {
                        let (u, start) = match s.location {
                            lsp_types::OneOf::Left(l) => (l.uri, l.range.start),
                            lsp_types::OneOf::Right(w) => (w.uri, Position::new(0, 0)),
                        };
                        found.items.extend(sources.item(&u, start, Some((s.name, s.kind)), s.container_name, 0));
                    }
                }
            }
        }
        LspOperation::PrepareCallHierarchy | LspOperation::IncomingCalls | LspOperation::OutgoingCalls => {
            let prepared: Option<Vec<CallHierarchyItem>> =
                server.call("textDocument/prepareCallHierarchy", at, timeout).await.map_err(named)?;
            let prepared = prepared.unwrap_or_default();
            for item in prepared {
                if operation == LspOperation::PrepareCallHierarchy {
                    found.items.extend(sources.call_item(&item, 0));
                    continue;
                }
                let params = json!({"item": item});
                if operation == LspOperation::IncomingCalls {
                    let calls: Option<Vec<CallHierarchyIncomingCall>> =
                        server.call("callHierarchy/incomingCalls", params, timeout).await.map_err(named)?;
                    for call in calls.unwrap_or_default() {
                        found.items.extend(sources.call_item(&call.from, 0));
                        for range in call.from_ranges {
                            found.items.extend(sources.item(&call.from.uri, range.start, None, None, 1));
                        }
                    }
                } else {
                    let calls: Option<Vec<CallHierarchyOutgoingCall>> =
                        server.call("callHierarchy/outgoingCalls", params, timeout).await.map_err(named)?;
                    for call in calls.unwrap_or_default() {
                        found.items.extend(sources.call_item(&call.to, 0));
                        // Where the call is made: in the item the model asked about.
                        for range in call.from_ranges {
                            found.items.extend(sources.item(&item.uri, range.start, None, None, 1));
                        }
                    }
                }
            }
        }
    }
    Ok(found)
}

/// The locations a definition-like request answers.
async fn definitions(
    server: &Server,
    method: &str,
    params: serde_json::Value,
    timeout: Duration,
) -> Result<Vec<(Url, Range)>, ToolError> {
    let answer: Option<GotoDefinitionResponse> = server.call(method, params, timeout).await.map_err(named)?;
    Ok(match answer {
        None => Vec::new(),
        Some(GotoDefinitionResponse::Scalar(l)) => vec![(l.uri, l.range)],
        Some(GotoDefinitionResponse::Array(ls)) => ls.into_iter().map(|l| (l.uri, l.range)).collect(),
        Some(GotoDefinitionResponse::Link(ls)) => {
            ls.into_iter().map(|l| (l.target_uri, l.target_selection_range)).collect()
        }
    })
}

/// Whether a source line imports names (JavaScript/TypeScript, Python).
fn is_import(line: &str) -> bool {
    let line = line.trim_start();
    line.starts_with("import ")
        || line.starts_with("import{")
        || (line.starts_with("from ") && line.contains(" import "))
        || line.starts_with("export {")
        || line.contains("require(")
}

/// A server error, in the words the model needs.
fn named(e: LspError) -> ToolError {
    match e {
        LspError::Server { server, method, code: -32601, .. } => {
            ToolError::failed(format!("the language server {server} does not support {method}"))
        }
        other => other.into(),
    }
}

/// Hover contents as plain text (markdown kept).
fn hover_text(contents: HoverContents) -> String {
    let marked = |m: MarkedString| match m {
        MarkedString::String(s) => s,
        MarkedString::LanguageString(ls) => format!("```{}\n{}\n```", ls.language, ls.value),
    };
    match contents {
        HoverContents::Scalar(m) => marked(m),
        HoverContents::Array(ms) => ms.into_iter().map(marked).collect::<Vec<_>>().join("\n\n"),
        HoverContents::Markup(m) => m.value,
    }
}

/// A symbol kind's name (`function`, `class`).
pub fn kind_name(kind: SymbolKind) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enum member",
        "struct",
        "event",
        "operator",
        "type parameter",
    ];
    let n = serde_json::to_value(kind).ok().and_then(|v| v.as_u64()).unwrap_or(0) as usize;
    n.checked_sub(1).and_then(|i| NAMES.get(i)).copied().unwrap_or("symbol")
}

/// The files results point into, read once each: a file this call may read (confined, as the
/// file tools open one) gives its source line; one it may not (outside the roots) gives only
/// its location; one hidden from the session is left out.
pub struct Sources<'a> {
    cx: &'a ToolContext,
    roots: Option<OpenRoots>,
    texts: HashMap<PathBuf, Option<String>>,
}

impl<'a> Sources<'a> {
    /// Reads through the session's roots.
    pub fn new(cx: &'a ToolContext) -> Self {
        Self { cx, roots: OpenRoots::open_for_reading(cx).ok(), texts: HashMap::new() }
    }

    /// The text of `path`, if this call may read it.
    pub fn text(&mut self, path: &Path) -> Option<&str> {
        if !self.texts.contains_key(path) {
            let text = self.roots.as_ref().and_then(|roots| read_text(roots, path));
            self.texts.insert(path.to_path_buf(), text);
        }
        self.texts.get(path).and_then(|t| t.as_deref())
    }

    /// An item at `position` in `uri`; None when the file is hidden from the session.
    pub fn item(
        &mut self,
        uri: &Url,
        position: Position,
        symbol: Option<(String, SymbolKind)>,
        detail: Option<String>,
        depth: u32,
    ) -> Option<LspItem> {
        let path = uri.to_file_path().ok()?;
        if self.cx.is_hidden(&path) {
            return None;
        }
        let text = self.text(&path);
        let (line, column) = from_lsp(text, position);
        let source = text.and_then(|t| line_text(t, position.line, 200)).filter(|l| !l.is_empty());
        let (name, kind) = match symbol {
            Some((name, kind)) => (Some(name), Some(kind_name(kind).to_owned())),
            None => (None, None),
        };
        Some(LspItem {
            path: shown(self.cx, &path),
            line,
            column,
            name,
            kind,
            detail: detail.filter(|d| !d.trim().is_empty()),
            text: source,
            depth,
        })
    }

    fn call_item(&mut self, item: &CallHierarchyItem, depth: u32) -> Option<LspItem> {
        let detail = item.detail.clone();
        self.item(&item.uri, item.selection_range.start, Some((item.name.clone(), item.kind)), detail, depth)
    }
}

/// Sorts location lists (definitions, references) by file and position and drops repeats;
/// symbol lists keep the server's order.
pub fn tidy(operation: LspOperation, items: &mut Vec<LspItem>) {
    if matches!(
        operation,
        LspOperation::GoToDefinition | LspOperation::GoToImplementation | LspOperation::FindReferences
    ) {
        items.sort_by(|a, b| (&a.path, a.line, a.column).cmp(&(&b.path, b.line, b.column)));
        items.dedup_by(|a, b| a.path == b.path && a.line == b.line && a.column == b.column);
    }
}
