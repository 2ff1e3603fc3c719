//! `snippet_load`: one saved snippet in full, by name or by id.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{Access, Annotations, Category, Content, Render, Tool, ToolContext, ToolError, ToolSpec};

use super::fields;
use super::ops::Wanted;
use super::store::{SnippetError, SnippetStore};
use super::view::Snippet;
use crate::blocking::run_blocking;

/// Input of `snippet_load`: `name` or `id`, one of them.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnippetLoadInput {
    /// The snippet's name, as snippet_list shows it.
    pub name: Option<String>,
    /// The snippet's id, as snippet_save and snippet_list give it.
    #[schemars(range(min = 1))]
    pub id: Option<i64>,
}

/// The snippet `snippet_load` read.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SnippetLoadOutput {
    /// The snippet, code included.
    pub snippet: Snippet,
}

impl Render for SnippetLoadOutput {
    /// Name, description, language, tags and times, then the code in a fenced block.
    fn render(&self) -> Vec<Content> {
        vec![Content::text(self.snippet.text())]
    }
}

/// The `snippet_load` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnippetLoad;

const DESCRIPTION: &str = "Load a saved snippet in full: its code (in a fenced block marked with its language), \
description, tags, and when it was saved. Give its `name` or its `id` (one of them). Find snippets with \
snippet_list first when you do not know the exact name; a name that does not exist is answered with the closest \
names saved.";

impl Tool for SnippetLoad {
    type Input = SnippetLoadInput;
    type Output = SnippetLoadOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("snippet_load", DESCRIPTION)
            .deferred()
            .title("Load a snippet")
            .aliases(["SnippetLoad", "load_snippet", "snippet_get", "get_snippet"])
            .param_alias("snippet_id", "id")
            .category(Category::Other)
            .tags(["snippets"])
            .read_only()
            .annotations(Annotations { read_only: true, destructive: false, idempotent: true, open_world: false })
            .search_hint("snippet load get read show code reuse")
    }

    fn access(&self, _input: &SnippetLoadInput, _cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::shared())
    }

    async fn call(&self, input: SnippetLoadInput, cx: ToolContext) -> Result<SnippetLoadOutput, ToolError> {
        let wanted = match (input.name.as_deref(), input.id) {
            (Some(name), None) => Wanted::Name(fields::name(name)?),
            (None, Some(id)) => Wanted::Id(id),
            (Some(_), Some(_)) => {
                return Err(SnippetError::Invalid(
                    "give snippet_load `name` or `id`, not both: either one finds the snippet".to_string(),
                )
                .into());
            }
            (None, None) => {
                return Err(SnippetError::Invalid(
                    "give snippet_load the snippet's `name` or its `id` (snippet_list shows both)".to_string(),
                )
                .into());
            }
        };
        run_blocking(&cx, move |cx| Ok(SnippetLoadOutput { snippet: SnippetStore::of(cx).load(&wanted)? })).await
    }
}
