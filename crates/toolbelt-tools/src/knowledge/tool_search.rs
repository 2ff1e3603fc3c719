//! `ToolSearch`: finds deferred tools and loads them into the session.
//!
//! A deferred tool is listed to the model by name only (this tool's description names them
//! for each session). `select:A,B` loads exact names; keywords rank the deferred tools with
//! BM25 ([`super::support::rank`]); `+word` requires a word in the name. The matches' full
//! definitions come back, and the session shows them from then on (an MCP client is told
//! the list changed). Calling a deferred tool never needed this: its call is validated like
//! any other's.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolbelt_core::{
    Access, Annotations, Category, Content, DescribeContext, LoadedTools, PermissionClass, Registry, Render,
    SideEffects, Tool, ToolCatalog, ToolContext, ToolError, ToolSpec, deferred_note,
};

use super::support::rank::{Document, Index, Query};

/// Input of `ToolSearch`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchInput {
    /// `select:Name1,Name2` to load tools by exact name; otherwise keywords describing what
    /// the tool does (`create pull request`); `+word` requires the word in the tool's name
    /// (`+slack send`).
    #[schemars(length(min = 1))]
    pub query: String,
    /// How many tools to return for a keyword query (default 5).
    #[schemars(range(min = 1, max = 50))]
    pub max_results: Option<usize>,
}

/// One tool's full definition, as the model calls it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolDefinition {
    /// The tool's name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The JSON Schema of its input.
    pub parameters: Value,
}

/// What `ToolSearch` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ToolSearchOutput {
    /// The matching tools' definitions, best first; each is callable from now on.
    pub tools: Vec<ToolDefinition>,
    /// Names in a `select:` that no tool has, each with the closest names.
    pub not_found: Vec<String>,
    /// How many tools are still deferred in this session.
    pub deferred_left: usize,
}

impl Render for ToolSearchOutput {
    fn render(&self) -> Vec<Content> {
        let mut text = String::new();
        if self.tools.is_empty() {
            text.push_str("No deferred tool matched.");
        } else {
            text.push_str(&format!(
                "{} tool{} loaded; call {} now with the parameters below.\n<functions>\n",
                self.tools.len(),
                if self.tools.len() == 1 { "" } else { "s" },
                if self.tools.len() == 1 { "it" } else { "them" }
            ));
            for tool in &self.tools {
                let def = serde_json::json!({
                    "name": tool.name, "description": tool.description, "parameters": tool.parameters,
                });
                text.push_str(&format!("<function>{def}</function>\n"));
            }
            text.push_str("</functions>");
        }
        for missing in &self.not_found {
            text.push_str(&format!("\nNot found: {missing}"));
        }
        if self.tools.is_empty() && self.not_found.is_empty() {
            text.push_str(" Try other words, fewer words, or `select:` with a name from the deferred list in this tool's description.");
        }
        vec![Content::text(text)]
    }
}

/// The `ToolSearch` tool. Keeps its ranking index while the registry is unchanged.
#[derive(Default)]
pub struct ToolSearch {
    cache: Mutex<Option<Arc<Cached>>>,
}

impl std::fmt::Debug for ToolSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolSearch")
    }
}

/// An index of the enabled tools, for one registry generation.
struct Cached {
    generation: u64,
    index: Index,
    /// Which indexed tools were deferred when it was built.
    deferred: Vec<bool>,
}

/// The default number of results.
const DEFAULT_RESULTS: usize = 5;

const DESCRIPTION: &str = "Find deferred tools and load their definitions. Deferred tools are listed below by name \
    only: before calling one whose parameters you do not know, load it here. `select:Name1,Name2` loads exact \
    names; otherwise give keywords for what you need (`create pull request`), and `+word` to require a word in the \
    name (`+github issue`). Returns the matching tools' full definitions; they can be called at once and stay \
    loaded for the session.";

impl ToolSearch {
    fn index(&self, registry: &Registry) -> Arc<Cached> {
        let generation = registry.generation();
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(cached) = cache.as_ref().filter(|c| c.generation == generation) {
            return Arc::clone(cached);
        }
        let deferred_now = registry.deferred();
        let entries: Vec<_> = registry.entries().into_iter().filter(|e| e.is_enabled()).collect();
        let params: Vec<Vec<&str>> = entries
            .iter()
            .map(|e| {
                e.spec()
                    .input_schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .map(|p| p.keys().map(String::as_str).collect())
                    .unwrap_or_default()
            })
            .collect();
        let index = Index::build(entries.iter().zip(&params).map(|(e, params)| Document {
            name: &e.spec().name,
            hint: e.spec().search_hint.as_deref().unwrap_or(""),
            params: params.clone(),
            description: &e.spec().description,
        }));
        let deferred = entries.iter().map(|e| deferred_now.contains(&e.spec().name)).collect();
        let cached = Arc::new(Cached { generation, index, deferred });
        *cache = Some(Arc::clone(&cached));
        cached
    }
}

/// The registry, which every runtime offers.
fn catalog(service: Option<Arc<ToolCatalog>>) -> Result<Arc<Registry>, ToolError> {
    service.map(|c| Arc::clone(&c.0)).ok_or_else(|| {
        ToolError::failed(
            "no tool catalog is available here: the runtime running this call offers no ToolCatalog service",
        )
    })
}

impl Tool for ToolSearch {
    type Input = ToolSearchInput;
    type Output = ToolSearchOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("ToolSearch", DESCRIPTION)
            .title("Tool search")
            .aliases(["tool_search"])
            .category(Category::Other)
            .tags(["tools", "discovery"])
            .permission(PermissionClass::Read)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("find search load discover deferred tools definitions schema")
    }

    fn describe(&self, cx: &DescribeContext<'_>) -> Option<String> {
        let registry = cx.service::<ToolCatalog>()?;
        let loaded = cx.session().with_slot::<LoadedTools, _>(|l| l.names.clone());
        let (_, held) = registry.0.listed(&loaded);
        let names: Vec<&str> = held.iter().map(String::as_str).collect();
        let note = if names.is_empty() {
            "\n\nNo tool is deferred in this session now.".to_string()
        } else {
            deferred_note(&names)
        };
        Some(format!("{DESCRIPTION}{note}"))
    }

    fn access(&self, _: &ToolSearchInput, _: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: ToolSearchInput, cx: ToolContext) -> Result<ToolSearchOutput, ToolError> {
        let registry = catalog(cx.service::<ToolCatalog>())?;
        let query = input.query.trim();
        let mut not_found = Vec::new();
        let names: Vec<String> = if let Some(list) = query.strip_prefix("select:") {
            let mut names = Vec::new();
            for wanted in list.split(',').map(str::trim).filter(|w| !w.is_empty()) {
                match registry.lookup(wanted) {
                    Ok(entry) if entry.spec().name != "ToolSearch" => names.push(entry.spec().name.clone()),
                    Ok(_) => {}
                    Err(ToolError::UnknownTool { suggestions, .. }) if !suggestions.is_empty() => {
                        not_found.push(format!("`{wanted}` (closest: {})", suggestions.join(", ")));
                    }
                    Err(_) => not_found.push(format!("`{wanted}` (no tool by that name)")),
                }
            }
            if names.is_empty() && not_found.is_empty() {
                return Err(ToolError::InvalidInput {
                    tool: "ToolSearch".into(),
                    problems: vec![toolbelt_core::FieldError {
                        path: "/query".into(),
                        message: "`select:` names no tool: give names separated by commas (`select:Read,Grep`)".into(),
                    }],
                });
            }
            names.dedup();
            names
        } else {
            let parsed = Query::parse(query);
            if parsed.words.is_empty() && parsed.required.is_empty() {
                return Err(ToolError::InvalidInput {
                    tool: "ToolSearch".into(),
                    problems: vec![toolbelt_core::FieldError {
                        path: "/query".into(),
                        message: "the query has no words: describe the tool you need, or use `select:NAME`".into(),
                    }],
                });
            }
            let cached = self.index(&registry);
            let limit = input.max_results.unwrap_or(DEFAULT_RESULTS).clamp(1, 50);
            cached
                .index
                .search(&parsed, limit, |id| cached.deferred[id])
                .into_iter()
                .map(|(id, _)| cached.index.name(id).to_string())
                .collect()
        };
        let mut tools = Vec::new();
        for name in &names {
            if let Some(entry) = registry.entry(name) {
                tools.push(ToolDefinition {
                    name: name.clone(),
                    description: entry.spec().description.clone(),
                    parameters: entry.spec().input_schema.clone(),
                });
            }
        }
        let deferred: BTreeSet<String> = registry.deferred();
        let loaded = cx.with_slot::<LoadedTools, _>(|l| {
            l.names.extend(names.iter().filter(|n| deferred.contains(*n)).cloned());
            l.names.clone()
        });
        let deferred_left = deferred.difference(&loaded).count();
        Ok(ToolSearchOutput { tools, not_found, deferred_left })
    }
}
