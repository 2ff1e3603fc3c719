//! `snippet_list`: the saved snippets, searched by words and filtered by tags and language.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec};

use super::fields;
use super::fts::{self, MAX_TERMS};
use super::search::{Filter, RANK_ALL};
use super::store::SnippetStore;
use super::view::SnippetLine;
use crate::blocking::run_blocking;

/// How many snippets a list shows when the call does not say.
pub const DEFAULT_LIMIT: usize = 50;

/// The most snippets one list may show.
pub const MAX_LIMIT: usize = 500;

/// Input of `snippet_list`; every field narrows the list, none lists every snippet.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnippetListInput {
    /// Words to search for in names, descriptions and code: all must match; `pars*` matches a
    /// prefix, `"open file"` a phrase, `a OR b` either, `-word` leaves out what has it.
    pub query: Option<String>,
    /// Tags a snippet must all have.
    pub tags: Option<Vec<String>>,
    /// The language a snippet must be in ("rust").
    pub language: Option<String>,
    /// How many snippets to show at most; the best matches come first (by name without a
    /// query).
    #[schemars(range(min = 1))]
    pub limit: Option<usize>,
}

/// The snippets `snippet_list` found.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SnippetListing {
    /// The snippets shown, best match first (by name without a query).
    pub snippets: Vec<SnippetLine>,
    /// How many snippets match in all (more than shown when the limit cut the list).
    pub total: usize,
    /// How many snippets exist in all, when none matched a search or filter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saved: Option<usize>,
    /// Why the list is what it is, when it needs saying (a query with no words in it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl Render for SnippetListing {
    /// One line per snippet: `name — description [language] #tag #tag`.
    fn render(&self) -> Vec<Content> {
        let mut lines: Vec<String> = self.snippets.iter().map(SnippetLine::text).collect();
        if self.snippets.is_empty() && self.note.is_none() {
            lines.push(match self.saved {
                None | Some(0) => "No snippets saved yet. Save one with snippet_save.".to_string(),
                Some(n) => format!(
                    "No snippet matches; {n} snippet{} saved. Search with fewer words, a prefix (`pars*`), or \
                     without the tags or language.",
                    if n == 1 { " is" } else { "s are" }
                ),
            });
        } else if self.total > self.snippets.len() {
            lines.push(format!(
                "({} of {} shown: narrow the list with query, tags or language, or raise limit.)",
                self.snippets.len(),
                self.total
            ));
        }
        if let Some(note) = &self.note {
            lines.push(format!("Note: {note}."));
        }
        vec![Content::text(lines.join("\n"))]
    }
}

/// The `snippet_list` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnippetList;

fn description() -> String {
    format!(
        "List saved snippets, one line each: name — description [language] #tags. With no arguments, every \
         snippet by name. `query` searches names, descriptions and code and lists the best matches first, names \
         weighing most (past {RANK_ALL} matches, those matching in a name or description first, then the newest): \
         every word must match; `pars*` matches words starting so, \"open file\" a phrase, `a OR \
         b` either word, `-word` leaves out snippets that have it; other punctuation is searched as text (at \
         most {MAX_TERMS} terms). `tags` keeps snippets with all those tags, `language` those in that language. \
         Shows {DEFAULT_LIMIT} at most unless `limit` says (up to {MAX_LIMIT}), and how many matched in all. \
         Load one in full with snippet_load."
    )
}

impl Tool for SnippetList {
    type Input = SnippetListInput;
    type Output = SnippetListing;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("snippet_list", description())
            .deferred()
            .title("List snippets")
            .aliases(["SnippetList", "list_snippets", "snippet_search", "search_snippets"])
            .param_alias("tag", "tags")
            .param_alias("lang", "language")
            .category(Category::Other)
            .tags(["snippets"])
            .read_only()
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("snippet list search find code library full-text tags language")
    }

    fn access(&self, _input: &SnippetListInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: SnippetListInput, cx: ToolContext) -> Result<SnippetListing, ToolError> {
        let limit = input.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT);
        let tags = fields::tags(input.tags.as_deref())?;
        let language = fields::language(input.language.as_deref())?;
        let asked = input.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
        let query = match asked {
            Some(text) => match fts::parse(text)? {
                Some(query) => Some(query),
                None => {
                    return Ok(SnippetListing {
                        snippets: Vec::new(),
                        total: 0,
                        saved: None,
                        note: Some(format!(
                            "the query `{}` has no word (letters or digits) to search for, so nothing matched; \
                             search for words, prefixes (`pars*`) or phrases (\"open file\")",
                            text.chars().take(80).collect::<String>()
                        )),
                    });
                }
            },
            None => None,
        };
        let narrowed = query.is_some() || !tags.is_empty() || language.is_some();
        let filter = Filter { query, tags, language, limit, rank_all: RANK_ALL };
        run_blocking(&cx, move |cx| {
            let store = SnippetStore::of(cx);
            let (snippets, total) = store.list(&filter)?;
            let saved = if snippets.is_empty() && narrowed { Some(store.count()?) } else { None };
            Ok(SnippetListing { snippets, total, saved, note: None })
        })
        .await
    }
}
