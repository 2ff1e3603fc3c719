//! `code_query` (`CodeQuery`): finds functions, classes, variables and files by name, from an
//! index of the workspace's source (tree-sitter tag queries for Rust, Python, JavaScript,
//! TypeScript/TSX, Go, Java, C and C++) kept in the user's cache directory and brought up to
//! date on each query: files compared by size and time, then content hash; `.gitignore`d,
//! hidden and denied paths left out. Results are `path:line:col kind name — first line`,
//! ranked exact > prefix > substring > close, with the definition each is inside.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use super::index::Index;
use super::index::search::{MatchKind, Tier, Wanted, search};
use crate::blocking::run_blocking;
use crate::fs::walk::target;

/// What kind of thing to find.
#[derive(Debug, Clone, Copy, Default, Deserialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum QueryType {
    /// Functions and methods.
    Function,
    /// Classes, structs, interfaces, traits, types and modules.
    Class,
    /// Variables, constants and fields.
    Variable,
    /// Files, by path.
    File,
    /// All of these.
    #[default]
    All,
}

/// Input of `code_query`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CodeQueryInput {
    /// The name, or part of it, to find (`parse_config`, `Config`, `handler`); case does not
    /// matter, and a close misspelling still finds it.
    #[schemars(length(min = 1, max = 200))]
    pub query: String,
    /// What to find: `function`, `class`, `variable`, `file` or `all` (the default).
    #[serde(rename = "type", default)]
    pub kind: QueryType,
    /// Only below this file or directory (absolute, or relative to the working directory).
    pub path: Option<String>,
    /// The most results (default 30).
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
}

/// One result.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CodeMatch {
    /// The file, relative to the working directory when below it.
    pub path: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// `function`, `class`, `variable` or `file`.
    pub kind: MatchKind,
    /// The name.
    pub name: String,
    /// The definition's first line.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub text: String,
    /// The definition it is inside (`class Config`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// How it matched: `exact`, `prefix`, `substring` or `fuzzy`.
    pub matched: Tier,
}

/// What `code_query` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CodeQueryOutput {
    /// The matches, best first.
    pub matches: Vec<CodeMatch>,
    /// Files in the index.
    pub files: u64,
    /// Symbols in the index.
    pub symbols: u64,
    /// Files that did not parse cleanly (their symbols are kept where the parser recovered).
    pub parse_errors: u64,
    /// Files re-read for this query (new or changed since the last).
    pub updated: usize,
}

impl Render for CodeQueryOutput {
    fn render(&self) -> Vec<Content> {
        let mut text = String::new();
        if self.matches.is_empty() {
            text.push_str("No matches.");
        }
        for m in &self.matches {
            text.push_str(&format!("{}:{}:{} {} {}", m.path, m.line, m.column, m.kind, m.name));
            if !m.text.is_empty() {
                text.push_str(&format!(" — {}", m.text));
            }
            if let Some(scope) = &m.scope {
                text.push_str(&format!(" (in {scope})"));
            }
            text.push('\n');
        }
        let mut summary = format!("\n[{} symbols in {} files indexed", self.symbols, self.files);
        if self.updated > 0 {
            summary.push_str(&format!("; {} files re-read now", self.updated));
        }
        if self.parse_errors > 0 {
            summary.push_str(&format!("; {} files did not parse cleanly", self.parse_errors));
        }
        summary.push(']');
        text.push_str(summary.trim_start_matches('\n').trim_start());
        if !self.matches.is_empty() {
            text = text.replace("\n[", "\n\n[");
        }
        vec![Content::text(text)]
    }
}

/// The `code_query` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct CodeQuery;

const DESCRIPTION: &str = "Find where a function, class, variable or file is defined, by name: \
    `path:line:col kind name — its first line`, ranked exact, then prefix, then containing, then close \
    misspellings, with the definition each is inside. Rust, Python, JavaScript, TypeScript/TSX, Go, Java, C and \
    C++; files by path for any language. Faster and more precise than Grep for \"where is X defined\"; use Grep \
    for text and usages. .gitignore'd and hidden files are left out.";

impl Tool for CodeQuery {
    type Input = CodeQueryInput;
    type Output = CodeQueryOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("code_query", DESCRIPTION)
            .title("Find definitions")
            .aliases(["CodeQuery"])
            .category(Category::Code)
            .tags(["symbols", "search"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::None)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("symbol definition function class variable go to find where defined index")
    }

    fn access(&self, input: &CodeQueryInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared().reads(target(cx, input.path.as_deref())).reads(cx.cwd()))
    }

    async fn call(&self, input: CodeQueryInput, cx: ToolContext) -> Result<CodeQueryOutput, ToolError> {
        let out = run_blocking(&cx, move |cx| query(&input, cx)).await?;
        if cx.is_cancelled() {
            return Err(ToolError::Cancelled);
        }
        Ok(out)
    }
}

fn query(input: &CodeQueryInput, cx: &ToolContext) -> Result<CodeQueryOutput, ToolError> {
    let index = Index::open(cx)?;
    let under = match input.path.as_deref().map(str::trim).filter(|p| !p.is_empty()) {
        None => String::new(),
        Some(raw) => {
            let abs = target(cx, Some(raw));
            let abs = abs.canonicalize().unwrap_or(abs);
            match abs.strip_prefix(&index.root) {
                Ok(rel) => rel.to_string_lossy().into_owned(),
                Err(_) => {
                    return Err(ToolError::failed(format!(
                        "`{raw}` is not inside the indexed workspace root {}; give a path below it",
                        index.root.display()
                    )));
                }
            }
        }
    };
    let wanted = match input.kind {
        QueryType::Function => Wanted::Function,
        QueryType::Class => Wanted::Class,
        QueryType::Variable => Wanted::Variable,
        QueryType::File => Wanted::File,
        QueryType::All => Wanted::All,
    };
    let limit = input.limit.unwrap_or(30).clamp(1, 200);
    let sql_error = |e: rusqlite::Error| ToolError::failed(format!("the code index could not be searched: {e}"));
    let hits = search(index.store.conn(), &input.query, wanted, &under, limit * 2).map_err(sql_error)?;
    let hidden = cx.hidden();
    let cwd = cx.cwd();
    let mut readable: std::collections::HashMap<String, bool> = std::collections::HashMap::new();
    let matches: Vec<CodeMatch> = hits
        .into_iter()
        .filter(|h| !hidden.as_ref().is_some_and(|hp| hp.is_hidden(&index.root.join(&h.path))))
        .filter(|h| *readable.entry(h.path.clone()).or_insert_with(|| index.readable(&h.path)))
        .take(limit)
        .map(|h| {
            let abs = index.root.join(&h.path);
            let path = abs.strip_prefix(&cwd).map_or_else(|_| abs.display().to_string(), |r| r.display().to_string());
            CodeMatch {
                path,
                line: h.line,
                column: h.col,
                kind: h.kind,
                name: h.name,
                text: h.text,
                scope: h.scope,
                matched: h.tier,
            }
        })
        .collect();
    let (files, symbols, parse_errors) = index.store.counts().map_err(|e| ToolError::failed(e.to_string()))?;
    Ok(CodeQueryOutput { matches, files, symbols, parse_errors, updated: index.refreshed.updated })
}
