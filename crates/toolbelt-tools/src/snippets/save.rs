//! `snippet_save`: keeps a piece of code under a name, to load again in any later session.
//!
//! Saving a name that exists replaces that snippet whole (code, description, language and
//! tags), keeping its id and creation time.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolbelt_core::{
    Access, Annotations, Category, Content, PermissionClass, Render, SideEffects, Tool, ToolContext, ToolError,
    ToolSpec,
};

use super::fields;
use super::ops::NewSnippet;
use super::store::{MAX_CODE_BYTES, MAX_NAME_CHARS, MAX_TAGS, SnippetScope, SnippetStore};
use super::view::Snippet;
use crate::blocking::run_blocking;

/// Input of `snippet_save`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SnippetSaveInput {
    /// A short, unique name to load it by ("retry-with-backoff"); saving a name that exists
    /// replaces that snippet.
    pub name: String,
    /// The code, exactly as it should come back.
    pub code: String,
    /// What the code does and when to use it (searched, and shown in lists).
    pub description: Option<String>,
    /// The code's language, one word ("rust", "python", "sql"); shown on its code block.
    pub language: Option<String>,
    /// Words to find it by ("http", "retry"); one word each.
    pub tags: Option<Vec<String>>,
}

/// Whether a save made a snippet or replaced one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SaveKind {
    /// A new snippet.
    Created,
    /// The snippet of that name, replaced (id and creation time kept).
    Replaced,
}

/// What `snippet_save` did.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SnippetSaveOutput {
    /// `created` for a new name, `replaced` when a snippet of that name was replaced.
    #[serde(rename = "type")]
    pub kind: SaveKind,
    /// The snippet's id (kept when it is replaced).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its language, lower-case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    /// Its tags, lower-case, sorted.
    pub tags: Vec<String>,
    /// Lines of code saved.
    pub lines: usize,
    /// Bytes of code saved.
    pub bytes: usize,
    /// When it was first saved (RFC 3339, UTC).
    pub created_at: String,
    /// When it was saved now (RFC 3339, UTC).
    pub updated_at: String,
    /// Where it is kept: `user` (shared by every project) or `project` (this project's own).
    pub scope: SnippetScope,
}

impl Render for SnippetSaveOutput {
    /// ``Saved snippet #3 `retry` (rust, 12 lines) in your snippets.``
    fn render(&self) -> Vec<Content> {
        let verb = match self.kind {
            SaveKind::Created => "Saved",
            SaveKind::Replaced => "Replaced",
        };
        let lines = format!("{} line{}", self.lines, if self.lines == 1 { "" } else { "s" });
        let what = match &self.language {
            Some(language) => format!("{language}, {lines}"),
            None => lines,
        };
        let mut text = format!("{verb} snippet #{} `{}` ({what}) in {}.", self.id, self.name, self.scope.label());
        if self.kind == SaveKind::Replaced {
            text.push_str(&format!(" First saved {}.", self.created_at));
        }
        vec![Content::text(text)]
    }
}

/// The `snippet_save` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct SnippetSave;

fn description() -> String {
    format!(
        "Save a piece of code under a name, to reuse in later sessions: snippets are kept on disk outside the \
         project (by default shared by all your projects) and outlive this session. Give a short unique `name`, \
         the `code`, a `description` saying what it does and when to use it, its `language` and a few `tags` \
         (one word each, at most {MAX_TAGS}) — the name, description and code are searched by snippet_list. \
         Saving a name that exists replaces that snippet whole, keeping its id; load it first (snippet_load) \
         to change part of it. Names have at most {MAX_NAME_CHARS} characters; code at most {} MiB. Save code \
         worth reusing (a helper, a command, a config block), not whole files of the repository.",
        MAX_CODE_BYTES >> 20
    )
}

impl Tool for SnippetSave {
    type Input = SnippetSaveInput;
    type Output = SnippetSaveOutput;

    fn spec(&self) -> ToolSpec {
        ToolSpec::new("snippet_save", description())
            .deferred()
            .title("Save a snippet")
            .aliases(["SnippetSave", "save_snippet"])
            .param_alias("content", "code")
            .param_alias("lang", "language")
            .category(Category::Other)
            .tags(["snippets"])
            // It changes toolbelt's own store outside the workspace, never the project's
            // files, and declares that change (`changes_state`).
            .permission(PermissionClass::Write)
            .side_effects(SideEffects::LocalState)
            .annotations(Annotations { read_only: false, destructive: true, idempotent: true, open_world: false })
            .search_hint("snippet save store remember code reuse library")
    }

    fn access(&self, _input: &SnippetSaveInput, cx: &ToolContext) -> Result<Access, ToolError> {
        Ok(Access::exclusive().changes_state(SnippetStore::of(cx).label()))
    }

    async fn call(&self, input: SnippetSaveInput, cx: ToolContext) -> Result<SnippetSaveOutput, ToolError> {
        let name = fields::name(&input.name)?;
        fields::code(&input.code)?;
        let new = NewSnippet {
            name,
            description: fields::description(input.description.as_deref())?,
            language: fields::language(input.language.as_deref())?,
            tags: fields::tags(input.tags.as_deref())?,
            code: input.code,
        };
        run_blocking(&cx, move |cx| {
            let store = SnippetStore::of(cx);
            let (lines, bytes) = (new.code.lines().count(), new.code.len());
            let (snippet, replaced) = store.save(new)?;
            let Snippet { id, name, language, tags, created_at, updated_at, .. } = snippet;
            let kind = if replaced { SaveKind::Replaced } else { SaveKind::Created };
            let scope = store.scope;
            Ok(SnippetSaveOutput { kind, id, name, language, tags, lines, bytes, created_at, updated_at, scope })
        })
        .await
    }
}
