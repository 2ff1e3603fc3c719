//! `LSP`: asks the file's language server where a symbol is defined, who uses it, what it
//! is, and what calls what. Claude Code's tool and vocabulary: `{operation, filePath, line,
//! character, query?}`, positions 1-based as editors show them; results `path:line:col`
//! with the source line.
//!
//! The server is started on first use, one per (workspace root, server), under the same
//! sandbox as Bash ([`crate::language_servers`]). Before each request the file is sent
//! as it is on disk, and open files another process changed since are sent again.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use crate::fs::roots::absolute;
use crate::language_servers::LanguageServers;
use crate::language_servers::after_change::{shown, stamp};
use crate::language_servers::position::to_lsp;

mod ops;

/// Most items in one result.
const MAX_ITEMS: usize = 200;

/// What to ask the language server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum LspOperation {
    /// Where the symbol at the position is defined.
    GoToDefinition,
    /// Every use of the symbol at the position (its definition included).
    FindReferences,
    /// The type and documentation of the symbol at the position.
    Hover,
    /// The symbols the file defines, nested.
    DocumentSymbol,
    /// Symbols across the workspace whose name matches `query`.
    WorkspaceSymbol,
    /// What implements the interface or abstract method at the position.
    GoToImplementation,
    /// The function or method at the position, as a call hierarchy item.
    PrepareCallHierarchy,
    /// What calls the function at the position, and where.
    IncomingCalls,
    /// What the function at the position calls, and where.
    OutgoingCalls,
}

impl LspOperation {
    fn name(self) -> String {
        serde_json::to_value(self).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default()
    }

    fn needs_position(self) -> bool {
        !matches!(self, LspOperation::DocumentSymbol | LspOperation::WorkspaceSymbol)
    }
}

/// Input of `LSP`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LspInput {
    /// The operation.
    pub operation: LspOperation,
    /// The file (absolute, or relative to the working directory); its language picks the
    /// server.
    #[serde(rename = "filePath")]
    pub file_path: String,
    /// 1-based line of the symbol (needed by every operation but documentSymbol and
    /// workspaceSymbol).
    #[schemars(range(min = 1))]
    pub line: Option<u32>,
    /// 1-based character within the line, as editors show it.
    #[schemars(range(min = 1))]
    pub character: Option<u32>,
    /// What to look for (workspaceSymbol).
    pub query: Option<String>,
}

/// One location or symbol.
#[derive(Debug, Clone, Serialize, JsonSchema, PartialEq, Eq)]
pub struct LspItem {
    /// The file, relative to the working directory when below it.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// The symbol's name (symbols and call hierarchy items).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The symbol's kind (`function`, `class`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// More about it: a signature, or the symbol it is inside.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The source line there (absent for files this session may not read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Nesting: children of a symbol, call sites under a call.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub depth: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// What `LSP` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LspOutput {
    /// The operation.
    pub operation: LspOperation,
    /// The file asked about.
    #[serde(rename = "filePath")]
    pub file_path: String,
    /// The server that answered.
    pub server: String,
    /// Locations or symbols (with call sites and nested symbols), at most 200.
    pub items: Vec<LspItem>,
    /// How many items there were in all, before the cap.
    pub total: usize,
    /// The hover text (hover).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hover: Option<String>,
}

impl Render for LspOutput {
    fn render(&self) -> Vec<Content> {
        let op = self.operation.name();
        if let Some(hover) = &self.hover {
            return vec![Content::text(hover.clone())];
        }
        if self.items.is_empty() {
            let nothing = match self.operation {
                LspOperation::Hover => "No hover information at this position.".to_owned(),
                LspOperation::DocumentSymbol => format!("No symbols in {}.", self.file_path),
                LspOperation::WorkspaceSymbol => "No symbols match.".to_owned(),
                _ => format!("No results for {op} at this position ({} found none).", self.server),
            };
            return vec![Content::text(nothing)];
        }
        let mut text = String::new();
        let files = self.items.iter().map(|i| &i.path).collect::<std::collections::BTreeSet<_>>().len();
        let noun = match self.operation {
            LspOperation::GoToDefinition => "definition",
            LspOperation::GoToImplementation => "implementation",
            LspOperation::FindReferences => "reference",
            LspOperation::IncomingCalls => "caller",
            LspOperation::OutgoingCalls => "callee",
            _ => "symbol",
        };
        let count = match self.operation {
            LspOperation::DocumentSymbol => self.items.len(),
            _ => self.items.iter().filter(|i| i.depth == 0).count(),
        };
        text.push_str(&format!(
            "Found {count} {noun}{} in {files} file{}:\n",
            if count == 1 { "" } else { "s" },
            if files == 1 { "" } else { "s" }
        ));
        for item in &self.items {
            text.push_str(&"  ".repeat(item.depth as usize));
            text.push_str(&format!("{}:{}:{}", item.path, item.line, item.column));
            if let Some(kind) = &item.kind {
                text.push_str(&format!(" {kind}"));
            }
            if let Some(name) = &item.name {
                text.push_str(&format!(" {name}"));
            }
            if let Some(detail) = &item.detail {
                text.push_str(&format!(" ({})", detail.lines().next().unwrap_or("")));
            }
            match (&item.text, &item.name) {
                (Some(line), None) => text.push_str(&format!(": {line}")),
                (Some(line), Some(_)) if item.depth == 0 && self.operation != LspOperation::DocumentSymbol => {
                    text.push_str(&format!(" — {line}"))
                }
                _ => {}
            }
            text.push('\n');
        }
        if self.total > self.items.len() {
            text.push_str(&format!("… and {} more lines not shown.\n", self.total - self.items.len()));
        }
        vec![Content::text(text.trim_end().to_owned())]
    }
}

/// The `LSP` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lsp;

const DESCRIPTION: &str = "Ask the file's language server (code intelligence, as an editor has it): \
    goToDefinition, findReferences, hover (type and docs), documentSymbol (the file's outline), workspaceSymbol \
    (needs `query`), goToImplementation, prepareCallHierarchy, incomingCalls, outgoingCalls. `line` and `character` \
    are 1-based, as editors and Read show them; put them on the symbol's name. Results are `path:line:col` with the \
    source line. The server (rust-analyzer, basedpyright or pyright, typescript-language-server, gopls, clangd, or \
    one configured) starts on first use; its first answer can take a few seconds while it loads the project.";

impl Tool for Lsp {
    type Input = LspInput;
    type Output = LspOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("LSP", DESCRIPTION)
            .title("Language server")
            .aliases(["lsp"])
            .param_alias("file_path", "filePath")
            .param_alias("path", "filePath")
            .category(Category::Code)
            .tags(["symbols", "lsp"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::None)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("go to definition references hover type symbols call hierarchy implementation language server")
    }

    fn access(&self, input: &LspInput, cx: &ToolContext) -> Result<Access, ToolError> {
        let access = Access::shared().reads(absolute(cx, &input.file_path)).reads(cx.cwd());
        // The server is a program reading the project: it runs under the sandbox, or, where
        // the sandbox cannot be applied, as the sandbox settings say for commands.
        crate::process::confine::declare(cx, access, false).map(|(access, _)| access)
    }

    async fn call(&self, input: LspInput, cx: ToolContext) -> Result<LspOutput, ToolError> {
        let servers = cx.service::<LanguageServers>().ok_or_else(|| {
            ToolError::failed("language servers are not set up in this runtime (no LanguageServers service)")
        })?;
        let abs = absolute(&cx, &input.file_path);
        let mut sources = ops::Sources::new(&cx);
        let text = match sources.text(&abs) {
            Some(text) => text.to_owned(),
            None if !abs.exists() => {
                return Err(ToolError::failed(format!("{} does not exist", abs.display())));
            }
            None => return Err(ToolError::failed(format!("{} cannot be read by this session", abs.display()))),
        };
        let position = if input.operation.needs_position() {
            let (Some(line), Some(character)) = (input.line, input.character) else {
                return Err(ToolError::failed(format!(
                    "{} needs `line` and `character` (1-based) of the symbol",
                    input.operation.name()
                )));
            };
            to_lsp(&text, line, character).map_err(ToolError::failed)?
        } else {
            lsp_types::Position::new(0, 0)
        };
        let real = std::fs::canonicalize(&abs).unwrap_or_else(|_| abs.clone());
        let uri = lsp_types::Url::from_file_path(&real)
            .map_err(|()| ToolError::failed(format!("{} is not an absolute path", real.display())))?;
        let cancel = cx.cancellation().clone();
        let work = async {
            let server = servers.server_for(&cx, &real).await?;
            // Files another process changed since they were sent, read as the file tools
            // read (confined, regular, not hidden); one this session may no longer read (a
            // link now pointing at a denied file) is closed rather than sent.
            for stale in server.stale().await {
                let text = if cx.is_hidden(&stale) { None } else { sources.text(&stale).map(str::to_owned) };
                match text {
                    Some(t) => {
                        server.sync(&stale, &t, stamp(&stale)).await;
                    }
                    None => server.close(&stale).await,
                }
            }
            server.sync(&real, &text, stamp(&real)).await;
            let timeout = servers.settings().request_timeout;
            let found =
                ops::run(&server, input.operation, &uri, position, input.query.as_deref(), timeout, &mut sources)
                    .await?;
            Ok::<_, ToolError>((server.spec.name.clone(), found))
        };
        let (server, mut found) = tokio::select! {
            result = work => result?,
            () = cancel.cancelled() => return Err(ToolError::Cancelled),
        };
        ops::tidy(input.operation, &mut found.items);
        let total = found.items.len() + found.unread;
        found.items.truncate(MAX_ITEMS);
        Ok(LspOutput {
            operation: input.operation,
            file_path: shown(&cx, &abs),
            server,
            items: found.items,
            total,
            hover: found.hover,
        })
    }
}
